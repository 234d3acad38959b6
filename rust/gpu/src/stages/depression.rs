//! The depression passes (`shaders/depression.wgsl`): `depression_fill` and `flat_routing`,
//! the GPU twins of `island_core::drainage`'s functions of the same name, bit-identical (both
//! are defined without any visiting order; see the shader). Used by the GPU erosion every time
//! step, so the evolution grid never leaves the GPU.

use crate::ctx::grid2;
use crate::error::GpuError;
use crate::learned;
use crate::passes::Entry;
use crate::recorder::{u32s, Rec};
use crate::stages::host::*;
use crate::uniforms::{self as u, Grid};
use std::cell::Cell;

/// The entry points this module dispatches (registered in `crate::shaders`).
const FILL_INIT: Entry = Entry::new("depression", "fill_init");
const FILL_RELAX: Entry = Entry::new("depression", "fill_relax");
const FILL_DECODE: Entry = Entry::new("depression", "fill_decode");
const FLAT_INIT: Entry = Entry::new("depression", "flat_init");
const FLAT_RELAX: Entry = Entry::new("depression", "flat_relax");
const FLAT_RECEIVERS: Entry = Entry::new("depression", "flat_receivers");

/// Workgroups of the relaxation passes over an `n × n` grid: one per `RELAX_TILE²` tile.
fn relax_groups(n: usize) -> (u32, u32, u32) {
    let g = (n as u32).div_ceil(u::RELAX_TILE);
    (g, g, 1)
}

/// Longest batch of relaxation dispatches between two reads of the counter of changed samples.
const MAX_BATCH: u32 = 32;

/// Scratch buffers of the depression passes on an `n × n` grid.
pub(crate) struct DepressionBufs {
    pub n: usize,
    /// Fill keys (order-preserving u32 of the heights).
    key: wgpu::Buffer,
    /// Class of each sample (flat / drains / outlet).
    class: wgpu::Buffer,
    /// Two distances per sample.
    dist: wgpu::Buffer,
    /// Samples changed by a relaxation dispatch, and 1 + the last dispatch that changed one.
    changed: wgpu::Buffer,
    /// `changed` copied out for reading.
    pending: wgpu::Buffer,
    /// Dispatches the last `depression_fill` on these buffers took: the first batch of the next
    /// one (the erosion's time steps change the surface a little each).
    fill_hint: Cell<u32>,
    /// The same for `flat_routing`.
    flat_hint: Cell<u32>,
    /// Runs one learned count counts as (`recorder::MIN_RUNS` for buffers used once per
    /// generation).
    learn_runs: u32,
}

/// Whether an `n × n` grid's largest depression buffer (the flat distances, 8 bytes per
/// sample) fits one storage binding of the adapter (4097² does not on a 128 MiB limit).
pub(crate) fn fits(gpu: &crate::ctx::Gpu, n: usize) -> bool {
    (n * n) as u64 * 8 <= gpu.limits.max_storage_buffer_binding_size
}

impl DepressionBufs {
    pub fn new(rec: &Rec, n: usize) -> DepressionBufs {
        let gpu = rec.gpu;
        let len = (n * n) as u64;
        DepressionBufs {
            n,
            key: gpu.storage("fill keys", len * 4),
            class: gpu.storage("flat class", len * 4),
            dist: gpu.storage("flat distances", len * 8),
            changed: gpu.storage("relax changed", 8),
            pending: gpu.storage("relax pending", 8),
            fill_hint: Cell::new(1),
            flat_hint: Cell::new(1),
            learn_runs: 1,
        }
    }

    /// Buffers whose relaxations run once per generation (the drainage's): each checked run
    /// is enough to speculate on in the next generation (`recorder::Speculation`).
    pub fn once_per_generation(rec: &Rec, n: usize) -> DepressionBufs {
        DepressionBufs {
            learn_runs: crate::recorder::MIN_RUNS,
            ..DepressionBufs::new(rec, n)
        }
    }

    fn uniform(&self, sea: f32) -> u::Depression {
        u::Depression {
            n: self.n as u32,
            sea,
            iter: 0,
        }
    }
}

/// The recording of these passes (`rec.method(..)` with this trait in scope).
pub(crate) trait DepressionPasses<'g> {
    /// Record `relax` until a dispatch changes nothing; the counter is read after `hint`
    /// dispatches (the count the previous call with this hint took; the count of this one is
    /// stored in it), then after batches one longer each time (at most [`MAX_BATCH`]). Every
    /// read is a round trip to the host; a dispatch after convergence changes nothing, so
    /// starting from the previous count saves reads at the cost of a few idle dispatches.
    /// Returns the dispatches recorded.
    fn relax_until_stable(
        &mut self,
        b: &DepressionBufs,
        what: &'static str,
        hint: &Cell<u32>,
        relax: impl FnMut(&mut Rec<'g>, u32) -> Result<(), GpuError>,
    ) -> Result<u32, GpuError>;

    /// `island_core::drainage::depression_fill` of `h` into `filled` (both `b.n²`, sea at or
    /// below `sea`); returns the relaxation dispatches it took.
    fn depression_fill(
        &mut self,
        b: &DepressionBufs,
        h: &wgpu::Buffer,
        filled: &wgpu::Buffer,
        sea: f32,
    ) -> Result<u32, GpuError>;

    /// `island_core::drainage::flat_routing` of the filled surface `filled` of `h` into `flat`
    /// (all `b.n²`); returns the relaxation dispatches it took.
    fn flat_routing(
        &mut self,
        b: &DepressionBufs,
        h: &wgpu::Buffer,
        filled: &wgpu::Buffer,
        flat: &wgpu::Buffer,
        sea: f32,
    ) -> Result<u32, GpuError>;
}

impl<'g> DepressionPasses<'g> for Rec<'g> {
    /// Record `relax` until a dispatch changes nothing; the counter is read after 1
    /// dispatch, then after batches one longer each time (at most [`MAX_BATCH`]): a few
    /// dispatches usually suffice, and each costs more than a read of the counter. When the
    /// recorder speculates and the count is known, that many dispatches without a read (the
    /// counter verified with the island, see `recorder::Speculation`).
    /// Returns the dispatches recorded.
    fn relax_until_stable(
        &mut self,
        b: &DepressionBufs,
        what: &'static str,
        hint: &Cell<u32>,
        mut relax: impl FnMut(&mut Rec<'g>, u32) -> Result<(), GpuError>,
    ) -> Result<u32, GpuError> {
        let key = (what, b.n);
        let speculative = self.speculative_count(key);
        let len = (b.n * b.n) as u32;
        let mut done = 0u32;
        let mut batch = speculative.unwrap_or(hint.get()).clamp(1, 4 * MAX_BATCH);
        self.enc.clear_buffer(&b.changed, 0, None);
        loop {
            for k in 0..batch {
                self.ensure_slots(1)?;
                if k + 1 == batch {
                    // The count of the batch's last dispatch (the last productive one stays).
                    self.enc.clear_buffer(&b.changed, 0, Some(4));
                }
                relax(self, done)?;
                done += 1;
            }
            if speculative.is_some() {
                self.verify_zero(key, &b.changed, 0);
                return Ok(done);
            }
            self.enc
                .copy_buffer_to_buffer(&b.changed, 0, &b.pending, 0, 8);
            let got = u32s(&self.read_back(&[(&b.pending, 8)], None)?[0]);
            if got[0] == 0 {
                // Needed: the productive dispatches and one that changes nothing.
                let need = got[1] + 1;
                hint.set(need);
                learned::learn(key, need, b.learn_runs);
                return Ok(done);
            }
            // Every dispatch settles at least one more sample for good.
            if done > len + MAX_BATCH {
                return Err(GpuError::Wgpu(format!("{what}: no convergence")));
            }
            batch = (batch + 1).min(MAX_BATCH);
        }
    }

    /// `island_core::drainage::depression_fill` of `h` into `filled` (both `b.n²`, sea at or
    /// below `sea`); returns the relaxation dispatches it took.
    fn depression_fill(
        &mut self,
        b: &DepressionBufs,
        h: &wgpu::Buffer,
        filled: &wgpu::Buffer,
        sea: f32,
    ) -> Result<u32, GpuError> {
        let p = b.uniform(sea);
        self.ensure_slots(1)?;
        self.pass(FILL_INIT)
            .params(&p)
            .read("h", h)
            .write("fill_key", &b.key)
            .run(grid2(b.n))?;
        let iters = self.relax_until_stable(b, "depression_fill", &b.fill_hint, |rec, iter| {
            rec.pass(FILL_RELAX)
                .params(&u::Depression { iter, ..p })
                .read("h", h)
                .read_write("fill_key", &b.key)
                .read_write("changed", &b.changed)
                .run(relax_groups(b.n))
        })?;
        self.ensure_slots(1)?;
        self.pass(FILL_DECODE)
            .params(&p)
            .read("h", h)
            .read("fill_key", &b.key)
            .write("filled", filled)
            .run(grid2(b.n))?;
        Ok(iters)
    }

    /// `island_core::drainage::flat_routing` of the filled surface `filled` of `h` into `flat`
    /// (all `b.n²`); returns the relaxation dispatches it took.
    fn flat_routing(
        &mut self,
        b: &DepressionBufs,
        h: &wgpu::Buffer,
        filled: &wgpu::Buffer,
        flat: &wgpu::Buffer,
        sea: f32,
    ) -> Result<u32, GpuError> {
        let p = b.uniform(sea);
        self.ensure_slots(1)?;
        self.pass(FLAT_INIT)
            .params(&p)
            .read("h", h)
            .read("filled", filled)
            .write("class_of", &b.class)
            .write("dist", &b.dist)
            .write("flat", flat)
            .run(grid2(b.n))?;
        let iters = self.relax_until_stable(b, "flat_routing", &b.flat_hint, |rec, iter| {
            rec.pass(FLAT_RELAX)
                .params(&u::Depression { iter, ..p })
                .read("filled", filled)
                .read("class_of", &b.class)
                .read_write("dist", &b.dist)
                .read_write("changed", &b.changed)
                .run(relax_groups(b.n))
        })?;
        self.ensure_slots(1)?;
        self.pass(FLAT_RECEIVERS)
            .params(&p)
            .read("filled", filled)
            .read("class_of", &b.class)
            .read("dist", &b.dist)
            .write("flat", flat)
            .run(grid2(b.n))?;
        Ok(iters)
    }
}

/// GPU [`island_core::drainage::depression_fill`] of `heights` (`n²`, sea at or below
/// `sea_level`): the filled surface and the relaxation dispatches it took.
pub fn depression_fill(
    heights: &[f32],
    n: usize,
    sea_level: f32,
) -> Result<(Vec<f32>, u32), GpuError> {
    check_len("heights", heights.len(), n * n)?;
    with_gpu(Grid::new(n, 1.0, 0), |gpu, rec| {
        let hb = gpu.storage_init("heights", bytemuck::cast_slice(heights));
        let fb = gpu.storage("filled", (n * n * 4) as u64);
        let db = DepressionBufs::new(rec, n);
        let iters = rec.depression_fill(&db, &hb, &fb, sea_level)?;
        Ok((read_f32(rec, &fb, n * n)?, iters))
    })
}

/// GPU [`island_core::drainage::flat_routing`] of the filled surface `filled` of `heights`
/// (both `n²`): the receivers of the flat samples ([`island_core::drainage::NONE`]
/// elsewhere) and the relaxation dispatches it took.
pub fn flat_routing(
    filled: &[f32],
    n: usize,
    sea_level: f32,
    heights: &[f32],
) -> Result<(Vec<u32>, u32), GpuError> {
    check_len("filled", filled.len(), n * n)?;
    check_len("heights", heights.len(), n * n)?;
    with_gpu(Grid::new(n, 1.0, 0), |gpu, rec| {
        let hb = gpu.storage_init("heights", bytemuck::cast_slice(heights));
        let fb = gpu.storage_init("filled", bytemuck::cast_slice(filled));
        let out = gpu.storage("flat", (n * n * 4) as u64);
        let db = DepressionBufs::new(rec, n);
        let iters = rec.flat_routing(&db, &hb, &fb, &out, sea_level)?;
        Ok((read_u32(rec, &out, n * n)?, iters))
    })
}
