//! Lake basins: a few natural dams across valleys, so the island has lakes.
//!
//! Landscape evolution ([`crate::erosion`]) removes closed depressions: rivers cut through their
//! rims and sediment fills what is left, which is what happens to real lakes over geological
//! time. A game island without a single lake looks wrong, though, and real islands keep lakes
//! where something recent dammed a valley (a landslide, a lava flow, a moraine). This stage puts
//! those dams back, after the erosion and before the [`crate::drainage`] stage that fills the
//! lakes:
//!
//! * **Where** — on a coarse copy of the terrain (about 8 m cells) it runs the drainage and
//!   scores every land sample on a river (drainage area at least [`BasinSettings::min_area`])
//!   far enough from the sea: a large drainage area and a gentle valley floor score high (a
//!   gentle valley behind a dam of height `H` floods about `H / slope` metres upstream), with a
//!   little seeded jitter so the choice varies between seeds. The best
//!   [`BasinSettings::count`] sites at least three dam widths apart win (ties by sample
//!   index: deterministic).
//! * **How** — at each site a smooth ridge is raised across the valley (perpendicular to the
//!   river's course a few cells downstream): its crest is [`BasinSettings::dam_height`] above
//!   the valley floor in the middle, rising slightly towards the valley sides so the outlet is
//!   in the middle, and reaches on each side to where the valley wall is higher than the crest
//!   (at most [`BasinSettings::max_width`]; a valley too wide for that gets no dam). It is a
//!   rounded mound whose ends bow upstream like a landslide lobe; its flanks fall at about
//!   [`DAM_FLANK`] (19°) on average. The dam only raises ground. The drainage stage then
//!   fills the valley behind it up to the crest: the lake's shore is the terrain's own contour
//!   line (it floods the side valleys too), the river enters upstream and leaves over the dam.
//!
//! Deterministic and bit-identical on any thread count (all of it is sequential).

use crate::det_math;
use crate::drainage::{drainage, is_sea, DrainageSettings};
use crate::erosion::resample;
use crate::hash::{hash_u32, stage_seed, unit};
use crate::schema::{check_all, Check, ParamSpec, Slider, Value};

/// Default [`BasinSettings::count`].
pub const DEFAULT_COUNT: u32 = 2;
/// Default [`BasinSettings::dam_height`], metres.
pub const DEFAULT_DAM_HEIGHT: f32 = 5.0;
/// Default [`BasinSettings::max_width`], metres.
pub const DEFAULT_MAX_WIDTH: f32 = 120.0;
/// Default [`BasinSettings::min_area`], m².
pub const DEFAULT_MIN_AREA: f32 = 20000.0;
/// Slope of a dam's flanks (rise per metre, about 19°).
pub const DAM_FLANK: f32 = 0.35;
/// Valley-floor slope a site is scored best at (a lake about `dam_height / 0.04` m long).
const IDEAL_SLOPE: f32 = 0.04;
/// Samples per side of the coarse grid the sites are chosen on (at most the input's).
const SITE_GRID: usize = 129;
/// Stage tag of the site jitter (see [`crate::hash::tag`]).
const BASIN_TAG: u32 = 0x4c41_4b45;
/// How much higher the crest is at the valley sides than in the middle, metres.
const CREST_RISE: f32 = 1.0;

/// Settings of [`dig_lake_basins`].
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct BasinSettings {
    /// Lakes to dam, 0..=16 (fewer where the island has no suitable valley). Default 2.
    pub count: u32,
    /// Height of a dam's crest above the valley floor, metres, 0..=100 (0 dams nothing). The
    /// lake is about this deep at the dam and reaches `dam_height / slope` upstream.
    /// Default 5.
    pub dam_height: f32,
    /// Widest valley a dam may close, metres, 5..=5000 (wall to wall at crest height).
    /// Default 120.
    pub max_width: f32,
    /// Drainage area a site must have (a river big enough to feed a lake), m², >= 0.
    /// Default 20000.
    pub min_area: f32,
}

impl Default for BasinSettings {
    fn default() -> Self {
        BasinSettings {
            count: DEFAULT_COUNT,
            dam_height: DEFAULT_DAM_HEIGHT,
            max_width: DEFAULT_MAX_WIDTH,
            min_area: DEFAULT_MIN_AREA,
        }
    }
}

impl BasinSettings {
    /// The parameters' schema ([`crate::schema`]).
    pub const PARAMS: &'static [ParamSpec<BasinSettings>] = &[
        ParamSpec::int("count", DEFAULT_COUNT as i64, Check::Range(0.0, 16.0), "", "Natural dams (landslide lobes) raised across gentle valleys after the erosion; the valley behind each fills to a lake whose shore follows the terrain's contours. 0 = only the lakes the terrain holds by itself (few once eroded). Fewer where no valley suits.", |s: &Self| Value::Int(s.count as i64))
            .slider("river_lake_count", Slider::new(0.0, 16.0)),
        ParamSpec::float("dam_height", DEFAULT_DAM_HEIGHT, Check::Range(0.0, 100.0), "m", "Crest of a dam above the valley floor: about the lake's depth at the dam; it floods about height / valley slope upstream.", |s: &Self| Value::Float(s.dam_height))
            .slider("river_lake_dam_height", Slider::new(0.0, 30.0).step(0.1).or_greater().suffix("m")),
        ParamSpec::float("max_width", DEFAULT_MAX_WIDTH, Check::Range(5.0, 5000.0), "m", "Widest valley a dam may close (wall to wall at crest height).", |s: &Self| Value::Float(s.max_width))
            .slider("river_lake_max_width", Slider::new(5.0, 1000.0).or_greater().suffix("m")),
        ParamSpec::float("min_area", DEFAULT_MIN_AREA, Check::Range(0.0, 1.0e9), "m²", "Drainage area a dammed valley must have (a river big enough to feed the lake).", |s: &Self| Value::Float(s.min_area))
            .slider("river_lake_min_catchment", Slider::new(0.0, 1000000.0).or_greater().suffix("m²")),
    ];

    /// Check every field ([`BasinSettings::PARAMS`]); the first problem found is returned.
    pub fn validate(&self) -> Result<(), String> {
        check_all(Self::PARAMS, self).map_err(|e| format!("basins: {} {}", e.field, e.message))
    }
}

/// One dammed lake basin.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Basin {
    /// Middle of the dam's crest, metres from the map's corner (x, z).
    pub centre: [f32; 2],
    /// Unit direction of the valley (downstream), x and z.
    pub direction: [f32; 2],
    /// Height of the crest in the middle of the valley, metres: about the lake's level.
    pub crest: f32,
    /// Reach of the crest to each side of the middle (left, right of `direction`), metres.
    pub reach: [f32; 2],
}

/// Dam the lake basins in `heights` (metres, `n × n` row-major, `spacing` metres apart;
/// samples at or below `sea_level` are sea) and return them; see the
/// [module documentation](self). Invalid settings dam nothing.
pub fn dig_lake_basins(
    heights: &mut [f32],
    n: usize,
    spacing: f32,
    sea_level: f32,
    settings: &BasinSettings,
    seed: u64,
) -> Vec<Basin> {
    assert_eq!(heights.len(), n * n, "heights must hold n² samples");
    if settings.validate().is_err() || settings.count == 0 || settings.dam_height <= 0.0 || n < 9 {
        return Vec::new();
    }
    let sites = choose_sites(heights, n, spacing, sea_level, settings, seed);
    let mut out: Vec<Basin> = Vec::new();
    for (centre, direction) in sites {
        if out.len() as u32 >= settings.count {
            break;
        }
        // Three dam widths apart (measured at the widest allowed dam).
        if out.iter().any(|b| {
            det_math::hypot(b.centre[0] - centre[0], b.centre[1] - centre[1])
                < 1.5 * settings.max_width
        }) {
            continue;
        }
        if let Some(b) = dam(heights, n, spacing, sea_level, settings, centre, direction) {
            out.push(b);
        }
    }
    out
}

/// Candidate sites (position in metres, downstream direction), best first.
fn choose_sites(
    heights: &[f32],
    n: usize,
    spacing: f32,
    sea: f32,
    s: &BasinSettings,
    seed: u64,
) -> Vec<([f32; 2], [f32; 2])> {
    let m = SITE_GRID.min(n);
    let coarse = if m == n {
        heights.to_vec()
    } else {
        resample(heights, n, m)
    };
    let dx = spacing * (n - 1) as f32 / (m - 1) as f32;
    let d = drainage(&coarse, m, dx, sea, &DrainageSettings::default());
    let sea_dist = chamfer_distance_to_sea(&coarse, m, sea, dx);
    let jitter_seed = stage_seed(seed, BASIN_TAG);
    let keep_off_sea = 0.5 * s.max_width + 4.0 * dx;
    let mut candidates: Vec<(f32, usize)> = Vec::new();
    for i in 0..m * m {
        if is_sea(coarse[i], sea)
            || d.area[i] < s.min_area.max(dx * dx)
            || sea_dist[i] < keep_off_sea
            || d.lake_id[i] != crate::drainage::NONE
        {
            continue;
        }
        // Valley-floor slope: the drop to the receiver.
        let r = d.receivers[i] as usize;
        let (x, z) = ((i % m) as i32, (i / m) as i32);
        let (rx, rz) = ((r % m) as i32, (r / m) as i32);
        let dist = (((x - rx).pow(2) + (z - rz).pow(2)) as f32).sqrt().max(1.0) * dx;
        let slope = (d.filled[i] - d.filled[r]).max(0.0) / dist;
        let jitter = unit(hash_u32(i as u32 ^ jitter_seed));
        let score = det_math::ln(d.area[i]) - 40.0 * (slope - IDEAL_SLOPE).abs() + 1.5 * jitter;
        candidates.push((score, i));
    }
    candidates.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    candidates
        .iter()
        .map(|&(_, i)| {
            // Valley direction: from a few cells upstream... to a few downstream of the site.
            let mut j = i;
            for _ in 0..3 {
                let r = d.receivers[j] as usize;
                if r == j {
                    break;
                }
                j = r;
            }
            let (vx, vz) = (
                (j % m) as f32 - (i % m) as f32,
                (j / m) as f32 - (i / m) as f32,
            );
            let len = det_math::hypot(vx, vz);
            let dir = if len > 0.0 {
                [vx / len, vz / len]
            } else {
                [1.0, 0.0]
            };
            ([(i % m) as f32 * dx, (i / m) as f32 * dx], dir)
        })
        .collect()
}

/// Raise the dam at `centre` across `direction` when the valley there is narrow enough.
fn dam(
    heights: &mut [f32],
    n: usize,
    spacing: f32,
    sea: f32,
    s: &BasinSettings,
    centre: [f32; 2],
    dir: [f32; 2],
) -> Option<Basin> {
    let at = |h: &[f32], x: f32, z: f32| -> Option<f32> {
        let (ix, iz) = ((x / spacing).round(), (z / spacing).round());
        if ix < 0.0 || iz < 0.0 || ix > (n - 1) as f32 || iz > (n - 1) as f32 {
            return None;
        }
        Some(h[iz as usize * n + ix as usize])
    };
    // The valley floor: the lowest sample within a few metres of the site.
    let mut floor = f32::INFINITY;
    let mut best = centre;
    let look = (3.0 * spacing).max(8.0);
    let steps = (look / spacing).ceil() as i32;
    for k in -steps..=steps {
        let (x, z) = (
            centre[0] - dir[1] * k as f32 * spacing,
            centre[1] + dir[0] * k as f32 * spacing,
        );
        if let Some(h) = at(heights, x, z) {
            if h < floor {
                floor = h;
                best = [x, z];
            }
        }
    }
    if !floor.is_finite() || is_sea(floor, sea) {
        return None;
    }
    let crest = floor + s.dam_height;
    // Walk to each side (perpendicular to the valley) until the wall stands above the crest.
    let side = [[dir[1], -dir[0]], [-dir[1], dir[0]]];
    let mut reach = [0.0f32; 2];
    for (k, sd) in side.iter().enumerate() {
        let mut t = 0.0;
        loop {
            t += spacing;
            if t > 0.5 * s.max_width {
                return None;
            }
            let h = at(heights, best[0] + sd[0] * t, best[1] + sd[1] * t)?;
            if is_sea(h, sea) {
                return None;
            }
            if h >= crest + CREST_RISE + 0.5 {
                break;
            }
        }
        reach[k] = t;
    }
    // The ridge: a rounded mound whose crest is `crest + CREST_RISE·u²` (u = across / reach)
    // and whose ends bow upstream like a landslide lobe; its profile across the crest falls
    // smoothly (smoothstep) to the valley floor over `half_len`. It only raises ground.
    let height = s.dam_height + CREST_RISE + 1.0;
    let half_len = 1.5 * height / DAM_FLANK;
    let bow = 0.35 * reach[0].max(reach[1]);
    let extent = (half_len + bow).max(reach[0]).max(reach[1]) + spacing;
    let (cx, cz) = (best[0] / spacing, best[1] / spacing);
    let r = (extent / spacing).ceil() as isize + 1;
    let (x0, z0) = (cx.round() as isize, cz.round() as isize);
    for z in (z0 - r).max(0)..=(z0 + r).min(n as isize - 1) {
        for x in (x0 - r).max(0)..=(x0 + r).min(n as isize - 1) {
            let (px, pz) = (x as f32 * spacing - best[0], z as f32 * spacing - best[1]);
            // Positive to the left side (side[0]).
            let across = px * dir[1] - pz * dir[0];
            let rk = if across >= 0.0 { reach[0] } else { reach[1] };
            let u = across.abs() / rk;
            if u > 1.0 {
                continue;
            }
            let along = px * dir[0] + pz * dir[1] + bow * u * u;
            let t = (along.abs() / half_len).min(1.0);
            let fall = t * t * (3.0 - 2.0 * t);
            let top = crest + CREST_RISE * u * u - height * fall;
            let i = z as usize * n + x as usize;
            if top > heights[i] && !is_sea(heights[i], sea) {
                heights[i] = top;
            }
        }
    }
    Some(Basin {
        centre: best,
        direction: dir,
        crest,
        reach,
    })
}

/// Chamfer (3-4) distance to the nearest sea sample, metres (two raster passes).
fn chamfer_distance_to_sea(h: &[f32], m: usize, sea: f32, dx: f32) -> Vec<f32> {
    let big = f32::MAX / 4.0;
    let mut d: Vec<f32> = h
        .iter()
        .map(|&v| if is_sea(v, sea) { 0.0 } else { big })
        .collect();
    let (a, b) = (dx, dx * std::f32::consts::SQRT_2);
    for z in 0..m {
        for x in 0..m {
            let i = z * m + x;
            let mut v = d[i];
            if x > 0 {
                v = v.min(d[i - 1] + a);
            }
            if z > 0 {
                v = v.min(d[i - m] + a);
                if x > 0 {
                    v = v.min(d[i - m - 1] + b);
                }
                if x + 1 < m {
                    v = v.min(d[i - m + 1] + b);
                }
            }
            d[i] = v;
        }
    }
    for z in (0..m).rev() {
        for x in (0..m).rev() {
            let i = z * m + x;
            let mut v = d[i];
            if x + 1 < m {
                v = v.min(d[i + 1] + a);
            }
            if z + 1 < m {
                v = v.min(d[i + m] + a);
                if x + 1 < m {
                    v = v.min(d[i + m + 1] + b);
                }
                if x > 0 {
                    v = v.min(d[i + m - 1] + b);
                }
            }
            d[i] = v;
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cone island with one gently sloping valley running from the summit to the sea (+x).
    fn valley_island(n: usize, spacing: f32) -> Vec<f32> {
        let c = (n - 1) as f32 * 0.5;
        (0..n * n)
            .map(|i| {
                let (x, z) = ((i % n) as f32, (i / n) as f32);
                let r = (x - c).hypot(z - c) * spacing;
                let cone = 40.0 - r * 0.12;
                let across = (z - c) * spacing / 25.0;
                let valley = if x > c {
                    12.0 * (-across * across).exp()
                } else {
                    0.0
                };
                cone - valley
            })
            .collect()
    }

    #[test]
    fn dams_a_valley_into_a_flat_lake_deterministically_and_only_raises_land() {
        let (n, sp) = (257, 2.0);
        let before = valley_island(n, sp);
        let s = BasinSettings {
            count: 1,
            min_area: 2000.0,
            ..Default::default()
        };
        let mut a = before.clone();
        let basins = dig_lake_basins(&mut a, n, sp, 0.0, &s, 7);
        assert_eq!(basins.len(), 1, "{basins:?}");
        let mut b = before.clone();
        assert_eq!(dig_lake_basins(&mut b, n, sp, 0.0, &s, 7), basins);
        assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
        // The dam sits across the valley (z near the centre line, x downstream of the summit).
        let c = (n - 1) as f32 * 0.5 * sp;
        let dam = &basins[0];
        assert!((dam.centre[1] - c).abs() < 10.0, "{dam:?}");
        assert!(dam.centre[0] > c, "{dam:?}");
        let mut raised = 0;
        for i in 0..n * n {
            assert!(a[i] >= before[i], "only raises");
            if before[i] <= 0.0 {
                assert_eq!(a[i], before[i], "the sea is untouched");
            }
            raised += (a[i] > before[i]) as usize;
        }
        assert!(raised > 50, "{raised}");
        // Behind it the drainage finds a lake, flat at about the crest.
        let d = drainage(&a, n, sp, 0.0, &DrainageSettings::default());
        assert_eq!(d.lakes.len(), 1, "{:?}", d.lakes);
        let lake = &d.lakes[0];
        assert!(
            (lake.level - dam.crest).abs() < 1.5 && lake.depth >= 3.0,
            "{lake:?} {dam:?}"
        );
        let before_lakes = drainage(&before, n, sp, 0.0, &DrainageSettings::default());
        assert!(before_lakes.lakes.is_empty());
        // Nothing to dam: no change.
        let mut c0 = before.clone();
        let none = BasinSettings {
            count: 0,
            ..Default::default()
        };
        assert!(dig_lake_basins(&mut c0, n, sp, 0.0, &none, 7).is_empty());
        assert_eq!(c0, before);
    }

    #[test]
    fn validate_rejects_out_of_range() {
        assert!(BasinSettings::default().validate().is_ok());
        for bad in [
            BasinSettings {
                count: 17,
                ..Default::default()
            },
            BasinSettings {
                max_width: f32::NAN,
                ..Default::default()
            },
            BasinSettings {
                dam_height: -1.0,
                ..Default::default()
            },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
    }
}
