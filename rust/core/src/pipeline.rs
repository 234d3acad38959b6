//! The whole generator: every stage in order, with timings, progress and cancellation.

use crate::biomes::biome_blend;
use crate::coast::coastal_height;
use crate::detail::{apply_detail, detail_factor};
use crate::diamond_square::diamond_square;
use crate::distance::{distance_to_coast, distance_to_coast_within};
use crate::gaussian_islands::gaussian_islands;
use crate::gradient_noise::{fbm_noise, FbmRows};
use crate::grid::{min_max_count_above, normalize_01, Normalization};
use crate::hash::tag;
use crate::heightfield::Heightfield;
use crate::mask::island_mask;
use crate::params::{Algorithm, CoastParams, IslandParams, ParamError};
use crate::river::carve_river;
use crate::shaping::{apply_shaping_curve, sample_curve};
use crate::splat::auto_splat;
use crate::value_noise::value_noise;
use rayon::prelude::*;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Statistics of one generation.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Stats {
    /// Fraction of samples above sea level (0..1).
    pub land_fraction: f32,
    /// Lowest height, metres.
    pub min_height: f32,
    /// Highest height, metres.
    pub max_height: f32,
    /// Milliseconds per stage, in pipeline order.
    pub stage_ms: Vec<(String, f64)>,
    /// Total milliseconds.
    pub total_ms: f64,
    /// Which backend produced the island ("cpu" here).
    pub backend: String,
}

/// A generated island.
#[derive(Clone, Debug)]
pub struct Island {
    /// Parameters used.
    pub params: IslandParams,
    /// Heights in metres (sea level 0) with normals.
    pub field: Heightfield,
    /// Biome index per sample.
    pub biomes: Vec<u8>,
    /// Auto splat per sample: (sand, grass, rock, snow), summing to 255.
    pub splat: Vec<[u8; 4]>,
    /// Statistics.
    pub stats: Stats,
}

/// Why a generation did not produce an island.
#[derive(Clone, Debug, PartialEq)]
pub enum GenerateError {
    /// The parameters failed validation.
    Invalid(ParamError),
    /// [`generate_with`]'s cancel flag was raised.
    Cancelled,
}
impl fmt::Display for GenerateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GenerateError::Invalid(e) => e.fmt(f),
            GenerateError::Cancelled => f.write_str("generation cancelled"),
        }
    }
}
impl std::error::Error for GenerateError {}
impl From<ParamError> for GenerateError {
    fn from(e: ParamError) -> Self {
        GenerateError::Invalid(e)
    }
}

/// Stage names reported in [`Stats::stage_ms`] and progress callbacks, in order.
pub const STAGES: [&str; 11] = [
    "base", "detail", "biomes", "shaping", "mask", "distance", "coast", "river", "normals",
    "splat", "stats",
];

/// Generate an island on the CPU (rayon).
pub fn generate(params: &IslandParams) -> Result<Island, ParamError> {
    match generate_with(params, &mut |_, _| {}, &AtomicBool::new(false)) {
        Ok(i) => Ok(i),
        Err(GenerateError::Invalid(e)) => Err(e),
        Err(GenerateError::Cancelled) => unreachable!("not cancelled"),
    }
}

/// Intermediate fields up to (and including) the coastal falloff; shared by the CPU pipeline
/// and the GPU parity tests.
pub struct Fields {
    /// Normalised base relief after detail, biomes and the shaping curve.
    pub land01: Vec<f32>,
    /// Biome index per sample.
    pub biomes: Vec<u8>,
    /// Biome fine-detail multiplier per sample.
    pub roughness: Vec<f32>,
    /// Biome sandiness per sample.
    pub sandiness: Vec<f32>,
    /// Land mask.
    pub mask: Vec<u8>,
    /// Signed distance to the coast, metres.
    pub distance: Vec<f32>,
}

/// The raw base field of the selected algorithm (before normalisation).
pub fn base_height(p: &IslandParams) -> Vec<f32> {
    let n = p.resolution as usize;
    match p.algorithm {
        Algorithm::Fbm => fbm_noise(
            n,
            p.world_size,
            p.fbm.scale,
            p.fbm.octaves,
            p.fbm.lacunarity,
            p.fbm.persistence,
            p.seed,
            tag::BASE,
        ),
        Algorithm::ValueNoise => value_noise(
            n,
            p.world_size,
            p.value_noise.scale,
            p.value_noise.octaves,
            p.value_noise.persistence,
            p.seed,
            tag::BASE,
        ),
        Algorithm::DiamondSquare => diamond_square(
            n,
            p.diamond_square.roughness,
            p.diamond_square.ridge,
            p.seed,
            tag::BASE,
        ),
        Algorithm::GaussianIslands => gaussian_islands(
            n,
            p.world_size,
            p.gaussian.cells,
            p.gaussian.density,
            p.gaussian.separation,
            p.seed,
            tag::BASE,
        ),
    }
}

/// Width of the always-water border ring, metres.
pub fn border_margin(p: &IslandParams) -> f32 {
    p.coast.shelf_width + 2.0 * p.spacing()
}

/// Generate with a progress callback `(fraction 0..1, stage name)` and a cancel flag checked
/// between stages.
pub fn generate_with(
    params: &IslandParams,
    progress: &mut dyn FnMut(f32, &str),
    cancel: &AtomicBool,
) -> Result<Island, GenerateError> {
    generate_heights_with(params, progress, cancel)?.finish(progress, cancel)
}

/// An island whose heights are final (every stage up to the river) but whose normals, splat
/// and statistics are still to come: [`generate_heights_with`], then [`Carved::finish`]. A
/// caller can use the heights (colliders, say) while another thread finishes the island;
/// `generate_with` is exactly these two steps.
pub struct Carved {
    params: IslandParams,
    heights: Vec<f32>,
    biomes: Vec<u8>,
    sandiness: Vec<f32>,
    stage_ms: Vec<(String, f64)>,
    t_all: Instant,
}

impl Carved {
    /// Final heights, metres, `resolution²` row-major.
    pub fn heights(&self) -> &[f32] {
        &self.heights
    }

    /// Parameters being generated.
    pub fn params(&self) -> &IslandParams {
        &self.params
    }

    /// The remaining stages (normals, splat, statistics). Progress continues where
    /// [`generate_heights_with`] left off; `total_ms` counts from the start of the generation.
    pub fn finish(
        self,
        progress: &mut dyn FnMut(f32, &str),
        cancel: &AtomicBool,
    ) -> Result<Island, GenerateError> {
        let Carved {
            params,
            heights,
            biomes,
            sandiness,
            mut stage_ms,
            t_all,
        } = self;
        let p = &params;
        let n = p.resolution as usize;
        let mut clock = StageClock::new();
        let field = Heightfield::new(n, p.world_size, heights);
        clock.done(&mut stage_ms, progress, cancel)?;

        let splat = auto_splat(
            &field.heights,
            &field.normals,
            &sandiness,
            n,
            p.world_size,
            p.max_height,
            &p.splat,
            p.seed,
            tag::SPLAT,
        );
        clock.done(&mut stage_ms, progress, cancel)?;

        let ((min_height, max_height), land) = min_max_count_above(&field.heights, 0.0);
        clock.done(&mut stage_ms, progress, cancel)?;

        let stats = Stats {
            land_fraction: land as f32 / (n * n) as f32,
            min_height,
            max_height,
            stage_ms,
            total_ms: t_all.elapsed().as_secs_f64() * 1e3,
            backend: "cpu".into(),
        };
        Ok(Island {
            params,
            field,
            biomes,
            splat,
            stats,
        })
    }
}

/// Times the stages after the concurrent ones, one after another: each [`StageClock::done`]
/// records the next stage of [`STAGES`] (after those already in `stage_ms`), reports progress and
/// checks the cancel flag.
struct StageClock {
    t: Instant,
}

impl StageClock {
    fn new() -> StageClock {
        StageClock { t: Instant::now() }
    }

    fn done(
        &mut self,
        stage_ms: &mut Vec<(String, f64)>,
        progress: &mut dyn FnMut(f32, &str),
        cancel: &AtomicBool,
    ) -> Result<(), GenerateError> {
        let k = stage_ms.len();
        stage_ms.push((STAGES[k].to_string(), self.t.elapsed().as_secs_f64() * 1e3));
        progress((k + 1) as f32 / STAGES.len() as f32, STAGES[k]);
        self.t = Instant::now();
        if cancel.load(Ordering::Relaxed) {
            Err(GenerateError::Cancelled)
        } else {
            Ok(())
        }
    }
}

/// The stages of [`generate_with`] up to the river: the island's final heights (see
/// [`Carved`]).
pub fn generate_heights_with(
    params: &IslandParams,
    progress: &mut dyn FnMut(f32, &str),
    cancel: &AtomicBool,
) -> Result<Carved, GenerateError> {
    params.validate()?;
    let p = params;
    let n = p.resolution as usize;
    let spacing = p.spacing();
    let t_all = Instant::now();
    let mut stage_ms = Vec::with_capacity(STAGES.len());
    let mut k = 0usize;

    // Stages are fused where one consumes another row by row (same arithmetic as the separate
    // stage functions, which `generate_fields` and the tests keep as the reference):
    // normalisation happens in the detail pass, the shaping curve and the fine-detail noise in
    // the coast pass. The relief (base, detail, biomes) and the coast geometry (mask,
    // distance) do not depend on each other: they run concurrently on the rayon pool, which
    // fills the cores while either has a serial part; their stage times therefore overlap.
    let cancelled = || cancel.load(Ordering::Relaxed);
    let timed = |t: &mut Instant| {
        let ms = t.elapsed().as_secs_f64() * 1e3;
        *t = Instant::now();
        ms
    };
    let (relief, coast_geometry) = rayon::join(
        || {
            let mut t = Instant::now();
            let mut base = base_height(p);
            let norm = Normalization::of(&base);
            let ms_base = timed(&mut t);
            if cancelled() {
                return None;
            }
            let d = &p.detail;
            let detail = d.enabled.then(|| {
                FbmRows::of_noise(
                    n,
                    p.world_size,
                    d.scale,
                    d.octaves,
                    2.0,
                    0.5,
                    p.seed,
                    tag::DETAIL,
                )
            });
            base.par_chunks_mut(n).enumerate().for_each_init(
                || vec![0.0f32; if detail.is_some() { n } else { 0 }],
                |buf, (z, row)| match &detail {
                    Some(rows) => {
                        rows.row(z, buf);
                        for (v, &dv) in row.iter_mut().zip(buf.iter()) {
                            *v = norm.apply(*v) * detail_factor(dv, d.strength, d.cap);
                        }
                    }
                    None => row.iter_mut().for_each(|v| *v = norm.apply(*v)),
                },
            );
            let ms_detail = timed(&mut t);
            if cancelled() {
                return None;
            }
            let b = &p.biomes;
            let (biomes, roughness, sandiness) = biome_blend(
                &mut base,
                n,
                p.world_size,
                b.grid,
                b.distortion,
                b.boundary_noise,
                b.blend_width,
                &b.biomes,
                p.seed,
                tag::BIOME,
            );
            let ms_biomes = timed(&mut t);
            Some((
                base,
                biomes,
                roughness,
                sandiness,
                [ms_base, ms_detail, ms_biomes],
            ))
        },
        || {
            let mut t = Instant::now();
            let mask = island_mask(
                n,
                p.world_size,
                p.mask.radius,
                p.mask.roundness,
                p.mask.noise_scale,
                border_margin(p),
                p.seed,
                tag::MASK,
            );
            let ms_mask = timed(&mut t);
            if cancelled() {
                return None;
            }
            // The coastal falloff saturates beyond the coast and shelf widths: only distances
            // below them need to be exact.
            let dist = distance_to_coast_within(
                &mask,
                n,
                spacing,
                p.coast.coast_width.max(p.coast.shelf_width),
            );
            Some((dist, [ms_mask, timed(&mut t)]))
        },
    );
    let (Some((base, biomes, roughness, sandiness, relief_ms)), Some((dist, geometry_ms))) =
        (relief, coast_geometry)
    else {
        return Err(GenerateError::Cancelled);
    };
    // Report the six stages in pipeline order (the shaping curve is applied in the coast pass).
    for ms in [
        relief_ms[0],
        relief_ms[1],
        relief_ms[2],
        0.0,
        geometry_ms[0],
        geometry_ms[1],
    ] {
        stage_ms.push((STAGES[k].to_string(), ms));
        k += 1;
        progress(k as f32 / STAGES.len() as f32, STAGES[k - 1]);
    }
    if cancelled() {
        return Err(GenerateError::Cancelled);
    }
    let mut clock = StageClock::new();

    let fine = FbmRows::of_noise(
        n,
        p.world_size,
        p.coast.fine_scale,
        3,
        2.0,
        0.5,
        p.seed,
        tag::FINE,
    );
    let mut heights = crate::memory::zeroed(n * n);
    heights.par_chunks_mut(n).enumerate().for_each_init(
        || vec![0.0f32; n],
        |buf, (z, row)| {
            fine.row(z, buf);
            let i0 = z * n;
            coast_row(
                row,
                &base[i0..i0 + n],
                &dist[i0..i0 + n],
                buf,
                &roughness[i0..i0 + n],
                &p.shaping_curve,
                p.max_height,
                &p.coast,
            );
        },
    );
    drop(base);
    clock.done(&mut stage_ms, progress, cancel)?;

    if p.river.enabled {
        let r = &p.river;
        carve_river(
            &mut heights,
            n,
            p.world_size,
            r.width,
            r.bank,
            r.depth,
            r.meander,
            r.meander_scale,
            p.seed,
            tag::RIVER,
        );
    }
    clock.done(&mut stage_ms, progress, cancel)?;
    Ok(Carved {
        params: p.clone(),
        heights,
        biomes,
        sandiness,
        stage_ms,
        t_all,
    })
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn coast_row_body(
    out: &mut [f32],
    base: &[f32],
    dist: &[f32],
    fine: &[f32],
    rough: &[f32],
    curve: &[f32],
    max_height: f32,
    c: &CoastParams,
) {
    for ((((o, &b), &d), &f), &r) in out.iter_mut().zip(base).zip(dist).zip(fine).zip(rough) {
        *o = coastal_height(sample_curve(curve, b), d, f, r, max_height, c);
    }
}

/// One row of the fused shaping + coast pass: explicit AVX2 when the CPU has it (the compiler
/// leaves the curve lookup and the land/sea choice scalar), else [`coast_row_body`]; the same
/// operations in the same order, so the same bits (pinned by a test).
#[allow(clippy::too_many_arguments)]
#[inline]
fn coast_row(
    out: &mut [f32],
    base: &[f32],
    dist: &[f32],
    fine: &[f32],
    rough: &[f32],
    curve: &[f32],
    max_height: f32,
    c: &CoastParams,
) {
    #[cfg(target_arch = "x86_64")]
    if curve.len() >= 2
        && curve.len() <= i32::MAX as usize
        && std::arch::is_x86_feature_detected!("avx2")
    {
        // SAFETY: AVX2 is available (checked just above); the curve has at least 2 points.
        let done = unsafe { coast_avx2::row(out, base, dist, fine, rough, curve, max_height, c) };
        let (o, b, d, f, r) = (
            &mut out[done..],
            &base[done..],
            &dist[done..],
            &fine[done..],
            &rough[done..],
        );
        return coast_row_body(o, b, d, f, r, curve, max_height, c);
    }
    coast_row_body(out, base, dist, fine, rough, curve, max_height, c)
}

#[cfg(target_arch = "x86_64")]
mod coast_avx2 {
    use crate::params::CoastParams;
    use std::arch::x86_64::*;

    /// `v.clamp(0.0, 1.0)` of Rust (NaN stays NaN, -0.0 stays -0.0): `max`/`min` with the value
    /// second, which the instructions return when either is NaN or both are zero.
    #[inline(always)]
    unsafe fn clamp01(v: __m256) -> __m256 {
        _mm256_min_ps(_mm256_set1_ps(1.0), _mm256_max_ps(_mm256_setzero_ps(), v))
    }

    /// `grid::smoothstep(0.0, e1, x)`.
    #[inline(always)]
    unsafe fn smoothstep0(e1: f32, x: __m256) -> __m256 {
        let zero = _mm256_setzero_ps();
        let t = clamp01(_mm256_div_ps(
            _mm256_sub_ps(x, zero),
            _mm256_set1_ps(e1 - 0.0),
        ));
        _mm256_mul_ps(
            _mm256_mul_ps(t, t),
            _mm256_sub_ps(_mm256_set1_ps(3.0), _mm256_mul_ps(_mm256_set1_ps(2.0), t)),
        )
    }

    /// [`super::coast_row_body`] on the first multiple of 8 samples; returns how many it did.
    #[allow(clippy::too_many_arguments)]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn row(
        out: &mut [f32],
        base: &[f32],
        dist: &[f32],
        fine: &[f32],
        rough: &[f32],
        curve: &[f32],
        max_height: f32,
        c: &CoastParams,
    ) -> usize {
        let len = out
            .len()
            .min(base.len())
            .min(dist.len())
            .min(fine.len())
            .min(rough.len());
        let full = len / 8 * 8;
        let scale = _mm256_set1_ps((curve.len() - 1) as f32);
        let last = _mm256_set1_epi32(curve.len() as i32 - 2);
        let one = _mm256_set1_epi32(1);
        let (beach, land_scale) = (c.beach_height, 0.25 * c.coast_width);
        let mut k = 0;
        while k < full {
            let ld = |s: &[f32]| _mm256_loadu_ps(s.as_ptr().add(k));
            let (b, d, f, r) = (ld(base), ld(dist), ld(fine), ld(rough));
            // shaping::sample_curve: x = clamp(t)·(n-1), i = min(x as usize, n-2), lerp.
            let x = _mm256_mul_ps(clamp01(b), scale);
            // Truncation; NaN gives i32::MIN, which the max below turns into 0 like `as usize`.
            let i = _mm256_max_epi32(
                _mm256_min_epi32(_mm256_cvttps_epi32(x), last),
                _mm256_setzero_si256(),
            );
            let fr = _mm256_sub_ps(x, _mm256_cvtepi32_ps(i));
            let a = _mm256_i32gather_ps::<4>(curve.as_ptr(), i);
            let a1 = _mm256_i32gather_ps::<4>(curve.as_ptr(), _mm256_add_epi32(i, one));
            let shaped = _mm256_add_ps(a, _mm256_mul_ps(_mm256_sub_ps(a1, a), fr));
            // coast::coastal_height.
            let land = _mm256_add_ps(
                _mm256_mul_ps(_mm256_set1_ps(beach), smoothstep0(land_scale, d)),
                _mm256_mul_ps(
                    _mm256_mul_ps(shaped, _mm256_set1_ps(max_height)),
                    smoothstep0(c.coast_width, d),
                ),
            );
            let neg_d = _mm256_xor_ps(d, _mm256_set1_ps(-0.0));
            let sea = _mm256_mul_ps(
                _mm256_set1_ps(-c.sea_depth),
                smoothstep0(c.shelf_width, neg_d),
            );
            let large = _mm256_blendv_ps(
                sea,
                land,
                _mm256_cmp_ps::<_CMP_GE_OQ>(d, _mm256_setzero_ps()),
            );
            let h = _mm256_add_ps(
                large,
                _mm256_mul_ps(_mm256_mul_ps(f, _mm256_set1_ps(c.fine_amplitude)), r),
            );
            _mm256_storeu_ps(out.as_mut_ptr().add(k), h);
            k += 8;
        }
        full
    }
}

/// Intermediate fields (for tests and the GPU parity suite): everything up to the distance.
pub fn generate_fields(p: &IslandParams) -> Result<Fields, ParamError> {
    p.validate()?;
    let n = p.resolution as usize;
    let mut base = base_height(p);
    normalize_01(&mut base);
    if p.detail.enabled {
        let d = fbm_noise(
            n,
            p.world_size,
            p.detail.scale,
            p.detail.octaves,
            2.0,
            0.5,
            p.seed,
            tag::DETAIL,
        );
        apply_detail(&mut base, &d, p.detail.strength, p.detail.cap);
    }
    let b = &p.biomes;
    let (biomes, roughness, sandiness) = biome_blend(
        &mut base,
        n,
        p.world_size,
        b.grid,
        b.distortion,
        b.boundary_noise,
        b.blend_width,
        &b.biomes,
        p.seed,
        tag::BIOME,
    );
    apply_shaping_curve(&mut base, &p.shaping_curve);
    let mask = island_mask(
        n,
        p.world_size,
        p.mask.radius,
        p.mask.roundness,
        p.mask.noise_scale,
        border_margin(p),
        p.seed,
        tag::MASK,
    );
    let distance = distance_to_coast(&mask, n, p.spacing());
    Ok(Fields {
        land01: base,
        biomes,
        roughness,
        sandiness,
        mask,
        distance,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coast_row_fast_path_equals_the_scalar_row() {
        let mut r = 0x9e37_79b9u32;
        let mut next = || {
            r ^= r << 13;
            r ^= r >> 17;
            r ^= r << 5;
            r as f32 / u32::MAX as f32
        };
        let specials = [
            f32::NAN,
            -0.0,
            0.0,
            1.0,
            -1.0,
            1.5,
            f32::INFINITY,
            f32::NEG_INFINITY,
            1e-30,
            0.999_999_9,
        ];
        for curve_len in [2usize, 6, 17, 256] {
            let curve: Vec<f32> = (0..curve_len).map(|_| next()).collect();
            for len in [0usize, 1, 7, 8, 9, 1025] {
                let mut base: Vec<f32> = (0..len).map(|_| next() * 1.4 - 0.2).collect();
                let mut dist: Vec<f32> = (0..len).map(|_| (next() - 0.5) * 400.0).collect();
                for (k, &v) in specials.iter().enumerate().filter(|&(k, _)| k < len) {
                    base[k] = v;
                    dist[len - 1 - k] = v * 50.0;
                }
                if len > 20 {
                    dist[15] = 0.0;
                    dist[16] = -0.0;
                }
                let fine: Vec<f32> = (0..len).map(|_| next() * 2.0 - 1.0).collect();
                let rough: Vec<f32> = (0..len).map(|_| next() * 2.0).collect();
                for c in [
                    CoastParams::default(),
                    CoastParams {
                        coast_width: 7.0,
                        shelf_width: 300.0,
                        beach_height: 0.0,
                        ..CoastParams::default()
                    },
                ] {
                    let (mut fast, mut slow) = (vec![0f32; len], vec![0f32; len]);
                    coast_row(&mut fast, &base, &dist, &fine, &rough, &curve, 120.0, &c);
                    coast_row_body(&mut slow, &base, &dist, &fine, &rough, &curve, 120.0, &c);
                    for k in 0..len {
                        assert_eq!(
                            fast[k].to_bits(),
                            slow[k].to_bits(),
                            "curve {curve_len} len {len} sample {k}: {} vs {}",
                            fast[k],
                            slow[k]
                        );
                    }
                }
            }
        }
    }
}
