//! Per-chunk render and collider data, computed as plain `Send` data (on the worker thread for
//! `regenerate_async`) so that the main thread only copies it into Godot objects.

use crate::island::surface::{encode, encode_grid, splat_byte, Grid, SurfaceBytes};
use godot::builtin::Color;
use island_core::{ChunkCollider, ChunkMesh, Heightfield};
use rayon::prelude::*;

/// Everything needed to build one chunk's `ArrayMesh` and `HeightMapShape3D`.
#[derive(Clone, Debug, Default)]
pub struct ChunkData {
    /// Chunk column (x).
    pub cx: u32,
    /// Chunk row (z).
    pub cz: u32,
    /// The mesh surface in Godot's layout: positions (node-local metres), normals, UVs (0..1 over
    /// the whole island), colours (splat weights r = sand, g = grass, b = rock, a = snow).
    pub surface: SurfaceBytes,
    /// Collider data, when collision is enabled: `map_data` is the chunk's samples row by row
    /// (the meshes split cells along the same diagonal as `HeightMapShape3D`).
    pub collider: Option<ChunkCollider>,
    /// Digests of the surface (with `cx`, `cz`) and of the collider
    /// ([`ChunkData::mesh_digest_of`], [`ChunkData::collider_digest_of`]): a pooled chunk node
    /// whose mesh or collider was built from data of the same digest keeps it when an island
    /// is installed (a stamp moved changes a few chunks; the others are not rebuilt, and where
    /// only the splat colours changed the collider stays). Both 0 from
    /// [`chunk_data_undigested`].
    pub mesh_digest: u128,
    pub collider_digest: u128,
}

impl ChunkData {
    /// The digest of `cx`, `cz` and the surface (see [`ChunkData::mesh_digest`]).
    fn mesh_digest_of(cx: u32, cz: u32, surface: &SurfaceBytes) -> u128 {
        let mut head = Vec::with_capacity(56);
        for v in [
            cx as u64,
            cz as u64,
            surface.vertex_count as u64,
            surface.index_count as u64,
        ] {
            head.extend_from_slice(&v.to_le_bytes());
        }
        for v in surface.aabb {
            head.extend_from_slice(&v.to_bits().to_le_bytes());
        }
        island_core::hash::digest(&[&head, &surface.vertex, &surface.attribute])
    }

    /// The digest of a collider, or of none (see [`ChunkData::collider_digest`]).
    fn collider_digest_of(collider: Option<&ChunkCollider>) -> u128 {
        let Some(c) = collider else {
            return island_core::hash::digest(&[]);
        };
        let mut head = Vec::with_capacity(40);
        for v in [c.width as u64, c.depth as u64] {
            head.extend_from_slice(&v.to_le_bytes());
        }
        for v in [c.offset[0], c.offset[1], c.offset[2], c.cell_size] {
            head.extend_from_slice(&v.to_bits().to_le_bytes());
        }
        island_core::hash::digest(&[&head, bytemuck::cast_slice(&c.heights)])
    }
}

/// Sample index of a vertex UV (UVs are `sample / (n - 1)`; never near a half, so adding 0.5
/// and truncating rounds like `round`).
#[inline]
fn uv_sample(uv: [f32; 2], n: usize) -> usize {
    let last = (n - 1) as f32;
    let ix = ((uv[0] * last + 0.5).max(0.0) as usize).min(n - 1);
    let iz = ((uv[1] * last + 0.5).max(0.0) as usize).min(n - 1);
    iz * n + ix
}

/// Vertex colours of a mesh as `Color`s (the `add_surface_from_arrays` path): the splat weights
/// of the nearest sample, white without a splat.
pub fn mesh_colors(mesh: &ChunkMesh, splat: &[[u8; 4]], n: usize) -> Vec<Color> {
    mesh.uvs
        .iter()
        .map(|&uv| match splat.get(uv_sample(uv, n)) {
            Some(s) => Color::from_rgba8(s[0], s[1], s[2], s[3]),
            None => Color::WHITE,
        })
        .collect()
}

/// Encode a mesh with the splat weights as vertex colours (same colours as [`mesh_colors`]).
pub fn encode_mesh(mesh: &ChunkMesh, splat: &[[u8; 4]], n: usize) -> SurfaceBytes {
    encode(mesh, |k| match splat.get(uv_sample(mesh.uvs[k], n)) {
        Some(s) => [
            splat_byte(s[0]),
            splat_byte(s[1]),
            splat_byte(s[2]),
            splat_byte(s[3]),
        ],
        None => [255; 4],
    })
}

/// How the chunks of an island are built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkOptions {
    /// Cells per chunk side (divides `resolution - 1`).
    pub chunk_size: usize,
    /// Flat-shaded surfaces.
    pub flat: bool,
    /// Collider heights.
    pub collision: bool,
    /// Full-resolution mesh surfaces. False with LOD on: the LOD nodes draw the island, so the
    /// chunk nodes keep only their colliders (at 8193² the surfaces would be ~3.9 GB).
    pub meshes: bool,
}

/// Data of chunk `i` (row-major index) of the island. Without `o.meshes` the surface is empty.
pub fn chunk_data(field: &Heightfield, splat: &[[u8; 4]], o: ChunkOptions, i: usize) -> ChunkData {
    let mut d = chunk_data_undigested(field, splat, o, i);
    d.mesh_digest = ChunkData::mesh_digest_of(d.cx, d.cz, &d.surface);
    d.collider_digest = ChunkData::collider_digest_of(d.collider.as_ref());
    d
}

/// [`chunk_data`] without the digests (both 0), for callers that set the node's surface
/// whatever it held (`ChunkPool::set_surface` forgets the node's digest): hashing the
/// surface bytes costs about a sixth of the encoding (1.2–1.6 of 8.8–9.2 ms for the 256 chunks of a
/// 1025² island on one thread of the benchmark VM).
pub fn chunk_data_undigested(
    field: &Heightfield,
    splat: &[[u8; 4]],
    o: ChunkOptions,
    i: usize,
) -> ChunkData {
    let (chunk_size, flat) = (o.chunk_size, o.flat);
    let per_side = (field.resolution - 1) / chunk_size;
    let (cx, cz) = (i % per_side, i / per_side);
    let surface = if !o.meshes {
        SurfaceBytes::default()
    } else if flat {
        encode_mesh(
            &field.chunk_mesh(cx, cz, chunk_size, flat),
            splat,
            field.resolution,
        )
    } else {
        let g = Grid {
            field,
            splat,
            x0: cx * chunk_size,
            z0: cz * chunk_size,
            step: 1,
            v: chunk_size + 1,
        };
        encode_grid(&g, None)
    };
    let collider = o
        .collision
        .then(|| field.chunk_collider(cx, cz, chunk_size));
    ChunkData {
        cx: cx as u32,
        cz: cz as u32,
        surface,
        collider,
        mesh_digest: 0,
        collider_digest: 0,
    }
}

/// Build the data of every chunk in parallel.
///
/// `splat` has one RGBA weight per heightfield sample (`resolution²`), or is empty (white vertex
/// colours). `o.chunk_size` must divide `resolution - 1` (validated parameters guarantee it).
/// Row-major (`cz * chunks_per_side + cx`).
pub fn prepare_chunks(field: &Heightfield, splat: &[[u8; 4]], o: ChunkOptions) -> Vec<ChunkData> {
    let per_side = (field.resolution - 1) / o.chunk_size;
    (0..per_side * per_side)
        .into_par_iter()
        .map(|i| chunk_data(field, splat, o, i))
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
        let splat: Vec<[u8; 4]> = (0..n * n)
            .map(|i| [(i % 256) as u8, 0, 0, 255 - (i % 256) as u8])
            .collect();
        let o = |flat, collision, meshes| ChunkOptions {
            chunk_size: 16,
            flat,
            collision,
            meshes,
        };
        let c = prepare_chunks(&f, &splat, o(false, true, true));
        assert_eq!(c.len(), 4);
        assert_eq!((c[1].cx, c[1].cz, c[2].cx, c[2].cz), (1, 0, 0, 1));
        // Vertex (0, 0) of chunk (1, 0) is sample (16, 0).
        assert_eq!(c[1].surface.vertex[4..8], f.sample(16, 0).to_le_bytes());
        assert_eq!(c[1].surface.attribute[..4], [16, 0, 0, 239]);
        let m = f.chunk_mesh(1, 0, 16, false);
        assert_eq!(
            mesh_colors(&m, &splat, n)[0],
            Color::from_rgba8(16, 0, 0, 239)
        );
        let col = c[3].collider.as_ref().unwrap();
        assert_eq!((col.width, col.depth), (17, 17));
        assert_eq!(col.heights[0], f.sample(16, 16));
        let flat = prepare_chunks(&f, &[], o(true, false, true));
        assert_eq!(flat[0].surface.vertex_count, 16 * 16 * 6);
        assert!(flat[0].collider.is_none());
        assert_eq!(flat[0].surface.attribute[..4], [255; 4]);
        // LOD on: colliders only, the same heights, no surface bytes.
        let bare = prepare_chunks(&f, &splat, o(false, true, false));
        assert_eq!(bare.len(), 4);
        assert!(bare.iter().all(|d| d.surface.vertex_count == 0
            && d.surface.vertex.is_empty()
            && d.surface.attribute.is_empty()));
        assert_eq!(bare[3].collider, c[3].collider);
    }
}

#[cfg(test)]
mod timing {
    /// Best-of-10 wall time of each chunk-data part on one thread:
    /// `cargo test -p procedural_island --lib chunk_parts_wall -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn chunk_parts_wall() {
        let p = island_core::IslandParams::default();
        let island = island_core::generate(&p).unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let best = |f: &mut dyn FnMut()| {
            (0..10)
                .map(|_| {
                    let t = std::time::Instant::now();
                    f();
                    t.elapsed().as_secs_f64() * 1e3
                })
                .fold(f64::INFINITY, f64::min)
        };
        pool.install(|| {
            let o = super::ChunkOptions {
                chunk_size: 64,
                flat: false,
                collision: false,
                meshes: true,
            };
            let t_enc = best(&mut || {
                for i in 0..256 {
                    std::hint::black_box(super::chunk_data(&island.field, &island.splat, o, i));
                }
            });
            let t_bare = best(&mut || {
                for i in 0..256 {
                    let d = super::chunk_data_undigested(&island.field, &island.splat, o, i);
                    std::hint::black_box(d);
                }
            });
            let t_col = best(&mut || {
                for i in 0..256 {
                    std::hint::black_box(island.field.chunk_collider(i % 16, i / 16, 64));
                }
            });
            // What regenerate()'s stream makes on the pool besides the chunks.
            use crate::water::{water_nodes, water_summary};
            let t_depth = best(&mut || {
                std::hint::black_box(water_summary::depth_bytes(&island));
            });
            let t_kinds = best(&mut || {
                std::hint::black_box(water_summary::kind_counts(&island.water));
            });
            let t_water = best(&mut || {
                std::hint::black_box(water_nodes::chunk_water_meshes(&island, 64));
            });
            let t_plain = best(&mut || {
                let n = island.field.resolution;
                let plain = crate::island::splat_maps::unpainted_is_splat(island.base_splat(), n);
                std::hint::black_box(plain);
            });
            eprintln!(
                "1 thread wall, best of 10: surfaces {t_enc:.2} ms ({t_bare:.2} without the \
                 digests), colliders {t_col:.2} ms; water depth bytes {t_depth:.2} ms, kind \
                 counts {t_kinds:.2} ms, river/lake meshes {t_water:.2} ms, plain-splat test \
                 {t_plain:.2} ms"
            );
        });
    }
}
