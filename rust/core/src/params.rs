//! Every knob of the generator, with units, ranges and documented defaults.
//!
//! [`IslandParams::validate`] rejects anything out of range with a clear [`ParamError`]; the
//! generator only ever runs on validated parameters and never panics on them.

use crate::basins::BasinSettings;
use crate::channels::CarveSettings;
use crate::det_math;
use crate::drainage::DrainageSettings;
use crate::erosion::ErosionSettings;
use crate::grid::Grid;
use crate::schema::{Check, ParamSpec, Slider, Value};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Default grid resolution (samples per side): 1025 = 2^10 + 1.
pub const DEFAULT_RESOLUTION: u32 = 1025;
/// Default island size in metres (edge length of the square map).
pub const DEFAULT_WORLD_SIZE: f32 = 1024.0;
/// Default height of the highest possible peak, metres.
pub const DEFAULT_MAX_HEIGHT: f32 = 120.0;
/// Default chunk edge, in grid cells.
pub const DEFAULT_CHUNK_SIZE: u32 = 64;
/// Smallest accepted world size, metres. Far below it the f32 arithmetic stops representing
/// the map: squared positions and distances in metres become subnormal or zero (the mask's
/// radius test turns into 0/0: heights are NaN from about 1e-18 m at 257², all of them by
/// 1e-22 m), slopes `Δheight / spacing` overflow, and `Heightfield::height_at` divides by a
/// spacing that no longer resolves the grid. One metre keeps at least 1.2e-4 m between samples
/// at the largest resolution (slopes of a 1e7 m relief stay below 1e11, squares below 1e22),
/// with every output finite (pinned by `tests/proptest_params.rs`).
pub const MIN_WORLD_SIZE: f32 = 1.0;
/// Largest accepted world size, metres (as for every other length of the generator).
pub const MAX_WORLD_SIZE: f32 = 1.0e7;
/// Smallest accepted resolution.
pub const MIN_RESOLUTION: u32 = 33;
/// Largest accepted resolution.
pub const MAX_RESOLUTION: u32 = 8193;

/// Base height algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Algorithm {
    /// Fractal (fBm) gradient noise, Perlin-style.
    #[default]
    Fbm,
    /// Value noise with cosine interpolation.
    ValueNoise,
    /// Diamond-square midpoint displacement.
    DiamondSquare,
    /// Sum of gaussian mountains on a jittered grid.
    GaussianIslands,
}

impl Algorithm {
    /// All algorithms, in their enum order (the Godot enum uses the same order).
    pub const ALL: [Algorithm; 4] = [
        Algorithm::Fbm,
        Algorithm::ValueNoise,
        Algorithm::DiamondSquare,
        Algorithm::GaussianIslands,
    ];
    /// Stable name used by the CLI and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Fbm => "fbm",
            Algorithm::ValueNoise => "value_noise",
            Algorithm::DiamondSquare => "diamond_square",
            Algorithm::GaussianIslands => "gaussian_islands",
        }
    }
    /// Parse a name as printed by [`Algorithm::name`] (also accepts `-` for `_`).
    pub fn from_name(s: &str) -> Option<Algorithm> {
        let s = s.replace('-', "_").to_ascii_lowercase();
        Algorithm::ALL.into_iter().find(|a| a.name() == s)
    }
}

/// Fractal gradient noise (fBm) settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FbmParams {
    /// Number of octaves, 1..=16. Default 8.
    pub octaves: u32,
    /// Wavelength of the first octave, metres, > 0. Default 500.
    pub scale: f32,
    /// Frequency multiplier per octave, 1..=4. Default 2.
    pub lacunarity: f32,
    /// Amplitude multiplier per octave, 0..=1. Default 0.5.
    pub persistence: f32,
}
impl FbmParams {
    /// Default [`FbmParams::octaves`].
    pub const DEFAULT_OCTAVES: u32 = 8;
    /// Default [`FbmParams::scale`], metres.
    pub const DEFAULT_SCALE: f32 = 500.0;
    /// Default [`FbmParams::lacunarity`]; also the lacunarity of every auxiliary fBm (detail,
    /// fine detail, mask, river and biome warps, splat jitter), which the WGSL passes repeat.
    pub const DEFAULT_LACUNARITY: f32 = 2.0;
    /// Default [`FbmParams::persistence`]; also the persistence of every auxiliary fBm.
    pub const DEFAULT_PERSISTENCE: f32 = 0.5;

    /// `octaves` octaves with a first wavelength of `scale` metres and the classic lacunarity
    /// and persistence ([`FbmParams::DEFAULT_LACUNARITY`], [`FbmParams::DEFAULT_PERSISTENCE`]):
    /// the shape of every auxiliary noise of the generator.
    pub const fn classic(octaves: u32, scale: f32) -> FbmParams {
        FbmParams {
            octaves,
            scale,
            lacunarity: FbmParams::DEFAULT_LACUNARITY,
            persistence: FbmParams::DEFAULT_PERSISTENCE,
        }
    }
}
impl Default for FbmParams {
    fn default() -> Self {
        FbmParams {
            octaves: FbmParams::DEFAULT_OCTAVES,
            scale: FbmParams::DEFAULT_SCALE,
            lacunarity: FbmParams::DEFAULT_LACUNARITY,
            persistence: FbmParams::DEFAULT_PERSISTENCE,
        }
    }
}
impl FbmParams {
    /// The parameters' schema ([`crate::schema`]).
    pub const PARAMS: &'static [ParamSpec<FbmParams>] = &[
        ParamSpec::int(
            "octaves",
            FbmParams::DEFAULT_OCTAVES as i64,
            Check::Range(1.0, 16.0),
            "",
            "Number of octaves.",
            |s: &Self| Value::Int(s.octaves as i64),
        )
        .slider("fbm_octaves", Slider::new(1.0, 16.0)),
        ParamSpec::float(
            "scale",
            FbmParams::DEFAULT_SCALE,
            Check::Positive,
            "m",
            "Wavelength of the first octave.",
            |s: &Self| Value::Float(s.scale),
        )
        .slider(
            "fbm_scale",
            Slider::new(1.0, 10000.0).or_greater().suffix("m"),
        ),
        ParamSpec::float(
            "lacunarity",
            FbmParams::DEFAULT_LACUNARITY,
            Check::Range(1.0, 4.0),
            "",
            "Frequency multiplier per octave.",
            |s: &Self| Value::Float(s.lacunarity),
        )
        .slider("fbm_lacunarity", Slider::new(1.0, 4.0).step(0.01)),
        ParamSpec::float(
            "persistence",
            FbmParams::DEFAULT_PERSISTENCE,
            Check::Range(0.0, 1.0),
            "",
            "Amplitude multiplier per octave.",
            |s: &Self| Value::Float(s.persistence),
        )
        .slider("fbm_persistence", Slider::new(0.0, 1.0).step(0.01)),
    ];
}

/// Value noise (cosine interpolation) settings; amplitude of octave `i` is `persistence^i`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ValueNoiseParams {
    /// Number of octaves, 1..=16. Default 6.
    pub octaves: u32,
    /// Wavelength of the first octave, metres, > 0. Default 350.
    pub scale: f32,
    /// Amplitude multiplier per octave, 0..=1. Default 0.5.
    pub persistence: f32,
}
impl ValueNoiseParams {
    /// Default [`ValueNoiseParams::octaves`].
    pub const DEFAULT_OCTAVES: u32 = 6;
    /// Default [`ValueNoiseParams::scale`], metres.
    pub const DEFAULT_SCALE: f32 = 350.0;
    /// Default [`ValueNoiseParams::persistence`].
    pub const DEFAULT_PERSISTENCE: f32 = 0.5;
    /// Frequency multiplier per octave (fixed: each octave doubles the frequency).
    pub const LACUNARITY: f32 = 2.0;
}
impl Default for ValueNoiseParams {
    fn default() -> Self {
        ValueNoiseParams {
            octaves: ValueNoiseParams::DEFAULT_OCTAVES,
            scale: ValueNoiseParams::DEFAULT_SCALE,
            persistence: ValueNoiseParams::DEFAULT_PERSISTENCE,
        }
    }
}
impl ValueNoiseParams {
    /// The parameters' schema ([`crate::schema`]).
    pub const PARAMS: &'static [ParamSpec<ValueNoiseParams>] = &[
        ParamSpec::int(
            "octaves",
            ValueNoiseParams::DEFAULT_OCTAVES as i64,
            Check::Range(1.0, 16.0),
            "",
            "Number of octaves.",
            |s: &Self| Value::Int(s.octaves as i64),
        )
        .slider("value_noise_octaves", Slider::new(1.0, 16.0)),
        ParamSpec::float(
            "scale",
            ValueNoiseParams::DEFAULT_SCALE,
            Check::Positive,
            "m",
            "Wavelength of the first octave.",
            |s: &Self| Value::Float(s.scale),
        )
        .slider(
            "value_noise_scale",
            Slider::new(1.0, 10000.0).or_greater().suffix("m"),
        ),
        ParamSpec::float(
            "persistence",
            ValueNoiseParams::DEFAULT_PERSISTENCE,
            Check::Range(0.0, 1.0),
            "",
            "Amplitude multiplier per octave (octave `i` has amplitude `persistence^i`).",
            |s: &Self| Value::Float(s.persistence),
        )
        .slider("value_noise_persistence", Slider::new(0.0, 1.0).step(0.01)),
    ];
}

/// Diamond-square settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DiamondSquareParams {
    /// Variation multiplier per half-step, 0..=1. Default 0.707 (≈ 1/√2).
    pub roughness: f32,
    /// Use the midrange `(max+min)/2` of the neighbours instead of their mean ("ridge" average).
    pub ridge: bool,
}
impl DiamondSquareParams {
    /// Default [`DiamondSquareParams::roughness`] (≈ 1/√2).
    pub const DEFAULT_ROUGHNESS: f32 = 0.707;
    /// Default [`DiamondSquareParams::ridge`].
    pub const DEFAULT_RIDGE: bool = false;
}
impl Default for DiamondSquareParams {
    fn default() -> Self {
        DiamondSquareParams {
            roughness: DiamondSquareParams::DEFAULT_ROUGHNESS,
            ridge: DiamondSquareParams::DEFAULT_RIDGE,
        }
    }
}
impl DiamondSquareParams {
    /// The parameters' schema ([`crate::schema`]).
    pub const PARAMS: &'static [ParamSpec<DiamondSquareParams>] = &[
        ParamSpec::float("roughness", DiamondSquareParams::DEFAULT_ROUGHNESS, Check::Range(0.0, 1.0), "", "Variation multiplier per half-step (≈ 1/√2).", |s: &Self| Value::Float(s.roughness))
            .slider("diamond_square_roughness", Slider::new(0.0, 1.0).step(0.001)),
        ParamSpec::boolean("ridge", DiamondSquareParams::DEFAULT_RIDGE, "Use the midrange `(max + min) / 2` of the neighbours instead of their mean (ridged look).", |s: &Self| Value::Bool(s.ridge))
            .property("diamond_square_ridge"),
    ];
}

/// Gaussian mountain islands settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GaussianParams {
    /// Candidate cells per map side, 1..=64. Default 6.
    pub cells: u32,
    /// Probability that a candidate cell holds a mountain, 0..=1. Default 0.6.
    pub density: f32,
    /// Gap between neighbouring mountains as a fraction of their distance, -1..=0.9.
    /// 0 = radii grow until they touch; negative values overlap (merge). Default -0.2.
    pub separation: f32,
}
impl GaussianParams {
    /// Default [`GaussianParams::cells`].
    pub const DEFAULT_CELLS: u32 = 6;
    /// Default [`GaussianParams::density`].
    pub const DEFAULT_DENSITY: f32 = 0.6;
    /// Default [`GaussianParams::separation`].
    pub const DEFAULT_SEPARATION: f32 = -0.2;
}
impl Default for GaussianParams {
    fn default() -> Self {
        GaussianParams {
            cells: GaussianParams::DEFAULT_CELLS,
            density: GaussianParams::DEFAULT_DENSITY,
            separation: GaussianParams::DEFAULT_SEPARATION,
        }
    }
}
impl GaussianParams {
    /// The parameters' schema ([`crate::schema`]).
    pub const PARAMS: &'static [ParamSpec<GaussianParams>] = &[
        ParamSpec::int("cells", GaussianParams::DEFAULT_CELLS as i64, Check::Range(1.0, 64.0), "cells per map side", "Candidate cells per map side.", |s: &Self| Value::Int(s.cells as i64))
            .slider("gaussian_cells", Slider::new(1.0, 64.0)),
        ParamSpec::float("density", GaussianParams::DEFAULT_DENSITY, Check::Range(0.0, 1.0), "probability", "Probability that a candidate cell holds a mountain.", |s: &Self| Value::Float(s.density))
            .slider("gaussian_density", Slider::new(0.0, 1.0).step(0.01)),
        ParamSpec::float("separation", GaussianParams::DEFAULT_SEPARATION, Check::Range(-1.0, 0.9), "fraction", "Gap between mountains as a fraction of their distance; 0 = radii grow until they touch, negative values overlap (merge).", |s: &Self| Value::Float(s.separation))
            .slider("gaussian_separation", Slider::new(-1.0, 0.9).step(0.01)),
    ];
}

/// Optional detail layer: a second noise field, capped and multiplied into the base height.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DetailParams {
    /// Whether the detail layer is applied. Default true.
    pub enabled: bool,
    /// Wavelength of the detail noise, metres, > 0. Default 90.
    pub scale: f32,
    /// Octaves of the detail noise, 1..=16. Default 4.
    pub octaves: u32,
    /// How strongly the detail modulates the base, 0..=1. Default 0.35.
    pub strength: f32,
    /// Cap applied to the detail field (values above are clamped), 0..=1. Default 0.85.
    pub cap: f32,
}
impl DetailParams {
    /// Default [`DetailParams::enabled`].
    pub const DEFAULT_ENABLED: bool = true;
    /// Default [`DetailParams::scale`], metres.
    pub const DEFAULT_SCALE: f32 = 90.0;
    /// Default [`DetailParams::octaves`].
    pub const DEFAULT_OCTAVES: u32 = 4;
    /// Default [`DetailParams::strength`].
    pub const DEFAULT_STRENGTH: f32 = 0.35;
    /// Default [`DetailParams::cap`].
    pub const DEFAULT_CAP: f32 = 0.85;

    /// The detail noise: classic fBm ([`FbmParams::classic`]) of `octaves` octaves at `scale`.
    pub const fn noise(&self) -> FbmParams {
        FbmParams::classic(self.octaves, self.scale)
    }
}
impl Default for DetailParams {
    fn default() -> Self {
        DetailParams {
            enabled: DetailParams::DEFAULT_ENABLED,
            scale: DetailParams::DEFAULT_SCALE,
            octaves: DetailParams::DEFAULT_OCTAVES,
            strength: DetailParams::DEFAULT_STRENGTH,
            cap: DetailParams::DEFAULT_CAP,
        }
    }
}
impl DetailParams {
    /// The parameters' schema ([`crate::schema`]).
    pub const PARAMS: &'static [ParamSpec<DetailParams>] = &[
        ParamSpec::boolean(
            "enabled",
            DetailParams::DEFAULT_ENABLED,
            "Whether a second noise field modulates the base height.",
            |s: &Self| Value::Bool(s.enabled),
        )
        .property("detail_enabled"),
        ParamSpec::float(
            "scale",
            DetailParams::DEFAULT_SCALE,
            Check::Positive,
            "m",
            "Wavelength of the detail noise.",
            |s: &Self| Value::Float(s.scale),
        )
        .slider(
            "detail_scale",
            Slider::new(1.0, 10000.0).or_greater().suffix("m"),
        ),
        ParamSpec::int(
            "octaves",
            DetailParams::DEFAULT_OCTAVES as i64,
            Check::Range(1.0, 16.0),
            "",
            "Octaves of the detail noise.",
            |s: &Self| Value::Int(s.octaves as i64),
        )
        .slider("detail_octaves", Slider::new(1.0, 16.0)),
        ParamSpec::float(
            "strength",
            DetailParams::DEFAULT_STRENGTH,
            Check::Range(0.0, 1.0),
            "",
            "How strongly it modulates the base.",
            |s: &Self| Value::Float(s.strength),
        )
        .slider("detail_strength", Slider::new(0.0, 1.0).step(0.01)),
        ParamSpec::float(
            "cap",
            DetailParams::DEFAULT_CAP,
            Check::Range(0.0, 1.0),
            "",
            "Values of the detail field above this cap are clamped.",
            |s: &Self| Value::Float(s.cap),
        )
        .slider("detail_cap", Slider::new(0.0, 1.0).step(0.01)),
    ];
}

/// Island mask: a deformed circle centred on the map.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MaskParams {
    /// Circle radius as a fraction of half the map size, 0.1..=0.95. Default 0.66.
    pub radius: f32,
    /// 1 = perfect circle, 0 = strongly deformed, 0..=1. Default 0.35.
    pub roundness: f32,
    /// Wavelength of the deforming noise, metres, > 0. Default 300.
    pub noise_scale: f32,
}
impl MaskParams {
    /// Default [`MaskParams::radius`].
    pub const DEFAULT_RADIUS: f32 = 0.66;
    /// Default [`MaskParams::roundness`].
    pub const DEFAULT_ROUNDNESS: f32 = 0.35;
    /// Default [`MaskParams::noise_scale`], metres.
    pub const DEFAULT_NOISE_SCALE: f32 = 300.0;
    /// Octaves of the deforming noise (fixed; the WGSL pass repeats it).
    pub const NOISE_OCTAVES: u32 = 4;

    /// The deforming noise: classic fBm of [`MaskParams::NOISE_OCTAVES`] octaves at `noise_scale`.
    pub const fn noise(&self) -> FbmParams {
        FbmParams::classic(MaskParams::NOISE_OCTAVES, self.noise_scale)
    }
}
impl Default for MaskParams {
    fn default() -> Self {
        MaskParams {
            radius: MaskParams::DEFAULT_RADIUS,
            roundness: MaskParams::DEFAULT_ROUNDNESS,
            noise_scale: MaskParams::DEFAULT_NOISE_SCALE,
        }
    }
}
impl MaskParams {
    /// The parameters' schema ([`crate::schema`]).
    pub const PARAMS: &'static [ParamSpec<MaskParams>] = &[
        ParamSpec::float(
            "radius",
            MaskParams::DEFAULT_RADIUS,
            Check::Range(0.1, 0.95),
            "fraction of half the map size",
            "Island mask (ROUND): circle radius.",
            |s: &Self| Value::Float(s.radius),
        )
        .slider("mask_radius", Slider::new(0.1, 0.95).step(0.01)),
        ParamSpec::float(
            "roundness",
            MaskParams::DEFAULT_ROUNDNESS,
            Check::Range(0.0, 1.0),
            "",
            "Island mask (ROUND): 1 = perfect circle, 0 = strongly deformed.",
            |s: &Self| Value::Float(s.roundness),
        )
        .slider("mask_roundness", Slider::new(0.0, 1.0).step(0.01)),
        ParamSpec::float(
            "noise_scale",
            MaskParams::DEFAULT_NOISE_SCALE,
            Check::Positive,
            "m",
            "Island mask (ROUND): wavelength of the deforming noise.",
            |s: &Self| Value::Float(s.noise_scale),
        )
        .slider(
            "mask_noise_scale",
            Slider::new(1.0, 10000.0).or_greater().suffix("m"),
        ),
    ];
}

/// Outline of the island ([`crate::shape`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum IslandShape {
    /// The seed picks the shape and its parameters (default): changing only the seed shows
    /// the whole range.
    #[default]
    Auto,
    /// The deformed circle of [`MaskParams`] (the generator's only outline before shapes).
    Round,
    /// A long island: [`ShapeParams::aspect_ratio`], [`ShapeParams::orientation`].
    Elongated,
    /// An island around a wide bay: [`ShapeParams::bay_depth`], [`ShapeParams::bay_direction`].
    Crescent,
    /// Several islands of varied size with sea channels between them:
    /// [`ShapeParams::island_count`].
    Archipelago,
    /// A thin ring of land around a lagoon of sea-level water (the lagoon is classified as sea).
    Atoll,
    /// One dominant cone, with a crater lake when [`ShapeParams::crater_lake`].
    Volcanic,
}

impl IslandShape {
    /// Every shape, in the order of their numbers (Godot enum: AUTO = 0, ROUND = 1, ...).
    pub const ALL: [IslandShape; 7] = [
        IslandShape::Auto,
        IslandShape::Round,
        IslandShape::Elongated,
        IslandShape::Crescent,
        IslandShape::Archipelago,
        IslandShape::Atoll,
        IslandShape::Volcanic,
    ];
    /// Stable lower-case name (`auto`, `round`, `elongated`, `crescent`, `archipelago`,
    /// `atoll`, `volcanic`), as the CLI and JSON spell it.
    pub const fn name(self) -> &'static str {
        match self {
            IslandShape::Auto => "auto",
            IslandShape::Round => "round",
            IslandShape::Elongated => "elongated",
            IslandShape::Crescent => "crescent",
            IslandShape::Archipelago => "archipelago",
            IslandShape::Atoll => "atoll",
            IslandShape::Volcanic => "volcanic",
        }
    }
    /// The shape named `name` ([`IslandShape::name`], case-insensitive).
    pub fn from_name(name: &str) -> Option<IslandShape> {
        let name = name.to_ascii_lowercase();
        IslandShape::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// Outline of the island: which shape, its size and the shape's own settings
/// ([`crate::shape`]). Ignored where a [`IslandParams::coast_mask`] is given; for
/// [`Algorithm::GaussianIslands`] with `gaussian.separation > 0` the outline follows the
/// mountains instead (each one its own island), only `land_fraction` applies.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ShapeParams {
    /// Which outline. Default [`IslandShape::Auto`].
    pub shape: IslandShape,
    /// Share of the map that is land in the outline, 0 or 0.02..=0.8; 0 = the shape's own size
    /// (seed-varied for AUTO; ROUND keeps the size of `mask.radius`). Default 0.
    pub land_fraction: f32,
    /// ELONGATED: length / width of the island, 1..=8. Default 2.5.
    pub aspect_ratio: f32,
    /// ELONGATED: direction of the long axis, degrees counter-clockwise from +x, -360..=360.
    /// Default 30.
    pub orientation: f32,
    /// CRESCENT: how far the bay cuts into the island, fraction of its diameter, 0.05..=0.95.
    /// Default 0.5.
    pub bay_depth: f32,
    /// CRESCENT: direction the bay opens to, degrees counter-clockwise from +x, -360..=360.
    /// Default 90.
    pub bay_direction: f32,
    /// ARCHIPELAGO: number of islands placed, 2..=16 (fewer where they do not fit). Default 5.
    pub island_count: u32,
    /// VOLCANIC: a crater (holding a lake) at the top of the cone. Default true.
    pub crater_lake: bool,
    /// VOLCANIC: height of the cone's peak, fraction of `max_height`, 0.1..=1. Default 0.85.
    pub cone_height: f32,
}
impl ShapeParams {
    /// Default [`ShapeParams::shape`].
    pub const DEFAULT_SHAPE: IslandShape = IslandShape::Auto;
    /// Default [`ShapeParams::land_fraction`] (the shape's own size).
    pub const DEFAULT_LAND_FRACTION: f32 = 0.0;
    /// Default [`ShapeParams::aspect_ratio`].
    pub const DEFAULT_ASPECT_RATIO: f32 = 2.5;
    /// Default [`ShapeParams::orientation`], degrees.
    pub const DEFAULT_ORIENTATION: f32 = 30.0;
    /// Default [`ShapeParams::bay_depth`].
    pub const DEFAULT_BAY_DEPTH: f32 = 0.5;
    /// Default [`ShapeParams::bay_direction`], degrees.
    pub const DEFAULT_BAY_DIRECTION: f32 = 90.0;
    /// Default [`ShapeParams::island_count`].
    pub const DEFAULT_ISLAND_COUNT: u32 = 5;
    /// Default [`ShapeParams::crater_lake`].
    pub const DEFAULT_CRATER_LAKE: bool = true;
    /// Default [`ShapeParams::cone_height`] (the cone of the first VOLCANIC islands).
    pub const DEFAULT_CONE_HEIGHT: f32 = 0.85;
}
impl Default for ShapeParams {
    fn default() -> Self {
        ShapeParams {
            shape: ShapeParams::DEFAULT_SHAPE,
            land_fraction: ShapeParams::DEFAULT_LAND_FRACTION,
            aspect_ratio: ShapeParams::DEFAULT_ASPECT_RATIO,
            orientation: ShapeParams::DEFAULT_ORIENTATION,
            bay_depth: ShapeParams::DEFAULT_BAY_DEPTH,
            bay_direction: ShapeParams::DEFAULT_BAY_DIRECTION,
            island_count: ShapeParams::DEFAULT_ISLAND_COUNT,
            crater_lake: ShapeParams::DEFAULT_CRATER_LAKE,
            cone_height: ShapeParams::DEFAULT_CONE_HEIGHT,
        }
    }
}
impl ShapeParams {
    /// The parameters' schema ([`crate::schema`]).
    pub const PARAMS: &'static [ParamSpec<ShapeParams>] = &[
        ParamSpec::enumeration("shape", &["AUTO", "ROUND", "ELONGATED", "CRESCENT", "ARCHIPELAGO", "ATOLL", "VOLCANIC"], ShapeParams::DEFAULT_SHAPE as i64, "Island outline (constants `SHAPE_*`). **AUTO**: the seed picks the shape and its settings (aspect, orientation, bay, island count, size, crater), so changing only the seed shows the whole range. **ROUND**: the deformed circle of the three `mask_*` settings (the only outline before shapes; exactly its old output). **ELONGATED**: a long, slightly bent island. **CRESCENT**: an island around a wide bay. **ARCHIPELAGO**: one main island and smaller ones with sea channels between them. **ATOLL**: a thin reef ring around a lagoon of sea-level water; the lagoon is classified as **sea** (`get_water_image` / water kind 3, level 0), not as a lake, though no channel connects it to the open sea. **VOLCANIC**: one dominant cone (`shape_cone_height` × `max_height`), with a crater lake when `shape_crater_lake`. Every outline is defined in world space (fractions of `world_size`): the same seed and shape give the same island at every `resolution`. Ignored when `coast_mask` is set; with `algorithm` = Gaussian islands and `gaussian_separation` > 0 the outline follows the mountains instead (each one its own island).", |s: &Self| Value::Int(s.shape as i64))
            .property("island_shape"),
        ParamSpec::float("land_fraction", ShapeParams::DEFAULT_LAND_FRACTION, Check::ZeroOrRange(0.02, 0.8), "share of the map", "Size of the outline: the share of the map's samples that are land in it, honoured exactly by the mask (the finished island differs by a few per cent: beaches, erosion, river mouths). 0 = the shape's own size (Elongated 0.20, Crescent 0.26, Archipelago 0.20, Atoll 0.11, Volcanic 0.28, each × 0.8–1.2 by seed under Auto; Round keeps the size of `mask_radius`). Ignored by `coast_mask`.", |s: &Self| Value::Float(s.land_fraction))
            .slider("land_fraction", Slider::new(0.0, 0.8).step(0.01)),
        ParamSpec::float("aspect_ratio", ShapeParams::DEFAULT_ASPECT_RATIO, Check::Range(1.0, 8.0), "", "ELONGATED: length / width (shortened when the island would not fit the map along its direction).", |s: &Self| Value::Float(s.aspect_ratio))
            .slider("shape_aspect_ratio", Slider::new(1.0, 8.0).step(0.1)),
        ParamSpec::float("orientation", ShapeParams::DEFAULT_ORIENTATION, Check::Range(-360.0, 360.0), "°", "ELONGATED: direction of the long axis, counter-clockwise from +x (seen from above, +z down in the preview).", |s: &Self| Value::Float(s.orientation))
            .slider("shape_orientation", Slider::new(-360.0, 360.0).step(1.0).suffix("°")),
        ParamSpec::float("bay_depth", ShapeParams::DEFAULT_BAY_DEPTH, Check::Range(0.05, 0.95), "fraction of the diameter", "CRESCENT: how far the bay cuts into the island.", |s: &Self| Value::Float(s.bay_depth))
            .slider("shape_bay_depth", Slider::new(0.05, 0.95).step(0.01)),
        ParamSpec::float("bay_direction", ShapeParams::DEFAULT_BAY_DIRECTION, Check::Range(-360.0, 360.0), "°", "CRESCENT: direction the bay opens to, counter-clockwise from +x.", |s: &Self| Value::Float(s.bay_direction))
            .slider("shape_bay_direction", Slider::new(-360.0, 360.0).step(1.0).suffix("°")),
        ParamSpec::int("island_count", ShapeParams::DEFAULT_ISLAND_COUNT as i64, Check::Range(2.0, 16.0), "", "ARCHIPELAGO: islands placed (fewer when they do not fit with a channel between each pair).", |s: &Self| Value::Int(s.island_count as i64))
            .slider("shape_island_count", Slider::new(2.0, 16.0)),
        ParamSpec::boolean("crater_lake", ShapeParams::DEFAULT_CRATER_LAKE, "VOLCANIC: dig a crater at the top of the cone; the drainage fills it with a lake.", |s: &Self| Value::Bool(s.crater_lake))
            .property("shape_crater_lake"),
        ParamSpec::float(
            "cone_height",
            ShapeParams::DEFAULT_CONE_HEIGHT,
            Check::Range(0.1, 1.0),
            "fraction of `max_height`",
            "VOLCANIC: height of the cone's peak.",
            |s: &Self| Value::Float(s.cone_height),
        )
        .slider("shape_cone_height", Slider::new(0.1, 1.0).step(0.01)),
    ];
}

/// A drawn outline replacing the generated one: a grey image, `width × height` row-major
/// values in 0..=1 (1 = white = land, 0 = black = sea, grey = the coast passes where the
/// bilinearly resampled value crosses 0.5). Resampled to the map when the sizes differ; the
/// map's border ring stays sea. Not serialised (a parameter file cannot carry it).
#[derive(Clone, PartialEq)]
pub struct CoastMask {
    width: usize,
    height: usize,
    values: Vec<f32>,
}

impl fmt::Debug for CoastMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CoastMask({}x{})", self.width, self.height)
    }
}

impl CoastMask {
    /// A mask from 8-bit grey values (255 = land), `width × height` row-major.
    pub fn from_luma8(width: usize, height: usize, luma: &[u8]) -> Result<CoastMask, ParamError> {
        let values = luma.iter().map(|&v| v as f32 * (1.0 / 255.0)).collect();
        CoastMask::from_values(width, height, values)
    }

    /// A mask from values in 0..=1 (1 = land), `width × height` row-major. Errors on an empty
    /// or mis-sized grid, values out of range, or a mask that is all land or all sea.
    pub fn from_values(
        width: usize,
        height: usize,
        values: Vec<f32>,
    ) -> Result<CoastMask, ParamError> {
        let m = CoastMask {
            width,
            height,
            values,
        };
        m.validate()?;
        Ok(m)
    }

    /// Width, height of the grid.
    pub fn size(&self) -> (usize, usize) {
        (self.width, self.height)
    }

    /// The values, row-major.
    pub fn values(&self) -> &[f32] {
        &self.values
    }

    /// See [`CoastMask::from_values`].
    pub fn validate(&self) -> Result<(), ParamError> {
        let (w, h) = (self.width, self.height);
        if w < 2 || h < 2 {
            return err(
                "coast_mask",
                format!("must be at least 2x2 pixels, got {w}x{h}"),
            );
        }
        if w.checked_mul(h) != Some(self.values.len()) {
            return err(
                "coast_mask",
                format!("{w}x{h} needs {} values, got {}", w * h, self.values.len()),
            );
        }
        if let Some(v) = self.values.iter().find(|v| !(0.0..=1.0).contains(*v)) {
            return err("coast_mask", format!("values must be in 0..=1, got {v}"));
        }
        if self.values.iter().all(|&v| v < 0.5) {
            return err(
                "coast_mask",
                "is all sea (no value reaches 0.5: white = land)",
            );
        }
        if self.values.iter().all(|&v| v >= 0.5) {
            return err(
                "coast_mask",
                "is all land (no value below 0.5: black = sea)",
            );
        }
        Ok(())
    }
}

/// Coastal falloff (applied through the exact distance to the coast).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CoastParams {
    /// Distance inland over which the large-scale relief rises to full height, metres, > 0. Default 90.
    pub coast_width: f32,
    /// Height of the land right behind the beach, metres, >= 0. Default 2.5.
    pub beach_height: f32,
    /// Distance offshore over which the sea floor drops to `sea_depth`, metres, > 0. Default 60.
    pub shelf_width: f32,
    /// Depth of the open sea, metres, > 0. Default 18.
    pub sea_depth: f32,
    /// Amplitude of the fine detail added after the falloff, metres, >= 0. Default 1.6.
    pub fine_amplitude: f32,
    /// Wavelength of the fine detail, metres, > 0. Default 24.
    pub fine_scale: f32,
}
impl CoastParams {
    /// Default [`CoastParams::coast_width`], metres.
    pub const DEFAULT_COAST_WIDTH: f32 = 90.0;
    /// Default [`CoastParams::beach_height`], metres.
    pub const DEFAULT_BEACH_HEIGHT: f32 = 2.5;
    /// Default [`CoastParams::shelf_width`], metres.
    pub const DEFAULT_SHELF_WIDTH: f32 = 60.0;
    /// Default [`CoastParams::sea_depth`], metres.
    pub const DEFAULT_SEA_DEPTH: f32 = 18.0;
    /// Default [`CoastParams::fine_amplitude`], metres.
    pub const DEFAULT_FINE_AMPLITUDE: f32 = 1.6;
    /// Default [`CoastParams::fine_scale`], metres.
    pub const DEFAULT_FINE_SCALE: f32 = 24.0;
    /// Octaves of the fine detail noise (fixed; the GPU pipeline repeats it).
    pub const FINE_OCTAVES: u32 = 3;
    /// The beach rises to `beach_height` over this fraction of `coast_width` (fixed).
    pub const BEACH_RISE: f32 = 0.25;

    /// The fine detail noise: classic fBm of [`CoastParams::FINE_OCTAVES`] octaves at `fine_scale`.
    pub const fn fine_noise(&self) -> FbmParams {
        FbmParams::classic(CoastParams::FINE_OCTAVES, self.fine_scale)
    }
}
impl Default for CoastParams {
    fn default() -> Self {
        CoastParams {
            coast_width: CoastParams::DEFAULT_COAST_WIDTH,
            beach_height: CoastParams::DEFAULT_BEACH_HEIGHT,
            shelf_width: CoastParams::DEFAULT_SHELF_WIDTH,
            sea_depth: CoastParams::DEFAULT_SEA_DEPTH,
            fine_amplitude: CoastParams::DEFAULT_FINE_AMPLITUDE,
            fine_scale: CoastParams::DEFAULT_FINE_SCALE,
        }
    }
}
impl CoastParams {
    /// The parameters' schema ([`crate::schema`]).
    pub const PARAMS: &'static [ParamSpec<CoastParams>] = &[
        ParamSpec::float("coast_width", CoastParams::DEFAULT_COAST_WIDTH, Check::Positive, "m", "Distance inland over which the relief rises to full height.", |s: &Self| Value::Float(s.coast_width))
            .slider("coast_width", Slider::new(0.1, 1000.0).or_greater().suffix("m")),
        ParamSpec::float("beach_height", CoastParams::DEFAULT_BEACH_HEIGHT, Check::Range(0.0, 1.0e6), "m", "Height of the land right behind the beach.", |s: &Self| Value::Float(s.beach_height))
            .slider("coast_beach_height", Slider::new(0.0, 50.0).or_greater().suffix("m")),
        ParamSpec::float("shelf_width", CoastParams::DEFAULT_SHELF_WIDTH, Check::Positive, "m", "Distance offshore over which the sea floor drops to `coast_sea_depth`.", |s: &Self| Value::Float(s.shelf_width))
            .slider("coast_shelf_width", Slider::new(0.1, 1000.0).or_greater().suffix("m")),
        ParamSpec::float("sea_depth", CoastParams::DEFAULT_SEA_DEPTH, Check::Positive, "m", "Depth of the open sea.", |s: &Self| Value::Float(s.sea_depth))
            .slider("coast_sea_depth", Slider::new(0.1, 500.0).or_greater().suffix("m")),
        ParamSpec::float("fine_amplitude", CoastParams::DEFAULT_FINE_AMPLITUDE, Check::Range(0.0, 1.0e6), "m", "Amplitude of the fine detail added after the falloff; also **less than `coast_sea_depth / 4`** (keeps the map border under water).", |s: &Self| Value::Float(s.fine_amplitude))
            .slider("coast_fine_amplitude", Slider::new(0.0, 20.0).or_greater().suffix("m")),
        ParamSpec::float("fine_scale", CoastParams::DEFAULT_FINE_SCALE, Check::Positive, "m", "Wavelength of the fine detail.", |s: &Self| Value::Float(s.fine_scale))
            .slider("coast_fine_scale", Slider::new(0.1, 1000.0).or_greater().suffix("m")),
    ];
}

/// Which rivers the island gets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RiverMode {
    /// Rivers follow the drainage network (flow accumulation over the eroded terrain) and are
    /// carved by [`crate::channels::carve_rivers`] (default).
    #[default]
    Flow,
    /// One river along a noisy quadratic Bézier through the island centre ([`crate::river`]),
    /// the generator's river before the drainage stage existed.
    Bezier,
    /// No river channels (lakes and the sea are still filled by the drainage stage).
    Off,
}

impl RiverMode {
    /// Every mode, in the order of their numbers (Godot enum: FLOW = 0, BEZIER = 1, OFF = 2).
    pub const ALL: [RiverMode; 3] = [RiverMode::Flow, RiverMode::Bezier, RiverMode::Off];
    /// Stable lower-case name (`flow`, `bezier`, `off`).
    pub const fn name(self) -> &'static str {
        match self {
            RiverMode::Flow => "flow",
            RiverMode::Bezier => "bezier",
            RiverMode::Off => "off",
        }
    }
    /// The mode named `name` ([`RiverMode::name`]).
    pub fn from_name(name: &str) -> Option<RiverMode> {
        RiverMode::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// Rivers: the mode, and the shape of the Bézier river ([`RiverMode::Bezier`]; the flow
/// rivers' size comes from [`crate::drainage::DrainageSettings`]).
///
/// Serialised parameters from before the river modes (`"enabled": false`, no `mode`) load as
/// [`RiverMode::Off`]; `"enabled": true` without a mode loads as the default mode.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, from = "RiverParamsSerde")]
pub struct RiverParams {
    /// Which rivers. Default [`RiverMode::Flow`].
    pub mode: RiverMode,
    /// Width of the Bézier river bed (below sea level), metres, > 0. Default 12.
    pub width: f32,
    /// Width of the smooth bank on each side, metres, >= 0. Default 35.
    pub bank: f32,
    /// Depth of the Bézier river bed below sea level, metres, > 0. Default 3.
    pub depth: f32,
    /// Amplitude of the sideways noise displacement, metres, >= 0. Default 45.
    pub meander: f32,
    /// Wavelength of the displacement noise, metres, > 0. Default 260.
    pub meander_scale: f32,
}

/// [`RiverParams`] as read: also accepts the `enabled` flag of older parameter files.
#[derive(Deserialize)]
#[serde(default)]
struct RiverParamsSerde {
    enabled: Option<bool>,
    mode: Option<RiverMode>,
    width: f32,
    bank: f32,
    depth: f32,
    meander: f32,
    meander_scale: f32,
}

impl Default for RiverParamsSerde {
    fn default() -> Self {
        let d = RiverParams::default();
        RiverParamsSerde {
            enabled: None,
            mode: None,
            width: d.width,
            bank: d.bank,
            depth: d.depth,
            meander: d.meander,
            meander_scale: d.meander_scale,
        }
    }
}

impl From<RiverParamsSerde> for RiverParams {
    fn from(r: RiverParamsSerde) -> Self {
        let mode = match (r.mode, r.enabled) {
            (Some(m), _) => m,
            (None, Some(false)) => RiverMode::Off,
            (None, _) => RiverMode::default(),
        };
        RiverParams {
            mode,
            width: r.width,
            bank: r.bank,
            depth: r.depth,
            meander: r.meander,
            meander_scale: r.meander_scale,
        }
    }
}

impl RiverParams {
    /// Default [`RiverParams::mode`].
    pub const DEFAULT_MODE: RiverMode = RiverMode::Flow;
    /// Default [`RiverParams::width`], metres.
    pub const DEFAULT_WIDTH: f32 = 12.0;
    /// Default [`RiverParams::bank`], metres.
    pub const DEFAULT_BANK: f32 = 35.0;
    /// Default [`RiverParams::depth`], metres.
    pub const DEFAULT_DEPTH: f32 = 3.0;
    /// Default [`RiverParams::meander`], metres.
    pub const DEFAULT_MEANDER: f32 = 45.0;
    /// Default [`RiverParams::meander_scale`], metres.
    pub const DEFAULT_MEANDER_SCALE: f32 = 260.0;
    /// Octaves of the displacement noise (fixed; the WGSL pass repeats it).
    pub const WARP_OCTAVES: u32 = 3;

    /// The displacement noise: classic fBm of [`RiverParams::WARP_OCTAVES`] octaves at
    /// `meander_scale`.
    pub const fn warp_noise(&self) -> FbmParams {
        FbmParams::classic(RiverParams::WARP_OCTAVES, self.meander_scale)
    }
}
impl Default for RiverParams {
    fn default() -> Self {
        RiverParams {
            mode: RiverParams::DEFAULT_MODE,
            width: RiverParams::DEFAULT_WIDTH,
            bank: RiverParams::DEFAULT_BANK,
            depth: RiverParams::DEFAULT_DEPTH,
            meander: RiverParams::DEFAULT_MEANDER,
            meander_scale: RiverParams::DEFAULT_MEANDER_SCALE,
        }
    }
}
impl RiverParams {
    /// The parameters' schema ([`crate::schema`]).
    pub const PARAMS: &'static [ParamSpec<RiverParams>] = &[
        ParamSpec::enumeration("mode", &["FLOW", "BEZIER", "OFF"], RiverParams::DEFAULT_MODE as i64, "Which rivers (constants `RIVER_MODE_*`). FLOW: rivers follow the drainage network and are carved into the terrain. BEZIER: one noisy canal through the centre, below sea level (the river of earlier versions). OFF: no rivers (lakes are kept).", |s: &Self| Value::Int(s.mode as i64))
            .property("river_mode"),
        ParamSpec::float("width", RiverParams::DEFAULT_WIDTH, Check::Positive, "m", "BEZIER: width of the bed (below sea level).", |s: &Self| Value::Float(s.width))
            .slider("river_width", Slider::new(0.1, 200.0).or_greater().suffix("m")),
        ParamSpec::float("bank", RiverParams::DEFAULT_BANK, Check::Range(0.0, 1.0e6), "m", "BEZIER: width of the smooth bank on each side.", |s: &Self| Value::Float(s.bank))
            .slider("river_bank", Slider::new(0.0, 200.0).or_greater().suffix("m")),
        ParamSpec::float("depth", RiverParams::DEFAULT_DEPTH, Check::Positive, "m", "BEZIER: depth of the bed below sea level.", |s: &Self| Value::Float(s.depth))
            .slider("river_depth", Slider::new(0.1, 50.0).or_greater().suffix("m")),
        ParamSpec::float("meander", RiverParams::DEFAULT_MEANDER, Check::Range(0.0, 1.0e6), "m", "BEZIER: amplitude of the sideways meander.", |s: &Self| Value::Float(s.meander))
            .slider("river_meander", Slider::new(0.0, 500.0).or_greater().suffix("m")),
        ParamSpec::float("meander_scale", RiverParams::DEFAULT_MEANDER_SCALE, Check::Positive, "m", "BEZIER: wavelength of the meander noise.", |s: &Self| Value::Float(s.meander_scale))
            .slider("river_meander_scale", Slider::new(1.0, 5000.0).or_greater().suffix("m")),
    ];
}

/// One biome: how it reshapes the normalised base height.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Biome {
    /// Display name.
    pub name: String,
    /// Multiplier of the normalised height, 0..=1.
    pub height_scale: f32,
    /// Remap curve exponent applied to the normalised height (`h^exponent`), 0.1..=8.
    pub exponent: f32,
    /// Multiplier of the fine detail amplitude, 0..=4.
    pub roughness: f32,
    /// Ground cover on flat, mid-height land: 0 = grass, 1 = sand.
    pub sandiness: f32,
}
impl Default for Biome {
    fn default() -> Self {
        Biome {
            name: "plains".into(),
            height_scale: 0.5,
            exponent: 1.2,
            roughness: 0.5,
            sandiness: 0.0,
        }
    }
}

/// The default biome table.
pub fn default_biomes() -> Vec<Biome> {
    let b = |name: &str, height_scale, exponent, roughness, sandiness| Biome {
        name: name.into(),
        height_scale,
        exponent,
        roughness,
        sandiness,
    };
    vec![
        b("meadow", 0.4, 1.4, 0.5, 0.0),
        b("forest_hills", 0.7, 1.0, 1.0, 0.0),
        b("mountains", 1.0, 0.85, 1.6, 0.0),
        b("plateau", 0.55, 0.5, 0.4, 0.0),
        b("dunes", 0.3, 1.0, 0.8, 1.0),
    ]
}

/// Displaced-grid Voronoi biome regions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BiomeParams {
    /// Voronoi cells per map side, 1..=64. Default 5.
    pub grid: u32,
    /// How far each cell centre may move from its grid position, fraction of a cell, 0..=1. Default 0.8.
    pub distortion: f32,
    /// Amplitude of the fBm that wiggles region boundaries (typical displacement is a third of it), metres, >= 0. Default 100.
    pub boundary_noise: f32,
    /// Width over which neighbouring biomes blend, metres, > 0. Default 120.
    pub blend_width: f32,
    /// Biome table (1..=16 entries). Region `i` gets biome `hash(i) % len`.
    pub biomes: Vec<Biome>,
}
impl BiomeParams {
    /// Default [`BiomeParams::grid`].
    pub const DEFAULT_GRID: u32 = 5;
    /// Default [`BiomeParams::distortion`].
    pub const DEFAULT_DISTORTION: f32 = 0.8;
    /// Default [`BiomeParams::boundary_noise`], metres.
    pub const DEFAULT_BOUNDARY_NOISE: f32 = 100.0;
    /// Default [`BiomeParams::blend_width`], metres.
    pub const DEFAULT_BLEND_WIDTH: f32 = 120.0;
    /// Most entries of [`BiomeParams::biomes`] (biome indices are 4 bits on the GPU).
    pub const MAX_BIOMES: usize = 16;
    /// Octaves of the boundary wiggle noise (fixed; the WGSL pass repeats it).
    pub const WARP_OCTAVES: u32 = 3;
}
impl Default for BiomeParams {
    fn default() -> Self {
        BiomeParams {
            grid: BiomeParams::DEFAULT_GRID,
            distortion: BiomeParams::DEFAULT_DISTORTION,
            boundary_noise: BiomeParams::DEFAULT_BOUNDARY_NOISE,
            blend_width: BiomeParams::DEFAULT_BLEND_WIDTH,
            biomes: default_biomes(),
        }
    }
}
impl BiomeParams {
    /// The parameters' schema ([`crate::schema`]; the biome table is checked by hand).
    pub const PARAMS: &'static [ParamSpec<BiomeParams>] = &[
        ParamSpec::int(
            "grid",
            BiomeParams::DEFAULT_GRID as i64,
            Check::Range(1.0, 64.0),
            "cells per map side",
            "Voronoi cells per map side.",
            |s: &Self| Value::Int(s.grid as i64),
        )
        .slider("biome_grid", Slider::new(1.0, 64.0)),
        ParamSpec::float(
            "distortion",
            BiomeParams::DEFAULT_DISTORTION,
            Check::Range(0.0, 1.0),
            "fraction of a cell",
            "How far each cell centre may move from its grid position.",
            |s: &Self| Value::Float(s.distortion),
        )
        .slider("biome_distortion", Slider::new(0.0, 1.0).step(0.01)),
        ParamSpec::float(
            "boundary_noise",
            BiomeParams::DEFAULT_BOUNDARY_NOISE,
            Check::Range(0.0, 1.0e6),
            "m",
            "Amplitude of the noise that wiggles region boundaries.",
            |s: &Self| Value::Float(s.boundary_noise),
        )
        .slider(
            "biome_boundary_noise",
            Slider::new(0.0, 500.0).or_greater().suffix("m"),
        ),
        ParamSpec::float(
            "blend_width",
            BiomeParams::DEFAULT_BLEND_WIDTH,
            Check::Positive,
            "m",
            "Width over which neighbouring biomes blend.",
            |s: &Self| Value::Float(s.blend_width),
        )
        .slider(
            "biome_blend_width",
            Slider::new(0.1, 1000.0).or_greater().suffix("m"),
        ),
    ];
}

/// Automatic splat (sand, grass, rock, snow) settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SplatParams {
    /// Height below which sand dominates, metres. Default 3.5.
    pub sand_height: f32,
    /// Height above which snow appears, as a fraction of `max_height`, 0..=1. Default 0.5.
    pub snow_height: f32,
    /// Noise jitter of both thresholds, metres, >= 0. Default 4.
    pub jitter: f32,
    /// Slope above which rock dominates, degrees, 0..=90. Default 34.
    pub rock_slope: f32,
    /// Separable box-blur passes (radius 1) smoothing the weights, 0..=8. Default 2.
    pub blur_passes: u32,
    /// Strength of the water's effect on the splat ([`crate::wetness`]: sandy beds, greener
    /// banks, sandy river mouths, rockier dry slopes), 0..=1 (0 = none). Default 1.
    pub wetness: f32,
}
impl SplatParams {
    /// Default [`SplatParams::sand_height`], metres.
    pub const DEFAULT_SAND_HEIGHT: f32 = 3.5;
    /// Default [`SplatParams::snow_height`] (fraction of `max_height`).
    pub const DEFAULT_SNOW_HEIGHT: f32 = 0.5;
    /// Default [`SplatParams::jitter`], metres.
    pub const DEFAULT_JITTER: f32 = 4.0;
    /// Default [`SplatParams::rock_slope`], degrees.
    pub const DEFAULT_ROCK_SLOPE: f32 = 34.0;
    /// Default [`SplatParams::blur_passes`].
    pub const DEFAULT_BLUR_PASSES: u32 = 2;
    /// Most accepted [`SplatParams::blur_passes`].
    pub const MAX_BLUR_PASSES: u32 = 8;
    /// Default [`SplatParams::wetness`].
    pub const DEFAULT_WETNESS: f32 = 1.0;
}
impl Default for SplatParams {
    fn default() -> Self {
        SplatParams {
            sand_height: SplatParams::DEFAULT_SAND_HEIGHT,
            snow_height: SplatParams::DEFAULT_SNOW_HEIGHT,
            jitter: SplatParams::DEFAULT_JITTER,
            rock_slope: SplatParams::DEFAULT_ROCK_SLOPE,
            blur_passes: SplatParams::DEFAULT_BLUR_PASSES,
            wetness: SplatParams::DEFAULT_WETNESS,
        }
    }
}
impl SplatParams {
    /// The parameters' schema ([`crate::schema`]).
    pub const PARAMS: &'static [ParamSpec<SplatParams>] = &[
        ParamSpec::float("sand_height", SplatParams::DEFAULT_SAND_HEIGHT, Check::Range(-1.0e6, 1.0e6), "m", "Height below which sand dominates.", |s: &Self| Value::Float(s.sand_height))
            .slider("splat_sand_height", Slider::new(-100.0, 100.0).or_greater().or_less().suffix("m")),
        ParamSpec::float("snow_height", SplatParams::DEFAULT_SNOW_HEIGHT, Check::Range(0.0, 1.0), "fraction of `max_height`", "Height above which snow appears.", |s: &Self| Value::Float(s.snow_height))
            .slider("splat_snow_height", Slider::new(0.0, 1.0).step(0.01)),
        ParamSpec::float("jitter", SplatParams::DEFAULT_JITTER, Check::Range(0.0, 1.0e6), "m", "Noise jitter of both thresholds.", |s: &Self| Value::Float(s.jitter))
            .slider("splat_jitter", Slider::new(0.0, 50.0).or_greater().suffix("m")),
        ParamSpec::float("rock_slope", SplatParams::DEFAULT_ROCK_SLOPE, Check::Range(0.0, 90.0), "°", "Slope above which rock dominates.", |s: &Self| Value::Float(s.rock_slope))
            .slider("splat_rock_slope", Slider::new(0.0, 90.0).step(0.1).suffix("°")),
        ParamSpec::int("blur_passes", SplatParams::DEFAULT_BLUR_PASSES as i64, Check::Range(0.0, SplatParams::MAX_BLUR_PASSES as f32), "", "Box-blur passes smoothing the weights.", |s: &Self| Value::Int(s.blur_passes as i64))
            .slider("splat_blur_passes", Slider::new(0.0, 8.0)),
        ParamSpec::float("wetness", SplatParams::DEFAULT_WETNESS, Check::Range(0.0, 1.0), "", "How much the water shapes the ground layers: sandy river and lake beds, greener banks, sandy river mouths, rockier slopes far from any water. 0 = none.", |s: &Self| Value::Float(s.wetness))
            .slider("splat_wetness", Slider::new(0.0, 1.0).step(0.01)),
    ];
}

/// All generator parameters. `Default` gives a good-looking 1 km island.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct IslandParams {
    /// Seed; every `u64` value works. Default 1.
    pub seed: u64,
    /// Samples per side, 2^n+1 from 33 to 8193. Default 1025.
    pub resolution: u32,
    /// Edge length of the square map, metres, [`MIN_WORLD_SIZE`]..=[`MAX_WORLD_SIZE`]
    /// (1 m to 10,000 km). Default 1024.
    pub world_size: f32,
    /// Highest possible land height, metres, finite and > 0. Default 120.
    pub max_height: f32,
    /// Chunk edge in grid cells: power of two from 16 to 256 that divides `resolution - 1`. Default 64.
    pub chunk_size: u32,
    /// Base height algorithm. Default fBm.
    pub algorithm: Algorithm,
    /// fBm settings.
    pub fbm: FbmParams,
    /// Value noise settings.
    pub value_noise: ValueNoiseParams,
    /// Diamond-square settings.
    pub diamond_square: DiamondSquareParams,
    /// Gaussian islands settings.
    pub gaussian: GaussianParams,
    /// Detail layer.
    pub detail: DetailParams,
    /// Shaping curve: heights sampled at evenly spaced inputs in 0..=1 (≥ 2 points, each 0..=1),
    /// linearly interpolated. Default: a gentle S that widens lowlands and sharpens peaks.
    pub shaping_curve: Vec<f32>,
    /// Island mask of [`IslandShape::Round`].
    pub mask: MaskParams,
    /// Island outline: shape, size and the shape's settings.
    pub shape: ShapeParams,
    /// A drawn outline replacing the generated one (see [`CoastMask`]); `None` = generated.
    /// Not serialised.
    #[serde(skip)]
    pub coast_mask: Option<std::sync::Arc<CoastMask>>,
    /// Hand edits (see [`crate::sculpt`]): the coast override enters the outline, the relief
    /// edits the heights right before the erosion, and the edited samples are held against
    /// erosion and river carving. At any resolution and world size (resampled, every edit at
    /// its node-local position). Not serialised. Default none.
    #[serde(skip)]
    pub sculpt: Option<std::sync::Arc<crate::sculpt::SculptLayer>>,
    /// Roads, river courses, ridges and canals laid by hand (see [`crate::paths`]): written
    /// into the sculpt layer right before the erosion, from the terrain they cross (stamps
    /// first, then the paths, then the brush's strokes). Not serialised. Default none.
    #[serde(skip)]
    pub paths: Option<std::sync::Arc<crate::paths::PathSet>>,
    /// Coastal falloff.
    pub coast: CoastParams,
    /// Rivers.
    pub river: RiverParams,
    /// Landscape evolution (fluvial erosion, deposition, hillslopes), run after the coast and
    /// the Bézier river. Its `sea_level` is ignored: the pipeline's sea level is 0.
    pub erosion: ErosionSettings,
    /// Drainage: lakes, and the size of the flow rivers.
    pub drainage: DrainageSettings,
    /// Channels of the flow rivers ([`RiverMode::Flow`]); shallow pits are filled in every mode.
    pub channels: CarveSettings,
    /// Lake basins dug into valley floors after the erosion ([`crate::basins`]).
    pub basins: BasinSettings,
    /// Biomes.
    pub biomes: BiomeParams,
    /// Auto splat.
    pub splat: SplatParams,
}

/// Default shaping curve LUT.
pub const DEFAULT_SHAPING_CURVE: [f32; 6] = [0.0, 0.1, 0.28, 0.5, 0.75, 1.0];

impl Default for IslandParams {
    fn default() -> Self {
        IslandParams {
            seed: DEFAULT_SEED,
            resolution: DEFAULT_RESOLUTION,
            world_size: DEFAULT_WORLD_SIZE,
            max_height: DEFAULT_MAX_HEIGHT,
            chunk_size: DEFAULT_CHUNK_SIZE,
            algorithm: Algorithm::Fbm,
            fbm: FbmParams::default(),
            value_noise: ValueNoiseParams::default(),
            diamond_square: DiamondSquareParams::default(),
            gaussian: GaussianParams::default(),
            detail: DetailParams::default(),
            shaping_curve: DEFAULT_SHAPING_CURVE.to_vec(),
            mask: MaskParams::default(),
            shape: ShapeParams::default(),
            coast_mask: None,
            sculpt: None,
            paths: None,
            coast: CoastParams::default(),
            river: RiverParams::default(),
            erosion: ErosionSettings::default(),
            drainage: DrainageSettings::default(),
            channels: CarveSettings::default(),
            basins: BasinSettings::default(),
            biomes: BiomeParams::default(),
            splat: SplatParams::default(),
        }
    }
}

/// Default [`IslandParams::seed`].
pub const DEFAULT_SEED: u64 = 1;

impl IslandParams {
    /// The schema of [`IslandParams`]' own scalar fields ([`crate::schema`]); resolution,
    /// chunk size and world size are checked by hand (their rules are not ranges).
    pub const PARAMS: &'static [ParamSpec<IslandParams>] = &[
        ParamSpec::int("seed", DEFAULT_SEED as i64, Check::Custom("any integer"), "", "Seed of every random choice. The same seed and parameters always give the same island.", |s: &Self| Value::Int(s.seed as i64))
            .property("seed"),
        ParamSpec::int("resolution", DEFAULT_RESOLUTION as i64, Check::Custom("2ⁿ+1: 33, 65, 129, 257, 513, 1025, 2049, 4097, 8193"), "samples per side", "Samples per side of the heightfield. Higher is finer and slower.", |s: &Self| Value::Int(s.resolution as i64))
            .property("resolution"),
        ParamSpec::float("world_size", DEFAULT_WORLD_SIZE, Check::Range(MIN_WORLD_SIZE, MAX_WORLD_SIZE), "m", "Edge length of the square map.", |s: &Self| Value::Float(s.world_size))
            .slider("world_size", Slider::new(16.0, 100000.0).or_less().or_greater().suffix("m")),
        ParamSpec::float("max_height", DEFAULT_MAX_HEIGHT, Check::Positive, "m", "Height of the highest possible peak.", |s: &Self| Value::Float(s.max_height))
            .slider("max_height", Slider::new(1.0, 2000.0).or_greater().suffix("m")),
        ParamSpec::int("chunk_size", DEFAULT_CHUNK_SIZE as i64, Check::Custom("16, 32, 64, 128, 256, dividing `resolution - 1`; at most 16 384 chunks in all"), "grid cells", "Chunk edge. Each chunk is one `MeshInstance3D` (and one collider).", |s: &Self| Value::Int(s.chunk_size as i64))
            .property("chunk_size"),
        ParamSpec::enumeration("algorithm", &["FBM", "VALUE_NOISE", "DIAMOND_SQUARE", "GAUSSIAN_ISLANDS"], Algorithm::Fbm as i64, "Base height algorithm (constants `ALGORITHM_*`).", |s: &Self| Value::Int(s.algorithm as i64))
            .property("algorithm"),
    ];
}

/// A parameter that failed validation: which field, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamError {
    /// Dotted field path, e.g. `fbm.octaves`.
    pub field: String,
    /// Human-readable reason.
    pub message: String,
}
impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid parameter `{}`: {}", self.field, self.message)
    }
}
impl std::error::Error for ParamError {}

fn err(field: &str, message: impl Into<String>) -> Result<(), ParamError> {
    Err(ParamError {
        field: field.into(),
        message: message.into(),
    })
}

fn range(field: &str, v: f32, lo: f32, hi: f32) -> Result<(), ParamError> {
    if !v.is_finite() {
        return err(field, format!("must be a finite number, got {v}"));
    }
    if v < lo || v > hi {
        return err(field, format!("must be between {lo} and {hi}, got {v}"));
    }
    Ok(())
}

fn world_size(v: f32) -> Result<(), ParamError> {
    if !v.is_finite() || v <= 0.0 {
        return err(
            "world_size",
            format!("must be a finite number > 0, got {v}"),
        );
    }
    if !(MIN_WORLD_SIZE..=MAX_WORLD_SIZE).contains(&v) {
        return err(
            "world_size",
            format!(
                "must be between {MIN_WORLD_SIZE} m and {MAX_WORLD_SIZE:e} m, got {v:e}: f32 heights, slopes and sample positions cannot represent a map outside that range"
            ),
        );
    }
    Ok(())
}

/// Most lattice cells a noise field may span across the map at its finest octave: beyond this,
/// f32 coordinates lose the fractional part the noise interpolates with.
pub const MAX_LATTICE_SPAN: f32 = 1.0e6;

fn lattice_span(
    field: &str,
    world: f32,
    scale: f32,
    lacunarity: f32,
    octaves: u32,
) -> Result<(), ParamError> {
    let span = world / scale * det_math::powi(lacunarity, octaves as i32 - 1);
    if span.is_nan() || span > MAX_LATTICE_SPAN {
        return err(
            field,
            format!(
                "the finest octave would span {span:.3e} noise cells across the map (world_size / scale × lacunarity^(octaves-1)); at most {MAX_LATTICE_SPAN:e} are meaningful: use a larger scale or fewer octaves"
            ),
        );
    }
    Ok(())
}

impl IslandParams {
    /// Cells per chunk side along the map: `(resolution - 1) / chunk_size`.
    pub fn chunks_per_side(&self) -> u32 {
        (self.resolution - 1) / self.chunk_size
    }
    /// Distance between neighbouring samples, metres.
    pub fn spacing(&self) -> f32 {
        self.world_size / (self.resolution - 1) as f32
    }

    /// The map the stages sample: resolution, world size and seed.
    pub fn grid(&self) -> Grid {
        Grid::new(self.resolution as usize, self.world_size, self.seed)
    }

    /// Check every field; the first problem found is returned. The range checks come from the
    /// schema ([`crate::schema`], every section's `PARAMS`); what a range cannot say is checked
    /// here by hand.
    pub fn validate(&self) -> Result<(), ParamError> {
        let r = self.resolution;
        if !(MIN_RESOLUTION..=MAX_RESOLUTION).contains(&r) || !(r - 1).is_power_of_two() {
            return err(
                "resolution",
                format!("must be 2^n+1 between {MIN_RESOLUTION} and {MAX_RESOLUTION} (33, 65, ..., 1025, ...), got {r}"),
            );
        }
        let c = self.chunk_size;
        if !(16..=256).contains(&c) || !c.is_power_of_two() {
            return err(
                "chunk_size",
                format!("must be a power of two from 16 to 256, got {c}"),
            );
        }
        if !(r - 1).is_multiple_of(c) {
            return err(
                "chunk_size",
                format!("{c} does not divide resolution - 1 = {}", r - 1),
            );
        }
        world_size(self.world_size)?;
        if let Some(set) = &self.paths {
            set.validate().map_err(|e| ParamError {
                field: "paths".into(),
                message: e.0,
            })?;
        }

        section("", IslandParams::PARAMS, self)?;
        section("fbm", FbmParams::PARAMS, &self.fbm)?;
        section("value_noise", ValueNoiseParams::PARAMS, &self.value_noise)?;
        section(
            "diamond_square",
            DiamondSquareParams::PARAMS,
            &self.diamond_square,
        )?;
        section("gaussian", GaussianParams::PARAMS, &self.gaussian)?;
        section("detail", DetailParams::PARAMS, &self.detail)?;
        section("mask", MaskParams::PARAMS, &self.mask)?;
        section("shape", ShapeParams::PARAMS, &self.shape)?;
        section("coast", CoastParams::PARAMS, &self.coast)?;
        section("river", RiverParams::PARAMS, &self.river)?;
        section("erosion", ErosionSettings::PARAMS, &self.erosion)?;
        section("drainage", DrainageSettings::PARAMS, &self.drainage)?;
        section("channels", CarveSettings::PARAMS, &self.channels)?;
        section("basins", BasinSettings::PARAMS, &self.basins)?;
        section("biomes", BiomeParams::PARAMS, &self.biomes)?;
        section("splat", SplatParams::PARAMS, &self.splat)?;

        if self.shaping_curve.len() < 2 || self.shaping_curve.len() > 4096 {
            return err(
                "shaping_curve",
                format!("needs 2 to 4096 points, got {}", self.shaping_curve.len()),
            );
        }
        for (i, &v) in self.shaping_curve.iter().enumerate() {
            range(&format!("shaping_curve[{i}]"), v, 0.0, 1.0)?;
        }
        if let Some(m) = &self.coast_mask {
            m.validate()?;
        }
        if let Some(l) = &self.sculpt {
            // Sizes only (the values are checked where they enter: decoding, undo data, dabs):
            // the editor validates the parameters every frame.
            l.validate_sizes().map_err(|e| ParamError {
                field: "sculpt".into(),
                message: e.0,
            })?;
        }
        if self.coast.fine_amplitude * 4.0 >= self.coast.sea_depth {
            return err(
                "coast.fine_amplitude",
                format!(
                    "must be less than a quarter of coast.sea_depth ({}) so the map border stays under water, got {}",
                    self.coast.sea_depth, self.coast.fine_amplitude
                ),
            );
        }
        let biomes = &self.biomes.biomes;
        if biomes.is_empty() || biomes.len() > BiomeParams::MAX_BIOMES {
            return err(
                "biomes.biomes",
                format!(
                    "needs 1 to {} biomes, got {}",
                    BiomeParams::MAX_BIOMES,
                    biomes.len()
                ),
            );
        }
        for (i, b) in biomes.iter().enumerate() {
            for (name, v, lo, hi) in [
                ("height_scale", b.height_scale, 0.0, 1.0),
                ("exponent", b.exponent, 0.1, 8.0),
                ("roughness", b.roughness, 0.0, 4.0),
                ("sandiness", b.sandiness, 0.0, 1.0),
            ] {
                range(&format!("biomes.biomes[{i}].{name}"), v, lo, hi)?;
            }
        }

        // The noises' finest octaves, with the settings the stages use.
        let vn = &self.value_noise;
        for (field, f) in [
            ("fbm.scale", self.fbm.clone()),
            (
                "value_noise.scale",
                FbmParams {
                    lacunarity: ValueNoiseParams::LACUNARITY,
                    ..FbmParams::classic(vn.octaves, vn.scale)
                },
            ),
            ("detail.scale", self.detail.noise()),
            ("mask.noise_scale", self.mask.noise()),
            ("coast.fine_scale", self.coast.fine_noise()),
            ("river.meander_scale", self.river.warp_noise()),
        ] {
            lattice_span(field, self.world_size, f.scale, f.lacunarity, f.octaves)?;
        }
        Ok(())
    }
}

/// Width of the always-water border ring, metres: the coast shelf plus two samples.
pub fn border_margin(p: &IslandParams) -> f32 {
    p.coast.shelf_width + 2.0 * p.spacing()
}

/// The schema checks of one section ([`crate::schema::check_all`]) as a [`ParamError`] on
/// `section.field`.
fn section<S>(section: &str, specs: &[ParamSpec<S>], s: &S) -> Result<(), ParamError> {
    crate::schema::check_all(specs, s).map_err(|e| ParamError {
        field: if section.is_empty() {
            e.field.to_string()
        } else {
            format!("{section}.{}", e.field)
        },
        message: e.message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        IslandParams::default().validate().unwrap();
    }

    #[test]
    fn rejects_bad_values_with_field_names() {
        type Change = Box<dyn Fn(&mut IslandParams)>;
        let cases: Vec<(Change, &str)> = vec![
            (Box::new(|p| p.resolution = 0), "resolution"),
            (Box::new(|p| p.resolution = 100_000), "resolution"),
            (Box::new(|p| p.resolution = 1000), "resolution"),
            (Box::new(|p| p.resolution = 16385), "resolution"),
            (Box::new(|p| p.chunk_size = 7), "chunk_size"),
            (Box::new(|p| p.chunk_size = 512), "chunk_size"),
            (
                Box::new(|p| {
                    p.resolution = 33;
                    p.chunk_size = 64
                }),
                "chunk_size",
            ),
            (Box::new(|p| p.max_height = f32::NAN), "max_height"),
            (Box::new(|p| p.world_size = f32::INFINITY), "world_size"),
            (Box::new(|p| p.world_size = -1.0), "world_size"),
            (Box::new(|p| p.world_size = 1e-30), "world_size"),
            (Box::new(|p| p.world_size = 1e-18), "world_size"),
            (Box::new(|p| p.world_size = 0.5), "world_size"),
            (Box::new(|p| p.world_size = 2e7), "world_size"),
            (Box::new(|p| p.fbm.octaves = 0), "fbm.octaves"),
            (Box::new(|p| p.fbm.octaves = 17), "fbm.octaves"),
            (Box::new(|p| p.shaping_curve = vec![0.5]), "shaping_curve"),
            (
                Box::new(|p| p.shaping_curve[1] = f32::NAN),
                "shaping_curve[1]",
            ),
            (Box::new(|p| p.biomes.biomes.clear()), "biomes.biomes"),
            (
                Box::new(|p| {
                    p.fbm.octaves = 16;
                    p.fbm.lacunarity = 3.9
                }),
                "fbm.scale",
            ),
            (Box::new(|p| p.coast.fine_scale = 1e-4), "coast.fine_scale"),
        ];
        for (f, field) in cases {
            let mut p = IslandParams::default();
            f(&mut p);
            let e = p.validate().unwrap_err();
            assert_eq!(e.field, field, "{e}");
            assert!(e.to_string().contains(field));
        }
    }

    /// Each schema-checked parameter set just outside its range (through the JSON form, by its
    /// path) fails `validate` on that path: the loop over the tables covers every section.
    #[test]
    fn validate_checks_every_schema_parameter() {
        use crate::schema::{Check, Kind};
        let mut n = 0;
        for p in crate::schema_index::all() {
            let bad = match (p.check, p.kind) {
                (Check::Range(_, hi) | Check::ZeroOrRange(_, hi), Kind::Float) => {
                    serde_json::json!(hi * 2.0 + 1.0)
                }
                (Check::Range(lo, _), Kind::Int) if lo > 0.0 => serde_json::json!(0),
                (Check::Range(_, hi), Kind::Int) => serde_json::json!(hi as i64 + 1),
                (Check::Positive | Check::PositiveFinite | Check::NonNegative, _) => {
                    serde_json::json!(-1.0)
                }
                _ => continue,
            };
            let mut v = serde_json::to_value(IslandParams::default()).unwrap();
            let mut at = &mut v;
            for key in p.path.split('.') {
                at = at.get_mut(key).unwrap_or_else(|| panic!("{}", p.path));
            }
            *at = bad;
            let q: IslandParams = serde_json::from_value(v).unwrap();
            let e = q.validate().unwrap_err();
            assert_eq!(e.field, p.path, "{e}");
            n += 1;
        }
        assert!(n > 50, "{n}");
    }

    #[test]
    fn accepts_every_valid_resolution() {
        let mut p = IslandParams {
            chunk_size: 16,
            ..Default::default()
        };
        for n in 5..=13 {
            p.resolution = (1 << n) + 1;
            p.validate().unwrap();
        }
    }

    #[test]
    fn json_roundtrip_and_partial_json() {
        let p = IslandParams::default();
        let s = serde_json::to_string(&p).unwrap();
        let q: IslandParams = serde_json::from_str(&s).unwrap();
        assert_eq!(p, q);
        let partial: IslandParams =
            serde_json::from_str(r#"{"seed": 42, "fbm": {"octaves": 3}}"#).unwrap();
        assert_eq!(partial.seed, 42);
        assert_eq!(partial.fbm.octaves, 3);
        assert_eq!(partial.fbm.scale, FbmParams::default().scale);
    }
}
