//! What a game asks the island at runtime: [`ProceduralIsland::find_points`] (spawn points,
//! `island_core::spawn`) and [`ProceduralIsland::get_surface_at`] (the ground under a point,
//! `island_core::surface_query`), reading the per-island maps of [`Runtime`](crate::island::runtime_maps::Runtime).

use crate::island::procedural_island::ProceduralIsland;
use crate::island::terrain_layer::BUILTIN_NAMES;
use godot::prelude::*;
use island_core::paint::LAYERS;
use island_core::spawn::{self, Footprint, SpawnRules};
use island_core::surface_query;

/// Footprint radius of a scatter instance: half its layer's `min_distance`, at least this.
const MIN_FOOTPRINT: f32 = 0.5;

/// A rule value as a finite-or-not f32 (int or float), or why not.
fn number(key: &str, v: &Variant) -> Result<f32, String> {
    match v.get_type() {
        VariantType::FLOAT => Ok(v.to::<f64>() as f32),
        VariantType::INT => Ok(v.to::<i64>() as f32),
        t => Err(format!("rule `{key}` must be a number, got {t:?}")),
    }
}

fn integer(key: &str, v: &Variant) -> Result<i64, String> {
    match v.get_type() {
        VariantType::INT => Ok(v.to::<i64>()),
        t => Err(format!("rule `{key}` must be an int, got {t:?}")),
    }
}

/// The rules of a `find_points` dictionary (without the scatter footprints) and whether
/// `avoid_scatter` was asked.
fn parse_rules(rules: &VarDictionary, island_seed: i64) -> Result<(SpawnRules, bool), String> {
    let mut r = SpawnRules {
        seed: island_seed as u64,
        ..SpawnRules::default()
    };
    let mut avoid = false;
    let mut weight_given = false;
    for (k, v) in rules.iter_shared() {
        if k.get_type() != VariantType::STRING && k.get_type() != VariantType::STRING_NAME {
            return Err(format!("rule keys must be strings, got {k}"));
        }
        let key = k.to::<GString>().to_string();
        match key.as_str() {
            "min_height" => r.min_height = number(&key, &v)?,
            "max_height" => r.max_height = number(&key, &v)?,
            "max_slope_degrees" => r.max_slope_degrees = number(&key, &v)?,
            "min_distance" => r.min_distance = number(&key, &v)?,
            "min_water_distance" => r.min_water_distance = number(&key, &v)?,
            "min_layer_weight" => {
                r.min_layer_weight = number(&key, &v)?;
                weight_given = true;
            }
            "layer" => {
                let l = integer(&key, &v)?;
                if !(0..LAYERS as i64).contains(&l) {
                    return Err(format!("rule `layer` {l} is not 0..{}", LAYERS - 1));
                }
                r.layer = Some(l as usize);
            }
            "seed" => r.seed = integer(&key, &v)? as u64,
            "avoid_scatter" => {
                if v.get_type() != VariantType::BOOL {
                    return Err(format!(
                        "rule `avoid_scatter` must be a bool, got {:?}",
                        v.get_type()
                    ));
                }
                avoid = v.to::<bool>();
            }
            "biomes" => {
                let list: Vec<i64> = match v.get_type() {
                    VariantType::ARRAY => {
                        let a = v.to::<VarArray>();
                        let mut out = Vec::with_capacity(a.len());
                        for e in a.iter_shared() {
                            out.push(integer("biomes", &e)?);
                        }
                        out
                    }
                    VariantType::PACKED_INT32_ARRAY => v
                        .to::<PackedInt32Array>()
                        .as_slice()
                        .iter()
                        .map(|&b| b as i64)
                        .collect(),
                    VariantType::PACKED_INT64_ARRAY => v.to::<PackedInt64Array>().to_vec(),
                    t => return Err(format!("rule `biomes` must be an Array of ints, got {t:?}")),
                };
                let mut biomes = Vec::with_capacity(list.len());
                for b in list {
                    if !(0..=255).contains(&b) {
                        return Err(format!("rule `biomes`: {b} is not a biome index"));
                    }
                    biomes.push(b as u8);
                }
                r.biomes = Some(biomes);
            }
            other => {
                return Err(format!(
                    "unknown rule `{other}` (known: min_height, max_height, max_slope_degrees, \
                     min_distance, min_water_distance, biomes, layer, min_layer_weight, seed, \
                     avoid_scatter)"
                ))
            }
        }
    }
    if weight_given && r.layer.is_none() {
        return Err("rule `min_layer_weight` needs `layer`".into());
    }
    Ok((r, avoid))
}

#[godot_api(secondary)]
impl ProceduralIsland {
    /// Up to `count` node-local positions on dry ground (y = [method get_height_at]) that obey
    /// `rules`, spread apart as blue noise, the same for this island and these rules on every
    /// machine. Rule keys, all optional: `min_height`, `max_height` (m), `max_slope_degrees`,
    /// `min_distance` (m between points), `min_water_distance` (m from any river, lake or sea
    /// sample), `biomes` (Array of biome indices), `layer` (splat layer 0..7, paint included)
    /// and `min_layer_weight` (0..1, default 0.5), `seed` (int; default the island's
    /// [member seed]), `avoid_scatter` (bool: not within half a scatter layer's
    /// `min_distance` of one of its instances). Returns fewer points (with a warning) when the
    /// ground runs out. An unknown key, a value of the wrong type or out of range, or a negative
    /// `count` is an error: nothing is returned. Empty (with an error) before the first
    /// generation.
    #[func]
    pub fn find_points(&self, count: i64, rules: VarDictionary) -> PackedVector3Array {
        match self.find_points_impl(count, &rules) {
            Ok(points) => points,
            Err(e) => {
                godot_error!("ProceduralIsland.find_points: {e}");
                PackedVector3Array::new()
            }
        }
    }

    /// The ground at node-local `(x, z)` metres, cheap enough for every physics frame: `layer`
    /// (int: dominant splat layer, paint included), `layer_name` (String: its
    /// [member terrain_layers] name or the built-in one), `weights` (PackedFloat32Array: the
    /// eight layer weights, summing to 1, as [method get_splat_weights_at]), `biome` (int, -1
    /// without biomes), `water` (int: 0 dry, 1 river, 2 lake, 3 sea at the nearest sample),
    /// `water_depth` (float m: water level minus ground height, 0 when dry; `-height` in the
    /// sea), `slope_degrees` (float), `wetness` (float 0..1: 1 under water, else
    /// `exp(-d / 10 m)` of the distance `d` to the nearest river or lake) and `height` (float m,
    /// as [method get_height_at]). An **empty** Dictionary (no error) outside the map's square
    /// and before the first generation; an error and an empty Dictionary for a NaN or infinite
    /// coordinate. The first call after a generation builds two distance maps (~20 ms at 1025²).
    #[func]
    pub fn get_surface_at(&self, x: f32, z: f32) -> VarDictionary {
        let mut d = VarDictionary::new();
        let (Some(island), runtime) = self.runtime_parts() else {
            return d;
        };
        let maps = runtime.maps(&island);
        let paint_guard = self.splat_paint_ref().map(|p| p.bind());
        let paint = paint_guard
            .as_ref()
            .and_then(|g| g.layer_for(island.field.resolution));
        let s = match surface_query::surface_at(&island, &maps, paint, x, z) {
            Ok(s) => s,
            Err(surface_query::SurfaceError::Outside) => return d,
            Err(e) => {
                godot_error!("ProceduralIsland.get_surface_at({x}, {z}): {e}");
                return d;
            }
        };
        drop(paint_guard);
        let name = match self.layer_names() {
            Some(names) => GString::from(names[s.layer].as_str()),
            None => GString::from(BUILTIN_NAMES[s.layer]),
        };
        let k = runtime.keys();
        d.set(&k[0], s.layer as i64);
        d.set(&k[1], &name);
        d.set(&k[2], &PackedFloat32Array::from(&s.weights[..]));
        d.set(&k[3], s.biome as i64);
        d.set(&k[4], s.water as i64);
        d.set(&k[5], s.water_depth as f64);
        d.set(&k[6], s.slope_degrees as f64);
        d.set(&k[7], s.wetness as f64);
        d.set(&k[8], s.height as f64);
        d
    }
}

impl ProceduralIsland {
    fn find_points_impl(
        &self,
        count: i64,
        rules: &VarDictionary,
    ) -> Result<PackedVector3Array, String> {
        if count < 0 {
            return Err(format!("count {count} is negative"));
        }
        let (Some(island), runtime) = self.runtime_parts() else {
            return Err("no island has been generated yet".into());
        };
        let (mut r, avoid) = parse_rules(rules, island.params.seed as i64)?;
        if avoid {
            r.avoid = self.scatter_footprints();
        }
        let count = usize::try_from(count).map_err(|e| e.to_string())?;
        let maps = (r.min_water_distance > 0.0).then(|| runtime.maps(&island));
        let paint_guard = self.splat_paint_ref().map(|p| p.bind());
        let paint = paint_guard
            .as_ref()
            .and_then(|g| g.layer_for(island.field.resolution));
        let result = spawn::find_points(&island, maps.as_deref(), paint, count, &r)
            .map_err(|e| e.to_string())?;
        if result.is_short() {
            godot_warn!(
                "ProceduralIsland.find_points: found {} of {} points; the ground that obeys the \
                 rules ran out",
                result.points.len(),
                count
            );
        }
        Ok(result
            .points
            .iter()
            .map(|p| Vector3::new(p[0], p[1], p[2]))
            .collect())
    }

    /// Every scatter instance as a disc of half its layer's `min_distance`.
    fn scatter_footprints(&self) -> Vec<Footprint> {
        let layers = self
            .base()
            .get("scatter_layers")
            .try_to::<Array<Option<Gd<crate::scatter::scatter_layer::ScatterLayer>>>>()
            .unwrap_or_default();
        let mut out = Vec::new();
        for i in 0..self.scatter_layer_count() {
            let radius = layers.get(i).flatten().map_or(MIN_FOOTPRINT, |l| {
                (l.get("min_distance").try_to::<f64>().unwrap_or(0.0) as f32 * 0.5)
                    .max(MIN_FOOTPRINT)
            });
            for p in self.get_scatter_positions(i as i32).as_slice() {
                out.push(Footprint {
                    x: p.x,
                    z: p.z,
                    radius,
                });
            }
        }
        out
    }
}
