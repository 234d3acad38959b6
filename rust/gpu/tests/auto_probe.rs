//! `Backend::Auto` recognises a software (or missing) adapter alone: it never costs opening a
//! device and compiling the pipelines, nor a measurement. Its own test binary, so no other test has
//! opened the context first.

use island_core::IslandParams;
use island_gpu::{generate, Backend};

#[test]
fn auto_decides_without_opening_a_software_device() {
    let auto = island_gpu::auto_uses_gpu();
    if !auto {
        assert!(
            !island_gpu::context_open(),
            "a software or missing adapter must not be opened for Auto"
        );
    }
    let p = IslandParams {
        resolution: 129,
        ..IslandParams::default()
    };
    let (island, warning) = generate(&p, Backend::Auto).unwrap();
    assert!(warning.is_none());
    // A hardware adapter is measured against the CPU on the first AUTO generation (the
    // faster one made the island); a software one never is.
    if !auto {
        assert_eq!(island.stats.backend, "cpu");
    }
    let reason = &island.stats.backend_reason;
    assert!(
        reason.starts_with(&format!("auto: {} (", island.stats.backend)),
        "{reason}"
    );
    assert_eq!(island_gpu::context_open(), auto);
    // Opening the context afterwards (asking for the adapter's name) does not change the answer.
    let name = island_gpu::adapter_info();
    assert_eq!(island_gpu::auto_uses_gpu(), auto, "{name:?}");
    if name.is_none() {
        assert!(!auto);
    }
}
