//! Speculative iteration counts (`recorder::Speculation`): the GPU pipeline's later generations
//! record the dispatch counts its first one learned for the relaxations and donor-first
//! iterations without reading their convergence counters back, and verify them with the
//! island's read-back. The island must be bit for bit the checked one, with fewer host waits;
//! and when a count falls short, the generation must notice and generate again with checks.
//! And the counts kept in the store folder for the next process. One test function (one
//! process): the learned counts are process-wide.

mod common;

use island_core::{Island, IslandParams};

fn same_island(a: &Island, b: &Island, what: &str) {
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
    assert!(
        bits(&a.field.heights) == bits(&b.field.heights),
        "{what}: heights differ"
    );
    assert!(a.biomes == b.biomes, "{what}: biome index differs");
    assert!(a.splat == b.splat, "{what}: splat differs");
    assert!(a.water.kind == b.water.kind, "{what}: water kinds differ");
    assert!(
        bits(&a.water.level) == bits(&b.water.level),
        "{what}: water levels differ"
    );
    assert_eq!(
        (a.stats.lake_count, a.stats.river_count),
        (b.stats.lake_count, b.stats.river_count),
        "{what}: lakes and rivers"
    );
    assert_eq!(
        (
            a.stats.lake_area_m2.to_bits(),
            a.stats.river_length_m.to_bits()
        ),
        (
            b.stats.lake_area_m2.to_bits(),
            b.stats.river_length_m.to_bits()
        ),
        "{what}: lake area and river length"
    );
}

#[test]
fn speculative_generations_match_the_checked_one() {
    if !common::gpu("speculative_generations_match_the_checked_one") {
        return;
    }
    for seed in [3u64, 0xfeed] {
        let p = IslandParams {
            resolution: 257,
            seed,
            ..IslandParams::default()
        };
        // Another seed with the counts learned from the last one: the same island as with
        // checks, whether the counts sufficed or not.
        let other = island_gpu::generate_gpu(&p).unwrap();
        // The first generation of a size reads every convergence counter (and learns); from
        // the second one on, the learned counts are recorded and verified at the end.
        island_gpu::set_learned_iterations(None);
        let first = island_gpu::generate_gpu(&p).unwrap();
        // The counters do not depend on timing or on the order the tiles ran in: a checked
        // generation again, the same counts.
        island_gpu::set_learned_iterations(None);
        let again = island_gpu::generate_gpu(&p).unwrap();
        let misses = island_gpu::speculation_misses();
        let next = island_gpu::generate_gpu(&p).unwrap();
        let (k1, k2) = (first.stats.gpu.unwrap(), next.stats.gpu.unwrap());
        println!("seed {seed}: first {k1:?}\n  next {k2:?}");
        assert_eq!(again.stats.gpu.unwrap(), k1, "checked twice");
        same_island(&first, &again, "checked twice");
        same_island(&first, &next, "speculative generation");
        same_island(&first, &other, "counts learned from another seed");
        assert_eq!(island_gpu::speculation_misses(), misses, "no miss expected");
        // The checked generation reads the convergence counters of the erosion's first two
        // steps (relaxations and accumulation: at least three reads each, until the counts
        // are seen in two runs); the speculative one reads none of them.
        assert!(
            k1.host_waits >= k2.host_waits + 6,
            "host waits {} -> {}",
            k1.host_waits,
            k2.host_waits
        );

        // Counts that fall short: noticed with the read-back, generated again with checks
        // (the same island), and learned anew.
        island_gpu::set_learned_iterations(Some(1));
        let short = island_gpu::generate_gpu(&p).unwrap();
        let k3 = short.stats.gpu.unwrap();
        println!("  short {k3:?}");
        assert_eq!(island_gpu::speculation_misses(), misses + 1);
        same_island(&first, &short, "after a short count");
        // Both runs counted: each uploads the island's inputs.
        assert!(
            k3.bytes_uploaded > k1.bytes_uploaded,
            "both runs counted: {k3:?}"
        );
        let again = island_gpu::generate_gpu(&p).unwrap();
        same_island(&first, &again, "after learning anew");
        assert_eq!(island_gpu::speculation_misses(), misses + 1);
    }

    // The counts kept in the store folder: a process that finds them speculates from its first
    // generation (here: the folder set again after the counts were forgotten in memory).
    let dir = std::env::temp_dir().join(format!("island_iterations_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    island_gpu::auto::set_store_dir(Some(&dir));
    island_gpu::set_learned_iterations(None);
    let p = IslandParams {
        resolution: 257,
        seed: 11,
        ..IslandParams::default()
    };
    let checked = island_gpu::generate_gpu(&p).unwrap();
    let file = dir.join("island_gpu_iterations.json");
    let text = std::fs::read_to_string(&file).expect("the counts were saved");
    println!("{text}");
    assert!(text.contains("\"depression_fill\"") && text.contains("\"stream_power\""));
    island_gpu::auto::set_store_dir(None);
    island_gpu::set_learned_iterations(None);
    island_gpu::auto::set_store_dir(Some(&dir));
    let misses = island_gpu::speculation_misses();
    let from_file = island_gpu::generate_gpu(&p).unwrap();
    let (k1, k2) = (checked.stats.gpu.unwrap(), from_file.stats.gpu.unwrap());
    println!("store folder: checked {k1:?}\n  from the file {k2:?}");
    same_island(&checked, &from_file, "counts from the store folder");
    assert_eq!(island_gpu::speculation_misses(), misses);
    assert!(k2.host_waits * 2 <= k1.host_waits, "{k1:?} {k2:?}");
    // A file of another layout or version is ignored, not an error.
    std::fs::write(&file, "{\"format\": 99}").unwrap();
    island_gpu::auto::set_store_dir(None);
    island_gpu::set_learned_iterations(None);
    island_gpu::auto::set_store_dir(Some(&dir));
    let ignored = island_gpu::generate_gpu(&p).unwrap();
    same_island(&checked, &ignored, "an unreadable counts file");
    let k3 = ignored.stats.gpu.unwrap();
    println!("  unreadable file {k3:?}");
    // Checked again: the checked generation's counts.
    assert_eq!(k3, k1, "checked again");
    island_gpu::auto::set_store_dir(None);
    let _ = std::fs::remove_dir_all(&dir);
}
