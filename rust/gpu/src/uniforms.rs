//! The uniforms of the compute passes, mirrored by name in WGSL, and the constants the shaders
//! share with `island_core`.
//!
//! Every pass module binds `G: Grid` (binding 0, one buffer per recording) and at most one
//! per-pass struct `P` (binding 1, a dynamic-offset slot written per dispatch). The Rust structs
//! below are the single definition: [`wgsl_prelude`] writes their WGSL declarations (and the
//! constants) in front of every module, so names and field order cannot drift; the `layout` test
//! in `passes.rs` checks, with naga's layouter, that every WGSL offset and size equals the Rust
//! `offset_of!` / `size_of`. Fields are 4-byte scalars only (`u32`, `i32`, `f32`), checked at
//! compile time, so there is no hand-written padding.

use bytemuck::{Pod, Zeroable};

/// One field of a uniform struct: name, WGSL scalar type, byte offset in the Rust struct.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Field {
    pub name: &'static str,
    pub ty: &'static str,
    #[cfg_attr(not(test), allow(dead_code))]
    pub offset: usize,
}

/// A uniform struct mirrored in WGSL under the same name ([`Uniform::NAME`]).
pub(crate) trait Uniform: Pod {
    const NAME: &'static str;
    const FIELDS: &'static [Field];
}

macro_rules! uniforms {
    ($(
        $(#[$doc:meta])*
        struct $name:ident { $( $(#[$fdoc:meta])* $field:ident : $ty:ident ),* $(,)? }
    )*) => {
        $(
            $(#[$doc])*
            #[repr(C)]
            #[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
            pub(crate) struct $name { $( $(#[$fdoc])* pub $field: $ty, )* }

            impl Uniform for $name {
                const NAME: &'static str = stringify!($name);
                const FIELDS: &'static [Field] = &[$(Field {
                    name: stringify!($field),
                    ty: stringify!($ty),
                    offset: std::mem::offset_of!($name, $field),
                }),*];
            }

            // 4-byte scalars only: no implicit padding, and a slot of the per-dispatch buffer
            // (256 bytes, WebGPU's largest uniform offset alignment) holds any of them.
            const _: () = {
                let n = [$(std::mem::size_of::<$ty>()),*];
                let mut i = 0;
                while i < n.len() {
                    assert!(n[i] == 4, "uniform fields are 4-byte scalars");
                    i += 1;
                }
                assert!(std::mem::size_of::<$name>() == 4 * n.len());
                assert!(std::mem::size_of::<$name>() <= 256);
            };
        )*

        /// `(WGSL name, fields, size in bytes)` of every uniform struct.
        pub(crate) const ALL: &[(&str, &[Field], usize)] =
            &[$(($name::NAME, $name::FIELDS, std::mem::size_of::<$name>())),*];
    };
}

uniforms! {
    /// The sample grid (`G`, binding 0 of every pass): `n × n` samples `spacing` metres apart.
    struct Grid {
        n: u32,
        /// Low and high halves of the 64-bit seed.
        seed_lo: u32,
        seed_hi: u32,
        world_size: f32,
        /// `world_size / (n - 1)`, computed exactly as the CPU does.
        spacing: f32,
        /// Always 0, but unknown to the shader compiler: `rounded()` in `common.wgsl` ORs it
        /// into a value's bits so that the driver cannot fuse the multiply that produced the
        /// value into a later add (FMA contraction, which the CPU never does).
        zero: u32,
    }

    /// `fbm_noise.wgsl`, `value_noise.wgsl`: one noise field.
    struct Noise {
        tag: u32,
        octaves: u32,
        /// Noise units per sample (`world_size / (n - 1) / scale`).
        step: f32,
        lacunarity: f32,
        persistence: f32,
    }

    /// `diamond_square.wgsl`: one diamond or square pass.
    struct Diamond {
        tag: u32,
        /// Ridged variant (min/max midpoint instead of the mean).
        ridge: u32,
        /// Distance between the pass's known corners (samples).
        step: u32,
        /// Jitter amplitude of the pass.
        amp: f32,
    }

    /// `gaussian_islands.wgsl`.
    struct Gaussian {
        mountain_count: u32,
    }

    /// `normalize_01.wgsl` (`reduce_final`).
    struct Normalize {
        /// Partial results written by `reduce_partial`.
        partials: u32,
    }

    /// `volcano.wgsl`: the VOLCANIC cone and crater (`island_core::shape::volcano`).
    struct Volcano {
        /// Centre, half-map units (-1..1).
        cx: f32,
        cz: f32,
        /// Radius, half-map units.
        radius: f32,
        /// Half the world size, metres.
        half: f32,
        /// The cone's height, metres (`cone_height · max_height`).
        peak: f32,
        /// The crater rim's height, metres (`peak · (1 - crater_radius)²`).
        rim: f32,
        /// `island_core::shape::CRATER_RADIUS`.
        crater_radius: f32,
        /// `island_core::shape::CRATER_DEPTH`.
        crater_depth: f32,
    }

    /// `lagoon.wgsl`: the ATOLL's shallow lagoon.
    struct Lagoon {
        /// `island_core::shape::LAGOON_DEPTH`, metres.
        depth: f32,
    }

    /// `min_max_count_above.wgsl`.
    struct Level {
        /// Values above it are counted (the pipeline's land: above sea level, 0 m).
        level: f32,
    }

    /// `apply_detail.wgsl`.
    struct Detail {
        strength: f32,
        cap: f32,
    }

    /// `biome_blend.wgsl`.
    struct Biomes {
        tag: u32,
        count: u32,
        /// Metres per biome cell (`world_size / grid`).
        cell: f32,
        distortion: f32,
        boundary_noise: f32,
        blend_width: f32,
        /// Boundary-warp noise units per sample (`spacing / cell`).
        warp_step: f32,
    }

    /// `apply_shaping_curve.wgsl`.
    struct Shaping {
        lut_len: u32,
    }

    /// `island_mask.wgsl`.
    struct Mask {
        tag: u32,
        radius: f32,
        /// `MASK_DEFORMATION · (1 − roundness)`.
        amp: f32,
        noise_scale: f32,
        margin: f32,
    }

    /// `distance_to_coast.wgsl`: one of the two EDT passes.
    struct Distance {
        /// 0: the features are water (writes the land samples' distances, positive);
        /// 1: the features are land (writes the water samples', negative).
        feature_is_land: u32,
    }

    /// `smooth_distance.wgsl` (see `island_core::coast_smoothing`).
    struct SmoothDistance {
        /// Distances are clamped to ±cap metres.
        cap: f32,
        /// Fixed-point steps per metre (`coast_smoothing::QUANT`).
        quant: f32,
        /// Added to the fixed-point values so they are non-negative.
        bias: i32,
        /// Box half-width, samples.
        radius: u32,
        /// Blend width from the coast, metres.
        keep: f32,
    }

    /// `coastal_falloff.wgsl`.
    struct Coast {
        max_height: f32,
        coast_width: f32,
        beach_height: f32,
        shelf_width: f32,
        sea_depth: f32,
        fine_amplitude: f32,
    }

    /// `carve_river.wgsl`.
    struct River {
        tag: u32,
        /// Points of the polyline (at most `RIVER_SEGMENTS + 1`).
        points: u32,
        width: f32,
        bank: f32,
        depth: f32,
        meander: f32,
        meander_scale: f32,
    }

    /// `auto_splat.wgsl`.
    struct Splat {
        tag: u32,
        /// `blur`: the weight plane blurred (0..4).
        channel: u32,
        /// `blur`: 0 = horizontal (plane → blur_tmp), 1 = vertical (blur_tmp → plane).
        vertical: u32,
        /// Jitter noise units per sample (`world_size / (n - 1) / SPLAT_JITTER_SCALE`).
        jitter_step: f32,
        max_height: f32,
        sand_height: f32,
        snow_height: f32,
        jitter: f32,
        rock_slope: f32,
    }

    /// `erosion.wgsl`: the erosion passes (see `island_core::erosion::StepParams`).
    struct Erosion {
        /// Samples per side of the evolution grid.
        nc: u32,
        /// `flow_receivers`: the step seed (`StepParams::step_seed`).
        seed: u32,
        /// `flow_accumulation`, `deposition`: index of the dispatch in the iteration.
        iter: u32,
        /// Entries of `pow_count`.
        pow_len: u32,
        sea: f32,
        dx: f32,
        kdt: f32,
        g: f32,
        /// `talus · dx`.
        talus_dx: f32,
        /// Creep share per pass (`smooth` is a WGSL keyword).
        creep: f32,
        /// `dx²`.
        cell_area: f32,
        /// `resample`: `(n − 1) / (nc − 1)`; `upsample_delta`: `(nc − 1) / (n − 1)`.
        scale: f32,
        /// `deposition`: 1 when the stream power's final compositions (`state_a`) are still
        /// to be applied (the pipeline: one dispatch fewer per step), 0 when `h` holds them.
        apply: u32,
    }

    /// `drainage.wgsl`.
    struct Drainage {
        /// Samples at or below it are sea (outlets).
        sea_level: f32,
        /// Area of one sample, m² (`accumulate_area`, `lake_list`).
        cell_area: f32,
        /// `island_core::drainage::DrainageSettings::lake_min_depth`.
        lake_min_depth: f32,
        /// `island_core::drainage::DrainageSettings::lake_min_area`.
        lake_min_area: f32,
        /// Lakes `lake_list` has room for.
        max_lakes: u32,
        /// `DrainageSettings::river_area`, m²: `sample_list` lists the samples draining at
        /// least this much.
        river_area: f32,
        /// Entries `sample_list` and `carve_changes` have room for.
        max_samples: u32,
    }

    /// `wetness.wgsl`: `apply_wetness`.
    struct Wetness {
        /// `SplatParams::wetness`, clamped to 0..=1.
        strength: f32,
        /// Below this height banks turn sandy (twice `sand_height`), metres.
        beach: f32,
        /// `rock_slope − DRY_SLOPE_BAND`, degrees.
        dry_slope: f32,
        /// `SplatParams::rock_slope`, degrees.
        rock_slope: f32,
    }

    /// `channels.wgsl`: `carve_rivers`.
    struct Carve {
        sea_level: f32,
        /// `island_core::channels::CarveSettings::bank_slope`.
        bank_slope: f32,
        /// `island_core::channels::CarveSettings::bank_width`, metres.
        bank_width: f32,
        /// Metres between samples.
        spacing: f32,
        /// River samples in the list.
        count: u32,
    }

    /// `depression.wgsl`: `depression_fill` and `flat_routing` on an `n × n` grid.
    struct Depression {
        /// Samples per side.
        n: u32,
        /// Sea level: samples at or below it are outlets.
        sea: f32,
        /// Index of the relaxation dispatch (the last productive one is reported; the fill's
        /// first one starts from the heights).
        iter: u32,
    }

    /// `fill_by_rule.wgsl`: the brush and its height / slope masks.
    struct Brush {
        layer: u32,
        /// 0 = paint, 1 = erase.
        mode: u32,
        strength: f32,
        min_height: f32,
        max_height: f32,
        height_fade: f32,
        min_slope: f32,
        max_slope: f32,
        slope_fade: f32,
    }
}

impl Grid {
    /// Grid size, spacing (computed exactly as the CPU does) and seed.
    pub fn new(n: usize, world_size: f32, seed: u64) -> Grid {
        Grid {
            n: n as u32,
            seed_lo: seed as u32,
            seed_hi: (seed >> 32) as u32,
            world_size,
            spacing: world_size / (n - 1) as f32,
            zero: 0,
        }
    }
}

/// Side of the square workgroups of the per-sample passes (`@workgroup_size(GRID_TILE, GRID_TILE)`).
pub(crate) const GRID_TILE: u32 = 16;
/// Side of the tile one workgroup of the donor-first passes (`flow_accumulation`,
/// `deposition` in `erosion.wgsl`) iterates in: `GRID_TILE²` invocations, nine samples each
/// (a 48² tile's values fill 9 KiB of workgroup memory, WebGPU guarantees 16).
pub(crate) const DONOR_TILE: u32 = 3 * GRID_TILE;
/// Side of the tile one workgroup of the depression relaxations (`fill_relax`, `flat_relax` in
/// `depression.wgsl`) iterates in: `GRID_TILE²` invocations, four samples each.
pub(crate) const RELAX_TILE: u32 = 2 * GRID_TILE;
/// Invocations of the one-dimensional passes (one per row or column, hash probe).
pub(crate) const LINE_GROUP: u32 = 64;
/// Side of the diamond-square passes' workgroups.
pub(crate) const DS_TILE: u32 = 8;
/// Samples one `normalize_01` workgroup reduces (the core's constant).
pub(crate) const NORM_PER_GROUP: usize = island_core::grid::NORM_PER_GROUP;
/// Invocations of one `normalize_01` workgroup.
pub(crate) const NORM_WORKGROUP: usize = 256;
/// Most biomes `biome_blend.wgsl` handles (its per-sample weight array), as `IslandParams`
/// validation allows (the core's constant).
pub(crate) const MAX_BIOMES: usize = island_core::params::BiomeParams::MAX_BIOMES;
/// Words of one lake in the list `lake_list` (`drainage.wgsl`) appends to.
pub(crate) const DRAIN_LAKE_WORDS: u32 = 6;
/// Words per entry of `sample_list` (`drainage.wgsl`): index, area, receiver, lake, filled.
pub(crate) const DRAIN_SAMPLE_WORDS: u32 = 5;
/// Bytes of one `RowInfo` of `carve_river.wgsl` (per-row segment mask and x-span).
pub(crate) const RIVER_ROW_BYTES: u64 = 32;

// The river pass keeps a 128-bit segment mask per row.
const _: () = assert!(island_core::river::RIVER_SEGMENTS <= 128);
const _: () = assert!(NORM_PER_GROUP.is_multiple_of(NORM_WORKGROUP));

/// WGSL literal of an f32, exact (the decimal expansion of the f32 value, which parses back to
/// the same f32 whether read as f32 or through f64).
fn f32_lit(x: f32) -> String {
    let s = format!("{:?}", x as f64);
    format!("{s}f")
}

/// Constants shared with the Rust side, as WGSL `const` declarations (same names).
fn constants() -> String {
    use island_core::biomes::BIOME_WARP_OFFSET;
    use island_core::erosion::THERMAL_RATE;
    use island_core::mask::MASK_NOISE_GAIN;
    use island_core::river::{RIVER_SEGMENTS, RIVER_WARP_OFFSET};
    use island_core::{splat, wetness};
    let v2 = |v: [f32; 2]| format!("vec2<f32>({}, {})", f32_lit(v[0]), f32_lit(v[1]));
    [
        format!("const RIVER_SEGMENTS: u32 = {RIVER_SEGMENTS}u;"),
        format!(
            "const RIVER_WARP_OFFSET: vec2<f32> = {};",
            v2(RIVER_WARP_OFFSET)
        ),
        format!(
            "const BIOME_WARP_OFFSET: vec2<f32> = {};",
            v2(BIOME_WARP_OFFSET)
        ),
        format!("const MASK_NOISE_GAIN: f32 = {};", f32_lit(MASK_NOISE_GAIN)),
        format!("const MAX_BIOMES: u32 = {MAX_BIOMES}u;"),
        format!("const THERMAL_RATE: f32 = {};", f32_lit(THERMAL_RATE)),
        format!("const SQRT_2: f32 = {};", f32_lit(std::f32::consts::SQRT_2)),
        format!("const GRID_TILE: u32 = {GRID_TILE}u;"),
        format!("const DONOR_TILE: u32 = {DONOR_TILE}u;"),
        format!("const RELAX_TILE: u32 = {RELAX_TILE}u;"),
        format!("const LINE_GROUP: u32 = {LINE_GROUP}u;"),
        format!("const DS_TILE: u32 = {DS_TILE}u;"),
        format!("const NORM_PER_GROUP: u32 = {NORM_PER_GROUP}u;"),
        format!("const NORM_WORKGROUP: u32 = {NORM_WORKGROUP}u;"),
        format!("const DRAIN_LAKE_WORDS: u32 = {DRAIN_LAKE_WORDS}u;"),
        format!("const DRAIN_SAMPLE_WORDS: u32 = {DRAIN_SAMPLE_WORDS}u;"),
        format!("const BED_SAND: f32 = {};", f32_lit(wetness::BED_SAND)),
        format!("const WET_SCALE: f32 = {};", f32_lit(wetness::WET_SCALE)),
        format!("const DRY_FROM: f32 = {};", f32_lit(wetness::DRY_FROM)),
        format!("const DRY_FULL: f32 = {};", f32_lit(wetness::DRY_FULL)),
        format!("const WET_DEGREES: f32 = {};", f32_lit(1.0f32.to_degrees())),
        format!("const SPLAT_SAND: u32 = {}u;", splat::SAND),
        format!("const SPLAT_GRASS: u32 = {}u;", splat::GRASS),
        format!("const SPLAT_ROCK: u32 = {}u;", splat::ROCK),
        format!("const SPLAT_SNOW: u32 = {}u;", splat::SNOW),
    ]
    .join("\n")
}

/// What precedes `common.wgsl` in every module: the constants, then every uniform struct.
pub(crate) fn wgsl_prelude() -> String {
    let mut s = String::from("// Generated from rust/gpu/src/uniforms.rs.\n");
    s.push_str(&constants());
    s.push('\n');
    for (name, fields, _) in ALL {
        s.push_str(&format!("struct {name} {{\n"));
        for f in *fields {
            s.push_str(&format!("    {}: {},\n", f.name, f.ty));
        }
        s.push_str("}\n");
    }
    s
}
