//! The VOLCANIC outline's cone and crater (`volcano.wgsl`): `island_core::shape::raise_cone`
//! and `island_core::shape::dig_crater`, run on the heights where they are (the erosion stage
//! raises the cone before the erosion and digs the crater after it) instead of reading the
//! heights back for the CPU and uploading them again.

use crate::ctx::grid2;
use crate::error::GpuError;
use crate::passes::Entry;
use crate::recorder::Rec;
use crate::stages::host::*;
use crate::uniforms::{self as u, Grid};
use island_core::shape::{CRATER_DEPTH, CRATER_RADIUS};
use island_core::IslandParams;

/// The entry points this module dispatches (registered in `crate::shaders`).
const RAISE_CONE: Entry = Entry::new("volcano", "raise_cone");
const DIG_CRATER: Entry = Entry::new("volcano", "dig_crater");

/// The volcano's uniform, and whether it has a crater; `None` when `p`'s outline has no
/// volcano.
pub(crate) fn volcano_uniform(p: &IslandParams) -> Option<(u::Volcano, bool)> {
    let (cx, cz, radius, crater) = island_core::shape::volcano(p)?;
    // As island_core::shape::{raise_cone, dig_crater}.
    let peak = p.shape.cone_height * p.max_height;
    let rim = peak * (1.0 - CRATER_RADIUS) * (1.0 - CRATER_RADIUS);
    Some((
        u::Volcano {
            cx,
            cz,
            radius,
            half: p.world_size * 0.5,
            peak,
            rim,
            crater_radius: CRATER_RADIUS,
            crater_depth: CRATER_DEPTH,
        },
        crater,
    ))
}

/// The recording of these passes (`rec.method(..)` with this trait in scope).
pub(crate) trait VolcanoPasses {
    /// Raise the cone in `heights` (in place).
    fn raise_cone(&mut self, heights: &wgpu::Buffer, v: &u::Volcano) -> Result<(), GpuError>;
    /// Dig the crater in `heights` (in place).
    fn dig_crater(&mut self, heights: &wgpu::Buffer, v: &u::Volcano) -> Result<(), GpuError>;
}

impl VolcanoPasses for Rec<'_> {
    fn raise_cone(&mut self, heights: &wgpu::Buffer, v: &u::Volcano) -> Result<(), GpuError> {
        volcano_pass(self, RAISE_CONE, heights, v)
    }

    fn dig_crater(&mut self, heights: &wgpu::Buffer, v: &u::Volcano) -> Result<(), GpuError> {
        volcano_pass(self, DIG_CRATER, heights, v)
    }
}

/// Entry point `e` of `volcano.wgsl` over `heights` (both take the same bindings).
fn volcano_pass(
    rec: &mut Rec,
    e: Entry,
    heights: &wgpu::Buffer,
    v: &u::Volcano,
) -> Result<(), GpuError> {
    let n = rec.n;
    rec.ensure_slots(1)?;
    rec.pass(e)
        .params(v)
        .read_write("heights", heights)
        .run(grid2(n))
}

/// Entry point `e` over a copy of `heights` (`resolution²` of `p`), the result read back.
fn run_on(
    p: &IslandParams,
    heights: &[f32],
    e: Entry,
    only_with_crater: bool,
) -> Result<Vec<f32>, GpuError> {
    p.validate()?;
    let n = p.resolution as usize;
    check_len("heights", heights.len(), n * n)?;
    let Some((v, crater)) = volcano_uniform(p) else {
        return Ok(heights.to_vec());
    };
    if only_with_crater && !crater {
        return Ok(heights.to_vec());
    }
    with_gpu(Grid::new(n, p.world_size, p.seed), |gpu, rec| {
        let h = gpu.storage_init("heights", bytemuck::cast_slice(heights));
        volcano_pass(rec, e, &h, &v)?;
        read_f32(rec, &h, heights.len())
    })
}

/// GPU [`island_core::shape::raise_cone`] (returns the new heights; unchanged without a
/// volcano).
pub fn raise_cone(p: &IslandParams, heights: &[f32]) -> Result<Vec<f32>, GpuError> {
    run_on(p, heights, RAISE_CONE, false)
}

/// GPU [`island_core::shape::dig_crater`] (returns the new heights; unchanged without a
/// volcano or without a crater).
pub fn dig_crater(p: &IslandParams, heights: &[f32]) -> Result<Vec<f32>, GpuError> {
    run_on(p, heights, DIG_CRATER, true)
}
