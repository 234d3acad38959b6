//! Value noise with cosine interpolation.
//!
//! Each lattice point holds a hashed value in [0, 1); values are blended with the cosine
//! fade `(1 - cos(πt)) / 2`, evaluated with a fixed odd polynomial (no libm call) so the WGSL
//! port computes the same numbers. Octave `i` has amplitude `persistence^i` and twice the
//! frequency of octave `i - 1`.

use crate::gradient_noise::{cell_run, fast_floor, octave_seed};
use crate::grid::{par_rows, Grid};
use crate::hash::{hash2_unit, stage_seed};
use crate::params::ValueNoiseParams;

/// `(1 - cos(πt)) / 2` for `t` in [0, 1], as `(1 + sin(π(t - ½))) / 2` with a degree-9 Taylor
/// sine (error below 4e-6).
#[inline(always)]
pub(crate) fn cosine_fade(t: f32) -> f32 {
    let x = std::f32::consts::PI * (t - 0.5);
    let x2 = x * x;
    let s = x
        * (1.0
            + x2 * (-1.0 / 6.0
                + x2 * (1.0 / 120.0 + x2 * (-1.0 / 5040.0 + x2 * (1.0 / 362_880.0)))));
    // Clamp so the lattice values are hit exactly (the series overshoots ±1 by 3.5e-6).
    (0.5 + 0.5 * s).clamp(0.0, 1.0)
}

/// One octave of value noise at `(x, y)` (lattice units), in [0, 1).
#[inline(always)]
pub(crate) fn value_noise_point(x: f32, y: f32, seed: u32) -> f32 {
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

/// Multi-octave cosine value noise (the `value_noise.wgsl` pass) over `g`, with the octaves,
/// first wavelength and persistence of `v` (each octave doubles the frequency) and the stage
/// seed of `(g.seed, tag)`.
///
/// Returns values in [0, 1], row-major.
pub fn value_noise(g: &Grid, v: &ValueNoiseParams, tag: u32) -> Vec<f32> {
    let (resolution, octaves, persistence) = (g.resolution, v.octaves, v.persistence);
    let s = stage_seed(g.seed, tag);
    let step = g.world_size / (resolution - 1) as f32 / v.scale;
    let mut out = vec![0.0f32; resolution * resolution];
    par_rows(&mut out, resolution, |z, row| {
        value_row(row, z as f32 * step, step, s, octaves, persistence)
    });
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
        let n = row.len();
        if sx > 0.0 && sx * 6.0 <= 1.0 && (n as f32) * sx < 4.0e6 && n < (1 << 24) {
            value_octave_runs(row, yy, sx, os, amp);
        } else {
            for (x, v) in row.iter_mut().enumerate() {
                *v += amp * value_noise_point(x as f32 * sx, yy, os);
            }
        }
        norm += amp;
        amp *= persistence;
        f *= ValueNoiseParams::LACUNARITY;
    }
    let inv = if norm > 0.0 { 1.0 / norm } else { 0.0 };
    for v in row.iter_mut() {
        *v *= inv;
    }
}

/// `row[i] += amp · value_noise_point(i · sx, yy, os)`, bit for bit, computed per lattice cell:
/// the samples of one cell share its four corner values, hashed once per cell.
#[inline(always)]
fn value_octave_runs(row: &mut [f32], yy: f32, sx: f32, os: u32, amp: f32) {
    let n = row.len();
    let xs = |i: usize| i as f32 * sx;
    let yi = fast_floor(yy);
    let v = cosine_fade(yy - yi as f32);
    let per_cell = 1.0 / sx;
    let mut a = 0usize;
    while a < n {
        let (xi, b) = cell_run(a, n, &xs, per_cell);
        let xf = xi as f32;
        let c00 = hash2_unit(xi, yi, os);
        let c10 = hash2_unit(xi.wrapping_add(1), yi, os);
        let c01 = hash2_unit(xi, yi.wrapping_add(1), os);
        let c11 = hash2_unit(xi.wrapping_add(1), yi.wrapping_add(1), os);
        let (e0, e1) = (c10 - c00, c11 - c01);
        for (k, o) in row[a..b].iter_mut().enumerate() {
            let u = cosine_fade(((a + k) as i32) as f32 * sx - xf);
            let top = c00 + u * e0;
            let bot = c01 + u * e1;
            *o += amp * (top + v * (bot - top));
        }
        a = b;
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
    fn row_kernel_matches_point_function() {
        let s = stage_seed(11, 1);
        for &(step, y) in &[(0.002f32, 0.3f32), (0.0131, 7.77), (0.2, 1.5), (1.3, -2.2)] {
            let n = 513;
            let mut row = vec![0.0f32; n];
            value_row(&mut row, y, step, s, 6, 0.5);
            for (i, &got) in row.iter().enumerate() {
                let (mut want, mut amp, mut norm, mut f) = (0.0f32, 1.0f32, 0.0f32, 1.0f32);
                for o in 0..6 {
                    want +=
                        amp * value_noise_point(i as f32 * (step * f), y * f, octave_seed(s, o));
                    norm += amp;
                    amp *= 0.5;
                    f *= 2.0;
                }
                assert_eq!(got, want * (1.0 / norm), "step {step} i {i}");
            }
        }
    }

    #[test]
    fn octaves_normalised_to_unit_range() {
        let v = ValueNoiseParams {
            scale: 100.0,
            ..ValueNoiseParams::default()
        };
        let f = value_noise(&Grid::new(65, 640.0, 5), &v, 1);
        assert!(f.iter().all(|&v| (0.0..=1.0).contains(&v)));
    }
}
