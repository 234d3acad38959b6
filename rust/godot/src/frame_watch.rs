//! [`FrameWatch`]: how long the node's `_process` takes per frame while a background generation
//! is being installed (chunk meshes, colliders, water, splat maps, scatter MultiMeshes), in wall
//! time and in CPU time of the main thread. Reported in `get_last_stats()` as
//! `node_frame_ms_max`, `node_frame_cpu_ms_max` and `node_frame_phase` (what that frame did),
//! and read by `cargo xtask bench` against the per-frame budget.

use crate::lod::CpuClock;
use std::time::Instant;

/// Per-frame timing of the node's `_process` over one background generation.
#[derive(Default)]
pub struct FrameWatch {
    clock: CpuClock,
    start: Option<(Instant, Option<f64>)>,
    /// Most wall milliseconds one frame spent in the node since [`Self::reset`].
    pub max_ms: f64,
    /// Most CPU milliseconds of the main thread one frame spent in the node.
    pub max_cpu_ms: f64,
    /// What the frame of [`Self::max_ms`] was doing.
    pub max_phase: &'static str,
    /// Frames measured since [`Self::reset`].
    pub frames: u32,
}

impl FrameWatch {
    /// Start a new series (a background generation was started).
    pub fn reset(&mut self) {
        self.max_ms = 0.0;
        self.max_cpu_ms = 0.0;
        self.max_phase = "";
        self.frames = 0;
        self.start = None;
    }

    /// The frame's `_process` begins.
    pub fn begin(&mut self) {
        self.start = Some((Instant::now(), self.clock.now_us()));
    }

    /// Milliseconds since [`Self::begin`] of this frame (0 outside a frame).
    pub fn elapsed_ms(&self) -> f64 {
        self.start
            .map_or(0.0, |(t, _)| t.elapsed().as_secs_f64() * 1e3)
    }

    /// Wall and CPU milliseconds since [`Self::begin`] of this frame (`None` outside a frame;
    /// CPU 0 where the thread clock is unknown).
    fn current(&mut self) -> Option<(f64, f64)> {
        let (t, cpu0) = self.start?;
        let cpu = match (cpu0, self.clock.now_us()) {
            (Some(a), Some(b)) => (b - a) / 1e3,
            _ => 0.0,
        };
        Some((t.elapsed().as_secs_f64() * 1e3, cpu))
    }

    /// The maxima (wall ms, CPU ms) including the frame running now, for a report made before
    /// it ends (`generation_finished` is emitted inside the last frame).
    pub fn maxima_now(&mut self) -> (f64, f64) {
        let (ms, cpu) = self.current().unwrap_or_default();
        (self.max_ms.max(ms), self.max_cpu_ms.max(cpu))
    }

    /// The frame's `_process` ends; `busy` says whether it did generation work (only those
    /// frames count), `phase` what it did.
    pub fn end(&mut self, busy: bool, phase: &'static str) {
        let now = self.current();
        self.start = None;
        let (true, Some((ms, cpu))) = (busy, now) else {
            return;
        };
        self.frames += 1;
        if ms > self.max_ms {
            self.max_ms = ms;
            self.max_phase = phase;
        }
        self.max_cpu_ms = self.max_cpu_ms.max(cpu);
    }
}

/// Running estimate of one job's main-thread milliseconds (a chunk's nodes, a scatter chunk's
/// MultiMesh) for the budgeted build loops: a decaying maximum that rises at once and falls 5 %
/// per job, so the dearer jobs that come in runs (coast, water) keep the next frames careful.
#[derive(Clone, Copy, Debug, Default)]
pub struct JobCost(f64);

impl JobCost {
    /// The estimate, milliseconds.
    pub fn ms(self) -> f64 {
        self.0
    }

    /// Whether another job may start at `elapsed_ms` into a call of `budget_ms`: the estimate
    /// plus a margin of one more estimate for a job dearer still. (The loops always run the
    /// first job of a call.)
    pub fn fits(self, elapsed_ms: f64, budget_ms: f64) -> bool {
        elapsed_ms + 2.0 * self.0 <= budget_ms
    }

    /// A job took `ms`.
    pub fn record(&mut self, ms: f64) {
        self.0 = ms.max(0.95 * self.0);
    }
}

/// A `build_budget_ms`-like value as milliseconds for the build loops: NaN and negative give 0
/// (one job per call), infinity stays (everything now).
pub fn budget_ms(budget: f32) -> f64 {
    if budget.is_nan() {
        0.0
    } else {
        budget.max(0.0) as f64
    }
}
