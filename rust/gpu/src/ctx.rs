//! The one GPU context of the process: device, queue, pipelines, error capture.

use crate::GpuError;
use bytemuck::{Pod, Zeroable};
use std::borrow::Cow;
use std::future::Future;
use std::num::NonZeroU64;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::task::{Context as TaskContext, Poll, Waker};

/// Every uniform value a pass may need (mirrors `Globals` in `shaders/common.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub(crate) struct Globals {
    pub n: u32,
    pub seed_lo: u32,
    pub seed_hi: u32,
    pub biome_count: u32,
    pub lut_len: u32,
    pub mountain_count: u32,
    pub river_points: u32,
    pub ridge: u32,
    pub biome_grid: u32,
    pub blur_passes: u32,
    pub _pad0: u32,
    pub _pad1: u32,
    pub world_size: f32,
    pub spacing: f32,
    pub max_height: f32,
    pub detail_strength: f32,
    pub detail_cap: f32,
    pub biome_distortion: f32,
    pub boundary_noise: f32,
    pub blend_width: f32,
    pub mask_radius: f32,
    pub mask_amp: f32,
    pub mask_noise_scale: f32,
    pub mask_margin: f32,
    pub coast_width: f32,
    pub beach_height: f32,
    pub shelf_width: f32,
    pub sea_depth: f32,
    pub fine_amplitude: f32,
    pub river_width: f32,
    pub river_bank: f32,
    pub river_depth: f32,
    pub river_meander: f32,
    pub river_meander_scale: f32,
    pub sand_height: f32,
    pub snow_height: f32,
    pub splat_jitter: f32,
    pub rock_slope: f32,
    pub biome_cell: f32,
    pub _padf: f32,
    pub brush_layer: u32,
    pub brush_mode: u32,
    pub brush_strength: f32,
    pub mask_min_height: f32,
    pub mask_max_height: f32,
    pub mask_height_fade: f32,
    pub mask_min_slope: f32,
    pub mask_max_slope: f32,
    pub mask_slope_fade: f32,
    pub _padb0: f32,
    pub _padb1: f32,
    pub _padb2: f32,
}

impl Globals {
    /// Grid size, spacing (computed exactly as the CPU does) and seed.
    pub fn grid(n: usize, world_size: f32, seed: u64) -> Globals {
        Globals {
            n: n as u32,
            seed_lo: seed as u32,
            seed_hi: (seed >> 32) as u32,
            world_size,
            spacing: world_size / (n - 1) as f32,
            ..Default::default()
        }
    }
}

/// Per-dispatch values (mirrors `Dispatch` in `shaders/common.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub(crate) struct Dispatch {
    pub step: f32,
    pub lacunarity: f32,
    pub persistence: f32,
    pub amp: f32,
    pub octaves: u32,
    pub tag: u32,
    pub level: u32,
    pub which: u32,
}

/// Longest wait for one submission before the GPU is given up on (the CPU then finishes).
const POLL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// Storage bindings 2..=9 of the one bind group layout.
pub(crate) const STORAGE_SLOTS: usize = 8;
/// Dispatch slots in the per-dispatch uniform buffer of one [`Frame`].
const DISPATCH_SLOTS: u64 = 256;

const COMMON: &str = include_str!("../../../shaders/common.wgsl");

/// Shader sources, embedded in the binary.
const SOURCES: &[(&str, &str)] = &[
    (
        "hash_probe",
        include_str!("../../../shaders/hash_probe.wgsl"),
    ),
    ("fbm_noise", include_str!("../../../shaders/fbm_noise.wgsl")),
    (
        "value_noise",
        include_str!("../../../shaders/value_noise.wgsl"),
    ),
    (
        "diamond_square",
        include_str!("../../../shaders/diamond_square.wgsl"),
    ),
    (
        "gaussian_islands",
        include_str!("../../../shaders/gaussian_islands.wgsl"),
    ),
    (
        "normalize_01",
        include_str!("../../../shaders/normalize_01.wgsl"),
    ),
    (
        "apply_detail",
        include_str!("../../../shaders/apply_detail.wgsl"),
    ),
    (
        "biome_blend",
        include_str!("../../../shaders/biome_blend.wgsl"),
    ),
    (
        "apply_shaping_curve",
        include_str!("../../../shaders/apply_shaping_curve.wgsl"),
    ),
    (
        "island_mask",
        include_str!("../../../shaders/island_mask.wgsl"),
    ),
    (
        "distance_to_coast",
        include_str!("../../../shaders/distance_to_coast.wgsl"),
    ),
    (
        "coastal_falloff",
        include_str!("../../../shaders/coastal_falloff.wgsl"),
    ),
    (
        "carve_river",
        include_str!("../../../shaders/carve_river.wgsl"),
    ),
    (
        "compute_normals",
        include_str!("../../../shaders/compute_normals.wgsl"),
    ),
    (
        "auto_splat",
        include_str!("../../../shaders/auto_splat.wgsl"),
    ),
    (
        "fill_by_rule",
        include_str!("../../../shaders/fill_by_rule.wgsl"),
    ),
];

/// Every compute pipeline, built once per context.
pub(crate) struct Pipes {
    pub hash_probe: wgpu::ComputePipeline,
    pub fbm: wgpu::ComputePipeline,
    pub value: wgpu::ComputePipeline,
    pub ds_corners: wgpu::ComputePipeline,
    pub ds_diamond: wgpu::ComputePipeline,
    pub ds_square: wgpu::ComputePipeline,
    pub gaussian: wgpu::ComputePipeline,
    pub norm_partial: wgpu::ComputePipeline,
    pub norm_final: wgpu::ComputePipeline,
    pub norm_apply: wgpu::ComputePipeline,
    pub detail: wgpu::ComputePipeline,
    pub biome: wgpu::ComputePipeline,
    pub shaping: wgpu::ComputePipeline,
    pub mask: wgpu::ComputePipeline,
    pub edt_columns: wgpu::ComputePipeline,
    pub edt_rows: wgpu::ComputePipeline,
    pub coast: wgpu::ComputePipeline,
    pub river_rows: wgpu::ComputePipeline,
    pub river: wgpu::ComputePipeline,
    pub normals: wgpu::ComputePipeline,
    pub splat_weights: wgpu::ComputePipeline,
    pub splat_blur: wgpu::ComputePipeline,
    pub splat_quantize: wgpu::ComputePipeline,
    pub fill_by_rule: wgpu::ComputePipeline,
}

/// The process-wide GPU context.
pub(crate) struct Gpu {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub name: String,
    /// The adapter is a software rasteriser (lavapipe, WARP, SwiftShader): `Backend::Auto`
    /// prefers the rayon CPU path over it.
    pub software: bool,
    pub layout: wgpu::BindGroupLayout,
    pub pipes: Pipes,
    pub limits: wgpu::Limits,
    dummies: Vec<wgpu::Buffer>,
    d_align: u64,
    lost: Arc<AtomicBool>,
    uncaptured: Arc<Mutex<Vec<String>>>,
    /// Buffers of the last resolution generated, reused by the next run of that size.
    pub cache: Mutex<Option<crate::pipeline::Resources>>,
}

enum State {
    Untried,
    Failed(String),
    Ready(Arc<Gpu>),
}

static STATE: Mutex<State> = Mutex::new(State::Untried);

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

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

/// Whether the default adapter is a hardware one with compute shaders, asked of the adapter
/// alone (tens of milliseconds) instead of opening the device and compiling every pipeline
/// (about half a second on lavapipe). Answered once per process, so `Backend::Auto` never
/// switches backends between calls.
pub(crate) fn hardware_adapter() -> bool {
    static PROBE: OnceLock<bool> = OnceLock::new();
    *PROBE.get_or_init(|| {
        if let State::Ready(g) = &*lock(&STATE) {
            return !g.software;
        }
        catch_unwind(AssertUnwindSafe(|| {
            default_adapter().is_ok_and(|a| {
                a.get_info().device_type != wgpu::DeviceType::Cpu
                    && a.get_downlevel_capabilities()
                        .flags
                        .contains(wgpu::DownlevelFlags::COMPUTE_SHADERS)
            })
        }))
        .unwrap_or(false)
    })
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
    if limits.max_storage_buffers_per_shader_stage < STORAGE_SLOTS as u32 {
        return Err(GpuError::NoAdapter(format!(
            "adapter {} allows only {} storage buffers per stage",
            info.name, limits.max_storage_buffers_per_shader_stage
        )));
    }
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
    let mut entries = vec![
        wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        },
        wgpu::BindGroupLayoutEntry {
            binding: 1,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: true,
                min_binding_size: NonZeroU64::new(std::mem::size_of::<Dispatch>() as u64),
            },
            count: None,
        },
    ];
    for k in 0..STORAGE_SLOTS as u32 {
        entries.push(wgpu::BindGroupLayoutEntry {
            binding: 2 + k,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: false },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        });
    }
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("island"),
        entries: &entries,
    });
    let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("island"),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let modules: Vec<(&str, wgpu::ShaderModule)> = SOURCES
        .iter()
        .map(|&(name, src)| {
            let m = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(name),
                source: wgpu::ShaderSource::Wgsl(Cow::Owned(format!("{COMMON}\n{src}"))),
            });
            (name, m)
        })
        .collect();
    let pipe = |module: &str, entry: &str| {
        let m = &modules
            .iter()
            .find(|(n, _)| *n == module)
            .expect("known shader")
            .1;
        device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(entry),
            layout: Some(&pl),
            module: m,
            entry_point: Some(entry),
            compilation_options: Default::default(),
            cache: None,
        })
    };
    let pipes = Pipes {
        hash_probe: pipe("hash_probe", "main"),
        fbm: pipe("fbm_noise", "main"),
        value: pipe("value_noise", "main"),
        ds_corners: pipe("diamond_square", "corners"),
        ds_diamond: pipe("diamond_square", "diamond_pass"),
        ds_square: pipe("diamond_square", "square_pass"),
        gaussian: pipe("gaussian_islands", "main"),
        norm_partial: pipe("normalize_01", "reduce_partial"),
        norm_final: pipe("normalize_01", "reduce_final"),
        norm_apply: pipe("normalize_01", "apply"),
        detail: pipe("apply_detail", "main"),
        biome: pipe("biome_blend", "main"),
        shaping: pipe("apply_shaping_curve", "main"),
        mask: pipe("island_mask", "main"),
        edt_columns: pipe("distance_to_coast", "columns"),
        edt_rows: pipe("distance_to_coast", "rows"),
        coast: pipe("coastal_falloff", "main"),
        river_rows: pipe("carve_river", "rows"),
        river: pipe("carve_river", "main"),
        normals: pipe("compute_normals", "main"),
        splat_weights: pipe("auto_splat", "weights"),
        splat_blur: pipe("auto_splat", "blur"),
        splat_quantize: pipe("auto_splat", "quantize"),
        fill_by_rule: pipe("fill_by_rule", "main"),
    };
    let dummies = (0..STORAGE_SLOTS)
        .map(|_| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("dummy"),
                size: 16,
                usage: wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            })
        })
        .collect();
    scope.pop().map_err(|e| {
        GpuError::Wgpu(format!(
            "building the compute pipelines on {}: {e}",
            info.name
        ))
    })?;
    let d_align = (limits.min_uniform_buffer_offset_alignment as u64)
        .max(std::mem::size_of::<Dispatch>() as u64);
    let backend = format!("{:?}", info.backend);
    Ok(Gpu {
        device,
        queue,
        name: format!("{} ({backend})", info.name),
        software: info.device_type == wgpu::DeviceType::Cpu,
        layout,
        pipes,
        limits,
        dummies,
        d_align,
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
            self.queue.write_buffer(&b, 0, data);
        }
        b
    }

    pub fn encoder(&self) -> wgpu::CommandEncoder {
        self.device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("island"),
            })
    }

    /// Submit and wait for completion.
    pub fn submit_wait(&self, enc: wgpu::CommandEncoder) -> Result<(), GpuError> {
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
        let mut enc = self.encoder();
        let mut off = 0;
        for &(b, size) in parts {
            let size4 = size.next_multiple_of(4);
            enc.copy_buffer_to_buffer(b, 0, staging, off, size4);
            off += size4;
        }
        self.submit_wait(enc)?;
        let done: Arc<Mutex<Option<Result<(), String>>>> = Arc::new(Mutex::new(None));
        let d2 = done.clone();
        staging.map_async(wgpu::MapMode::Read, 0..total, move |r| {
            *lock(&d2) = Some(r.map_err(|e| e.to_string()));
        });
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: None,
                timeout: Some(POLL_TIMEOUT),
            })
            .map_err(|e| GpuError::DeviceLost(format!("waiting for the readback: {e}")))?;
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

/// One recording session: the global uniforms and the per-dispatch uniform slots.
pub(crate) struct Frame<'a> {
    gpu: &'a Gpu,
    g: wgpu::Buffer,
    d: wgpu::Buffer,
    next: u64,
}

impl<'a> Frame<'a> {
    pub fn new(gpu: &'a Gpu, globals: &Globals) -> Frame<'a> {
        let g = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("globals"),
            size: std::mem::size_of::<Globals>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        gpu.queue.write_buffer(&g, 0, bytemuck::bytes_of(globals));
        let d = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("dispatch"),
            size: gpu.d_align * DISPATCH_SLOTS,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        Frame { gpu, g, d, next: 0 }
    }

    /// Record one dispatch of `pipe` with storage slots `bufs` (binding 2 + index; `None` binds
    /// a private dummy) over `groups` workgroups.
    pub fn dispatch(
        &mut self,
        enc: &mut wgpu::CommandEncoder,
        pipe: &wgpu::ComputePipeline,
        d: Dispatch,
        bufs: &[Option<&wgpu::Buffer>],
        groups: (u32, u32, u32),
    ) -> Result<(), GpuError> {
        if self.next >= DISPATCH_SLOTS {
            return Err(GpuError::Wgpu("too many dispatches in one frame".into()));
        }
        let off = self.next * self.gpu.d_align;
        self.next += 1;
        self.gpu
            .queue
            .write_buffer(&self.d, off, bytemuck::bytes_of(&d));
        let mut entries = vec![
            wgpu::BindGroupEntry {
                binding: 0,
                resource: self.g.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: &self.d,
                    offset: 0,
                    size: NonZeroU64::new(std::mem::size_of::<Dispatch>() as u64),
                }),
            },
        ];
        for k in 0..STORAGE_SLOTS {
            let b = bufs
                .get(k)
                .copied()
                .flatten()
                .unwrap_or(&self.gpu.dummies[k]);
            entries.push(wgpu::BindGroupEntry {
                binding: 2 + k as u32,
                resource: b.as_entire_binding(),
            });
        }
        let bg = self
            .gpu
            .device
            .create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &self.gpu.layout,
                entries: &entries,
            });
        let max = self.gpu.limits.max_compute_workgroups_per_dimension;
        if groups.0 > max || groups.1 > max || groups.2 > max {
            return Err(GpuError::TooLarge(format!(
                "dispatch of {groups:?} workgroups exceeds {max}"
            )));
        }
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: None,
            timestamp_writes: None,
        });
        pass.set_pipeline(pipe);
        pass.set_bind_group(0, &bg, &[off as u32]);
        pass.dispatch_workgroups(groups.0, groups.1, groups.2);
        Ok(())
    }
}

/// Workgroups covering an `n × n` grid with 16×16 groups.
pub(crate) fn grid2(n: usize) -> (u32, u32, u32) {
    let g = (n as u32).div_ceil(16);
    (g, g, 1)
}
