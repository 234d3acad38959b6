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
pub fn box_blur_pass(w: &mut [[f32; 4]], n: usize) {
    let mut tmp = vec![[0.0f32; 4]; n * n];
    blur_rows(w, &mut tmp, n);
    par_rows(w, n, |z, row| blur_columns_row(&tmp, n, z, row));
}

/// Horizontal half of [`box_blur_pass`]: `dst` = rows of `src` averaged over x-1, x, x+1.
fn blur_rows(src: &[[f32; 4]], dst: &mut [[f32; 4]], n: usize) {
    par_rows(dst, n, |z, out| {
        let r = &src[z * n..(z + 1) * n];
        for (x, o) in out.iter_mut().enumerate() {
            let (a, b, c) = (r[x.saturating_sub(1)], r[x], r[(x + 1).min(n - 1)]);
            for k in 0..4 {
                o[k] = (a[k] + b[k] + c[k]) * (1.0 / 3.0);
            }
        }
    });
}

/// Vertical half of [`box_blur_pass`] for output row `z`: rows z-1, z, z+1 of `src` averaged.
#[inline(always)]
fn blur_columns_row(src: &[[f32; 4]], n: usize, z: usize, out: &mut [[f32; 4]]) {
    let (z0, z1) = (z.saturating_sub(1), (z + 1).min(n - 1));
    let (ra, rb, rc) = (&src[z0 * n..z0 * n + n], &src[z * n..z * n + n], &src[z1 * n..z1 * n + n]);
    for (((o, a), b), c) in out.iter_mut().zip(ra).zip(rb).zip(rc) {
        for k in 0..4 {
            o[k] = (a[k] + b[k] + c[k]) * (1.0 / 3.0);
        }
    }
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
        // `floor(v).min(255)` for v >= 0 (NaN gives 255 like `min`), without a libm call.
        let f = if v < 255.0 { (v as u32) as f32 } else { 255.0 };
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
    let slope = SlopeSkip::new(p);
    par_rows(&mut w, n, |z, row| {
        let i0 = z * n;
        let (hr, nr, sr, jr) = (&heights[i0..i0 + n], &normals[i0..i0 + n], &sandiness[i0..i0 + n], &jitter[i0..i0 + n]);
        for (x, o) in row.iter_mut().enumerate() {
            *o = splat_weights(hr[x], slope.degrees(nr[x]), sr[x], p.jitter * jr[x], max_height, p);
        }
    });
    drop(jitter);
    let mut out = vec![[0u8; 4]; n * n];
    if p.blur_passes == 0 {
        par_rows(&mut out, n, |z, row| {
            for (o, &v) in row.iter_mut().zip(&w[z * n..z * n + n]) {
                *o = quantize_weights(v);
            }
        });
        return out;
    }
    // Blur passes ping-pong between `w` and one scratch field; the last vertical half is fused
    // with the quantisation (same arithmetic as `box_blur_pass` followed by `quantize_weights`).
    let mut tmp = vec![[0.0f32; 4]; n * n];
    for pass in 0..p.blur_passes {
        blur_rows(&w, &mut tmp, n);
        if pass + 1 < p.blur_passes {
            par_rows(&mut w, n, |z, row| blur_columns_row(&tmp, n, z, row));
        } else {
            par_rows(&mut out, n, |z, row| {
                let mut buf = vec![[0.0f32; 4]; n];
                blur_columns_row(&tmp, n, z, &mut buf);
                for (o, &v) in row.iter_mut().zip(&buf) {
                    *o = quantize_weights(v);
                }
            });
        }
    }
    out
}

/// [`slope_degrees`] where the splat rules can tell it apart: slopes below `rock_slope - 6` or
/// above `rock_slope + 14` saturate every smoothstep of [`splat_weights`], so there the `acos`
/// is skipped (decided on the normal's y with a safety margin) and a slope on the same side is
/// returned, which gives identical weights.
struct SlopeSkip {
    flat_above: f32,
    steep_below: f32,
}

impl SlopeSkip {
    fn new(p: &SplatParams) -> SlopeSkip {
        let lo = p.rock_slope - 6.0;
        let hi = p.rock_slope + 14.0;
        let flat_above = if lo > 0.5 && lo < 89.5 { lo.to_radians().cos() + 1e-4 } else { f32::INFINITY };
        let steep_below = if hi > 0.5 && hi < 89.5 { hi.to_radians().cos() - 1e-4 } else { f32::NEG_INFINITY };
        SlopeSkip { flat_above, steep_below }
    }

    #[inline(always)]
    fn degrees(&self, normal: [f32; 3]) -> f32 {
        let y = normal[1];
        if y > self.flat_above {
            0.0
        } else if y < self.steep_below {
            90.0
        } else {
            slope_degrees(normal)
        }
    }
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

    /// The definition: largest remainder over `floor`ed shares.
    fn quantize_reference(w: [f32; 4]) -> [u8; 4] {
        let s: f32 = w.iter().map(|v| v.max(0.0)).sum();
        if s <= 0.0 {
            return [0, 255, 0, 0];
        }
        let (mut out, mut rem, mut total) = ([0u8; 4], [0.0f32; 4], 0u32);
        for k in 0..4 {
            let v = w[k].max(0.0) / s * 255.0;
            let f = v.floor().min(255.0);
            out[k] = f as u8;
            rem[k] = v - f;
            total += f as u32;
        }
        for _ in 0..255u32.saturating_sub(total) {
            let best = (1..4).fold(0, |b, k| if rem[k] > rem[b] { k } else { b });
            out[best] += 1;
            rem[best] = -1.0;
        }
        out
    }

    #[test]
    fn quantize_matches_floor_definition() {
        for i in 0..5000 {
            let t = (i as f32 * 0.000_731).fract();
            for w in [[t, 1.0 - t, (t * 7.0).fract(), 0.5 * t], [t * 1e-3, 0.0, 3.0 * t, -t], [t, t, t, t], [1.0, t, 0.0, 0.0]] {
                assert_eq!(quantize_weights(w), quantize_reference(w), "{w:?}");
            }
        }
    }

    #[test]
    fn slope_skip_gives_identical_weights() {
        let p = SplatParams::default();
        let sk = SlopeSkip::new(&p);
        for i in 0..=2000 {
            let y = i as f32 / 2000.0;
            let nrm = [(1.0 - y * y).max(0.0).sqrt(), y, 0.0];
            for &h in &[1.0f32, 20.0, 70.0] {
                let a = splat_weights(h, sk.degrees(nrm), 0.2, 0.0, 100.0, &p);
                let b = splat_weights(h, slope_degrees(nrm), 0.2, 0.0, 100.0, &p);
                assert_eq!(a, b, "y {y} h {h}");
            }
        }
    }

    #[test]
    fn fused_blur_and_quantise_equals_separate_passes() {
        let n = 37;
        let heights: Vec<f32> = (0..n * n).map(|i| ((i * 7919) % 97) as f32 - 10.0).collect();
        let normals = crate::normals::compute_normals(&heights, n, 2.0);
        let sand: Vec<f32> = (0..n * n).map(|i| (i % 5) as f32 / 4.0).collect();
        for passes in 0..4 {
            let p = SplatParams { blur_passes: passes, ..SplatParams::default() };
            let got = auto_splat(&heights, &normals, &sand, n, 72.0, 100.0, &p, 3, 7);
            let jitter = fbm_noise(n, 72.0, SPLAT_JITTER_SCALE, 3, 2.0, 0.5, 3, 7);
            let mut w: Vec<[f32; 4]> = (0..n * n)
                .map(|i| splat_weights(heights[i], slope_degrees(normals[i]), sand[i], p.jitter * jitter[i], 100.0, &p))
                .collect();
            for _ in 0..passes {
                box_blur_pass(&mut w, n);
            }
            let want: Vec<[u8; 4]> = w.iter().map(|&v| quantize_weights(v)).collect();
            assert_eq!(got, want, "passes {passes}");
        }
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
