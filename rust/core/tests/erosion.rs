//! Erosion, drainage and river carving: what a user relies on.
// Grid tests walk sample indices and read several maps at the same index: plain index loops.
#![allow(clippy::needless_range_loop)]

use island_core::channels::{carve_rivers, CarveSettings};
use island_core::drainage::{drainage, Drainage, DrainageSettings, NONE};
use island_core::erosion::{erode, ErosionSettings};
use island_core::pipeline::raw_heights;
use island_core::IslandParams;
use std::collections::{BinaryHeap, VecDeque};

mod common;
use common::on_threads;

/// The raw island these tests start from: the pipeline's heights before erosion and drainage,
/// with the Bézier river (the default river before the flow rivers).
fn bezier(p: &IslandParams) -> IslandParams {
    let mut p = p.clone();
    p.river.mode = island_core::params::RiverMode::Bezier;
    p
}

const SEEDS: [u64; 3] = [1, 7, 0x5eed_cafe];

/// At or below sea level 0 (or not a number).
fn is_sea(h: f32) -> bool {
    h.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater)
}

struct Run {
    n: usize,
    before: Vec<f32>,
    eroded: Vec<f32>,
    /// Eroded, then shallow pits filled and rivers carved.
    carved: Vec<f32>,
    /// Drainage of `eroded` (the one carving used).
    d: Drainage,
}

fn run(seed: u64) -> Run {
    // The round island these measures were tuned on (the default outline is AUTO since the
    // island shapes; ROUND is the earlier default, bit for bit).
    let mut p = IslandParams {
        seed,
        ..Default::default()
    };
    p.shape.shape = island_core::params::IslandShape::Round;
    let n = p.resolution as usize;
    let sp = p.spacing();
    let before = raw_heights(&bezier(&p)).unwrap();
    let mut eroded = before.clone();
    erode(&mut eroded, n, sp, &ErosionSettings::default(), seed);
    let d = drainage(&eroded, n, sp, 0.0, &DrainageSettings::default());
    let mut carved = eroded.clone();
    carve_rivers(&mut carved, &d, &CarveSettings::default());
    Run {
        n,
        before,
        eroded,
        carved,
        d,
    }
}

fn neighbours(i: usize, n: usize) -> impl Iterator<Item = usize> {
    let (x, z) = ((i % n) as i64, (i / n) as i64);
    (-1..=1i64)
        .flat_map(move |dz| (-1..=1i64).map(move |dx| (x + dx, z + dz)))
        .filter(move |&(a, b)| (a, b) != (x, z) && a >= 0 && b >= 0 && a < n as i64 && b < n as i64)
        .map(move |(a, b)| b as usize * n + a as usize)
}

/// Samples from which a non-ascending path leads to water (sea or lake): flood uphill from
/// the water.
fn drained(h: &[f32], n: usize, water: &[bool]) -> Vec<bool> {
    let mut seen = water.to_vec();
    let mut queue: VecDeque<usize> = (0..n * n).filter(|&i| water[i]).collect();
    while let Some(i) = queue.pop_front() {
        for j in neighbours(i, n) {
            if !seen[j] && h[j] >= h[i] {
                seen[j] = true;
                queue.push_back(j);
            }
        }
    }
    seen
}

fn water(h: &[f32], d: &Drainage) -> Vec<bool> {
    (0..h.len())
        .map(|i| is_sea(h[i]) || d.lake_id[i] != NONE)
        .collect()
}

#[test]
fn no_undrained_pit_on_dry_land_after_drainage_and_carving() {
    for seed in SEEDS {
        let r = run(seed);
        let n = r.n;
        // The raw generator leaves pits: the test would catch them.
        let d0 = drainage(
            &r.before,
            n,
            1024.0 / (n - 1) as f32,
            0.0,
            &DrainageSettings::default(),
        );
        let raw_ok = drained(&r.before, n, &water(&r.before, &d0));
        let raw_pits = raw_ok.iter().filter(|&&ok| !ok).count();
        assert!(
            raw_pits > 0,
            "seed {seed}: the un-processed island has no pit?"
        );
        let ok = drained(&r.carved, n, &water(&r.carved, &r.d));
        let bad: Vec<usize> = (0..n * n).filter(|&i| !ok[i]).collect();
        eprintln!(
            "seed {seed}: undrained samples before {raw_pits}, after {}",
            bad.len()
        );
        assert!(
            bad.is_empty(),
            "seed {seed}: {} dry samples without a non-ascending path to water, first {:?}",
            bad.len(),
            bad.first().map(|&i| (i % n, i / n, r.carved[i]))
        );
    }
}

#[test]
fn rivers_never_rise_downstream_and_reach_a_lake_or_the_sea() {
    for seed in SEEDS {
        let r = run(seed);
        let (n, d, h) = (r.n, &r.d, &r.carved);
        assert!(d.rivers.len() > 200, "seed {seed}: too few river samples");
        let is_river: Vec<bool> = {
            let mut v = vec![false; n * n];
            for s in &d.rivers {
                v[s.index as usize] = true;
            }
            v
        };
        for s in &d.rivers {
            let i = s.index as usize;
            assert!(s.width > 0.0 && s.depth > 0.0 && s.discharge > 0.0);
            let rc = d.receivers[i] as usize;
            assert_ne!(rc, i, "a river sample is not an outlet");
            if is_river[rc] {
                assert!(
                    h[rc] <= h[i],
                    "seed {seed}: river rises from {} to {} at {:?}",
                    h[i],
                    h[rc],
                    (rc % n, rc / n)
                );
                assert!(d.area[rc] >= d.area[i]);
            } else {
                // Leaves the river network only into a lake or the sea.
                assert!(
                    d.lake_id[rc] != NONE || is_sea(r.eroded[rc]),
                    "seed {seed}: river ends on dry land at {:?}",
                    (rc % n, rc / n)
                );
            }
        }
        // Carving raises only shallow pits (to the filled surface), leaves lakes and the sea
        // alone, and cuts channels no deeper than the river beds allow.
        for i in 0..n * n {
            let (e, c) = (r.eroded[i], h[i]);
            if d.lake_id[i] != NONE || is_sea(e) {
                assert_eq!(
                    c.to_bits(),
                    e.to_bits(),
                    "seed {seed}: water sample changed"
                );
            } else {
                assert!(
                    c <= d.filled[i],
                    "seed {seed}: raised above the filled surface"
                );
                assert!(c >= 0.0 && e - c < 10.0, "seed {seed}: cut {e} -> {c}");
            }
        }
        // Every river, followed down its receivers, reaches a lake or the sea.
        let mut reaches = vec![0u8; n * n]; // 0 unknown, 1 yes
        for s in d.rivers.iter() {
            let mut i = s.index as usize;
            let mut path = vec![];
            loop {
                if reaches[i] == 1 || d.lake_id[i] != NONE || is_sea(r.eroded[i]) {
                    break;
                }
                path.push(i);
                let rc = d.receivers[i] as usize;
                assert_ne!(rc, i, "seed {seed}: river ends at an outlet on land");
                assert!(path.len() <= n * n);
                i = rc;
            }
            for p in path {
                reaches[p] = 1;
            }
        }
    }
}

#[test]
fn lakes_are_flat_at_their_spill_height_with_an_outlet() {
    // A cone island with a crater: the crater lake spills over the lowest rim sample.
    let n = 129usize;
    let c = (n / 2) as f32;
    let mut h = vec![0.0f32; n * n];
    for z in 0..n {
        for x in 0..n {
            let r = ((x as f32 - c).powi(2) + (z as f32 - c).powi(2)).sqrt();
            let cone = 40.0 - 0.8 * r;
            let crater = if r < 12.0 {
                15.0 * (1.0 - r / 12.0)
            } else {
                0.0
            };
            // A notch on the rim towards +x lowers the spill height.
            let notch = if x > n / 2 && (z as f32 - c).abs() < 1.5 && r < 14.0 {
                1.0
            } else {
                0.0
            };
            h[z * n + x] = cone - crater - notch + 0.01 * ((x * 7 + z * 13) % 5) as f32;
        }
    }
    let d = drainage(&h, n, 2.0, 0.0, &DrainageSettings::default());
    assert_eq!(d.lakes.len(), 1, "one crater lake");
    check_lakes(&h, &d);
    let lake = &d.lakes[0];
    let o = lake.outlet as usize;
    assert!((o % n) > n / 2, "spills through the notch");
    assert!(lake.depth > 3.0, "{lake:?}");
    // Generated islands: whatever lakes they have obey the same rules.
    let mut total = 0;
    for seed in [1u64, 2, 3, 4] {
        let p = IslandParams {
            seed,
            ..Default::default()
        };
        let raw = raw_heights(&bezier(&p)).unwrap();
        let n = p.resolution as usize;
        let d = drainage(&raw, n, p.spacing(), 0.0, &DrainageSettings::default());
        check_lakes(&raw, &d);
        total += d.lakes.len();
    }
    assert!(total > 0, "the raw islands have lakes");
}

fn check_lakes(h: &[f32], d: &Drainage) {
    let n = d.n;
    let mut count = vec![0u32; d.lakes.len()];
    for i in 0..n * n {
        let id = d.lake_id[i];
        if id == NONE {
            assert!(d.water_level[i].is_nan());
            continue;
        }
        let lake = &d.lakes[id as usize];
        count[id as usize] += 1;
        assert_eq!(d.water_level[i], lake.level, "flat surface");
        assert_eq!(d.filled[i], lake.level);
        assert!(h[i] < lake.level, "lake samples are under water");
        for j in neighbours(i, n) {
            // The shore is at or above the water level.
            if d.lake_id[j] != id {
                assert!(d.filled[j] >= lake.level);
            }
        }
    }
    for (k, lake) in d.lakes.iter().enumerate() {
        assert_eq!(count[k], lake.samples);
        let o = lake.outlet as usize;
        assert_eq!(d.lake_id[o], NONE, "the outlet is on the shore");
        assert_eq!(h[o], lake.level, "the lake spills at its outlet's height");
        assert!(neighbours(o, n).any(|j| d.lake_id[j] == k as u32));
        assert!(lake.depth >= DrainageSettings::default().lake_min_depth);
        // From the outlet the water runs on, never above the lake level, to the sea.
        let mut i = o;
        let mut steps = 0;
        while d.receivers[i] as usize != i {
            i = d.receivers[i] as usize;
            assert!(d.filled[i] <= lake.level);
            steps += 1;
            assert!(steps <= n * n);
        }
    }
}

/// Reference depression filling: Dijkstra-style minimax from the outlets with a binary heap.
fn reference_fill(h: &[f32], n: usize) -> Vec<f32> {
    let mut f = vec![f32::INFINITY; n * n];
    let mut heap = BinaryHeap::new();
    let key = |v: f32| std::cmp::Reverse(ordered(v));
    for i in 0..n * n {
        let (x, z) = (i % n, i / n);
        if is_sea(h[i]) || x == 0 || z == 0 || x + 1 == n || z + 1 == n {
            f[i] = h[i];
            heap.push((key(h[i]), i));
        }
    }
    while let Some((std::cmp::Reverse(k), i)) = heap.pop() {
        if k != ordered(f[i]) {
            continue;
        }
        for j in neighbours(i, n) {
            let v = f[i].max(h[j]);
            if v < f[j] {
                f[j] = v;
                heap.push((key(v), j));
            }
        }
    }
    f
}

fn ordered(v: f32) -> u32 {
    let b = v.to_bits();
    if b & 0x8000_0000 != 0 {
        !b
    } else {
        b | 0x8000_0000
    }
}

#[test]
fn filled_surface_equals_a_reference_minimax_fill() {
    let mut s = 0x1234_5678u32;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s as f32 / u32::MAX as f32
    };
    for n in [5usize, 17, 64] {
        for _ in 0..5 {
            // Rough, pitted terrain with sea patches and plateaus (quantised heights give ties).
            let h: Vec<f32> = (0..n * n)
                .map(|_| ((next() * 12.0 - 2.0) * 2.0).round() * 0.5)
                .collect();
            let d = drainage(&h, n, 2.0, 0.0, &DrainageSettings::default());
            let f = reference_fill(&h, n);
            for i in 0..n * n {
                assert_eq!(d.filled[i].to_bits(), f[i].to_bits(), "n {n} sample {i}");
            }
            // Receivers: outlets are sea or border; others are lower or equal and come first.
            let mut pos = vec![usize::MAX; n * n];
            for (k, &c) in d.order.iter().enumerate() {
                pos[c as usize] = k;
            }
            for i in 0..n * n {
                let r = d.receivers[i] as usize;
                if r == i {
                    continue;
                }
                assert!(d.filled[r] <= d.filled[i]);
                if pos[r] != usize::MAX {
                    assert!(pos[r] < pos[i], "receiver before donor in the order");
                }
            }
            let total: f32 = (0..n * n)
                .filter(|&i| d.receivers[i] as usize == i)
                .map(|i| d.area[i])
                .sum();
            assert_eq!(total, (n * n) as f32 * 4.0, "all area reaches an outlet");
        }
    }
}

/// Pearson correlation of log(slope) and log(area) over land samples draining at least
/// `min_area` m², slope measured over the 8 samples downstream on the filled surface.
fn flint_correlation(h: &[f32], n: usize, spacing: f32) -> f32 {
    let d = drainage(h, n, spacing, 0.0, &DrainageSettings::default());
    let (mut xs, mut ys) = (vec![], vec![]);
    for &c in &d.order {
        let c = c as usize;
        if d.area[c] < 200.0 || d.lake_id[c] != NONE {
            continue;
        }
        let (mut j, mut len) = (c, 0.0f32);
        for _ in 0..8 {
            let r = d.receivers[j] as usize;
            if r == j {
                break;
            }
            let diag = (r % n != j % n) && (r / n != j / n);
            len += if diag { spacing * 2f32.sqrt() } else { spacing };
            j = r;
        }
        let s = (d.filled[c] - d.filled[j]) / len.max(spacing);
        if s > 1e-4 {
            xs.push(d.area[c].ln() as f64);
            ys.push(s.ln() as f64);
        }
    }
    let m = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / m, ys.iter().sum::<f64>() / m);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in xs.iter().zip(&ys) {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
        syy += (y - my) * (y - my);
    }
    (sxy / (sxx * syy).sqrt()) as f32
}

#[test]
fn flints_law_appears_after_erosion() {
    for seed in SEEDS {
        let r = run(seed);
        let sp = 1024.0 / (r.n - 1) as f32;
        let before = flint_correlation(&r.before, r.n, sp);
        let after = flint_correlation(&r.eroded, r.n, sp);
        eprintln!("seed {seed}: log S / log A correlation {before:.3} -> {after:.3}");
        assert!(after < -0.3, "seed {seed}: {after}");
        assert!(after < before - 0.2, "seed {seed}: {before} -> {after}");
    }
}

#[test]
fn erosion_keeps_the_coastline_and_the_main_peak() {
    for seed in SEEDS {
        let r = run(seed);
        let changed = r
            .before
            .iter()
            .zip(&r.eroded)
            .filter(|(a, b)| (**a > 0.0) != (**b > 0.0))
            .count();
        let land = r.before.iter().filter(|&&v| v > 0.0).count();
        let peak = |v: &[f32]| v.iter().fold(f32::MIN, |a, &b| a.max(b));
        let (p0, p1) = (peak(&r.before), peak(&r.eroded));
        let lowered = r
            .before
            .iter()
            .zip(&r.eroded)
            .filter(|(a, b)| **b < **a - 0.5)
            .count();
        eprintln!(
            "seed {seed}: land/sea flipped on {changed} of {land} land samples, \
             peak {p0:.1} -> {p1:.1} m, {lowered} samples lowered > 0.5 m"
        );
        assert!(
            (changed as f64) < 0.002 * land as f64,
            "seed {seed}: {changed} samples changed side"
        );
        assert!(
            p1 >= 0.85 * p0 && p1 <= p0 + 0.5,
            "seed {seed}: peak {p0} -> {p1}"
        );
        assert!(
            lowered as f64 > 0.2 * land as f64,
            "seed {seed}: erosion did little"
        );
        assert!(r.eroded.iter().chain(&r.carved).all(|v| v.is_finite()));
    }
}

#[test]
fn same_bits_on_any_thread_count() {
    let p = IslandParams {
        seed: 3,
        ..Default::default()
    };
    let raw = raw_heights(&bezier(&p)).unwrap();
    let n = p.resolution as usize;
    let sp = p.spacing();
    let once = || {
        let mut h = raw.clone();
        erode(&mut h, n, sp, &ErosionSettings::default(), 3);
        let d = drainage(&h, n, sp, 0.0, &DrainageSettings::default());
        carve_rivers(&mut h, &d, &CarveSettings::default());
        (h, d)
    };
    let results: Vec<_> = [1usize, 2, 4]
        .iter()
        .map(|&t| on_threads(t, once))
        .collect();
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    for (h, d) in &results[1..] {
        assert!(bits(h) == bits(&results[0].0), "heights differ");
        assert!(d.receivers == results[0].1.receivers);
        assert!(d.order == results[0].1.order);
        assert!(bits(&d.area) == bits(&results[0].1.area));
        assert!(bits(&d.filled) == bits(&results[0].1.filled));
        assert!(d.rivers == results[0].1.rivers);
        assert!(d.lakes == results[0].1.lakes);
    }
}

#[test]
fn settings_validate_and_disabled_erosion_changes_nothing() {
    assert!(ErosionSettings::default().validate().is_ok());
    assert!(DrainageSettings::default().validate().is_ok());
    assert!(CarveSettings::default().validate().is_ok());
    for bad in [
        ErosionSettings {
            amount: 1.5,
            ..Default::default()
        },
        ErosionSettings {
            talus_angle: f32::NAN,
            ..Default::default()
        },
        ErosionSettings {
            steps: 0,
            ..Default::default()
        },
    ] {
        assert!(bad.validate().is_err());
    }
    assert!(DrainageSettings {
        river_area: 0.0,
        ..Default::default()
    }
    .validate()
    .is_err());
    let n = 65;
    let h0: Vec<f32> = (0..n * n)
        .map(|i| 30.0 - ((i % n) as f32 - 32.0).abs() - ((i / n) as f32 - 32.0).abs())
        .collect();
    for s in [
        ErosionSettings {
            enabled: false,
            ..Default::default()
        },
        ErosionSettings {
            amount: 0.0,
            ..Default::default()
        },
    ] {
        let mut h = h0.clone();
        let rep = erode(&mut h, n, 4.0, &s, 1);
        assert_eq!(h, h0);
        assert_eq!(rep.steps, 0);
    }
    // Tiny grids and flat sea do not panic.
    for n in [1usize, 2, 3] {
        let mut h = vec![1.0f32; n * n];
        erode(&mut h, n, 1.0, &ErosionSettings::default(), 0);
        let d = drainage(&h, n, 1.0, 0.0, &DrainageSettings::default());
        carve_rivers(&mut h, &d, &CarveSettings::default());
    }
    let d = drainage(&[-1.0; 16], 4, 1.0, 0.0, &DrainageSettings::default());
    assert!(d.order.is_empty() && d.rivers.is_empty());
}

#[test]
fn every_algorithm_and_size_keeps_the_invariants() {
    use island_core::Algorithm;
    for (k, alg) in Algorithm::ALL.into_iter().enumerate() {
        for res in [65u32, 257, 513] {
            let p = IslandParams {
                seed: 11 + k as u64,
                resolution: res,
                algorithm: alg,
                ..Default::default()
            };
            let raw = raw_heights(&bezier(&p)).unwrap();
            let n = res as usize;
            let sp = p.spacing();
            let mut h = raw.clone();
            let rep = erode(&mut h, n, sp, &ErosionSettings::default(), p.seed);
            assert!(rep.steps > 0);
            let d = drainage(&h, n, sp, 0.0, &DrainageSettings::default());
            carve_rivers(&mut h, &d, &CarveSettings::default());
            assert!(h.iter().all(|v| v.is_finite()), "{alg:?} {res}");
            let ok = drained(&h, n, &water(&h, &d));
            assert!(
                ok.iter().all(|&b| b),
                "{alg:?} {res}: undrained dry samples"
            );
            let peak = |v: &[f32]| v.iter().fold(f32::MIN, |a, &b| a.max(b));
            let p0 = peak(&raw);
            assert!(
                peak(&h) >= 0.6 * p0,
                "{alg:?} {res}: peak {p0} -> {}",
                peak(&h)
            );
        }
    }
}

/// `depression_fill` and `flat_routing` against their order-free definitions, evaluated
/// here by plain Jacobi sweeps (every sample from the previous sweep, until nothing changes),
/// as the GPU twins may: `filled = max(h, min of the neighbours)` from +∞ with the outlets
/// fixed, and the breadth-first distances as shortest paths. The CPU's Priority-Flood and
/// queues must give the same bits and receivers; with them every sample drains to an outlet.
#[test]
fn fill_and_flat_routing_follow_their_order_free_definitions() {
    use island_core::drainage::{depression_fill, flat_routing, flow_order, receivers};
    let mut s = 0x2545_f491u32;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s as f32 / u32::MAX as f32
    };
    let mut fields: Vec<(Vec<f32>, usize)> = Vec::new();
    for n in [5usize, 17, 64, 90] {
        for _ in 0..3 {
            let h = (0..n * n)
                .map(|_| ((next() * 12.0 - 2.0) * 2.0).round() * 0.5)
                .collect();
            fields.push((h, n));
        }
    }
    // A bowl filled to one wide flat, spilling through a notch in its rim.
    let n = 80;
    let bowl = (0..n * n)
        .map(|i| {
            let (x, z) = ((i % n) as f32 - 40.0, (i / n) as f32 - 40.0);
            let r = (x * x + z * z).sqrt();
            let notch = if z.abs() < 2.0 && x > 0.0 { 3.0 } else { 0.0 };
            (15.0 - (r - 30.0).abs() * 0.5 - notch).max(1.0)
        })
        .collect();
    fields.push((bowl, n));
    const INF: u32 = u32::MAX;
    let mut flats_seen = 0;
    for (h, n) in fields {
        let len = n * n;
        let outlet = |i: usize| {
            let (x, z) = (i % n, i / n);
            is_sea(h[i]) || x == 0 || z == 0 || x + 1 == n || z + 1 == n
        };
        // Filled surface.
        let mut f: Vec<f32> = (0..len)
            .map(|i| if outlet(i) { h[i] } else { f32::INFINITY })
            .collect();
        loop {
            let g: Vec<f32> = (0..len)
                .map(|i| {
                    if outlet(i) {
                        return f[i];
                    }
                    let m = neighbours(i, n).map(|j| f[j]).fold(f32::INFINITY, f32::min);
                    h[i].max(m)
                })
                .collect();
            if g == f {
                break;
            }
            f = g;
        }
        let filled = depression_fill(&h, n, 0.0);
        for i in 0..len {
            assert_eq!(
                filled[i].to_bits(),
                f[i].to_bits(),
                "filled, n {n} sample {i}"
            );
        }
        // Flat routing: classes, distances, receivers.
        let mut want = vec![NONE; len];
        let mut flat = vec![false; len];
        let mut drain = vec![false; len];
        for i in (0..len).filter(|&i| !outlet(i)) {
            let lower = neighbours(i, n).any(|j| f[j] < f[i]);
            let spill = neighbours(i, n).find(|&j| {
                outlet(j) && f[j].partial_cmp(&f[i]) != Some(std::cmp::Ordering::Greater)
            });
            if lower {
                drain[i] = true;
            } else if let Some(j) = spill {
                drain[i] = true;
                want[i] = j as u32;
            } else {
                flat[i] = true;
            }
        }
        let same = |i: usize, j: usize| f[j] == f[i];
        let mut lo: Vec<u32> = (0..len).map(|i| if drain[i] { 0 } else { INF }).collect();
        let mut hi: Vec<u32> = (0..len)
            .map(|i| {
                if flat[i] && neighbours(i, n).any(|j| f[j] > f[i]) {
                    1
                } else {
                    INF
                }
            })
            .collect();
        loop {
            let step = |d: &[u32], i: usize| -> u32 {
                if !flat[i] {
                    return d[i];
                }
                let m = neighbours(i, n)
                    .filter(|&j| same(i, j))
                    .map(|j| d[j])
                    .min()
                    .unwrap_or(INF);
                d[i].min(m.saturating_add(1))
            };
            let (l2, h2): (Vec<u32>, Vec<u32>) =
                (0..len).map(|i| (step(&lo, i), step(&hi, i))).unzip();
            if l2 == lo && h2 == hi {
                break;
            }
            (lo, hi) = (l2, h2);
        }
        let key = |i: usize| -> i64 {
            let z = |d: u32| if d == INF { 0 } else { d as i64 };
            if drain[i] {
                i64::MIN
            } else {
                2 * z(lo[i]) - z(hi[i])
            }
        };
        for i in (0..len).filter(|&i| flat[i]) {
            let mut best = (key(i), NONE);
            for j in neighbours(i, n).filter(|&j| same(i, j) && !outlet(j)) {
                if key(j) < best.0 {
                    best = (key(j), j as u32);
                }
            }
            assert_ne!(best.1, NONE, "flat sample {i} has a way down");
            want[i] = best.1;
        }
        assert_eq!(
            flat_routing(&filled, n, 0.0, &h),
            want,
            "flat receivers, n {n}"
        );
        let rcv = receivers(&filled, &want, n, 0.0, &h);
        let outlets = (0..len).filter(|&i| rcv[i] as usize == i).count();
        assert_eq!(
            flow_order(&rcv, n).len() + outlets,
            len,
            "every sample drains, n {n}"
        );
        flats_seen += flat.iter().filter(|&&f| f).count();
    }
    assert!(
        flats_seen > 1000,
        "the fields have flats ({flats_seen} samples)"
    );
}

/// The fill lists the samples it may have raised (`Drainage::raised`): every sample whose
/// filled height is above the input height is among them; and `carve_rivers` gives the same
/// heights and report with the list as with a scan of the whole map (the GPU's drainage has no
/// list).
#[test]
fn the_raised_list_holds_the_raised_samples_and_carving_with_it_equals_the_scan() {
    for seed in SEEDS {
        let r = run(seed);
        let mut listed =
            r.d.raised
                .clone()
                .expect("the CPU drainage lists its samples");
        listed.sort_unstable();
        listed.dedup();
        let want: Vec<u32> = (0..r.n * r.n)
            .filter(|&i| r.d.filled[i] > r.eroded[i])
            .map(|i| i as u32)
            .collect();
        assert!(
            !want.is_empty(),
            "seed {seed}: no pit filled, the test proves nothing"
        );
        let missing: Vec<&u32> = want
            .iter()
            .filter(|i| listed.binary_search(i).is_err())
            .collect();
        assert!(
            missing.is_empty(),
            "seed {seed}: raised but not listed: {missing:?}"
        );
        let scan = Drainage {
            raised: None,
            ..r.d.clone()
        };
        for settings in [
            CarveSettings::default(),
            CarveSettings {
                enabled: false,
                ..Default::default()
            },
        ] {
            let (mut a, mut b) = (r.eroded.clone(), r.eroded.clone());
            let ra = carve_rivers(&mut a, &r.d, &settings);
            let rb = carve_rivers(&mut b, &scan, &settings);
            assert_eq!(ra, rb, "seed {seed}");
            assert!(ra.filled_samples > 0, "seed {seed}");
            assert!(
                a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()),
                "seed {seed}: carved heights differ"
            );
        }
    }
}
