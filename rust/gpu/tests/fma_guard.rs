//! The FMA guard (`rounded()` / `mul_r` in `shaders/common.wgsl`) turned off: does this
//! adapter fuse unguarded products into the adds that follow? On lavapipe it does (the value
//! noise then differs from the CPU in about 8 % of the samples, by 1–2 ULP), which is what makes
//! the bit-exact parity tests (`tests/parity.rs` and the stage tests) catch a product that lost
//! its guard without an NVIDIA GPU. This test pins that: if a driver update stopped fusing, the
//! bit-exact tests would no longer see a missing guard, and this one fails on lavapipe to say
//! so. Its own test binary (the switch is read when the process's GPU context is created).

mod common;

use island_core::hash::tag;
use island_core::params::{FbmParams, ValueNoiseParams};
use island_core::Grid;
use island_gpu::stages;

fn differing(a: &[f32], b: &[f32]) -> (usize, f32) {
    let mut n = 0;
    let mut worst = 0.0f32;
    for (x, y) in a.iter().zip(b) {
        if x.to_bits() != y.to_bits() {
            n += 1;
            worst = worst.max((x - y).abs());
        }
    }
    (n, worst)
}

#[test]
fn unguarded_noise_differs_from_the_cpu() {
    island_gpu::set_fma_guard_off(true);
    if !common::gpu("unguarded_noise_differs_from_the_cpu") {
        return;
    }
    let n = 129;
    let mut total = 0;
    for seed in [0u64, 7, u64::MAX - 7] {
        let grid = Grid::new(n, 1024.0, seed);
        let fp = FbmParams {
            octaves: 8,
            scale: 300.0,
            lacunarity: 2.0,
            persistence: 0.5,
        };
        let c = island_core::gradient_noise::fbm_noise(&grid, &fp, tag::BASE);
        let g = stages::fbm_noise(&grid, &fp, tag::BASE).unwrap();
        let (k, worst) = differing(&g, &c);
        println!(
            "fbm_noise seed {seed}, guard off: {k} of {} samples differ (max {worst:e})",
            g.len()
        );
        total += k;
        let vp = ValueNoiseParams {
            octaves: 6,
            scale: 350.0,
            persistence: 0.5,
        };
        let c = island_core::value_noise::value_noise(&grid, &vp, tag::BASE);
        let g = stages::value_noise(&grid, &vp, tag::BASE).unwrap();
        let (k, worst) = differing(&g, &c);
        println!(
            "value_noise seed {seed}, guard off: {k} of {} samples differ (max {worst:e})",
            g.len()
        );
        total += k;
    }
    println!("total differing with the guard off: {total}");
    let name = island_gpu::adapter_info().unwrap_or_default();
    if name.contains("llvmpipe") {
        assert!(
            total > 0,
            "lavapipe no longer fuses unguarded products: the bit-exact parity tests cannot \
             catch a missing FMA guard any more (see docs/gpu-backend.md)"
        );
    }
}
