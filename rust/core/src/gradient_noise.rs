//! Fractal gradient noise (Perlin-style fBm).
//!
//! Gradients come from [`crate::hash`] (a random vector per lattice point, components in
//! [-1, 1]), interpolated with the quintic fade `6t⁵ - 15t⁴ + 10t³`. Rows are processed in
//! parallel; the inner loop is branch-free so LLVM vectorises it.

use crate::grid::{par_rows, Grid};
use crate::hash::{hash_u32, stage_seed};
use crate::params::FbmParams;

/// Salt of the octave seeds: octave `o` of a field seeded `s` uses `hash_u32(s ^ o · salt)`
/// (`common.wgsl` repeats it).
pub const OCTAVE_SEED_SALT: u32 = 0x68e3_1da4;

/// Gain applied to one octave of gradient noise: random gradients with components in [-1, 1]
/// peak near ±1.0, and 1.2 spreads typical output over most of [-1, 1] without clipping
/// (`common.wgsl` repeats it).
pub const GRADIENT_NOISE_GAIN: f32 = 1.2;

/// `floor(x)` as an integer, without a libm call so loops over it vectorise on plain SSE2.
/// Exact for |x| < 2^31 (WGSL's `floor` gives the same value).
#[inline(always)]
pub(crate) fn fast_floor(x: f32) -> i32 {
    // `as` saturates outside the i32 range; the wrapping subtraction keeps that saturated value
    // panic-free in debug builds (the lattice then just repeats, as on the GPU).
    let i = x as i32;
    i.wrapping_sub((x < i as f32) as i32)
}

/// Quintic fade curve.
#[inline(always)]
pub(crate) fn fade(t: f32) -> f32 {
    t * t * t * (t * (t * 6.0 - 15.0) + 10.0)
}

/// Interpolation coefficients `[a0, a1, d0, d1]` of one lattice cell on one line `y`: with
/// `n_ij = g_ij · (dx - i, dy - j)` the corner dot products, the bilinear-in-`v` blends
/// `a(dx) = n00 + v (n01 - n00) = a0 + a1 dx` and `b(dx) = n10 + v (n11 - n10)` are linear in
/// `dx`, and `d = b - a = d0 + d1 dx`. Gradients are `(x, y)` pairs; `dy1 = dy - 1`, `v = fade(dy)`.
#[inline(always)]
fn cell_coeffs(
    g00: (f32, f32),
    g10: (f32, f32),
    g01: (f32, f32),
    g11: (f32, f32),
    dy: f32,
    dy1: f32,
    v: f32,
) -> [f32; 4] {
    let (c00, c10, c01, c11) = (g00.1 * dy, g10.1 * dy, g01.1 * dy1, g11.1 * dy1);
    let a0 = c00 + v * (c01 - c00);
    let a1 = g00.0 + v * (g01.0 - g00.0);
    let (e10, e11) = (c10 - g10.0, c11 - g11.0);
    let b0 = e10 + v * (e11 - e10);
    let b1 = g10.0 + v * (g11.0 - g10.0);
    [a0, a1, b0 - a0, b1 - a1]
}

/// The noise inside a cell from its [`cell_coeffs`] at `dx` (0..1):
/// `(a(dx) + fade(dx) · d(dx)) · 1.2`, in exactly this order of operations on every path.
#[inline(always)]
fn cell_eval(c: [f32; 4], dx: f32) -> f32 {
    let u = fade(dx);
    (c[0] + c[1] * dx + u * (c[2] + c[3] * dx)) * GRADIENT_NOISE_GAIN
}

/// One octave of 2-D gradient noise at `(x, y)` (lattice units), roughly in [-1, 1]: Perlin's
/// quintic-faded interpolation of the four corner gradients' dot products, evaluated as
/// `cell_coeffs` + `cell_eval` (the same arithmetic the row kernels use).
#[inline(always)]
pub fn gradient_noise(x: f32, y: f32, seed: u32) -> f32 {
    let xi = fast_floor(x);
    let yi = fast_floor(y);
    let dx = x - xi as f32;
    let dy = y - yi as f32;
    let hy0 = hash_u32((yi as u32) ^ seed);
    let hy1 = hash_u32((yi.wrapping_add(1) as u32) ^ seed);
    let g00 = grad_of(hash_u32((xi as u32) ^ hy0));
    let g10 = grad_of(hash_u32((xi.wrapping_add(1) as u32) ^ hy0));
    let g01 = grad_of(hash_u32((xi as u32) ^ hy1));
    let g11 = grad_of(hash_u32((xi.wrapping_add(1) as u32) ^ hy1));
    cell_eval(cell_coeffs(g00, g10, g01, g11, dy, dy - 1.0, fade(dy)), dx)
}

/// Seed of octave `o` of a field seeded with `seed`.
#[inline(always)]
pub(crate) fn octave_seed(seed: u32, o: u32) -> u32 {
    hash_u32(seed ^ o.wrapping_mul(OCTAVE_SEED_SALT))
}

/// A seeded fBm of gradient noise in lattice units: octave `i` is
/// `persistence^i · gradient_noise(p · lacunarity^i, octave_seed(s, i))`, summed and divided by
/// the sum of the amplitudes. Built from an [`FbmParams`] (whose `scale` the caller applies to
/// the coordinates) and a 32-bit stage seed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fbm {
    pub(crate) octaves: u32,
    pub(crate) lacunarity: f32,
    pub(crate) persistence: f32,
    pub(crate) s: u32,
}

impl Fbm {
    /// The octaves of `f` seeded with the stage seed `s`.
    #[inline]
    pub(crate) fn new(f: &FbmParams, s: u32) -> Fbm {
        Fbm {
            octaves: f.octaves,
            lacunarity: f.lacunarity,
            persistence: f.persistence,
            s,
        }
    }

    /// Classic octaves ([`FbmParams::classic`]) seeded `s`, built where the octave count is a
    /// compile-time constant so the row kernel inlined there is specialised for it.
    #[inline(always)]
    pub(crate) const fn classic(octaves: u32, s: u32) -> Fbm {
        Fbm {
            octaves,
            lacunarity: FbmParams::DEFAULT_LACUNARITY,
            persistence: FbmParams::DEFAULT_PERSISTENCE,
            s,
        }
    }

    /// The fBm at one point (`x`, `y` in units of the first octave's wavelength), roughly in
    /// [-1, 1]: the per-point definition the row kernel [`fbm_row`] is tested against.
    #[cfg(test)]
    pub(crate) fn point(&self, x: f32, y: f32) -> f32 {
        let mut sum = 0.0;
        let mut amp = 1.0;
        let mut norm = 0.0;
        let mut f = 1.0;
        for o in 0..self.octaves {
            sum += amp * gradient_noise(x * f, y * f, octave_seed(self.s, o));
            norm += amp;
            amp *= self.persistence;
            f *= self.lacunarity;
        }
        if norm > 0.0 {
            sum / norm
        } else {
            0.0
        }
    }

    /// Add to `row`: sample `i` gets the fBm at `(i · step + x0, y)` (lattice units), through
    /// the vectorised row kernel.
    #[inline]
    pub(crate) fn add_row(&self, row: &mut [f32], y: f32, step: f32, x0: f32) {
        fbm_row(row, y, step, x0, self);
    }
}

/// Fractal gradient noise (the `fbm_noise.wgsl` pass) over `g`: sample `(x, z)` is the fBm of
/// `f` at `(x, z) · spacing / f.scale` with the stage seed of `(g.seed, tag)`.
///
/// Returns values roughly in [-1, 1], row-major `z * resolution + x`.
pub fn fbm_noise(g: &Grid, f: &FbmParams, tag: u32) -> Vec<f32> {
    FbmRows::of_noise(g, f, tag).to_field(g.resolution)
}

/// The rows of one fBm field, computed on demand: row `z` of [`FbmRows::of_noise`] equals row
/// `z` of [`fbm_noise`] with the same arguments, bit for bit. Stages that consume a noise field
/// row by row use it instead of a full-map temporary.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FbmRows {
    step: f32,
    offset: [f32; 2],
    fbm: Fbm,
}

impl FbmRows {
    /// Rows of [`fbm_noise`]`(g, f, tag)`.
    pub(crate) fn of_noise(g: &Grid, f: &FbmParams, tag: u32) -> FbmRows {
        let step = g.world_size / (g.resolution - 1) as f32 / f.scale;
        FbmRows {
            step,
            offset: [0.0, 0.0],
            fbm: Fbm::new(f, stage_seed(g.seed, tag)),
        }
    }

    /// Rows of a field sampled in lattice units: sample `(x, z)` is the fBm of `fbm` at
    /// `(x · step + offset[0], z · step + offset[1])`.
    pub(crate) fn field(step: f32, offset: [f32; 2], fbm: Fbm) -> FbmRows {
        FbmRows { step, offset, fbm }
    }

    /// The whole `resolution²` field (row-major), rows in parallel.
    pub(crate) fn to_field(self, resolution: usize) -> Vec<f32> {
        let mut out = crate::memory::zeroed(resolution * resolution);
        par_rows(&mut out, resolution, |z, row| self.row(z, row));
        out
    }

    /// Write row `z` into `out` (overwritten; its length is the row length).
    #[inline]
    pub(crate) fn row(&self, z: usize, out: &mut [f32]) {
        out.fill(0.0);
        self.fbm.add_row(
            out,
            z as f32 * self.step + self.offset[1],
            self.step,
            self.offset[0],
        );
    }
}

/// Components of the lattice gradient of hash `h`, in [-1, 1].
#[inline(always)]
fn grad_of(h: u32) -> (f32, f32) {
    (
        (h & 0xffff) as f32 * (2.0 / 65535.0) - 1.0,
        (h >> 16) as f32 * (2.0 / 65535.0) - 1.0,
    )
}

/// Shortest mean run of samples per lattice cell for which [`octave_row_runs`] is used;
/// shorter runs hash every sample ([`octave_row_points`]).
const MIN_RUN: f32 = 6.0;

/// The run of row samples starting at `a` that share a lattice cell: returns the cell `xi` of
/// sample `a` and the first index `b > a` whose position is at or beyond the next lattice line
/// (`n` if none). `xs(i)` is the (monotone) position of sample `i` in lattice units and
/// `per_cell` the mean number of samples per cell, used for the first guess of `b`.
#[inline(always)]
pub(crate) fn cell_run(
    a: usize,
    n: usize,
    xs: &impl Fn(usize) -> f32,
    per_cell: f32,
) -> (i32, usize) {
    let xi = fast_floor(xs(a));
    let next = (xi + 1) as f32;
    let guess = a as f32 + ((next - xs(a)) * per_cell).max(1.0);
    let mut b = if guess >= n as f32 {
        n
    } else {
        (guess as usize).max(a + 1)
    };
    while b > a + 1 && xs(b - 1) >= next {
        b -= 1;
    }
    while b < n && xs(b) < next {
        b += 1;
    }
    (xi, b)
}

/// `row[i] += amp · gradient_noise((i · step + x0) · f, yy, os)`, one sample at a time.
#[inline(always)]
fn octave_row_points(row: &mut [f32], yy: f32, step: f32, x0: f32, f: f32, os: u32, amp: f32) {
    for (i, v) in row.iter_mut().enumerate() {
        *v += amp * gradient_noise(((i as i32) as f32 * step + x0) * f, yy, os);
    }
}

/// Same result as [`octave_row_points`] (bit for bit), computed per lattice cell: the samples of
/// a row that fall into one cell share its four corner gradients, so those are hashed once per
/// cell and the loop over the cell's run of samples is a branch-free map on broadcast constants.
/// Needs `step > 0`, `f > 0` and coordinates well inside the exact range of `f32` integers.
#[inline(always)]
fn octave_row_runs(row: &mut [f32], yy: f32, step: f32, x0: f32, f: f32, os: u32, amp: f32) {
    let n = row.len();
    let xs = |i: usize| ((i as i32) as f32 * step + x0) * f;
    let yi = fast_floor(yy);
    let dy = yy - yi as f32;
    let dy1 = dy - 1.0;
    let hy0 = hash_u32((yi as u32) ^ os);
    let hy1 = hash_u32((yi.wrapping_add(1) as u32) ^ os);
    let v = fade(dy);
    // Mean samples per cell, for the first guess of where a run ends.
    let per_cell = 1.0 / (step * f);
    let mut a = 0usize;
    while a < n {
        let (xi, b) = cell_run(a, n, &xs, per_cell);
        let xf = xi as f32;
        let c = cell_coeffs(
            grad_of(hash_u32((xi as u32) ^ hy0)),
            grad_of(hash_u32((xi.wrapping_add(1) as u32) ^ hy0)),
            grad_of(hash_u32((xi as u32) ^ hy1)),
            grad_of(hash_u32((xi.wrapping_add(1) as u32) ^ hy1)),
            dy,
            dy1,
            v,
        );
        for (k, o) in row[a..b].iter_mut().enumerate() {
            let x = (((a + k) as i32) as f32 * step + x0) * f;
            *o += amp * cell_eval(c, x - xf);
        }
        a = b;
    }
}

/// Largest lattice cells per sample for which the AVX2 window kernel is used: then 8
/// consecutive samples touch at most 8 lattice cells, whose coefficients fit one 8-lane
/// register each.
const WINDOW_MAX_CELLS_PER_SAMPLE: f32 = 0.95;

// Hand-written AVX2 kernel (std::arch intrinsics; the compiler cannot vectorise the per-cell
// hashing into in-register windows). Scalar reference: `octave_row_points` above.
// Test: `tests::window_and_point_paths_agree_bitwise` (bit for bit against the scalar reference).
// Bench row: `fbm8` in `examples/bench_table.rs` ("fBm gradient noise, 8 octaves"), criterion
// `<resolution>/fbm8` (benches/stages.rs).
#[cfg(target_arch = "x86_64")]
mod avx2 {
    //! Explicit AVX2 version of [`super::octave_row_points`] for rows with more than ~1.05
    //! samples per lattice cell: the [`super::cell_coeffs`] of 8 consecutive lattice cells of
    //! the row are computed once into registers (a "window", 4 hashes of 8 lanes), and each
    //! block of 8 samples picks its cell's coefficients with in-register permutes instead of
    //! hashing. Every lane performs exactly the scalar operations in the same order (no FMA),
    //! so results are bit-identical to the point path.
    use super::{fast_floor, gradient_noise};
    use crate::hash::hash_u32;
    use std::arch::x86_64::*;

    #[inline(always)]
    unsafe fn hash8(x: __m256i) -> __m256i {
        let x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
        let x = _mm256_mullo_epi32(x, _mm256_set1_epi32(0x7feb_352d_u32 as i32));
        let x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 15));
        let x = _mm256_mullo_epi32(x, _mm256_set1_epi32(0x846c_a68b_u32 as i32));
        _mm256_xor_si256(x, _mm256_srli_epi32(x, 16))
    }

    /// Gradient components of 8 hashes: `(h & 0xffff) * (2/65535) - 1`, `(h >> 16) * ... - 1`.
    #[inline(always)]
    unsafe fn grad8(h: __m256i) -> (__m256, __m256) {
        let k = _mm256_set1_ps(2.0 / 65535.0);
        let one = _mm256_set1_ps(1.0);
        let lo = _mm256_cvtepi32_ps(_mm256_and_si256(h, _mm256_set1_epi32(0xffff)));
        let hi = _mm256_cvtepi32_ps(_mm256_srli_epi32(h, 16));
        (
            _mm256_sub_ps(_mm256_mul_ps(lo, k), one),
            _mm256_sub_ps(_mm256_mul_ps(hi, k), one),
        )
    }

    /// `row[i] += amp · gradient_noise(pos0[i] · f, yy, os)` for every `i`, where
    /// `pos0[i] = i · step + x0`; needs `step · f <= WINDOW_MAX_CELLS_PER_SAMPLE`, `step, f > 0`,
    /// lattice coordinates far inside the exact `f32` integer range and `row.len() < 2^24`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn octave_row_window(
        row: &mut [f32],
        pos0: &[f32],
        yy: f32,
        f: f32,
        os: u32,
        amp: f32,
    ) {
        let n = row.len().min(pos0.len());
        let yi = fast_floor(yy);
        let dy = yy - yi as f32;
        let dy1 = dy - 1.0;
        let hy0 = hash_u32((yi as u32) ^ os);
        let hy1 = hash_u32((yi.wrapping_add(1) as u32) ^ os);
        let v = super::fade(dy);
        let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        let vf = _mm256_set1_ps(f);
        let (vdy, vdy1, vv, vamp) = (
            _mm256_set1_ps(dy),
            _mm256_set1_ps(dy1),
            _mm256_set1_ps(v),
            _mm256_set1_ps(amp),
        );
        let (c6, c15, c10, c12) = (
            _mm256_set1_ps(6.0),
            _mm256_set1_ps(15.0),
            _mm256_set1_ps(10.0),
            _mm256_set1_ps(super::GRADIENT_NOISE_GAIN),
        );
        let seven = _mm256_set1_epi32(7);
        let xs = |k: usize| pos0[k] * f;
        // Sample positions of the block starting at `i`, their floor and cell index.
        let pos = |i: usize| {
            let x = _mm256_mul_ps(_mm256_loadu_ps(pos0.as_ptr().add(i)), vf);
            // floor is exact, so `x - floor(x)` equals the scalar `x - fast_floor(x) as f32`.
            let fl = _mm256_round_ps::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(x);
            (x, fl, _mm256_cvttps_epi32(fl))
        };
        // amp · cell_eval of one block, cell coefficients picked from window slot k.
        let eval = |x: __m256, fl: __m256, k: __m256i, w: &[__m256; 4]| {
            let (a0, a1) = (
                _mm256_permutevar8x32_ps(w[0], k),
                _mm256_permutevar8x32_ps(w[1], k),
            );
            let (d0, d1) = (
                _mm256_permutevar8x32_ps(w[2], k),
                _mm256_permutevar8x32_ps(w[3], k),
            );
            let dx = _mm256_sub_ps(x, fl);
            // fade(dx) = dx·dx·dx · (dx · (dx · 6 - 15) + 10), in the scalar's order.
            let d3 = _mm256_mul_ps(_mm256_mul_ps(dx, dx), dx);
            let u = _mm256_mul_ps(
                d3,
                _mm256_add_ps(
                    _mm256_mul_ps(dx, _mm256_sub_ps(_mm256_mul_ps(dx, c6), c15)),
                    c10,
                ),
            );
            let a = _mm256_add_ps(a0, _mm256_mul_ps(a1, dx));
            let d = _mm256_add_ps(d0, _mm256_mul_ps(d1, dx));
            _mm256_mul_ps(
                vamp,
                _mm256_mul_ps(_mm256_add_ps(a, _mm256_mul_ps(u, d)), c12),
            )
        };
        let outside = |k: __m256i| {
            _mm256_movemask_epi8(_mm256_or_si256(
                _mm256_cmpgt_epi32(_mm256_setzero_si256(), k),
                _mm256_cmpgt_epi32(k, seven),
            )) != 0
        };
        // Window: the cell_coeffs of cells w0 ..= w0 + 7 (lane j = cell w0 + j), same operations.
        let window = |w0: i32| {
            let c0 = _mm256_add_epi32(_mm256_set1_epi32(w0), lanes);
            let c1 = _mm256_add_epi32(c0, _mm256_set1_epi32(1));
            let (h0, h1) = (_mm256_set1_epi32(hy0 as i32), _mm256_set1_epi32(hy1 as i32));
            let (g00x, g00y) = grad8(hash8(_mm256_xor_si256(c0, h0)));
            let (g10x, g10y) = grad8(hash8(_mm256_xor_si256(c1, h0)));
            let (g01x, g01y) = grad8(hash8(_mm256_xor_si256(c0, h1)));
            let (g11x, g11y) = grad8(hash8(_mm256_xor_si256(c1, h1)));
            let (c00, c10) = (_mm256_mul_ps(g00y, vdy), _mm256_mul_ps(g10y, vdy));
            let (c01, c11) = (_mm256_mul_ps(g01y, vdy1), _mm256_mul_ps(g11y, vdy1));
            let a0 = _mm256_add_ps(c00, _mm256_mul_ps(vv, _mm256_sub_ps(c01, c00)));
            let a1 = _mm256_add_ps(g00x, _mm256_mul_ps(vv, _mm256_sub_ps(g01x, g00x)));
            let (e10, e11) = (_mm256_sub_ps(c10, g10x), _mm256_sub_ps(c11, g11x));
            let b0 = _mm256_add_ps(e10, _mm256_mul_ps(vv, _mm256_sub_ps(e11, e10)));
            let b1 = _mm256_add_ps(g10x, _mm256_mul_ps(vv, _mm256_sub_ps(g11x, g10x)));
            [a0, a1, _mm256_sub_ps(b0, a0), _mm256_sub_ps(b1, a1)]
        };
        let mut w0 = 0i32;
        let mut win = [_mm256_setzero_ps(); 4];
        let mut have = false;
        let mut i = 0usize;
        while i + 8 <= n {
            let (xa, fla, xia) = pos(i);
            let mut ka = _mm256_sub_epi32(xia, _mm256_set1_epi32(w0));
            if !have || outside(ka) {
                let first = _mm256_cvtsi256_si32(xia);
                if fast_floor(xs(i + 7)).wrapping_sub(first) > 7 {
                    // More than 8 cells in 8 samples (not expected below
                    // WINDOW_MAX_CELLS_PER_SAMPLE): stay exact regardless.
                    for (k, o) in row[i..i + 8].iter_mut().enumerate() {
                        *o += amp * gradient_noise(xs(i + k), yy, os);
                    }
                    i += 8;
                    continue;
                }
                w0 = first;
                have = true;
                win = window(w0);
                ka = _mm256_sub_epi32(xia, _mm256_set1_epi32(w0));
            }
            // A second block in the same window is evaluated alongside (independent chains).
            if i + 16 <= n {
                let (xb, flb, xib) = pos(i + 8);
                let kb = _mm256_sub_epi32(xib, _mm256_set1_epi32(w0));
                if !outside(kb) {
                    let va = eval(xa, fla, ka, &win);
                    let vb = eval(xb, flb, kb, &win);
                    let o = row.as_mut_ptr().add(i);
                    _mm256_storeu_ps(o, _mm256_add_ps(_mm256_loadu_ps(o), va));
                    _mm256_storeu_ps(o.add(8), _mm256_add_ps(_mm256_loadu_ps(o.add(8)), vb));
                    i += 16;
                    continue;
                }
            }
            let va = eval(xa, fla, ka, &win);
            let o = row.as_mut_ptr().add(i);
            _mm256_storeu_ps(o, _mm256_add_ps(_mm256_loadu_ps(o), va));
            i += 8;
        }
        for (k, o) in row[i..].iter_mut().enumerate() {
            *o += amp * gradient_noise(xs(i + k), yy, os);
        }
    }
}

/// One row of [`fbm_noise`]: octave-outer so the inner loop is a straight, vectorisable map.
#[inline(always)]
fn fbm_row_body(row: &mut [f32], y: f32, step: f32, x0: f32, fbm: &Fbm) {
    let Fbm {
        octaves,
        lacunarity,
        persistence,
        s,
    } = *fbm;
    let mut amp = 1.0f32;
    let mut norm = 0.0f32;
    let mut f = 1.0f32;
    let n = row.len();
    // Sample positions before the octave's frequency, `i · step + x0` (shared by the octaves
    // of the AVX2 window kernel, which then only multiplies by `f`: the same value as computing
    // `(i · step + x0) · f` in one go).
    #[cfg(target_arch = "x86_64")]
    let pos: Vec<f32> = if crate::simd::has_avx2() && step * f <= WINDOW_MAX_CELLS_PER_SAMPLE {
        (0..n).map(|i| (i as i32) as f32 * step + x0).collect()
    } else {
        Vec::new()
    };
    for o in 0..octaves {
        let os = octave_seed(s, o);
        let yy = y * f;
        let ends_ok = n > 0 && {
            let (first, last) = (
                (x0 * f).abs(),
                ((((n - 1) as i32) as f32 * step + x0) * f).abs(),
            );
            first < 4.0e6 && last < 4.0e6
        };
        let lattice_ok = step > 0.0 && f > 0.0 && ends_ok && n < (1 << 24);
        #[cfg(target_arch = "x86_64")]
        let done = lattice_ok && step * f <= WINDOW_MAX_CELLS_PER_SAMPLE && pos.len() == n && {
            // SAFETY: `pos` is only filled when the CPU supports AVX2.
            unsafe { avx2::octave_row_window(row, &pos, yy, f, os, amp) };
            true
        };
        #[cfg(not(target_arch = "x86_64"))]
        let done = false;
        if done {
        } else if lattice_ok && step * f * MIN_RUN <= 1.0 {
            octave_row_runs(row, yy, step, x0, f, os, amp);
        } else {
            octave_row_points(row, yy, step, x0, f, os, amp);
        }
        norm += amp;
        amp *= persistence;
        f *= lacunarity;
    }
    let inv = if norm > 0.0 { 1.0 / norm } else { 0.0 };
    for v in row.iter_mut() {
        *v *= inv;
    }
}

crate::simd::dispatch! {
    /// Row kernel of [`fbm_noise`], compiled for AVX2 when the CPU has it (same results: no FMA).
    /// Adds to `row`: sample `i` is `fbm.point(i · step + x0, y)` (noise units).
    fn fbm_row(row: &mut [f32], y: f32, step: f32, x0: f32, fbm: &Fbm) => fbm_row_body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continuous_and_zero_on_lattice() {
        for i in -5..5 {
            assert_eq!(gradient_noise(i as f32, 3.0, 9), 0.0);
        }
        let a = gradient_noise(1.4999, 2.2, 1);
        let b = gradient_noise(1.5001, 2.2, 1);
        assert!((a - b).abs() < 1e-3);
    }

    #[test]
    fn row_kernel_matches_point_function() {
        let fp = FbmParams {
            octaves: 5,
            scale: 100.0,
            ..FbmParams::default()
        };
        let f = fbm_noise(&Grid::new(65, 640.0, 77), &fp, 1);
        let fbm = Fbm::new(&fp, stage_seed(77, 1));
        let step = 640.0 / 64.0 / 100.0;
        for &(x, z) in &[(0usize, 0usize), (13, 7), (64, 64), (30, 50)] {
            let p = fbm.point(x as f32 * step, z as f32 * step);
            assert!((f[z * 65 + x] - p).abs() < 1e-5, "{x},{z}");
        }
    }

    #[test]
    fn run_kernel_matches_point_function_at_all_octaves() {
        // Odd steps and offsets (negative too), from hundreds of samples per cell to several
        // cells per sample, so both row paths and every run boundary case are exercised.
        let s = stage_seed(5, 9);
        for &(step, x0, y) in &[
            (0.002f32, 0.0f32, 0.37f32),
            (0.0137, -3.71, -12.9),
            (0.31, 17.3, 2.5),
            (1.7, -0.5, 0.0),
            (0.000_97, 1234.567, -88.1),
        ] {
            for octaves in 1..=16u32 {
                for &(lac, per) in &[(2.0f32, 0.5f32), (1.37, 0.71), (3.9, 0.3)] {
                    let n = 301;
                    // Stay inside the range where lattice coordinates fit an i32.
                    if (x0.abs() + n as f32 * step + y.abs()) * lac.powi(octaves as i32 - 1) > 1.0e6
                    {
                        continue;
                    }
                    let mut row = vec![0.0f32; n];
                    let fbm = Fbm {
                        octaves,
                        lacunarity: lac,
                        persistence: per,
                        s,
                    };
                    fbm.add_row(&mut row, y, step, x0);
                    for (i, &v) in row.iter().enumerate() {
                        let p = fbm.point((i as f32) * step + x0, y);
                        assert!(
                            (v - p).abs() < 1e-5,
                            "step {step} x0 {x0} oct {octaves} lac {lac} i {i}: {v} vs {p}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn run_and_point_paths_agree_bitwise() {
        let s = 0xabcd_1234;
        for &(step, x0, f) in &[
            (0.002f32, 0.0f32, 1.0f32),
            (0.0131, -7.77, 2.0),
            (0.05, 3.3, 1.37),
            (0.0007, -0.001, 64.0),
        ] {
            let n = 777;
            let mut a = vec![0.25f32; n];
            let mut b = a.clone();
            octave_row_runs(&mut a, 3.3, step, x0, f, s, 0.7);
            octave_row_points(&mut b, 3.3, step, x0, f, s, 0.7);
            assert_eq!(a, b, "step {step} x0 {x0} f {f}");
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn window_and_point_paths_agree_bitwise() {
        if !crate::simd::has_avx2() {
            eprintln!("SKIPPED: window_and_point_paths_agree_bitwise: no AVX2");
            return;
        }
        let s = 0x5eed_0001;
        // From one sample per 0.95 cells (the window limit) to thousands per cell, negative and
        // positive offsets, rows whose length is not a multiple of 8.
        for &(step, x0, f, yy) in &[
            (0.95f32, 0.0f32, 1.0f32, 0.5f32),
            (0.85, 0.0, 1.0, 0.5),
            (0.002, 0.0, 1.0, 3.3),
            (0.0131, -7.77, 2.0, -4.1),
            (0.05, 3.3, 1.37, 0.0),
            (0.0007, -0.001, 64.0, 100.25),
            (0.001, 1234.5, 128.0, -77.7),
            (0.4, -3.0e5, 1.0, 2.0e5),
        ] {
            for n in [1usize, 7, 8, 9, 63, 777, 1025] {
                if step * f > WINDOW_MAX_CELLS_PER_SAMPLE {
                    continue;
                }
                let mut a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
                let mut b = a.clone();
                // SAFETY: AVX2 checked above.
                let pos: Vec<f32> = (0..n).map(|i| (i as i32) as f32 * step + x0).collect();
                unsafe { avx2::octave_row_window(&mut a, &pos, yy, f, s, 0.7) };
                octave_row_points(&mut b, yy, step, x0, f, s, 0.7);
                assert!(
                    a.iter().zip(&b).all(|(p, q)| p.to_bits() == q.to_bits()),
                    "step {step} x0 {x0} f {f} n {n}"
                );
            }
        }
    }

    #[test]
    fn range_and_variety() {
        let fp = FbmParams {
            octaves: 6,
            scale: 200.0,
            ..FbmParams::default()
        };
        let f = fbm_noise(&Grid::new(129, 1000.0, 3), &fp, 1);
        let (mn, mx) = f
            .iter()
            .fold((f32::MAX, f32::MIN), |(a, b), &v| (a.min(v), b.max(v)));
        assert!(mn > -1.5 && mx < 1.5, "{mn} {mx}");
        assert!(mx - mn > 0.5, "{mn} {mx}");
    }

    #[test]
    fn huge_coordinates_do_not_panic() {
        // Parameters that reach such coordinates are rejected by `IslandParams::validate`; the
        // noise itself must still never panic (debug builds check integer overflow).
        for x in [-1.0e12f32, -3.0e9, 3.0e9, 1.0e12, f32::MAX, f32::MIN] {
            let _ = gradient_noise(x, -x, 5);
            let _ = crate::value_noise::value_noise_point(x, -x, 5);
            let _ = fast_floor(x);
        }
        assert_eq!(fast_floor(-2.5), -3);
        assert_eq!(fast_floor(2.5), 2);
        assert_eq!(fast_floor(-3.0), -3);
    }

    #[test]
    fn huge_seeds_work() {
        let fp = FbmParams::classic(3, 30.0);
        let a = fbm_noise(&Grid::new(33, 100.0, u64::MAX), &fp, 1);
        let b = fbm_noise(&Grid::new(33, 100.0, u64::MAX - 1), &fp, 1);
        assert!(a.iter().all(|v| v.is_finite()));
        assert_ne!(a, b);
        let var: f32 = a.iter().map(|v| v * v).sum::<f32>() / a.len() as f32;
        assert!(var > 1e-3);
    }
}
