//! The generated heightfield and everything derived per chunk: render meshes (smooth and
//! flat-shaded), HeightMapShape3D collider data, and point queries.
//!
//! Coordinates: node-local metres with the island centre at the origin, x and z in
//! `[-world_size/2, world_size/2]`, +Y up, sea level at y = 0. Sample `(ix, iz)` sits at
//! `x = ix · spacing - world_size/2`, `z = iz · spacing - world_size/2`.
//!
//! Every grid cell is split into two triangles along the diagonal from `(ix+1, iz)` to
//! `(ix, iz+1)`, the split Godot's `HeightMapShape3D` uses in both of its physics engines (Godot
//! Physics by construction; the Jolt module mirrors its height field to match). The meshes,
//! [`Heightfield::height_at`] and the colliders therefore describe one and the same surface.

use crate::normals::compute_normals;

/// A square heightfield in metres with its smooth normals.
#[derive(Clone, Debug, PartialEq)]
pub struct Heightfield {
    /// Samples per side.
    pub resolution: usize,
    /// Edge length, metres.
    pub world_size: f32,
    /// Heights, metres, row-major `z * resolution + x`.
    pub heights: Vec<f32>,
    /// Unit normals per sample (central differences on the global field).
    pub normals: Vec<[f32; 3]>,
}

/// Render mesh of one chunk.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChunkMesh {
    /// Vertex positions, node-local metres.
    pub positions: Vec<[f32; 3]>,
    /// Unit normals.
    pub normals: Vec<[f32; 3]>,
    /// UVs over the whole island, 0..1.
    pub uvs: Vec<[f32; 2]>,
    /// Triangle list, clockwise seen from above (Godot's front face).
    pub indices: Vec<u32>,
}

/// Collider data of one chunk, in the layout of Godot's `HeightMapShape3D`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChunkCollider {
    /// `map_width`: vertices along x.
    pub width: usize,
    /// `map_depth`: vertices along z.
    pub depth: usize,
    /// `map_data`: heights in metres, index `z * width + x`.
    pub heights: Vec<f32>,
    /// Node-local position of the shape's origin (the chunk centre at y = 0).
    pub offset: [f32; 3],
    /// Scale to apply on x and z (the shape has one unit between vertices): the grid spacing.
    pub cell_size: f32,
}

impl Heightfield {
    /// Wrap heights (metres, `resolution²`) and compute normals.
    pub fn new(resolution: usize, world_size: f32, heights: Vec<f32>) -> Heightfield {
        assert_eq!(heights.len(), resolution * resolution);
        let normals = compute_normals(
            &heights,
            resolution,
            Heightfield::spacing_of(resolution, world_size),
        );
        Heightfield {
            resolution,
            world_size,
            heights,
            normals,
        }
    }

    /// Distance between samples, metres.
    pub fn spacing(&self) -> f32 {
        Heightfield::spacing_of(self.resolution, self.world_size)
    }

    /// Distance between the samples of a heightfield of `resolution` samples per side over
    /// `world_size` metres (the spacing its normals are computed with), metres.
    pub fn spacing_of(resolution: usize, world_size: f32) -> f32 {
        world_size / (resolution - 1) as f32
    }

    /// Height of sample `(ix, iz)`.
    #[inline]
    pub fn sample(&self, ix: usize, iz: usize) -> f32 {
        self.heights[iz * self.resolution + ix]
    }

    /// Node-local position of sample `(ix, iz)`.
    #[inline]
    pub fn position(&self, ix: usize, iz: usize) -> [f32; 3] {
        let s = self.spacing();
        let h = self.world_size * 0.5;
        [ix as f32 * s - h, self.sample(ix, iz), iz as f32 * s - h]
    }

    /// Grid coordinates of a node-local point, clamped into the map; returns the cell and the
    /// fractional position inside it.
    fn locate(&self, x: f32, z: f32) -> (usize, usize, f32, f32) {
        let n = self.resolution;
        let s = self.spacing();
        let gx = ((x + self.world_size * 0.5) / s).clamp(0.0, (n - 1) as f32);
        let gz = ((z + self.world_size * 0.5) / s).clamp(0.0, (n - 1) as f32);
        let gx = if gx.is_finite() { gx } else { 0.0 };
        let gz = if gz.is_finite() { gz } else { 0.0 };
        let ix = (gx as usize).min(n - 2);
        let iz = (gz as usize).min(n - 2);
        (ix, iz, gx - ix as f32, gz - iz as f32)
    }

    /// Height at node-local `(x, z)` metres on the rendered/collider surface (linear on the
    /// cell's two triangles; exactly bilinear along grid lines). Clamped to the map.
    pub fn height_at(&self, x: f32, z: f32) -> f32 {
        let (ix, iz, fx, fz) = self.locate(x, z);
        let h00 = self.sample(ix, iz);
        let h10 = self.sample(ix + 1, iz);
        let h01 = self.sample(ix, iz + 1);
        let h11 = self.sample(ix + 1, iz + 1);
        if fx + fz <= 1.0 {
            // triangle (00, 10, 01)
            h00 + fx * (h10 - h00) + fz * (h01 - h00)
        } else {
            // triangle (10, 11, 01)
            h11 + (1.0 - fx) * (h01 - h11) + (1.0 - fz) * (h10 - h11)
        }
    }

    /// Bilinear height at node-local `(x, z)` metres. Clamped to the map.
    pub fn height_bilinear(&self, x: f32, z: f32) -> f32 {
        let (ix, iz, fx, fz) = self.locate(x, z);
        let a = self.sample(ix, iz) + fx * (self.sample(ix + 1, iz) - self.sample(ix, iz));
        let b =
            self.sample(ix, iz + 1) + fx * (self.sample(ix + 1, iz + 1) - self.sample(ix, iz + 1));
        a + fz * (b - a)
    }

    /// Smooth normal at node-local `(x, z)`: bilinear blend of the sample normals.
    pub fn normal_at(&self, x: f32, z: f32) -> [f32; 3] {
        let (ix, iz, fx, fz) = self.locate(x, z);
        let n = self.resolution;
        let g = |a: usize, b: usize| self.normals[b * n + a];
        let mut v = [0.0f32; 3];
        for (k, vk) in v.iter_mut().enumerate() {
            let a = g(ix, iz)[k] + fx * (g(ix + 1, iz)[k] - g(ix, iz)[k]);
            let b = g(ix, iz + 1)[k] + fx * (g(ix + 1, iz + 1)[k] - g(ix, iz + 1)[k]);
            *vk = a + fz * (b - a);
        }
        let l = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt().max(1e-12);
        [v[0] / l, v[1] / l, v[2] / l]
    }

    /// Nearest sample index of node-local `(x, z)`, clamped.
    pub fn nearest_index(&self, x: f32, z: f32) -> usize {
        let (ix, iz, fx, fz) = self.locate(x, z);
        let ix = ix + (fx >= 0.5) as usize;
        let iz = iz + (fz >= 0.5) as usize;
        iz * self.resolution + ix
    }

    /// Render mesh of the region starting at sample `(x0, z0)` with `cells` cells per side,
    /// taking every `step`-th sample (LOD). `cells` must be a multiple of `step`.
    pub fn region_mesh(
        &self,
        x0: usize,
        z0: usize,
        cells: usize,
        step: usize,
        flat: bool,
    ) -> ChunkMesh {
        let n = self.resolution;
        let v = cells / step + 1;
        let inv = 1.0 / (n - 1) as f32;
        let mut m = ChunkMesh::default();
        m.positions.reserve(v * v);
        for j in 0..v {
            for i in 0..v {
                let (x, z) = (x0 + i * step, z0 + j * step);
                m.positions.push(self.position(x, z));
                m.normals.push(self.normals[z * n + x]);
                m.uvs.push([x as f32 * inv, z as f32 * inv]);
            }
        }
        m.indices = grid_indices(v);
        if flat {
            flat_shaded(&m.positions, &m.uvs, &m.indices)
        } else {
            m
        }
    }

    /// Render mesh of chunk `(cx, cz)` with `chunk_size` cells per side at full resolution.
    pub fn chunk_mesh(&self, cx: usize, cz: usize, chunk_size: usize, flat: bool) -> ChunkMesh {
        self.region_mesh(cx * chunk_size, cz * chunk_size, chunk_size, 1, flat)
    }

    /// Collider of chunk `(cx, cz)`: `(chunk_size + 1)²` heights, centred on its origin.
    pub fn chunk_collider(&self, cx: usize, cz: usize, chunk_size: usize) -> ChunkCollider {
        ChunkCollider::of(
            &self.heights,
            self.resolution,
            self.world_size,
            cx,
            cz,
            chunk_size,
        )
    }
}

impl ChunkCollider {
    /// [`Heightfield::chunk_collider`] of bare heights (`resolution²`, row-major, over
    /// `world_size` metres): usable before the normals exist.
    pub fn of(
        heights: &[f32],
        resolution: usize,
        world_size: f32,
        cx: usize,
        cz: usize,
        chunk_size: usize,
    ) -> ChunkCollider {
        let w = chunk_size + 1;
        let (x0, z0) = (cx * chunk_size, cz * chunk_size);
        let mut rows = Vec::with_capacity(w * w);
        for j in 0..w {
            let row = (z0 + j) * resolution;
            rows.extend_from_slice(&heights[row + x0..row + x0 + w]);
        }
        let s = world_size / (resolution - 1) as f32;
        let h = world_size * 0.5;
        let centre = |i0: usize| (i0 as f32 + chunk_size as f32 * 0.5) * s - h;
        ChunkCollider {
            width: w,
            depth: w,
            heights: rows,
            offset: [centre(x0), 0.0, centre(z0)],
            cell_size: s,
        }
    }
}

/// Triangle list of a `v × v` vertex grid (row-major): every cell split along its diagonal
/// `(i+1, j)`–`(i, j+1)` (the split of Godot's `HeightMapShape3D`), clockwise seen from above.
pub(crate) fn grid_indices(v: usize) -> Vec<u32> {
    let mut idx = Vec::with_capacity((v - 1) * (v - 1) * 6);
    for j in 0..v - 1 {
        for i in 0..v - 1 {
            let a = (j * v + i) as u32;
            let b = a + 1;
            let c = a + v as u32;
            let d = c + 1;
            idx.extend_from_slice(&[a, b, c, b, d, c]);
        }
    }
    idx
}

/// Flat-shaded copy of an indexed mesh: no shared vertices, one normal per triangle.
pub(crate) fn flat_shaded(positions: &[[f32; 3]], uvs: &[[f32; 2]], indices: &[u32]) -> ChunkMesh {
    let mut m = ChunkMesh::default();
    m.positions.reserve(indices.len());
    for tri in indices.chunks(3) {
        let p = [
            positions[tri[0] as usize],
            positions[tri[1] as usize],
            positions[tri[2] as usize],
        ];
        let nrm = face_normal(p[0], p[1], p[2]);
        for &k in tri {
            m.indices.push(m.positions.len() as u32);
            m.positions.push(positions[k as usize]);
            m.normals.push(nrm);
            m.uvs.push(uvs[k as usize]);
        }
    }
    m
}

fn face_normal(a: [f32; 3], b: [f32; 3], c: [f32; 3]) -> [f32; 3] {
    let u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
    let v = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
    let mut n = [
        u[1] * v[2] - u[2] * v[1],
        u[2] * v[0] - u[0] * v[2],
        u[0] * v[1] - u[1] * v[0],
    ];
    if n[1] < 0.0 {
        n = [-n[0], -n[1], -n[2]];
    }
    let l = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt().max(1e-12);
    [n[0] / l, n[1] / l, n[2] / l]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field() -> Heightfield {
        let n = 33;
        let h: Vec<f32> = (0..n * n)
            .map(|i| ((i % n) as f32 * 0.3).sin() * 5.0 + (i / n) as f32 * 0.2)
            .collect();
        Heightfield::new(n, 64.0, h)
    }

    #[test]
    fn chunk_meshes_share_border_vertices_and_normals() {
        let f = field();
        let a = f.chunk_mesh(0, 0, 16, false);
        let b = f.chunk_mesh(1, 0, 16, false);
        assert_eq!(a.positions.len(), 17 * 17);
        assert_eq!(a.indices.len(), 16 * 16 * 6);
        for j in 0..17 {
            assert_eq!(a.positions[j * 17 + 16], b.positions[j * 17]);
            assert_eq!(a.normals[j * 17 + 16], b.normals[j * 17]);
        }
        assert_eq!(a.positions[0], [-32.0, f.sample(0, 0), -32.0]);
        assert_eq!(
            f.chunk_mesh(1, 1, 16, false).positions[16 * 17 + 16][0],
            32.0
        );
        assert_eq!(a.uvs[0], [0.0, 0.0]);
        assert_eq!(f.chunk_mesh(1, 1, 16, false).uvs[17 * 17 - 1], [1.0, 1.0]);
    }

    #[test]
    fn winding_faces_up_and_flat_variant() {
        let f = field();
        let m = f.chunk_mesh(0, 0, 16, false);
        for t in m.indices.chunks(3) {
            let (a, b, c) = (
                m.positions[t[0] as usize],
                m.positions[t[1] as usize],
                m.positions[t[2] as usize],
            );
            // Clockwise seen from +Y: cross(b - a, c - a) points down.
            let u = [b[0] - a[0], b[2] - a[2]];
            let v = [c[0] - a[0], c[2] - a[2]];
            let cross_y = u[1] * v[0] - u[0] * v[1];
            assert!(cross_y < 0.0);
        }
        let flat = f.chunk_mesh(0, 0, 16, true);
        assert_eq!(flat.positions.len(), 16 * 16 * 6);
        // Same triangles as the smooth mesh (and so as the collider's cell split).
        let same: Vec<[f32; 3]> = m.indices.iter().map(|&i| m.positions[i as usize]).collect();
        assert_eq!(flat.positions, same);
        for t in flat.indices.chunks(3) {
            assert_eq!(flat.normals[t[0] as usize], flat.normals[t[2] as usize]);
        }
    }

    #[test]
    fn collider_layout_and_heights() {
        let f = field();
        let c = f.chunk_collider(1, 0, 16);
        assert_eq!((c.width, c.depth), (17, 17));
        assert_eq!(c.heights[0], f.sample(16, 0));
        assert_eq!(c.heights[3 * 17 + 5], f.sample(21, 3));
        assert_eq!(c.offset, [16.0, 0.0, -16.0]);
        assert_eq!(c.cell_size, 2.0);
    }

    #[test]
    fn height_queries_match_samples_and_triangles() {
        let f = field();
        let p = f.position(5, 7);
        assert_eq!(f.height_at(p[0], p[2]), p[1]);
        assert_eq!(f.height_bilinear(p[0], p[2]), p[1]);
        // Midpoint of the cell diagonal (6,7)-(5,8) is the mean of its ends on the triangle surface,
        // whatever the other two corners are.
        let (q, r) = (f.position(6, 7), f.position(5, 8));
        let mid = f.height_at((q[0] + r[0]) / 2.0, (q[2] + r[2]) / 2.0);
        assert!((mid - (q[1] + r[1]) / 2.0).abs() < 1e-4);
        // Inside each triangle the height is the plane through its corners.
        let c00 = f.position(5, 7);
        let near00 = f.height_at(c00[0] + 0.25 * 2.0, c00[2] + 0.25 * 2.0);
        let plane = c00[1] + 0.25 * (q[1] - c00[1]) + 0.25 * (r[1] - c00[1]);
        assert!((near00 - plane).abs() < 1e-4);
        let c11 = f.position(6, 8);
        let near11 = f.height_at(c11[0] - 0.25 * 2.0, c11[2] - 0.25 * 2.0);
        let plane = c11[1] + 0.25 * (r[1] - c11[1]) + 0.25 * (q[1] - c11[1]);
        assert!((near11 - plane).abs() < 1e-4);
        // Outside the map clamps.
        assert_eq!(f.height_at(-1e9, -1e9), f.sample(0, 0));
        assert_eq!(f.height_at(f32::NAN, 0.0), f.height_at(-32.0, 0.0));
    }
}
