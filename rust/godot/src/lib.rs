//! GDExtension "procedural_island": the `ProceduralIsland` and `TerrainBrush` nodes and the
//! `SplatPaint` and `TerrainLayer` resources for Godot 4.3+.
//!
//! Godot classes, one per module: [`procedural_island`] (the node: properties, signals, thin
//! `#[func]`s), [`terrain_brush`], [`splat_paint`], [`scatter_layer`], [`world`] (the
//! `IslandWorld` node: an endless ocean of streamed islands).
//!
//! The node's collaborators, each owning its state: [`generation`] (worker, pending request,
//! chunk build), [`chunk_pool`] (chunk and collider nodes), [`lod`] (quadtree LOD nodes),
//! [`splat_maps`] (splat map textures), [`water_nodes`] (sea, river and lake surfaces),
//! [`material`], [`terrain_layer`] (the `TerrainLayer` list in the material), [`bake`] (the
//! island as a plain scene or glTF), [`auto_regenerate`] (editor debounce),
//! [`island_io`] (images and heightmap files), [`stats`], [`frame_watch`] (per-frame time), [`scatter_nodes`] (scatter
//! MultiMeshes); [`properties`] declares the node's inspector properties once.
//!
//! [`pin`] keeps the library mapped until the process ends (rayon threads outlive an unload).
//!
//! Plain data (no Godot objects, usable off the main thread): [`worker`] (background generation
//! on a `std::thread`), [`chunk_data`] (per-chunk mesh/collider data), [`surface`] (mesh
//! surfaces encoded in Godot's layout), [`heightmap_io`] (PNG16/R16/R32 encoding).

use godot::init::{gdextension, ExtensionLibrary, InitStage};

pub mod auto_regenerate;
pub mod bake;
pub mod chunk_data;
pub mod chunk_pool;
pub mod coast_mask_watch;
pub mod editor_view;
pub mod frame_watch;
pub mod generation;
pub mod heightmap_io;
pub mod island_io;
pub mod island_parts;
pub mod layer_moves;
pub mod lod;
pub mod material;
pub mod navigation;
pub mod node_hooks;
pub mod pin;
pub mod procedural_island;
pub mod properties;
pub mod runtime_maps;
pub mod runtime_queries;
pub mod scatter_layer;
pub mod scatter_nodes;
pub mod splat_maps;
pub mod splat_paint;
pub mod stats;
pub mod stored_resources;
pub mod surface;
pub mod terrain_brush;
pub mod terrain_layer;
pub mod water_nodes;
pub mod water_summary;
pub mod worker;
pub mod world;

struct ProceduralIslandExtension;

#[gdextension]
unsafe impl ExtensionLibrary for ProceduralIslandExtension {
    fn on_stage_init(stage: InitStage) {
        if stage == InitStage::Scene {
            // rayon's pool threads outlive an unload: keep their code mapped (see `pin`).
            if !pin::pin_library() {
                godot::global::godot_warn!(
                    "procedural_island: could not pin the library; quitting right after a \
                     generation may crash"
                );
            }
            // Every regenerate() allocates the same map-sized buffers: keep freed ones for reuse
            // instead of page-faulting them in again (glibc; bounded, see island_core::memory).
            island_core::memory::reuse_freed_memory();
            // The island registers the navigation parser when it first enters the tree.
            node_hooks::on_island_ready(navigation::register_parser);
            // BACKEND_AUTO keeps its GPU-versus-CPU measurements in the user data folder.
            let dir = <godot::classes::Os as godot::obj::Singleton>::singleton()
                .get_user_data_dir()
                .to_string();
            if !dir.is_empty() {
                island_gpu::auto::set_store_dir(Some(std::path::Path::new(&dir)));
            }
        }
    }

    fn on_stage_deinit(stage: InitStage) {
        if stage == InitStage::Scene {
            // The cached coast masks hold objects of our classes: free them while the classes
            // are still registered.
            properties::release_mask_cache();
            // Stop every background thread (also those of nodes still alive, e.g. when the
            // editor quits right after opening a scene) before the library unloads.
            worker::join_all();
            navigation::unregister_parser();
        }
    }
}
