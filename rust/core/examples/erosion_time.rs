//! Repeat one stage for profiling: `erosion_time <generate|erode|drainage|stage|carve> [reps] [n]` (`stage`: the pipeline's drainage stage).
//! Run under `perf stat` (CPU time is meaningful on a busy machine where wall time is not).

use island_core::channels::{carve_rivers, CarveSettings};
use island_core::drainage::{drainage, DrainageSettings};
use island_core::erosion::{erode, ErosionSettings};
use island_core::{generate, IslandParams};
use std::time::Instant;

// Freed map-sized blocks (4097² maps and larger) are kept for the next generation: see
// island_core::memory::BlockCache.
#[global_allocator]
static ALLOC: island_core::memory::BlockCache = island_core::memory::BlockCache;

fn main() {
    island_core::memory::reuse_freed_memory();
    let args: Vec<String> = std::env::args().collect();
    let what = args.get(1).map(String::as_str).unwrap_or("erode");
    let reps: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10);
    let n: u32 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1025);
    let p = IslandParams {
        resolution: n,
        ..Default::default()
    };
    let n = n as usize;
    let sp = p.spacing();
    let h0 = generate(&p).unwrap().field.heights;
    let mut eroded = h0.clone();
    erode(&mut eroded, n, sp, &ErosionSettings::default(), 1);
    let d = drainage(&eroded, n, sp, 0.0, &DrainageSettings::default());
    let mut best = f64::MAX;
    for _ in 0..reps {
        let t = Instant::now();
        // On one of the pool's threads, as the extension's regenerate() runs the generator: the
        // parallel kernels then start without a hand-over from outside the pool.
        rayon::scope(|_| match what {
            "generate" => {
                std::hint::black_box(generate(&p).unwrap());
            }
            "erode" => {
                let mut h = h0.clone();
                erode(&mut h, n, sp, &ErosionSettings::default(), 1);
            }
            "drainage" => {
                std::hint::black_box(drainage(&eroded, n, sp, 0.0, &DrainageSettings::default()));
            }
            "stage" => {
                let mut h = eroded.clone();
                std::hint::black_box(island_core::pipeline::drainage_stage(&p, &mut h));
            }
            "carve" => {
                let mut h = eroded.clone();
                carve_rivers(&mut h, &d, &CarveSettings::default());
            }
            _ => panic!("unknown stage {what}"),
        });
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
    }
    println!("{what} {n}: best of {reps} {best:.1} ms");
}
