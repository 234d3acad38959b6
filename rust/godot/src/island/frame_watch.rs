//! [`FrameWatch`]: how long the node's `_process` takes per frame while a background generation
//! is being installed (chunk meshes, colliders, water, splat maps, scatter MultiMeshes), in wall
//! time and in CPU time of the main thread. Reported in `get_last_stats()` as
//! `node_frame_ms_max`, `node_frame_cpu_ms_max` and `node_frame_phase` (what that frame did),
//! and read by `cargo xtask bench` against the per-frame budget.

use std::time::Instant;

/// CPU time of the calling thread (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)` on 64-bit Linux), to
/// tell time spent in the update from time the OS gave to other processes while it ran.
#[derive(Default)]
pub struct CpuClock;

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
    pub fn now_us(&mut self) -> Option<f64> {
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
    /// Start of the previous frame's `_process`, for the frame intervals.
    prev_begin: Option<Instant>,
    /// The last [`RECENT_FRAMES`] wall milliseconds between two `_process` calls (the whole
    /// frame: rendering and everything else), newest at `recent_at`; 0 until seen.
    recent: [f64; RECENT_FRAMES],
    recent_at: usize,
    /// Wall milliseconds of the last finished `_process`, busy or not (an `IslandWorld` adds its
    /// islands' frames to its own).
    pub last_ms: f64,
    /// Main-thread CPU milliseconds of the last finished `_process` (0 where the thread clock
    /// is unknown).
    pub last_cpu_ms: f64,
    /// What the last finished `_process` did (see [`Self::end`]).
    pub last_phase: &'static str,
}

/// Share of a slow frame the build loops may use: when the editor's frames are already slow
/// (longer than [`SLOW_FRAME_MS`]: a software renderer, a frame of seconds), work handed to the
/// main thread gets this share of the frame time instead of the fixed budget, so it still
/// finishes in a few frames.
pub const SLOW_FRAME_SHARE: f64 = 0.25;
/// Frame intervals [`FrameWatch::steady_interval_ms`] looks back over.
pub const RECENT_FRAMES: usize = 4;
/// Frames up to this long (milliseconds; 20 fps) keep the fixed budget exactly: an editor that
/// renders at 20 fps or more gets no more than `build_budget_ms` from the node in any frame.
pub const SLOW_FRAME_MS: f64 = 50.0;
/// The most milliseconds per frame [`SLOW_FRAME_SHARE`] may grant (the editor stays responsive).
pub const SLOW_FRAME_CAP_MS: f64 = 250.0;

/// Milliseconds the build loops may spend this frame: `budget_ms`, or, when the frames are
/// longer than [`SLOW_FRAME_MS`] (the node passes [`FrameWatch::steady_interval_ms`] as
/// `frame_interval_ms`), [`SLOW_FRAME_SHARE`] of that length when that is more (at most
/// [`SLOW_FRAME_CAP_MS`]). Non-finite budgets (NaN: one job per frame; infinity:
/// everything now) are kept as they are.
pub fn adaptive_budget_ms(budget_ms: f64, frame_interval_ms: f64) -> f64 {
    if !budget_ms.is_finite()
        || !frame_interval_ms.is_finite()
        || frame_interval_ms <= SLOW_FRAME_MS
    {
        return budget_ms;
    }
    budget_ms.max((SLOW_FRAME_SHARE * frame_interval_ms).min(SLOW_FRAME_CAP_MS))
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
        let now = Instant::now();
        if let Some(p) = self.prev_begin {
            self.note_interval((now - p).as_secs_f64() * 1e3);
        }
        self.prev_begin = Some(now);
        self.start = Some((now, self.clock.now_us()));
    }

    /// Record the interval (ms) between the last two frames.
    fn note_interval(&mut self, ms: f64) {
        self.recent_at = (self.recent_at + 1) % RECENT_FRAMES;
        self.recent[self.recent_at] = ms;
    }

    /// The shortest of the last [`RECENT_FRAMES`] frame intervals (ms): slow only when every
    /// recent frame was, so one long editor frame (a hitch) does not widen the budget.
    pub fn steady_interval_ms(&self) -> f64 {
        self.recent.iter().copied().fold(f64::INFINITY, f64::min)
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
        (self.last_ms, self.last_cpu_ms) = now.unwrap_or_default();
        self.last_phase = if busy { phase } else { "idle" };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_follows_slow_frames_only() {
        // 60 fps, 30 fps, 20 fps: exactly the fixed budget.
        assert_eq!(adaptive_budget_ms(4.0, 16.7), 4.0);
        assert_eq!(adaptive_budget_ms(4.0, 33.4), 4.0);
        assert_eq!(adaptive_budget_ms(4.0, SLOW_FRAME_MS), 4.0);
        assert_eq!(adaptive_budget_ms(4.0, 10.0), 4.0);
        // Lavapipe's 60 ms editor frames: a quarter of the frame.
        assert_eq!(adaptive_budget_ms(4.0, 60.0), 15.0);
        // A software renderer's 2-second frame: a quarter of it, capped.
        assert_eq!(adaptive_budget_ms(4.0, 400.0), 100.0);
        assert_eq!(adaptive_budget_ms(4.0, 2000.0), SLOW_FRAME_CAP_MS);
        // A larger user budget wins; NaN and infinity keep their meaning.
        assert_eq!(adaptive_budget_ms(300.0, 2000.0), 300.0);
        assert!(adaptive_budget_ms(f64::NAN, 2000.0).is_nan());
        assert_eq!(adaptive_budget_ms(f64::INFINITY, 10.0), f64::INFINITY);
    }

    #[test]
    fn one_long_frame_does_not_make_the_frames_slow() {
        let mut w = FrameWatch::default();
        assert_eq!(
            w.steady_interval_ms(),
            0.0,
            "nothing seen yet: fixed budget"
        );
        for ms in [30.0, 28.0, 31.0, 29.0] {
            w.note_interval(ms);
        }
        w.note_interval(57.0);
        assert_eq!(w.steady_interval_ms(), 28.0);
        assert_eq!(adaptive_budget_ms(4.0, w.steady_interval_ms()), 4.0);
        // A software renderer's steady 60-70 ms frames.
        for ms in [66.0, 61.0, 70.0, 64.0] {
            w.note_interval(ms);
        }
        assert_eq!(w.steady_interval_ms(), 61.0);
        assert_eq!(adaptive_budget_ms(4.0, w.steady_interval_ms()), 15.25);
    }
}

/// Time of one budgeted job for its [`JobCost`]: the main thread's CPU time where the thread
/// clock is known, else wall time. The CPU time is the job's own work: a job during which the
/// OS ran another thread on the core (a software renderer's threads, the worker) does not look
/// dearer than it is, which would keep the next frames to one job each while the estimate
/// decays.
pub struct JobTimer {
    wall: Instant,
    cpu_us: Option<f64>,
}

impl JobTimer {
    /// Start timing a job.
    pub fn start() -> JobTimer {
        JobTimer {
            wall: Instant::now(),
            cpu_us: CpuClock.now_us(),
        }
    }

    /// Milliseconds of the job so far: CPU time, or wall time without a thread clock.
    pub fn ms(&self) -> f64 {
        match (self.cpu_us, CpuClock.now_us()) {
            (Some(a), Some(b)) => (b - a) / 1e3,
            _ => self.wall.elapsed().as_secs_f64() * 1e3,
        }
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
