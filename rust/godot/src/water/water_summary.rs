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
    let ok = w.kind.len() == n * n && w.level.len() == n * n;
    let mut out = Vec::with_capacity(side * side);
    for j in 0..side {
        for i in 0..side {
            let k = (j * step).min(n - 1) * n + (i * step).min(n - 1);
            let d = if ok && w.kind[k] != DRY && w.level[k].is_finite() {
                w.level[k] - f.heights[k]
            } else {
                0.0
            };
            out.push((d / DEPTH_RANGE * 255.0).round().clamp(0.0, 255.0) as u8);
        }
    }
    (side, out)
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

/// Per-kind sample counts `[dry, river, lake, sea]`.
pub fn kind_counts(water: &Water) -> [usize; 4] {
    // One vectorisable count per kind (other values are not counted).
    std::array::from_fn(|kind| water.kind.iter().filter(|&&k| k as usize == kind).count())
}
