//! Quadtree LOD of `ProceduralIsland` (Godot side): picks the leaves from the camera with
//! `island_core::lod`, builds their stitched meshes into a pool of reused `MeshInstance3D` nodes
//! within a per-frame time budget, and swaps the visible set only once every new leaf is ready
//! (no holes). The full-resolution chunk nodes stay in place but hidden: their `HeightMapShape3D`
//! colliders keep the full resolution (all of them, or only those under a finest-level leaf with
//! `collision_mode` NEAR).

use crate::procedural_island::ProceduralIsland;

use godot::classes::node::InternalMode;
use godot::classes::{ArrayMesh, Camera3D, EditorInterface, Engine, Material, MeshInstance3D};
use godot::prelude::*;
use island_core::lod::{self, Leaf, LodLayout, LodView};
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
pub(crate) struct LodRuntime {
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
    cpu: CpuClock,
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
    pub(crate) fn invalidate(&mut self) {
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

/// CPU time of the calling thread (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)` on 64-bit Linux), to
/// tell time spent in the update from time the OS gave to other processes while it ran.
#[derive(Default)]
struct CpuClock;

#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
mod thread_clock {
    #[repr(C)]
    pub struct Timespec {
        pub tv_sec: i64,
        pub tv_nsec: i64,
    }
    pub const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    extern "C" {
        pub fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }
}

impl CpuClock {
    fn now_us(&mut self) -> Option<f64> {
        #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
        {
            let mut ts = thread_clock::Timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: `ts` is a valid, writable timespec (the C layout on 64-bit Linux) and the
            // clock id is a constant the kernel knows; the call writes only `ts`.
            let r = unsafe {
                thread_clock::clock_gettime(thread_clock::CLOCK_THREAD_CPUTIME_ID, &mut ts)
            };
            (r == 0).then(|| ts.tv_sec as f64 * 1e6 + ts.tv_nsec as f64 / 1e3)
        }
        #[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
        {
            None
        }
    }
}

impl ProceduralIsland {
    /// Per-frame LOD update (called from `process`).
    pub(crate) fn lod_process(&mut self) {
        let t = Instant::now();
        if !self.lod_enabled {
            if self.lod.active {
                self.lod_deactivate();
            }
            return;
        }
        if self.island.is_none() || self.is_generating() || self.pool.is_empty() {
            return;
        }
        let cpu0 = self.lod.cpu.now_us();
        self.lod_update(t);
        let us = t.elapsed().as_secs_f64() * 1e6;
        self.lod.last_us = us;
        let cpu = match (cpu0, self.lod.cpu.now_us()) {
            (Some(a), Some(b)) => b - a,
            _ => f64::NAN,
        };
        self.lod.last_cpu_us = cpu;
        self.lod.max_cpu_us = self.lod.max_cpu_us.max(cpu);
        // LOD_PROFILE=<µs>: print the phases of every update slower than that (default 4000).
        let slow = std::env::var("LOD_PROFILE")
            .ok()
            .map(|v| v.parse::<f64>().unwrap_or(4000.0));
        if slow.is_some_and(|s| us > s && (cpu.is_nan() || cpu >= s * 0.5)) {
            eprintln!(
                "lod slow frame: {us:.0} us (cpu {cpu:.0} us), phases {:?}",
                self.lod.phases
            );
        }
        self.lod.max_us = self.lod.max_us.max(us);
    }

    fn lod_update(&mut self, t: Instant) {
        self.lod.phases.clear();
        let Some(island) = self.island.as_ref() else {
            return;
        };
        let (n, world) = (island.field.resolution, island.field.world_size);
        let y_range = [island.stats.min_height, island.stats.max_height];
        let chunk = island.params.chunk_size as usize;
        let key = (n, chunk, self.lod_levels.max(0) as u32, self.flat_shading);
        if self.lod.config != Some(key) {
            if self.lod.config.is_some() {
                self.lod.invalidate();
            }
            match LodLayout::new(n, world, chunk, key.2) {
                Ok(l) => {
                    self.lod.layout = Some(l);
                    self.lod.error = None;
                }
                Err(e) => {
                    let msg = e.to_string();
                    if self.lod.error.as_deref() != Some(msg.as_str()) {
                        godot_error!("ProceduralIsland LOD: invalid parameter `lod_levels`: {msg}");
                        self.lod.error = Some(msg);
                    }
                    self.lod.layout = None;
                }
            }
            self.lod.config = Some(key);
        }
        let Some(layout) = self.lod.layout else {
            return;
        };
        self.lod.active = true;
        self.lod_hide_base();
        self.lod_sync_material();
        self.lod_mark("base", t);

        if self.lod.transition.is_none() {
            let cam = self.lod_camera();
            let moved = match (cam, self.lod.last_camera) {
                (Some(c), Some(l)) => (0..3).any(|k| (c[k] - l[k]).abs() > MOVE_EPSILON),
                _ => true,
            };
            let changed = self.lod.last_distance != self.lod_distance
                || self.lod.collision_mode != self.collision_mode;
            if moved || changed || self.lod.shown.is_empty() {
                // No camera: everything at the coarsest level.
                let camera = cam.unwrap_or([f32::INFINITY; 3]);
                self.lod.last_camera = cam;
                self.lod.last_distance = self.lod_distance;
                let view = LodView {
                    camera,
                    lod_distance: self.lod_distance,
                    y_range,
                };
                self.lod_mark("camera", t);
                let leaves = lod::select(&layout, &view);
                self.lod_mark("select", t);
                let same = !self.lod.stale
                    && leaves.len() == self.lod.shown.len()
                    && leaves.iter().all(|l| self.lod.shown.contains_key(l));
                if !same {
                    self.lod.transition = Some(Transition {
                        leaves,
                        ready: HashMap::new(),
                        next: 0,
                    });
                } else if changed {
                    self.lod.collision_mode = self.collision_mode;
                    self.lod_apply_colliders();
                }
            }
        }
        self.lod_continue(t, &layout);
        self.lod_prewarm(t);
    }

    /// `lod_budget_ms` in µs (non-finite or negative: nothing beyond the one mesh per frame).
    fn lod_budget_us(&self) -> f64 {
        let ms = self.lod_budget_ms as f64;
        if ms.is_finite() {
            ms.max(0.0) * 1e3
        } else {
            0.0
        }
    }

    /// Grow the pool towards `prewarm_to` with the time left in this frame's build budget.
    fn lod_prewarm(&mut self, t: Instant) {
        while self.lod.slots.len() < self.lod.prewarm_to {
            let est = self.lod.est_node_us.max(50.0);
            if t.elapsed().as_secs_f64() * 1e6 + est > self.lod_budget_us() {
                break;
            }
            self.lod_new_slot_timed();
        }
        self.lod_mark("prewarm", t);
    }

    /// Camera position in node-local coordinates.
    fn lod_camera(&self) -> Option<[f32; 3]> {
        let cam: Option<Gd<Camera3D>> = if Engine::singleton().is_editor_hint() {
            EditorInterface::singleton()
                .get_editor_viewport_3d_ex()
                .idx(0)
                .done()
                .and_then(|v| v.get_camera_3d())
        } else {
            self.base().get_viewport().and_then(|v| v.get_camera_3d())
        };
        let cam = cam?;
        if !self.base().is_inside_tree() || !cam.is_inside_tree() {
            return None;
        }
        let p = self.base().to_local(cam.get_global_position());
        Some([p.x, p.y, p.z])
    }

    fn lod_continue(&mut self, t: Instant, layout: &LodLayout) {
        let Some(mut tr) = self.lod.transition.take() else {
            return;
        };
        let mut built_now = 0;
        while tr.next < tr.leaves.len() {
            let leaf = tr.leaves[tr.next];
            if let Some(&i) = self.lod.by_leaf.get(&leaf) {
                // Already built (shown, or a free slot still holding it).
                if self.lod.uses[i] == Use::Free {
                    self.lod.uses[i] = Use::Reserved;
                }
                tr.ready.insert(leaf, i);
                tr.next += 1;
                continue;
            }
            let elapsed = t.elapsed().as_secs_f64() * 1e6;
            // A build that needs a new pooled node also pays for creating it (the pool grows
            // during a flight when the prewarmed nodes run out).
            let node_us = if self.lod_free_slot().is_none() {
                self.lod.est_node_us.max(50.0)
            } else {
                0.0
            };
            // At least one mesh per frame so a transition always completes.
            if built_now > 0 && elapsed + node_us + self.lod.est_build_us > self.lod_budget_us() {
                break;
            }
            self.lod_mark("build", t);
            let bt = Instant::now();
            let slots_before = self.lod.slots.len();
            let i = self.lod_take_slot();
            let tb = bt.elapsed();
            self.lod_build(i, leaf, layout);
            if std::env::var_os("LOD_PROFILE_BUILDS").is_some() && bt.elapsed().as_micros() > 1500 {
                eprintln!(
                    "slow lod build: {:?} (take slot {:?}, new slot {})",
                    bt.elapsed(),
                    tb,
                    self.lod.slots.len() > slots_before
                );
            }
            self.lod.uses[i] = Use::Reserved;
            tr.ready.insert(leaf, i);
            tr.next += 1;
            // The build alone (a node created for it is in `est_node_us`).
            let us = bt.elapsed().as_secs_f64() * 1e6
                - if self.lod.slots.len() > slots_before {
                    tb.as_secs_f64() * 1e6
                } else {
                    0.0
                };
            // Estimate of one build: jumps up to a slow build, decays slowly after it.
            self.lod.est_build_us = if self.lod.built == 0 {
                us
            } else {
                us.max(self.lod.est_build_us * 0.9 + us * 0.1)
            };
            self.lod.built += 1;
            built_now += 1;
            if t.elapsed().as_secs_f64() * 1e6 + self.lod.est_build_us > self.lod_budget_us() {
                break;
            }
        }
        if tr.next < tr.leaves.len() {
            self.lod.transition = Some(tr);
            return;
        }
        self.lod_mark("built", t);
        // Every leaf is ready: swap the visible set.
        let old = std::mem::take(&mut self.lod.shown);
        let first = old.is_empty();
        for (leaf, i) in &tr.ready {
            self.lod.uses[*i] = Use::Shown;
            if old.get(leaf).is_none_or(|&j| j != *i) {
                self.lod.slots[*i].instance.set_visible(true);
            }
        }
        for (leaf, i) in old {
            if tr.ready.get(&leaf) != Some(&i) {
                self.lod.uses[i] = Use::Free;
                self.lod.slots[i].instance.set_visible(false);
            }
        }
        self.lod.shown = tr.ready;
        self.lod.stale = false;
        self.lod.collision_mode = self.collision_mode;
        self.lod_mark("swap", t);
        // After the first selection, pre-create the nodes a flight typically needs, so the pool
        // rarely grows while the camera moves; a few per frame within the budget (see
        // `lod_prewarm`), not all at once (~70 nodes cost over 10 ms).
        if first {
            self.lod.prewarm_to = self.lod.shown.len() * 2 + 8;
        }
        self.lod_mark("swap-done", t);
        self.lod_apply_colliders();
        self.lod_mark("colliders", t);
    }

    fn lod_mark(&mut self, what: &'static str, t: Instant) {
        self.lod.phases.push((what, t.elapsed().as_micros() as u32));
    }

    /// A free slot, preferring empty ones.
    fn lod_free_slot(&self) -> Option<usize> {
        let free = || (0..self.lod.slots.len()).filter(|&i| self.lod.uses[i] == Use::Free);
        free()
            .find(|&i| self.lod.slots[i].content.is_none())
            .or_else(|| free().next())
    }

    /// A free slot (preferring empty ones), or a new pooled node.
    fn lod_take_slot(&mut self) -> usize {
        if let Some(i) = self.lod_free_slot() {
            if let Some(old) = self.lod.slots[i].content.take() {
                self.lod.by_leaf.remove(&old);
            }
            return i;
        }
        self.lod_new_slot_timed()
    }

    /// [`Self::lod_new_slot`], updating the running estimate of one node creation.
    fn lod_new_slot_timed(&mut self) -> usize {
        let nt = Instant::now();
        let i = self.lod_new_slot();
        let us = nt.elapsed().as_secs_f64() * 1e6;
        // Jumps up to a slow creation, decays slowly after it (like the build estimate).
        self.lod.est_node_us = if self.lod.est_node_us == 0.0 {
            us
        } else {
            us.max(self.lod.est_node_us * 0.9 + us * 0.1)
        };
        i
    }

    /// Create one pooled (hidden) node.
    fn lod_new_slot(&mut self) -> usize {
        let mut instance = MeshInstance3D::new_alloc();
        let mesh = ArrayMesh::new_gd();
        instance.set_mesh(&mesh);
        instance.set_visible(false);
        // Named once by slot (renaming to a name a sibling holds makes Godot search for a
        // unique one, which costs milliseconds).
        instance.set_name(&format!("Lod_{}", self.lod.slots.len()));
        let mat = self.lod_base_material();
        instance.set_material_override(mat.as_ref());
        self.base_mut()
            .add_child_ex(&instance)
            .internal(InternalMode::BACK)
            .done();
        self.lod.slots.push(Slot {
            instance,
            mesh,
            content: None,
        });
        self.lod.uses.push(Use::Free);
        self.lod.slots.len() - 1
    }

    fn lod_build(&mut self, i: usize, leaf: Leaf, layout: &LodLayout) {
        let Some(island) = self.island.as_ref() else {
            return;
        };
        let t0 = Instant::now();
        let flat = self.flat_shading;
        let m = lod::node_mesh(&island.field, layout, leaf, flat);
        let n = island.field.resolution;
        let bytes = if flat || self.normal_tangents.len() != n * n {
            crate::chunk_data::encode_mesh(&m, &island.splat, n)
        } else {
            // Stitched heights from the LOD mesh; normals from the island's encoded table.
            let heights: Vec<f32> = m.positions.iter().map(|p| p[1]).collect();
            let (x0, z0) = layout.origin(leaf.key);
            let g = crate::surface::Grid {
                field: &island.field,
                splat: &island.splat,
                nt: &self.normal_tangents,
                x0,
                z0,
                step: layout.step(leaf.key.level),
                v: layout.chunk_cells + 1,
            };
            crate::surface::encode_grid(&g, Some(&heights))
        };
        let t1 = t0.elapsed();
        let s = &mut self.lod.slots[i];
        if !s.instance.is_instance_valid() {
            // Someone freed a pooled node: replace it.
            let mut instance = MeshInstance3D::new_alloc();
            instance.set_name(&format!("Lod_{i}"));
            instance.set_mesh(&s.mesh);
            instance.set_visible(false);
            let inst = instance.clone();
            s.instance = instance;
            self.base_mut()
                .add_child_ex(&inst)
                .internal(InternalMode::BACK)
                .done();
        }
        let Some(island) = self.island.as_ref() else {
            return;
        };
        let s = &mut self.lod.slots[i];
        self.surfaces.set_surface(&mut s.mesh, &bytes, || {
            let colors = crate::chunk_data::mesh_colors(&m, &island.splat, n);
            (m, colors)
        });
        if std::env::var_os("LOD_PROFILE_BUILDS").is_some() && t0.elapsed().as_micros() > 1500 {
            eprintln!("lod build: mesh+encode {:?} total {:?}", t1, t0.elapsed());
        }
        s.content = Some(leaf);
        self.lod.by_leaf.insert(leaf, i);
    }

    fn lod_base_material(&self) -> Option<Gd<Material>> {
        self.pool
            .first()
            .filter(|c| c.instance.is_instance_valid())
            .and_then(|c| c.instance.get_material_override())
    }

    fn lod_sync_material(&mut self) {
        let mat = self.lod_base_material();
        let id = mat.as_ref().map(|m| m.instance_id());
        if self.lod.material == Some(id) {
            return;
        }
        for s in &mut self.lod.slots {
            if s.instance.is_instance_valid() {
                s.instance.set_material_override(mat.as_ref());
            }
        }
        self.lod.material = Some(id);
    }

    /// Hide the full-resolution chunk meshes (their colliders stay).
    fn lod_hide_base(&mut self) {
        if self.lod.hidden > self.pool.len() {
            self.lod.hidden = 0;
        }
        if self.lod.hidden == self.pool.len() {
            return;
        }
        for c in &mut self.pool[self.lod.hidden..] {
            if c.instance.is_instance_valid() {
                c.instance.set_visible(false);
            }
        }
        self.lod.hidden = self.pool.len();
        self.lod.colliders.clear();
        self.lod_apply_colliders();
    }

    /// Enable the colliders of every chunk (ALL) or only under finest-level leaves (NEAR).
    fn lod_apply_colliders(&mut self) {
        let Some(layout) = self.lod.layout else {
            return;
        };
        let per_side = layout.per_side(layout.levels - 1);
        let finest: HashSet<(u32, u32)> = self
            .lod
            .shown
            .keys()
            .filter(|l| l.key.level + 1 == layout.levels)
            .map(|l| (l.key.x, l.key.z))
            .collect();
        let all = !self.lod.active || self.collision_mode != COLLISION_NEAR;
        if self.lod.colliders.len() != self.pool.len() {
            self.lod.colliders = vec![!all; self.pool.len()];
            // Force every entry to be written once.
            for (i, c) in self.pool.iter_mut().enumerate() {
                let want = all || finest.contains(&((i % per_side) as u32, (i / per_side) as u32));
                if let Some(col) = c
                    .collider
                    .as_mut()
                    .filter(|col| col.shape_node.is_instance_valid())
                {
                    col.shape_node.set_disabled(!want);
                }
                self.lod.colliders[i] = want;
            }
            return;
        }
        for (i, c) in self.pool.iter_mut().enumerate() {
            let want = all || finest.contains(&((i % per_side) as u32, (i / per_side) as u32));
            if self.lod.colliders[i] != want {
                if let Some(col) = c
                    .collider
                    .as_mut()
                    .filter(|col| col.shape_node.is_instance_valid())
                {
                    col.shape_node.set_disabled(!want);
                }
                self.lod.colliders[i] = want;
            }
        }
    }

    /// LOD switched off: free the pooled LOD nodes, show the full-resolution chunks and enable
    /// every collider.
    fn lod_deactivate(&mut self) {
        let slots = std::mem::take(&mut self.lod.slots);
        for mut s in slots {
            if s.instance.is_instance_valid() {
                let inst = s.instance.clone();
                self.base_mut().remove_child(&inst);
                s.instance.queue_free();
            }
        }
        for c in &mut self.pool {
            if c.instance.is_instance_valid() {
                c.instance.set_visible(true);
            }
            if let Some(col) = c
                .collider
                .as_mut()
                .filter(|col| col.shape_node.is_instance_valid())
            {
                col.shape_node.set_disabled(false);
            }
        }
        self.lod = LodRuntime::default();
    }
}

#[godot_api(secondary)]
impl ProceduralIsland {
    /// LOD statistics: `enabled`, `levels` (levels in use), `leaves` (visible LOD chunks),
    /// `pool_size` (pooled LOD nodes, never freed while the camera moves), `pending` (a new
    /// selection is still being built; the previous one stays visible), `meshes_built` (total),
    /// `last_update_ms` / `max_update_ms` (time spent in the LOD update of the last frame / the
    /// worst frame so far), `last_update_cpu_ms` / `max_update_cpu_ms` (the same in CPU time of
    /// the main thread: excludes time the OS gave to other processes; NaN where unknown), `mesh_build_ms` (running estimate of one chunk mesh build and upload),
    /// `level_counts` (leaves per level).
    #[func]
    pub fn get_lod_stats(&self) -> VarDictionary {
        let mut d = VarDictionary::new();
        let l = &self.lod;
        d.set("enabled", self.lod_enabled && l.active);
        d.set("levels", l.layout.map_or(0, |x| x.levels as i64));
        d.set("leaves", l.shown.len() as i64);
        d.set("pool_size", l.slots.len() as i64);
        d.set("pending", l.transition.is_some());
        d.set("meshes_built", l.built as i64);
        d.set("last_update_ms", l.last_us / 1e3);
        d.set("max_update_ms", l.max_us / 1e3);
        d.set("last_update_cpu_ms", l.last_cpu_us / 1e3);
        d.set("max_update_cpu_ms", l.max_cpu_us / 1e3);
        d.set("mesh_build_ms", l.est_build_us / 1e3);
        let mut counts = vec![0i32; l.layout.map_or(0, |x| x.levels as usize)];
        for leaf in l.shown.keys() {
            if let Some(c) = counts.get_mut(leaf.key.level as usize) {
                *c += 1;
            }
        }
        d.set("level_counts", &PackedInt32Array::from(&counts[..]));
        d
    }

    /// Reset `max_update_ms` of [method get_lod_stats].
    #[func]
    pub fn reset_lod_stats(&mut self) {
        self.lod.max_us = 0.0;
        self.lod.max_cpu_us = 0.0;
    }

    /// The visible LOD chunks: one Dictionary each with `node` (the MeshInstance3D), `level`,
    /// `x`, `z` (index among the nodes of that level), `rect` (Rect2 of node-local x/z metres) and
    /// `stitch` (bits 1 = -x, 2 = +x, 4 = -z, 8 = +z: edges next to a coarser chunk, whose odd
    /// vertices lie on the coarser edge). Empty when LOD is off.
    #[func]
    pub fn get_lod_chunks(&self) -> VarArray {
        let mut out = VarArray::new();
        let Some(layout) = self.lod.layout else {
            return out;
        };
        let mut leaves: Vec<(&Leaf, &usize)> = self.lod.shown.iter().collect();
        leaves.sort();
        for (leaf, &i) in leaves {
            let r = layout.rect(leaf.key);
            let mut d = VarDictionary::new();
            d.set("node", &self.lod.slots[i].instance);
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
