//! GDExtension "procedural_island": the `ProceduralIsland` node for Godot 4.3+.
//!
//! Modules: [`procedural_island`] (the node), [`worker`] (background generation on a
//! `std::thread`, plain data only), [`chunk_data`] (per-chunk mesh/collider data), [`surface`]
//! (mesh surfaces encoded in Godot's layout off the main thread),
//! [`heightmap_io`] (PNG16/R16/R32 encoding).

use godot::init::{gdextension, ExtensionLibrary, InitStage};

pub mod chunk_data;
pub mod heightmap_io;
pub mod procedural_island;
pub mod splat_data;
pub mod surface;
pub mod terrain_brush;
pub mod worker;

struct ProceduralIslandExtension;

#[gdextension]
unsafe impl ExtensionLibrary for ProceduralIslandExtension {
    fn on_stage_init(stage: InitStage) {
        if stage == InitStage::Scene {
            // Every regenerate() allocates the same map-sized buffers: keep freed ones for reuse
            // instead of page-faulting them in again (glibc; bounded, see island_core::memory).
            island_core::memory::reuse_freed_memory();
        }
    }

    fn on_stage_deinit(stage: InitStage) {
        if stage == InitStage::Scene {
            // Stop every background thread (also those of nodes still alive, e.g. when the
            // editor quits right after opening a scene) before the library unloads.
            worker::join_all();
        }
    }
}
