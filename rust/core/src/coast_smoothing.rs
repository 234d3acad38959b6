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
    assert_eq!(dist.len(), n * n, "dist must hold n² samples");
    let Some((k, cap, bias, keep)) = smoothing_params(spacing, coast_width, shelf) else {
        return;
    };
    if n < 2 {
        return;
    }
    let mut a: Vec<i32> = dist
        .par_iter()
        .map(|&d| (d.clamp(-cap, cap) * QUANT).floor() as i32 + bias)
        .collect();
    let mut b = vec![0i32; n * n];
    for _ in 0..3 {
        box_rows(&a, &mut b, n, k);
        std::mem::swap(&mut a, &mut b);
    }
    for _ in 0..3 {
        box_columns(&a, &mut b, n, k);
        std::mem::swap(&mut a, &mut b);
    }
    dist.par_iter_mut().zip(a.par_iter()).for_each(|(d, &q)| {
        let s = (q - bias) as f32 * (1.0 / QUANT);
        let t = smoothstep(0.0, keep, d.abs());
        let v = *d + (s - *d) * t;
        // The coastline stays where it is.
        if (v > 0.0) == (*d > 0.0) {
            *d = v;
        }
    });
}

/// Rounded integer mean of a window of `2k + 1` non-negative values summing to `sum`.
#[inline(always)]
fn mean(sum: i64, w: i64) -> i32 {
    ((sum + w / 2) / w) as i32
}

/// One box pass along x (borders replicate the edge sample).
fn box_rows(src: &[i32], dst: &mut [i32], n: usize, k: usize) {
    let w = (2 * k + 1) as i64;
    dst.par_chunks_mut(n).enumerate().for_each(|(z, out)| {
        let row = &src[z * n..(z + 1) * n];
        let at = |x: isize| row[x.clamp(0, n as isize - 1) as usize] as i64;
        let ki = k as isize;
        let mut sum: i64 = (-ki..=ki).map(at).sum();
        for (x, o) in out.iter_mut().enumerate() {
            *o = mean(sum, w);
            let x = x as isize;
            sum += at(x + ki + 1) - at(x - ki);
        }
    });
}

/// One box pass along z (borders replicate the edge row), in strips of columns.
fn box_columns(src: &[i32], dst: &mut [i32], n: usize, k: usize) {
    const STRIP: usize = 64;
    let w = (2 * k + 1) as i64;
    let ki = k as isize;
    let strips: Vec<(usize, Vec<i32>)> = (0..n.div_ceil(STRIP))
        .into_par_iter()
        .map(|s| {
            let x0 = s * STRIP;
            let m = STRIP.min(n - x0);
            let at = |z: isize, x: usize| src[z.clamp(0, n as isize - 1) as usize * n + x0 + x];
            let mut sum = vec![0i64; m];
            for z in -ki..=ki {
                for (x, s) in sum.iter_mut().enumerate() {
                    *s += at(z, x) as i64;
                }
            }
            let mut out = vec![0i32; m * n];
            for z in 0..n as isize {
                for x in 0..m {
                    out[z as usize * m + x] = mean(sum[x], w);
                    sum[x] += at(z + ki + 1, x) as i64 - at(z - ki, x) as i64;
                }
            }
            (x0, out)
        })
        .collect();
    for (x0, out) in strips {
        let m = out.len() / n;
        for z in 0..n {
            dst[z * n + x0..z * n + x0 + m].copy_from_slice(&out[z * m..(z + 1) * m]);
        }
    }
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
