//! fBm and value noise (`fbm_noise.wgsl`, `value_noise.wgsl`): the GPU twins of `island_core::gradient_noise::fbm_noise` and `island_core::value_noise::value_noise`.

use crate::ctx::grid2;
use crate::error::GpuError;
use crate::passes::Entry;
use crate::recorder::Rec;
use crate::stages::host::*;
use crate::uniforms::{self as u, Grid};
use island_core::params::*;
use island_core::Grid as CoreGrid;

/// The entry points this module dispatches (registered in `crate::shaders`).
const FBM: Entry = Entry::new("fbm_noise", "main");
const VALUE: Entry = Entry::new("value_noise", "main");

/// Noise units per sample for a wavelength of `scale` metres (as `fbm_noise` computes it).
pub(crate) fn noise_step(n: usize, world: f32, scale: f32) -> f32 {
    world / (n - 1) as f32 / scale
}

/// The `Noise` uniform of [`island_core::gradient_noise::fbm_noise`]`(g, f, tag)`.
pub(crate) fn noise_fbm(g: &CoreGrid, f: &FbmParams, tg: u32) -> u::Noise {
    u::Noise {
        tag: tg,
        octaves: f.octaves,
        step: noise_step(g.resolution, g.world_size, f.scale),
        lacunarity: f.lacunarity,
        persistence: f.persistence,
    }
}

/// The `Noise` uniform of [`island_core::value_noise::value_noise`]`(g, v, tag)`.
pub(crate) fn noise_value(g: &CoreGrid, v: &ValueNoiseParams, tg: u32) -> u::Noise {
    u::Noise {
        tag: tg,
        octaves: v.octaves,
        step: noise_step(g.resolution, g.world_size, v.scale),
        lacunarity: 0.0,
        persistence: v.persistence,
    }
}

/// The recording of these passes (`rec.method(..)` with this trait in scope).
pub(crate) trait NoisePasses {
    fn fbm(&mut self, out: &wgpu::Buffer, p: &u::Noise) -> Result<(), GpuError>;

    fn value(&mut self, out: &wgpu::Buffer, p: &u::Noise) -> Result<(), GpuError>;
}

impl NoisePasses for Rec<'_> {
    fn fbm(&mut self, out: &wgpu::Buffer, p: &u::Noise) -> Result<(), GpuError> {
        let n = self.n;
        self.pass(FBM).params(p).write("out_f", out).run(grid2(n))
    }

    fn value(&mut self, out: &wgpu::Buffer, p: &u::Noise) -> Result<(), GpuError> {
        let n = self.n;
        self.pass(VALUE).params(p).write("out_f", out).run(grid2(n))
    }
}

/// GPU [`island_core::gradient_noise::fbm_noise`].
pub fn fbm_noise(g: &CoreGrid, f: &FbmParams, tag: u32) -> Result<Vec<f32>, GpuError> {
    let resolution = g.resolution;
    let p = noise_fbm(g, f, tag);
    with_gpu(Grid::new(resolution, g.world_size, g.seed), |gpu, rec| {
        let out = gpu.storage("out", (resolution * resolution) as u64 * 4);
        rec.fbm(&out, &p)?;
        read_f32(rec, &out, resolution * resolution)
    })
}

/// GPU [`island_core::value_noise::value_noise`].
pub fn value_noise(g: &CoreGrid, v: &ValueNoiseParams, tag: u32) -> Result<Vec<f32>, GpuError> {
    let resolution = g.resolution;
    let p = noise_value(g, v, tag);
    with_gpu(Grid::new(resolution, g.world_size, g.seed), |gpu, rec| {
        let out = gpu.storage("out", (resolution * resolution) as u64 * 4);
        rec.value(&out, &p)?;
        read_f32(rec, &out, resolution * resolution)
    })
}
