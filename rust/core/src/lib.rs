//! Engine-free procedural island generator.
//!
//! Every stage is one module with one public function, in pipeline order:
//! base height ([`gradient_noise`], [`value_noise`], [`diamond_square`], [`gaussian_islands`],
//! [`detail`]), [`biomes`], [`shaping`], [`mask`], [`distance`], [`coast`], [`river`],
//! [`normals`], [`splat`]; [`pipeline::generate`] runs them all. [`heightfield`] turns the result
//! into chunk meshes and collider data, [`lod`] into a seam-free quadtree of chunks, and
//! [`paint`] edits eight-layer splat weights on top of the generated ones. [`memory`] keeps freed
//! map buffers for reuse across repeated generations.
//!
//! All randomness comes from [`hash::hash_u32`], ported bit-for-bit to WGSL.

pub mod biomes;
pub mod coast;
pub mod detail;
pub mod diamond_square;
pub mod distance;
pub mod gaussian_islands;
pub mod gradient_noise;
pub mod grid;
pub mod hash;
pub mod heightfield;
pub mod lod;
pub mod mask;
pub mod memory;
pub mod normals;
pub mod paint;
pub mod params;
pub mod pipeline;
pub mod river;
pub mod scatter;
pub mod scatter_meshes;
pub mod shaping;
mod simd;
pub mod splat;
pub mod value_noise;

pub use heightfield::{ChunkCollider, ChunkMesh, Heightfield};
pub use params::{Algorithm, IslandParams, ParamError};
pub use pipeline::{
    generate, generate_heights_with, generate_with, Carved, GenerateError, Island, Stats,
};
