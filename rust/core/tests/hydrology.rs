//! Erosion, drainage, flow rivers and the water map in the whole pipeline.

// Grid tests walk sample indices and read several maps at the same index: plain index loops.
#![allow(clippy::needless_range_loop)]

use island_core::params::{Algorithm, RiverMode};
use island_core::water::{DRY, LAKE, RIVER, SEA};
use island_core::{generate, Island, IslandParams};
use std::collections::VecDeque;

mod common;
use common::on_threads;

fn neighbours(i: usize, n: usize) -> impl Iterator<Item = usize> {
    let (x, z) = ((i % n) as i64, (i / n) as i64);
    (-1..=1i64)
        .flat_map(move |dz| (-1..=1i64).map(move |dx| (x + dx, z + dz)))
        .filter(move |&(a, b)| (a, b) != (x, z) && a >= 0 && b >= 0 && a < n as i64 && b < n as i64)
        .map(move |(a, b)| b as usize * n + a as usize)
}

fn islands() -> Vec<Island> {
    let mut out = Vec::new();
    for (k, alg) in Algorithm::ALL.into_iter().enumerate() {
        for seed in [1u64, 0x5eed] {
            let p = IslandParams {
                algorithm: alg,
                seed: seed + k as u64,
                resolution: if k == 0 && seed == 1 { 1025 } else { 257 },
                chunk_size: 32,
                ..Default::default()
            };
            out.push(generate(&p).unwrap());
        }
    }
    out
}

/// Every river sample has a path to a lake or the sea along which neither the bed nor the water
/// surface ever rises (walked upstream from the lakes and the sea).
#[test]
fn rivers_never_rise_downstream_and_reach_a_lake_or_the_sea() {
    let mut total_rivers = 0;
    for island in islands() {
        let n = island.field.resolution;
        let (h, w) = (&island.field.heights, &island.water);
        let mut seen: Vec<bool> = (0..n * n)
            .map(|i| w.kind[i] == LAKE || w.kind[i] == SEA)
            .collect();
        let mut queue: VecDeque<usize> = (0..n * n).filter(|&i| seen[i]).collect();
        while let Some(i) = queue.pop_front() {
            for j in neighbours(i, n) {
                if !seen[j] && w.kind[j] == RIVER && h[j] >= h[i] && w.level[j] >= w.level[i] {
                    seen[j] = true;
                    queue.push_back(j);
                }
            }
        }
        let rivers = (0..n * n).filter(|&i| w.kind[i] == RIVER).count();
        let stranded = (0..n * n)
            .filter(|&i| w.kind[i] == RIVER && !seen[i])
            .count();
        assert_eq!(
            stranded, 0,
            "{} of {rivers} river samples stranded",
            stranded
        );
        total_rivers += rivers;
        let s = &island.stats;
        assert_eq!(rivers > 0, s.river_count > 0);
        // The water covers at least the rivers' course; in the default (carved) mode the
        // bigger rivers spread across their channels, wider than one sample.
        let sp = island.params.spacing();
        assert!(rivers as f32 * sp >= s.river_length_m * 0.99 / std::f32::consts::SQRT_2);
        if n >= 1025 {
            assert!(
                rivers as f32 * sp > 1.5 * s.river_length_m,
                "{rivers} river samples for {} m of rivers",
                s.river_length_m
            );
        }
    }
    assert!(total_rivers > 0, "no rivers at all");
}

/// Flooding uphill from the water reaches every sample: dry land has no undrained pit.
#[test]
fn dry_land_has_no_undrained_pits() {
    for island in islands() {
        let n = island.field.resolution;
        let (h, w) = (&island.field.heights, &island.water);
        let mut seen: Vec<bool> = (0..n * n)
            .map(|i| w.kind[i] == LAKE || w.kind[i] == SEA)
            .collect();
        let mut queue: VecDeque<usize> = (0..n * n).filter(|&i| seen[i]).collect();
        while let Some(i) = queue.pop_front() {
            for j in neighbours(i, n) {
                if !seen[j] && h[j] >= h[i] {
                    seen[j] = true;
                    queue.push_back(j);
                }
            }
        }
        let pits = seen.iter().filter(|s| !**s).count();
        assert_eq!(
            pits, 0,
            "seed {}: {pits} undrained samples",
            island.params.seed
        );
    }
}

/// Sea at level 0 over ground below it, lakes flat above their beds, rivers at or above their
/// beds, dry samples without a level.
#[test]
fn water_kinds_are_consistent_with_the_heights() {
    for island in islands() {
        let n = island.field.resolution;
        let (h, w) = (&island.field.heights, &island.water);
        assert_eq!(w.resolution, n);
        assert_eq!((w.kind.len(), w.level.len()), (n * n, n * n));
        for i in 0..n * n {
            match w.kind[i] {
                SEA => assert!(w.level[i] == 0.0 && h[i] < 0.0, "sea at {i}"),
                LAKE => assert!(w.level[i].is_finite() && h[i] < w.level[i], "lake at {i}"),
                RIVER => assert!(w.level[i] >= h[i] && h[i] >= 0.0, "river at {i}"),
                DRY => assert!(w.level[i].is_nan() && h[i] >= 0.0, "dry at {i}"),
                k => panic!("kind {k}"),
            }
            // Lakes are flat: neighbouring lake samples share their level; sea touches no
            // lake (a lake next to the sea would be sea).
            for j in neighbours(i, n) {
                if w.kind[i] == LAKE && w.kind[j] == LAKE {
                    assert_eq!(w.level[i], w.level[j], "lake level at {i}/{j}");
                }
            }
        }
        // The map border is sea.
        assert!((0..n).all(|x| w.kind[x] == SEA && w.kind[(n - 1) * n + x] == SEA));
    }
}

#[test]
fn bit_identical_on_1_2_and_4_threads() {
    for alg in [Algorithm::Fbm, Algorithm::GaussianIslands] {
        let p = IslandParams {
            algorithm: alg,
            seed: 0xdead_beef,
            resolution: 513,
            ..Default::default()
        };
        let run = |threads: usize| on_threads(threads, || generate(&p).unwrap());
        let bits = |i: &Island| {
            let mut v: Vec<u32> = i.field.heights.iter().map(|h| h.to_bits()).collect();
            v.extend(i.water.level.iter().map(|h| h.to_bits()));
            v
        };
        let a = run(1);
        for t in [2, 4] {
            let b = run(t);
            assert!(bits(&a) == bits(&b), "{alg:?}: 1 vs {t} threads");
            assert_eq!(a.water.kind, b.water.kind);
            assert_eq!(a.splat, b.splat);
            assert_eq!(a.biomes, b.biomes);
            let (sa, sb) = (&a.stats, &b.stats);
            assert_eq!(
                (
                    sa.river_count,
                    sa.river_length_m,
                    sa.lake_count,
                    sa.lake_area_m2
                ),
                (
                    sb.river_count,
                    sb.river_length_m,
                    sb.lake_count,
                    sb.lake_area_m2
                )
            );
        }
    }
}

#[test]
fn river_modes_and_erosion_switch() {
    let base = IslandParams {
        resolution: 257,
        chunk_size: 32,
        seed: 3,
        ..Default::default()
    };
    let flow = generate(&base).unwrap();
    assert!(flow.stats.river_count > 0);
    let names: Vec<&str> = flow.stats.stage_ms.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(names, island_core::pipeline::STAGES.to_vec());
    assert!(names.contains(&"erosion") && names.contains(&"drainage"));
    for mode in [RiverMode::Bezier, RiverMode::Off] {
        let mut p = base.clone();
        p.river.mode = mode;
        let i = generate(&p).unwrap();
        assert_eq!(i.stats.river_count, 0, "{mode:?}");
        assert!(i.water.kind.iter().all(|&k| k != RIVER), "{mode:?}");
        assert_ne!(i.field.heights, flow.field.heights);
    }
    let mut p = base.clone();
    p.erosion.enabled = false;
    let plain = generate(&p).unwrap();
    assert_ne!(plain.field.heights, flow.field.heights);
}

#[test]
fn old_parameter_files_load_and_new_settings_validate() {
    let old: IslandParams = serde_json::from_str(r#"{"river":{"enabled":false}}"#).unwrap();
    assert_eq!(old.river.mode, RiverMode::Off);
    assert!(old.erosion.enabled);
    let old: IslandParams = serde_json::from_str(r#"{"river":{"enabled":true}}"#).unwrap();
    assert_eq!(old.river.mode, RiverMode::Flow);
    let new: IslandParams =
        serde_json::from_str(r#"{"river":{"mode":"bezier"},"erosion":{"enabled":false}}"#).unwrap();
    assert_eq!(new.river.mode, RiverMode::Bezier);
    assert!(!new.erosion.enabled);
    let round: IslandParams = serde_json::from_str(&serde_json::to_string(&new).unwrap()).unwrap();
    assert_eq!(round, new);

    let mut p = IslandParams::default();
    p.erosion.amount = 2.0;
    let e = p.validate().unwrap_err();
    assert_eq!(e.field, "erosion.amount", "{e}");
    let mut p = IslandParams::default();
    p.erosion.talus_angle = 1.0;
    assert_eq!(p.validate().unwrap_err().field, "erosion.talus_angle");
    let mut p = IslandParams::default();
    p.drainage.river_area = -1.0;
    assert_eq!(p.validate().unwrap_err().field, "drainage.river_area");
    let mut p = IslandParams::default();
    p.channels.bank_slope = 50.0;
    assert_eq!(p.validate().unwrap_err().field, "channels.bank_slope");
}

/// The default island has lakes: the dams of `basins` close valleys, the drainage fills them
/// flat, and each lake's water leaves it (a river or the dam's outlet next to it).
#[test]
fn default_islands_have_dammed_lakes() {
    // On the round outline (the default before island shapes): AUTO's atolls and small
    // archipelago islands may have no valley a dam suits.
    for seed in [1u64, 2, 31337] {
        let island = generate(&IslandParams {
            seed,
            shape: island_core::params::ShapeParams {
                shape: island_core::params::IslandShape::Round,
                ..Default::default()
            },
            ..Default::default()
        })
        .unwrap();
        let s = &island.stats;
        assert!(s.lake_count >= 1, "seed {seed}: no lake");
        assert!(
            s.lake_area_m2 >= 500.0,
            "seed {seed}: {} m²",
            s.lake_area_m2
        );
        let n = island.field.resolution;
        let w = &island.water;
        let lake_samples = (0..n * n).filter(|&i| w.kind[i] == LAKE).count();
        // Some lake sample touches a river (its inflow or outflow).
        let touches_river = (0..n * n)
            .filter(|&i| w.kind[i] == LAKE)
            .any(|i| neighbours(i, n).any(|j| w.kind[j] == RIVER));
        assert!(lake_samples > 0 && touches_river, "seed {seed}");
        // No basins: fewer lakes (none on most eroded islands).
        let mut p = island.params.clone();
        p.basins.count = 0;
        let plain = generate(&p).unwrap();
        assert!(plain.stats.lake_area_m2 < s.lake_area_m2, "seed {seed}");
    }
}
