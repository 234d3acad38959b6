//! Diamond-square midpoint displacement on a `2^n + 1` grid.
//!
//! Randomness is a pure function of the sample position (hashed), not of a sequential RNG, so
//! the rows of a pass run in parallel and the GPU port gives the same field. Each level runs a
//! diamond pass (centres of squares) and a square pass (edge midpoints); at the map edge the
//! square pass averages only the in-bounds neighbours (three instead of four), so edges carry no
//! bias. The displacement amplitude is multiplied by `roughness` every half-step.

use crate::det_math;
use crate::grid::Grid;
use crate::hash::{hash2_unit, stage_seed};
use crate::params::DiamondSquareParams;
use rayon::prelude::*;

/// Random displacement in [-1, 1) for sample `(x, z)`.
#[inline(always)]
fn jitter(x: usize, z: usize, seed: u32) -> f32 {
    hash2_unit(x as i32, z as i32, seed) * 2.0 - 1.0
}

/// Combine neighbour values: mean, or midrange `(max + min) / 2` when `ridge` is set.
#[inline(always)]
fn average(vals: &[f32], ridge: bool) -> f32 {
    if ridge {
        let (mn, mx) = vals
            .iter()
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            });
        (mn + mx) * 0.5
    } else {
        vals.iter().sum::<f32>() / vals.len() as f32
    }
}

/// Amplitude of the displacement at the diamond pass of the level with half-size `half`.
/// The square pass of the same level uses `amplitude * roughness`.
pub fn level_amplitude(resolution: usize, half: usize, roughness: f32) -> f32 {
    // Level 0 (half = (res-1)/2) has amplitude 1; each later level is two half-steps further.
    let levels = ((resolution - 1) / (2 * half)).trailing_zeros() as i32;
    det_math::powi(roughness, 2 * levels)
}

/// Diamond-square heights (the `diamond_square.wgsl` pass) on `g` (`resolution = 2^n + 1`;
/// the world size plays no part), with the roughness and ridge mode of `d` and the stage seed
/// of `(g.seed, tag)`.
///
/// Corners are seeded from the hash; output is unnormalised (roughly [-2, 2]), row-major.
pub fn diamond_square(g: &Grid, d: &DiamondSquareParams, tag: u32) -> Vec<f32> {
    diamond_square_counted(g, d, tag, None)
}

/// As [`diamond_square`], optionally counting how many times each sample is written.
fn diamond_square_counted(
    g: &Grid,
    d: &DiamondSquareParams,
    tag: u32,
    mut counts: Option<&mut Vec<u32>>,
) -> Vec<f32> {
    let (n, roughness, ridge) = (g.resolution, d.roughness, d.ridge);
    let s = stage_seed(g.seed, tag);
    let mut h = vec![0.0f32; n * n];
    let last = n - 1;
    for &(x, z) in &[(0, 0), (last, 0), (0, last), (last, last)] {
        h[z * n + x] = jitter(x, z, s);
        if let Some(c) = counts.as_deref_mut() {
            c[z * n + x] += 1;
        }
    }
    let mut step = last;
    while step > 1 {
        let half = step / 2;
        let amp = level_amplitude(n, half, roughness);
        // Diamond pass: centre of every square of size `step`.
        diamond_pass(&mut h, n, step, amp, ridge, s);
        if let Some(c) = counts.as_deref_mut() {
            for z in (half..n).step_by(step) {
                for x in (half..n).step_by(step) {
                    c[z * n + x] += 1;
                }
            }
        }
        // Square pass: midpoints of every edge.
        square_pass(&mut h, n, step, amp * roughness, ridge, s);
        if let Some(c) = counts.as_deref_mut() {
            for z in (0..n).step_by(half) {
                let x0 = if (z / half).is_multiple_of(2) {
                    half
                } else {
                    0
                };
                for x in (x0..n).step_by(step) {
                    c[z * n + x] += 1;
                }
            }
        }
        step = half;
    }
    h
}

/// Diamond pass of one level: every square centre `(x, z)` (both ≡ half mod step) gets the
/// average of its four corners plus `amp * jitter`.
fn diamond_pass(h: &mut [f32], n: usize, step: usize, amp: f32, ridge: bool, seed: u32) {
    let half = step / 2;
    let ptr = SharedGrid(h.as_mut_ptr(), h.len());
    // Rows written (z ≡ half mod step) only read rows z ± half (≡ 0 mod step), never written here.
    (0..n / step).into_par_iter().for_each(|i| {
        let z = i * step + half;
        let g = &ptr;
        for x in (half..n).step_by(step) {
            let c = [
                g.get((z - half) * n + x - half),
                g.get((z - half) * n + x + half),
                g.get((z + half) * n + x - half),
                g.get((z + half) * n + x + half),
            ];
            g.set(z * n + x, average(&c, ridge) + amp * jitter(x, z, seed));
        }
    });
}

/// Square pass of one level: every edge midpoint gets the average of its in-bounds
/// neighbours at distance `half` (3 at the map edge, 4 inside) plus `amp * jitter`.
fn square_pass(h: &mut [f32], n: usize, step: usize, amp: f32, ridge: bool, seed: u32) {
    let half = step / 2;
    let ptr = SharedGrid(h.as_mut_ptr(), h.len());
    // Written samples have (x + z) / half odd; every neighbour read has it even, so reads and
    // writes never touch the same sample.
    (0..n.div_ceil(half)).into_par_iter().for_each(|i| {
        let z = i * half;
        let g = &ptr;
        let x0 = if (z / half).is_multiple_of(2) {
            half
        } else {
            0
        };
        for x in (x0..n).step_by(step) {
            let mut vals = [0.0f32; 4];
            let mut k = 0;
            if x >= half {
                vals[k] = g.get(z * n + x - half);
                k += 1;
            }
            if x + half < n {
                vals[k] = g.get(z * n + x + half);
                k += 1;
            }
            if z >= half {
                vals[k] = g.get((z - half) * n + x);
                k += 1;
            }
            if z + half < n {
                vals[k] = g.get((z + half) * n + x);
                k += 1;
            }
            g.set(
                z * n + x,
                average(&vals[..k], ridge) + amp * jitter(x, z, seed),
            );
        }
    });
}

/// A grid shared by the tasks of one pass, which write disjoint samples and read only
/// samples no task of that pass writes.
struct SharedGrid(*mut f32, usize);
unsafe impl Sync for SharedGrid {}
impl SharedGrid {
    #[inline(always)]
    fn get(&self, i: usize) -> f32 {
        assert!(i < self.1);
        // SAFETY: in bounds; no task of the current pass writes sample `i` (see the callers).
        unsafe { *self.0.add(i) }
    }
    #[inline(always)]
    fn set(&self, i: usize, v: f32) {
        assert!(i < self.1);
        // SAFETY: in bounds; each sample is written by exactly one task and read by none.
        unsafe { *self.0.add(i) = v }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ds(roughness: f32, ridge: bool) -> DiamondSquareParams {
        DiamondSquareParams { roughness, ridge }
    }

    #[test]
    fn corners_seeded_and_every_sample_written_once() {
        for &n in &[33usize, 65, 257] {
            let mut counts = vec![0u32; n * n];
            let h = diamond_square_counted(
                &Grid::new(n, 1.0, 11),
                &DiamondSquareParams::default(),
                1,
                Some(&mut counts),
            );
            assert!(counts.iter().all(|&c| c == 1), "n={n}");
            let s = stage_seed(11, 1);
            assert_eq!(h[0], jitter(0, 0, s));
            assert_eq!(h[n * n - 1], jitter(n - 1, n - 1, s));
            assert_ne!(h[0], 0.0);
        }
    }

    #[test]
    fn no_edge_bias() {
        // Averaged over many seeds, edge samples have the same mean and spread as interior ones.
        let n = 129;
        let (mut edge_sum, mut edge_sq, mut edge_n) = (0.0f64, 0.0f64, 0usize);
        let (mut in_sum, mut in_sq, mut in_n) = (0.0f64, 0.0f64, 0usize);
        for seed in 0..40 {
            let h = diamond_square(&Grid::new(n, 1.0, seed), &ds(0.707, false), 1);
            for z in 0..n {
                for x in 0..n {
                    let v = h[z * n + x] as f64;
                    if x == 0 || z == 0 || x == n - 1 || z == n - 1 {
                        edge_sum += v;
                        edge_sq += v * v;
                        edge_n += 1;
                    } else {
                        in_sum += v;
                        in_sq += v * v;
                        in_n += 1;
                    }
                }
            }
        }
        let em = edge_sum / edge_n as f64;
        let im = in_sum / in_n as f64;
        let es = (edge_sq / edge_n as f64 - em * em).sqrt();
        let is = (in_sq / in_n as f64 - im * im).sqrt();
        assert!(
            (em - im).abs() < 0.1 * is,
            "edge mean {em} interior mean {im} (sd {is})"
        );
        // An implementation that treats missing neighbours as 0 shrinks the edge spread.
        assert!((es / is - 1.0).abs() < 0.2, "edge sd {es} interior sd {is}");
    }

    #[test]
    fn ridge_differs_and_roughness_scales() {
        let g = Grid::new(65, 1.0, 3);
        let a = diamond_square(&g, &ds(0.707, false), 1);
        let b = diamond_square(&g, &ds(0.707, true), 1);
        assert_ne!(a, b);
        // Low roughness: neighbouring samples are much closer than with high roughness.
        let grad = |h: &[f32]| h.windows(2).map(|w| (w[1] - w[0]).abs()).sum::<f32>();
        let smooth = diamond_square(&g, &ds(0.3, false), 1);
        let rough = diamond_square(&g, &ds(0.9, false), 1);
        assert!(grad(&smooth) < grad(&rough));
    }
}
