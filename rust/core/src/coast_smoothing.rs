//! Coast smoothing: rounds the signed distance to the coast before the coastal falloff, so the
//! land does not rise in straight creases along the medial axis of the coastline.
//!
//! The exact distance ([`crate::distance::distance_to_coast`]) has a gradient discontinuity
//! wherever two stretches of coast are equally near (the medial axis: from every convex bend of
//! the coast inwards, and down the middle of every narrow neck). The falloff rises with the
//! distance over [`crate::params::CoastParams::coast_width`], so each of those lines became a
//! straight roof ridge. This stage blurs the distance with an approximate Gaussian (three box
//! passes per axis, `σ =` [`SMOOTHING`] `· coast_width`) and blends the blurred value in away
//! from the coast (weight `smoothstep(0, 2σ, |d|)`): the coastline itself (the sign of the
//! distance) is exactly as before, the creases inland are gone.
//!
//! The box passes run on fixed-point integers (`1/`[`QUANT`] m, floored, offset to be
//! non-negative, a rounded integer mean per pass), so the result is exact and the same bits on any thread
//! count and in the WGSL twin (`shaders/smooth_distance.wgsl`).

use crate::grid::smoothstep;
use rayon::prelude::*;

/// Blur radius (Gaussian σ) as a share of the coast width.
pub const SMOOTHING: f32 = 0.15;
/// Fixed-point steps per metre of the blurred distance.
pub const QUANT: f32 = 64.0;

/// Box half-width (samples) of each of the three passes for a blur of `sigma` samples: three
/// boxes of width `w` have variance `3 (w² − 1) / 12`.
pub fn box_radius(sigma_samples: f32) -> usize {
    if sigma_samples.is_nan() || sigma_samples <= 0.5 {
        return 0;
    }
    let w = (4.0 * sigma_samples * sigma_samples + 1.0).sqrt();
    (((w - 1.0) * 0.5).round() as usize).min(512)
}

/// Distances are clamped to ±`cap` metres before the blur; the blurred field is exact where the
/// falloff can still see it (`cap` ≥ the coast and shelf widths plus three σ).
pub fn smoothing_cap(coast_width: f32, shelf_width: f32, sigma_m: f32) -> f32 {
    coast_width.max(shelf_width) + 3.0 * sigma_m
}

/// What [`smooth_distance`] uses for a coast: box half-width (samples), clamp `cap` (metres),
/// integer `bias` and blend width `keep` (metres); `None` when nothing is smoothed.
pub fn smoothing_params(
    spacing: f32,
    coast_width: f32,
    shelf: f32,
) -> Option<(usize, f32, i32, f32)> {
    let sigma_m = SMOOTHING * coast_width;
    let k = box_radius(sigma_m / spacing);
    if k == 0 {
        return None;
    }
    let cap = smoothing_cap(coast_width, shelf, sigma_m);
    Some((k, cap, (cap * QUANT).ceil() as i32, 2.0 * sigma_m))
}

/// Smooth the signed distance `dist` (metres, `n × n`, `spacing` metres apart, positive on
/// land) in place for a falloff over `coast_width` metres; see the [module documentation](self).
pub fn smooth_distance(dist: &mut [f32], n: usize, spacing: f32, coast_width: f32, shelf: f32) {
    smooth(dist, n, spacing, coast_width, shelf, false);
}

/// [`smooth_distance`]; `wide` takes the 64-bit window sums even where 32 bits suffice (tests).
fn smooth(dist: &mut [f32], n: usize, spacing: f32, coast_width: f32, shelf: f32, wide: bool) {
    assert_eq!(dist.len(), n * n, "dist must hold n² samples");
    let Some((k, cap, bias, keep)) = smoothing_params(spacing, coast_width, shelf) else {
        return;
    };
    if n < 2 {
        return;
    }
    // Quantised values lie in 0..=2·bias + 1. Window sums fit 32 bits at every usual setting
    // (the fast path); the 64-bit one is the fallback for extreme radii and caps.
    let w = (2 * k + 1) as i64;
    let strips = match Mean32::new(w, 2 * bias as i64 + 1).filter(|_| !wide) {
        Some(m32) => blur(
            dist,
            n,
            k,
            cap,
            bias,
            |pad, tmp| blur_rows32(pad, tmp, n, k, m32),
            |a, b, sum: &mut [u32], m| column_pass32(a, b, sum, n, m, k, m32),
        ),
        None => {
            let mean = Mean::new(w);
            blur(
                dist,
                n,
                k,
                cap,
                bias,
                |pad, tmp| blur_rows(pad, tmp, n, k, mean),
                |a, b, sum: &mut [i64], m| column_pass(a, b, sum, n, m, k, mean),
            )
        }
    };
    let m = COLUMN_STRIP;
    dist.par_chunks_mut(n).enumerate().for_each(|(z, row)| {
        for (x0, d) in (0..n).step_by(m).zip(row.chunks_mut(m)) {
            let w = d.len();
            let strip = &strips[x0 * n + z * w..x0 * n + (z + 1) * w];
            for (d, &q) in d.iter_mut().zip(strip) {
                let s = (q - bias) as f32 * (1.0 / QUANT);
                let t = smoothstep(0.0, keep, d.abs());
                let v = *d + (s - *d) * t;
                // The coastline stays where it is.
                if (v > 0.0) == (*d > 0.0) {
                    *d = v;
                }
            }
        }
    });
}

/// Fixed-point distance of a row: `⌊clamp(d, ±cap) · QUANT⌋ + bias` (non-negative).
#[inline(always)]
fn quantize_row_body(d: &[f32], cap: f32, bias: i32, out: &mut [i32]) {
    for (o, &v) in out.iter_mut().zip(d) {
        *o = (v.clamp(-cap, cap) * QUANT).floor() as i32 + bias;
    }
}

crate::simd::dispatch! {
    /// [`quantize_row_body`], compiled for AVX2 when the CPU has it (`floor` inline instead of
    /// a library call; exact either way).
    fn quantize_row(d: &[f32], cap: f32, bias: i32, out: &mut [i32]) => quantize_row_body
}

/// Rounded integer mean of a window of `w` non-negative values: `(sum + w / 2) / w`, by a
/// multiplication with a rounded-up reciprocal instead of a (slow) 64-bit division.
#[derive(Clone, Copy)]
struct Mean {
    w: u64,
    /// `⌊2⁶⁴ / w⌋ + 1`: `x · m / 2⁶⁴ = x / w + x·e / 2⁶⁴` with `0 < e < 1`, which floors to
    /// `⌊x / w⌋` for every `x < 2⁶⁴ / w` (the fraction of `x / w` is at most `1 − 1/w`).
    m: u64,
}

impl Mean {
    /// For windows of `w` (odd, at least 3) values.
    fn new(w: i64) -> Mean {
        debug_assert!(w >= 3 && w % 2 == 1);
        let w = w as u64;
        // w is odd: it does not divide 2⁶⁴, so ⌊(2⁶⁴ − 1) / w⌋ = ⌊2⁶⁴ / w⌋.
        Mean {
            w,
            m: u64::MAX / w + 1,
        }
    }
}

/// [`Mean`] with 32-bit window sums and a 32-bit reciprocal `⌊2³² / w⌋ + 1`, exact (the same
/// argument) while `x = sum + w / 2` stays below `2³² / w`: [`Mean32::new`] checks that for the
/// largest sum a window can reach. Eight lanes per AVX2 multiplication instead of one 128-bit
/// product: the column passes vectorise.
#[derive(Clone, Copy)]
struct Mean32 {
    half: u32,
    m: u64,
}

impl Mean32 {
    /// For windows of `w` (odd, at least 3) values in `0..=max_value`; `None` when a window
    /// sum could leave the exact range.
    fn new(w: i64, max_value: i64) -> Option<Mean32> {
        debug_assert!(w >= 3 && w % 2 == 1);
        let w = w as u64;
        let top = (max_value.max(0) as u64).checked_mul(w)? + w / 2;
        (top.checked_mul(w)? < 1 << 32).then(|| Mean32 {
            half: (w / 2) as u32,
            m: u32::MAX as u64 / w + 1,
        })
    }
}

/// A window mean over running sums of type [`Window::Sum`] (see [`Mean`], [`Mean32`]).
trait Window: Copy + Send + Sync {
    type Sum: Copy + Send + Sync;
    const ZERO: Self::Sum;
    /// `sum + add - sub` (the result is a window sum, in range).
    fn slide(sum: Self::Sum, add: i32, sub: i32) -> Self::Sum;
    /// The rounded mean of a window summing to `sum`.
    fn of(self, sum: Self::Sum) -> i32;
}

impl Window for Mean {
    type Sum = i64;
    const ZERO: i64 = 0;

    #[inline(always)]
    fn slide(sum: i64, add: i32, sub: i32) -> i64 {
        sum + add as i64 - sub as i64
    }

    #[inline(always)]
    fn of(self, sum: i64) -> i32 {
        debug_assert!(
            sum >= 0 && (sum as u64) < (1 << 48),
            "window sum out of range"
        );
        let x = sum as u64 + self.w / 2;
        ((x as u128 * self.m as u128) >> 64) as i32
    }
}

impl Window for Mean32 {
    type Sum = u32;
    const ZERO: u32 = 0;

    #[inline(always)]
    fn slide(sum: u32, add: i32, sub: i32) -> u32 {
        // Wrapping: the intermediate may wrap, the window sum itself is in range.
        sum.wrapping_add(add as u32).wrapping_sub(sub as u32)
    }

    #[inline(always)]
    fn of(self, sum: u32) -> i32 {
        let x = sum.wrapping_add(self.half);
        ((x as u64 * self.m) >> 32) as i32
    }
}

/// One box pass along a row of `n` values held in `pad[k..k + n]` (the `k` values on either
/// side are filled here with the edge values: borders replicate the edge sample) into `out`.
#[inline(always)]
fn box_row<M: Window>(pad: &mut [i32], out: &mut [i32], n: usize, k: usize, mean: M) {
    let (first, last) = (pad[k], pad[k + n - 1]);
    pad[..k].fill(first);
    pad[k + n..].fill(last);
    let mut sum = pad[..2 * k + 1]
        .iter()
        .fold(M::ZERO, |s, &v| M::slide(s, v, 0));
    // out[x] is the mean of pad[x..=x + 2k].
    for (x, o) in out.iter_mut().enumerate() {
        *o = mean.of(sum);
        sum = M::slide(sum, pad[x + 2 * k + 1], pad[x]);
    }
}

/// Columns per strip of [`box_columns`].
const COLUMN_STRIP: usize = 64;

/// Quantise `dist` and blur it: the three passes along x row by row (`rows`), then the three
/// along z (`column`, borders replicating the edge row) per strip of [`COLUMN_STRIP`] columns:
/// strip `s` holds columns `s · COLUMN_STRIP ..` row by row, from `s · COLUMN_STRIP · n` on in the
/// one buffer returned.
fn blur<S: Copy + Default + Send + Sync>(
    dist: &[f32],
    n: usize,
    k: usize,
    cap: f32,
    bias: i32,
    rows: impl Fn(&mut [i32], &mut [i32]) + Sync,
    column: impl Fn(&[i32], &mut [i32], &mut [S], usize) + Sync,
) -> Vec<i32> {
    let mut a: Vec<i32> = crate::memory::with_capacity(n * n);
    a.spare_capacity_mut()[..n * n]
        .par_chunks_mut(n)
        .zip(dist.par_chunks(n))
        .for_each_init(
            || (vec![0i32; n + 2 * k + 1], vec![0i32; n]),
            |(pad, tmp), (out, d)| {
                quantize_row(d, cap, bias, &mut pad[k..k + n]);
                rows(pad, tmp);
                for (o, &v) in out.iter_mut().zip(tmp.iter()) {
                    o.write(v);
                }
            },
        );
    // SAFETY: every element below n² was written just above (capacity >= n²).
    unsafe { a.set_len(n * n) };
    let src = &a;
    // The strips one after another (strip `s` from `s · COLUMN_STRIP · n` on), in one buffer
    // first written by the strips' own passes (huge pages at large sizes); each task's scratch
    // strip is reused for the strips it takes.
    let mut out: Vec<i32> = crate::memory::zeros(n * n);
    out.par_chunks_mut(COLUMN_STRIP * n)
        .enumerate()
        .for_each_init(
            || (Vec::new(), Vec::new()),
            |(t, sum), (s, o)| {
                let x0 = s * COLUMN_STRIP;
                let m = COLUMN_STRIP.min(n - x0);
                t.resize(m * n, 0i32);
                sum.resize(m, S::default());
                for (z, r) in t.chunks_mut(m).enumerate() {
                    r.copy_from_slice(&src[z * n + x0..z * n + x0 + m]);
                }
                // Three passes: t → o → t → o.
                column(t, o, sum, m);
                column(o, t, sum, m);
                column(t, o, sum, m);
            },
        );
    out
}

/// One box pass along z of a strip of `m` columns (`a` row by row) into `b`.
#[inline(always)]
fn column_pass<M: Window>(
    a: &[i32],
    b: &mut [i32],
    sum: &mut [M::Sum],
    n: usize,
    m: usize,
    k: usize,
    mean: M,
) {
    let ki = k as isize;
    let row = |z: isize| z.clamp(0, n as isize - 1) as usize * m;
    sum.fill(M::ZERO);
    for z in -ki..=ki {
        let r = row(z);
        for (s, &v) in sum.iter_mut().zip(&a[r..r + m]) {
            *s = M::slide(*s, v, 0);
        }
    }
    for z in 0..n as isize {
        let (add, sub) = (&a[row(z + ki + 1)..][..m], &a[row(z - ki)..][..m]);
        let out = &mut b[z as usize * m..(z as usize + 1) * m];
        for x in 0..m {
            out[x] = mean.of(sum[x]);
            sum[x] = M::slide(sum[x], add[x], sub[x]);
        }
    }
}

/// The three row passes of [`smooth_distance`] on one quantised row (`pad[k..k + n]`) into
/// `tmp`, with the window arithmetic `mean`.
#[inline(always)]
fn blur_rows<M: Window>(pad: &mut [i32], tmp: &mut [i32], n: usize, k: usize, mean: M) {
    for pass in 0..3 {
        if pass > 0 {
            pad[k..k + n].copy_from_slice(tmp);
        }
        box_row(pad, tmp, n, k, mean);
    }
}

crate::simd::dispatch! {
    /// The three row passes with 32-bit sums (AVX2 copy when available; integer arithmetic,
    /// identical results).
    fn blur_rows32(pad: &mut [i32], tmp: &mut [i32], n: usize, k: usize, mean: Mean32) => blur_rows
}

crate::simd::dispatch! {
    /// One column pass with 32-bit sums (AVX2 copy when available; integer arithmetic,
    /// identical results).
    fn column_pass32(a: &[i32], b: &mut [i32], sum: &mut [u32], n: usize, m: usize, k: usize, mean: Mean32) => column_pass
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distance::distance_to_coast;

    /// A square island: the exact distance has creases along the square's diagonals.
    fn square(n: usize) -> Vec<u8> {
        (0..n * n)
            .map(|i| {
                let (x, z) = (i % n, i / n);
                (x > n / 4 && x < 3 * n / 4 && z > n / 4 && z < 3 * n / 4) as u8
            })
            .collect()
    }

    #[test]
    fn keeps_the_coastline_and_rounds_the_medial_axis() {
        let (n, sp, cw) = (257, 1.0, 90.0);
        let mask = square(n);
        let exact = distance_to_coast(&mask, n, sp);
        let mut d = exact.clone();
        smooth_distance(&mut d, n, sp, cw, 60.0);
        for i in 0..n * n {
            assert_eq!(d[i] > 0.0, exact[i] > 0.0, "coastline moved at {i}");
        }
        // Along a line across the diagonal (the medial axis), the exact distance has a kink
        // (second difference of the order of the step); the smoothed one is round.
        let z = n / 2 - 30;
        let kink = |f: &[f32]| {
            (n / 2 - 40..n / 2 + 40)
                .map(|x| (f[z * n + x - 1] - 2.0 * f[z * n + x] + f[z * n + x + 1]).abs())
                .fold(0.0f32, f32::max)
        };
        assert!(kink(&exact) > 0.5, "{}", kink(&exact));
        assert!(
            kink(&d) < 0.1 * kink(&exact),
            "{} vs {}",
            kink(&d),
            kink(&exact)
        );
        // Near the coast the distance is (almost) untouched.
        let i = (n / 2) * n + n / 4 + 2;
        assert!((d[i] - exact[i]).abs() < 0.2, "{} {}", d[i], exact[i]);
        // Same bits on one thread.
        let mut d1 = exact.clone();
        rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| smooth_distance(&mut d1, n, sp, cw, 60.0));
        assert!(d.iter().zip(&d1).all(|(a, b)| a.to_bits() == b.to_bits()));
    }

    /// The reciprocal multiplication is the rounded integer division, for window sizes up to
    /// the largest (1025) and sums from zero to the largest window of capped distances can reach.
    #[test]
    fn mean_by_reciprocal_equals_the_division() {
        for w in [3i64, 5, 7, 9, 63, 101, 1025] {
            let mean = Mean::new(w);
            let top = w * (1 << 24);
            let mut s = 0x1357_9bdfu64;
            let sums = (0..2000i64)
                .chain(top - 2000..top)
                .chain((0..20000).map(|_| {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    (s % top as u64) as i64
                }));
            for sum in sums {
                assert_eq!(mean.of(sum), ((sum + w / 2) / w) as i32, "w {w} sum {sum}");
            }
        }
    }

    /// The 32-bit reciprocal is the rounded integer division wherever [`Mean32::new`] accepts
    /// the window, and it refuses windows whose sums could leave its exact range.
    #[test]
    fn mean32_equals_the_division_where_accepted() {
        assert!(Mean32::new(1025, 1 << 22).is_none());
        assert!(Mean32::new(3, (1 << 31) / 3).is_none());
        for (w, max) in [(3i64, 20_000i64), (95, 40_000), (301, 12_000), (1025, 4000)] {
            let Some(mean) = Mean32::new(w, max) else {
                panic!("w {w} max {max} refused");
            };
            let top = w * max;
            let mut s = 0x2468_ace1u64;
            let sums = (0..2000i64)
                .chain((top - 2000).max(0)..=top)
                .chain((0..20000).map(|_| {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    (s % (top as u64 + 1)) as i64
                }));
            for sum in sums {
                let want = ((sum + w / 2) / w) as i32;
                assert_eq!(mean.of(sum as u32), want, "w {w} sum {sum}");
            }
        }
    }

    /// The 32-bit path gives the bits of the 64-bit one, on a real island's distance.
    #[test]
    fn narrow_sums_equal_wide_sums() {
        for (n, sp, cw) in [(257, 1.0, 90.0), (300, 0.5, 60.0), (129, 4.0, 200.0)] {
            let exact = distance_to_coast(&square(n), n, sp);
            let (mut a, mut b) = (exact.clone(), exact.clone());
            smooth(&mut a, n, sp, cw, 60.0, false);
            smooth(&mut b, n, sp, cw, 60.0, true);
            assert!(
                a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()),
                "{n}"
            );
            assert!(
                a.iter().zip(&exact).any(|(x, y)| x != y),
                "{n}: nothing smoothed"
            );
        }
    }

    #[test]
    fn box_radius_matches_the_gaussian_variance() {
        assert_eq!(box_radius(0.0), 0);
        assert_eq!(box_radius(f32::NAN), 0);
        for sigma in [2.0f32, 8.0, 13.5, 40.0] {
            let w = (2 * box_radius(sigma) + 1) as f32;
            let var = 3.0 * (w * w - 1.0) / 12.0;
            assert!((var.sqrt() - sigma).abs() < 1.0, "{sigma}: {}", var.sqrt());
        }
    }
}
