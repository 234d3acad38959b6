//! The wetness pass (`shaders/wetness.wgsl`): [`Rec::apply_wetness`], the GPU twin of
//! `island_core::wetness::apply_wetness`, over the packed splat bytes. The distance to the
//! inland water is the distance pass (`distance_to_coast.wgsl`, exact) over the inland mask.

use super::distance::DistancePasses;
use crate::ctx::grid2;
use crate::error::GpuError;
use crate::passes::Entry;
use crate::recorder::Rec;
use crate::stages::host::*;
use crate::uniforms::{self as u, Grid};

use island_core::params::SplatParams;
use island_core::water::{Water, LAKE, RIVER};
use island_core::wetness::DRY_SLOPE_BAND;

/// The entry points this module dispatches (registered in `crate::shaders`).
const APPLY_WETNESS: Entry = Entry::new("wetness", "apply_wetness");

/// The inland mask of `water` (1 on river and lake samples) and whether it has any.
pub(crate) fn inland_mask(water: &Water) -> (Vec<u32>, bool) {
    let mask: Vec<u32> = water
        .kind
        .iter()
        .map(|&k| (k == RIVER || k == LAKE) as u32)
        .collect();
    let any = mask.iter().any(|&m| m != 0);
    (mask, any)
}

/// Scratch of [`Rec::apply_wetness`]: `n²` planes (the inland mask, three for the distance
/// transform, the distance) and the distance pass's flags.
pub(crate) struct WetScratch<'b> {
    pub mask: &'b wgpu::Buffer,
    pub g: &'b wgpu::Buffer,
    pub s: &'b wgpu::Buffer,
    pub t: &'b wgpu::Buffer,
    pub flags: &'b wgpu::Buffer,
    pub dist: &'b wgpu::Buffer,
}

/// The recording of these passes (`rec.method(..)` with this trait in scope).
pub(crate) trait WetnessPasses {
    /// `island_core::wetness::apply_wetness` of the packed splat `packed` (`n²` words, RGBA8)
    /// with `heights`, `normal_y` and the inland mask already in `scratch.mask`. Nothing to do
    /// (the caller checks) when the strength is 0 or there is no inland water.
    fn apply_wetness(
        &mut self,
        packed: &wgpu::Buffer,
        heights: &wgpu::Buffer,
        normal_y: &wgpu::Buffer,
        scratch: &WetScratch,
        p: &SplatParams,
    ) -> Result<(), GpuError>;
}

impl WetnessPasses for Rec<'_> {
    /// `island_core::wetness::apply_wetness` of the packed splat `packed` (`n²` words, RGBA8)
    /// with `heights`, `normal_y` and the inland mask already in `scratch.mask`. Nothing to do
    /// (the caller checks) when the strength is 0 or there is no inland water.
    fn apply_wetness(
        &mut self,
        packed: &wgpu::Buffer,
        heights: &wgpu::Buffer,
        normal_y: &wgpu::Buffer,
        scratch: &WetScratch,
        p: &SplatParams,
    ) -> Result<(), GpuError> {
        let grid = grid2(self.n);
        self.distance(
            scratch.mask,
            scratch.g,
            scratch.s,
            scratch.t,
            scratch.flags,
            scratch.dist,
        )?;
        let wp = u::Wetness {
            strength: p.wetness.clamp(0.0, 1.0),
            beach: 2.0 * p.sand_height,
            dry_slope: p.rock_slope - DRY_SLOPE_BAND,
            rock_slope: p.rock_slope,
        };
        self.pass(APPLY_WETNESS)
            .params(&wp)
            .read("heights", heights)
            .read("normal_y", normal_y)
            .read("inland", scratch.mask)
            .read("dist", scratch.dist)
            .read_write("packed", packed)
            .run(grid)
    }
}

/// GPU [`island_core::wetness::apply_wetness`] of `splat` (RGBA8 per sample) with the island's
/// `heights`, `normals` and `water` (`n²` each, `spacing` metres apart): the new splat.
pub fn apply_wetness(
    splat: &[[u8; 4]],
    heights: &[f32],
    normals: &[[f32; 3]],
    water: &island_core::water::Water,
    spacing: f32,
    p: &island_core::params::SplatParams,
) -> Result<Vec<[u8; 4]>, GpuError> {
    let n = water.resolution;
    for (f, l) in [
        ("splat", splat.len()),
        ("heights", heights.len()),
        ("normals", normals.len()),
        ("water", water.kind.len()),
    ] {
        check_len(f, l, n * n)?;
    }
    let (mask, any) = super::wetness::inland_mask(water);
    if p.wetness.clamp(0.0, 1.0) == 0.0 || !any {
        return Ok(splat.to_vec());
    }
    with_gpu(Grid::new(n, spacing * (n - 1) as f32, 0), |gpu, rec| {
        let packed: Vec<u32> = splat.iter().map(|b| u32::from_le_bytes(*b)).collect();
        let ny: Vec<f32> = normals.iter().map(|v| v[1]).collect();
        let pb = gpu.storage_init("packed", bytemuck::cast_slice(&packed));
        let hb = gpu.storage_init("heights", bytemuck::cast_slice(heights));
        let nb = gpu.storage_init("normal_y", bytemuck::cast_slice(&ny));
        let mb = gpu.storage_init("inland", bytemuck::cast_slice(&mask));
        let plane = (n * n * 4) as u64;
        let (g, s, t, d) = (
            gpu.storage("g", plane),
            gpu.storage("s", plane),
            gpu.storage("t", plane),
            gpu.storage("dist", plane),
        );
        let flags = gpu.storage("flags", 16);
        let scratch = super::wetness::WetScratch {
            mask: &mb,
            g: &g,
            s: &s,
            t: &t,
            flags: &flags,
            dist: &d,
        };
        rec.apply_wetness(&pb, &hb, &nb, &scratch, p)?;
        let out = read_u32(rec, &pb, n * n)?;
        Ok(out.iter().map(|w| w.to_le_bytes()).collect())
    })
}
