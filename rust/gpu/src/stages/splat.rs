//! The splat stage (`auto_splat.wgsl`, then the wetness of [`super::wetness`]): `island_core::splat::auto_splat`.

use super::noise::noise_step;
use super::wetness::WetnessPasses;
use crate::ctx::grid2;
use crate::error::GpuError;
use crate::passes::Entry;
use crate::recorder::Rec;
use crate::run::Run;
use crate::stages::host::*;
use crate::uniforms::{self as u, Grid};
use island_core::hash::tag;
use island_core::params::*;
use island_core::splat::SPLAT_JITTER_SCALE;
use island_core::Grid as CoreGrid;

/// The entry points this module dispatches (registered in `crate::shaders`).
const SPLAT_WEIGHTS: Entry = Entry::new("auto_splat", "weights");
const SPLAT_BLUR: Entry = Entry::new("auto_splat", "blur");
const SPLAT_QUANTIZE: Entry = Entry::new("auto_splat", "quantize");

/// The `Splat` uniform of [`island_core::splat::auto_splat`]`(.., g, max_height, s, tag)`.
pub(crate) fn splat(g: &CoreGrid, max_height: f32, s: &SplatParams, tg: u32) -> u::Splat {
    u::Splat {
        tag: tg,
        channel: 0,
        vertical: 0,
        jitter_step: noise_step(g.resolution, g.world_size, SPLAT_JITTER_SCALE),
        max_height,
        sand_height: s.sand_height,
        snow_height: s.snow_height,
        jitter: s.jitter,
        rock_slope: s.rock_slope,
    }
}

/// The buffers of [`Rec::splat`]: its inputs, the four weight planes, the blur scratch and the
/// packed output.
pub(crate) struct SplatBufs<'b> {
    pub heights: &'b wgpu::Buffer,
    pub normal_y: &'b wgpu::Buffer,
    pub sand: &'b wgpu::Buffer,
    pub w: [&'b wgpu::Buffer; 4],
    pub blur_tmp: &'b wgpu::Buffer,
    pub packed: &'b wgpu::Buffer,
}

pub(crate) fn stage_splat(run: &mut Run) -> Result<(), GpuError> {
    let p = run.p;
    let (rec, r) = run.parts();
    let sp = splat(&p.grid(), p.max_height, &p.splat, tag::SPLAT);
    let w = &r.splat_w;
    let bufs = SplatBufs {
        heights: &r.heights,
        normal_y: &r.normal_y,
        sand: &r.sandiness,
        w: [&w[0], &w[1], &w[2], &w[3]],
        blur_tmp: &r.blur_tmp,
        packed: &r.packed_splat,
    };
    rec.splat(&bufs, p.splat.blur_passes, &sp)?;
    // Wetness over the packed splat, as the CPU path applies it after its splat; the weight
    // planes and the blur scratch are free again (once the splat passes have run) and hold the
    // inland mask, the distance transform's scratch and the distance.
    let water = &run.hydro.as_ref().expect("drainage stage ran").water;
    let (mask, any) = super::wetness::inland_mask(water);
    if p.splat.wetness.clamp(0.0, 1.0) == 0.0 || !any {
        return Ok(());
    }
    let gpu = run.gpu;
    let (rec, r) = run.parts();
    // The splat passes submitted before the mask's upload (queue writes are ordered after
    // earlier submissions): no wait.
    rec.submit();
    let w = &r.splat_w;
    gpu.upload(&w[0], 0, bytemuck::cast_slice(&mask));
    let scratch = super::wetness::WetScratch {
        mask: &w[0],
        g: &w[1],
        s: &w[2],
        t: &w[3],
        flags: &r.edt_flags,
        dist: &r.blur_tmp,
    };
    rec.apply_wetness(&r.packed_splat, &r.heights, &r.normal_y, &scratch, &p.splat)
}

/// The recording of these passes (`rec.method(..)` with this trait in scope).
pub(crate) trait SplatPasses {
    /// Splat weights into the planes `b.w`, `blur_passes` box blurs through `b.blur_tmp`,
    /// packed RGBA8 into `b.packed`.
    fn splat(&mut self, b: &SplatBufs, blur_passes: u32, p: &u::Splat) -> Result<(), GpuError>;
}

impl SplatPasses for Rec<'_> {
    /// Splat weights into the planes `b.w`, `blur_passes` box blurs through `b.blur_tmp`,
    /// packed RGBA8 into `b.packed`.
    fn splat(&mut self, b: &SplatBufs, blur_passes: u32, p: &u::Splat) -> Result<(), GpuError> {
        let (heights, ny, sand, w, blur_tmp, packed) =
            (b.heights, b.normal_y, b.sand, b.w, b.blur_tmp, b.packed);
        let n = self.n;
        self.pass(SPLAT_WEIGHTS)
            .params(p)
            .read("heights", heights)
            .read("normal_y", ny)
            .read("sandiness", sand)
            .write("w0", w[0])
            .write("w1", w[1])
            .write("w2", w[2])
            .write("w3", w[3])
            .run(grid2(n))?;
        for _ in 0..blur_passes {
            for channel in 0..4 {
                for vertical in 0..2 {
                    self.pass(SPLAT_BLUR)
                        .params(&u::Splat {
                            channel,
                            vertical,
                            ..*p
                        })
                        .read_write("w0", w[0])
                        .read_write("w1", w[1])
                        .read_write("w2", w[2])
                        .read_write("w3", w[3])
                        .read_write("blur_tmp", blur_tmp)
                        .run(grid2(n))?;
                }
            }
        }
        self.pass(SPLAT_QUANTIZE)
            .read("w0", w[0])
            .read("w1", w[1])
            .read("w2", w[2])
            .read("w3", w[3])
            .write("packed", packed)
            .run(grid2(n))
    }
}

/// GPU [`island_core::splat::auto_splat`].
pub fn auto_splat(
    heights: &[f32],
    normals: &[[f32; 3]],
    sandiness: &[f32],
    g: &CoreGrid,
    max_height: f32,
    p: &SplatParams,
    tag: u32,
) -> Result<Vec<[u8; 4]>, GpuError> {
    let (resolution, world_size, seed) = (g.resolution, g.world_size, g.seed);
    let nn = resolution * resolution;
    check_len("heights", heights.len(), nn)?;
    check_len("normals", normals.len(), nn)?;
    check_len("sandiness", sandiness.len(), nn)?;
    let sp = splat(g, max_height, p, tag);
    with_gpu(Grid::new(resolution, world_size, seed), |gpu, rec| {
        let h = gpu.storage_init("heights", bytemuck::cast_slice(heights));
        let ny: Vec<f32> = normals.iter().map(|v| v[1]).collect();
        let nb = gpu.storage_init("normal_y", bytemuck::cast_slice(&ny));
        let s = gpu.storage_init("sand", bytemuck::cast_slice(sandiness));
        let w: Vec<wgpu::Buffer> = (0..4).map(|_| gpu.storage("w", nn as u64 * 4)).collect();
        let blur_tmp = gpu.storage("blur_tmp", nn as u64 * 4);
        let out = gpu.storage("splat", nn as u64 * 4);
        let bufs = SplatBufs {
            heights: &h,
            normal_y: &nb,
            sand: &s,
            w: [&w[0], &w[1], &w[2], &w[3]],
            blur_tmp: &blur_tmp,
            packed: &out,
        };
        rec.splat(&bufs, p.blur_passes, &sp)?;
        Ok(read_u32(rec, &out, nn)?
            .into_iter()
            .map(|v| v.to_le_bytes())
            .collect())
    })
}
