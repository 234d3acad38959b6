//! The normals stage (`compute_normals.wgsl`): `island_core::normals::compute_normals`.

use crate::ctx::grid2;
use crate::error::GpuError;
use crate::passes::Entry;
use crate::recorder::{f32s, Rec};
use crate::run::Run;
use crate::stages::host::*;
use crate::uniforms::Grid;

/// The entry points this module dispatches (registered in `crate::shaders`).
const NORMALS: Entry = Entry::new("compute_normals", "main");

pub(crate) fn stage_normals(run: &mut Run) -> Result<(), GpuError> {
    let (rec, r) = run.parts();
    rec.normals(&r.heights, &r.normal_x, &r.normal_y, &r.normal_z)
}

/// The recording of these passes (`rec.method(..)` with this trait in scope).
pub(crate) trait NormalsPasses {
    /// Normals as three planes.
    fn normals(
        &mut self,
        heights: &wgpu::Buffer,
        nx: &wgpu::Buffer,
        ny: &wgpu::Buffer,
        nz: &wgpu::Buffer,
    ) -> Result<(), GpuError>;
}

impl NormalsPasses for Rec<'_> {
    /// Normals as three planes.
    fn normals(
        &mut self,
        heights: &wgpu::Buffer,
        nx: &wgpu::Buffer,
        ny: &wgpu::Buffer,
        nz: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let n = self.n;
        self.pass(NORMALS)
            .read("heights", heights)
            .write("normal_x", nx)
            .write("normal_y", ny)
            .write("normal_z", nz)
            .run(grid2(n))
    }
}

/// GPU [`island_core::normals::compute_normals`].
pub fn compute_normals(
    heights: &[f32],
    resolution: usize,
    spacing: f32,
) -> Result<Vec<[f32; 3]>, GpuError> {
    let nn = resolution * resolution;
    check_len("heights", heights.len(), nn)?;
    let g = Grid {
        spacing,
        ..Grid::new(resolution, 1.0, 0)
    };
    with_gpu(g, |gpu, rec| {
        let h = gpu.storage_init("heights", bytemuck::cast_slice(heights));
        let planes = [
            gpu.storage("nx", nn as u64 * 4),
            gpu.storage("ny", nn as u64 * 4),
            gpu.storage("nz", nn as u64 * 4),
        ];
        rec.normals(&h, &planes[0], &planes[1], &planes[2])?;
        let bytes = nn as u64 * 4;
        let parts = rec.read_back(
            &[
                (&planes[0], bytes),
                (&planes[1], bytes),
                (&planes[2], bytes),
            ],
            None,
        )?;
        let (x, y, z) = (f32s(&parts[0]), f32s(&parts[1]), f32s(&parts[2]));
        Ok((0..nn).map(|i| [x[i], y[i], z[i]]).collect())
    })
}
