//! Coastal falloff: turns the normalised large-scale relief into metres through the signed
//! distance to the coast, then adds the fine detail *after* the falloff so it survives near the
//! shore (a plain multiply would flatten beaches into a featureless ramp).

use crate::grid::smoothstep;
use crate::params::CoastParams;
use crate::shaping::sample_curve;
use rayon::prelude::*;

/// Height in metres of one sample.
///
/// * `land01` — shaped large-scale relief, 0..1;
/// * `dist` — signed distance to the coast, metres (positive on land);
/// * `fine` — fine detail noise, -1..1; `roughness` — its biome multiplier.
#[inline(always)]
pub(crate) fn coastal_height(
    land01: f32,
    dist: f32,
    fine: f32,
    roughness: f32,
    max_height: f32,
    c: &CoastParams,
) -> f32 {
    let large = if dist >= 0.0 {
        c.beach_height * smoothstep(0.0, CoastParams::BEACH_RISE * c.coast_width, dist)
            + land01 * max_height * smoothstep(0.0, c.coast_width, dist)
    } else {
        -c.sea_depth * smoothstep(0.0, c.shelf_width, -dist)
    };
    large + fine * c.fine_amplitude * roughness
}

/// The coastal falloff (the `coastal_falloff.wgsl` pass) of whole fields with the settings of
/// `c` (coast and shelf widths, beach height, sea depth, fine-detail amplitude); returns
/// heights in metres.
///
/// * `land01` — shaped large-scale relief, 0..1; `dist` — signed distance to the coast, metres
///   (positive on land, [`crate::distance::distance_to_coast`]);
/// * `fine` — fine detail noise in -1..1 ([`crate::gradient_noise::fbm_noise`] of
///   [`CoastParams::fine_noise`]); `roughness` — its biome multiplier per sample;
/// * `max_height` — metres that `land01 = 1` rises to inland.
pub fn coastal_falloff(
    land01: &[f32],
    dist: &[f32],
    fine: &[f32],
    roughness: &[f32],
    max_height: f32,
    c: &CoastParams,
) -> Vec<f32> {
    land01
        .par_iter()
        .zip(dist.par_iter())
        .zip(fine.par_iter().zip(roughness.par_iter()))
        .map(|((&l, &d), (&f, &r))| coastal_height(l, d, f, r, max_height, c))
        .collect()
}

/// The pipeline's fused shaping + coast pass on one row: sample `i` is
/// `coastal_height(sample_curve(curve, base[i]), dist[i], fine[i], rough[i], max_height, c)`,
/// the same value [`crate::shaping::apply_shaping_curve`] then [`coastal_falloff`] give.
pub(crate) struct ShapedCoast<'a> {
    /// The shaping curve (≥ 2 points).
    pub(crate) curve: &'a [f32],
    /// Metres that shaped relief 1 rises to inland.
    pub(crate) max_height: f32,
    /// Coast settings.
    pub(crate) c: &'a CoastParams,
}

impl ShapedCoast<'_> {
    /// Heights of one row into `out` (all slices of the row's length): the explicit AVX2
    /// kernel [`avx2::row`] when the CPU has it (the compiler leaves the curve lookup and the
    /// land/sea choice scalar), then [`ShapedCoast::row_scalar`] for the rest; the same
    /// operations in the same order, so the same bits.
    #[inline]
    pub(crate) fn row(
        &self,
        out: &mut [f32],
        base: &[f32],
        dist: &[f32],
        fine: &[f32],
        rough: &[f32],
    ) {
        #[cfg(target_arch = "x86_64")]
        if self.curve.len() >= 2 && self.curve.len() <= i32::MAX as usize && crate::simd::has_avx2()
        {
            // SAFETY: AVX2 is available (checked just above); the curve has at least 2 points.
            let done = unsafe { avx2::row(self, out, base, dist, fine, rough) };
            let (o, b, d, f, r) = (
                &mut out[done..],
                &base[done..],
                &dist[done..],
                &fine[done..],
                &rough[done..],
            );
            return self.row_scalar(o, b, d, f, r);
        }
        self.row_scalar(out, base, dist, fine, rough)
    }

    /// The scalar reference of [`ShapedCoast::row`].
    #[inline(always)]
    fn row_scalar(&self, out: &mut [f32], base: &[f32], dist: &[f32], fine: &[f32], rough: &[f32]) {
        let (curve, max_height, c) = (self.curve, self.max_height, self.c);
        for ((((o, &b), &d), &f), &r) in out.iter_mut().zip(base).zip(dist).zip(fine).zip(rough) {
            *o = coastal_height(sample_curve(curve, b), d, f, r, max_height, c);
        }
    }
}

// Hand-written AVX2 kernel (std::arch intrinsics: gathers for the curve lookup and a blend for
// the land/sea choice, which the compiler leaves scalar). Scalar reference:
// `ShapedCoast::row_scalar` above. Test: `tests::shaped_coast_fast_path_equals_the_scalar_row`
// (bit for bit, NaN, ±0, infinities and curve ends included). Bench row: pipeline stage `coast`
// (`pipeline.coast` in `examples/bench_table.rs`; ~5.6 → ~3.6 ms at 1025² when it was added).
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::ShapedCoast;
    use crate::params::CoastParams;
    use std::arch::x86_64::*;

    /// `v.clamp(0.0, 1.0)` of Rust (NaN stays NaN, -0.0 stays -0.0): `max`/`min` with the value
    /// second, which the instructions return when either is NaN or both are zero.
    #[inline(always)]
    unsafe fn clamp01(v: __m256) -> __m256 {
        _mm256_min_ps(_mm256_set1_ps(1.0), _mm256_max_ps(_mm256_setzero_ps(), v))
    }

    /// `grid::smoothstep(0.0, e1, x)`.
    #[inline(always)]
    unsafe fn smoothstep0(e1: f32, x: __m256) -> __m256 {
        let zero = _mm256_setzero_ps();
        let t = clamp01(_mm256_div_ps(
            _mm256_sub_ps(x, zero),
            _mm256_set1_ps(e1 - 0.0),
        ));
        _mm256_mul_ps(
            _mm256_mul_ps(t, t),
            _mm256_sub_ps(_mm256_set1_ps(3.0), _mm256_mul_ps(_mm256_set1_ps(2.0), t)),
        )
    }

    /// [`ShapedCoast::row_scalar`] on the first multiple of 8 samples; returns how many it did.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn row(
        sc: &ShapedCoast,
        out: &mut [f32],
        base: &[f32],
        dist: &[f32],
        fine: &[f32],
        rough: &[f32],
    ) -> usize {
        let (curve, max_height, c) = (sc.curve, sc.max_height, sc.c);
        let len = out
            .len()
            .min(base.len())
            .min(dist.len())
            .min(fine.len())
            .min(rough.len());
        let full = len / 8 * 8;
        let scale = _mm256_set1_ps((curve.len() - 1) as f32);
        let last = _mm256_set1_epi32(curve.len() as i32 - 2);
        let one = _mm256_set1_epi32(1);
        let (beach, land_scale) = (c.beach_height, CoastParams::BEACH_RISE * c.coast_width);
        let mut k = 0;
        while k < full {
            let ld = |s: &[f32]| _mm256_loadu_ps(s.as_ptr().add(k));
            let (b, d, f, r) = (ld(base), ld(dist), ld(fine), ld(rough));
            // shaping::sample_curve: x = clamp(t)·(n-1), i = min(x as usize, n-2), lerp.
            let x = _mm256_mul_ps(clamp01(b), scale);
            // Truncation; NaN gives i32::MIN, which the max below turns into 0 like `as usize`.
            let i = _mm256_max_epi32(
                _mm256_min_epi32(_mm256_cvttps_epi32(x), last),
                _mm256_setzero_si256(),
            );
            let fr = _mm256_sub_ps(x, _mm256_cvtepi32_ps(i));
            let a = _mm256_i32gather_ps::<4>(curve.as_ptr(), i);
            let a1 = _mm256_i32gather_ps::<4>(curve.as_ptr(), _mm256_add_epi32(i, one));
            let shaped = _mm256_add_ps(a, _mm256_mul_ps(_mm256_sub_ps(a1, a), fr));
            // coast::coastal_height.
            let land = _mm256_add_ps(
                _mm256_mul_ps(_mm256_set1_ps(beach), smoothstep0(land_scale, d)),
                _mm256_mul_ps(
                    _mm256_mul_ps(shaped, _mm256_set1_ps(max_height)),
                    smoothstep0(c.coast_width, d),
                ),
            );
            let neg_d = _mm256_xor_ps(d, _mm256_set1_ps(-0.0));
            let sea = _mm256_mul_ps(
                _mm256_set1_ps(-c.sea_depth),
                smoothstep0(c.shelf_width, neg_d),
            );
            let large = _mm256_blendv_ps(
                sea,
                land,
                _mm256_cmp_ps::<_CMP_GE_OQ>(d, _mm256_setzero_ps()),
            );
            let h = _mm256_add_ps(
                large,
                _mm256_mul_ps(_mm256_mul_ps(f, _mm256_set1_ps(c.fine_amplitude)), r),
            );
            _mm256_storeu_ps(out.as_mut_ptr().add(k), h);
            k += 8;
        }
        full
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sea_level_at_coast_and_full_height_inland() {
        let c = CoastParams::default();
        assert_eq!(coastal_height(0.8, 0.0, 0.0, 1.0, 100.0, &c), 0.0);
        let inland = coastal_height(0.8, c.coast_width * 2.0, 0.0, 1.0, 100.0, &c);
        assert!((inland - (80.0 + c.beach_height)).abs() < 1e-4);
        assert_eq!(
            coastal_height(0.8, -c.shelf_width * 2.0, 0.0, 1.0, 100.0, &c),
            -c.sea_depth
        );
    }

    #[test]
    fn fine_detail_survives_at_the_shore() {
        let c = CoastParams::default();
        let a = coastal_height(0.5, 1.0, 1.0, 1.0, 100.0, &c);
        let b = coastal_height(0.5, 1.0, -1.0, 1.0, 100.0, &c);
        assert!((a - b - 2.0 * c.fine_amplitude).abs() < 1e-5);
    }

    #[test]
    fn shaped_coast_fast_path_equals_the_scalar_row() {
        let mut r = 0x9e37_79b9u32;
        let mut next = || {
            r ^= r << 13;
            r ^= r >> 17;
            r ^= r << 5;
            r as f32 / u32::MAX as f32
        };
        let specials = [
            f32::NAN,
            -0.0,
            0.0,
            1.0,
            -1.0,
            1.5,
            f32::INFINITY,
            f32::NEG_INFINITY,
            1e-30,
            0.999_999_9,
        ];
        for curve_len in [2usize, 6, 17, 256] {
            let curve: Vec<f32> = (0..curve_len).map(|_| next()).collect();
            for len in [0usize, 1, 7, 8, 9, 1025] {
                let mut base: Vec<f32> = (0..len).map(|_| next() * 1.4 - 0.2).collect();
                let mut dist: Vec<f32> = (0..len).map(|_| (next() - 0.5) * 400.0).collect();
                for (k, &v) in specials.iter().enumerate().filter(|&(k, _)| k < len) {
                    base[k] = v;
                    dist[len - 1 - k] = v * 50.0;
                }
                if len > 20 {
                    dist[15] = 0.0;
                    dist[16] = -0.0;
                }
                let fine: Vec<f32> = (0..len).map(|_| next() * 2.0 - 1.0).collect();
                let rough: Vec<f32> = (0..len).map(|_| next() * 2.0).collect();
                for c in [
                    CoastParams::default(),
                    CoastParams {
                        coast_width: 7.0,
                        shelf_width: 300.0,
                        beach_height: 0.0,
                        ..CoastParams::default()
                    },
                ] {
                    let (mut fast, mut slow) = (vec![0f32; len], vec![0f32; len]);
                    let sc = ShapedCoast {
                        curve: &curve,
                        max_height: 120.0,
                        c: &c,
                    };
                    sc.row(&mut fast, &base, &dist, &fine, &rough);
                    sc.row_scalar(&mut slow, &base, &dist, &fine, &rough);
                    for k in 0..len {
                        assert_eq!(
                            fast[k].to_bits(),
                            slow[k].to_bits(),
                            "curve {curve_len} len {len} sample {k}: {} vs {}",
                            fast[k],
                            slow[k]
                        );
                    }
                }
            }
        }
    }
}
