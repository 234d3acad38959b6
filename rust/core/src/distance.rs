//! Exact Euclidean distance transform (Meijster, Roerdink & Hesselink 2000) and the signed
//! distance to the coast.
//!
//! Phase 1 scans columns, phase 2 computes the lower envelope of parabolas per row; both phases
//! run their independent lines in parallel. All arithmetic is integer, so the result is exact.

use rayon::prelude::*;

/// Sentinel squared distance for a grid with no feature sample at all.
pub const NO_FEATURE: u32 = u32::MAX;

/// Exact squared Euclidean distance (in samples²) from every sample of a `width × height`
/// row-major grid to the nearest sample where `feature` is true.
/// Returns [`NO_FEATURE`] everywhere when there is no feature.
pub fn distance_transform_sq(feature: &[bool], width: usize, height: usize) -> Vec<u32> {
    assert_eq!(feature.len(), width * height);
    let inf = (width + height) as i64; // larger than any real distance
                                       // Phase 1: per column, vertical distance to the nearest feature (g), stored transposed-free.
    let mut g = vec![0i32; width * height];
    // Work column-blocks in parallel: split columns into strips for cache friendliness.
    let strip = 64usize;
    let strips: Vec<(usize, usize)> = (0..width)
        .step_by(strip)
        .map(|x0| (x0, (x0 + strip).min(width)))
        .collect();
    let cols: Vec<Vec<i32>> = strips
        .par_iter()
        .map(|&(x0, x1)| {
            let w = x1 - x0;
            let mut col = vec![0i32; w * height];
            // top-down
            for x in 0..w {
                col[x] = if feature[x0 + x] { 0 } else { inf as i32 };
            }
            for y in 1..height {
                for x in 0..w {
                    col[y * w + x] = if feature[y * width + x0 + x] {
                        0
                    } else {
                        col[(y - 1) * w + x] + 1
                    };
                }
            }
            // bottom-up
            for y in (0..height - 1).rev() {
                for x in 0..w {
                    let b = col[(y + 1) * w + x] + 1;
                    if b < col[y * w + x] {
                        col[y * w + x] = b;
                    }
                }
            }
            col
        })
        .collect();
    for (&(x0, x1), col) in strips.iter().zip(cols) {
        let w = x1 - x0;
        for y in 0..height {
            g[y * width + x0..y * width + x1].copy_from_slice(&col[y * w..(y + 1) * w]);
        }
    }
    // Phase 2: per row, lower envelope of parabolas f(x) = (x - i)² + g(i)².
    let mut out = vec![0u32; width * height];
    // Envelope scratch is reused per worker instead of two zeroed allocations per row.
    out.par_chunks_mut(width)
        .zip(g.par_chunks(width))
        .for_each_init(
            || (vec![0usize; width], vec![0i64; width]),
            |(sv, tv), (o, gr)| row_envelope(gr, o, inf, sv, tv),
        );
    if feature.iter().all(|&f| !f) {
        out.iter_mut().for_each(|v| *v = NO_FEATURE);
    }
    out
}

/// Lower envelope of one row; `s`, `t` are scratch of at least `g.len()` entries (any contents:
/// every entry is written before it is read).
fn row_envelope(g: &[i32], out: &mut [u32], inf: i64, s: &mut [usize], t: &mut [i64]) {
    let m = g.len();
    let gi = |i: usize| g[i] as i64;
    let f = |x: i64, i: usize| (x - i as i64) * (x - i as i64) + gi(i) * gi(i);
    // sep(i, u): first x at which parabola u is below parabola i (floor division).
    let sep = |i: usize, u: usize| {
        let (i_, u_) = (i as i64, u as i64);
        (u_ * u_ - i_ * i_ + gi(u) * gi(u) - gi(i) * gi(i)).div_euclid(2 * (u_ - i_))
    };
    let mut q: isize = 0;
    s[0] = 0;
    t[0] = 0;
    for u in 1..m {
        while q >= 0 && f(t[q as usize], s[q as usize]) > f(t[q as usize], u) {
            q -= 1;
        }
        if q < 0 {
            q = 0;
            s[0] = u;
        } else {
            let w = 1 + sep(s[q as usize], u);
            if w < m as i64 {
                q += 1;
                s[q as usize] = u;
                t[q as usize] = w;
            }
        }
    }
    for x in (0..m).rev() {
        let d = f(x as i64, s[q as usize]);
        out[x] = d.min(u32::MAX as i64 - 1).min(inf * inf * 2) as u32;
        if q > 0 && x as i64 == t[q as usize] {
            q -= 1;
        }
    }
}

/// Signed distance to the coast in metres: positive on land (distance to the nearest water
/// sample), negative in water (distance to the nearest land sample), measured to the
/// boundary half-way between samples (so neighbours across the coast get ±½ sample).
///
/// Equals the two exact transforms of [`distance_transform_sq`] (land to water, water to land)
/// combined per sample, but in one pass over the map: the column phase stores, per sample, the
/// vertical distance to the nearest sample of the *other* class (u16), which gives both
/// transforms' column distances; each row then builds both lower envelopes in scratch and
/// writes its signed distances directly.
pub fn distance_to_coast(mask: &[u8], resolution: usize, spacing: f32) -> Vec<f32> {
    signed_distance(mask, resolution, spacing, None)
}

/// [`distance_to_coast`] where only distances below `cap` metres matter (the pipeline's coastal
/// falloff saturates beyond its coast and shelf widths): every sample whose distance is below
/// `cap` gets exactly [`distance_to_coast`]'s value, every other one a value of the same sign
/// at least `cap` in magnitude. Rows only build their lower envelopes over the columns that can
/// come within `cap`, so the interior of the island and the open sea cost almost nothing.
pub(crate) fn distance_to_coast_within(
    mask: &[u8],
    resolution: usize,
    spacing: f32,
    cap: f32,
) -> Vec<f32> {
    signed_distance(mask, resolution, spacing, Some(cap))
}

fn signed_distance(mask: &[u8], resolution: usize, spacing: f32, cap: Option<f32>) -> Vec<f32> {
    let n = resolution;
    assert_eq!(mask.len(), n * n, "distance_to_coast: mask size");
    let any_land = mask.par_iter().any(|&m| m != 0);
    let any_water = mask.par_iter().any(|&m| m == 0);
    // Larger than any real column distance; (2n)² bounds every real squared distance.
    let inf = (2 * n).min(u16::MAX as usize) as u16;
    // With a cap: columns at `near` or more samples vertically can only give distances of at
    // least `near` samples, i.e. `(near - ½)·spacing >= cap + spacing`; they are left out of the
    // envelopes, and samples no remaining column reaches within `near` get `near²`.
    let near: Option<i32> = cap
        .filter(|c| c.is_finite() && spacing > 0.0)
        .map(|c| ((c / spacing).max(0.0).ceil() as i64 + 2).min(inf as i64) as i32);
    const STRIP: usize = 64;
    let starts: Vec<usize> = (0..n).step_by(STRIP).collect();
    // The strips one after another (the one from column x0 at x0·n) in one buffer, each first
    // touched by its own task (huge pages at large sizes).
    let mut strips: Vec<u16> = crate::memory::zeros(n * n);
    strips
        .par_chunks_mut(STRIP * n)
        .zip(starts.par_iter())
        .for_each(|(g, &x0)| {
            let w = (x0 + STRIP).min(n) - x0;
            g.fill(inf);
            column_sweeps(g, mask, n, x0, w, inf);
        });
    let far = (2 * n) as f32 * spacing;
    let mut out = crate::memory::zeroed(n * n);
    out.par_chunks_mut(n)
        .enumerate()
        .with_max_len(crate::grid::MAX_ROWS_PER_TASK)
        .for_each_init(
            || (vec![0i32; n], vec![0u32; n], vec![0i32; n], vec![0i32; n]),
            |(g, d, sv, tv), (y, row)| {
                let m = &mask[y * n..(y + 1) * n];
                for &x0 in &starts {
                    let w = (x0 + STRIP).min(n) - x0;
                    let strip = &strips[x0 * n + y * w..x0 * n + (y + 1) * w];
                    for (dst, &src) in g[x0..x0 + w].iter_mut().zip(strip) {
                        *dst = src as i32;
                    }
                }
                // Runs of one class. For a sample of a run [a, b] only the columns a-1 ..= b+1
                // matter: the neighbours a-1 and b+1 are of the other class (column distance 0)
                // and nearer than anything beyond them. So each run gets its own lower envelope
                // over those columns, with the run's column distances and 0 at its two ends.
                let mut a = 0;
                while a < n {
                    let land = m[a] != 0;
                    let b = run_end(m, a);
                    let other = if land { any_water } else { any_land };
                    if other {
                        let (lo, hi) = (a.saturating_sub(1), (b + 1).min(n - 1));
                        let saved = (g[lo], g[hi]);
                        if lo < a {
                            g[lo] = 0;
                        }
                        if hi > b {
                            g[hi] = 0;
                        }
                        match near {
                            None => envelope_i32(&g[lo..=hi], &mut d[lo..=hi], sv, tv),
                            Some(c) => envelope_i32_within(&g[lo..=hi], &mut d[lo..=hi], sv, tv, c),
                        }
                        (g[lo], g[hi]) = saved;
                        // `d < 2^31`, so converting through i32 is exact (and vectorises).
                        let dist = |v: u32| ((v as i32 as f32).sqrt() - 0.5) * spacing;
                        if land {
                            row[a..=b]
                                .iter_mut()
                                .zip(&d[a..=b])
                                .for_each(|(o, &v)| *o = dist(v));
                        } else {
                            row[a..=b]
                                .iter_mut()
                                .zip(&d[a..=b])
                                .for_each(|(o, &v)| *o = -dist(v));
                        }
                    } else {
                        row[a..=b].fill(if land { far } else { -far });
                    }
                    a = b + 1;
                }
            },
        );
    out
}

/// Last index of the run of one class (land: non-zero) starting at `a`: whole blocks of 16
/// samples are checked at once (vectorised), the block with the change one by one.
#[inline]
fn run_end(m: &[u8], a: usize) -> usize {
    const BLOCK: usize = 16;
    let land = m[a] != 0;
    let mut b = a;
    while b + 1 + BLOCK <= m.len() && m[b + 1..b + 1 + BLOCK].iter().all(|&v| (v != 0) == land) {
        b += BLOCK;
    }
    while b + 1 < m.len() && (m[b + 1] != 0) == land {
        b += 1;
    }
    b
}

/// Phase 1 of [`distance_to_coast`] on the columns `x0 .. x0 + w`: `g[y * w + x]` = vertical
/// distance to the nearest sample of the other class (capped at `inf`); `g` starts at `inf`.
#[inline(always)]
fn column_sweeps_body(g: &mut [u16], mask: &[u8], n: usize, x0: usize, w: usize, inf: u16) {
    // Branch-free select (vectorises): `differ` is 0xffff where the classes differ, else 0.
    #[inline(always)]
    fn step(prev: u16, m: u8, mp: u8, inf: u16) -> u16 {
        let differ = (((m != 0) as u16) ^ ((mp != 0) as u16)).wrapping_neg();
        // prev <= inf < u16::MAX, so prev + 1 cannot overflow.
        ((prev + 1).min(inf) & !differ) | (1 & differ)
    }
    let mrow = |y: usize| &mask[y * n + x0..y * n + x0 + w];
    // Top-down: distance to the nearest sample of the other class above.
    for y in 1..n {
        let (above, cur) = g[(y - 1) * w..(y + 1) * w].split_at_mut(w);
        let (m, mp) = (mrow(y), mrow(y - 1));
        for x in 0..w {
            cur[x] = step(above[x], m[x], mp[x], inf);
        }
    }
    // Bottom-up: the same from below, keeping the smaller.
    for y in (0..n - 1).rev() {
        let (cur, below) = g[y * w..(y + 2) * w].split_at_mut(w);
        let (m, mb) = (mrow(y), mrow(y + 1));
        for x in 0..w {
            cur[x] = cur[x].min(step(below[x], m[x], mb[x], inf));
        }
    }
}

crate::simd::dispatch! {
    /// Column sweeps of [`distance_to_coast`] (AVX2 copy when available; integer, identical).
    fn column_sweeps(g: &mut [u16], mask: &[u8], n: usize, x0: usize, w: usize, inf: u16) => column_sweeps_body
}

/// Lower envelope of the parabolas `(x - i)² + g(i)²` evaluated at every `x` of `g`'s range
/// (Meijster's second phase) in 32-bit arithmetic: valid while `len² + max(g)²` fits an i32,
/// which holds for maps up to 8193² with `g <= 2 · 8193`. `s`, `t`: scratch, `>= g.len()`.
fn envelope_i32(g: &[i32], out: &mut [u32], s: &mut [i32], t: &mut [i32]) {
    let m = g.len() as i32;
    let f = |x: i32, i: i32| (x - i) * (x - i) + g[i as usize] * g[i as usize];
    let mut q: usize = 0;
    s[0] = 0;
    t[0] = 0;
    for u in 1..m {
        q = envelope_add(g, s, t, q, u);
    }
    for x in (0..m).rev() {
        out[x as usize] = f(x, s[q]) as u32;
        if q > 0 && x == t[q] {
            q -= 1;
        }
    }
}

/// Meijster's construction step: add the parabola of column `u` (right of every column added so
/// far) to the envelope whose last segment is `q` (segment `j` starts at `t[j]`, from column
/// `s[j]`); returns the new last segment.
#[inline(always)]
fn envelope_add(g: &[i32], s: &mut [i32], t: &mut [i32], mut q: usize, u: i32) -> usize {
    let m = g.len() as i32;
    let f = |x: i32, i: i32| (x - i) * (x - i) + g[i as usize] * g[i as usize];
    // sep(i, u): first x at which parabola u is below parabola i (floor division, u > i).
    let sep = |i: i32, u: i32| {
        (u * u - i * i + g[u as usize] * g[u as usize] - g[i as usize] * g[i as usize])
            .div_euclid(2 * (u - i))
    };
    loop {
        if f(t[q], s[q]) <= f(t[q], u) {
            let w = 1 + sep(s[q], u);
            if w < m {
                q += 1;
                s[q] = u;
                t[q] = w;
            }
            return q;
        }
        if q == 0 {
            s[0] = u;
            return 0;
        }
        q -= 1;
    }
}

/// [`envelope_i32`] over only the columns with `g < near`, each output capped at `near²`: exact
/// wherever the true value is below `near²` (its nearest column has `g < near`), `near²` where
/// no kept column comes that close. Far stretches cost a vectorised scan and a fill.
fn envelope_i32_within(g: &[i32], out: &mut [u32], s: &mut [i32], t: &mut [i32], near: i32) {
    let m = g.len() as i32;
    let f = |x: i32, i: i32| (x - i) * (x - i) + g[i as usize] * g[i as usize];
    let cap = (near * near) as u32;
    // Meijster's construction over the kept columns (`q` = index of the last segment).
    let mut q: Option<usize> = None;
    let mut u = 0i32;
    while u < m {
        const BLOCK: usize = 16;
        let k = u as usize;
        if k + BLOCK <= g.len() && g[k..k + BLOCK].iter().all(|&v| v >= near) {
            u += BLOCK as i32;
            continue;
        }
        if g[k] < near {
            match q {
                None => {
                    q = Some(0);
                    s[0] = u;
                    t[0] = 0;
                }
                Some(qq) => q = Some(envelope_add(g, s, t, qq, u)),
            }
        }
        u += 1;
    }
    out.fill(cap);
    let Some(last) = q else { return };
    // Segment `j` covers `t[j] .. t[j + 1]` (the last one up to `m`); outside `near` of its
    // column every value is at least `near²`, so only that window is evaluated.
    for j in 0..=last {
        let end = if j < last { t[j + 1] } else { m };
        let lo = t[j].max(s[j] - near + 1);
        let hi = end.min(s[j] + near);
        for x in lo..hi.max(lo) {
            out[x as usize] = (f(x, s[j]) as u32).min(cap);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::hash2;

    fn brute(feature: &[bool], w: usize, h: usize) -> Vec<u32> {
        let pts: Vec<(i64, i64)> = (0..w * h)
            .filter(|&i| feature[i])
            .map(|i| ((i % w) as i64, (i / w) as i64))
            .collect();
        (0..w * h)
            .map(|i| {
                let (x, y) = ((i % w) as i64, (i / w) as i64);
                pts.iter()
                    .map(|&(a, b)| ((a - x).pow(2) + (b - y).pow(2)) as u32)
                    .min()
                    .unwrap_or(NO_FEATURE)
            })
            .collect()
    }

    #[test]
    fn equals_brute_force_on_random_masks() {
        for (k, &(w, h, density)) in [
            (37usize, 23usize, 0.02f32),
            (64, 64, 0.005),
            (50, 80, 0.3),
            (1, 40, 0.1),
            (40, 1, 0.1),
            (97, 31, 0.001),
        ]
        .iter()
        .enumerate()
        {
            for seed in 0..4u32 {
                let f: Vec<bool> = (0..w * h)
                    .map(|i| (hash2(i as i32, k as i32, seed) as f32 / u32::MAX as f32) < density)
                    .collect();
                assert_eq!(
                    distance_transform_sq(&f, w, h),
                    brute(&f, w, h),
                    "{w}x{h} seed {seed}"
                );
            }
        }
    }

    #[test]
    fn single_point_and_empty() {
        let mut f = vec![false; 25];
        assert!(distance_transform_sq(&f, 5, 5)
            .iter()
            .all(|&v| v == NO_FEATURE));
        f[0] = true;
        let d = distance_transform_sq(&f, 5, 5);
        assert_eq!(d[24], 32);
        assert_eq!(d[4], 16);
    }

    /// The definition: two full transforms, combined per sample.
    fn signed_reference(mask: &[u8], res: usize, spacing: f32) -> Vec<f32> {
        let water: Vec<bool> = mask.iter().map(|&m| m == 0).collect();
        let land: Vec<bool> = mask.iter().map(|&m| m != 0).collect();
        let din = distance_transform_sq(&water, res, res);
        let dout = distance_transform_sq(&land, res, res);
        let far = (2 * res) as f32 * spacing;
        (0..res * res)
            .map(|i| {
                if mask[i] != 0 {
                    if din[i] == NO_FEATURE {
                        far
                    } else {
                        ((din[i] as f32).sqrt() - 0.5) * spacing
                    }
                } else if dout[i] == NO_FEATURE {
                    -far
                } else {
                    -((dout[i] as f32).sqrt() - 0.5) * spacing
                }
            })
            .collect()
    }

    #[test]
    fn one_pass_signed_distance_equals_two_transforms() {
        for (k, &(res, density)) in [
            (33usize, 0.5f32),
            (65, 0.02),
            (130, 0.3),
            (200, 0.97),
            (7, 0.5),
            (1, 0.5),
        ]
        .iter()
        .enumerate()
        {
            for seed in 0..3u32 {
                let mask: Vec<u8> = (0..res * res)
                    .map(|i| {
                        ((hash2(i as i32, k as i32, seed) as f32 / u32::MAX as f32) < density) as u8
                    })
                    .collect();
                let got = distance_to_coast(&mask, res, 1.5);
                let want = signed_reference(&mask, res, 1.5);
                assert!(
                    got.iter()
                        .zip(&want)
                        .all(|(a, b)| a.to_bits() == b.to_bits()),
                    "res {res} seed {seed}"
                );
            }
        }
        // All land, all water, and one blob (the island case).
        for mask in [
            vec![1u8; 40 * 40],
            vec![0u8; 40 * 40],
            (0..40 * 40usize)
                .map(|i| {
                    (((i % 40) as i32 - 20).pow(2) + ((i / 40) as i32 - 18).pow(2) < 150) as u8
                })
                .collect(),
        ] {
            let got = distance_to_coast(&mask, 40, 2.0);
            let want = signed_reference(&mask, 40, 2.0);
            assert!(got
                .iter()
                .zip(&want)
                .all(|(a, b)| a.to_bits() == b.to_bits()));
        }
    }

    #[test]
    fn capped_signed_distance_is_exact_below_the_cap() {
        let check = |mask: &[u8], res: usize, spacing: f32, cap: f32| {
            let full = distance_to_coast(mask, res, spacing);
            let got = distance_to_coast_within(mask, res, spacing, cap);
            let mut exact = 0;
            for (i, (&g, &f)) in got.iter().zip(&full).enumerate() {
                if f.abs() < cap {
                    assert_eq!(
                        g.to_bits(),
                        f.to_bits(),
                        "res {res} cap {cap} sample {i}: {g} vs {f}"
                    );
                    exact += 1;
                } else {
                    assert!(
                        g.abs() >= cap && g.signum() == f.signum(),
                        "res {res} cap {cap} sample {i}: {g} vs {f}"
                    );
                }
            }
            exact
        };
        for (k, &(res, density)) in [
            (33usize, 0.5f32),
            (65, 0.02),
            (130, 0.3),
            (200, 0.97),
            (7, 0.5),
            (1, 0.5),
        ]
        .iter()
        .enumerate()
        {
            for seed in 0..3u32 {
                let mask: Vec<u8> = (0..res * res)
                    .map(|i| {
                        ((hash2(i as i32, k as i32, seed) as f32 / u32::MAX as f32) < density) as u8
                    })
                    .collect();
                for cap in [0.0, 1.0, 3.1, 7.5, 40.0, f32::INFINITY] {
                    check(&mask, res, 1.5, cap);
                }
            }
        }
        // An island: the band around the coast is exact, the interior and the open sea capped.
        let res = 257;
        let mask: Vec<u8> = (0..res * res)
            .map(|i| {
                (((i % res) as i32 - 128).pow(2) + ((i / res) as i32 - 120).pow(2) < 90 * 90) as u8
            })
            .collect();
        let exact = check(&mask, res, 2.0, 60.0);
        assert!(
            exact > 10_000 && exact < res * res * 2 / 3,
            "{exact} exact samples"
        );
        for mask in [vec![1u8; 40 * 40], vec![0u8; 40 * 40]] {
            check(&mask, 40, 2.0, 10.0);
        }
    }

    #[test]
    fn signed_distance_sign() {
        let res = 33;
        let mut mask = vec![0u8; res * res];
        for z in 10..20 {
            for x in 10..20 {
                mask[z * res + x] = 1;
            }
        }
        let d = distance_to_coast(&mask, res, 2.0);
        assert!(d[15 * res + 15] > 0.0);
        assert!(d[0] < 0.0);
        assert_eq!(d[15 * res + 10], 1.0); // 1 sample from water, minus half, times 2 m
        assert_eq!(d[15 * res + 9], -1.0);
    }
}
