//! Background generation: a `std::thread` that runs the core generator and prepares the chunk
//! data. It owns only plain `Send` data (parameters in, [`Prepared`] out) and talks to the node
//! through a channel; it never touches a Godot object.
//!
//! Dropping a [`Worker`] raises its cancel flag and parks the thread's handle in a global list
//! that the extension joins when it unloads, so a node freed mid-generation never leaves a
//! thread running inside an unloaded library.

use crate::island::chunk_data::{prepare_chunks, ChunkData, ChunkOptions};
use crate::water::water_summary::WaterSummary;
use island_core::sculpt::SculptLayer;
use island_core::stamps::Stamp;
use island_core::{GenerateError, Heightfield, Island, IslandParams, Stats};
use island_gpu::{generate_staged, generate_with, Backend, Staged};
use std::borrow::Cow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

/// What to generate and how to mesh it.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// Validated core parameters.
    pub params: IslandParams,
    /// Flat-shaded meshes.
    pub flat: bool,
    /// Build collider data.
    pub collision: bool,
    /// Build the full-resolution chunk surfaces (false with LOD on, see
    /// [`ChunkOptions::meshes`]).
    pub meshes: bool,
    /// Where to generate (AUTO / GPU / CPU, see `island_gpu::Backend`).
    pub backend: Backend,
    /// The `IslandStamp`s, composed with the brush's layer into `params.sculpt` on the worker
    /// ([`Request::generation_params`]), not in the frame of the edit (at 1025² the
    /// composition takes 11–20 ms). `None`: no stamps, `params.sculpt` is the brush's layer.
    pub stamps: Option<StampJob>,
}

/// The stamps of a [`Request`] and the brush's sculpt layer that goes on top of them.
#[derive(Clone, Debug, PartialEq)]
pub struct StampJob {
    /// Validated stamps, in child order.
    pub stamps: Vec<Stamp>,
    /// The brush's sculpt layer (`None`: no strokes).
    pub brush: Option<Arc<SculptLayer>>,
}

impl Request {
    /// The parameters to generate with: `params` with the stamps composed into its sculpt
    /// layer (see [`Request::stamps`]).
    pub fn generation_params(&self) -> Result<Cow<'_, IslandParams>, JobError> {
        let Some(job) = &self.stamps else {
            return Ok(Cow::Borrowed(&self.params));
        };
        let p = &self.params;
        let layer = island_core::stamps::compose(
            &job.stamps,
            job.brush.as_deref(),
            p.resolution as usize,
            p.world_size,
        )
        .map_err(|e| JobError::Invalid(format!("invalid IslandStamp: {e}")))?;
        Ok(Cow::Owned(IslandParams {
            sculpt: layer.map(Arc::new),
            ..p.clone()
        }))
    }

    /// How to build the chunks.
    pub fn chunk_options(&self) -> ChunkOptions {
        ChunkOptions {
            chunk_size: self.params.chunk_size as usize,
            flat: self.flat,
            collision: self.collision,
            meshes: self.meshes,
        }
    }
}

/// A generated island with its chunk data, ready to be turned into nodes.
#[derive(Debug)]
pub struct Prepared {
    /// The island (heights, biomes, splat, stats).
    pub island: Island,
    /// Chunk data, row-major.
    pub chunks: Vec<ChunkData>,
    /// Milliseconds spent preparing the chunk data.
    pub mesh_ms: f64,
    /// The request that produced it.
    pub request: Request,
    /// One line to show the user when the GPU was asked for but the CPU did the job.
    pub warning: Option<String>,
    /// The water maps' summary, made on the worker (`None`: made when installed).
    pub water: Option<WaterSummary>,
    /// Whether the splat is map 0 as it is (`SplatMaps::island_changed`'s `plain`), found on the
    /// worker (`None`: found when installed).
    pub splat_plain: Option<bool>,
    /// The river and lake surface of every chunk, row-major, made on worker threads (`None`:
    /// made when installed, or chunk by chunk in the budgeted build).
    pub water_meshes: Option<Vec<crate::water::water_nodes::WaterMesh>>,
}

/// Why a job produced no island.
#[derive(Clone, Debug, PartialEq)]
pub enum JobError {
    /// Invalid parameters (the core's message).
    Invalid(String),
    /// The cancel flag was raised.
    Cancelled,
    /// A bug: the generator panicked (the panic was caught on the worker).
    Panicked(String),
}

impl std::fmt::Display for JobError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JobError::Invalid(m) => f.write_str(m),
            JobError::Cancelled => f.write_str("generation cancelled"),
            JobError::Panicked(m) => write!(f, "internal error in the generator: {m}"),
        }
    }
}

impl From<GenerateError> for JobError {
    fn from(e: GenerateError) -> Self {
        match e {
            GenerateError::Invalid(e) => JobError::Invalid(e.to_string()),
            GenerateError::Cancelled => JobError::Cancelled,
        }
    }
}

/// Message of a caught panic.
fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Only the generator, on the calling thread (the synchronous `regenerate()` then streams the
/// chunk data into the nodes itself). The CPU path stops once the heights are final (see
/// `island_gpu::generate_staged`), so the caller can set the colliders while another thread
/// finishes the island. Also returns the GPU fallback warning.
pub fn generate_job(
    request: &Request,
    progress: &mut dyn FnMut(f32, &str),
    cancel: &AtomicBool,
) -> Result<(Staged, Option<String>), JobError> {
    let result = catch_unwind(AssertUnwindSafe(|| {
        let params = request.generation_params()?;
        generate_staged(&params, request.backend, progress, cancel).map_err(JobError::from)
    }));
    result.unwrap_or_else(|payload| Err(JobError::Panicked(panic_message(payload))))
}

/// [`island_core::Carved::finish`] (or the GPU's remaining stages) on the calling thread, with
/// panics caught. The warning is set when the GPU failed in its remaining stages and the CPU
/// made the island instead.
pub fn finish_job(staged: Staged) -> Result<(Island, Option<String>), JobError> {
    let result = catch_unwind(AssertUnwindSafe(|| {
        staged
            .finish(&mut |_, _| {}, &AtomicBool::new(false))
            .map_err(JobError::from)
    }));
    result.unwrap_or_else(|payload| Err(JobError::Panicked(panic_message(payload))))
}

/// Run one job on the calling thread (the worker thread of `regenerate_async()`).
pub fn run_job(
    request: Request,
    progress: &mut dyn FnMut(f32, &str),
    cancel: &AtomicBool,
) -> Result<Prepared, JobError> {
    let result = catch_unwind(AssertUnwindSafe(|| -> Result<Prepared, JobError> {
        let params = request.generation_params()?;
        let (island, warning) = generate_with(&params, request.backend, progress, cancel)?;
        let t = Instant::now();
        let chunks = prepare_chunks(&island.field, &island.splat, request.chunk_options());
        let mesh_ms = t.elapsed().as_secs_f64() * 1e3;
        if cancel.load(Ordering::Relaxed) {
            return Err(JobError::Cancelled);
        }
        let (water, splat_plain) = install_data(&island);
        Ok(Prepared {
            island,
            chunks,
            mesh_ms,
            request,
            warning,
            water: Some(water),
            splat_plain: Some(splat_plain),
            water_meshes: None,
        })
    }));
    result.unwrap_or_else(|payload| Err(JobError::Panicked(panic_message(payload))))
}

/// What installing `island` needs besides its chunks, made off the main thread: the water
/// summary and whether the splat is map 0 as it is ([`Prepared::water`],
/// [`Prepared::splat_plain`]).
pub fn install_data(island: &Island) -> (WaterSummary, bool) {
    let plain =
        crate::island::splat_maps::unpainted_is_splat(island.base_splat(), island.field.resolution);
    (WaterSummary::of(island), plain)
}

/// Build a [`Prepared`] island from imported heights (metres, `resolution²`, row-major) with the
/// request's (validated) parameters: normals and splat are recomputed, biomes are unknown
/// (empty), statistics come from the heights and `backend` is `"import"`.
pub fn import_job(request: Request, heights: Vec<f32>) -> Result<Prepared, JobError> {
    let t = Instant::now();
    let p = &request.params;
    p.validate().map_err(|e| JobError::Invalid(e.to_string()))?;
    let n = p.resolution as usize;
    if heights.len() != n * n {
        return Err(JobError::Invalid(format!(
            "expected {n}×{n} heights, got {}",
            heights.len()
        )));
    }
    crate::io::heightmap_io::check_heights(&heights).map_err(JobError::Invalid)?;
    let field = Heightfield::new(n, p.world_size, heights);
    let sandiness = vec![0.0f32; n * n];
    let splat = island_core::splat::auto_splat(
        &field.heights,
        &field.normals,
        &sandiness,
        &p.grid(),
        p.max_height,
        &p.splat,
        island_core::hash::tag::SPLAT,
    );
    let ((lo, hi), land) = island_core::grid::min_max_count_above(&field.heights, 0.0);
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let stats = Stats {
        land_fraction: land as f32 / (n * n) as f32,
        min_height: lo,
        max_height: hi,
        stage_ms: vec![("import".to_string(), ms)],
        total_ms: ms,
        backend: "import".into(),
        ..Default::default()
    };
    let water = island_core::water::Water::sea_only(&field.heights, n);
    let island = Island {
        params: p.clone(),
        field,
        biomes: Vec::new(),
        splat,
        splat_upper: None,
        water,
        stats,
    };
    let t = Instant::now();
    let water = WaterSummary::of(&island);
    let chunks = prepare_chunks(&island.field, &island.splat, request.chunk_options());
    Ok(Prepared {
        island,
        chunks,
        mesh_ms: t.elapsed().as_secs_f64() * 1e3,
        request,
        warning: None,
        water: Some(water),
        splat_plain: None,
        water_meshes: None,
    })
}

/// Message from the worker thread.
#[derive(Debug)]
pub enum Msg {
    /// A stage finished: overall fraction 0..1 and the stage name.
    Progress(f32, String),
    /// The job ended.
    Done(Result<Box<Prepared>, JobError>),
}

/// What [`Worker::poll`] found.
pub enum Polled {
    /// Still running; progress messages received since the last poll, in order.
    Running(Vec<(f32, String)>),
    /// The job ended (with the progress messages that came before).
    Done(Vec<(f32, String)>, Result<Box<Prepared>, JobError>),
}

/// A running background job.
pub struct Worker {
    rx: Receiver<Msg>,
    cancel: Arc<AtomicBool>,
}

/// Every background thread the extension started and has not joined yet, with its cancel flag.
/// A node may still own a running worker when the extension unloads (e.g. the editor quits right
/// after opening a scene), so the registry, not the node, is what gets joined at unload.
static THREADS: Mutex<Vec<(Arc<AtomicBool>, JoinHandle<()>)>> = Mutex::new(Vec::new());

/// Keep `handle` until [`join_all`]; finished threads are dropped from the list on the way.
pub(crate) fn track(cancel: Arc<AtomicBool>, handle: JoinHandle<()>) {
    if let Ok(mut list) = THREADS.lock() {
        list.retain(|(_, h)| !h.is_finished());
        list.push((cancel, handle));
    }
}

/// Free `value` on a short-lived thread of its own (tracked like the generators): memory the
/// worker allocated, freed last on the main thread, can make the allocator give the worker's
/// whole free heap back to the OS in that frame (measured: freeing a 0.5 MB water summary took
/// 10 ms of an install frame after a 2049² generation). Freed here at once when no thread can
/// be started.
pub(crate) fn free_in_background<T: Send + 'static>(value: T) {
    if let Ok(h) = std::thread::Builder::new()
        .name("procedural_island_free".into())
        .spawn(move || drop(value))
    {
        track(Arc::new(AtomicBool::new(false)), h);
    }
}

/// Cancel and join every background thread (called when the extension unloads, so no thread
/// keeps running code of an unloaded library; generation threads stop at the next stage
/// boundary).
pub fn join_all() {
    let threads = match THREADS.lock() {
        Ok(mut list) => std::mem::take(&mut *list),
        Err(_) => return,
    };
    for (cancel, _) in &threads {
        cancel.store(true, Ordering::Relaxed);
    }
    for (_, h) in threads {
        let _ = h.join();
    }
}

impl Worker {
    /// Start a job on a new thread (its parallel stages on rayon's global pool).
    pub fn spawn(request: Request) -> Result<Worker, String> {
        Self::spawn_in(request, None)
    }

    /// Start a job on a new thread, its parallel stages on `pool` (None: rayon's global pool).
    /// The output does not depend on the pool's size.
    pub fn spawn_in(
        request: Request,
        pool: Option<Arc<rayon::ThreadPool>>,
    ) -> Result<Worker, String> {
        let (tx, rx) = channel();
        let cancel = Arc::new(AtomicBool::new(false));
        let flag = cancel.clone();
        let handle = std::thread::Builder::new()
            .name("procedural_island".into())
            .spawn(move || {
                let progress_tx = tx.clone();
                let mut progress = |f: f32, stage: &str| {
                    let _ = progress_tx.send(Msg::Progress(f, stage.to_string()));
                };
                let result = match &pool {
                    Some(p) => p.install(|| run_job(request, &mut progress, &flag)),
                    None => run_job(request, &mut progress, &flag),
                };
                // The receiver may be gone (node freed): ignore.
                let _ = tx.send(Msg::Done(result.map(Box::new)));
            })
            .map_err(|e| format!("could not start the generator thread: {e}"))?;
        track(cancel.clone(), handle);
        Ok(Worker { rx, cancel })
    }

    /// Drain the channel without blocking.
    pub fn poll(&mut self) -> Polled {
        let mut progress = Vec::new();
        loop {
            match self.rx.try_recv() {
                Ok(Msg::Progress(f, s)) => progress.push((f, s)),
                Ok(Msg::Done(r)) => return Polled::Done(progress, r),
                Err(TryRecvError::Empty) => return Polled::Running(progress),
                Err(TryRecvError::Disconnected) => {
                    return Polled::Done(
                        progress,
                        Err(JobError::Panicked(
                            "worker thread ended without a result".into(),
                        )),
                    )
                }
            }
        }
    }

    /// Raise the cancel flag (the thread stops at its next stage boundary).
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

impl Drop for Worker {
    /// The node let go of the job: stop it at its next stage boundary (the thread itself is
    /// joined by [`join_all`] at unload at the latest).
    fn drop(&mut self) {
        self.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(resolution: u32) -> Request {
        Request {
            params: IslandParams {
                resolution,
                chunk_size: 32,
                ..Default::default()
            },
            flat: false,
            collision: true,
            meshes: true,
            backend: Backend::Cpu,
            stamps: None,
        }
    }

    type Outcome = (Vec<(f32, String)>, Result<Box<Prepared>, JobError>);

    fn wait(w: &mut Worker) -> Outcome {
        let mut all = Vec::new();
        loop {
            match w.poll() {
                Polled::Running(p) => {
                    all.extend(p);
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                Polled::Done(p, r) => {
                    all.extend(p);
                    return (all, r);
                }
            }
        }
    }

    #[test]
    fn worker_generates_with_progress() {
        let mut w = Worker::spawn(request(65)).unwrap();
        let (progress, r) = wait(&mut w);
        let prep = r.unwrap();
        assert_eq!(prep.chunks.len(), 4);
        assert_eq!(progress.last().unwrap().0, 1.0);
        assert!(progress.windows(2).all(|p| p[0].0 < p[1].0));
        let direct = island_core::generate(&request(65).params).unwrap();
        assert_eq!(prep.island.field.heights, direct.field.heights);
    }

    #[test]
    fn invalid_and_cancelled_jobs() {
        let mut bad = request(65);
        bad.params.chunk_size = 7;
        let mut w = Worker::spawn(bad).unwrap();
        match wait(&mut w).1 {
            Err(JobError::Invalid(m)) => assert!(m.contains("chunk_size"), "{m}"),
            other => panic!("{other:?}"),
        }
        let cancel = AtomicBool::new(true);
        assert_eq!(
            run_job(request(65), &mut |_, _| {}, &cancel).unwrap_err(),
            JobError::Cancelled
        );
    }

    #[test]
    fn stamps_are_composed_on_the_worker_as_the_core_composes_them() {
        use island_core::stamps::{compose, StampKind};
        let stamp = Stamp {
            kind: StampKind::Mountain,
            center: [40.0, -30.0],
            radius_x: 60.0,
            radius_z: 60.0,
            rotation: [1.0, 0.0],
            height: 50.0,
            falloff: 0.3,
            image: None,
        };
        let mut r = request(129);
        let brush = SculptLayer::new(129, r.params.world_size).unwrap();
        r.stamps = Some(StampJob {
            stamps: vec![stamp.clone()],
            brush: Some(Arc::new(brush.clone())),
        });
        let p = r.generation_params().unwrap();
        let want = compose(
            std::slice::from_ref(&stamp),
            Some(&brush),
            129,
            r.params.world_size,
        )
        .unwrap()
        .unwrap();
        assert_eq!(p.sculpt.as_deref(), Some(&want));
        // The worker's island carries the stamp: higher than without it at the stamp's centre.
        let mut w = Worker::spawn(r.clone()).unwrap();
        let with = wait(&mut w).1.unwrap().island;
        let plain = island_core::generate(&request(129).params).unwrap();
        let i = ((40.0 + r.params.world_size * 0.5) / with.field.spacing()).round() as usize
            + ((-30.0 + r.params.world_size * 0.5) / with.field.spacing()).round() as usize
                * with.field.resolution;
        assert!(with.field.heights[i] > plain.field.heights[i] + 20.0);
        // A bad stamp is the job's error.
        let mut bad = r;
        bad.stamps.as_mut().unwrap().stamps[0].radius_x = 0.0;
        match bad.generation_params() {
            Err(JobError::Invalid(m)) => assert!(m.contains("invalid IslandStamp"), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn import_rebuilds_from_heights() {
        let r = request(65);
        let island = island_core::generate(&r.params).unwrap();
        let prep = import_job(r.clone(), island.field.heights.clone()).unwrap();
        assert_eq!(prep.island.field, island.field);
        assert_eq!(prep.island.stats.backend, "import");
        assert_eq!(prep.island.stats.min_height, island.stats.min_height);
        assert_eq!(prep.chunks.len(), 4);
        assert!(import_job(r.clone(), vec![0.0; 10]).is_err());
        let mut nan = island.field.heights.clone();
        nan[3] = f32::NAN;
        assert!(import_job(r, nan).is_err());
    }

    #[test]
    fn dropping_a_running_worker_is_safe() {
        let w = Worker::spawn(request(513)).unwrap();
        drop(w);
        join_all();
    }

    #[test]
    fn join_all_stops_a_worker_still_owned() {
        // A node still holding its worker when the library unloads: join_all cancels and joins.
        let mut w = Worker::spawn(request(1025)).unwrap();
        join_all();
        match w.poll() {
            Polled::Done(_, Err(JobError::Cancelled)) | Polled::Done(_, Ok(_)) => {}
            _ => panic!("the joined worker must have sent its result"),
        }
    }
}
