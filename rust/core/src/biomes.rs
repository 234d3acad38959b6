//! Displaced-grid Voronoi biomes, blended smoothly across borders.
//!
//! The map is divided into `grid × grid` cells; each cell's site is displaced inside it by up
//! to `distortion / 2` of a cell (hashed). A sample's position is wiggled by boundary noise, then
//! the sites of the 5×5 surrounding cells are ranked by distance. The nearest site's region
//! gives the biome index; every site within `blend_width` of the nearest contributes with weight
//! `1 - smoothstep(0, blend_width, d - d_min)`, so weights change continuously across borders and
//! no cliff appears where two regions meet.

use crate::gradient_noise::{fast_floor, fbm_field, fbm_point};
use crate::hash::{hash2, hash_u32, stage_seed, unit};
use crate::params::Biome;
use crate::grid::smoothstep;
use rayon::prelude::*;

/// Site of cell `(i, j)` in cell units.
#[inline(always)]
pub fn biome_site(i: i32, j: i32, distortion: f32, s: u32) -> [f32; 2] {
    let h = hash2(i, j, s);
    let ox = unit(hash_u32(h ^ 0x5555_1111)) - 0.5;
    let oz = unit(hash_u32(h ^ 0x2222_9999)) - 0.5;
    [i as f32 + 0.5 + ox * distortion, j as f32 + 0.5 + oz * distortion]
}

/// Biome of the region of cell `(i, j)`.
#[inline(always)]
pub fn region_biome(i: i32, j: i32, count: u32, s: u32) -> u32 {
    hash_u32(hash2(i, j, s) ^ 0x00b1_07e5) % count
}

/// Blended biome attributes of one sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BiomeSample {
    /// Biome index of the nearest region.
    pub index: u8,
    /// Blended relief (0..1) from the normalised base height.
    pub height01: f32,
    /// Blended fine-detail multiplier.
    pub roughness: f32,
    /// Blended sandiness (0 grass .. 1 sand).
    pub sandiness: f32,
}

/// Relief of biome `b` from the normalised base height.
#[inline(always)]
pub fn biome_relief(b: &Biome, base01: f32) -> f32 {
    b.height_scale * base01.clamp(0.0, 1.0).powf(b.exponent)
}

/// Sites and biomes of the cells, precomputed (a pure cache of [`biome_site`] and
/// [`region_biome`]; cells outside the table are computed on the fly).
pub struct SiteTable {
    lo: i32,
    size: i32,
    sites: Vec<([f32; 2], u32)>,
    distortion: f32,
    count: u32,
    s: u32,
}

impl SiteTable {
    /// Table for a `grid × grid` layout, padded by `pad` cells on every side.
    pub fn new(grid: u32, pad: i32, distortion: f32, count: u32, s: u32) -> SiteTable {
        let lo = -pad;
        let size = grid as i32 + 2 * pad;
        let mut sites = Vec::with_capacity((size * size) as usize);
        for j in 0..size {
            for i in 0..size {
                let (ci, cj) = (lo + i, lo + j);
                sites.push((biome_site(ci, cj, distortion, s), region_biome(ci, cj, count, s)));
            }
        }
        SiteTable { lo, size, sites, distortion, count, s }
    }

    #[inline(always)]
    fn get(&self, i: i32, j: i32) -> ([f32; 2], u32) {
        let (a, b) = (i - self.lo, j - self.lo);
        if a >= 0 && b >= 0 && a < self.size && b < self.size {
            self.sites[(b * self.size + a) as usize]
        } else {
            (biome_site(i, j, self.distortion, self.s), region_biome(i, j, self.count, self.s))
        }
    }
}

/// Offset of the second boundary-wiggle component, in noise units.
pub const BIOME_WARP_OFFSET: [f32; 2] = [19.1, -7.3];

/// The boundary wiggle of the biome lookup at `(px, pz)` metres: each component is an fBm
/// (3 octaves, wavelength one cell) in about [-1.2, 1.2], to be scaled by `boundary_noise`.
#[inline(always)]
pub fn biome_warp(px: f32, pz: f32, cell: f32, s: u32) -> [f32; 2] {
    let ns = cell;
    let wx = fbm_point(px / ns, pz / ns, s ^ 0x0f0f_0f0f, 3, 2.0, 0.5);
    let wz = fbm_point(px / ns + BIOME_WARP_OFFSET[0], pz / ns + BIOME_WARP_OFFSET[1], s ^ 0x0f0f_0f0f, 3, 2.0, 0.5);
    [wx, wz]
}

/// The sites around one cell that can matter for a sample in it (positions in cell units and
/// biome indices), in 5×5 scan order.
///
/// Of the 5×5 surrounding sites, those that cannot be the nearest site nor lie within the blend
/// reach of it for *any* point of the cell are dropped (exact pruning): the nearest-site
/// distance anywhere in the cell is at most `U = min_k max_corner |corner - site_k|`, so a site
/// whose distance to the cell rectangle exceeds `U + blend / cell` contributes nothing.
pub struct Neighbourhood {
    cell: (i32, i32),
    extra: f32,
    len: usize,
    last: usize,
    sx: [f32; 25],
    sz: [f32; 25],
    b: [u32; 25],
}

impl Neighbourhood {
    /// An empty cache (filled on first use).
    pub fn new() -> Neighbourhood {
        Neighbourhood { cell: (i32::MIN, i32::MIN), extra: f32::NAN, len: 0, last: 0, sx: [0.0; 25], sz: [0.0; 25], b: [0; 25] }
    }

    /// Load the candidate sites of cell `(ci, cj)`; `extra` is the blend width in cell units.
    #[inline(always)]
    fn load(&mut self, ci: i32, cj: i32, extra: f32, table: &SiteTable) {
        if self.cell == (ci, cj) && self.extra == extra {
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
        for k in self.len..25 {
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

/// Evaluate the biome blend at `(px, pz)` metres (map corner at 0), with the boundary wiggle
/// `warp` = [`biome_warp`]`(px, pz, ...)`. `hood` caches the sites of the last cell looked at.
#[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
#[inline(always)]
pub fn biome_sample(
    px: f32,
    pz: f32,
    warp: [f32; 2],
    base01: f32,
    world_size: f32,
    grid: u32,
    boundary_noise: f32,
    blend_width: f32,
    biomes: &[Biome],
    table: &SiteTable,
    hood: &mut Neighbourhood,
) -> BiomeSample {
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
    BiomeSample { index: hood.b[kmin] as u8, height01: h * inv, roughness: r * inv, sandiness: sand * inv }
}

/// Per-map constants of [`biome_row`].
struct RowCfg {
    spacing: f32,
    world_size: f32,
    grid: u32,
    boundary_noise: f32,
    blend_width: f32,
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn biome_row_body(
    z: usize,
    hrow: &mut [f32],
    irow: &mut [u8],
    rrow: &mut [f32],
    srow: &mut [f32],
    wx: &[f32],
    wz: &[f32],
    c: &RowCfg,
    biomes: &[Biome],
    table: &SiteTable,
) {
    let pz = z as f32 * c.spacing;
    let mut hood = Neighbourhood::new();
    for x in 0..hrow.len() {
        let bs = biome_sample(
            x as f32 * c.spacing,
            pz,
            [wx[x], wz[x]],
            hrow[x],
            c.world_size,
            c.grid,
            c.boundary_noise,
            c.blend_width,
            biomes,
            table,
            &mut hood,
        );
        hrow[x] = bs.height01;
        irow[x] = bs.index;
        rrow[x] = bs.roughness;
        srow[x] = bs.sandiness;
    }
}

crate::simd::dispatch! {
    /// One row of [`biome_blend`] (AVX2 copy when available; identical results, no FMA).
    fn biome_row(z: usize, hrow: &mut [f32], irow: &mut [u8], rrow: &mut [f32], srow: &mut [f32], wx: &[f32], wz: &[f32], c: &RowCfg, biomes: &[Biome], table: &SiteTable) => biome_row_body
}

/// Biome fields of a `resolution²` map covering `world_size` metres.
///
/// * `base01` — normalised base relief (0..1), replaced by the blended biome relief;
/// * `grid` — Voronoi cells per side (1..=64); `distortion` — site displacement (0..=1);
/// * `boundary_noise` — border wiggle amplitude, metres; `blend_width` — blend distance, metres.
///
/// Returns `(biome index, roughness, sandiness)` per sample.
#[allow(clippy::too_many_arguments)]
pub fn biome_blend(
    base01: &mut [f32],
    resolution: usize,
    world_size: f32,
    grid: u32,
    distortion: f32,
    boundary_noise: f32,
    blend_width: f32,
    biomes: &[Biome],
    seed: u64,
    tag: u32,
) -> (Vec<u8>, Vec<f32>, Vec<f32>) {
    let s = stage_seed(seed, tag);
    let spacing = world_size / (resolution - 1) as f32;
    let cell = world_size / grid as f32;
    let pad = 3 + (boundary_noise * 1.5 / cell).ceil().min(64.0) as i32;
    let table = SiteTable::new(grid, pad, distortion, biomes.len() as u32, s);
    let step = spacing / cell;
    let ws = s ^ 0x0f0f_0f0f;
    let (wx, wz) = rayon::join(
        || fbm_field(resolution, step, [0.0, 0.0], 3, 2.0, 0.5, ws),
        || fbm_field(resolution, step, BIOME_WARP_OFFSET, 3, 2.0, 0.5, ws),
    );
    let n = resolution * resolution;
    let mut index = vec![0u8; n];
    let mut rough = vec![0.0f32; n];
    let mut sand = vec![0.0f32; n];
    base01
        .par_chunks_mut(resolution)
        .zip(index.par_chunks_mut(resolution))
        .zip(rough.par_chunks_mut(resolution).zip(sand.par_chunks_mut(resolution)))
        .enumerate()
        .for_each(|(z, ((hrow, irow), (rrow, srow)))| {
            let i0 = z * resolution;
            let (wxr, wzr) = (&wx[i0..i0 + resolution], &wz[i0..i0 + resolution]);
            let cfg = RowCfg { spacing, world_size, grid, boundary_noise, blend_width };
            biome_row(z, hrow, irow, rrow, srow, wxr, wzr, &cfg, biomes, &table);
        });
    (index, rough, sand)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::default_biomes;

    #[test]
    fn several_regions_and_weights_normalised() {
        let res = 129;
        let mut base = vec![0.5f32; res * res];
        let (idx, rough, _) = biome_blend(&mut base, res, 1024.0, 5, 0.8, 40.0, 80.0, &default_biomes(), 3, 6);
        let mut seen = [false; 16];
        idx.iter().for_each(|&i| seen[i as usize] = true);
        assert!(seen.iter().filter(|&&s| s).count() >= 3);
        let (mn, mx) = default_biomes().iter().fold((f32::MAX, f32::MIN), |(a, b), bi| (a.min(bi.roughness), b.max(bi.roughness)));
        assert!(rough.iter().all(|&r| r >= mn - 1e-5 && r <= mx + 1e-5));
    }

    /// The definition: all 5×5 sites, no cache, no pruning.
    #[allow(clippy::too_many_arguments)]
    fn sample_reference(px: f32, pz: f32, warp: [f32; 2], base01: f32, world: f32, grid: u32, bn: f32, bw: f32, biomes: &[Biome], dist: f32, s: u32) -> BiomeSample {
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
        BiomeSample { index: bk[kmin] as u8, height01: h / ws, roughness: r / ws, sandiness: sa / ws }
    }

    #[test]
    fn pruned_neighbourhood_matches_full_definition() {
        let biomes = default_biomes();
        for &(grid, dist, bn, bw) in &[(5u32, 0.8f32, 100.0f32, 120.0f32), (3, 1.0, 0.0, 5.0), (16, 0.5, 30.0, 400.0), (64, 1.0, 10.0, 1.0)] {
            let s = stage_seed(17, 6);
            let table = SiteTable::new(grid, 3 + (bn * 1.5 / (1024.0 / grid as f32)).ceil() as i32, dist, biomes.len() as u32, s);
            let mut hood = Neighbourhood::new();
            for i in 0..20_000u32 {
                let px = (i % 200) as f32 * 5.13 + 0.37;
                let pz = (i / 200) as f32 * 10.27 + 0.11;
                let warp = [unit(hash_u32(i)) * 2.4 - 1.2, unit(hash_u32(i ^ 0xffff)) * 2.4 - 1.2];
                let base = unit(hash_u32(i.wrapping_mul(7)));
                let a = biome_sample(px, pz, warp, base, 1024.0, grid, bn, bw, &biomes, &table, &mut hood);
                let mut e = sample_reference(px, pz, warp, base, 1024.0, grid, bn, bw, &biomes, dist, s);
                // `x / w` in the reference vs `x * (1 / w)`: allow that rounding only.
                for (got, want) in [(a.height01, &mut e.height01), (a.roughness, &mut e.roughness), (a.sandiness, &mut e.sandiness)] {
                    assert!((got - *want).abs() <= 1e-6, "grid {grid} i {i}: {got} vs {want}");
                    *want = got;
                }
                assert_eq!(a, e, "grid {grid} i {i}");
            }
        }
    }

    #[test]
    fn blend_is_continuous_across_borders() {
        // With a flat base, the blended relief may only change gradually between neighbours.
        let res = 257;
        let mut base = vec![0.7f32; res * res];
        let world = 1024.0;
        biome_blend(&mut base, res, world, 5, 0.8, 0.0, 80.0, &default_biomes(), 9, 6);
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
