//! A wgpu error in the middle of a GPU generation: `generate_gpu` reports it as a `GpuError`
//! (no panic) and `generate` lets the CPU finish the job with one warning. Its own test binary
//! (own process), because the failure hook is process-wide.

use island_core::IslandParams;
use island_gpu::{Backend, GpuError};

#[test]
fn wgpu_error_mid_generation_falls_back_to_cpu() {
    let p = IslandParams {
        resolution: 65,
        chunk_size: 16,
        seed: 9,
        ..Default::default()
    };
    if island_gpu::adapter_info().is_none() {
        if std::env::var("ISLAND_REQUIRE_GPU").is_ok_and(|v| v == "1") {
            panic!("ISLAND_REQUIRE_GPU=1 but no GPU adapter");
        }
        println!("SKIPPED: wgpu_error_mid_generation_falls_back_to_cpu: no GPU adapter");
        return;
    }
    island_gpu::inject_failure_at(Some("distance"));
    let err = island_gpu::generate_gpu(&p).expect_err("injected validation error");
    println!("generate_gpu error: {err}");
    assert!(matches!(err, GpuError::Wgpu(_)), "{err:?}");
    let (island, warning) = island_gpu::generate(&p, Backend::Gpu).expect("CPU finishes");
    assert_eq!(island.stats.backend, "cpu");
    let w = warning.expect("one warning");
    println!("warning: {w}");
    assert!(w.contains("CPU"), "{w}");
    assert!(!w.contains('\n'), "one line: {w}");
    let cpu = island_core::generate(&p).unwrap();
    assert_eq!(island.field.heights, cpu.field.heights);
    // Auto also falls back (with a warning) when the GPU fails mid-way; on a software adapter
    // (lavapipe) Auto never tries the GPU, so it runs on the CPU without a warning.
    let (a, w) = island_gpu::generate(&p, Backend::Auto).unwrap();
    assert_eq!(a.stats.backend, "cpu");
    assert_eq!(w.is_some(), island_gpu::auto_uses_gpu(), "{w:?}");
    // And the context is still usable afterwards.
    island_gpu::inject_failure_at(None);
    let ok = island_gpu::generate_gpu(&p).expect("GPU works again");
    assert_eq!(ok.stats.backend, "gpu");
}
