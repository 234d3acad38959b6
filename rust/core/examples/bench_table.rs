//! Timing harness behind `cargo xtask bench` (release build):
//!
//! ```text
//! cargo run --release -p island_core --example bench_table -- [--res 1025,4097] [--reps 15,5] [--dump DIR] [--only a,b] [--erosion on|off]
//! ```
//!
//! Times every stage on its own (median of N repetitions after one warm-up, `std::time::Instant`),
//! the whole default pipeline (plus its per-stage split from `Stats::stage_ms`), and the `noise`
//! crate's `Fbm<Perlin>` (8 octaves, rows in parallel on the same rayon pool) as a peer.
//! `--only a,b` restricts the run to the named measurements (e.g. `--only edt,fbm8,pipeline`).
//! Prints one tab-separated line per measurement:
//! `time <name> <resolution> <median_ms> <min_ms> <reps> <cpu_ms_per_run>` (CPU time of the whole
//! process, all threads, from `/proc/self/stat`; NaN where unknown).
//! With `--dump DIR` it also writes `mask_<n>.u8` (the default island's land mask, 1 = land) and
//! `edt_<n>.u32` (our exact squared distance from each land sample to the nearest water sample,
//! little-endian) for the scipy comparison and cross-check.

use island_core::biomes::biome_blend;
use island_core::diamond_square::diamond_square;
use island_core::distance::{distance_to_coast, distance_transform_sq};
use island_core::gaussian_islands::gaussian_islands;
use island_core::gradient_noise::fbm_noise;
use island_core::grid::normalize_01;
use island_core::hash::tag;
use island_core::mask::island_mask;
use island_core::normals::compute_normals;
use island_core::params::FbmParams;
use island_core::pipeline::{base_height, border_margin, generate, generate_fields};
use island_core::river::carve_river;
use island_core::splat::auto_splat;
use island_core::value_noise::value_noise;
use island_core::IslandParams;
use noise::{Fbm, MultiFractal, NoiseFn, Perlin};
use rayon::prelude::*;
use std::hint::black_box;
use std::time::Instant;

// Freed map-sized blocks (4097² maps and larger) are kept for the next generation: see
// island_core::memory::BlockCache.
#[global_allocator]
static ALLOC: island_core::memory::BlockCache = island_core::memory::BlockCache;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        0.5 * (v[m - 1] + v[m])
    }
}

/// Process CPU time (user + system, all threads) in milliseconds, from `/proc/self/stat`
/// (clock ticks of 10 ms; summed over all repetitions, so the per-run average is fine-grained
/// enough). `None` where `/proc` is unavailable.
fn cpu_ms() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &s[s.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks * 10.0)
}

/// Median and min wall milliseconds, and mean CPU milliseconds per run (NaN when unknown).
type Measured = (f64, f64, f64);

/// Time `f` `reps` times after one warm-up; `setup` runs before each call, untimed.
fn time_with<S, T>(
    reps: usize,
    mut setup: impl FnMut() -> S,
    mut f: impl FnMut(S) -> T,
) -> Measured {
    black_box(f(setup()));
    let mut v = Vec::with_capacity(reps);
    let mut cpu = 0.0;
    let mut cpu_ok = true;
    for _ in 0..reps {
        let s = setup();
        let c0 = cpu_ms();
        let t = Instant::now();
        let out = f(s);
        v.push(t.elapsed().as_secs_f64() * 1e3);
        match (c0, cpu_ms()) {
            (Some(a), Some(b)) => cpu += b - a,
            _ => cpu_ok = false,
        }
        drop(black_box(out));
    }
    let min = v.iter().cloned().fold(f64::INFINITY, f64::min);
    // Ticks are 10 ms: below ~100 ms in total the average is too coarse to print.
    (
        median(v),
        min,
        if cpu_ok && cpu >= 100.0 {
            cpu / reps as f64
        } else {
            f64::NAN
        },
    )
}

fn report(name: &str, n: usize, reps: usize, (med, min, cpu): Measured) {
    println!("time\t{name}\t{n}\t{med:.4}\t{min:.4}\t{reps}\t{cpu:.3}");
}

fn parse_list(s: &str) -> Result<Vec<usize>, String> {
    s.split(',')
        .map(|x| {
            x.trim()
                .parse::<usize>()
                .map_err(|e| format!("bad number `{x}`: {e}"))
        })
        .collect()
}

fn main() {
    // Repeated generations in one process, as in the Godot extension (which makes the same call).
    let kept = island_core::memory::reuse_freed_memory();
    println!("allocator\t{}", if kept { "reuse" } else { "default" });
    if let Err(e) = run() {
        eprintln!("bench_table: error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let mut res = vec![1025usize, 4097];
    let mut reps = vec![15usize, 5];
    let mut dump: Option<std::path::PathBuf> = None;
    let mut only: Option<Vec<String>> = None;
    let mut erosion = true;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let v = args
            .get(i + 1)
            .ok_or_else(|| format!("missing value after {}", args[i]))?;
        match args[i].as_str() {
            "--res" => res = parse_list(v)?,
            "--reps" => reps = parse_list(v)?,
            "--dump" => dump = Some(v.into()),
            "--only" => only = Some(v.split(',').map(|x| x.trim().to_string()).collect()),
            "--erosion" => erosion = v != "off",
            other => return Err(format!("unknown argument `{other}`")),
        }
        i += 2;
    }
    println!("threads\t{}", rayon::current_num_threads());
    for (k, &n) in res.iter().enumerate() {
        let r = *reps.get(k).or(reps.last()).unwrap_or(&5);
        let mut p = IslandParams {
            resolution: n as u32,
            chunk_size: 64.min(n as u32 - 1).max(16),
            ..Default::default()
        };
        p.erosion.enabled = erosion;
        p.validate().map_err(|e| e.to_string())?;
        bench_resolution(&p, r, dump.as_deref(), &|name: &str| {
            only.as_ref().is_none_or(|o| o.iter().any(|x| x == name))
        })?;
    }
    Ok(())
}

fn bench_resolution(
    p: &IslandParams,
    reps: usize,
    dump: Option<&std::path::Path>,
    want: &dyn Fn(&str) -> bool,
) -> Result<(), String> {
    let n = p.resolution as usize;
    let ws = p.world_size;
    let spacing = p.spacing();
    // Time and report `name` only when it was asked for.
    let measure = |name: &str, f: &mut dyn FnMut() -> Measured| {
        if want(name) {
            report(name, n, reps, f());
        }
    };

    // Whole default pipeline, and its own per-stage split.
    let island = generate(p).map_err(|e| e.to_string())?;
    if want("pipeline") {
        let preps = reps.div_ceil(2).max(3);
        let mut totals = Vec::new();
        let mut stages: Vec<(String, Vec<f64>)> = Vec::new();
        let c0 = cpu_ms();
        for _ in 0..preps {
            let t = Instant::now();
            let isl = generate(p).map_err(|e| e.to_string())?;
            totals.push(t.elapsed().as_secs_f64() * 1e3);
            for (j, (name, ms)) in isl.stats.stage_ms.iter().enumerate() {
                if stages.len() <= j {
                    stages.push((name.clone(), Vec::new()));
                }
                stages[j].1.push(*ms);
            }
        }
        let cpu = match (c0, cpu_ms()) {
            (Some(a), Some(b)) if b - a >= 100.0 => (b - a) / preps as f64,
            _ => f64::NAN,
        };
        let tmin = totals.iter().cloned().fold(f64::INFINITY, f64::min);
        report("pipeline", n, preps, (median(totals), tmin, cpu));
        for (name, v) in stages {
            let m = v.iter().cloned().fold(f64::INFINITY, f64::min);
            report(
                &format!("pipeline.{name}"),
                n,
                preps,
                (median(v), m, f64::NAN),
            );
        }
    }

    // Base algorithms.
    let f = &p.fbm;
    let grid = p.grid();
    let fbm8 = FbmParams {
        octaves: 8,
        ..f.clone()
    };
    measure("fbm8", &mut || {
        time_with(reps, || (), |_| fbm_noise(&grid, &fbm8, tag::BASE))
    });
    let v = &p.value_noise;
    measure("value_noise", &mut || {
        time_with(reps, || (), |_| value_noise(&grid, v, tag::BASE))
    });
    let d = &p.diamond_square;
    measure("diamond_square", &mut || {
        time_with(reps, || (), |_| diamond_square(&grid, d, tag::BASE))
    });
    let g = &p.gaussian;
    measure("gaussian_islands", &mut || {
        time_with(reps, || (), |_| gaussian_islands(&grid, g, tag::BASE))
    });

    // Later stages on the real intermediate fields of the default island.
    let mut base = base_height(p);
    normalize_01(&mut base);
    let b = &p.biomes;
    measure("biome_blend", &mut || {
        time_with(
            reps,
            || base.clone(),
            |mut x| biome_blend(&mut x, &grid, b, tag::BIOME),
        )
    });
    let m = &p.mask;
    let margin = border_margin(p);
    measure("mask", &mut || {
        time_with(reps, || (), |_| island_mask(&grid, m, margin, tag::MASK))
    });
    // The outline of each island shape (`shape::shape_mask`, the whole mask stage) on the same
    // map; `shape_round` is the legacy mask plus the stage's dispatch.
    for shape in island_core::params::IslandShape::ALL {
        let mut q = p.clone();
        q.shape.shape = shape;
        measure(&format!("shape_{}", shape.name()), &mut || {
            time_with(
                reps,
                || (),
                |_| island_core::shape::shape_mask(&q).expect("valid outline"),
            )
        });
    }
    let fields = generate_fields(p).map_err(|e| e.to_string())?;
    let water: Vec<bool> = fields.mask.iter().map(|&v| v == 0).collect();
    measure("edt", &mut || {
        time_with(reps, || (), |_| distance_transform_sq(&water, n, n))
    });
    measure("distance_to_coast", &mut || {
        time_with(reps, || (), |_| distance_to_coast(&fields.mask, n, spacing))
    });
    let r = &p.river;
    let heights = &island.field.heights;
    measure("river", &mut || {
        time_with(
            reps,
            || heights.clone(),
            |mut h| {
                carve_river(&mut h, &grid, r, tag::RIVER);
                h
            },
        )
    });
    measure("normals", &mut || {
        time_with(reps, || (), |_| compute_normals(heights, n, spacing))
    });
    let normals = &island.field.normals;
    measure("splat", &mut || {
        time_with(
            reps,
            || (),
            |_| {
                auto_splat(
                    heights,
                    normals,
                    &fields.sandiness,
                    &grid,
                    p.max_height,
                    &p.splat,
                    tag::SPLAT,
                )
            },
        )
    });

    // Peer: the `noise` crate's Fbm<Perlin>, 8 octaves, same grid, rows in parallel like ours.
    let peer = Fbm::<Perlin>::new(7)
        .set_octaves(8)
        .set_frequency(1.0)
        .set_lacunarity(2.0)
        .set_persistence(0.5);
    let step = (ws / (n - 1) as f32 / f.scale) as f64;
    measure("noise_crate_fbm8", &mut || {
        time_with(
            reps,
            || (),
            |_| {
                let mut out = vec![0.0f32; n * n];
                out.par_chunks_mut(n).enumerate().for_each(|(z, row)| {
                    let y = z as f64 * step;
                    for (x, v) in row.iter_mut().enumerate() {
                        *v = peer.get([x as f64 * step, y]) as f32;
                    }
                });
                out
            },
        )
    });

    // The drainage kernels on one heightfield (issue 39's setup: the island of seed 3 with a
    // round outline and no erosion, its final heights), the same file the Python peers read
    // (`tests/bench/drainage_peers.py`, `height_<n>.f32` below). Made only when a drainage row
    // or the dump asks for it: one more generation per size.
    const DRAINAGE_ROWS: [&str; 9] = [
        "drainage_fill",
        "drainage_receivers",
        "drainage_flow_order",
        "drainage_accumulate",
        "drainage_flow_order_linked",
        "drainage_accumulate_linked",
        "drainage_lakes",
        "drainage_whole",
        "drainage_spl_step",
    ];
    let drainage_rows = DRAINAGE_ROWS.iter().any(|r| want(r));
    let dheights = if drainage_rows || dump.is_some() {
        let mut q = p.clone();
        q.seed = 3;
        q.shape.shape = island_core::IslandShape::Round;
        q.erosion.enabled = false;
        generate(&q).map_err(|e| e.to_string())?.field.heights
    } else {
        Vec::new()
    };
    if drainage_rows {
        use island_core::drainage as d;
        let sea = 0.0f32;
        let filled = d::depression_fill(&dheights, n, sea);
        let rcv = d::receivers_with_flats(&filled, n, sea, &dheights);
        let order = d::flow_order(&rcv, n);
        let linked = d::flow_order_linked(&rcv, n);
        measure("drainage_fill", &mut || {
            time_with(reps, || (), |_| d::depression_fill(&dheights, n, sea))
        });
        measure("drainage_receivers", &mut || {
            time_with(
                reps,
                || (),
                |_| d::receivers_with_flats(&filled, n, sea, &dheights),
            )
        });
        measure("drainage_flow_order", &mut || {
            time_with(reps, || (), |_| d::flow_order(&rcv, n))
        });
        measure("drainage_accumulate", &mut || {
            time_with(reps, || (), |_| d::accumulate_counts(&order, &rcv, n * n))
        });
        // The same two with each sample's number of donors recorded by the walk: the counts
        // find each subtree's end along the order from them (`LinkedOrder`).
        measure("drainage_flow_order_linked", &mut || {
            time_with(reps, || (), |_| d::flow_order_linked(&rcv, n))
        });
        measure("drainage_accumulate_linked", &mut || {
            time_with(
                reps,
                || (),
                |_| d::accumulate_counts_linked(&linked, &rcv, n * n),
            )
        });
        measure("drainage_lakes", &mut || {
            time_with(
                reps,
                || (),
                |_| {
                    let labels = d::lake_labels(&dheights, &filled, n);
                    d::lakes_of(
                        &dheights,
                        &filled,
                        &rcv,
                        &labels,
                        spacing * spacing,
                        &p.drainage,
                    )
                },
            )
        });
        measure("drainage_whole", &mut || {
            time_with(
                reps,
                || (),
                |_| d::drainage(&dheights, n, spacing, sea, &p.drainage),
            )
        });
        // One implicit stream-power step on these heights, with fastscapelib's `SPLEroder`
        // settings in `tests/bench/drainage_peers.py` (K = 2e-4, m = 0.4, n = 1, Δt = 1e3 years:
        // K·Δt = 0.2), over our flow order and drainage area: the same job as its `erode`, one
        // thread. The pipeline runs this kernel fused with deposition on its evolution grid.
        measure("drainage_spl_step", &mut || {
            use island_core::erosion;
            let settings = erosion::ErosionSettings {
                amount: 1.0,
                erodibility: 0.2,
                m_exponent: 0.4,
                channel_area: 0.0,
                steps: 1,
                resolution: n as u32,
                sea_level: sea,
                ..Default::default()
            };
            let plan = erosion::erosion_plan(n, spacing, &settings, 0).expect("erosion is on");
            let area = d::accumulate(&order, &rcv, n * n, spacing * spacing);
            time_with(
                reps,
                || dheights.clone(),
                |mut h| {
                    erosion::stream_power(&mut h, &order, &rcv, &area, n, &plan.params);
                    h
                },
            )
        });
    }

    if let Some(dir) = dump {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let h_path = dir.join(format!("height_{n}.f32"));
        let bytes: Vec<u8> = dheights.iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(&h_path, bytes)
            .map_err(|e| format!("cannot write {}: {e}", h_path.display()))?;
        std::fs::write(
            dir.join(format!("height_{n}.json")),
            format!("{{\"n\":{n},\"cell_size\":{spacing}}}"),
        )
        .map_err(|e| format!("cannot write height_{n}.json: {e}"))?;
        let mask_path = dir.join(format!("mask_{n}.u8"));
        std::fs::write(&mask_path, &fields.mask)
            .map_err(|e| format!("cannot write {}: {e}", mask_path.display()))?;
        let edt = distance_transform_sq(&water, n, n);
        let bytes: Vec<u8> = edt.iter().flat_map(|v| v.to_le_bytes()).collect();
        let edt_path = dir.join(format!("edt_{n}.u32"));
        std::fs::write(&edt_path, bytes)
            .map_err(|e| format!("cannot write {}: {e}", edt_path.display()))?;
        println!("dump\t{n}\t{}\t{}", mask_path.display(), edt_path.display());
    }
    Ok(())
}
