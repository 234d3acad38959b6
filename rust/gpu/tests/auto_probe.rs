//! `Backend::Auto` decides on the adapter alone: a software (or missing) adapter never costs
//! opening a device and compiling the pipelines. Its own test binary, so no other test has
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
    assert_eq!(island.stats.backend, if auto { "gpu" } else { "cpu" });
    assert_eq!(island_gpu::context_open(), auto);
    // Opening the context afterwards (asking for the adapter's name) does not change the answer.
    let name = island_gpu::adapter_info();
    assert_eq!(island_gpu::auto_uses_gpu(), auto, "{name:?}");
    if name.is_none() {
        assert!(!auto);
    }
}
