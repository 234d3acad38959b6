//! Island outlines ([`IslandShape`]): the land / sea mask of the mask stage.
//!
//! Every generated shape is a signed field in world space (positive inside): a signed
//! distance of the shape's geometry (ellipse, disc minus bay disc, union of discs, ring, disc),
//! taken at a domain-warped position (two scales of warp: bends, peninsulas and capes) plus an
//! additive multi-scale fBm (coves and small capes). Positions are in units of half the map
//! (`p / (world_size / 2)`, the centre at 0) and every noise wavelength is a fixed fraction of
//! the map: the same seed and shape give the same island at every resolution, up to sampling.
//!
//! Land is where the field is above a threshold picked by exact selection over the map's
//! samples ([`select_threshold`]) so that the outline covers [`ShapeParams::land_fraction`] of
//! the map (or the shape's own size). The field of each sample depends only on its position,
//! and the selection is serial: the mask does not depend on the thread count.
//!
//! * ROUND with `land_fraction` 0 is [`crate::mask::island_mask`] (the earlier outline,
//!   bit for bit).
//! * AUTO draws the shape and its parameters from the seed ([`resolve`]).
//! * [`Algorithm::GaussianIslands`] with `gaussian.separation > 0`: the outline is the union
//!   of one disc per mountain (0.8 of its radius), so each mountain is its own island.
//! * A [`CoastMask`] replaces the outline (bilinear resampling, land where ≥ 0.5).
//!
//! The map's border ring (`margin` metres) is always sea. The VOLCANIC cone is a change of the
//! heights ([`apply_relief`], run at the start of the erosion stage, on both backends); the
//! ATOLL lagoon is classified as sea by the water map ([`lagoon_sample`]).
//!
//! No platform math library calls: angles go through [`sin_cos_deg`] (a polynomial), distances
//! through `sqrt` (correctly rounded everywhere).

use crate::gaussian_islands::gaussian_mountains;
use crate::gradient_noise::Fbm;
use crate::grid::par_rows;
use crate::hash::{hash_u32, stage_seed, tag, unit};
use crate::mask::island_mask;
use crate::params::border_margin;
use crate::params::{Algorithm, CoastMask, IslandParams, IslandShape, ParamError};
use rayon::prelude::*;

/// Stage tag of the shape's random draws and noises (AUTO's choices, placement, warps).
pub const SHAPE_TAG: u32 = 8;

/// Own size (land fraction of the map) of each generated shape when
/// [`ShapeParams::land_fraction`](crate::params::ShapeParams::land_fraction) is 0.
pub const fn natural_land_fraction(s: IslandShape) -> f32 {
    match s {
        IslandShape::Auto | IslandShape::Round => 0.3,
        IslandShape::Elongated => 0.2,
        IslandShape::Crescent => 0.26,
        IslandShape::Archipelago => 0.2,
        IslandShape::Atoll => 0.11,
        IslandShape::Volcanic => 0.28,
    }
}

/// A shape with every parameter decided (AUTO resolved from the seed).
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    /// The shape (never [`IslandShape::Auto`]).
    pub shape: IslandShape,
    /// Target land fraction of the outline; 0 only for the legacy ROUND outline.
    pub land_fraction: f32,
    /// ELONGATED length / width.
    pub aspect_ratio: f32,
    /// ELONGATED long axis, degrees.
    pub orientation: f32,
    /// CRESCENT bay depth, fraction of the diameter.
    pub bay_depth: f32,
    /// CRESCENT bay direction, degrees.
    pub bay_direction: f32,
    /// ARCHIPELAGO islands.
    pub island_count: u32,
    /// VOLCANIC crater.
    pub crater_lake: bool,
    /// Seed-drawn numbers in [0, 1) for the shape's own variations.
    draws: [f32; 8],
}

/// `k`-th number in [0, 1) of the shape stream of seed `s`.
fn draw(s: u32, k: u32) -> f32 {
    unit(hash_u32(
        s ^ hash_u32(k.wrapping_mul(0x9e37_79b9).wrapping_add(0x51ed)),
    ))
}

/// The shape `p` asks for, with AUTO resolved from the seed: shape, land fraction (the
/// shape's own size × 0.8..1.2), aspect 1.9..3.5, orientation, bay depth 0.35..0.75 and
/// direction, 3..6 islands, crater lake in 60 % of volcanoes.
pub fn resolve(p: &IslandParams) -> Resolved {
    let s = stage_seed(p.seed, SHAPE_TAG);
    let d = |k| draw(s, k);
    let sp = &p.shape;
    let mut draws = [0.0; 8];
    for (k, v) in draws.iter_mut().enumerate() {
        *v = d(100 + k as u32);
    }
    if sp.shape != IslandShape::Auto {
        let lf = if sp.land_fraction > 0.0 {
            sp.land_fraction
        } else if sp.shape == IslandShape::Round {
            0.0
        } else {
            natural_land_fraction(sp.shape)
        };
        return Resolved {
            shape: sp.shape,
            land_fraction: lf,
            aspect_ratio: sp.aspect_ratio,
            orientation: sp.orientation,
            bay_depth: sp.bay_depth,
            bay_direction: sp.bay_direction,
            island_count: sp.island_count,
            crater_lake: sp.crater_lake,
            draws,
        };
    }
    let pick = d(0);
    let shape = if pick < 0.28 {
        IslandShape::Elongated
    } else if pick < 0.46 {
        IslandShape::Crescent
    } else if pick < 0.70 {
        IslandShape::Archipelago
    } else if pick < 0.83 {
        IslandShape::Atoll
    } else {
        IslandShape::Volcanic
    };
    let lf = if sp.land_fraction > 0.0 {
        sp.land_fraction
    } else {
        natural_land_fraction(shape) * (0.8 + 0.4 * d(7))
    };
    Resolved {
        shape,
        land_fraction: lf,
        aspect_ratio: 1.9 + 1.6 * d(1),
        orientation: 180.0 * d(2),
        bay_depth: 0.35 + 0.4 * d(3),
        bay_direction: 360.0 * d(4),
        island_count: 3 + (4.0 * d(5)) as u32,
        crater_lake: d(6) < 0.6,
        draws,
    }
}

/// `(sin, cos)` of `deg` degrees: a polynomial (no platform math library), error below 1e-6.
pub fn sin_cos_deg(deg: f32) -> (f32, f32) {
    // Reduce to [-180, 180), then to x in [-90, 90] with the cosine's sign.
    let mut t = deg / 360.0;
    t -= (t + 0.5).floor();
    let mut a = t * 360.0;
    let mut cos_sign = 1.0;
    if a > 90.0 {
        a = 180.0 - a;
        cos_sign = -1.0;
    } else if a < -90.0 {
        a = -180.0 - a;
        cos_sign = -1.0;
    }
    let x = a * (std::f32::consts::PI / 180.0);
    let x2 = x * x;
    // Taylor series to x^13 / x^12: exact enough on [-pi/2, pi/2] in f32.
    let sin = x
        * (1.0
            - x2 / 6.0
                * (1.0
                    - x2 / 20.0
                        * (1.0
                            - x2 / 42.0
                                * (1.0 - x2 / 72.0 * (1.0 - x2 / 110.0 * (1.0 - x2 / 156.0))))));
    let cos = 1.0
        - x2 / 2.0
            * (1.0
                - x2 / 12.0
                    * (1.0
                        - x2 / 30.0 * (1.0 - x2 / 56.0 * (1.0 - x2 / 90.0 * (1.0 - x2 / 132.0)))));
    (sin, cos_sign * cos)
}

/// The geometry of a generated shape, in units of half the map.
#[derive(Clone, Debug)]
enum Geometry {
    /// Ellipse with semi-axes `a` (along `(c, s)`) and `b`, bent by `bend` (sideways offset
    /// of `bend · (x/a)²`).
    Ellipse {
        a: f32,
        b: f32,
        c: f32,
        s: f32,
        bend: f32,
    },
    /// Disc of radius `r` minus the bay disc at `(bx, bz)` of radius `rb`.
    Crescent { r: f32, bx: f32, bz: f32, rb: f32 },
    /// Union of discs `(x, z, r)`.
    Discs(Vec<[f32; 3]>),
    /// Ring of radius `r`, half-width `w`, stretched by `1 + e` along `(c, s)` and squeezed
    /// by `1 - e` across.
    Ring {
        r: f32,
        w: f32,
        e: f32,
        c: f32,
        s: f32,
    },
}

/// The signed distance (positive inside) of an [`Geometry::Ellipse`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn ellipse(x: f32, z: f32, a: f32, b: f32, c: f32, s: f32, bend: f32) -> f32 {
    let (ia, ib) = (1.0 / a, 1.0 / b);
    let u = x * c + z * s;
    let v0 = -x * s + z * c;
    let t = u * ia;
    let v = v0 - bend * t * t;
    // Approximate ellipse distance k0 (k0 - 1) / k1.
    let (pa, pb) = (t, v * ib);
    let k0 = (pa * pa + pb * pb).sqrt();
    let (qa, qb) = (pa * ia, pb * ib);
    let k1 = (qa * qa + qb * qb).sqrt();
    if k1 < 1e-12 {
        a.min(b)
    } else {
        -k0 * (k0 - 1.0) / k1
    }
}

/// The signed distance (positive inside) of a [`Geometry::Crescent`].
#[inline(always)]
fn crescent(x: f32, z: f32, r: f32, bx: f32, bz: f32, rb: f32) -> f32 {
    let disc = r - (x * x + z * z).sqrt();
    let (dx, dz) = (x - bx, z - bz);
    let bay = (dx * dx + dz * dz).sqrt() - rb;
    disc.min(bay)
}

/// The signed distance (positive inside) of [`Geometry::Discs`].
#[inline(always)]
fn discs(x: f32, z: f32, d: &[[f32; 3]]) -> f32 {
    // max over discs of r - |p - c|; the square root only where a disc can win
    // (|p - c| < r - best).
    let mut best = f32::NEG_INFINITY;
    for &[cx, cz, r] in d {
        let (dx, dz) = (x - cx, z - cz);
        let d2 = dx * dx + dz * dz;
        let reach = r - best;
        if best == f32::NEG_INFINITY || d2 < reach * reach {
            best = best.max(r - d2.sqrt());
        }
    }
    best
}

/// The signed distance (positive inside) of a [`Geometry::Ring`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn ring(x: f32, z: f32, r: f32, w: f32, e: f32, c: f32, s: f32) -> f32 {
    let u = (x * c + z * s) / (1.0 + e);
    let v = (-x * s + z * c) / (1.0 - e);
    w - ((u * u + v * v).sqrt() - r).abs()
}

/// What one row of [`generated_field`] needs besides its buffers.
struct FieldRow {
    spacing: f32,
    half: f32,
    margin: f32,
    /// The row's distance to the nearer z border, metres.
    bz: f32,
    /// The row's z in half-map units (-1..1).
    v: f32,
    detail: f32,
}

/// `out[x] = inside(u + dx[x], v + dz[x]) + detail · noise[x]`, `-inf` in the border ring:
/// [`generated_field`]'s arithmetic, branch-free so that it vectorises.
#[inline(always)]
fn field_row_with(
    out: &mut [f32],
    dx: &[f32],
    dz: &[f32],
    noise: &[f32],
    r: &FieldRow,
    inside: impl Fn(f32, f32) -> f32,
) {
    let n = out.len().min(dx.len()).min(dz.len()).min(noise.len());
    for x in 0..n {
        let px = x as f32 * r.spacing;
        let border = (r.half - (px - r.half).abs()).min(r.bz);
        let u = px / r.half - 1.0;
        let value = inside(u + dx[x], r.v + dz[x]) + r.detail * noise[x];
        out[x] = if border <= r.margin {
            f32::NEG_INFINITY
        } else {
            value
        };
    }
}

/// [`field_row_with`] for `geo`, the shape chosen once per row.
#[inline(always)]
fn field_row_body(
    out: &mut [f32],
    dx: &[f32],
    dz: &[f32],
    noise: &[f32],
    r: &FieldRow,
    geo: &Geometry,
) {
    match geo {
        &Geometry::Ellipse { a, b, c, s, bend } => field_row_with(out, dx, dz, noise, r, |x, z| {
            ellipse(x, z, a, b, c, s, bend)
        }),
        &Geometry::Crescent { r: cr, bx, bz, rb } => {
            field_row_with(out, dx, dz, noise, r, |x, z| crescent(x, z, cr, bx, bz, rb))
        }
        Geometry::Discs(d) => field_row_with(out, dx, dz, noise, r, |x, z| discs(x, z, d)),
        &Geometry::Ring { r: rr, w, e, c, s } => {
            field_row_with(out, dx, dz, noise, r, |x, z| ring(x, z, rr, w, e, c, s))
        }
    }
}

crate::simd::dispatch! {
    /// One row of [`generated_field`] (AVX2 copy when available; no FMA, identical results).
    fn field_row(out: &mut [f32], dx: &[f32], dz: &[f32], noise: &[f32], r: &FieldRow, geo: &Geometry) => field_row_body
}

/// Noise amplitudes (half-map units) of a generated shape: large warp, medium warp, coast
/// detail.
#[derive(Clone, Copy, Debug)]
struct Roughness {
    big: f32,
    mid: f32,
    detail: f32,
}

/// Wavelengths of the warps and the detail as fractions of the map size.
const BIG_SCALE: f32 = 0.55;
const MID_SCALE: f32 = 0.2;
const DETAIL_SCALE: f32 = 0.09;
/// Cells per side of the grid the warps are evaluated on (then interpolated).
const WARP_GRID: usize = 256;

/// Geometry and noise of a resolved generated shape (not ROUND).
fn geometry(p: &IslandParams, r: &Resolved) -> (Geometry, Roughness) {
    let area = 4.0 * r.land_fraction;
    let pi = std::f32::consts::PI;
    let dr = &r.draws;
    match r.shape {
        IslandShape::Elongated => {
            let (s, c) = sin_cos_deg(r.orientation);
            let mut b = (area / (pi * r.aspect_ratio)).sqrt();
            let mut a = b * r.aspect_ratio;
            // Longest semi-axis that fits in the map along that direction.
            let a_max = (0.8 / c.abs().max(s.abs())).min(1.05);
            if a > a_max {
                a = a_max;
                b = area / (pi * a);
            }
            let bend = (dr[0] - 0.5) * 0.8 * b;
            (
                Geometry::Ellipse { a, b, c, s, bend },
                Roughness {
                    big: 0.3,
                    mid: 0.16,
                    detail: 0.09,
                },
            )
        }
        IslandShape::Crescent => {
            let depth = r.bay_depth;
            let rr = ((area / pi) / (1.0 - 0.5 * depth)).sqrt().min(0.78);
            // Bay from a narrow inlet to a wide sound.
            let rb = (0.55 + 0.35 * dr[3]) * rr;
            let dist = rr + rb - 2.0 * rr * depth;
            let (s, c) = sin_cos_deg(r.bay_direction);
            (
                Geometry::Crescent {
                    r: rr,
                    bx: c * dist,
                    bz: s * dist,
                    rb,
                },
                Roughness {
                    big: 0.3,
                    mid: 0.16,
                    detail: 0.09,
                },
            )
        }
        IslandShape::Archipelago => (
            Geometry::Discs(archipelago(p, r, area)),
            Roughness {
                big: 0.3,
                mid: 0.14,
                detail: 0.08,
            },
        ),
        IslandShape::Atoll => {
            let rr = 0.48 + 0.1 * dr[0];
            let (s, c) = sin_cos_deg(360.0 * dr[1]);
            (
                Geometry::Ring {
                    r: rr,
                    w: r.land_fraction / (pi * rr),
                    e: 0.08 + 0.22 * dr[2],
                    c,
                    s,
                },
                Roughness {
                    big: 0.25,
                    mid: 0.06,
                    detail: 0.02,
                },
            )
        }
        IslandShape::Volcanic => {
            let (cx, cz) = volcano_centre(r);
            (
                Geometry::Discs(vec![[cx, cz, (area / pi).sqrt()]]),
                Roughness {
                    big: 0.25,
                    mid: 0.14,
                    detail: 0.08,
                },
            )
        }
        IslandShape::Auto | IslandShape::Round => unreachable!("not a generated geometry"),
    }
}

/// Centre of the volcano, half-map units.
fn volcano_centre(r: &Resolved) -> (f32, f32) {
    ((r.draws[1] - 0.5) * 0.2, (r.draws[2] - 0.5) * 0.2)
}

/// Discs of an archipelago covering about `area` (half-map units²): one main island and
/// smaller ones, placed by hashed candidates with a sea channel between any two.
fn archipelago(p: &IslandParams, r: &Resolved, area: f32) -> Vec<[f32; 3]> {
    let s = stage_seed(p.seed, SHAPE_TAG) ^ 0xa5c3_0f17;
    let n = r.island_count as usize;
    let mut w: Vec<f32> = (0..n)
        .map(|i| {
            if i == 0 {
                1.0
            } else {
                0.35 + 0.5 * draw(s, i as u32)
            }
        })
        .collect();
    w[1..].sort_by(|a, b| b.total_cmp(a));
    let sum2: f32 = w.iter().map(|v| v * v).sum();
    let k = (area / (std::f32::consts::PI * sum2)).sqrt();
    let gap = 0.1;
    let mut discs: Vec<[f32; 3]> = Vec::with_capacity(n);
    for (i, wi) in w.iter().enumerate() {
        let mut ri = wi * k;
        'shrink: for _ in 0..5 {
            let lim = (0.8 - ri).max(0.0);
            for t in 0..48u32 {
                let key = (i as u32) * 1000 + t;
                let (x, z) = if i == 0 && t == 0 {
                    ((draw(s, key) - 0.5) * lim, (draw(s, key + 500) - 0.5) * lim)
                } else {
                    (
                        (2.0 * draw(s, key) - 1.0) * lim,
                        (2.0 * draw(s, key + 500) - 1.0) * lim,
                    )
                };
                let ok = discs.iter().all(|&[cx, cz, rc]| {
                    let (dx, dz) = (x - cx, z - cz);
                    (dx * dx + dz * dz).sqrt() >= ri + rc + gap
                });
                if ok {
                    discs.push([x, z, ri]);
                    break 'shrink;
                }
            }
            ri *= 0.8;
        }
    }
    discs
}

/// Sample-independent constants of the noise rows of a generated field.
struct Noises {
    big: [Fbm; 2],
    mid: [Fbm; 2],
    detail: Fbm,
}

impl Noises {
    fn new(seed: u64) -> Noises {
        let s = stage_seed(seed, SHAPE_TAG);
        let f = |salt: u32, oct| Fbm::classic(oct, hash_u32(s ^ salt));
        Noises {
            big: [f(0x1111, 2), f(0x2222, 2)],
            mid: [f(0x3333, 2), f(0x4444, 2)],
            detail: f(0x5555, 3),
        }
    }
}

/// The signed field of a generated (or gaussian-following) outline over the map: `None`
/// where the legacy ROUND mask applies. Samples inside the border ring are `-inf`.
fn generated_field(p: &IslandParams, r: &Resolved) -> Option<Vec<f32>> {
    let (geo, rough) = if gaussian_follows(p) {
        (Geometry::Discs(gaussian_discs(p)), gaussian_roughness())
    } else if r.shape == IslandShape::Round {
        return None;
    } else {
        geometry(p, r)
    };
    let n = p.resolution as usize;
    let world = p.world_size;
    let half = world * 0.5;
    let spacing = p.spacing();
    let margin = border_margin(p);
    let noises = Noises::new(p.seed);
    // The warps (wavelengths of 20 % of the map and more) on a grid of at most 257² samples
    // (every `stride`-th sample), bilinearly interpolated: the same values at stride 1.
    // Powers of two (n - 1 is one): shifts instead of divisions per sample.
    let stride = ((n - 1) / WARP_GRID).max(1);
    let shift = stride.trailing_zeros();
    let nc = (n - 1) / stride + 1;
    let cs = spacing * stride as f32;
    let mut warp = vec![[0.0f32; 2]; nc * nc];
    par_rows(&mut warp, nc, |zc, row| {
        let pz = zc as f32 * cs;
        let mut bufs = [
            vec![0.0f32; nc],
            vec![0.0f32; nc],
            vec![0.0f32; nc],
            vec![0.0f32; nc],
        ];
        let rows: [(&Fbm, f32); 4] = [
            (&noises.big[0], BIG_SCALE),
            (&noises.big[1], BIG_SCALE),
            (&noises.mid[0], MID_SCALE),
            (&noises.mid[1], MID_SCALE),
        ];
        for (buf, (f, sc)) in bufs.iter_mut().zip(rows) {
            let ns = sc * world;
            f.add_row(buf, pz / ns, cs / ns, 0.0);
        }
        for (x, w) in row.iter_mut().enumerate() {
            *w = [
                rough.big * bufs[0][x] + rough.mid * bufs[2][x],
                rough.big * bufs[1][x] + rough.mid * bufs[3][x],
            ];
        }
    });
    let inv = 1.0 / stride as f32;
    let mut field: Vec<f32> = crate::memory::zeros(n * n);
    par_rows(&mut field, n, |z, row| {
        let mut detail = vec![0.0f32; n];
        let (mut wx, mut wz) = (vec![0.0f32; n], vec![0.0f32; n]);
        let pz = z as f32 * spacing;
        let ns = DETAIL_SCALE * world;
        noises
            .detail
            .add_row(&mut detail, pz / ns, spacing / ns, 0.0);
        let v = pz / half - 1.0;
        let bz = half - (pz - half).abs();
        let zc0 = (z >> shift).min(nc - 1);
        let zc1 = (zc0 + 1).min(nc - 1);
        let tz = (z - zc0 * stride) as f32 * inv;
        let (w0, w1) = (
            &warp[zc0 * nc..(zc0 + 1) * nc],
            &warp[zc1 * nc..(zc1 + 1) * nc],
        );
        // The warps of the row (bilinear in the coarse grid, a run of samples per coarse
        // cell: the cell's corner values and differences once), then the outline.
        let mut x = 0;
        while x < n {
            let xc0 = (x >> shift).min(nc - 1);
            let xc1 = (xc0 + 1).min(nc - 1);
            let end = if xc0 == nc - 1 { n } else { (xc0 + 1) << shift };
            for (k, out) in [&mut wx[x..end], &mut wz[x..end]].into_iter().enumerate() {
                let (c0, e0) = (w0[xc0][k], w0[xc1][k] - w0[xc0][k]);
                let (c1, e1) = (w1[xc0][k], w1[xc1][k] - w1[xc0][k]);
                for (j, dk) in out.iter_mut().enumerate() {
                    let tx = (x + j - xc0 * stride) as f32 * inv;
                    let a = c0 + e0 * tx;
                    let b = c1 + e1 * tx;
                    *dk = a + (b - a) * tz;
                }
            }
            x = end;
        }
        let r = FieldRow {
            spacing,
            half,
            margin,
            bz,
            v,
            detail: rough.detail,
        };
        field_row(row, &wx, &wz, &detail, &r, &geo);
    });
    Some(field)
}

/// Does the outline follow the gaussian mountains (`GaussianIslands` with separation > 0)?
pub fn gaussian_follows(p: &IslandParams) -> bool {
    p.algorithm == Algorithm::GaussianIslands && p.gaussian.separation > 0.0
}

fn gaussian_roughness() -> Roughness {
    Roughness {
        big: 0.0,
        mid: 0.015,
        detail: 0.012,
    }
}

/// One disc per gaussian mountain (0.8 of its radius), half-map units.
fn gaussian_discs(p: &IslandParams) -> Vec<[f32; 3]> {
    let half = p.world_size * 0.5;
    gaussian_mountains(
        p.world_size,
        p.gaussian.cells,
        p.gaussian.density,
        p.gaussian.separation,
        p.seed,
        tag::BASE,
    )
    .iter()
    .map(|m| [m.x / half - 1.0, m.z / half - 1.0, 0.8 * m.radius / half])
    .collect()
}

/// The threshold `t` such that `count(field >= t)` is `land_fraction` of all samples (exact
/// selection; `-inf` samples never count). Exact: independent of the thread count.
///
/// A histogram of the top 16 bits of the values' order-preserving integer keys finds the
/// bucket holding the k-th largest value; only that bucket's values are then selected exactly
/// (the result equals a full sort's).
pub fn select_threshold(field: &[f32], land_fraction: f32) -> f32 {
    // Order-preserving integer keys of the floats; a histogram of their top 16 bits.
    let key = |v: f32| {
        let b = v.to_bits();
        if b >> 31 == 1 {
            !b
        } else {
            b | 0x8000_0000
        }
    };
    // Per-chunk histograms summed: integer counts, the same for any thread count. Level 1:
    // the top 16 bits of every finite value's key; level 2: the low 16 bits of the keys in the
    // level-1 bucket that holds the k-th largest. Together they give its exact key.
    let histogram = |bucket: Option<u32>| {
        field
            .par_chunks(1 << 18)
            .map(|c| {
                let mut h = vec![0u32; 1 << 16];
                for &v in c {
                    if !v.is_finite() {
                        continue;
                    }
                    let k = key(v);
                    match bucket {
                        None => h[(k >> 16) as usize] += 1,
                        Some(b) if k >> 16 == b => h[(k & 0xffff) as usize] += 1,
                        Some(_) => {}
                    }
                }
                h
            })
            .reduce(
                || vec![0u32; 1 << 16],
                |mut a, b| {
                    a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                    a
                },
            )
    };
    // From the top: the bin where the count of larger-or-equal values reaches `k`; that bin
    // and the count above it.
    let from_top = |hist: &[u32], k: usize| {
        let mut above = 0usize;
        let mut b = hist.len() - 1;
        while above + (hist[b] as usize) < k && b > 0 {
            above += hist[b] as usize;
            b -= 1;
        }
        (b as u32, above)
    };
    let hist = histogram(None);
    let count: usize = hist.iter().map(|&c| c as usize).sum();
    if count == 0 {
        return f32::INFINITY;
    }
    let k = ((land_fraction as f64 * field.len() as f64).round() as usize).clamp(1, count);
    let (hi, above) = from_top(&hist, k);
    let (lo, _) = from_top(&histogram(Some(hi)), k - above);
    // The value of that key (the inverse of `key`).
    let k = hi << 16 | lo;
    f32::from_bits(if k >> 31 == 1 { k & 0x7fff_ffff } else { !k })
}

/// Land (1) / sea (0) mask of the island outline of `p` (the mask stage): see the module
/// documentation. Errors only for a drawn mask with no land or no sea on the map.
pub fn shape_mask(p: &IslandParams) -> Result<Vec<u8>, ParamError> {
    let mut mask = outline_mask(p)?;
    // The sculpt layer's sketched coast on top of the outline.
    if let Some(l) = &p.sculpt {
        crate::sculpt::apply_coast(
            l,
            &mut mask,
            p.resolution as usize,
            p.world_size,
            border_margin(p),
        );
    }
    Ok(mask)
}

/// The outline of [`shape_mask`] before the sculpt layer's coast override.
fn outline_mask(p: &IslandParams) -> Result<Vec<u8>, ParamError> {
    let g = p.grid();
    let margin = border_margin(p);
    if let Some(m) = &p.coast_mask {
        return coast_mask_land(m, p.resolution as usize, p.world_size, margin, p.seed);
    }
    let r = resolve(p);
    let mask = match generated_field(p, &r) {
        None if r.land_fraction == 0.0 => island_mask(&g, &p.mask, margin, tag::MASK),
        None => {
            let field = round_field(p);
            threshold_mask(&field, r.land_fraction)
        }
        Some(field) => {
            let lf = if gaussian_follows(p) && p.shape.land_fraction == 0.0 {
                None
            } else {
                Some(r.land_fraction)
            };
            match lf {
                Some(lf) => threshold_mask(&field, lf),
                None => field.iter().map(|&v| (v > 0.0) as u8).collect(),
            }
        }
    };
    // A map whose sea border covers it (a world far smaller than the shelf) is all sea, as
    // with the ROUND mask: not an error.
    Ok(mask)
}

fn threshold_mask(field: &[f32], land_fraction: f32) -> Vec<u8> {
    let t = select_threshold(field, land_fraction);
    field
        .par_iter()
        .map(|&v| (v.is_finite() && v >= t) as u8)
        .collect()
}

/// The legacy ROUND outline as a signed field (`1 - (d0 + amp · noise)`, see
/// [`crate::mask`]), `-inf` in the border ring: ROUND with a land fraction.
fn round_field(p: &IslandParams) -> Vec<f32> {
    use crate::mask::{MASK_DEFORMATION, MASK_NOISE_GAIN};
    use crate::params::MaskParams;
    let n = p.resolution as usize;
    let half = p.world_size * 0.5;
    let spacing = p.spacing();
    let margin = border_margin(p);
    let m = &p.mask;
    let s = stage_seed(p.seed, tag::MASK);
    let r = m.radius * half;
    let amp = MASK_DEFORMATION * (1.0 - m.roundness);
    let ns = m.noise_scale;
    let mut field: Vec<f32> = crate::memory::zeros(n * n);
    par_rows(&mut field, n, |z, row| {
        let pz = z as f32 * spacing - half;
        let mut noise = vec![0.0f32; n];
        Fbm::classic(MaskParams::NOISE_OCTAVES, s).add_row(
            &mut noise,
            pz / ns,
            spacing / ns,
            -half / ns,
        );
        for (x, out) in row.iter_mut().enumerate() {
            let px = x as f32 * spacing - half;
            let border = (half - px.abs()).min(half - pz.abs());
            if border <= margin {
                *out = f32::NEG_INFINITY;
                continue;
            }
            let d0 = (px * px + pz * pz).sqrt() / r;
            *out = 1.0 - (d0 + amp * (MASK_NOISE_GAIN * noise[x]).clamp(-1.0, 1.0));
        }
    });
    field
}

/// Bilinear sample of the drawn mask at `(u, v)` in 0..=1 across the image.
fn bilinear(m: &CoastMask, u: f32, v: f32) -> f32 {
    let (w, h) = m.size();
    let vals = m.values();
    let fx = u * (w - 1) as f32;
    let fz = v * (h - 1) as f32;
    let x0 = (fx.floor() as usize).min(w - 2);
    let z0 = (fz.floor() as usize).min(h - 2);
    let (tx, tz) = (fx - x0 as f32, fz - z0 as f32);
    let at = |x: usize, z: usize| vals[z * w + x];
    let a = at(x0, z0) + (at(x0 + 1, z0) - at(x0, z0)) * tx;
    let b = at(x0, z0 + 1) + (at(x0 + 1, z0 + 1) - at(x0, z0 + 1)) * tx;
    a + (b - a) * tz
}

/// Wavelength of the noise that decides the grey parts of a drawn mask, metres.
pub const GREY_NOISE_SCALE: f32 = 90.0;
/// Octaves of that noise.
pub const GREY_NOISE_OCTAVES: u32 = 4;

/// The drawn mask `m` resampled (bilinear, image corners on the map corners) to `n × n`
/// samples of a `world`-metre map: white (1) is land, black (0) sea, grey a soft preference:
/// a sample is land where `v + g · noise ≥ 0.5`, with `g = 1 - |2v - 1|` (1 at mid grey, 0 at
/// black and white) and a seeded fBm noise in -0.5..0.5 of [`GREY_NOISE_SCALE`] metres, so a
/// grey area becomes land with a probability that follows its brightness, in natural coves
/// and capes, and pure black and white are followed exactly. The border ring of `margin`
/// metres is sea. Errors when nothing or everything inside the ring is land.
pub fn coast_mask_land(
    m: &CoastMask,
    n: usize,
    world: f32,
    margin: f32,
    seed: u64,
) -> Result<Vec<u8>, ParamError> {
    m.validate()?;
    let spacing = world / (n - 1) as f32;
    let half = world * 0.5;
    let mut out = vec![0u8; n * n];
    let inv = 1.0 / (n - 1) as f32;
    let s = stage_seed(seed, tag::MASK);
    let ns = GREY_NOISE_SCALE;
    par_rows(&mut out, n, |z, row| {
        let pz = z as f32 * spacing;
        let v = z as f32 * inv;
        let mut noise = Vec::new();
        for (x, o) in row.iter_mut().enumerate() {
            let px = x as f32 * spacing;
            let border = (half - (px - half).abs()).min(half - (pz - half).abs());
            if border <= margin {
                *o = 0;
                continue;
            }
            let value = bilinear(m, x as f32 * inv, v);
            let g = 1.0 - (2.0 * value - 1.0).abs();
            let value = if g > 0.0 {
                if noise.is_empty() {
                    noise = vec![0.0f32; n];
                    Fbm::classic(GREY_NOISE_OCTAVES, s).add_row(
                        &mut noise,
                        (pz - half) / ns,
                        spacing / ns,
                        -half / ns,
                    );
                }
                value + g * noise[x].clamp(-0.5, 0.5)
            } else {
                value
            };
            *o = (value >= 0.5) as u8;
        }
    });
    let land = out.iter().filter(|&&v| v == 1).count();
    let interior = (0..n * n)
        .filter(|&i| {
            let (px, pz) = ((i % n) as f32 * spacing, (i / n) as f32 * spacing);
            (half - (px - half).abs()).min(half - (pz - half).abs()) > margin
        })
        .count();
    if land == 0 {
        return Err(ParamError {
            field: "coast_mask".into(),
            message: format!("has no land at {n}x{n} inside the map's sea border"),
        });
    }
    if land == interior {
        return Err(ParamError {
            field: "coast_mask".into(),
            message: format!("is all land at {n}x{n} inside the map's sea border"),
        });
    }
    Ok(out)
}

/// The sample at the centre of an ATOLL's lagoon (the map centre), whose closed basin below
/// sea level the water map classifies as sea; `None` for other outlines.
pub fn lagoon_sample(p: &IslandParams) -> Option<usize> {
    if p.coast_mask.is_some() || gaussian_follows(p) || resolve(p).shape != IslandShape::Atoll {
        return None;
    }
    let n = p.resolution as usize;
    Some((n / 2) * n + n / 2)
}

/// Radius of the crater rim as a fraction of the cone's radius.
pub const CRATER_RADIUS: f32 = 0.14;
/// Crater depth as a fraction of the rim height.
pub const CRATER_DEPTH: f32 = 0.22;

/// The VOLCANIC volcano, if `p` has one: centre and radius (half-map units), and whether it
/// has a crater. (The GPU backend raises the cone and digs the crater with these.)
pub fn volcano(p: &IslandParams) -> Option<(f32, f32, f32, bool)> {
    if p.coast_mask.is_some() || gaussian_follows(p) {
        return None;
    }
    let r = resolve(p);
    if r.shape != IslandShape::Volcanic {
        return None;
    }
    let (cx, cz) = volcano_centre(&r);
    let radius = 1.1 * (4.0 * r.land_fraction / std::f32::consts::PI).sqrt();
    Some((cx, cz, radius, r.crater_lake))
}

/// Whether `p`'s island is a VOLCANIC one ([`apply_relief`] and [`dig_crater`] change its
/// heights).
pub fn has_volcano(p: &IslandParams) -> bool {
    volcano(p).is_some()
}

/// Run `f(h, ρ)` over the land samples within the volcano's radius (ρ = distance / radius).
fn over_volcano(p: &IslandParams, heights: &mut [f32], f: impl Fn(&mut f32, f32) + Sync + Send) {
    let Some((cx, cz, radius, _)) = volcano(p) else {
        return;
    };
    let n = p.resolution as usize;
    let half = p.world_size * 0.5;
    let spacing = p.spacing();
    par_rows(heights, n, |z, row| {
        let dz = (z as f32 * spacing) / half - 1.0 - cz;
        for (x, h) in row.iter_mut().enumerate() {
            if *h <= 0.0 {
                continue;
            }
            let dx = (x as f32 * spacing) / half - 1.0 - cx;
            let rho = (dx * dx + dz * dz).sqrt() / radius;
            if rho < 1.0 {
                f(h, rho);
            }
        }
    });
}

/// The outline's relief before the erosion (no-op for outlines without one): the VOLCANIC cone
/// ([`raise_cone`]) and the ATOLL's shallow lagoon ([`shallow_lagoon`]). Called at the start
/// of the erosion stage (both backends), so the erosion carves the cone's gullies.
pub fn apply_relief(p: &IslandParams, heights: &mut [f32]) {
    raise_cone(p, heights);
    shallow_lagoon(p, heights);
}

/// The VOLCANIC cone (no-op for other outlines): land samples get `max(h, h / 2 + cone)`,
/// with a concave cone `cone_height · max_height · (1 - ρ)²` over the island's radius.
pub fn raise_cone(p: &IslandParams, heights: &mut [f32]) {
    let peak = p.shape.cone_height * p.max_height;
    over_volcano(p, heights, |h, rho| {
        let cone = peak * (1.0 - rho) * (1.0 - rho);
        *h = h.max(0.5 * *h + cone);
    });
}

/// Deepest an ATOLL's lagoon gets, metres: real lagoons are a few metres of clear water over
/// sand (turquoise), not the open sea's depth.
pub const LAGOON_DEPTH: f32 = 4.0;

/// Whether [`apply_relief`] changes anything for `p` (a VOLCANIC cone or an ATOLL lagoon).
pub fn has_relief(p: &IslandParams) -> bool {
    has_volcano(p) || lagoon_sample(p).is_some()
}

/// The ATOLL's lagoon floor raised to at most [`LAGOON_DEPTH`] below sea level: the sea samples
/// connected to the lagoon's centre (4-neighbourhood), when they are enclosed (a lagoon that
/// reaches the map border through a pass is left as it is). No-op for other outlines.
pub fn shallow_lagoon(p: &IslandParams, heights: &mut [f32]) {
    let Some(lagoon) = lagoon_region(p, |i| heights[i] < 0.0) else {
        return;
    };
    for i in lagoon {
        heights[i] = heights[i].max(-LAGOON_DEPTH);
    }
}

/// The samples of the ATOLL's lagoon ([`shallow_lagoon`]): those connected to the lagoon's
/// centre through samples where `sea(i)` (4-neighbourhood); `None` for another outline, a centre
/// on land, or a lagoon that reaches the map border. Only the sea/land test of each sample is
/// needed (the GPU backend reads it back as one bit per sample).
pub fn lagoon_region(p: &IslandParams, sea: impl Fn(usize) -> bool) -> Option<Vec<usize>> {
    let c = lagoon_sample(p)?;
    let n = p.resolution as usize;
    if c >= n * n || !sea(c) {
        return None;
    }
    let mut seen = vec![false; n * n];
    let mut stack = vec![c];
    let mut lagoon = Vec::new();
    seen[c] = true;
    while let Some(i) = stack.pop() {
        let (x, z) = (i % n, i / n);
        if x == 0 || z == 0 || x == n - 1 || z == n - 1 {
            return None;
        }
        lagoon.push(i);
        for j in [i - 1, i + 1, i - n, i + n] {
            if !seen[j] && sea(j) {
                seen[j] = true;
                stack.push(j);
            }
        }
    }
    Some(lagoon)
}

/// The VOLCANIC crater (with [`crate::params::ShapeParams::crater_lake`]; no-op otherwise): a
/// bowl [`CRATER_DEPTH`] of the rim height deep inside [`CRATER_RADIUS`] of the cone, dug
/// after the erosion (which would otherwise fill it), before the drainage fills it with a
/// lake.
pub fn dig_crater(p: &IslandParams, heights: &mut [f32]) {
    if !volcano(p).is_some_and(|v| v.3) {
        return;
    }
    let peak = p.shape.cone_height * p.max_height;
    let rim = peak * (1.0 - CRATER_RADIUS) * (1.0 - CRATER_RADIUS);
    over_volcano(p, heights, |h, rho| {
        if rho < CRATER_RADIUS {
            let t = rho / CRATER_RADIUS;
            let bowl = 1.0 - t * t;
            *h = h.min(rim - CRATER_DEPTH * rim * bowl * bowl);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sin_cos_matches_std() {
        for i in -7200..7200 {
            let d = i as f32 * 0.1;
            let (s, c) = sin_cos_deg(d);
            let r = (d as f64).to_radians();
            assert!((s as f64 - r.sin()).abs() < 2e-6, "{d}");
            assert!((c as f64 - r.cos()).abs() < 2e-6, "{d}");
        }
    }

    #[test]
    fn threshold_matches_a_full_sort() {
        let mut f: Vec<f32> = (0..100_000u32)
            .map(|i| unit(hash_u32(i)) * unit(hash_u32(i ^ 77)) - 0.3)
            .collect();
        f[5] = f32::NEG_INFINITY;
        for lf in [0.01f32, 0.2, 0.5, 0.9] {
            let mut sorted: Vec<f32> = f.iter().copied().filter(|v| v.is_finite()).collect();
            sorted.sort_by(|a, b| b.total_cmp(a));
            let k = (lf as f64 * f.len() as f64).round() as usize;
            assert_eq!(select_threshold(&f, lf), sorted[k - 1], "{lf}");
        }
    }

    /// Ties, both zeros, NaN and values that share their top 16 key bits (one level-1
    /// bucket): the same bits as a full sort's k-th largest.
    #[test]
    fn threshold_matches_a_full_sort_in_one_bucket_with_ties() {
        let mut f: Vec<f32> = (0..50_000u32)
            .map(|i| f32::from_bits(0x3f00_0000 + (hash_u32(i) % 3000)))
            .collect();
        f.extend([0.0, -0.0, -0.0, 0.0, f32::NAN, -1.5, -1.5, f32::INFINITY]);
        f.extend(std::iter::repeat_n(0.5f32, 5000));
        for lf in [
            0.0001f32, 0.05, 0.3, 0.6, 0.9, 0.99991, 0.99993, 0.99995, 1.0,
        ] {
            let mut sorted: Vec<f32> = f.iter().copied().filter(|v| v.is_finite()).collect();
            sorted.sort_by(|a, b| b.total_cmp(a));
            let k = ((lf as f64 * f.len() as f64).round() as usize).clamp(1, sorted.len());
            let t = select_threshold(&f, lf);
            assert_eq!(t.to_bits(), sorted[k - 1].to_bits(), "{lf}");
        }
    }

    #[test]
    fn threshold_counts_exactly() {
        let f: Vec<f32> = (0..1000).map(|i| ((i * 7919) % 1000) as f32).collect();
        let t = select_threshold(&f, 0.25);
        assert_eq!(f.iter().filter(|&&v| v >= t).count(), 250);
    }
}
