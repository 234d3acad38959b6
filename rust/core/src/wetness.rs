//! Wetness: the auto splat near rivers and lakes and far from them.
//!
//! Runs after [`crate::splat::auto_splat`] (in the splat stage; the GPU backend runs its twin,
//! `shaders/wetness.wgsl`) over its bytes, from the water map of the drainage stage:
//!
//! * **Beds** — river and lake samples (under water) turn to [`SAND`] (the sand and gravel of a
//!   riverbed, seen through shallow water) by [`BED_SAND`].
//! * **Banks** — dry samples near the water get greener: a share `wet = exp(−e / WET_SCALE)` of
//!   their sand (above the beach) and half that share of their rock goes to [`GRASS`], `e` being
//!   the distance to the nearest river or lake sample (exact EDT, metres).
//! * **Deltas** — where a river reaches the beach band (below twice `sand_height`), its banks
//!   are sandy instead: the beaches at river mouths.
//! * **Dry ground** — far from any inland water (`e` from [`DRY_FROM`] to [`DRY_FULL`] metres),
//!   steep grass turns to bare rock: slopes from `rock_slope − DRY_SLOPE_BAND` degrees on lose up
//!   to half their grass to rock.
//!
//! Everything is scaled by [`crate::params::SplatParams::wetness`] (0 leaves the splat as it
//! is). An island without inland water is left as it is. Per sample, then re-quantised to bytes
//! that sum to 255 (like the splat): deterministic, the same bits on any thread count.

use crate::det_math;
use crate::distance::distance_to_coast_within;
use crate::grid::{smoothstep, MAX_ROWS_PER_TASK};
use crate::params::SplatParams;
use crate::splat::{quantize_planar_rows, SlopeSkip, GRASS, ROCK, SAND, SNOW};
use crate::water::{Water, LAKE, RIVER};
use rayon::prelude::*;

/// Distance over which banks dry out (e-folding), metres.
pub const WET_SCALE: f32 = 10.0;
/// Share of a bed sample's weight that turns to sand.
pub const BED_SAND: f32 = 0.85;
/// Distance to water from which ground starts to dry out, metres.
pub const DRY_FROM: f32 = 60.0;
/// Distance to water at which ground is fully dry, metres.
pub const DRY_FULL: f32 = 220.0;
/// Dry ground: slopes from `rock_slope − DRY_SLOPE_BAND` degrees up lose grass to rock.
pub const DRY_SLOPE_BAND: f32 = 14.0;

/// Apply wetness to `splat` (bytes of [`crate::splat::auto_splat`]); `heights`, `normals` and
/// `water` are the island's (`n × n`, `spacing` metres apart). See the
/// [module documentation](self).
pub fn apply_wetness(
    splat: &mut [[u8; 4]],
    heights: &[f32],
    normals: &[[f32; 3]],
    water: &Water,
    spacing: f32,
    p: &SplatParams,
) {
    if normals.len() != water.resolution * water.resolution {
        return;
    }
    wetness(splat, heights, water, spacing, p, |i| normals[i][1]);
}

/// [`apply_wetness`] with the normals [`crate::normals::compute_normals`] gives for `heights`
/// (`normal_spacing` metres apart), each computed where it is needed (dry land above the
/// beach) instead of read from a map: the same bits, without the normal map alive.
pub(crate) fn apply_wetness_from_heights(
    splat: &mut [[u8; 4]],
    heights: &[f32],
    normal_spacing: f32,
    water: &Water,
    spacing: f32,
    p: &SplatParams,
) {
    let n = water.resolution;
    wetness(splat, heights, water, spacing, p, |i| {
        crate::normals::normal_at_sample(heights, n, normal_spacing, i % n, i / n)[1]
    });
}

/// [`apply_wetness`] or [`apply_wetness_from_heights`], as `normals` says (the splat's choice
/// of normals, [`crate::splat::Normals`]).
pub(crate) fn apply_wetness_with(
    splat: &mut [[u8; 4]],
    heights: &[f32],
    normals: crate::splat::Normals,
    water: &Water,
    spacing: f32,
    p: &SplatParams,
) {
    match normals {
        crate::splat::Normals::Map(m) => apply_wetness(splat, heights, m, water, spacing, p),
        crate::splat::Normals::FromHeights { spacing: ns } => {
            apply_wetness_from_heights(splat, heights, ns, water, spacing, p)
        }
    }
}

/// [`apply_wetness`] with the normal's y component at sample `i` given by `normal_y(i)`.
fn wetness(
    splat: &mut [[u8; 4]],
    heights: &[f32],
    water: &Water,
    spacing: f32,
    p: &SplatParams,
    normal_y: impl Fn(usize) -> f32 + Sync,
) {
    let n = water.resolution;
    let strength = p.wetness.clamp(0.0, 1.0);
    let len = n * n;
    if strength == 0.0
        || n == 0
        || splat.len() != len
        || heights.len() != len
        || water.kind.len() != len
    {
        return;
    }
    let inland: Vec<u8> = water
        .kind
        .par_iter()
        .map(|&k| (k == RIVER || k == LAKE) as u8)
        .collect();
    if !inland.par_iter().any(|&w| w != 0) {
        return;
    }
    // Positive inside the water, minus the distance to it outside.
    let dist = distance_to_coast_within(&inland, n, spacing, DRY_FULL);
    let beach = 2.0 * p.sand_height;
    let dry_slope = p.rock_slope - DRY_SLOPE_BAND;
    let slopes = SlopeSkip::between(dry_slope, p.rock_slope);
    // Row by row: the new weights of the samples that change, gathered planar, then
    // re-quantised together (vectorised) and written back.
    splat
        .par_chunks_mut(n)
        .enumerate()
        .with_max_len(MAX_ROWS_PER_TASK)
        .for_each_init(
            || {
                (
                    vec![0.0f32; 4 * n],
                    Vec::with_capacity(n),
                    vec![[0u8; 4]; n],
                )
            },
            |(planar, at, bytes), (z, row)| {
                at.clear();
                for (x, s) in row.iter().enumerate() {
                    let i = z * n + x;
                    let h = heights[i];
                    if h < 0.0 && inland[i] == 0 {
                        continue; // sea floor
                    }
                    let w0 = s.map(|b| b as f32 * (1.0 / 255.0));
                    let mut w = w0;
                    if inland[i] != 0 {
                        let t = BED_SAND * strength;
                        for (k, v) in w.iter_mut().enumerate() {
                            *v = *v * (1.0 - t) + if k == SAND { t } else { 0.0 };
                        }
                    } else {
                        let e = -dist[i];
                        let wet = det_math::exp(-e / WET_SCALE) * strength;
                        if h < beach {
                            // River mouths: sandy banks.
                            let t = wet * (1.0 - w[SNOW]);
                            let moved = (w[GRASS] + w[ROCK] * 0.5) * t;
                            w[GRASS] -= w[GRASS] * t;
                            w[ROCK] -= w[ROCK] * 0.5 * t;
                            w[SAND] += moved;
                        } else {
                            let from_sand = w[SAND] * wet;
                            let from_rock = w[ROCK] * 0.5 * wet;
                            w[SAND] -= from_sand;
                            w[ROCK] -= from_rock;
                            w[GRASS] += from_sand + from_rock;
                            // Near the water (`e` up to DRY_FROM) and on gentle slopes `dry` is 0
                            // and nothing moves, so the normal and its `acos` are only computed
                            // beyond DRY_FROM, and only where the slope rule does not saturate
                            // (the same bits).
                            let far = smoothstep(DRY_FROM, DRY_FULL, e);
                            if far > 0.0 {
                                let slope = slopes.slope(normal_y(i));
                                let dry = far
                                    * smoothstep(dry_slope, p.rock_slope, slope)
                                    * 0.5
                                    * strength;
                                let to_rock = w[GRASS] * dry;
                                w[GRASS] -= to_rock;
                                w[ROCK] += to_rock;
                            }
                        }
                    }
                    if w != w0 {
                        let j = at.len();
                        for (k, &v) in w.iter().enumerate() {
                            planar[k * n + j] = v;
                        }
                        at.push(x);
                    }
                }
                let m = at.len();
                quantize_planar_rows(planar, n, &mut bytes[..m]);
                for (&x, &q) in at.iter().zip(bytes.iter()) {
                    row[x] = q;
                }
            },
        );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::water::{DRY, SEA};

    /// Splat, heights, normals and water of a test scene.
    type Scene = (Vec<[u8; 4]>, Vec<f32>, Vec<[f32; 3]>, Water);

    /// A flat 10 m plain crossed by a river along x = 20, with a steep hill far from it.
    fn scene(n: usize) -> Scene {
        let mut heights = vec![10.0f32; n * n];
        let mut normals = vec![[0.0, 1.0, 0.0]; n * n];
        let mut kind = vec![DRY; n * n];
        let mut level = vec![f32::NAN; n * n];
        for z in 0..n {
            let i = z * n + 20;
            kind[i] = RIVER;
            level[i] = 10.5;
            heights[i] = 9.0;
            for x in 200..n {
                // Steep ground (35°) far from the river.
                normals[z * n + x] = [0.574, 0.819, 0.0];
            }
            kind[z * n] = SEA;
            heights[z * n] = -1.0;
        }
        let splat = vec![[40, 175, 40, 0]; n * n];
        let water = Water {
            resolution: n,
            level,
            kind,
        };
        (splat, heights, normals, water)
    }

    #[test]
    fn beds_sandy_banks_green_far_slopes_rocky_sea_untouched() {
        let n = 257;
        let (mut splat, heights, normals, water) = scene(n);
        let before = splat.clone();
        let p = SplatParams::default();
        apply_wetness(&mut splat, &heights, &normals, &water, 1.0, &p);
        let at = |x: usize| splat[128 * n + x];
        assert!(at(20)[SAND] > 200, "bed {:?}", at(20));
        // Banks: greener next to the river than 40 m away.
        assert!(at(22)[GRASS] > at(60)[GRASS], "{:?} {:?}", at(22), at(60));
        assert!(at(22)[ROCK] < before[0][ROCK]);
        // Far from water, steep ground dries to rock.
        assert!(at(250)[ROCK] > before[0][ROCK] + 30, "{:?}", at(250));
        // The sea floor is left alone; every sample still sums to 255.
        assert_eq!(splat[128 * n], before[128 * n]);
        assert!(splat
            .iter()
            .all(|s| s.iter().map(|&b| b as u32).sum::<u32>() == 255));
        // Strength 0: nothing changes; no inland water: nothing changes.
        let mut s0 = before.clone();
        let off = SplatParams {
            wetness: 0.0,
            ..Default::default()
        };
        apply_wetness(&mut s0, &heights, &normals, &water, 1.0, &off);
        assert_eq!(s0, before);
        let dry = Water::sea_only(&heights, n);
        let mut s1 = before.clone();
        apply_wetness(&mut s1, &heights, &normals, &dry, 1.0, &p);
        assert_eq!(s1, before);
    }

    /// Normals computed from the heights where needed give the bytes of the normal map.
    #[test]
    fn normals_from_heights_equal_the_normal_map() {
        let n = 257;
        let (splat, mut heights, _, water) = scene(n);
        for (i, h) in heights.iter_mut().enumerate() {
            if *h > 0.0 {
                // Rolling hills, steep in places (every slope band).
                *h += ((i * 7919) % 23) as f32 * 0.4 + (i % n) as f32 * 0.05;
            }
        }
        let spacing = 0.9;
        let normals = crate::normals::compute_normals(&heights, n, spacing);
        let p = SplatParams::default();
        let mut want = splat.clone();
        apply_wetness(&mut want, &heights, &normals, &water, 1.0, &p);
        assert_ne!(want, splat);
        let mut got = splat;
        apply_wetness_from_heights(&mut got, &heights, spacing, &water, 1.0, &p);
        assert_eq!(got, want);
    }

    /// The definition [`wetness`] is pinned to: every sample on its own, the normal and its
    /// `acos` always computed, each changed sample quantised by `quantize_weights`.
    fn wetness_reference(
        splat: &mut [[u8; 4]],
        heights: &[f32],
        normals: &[[f32; 3]],
        water: &Water,
        spacing: f32,
        p: &SplatParams,
    ) {
        let n = water.resolution;
        let strength = p.wetness.clamp(0.0, 1.0);
        let inland: Vec<u8> = water
            .kind
            .iter()
            .map(|&k| (k == RIVER || k == LAKE) as u8)
            .collect();
        if strength == 0.0 || !inland.iter().any(|&w| w != 0) {
            return;
        }
        let dist = distance_to_coast_within(&inland, n, spacing, DRY_FULL);
        let (beach, dry_slope) = (2.0 * p.sand_height, p.rock_slope - DRY_SLOPE_BAND);
        for (i, s) in splat.iter_mut().enumerate() {
            let h = heights[i];
            if h < 0.0 && inland[i] == 0 {
                continue;
            }
            let w0 = s.map(|b| b as f32 * (1.0 / 255.0));
            let mut w = w0;
            if inland[i] != 0 {
                let t = BED_SAND * strength;
                for (k, v) in w.iter_mut().enumerate() {
                    *v = *v * (1.0 - t) + if k == SAND { t } else { 0.0 };
                }
            } else {
                let e = -dist[i];
                let wet = det_math::exp(-e / WET_SCALE) * strength;
                if h < beach {
                    let t = wet * (1.0 - w[SNOW]);
                    let moved = (w[GRASS] + w[ROCK] * 0.5) * t;
                    w[GRASS] -= w[GRASS] * t;
                    w[ROCK] -= w[ROCK] * 0.5 * t;
                    w[SAND] += moved;
                } else {
                    let from_sand = w[SAND] * wet;
                    let from_rock = w[ROCK] * 0.5 * wet;
                    w[SAND] -= from_sand;
                    w[ROCK] -= from_rock;
                    w[GRASS] += from_sand + from_rock;
                    let slope = det_math::acos(normals[i][1].clamp(-1.0, 1.0)).to_degrees();
                    let dry = smoothstep(DRY_FROM, DRY_FULL, e)
                        * smoothstep(dry_slope, p.rock_slope, slope)
                        * 0.5
                        * strength;
                    let to_rock = w[GRASS] * dry;
                    w[GRASS] -= to_rock;
                    w[ROCK] += to_rock;
                }
            }
            if w != w0 {
                *s = crate::splat::quantize_weights(w);
            }
        }
    }

    /// Row by row, with the skipped normals and the vectorised quantiser: the definition's
    /// bytes, on ground of every slope, near and far from the water, beaches and beds, with
    /// mixed splat weights (AVX2 and baseline copies both).
    #[test]
    fn rows_equal_the_per_sample_definition() {
        use crate::hash::{hash_u32, unit};
        let n = 300;
        let (_, mut heights, _, water) = scene(n);
        for (i, h) in heights.iter_mut().enumerate() {
            if *h > 0.0 {
                // Plains, beaches, hills and cliffs: every slope band and height band.
                let x = (i % n) as f32;
                *h = 1.0 + unit(hash_u32(i as u32)) * 3.0 + (x * 0.07).sin().abs() * x * 0.6;
            }
        }
        let splat: Vec<[u8; 4]> = (0..n * n)
            .map(|i| {
                let a = (hash_u32(i as u32 ^ 0x5bd1) % 256) as u8;
                let b = (hash_u32(i as u32 ^ 0x1234) % (256 - a as u32)) as u8;
                [a, b, 255 - a - b, 0]
            })
            .collect();
        let spacing = 1.3;
        let normals = crate::normals::compute_normals(&heights, n, spacing);
        for wetness in [1.0, 0.4] {
            let p = SplatParams {
                wetness,
                ..Default::default()
            };
            let mut want = splat.clone();
            wetness_reference(&mut want, &heights, &normals, &water, 1.0, &p);
            assert_ne!(want, splat);
            for scalar in [false, true] {
                crate::simd::set_force_scalar(scalar);
                let mut got = splat.clone();
                apply_wetness_from_heights(&mut got, &heights, spacing, &water, 1.0, &p);
                crate::simd::set_force_scalar(false);
                assert_eq!(got, want, "wetness {wetness}, scalar {scalar}");
            }
        }
    }

    #[test]
    fn river_mouths_get_sandy_banks() {
        let n = 129;
        let (mut splat, mut heights, normals, water) = scene(n);
        for h in heights.iter_mut() {
            if *h > 0.0 {
                *h = 2.0; // below 2 × sand_height: the beach band
            }
        }
        let before = splat.clone();
        apply_wetness(
            &mut splat,
            &heights,
            &normals,
            &water,
            1.0,
            &SplatParams::default(),
        );
        assert!(splat[64 * n + 22][SAND] > before[0][SAND] + 60);
    }
}
