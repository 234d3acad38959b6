//! Best-of-N wall time of the sub-steps of the slow stages of the default island (release):
//! `cargo run --release -p island_core --example substeps [runs]`. For profiling only; the
//! pipeline's own stage times are in `stage_times`.
use island_core::drainage::{
    accumulate, depression_fill, drainage, flat_routing, flow_order, receivers,
};
use island_core::pipeline::{erosion_stage, raw_heights, smooth_coast_distance};
use island_core::IslandParams;
use std::time::Instant;

// Freed map-sized blocks (4097² maps and larger) are kept for the next generation: see
// island_core::memory::BlockCache.
#[global_allocator]
static ALLOC: island_core::memory::BlockCache = island_core::memory::BlockCache;

/// CPU time of the whole process (all threads), ms: robust to other processes on the machine
/// (0 where `clock_gettime` is not available).
fn cpu_ms() -> f64 {
    #[cfg(target_os = "linux")]
    {
        #[repr(C)]
        struct Timespec {
            s: i64,
            ns: i64,
        }
        extern "C" {
            fn clock_gettime(clock: i32, t: *mut Timespec) -> i32;
        }
        let mut t = Timespec { s: 0, ns: 0 };
        // SAFETY: CLOCK_PROCESS_CPUTIME_ID (2) with a valid out pointer.
        unsafe { clock_gettime(2, &mut t) };
        t.s as f64 * 1e3 + t.ns as f64 * 1e-6
    }
    #[cfg(not(target_os = "linux"))]
    {
        0.0
    }
}

fn best<T>(runs: usize, name: &str, mut f: impl FnMut() -> T) -> T {
    let (mut b, mut c) = (f64::MAX, f64::MAX);
    let mut out = None;
    for _ in 0..runs {
        let t = Instant::now();
        let c0 = cpu_ms();
        let r = f();
        c = c.min(cpu_ms() - c0);
        b = b.min(t.elapsed().as_secs_f64() * 1e3);
        out = Some(r);
    }
    println!("{name:>24} {b:8.2} ms wall {c:8.2} ms cpu");
    out.unwrap()
}

fn main() {
    island_core::memory::reuse_freed_memory();
    let runs: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(7);
    let p = IslandParams::default();
    let n = p.resolution as usize;
    let sp = p.spacing();
    let g = p.grid();
    let f = island_core::pipeline::generate_fields(&p).unwrap();
    best(runs, "mask", || {
        island_core::mask::island_mask(
            &g,
            &p.mask,
            island_core::pipeline::border_margin(&p),
            island_core::hash::tag::MASK,
        )
    });
    let dist = best(runs, "distance_to_coast(exact)", || {
        island_core::distance::distance_to_coast(&f.mask, n, sp)
    });
    best(runs, "smooth_coast_distance", || {
        let mut d = dist.clone();
        smooth_coast_distance(&p, &mut d);
        d
    });
    best(runs, "  (clone of a map)", || dist.clone());
    let raw = raw_heights(&p).unwrap();
    let eroded = best(runs, "erosion_stage", || {
        let mut h = raw.clone();
        erosion_stage(&p, &mut h);
        h
    });
    {
        use island_core::erosion as e;
        let settings = e::ErosionSettings {
            sea_level: 0.0,
            ..p.erosion.clone()
        };
        let plan = best(runs, "  erosion_plan", || {
            e::erosion_plan(n, sp, &settings, p.seed).unwrap()
        });
        let nc = plan.nc;
        let sp_ = &plan.params;
        let hc = best(runs, "  resample", || e::resample(&raw, n, nc));
        let filled = best(runs, "  fill 257", || e::depression_fill(&hc, nc, sp_.sea));
        let flat = best(runs, "  flat_routing 257", || {
            e::flat_routing(&filled, nc, sp_.sea, &hc)
        });
        let rcv = best(runs, "  flow_receivers 257", || {
            e::flow_receivers(&filled, &flat, nc, sp_.sea, &hc, sp_.step_seed(0))
        });
        let order = best(runs, "  flow_order 257", || e::flow_order(&rcv, nc));
        let area = best(runs, "  flow_accumulation 257", || {
            e::flow_accumulation(&order, &rcv, nc * nc, sp_.dx * sp_.dx)
        });
        let mut h2 = hc.clone();
        best(runs, "  stream_power 257", || {
            h2.copy_from_slice(&hc);
            e::stream_power(&mut h2, &order, &rcv, &area, nc, sp_)
        });
        let mut h3 = h2.clone();
        best(runs, "  deposition 257", || {
            h3.copy_from_slice(&h2);
            e::deposition(&mut h3, &hc, &filled, &order, &rcv, &area, sp_)
        });
        let mut h4 = h3.clone();
        best(runs, "  thermal 257", || e::thermal(&mut h4, &h3, nc, sp_));
        let delta: Vec<f32> = h3.iter().zip(&hc).map(|(a, b)| a - b).collect();
        best(runs, "  upsample_delta", || {
            let mut g = raw.clone();
            e::upsample_delta(&mut g, n, &delta, nc, 0.0);
            g
        });
    }
    let dug = best(runs, "dig_lake_basins", || {
        let mut h = eroded.clone();
        island_core::basins::dig_lake_basins(&mut h, n, sp, 0.0, &p.basins, p.seed);
        h
    });
    let filled = best(runs, "depression_fill", || depression_fill(&dug, n, 0.0));
    let flat = best(runs, "flat_routing", || flat_routing(&filled, n, 0.0, &dug));
    let rcv = best(runs, "receivers", || {
        receivers(&filled, &flat, n, 0.0, &dug)
    });
    let order = best(runs, "flow_order", || flow_order(&rcv, n));
    best(runs, "accumulate", || {
        accumulate(&order, &rcv, n * n, sp * sp)
    });
    let d = best(runs, "drainage()", || {
        drainage(&dug, n, sp, 0.0, &p.drainage)
    });
    best(runs, "carve_rivers", || {
        let mut h = dug.clone();
        let carve = island_core::channels::CarveSettings {
            ..p.channels.clone()
        };
        island_core::channels::carve_rivers(&mut h, &d, &carve);
        h
    });
    best(runs, "drainage_stage", || {
        let mut h = eroded.clone();
        island_core::pipeline::drainage_stage(&p, &mut h)
    });
    let isl = island_core::generate(&p).unwrap();
    best(runs, "compute_normals", || {
        island_core::normals::compute_normals(&isl.field.heights, n, sp)
    });
    let (_, _, sandiness) = {
        let mut b = f.land01.clone();
        island_core::biomes::biome_blend(&mut b, &g, &p.biomes, island_core::hash::tag::BIOME)
    };
    best(runs, "biome_blend", || {
        let mut b = f.land01.clone();
        island_core::biomes::biome_blend(&mut b, &g, &p.biomes, island_core::hash::tag::BIOME)
    });
    let splat = best(runs, "auto_splat", || {
        island_core::splat::auto_splat(
            &isl.field.heights,
            &isl.field.normals,
            &sandiness,
            &g,
            p.max_height,
            &p.splat,
            island_core::hash::tag::SPLAT,
        )
    });
    best(runs, "apply_wetness", || {
        let mut s = splat.clone();
        island_core::wetness::apply_wetness(
            &mut s,
            &isl.field.heights,
            &isl.field.normals,
            &isl.water,
            sp,
            &p.splat,
        );
        s
    });
}
