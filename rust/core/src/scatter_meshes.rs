//! Built-in low-poly scatter meshes, made in code: palm, broadleaf tree, conifer, rock and grass
//! tuft.
//!
//! Flat-shaded (every triangle has its own three vertices and its face normal), vertex colours
//! in linear RGBA 0..1, metres, origin at the base (the ground point; rocks reach a little below
//! it so that they stay embedded on slopes), +Y up. Triangles are clockwise seen from the side
//! their normal points to (Godot's front face), like [`crate::heightfield::ChunkMesh`]; thin
//! parts (fronds, grass blades) have both sides. Shapes are fixed (no randomness), so a
//! `MultiMesh` can share one mesh per layer.

use crate::det_math;
use crate::hash::{hash_u32, unit};

/// Which built-in mesh.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MeshKind {
    /// Leaning palm, ~7 m tall.
    Palm,
    /// Broadleaf tree, ~7 m tall.
    Broadleaf,
    /// Conifer, ~9.5 m tall.
    Conifer,
    /// Rock, ~2 m across.
    Rock,
    /// Grass tuft, ~0.6 m tall.
    Grass,
}

impl MeshKind {
    /// Every kind, in enum order.
    pub const ALL: [MeshKind; 5] = [
        MeshKind::Palm,
        MeshKind::Broadleaf,
        MeshKind::Conifer,
        MeshKind::Rock,
        MeshKind::Grass,
    ];

    /// Stable name.
    pub fn name(self) -> &'static str {
        match self {
            MeshKind::Palm => "palm",
            MeshKind::Broadleaf => "broadleaf",
            MeshKind::Conifer => "conifer",
            MeshKind::Rock => "rock",
            MeshKind::Grass => "grass",
        }
    }

    /// Kind from its enum index.
    pub fn from_index(i: i64) -> Option<MeshKind> {
        usize::try_from(i)
            .ok()
            .and_then(|i| MeshKind::ALL.get(i).copied())
    }

    /// Build the mesh.
    pub fn mesh(self) -> ScatterMesh {
        match self {
            MeshKind::Palm => palm(),
            MeshKind::Broadleaf => broadleaf(),
            MeshKind::Conifer => conifer(),
            MeshKind::Rock => rock(),
            MeshKind::Grass => grass_tuft(),
        }
    }

    /// A representative colour (sRGB bytes), for previews.
    pub fn preview_color(self) -> [u8; 3] {
        match self {
            MeshKind::Palm => [255, 210, 40],
            MeshKind::Broadleaf => [20, 120, 30],
            MeshKind::Conifer => [10, 70, 60],
            MeshKind::Rock => [150, 140, 135],
            MeshKind::Grass => [150, 220, 90],
        }
    }
}

/// A triangle mesh with vertex colours.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScatterMesh {
    /// Vertex positions, metres.
    pub positions: Vec<[f32; 3]>,
    /// Unit normals (the face normal of each vertex's triangle).
    pub normals: Vec<[f32; 3]>,
    /// Linear RGBA 0..1.
    pub colors: Vec<[f32; 4]>,
    /// Triangle list, clockwise seen from the normal's side.
    pub indices: Vec<u32>,
}

impl ScatterMesh {
    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }

    /// Axis-aligned bounds `(min, max)`.
    pub fn bounds(&self) -> ([f32; 3], [f32; 3]) {
        let mut lo = [f32::INFINITY; 3];
        let mut hi = [f32::NEG_INFINITY; 3];
        for p in &self.positions {
            for k in 0..3 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
        }
        (lo, hi)
    }

    /// Add triangle `a, b, c` given counter-clockwise seen from its front (normal by the right
    /// hand rule); stored clockwise. Degenerate triangles are dropped.
    fn tri(&mut self, a: [f32; 3], b: [f32; 3], c: [f32; 3], col: [f32; 4]) {
        let n = cross(sub(b, a), sub(c, a));
        let l = dot(n, n).sqrt();
        if l < 1e-9 {
            return;
        }
        let n = [n[0] / l, n[1] / l, n[2] / l];
        let i = self.positions.len() as u32;
        for p in [a, c, b] {
            self.positions.push(p);
            self.normals.push(n);
            self.colors.push(col);
        }
        self.indices.extend_from_slice(&[i, i + 1, i + 2]);
    }

    /// Triangle facing away from `inside` (a point inside a convex part).
    fn tri_out(&mut self, a: [f32; 3], b: [f32; 3], c: [f32; 3], inside: [f32; 3], col: [f32; 4]) {
        let n = cross(sub(b, a), sub(c, a));
        if dot(n, sub(a, inside)) >= 0.0 {
            self.tri(a, b, c, col);
        } else {
            self.tri(a, c, b, col);
        }
    }

    /// Both sides of a thin triangle.
    fn tri2(&mut self, a: [f32; 3], b: [f32; 3], c: [f32; 3], col: [f32; 4]) {
        self.tri(a, b, c, col);
        self.tri(a, c, b, col);
    }

    /// Frustum (or cone when `r1 == 0`) from a ring of `sides` around `c0` (radius `r0`) to one
    /// around `c1` (radius `r1`), rings horizontal; optional caps.
    #[allow(clippy::too_many_arguments)]
    fn frustum(
        &mut self,
        c0: [f32; 3],
        r0: f32,
        c1: [f32; 3],
        r1: f32,
        sides: usize,
        phase: f32,
        col: [f32; 4],
        caps: bool,
    ) {
        let ring = |c: [f32; 3], r: f32, k: usize| {
            let a = (k as f32 + phase) / sides as f32 * std::f32::consts::TAU;
            [
                c[0] + r * det_math::cos(a),
                c[1],
                c[2] + r * det_math::sin(a),
            ]
        };
        for k in 0..sides {
            let (a0, a1) = (ring(c0, r0, k), ring(c0, r0, k + 1));
            let (b0, b1) = (ring(c1, r1, k), ring(c1, r1, k + 1));
            let shade = 0.9 + 0.1 * ((k % 2) as f32);
            let col = [col[0] * shade, col[1] * shade, col[2] * shade, col[3]];
            let inside = mul(add(c0, c1), 0.5);
            self.tri_out(a0, b0, a1, inside, col);
            if r1 > 0.0 {
                self.tri_out(a1, b0, b1, inside, col);
            }
            if caps {
                self.tri_out(c0, a0, a1, inside, col);
                if r1 > 0.0 {
                    self.tri_out(c1, b1, b0, inside, col);
                }
            }
        }
    }

    /// Convex blob: an icosahedron around `c` with radii `r`, each vertex pushed in or out by
    /// up to `jitter` (relative) from `salt`; colours varied per face.
    fn blob(&mut self, c: [f32; 3], r: [f32; 3], jitter: f32, salt: u32, col: [f32; 4]) {
        let (v, f) = icosahedron();
        let verts: Vec<[f32; 3]> = v
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let k = 1.0 + jitter * (2.0 * unit(hash_u32(salt ^ (i as u32 * 0x9e37))) - 1.0);
                [
                    c[0] + p[0] * r[0] * k,
                    c[1] + p[1] * r[1] * k,
                    c[2] + p[2] * r[2] * k,
                ]
            })
            .collect();
        for (fi, t) in f.iter().enumerate() {
            let (a, b, cc) = (verts[t[0]], verts[t[1]], verts[t[2]]);
            let shade = 0.85 + 0.3 * unit(hash_u32(salt.wrapping_add(fi as u32 * 0x85eb)));
            let col = [
                (col[0] * shade).min(1.0),
                (col[1] * shade).min(1.0),
                (col[2] * shade).min(1.0),
                col[3],
            ];
            self.tri_out(a, b, cc, c, col);
        }
    }
}

fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn add(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}
fn mul(a: [f32; 3], k: f32) -> [f32; 3] {
    [a[0] * k, a[1] * k, a[2] * k]
}
fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// Unit icosahedron: 12 vertices and 20 faces, counter-clockwise seen from outside.
fn icosahedron() -> (Vec<[f32; 3]>, Vec<[usize; 3]>) {
    let t = (1.0 + 5f32.sqrt()) / 2.0;
    let l = (1.0 + t * t).sqrt();
    let v: Vec<[f32; 3]> = [
        [-1.0, t, 0.0],
        [1.0, t, 0.0],
        [-1.0, -t, 0.0],
        [1.0, -t, 0.0],
        [0.0, -1.0, t],
        [0.0, 1.0, t],
        [0.0, -1.0, -t],
        [0.0, 1.0, -t],
        [t, 0.0, -1.0],
        [t, 0.0, 1.0],
        [-t, 0.0, -1.0],
        [-t, 0.0, 1.0],
    ]
    .iter()
    .map(|p| [p[0] / l, p[1] / l, p[2] / l])
    .collect();
    let mut f = vec![
        [0, 11, 5],
        [0, 5, 1],
        [0, 1, 7],
        [0, 7, 10],
        [0, 10, 11],
        [1, 5, 9],
        [5, 11, 4],
        [11, 10, 2],
        [10, 7, 6],
        [7, 1, 8],
        [3, 9, 4],
        [3, 4, 2],
        [3, 2, 6],
        [3, 6, 8],
        [3, 8, 9],
        [4, 9, 5],
        [2, 4, 11],
        [6, 2, 10],
        [8, 6, 7],
        [9, 8, 1],
    ];
    // Make every face counter-clockwise seen from outside (normal away from the centre).
    for t3 in &mut f {
        let (a, b, c) = (v[t3[0]], v[t3[1]], v[t3[2]]);
        if dot(cross(sub(b, a), sub(c, a)), add(add(a, b), c)) < 0.0 {
            t3.swap(1, 2);
        }
    }
    (v, f)
}

fn rgba(r: f32, g: f32, b: f32) -> [f32; 4] {
    [r, g, b, 1.0]
}

/// Leaning palm: a curved six-sided trunk of five segments, eight drooping double-sided fronds
/// and three coconuts. About 7 m tall.
pub fn palm() -> ScatterMesh {
    let mut m = ScatterMesh::default();
    let bark = rgba(0.42, 0.31, 0.2);
    let segs = 5;
    let height = 6.5;
    let centre = |t: f32| [0.9 * t * t, height * t, 0.0];
    for s in 0..segs {
        let (t0, t1) = (s as f32 / segs as f32, (s + 1) as f32 / segs as f32);
        let r = |t: f32| 0.22 - 0.09 * t;
        let shade = if s % 2 == 0 { 1.0 } else { 0.85 };
        m.frustum(
            centre(t0),
            r(t0),
            centre(t1),
            r(t1),
            6,
            0.0,
            [bark[0] * shade, bark[1] * shade, bark[2] * shade, 1.0],
            s == 0 || s == segs - 1,
        );
    }
    let top = centre(1.0);
    let fronds = 8;
    for k in 0..fronds {
        let a = (k as f32 + 0.3 * (k % 2) as f32) / fronds as f32 * std::f32::consts::TAU;
        let d = [det_math::cos(a), 0.0, det_math::sin(a)];
        let side = [-d[2], 0.0, d[0]];
        let len = 2.6 + 0.4 * (k % 3) as f32;
        let base = add(top, [0.0, 0.05, 0.0]);
        let mid = add(top, add(mul(d, 0.5 * len), [0.0, 0.45, 0.0]));
        let tip = add(top, add(mul(d, len), [0.0, -0.7, 0.0]));
        let w = 0.38;
        let (ml, mr) = (add(mid, mul(side, w)), add(mid, mul(side, -w)));
        let green = rgba(0.18 + 0.04 * (k % 3) as f32, 0.55, 0.16);
        let dark = rgba(0.12, 0.42, 0.12);
        m.tri2(base, mr, ml, green);
        m.tri2(ml, mr, tip, dark);
    }
    for k in 0..3 {
        let a = k as f32 / 3.0 * std::f32::consts::TAU + 0.5;
        let c = add(
            top,
            [0.22 * det_math::cos(a), -0.2, 0.22 * det_math::sin(a)],
        );
        m.blob(c, [0.13, 0.15, 0.13], 0.0, 17 + k, rgba(0.35, 0.25, 0.1));
    }
    m
}

/// Broadleaf tree: a six-sided trunk and a crown of two overlapping jittered icosahedra. About
/// 7 m tall, crown ~4.6 m wide.
pub fn broadleaf() -> ScatterMesh {
    let mut m = ScatterMesh::default();
    let bark = rgba(0.36, 0.26, 0.17);
    m.frustum(
        [0.0, 0.0, 0.0],
        0.28,
        [0.0, 3.6, 0.0],
        0.14,
        6,
        0.0,
        bark,
        true,
    );
    let leaf = rgba(0.2, 0.45, 0.14);
    m.blob([0.0, 4.6, 0.0], [2.3, 1.9, 2.3], 0.12, 3, leaf);
    m.blob(
        [0.6, 5.7, -0.3],
        [1.4, 1.3, 1.4],
        0.12,
        7,
        rgba(0.24, 0.52, 0.16),
    );
    m
}

/// Conifer: a short trunk and three stacked eight-sided cones. About 9.5 m tall, 4.4 m wide.
pub fn conifer() -> ScatterMesh {
    let mut m = ScatterMesh::default();
    m.frustum(
        [0.0, 0.0, 0.0],
        0.22,
        [0.0, 1.6, 0.0],
        0.12,
        6,
        0.0,
        rgba(0.33, 0.22, 0.14),
        true,
    );
    let tiers = [
        (1.2, 2.2, 5.0, rgba(0.08, 0.3, 0.16)),
        (3.4, 1.7, 7.4, rgba(0.1, 0.34, 0.18)),
        (5.6, 1.1, 9.4, rgba(0.12, 0.38, 0.2)),
    ];
    for (i, (y0, r, apex, col)) in tiers.into_iter().enumerate() {
        m.frustum(
            [0.0, y0, 0.0],
            r,
            [0.0, apex, 0.0],
            0.0,
            8,
            0.5 * i as f32,
            col,
            true,
        );
    }
    m
}

/// Rock: a flattened jittered icosahedron (closed), ~2 m across and 1.1 m high, reaching
/// 0.3 m below the origin.
pub fn rock() -> ScatterMesh {
    let mut m = ScatterMesh::default();
    m.blob(
        [0.0, 0.25, 0.0],
        [1.05, 0.6, 0.9],
        0.2,
        11,
        rgba(0.5, 0.48, 0.45),
    );
    m
}

/// Grass tuft: nine double-sided blades (a tapering quad and a tip each) leaning outwards,
/// ~0.6 m tall.
pub fn grass_tuft() -> ScatterMesh {
    let mut m = ScatterMesh::default();
    let blades = 9;
    for k in 0..blades {
        let a = k as f32 / blades as f32 * std::f32::consts::TAU + 0.4 * (k % 2) as f32;
        let d = [det_math::cos(a), 0.0, det_math::sin(a)];
        let side = [-d[2], 0.0, d[0]];
        let root = mul(d, 0.05 + 0.03 * (k % 2) as f32);
        let h = 0.4 + 0.2 * unit(hash_u32(k as u32 + 101));
        let lean = 0.15 + 0.08 * (k % 3) as f32;
        let mid = add(root, add(mul(d, 0.35 * lean), [0.0, 0.55 * h, 0.0]));
        let tip = add(root, add(mul(d, lean), [0.0, h, 0.0]));
        let (w0, w1) = (0.05, 0.03);
        let base = rgba(0.22, 0.5, 0.14);
        let top = rgba(0.42 + 0.05 * (k % 3) as f32, 0.7, 0.24);
        let (b0, b1) = (add(root, mul(side, -w0)), add(root, mul(side, w0)));
        let (m0, m1) = (add(mid, mul(side, -w1)), add(mid, mul(side, w1)));
        m.tri2(b0, b1, m1, base);
        m.tri2(b0, m1, m0, base);
        m.tri2(m0, m1, tip, top);
    }
    m
}
