//! The wetness pass (`shaders/wetness.wgsl`): [`Rec::apply_wetness`], the GPU twin of
//! `island_core::wetness::apply_wetness`, over the packed splat bytes. The distance to the
//! inland water is the distance pass (`distance_to_coast.wgsl`, exact) over the inland mask.

use crate::pipeline::Rec;
use crate::uniforms as u;
use crate::GpuError;
use island_core::params::SplatParams;
use island_core::water::{Water, LAKE, RIVER};
use island_core::wetness::DRY_SLOPE_BAND;

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

impl Rec<'_> {
    /// `island_core::wetness::apply_wetness` of the packed splat `packed` (`n²` words, RGBA8)
    /// with `heights`, `normal_y` and the inland mask already in `scratch.mask`. Nothing to do
    /// (the caller checks) when the strength is 0 or there is no inland water.
    pub fn apply_wetness(
        &mut self,
        packed: &wgpu::Buffer,
        heights: &wgpu::Buffer,
        normal_y: &wgpu::Buffer,
        scratch: &WetScratch,
        p: &SplatParams,
    ) -> Result<(), GpuError> {
        let gpu = self.gpu;
        let grid = crate::ctx::grid2(self.n);
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
        self.pass(&gpu.pipes.apply_wetness)
            .params(&wp)
            .read("heights", heights)
            .read("normal_y", normal_y)
            .read("inland", scratch.mask)
            .read("dist", scratch.dist)
            .read_write("packed", packed)
            .run(grid)
    }
}
