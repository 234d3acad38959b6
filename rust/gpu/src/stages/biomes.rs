//! The biomes stage (`biome_blend.wgsl`): `island_core::biomes::biome_blend`.

use crate::ctx::{grid2, packed_word_groups};
use crate::error::GpuError;
use crate::passes::Entry;
use crate::recorder::{f32s, u32s, Rec};
use crate::run::Run;
use crate::stages::host::*;
use crate::uniforms::{self as u, Grid, MAX_BIOMES};
use island_core::hash::tag;
use island_core::params::*;
use island_core::Grid as CoreGrid;

/// The entry points this module dispatches (registered in `crate::shaders`).
const BIOME: Entry = Entry::new("biome_blend", "main");
const PACK_INDEX: Entry = Entry::new("biome_blend", "pack_index");

/// Record the biome index (`n²` u32 words, the recording's grid) compacted into `bytes`: one
/// byte per sample, four per word (`⌈n²/4⌉` words); the read-back's format.
pub(crate) fn pack_index(
    rec: &mut Rec,
    index: &wgpu::Buffer,
    bytes: &wgpu::Buffer,
) -> Result<(), GpuError> {
    let groups = packed_word_groups(rec.n * rec.n);
    rec.ensure_slots(1)?;
    rec.pass(PACK_INDEX)
        .read("biome_index", index)
        .write("biome_bytes", bytes)
        .run(groups)
}

/// The `Biomes` uniform of [`island_core::biomes::biome_blend`]`(_, g, b, tag)`.
pub(crate) fn biomes_uniform(g: &CoreGrid, b: &BiomeParams, tg: u32) -> u::Biomes {
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

pub(crate) fn biome_table(b: &[Biome]) -> Vec<[f32; 4]> {
    b.iter()
        .map(|b| [b.height_scale, b.exponent, b.roughness, b.sandiness])
        .collect()
}

pub(crate) fn stage_biomes(run: &mut Run) -> Result<(), GpuError> {
    let (gpu, p) = (run.gpu, run.p);
    let (rec, r) = run.parts();
    let b = &p.biomes;
    let table = gpu.storage_init("biomes", bytemuck::cast_slice(&biome_table(&b.biomes)));
    let bp = biomes_uniform(&p.grid(), b, tag::BIOME);
    rec.biomes(
        &r.heights,
        &table,
        &r.biome_index,
        &r.roughness,
        &r.sandiness,
        &bp,
    )
}

/// The recording of these passes (`rec.method(..)` with this trait in scope).
pub(crate) trait BiomePasses {
    /// Biome blend: `base` relief rescaled in place; index, roughness and sandiness written.
    fn biomes(
        &mut self,
        base: &wgpu::Buffer,
        table: &wgpu::Buffer,
        index: &wgpu::Buffer,
        rough: &wgpu::Buffer,
        sand: &wgpu::Buffer,
        p: &u::Biomes,
    ) -> Result<(), GpuError>;
}

impl BiomePasses for Rec<'_> {
    /// Biome blend: `base` relief rescaled in place; index, roughness and sandiness written.
    fn biomes(
        &mut self,
        base: &wgpu::Buffer,
        table: &wgpu::Buffer,
        index: &wgpu::Buffer,
        rough: &wgpu::Buffer,
        sand: &wgpu::Buffer,
        p: &u::Biomes,
    ) -> Result<(), GpuError> {
        let n = self.n;
        self.pass(BIOME)
            .params(p)
            .read("table", table)
            .read_write("base", base)
            .write("biome_index", index)
            .write("rough", rough)
            .write("sand", sand)
            .run(grid2(n))
    }
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
    let p = biomes_uniform(g, b, tag);
    with_gpu(Grid::new(resolution, world_size, seed), |gpu, rec| {
        let b = gpu.storage_init("base", bytemuck::cast_slice(base01));
        let idx = gpu.storage("index", nn as u64 * 4);
        let r = gpu.storage("rough", nn as u64 * 4);
        let s = gpu.storage("sand", nn as u64 * 4);
        let table = gpu.storage_init("table", bytemuck::cast_slice(&biome_table(biomes)));
        rec.biomes(&b, &table, &idx, &r, &s, &p)?;
        let bytes = nn as u64 * 4;
        let mut parts = rec.read_back(
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
