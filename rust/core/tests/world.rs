//! World islands (issue 36): an island of the world is the same bits on 1 or 2 worker threads,
//! and its coarse far-view generation (at the world's default coarse side) has the detailed
//! island's outline: IoU of land ≥ 0.95 on the first six islands of world seed 7.

use island_core::world::{
    coarse_resolution, island_at, island_params, island_params_with_resolution, WorldParams,
    DEFAULT_COARSE_SIDE,
};
use island_core::{generate, Island, IslandParams};

/// The first `count` islands of world seed 7, scanning cells row by row.
fn islands(count: usize) -> Vec<island_core::world::IslandPlacement> {
    let w = WorldParams {
        world_seed: 7,
        ..Default::default()
    };
    let mut out = Vec::new();
    for z in -3..=3 {
        for x in -3..=3 {
            if let Some(p) = island_at(&w, [x, z]) {
                if out.len() < count {
                    out.push(p);
                }
            }
        }
    }
    assert_eq!(out.len(), count, "world seed 7 has islands");
    out
}

fn in_pool(threads: usize, p: &IslandParams) -> Island {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(|| generate(p).unwrap())
}

#[test]
fn a_world_island_is_the_same_on_one_or_two_threads() {
    let pl = &islands(1)[0];
    let p = island_params(&IslandParams::default(), pl);
    let a = in_pool(1, &p);
    let b = in_pool(2, &p);
    let bits = |i: &Island| {
        i.field
            .heights
            .iter()
            .map(|h| h.to_bits())
            .collect::<Vec<_>>()
    };
    assert_eq!(bits(&a), bits(&b), "heights");
    assert_eq!(a.water.kind, b.water.kind, "water");
    assert_eq!(a.splat, b.splat, "splat");
}

#[test]
fn the_coarse_island_has_the_detailed_outline() {
    for pl in islands(6) {
        let base = IslandParams::default();
        let fine = generate(&island_params(&base, &pl)).unwrap();
        let cr = coarse_resolution(&pl, DEFAULT_COARSE_SIDE);
        let coarse = generate(&island_params_with_resolution(&base, &pl, cr)).unwrap();
        // Land at each coarse sample, there and on the detailed island.
        let n = coarse.field.resolution;
        let sp = coarse.field.spacing();
        let half = coarse.field.world_size * 0.5;
        let (mut both, mut either) = (0usize, 0usize);
        for j in 0..n {
            for i in 0..n {
                let (x, z) = (i as f32 * sp - half, j as f32 * sp - half);
                let a = coarse.field.heights[j * n + i] > 0.0;
                let b = fine.field.heights[fine.field.nearest_index(x, z)] > 0.0;
                both += (a && b) as usize;
                either += (a || b) as usize;
            }
        }
        let iou = both as f64 / either.max(1) as f64;
        eprintln!(
            "cell {:?}: {} m, {}² vs {}², land IoU {iou:.3}",
            pl.cell, pl.world_size, pl.resolution, cr
        );
        assert!(either > 100, "an island with land");
        assert!(iou >= 0.95, "cell {:?}: land IoU {iou:.3}", pl.cell);
    }
}
