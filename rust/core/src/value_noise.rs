//! Value noise with cosine interpolation.
//!
//! Each lattice point holds a hashed value in [0, 1); values are blended with the cosine
//! fade `(1 - cos(πt)) / 2`, evaluated with a fixed odd polynomial (no libm call) so the WGSL
//! port computes the same numbers. Octave `i` has amplitude `persistence^i` and twice the
//! frequency of octave `i - 1`.

use crate::grid::par_rows;
use crate::hash::{hash2_unit, stage_seed};
use crate::gradient_noise::{fast_floor, octave_seed};

/// `(1 - cos(πt)) / 2` for `t` in [0, 1], as `(1 + sin(π(t - ½))) / 2` with a degree-9 Taylor
/// sine (error below 4e-6).
#[inline(always)]
pub fn cosine_fade(t: f32) -> f32 {
    let x = std::f32::consts::PI * (t - 0.5);
    let x2 = x * x;
    let s = x * (1.0 + x2 * (-1.0 / 6.0 + x2 * (1.0 / 120.0 + x2 * (-1.0 / 5040.0 + x2 * (1.0 / 362_880.0)))));
    // Clamp so the lattice values are hit exactly (the series overshoots ±1 by 3.5e-6).
    (0.5 + 0.5 * s).clamp(0.0, 1.0)
}

/// One octave of value noise at `(x, y)` (lattice units), in [0, 1).
#[inline(always)]
pub fn value_noise_point(x: f32, y: f32, seed: u32) -> f32 {
    let xi = fast_floor(x);
    let yi = fast_floor(y);
    let u = cosine_fade(x - xi as f32);
    let v = cosine_fade(y - yi as f32);
    let a = hash2_unit(xi, yi, seed);
    let b = hash2_unit(xi.wrapping_add(1), yi, seed);
    let c = hash2_unit(xi, yi.wrapping_add(1), seed);
    let d = hash2_unit(xi.wrapping_add(1), yi.wrapping_add(1), seed);
    let top = a + u * (b - a);
    let bot = c + u * (d - c);
    top + v * (bot - top)
}

/// Multi-octave cosine value noise over a `resolution²` grid covering `world_size` metres.
///
/// * `scale` — wavelength of the first octave, metres (> 0);
/// * `octaves` — 1..=16; `persistence` — amplitude ratio between octaves, 0..=1 (0.5 default).
///
/// Returns values in [0, 1], row-major.
pub fn value_noise(
    resolution: usize,
    world_size: f32,
    scale: f32,
    octaves: u32,
    persistence: f32,
    seed: u64,
    tag: u32,
) -> Vec<f32> {
    let s = stage_seed(seed, tag);
    let step = world_size / (resolution - 1) as f32 / scale;
    let mut out = vec![0.0f32; resolution * resolution];
    par_rows(&mut out, resolution, |z, row| value_row(row, z as f32 * step, step, s, octaves, persistence));
    out
}

#[inline(always)]
fn value_row_body(row: &mut [f32], y: f32, step: f32, s: u32, octaves: u32, persistence: f32) {
    let mut amp = 1.0f32;
    let mut norm = 0.0f32;
    let mut f = 1.0f32;
    for o in 0..octaves {
        let os = octave_seed(s, o);
        let (sx, yy) = (step * f, y * f);
        for (x, v) in row.iter_mut().enumerate() {
            *v += amp * value_noise_point(x as f32 * sx, yy, os);
        }
        norm += amp;
        amp *= persistence;
        f *= 2.0;
    }
    let inv = if norm > 0.0 { 1.0 / norm } else { 0.0 };
    for v in row.iter_mut() {
        *v *= inv;
    }
}

crate::simd::dispatch! {
    /// Row kernel of [`value_noise`] (AVX2 copy when available; identical results).
    fn value_row(row: &mut [f32], y: f32, step: f32, s: u32, octaves: u32, persistence: f32) => value_row_body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_fade_matches_cos() {
        for i in 0..=100 {
            let t = i as f32 / 100.0;
            let exact = (1.0 - (std::f32::consts::PI * t).cos()) / 2.0;
            assert!((cosine_fade(t) - exact).abs() < 1e-5, "{t}");
        }
    }

    #[test]
    fn interpolates_lattice_values() {
        let s = 1234;
        assert_eq!(value_noise_point(3.0, 4.0, s), hash2_unit(3, 4, s));
        let m = value_noise_point(3.5, 4.0, s);
        let e = (hash2_unit(3, 4, s) + hash2_unit(4, 4, s)) / 2.0;
        assert!((m - e).abs() < 1e-5);
    }

    #[test]
    fn octaves_normalised_to_unit_range() {
        let f = value_noise(65, 640.0, 100.0, 6, 0.5, 5, 1);
        assert!(f.iter().all(|&v| (0.0..=1.0).contains(&v)));
    }
}
