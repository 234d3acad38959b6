//! GPU ↔ CPU parity of `shaders/depression.wgsl`: `depression_fill` and `flat_routing` against
//! `island_core::drainage`'s functions of the same name. Both are defined without any visiting
//! order (min / max of copied heights, integer shortest-path distances), so the parity is
//! exact: the same bits for every filled height, the same receiver for every sample.
//!
//! Without a compute adapter each test prints `SKIPPED` (fails with `ISLAND_REQUIRE_GPU=1`).

use island_core::drainage::{depression_fill, flat_routing, flow_order, receivers, NONE};
use island_core::erosion::{self, ErosionSettings};
use island_core::params::IslandParams;
use island_core::pipeline::raw_heights;
use island_gpu::stages;

mod common;
use common::gpu;

/// Test height fields `(name, heights, n, sea level)`: default islands before and after
/// erosion, and rough quantised terrain (many ties: plateaus, nested pits, sea patches).
fn fields() -> Vec<(String, Vec<f32>, usize, f32)> {
    let mut out = Vec::new();
    for seed in [5u64, 31337] {
        let mut p = IslandParams {
            resolution: 257,
            world_size: 1024.0,
            seed,
            ..Default::default()
        };
        // One big island with inland pits and flats (an AUTO outline may be an atoll or a
        // scatter of islets without them).
        p.shape.shape = island_core::params::IslandShape::Round;
        let h = raw_heights(&p).expect("valid parameters");
        let mut e = h.clone();
        erosion::erode(&mut e, 257, p.spacing(), &ErosionSettings::default(), seed);
        out.push((format!("island {seed}"), h, 257, 0.0));
        out.push((format!("eroded island {seed}"), e, 257, 0.0));
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
        out.push((format!("quantised {n}"), h, n, 0.0));
    }
    // A smooth bowl (one large pit, filled to a wide flat) with a notch in its rim.
    let n = 120;
    let h: Vec<f32> = (0..n * n)
        .map(|i| {
            let (x, z) = ((i % n) as f32 - 60.0, (i / n) as f32 - 60.0);
            let r = (x * x + z * z).sqrt();
            let notch = if z.abs() < 2.0 && x > 0.0 { 3.0 } else { 0.0 };
            (20.0 - (r - 40.0).abs() * 0.5 - notch).max(1.0) + (r * 0.1).sin() * 0.0
        })
        .collect();
    out.push(("bowl".into(), h, n, 0.5));
    out
}

/// Filled heights: bit-identical, everywhere, on every field.
#[test]
fn depression_fill_is_bit_identical() {
    if !gpu("depression_fill_is_bit_identical") {
        return;
    }
    for (name, h, n, sea) in fields() {
        let cpu = depression_fill(&h, n, sea);
        let (g, iters) = stages::depression_fill(&h, n, sea).unwrap();
        let differ = g
            .iter()
            .zip(&cpu)
            .filter(|(a, b)| a.to_bits() != b.to_bits())
            .count();
        let raised = cpu.iter().zip(&h).filter(|(f, h)| f > h).count();
        println!("{name}: {iters} relaxation dispatches, {raised} samples filled, {differ} differ");
        assert_eq!(differ, 0, "{name}: filled heights differ");
        assert!(raised > 0, "{name}: the field has depressions");
    }
}

/// Flat receivers: identical, everywhere; with D8 they drain every sample to an outlet.
#[test]
fn flat_routing_is_identical() {
    if !gpu("flat_routing_is_identical") {
        return;
    }
    for (name, h, n, sea) in fields() {
        let filled = depression_fill(&h, n, sea);
        let cpu = flat_routing(&filled, n, sea, &h);
        let (g, iters) = stages::flat_routing(&filled, n, sea, &h).unwrap();
        let differ = g.iter().zip(&cpu).filter(|(a, b)| a != b).count();
        let flats = cpu.iter().filter(|&&r| r != NONE).count();
        println!("{name}: {iters} relaxation dispatches, {flats} flat samples, {differ} differ");
        assert_eq!(differ, 0, "{name}: flat receivers differ");
        assert!(flats > 0, "{name}: the field has flats");
        let rcv = receivers(&filled, &g, n, sea, &h);
        let outlets = rcv.iter().enumerate().filter(|(i, &r)| r as usize == *i);
        assert_eq!(
            flow_order(&rcv, n).len() + outlets.count(),
            n * n,
            "{name}: every sample drains to an outlet"
        );
    }
}
