//! Editor auto-regenerate: the island regenerates in the background once its properties have
//! stopped changing for [`DEBOUNCE`].

use crate::worker::Request;
use std::time::{Duration, Instant};

/// Quiet time after the last property change before the editor regenerates.
pub const DEBOUNCE: Duration = Duration::from_millis(300);

/// Last seen request and when it changed.
#[derive(Default)]
pub struct AutoRegenerate {
    watched: Option<Request>,
    dirty_since: Option<Instant>,
}

impl AutoRegenerate {
    /// Remember `now` as the current state (no regenerate for it).
    pub fn reset(&mut self, now: Option<Request>) {
        self.watched = now;
    }

    /// Called every frame with the current request (`Err`: invalid values while typing, wait
    /// for valid ones). True when the island should regenerate now.
    pub fn poll(&mut self, now: Result<Request, String>) -> bool {
        let Ok(now) = now else {
            return false;
        };
        if self.watched.as_ref() != Some(&now) {
            self.watched = Some(now);
            self.dirty_since = Some(Instant::now());
        }
        if self.dirty_since.is_some_and(|t| t.elapsed() >= DEBOUNCE) {
            self.dirty_since = None;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use island_core::IslandParams;

    #[test]
    fn regenerates_once_after_the_quiet_time() {
        let req = |seed| Request {
            params: IslandParams {
                seed,
                ..IslandParams::default()
            },
            flat: false,
            collision: true,
            backend: island_gpu::Backend::Cpu,
        };
        let mut w = AutoRegenerate::default();
        w.reset(Some(req(1)));
        assert!(!w.poll(Ok(req(1))), "unchanged: nothing to do");
        assert!(!w.poll(Ok(req(2))), "changed: wait for the quiet time");
        assert!(!w.poll(Err("typing".into())));
        std::thread::sleep(DEBOUNCE);
        assert!(w.poll(Ok(req(2))));
        assert!(!w.poll(Ok(req(2))), "only once");
    }
}
