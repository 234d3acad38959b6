//! The state of one GPU generation, passed from stage to stage: the per-sample buffer planes
//! ([`ROLES`], [`Resources`]) and [`Run`].

use crate::ctx::Gpu;
use crate::error::GpuError;
use crate::recorder::Rec;
use crate::sync::lock;
use crate::uniforms::{NORM_PER_GROUP, RIVER_ROW_BYTES};
use island_core::heightfield::Heightfield;
use island_core::params::IslandParams;
use island_core::pipeline::Hydrology;
use std::any::Any;
use std::sync::{Mutex, MutexGuard};

/// A per-sample buffer role: which plane holds it and the stages from its first write to its
/// last read (inclusive). Roles whose stage ranges never overlap share a plane (a 4097² plane
/// is 64 MiB); the `plane_roles_never_overlap` test checks the ranges.
pub(crate) struct Role {
    pub name: &'static str,
    pub plane: usize,
    #[cfg_attr(not(test), allow(dead_code))]
    pub from: &'static str,
    #[cfg_attr(not(test), allow(dead_code))]
    pub to: &'static str,
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
pub(crate) const PLANES: usize = 10;

pub(crate) const ROLES: [Role; 23] = [
    role("heights", 0, "base", "readback"),
    role("detail_noise", 1, "detail", "detail"),
    role("edt_columns", 1, "distance", "distance"),
    role("fine_noise", 1, "coast", "coast"),
    role("splat_w0", 1, "splat", "splat"),
    role("biome_bytes", 1, "readback", "readback"),
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
    pub heights: wgpu::Buffer,
    pub detail_noise: wgpu::Buffer,
    pub edt_columns: wgpu::Buffer,
    pub fine_noise: wgpu::Buffer,
    pub biome_index: wgpu::Buffer,
    /// The biome index, one byte per sample (the read-back's format).
    pub biome_bytes: wgpu::Buffer,
    pub roughness: wgpu::Buffer,
    pub sandiness: wgpu::Buffer,
    pub mask: wgpu::Buffer,
    pub packed_splat: wgpu::Buffer,
    pub distance: wgpu::Buffer,
    pub edt_s: wgpu::Buffer,
    pub edt_t: wgpu::Buffer,
    pub normal_x: wgpu::Buffer,
    pub normal_y: wgpu::Buffer,
    pub normal_z: wgpu::Buffer,
    pub splat_w: [wgpu::Buffer; 4],
    pub blur_tmp: wgpu::Buffer,
    /// Per-row segment masks of the river pass.
    pub river_rows: wgpu::Buffer,
    /// Per-workgroup (min, max) of the normalisation.
    pub normalize_partials: wgpu::Buffer,
    /// The normalisation's (min, max).
    pub minmax: wgpu::Buffer,
    /// The EDT's "any feature" flags.
    pub edt_flags: wgpu::Buffer,
    /// The statistics' reduction (`stages::stats`).
    pub stats: wgpu::Buffer,
    pub staging: wgpu::Buffer,
}

impl Resources {
    pub fn new(gpu: &Gpu, n: usize) -> Result<Resources, GpuError> {
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
            biome_bytes: get("biome_bytes"),
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
            stats: gpu.storage("stats", crate::stages::stats::RESULT_BYTES),
            staging: gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("staging"),
                size: nn * 12,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
        })
    }
}

/// The cached buffer set of a resolution (`Gpu::cache`), as a generation holds it.
pub(crate) enum Held<'a> {
    /// Locked in the cache (the generation's head).
    Locked(MutexGuard<'a, Option<Box<dyn Any + Send>>>),
    /// Taken out of the cache (the generation's tail, on any thread): put back when released
    /// if no other generation filled the cache meanwhile.
    Taken {
        res: Option<Box<dyn Any + Send>>,
        cache: &'a Mutex<Option<Box<dyn Any + Send>>>,
    },
}

impl Held<'_> {
    fn resources(&self) -> Option<&Resources> {
        match self {
            Held::Locked(g) => g.as_ref(),
            Held::Taken { res, .. } => res.as_ref(),
        }
        .and_then(|r| r.downcast_ref::<Resources>())
    }

    /// The buffer set itself, out of the cache (a generation handing it to its tail).
    pub fn take(&mut self) -> Option<Box<dyn Any + Send>> {
        match self {
            Held::Locked(cache) => cache.take(),
            Held::Taken { res, .. } => res.take(),
        }
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if let Held::Taken { res, cache } = self {
            put_back(cache, res.take());
        }
    }
}

/// Put a buffer set taken out of the cache back, unless another generation filled the cache
/// meanwhile (its buffers are then the ones kept).
pub(crate) fn put_back(
    cache: &Mutex<Option<Box<dyn Any + Send>>>,
    res: Option<Box<dyn Any + Send>>,
) {
    if let Some(r) = res {
        let mut c = lock(cache);
        if c.is_none() {
            *c = Some(r);
        }
    }
}

/// State of one GPU generation, passed from stage to stage.
pub(crate) struct Run<'a> {
    pub gpu: &'a Gpu,
    pub p: &'a IslandParams,
    pub rec: Rec<'a>,
    /// The buffer set (held until the read-back, which releases it for other generations).
    pub res: Option<Held<'a>>,
    /// The final heights on the host (from the drainage stage until the tail starts the
    /// heightfield with them).
    pub heights: Vec<f32>,
    /// The heightfield (the CPU's normals of the final heights), computed on its own thread
    /// while the GPU finishes the island; joined by the heightfield stage.
    pub field_job: Option<std::thread::JoinHandle<Heightfield>>,
    pub biomes: Vec<u8>,
    pub splat: Vec<[u8; 4]>,
    pub field: Option<Heightfield>,
    /// The heights' `((min, max), count above 0)`, reduced on the GPU (`stages::stats`).
    pub height_stats: Option<((f32, f32), usize)>,
    pub stats: (f32, f32, f32),
    pub hydro: Option<Hydrology>,
}

impl<'a> Run<'a> {
    /// A generation of `p` (validated) on `gpu` with the buffers `res` of its resolution,
    /// nothing produced yet.
    pub fn new(gpu: &'a Gpu, p: &'a IslandParams, res: Held<'a>) -> Run<'a> {
        let n = p.resolution as usize;
        Run {
            gpu,
            p,
            rec: Rec::new(gpu, &crate::uniforms::Grid::new(n, p.world_size, p.seed)),
            res: Some(res),
            heights: Vec::new(),
            field_job: None,
            biomes: Vec::new(),
            splat: Vec::new(),
            field: None,
            height_stats: None,
            stats: (0.0, 0.0, 0.0),
            hydro: None,
        }
    }

    /// The recorder and the buffers.
    pub fn parts(&mut self) -> (&mut Rec<'a>, &Resources) {
        let r = self
            .res
            .as_ref()
            .and_then(|h| h.resources())
            .expect("buffers held until the read-back");
        (&mut self.rec, r)
    }
}
