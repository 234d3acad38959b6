//! Quadtree LOD of `ProceduralIsland` (Godot side): picks the leaves from the camera with
//! `island_core::lod`, builds their stitched meshes into a pool of reused `MeshInstance3D` nodes
//! within a per-frame time budget, and swaps the visible set only once every new leaf is ready
//! (no holes). The full-resolution chunk nodes stay in place, hidden and without a mesh (the
//! node builds chunks without surfaces while LOD is on, and builds the surfaces before LOD is
//! switched off): their `HeightMapShape3D` colliders keep the full resolution (all of them, or
//! only those under a finest-level leaf with `collision_mode` NEAR).

use crate::island::chunk_pool::ChunkPool;
use godot::classes::node::InternalMode;
use godot::classes::{ArrayMesh, Camera3D, EditorInterface, Engine, MeshInstance3D, Node3D};
use godot::prelude::*;
use island_core::lod::{self, Leaf, LodLayout, LodView};
use island_core::Island;
use std::collections::{HashMap, HashSet};
use std::time::Instant;

/// Default `lod_budget_ms`: mesh building per frame, so the whole update stays under 4 ms.
pub const DEFAULT_BUDGET_MS: f32 = 2.0;
/// Camera movement (metres) below which the selection is not recomputed.
const MOVE_EPSILON: f32 = 0.5;

/// Colliders only under finest-level leaves.
pub const COLLISION_NEAR: i32 = 0;
/// Colliders on every chunk.
pub const COLLISION_ALL: i32 = 1;

struct Slot {
    instance: Gd<MeshInstance3D>,
    mesh: Gd<ArrayMesh>,
    /// Leaf whose mesh the slot holds (for the current island), if any.
    content: Option<Leaf>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Use {
    Free,
    Shown,
    Reserved,
}

struct Transition {
    leaves: Vec<Leaf>,
    ready: HashMap<Leaf, usize>,
    next: usize,
}

/// Runtime LOD state held by the node.
#[derive(Default)]
pub struct LodRuntime {
    slots: Vec<Slot>,
    uses: Vec<Use>,
    /// Slot holding each leaf mesh (current island only).
    by_leaf: HashMap<Leaf, usize>,
    shown: HashMap<Leaf, usize>,
    transition: Option<Transition>,
    /// (resolution, chunk, levels, flat) of `layout`.
    config: Option<(usize, usize, u32, bool)>,
    layout: Option<LodLayout>,
    last_camera: Option<[f32; 3]>,
    last_distance: f32,
    /// Base chunks already hidden (prefix of the pool).
    hidden: usize,
    /// Per base chunk: whether its collider is enabled (empty = unknown).
    colliders: Vec<bool>,
    collision_mode: i32,
    material: Option<Option<InstanceId>>,
    error: Option<String>,
    active: bool,
    /// The shown meshes belong to an older island (rebuild even if the selection is the same).
    stale: bool,
    last_us: f64,
    max_us: f64,
    /// The same in CPU time of the main thread (NaN where unknown).
    last_cpu_us: f64,
    max_cpu_us: f64,
    cpu: crate::island::frame_watch::CpuClock,
    built: u64,
    est_build_us: f64,
    /// Pool size to grow to in spare frame time (set after the first selection).
    prewarm_to: usize,
    /// Running estimate of creating one pooled node, µs.
    est_node_us: f64,
    /// Profiling marks of the last update (µs since its start).
    phases: Vec<(&'static str, u32)>,
}

impl LodRuntime {
    /// The island's heights changed: every pooled mesh is stale (nodes are kept).
    pub fn invalidate(&mut self) {
        for s in &mut self.slots {
            s.content = None;
        }
        self.by_leaf.clear();
        self.stale = true;
        self.config = None;
        self.hidden = 0;
        self.colliders.clear();
        if let Some(t) = self.transition.take() {
            for (_, i) in t.ready {
                if self.uses[i] == Use::Reserved {
                    self.uses[i] = Use::Free;
                }
            }
        }
        self.last_camera = None;
    }
}

/// The node's LOD properties for one update.
#[derive(Clone, Copy, Debug)]
pub struct LodSettings {
    /// `lod_levels`.
    pub levels: i32,
    /// `lod_distance`, metres.
    pub distance: f32,
    /// `collision_mode` ([`COLLISION_NEAR`] / [`COLLISION_ALL`]).
    pub collision_mode: i32,
    /// `lod_budget_ms`.
    pub budget_ms: f32,
    /// `flat_shading`.
    pub flat: bool,
}

impl LodSettings {
    /// `budget_ms` in µs (non-finite or negative: nothing beyond the one mesh per frame).
    fn budget_us(&self) -> f64 {
        let ms = self.budget_ms as f64;
        if ms.is_finite() {
            ms.max(0.0) * 1e3
        } else {
            0.0
        }
    }
}

/// What one LOD update works on: the node (parent of the pooled LOD nodes), the island and its
/// full-resolution chunk nodes (hidden while LOD is on; their colliders stay).
pub struct LodScene<'a> {
    pub parent: &'a mut Gd<Node3D>,
    pub island: &'a Island,
    pub chunks: &'a mut ChunkPool,
}

/// Camera position in `node`-local coordinates: the active Camera3D, the editor viewport's in
/// the editor.
pub fn camera_position(node: &Gd<Node3D>) -> Option<[f32; 3]> {
    let cam: Option<Gd<Camera3D>> = if Engine::singleton().is_editor_hint() {
        EditorInterface::singleton()
            .get_editor_viewport_3d_ex()
            .idx(0)
            .done()
            .and_then(|v| v.get_camera_3d())
    } else {
        node.get_viewport().and_then(|v| v.get_camera_3d())
    };
    let cam = cam?;
    if !node.is_inside_tree() || !cam.is_inside_tree() {
        return None;
    }
    let p = node.to_local(cam.get_global_position());
    Some([p.x, p.y, p.z])
}

impl LodRuntime {
    /// Whether LOD nodes are in use (the base chunks hidden).
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// Whether the next update may pick a new selection (and so needs the camera).
    pub fn wants_camera(&self) -> bool {
        self.transition.is_none()
    }

    /// The island's heights changed in the samples `[x0, x1) × [z0, x1)` (a sculpt dab):
    /// rebuild the shown leaf meshes over them now (a dab touches a few), and forget the meshes
    /// of hidden pooled leaves there (rebuilt when shown again). Nothing when LOD is not active.
    pub fn refresh_samples(&mut self, sc: &mut LodScene, s: &LodSettings, r: [usize; 4]) {
        let Some(layout) = self.layout.filter(|_| self.active) else {
            return;
        };
        let covers = |leaf: &Leaf| {
            let (x0, z0) = layout.origin(leaf.key);
            let size = layout.step(leaf.key.level) * layout.chunk_cells;
            x0 <= r[1] && r[0] <= x0 + size && z0 <= r[3] && r[2] <= z0 + size
        };
        let stale: Vec<(Leaf, usize)> = self
            .by_leaf
            .iter()
            .filter(|(l, _)| covers(l))
            .map(|(l, &i)| (*l, i))
            .collect();
        for (leaf, i) in stale {
            if self.shown.get(&leaf) == Some(&i) {
                self.build(sc, s, i, leaf, &layout);
            } else if self.uses[i] == Use::Free {
                self.slots[i].content = None;
                self.by_leaf.remove(&leaf);
            }
        }
    }

    /// Per-frame LOD update, started at `t`; `camera` from [`camera_position`] (None: no camera,
    /// or not asked for because a transition is under way).
    pub fn process(
        &mut self,
        sc: &mut LodScene,
        s: &LodSettings,
        camera: Option<[f32; 3]>,
        t: Instant,
    ) {
        let cpu0 = self.cpu.now_us();
        self.update(sc, s, camera, t);
        let us = t.elapsed().as_secs_f64() * 1e6;
        self.last_us = us;
        let cpu = match (cpu0, self.cpu.now_us()) {
            (Some(a), Some(b)) => b - a,
            _ => f64::NAN,
        };
        self.last_cpu_us = cpu;
        self.max_cpu_us = self.max_cpu_us.max(cpu);
        // LOD_PROFILE=<µs>: print the phases of every update slower than that (default 4000).
        let slow = std::env::var("LOD_PROFILE")
            .ok()
            .map(|v| v.parse::<f64>().unwrap_or(4000.0));
        if slow.is_some_and(|sl| us > sl && (cpu.is_nan() || cpu >= sl * 0.5)) {
            eprintln!(
                "lod slow frame: {us:.0} us (cpu {cpu:.0} us), phases {:?}",
                self.phases
            );
        }
        self.max_us = self.max_us.max(us);
    }

    fn update(&mut self, sc: &mut LodScene, s: &LodSettings, cam: Option<[f32; 3]>, t: Instant) {
        self.phases.clear();
        let island = sc.island;
        let (n, world) = (island.field.resolution, island.field.world_size);
        let y_range = [island.stats.min_height, island.stats.max_height];
        let chunk = island.params.chunk_size as usize;
        let key = (n, chunk, s.levels.max(0) as u32, s.flat);
        if self.config != Some(key) {
            if self.config.is_some() {
                self.invalidate();
            }
            match LodLayout::new(n, world, chunk, key.2) {
                Ok(l) => {
                    self.layout = Some(l);
                    self.error = None;
                }
                Err(e) => {
                    let msg = e.to_string();
                    if self.error.as_deref() != Some(msg.as_str()) {
                        godot_error!("ProceduralIsland LOD: invalid parameter `lod_levels`: {msg}");
                        self.error = Some(msg);
                    }
                    self.layout = None;
                }
            }
            self.config = Some(key);
        }
        let Some(layout) = self.layout else {
            // Invalid `lod_levels` (reported above, once): back to the full-resolution chunks
            // instead of leaving them hidden under the previous LOD meshes.
            if self.active || !self.slots.is_empty() {
                let (config, error) = (self.config, self.error.take());
                self.deactivate(sc.parent, sc.chunks);
                self.config = config;
                self.error = error;
            }
            return;
        };
        self.active = true;
        // The full-resolution chunks stay drawn until the first selection is shown (when they
        // have surfaces: LOD switched on after a generation without it), so no frame is empty.
        if !self.shown.is_empty() {
            self.hide_base(sc, s);
        }
        self.sync_material(sc);
        self.mark("base", t);

        if self.transition.is_none() {
            let moved = match (cam, self.last_camera) {
                (Some(c), Some(l)) => (0..3).any(|k| (c[k] - l[k]).abs() > MOVE_EPSILON),
                _ => true,
            };
            let changed =
                self.last_distance != s.distance || self.collision_mode != s.collision_mode;
            if moved || changed || self.shown.is_empty() {
                // No camera: everything at the coarsest level.
                let camera = cam.unwrap_or([f32::INFINITY; 3]);
                self.last_camera = cam;
                self.last_distance = s.distance;
                let view = LodView {
                    camera,
                    lod_distance: s.distance,
                    y_range,
                };
                self.mark("camera", t);
                let leaves = lod::select(&layout, &view);
                self.mark("select", t);
                let same = !self.stale
                    && leaves.len() == self.shown.len()
                    && leaves.iter().all(|l| self.shown.contains_key(l));
                if !same {
                    self.transition = Some(Transition {
                        leaves,
                        ready: HashMap::new(),
                        next: 0,
                    });
                } else if changed {
                    self.collision_mode = s.collision_mode;
                    self.apply_colliders(sc, s);
                }
            }
        }
        self.continue_transition(sc, s, t, &layout);
        self.prewarm(sc, s, t);
    }

    /// Grow the pool towards `prewarm_to` with the time left in this frame's build budget.
    fn prewarm(&mut self, sc: &mut LodScene, s: &LodSettings, t: Instant) {
        while self.slots.len() < self.prewarm_to {
            let est = self.est_node_us.max(50.0);
            if t.elapsed().as_secs_f64() * 1e6 + est > s.budget_us() {
                break;
            }
            self.new_slot_timed(sc);
        }
        self.mark("prewarm", t);
    }

    fn continue_transition(
        &mut self,
        sc: &mut LodScene,
        s: &LodSettings,
        t: Instant,
        layout: &LodLayout,
    ) {
        let Some(mut tr) = self.transition.take() else {
            return;
        };
        let mut built_now = 0;
        while tr.next < tr.leaves.len() {
            let leaf = tr.leaves[tr.next];
            if let Some(&i) = self.by_leaf.get(&leaf) {
                // Already built (shown, or a free slot still holding it).
                if self.uses[i] == Use::Free {
                    self.uses[i] = Use::Reserved;
                }
                tr.ready.insert(leaf, i);
                tr.next += 1;
                continue;
            }
            let elapsed = t.elapsed().as_secs_f64() * 1e6;
            // A build that needs a new pooled node also pays for creating it (the pool grows
            // during a flight when the prewarmed nodes run out).
            let node_us = if self.free_slot().is_none() {
                self.est_node_us.max(50.0)
            } else {
                0.0
            };
            // At least one mesh per frame so a transition always completes.
            if built_now > 0 && elapsed + node_us + self.est_build_us > s.budget_us() {
                break;
            }
            self.mark("build", t);
            let bt = Instant::now();
            let slots_before = self.slots.len();
            let i = self.take_slot(sc);
            let tb = bt.elapsed();
            self.build(sc, s, i, leaf, layout);
            if std::env::var_os("LOD_PROFILE_BUILDS").is_some() && bt.elapsed().as_micros() > 1500 {
                eprintln!(
                    "slow lod build: {:?} (take slot {:?}, new slot {})",
                    bt.elapsed(),
                    tb,
                    self.slots.len() > slots_before
                );
            }
            self.uses[i] = Use::Reserved;
            tr.ready.insert(leaf, i);
            tr.next += 1;
            // The build alone (a node created for it is in `est_node_us`).
            let us = bt.elapsed().as_secs_f64() * 1e6
                - if self.slots.len() > slots_before {
                    tb.as_secs_f64() * 1e6
                } else {
                    0.0
                };
            // Estimate of one build: jumps up to a slow build, decays slowly after it.
            self.est_build_us = if self.built == 0 {
                us
            } else {
                us.max(self.est_build_us * 0.9 + us * 0.1)
            };
            self.built += 1;
            built_now += 1;
            if t.elapsed().as_secs_f64() * 1e6 + self.est_build_us > s.budget_us() {
                break;
            }
        }
        if tr.next < tr.leaves.len() {
            self.transition = Some(tr);
            return;
        }
        self.mark("built", t);
        // Every leaf is ready: swap the visible set.
        let old = std::mem::take(&mut self.shown);
        let first = old.is_empty();
        for (leaf, i) in &tr.ready {
            self.uses[*i] = Use::Shown;
            if old.get(leaf).is_none_or(|&j| j != *i) {
                self.slots[*i].instance.set_visible(true);
            }
        }
        for (leaf, i) in old {
            if tr.ready.get(&leaf) != Some(&i) {
                self.uses[i] = Use::Free;
                self.slots[i].instance.set_visible(false);
            }
        }
        self.shown = tr.ready;
        self.stale = false;
        self.collision_mode = s.collision_mode;
        // Hidden in the frame the first selection appears (no frame draws both).
        self.hide_base(sc, s);
        self.mark("swap", t);
        // After the first selection, pre-create the nodes a flight typically needs, so the pool
        // rarely grows while the camera moves; a few per frame within the budget (see
        // `prewarm`), not all at once (~70 nodes cost over 10 ms).
        if first {
            self.prewarm_to = self.shown.len() * 2 + 8;
        }
        self.mark("swap-done", t);
        self.apply_colliders(sc, s);
        self.mark("colliders", t);
    }

    fn mark(&mut self, what: &'static str, t: Instant) {
        self.phases.push((what, t.elapsed().as_micros() as u32));
    }

    /// A free slot, preferring empty ones.
    fn free_slot(&self) -> Option<usize> {
        let free = || (0..self.slots.len()).filter(|&i| self.uses[i] == Use::Free);
        free()
            .find(|&i| self.slots[i].content.is_none())
            .or_else(|| free().next())
    }

    /// A free slot (preferring empty ones), or a new pooled node.
    fn take_slot(&mut self, sc: &mut LodScene) -> usize {
        if let Some(i) = self.free_slot() {
            if let Some(old) = self.slots[i].content.take() {
                self.by_leaf.remove(&old);
            }
            return i;
        }
        self.new_slot_timed(sc)
    }

    /// [`Self::new_slot`], updating the running estimate of one node creation.
    fn new_slot_timed(&mut self, sc: &mut LodScene) -> usize {
        let nt = Instant::now();
        let i = self.new_slot(sc);
        let us = nt.elapsed().as_secs_f64() * 1e6;
        // Jumps up to a slow creation, decays slowly after it (like the build estimate).
        self.est_node_us = if self.est_node_us == 0.0 {
            us
        } else {
            us.max(self.est_node_us * 0.9 + us * 0.1)
        };
        i
    }

    /// Create one pooled (hidden) node.
    fn new_slot(&mut self, sc: &mut LodScene) -> usize {
        let mut instance = MeshInstance3D::new_alloc();
        let mesh = ArrayMesh::new_gd();
        instance.set_mesh(&mesh);
        instance.set_visible(false);
        // Named once by slot (renaming to a name a sibling holds makes Godot search for a
        // unique one, which costs milliseconds).
        instance.set_name(&format!("Lod_{}", self.slots.len()));
        let mat = sc.chunks.first_material();
        instance.set_material_override(mat.as_ref());
        sc.parent
            .add_child_ex(&instance)
            .internal(InternalMode::BACK)
            .done();
        self.slots.push(Slot {
            instance,
            mesh,
            content: None,
        });
        self.uses.push(Use::Free);
        self.slots.len() - 1
    }

    fn build(
        &mut self,
        sc: &mut LodScene,
        s: &LodSettings,
        i: usize,
        leaf: Leaf,
        layout: &LodLayout,
    ) {
        let island = sc.island;
        let t0 = Instant::now();
        let flat = s.flat;
        let m = lod::node_mesh(&island.field, layout, leaf, flat);
        let n = island.field.resolution;
        let bytes = if flat {
            crate::island::chunk_data::encode_mesh(&m, &island.splat, n)
        } else {
            // Stitched heights from the LOD mesh; normals from the island.
            let heights: Vec<f32> = m.positions.iter().map(|p| p[1]).collect();
            let (x0, z0) = layout.origin(leaf.key);
            let g = crate::island::surface::Grid {
                field: &island.field,
                splat: &island.splat,
                x0,
                z0,
                step: layout.step(leaf.key.level),
                v: layout.chunk_cells + 1,
            };
            crate::island::surface::encode_grid(&g, Some(&heights))
        };
        let t1 = t0.elapsed();
        let s = &mut self.slots[i];
        if !s.instance.is_instance_valid() {
            // Someone freed a pooled node: replace it.
            let mut instance = MeshInstance3D::new_alloc();
            instance.set_name(&format!("Lod_{i}"));
            instance.set_mesh(&s.mesh);
            instance.set_visible(false);
            s.instance = instance.clone();
            sc.parent
                .add_child_ex(&instance)
                .internal(InternalMode::BACK)
                .done();
        }
        sc.chunks.surfaces.set_surface(&mut s.mesh, &bytes, || {
            let colors = crate::island::chunk_data::mesh_colors(&m, &island.splat, n);
            (m, colors)
        });
        if std::env::var_os("LOD_PROFILE_BUILDS").is_some() && t0.elapsed().as_micros() > 1500 {
            eprintln!("lod build: mesh+encode {:?} total {:?}", t1, t0.elapsed());
        }
        s.content = Some(leaf);
        self.by_leaf.insert(leaf, i);
    }

    fn sync_material(&mut self, sc: &LodScene) {
        let mat = sc.chunks.first_material();
        let id = mat.as_ref().map(|m| m.instance_id());
        if self.material == Some(id) {
            return;
        }
        for s in &mut self.slots {
            if s.instance.is_instance_valid() {
                s.instance.set_material_override(mat.as_ref());
            }
        }
        self.material = Some(id);
    }

    /// Hide the full-resolution chunk meshes (their colliders stay).
    fn hide_base(&mut self, sc: &mut LodScene, s: &LodSettings) {
        let len = sc.chunks.len();
        if self.hidden > len {
            self.hidden = 0;
        }
        if self.hidden == len {
            return;
        }
        sc.chunks.set_visible_from(self.hidden, false);
        self.hidden = len;
        self.colliders.clear();
        self.apply_colliders(sc, s);
    }

    /// Colliders were added outside the LOD (the island's `collision_enabled` turned on):
    /// enable or disable each again as the shown leaves want.
    pub fn reapply_colliders(&mut self, sc: &mut LodScene, s: &LodSettings) {
        if self.active {
            self.colliders.clear();
            self.apply_colliders(sc, s);
        }
    }

    /// Enable the colliders of every chunk (ALL) or only under finest-level leaves (NEAR).
    fn apply_colliders(&mut self, sc: &mut LodScene, s: &LodSettings) {
        let Some(layout) = self.layout else {
            return;
        };
        let per_side = layout.per_side(layout.levels - 1);
        let finest: HashSet<(u32, u32)> = self
            .shown
            .keys()
            .filter(|l| l.key.level + 1 == layout.levels)
            .map(|l| (l.key.x, l.key.z))
            .collect();
        let all = !self.active || s.collision_mode != COLLISION_NEAR;
        let len = sc.chunks.len();
        let want =
            |i: usize| all || finest.contains(&((i % per_side) as u32, (i / per_side) as u32));
        if self.colliders.len() != len {
            // Force every entry to be written once.
            self.colliders = (0..len).map(want).collect();
            for (i, &w) in self.colliders.iter().enumerate() {
                sc.chunks.set_collider_enabled(i, w);
            }
            return;
        }
        for i in 0..len {
            let w = want(i);
            if self.colliders[i] != w {
                sc.chunks.set_collider_enabled(i, w);
                self.colliders[i] = w;
            }
        }
    }

    /// LOD switched off: free the pooled LOD nodes, show the full-resolution chunks and enable
    /// every collider.
    pub fn deactivate(&mut self, parent: &mut Gd<Node3D>, chunks: &mut ChunkPool) {
        for mut s in std::mem::take(&mut self.slots) {
            if s.instance.is_instance_valid() {
                parent.remove_child(&s.instance);
                s.instance.queue_free();
            }
        }
        chunks.set_visible_from(0, true);
        for i in 0..chunks.len() {
            chunks.set_collider_enabled(i, true);
        }
        *self = LodRuntime::default();
    }

    /// LOD statistics (see `ProceduralIsland.get_lod_stats`); `enabled` is `lod_enabled`.
    pub fn stats(&self, enabled: bool) -> VarDictionary {
        let mut d = VarDictionary::new();
        d.set("enabled", enabled && self.active);
        d.set("levels", self.layout.map_or(0, |x| x.levels as i64));
        d.set("leaves", self.shown.len() as i64);
        d.set("pool_size", self.slots.len() as i64);
        d.set("pending", self.transition.is_some());
        d.set("meshes_built", self.built as i64);
        d.set("last_update_ms", self.last_us / 1e3);
        d.set("max_update_ms", self.max_us / 1e3);
        d.set("last_update_cpu_ms", self.last_cpu_us / 1e3);
        d.set("max_update_cpu_ms", self.max_cpu_us / 1e3);
        d.set("mesh_build_ms", self.est_build_us / 1e3);
        let mut counts = vec![0i32; self.layout.map_or(0, |x| x.levels as usize)];
        for leaf in self.shown.keys() {
            if let Some(c) = counts.get_mut(leaf.key.level as usize) {
                *c += 1;
            }
        }
        d.set("level_counts", &PackedInt32Array::from(&counts[..]));
        d
    }

    /// Reset the worst update times.
    pub fn reset_stats(&mut self) {
        self.max_us = 0.0;
        self.max_cpu_us = 0.0;
    }

    /// The visible LOD chunks (see `ProceduralIsland.get_lod_chunks`).
    pub fn chunks(&self) -> VarArray {
        let mut out = VarArray::new();
        let Some(layout) = self.layout else {
            return out;
        };
        let mut leaves: Vec<(&Leaf, &usize)> = self.shown.iter().collect();
        leaves.sort();
        for (leaf, &i) in leaves {
            let r = layout.rect(leaf.key);
            let mut d = VarDictionary::new();
            d.set("node", &self.slots[i].instance);
            d.set("level", leaf.key.level as i64);
            d.set("x", leaf.key.x as i64);
            d.set("z", leaf.key.z as i64);
            d.set(
                "rect",
                Rect2::new(
                    Vector2::new(r[0], r[1]),
                    Vector2::new(r[2] - r[0], r[3] - r[1]),
                ),
            );
            d.set("stitch", leaf.stitch as i64);
            out.push(&d.to_variant());
        }
        out
    }
}
