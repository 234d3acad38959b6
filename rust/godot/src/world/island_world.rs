//! The `IslandWorld` node: an ocean without edges, islands generated where and when they are
//! needed around the targets (placement: [`island_core::world`]; what to load: [`super::plan`];
//! the sea: [`super::ocean`]).

use super::ocean::Ocean;
use super::plan::{self, Level, Rings, Target};
use crate::brush::splat_paint::SplatPaint;
use crate::io::stored_resources;
use crate::island::frame_watch::CpuClock;
use crate::island::procedural_island::ProceduralIsland;
use godot::classes::file_access::ModeFlags;
use godot::classes::{
    Camera3D, DisplayServer, EditorInterface, Engine, FileAccess, INode3D, Image, Node, Node3D,
    PackedScene,
};
use godot::prelude::*;
use island_core::world::{self as placement, IslandPlacement, WorldParams};
use island_core::world_map::WorldMap;
use std::collections::HashMap;
use std::time::Instant;

/// Samples per side of the far, coarse generation of an island (at most).
const DEFAULT_COARSE_RESOLUTION: i32 = placement::DEFAULT_COARSE_SIDE as i32;
pub use crate::island::world_meta::{frame_log_threshold, CELL_META, PIN_META};
/// Largest area `find_islands` answers for, in cells.
const MAX_FIND_CELLS: usize = 1 << 20;

/// One cell's loaded island: the coarse far mesh and/or the detailed island.
struct Entry {
    placement: IslandPlacement,
    coarse: Option<Gd<ProceduralIsland>>,
    detail: Option<Gd<ProceduralIsland>>,
    /// Whether each node finished its first generation.
    coarse_ready: bool,
    detail_ready: bool,
    /// The level announced by `island_detail_changed` (None before `island_loaded`).
    shown: Level,
}

impl Entry {
    fn level(&self) -> Level {
        if self.detail.is_some() {
            Level::Detail
        } else if self.coarse.is_some() {
            Level::Coarse
        } else {
            Level::None
        }
    }
}

/// An endless ocean of islands streamed around the players.
///
/// The plane is cut into square cells of [member cell_size] metres; each cell holds at most one
/// island, chosen by [member world_seed] alone ([method get_island_info] answers without
/// generating anything; neighbouring islands never overlap). Around each target (the nodes of
/// [member targets]; none: the current camera, in the editor the editor's camera) the islands
/// within [member view_distance] are shown as a coarse mesh (a low-resolution generation of the
/// same island, same outline), those within [member detail_distance] at full resolution with
/// water and scatter, and those within [member collision_distance] also with colliders; islands beyond 1.2 × [member view_distance] are freed. One
/// generation runs at a time, nearest first (and ahead of a moving target first), in the
/// background; each island installs within [member build_budget_ms] per frame.
///
/// Every island is a [ProceduralIsland] child made from [member island_scene] (its settings,
/// layers and materials), with the seed, [code]world_size[/code] and resolution of its cell; a
/// lone [ProceduralIsland] given the values of [method get_island_info] is the same island, bit
/// for bit. Paint and sculpt edits made on a loaded island (with a [TerrainBrush]) are kept per
/// cell when it unloads and come back when it reloads; they are saved with the scene and with
/// [method save_edits].
///
/// One island can be customised: [method pin_island] turns a cell's island into a
/// [ProceduralIsland] child of the world that the scene owns and saves (every property
/// editable, its paint moved over); the world then leaves that cell to it. A pinned island is
/// an ordinary node: it is always loaded at full detail (it generates when the scene loads, in
/// a game before the first frame), and [method unpin_island] (or deleting the node) hands the
/// cell back to the world.
#[derive(GodotClass)]
#[class(tool, base=Node3D)]
pub struct IslandWorld {
    base: Base<Node3D>,
    /// Seed of the whole world: where the islands are and each island's seed.
    #[export]
    #[var(set = set_world_seed)]
    world_seed: i64,
    /// Edge of a cell, metres; at most one island per cell. Must exceed [member island_size_max].
    #[export(range = (256.0, 65536.0, 1.0, or_greater, suffix = "m"))]
    #[var(set = set_cell_size)]
    cell_size: f32,
    /// Probability that a cell has an island (0: open sea, 1: every cell).
    #[export(range = (0.0, 1.0, 0.01))]
    #[var(set = set_island_chance)]
    island_chance: f32,
    /// Smallest island map edge (the island's `world_size`), metres.
    #[export(range = (128.0, 8192.0, 1.0, suffix = "m"))]
    #[var(set = set_island_size_min)]
    island_size_min: f32,
    /// Largest island map edge, metres.
    #[export(range = (128.0, 8192.0, 1.0, suffix = "m"))]
    #[var(set = set_island_size_max)]
    island_size_max: f32,
    /// Heightfield samples per metre at full detail (each island gets the lowest resolution
    /// 2ⁿ+1 at least that dense: its spacing is between half and one times `1 / samples_per_metre`).
    #[export(range = (0.05, 4.0, 0.01, or_greater))]
    #[var(set = set_samples_per_metre)]
    samples_per_metre: f32,
    /// Template of every island: a scene whose root is a [ProceduralIsland] (algorithm, shape,
    /// biomes, terrain and scatter layers, materials). Empty: the node's defaults.
    #[export]
    #[var(set = set_island_scene)]
    island_scene: Option<Gd<PackedScene>>,
    /// The nodes (`Node3D`) the world streams around: the union of their rings is loaded (a
    /// server with eight players). Empty: the current camera (the editor's 3D camera in the
    /// editor).
    #[export]
    targets: Array<NodePath>,
    /// Islands within this distance of a target are shown (a coarse mesh), metres.
    #[export_group(name = "Streaming")]
    #[export(range = (100.0, 50000.0, 10.0, or_greater, suffix = "m"))]
    #[var(set = set_view_distance)]
    view_distance: f32,
    /// Islands within this distance of a target are at full resolution with water and
    /// scatter, metres (colliders: [member collision_distance]).
    #[export(range = (100.0, 20000.0, 10.0, or_greater, suffix = "m"))]
    #[var(set = set_detail_distance)]
    detail_distance: f32,
    /// Islands within this distance of a target have colliders, metres (at most
    /// [member detail_distance]). A detailed island that comes within it gets its colliders
    /// from its heights, a few chunks a frame within [member build_budget_ms] (no
    /// regeneration); beyond 1.1 × this distance it drops them again. [method load_now]
    /// generates the islands within it with their colliders.
    #[export(range = (10.0, 20000.0, 10.0, or_greater, suffix = "m"))]
    #[var(set = set_collision_distance)]
    collision_distance: f32,
    /// Milliseconds per frame the whole world may spend installing islands (given to the
    /// island that is installing).
    #[export(range = (0.5, 100.0, 0.5, or_greater, suffix = "ms"))]
    build_budget_ms: f32,
    /// Samples per side of an island's far, coarse mesh (at most; 33..1025, 2ⁿ+1). The default
    /// 257 keeps the coarse island's outline within an IoU of 0.95 of the detailed one; 129
    /// halves the far work but falls to 0.94 on some islands.
    #[export(range = (33.0, 1025.0))]
    coarse_resolution: i32,
    /// Draw the one ocean (a sea surface and a sea floor following the targets).
    #[export]
    sea_enabled: bool,
    /// Threads the islands generate with. 0: automatic, one per core less one (at least one;
    /// `RAYON_NUM_THREADS` when set), so the main thread keeps a core to itself and the
    /// frames stay smooth while islands generate. The islands are the same bit for bit
    /// whatever the count.
    #[export(range = (0.0, 256.0, 1.0))]
    generator_threads: i32,
    /// Edits per cell, as saved (storage only).
    #[allow(dead_code)]
    #[export(storage)]
    #[var(get = get_stored_edits, set = set_stored_edits)]
    stored_edits: VarDictionary,

    entries: HashMap<[i64; 2], Entry>,
    /// The paint and sculpt of each cell ever edited (kept while the island is unloaded).
    edits: HashMap<[i64; 2], Gd<SplatPaint>>,
    ocean: Option<Ocean>,
    /// Last positions of the targets (for their velocity) and when they were taken.
    last: Vec<([f64; 3], [f64; 3])>,
    last_at: Option<Instant>,
    /// The last error reported (each distinct one once).
    reported: String,
    /// The most one frame of this node and its islands together took, ms, and what that frame
    /// did.
    frame_ms_max: f64,
    frame_phase: &'static str,
    /// The same in main-thread CPU time (without the time the OS gave other threads).
    frame_cpu_ms_max: f64,
    /// The most one frame of this node's own streaming took, ms.
    stream_ms_max: f64,
    /// This node's own streaming time (wall, CPU) in the previous frame, ms (its islands
    /// process after it, so a frame's total is known one frame later).
    prev_stream_ms: (f64, f64),
    cpu_clock: CpuClock,
    /// The islands' generator threads (see `generator_threads`).
    pool: Option<std::sync::Arc<rayon::ThreadPool>>,
    queued: usize,
    sea_depth: f32,
    /// A backend every island is generated with (`IslandSync`: the CPU path), else the
    /// template's.
    forced_backend: Option<i32>,
}

#[godot_api]
impl INode3D for IslandWorld {
    fn init(base: Base<Node3D>) -> Self {
        let d = WorldParams::default();
        IslandWorld {
            base,
            world_seed: d.world_seed as i64,
            cell_size: d.cell_size,
            island_chance: d.island_chance,
            island_size_min: d.island_size_min,
            island_size_max: d.island_size_max,
            samples_per_metre: d.samples_per_metre,
            island_scene: None,
            targets: Array::new(),
            view_distance: 8000.0,
            detail_distance: 2000.0,
            collision_distance: 800.0,
            build_budget_ms: 4.0,
            coarse_resolution: DEFAULT_COARSE_RESOLUTION,
            sea_enabled: true,
            generator_threads: 0,
            pool: None,
            stored_edits: VarDictionary::new(),
            entries: HashMap::new(),
            edits: HashMap::new(),
            ocean: None,
            last: Vec::new(),
            last_at: None,
            reported: String::new(),
            frame_ms_max: 0.0,
            frame_phase: "",
            frame_cpu_ms_max: 0.0,
            stream_ms_max: 0.0,
            prev_stream_ms: (0.0, 0.0),
            cpu_clock: CpuClock,
            queued: 0,
            sea_depth: island_core::params::CoastParams::DEFAULT_SEA_DEPTH,
            forced_backend: None,
        }
    }

    fn ready(&mut self) {
        // The islands' shared terrain shader now, while the scene loads, not in the first
        // streaming frame (6-7 ms: the first island node parsed it).
        crate::island::material::warm_up();
        // The one ocean now too (its water shader parsed while the scene loads): made in the
        // first streaming frame it took most of that frame's 52 ms under Vulkan (lavapipe).
        self.update_ocean(&[]);
        self.warm_splat_pool();
        self.base_mut().set_process(true);
    }

    fn exit_tree(&mut self) {
        if let Some(o) = self.ocean.take() {
            o.free();
        }
    }

    fn process(&mut self, _delta: f64) {
        // The previous frame: this node's streaming, then its islands' own frames.
        let (mut total, mut cpu) = self.prev_stream_ms;
        let (mut phase, mut most) = ("stream", total);
        for e in self.entries.values() {
            for isl in [&e.coarse, &e.detail].into_iter().flatten() {
                if isl.is_instance_valid() {
                    let (ms, c, p) = isl.bind().last_process();
                    total += ms;
                    cpu += c;
                    if ms > most {
                        (most, phase) = (ms, p);
                    }
                }
            }
        }
        if frame_log_threshold().is_some_and(|t| total > t) {
            self.log_frame(total, cpu);
        }
        if total > self.frame_ms_max {
            self.frame_ms_max = total;
            self.frame_phase = phase;
        }
        self.frame_cpu_ms_max = self.frame_cpu_ms_max.max(cpu);
        let t0 = Instant::now();
        let c0 = self.cpu_clock.now_us();
        self.stream();
        let ms = t0.elapsed().as_secs_f64() * 1000.0;
        let c = match (c0, self.cpu_clock.now_us()) {
            (Some(a), Some(b)) => (b - a) / 1e3,
            _ => 0.0,
        };
        self.prev_stream_ms = (ms, c);
        self.stream_ms_max = self.stream_ms_max.max(ms);
        // One budget per frame for the whole world: the islands that install nodes this frame
        // (they process after this node) get what the streaming left of it.
        for e in self.entries.values_mut() {
            for isl in [&mut e.coarse, &mut e.detail].into_iter().flatten() {
                if isl.is_instance_valid() && isl.bind().is_generating() {
                    isl.bind_mut().set_frame_spent_elsewhere(ms);
                }
            }
        }
    }

    fn get_configuration_warnings(&self) -> PackedStringArray {
        self.get_warnings()
    }
}

#[godot_api]
impl IslandWorld {
    /// An island was loaded (its coarse mesh, or its detailed version directly).
    #[signal]
    fn island_loaded(cell: Vector2i, island: Gd<ProceduralIsland>);
    /// An island was freed (beyond 1.2 × [member view_distance]); its edits are kept.
    #[signal]
    fn island_unloaded(cell: Vector2i);
    /// An island's level changed: 1 = coarse far mesh, 2 = full detail with colliders.
    #[signal]
    fn island_detail_changed(cell: Vector2i, level: i64);

    #[func]
    fn set_world_seed(&mut self, v: i64) {
        self.world_seed = v;
        self.layout_changed();
    }
    #[func]
    fn set_cell_size(&mut self, v: f32) {
        self.cell_size = v;
        self.layout_changed();
    }
    #[func]
    fn set_island_chance(&mut self, v: f32) {
        self.island_chance = v;
        self.layout_changed();
    }
    #[func]
    fn set_island_size_min(&mut self, v: f32) {
        self.island_size_min = v;
        self.layout_changed();
    }
    #[func]
    fn set_island_size_max(&mut self, v: f32) {
        self.island_size_max = v;
        self.layout_changed();
    }
    #[func]
    fn set_samples_per_metre(&mut self, v: f32) {
        self.samples_per_metre = v;
        self.layout_changed();
    }
    #[func]
    fn set_island_scene(&mut self, v: Option<Gd<PackedScene>>) {
        self.island_scene = v;
        self.layout_changed();
    }
    #[func]
    fn set_view_distance(&mut self, v: f32) {
        self.view_distance = v;
        self.base_mut().update_configuration_warnings();
    }
    #[func]
    fn set_detail_distance(&mut self, v: f32) {
        self.detail_distance = v;
        self.base_mut().update_configuration_warnings();
    }
    #[func]
    fn set_collision_distance(&mut self, v: f32) {
        self.collision_distance = v;
        self.base_mut().update_configuration_warnings();
    }

    /// What the world puts in `cell`, without generating anything: `exists` (bool), and when it
    /// exists `cell`, `center` (Vector3, world metres relative to this node, y = 0), `seed`,
    /// `world_size` (metres) and `resolution` (samples per side at full detail): the values that
    /// make a lone [ProceduralIsland] the same island. Empty-ish (`exists` false) for open sea
    /// and for invalid settings (with an error).
    #[func]
    pub fn get_island_info(&mut self, cell: Vector2i) -> VarDictionary {
        let mut d = VarDictionary::new();
        d.set("exists", false);
        let Some(params) = self.params_or_report() else {
            return d;
        };
        if let Some(p) = placement::island_at(&params, [cell.x as i64, cell.y as i64]) {
            d.set("exists", true);
            d.set("cell", cell);
            d.set(
                "center",
                Vector3::new(p.center[0] as f32, 0.0, p.center[1] as f32),
            );
            d.set("seed", p.seed as i64);
            d.set("world_size", p.world_size);
            d.set("resolution", p.resolution as i64);
        }
        d
    }

    /// The cell holding the point `(x, z)` (metres, relative to this node).
    #[func]
    pub fn cell_at(&self, x: f64, z: f64) -> Vector2i {
        let c = placement::cell_at(&self.params(), x, z);
        cell_vector(c)
    }

    /// The cells whose island's map overlaps `rect` (x and z metres, relative to this node),
    /// row by row. At most about a million cells are looked at (an error beyond).
    #[func]
    pub fn find_islands(&mut self, rect: Rect2) -> Array<Vector2i> {
        let mut out = Array::new();
        let Some(params) = self.params_or_report() else {
            return out;
        };
        let (x0, z0) = (rect.position.x as f64, rect.position.y as f64);
        let (x1, z1) = (x0 + rect.size.x as f64, z0 + rect.size.y as f64);
        let cs = params.cell_size as f64;
        let cells = ((x1 - x0) / cs + 2.0) * ((z1 - z0) / cs + 2.0);
        if !(cells.is_finite() && cells <= MAX_FIND_CELLS as f64) {
            godot_error!(
                "IslandWorld.find_islands: the rectangle {rect} covers about {cells:.0} cells; \
                 at most {MAX_FIND_CELLS} are looked at"
            );
            return out;
        }
        for c in placement::cells_in_rect(&params, x0, z0, x1, z1) {
            if let Some(p) = placement::island_at(&params, c) {
                let b = p.bounds();
                if b[0] < x1 && b[2] > x0 && b[1] < z1 && b[3] > z0 {
                    out.push(cell_vector(c));
                }
            }
        }
        out
    }

    /// The island loaded at `(x, z)` (metres, relative to this node): its detailed version, else
    /// its coarse mesh; null where none is loaded.
    #[func]
    pub fn get_island_at(&self, x: f64, z: f64) -> Option<Gd<ProceduralIsland>> {
        if let Some((isl, _)) = self.pinned_at(&self.pinned(), x, z) {
            return done(&isl).then_some(isl);
        }
        let e = self.entry_at(x, z)?;
        if e.detail_ready {
            e.detail.clone()
        } else if e.coarse_ready {
            e.coarse.clone()
        } else {
            None
        }
    }

    /// The ground height at `(x, z)` (metres, relative to this node): the island's surface where
    /// its detailed version (with colliders) is loaded (exactly its `get_height_at`), the sea
    /// floor (the islands' border depth, negative) between islands, and NaN over an island that
    /// is not loaded at full detail.
    #[func]
    pub fn get_height_at(&self, x: f64, z: f64) -> f32 {
        if !(x.is_finite() && z.is_finite()) {
            return f32::NAN;
        }
        let params = self.params();
        if params.validate().is_err() {
            return f32::NAN;
        }
        // One look at the children serves both questions below.
        let pinned = self.pinned();
        if let Some((isl, p)) = self.pinned_at(&pinned, x, z) {
            if !done(&isl) {
                return f32::NAN;
            }
            return isl
                .bind()
                .get_height_at((x - p.center[0]) as f32, (z - p.center[1]) as f32);
        }
        let cell = placement::cell_at(&params, x, z);
        if pinned.contains_key(&cell) {
            // The cell's own island is not there: its pinned island moved off it.
            return -self.sea_depth;
        }
        let Some(p) = placement::island_at(&params, cell) else {
            return -self.sea_depth;
        };
        if plan::distance_to_square(x, z, p.bounds()) > 0.0 {
            return -self.sea_depth;
        }
        match self.entries.get(&cell) {
            Some(e) if e.detail_ready => {
                let isl = e.detail.as_ref().expect("ready");
                isl.bind()
                    .get_height_at((x - p.center[0]) as f32, (z - p.center[1]) as f32)
            }
            _ => f32::NAN,
        }
    }

    /// Counts and costs: `loaded` (islands shown at any level), `detailed` (at full detail),
    /// `with_colliders` (detailed islands whose every chunk has its collider: those within
    /// [member collision_distance]), `generating` (0 or 1), `queued` (islands waiting for their level),
    /// `frame_ms_max` (the most one frame of this node and its islands together took on the
    /// main thread, ms: streaming plus each island's `_process`, where islands install their
    /// nodes), `frame_phase` (what that frame's largest part did: `stream`, or an island's
    /// `install`, `chunks`, `scatter`, `worker`), `frame_cpu_ms_max` (the same in main-thread
    /// CPU time: without the time the OS gave the generator's threads meanwhile),
    /// `stream_ms_max` (this node's own streaming alone), `generator_threads` (the threads
    /// the islands generate with: one per core, or `RAYON_NUM_THREADS`), `memory_bytes`
    /// (estimate of the streamed islands' maps and meshes), `pinned` (pinned islands; they are
    /// not counted in the others).
    #[func]
    pub fn get_world_stats(&self) -> VarDictionary {
        let mut d = VarDictionary::new();
        let loaded = self
            .entries
            .values()
            .filter(|e| e.coarse_ready || e.detail_ready)
            .count();
        let detailed = self.entries.values().filter(|e| e.detail_ready).count();
        let with_colliders = self
            .entries
            .values()
            .filter(|e| {
                e.detail_ready
                    && e.detail
                        .as_ref()
                        .is_some_and(|i| i.bind().is_collision_ready())
            })
            .count();
        let generating = self
            .entries
            .values()
            .filter(|e| {
                e.coarse.as_ref().is_some_and(|i| i.bind().is_generating())
                    || e.detail.as_ref().is_some_and(|i| i.bind().is_generating())
            })
            .count();
        let mut memory = 0u64;
        for e in self.entries.values() {
            for (n, on) in [
                (self.coarse_side(&e.placement), e.coarse.is_some()),
                (e.placement.resolution, e.detail.is_some()),
            ] {
                if on {
                    // Heights, normals, splat, water, collider and mesh copies: ~64 B a sample.
                    memory += (n * n) as u64 * 64;
                }
            }
        }
        d.set("loaded", loaded as i64);
        d.set("detailed", detailed as i64);
        d.set("with_colliders", with_colliders as i64);
        d.set("generating", generating as i64);
        d.set("queued", self.queued as i64);
        d.set("frame_ms_max", self.frame_ms_max);
        d.set("frame_phase", self.frame_phase);
        d.set("frame_cpu_ms_max", self.frame_cpu_ms_max);
        d.set("generator_threads", self.generator_thread_count() as i64);
        d.set("stream_ms_max", self.stream_ms_max);
        d.set("memory_bytes", memory as i64);
        d.set("pinned", self.pinned().len() as i64);
        d
    }

    /// The configuration warnings (what is wrong with the settings; empty when fine).
    #[func]
    pub fn get_warnings(&self) -> PackedStringArray {
        let mut w = PackedStringArray::new();
        for p in self.problems() {
            w.push(&p);
        }
        w
    }

    /// Clear `frame_ms_max`, `frame_phase`, `frame_cpu_ms_max` and `stream_ms_max` of [method get_world_stats].
    #[func]
    pub fn reset_frame_stats(&mut self) {
        self.frame_ms_max = 0.0;
        self.frame_phase = "";
        self.frame_cpu_ms_max = 0.0;
        self.stream_ms_max = 0.0;
    }

    /// Generate now, blocking, every island within `collision_distance` of a target at full
    /// detail with its colliders (and nothing else), so a player placed there stands on ground
    /// in the very first frame: call it once the targets are set, behind a loading screen (it
    /// takes about a second per 2049² island on 2 cores). Streaming then goes on as usual.
    /// Returns the number of islands generated; 0 with an error when the settings are wrong.
    #[func]
    pub fn load_now(&mut self) -> i64 {
        if !self.base().is_inside_tree() {
            godot_error!("IslandWorld.load_now: the world is not in the scene tree yet (call it from _ready or later)");
            return 0;
        }
        let Some(params) = self.settings_or_report() else {
            return 0;
        };
        let targets = self.targets_now();
        let mut cells: Vec<IslandPlacement> = Vec::new();
        let reach = self.collision_distance as f64;
        for t in &targets {
            let (x, z) = (t.position[0], t.position[2]);
            for c in placement::cells_in_rect(&params, x - reach, z - reach, x + reach, z + reach) {
                if let Some(p) = placement::island_at(&params, c) {
                    if plan::distance_to_square(x, z, p.bounds()) <= reach
                        && !cells.iter().any(|q| q.cell == p.cell)
                    {
                        cells.push(p);
                    }
                }
            }
        }
        let pinned = self.pinned();
        cells.retain(|p| !pinned.contains_key(&p.cell));
        cells.sort_by_key(|p| p.cell);
        let mut made = 0;
        for p in cells {
            let ready = self.entries.get(&p.cell).is_some_and(|e| e.detail_ready);
            if ready {
                continue;
            }
            // A detail still generating in the background is replaced by the blocking one.
            if let Some(e) = self.entries.get_mut(&p.cell) {
                if let Some(mut d) = e.detail.take() {
                    d.queue_free();
                }
            }
            let cell = p.cell;
            self.start_with(p, Level::Detail, true, true);
            if let Some(mut isl) = self.entries.get(&cell).and_then(|e| e.detail.clone()) {
                isl.bind_mut().settle();
            }
            made += 1;
        }
        self.poll_finished();
        made
    }

    /// A top-down map (RGB8, world x to the right, z down) of `rect` (x, z, width, height in
    /// metres, node-local), `size` pixels along its longer side (16..2048): the sea, the cell
    /// borders, every loaded island's shaded relief (its detailed terrain, else its coarse
    /// one), the outline of every island not loaded yet, and the targets (the editor camera)
    /// as white dots. Draws what is loaded, generates nothing (fast enough for the inspector
    /// to redraw it a few times a second). Null with an error for an empty rectangle, a bad
    /// size or wrong settings.
    #[func]
    pub fn get_map_image(&mut self, rect: Rect2, size: i32) -> Option<Gd<Image>> {
        let params = self.params_or_report()?;
        let (x0, z0) = (rect.position.x as f64, rect.position.y as f64);
        let (w, h) = (rect.size.x as f64, rect.size.y as f64);
        if !(w > 0.0
            && h > 0.0
            && w.is_finite()
            && h.is_finite()
            && x0.is_finite()
            && z0.is_finite())
        {
            godot_error!("IslandWorld.get_map_image: the rectangle must have a positive, finite size, got {rect}");
            return None;
        }
        if !(16..=2048).contains(&size) {
            godot_error!("IslandWorld.get_map_image: size must be 16..2048 pixels, got {size}");
            return None;
        }
        let cells = (w / params.cell_size as f64 + 2.0) * (h / params.cell_size as f64 + 2.0);
        if cells > 65_536.0 {
            godot_error!(
                "IslandWorld.get_map_image: the rectangle spans {cells:.0} cells (at most 65536)"
            );
            return None;
        }
        let px_per_m = size as f64 / w.max(h);
        let side = |m: f64| ((m * px_per_m).round() as usize).clamp(1, size as usize);
        let b = [x0, z0, x0 + w, z0 + h];
        let mut map = WorldMap::new(side(w), side(h), b, px_per_m);
        map.draw_grid(&params);
        const NOT_LOADED: [f32; 3] = [170.0, 180.0, 190.0];
        let pinned = self.pinned();
        for (c, isl) in &pinned {
            let p = self.pinned_placement(*c, isl);
            let g = isl.bind();
            let drawn = g
                .island()
                .is_some_and(|island| map.draw_island(&p, island).is_ok());
            if !drawn {
                map.draw_outline(p.bounds(), NOT_LOADED);
            }
        }
        for c in placement::cells_in_rect(&params, b[0], b[1], b[2], b[3]) {
            if pinned.contains_key(&c) {
                continue;
            }
            let Some(p) = placement::island_at(&params, c) else {
                continue;
            };
            let shown = self.entries.get(&c).and_then(|e| {
                let ready = |i: &Option<Gd<ProceduralIsland>>, r: bool| {
                    i.as_ref().filter(|i| r && i.is_instance_valid()).cloned()
                };
                ready(&e.detail, e.detail_ready).or_else(|| ready(&e.coarse, e.coarse_ready))
            });
            let drawn = shown.is_some_and(|isl| {
                let g = isl.bind();
                g.island()
                    .is_some_and(|island| map.draw_island(&p, island).is_ok())
            });
            if !drawn {
                map.draw_outline(p.bounds(), NOT_LOADED);
            }
        }
        let dots: Vec<[f64; 3]> = if self.last.is_empty() {
            self.targets_now().iter().map(|t| t.position).collect()
        } else {
            self.last.iter().map(|(p, _)| *p).collect()
        };
        for d in dots {
            map.draw_dot(d[0], d[2], 3.0, [255.0, 255.0, 255.0]);
        }
        let (mw, mh) = map.size();
        Image::create_from_data(
            mw as i32,
            mh as i32,
            false,
            godot::classes::image::Format::RGB8,
            &PackedByteArray::from(map.rgb8().as_slice()),
        )
    }

    /// The cells with kept edits.
    #[func]
    pub fn get_edited_cells(&mut self) -> Array<Vector2i> {
        self.collect_edits();
        let mut cells: Vec<&[i64; 2]> = self.edits.keys().collect();
        cells.sort();
        cells.into_iter().map(|c| cell_vector(*c)).collect()
    }

    /// Write every cell's edits (paint, sculpt, scatter erasures) to `path` (a file of Godot
    /// variants). Returns OK or the error.
    #[func]
    pub fn save_edits(&mut self, path: GString) -> godot::global::Error {
        let data = self.get_stored_edits();
        match FileAccess::open(&path, ModeFlags::WRITE) {
            Some(mut f) => {
                f.store_var(&data.to_variant());
                f.close();
                godot::global::Error::OK
            }
            None => {
                let e = FileAccess::get_open_error();
                godot_error!("IslandWorld.save_edits: cannot write `{path}`: {e:?}");
                e
            }
        }
    }

    /// Read the edits written by [method save_edits] (they replace the kept ones; loaded
    /// islands regenerate with them). Returns OK or the error; on error nothing changes.
    #[func]
    pub fn load_edits(&mut self, path: GString) -> godot::global::Error {
        let Some(mut f) = FileAccess::open(&path, ModeFlags::READ) else {
            let e = FileAccess::get_open_error();
            godot_error!("IslandWorld.load_edits: cannot read `{path}`: {e:?}");
            return e;
        };
        let v = f.get_var();
        f.close();
        let Ok(d) = v.try_to::<VarDictionary>() else {
            godot_error!("IslandWorld.load_edits: `{path}` holds no edits");
            return godot::global::Error::ERR_FILE_CORRUPT;
        };
        self.set_stored_edits(d);
        // Loaded islands take the new edits.
        let cells: Vec<[i64; 2]> = self.entries.keys().copied().collect();
        for c in cells {
            let paint = self.edits.get(&c).cloned();
            if let Some(e) = self.entries.get_mut(&c) {
                if let Some(isl) = e.detail.as_mut() {
                    isl.set("splat_paint", &paint.to_variant());
                    isl.bind_mut().regenerate_async();
                }
            }
        }
        godot::global::Error::OK
    }

    /// The kept edits as saved: `{Vector2i cell: SplatPaint's saved form}`.
    #[func]
    fn get_stored_edits(&self) -> VarDictionary {
        let mut d = VarDictionary::new();
        for (c, p) in self.all_edits() {
            d.set(cell_vector(c), &stored_resources::to_plain(&p));
        }
        d
    }

    #[func]
    fn set_stored_edits(&mut self, d: VarDictionary) {
        let mut edits = HashMap::new();
        for (k, v) in d.iter_shared() {
            let Ok(c) = k.try_to::<Vector2i>() else {
                godot_error!("IslandWorld: an edit's key is not a cell (Vector2i): {k}");
                continue;
            };
            if let Some(p) = stored_resources::from_plain::<SplatPaint>(&v, "IslandWorld edits") {
                edits.insert([c.x as i64, c.y as i64], p);
            }
        }
        self.edits = edits;
    }

    /// Customise the island of `cell`: a [ProceduralIsland] child of this world, made from
    /// [member island_scene] with the cell's seed, size, resolution and position, that the scene
    /// owns (saved with it; every property editable in the inspector) and that takes over the
    /// cell's kept edits (paint, sculpt, scatter erasures). The world no longer streams that
    /// cell: it frees its own island there, and queries ([method get_island_at], [method
    /// get_height_at], the map) answer with the pinned one. It is always loaded at full
    /// detail. Returns the island (the one already there when the cell is pinned); null with
    /// an error when the cell has no island or the settings are wrong.
    #[func]
    pub fn pin_island(&mut self, cell: Vector2i) -> Option<Gd<ProceduralIsland>> {
        let params = self.params_or_report()?;
        let c = [cell.x as i64, cell.y as i64];
        if let Some(isl) = self.pinned().remove(&c) {
            return Some(isl);
        }
        let Some(p) = placement::island_at(&params, c) else {
            godot_error!("IslandWorld.pin_island: cell {cell} has no island");
            return None;
        };
        // The streamed island goes (its paint is kept in `edits`), and the paint moves over.
        self.unload(c);
        let mut isl = self.make_island()?;
        self.configure(&mut isl, &p, Level::Detail, true);
        self.edits.remove(&c);
        isl.set_name(&format!("PinnedIsland_{}_{}", c[0], c[1]));
        isl.set_meta(PIN_META, &cell.to_variant());
        // In the background now (a game's `_ready` would generate it blocking); saved with
        // generate_on_ready on, so the scene makes it when it loads.
        isl.set("generate_on_ready", &false.to_variant());
        self.base_mut().add_child(&isl);
        isl.set("generate_on_ready", &true.to_variant());
        // Saved with the scene that holds the world (the world itself when it is the root).
        let owner = self
            .base()
            .get_owner()
            .unwrap_or_else(|| self.to_gd().upcast());
        isl.set_owner(&owner);
        isl.bind_mut().regenerate_async();
        Some(isl)
    }

    /// Hand the cell back to the world: free its pinned island (its own settings go with it).
    /// Its paint and sculpt come back to the world's kept edits when its `world_size` and
    /// `resolution` are still the cell's; otherwise they are dropped with a warning (they were
    /// made for another grid). Returns false with an error when the cell is not pinned.
    #[func]
    pub fn unpin_island(&mut self, cell: Vector2i) -> bool {
        let c = [cell.x as i64, cell.y as i64];
        let Some(mut isl) = self.pinned().remove(&c) else {
            godot_error!("IslandWorld.unpin_island: cell {cell} is not pinned");
            return false;
        };
        let paint = isl.bind().splat_paint_ref().cloned();
        if let Some(paint) = paint {
            let params = self.params();
            let fits = params.validate().is_ok()
                && placement::island_at(&params, c).is_some_and(|p| {
                    isl.get("resolution").try_to::<i64>().ok() == Some(p.resolution as i64)
                        && isl.get("world_size").try_to::<f32>().ok() == Some(p.world_size)
                });
            if fits {
                self.edits.insert(c, paint);
            } else {
                godot_warn!("IslandWorld.unpin_island: the pinned island of cell {cell} has another size or resolution than the cell's island; its paint and sculpt are dropped with it");
            }
        }
        isl.queue_free();
        true
    }

    /// The pinned cells, sorted.
    #[func]
    pub fn get_pinned_cells(&self) -> Array<Vector2i> {
        let mut cells: Vec<[i64; 2]> = self.pinned().into_keys().collect();
        cells.sort();
        cells.into_iter().map(cell_vector).collect()
    }

    /// Free every island and generate what the targets need again (after changing the
    /// template scene's contents).
    #[func]
    pub fn reload_islands(&mut self) {
        self.layout_changed();
    }
}

/// `v` clamped into `i32` (cells of a real world are far inside it).
fn clamp_i32(v: i64) -> i32 {
    v.clamp(i32::MIN as i64, i32::MAX as i64) as i32
}

/// A cell as Godot's `Vector2i`.
fn cell_vector(c: [i64; 2]) -> Vector2i {
    Vector2i::new(clamp_i32(c[0]), clamp_i32(c[1]))
}

/// For `IslandSync`.
impl IslandWorld {
    /// The detailed island of `cell` once it is generated (null while it generates or is not
    /// loaded at full detail): the cell's pinned island when it is pinned (edits of the cell
    /// go to it), else the streamed one.
    pub fn detail_island(&self, cell: [i64; 2]) -> Option<Gd<ProceduralIsland>> {
        if let Some(p) = self.pinned().remove(&cell) {
            let generated = p.bind().island().is_some();
            return generated.then_some(p);
        }
        self.streamed_detail(cell)
    }

    /// The streamed detailed island of `cell` once it is generated (pinned islands aside).
    fn streamed_detail(&self, cell: [i64; 2]) -> Option<Gd<ProceduralIsland>> {
        let e = self.entries.get(&cell)?;
        if e.detail_ready {
            e.detail.clone().filter(|i| i.is_instance_valid())
        } else {
            None
        }
    }

    /// Every cell with its generated detailed island (pinned ones included), in cell order.
    pub fn detail_cells(&self) -> Vec<([i64; 2], Gd<ProceduralIsland>)> {
        let pinned = self.pinned();
        let mut v: Vec<([i64; 2], Gd<ProceduralIsland>)> = self
            .entries
            .keys()
            .filter(|c| !pinned.contains_key(*c))
            .filter_map(|c| self.streamed_detail(*c).map(|i| (*c, i)))
            .collect();
        v.extend(
            pinned
                .into_iter()
                .filter(|(_, i)| i.bind().island().is_some()),
        );
        v.sort_by_key(|e| e.0);
        v
    }

    /// Generate every island with `backend` (a `ProceduralIsland.BACKEND_*`), or the
    /// template's (None). Islands already loaded keep theirs.
    pub fn set_forced_backend(&mut self, backend: Option<i32>) {
        self.forced_backend = backend;
    }

    /// The world's layout.
    pub fn world_params(&self) -> WorldParams {
        self.params()
    }

    /// Take a whole layout at once (one reload of the islands; their edits are kept).
    pub fn set_world_params(&mut self, p: &WorldParams) {
        self.world_seed = p.world_seed as i64;
        self.cell_size = p.cell_size;
        self.island_chance = p.island_chance;
        self.island_size_min = p.island_size_min;
        self.island_size_max = p.island_size_max;
        self.samples_per_metre = p.samples_per_metre;
        self.layout_changed();
    }

    /// A hash of the template island's generation parameters (the node's defaults without
    /// `island_scene`): peers of one world must share it.
    pub fn template_params_hash(&self) -> Result<u64, String> {
        let isl = match &self.island_scene {
            None => ProceduralIsland::new_alloc(),
            Some(s) => s
                .instantiate()
                .ok_or("IslandWorld: island_scene cannot be instantiated")?
                .try_cast::<ProceduralIsland>()
                .map_err(|n| {
                    n.free();
                    "IslandWorld: island_scene's root is not a ProceduralIsland".to_string()
                })?,
        };
        let m = isl.bind().net_params_message(0);
        isl.free();
        Ok(island_core::sync::params_hash(&m?.params))
    }

    fn params(&self) -> WorldParams {
        WorldParams {
            world_seed: self.world_seed as u64,
            cell_size: self.cell_size,
            island_chance: self.island_chance,
            island_size_min: self.island_size_min,
            island_size_max: self.island_size_max,
            samples_per_metre: self.samples_per_metre,
        }
    }

    /// What is wrong with the settings (the configuration warnings; empty when fine).
    fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Err(e) = self.params().validate() {
            out.push(format!("IslandWorld: {e}"));
        }
        let (v, d, c) = (
            self.view_distance,
            self.detail_distance,
            self.collision_distance,
        );
        if !(v.is_finite() && d.is_finite() && c.is_finite() && v > 0.0 && d > 0.0 && c > 0.0) {
            out.push(format!(
                "IslandWorld: view_distance, detail_distance and collision_distance must be \
                 positive metres (got {v}, {d}, {c})"
            ));
        } else if !(c <= d && d <= v) {
            out.push(format!(
                "IslandWorld: the distances must grow outwards: collision_distance ({c} m) ≤ \
                 detail_distance ({d} m) ≤ view_distance ({v} m)"
            ));
        }
        if let Some(s) = &self.island_scene {
            if let Err(e) = template_problem(s) {
                out.push(format!("IslandWorld: island_scene: {e}"));
            }
        }
        if self.base().is_inside_tree() {
            for p in self.targets.iter_shared() {
                let ok = self
                    .base()
                    .get_node_or_null(&p)
                    .is_some_and(|n| n.try_cast::<Node3D>().is_ok());
                if !ok {
                    out.push(format!(
                        "IslandWorld: target `{p}` is not a Node3D in the tree (freed?); it is \
                         ignored"
                    ));
                }
            }
        }
        out
    }

    /// The validated params, or None after reporting the problem (once per distinct problem).
    fn params_or_report(&mut self) -> Option<WorldParams> {
        let p = self.params();
        match p.validate() {
            Ok(()) => Some(p),
            Err(e) => {
                self.report(format!("IslandWorld: {e}"));
                None
            }
        }
    }

    /// The placement parameters when every setting is usable (placement, distances,
    /// template); otherwise the problems are reported and nothing may stream.
    fn settings_or_report(&mut self) -> Option<WorldParams> {
        let params = self.params_or_report()?;
        let problems = self.problems();
        if !problems.is_empty() {
            self.report(problems.join("; "));
            return None;
        }
        Some(params)
    }

    fn report(&mut self, msg: String) {
        if msg != self.reported {
            godot_error!("{msg}");
            self.reported = msg;
        }
    }

    /// Settings that move or change the islands: free them all (their edits are kept) and
    /// start over.
    fn layout_changed(&mut self) {
        self.collect_edits();
        let cells: Vec<[i64; 2]> = self.entries.keys().copied().collect();
        for c in cells {
            self.unload(c);
        }
        self.reported.clear();
        if self.base().is_inside_tree() {
            self.base_mut().update_configuration_warnings();
        }
    }

    fn entry_at(&self, x: f64, z: f64) -> Option<&Entry> {
        let params = self.params();
        if params.validate().is_err() || !(x.is_finite() && z.is_finite()) {
            return None;
        }
        let e = self.entries.get(&placement::cell_at(&params, x, z))?;
        (plan::distance_to_square(x, z, e.placement.bounds()) == 0.0).then_some(e)
    }

    fn coarse_side(&self, p: &IslandPlacement) -> usize {
        placement::coarse_resolution(p, self.coarse_resolution.clamp(33, 1025) as usize)
    }

    /// The kept edits and those of loaded islands painted for the first time, by cell.
    fn all_edits(&self) -> Vec<([i64; 2], Gd<SplatPaint>)> {
        let mut all: HashMap<[i64; 2], Gd<SplatPaint>> = self.edits.clone();
        for (c, e) in &self.entries {
            if let Some(isl) = &e.detail {
                if let Some(p) = isl.bind().splat_paint_ref() {
                    all.entry(*c).or_insert_with(|| p.clone());
                }
            }
        }
        let mut v: Vec<([i64; 2], Gd<SplatPaint>)> = all.into_iter().collect();
        v.sort_by_key(|e| e.0);
        v
    }

    /// Keep the paint of every loaded detailed island in `edits` (it is the same resource,
    /// so this only registers islands painted for the first time).
    fn collect_edits(&mut self) {
        for (c, e) in &self.entries {
            if let Some(isl) = &e.detail {
                if let Some(p) = isl.bind().splat_paint_ref() {
                    self.edits.entry(*c).or_insert_with(|| p.clone());
                }
            }
        }
    }

    /// The target positions (node-local metres) with their velocities.
    fn targets_now(&mut self) -> Vec<Target> {
        let mut nodes: Vec<Gd<Node3D>> = Vec::new();
        let mut bad = Vec::new();
        for p in self.targets.iter_shared() {
            match self
                .base()
                .get_node_or_null(&p)
                .and_then(|n| n.try_cast::<Node3D>().ok())
            {
                Some(n) => nodes.push(n),
                None => bad.push(p.to_string()),
            }
        }
        if !bad.is_empty() {
            self.report(format!(
                "IslandWorld: target {} is not a Node3D in the tree (freed?); it is ignored",
                bad.join(", ")
            ));
        }
        if self.targets.is_empty() {
            if let Some(cam) = self.camera() {
                nodes.push(cam.upcast());
            }
        }
        let now = Instant::now();
        let dt = self
            .last_at
            .map_or(0.0, |t| now.duration_since(t).as_secs_f64());
        let inv = self.base().get_global_transform().affine_inverse();
        let mut out = Vec::new();
        for (i, n) in nodes.iter().enumerate() {
            let p = inv * n.get_global_position();
            let pos = [p.x as f64, p.y as f64, p.z as f64];
            let vel = match self.last.get(i) {
                Some((last, v)) if dt > 1e-4 => {
                    let raw = [
                        (pos[0] - last[0]) / dt,
                        (pos[1] - last[1]) / dt,
                        (pos[2] - last[2]) / dt,
                    ];
                    // Smoothed over a few frames.
                    [0, 1, 2].map(|k| v[k] * 0.7 + raw[k] * 0.3)
                }
                Some((_, v)) => *v,
                None => [0.0; 3],
            };
            out.push(Target {
                position: pos,
                velocity: vel,
            });
        }
        self.last = out.iter().map(|t| (t.position, t.velocity)).collect();
        self.last_at = Some(now);
        out
    }

    /// The current camera: the editor's 3D camera in the editor, else the viewport's.
    fn camera(&self) -> Option<Gd<Camera3D>> {
        if Engine::singleton().is_editor_hint() {
            return EditorInterface::singleton()
                .get_editor_viewport_3d()
                .and_then(|v| v.get_camera_3d());
        }
        self.base().get_viewport()?.get_camera_3d()
    }

    /// One frame of streaming.
    fn stream(&mut self) {
        let Some(params) = self.settings_or_report() else {
            return;
        };
        let targets = self.targets_now();
        self.update_ocean(&targets);
        let rings = Rings {
            view: self.view_distance as f64,
            detail: self.detail_distance as f64,
            collision: self.collision_distance as f64,
        };
        let pinned = self.pinned();
        let mut wants = {
            let entries = &self.entries;
            plan::plan(&params, &targets, &rings, |c| {
                entries.get(&c).map_or(Level::None, Entry::level)
            })
        };
        // A pinned cell is its pinned island's.
        wants.retain(|w| !pinned.contains_key(&w.placement.cell));
        // Unload what is no longer wanted.
        let keep: std::collections::HashSet<[i64; 2]> =
            wants.iter().map(|w| w.placement.cell).collect();
        let gone: Vec<[i64; 2]> = self
            .entries
            .keys()
            .filter(|c| !keep.contains(*c))
            .copied()
            .collect();
        for c in gone {
            self.unload(c);
        }
        // Finished generations.
        self.poll_finished();
        // One generation at a time, the first wanted one missing.
        let busy = self.entries.values().any(|e| {
            e.coarse
                .as_ref()
                .is_some_and(|i| !e.coarse_ready && i.bind().is_generating())
                || e.detail
                    .as_ref()
                    .is_some_and(|i| !e.detail_ready && i.bind().is_generating())
        });
        let mut queued = 0;
        let mut started = busy;
        // First a coarse mesh for every island in view that shows nothing yet (a few tens of
        // milliseconds each, nearest first), so no island is missing for long; then the
        // details.
        if !started {
            let bare = wants.iter().find(|w| {
                self.entries
                    .get(&w.placement.cell)
                    .is_none_or(|e| e.coarse.is_none() && e.detail.is_none())
            });
            if let Some(w) = bare {
                started = true;
                self.start(w.placement.clone(), Level::Coarse, false);
            }
        }
        for w in &wants {
            let c = w.placement.cell;
            let has = self.entries.get(&c);
            match w.level {
                Level::Detail => {
                    if let Some(mut isl) = has.and_then(|e| e.detail.clone()) {
                        // Colliders within the collision ring (added or dropped by the
                        // island a few chunks a frame; see `collision_distance`).
                        let on = isl.bind().collision_on();
                        let want = plan::colliders_for(w.distance, &rings, on);
                        if want != on {
                            isl.bind_mut().set_collision_enabled(want);
                        }
                        continue;
                    }
                    queued += 1;
                    if !started {
                        started = true;
                        let colliders = plan::colliders_for(w.distance, &rings, false);
                        self.start(w.placement.clone(), Level::Detail, colliders);
                    }
                }
                Level::Coarse => {
                    // Down from detail: back to the coarse mesh (made first, the detail stays
                    // until it is there).
                    let e = has;
                    let coarse_there = e.is_some_and(|e| e.coarse.is_some());
                    if !coarse_there {
                        queued += 1;
                        if !started {
                            started = true;
                            self.start(w.placement.clone(), Level::Coarse, false);
                        }
                    } else if e.is_some_and(|e| e.coarse_ready && e.detail.is_some()) {
                        self.drop_detail(c);
                    }
                }
                Level::None => {}
            }
        }
        self.queued = queued;
    }

    fn template_sea_depth(&self) -> f32 {
        if let Some(s) = &self.island_scene {
            if let Some(state) = s.get_state() {
                for i in 0..state.get_node_property_count(0) {
                    if state.get_node_property_name(0, i) == "coast_sea_depth" {
                        if let Ok(v) = state.get_node_property_value(0, i).try_to::<f32>() {
                            return v;
                        }
                    }
                }
            }
        }
        island_core::params::CoastParams::DEFAULT_SEA_DEPTH
    }

    /// The one ocean at the template's border depth, made when missing and following the first
    /// of `targets` (none: it stays where it is).
    fn update_ocean(&mut self, targets: &[Target]) {
        self.sea_depth = self.template_sea_depth();
        let headless = DisplayServer::singleton().get_name() == "headless";
        if !self.sea_enabled || headless {
            if let Some(o) = self.ocean.take() {
                o.free();
            }
            return;
        }
        let size = (self.view_distance * 2.0 * plan::FREE_FACTOR as f32 + 4096.0).max(8192.0);
        if self.ocean.as_ref().is_some_and(|o| o.size() != size) {
            if let Some(o) = self.ocean.take() {
                o.free();
            }
        }
        if self.ocean.is_none() {
            let mut base: Gd<Node3D> = self.to_gd().upcast();
            self.ocean = Some(Ocean::new(&mut base, size, self.sea_depth));
        }
        let depth = self.sea_depth;
        if let Some(o) = self.ocean.as_mut() {
            o.set_depth(depth);
            if let Some(t) = targets.first() {
                o.follow(t.position[0], t.position[2]);
            }
        }
    }

    /// Make and start generating the island of `p` at `level`.
    /// `colliders`: a detailed island builds its colliders (see `collision_distance`).
    fn start(&mut self, p: IslandPlacement, level: Level, colliders: bool) {
        self.start_with(p, level, false, colliders);
    }

    /// [`Self::start`]; `now`: generate synchronously (the island is complete on return).
    fn start_with(&mut self, p: IslandPlacement, level: Level, now: bool, colliders: bool) {
        let Some(mut isl) = self.make_island() else {
            return;
        };
        self.configure(&mut isl, &p, level, colliders);
        isl.set("generate_on_ready", &false.to_variant());
        isl.set("auto_regenerate", &false.to_variant());
        isl.set_name(&format!(
            "Island_{}_{}_{}",
            p.cell[0],
            p.cell[1],
            if level == Level::Detail {
                "detail"
            } else {
                "coarse"
            }
        ));
        // The inspector shows a world's island read-only (see `inspector_plugin.gd`).
        isl.set_meta(CELL_META, &cell_vector(p.cell).to_variant());
        let pool = self.generator_pool();
        isl.bind_mut().set_generator_pool(pool);
        self.base_mut().add_child(&isl);
        if now {
            isl.bind_mut().regenerate();
        } else {
            isl.bind_mut().regenerate_async();
        }
        let e = self.entries.entry(p.cell).or_insert_with(|| Entry {
            placement: p.clone(),
            coarse: None,
            detail: None,
            coarse_ready: false,
            detail_ready: false,
            shown: Level::None,
        });
        match level {
            Level::Detail => {
                e.detail = Some(isl);
                e.detail_ready = false;
            }
            _ => {
                e.coarse = Some(isl);
                e.coarse_ready = false;
            }
        }
    }

    /// Give `isl` (made from the template) the cell's seed, size, resolution and position, and
    /// what `level` needs (detail: the cell's edits, and colliders when `colliders`; coarse: no
    /// colliders, scatter, inland water or edits).
    fn configure(
        &self,
        isl: &mut Gd<ProceduralIsland>,
        p: &IslandPlacement,
        level: Level,
        colliders: bool,
    ) {
        let res = match level {
            Level::Detail => p.resolution,
            _ => self.coarse_side(p),
        };
        isl.set("sea_enabled", &false.to_variant());
        isl.set("build_budget_ms", &self.build_budget_ms.to_variant());
        isl.set("seed", &(p.seed as i64).to_variant());
        if let Some(b) = self.forced_backend {
            isl.set("backend", &b.to_variant());
        }
        isl.set("world_size", &p.world_size.to_variant());
        isl.set("resolution", &(res as i64).to_variant());
        let chunk = isl.get("chunk_size").try_to::<u32>().unwrap_or(0);
        if let Some(fitted) = placement::fit_chunk_size(chunk, res as u32) {
            isl.set("chunk_size", &(fitted as i64).to_variant());
        }
        if res >= 4097 {
            isl.set("lod_enabled", &true.to_variant());
        }
        if level == Level::Detail {
            isl.set("collision_enabled", &colliders.to_variant());
            if let Some(paint) = self.edits.get(&p.cell) {
                isl.set("splat_paint", &paint.to_variant());
            }
        } else {
            // The far mesh: no colliders, scatter or inland water; the edits are not given to
            // it (a coarse generation would resample the paint resource to its grid).
            isl.set("collision_enabled", &false.to_variant());
            isl.set("inland_water_enabled", &false.to_variant());
            isl.set(
                "scatter_layers",
                &Array::<Option<Gd<crate::scatter::scatter_layer::ScatterLayer>>>::new()
                    .to_variant(),
            );
            isl.set("splat_paint", &Variant::nil());
        }
        isl.set_position(Vector3::new(p.center[0] as f32, 0.0, p.center[1] as f32));
    }

    /// How many threads the islands generate with (see `generator_threads`).
    fn generator_thread_count(&self) -> usize {
        if self.generator_threads > 0 {
            return self.generator_threads as usize;
        }
        if let Some(n) = std::env::var("RAYON_NUM_THREADS")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .filter(|n| *n > 0)
        {
            return n;
        }
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .saturating_sub(1)
            .max(1)
    }

    /// The islands' thread pool, made (again) for the current `generator_threads`; None (the
    /// global pool) when it cannot be made.
    fn generator_pool(&mut self) -> Option<std::sync::Arc<rayon::ThreadPool>> {
        let n = self.generator_thread_count();
        if let Some(p) = &self.pool {
            if p.current_num_threads() == n {
                return Some(p.clone());
            }
        }
        match rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(|i| format!("island_world_{i}"))
            .build()
        {
            Ok(p) => {
                let p = std::sync::Arc::new(p);
                self.pool = Some(p.clone());
                Some(p)
            }
            Err(e) => {
                godot_warn!("IslandWorld: cannot start {n} generator threads ({e}); the islands use the shared pool");
                None
            }
        }
    }

    /// The pinned islands (children carrying [`PIN_META`]) by cell.
    fn pinned(&self) -> HashMap<[i64; 2], Gd<ProceduralIsland>> {
        let mut out = HashMap::new();
        for n in self.base().get_children().iter_shared() {
            if !n.has_meta(PIN_META) || n.is_queued_for_deletion() {
                continue;
            }
            let Ok(c) = n.get_meta(PIN_META).try_to::<Vector2i>() else {
                continue;
            };
            if let Ok(isl) = n.try_cast::<ProceduralIsland>() {
                out.insert([c.x as i64, c.y as i64], isl);
            }
        }
        out
    }

    /// Where a pinned island lies now (its own position and size).
    fn pinned_placement(&self, cell: [i64; 2], isl: &Gd<ProceduralIsland>) -> IslandPlacement {
        let pos = isl.get_position();
        let g = isl.bind();
        IslandPlacement {
            cell,
            center: [pos.x as f64, pos.z as f64],
            seed: isl.get("seed").try_to::<i64>().unwrap_or(0) as u64,
            world_size: g.island().map_or_else(
                || isl.get("world_size").try_to::<f32>().unwrap_or(0.0),
                |i| i.params.world_size,
            ),
            resolution: isl.get("resolution").try_to::<i64>().unwrap_or(0) as usize,
        }
    }

    /// The island of `pinned` (see [`Self::pinned`]) covering `(x, z)` (node-local metres),
    /// with its placement.
    fn pinned_at(
        &self,
        pinned: &HashMap<[i64; 2], Gd<ProceduralIsland>>,
        x: f64,
        z: f64,
    ) -> Option<(Gd<ProceduralIsland>, IslandPlacement)> {
        if !(x.is_finite() && z.is_finite()) {
            return None;
        }
        pinned.iter().find_map(|(c, isl)| {
            let p = self.pinned_placement(*c, isl);
            (plan::distance_to_square(x, z, p.bounds()) == 0.0).then_some((isl.clone(), p))
        })
    }

    /// Keep four splat map pixel arrays (two islands' worth) for each full-detail resolution
    /// the islands will have (up to 2049²: 84 MB with the default sizes, in use by the islands
    /// once they load), made while the scene loads, so that the
    /// first islands do not make them in a game frame (see `splat_maps::Pending`). Not on a
    /// headless server, whose islands make no splat maps.
    fn warm_splat_pool(&self) {
        if crate::island::server_mode::auto_server_mode() {
            return;
        }
        let p = self.params();
        if p.validate().is_err() {
            return;
        }
        let lo = placement::resolution_for(p.island_size_min, p.samples_per_metre);
        let hi = placement::resolution_for(p.island_size_max, p.samples_per_metre);
        let mut n = lo;
        while n <= hi.min(2049) {
            crate::island::splat_maps::warm_pool(n, 4);
            n = (n - 1) * 2 + 1;
        }
    }

    /// A new island node from the template (or a default one).
    fn make_island(&mut self) -> Option<Gd<ProceduralIsland>> {
        match &self.island_scene {
            None => Some(ProceduralIsland::new_alloc()),
            Some(s) => match s.instantiate() {
                Some(n) => match n.try_cast::<ProceduralIsland>() {
                    Ok(i) => Some(i),
                    Err(n) => {
                        n.free();
                        self.report(
                            "IslandWorld: island_scene's root is not a ProceduralIsland".into(),
                        );
                        None
                    }
                },
                None => {
                    self.report("IslandWorld: island_scene cannot be instantiated".into());
                    None
                }
            },
        }
    }

    /// Mark generations that finished; announce loads and level changes.
    fn poll_finished(&mut self) {
        let mut events: Vec<([i64; 2], Level, Gd<ProceduralIsland>, bool)> = Vec::new();
        for (c, e) in self.entries.iter_mut() {
            if let Some(isl) = &e.coarse {
                if !e.coarse_ready && done(isl) {
                    e.coarse_ready = true;
                    if e.shown == Level::None {
                        events.push((*c, Level::Coarse, isl.clone(), true));
                        e.shown = Level::Coarse;
                    }
                }
            }
            if let Some(isl) = &e.detail {
                if !e.detail_ready && done(isl) {
                    e.detail_ready = true;
                    let first = e.shown == Level::None;
                    events.push((*c, Level::Detail, isl.clone(), first));
                    e.shown = Level::Detail;
                    // The detail replaces the coarse mesh.
                    if let Some(mut old) = e.coarse.take() {
                        old.queue_free();
                    }
                    e.coarse_ready = false;
                }
            }
        }
        events.sort_by_key(|e| e.0);
        for (c, level, isl, first) in events {
            let cell = cell_vector(c);
            if first {
                self.signals().island_loaded().emit(cell, &isl);
            }
            self.signals()
                .island_detail_changed()
                .emit(cell, level as i64);
        }
    }

    /// Back from detail to the coarse mesh (ready): keep the edits, free the detail.
    fn drop_detail(&mut self, c: [i64; 2]) {
        self.collect_edits();
        if let Some(e) = self.entries.get_mut(&c) {
            if let Some(mut d) = e.detail.take() {
                d.queue_free();
            }
            e.detail_ready = false;
            e.shown = Level::Coarse;
            let cell = cell_vector(c);
            self.signals()
                .island_detail_changed()
                .emit(cell, Level::Coarse as i64);
        }
    }

    /// Free a cell's island (its edits are kept).
    fn unload(&mut self, c: [i64; 2]) {
        self.collect_edits();
        if let Some(e) = self.entries.remove(&c) {
            let announced = e.shown != Level::None;
            for mut n in [e.coarse, e.detail].into_iter().flatten() {
                if n.is_instance_valid() {
                    n.queue_free();
                }
            }
            if announced {
                let cell = cell_vector(c);
                self.signals().island_unloaded().emit(cell);
            }
        }
    }
}

impl IslandWorld {
    /// One line for a frame over the log threshold: the world's streaming, then each island
    /// that did something (wall ms, phase; for chunk frames the chunks built, the dearest, the
    /// estimate and the budget).
    fn log_frame(&self, total: f64, cpu: f64) {
        let mut parts = format!(
            "stream {:.2}/{:.2}",
            self.prev_stream_ms.0, self.prev_stream_ms.1
        );
        for (c, e) in &self.entries {
            for isl in [&e.coarse, &e.detail].into_iter().flatten() {
                if !isl.is_instance_valid() {
                    continue;
                }
                let b = isl.bind();
                let (ms, cms, p) = b.last_process();
                if ms < 0.2 {
                    continue;
                }
                parts += &format!(" | {:?} {p} {ms:.2}/{cms:.2}", c);
                if p == "chunks" {
                    if let Some((n, dear, est, budget)) = b.last_build_call() {
                        parts += &format!(
                            " ({n} chunks, dearest {dear:.2}, est {est:.2}, budget {budget:.1})"
                        );
                    }
                }
            }
        }
        godot_print!("world_frame {total:.2}/{cpu:.2} ms: {parts}");
    }
}

/// Whether an island node finished its generation (an island is there and nothing runs).
fn done(isl: &Gd<ProceduralIsland>) -> bool {
    if !isl.is_instance_valid() {
        return false;
    }
    let b = isl.bind();
    !b.is_generating() && b.island().is_some()
}

/// Why a template scene cannot be used (its root must be a ProceduralIsland).
fn template_problem(s: &Gd<PackedScene>) -> Result<(), String> {
    let state = s.get_state().ok_or("the scene has no content")?;
    if state.get_node_count() == 0 {
        return Err("the scene is empty".into());
    }
    let ty = state.get_node_type(0).to_string();
    if ty == "ProceduralIsland" {
        return Ok(());
    }
    // An instanced or inherited root has no type of its own here: ask the class of an instance.
    if ty.is_empty() {
        if let Some(n) = s.instantiate() {
            let ok = n.clone().try_cast::<ProceduralIsland>().is_ok();
            let n: Gd<Node> = n;
            n.free();
            if ok {
                return Ok(());
            }
        }
    }
    Err(format!(
        "its root must be a ProceduralIsland, not {}",
        if ty.is_empty() { "another node" } else { &ty }
    ))
}
