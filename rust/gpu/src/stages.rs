//! Single GPU stages with the signatures of their CPU counterparts in `island_core` (same
//! names), for the parity tests and the benchmark. Each call uploads its inputs, runs the
//! stage's shader(s) and reads the result back.

use crate::ctx::{self, Gpu};
use crate::pipeline::{self, f32s, u32s, Rec};
use crate::uniforms::{self as u, Grid, LINE_GROUP, MAX_BIOMES, NORM_PER_GROUP, RIVER_ROW_BYTES};
use crate::GpuError;
use island_core::paint::{Brush, Changed, Mode, PaintError, PaintLayer, Rect, Surface};
use island_core::params::{
    BiomeParams, CoastParams, DiamondSquareParams, FbmParams, GaussianParams, MaskParams,
    ParamError, RiverParams, SplatParams, ValueNoiseParams,
};
use island_core::Grid as CoreGrid;

fn bad(field: &str, message: impl Into<String>) -> GpuError {
    GpuError::Invalid(ParamError {
        field: field.into(),
        message: message.into(),
    })
}

fn check_n(n: usize) -> Result<(), GpuError> {
    if !(2..=8193).contains(&n) {
        return Err(bad("resolution", format!("must be 2..=8193, got {n}")));
    }
    Ok(())
}

fn check_len(field: &str, len: usize, want: usize) -> Result<(), GpuError> {
    if len != want {
        return Err(bad(field, format!("has {len} values, expected {want}")));
    }
    Ok(())
}

fn with_gpu<T>(
    g: Grid,
    f: impl FnOnce(&Gpu, &mut Rec) -> Result<T, GpuError>,
) -> Result<T, GpuError> {
    check_n(g.n as usize)?;
    let gpu = ctx::gpu()?;
    gpu.guarded(|| {
        let mut rec = Rec::new(&gpu, &g);
        f(&gpu, &mut rec)
    })
}

fn read_f32(gpu: &Gpu, rec: &mut Rec, b: &wgpu::Buffer, len: usize) -> Result<Vec<f32>, GpuError> {
    rec.flush()?;
    Ok(f32s(
        &gpu.read_back(&[(b, len as u64 * 4)], None)?.remove(0),
    ))
}

fn read_u32(gpu: &Gpu, rec: &mut Rec, b: &wgpu::Buffer, len: usize) -> Result<Vec<u32>, GpuError> {
    rec.flush()?;
    Ok(u32s(
        &gpu.read_back(&[(b, len as u64 * 4)], None)?.remove(0),
    ))
}

/// For each input `v`: `[hash_u32(v), hash2(v, !v, 12345), stage_seed(v | (v*3) << 32, 5),
/// gradient_noise(..) bits]` computed on the GPU (pins the WGSL port).
pub fn hash_probe(inputs: &[u32]) -> Result<Vec<[u32; 4]>, GpuError> {
    with_gpu(Grid::new(2, 1.0, 0), |gpu, rec| {
        let inb = gpu.storage_init("probe_in", bytemuck::cast_slice(inputs));
        let out = gpu.storage("probe_out", inputs.len() as u64 * 16);
        let groups = (inputs.len() as u32).div_ceil(LINE_GROUP);
        let pipes = &rec.gpu.pipes;
        rec.pass(&pipes.hash_probe)
            .read("probe_in", &inb)
            .write("probe_out", &out)
            .run((groups.max(1), 1, 1))?;
        let v = read_u32(gpu, rec, &out, inputs.len() * 4)?;
        Ok(v.chunks_exact(4)
            .map(|c| [c[0], c[1], c[2], c[3]])
            .collect())
    })
}

/// GPU [`island_core::gradient_noise::fbm_noise`].
pub fn fbm_noise(g: &CoreGrid, f: &FbmParams, tag: u32) -> Result<Vec<f32>, GpuError> {
    let resolution = g.resolution;
    let p = pipeline::noise_fbm(g, f, tag);
    with_gpu(Grid::new(resolution, g.world_size, g.seed), |gpu, rec| {
        let out = gpu.storage("out", (resolution * resolution) as u64 * 4);
        rec.fbm(&out, &p)?;
        read_f32(gpu, rec, &out, resolution * resolution)
    })
}

/// GPU [`island_core::value_noise::value_noise`].
pub fn value_noise(g: &CoreGrid, v: &ValueNoiseParams, tag: u32) -> Result<Vec<f32>, GpuError> {
    let resolution = g.resolution;
    let p = pipeline::noise_value(g, v, tag);
    with_gpu(Grid::new(resolution, g.world_size, g.seed), |gpu, rec| {
        let out = gpu.storage("out", (resolution * resolution) as u64 * 4);
        rec.value(&out, &p)?;
        read_f32(gpu, rec, &out, resolution * resolution)
    })
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
        read_f32(gpu, rec, &out, resolution * resolution)
    })
}

/// GPU [`island_core::gaussian_islands::gaussian_islands`] (mountains drawn on the CPU by the
/// shared `gaussian_mountains`).
pub fn gaussian_islands(g: &CoreGrid, p: &GaussianParams, tag: u32) -> Result<Vec<f32>, GpuError> {
    let resolution = g.resolution;
    let m = pipeline::mountains_data(g, p, tag);
    with_gpu(Grid::new(resolution, g.world_size, g.seed), |gpu, rec| {
        let out = gpu.storage("out", (resolution * resolution) as u64 * 4);
        let mb = gpu.storage_init("mountains", bytemuck::cast_slice(&m));
        rec.gaussian(&out, &mb, m.len())?;
        read_f32(gpu, rec, &out, resolution * resolution)
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
        read_f32(gpu, rec, &b, data.len())
    })
}

/// GPU [`island_core::detail::apply_detail`] (returns the new base).
pub fn apply_detail(
    base: &[f32],
    detail: &[f32],
    strength: f32,
    cap: f32,
    resolution: usize,
) -> Result<Vec<f32>, GpuError> {
    check_len("base", base.len(), resolution * resolution)?;
    check_len("detail", detail.len(), resolution * resolution)?;
    with_gpu(Grid::new(resolution, 1.0, 0), |gpu, rec| {
        let b = gpu.storage_init("base", bytemuck::cast_slice(base));
        let d = gpu.storage_init("detail", bytemuck::cast_slice(detail));
        rec.detail(&b, &d, &u::Detail { strength, cap })?;
        read_f32(gpu, rec, &b, base.len())
    })
}

/// GPU [`island_core::biomes::biome_blend`] of `base01` (left as it is): returns `(new base01,
/// biome index, roughness, sandiness)`.
#[allow(clippy::type_complexity)]
pub fn biome_blend(
    base01: &[f32],
    g: &CoreGrid,
    b: &BiomeParams,
    tag: u32,
) -> Result<(Vec<f32>, Vec<u8>, Vec<f32>, Vec<f32>), GpuError> {
    let (resolution, world_size, seed) = (g.resolution, g.world_size, g.seed);
    let (biomes, grid) = (&b.biomes[..], b.grid);
    let nn = resolution * resolution;
    check_len("base01", base01.len(), nn)?;
    if biomes.is_empty() || biomes.len() > MAX_BIOMES || grid == 0 {
        return Err(bad(
            "biomes",
            format!("need 1..={MAX_BIOMES} biomes and grid >= 1"),
        ));
    }
    let p = pipeline::biomes(g, b, tag);
    with_gpu(Grid::new(resolution, world_size, seed), |gpu, rec| {
        let b = gpu.storage_init("base", bytemuck::cast_slice(base01));
        let idx = gpu.storage("index", nn as u64 * 4);
        let r = gpu.storage("rough", nn as u64 * 4);
        let s = gpu.storage("sand", nn as u64 * 4);
        let table = gpu.storage_init(
            "table",
            bytemuck::cast_slice(&pipeline::biome_table(biomes)),
        );
        rec.biomes(&b, &table, &idx, &r, &s, &p)?;
        rec.flush()?;
        let bytes = nn as u64 * 4;
        let mut parts = gpu.read_back(
            &[(&b, bytes), (&idx, bytes), (&r, bytes), (&s, bytes)],
            None,
        )?;
        let sand = f32s(&parts.pop().expect("4"));
        let rough = f32s(&parts.pop().expect("4"));
        let index = u32s(&parts.pop().expect("4"))
            .into_iter()
            .map(|v| v as u8)
            .collect();
        let base = f32s(&parts.pop().expect("4"));
        Ok((base, index, rough, sand))
    })
}

/// GPU [`island_core::shaping::apply_shaping_curve`] (returns the remapped heights).
pub fn apply_shaping_curve(
    heights: &[f32],
    resolution: usize,
    lut: &[f32],
) -> Result<Vec<f32>, GpuError> {
    check_len("heights", heights.len(), resolution * resolution)?;
    if lut.len() < 2 {
        return Err(bad("shaping_curve", "needs at least 2 points"));
    }
    with_gpu(Grid::new(resolution, 1.0, 0), |gpu, rec| {
        let b = gpu.storage_init("heights", bytemuck::cast_slice(heights));
        let l = gpu.storage_init("lut", bytemuck::cast_slice(lut));
        rec.shaping(&b, &l, lut.len())?;
        read_f32(gpu, rec, &b, heights.len())
    })
}

/// GPU [`island_core::mask::island_mask`].
pub fn island_mask(
    g: &CoreGrid,
    m: &MaskParams,
    margin: f32,
    tag: u32,
) -> Result<Vec<u8>, GpuError> {
    let resolution = g.resolution;
    let p = pipeline::mask(m, margin, tag);
    with_gpu(Grid::new(resolution, g.world_size, g.seed), |gpu, rec| {
        let out = gpu.storage("mask", (resolution * resolution) as u64 * 4);
        rec.mask(&out, &p)?;
        Ok(read_u32(gpu, rec, &out, resolution * resolution)?
            .into_iter()
            .map(|v| v as u8)
            .collect())
    })
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
        read_f32(gpu, rec, &db, nn)
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
    let Some(p) = pipeline::smooth_distance(spacing, c) else {
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
        read_f32(gpu, rec, &d, nn)
    })
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
    let p = pipeline::coast(max_height, c);
    with_gpu(Grid::new(resolution, 1.0, 0), |gpu, rec| {
        let l = gpu.storage_init("land01", bytemuck::cast_slice(land01));
        let d = gpu.storage_init("dist", bytemuck::cast_slice(dist));
        let f = gpu.storage_init("fine", bytemuck::cast_slice(fine));
        let r = gpu.storage_init("rough", bytemuck::cast_slice(roughness));
        rec.coast(&l, &d, &f, &r, &p)?;
        read_f32(gpu, rec, &l, nn)
    })
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
    let line = pipeline::river_line(world_size, seed, tag)?;
    let p = pipeline::river(r, line.len(), tag);
    with_gpu(Grid::new(resolution, world_size, seed), |gpu, rec| {
        let h = gpu.storage_init("heights", bytemuck::cast_slice(heights));
        let l = gpu.storage_init("line", bytemuck::cast_slice(&line));
        let rows = gpu.storage("river_rows", resolution as u64 * RIVER_ROW_BYTES);
        rec.river(&h, &l, &rows, &p)?;
        read_f32(gpu, rec, &h, nn)
    })
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
        rec.flush()?;
        let bytes = nn as u64 * 4;
        let parts = gpu.read_back(
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
    let sp = pipeline::splat(g, max_height, p, tag);
    with_gpu(Grid::new(resolution, world_size, seed), |gpu, rec| {
        let h = gpu.storage_init("heights", bytemuck::cast_slice(heights));
        let ny: Vec<f32> = normals.iter().map(|v| v[1]).collect();
        let nb = gpu.storage_init("normal_y", bytemuck::cast_slice(&ny));
        let s = gpu.storage_init("sand", bytemuck::cast_slice(sandiness));
        let w: Vec<wgpu::Buffer> = (0..4).map(|_| gpu.storage("w", nn as u64 * 4)).collect();
        let blur_tmp = gpu.storage("blur_tmp", nn as u64 * 4);
        let out = gpu.storage("splat", nn as u64 * 4);
        let bufs = pipeline::SplatBufs {
            heights: &h,
            normal_y: &nb,
            sand: &s,
            w: [&w[0], &w[1], &w[2], &w[3]],
            blur_tmp: &blur_tmp,
            packed: &out,
        };
        rec.splat(&bufs, p.blur_passes, &sp)?;
        Ok(read_u32(gpu, rec, &out, nn)?
            .into_iter()
            .map(|v| v.to_le_bytes())
            .collect())
    })
}

fn paint_err(e: PaintError) -> GpuError {
    bad("brush", e.to_string())
}

/// GPU [`island_core::paint::fill_by_rule`] for [`Mode::Paint`] and [`Mode::Erase`] (the brush
/// over the whole island with amount `strength · mask`); [`Mode::Smooth`] is CPU-only
/// ([`GpuError::Unsupported`]). On error `paint` is left untouched.
pub fn fill_by_rule(
    paint: &mut PaintLayer,
    surf: &Surface,
    brush: &Brush,
) -> Result<Changed, GpuError> {
    brush.validate().map_err(paint_err)?;
    let field = surf.field;
    let n = field.resolution;
    let nn = n * n;
    if paint.resolution != n || paint.data.len() != nn {
        return Err(paint_err(PaintError::Mismatch(format!(
            "paint is {}², heightfield {n}²",
            paint.resolution
        ))));
    }
    if !surf.base.is_empty() && surf.base.len() != nn {
        return Err(paint_err(PaintError::Mismatch(format!(
            "base splat has {} samples, expected {nn}",
            surf.base.len()
        ))));
    }
    if field.normals.len() != nn || field.heights.len() != nn {
        return Err(paint_err(PaintError::Mismatch(
            "heightfield normals missing".into(),
        )));
    }
    let all = Rect {
        x0: 0,
        z0: 0,
        w: n,
        h: n,
    };
    if brush.strength <= 0.0 {
        return Ok(Changed {
            texels: 0,
            rect: all,
        });
    }
    let mode = match brush.mode {
        Mode::Paint => 0,
        Mode::Erase => 1,
        Mode::Smooth => return Err(GpuError::Unsupported("fill_by_rule in smooth mode".into())),
    };
    let m = &brush.masks;
    let bp = u::Brush {
        layer: brush.layer as u32,
        mode,
        strength: brush.strength,
        min_height: m.min_height,
        max_height: m.max_height,
        height_fade: m.height_fade,
        min_slope: m.min_slope,
        max_slope: m.max_slope,
        slope_fade: m.slope_fade,
    };
    let (data, texels) = with_gpu(Grid::new(n, field.world_size, 0), |gpu, rec| {
        let ny: Vec<f32> = field.normals.iter().map(|v| v[1]).collect();
        let base: Vec<u32> = if surf.base.is_empty() {
            vec![u32::from_le_bytes([0, 255, 0, 0]); nn]
        } else {
            surf.base.iter().map(|b| u32::from_le_bytes(*b)).collect()
        };
        let pa: Vec<u32> = paint
            .data
            .iter()
            .map(|p| u32::from_le_bytes([p[0], p[1], p[2], p[3]]))
            .collect();
        let pb: Vec<u32> = paint
            .data
            .iter()
            .map(|p| u32::from_le_bytes([p[4], p[5], p[6], p[7]]))
            .collect();
        let hb = gpu.storage_init("heights", bytemuck::cast_slice(&field.heights));
        let nb = gpu.storage_init("normal_y", bytemuck::cast_slice(&ny));
        let bb = gpu.storage_init("base", bytemuck::cast_slice(&base));
        let ab = gpu.storage_init("paint_a", bytemuck::cast_slice(&pa));
        let bb2 = gpu.storage_init("paint_b", bytemuck::cast_slice(&pb));
        let cb = gpu.storage("changed", 16);
        rec.enc.clear_buffer(&cb, 0, None);
        let pipes = &rec.gpu.pipes;
        rec.pass(&pipes.fill_by_rule)
            .params(&bp)
            .read("heights", &hb)
            .read("normal_y", &nb)
            .read("base_splat", &bb)
            .read_write("paint_a", &ab)
            .read_write("paint_b", &bb2)
            .read_write("changed", &cb)
            .run(crate::ctx::grid2(n))?;
        rec.flush()?;
        let bytes = nn as u64 * 4;
        let parts = gpu.read_back(&[(&ab, bytes), (&bb2, bytes), (&cb, 4)], None)?;
        let (a, b) = (u32s(&parts[0]), u32s(&parts[1]));
        let texels = u32s(&parts[2])[0] as usize;
        let data: Vec<[u8; 8]> = a
            .iter()
            .zip(&b)
            .map(|(x, y)| {
                let (x, y) = (x.to_le_bytes(), y.to_le_bytes());
                [x[0], x[1], x[2], x[3], y[0], y[1], y[2], y[3]]
            })
            .collect();
        Ok((data, texels))
    })?;
    paint.data = data;
    Ok(Changed { texels, rect: all })
}

// ---- erosion (`erosion.wgsl`, see `crate::erosion`) ------------------------------------------

use crate::depression::DepressionBufs;
pub use crate::erosion::PassTimes;
use crate::erosion::{self as ero, ErosionBufs};
use island_core::erosion::{ErosionReport, ErosionSettings, SedimentBudget, StepParams};

/// Run `f` on a fresh set of erosion buffers for an `nc × nc` grid (recording grid `n`).
fn with_erosion<T>(
    n: usize,
    nc: usize,
    p: &StepParams,
    f: impl FnOnce(&Gpu, &mut Rec, &ErosionBufs, u::Erosion) -> Result<T, GpuError>,
) -> Result<T, GpuError> {
    check_n(nc)?;
    if nc < 3 {
        return Err(bad(
            "resolution",
            "the evolution grid needs at least 3² samples",
        ));
    }
    check_len("pow_count", p.pow_count.len(), nc * nc + 1)?;
    with_gpu(Grid::new(n, 1.0, 0), |gpu, rec| {
        let b = ErosionBufs::new(rec, nc, &p.pow_count)?;
        f(gpu, rec, &b, ero::uniform(p, nc))
    })
}

fn upload(gpu: &Gpu, b: &wgpu::Buffer, data: &[u8]) {
    gpu.upload(b, 0, data);
}

/// GPU [`island_core::erosion::resample`] (bilinear, `n²` → `m²`).
pub fn resample(g: &[f32], n: usize, m: usize) -> Result<Vec<f32>, GpuError> {
    check_len("g", g.len(), n * n)?;
    check_n(n)?;
    if m < 2 || n < 2 {
        return Err(bad("resolution", "resample needs at least 2² samples"));
    }
    with_gpu(Grid::new(n, 1.0, 0), |gpu, rec| {
        let src = gpu.storage_init("heights", bytemuck::cast_slice(g));
        let out = gpu.storage("coarse", (m * m * 4) as u64);
        let p = u::Erosion {
            nc: m as u32,
            ..Default::default()
        };
        rec.erosion_resample(&src, &out, &p)?;
        read_f32(gpu, rec, &out, m * m)
    })
}

/// GPU [`island_core::erosion::flow_receivers`].
pub fn flow_receivers(
    filled: &[f32],
    flat: &[u32],
    n: usize,
    sea: f32,
    heights: &[f32],
    seed: u32,
) -> Result<Vec<u32>, GpuError> {
    for (f, l) in [
        ("filled", filled.len()),
        ("flat", flat.len()),
        ("heights", heights.len()),
    ] {
        check_len(f, l, n * n)?;
    }
    let p = StepParams {
        pow_count: vec![0.0; n * n + 1],
        smooth: 0.0,
        seed: 0,
        kdt: 0.0,
        g: 0.0,
        talus: 0.0,
        sea,
        dx: 1.0,
    };
    with_erosion(n, n, &p, |gpu, rec, b, up| {
        upload(gpu, &b.filled, bytemuck::cast_slice(filled));
        upload(gpu, &b.flat, bytemuck::cast_slice(flat));
        upload(gpu, &b.h, bytemuck::cast_slice(heights));
        rec.flow_receivers(b, &u::Erosion { seed, ..up })?;
        read_u32(gpu, rec, &b.rcv, n * n)
    })
}

/// GPU [`island_core::erosion::flow_accumulation`] of the receivers `rcv` (no flow order
/// needed): the drainage areas and the number of donor-first dispatches it took.
pub fn flow_accumulation(
    rcv: &[u32],
    n: usize,
    cell_area: f32,
) -> Result<(Vec<f32>, u32), GpuError> {
    check_len("rcv", rcv.len(), n * n)?;
    if rcv.iter().any(|&r| r as usize >= n * n) {
        return Err(bad("rcv", "a receiver is outside the grid"));
    }
    let p = StepParams {
        pow_count: vec![0.0; n * n + 1],
        smooth: 0.0,
        seed: 0,
        kdt: 0.0,
        g: 0.0,
        talus: 0.0,
        sea: 0.0,
        dx: cell_area.sqrt(),
    };
    with_erosion(n, n, &p, |gpu, rec, b, up| {
        upload(gpu, &b.rcv, bytemuck::cast_slice(rcv));
        let up = u::Erosion { cell_area, ..up };
        let iters = rec.flow_accumulation(b, &up, 1)?;
        Ok((read_f32(gpu, rec, &b.area, n * n)?, iters))
    })
}

/// GPU [`island_core::erosion::stream_power`] (pointer jumping over the receiver tree): the
/// heights after the step.
pub fn stream_power(
    h: &[f32],
    rcv: &[u32],
    area: &[f32],
    n: usize,
    p: &StepParams,
) -> Result<Vec<f32>, GpuError> {
    for (f, l) in [("h", h.len()), ("rcv", rcv.len()), ("area", area.len())] {
        check_len(f, l, n * n)?;
    }
    with_erosion(n, n, p, |gpu, rec, b, up| {
        upload(gpu, &b.h, bytemuck::cast_slice(h));
        upload(gpu, &b.rcv, bytemuck::cast_slice(rcv));
        upload(gpu, &b.area, bytemuck::cast_slice(area));
        rec.stream_power(b, &up)?;
        read_f32(gpu, rec, &b.h, n * n)
    })
}

/// GPU [`island_core::erosion::deposition`]: `h` after the stream-power step, `old` before it;
/// the heights after deposition and the volumes moved.
pub fn deposition(
    h: &[f32],
    old: &[f32],
    filled: &[f32],
    rcv: &[u32],
    area: &[f32],
    n: usize,
    p: &StepParams,
) -> Result<(Vec<f32>, SedimentBudget), GpuError> {
    for (f, l) in [
        ("h", h.len()),
        ("old", old.len()),
        ("filled", filled.len()),
        ("rcv", rcv.len()),
        ("area", area.len()),
    ] {
        check_len(f, l, n * n)?;
    }
    with_erosion(n, n, p, |gpu, rec, b, up| {
        upload(gpu, &b.h, bytemuck::cast_slice(h));
        upload(gpu, &b.old, bytemuck::cast_slice(old));
        upload(gpu, &b.filled, bytemuck::cast_slice(filled));
        upload(gpu, &b.rcv, bytemuck::cast_slice(rcv));
        // The donor-first dispatch count comes from the accumulation on the same receivers
        // (into the scratch area buffer, then the given areas are uploaded).
        let iters = rec.flow_accumulation(b, &up, 1)?;
        upload(gpu, &b.area, bytemuck::cast_slice(area));
        rec.deposition(b, &up, iters)?;
        let (hd, budget) = rec.read_erosion_pub(b)?;
        Ok((hd, budget))
    })
}

/// GPU [`island_core::erosion::thermal`]: one pass from `src`.
pub fn thermal(src: &[f32], n: usize, p: &StepParams) -> Result<Vec<f32>, GpuError> {
    check_len("src", src.len(), n * n)?;
    with_erosion(n, n, p, |gpu, rec, b, up| {
        upload(gpu, &b.old, bytemuck::cast_slice(src));
        rec.thermal(&b.old, &b.h, &up)?;
        read_f32(gpu, rec, &b.h, n * n)
    })
}

/// GPU [`island_core::erosion::upsample_delta`]: `g` (`n²`) plus the bicubic upsampling of
/// `delta` (`m²`) on the samples above `sea`.
pub fn upsample_delta(
    g: &[f32],
    n: usize,
    delta: &[f32],
    m: usize,
    sea: f32,
) -> Result<Vec<f32>, GpuError> {
    check_len("g", g.len(), n * n)?;
    check_len("delta", delta.len(), m * m)?;
    check_n(n)?;
    if m < 2 || n < 2 {
        return Err(bad(
            "resolution",
            "upsample_delta needs at least 2² samples",
        ));
    }
    with_gpu(Grid::new(n, 1.0, 0), |gpu, rec| {
        let heights = gpu.storage_init("heights", bytemuck::cast_slice(g));
        let h = gpu.storage_init("delta", bytemuck::cast_slice(delta));
        let zero = gpu.storage("zero", (m * m * 4) as u64);
        let p = u::Erosion {
            nc: m as u32,
            sea,
            ..Default::default()
        };
        rec.upsample_delta(&h, &zero, &heights, &p)?;
        read_f32(gpu, rec, &heights, n * n)
    })
}

/// GPU [`island_core::erosion::erode`] of `heights` (`n × n`, `spacing` metres apart): the
/// eroded heights and the report. With `times`, every pass is waited for and timed.
pub fn erode(
    heights: &[f32],
    n: usize,
    spacing: f32,
    settings: &ErosionSettings,
    seed: u64,
    times: Option<&mut PassTimes>,
) -> Result<(Vec<f32>, ErosionReport), GpuError> {
    check_len("heights", heights.len(), n * n)?;
    with_gpu(Grid::new(n, spacing * (n - 1) as f32, seed), |gpu, rec| {
        let hb = gpu.storage_init("heights", bytemuck::cast_slice(heights));
        let report = ero::erode(rec, &hb, spacing, settings, seed, times)?;
        Ok((read_f32(gpu, rec, &hb, n * n)?, report))
    })
}

// ---- drainage (`drainage.wgsl`) --------------------------------------------------------------

/// GPU [`island_core::drainage::receivers`] (D8 over the filled surface, flats to their
/// [`flat_routing`] receiver). The drainage area over them is [`flow_accumulation`] (the same kernel,
/// `island_core::drainage::accumulate`).
pub fn receivers(
    filled: &[f32],
    flat: &[u32],
    n: usize,
    sea_level: f32,
    heights: &[f32],
) -> Result<Vec<u32>, GpuError> {
    for (f, l) in [
        ("filled", filled.len()),
        ("flat", flat.len()),
        ("heights", heights.len()),
    ] {
        check_len(f, l, n * n)?;
    }
    with_gpu(Grid::new(n, 1.0, 0), |gpu, rec| {
        let fb = gpu.storage_init("filled", bytemuck::cast_slice(filled));
        let pb = gpu.storage_init("flat", bytemuck::cast_slice(flat));
        let hb = gpu.storage_init("heights", bytemuck::cast_slice(heights));
        let rb = gpu.storage("rcv", (n * n * 4) as u64);
        let pipes = &rec.gpu.pipes;
        rec.pass(&pipes.receivers)
            .params(&u::Drainage {
                sea_level,
                ..Default::default()
            })
            .read("filled", &fb)
            .read("flat", &pb)
            .read("heights", &hb)
            .write("rcv", &rb)
            .run(crate::ctx::grid2(n))?;
        read_u32(gpu, rec, &rb, n * n)
    })
}

/// GPU [`island_core::drainage::depression_fill`] of `heights` (`n²`, sea at or below
/// `sea_level`): the filled surface and the relaxation dispatches it took.
pub fn depression_fill(
    heights: &[f32],
    n: usize,
    sea_level: f32,
) -> Result<(Vec<f32>, u32), GpuError> {
    check_len("heights", heights.len(), n * n)?;
    with_gpu(Grid::new(n, 1.0, 0), |gpu, rec| {
        let hb = gpu.storage_init("heights", bytemuck::cast_slice(heights));
        let fb = gpu.storage("filled", (n * n * 4) as u64);
        let db = DepressionBufs::new(rec, n);
        let iters = rec.depression_fill(&db, &hb, &fb, sea_level)?;
        Ok((read_f32(gpu, rec, &fb, n * n)?, iters))
    })
}

/// GPU [`island_core::drainage::flat_routing`] of the filled surface `filled` of `heights`
/// (both `n²`): the receivers of the flat samples ([`island_core::drainage::NONE`]
/// elsewhere) and the relaxation dispatches it took.
pub fn flat_routing(
    filled: &[f32],
    n: usize,
    sea_level: f32,
    heights: &[f32],
) -> Result<(Vec<u32>, u32), GpuError> {
    check_len("filled", filled.len(), n * n)?;
    check_len("heights", heights.len(), n * n)?;
    with_gpu(Grid::new(n, 1.0, 0), |gpu, rec| {
        let hb = gpu.storage_init("heights", bytemuck::cast_slice(heights));
        let fb = gpu.storage_init("filled", bytemuck::cast_slice(filled));
        let out = gpu.storage("flat", (n * n * 4) as u64);
        let db = DepressionBufs::new(rec, n);
        let iters = rec.flat_routing(&db, &hb, &fb, &out, sea_level)?;
        Ok((read_u32(gpu, rec, &out, n * n)?, iters))
    })
}

/// GPU [`island_core::drainage::accumulate_counts`] of the receivers `rcv` (`n²`, no flow order
/// needed) and [`island_core::drainage::areas`] with `cell_area`: the counts and the areas.
pub fn accumulate(rcv: &[u32], n: usize, cell_area: f32) -> Result<(Vec<u32>, Vec<f32>), GpuError> {
    check_len("rcv", rcv.len(), n * n)?;
    if let Some(i) = (0..n * n).find(|&i| {
        let r = rcv[i] as usize;
        r >= n * n || (r % n).abs_diff(i % n) > 1 || (r / n).abs_diff(i / n) > 1
    }) {
        return Err(bad(
            "rcv",
            format!("the receiver of {i} is not a neighbour or itself"),
        ));
    }
    with_gpu(Grid::new(n, 1.0, 0), |gpu, rec| {
        let rb = gpu.storage_init("rcv", bytemuck::cast_slice(rcv));
        let acc = gpu.storage("acc", (n * n * 4) as u64);
        let area = gpu.storage("area", (n * n * 4) as u64);
        let p = u::Drainage {
            cell_area,
            ..Default::default()
        };
        rec.accumulate(n, &rb, &acc, &area, &p)?;
        let words = read_u32(gpu, rec, &acc, n * n)?;
        let counts = words.iter().map(|w| w >> 4).collect();
        Ok((counts, read_f32(gpu, rec, &area, n * n)?))
    })
}

/// GPU [`island_core::drainage::lake_labels`] of `heights` and their filled surface `filled`
/// (both `n²`).
pub fn lake_labels(heights: &[f32], filled: &[f32], n: usize) -> Result<Vec<u32>, GpuError> {
    check_len("heights", heights.len(), n * n)?;
    check_len("filled", filled.len(), n * n)?;
    with_gpu(Grid::new(n, 1.0, 0), |gpu, rec| {
        let hb = gpu.storage_init("heights", bytemuck::cast_slice(heights));
        let b = DrainageBufs::new(rec, n);
        gpu.upload(&b.filled, 0, bytemuck::cast_slice(filled));
        rec.lake_labels(&b, &hb)?;
        read_u32(gpu, rec, &b.label, n * n)
    })
}

use crate::drainage::DrainageBufs;
pub use crate::drainage::DrainageIters;

/// GPU [`island_core::drainage::drainage`] of `heights` (`n²`, `spacing` metres apart, sea at
/// or below `sea_level`; see `crate::drainage`): the same result and the relaxation
/// dispatches it took.
pub fn drainage(
    heights: &[f32],
    n: usize,
    spacing: f32,
    sea_level: f32,
    settings: &island_core::drainage::DrainageSettings,
) -> Result<(island_core::drainage::Drainage, DrainageIters), GpuError> {
    check_len("heights", heights.len(), n * n)?;
    settings.validate().map_err(|e| bad("drainage", e))?;
    with_gpu(Grid::new(n, 1.0, 0), |gpu, rec| {
        let hb = gpu.storage_init("heights", bytemuck::cast_slice(heights));
        let b = DrainageBufs::new(rec, n);
        rec.drainage(&b, &hb, spacing, sea_level, settings)
    })
}

/// GPU [`island_core::channels::carve_rivers`] of `heights` (`n²`) with the drainage `d` of
/// those heights: the carved heights (the report is the core's business).
pub fn carve_rivers(
    heights: &[f32],
    d: &island_core::drainage::Drainage,
    settings: &island_core::channels::CarveSettings,
) -> Result<Vec<f32>, GpuError> {
    let n = d.n;
    check_len("heights", heights.len(), n * n)?;
    settings.validate().map_err(|e| bad("carve", e))?;
    with_gpu(Grid::new(n, 1.0, 0), |gpu, rec| {
        let hb = gpu.storage_init("heights", bytemuck::cast_slice(heights));
        let fb = gpu.storage_init("filled", bytemuck::cast_slice(&d.filled));
        let lb = gpu.storage_init("lake", bytemuck::cast_slice(&d.lake_id));
        let rb = gpu.storage_init("rcv", bytemuck::cast_slice(&d.receivers));
        let plane = (n * n * 4) as u64;
        let (riv, hkey, bed) = (
            gpu.storage("riv", plane),
            gpu.storage("hkey", plane),
            gpu.storage("bed", plane),
        );
        let input = crate::channels::CarveInput {
            filled: &fb,
            lake: &lb,
            rcv: &rb,
            rivers: &d.rivers,
            spacing: d.spacing,
            sea_level: d.sea_level,
        };
        let scratch = crate::channels::CarveScratch {
            riv: &riv,
            hkey: &hkey,
            bed: &bed,
        };
        rec.carve_rivers(&hb, &input, &scratch, settings)?;
        read_f32(gpu, rec, &hb, n * n)
    })
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
    let (mask, any) = crate::wetness::inland_mask(water);
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
        let scratch = crate::wetness::WetScratch {
            mask: &mb,
            g: &g,
            s: &s,
            t: &t,
            flags: &flags,
            dist: &d,
        };
        rec.apply_wetness(&pb, &hb, &nb, &scratch, p)?;
        let out = read_u32(gpu, rec, &pb, n * n)?;
        Ok(out.iter().map(|w| w.to_le_bytes()).collect())
    })
}
