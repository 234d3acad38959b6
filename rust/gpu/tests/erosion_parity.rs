//! GPU ↔ CPU parity of the erosion passes (`shaders/erosion.wgsl`): each pass against the
//! `island_core::erosion` kernel of the same name on the same inputs, then the whole erosion.
//!
//! Run with `cargo test -p island_gpu --test erosion_parity -- --nocapture` to see the measured
//! differences. Without a compute adapter each test prints `SKIPPED` (fails with
//! `ISLAND_REQUIRE_GPU=1`).

use island_core::erosion::{
    self, depression_fill, erosion_plan, flat_routing, flow_accumulation, flow_order,
    flow_receivers, stream_power, ErosionSettings, StepParams, THERMAL_PASSES,
};
use island_core::params::IslandParams;
use island_core::pipeline::raw_heights;
use island_gpu::stages;

mod common;
use common::gpu;

const SEEDS: [u64; 3] = [5, 31337, 0x1234_5678_9abc_def0];

/// The default round island's relief before erosion (1024 m, `res` samples per side).
fn island(res: u32, seed: u64) -> (Vec<f32>, IslandParams) {
    let mut p = IslandParams {
        resolution: res,
        world_size: 1024.0,
        seed,
        ..Default::default()
    };
    p.shape.shape = island_core::params::IslandShape::Round;
    (raw_heights(&p).expect("valid parameters"), p)
}

/// The plan of the default erosion on a `res²` island (evolution grid = the island's grid when
/// `res` ≤ 257).
fn plan(res: u32, seed: u64) -> (Vec<f32>, usize, StepParams) {
    let (h, p) = island(res, seed);
    let s = ErosionSettings {
        resolution: res,
        ..ErosionSettings::default()
    };
    let plan = erosion_plan(res as usize, p.spacing(), &s, seed).expect("erosion enabled");
    assert_eq!(plan.nc, res as usize);
    (h, plan.nc, plan.params)
}

/// Every intermediate of one CPU step (`island_core::erosion`'s kernels in order).
struct StepState {
    h: Vec<f32>,
    filled: Vec<f32>,
    flat: Vec<u32>,
    rcv: Vec<u32>,
    order: Vec<u32>,
    area: Vec<f32>,
    /// After `stream_power`.
    h_sp: Vec<f32>,
    /// After `deposition`.
    h_dep: Vec<f32>,
    budget: erosion::SedimentBudget,
}

fn cpu_step(h: &[f32], n: usize, p: &StepParams, k: u32) -> StepState {
    let filled = depression_fill(h, n, p.sea);
    let flat = flat_routing(&filled, n, p.sea, h);
    let rcv = flow_receivers(&filled, &flat, n, p.sea, h, p.step_seed(k));
    let order = flow_order(&rcv, n);
    let area = flow_accumulation(&order, &rcv, n * n, p.dx * p.dx);
    let mut h_sp = h.to_vec();
    stream_power(&mut h_sp, &order, &rcv, &area, n, p);
    let mut h_dep = h_sp.clone();
    let budget = erosion::deposition(&mut h_dep, h, &filled, &order, &rcv, &area, p);
    StepState {
        h: h.to_vec(),
        filled,
        flat,
        rcv,
        order,
        area,
        h_sp,
        h_dep,
        budget,
    }
}

/// The CPU state after `steps` whole steps (the input of step `steps`).
fn evolved(h: &[f32], n: usize, p: &StepParams, steps: u32) -> Vec<f32> {
    let mut h = h.to_vec();
    for k in 0..steps {
        let s = cpu_step(&h, n, p, k);
        h = s.h_dep;
        for _ in 0..THERMAL_PASSES {
            let src = h.clone();
            erosion::thermal(&mut h, &src, n, p);
        }
    }
    h
}

/// Largest absolute difference, where, and how many samples differ at all.
fn diff(name: &str, gpu: &[f32], cpu: &[f32]) -> (f32, usize) {
    assert_eq!(gpu.len(), cpu.len());
    let (mut e, mut at, mut ne) = (0.0f32, 0, 0);
    for (i, (a, b)) in gpu.iter().zip(cpu).enumerate() {
        if a.to_bits() != b.to_bits() {
            ne += 1;
        }
        let d = (a - b).abs();
        if d > e || d.is_nan() {
            e = d;
            at = i;
        }
    }
    println!(
        "{name}: max abs difference {e:.3e} at {at} (gpu {} cpu {}), {ne} of {} samples not bit-identical",
        gpu[at],
        cpu[at],
        gpu.len()
    );
    (e, ne)
}

/// `resample` and `upsample_delta` use only adds and rounded products, in the CPU's order:
/// bit-identical.
#[test]
fn erosion_resample_and_upsample_are_bit_identical() {
    if !gpu("erosion_resample_and_upsample_are_bit_identical") {
        return;
    }
    for seed in SEEDS {
        let (h, _) = island(513, seed);
        for m in [129, 257, 200] {
            let cpu = erosion::resample(&h, 513, m);
            let g = stages::resample(&h, 513, m).unwrap();
            let (_, ne) = diff(&format!("resample 513->{m} seed {seed}"), &g, &cpu);
            assert_eq!(ne, 0, "resample is bit-identical");
            // A height change on the coarse grid, upsampled back.
            let delta: Vec<f32> = cpu
                .iter()
                .enumerate()
                .map(|(i, &v)| (v * 0.37).sin() * 3.0 + (i % 7) as f32 * 0.01)
                .collect();
            let mut up = h.clone();
            erosion::upsample_delta(&mut up, 513, &delta, m, 0.0);
            let g = stages::upsample_delta(&h, 513, &delta, m, 0.0).unwrap();
            let (_, ne) = diff(&format!("upsample_delta {m}->513 seed {seed}"), &g, &up);
            assert_eq!(ne, 0, "upsample_delta is bit-identical");
        }
    }
}

/// Receivers: integer output from slopes compared in the CPU's order. Exact wherever the
/// division `drop / √2` is correctly rounded (lavapipe); WGSL allows 2.5 ULP for `/`, which
/// can move a pick across a cumulative-slope boundary, so at most 0.1 % may differ.
#[test]
fn erosion_flow_receivers_match() {
    if !gpu("erosion_flow_receivers_match") {
        return;
    }
    for seed in SEEDS {
        let (h0, n, p) = plan(257, seed);
        for k in [0, 3] {
            let h = evolved(&h0, n, &p, k);
            let s = cpu_step(&h, n, &p, k);
            let g =
                stages::flow_receivers(&s.filled, &s.flat, n, p.sea, &h, p.step_seed(k)).unwrap();
            let ne = g.iter().zip(&s.rcv).filter(|(a, b)| a != b).count();
            println!(
                "flow_receivers seed {seed} step {k}: {ne} of {} differ",
                n * n
            );
            assert!(ne * 1000 <= n * n, "{ne} receivers differ");
        }
    }
}

/// Side of the tiles of the donor-first passes (`DONOR_TILE` in `rust/gpu/src/uniforms.rs`).
const DONOR_TILE: usize = 48;

/// The dispatches the tiled donor-first iteration of `erosion.wgsl` needs for the receivers
/// `rcv`, simulated on the CPU: in dispatch k (tiles of `DONOR_TILE²` shifted by half a tile
/// when k is odd) a sample is processed once each donor was processed in an earlier dispatch,
/// or in this one inside the same tile. Returns the last dispatch (1-based) that processed one.
fn tiled_dispatches(rcv: &[u32], n: usize) -> u32 {
    let len = n * n;
    let mut donors = vec![Vec::new(); len];
    for (j, &r) in rcv.iter().enumerate() {
        if r as usize != j {
            donors[r as usize].push(j);
        }
    }
    let mut done = vec![0u32; len]; // 1 + the dispatch that processed the sample, 0 before
    let (mut left, mut k) = (len, 0u32);
    while left > 0 {
        assert!(k as usize <= len, "the receivers form a cycle");
        let shift = (k as usize % 2) * DONOR_TILE / 2;
        let tile = |i: usize| ((i % n + shift) / DONOR_TILE, (i / n + shift) / DONOR_TILE);
        let ready = |i: usize, done: &[u32]| {
            donors[i]
                .iter()
                .all(|&j| done[j] != 0 && (done[j] <= k || tile(j) == tile(i)))
        };
        let mut front: Vec<usize> = (0..len)
            .filter(|&i| done[i] == 0 && ready(i, &done))
            .collect();
        while let Some(i) = front.pop() {
            if done[i] != 0 {
                continue;
            }
            done[i] = k + 1;
            left -= 1;
            let r = rcv[i] as usize;
            if r != i && done[r] == 0 && tile(r) == tile(i) && ready(r, &done) {
                front.push(r);
            }
        }
        k += 1;
    }
    *done.iter().max().unwrap()
}

/// Accumulation of `dx² = 16 m²` cells: every partial sum is a whole multiple of 16 below
/// 2^24, exact in any order, so the areas are bit-identical; the dispatch count is what the
/// tiled schedule needs (far fewer than the longest donor chain, one dispatch per level).
#[test]
fn erosion_flow_accumulation_is_exact() {
    if !gpu("erosion_flow_accumulation_is_exact") {
        return;
    }
    for seed in SEEDS {
        let (h0, n, p) = plan(257, seed);
        assert_eq!(p.dx, 4.0);
        for k in [0, 5] {
            let h = evolved(&h0, n, &p, k);
            let s = cpu_step(&h, n, &p, k);
            let (g, iters) = stages::flow_accumulation(&s.rcv, n, p.dx * p.dx).unwrap();
            let (_, ne) = diff(
                &format!("flow_accumulation seed {seed} step {k} ({iters} dispatches)"),
                &g,
                &s.area,
            );
            assert_eq!(ne, 0);
            // The longest chain, from the CPU receivers: one dispatch per level untiled.
            let mut depth = vec![0u32; n * n];
            for &c in &s.order {
                let r = s.rcv[c as usize] as usize;
                depth[c as usize] = depth[r] + 1;
            }
            let levels = depth.iter().max().unwrap() + 1;
            let want = tiled_dispatches(&s.rcv, n);
            println!("  {levels} levels, {want} tiled dispatches");
            assert_eq!(iters, want, "dispatches that processed a sample");
            assert!(want * 4 <= levels, "{want} dispatches for {levels} levels");
        }
    }
}

/// Stream power by pointer jumping: the same affine-with-clamp maps composed in a different
/// order (`a + b·(a' + b'·x)` instead of evaluating each sample from its receiver), so each
/// height carries a few roundings of its own magnitude (≤ 120 m, ulp 7.6e-6 m) per jumping
/// round (17 at 257²). Tolerance: 1e-3 m; the measured maximum is printed.
#[test]
fn erosion_stream_power_matches() {
    if !gpu("erosion_stream_power_matches") {
        return;
    }
    for seed in SEEDS {
        let (h0, n, p) = plan(257, seed);
        for k in [0, 5] {
            let h = evolved(&h0, n, &p, k);
            let s = cpu_step(&h, n, &p, k);
            let g = stages::stream_power(&h, &s.rcv, &s.area, n, &p).unwrap();
            let (e, _) = diff(&format!("stream_power seed {seed} step {k}"), &g, &s.h_sp);
            assert!(e <= 1e-3, "stream_power differs by {e} m");
            let lowered = s.h_sp.iter().zip(&h).filter(|(a, b)| a < b).count();
            assert!(
                lowered > n * n / 100,
                "the test step erodes ({lowered} samples)"
            );
        }
    }
}

/// Deposition, donor-first: the sediment arriving at a confluence is summed in neighbour order
/// on the GPU, in reverse flood order on the CPU (float sums in another order). Tolerance on
/// the heights 1e-3 m; on the volumes 1e-4 relative.
#[test]
fn erosion_deposition_matches() {
    if !gpu("erosion_deposition_matches") {
        return;
    }
    for seed in SEEDS {
        let (h0, n, p) = plan(257, seed);
        for k in [0, 5] {
            let h = evolved(&h0, n, &p, k);
            let s = cpu_step(&h, n, &p, k);
            let (g, b) =
                stages::deposition(&s.h_sp, &s.h, &s.filled, &s.rcv, &s.area, n, &p).unwrap();
            let (e, _) = diff(&format!("deposition seed {seed} step {k}"), &g, &s.h_dep);
            assert!(e <= 1e-3, "deposition differs by {e} m");
            println!("  budget gpu {b:?}\n         cpu {:?}", s.budget);
            for (a, c, what) in [
                (b.eroded, s.budget.eroded, "eroded"),
                (b.deposited, s.budget.deposited, "deposited"),
                (b.exported, s.budget.exported, "exported"),
            ] {
                assert!(
                    (a - c).abs() <= 1e-4 * c.abs().max(1.0),
                    "{what}: gpu {a} cpu {c}"
                );
            }
            assert!(s.budget.deposited > 0.0 && s.budget.exported > 0.0);
        }
    }
}

/// Thermal relaxation and creep: the CPU's operations in its order, products rounded. Exact
/// where `/` is correctly rounded (lavapipe); WGSL's 2.5-ULP division bounds the difference by
/// a few ulps of the Laplacian term: tolerance 1e-5 m.
#[test]
fn erosion_thermal_matches() {
    if !gpu("erosion_thermal_matches") {
        return;
    }
    for seed in SEEDS {
        let (h0, n, p) = plan(257, seed);
        let h = evolved(&h0, n, &p, 2);
        let mut cpu = h.clone();
        erosion::thermal(&mut cpu, &h, n, &p);
        let g = stages::thermal(&h, n, &p).unwrap();
        let (e, ne) = diff(&format!("thermal seed {seed}"), &g, &cpu);
        assert!(e <= 1e-5, "thermal differs by {e} m ({ne} samples)");
        assert!(
            cpu.iter().zip(&h).any(|(a, b)| a != b),
            "the pass changes heights"
        );
    }
}

/// Distribution of `|gpu − cpu|` over the land samples, printed; returns the fractions above
/// 0.01, 0.1 and 1 m and the maximum.
fn distribution(name: &str, gpu: &[f32], cpu: &[f32], base: &[f32]) -> ([f64; 3], f32) {
    let land: Vec<f32> = gpu
        .iter()
        .zip(cpu)
        .zip(base)
        .filter(|(_, &b)| b > 0.0)
        .map(|((a, c), _)| (a - c).abs())
        .collect();
    let frac = |t: f32| land.iter().filter(|&&d| d > t).count() as f64 / land.len() as f64;
    let fr = [frac(0.01), frac(0.1), frac(1.0)];
    let max = land.iter().fold(0.0f32, |m, &d| m.max(d));
    let mut sorted = land.clone();
    sorted.sort_by(f32::total_cmp);
    let pct = |q: f64| sorted[((sorted.len() - 1) as f64 * q) as usize];
    println!(
        "{name}: {} land samples; |gpu - cpu| > 0.01 m: {:.3}%, > 0.1 m: {:.3}%, > 1 m: {:.4}%; \
         median {:.2e}, p99 {:.2e}, p99.9 {:.2e}, max {max:.2e} m",
        land.len(),
        fr[0] * 100.0,
        fr[1] * 100.0,
        fr[2] * 100.0,
        pct(0.5),
        pct(0.99),
        pct(0.999),
    );
    (fr, max)
}

/// The whole erosion, GPU vs CPU, on the default island at 513² (evolution grid 257², ten
/// steps). Rounding differences of a step (above) change the next step's filled surface by
/// ulps, and a receiver pick near a cumulative-slope boundary can then flip: the valley below
/// takes another course for the rest of the evolution. So the tolerance is statistical: at most
/// 2 % of the land samples differ by more than 0.1 m and 0.5 % by more than 1 m (the measured
/// distribution is printed); the volumes agree within 5 %.
#[test]
fn erosion_erode_end_to_end() {
    if !gpu("erosion_erode_end_to_end") {
        return;
    }
    for seed in SEEDS {
        let (h, p) = island(513, seed);
        let s = ErosionSettings::default();
        let mut cpu = h.clone();
        let rc = erosion::erode(&mut cpu, 513, p.spacing(), &s, seed);
        let (g, rg) = stages::erode(&h, 513, p.spacing(), &s, seed, None).unwrap();
        let (fr, _) = distribution(&format!("erode seed {seed}"), &g, &cpu, &h);
        println!("  report gpu {rg:?}\n         cpu {rc:?}");
        assert!(fr[1] <= 0.02 && fr[2] <= 0.005, "{fr:?}");
        assert_eq!((rg.steps, rg.resolution), (rc.steps, rc.resolution));
        for (a, c) in [
            (rg.eroded_volume, rc.eroded_volume),
            (rg.deposited_volume, rc.deposited_volume),
            (rg.exported_volume, rc.exported_volume),
        ] {
            assert!((a - c).abs() <= 0.05 * c.abs(), "gpu {a} cpu {c}");
        }
    }
}

/// The whole island with erosion, drainage and flow rivers: the GPU backend (erosion passes on
/// the GPU, then drainage and carving on the CPU from the GPU-eroded heights) against
/// `island_core::pipeline::generate`. Inherited differences (ulps from the erosion and the
/// earlier stages) can move a river sample past the drainage-area threshold or a lake level by
/// a hair, which changes a channel stamp locally: at most 0.5 % of the land samples may differ
/// by more than 0.1 m and 0.1 % by more than 1 m, at most 0.5 % of the water-map samples may
/// differ in kind, and the river and lake counts agree within 10 %. The measured distribution
/// is printed.
#[test]
fn erosion_drainage_carve_pipeline_matches() {
    if !gpu("erosion_drainage_carve_pipeline_matches") {
        return;
    }
    for seed in SEEDS {
        let mut p = IslandParams {
            resolution: 513,
            world_size: 1024.0,
            seed,
            ..Default::default()
        };
        // One island with rivers and lakes (an AUTO outline may be an atoll without them).
        p.shape.shape = island_core::params::IslandShape::Round;
        assert!(p.erosion.enabled);
        let cpu = island_core::pipeline::generate(&p).unwrap();
        let g = island_gpu::generate_gpu(&p).unwrap();
        assert_eq!(g.stats.backend, "gpu");
        let (h0, _) = island(513, seed);
        let (fr, _) = distribution(
            &format!("pipeline seed {seed}"),
            &g.field.heights,
            &cpu.field.heights,
            &h0,
        );
        let kinds = g
            .water
            .kind
            .iter()
            .zip(&cpu.water.kind)
            .filter(|(a, b)| a != b)
            .count();
        let (s, c) = (&g.stats, &cpu.stats);
        println!(
            "  water kinds differing: {kinds} of {}; rivers gpu {} cpu {}, lakes gpu {} cpu {}",
            g.water.kind.len(),
            s.river_count,
            c.river_count,
            s.lake_count,
            c.lake_count
        );
        assert!(fr[1] <= 0.005 && fr[2] <= 0.001, "{fr:?}");
        assert!(
            kinds * 200 <= g.water.kind.len(),
            "{kinds} water samples differ"
        );
        let near = |a: u32, b: u32| a.abs_diff(b) as f32 <= 0.1 * b.max(1) as f32;
        assert!(near(s.river_count, c.river_count) && near(s.lake_count, c.lake_count));
        assert!(c.river_count > 0, "the test island has rivers");
    }
}

/// Drainage at full resolution on an eroded island: D8 receivers (integer output from slopes
/// compared in the CPU's order: exact where `/` is correctly rounded, at most 0.1 % may differ
/// elsewhere), and the drainage area over them (`spacing² = 4 m²`: every partial sum is a
/// whole multiple of 4 below 2^24, so bit-identical).
#[test]
fn drainage_receivers_and_accumulation_match() {
    if !gpu("drainage_receivers_and_accumulation_match") {
        return;
    }
    for seed in SEEDS {
        let (mut h, p) = island(513, seed);
        erosion::erode(&mut h, 513, p.spacing(), &ErosionSettings::default(), seed);
        let n = 513;
        let filled = depression_fill(&h, n, 0.0);
        let flat = flat_routing(&filled, n, 0.0, &h);
        let cpu = island_core::drainage::receivers(&filled, &flat, n, 0.0, &h);
        let g = stages::receivers(&filled, &flat, n, 0.0, &h).unwrap();
        let ne = g.iter().zip(&cpu).filter(|(a, b)| a != b).count();
        println!("receivers seed {seed}: {ne} of {} differ", n * n);
        assert!(ne * 1000 <= n * n);
        let ca = p.spacing() * p.spacing();
        assert_eq!(ca, 4.0);
        let area = island_core::drainage::accumulate(&flow_order(&cpu, n), &cpu, n * n, ca);
        let (ga, iters) = stages::flow_accumulation(&cpu, n, ca).unwrap();
        let (_, ne) = diff(
            &format!("drainage accumulate seed {seed} ({iters} dispatches)"),
            &ga,
            &area,
        );
        assert_eq!(ne, 0);
    }
}
