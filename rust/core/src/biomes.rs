//! Displaced-grid Voronoi biomes, blended smoothly across borders.
//!
//! The map is divided into `grid × grid` cells; each cell's site is displaced inside it by up
//! to `distortion / 2` of a cell (hashed). A sample's position is wiggled by boundary noise, then
//! the sites of the 5×5 surrounding cells are ranked by distance. The nearest site's region
//! gives the biome index; every site within `blend_width` of the nearest contributes with weight
//! `1 - smoothstep(0, blend_width, d - d_min)`, so weights change continuously across borders and
//! no cliff appears where two regions meet. A biome's relief is `height_scale · base^exponent`
//! with the f32 polynomial power `pow_approx` (mirrored in `biome_blend.wgsl`).
//!
//! [`biome_blend`] evaluates eight samples of a row at once: `Neighbourhood` prunes the 5×5
//! sites per cell, and again per small box of wiggled positions, and every lane performs
//! exactly the operations of the per-sample definition `biome_sample` (tested bit for bit).

use crate::gradient_noise::{fast_floor, Fbm, FbmRows};
#[cfg(test)]
use crate::grid::smoothstep;
use crate::grid::Grid;
use crate::hash::{hash2, hash_u32, stage_seed, unit};
use crate::params::{Biome, BiomeParams, FbmParams};
use rayon::prelude::*;

/// Salt of the first site-offset hash of `biome_site` (`biome_blend.wgsl` repeats it).
pub const BIOME_SITE_SALT_X: u32 = 0x5555_1111;
/// Salt of the second site-offset hash of `biome_site` (`biome_blend.wgsl` repeats it).
pub const BIOME_SITE_SALT_Z: u32 = 0x2222_9999;
/// Salt of the region-biome hash of `region_biome` (`biome_blend.wgsl` repeats it).
pub const BIOME_REGION_SALT: u32 = 0x00b1_07e5;
/// Mixed into the stage seed of the boundary wiggle noise (`biome_blend.wgsl` repeats it).
pub const BIOME_WARP_SEED: u32 = 0x0f0f_0f0f;

/// Site of cell `(i, j)` in cell units.
#[inline(always)]
fn biome_site(i: i32, j: i32, distortion: f32, s: u32) -> [f32; 2] {
    let h = hash2(i, j, s);
    let ox = unit(hash_u32(h ^ BIOME_SITE_SALT_X)) - 0.5;
    let oz = unit(hash_u32(h ^ BIOME_SITE_SALT_Z)) - 0.5;
    [
        i as f32 + 0.5 + ox * distortion,
        j as f32 + 0.5 + oz * distortion,
    ]
}

/// Biome of the region of cell `(i, j)`.
#[inline(always)]
fn region_biome(i: i32, j: i32, count: u32, s: u32) -> u32 {
    hash_u32(hash2(i, j, s) ^ BIOME_REGION_SALT) % count
}

/// Blended biome attributes of one sample.
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct BiomeSample {
    /// Biome index of the nearest region.
    pub index: u8,
    /// Blended relief (0..1) from the normalised base height.
    pub height01: f32,
    /// Blended fine-detail multiplier.
    pub roughness: f32,
    /// Blended sandiness (0 grass .. 1 sand).
    pub sandiness: f32,
}

use crate::simd::lanes::{F8, I8, N as LANES};

/// [`log2_approx`] on eight lanes (the definition; the scalar form runs it on one lane).
#[inline(always)]
fn log2_x8(t: F8) -> F8 {
    // Subnormals are scaled into the normal range first.
    let small = t.lt(F8::splat(f32::MIN_POSITIVE));
    let ts = small.select(t * F8::splat(8_388_608.0), t);
    let bits = ts.to_bits();
    let e0 = bits
        .shr(23)
        .and(0xff)
        .sub(small.select_i(I8::splat(150), I8::splat(127)));
    let m0 = bits.and(0x007f_ffff).or(0x3f80_0000).bits_to_f32();
    // Mantissa in [sqrt(1/2), sqrt(2)).
    let big = m0.gt(F8::splat(std::f32::consts::SQRT_2));
    let m = big.select(m0 * F8::splat(0.5), m0);
    let e = big.select_i(e0.add(I8::splat(1)), e0);
    let x = m - F8::splat(1.0);
    let z = x * x;
    let c = F8::splat;
    let mut p = c(0.070_376_836);
    p = p * x - c(0.115_146_1);
    p = p * x + c(0.116_769_984);
    p = p * x - c(0.124_201_41);
    p = p * x + c(0.142_493_23);
    p = p * x - c(0.166_680_57);
    p = p * x + c(0.200_007_14);
    p = p * x - c(0.249_999_94);
    p = p * x + c(0.333_333_3);
    // ln(m) = x + y; log2(m) = (x + y) * log2(e), with log2(e) - 1 split off for precision.
    let y = x * (z * p) - c(0.5) * z;
    let log2ea = c(0.442_695_05);
    let l = y * log2ea + x * log2ea + y + x + e.to_f32();
    // 0 -> -inf, negative or NaN -> NaN.
    let zero = t.eq(c(0.0));
    let pos = t.gt(c(0.0));
    pos.select(l, zero.select(c(f32::NEG_INFINITY), c(f32::NAN)))
}

/// [`exp2_approx`] on eight lanes (the definition).
#[inline(always)]
fn exp2_x8(y: F8) -> F8 {
    let c = F8::splat;
    // Adding 1.5·2^23 rounds to the nearest integer (ties to even), which then sits in the low
    // mantissa bits.
    const ROUND: f32 = 12_582_912.0;
    let yc = y.gt(c(127.0)).select(c(127.0), y);
    let r = yc + c(ROUND);
    let x = yc - (r - c(ROUND));
    let mut p = c(0.000_153_533_62);
    p = p * x + c(0.001_339_887_4);
    p = p * x + c(0.009_618_437);
    p = p * x + c(0.055_503_324);
    p = p * x + c(0.240_226_48);
    // 0.6931472028550421 (Cephes), which rounds to ln 2 in f32.
    p = p * x + c(std::f32::consts::LN_2);
    let px = c(1.0) + x * p;
    let n = r.to_bits().sub(I8::splat(ROUND.to_bits() as i32));
    let scale = n.add(I8::splat(127)).shl(23).bits_to_f32();
    y.lt(c(-126.0)).select(c(0.0), px * scale)
}

/// `log2(t)` for `0 <= t < inf` as an f32 polynomial (Cephes `log2f`; no FMA, so every build
/// and the WGSL mirror in `biome_blend.wgsl` compute it the same way): absolute error about
/// 1e-7; `-inf` at 0, NaN for negative or NaN `t`.
#[cfg(test)]
fn log2_approx(t: f32) -> f32 {
    log2_x8(F8::splat(t)).0[0]
}

/// `2^y` as an f32 polynomial (Cephes `exp2f`; no FMA; mirrored in `biome_blend.wgsl`):
/// relative error about 1e-7; 0 below -126, `2^127` above 127, NaN for NaN.
#[cfg(test)]
fn exp2_approx(y: f32) -> f32 {
    exp2_x8(F8::splat(y)).0[0]
}

/// `t^e` for `t` in [0, 1] and `e > 0`, as `2^(e·log2 t)` with [`exp2_approx`] and
/// [`log2_approx`]: relative error about 1e-6 for `e <= 8`, exactly 1 at `t = 1` and 0 at `t = 0`.
#[cfg(test)]
fn pow_approx(t: f32, e: f32) -> f32 {
    exp2_approx(e * log2_approx(t))
}

/// Relief of biome `b` from the normalised base height: `height_scale · base01^exponent`
/// (base clamped to [0, 1], power by [`pow_approx`]).
#[cfg(test)]
fn biome_relief(b: &Biome, base01: f32) -> f32 {
    b.height_scale * pow_approx(base01.clamp(0.0, 1.0), b.exponent)
}

/// Sites and biomes of the cells, precomputed (a pure cache of [`biome_site`] and
/// [`region_biome`]; cells outside the table are computed on the fly).
struct SiteTable {
    lo: i32,
    size: i32,
    sites: Vec<([f32; 2], u32)>,
    distortion: f32,
    count: u32,
    s: u32,
}

impl SiteTable {
    /// Table for a `grid × grid` layout, padded by `pad` cells on every side.
    fn new(grid: u32, pad: i32, distortion: f32, count: u32, s: u32) -> SiteTable {
        let lo = -pad;
        let size = grid as i32 + 2 * pad;
        let mut sites = Vec::with_capacity((size * size) as usize);
        for j in 0..size {
            for i in 0..size {
                let (ci, cj) = (lo + i, lo + j);
                sites.push((
                    biome_site(ci, cj, distortion, s),
                    region_biome(ci, cj, count, s),
                ));
            }
        }
        SiteTable {
            lo,
            size,
            sites,
            distortion,
            count,
            s,
        }
    }

    #[inline(always)]
    fn get(&self, i: i32, j: i32) -> ([f32; 2], u32) {
        let (a, b) = (i - self.lo, j - self.lo);
        if a >= 0 && b >= 0 && a < self.size && b < self.size {
            self.sites[(b * self.size + a) as usize]
        } else {
            (
                biome_site(i, j, self.distortion, self.s),
                region_biome(i, j, self.count, self.s),
            )
        }
    }
}

/// The boundary wiggle noise of stage seed `s`: classic fBm of [`BiomeParams::WARP_OCTAVES`]
/// octaves (wavelength one cell), seeded `s ^ BIOME_WARP_SEED`.
fn warp_fbm(s: u32) -> Fbm {
    Fbm::new(
        &FbmParams::classic(BiomeParams::WARP_OCTAVES, 1.0),
        s ^ BIOME_WARP_SEED,
    )
}

/// Offset of the second boundary-wiggle component, in noise units.
pub const BIOME_WARP_OFFSET: [f32; 2] = [19.1, -7.3];

/// The sites around one cell that can matter for a sample in it (positions in cell units and
/// biome indices), in 5×5 scan order.
///
/// Of the 5×5 surrounding sites, those that cannot be the nearest site nor lie within the blend
/// reach of it for *any* point of the cell are dropped (exact pruning): the nearest-site
/// distance anywhere in the cell is at most `U = min_k max_corner |corner - site_k|`, so a site
/// whose distance to the cell rectangle exceeds `U + blend / cell` contributes nothing.
struct Neighbourhood {
    cell: (i32, i32),
    extra: f32,
    len: usize,
    last: usize,
    // 25 sites padded to whole lane groups.
    sx: [f32; 32],
    sz: [f32; 32],
    b: [u32; 32],
}

impl Neighbourhood {
    /// An empty cache (filled on first use).
    fn new() -> Neighbourhood {
        Neighbourhood {
            cell: (i32::MIN, i32::MIN),
            extra: f32::NAN,
            len: 0,
            last: 0,
            sx: [0.0; 32],
            sz: [0.0; 32],
            b: [0; 32],
        }
    }

    /// Whether the cache holds the candidate sites of cell `(ci, cj)` for `extra`.
    #[inline(always)]
    fn holds(&self, ci: i32, cj: i32, extra: f32) -> bool {
        self.cell == (ci, cj) && self.extra == extra
    }

    /// Load the candidate sites of cell `(ci, cj)`; `extra` is the blend width in cell units.
    #[inline(always)]
    fn load(&mut self, ci: i32, cj: i32, extra: f32, table: &SiteTable) {
        if self.holds(ci, cj, extra) {
            return;
        }
        self.cell = (ci, cj);
        self.extra = extra;
        let mut all = [([0.0f32; 2], 0u32); 25];
        let mut k = 0;
        for dj in -2..=2 {
            for di in -2..=2 {
                all[k] = table.get(ci + di, cj + dj);
                k += 1;
            }
        }
        let (x0, z0) = (ci as f32, cj as f32);
        let (x1, z1) = (x0 + 1.0, z0 + 1.0);
        let mut u2 = f32::INFINITY;
        for (site, _) in &all {
            let fx = (site[0] - x0).abs().max((site[0] - x1).abs());
            let fz = (site[1] - z0).abs().max((site[1] - z1).abs());
            u2 = u2.min(fx * fx + fz * fz);
        }
        // Safety margin (cell units) far above the rounding of the per-sample distances.
        let limit = u2.sqrt() + extra + 1e-3;
        let limit2 = limit * limit;
        self.len = 0;
        for (site, b) in &all {
            let dx = (x0 - site[0]).max(0.0).max(site[0] - x1);
            let dz = (z0 - site[1]).max(0.0).max(site[1] - z1);
            // Keep NaN-free candidates within the limit (an infinite extra keeps all).
            if dx * dx + dz * dz <= limit2 || (dx * dx + dz * dz).is_nan() {
                self.sx[self.len] = site[0];
                self.sz[self.len] = site[1];
                self.b[self.len] = *b;
                self.len += 1;
            }
        }
        // Unused slots: sites at infinity (never nearest, never within reach).
        for k in self.len..32 {
            self.sx[k] = f32::INFINITY;
            self.sz[k] = f32::INFINITY;
            self.b[k] = 0;
        }
        self.last = 0;
    }
}

impl Default for Neighbourhood {
    fn default() -> Self {
        Self::new()
    }
}

/// The per-sample definition of the biome blend (what the row kernel is tested against) at
/// `p = (px, pz)` metres (map corner at 0), with the boundary wiggle `warp` (the two warp fBm
/// values there: 3 octaves, wavelength one cell, seeds `s ^ BIOME_WARP_SEED`, the second at
/// [`BIOME_WARP_OFFSET`]). `hood` caches the sites of the last cell looked at.
#[cfg(test)]
#[allow(clippy::needless_range_loop)]
fn biome_sample(
    p: [f32; 2],
    warp: [f32; 2],
    base01: f32,
    world_size: f32,
    bp: &BiomeParams,
    table: &SiteTable,
    hood: &mut Neighbourhood,
) -> BiomeSample {
    let (px, pz) = (p[0], p[1]);
    let (grid, boundary_noise, blend_width, biomes) =
        (bp.grid, bp.boundary_noise, bp.blend_width, &bp.biomes[..]);
    let cell = world_size / grid as f32;
    let qx = (px + boundary_noise * warp[0]) / cell;
    let qz = (pz + boundary_noise * warp[1]) / cell;
    hood.load(fast_floor(qx), fast_floor(qz), blend_width / cell, table);
    // Squared distances (cell units) to the candidate sites (fixed 25 lanes, unused ones at
    // infinity, so the loops below are straight vector code).
    let mut d2 = [0.0f32; 25];
    for k in 0..25 {
        let (dx, dz) = (hood.sx[k] - qx, hood.sz[k] - qz);
        d2[k] = dx * dx + dz * dz;
    }
    // First nearest site, as a strict `<` scan finds it: the previous sample's nearest is
    // confirmed with one vector test, the serial scan only runs when it changed.
    let g = hood.last.min(24);
    let m = d2[g];
    let mut changed = false;
    for k in 0..25 {
        changed |= (d2[k] < m) | ((d2[k] == m) & (k < g));
    }
    let mut kmin = g;
    if changed || m.is_nan() {
        kmin = 0;
        for k in 1..25 {
            if d2[k] < d2[kmin] {
                kmin = k;
            }
        }
    }
    hood.last = kmin;
    let dmin = d2[kmin].sqrt() * cell;
    let reach = (dmin + blend_width) / cell;
    let reach2 = reach * reach;
    // Weight per biome: 1 - smoothstep(0, blend, d - d_min) for every site within reach
    // (sites out of reach add exactly 0.0, which changes no sum).
    let mut wk = [0.0f32; 25];
    for k in 0..25 {
        let d = d2[k].sqrt() * cell;
        let w = 1.0 - smoothstep(0.0, blend_width, d - dmin);
        wk[k] = if d2[k] < reach2 { w } else { 0.0 };
    }
    let mut wb = [0.0f32; 16];
    for k in 0..25 {
        wb[hood.b[k] as usize & 15] += wk[k];
    }
    let (mut wsum, mut h, mut r, mut sand) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
    for (b, &w) in biomes.iter().zip(wb.iter()) {
        if w > 0.0 {
            wsum += w;
            h += w * biome_relief(b, base01);
            r += w * b.roughness;
            sand += w * b.sandiness;
        }
    }
    let inv = 1.0 / wsum;
    BiomeSample {
        index: hood.b[kmin] as u8,
        height01: h * inv,
        roughness: r * inv,
        sandiness: sand * inv,
    }
}

/// Per-map constants of [`biome_row`].
struct RowCfg {
    spacing: f32,
    /// Cell size, metres (`world_size / grid`, as [`biome_sample`] computes it).
    cell: f32,
    boundary_noise: f32,
    blend_width: f32,
    /// Biomes taken into account (the first `min(len, 16)`, as in [`biome_sample`]).
    count: usize,
    height_scale: [f32; 16],
    exponent: [f32; 16],
    roughness: [f32; 16],
    sandiness: [f32; 16],
    /// Candidate sites of the cells, shared by the rows (empty: each row loads its own).
    hoods: HoodTable,
}

/// The [`Neighbourhood`] of every cell in a rectangle `[i0, i0 + w) × [j0, j0 + h)`.
struct HoodTable {
    i0: i32,
    j0: i32,
    w: i32,
    h: i32,
    hoods: Vec<Neighbourhood>,
}

impl HoodTable {
    fn empty() -> HoodTable {
        HoodTable {
            i0: 0,
            j0: 0,
            w: 0,
            h: 0,
            hoods: Vec::new(),
        }
    }

    /// The neighbourhoods of cells `lo..=hi` (both axes) for the blend reach `extra`.
    fn new(lo: [i32; 2], hi: [i32; 2], extra: f32, table: &SiteTable) -> HoodTable {
        let (w, h) = (hi[0] - lo[0] + 1, hi[1] - lo[1] + 1);
        if w <= 0 || h <= 0 {
            return HoodTable::empty();
        }
        let hoods = (0..w * h)
            .into_par_iter()
            .map(|k| {
                let mut nb = Neighbourhood::new();
                nb.load(lo[0] + k % w, lo[1] + k / w, extra, table);
                nb
            })
            .collect();
        HoodTable {
            i0: lo[0],
            j0: lo[1],
            w,
            h,
            hoods,
        }
    }

    /// The table for a map: the cells the wiggled positions reach (the wiggle stays well inside
    /// ±2 · boundary_noise; cells outside the table are still handled, row by row), unless
    /// that is many cells for the map's size.
    fn for_map(
        resolution: usize,
        world_size: f32,
        cell: f32,
        boundary_noise: f32,
        blend_width: f32,
        table: &SiteTable,
    ) -> HoodTable {
        let reach = 2.0 * boundary_noise.abs();
        let lo = fast_floor(-reach / cell) as i64 - 1;
        let hi = fast_floor((world_size + reach) / cell) as i64 + 1;
        let side = hi - lo + 1;
        if side > 0 && side <= 4096 && side * side <= 16 * resolution as i64 {
            HoodTable::new([lo as i32; 2], [hi as i32; 2], blend_width / cell, table)
        } else {
            HoodTable::empty()
        }
    }

    #[inline(always)]
    fn get(&self, i: i32, j: i32) -> Option<&Neighbourhood> {
        let (a, b) = (i.wrapping_sub(self.i0), j.wrapping_sub(self.j0));
        if a >= 0 && b >= 0 && a < self.w && b < self.h {
            self.hoods.get((b * self.w + a) as usize)
        } else {
            None
        }
    }
}

impl RowCfg {
    fn new(
        spacing: f32,
        cell: f32,
        boundary_noise: f32,
        blend_width: f32,
        biomes: &[Biome],
    ) -> RowCfg {
        let mut c = RowCfg {
            spacing,
            cell,
            boundary_noise,
            blend_width,
            count: biomes.len().min(16),
            height_scale: [0.0; 16],
            exponent: [0.0; 16],
            roughness: [0.0; 16],
            sandiness: [0.0; 16],
            hoods: HoodTable::empty(),
        };
        for (k, b) in biomes.iter().take(16).enumerate() {
            c.height_scale[k] = b.height_scale;
            c.exponent[k] = b.exponent;
            c.roughness[k] = b.roughness;
            c.sandiness[k] = b.sandiness;
        }
        c
    }
}

/// The candidate sites of a [`Neighbourhood`] that can matter for wiggled positions inside a
/// box (cell units), in the same order: the pruning of [`Neighbourhood`] again, for a box much
/// smaller than the cell, so a run of samples only looks at the few sites around it.
struct Cands {
    cell: (i32, i32),
    /// `[x0, x1, z0, z1]`; NaN while empty.
    bx: [f32; 4],
    n: usize,
    sx: [f32; 25],
    sz: [f32; 25],
    b: [u32; 25],
    /// Bit `b & 15` set for each candidate's biome `b`.
    biomes: u32,
}

impl Cands {
    fn new() -> Cands {
        Cands {
            cell: (i32::MIN, i32::MIN),
            bx: [f32::NAN; 4],
            n: 0,
            sx: [0.0; 25],
            sz: [0.0; 25],
            b: [0; 25],
            biomes: 0,
        }
    }

    /// The candidates of `hood` for the box `bx`. Exact for the same reason as the pruning of
    /// [`Neighbourhood`]: for any point of the box the nearest site is at most
    /// `U = min_k max_corner |corner - site_k|` away, so a site farther than `U + extra` from
    /// the box is neither the first nearest site (it is strictly farther) nor within reach
    /// (its weight would be +0.0); dropping it changes no result.
    #[inline(always)]
    fn prune(&mut self, hood: &Neighbourhood, bx: [f32; 4]) {
        let len = hood.len.min(25);
        let groups = len.div_ceil(LANES);
        let (x0, x1, z0, z1) = (
            F8::splat(bx[0]),
            F8::splat(bx[1]),
            F8::splat(bx[2]),
            F8::splat(bx[3]),
        );
        let mut u2 = F8::splat(f32::INFINITY);
        for g in 0..groups {
            let (sx, sz) = (
                F8::load(&hood.sx[g * LANES..]),
                F8::load(&hood.sz[g * LANES..]),
            );
            let fx = (sx - x0).abs().max((sx - x1).abs());
            let fz = (sz - z0).abs().max((sz - z1).abs());
            u2 = u2.min(fx * fx + fz * fz);
        }
        // The same safety margin as the cell pruning (NaN anywhere keeps every site).
        let limit = u2.hmin().sqrt() + hood.extra + 1e-3;
        let limit2 = F8::splat(limit * limit);
        let mut keep = 0u32;
        for g in 0..groups {
            let (sx, sz) = (
                F8::load(&hood.sx[g * LANES..]),
                F8::load(&hood.sz[g * LANES..]),
            );
            let dx = (x0 - sx).max(F8::splat(0.0)).max(sx - x1);
            let dz = (z0 - sz).max(F8::splat(0.0)).max(sz - z1);
            let far = (dx * dx + dz * dz).gt(limit2).bits();
            keep |= (!far & ((1u32 << LANES) - 1)) << (g * LANES);
        }
        keep &= (1u32 << len) - 1;
        self.n = 0;
        while keep != 0 {
            let k = keep.trailing_zeros() as usize;
            keep &= keep - 1;
            self.sx[self.n] = hood.sx[k];
            self.sz[self.n] = hood.sz[k];
            self.b[self.n] = hood.b[k];
            self.n += 1;
        }
        if self.n == 0 {
            // No candidate at all (a degenerate neighbourhood): the first slot stands in, as in
            // the fixed 25 lanes of `biome_sample`.
            self.sx[0] = hood.sx[0];
            self.sz[0] = hood.sz[0];
            self.b[0] = hood.b[0];
            self.n = 1;
        }
        self.biomes = self.b[..self.n].iter().fold(0, |m, &b| m | 1 << (b & 15));
        self.cell = hood.cell;
        self.bx = bx;
    }
}

/// Margins (cell units) of the candidate boxes of [`biome_row`] around the lanes of a run:
/// behind and ahead of it along the row, and across. Rows run towards +x, so a box reaching
/// ahead serves the next few runs too; larger boxes keep more candidates.
const BOX_BEHIND: f32 = 0.02;
const BOX_AHEAD: f32 = 0.2;
const BOX_ACROSS: f32 = 0.05;

/// Wiggled positions (cell units) below which [`floor_x8`] is used.
const CELL_LIMIT: f32 = 1_048_576.0;

/// `floor` of lanes below [`CELL_LIMIT`] in magnitude (the value of `fast_floor` there).
#[inline(always)]
fn floor_x8(x: F8) -> I8 {
    // Adding 1.5·2^23 rounds to the nearest integer, which then sits in the low mantissa bits.
    const ROUND: f32 = 12_582_912.0;
    let r = x + F8::splat(ROUND);
    let n = r.to_bits().sub(I8::splat(ROUND.to_bits() as i32));
    let above = x.lt(r - F8::splat(ROUND));
    n.sub(I8(above.0.map(|m| (m & 1) as i32)))
}

/// Per-row scratch of [`blend_lanes`].
struct Scratch {
    /// Squared distances (cell units) to the candidate sites.
    d2: [F8; 25],
    /// Weight sums per biome (zeroed by each call of [`blend_lanes`]).
    wb: [F8; 16],
}

/// Results of [`blend_lanes`].
struct LaneOut {
    height01: F8,
    index: I8,
    roughness: F8,
    sandiness: F8,
}

/// [`biome_sample`] for `LANES` samples at once, all with the candidate sites `cands` of one cell
/// (lanes of another cell get values that the caller discards). `qx, qz` are the wiggled
/// positions in cell units, `lt` = `log2_approx(base01.clamp(0, 1))`. Every lane goes through
/// exactly the operations of [`biome_sample`]: the same squared distances, the first nearest
/// site of the scan order, the same per-biome weight sums in scan order (a candidate out of a
/// lane's reach adds +0.0 there), the same per-biome accumulation in biome order over the
/// candidates' biomes (a lane whose biome weight is not positive adds +0.0, which changes no sum).
#[inline(always)]
fn blend_lanes(cands: &Cands, qx: F8, qz: F8, lt: F8, c: &RowCfg, sc: &mut Scratch) -> LaneOut {
    let len = cands.n.clamp(1, 25);
    let hood = cands;
    let (cell, bw) = (F8::splat(c.cell), F8::splat(c.blend_width));
    let d2 = &mut sc.d2[..len];
    let (mut best, mut bi) = (F8::splat(0.0), I8::splat(hood.b[0] as i32));
    for (k, ((row, &sx), &sz)) in d2
        .iter_mut()
        .zip(&hood.sx[..len])
        .zip(&hood.sz[..len])
        .enumerate()
    {
        let (dx, dz) = (F8::splat(sx) - qx, F8::splat(sz) - qz);
        let v = dx * dx + dz * dz;
        *row = v;
        if k == 0 {
            best = v;
        } else {
            let closer = v.lt(best);
            best = closer.select(v, best);
            bi = closer.select_i(I8::splat(hood.b[k] as i32), bi);
        }
    }
    let dmin = best.sqrt() * cell;
    let reach = (dmin + bw) / cell;
    let reach2 = reach * reach;
    // Weight sums per biome, over every candidate (those out of reach of a lane add +0.0 there),
    // branch-free.
    sc.wb = [F8::splat(0.0); 16];
    for (row, &b) in d2.iter().zip(&hood.b[..len]) {
        let inside = row.lt(reach2);
        let b = b as usize & 15;
        let d = row.sqrt() * cell;
        let t = ((d - dmin - F8::splat(0.0)) / (bw - F8::splat(0.0))).clamp(0.0, 1.0);
        // 1 - smoothstep(0, blend, d - dmin) where in reach, else +0.0.
        let w = (F8::splat(1.0) - t * t * (F8::splat(3.0) - F8::splat(2.0) * t)).and(inside);
        sc.wb[b] = sc.wb[b] + w;
    }
    let zero = F8::splat(0.0);
    let (mut wsum, mut h, mut r, mut sand) = (zero, zero, zero, zero);
    // Biomes without candidates have zero weights everywhere: skipped, as in `biome_sample`.
    let mut todo = cands.biomes & ((1u32 << c.count) - 1);
    while todo != 0 {
        let b = todo.trailing_zeros() as usize;
        todo &= todo - 1;
        let w = sc.wb[b];
        // biome_relief: height_scale * pow_approx(clamped base, exponent).
        let relief = F8::splat(c.height_scale[b]) * exp2_x8(F8::splat(c.exponent[b]) * lt);
        let keep = w.gt(zero);
        wsum = wsum + w.and(keep);
        h = h + (w * relief).and(keep);
        r = r + (w * F8::splat(c.roughness[b])).and(keep);
        sand = sand + (w * F8::splat(c.sandiness[b])).and(keep);
    }
    let inv = F8::splat(1.0) / wsum;
    LaneOut {
        height01: h * inv,
        index: bi,
        roughness: r * inv,
        sandiness: sand * inv,
    }
}

/// Lanes of one run of samples, prepared by the first pass of [`biome_row`].
#[derive(Clone, Copy)]
struct Run {
    qx: F8,
    qz: F8,
    lt: F8,
    ci: I8,
    cj: I8,
    /// Every lane's position is finite and small enough for `floor_x8`.
    sane: bool,
}

/// The [`Run`] of samples `x0..x0 + LANES` of a row at `pz` metres, from their boundary wiggle
/// and base height.
#[inline(always)]
fn prep_run(x0: usize, wx8: F8, wz8: F8, base8: F8, pz: F8, c: &RowCfg) -> Run {
    let (spacing, bn, cell) = (
        F8::splat(c.spacing),
        F8::splat(c.boundary_noise),
        F8::splat(c.cell),
    );
    let xs = I8(std::array::from_fn(|l| l as i32)).add(I8::splat(x0 as i32));
    let qx = (xs.to_f32() * spacing + bn * wx8) / cell;
    let qz = (pz + bn * wz8) / cell;
    let lt = log2_x8(base8.clamp(0.0, 1.0));
    // Cells: `fast_floor`, by a vector floor where every lane is well inside the range where
    // both agree (which also rules out NaN and infinities).
    let lim = F8::splat(CELL_LIMIT);
    let sane = qx.abs().lt(lim).and_mask(qz.abs().lt(lim)).bits() == (1u32 << LANES) - 1;
    let (ci, cj) = if sane {
        (floor_x8(qx), floor_x8(qz))
    } else {
        (
            I8(std::array::from_fn(|l| fast_floor(qx.0[l]))),
            I8(std::array::from_fn(|l| fast_floor(qz.0[l]))),
        )
    };
    Run {
        qx,
        qz,
        lt,
        ci,
        cj,
        sane,
    }
}

/// New candidates for `run` (when it leaves the box of the last ones).
#[inline(always)]
fn reprune(cd: &mut Cands, hood: &Neighbourhood, run: &Run) {
    if run.sane {
        let (x0, x1) = (run.qx.hmin() - BOX_BEHIND, run.qx.hmax() + BOX_AHEAD);
        cd.prune(
            hood,
            [
                x0,
                x1,
                run.qz.hmin() - BOX_ACROSS,
                run.qz.hmax() + BOX_ACROSS,
            ],
        );
    } else {
        // No box: all candidates of the cell, for this run only.
        let inf = f32::INFINITY;
        cd.prune(hood, [-inf, inf, -inf, inf]);
        cd.bx = [f32::NAN; 4];
    }
}

/// Row index and boundary wiggle of one row of [`biome_row`].
struct RowIn<'a> {
    z: usize,
    wx: &'a [f32],
    wz: &'a [f32],
}

#[inline(always)]
fn biome_row_body(
    row: &RowIn,
    hrow: &mut [f32],
    irow: &mut [u8],
    rrow: &mut [f32],
    srow: &mut [f32],
    c: &RowCfg,
    table: &SiteTable,
) {
    let RowIn { z, wx, wz } = *row;
    let n = hrow
        .len()
        .min(irow.len())
        .min(rrow.len())
        .min(srow.len())
        .min(wx.len())
        .min(wz.len());
    if n == 0 {
        return;
    }
    let pz = F8::splat(z as f32 * c.spacing);
    let extra = c.blend_width / c.cell;
    let full = (1u32 << LANES) - 1;
    // First pass: wiggled positions (cell units), log2 of the clamped base, cells. Lane l of
    // run g is sample 8g + l (the last sample repeated past the end of the row).
    let mut runs: Vec<Run> = Vec::with_capacity(n.div_ceil(LANES));
    for ((a, b), h) in wx[..n]
        .chunks_exact(LANES)
        .zip(wz[..n].chunks_exact(LANES))
        .zip(hrow[..n].chunks_exact(LANES))
    {
        runs.push(prep_run(
            runs.len() * LANES,
            F8::load(a),
            F8::load(b),
            F8::load(h),
            pz,
            c,
        ));
    }
    if !n.is_multiple_of(LANES) {
        // The last samples, the last one repeated in the spare lanes (its position too).
        let x0 = n - n % LANES;
        let at = |l: usize| (x0 + l).min(n - 1);
        let mut r = prep_run(
            x0,
            F8(std::array::from_fn(|l| wx[at(l)])),
            F8(std::array::from_fn(|l| wz[at(l)])),
            F8(std::array::from_fn(|l| hrow[at(l)])),
            pz,
            c,
        );
        let last = n - 1 - x0;
        for l in last + 1..LANES {
            r.qx.0[l] = r.qx.0[last];
            r.qz.0[l] = r.qz.0[last];
            r.ci.0[l] = r.ci.0[last];
            r.cj.0[l] = r.cj.0[last];
        }
        runs.push(r);
    }
    // The candidates of the last two cells looked at (a border wiggling through a run of
    // samples alternates between two cells) for their current boxes, and those cells' sites
    // where the map's table of them does not reach.
    let mut cands = [Cands::new(), Cands::new()];
    let mut local = [Neighbourhood::new(), Neighbourhood::new()];
    let mut victim = 0;
    let mut sc = Scratch {
        d2: [F8::splat(0.0); 25],
        wb: [F8::splat(0.0); 16],
    };
    for (g, run) in runs.iter().enumerate() {
        let x0 = g * LANES;
        let cnt = (n - x0).min(LANES);
        let mut pending: u32 = (1u32 << cnt) - 1;
        while pending != 0 {
            let l0 = pending.trailing_zeros() as usize;
            let (i0, j0) = (run.ci.0[l0], run.cj.0[l0]);
            let mine = run
                .ci
                .eq(I8::splat(i0))
                .and_mask(run.cj.eq(I8::splat(j0)))
                .bits()
                & pending;
            let slot = if cands[0].cell == (i0, j0) {
                0
            } else if cands[1].cell == (i0, j0) {
                1
            } else {
                let v = victim;
                victim ^= 1;
                cands[v].cell = (i0, j0);
                cands[v].bx = [f32::NAN; 4];
                v
            };
            let cd = &mut cands[slot];
            let b = cd.bx;
            let inside = run
                .qx
                .ge(F8::splat(b[0]))
                .and_mask(run.qx.le(F8::splat(b[1])))
                .and_mask(run.qz.ge(F8::splat(b[2])))
                .and_mask(run.qz.le(F8::splat(b[3])));
            if inside.bits() != full {
                let hood = match c.hoods.get(i0, j0) {
                    Some(h) => h,
                    None => {
                        local[slot].load(i0, j0, extra, table);
                        &local[slot]
                    }
                };
                reprune(cd, hood, run);
            }
            let out = blend_lanes(cd, run.qx, run.qz, run.lt, c, &mut sc);
            if mine == full {
                let r = x0..x0 + LANES;
                hrow[r.clone()].copy_from_slice(&out.height01.0);
                rrow[r.clone()].copy_from_slice(&out.roughness.0);
                srow[r.clone()].copy_from_slice(&out.sandiness.0);
                for (d, &i) in irow[r].iter_mut().zip(&out.index.0) {
                    *d = i as u8;
                }
            } else {
                for l in 0..cnt {
                    if mine & (1 << l) != 0 {
                        let x = x0 + l;
                        hrow[x] = out.height01.0[l];
                        irow[x] = out.index.0[l] as u8;
                        rrow[x] = out.roughness.0[l];
                        srow[x] = out.sandiness.0[l];
                    }
                }
            }
            pending &= !mine;
        }
    }
}

crate::simd::dispatch! {
    /// One row of [`biome_blend`] (AVX2 copy when available; identical results, no FMA).
    fn biome_row(row: &RowIn, hrow: &mut [f32], irow: &mut [u8], rrow: &mut [f32], srow: &mut [f32], c: &RowCfg, table: &SiteTable) => biome_row_body
}

/// Biome fields (the `biome_blend.wgsl` pass) of `g`, with the Voronoi grid, site distortion,
/// boundary noise, blend width and biome table of `b` and the stage seed of `(g.seed, tag)`.
///
/// * `base01` — normalised base relief (0..1, `resolution²`), replaced by the blended biome
///   relief `height_scale · base01^exponent` (blended over the regions within reach).
///
/// Returns `(biome index, roughness, sandiness)` per sample.
pub fn biome_blend(
    base01: &mut [f32],
    g: &Grid,
    b: &BiomeParams,
    tag: u32,
) -> (Vec<u8>, Vec<f32>, Vec<f32>) {
    let (resolution, world_size, seed) = (g.resolution, g.world_size, g.seed);
    let (grid, distortion, boundary_noise, blend_width, biomes) = (
        b.grid,
        b.distortion,
        b.boundary_noise,
        b.blend_width,
        &b.biomes[..],
    );
    let s = stage_seed(seed, tag);
    let spacing = world_size / (resolution - 1) as f32;
    let cell = world_size / grid as f32;
    let pad = 3 + (boundary_noise * 1.5 / cell).ceil().min(64.0) as i32;
    let table = SiteTable::new(grid, pad, distortion, biomes.len() as u32, s);
    let step = spacing / cell;
    // The two warp fields, row by row (no full-map buffers).
    let warp = warp_fbm(s);
    let warp_x = FbmRows::field(step, [0.0, 0.0], warp);
    let warp_z = FbmRows::field(step, BIOME_WARP_OFFSET, warp);
    let mut cfg = RowCfg::new(spacing, cell, boundary_noise, blend_width, biomes);
    cfg.hoods = HoodTable::for_map(
        resolution,
        world_size,
        cell,
        boundary_noise,
        blend_width,
        &table,
    );
    let n = resolution * resolution;
    let mut index = crate::memory::zeroed(n);
    let mut rough = crate::memory::zeroed(n);
    let mut sand = crate::memory::zeroed(n);
    base01
        .par_chunks_mut(resolution)
        .zip(index.par_chunks_mut(resolution))
        .zip(
            rough
                .par_chunks_mut(resolution)
                .zip(sand.par_chunks_mut(resolution)),
        )
        .enumerate()
        .for_each_init(
            || (vec![0.0f32; resolution], vec![0.0f32; resolution]),
            |(wx, wz), (z, ((hrow, irow), (rrow, srow)))| {
                warp_x.row(z, wx);
                warp_z.row(z, wz);
                let row = RowIn { z, wx, wz };
                biome_row(&row, hrow, irow, rrow, srow, &cfg, &table);
            },
        );
    (index, rough, sand)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::default_biomes;

    fn bparams(grid: u32, distortion: f32, bn: f32, bw: f32, biomes: &[Biome]) -> BiomeParams {
        BiomeParams {
            grid,
            distortion,
            boundary_noise: bn,
            blend_width: bw,
            biomes: biomes.to_vec(),
        }
    }

    /// The two boundary-wiggle fields of a map (as `biome_blend` computes them row by row).
    fn warp_fields(res: usize, step: f32, s: u32) -> (Vec<f32>, Vec<f32>) {
        let w = warp_fbm(s);
        (
            FbmRows::field(step, [0.0, 0.0], w).to_field(res),
            FbmRows::field(step, BIOME_WARP_OFFSET, w).to_field(res),
        )
    }

    #[test]
    fn several_regions_and_weights_normalised() {
        let res = 129;
        let mut base = vec![0.5f32; res * res];
        let (idx, rough, _) = biome_blend(
            &mut base,
            &Grid::new(res, 1024.0, 3),
            &bparams(5, 0.8, 40.0, 80.0, &default_biomes()),
            6,
        );
        let mut seen = [false; 16];
        idx.iter().for_each(|&i| seen[i as usize] = true);
        assert!(seen.iter().filter(|&&s| s).count() >= 3);
        let (mn, mx) = default_biomes()
            .iter()
            .fold((f32::MAX, f32::MIN), |(a, b), bi| {
                (a.min(bi.roughness), b.max(bi.roughness))
            });
        assert!(rough.iter().all(|&r| r >= mn - 1e-5 && r <= mx + 1e-5));
    }

    /// The definition: all 5×5 sites, no cache, no pruning.
    fn sample_reference(
        p: [f32; 2],
        warp: [f32; 2],
        base01: f32,
        world: f32,
        bp: &BiomeParams,
        s: u32,
    ) -> BiomeSample {
        let (px, pz) = (p[0], p[1]);
        let (grid, bn, bw, biomes, dist) = (
            bp.grid,
            bp.boundary_noise,
            bp.blend_width,
            &bp.biomes[..],
            bp.distortion,
        );
        let cell = world / grid as f32;
        let qx = (px + bn * warp[0]) / cell;
        let qz = (pz + bn * warp[1]) / cell;
        let (ci, cj) = (qx.floor() as i32, qz.floor() as i32);
        let mut d2 = [0.0f32; 25];
        let mut bk = [0u32; 25];
        let mut k = 0;
        for dj in -2..=2 {
            for di in -2..=2 {
                let st = biome_site(ci + di, cj + dj, dist, s);
                bk[k] = region_biome(ci + di, cj + dj, biomes.len() as u32, s);
                let (dx, dz) = (st[0] - qx, st[1] - qz);
                d2[k] = dx * dx + dz * dz;
                k += 1;
            }
        }
        let mut kmin = 0;
        for k in 1..25 {
            if d2[k] < d2[kmin] {
                kmin = k;
            }
        }
        let dmin = d2[kmin].sqrt() * cell;
        let reach = (dmin + bw) / cell;
        let mut wb = [0.0f32; 16];
        for k in 0..25 {
            if d2[k] < reach * reach {
                wb[bk[k] as usize] += 1.0 - smoothstep(0.0, bw, d2[k].sqrt() * cell - dmin);
            }
        }
        let (mut ws, mut h, mut r, mut sa) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
        for (b, &w) in biomes.iter().zip(wb.iter()) {
            if w > 0.0 {
                ws += w;
                h += w * biome_relief(b, base01);
                r += w * b.roughness;
                sa += w * b.sandiness;
            }
        }
        BiomeSample {
            index: bk[kmin] as u8,
            height01: h / ws,
            roughness: r / ws,
            sandiness: sa / ws,
        }
    }

    #[test]
    fn pruned_neighbourhood_matches_full_definition() {
        let biomes = default_biomes();
        for &(grid, dist, bn, bw) in &[
            (5u32, 0.8f32, 100.0f32, 120.0f32),
            (3, 1.0, 0.0, 5.0),
            (16, 0.5, 30.0, 400.0),
            (64, 1.0, 10.0, 1.0),
        ] {
            let s = stage_seed(17, 6);
            let table = SiteTable::new(
                grid,
                3 + (bn * 1.5 / (1024.0 / grid as f32)).ceil() as i32,
                dist,
                biomes.len() as u32,
                s,
            );
            let mut hood = Neighbourhood::new();
            let bp = bparams(grid, dist, bn, bw, &biomes);
            for i in 0..20_000u32 {
                let px = (i % 200) as f32 * 5.13 + 0.37;
                let pz = (i / 200) as f32 * 10.27 + 0.11;
                let warp = [
                    unit(hash_u32(i)) * 2.4 - 1.2,
                    unit(hash_u32(i ^ 0xffff)) * 2.4 - 1.2,
                ];
                let base = unit(hash_u32(i.wrapping_mul(7)));
                let a = biome_sample([px, pz], warp, base, 1024.0, &bp, &table, &mut hood);
                let mut e = sample_reference([px, pz], warp, base, 1024.0, &bp, s);
                // `x / w` in the reference vs `x * (1 / w)`: allow that rounding only.
                for (got, want) in [
                    (a.height01, &mut e.height01),
                    (a.roughness, &mut e.roughness),
                    (a.sandiness, &mut e.sandiness),
                ] {
                    assert!(
                        (got - *want).abs() <= 1e-6,
                        "grid {grid} i {i}: {got} vs {want}"
                    );
                    *want = got;
                }
                assert_eq!(a, e, "grid {grid} i {i}");
            }
        }
    }

    /// The row kernel (lanes, candidate boxes, fast power) gives exactly the per-sample
    /// definition [`biome_sample`] at every sample, which is itself pinned to the full 5×5
    /// definition above.
    #[test]
    fn rows_match_per_sample_definition() {
        let many: Vec<Biome> = (0..16)
            .map(|i| Biome {
                exponent: 0.1 + i as f32 * 0.5,
                height_scale: 1.0 - i as f32 * 0.05,
                sandiness: (i % 3) as f32 * 0.5,
                ..Biome::default()
            })
            .collect();
        /// (resolution, world size, grid, distortion, boundary noise, blend width, biomes).
        type Case = (usize, f32, u32, f32, f32, f32, Vec<Biome>);
        let cases: [Case; 5] = [
            (257, 1024.0, 5, 0.8, 100.0, 120.0, default_biomes()),
            (131, 1024.0, 3, 1.0, 0.0, 5.0, default_biomes()),
            (203, 3000.0, 16, 0.5, 300.0, 400.0, many.clone()),
            (97, 1024.0, 64, 1.0, 10.0, 1.0, many),
            (65, 512.0, 7, 0.3, 40.0, 80.0, vec![Biome::default()]),
        ];
        for (res, world, grid, dist, bn, bw, biomes) in cases {
            let seed = 23;
            let base: Vec<f32> = (0..res * res)
                .map(|i| unit(hash_u32(i as u32 ^ 0x5eed)) * 1.2 - 0.1)
                .collect();
            let mut got = base.clone();
            let bp = bparams(grid, dist, bn, bw, &biomes);
            let (idx, rough, sand) = biome_blend(&mut got, &Grid::new(res, world, seed), &bp, 6);
            let s = stage_seed(seed, 6);
            let spacing = world / (res - 1) as f32;
            let cell = world / grid as f32;
            let table = SiteTable::new(
                grid,
                3 + (bn * 1.5 / cell).ceil() as i32,
                dist,
                biomes.len() as u32,
                s,
            );
            let (wx, wz) = warp_fields(res, spacing / cell, s);
            let mut hood = Neighbourhood::new();
            for i in 0..res * res {
                let (x, z) = (i % res, i / res);
                let e = biome_sample(
                    [x as f32 * spacing, z as f32 * spacing],
                    [wx[i], wz[i]],
                    base[i],
                    world,
                    &bp,
                    &table,
                    &mut hood,
                );
                let a = BiomeSample {
                    index: idx[i],
                    height01: got[i],
                    roughness: rough[i],
                    sandiness: sand[i],
                };
                assert_eq!(
                    a.height01.to_bits(),
                    e.height01.to_bits(),
                    "res {res} grid {grid} sample {x},{z}: {a:?} vs {e:?}"
                );
                assert_eq!(a, e, "res {res} grid {grid} sample {x},{z}");
            }
        }
    }

    #[test]
    fn fast_power_is_close_to_the_true_power() {
        // Error against f64 `powf` over the parameter range (exponent 0.1..=8).
        let (mut worst, mut worst_abs) = (0.0f64, 0.0f64);
        for i in 0..=4000 {
            // Bases from 1e-12 to 1 (log-spaced) plus linear ones.
            let t = if i % 2 == 0 {
                10f64.powf(-12.0 * (i as f64 / 4000.0)) as f32
            } else {
                i as f32 / 4000.0
            };
            for k in 0..=79 {
                let e = 0.1 + k as f32 * 0.1;
                let want = (t as f64).powf(e as f64);
                let got = pow_approx(t, e) as f64;
                worst_abs = worst_abs.max((got - want).abs());
                if want > 1e-6 {
                    worst = worst.max((got - want).abs() / want);
                }
            }
        }
        // About 1 ulp at 1 (heights are 0..1 here, times at most a few hundred metres later).
        assert!(worst_abs < 2e-7, "worst absolute error {worst_abs:e}");
        assert!(worst < 3e-6, "worst relative error {worst:e}");
        // Exact end points, and the subnormal and special inputs.
        for e in [0.1f32, 1.0, 1.2, 3.0, 8.0] {
            assert_eq!(pow_approx(1.0, e), 1.0);
            assert_eq!(pow_approx(0.0, e), 0.0);
        }
        assert_eq!(log2_approx(1.0), 0.0);
        assert_eq!(log2_approx(0.25), -2.0);
        assert_eq!(exp2_approx(-3.0), 0.125);
        assert_eq!(log2_approx(0.0), f32::NEG_INFINITY);
        assert!((log2_approx(1e-40) - (1e-40f64).log2() as f32).abs() < 1e-4);
        assert!(
            log2_approx(f32::NAN).is_nan()
                && log2_approx(-1.0).is_nan()
                && exp2_approx(f32::NAN).is_nan()
        );
        assert_eq!(exp2_approx(-200.0), 0.0);
        assert_eq!(exp2_approx(1000.0), exp2_approx(127.0));
    }

    #[test]
    fn baseline_rows_match_dispatched_rows() {
        // `biome_row_body` called here is the baseline build; `biome_blend` dispatches to the
        // AVX2 copy where the CPU has it. Both must give the same bits.
        let (res, world, grid, bn, bw) = (161usize, 1024.0f32, 5u32, 100.0f32, 120.0f32);
        let biomes = default_biomes();
        let base: Vec<f32> = (0..res * res)
            .map(|i| unit(hash_u32(i as u32 ^ 0xba5e)))
            .collect();
        let mut got = base.clone();
        let (idx, rough, sand) = biome_blend(
            &mut got,
            &Grid::new(res, world, 5),
            &bparams(grid, 0.8, bn, bw, &biomes),
            6,
        );
        let s = stage_seed(5, 6);
        let (spacing, cell) = (world / (res - 1) as f32, world / grid as f32);
        let table = SiteTable::new(
            grid,
            3 + (bn * 1.5 / cell).ceil() as i32,
            0.8,
            biomes.len() as u32,
            s,
        );
        let (wx, wz) = warp_fields(res, spacing / cell, s);
        let cfg = RowCfg::new(spacing, cell, bn, bw, &biomes);
        for z in 0..res {
            let r = z * res..(z + 1) * res;
            let mut h = base[r.clone()].to_vec();
            let (mut i, mut ro, mut sa) = (vec![0u8; res], vec![0.0f32; res], vec![0.0f32; res]);
            biome_row_body(
                &RowIn {
                    z,
                    wx: &wx[r.clone()],
                    wz: &wz[r.clone()],
                },
                &mut h,
                &mut i,
                &mut ro,
                &mut sa,
                &cfg,
                &table,
            );
            assert!(
                h.iter()
                    .zip(&got[r.clone()])
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "row {z}"
            );
            assert_eq!(
                (&i[..], &ro[..], &sa[..]),
                (&idx[r.clone()], &rough[r.clone()], &sand[r]),
                "row {z}"
            );
        }
    }

    #[test]
    fn lanes_power_is_the_scalar_power() {
        // The lane functions must give the scalar definition's bits in every lane.
        let mut xs = F8::splat(0.0);
        for i in 0..200_000u32 {
            let l = (i % 8) as usize;
            xs.0[l] = unit(hash_u32(i)) * if i % 5 == 0 { 1e-30 } else { 1.0 };
            if l == 7 {
                let lt = log2_x8(xs);
                let e = F8::splat(0.1 + (i % 79) as f32 * 0.1);
                let p = exp2_x8(e * lt);
                for k in 0..8 {
                    assert_eq!(lt.0[k].to_bits(), log2_approx(xs.0[k]).to_bits());
                    assert_eq!(p.0[k].to_bits(), pow_approx(xs.0[k], e.0[k]).to_bits());
                }
            }
        }
    }

    #[test]
    fn blend_is_continuous_across_borders() {
        // With a flat base, the blended relief may only change gradually between neighbours.
        let res = 257;
        let mut base = vec![0.7f32; res * res];
        let world = 1024.0;
        biome_blend(
            &mut base,
            &Grid::new(res, world, 9),
            &bparams(5, 0.8, 0.0, 80.0, &default_biomes()),
            6,
        );
        let spacing = world / (res - 1) as f32;
        // Each weight is a smoothstep (max slope 1.5 / 80 per metre) of d - d_min, which changes
        // by at most 2 m per metre; relief values differ by at most 1. A hard border would jump
        // by up to the full relief difference (≈ 0.5 here) in one sample.
        let bound = 2.0 * 1.5 / 80.0 * spacing * 1.01;
        for z in 0..res {
            for x in 1..res {
                let step = (base[z * res + x] - base[z * res + x - 1]).abs();
                assert!(step <= bound, "step {step} > {bound} at {x},{z}");
            }
        }
    }
}
