//! Runtime queries of a game on a generated 1025² island (1 m spacing): `surface_at` (the core
//! of `ProceduralIsland.get_surface_at`, budget 2 µs per call), the per-island maps it reads,
//! and `find_points` (16 spawn points with the usual rules).

use criterion::{criterion_group, criterion_main, Criterion};
use island_core::spawn::{find_points, SpawnRules};
use island_core::surface_query::{surface_at, SurfaceMaps};
use island_core::{generate, IslandParams};
use std::hint::black_box;

fn bench_runtime(c: &mut Criterion) {
    let island = generate(&IslandParams {
        resolution: 1025,
        ..IslandParams::default()
    })
    .expect("default island");
    let maps = SurfaceMaps::of(&island);
    let mut g = c.benchmark_group("runtime");
    g.sample_size(20);
    g.bench_function("surface_at_1025", |b| {
        let mut k = 0u32;
        b.iter(|| {
            k = k.wrapping_add(1);
            let x = (k.wrapping_mul(7919) % 1000) as f32 - 500.0;
            let z = (k.wrapping_mul(104_729) % 1000) as f32 - 500.0;
            black_box(surface_at(&island, &maps, None, black_box(x), black_box(z)).ok())
        })
    });
    g.bench_function("surface_maps_1025", |b| {
        b.iter(|| black_box(SurfaceMaps::of(&island)))
    });
    let rules = SpawnRules {
        min_height: 2.0,
        max_slope_degrees: 30.0,
        min_distance: 40.0,
        min_water_distance: 10.0,
        ..SpawnRules::default()
    };
    g.bench_function("find_points_16_1025", |b| {
        b.iter(|| black_box(find_points(&island, Some(&maps), None, 16, &rules).unwrap()))
    });
    g.finish();
}

criterion_group!(benches, bench_runtime);
criterion_main!(benches);
