//! Detail layer: a second noise field, capped and multiplied into the base height.

use rayon::prelude::*;

/// Multiply `base` by the detail field: `base *= lerp(1, min(detail01, cap) / cap, strength)`.
///
/// * `detail` — noise in [-1, 1] (mapped to [0, 1] here);
/// * `strength` — 0..=1, 0 leaves the base unchanged;
/// * `cap` — 0..=1; detail values above it count as full (plateaus instead of spikes).
pub fn apply_detail(base: &mut [f32], detail: &[f32], strength: f32, cap: f32) {
    base.par_iter_mut()
        .zip(detail.par_iter())
        .for_each(|(b, &d)| *b *= detail_factor(d, strength, cap));
}

/// The factor [`apply_detail`] multiplies one base sample by, for detail noise `d`.
#[inline(always)]
pub fn detail_factor(d: f32, strength: f32, cap: f32) -> f32 {
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
        let mut b = vec![0.5, 0.8];
        apply_detail(&mut b, &[-1.0, 1.0], 0.0, 0.5);
        assert_eq!(b, vec![0.5, 0.8]);
        let mut b = vec![1.0, 1.0, 1.0];
        apply_detail(&mut b, &[1.0, 0.0, -1.0], 1.0, 0.5);
        assert_eq!(b[0], 1.0); // above the cap: full
        assert_eq!(b[1], 1.0); // 0.5 == cap: full
        assert_eq!(b[2], 0.0);
    }
}
