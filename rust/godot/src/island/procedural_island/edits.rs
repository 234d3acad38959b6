//! What `TerrainBrush` changes on a `ProceduralIsland`: the paint resource, scatter erase
//! masks and the sculpt layer (shown heights, chunk meshes and colliders under a dab).

use super::*;

/// For [`crate::brush::terrain_brush`]: the island data and its paint.
impl ProceduralIsland {
    /// For [`crate::island::runtime_queries`] and [`crate::island::navigation`]: the island and their state.
    pub(crate) fn runtime_parts(
        &self,
    ) -> (Option<Arc<Island>>, &crate::island::runtime_maps::Runtime) {
        (self.island.clone(), &self.runtime)
    }

    /// The generated island, if any.
    pub fn island(&self) -> Option<&Island> {
        self.island.as_deref()
    }

    /// The island's paint resource, created (and assigned to [member splat_paint]) when missing,
    /// and copied first when another island uses it (see [`ProceduralIsland::own_paint`]).
    pub fn paint_resource(&mut self) -> Gd<SplatPaint> {
        if self.splat_paint.is_none() {
            self.splat_paint = Some(SplatPaint::new_gd());
        }
        self.own_paint();
        self.splat_paint.clone().expect("set above")
    }

    /// Make [member splat_paint] this island's own: a paint that another live island uses
    /// (after `Node.duplicate()` or the editor's Duplicate both point at one resource) is
    /// replaced by a copy, so painting or resampling one island never changes the other. A
    /// paint marked `shared` is left shared.
    pub fn own_paint(&mut self) {
        let Some(paint) = self.splat_paint.clone() else {
            return;
        };
        let me = self.base().instance_id();
        let pid = paint.instance_id();
        let still_uses = |other: InstanceId| {
            Gd::<ProceduralIsland>::try_from_instance_id(other).is_ok_and(|o| {
                o.bind()
                    .splat_paint
                    .as_ref()
                    .is_some_and(|q| q.instance_id() == pid)
            })
        };
        let mine = paint.clone().bind_mut().claim(me, still_uses);
        if !mine {
            let copy = paint.bind().copy_for(me);
            self.splat_paint = Some(copy);
        }
    }

    /// Number of entries in [member scatter_layers].
    pub fn scatter_layer_count(&self) -> usize {
        self.scatter_layers.len()
    }

    /// [member splat_paint], if any (not created, not copied).
    pub fn splat_paint_ref(&self) -> Option<&Gd<SplatPaint>> {
        self.splat_paint.as_ref()
    }

    /// Scatter erase masks of layers `0..count` from [member splat_paint] at the island's
    /// resolution (none before a generation or without paint).
    pub(super) fn scatter_erase_masks(
        &self,
        count: usize,
    ) -> Vec<Option<island_core::scatter::EraseMask>> {
        match (&self.splat_paint, &self.island) {
            (Some(p), Some(i)) => p.bind().erase_masks_for(count, i.field.resolution),
            _ => Vec::new(),
        }
    }

    /// Whether [member server_mode] is in effect: colliders and queries only.
    pub fn server_active(&self) -> bool {
        match self.server_mode {
            Self::SERVER_MODE_ON => true,
            Self::SERVER_MODE_OFF => false,
            _ => crate::island::server_mode::auto_server_mode(),
        }
    }

    /// Re-place scatter layer `layer` in the chunks that `rect` (samples) touches after its erase
    /// mask in [member splat_paint] changed there; rebuilds only those chunks' MultiMeshes.
    pub fn scatter_erase_changed(&mut self, layer: usize, rect: Rect) -> usize {
        let Some(island) = self.island.clone() else {
            return 0;
        };
        let mask = self
            .splat_paint
            .as_ref()
            .and_then(|p| p.bind().erase_mask_for(layer, island.field.resolution));
        let (n, counts) = self.with_parts(|p, parent| {
            let n = p
                .scatter
                .refresh_erase(parent, &island, layer, mask.as_ref(), rect);
            (n, p.scatter.counts())
        });
        self.last_stats.scatter_mut().counts = counts;
        n
    }

    /// The sculpt layer changed (a stroke ended, an undo, a clear): generate the island with
    /// it, in the background when inside the scene tree (the shown terrain stays until the new
    /// one is built), else at once.
    pub fn sculpt_changed(&mut self) {
        if self.base().is_inside_tree() {
            self.regenerate_async();
        } else {
            self.regenerate();
        }
    }

    /// A sculpt stroke starts: a background generation still computing (the previous stroke's)
    /// is dropped quietly, so that its island does not replace the shown terrain (and this
    /// stroke's dabs on it) in the middle of the stroke; the stroke's end generates with every
    /// edit, and its `generation_finished` closes the series. A build already installing chunks
    /// goes on.
    pub fn sculpt_stroke_started(&mut self) {
        self.parts.job.cancel();
    }

    /// For the sculpt dabs: run `f` on the shown heightfield (the island's own copy), then
    /// rebuild the meshes of the chunks whose samples the returned rectangle (grown by one
    /// sample, for the normals) touches. Colliders keep the generated heights until
    /// [`ProceduralIsland::sculpt_colliders`] or the next generation.
    pub fn edit_shown_heights<T>(
        &mut self,
        f: impl FnOnce(&mut island_core::Heightfield) -> Result<(T, Rect), String>,
    ) -> Result<(T, Rect), String> {
        let island = self
            .island
            .as_mut()
            .ok_or("the island has not been generated yet")?;
        let (out, rect) = f(&mut Arc::make_mut(island).field)?;
        if !rect.is_empty() {
            self.refresh_chunk_meshes(rect);
        }
        Ok((out, rect))
    }

    /// The chunk indices (row-major) whose meshes or colliders read a sample of `rect` or a
    /// normal next to it (`island_core::scatter::chunks_to_rebuild`, which grows the rectangle
    /// by two samples).
    pub(super) fn chunks_touching(&self, rect: Rect) -> Vec<usize> {
        let Some(island) = self.island.as_deref() else {
            return Vec::new();
        };
        let n = island.field.resolution;
        let cs = island.params.chunk_size as usize;
        let per_side = (n - 1) / cs;
        island_core::scatter::chunks_to_rebuild(rect, n, cs)
            .into_iter()
            .map(|(cx, cz)| cz * per_side + cx)
            .collect()
    }

    /// Rebuild the meshes of the chunks `rect` touches from the shown heights and normals.
    pub(super) fn refresh_chunk_meshes(&mut self, rect: Rect) {
        let Some(island) = self.island.clone() else {
            return;
        };
        let n = island.field.resolution;
        if self.parts.chunks.is_empty() {
            return;
        }
        let cs = island.params.chunk_size as usize;
        if self.parts.chunks.len() != ((n - 1) / cs).pow(2) {
            return;
        }
        // The samples whose normals changed.
        let g = island_core::sculpt::grow(rect, 1, n);
        let flat = self.flat_shading;
        // Chunks without a surface (LOD on) get theirs when LOD is switched off.
        let chunks: Vec<usize> = self
            .chunks_touching(rect)
            .into_iter()
            .filter(|&i| self.parts.chunks.has_surface(i))
            .collect();
        let settings = self.lod_settings();
        self.with_chunk_parts(|p, parent| {
            let pool = &mut p.chunks;
            pool.build_surfaces(parent, &island, &chunks, flat, f64::INFINITY);
            // With LOD on, the shown LOD meshes over the dab follow too.
            let mut scene = LodScene {
                parent,
                island: &island,
                chunks: pool,
            };
            p.lod
                .refresh_samples(&mut scene, &settings, [g.x0, g.x0 + g.w, g.z0, g.z0 + g.h]);
        });
    }

    /// The LOD settings of the properties.
    pub(super) fn lod_settings(&self) -> LodSettings {
        LodSettings {
            levels: self.lod_levels,
            distance: self.lod_distance,
            collision_mode: self.collision_mode,
            budget_ms: self.lod_budget_ms,
            flat: self.flat_shading,
        }
    }

    /// Give the colliders of the chunks `rect` touches the shown heights (a sculpt stroke's
    /// end, before the regenerated island replaces them).
    pub fn sculpt_colliders(&mut self, rect: Rect) {
        let Some(island) = self.island.clone() else {
            return;
        };
        let (cs, per_side) = chunk_grid(&island);
        if !self.collision_enabled || self.parts.chunks.len() != per_side * per_side {
            return;
        }
        let chunks = self.chunks_touching(rect);
        self.with_chunks(|pool, parent| {
            for i in chunks {
                let col = island.field.chunk_collider(i % per_side, i / per_side, cs);
                pool.set_collider(parent, i, Some(&col));
            }
        });
    }

    /// Bring the chunks' colliders in line with `collision_enabled` (see `collider_sync`):
    /// from `collider_cursor` on, add each missing collider (from the island's heights, as the
    /// worker makes them) or remove each unwanted one, until the frame's budget is spent.
    /// Nothing while a generation installs its chunks (the install builds them as asked).
    /// Returns whether it changed a collider this frame.
    pub(super) fn sync_colliders(&mut self) -> bool {
        if !self.collider_sync || self.parts.job.is_building() {
            return false;
        }
        let Some(island) = self.island.clone() else {
            self.collider_sync = false;
            return false;
        };
        let (cs, per_side) = chunk_grid(&island);
        let total = per_side * per_side;
        if self.parts.chunks.len() != total {
            self.collider_sync = false;
            return false;
        }
        let on = self.collision_enabled;
        let budget = self.frame_budget_left() as f64;
        let start = Instant::now();
        let mut cursor = self.collider_cursor.min(total);
        let mut changed = false;
        let settings = self.lod_settings();
        self.with_chunk_parts(|p, parent| {
            let mut dearest = 0.0f64;
            while cursor < total {
                if p.chunks.has_collider(cursor) == on {
                    cursor += 1;
                    continue;
                }
                // At least one a frame, so a zero budget still gets there.
                if changed && start.elapsed().as_secs_f64() * 1e3 + dearest > budget {
                    break;
                }
                let t = Instant::now();
                if on {
                    let col = island
                        .field
                        .chunk_collider(cursor % per_side, cursor / per_side, cs);
                    p.chunks.set_collider(parent, cursor, Some(&col));
                } else {
                    p.chunks.set_collider(parent, cursor, None);
                }
                dearest = dearest.max(t.elapsed().as_secs_f64() * 1e3);
                changed = true;
                cursor += 1;
            }
            if cursor == total && on && changed {
                // LOD with `collision_mode` NEAR disables those away from the camera again.
                let mut scene = LodScene {
                    parent,
                    island: &island,
                    chunks: &mut p.chunks,
                };
                p.lod.reapply_colliders(&mut scene, &settings);
            }
        });
        self.collider_cursor = cursor;
        if cursor == total {
            self.collider_sync = false;
            self.collider_cursor = 0;
        }
        changed
    }

    /// Whether every chunk of the generated island has its collider: `collision_enabled`, no
    /// generation installing and the colliders all built (see [`Self::sync_colliders`]).
    pub fn colliders_ready(&self) -> bool {
        let Some(island) = self.island.as_deref() else {
            return false;
        };
        if !self.collision_enabled || self.parts.job.is_building() {
            return false;
        }
        let (_, per_side) = chunk_grid(island);
        self.parts.chunks.len() == per_side * per_side
            && (0..per_side * per_side).all(|i| self.parts.chunks.has_collider(i))
    }

    /// Recompose the splat maps in `rect` (None: everything) after the paint changed there.
    pub fn update_splat_maps(&mut self, rect: Option<Rect>) {
        if self.server_active() {
            return;
        }
        let Some(island) = self.island.as_ref() else {
            return;
        };
        let mats = self
            .material
            .shader_materials(self.terrain_material.as_ref());
        self.splat
            .update(island, self.splat_paint.as_ref(), rect, &mats, None);
    }
}

/// The chunk size and the chunks per side of `island`'s chunk grid.
fn chunk_grid(island: &Island) -> (usize, usize) {
    let cs = island.params.chunk_size as usize;
    (cs, (island.field.resolution - 1) / cs)
}
