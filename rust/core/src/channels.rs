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
//!
//! Every step is a min, a max or a copy along the receivers (the bed: the least target bed
//! upstream, at least the base level downstream; the stamps: the lowest wins; the final pass:
//! the least height upstream along the river), so the result does not depend on the order the
//! rivers are visited in: the GPU twin (`shaders/channels.wgsl`) walks down the rivers with
//! atomic minima and gives the same bits.

use crate::drainage::{is_sea, Drainage, NONE};
use crate::schema::{check_all, Check, ParamSpec, Value};
use rayon::prelude::*;
use std::collections::HashMap;

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
    /// The parameters' schema ([`crate::schema`]; not exposed by the node).
    pub const PARAMS: &'static [ParamSpec<CarveSettings>] = &[
        ParamSpec::boolean("enabled", true, "FLOW: whether channels are carved (shallow pits are filled either way).", |s: &Self| Value::Bool(s.enabled)),
        ParamSpec::float("bank_slope", DEFAULT_BANK_SLOPE, Check::Range(0.05, 5.0), "m/m", "FLOW: rise of the channel banks per metre away from the channel (0.6 ≈ 31°).", |s: &Self| Value::Float(s.bank_slope)),
        ParamSpec::float("bank_width", DEFAULT_BANK_WIDTH, Check::Range(0.0, 100.0), "m", "FLOW: width of the banks on each side of the channel; beyond it the terrain is left alone.", |s: &Self| Value::Float(s.bank_width)),
    ];

    /// Check every field ([`CarveSettings::PARAMS`]); the first problem found is returned.
    pub fn validate(&self) -> Result<(), String> {
        check_all(Self::PARAMS, self).map_err(|e| format!("carve: {} {}", e.field, e.message))
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

/// Rows of `heights` one parallel task of [`carve_rivers`] stamps.
const STAMP_BAND_ROWS: usize = 32;

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
    // The pits filled outside lakes: where `filled` is above the ground (only the samples the
    // drainage raised, when it lists them).
    let raise = |i: usize, h: &mut f32| {
        let raised = d.lake_id[i] == NONE && d.filled[i] > *h;
        if raised {
            *h = d.filled[i];
        }
        raised as usize
    };
    let filled_samples = match &d.raised {
        Some(raised) => raised
            .iter()
            .map(|&i| raise(i as usize, &mut heights[i as usize]))
            .sum(),
        None => heights
            .par_iter_mut()
            .enumerate()
            .map(|(i, h)| raise(i, h))
            .sum(),
    };
    let mut report = CarveReport {
        filled_samples,
        ..Default::default()
    };
    if !settings.enabled || d.rivers.is_empty() {
        return report;
    }
    // Per river sample (in `d.rivers` order): bed height. Target depth, then never above an
    // upstream bed, never below the base level (the lake or sea the river flows into).
    let pos: HashMap<u32, usize> = d
        .rivers
        .iter()
        .enumerate()
        .map(|(k, r)| (r.index, k))
        .collect();
    let rcv_pos = |k: usize| pos.get(&d.receivers[d.rivers[k].index as usize]).copied();
    let mut bed: Vec<f32> = d
        .rivers
        .iter()
        .map(|r| d.filled[r.index as usize] - r.depth)
        .collect();
    for k in (0..d.rivers.len()).rev() {
        if let Some(q) = rcv_pos(k) {
            bed[q] = bed[q].min(bed[k]);
        }
    }
    let mut base = vec![f32::NEG_INFINITY; d.rivers.len()];
    for k in 0..d.rivers.len() {
        let rc = d.receivers[d.rivers[k].index as usize] as usize;
        base[k] = if d.lake_id[rc] != NONE {
            d.lakes[d.lake_id[rc] as usize].level
        } else if is_sea(d.filled[rc], d.sea_level) {
            d.sea_level
        } else if let Some(q) = rcv_pos(k) {
            base[q]
        } else {
            d.filled[rc]
        };
        bed[k] = bed[k].max(base[k]);
    }
    // Channel and banks: each river sample stamps `bed + slope·max(0, r − width/2)` over a disk
    // of radius `width/2 + bank_width`; the lowest stamp wins. A stamped sample always has a
    // neighbour one step towards the stamping river sample that is at least as low.
    let (slope, sp) = (settings.bank_slope, d.spacing);
    // Disk radius in samples of each river sample.
    let radius: Vec<isize> = d
        .rivers
        .iter()
        .map(|r| ((0.5 * r.width + settings.bank_width) / sp).floor() as isize)
        .collect();
    let max_radius = radius.iter().copied().max().unwrap_or(0).max(0) as usize;
    // River samples by row (ascending `k` within a row).
    let mut by_row: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (k, r) in d.rivers.iter().enumerate() {
        by_row[r.index as usize / n].push(k as u32);
    }
    // Distance (metres) of a sample `dx`, `dz` cells from the stamping one: `dist[|dz| ·
    // stride + |dx|]` (the same rounding as computing it per sample).
    let stride = max_radius + 1;
    let dist: Vec<f32> = (0..stride * stride)
        .map(|k| {
            let (dx, dz) = ((k % stride) as isize, (k / stride) as isize);
            ((dx * dx + dz * dz) as f32).sqrt() * sp
        })
        .collect();
    // Samples carved (by the stamps, then by the last pass), with their height before.
    // Zero-initialised: only the pages near rivers are touched.
    let mut carved = vec![false; n * n];
    // Bands of rows in parallel, each stamped by the river samples whose disks reach it: the
    // lowest stamp wins whatever the order, so the result is the sequential one.
    let band = STAMP_BAND_ROWS.min(n).max(1);
    let mut before: Vec<(u32, f32)> = heights
        .par_chunks_mut(band * n)
        .zip(carved.par_chunks_mut(band * n))
        .enumerate()
        .flat_map_iter(|(bi, (rows, marks))| {
            let z0 = bi * band;
            let z1 = z0 + rows.len() / n;
            let mut first = Vec::new();
            let (mut prof, mut chord) = (Vec::new(), Vec::new());
            let rows_near = z0.saturating_sub(max_radius)..(z1 + max_radius).min(n);
            for (kz, ks) in by_row[rows_near.clone()].iter().enumerate() {
                let kz = kz + rows_near.start;
                for &k in ks {
                    let k = k as usize;
                    let r = &d.rivers[k];
                    let rc = radius[k];
                    if rc < 0 {
                        continue;
                    }
                    let (kx, kz) = ((r.index as usize % n) as isize, kz as isize);
                    let half_w = 0.5 * r.width;
                    let reach = half_w + settings.bank_width;
                    let b = bed[k];
                    let zs = (kz - rc).max(z0 as isize);
                    let ze = (kz + rc).min(z1 as isize - 1);
                    for z in zs..=ze {
                        let dz = z - kz;
                        let row = (z as usize - z0) * n;
                        // The disk's half chord on this row: the distances grow with |dx|.
                        let tab = &dist[dz.unsigned_abs() * stride..][..=rc as usize];
                        let Some(xr) = tab.iter().rposition(|&d| d <= reach) else {
                            continue;
                        };
                        let xr = xr as isize;
                        let (xs, xe) = ((kx - xr).max(0), (kx + xr).min(n as isize - 1));
                        // The stamp along the chord (`prof[|dx|]`, the same arithmetic as per
                        // sample), laid out over xs..=xe. A stamp is never below its bed when
                        // the slope is not negative, so ground at or below the bed stays.
                        prof.clear();
                        prof.extend(
                            tab[..=xr as usize]
                                .iter()
                                .map(|&dd| b + slope * (dd - half_w).max(0.0)),
                        );
                        let (left, right) = ((kx - xs) as usize, (xe - kx) as usize);
                        chord.clear();
                        chord.extend(prof[1..=left].iter().rev());
                        chord.extend(&prof[..=right]);
                        let seg = &mut rows[row + xs as usize..=row + xe as usize];
                        // Eight samples at a time: most are already at or below this stamp.
                        for (c, (hs, vs)) in seg.chunks_mut(8).zip(chord.chunks(8)).enumerate() {
                            if !hs.iter().zip(vs).fold(false, |a, (&h, &v)| a | (v < h)) {
                                continue;
                            }
                            for (j, (h, &v)) in hs.iter_mut().zip(vs).enumerate() {
                                let x = xs as usize + c * 8 + j;
                                let i = z as usize * n + x;
                                if v < *h && d.lake_id[i] == NONE {
                                    let li = row + x;
                                    if !marks[li] {
                                        marks[li] = true;
                                        first.push((i as u32, *h));
                                    }
                                    *h = v;
                                }
                            }
                        }
                    }
                }
            }
            first
        })
        .collect();
    // Beds never rise downstream, even where a larger river's banks cut below a tributary.
    for k in (0..d.rivers.len()).rev() {
        let i = d.rivers[k].index as usize;
        let rc = d.receivers[i] as usize;
        if pos.contains_key(&(rc as u32)) && heights[rc] > heights[i] && d.lake_id[rc] == NONE {
            if !carved[rc] {
                carved[rc] = true;
                before.push((rc as u32, heights[rc]));
            }
            heights[rc] = heights[i];
        }
    }
    report.carved_samples = before.len();
    report.max_cut = before
        .iter()
        .map(|&(i, h)| h - heights[i as usize])
        .fold(0.0, f32::max);
    report
}
