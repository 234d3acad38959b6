//! The distance stage (`distance_to_coast.wgsl`, `smooth_distance.wgsl`): `island_core::distance::distance_to_coast` and `island_core::coast_smoothing::smooth_distance`.

use crate::ctx::grid2;
use crate::error::GpuError;
use crate::passes::Entry;
use crate::recorder::Rec;
use crate::run::Run;
use crate::stages::host::*;
use crate::uniforms::{self as u, Grid, LINE_GROUP};
use island_core::params::*;

/// The entry points this module dispatches (registered in `crate::shaders`).
const EDT_COLUMNS: Entry = Entry::new("distance_to_coast", "columns");
const EDT_ROWS: Entry = Entry::new("distance_to_coast", "rows");
const SMOOTH_QUANTIZE: Entry = Entry::new("smooth_distance", "quantize");
const SMOOTH_BLEND: Entry = Entry::new("smooth_distance", "blend");
const SMOOTH_ROWS: Entry = Entry::new("smooth_distance", "rows");
const SMOOTH_COLUMNS: Entry = Entry::new("smooth_distance", "columns");

pub(crate) fn stage_distance(run: &mut Run) -> Result<(), GpuError> {
    let p = run.p;
    let (rec, r) = run.parts();
    rec.distance(
        &r.mask,
        &r.edt_columns,
        &r.edt_s,
        &r.edt_t,
        &r.edt_flags,
        &r.distance,
    )?;
    match smooth_uniform(p.spacing(), &p.coast) {
        Some(sp) => rec.smooth_distance(&r.distance, &r.edt_s, &r.edt_t, &sp),
        None => Ok(()),
    }
}

/// Uniforms of the coast smoothing (`None`: the blur is narrower than a sample).
pub(crate) fn smooth_uniform(spacing: f32, c: &CoastParams) -> Option<u::SmoothDistance> {
    island_core::coast_smoothing::smoothing_params(spacing, c.coast_width, c.shelf_width).map(
        |(radius, cap, bias, keep)| u::SmoothDistance {
            cap,
            quant: island_core::coast_smoothing::QUANT,
            bias,
            radius: radius as u32,
            keep,
        },
    )
}

/// The recording of these passes (`rec.method(..)` with this trait in scope).
pub(crate) trait DistancePasses {
    /// Exact signed distance; `g`, `s`, `t` are scratch buffers of at least n² i32, `flags`
    /// 8 bytes.
    fn distance(
        &mut self,
        mask: &wgpu::Buffer,
        g: &wgpu::Buffer,
        s: &wgpu::Buffer,
        t: &wgpu::Buffer,
        flags: &wgpu::Buffer,
        dist: &wgpu::Buffer,
    ) -> Result<(), GpuError>;

    /// `island_core::coast_smoothing::smooth_distance` of `dist` in place; `a`, `b` are
    /// scratch buffers of at least n² i32.
    fn smooth_distance(
        &mut self,
        dist: &wgpu::Buffer,
        a: &wgpu::Buffer,
        b: &wgpu::Buffer,
        p: &u::SmoothDistance,
    ) -> Result<(), GpuError>;
}

impl DistancePasses for Rec<'_> {
    /// Exact signed distance; `g`, `s`, `t` are scratch buffers of at least n² i32, `flags`
    /// 8 bytes.
    fn distance(
        &mut self,
        mask: &wgpu::Buffer,
        g: &wgpu::Buffer,
        s: &wgpu::Buffer,
        t: &wgpu::Buffer,
        flags: &wgpu::Buffer,
        dist: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        self.enc.clear_buffer(flags, 0, None);
        let lines = (self.n as u32).div_ceil(LINE_GROUP);
        for feature_is_land in 0..2 {
            let d = u::Distance { feature_is_land };
            self.pass(EDT_COLUMNS)
                .params(&d)
                .read("mask", mask)
                .read_write("g", g)
                .read_write("any_feature", flags)
                .run((lines, 1, 1))?;
            self.pass(EDT_ROWS)
                .params(&d)
                .read("mask", mask)
                .read("g", g)
                .read_write("s_buf", s)
                .read_write("t_buf", t)
                .read("any_feature", flags)
                .write("dist", dist)
                .run((lines, 1, 1))?;
        }
        Ok(())
    }

    /// `island_core::coast_smoothing::smooth_distance` of `dist` in place; `a`, `b` are
    /// scratch buffers of at least n² i32.
    fn smooth_distance(
        &mut self,
        dist: &wgpu::Buffer,
        a: &wgpu::Buffer,
        b: &wgpu::Buffer,
        p: &u::SmoothDistance,
    ) -> Result<(), GpuError> {
        let lines = (self.n as u32).div_ceil(LINE_GROUP);
        let tiles = grid2(self.n);
        self.pass(SMOOTH_QUANTIZE)
            .params(p)
            .read("dist", dist)
            .write("dst", a)
            .run(tiles)?;
        // a → b → a → b along x, then b → a → b → a along z: the result is in a.
        let mut bufs = (a, b);
        for pipe in [
            SMOOTH_ROWS,
            SMOOTH_ROWS,
            SMOOTH_ROWS,
            SMOOTH_COLUMNS,
            SMOOTH_COLUMNS,
            SMOOTH_COLUMNS,
        ] {
            self.pass(pipe)
                .params(p)
                .read("src", bufs.0)
                .write("dst", bufs.1)
                .run((lines, 1, 1))?;
            bufs = (bufs.1, bufs.0);
        }
        self.pass(SMOOTH_BLEND)
            .params(p)
            .read_write("dist", dist)
            .read("src", bufs.0)
            .run(tiles)
    }
}

/// GPU [`island_core::distance::distance_to_coast`] (exact EDT, signed, metres).
pub fn distance_to_coast(
    mask: &[u8],
    resolution: usize,
    spacing: f32,
) -> Result<Vec<f32>, GpuError> {
    let nn = resolution * resolution;
    check_len("mask", mask.len(), nn)?;
    let g = Grid {
        spacing,
        ..Grid::new(resolution, 1.0, 0)
    };
    with_gpu(g, |gpu, rec| {
        let m: Vec<u32> = mask.iter().map(|&v| v as u32).collect();
        let mb = gpu.storage_init("mask", bytemuck::cast_slice(&m));
        let gb = gpu.storage("g", nn as u64 * 4);
        let sb = gpu.storage("s", nn as u64 * 4);
        let tb = gpu.storage("t", nn as u64 * 4);
        let db = gpu.storage("dist", nn as u64 * 4);
        let fb = gpu.storage("flags", 16);
        rec.distance(&mb, &gb, &sb, &tb, &fb, &db)?;
        read_f32(rec, &db, nn)
    })
}

/// GPU [`island_core::coast_smoothing::smooth_distance`] (returns the smoothed distance).
pub fn smooth_distance(
    dist: &[f32],
    resolution: usize,
    spacing: f32,
    c: &CoastParams,
) -> Result<Vec<f32>, GpuError> {
    let nn = resolution * resolution;
    check_len("dist", dist.len(), nn)?;
    let Some(p) = smooth_uniform(spacing, c) else {
        return Ok(dist.to_vec());
    };
    let g = Grid {
        spacing,
        ..Grid::new(resolution, 1.0, 0)
    };
    with_gpu(g, |gpu, rec| {
        let d = gpu.storage_init("dist", bytemuck::cast_slice(dist));
        let a = gpu.storage("a", nn as u64 * 4);
        let b = gpu.storage("b", nn as u64 * 4);
        rec.smooth_distance(&d, &a, &b, &p)?;
        read_f32(rec, &d, nn)
    })
}
