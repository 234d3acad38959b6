//! Times the parts of the drainage stage on the final heights of the default island:
//! `drain_parts [resolution] [reps]`.
use island_core::{drainage as d, generate, IslandParams};
use std::time::Instant;
// Freed map-sized blocks (4097² maps and larger) are kept for the next generation: see
// island_core::memory::BlockCache.
#[global_allocator]
static ALLOC: island_core::memory::BlockCache = island_core::memory::BlockCache;

/// `f` timed `reps` times, each on a fresh untimed `setup()`: prints the best and the median,
/// returns the last output (the previous ones are dropped outside the timing).
fn ts<S, T>(name: &str, reps: usize, mut setup: impl FnMut() -> S, mut f: impl FnMut(S) -> T) -> T {
    let (mut v, mut out) = (Vec::new(), None);
    for _ in 0..reps {
        let x = setup();
        let s = Instant::now();
        let o = f(x);
        v.push(s.elapsed().as_secs_f64() * 1e3);
        out = Some(o);
    }
    v.sort_by(f64::total_cmp);
    println!("{name:>22} min {:8.2} med {:8.2} ms", v[0], v[v.len() / 2]);
    out.expect("reps >= 1")
}
/// [`ts`] without a setup.
fn t<T>(name: &str, reps: usize, mut f: impl FnMut() -> T) -> T {
    ts(name, reps, || (), |()| f())
}
fn main() {
    island_core::memory::reuse_freed_memory();
    let a: Vec<String> = std::env::args().collect();
    let n: usize = a.get(1).map_or(4097, |s| s.parse().unwrap());
    let reps: usize = a.get(2).map_or(5, |s| s.parse().unwrap());
    let p = IslandParams {
        resolution: n as u32,
        ..Default::default()
    };
    let island = generate(&p).unwrap();
    let h = island.field.heights.clone();
    let sp = p.spacing();
    let filled = t("fill", reps, || d::depression_fill(&h, n, 0.0));
    let rcv = t("receivers_with_flats", reps, || {
        d::receivers_with_flats(&filled, n, 0.0, &h)
    });
    t("river_candidates", reps, || {
        d::river_candidates(&rcv, n, sp * sp, p.drainage.river_area)
    });
    t("lakes", reps, || {
        let labels = d::lake_labels(&h, &filled, n);
        d::lakes_of(&h, &filled, &rcv, &labels, sp * sp, &p.drainage)
    });
    ts(
        "dig_lake_basins",
        reps,
        || h.clone(),
        |mut hh| {
            island_core::basins::dig_lake_basins(&mut hh, n, sp, 0.0, &p.basins, p.seed);
            hh
        },
    );
    let dr = t("drainage (full)", 1, || {
        d::drainage(&h, n, sp, 0.0, &p.drainage)
    });
    ts(
        "carve_rivers",
        reps,
        || h.clone(),
        |mut hh| {
            island_core::channels::carve_rivers(
                &mut hh,
                &dr,
                &island_core::pipeline::carve_settings(&p),
            );
            hh
        },
    );
    t("hydrology", reps, || {
        island_core::pipeline::hydrology(&p, &h, &dr)
    });
    t("clone", reps, || h.clone());
    ts(
        "drainage_stage",
        reps,
        || h.clone(),
        |mut hh| island_core::pipeline::drainage_stage(&p, &mut hh),
    );
}
