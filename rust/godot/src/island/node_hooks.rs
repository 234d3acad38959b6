//! What a `ProceduralIsland` calls when it enters the tree, for features built on top of the
//! node (today: the navigation parser, see [`crate::island::navigation`]). The features depend on the
//! node; through this list the node does not depend on them (no module circle). Filled by the
//! extension's entry point (`lib.rs`) when the library loads.

use std::sync::Mutex;

static ON_READY: Mutex<Vec<fn()>> = Mutex::new(Vec::new());

/// Call `f` whenever an island becomes ready (main thread; `f` must be cheap after its first
/// call). Adding the same function twice keeps one.
pub fn on_island_ready(f: fn()) {
    let mut hooks = ON_READY.lock().unwrap_or_else(|e| e.into_inner());
    if !hooks.iter().any(|&g| std::ptr::fn_addr_eq(g, f)) {
        hooks.push(f);
    }
}

/// Run the hooks (the island's `_ready`).
pub fn island_ready() {
    let hooks: Vec<fn()> = ON_READY.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for f in hooks {
        f();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static CALLS: AtomicUsize = AtomicUsize::new(0);
    fn hook() {
        CALLS.fetch_add(1, Ordering::SeqCst);
    }

    #[test]
    fn a_hook_runs_once_per_ready_however_often_it_is_added() {
        on_island_ready(hook);
        on_island_ready(hook);
        island_ready();
        assert_eq!(CALLS.load(Ordering::SeqCst), 1);
        island_ready();
        assert_eq!(CALLS.load(Ordering::SeqCst), 2);
    }
}
