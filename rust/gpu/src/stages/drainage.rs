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
use crate::uniforms::DRAIN_LAKE_WORDS;
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

/// Most lakes the GPU lists; with more (only with tiny `lake_min_area` and `lake_min_depth`)
/// [`Rec::drainage`] fails with [`GpuError::TooLarge`] and the caller falls back to the CPU.
pub(crate) const MAX_LAKES: u32 = 1 << 16;
/// Lakes of the list read back with the drainage's products (24 bytes each); a longer list
/// takes a second round trip.
const LAKES_READ_FIRST: u32 = 1024;

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

pub(crate) fn uniform(sea: f32, cell_area: f32, s: &DrainageSettings) -> u::Drainage {
    u::Drainage {
        sea_level: sea,
        cell_area,
        lake_min_depth: s.lake_min_depth,
        lake_min_area: s.lake_min_area,
        max_lakes: MAX_LAKES,
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
        filled: bool,
    ) -> Result<(Drainage, DrainageIters), GpuError>;
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
        filled: bool,
    ) -> Result<(Drainage, DrainageIters), GpuError> {
        let n = b.n;
        let len = n * n;
        let cell_area = spacing * spacing;
        let p = uniform(sea, cell_area, settings);
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
        let list_bytes = |lakes: u64| 4 * (1 + lakes * DRAIN_LAKE_WORDS as u64);
        let first = list_bytes(LAKES_READ_FIRST.min(MAX_LAKES) as u64).min(b.lakes.size());
        // The receivers as one direction byte each.
        self.ensure_slots(1)?;
        self.pass(PACK_RECEIVERS)
            .read("rcv", &b.rcv)
            .write("rcv_codes", &b.rcv_codes)
            .run(packed_word_groups(len))?;
        let mut want = vec![
            (&b.rcv_codes, len as u64),
            (&b.flat_area, plane),
            (&b.label, plane),
            (&b.lakes, first),
        ];
        if filled {
            want.insert(0, (&b.filled, plane));
        }
        let mut parts = self.read_back(&want, None)?;
        let mut list = u32s(&parts.pop().expect("the lake list"));
        let count = list[0];
        if count > MAX_LAKES {
            return Err(GpuError::TooLarge(format!(
                "{count} lakes; the GPU drainage lists at most {MAX_LAKES}"
            )));
        }
        if list_bytes(count as u64) > first {
            list = u32s(&gpu.read_back(&[(&b.lakes, list_bytes(count as u64))], None)?[0]);
        }
        list.truncate(1 + count as usize * DRAIN_LAKE_WORDS as usize);
        let labels = u32s(&parts.pop().expect("labels"));
        let area = f32s(&parts.pop().expect("areas"));
        let codes = parts.pop().expect("receivers");
        let receivers: Vec<u32> = codes[..len]
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                let (dx, dz) = (c as usize % 3, c as usize / 3);
                (i + dz * n + dx - n - 1) as u32
            })
            .collect();
        // Without `filled`, an empty surface: only the water map of an uncarved island reads
        // it (see `stage_drainage`).
        let filled = parts.pop().map(|b| f32s(&b)).unwrap_or_default();
        let (lakes, lake_id) = lakes_from_list(&list[1..], &labels);
        let water_level = lake_water_levels(&lakes, &lake_id);
        let order = flow_order(&receivers, n);
        let rivers = river_samples(&order, &area, &lake_id, settings);
        Ok((
            Drainage {
                n,
                spacing,
                sea_level: sea,
                filled,
                receivers,
                order,
                area,
                water_level,
                lake_id,
                lakes,
                rivers,
            },
            iters,
        ))
    }
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
    // The filled surface comes back only for the water map of an uncarved island (a carved
    // one's river surfaces come from the carved heights; the carving reads it on the GPU).
    let need_filled = !carve_settings(p).enabled;
    let d = match rec.drainage(&b, &r.heights, spacing, 0.0, &p.drainage, need_filled) {
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
    rec.carve_rivers(&r.heights, &input, &scratch, &carve_settings(p))?;
    let mut parts = rec.read_back(&[(&r.heights, bytes)], Some(&r.staging))?;
    let heights = f32s(&parts.pop().expect("1 part"));
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
        rec.drainage(&b, &hb, spacing, sea_level, settings, true)
    })
}
