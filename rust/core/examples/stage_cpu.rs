//! Per-stage CPU time of the default pipeline (all threads, ns resolution from
//! /proc/self/task/*/schedstat), median over runs: robust to a loaded machine, unlike wall time.
//! Stages that run together are reported together: the first one's line holds their whole
//! phase and the others read 0 (base with detail, biomes, mask and distance; normals with
//! splat). CPU time includes rayon's threads spinning while they wait for work.
//! `cargo run --release -p island_core --example stage_cpu -- [resolution] [runs]`;
//! `DEFAULT_MALLOC=1` skips `memory::reuse_freed_memory`.
use std::sync::atomic::AtomicBool;
// Freed map-sized blocks (4097² maps and larger) are kept for the next generation: see
// island_core::memory::BlockCache.
#[global_allocator]
static ALLOC: island_core::memory::BlockCache = island_core::memory::BlockCache;

fn cpu_ns() -> u64 {
    let mut t = 0;
    for e in std::fs::read_dir("/proc/self/task").unwrap() {
        let p = e.unwrap().path().join("schedstat");
        if let Ok(s) = std::fs::read_to_string(p) {
            t += s.split_whitespace().next().unwrap().parse::<u64>().unwrap();
        }
    }
    t
}
fn main() {
    if std::env::var_os("DEFAULT_MALLOC").is_none() {
        island_core::memory::reuse_freed_memory();
    }
    let n: u32 = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(1025);
    let reps: usize = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(9);
    let p = island_core::IslandParams {
        resolution: n,
        ..Default::default()
    };
    let mut per: Vec<Vec<f64>> = vec![];
    let mut totals = vec![];
    for _ in 0..reps + 1 {
        let mut marks = vec![cpu_ns()];
        let t0 = marks[0];
        let isl = island_core::generate_with(
            &p,
            &mut |_, _| marks.push(cpu_ns()),
            &AtomicBool::new(false),
        )
        .unwrap();
        std::hint::black_box(&isl);
        drop(isl);
        totals.push((cpu_ns() - t0) as f64 / 1e6);
        for (k, w) in marks.windows(2).enumerate() {
            if per.len() <= k {
                per.push(vec![]);
            }
            per[k].push((w[1] - w[0]) as f64 / 1e6);
        }
    }
    let med = |v: &mut Vec<f64>| {
        v.remove(0);
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    for (k, v) in per.iter_mut().enumerate() {
        println!(
            "{:10} {:7.2} ms cpu",
            island_core::pipeline::STAGES[k],
            med(v)
        );
    }
    println!(
        "{:10} {:7.2} ms cpu (incl. drop)",
        "total",
        med(&mut totals)
    );
}
