//! [`WaterSummary`]: what installing an island's water needs from its maps (the depth texture
//! bytes and the per-kind counts), plain data made by the background generation.

use island_core::water::{Water, DRY};
use island_core::Island;

/// Water depth (metres) that byte 255 of the depth texture stands for.
pub const DEPTH_RANGE: f32 = 64.0;
/// Largest side of the depth texture (larger maps are subsampled).
const DEPTH_MAX_SIDE: usize = 1024;

/// Water depth per sample (`level - height` where wet, 0 where dry) in bytes of
/// [`DEPTH_RANGE`] / 255 metres, subsampled to at most [`DEPTH_MAX_SIDE`] per side: `(side,
/// bytes)`.
pub fn depth_bytes(island: &Island) -> (usize, Vec<u8>) {
    let (w, f) = (&island.water, &island.field);
    let n = f.resolution;
    let step = n.div_ceil(DEPTH_MAX_SIDE).max(1);
    let side = (n - 1) / step + 1;
    let mut out = vec![0u8; side * side];
    if w.kind.len() != n * n || w.level.len() != n * n || f.heights.len() != n * n {
        return (side, out);
    }
    let cols: Vec<usize> = (0..side).map(|i| (i * step).min(n - 1)).collect();
    for (j, row) in out.chunks_exact_mut(side).enumerate() {
        let r = (j * step).min(n - 1) * n..(j * step).min(n - 1) * n + n;
        let (kind, level, height) = (&w.kind[r.clone()], &w.level[r.clone()], &f.heights[r]);
        for (o, &x) in row.iter_mut().zip(&cols) {
            if kind[x] != DRY && level[x].is_finite() {
                *o = depth_byte(level[x] - height[x]);
            }
        }
    }
    (side, out)
}

/// `(d / DEPTH_RANGE * 255).round().clamp(0, 255)` as a byte (NaN: 0), rounded without a call
/// to `roundf` (the extension is built for baseline x86-64, which has no rounding instruction):
/// `v - trunc(v)` is exact for `0 <= v < 256`.
#[inline]
fn depth_byte(d: f32) -> u8 {
    let v = (d / DEPTH_RANGE * 255.0).clamp(0.0, 255.0);
    let t = v as u32;
    (t + (v - t as f32 >= 0.5) as u32) as u8
}

/// What installing an island's water needs from its maps, computed off the main thread by the
/// background generation (plain data): the water-depth texture bytes and the per-kind counts.
#[derive(Clone, Debug, Default)]
pub struct WaterSummary {
    /// Side of the depth texture, samples.
    pub side: usize,
    /// Depth texture bytes (R8, see [`depth_bytes`]).
    pub depth: Vec<u8>,
    /// Per-kind sample counts `[dry, river, lake, sea]`.
    pub counts: [usize; 4],
}

impl WaterSummary {
    /// The summary of `island`'s water.
    pub fn of(island: &Island) -> WaterSummary {
        let (side, depth) = depth_bytes(island);
        WaterSummary {
            side,
            depth,
            counts: kind_counts(&island.water),
        }
    }
}

/// Per-kind sample counts `[dry, river, lake, sea]` (other values are not counted).
pub fn kind_counts(water: &Water) -> [usize; 4] {
    // Byte counters per kind and lane, added up before they can overflow (255 rounds): one
    // pass of byte compares, vectorised even for baseline x86-64.
    const LANES: usize = 64;
    let mut total = [0usize; 4];
    for block in water.kind.chunks(LANES * 255) {
        let mut lanes = [[0u8; LANES]; 4];
        let mut rows = block.chunks_exact(LANES);
        for row in &mut rows {
            for (kind, lane) in lanes.iter_mut().enumerate() {
                for (l, &k) in lane.iter_mut().zip(row) {
                    *l += (k == kind as u8) as u8;
                }
            }
        }
        for (kind, lane) in lanes.iter().enumerate() {
            total[kind] += lane.iter().map(|&l| l as usize).sum::<usize>()
                + rows
                    .remainder()
                    .iter()
                    .filter(|&&k| k == kind as u8)
                    .count();
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use island_core::water::{LAKE, RIVER, SEA};

    /// The per-sample definitions the functions above compute faster.
    fn depth_bytes_reference(island: &Island) -> (usize, Vec<u8>) {
        let (w, f) = (&island.water, &island.field);
        let n = f.resolution;
        let step = n.div_ceil(DEPTH_MAX_SIDE).max(1);
        let side = (n - 1) / step + 1;
        let mut out = Vec::with_capacity(side * side);
        for j in 0..side {
            for i in 0..side {
                let k = (j * step).min(n - 1) * n + (i * step).min(n - 1);
                let d = if w.kind[k] != DRY && w.level[k].is_finite() {
                    w.level[k] - f.heights[k]
                } else {
                    0.0
                };
                out.push((d / DEPTH_RANGE * 255.0).round().clamp(0.0, 255.0) as u8);
            }
        }
        (side, out)
    }

    #[test]
    fn depth_bytes_and_kind_counts_equal_their_per_sample_definitions() {
        // A real island (rivers, lakes, sea; 2049² is subsampled to 1025 per side)...
        for res in [257, 2049] {
            let p = island_core::IslandParams {
                resolution: res,
                ..Default::default()
            };
            let island = island_core::generate(&p).unwrap();
            assert_eq!(
                depth_bytes(&island),
                depth_bytes_reference(&island),
                "{res}"
            );
            let mut want = [0usize; 4];
            for &k in &island.water.kind {
                want[k as usize] += 1;
            }
            assert!(want[1] > 0 && want[2] > 0 && want[3] > 0, "{want:?}");
            assert_eq!(kind_counts(&island.water), want, "{res}");
        }
        // ...and every depth byte's rounding edge, NaN and values out of range.
        let mut island = island_core::generate(&island_core::IslandParams {
            resolution: 129,
            ..Default::default()
        })
        .unwrap();
        let n = 129;
        let mut depths = vec![f32::NAN, -1.0, -0.0, 0.0, 1e9, f32::INFINITY, 64.0, 63.99];
        for b in 0..=256 {
            let d = (b as f32 + 0.5) * DEPTH_RANGE / 255.0;
            depths.extend([
                d,
                f32::from_bits(d.to_bits() - 1),
                f32::from_bits(d.to_bits() + 1),
            ]);
        }
        for (k, &d) in depths.iter().cycle().take(n * n).enumerate() {
            island.water.kind[k] = [RIVER, LAKE, SEA, DRY, 7][k % 5];
            island.field.heights[k] = 0.0;
            island.water.level[k] = if k % 7 == 0 { f32::NAN } else { d };
        }
        assert_eq!(depth_bytes(&island), depth_bytes_reference(&island));
        // Value 7 is no kind and is not counted; 129² samples are more than one block of
        // byte counters (64 · 255) and not a whole number of rows of 64.
        let mut want = [0usize; 4];
        for &k in &island.water.kind {
            if let Some(c) = want.get_mut(k as usize) {
                *c += 1;
            }
        }
        assert_eq!(want.iter().sum::<usize>(), n * n - n * n / 5);
        assert_eq!(kind_counts(&island.water), want);
    }
}
