//! Scatter benchmark: the five demo layers (~100k instances) on the default 1025² island, with
//! `place_all` (all layers per chunk) and with one `place` per layer, on 1 and 2 rayon threads.
//! The Poisson-disc tile is built once per process before timing (`scatter::prepare`).

use criterion::{criterion_group, criterion_main, Criterion};
use island_core::scatter::{demo_layers, place, place_all, prepare, ScatterInput};
use island_core::{generate, IslandParams};
use std::hint::black_box;

fn bench_scatter(c: &mut Criterion) {
    let params = IslandParams::default();
    let island = generate(&params).expect("default island");
    let input = ScatterInput::from_island(&island);
    let layers = demo_layers();
    let chunk = params.chunk_size as usize;
    prepare();
    let total: usize = place_all(&input, &layers, &[], params.seed, chunk)
        .expect("place")
        .iter()
        .map(|p| p.len())
        .sum();
    println!("five demo layers: {total} instances");
    let mut g = c.benchmark_group("scatter");
    g.sample_size(30);
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        g.bench_function(format!("place_all_demo_layers_1025_t{threads}"), |b| {
            b.iter(|| {
                pool.install(|| {
                    black_box(place_all(&input, &layers, &[], params.seed, chunk).expect("place"))
                })
            })
        });
        g.bench_function(format!("place_each_demo_layer_1025_t{threads}"), |b| {
            b.iter(|| {
                pool.install(|| {
                    for l in &layers {
                        black_box(place(&input, l, None, params.seed, chunk));
                    }
                })
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_scatter);
criterion_main!(benches);
