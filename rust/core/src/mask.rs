//! Island mask: a deformed circle in cartesian coordinates, centred on the map.
//!
//! A sample at `p` (metres from the centre) is land when
//! `|p| / R + 0.45 · (1 - roundness) · clamp(1.8 · fbm(p / noise_scale), -1, 1) < 1`, with
//! `R = radius · size / 2`. The noise is only evaluated in the ring where it can change the
//! answer (`| |p|/R - 1 | < amplitude`).
//! Deforming in cartesian space (not by angle) has no seam and keeps detail scale-independent.
//! A ring of `margin` metres along the map border is always water.

use crate::gradient_noise::Fbm;
use crate::grid::{par_rows, Grid};
use crate::hash::stage_seed;
use crate::params::MaskParams;

/// Deformation amplitude at roundness 0, as a fraction of the radius.
pub const MASK_DEFORMATION: f32 = 0.45;
/// Gain on the fBm before clamping (typical fBm values are well inside ±0.5).
pub const MASK_NOISE_GAIN: f32 = 1.8;

/// The deforming noise at `(px, pz)` metres from the centre, amplified and clamped to [-1, 1]
/// (the per-point definition of the ring noise).
#[cfg(test)]
fn mask_noise(px: f32, pz: f32, m: &MaskParams, s: u32) -> f32 {
    let ns = m.noise_scale;
    (MASK_NOISE_GAIN * Fbm::new(&m.noise(), s).point(px / ns, pz / ns)).clamp(-1.0, 1.0)
}

/// Land (1) / water (0) mask (the `island_mask.wgsl` pass) over `g`: the deformed circle of
/// `m` (radius, roundness, noise scale), with the stage seed of `(g.seed, tag)`.
///
/// * `margin` — width of the always-water border ring, metres (the pipeline uses
///   [`crate::pipeline::border_margin`]).
pub fn island_mask(g: &Grid, m: &MaskParams, margin: f32, tag: u32) -> Vec<u8> {
    let (resolution, world_size) = (g.resolution, g.world_size);
    let s = stage_seed(g.seed, tag);
    let spacing = world_size / (resolution - 1) as f32;
    let half = world_size * 0.5;
    let r = m.radius * half;
    let amp = MASK_DEFORMATION * (1.0 - m.roundness);
    let mut out = vec![0u8; resolution * resolution];
    let cfg = MaskCfg {
        s,
        spacing,
        half,
        r,
        amp,
        ns: m.noise_scale,
        margin,
    };
    par_rows(&mut out, resolution, |z, row| mask_row(z, row, &cfg));
    out
}

/// Per-map constants of [`mask_row`].
struct MaskCfg {
    /// Stage seed of the deforming noise.
    s: u32,
    spacing: f32,
    half: f32,
    r: f32,
    amp: f32,
    ns: f32,
    margin: f32,
}

#[inline(always)]
fn mask_row_body(z: usize, row: &mut [u8], c: &MaskCfg) {
    let (spacing, half, r, amp, ns) = (c.spacing, c.half, c.r, c.amp, c.ns);
    let pz = z as f32 * spacing - half;
    // Classify: 0 water, 1 land, 2 decided by the noise (the ring around the radius).
    for (x, v) in row.iter_mut().enumerate() {
        let px = x as f32 * spacing - half;
        let d0 = (px * px + pz * pz).sqrt() / r;
        *v = if d0 - amp >= 1.0 {
            0
        } else if d0 + amp < 1.0 {
            1
        } else {
            2
        };
    }
    // The ring's runs of samples get the deforming noise from the vectorised row kernel.
    let mut noise = Vec::new();
    let mut x = 0;
    while x < row.len() {
        if row[x] != 2 {
            x += 1;
            continue;
        }
        let start = x;
        while x < row.len() && row[x] == 2 {
            x += 1;
        }
        noise.clear();
        noise.resize(x - start, 0.0f32);
        Fbm::classic(MaskParams::NOISE_OCTAVES, c.s).add_row(
            &mut noise,
            pz / ns,
            spacing / ns,
            (start as f32 * spacing - half) / ns,
        );
        for (k, &nv) in noise.iter().enumerate() {
            let px = (start + k) as f32 * spacing - half;
            let d0 = (px * px + pz * pz).sqrt() / r;
            let m = (MASK_NOISE_GAIN * nv).clamp(-1.0, 1.0);
            row[start + k] = (d0 + amp * m < 1.0) as u8;
        }
    }
    for (x, v) in row.iter_mut().enumerate() {
        let px = x as f32 * spacing - half;
        let border = (half - px.abs()).min(half - pz.abs());
        *v = (*v == 1 && border > c.margin) as u8;
    }
}

crate::simd::dispatch! {
    /// One row of [`island_mask`] (AVX2 copy when available; identical results, no FMA).
    fn mask_row(z: usize, row: &mut [u8], c: &MaskCfg) => mask_row_body
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mp(radius: f32, roundness: f32, noise_scale: f32) -> MaskParams {
        MaskParams {
            radius,
            roundness,
            noise_scale,
        }
    }

    #[test]
    fn round_mask_is_a_disc() {
        let res = 129;
        let m = island_mask(&Grid::new(res, 128.0, 1), &mp(0.5, 1.0, 50.0), 1.0, 1);
        assert_eq!(m[64 * res + 64], 1);
        assert_eq!(m[0], 0);
        let area = m.iter().filter(|&&v| v == 1).count() as f32;
        let expect = std::f32::consts::PI * 32.0 * 32.0;
        assert!((area / expect - 1.0).abs() < 0.05, "{area} {expect}");
    }

    #[test]
    fn matches_point_definition() {
        // The ring noise comes from the row kernel; the definition is `mask_noise` per sample.
        // Both agree except where the deformed radius passes within float rounding of a sample.
        let (res, world, radius, round, ns, margin) =
            (257usize, 1024.0f32, 0.66f32, 0.35f32, 300.0f32, 20.0f32);
        let mparams = mp(radius, round, ns);
        let m = island_mask(&Grid::new(res, world, 42), &mparams, margin, 3);
        let s = stage_seed(42, 3);
        let spacing = world / (res - 1) as f32;
        let half = world * 0.5;
        let (r, amp) = (radius * half, MASK_DEFORMATION * (1.0 - round));
        let mut differ = 0;
        for z in 0..res {
            for x in 0..res {
                let (px, pz) = (x as f32 * spacing - half, z as f32 * spacing - half);
                let d0 = (px * px + pz * pz).sqrt() / r;
                let border = (half - px.abs()).min(half - pz.abs());
                let land = d0 + amp * mask_noise(px, pz, &mparams, s) < 1.0 && border > margin;
                differ += (land as u8 != m[z * res + x]) as usize;
            }
        }
        assert!(differ <= 2, "{differ} samples differ");
        assert!(m.iter().filter(|&&v| v == 1).count() > res * res / 10);
    }

    #[test]
    fn margin_is_water() {
        let res = 65;
        let m = island_mask(&Grid::new(res, 64.0, 3), &mp(0.95, 0.0, 10.0), 5.0, 1);
        for i in 0..res {
            for j in 0..5 {
                assert_eq!(m[j * res + i], 0);
                assert_eq!(m[i * res + j], 0);
            }
        }
    }
}
