//! The erosion passes (`shaders/erosion.wgsl`), one per kernel of `island_core::erosion` of
//! the same name, and [`erode`], the GPU twin of `island_core::erosion::erode`.
//!
//! Everything runs on the GPU, the evolution grid stays there from the resampling to the
//! upsampling: each time step's `depression_fill` and `flat_routing` are the relaxations of
//! `depression.wgsl` (bit-identical to the CPU's), and the sequential kernels use the parallel
//! formulations described in `erosion.wgsl` (donor-first iteration for `flow_accumulation` and
//! `deposition`, pointer jumping for `stream_power`). Only convergence counters (4 bytes) are
//! read back during the steps; the sediment volumes are summed per sample on the GPU and read
//! once at the end, with the heights.

use super::depression::DepressionPasses;
use super::lagoon::LagoonPasses;
use super::volcano::{volcano_uniform, VolcanoPasses};
use crate::ctx::{grid2, Gpu};
use crate::error::GpuError;
use crate::learned;
use crate::passes::Entry;
use crate::recorder::{f32s, u32s, Rec};
use crate::run::Run;
use crate::stages::host::*;
use crate::uniforms::{self as u, Grid};
use island_core::pipeline::erosion_stage;

use super::depression::DepressionBufs;
use island_core::erosion::{
    erosion_plan, finish_report, ErosionReport, ErosionSettings, SedimentBudget, StepParams,
    THERMAL_PASSES,
};

/// The entry points this module dispatches (registered in `crate::shaders`).
const EROSION_RESAMPLE: Entry = Entry::new("erosion", "resample");
const FLOW_RECEIVERS: Entry = Entry::new("erosion", "flow_receivers");
const FLOW_ACCUMULATION: Entry = Entry::new("erosion", "flow_accumulation");
const STREAM_POWER_JUMP: Entry = Entry::new("erosion", "stream_power_jump");
const STREAM_POWER_APPLY: Entry = Entry::new("erosion", "stream_power_apply");
const DEPOSITION: Entry = Entry::new("erosion", "deposition");
const THERMAL: Entry = Entry::new("erosion", "thermal");
const UPSAMPLE_DELTA: Entry = Entry::new("erosion", "upsample_delta");

/// Dispatches of the donor-first iterations recorded between two checks of the counter of
/// waiting samples after the first batch (which is as long as the previous step needed: the
/// counts of consecutive steps are alike, so one check per step is usual).
const ITER_BATCH: u32 = 2;
/// Longest first batch (the per-dispatch uniform slots of one submission are limited).
const MAX_BATCH: u32 = 200;
/// Words of `jump_left`: more rounds than any grid's ⌈log2(nc²)⌉.
const JUMP_ROUNDS_MAX: u64 = 64;

/// Pointer-jumping rounds that make every composition of an `nc × nc` grid reach its outlet,
/// whatever the receivers: ⌈log2(nc²)⌉.
fn jump_rounds(nc: usize) -> u32 {
    usize::BITS - (nc * nc - 1).leading_zeros()
}

/// Workgroups of the donor-first passes over an `nc × nc` grid: one per `DONOR_TILE²` tile,
/// with room for the odd dispatches' tiling, shifted by half a tile.
fn donor_groups(nc: usize) -> (u32, u32, u32) {
    let g = (nc as u32 + u::DONOR_TILE / 2).div_ceil(u::DONOR_TILE);
    (g, g, 1)
}

/// The `Erosion` uniform of a grid of `nc` samples per side.
pub(crate) fn uniform(p: &StepParams, nc: usize) -> u::Erosion {
    u::Erosion {
        nc: nc as u32,
        seed: 0,
        iter: 0,
        pow_len: p.pow_count.len() as u32,
        sea: p.sea,
        dx: p.dx,
        kdt: p.kdt,
        g: p.g,
        talus_dx: p.talus * p.dx,
        creep: p.smooth,
        cell_area: p.dx * p.dx,
        scale: 0.0,
        apply: 0,
    }
}

/// Buffers of the evolution grid (`nc × nc`).
pub(crate) struct ErosionBufs {
    pub nc: usize,
    pub h: wgpu::Buffer,
    /// Heights before the stream-power step; the thermal passes' source.
    pub old: wgpu::Buffer,
    pub filled: wgpu::Buffer,
    /// Receivers on the flats of the filled surface (`flat_routing`).
    pub flat: wgpu::Buffer,
    pub rcv: wgpu::Buffer,
    pub area: wgpu::Buffer,
    /// One flag per sample, the counter of waiting samples and the last dispatch that
    /// processed a sample (1-based).
    pub flags: wgpu::Buffer,
    /// The two counters copied out for reading.
    pub pending: wgpu::Buffer,
    pub pow_count: wgpu::Buffer,
    pub state: [wgpu::Buffer; 2],
    pub sed: wgpu::Buffer,
    /// `sed` summed over the steps.
    pub sed_total: wgpu::Buffer,
    /// Per pointer-jumping round of the stream power, over all steps: whether a composition
    /// was not constant yet after it (0: the rounds up to it sufficed).
    pub jump_left: wgpu::Buffer,
    /// Scratch of `depression_fill` and `flat_routing`.
    pub dep: DepressionBufs,
    /// Heights of the evolution grid before the first step.
    pub orig: wgpu::Buffer,
}

impl ErosionBufs {
    pub fn new(rec: &Rec, nc: usize, pow_count: &[f32]) -> Result<ErosionBufs, GpuError> {
        let gpu = rec.gpu;
        let len = (nc * nc) as u64;
        if len * 16 > gpu.limits.max_storage_buffer_binding_size {
            return Err(GpuError::TooLarge(format!(
                "an erosion grid of {nc}² needs {}-byte storage bindings; {} allows {}",
                len * 16,
                gpu.name,
                gpu.limits.max_storage_buffer_binding_size
            )));
        }
        let plane = |name| gpu.storage(name, len * 4);
        Ok(ErosionBufs {
            nc,
            h: plane("erosion h"),
            old: plane("erosion old"),
            filled: plane("erosion filled"),
            flat: plane("erosion flat"),
            rcv: plane("erosion rcv"),
            area: plane("erosion area"),
            flags: gpu.storage("erosion flags", (len + 2) * 4),
            pending: gpu.storage("erosion pending", 8),
            pow_count: gpu.storage_init("pow_count", bytemuck::cast_slice(pow_count)),
            state: [
                gpu.storage("stream power a", len * 16),
                gpu.storage("stream power b", len * 16),
            ],
            sed: gpu.storage("sediment", len * 16),
            sed_total: gpu.storage("sediment total", len * 16),
            jump_left: gpu.storage("stream power rounds left", JUMP_ROUNDS_MAX * 4),
            dep: DepressionBufs::new(rec, nc),
            orig: plane("erosion orig"),
        })
    }
}

/// Timings of the erosion passes (milliseconds, wall clock, every pass submitted and waited
/// for), for the benchmark.
#[derive(Clone, Debug, Default)]
pub struct PassTimes {
    /// `(pass name, total ms over all steps)`, in pipeline order.
    pub ms: Vec<(&'static str, f64)>,
}

impl PassTimes {
    fn add(&mut self, name: &'static str, t: std::time::Instant) {
        let ms = t.elapsed().as_secs_f64() * 1e3;
        match self.ms.iter_mut().find(|e| e.0 == name) {
            Some(e) => e.1 += ms,
            None => self.ms.push((name, ms)),
        }
    }
}

/// Whether [`erode`] runs on the GPU for this grid (else the caller erodes on the CPU).
pub(crate) fn fits(rec: &Rec, nc: usize) -> bool {
    (nc * nc) as u64 * 16 <= rec.gpu.limits.max_storage_buffer_binding_size
}

/// `island_core::erosion::erode` of `heights` (the recording's `n × n` grid, on the GPU) in
/// place. With `times`, every pass is submitted and waited for and its time added. With
/// `report`, the report (volumes and extremes, one round trip); without, the default report
/// and nothing read back here (the pipeline's case).
pub(crate) fn record_erode(
    rec: &mut Rec,
    heights: &wgpu::Buffer,
    spacing: f32,
    settings: &ErosionSettings,
    seed: u64,
    report: bool,
    mut times: Option<&mut PassTimes>,
) -> Result<ErosionReport, GpuError> {
    let n = rec.n;
    let Some(plan) = erosion_plan(n, spacing, settings, seed) else {
        return Ok(ErosionReport::default());
    };
    let nc = plan.nc;
    let sp = &plan.params;
    let b = ErosionBufs::new(rec, nc, &sp.pow_count)?;
    let p = uniform(sp, nc);
    let mut out = ErosionReport {
        steps: plan.steps,
        resolution: nc as u32,
        ..Default::default()
    };
    let bytes = (nc * nc * 4) as u64;
    let mut t = std::time::Instant::now();
    macro_rules! timed {
        ($name:expr) => {
            if let Some(tm) = times.as_deref_mut() {
                rec.flush()?;
                tm.add($name, t);
                t = std::time::Instant::now();
            }
        };
    }
    if nc == n {
        rec.enc.copy_buffer_to_buffer(heights, 0, &b.h, 0, bytes);
    } else {
        rec.erosion_resample(heights, &b.h, &p)?;
    }
    rec.enc.copy_buffer_to_buffer(&b.h, 0, &b.orig, 0, bytes);
    timed!("resample");
    rec.enc.clear_buffer(&b.sed_total, 0, None);
    rec.enc.clear_buffer(&b.jump_left, 0, None);
    // The stream power's rounds: as many as any chain of the grid can need, or as many as the
    // chains of earlier generations needed (verified after the steps).
    let sp_key = ("stream_power", nc);
    let sp_learned = rec.speculative_count(sp_key);
    let rounds = sp_learned.map_or(jump_rounds(nc), |r| r.min(jump_rounds(nc)));
    // The first step's first batch of the tiled accumulation (checked runs): the count learned
    // so far, else about what default islands need (6–7 dispatches at 257²: a chain crosses
    // about as many 48² tiles as the grid has along a side).
    let mut depth = learned::get(("flow_accumulation", nc))
        .map_or(1 + nc.div_ceil(u::DONOR_TILE as usize) as u32, |(c, _)| c);
    for k in 0..plan.steps {
        rec.erosion_fill(&b, &p)?;
        timed!("depression_fill");
        let ps = u::Erosion {
            seed: sp.step_seed(k),
            ..p
        };
        rec.flow_receivers(&b, &ps)?;
        timed!("flow_receivers");
        depth = rec.flow_accumulation(&b, &p, depth)?;
        timed!("flow_accumulation");
        rec.enc.copy_buffer_to_buffer(&b.h, 0, &b.old, 0, bytes);
        // The deposition applies the stream power's compositions (no apply dispatch).
        rec.stream_power(&b, &p, rounds, false)?;
        timed!("stream_power");
        rec.deposition(&b, &p, depth, Some(&b.state[rounds as usize % 2]))?;
        timed!("deposition");
        for _ in 0..THERMAL_PASSES {
            rec.enc.copy_buffer_to_buffer(&b.h, 0, &b.old, 0, bytes);
            rec.thermal(&b.old, &b.h, &p)?;
        }
        timed!("thermal");
    }
    if sp_learned.is_some() {
        rec.verify_zero(sp_key, &b.jump_left, (rounds as u64 - 1) * 4);
    } else {
        // With every round run: the rounds the chains needed (the largest over the steps, so
        // as many runs as steps), learned from the next read-back.
        rec.learn_later(sp_key, &b.jump_left, rounds as u64, plan.steps, |left| {
            left.iter().take_while(|&&w| w != 0).count() as u32 + 1
        });
    }
    if report {
        // The volumes, and the extremes of the height change.
        let (h, budget, orig) = rec.read_erosion(&b, &b.sed_total, true)?;
        out.eroded_volume = budget.eroded;
        out.deposited_volume = budget.deposited;
        out.exported_volume = budget.exported;
        let delta: Vec<f32> = h.iter().zip(&orig).map(|(&a, &b)| a - b).collect();
        finish_report(&mut out, &delta);
    }
    if nc == n {
        rec.enc.copy_buffer_to_buffer(&b.h, 0, heights, 0, bytes);
    } else {
        rec.upsample_delta(
            &b.h,
            &b.orig,
            heights,
            &u::Erosion {
                sea: settings.sea_level,
                ..p
            },
        )?;
    }
    if let Some(tm) = times {
        rec.flush()?;
        tm.add("upsample_delta", t);
    }
    Ok(out)
}

/// The recording of these passes (`rec.method(..)` with this trait in scope).
pub(crate) trait ErosionPasses {
    /// `island_core::erosion::resample`: `heights` (the recording's grid) → `coarse` (`nc²`).
    fn erosion_resample(
        &mut self,
        heights: &wgpu::Buffer,
        coarse: &wgpu::Buffer,
        p: &u::Erosion,
    ) -> Result<(), GpuError>;

    /// `island_core::erosion::flow_receivers` (`p.seed` the step seed).
    fn flow_receivers(&mut self, b: &ErosionBufs, p: &u::Erosion) -> Result<(), GpuError>;

    /// Record the counter of waiting samples being cleared before the next dispatch.
    fn clear_pending(&mut self, b: &ErosionBufs);

    /// `island_core::erosion::flow_accumulation`: donor-first dispatches until no sample
    /// waits; returns how many were needed (the last one that processed a sample). The first
    /// check comes after `first_batch` dispatches. When the recorder speculates and the count
    /// is known: that many dispatches, the counter verified with the island.
    fn flow_accumulation(
        &mut self,
        b: &ErosionBufs,
        p: &u::Erosion,
        first_batch: u32,
    ) -> Result<u32, GpuError>;

    /// `island_core::erosion::stream_power` by pointer jumping (`rounds` rounds: see
    /// [`jump_rounds`]): with `apply`, `b.h` updated in place; without, the compositions are
    /// left in `b.state[rounds % 2]` for [`ErosionPasses::deposition`] to apply.
    fn stream_power(
        &mut self,
        b: &ErosionBufs,
        p: &u::Erosion,
        rounds: u32,
        apply: bool,
    ) -> Result<(), GpuError>;

    /// `island_core::erosion::deposition`: `iterations` donor-first dispatches (as many as
    /// [`Rec::flow_accumulation`] needed on the same receivers); `b.h` updated in place, the
    /// per-sample volumes in `b.sed` (and added to `b.sed_total`). With `state`, the stream
    /// power's compositions are applied first (`b.h` held the heights before it).
    fn deposition(
        &mut self,
        b: &ErosionBufs,
        p: &u::Erosion,
        iterations: u32,
        state: Option<&wgpu::Buffer>,
    ) -> Result<(), GpuError>;

    /// `island_core::erosion::thermal`: one Jacobi pass `src` → `h`.
    fn thermal(
        &mut self,
        src: &wgpu::Buffer,
        h: &wgpu::Buffer,
        p: &u::Erosion,
    ) -> Result<(), GpuError>;

    /// `island_core::erosion::upsample_delta` of `h − orig` onto `heights` (the recording's
    /// grid).
    fn upsample_delta(
        &mut self,
        h: &wgpu::Buffer,
        orig: &wgpu::Buffer,
        heights: &wgpu::Buffer,
        p: &u::Erosion,
    ) -> Result<(), GpuError>;

    /// `island_core::erosion::depression_fill` and `flat_routing` of `b.h` into `b.filled` and
    /// `b.flat`.
    fn erosion_fill(&mut self, b: &ErosionBufs, p: &u::Erosion) -> Result<(), GpuError>;

    /// Read `b.h` and the per-sample volumes of `sed` (`b.sed` or `b.sed_total`) back, and
    /// with `orig` the heights before the first step (empty without), in one round trip.
    fn read_erosion(
        &mut self,
        b: &ErosionBufs,
        sed: &wgpu::Buffer,
        orig: bool,
    ) -> Result<(Vec<f32>, SedimentBudget, Vec<f32>), GpuError>;

    /// Read `b.h` and the volumes of the last deposition back.
    fn read_erosion_pub(&mut self, b: &ErosionBufs)
        -> Result<(Vec<f32>, SedimentBudget), GpuError>;
}

impl ErosionPasses for Rec<'_> {
    /// `island_core::erosion::resample`: `heights` (the recording's grid) → `coarse` (`nc²`).
    fn erosion_resample(
        &mut self,
        heights: &wgpu::Buffer,
        coarse: &wgpu::Buffer,
        p: &u::Erosion,
    ) -> Result<(), GpuError> {
        let p = u::Erosion {
            scale: (self.n - 1) as f32 / (p.nc - 1) as f32,
            ..*p
        };
        self.pass(EROSION_RESAMPLE)
            .params(&p)
            .read("heights_in", heights)
            .write("coarse", coarse)
            .run(grid2(p.nc as usize))
    }

    /// `island_core::erosion::flow_receivers` (`p.seed` the step seed).
    fn flow_receivers(&mut self, b: &ErosionBufs, p: &u::Erosion) -> Result<(), GpuError> {
        self.ensure_slots(1)?;
        self.pass(FLOW_RECEIVERS)
            .params(p)
            .read("filled", &b.filled)
            .read("flat", &b.flat)
            .read("h", &b.h)
            .write("rcv", &b.rcv)
            .run(grid2(b.nc))
    }

    /// Record the counter of waiting samples being cleared before the next dispatch.
    fn clear_pending(&mut self, b: &ErosionBufs) {
        let len = (b.nc * b.nc) as u64;
        self.enc.clear_buffer(&b.flags, len * 4, Some(4));
    }

    fn flow_accumulation(
        &mut self,
        b: &ErosionBufs,
        p: &u::Erosion,
        first_batch: u32,
    ) -> Result<u32, GpuError> {
        let len = (b.nc * b.nc) as u64;
        self.enc.clear_buffer(&b.flags, 0, None);
        let key = ("flow_accumulation", b.nc);
        let speculative = self.speculative_count(key);
        let mut iter = 0u32;
        let mut batch = speculative.unwrap_or(first_batch).clamp(1, MAX_BATCH);
        loop {
            for k in 0..batch {
                self.ensure_slots(1)?;
                if k + 1 == batch {
                    self.clear_pending(b);
                }
                self.pass(FLOW_ACCUMULATION)
                    .params(&u::Erosion { iter, ..*p })
                    .read("rcv", &b.rcv)
                    .read_write("area", &b.area)
                    .read_write("flags", &b.flags)
                    .run(donor_groups(b.nc))?;
                iter += 1;
            }
            if speculative.is_some() {
                self.verify_zero(key, &b.flags, len * 4);
                return Ok(iter);
            }
            self.enc
                .copy_buffer_to_buffer(&b.flags, len * 4, &b.pending, 0, 8);
            let got = u32s(&self.read_back(&[(&b.pending, 8)], None)?[0]);
            if got[0] == 0 {
                // The dispatches that processed something (the rest changed nothing).
                let need = got[1].max(1);
                learned::learn(key, need, 1);
                return Ok(need);
            }
            if iter as u64 > len + 1 {
                return Err(GpuError::Wgpu(
                    "flow_accumulation: the receivers form a cycle".into(),
                ));
            }
            batch = ITER_BATCH;
        }
    }

    fn stream_power(
        &mut self,
        b: &ErosionBufs,
        p: &u::Erosion,
        rounds: u32,
        apply: bool,
    ) -> Result<(), GpuError> {
        self.ensure_slots(rounds as u64 + 1)?;
        // Round 0 starts from the receivers, heights and areas (no init pass).
        for k in 0..rounds as usize {
            self.pass(STREAM_POWER_JUMP)
                .params(&u::Erosion {
                    iter: k as u32,
                    ..*p
                })
                .read("rcv", &b.rcv)
                .read("h", &b.h)
                .read("area", &b.area)
                .read("pow_count", &b.pow_count)
                .read("state_a", &b.state[k % 2])
                .write("state_b", &b.state[1 - k % 2])
                .read_write("jump_left", &b.jump_left)
                .run(grid2(b.nc))?;
        }
        if !apply {
            return Ok(());
        }
        self.pass(STREAM_POWER_APPLY)
            .params(p)
            .read("rcv", &b.rcv)
            .read("state_a", &b.state[rounds as usize % 2])
            .write("h", &b.h)
            .run(grid2(b.nc))
    }

    /// `island_core::erosion::deposition`: `iterations` donor-first dispatches (as many as
    /// [`Rec::flow_accumulation`] needed on the same receivers); `b.h` updated in place, the
    /// per-sample volumes in `b.sed` (and added to `b.sed_total`).
    fn deposition(
        &mut self,
        b: &ErosionBufs,
        p: &u::Erosion,
        iterations: u32,
        state: Option<&wgpu::Buffer>,
    ) -> Result<(), GpuError> {
        self.enc.clear_buffer(&b.flags, 0, None);
        for iter in 0..iterations {
            self.ensure_slots(1)?;
            self.pass(DEPOSITION)
                .params(&u::Erosion {
                    iter,
                    apply: state.is_some() as u32,
                    ..*p
                })
                // Unread without `state`.
                .read("state_a", state.unwrap_or(&b.state[0]))
                .read("rcv", &b.rcv)
                .read("old", &b.old)
                .read("filled", &b.filled)
                .read("area", &b.area)
                .read_write("h", &b.h)
                .read_write("sed", &b.sed)
                .read_write("sed_total", &b.sed_total)
                .read_write("flags", &b.flags)
                .run(donor_groups(b.nc))?;
        }
        Ok(())
    }

    /// `island_core::erosion::thermal`: one Jacobi pass `src` → `h`.
    fn thermal(
        &mut self,
        src: &wgpu::Buffer,
        h: &wgpu::Buffer,
        p: &u::Erosion,
    ) -> Result<(), GpuError> {
        self.ensure_slots(1)?;
        self.pass(THERMAL)
            .params(p)
            .read("src", src)
            .write("h", h)
            .run(grid2(p.nc as usize))
    }

    /// `island_core::erosion::upsample_delta` of `h − orig` onto `heights` (the recording's
    /// grid).
    fn upsample_delta(
        &mut self,
        h: &wgpu::Buffer,
        orig: &wgpu::Buffer,
        heights: &wgpu::Buffer,
        p: &u::Erosion,
    ) -> Result<(), GpuError> {
        let n = self.n;
        let p = u::Erosion {
            scale: (p.nc - 1) as f32 / (n - 1) as f32,
            ..*p
        };
        self.ensure_slots(1)?;
        self.pass(UPSAMPLE_DELTA)
            .params(&p)
            .read("h", h)
            .read("orig", orig)
            .read_write("heights", heights)
            .run(grid2(n))
    }

    /// `island_core::erosion::depression_fill` and `flat_routing` of `b.h` into `b.filled` and
    /// `b.flat`.
    fn erosion_fill(&mut self, b: &ErosionBufs, p: &u::Erosion) -> Result<(), GpuError> {
        self.fill_and_route(&b.dep, &b.h, &b.filled, &b.flat, p.sea)?;
        Ok(())
    }

    fn read_erosion(
        &mut self,
        b: &ErosionBufs,
        sed: &wgpu::Buffer,
        orig: bool,
    ) -> Result<(Vec<f32>, SedimentBudget, Vec<f32>), GpuError> {
        let len = (b.nc * b.nc) as u64;
        let mut parts = vec![(&b.h, len * 4), (sed, len * 16)];
        if orig {
            parts.push((&b.orig, len * 4));
        }
        let mut got = self.read_back(&parts, None)?;
        let orig = if orig {
            f32s(&got.pop().expect("3 parts"))
        } else {
            Vec::new()
        };
        let v = f32s(&got[1]);
        let mut s = SedimentBudget::default();
        for c in v.chunks_exact(4) {
            s.eroded += c[1] as f64;
            s.deposited += c[2] as f64;
            s.exported += c[3] as f64;
        }
        Ok((f32s(&got.swap_remove(0)), s, orig))
    }

    /// Read `b.h` and the volumes of the last deposition back.
    fn read_erosion_pub(
        &mut self,
        b: &ErosionBufs,
    ) -> Result<(Vec<f32>, SedimentBudget), GpuError> {
        let (h, s, _) = self.read_erosion(b, &b.sed, false)?;
        Ok((h, s))
    }
}

/// Erosion on the GPU (`erosion.wgsl`, the Priority-Flood of each step on the CPU); on the CPU
/// when the evolution grid does not fit the adapter's storage bindings.
pub(crate) fn stage_erosion(run: &mut Run) -> Result<(), GpuError> {
    let (gpu, p) = (run.gpu, run.p);
    // As island_core::erosion_stage: the island's settings, sea level 0.
    let settings = island_core::erosion::ErosionSettings {
        sea_level: 0.0,
        ..p.erosion.clone()
    };
    let nc = (settings.resolution.clamp(33, 4097) as usize).min(p.resolution as usize);
    let (rec, r) = run.parts();
    // A sculpted island erodes on the CPU (`erosion_stage` applies the edits and holds the
    // edited samples).
    if fits(rec, nc) && p.sculpt.is_none() {
        // The outline's relief as in erosion_stage (`apply_relief`): the VOLCANIC cone before
        // the erosion and its crater after it (`volcano.wgsl`); the ATOLL's shallow lagoon, its
        // flood fill on the host over one bit per sample (`lagoon.wgsl`, one round trip).
        let volcano = volcano_uniform(p);
        if let Some((v, _)) = &volcano {
            rec.raise_cone(&r.heights, v)?;
        }
        rec.shallow_lagoon(gpu, p, &r.heights)?;
        // The pipeline has no use for the report (as `erosion_stage`): nothing read back.
        record_erode(rec, &r.heights, p.spacing(), &settings, p.seed, false, None)?;
        if let Some((v, true)) = &volcano {
            rec.dig_crater(&r.heights, v)?;
        }
        return Ok(());
    }
    let bytes = (r.n * r.n * 4) as u64;
    let mut parts = rec.read_back(&[(&r.heights, bytes)], Some(&r.staging))?;
    let mut heights = f32s(&parts.pop().expect("1 part"));
    erosion_stage(p, &mut heights);
    gpu.upload(&r.heights, 0, bytemuck::cast_slice(&heights));
    Ok(())
}

/// Run `f` on a fresh set of erosion buffers for an `nc × nc` grid (recording grid `n`).
fn with_erosion<T>(
    n: usize,
    nc: usize,
    p: &StepParams,
    f: impl FnOnce(&Gpu, &mut Rec, &ErosionBufs, u::Erosion) -> Result<T, GpuError>,
) -> Result<T, GpuError> {
    check_n(nc)?;
    if nc < 3 {
        return Err(bad(
            "resolution",
            "the evolution grid needs at least 3² samples",
        ));
    }
    check_len("pow_count", p.pow_count.len(), nc * nc + 1)?;
    with_gpu(Grid::new(n, 1.0, 0), |gpu, rec| {
        let b = ErosionBufs::new(rec, nc, &p.pow_count)?;
        f(gpu, rec, &b, uniform(p, nc))
    })
}

/// GPU [`island_core::erosion::resample`] (bilinear, `n²` → `m²`).
pub fn resample(g: &[f32], n: usize, m: usize) -> Result<Vec<f32>, GpuError> {
    check_len("g", g.len(), n * n)?;
    check_n(n)?;
    if m < 2 || n < 2 {
        return Err(bad("resolution", "resample needs at least 2² samples"));
    }
    with_gpu(Grid::new(n, 1.0, 0), |gpu, rec| {
        let src = gpu.storage_init("heights", bytemuck::cast_slice(g));
        let out = gpu.storage("coarse", (m * m * 4) as u64);
        let p = u::Erosion {
            nc: m as u32,
            ..Default::default()
        };
        rec.erosion_resample(&src, &out, &p)?;
        read_f32(rec, &out, m * m)
    })
}

/// GPU [`island_core::erosion::flow_receivers`].
pub fn flow_receivers(
    filled: &[f32],
    flat: &[u32],
    n: usize,
    sea: f32,
    heights: &[f32],
    seed: u32,
) -> Result<Vec<u32>, GpuError> {
    for (f, l) in [
        ("filled", filled.len()),
        ("flat", flat.len()),
        ("heights", heights.len()),
    ] {
        check_len(f, l, n * n)?;
    }
    let p = StepParams {
        pow_count: vec![0.0; n * n + 1],
        smooth: 0.0,
        seed: 0,
        kdt: 0.0,
        g: 0.0,
        talus: 0.0,
        sea,
        dx: 1.0,
    };
    with_erosion(n, n, &p, |gpu, rec, b, up| {
        upload(gpu, &b.filled, bytemuck::cast_slice(filled));
        upload(gpu, &b.flat, bytemuck::cast_slice(flat));
        upload(gpu, &b.h, bytemuck::cast_slice(heights));
        rec.flow_receivers(b, &u::Erosion { seed, ..up })?;
        read_u32(rec, &b.rcv, n * n)
    })
}

/// GPU [`island_core::erosion::flow_accumulation`] of the receivers `rcv` (no flow order
/// needed): the drainage areas and the number of donor-first dispatches it took.
pub fn flow_accumulation(
    rcv: &[u32],
    n: usize,
    cell_area: f32,
) -> Result<(Vec<f32>, u32), GpuError> {
    check_len("rcv", rcv.len(), n * n)?;
    if rcv.iter().any(|&r| r as usize >= n * n) {
        return Err(bad("rcv", "a receiver is outside the grid"));
    }
    let p = StepParams {
        pow_count: vec![0.0; n * n + 1],
        smooth: 0.0,
        seed: 0,
        kdt: 0.0,
        g: 0.0,
        talus: 0.0,
        sea: 0.0,
        dx: cell_area.sqrt(),
    };
    with_erosion(n, n, &p, |gpu, rec, b, up| {
        upload(gpu, &b.rcv, bytemuck::cast_slice(rcv));
        let up = u::Erosion { cell_area, ..up };
        let iters = rec.flow_accumulation(b, &up, 1)?;
        Ok((read_f32(rec, &b.area, n * n)?, iters))
    })
}

/// GPU [`island_core::erosion::stream_power`] (pointer jumping over the receiver tree): the
/// heights after the step.
pub fn stream_power(
    h: &[f32],
    rcv: &[u32],
    area: &[f32],
    n: usize,
    p: &StepParams,
) -> Result<Vec<f32>, GpuError> {
    for (f, l) in [("h", h.len()), ("rcv", rcv.len()), ("area", area.len())] {
        check_len(f, l, n * n)?;
    }
    with_erosion(n, n, p, |gpu, rec, b, up| {
        upload(gpu, &b.h, bytemuck::cast_slice(h));
        upload(gpu, &b.rcv, bytemuck::cast_slice(rcv));
        upload(gpu, &b.area, bytemuck::cast_slice(area));
        rec.stream_power(b, &up, jump_rounds(n), true)?;
        read_f32(rec, &b.h, n * n)
    })
}

/// GPU [`island_core::erosion::deposition`]: `h` after the stream-power step, `old` before it;
/// the heights after deposition and the volumes moved.
pub fn deposition(
    h: &[f32],
    old: &[f32],
    filled: &[f32],
    rcv: &[u32],
    area: &[f32],
    n: usize,
    p: &StepParams,
) -> Result<(Vec<f32>, SedimentBudget), GpuError> {
    for (f, l) in [
        ("h", h.len()),
        ("old", old.len()),
        ("filled", filled.len()),
        ("rcv", rcv.len()),
        ("area", area.len()),
    ] {
        check_len(f, l, n * n)?;
    }
    with_erosion(n, n, p, |gpu, rec, b, up| {
        upload(gpu, &b.h, bytemuck::cast_slice(h));
        upload(gpu, &b.old, bytemuck::cast_slice(old));
        upload(gpu, &b.filled, bytemuck::cast_slice(filled));
        upload(gpu, &b.rcv, bytemuck::cast_slice(rcv));
        // The donor-first dispatch count comes from the accumulation on the same receivers
        // (into the scratch area buffer, then the given areas are uploaded).
        let iters = rec.flow_accumulation(b, &up, 1)?;
        upload(gpu, &b.area, bytemuck::cast_slice(area));
        rec.deposition(b, &up, iters, None)?;
        let (hd, budget) = rec.read_erosion_pub(b)?;
        Ok((hd, budget))
    })
}

/// GPU [`island_core::erosion::thermal`]: one pass from `src`.
pub fn thermal(src: &[f32], n: usize, p: &StepParams) -> Result<Vec<f32>, GpuError> {
    check_len("src", src.len(), n * n)?;
    with_erosion(n, n, p, |gpu, rec, b, up| {
        upload(gpu, &b.old, bytemuck::cast_slice(src));
        rec.thermal(&b.old, &b.h, &up)?;
        read_f32(rec, &b.h, n * n)
    })
}

/// GPU [`island_core::erosion::upsample_delta`]: `g` (`n²`) plus the bicubic upsampling of
/// `delta` (`m²`) on the samples above `sea`.
pub fn upsample_delta(
    g: &[f32],
    n: usize,
    delta: &[f32],
    m: usize,
    sea: f32,
) -> Result<Vec<f32>, GpuError> {
    check_len("g", g.len(), n * n)?;
    check_len("delta", delta.len(), m * m)?;
    check_n(n)?;
    if m < 2 || n < 2 {
        return Err(bad(
            "resolution",
            "upsample_delta needs at least 2² samples",
        ));
    }
    with_gpu(Grid::new(n, 1.0, 0), |gpu, rec| {
        let heights = gpu.storage_init("heights", bytemuck::cast_slice(g));
        let h = gpu.storage_init("delta", bytemuck::cast_slice(delta));
        let zero = gpu.storage("zero", (m * m * 4) as u64);
        let p = u::Erosion {
            nc: m as u32,
            sea,
            ..Default::default()
        };
        rec.upsample_delta(&h, &zero, &heights, &p)?;
        read_f32(rec, &heights, n * n)
    })
}

/// GPU [`island_core::erosion::erode`] of `heights` (`n × n`, `spacing` metres apart): the
/// eroded heights and the report. With `times`, every pass is waited for and timed.
pub fn erode(
    heights: &[f32],
    n: usize,
    spacing: f32,
    settings: &ErosionSettings,
    seed: u64,
    times: Option<&mut PassTimes>,
) -> Result<(Vec<f32>, ErosionReport), GpuError> {
    check_len("heights", heights.len(), n * n)?;
    with_gpu(Grid::new(n, spacing * (n - 1) as f32, seed), |gpu, rec| {
        let hb = gpu.storage_init("heights", bytemuck::cast_slice(heights));
        let report = record_erode(rec, &hb, spacing, settings, seed, true, times)?;
        Ok((read_f32(rec, &hb, n * n)?, report))
    })
}
