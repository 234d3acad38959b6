//! Automatic splat: four weights (sand, grass, rock, snow) from height, slope and biome.
//!
//! Thresholds are jittered by noise so borders look natural; weights are smoothed with
//! separable box-blur passes and quantised to RGBA8 summing to exactly 255.

use crate::gradient_noise::fbm_noise;
use crate::grid::{par_rows, smoothstep};
use crate::normals::slope_degrees;
use crate::params::SplatParams;

/// Wavelength of the threshold jitter noise, metres.
pub const SPLAT_JITTER_SCALE: f32 = 40.0;

/// Splat channels.
pub const SAND: usize = 0;
/// Grass channel.
pub const GRASS: usize = 1;
/// Rock channel.
pub const ROCK: usize = 2;
/// Snow channel.
pub const SNOW: usize = 3;

/// Unblurred weights of one sample (sum 1).
#[inline]
pub fn splat_weights(height: f32, slope_deg: f32, sandiness: f32, jitter: f32, max_height: f32, p: &SplatParams) -> [f32; 4] {
    let hj = height + jitter;
    let sand = 1.0 - smoothstep(p.sand_height - 1.5, p.sand_height + 1.5, hj);
    let snow_h = p.snow_height * max_height;
    let snow = smoothstep(snow_h - 4.0, snow_h + 4.0, hj) * (1.0 - smoothstep(p.rock_slope + 4.0, p.rock_slope + 14.0, slope_deg));
    let rock = smoothstep(p.rock_slope - 6.0, p.rock_slope + 6.0, slope_deg);
    let rest = (1.0 - rock) * (1.0 - snow);
    let sandy = sand.max(sandiness);
    let w = [rest * sandy, rest * (1.0 - sandy), rock, (1.0 - rock) * snow];
    let s = w[0] + w[1] + w[2] + w[3];
    if s > 0.0 { [w[0] / s, w[1] / s, w[2] / s, w[3] / s] } else { [0.0, 1.0, 0.0, 0.0] }
}

/// One separable box-blur pass (radius 1, clamped at borders) over a 4-channel field.
pub fn box_blur_pass(w: &mut Vec<[f32; 4]>, n: usize) {
    let src = w.clone();
    let mut tmp = vec![[0.0f32; 4]; n * n];
    par_rows(&mut tmp, n, |z, row| {
        for x in 0..n {
            let (a, b, c) = (src[z * n + x.saturating_sub(1)], src[z * n + x], src[z * n + (x + 1).min(n - 1)]);
            for k in 0..4 {
                row[x][k] = (a[k] + b[k] + c[k]) * (1.0 / 3.0);
            }
        }
    });
    par_rows(w, n, |z, row| {
        let (z0, z1) = (z.saturating_sub(1), (z + 1).min(n - 1));
        for x in 0..n {
            let (a, b, c) = (tmp[z0 * n + x], tmp[z * n + x], tmp[z1 * n + x]);
            for k in 0..4 {
                row[x][k] = (a[k] + b[k] + c[k]) * (1.0 / 3.0);
            }
        }
    });
}

/// Quantise weights (any positive sum) to bytes summing to exactly 255 (largest remainder,
/// ties to the lower channel).
#[inline]
pub fn quantize_weights<const N: usize>(w: [f32; N]) -> [u8; N] {
    let s: f32 = w.iter().map(|v| v.max(0.0)).sum();
    let mut out = [0u8; N];
    if s <= 0.0 {
        out[if N > 1 { 1 } else { 0 }] = 255;
        return out;
    }
    let mut rem = [0.0f32; N];
    let mut total = 0u32;
    for k in 0..N {
        let v = w[k].max(0.0) / s * 255.0;
        let f = v.floor().min(255.0);
        out[k] = f as u8;
        rem[k] = v - f;
        total += f as u32;
    }
    let mut left = 255u32.saturating_sub(total);
    while left > 0 {
        let mut best = 0;
        for k in 1..N {
            if rem[k] > rem[best] {
                best = k;
            }
        }
        out[best] += 1;
        rem[best] = -1.0;
        left -= 1;
    }
    out
}

/// Auto splat of a whole map: RGBA8 per sample = (sand, grass, rock, snow), summing to 255.
///
/// * `heights` — metres; `normals` — unit normals from [`crate::normals::compute_normals`];
/// * `sandiness` — biome sandiness per sample (0..1).
#[allow(clippy::too_many_arguments)]
pub fn auto_splat(
    heights: &[f32],
    normals: &[[f32; 3]],
    sandiness: &[f32],
    resolution: usize,
    world_size: f32,
    max_height: f32,
    p: &SplatParams,
    seed: u64,
    tag: u32,
) -> Vec<[u8; 4]> {
    let n = resolution;
    let jitter = fbm_noise(n, world_size, SPLAT_JITTER_SCALE, 3, 2.0, 0.5, seed, tag);
    let mut w = vec![[0.0f32; 4]; n * n];
    par_rows(&mut w, n, |z, row| {
        for (x, o) in row.iter_mut().enumerate() {
            let i = z * n + x;
            *o = splat_weights(heights[i], slope_degrees(normals[i]), sandiness[i], p.jitter * jitter[i], max_height, p);
        }
    });
    for _ in 0..p.blur_passes {
        box_blur_pass(&mut w, n);
    }
    let mut out = vec![[0u8; 4]; n * n];
    par_rows(&mut out, n, |z, row| {
        for (x, o) in row.iter_mut().enumerate() {
            *o = quantize_weights(w[z * n + x]);
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantized_sums_to_255() {
        for w in [[0.25f32; 4], [1.0, 0.0, 0.0, 0.0], [0.1, 0.2, 0.3, 0.4], [1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 0.0]] {
            let q = quantize_weights(w);
            assert_eq!(q.iter().map(|&v| v as u32).sum::<u32>(), 255, "{w:?}");
        }
        assert_eq!(quantize_weights([1.0f32, 0.0, 0.0, 0.0]), [255, 0, 0, 0]);
    }

    #[test]
    fn rules() {
        let p = SplatParams::default();
        let beach = splat_weights(0.5, 2.0, 0.0, 0.0, 100.0, &p);
        assert!(beach[SAND] > 0.9);
        let meadow = splat_weights(20.0, 5.0, 0.0, 0.0, 100.0, &p);
        assert!(meadow[GRASS] > 0.9);
        let cliff = splat_weights(20.0, 60.0, 0.0, 0.0, 100.0, &p);
        assert!(cliff[ROCK] > 0.9);
        let peak = splat_weights(95.0, 10.0, 0.0, 0.0, 100.0, &p);
        assert!(peak[SNOW] > 0.9);
        let desert = splat_weights(20.0, 5.0, 1.0, 0.0, 100.0, &p);
        assert!(desert[SAND] > 0.9);
    }
}
