//! Read-only `#[func]`s of `ProceduralIsland`: heights, normals, biomes, water, images,
//! scatter positions, preview, framing and LOD statistics.

use super::*;

#[godot_api(secondary)]
impl ProceduralIsland {
    /// Terrain height in metres at node-local `(x, z)`, exactly on the rendered and collider
    /// triangles; clamped to the map edge. 0 when no island has been generated yet.
    #[func]
    pub fn get_height_at(&self, x: f32, z: f32) -> f32 {
        self.island
            .as_ref()
            .map_or(0.0, |i| i.field.height_at(x, z))
    }

    /// Smooth surface normal at node-local `(x, z)`. `Vector3.UP` when there is no island yet.
    #[func]
    pub fn get_normal_at(&self, x: f32, z: f32) -> Vector3 {
        self.island.as_ref().map_or(Vector3::UP, |i| {
            let n = i.field.normal_at(x, z);
            Vector3::new(n[0], n[1], n[2])
        })
    }

    /// Index of the biome at node-local `(x, z)` (nearest sample), or -1 when there is no
    /// island or it was imported from a heightmap.
    #[func]
    pub fn get_biome_at(&self, x: f32, z: f32) -> i32 {
        self.island
            .as_ref()
            .and_then(|i| i.biomes.get(i.field.nearest_index(x, z)))
            .map_or(-1, |&b| b as i32)
    }

    /// Water surface height in metres at node-local `(x, z)`: 0 over the sea, the surface of the
    /// drawn river or lake mesh there, NaN where the nearest sample is dry, outside the map, or
    /// when no island has been generated.
    #[func]
    pub fn get_water_level_at(&self, x: f32, z: f32) -> f32 {
        self.island.as_ref().map_or(f32::NAN, |i| {
            water_nodes::water_level_at(&i.water, i.field.world_size, x, z)
        })
    }

    /// What covers each sample as a `resolution × resolution` `Image.FORMAT_R8` image: 0 dry,
    /// 1 river, 2 lake, 3 sea (pixel `(x, z)`), or null when there is no island yet.
    #[func]
    pub fn get_water_image(&self) -> Option<Gd<Image>> {
        water_nodes::water_image(self.island.as_ref()?)
    }

    /// The heights as a `resolution × resolution` `Image.FORMAT_RF` image in metres (pixel
    /// `(x, z)`), or null when there is no island yet.
    #[func]
    pub fn get_heightmap_image(&self) -> Option<Gd<Image>> {
        island_io::heightmap_image(self.island.as_ref()?)
    }

    /// The generated splat weights of layers 0..3 as a `resolution × resolution`
    /// `Image.FORMAT_RGBA8` image (r = sand, g = grass, b = rock, a = snow), without the paint
    /// and without a road's share on layers 4..7 (see [method get_splat_map_image]), or null
    /// when there is no island yet.
    #[func]
    pub fn get_splat_image(&self) -> Option<Gd<Image>> {
        island_io::splat_image(self.island.as_ref()?)
    }

    /// The eight splat weights (sand, grass, rock, snow, then the four user layers 4..7;
    /// summing to 1) at node-local `(x, z)` metres, bilinearly interpolated between samples and
    /// including the paint of [member splat_paint]. Empty when no island has been generated.
    #[func]
    pub fn get_splat_weights_at(&self, x: f32, z: f32) -> PackedFloat32Array {
        match self.island.as_ref() {
            Some(island) => splat_maps::weights_at(island, self.splat_paint.as_ref(), x, z),
            None => PackedFloat32Array::new(),
        }
    }

    /// Splat map `index` (0: layers 0..3 in r, g, b, a; 1: layers 4..7) as a
    /// `resolution × resolution` RGBA8 image including the paint (a copy), or null when there
    /// is no island or the index is not 0 or 1. Each sample's eight bytes sum to 255.
    #[func]
    pub fn get_splat_map_image(&self, index: i32) -> Option<Gd<Image>> {
        self.splat.image(index)
    }

    /// Splat map texture `index` (0 or 1) that the terrain shader reads (`splat_map_0`,
    /// `splat_map_1`), or null. While no user layer (4..7) is painted, map 1 is all zeros and
    /// its texture is 1×1 black (it gets the island's resolution with the first paint, or with
    /// a road painted with one of them, [member IslandPath.splat_layer]).
    #[func]
    pub fn get_splat_map_texture(&self, index: i32) -> Option<Gd<ImageTexture>> {
        self.splat.texture(index)
    }

    /// Node-local positions of the instances of scatter layer `layer` (index into
    /// [member scatter_layers]); empty when out of range, null or invalid, or before a generation.
    #[func]
    pub fn get_scatter_positions(&self, layer: i32) -> PackedVector3Array {
        usize::try_from(layer).map_or_else(
            |_| PackedVector3Array::new(),
            |i| self.parts.scatter.positions(i),
        )
    }

    /// Number of instances of scatter layer `layer` (0 when out of range, null or invalid).
    #[func]
    pub fn get_scatter_count(&self, layer: i32) -> i64 {
        usize::try_from(layer).map_or(0, |i| self.parts.scatter.count(i))
    }

    /// The shaded top-down relief of the island (the CLI's `preview.png`; the inspector header
    /// shows it) as a `size × size` `Image.FORMAT_RGB8` image: map x to the right, map z down,
    /// the sea tinted by depth, land coloured by the generated splat and lit from the
    /// north-west. Null when no island has been generated yet, or (with an error) when `size` is
    /// not 1..8192.
    #[func]
    pub fn get_preview_image(&self, size: i32) -> Option<Gd<Image>> {
        let island = self.island.as_deref()?;
        crate::editor::editor_view::preview_image(island, size)
            .map_err(|e| godot_error!("ProceduralIsland.get_preview_image({size}): {e}"))
            .ok()
    }

    /// Node-local bounds of the generated terrain: x and z span the map
    /// (`±world_size / 2`), y the lowest to the highest height. An empty `AABB` before the first
    /// generation.
    #[func]
    pub fn get_terrain_aabb(&self) -> Aabb {
        self.island
            .as_deref()
            .map_or(Aabb::default(), crate::editor::editor_view::local_aabb)
    }

    /// A camera transform (global) that shows the whole island from above at an angle: looking
    /// at the centre of the terrain's global bounds from the south-east, `pitch_degrees` above
    /// the horizon, far enough that the bounds fit a perspective camera with vertical field of
    /// view `fov_degrees` and `aspect` (width / height). What the editor's "Frame island"
    /// does. Uses the map's square with y 0..[member max_height] before the first generation.
    #[func]
    pub fn get_frame_transform(
        &self,
        fov_degrees: f32,
        aspect: f32,
        pitch_degrees: f32,
    ) -> Transform3D {
        let local = match self.island.as_deref() {
            Some(i) => crate::editor::editor_view::local_aabb(i),
            None => {
                let half = self.world_size.max(1.0) * 0.5;
                Aabb::new(
                    Vector3::new(-half, 0.0, -half),
                    Vector3::new(2.0 * half, self.max_height.max(0.0), 2.0 * half),
                )
            }
        };
        let xf = if self.base().is_inside_tree() {
            self.base().get_global_transform()
        } else {
            self.base().get_transform()
        };
        crate::editor::editor_view::frame_transform(
            crate::editor::editor_view::global_aabb(xf, local),
            fov_degrees,
            aspect,
            pitch_degrees,
        )
        .0
    }

    /// LOD statistics: `enabled`, `levels` (levels in use), `leaves` (visible LOD chunks),
    /// `pool_size` (pooled LOD nodes, never freed while the camera moves), `pending` (a new
    /// selection is still being built; the previous one stays visible), `meshes_built` (total),
    /// `last_update_ms` / `max_update_ms` (time spent in the LOD update of the last frame / the
    /// worst frame so far), `last_update_cpu_ms` / `max_update_cpu_ms` (the same in CPU time of
    /// the main thread: excludes time the OS gave to other processes; NaN where unknown),
    /// `mesh_build_ms` (running estimate of one chunk mesh build and upload),
    /// `level_counts` (leaves per level).
    #[func]
    pub fn get_lod_stats(&self) -> VarDictionary {
        self.parts.lod.stats(self.lod_enabled)
    }

    /// Reset `max_update_ms` of [method get_lod_stats].
    #[func]
    pub fn reset_lod_stats(&mut self) {
        self.parts.lod.reset_stats();
    }

    /// The visible LOD chunks: one Dictionary each with `node` (the MeshInstance3D), `level`,
    /// `x`, `z` (index among the nodes of that level), `rect` (Rect2 of node-local x/z metres) and
    /// `stitch` (bits 1 = -x, 2 = +x, 4 = -z, 8 = +z: edges next to a coarser chunk, whose odd
    /// vertices lie on the coarser edge). Empty when LOD is off.
    #[func]
    pub fn get_lod_chunks(&self) -> VarArray {
        self.parts.lod.chunks()
    }
}
