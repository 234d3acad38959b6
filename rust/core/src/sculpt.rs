//! The sculpt layer: hand edits of the terrain, kept as their own data and applied inside the
//! generator, so that erosion, drainage, rivers, lakes, splat and scatter follow them and a new
//! seed, shape or any other parameter keeps them.
//!
//! A [`SculptLayer`] is a square grid in node-local metres (its own resolution and world size,
//! normally the island's) with four planes per sample:
//!
//! * `offset`: metres added to the relief (raise, lower, smooth);
//! * `level`, `level_weight`: a flatten target height (metres) and how much of it (0..1) the
//!   sample takes: `h = lerp(h + offset, level, level_weight)`;
//! * `coast`: a coast override, -1..1: at [`COAST_LAND`] or more the sample is land, at
//!   [`COAST_SEA`] or less sea, whatever the island's outline says.
//!
//! Where the edits enter the pipeline:
//!
//! * the coast override changes the outline ([`apply_coast`], called by
//!   [`crate::shape::shape_mask`]), so the distance to the coast, the beach, the shelf and the
//!   coastal relief follow the sketched coast;
//! * the relief edits ([`apply_relief`]) are added right before the erosion
//!   ([`crate::pipeline::erosion_stage`]), after the base relief, the outline's coast and the
//!   VOLCANIC cone;
//! * samples the user shaped are *held* ([`Held`]): erosion, the lake dams and the river carving
//!   leave their height alone (a flattened area stays level, a raised ridge keeps its height,
//!   water routes around it or pools against it) while everything around erodes and drains as
//!   usual. The hold weight is `max(level_weight, min(1, |offset| / HOLD_OFFSET_M))`.
//!
//! [`stamp`] applies one brush dab to the layer and, for the editor's instant feedback, the
//! same change to the heights the island shows (an approximation the next generation replaces
//! with the real thing).

use crate::heightfield::Heightfield;
use crate::normals::normal_at_sample;
use crate::paint::{disc_rect, falloff, smooth_kernel, Masks, PaintError, Rect};
use std::fmt;

/// Coast override at or above which a sample is land.
pub const COAST_LAND: f32 = 0.5;
/// Coast override at or below which a sample is sea.
pub const COAST_SEA: f32 = -0.5;
/// Offset (metres) from which a raised or lowered sample is fully held against erosion and
/// river carving (smaller offsets are held in proportion).
pub const HOLD_OFFSET_M: f32 = 1.0;
/// Height (metres) the editor preview gives sketched sea until the island regenerates.
pub const PREVIEW_SEA_HEIGHT: f32 = -2.0;
/// Bytes per sample in [`SculptLayer::region`]: offset, level, level weight, coast (f32 LE).
pub const REGION_BYTES: usize = 16;
/// Lowest and highest flatten height accepted, metres.
pub const FLATTEN_RANGE: (f32, f32) = (-1000.0, 10000.0);

const MAGIC: &[u8; 4] = b"ISC1";

/// Invalid sculpt input or data.
#[derive(Clone, Debug, PartialEq)]
pub struct SculptError(pub String);

impl fmt::Display for SculptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SculptError {}

impl From<PaintError> for SculptError {
    fn from(e: PaintError) -> Self {
        SculptError(e.to_string())
    }
}

fn fail<T>(msg: impl Into<String>) -> Result<T, SculptError> {
    Err(SculptError(msg.into()))
}

/// Hand edits of an island (see the module doc).
#[derive(Clone, Debug)]
pub struct SculptLayer {
    resolution: usize,
    world_size: f32,
    /// Metres added to the relief, row-major `z * resolution + x`.
    pub offset: Vec<f32>,
    /// Flatten target height, metres (meaningful where `level_weight > 0`).
    pub level: Vec<f32>,
    /// Flatten weight, 0..1.
    pub level_weight: Vec<f32>,
    /// Coast override, -1..1 (see [`COAST_LAND`], [`COAST_SEA`]).
    pub coast: Vec<f32>,
}

impl PartialEq for SculptLayer {
    fn eq(&self, o: &SculptLayer) -> bool {
        // The same allocation (an `Arc` shared by two parameter sets) needs no comparison.
        std::ptr::eq(self, o)
            || (self.resolution == o.resolution
                && self.world_size.to_bits() == o.world_size.to_bits()
                && bits_eq(&self.offset, &o.offset)
                && bits_eq(&self.level, &o.level)
                && bits_eq(&self.level_weight, &o.level_weight)
                && bits_eq(&self.coast, &o.coast))
    }
}

fn bits_eq(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

impl SculptLayer {
    /// An empty layer of `resolution²` samples over `world_size` metres.
    pub fn new(resolution: usize, world_size: f32) -> Result<SculptLayer, SculptError> {
        if !(2..=16385).contains(&resolution) {
            return fail(format!(
                "sculpt resolution must be 2..16385, got {resolution}"
            ));
        }
        if !(world_size.is_finite() && world_size > 0.0) {
            return fail(format!(
                "sculpt world size must be a positive number of metres, got {world_size}"
            ));
        }
        let n2 = resolution * resolution;
        Ok(SculptLayer {
            resolution,
            world_size,
            offset: vec![0.0; n2],
            level: vec![0.0; n2],
            level_weight: vec![0.0; n2],
            coast: vec![0.0; n2],
        })
    }

    /// Samples per side.
    pub fn resolution(&self) -> usize {
        self.resolution
    }

    /// Edge length of the square it covers, metres (centred on the node's origin).
    pub fn world_size(&self) -> f32 {
        self.world_size
    }

    /// Whether it holds no edit.
    pub fn is_empty(&self) -> bool {
        self.offset.iter().all(|&v| v == 0.0)
            && self.level_weight.iter().all(|&v| v == 0.0)
            && self.coast.iter().all(|&v| v == 0.0)
    }

    /// Whether the layer lies on the grid of an island of `resolution` samples over
    /// `world_size` metres (then it applies sample for sample).
    pub fn fits(&self, resolution: usize, world_size: f32) -> bool {
        self.resolution == resolution && self.world_size.to_bits() == world_size.to_bits()
    }

    fn planes(&self) -> [(&'static str, &Vec<f32>); 4] {
        [
            ("offset", &self.offset),
            ("level", &self.level),
            ("level_weight", &self.level_weight),
            ("coast", &self.coast),
        ]
    }

    /// Check the planes' sizes (cheap).
    pub fn validate_sizes(&self) -> Result<(), SculptError> {
        let n2 = self.resolution * self.resolution;
        for (name, p) in self.planes() {
            if p.len() != n2 {
                return fail(format!("sculpt {name} has {} values, needs {n2}", p.len()));
            }
        }
        Ok(())
    }

    /// Check the planes' sizes and values (data from a file).
    pub fn validate(&self) -> Result<(), SculptError> {
        self.validate_sizes()?;
        for (name, p) in self.planes() {
            if let Some(v) = p.iter().find(|v| !v.is_finite()) {
                return fail(format!("sculpt {name} holds a non-finite value {v}"));
            }
        }
        if let Some(v) = self.level_weight.iter().find(|v| !(0.0..=1.0).contains(*v)) {
            return fail(format!("sculpt level weights must be 0..1, got {v}"));
        }
        if let Some(v) = self.coast.iter().find(|v| !(-1.0..=1.0).contains(*v)) {
            return fail(format!("sculpt coast values must be -1..1, got {v}"));
        }
        Ok(())
    }

    /// The layer on another grid, every edit at the same node-local position (bilinear;
    /// outside this layer's square there is no edit). The same grid gives an exact copy.
    pub fn resample(&self, resolution: usize, world_size: f32) -> SculptLayer {
        if self.fits(resolution, world_size) {
            return self.clone();
        }
        let mut out = SculptLayer::new(resolution, world_size).unwrap_or_else(|_| self.clone());
        if out.resolution != resolution {
            return out;
        }
        let n = resolution;
        let s_out = world_size / (n - 1) as f32;
        let half_out = world_size * 0.5;
        let m = self.resolution;
        let s_in = self.world_size / (m - 1) as f32;
        let half_in = self.world_size * 0.5;
        let last = (m - 1) as f32;
        for z in 0..n {
            let gz = (z as f32 * s_out - half_out + half_in) / s_in;
            for x in 0..n {
                let gx = (x as f32 * s_out - half_out + half_in) / s_in;
                if !(0.0..=last).contains(&gx) || !(0.0..=last).contains(&gz) {
                    continue;
                }
                let (x0, z0) = ((gx as usize).min(m - 2), (gz as usize).min(m - 2));
                let (fx, fz) = (gx - x0 as f32, gz - z0 as f32);
                let i = z * n + x;
                let bl = |p: &[f32]| {
                    let a = p[z0 * m + x0] + fx * (p[z0 * m + x0 + 1] - p[z0 * m + x0]);
                    let b = p[(z0 + 1) * m + x0]
                        + fx * (p[(z0 + 1) * m + x0 + 1] - p[(z0 + 1) * m + x0]);
                    a + fz * (b - a)
                };
                out.offset[i] = bl(&self.offset);
                out.level_weight[i] = bl(&self.level_weight).clamp(0.0, 1.0);
                out.coast[i] = bl(&self.coast).clamp(-1.0, 1.0);
                // The level where the flatten weights are: weighted by them, so that a flat
                // area's edge does not pull its level towards the unset zeros.
                let (w00, w10) = (
                    self.level_weight[z0 * m + x0],
                    self.level_weight[z0 * m + x0 + 1],
                );
                let (w01, w11) = (
                    self.level_weight[(z0 + 1) * m + x0],
                    self.level_weight[(z0 + 1) * m + x0 + 1],
                );
                let (k00, k10, k01, k11) = (
                    w00 * (1.0 - fx) * (1.0 - fz),
                    w10 * fx * (1.0 - fz),
                    w01 * (1.0 - fx) * fz,
                    w11 * fx * fz,
                );
                let ws = k00 + k10 + k01 + k11;
                if ws > 0.0 {
                    out.level[i] = (self.level[z0 * m + x0] * k00
                        + self.level[z0 * m + x0 + 1] * k10
                        + self.level[(z0 + 1) * m + x0] * k01
                        + self.level[(z0 + 1) * m + x0 + 1] * k11)
                        / ws;
                }
            }
        }
        out
    }

    /// The samples of `r` as bytes ([`REGION_BYTES`] per sample, row by row): the undo data of
    /// a stroke.
    pub fn region(&self, r: Rect) -> Result<Vec<u8>, SculptError> {
        self.check_rect(r)?;
        let n = self.resolution;
        let mut out = Vec::with_capacity(r.w * r.h * REGION_BYTES);
        for z in r.z0..r.z0 + r.h {
            for x in r.x0..r.x0 + r.w {
                let i = z * n + x;
                for v in [
                    self.offset[i],
                    self.level[i],
                    self.level_weight[i],
                    self.coast[i],
                ] {
                    out.extend_from_slice(&v.to_le_bytes());
                }
            }
        }
        Ok(out)
    }

    /// Put back the samples of `r` from [`SculptLayer::region`]'s bytes (bit-exact). Checks
    /// everything before changing anything.
    pub fn set_region(&mut self, r: Rect, bytes: &[u8]) -> Result<(), SculptError> {
        self.check_rect(r)?;
        if bytes.len() != r.w * r.h * REGION_BYTES {
            return fail(format!(
                "sculpt region {}x{} needs {} bytes, got {}",
                r.w,
                r.h,
                r.w * r.h * REGION_BYTES,
                bytes.len()
            ));
        }
        let vals: Vec<f32> = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        for q in vals.chunks_exact(4) {
            if q.iter().any(|v| !v.is_finite())
                || !(0.0..=1.0).contains(&q[2])
                || !(-1.0..=1.0).contains(&q[3])
            {
                return fail("sculpt region holds invalid values");
            }
        }
        let n = self.resolution;
        let mut k = 0;
        for z in r.z0..r.z0 + r.h {
            for x in r.x0..r.x0 + r.w {
                let i = z * n + x;
                self.offset[i] = vals[k];
                self.level[i] = vals[k + 1];
                self.level_weight[i] = vals[k + 2];
                self.coast[i] = vals[k + 3];
                k += 4;
            }
        }
        Ok(())
    }

    fn check_rect(&self, r: Rect) -> Result<(), SculptError> {
        let n = self.resolution;
        if r.x0 + r.w > n || r.z0 + r.h > n {
            return fail(format!(
                "sculpt region {}x{} at ({}, {}) is outside the {n}² layer",
                r.w, r.h, r.x0, r.z0
            ));
        }
        Ok(())
    }

    /// Compact bytes for saving: a header, then each plane with its zero runs collapsed
    /// (bit-exact round trip through [`SculptLayer::decode`]).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(self.resolution as u32).to_le_bytes());
        out.extend_from_slice(&self.world_size.to_le_bytes());
        for p in [&self.offset, &self.level, &self.level_weight, &self.coast] {
            let mut i = 0;
            while i < p.len() {
                let z0 = i;
                while i < p.len() && p[i].to_bits() == 0 {
                    i += 1;
                }
                let l0 = i;
                while i < p.len() && p[i].to_bits() != 0 {
                    i += 1;
                }
                out.extend_from_slice(&((l0 - z0) as u32).to_le_bytes());
                out.extend_from_slice(&((i - l0) as u32).to_le_bytes());
                for v in &p[l0..i] {
                    out.extend_from_slice(&v.to_le_bytes());
                }
            }
        }
        out
    }

    /// Decode [`SculptLayer::encode`]'s bytes; corrupt data is an error.
    pub fn decode(bytes: &[u8]) -> Result<SculptLayer, SculptError> {
        let mut r = Reader { b: bytes, at: 0 };
        if r.take(4)? != MAGIC {
            return fail("sculpt data: not sculpt data (bad header)");
        }
        let n = r.u32()? as usize;
        let world = f32::from_bits(r.u32()?);
        let mut l = SculptLayer::new(n, world)?;
        let n2 = n * n;
        for p in [
            &mut l.offset,
            &mut l.level,
            &mut l.level_weight,
            &mut l.coast,
        ] {
            let mut i = 0;
            while i < n2 {
                let zeros = r.u32()? as usize;
                let lits = r.u32()? as usize;
                if zeros + lits == 0 || i + zeros + lits > n2 {
                    return fail("sculpt data: corrupt run");
                }
                i += zeros;
                for v in &mut p[i..i + lits] {
                    *v = f32::from_bits(r.u32()?);
                }
                i += lits;
            }
        }
        if r.at != bytes.len() {
            return fail("sculpt data: trailing bytes");
        }
        l.validate()?;
        Ok(l)
    }
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, k: usize) -> Result<&[u8], SculptError> {
        let s = self
            .b
            .get(self.at..self.at + k)
            .ok_or_else(|| SculptError("sculpt data: truncated".into()))?;
        self.at += k;
        Ok(s)
    }

    fn u32(&mut self) -> Result<u32, SculptError> {
        let s = self.take(4)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }
}

/// Edge of the tiles [`StrokeBefore`] copies, samples.
pub const STROKE_TILE: usize = 64;

/// The sculpt layer as it was before a stroke, for the stroke's undo step, kept lazily: each
/// [`STROKE_TILE`]² tile a dab is about to change is copied at its first touch
/// ([`StrokeBefore::keep`]), so a stroke costs memory and time in proportion to the area it
/// touches, not to the layer (1 GB at 8193²).
#[derive(Clone, Debug)]
pub struct StrokeBefore {
    state: BeforeState,
}

#[derive(Clone, Debug)]
enum BeforeState {
    /// No layer before the stroke: every sample was zero.
    Absent { grid: (usize, u32) },
    /// A layer on the stroke's grid: the tiles copied so far.
    Tiles {
        grid: (usize, u32),
        tiles: std::collections::HashMap<(usize, usize), (Rect, Vec<u8>)>,
    },
    /// A layer on another grid (the first dab moves it): all of it.
    Whole(SculptLayer),
    /// The layer moved to another grid in the middle of the stroke.
    Lost,
}

impl StrokeBefore {
    /// Start a stroke on an island of `n²` samples over `world` metres, with its layer now.
    pub fn start(layer: Option<&SculptLayer>, n: usize, world: f32) -> StrokeBefore {
        let grid = (n, world.to_bits());
        let state = match layer {
            None => BeforeState::Absent { grid },
            Some(l) if l.fits(n, world) => BeforeState::Tiles {
                grid,
                tiles: Default::default(),
            },
            Some(l) => BeforeState::Whole(l.clone()),
        };
        StrokeBefore { state }
    }

    /// Copy the tiles of `r` not copied yet from `layer`, before a dab changes them.
    pub fn keep(&mut self, layer: &SculptLayer, r: Rect) {
        let BeforeState::Tiles { grid, tiles } = &mut self.state else {
            if let BeforeState::Absent { grid } = self.state {
                if (layer.resolution, layer.world_size.to_bits()) != grid {
                    self.state = BeforeState::Lost;
                }
            }
            return;
        };
        if (layer.resolution, layer.world_size.to_bits()) != *grid {
            self.state = BeforeState::Lost;
            return;
        }
        if r.is_empty() {
            return;
        }
        let n = layer.resolution;
        let t = STROKE_TILE;
        for tz in r.z0 / t..=(r.z0 + r.h - 1) / t {
            for tx in r.x0 / t..=(r.x0 + r.w - 1) / t {
                tiles.entry((tx, tz)).or_insert_with(|| {
                    let tr = Rect {
                        x0: tx * t,
                        z0: tz * t,
                        w: t.min(n - tx * t),
                        h: t.min(n - tz * t),
                    };
                    (tr, layer.region(tr).expect("a tile inside the layer"))
                });
            }
        }
    }

    /// The undo data of the stroke for the samples `r` of the layer `now` (as it is after the
    /// stroke): the rectangle described (the whole layer when the first dab moved it to the
    /// island's grid) and its bytes before the stroke ([`SculptLayer::region`]'s format).
    pub fn region(&self, now: &SculptLayer, r: Rect) -> Result<(Rect, Vec<u8>), SculptError> {
        let n = now.resolution;
        let on_grid = |grid: (usize, u32)| grid == (n, now.world_size.to_bits());
        match &self.state {
            BeforeState::Absent { grid } if on_grid(*grid) => {
                now.check_rect(r)?;
                Ok((r, vec![0u8; r.w * r.h * REGION_BYTES]))
            }
            BeforeState::Whole(b) => {
                let full = Rect::full(n);
                Ok((full, b.resample(n, now.world_size).region(full)?))
            }
            BeforeState::Tiles { grid, tiles } if on_grid(*grid) => {
                let mut bytes = now.region(r)?;
                let row = r.w * REGION_BYTES;
                for (tr, tb) in tiles.values() {
                    let (x0, x1) = (tr.x0.max(r.x0), (tr.x0 + tr.w).min(r.x0 + r.w));
                    let (z0, z1) = (tr.z0.max(r.z0), (tr.z0 + tr.h).min(r.z0 + r.h));
                    if x0 >= x1 || z0 >= z1 {
                        continue;
                    }
                    let len = (x1 - x0) * REGION_BYTES;
                    for z in z0..z1 {
                        let from = ((z - tr.z0) * tr.w + (x0 - tr.x0)) * REGION_BYTES;
                        let to = (z - r.z0) * row + (x0 - r.x0) * REGION_BYTES;
                        bytes[to..to + len].copy_from_slice(&tb[from..from + len]);
                    }
                }
                Ok((r, bytes))
            }
            _ => fail(
                "the island's resolution or world size changed during the stroke: it has no \
                 undo step (its edits are kept)",
            ),
        }
    }
}

/// What a sculpt dab does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SculptMode {
    /// Add `strength` metres at the centre (times the falloff and masks).
    Raise,
    /// Remove `strength` metres at the centre.
    Lower,
    /// Blend the heights towards their neighbourhood average (`strength` 0..1).
    Smooth,
    /// Blend towards `flatten_height` (`strength` 0..1 per dab).
    Flatten,
    /// Make the sea under the brush land (`strength` 0..1 per dab of the coast override).
    SketchLand,
    /// Make the land under the brush sea.
    SketchSea,
}

/// A sculpt brush: mode, size and masks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SculptBrush {
    /// What a dab does.
    pub mode: SculptMode,
    /// Radius, metres, > 0.
    pub radius: f32,
    /// Metres per dab at the centre for raise/lower (0..1000); 0..1 per dab for the others.
    pub strength: f32,
    /// Falloff: 1 = hard disc, 0 = smooth from the centre.
    pub hardness: f32,
    /// Target height of [`SculptMode::Flatten`], metres, within [`FLATTEN_RANGE`].
    pub flatten_height: f32,
    /// Height and slope masks, evaluated on the terrain the island shows.
    pub masks: Masks,
    /// Height the preview gives sketched land (the island's beach height), metres.
    pub preview_land_height: f32,
}

impl SculptBrush {
    /// Check the values (what the GDScript API reports as an error).
    pub fn validate(&self) -> Result<(), SculptError> {
        if !(self.radius.is_finite() && self.radius > 0.0) {
            return fail(format!(
                "radius must be a positive number of metres, got {}",
                self.radius
            ));
        }
        let max = match self.mode {
            SculptMode::Raise | SculptMode::Lower => 1000.0,
            _ => 1.0,
        };
        if !(self.strength.is_finite() && (0.0..=max).contains(&self.strength)) {
            return fail(format!(
                "strength must be 0..{max} in this mode, got {}",
                self.strength
            ));
        }
        if !self.hardness.is_finite() {
            return fail(format!("hardness must be 0..1, got {}", self.hardness));
        }
        if self.mode == SculptMode::Flatten
            && !(FLATTEN_RANGE.0..=FLATTEN_RANGE.1).contains(&self.flatten_height)
        {
            return fail(format!(
                "flatten_height must be {}..{} m, got {}",
                FLATTEN_RANGE.0, FLATTEN_RANGE.1, self.flatten_height
            ));
        }
        self.masks.validate()?;
        Ok(())
    }
}

/// One dab of `brush` centred on node-local `(x, z)` metres: changes `layer` (which must lie on
/// `shown`'s grid, see [`SculptLayer::fits`]) and, as a preview, the heights of `shown` (the
/// island as displayed; its normals are refreshed around the change). The masks read `shown`
/// before the dab. Returns the rectangle of samples considered (empty when the dab misses the
/// map or has no strength); the normals changed one sample further.
pub fn stamp(
    layer: &mut SculptLayer,
    shown: &mut Heightfield,
    brush: &SculptBrush,
    center: [f32; 2],
) -> Result<Rect, SculptError> {
    brush.validate()?;
    if !(center[0].is_finite() && center[1].is_finite()) {
        return fail(format!(
            "the brush position must be finite, got ({}, {})",
            center[0], center[1]
        ));
    }
    let n = shown.resolution;
    if !layer.fits(n, shown.world_size) {
        return fail("the sculpt layer is not on the island's grid");
    }
    let rect = disc_rect(shown, center, brush.radius);
    if rect.is_empty() || brush.strength <= 0.0 {
        return Ok(Rect::default());
    }
    let s = shown.spacing();
    let half = shown.world_size * 0.5;
    let inv_r = 1.0 / brush.radius;
    // Smooth targets: box averages of the shown heights around each sample of the rect.
    let avg = (brush.mode == SculptMode::Smooth)
        .then(|| box_average(&shown.heights, n, rect, smooth_kernel(brush.radius / s)));
    // Weights first (the masks read the terrain before the dab), then the edits.
    let mut dabs = Vec::with_capacity(rect.w * rect.h);
    for z in rect.z0..rect.z0 + rect.h {
        let dz = z as f32 * s - half - center[1];
        for x in rect.x0..rect.x0 + rect.w {
            let dx = x as f32 * s - half - center[0];
            let t = (dx * dx + dz * dz).sqrt() * inv_r;
            let fo = falloff(t, brush.hardness);
            if fo <= 0.0 {
                continue;
            }
            let i = z * n + x;
            let slope = crate::normals::slope_degrees(shown.normals[i]);
            let a = fo * brush.masks.weight(shown.heights[i], slope);
            if a > 0.0 {
                dabs.push((x, z, a));
            }
        }
    }
    for &(x, z, a) in &dabs {
        let i = z * n + x;
        let h = shown.heights[i];
        match brush.mode {
            SculptMode::Raise | SculptMode::Lower => {
                let d = brush.strength
                    * a
                    * if brush.mode == SculptMode::Raise {
                        1.0
                    } else {
                        -1.0
                    };
                layer.offset[i] += d;
                shown.heights[i] = h + d;
            }
            SculptMode::Smooth => {
                let k = brush.strength * a;
                let tgt =
                    avg.as_ref().expect("smooth targets")[(z - rect.z0) * rect.w + (x - rect.x0)];
                let d = (tgt - h) * k;
                layer.offset[i] += d;
                shown.heights[i] = h + d;
            }
            SculptMode::Flatten => {
                let k = brush.strength * a;
                let w = layer.level_weight[i];
                let w_new = w + (1.0 - w) * k;
                if w_new > 0.0 {
                    layer.level[i] =
                        (layer.level[i] * w * (1.0 - k) + brush.flatten_height * k) / w_new;
                }
                layer.level_weight[i] = w_new.min(1.0);
                shown.heights[i] = h + (brush.flatten_height - h) * k;
            }
            SculptMode::SketchLand => {
                let c = (layer.coast[i] + brush.strength * a).min(1.0);
                layer.coast[i] = c;
                if c >= COAST_LAND {
                    shown.heights[i] = h.max(brush.preview_land_height);
                }
            }
            SculptMode::SketchSea => {
                let k = brush.strength * a;
                let c = (layer.coast[i] - k).max(-1.0);
                layer.coast[i] = c;
                // Sea wins over the other edits under the brush.
                layer.level_weight[i] *= 1.0 - k;
                if layer.offset[i] > 0.0 {
                    layer.offset[i] *= 1.0 - k;
                }
                if c <= COAST_SEA {
                    shown.heights[i] = h.min(PREVIEW_SEA_HEIGHT);
                }
            }
        }
    }
    refresh_normals(shown, grow(rect, 1, n));
    Ok(rect)
}

/// `r` grown by `k` samples on every side, within the `n²` map.
pub fn grow(r: Rect, k: usize, n: usize) -> Rect {
    if r.is_empty() {
        return r;
    }
    let x0 = r.x0.saturating_sub(k);
    let z0 = r.z0.saturating_sub(k);
    let x1 = (r.x0 + r.w + k).min(n);
    let z1 = (r.z0 + r.h + k).min(n);
    Rect {
        x0,
        z0,
        w: x1 - x0,
        h: z1 - z0,
    }
}

/// Recompute the normals of `field` in `r` from its heights (the values
/// [`crate::normals::compute_normals`] gives there).
pub fn refresh_normals(field: &mut Heightfield, r: Rect) {
    let n = field.resolution;
    let s = field.spacing();
    for z in r.z0..(r.z0 + r.h).min(n) {
        for x in r.x0..(r.x0 + r.w).min(n) {
            field.normals[z * n + x] = normal_at_sample(&field.heights, n, s, x, z);
        }
    }
}

/// Mean of `h` over the `(2k+1)²` box around each sample of `r` (clipped to the map).
fn box_average(h: &[f32], n: usize, r: Rect, k: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(r.w * r.h);
    for z in r.z0..r.z0 + r.h {
        let (za, zb) = (z.saturating_sub(k), (z + k).min(n - 1));
        for x in r.x0..r.x0 + r.w {
            let (xa, xb) = (x.saturating_sub(k), (x + k).min(n - 1));
            let mut sum = 0.0f64;
            for zz in za..=zb {
                for xx in xa..=xb {
                    sum += h[zz * n + xx] as f64;
                }
            }
            out.push((sum / ((zb - za + 1) * (xb - xa + 1)) as f64) as f32);
        }
    }
    out
}

/// The layer on the island's grid: borrowed when it already is, else resampled.
fn on_grid(layer: &SculptLayer, n: usize, world: f32) -> std::borrow::Cow<'_, SculptLayer> {
    if layer.fits(n, world) {
        std::borrow::Cow::Borrowed(layer)
    } else {
        std::borrow::Cow::Owned(layer.resample(n, world))
    }
}

/// The coast override on an island outline (`mask`: 1 land, 0 sea, `n²` samples over `world`
/// metres): land where the override reaches [`COAST_LAND`] (never in the map's sea border,
/// `margin` metres), sea where it reaches [`COAST_SEA`].
pub fn apply_coast(layer: &SculptLayer, mask: &mut [u8], n: usize, world: f32, margin: f32) {
    let l = on_grid(layer, n, world);
    let spacing = world / (n - 1) as f32;
    let half = world * 0.5;
    for (i, m) in mask.iter_mut().enumerate().take(n * n) {
        let c = l.coast[i];
        if c >= COAST_LAND {
            let (px, pz) = ((i % n) as f32 * spacing, (i / n) as f32 * spacing);
            let border = (half - (px - half).abs()).min(half - (pz - half).abs());
            if border > margin {
                *m = 1;
            }
        } else if c <= COAST_SEA {
            *m = 0;
        }
    }
}

/// How much of a sketch-land disc falls in the map's sea border, where [`apply_coast`] never
/// makes land: the distance in metres by which the disc of `radius` around the node-local
/// `center` (origin in the middle of a `world`-metre map) reaches past the inner edge of the
/// `margin`-wide border ring; 0 when the disc lies wholly inside the land area. A dab whose
/// centre itself is in the ring gives more than `radius`.
pub fn sea_border_overlap(world: f32, margin: f32, center: [f32; 2], radius: f32) -> f32 {
    let inner = world * 0.5 - margin;
    let reach = center[0].abs().max(center[1].abs()) + radius.max(0.0);
    (reach - inner).max(0.0)
}

/// The relief edits on the heights of an island of `n²` samples over `world` metres:
/// `h = lerp(h + offset, level, level_weight)`.
pub fn apply_relief(layer: &SculptLayer, heights: &mut [f32], n: usize, world: f32) {
    let l = on_grid(layer, n, world);
    for (i, h) in heights.iter_mut().enumerate().take(n * n) {
        let (o, w) = (l.offset[i], l.level_weight[i]);
        if o == 0.0 && w == 0.0 {
            // Unedited samples keep their exact bits (even a -0.0).
            continue;
        }
        let v = *h + o;
        *h = if w > 0.0 { v + (l.level[i] - v) * w } else { v };
    }
}

/// Jacobi sweeps that smooth the filled-in erosion change over held samples (after each held
/// area starts from the mean change around it).
pub const FILL_SWEEPS: usize = 64;

/// After the erosion: the samples the user shaped get back what the stroke made. A flattened
/// sample (level weight) keeps its height from before the erosion; a raised or lowered one
/// (offset hold) keeps its shape but follows the erosion of the land around it: its erosion
/// change is replaced by the change around the held area (each connected held area starts from
/// the mean change on its rim, then [`FILL_SWEEPS`] Jacobi sweeps blend it smoothly), so a
/// bump or a crater keeps its height relative to the eroded land, and no gully or deposit
/// appears on it. Partial weights blend. `before` is the heights before the erosion, `heights`
/// after it (changed in place), `n²` samples over `world` metres.
pub fn hold_erosion(
    layer: &SculptLayer,
    before: &[f32],
    heights: &mut [f32],
    n: usize,
    world: f32,
) {
    let l = on_grid(layer, n, world);
    let n2 = n * n;
    let w_off: Vec<f32> = l.offset[..n2]
        .iter()
        .map(|o| (o.abs() / HOLD_OFFSET_M).min(1.0))
        .collect();
    let held = |i: usize| w_off[i] > 0.0 || l.level_weight[i] > 0.0;
    let delta: Vec<f32> = (0..n2).map(|i| heights[i] - before[i]).collect();
    // Held areas (4-connected), each started at the mean change on its rim.
    let mut fill = vec![0.0f32; n2];
    let mut comp = vec![u32::MAX; n2];
    let mut members: Vec<usize> = Vec::new();
    let neighbours = |i: usize| {
        let (x, z) = (i % n, i / n);
        [
            (x > 0).then(|| i - 1),
            (x + 1 < n).then(|| i + 1),
            (z > 0).then(|| i - n),
            (z + 1 < n).then(|| i + n),
        ]
    };
    let mut id = 0u32;
    for s in 0..n2 {
        if comp[s] != u32::MAX || !held(s) {
            continue;
        }
        let start = members.len();
        members.push(s);
        comp[s] = id;
        let (mut sum, mut count) = (0.0f64, 0usize);
        let mut k = start;
        while k < members.len() {
            let i = members[k];
            k += 1;
            for j in neighbours(i).into_iter().flatten() {
                if held(j) {
                    if comp[j] == u32::MAX {
                        comp[j] = id;
                        members.push(j);
                    }
                } else {
                    sum += delta[j] as f64;
                    count += 1;
                }
            }
        }
        let mean = if count > 0 {
            (sum / count as f64) as f32
        } else {
            0.0
        };
        for &i in &members[start..] {
            fill[i] = mean;
        }
        id += 1;
    }
    if members.is_empty() {
        return;
    }
    let mut next = fill.clone();
    for _ in 0..FILL_SWEEPS {
        for &i in &members {
            let (mut sum, mut count) = (0.0f32, 0.0f32);
            for j in neighbours(i).into_iter().flatten() {
                sum += if held(j) { fill[j] } else { delta[j] };
                count += 1.0;
            }
            next[i] = sum / count;
        }
        for &i in &members {
            fill[i] = next[i];
        }
    }
    for &i in &members {
        let d = delta[i] + (fill[i] - delta[i]) * w_off[i];
        let h = before[i] + d;
        let w = l.level_weight[i];
        heights[i] = if w >= 1.0 {
            before[i]
        } else {
            h + (before[i] - h) * w
        };
    }
}

/// Heights of the samples the user shaped, taken before a stage that would change them
/// ([`Held::capture`]) and put back after it ([`Held::restore`]) in proportion to their hold
/// weight (see the module doc).
#[derive(Clone, Debug, Default)]
pub struct Held {
    idx: Vec<u32>,
    weight: Vec<f32>,
    height: Vec<f32>,
}

impl Held {
    /// The held samples of `layer` on an island of `n²` samples over `world` metres, with their
    /// heights in `heights` now.
    pub fn capture(layer: &SculptLayer, heights: &[f32], n: usize, world: f32) -> Held {
        let l = on_grid(layer, n, world);
        let mut h = Held::default();
        for (i, &hi) in heights.iter().enumerate().take(n * n) {
            let w = l.level_weight[i].max((l.offset[i].abs() / HOLD_OFFSET_M).min(1.0));
            if w > 0.0 {
                h.idx.push(i as u32);
                h.weight.push(w);
                h.height.push(hi);
            }
        }
        h
    }

    /// Number of held samples.
    pub fn len(&self) -> usize {
        self.idx.len()
    }

    /// Whether no sample is held.
    pub fn is_empty(&self) -> bool {
        self.idx.is_empty()
    }

    /// Put the captured heights back, in proportion to each sample's hold weight.
    pub fn restore(&self, heights: &mut [f32]) {
        for ((&i, &w), &before) in self.idx.iter().zip(&self.weight).zip(&self.height) {
            let h = &mut heights[i as usize];
            *h = if w >= 1.0 {
                before
            } else {
                *h + (before - *h) * w
            };
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn sea_border_overlap_matches_where_apply_coast_makes_no_land() {
        // 65 samples over 256 m (4 m spacing), 20 m border: a sketched disc makes land only
        // where it stays inside the inner square, and the overlap says how far it reaches out.
        let (n, world, margin) = (65usize, 256.0f32, 20.0f32);
        assert_eq!(
            super::sea_border_overlap(world, margin, [0.0, 0.0], 50.0),
            0.0
        );
        assert_eq!(
            super::sea_border_overlap(world, margin, [100.0, 0.0], 8.0),
            0.0
        );
        assert_eq!(
            super::sea_border_overlap(world, margin, [100.0, -10.0], 10.0),
            2.0
        );
        assert_eq!(
            super::sea_border_overlap(world, margin, [0.0, -120.0], 5.0),
            17.0
        );
        for (cx, r, land) in [(90.0f32, 10.0f32, true), (115.0, 6.0, false)] {
            let mut layer = super::SculptLayer::new(n, world).unwrap();
            let spacing = world / (n - 1) as f32;
            for i in 0..n * n {
                let (x, z) = (
                    (i % n) as f32 * spacing - 128.0,
                    (i / n) as f32 * spacing - 128.0,
                );
                if (x - cx).powi(2) + z * z <= r * r {
                    layer.coast[i] = super::COAST_LAND;
                }
            }
            let mut mask = vec![0u8; n * n];
            super::apply_coast(&layer, &mut mask, n, world, margin);
            let made = mask.iter().filter(|&&m| m == 1).count();
            let overlap = super::sea_border_overlap(world, margin, [cx, 0.0], r);
            assert_eq!(made > 0, land, "disc at {cx} m: land made {made}");
            assert_eq!(
                overlap > r,
                !land,
                "centre in the ring iff no land: {overlap}"
            );
        }
    }
    use super::*;

    fn flat_field(n: usize, world: f32, h: f32) -> Heightfield {
        let mut f = Heightfield::new(n, world, vec![h; n * n]);
        f.normals = vec![[0.0, 1.0, 0.0]; n * n];
        f
    }

    fn brush(mode: SculptMode, strength: f32) -> SculptBrush {
        SculptBrush {
            mode,
            radius: 10.0,
            strength,
            hardness: 0.5,
            flatten_height: 7.0,
            masks: Masks::default(),
            preview_land_height: 2.5,
        }
    }

    #[test]
    fn raise_changes_only_the_disc_and_matches_the_preview() {
        let (n, w) = (65, 64.0);
        let mut l = SculptLayer::new(n, w).unwrap();
        let mut f = flat_field(n, w, 5.0);
        let r = stamp(&mut l, &mut f, &brush(SculptMode::Raise, 3.0), [0.0, 0.0]).unwrap();
        assert!(!r.is_empty());
        let c = 32 * n + 32;
        assert_eq!(l.offset[c], 3.0);
        assert_eq!(f.heights[c], 8.0);
        for z in 0..n {
            for x in 0..n {
                let (dx, dz) = (x as f32 - 32.0, z as f32 - 32.0);
                let i = z * n + x;
                if (dx * dx + dz * dz).sqrt() > 10.0 {
                    assert_eq!(l.offset[i], 0.0, "outside the disc at {x},{z}");
                    assert_eq!(f.heights[i], 5.0);
                } else {
                    assert_eq!(f.heights[i], 5.0 + l.offset[i]);
                }
            }
        }
        let mut h = vec![5.0; n * n];
        apply_relief(&l, &mut h, n, w);
        assert_eq!(h, f.heights);
    }

    #[test]
    fn flatten_converges_to_the_level_and_is_held() {
        let (n, w) = (65, 64.0);
        let mut l = SculptLayer::new(n, w).unwrap();
        let mut f = flat_field(n, w, 20.0);
        let b = SculptBrush {
            hardness: 1.0,
            strength: 1.0,
            ..brush(SculptMode::Flatten, 1.0)
        };
        stamp(&mut l, &mut f, &b, [0.0, 0.0]).unwrap();
        let c = 32 * n + 32;
        assert_eq!(l.level_weight[c], 1.0);
        let mut h = vec![20.0; n * n];
        apply_relief(&l, &mut h, n, w);
        assert_eq!(h[c], 7.0);
        let held = Held::capture(&l, &h, n, w);
        let mut after = h.clone();
        after.iter_mut().for_each(|v| *v -= 3.0);
        held.restore(&mut after);
        assert_eq!(after[c], 7.0);
        assert_eq!(after[0], 17.0);
    }

    #[test]
    fn masks_limit_sculpting() {
        let (n, w) = (65, 64.0);
        let mut l = SculptLayer::new(n, w).unwrap();
        let mut f = flat_field(n, w, 5.0);
        let mut b = brush(SculptMode::Raise, 1.0);
        b.masks.min_height = 10.0;
        let r = stamp(&mut l, &mut f, &b, [0.0, 0.0]).unwrap();
        assert!(!r.is_empty());
        assert!(l.is_empty(), "the height mask blocks the whole dab");
    }

    #[test]
    fn bad_input_is_an_error_and_changes_nothing() {
        let (n, w) = (33, 32.0);
        let mut l = SculptLayer::new(n, w).unwrap();
        let mut f = flat_field(n, w, 5.0);
        let before = f.heights.clone();
        assert!(stamp(
            &mut l,
            &mut f,
            &brush(SculptMode::Raise, 1.0),
            [f32::NAN, 0.0]
        )
        .is_err());
        let mut b = brush(SculptMode::Raise, 1.0);
        b.radius = 0.0;
        assert!(stamp(&mut l, &mut f, &b, [0.0, 0.0]).is_err());
        b.radius = -3.0;
        assert!(stamp(&mut l, &mut f, &b, [0.0, 0.0]).is_err());
        let mut b = brush(SculptMode::Flatten, 1.0);
        b.flatten_height = 1.0e6;
        assert!(stamp(&mut l, &mut f, &b, [0.0, 0.0]).is_err());
        b.flatten_height = f32::NAN;
        assert!(stamp(&mut l, &mut f, &b, [0.0, 0.0]).is_err());
        assert!(l.is_empty());
        assert_eq!(f.heights, before);
        let mut other = SculptLayer::new(65, w).unwrap();
        assert!(stamp(
            &mut other,
            &mut f,
            &brush(SculptMode::Raise, 1.0),
            [0.0, 0.0]
        )
        .is_err());
    }

    #[test]
    fn a_strokes_undo_data_is_the_layer_before_it() {
        let (n, w) = (129, 128.0);
        let mut l = SculptLayer::new(n, w).unwrap();
        let mut f = flat_field(n, w, 5.0);
        stamp(
            &mut l,
            &mut f,
            &brush(SculptMode::Raise, 2.0),
            [-20.0, 10.0],
        )
        .unwrap();
        let before = l.clone();
        let mut sb = StrokeBefore::start(Some(&l), n, w);
        let b = brush(SculptMode::Flatten, 1.0);
        let mut touched = Rect::default();
        for c in [[-30.0f32, 0.0f32], [0.0, 5.0], [40.0, 30.0]] {
            let r = disc_rect(&f, c, b.radius);
            sb.keep(&l, r);
            touched = touched.union(&stamp(&mut l, &mut f, &b, c).unwrap());
        }
        let (r, bytes) = sb.region(&l, touched).unwrap();
        assert_eq!(r, touched);
        assert_eq!(bytes, before.region(touched).unwrap());
        // Undo with it: the layer before the stroke, bit for bit.
        let mut undone = l.clone();
        undone.set_region(r, &bytes).unwrap();
        assert_eq!(undone, before);
        // No layer before: zeros.
        let sb = StrokeBefore::start(None, n, w);
        let (_, z) = sb.region(&l, touched).unwrap();
        assert!(z.iter().all(|&v| v == 0));
        // A layer on another grid: the whole layer, resampled.
        let coarse = before.resample(65, w);
        let sb = StrokeBefore::start(Some(&coarse), n, w);
        let (r, _) = sb.region(&l, touched).unwrap();
        assert_eq!((r.w, r.h), (n, n));
        // The grid changes mid-stroke: an error, not wrong undo data.
        let mut sb = StrokeBefore::start(Some(&before), n, w);
        let moved = before.resample(65, w);
        sb.keep(&moved, touched);
        assert!(sb.region(&moved, touched).is_err());
    }

    #[test]
    fn encode_region_and_resample_round_trip() {
        let (n, w) = (65, 64.0);
        let mut l = SculptLayer::new(n, w).unwrap();
        let mut f = flat_field(n, w, 5.0);
        stamp(&mut l, &mut f, &brush(SculptMode::Raise, 2.5), [-10.0, 4.0]).unwrap();
        stamp(
            &mut l,
            &mut f,
            &brush(SculptMode::Flatten, 0.7),
            [10.0, -4.0],
        )
        .unwrap();
        stamp(
            &mut l,
            &mut f,
            &brush(SculptMode::SketchSea, 0.9),
            [0.0, 20.0],
        )
        .unwrap();
        let d = SculptLayer::decode(&l.encode()).unwrap();
        assert_eq!(d, l);
        assert!(SculptLayer::decode(&l.encode()[..20]).is_err());
        assert!(SculptLayer::decode(b"nope").is_err());
        let r = Rect {
            x0: 3,
            z0: 5,
            w: 40,
            h: 30,
        };
        let bytes = l.region(r).unwrap();
        let mut e = SculptLayer::new(n, w).unwrap();
        e.set_region(r, &bytes).unwrap();
        assert_eq!(e.region(r).unwrap(), bytes);
        assert!(e.set_region(r, &bytes[1..]).is_err());
        // Twice the resolution over the same square: the edits stay where they were.
        let fine = l.resample(129, w);
        let (x, z) = (-10.0f32, 4.0f32);
        let at = |l: &SculptLayer, x: f32, z: f32| {
            let m = l.resolution();
            let s = l.world_size() / (m - 1) as f32;
            let ix = ((x + l.world_size() / 2.0) / s).round() as usize;
            let iz = ((z + l.world_size() / 2.0) / s).round() as usize;
            l.offset[iz * m + ix]
        };
        assert_eq!(at(&fine, x, z), at(&l, x, z));
        // A larger world: the same metres, the outside unedited.
        let wide = l.resample(129, 128.0);
        assert_eq!(at(&wide, x, z), at(&l, x, z));
        assert_eq!(wide.offset[0], 0.0);
    }
}
