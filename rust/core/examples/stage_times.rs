//! Print per-stage timings of the default island (release build): `cargo run --release -p island_core --example stage_times [resolution] [seed] [algorithm] [dump.raw]`.
//! `BLOCK_CACHE_MB=N` sets how much `memory::BlockCache` keeps (0: nothing, every map freshly mapped).
use island_core::{generate, Algorithm, IslandParams};
// Freed map-sized blocks (4097² maps and larger) are kept for the next generation: see
// island_core::memory::BlockCache.
#[global_allocator]
static ALLOC: island_core::memory::BlockCache = island_core::memory::BlockCache;
fn main() {
    // As the extension, the CLI and the benchmarks do: freed map-sized blocks are reused.
    island_core::memory::reuse_freed_memory();
    if let Ok(v) = std::env::var("BLOCK_CACHE_MB") {
        island_core::memory::set_block_cache_limit(v.parse::<usize>().unwrap() << 20);
    }
    let a: Vec<String> = std::env::args().collect();
    let mut p = IslandParams::default();
    if let Some(r) = a.get(1) {
        p.resolution = r.parse().unwrap();
    }
    if let Some(s) = a.get(2) {
        p.seed = s.parse().unwrap();
    }
    if let Some(s) = a.get(3) {
        p.algorithm = Algorithm::from_name(s).unwrap();
    }
    let _ = generate(&p).unwrap();
    let mut best = f64::MAX;
    let mut island = None;
    for _ in 0..5 {
        let before = island_core::memory::block_cache_counts();
        let i = generate(&p).unwrap();
        if std::env::var_os("BLOCK_CACHE_COUNTS").is_some() {
            let c = island_core::memory::block_cache_counts();
            eprintln!(
                "blocks: {} reused, {} cut to size, {} mapped",
                c.reused - before.reused,
                c.cut - before.cut,
                c.mapped - before.mapped
            );
        }
        if i.stats.total_ms < best {
            best = i.stats.total_ms;
            island = Some(i);
        }
    }
    let i = island.unwrap();
    for (s, ms) in &i.stats.stage_ms {
        println!("{s:>10} {ms:8.2} ms");
    }
    println!(
        "{:>10} {:8.2} ms  land {:.3} min {:.1} max {:.1}",
        "total", i.stats.total_ms, i.stats.land_fraction, i.stats.min_height, i.stats.max_height
    );
    println!(
        "{:>10} {:8.1} MB of freed maps kept for reuse",
        "kept",
        island_core::memory::cached_block_bytes() as f64 / 1048576.0
    );
    if let Some(path) = a.get(4) {
        let mut bytes = Vec::new();
        for h in &i.field.heights {
            bytes.extend_from_slice(&h.to_le_bytes());
        }
        std::fs::write(path, bytes).unwrap();
        let mut s = Vec::new();
        for w in &i.splat {
            s.extend_from_slice(w);
        }
        std::fs::write(format!("{path}.splat"), s).unwrap();
    }
}
