//! The channel passes (`shaders/channels.wgsl`): [`Rec::carve_rivers`], the GPU twin of
//! `island_core::channels::carve_rivers`, bit-identical (mins, maxes and copies along the
//! receivers; see the shader).
//!
//! The river samples (a list of a few thousand, downstream first, with the width and depth of
//! the core's `river_sample`) and the table of `√k` come from the host: the river list is in
//! the flow order the host computes anyway, and both keep the core's `sqrt` / `powf` bits.

use crate::ctx::grid2;
use crate::error::GpuError;
use crate::passes::Entry;
use crate::recorder::Rec;
use crate::stages::host::*;
use crate::uniforms::{self as u, Grid};

use island_core::channels::CarveSettings;
use island_core::drainage::RiverSample;

/// The entry points this module dispatches (registered in `crate::shaders`).
const CARVE_FILL: Entry = Entry::new("channels", "carve_fill");
const CARVE_INIT: Entry = Entry::new("channels", "carve_init");
const CARVE_BED_MIN: Entry = Entry::new("channels", "carve_bed_min");
const CARVE_BED_BASE: Entry = Entry::new("channels", "carve_bed_base");
const CARVE_STAMPS: Entry = Entry::new("channels", "carve_stamps");
const CARVE_BANKS_WALK: Entry = Entry::new("channels", "carve_banks_walk");
const CARVE_DECODE: Entry = Entry::new("channels", "carve_decode");

/// Scratch of [`Rec::carve_rivers`]: three `n²` planes of 4-byte words.
pub(crate) struct CarveScratch<'b> {
    /// River position of each sample.
    pub riv: &'b wgpu::Buffer,
    /// Heights as order-preserving keys.
    pub hkey: &'b wgpu::Buffer,
    /// Bed of each river sample, as a key.
    pub bed: &'b wgpu::Buffer,
}

/// What [`Rec::carve_rivers`] reads besides the heights (all `n²`).
pub(crate) struct CarveInput<'b> {
    pub filled: &'b wgpu::Buffer,
    /// Lake of each sample (any value), `NONE` where there is none.
    pub lake: &'b wgpu::Buffer,
    pub rcv: &'b wgpu::Buffer,
    pub rivers: &'b [RiverSample],
    pub spacing: f32,
    pub sea_level: f32,
}

/// `√k` for every `k = dx² + dz²` a stamp of these rivers reaches, as the core computes it.
fn sqrt_table(rivers: &[RiverSample], spacing: f32, s: &CarveSettings) -> Vec<f32> {
    let rc = rivers
        .iter()
        .map(|r| ((0.5 * r.width + s.bank_width) / spacing).floor() as i64 + 1)
        .max()
        .unwrap_or(0)
        .max(0) as usize;
    (0..=2 * rc * rc).map(|k| (k as f32).sqrt()).collect()
}

/// The recording of these passes (`rec.method(..)` with this trait in scope).
pub(crate) trait ChannelPasses {
    /// `island_core::channels::carve_rivers` of `heights` (`n²`, the recording's grid) with
    /// the drainage in `input`: pits filled, and the rivers carved when `settings.enabled`.
    fn carve_rivers(
        &mut self,
        heights: &wgpu::Buffer,
        input: &CarveInput,
        scratch: &CarveScratch,
        settings: &CarveSettings,
    ) -> Result<(), GpuError>;
}

impl ChannelPasses for Rec<'_> {
    /// `island_core::channels::carve_rivers` of `heights` (`n²`, the recording's grid) with
    /// the drainage in `input`: pits filled, and the rivers carved when `settings.enabled`.
    fn carve_rivers(
        &mut self,
        heights: &wgpu::Buffer,
        input: &CarveInput,
        scratch: &CarveScratch,
        settings: &CarveSettings,
    ) -> Result<(), GpuError> {
        let gpu = self.gpu;
        let g = grid2(self.n);
        let rivers: Vec<[u32; 4]> = input
            .rivers
            .iter()
            .map(|r| [r.index, r.depth.to_bits(), r.width.to_bits(), 0])
            .collect();
        let carve = settings.enabled && !rivers.is_empty();
        let list = gpu.storage_init("river list", bytemuck::cast_slice(&rivers));
        let table = sqrt_table(input.rivers, input.spacing, settings);
        let table = gpu.storage_init("sqrt table", bytemuck::cast_slice(&table));
        let p = u::Carve {
            sea_level: input.sea_level,
            bank_slope: settings.bank_slope,
            bank_width: settings.bank_width,
            spacing: input.spacing,
            count: if carve { rivers.len() as u32 } else { 0 },
        };
        self.ensure_slots(7)?;
        self.pass(CARVE_FILL)
            .read("filled", input.filled)
            .read("lake", input.lake)
            .read_write("heights", heights)
            .write("hkey", scratch.hkey)
            .write("riv", scratch.riv)
            .run(g)?;
        if !carve {
            return Ok(());
        }
        // One invocation per list position (the list is shorter than the grid).
        self.pass(CARVE_INIT)
            .params(&p)
            .read("filled", input.filled)
            .read("rivers", &list)
            .write("riv", scratch.riv)
            .write("bed", scratch.bed)
            .run(g)?;
        self.pass(CARVE_BED_MIN)
            .params(&p)
            .read("rcv", input.rcv)
            .read("rivers", &list)
            .read("riv", scratch.riv)
            .read_write("bed", scratch.bed)
            .run(g)?;
        self.pass(CARVE_BED_BASE)
            .params(&p)
            .read("filled", input.filled)
            .read("lake", input.lake)
            .read("rcv", input.rcv)
            .read("rivers", &list)
            .read("riv", scratch.riv)
            .read_write("bed", scratch.bed)
            .run(g)?;
        self.pass(CARVE_STAMPS)
            .params(&p)
            .read("lake", input.lake)
            .read("rivers", &list)
            .read("sqrt_table", &table)
            .read_write("hkey", scratch.hkey)
            .read("bed", scratch.bed)
            .run(g)?;
        self.pass(CARVE_BANKS_WALK)
            .params(&p)
            .read("lake", input.lake)
            .read("rcv", input.rcv)
            .read("rivers", &list)
            .read("riv", scratch.riv)
            .read_write("hkey", scratch.hkey)
            .run(g)?;
        self.pass(CARVE_DECODE)
            .read("hkey", scratch.hkey)
            .write("heights", heights)
            .run(g)
    }
}

/// GPU [`island_core::channels::carve_rivers`] of `heights` (`n²`) with the drainage `d` of
/// those heights: the carved heights (the report is the core's business).
pub fn carve_rivers(
    heights: &[f32],
    d: &island_core::drainage::Drainage,
    settings: &island_core::channels::CarveSettings,
) -> Result<Vec<f32>, GpuError> {
    let n = d.n;
    check_len("heights", heights.len(), n * n)?;
    settings.validate().map_err(|e| bad("carve", e))?;
    with_gpu(Grid::new(n, 1.0, 0), |gpu, rec| {
        let hb = gpu.storage_init("heights", bytemuck::cast_slice(heights));
        let fb = gpu.storage_init("filled", bytemuck::cast_slice(&d.filled));
        let lb = gpu.storage_init("lake", bytemuck::cast_slice(&d.lake_id));
        let rb = gpu.storage_init("rcv", bytemuck::cast_slice(&d.receivers));
        let plane = (n * n * 4) as u64;
        let (riv, hkey, bed) = (
            gpu.storage("riv", plane),
            gpu.storage("hkey", plane),
            gpu.storage("bed", plane),
        );
        let input = super::channels::CarveInput {
            filled: &fb,
            lake: &lb,
            rcv: &rb,
            rivers: &d.rivers,
            spacing: d.spacing,
            sea_level: d.sea_level,
        };
        let scratch = super::channels::CarveScratch {
            riv: &riv,
            hkey: &hkey,
            bed: &bed,
        };
        rec.carve_rivers(&hb, &input, &scratch, settings)?;
        read_f32(rec, &hb, n * n)
    })
}
