//! Stamps: landmarks placed by hand (a mountain, a crater, a plateau, a basin, a bay, an islet)
//! that the island grows around. Each stamp is a shape with a position, a rotation and a size;
//! [`rasterize`] writes the stamps into a [`SculptLayer`], the layer the brush edits too, so a
//! stamp enters the generator exactly where the sculpt layer enters (the coast override before
//! the outline's distance field, the relief right before the erosion, the shaped samples held
//! through erosion and river carving): valleys, rivers, lakes, splat and scatter follow it.
//! Stamps go first, the brush's layer on top ([`compose`]).
//!
//! | kind | what it writes |
//! |---|---|
//! | [`StampKind::Mountain`] | `offset += height · bump(t)` |
//! | [`StampKind::Crater`] | a bowl `height` deep at the centre and a rim `0.3 · height` high at `t = 0.8` |
//! | [`StampKind::Plateau`] | `level = height` (metres above sea level), weight 1 inside, fading over the edge |
//! | [`StampKind::Basin`] | `offset -= height · bump(t)` (the drainage makes a lake of it) |
//! | [`StampKind::Bay`] | coast override: sea inside |
//! | [`StampKind::Islet`] | coast override: land inside, and `offset += height · bump(t)` |
//! | [`StampKind::Heightmap`] | `offset += height · image(u, v) · edge(t)` over the square the radii span (a [`StampImage`], 0..1, bilinear) |
//!
//! `t` is the distance from the centre in units of the (rotated, scaled) radius: 0 at the centre,
//! 1 on the edge (for a heightmap the larger of the two axis distances: its square's edge);
//! `bump(t) = 1 - smoothstep(0, 1, t)`. The edge fades over the last `falloff` fraction of the
//! radius. A heightmap's image covers the square from `-radius_x..radius_x` (its columns, along
//! the stamp's own x) and `-radius_z..radius_z` (its rows, along its own z).

use crate::sculpt::SculptLayer;
use std::fmt;

/// Largest stamp radius, metres.
pub const MAX_RADIUS: f32 = 100_000.0;
/// Default radius, metres.
pub const DEFAULT_RADIUS: f32 = 60.0;
/// Default height (mountain, islet, plateau top, crater and basin depth), metres.
pub const DEFAULT_HEIGHT: f32 = 30.0;
/// Default edge fade, fraction of the radius.
pub const DEFAULT_FALLOFF: f32 = 0.3;

/// What a stamp makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StampKind {
    /// A rounded peak `height` metres high.
    Mountain,
    /// A bowl `height` metres deep with a raised rim.
    Crater,
    /// A flat top at `height` metres above sea level.
    Plateau,
    /// A hollow `height` metres deep that fills with a lake.
    Basin,
    /// Sea cut into the coast.
    Bay,
    /// New land rising `height` metres from the sea.
    Islet,
    /// A heightmap image raised `height` metres at its white (1.0), nothing at its black.
    Heightmap,
}

/// A heightmap image for [`StampKind::Heightmap`]: `width × height` values 0..1, row-major
/// (row 0 at the stamp's -z edge, column 0 at its -x edge).
#[derive(Clone, Debug)]
pub struct StampImage {
    /// Columns.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// Values 0..1, `width × height`.
    pub values: Vec<f32>,
}

impl PartialEq for StampImage {
    fn eq(&self, o: &StampImage) -> bool {
        // The same image (an `Arc` shared by the node's cache and a request) needs no comparison.
        std::ptr::eq(self, o)
            || (self.width == o.width
                && self.height == o.height
                && self.values.len() == o.values.len()
                && self
                    .values
                    .iter()
                    .zip(&o.values)
                    .all(|(a, b)| a.to_bits() == b.to_bits()))
    }
}

impl StampImage {
    /// Check the size and the values.
    pub fn validate(&self) -> Result<(), StampError> {
        if self.width < 2 || self.height < 2 || self.width > 16384 || self.height > 16384 {
            return Err(StampError(format!(
                "a stamp heightmap must be 2..16384 pixels a side, got {}×{}",
                self.width, self.height
            )));
        }
        if self.values.len() != self.width * self.height {
            return Err(StampError(format!(
                "a stamp heightmap of {}×{} needs {} values, got {}",
                self.width,
                self.height,
                self.width * self.height,
                self.values.len()
            )));
        }
        if let Some(v) = self.values.iter().find(|v| !(0.0..=1.0).contains(*v)) {
            return Err(StampError(format!(
                "stamp heightmap values must be 0..1, got {v}"
            )));
        }
        Ok(())
    }

    /// Bilinear value at `u, v` in 0..1 (clamped).
    pub fn sample(&self, u: f32, v: f32) -> f32 {
        let fx = u.clamp(0.0, 1.0) * (self.width - 1) as f32;
        let fy = v.clamp(0.0, 1.0) * (self.height - 1) as f32;
        let (x0, y0) = (
            (fx as usize).min(self.width - 2),
            (fy as usize).min(self.height - 2),
        );
        let (tx, ty) = (fx - x0 as f32, fy - y0 as f32);
        let k = y0 * self.width + x0;
        let a = self.values[k] + (self.values[k + 1] - self.values[k]) * tx;
        let b = self.values[k + self.width]
            + (self.values[k + self.width + 1] - self.values[k + self.width]) * tx;
        a + (b - a) * ty
    }
}

impl StampKind {
    /// Every kind, in the order of their numbers (the Godot constants).
    pub const ALL: [StampKind; 7] = [
        StampKind::Mountain,
        StampKind::Crater,
        StampKind::Plateau,
        StampKind::Basin,
        StampKind::Bay,
        StampKind::Islet,
        StampKind::Heightmap,
    ];
}

/// One stamp, in the island's frame (node-local metres).
#[derive(Clone, Debug, PartialEq)]
pub struct Stamp {
    /// What it makes.
    pub kind: StampKind,
    /// Centre, node-local x and z, metres.
    pub center: [f32; 2],
    /// Radius along the stamp's own x axis, metres (0 < r ≤ [`MAX_RADIUS`]).
    pub radius_x: f32,
    /// Radius along its own z axis, metres.
    pub radius_z: f32,
    /// Rotation about the vertical axis as `[cos θ, sin θ]` of Godot's yaw θ (the stamp's x
    /// axis points along `(cos θ, -sin θ)` in x, z); a unit vector. Given as the pair, not the
    /// angle, so that a node's basis converts without a trigonometric call.
    pub rotation: [f32; 2],
    /// Height or depth, metres (see [`StampKind`]); -1000..=10000.
    pub height: f32,
    /// Edge fade, fraction of the radius, 0..=1.
    pub falloff: f32,
    /// The image of a [`StampKind::Heightmap`] (required there, ignored by the other kinds).
    pub image: Option<std::sync::Arc<StampImage>>,
}

/// An invalid stamp.
#[derive(Clone, Debug, PartialEq)]
pub struct StampError(pub String);

impl fmt::Display for StampError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StampError {}

impl Stamp {
    /// Check the numbers.
    pub fn validate(&self) -> Result<(), StampError> {
        let all = [
            self.center[0],
            self.center[1],
            self.radius_x,
            self.radius_z,
            self.rotation[0],
            self.rotation[1],
            self.height,
            self.falloff,
        ];
        if all.iter().any(|v| !v.is_finite()) {
            return Err(StampError(format!("stamp values must be finite: {self:?}")));
        }
        for r in [self.radius_x, self.radius_z] {
            if !(r > 0.0 && r <= MAX_RADIUS) {
                return Err(StampError(format!(
                    "stamp radius must be > 0 and at most {MAX_RADIUS} m, got {r}"
                )));
            }
        }
        let len2 = self.rotation[0] * self.rotation[0] + self.rotation[1] * self.rotation[1];
        if (len2 - 1.0).abs() > 1e-3 {
            return Err(StampError(format!(
                "stamp rotation must be a unit [cos, sin] pair, got {:?}",
                self.rotation
            )));
        }
        if !(-1000.0..=10000.0).contains(&self.height) {
            return Err(StampError(format!(
                "stamp height must be -1000..10000 m, got {}",
                self.height
            )));
        }
        if !(0.0..=1.0).contains(&self.falloff) {
            return Err(StampError(format!(
                "stamp falloff must be 0..1, got {}",
                self.falloff
            )));
        }
        if self.kind == StampKind::Heightmap {
            match &self.image {
                None => {
                    return Err(StampError(
                        "a heightmap stamp needs a heightmap image".into(),
                    ))
                }
                Some(img) => img.validate()?,
            }
        }
        Ok(())
    }
}

fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// The edge weight: 1 inside, fading to 0 over the last `falloff` of the radius.
fn edge(t: f32, falloff: f32) -> f32 {
    if falloff <= 0.0 {
        return if t <= 1.0 { 1.0 } else { 0.0 };
    }
    1.0 - smoothstep(1.0 - falloff, 1.0, t)
}

/// Write `stamps` into `layer` (in their order; offsets add, the last plateau and coast win).
pub fn rasterize(stamps: &[Stamp], layer: &mut SculptLayer) -> Result<(), StampError> {
    for s in stamps {
        s.validate()?;
    }
    let n = layer.resolution();
    let world = layer.world_size();
    let sp = world / (n - 1) as f32;
    let half = world * 0.5;
    for s in stamps {
        let (cos, sin) = (s.rotation[0], s.rotation[1]);
        // The square of a heightmap reaches to its corners.
        let reach = if s.kind == StampKind::Heightmap {
            (s.radius_x * s.radius_x + s.radius_z * s.radius_z).sqrt()
        } else {
            s.radius_x.max(s.radius_z)
        };
        let lo = |c: f32| (((c - reach + half) / sp).floor().max(0.0) as usize).min(n - 1);
        let hi = |c: f32| (((c + reach + half) / sp).ceil().max(0.0) as usize).min(n - 1);
        let (x0, x1, z0, z1) = (
            lo(s.center[0]),
            hi(s.center[0]),
            lo(s.center[1]),
            hi(s.center[1]),
        );
        for j in z0..=z1 {
            for i in x0..=x1 {
                let dx = i as f32 * sp - half - s.center[0];
                let dz = j as f32 * sp - half - s.center[1];
                // Into the stamp's frame (inverse of its yaw), then its radii.
                let lx = cos * dx - sin * dz;
                let lz = sin * dx + cos * dz;
                let (ux, uz) = (lx / s.radius_x, lz / s.radius_z);
                let t = if s.kind == StampKind::Heightmap {
                    ux.abs().max(uz.abs())
                } else {
                    (ux * ux + uz * uz).sqrt()
                };
                if t >= 1.0 {
                    continue;
                }
                let k = j * n + i;
                let bump = 1.0 - smoothstep(0.0, 1.0, t);
                let w = edge(t, s.falloff);
                match s.kind {
                    StampKind::Mountain => layer.offset[k] += s.height * bump,
                    StampKind::Basin => layer.offset[k] -= s.height * bump,
                    StampKind::Crater => {
                        let bowl = if t < 0.8 {
                            let u = t / 0.8;
                            1.0 - u * u
                        } else {
                            0.0
                        };
                        let rim = 1.0 - smoothstep(0.0, 0.2, (t - 0.8).abs());
                        layer.offset[k] += s.height * (0.3 * rim * w - bowl);
                    }
                    StampKind::Plateau => {
                        if w > 0.0 {
                            layer.level[k] = s.height;
                            layer.level_weight[k] = layer.level_weight[k].max(w);
                        }
                    }
                    StampKind::Bay => {
                        layer.coast[k] = layer.coast[k].min(-w);
                    }
                    StampKind::Islet => {
                        layer.coast[k] = layer.coast[k].max(w);
                        layer.offset[k] += s.height * bump;
                    }
                    StampKind::Heightmap => {
                        if let Some(img) = &s.image {
                            let v = img.sample(0.5 * (ux + 1.0), 0.5 * (uz + 1.0));
                            layer.offset[k] += s.height * v * w;
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// The layer the generator uses: `stamps` rasterized at `resolution` over `world_size`, then
/// the brush's `brush` layer on top (its offsets add; where it flattens or sketches the coast,
/// it wins). None when there is neither.
pub fn compose(
    stamps: &[Stamp],
    brush: Option<&SculptLayer>,
    resolution: usize,
    world_size: f32,
) -> Result<Option<SculptLayer>, StampError> {
    if stamps.is_empty() {
        return Ok(brush.cloned());
    }
    let mut layer =
        SculptLayer::new(resolution, world_size).map_err(|e| StampError(e.to_string()))?;
    rasterize(stamps, &mut layer)?;
    if let Some(b) = brush {
        let b = if b.fits(resolution, world_size) {
            std::borrow::Cow::Borrowed(b)
        } else {
            std::borrow::Cow::Owned(b.resample(resolution, world_size))
        };
        for k in 0..resolution * resolution {
            layer.offset[k] += b.offset[k];
            let w = b.level_weight[k];
            if w > 0.0 {
                layer.level[k] = b.level[k];
                layer.level_weight[k] = layer.level_weight[k].max(w);
            }
            if b.coast[k] != 0.0 {
                layer.coast[k] = b.coast[k];
            }
        }
    }
    Ok(Some(layer))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(kind: StampKind) -> Stamp {
        Stamp {
            kind,
            center: [10.0, -20.0],
            radius_x: 40.0,
            radius_z: 40.0,
            rotation: [1.0, 0.0],
            height: 25.0,
            falloff: 0.3,
            image: None,
        }
    }

    /// A 9 × 5 image rising from 0 at its left column to 1 at its right.
    fn ramp() -> StampImage {
        StampImage {
            width: 9,
            height: 5,
            values: (0..45).map(|k| (k % 9) as f32 / 8.0).collect(),
        }
    }

    #[test]
    fn a_heightmap_stamp_needs_a_valid_image() {
        let mut s = stamp(StampKind::Heightmap);
        assert!(s
            .validate()
            .unwrap_err()
            .0
            .contains("needs a heightmap image"));
        let mut bad = ramp();
        bad.values[3] = 1.5;
        s.image = Some(std::sync::Arc::new(bad));
        assert!(s.validate().is_err());
        let mut short = ramp();
        short.values.pop();
        s.image = Some(std::sync::Arc::new(short));
        assert!(s.validate().is_err());
        s.image = Some(std::sync::Arc::new(ramp()));
        assert!(s.validate().is_ok());
    }

    fn at(layer: &SculptLayer, x: f32, z: f32) -> usize {
        let n = layer.resolution();
        let sp = layer.world_size() / (n - 1) as f32;
        let h = layer.world_size() * 0.5;
        let i = ((x + h) / sp).round() as usize;
        let j = ((z + h) / sp).round() as usize;
        j * n + i
    }

    #[test]
    fn each_kind_writes_its_plane_around_the_centre_only() {
        for kind in StampKind::ALL {
            let mut l = SculptLayer::new(129, 256.0).unwrap();
            let mut st = stamp(kind);
            if kind == StampKind::Heightmap {
                st.image = Some(std::sync::Arc::new(ramp()));
            }
            rasterize(&[st], &mut l).unwrap();
            let c = at(&l, 10.0, -20.0);
            let far = at(&l, -100.0, 100.0);
            match kind {
                StampKind::Mountain => assert!((l.offset[c] - 25.0).abs() < 1e-3),
                StampKind::Basin => assert!((l.offset[c] + 25.0).abs() < 1e-3),
                StampKind::Crater => {
                    assert!((l.offset[c] + 25.0).abs() < 1e-3);
                    // The rim stands above the land around.
                    let rim = at(&l, 10.0 + 0.8 * 40.0, -20.0);
                    assert!(l.offset[rim] > 5.0, "{}", l.offset[rim]);
                }
                StampKind::Plateau => {
                    assert_eq!(l.level[c], 25.0);
                    assert_eq!(l.level_weight[c], 1.0);
                }
                StampKind::Bay => assert_eq!(l.coast[c], -1.0),
                StampKind::Islet => {
                    assert_eq!(l.coast[c], 1.0);
                    assert!(l.offset[c] > 24.0);
                }
                StampKind::Heightmap => {
                    // The ramp: half way at the centre, rising along +x, flat along z.
                    assert!((l.offset[c] - 12.5).abs() < 0.5, "{}", l.offset[c]);
                    let e = at(&l, 10.0 + 20.0, -20.0);
                    let w = at(&l, 10.0 - 20.0, -20.0);
                    assert!((l.offset[e] - 18.75).abs() < 0.5, "{}", l.offset[e]);
                    assert!((l.offset[w] - 6.25).abs() < 0.5, "{}", l.offset[w]);
                    let n = at(&l, 10.0, -20.0 + 20.0);
                    assert!((l.offset[n] - l.offset[c]).abs() < 0.5);
                    // The square's corner region is covered (not a disc).
                    assert!(l.offset[at(&l, 10.0 + 26.0, -20.0 + 26.0)] > 10.0);
                }
            }
            assert_eq!(l.offset[far], 0.0);
            assert_eq!(l.level_weight[far], 0.0);
            assert_eq!(l.coast[far], 0.0);
        }
    }

    #[test]
    fn rotation_and_scale_shape_the_footprint() {
        let mut s = stamp(StampKind::Mountain);
        s.radius_x = 60.0;
        s.radius_z = 15.0;
        let mut a = SculptLayer::new(129, 256.0).unwrap();
        rasterize(&[s.clone()], &mut a).unwrap();
        // Long along x, short along z.
        assert!(a.offset[at(&a, 10.0 + 40.0, -20.0)] > 0.0);
        assert_eq!(a.offset[at(&a, 10.0, -20.0 + 40.0)], 0.0);
        // Turned a quarter: long along z.
        s.rotation = [0.0, 1.0];
        let mut b = SculptLayer::new(129, 256.0).unwrap();
        rasterize(&[s.clone()], &mut b).unwrap();
        assert_eq!(b.offset[at(&b, 10.0 + 40.0, -20.0)], 0.0);
        assert!(b.offset[at(&b, 10.0, -20.0 + 40.0)] > 0.0);
    }

    #[test]
    fn moving_a_stamp_moves_only_what_it_covers() {
        let mut a = SculptLayer::new(129, 256.0).unwrap();
        rasterize(&[stamp(StampKind::Plateau)], &mut a).unwrap();
        let mut s = stamp(StampKind::Plateau);
        s.center = [50.0, -20.0];
        let mut b = SculptLayer::new(129, 256.0).unwrap();
        rasterize(&[s.clone()], &mut b).unwrap();
        assert_eq!(b.level_weight[at(&b, 50.0, -20.0)], 1.0);
        // Far from both positions nothing differs.
        let far = at(&a, -100.0, 100.0);
        assert_eq!(a.level_weight[far], b.level_weight[far]);
    }

    #[test]
    fn compose_puts_the_brush_on_top_and_bad_stamps_are_errors() {
        let mut brush = SculptLayer::new(129, 256.0).unwrap();
        let k = at(&brush, 10.0, -20.0);
        brush.offset[k] = 2.0;
        brush.coast[k] = -1.0;
        let l = compose(&[stamp(StampKind::Islet)], Some(&brush), 129, 256.0)
            .unwrap()
            .unwrap();
        assert!((l.offset[k] - 27.0).abs() < 1e-3);
        assert_eq!(l.coast[k], -1.0);
        assert!(compose(&[], None, 129, 256.0).unwrap().is_none());
        let mut bad = stamp(StampKind::Mountain);
        bad.radius_x = f32::NAN;
        assert!(compose(&[bad.clone()], None, 129, 256.0).is_err());
        bad.radius_x = 0.0;
        assert!(bad.validate().is_err());
        let mut bad = stamp(StampKind::Mountain);
        bad.falloff = 2.0;
        assert!(bad.validate().is_err());
        let mut bad = stamp(StampKind::Mountain);
        bad.rotation = [2.0, 0.0];
        assert!(bad.validate().is_err());
    }
}

#[cfg(test)]
mod pipeline_tests {
    use super::*;
    use crate::IslandParams;
    use std::sync::Arc;

    #[test]
    fn a_mountain_stamp_raises_the_generated_island() {
        // A round outline: AUTO may pick VOLCANIC, whose caldera is dug after the sculpt layer.
        let mut p = IslandParams {
            seed: 21,
            resolution: 129,
            world_size: 1024.0,
            ..IslandParams::default()
        };
        p.shape.shape = crate::params::IslandShape::Round;
        let plain = crate::pipeline::generate(&p).unwrap();
        let stamp = Stamp {
            kind: StampKind::Mountain,
            center: [0.0, 0.0],
            radius_x: 80.0,
            radius_z: 80.0,
            rotation: [1.0, 0.0],
            height: 40.0,
            falloff: 0.3,
            image: None,
        };
        let layer = compose(&[stamp], None, 129, 1024.0).unwrap().unwrap();
        let q = IslandParams {
            sculpt: Some(Arc::new(layer)),
            ..p.clone()
        };
        let stamped = crate::pipeline::generate(&q).unwrap();
        let c = 64 * 129 + 64;
        assert!(
            stamped.field.heights[c] > plain.field.heights[c] + 25.0,
            "{} vs {}",
            stamped.field.heights[c],
            plain.field.heights[c]
        );
    }

    #[test]
    fn a_plateau_in_the_caldera_keeps_its_level() {
        // A VOLCANIC island's crater is dug after the erosion; a stamp there must still win.
        let mut p = IslandParams {
            seed: 5,
            resolution: 257,
            world_size: 2048.0,
            ..IslandParams::default()
        };
        p.shape.shape = crate::params::IslandShape::Volcanic;
        p.shape.crater_lake = true;
        let (cx, cz, radius, crater) = crate::shape::volcano(&p).expect("a volcano");
        assert!(crater);
        let half = 0.5 * p.world_size;
        let plain = crate::pipeline::generate(&p).unwrap();
        let n = p.resolution as usize;
        let at = |x: f32, z: f32| {
            let i = (((x + half) / p.spacing()).round() as usize).min(n - 1);
            let j = (((z + half) / p.spacing()).round() as usize).min(n - 1);
            j * n + i
        };
        let (x0, z0) = (cx * half, cz * half);
        let r = 0.6 * crate::shape::CRATER_RADIUS * radius * half;
        let level = plain.field.heights[at(x0, z0)] + 30.0;
        let stamp = Stamp {
            kind: StampKind::Plateau,
            center: [x0, z0],
            radius_x: r,
            radius_z: r,
            rotation: [1.0, 0.0],
            height: level,
            falloff: 0.3,
            image: None,
        };
        let layer = compose(&[stamp], None, n, p.world_size).unwrap().unwrap();
        let q = IslandParams {
            sculpt: Some(Arc::new(layer)),
            ..p.clone()
        };
        let stamped = crate::pipeline::generate(&q).unwrap();
        let inner = 0.6 * r;
        let mut checked = 0;
        for j in 0..n {
            for i in 0..n {
                let (x, z) = (i as f32 * p.spacing() - half, j as f32 * p.spacing() - half);
                if (x - x0).hypot(z - z0) < inner {
                    let h = stamped.field.heights[j * n + i];
                    assert!(
                        (h - level).abs() <= 0.5,
                        "({x}, {z}): {h} vs plateau {level}"
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 20, "{checked} samples on the plateau");
    }
}
