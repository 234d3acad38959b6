//! Engine-free procedural island generator.
//!
//! Every stage is one module with one public entry point, named like its WGSL pass in
//! `shaders/` (the GPU parity tests call it as the CPU reference), in pipeline order
//! ([`Stage::ALL`]):
//!
//! | stage | entry point |
//! |---|---|
//! | base | [`gradient_noise::fbm_noise`]`(grid, &FbmParams, tag)`, [`value_noise::value_noise`]`(grid, &ValueNoiseParams, tag)`, [`diamond_square::diamond_square`]`(grid, &DiamondSquareParams, tag)`, [`gaussian_islands::gaussian_islands`]`(grid, &GaussianParams, tag)`, then [`grid::normalize_01`]`(field)` |
//! | detail | [`detail::apply_detail`]`(base, detail_noise, &DetailParams)` |
//! | biomes | [`biomes::biome_blend`]`(base01, grid, &BiomeParams, tag)` |
//! | shaping | [`shaping::apply_shaping_curve`]`(heights, lut)` |
//! | mask | [`shape::shape_mask`]`(params)` (the outline of [`params::IslandShape`]; ROUND is [`mask::island_mask`]`(grid, &MaskParams, margin, tag)`) |
//! | distance | [`distance::distance_to_coast`]`(mask, resolution, spacing)` |
//! | coast | [`coast::coastal_falloff`]`(land01, dist, fine, roughness, max_height, &CoastParams)` |
//! | river | [`river::carve_river`]`(heights, grid, &RiverParams, tag)` |
//! | normals | [`normals::compute_normals`]`(heights, resolution, spacing)` |
//! | splat | [`splat::auto_splat`]`(heights, normals, sandiness, grid, max_height, &SplatParams, tag)` |
//!
//! A [`Grid`] is the sampled map (resolution, world size, seed); each settings struct of
//! [`params`] documents its fields (unit, range, default) and has `DEFAULT_*` constants.
//! Constants the GPU port repeats are `pub const`s of the module they belong to.
//! [`pipeline::generate`] runs every stage. [`heightfield`] turns the result
//! into chunk meshes and collider data, [`lod`] into a seam-free quadtree of chunks, and
//! [`paint`] edits eight-layer splat weights on top of the generated ones; [`preview`] draws
//! the shaded top-down relief picture; [`world`] places islands on an endless plane.
//! [`memory`] keeps freed map buffers for reuse across repeated generations.
//!
//! All randomness comes from [`hash::hash_u32`], ported bit-for-bit to WGSL, and every
//! transcendental function (`exp`, `ln`, `pow`, `acos`, …) from [`det_math`], so an island is
//! the same bits on every OS, CPU and thread count (`tests/golden.rs`; docs/api.md,
//! "Determinism").

pub mod basins;
pub mod biomes;
pub mod channels;
pub mod coast;
pub mod coast_smoothing;
pub mod det_math;
pub mod detail;
pub mod diamond_square;
pub mod distance;
pub mod drainage;
pub mod erosion;
mod flats;
pub mod gaussian_islands;
pub mod gradient_noise;
pub mod grid;
mod grid_div;
pub mod hash;
pub mod heightfield;
pub mod heightmap_io;
pub mod lod;
pub mod mask;
pub mod memory;
pub mod navigation;
pub mod normals;
pub mod paint;
pub mod params;
pub mod paths;
pub mod pipeline;
pub mod preview;
pub mod river;
pub mod river_spread;
pub mod runs;
pub mod scatter;
pub mod scatter_meshes;
pub mod schema;
pub mod schema_index;
pub mod sculpt;
pub mod shape;
pub mod shaping;
mod simd;
pub mod spawn;
pub mod splat;
pub mod stamps;
pub mod surface_query;
pub mod sync;
pub mod value_noise;
pub mod water;
pub mod wetness;
pub mod world;
pub mod world_map;

pub use grid::Grid;
pub use heightfield::{ChunkCollider, ChunkMesh, Heightfield};
pub use params::{Algorithm, CoastMask, IslandParams, IslandShape, ParamError};
pub use pipeline::{
    generate, generate_heights_with, generate_with, Carved, GenerateError, GpuCounters, Island,
    Stage, Stats,
};
pub use simd::{force_scalar, set_force_scalar};
