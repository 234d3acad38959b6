//! Paths: roads, river courses, ridges and canals laid along a curve by hand, that the island
//! grows around. A [`PathSpec`] is a polyline in the island's frame (node-local x, z metres)
//! with a kind and a cross-section. Where they enter the generator:
//!
//! * ridges and canals need no terrain: [`resolve`] writes them into the sculpt layer, right
//!   before the erosion, after the stamps and under the brush's strokes ([`PathSet::brush`]);
//!   they are held through erosion and drainage like a raised or flattened stroke;
//! * roads and river courses are shaped from the land they cross, so [`lay`] lays them on the
//!   eroded land (a path laid before the erosion would stand on an embankment once the land
//!   around it eroded metres lower): river courses right after the erosion, before the drainage,
//!   so the drainage joins other rivers into them ([`finish_rivers`] then keeps their bed falling
//!   and their channel in water); roads after the drainage, on the land with its rivers and
//!   lakes, leaving the water alone: a river crossing a road keeps its course and bed (a ford,
//!   or with [`Crossing::Bridge`] a gap at the road's level for a bridge the game places), and a
//!   road in a cutting never becomes a river bed or a dam. The brush's strokes go on top of both.
//!
//! Splat and scatter follow every path; the erosion follows ridges and canals, the drainage
//! ridges, canals and river courses.
//!
//! | kind | what it writes |
//! |---|---|
//! | [`PathKind::Road`] | a level corridor `width` m wide on a grade-limited profile (at most `max_grade` %), shoulders blending into the land over `shoulder` m (wider banks where it is cut or banked deeper, [`BANK_RUN`]); its splat layer; scatter cleared ([`road_cover`]) |
//! | [`PathKind::River`] | a channel `width` × `depth` whose bed never rises downstream (the lower end is the mouth), banks over `shoulder` m; river water along it ([`finish_rivers`]) |
//! | [`PathKind::Ridge`] | `height` m raised along, the crest `width` m wide, flanks over `shoulder` m |
//! | [`PathKind::Canal`] | cut (or filled) to `level` m above sea level, `width` m wide: below 0 the sea fills it and can make two islands of one |
//!
//!
//! The profile along a road ([`road_profile`]): the ground under it (the mean of its centre and
//! both edges), smoothed over a window of one road width, pinned to the ground at both ends,
//! then the highest profile under it that keeps the grade: the road cuts through humps and dips
//! into gullies (so a stream meets it at a ford) rather than banking up embankments that would
//! dam the valleys; never below [`ROAD_MIN_HEIGHT`]. A road whose ends alone need a steeper
//! grade climbs at that grade: lay switchbacks for a steep climb. Across the road every sample takes the profile at its projection on the
//! centreline, so the road is level across.

use crate::sculpt::SculptLayer;
use crate::water::{Water, DRY, LAKE, RIVER, SEA};
use std::fmt;
use std::sync::Arc;

/// Default corridor width (road surface, river channel, ridge crest, canal), metres.
pub const DEFAULT_WIDTH: f32 = 6.0;
/// Default shoulder (road verge, river bank, ridge flank), metres.
pub const DEFAULT_SHOULDER: f32 = 6.0;
/// Default steepest road grade, percent.
pub const DEFAULT_MAX_GRADE: f32 = 8.0;
/// Default river channel depth, metres.
pub const DEFAULT_DEPTH: f32 = 3.0;
/// Default ridge height, metres.
pub const DEFAULT_HEIGHT: f32 = 15.0;
/// Default canal floor, metres above sea level (below it: the sea fills the canal).
pub const DEFAULT_LEVEL: f32 = -3.0;
/// Lowest road surface, metres above sea level: a road laid over the sea is a causeway.
pub const ROAD_MIN_HEIGHT: f32 = 0.6;
/// Widest corridor or shoulder, metres.
pub const MAX_WIDTH: f32 = 2000.0;
/// Most points in one path's polyline.
pub const MAX_POINTS: usize = 200_000;
/// Length of a river path's head, in channel widths: its bed sinks from the ground to the full
/// depth over it.
pub const RIVER_HEAD: f32 = 4.0;
/// Bank run of roads and river courses: horizontal metres per metre that the path lies below or
/// above the ground beside it. The bank is at least the path's `shoulder` and at most
/// [`MAX_BANK`]; its smoothstep is then at most 1:1.5 (34°) steep, so a deep cutting gets
/// sloping sides instead of a wall.
pub const BANK_RUN: f32 = 2.25;
/// Widest earthwork bank of a road or river course, metres.
pub const MAX_BANK: f32 = 120.0;
/// Most centreline samples of one path (its length over half the grid spacing).
pub const MAX_CENTRE_SAMPLES: usize = 4_000_000;

/// What a path makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathKind {
    /// A level, grade-limited corridor.
    Road,
    /// A channel falling to its lower end, with river water.
    River,
    /// A raised crest.
    Ridge,
    /// A corridor cut to a fixed level.
    Canal,
}

impl PathKind {
    /// Every kind, in the order of their numbers (the Godot constants).
    pub const ALL: [PathKind; 4] = [
        PathKind::Road,
        PathKind::River,
        PathKind::Ridge,
        PathKind::Canal,
    ];
}

/// What a road does where a river crosses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Crossing {
    /// The river cuts through the road; the road's surface goes on across the bed.
    Ford,
    /// The river cuts through the road; the road's splat stops at the water (a gap for a
    /// bridge the game places).
    Bridge,
}

/// One path, in the island's frame.
#[derive(Clone, Debug, PartialEq)]
pub struct PathSpec {
    /// What it makes.
    pub kind: PathKind,
    /// The centreline, node-local `[x, z]` metres, in order (a river runs from its higher end
    /// to its lower one whichever end comes first).
    pub points: Vec<[f32; 2]>,
    /// Corridor width, metres, 0 < w ≤ [`MAX_WIDTH`]; default [`DEFAULT_WIDTH`].
    pub width: f32,
    /// Shoulder on each side, metres, 0..=[`MAX_WIDTH`]; default [`DEFAULT_SHOULDER`].
    pub shoulder: f32,
    /// Road: steepest grade along, percent, 0 < g ≤ 100; default [`DEFAULT_MAX_GRADE`].
    pub max_grade: f32,
    /// River: channel depth below the ground, metres, 0 < d ≤ 200; default [`DEFAULT_DEPTH`].
    pub depth: f32,
    /// Ridge: height raised, metres, -1000..=10000; default [`DEFAULT_HEIGHT`].
    pub height: f32,
    /// Canal: floor height above sea level, metres, -1000..=10000; default [`DEFAULT_LEVEL`].
    pub level: f32,
    /// Road: a ford or a bridge gap where a river crosses.
    pub crossing: Crossing,
    /// Road: the splat layer painted on it, 0..=7: a generated one (0 sand, 1 grass, 2 rock,
    /// 3 snow) or a user layer 4..7 (a `TerrainLayer` of the node's, e.g. cobblestone), which
    /// then takes the road's share of the texel from the generated ones
    /// ([`crate::Island::splat_upper`]).
    pub splat_layer: u8,
}

impl PathSpec {
    /// A path of `kind` along `points` with every other field at its default.
    pub fn new(kind: PathKind, points: Vec<[f32; 2]>) -> PathSpec {
        PathSpec {
            kind,
            points,
            width: DEFAULT_WIDTH,
            shoulder: DEFAULT_SHOULDER,
            max_grade: DEFAULT_MAX_GRADE,
            depth: DEFAULT_DEPTH,
            height: DEFAULT_HEIGHT,
            level: DEFAULT_LEVEL,
            crossing: Crossing::Ford,
            splat_layer: 0,
        }
    }

    /// Check the numbers.
    pub fn validate(&self) -> Result<(), PathError> {
        if self.points.len() < 2 {
            return fail(format!(
                "a path needs at least 2 points, got {}",
                self.points.len()
            ));
        }
        if self.points.len() > MAX_POINTS {
            return fail(format!(
                "a path has at most {MAX_POINTS} points, got {}",
                self.points.len()
            ));
        }
        if self.points.iter().flatten().any(|v| !v.is_finite()) {
            return fail("path points must be finite");
        }
        let checks = [
            ("width", self.width, 1e-3, MAX_WIDTH),
            ("shoulder", self.shoulder, 0.0, MAX_WIDTH),
            ("max_grade", self.max_grade, 1e-3, 100.0),
            ("depth", self.depth, 1e-3, 200.0),
            ("height", self.height, -1000.0, 10000.0),
            ("level", self.level, -1000.0, 10000.0),
        ];
        for (name, v, lo, hi) in checks {
            if !(v.is_finite() && (lo..=hi).contains(&v)) {
                return fail(format!("path {name} must be {lo}..{hi}, got {v}"));
            }
        }
        if self.splat_layer as usize >= crate::paint::LAYERS {
            return fail(format!(
                "path splat_layer must be 0..{} (sand, grass, rock, snow, user layers 4..7), got {}",
                crate::paint::LAYERS - 1,
                self.splat_layer
            ));
        }
        Ok(())
    }

    /// Half the corridor plus the shoulder: how far from the centreline the path reaches.
    pub fn reach(&self) -> f32 {
        0.5 * self.width + self.shoulder
    }
}

/// The paths of an island, with the brush's own sculpt layer (stamps excluded) so that its
/// strokes go on top of the paths.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PathSet {
    /// The paths, in order (later ones win where corridors overlap).
    pub paths: Vec<PathSpec>,
    /// The brush's layer (the part of [`crate::params::IslandParams::sculpt`] painted by hand).
    pub brush: Option<Arc<SculptLayer>>,
}

impl PathSet {
    /// Check every path.
    pub fn validate(&self) -> Result<(), PathError> {
        for (i, p) in self.paths.iter().enumerate() {
            p.validate()
                .map_err(|e| PathError(format!("path {i}: {}", e.0)))?;
        }
        Ok(())
    }

    /// Whether some path is a road.
    pub fn has_roads(&self) -> bool {
        self.paths.iter().any(|p| p.kind == PathKind::Road)
    }
}

/// An invalid path.
#[derive(Clone, Debug, PartialEq)]
pub struct PathError(pub String);

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PathError {}

fn fail<T>(msg: impl Into<String>) -> Result<T, PathError> {
    Err(PathError(msg.into()))
}

fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    if e1 <= e0 {
        return if x < e0 { 0.0 } else { 1.0 };
    }
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// The grid an island lies on: `n²` samples over `world` metres centred on the origin.
#[derive(Clone, Copy, Debug)]
struct Grid {
    n: usize,
    sp: f32,
    half: f32,
}

impl Grid {
    fn new(n: usize, world: f32) -> Grid {
        Grid {
            n,
            sp: world / (n - 1) as f32,
            half: world * 0.5,
        }
    }

    fn pos(&self, i: usize, j: usize) -> [f32; 2] {
        [
            i as f32 * self.sp - self.half,
            j as f32 * self.sp - self.half,
        ]
    }

    /// Bilinear value of `f` at `(x, z)` (clamped to the map).
    fn sample(&self, f: &[f32], x: f32, z: f32) -> f32 {
        let m = (self.n - 1) as f32;
        let fx = ((x + self.half) / self.sp).clamp(0.0, m);
        let fz = ((z + self.half) / self.sp).clamp(0.0, m);
        let (i0, j0) = ((fx as usize).min(self.n - 2), (fz as usize).min(self.n - 2));
        let (tx, tz) = (fx - i0 as f32, fz - j0 as f32);
        let k = j0 * self.n + i0;
        let a = f[k] + (f[k + 1] - f[k]) * tx;
        let b = f[k + self.n] + (f[k + self.n + 1] - f[k + self.n]) * tx;
        a + (b - a) * tz
    }

    /// Index of the sample nearest `(x, z)` (clamped to the map).
    fn nearest(&self, x: f32, z: f32) -> usize {
        let m = (self.n - 1) as f32;
        let i = ((x + self.half) / self.sp).round().clamp(0.0, m) as usize;
        let j = ((z + self.half) / self.sp).round().clamp(0.0, m) as usize;
        j * self.n + i
    }
}

/// A path's centreline resampled every `ds` metres of arc length (the last step shorter), with
/// the arc length at each sample.
struct Centre {
    pos: Vec<[f32; 2]>,
    arc: Vec<f32>,
}

fn centreline(points: &[[f32; 2]], ds: f32) -> Result<Centre, PathError> {
    let mut length = 0.0f64;
    for w in points.windows(2) {
        let (dx, dz) = (w[1][0] - w[0][0], w[1][1] - w[0][1]);
        length += ((dx * dx + dz * dz) as f64).sqrt();
    }
    if length / (ds as f64) > MAX_CENTRE_SAMPLES as f64 {
        return fail(format!(
            "a path {length:.0} m long is too long for this grid (at most {} m)",
            MAX_CENTRE_SAMPLES as f32 * ds
        ));
    }
    let mut pos = vec![points[0]];
    let mut arc = vec![0.0f32];
    let mut s = 0.0f32;
    // Distance walked since the last emitted sample.
    let mut since = 0.0f32;
    for w in points.windows(2) {
        let (a, b) = (w[0], w[1]);
        let (dx, dz) = (b[0] - a[0], b[1] - a[1]);
        let len = (dx * dx + dz * dz).sqrt();
        if len <= 0.0 {
            continue;
        }
        let mut t = ds - since;
        while t <= len {
            let u = t / len;
            pos.push([a[0] + dx * u, a[1] + dz * u]);
            arc.push(s + t);
            t += ds;
        }
        since = len - (t - ds);
        s += len;
    }
    let last = *points.last().expect("two points at least");
    if since > 1e-4 || pos.len() == 1 {
        pos.push(last);
        arc.push(s);
    }
    Ok(Centre { pos, arc })
}

/// Every grid sample within `reach` of the centreline, with the nearest point on it: calls
/// `f(sample, segment k, t along it 0..1, distance)`; the point is `pos[k] + t · (pos[k+1] -
/// pos[k])` (k is the last index and t 0 for a one-point line).
fn corridor(c: &Centre, g: &Grid, reach: f32, mut f: impl FnMut(usize, usize, f32, f32)) {
    let (mut x0, mut z0, mut x1, mut z1) = (f32::MAX, f32::MAX, f32::MIN, f32::MIN);
    for p in &c.pos {
        x0 = x0.min(p[0]);
        z0 = z0.min(p[1]);
        x1 = x1.max(p[0]);
        z1 = z1.max(p[1]);
    }
    let m = (g.n - 1) as f32;
    let lo = |v: f32| ((v - reach + g.half) / g.sp).floor().clamp(0.0, m) as usize;
    let hi = |v: f32| ((v + reach + g.half) / g.sp).ceil().clamp(0.0, m) as usize;
    let (i0, i1, j0, j1) = (lo(x0), hi(x1), lo(z0), hi(z1));
    if x1 + reach < -g.half || x0 - reach > g.half || z1 + reach < -g.half || z0 - reach > g.half {
        return;
    }
    let w = i1 - i0 + 1;
    let h = j1 - j0 + 1;
    // Nearest centreline sample of every window sample within reach (by sample, then refined
    // onto the segments beside it).
    let mut best = vec![f32::INFINITY; w * h];
    let mut idx = vec![u32::MAX; w * h];
    let r2 = reach * reach;
    for (ci, p) in c.pos.iter().enumerate() {
        let a0 = lo(p[0]).max(i0);
        let a1 = hi(p[0]).min(i1);
        let b0 = lo(p[1]).max(j0);
        let b1 = hi(p[1]).min(j1);
        for j in b0..=b1 {
            for i in a0..=a1 {
                let q = g.pos(i, j);
                let (dx, dz) = (q[0] - p[0], q[1] - p[1]);
                let d2 = dx * dx + dz * dz;
                let k = (j - j0) * w + (i - i0);
                if d2 < best[k] && d2 <= r2 + g.sp * g.sp {
                    best[k] = d2;
                    idx[k] = ci as u32;
                }
            }
        }
    }
    let last = c.pos.len() - 1;
    for jj in 0..h {
        for ii in 0..w {
            let k = jj * w + ii;
            if idx[k] == u32::MAX {
                continue;
            }
            let q = g.pos(i0 + ii, j0 + jj);
            let ci = idx[k] as usize;
            // The nearest point on the segments before and after the nearest sample.
            let mut out = (
                ci.min(last.saturating_sub(1)),
                if ci == last { 1.0 } else { 0.0 },
                f32::INFINITY,
            );
            if last == 0 {
                out = (0, 0.0, f32::INFINITY);
            }
            for s in [ci.wrapping_sub(1), ci] {
                if s >= last {
                    continue;
                }
                let (a, b) = (c.pos[s], c.pos[s + 1]);
                let (ex, ez) = (b[0] - a[0], b[1] - a[1]);
                let l2 = ex * ex + ez * ez;
                let t = if l2 > 0.0 {
                    (((q[0] - a[0]) * ex + (q[1] - a[1]) * ez) / l2).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                let (px, pz) = (a[0] + ex * t - q[0], a[1] + ez * t - q[1]);
                let d = (px * px + pz * pz).sqrt();
                if d < out.2 {
                    out = (s, t, d);
                }
            }
            if out.2.is_infinite() {
                let p = c.pos[ci];
                let (dx, dz) = (q[0] - p[0], q[1] - p[1]);
                out.2 = (dx * dx + dz * dz).sqrt();
            }
            if out.2 <= reach {
                f((j0 + jj) * g.n + i0 + ii, out.0, out.1, out.2);
            }
        }
    }
}

/// Value of a per-centre-sample profile at segment `k`, fraction `t`.
fn along(v: &[f32], k: usize, t: f32) -> f32 {
    match v.get(k + 1) {
        Some(&b) => v[k] + (b - v[k]) * t,
        None => v[k],
    }
}

/// Box-filter `v` with a half window of `m` samples (shrinking at the ends), `passes` times.
fn smooth(v: &mut [f32], m: usize, passes: usize) {
    if m == 0 || v.len() < 3 {
        return;
    }
    let n = v.len();
    for _ in 0..passes {
        let src = v.to_vec();
        let mut prefix = vec![0.0f64; n + 1];
        for i in 0..n {
            prefix[i + 1] = prefix[i] + src[i] as f64;
        }
        for (i, o) in v.iter_mut().enumerate() {
            let a = i.saturating_sub(m);
            let b = (i + m).min(n - 1);
            *o = ((prefix[b + 1] - prefix[a]) / (b + 1 - a) as f64) as f32;
        }
    }
}

/// The ground under a path: the terrain at each centre sample, averaged with both corridor
/// edges.
fn ground(c: &Centre, g: &Grid, terrain: &[f32], half_width: f32) -> Vec<f32> {
    let n = c.pos.len();
    (0..n)
        .map(|i| {
            let p = c.pos[i];
            let (a, b) = (c.pos[i.saturating_sub(1)], c.pos[(i + 1).min(n - 1)]);
            let (tx, tz) = (b[0] - a[0], b[1] - a[1]);
            let len = (tx * tx + tz * tz).sqrt();
            let centre = g.sample(terrain, p[0], p[1]);
            if len <= 0.0 {
                return centre;
            }
            let (nx, nz) = (-tz / len * half_width, tx / len * half_width);
            let l = g.sample(terrain, p[0] + nx, p[1] + nz);
            let r = g.sample(terrain, p[0] - nx, p[1] - nz);
            (centre + l + r) / 3.0
        })
        .collect()
}

/// A road's profile (see the module doc): `ground` smoothed over `window` samples each side,
/// kept within `max_grade` % of both ends (pinned to the ground there; when the ends alone need
/// a steeper grade, the road climbs at that grade), then the highest profile under it that keeps
/// the grade (the road cuts through a hump rather than banking up to it, and dips into a gully
/// where a stream crosses), at least [`ROAD_MIN_HEIGHT`]. `arc` is the arc length of each sample.
pub fn road_profile(ground: &[f32], arc: &[f32], max_grade: f32, window: usize) -> Vec<f32> {
    let mut g = ground.to_vec();
    smooth(&mut g, window, 2);
    let n = g.len();
    let total = arc[n - 1];
    let (g0, ge) = (g[0], g[n - 1]);
    let mut slope = max_grade / 100.0;
    if total > 0.0 {
        slope = slope.max((ge - g0).abs() / total);
    }
    for (i, v) in g.iter_mut().enumerate() {
        let s = arc[i];
        let lo = (g0 - slope * s).max(ge - slope * (total - s));
        let hi = (g0 + slope * s).min(ge + slope * (total - s));
        *v = if lo <= hi {
            v.clamp(lo, hi)
        } else {
            0.5 * (lo + hi)
        };
    }
    for i in 1..n {
        let d = slope * (arc[i] - arc[i - 1]);
        g[i] = g[i].min(g[i - 1] + d);
    }
    for i in (0..n.saturating_sub(1)).rev() {
        let d = slope * (arc[i + 1] - arc[i]);
        g[i] = g[i].min(g[i + 1] + d);
    }
    g.iter().map(|v| v.max(ROAD_MIN_HEIGHT)).collect()
}

/// A river's bed from its higher end (arc length `arc`): the lowest ground so far, `depth`
/// below, the depth growing from 0 over the first `head` metres; never rises.
fn river_bed(ground: &[f32], arc: &[f32], depth: f32, head: f32) -> Vec<f32> {
    let mut low = f32::INFINITY;
    let mut prev = f32::INFINITY;
    ground
        .iter()
        .zip(arc)
        .map(|(&g, &s)| {
            low = low.min(g);
            let ramp = if head > 0.0 { (s / head).min(1.0) } else { 1.0 };
            prev = prev.min(low - depth * ramp);
            prev
        })
        .collect()
}

/// The centreline of `p` from upstream to downstream (rivers; others as drawn), on `g`, with
/// the ground under it.
fn oriented(p: &PathSpec, g: &Grid, terrain: &[f32]) -> Result<(Centre, Vec<f32>), PathError> {
    let mut c = centreline(&p.points, 0.5 * g.sp)?;
    let mut gr = ground(&c, g, terrain, 0.5 * p.width);
    if p.kind == PathKind::River {
        let m = (p.width / (0.5 * g.sp)).ceil() as usize;
        let mut s = gr.clone();
        smooth(&mut s, m, 1);
        if s[0] < s[s.len() - 1] {
            c.pos.reverse();
            let total = *c.arc.last().expect("non-empty");
            c.arc = c.arc.iter().rev().map(|a| total - a).collect();
            gr.reverse();
        }
    }
    Ok((c, gr))
}

/// Weight of a corridor at distance `d` from the centreline: 1 across the corridor, fading over
/// the shoulder.
fn cross_weight(p: &PathSpec, d: f32) -> f32 {
    bank_weight(0.5 * p.width, p.shoulder, d)
}

/// Weight at distance `d` from the centreline of a corridor `hw` wide each side with a bank of
/// `bank` metres: 1 across the corridor, a smoothstep down to 0 over the bank.
fn bank_weight(hw: f32, bank: f32, d: f32) -> f32 {
    if d <= hw {
        1.0
    } else {
        1.0 - smoothstep(hw, hw + bank, d)
    }
}

/// Set a level into `layer` at `k` with weight `w` (a path over what is there: it wins where it
/// is at least as strong).
fn put_level(layer: &mut SculptLayer, k: usize, level: f32, w: f32) {
    if w <= 0.0 {
        return;
    }
    let old = layer.level_weight[k];
    if w >= old {
        layer.level[k] = level;
        layer.level_weight[k] = w;
    } else {
        // Blend: the older level keeps its weight, the path's pulls towards its own.
        layer.level[k] += (level - layer.level[k]) * (w / (old + w));
    }
}

/// The sculpt layer with `set`'s ridges and canals written in (they need no terrain): `base`
/// (the stamps and the brush, the layer the generator would use without paths; may be none) on
/// the island's grid, each ridge and canal on it in order, then the brush's strokes on top again
/// where a canal levels them. `n²` samples over `world` metres. Roads and rivers are laid on the
/// eroded land later ([`lay`]).
pub fn resolve(
    base: Option<&SculptLayer>,
    set: &PathSet,
    n: usize,
    world: f32,
) -> Result<SculptLayer, PathError> {
    set.validate()?;
    let g = Grid::new(n, world);
    let mut layer = match base {
        Some(b) => b.resample(n, world),
        None => SculptLayer::new(n, world).map_err(|e| PathError(e.to_string()))?,
    };
    let mut levelled = Vec::new();
    for p in &set.paths {
        if !matches!(p.kind, PathKind::Ridge | PathKind::Canal) {
            continue;
        }
        let c = centreline(&p.points, 0.5 * g.sp)?;
        corridor(&c, &g, p.reach(), |k, _, _, d| {
            let w = cross_weight(p, d);
            if p.kind == PathKind::Ridge {
                layer.offset[k] += p.height * w;
            } else {
                put_level(&mut layer, k, p.level, w);
                levelled.push(k);
            }
        });
    }
    // The brush's strokes on top of a canal: its offsets move the canal's level, its flattening
    // wins where it flattens.
    if let Some(b) = set.brush.as_deref().filter(|b| !b.is_empty()) {
        let b = b.resample(n, world);
        levelled.sort_unstable();
        levelled.dedup();
        for k in levelled {
            let (o, bw) = (b.offset[k], b.level_weight[k]);
            layer.level[k] += o;
            if bw > 0.0 {
                layer.level[k] += (b.level[k] - layer.level[k]) * bw;
                layer.level_weight[k] = layer.level_weight[k].max(bw);
            }
        }
    }
    Ok(layer)
}

/// Lay `set`'s paths of `kind` ([`PathKind::River`] on the eroded land before the drainage,
/// [`PathKind::Road`] after it, given its `water`) on `heights` (`n²` samples over `world`
/// metres), each shaped from the land as the paths before it left it: a river's falling bed
/// (its first [`RIVER_HEAD`] widths sinking from the ground, so its head is no pit), a road's
/// grade-limited profile (a ford dips into a river bed as far as the grade allows; a bridge
/// keeps its level across). Every sample takes `lerp(h, level, weight)` (1 across the corridor,
/// fading over the bank: the shoulder, or [`BANK_RUN`] times the cut or fill where wider), except that a road leaves water alone (the river, lake or sea
/// keeps its bed: a ford or bridge gap); then the brush's strokes on top again
/// ([`PathSet::brush`]: its offsets raise or lower the path, its flattening wins where it
/// flattens). Ridges and canals are not laid here ([`resolve`]).
pub fn lay(
    set: &PathSet,
    kind: PathKind,
    heights: &mut [f32],
    water: Option<&Water>,
    n: usize,
    world: f32,
) -> Result<(), PathError> {
    set.validate()?;
    if !matches!(kind, PathKind::Road | PathKind::River) {
        return Ok(());
    }
    let g = Grid::new(n, world);
    let brush = set
        .brush
        .as_deref()
        .filter(|b| !b.is_empty())
        .map(|b| b.resample(n, world));
    let wet = |k: usize| water.is_some_and(|w| w.kind.get(k).is_some_and(|&v| v != DRY));
    for p in set.paths.iter().filter(|p| p.kind == kind) {
        let (c, mut gr) = oriented(p, &g, heights)?;
        let level = if kind == PathKind::Road {
            if p.crossing == Crossing::Bridge {
                bridge_ground(&mut gr, |i| wet(g.nearest(c.pos[i][0], c.pos[i][1])));
            }
            let window = (p.width / (0.5 * g.sp)).ceil() as usize;
            road_profile(&gr, &c.arc, p.max_grade, window)
        } else {
            river_bed(&gr, &c.arc, p.depth, RIVER_HEAD * p.width)
        };
        // Earthwork banks: at least the shoulder, wider where the path is cut or banked deeper.
        let bank: Vec<f32> = level
            .iter()
            .zip(&gr)
            .map(|(l, g)| (BANK_RUN * (l - g).abs()).clamp(p.shoulder, p.shoulder.max(MAX_BANK)))
            .collect();
        let reach = 0.5 * p.width + bank.iter().copied().fold(0.0, f32::max);
        let hw = 0.5 * p.width;
        let mut writes = Vec::new();
        corridor(&c, &g, reach, |k, s, t, d| {
            let sh = along(&bank, s, t);
            if !wet(k) && d <= hw + sh {
                writes.push((k, along(&level, s, t), bank_weight(hw, sh, d)));
            }
        });
        for (k, v, w) in writes {
            let h = &mut heights[k];
            let mut out = *h + (v - *h) * w;
            if let Some(b) = &brush {
                out += b.offset[k] * w;
                let bw = b.level_weight[k];
                if bw > 0.0 {
                    out += (b.level[k] - out) * bw;
                }
            }
            *h = out;
        }
    }
    Ok(())
}

/// A bridge's ground: over the wet centre samples, the straight line between the dry ground on
/// either side (or the one side's ground at an end), so the road keeps its level across.
fn bridge_ground(ground: &mut [f32], wet: impl Fn(usize) -> bool) {
    let n = ground.len();
    let mut i = 0;
    while i < n {
        if !wet(i) {
            i += 1;
            continue;
        }
        let start = i;
        while i < n && wet(i) {
            i += 1;
        }
        let before = start.checked_sub(1).map(|k| ground[k]);
        let after = (i < n).then(|| ground[i]);
        let (a, b) = match (before, after) {
            (Some(a), Some(b)) => (a, b),
            (Some(a), None) => (a, a),
            (None, Some(b)) => (b, b),
            (None, None) => return,
        };
        let span = (i - start + 1) as f32;
        for (j, v) in ground[start..i].iter_mut().enumerate() {
            *v = a + (b - a) * (j + 1) as f32 / span;
        }
    }
}

/// How much each sample is covered by a road (255 on the road surface, fading over the
/// shoulder), `n²` samples over `world` metres; `None` without roads. For the splat layer and
/// scatter clearing; geometry only, no heights needed. Invalid paths cover nothing.
pub fn road_cover(set: &PathSet, n: usize, world: f32) -> Option<Vec<u8>> {
    if !set.has_roads() || n < 2 {
        return None;
    }
    let g = Grid::new(n, world);
    let mut cover = vec![0u8; n * n];
    for p in set.paths.iter().filter(|p| p.kind == PathKind::Road) {
        if p.validate().is_err() {
            continue;
        }
        let Ok(c) = centreline(&p.points, 0.5 * g.sp) else {
            continue;
        };
        corridor(&c, &g, p.reach(), |k, _, _, d| {
            let v = (cross_weight(p, d) * 255.0).round() as u8;
            cover[k] = cover[k].max(v);
        });
    }
    Some(cover)
}

/// The road splat on `splat` (layers 0..3 per sample; with the returned layers 4..7 the eight
/// sum to 255): each road's layer where it lies, in proportion to its cover (full on the road
/// surface, fading over the shoulder); with [`Crossing::Bridge`] not on water. Returns layers
/// 4..7 when a road is painted with one of them (`None`: they are 0 everywhere). `n²` samples
/// over `world` metres.
pub fn paint_roads(
    set: &PathSet,
    splat: &mut [[u8; 4]],
    water: &Water,
    n: usize,
    world: f32,
) -> Option<Vec<[u8; 4]>> {
    let g = Grid::new(n, world);
    let roads = || {
        set.paths
            .iter()
            .filter(|p| p.kind == PathKind::Road && p.validate().is_ok())
    };
    let mut upper = roads()
        .any(|p| p.splat_layer >= 4)
        .then(|| vec![[0u8; 4]; splat.len()]);
    for p in roads() {
        let Ok(c) = centreline(&p.points, 0.5 * g.sp) else {
            continue;
        };
        let layer = p.splat_layer as usize;
        corridor(&c, &g, p.reach(), |k, _, _, d| {
            if p.crossing == Crossing::Bridge && water.kind.get(k).is_some_and(|&w| w != DRY) {
                return;
            }
            let w = cross_weight(p, d);
            let lo = &mut splat[k];
            let mut hi = upper.as_ref().map_or([0; 4], |u| u[k]);
            let mut out = [0u8; 8];
            let mut sum = 0u32;
            for ch in 0..8 {
                let s = if ch < 4 { lo[ch] } else { hi[ch - 4] };
                let target = if ch == layer { 255.0 } else { 0.0 };
                let v = s as f32 + (target - s as f32) * w;
                out[ch] = v.round().clamp(0.0, 255.0) as u8;
                sum += out[ch] as u32;
            }
            // Keep the sum at 255 (rounding): the difference goes to the road's layer.
            let fix = out[layer] as i32 + 255 - sum as i32;
            out[layer] = fix.clamp(0, 255) as u8;
            lo.copy_from_slice(&out[..4]);
            hi.copy_from_slice(&out[4..]);
            if let Some(u) = upper.as_mut() {
                u[k] = hi;
            }
        });
    }
    upper
}

/// The river paths after the drainage: from each path's upper end down to where it meets the
/// sea or a lake, the channel's bed is made never to rise downstream again (the drainage's
/// carving may have left a step), and the dry samples of its channel below the river's surface
/// (`fill` of the channel depth above the bed, never rising downstream) become [`RIVER`] at
/// that surface. `heights` are the final heights, `n²` samples over `world` metres. Returns the
/// number of samples marked.
pub fn finish_rivers(
    set: &PathSet,
    heights: &mut [f32],
    water: &mut Water,
    n: usize,
    world: f32,
    fill: f32,
) -> usize {
    let g = Grid::new(n, world);
    let mut marked = 0;
    for p in set.paths.iter().filter(|p| p.kind == PathKind::River) {
        if p.validate().is_err() {
            continue;
        }
        let Ok((c, _)) = oriented(p, &g, heights) else {
            continue;
        };
        // Bed and surface along the centreline down to the mouth (NaN after it).
        let mut bed = vec![f32::NAN; c.pos.len()];
        let mut surface = vec![f32::NAN; c.pos.len()];
        let (mut low, mut s) = (f32::INFINITY, f32::INFINITY);
        for (i, q) in c.pos.iter().enumerate() {
            let k = g.nearest(q[0], q[1]);
            if matches!(water.kind[k], SEA | LAKE) {
                break;
            }
            low = low.min(g.sample(heights, q[0], q[1]));
            bed[i] = low;
            let ramp = (c.arc[i] / (RIVER_HEAD * p.width)).min(1.0);
            s = s.min(low + fill * p.depth * ramp);
            surface[i] = s;
        }
        corridor(&c, &g, 0.5 * p.width, |k, seg, t, _| {
            let b = along(&bed, seg, t);
            if b.is_nan() {
                return;
            }
            heights[k] = heights[k].min(b);
            let v = along(&surface, seg, t);
            if water.kind[k] != DRY || heights[k] >= v {
                return;
            }
            water.kind[k] = RIVER;
            water.level[k] = v;
            marked += 1;
        });
    }
    marked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(n: usize, h: f32) -> Vec<f32> {
        vec![h; n * n]
    }

    #[test]
    fn centreline_is_evenly_spaced_and_ends_on_the_last_point() {
        let c = centreline(&[[0.0, 0.0], [10.0, 0.0], [10.0, 5.0]], 1.0).unwrap();
        assert_eq!(c.pos.len(), 16);
        assert_eq!(c.pos[10], [10.0, 0.0]);
        assert_eq!(*c.pos.last().unwrap(), [10.0, 5.0]);
        assert!((c.arc.last().unwrap() - 15.0).abs() < 1e-4);
    }

    #[test]
    fn road_profile_keeps_the_grade_meets_both_ends_and_cuts_humps() {
        // A 30 m step in the ground: the road ramps at 8 % at most.
        let arc: Vec<f32> = (0..1000).map(|i| i as f32).collect();
        let ground: Vec<f32> = (0..1000)
            .map(|i| if i < 500 { 10.0 } else { 40.0 })
            .collect();
        let prof = road_profile(&ground, &arc, 8.0, 3);
        for w in prof.windows(2) {
            assert!((w[1] - w[0]).abs() <= 0.08 + 1e-4, "{w:?}");
        }
        assert!((prof[0] - 10.0).abs() < 1e-3 && (prof[999] - 40.0).abs() < 1e-3);
        // It cuts into the higher ground instead of banking up to it.
        assert!(
            prof[499] < 10.5 && prof[600] < 40.0,
            "{} {}",
            prof[499],
            prof[600]
        );
        // A hump in flat ground is cut through, a gully followed down.
        let bumpy: Vec<f32> = (0..1000)
            .map(|i| match i {
                400..=420 => 30.0,
                700..=710 => 2.0,
                _ => 10.0,
            })
            .collect();
        let prof = road_profile(&bumpy, &arc, 8.0, 0);
        // (a crest 8 % up and down from the hump's foot, far below its 30 m)
        assert!(prof[410] <= 10.0 + 0.08 * 11.0 + 1e-3, "{}", prof[410]);
        assert!(prof[705] < 3.0, "{}", prof[705]);
        // Ends that need more than the grade: one straight climb.
        let steep: Vec<f32> = (0..100).map(|i| i as f32).collect();
        let prof = road_profile(&steep, &arc[..100], 8.0, 0);
        assert!((prof[50] - 50.0).abs() < 1e-3, "{}", prof[50]);
    }

    #[test]
    fn road_is_level_across_and_fades_over_its_shoulders() {
        let (n, world) = (129, 256.0);
        let g = Grid::new(n, world);
        // Ground rising 8 m along x over 40 m (20 %), flat elsewhere.
        let terrain: Vec<f32> = (0..n * n)
            .map(|k| 10.0 + 8.0 * smoothstep(-20.0, 20.0, g.pos(k % n, k / n)[0]))
            .collect();
        let mut p = PathSpec::new(PathKind::Road, vec![[-100.0, 0.0], [100.0, 0.0]]);
        p.width = 8.0;
        p.max_grade = 5.0;
        let set = PathSet {
            paths: vec![p],
            brush: None,
        };
        let mut h = terrain.clone();
        lay(&set, PathKind::Road, &mut h, None, n, world).unwrap();
        let at = |x: f32, z: f32| g.nearest(x, z);
        // Level across the road (z = -4..4): the same level at one x.
        for x in [-60.0, 0.0, 40.0] {
            let a = h[at(x, -4.0)];
            let b = h[at(x, 0.0)];
            let c = h[at(x, 4.0)];
            assert!((a - b).abs() < 1e-4 && (c - b).abs() < 1e-4, "{a} {b} {c}");
        }
        // The grade is limited to 5 % (the ground rises at up to 30 %); the ends meet the
        // ground.
        for i in 0..90 {
            let x = -90.0 + 2.0 * i as f32;
            let (h0, h1) = (h[at(x, 0.0)], h[at(x + 10.0, 0.0)]);
            assert!((h1 - h0).abs() / 10.0 <= 0.05 + 1e-3, "{x}: {h0} {h1}");
        }
        assert!((h[at(-100.0, 0.0)] - 10.0).abs() < 0.1);
        assert!((h[at(100.0, 0.0)] - 18.0).abs() < 0.1);
        // Shoulders fade out; nothing beyond.
        let cover = road_cover(&set, n, world).unwrap();
        let s = cover[at(0.0, 7.0)];
        assert!(s > 0 && s < 255, "{s}");
        assert_eq!(cover[at(0.0, 4.0)], 255);
        assert_eq!(cover[at(0.0, 12.0)], 0);
        assert_eq!(h[at(-10.0, 40.0)], terrain[at(-10.0, 40.0)]);
    }

    #[test]
    fn a_deep_cutting_gets_sloping_banks() {
        let (n, world) = (129, 256.0);
        let g = Grid::new(n, world);
        // Flat land at 10 m with a 30 m hump across the road's middle.
        let terrain: Vec<f32> = (0..n * n)
            .map(|k| {
                let x = g.pos(k % n, k / n)[0];
                10.0 + 30.0 * (1.0 - smoothstep(0.0, 40.0, x.abs()))
            })
            .collect();
        let mut p = PathSpec::new(PathKind::Road, vec![[-120.0, 0.0], [120.0, 0.0]]);
        p.width = 8.0;
        p.shoulder = 4.0;
        let set = PathSet {
            paths: vec![p],
            brush: None,
        };
        let mut h = terrain.clone();
        lay(&set, PathKind::Road, &mut h, None, n, world).unwrap();
        let at = |z: f32| g.nearest(0.0, z);
        assert!(h[at(0.0)] < 20.0, "cut through the hump: {}", h[at(0.0)]);
        // Beyond the 4 m shoulder the bank goes on (the cut is over 20 m deep).
        assert!(h[at(16.0)] < terrain[at(16.0)] - 5.0, "{}", h[at(16.0)]);
        // No side steeper than 1:1.5 (plus the grid's share).
        for k in 2..40 {
            let (a, b) = (h[at(2.0 * k as f32)], h[at(2.0 * (k + 1) as f32)]);
            assert!((b - a).abs() / 2.0 <= 0.75, "{k}: {a} {b}");
        }
    }

    #[test]
    fn river_bed_falls_to_the_lower_end_whichever_end_is_first() {
        let (n, world) = (129, 256.0);
        let g = Grid::new(n, world);
        let terrain: Vec<f32> = (0..n * n)
            .map(|k| {
                let p = g.pos(k % n, k / n);
                // Falls towards +x, with bumps.
                20.0 - 0.1 * p[0] + 3.0 * (p[0] * 0.1).sin()
            })
            .collect();
        for pts in [
            vec![[-100.0, 0.0], [100.0, 0.0]],
            vec![[100.0, 0.0], [-100.0, 0.0]],
        ] {
            let mut p = PathSpec::new(PathKind::River, pts);
            p.width = 6.0;
            p.depth = 2.0;
            let set = PathSet {
                paths: vec![p],
                brush: None,
            };
            let mut h = terrain.clone();
            lay(&set, PathKind::River, &mut h, None, n, world).unwrap();
            let mut prev = f32::INFINITY;
            for i in 0..=100 {
                let x = -100.0 + 2.0 * i as f32;
                let k = g.nearest(x, 0.0);
                assert!(h[k] <= prev + 1e-4, "rises at x {x}");
                // Below the ground past its head (4 widths).
                if x > -100.0 + 26.0 {
                    assert!(h[k] <= terrain[k] - 1.0, "not below the ground at {x}");
                }
                prev = h[k];
            }
        }
    }

    #[test]
    fn ridge_adds_and_canal_levels() {
        let (n, world) = (65, 128.0);
        let g = Grid::new(n, world);
        let mut ridge = PathSpec::new(PathKind::Ridge, vec![[0.0, -50.0], [0.0, 50.0]]);
        ridge.height = 12.0;
        let mut canal = PathSpec::new(PathKind::Canal, vec![[-50.0, 20.0], [50.0, 20.0]]);
        canal.level = -4.0;
        let set = PathSet {
            paths: vec![ridge, canal],
            brush: None,
        };
        let l = resolve(None, &set, n, world).unwrap();
        assert_eq!(l.offset[g.nearest(0.0, -30.0)], 12.0);
        assert_eq!(l.offset[g.nearest(30.0, -30.0)], 0.0);
        assert_eq!(l.level[g.nearest(-30.0, 20.0)], -4.0);
        assert_eq!(l.level_weight[g.nearest(-30.0, 20.0)], 1.0);
    }

    #[test]
    fn brush_strokes_stay_on_top_of_a_road() {
        let (n, world) = (65, 128.0);
        let g = Grid::new(n, world);
        let mut brush = SculptLayer::new(n, world).unwrap();
        let k = g.nearest(0.0, 0.0);
        brush.offset[k] = 2.0;
        let set = PathSet {
            paths: vec![PathSpec::new(
                PathKind::Road,
                vec![[-50.0, 0.0], [50.0, 0.0]],
            )],
            brush: Some(Arc::new(brush.clone())),
        };
        let mut without = flat(n, 10.0);
        let no_brush = PathSet {
            brush: None,
            ..set.clone()
        };
        lay(&no_brush, PathKind::Road, &mut without, None, n, world).unwrap();
        let mut with = flat(n, 10.0);
        lay(&set, PathKind::Road, &mut with, None, n, world).unwrap();
        assert!((with[k] - without[k] - 2.0).abs() < 1e-4);
    }

    #[test]
    fn road_cover_and_splat() {
        let (n, world) = (65, 128.0);
        let g = Grid::new(n, world);
        let mut p = PathSpec::new(PathKind::Road, vec![[-50.0, 0.0], [50.0, 0.0]]);
        p.splat_layer = 2;
        let set = PathSet {
            paths: vec![p],
            brush: None,
        };
        let cover = road_cover(&set, n, world).unwrap();
        assert_eq!(cover[g.nearest(0.0, 2.0)], 255);
        assert_eq!(cover[g.nearest(0.0, 30.0)], 0);
        let mut splat = vec![[0u8, 255, 0, 0]; n * n];
        let water = Water::sea_only(&flat(n, 5.0), n);
        paint_roads(&set, &mut splat, &water, n, world);
        assert_eq!(splat[g.nearest(0.0, 0.0)], [0, 0, 255, 0]);
        assert_eq!(splat[g.nearest(0.0, 30.0)], [0, 255, 0, 0]);
        let s = splat[g.nearest(0.0, 6.0)];
        assert_eq!(s.iter().map(|&v| v as u32).sum::<u32>(), 255);
    }

    #[test]
    fn a_road_on_a_user_layer_takes_its_share_from_the_generated_ones() {
        let (n, world) = (65, 128.0);
        let g = Grid::new(n, world);
        let mut cobble = PathSpec::new(PathKind::Road, vec![[-50.0, 0.0], [50.0, 0.0]]);
        cobble.splat_layer = 5;
        let mut sand = PathSpec::new(PathKind::Road, vec![[0.0, -50.0], [0.0, 50.0]]);
        sand.splat_layer = 0;
        let set = PathSet {
            paths: vec![cobble, sand.clone()],
            brush: None,
        };
        let mut splat = vec![[0u8, 200, 55, 0]; n * n];
        let water = Water::sea_only(&flat(n, 5.0), n);
        let upper = paint_roads(&set, &mut splat, &water, n, world).expect("layers 4..7");
        let at = |x: f32, z: f32| {
            let k = g.nearest(x, z);
            let (l, u) = (splat[k], upper[k]);
            [l[0], l[1], l[2], l[3], u[0], u[1], u[2], u[3]]
        };
        assert_eq!(
            at(30.0, 0.0),
            [0, 0, 0, 0, 0, 255, 0, 0],
            "on the cobbled road"
        );
        assert_eq!(at(30.0, 30.0), [0, 200, 55, 0, 0, 0, 0, 0], "off the roads");
        // The sand road, painted after, covers the cobbles where they cross.
        assert_eq!(at(0.0, 0.0), [255, 0, 0, 0, 0, 0, 0, 0], "crossing");
        for x in [5.0f32, 6.0, 7.0, 8.0] {
            let t = at(30.0, x);
            assert_eq!(
                t.iter().map(|&v| v as u32).sum::<u32>(),
                255,
                "shoulder {t:?}"
            );
        }
        assert!(
            at(30.0, 6.0)[5] > 0 && at(30.0, 6.0)[1] > 0,
            "{:?}",
            at(30.0, 6.0)
        );
        // Without a road on layers 4..7 there is no upper map, and layers 0..3 are as before.
        let only = PathSet {
            paths: vec![sand],
            brush: None,
        };
        let mut a = vec![[0u8, 200, 55, 0]; n * n];
        assert!(paint_roads(&only, &mut a, &water, n, world).is_none());
    }

    #[test]
    fn bad_paths_are_errors() {
        let ok = PathSpec::new(PathKind::Road, vec![[0.0, 0.0], [10.0, 0.0]]);
        assert!(ok.validate().is_ok());
        let mut one = ok.clone();
        one.points.truncate(1);
        assert!(one.validate().is_err());
        let mut nan = ok.clone();
        nan.points[1][0] = f32::NAN;
        assert!(nan.validate().is_err());
        let mut w = ok.clone();
        w.width = 0.0;
        assert!(w.validate().is_err());
        let mut g = ok.clone();
        g.max_grade = -1.0;
        assert!(g.validate().is_err());
        let mut s = ok;
        s.splat_layer = 8;
        let set = PathSet {
            paths: vec![s],
            brush: None,
        };
        let e = resolve(None, &set, 9, 16.0).unwrap_err();
        assert!(e.0.contains("splat_layer"), "{e}");
    }
}
