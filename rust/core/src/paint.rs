//! Splat painting: eight weight layers (the generator's four auto-splat layers plus four empty
//! ones) with user paint kept as an override on top of the generated base.
//!
//! # Override model
//!
//! The paint is a premultiplied layer: every texel stores eight bytes `p` whose sum `A` is at most
//! 255; `α = A / 255` is how much the paint covers the texel. The visible weights are
//! `final = base · (1 − α) + p` (in units of 1/255, summing to 255), where `base` is the
//! generator's splat (sand, grass, rock, snow, 0, 0, 0, 0). Regenerating with the same resolution
//! recomputes `base` and keeps `p` untouched, so every painted texel survives; a new resolution
//! resamples `p` ([`PaintLayer::resample`]).
//!
//! A brush dab composites a target weight vector `t` (sum 255) over the visible weights with an
//! amount `a ∈ [0, 1]`: `final' = final · (1 − a) + t · a`, i.e. `p' = p · (1 − a) + t · a`
//! (`α' = 1 − (1 − α)(1 − a)`). [`Mode::Paint`] uses the one-hot layer, [`Mode::Erase`] the
//! current weights without the layer, [`Mode::Smooth`] the neighbourhood average. The amount is
//! `strength · falloff(distance / radius, hardness) · mask(height, slope)`.
//!
//! Coordinates are the heightfield's node-local metres (island centre at the origin); heights
//! are metres, slopes degrees from the world-scaled normals of [`Heightfield::normals`].

use crate::grid::smoothstep;
use crate::heightfield::Heightfield;
use crate::normals::slope_degrees;
use rayon::prelude::*;
use std::fmt;

/// Number of splat layers.
pub const LAYERS: usize = 8;
/// Bytes per texel of a [`PaintLayer`].
pub const TEXEL_BYTES: usize = LAYERS;

/// Errors of the painting API (bad input, never a panic).
#[derive(Clone, Debug, PartialEq)]
pub enum PaintError {
    /// A brush or argument value is out of range.
    InvalidBrush(String),
    /// The paint does not match the island (resolution, base length).
    Mismatch(String),
    /// Encoded paint data is corrupt.
    Corrupt(String),
}

impl fmt::Display for PaintError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PaintError::InvalidBrush(m) => write!(f, "invalid brush: {m}"),
            PaintError::Mismatch(m) => write!(f, "paint does not match the island: {m}"),
            PaintError::Corrupt(m) => write!(f, "corrupt paint data: {m}"),
        }
    }
}

impl std::error::Error for PaintError {}

/// What a dab does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Add the brush layer.
    Paint,
    /// Remove the brush layer (the other layers fill in).
    Erase,
    /// Blend towards the neighbourhood average of all layers.
    Smooth,
}

impl Mode {
    /// Mode from its integer (0 paint, 1 erase, 2 smooth).
    pub fn from_index(i: i64) -> Option<Mode> {
        match i {
            0 => Some(Mode::Paint),
            1 => Some(Mode::Erase),
            2 => Some(Mode::Smooth),
            _ => None,
        }
    }
}

/// Height and slope masks: where a brush may paint.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Masks {
    /// Lowest height painted, metres.
    pub min_height: f32,
    /// Highest height painted, metres.
    pub max_height: f32,
    /// Width of the smooth fade inside each height limit, metres (0 = hard edge).
    pub height_fade: f32,
    /// Lowest slope painted, degrees.
    pub min_slope: f32,
    /// Steepest slope painted, degrees.
    pub max_slope: f32,
    /// Width of the smooth fade inside each slope limit, degrees (0 = hard edge).
    pub slope_fade: f32,
}

impl Default for Masks {
    fn default() -> Self {
        Masks {
            min_height: -100_000.0,
            max_height: 100_000.0,
            height_fade: 0.0,
            min_slope: 0.0,
            max_slope: 90.0,
            slope_fade: 0.0,
        }
    }
}

/// Weight 0..1 of `v` inside `[lo, hi]` with smooth fades of width `fade` *inside* the range:
/// exactly 0 outside, 1 further than `fade` from both limits.
#[inline]
pub fn range_weight(v: f32, lo: f32, hi: f32, fade: f32) -> f32 {
    if !(v >= lo && v <= hi) {
        return 0.0;
    }
    if fade <= 0.0 {
        return 1.0;
    }
    smoothstep(lo, lo + fade, v) * (1.0 - smoothstep(hi - fade, hi, v))
}

impl Masks {
    /// Mask weight 0..1 at a height (m) and slope (degrees).
    #[inline]
    pub fn weight(&self, height: f32, slope_deg: f32) -> f32 {
        range_weight(height, self.min_height, self.max_height, self.height_fade)
            * range_weight(slope_deg, self.min_slope, self.max_slope, self.slope_fade)
    }

    /// Check the values.
    pub fn validate(&self) -> Result<(), PaintError> {
        let bad = |m: String| Err(PaintError::InvalidBrush(m));
        for (name, v) in [
            ("min_height", self.min_height),
            ("max_height", self.max_height),
            ("height_fade", self.height_fade),
            ("min_slope_degrees", self.min_slope),
            ("max_slope_degrees", self.max_slope),
            ("slope_fade", self.slope_fade),
        ] {
            if !v.is_finite() {
                return bad(format!("`{name}` must be finite, got {v}"));
            }
        }
        if self.min_height > self.max_height {
            return bad(format!(
                "min_height {} > max_height {}",
                self.min_height, self.max_height
            ));
        }
        if self.min_slope > self.max_slope {
            return bad(format!(
                "min_slope_degrees {} > max_slope_degrees {}",
                self.min_slope, self.max_slope
            ));
        }
        if self.height_fade < 0.0 || self.slope_fade < 0.0 {
            return bad("fades must be >= 0".into());
        }
        Ok(())
    }
}

/// Falloff of a dab at normalised distance `t = d / radius`: 1 up to `t = hardness`, then a
/// smoothstep down to 0 at `t = 1`; 0 outside. `hardness = 1` is a hard disc.
#[inline]
pub fn falloff(t: f32, hardness: f32) -> f32 {
    if t.is_nan() || t > 1.0 {
        return 0.0;
    }
    let h = hardness.clamp(0.0, 1.0);
    if t <= h {
        1.0
    } else {
        1.0 - smoothstep(h, 1.0, t)
    }
}

/// A brush: what and how it paints.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Brush {
    /// Layer 0..7.
    pub layer: usize,
    /// Paint, erase or smooth.
    pub mode: Mode,
    /// Radius, metres.
    pub radius: f32,
    /// Amount per dab at the centre, 0..1.
    pub strength: f32,
    /// Falloff hardness, 0..1.
    pub hardness: f32,
    /// Where it may paint.
    pub masks: Masks,
    /// Distance between dabs of a stroke as a fraction of the radius.
    pub spacing: f32,
}

impl Default for Brush {
    fn default() -> Self {
        Brush {
            layer: 0,
            mode: Mode::Paint,
            radius: 10.0,
            strength: 0.5,
            hardness: 0.5,
            masks: Masks::default(),
            spacing: 0.25,
        }
    }
}

impl Brush {
    /// Check every value; the error names the first bad one.
    pub fn validate(&self) -> Result<(), PaintError> {
        let bad = |m: String| Err(PaintError::InvalidBrush(m));
        if self.layer >= LAYERS {
            return bad(format!(
                "`layer` must be 0..{}, got {}",
                LAYERS - 1,
                self.layer
            ));
        }
        if !(self.radius.is_finite() && self.radius > 0.0) {
            return bad(format!("`radius` must be > 0, got {}", self.radius));
        }
        if !(0.0..=1.0).contains(&self.strength) {
            return bad(format!("`strength` must be 0..1, got {}", self.strength));
        }
        if !(0.0..=1.0).contains(&self.hardness) {
            return bad(format!("`hardness` must be 0..1, got {}", self.hardness));
        }
        if !(self.spacing.is_finite() && self.spacing > 0.0) {
            return bad(format!("`spacing` must be > 0, got {}", self.spacing));
        }
        self.masks.validate()
    }

    /// Distance between dabs of a stroke, metres (at least 1 mm).
    pub fn step(&self) -> f32 {
        (self.spacing * self.radius).max(1e-3)
    }
}

/// Rectangle of texels `[x0, x0 + w) × [z0, z0 + h)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rect {
    /// First column.
    pub x0: usize,
    /// First row.
    pub z0: usize,
    /// Columns.
    pub w: usize,
    /// Rows.
    pub h: usize,
}

impl Rect {
    /// The whole `n × n` grid.
    pub fn full(n: usize) -> Rect {
        Rect {
            x0: 0,
            z0: 0,
            w: n,
            h: n,
        }
    }

    /// Whether it covers nothing.
    pub fn is_empty(&self) -> bool {
        self.w == 0 || self.h == 0
    }

    /// Smallest rectangle containing both.
    pub fn union(&self, o: &Rect) -> Rect {
        if self.is_empty() {
            return *o;
        }
        if o.is_empty() {
            return *self;
        }
        let x0 = self.x0.min(o.x0);
        let z0 = self.z0.min(o.z0);
        let x1 = (self.x0 + self.w).max(o.x0 + o.w);
        let z1 = (self.z0 + self.h).max(o.z0 + o.h);
        Rect {
            x0,
            z0,
            w: x1 - x0,
            h: z1 - z0,
        }
    }
}

/// Outcome of a painting operation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Changed {
    /// Texels whose stored paint changed.
    pub texels: usize,
    /// Bounding box of the texels considered (a superset of the changed ones; empty when none).
    pub rect: Rect,
}

/// Quantise non-negative values to bytes summing to exactly `total` (largest remainder; ties go
/// to the lower index). `total` must be ≤ 255 and the values' sum should be close to it.
pub fn quantize_to_total(v: &[f32; LAYERS], total: u32) -> [u8; LAYERS] {
    let mut out = [0u8; LAYERS];
    let s: f32 = v.iter().map(|x| x.max(0.0)).sum();
    if total == 0 || s <= 0.0 {
        return out;
    }
    let scale = total as f32 / s;
    let mut rem = [0.0f32; LAYERS];
    let mut sum = 0u32;
    for k in 0..LAYERS {
        let x = v[k].max(0.0) * scale;
        let f = x.floor().min(255.0);
        out[k] = f as u8;
        rem[k] = x - f;
        sum += f as u32;
    }
    let mut left = total.saturating_sub(sum);
    while left > 0 {
        let mut best = 0;
        for k in 1..LAYERS {
            if rem[k] > rem[best] {
                best = k;
            }
        }
        if rem[best] < 0.0 {
            break;
        }
        out[best] = out[best].saturating_add(1);
        rem[best] = -1.0;
        left -= 1;
    }
    out
}

/// The generated splat under the paint: eight layers per sample summing to 255, the auto
/// splat's four (sand, grass, rock, snow: [`crate::Island::splat`]) and, where a road is painted
/// with a layer 4..7 ([`crate::paths::paint_roads`]), the upper four
/// ([`crate::Island::splat_upper`]). `lower` may be empty (all grass), `upper` absent (layers
/// 4..7 at 0 everywhere).
#[derive(Clone, Copy, Debug, Default)]
pub struct Base<'a> {
    /// Layers 0..3 per sample.
    pub lower: &'a [[u8; 4]],
    /// Layers 4..7 per sample, when anything generated uses them.
    pub upper: Option<&'a [[u8; 4]]>,
}

impl<'a> Base<'a> {
    /// Samples in the base (0: none, all grass).
    pub fn len(&self) -> usize {
        self.lower.len()
    }

    /// Whether the base has no samples (all grass).
    pub fn is_empty(&self) -> bool {
        self.lower.is_empty()
    }

    /// The eight bytes of sample `i` (grass where the base has no samples).
    #[inline]
    pub fn texel(&self, i: usize) -> [u8; LAYERS] {
        let l = self.lower.get(i).copied().unwrap_or([0, 255, 0, 0]);
        let u = self.upper.and_then(|u| u.get(i).copied()).unwrap_or([0; 4]);
        [l[0], l[1], l[2], l[3], u[0], u[1], u[2], u[3]]
    }

    /// Whether the base has as many samples as an `n²` map (or none), upper layers included.
    fn fits(&self, nn: usize) -> Result<(), PaintError> {
        if !self.lower.is_empty() && self.lower.len() != nn {
            return Err(PaintError::Mismatch(format!(
                "base splat has {} samples, expected {nn}",
                self.lower.len()
            )));
        }
        if let Some(u) = self.upper.filter(|u| u.len() != self.lower.len()) {
            return Err(PaintError::Mismatch(format!(
                "base splat layers 4..7 have {} samples, layers 0..3 {}",
                u.len(),
                self.lower.len()
            )));
        }
        Ok(())
    }
}

impl<'a> From<&'a [[u8; 4]]> for Base<'a> {
    fn from(lower: &'a [[u8; 4]]) -> Base<'a> {
        Base { lower, upper: None }
    }
}

impl<'a> From<&'a Vec<[u8; 4]>> for Base<'a> {
    fn from(lower: &'a Vec<[u8; 4]>) -> Base<'a> {
        Base { lower, upper: None }
    }
}

/// The eight bytes as floats.
#[inline]
pub(crate) fn float8(b: [u8; LAYERS]) -> [f32; LAYERS] {
    b.map(|v| v as f32)
}

/// Visible weights (sum 255, as floats) of a texel from its base ([`Base::texel`]) and paint.
#[inline]
pub fn composite(base: [u8; LAYERS], p: [u8; LAYERS]) -> [f32; LAYERS] {
    let a: u32 = p.iter().map(|&v| v as u32).sum();
    let mut b = float8(base);
    let bs: f32 = b.iter().sum();
    if bs <= 0.0 {
        b = [0.0, 255.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
    } else if bs != 255.0 {
        b.iter_mut().for_each(|v| *v *= 255.0 / bs);
    }
    let keep = (255 - a.min(255)) as f32 / 255.0;
    let mut f = [0.0f32; LAYERS];
    for k in 0..LAYERS {
        f[k] = b[k] * keep + p[k] as f32;
    }
    f
}

/// The user paint: premultiplied eight-layer override per heightfield sample.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PaintLayer {
    /// Samples per side (the heightfield's resolution).
    pub resolution: usize,
    /// Paint per sample, row-major `z * resolution + x`; each texel sums to at most 255.
    pub data: Vec<[u8; LAYERS]>,
}

const MAGIC: &[u8; 4] = b"ISP1";

impl PaintLayer {
    /// Empty paint (nothing painted).
    pub fn new(resolution: usize) -> PaintLayer {
        PaintLayer {
            resolution,
            data: vec![[0; LAYERS]; resolution * resolution],
        }
    }

    /// Whether no texel is painted.
    pub fn is_empty(&self) -> bool {
        self.data.iter().all(|p| p.iter().all(|&v| v == 0))
    }

    /// Visible weights of sample `i` (sum 255) over `base` (may be empty: all grass).
    pub fn weights<'b>(&self, base: impl Into<Base<'b>>, i: usize) -> [f32; LAYERS] {
        composite(base.into().texel(i), self.data[i])
    }

    /// The paint resampled to another resolution (bilinear on the premultiplied values, so the
    /// coverage is preserved).
    pub fn resample(&self, resolution: usize) -> PaintLayer {
        if resolution == self.resolution {
            return self.clone();
        }
        let (src_n, n) = (self.resolution, resolution);
        let mut out = PaintLayer::new(n);
        if src_n < 2 || n < 2 {
            return out;
        }
        let scale = (src_n - 1) as f32 / (n - 1) as f32;
        out.data.par_chunks_mut(n).enumerate().for_each(|(z, row)| {
            let gz = z as f32 * scale;
            let z0 = (gz as usize).min(src_n - 2);
            let fz = gz - z0 as f32;
            for (x, o) in row.iter_mut().enumerate() {
                let gx = x as f32 * scale;
                let x0 = (gx as usize).min(src_n - 2);
                let fx = gx - x0 as f32;
                let s = |ix: usize, iz: usize| self.data[iz * src_n + ix];
                let (a, b, c, d) = (s(x0, z0), s(x0 + 1, z0), s(x0, z0 + 1), s(x0 + 1, z0 + 1));
                let mut v = [0.0f32; LAYERS];
                for k in 0..LAYERS {
                    let top = a[k] as f32 + (b[k] as f32 - a[k] as f32) * fx;
                    let bot = c[k] as f32 + (d[k] as f32 - c[k] as f32) * fx;
                    v[k] = top + (bot - top) * fz;
                }
                let total: f32 = v.iter().sum();
                *o = quantize_to_total(&v, total.round().clamp(0.0, 255.0) as u32);
            }
        });
        out
    }

    /// Remove layer `layer` from the paint everywhere (the base shows through again where that
    /// was all the paint). Returns the number of texels changed.
    pub fn clear_layer(&mut self, layer: usize) -> Result<usize, PaintError> {
        if layer >= LAYERS {
            return Err(PaintError::InvalidBrush(format!(
                "`layer` must be 0..{}, got {layer}",
                LAYERS - 1
            )));
        }
        Ok(self
            .data
            .par_iter_mut()
            .map(|p| {
                if p[layer] != 0 {
                    p[layer] = 0;
                    1
                } else {
                    0
                }
            })
            .sum())
    }

    /// Raw bytes of a rectangle (row by row, 8 bytes per texel).
    pub fn region(&self, r: Rect) -> Result<Vec<u8>, PaintError> {
        self.check_rect(r)?;
        let mut out = Vec::with_capacity(r.w * r.h * TEXEL_BYTES);
        for z in r.z0..r.z0 + r.h {
            for p in &self.data[z * self.resolution + r.x0..z * self.resolution + r.x0 + r.w] {
                out.extend_from_slice(p);
            }
        }
        Ok(out)
    }

    /// Overwrite a rectangle with bytes from [`PaintLayer::region`]. Rejects texels whose sum
    /// exceeds 255.
    pub fn set_region(&mut self, r: Rect, bytes: &[u8]) -> Result<(), PaintError> {
        self.check_rect(r)?;
        if bytes.len() != r.w * r.h * TEXEL_BYTES {
            return Err(PaintError::Mismatch(format!(
                "region {}×{} needs {} bytes, got {}",
                r.w,
                r.h,
                r.w * r.h * TEXEL_BYTES,
                bytes.len()
            )));
        }
        if bytes
            .chunks_exact(TEXEL_BYTES)
            .any(|t| t.iter().map(|&v| v as u32).sum::<u32>() > 255)
        {
            return Err(PaintError::Corrupt(
                "a texel's paint sums to more than 255".into(),
            ));
        }
        let mut it = bytes.chunks_exact(TEXEL_BYTES);
        for z in r.z0..r.z0 + r.h {
            for p in &mut self.data[z * self.resolution + r.x0..z * self.resolution + r.x0 + r.w] {
                p.copy_from_slice(it.next().unwrap_or(&[0; TEXEL_BYTES]));
            }
        }
        Ok(())
    }

    fn check_rect(&self, r: Rect) -> Result<(), PaintError> {
        if r.x0 + r.w > self.resolution || r.z0 + r.h > self.resolution {
            return Err(PaintError::Mismatch(format!(
                "region ({}, {}) {}×{} is outside the {}² paint",
                r.x0, r.z0, r.w, r.h, self.resolution
            )));
        }
        Ok(())
    }

    /// Compact serialisation: magic, resolution, then the texel bytes with runs of zeros
    /// run-length encoded (a 0 byte followed by a LEB128 run length).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(self.resolution as u32).to_le_bytes());
        let bytes = self.data.as_flattened();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] != 0 {
                out.push(bytes[i]);
                i += 1;
                continue;
            }
            let start = i;
            while i < bytes.len() && bytes[i] == 0 {
                i += 1;
            }
            out.push(0);
            let mut run = (i - start) as u64;
            loop {
                let b = (run & 0x7f) as u8;
                run >>= 7;
                if run == 0 {
                    out.push(b);
                    break;
                }
                out.push(b | 0x80);
            }
        }
        out
    }

    /// Inverse of [`PaintLayer::encode`]; rejects anything malformed.
    pub fn decode(bytes: &[u8]) -> Result<PaintLayer, PaintError> {
        let bad = |m: &str| Err(PaintError::Corrupt(m.to_string()));
        if bytes.len() < 8 || &bytes[..4] != MAGIC {
            return bad("missing header");
        }
        let n = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]) as usize;
        if !(2..=8193).contains(&n) {
            return bad("resolution out of range");
        }
        let len = n * n * TEXEL_BYTES;
        let mut flat = Vec::with_capacity(len);
        let mut i = 8;
        while i < bytes.len() {
            let b = bytes[i];
            i += 1;
            if b != 0 {
                flat.push(b);
            } else {
                let mut run: u64 = 0;
                let mut shift = 0;
                loop {
                    let Some(&c) = bytes.get(i) else {
                        return bad("truncated run length");
                    };
                    i += 1;
                    if shift > 35 {
                        return bad("run length too long");
                    }
                    run |= ((c & 0x7f) as u64) << shift;
                    shift += 7;
                    if c & 0x80 == 0 {
                        break;
                    }
                }
                if run == 0 || flat.len() as u64 + run > len as u64 {
                    return bad("run length out of range");
                }
                flat.resize(flat.len() + run as usize, 0);
            }
            if flat.len() > len {
                return bad("too much data");
            }
        }
        if flat.len() != len {
            return bad("too little data");
        }
        let data: Vec<[u8; LAYERS]> = flat
            .chunks_exact(TEXEL_BYTES)
            .map(|c| {
                let mut t = [0u8; LAYERS];
                t.copy_from_slice(c);
                t
            })
            .collect();
        if data
            .iter()
            .any(|t| t.iter().map(|&v| v as u32).sum::<u32>() > 255)
        {
            return bad("a texel's paint sums to more than 255");
        }
        Ok(PaintLayer {
            resolution: n,
            data,
        })
    }
}

/// Everything a brush reads besides the paint.
#[derive(Clone, Copy)]
pub struct Surface<'a> {
    /// Heights and normals.
    pub field: &'a Heightfield,
    /// Generator splat per sample (eight layers, sum 255). May be empty (all grass).
    pub base: Base<'a>,
}

impl<'a> Surface<'a> {
    fn check(&self, paint: &PaintLayer) -> Result<(), PaintError> {
        let n = self.field.resolution;
        if paint.resolution != n || paint.data.len() != n * n {
            return Err(PaintError::Mismatch(format!(
                "paint is {}², heightfield {}²",
                paint.resolution, n
            )));
        }
        self.base.fits(n * n)?;
        if self.field.normals.len() != n * n {
            return Err(PaintError::Mismatch("heightfield normals missing".into()));
        }
        Ok(())
    }

    /// Mask weight of sample `i` for `masks`.
    #[inline]
    pub fn mask(&self, masks: &Masks, i: usize) -> f32 {
        masks.weight(self.field.heights[i], slope_degrees(self.field.normals[i]))
    }
}

/// Texel rectangle covering a disc of `radius` metres around node-local `(x, z)` (clipped to the
/// map; empty when it misses the map).
pub fn disc_rect(field: &Heightfield, center: [f32; 2], radius: f32) -> Rect {
    let n = field.resolution as isize;
    let s = field.spacing();
    let h = field.world_size * 0.5;
    let gx = (center[0] + h) / s;
    let gz = (center[1] + h) / s;
    let r = radius / s;
    if !(gx.is_finite() && gz.is_finite() && r.is_finite()) {
        return Rect::default();
    }
    let x0 = ((gx - r).ceil() as isize).max(0);
    let x1 = ((gx + r).floor() as isize).min(n - 1);
    let z0 = ((gz - r).ceil() as isize).max(0);
    let z1 = ((gz + r).floor() as isize).min(n - 1);
    if x1 < x0 || z1 < z0 {
        return Rect::default();
    }
    Rect {
        x0: x0 as usize,
        z0: z0 as usize,
        w: (x1 - x0 + 1) as usize,
        h: (z1 - z0 + 1) as usize,
    }
}

/// Erase target: `f` without `layer`, renormalised; falls back to the base without the layer,
/// then to grass (or sand when erasing grass).
#[inline]
fn erase_target(f: &[f32; LAYERS], base: [u8; LAYERS], layer: usize) -> [f32; LAYERS] {
    without_layer(*f, layer)
        .or_else(|| without_layer(float8(base), layer))
        .unwrap_or_else(|| {
            let mut t = [0.0; LAYERS];
            t[if layer == 1 { 0 } else { 1 }] = 255.0;
            t
        })
}

/// `t` with `layer` removed and the rest rescaled to sum 255; `None` when nothing is left
/// (the rest sums to 0.5 or less).
#[inline]
fn without_layer(mut t: [f32; LAYERS], layer: usize) -> Option<[f32; LAYERS]> {
    t[layer] = 0.0;
    let s: f32 = t.iter().sum();
    if s > 0.5 {
        t.iter_mut().for_each(|v| *v *= 255.0 / s);
        Some(t)
    } else {
        None
    }
}

/// Composite `t` (sum 255) over the texel with amount `a`; returns whether the bytes changed.
#[inline]
fn apply(p: &mut [u8; LAYERS], t: &[f32; LAYERS], a: f32) -> bool {
    if a <= 0.0 {
        return false;
    }
    let keep = 1.0 - a;
    let mut v = [0.0f32; LAYERS];
    let mut s = 0.0f32;
    for k in 0..LAYERS {
        v[k] = p[k] as f32 * keep + t[k] * a;
        s += v[k];
    }
    let q = quantize_to_total(&v, s.round().clamp(0.0, 255.0) as u32);
    if q != *p {
        *p = q;
        true
    } else {
        false
    }
}

/// Neighbourhood half-width (texels) used by [`Mode::Smooth`] for a brush radius in texels.
pub fn smooth_kernel(radius_texels: f32) -> usize {
    ((radius_texels * 0.25).round() as usize).clamp(1, 8)
}

/// Box-averaged visible weights over `rect` expanded by `k`, returned for the texels of `rect`.
fn smoothed_targets(
    paint: &PaintLayer,
    surf: &Surface,
    rect: Rect,
    k: usize,
) -> Vec<[f32; LAYERS]> {
    let n = paint.resolution;
    let ex0 = rect.x0.saturating_sub(k);
    let ez0 = rect.z0.saturating_sub(k);
    let ex1 = (rect.x0 + rect.w + k).min(n);
    let ez1 = (rect.z0 + rect.h + k).min(n);
    let (ew, eh) = (ex1 - ex0, ez1 - ez0);
    let mut f = vec![[0.0f32; LAYERS]; ew * eh];
    for z in 0..eh {
        for x in 0..ew {
            f[z * ew + x] = paint.weights(surf.base, (ez0 + z) * n + ex0 + x);
        }
    }
    // Horizontal then vertical box average (window clipped at the map edge), sliding sums.
    let mut tmp = vec![[0.0f32; LAYERS]; ew * eh];
    for z in 0..eh {
        let row = &f[z * ew..(z + 1) * ew];
        let mut acc = [0.0f32; LAYERS];
        for v in &row[..k.min(ew - 1) + 1] {
            add8(&mut acc, v, 1.0);
        }
        for x in 0..ew {
            if x > 0 {
                if x + k < ew {
                    add8(&mut acc, &row[x + k], 1.0);
                }
                if x > k {
                    add8(&mut acc, &row[x - k - 1], -1.0);
                }
            }
            let count = ((x + k).min(ew - 1) - x.saturating_sub(k) + 1) as f32;
            let o = &mut tmp[z * ew + x];
            for c in 0..LAYERS {
                o[c] = acc[c] / count;
            }
        }
    }
    let mut out = vec![[0.0f32; LAYERS]; rect.w * rect.h];
    for x in 0..rect.w {
        let ex = rect.x0 + x - ex0;
        let col = |zz: usize| &tmp[zz * ew + ex];
        let z_first = rect.z0 - ez0;
        let (a0, b0) = (z_first.saturating_sub(k), (z_first + k).min(eh - 1));
        let mut acc = [0.0f32; LAYERS];
        for zz in a0..=b0 {
            add8(&mut acc, col(zz), 1.0);
        }
        for z in 0..rect.h {
            let ez = z_first + z;
            if z > 0 {
                if ez + k < eh {
                    add8(&mut acc, col(ez + k), 1.0);
                }
                if ez > k {
                    add8(&mut acc, col(ez - k - 1), -1.0);
                }
            }
            let count = ((ez + k).min(eh - 1) - ez.saturating_sub(k) + 1) as f32;
            let o = &mut out[z * rect.w + x];
            for c in 0..LAYERS {
                o[c] = acc[c] / count;
            }
        }
    }
    out
}

#[inline(always)]
fn add8(acc: &mut [f32; LAYERS], v: &[f32; LAYERS], sign: f32) {
    for c in 0..LAYERS {
        acc[c] += v[c] * sign;
    }
}

/// One dab of `brush` centred on node-local `(x, z)` metres.
pub fn stamp(
    paint: &mut PaintLayer,
    surf: &Surface,
    brush: &Brush,
    center: [f32; 2],
) -> Result<Changed, PaintError> {
    brush.validate()?;
    surf.check(paint)?;
    let rect = disc_rect(surf.field, center, brush.radius);
    if rect.is_empty() || brush.strength <= 0.0 {
        return Ok(Changed::default());
    }
    let n = paint.resolution;
    let s = surf.field.spacing();
    let half = surf.field.world_size * 0.5;
    let inv_r = 1.0 / brush.radius;
    let smooth = if brush.mode == Mode::Smooth {
        Some(smoothed_targets(
            paint,
            surf,
            rect,
            smooth_kernel(brush.radius / s),
        ))
    } else {
        None
    };
    let mut one_hot = [0.0f32; LAYERS];
    one_hot[brush.layer] = 255.0;
    let mut changed = 0;
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
            let a = brush.strength * fo * surf.mask(&brush.masks, i);
            if a <= 0.0 {
                continue;
            }
            let did = match brush.mode {
                Mode::Paint => apply(&mut paint.data[i], &one_hot, a),
                Mode::Erase => {
                    let b = surf.base.texel(i);
                    let f = composite(b, paint.data[i]);
                    if f[brush.layer] <= 0.0 {
                        false
                    } else {
                        let tgt = erase_target(&f, b, brush.layer);
                        apply(&mut paint.data[i], &tgt, a)
                    }
                }
                Mode::Smooth => {
                    let tgt = &smooth.as_ref().expect("smooth targets")
                        [(z - rect.z0) * rect.w + (x - rect.x0)];
                    apply(&mut paint.data[i], tgt, a)
                }
            };
            changed += did as usize;
        }
    }
    Ok(Changed {
        texels: changed,
        rect,
    })
}

/// Dab centres of a stroke from `from` to `to` (node-local x, z metres) every `step` metres.
/// `carry` is the distance already travelled since the last dab of a previous segment (`None`
/// for a new stroke: the first dab is at `from`). Returns the centres and the new carry.
pub fn stroke_points(
    from: [f32; 2],
    to: [f32; 2],
    step: f32,
    carry: Option<f32>,
) -> (Vec<[f32; 2]>, f32) {
    let step = if step.is_finite() && step > 0.0 {
        step.max(1e-3)
    } else {
        1.0
    };
    let (dx, dz) = (to[0] - from[0], to[1] - from[1]);
    let len = (dx * dx + dz * dz).sqrt();
    if !len.is_finite() {
        return (Vec::new(), carry.unwrap_or(0.0));
    }
    let mut pts = Vec::new();
    // Distance along the segment of the next dab.
    let mut d = match carry {
        None => 0.0,
        Some(c) => (step - c).max(0.0),
    };
    let max_dabs = 1_000_000usize;
    while d <= len + 1e-6 && pts.len() < max_dabs {
        let f = if len > 0.0 { d / len } else { 0.0 };
        pts.push([from[0] + dx * f, from[1] + dz * f]);
        d += step;
    }
    let last = d - step; // distance of the last dab (may be negative when none)
    let carry_out = if pts.is_empty() {
        carry.unwrap_or(0.0) + len
    } else {
        len - last
    };
    (pts, carry_out.max(0.0))
}

/// Paint a stroke: dabs from `from` to `to` every `brush.step()` metres (see [`stroke_points`]).
/// Returns the texels changed (counted once per dab that changed them) and the union rectangle,
/// and the carry for a following segment.
pub fn stroke(
    paint: &mut PaintLayer,
    surf: &Surface,
    brush: &Brush,
    from: [f32; 2],
    to: [f32; 2],
    carry: Option<f32>,
) -> Result<(Changed, f32), PaintError> {
    brush.validate()?;
    surf.check(paint)?;
    let (pts, carry) = stroke_points(from, to, brush.step(), carry);
    let mut total = Changed::default();
    for c in pts {
        let ch = stamp(paint, surf, brush, c)?;
        total.texels += ch.texels;
        total.rect = total.rect.union(&ch.rect);
    }
    Ok((total, carry))
}

/// Apply the brush's mode over the whole island at once with amount `strength · mask` (no
/// radius, no falloff). Returns the texels changed.
pub fn fill_by_rule(
    paint: &mut PaintLayer,
    surf: &Surface,
    brush: &Brush,
) -> Result<Changed, PaintError> {
    brush.validate()?;
    surf.check(paint)?;
    let n = paint.resolution;
    let all = Rect::full(n);
    if brush.strength <= 0.0 {
        return Ok(Changed {
            texels: 0,
            rect: all,
        });
    }
    let smooth = if brush.mode == Mode::Smooth {
        Some(smoothed_targets(
            paint,
            surf,
            all,
            smooth_kernel(brush.radius / surf.field.spacing()),
        ))
    } else {
        None
    };
    let mut one_hot = [0.0f32; LAYERS];
    one_hot[brush.layer] = 255.0;
    let texels = paint
        .data
        .par_chunks_mut(n)
        .enumerate()
        .map(|(z, row)| {
            let mut c = 0;
            for (x, p) in row.iter_mut().enumerate() {
                let i = z * n + x;
                let a = brush.strength * surf.mask(&brush.masks, i);
                if a <= 0.0 {
                    continue;
                }
                let did = match brush.mode {
                    Mode::Paint => apply(p, &one_hot, a),
                    Mode::Erase => {
                        let b = surf.base.texel(i);
                        let f = composite(b, *p);
                        f[brush.layer] > 0.0 && apply(p, &erase_target(&f, b, brush.layer), a)
                    }
                    Mode::Smooth => apply(p, &smooth.as_ref().expect("smooth targets")[i], a),
                };
                c += did as usize;
            }
            c
        })
        .sum();
    Ok(Changed { texels, rect: all })
}

/// Visible weights of `rect` quantised to two RGBA8 maps (layers 0..3 and 4..7, each texel's
/// eight bytes summing to 255), row by row.
pub fn compose_maps<'b>(
    paint: &PaintLayer,
    base: impl Into<Base<'b>>,
    rect: Rect,
) -> Result<(Vec<u8>, Vec<u8>), PaintError> {
    let base = base.into();
    paint.check_rect(rect)?;
    base.fits(paint.resolution * paint.resolution)?;
    let n = paint.resolution;
    let mut a = vec![0u8; rect.w * rect.h * 4];
    let mut b = vec![0u8; rect.w * rect.h * 4];
    a.par_chunks_mut(rect.w * 4)
        .zip(b.par_chunks_mut(rect.w * 4))
        .enumerate()
        .for_each(|(z, (ra, rb))| {
            for x in 0..rect.w {
                let i = (rect.z0 + z) * n + rect.x0 + x;
                let p = paint.data[i];
                let q = if p == [0; LAYERS] {
                    let bb = base.texel(i);
                    let s: u32 = bb.iter().map(|&v| v as u32).sum();
                    if s == 255 {
                        bb
                    } else {
                        quantize_to_total(&composite(bb, p), 255)
                    }
                } else {
                    quantize_to_total(&paint.weights(base, i), 255)
                };
                ra[x * 4..x * 4 + 4].copy_from_slice(&q[..4]);
                rb[x * 4..x * 4 + 4].copy_from_slice(&q[4..]);
            }
        });
    Ok((a, b))
}

/// Bilinearly interpolated visible weights (sum 1) at node-local `(x, z)` metres (clamped).
pub fn weights_at(
    paint: &PaintLayer,
    surf: &Surface,
    x: f32,
    z: f32,
) -> Result<[f32; LAYERS], PaintError> {
    surf.check(paint)?;
    Ok(bilinear_weights(surf.field, x, z, |i| {
        paint.weights(surf.base, i)
    }))
}

/// The eight weights `w(sample)` at node-local `(x, z)` (clamped to the map; a non-finite
/// coordinate reads the first sample), bilinear between the four samples around it and
/// normalised to sum 1: [`weights_at`] and `surface_query::weights_at`.
pub fn bilinear_weights(
    field: &Heightfield,
    x: f32,
    z: f32,
    w: impl Fn(usize) -> [f32; LAYERS],
) -> [f32; LAYERS] {
    let n = field.resolution;
    let s = field.spacing();
    let h = field.world_size * 0.5;
    let gx = ((x + h) / s).clamp(0.0, (n - 1) as f32);
    let gz = ((z + h) / s).clamp(0.0, (n - 1) as f32);
    let gx = if gx.is_finite() { gx } else { 0.0 };
    let gz = if gz.is_finite() { gz } else { 0.0 };
    let ix = (gx as usize).min(n - 2);
    let iz = (gz as usize).min(n - 2);
    let (fx, fz) = (gx - ix as f32, gz - iz as f32);
    let (a, b, c, d) = (
        w(iz * n + ix),
        w(iz * n + ix + 1),
        w((iz + 1) * n + ix),
        w((iz + 1) * n + ix + 1),
    );
    let mut out = [0.0f32; LAYERS];
    for k in 0..LAYERS {
        let top = a[k] + (b[k] - a[k]) * fx;
        let bot = c[k] + (d[k] - c[k]) * fx;
        out[k] = top + (bot - top) * fz;
    }
    let sum: f32 = out.iter().sum();
    if sum > 0.0 {
        out.iter_mut().for_each(|v| *v /= sum);
    }
    out
}

/// First intersection of a ray (node-local origin and direction) with the heightfield surface
/// ([`Heightfield::height_at`]) within `max_distance` metres, found by marching half-sample steps
/// across the map's square and bisecting the crossing. `None` when it misses.
pub fn ray_march(
    field: &Heightfield,
    origin: [f32; 3],
    dir: [f32; 3],
    max_distance: f32,
) -> Option<[f32; 3]> {
    let len = (dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]).sqrt();
    let bad_dir = !len.is_finite() || len <= 0.0;
    if bad_dir
        || !origin.iter().all(|v| v.is_finite())
        || max_distance.is_nan()
        || max_distance <= 0.0
    {
        return None;
    }
    let d = [dir[0] / len, dir[1] / len, dir[2] / len];
    let h = field.world_size * 0.5;
    // Clip to the map's square in x and z.
    let (mut t0, mut t1) = (0.0f32, max_distance);
    for (o, v) in [(origin[0], d[0]), (origin[2], d[2])] {
        if v.abs() < 1e-12 {
            if o < -h || o > h {
                return None;
            }
        } else {
            let (a, b) = ((-h - o) / v, (h - o) / v);
            t0 = t0.max(a.min(b));
            t1 = t1.min(a.max(b));
        }
    }
    if t0 > t1 {
        return None;
    }
    let at = |t: f32| {
        [
            origin[0] + d[0] * t,
            origin[1] + d[1] * t,
            origin[2] + d[2] * t,
        ]
    };
    let above = |t: f32| {
        let p = at(t);
        p[1] - field.height_at(p[0], p[2])
    };
    let step = field.spacing() * 0.5;
    let mut prev_t = t0;
    let mut prev = above(t0);
    if prev <= 0.0 {
        // Starts below the surface: report the entry point if it is on the map edge.
        return if t0 > 0.0 { Some(at(t0)) } else { None };
    }
    let steps = ((t1 - t0) / step).ceil().min(4_000_000.0) as usize;
    for k in 1..=steps {
        let t = (t0 + k as f32 * step).min(t1);
        let v = above(t);
        if v <= 0.0 {
            let (mut lo, mut hi) = (prev_t, t);
            for _ in 0..24 {
                let mid = 0.5 * (lo + hi);
                if above(mid) > 0.0 {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            let _ = prev;
            return Some(at(hi));
        }
        prev_t = t;
        prev = v;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sliding-sum box average equals a direct average over the clipped window.
    #[test]
    fn smoothed_targets_match_direct_average() {
        let n = 33;
        let field = Heightfield::new(n, 32.0, vec![1.0; n * n]);
        let base: Vec<[u8; 4]> = (0..n * n)
            .map(|i| [(i * 7 % 256) as u8, 0, 0, 0])
            .map(|[a, ..]| [a, 255 - a, 0, 0])
            .collect();
        let mut paint = PaintLayer::new(n);
        for (i, p) in paint.data.iter_mut().enumerate() {
            p[5] = (i * 13 % 120) as u8;
        }
        let surf = Surface {
            field: &field,
            base: (&base).into(),
        };
        for (rect, k) in [
            (Rect::full(n), 3),
            (
                Rect {
                    x0: 5,
                    z0: 9,
                    w: 11,
                    h: 7,
                },
                2,
            ),
            (
                Rect {
                    x0: 28,
                    z0: 0,
                    w: 5,
                    h: 4,
                },
                4,
            ),
        ] {
            let got = smoothed_targets(&paint, &surf, rect, k);
            for z in 0..rect.h {
                for x in 0..rect.w {
                    let (gx, gz) = (rect.x0 + x, rect.z0 + z);
                    let mut acc = [0.0f64; LAYERS];
                    let mut cnt = 0.0;
                    for zz in gz.saturating_sub(k)..=(gz + k).min(n - 1) {
                        for xx in gx.saturating_sub(k)..=(gx + k).min(n - 1) {
                            let w = paint.weights(&base, zz * n + xx);
                            for c in 0..LAYERS {
                                acc[c] += w[c] as f64;
                            }
                            cnt += 1.0;
                        }
                    }
                    for c in 0..LAYERS {
                        let want = acc[c] / cnt;
                        assert!(
                            (got[z * rect.w + x][c] as f64 - want).abs() < 1e-2,
                            "{rect:?} k {k} ({x},{z}) c {c}"
                        );
                    }
                }
            }
        }
    }
}
