//! Recording of every GPU stage, and the whole pipeline in `island_core::pipeline` order.

use crate::ctx::{grid2, Frame, Gpu, Pass};
use crate::drainage::DrainageBufs;
use crate::passes::Pipe;
use crate::uniforms::{
    self as u, DS_TILE, LINE_GROUP, NORM_PER_GROUP, NORM_WORKGROUP, RIVER_ROW_BYTES,
};
use crate::GpuError;
use island_core::basins::dig_lake_basins;
use island_core::diamond_square::level_amplitude;
use island_core::drainage::drainage;
use island_core::gaussian_islands::gaussian_mountains;
use island_core::grid::min_max;
use island_core::hash::tag;
use island_core::heightfield::Heightfield;
use island_core::params::{
    Algorithm, Biome, BiomeParams, CoastParams, FbmParams, GaussianParams, IslandParams,
    MaskParams, RiverMode, RiverParams, SplatParams, ValueNoiseParams,
};
use island_core::pipeline::{
    border_margin, carve_settings, erosion_stage, hydrology, Hydrology, Island, Stats,
};
use island_core::river::{river_control_points, river_polyline, RIVER_SEGMENTS};
use island_core::splat::SPLAT_JITTER_SCALE;
use island_core::Grid as CoreGrid;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::MutexGuard;
use std::time::Instant;

// ---- the stage list -------------------------------------------------------------------------

/// One stage of the GPU pipeline: its name (progress and `Stats::stage_ms`) and what it does.
struct Stage {
    name: &'static str,
    /// Records GPU work (submitted and waited for at the end of the stage); the cancel flag and
    /// the failure hook are checked after these.
    gpu: bool,
    run: StageFn,
}

/// The GPU pipeline, in order: `island_core::pipeline::STAGES` up to `splat` (same names, one
/// GPU stage each), then the read-back and the CPU-side heightfield and statistics. Erosion runs
/// its passes on the GPU (`erosion.wgsl` and `depression.wgsl`); the drainage stage runs the
/// drainage and the river carving on the GPU (`drainage.wgsl`, `channels.wgsl`), the dams and
/// the water map on the CPU (see [`stage_drainage`]).
const STAGES: [Stage; 15] = [
    gpu_stage("base", stage_base),
    gpu_stage("detail", stage_detail),
    gpu_stage("biomes", stage_biomes),
    gpu_stage("shaping", stage_shaping),
    gpu_stage("mask", stage_mask),
    gpu_stage("distance", stage_distance),
    gpu_stage("coast", stage_coast),
    gpu_stage("river", stage_river),
    gpu_stage("erosion", stage_erosion),
    gpu_stage("drainage", stage_drainage),
    gpu_stage("normals", stage_normals),
    gpu_stage("splat", stage_splat),
    cpu_stage("readback", stage_readback),
    cpu_stage("heightfield", stage_heightfield),
    cpu_stage("stats", stage_stats),
];

type StageFn = fn(&mut Run) -> Result<(), GpuError>;

const fn gpu_stage(name: &'static str, run: StageFn) -> Stage {
    Stage {
        name,
        gpu: true,
        run,
    }
}

const fn cpu_stage(name: &'static str, run: StageFn) -> Stage {
    Stage {
        name,
        gpu: false,
        run,
    }
}

const fn stage_names<const N: usize>(s: &[Stage; N]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = s[i].name;
        i += 1;
    }
    out
}

/// Stage names reported by the GPU pipeline (progress and `Stats::stage_ms`), in order.
pub const GPU_STAGES: [&str; STAGES.len()] = stage_names(&STAGES);

// ---- per-sample buffers ---------------------------------------------------------------------

/// A per-sample buffer role: which plane holds it and the stages from its first write to its
/// last read (inclusive). Roles whose stage ranges never overlap share a plane (a 4097² plane
/// is 64 MiB); the `plane_roles_never_overlap` test checks the ranges.
struct Role {
    name: &'static str,
    plane: usize,
    #[cfg_attr(not(test), allow(dead_code))]
    from: &'static str,
    #[cfg_attr(not(test), allow(dead_code))]
    to: &'static str,
}

const fn role(name: &'static str, plane: usize, from: &'static str, to: &'static str) -> Role {
    Role {
        name,
        plane,
        from,
        to,
    }
}

/// Planes of 4 bytes per sample.
const PLANES: usize = 10;

const ROLES: [Role; 22] = [
    role("heights", 0, "base", "readback"),
    role("detail_noise", 1, "detail", "detail"),
    role("edt_columns", 1, "distance", "distance"),
    role("fine_noise", 1, "coast", "coast"),
    role("splat_w0", 1, "splat", "splat"),
    role("biome_index", 2, "biomes", "readback"),
    role("roughness", 3, "biomes", "coast"),
    role("splat_w1", 3, "splat", "splat"),
    role("sandiness", 4, "biomes", "splat"),
    role("mask", 5, "mask", "distance"),
    role("packed_splat", 5, "splat", "readback"),
    role("distance", 6, "distance", "coast"),
    role("splat_w2", 6, "splat", "splat"),
    role("edt_s", 7, "distance", "distance"),
    role("normal_x", 7, "normals", "normals"),
    role("splat_w3", 7, "splat", "splat"),
    role("edt_t", 8, "distance", "distance"),
    role("normal_y", 8, "normals", "splat"),
    role("normal_z", 9, "normals", "normals"),
    role("blur_tmp", 9, "splat", "splat"),
    // Not per-sample: own buffers (listed for the names only).
    role("river_rows", usize::MAX, "river", "river"),
    role("normalize_partials", usize::MAX, "base", "base"),
];

/// Buffers of one resolution, reused between runs: one field per role (roles sharing a plane
/// are handles of the same buffer, see [`ROLES`]). Every per-sample buffer holds 4 bytes per
/// sample (software adapters cap one storage binding at 128 MiB).
pub(crate) struct Resources {
    pub n: usize,
    heights: wgpu::Buffer,
    detail_noise: wgpu::Buffer,
    edt_columns: wgpu::Buffer,
    fine_noise: wgpu::Buffer,
    biome_index: wgpu::Buffer,
    roughness: wgpu::Buffer,
    sandiness: wgpu::Buffer,
    mask: wgpu::Buffer,
    packed_splat: wgpu::Buffer,
    distance: wgpu::Buffer,
    edt_s: wgpu::Buffer,
    edt_t: wgpu::Buffer,
    normal_x: wgpu::Buffer,
    normal_y: wgpu::Buffer,
    normal_z: wgpu::Buffer,
    splat_w: [wgpu::Buffer; 4],
    blur_tmp: wgpu::Buffer,
    /// Per-row segment masks of the river pass.
    river_rows: wgpu::Buffer,
    /// Per-workgroup (min, max) of the normalisation.
    normalize_partials: wgpu::Buffer,
    /// The normalisation's (min, max).
    minmax: wgpu::Buffer,
    /// The EDT's "any feature" flags.
    edt_flags: wgpu::Buffer,
    staging: wgpu::Buffer,
}

impl Resources {
    fn new(gpu: &Gpu, n: usize) -> Result<Resources, GpuError> {
        let nn = (n * n) as u64;
        let plane = nn * 4;
        let lim = &gpu.limits;
        if plane > lim.max_storage_buffer_binding_size || nn * 12 > lim.max_buffer_size {
            return Err(GpuError::TooLarge(format!(
                "{n}² needs {plane}-byte storage bindings and a {}-byte readback buffer; {} allows {} / {}",
                nn * 12,
                gpu.name,
                lim.max_storage_buffer_binding_size,
                lim.max_buffer_size
            )));
        }
        let planes: Vec<wgpu::Buffer> = (0..PLANES)
            .map(|k| {
                let names: Vec<&str> = ROLES
                    .iter()
                    .filter(|r| r.plane == k)
                    .map(|r| r.name)
                    .collect();
                gpu.storage(&names.join("|"), plane)
            })
            .collect();
        let get = |name: &str| {
            let r = ROLES
                .iter()
                .find(|r| r.name == name)
                .expect("role listed in ROLES");
            planes[r.plane].clone()
        };
        Ok(Resources {
            n,
            heights: get("heights"),
            detail_noise: get("detail_noise"),
            edt_columns: get("edt_columns"),
            fine_noise: get("fine_noise"),
            biome_index: get("biome_index"),
            roughness: get("roughness"),
            sandiness: get("sandiness"),
            mask: get("mask"),
            packed_splat: get("packed_splat"),
            distance: get("distance"),
            edt_s: get("edt_s"),
            edt_t: get("edt_t"),
            normal_x: get("normal_x"),
            normal_y: get("normal_y"),
            normal_z: get("normal_z"),
            splat_w: [
                get("splat_w0"),
                get("splat_w1"),
                get("splat_w2"),
                get("splat_w3"),
            ],
            blur_tmp: get("blur_tmp"),
            river_rows: gpu.storage("river_rows", n as u64 * RIVER_ROW_BYTES),
            normalize_partials: gpu.storage(
                "normalize_partials",
                (n * n).div_ceil(NORM_PER_GROUP) as u64 * 8,
            ),
            minmax: gpu.storage("minmax", 16),
            edt_flags: gpu.storage("edt_flags", 16),
            staging: gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("staging"),
                size: nn * 12,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
        })
    }
}

// ---- pass uniforms from the parameters ------------------------------------------------------

/// Noise units per sample for a wavelength of `scale` metres (as `fbm_noise` computes it).
fn noise_step(n: usize, world: f32, scale: f32) -> f32 {
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

/// The `Biomes` uniform of [`island_core::biomes::biome_blend`]`(_, g, b, tag)`.
pub(crate) fn biomes(g: &CoreGrid, b: &BiomeParams, tg: u32) -> u::Biomes {
    // Warp noise step per sample, as island_core::biomes::biome_blend computes it.
    let (n, world) = (g.resolution, g.world_size);
    let spacing = world / (n - 1) as f32;
    let cell = world / b.grid as f32;
    u::Biomes {
        tag: tg,
        count: b.biomes.len() as u32,
        cell,
        distortion: b.distortion,
        boundary_noise: b.boundary_noise,
        blend_width: b.blend_width,
        warp_step: spacing / cell,
    }
}

/// The `Mask` uniform of [`island_core::mask::island_mask`]`(_, m, margin, tag)`.
pub(crate) fn mask(m: &MaskParams, margin: f32, tg: u32) -> u::Mask {
    u::Mask {
        tag: tg,
        radius: m.radius,
        amp: island_core::mask::MASK_DEFORMATION * (1.0 - m.roundness),
        noise_scale: m.noise_scale,
        margin,
    }
}

pub(crate) fn coast(max_height: f32, c: &CoastParams) -> u::Coast {
    u::Coast {
        max_height,
        coast_width: c.coast_width,
        beach_height: c.beach_height,
        shelf_width: c.shelf_width,
        sea_depth: c.sea_depth,
        fine_amplitude: c.fine_amplitude,
    }
}

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

pub(crate) fn biome_table(b: &[Biome]) -> Vec<[f32; 4]> {
    b.iter()
        .map(|b| [b.height_scale, b.exponent, b.roughness, b.sandiness])
        .collect()
}

/// The mountains of [`island_core::gaussian_islands::gaussian_islands`]`(g, p, tag)`, drawn on
/// the CPU, as `[x, z, radius, amplitude]`.
pub(crate) fn mountains_data(g: &CoreGrid, p: &GaussianParams, tg: u32) -> Vec<[f32; 4]> {
    gaussian_mountains(g.world_size, p.cells, p.density, p.separation, g.seed, tg)
        .iter()
        .map(|m| [m.x, m.z, m.radius, m.amplitude])
        .collect()
}

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

// ---- recording ------------------------------------------------------------------------------

/// Records passes into one command encoder.
pub(crate) struct Rec<'g> {
    pub gpu: &'g Gpu,
    fr: Frame<'g>,
    pub enc: wgpu::CommandEncoder,
    pub n: usize,
}

impl<'g> Rec<'g> {
    pub fn new(gpu: &'g Gpu, grid: &u::Grid) -> Self {
        Rec {
            gpu,
            fr: Frame::new(gpu, grid),
            enc: gpu.encoder(),
            n: grid.n as usize,
        }
    }

    /// Describe one dispatch of `pipe` (see [`Pass`]).
    pub fn pass<'r>(&'r mut self, pipe: &'g Pipe) -> Pass<'r, 'g> {
        Pass::new(&mut self.fr, &mut self.enc, pipe)
    }

    /// Submit what was recorded and wait; start a new encoder (the per-dispatch uniform
    /// slots are free again).
    pub fn flush(&mut self) -> Result<(), GpuError> {
        let enc = std::mem::replace(&mut self.enc, self.gpu.encoder());
        self.gpu.submit_wait(enc)?;
        self.fr.reset();
        Ok(())
    }

    /// Per-dispatch uniform slots used since the last [`Rec::flush`].
    pub fn slots_used(&self) -> u64 {
        self.fr.used()
    }

    pub fn fbm(&mut self, out: &wgpu::Buffer, p: &u::Noise) -> Result<(), GpuError> {
        let gpu = self.gpu;
        let n = self.n;
        self.pass(&gpu.pipes.fbm)
            .params(p)
            .write("out_f", out)
            .run(grid2(n))
    }

    pub fn value(&mut self, out: &wgpu::Buffer, p: &u::Noise) -> Result<(), GpuError> {
        let gpu = self.gpu;
        let n = self.n;
        self.pass(&gpu.pipes.value)
            .params(p)
            .write("out_f", out)
            .run(grid2(n))
    }

    pub fn diamond_square(
        &mut self,
        out: &wgpu::Buffer,
        roughness: f32,
        ridge: bool,
        tg: u32,
    ) -> Result<(), GpuError> {
        let gpu = self.gpu;
        let n = self.n;
        let p = &gpu.pipes;
        let corners = u::Diamond {
            tag: tg,
            ridge: ridge as u32,
            ..Default::default()
        };
        self.pass(&p.ds_corners)
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
            self.pass(&p.ds_diamond)
                .params(&diamond)
                .read_write("h", out)
                .run((cnt.div_ceil(DS_TILE), cnt.div_ceil(DS_TILE), 1))?;
            let rows = ((n - 1) / half + 1) as u32;
            let square = u::Diamond {
                amp: amp * roughness,
                ..diamond
            };
            self.pass(&p.ds_square)
                .params(&square)
                .read_write("h", out)
                .run(((cnt + 1).div_ceil(DS_TILE), rows.div_ceil(DS_TILE), 1))?;
            step = half;
        }
        Ok(())
    }

    pub fn gaussian(
        &mut self,
        out: &wgpu::Buffer,
        mountains: &wgpu::Buffer,
        count: usize,
    ) -> Result<(), GpuError> {
        let gpu = self.gpu;
        let n = self.n;
        self.pass(&gpu.pipes.gaussian)
            .params(&u::Gaussian {
                mountain_count: count as u32,
            })
            .read("mountains", mountains)
            .write("out_f", out)
            .run(grid2(n))
    }

    /// Rescale `data` to [0, 1] in place; `partials` holds 8 bytes per `NORM_PER_GROUP`
    /// samples, `minmax` 8 bytes.
    pub fn normalize(
        &mut self,
        data: &wgpu::Buffer,
        partials: &wgpu::Buffer,
        minmax: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let gpu = self.gpu;
        let nn = self.n * self.n;
        let groups = nn.div_ceil(NORM_PER_GROUP) as u32;
        let p = &gpu.pipes;
        self.pass(&p.norm_partial)
            .read("data", data)
            .write("partial", partials)
            .run((groups, 1, 1))?;
        self.pass(&p.norm_final)
            .params(&u::Normalize { partials: groups })
            .read("partial", partials)
            .write("minmax", minmax)
            .run((1, 1, 1))?;
        let wgs = nn.div_ceil(NORM_WORKGROUP) as u32;
        let gx = wgs.min(32768);
        self.pass(&p.norm_apply)
            .read("minmax", minmax)
            .read_write("data", data)
            .run((gx, wgs.div_ceil(gx), 1))
    }

    pub fn detail(
        &mut self,
        base: &wgpu::Buffer,
        detail: &wgpu::Buffer,
        p: &u::Detail,
    ) -> Result<(), GpuError> {
        let gpu = self.gpu;
        let n = self.n;
        self.pass(&gpu.pipes.detail)
            .params(p)
            .read("detail", detail)
            .read_write("base", base)
            .run(grid2(n))
    }

    /// Biome blend: `base` relief rescaled in place; index, roughness and sandiness written.
    pub fn biomes(
        &mut self,
        base: &wgpu::Buffer,
        table: &wgpu::Buffer,
        index: &wgpu::Buffer,
        rough: &wgpu::Buffer,
        sand: &wgpu::Buffer,
        p: &u::Biomes,
    ) -> Result<(), GpuError> {
        let gpu = self.gpu;
        let n = self.n;
        self.pass(&gpu.pipes.biome)
            .params(p)
            .read("table", table)
            .read_write("base", base)
            .write("biome_index", index)
            .write("rough", rough)
            .write("sand", sand)
            .run(grid2(n))
    }

    /// Shaping curve: `lut` holds `lut_len` f32 values.
    pub fn shaping(
        &mut self,
        heights: &wgpu::Buffer,
        lut: &wgpu::Buffer,
        lut_len: usize,
    ) -> Result<(), GpuError> {
        let gpu = self.gpu;
        let n = self.n;
        self.pass(&gpu.pipes.shaping)
            .params(&u::Shaping {
                lut_len: lut_len as u32,
            })
            .read("lut", lut)
            .read_write("heights", heights)
            .run(grid2(n))
    }

    pub fn mask(&mut self, mask: &wgpu::Buffer, p: &u::Mask) -> Result<(), GpuError> {
        let gpu = self.gpu;
        let n = self.n;
        self.pass(&gpu.pipes.mask)
            .params(p)
            .write("mask", mask)
            .run(grid2(n))
    }

    /// Exact signed distance; `g`, `s`, `t` are scratch buffers of at least n² i32, `flags`
    /// 8 bytes.
    pub fn distance(
        &mut self,
        mask: &wgpu::Buffer,
        g: &wgpu::Buffer,
        s: &wgpu::Buffer,
        t: &wgpu::Buffer,
        flags: &wgpu::Buffer,
        dist: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let gpu = self.gpu;
        self.enc.clear_buffer(flags, 0, None);
        let lines = (self.n as u32).div_ceil(LINE_GROUP);
        let p = &gpu.pipes;
        for feature_is_land in 0..2 {
            let d = u::Distance { feature_is_land };
            self.pass(&p.edt_columns)
                .params(&d)
                .read("mask", mask)
                .read_write("g", g)
                .read_write("any_feature", flags)
                .run((lines, 1, 1))?;
            self.pass(&p.edt_rows)
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
    pub fn smooth_distance(
        &mut self,
        dist: &wgpu::Buffer,
        a: &wgpu::Buffer,
        b: &wgpu::Buffer,
        p: &u::SmoothDistance,
    ) -> Result<(), GpuError> {
        let gpu = self.gpu;
        let pipes = &gpu.pipes;
        let lines = (self.n as u32).div_ceil(LINE_GROUP);
        let tiles = grid2(self.n);
        self.pass(&pipes.smooth_quantize)
            .params(p)
            .read("dist", dist)
            .write("dst", a)
            .run(tiles)?;
        // a → b → a → b along x, then b → a → b → a along z: the result is in a.
        let mut bufs = (a, b);
        for pipe in [
            &pipes.smooth_rows,
            &pipes.smooth_rows,
            &pipes.smooth_rows,
            &pipes.smooth_columns,
            &pipes.smooth_columns,
            &pipes.smooth_columns,
        ] {
            self.pass(pipe)
                .params(p)
                .read("src", bufs.0)
                .write("dst", bufs.1)
                .run((lines, 1, 1))?;
            bufs = (bufs.1, bufs.0);
        }
        self.pass(&pipes.smooth_blend)
            .params(p)
            .read_write("dist", dist)
            .read("src", bufs.0)
            .run(tiles)
    }

    pub fn coast(
        &mut self,
        land01: &wgpu::Buffer,
        dist: &wgpu::Buffer,
        fine: &wgpu::Buffer,
        rough: &wgpu::Buffer,
        p: &u::Coast,
    ) -> Result<(), GpuError> {
        let gpu = self.gpu;
        let n = self.n;
        self.pass(&gpu.pipes.coast)
            .params(p)
            .read("dist", dist)
            .read("fine", fine)
            .read("rough", rough)
            .read_write("land01", land01)
            .run(grid2(n))
    }

    /// River carving; `rows` is scratch of `RIVER_ROW_BYTES` per row.
    pub fn river(
        &mut self,
        heights: &wgpu::Buffer,
        line: &wgpu::Buffer,
        rows: &wgpu::Buffer,
        p: &u::River,
    ) -> Result<(), GpuError> {
        let gpu = self.gpu;
        let n = self.n;
        self.pass(&gpu.pipes.river_rows)
            .params(p)
            .read("line", line)
            .write("row_info", rows)
            .run(((n as u32).div_ceil(LINE_GROUP), 1, 1))?;
        self.pass(&gpu.pipes.river)
            .params(p)
            .read("line", line)
            .read("row_info", rows)
            .read_write("heights", heights)
            .run(grid2(n))
    }

    /// Normals as three planes.
    pub fn normals(
        &mut self,
        heights: &wgpu::Buffer,
        nx: &wgpu::Buffer,
        ny: &wgpu::Buffer,
        nz: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let gpu = self.gpu;
        let n = self.n;
        self.pass(&gpu.pipes.normals)
            .read("heights", heights)
            .write("normal_x", nx)
            .write("normal_y", ny)
            .write("normal_z", nz)
            .run(grid2(n))
    }

    /// Splat weights into the planes `b.w`, `blur_passes` box blurs through `b.blur_tmp`,
    /// packed RGBA8 into `b.packed`.
    pub fn splat(&mut self, b: &SplatBufs, blur_passes: u32, p: &u::Splat) -> Result<(), GpuError> {
        let (heights, ny, sand, w, blur_tmp, packed) =
            (b.heights, b.normal_y, b.sand, b.w, b.blur_tmp, b.packed);
        let gpu = self.gpu;
        let n = self.n;
        let pipes = &gpu.pipes;
        self.pass(&pipes.splat_weights)
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
                    self.pass(&pipes.splat_blur)
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
        self.pass(&pipes.splat_quantize)
            .read("w0", w[0])
            .read("w1", w[1])
            .read("w2", w[2])
            .read("w3", w[3])
            .write("packed", packed)
            .run(grid2(n))
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

pub(crate) fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

pub(crate) fn u32s(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

// ---- the stages -----------------------------------------------------------------------------

/// State of one GPU generation, passed from stage to stage.
struct Run<'a> {
    gpu: &'a Gpu,
    p: &'a IslandParams,
    rec: Rec<'a>,
    /// The buffer set (held until the read-back, which releases it for other generations).
    res: Option<MutexGuard<'a, Option<Resources>>>,
    heights: Vec<f32>,
    biomes: Vec<u8>,
    splat: Vec<[u8; 4]>,
    field: Option<Heightfield>,
    stats: (f32, f32, f32),
    hydro: Option<Hydrology>,
}

impl<'a> Run<'a> {
    /// The recorder and the buffers.
    fn parts(&mut self) -> (&mut Rec<'a>, &Resources) {
        let r = self
            .res
            .as_deref()
            .and_then(|r| r.as_ref())
            .expect("buffers held until the read-back");
        (&mut self.rec, r)
    }
}

fn stage_base(run: &mut Run) -> Result<(), GpuError> {
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

fn stage_detail(run: &mut Run) -> Result<(), GpuError> {
    let p = run.p;
    let (rec, r) = run.parts();
    if !p.detail.enabled {
        return Ok(());
    }
    let d = &p.detail;
    rec.fbm(
        &r.detail_noise,
        &noise_fbm(&p.grid(), &d.noise(), tag::DETAIL),
    )?;
    let dp = u::Detail {
        strength: d.strength,
        cap: d.cap,
    };
    rec.detail(&r.heights, &r.detail_noise, &dp)
}

fn stage_biomes(run: &mut Run) -> Result<(), GpuError> {
    let (gpu, p) = (run.gpu, run.p);
    let (rec, r) = run.parts();
    let b = &p.biomes;
    let table = gpu.storage_init("biomes", bytemuck::cast_slice(&biome_table(&b.biomes)));
    let bp = biomes(&p.grid(), b, tag::BIOME);
    rec.biomes(
        &r.heights,
        &table,
        &r.biome_index,
        &r.roughness,
        &r.sandiness,
        &bp,
    )
}

fn stage_shaping(run: &mut Run) -> Result<(), GpuError> {
    let (gpu, p) = (run.gpu, run.p);
    let (rec, r) = run.parts();
    let lut = gpu.storage_init("lut", bytemuck::cast_slice(&p.shaping_curve));
    rec.shaping(&r.heights, &lut, p.shaping_curve.len())
}

fn stage_mask(run: &mut Run) -> Result<(), GpuError> {
    let (gpu, p) = (run.gpu, run.p);
    let (rec, r) = run.parts();
    if !uses_legacy_mask(p) {
        // Every other outline (shapes, gaussian-following, drawn masks) is computed on the CPU
        // (`island_core::shape::shape_mask`, a few ms) and uploaded: the GPU island is the CPU
        // one.
        let mask = island_core::shape::shape_mask(p).map_err(GpuError::Invalid)?;
        let m: Vec<u32> = mask.iter().map(|&v| v as u32).collect();
        let staging = gpu.storage_init("shape_mask", bytemuck::cast_slice(&m));
        rec.enc
            .copy_buffer_to_buffer(&staging, 0, &r.mask, 0, (m.len() * 4) as u64);
        return Ok(());
    }
    let mp = mask(&p.mask, border_margin(p), tag::MASK);
    rec.mask(&r.mask, &mp)
}

/// Whether the island's outline is the ROUND deformed circle the `island_mask.wgsl` pass
/// computes (ROUND without a land fraction, no drawn mask, not following gaussian islands).
fn uses_legacy_mask(p: &IslandParams) -> bool {
    // A sculpt layer may redraw the coast: its outline comes from the CPU too.
    p.coast_mask.is_none()
        && p.sculpt.is_none()
        && !island_core::shape::gaussian_follows(p)
        && p.shape.shape == island_core::params::IslandShape::Round
        && p.shape.land_fraction == 0.0
}

fn stage_distance(run: &mut Run) -> Result<(), GpuError> {
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
    match smooth_distance(p.spacing(), &p.coast) {
        Some(sp) => rec.smooth_distance(&r.distance, &r.edt_s, &r.edt_t, &sp),
        None => Ok(()),
    }
}

/// Uniforms of the coast smoothing (`None`: the blur is narrower than a sample).
pub(crate) fn smooth_distance(spacing: f32, c: &CoastParams) -> Option<u::SmoothDistance> {
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

fn stage_coast(run: &mut Run) -> Result<(), GpuError> {
    let p = run.p;
    let (rec, r) = run.parts();
    let c = &p.coast;
    let np = noise_fbm(&p.grid(), &c.fine_noise(), tag::FINE);
    rec.fbm(&r.fine_noise, &np)?;
    rec.coast(
        &r.heights,
        &r.distance,
        &r.fine_noise,
        &r.roughness,
        &coast(p.max_height, c),
    )
}

fn stage_river(run: &mut Run) -> Result<(), GpuError> {
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

/// Erosion on the GPU (`erosion.wgsl`, the Priority-Flood of each step on the CPU); on the CPU
/// when the evolution grid does not fit the adapter's storage bindings.
fn stage_erosion(run: &mut Run) -> Result<(), GpuError> {
    let (gpu, p) = (run.gpu, run.p);
    // As island_core::pipeline::erosion_stage: the island's settings, sea level 0.
    let settings = island_core::erosion::ErosionSettings {
        sea_level: 0.0,
        ..p.erosion.clone()
    };
    let nc = (settings.resolution.clamp(33, 4097) as usize).min(p.resolution as usize);
    let (rec, r) = run.parts();
    // A sculpted island erodes on the CPU (`erosion_stage` applies the edits and holds the
    // edited samples).
    if crate::erosion::fits(rec, nc) && p.sculpt.is_none() {
        let volcano = island_core::shape::has_volcano(p);
        let relief = island_core::shape::has_relief(p);
        let bytes = (r.n * r.n * 4) as u64;
        // The VOLCANIC cone before the erosion and its crater after it, on the CPU (as in
        // erosion_stage).
        let on_cpu = |rec: &mut Rec, f: fn(&IslandParams, &mut [f32])| {
            rec.flush()?;
            let mut parts = gpu.read_back(&[(&r.heights, bytes)], Some(&r.staging))?;
            let mut heights = f32s(&parts.pop().expect("1 part"));
            f(p, &mut heights);
            gpu.upload(&r.heights, 0, bytemuck::cast_slice(&heights));
            Ok::<(), GpuError>(())
        };
        if relief {
            on_cpu(rec, island_core::shape::apply_relief)?;
        }
        crate::erosion::erode(rec, &r.heights, p.spacing(), &settings, p.seed, None)?;
        if volcano {
            on_cpu(rec, island_core::shape::dig_crater)?;
        }
        return Ok(());
    }
    let bytes = (r.n * r.n * 4) as u64;
    rec.flush()?;
    let mut parts = gpu.read_back(&[(&r.heights, bytes)], Some(&r.staging))?;
    let mut heights = f32s(&parts.pop().expect("1 part"));
    erosion_stage(p, &mut heights);
    gpu.upload(&r.heights, 0, bytemuck::cast_slice(&heights));
    Ok(())
}

/// Drainage, lakes and river carving (`island_core::pipeline::drainage_stage`): the dams on
/// the CPU (a greedy choice of sites on a coarse grid), the drainage and the carving on the GPU
/// ([`crate::drainage`], [`crate::channels`], bit-identical to the core's), the water map on
/// the CPU from the read-back drainage and carved heights. The heights stay on the GPU for the
/// normals and splat.
fn stage_drainage(run: &mut Run) -> Result<(), GpuError> {
    let (gpu, p) = (run.gpu, run.p);
    let (rec, r) = run.parts();
    let n = r.n;
    let spacing = p.spacing();
    let bytes = (n * n * 4) as u64;
    rec.flush()?;
    let mut parts = gpu.read_back(&[(&r.heights, bytes)], Some(&r.staging))?;
    let mut heights = f32s(&parts.pop().expect("1 part"));
    if p.sculpt.is_some() {
        // A sculpted island drains on the CPU (`drainage_stage` holds the edited samples).
        run.hydro = Some(island_core::pipeline::drainage_stage(p, &mut heights));
        let (_, r) = run.parts();
        gpu.upload(&r.heights, 0, bytemuck::cast_slice(&heights));
        return Ok(());
    }
    if !dig_lake_basins(&mut heights, n, spacing, 0.0, &p.basins, p.seed).is_empty() {
        gpu.upload(&r.heights, 0, bytemuck::cast_slice(&heights));
    }
    if !crate::depression::fits(gpu, n) {
        // The depression passes' 8-byte-per-sample buffer does not fit the adapter's storage
        // bindings (4097² on a 128 MiB limit): the drainage on the CPU (the same result).
        run.hydro = Some(cpu_drainage_rest(p, &mut heights));
        let (_, r) = run.parts();
        gpu.upload(&r.heights, 0, bytemuck::cast_slice(&heights));
        return Ok(());
    }
    let b = DrainageBufs::new(rec, n);
    let d = match rec.drainage(&b, &r.heights, spacing, 0.0, &p.drainage) {
        Ok((d, _)) => d,
        // More lakes than the GPU lists: all of it on the CPU (the same result).
        Err(GpuError::TooLarge(_)) => {
            run.hydro = Some(cpu_drainage_rest(p, &mut heights));
            let (_, r) = run.parts();
            gpu.upload(&r.heights, 0, bytemuck::cast_slice(&heights));
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let (input, scratch) = b.carve_io(&d);
    rec.carve_rivers(&r.heights, &input, &scratch, &carve_settings(p))?;
    rec.flush()?;
    let mut parts = gpu.read_back(&[(&r.heights, bytes)], Some(&r.staging))?;
    let heights = f32s(&parts.pop().expect("1 part"));
    run.hydro = Some(hydrology(p, &heights, &d));
    Ok(())
}

/// The drainage stage after the dams on the CPU (`heights` dammed).
fn cpu_drainage_rest(p: &IslandParams, heights: &mut [f32]) -> Hydrology {
    let (n, spacing) = (p.resolution as usize, p.spacing());
    let d = drainage(heights, n, spacing, 0.0, &p.drainage);
    island_core::channels::carve_rivers(heights, &d, &carve_settings(p));
    hydrology(p, heights, &d)
}

fn stage_normals(run: &mut Run) -> Result<(), GpuError> {
    let (rec, r) = run.parts();
    rec.normals(&r.heights, &r.normal_x, &r.normal_y, &r.normal_z)
}

fn stage_splat(run: &mut Run) -> Result<(), GpuError> {
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
    let (mask, any) = crate::wetness::inland_mask(water);
    if p.splat.wetness.clamp(0.0, 1.0) == 0.0 || !any {
        return Ok(());
    }
    let gpu = run.gpu;
    let (rec, r) = run.parts();
    rec.flush()?;
    let w = &r.splat_w;
    gpu.upload(&w[0], 0, bytemuck::cast_slice(&mask));
    let scratch = crate::wetness::WetScratch {
        mask: &w[0],
        g: &w[1],
        s: &w[2],
        t: &w[3],
        flags: &r.edt_flags,
        dist: &r.blur_tmp,
    };
    rec.apply_wetness(&r.packed_splat, &r.heights, &r.normal_y, &scratch, &p.splat)
}

fn stage_readback(run: &mut Run) -> Result<(), GpuError> {
    let gpu = run.gpu;
    let (_, r) = run.parts();
    let bytes = (r.n * r.n * 4) as u64;
    let mut parts = gpu.read_back(
        &[
            (&r.heights, bytes),
            (&r.biome_index, bytes),
            (&r.packed_splat, bytes),
        ],
        Some(&r.staging),
    )?;
    // Other generations may use the buffers from here on.
    run.res = None;
    let splat_bytes = parts.pop().expect("3 parts");
    let biome_bytes = parts.pop().expect("3 parts");
    run.heights = f32s(&parts.pop().expect("3 parts"));
    run.biomes = biome_bytes.chunks_exact(4).map(|c| c[0]).collect();
    run.splat = splat_bytes
        .chunks_exact(4)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect();
    Ok(())
}

fn stage_heightfield(run: &mut Run) -> Result<(), GpuError> {
    let p = run.p;
    let heights = std::mem::take(&mut run.heights);
    run.field = Some(Heightfield::new(
        p.resolution as usize,
        p.world_size,
        heights,
    ));
    Ok(())
}

fn stage_stats(run: &mut Run) -> Result<(), GpuError> {
    let field = run.field.as_ref().expect("heightfield stage ran");
    let (min_height, max_height) = min_max(&field.heights);
    let land = field.heights.iter().filter(|&&h| h > 0.0).count();
    run.stats = (
        land as f32 / field.heights.len() as f32,
        min_height,
        max_height,
    );
    Ok(())
}

/// The whole pipeline on the GPU (parameters already validated).
pub(crate) fn run(
    gpu: &Gpu,
    p: &IslandParams,
    progress: &mut dyn FnMut(f32, &str),
    cancel: &AtomicBool,
) -> Result<Island, GpuError> {
    let t_all = Instant::now();
    let n = p.resolution as usize;
    let mut cache = crate::ctx::lock(&gpu.cache);
    if cache.as_ref().map(|r| r.n) != Some(n) {
        *cache = None; // free the old size first
        *cache = Some(Resources::new(gpu, n)?);
    }
    let mut run = Run {
        gpu,
        p,
        rec: Rec::new(gpu, &u::Grid::new(n, p.world_size, p.seed)),
        res: Some(cache),
        heights: Vec::new(),
        biomes: Vec::new(),
        splat: Vec::new(),
        field: None,
        stats: (0.0, 0.0, 0.0),
        hydro: None,
    };
    let fail_at = crate::ctx::lock(&crate::FAIL_AT).clone();
    let mut stage_ms: Vec<(String, f64)> = Vec::new();
    for (k, stage) in STAGES.iter().enumerate() {
        let t = Instant::now();
        (stage.run)(&mut run)?;
        if stage.gpu {
            if fail_at.as_deref() == Some(stage.name) {
                // Test hook: a real wgpu validation error (a mappable storage buffer is invalid).
                let _ = gpu.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("injected failure"),
                    size: 16,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::STORAGE,
                    mapped_at_creation: false,
                });
            }
            run.rec.flush()?;
        }
        stage_ms.push((stage.name.to_string(), t.elapsed().as_secs_f64() * 1e3));
        progress((k + 1) as f32 / STAGES.len() as f32, stage.name);
        if stage.gpu && cancel.load(Ordering::Relaxed) {
            return Err(GpuError::Cancelled);
        }
    }
    let (land_fraction, min_height, max_height) = run.stats;
    let field = run.field.take().expect("heightfield stage ran");
    let Hydrology { water, stats: hs } = run.hydro.take().expect("drainage stage ran");
    // Wetness ran on the GPU in the splat stage.
    let splat = std::mem::take(&mut run.splat);
    Ok(Island {
        params: p.clone(),
        water,
        field,
        biomes: std::mem::take(&mut run.biomes),
        splat,
        stats: hs.apply(Stats {
            land_fraction,
            min_height,
            max_height,
            stage_ms,
            total_ms: t_all.elapsed().as_secs_f64() * 1e3,
            backend: "gpu".into(),
            ..Default::default()
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage_index(name: &str) -> usize {
        GPU_STAGES
            .iter()
            .position(|s| *s == name)
            .unwrap_or_else(|| panic!("no stage {name}"))
    }

    /// Roles sharing a plane are never live in the same stage; every role names real stages.
    #[test]
    fn plane_roles_never_overlap() {
        for (i, a) in ROLES.iter().enumerate() {
            let (a0, a1) = (stage_index(a.from), stage_index(a.to));
            assert!(a0 <= a1, "{}", a.name);
            assert!(a.plane < PLANES || a.plane == usize::MAX, "{}", a.name);
            for b in &ROLES[i + 1..] {
                assert_ne!(a.name, b.name);
                if a.plane != b.plane || a.plane == usize::MAX {
                    continue;
                }
                let (b0, b1) = (stage_index(b.from), stage_index(b.to));
                assert!(
                    a1 < b0 || b1 < a0,
                    "{} ({}..{}) and {} ({}..{}) share plane {}",
                    a.name,
                    a.from,
                    a.to,
                    b.name,
                    b.from,
                    b.to,
                    a.plane
                );
            }
        }
        for k in 0..PLANES {
            assert!(ROLES.iter().any(|r| r.plane == k), "plane {k} unused");
        }
    }

    /// The GPU stages are the core's stages (same names, same order) up to `splat`, then the
    /// read-back and the CPU-side heightfield and statistics.
    #[test]
    fn stages_follow_the_core() {
        let core = island_core::pipeline::STAGES;
        let gpu_only = ["readback", "heightfield"];
        let shared: Vec<&str> = GPU_STAGES
            .iter()
            .copied()
            .filter(|s| !gpu_only.contains(s))
            .collect();
        assert_eq!(shared, core.to_vec());
        for s in &STAGES {
            assert_eq!(
                s.gpu,
                stage_index(s.name) < stage_index("readback"),
                "{}",
                s.name
            );
        }
    }
}

#[cfg(test)]
mod binding_checks {
    use super::*;

    /// A dispatch whose buffers do not match the shader's bindings (wrong name, wrong access,
    /// missing, extra, wrong uniform type) is an error, recorded nothing.
    #[test]
    fn mismatched_bindings_are_errors() {
        let gpu = match crate::ctx::gpu() {
            Ok(g) => g,
            Err(e) => {
                if std::env::var("ISLAND_REQUIRE_GPU").is_ok_and(|v| v == "1") {
                    panic!("ISLAND_REQUIRE_GPU=1 but no GPU adapter ({e})");
                }
                println!("SKIPPED: mismatched_bindings_are_errors: {e}");
                return;
            }
        };
        let n = 17;
        let mut rec = Rec::new(&gpu, &u::Grid::new(n, 1.0, 0));
        let a = gpu.storage("a", (n * n * 4) as u64);
        let b = gpu.storage("b", (n * n * 4) as u64);
        let p = &gpu.pipes;
        let det = u::Detail {
            strength: 1.0,
            cap: 1.0,
        };
        let cases: Vec<(&str, Result<(), GpuError>)> = vec![
            (
                "wrong name",
                rec.pass(&p.detail)
                    .params(&det)
                    .read("detail", &b)
                    .read_write("heights", &a)
                    .run(grid2(n)),
            ),
            (
                "read given as read_write",
                rec.pass(&p.detail)
                    .params(&det)
                    .read_write("detail", &b)
                    .read_write("base", &a)
                    .run(grid2(n)),
            ),
            (
                "missing buffer",
                rec.pass(&p.detail)
                    .params(&det)
                    .read_write("base", &a)
                    .run(grid2(n)),
            ),
            (
                "missing params",
                rec.pass(&p.detail)
                    .read("detail", &b)
                    .read_write("base", &a)
                    .run(grid2(n)),
            ),
            (
                "wrong params type",
                rec.pass(&p.detail)
                    .params(&u::Shaping { lut_len: 2 })
                    .read("detail", &b)
                    .read_write("base", &a)
                    .run(grid2(n)),
            ),
            (
                "params not used",
                rec.pass(&p.normals)
                    .params(&det)
                    .read("heights", &a)
                    .write("normal_x", &b)
                    .write("normal_y", &b)
                    .write("normal_z", &b)
                    .run(grid2(n)),
            ),
        ];
        for (what, r) in cases {
            match r {
                Err(GpuError::Wgpu(e)) => println!("{what}: {e}"),
                r => panic!("{what}: expected a binding error, got {r:?}"),
            }
        }
        rec.pass(&p.detail)
            .params(&det)
            .read("detail", &b)
            .read_write("base", &a)
            .run(grid2(n))
            .expect("matching bindings");
        rec.flush().expect("nothing invalid was recorded");
    }
}
