//! The shaping stage (`apply_shaping_curve.wgsl`): `island_core::shaping::apply_shaping_curve`.

use crate::ctx::grid2;
use crate::error::GpuError;
use crate::passes::Entry;
use crate::recorder::Rec;
use crate::run::Run;
use crate::stages::host::*;
use crate::uniforms::{self as u, Grid};

/// The entry points this module dispatches (registered in `crate::shaders`).
const SHAPING: Entry = Entry::new("apply_shaping_curve", "main");

pub(crate) fn stage_shaping(run: &mut Run) -> Result<(), GpuError> {
    let (gpu, p) = (run.gpu, run.p);
    let (rec, r) = run.parts();
    let lut = gpu.storage_init("lut", bytemuck::cast_slice(&p.shaping_curve));
    rec.shaping(&r.heights, &lut, p.shaping_curve.len())
}

/// The recording of these passes (`rec.method(..)` with this trait in scope).
pub(crate) trait ShapingPasses {
    /// Shaping curve: `lut` holds `lut_len` f32 values.
    fn shaping(
        &mut self,
        heights: &wgpu::Buffer,
        lut: &wgpu::Buffer,
        lut_len: usize,
    ) -> Result<(), GpuError>;
}

impl ShapingPasses for Rec<'_> {
    /// Shaping curve: `lut` holds `lut_len` f32 values.
    fn shaping(
        &mut self,
        heights: &wgpu::Buffer,
        lut: &wgpu::Buffer,
        lut_len: usize,
    ) -> Result<(), GpuError> {
        let n = self.n;
        self.pass(SHAPING)
            .params(&u::Shaping {
                lut_len: lut_len as u32,
            })
            .read("lut", lut)
            .read_write("heights", heights)
            .run(grid2(n))
    }
}

/// GPU [`island_core::shaping::apply_shaping_curve`] (returns the remapped heights).
pub fn apply_shaping_curve(
    heights: &[f32],
    resolution: usize,
    lut: &[f32],
) -> Result<Vec<f32>, GpuError> {
    check_len("heights", heights.len(), resolution * resolution)?;
    if lut.len() < 2 {
        return Err(bad("shaping_curve", "needs at least 2 points"));
    }
    with_gpu(Grid::new(resolution, 1.0, 0), |gpu, rec| {
        let b = gpu.storage_init("heights", bytemuck::cast_slice(heights));
        let l = gpu.storage_init("lut", bytemuck::cast_slice(lut));
        rec.shaping(&b, &l, lut.len())?;
        read_f32(rec, &b, heights.len())
    })
}
