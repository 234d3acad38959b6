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
    /// Collider data, when collision is enabled (heights already in the layout given by
    /// `collider_rotated`).
    pub collider: Option<ChunkCollider>,
    /// The collider heights are rotated for a shape turned 90° about +Y (see [`rotate_collider`]).
    pub collider_rotated: bool,
}

/// Re-lay a square collider for a `HeightMapShape3D` that is rotated +90° about Y.
///
/// Godot Physics splits every heightmap cell along the diagonal from `(i+1, j)` to `(i, j+1)` (and
/// Godot's Jolt module mirrors its height field to triangulate the same way),
/// while the render mesh and `Heightfield::height_at` split along `(i, j)`–`(i+1, j+1)`. A +90°
/// rotation about Y maps shape-local `(x, z)` to `(z, -x)`, turning one diagonal into the other,
/// so the rotated shape describes exactly the mesh's triangles. Shape vertex `(i, j)` then sits
/// on chunk sample `(a, b) = (j, c - i)` with `c = width - 1`.
pub fn rotate_collider(col: &mut ChunkCollider) {
    let w = col.width;
    if w == 0 || col.depth != w || col.heights.len() != w * w {
        return;
    }
    let c = w - 1;
    let src = std::mem::take(&mut col.heights);
    col.heights = (0..w * w)
        .map(|k| {
            let (i, j) = (k % w, k / w);
            src[(c - i) * w + j]
        })
        .collect();
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
    rotate_colliders: bool,
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
                collider: collision.then(|| {
                    let mut col = field.chunk_collider(cx, cz, chunk_size);
                    if rotate_colliders {
                        rotate_collider(&mut col);
                    }
                    col
                }),
                collider_rotated: rotate_colliders,
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
        let c = prepare_chunks(&f, &splat, 16, false, true, false);
        assert_eq!(c.len(), 4);
        assert_eq!((c[1].cx, c[1].cz, c[2].cx, c[2].cz), (1, 0, 0, 1));
        // Vertex (0, 0) of chunk (1, 0) is sample (16, 0).
        assert_eq!(c[1].positions[0].y, f.sample(16, 0));
        assert_eq!(c[1].colors[0], Color::from_rgba8(16, 0, 0, 239));
        let col = c[3].collider.as_ref().unwrap();
        assert_eq!((col.width, col.depth), (17, 17));
        assert_eq!(col.heights[0], f.sample(16, 16));
        let flat = prepare_chunks(&f, &[], 16, true, false, false);
        assert_eq!(flat[0].positions.len(), 16 * 16 * 6);
        assert!(flat[0].collider.is_none());
        assert_eq!(flat[0].colors[0], Color::WHITE);
    }

    /// Place shape vertex (i, j) like Godot does for a shape rotated +90° about Y (local
    /// `(x, z)` → node `(z, -x)`), and check it lands on the chunk sample with the same height,
    /// and that the shape's cell split (i+1, j)–(i, j+1) becomes the mesh's diagonal.
    #[test]
    fn rotated_collider_lands_on_the_samples() {
        let n = 33;
        let h: Vec<f32> = (0..n * n).map(|i| ((i * 7919) % 101) as f32).collect();
        let f = Heightfield::new(n, 64.0, h);
        let plain = f.chunk_collider(1, 0, 16);
        let rot = prepare_chunks(&f, &[], 16, false, true, true)[1].collider.clone().unwrap();
        let w = plain.width;
        let half = (w - 1) as f32 / 2.0;
        for j in 0..w {
            for i in 0..w {
                let (lx, lz) = (i as f32 - half, j as f32 - half);
                let (nx, nz) = (lz, -lx);
                let (a, b) = ((nx + half) as usize, (nz + half) as usize);
                assert_eq!(rot.heights[j * w + i], plain.heights[b * w + a]);
            }
        }
        let map = |i: f32, j: f32| (j, (w - 1) as f32 - i);
        let (p, q) = (map(1.0, 0.0), map(0.0, 1.0));
        assert_eq!((q.0 - p.0, q.1 - p.1), (1.0, 1.0));
    }
}
