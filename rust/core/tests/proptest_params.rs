//! Property tests: `validate()` never panics, and the generator never panics on anything it
//! accepts, nor puts a NaN or an infinity in any output.

use island_core::params::{MAX_WORLD_SIZE, MIN_WORLD_SIZE};
use island_core::{generate, Algorithm, Island, IslandParams};
use proptest::prelude::*;

mod common;
use common::{cases, wild_f32};

/// Every output of an island is finite: heights, normals (unit length), splat weights (sum 255),
/// biome indices (in the table), statistics, and the point queries at the corners, the centre
/// and between samples.
fn assert_finite_island(island: &Island) -> Result<(), TestCaseError> {
    let p = &island.params;
    let f = &island.field;
    prop_assert!(f.heights.iter().all(|h| h.is_finite()), "non-finite height");
    prop_assert!(
        f.normals.iter().all(|n| n.iter().all(|c| c.is_finite())
            && ((n[0] * n[0] + n[1] * n[1] + n[2] * n[2]) - 1.0).abs() < 1e-3),
        "non-finite or non-unit normal"
    );
    prop_assert!(island
        .splat
        .iter()
        .all(|w| w.iter().map(|&v| v as u32).sum::<u32>() == 255));
    prop_assert!(island
        .biomes
        .iter()
        .all(|&b| (b as usize) < p.biomes.biomes.len()));
    let s = &island.stats;
    prop_assert!(s.min_height.is_finite() && s.max_height.is_finite());
    prop_assert!((0.0..=1.0).contains(&s.land_fraction));
    let half = p.world_size * 0.5;
    let spacing = p.spacing();
    for (x, z) in [
        (-half, -half),
        (half, half),
        (0.0, 0.0),
        (0.37 * spacing, -0.61 * spacing),
        (half * 0.31, -half * 0.77),
    ] {
        let h = f.height_at(x, z);
        prop_assert!(h.is_finite(), "height_at({x}, {z}) = {h}");
        prop_assert!(f.normal_at(x, z).iter().all(|c| c.is_finite()));
    }
    Ok(())
}

/// World sizes from far below to far above the accepted range (log-uniform), plus the limits.
fn world_sizes() -> impl Strategy<Value = f32> {
    prop_oneof![
        4 => 1.0f32..5000.0,
        2 => (-35.0f32..8.0).prop_map(|e| 10f32.powf(e)),
        1 => Just(MIN_WORLD_SIZE),
        1 => Just(MAX_WORLD_SIZE),
    ]
}

prop_compose! {
    fn wild_params()(
        seed in any::<u64>(),
        res in prop_oneof![Just(33u32), Just(65), Just(129), 0u32..300, any::<u32>()],
        chunk in prop_oneof![Just(16u32), Just(32), 0u32..600],
        world in wild_f32(), maxh in wild_f32(), alg in 0usize..4,
        oct in 0u32..20, scale in wild_f32(), lac in wild_f32(), pers in wild_f32(),
        rough in wild_f32(), ridge in any::<bool>(), cells in 0u32..70, dens in wild_f32(), sep in wild_f32(),
        radius in wild_f32(), round in wild_f32(), curve in prop::collection::vec(wild_f32(), 0..6),
        width in wild_f32(), blend in wild_f32(), grid in 0u32..70, river in any::<bool>(),
    ) -> IslandParams {
        let mut p = IslandParams { seed, resolution: res, chunk_size: chunk, world_size: world, max_height: maxh,
            algorithm: Algorithm::ALL[alg], shaping_curve: curve, ..Default::default() };
        p.fbm.octaves = oct; p.fbm.scale = scale; p.fbm.lacunarity = lac; p.fbm.persistence = pers;
        p.value_noise.octaves = oct; p.value_noise.scale = scale;
        p.diamond_square.roughness = rough; p.diamond_square.ridge = ridge;
        p.gaussian.cells = cells; p.gaussian.density = dens; p.gaussian.separation = sep;
        p.mask.radius = radius; p.mask.roundness = round;
        p.river.width = width; p.river.mode = if river { island_core::params::RiverMode::Flow } else { island_core::params::RiverMode::Bezier };
        p.biomes.blend_width = blend; p.biomes.grid = grid;
        p
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(400), ..ProptestConfig::default() })]
    #[test]
    fn validate_never_panics(p in wild_params()) {
        let _ = p.validate();
    }
}

prop_compose! {
    fn valid_params()(
        seed in any::<u64>(),
        res in prop_oneof![Just(33u32), Just(65), Just(129)],
        world in world_sizes(), maxh in 0.5f32..2000.0, alg in 0usize..4,
        oct in 1u32..=16, scale in 0.5f32..3000.0, lac in 1.0f32..=4.0, pers in 0.0f32..=1.0,
        rough in 0.0f32..=1.0, ridge in any::<bool>(), cells in 1u32..=64, dens in 0.0f32..=1.0, sep in -1.0f32..=0.9,
        radius in 0.1f32..=0.95, round in 0.0f32..=1.0, curve in prop::collection::vec(0.0f32..=1.0, 2..8),
        width in 0.1f32..500.0, bank in 0.0f32..500.0, blend in 0.1f32..2000.0, grid in 1u32..=64,
        river in any::<bool>(), detail in any::<bool>(), blur in 0u32..=8,
    ) -> IslandParams {
        let mut p = IslandParams { seed, resolution: res, chunk_size: 16, world_size: world, max_height: maxh,
            algorithm: Algorithm::ALL[alg], shaping_curve: curve, ..Default::default() };
        p.fbm.octaves = oct; p.fbm.scale = scale; p.fbm.lacunarity = lac; p.fbm.persistence = pers;
        p.value_noise.octaves = oct; p.value_noise.scale = scale; p.value_noise.persistence = pers;
        p.diamond_square.roughness = rough; p.diamond_square.ridge = ridge;
        p.gaussian.cells = cells; p.gaussian.density = dens; p.gaussian.separation = sep;
        p.mask.radius = radius; p.mask.roundness = round;
        p.river.width = width; p.river.bank = bank; p.river.mode = if river { island_core::params::RiverMode::Flow } else { island_core::params::RiverMode::Bezier };
        p.detail.enabled = detail; p.splat.blur_passes = blur;
        p.biomes.blend_width = blend; p.biomes.grid = grid;
        p
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(120), ..ProptestConfig::default() })]
    #[test]
    fn generator_never_panics_on_valid_input(p in valid_params()) {
        prop_assume!(p.validate().is_ok());
        let island = generate(&p).unwrap();
        assert_finite_island(&island)?;
    }
}

/// `world_size` values that f32 cannot represent a map at are rejected with a clear message
/// (before, 1e-30 passed `validate` and every height was NaN; from 1e-18 down `height_at`
/// returned NaN); the limits themselves generate finite islands.
#[test]
fn world_size_outside_what_f32_represents_is_rejected() {
    for w in [1e-30f32, 1e-18, 1e-9, 1e-3, 0.999, 1.1e7, 1e30] {
        let p = IslandParams {
            world_size: w,
            ..Default::default()
        };
        let e = p.validate().unwrap_err();
        assert_eq!(e.field, "world_size", "{w:e}: {e}");
        assert!(e.message.contains("between"), "{e}");
    }
    for (w, res) in [
        (MIN_WORLD_SIZE, 33u32),
        (MIN_WORLD_SIZE, 1025),
        (MAX_WORLD_SIZE, 257),
    ] {
        let mut p = IslandParams {
            world_size: w,
            resolution: res,
            chunk_size: 16,
            ..Default::default()
        };
        for alg in Algorithm::ALL {
            p.algorithm = alg;
            if w == MAX_WORLD_SIZE {
                // Noise wavelengths that keep the lattice within range on a 10,000 km map.
                p.fbm.scale = 2.0e5;
                p.value_noise.scale = 2.0e5;
                p.detail.scale = 1.0e5;
                p.mask.noise_scale = 1.0e5;
                p.coast.fine_scale = 1.0e5;
                p.river.meander_scale = 1.0e5;
            }
            p.validate().unwrap();
            let island = generate(&p).unwrap();
            assert_finite_island(&island).unwrap();
        }
    }
}
