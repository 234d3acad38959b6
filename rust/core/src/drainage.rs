//! Drainage: depression handling, flow routing, flow accumulation, lakes and rivers.
//!
//! * **Depressions** — Priority-Flood (Barnes, Lehman & Mulla 2014, "Priority-Flood: An optimal
//!   depression-filling and watershed-labeling algorithm", Computers & Geosciences 62), the
//!   "improved" variant with a plain queue for cells inside depressions, and only the rims of
//!   depressions in the priority queue: the rest is settled by an ascending search from the
//!   outlets (see `fill`). The sea (samples at or below `sea_level`) and the map border are the
//!   outlets. The filled value of a sample is the lowest height at which water standing on it
//!   can leave the map (the minimax path height), defined without any order (see
//!   [`depression_fill`]); so are the depressions' labels (see `flood`).
//! * **Routing** — steepest descent (D8, slope = drop / distance) over the filled surface, ties to
//!   the smallest neighbour index. Samples on flats of the filled surface (lake surfaces, filled
//!   pits, flat ground) have no lower neighbour: [`flat_routing`] leads them across the flat to
//!   its way out with integer breadth-first distances (towards lower, away from higher
//!   terrain), which do not depend on any visiting order (the GPU computes the same).
//! * **Order** — [`flow_order`]: breadth-first from the outlets over the receivers, so every
//!   receiver comes before its donors (downstream first): accumulation runs over it backwards,
//!   implicit erosion forwards.
//! * **Lakes** — defined on the filled surface alone, without any order ([`lake_labels`],
//!   [`lakes_of`]): the samples under it (`filled > height`), 8-connected, form components
//!   that each have one flat level (neighbouring submerged samples share their filled
//!   height). A component at least [`DrainageSettings::lake_min_depth`] deep (level minus its
//!   lowest sample) and [`DrainageSettings::lake_min_area`] large holds water with a flat
//!   surface at that level; its outlet is the smallest-index sample outside it that one of its
//!   samples drains into. Lakes are numbered by the smallest sample index of their component.
//!   Shallower pits are filled (see [`Drainage::ground_at`]).
//! * **Accumulation** — integer upstream sample counts ([`accumulate_counts`]) times the
//!   sample's area ([`areas`]): exact, whatever order the donors are added in.
//! * **Rivers** — samples whose drainage area passes [`DrainageSettings::river_area`]; their
//!   flood discharge `Q` (m³/s) gives width `a·Q^0.5` and depth `c·Q^0.4` (hydraulic geometry,
//!   Leopold & Maddock 1953). A river sample's receiver drains an area at least as large, so
//!   rivers run on to a lake or the sea and never end in a dry pit.

use crate::det_math;
use crate::flats::{as_atomic_u32, Candidates};
use crate::grid_div::SideDiv;
use crate::runs::Runs;
use crate::schema::{check_all, Check, ParamSpec, Slider, Value};
use rayon::prelude::*;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
#[cfg(test)]
use std::collections::VecDeque;
use std::mem::MaybeUninit;

/// Default [`DrainageSettings::lake_min_depth`], metres.
pub const DEFAULT_LAKE_MIN_DEPTH: f32 = 1.5;
/// Default [`DrainageSettings::lake_min_area`], square metres.
pub const DEFAULT_LAKE_MIN_AREA: f32 = 400.0;
/// Default [`DrainageSettings::river_area`], square metres.
pub const DEFAULT_RIVER_AREA: f32 = 4000.0;
/// Default [`DrainageSettings::flood_discharge`], m³/s per km² of drainage area.
pub const DEFAULT_FLOOD_DISCHARGE: f32 = 10.0;
/// Default [`DrainageSettings::width_coefficient`], metres per (m³/s)^0.5.
pub const DEFAULT_WIDTH_COEFFICIENT: f32 = 8.0;
/// Default [`DrainageSettings::depth_coefficient`], metres per (m³/s)^0.4.
pub const DEFAULT_DEPTH_COEFFICIENT: f32 = 1.2;

/// Marks "no lake" in [`Drainage::lake_id`] and "no receiver" in [`flat_routing`].
pub const NONE: u32 = crate::flats::NONE;

/// Settings of [`drainage`].
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct DrainageSettings {
    /// Closed depressions at least this deep (spill height minus lowest sample) become lakes,
    /// metres, 0..=1000. Shallower ones are filled. Default 1.5.
    pub lake_min_depth: f32,
    /// ... and at least this large (flooded area), m², >= 0. Default 400.
    pub lake_min_area: f32,
    /// Drainage area at which a river starts, m², > 0. Default 4000.
    pub river_area: f32,
    /// Flood discharge per drained area, m³/s per km², > 0. Default 10 (a heavy tropical storm).
    pub flood_discharge: f32,
    /// River width = `width_coefficient · Q^0.5`, metres per (m³/s)^0.5, > 0. Default 8.
    pub width_coefficient: f32,
    /// River depth = `depth_coefficient · Q^0.4`, metres per (m³/s)^0.4, > 0. Default 1.2.
    pub depth_coefficient: f32,
}

impl Default for DrainageSettings {
    fn default() -> Self {
        DrainageSettings {
            lake_min_depth: DEFAULT_LAKE_MIN_DEPTH,
            lake_min_area: DEFAULT_LAKE_MIN_AREA,
            river_area: DEFAULT_RIVER_AREA,
            flood_discharge: DEFAULT_FLOOD_DISCHARGE,
            width_coefficient: DEFAULT_WIDTH_COEFFICIENT,
            depth_coefficient: DEFAULT_DEPTH_COEFFICIENT,
        }
    }
}

impl DrainageSettings {
    /// The parameters' schema ([`crate::schema`]).
    pub const PARAMS: &'static [ParamSpec<DrainageSettings>] = &[
        ParamSpec::float(
            "lake_min_depth",
            DEFAULT_LAKE_MIN_DEPTH,
            Check::Range(0.0, 1000.0),
            "m",
            "Closed depressions at least this deep hold a lake; shallower ones are filled.",
            |s: &Self| Value::Float(s.lake_min_depth),
        )
        .slider(
            "river_lake_min_depth",
            Slider::new(0.0, 50.0).or_greater().suffix("m"),
        ),
        ParamSpec::float(
            "lake_min_area",
            DEFAULT_LAKE_MIN_AREA,
            Check::NonNegative,
            "m²",
            "… and at least this large.",
            |s: &Self| Value::Float(s.lake_min_area),
        )
        .slider(
            "river_lake_min_area",
            Slider::new(0.0, 100000.0).or_greater().suffix("m²"),
        ),
        ParamSpec::float(
            "river_area",
            DEFAULT_RIVER_AREA,
            Check::PositiveFinite,
            "m²",
            "FLOW: drainage area at which a river starts; smaller = more, longer rivers.",
            |s: &Self| Value::Float(s.river_area),
        )
        .slider(
            "river_min_area",
            Slider::new(100.0, 100000.0).or_greater().suffix("m²"),
        ),
        ParamSpec::float(
            "flood_discharge",
            DEFAULT_FLOOD_DISCHARGE,
            Check::PositiveFinite,
            "m³/s per km²",
            "FLOW: flood discharge per drained area (not exposed by the node).",
            |s: &Self| Value::Float(s.flood_discharge),
        ),
        ParamSpec::float(
            "width_coefficient",
            DEFAULT_WIDTH_COEFFICIENT,
            Check::PositiveFinite,
            "m/(m³/s)^0.5",
            "FLOW: channel width per √(flood discharge).",
            |s: &Self| Value::Float(s.width_coefficient),
        )
        .slider(
            "river_width_coefficient",
            Slider::new(0.1, 50.0).or_greater(),
        ),
        ParamSpec::float(
            "depth_coefficient",
            DEFAULT_DEPTH_COEFFICIENT,
            Check::PositiveFinite,
            "m/(m³/s)^0.4",
            "FLOW: channel depth per (flood discharge)^0.4.",
            |s: &Self| Value::Float(s.depth_coefficient),
        )
        .slider(
            "river_depth_coefficient",
            Slider::new(0.1, 10.0).or_greater(),
        ),
    ];

    /// Check every field ([`DrainageSettings::PARAMS`]); the first problem found is returned.
    pub fn validate(&self) -> Result<(), String> {
        check_all(Self::PARAMS, self).map_err(|e| format!("drainage: {} {}", e.field, e.message))
    }
}

/// One lake: a closed depression holding water up to its spill height.
#[derive(Clone, Debug, PartialEq)]
pub struct Lake {
    /// Height of the flat water surface (the spill height), metres.
    pub level: f32,
    /// Rim sample the lake spills over (not itself a lake sample); water leaves through it.
    pub outlet: u32,
    /// Deepest sample of the lake.
    pub deepest: u32,
    /// Water depth at the deepest sample, metres.
    pub depth: f32,
    /// Number of samples under water.
    pub samples: u32,
}

/// One river sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RiverSample {
    /// Sample index (`z * n + x`).
    pub index: u32,
    /// Drainage area, m².
    pub area: f32,
    /// Flood discharge, m³/s.
    pub discharge: f32,
    /// Channel width, metres.
    pub width: f32,
    /// Channel depth, metres.
    pub depth: f32,
}

/// Result of [`drainage`]. Every per-sample vector has `n²` entries, row-major.
#[derive(Clone, Debug)]
pub struct Drainage {
    /// Samples per side.
    pub n: usize,
    /// Distance between samples, metres.
    pub spacing: f32,
    /// Sea level, metres.
    pub sea_level: f32,
    /// Depression-filled surface: the terrain with every closed depression filled to its spill
    /// height (lake water surfaces included). Every sample has a non-ascending path to an
    /// outlet over it.
    pub filled: Vec<f32>,
    /// Flow receiver of each sample; outlets (sea, map border) are their own receiver.
    pub receivers: Vec<u32>,
    /// Every non-outlet sample, downstream first (each sample's receiver comes before it).
    pub order: Vec<u32>,
    /// Drainage area (upstream area including the sample itself), m².
    pub area: Vec<f32>,
    /// Lake water level per sample (metres), NaN where there is no lake water.
    pub water_level: Vec<f32>,
    /// Lake of each sample (index into `lakes`), [`NONE`] where there is none.
    pub lake_id: Vec<u32>,
    /// The lakes.
    pub lakes: Vec<Lake>,
    /// River samples, downstream first.
    pub rivers: Vec<RiverSample>,
    /// Samples among which is every one whose `filled` height is above the input height (in no
    /// particular order; others and repeats may be there too), when the drainage knows them
    /// (the CPU's fill does); `None` when not, and [`crate::channels::carve_rivers`] then
    /// compares the whole map.
    pub raised: Option<Vec<u32>>,
}

impl Drainage {
    /// The ground at sample `i` after filling the shallow pits: `filled` everywhere except
    /// under lakes, where the lake bed (`heights[i]`, the input height) stays.
    pub fn ground_at(&self, heights: &[f32], i: usize) -> f32 {
        if self.lake_id[i] == NONE {
            self.filled[i]
        } else {
            heights[i]
        }
    }
    /// Whether sample `i` is an outlet (sea or map border).
    pub fn is_outlet(&self, i: usize) -> bool {
        self.receivers[i] as usize == i
    }
    /// Whether sample `i` is sea (at or below sea level, or not a number).
    pub fn is_sea(&self, heights: &[f32], i: usize) -> bool {
        is_sea(heights[i], self.sea_level)
    }
}

#[inline(always)]
pub(crate) fn is_sea(h: f32, sea_level: f32) -> bool {
    crate::flats::not_above(h, sea_level)
}

/// Total order of `f32` as an unsigned key (NaN never reaches here: it is sea).
#[inline(always)]
fn key(h: f32, i: u32) -> u64 {
    let b = h.to_bits();
    let o = if b & 0x8000_0000 != 0 {
        !b
    } else {
        b | 0x8000_0000
    };
    ((o as u64) << 32) | i as u64
}

/// Neighbour offsets `(dx, dz)` in increasing index order, with their distances in cells.
pub(crate) const NEIGHBOURS: [(i32, i32, f32); 8] = [
    (-1, -1, std::f32::consts::SQRT_2),
    (0, -1, 1.0),
    (1, -1, std::f32::consts::SQRT_2),
    (-1, 0, 1.0),
    (1, 0, 1.0),
    (-1, 1, std::f32::consts::SQRT_2),
    (0, 1, 1.0),
    (1, 1, std::f32::consts::SQRT_2),
];

/// Call `f(neighbour index, distance in cells)` for each in-grid neighbour, in index order.
#[inline(always)]
pub(crate) fn for_neighbours(i: usize, n: usize, mut f: impl FnMut(usize, f32)) {
    let (x, z) = ((i % n) as i32, (i / n) as i32);
    let nn = n as i32;
    if x > 0 && z > 0 && x + 1 < nn && z + 1 < nn {
        for &(dx, dz, d) in &NEIGHBOURS {
            f((i as i32 + dz * nn + dx) as usize, d);
        }
    } else {
        for &(dx, dz, d) in &NEIGHBOURS {
            let (a, b) = (x + dx, z + dz);
            if a >= 0 && b >= 0 && a < nn && b < nn {
                f((b * nn + a) as usize, d);
            }
        }
    }
}

/// Result of the Priority-Flood over a height field. Only the tests read it: lakes come from
/// [`lake_labels`] (order-free), and [`flood`] is kept as the order-free description of the
/// classic algorithm's classes that the fill's bookkeeping (`Filled::kind`, `maybe_pit`) is
/// pinned to.
#[cfg(test)]
pub(crate) struct Flood {
    /// Filled surface.
    pub filled: Vec<f32>,
    /// 1 + depression label of samples that entered through the pit queue, else 0.
    pub pit: Vec<u32>,
    /// Per sample: 1 sea or reached through the priority queue, 2 land on the map border,
    /// 3 reached through the pit queue.
    pub kind: Vec<u8>,
    /// Per depression: (level, spill sample).
    pub pits: Vec<(f32, u32)>,
}

/// What the Priority-Flood with a pit queue (Barnes et al. 2014, Algorithm 3; sea samples and
/// land on the map border are the outlets, land samples next to an outlet seed the priority
/// queue, ties broken by sample index) reports, computed from the filled surface instead of
/// by running it: the classic algorithm processes the samples in non-decreasing filled level,
/// so each of its outputs has an order-free description (the reference implementation,
/// `flood_classic`, is kept in the tests, which pin the two to the same bits):
///
/// * a land sample that is neither an outlet nor next to the sea enters through the pit queue
///   (kind 3) exactly when no neighbour's filled level is below its height (it is first
///   reached from its lowest neighbour, processed first);
/// * pit samples of one level that touch belong to the same depression; a depression is
///   opened by the first sample of its level next to it that went through the priority queue
///   (least index), which labels every pit sample next to it, so depressions sharing that
///   spill sample share a label; labels count in the order of the spill samples' keys
///   (level, index), the order the queue pops them.
#[cfg(test)]
pub(crate) fn flood(h: &[f32], n: usize, sea_level: f32) -> Flood {
    let len = n * n;
    let Filled {
        filled,
        mut kind,
        mut maybe_pit,
        ..
    } = fill(h, n, sea_level);
    // The pit samples: no neighbour's filled level below their height.
    maybe_pit.retain(|&c| {
        let c = c as usize;
        let v = h[c];
        let mut lower = false;
        for_neighbours(c, n, |j, _| lower |= filled[j] < v);
        if lower {
            kind[c] = 1;
        }
        !lower
    });
    // Zero-initialised (calloc): only the pages of samples in depressions are ever touched.
    let mut pit = vec![0u32; len];
    // Connected pit samples of one level (component index + 1 in `pit` for now), and the key
    // of each component's spill sample.
    let mut spill_of: Vec<u64> = Vec::new();
    let mut queue: Vec<u32> = Vec::new();
    for &s in &maybe_pit {
        if pit[s as usize] != 0 {
            continue;
        }
        let lv = filled[s as usize];
        let label = spill_of.len() as u32 + 1;
        let mut spill = u64::MAX;
        pit[s as usize] = label;
        queue.push(s);
        while let Some(c) = queue.pop() {
            for_neighbours(c as usize, n, |j, _| {
                if filled[j].to_bits() != lv.to_bits() {
                    return;
                }
                if kind[j] == 3 {
                    if pit[j] == 0 {
                        pit[j] = label;
                        queue.push(j as u32);
                    }
                } else if !is_sea(h[j], sea_level) {
                    spill = spill.min(key(lv, j as u32));
                }
            });
        }
        debug_assert!(spill != u64::MAX, "depression without a spill sample");
        spill_of.push(spill);
    }
    // Depressions in the order of their spill keys, those sharing a spill sample merged.
    let mut by_key: Vec<u32> = (0..spill_of.len() as u32).collect();
    by_key.sort_unstable_by_key(|&c| spill_of[c as usize]);
    let mut label_of = vec![0u32; spill_of.len()];
    let mut pits: Vec<(f32, u32)> = Vec::new();
    let mut last = u64::MAX;
    for &c in &by_key {
        let k = spill_of[c as usize];
        if k != last {
            let s = k as u32;
            pits.push((filled[s as usize], s));
            last = k;
        }
        label_of[c as usize] = pits.len() as u32;
    }
    for &s in &maybe_pit {
        let p = &mut pit[s as usize];
        *p = label_of[*p as usize - 1];
    }
    Flood {
        filled,
        pit,
        pits,
        kind,
    }
}

/// The classic Priority-Flood with a pit queue (Barnes et al. 2014, Algorithm 3), the
/// reference of [`flood`].
#[cfg(test)]
fn flood_classic(h: &[f32], n: usize, sea_level: f32) -> Flood {
    let len = n * n;
    let mut filled = h.to_vec();
    // Zero-initialised (calloc): only the pages of samples in depressions are ever touched.
    let mut pit = vec![0u32; len];
    let mut pits: Vec<(f32, u32)> = Vec::new();
    // 0 = open, 1 = queued or done.
    let mut closed: Vec<u8> = h.par_iter().map(|&v| is_sea(v, sea_level) as u8).collect();
    let mut heap: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
    // Seeds: land on the border (outlets themselves), land next to the sea.
    let seeds: Vec<u32> = (0..n)
        .into_par_iter()
        .flat_map_iter(|z| {
            let closed = &closed;
            (0..n).filter_map(move |x| {
                let i = z * n + x;
                if closed[i] != 0 {
                    return None;
                }
                let border = x == 0 || z == 0 || x + 1 == n || z + 1 == n;
                let mut next_to_sea = false;
                if !border {
                    for_neighbours(i, n, |j, _| next_to_sea |= closed[j] != 0);
                }
                (border || next_to_sea).then_some(i as u32)
            })
        })
        .collect();
    for &i in &seeds {
        let (x, z) = (i as usize % n, i as usize / n);
        // 2 marks the border: outlets, and the only samples whose neighbours need bounds checks.
        closed[i as usize] = if x == 0 || z == 0 || x + 1 == n || z + 1 == n {
            2
        } else {
            1
        };
        heap.push(Reverse(key(h[i as usize], i)));
    }
    let ni = n as isize;
    let offsets: [isize; 8] = [-ni - 1, -ni, -ni + 1, -1, 1, ni - 1, ni, ni + 1];
    let mut fifo: VecDeque<u32> = VecDeque::new();
    loop {
        let c = if let Some(c) = fifo.pop_front() {
            c as usize
        } else if let Some(Reverse(k)) = heap.pop() {
            k as u32 as usize
        } else {
            break;
        };
        let border = closed[c] == 2;
        let lv = filled[c];
        let mut pc = if closed[c] == 3 { pit[c] } else { 0 };
        macro_rules! visit {
            ($j:expr) => {{
                let j: usize = $j;
                if closed[j] == 0 {
                    let hj = h[j];
                    if hj <= lv {
                        closed[j] = 3;
                        filled[j] = lv;
                        if pc == 0 {
                            // First pit sample reached from a rim sample: a new depression.
                            pits.push((lv, c as u32));
                            pc = pits.len() as u32;
                        }
                        pit[j] = pc;
                        fifo.push_back(j as u32);
                    } else {
                        closed[j] = 1;
                        heap.push(Reverse(key(hj, j as u32)));
                    }
                }
            }};
        }
        if border {
            for_neighbours(c, n, |j, _| visit!(j));
        } else {
            for &o in &offsets {
                visit!((c as isize + o) as usize);
            }
        }
    }
    Flood {
        filled,
        pit,
        pits,
        kind: closed,
    }
}

/// The depression-filled surface of `heights` (sea at or below `sea_level` and the map border
/// are the outlets): `filled(c) = max(h(c), min over the neighbours n of filled(n))`, outlets
/// at their own height — the greatest solution, i.e. the lowest height at which water standing
/// on `c` can leave the map (the minimax path height). This definition uses only `min` and
/// `max`, so any order of evaluation gives the same bits: the GPU twin (`depression_fill` in
/// `shaders/depression.wgsl`) relaxes it from `+∞` (Planchon & Darboux 2001); the CPU computes
/// it with the Priority-Flood, which is faster and gives the same values (pinned by a test).
pub fn depression_fill(heights: &[f32], n: usize, sea_level: f32) -> Vec<f32> {
    assert_eq!(heights.len(), n * n, "heights must hold n² samples");
    fill(heights, n, sea_level).filled
}

/// [`depression_fill`], and samples among which is every one it raised (filled above its
/// height): [`Drainage::raised`]. Only the floods of the priority queue's loop raise samples,
/// and each sample they reach is marked 3 and listed in `maybe_pit`.
fn fill_raised(heights: &[f32], n: usize, sea_level: f32) -> (Vec<f32>, Vec<u32>) {
    assert_eq!(heights.len(), n * n, "heights must hold n² samples");
    let f = fill(heights, n, sea_level);
    (f.filled, f.maybe_pit)
}

/// What [`fill`] computes.
struct Filled {
    /// The filled surface.
    filled: Vec<f32>,
    /// `Flood::kind`, except that some samples marked 3 are not pit samples (see `maybe_pit`).
    /// Read by the tests only (through `flood`); the bookkeeping costs little.
    #[cfg_attr(not(test), allow(dead_code))]
    kind: Vec<u8>,
    /// The samples marked 3 in `kind` (some maybe twice): every pit sample of `flood` is among
    /// them, and so is every sample the fill raised; the others have a neighbour whose filled
    /// level is below their height.
    maybe_pit: Vec<u32>,
}

/// The filled surface of [`depression_fill`] by a Priority-Flood that queues only the samples
/// where the order matters (in the spirit of Zhou, Sun & Fu 2016, "An efficient variant of the
/// Priority-Flood algorithm for filling depressions in raster digital elevation models",
/// Computers & Geosciences 90).
///
/// A sample whose filled value is known (outlets; the land next to them) makes that of every
/// neighbour at least as high known too: `filled = h` there, since `max(h, filled of the known
/// one) = h` bounds it from above. So the known set grows by a plain ascending search, in any
/// order; only a known sample with an unknown lower neighbour must wait for its turn in the
/// priority queue (that neighbour may be reached lower from elsewhere). On an eroded island
/// nearly every sample drains down to the sea and is settled by the ascending search; the
/// queue sees the rims of the few depressions, whose insides are flooded at the rim's level
/// as in the classic algorithm. `filled` is unique (see [`depression_fill`]), so it equals the
/// classic [`flood`]'s bit for bit.
///
/// On the way it sorts the samples into [`Flood::kind`]'s classes (see [`Filled`]): a sample
/// first reached from a neighbour whose filled level is below its height cannot be a pit sample.
fn fill(h: &[f32], n: usize, sea_level: f32) -> Filled {
    let len = n * n;
    // One parallel pass: `filled` starts as a copy of `h`; `known` is 1 on the sea and on the
    // land next to the sea, 2 on the land on the map border (these land samples are the seeds,
    // returned per row), else 0; later 1 or 3 as the samples become known.
    let mut filled: Vec<f32> = crate::memory::with_capacity(len);
    let mut known: Vec<u8> = crate::memory::with_capacity(len);
    let seeds: Vec<Vec<u32>> = filled.spare_capacity_mut()[..len]
        .par_chunks_mut(n)
        .zip(known.spare_capacity_mut()[..len].par_chunks_mut(n))
        .enumerate()
        .with_max_len(crate::grid::MAX_ROWS_PER_TASK)
        .map_init(
            || vec![0u8; 2 * n],
            |wet, (z, (frow, krow))| {
                let mut seeds = Vec::new();
                seed_row(h, n, sea_level, z, frow, krow, wet, &mut seeds);
                seeds
            },
        )
        .collect();
    // SAFETY: every element below `len` of both was written just above (capacity >= len).
    unsafe {
        filled.set_len(len);
        known.set_len(len);
    }
    // Known samples not yet expanded.
    let mut stack: Vec<u32> = seeds.concat();
    let mut maybe_pit: Vec<u32> = Vec::new();
    // The first ascending search, from the seeds, is most of the work on a drained island: the
    // seeds' groups are searched in parallel (`ascend_shared`), then the rims still open go to
    // the priority queue in key order, as the sequential search would leave them.
    let rims = ascend_shared(h, n, &stack, &mut known, &mut maybe_pit);
    stack.clear();
    // In parallel where there are enough of them (the erosion fills small grids many times).
    // Only the rims still open (an unknown neighbour left) are queued.
    let (shared, side) = (as_atomic(&mut known), SideDiv::new(n));
    let mut rims: Vec<u64> = if rims.len() >= PARALLEL_RIMS {
        let mut r: Vec<u64> = rims
            .into_par_iter()
            .filter(|&k| has_unknown_neighbour(shared, side, k as u32 as usize))
            .collect();
        r.par_sort_unstable();
        r
    } else {
        let mut r = rims;
        r.retain(|&k| has_unknown_neighbour(shared, side, k as u32 as usize));
        r.sort_unstable();
        r
    };
    rims.dedup();
    let mut heap: BinaryHeap<Reverse<u64>> = rims.drain(..).map(Reverse).collect();
    // Priority-Flood over what is left: a rim at level `lv` floods its unknown neighbours (all
    // lower when it was queued) and everything connected to them at or below `lv`; higher
    // samples reached become known and are expanded by the ascending search (spread over the
    // pool when it grows large: behind a dam, one search may climb a whole mountain).
    let mut spans: Vec<(u32, u32, u32)> = Vec::new();
    while let Some(Reverse(k)) = heap.pop() {
        let c = k as u32 as usize;
        let lv = filled[c];
        let mut flood = Flood8 {
            h,
            n,
            lv,
            filled: &mut filled,
            known: &mut known,
            maybe_pit: &mut maybe_pit,
            stack: &mut stack,
            spans: &mut spans,
        };
        flood.from(c);
        ascend_adaptive(
            h,
            n,
            as_atomic(&mut known),
            &mut stack,
            &mut rims,
            &mut maybe_pit,
        );
        // The rims still open (an unknown neighbour left) are queued.
        let shared = as_atomic(&mut known);
        for &r in &rims {
            if has_unknown_neighbour(shared, side, r as u32 as usize) {
                heap.push(Reverse(r));
            }
        }
        rims.clear();
    }
    Filled {
        filled,
        kind: known,
        maybe_pit,
    }
}

/// One flood of `fill`'s priority queue, by row spans: every unknown sample 8-connected to the
/// rim through unknown samples at or below `lv` is raised to `lv` (marked 3 and listed in
/// `maybe_pit`); every unknown neighbour above `lv` of these and of the rim becomes known
/// (marked 1) and goes on `stack` for the ascending search. A span is extended along its row
/// (its unknown higher ends marked on the way), then the rows above and below are scanned over
/// the span widened by one sample each side: the same samples as a flood that visits the 8
/// neighbours of each sample, read row by row.
struct Flood8<'a> {
    h: &'a [f32],
    n: usize,
    lv: f32,
    filled: &'a mut [f32],
    known: &'a mut [u8],
    maybe_pit: &'a mut Vec<u32>,
    stack: &'a mut Vec<u32>,
    /// Spans `(row, first, last)` whose neighbour rows are still to scan.
    spans: &'a mut Vec<(u32, u32, u32)>,
}

impl Flood8<'_> {
    /// Flood from rim sample `c` (known).
    fn from(&mut self, c: usize) {
        let n = self.n;
        let (x, z) = (c % n, c / n);
        let (lo, hi) = (x.saturating_sub(1), (x + 1).min(n - 1));
        for zz in z.saturating_sub(1)..=(z + 1).min(n - 1) {
            self.scan(zz, lo, hi);
        }
        while let Some((z, a, b)) = self.spans.pop() {
            let (z, a, b) = (z as usize, a as usize, b as usize);
            let (lo, hi) = (a.saturating_sub(1), (b + 1).min(n - 1));
            if z > 0 {
                self.scan(z - 1, lo, hi);
            }
            if z + 1 < n {
                self.scan(z + 1, lo, hi);
            }
        }
    }

    /// The unknown samples of row `z` from `lo` to `hi`: at or below the level, the span
    /// around them is flooded; above it, they become known.
    fn scan(&mut self, z: usize, lo: usize, hi: usize) {
        let (n, lv, row) = (self.n, self.lv, z * self.n);
        let floods = |known: &[u8], x: usize| known[row + x] == 0 && self.h[row + x] <= lv;
        let mut x = lo;
        while x <= hi {
            let j = row + x;
            if self.known[j] == 0 {
                if self.h[j] <= lv {
                    let (mut a, mut b) = (x, x);
                    while a > 0 && floods(self.known, a - 1) {
                        a -= 1;
                    }
                    while b + 1 < n && floods(self.known, b + 1) {
                        b += 1;
                    }
                    self.known[row + a..=row + b].fill(3);
                    self.filled[row + a..=row + b].fill(lv);
                    self.maybe_pit
                        .extend(row as u32 + a as u32..=row as u32 + b as u32);
                    // The span's ends, when unknown, are above the level.
                    for e in [a.wrapping_sub(1), b + 1] {
                        if e < n && self.known[row + e] == 0 {
                            self.known[row + e] = 1;
                            self.stack.push((row + e) as u32);
                        }
                    }
                    self.spans.push((z as u32, a as u32, b as u32));
                    x = b + 2;
                    continue;
                }
                self.known[j] = 1;
                self.stack.push(j as u32);
            }
            x += 1;
        }
    }
}

/// Row `z` of `fill`'s first pass: `frow` a copy of the heights; `krow` 1 on the sea and on the
/// land next to the sea (8 neighbours), 2 on the land on the map border, else 0; the land
/// samples marked 1 or 2 (the seeds) appended to `seeds` in index order. `wet` is scratch of
/// `2n` bytes: the sea flags of the three rows OR'ed per column, then OR'ed over three columns,
/// and the seed flags (branch-free but for the seeds themselves).
#[allow(clippy::too_many_arguments)]
fn seed_row(
    h: &[f32],
    n: usize,
    sea_level: f32,
    z: usize,
    frow: &mut [std::mem::MaybeUninit<f32>],
    krow: &mut [std::mem::MaybeUninit<u8>],
    wet: &mut [u8],
    seeds: &mut Vec<u32>,
) {
    let row = &h[z * n..(z + 1) * n];
    for (f, &v) in frow.iter_mut().zip(row) {
        f.write(v);
    }
    let base = (z * n) as u32;
    if z == 0 || z + 1 == n || n < 3 {
        // A border row: every land sample is a seed (2).
        for (x, (k, &v)) in krow.iter_mut().zip(row).enumerate() {
            let sea = is_sea(v, sea_level);
            k.write(if sea { 1 } else { 2 });
            if !sea {
                seeds.push(base + x as u32);
            }
        }
        return;
    }
    let (up, down) = (&h[(z - 1) * n..z * n], &h[(z + 1) * n..(z + 2) * n]);
    for (((w, &a), &b), &c) in wet.iter_mut().zip(up).zip(row).zip(down) {
        *w = is_sea(a, sea_level) as u8 | is_sea(b, sea_level) as u8 | is_sea(c, sea_level) as u8;
    }
    // Interior columns: 1 where sea or land next to the sea, else 0; `seed` flags the land next
    // to the sea (the seeds).
    let (wet, seed) = wet.split_at_mut(n);
    let inner = &row[1..n - 1];
    for (((k, s), w), &v) in krow[1..n - 1]
        .iter_mut()
        .zip(&mut seed[..n - 2])
        .zip(wet.windows(3))
        .zip(inner)
    {
        let (sea, near) = (is_sea(v, sea_level) as u8, w[0] | w[1] | w[2]);
        k.write(sea | near);
        *s = near & (sea ^ 1);
    }
    let edge = |x: usize, k: &mut std::mem::MaybeUninit<u8>| {
        let sea = is_sea(row[x], sea_level);
        k.write(if sea { 1 } else { 2 });
        !sea
    };
    if edge(0, &mut krow[0]) {
        seeds.push(base);
    }
    // Blocks of flags at once: away from the coast they are all 0.
    const BLOCK: usize = 32;
    for (b, block) in seed[..n - 2].chunks(BLOCK).enumerate() {
        if block.iter().fold(0, |a, &f| a | f) != 0 {
            for (i, &f) in block.iter().enumerate() {
                if f != 0 {
                    seeds.push(base + (b * BLOCK + i) as u32 + 1);
                }
            }
        }
    }
    if edge(n - 1, &mut krow[n - 1]) {
        seeds.push(base + (n - 1) as u32);
    }
}

/// Fewest rims left by [`ascend_shared`] that `fill` filters and sorts in parallel.
const PARALLEL_RIMS: usize = 1 << 15;

/// Seeds per parallel task of [`ascend_shared`].
const ASCEND_SEEDS_PER_TASK: usize = 256;

/// The ascending search of `fill` from `seeds` (known samples), in parallel: groups of seeds are
/// expanded by concurrent tasks over the shared `known` map. Returns the rims found (keys of
/// expanded samples that had an unknown lower neighbour; possibly repeated) and appends the
/// samples it marks 3 to `maybe_pit`.
///
/// The set of samples made known is the samples reachable from the seeds by non-descending
/// steps, whatever the order; so is the set of rims still open afterwards (known samples with
/// an unknown neighbour, which is lower). Only the 1-or-3 marks of `known` (read by the tests'
/// `flood`) depend on which task reaches a sample first, and either mark is right: a sample is
/// marked 1 only from a lower neighbour, so it is no pit sample. Two tasks may both claim a
/// sample (relaxed loads and stores, no read-modify-write): it is then expanded twice, which
/// changes nothing.
fn ascend_shared(
    h: &[f32],
    n: usize,
    seeds: &[u32],
    known: &mut [u8],
    maybe_pit: &mut Vec<u32>,
) -> Vec<u64> {
    let shared = as_atomic(known);
    let side = SideDiv::new(n);
    let parts: Vec<(Vec<u64>, Vec<u32>)> = seeds
        .par_chunks(ASCEND_SEEDS_PER_TASK)
        .map(|group| {
            let (mut rims, mut pits) = (Vec::new(), Vec::new());
            ascend(h, n, shared, &mut group.to_vec(), &mut rims, &mut pits);
            // Most rims are closed by the time their search ends (their lower neighbour was
            // reached from elsewhere): drop those here, in parallel. A rim only closes, so
            // `fill` still filters what is left.
            rims.retain(|&k| has_unknown_neighbour(shared, side, k as u32 as usize));
            (rims, pits)
        })
        .collect();
    let mut rims = Vec::with_capacity(parts.iter().map(|p| p.0.len()).sum());
    for (r, p) in parts {
        rims.extend(r);
        maybe_pit.extend(p);
    }
    rims
}

/// The ascending search of `fill`: expand the known samples on `queue` breadth-first (the queue
/// keeps what it served, so rims are few; it is left empty). An unknown neighbour `j` of an
/// expanded sample `t` becomes known — 1 when higher, 3 (and into `pits`) when level — and is
/// expanded in turn; `t` goes to `rims` (its key) when an unknown neighbour is lower. Relaxed
/// loads and stores: concurrent searches ([`ascend_shared`], [`ascend_adaptive`]) may both
/// claim a sample, which only expands it twice.
fn ascend(
    h: &[f32],
    n: usize,
    known: &[std::sync::atomic::AtomicU8],
    queue: &mut Vec<u32>,
    rims: &mut Vec<u64>,
    pits: &mut Vec<u32>,
) {
    let mut head = 0;
    ascend_some(h, n, known, queue, &mut head, usize::MAX, rims, pits);
    queue.clear();
}

/// [`ascend`]'s loop from `queue[*head]` for at most `limit` expansions (`*head` advanced past
/// them); returns whether the queue ran out.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn ascend_some(
    h: &[f32],
    n: usize,
    known: &[std::sync::atomic::AtomicU8],
    queue: &mut Vec<u32>,
    head: &mut usize,
    limit: usize,
    rims: &mut Vec<u64>,
    pits: &mut Vec<u32>,
) -> bool {
    use std::sync::atomic::Ordering::Relaxed;
    let (offs, side) = (offsets(n), SideDiv::new(n));
    let end = head.saturating_add(limit);
    while *head < queue.len() && *head < end {
        let t = queue[*head] as usize;
        *head += 1;
        let ht = h[t];
        let mut rim = false;
        let mut visit = |j: usize| {
            if known[j].load(Relaxed) == 0 {
                let hj = h[j];
                if hj > ht {
                    known[j].store(1, Relaxed);
                    queue.push(j as u32);
                } else if hj == ht {
                    known[j].store(3, Relaxed);
                    pits.push(j as u32);
                    queue.push(j as u32);
                } else {
                    rim = true;
                }
            }
        };
        if !side.on_border(t) {
            for &o in &offs {
                visit((t as isize + o) as usize);
            }
        } else {
            for_neighbours(t, n, |j, _| visit(j));
        }
        if rim {
            rims.push(key(ht, t as u32));
        }
    }
    *head >= queue.len()
}

/// Expansions an [`ascend_adaptive`] search makes between two looks at the work left.
const ASCEND_BATCH: usize = 1024;

/// Fewest samples waiting in a search's queue for it to hand half of them to an idle thread.
const ASCEND_SPLIT: usize = 32;

/// [`ascend`] that spreads a large search over the pool: it runs alone for [`ASCEND_BATCH`]
/// expansions (most searches of `fill`'s priority queue end there), then, every batch, hands
/// half of the samples waiting in its queue to a new task while fewer tasks than threads are
/// searching; each task does the same. The samples made known and the rims still open
/// afterwards are those of [`ascend`] (see [`ascend_shared`]); `rims` and `pits` get them in
/// another order.
fn ascend_adaptive(
    h: &[f32],
    n: usize,
    known: &[std::sync::atomic::AtomicU8],
    queue: &mut Vec<u32>,
    rims: &mut Vec<u64>,
    pits: &mut Vec<u32>,
) {
    let mut head = 0;
    let threads = rayon::current_num_threads();
    let limit = if threads > 1 {
        ASCEND_BATCH
    } else {
        usize::MAX
    };
    if ascend_some(h, n, known, queue, &mut head, limit, rims, pits) {
        queue.clear();
        return;
    }
    let rest = queue.split_off(head);
    queue.clear();
    let search = AdaptiveAscend {
        h,
        n,
        known,
        threads,
        busy: std::sync::atomic::AtomicUsize::new(1),
        found: std::sync::Mutex::new(Vec::new()),
    };
    rayon::in_place_scope(|s| search.run(s, rest, rims, pits));
    for (r, p) in search.found.into_inner().unwrap_or_else(|e| e.into_inner()) {
        rims.extend(r);
        pits.extend(p);
    }
}

/// The shared state of one [`ascend_adaptive`] search.
struct AdaptiveAscend<'a> {
    h: &'a [f32],
    n: usize,
    known: &'a [std::sync::atomic::AtomicU8],
    threads: usize,
    /// Tasks searching now.
    busy: std::sync::atomic::AtomicUsize,
    /// The rims and pits of the tasks handed work.
    found: std::sync::Mutex<Vec<(Vec<u64>, Vec<u32>)>>,
}

impl<'a> AdaptiveAscend<'a> {
    /// Search from `queue`, splitting off work while threads are idle (counted in `busy`
    /// from before the call to its end).
    fn run<'s>(
        &'s self,
        s: &rayon::Scope<'s>,
        mut queue: Vec<u32>,
        rims: &mut Vec<u64>,
        pits: &mut Vec<u32>,
    ) {
        use std::sync::atomic::Ordering::Relaxed;
        let mut head = 0;
        while !ascend_some(
            self.h,
            self.n,
            self.known,
            &mut queue,
            &mut head,
            ASCEND_BATCH,
            rims,
            pits,
        ) {
            let waiting = queue.len() - head;
            if waiting >= ASCEND_SPLIT && self.busy.load(Relaxed) < self.threads {
                self.busy.fetch_add(1, Relaxed);
                let half = queue.split_off(head + waiting / 2);
                s.spawn(move |s| {
                    let (mut r, mut p) = (Vec::new(), Vec::new());
                    self.run(s, half, &mut r, &mut p);
                    if !r.is_empty() || !p.is_empty() {
                        let mut found = self.found.lock().unwrap_or_else(|e| e.into_inner());
                        found.push((r, p));
                    }
                });
            }
        }
        // This task is done: its thread may take work split off by another.
        self.busy.fetch_sub(1, Relaxed);
    }
}

/// Whether sample `t` has a neighbour not yet known (`known` 0).
fn has_unknown_neighbour(known: &[std::sync::atomic::AtomicU8], side: SideDiv, t: usize) -> bool {
    use std::sync::atomic::Ordering::Relaxed;
    let n = side.n();
    if !side.on_border(t) {
        offsets(n)
            .iter()
            .any(|&o| known[(t as isize + o) as usize].load(Relaxed) == 0)
    } else {
        let mut open = false;
        for_neighbours(t, n, |j, _| open |= known[j].load(Relaxed) == 0);
        open
    }
}

/// `known` as atomics, for [`ascend`].
fn as_atomic(known: &mut [u8]) -> &[std::sync::atomic::AtomicU8] {
    // SAFETY: `AtomicU8` has the size, alignment and bit validity of `u8`, and `known` stays
    // borrowed mutably while the atomics live, so nothing else accesses it meanwhile.
    unsafe { &*(known as *mut [u8] as *const [std::sync::atomic::AtomicU8]) }
}

/// Neighbour offsets of an interior sample, in [`NEIGHBOURS`] order.
#[inline(always)]
fn offsets(n: usize) -> [isize; 8] {
    let ni = n as isize;
    [-ni - 1, -ni, -ni + 1, -1, 1, ni - 1, ni, ni + 1]
}

/// Flow directions across the flats of the filled surface, independent of any visiting order
/// (Garbrecht & Martz 1997, J. Hydrology 193; Barnes, Lehman & Mulla 2014, "An efficient
/// assignment of drainage direction over flat surfaces", Computers & Geosciences 62).
///
/// A *flat* sample is a non-outlet sample of `filled` without a lower neighbour and without an
/// outlet neighbour at or below its height. On each flat (flat samples connected through
/// neighbours of equal filled height), two integer breadth-first distances:
/// `L`, the steps to the nearest equal-height non-flat sample (the flat's way out; such samples
/// have a lower neighbour), and `H`, the steps from the nearest flat sample next to higher
/// ground (0 on flats without higher ground). A flat sample drains to its equal-height
/// neighbour of least `2·L − H` (non-flat neighbours first, ties to the smallest neighbour
/// index): towards lower terrain, and away from higher terrain, so paths across a filled pit
/// curve through its middle instead of running in straight lines from the rim. `2·L − H`
/// strictly decreases along these receivers (a neighbour one step closer to the exit exists and
/// `H` changes by at most one between neighbours), so they form no cycle.
///
/// Returns the receiver of every sample that needs one from here: flat samples, and non-outlet
/// samples whose only way down is an outlet neighbour at their height (their smallest-index
/// such neighbour); [`NONE`] elsewhere. The distances are the unique shortest-path lengths, so
/// any order of evaluation (the GPU twin `flat_routing` in `shaders/depression.wgsl` relaxes
/// them in parallel) gives the same receivers.
pub fn flat_routing(filled: &[f32], n: usize, sea_level: f32, heights: &[f32]) -> Vec<u32> {
    let len = n * n;
    assert_eq!(filled.len(), len, "filled must hold n² samples");
    assert_eq!(heights.len(), len, "heights must hold n² samples");
    let (d8_rcv, candidates) = d8(filled, n, sea_level, heights);
    let mut rcv = d8_rcv.clone();
    crate::flats::route_flats(filled, n, &mut rcv, candidates);
    // The candidates are the samples D8 left without a receiver.
    rcv.iter()
        .zip(&d8_rcv)
        .map(|(&r, &d)| if d == NONE { r } else { NONE })
        .collect()
}

/// Steepest-descent receivers over `filled` (D8, ties to the smallest index); samples without a
/// lower neighbour take their [`flat_routing`] receiver `flat`; outlets are their own receiver.
pub fn receivers(
    filled: &[f32],
    flat: &[u32],
    n: usize,
    sea_level: f32,
    heights: &[f32],
) -> Vec<u32> {
    let (mut rcv, _) = d8(filled, n, sea_level, heights);
    for (r, &f) in rcv.iter_mut().zip(flat) {
        if *r == NONE {
            *r = f;
        }
    }
    rcv
}

/// D8 receivers over `filled`, [`NONE`] for the samples without a lower neighbour, and those
/// samples.
fn d8(filled: &[f32], n: usize, sea_level: f32, heights: &[f32]) -> (Vec<u32>, Candidates) {
    receivers_by_rows(filled, n, heights, |rows, h, i0, out| {
        d8_row(rows, h, i0, n as u32, sea_level, out)
    })
}

/// Receivers row by row, in parallel ([`d8`], and the erosion's random receivers): the border
/// rows are outlets, and `inner(rows, heights, i0, out)` writes every sample of an inner row
/// (`rows`: the `filled` rows above, at and below it; `heights` and `out` the row's; `i0` the
/// index of its first sample). Returns the receivers and the samples left [`NONE`] (no lower
/// neighbour).
pub(crate) fn receivers_by_rows(
    filled: &[f32],
    n: usize,
    heights: &[f32],
    inner: impl Fn([&[f32]; 3], &[f32], u32, &mut [MaybeUninit<u32>]) + Sync,
) -> (Vec<u32>, Candidates) {
    let mut rcv: Vec<u32> = crate::memory::with_capacity(n * n);
    let w = Candidates::words_per_row(n);
    let mut words = vec![0u64; n * w];
    let nan: Vec<u32> = rcv.spare_capacity_mut()[..n * n]
        .par_chunks_mut(n)
        .zip(words.par_chunks_mut(w))
        .enumerate()
        .with_max_len(crate::grid::MAX_ROWS_PER_TASK)
        .flat_map_iter(|(z, (row, row_words))| {
            let i0 = z * n;
            let mut nan = Vec::new();
            if z == 0 || z + 1 == n || n < 3 {
                // The border: outlets.
                for (x, r) in row.iter_mut().enumerate() {
                    r.write((i0 + x) as u32);
                }
                return nan;
            }
            let rows = [
                &filled[i0 - n..i0],
                &filled[i0..i0 + n],
                &filled[i0 + n..i0 + 2 * n],
            ];
            inner(rows, &heights[i0..i0 + n], i0 as u32, row);
            // SAFETY: `inner` wrote every element of the row.
            let row = unsafe { &*(row as *const [MaybeUninit<u32>] as *const [u32]) };
            Candidates::record_row(row, rows[1], i0, row_words, &mut nan);
            nan
        })
        .collect();
    // SAFETY: every element below n² was written just above (capacity >= n²).
    unsafe { rcv.set_len(n * n) };
    (rcv, Candidates { words, nan })
}

/// The start of an inner-row receiver kernel ([`d8`]'s, the erosion's random one): `rows`,
/// `heights` and `out` cut to the row's `n` samples (so the kernel's loop has no bounds checks
/// left), and the row's two border samples written as outlets.
#[inline(always)]
#[allow(clippy::type_complexity)]
pub(crate) fn inner_row<'a>(
    rows: [&'a [f32]; 3],
    heights: &'a [f32],
    i0: u32,
    n: u32,
    out: &'a mut [MaybeUninit<u32>],
) -> ([&'a [f32]; 3], &'a [f32], &'a mut [MaybeUninit<u32>]) {
    let m = n as usize;
    let [up, mid, down] = rows;
    let out = &mut out[..m];
    out[0].write(i0);
    out[m - 1].write(i0 + n - 1);
    ([&up[..m], &mid[..m], &down[..m]], &heights[..m], out)
}

/// The eight neighbours of inner sample `x` (index `i`) of a row of an `n`-wide grid, in
/// [`NEIGHBOURS`] order: their height on `rows` (above, at and below the row), their distance
/// in cells and their index.
#[inline(always)]
pub(crate) fn row_neighbours(rows: [&[f32]; 3], x: usize, i: u32, n: u32) -> [(f32, f32, u32); 8] {
    const D: f32 = std::f32::consts::SQRT_2;
    let [up, mid, down] = rows;
    [
        (up[x - 1], D, i - n - 1),
        (up[x], 1.0, i - n),
        (up[x + 1], D, i - n + 1),
        (mid[x - 1], 1.0, i - 1),
        (mid[x + 1], 1.0, i + 1),
        (down[x - 1], D, i + n - 1),
        (down[x], 1.0, i + n),
        (down[x + 1], D, i + n + 1),
    ]
}

/// One inner row of [`d8`] (`n >= 3`): `rows` are the filled rows above, at and below it, `i0`
/// the index of its first sample. Branch-free over the samples (the neighbours in
/// [`NEIGHBOURS`] order, strictly steeper wins, so ties go to the smallest index), so it
/// vectorises.
#[inline(always)]
fn d8_row_body(
    rows: [&[f32]; 3],
    heights: &[f32],
    i0: u32,
    n: u32,
    sea_level: f32,
    out: &mut [MaybeUninit<u32>],
) {
    let m = n as usize;
    let ([up, mid, down], heights, out) = inner_row(rows, heights, i0, n, out);
    for x in 1..m - 1 {
        let i = i0 + x as u32;
        let hi = mid[x];
        let (mut best, mut best_s) = (NONE, 0.0f32);
        for (v, d, j) in row_neighbours([up, mid, down], x, i, n) {
            let s = (hi - v) / d;
            if s > best_s {
                best_s = s;
                best = j;
            }
        }
        out[x].write(if is_sea(heights[x], sea_level) {
            i
        } else {
            best
        });
    }
}

crate::simd::dispatch! {
    /// [`d8_row_body`], compiled for AVX2 when the CPU has it (no FMA: the same bits).
    fn d8_row(rows: [&[f32]; 3], heights: &[f32], i0: u32, n: u32, sea_level: f32, out: &mut [MaybeUninit<u32>]) => d8_row_body
}

/// [`receivers`] with the flats routed here ([`flat_routing`]'s receivers of the samples D8
/// leaves, found in place).
pub fn receivers_with_flats(filled: &[f32], n: usize, sea_level: f32, heights: &[f32]) -> Vec<u32> {
    let (mut rcv, cand) = d8(filled, n, sea_level, heights);
    crate::flats::route_flats(filled, n, &mut rcv, cand);
    rcv
}

/// The flow order of the receivers `rcv` (each a neighbour of its sample, or the sample
/// itself) on an `n × n` grid: every non-outlet sample (`rcv[i] != i`), each after its
/// receiver (downstream first). The stack order of Braun & Willett 2013: depth-first up each
/// drainage tree, the trees taken in the index order of their first sample (the one draining
/// into the outlet), donors in index order. Deterministic: groups of consecutive trees are
/// walked in parallel and joined in order, which is the sequence of one sequential walk
/// whatever the thread count. Consecutive samples are mostly neighbours, which keeps the passes
/// over the order cache-friendly. Samples on a receiver cycle (none for [`receivers`]) are
/// left out.
pub fn flow_order(rcv: &[u32], n: usize) -> Vec<u32> {
    let len = rcv.len();
    assert_eq!(len, n * n, "rcv must hold n² samples");
    // Each tree is walked whole before the next, in the index order of their first samples, so
    // the order is the trees' walks one after another: the trees starting in each range of
    // indices are walked in parallel and the ranges joined in order (the same sequence as one
    // sequential walk).
    let groups: Vec<Vec<u32>> = tree_groups(len)
        .map(|roots| {
            let mut out = Vec::new();
            let mut stack = Vec::new();
            for_tree_roots(rcv, roots, |i| {
                walk_tree(rcv, n, i as u32, &mut stack, &mut out)
            });
            out
        })
        .collect();
    join_in_order(groups)
}

/// [`flow_order`] with the shape of its trees recorded: what [`accumulate_counts_linked`] sums
/// along without looking samples up in the full-size maps.
///
/// The order walks each tree depth-first, donors in index order, so a sample's first donor
/// comes right after it and each further donor right after the whole subtree of the one before
/// it: the number of donors of each sample is then enough to find where its subtree ends (see
/// [`Stretch`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkedOrder {
    /// The samples, exactly as [`flow_order`] gives them.
    pub order: Vec<u32>,
    /// For each position `k` of `order`, the number of `order[k]`'s donors (0–8, the
    /// [`LinkedOrder::DONORS`] bits), with [`LinkedOrder::FIRST_OF_TREE`] set where its
    /// receiver is an outlet (not in `order`): the first sample of each drainage tree.
    pub links: Vec<u8>,
}

impl LinkedOrder {
    /// The bits of a [`LinkedOrder::links`] entry that count the sample's donors.
    pub const DONORS: u8 = 0x0f;
    /// The bit of a [`LinkedOrder::links`] entry set on the first sample of a drainage tree.
    pub const FIRST_OF_TREE: u8 = 0x80;
}

/// [`flow_order`], with the number of each sample's donors recorded by the same walk (see
/// [`LinkedOrder`]). Deterministic like [`flow_order`]: groups of trees are walked in parallel
/// and joined in order.
pub fn flow_order_linked(rcv: &[u32], n: usize) -> LinkedOrder {
    let len = rcv.len();
    assert_eq!(len, n * n, "rcv must hold n² samples");
    let groups: Vec<(Vec<u32>, Vec<u8>)> = tree_groups(len)
        .map(|roots| {
            let (mut out, mut links) = (Vec::new(), Vec::new());
            let mut stack: Vec<u32> = Vec::new();
            for_tree_roots(rcv, roots, |i| {
                walk_tree_linked(rcv, n, i as u32, &mut stack, &mut out, &mut links)
            });
            (out, links)
        })
        .collect();
    let (order, links): (Vec<Vec<u32>>, Vec<Vec<u8>>) = groups.into_iter().unzip();
    LinkedOrder {
        order: join_in_order(order),
        links: join_in_order(links),
    }
}

/// What the backward sum of one stretch of a [`LinkedOrder`] ([`stretch_counts`]) leaves to
/// [`join_stretches`].
///
/// The order walks each tree depth-first, so a sample's subtree is the stretch of the order
/// from the sample to just before the first later position where the walk leaves it, and its
/// count is that stretch's length. With the level `P_j = Σ_{i<j} (1 − donors_i)` (a sample
/// without donor closes a branch, one with `d` donors opens `d − 1` more), the walk leaves the
/// subtree of `k` at the first `j > k` with `P_j > P_k`, and since the level rises by at most
/// 1 a step, that is the first `j > k` with `P_j = P_k + 1`. Read backwards, the last
/// position seen at each level gives it, without a branch; where no later position of the
/// stretch reaches the level, the subtree ends past the stretch, and the stretches after it
/// tell where.
#[derive(Default)]
struct Stretch {
    /// `(position, u)` of the samples whose subtree ends past the stretch: at the first
    /// position after the stretch whose level is `u` above the level at the stretch's end.
    open: Vec<(u32, u32)>,
    /// `records[u - 1]`: the first position after the stretch's start (up to its end) whose
    /// level is `u` above the start's, for `u` from 1 to the highest.
    records: Vec<u32>,
    /// The level at the stretch's end minus the level at its start.
    rise: i64,
}

/// Upstream counts of the positions from `start` whose [`LinkedOrder::links`] entries are
/// `links`, summed backwards (see [`Stretch`]): `put(k, count)` for each position `start + k`,
/// last to first; a sample whose subtree ends past the stretch (in the [`Stretch`]'s `open`,
/// for [`join_stretches`]) is first given a meaningless count, then 0 before the scan moves
/// past its chunk of [`SCAN_CHUNK`] positions. `tree(k, count)` for each tree's first sample,
/// `count` 0 where its tree reaches past the stretch; where the stretch holds whole trees,
/// every count is final. `get(k)` reads back what `put(k, _)` was given last (for the few
/// positions it is asked about). `last` is scratch, reused by the calls of one thread:
/// calls that share it must take disjoint ranges of positions (this one holds `start + 1 ..=
/// start + links.len()` in its slots).
#[inline(always)]
fn stretch_counts(
    links: &[u8],
    start: usize,
    last: &mut Vec<u32>,
    mut put: impl FnMut(usize, u32),
    get: impl Fn(usize) -> u32,
    mut tree: impl FnMut(usize, u32),
) -> Stretch {
    let mut st = Stretch::default();
    let len = links.len();
    assert!(start + len < u32::MAX as usize, "too many positions");
    // `slots[base + r]` is the last position seen at level `r` (relative to the stretch's
    // end). The levels span a few thousand at most on real islands (one lower per whole tree,
    // a few higher where trees are cut), so `slots` starts small and grows at either end.
    // Nothing is cleared between calls: a slot belongs to this call only if this call wrote
    // it, when the position it holds lies in `start + 1 ..= start + len` (a slot never written
    // holds 0); then it holds the first later position at its level. Since the level rises by
    // at most 1 a step forwards, the levels reached after a position are contiguous above it,
    // so its subtree ends at the slot one level up whenever any later position lies higher.
    if last.len() < 2 * LEVELS_MIN {
        last.resize(2 * LEVELS_MIN, 0);
    }
    let mut base = last.len() / 2;
    let (first, span) = (start as u32 + 1, len as u32);
    // The position of the stretch's `k`-th sample.
    let position = |k: usize| first - 1 + k as u32;
    // `base +` the level of position `k + 1`.
    let mut i = base;
    // The positions are taken [`SCAN_CHUNK`] at a time, the scratch grown beforehand to hold
    // every level the chunk can reach (a step moves -1 to +14 levels, as the links' 4 bits
    // allow), so that the loop over a chunk calls nothing, checks no bounds and keeps its state
    // in registers. A sample is open (its subtree ends past the stretch) exactly when no later
    // position of the stretch lies higher than it, the one past the stretch's end included (the
    // levels reached after it are contiguous): the loop only notes the chunk's highest level,
    // and where that reaches the highest after the chunk, or the chunk holds a tree's first
    // sample, the chunk is taken again for those samples. Until then an open sample's count
    // is whatever its stale slot gives.
    let mut end_k = len;
    // The highest level of the positions after the chunk at hand.
    let mut after = i;
    while end_k > 0 {
        let start_k = end_k.saturating_sub(SCAN_CHUNK);
        while i <= SCAN_CHUNK || i + 15 * SCAN_CHUNK + 2 > last.len() {
            let front = grow_levels(last, i <= SCAN_CHUNK);
            (base, i, after) = (base + front, i + front, after + front);
        }
        let slots: &mut [u32] = last;
        let (links, i_end) = (&links[start_k..end_k], i);
        let mut top = 0;
        for (k, &l) in links.iter().enumerate().rev() {
            // The position (derived from `k` each time: one more value carried from one sample
            // to the next would not stay in a register).
            let pos = position(start_k + k);
            // SAFETY: at most SCAN_CHUNK steps of -1 to +14 levels from `i_end`, for which
            // `slots` has room on either side (grown above): `i` stays within `1 ..=
            // i_end + 14 * SCAN_CHUNK` and `i + 1 < slots.len()`.
            unsafe { *slots.get_unchecked_mut(i) = pos + 1 };
            i = i + (l & LinkedOrder::DONORS) as usize - 1;
            let end = unsafe { *slots.get_unchecked(i + 1) };
            put(start_k + k, end.wrapping_sub(pos));
            top = top.max(i);
        }
        let roots = links.iter().fold(0, |a, &l| a | l) & LinkedOrder::FIRST_OF_TREE;
        if top >= after || roots != 0 {
            let (mut j, mut high) = (i_end, after);
            for (k, &l) in links.iter().enumerate().rev() {
                j = j + (l & LinkedOrder::DONORS) as usize - 1;
                let open = j >= high;
                high = high.max(j);
                if open {
                    put(start_k + k, 0);
                    st.open.push((position(start_k + k), (j + 1 - base) as u32));
                }
                if l & LinkedOrder::FIRST_OF_TREE != 0 {
                    tree(start_k + k, if open { 0 } else { get(start_k + k) });
                }
            }
        }
        after = after.max(top);
        end_k = start_k;
    }
    let slots: &mut [u32] = last;
    // The levels above the start's, each first reached at the position its slot holds.
    let hi = i + slots[i + 1..]
        .iter()
        .take_while(|&&p| p.wrapping_sub(first) < span)
        .count();
    st.records = slots[i + 1..=hi].to_vec();
    st.rise = base as i64 - i as i64;
    st
}

/// Positions [`stretch_counts`] takes at a time (a power of two).
const SCAN_CHUNK: usize = 64;

/// Fewest levels on either side of the end's level that [`stretch_counts`]'s scratch holds.
const LEVELS_MIN: usize = 1 << 10;

/// [`stretch_counts`]'s scratch doubled, at the front (returns how far its entries moved) or
/// at the back (returns 0).
#[cold]
#[inline(never)]
fn grow_levels(last: &mut Vec<u32>, front: bool) -> usize {
    let add = last.len();
    if front {
        last.splice(0..0, std::iter::repeat_n(0, add));
        add
    } else {
        last.resize(2 * add, 0);
        0
    }
}

/// The stretches of one [`LinkedOrder`] summed by [`stretch_counts`] (in order), joined last
/// to first: `put(k, count)` for their open samples. Past the last stretch there is nothing
/// (it holds whole trees, so no sample looks there).
fn join_stretches(stretches: &[Stretch], mut put: impl FnMut(usize, u32)) {
    // For the stretch at hand, the first position after it `u` levels above its end's level
    // (`u` from 1, the last entry first).
    let mut above: Vec<u32> = Vec::new();
    for st in stretches.iter().rev() {
        for &(k, u) in &st.open {
            let j = above.len().checked_sub(u as usize).map_or(0, |i| above[i]);
            put(k as usize, j.wrapping_sub(k));
        }
        // Levels up to the stretch's highest come from its records, the rest from the
        // stretches after it, shifted by its rise.
        let from_after = st.records.len() as i64 - st.rise;
        above.truncate(above.len().saturating_sub(from_after.max(0) as usize));
        above.extend(st.records.iter().rev());
    }
}

/// `work()` on the calling thread and on tasks for the current rayon pool's threads; returns
/// when all are done. For work that the threads claim from shared counters: the caller starts
/// at once and the pool's threads join as they wake, where a parallel iterator called from
/// outside the pool would wait for a woken thread to start and for the caller to be woken at
/// the end (on the 2-core benchmark VM, a tenth of [`accumulate_counts_linked`]'s time).
///
/// Inside the pool, every other thread of it gets a task. From outside, every thread of it
/// does (the caller is an extra thread, and a woken pool thread that shares its core may only
/// run once the caller is done: a millisecond late on that VM, in a third of the calls; a task
/// that comes late finds no work left and returns at once), except in a pool of one thread,
/// which means one thread at work: the caller alone.
fn on_every_thread(work: impl Fn() + Sync) {
    let threads = rayon::current_num_threads();
    let tasks = match rayon::current_thread_index() {
        Some(_) => threads - 1,
        None if threads > 1 => threads,
        None => 0,
    };
    rayon::in_place_scope(|scope| {
        for _ in 0..tasks {
            scope.spawn(|_| work());
        }
        work();
    });
}

/// A chunk of [`accumulate_counts_linked`]'s map of ones.
#[inline(always)]
fn fill_ones_body(chunk: &mut [MaybeUninit<u32>]) {
    for x in chunk {
        x.write(1);
    }
}

crate::simd::dispatch! {
    /// [`fill_ones_body`] with 32-byte stores when the CPU has AVX2 (the baseline copy stores
    /// 16 bytes at a time, and the fill is bound by its stores).
    fn fill_ones(chunk: &mut [MaybeUninit<u32>]) => fill_ones_body
}

/// Values of [`accumulate_counts_linked`]'s map of ones written at a time.
const FILL_CHUNK: usize = 1 << 16;

/// The counts map shared by [`accumulate_counts_in_stretches`]' threads.
struct SharedMap(*mut u32);
// SAFETY: the threads write disjoint chunks through it, then use it only as atomics.
unsafe impl Sync for SharedMap {}

/// Fewest positions of a [`LinkedOrder`] that one task of [`accumulate_counts_linked`] sums.
const LINKED_MIN_STRETCH: usize = 1 << 14;

/// [`accumulate_counts`] over a [`LinkedOrder`] of the receivers `rcv`: the same counts. The
/// sums run backwards along the order, each sample's subtree found from the donor counts of
/// [`LinkedOrder::links`] (see [`Stretch`]) without a branch, so the full-size maps are only
/// written, once per sample, never read in the order's sequence. Stretches of equal length
/// are summed in parallel whatever trees they cut, then joined ([`join_stretches`]): the
/// samples whose subtrees reach past their stretch (the rivers' main stems through the cuts)
/// are counted last, then each tree's total is added to its outlet. The map of ones and the
/// stretches are taken chunk by chunk by whichever thread comes first ([`on_every_thread`]).
pub fn accumulate_counts_linked(linked: &LinkedOrder, rcv: &[u32], len: usize) -> Vec<u32> {
    let stretch =
        (linked.order.len() / (4 * rayon::current_num_threads().max(1))).max(LINKED_MIN_STRETCH);
    accumulate_counts_in_stretches(linked, rcv, len, stretch)
}

/// [`accumulate_counts_linked`] in stretches of `stretch` positions.
fn accumulate_counts_in_stretches(
    linked: &LinkedOrder,
    rcv: &[u32],
    len: usize,
    stretch: usize,
) -> Vec<u32> {
    use std::sync::atomic::{
        AtomicU32, AtomicUsize,
        Ordering::{Acquire, Relaxed, Release},
    };
    let (order, links): (&[u32], &[u8]) = (&linked.order, &linked.links);
    assert_eq!(
        order.len(),
        links.len(),
        "a linked order holds one link entry per sample"
    );
    assert!(order.len() < u32::MAX as usize, "too many samples");
    let mut counts: Vec<u32> = crate::memory::with_capacity(len);
    let at = SharedMap(counts.as_mut_ptr());
    let fills = len.div_ceil(FILL_CHUNK);
    let stretch_count = order.len().div_ceil(stretch);
    // The chunks of the map of ones, then the stretches, claimed from these counters.
    let (next_fill, filled, next_stretch) = (
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
    );
    // Each stretch's number, what it leaves to the join, and its trees' (outlet, total) pairs
    // (read while the trees' first samples are at hand).
    type Summed = (usize, Stretch, Vec<(u32, u32)>);
    let done: std::sync::Mutex<Vec<Summed>> = Default::default();
    let participate = || {
        // The whole `SharedMap` (which is `Sync`), not its raw pointer field, is what the
        // closure must capture.
        let at = &at;
        // The map of ones, a chunk at a time.
        loop {
            let c = next_fill.fetch_add(1, Relaxed);
            if c >= fills {
                break;
            }
            let (a, b) = (c * FILL_CHUNK, ((c + 1) * FILL_CHUNK).min(len));
            // SAFETY: chunk `c` is claimed by this call alone (the counter hands each out
            // once) and lies inside the allocation (`b <= len <= capacity`).
            let chunk = unsafe {
                std::slice::from_raw_parts_mut(
                    at.0.add(a) as *mut std::mem::MaybeUninit<u32>,
                    b - a,
                )
            };
            fill_ones(chunk);
            filled.fetch_add(1, Release);
        }
        // Every chunk claimed is being filled by a running thread: wait for the last ones.
        let mut spins = 0u32;
        while filled.load(Acquire) < fills {
            spins += 1;
            if spins.is_multiple_of(64) {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
        // SAFETY: all `len` values were written above (and published by the counter); from
        // here to the end of the scope they are only accessed through these atomics. Relaxed
        // stores: each sample is written by one thread (the open ones again after the join);
        // the scope's end orders them.
        let count: &[AtomicU32] =
            unsafe { std::slice::from_raw_parts(at.0 as *const AtomicU32, len) };
        let mut last = Vec::new();
        let mut mine = Vec::new();
        loop {
            let s = next_stretch.fetch_add(1, Relaxed);
            if s >= stretch_count {
                break;
            }
            let r = s * stretch..((s + 1) * stretch).min(order.len());
            let (order, links) = (&order[r.clone()], &links[r]);
            let mut outlets = Vec::new();
            let st = stretch_counts(
                links,
                s * stretch,
                &mut last,
                |k, v| count[order[k] as usize].store(v, Relaxed),
                |k| count[order[k] as usize].load(Relaxed),
                // A tree cut by the stretch's end (count 0) is taken after the join.
                |k, v| {
                    if v != 0 {
                        outlets.push((rcv[order[k] as usize], v));
                    }
                },
            );
            mine.push((s, st, outlets));
        }
        done.lock().expect("no task panics holding it").extend(mine);
    };
    on_every_thread(participate);
    // SAFETY: every value was written by the fill (every thread is done).
    unsafe { counts.set_len(len) };
    let count = as_atomic_u32(&mut counts);
    let mut summed = done.into_inner().expect("no task panics holding it");
    summed.sort_unstable_by_key(|&(s, _, _)| s);
    let (stretches, mut outlets): (Vec<Stretch>, Vec<Vec<(u32, u32)>>) =
        summed.into_iter().map(|(_, st, o)| (st, o)).unzip();
    join_stretches(&stretches, |k, v| {
        count[order[k] as usize].store(v, Relaxed)
    });
    // The trees cut by a stretch's end (their first samples are open ones), counted in the
    // join.
    outlets.push(
        stretches
            .iter()
            .flat_map(|st| &st.open)
            .map(|&(k, _)| k)
            .filter(|&k| links[k as usize] & LinkedOrder::FIRST_OF_TREE != 0)
            .map(|k| {
                let c = order[k as usize];
                (rcv[c as usize], count[c as usize].load(Relaxed))
            })
            .collect(),
    );
    // Trees may share an outlet: their totals are added once every sample's count is in.
    for &(o, v) in outlets.iter().flatten() {
        counts[o as usize] += v;
    }
    counts
}

/// The trees whose first sample lies in `roots` (an index range), walked one after another in
/// index order as [`flow_order`] walks them: `visit(sample, at)` for each, `at` the position of
/// its receiver among the samples visited by this call ([`NONE`] for a tree's first sample,
/// whose receiver is an outlet). `stack` is scratch.
pub(crate) fn walk_trees(
    rcv: &[u32],
    n: usize,
    roots: std::ops::Range<usize>,
    stack: &mut Vec<(u32, u32)>,
    mut visit: impl FnMut(u32, u32),
) {
    let mut base = 0u32;
    for_tree_roots(rcv, roots, |i| {
        let mut visits = 0;
        walk_tree_with(rcv, n, i as u32, stack, |c, k, _| {
            visits += 1;
            visit(c, if k == NONE { NONE } else { base + k });
        });
        base += visits;
    });
}

/// Fewest sample indices whose trees one parallel task of [`flow_order`] walks.
const FLOW_ORDER_MIN_SPAN: usize = 1 << 14;

/// The ranges of sample indices whose trees (those whose first sample lies in the range) one
/// parallel task of [`flow_order`] or [`river_candidates`] walks, in index order.
fn tree_groups(len: usize) -> impl IndexedParallelIterator<Item = std::ops::Range<usize>> {
    let span = (len / (16 * rayon::current_num_threads().max(1))).max(FLOW_ORDER_MIN_SPAN);
    (0..len.div_ceil(span))
        .into_par_iter()
        .map(move |g| g * span..((g + 1) * span).min(len))
}

/// `f(i)` for each sample `i` of `range` that starts a drainage tree ([`is_tree_root`]), in
/// index order. Runs of [`ROOT_RUN`] outlets (the sea, most of a map's samples) are passed over
/// a run at a time, by one comparison of the run with its own indices.
#[inline(always)]
fn for_tree_roots(rcv: &[u32], range: std::ops::Range<usize>, mut f: impl FnMut(usize)) {
    let mut i = range.start;
    while i + ROOT_RUN <= range.end {
        // Zero only where every sample of the run is its own receiver.
        let differ = rcv[i..i + ROOT_RUN]
            .iter()
            .zip(i as u32..)
            .fold(0, |a, (&r, k)| a | (r ^ k));
        if differ != 0 {
            for k in i..i + ROOT_RUN {
                if is_tree_root(rcv, k) {
                    f(k);
                }
            }
        }
        i += ROOT_RUN;
    }
    for k in i..range.end {
        if is_tree_root(rcv, k) {
            f(k);
        }
    }
}

/// Samples [`for_tree_roots`] compares at a time.
const ROOT_RUN: usize = 16;

/// Whether sample `i` starts a drainage tree: it drains into an outlet (a sample that is its
/// own receiver) other than itself.
#[inline(always)]
fn is_tree_root(rcv: &[u32], i: usize) -> bool {
    let r = rcv[i] as usize;
    r != i && rcv[r] as usize == r
}

/// The tree of `root` walked as [`walk_tree`] walks it, appended to `out`, and its
/// [`LinkedOrder::links`] entries to `links`. `stack` is scratch.
fn walk_tree_linked(
    rcv: &[u32],
    n: usize,
    root: u32,
    stack: &mut Vec<u32>,
    out: &mut Vec<u32>,
    links: &mut Vec<u8>,
) {
    let first = links.len();
    walk_tree_with(rcv, n, root, stack, |c, _, donors| {
        out.push(c);
        links.push(donors as u8);
    });
    links[first] |= LinkedOrder::FIRST_OF_TREE;
}

/// Depth-first walk of the tree of `root` (donors in index order), appended to `out`.
fn walk_tree(rcv: &[u32], n: usize, root: u32, stack: &mut Vec<u32>, out: &mut Vec<u32>) {
    walk_tree_with(rcv, n, root, stack, |c, _, _| out.push(c));
}

/// An entry of [`walk_tree_with`]'s stack: a sample, with the visit number of its receiver
/// where the walk is to report it (`(u32, u32)`), or without (`u32`, a smaller stack).
trait WalkEntry: Copy {
    fn new(sample: u32, parent: u32) -> Self;
    fn sample(self) -> u32;
    /// The visit number of the sample's receiver ([`NONE`] where not carried).
    fn parent(self) -> u32;
}

impl WalkEntry for u32 {
    #[inline(always)]
    fn new(sample: u32, _: u32) -> Self {
        sample
    }
    #[inline(always)]
    fn sample(self) -> u32 {
        self
    }
    #[inline(always)]
    fn parent(self) -> u32 {
        NONE
    }
}

impl WalkEntry for (u32, u32) {
    #[inline(always)]
    fn new(sample: u32, parent: u32) -> Self {
        (sample, parent)
    }
    #[inline(always)]
    fn sample(self) -> u32 {
        self.0
    }
    #[inline(always)]
    fn parent(self) -> u32 {
        self.1
    }
}

/// Depth-first walk of the tree of `root` (donors in index order): `visit(sample, k, donors)`
/// in walk order, `k` the number of the visit of the sample's receiver (counted from 0 for
/// `root`, whose `k` is [`NONE`]; always [`NONE`] with a `u32` stack, see [`WalkEntry`]),
/// `donors` the number of the sample's donors (visited after it, the first one right after
/// it).
fn walk_tree_with<E: WalkEntry>(
    rcv: &[u32],
    n: usize,
    root: u32,
    stack: &mut Vec<E>,
    mut visit: impl FnMut(u32, u32, u32),
) {
    let (offs, side) = (offsets(n), SideDiv::new(n));
    let mut visits = 0u32;
    stack.push(E::new(root, NONE));
    while let Some(e) = stack.pop() {
        let (c, parent) = (e.sample(), e.parent());
        let me = visits;
        visits += 1;
        let before = stack.len();
        let i = c as usize;
        // Donors pushed in reverse index order: popped in index order.
        if !side.on_border(i) {
            // Each neighbour is written past the stack's end and kept when it is a donor: no
            // branch on which of the eight neighbours drain here, which no predictor learns.
            stack.reserve(8);
            let spare = &mut stack.spare_capacity_mut()[..8];
            let mut k = 0;
            for &o in offs.iter().rev() {
                let j = (i as isize + o) as usize;
                // `k` is at most the number of neighbours taken so far (below 8).
                spare[k & 7].write(E::new(j as u32, me));
                k += (rcv[j] as usize == i) as usize;
            }
            // SAFETY: the first `k` of the (at least 8) entries past the old length were
            // written above (each donor's entry before `k` counted it), and `E` is `Copy`.
            unsafe { stack.set_len(before + k) };
        } else {
            let mut d = [0u32; 8];
            let mut k = 0;
            for_neighbours(i, n, |j, _| {
                if rcv[j] as usize == i {
                    d[k] = j as u32;
                    k += 1;
                }
            });
            stack.extend(d[..k].iter().rev().map(|&j| E::new(j, me)));
        }
        visit(c, parent, (stack.len() - before) as u32);
    }
}

/// The samples of [`flow_order`] (downstream first) whose upstream count
/// ([`accumulate_counts`]) times `cell_area` is at least `min_area`, with that area ([`areas`]'
/// value): the river candidates of a drainage, without the full-size order and count maps.
/// Each group of trees is walked, summed (counts by walk position) and filtered in one task.
pub fn river_candidates(rcv: &[u32], n: usize, cell_area: f32, min_area: f32) -> Vec<(u32, f32)> {
    let len = rcv.len();
    assert_eq!(len, n * n, "rcv must hold n² samples");
    let groups: Vec<Vec<(u32, f32)>> = tree_groups(len)
        .map(|roots| {
            let (mut order, mut links, mut counts) = (Vec::new(), Vec::new(), Vec::new());
            let mut last = Vec::new();
            // Positions walked so far: each tree's scan its own (see `stretch_counts`).
            let mut done = 0;
            let mut stack: Vec<u32> = Vec::new();
            let mut out = Vec::new();
            for_tree_roots(rcv, roots, |i| {
                order.clear();
                links.clear();
                walk_tree_linked(rcv, n, i as u32, &mut stack, &mut order, &mut links);
                // Upstream counts along the walk (one whole tree: every count is final).
                counts.resize(order.len(), 0);
                let cells = std::cell::Cell::from_mut(&mut counts[..]).as_slice_of_cells();
                stretch_counts(
                    &links,
                    done,
                    &mut last,
                    |k, v| cells[k].set(v),
                    |k| cells[k].get(),
                    |_, _| {},
                );
                done += order.len();
                out.extend(order.iter().zip(&counts).filter_map(|(&c, &k)| {
                    let area = k as f32 * cell_area;
                    (area >= min_area).then_some((c, area))
                }));
            });
            out
        })
        .collect();
    groups.concat()
}

/// The parts one after another, copied in parallel (each into its own slice of the result).
fn join_in_order<T: Copy + Send + Sync>(parts: Vec<Vec<T>>) -> Vec<T> {
    let total: usize = parts.iter().map(Vec::len).sum();
    let mut out: Vec<T> = crate::memory::with_capacity(total);
    let mut slices: Vec<&mut [MaybeUninit<T>]> = Vec::with_capacity(parts.len());
    let mut rest = &mut out.spare_capacity_mut()[..total];
    for p in &parts {
        let (head, tail) = rest.split_at_mut(p.len());
        slices.push(head);
        rest = tail;
    }
    slices
        .into_par_iter()
        .zip(parts.par_iter())
        .for_each(|(dst, src)| {
            for (d, &v) in dst.iter_mut().zip(src) {
                d.write(v);
            }
        });
    // SAFETY: the parts' lengths add up to `total`, and each slice was written whole above.
    unsafe { out.set_len(total) };
    out
}

/// Drainage area (m²) by accumulating `cell_area` down the receivers, upstream first.
pub fn accumulate(order: &[u32], rcv: &[u32], len: usize, cell_area: f32) -> Vec<f32> {
    let mut area = vec![cell_area; len];
    for &c in order.iter().rev() {
        let r = rcv[c as usize] as usize;
        if r != c as usize {
            area[r] += area[c as usize];
        }
    }
    area
}

/// Upstream sample counts over the receivers `rcv` (each sample counts itself), accumulated
/// upstream first over `order` ([`flow_order`]). Integer sums do not depend on the order in
/// which donors are added, so the GPU twin (`accumulate` in `shaders/drainage.wgsl`, which walks
/// the receivers with atomic adds in no fixed order) gives the same counts.
///
/// The trees of [`flow_order`] lie one after another in `order` and share no sample (their
/// outlets are not in `order`): groups of trees are summed in parallel, each touching only its
/// own samples, then each tree's total is added to its outlet. A group starts at the first tree
/// root of its share of `order` (found by a scan within the share, so the scans read each sample
/// at most once); a share without a root joins the group before it.
pub fn accumulate_counts(order: &[u32], rcv: &[u32], len: usize) -> Vec<u32> {
    use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
    let bounds = group_bounds(order.len(), |k| is_tree_root(rcv, order[k] as usize));
    // Relaxed loads and stores: every sample is written by the one task that owns its tree
    // (no two tasks touch a sample), so these are plain moves that rayon's join orders.
    // Huge pages at large sizes, first touched in parallel.
    let count: Vec<AtomicU32> = crate::memory::filled_with(len, || AtomicU32::new(1));
    let add = |r: usize, v: u32| count[r].store(count[r].load(Relaxed) + v, Relaxed);
    // Each group's tree roots (their receiver is an outlet, which trees of other groups may
    // share) are kept for the end.
    let roots: Vec<Vec<u32>> = bounds
        .par_windows(2)
        .map(|w| {
            let mut roots = Vec::new();
            let group = &order[w[0]..w[1]];
            // A sample's count passes to its receiver in a register when the receiver comes
            // just before it in the order (the sample is the receiver's first donor: 94 % of
            // the samples on issue 39's heightfield), instead of being added to the receiver's
            // count in memory, which the next step would load back at once.
            let mut carry = 0;
            for k in (0..group.len()).rev() {
                let c = group[k] as usize;
                let r = rcv[c] as usize;
                let v = count[c].load(Relaxed) + carry;
                count[c].store(v, Relaxed);
                carry = 0;
                if rcv[r] as usize == r {
                    roots.push(c as u32);
                } else if k > 0 && group[k - 1] as usize == r {
                    carry = v;
                } else {
                    add(r, v);
                }
            }
            roots
        })
        .collect();
    // The trees into their outlets (several trees may share one), after every tree is summed.
    for &c in roots.iter().flatten() {
        add(rcv[c as usize] as usize, count[c as usize].load(Relaxed));
    }
    count.into_iter().map(AtomicU32::into_inner).collect()
}

/// Where the groups of trees that [`accumulate_counts`] sums in parallel begin in an order of
/// `m` samples (`tree_start(k)`: position `k` starts a tree), with `m` last: each group starts
/// at the first tree start of its share of the order (found by a scan within the share, so the
/// scans read each position at most once); a share without one joins the group before it.
fn group_bounds(m: usize, tree_start: impl Fn(usize) -> bool + Sync) -> Vec<usize> {
    let share = (m / (8 * rayon::current_num_threads().max(1))).max(1 << 12);
    let firsts: Vec<Option<usize>> = (1..m.div_ceil(share))
        .into_par_iter()
        .map(|g| (g * share..((g + 1) * share).min(m)).find(|&k| tree_start(k)))
        .collect();
    let mut bounds = vec![0usize];
    bounds.extend(firsts.into_iter().flatten());
    bounds.push(m);
    bounds.dedup();
    bounds
}

/// Drainage areas (m²) of upstream sample counts: `count · cell_area`, one rounding each (the
/// same bits on the GPU).
pub fn areas(counts: &[u32], cell_area: f32) -> Vec<f32> {
    counts.par_iter().map(|&c| c as f32 * cell_area).collect()
}

/// Whether sample `i` is under water up to the filled surface (a lake candidate).
#[inline(always)]
fn submerged(heights: &[f32], filled: &[f32], i: usize) -> bool {
    filled[i] > heights[i]
}

/// Lake labels: the samples under the filled surface (`filled > heights`), 8-connected, each
/// component labelled with its smallest sample index; [`NONE`] elsewhere.
///
/// Neighbouring submerged samples `a`, `b` have the same filled height (`filled_a` is the least
/// filled height of `a`'s neighbours, so `filled_a <= filled_b`, and the other way round), so
/// every component is one flat water surface. The labels depend on nothing but the component,
/// so any evaluation order gives them: the CPU finds them by row runs ([`crate::runs`]), the GPU
/// twin (`lake_labels` in `shaders/drainage.wgsl`) by a lock-free union-find whose roots are
/// only ever linked below smaller indices.
pub fn lake_labels(heights: &[f32], filled: &[f32], n: usize) -> Vec<u32> {
    let len = n * n;
    assert_eq!(heights.len(), len, "heights must hold n² samples");
    assert_eq!(filled.len(), len, "filled must hold n² samples");
    let runs = Runs::new(n, |i| submerged(heights, filled, i));
    runs.map(NONE, |r| runs.label(r))
}

/// The lakes of the [`lake_labels`] `labels` and the lake of each sample ([`NONE`] where
/// there is none).
///
/// A component is a lake when its depth (its level, the filled height of its samples, minus
/// its lowest height) is at least [`DrainageSettings::lake_min_depth`] and its area (samples
/// × `cell_area`) at least [`DrainageSettings::lake_min_area`]. Its
/// [`deepest`](Lake::deepest) sample is the smallest index of its lowest height; its
/// [`outlet`](Lake::outlet) is the smallest sample outside it that one of its samples drains
/// into (`rcv`): the rim sample at the lake's level its water leaves through. Lakes are
/// numbered by their label (smallest sample index), ascending. Every value is a count, a min or
/// a max over the component, so none depends on an order (the GPU computes the same).
pub fn lakes_of(
    heights: &[f32],
    filled: &[f32],
    rcv: &[u32],
    labels: &[u32],
    cell_area: f32,
    settings: &DrainageSettings,
) -> (Vec<Lake>, Vec<u32>) {
    let len = labels.len();
    let n = len.isqrt();
    assert_eq!(n * n, len, "labels must hold n² samples");
    // The labelled samples' components are the labels' (neighbouring submerged samples share
    // one), and a receiver outside a lake is unlabelled.
    let inside = |i: usize| labels[i] != NONE;
    let runs = Runs::new(n, inside);
    lakes_in(heights, filled, rcv, &runs, inside, cell_area, settings)
}

/// [`lakes_of`] of the components `runs` of the submerged samples (`inside`).
fn lakes_in(
    heights: &[f32],
    filled: &[f32],
    rcv: &[u32],
    runs: &Runs,
    inside: impl Fn(usize) -> bool + Sync,
    cell_area: f32,
    settings: &DrainageSettings,
) -> (Vec<Lake>, Vec<u32>) {
    let n = runs.n();
    // Per run, rows in parallel: (samples, lowest height, its least sample, least outlet).
    let per_run: Vec<(u32, f32, u32, u32)> = (0..n)
        .into_par_iter()
        .flat_map_iter(|z| {
            let inside = &inside;
            runs.row(z).map(move |r| {
                let (x0, x1) = runs.span(r);
                let (mut low, mut deepest, mut outlet) = (f32::INFINITY, NONE, NONE);
                for i in z * n + x0..z * n + x1 {
                    if heights[i] < low {
                        low = heights[i];
                        deepest = i as u32;
                    }
                    if !inside(rcv[i] as usize) {
                        outlet = outlet.min(rcv[i]);
                    }
                }
                ((x1 - x0) as u32, low, deepest, outlet)
            })
        })
        .collect();
    // Per component, at its least run; runs in sample order, so the first lowest sample wins.
    let mut stats = vec![(0u32, f32::INFINITY, NONE, NONE); runs.len()];
    for (r, &(samples, low, deepest, outlet)) in per_run.iter().enumerate() {
        let e = &mut stats[runs.root(r)];
        e.0 += samples;
        if low < e.1 {
            e.1 = low;
            e.2 = deepest;
        }
        e.3 = e.3.min(outlet);
    }
    // Lake of each component (NONE: too small or too shallow), by ascending label.
    let mut lake_of = vec![NONE; runs.len()];
    let mut lakes = Vec::new();
    for (r, &(samples, low, deepest, outlet)) in stats.iter().enumerate() {
        if runs.root(r) != r {
            continue;
        }
        let level = filled[runs.label(r) as usize];
        let depth = level - low;
        if depth >= settings.lake_min_depth && samples as f32 * cell_area >= settings.lake_min_area
        {
            lake_of[r] = lakes.len() as u32;
            lakes.push(Lake {
                level,
                outlet,
                deepest,
                depth,
                samples,
            });
        }
    }
    let lake_id = runs.map(NONE, |r| lake_of[runs.root(r)]);
    (lakes, lake_id)
}

/// The [`RiverSample`] of sample `index` draining `area` m²: flood discharge
/// `Q = flood_discharge · area · 10⁻⁶`, width `a·Q^0.5`, depth `c·Q^0.4`.
fn river_sample(index: u32, area: f32, settings: &DrainageSettings) -> RiverSample {
    let q = settings.flood_discharge * area * 1.0e-6;
    RiverSample {
        index,
        area,
        discharge: q,
        width: settings.width_coefficient * q.sqrt(),
        depth: settings.depth_coefficient * det_math::powf(q, 0.4),
    }
}

/// The river samples of a drainage: samples draining at least
/// [`DrainageSettings::river_area`] outside the lakes, in `order` (downstream first).
pub fn river_samples(
    order: &[u32],
    area: &[f32],
    lake_id: &[u32],
    settings: &DrainageSettings,
) -> Vec<RiverSample> {
    order
        .iter()
        .filter(|&&c| area[c as usize] >= settings.river_area && lake_id[c as usize] == NONE)
        .map(|&c| river_sample(c, area[c as usize], settings))
        .collect()
}

/// [`Drainage::water_level`] of the lake of every sample (`lake_id` into `lakes`).
pub fn lake_water_levels(lakes: &[Lake], lake_id: &[u32]) -> Vec<f32> {
    lake_id
        .par_iter()
        .map(|&l| {
            if l == NONE {
                f32::NAN
            } else {
                lakes[l as usize].level
            }
        })
        .collect()
}

/// Drainage of a height field: see the [module documentation](self).
///
/// `heights` are metres, `n × n` row-major, `spacing` metres between samples; samples at or
/// below `sea_level` are sea. Panics if `heights.len() != n * n`; `settings` should pass
/// [`DrainageSettings::validate`].
pub fn drainage(
    heights: &[f32],
    n: usize,
    spacing: f32,
    sea_level: f32,
    settings: &DrainageSettings,
) -> Drainage {
    assert_eq!(heights.len(), n * n, "heights must hold n² samples");
    let len = n * n;
    let cell_area = spacing * spacing;
    let (filled, raised) = fill_raised(heights, n, sea_level);
    let receivers = receivers_with_flats(&filled, n, sea_level, heights);
    let order = flow_order(&receivers, n);
    let area = areas(&accumulate_counts(&order, &receivers, len), cell_area);
    let (lakes, lake_id) = lakes(heights, &filled, &receivers, n, cell_area, settings);
    let water_level = lake_water_levels(&lakes, &lake_id);
    let rivers = river_samples(&order, &area, &lake_id, settings);

    Drainage {
        n,
        spacing,
        sea_level,
        filled,
        receivers,
        order,
        area,
        water_level,
        lake_id,
        lakes,
        rivers,
        raised: Some(raised),
    }
}

/// [`lakes_of`] of the [`lake_labels`], from the submerged samples' row runs (no label map).
fn lakes(
    heights: &[f32],
    filled: &[f32],
    receivers: &[u32],
    n: usize,
    cell_area: f32,
    settings: &DrainageSettings,
) -> (Vec<Lake>, Vec<u32>) {
    let inside = |i: usize| submerged(heights, filled, i);
    let runs = Runs::new(n, inside);
    lakes_in(
        heights, filled, receivers, &runs, inside, cell_area, settings,
    )
}

/// [`drainage`] for the pipeline's drainage stage, which reads only `filled`, `receivers`,
/// `lake_id`, `lakes` and `rivers` afterwards: `order`, `area` and `water_level` are left
/// empty. Every other field has the same bits as [`drainage`]'s. Fewer full-size maps are
/// made and alive at once (at most three of 4 bytes per sample: `filled`, `receivers` and
/// `lake_id`; the river candidates come from [`river_candidates`] and the lakes from row runs,
/// without order, count or label maps), which bounds the peak memory of the documented maximum
/// resolution.
pub(crate) fn drainage_lean(
    heights: &[f32],
    n: usize,
    spacing: f32,
    sea_level: f32,
    settings: &DrainageSettings,
) -> Drainage {
    assert_eq!(heights.len(), n * n, "heights must hold n² samples");
    let cell_area = spacing * spacing;
    let (filled, raised) = fill_raised(heights, n, sea_level);
    let receivers = receivers_with_flats(&filled, n, sea_level, heights);
    // `river_samples` before the lake test: the samples draining at least `river_area` (with
    // `areas`' value), downstream first.
    // Independent of each other: concurrently (each is parallel inside; together they fill the
    // cores during either one's serial parts).
    let (candidates, (lakes, lake_id)) = rayon::join(
        || river_candidates(&receivers, n, cell_area, settings.river_area),
        || lakes(heights, &filled, &receivers, n, cell_area, settings),
    );
    let rivers = candidates
        .into_iter()
        .filter(|&(c, _)| lake_id[c as usize] == NONE)
        .map(|(c, area)| river_sample(c, area, settings))
        .collect();
    Drainage {
        n,
        spacing,
        sea_level,
        filled,
        receivers,
        order: Vec::new(),
        area: Vec::new(),
        water_level: Vec::new(),
        lake_id,
        lakes,
        rivers,
        raised: Some(raised),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pseudo-random numbers in [0, 1] (xorshift32 from `seed`).
    fn uniform(mut s: u32) -> impl FnMut() -> f32 {
        move || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            s as f32 / u32::MAX as f32
        }
    }

    /// The sequential walk [`flow_order`] was before it walked groups of trees in parallel.
    fn flow_order_sequential(rcv: &[u32], n: usize) -> Vec<u32> {
        let mut order = Vec::new();
        let mut stack = Vec::new();
        for i in 0..rcv.len() {
            if is_tree_root(rcv, i) {
                walk_tree(rcv, n, i as u32, &mut stack, &mut order);
            }
        }
        order
    }

    /// The sequential sum [`accumulate_counts`] was before it summed groups of trees in
    /// parallel.
    fn accumulate_counts_sequential(order: &[u32], rcv: &[u32], len: usize) -> Vec<u32> {
        let mut count = vec![1u32; len];
        for &c in order.iter().rev() {
            let r = rcv[c as usize] as usize;
            if r != c as usize {
                count[r] += count[c as usize];
            }
        }
        count
    }

    /// Receivers of a random forest on an n × n grid: each sample drains to a random
    /// neighbour lower in a random potential, or is an outlet (the border and some inner
    /// samples), so trees of every size, shared outlets and long chains occur.
    fn random_receivers(n: usize, seed: u64) -> Vec<u32> {
        let mut s = seed | 1;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let pot: Vec<u64> = (0..n * n).map(|_| next()).collect();
        (0..n * n)
            .map(|i| {
                let (x, z) = (i % n, i / n);
                if x == 0 || z == 0 || x + 1 == n || z + 1 == n || next() % 97 == 0 {
                    return i as u32;
                }
                let mut best = i;
                for_neighbours(i, n, |j, _| {
                    if pot[j] < pot[best] {
                        best = j;
                    }
                });
                best as u32
            })
            .collect()
    }

    /// [`flat_routing`] by its definition, sequentially, with map-sized classes and distances,
    /// the outlets and lower neighbours found from the heights (what
    /// [`crate::flats::route_flats`] reads from the receivers instead).
    fn flat_routing_reference(filled: &[f32], n: usize, sea: f32, heights: &[f32]) -> Vec<u32> {
        let len = n * n;
        let is_outlet = |i: usize| {
            let (x, z) = (i % n, i / n);
            is_sea(heights[i], sea) || x == 0 || z == 0 || x + 1 == n || z + 1 == n
        };
        let mut out = vec![NONE; len];
        let mut flat = vec![false; len];
        for i in (0..len).filter(|&i| !is_outlet(i)) {
            let hi = filled[i];
            let mut lower = false;
            for_neighbours(i, n, |j, _| lower |= filled[j] < hi);
            if lower {
                continue;
            }
            let mut spill = NONE;
            for_neighbours(i, n, |j, _| {
                if spill == NONE && is_sea(filled[j], hi) && is_outlet(j) {
                    spill = j as u32;
                }
            });
            if spill != NONE {
                out[i] = spill;
            } else {
                flat[i] = true;
            }
        }
        let drains = |j: usize| !flat[j] && !is_outlet(j);
        let bfs = |seed: &dyn Fn(usize) -> bool| -> Vec<u32> {
            let mut dist = vec![0u32; len];
            let mut queue = VecDeque::new();
            for c in (0..len).filter(|&c| flat[c] && seed(c)) {
                dist[c] = 1;
                queue.push_back(c);
            }
            while let Some(c) = queue.pop_front() {
                let (hc, dc) = (filled[c], dist[c]);
                for_neighbours(c, n, |j, _| {
                    if flat[j] && dist[j] == 0 && filled[j] == hc {
                        dist[j] = dc + 1;
                        queue.push_back(j);
                    }
                });
            }
            dist
        };
        let any = |c: usize, f: &dyn Fn(usize) -> bool| {
            let mut b = false;
            for_neighbours(c, n, |j, _| b |= f(j));
            b
        };
        let lo = bfs(&|c| any(c, &|j| filled[j] == filled[c] && drains(j)));
        let hi = bfs(&|c| any(c, &|j| filled[j] > filled[c]));
        for c in (0..len).filter(|&c| flat[c]) {
            let (mut best, mut best_k) = (NONE, 2 * lo[c] as i64 - hi[c] as i64);
            for_neighbours(c, n, |j, _| {
                if filled[j] != filled[c] {
                    return;
                }
                let k = if flat[j] {
                    2 * lo[j] as i64 - hi[j] as i64
                } else if drains(j) {
                    i64::MIN
                } else {
                    return;
                };
                if k < best_k {
                    best_k = k;
                    best = j as u32;
                }
            });
            out[c] = best;
        }
        out
    }

    #[test]
    fn flat_routing_follows_its_definition() {
        let mut cases: Vec<(Vec<f32>, usize, &str, usize)> = Vec::new();
        // An uneroded round island (large flat lakes) and the default one (few lake surfaces).
        for (round, erosion) in [(true, false), (false, true)] {
            let mut p = crate::IslandParams {
                resolution: 257,
                ..Default::default()
            };
            if round {
                p.shape.shape = crate::IslandShape::Round;
            }
            p.erosion.enabled = erosion;
            let h = crate::generate(&p).unwrap().field.heights;
            let least = if round { 500 } else { 10 };
            cases.push((h, 257, if round { "round" } else { "default" }, least));
        }
        // Terraces of whole metres with pits of sea and NaN: flats on the map border, flats
        // spilling into the sea or the border at their height, flats inside flats.
        let n = 61;
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let terraces: Vec<f32> = (0..n * n)
            .map(|i| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let (x, z) = ((i % n) as f32, (i / n) as f32);
                match state % 211 {
                    0 => f32::NAN,
                    1..=3 => -1.0,
                    _ => ((x * 0.21).sin() * 3.0 + (z * 0.17).cos() * 3.0 + 4.0).floor(),
                }
            })
            .collect();
        cases.push((terraces, n, "terraces", 200));
        // Four flats one sample wide along diagonals, each draining at a map corner, on a flat
        // plateau: their searches cross 8 × 8 tile corners in all four directions.
        let n = 64;
        let mut diagonals = vec![10.0f32; n * n];
        for i in 1..=28 {
            for (x, z) in [
                (i, i),
                (n - 1 - i, i),
                (n - 1 - i, n - 1 - i),
                (i, n - 1 - i),
            ] {
                diagonals[z * n + x] = 5.0;
            }
        }
        for corner in [0, n - 1, n * n - n, n * n - 1] {
            diagonals[corner] = 0.0;
        }
        cases.push((diagonals, n, "diagonals", 3000));
        for (h, n, name, least) in &cases {
            let n = *n;
            let filled = depression_fill(h, n, 0.0);
            let want = flat_routing_reference(&filled, n, 0.0, h);
            let routed = want.iter().filter(|&&r| r != NONE).count();
            assert!(routed > *least, "{name}: {routed} routed samples");
            assert_eq!(flat_routing(&filled, n, 0.0, h), want, "{name}");
            // In place, after D8: the routed samples get their receivers, the others keep D8's.
            let (d8_rcv, cand) = d8(&filled, n, 0.0, h);
            let mut rcv = d8_rcv.clone();
            crate::flats::route_flats(&filled, n, &mut rcv, cand);
            for i in 0..n * n {
                let expect = if want[i] != NONE { want[i] } else { d8_rcv[i] };
                assert_eq!(rcv[i], expect, "{name}, sample {i}");
            }
        }
    }

    #[test]
    fn parallel_flow_order_and_counts_equal_the_sequential_walk() {
        let mut cases: Vec<(Vec<u32>, usize)> = (0..6)
            .map(|k| {
                let n = [3, 17, 64, 129, 300, 513][k];
                (random_receivers(n, 0x9e37_79b9 + k as u64), n)
            })
            .collect();
        // A comb: one tree holds almost every sample (the column at x = 0 drains up into the
        // outlet at 0, each row drains left into it), so most shares of the order hold no root.
        let n = 300;
        let comb = (0..n * n)
            .map(|i| match (i % n, i / n) {
                (0, 0) => 0,
                (0, _) => (i - n) as u32,
                _ => (i - 1) as u32,
            })
            .collect();
        cases.push((comb, n));
        // A real island's receivers (erosion, lakes and flats included).
        let p = crate::IslandParams {
            resolution: 257,
            ..Default::default()
        };
        let island = crate::generate(&p).unwrap();
        let h = &island.field.heights;
        let filled = depression_fill(h, 257, 0.0);
        cases.push((receivers_with_flats(&filled, 257, 0.0, h), 257));
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            for (rcv, n) in &cases {
                let want = flow_order_sequential(rcv, *n);
                let got = pool.install(|| flow_order(rcv, *n));
                assert_eq!(got, want, "flow order, n = {n}, {threads} threads");
                let linked = pool.install(|| flow_order_linked(rcv, *n));
                assert_eq!(
                    linked.order, want,
                    "linked order, n = {n}, {threads} threads"
                );
                // Each sample's links entry: its donors' count, and whether it starts a tree.
                assert_eq!(linked.links.len(), linked.order.len());
                for (k, (&c, &l)) in linked.order.iter().zip(&linked.links).enumerate() {
                    let rc = rcv[c as usize];
                    let first = l & LinkedOrder::FIRST_OF_TREE != 0;
                    assert_eq!(first, rcv[rc as usize] == rc, "tree start at {k}, n = {n}");
                    let donors = (0..rcv.len())
                        .filter(|&j| rcv[j] == c && j != c as usize)
                        .count();
                    assert_eq!(
                        (l & LinkedOrder::DONORS) as usize,
                        donors,
                        "donors at {k}, n = {n}"
                    );
                    assert_eq!(l & !(LinkedOrder::DONORS | LinkedOrder::FIRST_OF_TREE), 0);
                }
                let want = accumulate_counts_sequential(&want, rcv, n * n);
                let got = pool.install(|| accumulate_counts(&got, rcv, n * n));
                assert_eq!(got, want, "upstream counts, n = {n}, {threads} threads");
                let got = pool.install(|| accumulate_counts_linked(&linked, rcv, n * n));
                assert_eq!(got, want, "linked counts, n = {n}, {threads} threads");
                if threads == 1 {
                    // Called from outside any pool (this test's thread): the caller and every
                    // thread of the global pool claim the work.
                    for stretch in [1, 7, 1000, 1 << 14] {
                        let got = accumulate_counts_in_stretches(&linked, rcv, n * n, stretch);
                        assert_eq!(got, want, "from outside the pool, stretches of {stretch}");
                    }
                }
                // Stretches cut anywhere (through branches, trees and tree starts) join up.
                for stretch in [1, 2, 3, 7, 64, 1000] {
                    let got = pool
                        .install(|| accumulate_counts_in_stretches(&linked, rcv, n * n, stretch));
                    assert_eq!(
                        got, want,
                        "stretches of {stretch}, n = {n}, {threads} threads"
                    );
                }
                // The river candidates: the order filtered by area, without the full maps.
                let order = flow_order_sequential(rcv, *n);
                for (cell, min) in [(1.0f32, 1.0f32), (0.25, 3.0), (4.0, 40.0)] {
                    let want: Vec<(u32, f32)> = order
                        .iter()
                        .map(|&c| (c, want[c as usize] as f32 * cell))
                        .filter(|&(_, a)| a >= min)
                        .collect();
                    let got = pool.install(|| river_candidates(rcv, *n, cell, min));
                    assert_eq!(got, want, "river candidates, n = {n}, {threads} threads");
                }
            }
        }
    }

    /// Two bowls (one deeper, one shallow) joined by a saddle exactly at the spill level of
    /// both, in a plateau sloping to a notch on the border.
    fn two_bowls() -> (Vec<f32>, usize) {
        let n = 40;
        let mut h = vec![10.0f32; n * n];
        for z in 0..n {
            for x in 0..n {
                let i = z * n + x;
                let (fx, fz) = (x as f32, z as f32);
                let a = ((fx - 12.0).powi(2) + (fz - 20.0).powi(2)).sqrt();
                let b = ((fx - 27.0).powi(2) + (fz - 20.0).powi(2)).sqrt();
                if a < 6.0 {
                    h[i] = 4.0 + a;
                } else if b < 6.0 {
                    h[i] = 9.0 + 0.1 * b;
                }
            }
        }
        // The saddle between them (at the bowls' spill level, 10) and a notch in the rim of
        // the map: the border outlets sit lower than the plateau.
        h[20 * n + 19] = 10.0;
        h[20 * n] = 2.0;
        (h, n)
    }

    #[test]
    fn lakes_are_the_flat_components_under_the_filled_surface() {
        let (h, n) = two_bowls();
        let filled = depression_fill(&h, n, -1.0);
        let labels = lake_labels(&h, &filled, n);
        let roots: Vec<usize> = (0..n * n).filter(|&i| labels[i] == i as u32).collect();
        assert_eq!(roots.len(), 2, "two bowls, two components");
        for i in 0..n * n {
            let l = labels[i];
            assert_eq!(l != NONE, filled[i] > h[i], "sample {i}");
            if l != NONE {
                // Flat, labelled with the smallest index of the component.
                assert_eq!(filled[i], filled[l as usize]);
                assert!(l as usize <= i);
                for_neighbours(i, n, |j, _| {
                    if labels[j] != NONE {
                        assert_eq!(labels[j], l, "neighbours {i} {j}");
                    }
                });
            }
        }
        let rcv = receivers_with_flats(&filled, n, -1.0, &h);
        let s = DrainageSettings {
            lake_min_depth: 1.5,
            lake_min_area: 4.0,
            ..Default::default()
        };
        let (lakes, id) = lakes_of(&h, &filled, &rcv, &labels, 1.0, &s);
        // The shallow bowl (1 m deep) is no lake; the deep one is lake 0.
        assert_eq!(lakes.len(), 1);
        let lake = &lakes[0];
        assert_eq!(lake.level, 10.0);
        assert_eq!(lake.deepest as usize, 20 * n + 12);
        assert_eq!(lake.depth, 6.0);
        assert_eq!(
            lake.samples as usize,
            id.iter().filter(|&&l| l == 0).count()
        );
        // The outlet: outside the lake, at its level, next to it, drained into from it.
        let o = lake.outlet as usize;
        assert_eq!(id[o], NONE);
        assert_eq!(filled[o], lake.level);
        assert!((0..n * n).any(|i| id[i] == 0 && rcv[i] as usize == o));
        // Lowering the minimum depth makes the shallow bowl a lake too, numbered after the
        // first (by smallest sample index).
        let s2 = DrainageSettings {
            lake_min_depth: 0.5,
            ..s
        };
        let (lakes2, id2) = lakes_of(&h, &filled, &rcv, &labels, 1.0, &s2);
        assert_eq!(lakes2.len(), 2);
        assert_eq!(lakes2[0], lakes[0]);
        assert_eq!(id2[20 * n + 27], 1);
    }

    /// The drainage stage's lean drainage has the bits of the full one in every field it keeps
    /// (rivers included, whose areas it takes from the counts), on the bowls and on a real
    /// island before its drainage stage (lakes, rivers, the sea).
    #[test]
    fn lean_drainage_equals_the_full_one_where_it_keeps_fields() {
        let p = crate::params::IslandParams {
            resolution: 257,
            ..Default::default()
        };
        let island = crate::pipeline::raw_heights(&p).unwrap();
        let (bowls, m) = two_bowls();
        let cases = [
            (bowls, m, 1.0, -1.0, 4.0),
            (island, 257, p.spacing(), 0.0, 400.0),
        ];
        for (h, n, spacing, sea, river_area) in cases {
            let s = DrainageSettings {
                river_area,
                lake_min_area: 4.0,
                ..Default::default()
            };
            let full = drainage(&h, n, spacing, sea, &s);
            let lean = drainage_lean(&h, n, spacing, sea, &s);
            assert!(!full.rivers.is_empty() && !full.lakes.is_empty(), "n {n}");
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&lean.filled), bits(&full.filled));
            assert_eq!(lean.receivers, full.receivers);
            assert_eq!(lean.lake_id, full.lake_id);
            assert_eq!(lean.lakes, full.lakes);
            assert_eq!(lean.rivers, full.rivers);
            assert_eq!((lean.n, lean.spacing, lean.sea_level), (n, spacing, sea));
            assert!(lean.order.is_empty() && lean.area.is_empty() && lean.water_level.is_empty());
        }
    }

    #[test]
    fn counts_match_the_float_accumulation_and_sum_to_the_grid() {
        let (h, n) = two_bowls();
        let d = drainage(&h, n, 1.0, -1.0, &DrainageSettings::default());
        let counts = accumulate_counts(&d.order, &d.receivers, n * n);
        let float = accumulate(&d.order, &d.receivers, n * n, 1.0);
        for i in 0..n * n {
            assert_eq!(counts[i] as f32, float[i], "sample {i}");
            assert_eq!(d.area[i], counts[i] as f32);
        }
        let at_outlets: u64 = (0..n * n)
            .filter(|&i| d.is_outlet(i))
            .map(|i| counts[i] as u64)
            .sum();
        assert_eq!(at_outlets, (n * n) as u64);
    }

    /// [`flood`] (labels from the filled surface) and [`depression_fill`] against the classic
    /// Priority-Flood, [`flood_classic`]: the same bits on pitted random fields (ties, plateaus, sea patches, NaN) and on a real
    /// island before its drainage stage (dammed lakes, pits along the rivers).
    #[test]
    fn fill_equals_the_classic_priority_flood() {
        let mut next = uniform(0x9e37_79b9u32);
        let mut fields: Vec<(Vec<f32>, usize, f32)> = Vec::new();
        for n in [1usize, 2, 3, 7, 33, 100] {
            for sea in [0.0f32, -3.0, 50.0] {
                // `+ 0.0`: no -0.0, whose filled value may be either zero (as in the classic).
                let mut h: Vec<f32> = (0..n * n)
                    .map(|_| ((next() * 14.0 - 2.0) * 2.0).round() * 0.5 + 0.0)
                    .collect();
                if n > 3 {
                    h[n + 1] = f32::NAN;
                }
                fields.push((h, n, sea));
            }
        }
        let p = crate::params::IslandParams {
            resolution: 257,
            ..Default::default()
        };
        let mut h = crate::pipeline::raw_heights(&p).unwrap();
        crate::pipeline::erosion_stage(&p, &mut h);
        crate::basins::dig_lake_basins(&mut h, 257, p.spacing(), 0.0, &p.basins, p.seed);
        fields.push((h, 257, 0.0));
        for (h, n, sea) in fields {
            let want = flood_classic(&h, n, sea);
            let got = flood(&h, n, sea);
            let fill = depression_fill(&h, n, sea);
            for (i, w) in want.filled.iter().enumerate() {
                let w = w.to_bits();
                assert_eq!(got.filled[i].to_bits(), w, "n {n} sea {sea} sample {i}");
                assert_eq!(fill[i].to_bits(), w, "n {n} sea {sea} sample {i}");
            }
            assert_eq!(got.kind, want.kind, "n {n} sea {sea}");
            assert_eq!(got.pit, want.pit, "n {n} sea {sea}");
            let bits =
                |p: &[(f32, u32)]| p.iter().map(|&(l, s)| (l.to_bits(), s)).collect::<Vec<_>>();
            assert_eq!(bits(&got.pits), bits(&want.pits), "n {n} sea {sea}");
        }
    }

    /// A walled island whose inner mountain is reached only through the priority queue: the
    /// flood of the moat behind the wall leaves an ascending search of thousands of samples,
    /// which [`ascend_adaptive`] splits between threads, with craters on the mountain whose
    /// rims only the split-off searches find. On 1 to 4 threads the fill equals the classic
    /// Priority-Flood bit for bit, and every raised sample is among those `fill_raised` lists.
    #[test]
    fn fill_splitting_a_large_ascending_search_equals_the_classic_flood() {
        let n = 257usize;
        let c = (n / 2) as f32;
        let mut next = uniform(0x2545_f491u32);
        let craters: Vec<(f32, f32)> = (0..24)
            .map(|k| {
                let a = k as f32 * 0.9;
                let r = 12.0 + (k % 5) as f32 * 9.0;
                (c + r * det_math::cos(a), c + r * det_math::sin(a))
            })
            .collect();
        let h: Vec<f32> = (0..n * n)
            .map(|i| {
                let (x, z) = ((i % n) as f32, (i / n) as f32);
                let d = ((x - c) * (x - c) + (z - c) * (z - c)).sqrt();
                // Sea beyond 120 samples, a wall at 100-106, a moat at 1 m inside it, then a
                // cone rising to 70 m at the centre.
                let mut v = if d > 120.0 {
                    -5.0
                } else if d > 106.0 {
                    (120.0 - d) * 0.5
                } else if d > 100.0 {
                    12.0
                } else if d > 80.0 {
                    1.0
                } else {
                    1.0 + (80.0 - d) * 0.9
                };
                for &(cx, cz) in &craters {
                    let e = ((x - cx) * (x - cx) + (z - cz) * (z - cz)).sqrt();
                    if e < 3.5 {
                        v -= 4.0 - e;
                    }
                }
                // Quantised jitter: ties and small pits everywhere.
                v + (next() * 4.0).round() * 0.25 + 0.0
            })
            .collect();
        let want = flood_classic(&h, n, 0.0);
        let raised_count = want.filled.iter().zip(&h).filter(|(f, h)| f > h).count();
        assert!(
            raised_count > 1000,
            "the moat and the craters are filled: {raised_count}"
        );
        for threads in 1..=4 {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let (filled, raised) = pool.install(|| fill_raised(&h, n, 0.0));
            for (i, w) in want.filled.iter().enumerate() {
                assert_eq!(
                    filled[i].to_bits(),
                    w.to_bits(),
                    "{threads} threads, sample {i}"
                );
            }
            let mut listed = vec![false; n * n];
            for &i in &raised {
                listed[i as usize] = true;
            }
            for i in 0..n * n {
                if filled[i] > h[i] {
                    assert!(listed[i], "{threads} threads: raised sample {i} not listed");
                }
            }
        }
    }
}
