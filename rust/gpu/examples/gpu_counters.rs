//! What one GPU generation of the default island asks of the device, per resolution: compute
//! dispatches, queue submissions, host waits, bytes read back and uploaded. These counts do not
//! depend on the hardware (any adapter, lavapipe included, gives the same ones), so they are the
//! figures to reduce (issue 24) and a bench row (`cargo xtask bench --only gpu_counters`).
//!
//! ```sh
//! cargo run --release -p island_gpu --example gpu_counters -- 1025 4097
//! ```
//!
//! Prints two lines per resolution, one per generation: `counters <n> <run> <dispatches>
//! <submissions> <host_waits> <bytes_read_back> <bytes_uploaded> <ms>` (tab-separated), `run`
//! being `first` (the first generation of that size in the process: every iteration reads its
//! convergence counter back and the counts are learned) and `next` (a second generation, which
//! records the learned counts without those reads); or `counters_skipped <why>`.
//!
//! `--seeds K` then generates seeds 1..=K of each size with the counts learned so far and
//! prints `speculation <n> <seed> <dispatches> <host_waits> <bytes_read_back> <missed>`,
//! `missed` being whether a count learned from other islands fell short for this one (the
//! generation then ran again with checks), and a summary line
//! `speculation_misses <n> <misses> <K>`.

use island_core::IslandParams;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let seeds = match args.iter().position(|a| a == "--seeds") {
        Some(i) => {
            let k = args
                .get(i + 1)
                .and_then(|v| v.parse::<u64>().ok())
                .expect("--seeds K");
            args.drain(i..i + 2);
            k
        }
        None => 0,
    };
    let sizes: Vec<u32> = args
        .iter()
        .map(|a| a.parse().expect("resolutions, e.g. 1025 4097"))
        .collect();
    let sizes = if sizes.is_empty() { vec![1025] } else { sizes };
    if let Some(why) = island_gpu::adapter_error() {
        println!("counters_skipped\t{why}");
        return;
    }
    eprintln!(
        "adapter: {}",
        island_gpu::adapter_info().unwrap_or_default()
    );
    for n in sizes {
        let p = IslandParams {
            resolution: n,
            ..IslandParams::default()
        };
        for run in ["first", "next"] {
            match island_gpu::generate_gpu(&p) {
                Ok(island) => {
                    let k = island.stats.gpu.unwrap_or_default();
                    println!(
                        "counters\t{n}\t{run}\t{}\t{}\t{}\t{}\t{}\t{:.1}",
                        k.dispatches,
                        k.submissions,
                        k.host_waits,
                        k.bytes_read_back,
                        k.bytes_uploaded,
                        island.stats.total_ms
                    );
                }
                Err(e) => println!("counters_skipped\t{n}: {e}"),
            }
        }
        let mut misses = 0;
        for seed in 1..=seeds {
            let before = island_gpu::speculation_misses();
            match island_gpu::generate_gpu(&IslandParams { seed, ..p.clone() }) {
                Ok(island) => {
                    let k = island.stats.gpu.unwrap_or_default();
                    let missed = island_gpu::speculation_misses() - before;
                    misses += missed;
                    println!(
                        "speculation\t{n}\t{seed}\t{}\t{}\t{}\t{missed}",
                        k.dispatches, k.host_waits, k.bytes_read_back
                    );
                }
                Err(e) => println!("speculation_skipped\t{n} seed {seed}: {e}"),
            }
        }
        if seeds > 0 {
            println!("speculation_misses\t{n}\t{misses}\t{seeds}");
        }
    }
}
