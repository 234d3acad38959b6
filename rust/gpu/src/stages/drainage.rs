//! The drainage passes (`shaders/drainage.wgsl`), GPU twins of `island_core::drainage`'s
//! functions of the same name, and [`Rec::drainage`], the GPU twin of
//! `island_core::drainage::drainage` used by the GPU pipeline's drainage stage.
//!
//! On the GPU, all exact (order-free definitions: copies, integer counts, mins):
//! `depression_fill` and `flat_routing` (`depression.wgsl`), `receivers`, `accumulate`
//! (integer upstream counts, then `areas`), `lake_labels` and the per-lake statistics of
//! `lakes_of`. On the host: `flow_order` (the river list and the channel carving run
//! downstream first over it; a depth-first stack order, sequential) and the assembly of the
//! few lakes the GPU lists (sorted by label, the core's numbering) and of the river samples.

use super::channels::ChannelPasses;
use super::depression::DepressionPasses;
use crate::ctx::{grid2, packed_word_groups};
use crate::error::GpuError;
use crate::passes::Entry;
use crate::recorder::{f32s, u32s, Rec};
use crate::run::Run;
use crate::stages::host::*;
use crate::uniforms::{self as u, Grid};
use island_core::basins::dig_lake_basins;
use island_core::params::*;
use island_core::pipeline::{carve_settings, hydrology, Hydrology};

use super::channels::{CarveInput, CarveScratch};
use super::depression::DepressionBufs;
use crate::uniforms::{DRAIN_LAKE_WORDS, DRAIN_SAMPLE_WORDS};
use island_core::drainage::{
    flow_order, lake_water_levels, river_samples, Drainage, DrainageSettings, Lake, NONE,
};

/// The entry points this module dispatches (registered in `crate::shaders`).
const RECEIVERS: Entry = Entry::new("drainage", "receivers");
const PACK_RECEIVERS: Entry = Entry::new("drainage", "pack_receivers");
const ACCUMULATE_INIT: Entry = Entry::new("drainage", "accumulate_init");
const ACCUMULATE: Entry = Entry::new("drainage", "accumulate");
const ACCUMULATE_AREA: Entry = Entry::new("drainage", "accumulate_area");
const LAKE_INIT: Entry = Entry::new("drainage", "lake_init");
const LAKE_UNION: Entry = Entry::new("drainage", "lake_union");
const LAKE_FLATTEN: Entry = Entry::new("drainage", "lake_flatten");
const LAKE_STATS: Entry = Entry::new("drainage", "lake_stats");
const LAKE_DEEPEST: Entry = Entry::new("drainage", "lake_deepest");
const LAKE_LIST: Entry = Entry::new("drainage", "lake_list");
const LAKE_MARK: Entry = Entry::new("drainage", "lake_mark");
const SAMPLE_LIST: Entry = Entry::new("drainage", "sample_list");
const CARVE_CHANGES: Entry = Entry::new("drainage", "carve_changes");

/// Most lakes the GPU lists; with more (only with tiny `lake_min_area` and `lake_min_depth`)
/// [`Rec::drainage`] fails with [`GpuError::TooLarge`] and the caller falls back to the CPU.
pub(crate) const MAX_LAKES: u32 = 1 << 16;
/// Lakes of the list read back with the drainage's products (24 bytes each); a longer list
/// takes a second round trip.
const LAKES_READ_FIRST: u32 = 1024;

/// Room of the compact lists of an `n × n` grid (`sample_list`, `carve_changes`): an eighth of
/// the samples. A longer list (only with a tiny `river_area`, or a carving that changes most of
/// the island) takes the full planes instead.
fn list_room(n: usize) -> u32 {
    ((n * n) / 8).max(1024) as u32
}

/// Share of the samples `sample_list` reads with its first round trip (see
/// [`list_read_first`]): 1/96, 0.21 bytes per sample. Default islands list 0 to 0.83 % of
/// their samples (8709 of 1025² for the longest of seeds 1–16).
const SAMPLES_READ_SHARE: usize = 96;
/// Share of the samples `carve_changes` reads with its first round trip: 1/24, 0.33 bytes per
/// sample. The carving of default islands changes 0.02 to 3.8 % (39 686 of 1025² for the
/// longest of seeds 1–16).
const CHANGES_READ_SHARE: usize = 24;

/// Entries of a compact list read with the round trip it belongs to (a longer list takes a
/// second one): `1/share` of the samples, at least 1024, at most the list's room. A second
/// round trip costs more than these bytes on any GPU (with 1/128 and 1/40, two of the 16
/// seeds took both second round trips).
fn list_read_first(n: usize, share: usize) -> u32 {
    ((n * n) / share).max(1024).min(list_room(n) as usize) as u32
}

/// Bytes of a compact list's count word and its first `entries` entries of `words` words.
fn list_bytes(entries: u32, words: u32) -> u64 {
    4 * (1 + entries as u64 * words as u64)
}

/// What [`DrainagePasses::drainage`] reads back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DrainageRead {
    /// Every plane (receivers, areas, lake labels; the filled surface with `filled`): the
    /// core's `Drainage`, bit for bit (without `filled`, its `filled` is empty).
    Full { filled: bool },
    /// What the pipeline's carving and water map read, compact (`sample_list`): the samples
    /// draining at least `river_area` (the river candidates) and the lake samples. The
    /// `Drainage` then has the core's `lakes`, `lake_id`, `water_level` and `rivers`, bit for
    /// bit; its `order` is the core's flow order restricted to the river candidates, and its
    /// `receivers`, `area` and `filled` hold the listed samples' values (elsewhere: the sample
    /// itself, 0, NaN). More listed samples than [`list_room`] (a tiny `river_area`, a lake
    /// over an eighth of the map): the planes are read in a second round trip and the
    /// `Drainage` is the core's, whole, as with `Full { filled: true }`.
    Lean,
}

/// Buffers of the drainage passes on an `n × n` grid.
pub(crate) struct DrainageBufs {
    pub n: usize,
    pub dep: DepressionBufs,
    pub filled: wgpu::Buffer,
    /// Flat receivers, then (after `receivers`) the drainage areas.
    flat_area: wgpu::Buffer,
    pub rcv: wgpu::Buffer,
    /// `accumulate`'s words (count and donors to come), then the lake of every sample
    /// (`lake_mark`: its label, or `NONE`).
    acc: wgpu::Buffer,
    pub label: wgpu::Buffer,
    lake_samples: wgpu::Buffer,
    lake_low: wgpu::Buffer,
    lake_deep: wgpu::Buffer,
    lake_outlet: wgpu::Buffer,
    /// The lake list: count, then [`DRAIN_LAKE_WORDS`] words per lake.
    lakes: wgpu::Buffer,
    /// The receivers as direction bytes, four per word (the read-back's format).
    rcv_codes: wgpu::Buffer,
    /// `sample_list`: count, then [`DRAIN_SAMPLE_WORDS`] words per listed sample.
    samples: wgpu::Buffer,
    /// `carve_changes`: count, then (index, height) per changed sample.
    changes: wgpu::Buffer,
}

impl DrainageBufs {
    pub fn new(rec: &Rec, n: usize) -> DrainageBufs {
        let gpu = rec.gpu;
        let plane = (n * n * 4) as u64;
        DrainageBufs {
            n,
            dep: DepressionBufs::once_per_generation(rec, n),
            filled: gpu.storage("drainage filled", plane),
            flat_area: gpu.storage("drainage flat|area", plane),
            rcv: gpu.storage("drainage rcv", plane),
            acc: gpu.storage("drainage acc", plane),
            label: gpu.storage("lake label", plane),
            lake_samples: gpu.storage("lake samples", plane),
            lake_low: gpu.storage("lake low", plane),
            lake_deep: gpu.storage("lake deepest", plane),
            lake_outlet: gpu.storage("lake outlet", plane),
            lakes: gpu.storage(
                "lake list",
                4 * (1 + MAX_LAKES as u64 * DRAIN_LAKE_WORDS as u64),
            ),
            rcv_codes: gpu.storage("receiver codes", ((n * n).div_ceil(4) * 4) as u64),
            samples: gpu.storage(
                "drainage samples",
                list_bytes(list_room(n), DRAIN_SAMPLE_WORDS),
            ),
            changes: gpu.storage("carve changes", list_bytes(list_room(n), 2)),
        }
    }
}

impl DrainageBufs {
    /// The inputs and scratch of [`Rec::carve_rivers`] after [`Rec::drainage`] gave `d`: its
    /// filled surface, receivers and lakes stay on the GPU; the lake statistics' planes, used,
    /// are the scratch.
    pub fn carve_io<'b>(&'b self, d: &'b Drainage) -> (CarveInput<'b>, CarveScratch<'b>) {
        (
            CarveInput {
                filled: &self.filled,
                lake: &self.acc,
                rcv: &self.rcv,
                rivers: &d.rivers,
                spacing: d.spacing,
                sea_level: d.sea_level,
            },
            CarveScratch {
                riv: &self.lake_samples,
                hkey: &self.lake_low,
                bed: &self.lake_deep,
            },
        )
    }
}

/// What [`Rec::drainage`] took: relaxation dispatches of each relaxed pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct DrainageIters {
    pub depression_fill: u32,
    pub flat_routing: u32,
}

pub(crate) fn uniform(sea: f32, cell_area: f32, s: &DrainageSettings, n: usize) -> u::Drainage {
    u::Drainage {
        sea_level: sea,
        cell_area,
        lake_min_depth: s.lake_min_depth,
        lake_min_area: s.lake_min_area,
        max_lakes: MAX_LAKES,
        river_area: s.river_area,
        max_samples: list_room(n),
    }
}

/// The lakes of the GPU's list (in no order; [`DRAIN_LAKE_WORDS`] words each), numbered by
/// label as the core numbers them, and the lake of every sample.
pub(crate) fn lakes_from_list(list: &[u32], labels: &[u32]) -> (Vec<Lake>, Vec<u32>) {
    let mut entries: Vec<&[u32]> = list.chunks_exact(DRAIN_LAKE_WORDS as usize).collect();
    entries.sort_unstable_by_key(|e| e[0]);
    let roots: Vec<u32> = entries.iter().map(|e| e[0]).collect();
    let lakes = entries
        .iter()
        .map(|e| Lake {
            samples: e[1],
            deepest: e[2],
            outlet: e[3],
            level: f32::from_bits(e[4]),
            depth: f32::from_bits(e[5]),
        })
        .collect();
    let lake_id = labels
        .iter()
        .map(|&l| {
            if l == NONE {
                return NONE;
            }
            roots.binary_search(&l).map_or(NONE, |k| k as u32)
        })
        .collect();
    (lakes, lake_id)
}

/// The recording of these passes (`rec.method(..)` with this trait in scope).
pub(crate) trait DrainagePasses {
    /// `island_core::drainage::receivers` over `b.filled` and `b.flat_area` (the flat
    /// receivers) into `b.rcv`.
    fn drainage_receivers(
        &mut self,
        b: &DrainageBufs,
        h: &wgpu::Buffer,
        p: &u::Drainage,
    ) -> Result<(), GpuError>;

    /// `island_core::drainage::accumulate_counts` of the receivers `rcv` into `acc` (one
    /// word per sample, the count in its high bits), then `areas` into `area`.
    fn accumulate(
        &mut self,
        n: usize,
        rcv: &wgpu::Buffer,
        acc: &wgpu::Buffer,
        area: &wgpu::Buffer,
        p: &u::Drainage,
    ) -> Result<(), GpuError>;

    /// `island_core::drainage::lake_labels` of `h` and `b.filled` into `b.label` (three
    /// dispatches, see the shader). Clears the lake statistics.
    fn lake_labels(&mut self, b: &DrainageBufs, h: &wgpu::Buffer) -> Result<(), GpuError>;

    /// The per-lake statistics of `island_core::drainage::lakes_of` (after
    /// [`Rec::lake_labels`] and the receivers) and the list of lakes.
    fn lake_list(
        &mut self,
        b: &DrainageBufs,
        h: &wgpu::Buffer,
        p: &u::Drainage,
    ) -> Result<(), GpuError>;

    /// `island_core::drainage::drainage` of the heights `h` (`b.n²`, `spacing` metres apart,
    /// sea at or below `sea`): everything per sample on the GPU (see the module
    /// documentation), then what `read` says read back for the host's flow order, lake list
    /// and river samples (one round trip, two with a long list).
    fn drainage(
        &mut self,
        b: &DrainageBufs,
        h: &wgpu::Buffer,
        spacing: f32,
        sea: f32,
        settings: &DrainageSettings,
        read: DrainageRead,
    ) -> Result<(Drainage, DrainageIters), GpuError>;

    /// The samples whose height in `h` differs from `before` (`carve_changes`), as (index,
    /// height) in index order, or `None` when more than [`list_room`] changed. One round trip,
    /// two with a long list.
    fn changed_heights(
        &mut self,
        b: &DrainageBufs,
        h: &wgpu::Buffer,
        before: &wgpu::Buffer,
        p: &u::Drainage,
        staging: &wgpu::Buffer,
    ) -> Result<Option<Vec<(usize, f32)>>, GpuError>;
}

impl DrainagePasses for Rec<'_> {
    /// `island_core::drainage::receivers` over `b.filled` and `b.flat_area` (the flat
    /// receivers) into `b.rcv`.
    fn drainage_receivers(
        &mut self,
        b: &DrainageBufs,
        h: &wgpu::Buffer,
        p: &u::Drainage,
    ) -> Result<(), GpuError> {
        self.ensure_slots(1)?;
        self.pass(RECEIVERS)
            .params(p)
            .read("filled", &b.filled)
            .read("flat", &b.flat_area)
            .read("heights", h)
            .write("rcv", &b.rcv)
            .run(grid2(b.n))
    }

    /// `island_core::drainage::accumulate_counts` of the receivers `rcv` into `acc` (one
    /// word per sample, the count in its high bits), then `areas` into `area`.
    fn accumulate(
        &mut self,
        n: usize,
        rcv: &wgpu::Buffer,
        acc: &wgpu::Buffer,
        area: &wgpu::Buffer,
        p: &u::Drainage,
    ) -> Result<(), GpuError> {
        let g = grid2(n);
        self.ensure_slots(3)?;
        self.pass(ACCUMULATE_INIT)
            .read("rcv", rcv)
            .write("acc", acc)
            .run(g)?;
        self.pass(ACCUMULATE)
            .read("rcv", rcv)
            .read_write("acc", acc)
            .run(g)?;
        self.pass(ACCUMULATE_AREA)
            .params(p)
            .read("acc", acc)
            .write("area", area)
            .run(g)
    }

    /// `island_core::drainage::lake_labels` of `h` and `b.filled` into `b.label` (three
    /// dispatches, see the shader). Clears the lake statistics.
    fn lake_labels(&mut self, b: &DrainageBufs, h: &wgpu::Buffer) -> Result<(), GpuError> {
        let g = grid2(b.n);
        self.ensure_slots(1)?;
        self.pass(LAKE_INIT)
            .read("filled", &b.filled)
            .read("heights", h)
            .write("label", &b.label)
            .write("lake_samples", &b.lake_samples)
            .write("lake_low", &b.lake_low)
            .write("lake_deep", &b.lake_deep)
            .write("lake_outlet", &b.lake_outlet)
            .run(g)?;
        self.ensure_slots(2)?;
        self.pass(LAKE_UNION)
            .read("filled", &b.filled)
            .read("heights", h)
            .read_write("label", &b.label)
            .run(g)?;
        self.pass(LAKE_FLATTEN)
            .read("filled", &b.filled)
            .read("heights", h)
            .read_write("label", &b.label)
            .run(g)
    }

    /// The per-lake statistics of `island_core::drainage::lakes_of` (after
    /// [`Rec::lake_labels`] and the receivers) and the list of lakes.
    fn lake_list(
        &mut self,
        b: &DrainageBufs,
        h: &wgpu::Buffer,
        p: &u::Drainage,
    ) -> Result<(), GpuError> {
        let g = grid2(b.n);
        self.ensure_slots(3)?;
        self.pass(LAKE_STATS)
            .read("heights", h)
            .read("rcv", &b.rcv)
            .read("label", &b.label)
            .read_write("lake_samples", &b.lake_samples)
            .read_write("lake_low", &b.lake_low)
            .read_write("lake_outlet", &b.lake_outlet)
            .run(g)?;
        self.pass(LAKE_DEEPEST)
            .read("heights", h)
            .read("label", &b.label)
            .read("lake_low", &b.lake_low)
            .read_write("lake_deep", &b.lake_deep)
            .run(g)?;
        self.enc.clear_buffer(&b.lakes, 0, Some(4));
        self.pass(LAKE_LIST)
            .params(p)
            .read("filled", &b.filled)
            .read("label", &b.label)
            .read("lake_samples", &b.lake_samples)
            .read("lake_low", &b.lake_low)
            .read("lake_deep", &b.lake_deep)
            .read("lake_outlet", &b.lake_outlet)
            .read_write("lakes", &b.lakes)
            .run(g)
    }

    /// `island_core::drainage::drainage` of the heights `h` (`b.n²`, `spacing` metres apart,
    /// sea at or below `sea`): everything per sample on the GPU (see the module
    /// documentation), then the receivers (one direction byte each), areas, lake labels and,
    /// with `filled`, the filled surface read back for the host's flow order, lake list and
    /// river samples. The same `Drainage`, bit for bit, as the core's (without `filled`, its
    /// `filled` is empty).
    fn drainage(
        &mut self,
        b: &DrainageBufs,
        h: &wgpu::Buffer,
        spacing: f32,
        sea: f32,
        settings: &DrainageSettings,
        read: DrainageRead,
    ) -> Result<(Drainage, DrainageIters), GpuError> {
        let n = b.n;
        let len = n * n;
        let cell_area = spacing * spacing;
        let p = uniform(sea, cell_area, settings, n);
        let (depression_fill, flat_routing) =
            self.fill_and_route(&b.dep, h, &b.filled, &b.flat_area, sea)?;
        let iters = DrainageIters {
            depression_fill,
            flat_routing,
        };
        self.drainage_receivers(b, h, &p)?;
        // The flat receivers are used: their buffer takes the areas.
        self.accumulate(n, &b.rcv, &b.acc, &b.flat_area, &p)?;
        self.lake_labels(b, h)?;
        self.lake_list(b, h, &p)?;
        // `acc` is used: it takes the lake of every sample (for the carving).
        self.ensure_slots(1)?;
        self.pass(LAKE_MARK)
            .params(&p)
            .read("filled", &b.filled)
            .read("label", &b.label)
            .read("lake_samples", &b.lake_samples)
            .read("lake_low", &b.lake_low)
            .write("lake_of", &b.acc)
            .run(grid2(n))?;
        let gpu = self.gpu;
        let plane = (len * 4) as u64;
        // The products and the start of the lake list (its count and the first
        // LAKES_READ_FIRST lakes) in one round trip; a longer list in a second.
        let lake_bytes = |lakes: u64| 4 * (1 + lakes * DRAIN_LAKE_WORDS as u64);
        let first = lake_bytes(LAKES_READ_FIRST.min(MAX_LAKES) as u64).min(b.lakes.size());
        let mut want = vec![(&b.lakes, first)];
        let sample_first = list_bytes(list_read_first(n, SAMPLES_READ_SHARE), DRAIN_SAMPLE_WORDS);
        match read {
            DrainageRead::Full { filled } => {
                // The receivers as one direction byte each.
                self.ensure_slots(1)?;
                self.pass(PACK_RECEIVERS)
                    .read("rcv", &b.rcv)
                    .write("rcv_codes", &b.rcv_codes)
                    .run(packed_word_groups(len))?;
                want.push((&b.label, plane));
                want.push((&b.flat_area, plane));
                want.push((&b.rcv_codes, len as u64));
                if filled {
                    want.push((&b.filled, plane));
                }
            }
            DrainageRead::Lean => {
                self.enc.clear_buffer(&b.samples, 0, Some(4));
                self.ensure_slots(1)?;
                self.pass(SAMPLE_LIST)
                    .params(&p)
                    .read("area", &b.flat_area)
                    .read("rcv", &b.rcv)
                    .read("lake_of", &b.acc)
                    .read("filled", &b.filled)
                    .read_write("samples", &b.samples)
                    .run(grid2(n))?;
                want.push((&b.samples, sample_first));
            }
        }
        let mut parts = self.read_back(&want, None)?;
        parts.reverse();
        let mut list = u32s(&parts.pop().expect("the lake list"));
        let count = list[0];
        if count > MAX_LAKES {
            return Err(GpuError::TooLarge(format!(
                "{count} lakes; the GPU drainage lists at most {MAX_LAKES}"
            )));
        }
        if lake_bytes(count as u64) > first {
            list = u32s(&gpu.read_back(&[(&b.lakes, lake_bytes(count as u64))], None)?[0]);
        }
        list.truncate(1 + count as usize * DRAIN_LAKE_WORDS as usize);
        let lakes = &list[1..];
        let d = match read {
            DrainageRead::Full { .. } => full_drainage(parts, lakes, n, spacing, sea, settings),
            DrainageRead::Lean => {
                let mut words = u32s(&parts.pop().expect("the sample list"));
                let count = words[0];
                if count > list_room(n) {
                    // Too many to list: the planes, in a second round trip.
                    self.ensure_slots(1)?;
                    self.pass(PACK_RECEIVERS)
                        .read("rcv", &b.rcv)
                        .write("rcv_codes", &b.rcv_codes)
                        .run(packed_word_groups(len))?;
                    let want = [
                        (&b.filled, plane),
                        (&b.rcv_codes, len as u64),
                        (&b.flat_area, plane),
                        (&b.label, plane),
                    ];
                    let parts = self.read_back(&want, None)?;
                    return Ok((
                        full_drainage(parts, lakes, n, spacing, sea, settings),
                        iters,
                    ));
                }
                let bytes = list_bytes(count, DRAIN_SAMPLE_WORDS);
                if bytes > sample_first {
                    words = u32s(&gpu.read_back(&[(&b.samples, bytes)], None)?[0]);
                }
                words.truncate(1 + count as usize * DRAIN_SAMPLE_WORDS as usize);
                lean_drainage(&words[1..], lakes, n, spacing, sea, settings)?
            }
        };
        Ok((d, iters))
    }

    fn changed_heights(
        &mut self,
        b: &DrainageBufs,
        h: &wgpu::Buffer,
        before: &wgpu::Buffer,
        p: &u::Drainage,
        staging: &wgpu::Buffer,
    ) -> Result<Option<Vec<(usize, f32)>>, GpuError> {
        self.enc.clear_buffer(&b.changes, 0, Some(4));
        self.ensure_slots(1)?;
        self.pass(CARVE_CHANGES)
            .params(p)
            .read("heights", h)
            .read("before", before)
            .read_write("changes", &b.changes)
            .run(grid2(b.n))?;
        let first = list_bytes(list_read_first(b.n, CHANGES_READ_SHARE), 2);
        let mut words = u32s(&self.read_back(&[(&b.changes, first)], Some(staging))?[0]);
        let count = words[0];
        if count > list_room(b.n) {
            return Ok(None);
        }
        if list_bytes(count, 2) > first {
            words = u32s(&self.read_back(&[(&b.changes, list_bytes(count, 2))], Some(staging))?[0]);
        }
        let mut out: Vec<(usize, f32)> = words[1..1 + 2 * count as usize]
            .chunks_exact(2)
            .map(|e| (e[0] as usize, f32::from_bits(e[1])))
            .collect();
        out.sort_unstable_by_key(|e| e.0);
        Ok(Some(out))
    }
}

/// The core's `Drainage` from the read-back planes (popped from the end: lake labels, areas,
/// receiver codes and, when read, the filled surface) and the lake list.
fn full_drainage(
    mut parts: Vec<Vec<u8>>,
    lake_list: &[u32],
    n: usize,
    spacing: f32,
    sea: f32,
    settings: &DrainageSettings,
) -> Drainage {
    let labels = u32s(&parts.pop().expect("labels"));
    let area = f32s(&parts.pop().expect("areas"));
    let codes = parts.pop().expect("receivers");
    let receivers: Vec<u32> = codes[..n * n]
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let (dx, dz) = (c as usize % 3, c as usize / 3);
            (i + dz * n + dx - n - 1) as u32
        })
        .collect();
    let filled = parts.pop().map(|b| f32s(&b)).unwrap_or_default();
    let order = flow_order(&receivers, n);
    let planes = Planes {
        receivers,
        area,
        labels,
        filled,
        order,
    };
    planes.drainage(lake_list, n, spacing, sea, settings)
}

/// What the host read of a drainage, before the lakes and rivers are made from it.
struct Planes {
    receivers: Vec<u32>,
    area: Vec<f32>,
    /// Lake label of every sample (`NONE` outside lakes).
    labels: Vec<u32>,
    filled: Vec<f32>,
    order: Vec<u32>,
}

impl Planes {
    /// The `Drainage`: the lakes of `lake_list` numbered as the core numbers them, the lake
    /// and water level of every sample, and the river samples along `order`.
    fn drainage(
        self,
        lake_list: &[u32],
        n: usize,
        spacing: f32,
        sea: f32,
        settings: &DrainageSettings,
    ) -> Drainage {
        let (lakes, lake_id) = lakes_from_list(lake_list, &self.labels);
        let water_level = lake_water_levels(&lakes, &lake_id);
        let rivers = river_samples(&self.order, &self.area, &lake_id, settings);
        Drainage {
            n,
            spacing,
            sea_level: sea,
            filled: self.filled,
            receivers: self.receivers,
            order: self.order,
            area: self.area,
            water_level,
            lake_id,
            lakes,
            rivers,
            raised: None,
        }
    }
}

/// The `Drainage` of [`DrainageRead::Lean`] from `sample_list`'s entries (in no order) and the
/// lake list (see there).
fn lean_drainage(
    entries: &[u32],
    lake_list: &[u32],
    n: usize,
    spacing: f32,
    sea: f32,
    settings: &DrainageSettings,
) -> Result<Drainage, GpuError> {
    let mut e: Vec<&[u32]> = entries.chunks_exact(DRAIN_SAMPLE_WORDS as usize).collect();
    e.sort_unstable_by_key(|x| x[0]);
    let len = n * n;
    let mut receivers: Vec<u32> = (0..len as u32).collect();
    let mut area = vec![0.0f32; len];
    let mut labels = vec![NONE; len];
    let mut filled = vec![f32::NAN; len];
    for x in &e {
        let i = x[0] as usize;
        receivers[i] = x[2];
        area[i] = f32::from_bits(x[1]);
        labels[i] = x[3];
        filled[i] = f32::from_bits(x[4]);
    }
    let candidates: Vec<&[u32]> = e
        .into_iter()
        .filter(|x| f32::from_bits(x[1]) >= settings.river_area)
        .collect();
    let order = candidate_order(&candidates).ok_or_else(|| {
        GpuError::Wgpu("drainage: a river candidate drains into an unlisted sample".into())
    })?;
    let planes = Planes {
        receivers,
        area,
        labels,
        filled,
        order,
    };
    Ok(planes.drainage(lake_list, n, spacing, sea, settings))
}

/// `island_core::drainage::flow_order` restricted to the river candidates `c` (entries of
/// `sample_list` sorted by index: index, area, receiver, …): the same samples in the same
/// order as the core's order filtered to them. A receiver drains at least as much as its
/// donor, so the candidates hold every candidate's receiver (`None` if not: a bug) and form
/// the top of each drainage tree; a depth-first walk from the outlets' donors (in index
/// order), donors in index order, visits them as the core's walk of the whole tree does.
fn candidate_order(c: &[&[u32]]) -> Option<Vec<u32>> {
    let at = |i: u32| c.binary_search_by_key(&i, |x| x[0]).ok();
    let mut donors: Vec<Vec<u32>> = vec![Vec::new(); c.len()];
    let mut roots = Vec::new();
    for x in c {
        let (i, r) = (x[0], x[2]);
        if r == i {
            // An outlet: not in the order.
            continue;
        }
        let k = at(r)?;
        if c[k][2] == r {
            roots.push(i);
        } else {
            donors[k].push(i);
        }
    }
    let mut order = Vec::with_capacity(c.len());
    let mut stack = Vec::new();
    for root in roots {
        stack.push(root);
        while let Some(i) = stack.pop() {
            order.push(i);
            let k = at(i)?;
            stack.extend(donors[k].iter().rev());
        }
    }
    Some(order)
}

/// Drainage, lakes and river carving (`island_core::pipeline::drainage_stage`): the dams on
/// the CPU (a greedy choice of sites on a coarse grid), the drainage and the carving on the GPU
/// ([`crate::drainage`], [`crate::channels`], bit-identical to the core's), the water map on
/// the CPU from the read-back drainage and carved heights. The heights stay on the GPU for the
/// normals and splat.
pub(crate) fn stage_drainage(run: &mut Run) -> Result<(), GpuError> {
    let (gpu, p) = (run.gpu, run.p);
    let (rec, r) = run.parts();
    let n = r.n;
    let spacing = p.spacing();
    let bytes = (n * n * 4) as u64;
    let mut parts = rec.read_back(&[(&r.heights, bytes)], Some(&r.staging))?;
    let mut heights = f32s(&parts.pop().expect("1 part"));
    if p.sculpt.is_some() {
        // A sculpted island drains on the CPU (`drainage_stage` holds the edited samples).
        run.hydro = Some(island_core::pipeline::drainage_stage(p, &mut heights));
        let (_, r) = run.parts();
        gpu.upload(&r.heights, 0, bytemuck::cast_slice(&heights));
        run.heights = heights;
        return Ok(());
    }
    if !dig_lake_basins(&mut heights, n, spacing, 0.0, &p.basins, p.seed).is_empty() {
        gpu.upload(&r.heights, 0, bytemuck::cast_slice(&heights));
    }
    if !super::depression::fits(gpu, n) {
        // The depression passes' 8-byte-per-sample buffer does not fit the adapter's storage
        // bindings (4097² on a 128 MiB limit): the drainage on the CPU (the same result).
        run.hydro = Some(cpu_drainage_rest(p, &mut heights));
        let (_, r) = run.parts();
        gpu.upload(&r.heights, 0, bytemuck::cast_slice(&heights));
        run.heights = heights;
        return Ok(());
    }
    let b = DrainageBufs::new(rec, n);
    // Only the river candidates and the lake samples come back (what the carving and the
    // water map read).
    let d = match rec.drainage(
        &b,
        &r.heights,
        spacing,
        0.0,
        &p.drainage,
        DrainageRead::Lean,
    ) {
        Ok((d, _)) => d,
        // More lakes than the GPU lists: all of it on the CPU (the same result).
        Err(GpuError::TooLarge(_)) => {
            run.hydro = Some(cpu_drainage_rest(p, &mut heights));
            let (_, r) = run.parts();
            gpu.upload(&r.heights, 0, bytemuck::cast_slice(&heights));
            run.heights = heights;
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let (input, scratch) = b.carve_io(&d);
    // The heights before the carving (the host has them) for `carve_changes`; the areas'
    // buffer is free now.
    rec.enc
        .copy_buffer_to_buffer(&r.heights, 0, &b.flat_area, 0, bytes);
    rec.carve_rivers(&r.heights, &input, &scratch, &carve_settings(p))?;
    let pu = uniform(0.0, spacing * spacing, &p.drainage, n);
    let heights = match rec.changed_heights(&b, &r.heights, &b.flat_area, &pu, &r.staging)? {
        // Only the samples the carving changed come back.
        Some(changes) => {
            for (i, v) in changes {
                heights[i] = v;
            }
            heights
        }
        None => {
            let mut parts = rec.read_back(&[(&r.heights, bytes)], Some(&r.staging))?;
            f32s(&parts.pop().expect("1 part"))
        }
    };
    run.hydro = Some(hydrology(p, &heights, &d));
    // The island's final heights (normals and splat do not change them).
    run.heights = heights;
    Ok(())
}

/// The drainage stage after the dams on the CPU (`heights` dammed).
fn cpu_drainage_rest(p: &IslandParams, heights: &mut [f32]) -> Hydrology {
    let (n, spacing) = (p.resolution as usize, p.spacing());
    let d = island_core::drainage::drainage(heights, n, spacing, 0.0, &p.drainage);
    island_core::channels::carve_rivers(heights, &d, &carve_settings(p));
    hydrology(p, heights, &d)
}

/// GPU [`island_core::drainage::receivers`] (D8 over the filled surface, flats to their
/// [`flat_routing`] receiver). The drainage area over them is [`flow_accumulation`] (the same kernel,
/// `island_core::drainage::accumulate`).
pub fn receivers(
    filled: &[f32],
    flat: &[u32],
    n: usize,
    sea_level: f32,
    heights: &[f32],
) -> Result<Vec<u32>, GpuError> {
    for (f, l) in [
        ("filled", filled.len()),
        ("flat", flat.len()),
        ("heights", heights.len()),
    ] {
        check_len(f, l, n * n)?;
    }
    with_gpu(Grid::new(n, 1.0, 0), |gpu, rec| {
        let fb = gpu.storage_init("filled", bytemuck::cast_slice(filled));
        let pb = gpu.storage_init("flat", bytemuck::cast_slice(flat));
        let hb = gpu.storage_init("heights", bytemuck::cast_slice(heights));
        let rb = gpu.storage("rcv", (n * n * 4) as u64);
        rec.pass(RECEIVERS)
            .params(&u::Drainage {
                sea_level,
                ..Default::default()
            })
            .read("filled", &fb)
            .read("flat", &pb)
            .read("heights", &hb)
            .write("rcv", &rb)
            .run(grid2(n))?;
        read_u32(rec, &rb, n * n)
    })
}

/// GPU [`island_core::drainage::accumulate_counts`] of the receivers `rcv` (`n²`, no flow order
/// needed) and [`island_core::drainage::areas`] with `cell_area`: the counts and the areas.
pub fn accumulate(rcv: &[u32], n: usize, cell_area: f32) -> Result<(Vec<u32>, Vec<f32>), GpuError> {
    check_len("rcv", rcv.len(), n * n)?;
    if let Some(i) = (0..n * n).find(|&i| {
        let r = rcv[i] as usize;
        r >= n * n || (r % n).abs_diff(i % n) > 1 || (r / n).abs_diff(i / n) > 1
    }) {
        return Err(bad(
            "rcv",
            format!("the receiver of {i} is not a neighbour or itself"),
        ));
    }
    with_gpu(Grid::new(n, 1.0, 0), |gpu, rec| {
        let rb = gpu.storage_init("rcv", bytemuck::cast_slice(rcv));
        let acc = gpu.storage("acc", (n * n * 4) as u64);
        let area = gpu.storage("area", (n * n * 4) as u64);
        let p = u::Drainage {
            cell_area,
            ..Default::default()
        };
        rec.accumulate(n, &rb, &acc, &area, &p)?;
        let words = read_u32(rec, &acc, n * n)?;
        let counts = words.iter().map(|w| w >> 4).collect();
        Ok((counts, read_f32(rec, &area, n * n)?))
    })
}

/// GPU [`island_core::drainage::lake_labels`] of `heights` and their filled surface `filled`
/// (both `n²`).
pub fn lake_labels(heights: &[f32], filled: &[f32], n: usize) -> Result<Vec<u32>, GpuError> {
    check_len("heights", heights.len(), n * n)?;
    check_len("filled", filled.len(), n * n)?;
    with_gpu(Grid::new(n, 1.0, 0), |gpu, rec| {
        let hb = gpu.storage_init("heights", bytemuck::cast_slice(heights));
        let b = DrainageBufs::new(rec, n);
        gpu.upload(&b.filled, 0, bytemuck::cast_slice(filled));
        rec.lake_labels(&b, &hb)?;
        read_u32(rec, &b.label, n * n)
    })
}

/// GPU [`island_core::drainage::drainage`] of `heights` (`n²`, `spacing` metres apart, sea at
/// or below `sea_level`; see `crate::drainage`): the same result and the relaxation
/// dispatches it took.
pub fn drainage(
    heights: &[f32],
    n: usize,
    spacing: f32,
    sea_level: f32,
    settings: &island_core::drainage::DrainageSettings,
) -> Result<(island_core::drainage::Drainage, DrainageIters), GpuError> {
    check_len("heights", heights.len(), n * n)?;
    settings.validate().map_err(|e| bad("drainage", e))?;
    with_gpu(Grid::new(n, 1.0, 0), |gpu, rec| {
        let hb = gpu.storage_init("heights", bytemuck::cast_slice(heights));
        let b = DrainageBufs::new(rec, n);
        rec.drainage(
            &b,
            &hb,
            spacing,
            sea_level,
            settings,
            DrainageRead::Full { filled: true },
        )
    })
}

/// The pipeline's compact read of the GPU drainage ([`DrainageRead::Lean`]) of `heights`
/// (arguments as [`drainage`]): its `Drainage` (lakes, lake of every sample, water levels and
/// rivers as the core's; the flow order restricted to the samples draining at least
/// `river_area`; receivers, areas and filled heights of the listed samples only), or, when
/// more samples qualify than the GPU lists (an eighth of the grid), the core's whole
/// `Drainage`.
pub fn drainage_lean(
    heights: &[f32],
    n: usize,
    spacing: f32,
    sea_level: f32,
    settings: &island_core::drainage::DrainageSettings,
) -> Result<island_core::drainage::Drainage, GpuError> {
    check_len("heights", heights.len(), n * n)?;
    settings.validate().map_err(|e| bad("drainage", e))?;
    with_gpu(Grid::new(n, 1.0, 0), |gpu, rec| {
        let hb = gpu.storage_init("heights", bytemuck::cast_slice(heights));
        let b = DrainageBufs::new(rec, n);
        Ok(rec
            .drainage(&b, &hb, spacing, sea_level, settings, DrainageRead::Lean)?
            .0)
    })
}
