//! Heightmap file encoding and decoding lives in the engine-free core
//! ([`island_core::heightmap_io`], fuzzed there); the node's `.exr` path goes through Godot's
//! `Image`. Re-exported so the Godot layer keeps one path for it.

pub use island_core::heightmap_io::*;
