//! GPU ↔ CPU parity of `shaders/drainage.wgsl`: `accumulate` (upstream counts and areas),
//! `lake_labels`, and the whole `drainage` (lakes, areas, rivers) against `island_core::drainage`.
//! Every one of them is defined without a visiting order (integer counts, min-label
//! components, mins and copies; the river geometry is computed on the host from the same
//! areas), so the parity is exact: the same bits everywhere.
//!
//! Without a compute adapter each test prints `SKIPPED` (fails with `ISLAND_REQUIRE_GPU=1`).

use island_core::basins::dig_lake_basins;
use island_core::channels::{carve_rivers, CarveSettings};
use island_core::drainage::{
    accumulate_counts, areas, depression_fill, drainage, flat_routing, flow_order, lake_labels,
    receivers, Drainage, DrainageSettings, NONE,
};
use island_core::erosion::{self, ErosionSettings};
use island_core::params::IslandParams;
use island_core::pipeline::raw_heights;
use island_gpu::stages;

mod common;
use common::gpu;

/// Test height fields `(name, heights, n, spacing, sea level)`: default islands eroded and
/// dammed as the pipeline does (lakes), a raw one, rough quantised terrain (plateaus, nested
/// pits, sea patches) and a bowl filled to one wide lake.
fn fields() -> Vec<(String, Vec<f32>, usize, f32, f32)> {
    let mut out = Vec::new();
    for seed in [5u64, 31337] {
        let p = IslandParams {
            resolution: 257,
            world_size: 1024.0,
            seed,
            ..Default::default()
        };
        let h = raw_heights(&p).expect("valid parameters");
        let mut e = h.clone();
        erosion::erode(&mut e, 257, p.spacing(), &ErosionSettings::default(), seed);
        dig_lake_basins(&mut e, 257, p.spacing(), 0.0, &p.basins, seed);
        out.push((format!("island {seed}"), h, 257, p.spacing(), 0.0));
        out.push((format!("dammed island {seed}"), e, 257, p.spacing(), 0.0));
    }
    let mut s = 0x9e37_79b9u32;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s as f32 / u32::MAX as f32
    };
    for n in [19usize, 100, 161] {
        let h: Vec<f32> = (0..n * n)
            .map(|_| ((next() * 12.0 - 2.0) * 2.0).round() * 0.5)
            .collect();
        out.push((format!("quantised {n}"), h, n, 1.5, 0.0));
    }
    let n = 120;
    let h: Vec<f32> = (0..n * n)
        .map(|i| {
            let (x, z) = ((i % n) as f32 - 60.0, (i / n) as f32 - 60.0);
            let r = (x * x + z * z).sqrt();
            let notch = if z.abs() < 2.0 && x > 0.0 { 3.0 } else { 0.0 };
            (20.0 - (r - 40.0).abs() * 0.5 - notch).max(1.0)
        })
        .collect();
    out.push(("bowl".into(), h, n, 3.0, 0.5));
    out
}

fn same_f32(a: &[f32], b: &[f32]) -> usize {
    a.iter()
        .zip(b)
        .filter(|(x, y)| x.to_bits() != y.to_bits())
        .count()
}

/// Upstream counts and areas: identical, everywhere.
#[test]
fn accumulate_is_exact() {
    if !gpu("accumulate_is_exact") {
        return;
    }
    for (name, h, n, spacing, sea) in fields() {
        let filled = depression_fill(&h, n, sea);
        let rcv = receivers(&filled, &flat_routing(&filled, n, sea, &h), n, sea, &h);
        let order = flow_order(&rcv, n);
        let cpu = accumulate_counts(&order, &rcv, n * n);
        let cell = spacing * spacing;
        let (g, area) = stages::accumulate(&rcv, n, cell).unwrap();
        let differ = g.iter().zip(&cpu).filter(|(a, b)| a != b).count();
        let most = cpu.iter().max().copied().unwrap_or(0);
        println!("{name}: largest count {most}, {differ} counts differ");
        assert_eq!(differ, 0, "{name}: counts differ");
        assert_eq!(
            same_f32(&area, &areas(&cpu, cell)),
            0,
            "{name}: areas differ"
        );
        // Every sample is counted once, at the outlet it drains to.
        let at_outlets: u64 = (0..n * n)
            .filter(|&i| rcv[i] as usize == i)
            .map(|i| g[i] as u64)
            .sum();
        assert_eq!(at_outlets, (n * n) as u64, "{name}: counted once");
    }
}

/// Lake labels: identical, everywhere.
#[test]
fn lake_labels_are_identical() {
    if !gpu("lake_labels_are_identical") {
        return;
    }
    for (name, h, n, _, sea) in fields() {
        let filled = depression_fill(&h, n, sea);
        let cpu = lake_labels(&h, &filled, n);
        let g = stages::lake_labels(&h, &filled, n).unwrap();
        let differ = g.iter().zip(&cpu).filter(|(a, b)| a != b).count();
        let comps = (0..n * n).filter(|&i| cpu[i] == i as u32).count();
        println!("{name}: {comps} components, {differ} differ");
        assert_eq!(differ, 0, "{name}: labels differ");
    }
}

/// The whole drainage: filled surface, receivers, flow order, areas, lakes, lake of every
/// sample, water levels and river samples, bit for bit.
#[test]
fn drainage_is_identical() {
    if !gpu("drainage_is_identical") {
        return;
    }
    let settings = DrainageSettings::default();
    let small = DrainageSettings {
        lake_min_depth: 0.25,
        lake_min_area: 0.0,
        river_area: 200.0,
        ..Default::default()
    };
    let (mut lakes, mut rivers) = (0, 0);
    for (name, h, n, spacing, sea) in fields() {
        for s in [&settings, &small] {
            let cpu = drainage(&h, n, spacing, sea, s);
            let (g, iters) = stages::drainage(&h, n, spacing, sea, s).unwrap();
            println!(
                "{name}: {} lakes, {} river samples, {iters:?}",
                cpu.lakes.len(),
                cpu.rivers.len()
            );
            assert_same(&name, &g, &cpu);
            lakes += cpu.lakes.len();
            rivers += cpu.rivers.len();
        }
    }
    assert!(
        lakes > 10 && rivers > 1000,
        "{lakes} lakes, {rivers} rivers"
    );
}

/// The pipeline's compact drainage read (`stages::drainage_lean`): the lakes, the lake of every
/// sample, the water levels and the rivers bit for bit as the core's; the flow order the
/// core's restricted to the samples draining at least `river_area`, with their receivers,
/// areas and filled heights. With `river_area` lowered until the list no longer fits the
/// first read (a second round trip), and until it no longer fits the GPU's list (the planes
/// are read instead: the core's whole drainage).
#[test]
fn lean_drainage_is_the_core_drainage_where_read() {
    if !gpu("lean_drainage_is_the_core_drainage_where_read") {
        return;
    }
    let (mut too_large, mut second_read) = (0, 0);
    for (name, h, n, spacing, sea) in fields() {
        for river_area in [
            DrainageSettings::default().river_area,
            40.0 * spacing * spacing,
            spacing * spacing,
        ] {
            let s = DrainageSettings {
                river_area,
                ..Default::default()
            };
            let c = drainage(&h, n, spacing, sea, &s);
            // What the GPU lists: the river candidates and the lake samples.
            let listed: Vec<u32> = (0..(n * n) as u32)
                .filter(|&i| c.area[i as usize] >= river_area || c.lake_id[i as usize] != NONE)
                .collect();
            let g = stages::drainage_lean(&h, n, spacing, sea, &s).unwrap();
            if listed.len() > (n * n / 8).max(1024) {
                // More than the GPU lists: the planes were read, the core's whole drainage.
                println!(
                    "{name}, river area {river_area}: {} listed, planes",
                    listed.len()
                );
                assert_same(&format!("{name}, river area {river_area}"), &g, &c);
                too_large += 1;
                continue;
            }
            let what = format!("{name}, river area {river_area} ({} listed)", listed.len());
            // Listed samples beyond the first read's 1024.
            if listed.len() > 1024 {
                second_read += 1;
            }
            println!("{what}: {} rivers, {} lakes", g.rivers.len(), g.lakes.len());
            assert_eq!(g.lakes, c.lakes, "{what}: lakes");
            assert_eq!(g.lake_id, c.lake_id, "{what}: lake of every sample");
            assert_eq!(
                same_f32(&g.water_level, &c.water_level),
                0,
                "{what}: water levels"
            );
            assert_eq!(g.rivers, c.rivers, "{what}: rivers");
            let order: Vec<u32> = c
                .order
                .iter()
                .copied()
                .filter(|&i| c.area[i as usize] >= river_area)
                .collect();
            assert_eq!(g.order, order, "{what}: flow order of the river candidates");
            for &i in &listed {
                let i = i as usize;
                assert_eq!(g.receivers[i], c.receivers[i], "{what}: receiver of {i}");
                assert_eq!(
                    g.area[i].to_bits(),
                    c.area[i].to_bits(),
                    "{what}: area of {i}"
                );
                assert_eq!(
                    g.filled[i].to_bits(),
                    c.filled[i].to_bits(),
                    "{what}: filled {i}"
                );
            }
        }
    }
    assert!(
        too_large > 0,
        "a river area of one sample overflows the list somewhere"
    );
    assert!(second_read > 0, "some list is longer than its first read");
}

fn assert_same(name: &str, g: &Drainage, c: &Drainage) {
    assert_eq!(same_f32(&g.filled, &c.filled), 0, "{name}: filled");
    assert_eq!(g.receivers, c.receivers, "{name}: receivers");
    assert_eq!(g.order, c.order, "{name}: order");
    assert_eq!(same_f32(&g.area, &c.area), 0, "{name}: area");
    assert_eq!(g.lakes, c.lakes, "{name}: lakes");
    assert_eq!(g.lake_id, c.lake_id, "{name}: lake_id");
    assert_eq!(
        same_f32(&g.water_level, &c.water_level),
        0,
        "{name}: water level"
    );
    assert_eq!(g.rivers, c.rivers, "{name}: rivers");
}

/// Carved heights (pits filled, channels and banks): bit-identical, with the default banks,
/// wide gentle ones, and carving off (pits filled only).
#[test]
fn carve_rivers_is_identical() {
    if !gpu("carve_rivers_is_identical") {
        return;
    }
    let small = DrainageSettings {
        river_area: 500.0,
        ..Default::default()
    };
    let wide = CarveSettings {
        bank_slope: 0.2,
        bank_width: 20.0,
        ..Default::default()
    };
    let off = CarveSettings {
        enabled: false,
        ..Default::default()
    };
    let mut carved = 0;
    for (name, h, n, spacing, sea) in fields() {
        let d = drainage(&h, n, spacing, sea, &small);
        for s in [CarveSettings::default(), wide.clone(), off.clone()] {
            let mut cpu = h.clone();
            let report = carve_rivers(&mut cpu, &d, &s);
            let g = stages::carve_rivers(&h, &d, &s).unwrap();
            let differ = same_f32(&g, &cpu);
            println!(
                "{name} (bank {} m): {} river samples, {report:?}, {differ} differ",
                s.bank_width,
                d.rivers.len()
            );
            assert_eq!(differ, 0, "{name}: carved heights differ");
            carved += report.carved_samples;
        }
    }
    assert!(carved > 10_000, "{carved} samples carved");
}
