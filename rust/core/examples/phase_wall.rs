//! Wall time of the default pipeline's phases, between its progress reports (the concurrent
//! first stages come as one phase, named after the first): median and minimum over runs, run
//! on one of the pool's threads as the extension's `regenerate()` does.
//! `cargo run --release -p island_core --example phase_wall -- [resolution] [runs]`; with
//! `RAYON_NUM_THREADS=1` it shows how far each phase gains from the second thread.
use std::sync::atomic::AtomicBool;
use std::time::Instant;
// Freed map-sized blocks (4097² maps and larger) are kept for the next generation: see
// island_core::memory::BlockCache.
#[global_allocator]
static ALLOC: island_core::memory::BlockCache = island_core::memory::BlockCache;

fn main() {
    island_core::memory::reuse_freed_memory();
    let arg = |i: usize, d: usize| {
        std::env::args()
            .nth(i)
            .map_or(d, |s| s.parse().expect("a number"))
    };
    let (n, reps) = (arg(1, 1025) as u32, arg(2, 15).max(1));
    let p = island_core::IslandParams {
        resolution: n,
        ..Default::default()
    };
    let mut phases: Vec<(String, Vec<f64>)> = vec![];
    let mut totals = vec![];
    for _ in 0..reps {
        let t0 = Instant::now();
        let mut last = t0;
        let mut k = 0;
        rayon::scope(|_| {
            let mut report = |_: f32, name: &str| {
                let now = Instant::now();
                if phases.len() <= k {
                    phases.push((name.to_string(), vec![]));
                }
                phases[k].1.push((now - last).as_secs_f64() * 1e3);
                last = now;
                k += 1;
            };
            let island =
                island_core::generate_with(&p, &mut report, &AtomicBool::new(false)).unwrap();
            drop(std::hint::black_box(island));
        });
        totals.push(t0.elapsed().as_secs_f64() * 1e3);
    }
    let median_min = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2], v[0])
    };
    for (name, v) in phases.iter_mut() {
        let (med, min) = median_min(v);
        // Stages reported together with the one before take no time of their own.
        if med > 0.01 {
            println!("{name:10} {med:7.2} ms (min {min:.2})");
        }
    }
    let (med, min) = median_min(&mut totals);
    println!("{:10} {med:7.2} ms (min {min:.2}, incl. drop)", "total");
}
