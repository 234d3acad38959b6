//! The one GPU context of the process: device, queue, pipelines, error capture.

use crate::auto::AdapterFacts;
use crate::error::GpuError;
use crate::passes::{self, Entry, Pipe, Pipes};
use crate::sync::lock;
use crate::uniforms::{Grid, Uniform};
use island_core::GpuCounters;
use std::future::Future;
use std::num::NonZeroU64;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context as TaskContext, Poll, Waker};

/// Longest wait for one submission before the GPU is given up on (the CPU then finishes).
const POLL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// Slots of the per-dispatch uniform buffer of one [`Frame`].
pub(crate) const DISPATCH_SLOTS: u64 = 256;
/// Bytes of one slot: WebGPU's largest `min_uniform_buffer_offset_alignment`, and at least the
/// largest uniform struct (checked in `uniforms.rs`).
const SLOT_BYTES: u64 = 256;

thread_local! {
    /// What this thread asked of the device so far (see [`counters`]).
    static COUNTERS: std::cell::Cell<GpuCounters> = const {
        std::cell::Cell::new(GpuCounters {
            dispatches: 0,
            submissions: 0,
            host_waits: 0,
            bytes_read_back: 0,
            bytes_uploaded: 0,
        })
    };
}

/// The running counters of this thread (every wgpu call of a generation runs on the thread
/// that asked for it); a generation's counts are the difference of two readings.
pub(crate) fn counters() -> GpuCounters {
    COUNTERS.with(|c| c.get())
}

fn count(f: impl FnOnce(&mut GpuCounters)) {
    COUNTERS.with(|c| {
        let mut v = c.get();
        f(&mut v);
        c.set(v);
    });
}

/// The process-wide GPU context.
pub(crate) struct Gpu {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub name: String,
    /// Driver name and version.
    pub driver: String,
    /// The adapter is a software rasteriser (lavapipe, WARP, SwiftShader): `Backend::Auto`
    /// prefers the rayon CPU path over it.
    pub software: bool,
    pub pipes: Pipes,
    pub limits: wgpu::Limits,
    lost: Arc<AtomicBool>,
    uncaptured: Arc<Mutex<Vec<String>>>,
    /// Buffers of the last resolution generated, reused by the next run of that size (the
    /// pipeline's `run::Resources`; held as `Any` so that the context does not depend on the
    /// stages above it).
    pub cache: Mutex<Option<Box<dyn std::any::Any + Send>>>,
}

enum State {
    Untried,
    Failed(String),
    Ready(Arc<Gpu>),
}

static STATE: Mutex<State> = Mutex::new(State::Untried);

/// The shared context, created on first use. A failed creation is remembered; a lost device
/// is dropped so that the next call builds a fresh one.
pub(crate) fn gpu() -> Result<Arc<Gpu>, GpuError> {
    let mut st = lock(&STATE);
    if let State::Ready(g) = &*st {
        if !g.lost.load(Ordering::SeqCst) {
            return Ok(g.clone());
        }
        *st = State::Untried;
    }
    if let State::Failed(why) = &*st {
        return Err(GpuError::NoAdapter(why.clone()));
    }
    match catch_unwind(AssertUnwindSafe(create)) {
        Ok(Ok(g)) => {
            let g = Arc::new(g);
            *st = State::Ready(g.clone());
            Ok(g)
        }
        Ok(Err(e)) => {
            *st = State::Failed(e.to_string());
            Err(e)
        }
        Err(_) => {
            let why = "wgpu panicked while creating the device".to_string();
            *st = State::Failed(why.clone());
            Err(GpuError::NoAdapter(why))
        }
    }
}

/// Whether the context is open (and not lost).
pub(crate) fn is_open() -> bool {
    matches!(&*lock(&STATE), State::Ready(g) if !g.lost.load(Ordering::SeqCst))
}

/// Mark the context as lost (the next [`gpu`] call recreates it).
pub(crate) fn forget(g: &Gpu) {
    g.lost.store(true, Ordering::SeqCst);
}

/// wgpu's multi-line error reports as one line ("Validation Error: Caused by: ...").
pub(crate) fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Minimal executor: wgpu's native futures resolve without an event loop.
pub(crate) fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let mut cx = TaskContext::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::yield_now();
    }
}

/// The adapter [`gpu`] opens: Vulkan / Metal / DX12 by default (GL compute is not worth the
/// trouble; `WGPU_BACKEND` overrides), high-performance preference.
fn default_adapter() -> Result<wgpu::Adapter, GpuError> {
    let desc = wgpu::InstanceDescriptor {
        backends: wgpu::Backends::PRIMARY,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    };
    let instance = wgpu::Instance::new(desc.with_env());
    block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        ..Default::default()
    }))
    .map_err(|e| GpuError::NoAdapter(format!("no GPU adapter: {e}")))
}

/// "name (API)", as [`Gpu::name`] and [`AdapterFacts::name`] show an adapter.
fn adapter_name(info: &wgpu::AdapterInfo) -> String {
    format!("{} ({:?})", info.name, info.backend)
}

/// "driver driver_info", as [`AdapterFacts::driver`] shows it.
fn driver_name(info: &wgpu::AdapterInfo) -> String {
    format!("{} {}", info.driver, info.driver_info)
        .trim()
        .to_string()
}

/// Test hook: AUTO treats a software adapter as a hardware one (so that the measuring path
/// runs on lavapipe).
pub(crate) static SOFTWARE_AS_HARDWARE: AtomicBool = AtomicBool::new(false);

/// The default adapter with compute shaders, asked of the adapter alone (tens of
/// milliseconds) instead of opening the device and compiling every pipeline (about half a
/// second on lavapipe); `None` when there is none. Answered once per process.
pub(crate) fn adapter_facts() -> Option<AdapterFacts> {
    static PROBE: OnceLock<Option<AdapterFacts>> = OnceLock::new();
    let facts = PROBE.get_or_init(|| {
        if let State::Ready(g) = &*lock(&STATE) {
            return Some(AdapterFacts {
                name: g.name.clone(),
                driver: g.driver.clone(),
                software: g.software,
            });
        }
        catch_unwind(AssertUnwindSafe(|| {
            default_adapter().ok().and_then(|a| {
                let info = a.get_info();
                a.get_downlevel_capabilities()
                    .flags
                    .contains(wgpu::DownlevelFlags::COMPUTE_SHADERS)
                    .then(|| AdapterFacts {
                        name: adapter_name(&info),
                        driver: driver_name(&info),
                        software: info.device_type == wgpu::DeviceType::Cpu,
                    })
            })
        }))
        .unwrap_or(None)
    });
    facts.clone().map(|mut f| {
        if SOFTWARE_AS_HARDWARE.load(Ordering::SeqCst) {
            f.software = false;
        }
        f
    })
}

/// Whether the default adapter is a hardware one with compute shaders (see [`adapter_facts`]).
pub(crate) fn hardware_adapter() -> bool {
    adapter_facts().is_some_and(|f| !f.software)
}

fn create() -> Result<Gpu, GpuError> {
    let adapter = default_adapter()?;
    let info = adapter.get_info();
    let down = adapter.get_downlevel_capabilities();
    if !down.flags.contains(wgpu::DownlevelFlags::COMPUTE_SHADERS) {
        return Err(GpuError::NoAdapter(format!(
            "adapter {} has no compute shaders",
            info.name
        )));
    }
    let limits = adapter.limits();
    let (device, queue) = block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("island_gpu"),
        required_features: wgpu::Features::empty(),
        required_limits: limits.clone(),
        experimental_features: wgpu::ExperimentalFeatures::disabled(),
        memory_hints: wgpu::MemoryHints::Performance,
        trace: wgpu::Trace::Off,
    }))
    .map_err(|e| GpuError::NoAdapter(format!("cannot open {}: {e}", info.name)))?;

    let lost = Arc::new(AtomicBool::new(false));
    let uncaptured = Arc::new(Mutex::new(Vec::new()));
    {
        let l = lost.clone();
        device.set_device_lost_callback(move |_, _| l.store(true, Ordering::SeqCst));
        let u = uncaptured.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            lock(&u).push(one_line(&e.to_string()))
        }));
    }

    let scope = Scopes::push(&device);
    let built = passes::Builder::new(&device).and_then(|b| Pipes::new(&b));
    let popped = scope.pop();
    let pipes = match (built, popped) {
        (Ok(p), Ok(())) => p,
        (Err(e), _) | (_, Err(e)) => {
            return Err(GpuError::Wgpu(format!(
                "building the compute pipelines on {}: {e}",
                info.name
            )))
        }
    };
    let need = pipes.max_storage() as u32;
    if limits.max_storage_buffers_per_shader_stage < need {
        return Err(GpuError::NoAdapter(format!(
            "adapter {} allows only {} storage buffers per stage, the passes need {need}",
            info.name, limits.max_storage_buffers_per_shader_stage
        )));
    }
    Ok(Gpu {
        device,
        queue,
        name: adapter_name(&info),
        driver: driver_name(&info),
        software: info.device_type == wgpu::DeviceType::Cpu,
        pipes,
        limits,
        lost,
        uncaptured,
        cache: Mutex::new(None),
    })
}

/// Error scopes catching validation, out-of-memory and internal errors of this thread.
pub(crate) struct Scopes {
    guards: Vec<wgpu::ErrorScopeGuard>,
}

impl Scopes {
    pub fn push(device: &wgpu::Device) -> Scopes {
        Scopes {
            guards: vec![
                device.push_error_scope(wgpu::ErrorFilter::Internal),
                device.push_error_scope(wgpu::ErrorFilter::OutOfMemory),
                device.push_error_scope(wgpu::ErrorFilter::Validation),
            ],
        }
    }
    /// Pop all scopes (innermost first); the first error found, if any.
    pub fn pop(mut self) -> Result<(), String> {
        let mut first = None;
        while let Some(g) = self.guards.pop() {
            if let Some(e) = block_on(g.pop()) {
                first.get_or_insert(one_line(&e.to_string()));
            }
        }
        match first {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Gpu {
    /// Run `f` with every wgpu error it causes turned into a [`GpuError`]; panics inside wgpu
    /// become errors too, and a lost device is reported as such.
    pub fn guarded<T>(&self, f: impl FnOnce() -> Result<T, GpuError>) -> Result<T, GpuError> {
        let scopes = Scopes::push(&self.device);
        let r = catch_unwind(AssertUnwindSafe(f));
        let popped = catch_unwind(AssertUnwindSafe(|| scopes.pop()));
        if self.lost.load(Ordering::SeqCst) {
            return Err(GpuError::DeviceLost(format!("{} was lost", self.name)));
        }
        let r = match r {
            Ok(r) => r,
            Err(p) => {
                forget(self);
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "unknown panic".into());
                return Err(GpuError::Wgpu(format!("wgpu panicked: {msg}")));
            }
        };
        match popped {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(GpuError::Wgpu(e)),
            Err(_) => {
                return Err(GpuError::Wgpu(
                    "wgpu panicked while popping error scopes".into(),
                ))
            }
        }
        if let Some(e) = lock(&self.uncaptured).drain(..).next() {
            return Err(GpuError::Wgpu(e));
        }
        r
    }

    pub fn storage(&self, label: &str, size: u64) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: size.max(16).next_multiple_of(4),
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    pub fn storage_init(&self, label: &str, data: &[u8]) -> wgpu::Buffer {
        let b = self.storage(label, data.len() as u64);
        if !data.is_empty() {
            self.upload(&b, 0, data);
        }
        b
    }

    /// `queue.write_buffer`, counted in [`counters`].
    pub fn upload(&self, b: &wgpu::Buffer, offset: u64, data: &[u8]) {
        count(|c| c.bytes_uploaded += data.len() as u64);
        self.queue.write_buffer(b, offset, data);
    }

    pub fn encoder(&self) -> wgpu::CommandEncoder {
        self.device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("island"),
            })
    }

    /// Submit without waiting: the device runs it while the host goes on (the next read-back
    /// or wait covers it; queue writes made after it take effect after it).
    pub fn submit(&self, enc: wgpu::CommandEncoder) {
        count(|c| c.submissions += 1);
        self.queue.submit([enc.finish()]);
    }

    /// Submit and wait for completion.
    pub fn submit_wait(&self, enc: wgpu::CommandEncoder) -> Result<(), GpuError> {
        count(|c| {
            c.submissions += 1;
            c.host_waits += 1;
        });
        let idx = self.queue.submit([enc.finish()]);
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(idx),
                timeout: Some(POLL_TIMEOUT),
            })
            .map_err(|e| match e {
                wgpu::PollError::Timeout => GpuError::Wgpu(format!(
                    "{} did not finish within {POLL_TIMEOUT:?}",
                    self.name
                )),
                e => GpuError::DeviceLost(format!("waiting for the GPU: {e}")),
            })?;
        if self.lost.load(Ordering::SeqCst) {
            return Err(GpuError::DeviceLost(format!("{} was lost", self.name)));
        }
        Ok(())
    }

    /// Copy `(buffer, bytes)` regions into one staging buffer, map it once, return the bytes.
    pub fn read_back(
        &self,
        parts: &[(&wgpu::Buffer, u64)],
        staging: Option<&wgpu::Buffer>,
    ) -> Result<Vec<Vec<u8>>, GpuError> {
        self.read_back_after(self.encoder(), parts, staging)
    }

    /// [`Gpu::read_back`] with the copies appended to `enc` (what was recorded before them):
    /// one submission and one wait for both.
    pub fn read_back_after(
        &self,
        mut enc: wgpu::CommandEncoder,
        parts: &[(&wgpu::Buffer, u64)],
        staging: Option<&wgpu::Buffer>,
    ) -> Result<Vec<Vec<u8>>, GpuError> {
        let total: u64 = parts.iter().map(|p| p.1.next_multiple_of(4)).sum();
        let own;
        let staging = match staging {
            Some(s) if s.size() >= total => s,
            _ => {
                own = self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("staging"),
                    size: total.max(4),
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                &own
            }
        };
        let mut off = 0;
        for &(b, size) in parts {
            let size4 = size.next_multiple_of(4);
            enc.copy_buffer_to_buffer(b, 0, staging, off, size4);
            off += size4;
        }
        // One round trip: the copies are submitted, the mapping requested, then one wait (the
        // mapping completes after the submission it follows).
        count(|c| {
            c.submissions += 1;
            c.host_waits += 1;
            c.bytes_read_back += total;
        });
        let idx = self.queue.submit([enc.finish()]);
        let done: Arc<Mutex<Option<Result<(), String>>>> = Arc::new(Mutex::new(None));
        let d2 = done.clone();
        staging.map_async(wgpu::MapMode::Read, 0..total, move |r| {
            *lock(&d2) = Some(r.map_err(|e| e.to_string()));
        });
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(idx),
                timeout: Some(POLL_TIMEOUT),
            })
            .map_err(|e| match e {
                wgpu::PollError::Timeout => GpuError::Wgpu(format!(
                    "{} did not finish within {POLL_TIMEOUT:?}",
                    self.name
                )),
                e => GpuError::DeviceLost(format!("waiting for the readback: {e}")),
            })?;
        if self.lost.load(Ordering::SeqCst) {
            return Err(GpuError::DeviceLost(format!("{} was lost", self.name)));
        }
        // Another thread's poll may have taken the completion and be about to run our callback:
        // keep polling until it has run (or the timeout passes).
        let start = std::time::Instant::now();
        while lock(&done).is_none() && start.elapsed() < POLL_TIMEOUT {
            let _ = self.device.poll(wgpu::PollType::Poll);
            std::thread::yield_now();
        }
        let r = lock(&done).take();
        match r {
            Some(Ok(())) => {}
            Some(Err(e)) => {
                return Err(GpuError::Wgpu(format!("mapping the readback buffer: {e}")))
            }
            None => return Err(GpuError::Wgpu("readback buffer never mapped".into())),
        }
        let out = {
            let view = staging
                .get_mapped_range(0..total)
                .map_err(|e| GpuError::Wgpu(format!("reading the readback buffer: {e}")))?;
            let mut out = Vec::with_capacity(parts.len());
            let mut off = 0usize;
            for &(_, size) in parts {
                out.push(view[off..off + size as usize].to_vec());
                off += size.next_multiple_of(4) as usize;
            }
            out
        };
        staging.unmap();
        Ok(out)
    }
}

/// One recording session: the grid uniform and the per-dispatch uniform slots.
pub(crate) struct Frame<'a> {
    gpu: &'a Gpu,
    grid: wgpu::Buffer,
    slots: wgpu::Buffer,
    next: u64,
}

impl<'a> Frame<'a> {
    pub fn new(gpu: &'a Gpu, grid: &Grid) -> Frame<'a> {
        let g = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("grid"),
            size: std::mem::size_of::<Grid>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        gpu.upload(&g, 0, bytemuck::bytes_of(grid));
        let slots = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("pass uniforms"),
            size: SLOT_BYTES * DISPATCH_SLOTS,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        Frame {
            gpu,
            grid: g,
            slots,
            next: 0,
        }
    }
}

impl Frame<'_> {
    /// Per-dispatch uniform slots used since the last [`Frame::reset`].
    pub fn used(&self) -> u64 {
        self.next
    }

    /// Reuse the slots: only once everything recorded with them was submitted and completed.
    pub fn reset(&mut self) {
        self.next = 0;
    }
}

/// How a pass uses a storage buffer (checked against the shader).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Access {
    Read,
    Write,
    ReadWrite,
}

/// One dispatch being described: the pipeline, its uniform `P` and its storage buffers by
/// WGSL name. [`Pass::run`] checks them against the entry point's bindings (every binding
/// given once, with the access the shader makes of it) and records the dispatch.
#[must_use = "a pass does nothing until run"]
pub(crate) struct Pass<'r, 'b> {
    fr: &'r mut Frame<'b>,
    enc: &'r mut wgpu::CommandEncoder,
    /// The pipeline, or the entry point that has none.
    pipe: Result<&'b Pipe, Entry>,
    params: Option<(&'static str, Vec<u8>)>,
    bufs: Vec<(&'static str, Access, &'r wgpu::Buffer)>,
}

impl<'r, 'b> Pass<'r, 'b> {
    pub fn new(
        fr: &'r mut Frame<'b>,
        enc: &'r mut wgpu::CommandEncoder,
        pipe: Result<&'b Pipe, Entry>,
    ) -> Self {
        Pass {
            fr,
            enc,
            pipe,
            params: None,
            bufs: Vec::new(),
        }
    }

    /// The pass's uniform `P`.
    pub fn params<U: Uniform>(mut self, u: &U) -> Self {
        self.params = Some((U::NAME, bytemuck::bytes_of(u).to_vec()));
        self
    }

    /// A storage buffer the pass only reads.
    pub fn read(mut self, name: &'static str, b: &'r wgpu::Buffer) -> Self {
        self.bufs.push((name, Access::Read, b));
        self
    }

    /// A storage buffer the pass only writes.
    pub fn write(mut self, name: &'static str, b: &'r wgpu::Buffer) -> Self {
        self.bufs.push((name, Access::Write, b));
        self
    }

    /// A storage buffer the pass reads and writes (in place, or atomics).
    pub fn read_write(mut self, name: &'static str, b: &'r wgpu::Buffer) -> Self {
        self.bufs.push((name, Access::ReadWrite, b));
        self
    }

    /// Record the dispatch over `groups` workgroups.
    pub fn run(self, groups: (u32, u32, u32)) -> Result<(), GpuError> {
        let pipe = self.pipe.map_err(|e| {
            GpuError::Wgpu(format!(
                "no compute entry point {}::{} (is `shaders/{}.wgsl` registered in `shaders.rs`, \
                 with that entry point?)",
                e.module, e.entry, e.module
            ))
        })?;
        let mismatch = |what: String| GpuError::Wgpu(format!("bindings of {}: {what}", pipe.label));
        let el = &pipe.entry;
        let gpu = self.fr.gpu;
        let mut entries = Vec::new();
        if el.grid {
            entries.push(wgpu::BindGroupEntry {
                binding: passes::GRID_BINDING,
                resource: self.fr.grid.as_entire_binding(),
            });
        }
        let mut offsets = Vec::new();
        match (&el.params, &self.params) {
            (None, None) => {}
            (Some(want), Some((name, bytes))) => {
                if want.ty != *name || want.size != bytes.len() as u64 {
                    return Err(mismatch(format!("P is {}, given {name}", want.ty)));
                }
                if self.fr.next >= DISPATCH_SLOTS {
                    return Err(GpuError::Wgpu("too many dispatches in one frame".into()));
                }
                let off = self.fr.next * SLOT_BYTES;
                self.fr.next += 1;
                gpu.upload(&self.fr.slots, off, bytes);
                offsets.push(off as u32);
                entries.push(wgpu::BindGroupEntry {
                    binding: passes::PARAMS_BINDING,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: &self.fr.slots,
                        offset: 0,
                        size: NonZeroU64::new(want.size),
                    }),
                });
            }
            (Some(want), None) => return Err(mismatch(format!("P ({}) not given", want.ty))),
            (None, Some((name, _))) => {
                return Err(mismatch(format!("P ({name}) given but not used")))
            }
        }
        for s in &el.storage {
            let mut given = self.bufs.iter().filter(|b| b.0 == s.name);
            let Some(&(_, access, buf)) = given.next() else {
                return Err(mismatch(format!("{} not given", s.name)));
            };
            if given.next().is_some() {
                return Err(mismatch(format!("{} given twice", s.name)));
            }
            let want = match (s.reads, s.writes) {
                (true, false) => Access::Read,
                (false, true) => Access::Write,
                _ => Access::ReadWrite,
            };
            if access != want {
                return Err(mismatch(format!(
                    "{} given as {access:?}, the shader's use is {want:?}",
                    s.name
                )));
            }
            entries.push(wgpu::BindGroupEntry {
                binding: s.binding,
                resource: buf.as_entire_binding(),
            });
        }
        if let Some(b) = self
            .bufs
            .iter()
            .find(|b| !el.storage.iter().any(|s| s.name == b.0))
        {
            return Err(mismatch(format!("{} is not used by the entry point", b.0)));
        }
        let bg = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(&pipe.label),
            layout: &pipe.layout,
            entries: &entries,
        });
        let max = gpu.limits.max_compute_workgroups_per_dimension;
        if groups.0 > max || groups.1 > max || groups.2 > max {
            return Err(GpuError::TooLarge(format!(
                "dispatch of {groups:?} workgroups exceeds {max}"
            )));
        }
        let mut pass = self.enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(&pipe.label),
            timestamp_writes: None,
        });
        pass.set_pipeline(&pipe.pipeline);
        pass.set_bind_group(0, &bg, &offsets);
        pass.dispatch_workgroups(groups.0, groups.1, groups.2);
        count(|c| c.dispatches += 1);
        Ok(())
    }
}

/// Workgroups of a byte-packing pass over `samples` samples (one invocation per u32 word of
/// four bytes; `packed_word` in `common.wgsl`): a square of 16×16 groups, so that no
/// dimension exceeds the adapter's limit at 8193².
pub(crate) fn packed_word_groups(samples: usize) -> (u32, u32, u32) {
    let words = samples.div_ceil(4) as f64;
    let g = (words.sqrt() / crate::uniforms::GRID_TILE as f64)
        .ceil()
        .max(1.0) as u32;
    (g, g, 1)
}

/// Workgroups covering an `n × n` grid with 16×16 groups.
pub(crate) fn grid2(n: usize) -> (u32, u32, u32) {
    let g = (n as u32).div_ceil(crate::uniforms::GRID_TILE);
    (g, g, 1)
}
