//! Criterion benchmarks of erosion, drainage and river carving on the default island.
//!
//! `cargo bench -p island_core --bench erosion -- --quick`. Sizes default to 1025² and 4097²
//! (`ISLAND_BENCH_SIZES=1025` to choose). `pipeline` is the default generator alone, for
//! scale: on a shared machine compare the other lines with it rather than with absolute times.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use island_core::channels::{carve_rivers, CarveSettings};
use island_core::drainage::{drainage, DrainageSettings};
use island_core::erosion::{erode, ErosionSettings};
use island_core::{generate, IslandParams};
use std::hint::black_box;
use std::time::Duration;

fn sizes() -> Vec<usize> {
    std::env::var("ISLAND_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .filter(|v: &Vec<usize>| !v.is_empty())
        .unwrap_or_else(|| vec![1025, 4097])
}

fn erosion(c: &mut Criterion) {
    island_core::memory::reuse_freed_memory();
    for n in sizes() {
        let p = IslandParams {
            resolution: n as u32,
            ..Default::default()
        };
        if p.validate().is_err() {
            continue;
        }
        let sp = p.spacing();
        let island = generate(&p).expect("valid params");
        let h0 = island.field.heights.clone();
        let (es, ds, cs) = (
            ErosionSettings::default(),
            DrainageSettings::default(),
            CarveSettings::default(),
        );
        let mut eroded = h0.clone();
        erode(&mut eroded, n, sp, &es, p.seed);
        let d = drainage(&eroded, n, sp, 0.0, &ds);

        let mut g = c.benchmark_group(format!("erosion/{n}"));
        g.throughput(Throughput::Elements((n * n) as u64));
        g.sample_size(10);
        g.warm_up_time(Duration::from_millis(500));
        g.measurement_time(Duration::from_secs(3));
        if n <= 1025 {
            g.bench_function("pipeline", |b| b.iter(|| generate(black_box(&p))));
        }
        g.bench_function("erode", |b| {
            b.iter_batched_ref(
                || h0.clone(),
                |h| erode(h, n, sp, &es, p.seed),
                BatchSize::LargeInput,
            )
        });
        g.bench_function("depression_fill", |b| {
            b.iter(|| island_core::drainage::depression_fill(black_box(&eroded), n, 0.0))
        });
        g.bench_function("drainage", |b| {
            b.iter(|| drainage(black_box(&eroded), n, sp, 0.0, &ds))
        });
        g.bench_function("carve", |b| {
            b.iter_batched_ref(
                || eroded.clone(),
                |h| carve_rivers(h, &d, &cs),
                BatchSize::LargeInput,
            )
        });
        g.bench_function("erode+drainage+carve", |b| {
            b.iter_batched_ref(
                || h0.clone(),
                |h| {
                    erode(h, n, sp, &es, p.seed);
                    let d = drainage(h, n, sp, 0.0, &ds);
                    carve_rivers(h, &d, &cs)
                },
                BatchSize::LargeInput,
            )
        });
        g.finish();
    }
}

criterion_group!(benches, erosion);
criterion_main!(benches);
