//! The GPU path hands its generation over once the heights are final (`generate_staged` →
//! `Staged::GpuTail`), so a caller (the Godot node) builds its colliders from the heights while
//! another thread finishes the island: the heights handed over are the island's, bit for bit;
//! finishing on another thread gives the island `generate_gpu` gives, with its counters whole
//! (both threads' work); a GPU failure after the heights gives the CPU's island with the
//! fallback warning; a tail dropped unfinished leaves the context usable. Its own test binary
//! (own process), because the failure hook is process-wide.

mod common;

use island_core::IslandParams;
use island_gpu::{Backend, Staged};
use std::sync::atomic::AtomicBool;

fn params(seed: u64) -> IslandParams {
    IslandParams {
        resolution: 129,
        chunk_size: 32,
        seed,
        ..Default::default()
    }
}

fn staged(p: &IslandParams) -> (Staged, Option<String>) {
    island_gpu::generate_staged(p, Backend::Gpu, &mut |_, _| {}, &AtomicBool::new(false))
        .expect("valid parameters")
}

#[test]
fn gpu_generation_hands_over_the_final_heights() {
    if !common::gpu("gpu_generation_hands_over_the_final_heights") {
        return;
    }
    let p = params(11);
    // Two generations first, so that both compared below speculate with learned counts (the
    // first ones of a size read their counters back: more dispatches, waits and bytes).
    for _ in 0..2 {
        island_gpu::generate_gpu(&p).unwrap();
    }
    let whole = island_gpu::generate_gpu(&p).unwrap();

    // Handed over after the drainage, finished on another thread.
    let (s, warning) = staged(&p);
    assert!(warning.is_none());
    assert!(matches!(s, Staged::GpuTail(_)), "the GPU path stops early");
    let heights = s.heights().to_vec();
    let (island, late) = std::thread::spawn(move || {
        s.finish(&mut |_, _| {}, &AtomicBool::new(false))
            .expect("finished")
    })
    .join()
    .expect("no panic");
    assert!(late.is_none());
    assert_eq!(island.stats.backend, "gpu");
    assert_eq!(island.stats.backend_reason, "gpu requested");
    assert!(
        island.field.heights == heights,
        "the heights handed over are the island's"
    );
    // (Compared as booleans: a failing assert_eq! would print a million values.)
    assert!(island.field.heights == whole.field.heights, "heights");
    assert!(island.field.normals == whole.field.normals, "normals");
    assert!(island.biomes == whole.biomes, "biome index");
    assert!(island.splat == whole.splat, "splat");
    assert!(island.water.kind == whole.water.kind, "water kinds");
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
    assert!(
        bits(&island.water.level) == bits(&whole.water.level),
        "water levels"
    );
    assert_eq!(
        (
            island.stats.min_height,
            island.stats.max_height,
            island.stats.land_fraction
        ),
        (
            whole.stats.min_height,
            whole.stats.max_height,
            whole.stats.land_fraction
        )
    );
    // The normals are the CPU's of the final heights.
    let cpu_normals =
        island_core::normals::compute_normals(&island.field.heights, 129, island.field.spacing());
    assert!(island.field.normals == cpu_normals, "CPU normals");
    // The counters hold the head's work (its thread) and the tail's (this one's): the same
    // dispatches and bytes as the generation made on one thread.
    let (a, b) = (island.stats.gpu.unwrap(), whole.stats.gpu.unwrap());
    println!("staged {a:?}\nwhole  {b:?}");
    assert_eq!(
        a, b,
        "the staged generation's counters are the whole generation's"
    );
    assert!(a.host_waits >= 1 && a.dispatches > 0);
    let names: Vec<&str> = island
        .stats
        .stage_ms
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(names, island_gpu::GPU_STAGES.to_vec());

    // A tail dropped unfinished (the caller gave up) leaves the context and its buffers
    // usable: the next generation is the same island.
    let (s, _) = staged(&p);
    drop(s);
    let again = island_gpu::generate_gpu(&p).unwrap();
    assert!(again.field.heights == whole.field.heights, "heights again");
    assert!(again.splat == whole.splat, "splat again");

    // A GPU failure after the heights (in the splat stage): the CPU's island, the fallback
    // warning, the reason.
    island_gpu::inject_failure_at(Some("splat"));
    let (s, warning) = staged(&p);
    assert!(warning.is_none(), "the head succeeded");
    assert!(matches!(s, Staged::GpuTail(_)));
    let (island, late) = s.finish(&mut |_, _| {}, &AtomicBool::new(false)).unwrap();
    island_gpu::inject_failure_at(None);
    let w = late.expect("the fallback warning");
    println!("late warning: {w}");
    assert!(w.contains("generated on the CPU instead"), "{w}");
    assert_eq!(island.stats.backend, "cpu");
    assert!(
        island
            .stats
            .backend_reason
            .starts_with("gpu requested; the GPU failed"),
        "{}",
        island.stats.backend_reason
    );
    let cpu = island_core::generate(&p).unwrap();
    assert!(
        island.field.heights == cpu.field.heights,
        "the CPU's heights"
    );
    // generate() reports that warning too.
    island_gpu::inject_failure_at(Some("normals"));
    let (island, w) = island_gpu::generate(&p, Backend::Gpu).unwrap();
    island_gpu::inject_failure_at(None);
    assert_eq!(island.stats.backend, "cpu");
    assert!(w.is_some());
}
