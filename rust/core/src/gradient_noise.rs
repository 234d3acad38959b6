//! Fractal gradient noise (Perlin-style fBm).
//!
//! Gradients come from [`crate::hash`] (a random vector per lattice point, components in
//! [-1, 1]), interpolated with the quintic fade `6t⁵ - 15t⁴ + 10t³`. Rows are processed in
//! parallel; the inner loop is branch-free so LLVM vectorises it.

use crate::grid::par_rows;
use crate::hash::{hash_u32, stage_seed};

/// `floor(x)` as an integer, without a libm call so loops over it vectorise on plain SSE2.
/// Exact for |x| < 2^31 (WGSL's `floor` gives the same value).
#[inline(always)]
pub fn fast_floor(x: f32) -> i32 {
    // `as` saturates outside the i32 range; the wrapping subtraction keeps that saturated value
    // panic-free in debug builds (the lattice then just repeats, as on the GPU).
    let i = x as i32;
    i.wrapping_sub((x < i as f32) as i32)
}

/// Quintic fade curve.
#[inline(always)]
pub fn fade(t: f32) -> f32 {
    t * t * t * (t * (t * 6.0 - 15.0) + 10.0)
}

#[inline(always)]
fn grad_dot(h: u32, dx: f32, dy: f32) -> f32 {
    let gx = (h & 0xffff) as f32 * (2.0 / 65535.0) - 1.0;
    let gy = (h >> 16) as f32 * (2.0 / 65535.0) - 1.0;
    gx * dx + gy * dy
}

/// One octave of 2-D gradient noise at `(x, y)` (lattice units), roughly in [-1, 1].
#[inline(always)]
pub fn gradient_noise(x: f32, y: f32, seed: u32) -> f32 {
    let xi = fast_floor(x);
    let yi = fast_floor(y);
    let xf = xi as f32;
    let yf = yi as f32;
    let dx = x - xf;
    let dy = y - yf;
    let hy0 = hash_u32((yi as u32) ^ seed);
    let hy1 = hash_u32((yi.wrapping_add(1) as u32) ^ seed);
    let h00 = hash_u32((xi as u32) ^ hy0);
    let h10 = hash_u32((xi.wrapping_add(1) as u32) ^ hy0);
    let h01 = hash_u32((xi as u32) ^ hy1);
    let h11 = hash_u32((xi.wrapping_add(1) as u32) ^ hy1);
    let n00 = grad_dot(h00, dx, dy);
    let n10 = grad_dot(h10, dx - 1.0, dy);
    let n01 = grad_dot(h01, dx, dy - 1.0);
    let n11 = grad_dot(h11, dx - 1.0, dy - 1.0);
    let u = fade(dx);
    let v = fade(dy);
    let a = n00 + u * (n10 - n00);
    let b = n01 + u * (n11 - n01);
    // Random gradients with components in [-1, 1] peak near ±1.0; 1.2 spreads typical output
    // over most of [-1, 1] without clipping.
    (a + v * (b - a)) * 1.2
}

/// Seed of octave `o` of a field seeded with `seed`.
#[inline(always)]
pub fn octave_seed(seed: u32, o: u32) -> u32 {
    hash_u32(seed ^ o.wrapping_mul(0x68e3_1da4))
}

/// fBm of gradient noise at one point: `sum(persistence^i * noise(p * lacunarity^i)) / sum(amp)`.
///
/// `x`, `y` are in units of the first octave's wavelength. Result roughly in [-1, 1].
#[inline(always)]
pub fn fbm_point(x: f32, y: f32, seed: u32, octaves: u32, lacunarity: f32, persistence: f32) -> f32 {
    let mut sum = 0.0;
    let mut amp = 1.0;
    let mut norm = 0.0;
    let mut f = 1.0;
    for o in 0..octaves {
        sum += amp * gradient_noise(x * f, y * f, octave_seed(seed, o));
        norm += amp;
        amp *= persistence;
        f *= lacunarity;
    }
    if norm > 0.0 { sum / norm } else { 0.0 }
}

/// Fractal gradient noise over a `resolution²` grid covering `world_size` metres.
///
/// * `scale` — wavelength of the first octave, metres (> 0).
/// * `octaves` — 1..=16; `lacunarity` — frequency multiplier per octave (2 is classic);
///   `persistence` — amplitude multiplier per octave (0.5 is classic).
///
/// Returns values roughly in [-1, 1], row-major `z * resolution + x`.
pub fn fbm_noise(
    resolution: usize,
    world_size: f32,
    scale: f32,
    octaves: u32,
    lacunarity: f32,
    persistence: f32,
    seed: u64,
    tag: u32,
) -> Vec<f32> {
    fbm_field(resolution, world_size / (resolution - 1) as f32 / scale, [0.0, 0.0], octaves, lacunarity, persistence, stage_seed(seed, tag))
}

/// fBm of gradient noise sampled on a grid: sample `(x, z)` is
/// [`fbm_point`]`(x · step + offset[0], z · step + offset[1], s, ...)`, computed with the
/// vectorised row kernel. Row-major `resolution²`.
pub fn fbm_field(
    resolution: usize,
    step: f32,
    offset: [f32; 2],
    octaves: u32,
    lacunarity: f32,
    persistence: f32,
    s: u32,
) -> Vec<f32> {
    let mut out = vec![0.0f32; resolution * resolution];
    par_rows(&mut out, resolution, |z, row| {
        fbm_row(row, z as f32 * step + offset[1], step, offset[0], s, octaves, lacunarity, persistence);
    });
    out
}

/// Components of the lattice gradient of hash `h`, in [-1, 1].
#[inline(always)]
fn grad_of(h: u32) -> (f32, f32) {
    ((h & 0xffff) as f32 * (2.0 / 65535.0) - 1.0, (h >> 16) as f32 * (2.0 / 65535.0) - 1.0)
}

/// Shortest mean run of samples per lattice cell for which [`octave_row_runs`] is used;
/// shorter runs hash every sample ([`octave_row_points`]).
const MIN_RUN: f32 = 6.0;

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
        let xi = fast_floor(xs(a));
        let next = (xi + 1) as f32;
        // First sample at or beyond the next lattice line (sample positions are monotone).
        let guess = a as f32 + ((next - xs(a)) * per_cell).max(1.0);
        let mut b = if guess >= n as f32 { n } else { (guess as usize).max(a + 1) };
        while b > a + 1 && xs(b - 1) >= next {
            b -= 1;
        }
        while b < n && xs(b) < next {
            b += 1;
        }
        let xf = xi as f32;
        let (g00x, g00y) = grad_of(hash_u32((xi as u32) ^ hy0));
        let (g10x, g10y) = grad_of(hash_u32((xi.wrapping_add(1) as u32) ^ hy0));
        let (g01x, g01y) = grad_of(hash_u32((xi as u32) ^ hy1));
        let (g11x, g11y) = grad_of(hash_u32((xi.wrapping_add(1) as u32) ^ hy1));
        let (c00, c10, c01, c11) = (g00y * dy, g10y * dy, g01y * dy1, g11y * dy1);
        for (k, o) in row[a..b].iter_mut().enumerate() {
            let x = (((a + k) as i32) as f32 * step + x0) * f;
            let dx = x - xf;
            let dx1 = dx - 1.0;
            let n00 = g00x * dx + c00;
            let n10 = g10x * dx1 + c10;
            let n01 = g01x * dx + c01;
            let n11 = g11x * dx1 + c11;
            let u = fade(dx);
            let p = n00 + u * (n10 - n00);
            let q = n01 + u * (n11 - n01);
            *o += amp * ((p + v * (q - p)) * 1.2);
        }
        a = b;
    }
}

/// One row of [`fbm_noise`]: octave-outer so the inner loop is a straight, vectorisable map.
#[inline(always)]
fn fbm_row_body(row: &mut [f32], y: f32, step: f32, x0: f32, s: u32, octaves: u32, lacunarity: f32, persistence: f32) {
    let mut amp = 1.0f32;
    let mut norm = 0.0f32;
    let mut f = 1.0f32;
    let n = row.len();
    for o in 0..octaves {
        let os = octave_seed(s, o);
        let yy = y * f;
        let ends_ok = n > 0 && {
            let (first, last) = ((x0 * f).abs(), ((((n - 1) as i32) as f32 * step + x0) * f).abs());
            first < 4.0e6 && last < 4.0e6
        };
        if step > 0.0 && f > 0.0 && ends_ok && step * f * MIN_RUN <= 1.0 && n < (1 << 24) {
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
    /// Adds to `row`: sample `i` is `fbm_point(i · step + x0, y)` (noise units).
    pub(crate) fn fbm_row(row: &mut [f32], y: f32, step: f32, x0: f32, s: u32, octaves: u32, lacunarity: f32, persistence: f32)
        => fbm_row_body
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
        let f = fbm_noise(65, 640.0, 100.0, 5, 2.0, 0.5, 77, 1);
        let s = stage_seed(77, 1);
        let step = 640.0 / 64.0 / 100.0;
        for &(x, z) in &[(0usize, 0usize), (13, 7), (64, 64), (30, 50)] {
            let p = fbm_point(x as f32 * step, z as f32 * step, s, 5, 2.0, 0.5);
            assert!((f[z * 65 + x] - p).abs() < 1e-5, "{x},{z}");
        }
    }

    #[test]
    fn run_kernel_matches_point_function_at_all_octaves() {
        // Odd steps and offsets (negative too), from hundreds of samples per cell to several
        // cells per sample, so both row paths and every run boundary case are exercised.
        let s = stage_seed(5, 9);
        for &(step, x0, y) in &[(0.002f32, 0.0f32, 0.37f32), (0.0137, -3.71, -12.9), (0.31, 17.3, 2.5), (1.7, -0.5, 0.0), (0.000_97, 1234.567, -88.1)] {
            for octaves in 1..=16u32 {
                for &(lac, per) in &[(2.0f32, 0.5f32), (1.37, 0.71), (3.9, 0.3)] {
                    let n = 301;
                    // Stay inside the range where lattice coordinates fit an i32.
                    if (x0.abs() + n as f32 * step + y.abs()) * lac.powi(octaves as i32 - 1) > 1.0e6 {
                        continue;
                    }
                    let mut row = vec![0.0f32; n];
                    fbm_row(&mut row, y, step, x0, s, octaves, lac, per);
                    for (i, &v) in row.iter().enumerate() {
                        let p = fbm_point((i as f32) * step + x0, y, s, octaves, lac, per);
                        assert!((v - p).abs() < 1e-5, "step {step} x0 {x0} oct {octaves} lac {lac} i {i}: {v} vs {p}");
                    }
                }
            }
        }
    }

    #[test]
    fn run_and_point_paths_agree_bitwise() {
        let s = 0xabcd_1234;
        for &(step, x0, f) in &[(0.002f32, 0.0f32, 1.0f32), (0.0131, -7.77, 2.0), (0.05, 3.3, 1.37), (0.0007, -0.001, 64.0)] {
            let n = 777;
            let mut a = vec![0.25f32; n];
            let mut b = a.clone();
            octave_row_runs(&mut a, 3.3, step, x0, f, s, 0.7);
            octave_row_points(&mut b, 3.3, step, x0, f, s, 0.7);
            assert_eq!(a, b, "step {step} x0 {x0} f {f}");
        }
    }

    #[test]
    fn range_and_variety() {
        let f = fbm_noise(129, 1000.0, 200.0, 6, 2.0, 0.5, 3, 1);
        let (mn, mx) = f.iter().fold((f32::MAX, f32::MIN), |(a, b), &v| (a.min(v), b.max(v)));
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
        let a = fbm_noise(33, 100.0, 30.0, 3, 2.0, 0.5, u64::MAX, 1);
        let b = fbm_noise(33, 100.0, 30.0, 3, 2.0, 0.5, u64::MAX - 1, 1);
        assert!(a.iter().all(|v| v.is_finite()));
        assert_ne!(a, b);
        let var: f32 = a.iter().map(|v| v * v).sum::<f32>() / a.len() as f32;
        assert!(var > 1e-3);
    }
}
