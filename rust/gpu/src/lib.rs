//! wgpu compute backend of the island generator.
//!
//! Every stage of [`island_core::pipeline::generate_with`] has a WGSL compute shader of the
//! same name under `shaders/` (embedded in the binary with `include_str!`), ported from the CPU
//! code so that both backends give the same island (see `tests/parity.rs`).
//!
//! * [`adapter_info`] — name of the compute adapter, if any;
//! * [`generate_gpu`] — the whole pipeline on the GPU;
//! * [`generate`] — pick a [`Backend`], falling back to the CPU with a warning when the GPU
//!   cannot be used or fails mid-generation.
//!
//! One context per process (created lazily by whichever thread asks first), pipelines built
//! once, buffers reused between runs of the same resolution. wgpu errors are captured with
//! error scopes and become [`GpuError`]s; nothing here panics on bad input.

pub mod auto;
#[cfg(test)]
mod contraction;
mod ctx;
mod error;
mod learned;
mod passes;
mod pipeline;
mod recorder;
mod run;
mod shaders;
pub mod stages;
mod sync;
mod uniforms;

pub use error::GpuError;

pub use island_core::GpuCounters;
use island_core::{GenerateError, Island, IslandParams, ParamError};
use std::sync::atomic::AtomicBool;

pub use pipeline::GPU_STAGES;

/// Test hook: make the next GPU generations raise a real wgpu validation error at the end of
/// `stage` (a name of `island_core::pipeline::STAGES`), or stop doing so with `None`.
#[doc(hidden)]
pub fn inject_failure_at(stage: Option<&str>) {
    *sync::lock(&pipeline::FAIL_AT) = stage.map(str::to_string);
}

/// Which backend [`generate`] uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Backend {
    /// The GPU only where it was measured faster than the CPU for this kind of work on this
    /// machine (see [`auto`]), else the CPU (silently). A software Vulkan device (lavapipe and
    /// the like) is never measured nor used; `Gpu` still uses it.
    #[default]
    Auto,
    /// The GPU; falls back to the CPU with a warning when it is unavailable or fails.
    Gpu,
    /// The CPU only; never touches wgpu.
    Cpu,
}

impl Backend {
    /// Stable name ("auto", "gpu", "cpu").
    pub fn name(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Gpu => "gpu",
            Backend::Cpu => "cpu",
        }
    }
    /// Parse [`Backend::name`] (case-insensitive).
    pub fn from_name(s: &str) -> Option<Backend> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Some(Backend::Auto),
            "gpu" => Some(Backend::Gpu),
            "cpu" => Some(Backend::Cpu),
            _ => None,
        }
    }
}

/// Name of the compute adapter (e.g. "llvmpipe (LLVM 15.0.7, 256 bits) (Vulkan)"), creating the
/// shared GPU context on first call; `None` when no compute-capable adapter exists.
pub fn adapter_info() -> Option<String> {
    ctx::gpu().ok().map(|g| g.name.clone())
}

/// Whether [`Backend::Auto`] may run on the GPU: a compute adapter exists and is not a
/// software rasteriser (whether it does, for given parameters, is [`auto_decision`]'s answer).
/// A software or missing adapter is recognised without opening a device.
pub fn auto_uses_gpu() -> bool {
    ctx::hardware_adapter()
}

/// What [`Backend::Auto`] would do for `params` now (without measuring anything).
pub fn auto_decision(params: &IslandParams) -> auto::Decision {
    auto::decide_now(ctx::adapter_facts().as_ref(), params)
}

/// Test hook: [`Backend::Auto`] treats a software adapter (lavapipe) as a hardware one, so its
/// measuring path can run without a GPU.
#[doc(hidden)]
pub fn auto_treat_software_as_hardware(on: bool) {
    ctx::SOFTWARE_AS_HARDWARE.store(on, std::sync::atomic::Ordering::SeqCst);
}

/// Test hook: build the compute pipelines with the FMA guard of `common.wgsl` (`rounded()`)
/// turned into the identity, so that a driver may fuse every product into the add that
/// follows. Only effective before the shared context is created (first GPU use).
#[doc(hidden)]
pub fn set_fma_guard_off(off: bool) {
    passes::FMA_GUARD_OFF.store(off, std::sync::atomic::Ordering::SeqCst);
}

/// Benchmark switch: wait for the device at the end of every GPU stage, so that
/// `Stats::stage_ms` gives each stage's own GPU time. Off (the default), a GPU stage's work is
/// submitted without waiting and its `stage_ms` is the host's time to record and submit it;
/// the device's time shows in the next stage that waits for a result (and in `total_ms`).
/// Process-wide.
pub fn set_stage_waits(on: bool) {
    pipeline::STAGE_WAITS.store(on, std::sync::atomic::Ordering::SeqCst);
}

/// Test hook: every dispatch count the GPU pipeline learned for its iterations set to `count`,
/// so that the next generation's speculation falls short where more are needed; `None`
/// forgets them (the next generation reads every convergence counter again). The counts are
/// kept next to AUTO's measurements ([`auto::set_store_dir`], file
/// `island_gpu_iterations.json`) when a folder is set.
#[doc(hidden)]
pub fn set_learned_iterations(count: Option<u32>) {
    learned::set_all(count);
}

/// Test hook: record `margin` dispatches beyond each learned iteration count instead of the
/// default 1 (`None`: the default again). The checked counts of a relaxation vary by a few from
/// run to run (a tile may see a neighbour tile's update of the same dispatch, or not), so a
/// test that asserts "no miss" records a generous margin.
#[doc(hidden)]
pub fn set_speculation_margin(margin: Option<u32>) {
    recorder::set_margin(margin);
}

/// Generations of this process whose speculative iteration counts fell short and that were
/// generated again with every convergence counter read (for tests and benchmarks).
#[doc(hidden)]
pub fn speculation_misses() -> u64 {
    recorder::speculation_misses()
}

/// Whether the shared GPU context (device and pipelines) is open (for tests).
#[doc(hidden)]
pub fn context_open() -> bool {
    ctx::is_open()
}

/// Why the GPU context is unavailable (`None` when it is available).
pub fn adapter_error() -> Option<String> {
    ctx::gpu().err().map(|e| e.to_string())
}

/// Generate an island entirely on the GPU (heights, biomes, splat and statistics from the
/// GPU; the normals computed on the CPU from the heights while the GPU finishes).
/// `stats.backend` is `"gpu"`.
pub fn generate_gpu(params: &IslandParams) -> Result<Island, GpuError> {
    generate_gpu_with(params, &mut |_, _| {}, &AtomicBool::new(false))
}

/// [`generate_gpu`] with a progress callback `(fraction 0..1, stage name of [`GPU_STAGES`])`
/// and a cancel flag checked after every stage.
pub fn generate_gpu_with(
    params: &IslandParams,
    progress: &mut dyn FnMut(f32, &str),
    cancel: &AtomicBool,
) -> Result<Island, GpuError> {
    gpu_head(params, progress, cancel)?.finish(progress, cancel)
}

/// The GPU pipeline up to the final heights.
fn gpu_head(
    params: &IslandParams,
    progress: &mut dyn FnMut(f32, &str),
    cancel: &AtomicBool,
) -> Result<pipeline::Head, GpuError> {
    params.validate()?;
    let gpu = ctx::gpu()?;
    let r = gpu.guarded(|| pipeline::run_head(&gpu, params, progress, cancel));
    if matches!(r, Err(GpuError::DeviceLost(_))) {
        ctx::forget(&gpu);
    }
    r
}

/// Generate with the chosen backend. Returns the island and, when the GPU was asked for (or
/// failed mid-generation) and the CPU had to do the job, one warning line.
pub fn generate(
    params: &IslandParams,
    backend: Backend,
) -> Result<(Island, Option<String>), ParamError> {
    match generate_with(params, backend, &mut |_, _| {}, &AtomicBool::new(false)) {
        Ok(r) => Ok(r),
        Err(GenerateError::Invalid(e)) => Err(e),
        Err(GenerateError::Cancelled) => unreachable!("never cancelled"),
    }
}

/// [`generate`] with progress `(fraction 0..1, stage name)` and a cancel flag. When the GPU
/// fails part-way, progress restarts with the CPU's stages.
pub fn generate_with(
    params: &IslandParams,
    backend: Backend,
    progress: &mut dyn FnMut(f32, &str),
    cancel: &AtomicBool,
) -> Result<(Island, Option<String>), GenerateError> {
    let (staged, warning) = generate_staged(params, backend, progress, cancel)?;
    let (island, late) = staged.finish(progress, cancel)?;
    Ok((island, warning.or(late)))
}

/// What [`generate_staged`] hands back: a generation whose heights are final.
pub enum Staged {
    /// The CPU path stopped once the heights were final: finish it with
    /// [`island_core::Carved::finish`] (on any thread), using the heights meanwhile.
    Carved(island_core::Carved),
    /// The GPU path stopped once the heights were final (on the host, verified): the normals,
    /// splat and statistics are still to come ([`Staged::finish`], on any thread).
    GpuTail(GpuTail),
    /// A finished island (AUTO's measuring generation).
    Done(Island),
}

/// The rest of a GPU generation whose heights are final (see [`Staged::GpuTail`]).
pub struct GpuTail {
    head: pipeline::Head,
    reason: String,
    auto: bool,
}

impl GpuTail {
    /// The rest of the generation. A GPU failure here gives the CPU's island (the whole
    /// generation again) and the fallback warning.
    fn finish(
        self,
        progress: &mut dyn FnMut(f32, &str),
        cancel: &AtomicBool,
    ) -> Result<(Island, Option<String>), GenerateError> {
        let GpuTail { head, reason, auto } = self;
        let params = head.params().clone();
        match head.finish(progress, cancel) {
            Ok(mut island) => {
                island.stats.backend_reason = reason;
                Ok((island, None))
            }
            Err(GpuError::Cancelled) => Err(GenerateError::Cancelled),
            Err(GpuError::Invalid(e)) => Err(GenerateError::Invalid(e)),
            Err(e) => {
                let mut island = island_core::generate_with(&params, progress, cancel)?;
                island.stats.backend_reason = fallback_reason(auto, &e);
                Ok((island, Some(fallback_warning(&e))))
            }
        }
    }
}

/// `backend_reason` of a CPU island made because the GPU failed.
fn fallback_reason(auto: bool, e: &GpuError) -> String {
    if auto {
        format!("auto: cpu (the GPU failed: {e})")
    } else {
        format!("gpu requested; the GPU failed ({e}), cpu instead")
    }
}

/// The warning of a CPU island made because the GPU failed.
fn fallback_warning(e: &GpuError) -> String {
    format!("GPU generation unavailable ({e}); generated on the CPU instead")
}

impl Staged {
    /// The island's final heights, metres, `resolution²` row-major (colliders can be built
    /// from them while another thread finishes the island).
    pub fn heights(&self) -> &[f32] {
        match self {
            Staged::Carved(c) => c.heights(),
            Staged::GpuTail(t) => t.head.heights(),
            Staged::Done(island) => &island.field.heights,
        }
    }

    /// The whole island: [`island_core::Carved::finish`], the GPU's remaining stages, or the
    /// finished island as it is. The warning is set when the GPU failed in its remaining
    /// stages and the CPU made the island instead (its heights may then differ slightly from
    /// [`Staged::heights`]).
    pub fn finish(
        self,
        progress: &mut dyn FnMut(f32, &str),
        cancel: &AtomicBool,
    ) -> Result<(Island, Option<String>), GenerateError> {
        match self {
            Staged::Carved(c) => Ok((c.finish(progress, cancel)?, None)),
            Staged::GpuTail(t) => t.finish(progress, cancel),
            Staged::Done(island) => Ok((island, None)),
        }
    }
}

/// [`generate_with`] that stops as soon as the heights are final (the CPU path before its
/// normals and splat, see [`island_core::Carved`]; the GPU path after the drainage, before its
/// normals, splat, statistics and read-back), so the caller can overlap its own work (the
/// colliders, say) with the last stages: [`Staged::finish`] on any thread.
pub fn generate_staged(
    params: &IslandParams,
    backend: Backend,
    progress: &mut dyn FnMut(f32, &str),
    cancel: &AtomicBool,
) -> Result<(Staged, Option<String>), GenerateError> {
    params.validate()?;
    let cpu = |warning: Option<String>, reason: String, progress: &mut dyn FnMut(f32, &str)| {
        island_core::generate_heights_with(params, progress, cancel)
            .map(|c| (Staged::Carved(c.with_backend_reason(reason)), warning))
    };
    let auto = backend == Backend::Auto;
    if backend != Backend::Cpu && params.paths.as_ref().is_some_and(|s| !s.paths.is_empty()) {
        // Paths are shaped from the terrain right before the erosion, on the CPU only.
        let reason = if auto {
            "auto: cpu (the island has paths: they run on the CPU)"
        } else {
            "gpu requested; the island has paths (CPU only), cpu instead"
        };
        return cpu(None, reason.into(), progress);
    }
    let gpu_or_cpu = |reason: String, progress: &mut dyn FnMut(f32, &str)| match gpu_head(
        params, progress, cancel,
    ) {
        Ok(head) => Ok((Staged::GpuTail(GpuTail { head, reason, auto }), None)),
        Err(GpuError::Invalid(e)) => Err(GenerateError::Invalid(e)),
        Err(GpuError::Cancelled) => Err(GenerateError::Cancelled),
        Err(GpuError::NoAdapter(e)) if auto => {
            cpu(None, format!("auto: cpu (GPU unavailable: {e})"), progress)
        }
        Err(e) => cpu(
            Some(fallback_warning(&e)),
            fallback_reason(auto, &e),
            progress,
        ),
    };
    match backend {
        Backend::Cpu => cpu(None, "cpu requested".into(), progress),
        Backend::Gpu => gpu_or_cpu("gpu requested".into(), progress),
        Backend::Auto => match auto_decision(params) {
            auto::Decision::Cpu(reason) => cpu(None, reason, progress),
            auto::Decision::Gpu(reason) => gpu_or_cpu(reason, progress),
            auto::Decision::Measure(key) => measure(params, key, progress, cancel),
        },
    }
}

/// AUTO's first generation of a key: the island on the GPU (the device opened first, outside
/// the timing) and on the CPU, both timed; the measurement is stored and the faster island
/// returned. A GPU that fails or cannot be opened leaves the CPU's island, unmeasured.
fn measure(
    params: &IslandParams,
    key: auto::AutoKey,
    progress: &mut dyn FnMut(f32, &str),
    cancel: &AtomicBool,
) -> Result<(Staged, Option<String>), GenerateError> {
    let cpu_only =
        |reason: String, warning: Option<String>, progress: &mut dyn FnMut(f32, &str)| {
            island_core::generate_heights_with(params, progress, cancel)
                .map(|c| (Staged::Carved(c.with_backend_reason(reason)), warning))
        };
    if let Err(e) = ctx::gpu() {
        return cpu_only(format!("auto: cpu (GPU unavailable: {e})"), None, progress);
    }
    // The GPU is timed as later generations of this key will run: its second generation. The
    // first one allocates the buffers of the size and, in a process that has not learned the
    // iterations' dispatch counts for it, reads every convergence counter back (about 3× the
    // host waits and 1.2× the dispatches of the next ones at 1025²); timing it would make AUTO
    // keep the CPU where the GPU is faster.
    let warm = generate_gpu_with(params, progress, cancel).map(|_| ());
    let t = std::time::Instant::now();
    let gpu = warm.and_then(|()| generate_gpu_with(params, progress, cancel));
    let gpu_ms = t.elapsed().as_secs_f64() * 1e3;
    let gpu_island = match gpu {
        Ok(island) => island,
        Err(GpuError::Invalid(e)) => return Err(GenerateError::Invalid(e)),
        Err(GpuError::Cancelled) => return Err(GenerateError::Cancelled),
        Err(GpuError::NoAdapter(e)) => {
            return cpu_only(format!("auto: cpu (GPU unavailable: {e})"), None, progress)
        }
        Err(e) => {
            return cpu_only(
                format!("auto: cpu (the GPU failed: {e})"),
                Some(format!(
                    "GPU generation unavailable ({e}); generated on the CPU instead"
                )),
                progress,
            )
        }
    };
    let t = std::time::Instant::now();
    let cpu_island = island_core::generate_with(params, progress, cancel)?;
    let cpu_ms = t.elapsed().as_secs_f64() * 1e3;
    let m = auto::Measurement {
        key,
        gpu_ms,
        cpu_ms,
    };
    let mut reason = m.reason();
    let gpu_faster = m.gpu_faster();
    if let Err(e) = auto::record_now(m) {
        reason.push_str(&format!("; not saved: {e}"));
    }
    let mut island = if gpu_faster { gpu_island } else { cpu_island };
    island.stats.backend_reason = reason;
    Ok((Staged::Done(island), None))
}
