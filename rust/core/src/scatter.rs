//! Vegetation and rock scatter: where instances of a layer (palms, trees, rocks, grass) stand on
//! the island, binned per chunk, deterministic per seed.
//!
//! # Algorithm
//!
//! 1. **Blue-noise pattern.** Every layer draws from one infinite, periodic Poisson-disc pattern
//!    of unit spacing, scaled by the layer's `min_distance` `r`. Its period is a toroidal tile of
//!    [`TILE_CELLS`]² grid cells of side `1/√2` (so a cell holds at most one point), filled by
//!    multi-trial dart throwing in Wei's (2008) phase order: [`TILE_TRIALS`] passes, each visiting
//!    the cells in 3×3 phase groups in a fixed order; a candidate (position hashed from its cell
//!    and trial) is accepted when no accepted point lies within `1 + 1e-3` of it, distances taken
//!    across the tile's wrap. Because the tile is toroidal, the tiled pattern keeps the spacing
//!    across tile borders, hence across chunk borders (the `1e-3` margin absorbs the f32
//!    rounding of positions). The tile is a constant: it is built once per process (a few
//!    milliseconds, [`prepare`]) and shared by every layer and seed. Each layer (seed and
//!    [`ScatterLayer::seed_salt`]) places it at its own hashed offset and mirrors it along x
//!    and/or z, so a new seed or salt moves everything. The pattern does not depend on the
//!    island: masks, paint or terrain edits never move other instances (see
//!    [`chunks_to_rebuild`]). Its period is `TILE_CELLS/√2 · r` (≈ 89 `r`: 71 m for 0.8 m grass,
//!    250 m for 2.8 m trees); the thinning below draws an independent random number per global
//!    cell, so the kept instances do not repeat unless the layer is at full capacity.
//! 2. **Thinning by density × masks.** The pattern holds `capacity` points per 100 m² (exactly
//!    `100 · points / tile area / r²`, ≈ `65/r²`). A point is kept when a hashed uniform `u` of its
//!    global cell satisfies `u < keep · w`, with `keep = min(1, density / capacity)` and `w` the
//!    product of the smooth masks (height and slope fades as the brush's
//!    [`crate::paint::range_weight`], biome bit, splat weight, wetness). The height is the exact
//!    surface height at the point and the slope that of the smooth normal at the point
//!    ([`Heightfield::normal_at`], what the node's `get_normal_at` answers); biome, splat,
//!    wetness and erase flag are read at the nearest sample ([`Instance::sample`]).
//!    A density above the capacity is capped at it ([`Placement::capped`],
//!    [`ScatterLayer::capacity`]). Erased samples ([`EraseMask`]) are skipped after the pattern,
//!    so erasing removes exactly the instances over erased samples and restoring brings the same
//!    ones back. Expected count: `min(density, capacity) / 100 × ∫ w dA`.
//! 3. **Instances.** Each kept point becomes an [`Instance`]: `y = height_at(x, z) - sink` on the
//!    rendered triangles, hashed yaw and scale, an up vector between +Y and the smooth terrain
//!    normal ([`Heightfield::normal_at`]).
//!
//! Every chunk is computed on its own from the global pattern (rayon over chunks), so the result
//! is bit-identical for any thread count and any chunk size, and one chunk can be rebuilt alone
//! ([`Placement::rebuild_chunks`]). Chunks whose samples lie wholly outside a layer's height
//! range or biomes are skipped. [`place_all`] does every layer chunk by chunk while the maps are
//! in cache. No platform math library call takes part in any decision or output (slopes use
//! [`slope_degrees`], yaw rotations [`sin_cos_turns`], both polynomial; otherwise only IEEE
//! arithmetic and `sqrt`), so the same seed gives the same bits on every machine.
//!
//! Coordinates are the heightfield's node-local metres (island centre at the origin, +Y up);
//! distances between instances are horizontal (x, z).

use crate::grid::smoothstep;
use crate::hash::{hash2, hash_u32, stage_seed, unit};
use crate::heightfield::Heightfield;
use crate::paint::{disc_rect, range_weight, Masks, Rect};
use crate::pipeline::Island;
use crate::scatter_meshes::MeshKind;
use rayon::prelude::*;

/// Stage tag of the scatter streams (kept here so `hash::tag` stays untouched).
pub const TAG_SCATTER: u32 = 0x5ca7_7e41;
/// Cells per side of the toroidal Poisson-disc tile (a multiple of 3 for the phase groups).
pub const TILE_CELLS: usize = 126;
/// Dart-throwing passes over the tile.
pub const TILE_TRIALS: u32 = 16;
/// Relative safety margin of the spacing inside the tile (absorbs f32 rounding of positions).
const SPACING_MARGIN: f64 = 1e-3;

/// Default density: instances per 100 m² of fully eligible ground.
pub const DEFAULT_DENSITY: f32 = 2.0;
/// Default spacing, metres.
pub const DEFAULT_MIN_DISTANCE: f32 = 3.0;
/// Default lowest height, metres (just above the waterline).
pub const DEFAULT_MIN_HEIGHT: f32 = 0.5;
/// Default highest height, metres.
pub const DEFAULT_MAX_HEIGHT: f32 = 10_000.0;
/// Default height fade, metres.
pub const DEFAULT_HEIGHT_FADE: f32 = 1.0;
/// Default lowest slope, degrees.
pub const DEFAULT_MIN_SLOPE_DEGREES: f32 = 0.0;
/// Default steepest slope, degrees.
pub const DEFAULT_MAX_SLOPE_DEGREES: f32 = 35.0;
/// Default slope fade, degrees.
pub const DEFAULT_SLOPE_FADE: f32 = 5.0;
/// Default biome mask: every biome.
pub const DEFAULT_BIOME_MASK: u32 = u32::MAX;
/// Default smallest scale.
pub const DEFAULT_SCALE_MIN: f32 = 0.8;
/// Default largest scale.
pub const DEFAULT_SCALE_MAX: f32 = 1.2;
/// Default: random yaw on.
pub const DEFAULT_RANDOM_YAW: bool = true;
/// Default alignment to the terrain normal (0 = upright).
pub const DEFAULT_ALIGN_TO_NORMAL: f32 = 0.0;
/// Default sink, metres.
pub const DEFAULT_SINK: f32 = 0.1;
/// Default seed salt.
pub const DEFAULT_SEED_SALT: u32 = 0;
/// Smallest accepted `min_distance`, metres.
pub const MIN_MIN_DISTANCE: f32 = 0.25;
/// Largest accepted `min_distance`, metres.
pub const MAX_MIN_DISTANCE: f32 = 1000.0;
/// Largest accepted `density`, instances per 100 m².
pub const MAX_DENSITY: f32 = 10_000.0;

/// Splat-weight mask: only where splat layer `layer` weighs at least `min_weight`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SplatMask {
    /// Splat layer index (0 sand, 1 grass, 2 rock, 3 snow for the generator's splat; up to 7 with
    /// painted weights). A layer the input does not have weighs 0.
    pub layer: usize,
    /// Weight 0..1 (of 255) below which nothing is placed.
    pub min_weight: f32,
    /// Width of the smooth fade above `min_weight`, 0..1 (0 = hard edge).
    pub fade: f32,
}

/// Wetness mask over an optional per-sample wetness map (for instance a distance to water):
/// weight is [`range_weight`]`(wetness, min, max, fade)`. Ignored while no map is supplied.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WetnessMask {
    /// Lowest wetness placed (units of the supplied map).
    pub min: f32,
    /// Highest wetness placed.
    pub max: f32,
    /// Width of the fade inside each limit (0 = hard edge).
    pub fade: f32,
}

/// Settings of one scatter layer (the Godot `ScatterLayer` resource maps onto this).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ScatterLayer {
    /// Display name.
    pub name: String,
    /// Built-in mesh drawn for this layer (the engine side may substitute its own).
    pub mesh: MeshKind,
    /// Instances per 100 m² of fully eligible ground, 0..=[`MAX_DENSITY`]. Capped at
    /// [`ScatterLayer::capacity`]. Default [`DEFAULT_DENSITY`].
    pub density: f32,
    /// No two instances of the layer closer than this (horizontal), metres,
    /// [`MIN_MIN_DISTANCE`]..=[`MAX_MIN_DISTANCE`]. Default [`DEFAULT_MIN_DISTANCE`].
    pub min_distance: f32,
    /// Lowest terrain height, metres. Default [`DEFAULT_MIN_HEIGHT`].
    pub min_height: f32,
    /// Highest terrain height, metres. Default [`DEFAULT_MAX_HEIGHT`].
    pub max_height: f32,
    /// Smooth fade inside each height limit, metres, >= 0. Default [`DEFAULT_HEIGHT_FADE`].
    pub height_fade: f32,
    /// Lowest slope, degrees 0..=90. Default [`DEFAULT_MIN_SLOPE_DEGREES`].
    pub min_slope_degrees: f32,
    /// Steepest slope, degrees 0..=90. Default [`DEFAULT_MAX_SLOPE_DEGREES`].
    pub max_slope_degrees: f32,
    /// Smooth fade inside each slope limit, degrees, >= 0 (none at a limit of 0 or 90°, see
    /// [`ScatterLayer::slope_weight`]). Default [`DEFAULT_SLOPE_FADE`].
    pub slope_fade: f32,
    /// Biomes allowed: bit `i` = biome index `i` (hard edge, nearest sample). Default all.
    pub biome_mask: u32,
    /// Optional splat-weight mask. Default none.
    pub splat: Option<SplatMask>,
    /// Optional wetness mask (needs a wetness map in [`ScatterInput`]). Default none.
    pub wetness: Option<WetnessMask>,
    /// Smallest uniform scale, 0.01..=100. Default [`DEFAULT_SCALE_MIN`].
    pub scale_min: f32,
    /// Largest uniform scale, `scale_min`..=100. Default [`DEFAULT_SCALE_MAX`].
    pub scale_max: f32,
    /// Random rotation about the up axis. Default on.
    pub random_yaw: bool,
    /// 0 = upright (+Y), 1 = along the terrain normal. Default 0.
    pub align_to_normal: f32,
    /// How far instances sink below the surface, metres, -100..=100. Default [`DEFAULT_SINK`].
    pub sink: f32,
    /// Mixed into the seed so layers with the same settings differ. Default 0.
    pub seed_salt: u32,
}

impl Default for ScatterLayer {
    fn default() -> Self {
        ScatterLayer {
            name: "layer".into(),
            mesh: MeshKind::Broadleaf,
            density: DEFAULT_DENSITY,
            min_distance: DEFAULT_MIN_DISTANCE,
            min_height: DEFAULT_MIN_HEIGHT,
            max_height: DEFAULT_MAX_HEIGHT,
            height_fade: DEFAULT_HEIGHT_FADE,
            min_slope_degrees: DEFAULT_MIN_SLOPE_DEGREES,
            max_slope_degrees: DEFAULT_MAX_SLOPE_DEGREES,
            slope_fade: DEFAULT_SLOPE_FADE,
            biome_mask: DEFAULT_BIOME_MASK,
            splat: None,
            wetness: None,
            scale_min: DEFAULT_SCALE_MIN,
            scale_max: DEFAULT_SCALE_MAX,
            random_yaw: DEFAULT_RANDOM_YAW,
            align_to_normal: DEFAULT_ALIGN_TO_NORMAL,
            sink: DEFAULT_SINK,
            seed_salt: DEFAULT_SEED_SALT,
        }
    }
}

impl ScatterLayer {
    /// Check every value; the error names the first bad one.
    pub fn validate(&self) -> Result<(), String> {
        let finite = [
            ("density", self.density),
            ("min_distance", self.min_distance),
            ("min_height", self.min_height),
            ("max_height", self.max_height),
            ("height_fade", self.height_fade),
            ("min_slope_degrees", self.min_slope_degrees),
            ("max_slope_degrees", self.max_slope_degrees),
            ("slope_fade", self.slope_fade),
            ("scale_min", self.scale_min),
            ("scale_max", self.scale_max),
            ("align_to_normal", self.align_to_normal),
            ("sink", self.sink),
        ];
        for (name, v) in finite {
            if !v.is_finite() {
                return Err(format!("`{name}` must be finite, got {v}"));
            }
        }
        let within = |name: &str, v: f32, lo: f32, hi: f32| {
            if v < lo || v > hi {
                Err(format!("`{name}` must be {lo}..={hi}, got {v}"))
            } else {
                Ok(())
            }
        };
        within("density", self.density, 0.0, MAX_DENSITY)?;
        within(
            "min_distance",
            self.min_distance,
            MIN_MIN_DISTANCE,
            MAX_MIN_DISTANCE,
        )?;
        if self.min_height > self.max_height {
            return Err(format!(
                "`min_height` {} > `max_height` {}",
                self.min_height, self.max_height
            ));
        }
        within("height_fade", self.height_fade, 0.0, f32::MAX)?;
        within("min_slope_degrees", self.min_slope_degrees, 0.0, 90.0)?;
        within("max_slope_degrees", self.max_slope_degrees, 0.0, 90.0)?;
        if self.min_slope_degrees > self.max_slope_degrees {
            return Err(format!(
                "`min_slope_degrees` {} > `max_slope_degrees` {}",
                self.min_slope_degrees, self.max_slope_degrees
            ));
        }
        within("slope_fade", self.slope_fade, 0.0, 90.0)?;
        within("scale_min", self.scale_min, 0.01, 100.0)?;
        within("scale_max", self.scale_max, self.scale_min, 100.0)?;
        within("align_to_normal", self.align_to_normal, 0.0, 1.0)?;
        within("sink", self.sink, -100.0, 100.0)?;
        if let Some(s) = &self.splat {
            if s.layer >= crate::paint::LAYERS {
                return Err(format!(
                    "`splat.layer` must be 0..{}, got {}",
                    crate::paint::LAYERS - 1,
                    s.layer
                ));
            }
            if !(s.min_weight.is_finite() && s.fade.is_finite()) {
                return Err("`splat` weights must be finite".into());
            }
            within("splat.min_weight", s.min_weight, 0.0, 1.0)?;
            within("splat.fade", s.fade, 0.0, 1.0)?;
        }
        if let Some(w) = &self.wetness {
            if !(w.min.is_finite() && w.max.is_finite() && w.fade.is_finite()) {
                return Err("`wetness` limits must be finite".into());
            }
            if w.min > w.max {
                return Err(format!("`wetness.min` {} > `wetness.max` {}", w.min, w.max));
            }
            within("wetness.fade", w.fade, 0.0, f32::MAX)?;
        }
        Ok(())
    }

    /// Most instances per 100 m² that `min_distance` allows (the pattern's density, ≈ 68/r²):
    /// [`ScatterLayer::density`] above it is capped.
    pub fn capacity(&self) -> f32 {
        capacity_of(self.min_distance)
    }

    /// 32-bit seed of this layer's streams.
    fn layer_seed(&self, seed: u64) -> u32 {
        hash_u32(stage_seed(seed, TAG_SCATTER) ^ hash_u32(self.seed_salt ^ 0x68e3_1da4))
    }

    /// Mask weight 0..1 from the values at one point (erase and density excluded): the product
    /// of the height, slope, biome, splat and wetness weights (`splat_weight` 0..1 of the mask's
    /// layer; `wetness` ignored when `None`).
    #[inline]
    pub fn mask_weight(
        &self,
        height: f32,
        slope_deg: f32,
        biome: u8,
        splat_weight: f32,
        wetness: Option<f32>,
    ) -> f32 {
        let mut w = range_weight(height, self.min_height, self.max_height, self.height_fade);
        if w <= 0.0 || !self.biome_allowed(biome) {
            return 0.0;
        }
        if let Some(s) = &self.splat {
            w *= lower_fade(splat_weight, s.min_weight, s.fade);
        }
        if let (Some(m), Some(v)) = (&self.wetness, wetness) {
            w *= range_weight(v, m.min, m.max, m.fade);
        }
        w * self.slope_weight(slope_deg)
    }

    /// Slope weight 0..1: as [`range_weight`], except that a limit at the end of the range
    /// (`min_slope_degrees` 0, `max_slope_degrees` 90) is open: no fade there, so flat ground
    /// keeps full weight under `min_slope_degrees = 0`.
    #[inline]
    pub fn slope_weight(&self, slope_deg: f32) -> f32 {
        let (lo, hi, fade) = (
            self.min_slope_degrees,
            self.max_slope_degrees,
            self.slope_fade,
        );
        if !(slope_deg >= lo && slope_deg <= hi) {
            return 0.0;
        }
        if fade <= 0.0 {
            return 1.0;
        }
        let a = if lo <= 0.0 {
            1.0
        } else {
            smoothstep(lo, lo + fade, slope_deg)
        };
        let b = if hi >= 90.0 {
            1.0
        } else {
            1.0 - smoothstep(hi - fade, hi, slope_deg)
        };
        a * b
    }

    /// Whether biome index `b` is in [`ScatterLayer::biome_mask`].
    #[inline]
    pub fn biome_allowed(&self, b: u8) -> bool {
        b < 32 && self.biome_mask & (1u32 << b) != 0
    }
}

/// 0 below `lo`, a smoothstep up to 1 at `lo + fade`, 1 above (hard step when `fade` is 0).
#[inline]
pub fn lower_fade(v: f32, lo: f32, fade: f32) -> f32 {
    if v.is_nan() || v < lo {
        0.0
    } else if fade <= 0.0 {
        1.0
    } else {
        smoothstep(lo, lo + fade, v)
    }
}

/// Slope in degrees of a unit normal from its y component, by a fixed polynomial (Abramowitz &
/// Stegun 4.4.46, |error| < 2e-8 rad) instead of the platform's `acos`, so mask decisions are
/// the same bits on every machine.
#[inline]
pub fn slope_degrees(normal_y: f32) -> f32 {
    let x = normal_y.clamp(-1.0, 1.0);
    let a = x.abs();
    let p = std::f32::consts::FRAC_PI_2
        + a * (-0.214_598_8
            + a * (0.088_978_99
                + a * (-0.050_174_3
                    + a * (0.030_891_88
                        + a * (-0.017_088_126 + a * (0.006_670_09 + a * -0.001_262_491))))));
    let r = (1.0 - a).sqrt() * p;
    let r = if x < 0.0 { std::f32::consts::PI - r } else { r };
    r * (180.0 / std::f32::consts::PI)
}

/// `(sin, cos)` of `t` turns (`t · 2π` radians), `t` in `[0, 1)`, by fixed polynomials
/// (|error| < 1e-6), so instance bases are the same bits on every machine.
#[inline]
pub fn sin_cos_turns(t: f32) -> (f32, f32) {
    let q = (t * 4.0).floor();
    let f = t * 4.0 - q; // 0..1 within the quadrant
    let x = f * std::f32::consts::FRAC_PI_2;
    let x2 = x * x;
    let s = x
        * (1.0
            + x2 * (-1.0 / 6.0
                + x2 * (1.0 / 120.0
                    + x2 * (-1.0 / 5040.0 + x2 * (1.0 / 362_880.0 - x2 / 39_916_800.0)))));
    let c = 1.0
        + x2 * (-0.5
            + x2 * (1.0 / 24.0 + x2 * (-1.0 / 720.0 + x2 * (1.0 / 40_320.0 - x2 / 3_628_800.0))));
    match (q as i32).rem_euclid(4) {
        0 => (s, c),
        1 => (c, -s),
        2 => (-s, -c),
        _ => (-c, s),
    }
}

/// What a layer is placed on: one island's maps.
#[derive(Clone, Copy, Debug)]
pub struct ScatterInput<'a> {
    /// Heights and normals.
    pub field: &'a Heightfield,
    /// Biome index per sample (`resolution²`), or empty when unknown (an imported heightmap):
    /// every sample is then biome 0.
    pub biomes: &'a [u8],
    /// Splat weights per sample, `splat_channels` bytes each (of 255); may be empty (weight 0).
    pub splat: &'a [u8],
    /// Bytes per sample in `splat` (4 for the generator's splat, 8 for painted weights).
    pub splat_channels: usize,
    /// Optional wetness per sample (`resolution²`), for [`ScatterLayer::wetness`].
    pub wetness: Option<&'a [f32]>,
    /// What covers each sample ([`crate::water::Water::kind`], `resolution²`), or empty when
    /// unknown: nothing is placed where the nearest sample is a river or a lake.
    pub water: &'a [u8],
    /// Cover of cleared ground per sample, 0..255 (the roads, [`crate::paths::road_cover`]),
    /// or empty for none: nothing is placed where the nearest sample's cover is 128 or more
    /// (the road and the inner half of its shoulders), fewer below.
    pub cleared: &'a [u8],
}

impl<'a> ScatterInput<'a> {
    /// The generated island's heights, biomes and auto splat; no wetness.
    pub fn from_island(island: &'a Island) -> ScatterInput<'a> {
        ScatterInput {
            field: &island.field,
            biomes: &island.biomes,
            splat: island.splat.as_flattened(),
            splat_channels: 4,
            wetness: None,
            water: &island.water.kind,
            cleared: &[],
        }
    }

    /// The same with a wetness map.
    pub fn with_wetness(self, wetness: &'a [f32]) -> ScatterInput<'a> {
        ScatterInput {
            wetness: Some(wetness),
            ..self
        }
    }

    /// Check the map lengths.
    pub fn validate(&self) -> Result<(), String> {
        let n = self.field.resolution;
        if n < 2 || self.field.heights.len() != n * n || self.field.normals.len() != n * n {
            return Err("heightfield sizes do not match its resolution".into());
        }
        if !self.biomes.is_empty() && self.biomes.len() != n * n {
            return Err(format!(
                "{} biome samples, expected {}",
                self.biomes.len(),
                n * n
            ));
        }
        if !self.splat.is_empty()
            && (self.splat_channels == 0 || self.splat.len() != n * n * self.splat_channels)
        {
            return Err(format!(
                "{} splat bytes, expected {} × {}",
                self.splat.len(),
                n * n,
                self.splat_channels
            ));
        }
        if !self.water.is_empty() && self.water.len() != n * n {
            return Err(format!(
                "{} water samples, expected {} (or none)",
                self.water.len(),
                n * n
            ));
        }
        if !self.cleared.is_empty() && self.cleared.len() != n * n {
            return Err(format!(
                "{} cleared samples, expected {} (or none)",
                self.cleared.len(),
                n * n
            ));
        }
        if let Some(w) = self.wetness {
            if w.len() != n * n {
                return Err(format!("{} wetness samples, expected {}", w.len(), n * n));
            }
        }
        Ok(())
    }

    /// Splat weight 0..1 of `layer` at sample `i` (0 when absent).
    #[inline]
    pub fn splat_weight(&self, i: usize, layer: usize) -> f32 {
        if layer < self.splat_channels && !self.splat.is_empty() {
            self.splat[i * self.splat_channels + layer] as f32 * (1.0 / 255.0)
        } else {
            0.0
        }
    }
}

/// Per-sample erase flags of one layer: a brush erases (or restores) instances under it; [`place`]
/// skips instances whose sample is erased. One bit per sample.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EraseMask {
    resolution: usize,
    bits: Vec<u64>,
}

impl EraseMask {
    /// Nothing erased, `resolution²` samples.
    pub fn new(resolution: usize) -> EraseMask {
        EraseMask {
            resolution,
            bits: vec![0; (resolution * resolution).div_ceil(64)],
        }
    }

    /// Samples per side.
    pub fn resolution(&self) -> usize {
        self.resolution
    }

    /// Whether sample `i` is erased (false outside the map).
    #[inline]
    pub fn is_erased(&self, i: usize) -> bool {
        self.bits
            .get(i / 64)
            .is_some_and(|w| w & (1u64 << (i % 64)) != 0)
    }

    /// Erase (`true`) or restore (`false`) sample `i`; returns whether it changed.
    pub fn set(&mut self, i: usize, erased: bool) -> bool {
        if i >= self.resolution * self.resolution {
            return false;
        }
        let (w, b) = (i / 64, 1u64 << (i % 64));
        let old = self.bits[w] & b != 0;
        if erased {
            self.bits[w] |= b;
        } else {
            self.bits[w] &= !b;
        }
        old != erased
    }

    /// Erase or restore every sample of `rect` (clipped); returns the bounding box of the samples
    /// that changed (empty when none).
    pub fn set_rect(&mut self, rect: Rect, erased: bool) -> Rect {
        let n = self.resolution;
        let mut changed = Rect::default();
        for z in rect.z0..(rect.z0 + rect.h).min(n) {
            for x in rect.x0..(rect.x0 + rect.w).min(n) {
                if self.set(z * n + x, erased) {
                    changed = changed.union(&Rect {
                        x0: x,
                        z0: z,
                        w: 1,
                        h: 1,
                    });
                }
            }
        }
        changed
    }

    /// Erase or restore the samples within `radius` metres of node-local `center` (x, z), as a
    /// hard brush; returns the bounding box of the samples that changed.
    pub fn paint_disc(
        &mut self,
        field: &Heightfield,
        center: [f32; 2],
        radius: f32,
        erased: bool,
    ) -> Rect {
        let r = disc_rect(field, center, radius);
        let n = self.resolution;
        let mut changed = Rect::default();
        for z in r.z0..r.z0 + r.h {
            for x in r.x0..r.x0 + r.w {
                let p = field.position(x, z);
                let (dx, dz) = (p[0] - center[0], p[2] - center[1]);
                if dx * dx + dz * dz <= radius * radius && self.set(z * n + x, erased) {
                    changed = changed.union(&Rect {
                        x0: x,
                        z0: z,
                        w: 1,
                        h: 1,
                    });
                }
            }
        }
        changed
    }

    /// Erase or restore the samples within `radius` metres of node-local `center` (x, z) whose
    /// height and slope pass `masks` (weight > 0 at the sample, as the brush's masks read it:
    /// the sample's height and the slope of its normal), as a hard brush; returns the bounding
    /// box of the samples that changed and their number. An instance is erased when its nearest
    /// sample ([`Instance::sample`]) is.
    pub fn paint_masked(
        &mut self,
        field: &Heightfield,
        center: [f32; 2],
        radius: f32,
        masks: &Masks,
        erased: bool,
    ) -> (usize, Rect) {
        if field.resolution != self.resolution {
            return (0, Rect::default());
        }
        let mut count = 0;
        let r = disc_rect(field, center, radius);
        let n = self.resolution;
        let mut changed = Rect::default();
        for z in r.z0..r.z0 + r.h {
            for x in r.x0..r.x0 + r.w {
                let p = field.position(x, z);
                let (dx, dz) = (p[0] - center[0], p[2] - center[1]);
                if dx * dx + dz * dz > radius * radius {
                    continue;
                }
                let i = z * n + x;
                let slope = crate::normals::slope_degrees(field.normals[i]);
                if masks.weight(field.heights[i], slope) <= 0.0 {
                    continue;
                }
                if self.set(i, erased) {
                    count += 1;
                    changed = changed.union(&Rect {
                        x0: x,
                        z0: z,
                        w: 1,
                        h: 1,
                    });
                }
            }
        }
        (count, changed)
    }

    /// The mask at another resolution (nearest sample: sample `(x, z)` of the result reads the
    /// sample of this mask nearest to the same position).
    pub fn resample(&self, resolution: usize) -> EraseMask {
        if resolution == self.resolution {
            return self.clone();
        }
        let mut out = EraseMask::new(resolution);
        if resolution < 2 || self.resolution < 2 {
            return out;
        }
        let k = (self.resolution - 1) as f64 / (resolution - 1) as f64;
        let src = |v: usize| ((v as f64 * k).round() as usize).min(self.resolution - 1);
        for z in 0..resolution {
            let sz = src(z);
            for x in 0..resolution {
                if self.is_erased(sz * self.resolution + src(x)) {
                    out.set(z * resolution + x, true);
                }
            }
        }
        out
    }

    /// The flags of `rect` (clipped to the map is an error), one byte (0 or 1) per sample, row by
    /// row (for undo snapshots).
    pub fn region(&self, rect: Rect) -> Result<Vec<u8>, String> {
        self.check_rect(rect)?;
        let n = self.resolution;
        let mut out = Vec::with_capacity(rect.w * rect.h);
        for z in rect.z0..rect.z0 + rect.h {
            for x in rect.x0..rect.x0 + rect.w {
                out.push(self.is_erased(z * n + x) as u8);
            }
        }
        Ok(out)
    }

    /// Write flags read by [`EraseMask::region`] back into `rect`; returns the bounding box of the
    /// samples that changed. Nothing changes on an error.
    pub fn set_region(&mut self, rect: Rect, bytes: &[u8]) -> Result<Rect, String> {
        self.check_rect(rect)?;
        if bytes.len() != rect.w * rect.h {
            return Err(format!(
                "scatter snapshot needs {} bytes for {}×{} samples, got {}",
                rect.w * rect.h,
                rect.w,
                rect.h,
                bytes.len()
            ));
        }
        let n = self.resolution;
        let mut changed = Rect::default();
        for z in rect.z0..rect.z0 + rect.h {
            for x in rect.x0..rect.x0 + rect.w {
                let v = bytes[(z - rect.z0) * rect.w + (x - rect.x0)] != 0;
                if self.set(z * n + x, v) {
                    changed = changed.union(&Rect {
                        x0: x,
                        z0: z,
                        w: 1,
                        h: 1,
                    });
                }
            }
        }
        Ok(changed)
    }

    fn check_rect(&self, rect: Rect) -> Result<(), String> {
        let n = self.resolution;
        if rect.x0 + rect.w > n || rect.z0 + rect.h > n {
            return Err(format!(
                "rect {}+{} × {}+{} outside the {n}² erase mask",
                rect.x0, rect.w, rect.z0, rect.h
            ));
        }
        Ok(())
    }

    /// Restore every sample.
    pub fn clear(&mut self) {
        self.bits.iter_mut().for_each(|w| *w = 0);
    }

    /// Number of erased samples.
    pub fn count(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether nothing is erased.
    pub fn is_empty(&self) -> bool {
        self.bits.iter().all(|&w| w == 0)
    }

    /// The bits, 64 samples per word (sample `i` is bit `i % 64` of word `i / 64`), for saving.
    pub fn words(&self) -> &[u64] {
        &self.bits
    }

    /// A mask from [`EraseMask::words`].
    pub fn from_words(resolution: usize, words: Vec<u64>) -> Result<EraseMask, String> {
        let need = (resolution * resolution).div_ceil(64);
        if words.len() != need {
            return Err(format!("{} words, expected {need}", words.len()));
        }
        Ok(EraseMask {
            resolution,
            bits: words,
        })
    }
}

/// Magic of [`encode_erase_masks`].
const ERASE_MAGIC: &[u8; 4] = b"ISE1";

/// Encode per-layer erase masks (index = scatter layer; `None` = nothing erased) for saving:
/// `"ISE1"`, the layer count (u32 LE), then per layer its resolution (u32 LE, 0 = none) and, for
/// a mask, its 64-bit words run-length encoded as `(run: u32 LE, word: u64 LE)` pairs until the
/// word count is reached. Trailing `None`s and empty masks are stored as none.
pub fn encode_erase_masks(masks: &[Option<EraseMask>]) -> Vec<u8> {
    let live = masks
        .iter()
        .rposition(|m| m.as_ref().is_some_and(|m| !m.is_empty()))
        .map_or(0, |i| i + 1);
    if live == 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    out.extend_from_slice(ERASE_MAGIC);
    out.extend_from_slice(&(live as u32).to_le_bytes());
    for m in &masks[..live] {
        match m.as_ref().filter(|m| !m.is_empty()) {
            None => out.extend_from_slice(&0u32.to_le_bytes()),
            Some(m) => {
                out.extend_from_slice(&(m.resolution as u32).to_le_bytes());
                let w = &m.bits;
                let mut i = 0;
                while i < w.len() {
                    let mut j = i + 1;
                    while j < w.len() && w[j] == w[i] && j - i < u32::MAX as usize {
                        j += 1;
                    }
                    out.extend_from_slice(&((j - i) as u32).to_le_bytes());
                    out.extend_from_slice(&w[i].to_le_bytes());
                    i = j;
                }
            }
        }
    }
    out
}

/// Decode [`encode_erase_masks`] (empty bytes: no masks).
pub fn decode_erase_masks(bytes: &[u8]) -> Result<Vec<Option<EraseMask>>, String> {
    if bytes.is_empty() {
        return Ok(Vec::new());
    }
    let mut pos = 0usize;
    let mut take = |k: usize| -> Result<&[u8], String> {
        let s = bytes
            .get(pos..pos + k)
            .ok_or("scatter erase data is truncated")?;
        pos += k;
        Ok(s)
    };
    if take(4)? != ERASE_MAGIC {
        return Err("scatter erase data has an unknown format".into());
    }
    let u32_of = |s: &[u8]| u32::from_le_bytes([s[0], s[1], s[2], s[3]]);
    let layers = u32_of(take(4)?) as usize;
    if layers > 1 << 16 {
        return Err(format!("scatter erase data claims {layers} layers"));
    }
    let mut out = Vec::with_capacity(layers);
    for _ in 0..layers {
        let n = u32_of(take(4)?) as usize;
        if n == 0 {
            out.push(None);
            continue;
        }
        if !(2..=1 << 15).contains(&n) {
            return Err(format!("scatter erase mask resolution {n} out of range"));
        }
        let need = (n * n).div_ceil(64);
        let mut words = Vec::with_capacity(need);
        while words.len() < need {
            let run = u32_of(take(4)?) as usize;
            let s = take(8)?;
            let w = u64::from_le_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]]);
            if run == 0 || words.len() + run > need {
                return Err("scatter erase data has a bad run".into());
            }
            words.resize(words.len() + run, w);
        }
        out.push(Some(EraseMask::from_words(n, words)?));
    }
    if pos != bytes.len() {
        return Err("scatter erase data has trailing bytes".into());
    }
    Ok(out)
}

/// Chunks (`(cx, cz)`, row-major order) whose instances may change when the samples of `rect`
/// change (erase mask, heights, normals, biomes, splat or wetness). The blue-noise pattern does
/// not depend on the island, so only instances whose position reads a changed sample can change:
/// the rectangle grows by two samples (height and normal interpolation read the cell corners,
/// normals the heights one sample further).
pub fn chunks_to_rebuild(rect: Rect, resolution: usize, chunk_size: usize) -> Vec<(usize, usize)> {
    if rect.is_empty() || resolution < 2 || chunk_size == 0 {
        return Vec::new();
    }
    let cps = chunks_per_side(resolution, chunk_size);
    let lo = |v: usize| v.saturating_sub(2) / chunk_size;
    let hi = |v: usize, len: usize| ((v + len - 1 + 2) / chunk_size).min(cps - 1);
    let (x0, x1) = (lo(rect.x0), hi(rect.x0, rect.w));
    let (z0, z1) = (lo(rect.z0), hi(rect.z0, rect.h));
    let mut out = Vec::new();
    for cz in z0..=z1.max(z0) {
        for cx in x0..=x1.max(x0) {
            if cx < cps && cz < cps {
                out.push((cx, cz));
            }
        }
    }
    out
}

/// Chunks per side for `chunk_size` cells per chunk (the last one may be partial).
pub fn chunks_per_side(resolution: usize, chunk_size: usize) -> usize {
    (resolution - 1).div_ceil(chunk_size).max(1)
}

/// One placed instance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Instance {
    /// Node-local position, metres; `y = field.height_at(x, z) - sink` exactly.
    pub position: [f32; 3],
    /// Rotation about the up axis, radians `[0, 2π)` (0 without random yaw).
    pub yaw: f32,
    /// Uniform scale.
    pub scale: f32,
    /// Unit up axis: +Y blended towards the terrain normal by `align_to_normal`.
    pub up: [f32; 3],
    /// Index (`z · resolution + x`) of the sample nearest to the instance.
    pub sample: u32,
}

impl Instance {
    /// Basis columns `[x, y, z]` (right-handed, scaled): `y` along [`Instance::up`], `x` the world
    /// +X projected onto the plane normal to it, turned by [`Instance::yaw`] about it.
    pub fn basis(&self) -> [[f32; 3]; 3] {
        let u = self.up;
        // Tangent: +X minus its component along up (up is never horizontal: its y > 0).
        let mut t = [1.0 - u[0] * u[0], -u[0] * u[1], -u[0] * u[2]];
        let l = (t[0] * t[0] + t[1] * t[1] + t[2] * t[2]).sqrt().max(1e-12);
        t = [t[0] / l, t[1] / l, t[2] / l];
        let z0 = cross(t, u);
        let (s, c) = sin_cos_turns(self.yaw * (0.5 / std::f32::consts::PI));
        let x = [
            t[0] * c - z0[0] * s,
            t[1] * c - z0[1] * s,
            t[2] * c - z0[2] * s,
        ];
        let z = [
            t[0] * s + z0[0] * c,
            t[1] * s + z0[1] * c,
            t[2] * s + z0[2] * c,
        ];
        let k = self.scale;
        let m = |v: [f32; 3]| [v[0] * k, v[1] * k, v[2] * k];
        [m(x), m(u), m(z)]
    }

    /// The 12 floats of a 3D transform in Godot's `MultiMesh` buffer order:
    /// `(x.x, y.x, z.x, origin.x, x.y, y.y, z.y, origin.y, x.z, y.z, z.z, origin.z)` with
    /// `x, y, z` the basis columns.
    pub fn transform_rows(&self) -> [f32; 12] {
        let [x, y, z] = self.basis();
        let o = self.position;
        [
            x[0], y[0], z[0], o[0], x[1], y[1], z[1], o[1], x[2], y[2], z[2], o[2],
        ]
    }
}

fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// The instances of one layer, binned per chunk.
#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    /// Chunk edge in grid cells (as [`crate::IslandParams::chunk_size`]).
    pub chunk_size: usize,
    /// Chunks per side; chunk `(cx, cz)` covers samples `[cx·chunk_size, (cx+1)·chunk_size)`
    /// along x (the last chunk also the map's far edge), likewise along z.
    pub chunks_per_side: usize,
    /// Instances per chunk, index `cz · chunks_per_side + cx`, each in a fixed order.
    pub chunks: Vec<Vec<Instance>>,
    /// Points per 100 m² of the layer's pattern: the most `density` can reach.
    pub capacity: f32,
    /// Whether the layer's density exceeded [`Placement::capacity`] (and was capped).
    pub capped: bool,
    /// Fraction of pattern points kept on fully eligible ground: `min(1, density / capacity)`.
    pub keep: f32,
}

impl Placement {
    /// Total number of instances.
    pub fn len(&self) -> usize {
        self.chunks.iter().map(Vec::len).sum()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.chunks.iter().all(Vec::is_empty)
    }

    /// Instances of chunk `(cx, cz)`.
    pub fn chunk(&self, cx: usize, cz: usize) -> &[Instance] {
        &self.chunks[cz * self.chunks_per_side + cx]
    }

    /// Every instance, chunk by chunk.
    pub fn iter(&self) -> impl Iterator<Item = &Instance> {
        self.chunks.iter().flatten()
    }

    /// The transforms of chunk `(cx, cz)` as a Godot `MultiMesh` buffer (3D transforms, no
    /// colour or custom data): [`Instance::transform_rows`] of each instance, in order.
    pub fn chunk_buffer(&self, cx: usize, cz: usize) -> Vec<f32> {
        let c = self.chunk(cx, cz);
        let mut out = Vec::with_capacity(c.len() * 12);
        for i in c {
            out.extend_from_slice(&i.transform_rows());
        }
        out
    }

    /// A placement of `layer` with no instance yet (every chunk empty), to be filled chunk by
    /// chunk with [`Placement::rebuild_chunks`]; its capacity, cap and keep fraction are those a
    /// [`place`] gives.
    pub fn empty(
        layer: &ScatterLayer,
        resolution: usize,
        chunk_size: usize,
    ) -> Result<Placement, String> {
        layer.validate()?;
        if resolution < 2 || chunk_size == 0 {
            return Err(format!(
                "resolution {resolution} and chunk_size {chunk_size} must be >= 2 and > 0"
            ));
        }
        let cps = chunks_per_side(resolution, chunk_size);
        let capacity = capacity_of(layer.min_distance);
        Ok(Placement {
            chunk_size,
            chunks_per_side: cps,
            chunks: vec![Vec::new(); cps * cps],
            capacity,
            capped: layer.density > capacity,
            keep: if capacity > 0.0 {
                (layer.density / capacity).min(1.0)
            } else {
                0.0
            },
        })
    }

    /// Recompute the given chunks (for instance from [`chunks_to_rebuild`]) after an edit; the
    /// result equals a fresh [`place`] with the same arguments.
    pub fn rebuild_chunks(
        &mut self,
        input: &ScatterInput,
        layer: &ScatterLayer,
        erase: Option<&EraseMask>,
        seed: u64,
        chunks: &[(usize, usize)],
    ) -> Result<(), String> {
        let ctx = Ctx::new(input, layer, erase, seed, self.chunk_size)?;
        let cps = self.chunks_per_side;
        let fresh: Vec<(usize, Vec<Instance>)> = chunks
            .par_iter()
            .filter(|&&(cx, cz)| cx < cps && cz < cps)
            .map(|&(cx, cz)| {
                let sum =
                    ChunkSummary::of(input, self.chunk_size, cx, cz, layer.biome_mask != u32::MAX);
                (cz * cps + cx, ctx.chunk(&sum))
            })
            .collect();
        for (i, v) in fresh {
            self.chunks[i] = v;
        }
        Ok(())
    }
}

/// Build the shared Poisson-disc tile now (a few milliseconds, once per process) instead of in
/// the first placement; optional.
pub fn prepare() {
    tile();
}

/// Place one layer on an island: see the module docs. Panics when the layer or the input fail
/// validation (use [`try_place`] for an error instead).
pub fn place(
    input: &ScatterInput,
    layer: &ScatterLayer,
    erase: Option<&EraseMask>,
    seed: u64,
    chunk_size: usize,
) -> Placement {
    match try_place(input, layer, erase, seed, chunk_size) {
        Ok(p) => p,
        Err(e) => panic!("scatter::place: {e}"),
    }
}

/// [`place`] with validation errors returned.
pub fn try_place(
    input: &ScatterInput,
    layer: &ScatterLayer,
    erase: Option<&EraseMask>,
    seed: u64,
    chunk_size: usize,
) -> Result<Placement, String> {
    let ctx = Ctx::new(input, layer, erase, seed, chunk_size)?;
    let cps = ctx.cps;
    let chunks: Vec<Vec<Instance>> = (0..cps * cps)
        .into_par_iter()
        .map(|i| {
            let sum = ChunkSummary::of(
                input,
                chunk_size,
                i % cps,
                i / cps,
                layer.biome_mask != u32::MAX,
            );
            ctx.chunk(&sum)
        })
        .collect();
    Ok(Placement {
        chunk_size,
        chunks_per_side: cps,
        chunks,
        capacity: ctx.capacity,
        capped: ctx.capped,
        keep: ctx.keep,
    })
}

/// Place several layers at once (each as [`place`] would, bit for bit): every chunk is done for
/// all layers while its heights, normals, biomes and splat are in cache, which is faster than one
/// [`place`] per layer. `erase` is empty (nothing erased) or holds one entry per layer.
pub fn place_all(
    input: &ScatterInput,
    layers: &[ScatterLayer],
    erase: &[Option<&EraseMask>],
    seed: u64,
    chunk_size: usize,
) -> Result<Vec<Placement>, String> {
    if !erase.is_empty() && erase.len() != layers.len() {
        return Err(format!(
            "{} erase masks for {} layers",
            erase.len(),
            layers.len()
        ));
    }
    input.validate()?;
    if layers.is_empty() {
        return Ok(Vec::new());
    }
    let ctxs = layers
        .iter()
        .enumerate()
        .map(|(k, l)| Ctx::new(input, l, erase.get(k).copied().flatten(), seed, chunk_size))
        .collect::<Result<Vec<_>, String>>()?;
    let cps = chunks_per_side(input.field.resolution, chunk_size.max(1));
    let need_biomes = layers.iter().any(|l| l.biome_mask != u32::MAX);
    let per_chunk: Vec<Vec<Vec<Instance>>> = (0..cps * cps)
        .into_par_iter()
        .map(|i| {
            let (cx, cz) = (i % cps, i / cps);
            let sum = ChunkSummary::of(input, chunk_size, cx, cz, need_biomes);
            warm(input, chunk_size, cx, cz);
            ctxs.iter().map(|c| c.chunk(&sum)).collect()
        })
        .collect();
    let mut out: Vec<Placement> = ctxs
        .iter()
        .map(|c| Placement {
            chunk_size,
            chunks_per_side: cps,
            chunks: Vec::with_capacity(cps * cps),
            capacity: c.capacity,
            capped: c.capped,
            keep: c.keep,
        })
        .collect();
    for chunk in per_chunk {
        for (p, v) in out.iter_mut().zip(chunk) {
            p.chunks.push(v);
        }
    }
    Ok(out)
}

/// Samples per side of the blocks by which chunks skip ineligible ground (a global grid,
/// clipped to the chunks).
const BLOCK: usize = 16;

/// Height range and biomes of a rectangle of samples `[x0, x1] × [z0, z1]` (inclusive: the
/// samples its points interpolate).
struct Span {
    x0: usize,
    x1: usize,
    z0: usize,
    z1: usize,
    lo: f32,
    hi: f32,
    /// Bit `b` set when biome `b` occurs; every bit when not computed.
    biomes: u32,
}

impl Span {
    fn of(input: &ScatterInput, x: [usize; 2], z: [usize; 2], need_biomes: bool) -> Span {
        let f = input.field;
        let n = f.resolution;
        // Eight running minima and maxima (select form, so that it vectorises).
        let (mut lo8, mut hi8) = ([f32::INFINITY; 8], [f32::NEG_INFINITY; 8]);
        let mut biomes = if need_biomes { 0u32 } else { u32::MAX };
        for zz in z[0]..=z[1] {
            let row = &f.heights[zz * n + x[0]..=zz * n + x[1]];
            let mut it = row.chunks_exact(8);
            for c in &mut it {
                for k in 0..8 {
                    lo8[k] = if c[k] < lo8[k] { c[k] } else { lo8[k] };
                    hi8[k] = if c[k] > hi8[k] { c[k] } else { hi8[k] };
                }
            }
            for &h in it.remainder() {
                lo8[0] = if h < lo8[0] { h } else { lo8[0] };
                hi8[0] = if h > hi8[0] { h } else { hi8[0] };
            }
            if need_biomes {
                if input.biomes.is_empty() {
                    biomes |= 1;
                } else {
                    for &b in &input.biomes[zz * n + x[0]..=zz * n + x[1]] {
                        biomes |= 1u32.checked_shl(b as u32).unwrap_or(0);
                    }
                }
            }
        }
        Span {
            x0: x[0],
            x1: x[1],
            z0: z[0],
            z1: z[1],
            lo: lo8.iter().fold(f32::INFINITY, |a, &b| a.min(b)),
            hi: hi8.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b)),
            biomes,
        }
    }
}

/// A chunk's [`Span`] and those of its blocks, shared by the layers placed on it.
struct ChunkSummary {
    all: Span,
    blocks: Vec<Span>,
}

impl ChunkSummary {
    /// Summary of chunk `(cx, cz)`; biomes are collected only when `need_biomes`.
    fn of(
        input: &ScatterInput,
        cs: usize,
        cx: usize,
        cz: usize,
        need_biomes: bool,
    ) -> ChunkSummary {
        let last = input.field.resolution - 1;
        let (x0, x1) = ((cx * cs).min(last), ((cx + 1) * cs).min(last));
        let (z0, z1) = ((cz * cs).min(last), ((cz + 1) * cs).min(last));
        // Block edges: the chunk's, and the multiples of BLOCK inside it.
        let cuts = |a: usize, b: usize| {
            let mut v = vec![a];
            let mut k = (a / BLOCK + 1) * BLOCK;
            while k < b {
                v.push(k);
                k += BLOCK;
            }
            v.push(b);
            v
        };
        let (xs, zs) = (cuts(x0, x1), cuts(z0, z1));
        let mut blocks = Vec::with_capacity((xs.len() - 1) * (zs.len() - 1));
        for zw in zs.windows(2) {
            for xw in xs.windows(2) {
                blocks.push(Span::of(input, [xw[0], xw[1]], [zw[0], zw[1]], need_biomes));
            }
        }
        let all = Span {
            x0,
            x1,
            z0,
            z1,
            lo: blocks.iter().fold(f32::INFINITY, |a, b| a.min(b.lo)),
            hi: blocks.iter().fold(f32::NEG_INFINITY, |a, b| a.max(b.hi)),
            biomes: blocks.iter().fold(0, |a, b| a | b.biomes),
        };
        ChunkSummary { all, blocks }
    }
}

/// Read one value per cache line of the chunk's normals, splat and biomes, row by row, so that
/// the hardware prefetcher streams them in before the scattered per-point reads.
fn warm(input: &ScatterInput, chunk_size: usize, cx: usize, cz: usize) {
    let n = input.field.resolution;
    let last = n - 1;
    let (x0, x1) = (
        (cx * chunk_size).min(last),
        ((cx + 1) * chunk_size).min(last),
    );
    let (z0, z1) = (
        (cz * chunk_size).min(last),
        ((cz + 1) * chunk_size).min(last),
    );
    let mut acc = 0.0f32;
    let mut accb = 0u32;
    for z in z0..=z1 {
        let r = z * n;
        for k in (r + x0..=r + x1).step_by(5) {
            acc += input.field.normals[k][1];
        }
        for k in (r + x0..=r + x1).step_by(16) {
            accb = accb.wrapping_add(input.biomes.get(k).copied().unwrap_or(0) as u32);
            if !input.splat.is_empty() {
                accb = accb.wrapping_add(input.splat[k * input.splat_channels] as u32);
            }
        }
    }
    std::hint::black_box((acc, accb));
}

/// The five demo layers, tuned on the default island (biomes: 0 meadow, 1 forest hills,
/// 2 mountains, 3 plateau, 4 dunes; splat: 0 sand, 1 grass, 2 rock, 3 snow).
pub fn demo_layers() -> Vec<ScatterLayer> {
    vec![
        // Palms on sandy beaches and low dunes.
        ScatterLayer {
            name: "palms".into(),
            mesh: MeshKind::Palm,
            density: 4.5,
            min_distance: 3.5,
            min_height: 0.3,
            max_height: 5.5,
            height_fade: 1.0,
            min_slope_degrees: 0.0,
            max_slope_degrees: 24.0,
            slope_fade: 6.0,
            splat: Some(SplatMask {
                layer: 0,
                min_weight: 0.25,
                fade: 0.3,
            }),
            scale_min: 0.8,
            scale_max: 1.25,
            align_to_normal: 0.15,
            sink: 0.2,
            seed_salt: 1,
            ..ScatterLayer::default()
        },
        // Broadleaf forest on the slopes of the lowlands and hills.
        ScatterLayer {
            name: "broadleaf forest".into(),
            mesh: MeshKind::Broadleaf,
            density: 7.0,
            min_distance: 2.8,
            min_height: 4.0,
            max_height: 38.0,
            height_fade: 6.0,
            min_slope_degrees: 4.0,
            max_slope_degrees: 34.0,
            slope_fade: 5.0,
            biome_mask: 0b01011,
            scale_min: 0.75,
            scale_max: 1.3,
            sink: 0.3,
            seed_salt: 2,
            ..ScatterLayer::default()
        },
        // Rocks on cliffs and steep banks.
        ScatterLayer {
            name: "cliff rocks".into(),
            mesh: MeshKind::Rock,
            density: 8.0,
            min_distance: 2.0,
            min_height: 0.3,
            max_height: 10_000.0,
            height_fade: 0.5,
            min_slope_degrees: 32.0,
            max_slope_degrees: 90.0,
            slope_fade: 6.0,
            scale_min: 0.5,
            scale_max: 1.8,
            align_to_normal: 0.8,
            sink: 0.25,
            seed_salt: 3,
            ..ScatterLayer::default()
        },
        // Conifers high up.
        ScatterLayer {
            name: "conifers".into(),
            mesh: MeshKind::Conifer,
            density: 6.0,
            min_distance: 2.8,
            min_height: 30.0,
            max_height: 80.0,
            height_fade: 8.0,
            min_slope_degrees: 0.0,
            max_slope_degrees: 40.0,
            slope_fade: 5.0,
            biome_mask: 0b01110,
            scale_min: 0.7,
            scale_max: 1.3,
            sink: 0.3,
            seed_salt: 4,
            ..ScatterLayer::default()
        },
        // Grass tufts on the grass splat.
        ScatterLayer {
            name: "grass".into(),
            mesh: MeshKind::Grass,
            density: 70.0,
            min_distance: 0.8,
            min_height: 2.5,
            max_height: 50.0,
            height_fade: 2.0,
            min_slope_degrees: 0.0,
            max_slope_degrees: 30.0,
            slope_fade: 6.0,
            splat: Some(SplatMask {
                layer: 1,
                min_weight: 0.35,
                fade: 0.3,
            }),
            scale_min: 0.7,
            scale_max: 1.4,
            align_to_normal: 0.7,
            sink: 0.05,
            seed_salt: 5,
            ..ScatterLayer::default()
        },
    ]
}

/// The toroidal unit-spacing Poisson-disc tile (shared by every layer and seed).
struct Tile {
    /// Points row by row (cell row `j` is `pts[row_start[j]..row_start[j + 1]]`), each with its
    /// cell column, in increasing columns; tile coordinates in `[0, SIDE)`.
    pts: Vec<TilePoint>,
    /// Start of each cell row in `pts`, `TILE_CELLS + 1` entries.
    row_start: Vec<usize>,
    /// Number of points.
    count: usize,
}

#[derive(Clone, Copy)]
struct TilePoint {
    col: u32,
    x: f64,
    z: f64,
}

/// Cell side of the tile, unit spacing: `1/√2`.
const CELL: f64 = std::f64::consts::FRAC_1_SQRT_2;
/// Tile side, unit spacing.
const SIDE: f64 = TILE_CELLS as f64 * CELL;
/// Seed of the one tile.
const TILE_SEED: u32 = 0x7a3c_51e9;

/// The tile, generated on first use (a few milliseconds) and kept for the process.
fn tile() -> &'static Tile {
    static TILE: std::sync::OnceLock<Tile> = std::sync::OnceLock::new();
    TILE.get_or_init(|| Tile::new(TILE_SEED))
}

impl Tile {
    fn new(seed: u32) -> Tile {
        let m = TILE_CELLS as i32;
        let r2 = (1.0 + SPACING_MARGIN) * (1.0 + SPACING_MARGIN);
        let mut pts = vec![[f64::NAN; 2]; TILE_CELLS * TILE_CELLS];
        let mut count = 0;
        for trial in 0..TILE_TRIALS {
            let ts = hash_u32(seed ^ hash_u32(trial.wrapping_add(0x3c6e_f372)));
            for phase in 0..9 {
                let (pi, pj) = (phase % 3, phase / 3);
                for j in (pj..m).step_by(3) {
                    for i in (pi..m).step_by(3) {
                        let k = (j * m + i) as usize;
                        if !pts[k][0].is_nan() {
                            continue;
                        }
                        let h = hash2(i, j, ts);
                        let c = [
                            (i as f64 + unit(h) as f64) * CELL,
                            (j as f64 + unit(hash_u32(h ^ 0x9e37_79b9)) as f64) * CELL,
                        ];
                        if Self::free(&pts, c, i, j, r2) {
                            pts[k] = c;
                            count += 1;
                        }
                    }
                }
            }
        }
        let mut list = Vec::with_capacity(count);
        let mut row_start = Vec::with_capacity(TILE_CELLS + 1);
        for j in 0..TILE_CELLS {
            row_start.push(list.len());
            for i in 0..TILE_CELLS {
                let p = pts[j * TILE_CELLS + i];
                if !p[0].is_nan() {
                    list.push(TilePoint {
                        col: i as u32,
                        x: p[0],
                        z: p[1],
                    });
                }
            }
        }
        row_start.push(list.len());
        Tile {
            pts: list,
            row_start,
            count,
        }
    }

    /// Whether no point of the cells within two of `(i, j)` (wrapping) lies within `√r2` of `c`.
    fn free(pts: &[[f64; 2]], c: [f64; 2], i: i32, j: i32, r2: f64) -> bool {
        let m = TILE_CELLS as i32;
        for dj in -2i32..=2 {
            for di in -2i32..=2 {
                if (di == 0 && dj == 0) || (di.abs() == 2 && dj.abs() == 2) {
                    continue;
                }
                let (ni, nj) = (i + di, j + dj);
                let (wi, wj) = (ni.rem_euclid(m), nj.rem_euclid(m));
                let p = pts[(wj * m + wi) as usize];
                if p[0].is_nan() {
                    continue;
                }
                let sx = (ni - wi) as f64 / m as f64 * SIDE;
                let sz = (nj - wj) as f64 / m as f64 * SIDE;
                let (dx, dz) = (p[0] + sx - c[0], p[1] + sz - c[1]);
                if dx * dx + dz * dz < r2 {
                    return false;
                }
            }
        }
        true
    }
}

fn capacity_of(r: f32) -> f32 {
    let r = r as f64;
    (100.0 * tile().count as f64 / (SIDE * SIDE * r * r)) as f32
}

/// Everything one chunk needs.
struct Ctx<'a> {
    input: &'a ScatterInput<'a>,
    layer: &'a ScatterLayer,
    erase: Option<&'a EraseMask>,
    tile: &'static Tile,
    cps: usize,
    r: f64,
    spacing: f64,
    half: f64,
    /// Pattern space to world: `w = rot · p + origin` (`rot` row-major, diagonal ±1).
    rot: [f64; 4],
    origin: [f64; 2],
    s_keep: u32,
    s_yaw: u32,
    s_scale: u32,
    capacity: f32,
    capped: bool,
    keep: f32,
}

impl<'a> Ctx<'a> {
    fn new(
        input: &'a ScatterInput<'a>,
        layer: &'a ScatterLayer,
        erase: Option<&'a EraseMask>,
        seed: u64,
        chunk_size: usize,
    ) -> Result<Ctx<'a>, String> {
        layer.validate()?;
        input.validate()?;
        let n = input.field.resolution;
        if chunk_size == 0 {
            return Err("chunk_size must be > 0".into());
        }
        if let Some(e) = erase {
            if e.resolution() != n {
                return Err(format!(
                    "erase mask resolution {} != island resolution {n}",
                    e.resolution()
                ));
            }
        }
        let ls = layer.layer_seed(seed);
        let capacity = capacity_of(layer.min_distance);
        let keep = if capacity > 0.0 {
            (layer.density / capacity).min(1.0)
        } else {
            0.0
        };
        let r = layer.min_distance as f64;
        // Seeded mirroring of the pattern along x and z (no axis swap: pattern rows stay world
        // rows, so a chunk reads the maps row by row), and its offset.
        let h = hash_u32(ls ^ 0x51ed_270b);
        let flip = hash_u32(ls ^ 0x2545_f491);
        let fx = if flip & 1 != 0 { -1.0 } else { 1.0 };
        let fz = if flip & 2 != 0 { -1.0 } else { 1.0 };
        Ok(Ctx {
            input,
            layer,
            erase,
            tile: tile(),
            cps: chunks_per_side(n, chunk_size),
            r,
            spacing: input.field.world_size as f64 / (n - 1) as f64,
            half: input.field.world_size as f64 * 0.5,
            rot: [fx, 0.0, 0.0, fz],
            origin: [
                unit(h) as f64 * SIDE * r,
                unit(hash_u32(h)) as f64 * SIDE * r,
            ],
            s_keep: hash_u32(ls ^ 0x1b87_3593),
            s_yaw: hash_u32(ls ^ 0xcc9e_2d51),
            s_scale: hash_u32(ls ^ 0xe654_6b64),
            capacity,
            capped: layer.density > capacity,
            keep,
        })
    }

    /// Weight of the per-sample masks at sample `i`: biome, splat and wetness (the slope is
    /// judged at the point itself, see [`Self::block`]).
    #[inline]
    fn sample_weight(&self, i: usize) -> f32 {
        let layer = self.layer;
        let inp = self.input;
        if !layer.biome_allowed(inp.biomes.get(i).copied().unwrap_or(0)) {
            return 0.0;
        }
        // Nothing grows in rivers and lakes.
        if matches!(
            inp.water.get(i),
            Some(&crate::water::RIVER) | Some(&crate::water::LAKE)
        ) {
            return 0.0;
        }
        let mut w = 1.0;
        if let Some(&c) = inp.cleared.get(i) {
            if c >= 128 {
                return 0.0;
            }
            w = 1.0 - c as f32 / 128.0;
        }
        if let Some(m) = &layer.splat {
            w *= lower_fade(inp.splat_weight(i, m.layer), m.min_weight, m.fade);
            if w <= 0.0 {
                return 0.0;
            }
        }
        if let (Some(m), Some(v)) = (&layer.wetness, inp.wetness) {
            w *= range_weight(v[i], m.min, m.max, m.fade);
        }
        w
    }

    /// Whether the chunk's samples rule the layer out (height range, biomes): every point of
    /// the chunk interpolates only these samples.
    fn excluded(&self, sum: &Span) -> bool {
        let l = self.layer;
        sum.hi < l.min_height || sum.lo > l.max_height || sum.biomes & l.biome_mask == 0
    }

    /// Instances of chunk `(cx, cz)`, in pattern-cell order.
    fn chunk(&self, sum: &ChunkSummary) -> Vec<Instance> {
        let mut out = Vec::new();
        if self.keep <= 0.0 || self.excluded(&sum.all) {
            return out;
        }
        for b in &sum.blocks {
            if !self.excluded(b) {
                self.block(b, &mut out);
            }
        }
        out
    }

    /// Append the instances of one block: points in `[x0, x1) × [z0, z1)` metres (closed at the
    /// map's far edges), in pattern-cell order.
    fn block(&self, b: &Span, out: &mut Vec<Instance>) {
        let last = self.input.field.resolution - 1;
        let edge = |s: usize| s as f64 * self.spacing - self.half;
        let (x0, x1) = (edge(b.x0), edge(b.x1));
        let (z0, z1) = (edge(b.z0), edge(b.z1));
        let (close_x, close_z) = (b.x1 >= last, b.z1 >= last);
        let a = CELL * self.r; // world cell side
        let tw = SIDE * self.r; // world tile side
        let [r00, r01, r10, r11] = self.rot;
        let [ox, oz] = self.origin;
        // World -> pattern: p = rotᵀ (w - o) (rot is orthogonal).
        let (mut px0, mut px1, mut pz0, mut pz1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for (wx, wz) in [(x0, z0), (x1, z0), (x0, z1), (x1, z1)] {
            let (dx, dz) = (wx - ox, wz - oz);
            let (px, pz) = (r00 * dx + r10 * dz, r01 * dx + r11 * dz);
            px0 = px0.min(px);
            px1 = px1.max(px);
            pz0 = pz0.min(pz);
            pz1 = pz1.max(pz);
        }
        let m = TILE_CELLS as i64;
        let g = |v: f64| (v / a).floor() as i64;
        let field = self.input.field;
        let layer = self.layer;
        let (gx0, gx1) = (g(px0), g(px1));
        let tile = self.tile;
        for gz in g(pz0)..=g(pz1) {
            let (tz, jz) = (gz.div_euclid(m), gz.rem_euclid(m) as usize);
            let row = &tile.pts[tile.row_start[jz]..tile.row_start[jz + 1]];
            let pz_base = tz as f64 * tw;
            for tx in gx0.div_euclid(m)..=gx1.div_euclid(m) {
                let lo = (gx0 - tx * m).max(0) as u32;
                let hi = (gx1 - tx * m).min(m - 1) as u32;
                let start = row.partition_point(|p| p.col < lo);
                for p in row[start..].iter().take_while(|p| p.col <= hi) {
                    let gx = tx * m + p.col as i64;
                    let px = tx as f64 * tw + p.x * self.r;
                    let pz = pz_base + p.z * self.r;
                    let wx = r00 * px + r01 * pz + ox;
                    let wz = r10 * px + r11 * pz + oz;
                    let in_x = wx >= x0 && (wx < x1 || (close_x && wx <= x1));
                    let in_z = wz >= z0 && (wz < z1 || (close_z && wz <= z1));
                    if !(in_x && in_z) {
                        continue;
                    }
                    let (gxi, gzi) = (gx as i32, gz as i32);
                    let u = unit(hash2(gxi, gzi, self.s_keep));
                    if u >= self.keep {
                        continue;
                    }
                    let (x, z) = (wx as f32, wz as f32);
                    // Per-sample inputs first (cheap, and they reject most points), then the
                    // exact surface height.
                    let idx = field.nearest_index(x, z);
                    if self.erase.is_some_and(|e| e.is_erased(idx)) {
                        continue;
                    }
                    let w = self.sample_weight(idx);
                    if u >= self.keep * w || w.is_nan() {
                        continue;
                    }
                    let h = field.height_at(x, z);
                    let w =
                        w * range_weight(h, layer.min_height, layer.max_height, layer.height_fade);
                    if u >= self.keep * w || w.is_nan() {
                        continue;
                    }
                    let yaw = if layer.random_yaw {
                        unit(hash2(gxi, gzi, self.s_yaw)) * std::f32::consts::TAU
                    } else {
                        0.0
                    };
                    let scale = layer.scale_min
                        + unit(hash2(gxi, gzi, self.s_scale)) * (layer.scale_max - layer.scale_min);
                    // The slope at the point, of the same smooth normal the island answers with
                    // (`Heightfield::normal_at`, the node's `get_normal_at`).
                    let smooth = field.normal_at(x, z);
                    let w = w * layer.slope_weight(slope_degrees(smooth[1]));
                    if u >= self.keep * w || w.is_nan() {
                        continue;
                    }
                    let al = layer.align_to_normal;
                    let nrm = if al > 0.0 { smooth } else { [0.0, 1.0, 0.0] };
                    let up = [nrm[0] * al, 1.0 + (nrm[1] - 1.0) * al, nrm[2] * al];
                    let l = (up[0] * up[0] + up[1] * up[1] + up[2] * up[2]).sqrt();
                    out.push(Instance {
                        position: [x, h - layer.sink, z],
                        yaw,
                        scale,
                        up: [up[0] / l, up[1] / l, up[2] / l],
                        sample: idx as u32,
                    });
                }
            }
        }
    }
}
