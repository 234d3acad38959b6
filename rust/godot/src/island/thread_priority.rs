//! The generator's threads yield to the game's main thread.
//!
//! A generation keeps every core busy (rayon's pool, one thread per core). On a machine with
//! few cores the game's main thread then waits for the scheduler: on the 2-core VM of
//! docs/benchmarks.md, `IslandWorld` frames that did 0.5 ms of work on the main thread took
//! 4–5 ms of wall time while an island generated. In a game (not in the editor, where the
//! generation should win over the editor's own redraws) the pool's threads run at a lower
//! priority ([`GENERATOR_NICE`]), so the main thread gets a core as soon as it wants one.
//! The output does not change: the generation does the same work in the same order.

use std::sync::atomic::{AtomicBool, Ordering};

/// Niceness of the generator's pool threads in a game (Linux; 0 is the default, 19 the
/// lowest priority). 10 gives them about a tenth of a core's share next to a busy thread of
/// niceness 0.
pub const GENERATOR_NICE: i32 = 10;

/// Build rayon's global pool with its threads at [`GENERATOR_NICE`] (Linux; elsewhere the pool
/// is left to rayon's defaults). Call before anything uses rayon; false when the pool was
/// already built (then nothing changes).
pub fn lower_generator_priority() -> bool {
    LOWER.store(true, Ordering::Relaxed);
    rayon::ThreadPoolBuilder::new()
        .thread_name(|i| format!("island-gen-{i}"))
        .start_handler(|_| lower_this_thread())
        .build_global()
        .is_ok()
}

/// Whether [`lower_generator_priority`] was called: the generation jobs' own threads (which
/// run the sequential stages) are lowered too.
static LOWER: AtomicBool = AtomicBool::new(false);

/// Called first on a generation job's thread: lowers it like the pool's threads in a game.
pub fn on_generator_thread() {
    if LOWER.load(Ordering::Relaxed) {
        lower_this_thread();
    }
}

/// Lower the calling thread's priority (Linux: `setpriority` on a thread id changes that
/// thread only).
fn lower_this_thread() {
    #[cfg(target_os = "linux")]
    {
        extern "C" {
            fn setpriority(which: i32, who: u32, prio: i32) -> i32;
        }
        const PRIO_PROCESS: i32 = 0;
        // SAFETY: `setpriority` only changes the scheduling priority of the calling thread
        // (`who` 0 on Linux means the caller); a refusal returns -1 and changes nothing.
        unsafe {
            setpriority(PRIO_PROCESS, 0, GENERATOR_NICE);
        }
    }
}
