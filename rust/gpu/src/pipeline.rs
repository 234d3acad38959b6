//! The whole pipeline in `island_core::pipeline` order: this module only orders the stages
//! (each lives in its module under `stages/`) and runs them.

use crate::ctx::Gpu;
use crate::error::GpuError;
use crate::run::{put_back, Held, Resources, Run};
use crate::stages::{
    base, biomes, coast, detail, distance, drainage, erosion, mask, normals, readback, river,
    shaping, splat,
};
use crate::sync::lock;
use island_core::heightfield::Heightfield;
use island_core::pipeline::{Hydrology, Island, Stats};
use island_core::{GpuCounters, IslandParams};
use std::any::Any;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Benchmark switch ([`crate::set_stage_waits`]): wait for the device at the end of every GPU
/// stage, so that `Stats::stage_ms` is each stage's own GPU time. Off: a stage's work is
/// submitted and the host goes on to record the next one.
pub(crate) static STAGE_WAITS: AtomicBool = AtomicBool::new(false);

/// Test hook ([`crate::inject_failure_at`]): the stage at whose end a wgpu validation error is
/// raised.
pub(crate) static FAIL_AT: Mutex<Option<String>> = Mutex::new(None);

// ---- the stage list -------------------------------------------------------------------------

/// One stage of the GPU pipeline: its name (progress and `Stats::stage_ms`) and what it does.
struct Stage {
    name: &'static str,
    /// Records GPU work (submitted at the end of the stage, without waiting unless
    /// [`STAGE_WAITS`]); the cancel flag and the failure hook are checked after these.
    gpu: bool,
    run: StageFn,
}

/// The GPU pipeline, in order: `island_core::pipeline::STAGES` up to `splat` (same names, one
/// GPU stage each), then the read-back and the CPU-side heightfield and statistics. Erosion runs
/// its passes on the GPU (`erosion.wgsl` and `depression.wgsl`); the drainage stage runs the
/// drainage and the river carving on the GPU (`drainage.wgsl`, `channels.wgsl`), the dams and
/// the water map on the CPU (see [`drainage::stage_drainage`]).
const STAGES: [Stage; 15] = [
    gpu_stage("base", base::stage_base),
    gpu_stage("detail", detail::stage_detail),
    gpu_stage("biomes", biomes::stage_biomes),
    gpu_stage("shaping", shaping::stage_shaping),
    gpu_stage("mask", mask::stage_mask),
    gpu_stage("distance", distance::stage_distance),
    gpu_stage("coast", coast::stage_coast),
    gpu_stage("river", river::stage_river),
    gpu_stage("erosion", erosion::stage_erosion),
    gpu_stage("drainage", drainage::stage_drainage),
    gpu_stage("normals", normals::stage_normals),
    gpu_stage("splat", splat::stage_splat),
    cpu_stage("readback", readback::stage_readback),
    cpu_stage("heightfield", readback::stage_heightfield),
    cpu_stage("stats", readback::stage_stats),
];

type StageFn = fn(&mut Run) -> Result<(), GpuError>;

const fn gpu_stage(name: &'static str, run: StageFn) -> Stage {
    Stage {
        name,
        gpu: true,
        run,
    }
}

const fn cpu_stage(name: &'static str, run: StageFn) -> Stage {
    Stage {
        name,
        gpu: false,
        run,
    }
}

const fn stage_names<const N: usize>(s: &[Stage; N]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = s[i].name;
        i += 1;
    }
    out
}

/// Stage names reported by the GPU pipeline (progress and `Stats::stage_ms`), in order.
pub const GPU_STAGES: [&str; STAGES.len()] = stage_names(&STAGES);

// ---- per-sample buffers ---------------------------------------------------------------------

// ---- pass uniforms from the parameters ------------------------------------------------------

// ---- recording ------------------------------------------------------------------------------

// ---- the stages -----------------------------------------------------------------------------

/// Index in [`STAGES`] of the first stage after the heights are final (`normals`): the
/// generation can be handed over there ([`Head`]), and the rest ([`Head::finish`]) run on
/// another thread while the caller uses the heights.
const TAIL: usize = 10;

/// A GPU generation whose heights are final (every stage up to the drainage ran, its
/// iterations verified): what the rest of the generation ([`Head::finish`], on any thread)
/// needs. It owns the buffers of its resolution, taken out of the context's cache, and puts
/// them back when it is finished (or dropped) if no other generation took their place.
pub(crate) struct Head {
    gpu: Arc<Gpu>,
    params: IslandParams,
    res: Option<Box<dyn Any + Send>>,
    heights: Vec<f32>,
    hydro: Option<Hydrology>,
    stage_ms: Vec<(String, f64)>,
    t_all: Instant,
    /// What the head asked of the device (counted on its thread).
    counters: GpuCounters,
}

impl Head {
    /// The island's final heights, metres, `resolution²` row-major.
    pub fn heights(&self) -> &[f32] {
        &self.heights
    }

    /// The parameters being generated.
    pub fn params(&self) -> &IslandParams {
        &self.params
    }

    /// The rest of the generation (normals and splat on the GPU, the read-back, the statistics
    /// reduced on the GPU; the normals of the heightfield on the CPU while the GPU works).
    /// Progress continues where the head left off; `total_ms` counts from the head's start.
    pub fn finish(
        mut self,
        progress: &mut dyn FnMut(f32, &str),
        cancel: &AtomicBool,
    ) -> Result<Island, GpuError> {
        let before = crate::ctx::counters();
        let gpu = self.gpu.clone();
        let r = gpu.guarded(|| tail(&gpu, &mut self, progress, cancel));
        if matches!(r, Err(GpuError::DeviceLost(_))) {
            crate::ctx::forget(&gpu);
        }
        let counters = self.counters.plus(crate::ctx::counters().since(before));
        r.map(|mut island| {
            island.stats.gpu = Some(counters);
            island
        })
    }
}

impl Drop for Head {
    fn drop(&mut self) {
        put_back(&self.gpu.cache, self.res.take());
    }
}

/// The pipeline on the GPU up to the final heights (parameters already validated). The
/// iterations whose dispatch counts earlier generations learned run without reading their
/// convergence counters back (see `recorder::Speculation`); when one of them had not
/// converged, the head runs again with every counter read (and its counts learned anew).
pub(crate) fn run_head(
    gpu: &Arc<Gpu>,
    p: &IslandParams,
    progress: &mut dyn FnMut(f32, &str),
    cancel: &AtomicBool,
) -> Result<Head, GpuError> {
    let before = crate::ctx::counters();
    let head = match head_once(gpu, p, progress, cancel, true) {
        Err(GpuError::Unconverged(_)) => head_once(gpu, p, progress, cancel, false),
        r => r,
    };
    // What was learned, for the next process (when there is a store folder).
    crate::learned::save();
    head.map(|mut h| {
        h.counters = crate::ctx::counters().since(before);
        h
    })
}

/// Runs the stages `ks` of [`STAGES`], each: its work, the failure hook, the submission (or
/// the wait of [`STAGE_WAITS`]), its time, progress and the cancel check.
fn run_stages(
    run: &mut Run,
    ks: std::ops::Range<usize>,
    stage_ms: &mut Vec<(String, f64)>,
    progress: &mut dyn FnMut(f32, &str),
    cancel: &AtomicBool,
) -> Result<(), GpuError> {
    let fail_at = lock(&FAIL_AT).clone();
    for k in ks {
        run_stage(run, k, fail_at.as_deref(), stage_ms, progress, cancel)?;
    }
    Ok(())
}

fn run_stage(
    run: &mut Run,
    k: usize,
    fail_at: Option<&str>,
    stage_ms: &mut Vec<(String, f64)>,
    progress: &mut dyn FnMut(f32, &str),
    cancel: &AtomicBool,
) -> Result<(), GpuError> {
    let stage = &STAGES[k];
    let t = Instant::now();
    (stage.run)(run)?;
    if stage.gpu {
        if fail_at == Some(stage.name) {
            // Test hook: a real wgpu validation error (a mappable storage buffer is invalid).
            let _ = run.gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("injected failure"),
                size: 16,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            });
        }
        if STAGE_WAITS.load(Ordering::Relaxed) {
            run.rec.flush()?;
        } else {
            run.rec.submit();
        }
    }
    stage_ms.push((stage.name.to_string(), t.elapsed().as_secs_f64() * 1e3));
    progress((k + 1) as f32 / STAGES.len() as f32, stage.name);
    if stage.gpu && cancel.load(Ordering::Relaxed) {
        return Err(GpuError::Cancelled);
    }
    Ok(())
}

fn head_once(
    gpu: &Arc<Gpu>,
    p: &IslandParams,
    progress: &mut dyn FnMut(f32, &str),
    cancel: &AtomicBool,
    speculate: bool,
) -> Result<Head, GpuError> {
    let t_all = Instant::now();
    let n = p.resolution as usize;
    let mut cache = lock(&gpu.cache);
    let held = cache.as_ref().and_then(|r| r.downcast_ref::<Resources>());
    if held.map(|r| r.n) != Some(n) {
        *cache = None; // free the old size first
        *cache = Some(Box::new(Resources::new(gpu, n)?));
    }
    let mut run = Run::new(gpu, p, Held::Locked(cache));
    if speculate {
        run.rec.speculate();
    }
    let mut stage_ms: Vec<(String, f64)> = Vec::new();
    run_stages(&mut run, 0..TAIL, &mut stage_ms, progress, cancel)?;
    // Every iteration of the head was verified by the drainage's read-backs (nothing is
    // pending that a later read-back would have to check).
    debug_assert!(run.rec.settled(), "the head left unverified iterations");
    // The buffers leave the cache with the head (its lock is released here).
    let res = run.res.take().and_then(|mut held| held.take());
    Ok(Head {
        gpu: gpu.clone(),
        params: p.clone(),
        res,
        heights: std::mem::take(&mut run.heights),
        hydro: run.hydro.take(),
        stage_ms,
        t_all,
        counters: GpuCounters::default(),
    })
}

/// [`Head::finish`]'s work: the stages from [`TAIL`] on, with the heightfield's normals
/// computed on a CPU thread from the start (the heights are final) while the GPU records and
/// runs the normals, splat and statistics and the host waits for the read-back.
fn tail(
    gpu: &Gpu,
    h: &mut Head,
    progress: &mut dyn FnMut(f32, &str),
    cancel: &AtomicBool,
) -> Result<Island, GpuError> {
    // The head is finished with this call: its parameters, heights and buffers move here.
    let p = std::mem::take(&mut h.params);
    let n = p.resolution as usize;
    let heights = std::mem::take(&mut h.heights);
    let world_size = p.world_size;
    let field_job = std::thread::Builder::new()
        .name("island heightfield".into())
        .spawn(move || Heightfield::new(n, world_size, heights))
        .map_err(|e| GpuError::Unsupported(format!("no thread for the heightfield: {e}")))?;
    let held = Held::Taken {
        res: h.res.take(),
        cache: &gpu.cache,
    };
    let mut run = Run::new(gpu, &p, held);
    run.field_job = Some(field_job);
    run.hydro = h.hydro.take();
    let mut stage_ms = std::mem::take(&mut h.stage_ms);
    run_stages(
        &mut run,
        TAIL..STAGES.len(),
        &mut stage_ms,
        progress,
        cancel,
    )?;
    let (land_fraction, min_height, max_height) = run.stats;
    let field = run.field.take().expect("heightfield stage ran");
    let Hydrology { water, stats: hs } = run.hydro.take().expect("drainage stage ran");
    // Wetness ran on the GPU in the splat stage.
    let splat = std::mem::take(&mut run.splat);
    Ok(Island {
        params: p.clone(),
        water,
        field,
        biomes: std::mem::take(&mut run.biomes),
        splat,
        // Islands with paths (the only source of layers 4..7) run on the CPU.
        splat_upper: None,
        stats: hs.apply(Stats {
            land_fraction,
            min_height,
            max_height,
            stage_ms,
            total_ms: h.t_all.elapsed().as_secs_f64() * 1e3,
            backend: "gpu".into(),
            ..Default::default()
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{PLANES, ROLES};

    fn stage_index(name: &str) -> usize {
        GPU_STAGES
            .iter()
            .position(|s| *s == name)
            .unwrap_or_else(|| panic!("no stage {name}"))
    }

    /// Roles sharing a plane are never live in the same stage; every role names real stages.
    #[test]
    fn plane_roles_never_overlap() {
        for (i, a) in ROLES.iter().enumerate() {
            let (a0, a1) = (stage_index(a.from), stage_index(a.to));
            assert!(a0 <= a1, "{}", a.name);
            assert!(a.plane < PLANES || a.plane == usize::MAX, "{}", a.name);
            for b in &ROLES[i + 1..] {
                assert_ne!(a.name, b.name);
                if a.plane != b.plane || a.plane == usize::MAX {
                    continue;
                }
                let (b0, b1) = (stage_index(b.from), stage_index(b.to));
                assert!(
                    a1 < b0 || b1 < a0,
                    "{} ({}..{}) and {} ({}..{}) share plane {}",
                    a.name,
                    a.from,
                    a.to,
                    b.name,
                    b.from,
                    b.to,
                    a.plane
                );
            }
        }
        for k in 0..PLANES {
            assert!(ROLES.iter().any(|r| r.plane == k), "plane {k} unused");
        }
    }

    /// The tail starts right after the drainage (the heights are final there) with the
    /// normals.
    #[test]
    fn the_tail_starts_at_the_normals() {
        assert_eq!(STAGES[TAIL].name, "normals");
        assert_eq!(STAGES[TAIL - 1].name, "drainage");
    }

    /// The GPU stages are the core's stages (same names, same order) up to `splat`, then the
    /// read-back and the CPU-side heightfield and statistics.
    #[test]
    fn stages_follow_the_core() {
        let core = island_core::pipeline::STAGES;
        let gpu_only = ["readback", "heightfield"];
        let shared: Vec<&str> = GPU_STAGES
            .iter()
            .copied()
            .filter(|s| !gpu_only.contains(s))
            .collect();
        assert_eq!(shared, core.to_vec());
        for s in &STAGES {
            assert_eq!(
                s.gpu,
                stage_index(s.name) < stage_index("readback"),
                "{}",
                s.name
            );
        }
    }
}

#[cfg(test)]
mod binding_checks {
    use super::*;
    use crate::ctx::grid2;
    use crate::recorder::Rec;
    use crate::uniforms as u;

    /// A dispatch whose buffers do not match the shader's bindings (wrong name, wrong access,
    /// missing, extra, wrong uniform type) is an error, recorded nothing.
    #[test]
    fn mismatched_bindings_are_errors() {
        let gpu = match crate::ctx::gpu() {
            Ok(g) => g,
            Err(e) => {
                if std::env::var("ISLAND_REQUIRE_GPU").is_ok_and(|v| v == "1") {
                    panic!("ISLAND_REQUIRE_GPU=1 but no GPU adapter ({e})");
                }
                println!("SKIPPED: mismatched_bindings_are_errors: {e}");
                return;
            }
        };
        use crate::passes::Entry;
        const DETAIL: Entry = Entry::new("apply_detail", "main");
        const NORMALS: Entry = Entry::new("compute_normals", "main");
        let n = 17;
        let mut rec = Rec::new(&gpu, &u::Grid::new(n, 1.0, 0));
        let a = gpu.storage("a", (n * n * 4) as u64);
        let b = gpu.storage("b", (n * n * 4) as u64);
        let det = u::Detail {
            strength: 1.0,
            cap: 1.0,
        };
        let cases: Vec<(&str, Result<(), GpuError>)> = vec![
            (
                "unknown entry point",
                rec.pass(Entry::new("apply_detail", "no_such_entry"))
                    .params(&det)
                    .read("detail", &b)
                    .read_write("heights", &a)
                    .run(grid2(n)),
            ),
            (
                "wrong name",
                rec.pass(DETAIL)
                    .params(&det)
                    .read("detail", &b)
                    .read_write("heights", &a)
                    .run(grid2(n)),
            ),
            (
                "read given as read_write",
                rec.pass(DETAIL)
                    .params(&det)
                    .read_write("detail", &b)
                    .read_write("base", &a)
                    .run(grid2(n)),
            ),
            (
                "missing buffer",
                rec.pass(DETAIL)
                    .params(&det)
                    .read_write("base", &a)
                    .run(grid2(n)),
            ),
            (
                "missing params",
                rec.pass(DETAIL)
                    .read("detail", &b)
                    .read_write("base", &a)
                    .run(grid2(n)),
            ),
            (
                "wrong params type",
                rec.pass(DETAIL)
                    .params(&u::Shaping { lut_len: 2 })
                    .read("detail", &b)
                    .read_write("base", &a)
                    .run(grid2(n)),
            ),
            (
                "params not used",
                rec.pass(NORMALS)
                    .params(&det)
                    .read("heights", &a)
                    .write("normal_x", &b)
                    .write("normal_y", &b)
                    .write("normal_z", &b)
                    .run(grid2(n)),
            ),
        ];
        for (what, r) in cases {
            match r {
                Err(GpuError::Wgpu(e)) => println!("{what}: {e}"),
                r => panic!("{what}: expected a binding error, got {r:?}"),
            }
        }
        rec.pass(DETAIL)
            .params(&det)
            .read("detail", &b)
            .read_write("base", &a)
            .run(grid2(n))
            .expect("matching bindings");
        rec.flush().expect("nothing invalid was recorded");
    }
}
