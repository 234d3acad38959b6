//! The detail stage (`apply_detail.wgsl`): `island_core::detail::apply_detail`.

use super::noise::{noise_fbm, NoisePasses};
use crate::ctx::grid2;
use crate::error::GpuError;
use crate::passes::Entry;
use crate::recorder::Rec;
use crate::run::Run;
use crate::stages::host::*;
use crate::uniforms::{self as u, Grid};
use island_core::hash::tag;

/// The entry points this module dispatches (registered in `crate::shaders`).
const DETAIL: Entry = Entry::new("apply_detail", "main");

pub(crate) fn stage_detail(run: &mut Run) -> Result<(), GpuError> {
    let p = run.p;
    let (rec, r) = run.parts();
    if !p.detail.enabled {
        return Ok(());
    }
    let d = &p.detail;
    rec.fbm(
        &r.detail_noise,
        &noise_fbm(&p.grid(), &d.noise(), tag::DETAIL),
    )?;
    let dp = u::Detail {
        strength: d.strength,
        cap: d.cap,
    };
    rec.detail(&r.heights, &r.detail_noise, &dp)
}

/// The recording of these passes (`rec.method(..)` with this trait in scope).
pub(crate) trait DetailPasses {
    fn detail(
        &mut self,
        base: &wgpu::Buffer,
        detail: &wgpu::Buffer,
        p: &u::Detail,
    ) -> Result<(), GpuError>;
}

impl DetailPasses for Rec<'_> {
    fn detail(
        &mut self,
        base: &wgpu::Buffer,
        detail: &wgpu::Buffer,
        p: &u::Detail,
    ) -> Result<(), GpuError> {
        let n = self.n;
        self.pass(DETAIL)
            .params(p)
            .read("detail", detail)
            .read_write("base", base)
            .run(grid2(n))
    }
}

/// GPU [`island_core::detail::apply_detail`] (returns the new base).
pub fn apply_detail(
    base: &[f32],
    detail: &[f32],
    strength: f32,
    cap: f32,
    resolution: usize,
) -> Result<Vec<f32>, GpuError> {
    check_len("base", base.len(), resolution * resolution)?;
    check_len("detail", detail.len(), resolution * resolution)?;
    with_gpu(Grid::new(resolution, 1.0, 0), |gpu, rec| {
        let b = gpu.storage_init("base", bytemuck::cast_slice(base));
        let d = gpu.storage_init("detail", bytemuck::cast_slice(detail));
        rec.detail(&b, &d, &u::Detail { strength, cap })?;
        read_f32(rec, &b, base.len())
    })
}
