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

use crate::ctx::{grid2, DISPATCH_SLOTS};
use crate::depression::DepressionBufs;
use crate::pipeline::{f32s, u32s, Rec};
use crate::uniforms as u;
use crate::GpuError;
use island_core::erosion::{
    erosion_plan, finish_report, ErosionReport, ErosionSettings, SedimentBudget, StepParams,
    THERMAL_PASSES,
};

/// Dispatches of the donor-first iterations recorded between two checks of the counter of
/// waiting samples (after the first batch, which is as long as the previous step needed).
const ITER_BATCH: u32 = 16;
/// Longest first batch (the per-dispatch uniform slots of one submission are limited).
const MAX_BATCH: u32 = 200;

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
    /// One flag per sample and the counter of waiting samples.
    pub flags: wgpu::Buffer,
    /// The counter copied out for reading.
    pub pending: wgpu::Buffer,
    pub pow_count: wgpu::Buffer,
    pub state: [wgpu::Buffer; 2],
    pub sed: wgpu::Buffer,
    /// `sed` summed over the steps.
    pub sed_total: wgpu::Buffer,
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
            flags: gpu.storage("erosion flags", (len + 1) * 4),
            pending: gpu.storage("erosion pending", 4),
            pow_count: gpu.storage_init("pow_count", bytemuck::cast_slice(pow_count)),
            state: [
                gpu.storage("stream power a", len * 16),
                gpu.storage("stream power b", len * 16),
            ],
            sed: gpu.storage("sediment", len * 16),
            sed_total: gpu.storage("sediment total", len * 16),
            dep: DepressionBufs::new(rec, nc),
            orig: plane("erosion orig"),
        })
    }
}

impl Rec<'_> {
    /// Submit first when fewer than `k` per-dispatch uniform slots are left.
    pub(crate) fn ensure_slots(&mut self, k: u64) -> Result<(), GpuError> {
        if self.slots_used() + k > DISPATCH_SLOTS {
            self.flush()?;
        }
        Ok(())
    }

    /// `island_core::erosion::resample`: `heights` (the recording's grid) → `coarse` (`nc²`).
    pub fn erosion_resample(
        &mut self,
        heights: &wgpu::Buffer,
        coarse: &wgpu::Buffer,
        p: &u::Erosion,
    ) -> Result<(), GpuError> {
        let gpu = self.gpu;
        let p = u::Erosion {
            scale: (self.n - 1) as f32 / (p.nc - 1) as f32,
            ..*p
        };
        self.pass(&gpu.pipes.erosion_resample)
            .params(&p)
            .read("heights_in", heights)
            .write("coarse", coarse)
            .run(grid2(p.nc as usize))
    }

    /// `island_core::erosion::flow_receivers` (`p.seed` the step seed).
    pub fn flow_receivers(&mut self, b: &ErosionBufs, p: &u::Erosion) -> Result<(), GpuError> {
        let gpu = self.gpu;
        self.ensure_slots(1)?;
        self.pass(&gpu.pipes.flow_receivers)
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

    /// `island_core::erosion::flow_accumulation`: donor-first dispatches until no sample
    /// waits; returns how many were needed (the longest donor chain + 1). The first check
    /// comes after `first_batch` dispatches.
    pub fn flow_accumulation(
        &mut self,
        b: &ErosionBufs,
        p: &u::Erosion,
        first_batch: u32,
    ) -> Result<u32, GpuError> {
        let gpu = self.gpu;
        let len = (b.nc * b.nc) as u64;
        self.enc.clear_buffer(&b.flags, 0, None);
        let mut iter = 0u32;
        let mut batch = first_batch.clamp(1, MAX_BATCH);
        loop {
            for k in 0..batch {
                self.ensure_slots(1)?;
                if k + 1 == batch {
                    self.clear_pending(b);
                }
                self.pass(&gpu.pipes.flow_accumulation)
                    .params(&u::Erosion { iter, ..*p })
                    .read("rcv", &b.rcv)
                    .read_write("area", &b.area)
                    .read_write("flags", &b.flags)
                    .run(grid2(b.nc))?;
                iter += 1;
            }
            self.enc
                .copy_buffer_to_buffer(&b.flags, len * 4, &b.pending, 0, 4);
            self.flush()?;
            let waiting = u32s(&gpu.read_back(&[(&b.pending, 4)], None)?[0])[0];
            if waiting == 0 {
                return Ok(iter);
            }
            if iter as u64 > len + 1 {
                return Err(GpuError::Wgpu(
                    "flow_accumulation: the receivers form a cycle".into(),
                ));
            }
            batch = ITER_BATCH;
        }
    }

    /// `island_core::erosion::stream_power` by pointer jumping: `b.h` updated in place.
    pub fn stream_power(&mut self, b: &ErosionBufs, p: &u::Erosion) -> Result<(), GpuError> {
        let gpu = self.gpu;
        let len = b.nc * b.nc;
        let rounds = usize::BITS - (len - 1).leading_zeros();
        self.ensure_slots(rounds as u64 + 2)?;
        let pipes = &gpu.pipes;
        self.pass(&pipes.stream_power_init)
            .params(p)
            .read("rcv", &b.rcv)
            .read("h", &b.h)
            .read("area", &b.area)
            .read("pow_count", &b.pow_count)
            .write("state_a", &b.state[0])
            .run(grid2(b.nc))?;
        for k in 0..rounds as usize {
            self.pass(&pipes.stream_power_jump)
                .params(p)
                .read("state_a", &b.state[k % 2])
                .write("state_b", &b.state[1 - k % 2])
                .run(grid2(b.nc))?;
        }
        self.pass(&pipes.stream_power_apply)
            .params(p)
            .read("rcv", &b.rcv)
            .read("state_a", &b.state[rounds as usize % 2])
            .write("h", &b.h)
            .run(grid2(b.nc))
    }

    /// `island_core::erosion::deposition`: `iterations` donor-first dispatches (as many as
    /// [`Rec::flow_accumulation`] needed on the same receivers); `b.h` updated in place, the
    /// per-sample volumes in `b.sed`.
    pub fn deposition(
        &mut self,
        b: &ErosionBufs,
        p: &u::Erosion,
        iterations: u32,
    ) -> Result<(), GpuError> {
        let gpu = self.gpu;
        self.enc.clear_buffer(&b.flags, 0, None);
        for iter in 0..iterations {
            self.ensure_slots(1)?;
            self.pass(&gpu.pipes.deposition)
                .params(&u::Erosion { iter, ..*p })
                .read("rcv", &b.rcv)
                .read("old", &b.old)
                .read("filled", &b.filled)
                .read("area", &b.area)
                .read_write("h", &b.h)
                .read_write("sed", &b.sed)
                .read_write("flags", &b.flags)
                .run(grid2(b.nc))?;
        }
        Ok(())
    }

    /// `island_core::erosion::thermal`: one Jacobi pass `src` → `h`.
    pub fn thermal(
        &mut self,
        src: &wgpu::Buffer,
        h: &wgpu::Buffer,
        p: &u::Erosion,
    ) -> Result<(), GpuError> {
        let gpu = self.gpu;
        self.ensure_slots(1)?;
        self.pass(&gpu.pipes.thermal)
            .params(p)
            .read("src", src)
            .write("h", h)
            .run(grid2(p.nc as usize))
    }

    /// `island_core::erosion::upsample_delta` of `h − orig` onto `heights` (the recording's
    /// grid).
    pub fn upsample_delta(
        &mut self,
        h: &wgpu::Buffer,
        orig: &wgpu::Buffer,
        heights: &wgpu::Buffer,
        p: &u::Erosion,
    ) -> Result<(), GpuError> {
        let gpu = self.gpu;
        let n = self.n;
        let p = u::Erosion {
            scale: (p.nc - 1) as f32 / (n - 1) as f32,
            ..*p
        };
        self.ensure_slots(1)?;
        self.pass(&gpu.pipes.upsample_delta)
            .params(&p)
            .read("h", h)
            .read("orig", orig)
            .read_write("heights", heights)
            .run(grid2(n))
    }

    /// `island_core::erosion::depression_fill` and `flat_routing` of `b.h` into `b.filled` and
    /// `b.flat`.
    pub fn erosion_fill(&mut self, b: &ErosionBufs, p: &u::Erosion) -> Result<(), GpuError> {
        self.depression_fill(&b.dep, &b.h, &b.filled, p.sea)?;
        self.flat_routing(&b.dep, &b.h, &b.filled, &b.flat, p.sea)?;
        Ok(())
    }

    /// Add the volumes of the last deposition (`b.sed`) to `b.sed_total`.
    fn add_budget(&mut self, b: &ErosionBufs, p: &u::Erosion) -> Result<(), GpuError> {
        let gpu = self.gpu;
        self.ensure_slots(1)?;
        self.pass(&gpu.pipes.budget_add)
            .params(p)
            .read("sed", &b.sed)
            .read_write("sed_total", &b.sed_total)
            .run(grid2(b.nc))
    }

    /// Read `b.h` and the per-sample volumes of `sed` (`b.sed` or `b.sed_total`) back.
    fn read_erosion(
        &mut self,
        b: &ErosionBufs,
        sed: &wgpu::Buffer,
    ) -> Result<(Vec<f32>, SedimentBudget), GpuError> {
        self.flush()?;
        let len = (b.nc * b.nc) as u64;
        let mut got = self
            .gpu
            .read_back(&[(&b.h, len * 4), (sed, len * 16)], None)?;
        let v = f32s(&got[1]);
        let mut s = SedimentBudget::default();
        for c in v.chunks_exact(4) {
            s.eroded += c[1] as f64;
            s.deposited += c[2] as f64;
            s.exported += c[3] as f64;
        }
        Ok((f32s(&got.swap_remove(0)), s))
    }

    /// Read `b.h` and the volumes of the last deposition back.
    pub fn read_erosion_pub(
        &mut self,
        b: &ErosionBufs,
    ) -> Result<(Vec<f32>, SedimentBudget), GpuError> {
        self.read_erosion(b, &b.sed)
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
/// place. With `times`, every pass is submitted and waited for and its time added.
pub(crate) fn erode(
    rec: &mut Rec,
    heights: &wgpu::Buffer,
    spacing: f32,
    settings: &ErosionSettings,
    seed: u64,
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
    let mut report = ErosionReport {
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
    let mut depth = 1;
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
        rec.stream_power(&b, &p)?;
        timed!("stream_power");
        rec.deposition(&b, &p, depth)?;
        rec.add_budget(&b, &p)?;
        timed!("deposition");
        for _ in 0..THERMAL_PASSES {
            rec.enc.copy_buffer_to_buffer(&b.h, 0, &b.old, 0, bytes);
            rec.thermal(&b.old, &b.h, &p)?;
        }
        timed!("thermal");
    }
    // The report: the volumes, and the extremes of the height change.
    let (h, budget) = rec.read_erosion(&b, &b.sed_total)?;
    let orig = f32s(&rec.gpu.read_back(&[(&b.orig, bytes)], None)?[0]);
    report.eroded_volume = budget.eroded;
    report.deposited_volume = budget.deposited;
    report.exported_volume = budget.exported;
    let delta: Vec<f32> = h.iter().zip(&orig).map(|(&a, &b)| a - b).collect();
    finish_report(&mut report, &delta);
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
    Ok(report)
}
