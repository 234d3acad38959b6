//! The island's scatter instances: one internal `MultiMeshInstance3D` per layer per chunk
//! (pooled, reused between regenerates, never saved), filled from
//! `island_core::scatter::place_all` (placement runs on the rayon pool over the island's plain
//! data; the main thread only builds the Godot objects).
//!
//! Work on the main thread is spread over frames as chunk jobs (one layer's chunk: place it, or
//! only build its MultiMesh) run within the node's per-frame budget ([`ScatterNodes::run_queue`]):
//! the MultiMeshes of a background placement (`regenerate_async`) and every re-placement of a
//! layer whose resource changed. Changes are seen through each `ScatterLayer`'s `changed` signal
//! ([`ScatterNodes::watch`]): a frame without a change reads no layer property; a changed layer
//! is re-placed alone, chunk by chunk.

use crate::island::frame_watch::{budget_ms as budget_ms_of, JobCost};
use crate::scatter::layer_moves::LayerMoves;
use crate::scatter::scatter_layer::ScatterLayer;
use godot::classes::base_material_3d::Flags;
use godot::classes::geometry_instance_3d::{ShadowCastingSetting, VisibilityRangeFadeMode};
use godot::classes::mesh::{ArrayType, PrimitiveType};
use godot::classes::multi_mesh::TransformFormat;
use godot::classes::node::InternalMode;
use godot::classes::{
    ArrayMesh, BoxShape3D, CollisionShape3D, Mesh, MultiMesh, MultiMeshInstance3D, Node3D,
    PackedScene, StandardMaterial3D, StaticBody3D,
};
use godot::prelude::*;
use island_core::paint::Rect;
use island_core::scatter::{self as core, EraseMask, Placement, ScatterInput};
use island_core::scatter_meshes::MeshKind;
use island_core::Island;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{channel, Receiver, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What one layer is placed and drawn with (compared to detect changes).
#[derive(Clone, Debug, PartialEq)]
pub struct LayerSpec {
    pub core: core::ScatterLayer,
    pub mesh: Option<Gd<Mesh>>,
    pub visibility: [f32; 4],
    /// `cast_shadow` (Godot's `ShadowCastingSetting` value).
    pub shadow: i32,
    /// Collider radius around the camera (`collision` NEAR_CAMERA), or `None`.
    pub collision: Option<f32>,
    /// Scene instanced per instance instead of the MultiMesh.
    pub scene: Option<Gd<PackedScene>>,
}

/// A layer of `scatter_layers`: null (`Ok(None)`, nothing placed), valid, or invalid (the
/// reason).
pub type SpecResult = Result<Option<LayerSpec>, String>;

/// The spec of entry `i` of `scatter_layers`.
fn spec_of(i: usize, l: &Option<Gd<ScatterLayer>>) -> SpecResult {
    let Some(l) = l else { return Ok(None) };
    let b = l.bind();
    let checked = b
        .to_core()
        .and_then(|c| b.collision().map(|k| (c, k)))
        .and_then(|(c, k)| b.shadow().map(|sh| (c, k, sh)));
    match checked {
        Ok((core, collision, shadow)) => Ok(Some(LayerSpec {
            core,
            mesh: b.custom_mesh(),
            visibility: b.visibility(),
            shadow,
            collision,
            scene: b.scene(),
        })),
        Err(e) => Err(format!("invalid scatter layer {i}: {e}")),
    }
}

/// The specs of `layers`.
pub fn specs(layers: &Array<Option<Gd<ScatterLayer>>>) -> Vec<SpecResult> {
    layers
        .iter_shared()
        .enumerate()
        .map(|(i, l)| spec_of(i, &l))
        .collect()
}

#[derive(Default)]
struct LayerState {
    spec: Option<SpecResult>,
    placement: Option<Placement>,
    nodes: Vec<Option<Gd<MultiMeshInstance3D>>>,
    /// Erase mask the layer is placed with (at the island's resolution).
    mask: Option<EraseMask>,
    /// Bumped whenever the layer is placed anew: queued jobs of an older epoch are dropped.
    epoch: u64,
    /// Colliders of instances near the camera, by (chunk, index in the chunk).
    bodies: HashMap<(usize, usize), Gd<StaticBody3D>>,
    /// Scene instances per chunk (layers with a `scene`).
    scenes: HashMap<usize, Vec<Gd<Node3D>>>,
}

/// One chunk of one layer to do on the main thread.
struct Job {
    layer: usize,
    chunk: usize,
    /// Place the chunk (from the layer's spec and mask) before building its MultiMesh.
    place: bool,
    epoch: u64,
}

/// The `changed` connection of one `scatter_layers` entry.
struct Watched {
    layer: Gd<ScatterLayer>,
    callable: Callable,
}

/// The scatter nodes of one island (see the module doc).
#[derive(Default)]
pub struct ScatterNodes {
    layers: Vec<LayerState>,
    /// Erase masks of layers removed from `scatter_layers`, by resource id, until the same
    /// layer comes back (an undone removal) or the node goes away.
    pub parked: HashMap<InstanceId, EraseMask>,
    builtin: Vec<Option<Gd<ArrayMesh>>>,
    /// Milliseconds of the last placement (rayon) and node build (main thread).
    pub last_place_ms: f64,
    pub last_build_ms: f64,
    /// Seed and chunk size of the last full placement.
    seed: u64,
    chunk_size: usize,
    /// A placement running on a thread after `regenerate_async`, then its nodes being built.
    pending: Option<Pending>,
    /// Chunk jobs, run within the frame budget by [`Self::run_queue`].
    queue: VecDeque<Job>,
    /// Jobs queued since the queue was last empty (for [`Self::fraction_done`]).
    queued_total: usize,
    /// The `changed` connection per `scatter_layers` entry (`None` for a null entry).
    watched: Vec<Option<Watched>>,
    /// Entries to re-check (found changed or replaced).
    recheck: Vec<usize>,
    /// Milliseconds spent in the latest call of [`Self::run_queue`] and the most in one call since
    /// the last [`Self::take_worst_frame_ms`].
    pub frame_ms: f64,
    worst_frame_ms: f64,
    /// Running estimate of one chunk job's cost: a frame does not start a job that would take it
    /// past its budget.
    est_job: JobCost,
    /// Main-thread CPU time of the worst [`Self::continue_build`] call, milliseconds (wall time
    /// minus the time the OS gave to other processes).
    pub worst_frame_cpu_ms: f64,
}

/// Placement result of the background thread: placements of the valid layers (in order) and
/// the milliseconds it took.
type Placed = (Result<Vec<Placement>, String>, f64);

/// A background placement and the build of its nodes (see [`ScatterNodes::start`]).
struct Pending {
    /// Generation serial it belongs to (a newer generation drops it).
    serial: u64,
    specs: Vec<SpecResult>,
    masks: Vec<Option<EraseMask>>,
    rx: Option<Receiver<Placed>>,
    /// The placements arrived and their chunk jobs are queued.
    queued: bool,
    place_ms: f64,
    build_ms: f64,
}

/// What [`ScatterNodes::continue_build`] did.
pub enum Progress {
    /// Nothing pending.
    Idle,
    /// Still placing or building.
    Working,
    /// Every layer is in place.
    Finished,
}

impl ScatterNodes {
    /// Place every layer on `island` and build the nodes now; errors of invalid layers are
    /// reported (those layers stay empty). Returns the per-layer counts.
    pub fn place_all(
        &mut self,
        parent: &mut Gd<Node3D>,
        island: &Island,
        seed: u64,
        chunk_size: usize,
        specs: Vec<SpecResult>,
        erase: Vec<Option<EraseMask>>,
    ) -> Vec<i64> {
        self.seed = seed;
        self.chunk_size = chunk_size;
        self.queue.clear();
        let valid: Vec<(usize, core::ScatterLayer)> = specs
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match s {
                Ok(Some(s)) => Some((i, s.core.clone())),
                _ => None,
            })
            .collect();
        let t = Instant::now();
        let cores: Vec<core::ScatterLayer> = valid.iter().map(|v| v.1.clone()).collect();
        let masks: Vec<Option<EraseMask>> = valid
            .iter()
            .map(|(i, _)| erase.get(*i).cloned().flatten())
            .collect();
        // Without layers no map is read (the roads' cover among them).
        let placed = if cores.is_empty() {
            Ok(Vec::new())
        } else {
            with_input(island, |input| {
                place_all(input, &cores, &masks, seed, chunk_size)
            })
        };
        let placed = match placed {
            Ok(p) => p,
            Err(e) => {
                godot_error!("ProceduralIsland: scatter: {e}");
                Vec::new()
            }
        };
        self.last_place_ms = t.elapsed().as_secs_f64() * 1e3;
        let mut placements: Vec<Option<Placement>> = (0..specs.len()).map(|_| None).collect();
        for ((i, _), p) in valid.iter().zip(placed) {
            placements[*i] = Some(p);
        }
        let t = Instant::now();
        self.truncate(specs.len());
        for (i, (spec, p)) in specs.into_iter().zip(placements).enumerate() {
            if let Err(e) = &spec {
                godot_error!("ProceduralIsland: {e}");
            }
            let mask = erase.get(i).cloned().flatten();
            self.setup(i, spec, p, mask, false);
            self.build_layer_now(parent, i);
        }
        self.last_build_ms = t.elapsed().as_secs_f64() * 1e3;
        self.counts()
    }

    /// Start placing every layer of `island` on a thread (plain data only: the island, the core
    /// layers, the erase masks); the nodes are then built by [`Self::continue_build`] within the
    /// frame budget. `serial` is the generation's; [`Self::continue_build`] drops the work when
    /// it changes.
    pub fn start(
        &mut self,
        island: Arc<Island>,
        seed: u64,
        chunk_size: usize,
        specs: Vec<SpecResult>,
        erase: Vec<Option<EraseMask>>,
        serial: u64,
    ) {
        self.seed = seed;
        self.chunk_size = chunk_size;
        self.queue.clear();
        let (cores, masks): (Vec<core::ScatterLayer>, Vec<Option<EraseMask>>) = specs
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match s {
                Ok(Some(s)) => Some((s.core.clone(), erase.get(i).cloned().flatten())),
                _ => None,
            })
            .unzip();
        let (tx, rx) = channel::<Placed>();
        let spawned = std::thread::Builder::new()
            .name("procedural_island_scatter".into())
            .spawn(move || {
                let t = Instant::now();
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    with_input(&island, |input| {
                        place_all(input, &cores, &masks, seed, chunk_size)
                    })
                }))
                .unwrap_or_else(|_| Err("internal error while placing".into()));
                let _ = tx.send((r, t.elapsed().as_secs_f64() * 1e3));
            });
        let rx = match spawned {
            Ok(h) => {
                crate::island::worker::track(Arc::new(AtomicBool::new(false)), h);
                Some(rx)
            }
            Err(e) => {
                godot_error!("ProceduralIsland: scatter thread: {e}");
                None
            }
        };
        self.pending = Some(Pending {
            serial,
            specs,
            masks: erase,
            rx,
            queued: false,
            place_ms: 0.0,
            build_ms: 0.0,
        });
    }

    /// Whether a background placement or its node build is under way.
    pub fn is_pending(&self) -> bool {
        self.pending.is_some()
    }

    /// Drop a background placement (a newer generation replaces it).
    pub fn abort(&mut self) {
        self.pending = None;
    }

    /// Collect the background placement, then build its chunks' MultiMeshes for up to
    /// `budget_ms` per call (at least one chunk per call).
    pub fn continue_build(
        &mut self,
        parent: &mut Gd<Node3D>,
        island: &Island,
        serial: u64,
        budget_ms: f32,
    ) -> Progress {
        let Some(mut p) = self.pending.take() else {
            return Progress::Idle;
        };
        if p.serial != serial {
            return Progress::Idle;
        }
        let t = Instant::now();
        let cpu0 = crate::island::frame_watch::CpuClock.now_us();
        let mut set_up = false;
        if !p.queued {
            set_up = true;
            self.worst_frame_ms = 0.0;
            self.worst_frame_cpu_ms = 0.0;
            let mut placements: Vec<Option<Placement>> = (0..p.specs.len()).map(|_| None).collect();
            if let Some(rx) = &p.rx {
                match rx.try_recv() {
                    Ok((r, ms)) => {
                        p.place_ms = ms;
                        match r {
                            Ok(placed) => {
                                let mut it = placed.into_iter();
                                for (i, s) in p.specs.iter().enumerate() {
                                    if let Ok(Some(_)) = s {
                                        placements[i] = it.next();
                                    }
                                }
                            }
                            Err(e) => godot_error!("ProceduralIsland: scatter: {e}"),
                        }
                    }
                    Err(TryRecvError::Empty) => {
                        self.pending = Some(p);
                        return Progress::Working;
                    }
                    Err(TryRecvError::Disconnected) => {}
                }
            }
            p.rx = None;
            p.queued = true;
            let specs = std::mem::take(&mut p.specs);
            self.truncate(specs.len());
            for (i, (spec, placement)) in specs.into_iter().zip(placements).enumerate() {
                if let Err(e) = &spec {
                    godot_error!("ProceduralIsland: {e}");
                }
                let mask = p.masks.get(i).cloned().flatten();
                self.setup(i, spec, placement, mask, false);
            }
        }
        let left = budget_ms as f64 - t.elapsed().as_secs_f64() * 1e3;
        // The set-up took this frame's budget: the first chunks wait for the next frame.
        if !(set_up && left < self.est_job.ms()) {
            self.run_queue(parent, island, left as f32);
        }
        let call_ms = t.elapsed().as_secs_f64() * 1e3;
        p.build_ms += call_ms;
        self.worst_frame_ms = self.worst_frame_ms.max(call_ms);
        if let (Some(a), Some(b)) = (cpu0, crate::island::frame_watch::CpuClock.now_us()) {
            self.worst_frame_cpu_ms = self.worst_frame_cpu_ms.max((b - a) / 1e3);
        }
        if !self.queue.is_empty() {
            self.pending = Some(p);
            return Progress::Working;
        }
        self.last_place_ms = p.place_ms;
        self.last_build_ms = p.build_ms;
        Progress::Finished
    }

    /// Follow `scatter_layers`: connect `on_changed` (a method of the island: an engine callable,
    /// not a Rust closure, so nothing of ours stays connected to a layer that outlives the
    /// island or the extension) to the `changed` signal of each entry (reconnecting when the
    /// array's entries are replaced, added or removed) and remember which entries to re-check.
    /// Reads no layer property; cheap enough for every frame.
    pub fn watch(
        &mut self,
        layers: &Array<Option<Gd<ScatterLayer>>>,
        on_changed: &Callable,
    ) -> Option<LayerMoves> {
        let n = layers.len();
        let old_ids: Vec<Option<InstanceId>> = self
            .watched
            .iter()
            .map(|w| w.as_ref().map(|w| w.layer.instance_id()))
            .collect();
        let new_ids: Vec<Option<InstanceId>> = layers
            .iter_shared()
            .map(|l| l.map(|l| l.instance_id()))
            .collect();
        let moves = LayerMoves::between(&old_ids, &new_ids);
        let mut changed_len = false;
        let mut touched = false;
        while self.watched.len() > n {
            if let Some(w) = self.watched.pop().flatten() {
                disconnect(w);
            }
            changed_len = true;
        }
        if changed_len {
            self.truncate(n);
        }
        for (i, l) in layers.iter_shared().enumerate() {
            let same = match (self.watched.get(i), &l) {
                (Some(Some(w)), Some(l)) => w.layer.instance_id() == l.instance_id(),
                (Some(None), None) => true,
                _ => false,
            };
            if same {
                continue;
            }
            if i >= self.watched.len() {
                self.watched.resize_with(i + 1, || None);
            }
            if let Some(w) = self.watched[i].take() {
                disconnect(w);
            }
            touched = true;
            if let Some(l) = l {
                self.watched[i] = Some(Watched {
                    layer: l,
                    callable: on_changed.clone(),
                });
            }
            self.recheck.push(i);
        }
        // Connect here only, once per layer, after any change: a new entry gets its
        // connection, and a layer listed twice keeps it when one of its entries went (and
        // disconnected it above).
        if touched || changed_len {
            for w in self.watched.iter_mut().flatten() {
                if w.layer.is_instance_valid() && !w.layer.is_connected("changed", &w.callable) {
                    w.layer.connect("changed", &w.callable);
                }
            }
        }
        moves
    }

    /// A layer emitted `changed`: re-check every entry (only those whose spec differs are
    /// re-placed, see [`Self::apply_changes`]).
    pub fn layers_changed(&mut self) {
        for (i, w) in self.watched.iter().enumerate() {
            if w.is_some() {
                self.recheck.push(i);
            }
        }
    }

    /// Re-place layer `i` at the next [`Self::apply_changes`] even if its spec is unchanged
    /// (its erase mask moved to it).
    pub fn force_replace(&mut self, i: usize) {
        if let Some(l) = self.layers.get_mut(i) {
            l.spec = None;
        }
        self.recheck.push(i);
    }

    /// Whether [`Self::watch`] found entries to re-check.
    pub fn has_changes(&self) -> bool {
        !self.recheck.is_empty()
    }

    /// Re-check the entries [`Self::watch`] flagged: a layer whose spec differs from the one it
    /// was placed with is re-placed alone, chunk by chunk through the job queue (its old
    /// instances stay drawn until their chunk is redone). `erase_for(i)` gives layer `i`'s erase
    /// mask. Whether any layer changed.
    pub fn apply_changes(
        &mut self,
        layers: &Array<Option<Gd<ScatterLayer>>>,
        island: &Island,
        erase_for: impl Fn(usize) -> Option<EraseMask>,
    ) -> bool {
        let mut todo = std::mem::take(&mut self.recheck);
        todo.sort_unstable();
        todo.dedup();
        let mut changed = false;
        for i in todo {
            if i >= layers.len() {
                continue;
            }
            if self.layers.len() <= i {
                self.truncate(i + 1);
            }
            let spec = spec_of(i, &layers.at(i));
            if self.layers[i].spec.as_ref() == Some(&spec) {
                continue;
            }
            changed = true;
            let placement = match &spec {
                Ok(Some(s)) => {
                    let n = island.field.resolution;
                    match Placement::empty(&s.core, n, self.chunk_size.max(1)) {
                        Ok(fresh) => match self.layers[i].placement.take() {
                            // Keep the old instances until each chunk is redone.
                            Some(mut old) if old.chunks.len() == fresh.chunks.len() => {
                                old.capacity = fresh.capacity;
                                old.capped = fresh.capped;
                                old.keep = fresh.keep;
                                Some(old)
                            }
                            _ => Some(fresh),
                        },
                        Err(e) => {
                            godot_error!("ProceduralIsland: scatter layer {i}: {e}");
                            None
                        }
                    }
                }
                Ok(None) => None,
                Err(e) => {
                    godot_error!("ProceduralIsland: {e}");
                    None
                }
            };
            self.setup(i, spec, placement, erase_for(i), true);
        }
        changed
    }

    /// Run queued chunk jobs for up to `budget_ms` (at least one when any is queued). Returns
    /// whether the queue emptied during this call.
    pub fn run_queue(&mut self, parent: &mut Gd<Node3D>, island: &Island, budget_ms: f32) -> bool {
        if self.queue.is_empty() {
            self.frame_ms = 0.0;
            return false;
        }
        let t = Instant::now();
        // NaN and negative: one job per frame; infinite: everything now.
        let budget_ms = budget_ms_of(budget_ms);
        let seed = self.seed;
        let mut looks: Vec<Option<Option<Look>>> = Vec::new();
        let mut done = 0usize;
        while !self.queue.is_empty() {
            if done > 0
                && !self
                    .est_job
                    .fits(t.elapsed().as_secs_f64() * 1e3, budget_ms)
            {
                break;
            }
            let job_start = crate::island::frame_watch::JobTimer::start();
            let Some(job) = self.queue.pop_front() else {
                break;
            };
            let Some(layer) = self.layers.get(job.layer) else {
                continue;
            };
            if layer.epoch != job.epoch {
                continue;
            }
            let Some(Ok(Some(spec))) = layer.spec.clone() else {
                continue;
            };
            if looks.len() <= job.layer {
                looks.resize_with(job.layer + 1, || None);
            }
            if looks[job.layer].is_none() {
                looks[job.layer] = Some(self.look(&Ok(Some(spec.clone()))));
            }
            let layer = &mut self.layers[job.layer];
            if job.place {
                // The chunk's instances change: its colliders are remade from the new ones.
                let stale: Vec<(usize, usize)> = layer
                    .bodies
                    .keys()
                    .filter(|k| k.0 == job.chunk)
                    .copied()
                    .collect();
                for k in stale {
                    if let Some(b) = layer.bodies.remove(&k) {
                        free_node(b);
                    }
                }
                let mask = layer.mask.as_ref();
                if let Some(p) = layer.placement.as_mut() {
                    let cps = p.chunks_per_side;
                    let c = (job.chunk % cps, job.chunk / cps);
                    let r = with_input(island, |input| {
                        p.rebuild_chunks(input, &spec.core, mask, seed, &[c])
                    });
                    if let Err(e) = r {
                        godot_error!("ProceduralIsland: scatter layer {}: {e}", job.layer);
                    }
                }
            }
            if let Some(Some(look)) = &looks[job.layer] {
                layer.build_chunk(parent, job.layer, job.chunk, look);
            }
            done += 1;
            self.est_job.record(job_start.ms());
        }
        self.frame_ms = t.elapsed().as_secs_f64() * 1e3;
        self.worst_frame_ms = self.worst_frame_ms.max(self.frame_ms);
        self.queue.is_empty()
    }

    /// Whether chunk jobs are queued.
    pub fn is_busy(&self) -> bool {
        !self.queue.is_empty()
    }

    /// Fraction of the queued chunk jobs done (1 when nothing is queued); 0 while a background
    /// placement has not arrived yet.
    pub fn fraction_done(&self) -> f64 {
        if self.pending.as_ref().is_some_and(|p| !p.queued) {
            return 0.0;
        }
        if self.queued_total == 0 {
            return 1.0;
        }
        1.0 - self.queue.len() as f64 / self.queued_total as f64
    }

    /// The most milliseconds one [`Self::run_queue`] call took since the last call of this.
    pub fn take_worst_frame_ms(&mut self) -> f64 {
        std::mem::take(&mut self.worst_frame_ms)
    }

    /// Colliders of the layers with `collision` NEAR_CAMERA: keep one `StaticBody3D` per
    /// instance within the layer's radius of `camera` (node-local; `None`: no camera, no
    /// colliders), creating the missing ones for up to `budget_ms` (at least one) and freeing
    /// those out of range. Returns whether colliders are still missing.
    pub fn update_colliders(
        &mut self,
        parent: &mut Gd<Node3D>,
        camera: Option<Vector3>,
        budget_ms: f32,
    ) -> bool {
        let t = Instant::now();
        let budget =
            Duration::try_from_secs_f64((budget_ms.max(0.0) as f64) / 1e3).unwrap_or(Duration::MAX);
        let mut missing = false;
        let mut made = 0usize;
        for (li, layer) in self.layers.iter_mut().enumerate() {
            let radius = match (&layer.spec, camera) {
                (Some(Ok(Some(s))), Some(_)) => s.collision,
                _ => None,
            };
            let (Some(r), Some(cam), Some(p)) = (radius, camera, layer.placement.as_ref()) else {
                if !layer.bodies.is_empty() {
                    layer.free_bodies();
                }
                continue;
            };
            let mut want: HashSet<(usize, usize)> = HashSet::new();
            for (c, chunk) in p.chunks.iter().enumerate() {
                for (k, inst) in chunk.iter().enumerate() {
                    let q = Vector3::new(inst.position[0], inst.position[1], inst.position[2]);
                    if q.distance_squared_to(cam) <= r * r {
                        want.insert((c, k));
                    }
                }
            }
            let gone: Vec<(usize, usize)> = layer
                .bodies
                .keys()
                .filter(|k| !want.contains(k))
                .copied()
                .collect();
            for k in gone {
                if let Some(b) = layer.bodies.remove(&k) {
                    free_node(b);
                }
            }
            let aabb = match &layer.spec {
                Some(Ok(Some(s))) => match &s.mesh {
                    Some(m) => m.get_aabb(),
                    None => builtin_aabb(s.core.mesh),
                },
                _ => continue,
            };
            let mut todo: Vec<(usize, usize)> = want
                .into_iter()
                .filter(|k| !layer.bodies.contains_key(k))
                .collect();
            todo.sort_unstable();
            for (c, k) in todo {
                if made > 0 && t.elapsed() >= budget {
                    missing = true;
                    break;
                }
                let inst = p.chunks[c][k];
                let body = collider(li, c, k, &inst, aabb);
                parent
                    .add_child_ex(&body)
                    .internal(InternalMode::BACK)
                    .done();
                layer.bodies.insert((c, k), body);
                made += 1;
            }
        }
        missing
    }

    /// Number of colliders of layer `i`.
    pub fn collider_count(&self, i: usize) -> usize {
        self.layers.get(i).map_or(0, |l| l.bodies.len())
    }

    /// Instances per layer.
    pub fn counts(&self) -> Vec<i64> {
        self.layers
            .iter()
            .map(|l| l.placement.as_ref().map_or(0, |p| p.len() as i64))
            .collect()
    }

    /// Instances of layer `i` (0 when out of range).
    pub fn count(&self, i: usize) -> i64 {
        self.counts().get(i).copied().unwrap_or(0)
    }

    /// Node-local positions of layer `i`'s instances.
    pub fn positions(&self, i: usize) -> PackedVector3Array {
        let Some(p) = self.layers.get(i).and_then(|l| l.placement.as_ref()) else {
            return PackedVector3Array::new();
        };
        p.iter()
            .map(|inst| Vector3::new(inst.position[0], inst.position[1], inst.position[2]))
            .collect()
    }

    /// Free every node and drop the `changed` connections (the node leaves).
    pub fn free_all(&mut self) {
        self.truncate(0);
        for w in std::mem::take(&mut self.watched).into_iter().flatten() {
            disconnect(w);
        }
        self.queue.clear();
    }

    fn truncate(&mut self, n: usize) {
        while self.layers.len() > n {
            if let Some(mut l) = self.layers.pop() {
                l.free_bodies();
                l.hide_all();
                free_nodes(l.nodes);
            }
        }
        while self.layers.len() < n {
            self.layers.push(LayerState::default());
        }
    }

    /// Make layer `i` show `placement` (`None`: hide it): store it with its spec and mask, size
    /// the node pool, and queue a job per chunk (placing it first when `place`).
    fn setup(
        &mut self,
        i: usize,
        spec: SpecResult,
        placement: Option<Placement>,
        mask: Option<EraseMask>,
        place: bool,
    ) {
        let drawn = matches!(spec, Ok(Some(_)));
        let layer = &mut self.layers[i];
        layer.epoch += 1;
        layer.free_bodies();
        let chunks = placement.as_ref().map_or(0, |p| p.chunks.len());
        layer.resize(chunks);
        layer.spec = Some(spec);
        layer.placement = placement;
        layer.mask = mask;
        if !drawn || layer.placement.is_none() {
            layer.hide_all();
            return;
        }
        let epoch = layer.epoch;
        if self.queue.is_empty() {
            self.queued_total = 0;
        }
        self.queued_total += chunks;
        self.queue.extend((0..chunks).map(|chunk| Job {
            layer: i,
            chunk,
            place,
            epoch,
        }));
    }

    /// Build every chunk of layer `i` now (dropping its queued jobs).
    fn build_layer_now(&mut self, parent: &mut Gd<Node3D>, i: usize) {
        let epoch = self.layers[i].epoch;
        self.queue.retain(|j| !(j.layer == i && j.epoch == epoch));
        let spec = self.layers[i].spec.clone();
        let Some(spec @ Ok(Some(_))) = spec else {
            return;
        };
        let Some(look) = self.look(&spec) else { return };
        let layer = &mut self.layers[i];
        for c in 0..layer.nodes.len() {
            layer.build_chunk(parent, i, c, &look);
        }
    }

    /// Mesh and visibility range a spec draws with (`None` for a null or invalid layer).
    fn look(&mut self, spec: &SpecResult) -> Option<Look> {
        match spec {
            Ok(Some(s)) => Some(Look {
                mesh: match &s.mesh {
                    Some(m) => m.clone(),
                    None => self.builtin_mesh(s.core.mesh).upcast(),
                },
                visibility: s.visibility,
                shadow: s.shadow,
                scene: s.scene.clone(),
            }),
            _ => None,
        }
    }

    /// After layer `i`'s erase mask changed in `rect` (samples): re-place the chunks that
    /// rectangle can touch ([`core::chunks_to_rebuild`]) with `mask` and rebuild only their
    /// MultiMeshes. Returns the number of chunks rebuilt (0 when the layer is not placed).
    pub fn refresh_erase(
        &mut self,
        parent: &mut Gd<Node3D>,
        island: &Island,
        i: usize,
        mask: Option<&EraseMask>,
        rect: Rect,
    ) -> usize {
        if rect.is_empty() || self.pending.as_ref().is_some_and(|p| !p.queued) {
            // A background placement started before this edit reads the mask it was given; the
            // edit is picked up by the next placement of the layer.
            return 0;
        }
        let (seed, chunk_size) = (self.seed, self.chunk_size);
        let Some(spec) = self
            .layers
            .get(i)
            .and_then(|l| l.spec.clone())
            .and_then(|s| s.ok().flatten())
        else {
            return 0;
        };
        let look = self.look(&Ok(Some(spec.clone())));
        let layer = &mut self.layers[i];
        layer.mask = mask.cloned();
        layer.free_bodies();
        let Some(p) = layer.placement.as_mut() else {
            return 0;
        };
        let chunks = core::chunks_to_rebuild(rect, island.field.resolution, chunk_size);
        let r = with_input(island, |input| {
            p.rebuild_chunks(input, &spec.core, mask, seed, &chunks)
        });
        if let Err(e) = r {
            godot_error!("ProceduralIsland: scatter layer {i}: {e}");
            return 0;
        }
        let cps = p.chunks_per_side;
        if let Some(look) = &look {
            for &(cx, cz) in &chunks {
                layer.build_chunk(parent, i, cz * cps + cx, look);
            }
        }
        chunks.len()
    }

    /// The built-in mesh `kind` as an ArrayMesh with vertex colours (built once).
    fn builtin_mesh(&mut self, kind: MeshKind) -> Gd<ArrayMesh> {
        let k = crate::scatter::scatter_layer::mesh_index(kind) as usize;
        if self.builtin.len() <= k {
            self.builtin.resize_with(k + 1, || None);
        }
        self.builtin[k]
            .get_or_insert_with(|| builtin_array_mesh(kind))
            .clone()
    }
}

/// What a layer's MultiMeshes draw.
struct Look {
    mesh: Gd<Mesh>,
    visibility: [f32; 4],
    shadow: i32,
    scene: Option<Gd<PackedScene>>,
}

impl LayerState {
    /// Free every collider of the layer.
    fn free_bodies(&mut self) {
        for (_, b) in self.bodies.drain() {
            free_node(b);
        }
    }

    /// Resize the node pool to `chunks` (freeing the extra nodes).
    fn resize(&mut self, chunks: usize) {
        if self.nodes.len() > chunks {
            free_nodes(self.nodes.split_off(chunks));
        }
        self.nodes.resize_with(chunks, || None);
    }

    /// Hide every node of the layer.
    fn hide_all(&mut self) {
        for node in self.nodes.iter_mut().flatten() {
            if node.is_instance_valid() {
                node.set_visible(false);
            }
        }
        for (_, v) in self.scenes.drain() {
            v.into_iter().for_each(free_node);
        }
    }

    /// Replace chunk `c`'s scene instances by one instance of `scene` per placed instance.
    fn build_scenes(
        &mut self,
        parent: &mut Gd<Node3D>,
        i: usize,
        c: usize,
        scene: &Gd<PackedScene>,
    ) {
        if let Some(old) = self.scenes.remove(&c) {
            old.into_iter().for_each(free_node);
        }
        let Some(p) = &self.placement else { return };
        let mut made = Vec::with_capacity(p.chunks[c].len());
        for (k, inst) in p.chunks[c].iter().enumerate() {
            let Some(node) = scene.instantiate() else {
                godot_error!(
                    "ProceduralIsland: scatter layer {i}: the scene could not be instanced"
                );
                break;
            };
            let mut node = match node.try_cast::<Node3D>() {
                Ok(n) => n,
                Err(n) => {
                    godot_error!(
                        "ProceduralIsland: scatter layer {i}: the scene's root is not a Node3D"
                    );
                    n.free();
                    break;
                }
            };
            let [x, y, z] = inst.basis();
            let v = |a: [f32; 3]| Vector3::new(a[0], a[1], a[2]);
            node.set_transform(Transform3D::new(
                Basis::from_cols(v(x), v(y), v(z)),
                v(inst.position),
            ));
            node.set_name(&format!("ScatterScene_{i}_{c}_{k}"));
            parent
                .add_child_ex(&node)
                .internal(InternalMode::BACK)
                .done();
            made.push(node);
        }
        self.scenes.insert(c, made);
    }

    /// Build (or update) the MultiMesh of chunk `c` (index `cz · chunks_per_side + cx`) from the
    /// layer's placement.
    fn build_chunk(&mut self, parent: &mut Gd<Node3D>, i: usize, c: usize, look: &Look) {
        let Some(p) = &self.placement else { return };
        if c >= p.chunks.len() || c >= self.nodes.len() {
            return;
        }
        if let Some(scene) = &look.scene {
            if let Some(node) = self.nodes[c].as_mut() {
                if node.is_instance_valid() {
                    node.set_visible(false);
                }
            }
            self.build_scenes(parent, i, c, scene);
            return;
        }
        if let Some(old) = self.scenes.remove(&c) {
            old.into_iter().for_each(free_node);
        }
        let (cx, cz) = (c % p.chunks_per_side, c / p.chunks_per_side);
        let n = p.chunks[c].len();
        let slot = &mut self.nodes[c];
        if slot.as_ref().is_some_and(|node| !node.is_instance_valid()) {
            *slot = None;
        }
        if n == 0 {
            if let Some(node) = slot.as_mut() {
                node.set_visible(false);
                if let Some(mut mm) = node.get_multimesh() {
                    mm.set_instance_count(0);
                }
            }
            return;
        }
        let node = slot.get_or_insert_with(|| {
            let mut mmi = MultiMeshInstance3D::new_alloc();
            mmi.set_name(&format!("Scatter_{i}_{cx}_{cz}"));
            let mut mm = MultiMesh::new_gd();
            mm.set_transform_format(TransformFormat::TRANSFORM_3D);
            mmi.set_multimesh(&mm);
            parent
                .add_child_ex(&mmi)
                .internal(InternalMode::BACK)
                .done();
            mmi
        });
        let vis = look.visibility;
        node.set_name(&format!("Scatter_{i}_{cx}_{cz}"));
        node.set_visible(true);
        node.set_visibility_range_begin(vis[0]);
        node.set_visibility_range_begin_margin(vis[1]);
        node.set_visibility_range_end(vis[2]);
        node.set_visibility_range_end_margin(vis[3]);
        node.set_cast_shadows_setting(ShadowCastingSetting::from_ord(look.shadow));
        node.set_visibility_range_fade_mode(if vis[3] > 0.0 || vis[1] > 0.0 {
            VisibilityRangeFadeMode::SELF
        } else {
            VisibilityRangeFadeMode::DISABLED
        });
        let mut mm = node.get_multimesh().unwrap_or_else(|| {
            let mut mm = MultiMesh::new_gd();
            mm.set_transform_format(TransformFormat::TRANSFORM_3D);
            node.set_multimesh(&mm);
            mm
        });
        mm.set_instance_count(0);
        mm.set_mesh(&look.mesh);
        mm.set_instance_count(n as i32);
        mm.set_buffer(&PackedFloat32Array::from(p.chunk_buffer(cx, cz)));
    }
}

/// AABB of a built-in mesh (from its vertices).
fn builtin_aabb(kind: MeshKind) -> Aabb {
    let m = kind.mesh();
    let mut lo = Vector3::splat(f32::INFINITY);
    let mut hi = Vector3::splat(f32::NEG_INFINITY);
    for p in &m.positions {
        let v = Vector3::new(p[0], p[1], p[2]);
        lo = lo.coord_min(v);
        hi = hi.coord_max(v);
    }
    if lo.x > hi.x {
        return Aabb::default();
    }
    Aabb::new(lo, hi - lo)
}

/// A `StaticBody3D` for instance `k` of chunk `c` of layer `layer`: a box of the mesh's `aabb`
/// scaled by the instance's scale, turned and placed like the instance (the body itself is not
/// scaled).
fn collider(
    layer: usize,
    c: usize,
    k: usize,
    inst: &core::Instance,
    aabb: Aabb,
) -> Gd<StaticBody3D> {
    let [x, y, z] = inst.basis();
    let s = inst.scale.max(1e-6);
    let col = |v: [f32; 3]| Vector3::new(v[0] / s, v[1] / s, v[2] / s);
    let basis = Basis::from_cols(col(x), col(y), col(z));
    let origin = Vector3::new(inst.position[0], inst.position[1], inst.position[2]);
    let mut body = StaticBody3D::new_alloc();
    body.set_name(&format!("ScatterBody_{layer}_{c}_{k}"));
    body.set_transform(Transform3D::new(basis, origin));
    let mut shape = BoxShape3D::new_gd();
    shape.set_size((aabb.size * s).abs().coord_max(Vector3::splat(0.01)));
    let mut cs = CollisionShape3D::new_alloc();
    cs.set_shape(&shape);
    cs.set_position((aabb.position + aabb.size * 0.5) * s);
    body.add_child(&cs);
    body
}

fn free_node<T: Inherits<Node>>(n: Gd<T>) {
    let mut n = n.upcast::<Node>();
    if n.is_instance_valid() {
        if let Some(mut p) = n.get_parent() {
            p.remove_child(&n);
        }
        n.queue_free();
    }
}

/// Disconnect a `changed` connection (the resource may already be gone).
fn disconnect(w: Watched) {
    let Watched {
        mut layer,
        callable,
    } = w;
    if layer.is_instance_valid() && layer.is_connected("changed", &callable) {
        layer.disconnect("changed", &callable);
    }
}

/// `f` with the island's scatter input, its roads cleared. An imported island has no biomes: every sample then
/// counts as biome 0 (the core would reject the empty map).
fn with_input<R>(island: &Island, f: impl FnOnce(&ScatterInput) -> R) -> R {
    let n = island.field.resolution;
    // Nothing grows on the roads (`IslandPath`).
    let cleared = island
        .params
        .paths
        .as_deref()
        .and_then(|s| island_core::paths::road_cover(s, n, island.field.world_size));
    let input = ScatterInput {
        cleared: cleared.as_deref().unwrap_or(&[]),
        ..ScatterInput::from_island(island)
    };
    if input.biomes.len() == n * n {
        return f(&input);
    }
    let zeros = vec![0u8; n * n];
    f(&ScatterInput {
        biomes: &zeros,
        ..input
    })
}

/// `core::place_all` with one erase mask (or none) per layer; nothing to do (and no map read)
/// without layers.
fn place_all(
    input: &ScatterInput,
    layers: &[core::ScatterLayer],
    erase: &[Option<EraseMask>],
    seed: u64,
    chunk_size: usize,
) -> Result<Vec<Placement>, String> {
    if layers.is_empty() {
        return Ok(Vec::new());
    }
    let refs: Vec<Option<&EraseMask>> = erase.iter().map(Option::as_ref).collect();
    core::place_all(input, layers, &refs, seed, chunk_size)
}

fn free_nodes(nodes: Vec<Option<Gd<MultiMeshInstance3D>>>) {
    for mut n in nodes.into_iter().flatten() {
        if n.is_instance_valid() {
            if let Some(mut p) = n.get_parent() {
                p.remove_child(&n);
            }
            n.queue_free();
        }
    }
}

/// ArrayMesh of a built-in scatter mesh, with a material drawing its vertex colours.
pub fn builtin_array_mesh(kind: MeshKind) -> Gd<ArrayMesh> {
    let m = kind.mesh();
    let mut arrays = VarArray::new();
    arrays.resize(ArrayType::MAX.ord() as usize, &Variant::nil());
    let v = crate::island::surface::vec3_array(&m.positions);
    let n = crate::island::surface::vec3_array(&m.normals);
    let c: PackedColorArray = m
        .colors
        .iter()
        .map(|c| Color::from_rgba(c[0], c[1], c[2], c[3]))
        .collect();
    let idx: PackedInt32Array = m.indices.iter().map(|&i| i as i32).collect();
    arrays.set(ArrayType::VERTEX.ord() as usize, &v.to_variant());
    arrays.set(ArrayType::NORMAL.ord() as usize, &n.to_variant());
    arrays.set(ArrayType::COLOR.ord() as usize, &c.to_variant());
    arrays.set(ArrayType::INDEX.ord() as usize, &idx.to_variant());
    let mut mesh = ArrayMesh::new_gd();
    mesh.add_surface_from_arrays(PrimitiveType::TRIANGLES, &arrays);
    let mut mat = StandardMaterial3D::new_gd();
    mat.set_flag(Flags::ALBEDO_FROM_VERTEX_COLOR, true);
    // The built-in meshes' colours are authored in sRGB (like a colour picker's): convert them,
    // or they render washed out.
    mat.set_flag(Flags::SRGB_VERTEX_COLOR, true);
    mat.set_roughness(0.9);
    mesh.surface_set_material(0, &mat);
    mesh.set_name(kind.name());
    mesh
}
