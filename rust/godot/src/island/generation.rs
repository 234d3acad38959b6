//! The node's generation job: the background [`Worker`], the request waiting for it (coalesced
//! `regenerate_async` calls), and the chunk build that follows (a generated island whose chunk
//! nodes are put into the [`ChunkPool`] over several frames, or all at once for the
//! synchronous paths, including the streamed `regenerate()`).
//!
//! It emits no signals itself: it tells the node what happened ([`Polled`], [`Step`]) and the
//! node emits. A finished build is handed back as a [`Build`] for the node to install.

use crate::island::chunk_data::{ChunkData, ChunkOptions};
use crate::island::chunk_pool::ChunkPool;
use crate::island::frame_watch::{budget_ms as budget_ms_of, JobCost, JobTimer};
use crate::island::worker::{
    finish_job, JobError, Polled as WorkerPolled, Prepared, Request, Worker,
};
use crate::water::water_nodes::WaterMesh;
use crate::water::water_summary::WaterSummary;
use godot::classes::Node3D;
use godot::prelude::*;
use island_core::{ChunkCollider, Island};
use island_gpu::Staged;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Share of the progress bar spent in the core generator (the rest is chunk building, and the
/// scatter nodes when the island has scatter layers).
pub const CORE_SHARE: f64 = 0.8;
/// Where the chunk building ends on the progress bar when scatter nodes follow (the rest is the
/// scatter); 1.0 without scatter layers.
pub const CHUNKS_END_WITH_SCATTER: f64 = 0.9;

/// A generated island whose chunk nodes are being (or have been) built.
pub struct Build {
    pub prep: Box<Prepared>,
    /// Chunks built so far.
    pub next: usize,
    /// Main-thread milliseconds spent building nodes.
    pub build_ms: f64,
    /// `surfaces.fast` / `surfaces.slow` when the build started.
    pub surfaces0: (u64, u64),
    /// Running estimate of one chunk's main-thread cost (mesh, collider, water), so a frame
    /// stops before a chunk would take it past its budget.
    pub est_chunk: JobCost,
    /// Chunks whose nodes already held the same data (left as they were).
    pub kept: usize,
}

/// What [`GenerationJob::poll`] found.
pub enum Polled {
    /// Nothing to report.
    Idle,
    /// Progress of the running worker (overall fraction 0..1 of the core, stage name).
    Progress(Vec<(f32, String)>),
    /// The worker finished, with its last progress: start its build with
    /// [`GenerationJob::start_build`] (or report the error).
    Done(Vec<(f32, String)>, Result<Box<Prepared>, String>),
}

/// What [`GenerationJob::continue_build`] did this frame.
pub enum Step {
    /// No build under way.
    Idle,
    /// Chunks remain: the fraction of the chunks built so far (0..1).
    Progress(f64),
    /// Every chunk is built.
    Finished(Build),
}

/// The generation job state of one node (see the module doc).
#[derive(Default)]
pub struct GenerationJob {
    worker: Option<Worker>,
    pending: Option<Request>,
    building: Option<Build>,
    /// A generation_started was emitted and neither finished nor failed yet.
    series_active: bool,
    /// See [`Self::serial`].
    serial: u64,
    /// The chunk cost estimate a finished build ended with: the next build's first frame starts
    /// from it instead of knowing nothing (0 before the first build).
    chunk_cost_hint: JobCost,
    /// The last [`Self::continue_build`] call that built chunks: chunks visited, the dearest
    /// chunk's milliseconds, the estimate it started with and the budget (diagnostics).
    pub last_call: Option<(usize, f64, f64, f64)>,
    /// The thread pool the workers' parallel stages run on (None: rayon's global pool).
    pub pool: Option<Arc<rayon::ThreadPool>>,
}

impl GenerationJob {
    /// Whether a background generation is computing or building chunks.
    pub fn is_running(&self) -> bool {
        self.worker.is_some() || self.building.is_some()
    }

    /// The current series of generations ended (finished or failed).
    pub fn end_series(&mut self) {
        self.series_active = false;
    }

    /// Start `request` in the background, or queue it when a worker runs (that one is
    /// cancelled; only the last request is completed). Returns whether this starts a new series
    /// (emit `generation_started`), or the error of starting the thread.
    pub fn submit(&mut self, request: Request) -> Result<bool, String> {
        self.serial += 1;
        if let Some(w) = &self.worker {
            w.cancel();
            self.pending = Some(request);
            return Ok(false);
        }
        // A finished generation still being built is superseded.
        self.building = None;
        let first = !self.series_active;
        self.series_active = true;
        self.worker = Some(Worker::spawn_in(request, self.pool.clone())?);
        Ok(first)
    }

    /// Cancel a running worker (a build in progress goes on). Whether there was one.
    pub fn cancel(&mut self) -> bool {
        let Some(w) = self.worker.take() else {
            return false;
        };
        self.serial += 1;
        w.cancel();
        self.pending = None;
        true
    }

    /// Drop any background work (worker, pending request, partial build).
    pub fn abort(&mut self) {
        self.serial += 1;
        self.worker = None;
        self.pending = None;
        self.building = None;
    }

    /// Collect the worker's messages. When the finished job was superseded by a pending
    /// request, that one starts instead.
    pub fn poll(&mut self) -> Polled {
        let Some(w) = self.worker.as_mut() else {
            return Polled::Idle;
        };
        match w.poll() {
            WorkerPolled::Running(progress) => {
                if self.pending.is_none() {
                    Polled::Progress(progress)
                } else {
                    Polled::Idle
                }
            }
            WorkerPolled::Done(progress, result) => {
                self.worker = None;
                if let Some(request) = self.pending.take() {
                    return match Worker::spawn_in(request, self.pool.clone()) {
                        Ok(w) => {
                            self.worker = Some(w);
                            Polled::Idle
                        }
                        Err(msg) => Polled::Done(Vec::new(), Err(msg)),
                    };
                }
                Polled::Done(progress, result.map_err(|e| e.to_string()))
            }
        }
    }

    /// Counter of requests and aborts: it changes whenever a newer request or an abort
    /// supersedes what the node is reporting (checked after emitting a signal, whose handlers
    /// may call `regenerate()`).
    pub fn serial(&self) -> u64 {
        self.serial
    }

    /// Start building a generated island's chunks over the next frames (the caller empties the
    /// pool when the chunk count changed); `surfaces0` is [`ChunkPool::surface_counts`] now.
    pub fn start_build(&mut self, prep: Box<Prepared>, surfaces0: (u64, u64)) {
        self.building = Some(Build {
            prep,
            next: 0,
            build_ms: 0.0,
            surfaces0,
            est_chunk: self.chunk_cost_hint,
            kept: 0,
        });
    }

    /// Put a finished build back (its install waits for a later frame).
    pub fn put_back(&mut self, b: Build) {
        self.building = Some(b);
    }

    /// Whether chunks of a generated island are waiting to be built.
    pub fn is_building(&self) -> bool {
        self.building.is_some()
    }

    /// Build chunks for up to `budget_ms` (at least one chunk; a chunk is not started when the
    /// running estimate of its cost would take the call past the budget).
    /// `per_chunk(parent, i, island)` runs after chunk `i` inside the same budget (the node's
    /// water surfaces). The call after the last chunk returns [`Step::Finished`] without building
    /// anything, so installing the island (splat maps, water, LOD, scatter) gets a frame of its
    /// own.
    pub fn continue_build(
        &mut self,
        pool: &mut ChunkPool,
        parent: &mut Gd<Node3D>,
        budget_ms: f32,
        per_chunk: &mut dyn FnMut(&mut Gd<Node3D>, usize, &Island),
    ) -> Step {
        let Some(mut b) = self.building.take() else {
            return Step::Idle;
        };
        if b.next >= b.prep.chunks.len() {
            self.chunk_cost_hint = b.est_chunk;
            return Step::Finished(b);
        }
        // NaN and negative: one chunk per frame; infinite or huge: everything now.
        let budget = budget_ms_of(budget_ms);
        let t = Instant::now();
        // Kept chunks (nodes that already hold the same data) cost little (their river/lake
        // surface is still computed and compared) but count against the budget too: with a
        // whole island unchanged they would otherwise all run in one frame.
        let mut visited = 0usize;
        let (est0, mut dearest) = (b.est_chunk.ms(), 0.0f64);
        while b.next < b.prep.chunks.len() {
            let elapsed = t.elapsed().as_secs_f64() * 1e3;
            if visited > 0 && !b.est_chunk.fits(elapsed, budget) {
                break;
            }
            let i = b.next;
            let c = JobTimer::start();
            // Take the data so it is freed chunk by chunk inside the budget (freeing all chunk
            // arrays at once costs ~20 ms at 1025²).
            let data = std::mem::take(&mut b.prep.chunks[i]);
            let built = build_chunk(pool, parent, i, &data, &b.prep);
            drop(data);
            per_chunk(parent, i, &b.prep.island);
            b.next += 1;
            visited += 1;
            if built {
                let ms = c.ms();
                dearest = dearest.max(ms);
                b.est_chunk.record(ms);
            } else {
                b.kept += 1;
            }
        }
        self.last_call = Some((visited, dearest, est0, budget));
        b.build_ms += t.elapsed().as_secs_f64() * 1e3;
        let f = b.next as f64 / b.prep.chunks.len() as f64;
        self.building = Some(b);
        Step::Progress(f)
    }
}

/// Chunk `i`'s mesh and collider from `data`, each unless its node already held the same
/// (see [`ChunkPool::holds`]); false when neither needed setting.
fn build_chunk(
    pool: &mut ChunkPool,
    parent: &mut Gd<Node3D>,
    i: usize,
    data: &ChunkData,
    prep: &Prepared,
) -> bool {
    // The chunk data carries a collider exactly when the request asked for colliders
    // (`Request::chunk_options`), so its digest is the collider's.
    let (same_mesh, same_collider) = pool.holds(i, data.mesh_digest, data.collider_digest);
    if !same_mesh {
        let (cs, flat) = (prep.request.params.chunk_size as usize, prep.request.flat);
        pool.set_surface(parent, i, data, &prep.island, cs, flat);
    }
    if !same_collider {
        pool.set_collider(parent, i, data.collider.as_ref());
    }
    pool.mark(i, data.mesh_digest, data.collider_digest);
    !(same_mesh && same_collider)
}

/// Build every chunk of `prep` now (synchronous paths).
pub fn build_all(pool: &mut ChunkPool, parent: &mut Gd<Node3D>, mut prep: Box<Prepared>) -> Build {
    // A synchronous build replaces everything within this call: no frame shows a gap.
    if pool.is_staging() {
        pool.free_all(parent);
    }
    if pool.len() != prep.chunks.len() {
        pool.free_all(parent);
    }
    let surfaces0 = pool.surface_counts();
    let t = Instant::now();
    let mut kept = 0;
    for i in 0..prep.chunks.len() {
        let data = std::mem::take(&mut prep.chunks[i]);
        kept += !build_chunk(pool, parent, i, &data, &prep) as usize;
    }
    Build {
        next: prep.chunks.len(),
        prep,
        build_ms: t.elapsed().as_secs_f64() * 1e3,
        surfaces0,
        est_chunk: JobCost::default(),
        kept,
    }
}

/// Synchronous regenerate, from the moment the heights are final. The main thread sets every
/// chunk's collider (they need only the heights) while a producer thread finishes the island
/// (normals, splat) and computes the chunk surfaces on the rayon pool; the main thread then
/// puts each surface into its (pre-created) node as it arrives, so the three overlap.
///
/// An error only comes from a bug (a panic while finishing the island, caught); the colliders
/// may then already hold the new heights, the meshes and the island stay the previous ones.
pub fn build_streaming(
    pool: &mut ChunkPool,
    parent: &mut Gd<Node3D>,
    request: Request,
    staged: Staged,
    mut warning: Option<String>,
    water_meshes: bool,
) -> Result<Build, JobError> {
    let cs = request.params.chunk_size as usize;
    let (n, world) = (
        request.params.resolution as usize,
        request.params.world_size,
    );
    let per_side = (n - 1) / cs;
    let count = per_side * per_side;
    if pool.len() != count || pool.any_freed() || pool.is_staging() {
        pool.free_all(parent);
    }
    let surfaces0 = pool.surface_counts();
    let mut build = Duration::ZERO;
    let tb = Instant::now();
    pool.grow_to(parent, count);
    let colliders_of = |heights: &[f32]| -> Vec<Option<ChunkCollider>> {
        (0..count)
            .map(|i| {
                request
                    .collision
                    .then(|| ChunkCollider::of(heights, n, world, i % per_side, i / per_side, cs))
            })
            .collect()
    };
    let colliders = colliders_of(staged.heights());
    build += tb.elapsed();

    enum Msg {
        /// The finished island, and the GPU fallback warning when the GPU failed in its last
        /// stages (the CPU's island then has heights of its own).
        Island(Arc<Island>, Option<String>),
        Chunk(usize, ChunkData),
        /// The water summary, the plain-splat test and (when asked for) every chunk's
        /// river/lake surface, made on the pool while the main thread sets the chunk surfaces.
        Extras(WaterSummary, bool, Option<Vec<WaterMesh>>),
        Failed(JobError),
    }
    let mut extras = None;
    let mut shared: Option<Arc<Island>> = None;
    let mut failure: Option<JobError> = None;
    let mut missing = count;
    // The data time after the island was finished that the main thread waited for.
    let (mut t_island, mut build_after) = (None::<Instant>, Duration::ZERO);
    {
        let (tx, rx) = std::sync::mpsc::channel::<Msg>();
        let (flat, options) = (
            request.flat,
            ChunkOptions {
                collision: false,
                ..request.chunk_options()
            },
        );
        std::thread::scope(|s| {
            let producer = s.spawn(move || {
                let (island, late) = match finish_job(staged) {
                    Ok(i) => i,
                    Err(e) => {
                        let _ = tx.send(Msg::Failed(e));
                        return;
                    }
                };
                let island = Arc::new(island);
                let _ = tx.send(Msg::Island(island.clone(), late));
                use rayon::prelude::*;
                let (f, sp) = (&island.field, &island.splat);
                let chunks_tx = tx.clone();
                let ((), ((water, plain), meshes)) = rayon::join(
                    || {
                        (0..count)
                            .into_par_iter()
                            .for_each_with(chunks_tx, |tx, i| {
                                let _ = tx.send(Msg::Chunk(
                                    i,
                                    crate::island::chunk_data::chunk_data_undigested(
                                        f, sp, options, i,
                                    ),
                                ));
                            })
                    },
                    || {
                        let meshes = water_meshes
                            .then(|| crate::water::water_nodes::chunk_water_meshes(&island, cs));
                        (crate::island::worker::install_data(&island), meshes)
                    },
                );
                let _ = tx.send(Msg::Extras(water, plain, meshes));
            });
            for (i, col) in colliders.iter().enumerate() {
                let tb = Instant::now();
                pool.set_collider(parent, i, col.as_ref());
                build += tb.elapsed();
            }
            drop(colliders);
            for msg in rx {
                match msg {
                    Msg::Island(both, late) => {
                        if let Some(w) = late {
                            // The GPU failed after the heights: the CPU's island replaced it,
                            // so the colliders follow its heights.
                            let tb = Instant::now();
                            for (i, col) in colliders_of(&both.field.heights).iter().enumerate() {
                                pool.set_collider(parent, i, col.as_ref());
                            }
                            build += tb.elapsed();
                            warning.get_or_insert(w);
                        }
                        shared = Some(both);
                        t_island = Some(Instant::now());
                    }
                    Msg::Chunk(i, data) => {
                        let Some(both) = shared.as_ref() else {
                            continue;
                        };
                        let tb = Instant::now();
                        pool.set_surface(parent, i, &data, both, cs, flat);
                        drop(data);
                        let dt = tb.elapsed();
                        build += dt;
                        build_after += dt;
                        missing -= 1;
                    }
                    Msg::Extras(water, plain, meshes) => extras = Some((water, plain, meshes)),
                    Msg::Failed(e) => failure = Some(e),
                }
            }
            if producer.join().is_err() {
                failure.get_or_insert(JobError::Panicked("while preparing the chunk data".into()));
            }
        });
    }
    let Some(island) = shared.and_then(|a| Arc::try_unwrap(a).ok()) else {
        return Err(
            failure.unwrap_or_else(|| JobError::Panicked("the island was not finished".into()))
        );
    };
    if missing > 0 {
        // Only after a bug (a panic above): the nodes are there, their meshes are stale.
        godot_error!("ProceduralIsland: {missing} chunks were not rebuilt");
    }
    let waited = t_island.map_or(0.0, |t| {
        (t.elapsed().saturating_sub(build_after)).as_secs_f64() * 1e3
    });
    let (water, splat_plain, water_meshes) = match extras {
        Some((w, p, m)) => (Some(w), Some(p), m),
        None => (None, None, None),
    };
    let prep = Box::new(Prepared {
        island,
        chunks: Vec::new(),
        mesh_ms: waited,
        request,
        warning,
        water,
        splat_plain,
        water_meshes,
    });
    Ok(Build {
        prep,
        next: count,
        build_ms: build.as_secs_f64() * 1e3,
        surfaces0,
        est_chunk: JobCost::default(),
        kept: 0,
    })
}
