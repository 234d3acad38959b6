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

/// The first batch of a checked relaxation of `what` on an n² grid (the counter is read after
/// it): the count learned so far when there is one, else about what default islands need, so
/// that the first check usually finds the relaxation converged (measured: `depression_fill`
/// 5–6 dispatches at 257², 10 at 1025²; `flat_routing` 3 at 257², 4–7 at 1025²; the fronts
/// cross about a quarter and an eighth of the grid's tiles). A batch too long only records
/// dispatches that change nothing (checked runs only: the first generations of a size); one
/// too short reads the counter again. The first generation of the default island at 1025²
/// waits 13 times with these (and the accumulation's, in `erosion.rs`) instead of 24 with a
/// first batch of 1.
fn first_batch(what: &'static str, n: usize) -> u32 {
    if let Some((count, _)) = learned::get((what, n)) {
        return count;
    }
    let tiles = n.div_ceil(u::RELAX_TILE as usize) as u32;
    if what == "depression_fill" {
        3 + tiles / 4
    } else {
        2 + tiles / 8
    }
}

/// Scratch buffers of the depression passes on an `n × n` grid.
pub(crate) struct DepressionBufs {
    pub n: usize,
    /// Fill keys (order-preserving u32 of the heights), twice: a relaxation dispatch reads one
    /// and writes the other (see [`DepressionBufs::pair`]).
    key: [wgpu::Buffer; 2],
    /// Which of `key` holds the last `fill_keys` result.
    key_at: Cell<usize>,
    /// Class of each sample (flat / drains / outlet).
    class: wgpu::Buffer,
    /// Two distances per sample, twice like `key`.
    dist: [wgpu::Buffer; 2],
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
            key: [
                gpu.storage("fill keys", len * 4),
                gpu.storage("fill keys out", len * 4),
            ],
            key_at: Cell::new(0),
            class: gpu.storage("flat class", len * 4),
            dist: [
                gpu.storage("flat distances", len * 8),
                gpu.storage("flat distances out", len * 8),
            ],
            changed: gpu.storage("relax changed", 8),
            pending: gpu.storage("relax pending", 8),
            fill_hint: Cell::new(first_batch("depression_fill", n)),
            flat_hint: Cell::new(first_batch("flat_routing", n)),
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

    /// The buffer of `pair` that relaxation dispatch `iter` reads (the other is the one it
    /// writes, and the next one reads): `pair[iter % 2]`. After `iters` dispatches the result
    /// is in `pair[iters % 2]`.
    fn pair(pair: &[wgpu::Buffer; 2], iter: u32) -> (&wgpu::Buffer, &wgpu::Buffer) {
        let k = (iter % 2) as usize;
        (&pair[k], &pair[1 - k])
    }

    /// The fill keys of the last `fill_keys`.
    fn keys(&self) -> &wgpu::Buffer {
        &self.key[self.key_at.get()]
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
    /// Returns the dispatches recorded and, when the counter was read, the dispatches needed.
    fn relax_until_stable(
        &mut self,
        b: &DepressionBufs,
        what: &'static str,
        hint: &Cell<u32>,
        relax: impl FnMut(&mut Rec<'g>, u32) -> Result<(), GpuError>,
    ) -> Result<Relaxed, GpuError>;

    /// `island_core::drainage::depression_fill` of `h` (`b.n²`, sea at or below `sea`) as
    /// fill keys in `b` (the filled surface is decoded by `flat_routing` or
    /// `depression_fill`); returns the relaxation dispatches it needed (see
    /// [`Relaxed::count`]).
    fn fill_keys(
        &mut self,
        b: &DepressionBufs,
        h: &wgpu::Buffer,
        sea: f32,
    ) -> Result<u32, GpuError>;

    /// `island_core::drainage::depression_fill` of `h` into `filled` (both `b.n²`, sea at or
    /// below `sea`): `fill_keys` and their decoding; returns the relaxation dispatches it
    /// needed.
    fn depression_fill(
        &mut self,
        b: &DepressionBufs,
        h: &wgpu::Buffer,
        filled: &wgpu::Buffer,
        sea: f32,
    ) -> Result<u32, GpuError>;

    /// `island_core::drainage::flat_routing` of the filled surface of `h` that the last
    /// `fill_keys` on `b` left, into `flat` (all `b.n²`); decodes that surface into `filled`
    /// on the way (what `depression_fill` would write). Returns the relaxation dispatches it
    /// needed (see [`Relaxed::count`]).
    fn flat_routing(
        &mut self,
        b: &DepressionBufs,
        h: &wgpu::Buffer,
        filled: &wgpu::Buffer,
        flat: &wgpu::Buffer,
        sea: f32,
    ) -> Result<u32, GpuError>;

    /// `depression_fill` of `h` into `filled` and `flat_routing` of it into `flat` (one
    /// decoding pass fewer than the two): the relaxation dispatches each needed.
    fn fill_and_route(
        &mut self,
        b: &DepressionBufs,
        h: &wgpu::Buffer,
        filled: &wgpu::Buffer,
        flat: &wgpu::Buffer,
        sea: f32,
    ) -> Result<(u32, u32), GpuError> {
        Ok((
            self.fill_keys(b, h, sea)?,
            self.flat_routing(b, h, filled, flat, sea)?,
        ))
    }
}

/// What [`DepressionPasses::relax_until_stable`] recorded.
pub(crate) struct Relaxed {
    /// Dispatches recorded (the result is in `pair[recorded % 2]`, see
    /// [`DepressionBufs::pair`]).
    pub recorded: u32,
    /// Dispatches needed: the productive ones and one that changed nothing (known when the
    /// counter was read, not when the count was speculated).
    pub needed: Option<u32>,
}

impl Relaxed {
    /// The dispatches needed where known, else the dispatches recorded.
    pub fn count(&self) -> u32 {
        self.needed.unwrap_or(self.recorded)
    }
}

impl<'g> DepressionPasses<'g> for Rec<'g> {
    /// Record `relax` until a dispatch changes nothing; the counter is read after 1
    /// dispatch, then after batches one longer each time (at most [`MAX_BATCH`]): a few
    /// dispatches usually suffice, and each costs more than a read of the counter. When the
    /// recorder speculates and the count is known, that many dispatches without a read (the
    /// counter verified with the island, see `recorder::Speculation`).
    fn relax_until_stable(
        &mut self,
        b: &DepressionBufs,
        what: &'static str,
        hint: &Cell<u32>,
        mut relax: impl FnMut(&mut Rec<'g>, u32) -> Result<(), GpuError>,
    ) -> Result<Relaxed, GpuError> {
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
                return Ok(Relaxed {
                    recorded: done,
                    needed: None,
                });
            }
            self.enc
                .copy_buffer_to_buffer(&b.changed, 0, &b.pending, 0, 8);
            let got = u32s(&self.read_back(&[(&b.pending, 8)], None)?[0]);
            if got[0] == 0 {
                // Needed: the productive dispatches and one that changes nothing.
                let need = got[1] + 1;
                hint.set(need);
                learned::learn(key, need, b.learn_runs);
                return Ok(Relaxed {
                    recorded: done,
                    needed: Some(need),
                });
            }
            // Every dispatch settles at least one more sample for good.
            if done > len + MAX_BATCH {
                return Err(GpuError::Wgpu(format!("{what}: no convergence")));
            }
            batch = (batch + 1).min(MAX_BATCH);
        }
    }

    fn fill_keys(
        &mut self,
        b: &DepressionBufs,
        h: &wgpu::Buffer,
        sea: f32,
    ) -> Result<u32, GpuError> {
        let p = b.uniform(sea);
        // The first dispatch starts from the heights (no init pass).
        let iters = self.relax_until_stable(b, "depression_fill", &b.fill_hint, |rec, iter| {
            let (src, dst) = DepressionBufs::pair(&b.key, iter);
            rec.pass(FILL_RELAX)
                .params(&u::Depression { iter, ..p })
                .read("h", h)
                .read("fill_key", src)
                .write("fill_key_out", dst)
                .read_write("changed", &b.changed)
                .run(relax_groups(b.n))
        })?;
        b.key_at.set((iters.recorded % 2) as usize);
        Ok(iters.count())
    }

    fn depression_fill(
        &mut self,
        b: &DepressionBufs,
        h: &wgpu::Buffer,
        filled: &wgpu::Buffer,
        sea: f32,
    ) -> Result<u32, GpuError> {
        let iters = self.fill_keys(b, h, sea)?;
        self.ensure_slots(1)?;
        self.pass(FILL_DECODE)
            .params(&b.uniform(sea))
            .read("h", h)
            .read("fill_key", b.keys())
            .write("filled", filled)
            .run(grid2(b.n))?;
        Ok(iters)
    }

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
            .read("fill_key", b.keys())
            .write("filled", filled)
            .write("class_of", &b.class)
            .write("dist", &b.dist[0])
            .write("flat", flat)
            .run(grid2(b.n))?;
        let iters = self.relax_until_stable(b, "flat_routing", &b.flat_hint, |rec, iter| {
            let (src, dst) = DepressionBufs::pair(&b.dist, iter);
            rec.pass(FLAT_RELAX)
                .params(&u::Depression { iter, ..p })
                .read("filled", filled)
                .read("class_of", &b.class)
                .read("dist", src)
                .write("dist_out", dst)
                .read_write("changed", &b.changed)
                .run(relax_groups(b.n))
        })?;
        self.ensure_slots(1)?;
        self.pass(FLAT_RECEIVERS)
            .params(&p)
            .read("filled", filled)
            .read("class_of", &b.class)
            .read("dist", DepressionBufs::pair(&b.dist, iters.recorded).0)
            .write("flat", flat)
            .run(grid2(b.n))?;
        Ok(iters.count())
    }
}

/// Order-preserving key of a height (the shader's `order_key`).
fn order_key(v: f32) -> u32 {
    let b = v.to_bits();
    if b & 0x8000_0000 != 0 {
        !b
    } else {
        b | 0x8000_0000
    }
}

/// GPU [`island_core::drainage::depression_fill`] of `heights` (`n²`, sea at or below
/// `sea_level`): the filled surface and the relaxation dispatches it needed (the productive
/// ones, and one that changed nothing).
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
/// elsewhere) and the relaxation dispatches it needed (the productive ones, and one that
/// changed nothing).
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
        let fb = gpu.storage("filled", (n * n * 4) as u64);
        let out = gpu.storage("flat", (n * n * 4) as u64);
        let db = DepressionBufs::new(rec, n);
        // The given surface as the fill keys `fill_keys` leaves (the sea's are not read).
        let keys: Vec<u32> = filled.iter().map(|&f| order_key(f)).collect();
        gpu.upload(db.keys(), 0, bytemuck::cast_slice(&keys));
        let iters = rec.flat_routing(&db, &hb, &fb, &out, sea_level)?;
        Ok((read_u32(rec, &out, n * n)?, iters))
    })
}
