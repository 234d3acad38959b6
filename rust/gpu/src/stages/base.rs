//! The base stage: diamond-square, gaussian islands and the normalisation (`diamond_square.wgsl`, `gaussian_islands.wgsl`, `normalize_01.wgsl`); the fBm and value noise are in [`super::noise`].

use super::noise::NoisePasses;
use super::noise::{noise_fbm, noise_value};
use crate::ctx::grid2;
use crate::error::GpuError;
use crate::passes::Entry;
use crate::recorder::Rec;
use crate::run::Run;
use crate::stages::host::*;
use crate::uniforms::{self as u, Grid, DS_TILE, NORM_PER_GROUP, NORM_WORKGROUP};
use island_core::diamond_square::level_amplitude;
use island_core::gaussian_islands::gaussian_mountains;
use island_core::hash::tag;
use island_core::params::*;
use island_core::Grid as CoreGrid;

/// The entry points this module dispatches (registered in `crate::shaders`).
const DS_CORNERS: Entry = Entry::new("diamond_square", "corners");
const DS_DIAMOND: Entry = Entry::new("diamond_square", "diamond_pass");
const DS_SQUARE: Entry = Entry::new("diamond_square", "square_pass");
const GAUSSIAN: Entry = Entry::new("gaussian_islands", "main");
const NORM_PARTIAL: Entry = Entry::new("normalize_01", "reduce_partial");
const NORM_FINAL: Entry = Entry::new("normalize_01", "reduce_final");
const NORM_APPLY: Entry = Entry::new("normalize_01", "apply");

/// The mountains of [`island_core::gaussian_islands::gaussian_islands`]`(g, p, tag)`, drawn on
/// the CPU, as `[x, z, radius, amplitude]`.
pub(crate) fn mountains_data(g: &CoreGrid, p: &GaussianParams, tg: u32) -> Vec<[f32; 4]> {
    gaussian_mountains(g.world_size, p.cells, p.density, p.separation, g.seed, tg)
        .iter()
        .map(|m| [m.x, m.z, m.radius, m.amplitude])
        .collect()
}

pub(crate) fn stage_base(run: &mut Run) -> Result<(), GpuError> {
    let (gpu, p) = (run.gpu, run.p);
    let g = p.grid();
    let (rec, r) = run.parts();
    match p.algorithm {
        Algorithm::Fbm => rec.fbm(&r.heights, &noise_fbm(&g, &p.fbm, tag::BASE))?,
        Algorithm::ValueNoise => {
            rec.value(&r.heights, &noise_value(&g, &p.value_noise, tag::BASE))?
        }
        Algorithm::DiamondSquare => {
            let d = &p.diamond_square;
            rec.diamond_square(&r.heights, d.roughness, d.ridge, tag::BASE)?
        }
        Algorithm::GaussianIslands => {
            let m = mountains_data(&g, &p.gaussian, tag::BASE);
            let mb = gpu.storage_init("mountains", bytemuck::cast_slice(&m));
            rec.gaussian(&r.heights, &mb, m.len())?;
        }
    }
    rec.normalize(&r.heights, &r.normalize_partials, &r.minmax)
}

/// The recording of these passes (`rec.method(..)` with this trait in scope).
pub(crate) trait BasePasses {
    fn diamond_square(
        &mut self,
        out: &wgpu::Buffer,
        roughness: f32,
        ridge: bool,
        tg: u32,
    ) -> Result<(), GpuError>;

    fn gaussian(
        &mut self,
        out: &wgpu::Buffer,
        mountains: &wgpu::Buffer,
        count: usize,
    ) -> Result<(), GpuError>;

    /// Rescale `data` to [0, 1] in place; `partials` holds 8 bytes per `NORM_PER_GROUP`
    /// samples, `minmax` 8 bytes.
    fn normalize(
        &mut self,
        data: &wgpu::Buffer,
        partials: &wgpu::Buffer,
        minmax: &wgpu::Buffer,
    ) -> Result<(), GpuError>;
}

impl BasePasses for Rec<'_> {
    fn diamond_square(
        &mut self,
        out: &wgpu::Buffer,
        roughness: f32,
        ridge: bool,
        tg: u32,
    ) -> Result<(), GpuError> {
        let n = self.n;
        let corners = u::Diamond {
            tag: tg,
            ridge: ridge as u32,
            ..Default::default()
        };
        self.pass(DS_CORNERS)
            .params(&corners)
            .write("h", out)
            .run((1, 1, 1))?;
        let mut step = n - 1;
        while step > 1 {
            let half = step / 2;
            let amp = level_amplitude(n, half, roughness);
            let cnt = ((n - 1) / step) as u32;
            let diamond = u::Diamond {
                step: step as u32,
                amp,
                ..corners
            };
            self.pass(DS_DIAMOND)
                .params(&diamond)
                .read_write("h", out)
                .run((cnt.div_ceil(DS_TILE), cnt.div_ceil(DS_TILE), 1))?;
            let rows = ((n - 1) / half + 1) as u32;
            let square = u::Diamond {
                amp: amp * roughness,
                ..diamond
            };
            self.pass(DS_SQUARE)
                .params(&square)
                .read_write("h", out)
                .run(((cnt + 1).div_ceil(DS_TILE), rows.div_ceil(DS_TILE), 1))?;
            step = half;
        }
        Ok(())
    }

    fn gaussian(
        &mut self,
        out: &wgpu::Buffer,
        mountains: &wgpu::Buffer,
        count: usize,
    ) -> Result<(), GpuError> {
        let n = self.n;
        self.pass(GAUSSIAN)
            .params(&u::Gaussian {
                mountain_count: count as u32,
            })
            .read("mountains", mountains)
            .write("out_f", out)
            .run(grid2(n))
    }

    /// Rescale `data` to [0, 1] in place; `partials` holds 8 bytes per `NORM_PER_GROUP`
    /// samples, `minmax` 8 bytes.
    fn normalize(
        &mut self,
        data: &wgpu::Buffer,
        partials: &wgpu::Buffer,
        minmax: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let nn = self.n * self.n;
        let groups = nn.div_ceil(NORM_PER_GROUP) as u32;
        self.pass(NORM_PARTIAL)
            .read("data", data)
            .write("partial", partials)
            .run((groups, 1, 1))?;
        self.pass(NORM_FINAL)
            .params(&u::Normalize { partials: groups })
            .read("partial", partials)
            .write("minmax", minmax)
            .run((1, 1, 1))?;
        let wgs = nn.div_ceil(NORM_WORKGROUP) as u32;
        let gx = wgs.min(32768);
        self.pass(NORM_APPLY)
            .read("minmax", minmax)
            .read_write("data", data)
            .run((gx, wgs.div_ceil(gx), 1))
    }
}

/// GPU [`island_core::diamond_square::diamond_square`] (`g.world_size` is not used).
pub fn diamond_square(
    g: &CoreGrid,
    d: &DiamondSquareParams,
    tag: u32,
) -> Result<Vec<f32>, GpuError> {
    let resolution = g.resolution;
    if resolution < 3 || !(resolution - 1).is_power_of_two() {
        return Err(bad(
            "resolution",
            format!("must be 2^n+1, got {resolution}"),
        ));
    }
    with_gpu(Grid::new(resolution, 1.0, g.seed), |gpu, rec| {
        let out = gpu.storage("out", (resolution * resolution) as u64 * 4);
        rec.diamond_square(&out, d.roughness, d.ridge, tag)?;
        read_f32(rec, &out, resolution * resolution)
    })
}

/// GPU [`island_core::gaussian_islands::gaussian_islands`] (mountains drawn on the CPU by the
/// shared `gaussian_mountains`).
pub fn gaussian_islands(g: &CoreGrid, p: &GaussianParams, tag: u32) -> Result<Vec<f32>, GpuError> {
    let resolution = g.resolution;
    let m = mountains_data(g, p, tag);
    with_gpu(Grid::new(resolution, g.world_size, g.seed), |gpu, rec| {
        let out = gpu.storage("out", (resolution * resolution) as u64 * 4);
        let mb = gpu.storage_init("mountains", bytemuck::cast_slice(&m));
        rec.gaussian(&out, &mb, m.len())?;
        read_f32(rec, &out, resolution * resolution)
    })
}

/// GPU [`island_core::grid::normalize_01`] of a `resolution²` field.
pub fn normalize_01(data: &[f32], resolution: usize) -> Result<Vec<f32>, GpuError> {
    check_len("data", data.len(), resolution * resolution)?;
    with_gpu(Grid::new(resolution, 1.0, 0), |gpu, rec| {
        let b = gpu.storage_init("data", bytemuck::cast_slice(data));
        let partial = gpu.storage("partial", (data.len().div_ceil(NORM_PER_GROUP) * 8) as u64);
        let mm = gpu.storage("minmax", 16);
        rec.normalize(&b, &partial, &mm)?;
        read_f32(rec, &b, data.len())
    })
}
