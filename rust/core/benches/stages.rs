//! Criterion benchmarks of every generator stage and of the whole default pipeline.
//!
//! `cargo bench -p island_core --bench stages` (add a filter such as `-- 1025/` to narrow it).
//! Sizes default to 1025² and 4097²; set `ISLAND_BENCH_SIZES=1025` (comma list) to choose.
//! Samples are kept at criterion's minimum (10) with short warm-up and measurement times so the
//! suite stays within a few minutes on a 2-core machine; `cargo xtask bench` prints the same
//! stages as one table together with the peer comparisons.

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use island_core::biomes::biome_blend;
use island_core::diamond_square::diamond_square;
use island_core::distance::{distance_to_coast, distance_transform_sq};
use island_core::gaussian_islands::gaussian_islands;
use island_core::gradient_noise::fbm_noise;
use island_core::grid::normalize_01;
use island_core::hash::tag;
use island_core::mask::island_mask;
use island_core::normals::compute_normals;
use island_core::params::FbmParams;
use island_core::pipeline::{base_height, border_margin, generate, generate_fields};
use island_core::river::carve_river;
use island_core::splat::auto_splat;
use island_core::value_noise::value_noise;
use island_core::IslandParams;
use noise::{Fbm, MultiFractal, NoiseFn, Perlin};
use rayon::prelude::*;
use std::hint::black_box;
use std::time::Duration;

fn sizes() -> Vec<usize> {
    std::env::var("ISLAND_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .filter(|v: &Vec<usize>| !v.is_empty())
        .unwrap_or_else(|| vec![1025, 4097])
}

fn stages(c: &mut Criterion) {
    for n in sizes() {
        let p = IslandParams {
            resolution: n as u32,
            chunk_size: 64.min(n as u32 - 1).max(16),
            ..Default::default()
        };
        if let Err(e) = p.validate() {
            eprintln!("skipping size {n}: {e}");
            continue;
        }
        let ws = p.world_size;
        let spacing = p.spacing();
        let island = generate(&p).expect("valid params");
        let fields = generate_fields(&p).expect("valid params");
        let mut base = base_height(&p);
        normalize_01(&mut base);
        let water: Vec<bool> = fields.mask.iter().map(|&v| v == 0).collect();

        let mut g = c.benchmark_group(format!("{n}"));
        g.throughput(Throughput::Elements((n * n) as u64));
        let f = &p.fbm;
        let grid = p.grid();
        let fbm8 = FbmParams {
            octaves: 8,
            ..f.clone()
        };
        g.bench_function("fbm8", |b| b.iter(|| fbm_noise(&grid, &fbm8, tag::BASE)));
        let v = &p.value_noise;
        g.bench_function("value_noise", |b| {
            b.iter(|| value_noise(&grid, v, tag::BASE))
        });
        let d = &p.diamond_square;
        g.bench_function("diamond_square", |b| {
            b.iter(|| diamond_square(&grid, d, tag::BASE))
        });
        let gs = &p.gaussian;
        g.bench_function("gaussian_islands", |b| {
            b.iter(|| gaussian_islands(&grid, gs, tag::BASE))
        });
        let m = &p.mask;
        let margin = border_margin(&p);
        g.bench_function("mask", |b| {
            b.iter(|| island_mask(&grid, m, margin, tag::MASK))
        });
        g.bench_function("edt", |b| {
            b.iter(|| distance_transform_sq(black_box(&water), n, n))
        });
        g.bench_function("distance_to_coast", |b| {
            b.iter(|| distance_to_coast(black_box(&fields.mask), n, spacing))
        });
        g.bench_function("smooth_coast_distance", |b| {
            b.iter_batched_ref(
                || fields.distance.clone(),
                |d| island_core::pipeline::smooth_coast_distance(&p, d),
                BatchSize::LargeInput,
            )
        });
        let bp = &p.biomes;
        g.bench_function("biome_blend", |b| {
            b.iter_batched(
                || base.clone(),
                |mut x| biome_blend(&mut x, &grid, bp, tag::BIOME),
                BatchSize::LargeInput,
            )
        });
        let r = &p.river;
        g.bench_function("river", |b| {
            b.iter_batched(
                || island.field.heights.clone(),
                |mut h| carve_river(&mut h, &grid, r, tag::RIVER),
                BatchSize::LargeInput,
            )
        });
        g.bench_function("normals", |b| {
            b.iter(|| compute_normals(black_box(&island.field.heights), n, spacing))
        });
        g.bench_function("splat", |b| {
            b.iter(|| {
                auto_splat(
                    &island.field.heights,
                    &island.field.normals,
                    &fields.sandiness,
                    &grid,
                    p.max_height,
                    &p.splat,
                    tag::SPLAT,
                )
            })
        });
        g.bench_with_input(BenchmarkId::new("pipeline", "default"), &p, |b, p| {
            b.iter(|| generate(p).expect("valid"))
        });

        // Peer: the `noise` crate's Fbm<Perlin>, 8 octaves, rows in parallel like ours.
        let peer = Fbm::<Perlin>::new(7)
            .set_octaves(8)
            .set_frequency(1.0)
            .set_lacunarity(2.0)
            .set_persistence(0.5);
        let step = (ws / (n - 1) as f32 / f.scale) as f64;
        g.bench_function("peer_noise_crate_fbm8", |b| {
            b.iter(|| {
                let mut out = vec![0.0f32; n * n];
                out.par_chunks_mut(n).enumerate().for_each(|(z, row)| {
                    let y = z as f64 * step;
                    for (x, v) in row.iter_mut().enumerate() {
                        *v = peer.get([x as f64 * step, y]) as f32;
                    }
                });
                out
            })
        });
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .without_plots();
    targets = stages
}
criterion_main!(benches);
