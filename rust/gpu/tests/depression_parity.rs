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
        assert_eq!(
            iters,
            simulated_fill_dispatches(&h, n, sea),
            "{name}: the GPU needed another number of dispatches than the tiled schedule"
        );
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
        assert_eq!(
            iters,
            simulated_flat_dispatches(&filled, &h, n, sea),
            "{name}: the GPU needed another number of dispatches than the tiled schedule"
        );
        let rcv = receivers(&filled, &g, n, sea, &h);
        let outlets = rcv.iter().enumerate().filter(|(i, &r)| r as usize == *i);
        assert_eq!(
            flow_order(&rcv, n).len() + outlets.count(),
            n * n,
            "{name}: every sample drains to an outlet"
        );
    }
}

/// Side of the relaxation tiles (`RELAX_TILE` in `rust/gpu/src/uniforms.rs`).
const RELAX_TILE: usize = 32;
/// "Not reached" / +∞ of the relaxations.
const INF: u32 = u32::MAX;

/// Order-preserving key of a height (the shader's `order_key`).
fn order_key(v: f32) -> u32 {
    let b = v.to_bits();
    if b & 0x8000_0000 != 0 {
        !b
    } else {
        b | 0x8000_0000
    }
}

/// At or below the sea, or NaN (the shader's `!(h > sea)`).
fn sea_or_nan(h: f32, sea: f32) -> bool {
    h.partial_cmp(&sea) != Some(std::cmp::Ordering::Greater)
}

/// The shader's outlets: at or below the sea (or NaN), or on the map border.
fn outlet(h: &[f32], n: usize, sea: f32, i: usize) -> bool {
    let (x, z) = (i % n, i / n);
    sea_or_nan(h[i], sea) || x == 0 || z == 0 || x + 1 == n || z + 1 == n
}

/// The 8 neighbours of `i` on the grid.
fn neighbours(n: usize, i: usize) -> impl Iterator<Item = usize> {
    let (x, z) = ((i % n) as i64, (i / n) as i64);
    (0..9)
        .filter(|&k| k != 4)
        .map(move |k| (x + k % 3 - 1, z + k / 3 - 1))
        .filter(move |&(a, b)| a >= 0 && b >= 0 && a < n as i64 && b < n as i64)
        .map(move |(a, b)| b as usize * n + a as usize)
}

/// The relaxation schedule of the shaders, simulated on the CPU: each dispatch reads the state
/// the previous one left (`src`), each `RELAX_TILE²` tile iterates Jacobi-style inside itself
/// (its halo fixed) until an iteration changes nothing, and writes its tile to `dst`.
/// `update(i, read)` is a sample's new state from its neighbours' (`read(j)`), `None` for a
/// sample that never changes. Returns the dispatches needed: the productive ones and one that
/// changes nothing (what the GPU learns).
fn simulated_dispatches<T: Copy + PartialEq>(
    n: usize,
    mut state: Vec<T>,
    update: impl Fn(usize, &dyn Fn(usize) -> T) -> Option<T>,
) -> u32 {
    let tiles = n.div_ceil(RELAX_TILE);
    let mut dispatches = 0;
    loop {
        dispatches += 1;
        let src = state.clone();
        let mut productive = false;
        for (tx, tz) in (0..tiles).flat_map(|tz| (0..tiles).map(move |tx| (tx, tz))) {
            let inside = |i: usize| i % n / RELAX_TILE == tx && i / n / RELAX_TILE == tz;
            let own: Vec<usize> = (tz * RELAX_TILE..((tz + 1) * RELAX_TILE).min(n))
                .flat_map(|z| {
                    (tx * RELAX_TILE..((tx + 1) * RELAX_TILE).min(n)).map(move |x| z * n + x)
                })
                .collect();
            loop {
                let cur = state.clone();
                let read = |j: usize| if inside(j) { cur[j] } else { src[j] };
                let mut moved = false;
                for &i in &own {
                    if let Some(v) = update(i, &read) {
                        moved |= v != cur[i];
                        state[i] = v;
                    }
                }
                if !moved {
                    break;
                }
            }
            productive |= own.iter().any(|&i| state[i] != src[i]);
        }
        if !productive {
            return dispatches;
        }
    }
}

/// [`simulated_dispatches`] of `depression_fill`'s keys (`fill_relax`, whose first dispatch starts from `fill_start`).
fn simulated_fill_dispatches(h: &[f32], n: usize, sea: f32) -> u32 {
    let init = (0..n * n)
        .map(|i| match (sea_or_nan(h[i], sea), outlet(h, n, sea, i)) {
            (true, _) => 0,
            (false, true) => order_key(h[i]),
            _ => INF,
        })
        .collect();
    simulated_dispatches(n, init, |i, read| {
        if outlet(h, n, sea, i) {
            return None;
        }
        let m = neighbours(n, i).map(read).min().unwrap_or(INF);
        Some(read(i).min(order_key(h[i]).max(m)))
    })
}

/// [`simulated_dispatches`] of `flat_routing`'s distances (`flat_init`, `flat_relax`) on the
/// filled surface `filled` of `h`.
fn simulated_flat_dispatches(filled: &[f32], h: &[f32], n: usize, sea: f32) -> u32 {
    let is_flat = |i: usize| {
        if outlet(h, n, sea, i) {
            return false;
        }
        let lower = neighbours(n, i).any(|j| filled[j] < filled[i]);
        let spill =
            neighbours(n, i).any(|j| sea_or_nan(filled[j], filled[i]) && outlet(h, n, sea, j));
        !(lower || spill)
    };
    let flat: Vec<bool> = (0..n * n).map(is_flat).collect();
    let init = (0..n * n)
        .map(|i| {
            if outlet(h, n, sea, i) {
                (INF, INF)
            } else if !flat[i] {
                (0, INF)
            } else {
                let higher = neighbours(n, i).any(|j| filled[j] > filled[i]);
                (INF, if higher { 1 } else { INF })
            }
        })
        .collect();
    let step = |d: u32| if d == INF { INF } else { d + 1 };
    simulated_dispatches(n, init, |i, read| {
        if !flat[i] {
            return None;
        }
        let level = neighbours(n, i).filter(|&j| filled[j] == filled[i]);
        let (lo, hi) = level
            .map(read)
            .fold((INF, INF), |a, b| (a.0.min(b.0), a.1.min(b.1)));
        let (lo0, hi0) = read(i);
        Some((lo0.min(step(lo)), hi0.min(step(hi))))
    })
}
