//! Coastal falloff: turns the normalised large-scale relief into metres through the signed
//! distance to the coast, then adds the fine detail *after* the falloff so it survives near the
//! shore (a plain multiply would flatten beaches into a featureless ramp).

use crate::grid::smoothstep;
use crate::params::CoastParams;
use rayon::prelude::*;

/// Height in metres of one sample.
///
/// * `land01` — shaped large-scale relief, 0..1;
/// * `dist` — signed distance to the coast, metres (positive on land);
/// * `fine` — fine detail noise, -1..1; `roughness` — its biome multiplier.
#[inline(always)]
pub fn coastal_height(
    land01: f32,
    dist: f32,
    fine: f32,
    roughness: f32,
    max_height: f32,
    c: &CoastParams,
) -> f32 {
    let large = if dist >= 0.0 {
        c.beach_height * smoothstep(0.0, 0.25 * c.coast_width, dist)
            + land01 * max_height * smoothstep(0.0, c.coast_width, dist)
    } else {
        -c.sea_depth * smoothstep(0.0, c.shelf_width, -dist)
    };
    large + fine * c.fine_amplitude * roughness
}

/// Apply [`coastal_height`] to whole fields; returns heights in metres.
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
}
