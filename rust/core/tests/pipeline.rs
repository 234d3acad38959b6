//! Whole-pipeline behaviour a user relies on: islands surrounded by sea, sensible land
//! fraction, a river that splits the island, smooth biome borders, determinism.

use island_core::grid::normalize_01;
use island_core::pipeline::base_height;
use island_core::{generate, Algorithm, IslandParams};

mod common;
use common::on_threads;

/// Label 4-connected components of `land`; returns (labels, sizes). Label 0 = not land.
fn components(land: &[bool], n: usize) -> (Vec<u32>, Vec<usize>) {
    let mut label = vec![0u32; n * n];
    let mut sizes = vec![0usize];
    let mut stack = Vec::new();
    for start in 0..n * n {
        if !land[start] || label[start] != 0 {
            continue;
        }
        let id = sizes.len() as u32;
        sizes.push(0);
        label[start] = id;
        stack.push(start);
        while let Some(i) = stack.pop() {
            sizes[id as usize] += 1;
            let (x, z) = (i % n, i / n);
            let mut visit = |j: usize| {
                if land[j] && label[j] == 0 {
                    label[j] = id;
                    stack.push(j);
                }
            };
            if x > 0 {
                visit(i - 1);
            }
            if x + 1 < n {
                visit(i + 1);
            }
            if z > 0 {
                visit(i - n);
            }
            if z + 1 < n {
                visit(i + n);
            }
        }
    }
    (label, sizes)
}

#[test]
fn default_islands_are_surrounded_by_sea_with_sane_land_fraction() {
    for seed in 0..20u64 {
        let p = IslandParams {
            seed: seed.wrapping_mul(0x9e37_79b9_7f4a_7c15),
            ..Default::default()
        };
        let island = generate(&p).unwrap();
        let n = p.resolution as usize;
        let h = &island.field.heights;
        for i in 0..n {
            for &(x, z) in &[(i, 0), (i, n - 1), (0, i), (n - 1, i)] {
                assert!(
                    h[z * n + x] < 0.0,
                    "seed {seed}: border sample ({x},{z}) = {} m",
                    h[z * n + x]
                );
            }
        }
        // AUTO outlines range from atolls (~0.1 of the map) to large volcanoes (~0.35).
        let lf = island.stats.land_fraction;
        assert!(
            (0.06..=0.6).contains(&lf),
            "seed {seed}: land fraction {lf}"
        );
        assert!(island.stats.max_height > 10.0 && island.stats.max_height <= p.max_height + 10.0);
    }
}

#[test]
fn every_algorithm_makes_an_island() {
    for alg in Algorithm::ALL {
        let p = IslandParams {
            algorithm: alg,
            resolution: 513,
            chunk_size: 64,
            seed: 5,
            ..Default::default()
        };
        let island = generate(&p).unwrap();
        let lf = island.stats.land_fraction;
        assert!((0.15..=0.65).contains(&lf), "{alg:?}: land fraction {lf}");
        assert!(island.stats.max_height > 5.0, "{alg:?}: flat island");
        assert_eq!(island.splat.len(), 513 * 513);
        assert!(island
            .splat
            .iter()
            .all(|w| w.iter().map(|&v| v as u32).sum::<u32>() == 255));
    }
}

#[test]
fn river_splits_the_island() {
    for seed in [1u64, 2, 3, 77, u64::MAX] {
        // The Bézier river crosses the map centre: the round outline (AUTO may put a bay, a
        // lagoon or a channel there).
        let round = island_core::params::ShapeParams {
            shape: island_core::params::IslandShape::Round,
            ..Default::default()
        };
        let with = IslandParams {
            seed,
            river: island_core::params::RiverParams {
                mode: island_core::params::RiverMode::Bezier,
                ..Default::default()
            },
            shape: round.clone(),
            ..Default::default()
        };
        let without = IslandParams {
            seed,
            river: island_core::params::RiverParams {
                mode: island_core::params::RiverMode::Off,
                ..Default::default()
            },
            shape: round,
            ..Default::default()
        };
        let n = with.resolution as usize;
        let a = generate(&with).unwrap();
        let b = generate(&without).unwrap();
        // Largest landmass without the river.
        let land_b: Vec<bool> = b.field.heights.iter().map(|&h| h > 0.0).collect();
        let (lab, sizes) = components(&land_b, n);
        let biggest = (1..sizes.len()).max_by_key(|&i| sizes[i]).unwrap() as u32;
        // The same region with the river carved: count its parts of meaningful size.
        let land_a: Vec<bool> = (0..n * n)
            .map(|i| lab[i] == biggest && a.field.heights[i] > 0.0)
            .collect();
        let (_, parts) = components(&land_a, n);
        let big_parts = parts
            .iter()
            .skip(1)
            .filter(|&&s| s > sizes[biggest as usize] / 20)
            .count();
        assert!(
            big_parts >= 2,
            "seed {seed}: river left {big_parts} large part(s) of the main island"
        );
    }
}

#[test]
fn biome_borders_have_no_cliffs() {
    // Compare the largest neighbour step of the land relief with and without biome variety;
    // the biome blend must not add steps larger than the base noise itself produces.
    let p = IslandParams {
        seed: 9,
        resolution: 513,
        ..Default::default()
    };
    let n = p.resolution as usize;
    let mut single = p.clone();
    single.biomes.biomes = vec![island_core::params::Biome {
        height_scale: 1.0,
        exponent: 1.0,
        roughness: 1.0,
        ..Default::default()
    }];
    let max_step = |params: &IslandParams| {
        let f = island_core::pipeline::generate_fields(params).unwrap();
        let mut m = 0.0f32;
        for z in 0..n {
            for x in 1..n {
                m = m.max((f.land01[z * n + x] - f.land01[z * n + x - 1]).abs());
                m = m.max((f.land01[x * n + z] - f.land01[(x - 1) * n + z]).abs());
            }
        }
        m
    };
    // The base noise alone (normalised, no biome reshaping).
    let mut base = base_height(&p);
    normalize_01(&mut base);
    let mut base_step = 0.0f32;
    for z in 0..n {
        for x in 1..n {
            base_step = base_step.max((base[z * n + x] - base[z * n + x - 1]).abs());
        }
    }
    let with_biomes = max_step(&p);
    let uniform = max_step(&single);
    assert!(
        with_biomes <= base_step * 1.5,
        "biome blend step {with_biomes} vs base noise step {base_step}"
    );
    assert!(
        with_biomes <= uniform * 1.5 + 1e-4,
        "biome blend step {with_biomes} vs single-biome step {uniform}"
    );
}

#[test]
fn deterministic_across_thread_counts_and_runs() {
    for alg in Algorithm::ALL {
        let p = IslandParams {
            algorithm: alg,
            seed: 0xdead_beef_cafe,
            resolution: 257,
            ..Default::default()
        };
        let run = |threads: usize| on_threads(threads, || generate(&p).unwrap());
        let a = run(1);
        let b = run(2);
        let c = run(2);
        let bits = |i: &island_core::Island| {
            i.field
                .heights
                .iter()
                .map(|h| h.to_bits())
                .collect::<Vec<_>>()
        };
        assert_eq!(bits(&a), bits(&b), "{alg:?}: 1 vs 2 threads");
        assert_eq!(bits(&b), bits(&c), "{alg:?}: run to run");
        assert_eq!(a.splat, b.splat);
        assert_eq!(a.biomes, b.biomes);
        let other = generate(&IslandParams {
            seed: p.seed + 1,
            ..p.clone()
        })
        .unwrap();
        assert_ne!(bits(&a), bits(&other), "{alg:?}: seeds must differ");
    }
}

#[test]
fn extreme_seeds_work() {
    for seed in [
        0u64,
        1,
        u64::MAX,
        1 << 63,
        10_000_000_019,
        123_456_789_012_345,
    ] {
        let p = IslandParams {
            seed,
            resolution: 129,
            chunk_size: 16,
            ..Default::default()
        };
        let i = generate(&p).unwrap();
        assert!(i.field.heights.iter().all(|h| h.is_finite()));
        assert!(i.stats.land_fraction > 0.1, "seed {seed}");
    }
}

/// The pipeline fuses stages (normalisation into the detail pass, shaping curve and fine noise
/// into the coast pass); it must still equal the plain composition of the public stage
/// functions, bit for bit, with and without detail and river.
#[test]
fn fused_pipeline_equals_composition_of_stage_functions() {
    use island_core::coast::coastal_falloff;
    use island_core::gradient_noise::fbm_noise;
    use island_core::hash::tag;
    use island_core::river::carve_river;
    for (k, alg) in Algorithm::ALL.into_iter().enumerate() {
        let mut p = IslandParams {
            algorithm: alg,
            seed: 0x5eed_0000 + k as u64,
            resolution: 257,
            chunk_size: 32,
            ..Default::default()
        };
        p.detail.enabled = k % 2 == 0;
        p.river.mode = island_core::params::RiverMode::ALL[k % 3];
        let island = generate(&p).unwrap();
        let f = island_core::pipeline::generate_fields(&p).unwrap();
        let fine = fbm_noise(&p.grid(), &p.coast.fine_noise(), tag::FINE);
        let mut dist = f.distance.clone();
        island_core::pipeline::smooth_coast_distance(&p, &mut dist);
        let mut want = coastal_falloff(
            &f.land01,
            &dist,
            &fine,
            &f.roughness,
            p.max_height,
            &p.coast,
        );
        if p.river.mode == island_core::params::RiverMode::Bezier {
            carve_river(&mut want, &p.grid(), &p.river, tag::RIVER);
        }
        island_core::pipeline::erosion_stage(&p, &mut want);
        let hydro = island_core::pipeline::drainage_stage(&p, &mut want);
        assert_eq!(island.water.kind, hydro.water.kind, "{alg:?}");
        let bits = |v: &[f32]| v.iter().map(|h| h.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&island.field.heights), bits(&want), "{alg:?}");
        assert_eq!(island.biomes, f.biomes, "{alg:?}");
    }
}

#[test]
fn carved_heights_then_finish_equal_the_whole_generation() {
    use std::sync::atomic::AtomicBool;
    let p = IslandParams {
        resolution: 257,
        seed: 77,
        ..IslandParams::default()
    };
    let whole = generate(&p).unwrap();
    let mut stages = Vec::new();
    let cancel = AtomicBool::new(false);
    let carved =
        island_core::generate_heights_with(&p, &mut |_, s| stages.push(s.to_string()), &cancel)
            .unwrap();
    // The heights are final before the last stages run.
    assert_eq!(carved.heights(), &whole.field.heights[..]);
    assert_eq!(carved.params(), &p);
    let island = carved
        .finish(&mut |_, s| stages.push(s.to_string()), &cancel)
        .unwrap();
    assert_eq!(island.field.heights, whole.field.heights);
    assert_eq!(island.field.normals, whole.field.normals);
    assert_eq!(island.splat, whole.splat);
    assert_eq!(island.biomes, whole.biomes);
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
    // Progress walks every stage once, in order, across the two calls.
    assert_eq!(
        stages,
        island_core::pipeline::STAGES.map(String::from).to_vec()
    );
    let names: Vec<&str> = island
        .stats
        .stage_ms
        .iter()
        .map(|(s, _)| s.as_str())
        .collect();
    assert_eq!(names, island_core::pipeline::STAGES.to_vec());
}
