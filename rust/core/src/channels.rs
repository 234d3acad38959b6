//! River channels carved along the flow paths of a [`Drainage`].
//!
//! The bed of each river sample is its water surface (the filled surface) minus the channel
//! depth, lowered further to the bed of any upstream sample (so beds never rise downstream) and
//! never below the level of the lake or sea the river flows into. Around the beds the channel
//! keeps its bed height across half its width and then rises with [`CarveSettings::bank_slope`]
//! over [`CarveSettings::bank_width`] (each river sample stamps that profile on a disk; the
//! lowest stamp wins). Carving only
//! lowers, shallow pits are filled first ([`Drainage::ground_at`]) and lake beds are left alone:
//! afterwards every dry sample has a non-ascending path to a lake or the sea.

use crate::drainage::{is_sea, Drainage, NONE};

/// Default [`CarveSettings::bank_slope`].
pub const DEFAULT_BANK_SLOPE: f32 = 0.6;
/// Default [`CarveSettings::bank_width`], metres.
pub const DEFAULT_BANK_WIDTH: f32 = 6.0;

/// Settings of [`carve_rivers`].
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct CarveSettings {
    /// Whether channels are carved (shallow pits are filled either way). Default true.
    pub enabled: bool,
    /// Rise of the banks per metre away from the channel, 0.05..=5 (0.6 ≈ 31°). Default 0.6.
    pub bank_slope: f32,
    /// Width of the banks on each side of the channel, metres, 0..=100: beyond it the
    /// terrain is left alone. Default 6.
    pub bank_width: f32,
}

impl Default for CarveSettings {
    fn default() -> Self {
        CarveSettings {
            enabled: true,
            bank_slope: DEFAULT_BANK_SLOPE,
            bank_width: DEFAULT_BANK_WIDTH,
        }
    }
}

impl CarveSettings {
    /// Check every field; the first problem found is returned.
    pub fn validate(&self) -> Result<(), String> {
        if !(0.05..=5.0).contains(&self.bank_slope) {
            return Err(format!(
                "carve: bank_slope = {} is outside 0.05..=5",
                self.bank_slope
            ));
        }
        if !(0.0..=100.0).contains(&self.bank_width) {
            return Err(format!(
                "carve: bank_width = {} is outside 0..=100",
                self.bank_width
            ));
        }
        Ok(())
    }
}

/// What [`carve_rivers`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CarveReport {
    /// Samples raised by pit filling.
    pub filled_samples: usize,
    /// Samples lowered by channels and banks.
    pub carved_samples: usize,
    /// Deepest cut below the filled ground, metres.
    pub max_cut: f32,
}

/// Fill the shallow pits of `heights` and carve the rivers of `drainage` into it (see the
/// [module documentation](self)). `drainage` must have been computed from these `heights`.
pub fn carve_rivers(
    heights: &mut [f32],
    drainage: &Drainage,
    settings: &CarveSettings,
) -> CarveReport {
    let d = drainage;
    let n = d.n;
    assert_eq!(heights.len(), n * n, "heights must hold n² samples");
    let mut report = CarveReport::default();
    for (i, h) in heights.iter_mut().enumerate() {
        if d.lake_id[i] == NONE && d.filled[i] > *h {
            *h = d.filled[i];
            report.filled_samples += 1;
        }
    }
    if !settings.enabled || d.rivers.is_empty() {
        return report;
    }
    let len = n * n;
    // Beds: target depth, then never above an upstream bed, never below the base level.
    let mut bed = vec![f32::INFINITY; len];
    let mut half = vec![0.0f32; len];
    for r in &d.rivers {
        let i = r.index as usize;
        bed[i] = d.filled[i] - r.depth;
        half[i] = 0.5 * r.width;
    }
    for r in d.rivers.iter().rev() {
        let i = r.index as usize;
        let rc = d.receivers[i] as usize;
        if bed[rc].is_finite() {
            bed[rc] = bed[rc].min(bed[i]);
        }
    }
    let mut base = vec![f32::NEG_INFINITY; len];
    for r in &d.rivers {
        let i = r.index as usize;
        let rc = d.receivers[i] as usize;
        base[i] = if d.lake_id[rc] != NONE {
            d.lakes[d.lake_id[rc] as usize].level
        } else if is_sea(d.filled[rc], d.sea_level) {
            d.sea_level
        } else if bed[rc].is_finite() {
            base[rc]
        } else {
            d.filled[rc]
        };
        bed[i] = bed[i].max(base[i]);
    }
    // Channel and banks: each river sample stamps `bed + slope·max(0, r − width/2)` over a disk
    // of radius `width/2 + bank_width`; the lowest stamp wins. A stamped sample always has a
    // neighbour one step towards the stamping river sample that is at least as low.
    let (slope, sp) = (settings.bank_slope, d.spacing);
    let mut f = vec![f32::INFINITY; len];
    for r in &d.rivers {
        let k = r.index as usize;
        let (kx, kz) = ((k % n) as isize, (k / n) as isize);
        let half_w = 0.5 * r.width;
        let reach = half_w + settings.bank_width;
        let rc = (reach / sp).floor() as isize;
        let b = bed[k];
        for dz in -rc..=rc {
            let z = kz + dz;
            if z < 0 || z >= n as isize {
                continue;
            }
            for dx in -rc..=rc {
                let x = kx + dx;
                if x < 0 || x >= n as isize {
                    continue;
                }
                let dist = ((dx * dx + dz * dz) as f32).sqrt() * sp;
                if dist > reach {
                    continue;
                }
                let v = b + slope * (dist - half_w).max(0.0);
                let i = z as usize * n + x as usize;
                if v < f[i] {
                    f[i] = v;
                }
            }
        }
    }
    for i in 0..len {
        if d.lake_id[i] != NONE || f[i] >= heights[i] {
            continue;
        }
        report.max_cut = report.max_cut.max(heights[i] - f[i]);
        heights[i] = f[i];
        report.carved_samples += 1;
    }
    // Beds never rise downstream, even where a larger river's banks cut below a tributary.
    for r in d.rivers.iter().rev() {
        let i = r.index as usize;
        let rc = d.receivers[i] as usize;
        if bed[rc].is_finite() && heights[rc] > heights[i] && d.lake_id[rc] == NONE {
            heights[rc] = heights[i];
        }
    }
    report
}
