//! The generation on the node's side: the request from the properties, polling the
//! worker, the chunk build within the frame budget, installing the island (splat maps, water,
//! material, layers), LOD updates, scatter placement and heightmap import.

use super::*;
use crate::island::island_parts::IslandParts;
use crate::island::island_path::IslandPath;
use crate::island::island_stamp::IslandStamp;
use crate::island::worker::StampJob;
use crate::water::water_summary::WaterSummary;
use island_core::paths::{PathSet, PathSpec};
use island_core::sculpt::SculptLayer;
use island_core::stamps::Stamp;

impl ProceduralIsland {
    /// Validated request from the properties.
    pub(super) fn make_request(&self) -> Result<Request, String> {
        let mut params = self.generation_params()?;
        let brush = if self.sculpt_enabled {
            self.splat_paint
                .as_ref()
                .and_then(|p| p.bind().sculpt_for_generation())
        } else {
            None
        };
        let paths = self.paths();
        if !paths.is_empty() {
            params.paths = Some(Arc::new(PathSet {
                paths,
                brush: brush.clone(),
            }));
        }
        let stamps = self.stamp_job(brush.clone())?;
        // With stamps the worker composes the sculpt layer (see `Request::stamps`).
        params.sculpt = if stamps.is_some() { None } else { brush };
        params.validate().map_err(|e| e.to_string())?;
        let chunks = params.chunks_per_side() as u64 * params.chunks_per_side() as u64;
        if chunks > MAX_CHUNKS {
            return Err(format!(
                "invalid parameter `chunk_size`: {} at resolution {} makes {chunks} chunk nodes, more than {MAX_CHUNKS}; use a larger chunk_size",
                params.chunk_size, params.resolution
            ));
        }
        let backend = match self.backend {
            Self::BACKEND_AUTO => Backend::Auto,
            Self::BACKEND_GPU => Backend::Gpu,
            Self::BACKEND_CPU => Backend::Cpu,
            other => {
                return Err(format!(
                    "invalid parameter `backend`: must be 0..=2, got {other}"
                ))
            }
        };
        Ok(Request {
            params,
            flat: self.flat_shading,
            collision: self.collision_enabled,
            meshes: !self.lod_enabled && !self.server_active(),
            backend,
            stamps,
        })
    }

    /// The `IslandPath` children (enabled ones with a curve, in child order) in the island's
    /// frame.
    pub(super) fn paths(&self) -> Vec<PathSpec> {
        self.layout_children::<IslandPath, _>(|p| {
            p.bind()
                .is_enabled()
                .then(|| p.bind().path_spec())
                .flatten()
        })
    }

    /// The `IslandStamp` children (enabled ones, in child order) in the island's frame.
    pub(super) fn stamps(&self) -> Vec<Stamp> {
        self.layout_children::<IslandStamp, _>(|s| s.bind().is_enabled().then(|| s.bind().stamp()))
    }

    /// What `f` gives for each child of class `T` (`IslandStamp`, `IslandPath`), in child order.
    fn layout_children<T, R>(&self, f: impl Fn(&Gd<T>) -> Option<R>) -> Vec<R>
    where
        T: GodotClass + Inherits<Node>,
    {
        self.base()
            .get_children()
            .iter_shared()
            .filter_map(|c| c.try_cast::<T>().ok())
            .filter_map(|c| f(&c))
            .collect()
    }

    /// The stamps for the worker to compose under the brush's layer (`None` without stamps:
    /// the brush's layer is the sculpt layer as it is). Invalid stamps are an error here, in
    /// the frame of the edit.
    pub(super) fn stamp_job(
        &self,
        brush: Option<Arc<SculptLayer>>,
    ) -> Result<Option<StampJob>, String> {
        let stamps = self.stamps();
        if stamps.is_empty() {
            return Ok(None);
        }
        for s in &stamps {
            s.validate()
                .map_err(|e| format!("invalid IslandStamp: {e}"))?;
        }
        Ok(Some(StampJob { stamps, brush }))
    }

    /// Advice for a large island drawn without LOD (a configuration warning, not an error).
    pub(super) fn mesh_advice(&self) -> Option<String> {
        if self.lod_enabled || self.resolution < 4097 {
            return None;
        }
        let cs = self.chunk_size.max(1) as f64;
        let cells = (self.resolution - 1) as f64;
        let vertices = (cells / cs).powi(2) * (cs + 1.0).powi(2);
        // Measured: ~58 bytes per chunk vertex with its share of the index buffer.
        Some(format!(
            "resolution {r}² without LOD: every chunk is drawn at full resolution ({m:.0} M \
             vertices, about {g:.1} GB of meshes). Turn on LOD (`lod_enabled`): far chunks are \
             drawn coarser and the full-resolution chunks keep only their colliders.",
            r = self.resolution,
            m = vertices / 1e6,
            g = vertices * 58.0 / 1e9,
        ))
    }

    pub(super) fn report_failure(&mut self, msg: &str) {
        self.parts.job.end_series();
        godot_error!("ProceduralIsland: {msg}");
        self.signals().generation_failed().emit(msg);
    }

    /// The one borrow helper: run `f` on the node's [`IslandParts`] (chunks, LOD, water,
    /// scatter, generation job) with the node as the parent of the nodes they add. The node is
    /// borrowed through `base_mut` (engine callbacks may reach it while children are added), so
    /// the parts are taken out of the node while `f` runs: a script called back meanwhile (e.g.
    /// from `child_entered_tree`) sees none of them (the island, shared through an `Arc`,
    /// stays).
    pub(super) fn with_parts<R>(
        &mut self,
        f: impl FnOnce(&mut IslandParts, &mut Gd<Node3D>) -> R,
    ) -> R {
        let mut parts = std::mem::take(&mut self.parts);
        let r = {
            let mut parent = self.base_mut();
            f(&mut parts, &mut parent)
        };
        self.parts = parts;
        r
    }

    /// [`Self::with_parts`] with the chunks' material made current first.
    pub(super) fn with_chunk_parts<R>(
        &mut self,
        f: impl FnOnce(&mut IslandParts, &mut Gd<Node3D>) -> R,
    ) -> R {
        let material = self.material.resolve(self.terrain_material.as_ref());
        self.with_parts(|p, parent| {
            p.chunks.use_material(Some(material));
            f(p, parent)
        })
    }

    /// [`Self::with_chunk_parts`] for the chunk pool alone.
    pub(super) fn with_chunks<R>(
        &mut self,
        f: impl FnOnce(&mut ChunkPool, &mut Gd<Node3D>) -> R,
    ) -> R {
        self.with_chunk_parts(|p, parent| f(&mut p.chunks, parent))
    }

    pub(super) fn poll_worker(&mut self) {
        match self.parts.job.poll() {
            Polled::Idle => {}
            Polled::Progress(progress) => {
                self.emit_progress(progress);
            }
            Polled::Done(progress, result) => {
                if !self.emit_progress(progress) {
                    // A handler started another generation: this result is stale.
                    return;
                }
                match result {
                    Ok(prep) => {
                        if self.parts.chunks.len() != prep.chunks.len() {
                            // Another chunk count: the current chunks stay drawn and colliding
                            // until the new ones are all built (swapped in `finish`).
                            self.with_chunks(|pool, parent| pool.retire(parent));
                        }
                        let counts = self.parts.chunks.surface_counts();
                        self.splat.forget_precopy();
                        self.parts.job.start_build(prep, counts);
                    }
                    Err(msg) => self.report_failure(&msg),
                }
            }
        }
    }

    /// Emit the worker's progress; false when a handler replaced the generation meanwhile
    /// (e.g. called [method regenerate]), which stops the rest.
    pub(super) fn emit_progress(&mut self, progress: Vec<(f32, String)>) -> bool {
        let serial = self.parts.job.serial();
        for (f, stage) in progress {
            self.signals()
                .generation_progress()
                .emit(f as f64 * CORE_SHARE, stage.as_str());
            if self.parts.job.serial() != serial {
                return false;
            }
        }
        true
    }

    pub(super) fn continue_build(&mut self) {
        if !self.parts.job.is_building() {
            return;
        }
        let budget = self.frame_budget_left();
        // The river/lake surfaces of each chunk are built right after it, in the same budget.
        let user = self.water_material.clone();
        let inland = self.inland_water_enabled && !self.server_active();
        let step = self.with_chunk_parts(|p, parent| {
            let IslandParts {
                job, chunks, water, ..
            } = p;
            let step = job.continue_build(chunks, parent, budget, &mut |parent, i, island| {
                if inland {
                    water.build_chunk(parent, island, i, user.as_ref())
                }
            });
            if inland && matches!(step, Step::Finished(_)) {
                water.chunks_built();
            }
            step
        });
        match step {
            Step::Idle => {}
            Step::Progress(f) => {
                let end = if self.scatter_layers.is_empty() {
                    1.0
                } else {
                    generation::CHUNKS_END_WITH_SCATTER
                };
                let f = CORE_SHARE + (end - CORE_SHARE) * f;
                self.signals().generation_progress().emit(f, "chunks")
            }
            Step::Finished(b) => {
                // Map 0's pixels copied in a frame (or two) of their own first, so the install
                // frame does not copy them.
                let plain = self.splat_paint.is_none() && b.prep.splat_plain == Some(true);
                if !self.server_active() && self.splat.precopy(&b.prep.island, plain) {
                    self.parts.job.put_back(b);
                    return;
                }
                self.scatter_deferred = true;
                self.finish(b);
            }
        }
    }

    /// Install a built island: statistics, the island data, splat maps, LOD; then the final
    /// progress and [signal generation_finished].
    pub(super) fn finish(&mut self, b: Build) {
        let Build {
            prep,
            build_ms,
            surfaces0,
            next,
            kept,
            ..
        } = b;
        let Prepared {
            island,
            chunks,
            mesh_ms,
            warning,
            request,
            water,
            splat_plain,
            water_meshes,
            ..
        } = *prep;
        let prep_params = request.params;
        if let Some(w) = warning {
            // One warning per node: later fallbacks are visible in `get_last_stats().backend`.
            if !self.gpu_warned {
                self.gpu_warned = true;
                godot_warn!("ProceduralIsland: {w}");
            }
        }
        self.last_stats = NodeStats::new(
            &island,
            next.max(chunks.len()),
            mesh_ms,
            build_ms,
            self.backend,
        );
        self.with_chunks(|pool, parent| pool.swap_in(parent));
        let (fast, slow) = self.parts.chunks.surface_counts();
        if let Some(g) = self.last_stats.generation.as_mut() {
            g.encoded_surfaces = (fast - surfaces0.0) as i64;
            g.array_surfaces = (slow - surfaces0.1) as i64;
            g.kept_chunks = kept as i64;
        }
        drop(chunks);
        if let Some(old) = self.island.replace(Arc::new(island)) {
            // A large island takes milliseconds to free: do it off the main thread.
            if old.field.heights.len() >= 1 << 20 {
                crate::island::worker::free_in_background(old);
            }
        }
        self.parts.job.end_series();
        // `collision_enabled` may have changed while the worker ran: check the colliders.
        self.collider_sync = true;
        self.collider_cursor = 0;
        let server = self.server_active();
        let t = Instant::now();
        if !server {
            self.splat_island_changed(splat_plain);
            self.sync_layers();
        }
        self.last_stats.maps_ms = Some(t.elapsed().as_secs_f64() * 1e3);
        let t_water = Instant::now();
        self.water_island_changed(water, water_meshes);
        self.parts.lod.invalidate();
        if crate::island::world_meta::frame_log_threshold().is_some() {
            // The world's frame log (ISLAND_WORLD_FRAME_LOG): what an install frame spent.
            godot_print!(
                "install: maps {:.2} ms, water+lod {:.2} ms",
                self.last_stats.maps_ms.unwrap_or(0.0),
                t_water.elapsed().as_secs_f64() * 1e3
            );
        }
        if server {
            // A server builds no scatter nodes (see `server_mode`).
            std::mem::take(&mut self.scatter_deferred);
            self.parts.scatter.abort();
            self.emit_done();
            return;
        }
        if std::mem::take(&mut self.scatter_deferred) && !self.scatter_layers.is_empty() {
            // Finished in `scatter_process` once the scatter nodes are built.
            if let Some(island) = self.island.clone() {
                self.watch_scatter_layers();
                let specs = scatter_nodes::specs(&self.scatter_layers);
                let erase = self.scatter_erase_masks(specs.len());
                let serial = self.parts.job.serial();
                self.parts.scatter.start(
                    island,
                    prep_params.seed,
                    prep_params.chunk_size as usize,
                    specs,
                    erase,
                    serial,
                );
                return;
            }
        }
        self.parts.scatter.abort();
        self.place_scatter(&prep_params);
        self.emit_done();
    }

    /// Follow `scatter_layers` (see `ScatterNodes::watch`); reordered, inserted or removed layers
    /// take their erase masks in [member splat_paint] with them.
    pub(super) fn watch_scatter_layers(&mut self) {
        let on_changed = Callable::from_object_method(&self.to_gd(), "_on_scatter_layer_changed");
        let moves = self.parts.scatter.watch(&self.scatter_layers, &on_changed);
        if std::mem::take(&mut self.scatter_layer_changed) {
            self.parts.scatter.layers_changed();
        }
        let Some(moves) = moves else {
            return;
        };
        if let Some(mut paint) = self.splat_paint.clone() {
            let changed = paint
                .bind_mut()
                .remap_scatter_erase(&moves, &mut self.parts.scatter.parked);
            for i in changed {
                self.parts.scatter.force_replace(i);
            }
        }
    }

    /// What is left of [member build_budget_ms] in this frame's `_process` (the chunks, their
    /// installation and the scatter nodes share one budget per frame), less
    /// [`FRAME_RESERVE`] of it for the bookkeeping after the build loops and a job that runs
    /// a little over its estimate, and less what an `IslandWorld` spent of the same frame
    /// before (its streaming: one budget for the whole world).
    pub(super) fn frame_budget_left(&self) -> f32 {
        // In the editor only: a running game keeps exactly the budget it was given.
        let b = if Engine::singleton().is_editor_hint() {
            crate::island::frame_watch::adaptive_budget_ms(
                self.build_budget_ms as f64,
                self.frame_watch.steady_interval_ms(),
            )
        } else {
            self.build_budget_ms as f64
        };
        if b.is_finite() {
            (b * (1.0 - FRAME_RESERVE)
                - self.frame_watch.elapsed_ms()
                - self.frame_spent_elsewhere_ms)
                .max(0.0) as f32
        } else {
            b as f32
        }
    }

    /// The final progress and [signal generation_finished].
    pub(super) fn emit_done(&mut self) {
        if let Some(t) = self.sync_started.take() {
            self.last_stats.regenerate_ms = Some(t.elapsed().as_secs_f64() * 1e3);
        } else if self.frame_watch.frames > 0 {
            // A background generation: the worst frame of its installation, this one included.
            let (ms, cpu) = self.frame_watch.maxima_now();
            self.last_stats.frame = Some(FrameStats {
                ms_max: ms,
                cpu_ms_max: cpu,
                phase: self.frame_watch.max_phase,
            });
        }
        // Handlers get their own copy: editing it does not change get_last_stats().
        let stats = self.last_stats.to_dictionary();
        let serial = self.parts.job.serial();
        self.signals().generation_progress().emit(1.0, "done");
        if self.parts.job.serial() != serial {
            // A handler of "done" started another generation (which reports for itself).
            return;
        }
        self.signals().generation_finished().emit(&stats);
    }

    /// After a (re)generation or a new paint resource: rebuild both splat maps (`plain`: see
    /// `SplatMaps::island_changed`).
    pub(super) fn splat_island_changed(&mut self, plain: Option<bool>) {
        if self.island.is_none() {
            return;
        }
        self.own_paint();
        let Some(island) = self.island.as_ref() else {
            return;
        };
        let mats = self
            .material
            .shader_materials(self.terrain_material.as_ref());
        self.splat
            .island_changed(island, self.splat_paint.as_ref(), &mats, plain);
    }

    /// After a (re)generation: rebuild the river/lake meshes and the sea; water statistics.
    pub(super) fn water_island_changed(
        &mut self,
        summary: Option<WaterSummary>,
        meshes: Option<Vec<crate::water::water_nodes::WaterMesh>>,
    ) {
        let Some(island) = self.island.clone() else {
            return;
        };
        let summary = summary.unwrap_or_else(|| WaterSummary::of(&island));
        // A server keeps the water data (queries) but builds no surfaces.
        let server = self.server_active();
        let (sea, user) = (self.sea_enabled && !server, self.water_material.clone());
        let inland = self.inland_water_enabled && !server;
        self.with_parts(|p, parent| {
            p.water.island_changed(
                parent,
                &island,
                &summary,
                meshes,
                sea,
                inland,
                user.as_ref(),
            )
        });
        let [_, river, lake, sea_n] = summary.counts;
        self.last_stats.water = Some(WaterStats {
            river,
            lake,
            sea: sea_n,
            chunks: self.parts.water.visible_chunks(),
        });
        if island.field.heights.len() >= 1 << 20 {
            // Made on the worker: freed there too (see `free_in_background`).
            crate::island::worker::free_in_background(summary);
        }
    }

    /// Follow `sea_enabled` and `water_material` (every frame; cheap when unchanged).
    pub(super) fn sync_water(&mut self) {
        let ws = self.island.as_ref().map(|i| i.field.world_size);
        let (sea, user) = (self.sea_enabled, self.water_material.clone());
        self.with_parts(|p, parent| p.water.sync(parent, ws, sea, user.as_ref()));
    }

    /// Re-apply the material when `terrain_material` changed.
    pub(super) fn sync_material(&mut self) {
        if self.parts.chunks.is_empty() || !self.material.changed(self.terrain_material.as_ref()) {
            return;
        }
        let mat = self.material.resolve(self.terrain_material.as_ref());
        self.parts.chunks.apply_material(Some(mat));
        // A new ShaderMaterial gets the splat maps too.
        let mats = self
            .material
            .shader_materials(self.terrain_material.as_ref());
        self.splat.apply(&mats);
    }

    /// [method bake] / [method export_gltf].
    pub(super) fn bake_impl(&mut self, path: &str, target: bake::Target) -> Error {
        let what = match target {
            bake::Target::Scene => "bake",
            bake::Target::Gltf => "export_gltf",
        };
        let Some(island) = self.island.clone() else {
            godot_error!(
                "ProceduralIsland.{what}: nothing generated yet (call regenerate() first)"
            );
            return Error::ERR_UNCONFIGURED;
        };
        // The layer textures as they are drawn now.
        self.sync_layers();
        let input = bake::BakeInput {
            name: self.base().get_name().to_string(),
            island: &island,
            flat_shading: self.flat_shading,
            terrain_material: self.material.resolve(self.terrain_material.as_ref()),
            node: self.to_gd().upcast(),
        };
        let result = match target {
            bake::Target::Scene => bake::bake_scene(&input, path),
            bake::Target::Gltf => bake::export_gltf(&input, path),
        };
        match result {
            Ok(()) => Error::OK,
            Err((code, msg)) => {
                godot_error!("ProceduralIsland.{what}: {msg}");
                code
            }
        }
    }

    /// Follow `terrain_layers` (list, layer changes, material changes); cheap when unchanged.
    pub(super) fn sync_layers(&mut self) {
        if self.parts.chunks.is_empty() {
            return;
        }
        let mats = self
            .material
            .shader_materials(self.terrain_material.as_ref());
        let callable = Callable::from_object_method(&self.to_gd(), "_on_terrain_layer_changed");
        let layers = self.terrain_layers.clone();
        self.layers.sync(&layers, &callable, &mats);
        self.material.use_layer_textures(self.layers.textured());
    }

    /// Names of the eight splat layers for the brush's menu: the `terrain_layers` names where
    /// set, else the built-in ones; None when no layer is set.
    pub fn layer_names(&self) -> Option<[String; island_core::paint::LAYERS]> {
        if self.terrain_layers.iter_shared().all(|l| l.is_none()) {
            return None;
        }
        Some(terrain_layer::layer_names(&self.terrain_layers))
    }

    /// Per-frame LOD update.
    pub(super) fn lod_process(&mut self) {
        let t = Instant::now();
        if !self.lod_enabled {
            // The full-resolution chunks get their surfaces first (those built while LOD was
            // on have none), a frame budget at a time while the LOD nodes keep drawing; then
            // LOD is switched off.
            let ready = if self.is_generating() {
                !self.parts.chunks.missing_surfaces()
            } else {
                self.build_missing_surfaces(self.frame_budget_left() as f64)
            };
            if ready && self.parts.lod.is_active() {
                self.with_chunk_parts(|p, parent| p.lod.deactivate(parent, &mut p.chunks));
            }
            return;
        }
        if self.island.is_none() || self.is_generating() || self.parts.chunks.is_empty() {
            return;
        }
        let camera = if self.parts.lod.wants_camera() {
            lod::camera_position(&self.base())
        } else {
            None
        };
        let settings = self.lod_settings();
        let island = self.island.clone();
        if let Some(island) = island.as_ref() {
            self.with_chunk_parts(|p, parent| {
                let mut scene = LodScene {
                    parent,
                    island,
                    chunks: &mut p.chunks,
                };
                p.lod.process(&mut scene, &settings, camera, t);
            });
        }
        if !self.parts.lod.is_active() {
            // Invalid `lod_levels` (reported by the update): the full-resolution chunks are
            // drawn again, so they need their surfaces now.
            self.build_missing_surfaces(f64::INFINITY);
        }
    }

    /// Build the surfaces of the chunks that have none (built while LOD was on) for about
    /// `budget_ms` (at least one batch; infinite: all now). True when none is missing.
    pub(super) fn build_missing_surfaces(&mut self, budget_ms: f64) -> bool {
        if !self.parts.chunks.missing_surfaces() {
            return true;
        }
        let Some(island) = self.island.clone() else {
            return true;
        };
        let n = island.field.resolution;
        let cs = island.params.chunk_size as usize;
        if self.parts.chunks.len() != ((n - 1) / cs).pow(2) {
            return true;
        }
        let missing = self.parts.chunks.meshless();
        let flat = self.flat_shading;
        self.with_chunks(|pool, parent| {
            pool.build_surfaces(parent, &island, &missing, flat, budget_ms) == missing.len()
        })
    }

    /// After a generation: place every scatter layer and build its nodes; stats
    /// `scatter_counts` (per layer) and `scatter_ms` (placement and node build).
    pub(super) fn place_scatter(&mut self, params: &island_core::IslandParams) {
        let Some(island) = self.island.clone() else {
            return;
        };
        self.watch_scatter_layers();
        let specs = scatter_nodes::specs(&self.scatter_layers);
        let erase = self.scatter_erase_masks(specs.len());
        let (seed, cs) = (params.seed, params.chunk_size as usize);
        let stats = self.with_parts(|p, parent| {
            let counts = p.scatter.place_all(parent, &island, seed, cs, specs, erase);
            ScatterStats {
                counts,
                ms: Some(p.scatter.last_place_ms + p.scatter.last_build_ms),
                place_ms: Some(p.scatter.last_place_ms),
                frame_ms_max: None,
            }
        });
        self.last_stats.scatter = Some(stats);
    }

    /// Per frame: build the nodes of a background placement (then emit the end of the
    /// generation), or re-place the scatter layers whose `changed` signal fired, chunk by chunk
    /// within [member build_budget_ms].
    pub(super) fn scatter_process(&mut self) {
        let Some(island) = self.island.clone() else {
            return;
        };
        let budget = self.frame_budget_left();
        if self.parts.scatter.is_pending() {
            let serial = self.parts.job.serial();
            let (finished, fraction, stats) = self.with_parts(|p, parent| {
                let sc = &mut p.scatter;
                let step = sc.continue_build(parent, &island, serial, budget);
                let finished = matches!(step, ScatterProgress::Finished);
                let stats = ScatterStats {
                    counts: sc.counts(),
                    ms: Some(sc.last_place_ms + sc.last_build_ms),
                    place_ms: Some(sc.last_place_ms),
                    frame_ms_max: finished
                        .then(|| (sc.take_worst_frame_ms(), sc.worst_frame_cpu_ms)),
                };
                (finished, sc.fraction_done(), stats)
            });
            if !finished {
                // The scatter is the last part of the bar (after the chunks).
                let end = generation::CHUNKS_END_WITH_SCATTER;
                self.signals()
                    .generation_progress()
                    .emit(end + (1.0 - end) * fraction.min(0.999), "scatter");
            }
            if finished {
                self.last_stats.scatter = Some(stats);
                self.emit_done();
            }
            return;
        }
        if self.is_generating() {
            return;
        }
        self.watch_scatter_layers();
        if self.parts.scatter.has_changes() {
            let paint = self.splat_paint.clone();
            let n = island.field.resolution;
            self.parts
                .scatter
                .apply_changes(&self.scatter_layers, &island, |i| {
                    paint.as_ref().and_then(|p| p.bind().erase_mask_for(i, n))
                });
        }
        if !Engine::singleton().is_editor_hint() {
            let camera = self
                .base()
                .get_viewport()
                .and_then(|v| v.get_camera_3d())
                .map(|c| self.base().to_local(c.get_global_position()));
            self.with_parts(|p, parent| p.scatter.update_colliders(parent, camera, budget));
        }
        if self.parts.scatter.is_busy() {
            let finished = self.with_parts(|p, parent| {
                p.scatter
                    .run_queue(parent, &island, budget)
                    .then(|| p.scatter.counts())
            });
            if let Some(counts) = finished {
                self.last_stats.scatter_mut().counts = counts;
            }
        }
    }

    pub(super) fn import_impl(&mut self, path: &str) -> island_io::IoResult<()> {
        HeightmapFormat::from_path(path).map_err(|m| (Error::ERR_FILE_UNRECOGNIZED, m))?;
        let request = self
            .make_request()
            .map_err(|m| (Error::ERR_INVALID_PARAMETER, m))?;
        let heights = island_io::read_heightmap(&request.params, path)?;
        let prep =
            import_job(request, heights).map_err(|e| (Error::ERR_INVALID_DATA, e.to_string()))?;
        self.parts.job.abort();
        self.parts.job.end_series();
        // An import is a generation too: started, then progress "done" and finished.
        self.signals().generation_started().emit();
        let b =
            self.with_chunks(|pool, parent| generation::build_all(pool, parent, Box::new(prep)));
        self.finish(b);
        Ok(())
    }
}
