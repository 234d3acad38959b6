//! GDExtension "procedural_island": the `ProceduralIsland`, `TerrainBrush`, `IslandWorld` and
//! `IslandSync` nodes and the `SplatPaint`, `TerrainLayer` and `ScatterLayer` resources for
//! Godot 4.3+.
//!
//! The rooms, one folder per concern (one Godot class per module inside):
//!
//! - [`island`]: the `ProceduralIsland` node (`island/procedural_island/`: properties, signals,
//!   thin `#[func]`s) and its collaborators, each owning its state: the generation
//!   (`generation`, `worker` on a `std::thread`), chunks and colliders (`chunk_data`,
//!   `chunk_pool`, `surface`: mesh surfaces in Godot's layout), `lod`, the terrain material
//!   (`material`, `terrain_layer`, `splat_maps`), runtime queries and navigation, `stats`,
//!   `frame_watch`; `properties` declares the node's inspector properties once; the
//!   `IslandStamp` node (`island_stamp`: landmarks placed by hand).
//! - [`world`]: the `IslandWorld` node (an endless ocean of streamed islands).
//! - [`brush`]: the `TerrainBrush` node and the `SplatPaint` resource.
//! - [`scatter`]: the `ScatterLayer` resource and the scatter MultiMeshes.
//! - [`water`]: the sea, river and lake surfaces.
//! - [`editor`]: the inspector header's picture, framing, editor auto-regenerate.
//! - [`io`]: bake to a scene or glTF, heightmap and image files, how layers and paint are saved.
//! - [`net`]: the `IslandSync` node (multiplayer: parameters, edit commands, fingerprints).
//!
//! [`pin`] keeps the library mapped until the process ends (rayon threads outlive an unload).
//! Worker threads exchange only plain `Send` data; the main thread builds Godot objects.

use godot::init::{gdextension, ExtensionLibrary, InitStage};

// Freed map-sized blocks (4097² maps and larger) are kept for the next generation: see
// island_core::memory::BlockCache.
#[global_allocator]
static ALLOC: island_core::memory::BlockCache = island_core::memory::BlockCache;

pub mod brush;
pub mod editor;
pub mod io;
pub mod island;
pub mod net;
pub mod pin;
pub mod scatter;
pub mod water;
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
            island::node_hooks::on_island_ready(island::navigation::register_parser);
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
            island::properties::release_mask_cache();
            island::material::release_shader_cache();
            island::splat_maps::release_pool();
            // Stop every background thread (also those of nodes still alive, e.g. when the
            // editor quits right after opening a scene) before the library unloads.
            island::worker::join_all();
            island::navigation::unregister_parser();
        }
    }
}
