//! Small grid helpers shared by the stages.

use rayon::prelude::*;

/// The square map every stage samples: `resolution²` samples, row-major `z * resolution + x`,
/// evenly spaced over `world_size` metres (sample `(x, z)` at `(x, z) · spacing` from the
/// corner), and the seed every random choice derives from (each stage mixes in its own tag:
/// [`crate::hash::stage_seed`]). The GPU port's uniforms hold the same triple.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Grid {
    /// Samples per side, ≥ 2 (the pipeline uses 2^n + 1 from 33 to 8193).
    pub resolution: usize,
    /// Edge length of the square map, metres; finite and > 0 (validated range:
    /// [`crate::params::MIN_WORLD_SIZE`]..=[`crate::params::MAX_WORLD_SIZE`]).
    pub world_size: f32,
    /// Seed; every `u64` value works.
    pub seed: u64,
}

impl Grid {
    /// A `resolution²` map of `world_size` metres drawn from `seed`.
    pub const fn new(resolution: usize, world_size: f32, seed: u64) -> Grid {
        Grid {
            resolution,
            world_size,
            seed,
        }
    }

    /// Distance between neighbouring samples, metres: `world_size / (resolution - 1)`.
    #[inline]
    pub fn spacing(&self) -> f32 {
        self.world_size / (self.resolution - 1) as f32
    }

    /// Number of samples, `resolution²`.
    #[inline]
    pub fn samples(&self) -> usize {
        self.resolution * self.resolution
    }
}

/// Samples one workgroup of the GPU normalisation pass reduces to a partial min/max
/// (`PER_GROUP` in `normalize_01.wgsl`); the GPU's partial buffer holds
/// `ceil(samples / NORM_PER_GROUP)` pairs. The CPU [`normalize_01`] gives the same result for
/// any grouping (min and max are exact).
pub const NORM_PER_GROUP: usize = 4096;

/// Most rows one parallel task of a row loop takes, where rows cost very different amounts (land
/// and sea, near and far from the coast): without a cap, rayon's adaptive split leaves each
/// thread a quarter of the map in one piece, and the thread left with the costly quarter runs on
/// alone at the end.
pub const MAX_ROWS_PER_TASK: usize = 16;

/// Run `f(row_index, row)` over every row of a row-major `width`-wide grid, rows in parallel.
pub fn par_rows<T: Send>(data: &mut [T], width: usize, f: impl Fn(usize, &mut [T]) + Sync + Send) {
    data.par_chunks_mut(width)
        .enumerate()
        .with_max_len(MAX_ROWS_PER_TASK)
        .for_each(|(z, row)| f(z, row));
}

/// Cubic Hermite smoothstep of `x` between `e0` and `e1` (GLSL/WGSL semantics, `e0 != e1`).
#[inline(always)]
pub fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// Linear interpolation.
#[inline(always)]
pub fn lerp(a: f32, b: f32, t: f32) -> f32 {
    a + (b - a) * t
}

/// Min and max of a slice (deterministic, parallel).
pub fn min_max(data: &[f32]) -> (f32, f32) {
    min_max_count_above(data, f32::INFINITY).0
}

/// [`min_max`] and the number of samples above `level`, in one parallel pass.
pub fn min_max_count_above(data: &[f32], level: f32) -> ((f32, f32), usize) {
    data.par_chunks(1 << 14)
        .map(|c| {
            // Eight independent lanes so the loop vectorises (min/max are exact, so the
            // grouping does not change the result).
            let (mut lo, mut hi, mut n) = ([f32::INFINITY; 8], [f32::NEG_INFINITY; 8], [0u32; 8]);
            let mut it = c.chunks_exact(8);
            for block in &mut it {
                for l in 0..8 {
                    lo[l] = lo[l].min(block[l]);
                    hi[l] = hi[l].max(block[l]);
                    n[l] += (block[l] > level) as u32;
                }
            }
            for &v in it.remainder() {
                lo[0] = lo[0].min(v);
                hi[0] = hi[0].max(v);
                n[0] += (v > level) as u32;
            }
            let lo = lo.iter().fold(f32::INFINITY, |a, &b| a.min(b));
            let hi = hi.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
            ((lo, hi), n.iter().map(|&k| k as usize).sum::<usize>())
        })
        .reduce(
            || ((f32::INFINITY, f32::NEG_INFINITY), 0),
            |((a, b), n), ((c, d), m)| ((a.min(c), b.max(d)), n + m),
        )
}

/// Rescale a field to [0, 1] by its min and max (a constant field becomes 0.5).
pub fn normalize_01(data: &mut [f32]) {
    let norm = Normalization::of(data);
    data.par_iter_mut().for_each(|v| *v = norm.apply(*v));
}

/// The affine map of [`normalize_01`] for one field, to apply it sample by sample (fused into
/// another pass): `(v - min) / (max - min)`, or 0.5 everywhere for a constant field.
#[derive(Clone, Copy, Debug)]
pub struct Normalization {
    min: f32,
    inv: f32,
    constant: bool,
}

impl Normalization {
    /// The normalisation of `data` (its min and max).
    pub fn of(data: &[f32]) -> Normalization {
        let (mn, mx) = min_max(data);
        let span = mx - mn;
        if span > 0.0 && span.is_finite() {
            Normalization {
                min: mn,
                inv: 1.0 / span,
                constant: false,
            }
        } else {
            Normalization {
                min: 0.0,
                inv: 0.0,
                constant: true,
            }
        }
    }

    /// Normalised value of one sample.
    #[inline(always)]
    pub fn apply(&self, v: f32) -> f32 {
        if self.constant {
            0.5
        } else {
            (v - self.min) * self.inv
        }
    }
}
