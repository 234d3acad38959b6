//! Detail layer: a second noise field, capped and multiplied into the base height.

use crate::params::DetailParams;
use rayon::prelude::*;

/// Multiply `base` by the detail field (the `apply_detail.wgsl` pass):
/// `base *= lerp(1, min(detail01, cap) / cap, strength)` with `d.strength` and `d.cap`.
///
/// * `detail` — the detail noise in [-1, 1] (mapped to [0, 1] here), e.g.
///   [`crate::gradient_noise::fbm_noise`] of [`DetailParams::noise`];
/// * `d.enabled` is not consulted: the pipeline skips the stage when it is false.
pub fn apply_detail(base: &mut [f32], detail: &[f32], d: &DetailParams) {
    let (strength, cap) = (d.strength, d.cap);
    base.par_iter_mut()
        .zip(detail.par_iter())
        .for_each(|(b, &v)| *b *= detail_factor(v, strength, cap));
}

/// The factor [`apply_detail`] multiplies one base sample by, for detail noise `d`.
#[inline(always)]
pub(crate) fn detail_factor(d: f32, strength: f32, cap: f32) -> f32 {
    let cap = cap.max(1e-3);
    let d01 = (0.5 + 0.5 * d).clamp(0.0, 1.0);
    let m = d01.min(cap) / cap;
    1.0 + (m - 1.0) * strength
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_strength_is_identity_and_cap_limits() {
        let d = |strength, cap| DetailParams {
            strength,
            cap,
            ..DetailParams::default()
        };
        let mut b = vec![0.5, 0.8];
        apply_detail(&mut b, &[-1.0, 1.0], &d(0.0, 0.5));
        assert_eq!(b, vec![0.5, 0.8]);
        let mut b = vec![1.0, 1.0, 1.0];
        apply_detail(&mut b, &[1.0, 0.0, -1.0], &d(1.0, 0.5));
        assert_eq!(b[0], 1.0); // above the cap: full
        assert_eq!(b[1], 1.0); // 0.5 == cap: full
        assert_eq!(b[2], 0.0);
    }
}
