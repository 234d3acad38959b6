//! Editor auto-regenerate: the island regenerates in the background at once when a change comes
//! after a quiet time or when the island of the previous change is already done (a value typed,
//! a stamp moved, a curve point dropped, an undo: the island follows without waiting, also for
//! quick successive edits), and while changes keep coming during a generation (a slider or a
//! gizmo dragged) once they have stopped for [`DEBOUNCE`] or that generation is done (a running
//! generation is cancelled by the next one, so only the last request is completed). Invalid values are reported once they have stood for the
//! same quiet time (not while the user is still typing), once per distinct problem.

use crate::island::worker::Request;
use std::time::{Duration, Instant};

/// Quiet time that makes a change a new edit (regenerated at once), and after the last change of
/// a run of changes before the editor regenerates.
pub const DEBOUNCE: Duration = Duration::from_millis(300);

/// Last seen request and when it changed.
#[derive(Default)]
pub struct AutoRegenerate {
    watched: Option<Request>,
    dirty_since: Option<Instant>,
    /// When the request last changed.
    last_change: Option<Instant>,
    /// The current problem with the values and since when it stands.
    invalid: Option<(String, Instant)>,
    /// The problem last reported (not reported again until the values change).
    reported: Option<String>,
}

/// What the node should do after [`AutoRegenerate::poll`].
#[derive(Debug, Default, PartialEq)]
pub struct Action {
    /// Regenerate in the background now.
    pub regenerate: bool,
    /// Report this problem (error in the Output panel, `generation_failed`).
    pub report: Option<String>,
    /// The values turned valid or invalid: refresh the configuration warning.
    pub validity_changed: bool,
}

/// What of `r` calls for a new island: `meshes` follows `lod_enabled`, which does not (the node
/// builds the missing chunk surfaces itself when LOD is switched off).
fn island_request(r: Request) -> Request {
    Request { meshes: true, ..r }
}

impl AutoRegenerate {
    /// Remember `now` as the current state (no regenerate for it).
    pub fn reset(&mut self, now: Option<Request>) {
        self.watched = now.map(island_request);
    }

    /// Called every frame with the current request (`Err`: the problem with the values);
    /// `idle`: no generation is running (the island of the last request is done).
    pub fn poll(&mut self, now: Result<Request, String>, idle: bool) -> Action {
        let mut action = Action::default();
        let now = match now {
            Err(msg) => {
                action.validity_changed = self.invalid.is_none();
                if self.invalid.as_ref().map(|(m, _)| m) != Some(&msg) {
                    self.invalid = Some((msg, Instant::now()));
                }
                let (msg, since) = self.invalid.as_ref().expect("set above");
                if since.elapsed() >= DEBOUNCE && self.reported.as_ref() != Some(msg) {
                    self.reported = Some(msg.clone());
                    action.report = Some(msg.clone());
                }
                return action;
            }
            Ok(now) => island_request(now),
        };
        action.validity_changed = self.invalid.take().is_some();
        self.reported = None;
        if self.watched.as_ref() != Some(&now) {
            let quiet = idle || self.last_change.is_none_or(|t| t.elapsed() >= DEBOUNCE);
            self.watched = Some(now);
            self.last_change = Some(Instant::now());
            if quiet {
                // A new edit after a quiet time: at once.
                self.dirty_since = None;
                action.regenerate = true;
                return action;
            }
            // One of a run of changes: once they stop.
            self.dirty_since = Some(Instant::now());
        }
        if self
            .dirty_since
            .is_some_and(|t| idle || t.elapsed() >= DEBOUNCE)
        {
            self.dirty_since = None;
            action.regenerate = true;
        }
        action
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use island_core::IslandParams;

    #[test]
    fn regenerates_at_once_then_once_after_a_run_of_changes() {
        let req = |seed| Request {
            params: IslandParams {
                seed,
                ..IslandParams::default()
            },
            flat: false,
            collision: true,
            meshes: true,
            backend: island_gpu::Backend::Cpu,
            stamps: None,
        };
        let mut w = AutoRegenerate::default();
        w.reset(Some(req(1)));
        assert!(
            !w.poll(Ok(req(1)), false).regenerate,
            "unchanged: nothing to do"
        );
        assert!(
            w.poll(Ok(req(2)), false).regenerate,
            "a change after a quiet time: at once"
        );
        assert!(!w.poll(Ok(req(2)), false).regenerate, "only once");
        // A run of changes (a slider dragged): once, after they stop.
        assert!(
            !w.poll(Ok(req(3)), false).regenerate,
            "within the quiet time: wait"
        );
        assert!(
            !w.poll(Ok(req(4)), false).regenerate,
            "still changing: wait"
        );
        assert!(!w.poll(Ok(req(4)), false).regenerate, "not quiet yet");
        let a = w.poll(Err("typing".into()), false);
        assert!(!a.regenerate && a.report.is_none() && a.validity_changed);
        std::thread::sleep(DEBOUNCE);
        let a = w.poll(Ok(req(2)), false);
        assert!(a.regenerate && a.validity_changed);
        assert!(!w.poll(Ok(req(2)), false).regenerate, "only once");
        // Switching LOD (the chunk surfaces) needs no new island.
        let bare = Request {
            meshes: false,
            ..req(2)
        };
        assert!(!w.poll(Ok(bare.clone()), false).regenerate);
        std::thread::sleep(DEBOUNCE);
        assert!(
            !w.poll(Ok(bare), false).regenerate,
            "lod_enabled alone regenerates nothing"
        );
        // Quick successive edits: a change within the quiet time regenerates at once when the
        // previous island is already done; while one is generating it waits, then follows as
        // soon as that one is done.
        assert!(w.poll(Ok(req(5)), true).regenerate, "after a quiet time");
        assert!(
            w.poll(Ok(req(6)), true).regenerate,
            "previous one done: at once"
        );
        assert!(!w.poll(Ok(req(7)), false).regenerate, "generating: wait");
        assert!(!w.poll(Ok(req(7)), false).regenerate, "still generating");
        assert!(
            w.poll(Ok(req(7)), true).regenerate,
            "done: the last change follows"
        );
        assert!(!w.poll(Ok(req(7)), true).regenerate, "only once");
    }

    #[test]
    fn invalid_values_are_reported_once_after_the_quiet_time() {
        let mut w = AutoRegenerate::default();
        let bad = || Err::<Request, String>("invalid parameter `world_size`".into());
        let a = w.poll(bad(), false);
        assert!(a.validity_changed && a.report.is_none(), "not while typing");
        std::thread::sleep(DEBOUNCE);
        let a = w.poll(bad(), false);
        assert_eq!(a.report.as_deref(), Some("invalid parameter `world_size`"));
        assert!(!a.validity_changed);
        assert_eq!(w.poll(bad(), false), Action::default(), "reported once");
        // Another problem is reported again, after its own quiet time.
        let other = || Err::<Request, String>("invalid parameter `seed`".into());
        assert!(w.poll(other(), false).report.is_none());
        std::thread::sleep(DEBOUNCE);
        assert!(w.poll(other(), false).report.is_some());
    }
}
