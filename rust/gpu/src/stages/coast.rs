//! The coast stage (`coastal_falloff.wgsl`): `island_core::coast::coastal_falloff`.

use super::noise::{noise_fbm, NoisePasses};
use crate::ctx::grid2;
use crate::error::GpuError;
use crate::passes::Entry;
use crate::recorder::Rec;
use crate::run::Run;
use crate::stages::host::*;
use crate::uniforms::{self as u, Grid};
use island_core::hash::tag;
use island_core::params::*;

/// The entry points this module dispatches (registered in `crate::shaders`).
const COAST: Entry = Entry::new("coastal_falloff", "main");

pub(crate) fn coast(max_height: f32, c: &CoastParams) -> u::Coast {
    u::Coast {
        max_height,
        coast_width: c.coast_width,
        beach_height: c.beach_height,
        shelf_width: c.shelf_width,
        sea_depth: c.sea_depth,
        fine_amplitude: c.fine_amplitude,
    }
}

pub(crate) fn stage_coast(run: &mut Run) -> Result<(), GpuError> {
    let p = run.p;
    let (rec, r) = run.parts();
    let c = &p.coast;
    let np = noise_fbm(&p.grid(), &c.fine_noise(), tag::FINE);
    rec.fbm(&r.fine_noise, &np)?;
    rec.coast(
        &r.heights,
        &r.distance,
        &r.fine_noise,
        &r.roughness,
        &coast(p.max_height, c),
    )
}

/// The recording of these passes (`rec.method(..)` with this trait in scope).
pub(crate) trait CoastPasses {
    fn coast(
        &mut self,
        land01: &wgpu::Buffer,
        dist: &wgpu::Buffer,
        fine: &wgpu::Buffer,
        rough: &wgpu::Buffer,
        p: &u::Coast,
    ) -> Result<(), GpuError>;
}

impl CoastPasses for Rec<'_> {
    fn coast(
        &mut self,
        land01: &wgpu::Buffer,
        dist: &wgpu::Buffer,
        fine: &wgpu::Buffer,
        rough: &wgpu::Buffer,
        p: &u::Coast,
    ) -> Result<(), GpuError> {
        let n = self.n;
        self.pass(COAST)
            .params(p)
            .read("dist", dist)
            .read("fine", fine)
            .read("rough", rough)
            .read_write("land01", land01)
            .run(grid2(n))
    }
}

/// GPU [`island_core::coast::coastal_falloff`].
pub fn coastal_falloff(
    land01: &[f32],
    dist: &[f32],
    fine: &[f32],
    roughness: &[f32],
    resolution: usize,
    max_height: f32,
    c: &CoastParams,
) -> Result<Vec<f32>, GpuError> {
    let nn = resolution * resolution;
    for (f, v) in [
        ("land01", land01),
        ("dist", dist),
        ("fine", fine),
        ("roughness", roughness),
    ] {
        check_len(f, v.len(), nn)?;
    }
    let p = coast(max_height, c);
    with_gpu(Grid::new(resolution, 1.0, 0), |gpu, rec| {
        let l = gpu.storage_init("land01", bytemuck::cast_slice(land01));
        let d = gpu.storage_init("dist", bytemuck::cast_slice(dist));
        let f = gpu.storage_init("fine", bytemuck::cast_slice(fine));
        let r = gpu.storage_init("rough", bytemuck::cast_slice(roughness));
        rec.coast(&l, &d, &f, &r, &p)?;
        read_f32(rec, &l, nn)
    })
}
