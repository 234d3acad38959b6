//! Chunk mesh surfaces in Godot's own storage layout, encoded as plain bytes off the main thread.
//!
//! `ArrayMesh.add_surface_from_arrays` converts every array on the main thread (octahedral
//! normals, generated tangents, 8-bit colours, 16-bit indices, the AABB): ~0.15–0.4 ms per
//! 65×65-vertex chunk, most of the scene build. [`encode`] produces the very same bytes on a worker
//! thread, and the main thread hands them to the mesh in one `_surfaces` property set (the path
//! Godot itself uses when it loads a saved mesh), with one index buffer shared by every chunk of
//! the same grid.
//!
//! The layout is not hard-coded on trust: [`SurfaceCache`] builds the first chunk of each vertex
//! and index count through `add_surface_from_arrays`, reads Godot's surface back and checks that
//! our bytes are the same (exactly for positions, UVs, colours, indices and the AABB; normals and
//! tangents may differ by one unit of their 16-bit encoding). Only then are later chunks of that
//! shape built from our bytes; on any difference (another Godot version) every chunk keeps using
//! `add_surface_from_arrays`.

use godot::builtin::{
    Aabb, Color, PackedByteArray, VarArray, VarDictionary, Variant, Vector2, Vector3,
};
use godot::classes::mesh::{ArrayType, PrimitiveType};
use godot::classes::ArrayMesh;
use godot::meta::ToGodot;
use godot::obj::EngineEnum;
use godot::obj::Gd;
use godot::prelude::{PackedColorArray, PackedInt32Array, PackedVector2Array, PackedVector3Array};
use island_core::{ChunkMesh, Heightfield};
use std::mem::MaybeUninit;

/// The storage property of `ArrayMesh` (an Array of one Dictionary per surface).
const SURFACES: &str = "_surfaces";

/// One surface in Godot's uncompressed layout (format version 2, Godot 4.2+).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SurfaceBytes {
    /// `vertex_data`: positions (3 × f32) of every vertex, then per vertex the octahedral normal
    /// and the generated tangent (2 × u16 each).
    pub vertex: Vec<u8>,
    /// `attribute_data`: per vertex the colour (RGBA8) and the UV (2 × f32).
    pub attribute: Vec<u8>,
    /// `aabb`: position (min corner) and size.
    pub aabb: [f32; 6],
    /// Vertices.
    pub vertex_count: usize,
    /// Indices (the triangle list of the mesh, identical for every chunk of one grid).
    pub index_count: usize,
}

/// Godot's `Color` → RGBA8 conversion (`uint8_t(CLAMP(c * 255.0, 0.0, 255.0))`, in double).
#[cfg(test)]
fn color_byte(c: f32) -> u8 {
    (c as f64 * 255.0).clamp(0.0, 255.0) as u8
}

/// The colour byte Godot stores for a vertex colour made with `Color::from_rgba8(s)`.
#[inline]
pub fn splat_byte(s: u8) -> u8 {
    SPLAT_BYTES[s as usize]
}

static SPLAT_BYTES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = color_byte_const(i as u8);
        i += 1;
    }
    t
};

/// [`color_byte`] of `from_rgba8(s)` in a const context.
const fn color_byte_const(s: u8) -> u8 {
    let c = (s as f32 / 255.0) as f64 * 255.0;
    if c <= 0.0 {
        0
    } else if c >= 255.0 {
        255
    } else {
        c as u8
    }
}

/// `Vector3::octahedron_encode` of Godot.
#[cfg(test)]
fn octahedron_encode(v: [f32; 3]) -> [f32; 2] {
    let s = v[0].abs() + v[1].abs() + v[2].abs();
    let n = [v[0] / s, v[1] / s, v[2] / s];
    let (x, y) = if n[2] >= 0.0 {
        (n[0], n[1])
    } else {
        let sx = if n[0] >= 0.0 { 1.0 } else { -1.0 };
        let sy = if n[1] >= 0.0 { 1.0 } else { -1.0 };
        ((1.0 - n[1].abs()) * sx, (1.0 - n[0].abs()) * sy)
    };
    [x * 0.5 + 0.5, y * 0.5 + 0.5]
}

/// `(uint16_t)CLAMP(v * 65535, 0, 65535)`.
#[inline]
fn unorm16(v: f32) -> u16 {
    (v * 65535.0).clamp(0.0, 65535.0) as u16
}

/// `Vector3::normalized` of Godot.
#[cfg(test)]
fn normalized(v: [f32; 3]) -> [f32; 3] {
    let l2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    if l2 == 0.0 {
        return [0.0; 3];
    }
    let l = l2.sqrt();
    [v[0] / l, v[1] / l, v[2] / l]
}

#[inline]
fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// Octahedral normal, then the tangent Godot generates for a mesh without tangents (an arbitrary
/// vector perpendicular to the normal, sign +1), as stored in the vertex buffer.
///
/// Godot normalises twice and divides by the L1 norm component by component; here the tangent is
/// the unnormalised cross product (the octahedral map divides by its L1 norm anyway) and every
/// division is one reciprocal, so a component can differ from Godot's by one 16-bit unit (an angle
/// of ~3e-5 rad). [`SurfaceCache`] allows exactly that difference when it verifies the layout.
#[inline]
pub fn normal_tangent(nrm: [f32; 3]) -> [u16; 4] {
    let o = octahedron_fast(nrm);
    let t = cross([nrm[2], -nrm[0], nrm[1]], nrm);
    let to = octahedron_fast(t);
    // Vector3::octahedron_tangent_encode(1.0)
    let ty = to[1].max(1.0 / 32767.0) * 0.5 + 0.5;
    let mut tx = unorm16(to[0]);
    let ty = unorm16(ty);
    if tx == 0 && ty == 65535 {
        // Godot sanitises (0, 1) to (1, 1): both decode to the same tangent.
        tx = 65535;
    }
    [unorm16(o[0]), unorm16(o[1]), tx, ty]
}

/// [`octahedron_encode`] with one reciprocal instead of three divisions.
#[inline]
fn octahedron_fast(v: [f32; 3]) -> [f32; 2] {
    let r = 1.0 / (v[0].abs() + v[1].abs() + v[2].abs());
    let n = [v[0] * r, v[1] * r, v[2] * r];
    // Godot: `n.x >= 0 ? 1 : -1` (so -0.0 counts as positive).
    let sx = if n[0] >= 0.0 { 1.0 } else { -1.0 };
    let sy = if n[1] >= 0.0 { 1.0 } else { -1.0 };
    let up = n[2] >= 0.0;
    let x = if up { n[0] } else { (1.0 - n[1].abs()) * sx };
    let y = if up { n[1] } else { (1.0 - n[0].abs()) * sy };
    [x * 0.5 + 0.5, y * 0.5 + 0.5]
}

#[cfg(target_arch = "x86_64")]
mod nt_avx2 {
    //! Explicit AVX2 version of [`super::normal_tangent`] (its scalar reference, just above) for
    //! [`super::normal_tangent_table`]: the compiler leaves the branchy octahedral mapping
    //! scalar, here the branches are blends. Every lane performs the scalar operations in the
    //! same order (no FMA), so the bytes are identical to the scalar reference and to the
    //! portable eight-wide [`super::normal_tangent_block_portable`].
    //!
    //! Test: `surface::tests::normal_tangent_table_equals_the_scalar_encoding` (100k random
    //! normals plus axes, zero, NaN and signed zeros, through the table and one by one).
    //! Bench: `cargo test -p procedural_island --lib chunk_parts_wall -- --ignored --nocapture`
    //! ("normal table"); in `cargo xtask bench` it is part of the row "chunk data on worker
    //! threads (`mesh_ms`)" after `regenerate_async`, and of the `regenerate()` row.
    use std::arch::x86_64::*;

    /// [`super::octahedron_fast`] of eight vectors: (x, y) in 0..1.
    #[inline(always)]
    unsafe fn octahedron(x: __m256, y: __m256, z: __m256) -> (__m256, __m256) {
        let abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fff_ffff));
        let (one, half, zero) = (
            _mm256_set1_ps(1.0),
            _mm256_set1_ps(0.5),
            _mm256_setzero_ps(),
        );
        let l1 = _mm256_add_ps(
            _mm256_add_ps(_mm256_and_ps(x, abs), _mm256_and_ps(y, abs)),
            _mm256_and_ps(z, abs),
        );
        let r = _mm256_div_ps(one, l1);
        let (a, b, c) = (
            _mm256_mul_ps(x, r),
            _mm256_mul_ps(y, r),
            _mm256_mul_ps(z, r),
        );
        // `a >= 0 ? 1 : -1` (false for NaN, as in Rust).
        let sx = _mm256_blendv_ps(
            _mm256_set1_ps(-1.0),
            one,
            _mm256_cmp_ps::<_CMP_GE_OQ>(a, zero),
        );
        let sy = _mm256_blendv_ps(
            _mm256_set1_ps(-1.0),
            one,
            _mm256_cmp_ps::<_CMP_GE_OQ>(b, zero),
        );
        let up = _mm256_cmp_ps::<_CMP_GE_OQ>(c, zero);
        let u = _mm256_blendv_ps(
            _mm256_mul_ps(_mm256_sub_ps(one, _mm256_and_ps(b, abs)), sx),
            a,
            up,
        );
        let v = _mm256_blendv_ps(
            _mm256_mul_ps(_mm256_sub_ps(one, _mm256_and_ps(a, abs)), sy),
            b,
            up,
        );
        (
            _mm256_add_ps(_mm256_mul_ps(u, half), half),
            _mm256_add_ps(_mm256_mul_ps(v, half), half),
        )
    }

    /// [`super::unorm16`] of eight values, as i32 lanes (`max` first: NaN gives 0).
    #[inline(always)]
    unsafe fn unorm16(v: __m256) -> __m256i {
        let m = _mm256_set1_ps(65535.0);
        _mm256_cvttps_epi32(_mm256_min_ps(
            _mm256_max_ps(_mm256_mul_ps(v, m), _mm256_setzero_ps()),
            m,
        ))
    }

    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn block(o: &mut [[u16; 4]], n: &[[f32; 3]]) {
        let len = o.len().min(n.len());
        let full = len / 8 * 8;
        let neg = _mm256_set1_ps(-0.0);
        let half = _mm256_set1_ps(0.5);
        let mut k = 0;
        while k < full {
            // Deinterleave x y z of normals 0..4 (low lanes) and 4..8 (high lanes).
            let p = n.as_ptr().add(k) as *const f32;
            let m0 = _mm256_loadu2_m128(p.add(12), p);
            let m1 = _mm256_loadu2_m128(p.add(16), p.add(4));
            let m2 = _mm256_loadu2_m128(p.add(20), p.add(8));
            let xy = _mm256_shuffle_ps::<0b10_01_11_10>(m1, m2); // x2 y2 x3 y3
            let yz = _mm256_shuffle_ps::<0b01_00_10_01>(m0, m1); // y0 z0 y1 z1
            let x = _mm256_shuffle_ps::<0b10_00_11_00>(m0, xy);
            let y = _mm256_shuffle_ps::<0b11_01_10_00>(yz, xy);
            let z = _mm256_shuffle_ps::<0b11_00_11_01>(yz, m2);
            let (ox, oy) = octahedron(x, y, z);
            // cross([z, -x, y], [x, y, z])
            let mx = _mm256_xor_ps(x, neg);
            let tx = _mm256_sub_ps(_mm256_mul_ps(mx, z), _mm256_mul_ps(y, y));
            let ty = _mm256_sub_ps(_mm256_mul_ps(y, x), _mm256_mul_ps(z, z));
            let tz = _mm256_sub_ps(_mm256_mul_ps(z, y), _mm256_mul_ps(mx, x));
            let (px, py) = octahedron(tx, ty, tz);
            let py = _mm256_add_ps(
                _mm256_mul_ps(_mm256_max_ps(py, _mm256_set1_ps(1.0 / 32767.0)), half),
                half,
            );
            let (nx, ny) = (unorm16(ox), unorm16(oy));
            let (a, b) = (unorm16(px), unorm16(py));
            // Godot sanitises the tangent (0, 1) to (1, 1).
            let fix = _mm256_and_si256(
                _mm256_cmpeq_epi32(a, _mm256_setzero_si256()),
                _mm256_cmpeq_epi32(b, _mm256_set1_epi32(65535)),
            );
            let a = _mm256_or_si256(a, _mm256_and_si256(fix, _mm256_set1_epi32(65535)));
            // Per 128-bit lane: [nx0..3, ny0..3] and [tx0..3, ty0..3] as u16.
            let p1 = _mm256_packus_epi32(nx, ny);
            let p2 = _mm256_packus_epi32(a, b);
            let lo = _mm256_unpacklo_epi16(p1, p2); // nx tx interleaved
            let hi = _mm256_unpackhi_epi16(p1, p2); // ny ty interleaved
            let r0 = _mm256_unpacklo_epi16(lo, hi); // vertices 0 1 | 4 5
            let r1 = _mm256_unpackhi_epi16(lo, hi); // vertices 2 3 | 6 7
            let out = o.as_mut_ptr().add(k) as *mut __m256i;
            _mm256_storeu_si256(out, _mm256_permute2x128_si256::<0x20>(r0, r1));
            _mm256_storeu_si256(out.add(1), _mm256_permute2x128_si256::<0x31>(r0, r1));
            k += 8;
        }
        for i in full..len {
            o[i] = super::normal_tangent(n[i]);
        }
    }
}

/// [`octahedron_fast`] of eight vectors (structure of arrays, vectorisable; same arithmetic).
#[inline(always)]
fn octahedron8(x: &[f32; 8], y: &[f32; 8], z: &[f32; 8]) -> ([f32; 8], [f32; 8]) {
    let (mut ox, mut oy) = ([0f32; 8], [0f32; 8]);
    for k in 0..8 {
        let r = 1.0 / (x[k].abs() + y[k].abs() + z[k].abs());
        let (a, b, c) = (x[k] * r, y[k] * r, z[k] * r);
        let sx = if a >= 0.0 { 1.0 } else { -1.0 };
        let sy = if b >= 0.0 { 1.0 } else { -1.0 };
        let up = c >= 0.0;
        let u = if up { a } else { (1.0 - b.abs()) * sx };
        let v = if up { b } else { (1.0 - a.abs()) * sy };
        ox[k] = u * 0.5 + 0.5;
        oy[k] = v * 0.5 + 0.5;
    }
    (ox, oy)
}

/// [`normal_tangent`] of eight normals (structure of arrays): rows normal x, normal y, tangent x,
/// tangent y.
#[inline(always)]
fn normal_tangent8(x: &[f32; 8], y: &[f32; 8], z: &[f32; 8]) -> [[u16; 8]; 4] {
    let (ox, oy) = octahedron8(x, y, z);
    let (mut tx, mut ty, mut tz) = ([0f32; 8], [0f32; 8], [0f32; 8]);
    for k in 0..8 {
        [tx[k], ty[k], tz[k]] = cross([z[k], -x[k], y[k]], [x[k], y[k], z[k]]);
    }
    let (px, py) = octahedron8(&tx, &ty, &tz);
    let mut q = [[0u16; 8]; 4];
    for k in 0..8 {
        q[0][k] = unorm16(ox[k]);
        q[1][k] = unorm16(oy[k]);
        let a = unorm16(px[k]);
        let b = unorm16(py[k].max(1.0 / 32767.0) * 0.5 + 0.5);
        q[2][k] = if a == 0 && b == 65535 { 65535 } else { a };
        q[3][k] = b;
    }
    q
}

/// Godot's exact encoding (reference for tests).
#[cfg(test)]
fn normal_tangent_exact(nrm: [f32; 3]) -> [u16; 4] {
    let o = octahedron_encode(nrm);
    let t = normalized(cross([nrm[2], -nrm[0], nrm[1]], normalized(nrm)));
    let mut to = octahedron_encode(t);
    to[1] = to[1].max(1.0 / 32767.0) * 0.5 + 0.5;
    let mut tx = unorm16(to[0]);
    let ty = unorm16(to[1]);
    if tx == 0 && ty == 65535 {
        tx = 65535;
    }
    [unorm16(o[0]), unorm16(o[1]), tx, ty]
}

/// [`normal_tangent`] of every normal, in parallel (the per-sample table of an island).
#[cfg(test)]
pub fn normal_tangent_table(normals: &[[f32; 3]]) -> Vec<[u16; 4]> {
    use rayon::prelude::*;
    let mut out = vec![[0u16; 4]; normals.len()];
    out.par_chunks_mut(4096)
        .zip(normals.par_chunks(4096))
        .for_each(|(o, n)| normal_tangent_block(o, n));
    out
}

/// [`normal_tangent`] of `n` into `o` (same length): explicit AVX2 when the CPU has it (the
/// compiler leaves the branchy octahedral mapping scalar), else eight at a time portably.
pub(crate) fn normal_tangent_block(o: &mut [[u16; 4]], n: &[[f32; 3]]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        unsafe { nt_avx2::block(o, n) };
        return;
    }
    normal_tangent_block_portable(o, n);
}

fn normal_tangent_block_portable(o: &mut [[u16; 4]], n: &[[f32; 3]]) {
    let mut oc = o.chunks_exact_mut(8);
    let mut nc = n.chunks_exact(8);
    for (o8, n8) in (&mut oc).zip(&mut nc) {
        let (mut x, mut y, mut z) = ([0f32; 8], [0f32; 8], [0f32; 8]);
        for k in 0..8 {
            [x[k], y[k], z[k]] = n8[k];
        }
        let q = normal_tangent8(&x, &y, &z);
        for k in 0..8 {
            o8[k] = [q[0][k], q[1][k], q[2][k], q[3][k]];
        }
    }
    for (o, n) in oc.into_remainder().iter_mut().zip(nc.remainder()) {
        *o = normal_tangent(*n);
    }
}

/// A smooth grid mesh over the heightfield: `v × v` vertices from sample `(x0, z0)` taking every
/// `step`-th sample (the layout of `Heightfield::region_mesh` / `lod::node_mesh`).
pub struct Grid<'a> {
    pub field: &'a Heightfield,
    /// Splat weights per sample (empty: white).
    pub splat: &'a [[u8; 4]],
    pub x0: usize,
    pub z0: usize,
    pub step: usize,
    /// Vertices per side.
    pub v: usize,
}

/// One grid row's heights and splat weights.
type RowSamples<'a> = (&'a [f32], Option<&'a [[u8; 4]]>);

/// Encode a smooth grid mesh straight from the heightfield. `heights`, when given, replaces the
/// vertex heights (`v²`, row-major: a LOD mesh's stitched edges). Same bytes as [`encode`] of the
/// equivalent `ChunkMesh` with the splat colours. The normal/tangent words are encoded here,
/// row by row, from the field's normals (no per-island table: at 8193² it would hold 537 MB).
pub fn encode_grid(g: &Grid, heights: Option<&[f32]>) -> SurfaceBytes {
    let f = g.field;
    let n = f.resolution;
    let v = g.v;
    let nv = v * v;
    let s = f.spacing();
    let h = f.world_size * 0.5;
    let inv = 1.0 / (n - 1) as f32;
    // Not zeroed first: every byte is written below (the rows cover both buffers exactly).
    let mut vertex: Vec<u8> = Vec::with_capacity(nv * 20);
    let mut attribute: Vec<u8> = Vec::with_capacity(nv * 12);
    let index_count = v.saturating_sub(1) * v.saturating_sub(1) * 6;
    if nv == 0 {
        return SurfaceBytes {
            vertex,
            attribute,
            aabb: [0.0; 6],
            vertex_count: 0,
            index_count,
        };
    }
    // Per column: sample x, position x and u (the same on every row).
    let xs: Vec<usize> = (0..v).map(|i| g.x0 + i * g.step).collect();
    let px: Vec<f32> = xs.iter().map(|&x| x as f32 * s - h).collect();
    let ux: Vec<f32> = xs.iter().map(|&x| x as f32 * inv).collect();
    // A unit-step row without replaced heights reads the field's rows in place; otherwise its
    // samples are gathered into these first.
    let contiguous = g.step == 1 && heights.is_none();
    let (mut ys, mut ts, mut cs) = (vec![0f32; v], vec![[0u16; 4]; v], vec![[255u8; 4]; v]);
    let mut ns = if contiguous {
        Vec::new()
    } else {
        vec![[0f32; 3]; v]
    };
    let (pos, nt) = vertex.spare_capacity_mut()[..nv * 20].split_at_mut(nv * 12);
    let (mut ylo, mut yhi) = (f32::INFINITY, f32::NEG_INFINITY);
    let rows = pos
        .chunks_exact_mut(v * 12)
        .zip(nt.chunks_exact_mut(v * 8))
        .zip(attribute.spare_capacity_mut()[..nv * 12].chunks_exact_mut(v * 12));
    for (j, ((prow, nrow), arow)) in rows.enumerate() {
        let z = g.z0 + j * g.step;
        let pz = z as f32 * s - h;
        let uz = z as f32 * inv;
        let (srow, nrm) = (&f.heights[z * n..z * n + n], &f.normals[z * n..z * n + n]);
        let crow = g.splat.get(z * n..z * n + n);
        let (yr, cr): RowSamples = if contiguous {
            let r = g.x0..g.x0 + v;
            normal_tangent_block(&mut ts, &nrm[r.clone()]);
            (&srow[r.clone()], crow.map(|c| &c[r]))
        } else {
            for (i, &x) in xs.iter().enumerate() {
                ys[i] = match heights {
                    Some(hs) => hs[j * v + i],
                    None => srow[x],
                };
                ns[i] = nrm[x];
                if let Some(c) = crow {
                    cs[i] = c[x];
                }
            }
            normal_tangent_block(&mut ts, &ns);
            (&ys, crow.map(|_| &cs[..]))
        };
        let tr = &ts;
        for &y in yr {
            ylo = ylo.min(y);
            yhi = yhi.max(y);
        }
        for ((p, &x), &y) in prow.chunks_exact_mut(12).zip(&px).zip(yr) {
            p.write_copy_of_slice(bytemuck::bytes_of(&[x, y, pz]));
        }
        nrow.write_copy_of_slice(bytemuck::cast_slice(tr));
        let uv = |a: &mut [MaybeUninit<u8>], c: [u8; 4], u: f32| {
            a[..4].write_copy_of_slice(&c);
            a[4..].write_copy_of_slice(bytemuck::bytes_of(&[u, uz]));
        };
        match cr {
            Some(cr) => {
                for ((a, c), &u) in arow.chunks_exact_mut(12).zip(cr).zip(&ux) {
                    uv(
                        a,
                        [
                            splat_byte(c[0]),
                            splat_byte(c[1]),
                            splat_byte(c[2]),
                            splat_byte(c[3]),
                        ],
                        u,
                    );
                }
            }
            None => {
                for (a, &u) in arow.chunks_exact_mut(12).zip(&ux) {
                    uv(a, [255; 4], u);
                }
            }
        }
    }
    // SAFETY: the loop above initialised all `nv · 20` vertex bytes (`v` rows of `v · 12`
    // position bytes, then `v` rows of `v · 8` normal/tangent bytes) and all `nv · 12`
    // attribute bytes (`v` rows of `v` twelve-byte colour/UV entries): every row slice was
    // written whole.
    unsafe {
        vertex.set_len(nv * 20);
        attribute.set_len(nv * 12);
    }
    // Positions grow with the sample index, so x and z span the first to the last column/row.
    let (xlo, xhi) = (px[0], px[v - 1]);
    let zlo = g.z0 as f32 * s - h;
    let zhi = (g.z0 + (v - 1) * g.step) as f32 * s - h;
    SurfaceBytes {
        vertex,
        attribute,
        aabb: [xlo, ylo, zlo, xhi - xlo, yhi - ylo, zhi - zlo],
        vertex_count: nv,
        index_count,
    }
}

/// Encode a chunk mesh (positions, normals, UVs; its indices are the shared grid's) with one
/// RGBA8 colour per vertex, already converted with [`splat_byte`].
pub fn encode(mesh: &ChunkMesh, colors: impl Fn(usize) -> [u8; 4]) -> SurfaceBytes {
    let nv = mesh.positions.len();
    let mut vertex = vec![0u8; nv * 20];
    let (pos, nt) = vertex.split_at_mut(nv * 12);
    let mut lo = [f32::INFINITY; 3];
    let mut hi = [f32::NEG_INFINITY; 3];
    for (dst, p) in pos.chunks_exact_mut(12).zip(&mesh.positions) {
        for a in 0..3 {
            dst[a * 4..a * 4 + 4].copy_from_slice(&p[a].to_le_bytes());
            lo[a] = lo[a].min(p[a]);
            hi[a] = hi[a].max(p[a]);
        }
    }
    for (dst, n) in nt.chunks_exact_mut(8).zip(&mesh.normals) {
        let q = normal_tangent(*n);
        for j in 0..4 {
            dst[j * 2..j * 2 + 2].copy_from_slice(&q[j].to_le_bytes());
        }
    }
    let mut attribute = vec![0u8; nv * 12];
    for (k, (dst, uv)) in attribute.chunks_exact_mut(12).zip(&mesh.uvs).enumerate() {
        dst[..4].copy_from_slice(&colors(k));
        dst[4..8].copy_from_slice(&uv[0].to_le_bytes());
        dst[8..].copy_from_slice(&uv[1].to_le_bytes());
    }
    if nv == 0 {
        lo = [0.0; 3];
        hi = [0.0; 3];
    }
    SurfaceBytes {
        vertex,
        attribute,
        aabb: [
            lo[0],
            lo[1],
            lo[2],
            hi[0] - lo[0],
            hi[1] - lo[1],
            hi[2] - lo[2],
        ],
        vertex_count: nv,
        index_count: mesh.indices.len(),
    }
}

/// Godot's index buffer for `indices` of a mesh with `vertex_count` vertices (16-bit up to 65536
/// vertices, else 32-bit).
pub fn index_bytes(indices: &[u32], vertex_count: usize) -> Vec<u8> {
    if vertex_count <= 1 << 16 {
        indices
            .iter()
            .flat_map(|&i| (i as u16).to_le_bytes())
            .collect()
    } else {
        indices.iter().flat_map(|&i| i.to_le_bytes()).collect()
    }
}

/// Core `[x, y, z]` triples as a `PackedVector3Array` (vertices, normals, positions).
pub fn vec3_array(p: &[[f32; 3]]) -> PackedVector3Array {
    p.iter().map(|p| Vector3::new(p[0], p[1], p[2])).collect()
}

/// The `add_surface_from_arrays` arrays of a chunk mesh (the reference path).
pub fn surface_arrays(mesh: &ChunkMesh, colors: &[Color]) -> VarArray {
    let v3 = vec3_array;
    let uvs: Vec<Vector2> = mesh.uvs.iter().map(|p| Vector2::new(p[0], p[1])).collect();
    let idx: Vec<i32> = mesh.indices.iter().map(|&i| i as i32).collect();
    let mut arrays = VarArray::new();
    arrays.resize(ArrayType::MAX.ord() as usize, &Variant::nil());
    arrays.set(
        ArrayType::VERTEX.ord() as usize,
        &v3(&mesh.positions).to_variant(),
    );
    arrays.set(
        ArrayType::NORMAL.ord() as usize,
        &v3(&mesh.normals).to_variant(),
    );
    arrays.set(
        ArrayType::TEX_UV.ord() as usize,
        &PackedVector2Array::from(&uvs[..]).to_variant(),
    );
    arrays.set(
        ArrayType::COLOR.ord() as usize,
        &PackedColorArray::from(colors).to_variant(),
    );
    arrays.set(
        ArrayType::INDEX.ord() as usize,
        &PackedInt32Array::from(&idx[..]).to_variant(),
    );
    arrays
}

/// What was learnt about one mesh shape (vertex count, index count).
#[derive(Clone)]
enum Probe {
    /// Our bytes match Godot's: the surface format and Godot's own (shared) index buffer.
    Verified {
        format: Variant,
        index: PackedByteArray,
        uv_scale: Option<Variant>,
    },
    /// Godot stores this shape differently: always use `add_surface_from_arrays`.
    Mismatch,
}

/// Verified surface layouts, per (vertex count, index count); lives on the main thread.
#[derive(Default)]
pub struct SurfaceCache {
    probes: Vec<((usize, usize), Probe)>,
    /// Surfaces set from our bytes / through `add_surface_from_arrays` (statistics, tests).
    pub fast: u64,
    pub slow: u64,
}

impl SurfaceCache {
    fn get(&self, key: (usize, usize)) -> Option<&Probe> {
        self.probes.iter().find(|(k, _)| *k == key).map(|(_, p)| p)
    }

    /// Whether the fast path is known to work for this shape.
    pub fn verified(&self, s: &SurfaceBytes) -> bool {
        matches!(
            self.get((s.vertex_count, s.index_count)),
            Some(Probe::Verified { .. })
        )
    }

    /// Replace `mesh`'s surfaces by `bytes`. `reference` gives the mesh and colours for the
    /// `add_surface_from_arrays` path, used for the first surface of each shape (then compared
    /// with our bytes) and for every surface of a shape whose bytes did not match.
    pub fn set_surface(
        &mut self,
        mesh: &mut Gd<ArrayMesh>,
        bytes: &SurfaceBytes,
        reference: impl FnOnce() -> (ChunkMesh, Vec<Color>),
    ) {
        let key = (bytes.vertex_count, bytes.index_count);
        if let Some(Probe::Verified {
            format,
            index,
            uv_scale,
        }) = self.get(key)
        {
            let mut d = VarDictionary::new();
            d.set("format", format);
            d.set("primitive", PrimitiveType::TRIANGLES.ord() as i64);
            d.set("vertex_data", &PackedByteArray::from(&bytes.vertex[..]));
            d.set("vertex_count", bytes.vertex_count as i64);
            d.set(
                "attribute_data",
                &PackedByteArray::from(&bytes.attribute[..]),
            );
            d.set("aabb", aabb(&bytes.aabb));
            if let Some(u) = uv_scale {
                d.set("uv_scale", u);
            }
            d.set("index_data", index);
            d.set("index_count", bytes.index_count as i64);
            let mut surfaces = VarArray::new();
            surfaces.push(&d.to_variant());
            mesh.set(SURFACES, &surfaces.to_variant());
            self.fast += 1;
            return;
        }
        let (m, colors) = reference();
        mesh.clear_surfaces();
        mesh.add_surface_from_arrays(PrimitiveType::TRIANGLES, &surface_arrays(&m, &colors));
        self.slow += 1;
        if self.get(key).is_none() {
            let probe = match compare(mesh, bytes, &index_bytes(&m.indices, m.positions.len())) {
                Ok(p) => p,
                Err(why) => {
                    godot::global::godot_print_rich!(
                        "[color=gray]ProceduralIsland: Godot stores mesh surfaces differently than expected ({why}); using add_surface_from_arrays[/color]"
                    );
                    Probe::Mismatch
                }
            };
            self.probes.push((key, probe));
        }
    }
}

fn aabb(a: &[f32; 6]) -> Aabb {
    Aabb::new(
        Vector3::new(a[0], a[1], a[2]),
        Vector3::new(a[3], a[4], a[5]),
    )
}

/// Compare Godot's stored surface 0 of `mesh` with our bytes.
fn compare(mesh: &Gd<ArrayMesh>, ours: &SurfaceBytes, our_index: &[u8]) -> Result<Probe, String> {
    let surfaces: VarArray = mesh
        .get(SURFACES)
        .try_to()
        .map_err(|_| "no surface array".to_string())?;
    if surfaces.len() != 1 {
        return Err(format!("{} surfaces", surfaces.len()));
    }
    let d: VarDictionary = surfaces
        .at(0)
        .try_to()
        .map_err(|_| "surface is not a Dictionary".to_string())?;
    let bytes = |k: &str| -> Result<PackedByteArray, String> {
        d.get(k)
            .ok_or_else(|| format!("no `{k}`"))?
            .try_to()
            .map_err(|_| format!("`{k}` is not bytes"))
    };
    let int = |k: &str| -> Result<i64, String> {
        d.get(k)
            .ok_or_else(|| format!("no `{k}`"))?
            .try_to()
            .map_err(|_| format!("`{k}` is not an int"))
    };
    if int("vertex_count")? != ours.vertex_count as i64
        || int("index_count")? != ours.index_count as i64
    {
        return Err("vertex or index count".into());
    }
    let vertex = bytes("vertex_data")?;
    let nv = ours.vertex_count;
    let theirs = vertex.as_slice();
    if theirs.len() != ours.vertex.len() || theirs[..nv * 12] != ours.vertex[..nv * 12] {
        return Err("vertex positions".into());
    }
    // Normals and tangents: 16-bit units, allow one unit of rounding difference.
    let close = theirs[nv * 12..]
        .chunks_exact(2)
        .zip(ours.vertex[nv * 12..].chunks_exact(2))
        .all(|(a, b)| {
            let (a, b) = (
                u16::from_le_bytes([a[0], a[1]]),
                u16::from_le_bytes([b[0], b[1]]),
            );
            a.abs_diff(b) <= 1
        });
    if !close {
        return Err("normals/tangents".into());
    }
    if bytes("attribute_data")?.as_slice() != &ours.attribute[..] {
        return Err("colours/UVs".into());
    }
    let index = bytes("index_data")?;
    if index.as_slice() != our_index {
        return Err("indices".into());
    }
    let their_aabb: Aabb = d
        .get("aabb")
        .and_then(|v| v.try_to().ok())
        .ok_or("no aabb")?;
    if their_aabb != aabb(&ours.aabb) {
        return Err(format!("aabb {their_aabb:?} vs {:?}", aabb(&ours.aabb)));
    }
    let format = d.get("format").ok_or("no format")?;
    Ok(Probe::Verified {
        format,
        index,
        uv_scale: d.get("uv_scale"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn octahedral_matches_godot_sample() {
        // Bytes Godot 4.6 stored for this normal (read back from a chunk mesh).
        let q = normal_tangent_exact([-0.023_369, 0.999_727, -0.000_64]);
        assert!(
            q[0].abs_diff(31998) <= 2 && q[1].abs_diff(64787) <= 2,
            "{q:?}"
        );
        assert!(
            q[2].abs_diff(747) <= 2 && q[3].abs_diff(48775) <= 2,
            "{q:?}"
        );
        // Straight up: (0.5, 1.0).
        assert_eq!(&normal_tangent([0.0, 1.0, 0.0])[..2], &[32767, 65535]);
    }

    #[test]
    fn normal_tangent_table_equals_the_scalar_encoding() {
        // Random unit and non-unit normals plus the edge cases (axes, negative z, zero, NaN),
        // through the table (AVX2 where available) and one by one.
        let mut r = 0x2545_f491u32;
        let mut next = || {
            r ^= r << 13;
            r ^= r >> 17;
            r ^= r << 5;
            r as f32 / u32::MAX as f32 * 2.0 - 1.0
        };
        let mut ns: Vec<[f32; 3]> = (0..100_003).map(|_| [next(), next(), next()]).collect();
        for e in [
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
            [0.0, 0.0, -1.0],
            [1.0, 0.0, 0.0],
            [-1.0, 0.0, 0.0],
            [0.0, -1.0, 0.0],
        ] {
            ns.extend([
                e,
                [0.0; 3],
                [f32::NAN, 0.0, 1.0],
                [-0.0, 1.0, -0.0],
                [0.3, 0.9, -0.3],
            ]);
        }
        let table = normal_tangent_table(&ns);
        for (i, n) in ns.iter().enumerate() {
            assert_eq!(table[i], normal_tangent(*n), "normal {i}: {n:?}");
        }
        let mut portable = vec![[0u16; 4]; ns.len()];
        normal_tangent_block_portable(&mut portable, &ns);
        assert_eq!(portable, table);
    }

    #[test]
    fn fast_normal_encoding_is_within_one_unit_of_godots() {
        let mut worst = 0;
        for i in 0..20000u32 {
            let a = (i as f32 * 0.618_034).fract() * std::f32::consts::TAU;
            let b = ((i as f32 * 0.754_878).fract() * 2.0 - 1.0) * 1.5;
            let n = [
                b.cos() * a.cos(),
                b.sin().abs() + 0.01 * (i % 3) as f32,
                b.cos() * a.sin(),
            ];
            let mut n = normalized(if i % 7 == 0 { [n[0], -n[1], n[2]] } else { n });
            // Signed zeros (flat ground has exactly 0 components).
            if i % 11 == 0 {
                n[0] = -0.0;
            }
            if i % 13 == 0 {
                n[2] = if i % 2 == 0 { -0.0 } else { 0.0 };
            }
            let (f, e) = (normal_tangent(n), normal_tangent_exact(n));
            for k in 0..4 {
                worst = worst.max(f[k].abs_diff(e[k]));
            }
        }
        assert!(worst <= 1, "worst difference {worst}");
        for n in [
            [-0.0, 1.0, -0.0],
            [0.0, 1.0, -0.0],
            [-0.0, 0.6, -0.8],
            [0.6, 0.8, 0.0],
            [0.0, -1.0, 0.0],
        ] {
            assert_eq!(normal_tangent(n), normal_tangent_exact(n), "{n:?}");
        }
        let many: Vec<[f32; 3]> = (0..1000)
            .map(|i| normalized([(i as f32 * 0.1).sin(), 1.0, (i as f32 * 0.07).cos()]))
            .collect();
        let table = normal_tangent_table(&many);
        assert!(many
            .iter()
            .zip(&table)
            .all(|(n, t)| normal_tangent(*n) == *t));
        for s in 0..=255u8 {
            assert_eq!(splat_byte(s), color_byte(s as f32 / 255.0));
        }
    }

    #[test]
    fn grid_encoding_matches_chunk_mesh_encoding() {
        let n = 33;
        let h: Vec<f32> = (0..n * n)
            .map(|i| ((i * 7919) % 97) as f32 * 0.37 - 9.0)
            .collect();
        let f = Heightfield::new(n, 100.0, h);
        let splat: Vec<[u8; 4]> = (0..n * n)
            .map(|i| [(i % 251) as u8, (i % 7) as u8, 3, 255 - (i % 251) as u8])
            .collect();
        for (x0, z0, cells, step) in [
            (0, 0, 16, 1),
            (16, 16, 16, 1),
            (0, 16, 16, 2),
            (0, 0, 32, 4),
        ] {
            let m = f.region_mesh(x0, z0, cells, step, false);
            let last = (n - 1) as f32;
            let want = encode(&m, |k| {
                let uv = m.uvs[k];
                let s =
                    splat[(uv[1] * last).round() as usize * n + (uv[0] * last).round() as usize];
                [
                    splat_byte(s[0]),
                    splat_byte(s[1]),
                    splat_byte(s[2]),
                    splat_byte(s[3]),
                ]
            });
            let g = Grid {
                field: &f,
                splat: &splat,
                x0,
                z0,
                step,
                v: cells / step + 1,
            };
            assert_eq!(encode_grid(&g, None), want);
            let hs: Vec<f32> = m.positions.iter().map(|p| p[1]).collect();
            assert_eq!(encode_grid(&g, Some(&hs)), want);
        }
    }

    #[test]
    fn colour_bytes_follow_godot_conversion() {
        for s in 0..=255u8 {
            let b = splat_byte(s);
            assert!(b == s || b + 1 == s, "{s} -> {b}");
        }
        assert_eq!(splat_byte(255), 255);
        assert_eq!(splat_byte(0), 0);
    }

    #[test]
    fn encode_layout() {
        let f = island_core::Heightfield::new(
            3,
            2.0,
            vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
        );
        let m = f.chunk_mesh(0, 0, 2, false);
        let s = encode(&m, |k| [k as u8, 0, 0, 255]);
        assert_eq!((s.vertex_count, s.index_count), (9, 24));
        assert_eq!(s.vertex.len(), 9 * 20);
        assert_eq!(s.attribute.len(), 9 * 12);
        // Vertex 4 (the centre): position, colour, UV.
        assert_eq!(
            &s.vertex[48..60],
            &[0f32.to_le_bytes(), 4f32.to_le_bytes(), 0f32.to_le_bytes()].concat()[..]
        );
        assert_eq!(&s.attribute[48..52], &[4, 0, 0, 255]);
        assert_eq!(
            &s.attribute[52..60],
            &[0.5f32.to_le_bytes(), 0.5f32.to_le_bytes()].concat()[..]
        );
        assert_eq!(s.aabb, [-1.0, 0.0, -1.0, 2.0, 8.0, 2.0]);
        assert_eq!(index_bytes(&m.indices, 9).len(), 48);
        assert_eq!(
            index_bytes(&[1, 70000], 70000),
            vec![1, 0, 0, 0, 0x70, 0x11, 1, 0]
        );
    }
}
