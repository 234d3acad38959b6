//! Spawn points: places on the ground for a game's things (players, a harbour, loot) that obey
//! a set of rules, spread apart, the same for an island and its rules on every machine.
//!
//! [`find_points`] draws candidates in a seeded pseudo-random order (one per grid cell, jittered
//! inside it; the order is a keyed bijection of the cell indices built from [`hash_u32`], so
//! the whole order is fixed by the seed and the resolution) and keeps each one that passes every
//! rule and lies at least [`SpawnRules::min_distance`] from every point kept before it
//! ("dart throwing", a Poisson-disc / blue-noise spread). It stops once `count` points are
//! kept; when the candidates run out first it returns fewer ([`SpawnResult::is_short`]).
//!
//! A point is always on dry ground: its nearest sample is no river, lake or sea. Its `y` is
//! [`Heightfield::height_at`] exactly. Only exact IEEE operations and [`hash_u32`] are used: the
//! same points on every platform and thread count.

use crate::heightfield::Heightfield;
use crate::paint::{PaintLayer, LAYERS};
use crate::pipeline::Island;
use crate::surface_query::{weights_at, SurfaceMaps};
use crate::water::DRY;
use std::collections::HashMap;
use std::fmt;

/// Stage tag of the spawn order (see [`crate::hash::stage_seed`]).
pub const SPAWN_TAG: u32 = 0x5350_4157;
/// Most points one call may ask for.
pub const MAX_COUNT: usize = 1_000_000;
/// [`SpawnRules::min_layer_weight`] when a layer is given without it.
pub const DEFAULT_MIN_LAYER_WEIGHT: f32 = 0.5;

/// A disc to keep clear (a scatter instance's footprint), node-local metres.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Footprint {
    /// Centre x.
    pub x: f32,
    /// Centre z.
    pub z: f32,
    /// Radius, metres (> 0).
    pub radius: f32,
}

/// The rules every point obeys. `Default` accepts any dry ground.
#[derive(Clone, Debug, PartialEq)]
pub struct SpawnRules {
    /// Lowest ground height, metres. Default `-∞`.
    pub min_height: f32,
    /// Highest ground height, metres (>= `min_height`). Default `+∞`.
    pub max_height: f32,
    /// Steepest slope, degrees 0..=90 (the smooth normal's angle to +Y). Default 90.
    pub max_slope_degrees: f32,
    /// Least horizontal distance between two points, metres, >= 0. Default 0.
    pub min_distance: f32,
    /// Least horizontal distance from the point to the centre of any river, lake or sea
    /// sample, metres, >= 0. Default 0 (only the point's own sample must be dry). Checked on
    /// the nearest sample's exact distance minus half a cell's diagonal, so it holds for every
    /// water sample (conservative by up to 0.71 sample spacings).
    pub min_water_distance: f32,
    /// Allowed biome indices at the nearest sample; `None`: any. An empty list allows none.
    pub biomes: Option<Vec<u8>>,
    /// Splat layer 0..8 whose visible weight (paint included) must be at least
    /// `min_layer_weight`; `None`: no layer rule.
    pub layer: Option<usize>,
    /// Least weight of `layer`, 0..=1. Default [`DEFAULT_MIN_LAYER_WEIGHT`].
    pub min_layer_weight: f32,
    /// Seed of the candidate order (a game passes the island's seed or a shared one).
    pub seed: u64,
    /// Discs no point may fall into (scatter instances' footprints).
    pub avoid: Vec<Footprint>,
}

impl Default for SpawnRules {
    fn default() -> Self {
        SpawnRules {
            min_height: f32::NEG_INFINITY,
            max_height: f32::INFINITY,
            max_slope_degrees: 90.0,
            min_distance: 0.0,
            min_water_distance: 0.0,
            biomes: None,
            layer: None,
            min_layer_weight: DEFAULT_MIN_LAYER_WEIGHT,
            seed: 0,
            avoid: Vec::new(),
        }
    }
}

/// Why [`find_points`] did not run.
#[derive(Clone, Debug, PartialEq)]
pub enum SpawnError {
    /// A rule's value is out of its range (the rule's name and why).
    Invalid(&'static str, String),
    /// The island lacks what a rule reads (e.g. biomes of an imported heightmap).
    Unsupported(String),
}

impl fmt::Display for SpawnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpawnError::Invalid(k, m) => write!(f, "invalid rule `{k}`: {m}"),
            SpawnError::Unsupported(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for SpawnError {}

impl SpawnRules {
    /// Check every value (NaN, ranges, order).
    pub fn validate(&self) -> Result<(), SpawnError> {
        let bad = |k: &'static str, m: String| Err(SpawnError::Invalid(k, m));
        if self.min_height.is_nan() {
            return bad("min_height", "NaN".into());
        }
        if self.max_height.is_nan() {
            return bad("max_height", "NaN".into());
        }
        if self.min_height > self.max_height {
            return bad(
                "max_height",
                format!(
                    "{} is below min_height {}",
                    self.max_height, self.min_height
                ),
            );
        }
        if !(0.0..=90.0).contains(&self.max_slope_degrees) {
            return bad(
                "max_slope_degrees",
                format!("{} is not 0..90", self.max_slope_degrees),
            );
        }
        if !(self.min_distance >= 0.0 && self.min_distance.is_finite()) {
            return bad(
                "min_distance",
                format!("{} is not a finite distance >= 0", self.min_distance),
            );
        }
        if !(self.min_water_distance >= 0.0 && self.min_water_distance.is_finite()) {
            return bad(
                "min_water_distance",
                format!("{} is not a finite distance >= 0", self.min_water_distance),
            );
        }
        if let Some(l) = self.layer {
            if l >= LAYERS {
                return bad("layer", format!("{l} is not 0..{}", LAYERS - 1));
            }
        }
        if !(0.0..=1.0).contains(&self.min_layer_weight) {
            return bad(
                "min_layer_weight",
                format!("{} is not 0..1", self.min_layer_weight),
            );
        }
        for f in &self.avoid {
            if !(f.x.is_finite() && f.z.is_finite() && f.radius.is_finite() && f.radius >= 0.0) {
                return bad("avoid", format!("footprint {f:?} is not finite"));
            }
        }
        Ok(())
    }
}

/// The points [`find_points`] kept.
#[derive(Clone, Debug, PartialEq)]
pub struct SpawnResult {
    /// Node-local positions on the ground, in the order they were kept.
    pub points: Vec<[f32; 3]>,
    /// How many were asked for.
    pub requested: usize,
}

impl SpawnResult {
    /// Whether the ground ran out before `requested` points were found.
    pub fn is_short(&self) -> bool {
        self.points.len() < self.requested
    }
}

/// A keyed bijection of `0..2^bits` (xor-shift, odd multiply and add rounds, each invertible
/// modulo `2^bits`).
struct Order {
    bits: u32,
    mask: u32,
    keys: [u32; 4],
}

impl Order {
    fn new(len: usize, seed: u32) -> Order {
        let bits = (usize::BITS - len.saturating_sub(1).leading_zeros()).max(2);
        let mask = if bits >= 32 {
            u32::MAX
        } else {
            (1u32 << bits) - 1
        };
        let mut k = seed;
        let mut keys = [0u32; 4];
        for key in keys.iter_mut() {
            k = crate::hash::hash_u32(k.wrapping_add(0x9e37_79b9));
            *key = k;
        }
        Order { bits, mask, keys }
    }

    fn permute(&self, mut x: u32) -> u32 {
        let half = self.bits.div_ceil(2);
        for &k in &self.keys {
            x ^= x >> half;
            x = x.wrapping_mul(k | 1) & self.mask;
            x = x.wrapping_add(k >> 7) & self.mask;
            x ^= (x >> (half / 2 + 1)) ^ (k & self.mask);
        }
        x
    }
}

/// Find up to `count` points of `island` obeying `rules` (see the [module documentation](self)).
///
/// `maps` (needed only when `rules.min_water_distance > 0`) must be [`SurfaceMaps::of`] the
/// island; `paint` (read only by the layer rule) its paint at its resolution, or `None`.
pub fn find_points(
    island: &Island,
    maps: Option<&SurfaceMaps>,
    paint: Option<&PaintLayer>,
    count: usize,
    rules: &SpawnRules,
) -> Result<SpawnResult, SpawnError> {
    rules.validate()?;
    if count > MAX_COUNT {
        return Err(SpawnError::Invalid(
            "count",
            format!("{count} is above {MAX_COUNT}"),
        ));
    }
    let field: &Heightfield = &island.field;
    let n = field.resolution;
    if rules.biomes.is_some() && island.biomes.len() != n * n {
        return Err(SpawnError::Unsupported(
            "the `biomes` rule needs biomes; this island has none (imported heightmap)".into(),
        ));
    }
    let water_needed = rules.min_water_distance > 0.0;
    if water_needed && maps.is_none_or(|m| m.water_distance.len() != n * n) {
        return Err(SpawnError::Unsupported(
            "`min_water_distance` needs the island's surface maps".into(),
        ));
    }
    if let Some(p) = paint {
        if p.resolution != n || p.data.len() != n * n {
            return Err(SpawnError::Unsupported(format!(
                "paint is {}², island {}²",
                p.resolution, n
            )));
        }
    }
    let mut result = SpawnResult {
        points: Vec::new(),
        requested: count,
    };
    if count == 0 || n < 2 {
        return Ok(result);
    }
    let s = field.spacing();
    let half = field.world_size * 0.5;
    let cells = n - 1;
    let total = cells * cells;
    let seed = crate::hash::stage_seed(rules.seed, SPAWN_TAG);
    let order = Order::new(total, seed);
    let water_margin = rules.min_water_distance + s * std::f32::consts::FRAC_1_SQRT_2;
    let md = rules.min_distance;
    let md2 = md * md;
    let grid_cell = if md > 0.0 { md } else { f32::INFINITY };
    let mut grid: HashMap<(i32, i32), Vec<u32>> = HashMap::new();
    let key_of = |x: f32, z: f32| -> (i32, i32) {
        (
            ((x + half) / grid_cell).floor() as i32,
            ((z + half) / grid_cell).floor() as i32,
        )
    };
    let biome_ok = |i: usize| {
        rules
            .biomes
            .as_ref()
            .is_none_or(|b| b.contains(&island.biomes[i]))
    };
    let mut x_in = 0u32;
    let limit = if order.bits >= 32 {
        u64::from(u32::MAX) + 1
    } else {
        1u64 << order.bits
    };
    for _ in 0..limit {
        let cell = order.permute(x_in) as usize;
        x_in = x_in.wrapping_add(1);
        if cell >= total {
            continue;
        }
        let (cx, cz) = (cell % cells, cell / cells);
        let h = crate::hash::hash_u32(cell as u32 ^ seed);
        let u = 0.05 + 0.9 * crate::hash::unit(h);
        let v = 0.05 + 0.9 * crate::hash::unit(crate::hash::hash_u32(h ^ 0x68e3_1da4));
        let x = (cx as f32 + u) * s - half;
        let z = (cz as f32 + v) * s - half;
        let i = field.nearest_index(x, z);
        if island.water.kind.get(i).copied().unwrap_or(DRY) != DRY {
            continue;
        }
        let y = field.height_at(x, z);
        if y < rules.min_height || y > rules.max_height {
            continue;
        }
        if water_needed {
            let d = maps.map_or(0.0, |m| m.water_distance[i]);
            if d < water_margin {
                continue;
            }
        }
        if !biome_ok(i) {
            continue;
        }
        if rules.max_slope_degrees < 90.0 {
            let ny = field.normal_at(x, z)[1];
            if crate::scatter::slope_degrees(ny) > rules.max_slope_degrees {
                continue;
            }
        }
        if let Some(l) = rules.layer {
            let w = weights_at(field, island.base_splat(), paint, x, z);
            if w[l] < rules.min_layer_weight {
                continue;
            }
        }
        if rules.avoid.iter().any(|f| {
            let (dx, dz) = (x - f.x, z - f.z);
            dx * dx + dz * dz < f.radius * f.radius
        }) {
            continue;
        }
        if md > 0.0 {
            let (kx, kz) = key_of(x, z);
            let mut near = false;
            'search: for gz in kz - 1..=kz + 1 {
                for gx in kx - 1..=kx + 1 {
                    if let Some(list) = grid.get(&(gx, gz)) {
                        for &p in list {
                            let [px, _, pz] = result.points[p as usize];
                            let (dx, dz) = (x - px, z - pz);
                            if dx * dx + dz * dz < md2 {
                                near = true;
                                break 'search;
                            }
                        }
                    }
                }
            }
            if near {
                continue;
            }
            grid.entry((kx, kz))
                .or_default()
                .push(result.points.len() as u32);
        }
        result.points.push([x, y, z]);
        if result.points.len() == count {
            break;
        }
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::IslandParams;
    use crate::pipeline::generate;

    fn island() -> Island {
        generate(&IslandParams {
            resolution: 129,
            world_size: 1024.0,
            ..IslandParams::default()
        })
        .expect("island")
    }

    #[test]
    fn order_is_a_permutation() {
        for len in [1usize, 2, 5, 64, 1000, 16384] {
            let o = Order::new(len, 77);
            let mut seen = vec![false; 1 << o.bits];
            for x in 0..(1u32 << o.bits) {
                let p = o.permute(x) as usize;
                assert!(!seen[p], "len {len}: {p} twice");
                seen[p] = true;
            }
        }
    }

    #[test]
    fn every_point_obeys_every_rule() {
        let isl = island();
        let maps = SurfaceMaps::of(&isl);
        let rules = SpawnRules {
            min_height: 5.0,
            max_height: 200.0,
            max_slope_degrees: 25.0,
            min_distance: 30.0,
            min_water_distance: 20.0,
            biomes: Some(vec![0, 1, 2, 3, 4]),
            layer: Some(1),
            min_layer_weight: 0.3,
            seed: 9,
            avoid: vec![Footprint {
                x: 0.0,
                z: 0.0,
                radius: 100.0,
            }],
        };
        let r = find_points(&isl, Some(&maps), None, 40, &rules).unwrap();
        assert!(!r.points.is_empty());
        let n = isl.field.resolution;
        for (k, p) in r.points.iter().enumerate() {
            let [x, y, z] = *p;
            assert_eq!(y, isl.field.height_at(x, z));
            assert!((5.0..=200.0).contains(&y));
            let slope = crate::scatter::slope_degrees(isl.field.normal_at(x, z)[1]);
            assert!(slope <= 25.0);
            let w = weights_at(&isl.field, isl.base_splat(), None, x, z);
            assert!(w[1] >= 0.3);
            assert!(x * x + z * z >= 100.0 * 100.0);
            for j in 0..n * n {
                if isl.water.kind[j] != DRY {
                    let [wx, _, wz] = isl.field.position(j % n, j / n);
                    assert!(((x - wx).powi(2) + (z - wz).powi(2)).sqrt() >= 20.0);
                }
            }
            for q in &r.points[..k] {
                assert!(((x - q[0]).powi(2) + (z - q[2]).powi(2)).sqrt() >= 30.0);
            }
        }
    }

    #[test]
    fn deterministic_and_seeded() {
        let isl = island();
        let rules = SpawnRules {
            min_distance: 10.0,
            seed: 1,
            ..SpawnRules::default()
        };
        let a = find_points(&isl, None, None, 50, &rules).unwrap();
        let b = find_points(&isl, None, None, 50, &rules).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.points.len(), 50);
        let c = find_points(
            &isl,
            None,
            None,
            50,
            &SpawnRules {
                seed: 2,
                ..rules.clone()
            },
        )
        .unwrap();
        assert_ne!(a.points, c.points);
        // Thread count does not matter (nothing runs in parallel, but the island does).
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let d = pool.install(|| find_points(&isl, None, None, 50, &rules).unwrap());
        assert_eq!(a, d);
    }

    #[test]
    fn short_when_the_ground_runs_out() {
        let isl = island();
        let rules = SpawnRules {
            min_distance: 300.0,
            ..SpawnRules::default()
        };
        let r = find_points(&isl, None, None, 500, &rules).unwrap();
        assert!(r.is_short());
        assert!(!r.points.is_empty() && r.points.len() < 30);
        let none = SpawnRules {
            min_height: 1e5,
            max_height: 1e6,
            ..SpawnRules::default()
        };
        let r = find_points(&isl, None, None, 5, &none).unwrap();
        assert!(r.points.is_empty() && r.is_short());
    }

    #[test]
    fn bad_rules_are_errors() {
        let isl = island();
        let cases = [
            SpawnRules {
                min_height: f32::NAN,
                ..SpawnRules::default()
            },
            SpawnRules {
                min_height: 10.0,
                max_height: 5.0,
                ..SpawnRules::default()
            },
            SpawnRules {
                max_slope_degrees: 91.0,
                ..SpawnRules::default()
            },
            SpawnRules {
                min_distance: -1.0,
                ..SpawnRules::default()
            },
            SpawnRules {
                min_water_distance: f32::INFINITY,
                ..SpawnRules::default()
            },
            SpawnRules {
                layer: Some(8),
                ..SpawnRules::default()
            },
            SpawnRules {
                min_layer_weight: 1.5,
                ..SpawnRules::default()
            },
        ];
        for r in &cases {
            assert!(matches!(
                find_points(&isl, None, None, 3, r),
                Err(SpawnError::Invalid(..))
            ));
        }
        assert!(find_points(&isl, None, None, MAX_COUNT + 1, &SpawnRules::default()).is_err());
        let water = SpawnRules {
            min_water_distance: 5.0,
            ..SpawnRules::default()
        };
        assert!(matches!(
            find_points(&isl, None, None, 3, &water),
            Err(SpawnError::Unsupported(_))
        ));
    }
}
