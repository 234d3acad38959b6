//! The river stage (`carve_river.wgsl`): `island_core::river::carve_river`.

use crate::ctx::grid2;
use crate::error::GpuError;
use crate::passes::Entry;
use crate::recorder::Rec;
use crate::run::Run;
use crate::stages::host::*;
use crate::uniforms::{self as u, Grid, LINE_GROUP, RIVER_ROW_BYTES};
use island_core::hash::tag;
use island_core::params::*;
use island_core::river::{river_control_points, river_polyline, RIVER_SEGMENTS};
use island_core::Grid as CoreGrid;

/// The entry points this module dispatches (registered in `crate::shaders`).
const RIVER_ROWS: Entry = Entry::new("carve_river", "rows");
const RIVER: Entry = Entry::new("carve_river", "main");

/// The river polyline; the shader handles at most `RIVER_SEGMENTS` segments.
pub(crate) fn river_line(world: f32, seed: u64, tg: u32) -> Result<Vec<[f32; 2]>, GpuError> {
    let line = river_polyline(&river_control_points(world, seed, tg));
    if line.len() > RIVER_SEGMENTS + 1 {
        return Err(GpuError::TooLarge(format!(
            "river polyline has {} points; the GPU pass handles {}",
            line.len(),
            RIVER_SEGMENTS + 1
        )));
    }
    Ok(line)
}

/// The `River` uniform of [`island_core::river::carve_river`]`(_, _, r, tag)` along a polyline
/// of `points` points ([`river_line`]).
pub(crate) fn river(r: &RiverParams, points: usize, tg: u32) -> u::River {
    u::River {
        tag: tg,
        points: points as u32,
        width: r.width,
        bank: r.bank,
        depth: r.depth,
        meander: r.meander,
        meander_scale: r.meander_scale,
    }
}

pub(crate) fn stage_river(run: &mut Run) -> Result<(), GpuError> {
    let (gpu, p) = (run.gpu, run.p);
    let (rec, r) = run.parts();
    let rv = &p.river;
    if rv.mode != RiverMode::Bezier {
        return Ok(());
    }
    let line = river_line(p.world_size, p.seed, tag::RIVER)?;
    let lb = gpu.storage_init("river", bytemuck::cast_slice(&line));
    let rp = river(rv, line.len(), tag::RIVER);
    rec.river(&r.heights, &lb, &r.river_rows, &rp)
}

/// The recording of these passes (`rec.method(..)` with this trait in scope).
pub(crate) trait RiverPasses {
    /// River carving; `rows` is scratch of `RIVER_ROW_BYTES` per row.
    fn river(
        &mut self,
        heights: &wgpu::Buffer,
        line: &wgpu::Buffer,
        rows: &wgpu::Buffer,
        p: &u::River,
    ) -> Result<(), GpuError>;
}

impl RiverPasses for Rec<'_> {
    /// River carving; `rows` is scratch of `RIVER_ROW_BYTES` per row.
    fn river(
        &mut self,
        heights: &wgpu::Buffer,
        line: &wgpu::Buffer,
        rows: &wgpu::Buffer,
        p: &u::River,
    ) -> Result<(), GpuError> {
        let n = self.n;
        self.pass(RIVER_ROWS)
            .params(p)
            .read("line", line)
            .write("row_info", rows)
            .run(((n as u32).div_ceil(LINE_GROUP), 1, 1))?;
        self.pass(RIVER)
            .params(p)
            .read("line", line)
            .read("row_info", rows)
            .read_write("heights", heights)
            .run(grid2(n))
    }
}

/// GPU [`island_core::river::carve_river`] of `heights` (left as they are): the carved heights.
pub fn carve_river(
    heights: &[f32],
    g: &CoreGrid,
    r: &RiverParams,
    tag: u32,
) -> Result<Vec<f32>, GpuError> {
    let (resolution, world_size, seed) = (g.resolution, g.world_size, g.seed);
    let nn = resolution * resolution;
    check_len("heights", heights.len(), nn)?;
    let line = river_line(world_size, seed, tag)?;
    let p = river(r, line.len(), tag);
    with_gpu(Grid::new(resolution, world_size, seed), |gpu, rec| {
        let h = gpu.storage_init("heights", bytemuck::cast_slice(heights));
        let l = gpu.storage_init("line", bytemuck::cast_slice(&line));
        let rows = gpu.storage("river_rows", resolution as u64 * RIVER_ROW_BYTES);
        rec.river(&h, &l, &rows, &p)?;
        read_f32(rec, &h, nn)
    })
}
