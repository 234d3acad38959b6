//! Per-chunk render and collider data, computed as plain `Send` data (on the worker thread for
//! `regenerate_async`) so that the main thread only copies it into Godot objects.

use godot::builtin::{Color, Vector2, Vector3};
use island_core::{ChunkCollider, Heightfield};
use rayon::prelude::*;

/// Everything needed to build one chunk's `ArrayMesh` and `HeightMapShape3D`.
#[derive(Clone, Debug, Default)]
pub struct ChunkData {
    /// Chunk column (x).
    pub cx: u32,
    /// Chunk row (z).
    pub cz: u32,
    /// `Mesh.ARRAY_VERTEX`, node-local metres.
    pub positions: Vec<Vector3>,
    /// `Mesh.ARRAY_NORMAL`.
    pub normals: Vec<Vector3>,
    /// `Mesh.ARRAY_TEX_UV`: 0..1 over the whole island.
    pub uvs: Vec<Vector2>,
    /// `Mesh.ARRAY_COLOR`: splat weights (r = sand, g = grass, b = rock, a = snow), summing to 1.
    pub colors: Vec<Color>,
    /// `Mesh.ARRAY_INDEX`, clockwise (Godot's front face).
    pub indices: Vec<i32>,
    /// Collider data, when collision is enabled: `map_data` is the chunk's samples row by row
    /// (the meshes split cells along the same diagonal as `HeightMapShape3D`).
    pub collider: Option<ChunkCollider>,
}

/// Build the data of every chunk, row-major (`cz * chunks_per_side + cx`), in parallel.
///
/// `splat` has one RGBA weight per heightfield sample (`resolution²`), or is empty (white vertex
/// colours). `chunk_size` must divide `resolution - 1` (validated parameters guarantee it).
pub fn prepare_chunks(
    field: &Heightfield,
    splat: &[[u8; 4]],
    chunk_size: usize,
    flat: bool,
    collision: bool,
) -> Vec<ChunkData> {
    let n = field.resolution;
    let per_side = (n - 1) / chunk_size;
    (0..per_side * per_side)
        .into_par_iter()
        .map(|i| {
            let (cx, cz) = (i % per_side, i / per_side);
            let m = field.chunk_mesh(cx, cz, chunk_size, flat);
            let last = (n - 1) as f32;
            let colors = m
                .uvs
                .iter()
                .map(|uv| {
                    let ix = (uv[0] * last).round() as usize;
                    let iz = (uv[1] * last).round() as usize;
                    match splat.get(iz.min(n - 1) * n + ix.min(n - 1)) {
                        Some(s) => Color::from_rgba8(s[0], s[1], s[2], s[3]),
                        None => Color::WHITE,
                    }
                })
                .collect();
            ChunkData {
                cx: cx as u32,
                cz: cz as u32,
                positions: m.positions.iter().map(|p| Vector3::new(p[0], p[1], p[2])).collect(),
                normals: m.normals.iter().map(|p| Vector3::new(p[0], p[1], p[2])).collect(),
                uvs: m.uvs.iter().map(|p| Vector2::new(p[0], p[1])).collect(),
                colors,
                indices: m.indices.iter().map(|&i| i as i32).collect(),
                collider: collision.then(|| field.chunk_collider(cx, cz, chunk_size)),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_layout_colours_and_colliders() {
        let n = 33;
        let h: Vec<f32> = (0..n * n).map(|i| (i % 7) as f32).collect();
        let f = Heightfield::new(n, 64.0, h);
        let splat: Vec<[u8; 4]> = (0..n * n).map(|i| [(i % 256) as u8, 0, 0, 255 - (i % 256) as u8]).collect();
        let c = prepare_chunks(&f, &splat, 16, false, true);
        assert_eq!(c.len(), 4);
        assert_eq!((c[1].cx, c[1].cz, c[2].cx, c[2].cz), (1, 0, 0, 1));
        // Vertex (0, 0) of chunk (1, 0) is sample (16, 0).
        assert_eq!(c[1].positions[0].y, f.sample(16, 0));
        assert_eq!(c[1].colors[0], Color::from_rgba8(16, 0, 0, 239));
        let col = c[3].collider.as_ref().unwrap();
        assert_eq!((col.width, col.depth), (17, 17));
        assert_eq!(col.heights[0], f.sample(16, 16));
        let flat = prepare_chunks(&f, &[], 16, true, false);
        assert_eq!(flat[0].positions.len(), 16 * 16 * 6);
        assert!(flat[0].collider.is_none());
        assert_eq!(flat[0].colors[0], Color::WHITE);
    }
}
