//! Shaping curve: remap normalised height through a sampled curve.

use rayon::prelude::*;

/// Evaluate a LUT of `n ≥ 2` evenly spaced samples over [0, 1] at `t` (clamped), linearly.
#[inline(always)]
pub(crate) fn sample_curve(lut: &[f32], t: f32) -> f32 {
    let n = lut.len();
    let x = t.clamp(0.0, 1.0) * (n - 1) as f32;
    let i = (x as usize).min(n - 2);
    let f = x - i as f32;
    lut[i] + (lut[i + 1] - lut[i]) * f
}

/// Remap every normalised height (0..1) in place through `lut` (the `apply_shaping_curve.wgsl`
/// pass): `lut` is [`crate::IslandParams::shaping_curve`], ≥ 2 points with values 0..=1 evenly
/// spaced over inputs 0..=1, linearly interpolated (default
/// [`crate::params::DEFAULT_SHAPING_CURVE`]).
pub fn apply_shaping_curve(heights: &mut [f32], lut: &[f32]) {
    heights
        .par_iter_mut()
        .for_each(|h| *h = sample_curve(lut, *h));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_and_interpolation() {
        let id = [0.0, 1.0];
        for i in 0..=10 {
            let t = i as f32 / 10.0;
            assert!((sample_curve(&id, t) - t).abs() < 1e-6);
        }
        let lut = [0.0, 0.5, 0.6];
        assert_eq!(sample_curve(&lut, 0.5), 0.5);
        assert!((sample_curve(&lut, 0.75) - 0.55).abs() < 1e-6);
        assert_eq!(sample_curve(&lut, 2.0), 0.6);
        assert_eq!(sample_curve(&lut, -1.0), 0.0);
    }
}
