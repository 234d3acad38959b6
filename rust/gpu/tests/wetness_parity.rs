//! GPU ↔ CPU parity of `shaders/wetness.wgsl` (`apply_wetness`) against
//! `island_core::wetness::apply_wetness`, on whole default islands (their splat, normals and
//! water). The distance to the water is exact on both; `exp`, `acos` and WGSL's division may
//! differ from the CPU's by a few ULP, which can move a weight across a quantisation boundary:
//! every texel sums to 255 and at most 0.1 % of the texels may differ, by at most 1 per
//! channel.
//!
//! Without a compute adapter each test prints `SKIPPED` (fails with `ISLAND_REQUIRE_GPU=1`).

use island_core::params::IslandParams;
use island_core::pipeline::generate;
use island_core::wetness::apply_wetness;
use island_gpu::stages;

mod common;
use common::gpu;

#[test]
fn apply_wetness_matches() {
    if !gpu("apply_wetness_matches") {
        return;
    }
    let mut changed_total = 0;
    for (seed, wetness) in [(1u64, 1.0f32), (31337, 0.6)] {
        let mut p = IslandParams {
            resolution: 257,
            world_size: 1024.0,
            seed,
            ..Default::default()
        };
        // One island with rivers and lakes to wet the ground (an AUTO outline may be an atoll).
        p.shape.shape = island_core::params::IslandShape::Round;
        p.splat.wetness = 0.0;
        // The splat before wetness (wetness 0 leaves it as auto_splat made it).
        let island = generate(&p).expect("valid parameters");
        p.splat.wetness = wetness;
        let f = &island.field;
        let mut cpu = island.splat.clone();
        apply_wetness(
            &mut cpu,
            &f.heights,
            &f.normals,
            &island.water,
            p.spacing(),
            &p.splat,
        );
        let g = stages::apply_wetness(
            &island.splat,
            &f.heights,
            &f.normals,
            &island.water,
            p.spacing(),
            &p.splat,
        )
        .unwrap();
        let changed = cpu
            .iter()
            .zip(&island.splat)
            .filter(|(a, b)| a != b)
            .count();
        let mut differ = 0;
        let mut worst = 0;
        for (a, b) in g.iter().zip(&cpu) {
            assert_eq!(a.iter().map(|&v| v as u32).sum::<u32>(), 255);
            let d = (0..4).map(|k| a[k].abs_diff(b[k])).max().unwrap();
            worst = worst.max(d);
            differ += (d > 0) as usize;
        }
        println!(
            "seed {seed}: wetness changed {changed} texels; GPU differs in {differ}, max channel difference {worst}"
        );
        assert!(changed > 1000, "seed {seed}: wetness did something");
        assert!(worst <= 1, "seed {seed}: max channel difference {worst}");
        assert!(
            differ * 1000 <= g.len(),
            "seed {seed}: {differ} texels differ"
        );
        changed_total += changed;
    }
    assert!(changed_total > 0);
}
