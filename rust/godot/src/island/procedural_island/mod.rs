//! The `ProceduralIsland` node: its inspector properties (declared once, see
//! [`crate::island::properties`]), signals and thin `#[func]`s. The work is done by collaborators with
//! their own state, each in its own module:
//!
//! * [`GenerationJob`](crate::island::generation): background worker, pending request, chunk build;
//! * [`ChunkPool`](crate::island::chunk_pool): the chunk and collider nodes;
//! * [`LodRuntime`](crate::island::lod): quadtree LOD nodes;
//! * [`SplatMaps`](crate::island::splat_maps): the splat map textures (with the [`SplatPaint`] resource);
//! * [`TerrainMaterial`](crate::island::material): the chunks' material;
//! * [`WaterNodes`](crate::water::water_nodes): the sea, river and lake surfaces;
//! * [`AutoRegenerate`](crate::editor::auto_regenerate): the editor's debounced regenerate;
//! * [`island_io`](crate::io::island_io) and [`stats`](crate::island::stats): images, files, statistics.
//!
//! The node's code, by concern: [`table`] (the struct: every inspector property, declared once,
//! and the runtime state), this module (`_ready`/`_process`, signals, generation and the
//! saved-resource `#[func]`s), [`queries`] (heights, normals, images and other read-only
//! `#[func]`s), [`edits`] (what the brush changes: paint, scatter erase, sculpt) and [`build`]
//! (request, worker polling, chunk build, install, scatter placement).

mod build;
mod edits;
mod net;
mod queries;
#[macro_use]
mod table;

pub use table::ProceduralIsland;
// gdext generates helpers next to the struct that its `#[godot_api]` blocks use.
#[allow(unused_imports)]
use table::*;

use crate::brush::splat_paint::SplatPaint;
use crate::io::bake;
use crate::io::heightmap_io::HeightmapFormat;
use crate::io::island_io;
use crate::io::stored_resources;
use crate::island::chunk_pool::ChunkPool;
use crate::island::generation::{self, Build, Polled, Step, CORE_SHARE};
use crate::island::lod::{self, LodScene, LodSettings};
use crate::island::splat_maps;
use crate::island::stats::{FrameStats, NodeStats, ScatterStats, WaterStats};
use crate::island::terrain_layer;
use crate::island::worker::{generate_job, import_job, JobError, Prepared, Request};
use crate::scatter::scatter_nodes::{self, Progress as ScatterProgress};
use crate::water::water_nodes;
use godot::classes::{Engine, INode3D, Image, ImageTexture, Node3D};
use godot::global::Error;
use godot::prelude::*;
use island_core::paint::Rect;
use island_core::Island;
use island_gpu::Backend;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

/// Most chunk nodes one island may have (8193² with chunk_size 64 is exactly this).
const MAX_CHUNKS: u64 = 16384;

/// Share of `build_budget_ms` the build loops leave free in each frame, so the frame's work
/// after them and a chunk that takes a little longer than its estimate stay within the budget
/// (measured with the default 4 ms: the chunk loop alone reached 3.98 ms).
const FRAME_RESERVE: f64 = 0.05;

#[godot_api]
impl INode3D for ProceduralIsland {
    fn init(base: Base<Node3D>) -> Self {
        Self::with_defaults(base)
    }

    /// An island an `IslandWorld` streams (meta `island_world_cell`) shows its properties
    /// read-only: the world makes it again from its template each time it streams in (pin it
    /// to customise it).
    fn on_validate_property(&self, property: &mut godot::register::info::PropertyInfo) {
        if self.base().has_meta(crate::island::world_meta::CELL_META) {
            property.usage |= godot::register::info::PropertyUsageFlags::READ_ONLY;
        }
    }

    fn ready(&mut self) {
        crate::island::node_hooks::island_ready();
        let editor = Engine::singleton().is_editor_hint();
        if self.terrain_material.is_none() {
            // Now rather than in the first frames of a generation.
            self.material.prepare();
        }
        if editor {
            let now = self.make_request().ok();
            self.watcher.reset(now);
        }
        if self.generate_on_ready && self.island.is_none() && !self.is_generating() {
            if editor {
                self.regenerate_async();
            } else {
                self.regenerate();
            }
        }
    }

    fn process(&mut self, _delta: f64) {
        self.frame_watch.begin();
        let (running, building) = (self.parts.job.is_running(), self.parts.job.is_building());
        let scattering = self.parts.scatter.is_pending();
        self.poll_worker();
        if !self.server_active() {
            self.sync_material();
            self.sync_layers();
            self.sync_water();
            self.lod_process();
        }
        // The generation's node work last, with what is left of the frame's budget.
        self.continue_build();
        self.scatter_process();
        let colliders = self.sync_colliders();
        let phase = if building && !self.parts.job.is_building() {
            "install"
        } else if building {
            "chunks"
        } else if scattering || self.parts.scatter.is_pending() {
            "scatter"
        } else if colliders {
            "colliders"
        } else {
            "worker"
        };
        let busy = running || building || scattering || colliders || self.is_generating();
        if running && !building && self.frame_watch.elapsed_ms() < 1.0 && !self.server_active() {
            // A quiet frame while the worker generates: the splat maps' spare arrays (and for a
            // new size the maps themselves, a piece a frame), so the install frame only copies.
            self.splat.prepare_spare(self.resolution as usize);
        }
        self.frame_watch.end(busy, phase);
        self.frame_spent_elsewhere_ms = 0.0;
        if Engine::singleton().is_editor_hint() {
            // The advice follows `resolution` / `lod_enabled` also without auto-regenerate.
            let advice = self.mesh_advice().is_some();
            if advice != self.mesh_advice_shown {
                self.mesh_advice_shown = advice;
                self.base_mut().update_configuration_warnings();
            }
        }
        if Engine::singleton().is_editor_hint() && self.auto_regenerate {
            let now = self.make_request();
            let idle = !self.is_generating();
            let action = self.watcher.poll(now, idle);
            if action.validity_changed {
                self.base_mut().update_configuration_warnings();
            }
            if let Some(msg) = action.report {
                // The inspector path: the same error and signal as a script's regenerate().
                self.report_failure(&msg);
            }
            if action.regenerate {
                self.regenerate_async();
            }
        }
    }

    /// The yellow warning in the scene tree while a value is invalid (the previous island is
    /// kept until the values are valid again).
    fn get_configuration_warnings(&self) -> PackedStringArray {
        self.get_warnings()
    }
}

#[godot_api]
impl ProceduralIsland {
    /// The node's configuration warnings as the editor shows them: the problem with the
    /// property values ([method check_parameters]) and advice, such as turning on LOD for a
    /// large island. Empty when there is nothing to say.
    #[func]
    pub fn get_warnings(&self) -> PackedStringArray {
        let mut warnings = PackedStringArray::new();
        let problem = self.check_parameters();
        if !problem.is_empty() {
            warnings.push(&format!(
                "{problem}. The island is not regenerated until this is fixed; the previous one \
                 stays."
            ));
        }
        if let Some(advice) = self.mesh_advice() {
            warnings.push(&advice);
        }
        warnings
    }

    /// The saved form of the layers and the paint (see [`stored_resources`]); empty when there
    /// is nothing to save, so an island without them saves no line for it.
    #[func]
    fn get_stored_resources(&self) -> VarDictionary {
        let mut d = VarDictionary::new();
        if !self.terrain_layers.is_empty() {
            d.set(
                "terrain_layers",
                &stored_resources::list_to_plain(&self.terrain_layers),
            );
        }
        if !self.scatter_layers.is_empty() {
            d.set(
                "scatter_layers",
                &stored_resources::list_to_plain(&self.scatter_layers),
            );
        }
        if let Some(p) = &self.splat_paint {
            d.set("splat_paint", &stored_resources::to_plain(p));
        }
        d
    }

    /// Build the layers and the paint from their saved form (on the main thread, when the
    /// scene is instantiated).
    #[func]
    fn set_stored_resources(&mut self, stored: VarDictionary) {
        let nil = Variant::nil();
        self.terrain_layers = stored_resources::list_from_plain(
            &stored.get("terrain_layers").unwrap_or(nil.clone()),
            "terrain_layers",
        );
        self.scatter_layers = stored_resources::list_from_plain(
            &stored.get("scatter_layers").unwrap_or(nil.clone()),
            "scatter_layers",
        );
        self.splat_paint =
            stored_resources::from_plain(&stored.get("splat_paint").unwrap_or(nil), "splat_paint");
    }

    /// River mode: rivers follow the drainage network.
    #[constant]
    pub const RIVER_MODE_FLOW: i32 = 0;
    /// River mode: one noisy Bézier canal through the centre.
    #[constant]
    pub const RIVER_MODE_BEZIER: i32 = 1;
    /// River mode: no rivers.
    #[constant]
    pub const RIVER_MODE_OFF: i32 = 2;
    /// Island shape: the seed picks the shape and its settings.
    #[constant]
    pub const SHAPE_AUTO: i32 = 0;
    /// Island shape: the deformed circle of the `mask_*` settings.
    #[constant]
    pub const SHAPE_ROUND: i32 = 1;
    /// Island shape: a long island.
    #[constant]
    pub const SHAPE_ELONGATED: i32 = 2;
    /// Island shape: an island around a wide bay.
    #[constant]
    pub const SHAPE_CRESCENT: i32 = 3;
    /// Island shape: several islands with sea channels between them.
    #[constant]
    pub const SHAPE_ARCHIPELAGO: i32 = 4;
    /// Island shape: a reef ring around a lagoon (sea).
    #[constant]
    pub const SHAPE_ATOLL: i32 = 5;
    /// Island shape: one dominant volcanic cone.
    #[constant]
    pub const SHAPE_VOLCANIC: i32 = 6;
    /// Base algorithm: fractal gradient noise (fBm).
    #[constant]
    pub const ALGORITHM_FBM: i32 = 0;
    /// Base algorithm: value noise with cosine interpolation.
    #[constant]
    pub const ALGORITHM_VALUE_NOISE: i32 = 1;
    /// Base algorithm: diamond-square midpoint displacement.
    #[constant]
    pub const ALGORITHM_DIAMOND_SQUARE: i32 = 2;
    /// Base algorithm: gaussian mountains on a jittered grid.
    #[constant]
    pub const ALGORITHM_GAUSSIAN_ISLANDS: i32 = 3;
    /// Backend: a hardware GPU adapter where it was measured faster than the CPU (wgpu compute
    /// shaders), else the CPU (always when the only adapter is a software one).
    #[constant]
    pub const BACKEND_AUTO: i32 = 0;
    /// Backend: the GPU through any adapter (software ones included); falls back to the CPU with
    /// one warning when no adapter is usable.
    #[constant]
    pub const BACKEND_GPU: i32 = 1;
    /// Backend: CPU (rayon).
    #[constant]
    pub const BACKEND_CPU: i32 = 2;
    /// [member server_mode]: on in a game under the headless display server.
    #[constant]
    pub const SERVER_MODE_AUTO: i32 = 0;
    /// [member server_mode]: always build meshes, textures, water and scatter.
    #[constant]
    pub const SERVER_MODE_OFF: i32 = 1;
    /// [member server_mode]: colliders and queries only.
    #[constant]
    pub const SERVER_MODE_ON: i32 = 2;

    /// Emitted when a generation starts (once for a series of coalesced
    /// [method regenerate_async] calls).
    #[signal]
    fn generation_started();

    /// Emitted while generating: overall `fraction` 0..1 and the stage just done: the generator's
    /// stages (CPU: `base`, `detail`, `biomes`, `shaping`, `mask`, `distance`, `coast`, `river`,
    /// `erosion`, `drainage`, `normals`, `splat`, `stats`; GPU: `base`, `detail`, `biomes`,
    /// `shaping`, `mask`, `distance`, `coast`, `river`, `erosion`, `drainage`, `normals`,
    /// `splat`, `readback`, `heightfield`, `stats`; up to 0.8), then `chunks` while the nodes
    /// are built, then
    /// `done` ([method regenerate] only emits the final `done`).
    #[signal]
    fn generation_progress(fraction: f64, stage: GString);

    /// Emitted once the island and all its chunk nodes are built, with [method get_last_stats].
    #[signal]
    fn generation_finished(stats: VarDictionary);

    /// Emitted when a generation fails (invalid parameters, [method cancel]) with the reason.
    /// The previous island stays intact.
    #[signal]
    fn generation_failed(message: GString);

    /// Emitted when a [method bake_navigation_mesh_async] bake is done, with its
    /// `NavigationMesh` (node-local polygons of the island's walkable ground).
    #[signal]
    pub fn navigation_baked(navigation_mesh: Gd<godot::classes::Resource>);

    /// Generate the island now and build every chunk before returning. Returns `false` (and
    /// reports the reason with an error and [signal generation_failed]) when a parameter is
    /// invalid; the previous island and its chunks then stay as they were. Cancels a running
    /// [method regenerate_async].
    #[func]
    pub fn regenerate(&mut self) -> bool {
        let request = match self.make_request() {
            Ok(r) => r,
            Err(msg) => {
                self.report_failure(&msg);
                return false;
            }
        };
        self.parts.job.abort();
        let t = Instant::now();
        self.signals().generation_started().emit();
        let cancel = AtomicBool::new(false);
        // The river and lake surfaces are made on worker threads when they will be shown.
        let water_meshes = self.inland_water_enabled && !self.server_active();
        // The generator runs on one of the pool's threads (this thread waits for it): its
        // parallel stages then start without handing each one over from outside the pool.
        let generated = rayon::scope(|_| generate_job(&request, &mut |_, _| {}, &cancel));
        let built = generated.and_then(|(staged, warning)| {
            self.with_chunks(|pool, parent| {
                generation::build_streaming(pool, parent, request, staged, warning, water_meshes)
            })
        });
        match built {
            Ok(b) => {
                // `regenerate_ms` goes into the stats before generation_finished carries them.
                self.sync_started = Some(t);
                self.finish(b);
                true
            }
            Err(e) => {
                self.report_failure(&e.to_string());
                false
            }
        }
    }

    /// Start generating on a worker thread and return at once. The core runs in the background;
    /// the chunk nodes are then built on the main thread within [member build_budget_ms] per
    /// frame, and [signal generation_finished] fires when everything is in place. Calls made while
    /// a generation runs are coalesced: the running one is cancelled and only the last request is
    /// completed (one [signal generation_finished]). Invalid parameters emit
    /// [signal generation_failed] and change nothing. Results are picked up in `_process`, so the
    /// node must be inside the scene tree.
    #[func]
    pub fn regenerate_async(&mut self) {
        let request = match self.make_request() {
            Ok(r) => r,
            Err(msg) => {
                self.report_failure(&msg);
                return;
            }
        };
        match self.parts.job.submit(request) {
            Ok(true) => {
                self.frame_watch.reset();
                self.signals().generation_started().emit()
            }
            Ok(false) => {}
            Err(msg) => self.report_failure(&msg),
        }
    }

    /// The problem with the current property values, or an empty string when they are valid
    /// (what [method regenerate] would report, without generating). The same text is the node's
    /// configuration warning in the editor.
    #[func]
    pub fn check_parameters(&self) -> GString {
        match self.make_request() {
            Ok(_) => GString::new(),
            Err(msg) => GString::from(&msg),
        }
    }

    /// Whether a [method regenerate_async] is computing or building chunks (or scatter nodes).
    #[func]
    pub fn is_generating(&self) -> bool {
        self.parts.job.is_running() || self.parts.scatter.is_pending()
    }

    /// Wall and main-thread CPU milliseconds of the node's last `_process` and what it did
    /// (`"idle"`, `"worker"`, `"chunks"`, `"install"`, `"scatter"`): `IslandWorld` adds its
    /// islands' frames to its own.
    pub(crate) fn last_process(&self) -> (f64, f64, &'static str) {
        let w = &self.frame_watch;
        (w.last_ms, w.last_cpu_ms, w.last_phase)
    }

    /// The last chunk-building call (see `GenerationJob::last_call`), for the world's frame log.
    pub(crate) fn last_build_call(&self) -> Option<(usize, f64, f64, f64)> {
        self.parts.job.last_call
    }

    /// What the first `_process` after a synchronous generation does once (material, layers,
    /// water, LOD bookkeeping; 3 ms at 2049²), done now: `IslandWorld.load_now` calls it behind
    /// the loading screen so the first game frame does not pay for it.
    pub(crate) fn settle(&mut self) {
        if !self.server_active() {
            self.sync_material();
            self.sync_layers();
            self.sync_water();
            self.lod_process();
        }
    }

    /// Generate on `pool` (an `IslandWorld`'s generator threads) instead of rayon's global pool.
    pub(crate) fn set_generator_pool(&mut self, pool: Option<std::sync::Arc<rayon::ThreadPool>>) {
        self.parts.job.pool = pool;
    }

    /// Set [member collision_enabled]: on a generated island the colliders follow in the next
    /// frames (added from the island's heights or removed, within [member build_budget_ms] per
    /// frame), without regenerating.
    #[func]
    pub fn set_collision_enabled(&mut self, on: bool) {
        if on != self.collision_enabled {
            self.collider_sync = true;
            self.collider_cursor = 0;
        }
        self.collision_enabled = on;
    }

    /// The value of `collision_enabled` (for the world, which sets it by distance).
    pub(crate) fn collision_on(&self) -> bool {
        self.collision_enabled
    }

    /// Whether every chunk of the generated island has its collider now: [member
    /// collision_enabled] is on and its colliders are built (after a change of [member
    /// collision_enabled] they follow over a few frames; during a regeneration the new island's
    /// chunks are built with theirs). False before the first generation.
    #[func]
    pub fn is_collision_ready(&self) -> bool {
        self.colliders_ready()
    }

    /// This frame, `ms` of the budget went elsewhere before this node's `_process` (its world's
    /// streaming): its build loops get that much less (this frame only).
    pub(crate) fn set_frame_spent_elsewhere(&mut self, ms: f64) {
        self.frame_spent_elsewhere_ms = ms.max(0.0);
    }

    /// An `IslandStamp` or `IslandPath` child changed (in a game: regenerate in the background
    /// once the island exists; the editor's auto-regenerate notices by itself).
    #[func]
    fn _on_layout_changed(&mut self) {
        if Engine::singleton().is_editor_hint() {
            return;
        }
        if self.island.is_some() || self.is_generating() {
            self.regenerate_async();
        }
    }

    /// Whether [member server_mode] is in effect here (for [constant SERVER_MODE_AUTO]: a game
    /// under the headless display server, see [member server_mode]).
    #[func]
    pub fn is_server_mode_active(&self) -> bool {
        self.server_active()
    }

    /// Stop a running background generation (the worker stops at its next stage boundary; its
    /// result is discarded) and emit [signal generation_failed] with "generation cancelled".
    /// Chunks already being built from a finished generation are completed over the next
    /// frames. Does nothing when idle.
    #[func]
    pub fn cancel(&mut self) {
        if self.parts.job.cancel() {
            self.report_failure(&JobError::Cancelled.to_string());
        }
    }

    /// Statistics of the last generation: `backend`, `resolution`, `chunks`, `land_fraction`,
    /// `min_height`, `max_height` (metres), `total_ms` (core generator), `stage_ms` (Dictionary
    /// stage name → ms), `mesh_ms` (chunk surfaces and collider data, worker threads; after
    /// [method regenerate], which builds the nodes while the workers prepare the surfaces, the
    /// part of it the main thread waited for once the generator was done),
    /// `build_ms` (Godot nodes, main thread; after [method regenerate] this includes the
    /// colliders, set while the generator's last stages run), `maps_ms` (splat map textures,
    /// main thread),
    /// `regenerate_ms` (the whole [method regenerate] call; absent after [method regenerate_async]),
    /// `encoded_surfaces` / `array_surfaces` (chunk meshes set from bytes encoded on the workers /
    /// through `add_surface_from_arrays`: the first chunk of each mesh shape, which checks the
    /// encoding against Godot's, or every chunk if it does not match this Godot version),
    /// `kept_chunks` (chunks whose mesh and collider were already what the new island gives,
    /// left as they were: after a stamp or a curve point moved, most of them),
    /// `seed`, `requested_backend`, `backend_reason` (why that backend, e.g. `"auto: cpu (software
    /// adapter …)"`) and `adapter` (the GPU adapter's name, when the GPU generated the island;
    /// then also `gpu_dispatches`, `gpu_submissions`, `gpu_host_waits`, `gpu_bytes_read_back`,
    /// `gpu_bytes_uploaded`), `scatter_counts` (instances per [member scatter_layers] entry),
    /// `scatter_ms` (placement and MultiMesh build) and `scatter_place_ms` (placement alone);
    /// after [method regenerate_async] also `scatter_frame_ms_max` (the most milliseconds one
    /// frame spent building the scatter nodes, bounded by [member build_budget_ms] plus one chunk)
    /// and `scatter_frame_cpu_ms_max` (its main-thread CPU time).
    /// Empty before the first generation.
    #[func]
    pub fn get_last_stats(&self) -> VarDictionary {
        // A copy: the caller may edit it without changing the node's statistics.
        self.last_stats.to_dictionary()
    }

    /// Write the current heights to `path`; the format follows the extension: `.png` (16-bit
    /// greyscale), `.r16` (raw little-endian u16), `.r32` (raw little-endian f32 metres) or
    /// `.exr` (one float channel, metres; needs an editor build of Godot). PNG and R16 map
    /// 0..65535 to `-(coast_sea_depth + 4·coast_fine_amplitude)` ..
    /// `max_height + coast_beach_height + 4·coast_fine_amplitude` of the current parameters (a
    /// range containing every generated height); heights outside are clamped.
    #[func]
    pub fn export_heightmap(&mut self, path: GString) -> Error {
        match island_io::export_heightmap(self.island.as_deref(), &path.to_string()) {
            Ok(()) => Error::OK,
            Err((code, msg)) => {
                godot_error!("ProceduralIsland.export_heightmap(\"{path}\"): {msg}");
                code
            }
        }
    }

    /// Replace the heights with the file at `path` (formats and 16-bit mapping as in
    /// [method export_heightmap], using the current parameters) and rebuild every chunk mesh and
    /// collider from them at once. The file must hold exactly `resolution × resolution` samples.
    /// A missing, wrong-sized or corrupt file returns an error code and changes nothing. The
    /// splat is recomputed from the imported heights; biomes are unknown (-1). Imported heights
    /// are not saved with the scene: reloading regenerates from the parameters.
    #[func]
    pub fn import_heightmap(&mut self, path: GString) -> Error {
        match self.import_impl(&path.to_string()) {
            Ok(()) => Error::OK,
            Err((code, msg)) => {
                godot_error!("ProceduralIsland.import_heightmap(\"{path}\"): {msg}");
                code
            }
        }
    }

    /// Rebuild the splat maps from the generated splat and [member splat_paint] (call after
    /// replacing or editing the paint resource by hand; painting with a TerrainBrush does this
    /// itself).
    #[func]
    pub fn refresh_splat_maps(&mut self) {
        self.splat_island_changed(None);
    }

    /// Save the generated island as a scene (`.tscn` or `.scn`) of plain nodes that loads without
    /// this extension: a `MeshInstance3D` per chunk at full resolution with a `StaticBody3D` /
    /// `HeightMapShape3D` collider, the terrain material (the built-in shader's code and the splat
    /// maps embedded) and the sea, river and lake surfaces. Missing folders are created. Returns
    /// `OK`, or an error (nothing generated: `ERR_UNCONFIGURED`; a path not ending in `.tscn` /
    /// `.scn`: `ERR_FILE_BAD_PATH`; a write failure: the file error) after printing it.
    #[func]
    pub fn bake(&mut self, path: GString) -> Error {
        self.bake_impl(&path.to_string(), bake::Target::Scene)
    }

    /// Write the generated island's meshes (terrain chunks at full resolution and water surfaces,
    /// no colliders) as glTF 2.0 (`.gltf` or `.glb`) for other tools such as Blender, with plain
    /// materials and the splat weights of layers 0..3 as vertex colours. Returns `OK` or an error
    /// code (as [method bake]) after printing it.
    #[func]
    pub fn export_gltf(&mut self, path: GString) -> Error {
        self.bake_impl(&path.to_string(), bake::Target::Gltf)
    }

    /// Remove every sculpt edit (raise, lower, smooth, flatten, sketched coast) from
    /// [member splat_paint] and regenerate (in the background inside the scene tree). In the
    /// editor the addon's toolbar button makes this one undo step. Returns false (with an error)
    /// when there was nothing to clear.
    #[func]
    pub fn clear_sculpt(&mut self) -> bool {
        let Some(mut paint) = self.splat_paint.clone() else {
            godot_error!("ProceduralIsland.clear_sculpt: the island has no sculpt edits");
            return false;
        };
        if paint.bind().sculpt().is_none() {
            godot_error!("ProceduralIsland.clear_sculpt: the island has no sculpt edits");
            return false;
        }
        paint.bind_mut().set_sculpt(None);
        self.sculpt_changed();
        true
    }

    /// Whether [member splat_paint] holds sculpt edits (shown when [member sculpt_enabled]).
    #[func]
    pub fn has_sculpt(&self) -> bool {
        self.splat_paint
            .as_ref()
            .is_some_and(|p| p.bind().has_sculpt())
    }

    /// A `TerrainLayer` of `terrain_layers` emitted `changed`: rebuild the layer textures on the
    /// next frame.
    #[func]
    fn _on_terrain_layer_changed(&mut self) {
        self.layers.mark_dirty();
    }

    /// A `ScatterLayer` of `scatter_layers` emitted `changed`: re-check the layers on the next
    /// frame (a field of the node, not of the parts, so a change while they are lent is kept).
    #[func]
    fn _on_scatter_layer_changed(&mut self) {
        self.scatter_layer_changed = true;
    }
}
