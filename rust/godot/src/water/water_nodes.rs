//! The island's water in the scene: the sea surface (one internal `MeshInstance3D` at y = 0
//! reaching far past the island towards the horizon) and the river and lake surfaces (one
//! internal `MeshInstance3D` per chunk that holds river or lake samples, pooled between
//! regenerates), all read from `Island::water`.
//!
//! The plain-data part (no Godot objects) builds the meshes and answers the water level:
//! [`chunk_water_mesh`], [`water_level_at`], [`sea_mesh`]; the depth texture bytes and counts
//! come from [`crate::water::water_summary`] (made by the background generation).
//!
//! A river/lake cell (a grid cell with at least one RIVER or LAKE corner) is drawn as two
//! triangles split like the terrain's cells; each corner sits at its water level, a dry corner at
//! the mean level of the cell's wet corners (so the surface runs flat into the bank, which the
//! terrain hides). [`water_level_at`] interpolates the same triangles, so it lies exactly on the
//! drawn surface.
//!
//! The default material (`res://addons/procedural_island/water.gdshader`, or the copy compiled
//! in) tints by water depth from a small `R8` depth texture ([`depth_bytes`](crate::water::water_summary::depth_bytes)) instead of the
//! depth buffer, so it looks the same in the Forward+, Mobile and Compatibility renderers.

use crate::water::water_summary::{WaterSummary, DEPTH_RANGE};
use godot::classes::geometry_instance_3d::ShadowCastingSetting;
use godot::classes::image::Format as ImageFormat;
use godot::classes::mesh::{ArrayType, PrimitiveType};
use godot::classes::node::InternalMode;
use godot::classes::{
    ArrayMesh, Image, ImageTexture, Material, MeshInstance3D, Node3D, ShaderMaterial,
};
use godot::prelude::*;
use island_core::water::{Water, DRY, LAKE, RIVER, SEA};
use island_core::Island;

/// Where the addon keeps the default water shader.
pub const SHADER_PATH: &str = "res://addons/procedural_island/water.gdshader";
/// Built-in copy of the water shader, used when the addon file cannot be loaded.
pub const SHADER_CODE: &str =
    include_str!("../../../../godot_project/addons/procedural_island/water.gdshader");

/// A triangle mesh in node-local metres (plain data).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WaterMesh {
    pub positions: Vec<[f32; 3]>,
    pub indices: Vec<u32>,
}

impl WaterMesh {
    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }
}

/// Whether `kind` is drawn by the river/lake meshes (the sea has its own plane).
fn inland(kind: u8) -> bool {
    kind == RIVER || kind == LAKE
}

/// Corner levels (00, 10, 01, 11) of cell `(ix, iz)` when it holds a river or lake corner:
/// wet corners at their level, dry ones at the mean of the wet ones.
fn cell_levels(water: &Water, ix: usize, iz: usize) -> Option<[f32; 4]> {
    let n = water.resolution;
    let idx = [
        iz * n + ix,
        iz * n + ix + 1,
        (iz + 1) * n + ix,
        (iz + 1) * n + ix + 1,
    ];
    if !idx.iter().any(|&i| inland(water.kind[i])) {
        return None;
    }
    let wet = |i: usize| water.kind[i] != DRY && water.level[i].is_finite();
    let (mut sum, mut count) = (0.0f32, 0u32);
    for &i in &idx {
        if wet(i) {
            sum += water.level[i];
            count += 1;
        }
    }
    if count == 0 {
        return None;
    }
    let mean = sum / count as f32;
    Some(idx.map(|i| if wet(i) { water.level[i] } else { mean }))
}

/// The river and lake surface of chunk `(cx, cz)` (`cs` cells per side) of a `world_size` map.
/// Empty when the chunk holds no river or lake sample.
pub fn chunk_water_mesh(
    water: &Water,
    world_size: f32,
    cx: usize,
    cz: usize,
    cs: usize,
) -> WaterMesh {
    let n = water.resolution;
    let mut m = WaterMesh::default();
    if n < 2 || water.kind.len() != n * n || water.level.len() != n * n {
        return m;
    }
    let s = world_size / (n - 1) as f32;
    let h = world_size * 0.5;
    let (x0, z0) = (cx * cs, cz * cs);
    let x1 = (x0 + cs).min(n - 1);
    if x0 >= x1 {
        return m;
    }
    for iz in z0..(z0 + cs).min(n - 1) {
        // Most rows of a chunk hold no river or lake corner: skip them by a scan of the two
        // rows' kinds (the cells' corners).
        let row = |z: usize| &water.kind[z * n + x0..=z * n + x1];
        if !row(iz).iter().chain(row(iz + 1)).any(|&k| inland(k)) {
            continue;
        }
        for ix in x0..x1 {
            let Some(l) = cell_levels(water, ix, iz) else {
                continue;
            };
            let base = m.positions.len() as u32;
            for (k, (dx, dz)) in [(0, 0), (1, 0), (0, 1), (1, 1)].into_iter().enumerate() {
                m.positions
                    .push([(ix + dx) as f32 * s - h, l[k], (iz + dz) as f32 * s - h]);
            }
            // Split along (10)-(01) like the terrain, clockwise seen from above.
            m.indices
                .extend_from_slice(&[base, base + 1, base + 2, base + 1, base + 3, base + 2]);
        }
    }
    m
}

/// Chunks per side of `island` in chunks of `cs` cells (0 when `cs` is 0).
fn chunks_per_side(island: &Island, cs: usize) -> usize {
    (island.field.resolution - 1).checked_div(cs).unwrap_or(0)
}

/// Column and row of chunk `i` (row-major) of `island`'s chunks (`params.chunk_size` cells).
fn chunk_column_row(island: &Island, i: usize) -> (usize, usize) {
    let per_side = chunks_per_side(island, island.params.chunk_size as usize).max(1);
    (i % per_side, i / per_side)
}

/// [`chunk_water_mesh`] of every chunk (`cs` cells per side) of `island`, row-major, on the
/// rayon pool (plain data, for worker threads).
pub fn chunk_water_meshes(island: &Island, cs: usize) -> Vec<WaterMesh> {
    use rayon::prelude::*;
    let per_side = chunks_per_side(island, cs);
    (0..per_side * per_side)
        .into_par_iter()
        .map(|i| {
            let (cx, cz) = (i % per_side, i / per_side);
            chunk_water_mesh(&island.water, island.field.world_size, cx, cz, cs)
        })
        .collect()
}

/// Water surface height at node-local `(x, z)` metres: NaN where the nearest sample is dry (or
/// outside the map), the sea level over the sea, and on river/lake samples the height of the
/// drawn river/lake surface there.
pub fn water_level_at(water: &Water, world_size: f32, x: f32, z: f32) -> f32 {
    let n = water.resolution;
    if n < 2 || water.kind.len() != n * n || water.level.len() != n * n {
        return f32::NAN;
    }
    let s = world_size / (n - 1) as f32;
    let gx = (x + world_size * 0.5) / s;
    let gz = (z + world_size * 0.5) / s;
    let max = (n - 1) as f32;
    if !(gx >= 0.0 && gz >= 0.0 && gx <= max && gz <= max) {
        return f32::NAN;
    }
    let nearest = gz.round() as usize * n + gx.round() as usize;
    match water.kind[nearest] {
        DRY => f32::NAN,
        SEA => water.level[nearest],
        _ => {
            let ix = (gx as usize).min(n - 2);
            let iz = (gz as usize).min(n - 2);
            let (fx, fz) = (gx - ix as f32, gz - iz as f32);
            match cell_levels(water, ix, iz) {
                Some([l00, l10, l01, l11]) => {
                    if fx + fz <= 1.0 {
                        l00 + fx * (l10 - l00) + fz * (l01 - l00)
                    } else {
                        l11 + (1.0 - fx) * (l01 - l11) + (1.0 - fz) * (l10 - l11)
                    }
                }
                None => water.level[nearest],
            }
        }
    }
}

/// The sea surface at y = 0: a grid over `[-world_size, world_size]²` (twice the island) and
/// square rings each three times wider than the last, out to `max(50·world_size, 50 km)`.
pub fn sea_mesh(world_size: f32) -> WaterMesh {
    let mut m = WaterMesh::default();
    let r0 = world_size.max(1.0);
    const GRID: usize = 16;
    for j in 0..=GRID {
        for i in 0..=GRID {
            let t = |k: usize| -r0 + 2.0 * r0 * k as f32 / GRID as f32;
            m.positions.push([t(i), 0.0, t(j)]);
        }
    }
    let v = GRID as u32 + 1;
    for j in 0..GRID as u32 {
        for i in 0..GRID as u32 {
            let a = j * v + i;
            m.indices
                .extend_from_slice(&[a, a + 1, a + v, a + 1, a + v + 1, a + v]);
        }
    }
    let far = (world_size * 50.0).max(50_000.0);
    let mut a = r0;
    while a < far {
        let b = (a * 3.0).min(far);
        // Corners of the inner and outer squares, counter-clockwise in (x, z).
        let sq = |r: f32| [[-r, -r], [r, -r], [r, r], [-r, r]];
        let (inner, outer) = (sq(a), sq(b));
        for k in 0..4 {
            let k2 = (k + 1) % 4;
            let base = m.positions.len() as u32;
            for p in [inner[k], inner[k2], outer[k], outer[k2]] {
                m.positions.push([p[0], 0.0, p[1]]);
            }
            m.indices
                .extend_from_slice(&[base, base + 2, base + 1, base + 1, base + 2, base + 3]);
        }
        a = b;
    }
    m
}

/// The `add_surface_from_arrays` arrays of a water mesh (normals up).
fn arrays(m: &WaterMesh) -> VarArray {
    let v = crate::island::surface::vec3_array(&m.positions);
    let nrm = vec![Vector3::UP; v.len()];
    let idx: Vec<i32> = m.indices.iter().map(|&i| i as i32).collect();
    let mut a = VarArray::new();
    a.resize(ArrayType::MAX.ord() as usize, &Variant::nil());
    a.set(ArrayType::VERTEX.ord() as usize, &v.to_variant());
    a.set(
        ArrayType::NORMAL.ord() as usize,
        &PackedVector3Array::from(&nrm[..]).to_variant(),
    );
    a.set(
        ArrayType::INDEX.ord() as usize,
        &PackedInt32Array::from(&idx[..]).to_variant(),
    );
    a
}

/// One pooled water node.
struct WaterNode {
    instance: Gd<MeshInstance3D>,
    mesh: Gd<ArrayMesh>,
    /// Digest of the mesh last set (an equal one is not uploaded again).
    content: Option<u128>,
}

impl WaterNode {
    fn new(parent: &mut Gd<Node3D>, name: &str, material: &Gd<Material>) -> WaterNode {
        let mut instance = MeshInstance3D::new_alloc();
        let mesh = ArrayMesh::new_gd();
        instance.set_mesh(&mesh);
        instance.set_name(name);
        instance.set_cast_shadows_setting(ShadowCastingSetting::OFF);
        instance.set_material_override(material);
        parent
            .add_child_ex(&instance)
            .internal(InternalMode::BACK)
            .done();
        WaterNode {
            instance,
            mesh,
            content: None,
        }
    }

    fn set(&mut self, m: &WaterMesh) {
        let digest = island_core::hash::digest(&[
            bytemuck::cast_slice(&m.positions),
            bytemuck::cast_slice(&m.indices),
        ]);
        if self.content == Some(digest) && self.mesh.is_instance_valid() {
            return;
        }
        self.content = Some(digest);
        self.mesh.clear_surfaces();
        if !m.is_empty() {
            self.mesh
                .add_surface_from_arrays(PrimitiveType::TRIANGLES, &arrays(m));
        }
        self.instance.set_visible(!m.is_empty());
    }

    fn free(self, parent: &mut Gd<Node3D>) {
        let WaterNode { mut instance, .. } = self;
        if instance.is_instance_valid() {
            parent.remove_child(&instance);
            instance.queue_free();
        }
    }

    fn valid(&self) -> bool {
        self.instance.is_instance_valid()
    }
}

/// The node's water nodes and material (see the module doc).
#[derive(Default)]
pub struct WaterNodes {
    sea: Option<WaterNode>,
    /// World size the sea mesh was built for.
    sea_size: Option<f32>,
    /// River/lake node per chunk index (None: the chunk has no river or lake yet).
    chunks: Vec<Option<WaterNode>>,
    /// The built-in water material (created on first use).
    default: Option<Gd<ShaderMaterial>>,
    /// `water_material` last applied (instance id, None for the default).
    applied: Option<Option<InstanceId>>,
    /// Parameters the shader needs (map rect, outside depth), with the depth texture.
    depth: Option<Gd<ImageTexture>>,
    rect: [f32; 3],
    outside_depth: f32,
    /// The chunk build already made the river/lake surfaces of the island being installed.
    chunks_ready: bool,
}

impl WaterNodes {
    /// The material of every water node: `user` or the built-in one.
    fn material(&mut self, user: Option<&Gd<Material>>) -> Gd<Material> {
        if let Some(m) = user {
            return m.clone();
        }
        self.default
            .get_or_insert_with(|| {
                crate::island::material::builtin_shader_material(SHADER_PATH, SHADER_CODE)
            })
            .clone()
            .upcast()
    }

    /// Give the shader its depth texture and map rectangle (the default material and a user
    /// `ShaderMaterial`).
    fn set_shader_params(&mut self, user: Option<&Gd<Material>>) {
        let mut mats: Vec<Gd<ShaderMaterial>> = self.default.iter().cloned().collect();
        if let Some(t) = user.and_then(|t| t.clone().try_cast::<ShaderMaterial>().ok()) {
            mats.push(t);
        }
        for mut m in mats {
            if let Some(tex) = &self.depth {
                m.set_shader_parameter("water_depth", &tex.to_variant());
            }
            m.set_shader_parameter(
                "map_rect",
                &Vector3::new(self.rect[0], self.rect[1], self.rect[2]).to_variant(),
            );
            m.set_shader_parameter("depth_range", &DEPTH_RANGE.to_variant());
            m.set_shader_parameter("outside_depth", &self.outside_depth.to_variant());
        }
    }

    /// After a (re)generation: the depth texture, the river/lake chunk meshes when
    /// `inland_enabled` (reusing pooled nodes; unless the budgeted chunk build already made them;
    /// `meshes`: every chunk's, made on worker threads by [`chunk_water_meshes`], else made
    /// here) and the sea when enabled.
    #[allow(clippy::too_many_arguments)]
    pub fn island_changed(
        &mut self,
        parent: &mut Gd<Node3D>,
        island: &Island,
        summary: &WaterSummary,
        meshes: Option<Vec<WaterMesh>>,
        sea_enabled: bool,
        inland_enabled: bool,
        user: Option<&Gd<Material>>,
    ) {
        // Create the default material first so it gets the shader parameters below.
        self.material(user);
        self.applied = Some(user.map(|m| m.instance_id()));
        let ws = island.field.world_size;
        let side = summary.side;
        if let Some(img) = Image::create_from_data(
            side as i32,
            side as i32,
            false,
            ImageFormat::R8,
            &PackedByteArray::from(summary.depth.as_slice()),
        ) {
            match &mut self.depth {
                Some(tex) if tex.get_size() == Vector2::new(side as f32, side as f32) => {
                    tex.update(&img)
                }
                _ => self.depth = ImageTexture::create_from_image(&img),
            }
        }
        self.rect = [-ws * 0.5, -ws * 0.5, ws];
        self.outside_depth = island.params.coast.sea_depth;
        self.set_shader_params(user);

        if !inland_enabled {
            // River and lake surfaces switched off: no nodes for them.
            self.chunks_ready = false;
            for c in std::mem::take(&mut self.chunks).into_iter().flatten() {
                c.free(parent);
            }
        } else if !std::mem::take(&mut self.chunks_ready) {
            let count = self.prepare_pool(parent, island);
            if let Some(meshes) = meshes.filter(|m| m.len() == count) {
                for (i, m) in meshes.iter().enumerate() {
                    self.set_chunk(parent, island, i, m, user);
                }
            } else if island.water.kind.iter().any(|&k| inland(k)) {
                for i in 0..count {
                    self.build_chunk(parent, island, i, user);
                }
            } else {
                // Sea only: hide every pooled river/lake node at once.
                for node in self.chunks.iter_mut().flatten() {
                    node.set(&WaterMesh::default());
                }
            }
        }
        self.sync(parent, Some(ws), sea_enabled, user);
    }

    /// Size the pool for `island`'s chunk count (freeing it when the count changed or a node
    /// was freed by someone else); the chunk count.
    fn prepare_pool(&mut self, parent: &mut Gd<Node3D>, island: &Island) -> usize {
        let per_side = chunks_per_side(island, island.params.chunk_size as usize);
        let count = per_side * per_side;
        if self.chunks.len() != count || self.chunks.iter().flatten().any(|c| !c.valid()) {
            for c in std::mem::take(&mut self.chunks).into_iter().flatten() {
                c.free(parent);
            }
        }
        self.chunks.resize_with(count, || None);
        count
    }

    /// Build the river/lake surface of chunk `i` of `island` (during the budgeted chunk build of
    /// `regenerate_async`, right after the terrain chunk; see [`Self::chunks_built`]).
    pub fn build_chunk(
        &mut self,
        parent: &mut Gd<Node3D>,
        island: &Island,
        i: usize,
        user: Option<&Gd<Material>>,
    ) {
        if i == 0 {
            self.prepare_pool(parent, island);
        }
        if i >= self.chunks.len() {
            return;
        }
        let (cx, cz) = chunk_column_row(island, i);
        let cs = island.params.chunk_size as usize;
        let m = chunk_water_mesh(&island.water, island.field.world_size, cx, cz, cs);
        self.set_chunk(parent, island, i, &m, user);
    }

    /// Give chunk `i` of `island` the river/lake surface `m` (its pooled node, a new one when it
    /// has water and none, nothing when it has neither).
    fn set_chunk(
        &mut self,
        parent: &mut Gd<Node3D>,
        island: &Island,
        i: usize,
        m: &WaterMesh,
        user: Option<&Gd<Material>>,
    ) {
        if i >= self.chunks.len() {
            return;
        }
        if self.chunks[i].as_ref().is_some_and(|c| !c.valid()) {
            self.chunks[i] = None;
        }
        match &mut self.chunks[i] {
            Some(node) => node.set(m),
            None if !m.is_empty() => {
                let mat = self.material(user);
                let (cx, cz) = chunk_column_row(island, i);
                let mut node = WaterNode::new(parent, &format!("Water_{cx}_{cz}"), &mat);
                node.set(m);
                self.chunks[i] = Some(node);
            }
            None => {}
        }
    }

    /// Every chunk's river/lake surface was built by [`Self::build_chunk`]: the next
    /// [`Self::island_changed`] keeps them.
    pub fn chunks_built(&mut self) {
        self.chunks_ready = true;
    }

    /// Bring the sea node and the materials in line with `sea_enabled` and `water_material`
    /// (cheap when nothing changed; called every frame). `world_size`: of the current island.
    pub fn sync(
        &mut self,
        parent: &mut Gd<Node3D>,
        world_size: Option<f32>,
        sea_enabled: bool,
        user: Option<&Gd<Material>>,
    ) {
        let id = Some(user.map(|m| m.instance_id()));
        if self.applied != id {
            self.applied = id;
            let mat = self.material(user);
            self.set_shader_params(user);
            for node in self.sea.iter_mut().chain(self.chunks.iter_mut().flatten()) {
                if node.valid() {
                    node.instance.set_material_override(&mat);
                }
            }
        }
        if self.sea.as_ref().is_some_and(|s| !s.valid()) {
            self.sea = None;
            self.sea_size = None;
        }
        let want = sea_enabled && world_size.is_some();
        if !want {
            if let Some(sea) = self.sea.take() {
                sea.free(parent);
            }
            self.sea_size = None;
        } else if self.sea.is_none() || self.sea_size != world_size {
            let ws = world_size.unwrap_or(1.0);
            let mat = self.material(user);
            let sea = self
                .sea
                .get_or_insert_with(|| WaterNode::new(parent, "Sea", &mat));
            sea.set(&sea_mesh(ws));
            self.sea_size = world_size;
        }
    }

    /// Whether the sea node exists (statistics).
    pub fn has_sea(&self) -> bool {
        self.sea.as_ref().is_some_and(|s| s.valid())
    }

    /// River/lake chunk nodes drawn now.
    pub fn visible_chunks(&self) -> usize {
        self.chunks
            .iter()
            .flatten()
            .filter(|c| c.valid() && c.instance.is_visible())
            .count()
    }
}

/// The water kinds as a `resolution × resolution` `FORMAT_R8` image (0 dry, 1 river, 2 lake,
/// 3 sea).
pub fn water_image(island: &Island) -> Option<Gd<Image>> {
    let n = island.field.resolution;
    let kind = &island.water.kind;
    let bytes: Vec<u8> = if kind.len() == n * n {
        kind.clone()
    } else {
        vec![DRY; n * n]
    };
    Image::create_from_data(
        n as i32,
        n as i32,
        false,
        ImageFormat::R8,
        &PackedByteArray::from(bytes),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 5×5 samples on a 4 m map (1 m spacing): a lake at 2 m in the top-left 2×2 samples, a
    /// river sloping from 1.5 to 0.5 m down column 3, sea on the last row, dry elsewhere.
    fn sample_water() -> Water {
        let n = 5;
        let mut w = Water {
            resolution: n,
            level: vec![f32::NAN; n * n],
            kind: vec![DRY; n * n],
        };
        for (x, z) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
            w.kind[z * n + x] = LAKE;
            w.level[z * n + x] = 2.0;
        }
        for z in 0..4 {
            w.kind[z * n + 3] = RIVER;
            w.level[z * n + 3] = 1.5 - z as f32 / 3.0;
        }
        for x in 0..n {
            w.kind[4 * n + x] = SEA;
            w.level[4 * n + x] = 0.0;
        }
        w
    }

    #[test]
    fn mesh_covers_only_cells_with_river_or_lake_at_their_level() {
        let w = sample_water();
        let m = chunk_water_mesh(&w, 4.0, 0, 0, 4);
        assert_eq!(m.indices.len() % 6, 0);
        let cells = m.indices.len() / 6;
        // Cells touching a lake or river sample: lake (0,0),(1,0),(0,1),(1,1) and the river
        // cells of columns 2 and 3 in rows 0..3, without repeats: (0..=1, 0..=1) + (2..=3, 0..=3).
        assert_eq!(cells, 4 + 8);
        for p in &m.positions {
            assert!(p[1].is_finite());
            let (ix, iz) = ((p[0] + 2.0).round() as usize, (p[2] + 2.0).round() as usize);
            let i = iz * 5 + ix;
            if w.kind[i] != DRY {
                assert_eq!(p[1], w.level[i], "wet vertex at its level ({ix}, {iz})");
            }
        }
        // Lake cell (0, 0): flat at 2 m.
        assert!(m.positions[..4].iter().all(|p| p[1] == 2.0));
        // No cell is entirely dry or entirely sea.
        for q in m.positions.chunks(4) {
            let any_inland = q.iter().any(|p| {
                let (ix, iz) = ((p[0] + 2.0).round() as usize, (p[2] + 2.0).round() as usize);
                inland(w.kind[iz * 5 + ix])
            });
            assert!(any_inland);
        }
        // Chunks: 2-cell chunks split the same cells.
        let total: usize = (0..4)
            .map(|i| chunk_water_mesh(&w, 4.0, i % 2, i / 2, 2).indices.len() / 6)
            .sum();
        assert_eq!(total, cells);
    }

    /// [`chunk_water_mesh`] without its row skip: every cell asked.
    fn mesh_by_cells(water: &Water, world_size: f32, cx: usize, cz: usize, cs: usize) -> WaterMesh {
        let n = water.resolution;
        let (s, h) = (world_size / (n - 1) as f32, world_size * 0.5);
        let mut m = WaterMesh::default();
        for iz in cz * cs..(cz * cs + cs).min(n - 1) {
            for ix in cx * cs..(cx * cs + cs).min(n - 1) {
                if let Some(l) = cell_levels(water, ix, iz) {
                    let base = m.positions.len() as u32;
                    for (k, (dx, dz)) in [(0, 0), (1, 0), (0, 1), (1, 1)].into_iter().enumerate() {
                        m.positions.push([
                            (ix + dx) as f32 * s - h,
                            l[k],
                            (iz + dz) as f32 * s - h,
                        ]);
                    }
                    m.indices.extend_from_slice(&[
                        base,
                        base + 1,
                        base + 2,
                        base + 1,
                        base + 3,
                        base + 2,
                    ]);
                }
            }
        }
        m
    }

    #[test]
    fn chunk_meshes_of_an_island_equal_the_cell_by_cell_meshes() {
        let p = island_core::IslandParams {
            resolution: 257,
            chunk_size: 32,
            ..Default::default()
        };
        let island = island_core::generate(&p).unwrap();
        let meshes = chunk_water_meshes(&island, 32);
        assert_eq!(meshes.len(), 64);
        let mut cells = 0;
        for (i, m) in meshes.iter().enumerate() {
            let want = mesh_by_cells(&island.water, p.world_size, i % 8, i / 8, 32);
            assert_eq!(*m, want, "chunk {i}");
            cells += m.indices.len() / 6;
        }
        assert!(
            cells > 0,
            "no river or lake on the test island: the test proves nothing"
        );
        // Out-of-range chunks are empty, not a panic.
        assert!(chunk_water_mesh(&island.water, p.world_size, 8, 0, 32).is_empty());
    }

    #[test]
    fn sea_only_water_has_no_inland_mesh() {
        let heights = vec![-1.0, -1.0, -1.0, 3.0, 5.0, -1.0, -1.0, -1.0, -1.0];
        let w = Water::sea_only(&heights, 3);
        assert!(chunk_water_mesh(&w, 10.0, 0, 0, 2).is_empty());
        assert_eq!(water_level_at(&w, 10.0, -5.0, -5.0), 0.0);
        assert!(water_level_at(&w, 10.0, 0.0, 0.0).is_nan());
        assert!(water_level_at(&w, 10.0, 50.0, 0.0).is_nan());
        assert_eq!(crate::water::water_summary::kind_counts(&w), [2, 0, 0, 7]);
    }

    #[test]
    fn level_lies_on_the_mesh() {
        let w = sample_water();
        // On a lake sample and inside the lake: 2 m.
        assert_eq!(water_level_at(&w, 4.0, -2.0, -2.0), 2.0);
        assert_eq!(water_level_at(&w, 4.0, -1.6, -1.7), 2.0);
        // River samples: exactly their level; between two river samples along the column,
        // linear.
        assert_eq!(water_level_at(&w, 4.0, 1.0, -2.0), 1.5);
        let mid = water_level_at(&w, 4.0, 1.0, -1.5);
        assert!((mid - (1.5 - 0.5 / 3.0)).abs() < 1e-5, "{mid}");
        // Dry sample: NaN; sea: 0.
        assert!(water_level_at(&w, 4.0, -1.0, 1.0).is_nan());
        assert_eq!(water_level_at(&w, 4.0, 0.0, 2.0), 0.0);
        // Every mesh vertex at a wet sample agrees with the query.
        let m = chunk_water_mesh(&w, 4.0, 0, 0, 4);
        for p in &m.positions {
            let l = water_level_at(&w, 4.0, p[0], p[2]);
            if inland(w.kind[((p[2] + 2.0).round() as usize) * 5 + (p[0] + 2.0).round() as usize]) {
                assert_eq!(l, p[1]);
            }
        }
    }

    #[test]
    fn sea_reaches_the_horizon() {
        let m = sea_mesh(1024.0);
        let max = m
            .positions
            .iter()
            .map(|p| p[0].abs().max(p[2].abs()))
            .fold(0.0f32, f32::max);
        assert!(max >= 50_000.0);
        assert!(m.positions.iter().all(|p| p[1] == 0.0));
        assert!(m.indices.iter().all(|&i| (i as usize) < m.positions.len()));
        // Every triangle faces the same way (clockwise seen from above, like the terrain).
        for t in m.indices.chunks(3) {
            let [a, b, c] = [0, 1, 2].map(|k| m.positions[t[k] as usize]);
            let cross = (b[0] - a[0]) * (c[2] - a[2]) - (b[2] - a[2]) * (c[0] - a[0]);
            assert!(cross > 0.0, "{t:?}");
        }
    }
}
