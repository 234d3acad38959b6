//! Hash every output of a few islands (heights, normals, biomes, splat, water, statistics), to
//! check that an optimisation keeps the bits: `cargo run --release -p island_core --example
//! fingerprint` before and after, with any `RAYON_NUM_THREADS` (or `ISLAND_FORCE_SCALAR=1`), and
//! compare the lines (`-- --large` adds the default island at 4097²). The checked-in reference is `tests/golden.rs` (small islands, every output).
use island_core::{generate, Algorithm, IslandParams};

// As the extension: freed map-sized blocks are reused, so the 4097² islands below also check
// that no output depends on fresh (zeroed) memory.
#[global_allocator]
static ALLOC: island_core::memory::BlockCache = island_core::memory::BlockCache;

fn fnv(h: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *h ^= b as u64;
        *h = h.wrapping_mul(0x100_0000_01b3);
    }
}

fn main() {
    let mut cases = vec![];
    for (res, seed) in [
        (1025, None),
        (513, Some(7)),
        (257, Some(12345)),
        (1025, Some(3)),
    ] {
        let mut p = IslandParams {
            resolution: res,
            ..Default::default()
        };
        if let Some(s) = seed {
            p.seed = s;
        }
        cases.push(p);
    }
    // Every outline (an atoll's lagoon, the archipelago's closed basins, the volcano's crater
    // lake), and one large map.
    for (k, shape) in [
        island_core::IslandShape::Atoll,
        island_core::IslandShape::Archipelago,
        island_core::IslandShape::Volcanic,
        island_core::IslandShape::Crescent,
        island_core::IslandShape::Elongated,
    ]
    .into_iter()
    .enumerate()
    {
        let mut p = IslandParams {
            resolution: 513,
            seed: 40 + k as u64,
            ..Default::default()
        };
        p.shape.shape = shape;
        cases.push(p);
    }
    if std::env::args().any(|a| a == "--large") {
        // Twice: the second island is made in the first one's freed (stale) blocks, and its
        // line must repeat the first.
        let large = IslandParams {
            resolution: 4097,
            ..Default::default()
        };
        cases.push(large.clone());
        cases.push(large);
    }
    for a in ["value_noise", "diamond_square", "gaussian_islands"] {
        cases.push(IslandParams {
            resolution: 513,
            algorithm: Algorithm::from_name(a).unwrap(),
            ..Default::default()
        });
    }
    for p in &cases {
        let i = generate(p).unwrap();
        let mut parts = [0xcbf2_9ce4_8422_2325u64; 7];
        for h in &i.field.heights {
            fnv(&mut parts[0], &h.to_le_bytes());
        }
        for nrm in &i.field.normals {
            for c in nrm {
                fnv(&mut parts[1], &c.to_le_bytes());
            }
        }
        fnv(&mut parts[2], &i.biomes);
        for s in &i.splat {
            fnv(&mut parts[3], s);
        }
        for l in &i.water.level {
            fnv(&mut parts[4], &l.to_bits().to_le_bytes());
        }
        fnv(&mut parts[5], &i.water.kind);
        let s = &i.stats;
        let st = format!(
            "{} {} {} {} {} {} {}",
            s.land_fraction,
            s.min_height,
            s.max_height,
            s.river_count,
            s.river_length_m,
            s.lake_count,
            s.lake_area_m2
        );
        fnv(&mut parts[6], st.as_bytes());
        println!(
            "{:>5} {:>10} {:?}: h {:016x} n {:016x} b {:016x} s {:016x} wl {:016x} wk {:016x} st {:016x}",
            p.resolution, p.seed, p.algorithm, parts[0], parts[1], parts[2], parts[3], parts[4], parts[5], parts[6]
        );
    }
}
