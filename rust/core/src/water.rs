//! Where the island holds water: the sea, lakes and rivers, per heightfield sample.
//!
//! Built by the pipeline from the final heights and (when the drainage stage runs) its lakes and
//! rivers; read by the Godot layer for the water meshes, `get_water_level_at` and
//! `get_water_image`, by the CLI for `water.png`, and by splat and scatter (wetness).

use serde::{Deserialize, Serialize};

/// [`Water::kind`] of a dry sample.
pub const DRY: u8 = 0;
/// [`Water::kind`] of a river sample.
pub const RIVER: u8 = 1;
/// [`Water::kind`] of a lake sample.
pub const LAKE: u8 = 2;
/// [`Water::kind`] of a sea sample (below sea level and connected to the open sea or the map
/// border).
pub const SEA: u8 = 3;

/// Water per sample, row-major `z * resolution + x` like the heights.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Water {
    /// Samples per side (0 when unknown, e.g. an imported heightmap before drainage).
    pub resolution: usize,
    /// Water surface height, metres; NaN where the sample is dry. The sea is at 0.
    pub level: Vec<f32>,
    /// What covers the sample: [`DRY`], [`RIVER`], [`LAKE`] or [`SEA`].
    pub kind: Vec<u8>,
}

impl Water {
    /// Sea wherever the ground is below sea level (0 m), dry elsewhere: what an island without
    /// a drainage stage holds.
    pub fn sea_only(heights: &[f32], resolution: usize) -> Water {
        let kind: Vec<u8> = heights
            .iter()
            .map(|&h| if h < 0.0 { SEA } else { DRY })
            .collect();
        let level = kind
            .iter()
            .map(|&k| if k == SEA { 0.0 } else { f32::NAN })
            .collect();
        Water {
            resolution,
            level,
            kind,
        }
    }

    /// Whether sample `i` is under water.
    pub fn is_wet(&self, i: usize) -> bool {
        self.kind.get(i).is_some_and(|&k| k != DRY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sea_only_marks_samples_below_sea_level() {
        let w = Water::sea_only(&[-1.0, 0.0, 2.0, -0.5], 2);
        assert_eq!(w.kind, vec![SEA, DRY, DRY, SEA]);
        assert_eq!(w.level[0], 0.0);
        assert!(w.level[1].is_nan() && w.level[2].is_nan());
        assert!(w.is_wet(3) && !w.is_wet(1) && !w.is_wet(9));
    }
}
