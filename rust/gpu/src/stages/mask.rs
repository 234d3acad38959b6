//! The mask stage (`island_mask.wgsl`): `island_core::mask::island_mask`, or the CPU outline uploaded.

use crate::ctx::grid2;
use crate::error::GpuError;
use crate::passes::Entry;
use crate::recorder::Rec;
use crate::run::Run;
use crate::stages::host::*;
use crate::uniforms::{self as u, Grid};
use island_core::hash::tag;
use island_core::params::*;
use island_core::pipeline::border_margin;
use island_core::Grid as CoreGrid;

/// The entry points this module dispatches (registered in `crate::shaders`).
const MASK: Entry = Entry::new("island_mask", "main");

/// The `Mask` uniform of [`island_core::mask::island_mask`]`(_, m, margin, tag)`.
pub(crate) fn mask(m: &MaskParams, margin: f32, tg: u32) -> u::Mask {
    u::Mask {
        tag: tg,
        radius: m.radius,
        amp: island_core::mask::MASK_DEFORMATION * (1.0 - m.roundness),
        noise_scale: m.noise_scale,
        margin,
    }
}

pub(crate) fn stage_mask(run: &mut Run) -> Result<(), GpuError> {
    let (gpu, p) = (run.gpu, run.p);
    let (rec, r) = run.parts();
    if !uses_legacy_mask(p) {
        // Every other outline (shapes, gaussian-following, drawn masks) is computed on the CPU
        // (`island_core::shape::shape_mask`, a few ms) and uploaded: the GPU island is the CPU
        // one.
        let mask = island_core::shape::shape_mask(p).map_err(GpuError::Invalid)?;
        let m: Vec<u32> = mask.iter().map(|&v| v as u32).collect();
        let staging = gpu.storage_init("shape_mask", bytemuck::cast_slice(&m));
        rec.enc
            .copy_buffer_to_buffer(&staging, 0, &r.mask, 0, (m.len() * 4) as u64);
        return Ok(());
    }
    let mp = mask(&p.mask, border_margin(p), tag::MASK);
    rec.mask(&r.mask, &mp)
}

/// Whether the island's outline is the ROUND deformed circle the `island_mask.wgsl` pass
/// computes (ROUND without a land fraction, no drawn mask, not following gaussian islands).
fn uses_legacy_mask(p: &IslandParams) -> bool {
    // A sculpt layer may redraw the coast: its outline comes from the CPU too.
    p.coast_mask.is_none()
        && p.sculpt.is_none()
        && !island_core::shape::gaussian_follows(p)
        && p.shape.shape == island_core::params::IslandShape::Round
        && p.shape.land_fraction == 0.0
}

/// The recording of these passes (`rec.method(..)` with this trait in scope).
pub(crate) trait MaskPasses {
    fn mask(&mut self, mask: &wgpu::Buffer, p: &u::Mask) -> Result<(), GpuError>;
}

impl MaskPasses for Rec<'_> {
    fn mask(&mut self, mask: &wgpu::Buffer, p: &u::Mask) -> Result<(), GpuError> {
        let n = self.n;
        self.pass(MASK).params(p).write("mask", mask).run(grid2(n))
    }
}

/// GPU [`island_core::mask::island_mask`].
pub fn island_mask(
    g: &CoreGrid,
    m: &MaskParams,
    margin: f32,
    tag: u32,
) -> Result<Vec<u8>, GpuError> {
    let resolution = g.resolution;
    let p = mask(m, margin, tag);
    with_gpu(Grid::new(resolution, g.world_size, g.seed), |gpu, rec| {
        let out = gpu.storage("mask", (resolution * resolution) as u64 * 4);
        rec.mask(&out, &p)?;
        Ok(read_u32(rec, &out, resolution * resolution)?
            .into_iter()
            .map(|v| v as u8)
            .collect())
    })
}
