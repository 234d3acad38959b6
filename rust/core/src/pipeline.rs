//! The whole generator: every stage in order, with timings, progress and cancellation.

use crate::biomes::biome_blend;
use crate::channels::carve_rivers;
use crate::coast::ShapedCoast;
use crate::detail::{apply_detail, detail_factor};
use crate::diamond_square::diamond_square;
use crate::distance::{distance_to_coast, distance_to_coast_within};
use crate::drainage::{drainage_lean, Drainage, NONE};
use crate::erosion::{erode, ErosionReport};
use crate::gaussian_islands::gaussian_islands;
use crate::gradient_noise::{fbm_noise, FbmRows};
use crate::grid::{min_max_count_above, normalize_01, Normalization};
use crate::hash::tag;
use crate::heightfield::Heightfield;
use crate::params::{Algorithm, IslandParams, ParamError, RiverMode};
use crate::paths::PathKind;
use crate::river::carve_river;
use crate::runs::Runs;
use crate::shaping::apply_shaping_curve;
use crate::splat::{auto_splat_with, Normals};
use crate::value_noise::value_noise;
use crate::water::{Water, DRY, LAKE, RIVER, SEA};
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
    /// River systems (flow rivers): river samples whose water leaves the river network into a
    /// lake, the sea or over the map border, one per river mouth. 0 unless the river mode is
    /// [`RiverMode::Flow`].
    pub river_count: u32,
    /// Total length of the flow rivers, metres (sample to receiver, summed over river samples).
    pub river_length_m: f32,
    /// Lakes ([`crate::drainage::Lake`]s, plus closed basins below sea level at least
    /// `drainage.lake_min_area` large).
    pub lake_count: u32,
    /// Area of those lakes, m².
    pub lake_area_m2: f32,
    /// Why this backend made the island (set by the backend chooser, `island_gpu`), e.g.
    /// `"cpu requested"` or `"auto: cpu (no GPU adapter)"`; empty when no chooser was involved.
    pub backend_reason: String,
    /// Work counters of a GPU generation (`None` on the CPU).
    pub gpu: Option<GpuCounters>,
}

/// What a GPU generation asked of the device: counts that do not depend on the hardware.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct GpuCounters {
    /// Compute dispatches recorded.
    pub dispatches: u64,
    /// Queue submissions.
    pub submissions: u64,
    /// Times the host blocked on the device (a submission waited for, a buffer mapped).
    pub host_waits: u64,
    /// Bytes copied from the device to the host.
    pub bytes_read_back: u64,
    /// Bytes written from the host to the device (buffers and uniforms).
    pub bytes_uploaded: u64,
}

impl GpuCounters {
    /// The counts of `self` minus those of `earlier` (both from the same running counter).
    pub fn since(self, earlier: GpuCounters) -> GpuCounters {
        GpuCounters {
            dispatches: self.dispatches - earlier.dispatches,
            submissions: self.submissions - earlier.submissions,
            host_waits: self.host_waits - earlier.host_waits,
            bytes_read_back: self.bytes_read_back - earlier.bytes_read_back,
            bytes_uploaded: self.bytes_uploaded - earlier.bytes_uploaded,
        }
    }

    /// The counts of `self` and `other` together (two parts of one generation).
    pub fn plus(self, other: GpuCounters) -> GpuCounters {
        GpuCounters {
            dispatches: self.dispatches + other.dispatches,
            submissions: self.submissions + other.submissions,
            host_waits: self.host_waits + other.host_waits,
            bytes_read_back: self.bytes_read_back + other.bytes_read_back,
            bytes_uploaded: self.bytes_uploaded + other.bytes_uploaded,
        }
    }
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
    /// Auto splat per sample: (sand, grass, rock, snow), summing to 255 (with
    /// [`Island::splat_upper`]).
    pub splat: Vec<[u8; 4]>,
    /// Splat layers 4..7 per sample, where a road is painted with one of them
    /// ([`crate::paths::paint_roads`]; the eight bytes of a sample sum to 255); `None` when
    /// nothing generated uses them (all 0).
    pub splat_upper: Option<Vec<[u8; 4]>>,
    /// Sea, lakes and rivers per sample.
    pub water: crate::water::Water,
    /// Statistics.
    pub stats: Stats,
}

impl Island {
    /// The generated splat as the paint brushes and the splat maps read it (layers 0..7).
    pub fn base_splat(&self) -> crate::paint::Base<'_> {
        crate::paint::Base {
            lower: &self.splat,
            upper: self.splat_upper.as_deref(),
        }
    }
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

/// The stages of the pipeline, in order: the one list behind [`Stats::stage_ms`], the progress
/// callbacks' stage names and [`STAGES`]. The GPU and Godot layers can name and order their
/// stages by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Base height of the selected [`Algorithm`], normalised to 0..1.
    Base,
    /// Detail layer ([`crate::detail`]).
    Detail,
    /// Biome regions and relief ([`crate::biomes`]).
    Biomes,
    /// Shaping curve ([`crate::shaping`]; fused into the coast pass on the CPU).
    Shaping,
    /// Island mask ([`crate::mask`]).
    Mask,
    /// Signed distance to the coast ([`crate::distance`]).
    Distance,
    /// Coastal falloff and fine detail ([`crate::coast`]).
    Coast,
    /// Bézier river ([`crate::river`], [`RiverMode::Bezier`] only).
    River,
    /// Landscape evolution ([`crate::erosion`]).
    Erosion,
    /// Drainage, lakes, flow river channels and the water map ([`crate::drainage`],
    /// [`crate::channels`], [`crate::water`]).
    Drainage,
    /// Normals ([`crate::normals`]).
    Normals,
    /// Auto splat ([`crate::splat`]).
    Splat,
    /// Statistics (land fraction, height range).
    Stats,
}

impl Stage {
    /// Every stage, in pipeline order.
    pub const ALL: [Stage; 13] = [
        Stage::Base,
        Stage::Detail,
        Stage::Biomes,
        Stage::Shaping,
        Stage::Mask,
        Stage::Distance,
        Stage::Coast,
        Stage::River,
        Stage::Erosion,
        Stage::Drainage,
        Stage::Normals,
        Stage::Splat,
        Stage::Stats,
    ];

    /// Stable name, as reported in [`Stats::stage_ms`] and progress callbacks.
    pub const fn name(self) -> &'static str {
        match self {
            Stage::Base => "base",
            Stage::Detail => "detail",
            Stage::Biomes => "biomes",
            Stage::Shaping => "shaping",
            Stage::Mask => "mask",
            Stage::Distance => "distance",
            Stage::Coast => "coast",
            Stage::River => "river",
            Stage::Erosion => "erosion",
            Stage::Drainage => "drainage",
            Stage::Normals => "normals",
            Stage::Splat => "splat",
            Stage::Stats => "stats",
        }
    }

    /// Position in [`Stage::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The stage named `name` ([`Stage::name`]).
    pub fn from_name(name: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Progress fraction reported when this stage is done: `(index + 1) / ALL.len()`.
    pub fn progress(self) -> f32 {
        (self.index() + 1) as f32 / Stage::ALL.len() as f32
    }
}

/// Stage names reported in [`Stats::stage_ms`] and progress callbacks, in order
/// ([`Stage::name`] of [`Stage::ALL`]).
pub const STAGES: [&str; Stage::ALL.len()] = {
    let mut names = [""; Stage::ALL.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = Stage::ALL[i].name();
        i += 1;
    }
    names
};

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
    let g = p.grid();
    match p.algorithm {
        Algorithm::Fbm => fbm_noise(&g, &p.fbm, tag::BASE),
        Algorithm::ValueNoise => value_noise(&g, &p.value_noise, tag::BASE),
        Algorithm::DiamondSquare => diamond_square(&g, &p.diamond_square, tag::BASE),
        Algorithm::GaussianIslands => gaussian_islands(&g, &p.gaussian, tag::BASE),
    }
}

/// Width of the always-water border ring, metres (defined with the parameters).
pub use crate::params::border_margin;

/// Generate with a progress callback `(fraction 0..1, stage name)` and a cancel flag checked
/// between stages.
pub fn generate_with(
    params: &IslandParams,
    progress: &mut dyn FnMut(f32, &str),
    cancel: &AtomicBool,
) -> Result<Island, GenerateError> {
    generate_heights_with(params, progress, cancel)?.finish(progress, cancel)
}

/// An island whose heights are final (every stage up to the drainage) but whose normals, splat
/// and statistics are still to come: [`generate_heights_with`], then [`Carved::finish`]. A
/// caller can use the heights (colliders, say) while another thread finishes the island;
/// `generate_with` is exactly these two steps.
pub struct Carved {
    params: IslandParams,
    heights: Vec<f32>,
    biomes: Vec<u8>,
    sandiness: Vec<f32>,
    hydro: Hydrology,
    stage_ms: Vec<(String, f64)>,
    t_all: Instant,
    backend_reason: String,
}

impl Carved {
    /// Set [`Stats::backend_reason`] of the island [`Carved::finish`] makes.
    pub fn with_backend_reason(mut self, reason: impl Into<String>) -> Carved {
        self.backend_reason = reason.into();
        self
    }

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
            hydro,
            mut stage_ms,
            t_all,
            backend_reason,
        } = self;
        let p = &params;
        let n = p.resolution as usize;
        let normal_spacing = Heightfield::spacing_of(n, p.world_size);
        // Up to [`NORMAL_MAP_FIRST_MAX`] the normal map is made first and the splat and wetness
        // read their slopes from it. Above, the splat stage runs before the normals stage: it
        // computes the normals it needs from the heights (the same bits as the field's), so
        // the normal map (12 bytes per sample) and the sandiness are never alive at the same
        // time, which bounds the peak memory at the largest resolutions. Both stages are
        // reported in pipeline order either way.
        let t = Instant::now();
        let (field, heights) = if n <= NORMAL_MAP_FIRST_MAX {
            (Some(Heightfield::new(n, p.world_size, heights)), Vec::new())
        } else {
            (None, heights)
        };
        let normals_first_ms = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        let (hs, normals) = match &field {
            Some(f) => (&f.heights[..], Normals::Map(&f.normals)),
            None => (
                &heights[..],
                Normals::FromHeights {
                    spacing: normal_spacing,
                },
            ),
        };
        let mut splat = auto_splat_with(
            hs,
            normals,
            &sandiness,
            &p.grid(),
            p.max_height,
            &p.splat,
            tag::SPLAT,
        );
        drop(sandiness);
        crate::wetness::apply_wetness_with(
            &mut splat,
            hs,
            normals,
            &hydro.water,
            p.spacing(),
            &p.splat,
        );
        let splat_upper = p.paths.as_deref().and_then(|set| {
            crate::paths::paint_roads(set, &mut splat, &hydro.water, n, p.world_size)
        });
        let splat_ms = t.elapsed().as_secs_f64() * 1e3;
        if cancel.load(Ordering::Relaxed) {
            return Err(GenerateError::Cancelled);
        }
        let t = Instant::now();
        let field = field.unwrap_or_else(|| Heightfield::new(n, p.world_size, heights));
        record(
            &mut stage_ms,
            progress,
            Stage::Normals,
            normals_first_ms + t.elapsed().as_secs_f64() * 1e3,
        );
        record(&mut stage_ms, progress, Stage::Splat, splat_ms);
        let mut clock = StageClock::new();
        if cancel.load(Ordering::Relaxed) {
            return Err(GenerateError::Cancelled);
        }

        let ((min_height, max_height), land) = min_max_count_above(&field.heights, 0.0);
        clock.done(&mut stage_ms, progress, cancel)?;

        let stats = Stats {
            land_fraction: land as f32 / (n * n) as f32,
            min_height,
            max_height,
            stage_ms,
            total_ms: t_all.elapsed().as_secs_f64() * 1e3,
            backend: "cpu".into(),
            backend_reason,
            ..Default::default()
        };
        let Hydrology { water, stats: hs } = hydro;
        Ok(Island {
            params,
            field,
            biomes,
            splat,
            splat_upper,
            water,
            stats: hs.apply(stats),
        })
    }
}

/// Times the stages after the concurrent ones, one after another: each [`StageClock::done`]
/// records the next stage of [`Stage::ALL`] (after those already in `stage_ms`), reports
/// progress and checks the cancel flag.
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
        let stage = Stage::ALL[stage_ms.len()];
        record(
            stage_ms,
            progress,
            stage,
            self.t.elapsed().as_secs_f64() * 1e3,
        );
        self.t = Instant::now();
        if cancel.load(Ordering::Relaxed) {
            Err(GenerateError::Cancelled)
        } else {
            Ok(())
        }
    }
}

/// Largest resolution whose finishing stages make the normal map first and read the splat's
/// and the wetness's slopes from it (the same bits as computing them from the heights, without
/// computing them twice). Larger maps compute them from the heights, so that the normal map
/// and the sandiness are never alive together (the peak memory at 8193²).
pub const NORMAL_MAP_FIRST_MAX: usize = 2049;

/// Record `stage`'s time, and report it done.
fn record(
    stage_ms: &mut Vec<(String, f64)>,
    progress: &mut dyn FnMut(f32, &str),
    stage: Stage,
    ms: f64,
) {
    stage_ms.push((stage.name().to_string(), ms));
    progress(stage.progress(), stage.name());
}

/// The stages of [`generate_with`] up to the drainage (erosion, lakes, flow rivers and the
/// water map included): the island's final heights (see [`Carved`]).
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
    let mut stage_ms = Vec::with_capacity(Stage::ALL.len());
    let g = p.grid();

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
            let detail = d
                .enabled
                .then(|| FbmRows::of_noise(&g, &d.noise(), tag::DETAIL));
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
            let (biomes, roughness, sandiness) = biome_blend(&mut base, &g, &p.biomes, tag::BIOME);
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
            let mask = match crate::shape::shape_mask(p) {
                Ok(m) => m,
                Err(e) => return Some(Err(e)),
            };
            let ms_mask = timed(&mut t);
            if cancelled() {
                return None;
            }
            // The coastal falloff saturates beyond the coast and shelf widths (plus the
            // smoothing's reach): only distances below them need to be exact.
            let mut dist = distance_to_coast_within(&mask, n, spacing, coast_distance_cap(p));
            smooth_coast_distance(p, &mut dist);
            Some(Ok((dist, [ms_mask, timed(&mut t)])))
        },
    );
    let (Some((base, biomes, roughness, sandiness, relief_ms)), Some(geometry)) =
        (relief, coast_geometry)
    else {
        return Err(GenerateError::Cancelled);
    };
    let (dist, geometry_ms) = geometry?;
    // Report the six stages in pipeline order (the shaping curve is applied in the coast pass).
    for (stage, ms) in [
        (Stage::Base, relief_ms[0]),
        (Stage::Detail, relief_ms[1]),
        (Stage::Biomes, relief_ms[2]),
        (Stage::Shaping, 0.0),
        (Stage::Mask, geometry_ms[0]),
        (Stage::Distance, geometry_ms[1]),
    ] {
        record(&mut stage_ms, progress, stage, ms);
    }
    if cancelled() {
        return Err(GenerateError::Cancelled);
    }
    let mut clock = StageClock::new();

    let fine = FbmRows::of_noise(&g, &p.coast.fine_noise(), tag::FINE);
    let shaped_coast = ShapedCoast {
        curve: &p.shaping_curve,
        max_height: p.max_height,
        c: &p.coast,
    };
    let mut heights = crate::memory::zeroed(n * n);
    heights
        .par_chunks_mut(n)
        .enumerate()
        .with_max_len(crate::grid::MAX_ROWS_PER_TASK)
        .for_each_init(
            || vec![0.0f32; n],
            |buf, (z, row)| {
                fine.row(z, buf);
                let i0 = z * n;
                shaped_coast.row(
                    row,
                    &base[i0..i0 + n],
                    &dist[i0..i0 + n],
                    buf,
                    &roughness[i0..i0 + n],
                );
            },
        );
    // Only the heights, biomes and sandiness go on: the rest is freed before the erosion and
    // drainage stages allocate their own maps.
    drop((base, dist, roughness, fine));
    clock.done(&mut stage_ms, progress, cancel)?;

    if p.river.mode == RiverMode::Bezier {
        carve_river(&mut heights, &g, &p.river, tag::RIVER);
    }
    clock.done(&mut stage_ms, progress, cancel)?;
    let resolved = with_paths(p)?;
    let pe = resolved.as_ref().unwrap_or(p);
    erosion_stage(pe, &mut heights);
    lay_paths(p, PathKind::River, &mut heights, None)?;
    clock.done(&mut stage_ms, progress, cancel)?;
    let hydro = drainage_stage(pe, &mut heights);
    lay_paths(p, PathKind::Road, &mut heights, Some(&hydro.water))?;
    clock.done(&mut stage_ms, progress, cancel)?;
    Ok(Carved {
        params: p.clone(),
        heights,
        biomes,
        sandiness,
        hydro,
        stage_ms,
        t_all,
        backend_reason: String::new(),
    })
}

/// Distances below this (metres) must be exact for the coastal falloff after
/// [`smooth_coast_distance`].
fn coast_distance_cap(p: &IslandParams) -> f32 {
    crate::coast_smoothing::smoothing_cap(
        p.coast.coast_width,
        p.coast.shelf_width,
        crate::coast_smoothing::SMOOTHING * p.coast.coast_width,
    )
}

/// [`crate::coast_smoothing::smooth_distance`] with the island's coast settings: the distance
/// the coastal falloff sees (part of the distance stage).
pub fn smooth_coast_distance(p: &IslandParams, dist: &mut [f32]) {
    crate::coast_smoothing::smooth_distance(
        dist,
        p.resolution as usize,
        p.spacing(),
        p.coast.coast_width,
        p.coast.shelf_width,
    );
}

/// The heights before the erosion and drainage stages (coast, then the Bézier river in
/// [`RiverMode::Bezier`]), from the separate stage functions: the raw relief the hydrology
/// stages start from (tests and tools). Bit-identical to what [`generate`] feeds
/// [`erosion_stage`].
pub fn raw_heights(p: &IslandParams) -> Result<Vec<f32>, ParamError> {
    let f = generate_fields(p)?;
    let fine = fbm_noise(&p.grid(), &p.coast.fine_noise(), tag::FINE);
    let mut dist = f.distance.clone();
    smooth_coast_distance(p, &mut dist);
    let mut h = crate::coast::coastal_falloff(
        &f.land01,
        &dist,
        &fine,
        &f.roughness,
        p.max_height,
        &p.coast,
    );
    if p.river.mode == RiverMode::Bezier {
        carve_river(&mut h, &p.grid(), &p.river, tag::RIVER);
    }
    Ok(h)
}

/// Intermediate fields (for tests and the GPU parity suite): everything up to the distance.
pub fn generate_fields(p: &IslandParams) -> Result<Fields, ParamError> {
    p.validate()?;
    let n = p.resolution as usize;
    let g = p.grid();
    let mut base = base_height(p);
    normalize_01(&mut base);
    if p.detail.enabled {
        let d = fbm_noise(&g, &p.detail.noise(), tag::DETAIL);
        apply_detail(&mut base, &d, &p.detail);
    }
    let (biomes, roughness, sandiness) = biome_blend(&mut base, &g, &p.biomes, tag::BIOME);
    apply_shaping_curve(&mut base, &p.shaping_curve);
    let mask = crate::shape::shape_mask(p)?;
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

/// The [`Stage::Erosion`] stage: [`erode`] with the island's settings (sea level 0, the
/// island seed), in place. Shared with the GPU backend, which runs it on the CPU.
///
/// The VOLCANIC outline's cone ([`crate::shape::apply_relief`]) is raised first, so that the
/// erosion carves it, and its crater dug after the erosion ([`crate::shape::dig_crater`]) but
/// before the sculpt layer's samples get their shapes back ([`crate::sculpt::hold_erosion`]):
/// a stamp, a ridge or a canal in the caldera wins over it (a plateau keeps its level; a raised
/// shape follows the crater floor around it as it follows the erosion).
pub fn erosion_stage(p: &IslandParams, heights: &mut [f32]) -> ErosionReport {
    crate::shape::apply_relief(p, heights);
    let before = sculpt_relief(p, heights);
    let settings = crate::erosion::ErosionSettings {
        sea_level: 0.0,
        ..p.erosion.clone()
    };
    let report = erode(
        heights,
        p.resolution as usize,
        p.spacing(),
        &settings,
        p.seed,
    );
    crate::shape::dig_crater(p, heights);
    if let (Some(before), Some(l)) = (before, p.sculpt.as_deref()) {
        crate::sculpt::hold_erosion(l, &before, heights, p.resolution as usize, p.world_size);
    }
    report
}

/// The parameters the erosion and drainage stages get when the island has ridges or canals
/// ([`IslandParams::paths`]): its sculpt layer with them written in ([`crate::paths::resolve`]).
/// `None` without (the stages then take `p` itself).
pub fn with_paths(p: &IslandParams) -> Result<Option<IslandParams>, ParamError> {
    let Some(set) = p.paths.as_deref().filter(|s| {
        s.paths
            .iter()
            .any(|q| matches!(q.kind, PathKind::Ridge | PathKind::Canal))
    }) else {
        return Ok(None);
    };
    let layer = crate::paths::resolve(
        p.sculpt.as_deref(),
        set,
        p.resolution as usize,
        p.world_size,
    )
    .map_err(path_error)?;
    Ok(Some(IslandParams {
        sculpt: Some(std::sync::Arc::new(layer)),
        ..p.clone()
    }))
}

/// The river courses ([`PathKind::River`], between the erosion and the drainage) or the roads
/// ([`PathKind::Road`], after the drainage, given its `water`) of [`IslandParams::paths`] laid
/// on `heights` ([`crate::paths::lay`]).
pub fn lay_paths(
    p: &IslandParams,
    kind: PathKind,
    heights: &mut [f32],
    water: Option<&Water>,
) -> Result<(), ParamError> {
    match p.paths.as_deref() {
        Some(set) => crate::paths::lay(
            set,
            kind,
            heights,
            water,
            p.resolution as usize,
            p.world_size,
        )
        .map_err(path_error),
        None => Ok(()),
    }
}

fn path_error(e: crate::paths::PathError) -> ParamError {
    ParamError {
        field: "paths".into(),
        message: e.0,
    }
}

/// The sculpt layer's relief edits on `heights` (before the erosion, see [`erosion_stage`]),
/// and the heights then, for [`crate::sculpt::hold_erosion`] after it; `None` without edits.
pub fn sculpt_relief(p: &IslandParams, heights: &mut [f32]) -> Option<Vec<f32>> {
    let l = p.sculpt.as_deref()?;
    crate::sculpt::apply_relief(l, heights, p.resolution as usize, p.world_size);
    Some(heights.to_vec())
}

/// The samples the sculpt layer holds, with their heights now (see [`crate::sculpt::Held`]);
/// `None` without edits.
pub fn sculpt_held(p: &IslandParams, heights: &[f32]) -> Option<crate::sculpt::Held> {
    let l = p.sculpt.as_deref()?;
    Some(crate::sculpt::Held::capture(
        l,
        heights,
        p.resolution as usize,
        p.world_size,
    ))
}

/// Rivers and lakes of an island, as summed up in [`Stats`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HydroStats {
    /// [`Stats::river_count`].
    pub river_count: u32,
    /// [`Stats::river_length_m`].
    pub river_length_m: f32,
    /// [`Stats::lake_count`].
    pub lake_count: u32,
    /// [`Stats::lake_area_m2`].
    pub lake_area_m2: f32,
}

impl HydroStats {
    /// `stats` with these fields filled in.
    pub fn apply(self, stats: Stats) -> Stats {
        Stats {
            river_count: self.river_count,
            river_length_m: self.river_length_m,
            lake_count: self.lake_count,
            lake_area_m2: self.lake_area_m2,
            ..stats
        }
    }
}

/// What the [`Stage::Drainage`] stage produced besides the heights.
#[derive(Clone, Debug)]
pub struct Hydrology {
    /// Sea, lakes and rivers per sample.
    pub water: Water,
    /// Their counts and sizes.
    pub stats: HydroStats,
}

/// The [`Stage::Drainage`] stage: [`crate::drainage::drainage`] of `heights` (sea level 0), then
/// [`carve_rivers`] (pits are filled in every mode; channels only in [`RiverMode::Flow`]), then
/// the water map of the result ([`hydrology`]).
///
/// Water: [`SEA`] (level 0) where the ground is below sea level and connected to the map
/// border through such samples; [`LAKE`] for the drainage's lakes (flat level at their spill
/// height) and for closed basins below sea level (level 0: the drainage treats them as outlets,
/// like the sea; counted in [`Stats::lake_count`] and [`Stats::lake_area_m2`] only when at least
/// `lake_min_area` large, smaller ones are shore puddles); [`RIVER`] for the flow rivers, at their bankfull surface (the ground before
/// carving, never below the bed, never rising downstream).
pub fn drainage_stage(p: &IslandParams, heights: &mut [f32]) -> Hydrology {
    let n = p.resolution as usize;
    let spacing = p.spacing();
    // The sculpted samples keep their heights: no dam, no channel through them.
    let held = sculpt_held(p, heights);
    crate::basins::dig_lake_basins(heights, n, spacing, 0.0, &p.basins, p.seed);
    // The stage reads only some of the drainage's maps: the others are never made.
    let d = drainage_lean(heights, n, spacing, 0.0, &p.drainage);
    carve_rivers(heights, &d, &carve_settings(p));
    if let Some(h) = held {
        h.restore(heights);
    }
    let mut hy = hydrology(p, heights, &d);
    if let Some(set) = p.paths.as_deref() {
        crate::paths::finish_rivers(set, heights, &mut hy.water, n, p.world_size, RIVER_FILL);
    }
    hy
}

/// The [`carve_rivers`] settings of the [`Stage::Drainage`] stage: the island's, channels only
/// in [`RiverMode::Flow`].
pub fn carve_settings(p: &IslandParams) -> crate::channels::CarveSettings {
    crate::channels::CarveSettings {
        enabled: p.river.mode == RiverMode::Flow && p.channels.enabled,
        ..p.channels.clone()
    }
}

/// The end of the [`Stage::Drainage`] stage: the water map and statistics of the carved
/// `heights` with their drainage `d` (see [`drainage_stage`]). The GPU backend runs the stage's
/// steps before this one on the GPU (the dams excepted) and this one on the CPU.
pub fn hydrology(p: &IslandParams, heights: &[f32], d: &Drainage) -> Hydrology {
    water_map(
        heights,
        d,
        p.river.mode == RiverMode::Flow,
        carve_settings(p).enabled,
        p.drainage.lake_min_area,
        crate::shape::lagoon_sample(p),
        false,
    )
}

/// Water map and statistics of carved `heights` with drainage `d` (see [`drainage_stage`]).
/// `components` finds the closed basins below sea level as components of their own even where
/// the sea's components give them (the tests compare both; the pipeline passes `false`).
fn water_map(
    heights: &[f32],
    d: &Drainage,
    rivers: bool,
    carved: bool,
    min_lake_area: f32,
    lagoon: Option<usize>,
    components: bool,
) -> Hydrology {
    let n = d.n;
    let len = n * n;
    let cell = d.spacing * d.spacing;
    // Sea: below sea level and connected to the map border (8-connected components by row
    // runs, `crate::runs`); an atoll's lagoon (closed by the reef) is sea too, at sea level.
    let below = |i: usize| heights[i] < 0.0 || heights[i].is_nan();
    let sea = Runs::new(n, below);
    let mut is_sea = vec![false; sea.len()];
    for r in sea.border_roots() {
        is_sea[r] = true;
    }
    if let Some(r) = lagoon.and_then(|l| sea.run_of(l)) {
        is_sea[sea.root(r)] = true;
    }
    // The sea at level 0, the drainage's lakes at theirs, the rest dry: rows in parallel.
    let mut kind: Vec<u8> = crate::memory::with_capacity(len);
    let mut level: Vec<f32> = crate::memory::with_capacity(len);
    let lake_samples: usize = kind.spare_capacity_mut()[..len]
        .par_chunks_mut(n)
        .zip(level.spare_capacity_mut()[..len].par_chunks_mut(n))
        .enumerate()
        .with_max_len(crate::grid::MAX_ROWS_PER_TASK)
        .map(|(z, (krow, lrow))| {
            let mut lakes = 0;
            krow.fill(std::mem::MaybeUninit::new(DRY));
            lrow.fill(std::mem::MaybeUninit::new(f32::NAN));
            // The lake samples, eight at a time past stretches without any.
            let ids = &d.lake_id[z * n..(z + 1) * n];
            for (c, chunk) in ids.chunks(8).enumerate() {
                if chunk.iter().all(|&id| id == NONE) {
                    continue;
                }
                for (j, &id) in chunk.iter().enumerate() {
                    if id != NONE {
                        krow[c * 8 + j].write(LAKE);
                        lrow[c * 8 + j].write(d.lakes[id as usize].level);
                        lakes += 1;
                    }
                }
            }
            for r in sea.row(z) {
                if is_sea[sea.root(r)] {
                    let (x0, x1) = sea.span(r);
                    krow[x0..x1].fill(std::mem::MaybeUninit::new(SEA));
                    lrow[x0..x1].fill(std::mem::MaybeUninit::new(0.0));
                }
            }
            lakes
        })
        .sum();
    // SAFETY: every element below `len` of both was written just above (capacity >= len).
    unsafe {
        kind.set_len(len);
        level.set_len(len);
    }
    // Closed basins below sea level (dry, outside the sea and the lakes): water at sea level;
    // counted as a lake when as large as a lake must be (smaller ones are shore puddles).
    // When no lake sample lies in them (the drainage takes every sample below sea level as an
    // outlet, which is never raised; only the river carving could lower a lake sample there),
    // they are exactly `sea`'s components that are not sea: sized from its runs, without
    // finding the components of the whole map again.
    let own_components = components
        || (0..n).into_par_iter().any(|z| {
            sea.row(z).any(|r| {
                let (x0, x1) = sea.span(r);
                !is_sea[sea.root(r)]
                    && d.lake_id[z * n + x0..z * n + x1]
                        .iter()
                        .any(|&id| id != NONE)
            })
        });
    let (basins, lake_samples) = if own_components {
        drop(sea);
        closed_basins(
            &mut kind,
            &mut level,
            n,
            cell,
            min_lake_area,
            lake_samples,
            below,
        )
    } else {
        let basin = |r: usize| !is_sea[sea.root(r)];
        let (basins, samples) = basin_sizes(&sea, basin, cell, min_lake_area);
        fill_basins(&mut kind, &mut level, &sea, basin);
        drop(sea);
        (basins, lake_samples + samples)
    };
    let mut stats = HydroStats {
        lake_count: d.lakes.len() as u32 + basins,
        lake_area_m2: lake_samples as f32 * cell,
        ..Default::default()
    };
    if rivers && !d.rivers.is_empty() {
        let mut length = 0.0f64;
        let mut mouths = 0u32;
        // Downstream first: each river sample's receiver is set before it.
        for r in &d.rivers {
            let i = r.index as usize;
            let rc = d.receivers[i] as usize;
            let (dx, dz) = ((i % n).abs_diff(rc % n), (i / n).abs_diff(rc / n));
            length += (((dx * dx + dz * dz) as f32).sqrt() * d.spacing) as f64;
            // In a carved channel the water stands RIVER_FILL of the channel depth above the
            // bed; without a channel it is a film on the ground.
            let mut surface = if carved {
                heights[i] + RIVER_FILL * r.depth
            } else {
                d.filled[i].max(heights[i])
            };
            if kind[rc] == RIVER {
                surface = surface.max(level[rc]);
            } else {
                mouths += 1;
            }
            if kind[i] == DRY {
                kind[i] = RIVER;
                level[i] = surface;
            }
        }
        if carved {
            crate::river_spread::spread_rivers(heights, d, &mut kind, &mut level);
        }
        stats.river_count = mouths;
        stats.river_length_m = length as f32;
    }
    Hydrology {
        water: Water {
            resolution: n,
            level,
            kind,
        },
        stats,
    }
}

/// [`water_map`]'s closed basins found as the components of the dry samples below sea level:
/// marked as lakes at level 0; returns the number of basins as large as a lake and the lake
/// sample count `lake_samples` plus their samples.
fn closed_basins(
    kind: &mut [u8],
    level: &mut [f32],
    n: usize,
    cell: f32,
    min_lake_area: f32,
    lake_samples: usize,
    below: impl Fn(usize) -> bool + Sync,
) -> (u32, usize) {
    let closed = Runs::new(n, |i| kind[i] == DRY && below(i));
    let (basins, samples) = basin_sizes(&closed, |_| true, cell, min_lake_area);
    fill_basins(kind, level, &closed, |_| true);
    (basins, lake_samples + samples)
}

/// The components of `runs` whose runs are `basin`: how many are at least `min_lake_area`
/// (`cell` m² per sample) and their samples.
fn basin_sizes(
    runs: &Runs,
    basin: impl Fn(usize) -> bool,
    cell: f32,
    min_lake_area: f32,
) -> (u32, usize) {
    let mut size = vec![0usize; runs.len()];
    for z in 0..runs.n() {
        for r in runs.row(z) {
            if basin(r) {
                let (x0, x1) = runs.span(r);
                size[runs.root(r)] += x1 - x0;
            }
        }
    }
    let (mut basins, mut samples) = (0u32, 0usize);
    for (r, &s) in size.iter().enumerate() {
        if runs.root(r) == r && basin(r) && s as f32 * cell >= min_lake_area {
            basins += 1;
            samples += s;
        }
    }
    (basins, samples)
}

/// Mark the runs of `runs` that are `basin` as lakes at level 0.
fn fill_basins(
    kind: &mut [u8],
    level: &mut [f32],
    runs: &Runs,
    basin: impl Fn(usize) -> bool + Sync,
) {
    let n = runs.n();
    kind.par_chunks_mut(n)
        .zip(level.par_chunks_mut(n))
        .enumerate()
        .with_max_len(crate::grid::MAX_ROWS_PER_TASK)
        .for_each(|(z, (krow, lrow))| {
            for r in runs.row(z) {
                if basin(r) {
                    let (x0, x1) = runs.span(r);
                    krow[x0..x1].fill(LAKE);
                    lrow[x0..x1].fill(0.0);
                }
            }
        });
}

/// Share of a carved channel's depth that holds water (the rest is freeboard below the banks).
pub const RIVER_FILL: f32 = 0.7;

#[cfg(test)]
mod tests {
    use super::*;

    /// The closed basins below sea level taken from the sea's components give the water map and
    /// statistics of finding them as components of their own, on islands of every shape (the
    /// default ones have shore puddles below sea level, the atoll its lagoon), and islands
    /// with basins as large as lakes are among them.
    #[test]
    fn closed_basins_from_the_sea_components_equal_their_own_components() {
        let mut with_basins = 0;
        for (k, &shape) in crate::params::IslandShape::ALL.iter().enumerate() {
            for seed in [1u64, 7] {
                let mut p = IslandParams {
                    resolution: 257,
                    seed: seed + k as u64,
                    ..Default::default()
                };
                p.shape.shape = shape;
                p.drainage.lake_min_area = 4.0 * p.spacing() * p.spacing();
                let mut h = raw_heights(&p).unwrap();
                erosion_stage(&p, &mut h);
                let n = p.resolution as usize;
                // A pit below sea level around the highest sample (closed by the land around
                // it) on one island of two.
                if seed == 7 {
                    let top = (0..n * n).max_by(|&a, &b| h[a].total_cmp(&h[b])).unwrap();
                    let (x, z) = (top % n, top / n);
                    for zz in z.saturating_sub(3)..(z + 4).min(n) {
                        for xx in x.saturating_sub(3)..(x + 4).min(n) {
                            h[zz * n + xx] = -2.0;
                        }
                    }
                }
                crate::basins::dig_lake_basins(&mut h, n, p.spacing(), 0.0, &p.basins, p.seed);
                let d = drainage_lean(&h, n, p.spacing(), 0.0, &p.drainage);
                carve_rivers(&mut h, &d, &carve_settings(&p));
                let lagoon = crate::shape::lagoon_sample(&p);
                let run = |components| {
                    water_map(
                        &h,
                        &d,
                        true,
                        true,
                        p.drainage.lake_min_area,
                        lagoon,
                        components,
                    )
                };
                let (fast, own) = (run(false), run(true));
                assert_eq!(fast.water.kind, own.water.kind, "{shape:?} seed {seed}");
                let bits = |w: &Water| w.level.iter().map(|l| l.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&fast.water), bits(&own.water), "{shape:?} seed {seed}");
                assert_eq!(fast.stats, own.stats, "{shape:?} seed {seed}");
                with_basins += (own.stats.lake_count > d.lakes.len() as u32) as u32;
            }
        }
        assert!(
            with_basins > 0,
            "no island had a closed basin as large as a lake"
        );
    }
}
