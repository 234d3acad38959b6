//! Automatic splat: four weights (sand, grass, rock, snow) from height, slope and biome.
//!
//! Thresholds are jittered by noise so borders look natural; weights are smoothed with
//! separable box-blur passes and quantised to RGBA8 summing to exactly 255.

use crate::det_math;
use crate::gradient_noise::FbmRows;
use crate::grid::{par_rows, smoothstep, Grid};
use crate::normals::slope_degrees;
use crate::params::{FbmParams, SplatParams};
use rayon::prelude::*;
use std::mem::MaybeUninit;

/// Wavelength of the threshold jitter noise, metres.
pub const SPLAT_JITTER_SCALE: f32 = 40.0;
/// Octaves of the threshold jitter noise.
pub const SPLAT_JITTER_OCTAVES: u32 = 3;
/// The threshold jitter noise: classic fBm of [`SPLAT_JITTER_OCTAVES`] octaves at
/// [`SPLAT_JITTER_SCALE`] (`fbm_noise(grid, &SPLAT_JITTER, tag)`), scaled by
/// [`SplatParams::jitter`].
pub const SPLAT_JITTER: FbmParams = FbmParams::classic(SPLAT_JITTER_OCTAVES, SPLAT_JITTER_SCALE);
/// Half-width of the sand → grass transition around `sand_height`, metres.
pub const SAND_BAND: f32 = 1.5;
/// Half-width of the snow transition around the snow line, metres.
pub const SNOW_BAND: f32 = 4.0;
/// Half-width of the rock transition around `rock_slope`, degrees.
pub const ROCK_BAND: f32 = 6.0;
/// Snow fades out between `rock_slope + SNOW_SLOPE_FADE[0]` and `rock_slope + SNOW_SLOPE_FADE[1]`
/// degrees.
pub const SNOW_SLOPE_FADE: [f32; 2] = [4.0, 14.0];

/// Splat channels.
pub const SAND: usize = 0;
/// Grass channel.
pub const GRASS: usize = 1;
/// Rock channel.
pub const ROCK: usize = 2;
/// Snow channel.
pub const SNOW: usize = 3;

/// Unblurred weights of one sample (sum 1).
#[inline(always)]
pub(crate) fn splat_weights(
    height: f32,
    slope_deg: f32,
    sandiness: f32,
    jitter: f32,
    max_height: f32,
    p: &SplatParams,
) -> [f32; 4] {
    let hj = height + jitter;
    let sand = 1.0 - smoothstep(p.sand_height - SAND_BAND, p.sand_height + SAND_BAND, hj);
    let snow_h = p.snow_height * max_height;
    let snow = smoothstep(snow_h - SNOW_BAND, snow_h + SNOW_BAND, hj)
        * (1.0
            - smoothstep(
                p.rock_slope + SNOW_SLOPE_FADE[0],
                p.rock_slope + SNOW_SLOPE_FADE[1],
                slope_deg,
            ));
    let rock = smoothstep(
        p.rock_slope - ROCK_BAND,
        p.rock_slope + ROCK_BAND,
        slope_deg,
    );
    let rest = (1.0 - rock) * (1.0 - snow);
    let sandy = sand.max(sandiness);
    let w = [
        rest * sandy,
        rest * (1.0 - sandy),
        rock,
        (1.0 - rock) * snow,
    ];
    let s = w[0] + w[1] + w[2] + w[3];
    if s > 0.0 {
        [w[0] / s, w[1] / s, w[2] / s, w[3] / s]
    } else {
        [0.0, 1.0, 0.0, 0.0]
    }
}

/// One separable box-blur pass (radius 1, clamped at borders) over a 4-channel field.
fn box_blur_pass(w: &mut [[f32; 4]], n: usize) {
    let mut tmp = vec![[0.0f32; 4]; n * n];
    blur_rows(w, &mut tmp, n);
    par_rows(w, n, |z, row| blur_columns_row(&tmp, n, z, row));
}

/// Horizontal half of [`box_blur_pass`]: `dst` = rows of `src` averaged over x-1, x, x+1.
fn blur_rows(src: &[[f32; 4]], dst: &mut [[f32; 4]], n: usize) {
    par_rows(dst, n, |z, out| {
        let r = &src[z * n..(z + 1) * n];
        for (x, o) in out.iter_mut().enumerate() {
            let (a, b, c) = (r[x.saturating_sub(1)], r[x], r[(x + 1).min(n - 1)]);
            for k in 0..4 {
                o[k] = (a[k] + b[k] + c[k]) * (1.0 / 3.0);
            }
        }
    });
}

/// Vertical half of [`box_blur_pass`] for output row `z`: rows z-1, z, z+1 of `src` averaged.
#[inline(always)]
fn blur_columns_row(src: &[[f32; 4]], n: usize, z: usize, out: &mut [[f32; 4]]) {
    let (z0, z1) = (z.saturating_sub(1), (z + 1).min(n - 1));
    let (ra, rb, rc) = (
        &src[z0 * n..z0 * n + n],
        &src[z * n..z * n + n],
        &src[z1 * n..z1 * n + n],
    );
    for (((o, a), b), c) in out.iter_mut().zip(ra).zip(rb).zip(rc) {
        for k in 0..4 {
            o[k] = (a[k] + b[k] + c[k]) * (1.0 / 3.0);
        }
    }
}

/// Quantise weights (any positive sum) to bytes summing to exactly 255 (largest remainder,
/// ties to the lower channel).
#[inline]
pub(crate) fn quantize_weights<const N: usize>(w: [f32; N]) -> [u8; N] {
    if N == 4 {
        // The branch-free twin where it applies (the usual case; pinned to the definition by
        // `quantize_row_equals_definition`).
        let (q, bad) = quantize_lane([w[0], w[1], w[2], w[3]]);
        if !bad {
            let mut out = [0u8; N];
            out.copy_from_slice(&q);
            return out;
        }
    }
    quantize_definition(w)
}

/// [`quantize_weights`] by its definition (any `N`, any input).
fn quantize_definition<const N: usize>(w: [f32; N]) -> [u8; N] {
    let s: f32 = w.iter().map(|v| v.max(0.0)).sum();
    let mut out = [0u8; N];
    if s <= 0.0 {
        out[if N > 1 { 1 } else { 0 }] = 255;
        return out;
    }
    let mut rem = [0.0f32; N];
    let mut total = 0u32;
    for k in 0..N {
        let v = w[k].max(0.0) / s * 255.0;
        // `floor(v).min(255)` for v >= 0 (NaN gives 255 like `min`), without a libm call.
        let f = if v < 255.0 { (v as u32) as f32 } else { 255.0 };
        out[k] = f as u8;
        rem[k] = v - f;
        total += f as u32;
    }
    let mut left = 255u32.saturating_sub(total);
    while left > 0 {
        let mut best = 0;
        for k in 1..N {
            if rem[k] > rem[best] {
                best = k;
            }
        }
        out[best] += 1;
        rem[best] = -1.0;
        left -= 1;
    }
    out
}

/// Auto splat of a whole map (the `auto_splat.wgsl` pass): RGBA8 per sample = (sand, grass,
/// rock, snow), summing to 255, with the thresholds, jitter, rock slope and blur passes of `p`
/// and the jitter noise [`SPLAT_JITTER`] seeded by `(g.seed, tag)`.
///
/// * `heights` — metres; `normals` — unit normals from [`crate::normals::compute_normals`];
/// * `sandiness` — biome sandiness per sample (0..1);
/// * `max_height` — metres; the snow line is `p.snow_height · max_height`.
///
/// The result is, bit for bit, `splat_weights` per sample (slope from
/// `slope_degrees`), `p.blur_passes` × `box_blur_pass`, then `quantize_weights`. It is
/// computed in horizontal strips of rows, each streaming its rows through a ring of three
/// blurred rows per pass (planar channels, cache-resident, vectorised), with the few rows a
/// strip's blur reads beyond its edges recomputed; inputs shorter than `resolution²` give the
/// all-grass splat instead of a panic.
pub fn auto_splat(
    heights: &[f32],
    normals: &[[f32; 3]],
    sandiness: &[f32],
    g: &Grid,
    max_height: f32,
    p: &SplatParams,
    tag: u32,
) -> Vec<[u8; 4]> {
    auto_splat_with(
        heights,
        Normals::Map(normals),
        sandiness,
        g,
        max_height,
        p,
        tag,
    )
}

/// [`auto_splat`] with the normals [`crate::normals::compute_normals`] gives for `heights`
/// (`normal_spacing` metres apart), computed row by row where the slopes are needed instead
/// of read from a map: the same bits, without the normal map (12 bytes per sample) alive. The
/// pipeline passes [`Normals::FromHeights`] to [`auto_splat_with`] itself; the tests pin this
/// path to [`auto_splat`].
#[cfg(test)]
pub(crate) fn auto_splat_from_heights(
    heights: &[f32],
    normal_spacing: f32,
    sandiness: &[f32],
    g: &Grid,
    max_height: f32,
    p: &SplatParams,
    tag: u32,
) -> Vec<[u8; 4]> {
    let normals = Normals::FromHeights {
        spacing: normal_spacing,
    };
    auto_splat_with(heights, normals, sandiness, g, max_height, p, tag)
}

/// [`auto_splat`] with the slopes from `normals`; inputs too short give the all-grass splat.
pub(crate) fn auto_splat_with(
    heights: &[f32],
    normals: Normals,
    sandiness: &[f32],
    g: &Grid,
    max_height: f32,
    p: &SplatParams,
    tag: u32,
) -> Vec<[u8; 4]> {
    match Ctx::new(heights, normals, sandiness, g, max_height, p, tag) {
        Some(c) => auto_splat_strips(&c, strip_rows(c.n, p.blur_passes)),
        None => vec![[0, 255, 0, 0]; g.resolution * g.resolution],
    }
}

/// Rows per strip: about four strips per worker thread, at least 32 rows (the blur halo of
/// `passes` rows on each side is recomputed per strip). Any value gives the same result.
fn strip_rows(n: usize, passes: u32) -> usize {
    let strips = (rayon::current_num_threads() * 4).max(1);
    n.div_ceil(strips)
        .max(32)
        .max(8 * passes as usize)
        .min(n.max(1))
}

/// Passes above this (beyond the validated 0..=8) blur whole maps instead of strips, whose
/// per-pass ring rows and halo would grow with the pass count.
const MAX_STRIP_PASSES: u32 = 32;

/// [`auto_splat`] with an explicit strip height (tests cover several).
fn auto_splat_strips(c: &Ctx, strip: usize) -> Vec<[u8; 4]> {
    let (n, p) = (c.n, c.p);
    let nn = n * n;
    let mut out: Vec<[u8; 4]> = crate::memory::with_capacity(nn);
    let slots = &mut out.spare_capacity_mut()[..nn];
    if p.blur_passes > MAX_STRIP_PASSES {
        let mut w = vec![[0.0f32; 4]; nn];
        par_rows(&mut w, n, |z, row| {
            let mut scr = Scratch::new(c, 0);
            prepare_row(c, &mut scr, z);
            for x0 in (0..n).step_by(CHUNK) {
                let x1 = (x0 + CHUNK).min(n);
                weights_span(c, &scr.jitter, &scr.slope, &mut scr.buf, z, x0, x1);
                for (i, o) in row[x0..x1].iter_mut().enumerate() {
                    *o = [
                        scr.buf[i],
                        scr.buf[CB + i],
                        scr.buf[2 * CB + i],
                        scr.buf[3 * CB + i],
                    ];
                }
            }
        });
        for _ in 0..p.blur_passes {
            box_blur_pass(&mut w, n);
        }
        slots.par_chunks_mut(n).enumerate().for_each(|(z, row)| {
            for (o, &v) in row.iter_mut().zip(&w[z * n..z * n + n]) {
                o.write(quantize_weights(v));
            }
        });
    } else {
        let strip = strip.clamp(1, n);
        let passes = p.blur_passes as usize;
        slots.par_chunks_mut(strip * n).enumerate().for_each_init(
            || Scratch::new(c, passes),
            |scr, (i, chunk)| splat_strip(c, scr, i * strip, chunk),
        );
    }
    // SAFETY: the chunks above cover all n² slots and every path writes each sample of its
    // chunk (`splat_strip` writes rows a..b, every column).
    unsafe { out.set_len(nn) };
    out
}

/// Where [`auto_splat`] (and the wetness, [`crate::wetness::apply_wetness_with`]) takes its
/// normals from.
#[derive(Clone, Copy)]
pub(crate) enum Normals<'a> {
    /// A whole map of them.
    Map(&'a [[f32; 3]]),
    /// [`crate::normals::compute_normals`] of the heights, `spacing` metres apart, row by row.
    FromHeights { spacing: f32 },
}

/// Read-only inputs of [`auto_splat`].
struct Ctx<'a> {
    heights: &'a [f32],
    normals: Normals<'a>,
    sandiness: &'a [f32],
    jitter: FbmRows,
    n: usize,
    max_height: f32,
    p: &'a SplatParams,
    slope: SlopeSkip,
}

impl<'a> Ctx<'a> {
    /// The inputs of one [`auto_splat`]; `None` when a map is shorter than `resolution²` (or
    /// empty).
    fn new(
        heights: &'a [f32],
        normals: Normals<'a>,
        sandiness: &'a [f32],
        g: &Grid,
        max_height: f32,
        p: &'a SplatParams,
        tag: u32,
    ) -> Option<Ctx<'a>> {
        let n = g.resolution;
        let nn = n * n;
        let normals_short = match normals {
            Normals::Map(m) => m.len() < nn,
            Normals::FromHeights { .. } => false,
        };
        if n == 0 || heights.len() < nn || normals_short || sandiness.len() < nn {
            return None;
        }
        Some(Ctx {
            heights,
            normals,
            sandiness,
            // The jitter noise (`fbm_noise(g, &SPLAT_JITTER, tag)`) is computed row by row
            // where the weights need it, not as a full map.
            jitter: FbmRows::of_noise(g, &SPLAT_JITTER, tag),
            n,
            max_height,
            p,
            slope: SlopeSkip::new(p),
        })
    }
}

/// Columns per chunk of a row step: the planar intermediates of a chunk (4 × 258 floats)
/// stay in L1; only the rings' rows cross row steps.
const CHUNK: usize = 256;
/// Per-channel stride of [`Scratch::buf`]: a chunk plus one column each side.
const CB: usize = CHUNK + 2;

/// Per-task rows: jitter noise, slopes (and the normals they come from, when computed here),
/// one planar chunk buffer, and per pass a ring of three horizontally blurred rows.
struct Scratch {
    jitter: Vec<f32>,
    slope: Vec<f32>,
    /// A row of normals ([`Normals::FromHeights`]; empty otherwise).
    normals: Vec<[f32; 3]>,
    /// Planar chunk (channel k at `k*CB..`): unblurred weights, or a vertical blur.
    buf: Vec<f32>,
    /// Pass `q` (1-based), row `r`: planar row (channel k at `k*n..`) at `((q-1)*3 + r%3) * 4n`.
    rings: Vec<f32>,
}

impl Scratch {
    fn new(c: &Ctx, passes: usize) -> Scratch {
        let n = c.n;
        let normals = match c.normals {
            Normals::Map(_) => 0,
            Normals::FromHeights { .. } => n,
        };
        Scratch {
            jitter: vec![0.0; n],
            slope: vec![0.0; n],
            normals: vec![[0.0; 3]; normals],
            buf: vec![0.0; 4 * CB],
            rings: vec![0.0; passes * 12 * n],
        }
    }
}

/// Jitter noise and slopes of row `z` (whole row) into `scr.jitter`, `scr.slope`.
#[inline(always)]
fn prepare_row(c: &Ctx, scr: &mut Scratch, z: usize) {
    let n = c.n;
    c.jitter.row(z, &mut scr.jitter);
    match c.normals {
        Normals::Map(m) => c.slope.row(&m[z * n..z * n + n], &mut scr.slope),
        Normals::FromHeights { spacing } => {
            crate::normals::normals_of_row(c.heights, n, spacing, z, &mut scr.normals);
            c.slope.row(&scr.normals, &mut scr.slope);
        }
    }
}

/// Planar weights of row `z`, columns `lo..hi` (at most `CB`), into `buf` (after [`prepare_row`]).
#[inline(always)]
fn weights_span(
    c: &Ctx,
    jitter: &[f32],
    slope: &[f32],
    buf: &mut [f32],
    z: usize,
    lo: usize,
    hi: usize,
) {
    let i0 = z * c.n;
    let (hr, sr) = (&c.heights[i0 + lo..i0 + hi], &c.sandiness[i0 + lo..i0 + hi]);
    let (jr, sl) = (&jitter[lo..hi], &slope[lo..hi]);
    let (w0, rest) = buf.split_at_mut(CB);
    let (w1, rest) = rest.split_at_mut(CB);
    let (w2, w3) = rest.split_at_mut(CB);
    let p = c.p;
    for x in 0..hi - lo {
        let v = splat_weights(hr[x], sl[x], sr[x], p.jitter * jr[x], c.max_height, p);
        w0[x] = v[0];
        w1[x] = v[1];
        w2[x] = v[2];
        w3[x] = v[3];
    }
}

const THIRD: f32 = 1.0 / 3.0;

/// Vertical blur (`blur_columns_row`'s arithmetic) of columns `lo..hi` of three planar rows
/// into `buf`.
#[inline(always)]
fn vblur_span(a: &[f32], b: &[f32], c: &[f32], n: usize, lo: usize, hi: usize, buf: &mut [f32]) {
    for k in 0..4 {
        let r = k * n + lo..k * n + hi;
        let d = &mut buf[k * CB..k * CB + (hi - lo)];
        for (((o, &a), &b), &c) in d
            .iter_mut()
            .zip(&a[r.clone()])
            .zip(&b[r.clone()])
            .zip(&c[r])
        {
            *o = (a + b + c) * THIRD;
        }
    }
}

/// Horizontal blur (`blur_rows`' arithmetic, clamped at the map's edges) of columns `x0..x1`
/// into the planar row `dst`, from `buf` holding columns `lo..hi` = `x0 - 1..x1 + 1` clamped.
#[inline(always)]
fn hblur_span(buf: &[f32], n: usize, x0: usize, x1: usize, dst: &mut [f32]) {
    let lo = x0.saturating_sub(1);
    let hi = (x1 + 1).min(n);
    let (i0, i1) = (x0.max(1), x1.min(n - 1));
    for k in 0..4 {
        let s = &buf[k * CB..k * CB + (hi - lo)];
        let d = &mut dst[k * n..k * n + n];
        if i0 < i1 {
            let m = i1 - i0;
            let (l, c, r) = (
                &s[i0 - 1 - lo..][..m],
                &s[i0 - lo..][..m],
                &s[i0 + 1 - lo..][..m],
            );
            for (((o, &a), &b), &c) in d[i0..i1].iter_mut().zip(l).zip(c).zip(r) {
                *o = (a + b + c) * THIRD;
            }
        }
        if x0 == 0 {
            d[0] = (s[0] + s[0] + s[1.min(n - 1)]) * THIRD;
        }
        if x1 == n && n >= 2 {
            d[n - 1] = (s[n - 2 - lo] + s[n - 1 - lo] + s[n - 1 - lo]) * THIRD;
        }
    }
}

/// [`quantize_weights`] of one sample without branches, valid when `left <= 4` and the sum is
/// positive and finite; the flag says when it is not (then the caller uses the definition).
#[inline(always)]
fn quantize_lane(w: [f32; 4]) -> ([u8; 4], bool) {
    let w = [w[0].max(0.0), w[1].max(0.0), w[2].max(0.0), w[3].max(0.0)];
    let s = w[0] + w[1] + w[2] + w[3];
    let mut f = [0i32; 4];
    let mut rem = [0.0f32; 4];
    for k in 0..4 {
        let v = w[k] / s * 255.0;
        // For v in [0, 255] (every lane not flagged) this is `quantize_weights`'
        // `floor(v).min(255)`; the clamp (NaN gives 0 or 255) keeps the conversion in range.
        // Clamped to [0, 255] with plain comparisons (NaN gives 0; one max and one min
        // instruction), so the conversion below is in range.
        let c = if v > 0.0 { v } else { 0.0 };
        let c = if c < 255.0 { c } else { 255.0 };
        // SAFETY: `c` is finite and within i32.
        f[k] = unsafe { c.to_int_unchecked::<i32>() };
        rem[k] = v - f[k] as f32;
    }
    let left = 255 - (f[0] + f[1] + f[2] + f[3]);
    let bad = !(s > 0.0 && s <= f32::MAX) || left > 4;
    let left = left.max(0);
    let mut out = [0u8; 4];
    for k in 0..4 {
        // Rank of channel k in the largest-remainder order (ties to the lower channel).
        let mut rank = 0i32;
        for j in 0..4 {
            rank += (rem[j] > rem[k] || (j < k && rem[j] == rem[k])) as i32;
        }
        out[k] = (f[k] + (rank < left) as i32) as u8;
    }
    (out, bad)
}

/// Quantise `out.len()` samples of planar weights (channel k at `k*stride..`) into `out`.
#[inline(always)]
fn quantize_planar(w: &[f32], stride: usize, out: &mut [MaybeUninit<[u8; 4]>]) {
    let m = out.len();
    let (w0, w1, w2, w3) = (
        &w[..m],
        &w[stride..stride + m],
        &w[2 * stride..2 * stride + m],
        &w[3 * stride..3 * stride + m],
    );
    let mut any_bad = false;
    for x in 0..m {
        let (q, bad) = quantize_lane([w0[x], w1[x], w2[x], w3[x]]);
        out[x].write(q);
        any_bad |= bad;
    }
    if any_bad {
        for x in 0..m {
            let v = [w0[x], w1[x], w2[x], w3[x]];
            if quantize_lane(v).1 {
                out[x].write(quantize_definition(v));
            }
        }
    }
}

/// [`quantize_planar`] into initialised bytes.
#[inline(always)]
fn quantize_planar_into(w: &[f32], stride: usize, out: &mut [[u8; 4]]) {
    // SAFETY: `MaybeUninit<T>` has the layout of `T`, and `quantize_planar` only writes
    // initialised values through the view (it never reads it or writes uninit).
    let out = unsafe { &mut *(out as *mut [[u8; 4]] as *mut [MaybeUninit<[u8; 4]>]) };
    quantize_planar(w, stride, out);
}

crate::simd::dispatch! {
    /// [`quantize_weights`] of `out.len()` samples of planar weights (channel k at
    /// `k * stride..`) into `out`, compiled for AVX2 when the CPU has it (same bits).
    pub(crate) fn quantize_planar_rows(w: &[f32], stride: usize, out: &mut [[u8; 4]]) => quantize_planar_into
}

crate::simd::dispatch! {
    /// Rows `a..` of [`auto_splat`] into `out` (whole rows), compiled for AVX2 when the CPU
    /// has it (no FMA, no reassociation: same bits as the baseline copy).
    fn splat_strip(c: &Ctx<'_>, scr: &mut Scratch, a: usize, out: &mut [MaybeUninit<[u8; 4]>]) => splat_strip_body
}

/// Streams rows through the passes: at step `t`, pass `q` (1-based) horizontally blurs its
/// row `t - (q - 1)` (weights for pass 1, the vertical blur of pass `q - 1`'s ring otherwise)
/// into its ring, and the output stage quantises the vertical blur of the last ring's row
/// `t - passes`. Each stage only runs on the rows that output rows `a..b` depend on, a row in
/// chunks of [`CHUNK`] columns.
#[inline(always)]
fn splat_strip_body(c: &Ctx<'_>, scr: &mut Scratch, a: usize, out: &mut [MaybeUninit<[u8; 4]>]) {
    let n = c.n;
    let b = a + out.len() / n;
    let passes = scr.rings.len() / (12 * n);
    let chunks = |_| (0..n).step_by(CHUNK).map(|x0| (x0, (x0 + CHUNK).min(n)));
    if passes == 0 {
        for z in a..b {
            prepare_row(c, scr, z);
            for (x0, x1) in chunks(()) {
                weights_span(c, &scr.jitter, &scr.slope, &mut scr.buf, z, x0, x1);
                quantize_planar(&scr.buf, CB, &mut out[(z - a) * n + x0..(z - a) * n + x1]);
            }
        }
        return;
    }
    let row = 4 * n;
    let slot = |q: usize, r: usize| ((q - 1) * 3 + r % 3) * row;
    // Rows of pass q's ring that the strip needs: clamp(a - (passes - q + 1) ..= b + passes - q).
    let first = |q: usize| a.saturating_sub(passes - q + 1);
    let last = |q: usize| (b + passes - q).min(n - 1);
    let up = |r: usize| r.saturating_sub(1);
    let down = |r: usize| (r + 1).min(n - 1);
    for t in first(1)..b + passes {
        for q in 1..=passes {
            let Some(r) = t.checked_sub(q - 1) else { break };
            if r < first(q) || r > last(q) {
                continue;
            }
            if q == 1 {
                prepare_row(c, scr, r);
            }
            let (ra, rb, rc, d) = if q > 1 {
                (
                    slot(q - 1, up(r)),
                    slot(q - 1, r),
                    slot(q - 1, down(r)),
                    slot(q, r),
                )
            } else {
                (0, 0, 0, slot(q, r))
            };
            for (x0, x1) in chunks(()) {
                let (lo, hi) = (x0.saturating_sub(1), (x1 + 1).min(n));
                if q == 1 {
                    weights_span(c, &scr.jitter, &scr.slope, &mut scr.buf, r, lo, hi);
                } else {
                    let rg = &scr.rings;
                    vblur_span(
                        &rg[ra..ra + row],
                        &rg[rb..rb + row],
                        &rg[rc..rc + row],
                        n,
                        lo,
                        hi,
                        &mut scr.buf,
                    );
                }
                hblur_span(&scr.buf, n, x0, x1, &mut scr.rings[d..d + row]);
            }
        }
        if let Some(r) = t.checked_sub(passes) {
            if r >= a && r < b {
                let (ra, rb, rc) = (slot(passes, up(r)), slot(passes, r), slot(passes, down(r)));
                for (x0, x1) in chunks(()) {
                    let rg = &scr.rings;
                    vblur_span(
                        &rg[ra..ra + row],
                        &rg[rb..rb + row],
                        &rg[rc..rc + row],
                        n,
                        x0,
                        x1,
                        &mut scr.buf,
                    );
                    quantize_planar(&scr.buf, CB, &mut out[(r - a) * n + x0..(r - a) * n + x1]);
                }
            }
        }
    }
}

/// [`slope_degrees`] where the splat rules can tell it apart: slopes below `rock_slope - 6` or
/// above `rock_slope + 14` saturate every smoothstep of [`splat_weights`], so there the `acos`
/// is skipped (decided on the normal's y with a safety margin) and a slope on the same side is
/// returned, which gives identical weights.
pub(crate) struct SlopeSkip {
    flat_above: f32,
    steep_below: f32,
}

impl SlopeSkip {
    fn new(p: &SplatParams) -> SlopeSkip {
        SlopeSkip::between(p.rock_slope - ROCK_BAND, p.rock_slope + SNOW_SLOPE_FADE[1])
    }

    /// For rules that saturate below `lo` and above `hi` degrees: [`SlopeSkip::slope`] gives 0
    /// for slopes surely below `lo` and 90 for slopes surely above `hi`.
    pub(crate) fn between(lo: f32, hi: f32) -> SlopeSkip {
        let flat_above = if lo > 0.5 && lo < 89.5 {
            det_math::cos(lo.to_radians()) + 1e-4
        } else {
            f32::INFINITY
        };
        let steep_below = if hi > 0.5 && hi < 89.5 {
            det_math::cos(hi.to_radians()) - 1e-4
        } else {
            f32::NEG_INFINITY
        };
        SlopeSkip {
            flat_above,
            steep_below,
        }
    }

    /// The slope (degrees) of a unit normal whose y component is `ny`, or a stand-in on the
    /// same saturated side (see [`SlopeSkip::between`]).
    #[inline(always)]
    pub(crate) fn slope(&self, ny: f32) -> f32 {
        if ny > self.flat_above {
            0.0
        } else if ny < self.steep_below {
            90.0
        } else {
            det_math::acos(ny.clamp(-1.0, 1.0)).to_degrees()
        }
    }

    /// Slopes of a row of normals: saturated ones without branches, eight at a time, `acos`
    /// only at the samples where the rules can tell slopes apart.
    #[inline(always)]
    fn row(&self, normals: &[[f32; 3]], out: &mut [f32]) {
        let (fa, sb) = (self.flat_above, self.steep_below);
        let mut oc = out.chunks_exact_mut(8);
        let mut nc = normals.chunks_exact(8);
        for (o, nv) in (&mut oc).zip(&mut nc) {
            let mut any_mid = false;
            for i in 0..8 {
                let (flat, steep) = (nv[i][1] > fa, nv[i][1] < sb);
                o[i] = if flat { 0.0 } else { 90.0 };
                any_mid |= !(flat | steep);
            }
            if any_mid {
                for i in 0..8 {
                    if !(nv[i][1] > fa || nv[i][1] < sb) {
                        o[i] = slope_degrees(nv[i]);
                    }
                }
            }
        }
        for (o, &nv) in oc.into_remainder().iter_mut().zip(nc.remainder()) {
            *o = if nv[1] > fa {
                0.0
            } else if nv[1] < sb {
                90.0
            } else {
                slope_degrees(nv)
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gradient_noise::fbm_noise;

    #[test]
    fn quantized_sums_to_255() {
        for w in [
            [0.25f32; 4],
            [1.0, 0.0, 0.0, 0.0],
            [0.1, 0.2, 0.3, 0.4],
            [1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 0.0],
        ] {
            let q = quantize_weights(w);
            assert_eq!(q.iter().map(|&v| v as u32).sum::<u32>(), 255, "{w:?}");
        }
        assert_eq!(quantize_weights([1.0f32, 0.0, 0.0, 0.0]), [255, 0, 0, 0]);
    }

    /// The definition: largest remainder over `floor`ed shares.
    fn quantize_reference(w: [f32; 4]) -> [u8; 4] {
        let s: f32 = w.iter().map(|v| v.max(0.0)).sum();
        if s <= 0.0 {
            return [0, 255, 0, 0];
        }
        let (mut out, mut rem, mut total) = ([0u8; 4], [0.0f32; 4], 0u32);
        for k in 0..4 {
            let v = w[k].max(0.0) / s * 255.0;
            let f = v.floor().min(255.0);
            out[k] = f as u8;
            rem[k] = v - f;
            total += f as u32;
        }
        for _ in 0..255u32.saturating_sub(total) {
            let best = (1..4).fold(0, |b, k| if rem[k] > rem[b] { k } else { b });
            out[best] += 1;
            rem[best] = -1.0;
        }
        out
    }

    #[test]
    fn quantize_matches_floor_definition() {
        for i in 0..5000 {
            let t = (i as f32 * 0.000_731).fract();
            for w in [
                [t, 1.0 - t, (t * 7.0).fract(), 0.5 * t],
                [t * 1e-3, 0.0, 3.0 * t, -t],
                [t, t, t, t],
                [1.0, t, 0.0, 0.0],
            ] {
                assert_eq!(quantize_weights(w), quantize_reference(w), "{w:?}");
            }
        }
    }

    #[test]
    fn slope_skip_gives_identical_weights() {
        let p = SplatParams::default();
        let sk = SlopeSkip::new(&p);
        // Every y in 0..=1, plus -1 and NaN (acos kept, like the definition).
        let mut nrm: Vec<[f32; 3]> = (0..=2000)
            .map(|i| {
                let y = i as f32 / 2000.0;
                [(1.0 - y * y).max(0.0).sqrt(), y, 0.0]
            })
            .collect();
        nrm.extend([[0.0, -1.0, 0.0], [0.0, f32::NAN, 0.0]]);
        let mut slopes = vec![0.0f32; nrm.len()];
        sk.row(&nrm, &mut slopes);
        for (&nv, &sl) in nrm.iter().zip(&slopes) {
            for &h in &[1.0f32, 20.0, 70.0] {
                let a = splat_weights(h, sl, 0.2, 0.0, 100.0, &p);
                let b = splat_weights(h, slope_degrees(nv), 0.2, 0.0, 100.0, &p);
                assert_eq!(
                    a.map(f32::to_bits),
                    b.map(f32::to_bits),
                    "y {} h {h}",
                    nv[1]
                );
            }
        }
    }

    /// The definition of [`auto_splat`]: per-sample weights with the exact slope, whole-map
    /// blur passes, then [`quantize_weights`].
    fn splat_reference(
        heights: &[f32],
        normals: &[[f32; 3]],
        sand: &[f32],
        g: &Grid,
        max_h: f32,
        p: &SplatParams,
        tag: u32,
    ) -> Vec<[u8; 4]> {
        let n = g.resolution;
        let jitter = fbm_noise(g, &SPLAT_JITTER, tag);
        let mut w: Vec<[f32; 4]> = (0..n * n)
            .map(|i| {
                splat_weights(
                    heights[i],
                    slope_degrees(normals[i]),
                    sand[i],
                    p.jitter * jitter[i],
                    max_h,
                    p,
                )
            })
            .collect();
        for _ in 0..p.blur_passes {
            box_blur_pass(&mut w, n);
        }
        w.iter().map(|&v| quantize_weights(v)).collect()
    }

    /// Rough terrain hitting every rule (sand, rock, snow, all slope bands), plus non-finite
    /// heights, normals and sandiness at a few samples.
    fn rough_inputs(n: usize) -> (Vec<f32>, Vec<[f32; 3]>, Vec<f32>) {
        let mut heights: Vec<f32> = (0..n * n)
            .map(|i| ((i * 7919) % 97) as f32 - 10.0)
            .collect();
        let mut sand: Vec<f32> = (0..n * n).map(|i| (i % 5) as f32 / 4.0).collect();
        if n > 6 {
            heights[n + 1] = f32::NAN;
            heights[2 * n + 5] = f32::INFINITY;
            sand[3 * n + 2] = f32::NAN;
            sand[4 * n] = 7.0;
        }
        let mut normals = crate::normals::compute_normals(&heights, n, 2.0);
        if n > 6 {
            normals[5 * n + 3] = [0.0, f32::NAN, 0.0];
            normals[6 * n + 6] = [0.0, -1.0, 0.0];
        }
        (heights, normals, sand)
    }

    #[test]
    fn fused_blur_and_quantise_equals_separate_passes() {
        let n = 37;
        let (heights, normals, sand) = rough_inputs(n);
        for passes in 0..4 {
            let p = SplatParams {
                blur_passes: passes,
                ..SplatParams::default()
            };
            let g = Grid::new(n, 72.0, 3);
            let got = auto_splat(&heights, &normals, &sand, &g, 100.0, &p, 7);
            let want = splat_reference(&heights, &normals, &sand, &g, 100.0, &p, 7);
            assert_eq!(got, want, "passes {passes}");
        }
    }

    /// Any strip height (halo clamped at the map's edges or not, strips shorter than the halo,
    /// a ragged last strip), any pass count (also the whole-map path beyond
    /// `MAX_STRIP_PASSES`) and tiny maps give the definition's bytes.
    #[test]
    fn strips_equal_definition_for_any_height_and_passes() {
        for n in [1usize, 2, 3, 8, 23] {
            let (heights, normals, sand) = rough_inputs(n);
            for passes in [0u32, 1, 2, 3, 5, 9, MAX_STRIP_PASSES, MAX_STRIP_PASSES + 1] {
                let p = SplatParams {
                    blur_passes: passes,
                    ..SplatParams::default()
                };
                let g = Grid::new(n, 50.0, 11);
                let want = splat_reference(&heights, &normals, &sand, &g, 80.0, &p, 5);
                let c = Ctx::new(&heights, Normals::Map(&normals), &sand, &g, 80.0, &p, 5).unwrap();
                for strip in [1usize, 2, 3, 5, 7, n, n + 4] {
                    let got = auto_splat_strips(&c, strip);
                    assert_eq!(got, want, "n {n} passes {passes} strip {strip}");
                }
            }
        }
    }

    /// Rows wider than a chunk: chunk edges inside a row (a last chunk of one or two columns
    /// too) give the definition's bytes.
    #[test]
    fn chunked_rows_equal_definition() {
        for n in [CHUNK + 1, 2 * CHUNK + 2] {
            let (heights, normals, sand) = rough_inputs(n);
            for passes in [0u32, 1, 2, 3, 9] {
                let p = SplatParams {
                    blur_passes: passes,
                    ..SplatParams::default()
                };
                let g = Grid::new(n, 300.0, 4);
                let want = splat_reference(&heights, &normals, &sand, &g, 60.0, &p, 1);
                let c = Ctx::new(&heights, Normals::Map(&normals), &sand, &g, 60.0, &p, 1).unwrap();
                for strip in [7usize, 64] {
                    let got = auto_splat_strips(&c, strip);
                    assert_eq!(got, want, "n {n} passes {passes} strip {strip}");
                }
            }
        }
    }

    /// Normals computed row by row from the heights give the bytes of the normal map (whole-map
    /// path included), on maps narrower and wider than a chunk.
    #[test]
    fn normals_from_heights_equal_the_normal_map() {
        for n in [1usize, 2, 3, 23, CHUNK + 3] {
            let (heights, _, sand) = rough_inputs(n);
            let spacing = 1.7;
            let normals = crate::normals::compute_normals(&heights, n, spacing);
            for passes in [0u32, 2, MAX_STRIP_PASSES + 1] {
                let p = SplatParams {
                    blur_passes: passes,
                    ..SplatParams::default()
                };
                let g = Grid::new(n, 40.0, 6);
                let want = auto_splat(&heights, &normals, &sand, &g, 70.0, &p, 3);
                let got = auto_splat_from_heights(&heights, spacing, &sand, &g, 70.0, &p, 3);
                assert_eq!(got, want, "n {n} passes {passes}");
            }
        }
    }

    /// The baseline (non-AVX2) copy of the strip kernel gives the same bytes as the dispatched one.
    #[test]
    fn baseline_strip_kernel_equals_dispatched() {
        let n = CHUNK + 5;
        let (heights, normals, sand) = rough_inputs(n);
        let p = SplatParams::default();
        let g = Grid::new(n, 60.0, 2);
        let c = Ctx::new(&heights, Normals::Map(&normals), &sand, &g, 90.0, &p, 9).unwrap();
        let mut out = vec![MaybeUninit::new([0u8; 4]); n * n];
        let mut scr = Scratch::new(&c, p.blur_passes as usize);
        for a in (0..n).step_by(6) {
            let b = (a + 6).min(n);
            splat_strip_body(&c, &mut scr, a, &mut out[a * n..b * n]);
        }
        // SAFETY: initialised at creation (and overwritten by the kernel).
        let got: Vec<[u8; 4]> = out
            .into_iter()
            .map(|v| unsafe { v.assume_init() })
            .collect();
        assert_eq!(got, auto_splat(&heights, &normals, &sand, &g, 90.0, &p, 9));
    }

    /// The branch-free row quantiser and [`quantize_weights`] equal the definition on ordinary
    /// weights and on everything their fallback covers (zero, negative, huge, infinite, NaN,
    /// ties).
    #[test]
    fn quantize_row_equals_definition() {
        let mut rows: Vec<[f32; 4]> = Vec::new();
        for i in 0..4000 {
            let t = (i as f32 * 0.000_917).fract();
            rows.extend([
                [t, 1.0 - t, (t * 7.0).fract(), 0.5 * t],
                [t * 1e-3, 0.0, 3.0 * t, -t],
                [t, t, t, t],
                [1.0, t, 0.0, 0.0],
            ]);
        }
        let odd = [
            0.0f32,
            -0.0,
            -1.0,
            1e-45,
            1e-30,
            0.25,
            1.0 / 3.0,
            1.0,
            3.0e38,
            f32::MAX,
            f32::INFINITY,
            f32::NAN,
        ];
        for &a in &odd {
            for &b in &odd {
                rows.extend([
                    [a, b, 0.5, b],
                    [b, a, a, 0.0],
                    [a, a, b, b],
                    [0.0, 0.0, a, b],
                ]);
            }
        }
        let n = rows.len();
        let planar: Vec<f32> = (0..4)
            .flat_map(|k| rows.iter().map(move |r| r[k]))
            .collect();
        let mut out = vec![MaybeUninit::new([0u8; 4]); n];
        quantize_planar(&planar, n, &mut out);
        let mut part = vec![MaybeUninit::new([0u8; 4]); n - 5];
        quantize_planar(&planar[3..], n, &mut part);
        for (r, o) in rows[3..].iter().zip(&part) {
            // SAFETY: initialised at creation (and overwritten by the kernel).
            assert_eq!(unsafe { o.assume_init() }, quantize_definition(*r), "{r:?}");
        }
        for (r, o) in rows.iter().zip(&out) {
            // SAFETY: initialised at creation (and overwritten by the kernel).
            assert_eq!(unsafe { o.assume_init() }, quantize_definition(*r), "{r:?}");
            assert_eq!(quantize_weights(*r), quantize_definition(*r), "{r:?}");
        }
    }

    #[test]
    fn rules() {
        let p = SplatParams::default();
        let beach = splat_weights(0.5, 2.0, 0.0, 0.0, 100.0, &p);
        assert!(beach[SAND] > 0.9);
        let meadow = splat_weights(20.0, 5.0, 0.0, 0.0, 100.0, &p);
        assert!(meadow[GRASS] > 0.9);
        let cliff = splat_weights(20.0, 60.0, 0.0, 0.0, 100.0, &p);
        assert!(cliff[ROCK] > 0.9);
        let peak = splat_weights(95.0, 10.0, 0.0, 0.0, 100.0, &p);
        assert!(peak[SNOW] > 0.9);
        let desert = splat_weights(20.0, 5.0, 1.0, 0.0, 100.0, &p);
        assert!(desert[SAND] > 0.9);
    }
}
