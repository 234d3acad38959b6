//! `Backend::Auto` by measurement, for real: the software adapter (lavapipe) is treated as a
//! hardware one, so the first AUTO generation times both backends and stores the result in a
//! file; edited timings in that file then decide. Also: every generation says why it ran where
//! it ran (`Stats::backend_reason`), and a GPU generation carries its work counters. Its own
//! test binary (the test hook and the store are process-wide).

mod common;

use island_core::IslandParams;
use island_gpu::auto::{AutoStore, Decision, STORE_FILE};
use island_gpu::{generate, Backend};

fn store_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("island_gpu_auto_measure_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn auto_measures_once_then_follows_the_store() {
    let p = IslandParams {
        resolution: 129,
        ..IslandParams::default()
    };
    // Explicit choices are obeyed and say so.
    let (c, _) = generate(&p, Backend::Cpu).unwrap();
    assert_eq!(
        (c.stats.backend.as_str(), c.stats.backend_reason.as_str()),
        ("cpu", "cpu requested")
    );
    assert_eq!(c.stats.gpu, None);
    if !common::gpu("auto_measures_once_then_follows_the_store") {
        let (a, _) = generate(&p, Backend::Auto).unwrap();
        assert_eq!(a.stats.backend_reason, "auto: cpu (no GPU adapter)");
        return;
    }
    let (g, _) = generate(&p, Backend::Gpu).unwrap();
    assert_eq!(
        (g.stats.backend.as_str(), g.stats.backend_reason.as_str()),
        ("gpu", "gpu requested")
    );
    let k = g.stats.gpu.expect("GPU counters");
    println!("GPU counters at 129²: {k:?}");
    // A stage's work is submitted without waiting; the read-backs wait.
    assert!(k.dispatches > 0 && k.host_waits > 0 && k.submissions >= k.host_waits);
    // The island itself comes back in 9 bytes per sample: heights (f32, read in the drainage
    // stage), biome index (one byte) and splat (RGBA8).
    assert!(k.bytes_read_back >= 9 * 129 * 129, "{k:?}");
    assert!(k.bytes_uploaded > 0);

    let dir = store_dir();
    island_gpu::auto::set_store_dir(Some(&dir));
    island_gpu::auto_treat_software_as_hardware(true);
    assert!(matches!(
        island_gpu::auto_decision(&p),
        Decision::Measure(_)
    ));
    // First AUTO generation: measured on both, the faster island returned, the file written.
    let (first, w) = generate(&p, Backend::Auto).unwrap();
    assert!(w.is_none(), "{w:?}");
    let reason = first.stats.backend_reason.clone();
    println!("first AUTO generation: {reason}");
    assert!(
        reason.starts_with(&format!("auto: {} (measured ", first.stats.backend)),
        "{reason}"
    );
    let path = dir.join(STORE_FILE);
    let store = AutoStore::load(&path);
    assert_eq!(store.measurements.len(), 1, "{store:?}");
    let m = store.measurements[0].clone();
    assert_eq!(m.key.resolution, 129);
    assert!(m.gpu_ms > 0.0 && m.cpu_ms > 0.0, "{m:?}");
    // The second follows the measurement without measuring again.
    let (second, _) = generate(&p, Backend::Auto).unwrap();
    assert_eq!(second.stats.backend, first.stats.backend);
    assert_eq!(second.stats.backend_reason, m.reason());
    assert_eq!(AutoStore::load(&path), store, "not measured again");

    // Fake timings in the file decide (after the in-memory copy is dropped).
    for (gpu_ms, cpu_ms, want) in [(1.0, 1000.0, "gpu"), (1000.0, 1.0, "cpu")] {
        let mut s = store.clone();
        s.measurements[0].gpu_ms = gpu_ms;
        s.measurements[0].cpu_ms = cpu_ms;
        s.save(&path).unwrap();
        island_gpu::auto::forget_in_memory();
        let (i, _) = generate(&p, Backend::Auto).unwrap();
        assert_eq!(i.stats.backend, want);
        assert!(
            i.stats
                .backend_reason
                .starts_with(&format!("auto: {want} (measured 1.0 ms vs 1000.0 ms")),
            "{}",
            i.stats.backend_reason
        );
        assert_eq!(i.stats.gpu.is_some(), want == "gpu");
    }
    // Another resolution is another key: measured again, added to the file.
    let q = IslandParams {
        resolution: 65,
        chunk_size: 32,
        ..p.clone()
    };
    // It is the first generation of 65² in this process: the GPU runs twice (the first one
    // allocates the size's buffers and reads its convergence counters back; the second, the
    // way later generations run, is the one timed), then the CPU once.
    let mut gpu_runs = 0;
    let mut stages = Vec::new();
    let (_, _) = island_gpu::generate_with(
        &q,
        Backend::Auto,
        &mut |_, name| {
            gpu_runs += (name == "readback") as u32;
            stages.push(name.to_string());
        },
        &std::sync::atomic::AtomicBool::new(false),
    )
    .unwrap();
    assert_eq!(gpu_runs, 2, "{stages:?}");
    assert_eq!(
        stages.len(),
        2 * island_gpu::GPU_STAGES.len() + island_core::pipeline::STAGES.len(),
        "{stages:?}"
    );
    assert_eq!(AutoStore::load(&path).measurements.len(), 2);
    // A corrupt file is an empty store: measured again, no panic.
    std::fs::write(&path, b"{ garbage").unwrap();
    island_gpu::auto::forget_in_memory();
    let (again, _) = generate(&p, Backend::Auto).unwrap();
    assert!(again.stats.backend_reason.contains("measured"));
    assert_eq!(AutoStore::load(&path).measurements.len(), 1);

    // The software adapter, as it is, is never measured; a hardware one follows the store.
    island_gpu::auto_treat_software_as_hardware(false);
    if island_gpu::auto_uses_gpu() {
        let d = island_gpu::auto_decision(&p);
        assert!(!matches!(d, Decision::Measure(_)), "measured again: {d:?}");
    } else if let Decision::Cpu(r) = island_gpu::auto_decision(&p) {
        let (s, _) = generate(&p, Backend::Auto).unwrap();
        assert_eq!(s.stats.backend_reason, r);
        assert!(r.starts_with("auto: cpu (software adapter"), "{r}");
    }
    island_gpu::auto::set_store_dir(None);
    let _ = std::fs::remove_dir_all(&dir);
}
