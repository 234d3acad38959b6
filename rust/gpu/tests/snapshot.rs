//! Whole-pipeline GPU results against a saved snapshot (for refactors of the GPU crate that must
//! not change any output). Ignored by default; run with
//! `ISLAND_GPU_SNAPSHOT=DIR cargo test -p island_gpu --test snapshot -- --ignored --nocapture`:
//! the first run writes `DIR/<algorithm>.bin`, later runs compare against those files and
//! print the differences (heights bit for bit, then the largest absolute error; biome index and
//! splat bytes). `ISLAND_GPU_SNAPSHOT_TOL` (metres, default 0) allows a height tolerance and
//! splat bytes within 1.

use island_core::params::{Algorithm, IslandParams};
use std::path::PathBuf;

fn encode(i: &island_core::Island) -> Vec<u8> {
    let mut out = Vec::new();
    for h in &i.field.heights {
        out.extend_from_slice(&h.to_le_bytes());
    }
    out.extend_from_slice(&i.biomes);
    for s in &i.splat {
        out.extend_from_slice(s);
    }
    out
}

#[test]
#[ignore]
fn pipeline_matches_saved_snapshot() {
    let Ok(dir) = std::env::var("ISLAND_GPU_SNAPSHOT") else {
        println!("SKIPPED: set ISLAND_GPU_SNAPSHOT=DIR");
        return;
    };
    let tol: f32 = std::env::var("ISLAND_GPU_SNAPSHOT_TOL")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    let dir = PathBuf::from(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let n = 257usize;
    let nn = n * n;
    for algorithm in Algorithm::ALL {
        let params = IslandParams {
            resolution: n as u32,
            world_size: 1024.0,
            seed: 0x1234_5678_9abc_def0,
            algorithm,
            chunk_size: 32,
            ..Default::default()
        };
        let g = island_gpu::generate_gpu(&params).unwrap();
        let bytes = encode(&g);
        let path = dir.join(format!("{}.bin", algorithm.name()));
        if !path.exists() {
            std::fs::write(&path, &bytes).unwrap();
            println!("{}: wrote {}", algorithm.name(), path.display());
            continue;
        }
        let old = std::fs::read(&path).unwrap();
        assert_eq!(old.len(), bytes.len(), "{}: size", algorithm.name());
        let (oh, rest) = old.split_at(nn * 4);
        let (ob, os) = rest.split_at(nn);
        let oh: Vec<f32> = oh
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let bits_differ = oh
            .iter()
            .zip(&g.field.heights)
            .filter(|(a, b)| a.to_bits() != b.to_bits())
            .count();
        let max = oh
            .iter()
            .zip(&g.field.heights)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        let biomes = ob.iter().zip(&g.biomes).filter(|(a, b)| a != b).count();
        let splat_max = os
            .iter()
            .zip(g.splat.iter().flatten())
            .map(|(a, b)| (*a as i32 - *b as i32).abs())
            .max()
            .unwrap_or(0);
        println!(
            "{}: heights {bits_differ} of {nn} differ in bits, max abs {max:.3e} m; biome index {biomes} differ; splat max byte diff {splat_max}",
            algorithm.name()
        );
        assert!(max <= tol, "{}: heights changed", algorithm.name());
        assert_eq!(biomes, 0, "{}: biome index changed", algorithm.name());
        let splat_tol = if tol > 0.0 { 1 } else { 0 };
        assert!(
            splat_max <= splat_tol,
            "{}: splat changed",
            algorithm.name()
        );
    }
}
