//! Scratch: island statistics and tile timing for tuning the demo scatter layers.
use island_core::scatter::{demo_layers, slope_degrees};
use island_core::{generate, IslandParams};
use std::time::Instant;
fn main() {
    let island = generate(&IslandParams::default()).unwrap();
    let f = &island.field;
    let n = f.resolution;
    let mut hh = [0usize; 13];
    let mut sh = [0usize; 10];
    let mut bio = [0usize; 8];
    let mut land = 0;
    let mut maxh: f32 = 0.0;
    for i in 0..n * n {
        let h = f.heights[i];
        if h <= 0.0 {
            continue;
        }
        land += 1;
        maxh = maxh.max(h);
        hh[((h / 10.0) as usize).min(12)] += 1;
        sh[((slope_degrees(f.normals[i][1]) / 10.0) as usize).min(9)] += 1;
        bio[island.biomes[i] as usize] += 1;
    }
    println!("land {land} m² max {maxh}");
    println!("height /10m {hh:?}");
    println!("slope /10deg {sh:?}");
    println!("biomes {bio:?}");
    // Probe a line from the south-east beach inland.
    for k in 0..30 {
        let (x, z) = (330.0 - k as f32 * 3.0, 200.0 - k as f32 * 3.0);
        let i = f.nearest_index(x, z);
        println!(
            "({x:.0},{z:.0}) h {:.2} slope {:.1} splat {:?} biome {}",
            f.height_at(x, z),
            slope_degrees(f.normals[i][1]),
            island.splat[i],
            island.biomes[i]
        );
    }
    for l in demo_layers() {
        let t = Instant::now();
        let c = l.capacity();
        println!(
            "{} tile {:.2} ms cap {c}",
            l.name,
            t.elapsed().as_secs_f64() * 1e3
        );
    }
    let input = island_core::scatter::ScatterInput::from_island(&island);
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut tot = 0.0;
            for l in demo_layers() {
                let mut best = f64::MAX;
                for _ in 0..15 {
                    let t = Instant::now();
                    let p = island_core::scatter::place(&input, &l, None, 1, 64);
                    std::hint::black_box(p);
                    best = best.min(t.elapsed().as_secs_f64() * 1e3);
                }
                tot += best;
                println!("{threads} threads {} best {best:.2} ms", l.name);
            }
            println!("{threads} threads total {tot:.2} ms");
            let layers = demo_layers();
            let mut best = f64::MAX;
            let mut count = 0;
            for _ in 0..15 {
                let t = Instant::now();
                let p = island_core::scatter::place_all(&input, &layers, &[], 1, 64).unwrap();
                count = p.iter().map(|p| p.len()).sum::<usize>();
                best = best.min(t.elapsed().as_secs_f64() * 1e3);
            }
            println!("{threads} threads place_all best {best:.2} ms ({count} instances)");
        });
    }
}
#[allow(dead_code)]
fn unused() {}
