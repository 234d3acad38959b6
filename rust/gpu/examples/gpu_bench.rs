//! GPU vs CPU, per stage and for the whole pipeline.
//!
//! `cargo run --release -p island_gpu --example gpu_bench -- [RES ...] [--runs N] [--algorithm NAME]`
//!
//! Default sizes: 1025 and 4097, plus 8193 when the adapter is a real GPU (not llvmpipe /
//! lavapipe / SwiftShader). GPU stage times are wall-clock per stage (each stage is submitted and
//! waited for); the readback of heights, biomes and splat is its own row, as is building the
//! `Heightfield` (CPU normals) from the read-back heights. The first GPU run of a size (pipeline
//! warm-up, buffer allocation) is reported separately and not averaged. Software adapters give
//! a smoke check only.

use island_core::{Algorithm, IslandParams};
use std::collections::BTreeMap;
use std::time::Instant;

fn main() {
    let mut sizes: Vec<u32> = Vec::new();
    let mut runs = 3usize;
    let mut algorithm = Algorithm::Fbm;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--runs" => {
                runs = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(runs)
                    .max(1)
            }
            "--algorithm" => {
                let name = args.next().unwrap_or_default();
                algorithm = Algorithm::from_name(&name).unwrap_or_else(|| {
                    eprintln!("unknown algorithm {name:?}");
                    std::process::exit(2)
                })
            }
            s => match s.parse() {
                Ok(v) => sizes.push(v),
                Err(_) => {
                    eprintln!("usage: gpu_bench [RES ...] [--runs N] [--algorithm NAME]");
                    std::process::exit(2)
                }
            },
        }
    }
    let Some(adapter) = island_gpu::adapter_info() else {
        println!(
            "SKIPPED: gpu_bench: no GPU adapter ({})",
            island_gpu::adapter_error().unwrap_or_default()
        );
        return;
    };
    let lower = adapter.to_ascii_lowercase();
    let software = ["llvmpipe", "lavapipe", "swiftshader", "software"]
        .iter()
        .any(|s| lower.contains(s));
    if sizes.is_empty() {
        sizes = vec![1025, 4097];
        if !software {
            sizes.push(8193);
        }
    }
    println!(
        "adapter: {adapter}{}",
        if software {
            " (software rasteriser: smoke check only)"
        } else {
            ""
        }
    );
    println!(
        "cpu threads: {}",
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    );
    println!("algorithm: {}, runs per size: {runs}", algorithm.name());

    for res in sizes {
        let p = IslandParams {
            resolution: res,
            algorithm,
            seed: 42,
            ..Default::default()
        };
        if let Err(e) = p.validate() {
            println!("\n{res}²: {e}");
            continue;
        }
        println!("\n=== {res}² ({} Msamples) ===", (res as f64).powi(2) / 1e6);
        let t = Instant::now();
        let cold = match island_gpu::generate_gpu(&p) {
            Ok(i) => i,
            Err(e) => {
                println!("GPU failed: {e}");
                continue;
            }
        };
        println!(
            "first GPU run (warm-up, buffer allocation): {:.1} ms",
            t.elapsed().as_secs_f64() * 1e3
        );
        drop(cold);

        let mut gpu: BTreeMap<String, f64> = BTreeMap::new();
        let mut cpu: BTreeMap<String, f64> = BTreeMap::new();
        let mut order: Vec<String> = Vec::new();
        let (mut gpu_total, mut cpu_total) = (0.0, 0.0);
        let mut max_err = 0.0f32;
        // Per-stage GPU times: each stage waited for (the end-to-end time is measured below,
        // without those waits).
        island_gpu::set_stage_waits(true);
        for _ in 0..runs {
            let g = island_gpu::generate_gpu(&p).expect("GPU worked on the warm-up run");
            let c = island_core::generate(&p).expect("valid params");
            for (k, v) in &g.stats.stage_ms {
                if !order.contains(k) {
                    order.push(k.clone());
                }
                *gpu.entry(k.clone()).or_default() += v / runs as f64;
            }
            for (k, v) in &c.stats.stage_ms {
                if !order.contains(k) {
                    order.push(k.clone());
                }
                *cpu.entry(k.clone()).or_default() += v / runs as f64;
            }
            gpu_total += g.stats.total_ms / runs as f64;
            cpu_total += c.stats.total_ms / runs as f64;
            let e = g
                .field
                .heights
                .iter()
                .zip(&c.field.heights)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f32, f32::max);
            max_err = max_err.max(e);
        }
        island_gpu::set_stage_waits(false);
        let mut gpu_e2e = 0.0;
        for _ in 0..runs {
            let t = Instant::now();
            let g = island_gpu::generate_gpu(&p).expect("GPU worked on the warm-up run");
            gpu_e2e += t.elapsed().as_secs_f64() * 1e3 / runs as f64;
            drop(g);
        }
        println!(
            "{:<12} {:>11} {:>11} {:>9}",
            "stage", "cpu ms", "gpu ms", "cpu/gpu"
        );
        for k in &order {
            let c = cpu.get(k).copied();
            let g = gpu.get(k).copied();
            let f = |v: Option<f64>| v.map(|v| format!("{v:.2}")).unwrap_or_else(|| "-".into());
            let ratio = match (c, g) {
                (Some(c), Some(g)) if g > 0.0 => format!("{:.2}x", c / g),
                _ => "-".into(),
            };
            println!("{:<12} {:>11} {:>11} {:>9}", k, f(c), f(g), ratio);
        }
        println!(
            "{:<12} {:>11.2} {:>11.2} {:>8.2}x",
            "total",
            cpu_total,
            gpu_total,
            cpu_total / gpu_total
        );
        println!(
            "{:<12} {:>11.2} {:>11.2} {:>8.2}x   (GPU without the per-stage waits, to the island on the host)",
            "end to end",
            cpu_total,
            gpu_e2e,
            cpu_total / gpu_e2e
        );
        println!("max |gpu - cpu| height: {max_err:.3e} m");
        erosion_passes(&p, runs);
    }
}

/// Per-pass times of the erosion (the `erosion` row above), GPU passes (each submitted and
/// waited for) next to the CPU kernels of the same names, summed over the time steps.
fn erosion_passes(p: &IslandParams, runs: usize) {
    use island_core::erosion::{self as e, ErosionSettings};
    let Ok(h) = island_core::pipeline::raw_heights(p) else {
        return;
    };
    let n = p.resolution as usize;
    let s = ErosionSettings {
        sea_level: 0.0,
        ..p.erosion.clone()
    };
    let Some(plan) = e::erosion_plan(n, p.spacing(), &s, p.seed) else {
        return;
    };
    let mut gpu: BTreeMap<&str, f64> = BTreeMap::new();
    let mut cpu: BTreeMap<&str, f64> = BTreeMap::new();
    let mut order: Vec<&str> = Vec::new();
    for _ in 0..runs {
        let mut times = island_gpu::stages::PassTimes::default();
        if let Err(err) =
            island_gpu::stages::erode(&h, n, p.spacing(), &s, p.seed, Some(&mut times))
        {
            println!("GPU erosion failed: {err}");
            return;
        }
        for (k, v) in times.ms {
            if !order.contains(&k) {
                order.push(k);
            }
            *gpu.entry(k).or_default() += v / runs as f64;
        }
        // The CPU kernels, step by step as island_core::erosion::erode runs them.
        let (nc, sp) = (plan.nc, &plan.params);
        let mut add = |k: &'static str, t: Instant| {
            *cpu.entry(k).or_default() += t.elapsed().as_secs_f64() * 1e3 / runs as f64
        };
        let t = Instant::now();
        let orig = if nc == n {
            h.clone()
        } else {
            e::resample(&h, n, nc)
        };
        add("resample", t);
        let mut hc = orig.clone();
        let mut scratch = vec![0.0f32; nc * nc];
        for k in 0..plan.steps {
            let t = Instant::now();
            let filled = e::depression_fill(&hc, nc, sp.sea);
            let flat = e::flat_routing(&filled, nc, sp.sea, &hc);
            add("depression_fill", t);
            let t = Instant::now();
            let rcv = e::flow_receivers(&filled, &flat, nc, sp.sea, &hc, sp.step_seed(k));
            add("flow_receivers", t);
            let t = Instant::now();
            let order = e::flow_order(&rcv, nc);
            let area = e::flow_accumulation(&order, &rcv, nc * nc, sp.dx * sp.dx);
            add("flow_accumulation", t);
            let t = Instant::now();
            scratch.copy_from_slice(&hc);
            e::stream_power(&mut hc, &order, &rcv, &area, nc, sp);
            add("stream_power", t);
            let t = Instant::now();
            e::deposition(&mut hc, &scratch, &filled, &order, &rcv, &area, sp);
            add("deposition", t);
            let t = Instant::now();
            for _ in 0..e::THERMAL_PASSES {
                scratch.copy_from_slice(&hc);
                e::thermal(&mut hc, &scratch, nc, sp);
            }
            add("thermal", t);
        }
        let t = Instant::now();
        let delta: Vec<f32> = hc.iter().zip(&orig).map(|(a, b)| a - b).collect();
        let mut out = h.clone();
        e::upsample_delta(&mut out, n, &delta, nc, 0.0);
        add("upsample_delta", t);
    }
    println!(
        "erosion passes ({}² evolution grid, {} steps; `depression_fill` includes flat_routing, \
         cpu `flow_accumulation` includes flow_order):",
        plan.nc, plan.steps
    );
    println!("{:<18} {:>11} {:>11}", "pass", "cpu ms", "gpu ms");
    for k in order {
        let f = |v: Option<&f64>| v.map(|v| format!("{v:.2}")).unwrap_or_else(|| "-".into());
        println!("{:<18} {:>11} {:>11}", k, f(cpu.get(k)), f(gpu.get(k)));
    }
}
