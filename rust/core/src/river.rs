//! River along a noisy quadratic Bézier.
//!
//! The curve starts at the middle of one map side, passes through the map centre and ends on
//! another side (sides picked from the seed). Sample positions are displaced by noise before
//! measuring their distance to the curve, so the river meanders. Inside `width / 2` the terrain
//! is carved to `-depth` (below sea level, so the river splits the island); across the `bank`
//! it eases back to the terrain with a smoothstep. Carving only ever lowers the terrain.

use crate::gradient_noise::Fbm;
use crate::grid::{par_rows, smoothstep, Grid};
use crate::hash::{hash_u32, stage_seed, unit};
use crate::params::RiverParams;

/// Segments of the polyline approximating the Bézier (the GPU pass handles at most this many:
/// its per-row segment mask has `RIVER_SEGMENTS` bits).
pub const RIVER_SEGMENTS: usize = 128;

/// Slack on the meander amplitude when finding the row spans the river can reach
/// (`carve_river.wgsl` repeats it).
pub const RIVER_REACH_SLACK: f32 = 1.0001;

/// Control points (metres, map centre at the origin) of the river's quadratic Bézier.
pub fn river_control_points(world_size: f32, seed: u64, tag: u32) -> [[f32; 2]; 3] {
    let s = stage_seed(seed, tag);
    let half = world_size * 0.5;
    let a = hash_u32(s) % 4;
    let b = (a + 1 + hash_u32(s ^ 0xabcd) % 3) % 4;
    let side = |k: u32, t: f32| -> [f32; 2] {
        let o = (t - 0.5) * 0.3 * world_size;
        match k {
            0 => [-half, o],
            1 => [half, o],
            2 => [o, -half],
            _ => [o, half],
        }
    };
    let p0 = side(a, unit(hash_u32(s ^ 0x1111)));
    let p2 = side(b, unit(hash_u32(s ^ 0x2222)));
    // B(½) = ¼P0 + ½P1 + ¼P2 = centre (0, 0)  =>  P1 = -(P0 + P2) / 2.
    let p1 = [-(p0[0] + p2[0]) * 0.5, -(p0[1] + p2[1]) * 0.5];
    [p0, p1, p2]
}

/// Points of the polyline approximating the Bézier (`RIVER_SEGMENTS + 1` points).
pub fn river_polyline(ctrl: &[[f32; 2]; 3]) -> Vec<[f32; 2]> {
    (0..=RIVER_SEGMENTS)
        .map(|i| {
            let t = i as f32 / RIVER_SEGMENTS as f32;
            let u = 1.0 - t;
            let (a, b, c) = (u * u, 2.0 * u * t, t * t);
            [
                a * ctrl[0][0] + b * ctrl[1][0] + c * ctrl[2][0],
                a * ctrl[0][1] + b * ctrl[1][1] + c * ctrl[2][1],
            ]
        })
        .collect()
}

/// Edge of a [`SegmentBuckets`] cell, metres.
/// Smallest edge of a [`SegmentBuckets`] cell, metres.
const BUCKET: f32 = 32.0;
/// Most [`SegmentBuckets`] cells per side: on huge maps the cells grow instead (a 10,000 km map
/// would otherwise ask for 10^11 cells). Bucketing never changes a result, only its speed.
const MAX_BUCKETS_PER_SIDE: f32 = 1024.0;

/// Uniform grid over the map listing, per cell, the polyline segments that come within
/// `reach` of it: a point only measures its distance to the few segments of its cell. The
/// lists are structure-of-arrays; [`LANES`] samples are measured against a segment at once.
struct SegmentBuckets {
    lo: f32,
    /// 1 / cell edge (metres; a power of two times [`BUCKET`]).
    inv_bucket: f32,
    n: usize,
    /// Cell `c` owns entries `start[c] .. start[c + 1]`.
    start: Vec<u32>,
    ax: Vec<f32>,
    az: Vec<f32>,
    dx: Vec<f32>,
    dz: Vec<f32>,
    len2: Vec<f32>,
}

/// Samples measured together (one vector of warped positions per segment).
const LANES: usize = 8;

impl SegmentBuckets {
    fn new(line: &[[f32; 2]], extent: f32, reach: f32) -> SegmentBuckets {
        let lo = -extent;
        // A power of two times BUCKET, so dividing by it is multiplying by its exact inverse.
        let mut bucket = BUCKET;
        while 2.0 * extent > bucket * MAX_BUCKETS_PER_SIDE {
            bucket *= 2.0;
        }
        let inv_bucket = 1.0 / bucket;
        let n = ((2.0 * extent) * inv_bucket).ceil().max(1.0) as usize;
        let mut cells = vec![Vec::new(); n * n];
        let cell_of = |v: f32| (((v - lo) * inv_bucket).floor().max(0.0) as usize).min(n - 1);
        for (k, w) in line.windows(2).enumerate() {
            let (x0, x1) = (
                cell_of(w[0][0].min(w[1][0]) - reach),
                cell_of(w[0][0].max(w[1][0]) + reach),
            );
            let (z0, z1) = (
                cell_of(w[0][1].min(w[1][1]) - reach),
                cell_of(w[0][1].max(w[1][1]) + reach),
            );
            for z in z0..=z1 {
                for x in x0..=x1 {
                    cells[z * n + x].push(k);
                }
            }
        }
        let mut b = SegmentBuckets {
            lo,
            inv_bucket,
            n,
            start: Vec::with_capacity(n * n + 1),
            ax: vec![],
            az: vec![],
            dx: vec![],
            dz: vec![],
            len2: vec![],
        };
        for list in &cells {
            b.start.push(b.ax.len() as u32);
            for &k in list {
                let (p, q) = (line[k], line[k + 1]);
                let (dx, dz) = (q[0] - p[0], q[1] - p[1]);
                b.ax.push(p[0]);
                b.az.push(p[1]);
                b.dx.push(dx);
                b.dz.push(dz);
                b.len2.push(dx * dx + dz * dz);
            }
        }
        b.start.push(b.ax.len() as u32);
        b
    }

    /// The cell of `q` (whose list has every segment that may lie within `reach` of `q`), or
    /// `None` outside the grid (which extends `reach` beyond every segment).
    #[inline(always)]
    fn cell(&self, q: [f32; 2]) -> Option<usize> {
        let fx = (q[0] - self.lo) * self.inv_bucket;
        let fz = (q[1] - self.lo) * self.inv_bucket;
        if !(fx >= 0.0 && fz >= 0.0) || fx >= self.n as f32 || fz >= self.n as f32 {
            return None;
        }
        Some(fz as usize * self.n + fx as usize)
    }

    /// Lower `best[l]` to the squared distance from `(qx[l], qz[l])` to each segment of `cell`:
    /// per segment exactly [`segment_distance_sq`] (`max`/`min` equal `clamp` for the finite
    /// values here), and min is exact, so neither the order nor extra segments change a
    /// distance below `reach` (a nearer segment within `reach` is in the lane's own cell).
    #[inline(always)]
    #[allow(clippy::manual_clamp)] // max/min vectorise; equal to clamp for these finite values
    fn lower_distance_sq(
        &self,
        cell: usize,
        qx: &[f32; LANES],
        qz: &[f32; LANES],
        best: &mut [f32; LANES],
    ) {
        for e in self.start[cell] as usize..self.start[cell + 1] as usize {
            let (ax, az, dx, dz, l2) =
                (self.ax[e], self.az[e], self.dx[e], self.dz[e], self.len2[e]);
            // Lane-wise in separate steps so each loop is one straight vector sequence.
            let (mut px, mut pz, mut t) = ([0f32; LANES], [0f32; LANES], [0f32; LANES]);
            for l in 0..LANES {
                px[l] = qx[l] - ax;
                pz[l] = qz[l] - az;
            }
            if l2 > 0.0 {
                for l in 0..LANES {
                    t[l] = ((px[l] * dx + pz[l] * dz) / l2).max(0.0).min(1.0);
                }
            }
            for l in 0..LANES {
                let (ex, ez) = (px[l] - t[l] * dx, pz[l] - t[l] * dz);
                best[l] = best[l].min(ex * ex + ez * ez);
            }
        }
    }
}

/// Squared distance from `p` to segment `a`-`b`.
#[cfg(test)]
fn segment_distance_sq(p: [f32; 2], a: [f32; 2], b: [f32; 2]) -> f32 {
    let (dx, dz) = (b[0] - a[0], b[1] - a[1]);
    let (px, pz) = (p[0] - a[0], p[1] - a[1]);
    let len2 = dx * dx + dz * dz;
    let t = if len2 > 0.0 {
        ((px * dx + pz * dz) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (ex, ez) = (px - t * dx, pz - t * dz);
    ex * ex + ez * ez
}

/// Offset (noise units) of the z component of the displacement noise.
pub const RIVER_WARP_OFFSET: [f32; 2] = [31.7, -17.3];

/// Per-map constants of [`river_row`].
struct RiverCfg<'a> {
    line: &'a [[f32; 2]],
    buckets: &'a SegmentBuckets,
    /// Stage seed of the displacement noise.
    s: u32,
    resolution: usize,
    spacing: f32,
    half: f32,
    width: f32,
    reach: f32,
    depth: f32,
    meander: f32,
    meander_scale: f32,
}

/// The sample ranges `x0 ..= x1` of the row at `pz` (metres) that the river can reach: the
/// x-extents, widened by `lim`, of the polyline segments within `lim` of the row, merged by a
/// sorted sweep and clipped to the map.
fn row_spans(
    line: &[[f32; 2]],
    pz: f32,
    lim: f32,
    half: f32,
    spacing: f32,
    resolution: usize,
) -> Vec<(usize, usize)> {
    let mut spans: Vec<(f32, f32)> = line
        .windows(2)
        .filter(|w| w[0][1].min(w[1][1]) - lim <= pz && w[0][1].max(w[1][1]) + lim >= pz)
        .map(|w| (w[0][0].min(w[1][0]) - lim, w[0][0].max(w[1][0]) + lim))
        .collect();
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut merged: Vec<(f32, f32)> = Vec::new();
    for sp in spans {
        match merged.last_mut() {
            Some(m) if sp.0 <= m.1 => m.1 = m.1.max(sp.1),
            _ => merged.push(sp),
        }
    }
    merged
        .into_iter()
        .map(|(lo, hi)| {
            (
                (((lo + half) / spacing).floor().max(0.0)) as usize,
                ((((hi + half) / spacing).ceil()) as usize).min(resolution - 1),
            )
        })
        .filter(|(x0, x1)| x0 <= x1)
        .collect()
}

#[inline(always)]
fn river_row_body(z: usize, hrow: &mut [f32], c: &RiverCfg) {
    let (spacing, half, reach, meander) = (c.spacing, c.half, c.reach, c.meander);
    let pz = z as f32 * spacing - half;
    // Segments that can come within `reach` of this row after displacement.
    let lim = reach + meander * RIVER_REACH_SLACK;
    let ms = c.meander_scale;
    // The displacement noise (`RiverParams::warp_noise`), its octave count a constant here.
    let warp = Fbm::classic(RiverParams::WARP_OCTAVES, c.s);
    let mut wx = Vec::new();
    let mut wz = Vec::new();
    for (x0, x1) in row_spans(c.line, pz, lim, half, spacing, c.resolution) {
        // Displacement noise for the whole span at once (vectorised row kernel).
        let len = x1 - x0 + 1;
        wx.clear();
        wx.resize(len, 0.0f32);
        wz.clear();
        wz.resize(len, 0.0f32);
        let sx0 = (x0 as f32 * spacing - half) / ms;
        warp.add_row(&mut wx, pz / ms, spacing / ms, sx0);
        warp.add_row(
            &mut wz,
            pz / ms + RIVER_WARP_OFFSET[1],
            spacing / ms,
            sx0 + RIVER_WARP_OFFSET[0],
        );
        // Blocks of LANES samples, each measured against the segments of the cells its warped
        // positions fall in (usually one or two cells per block).
        let mut x = x0;
        while x <= x1 {
            let m = (x1 + 1 - x).min(LANES);
            let (mut qx, mut qz) = ([0f32; LANES], [0f32; LANES]);
            for l in 0..LANES {
                // Lanes past the span repeat its last sample (measured, not written).
                let xs = x + l.min(m - 1);
                let k = xs - x0;
                qx[l] = (xs as f32 * spacing - half) + meander * wx[k].clamp(-1.0, 1.0);
                qz[l] = pz + meander * wz[k].clamp(-1.0, 1.0);
            }
            let (mut cells, mut nc) = ([0usize; LANES], 0);
            for l in 0..m {
                if let Some(cell) = c.buckets.cell([qx[l], qz[l]]) {
                    if !cells[..nc].contains(&cell) {
                        cells[nc] = cell;
                        nc += 1;
                    }
                }
            }
            let mut d2 = [f32::INFINITY; LANES];
            for &cell in &cells[..nc] {
                c.buckets.lower_distance_sq(cell, &qx, &qz, &mut d2);
            }
            for l in 0..m {
                if d2[l] >= reach * reach {
                    continue;
                }
                let t = 1.0 - smoothstep(c.width * 0.5, reach + 1e-3, d2[l].sqrt());
                if t > 0.0 {
                    let h = hrow[x + l];
                    let carved = h + (-c.depth - h) * t;
                    hrow[x + l] = h.min(carved);
                }
            }
            x += m;
        }
    }
}

crate::simd::dispatch! {
    /// One row of [`carve_river`] (AVX2 copy when available; identical results, no FMA).
    fn river_row(z: usize, hrow: &mut [f32], c: &RiverCfg) => river_row_body
}

/// Carve the river (the `carve_river.wgsl` pass) into `heights` (metres, row-major over `g`),
/// with the bed width and depth, bank width and meander of `r` and the stage seed of
/// `(g.seed, tag)`. `r.enabled` is not consulted: the pipeline skips the stage when it is false.
pub fn carve_river(heights: &mut [f32], g: &Grid, r: &RiverParams, tag: u32) {
    let (resolution, world_size, seed) = (g.resolution, g.world_size, g.seed);
    let (width, bank, depth, meander, meander_scale) =
        (r.width, r.bank, r.depth, r.meander, r.meander_scale);
    let line = river_polyline(&river_control_points(world_size, seed, tag));
    let spacing = world_size / (resolution - 1) as f32;
    let half = world_size * 0.5;
    let reach = width * 0.5 + bank;
    let buckets = SegmentBuckets::new(&line, half + meander + reach + spacing, reach);
    let cfg = RiverCfg {
        line: &line,
        buckets: &buckets,
        s: stage_seed(seed, tag),
        resolution,
        spacing,
        half,
        width,
        reach,
        depth,
        meander,
        meander_scale,
    };
    par_rows(heights, resolution, |z, hrow| river_row(z, hrow, &cfg));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_through_centre_from_map_sides() {
        for seed in 0..50 {
            let c = river_control_points(1000.0, seed, 5);
            let line = river_polyline(&c);
            let mid = line[RIVER_SEGMENTS / 2];
            assert!(mid[0].abs() < 1e-3 && mid[1].abs() < 1e-3);
            for p in [c[0], c[2]] {
                assert!((p[0].abs() - 500.0).abs() < 1e-3 || (p[1].abs() - 500.0).abs() < 1e-3);
            }
            assert_ne!(c[0], c[2]);
        }
    }

    /// The definition: each sample's distance to *every* polyline segment (no buckets), on the
    /// same row spans and the same displacement noise.
    fn carve_reference(h: &mut [f32], g: &Grid, r: &RiverParams) {
        let (res, world, seed) = (g.resolution, g.world_size, g.seed);
        let (width, bank, depth, meander, ms) =
            (r.width, r.bank, r.depth, r.meander, r.meander_scale);
        let line = river_polyline(&river_control_points(world, seed, 5));
        let warp = Fbm::new(&r.warp_noise(), stage_seed(seed, 5));
        let spacing = world / (res - 1) as f32;
        let half = world * 0.5;
        let reach = width * 0.5 + bank;
        let lim = reach + meander * RIVER_REACH_SLACK;
        for z in 0..res {
            let pz = z as f32 * spacing - half;
            for (x0, x1) in row_spans(&line, pz, lim, half, spacing, res) {
                let (mut wx, mut wz) = (vec![0.0f32; x1 - x0 + 1], vec![0.0f32; x1 - x0 + 1]);
                let sx0 = (x0 as f32 * spacing - half) / ms;
                warp.add_row(&mut wx, pz / ms, spacing / ms, sx0);
                warp.add_row(
                    &mut wz,
                    pz / ms + RIVER_WARP_OFFSET[1],
                    spacing / ms,
                    sx0 + RIVER_WARP_OFFSET[0],
                );
                for x in x0..=x1 {
                    let px = x as f32 * spacing - half;
                    let q = [
                        px + meander * wx[x - x0].clamp(-1.0, 1.0),
                        pz + meander * wz[x - x0].clamp(-1.0, 1.0),
                    ];
                    let d2 = line
                        .windows(2)
                        .map(|w| segment_distance_sq(q, w[0], w[1]))
                        .fold(f32::INFINITY, f32::min);
                    if d2 >= reach * reach {
                        continue;
                    }
                    let t = 1.0 - smoothstep(width * 0.5, reach + 1e-3, d2.sqrt());
                    if t > 0.0 {
                        let hv = h[z * res + x];
                        h[z * res + x] = hv.min(hv + (-depth - hv) * t);
                    }
                }
            }
        }
    }

    #[test]
    fn bucketed_carve_equals_full_scan() {
        for (seed, width, bank, meander, ms) in [
            (1u64, 12.0f32, 35.0f32, 45.0f32, 260.0f32),
            (77, 3.0, 2.0, 0.0, 100.0),
            (u64::MAX, 60.0, 120.0, 200.0, 90.0),
            (5, 1.0, 80.0, 10.0, 1000.0),
        ] {
            let res = 257;
            let h0: Vec<f32> = (0..res * res)
                .map(|i| ((i * 7919) % 101) as f32 * 0.3 - 5.0)
                .collect();
            let (mut a, mut b) = (h0.clone(), h0.clone());
            let g = Grid::new(res, 1024.0, seed);
            let r = RiverParams {
                width,
                bank,
                depth: 3.0,
                meander,
                meander_scale: ms,
                ..RiverParams::default()
            };
            carve_river(&mut a, &g, &r, 5);
            carve_reference(&mut b, &g, &r);
            assert!(
                a.iter().zip(&b).all(|(p, q)| p.to_bits() == q.to_bits()),
                "seed {seed}"
            );
            assert!(a != h0, "seed {seed}: nothing carved");
        }
    }

    #[test]
    fn carves_below_sea_level_only_lowering() {
        let res = 129;
        let mut h = vec![10.0f32; res * res];
        let r = RiverParams {
            width: 12.0,
            bank: 10.0,
            depth: 3.0,
            meander: 0.0,
            meander_scale: 100.0,
            ..RiverParams::default()
        };
        carve_river(&mut h, &Grid::new(res, 512.0, 7), &r, 5);
        assert!(h.iter().all(|&v| v <= 10.0));
        assert_eq!(h[64 * res + 64], -3.0); // passes the centre
        assert!(h.iter().filter(|&&v| v == -3.0).count() > res); // a bed, not a point
        assert!(h.iter().filter(|&&v| v == 10.0).count() > res * res / 2);
    }
}
