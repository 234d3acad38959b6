//! Recording of every GPU stage, and the whole pipeline in `island_core::pipeline` order.

use crate::ctx::{grid2, Dispatch, Frame, Globals, Gpu};
use crate::GpuError;
use island_core::diamond_square::level_amplitude;
use island_core::gaussian_islands::gaussian_mountains;
use island_core::grid::min_max;
use island_core::hash::tag;
use island_core::heightfield::Heightfield;
use island_core::params::{Algorithm, Biome, IslandParams};
use island_core::pipeline::{border_margin, Island, Stats};
use island_core::river::{river_control_points, river_polyline};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Wavelength of the splat threshold jitter, metres (`island_core::splat`'s jitter noise).
const SPLAT_JITTER_SCALE: f32 = 40.0;

/// Samples one normalisation workgroup reduces (matches `PER_GROUP` in normalize_01.wgsl).
const NORM_PER_GROUP: usize = 4096;

/// Buffers of one resolution, reused between runs. Every per-sample buffer holds 4 bytes per
/// sample (software adapters cap one storage binding at 128 MiB).
pub(crate) struct Resources {
    pub n: usize,
    /// Base relief → land01 → heights (metres).
    h: wgpu::Buffer,
    /// Detail noise; EDT column distances; fine noise; splat weight 0.
    tmp: wgpu::Buffer,
    bidx: wgpu::Buffer,
    /// Biome roughness; splat weight 1.
    rough: wgpu::Buffer,
    sand: wgpu::Buffer,
    /// Land mask; the packed splat.
    mask: wgpu::Buffer,
    /// Signed distance; splat weight 2.
    dist: wgpu::Buffer,
    /// EDT scratch s; normal x; splat weight 3.
    e1: wgpu::Buffer,
    /// EDT scratch t; normal y.
    e2: wgpu::Buffer,
    /// Normal z; splat blur scratch.
    e3: wgpu::Buffer,
    partial: wgpu::Buffer,
    river_rows: wgpu::Buffer,
    minmax: wgpu::Buffer,
    flags: wgpu::Buffer,
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
        let f = |l: &str| gpu.storage(l, plane);
        Ok(Resources {
            n,
            h: f("heights"),
            tmp: f("tmp"),
            bidx: f("biome_index"),
            rough: f("roughness"),
            sand: f("sandiness"),
            mask: f("mask"),
            dist: f("distance"),
            e1: f("e1"),
            e2: f("e2"),
            e3: f("e3"),
            partial: gpu.storage("partial", (n * n).div_ceil(NORM_PER_GROUP) as u64 * 8),
            river_rows: gpu.storage("river_rows", n as u64 * 32),
            minmax: gpu.storage("minmax", 16),
            flags: gpu.storage("flags", 16),
            staging: gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("staging"),
                size: nn * 12,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
        })
    }
}

/// Global uniforms of a whole generation.
pub(crate) fn globals(p: &IslandParams) -> Globals {
    let n = p.resolution as usize;
    let mut g = Globals::grid(n, p.world_size, p.seed);
    g.max_height = p.max_height;
    g.detail_strength = p.detail.strength;
    g.detail_cap = p.detail.cap;
    g.ridge = p.diamond_square.ridge as u32;
    set_biomes(
        &mut g,
        p.world_size,
        p.biomes.grid,
        p.biomes.distortion,
        p.biomes.boundary_noise,
        p.biomes.blend_width,
        &p.biomes.biomes,
    );
    g.lut_len = p.shaping_curve.len() as u32;
    g.mask_radius = p.mask.radius;
    g.mask_amp = island_core::mask::MASK_DEFORMATION * (1.0 - p.mask.roundness);
    g.mask_noise_scale = p.mask.noise_scale;
    g.mask_margin = border_margin(p);
    set_coast(&mut g, p.max_height, &p.coast);
    let r = &p.river;
    set_river(&mut g, r.width, r.bank, r.depth, r.meander, r.meander_scale);
    g.river_points = (island_core::river::RIVER_SEGMENTS + 1) as u32;
    set_splat(&mut g, p.max_height, &p.splat);
    g
}

pub(crate) fn set_biomes(
    g: &mut Globals,
    world: f32,
    grid: u32,
    distortion: f32,
    boundary_noise: f32,
    blend_width: f32,
    b: &[Biome],
) {
    g.biome_grid = grid;
    g.biome_cell = world / grid as f32;
    g.biome_distortion = distortion;
    g.boundary_noise = boundary_noise;
    g.blend_width = blend_width;
    g.biome_count = b.len() as u32;
}

pub(crate) fn set_coast(g: &mut Globals, max_height: f32, c: &island_core::params::CoastParams) {
    g.max_height = max_height;
    g.coast_width = c.coast_width;
    g.beach_height = c.beach_height;
    g.shelf_width = c.shelf_width;
    g.sea_depth = c.sea_depth;
    g.fine_amplitude = c.fine_amplitude;
}

pub(crate) fn set_river(
    g: &mut Globals,
    width: f32,
    bank: f32,
    depth: f32,
    meander: f32,
    meander_scale: f32,
) {
    g.river_width = width;
    g.river_bank = bank;
    g.river_depth = depth;
    g.river_meander = meander;
    g.river_meander_scale = meander_scale;
}

pub(crate) fn set_splat(g: &mut Globals, max_height: f32, s: &island_core::params::SplatParams) {
    g.max_height = max_height;
    g.sand_height = s.sand_height;
    g.snow_height = s.snow_height;
    g.splat_jitter = s.jitter;
    g.rock_slope = s.rock_slope;
    g.blur_passes = s.blur_passes;
}

pub(crate) fn biome_table(b: &[Biome]) -> Vec<[f32; 4]> {
    b.iter()
        .map(|b| [b.height_scale, b.exponent, b.roughness, b.sandiness])
        .collect()
}

pub(crate) fn mountains_data(
    world: f32,
    cells: u32,
    density: f32,
    separation: f32,
    seed: u64,
    tg: u32,
) -> Vec<[f32; 4]> {
    gaussian_mountains(world, cells, density, separation, seed, tg)
        .iter()
        .map(|m| [m.x, m.z, m.radius, m.amplitude])
        .collect()
}

/// The river polyline; the shader handles at most 128 segments (a 128-bit row mask).
pub(crate) fn river_line(world: f32, seed: u64, tg: u32) -> Result<Vec<[f32; 2]>, GpuError> {
    let line = river_polyline(&river_control_points(world, seed, tg));
    if line.len() > 129 {
        return Err(GpuError::TooLarge(format!(
            "river polyline has {} points; the GPU pass handles 129",
            line.len()
        )));
    }
    Ok(line)
}

/// Records stages into one command encoder.
pub(crate) struct Rec<'f, 'g> {
    pub gpu: &'g Gpu,
    pub fr: &'f mut Frame<'g>,
    pub enc: wgpu::CommandEncoder,
    pub n: usize,
    pub world_size: f32,
}

type B<'a> = Option<&'a wgpu::Buffer>;

impl<'f, 'g> Rec<'f, 'g> {
    pub fn new(gpu: &'g Gpu, fr: &'f mut Frame<'g>, n: usize, world_size: f32) -> Self {
        Rec {
            gpu,
            fr,
            enc: gpu.encoder(),
            n,
            world_size,
        }
    }

    /// Noise step per sample for a wavelength of `scale` metres (as `fbm_noise` computes it).
    fn gpu_world_step(&self, scale: f32) -> f32 {
        self.world_size / (self.n - 1) as f32 / scale
    }

    fn go(
        &mut self,
        pipe: &wgpu::ComputePipeline,
        d: Dispatch,
        bufs: &[B<'_>],
        groups: (u32, u32, u32),
    ) -> Result<(), GpuError> {
        self.fr.dispatch(&mut self.enc, pipe, d, bufs, groups)
    }

    /// Submit what was recorded and wait; start a new encoder.
    pub fn flush(&mut self) -> Result<(), GpuError> {
        let enc = std::mem::replace(&mut self.enc, self.gpu.encoder());
        self.gpu.submit_wait(enc)
    }

    #[allow(clippy::too_many_arguments)]
    pub fn fbm(
        &mut self,
        out: &wgpu::Buffer,
        world: f32,
        scale: f32,
        octaves: u32,
        lacunarity: f32,
        persistence: f32,
        tg: u32,
    ) -> Result<(), GpuError> {
        let step = world / (self.n - 1) as f32 / scale;
        let d = Dispatch {
            step,
            lacunarity,
            persistence,
            octaves,
            tag: tg,
            ..Default::default()
        };
        self.go(&self.gpu.pipes.fbm, d, &[Some(out)], grid2(self.n))
    }

    pub fn value(
        &mut self,
        out: &wgpu::Buffer,
        world: f32,
        scale: f32,
        octaves: u32,
        persistence: f32,
        tg: u32,
    ) -> Result<(), GpuError> {
        let step = world / (self.n - 1) as f32 / scale;
        let d = Dispatch {
            step,
            persistence,
            octaves,
            tag: tg,
            ..Default::default()
        };
        self.go(&self.gpu.pipes.value, d, &[Some(out)], grid2(self.n))
    }

    /// Diamond-square (the ridge flag is in the globals).
    pub fn diamond_square(
        &mut self,
        out: &wgpu::Buffer,
        roughness: f32,
        tg: u32,
    ) -> Result<(), GpuError> {
        let n = self.n;
        let p = &self.gpu.pipes;
        self.go(
            &p.ds_corners,
            Dispatch {
                tag: tg,
                ..Default::default()
            },
            &[Some(out)],
            (1, 1, 1),
        )?;
        let mut step = n - 1;
        while step > 1 {
            let half = step / 2;
            let amp = level_amplitude(n, half, roughness);
            let cnt = ((n - 1) / step) as u32;
            let d = Dispatch {
                amp,
                tag: tg,
                level: step as u32,
                ..Default::default()
            };
            self.go(
                &p.ds_diamond,
                d,
                &[Some(out)],
                (cnt.div_ceil(8), cnt.div_ceil(8), 1),
            )?;
            let rows = ((n - 1) / half + 1) as u32;
            let d = Dispatch {
                amp: amp * roughness,
                tag: tg,
                level: step as u32,
                ..Default::default()
            };
            self.go(
                &p.ds_square,
                d,
                &[Some(out)],
                ((cnt + 1).div_ceil(8), rows.div_ceil(8), 1),
            )?;
            step = half;
        }
        Ok(())
    }

    pub fn gaussian(
        &mut self,
        out: &wgpu::Buffer,
        mountains: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        self.go(
            &self.gpu.pipes.gaussian,
            Dispatch::default(),
            &[Some(out), Some(mountains)],
            grid2(self.n),
        )
    }

    pub fn normalize(
        &mut self,
        data: &wgpu::Buffer,
        partial: &wgpu::Buffer,
        minmax: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let nn = self.n * self.n;
        let groups = nn.div_ceil(NORM_PER_GROUP) as u32;
        let p = &self.gpu.pipes;
        let bufs = [Some(data), Some(partial), Some(minmax)];
        self.go(&p.norm_partial, Dispatch::default(), &bufs, (groups, 1, 1))?;
        self.go(
            &p.norm_final,
            Dispatch {
                level: groups,
                ..Default::default()
            },
            &bufs,
            (1, 1, 1),
        )?;
        let wgs = nn.div_ceil(256) as u32;
        let gx = wgs.min(32768);
        self.go(
            &p.norm_apply,
            Dispatch::default(),
            &bufs,
            (gx, wgs.div_ceil(gx), 1),
        )
    }

    pub fn detail(&mut self, base: &wgpu::Buffer, detail: &wgpu::Buffer) -> Result<(), GpuError> {
        self.go(
            &self.gpu.pipes.detail,
            Dispatch::default(),
            &[Some(base), Some(detail)],
            grid2(self.n),
        )
    }

    #[allow(clippy::too_many_arguments)]
    pub fn biomes(
        &mut self,
        base: &wgpu::Buffer,
        index: &wgpu::Buffer,
        rough: &wgpu::Buffer,
        sand: &wgpu::Buffer,
        table: &wgpu::Buffer,
        grid: u32,
        tg: u32,
    ) -> Result<(), GpuError> {
        // Warp noise step per sample, as island_core::biomes::biome_blend computes it.
        let spacing = self.world_size / (self.n - 1) as f32;
        let cell = self.world_size / grid as f32;
        let d = Dispatch {
            tag: tg,
            step: spacing / cell,
            ..Default::default()
        };
        self.go(
            &self.gpu.pipes.biome,
            d,
            &[
                Some(base),
                Some(index),
                Some(rough),
                Some(sand),
                Some(table),
            ],
            grid2(self.n),
        )
    }

    pub fn shaping(&mut self, heights: &wgpu::Buffer, lut: &wgpu::Buffer) -> Result<(), GpuError> {
        self.go(
            &self.gpu.pipes.shaping,
            Dispatch::default(),
            &[Some(heights), Some(lut)],
            grid2(self.n),
        )
    }

    pub fn mask(&mut self, mask: &wgpu::Buffer, tg: u32) -> Result<(), GpuError> {
        self.go(
            &self.gpu.pipes.mask,
            Dispatch {
                tag: tg,
                ..Default::default()
            },
            &[Some(mask)],
            grid2(self.n),
        )
    }

    /// Exact signed distance; `g`, `s`, `t` are scratch buffers of at least n² i32.
    #[allow(clippy::too_many_arguments)]
    pub fn distance(
        &mut self,
        mask: &wgpu::Buffer,
        g: &wgpu::Buffer,
        s: &wgpu::Buffer,
        t: &wgpu::Buffer,
        dist: &wgpu::Buffer,
        flags: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        self.enc.clear_buffer(flags, 0, None);
        let lines = (self.n as u32).div_ceil(64);
        let p = &self.gpu.pipes;
        for which in 0..2 {
            let d = Dispatch {
                which,
                ..Default::default()
            };
            let bufs = [
                Some(mask),
                Some(g),
                Some(s),
                Some(t),
                Some(dist),
                Some(flags),
            ];
            self.go(&p.edt_columns, d, &bufs, (lines, 1, 1))?;
            self.go(&p.edt_rows, d, &bufs, (lines, 1, 1))?;
        }
        Ok(())
    }

    pub fn coast(
        &mut self,
        land01: &wgpu::Buffer,
        dist: &wgpu::Buffer,
        fine: &wgpu::Buffer,
        rough: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        self.go(
            &self.gpu.pipes.coast,
            Dispatch::default(),
            &[Some(land01), Some(dist), Some(fine), Some(rough)],
            grid2(self.n),
        )
    }

    /// River carving; `rows` is scratch of at least 32 bytes per row.
    pub fn river(
        &mut self,
        heights: &wgpu::Buffer,
        line: &wgpu::Buffer,
        rows: &wgpu::Buffer,
        tg: u32,
    ) -> Result<(), GpuError> {
        let d = Dispatch {
            tag: tg,
            ..Default::default()
        };
        let bufs = [Some(heights), Some(line), Some(rows)];
        self.go(
            &self.gpu.pipes.river_rows,
            d,
            &bufs,
            ((self.n as u32).div_ceil(64), 1, 1),
        )?;
        self.go(&self.gpu.pipes.river, d, &bufs, grid2(self.n))
    }

    /// Normals as three planes.
    pub fn normals(
        &mut self,
        heights: &wgpu::Buffer,
        nx: &wgpu::Buffer,
        ny: &wgpu::Buffer,
        nz: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        self.go(
            &self.gpu.pipes.normals,
            Dispatch::default(),
            &[Some(heights), Some(nx), Some(ny), Some(nz)],
            grid2(self.n),
        )
    }

    /// Splat weights into the planes `w`, blur passes through `wtmp`, packed RGBA8 into `packed`.
    #[allow(clippy::too_many_arguments)]
    pub fn splat(
        &mut self,
        heights: &wgpu::Buffer,
        ny: &wgpu::Buffer,
        sand: &wgpu::Buffer,
        w: [&wgpu::Buffer; 4],
        wtmp: &wgpu::Buffer,
        packed: &wgpu::Buffer,
        blur_passes: u32,
        tg: u32,
    ) -> Result<(), GpuError> {
        let p = &self.gpu.pipes;
        let step = self.gpu_world_step(SPLAT_JITTER_SCALE);
        let d = Dispatch {
            tag: tg,
            step,
            ..Default::default()
        };
        let planes = [Some(w[0]), Some(w[1]), Some(w[2]), Some(w[3]), Some(wtmp)];
        self.go(
            &p.splat_weights,
            d,
            &[
                Some(heights),
                Some(ny),
                Some(sand),
                planes[0],
                planes[1],
                planes[2],
                planes[3],
            ],
            grid2(self.n),
        )?;
        for _ in 0..blur_passes {
            for channel in 0..4 {
                for which in 0..2 {
                    let d = Dispatch {
                        which,
                        level: channel,
                        ..Default::default()
                    };
                    self.go(
                        &p.splat_blur,
                        d,
                        &[
                            None, None, None, planes[0], planes[1], planes[2], planes[3], planes[4],
                        ],
                        grid2(self.n),
                    )?;
                }
            }
        }
        self.go(
            &p.splat_quantize,
            Dispatch::default(),
            &[
                None,
                Some(packed),
                None,
                planes[0],
                planes[1],
                planes[2],
                planes[3],
            ],
            grid2(self.n),
        )
    }
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

/// The whole pipeline on the GPU (parameters already validated).
/// Stage names reported by the GPU pipeline (progress and `Stats::stage_ms`), in order.
pub const GPU_STAGES: [&str; 13] = [
    "base",
    "detail",
    "biomes",
    "shaping",
    "mask",
    "distance",
    "coast",
    "river",
    "normals",
    "splat",
    "readback",
    "heightfield",
    "stats",
];

pub(crate) fn run(
    gpu: &Gpu,
    p: &IslandParams,
    progress: &mut dyn FnMut(f32, &str),
    cancel: &AtomicBool,
) -> Result<Island, GpuError> {
    let t_all = Instant::now();
    let n = p.resolution as usize;
    let nn = n * n;
    let mut cache = crate::ctx::lock(&gpu.cache);
    if cache.as_ref().map(|r| r.n) != Some(n) {
        *cache = None; // free the old size first
        *cache = Some(Resources::new(gpu, n)?);
    }
    let r = cache.as_ref().expect("just created");
    let mut g = globals(p);
    let mountains = match p.algorithm {
        Algorithm::GaussianIslands => {
            let gs = &p.gaussian;
            mountains_data(
                p.world_size,
                gs.cells,
                gs.density,
                gs.separation,
                p.seed,
                tag::BASE,
            )
        }
        _ => Vec::new(),
    };
    g.mountain_count = mountains.len() as u32;
    let mut fr = Frame::new(gpu, &g);
    let mut rec = Rec::new(gpu, &mut fr, n, p.world_size);
    let mut stage_ms: Vec<(String, f64)> = Vec::new();
    let mut t = Instant::now();
    let fail_at = crate::ctx::lock(&crate::FAIL_AT).clone();
    let mut done = |rec: &mut Rec, name: &str, t: &mut Instant| -> Result<(), GpuError> {
        if fail_at.as_deref() == Some(name) {
            // Test hook: a real wgpu validation error (a mappable storage buffer is invalid).
            let _ = gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("injected failure"),
                size: 16,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            });
        }
        rec.flush()?;
        stage_ms.push((name.to_string(), t.elapsed().as_secs_f64() * 1e3));
        progress(stage_ms.len() as f32 / GPU_STAGES.len() as f32, name);
        *t = Instant::now();
        if cancel.load(Ordering::Relaxed) {
            return Err(GpuError::Cancelled);
        }
        Ok(())
    };

    match p.algorithm {
        Algorithm::Fbm => {
            let f = &p.fbm;
            rec.fbm(
                &r.h,
                p.world_size,
                f.scale,
                f.octaves,
                f.lacunarity,
                f.persistence,
                tag::BASE,
            )?
        }
        Algorithm::ValueNoise => {
            let v = &p.value_noise;
            rec.value(
                &r.h,
                p.world_size,
                v.scale,
                v.octaves,
                v.persistence,
                tag::BASE,
            )?
        }
        Algorithm::DiamondSquare => {
            rec.diamond_square(&r.h, p.diamond_square.roughness, tag::BASE)?
        }
        Algorithm::GaussianIslands => {
            let mb = gpu.storage_init("mountains", bytemuck::cast_slice(&mountains));
            rec.gaussian(&r.h, &mb)?;
        }
    }
    rec.normalize(&r.h, &r.partial, &r.minmax)?;
    done(&mut rec, "base", &mut t)?;

    if p.detail.enabled {
        rec.fbm(
            &r.tmp,
            p.world_size,
            p.detail.scale,
            p.detail.octaves,
            2.0,
            0.5,
            tag::DETAIL,
        )?;
        rec.detail(&r.h, &r.tmp)?;
    }
    done(&mut rec, "detail", &mut t)?;

    let table = gpu.storage_init(
        "biomes",
        bytemuck::cast_slice(&biome_table(&p.biomes.biomes)),
    );
    rec.biomes(
        &r.h,
        &r.bidx,
        &r.rough,
        &r.sand,
        &table,
        p.biomes.grid,
        tag::BIOME,
    )?;
    done(&mut rec, "biomes", &mut t)?;

    let lut = gpu.storage_init("lut", bytemuck::cast_slice(&p.shaping_curve));
    rec.shaping(&r.h, &lut)?;
    done(&mut rec, "shaping", &mut t)?;

    rec.mask(&r.mask, tag::MASK)?;
    done(&mut rec, "mask", &mut t)?;

    rec.distance(&r.mask, &r.tmp, &r.e1, &r.e2, &r.dist, &r.flags)?;
    done(&mut rec, "distance", &mut t)?;

    rec.fbm(
        &r.tmp,
        p.world_size,
        p.coast.fine_scale,
        3,
        2.0,
        0.5,
        tag::FINE,
    )?;
    rec.coast(&r.h, &r.dist, &r.tmp, &r.rough)?;
    done(&mut rec, "coast", &mut t)?;

    if p.river.enabled {
        let line = gpu.storage_init(
            "river",
            bytemuck::cast_slice(&river_line(p.world_size, p.seed, tag::RIVER)?),
        );
        rec.river(&r.h, &line, &r.river_rows, tag::RIVER)?;
    }
    done(&mut rec, "river", &mut t)?;

    rec.normals(&r.h, &r.e1, &r.e2, &r.e3)?;
    done(&mut rec, "normals", &mut t)?;

    rec.splat(
        &r.h,
        &r.e2,
        &r.sand,
        [&r.tmp, &r.rough, &r.dist, &r.e1],
        &r.e3,
        &r.mask,
        p.splat.blur_passes,
        tag::SPLAT,
    )?;
    done(&mut rec, "splat", &mut t)?;

    let bytes = (nn * 4) as u64;
    let mut parts = gpu.read_back(
        &[(&r.h, bytes), (&r.bidx, bytes), (&r.mask, bytes)],
        Some(&r.staging),
    )?;
    drop(cache);
    stage_ms.push(("readback".into(), t.elapsed().as_secs_f64() * 1e3));
    progress(11.0 / 13.0, "readback");
    t = Instant::now();

    let splat_bytes = parts.pop().expect("3 parts");
    let biome_bytes = parts.pop().expect("3 parts");
    let heights = f32s(&parts.pop().expect("3 parts"));
    let biomes: Vec<u8> = biome_bytes.chunks_exact(4).map(|c| c[0]).collect();
    let splat: Vec<[u8; 4]> = splat_bytes
        .chunks_exact(4)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect();
    let field = Heightfield::new(n, p.world_size, heights);
    stage_ms.push(("heightfield".into(), t.elapsed().as_secs_f64() * 1e3));
    progress(12.0 / 13.0, "heightfield");
    t = Instant::now();

    let (min_height, max_height) = min_max(&field.heights);
    let land = field.heights.iter().filter(|&&h| h > 0.0).count();
    stage_ms.push(("stats".into(), t.elapsed().as_secs_f64() * 1e3));
    progress(1.0, "stats");
    let stats = Stats {
        land_fraction: land as f32 / nn as f32,
        min_height,
        max_height,
        stage_ms,
        total_ms: t_all.elapsed().as_secs_f64() * 1e3,
        backend: "gpu".into(),
    };
    Ok(Island {
        params: p.clone(),
        field,
        biomes,
        splat,
        stats,
    })
}
