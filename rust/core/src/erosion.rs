//! Landscape evolution: fluvial incision, sediment deposition and hillslope relaxation.
//!
//! # Model
//!
//! Each time step, on the depression-filled surface of [`crate::drainage`]:
//!
//! 1. **Fluvial incision**, the stream-power law `∂h/∂t = −K·A^m·S` (`n = 1`) where the
//!    drainage area passes [`ErosionSettings::channel_area`] (channel heads), solved
//!    implicitly over the flow order: Braun & Willett 2013, "A very efficient O(n), implicit and
//!    parallel method to solve the stream power equation governing fluvial incision and
//!    landscape evolution", Geomorphology 180–181. With receivers updated before their donors,
//!    `h_i ← (h_i + F·h_r) / (1 + F)` with `F = K·Δt·A_i^m / Δx_ir` is exact for the implicit
//!    step, costs O(n) and is unconditionally stable, so a whole island evolves in ten large
//!    steps (default). An explicit scheme would need a CFL-limited step (`Δt < Δx / (K·A^m)`,
//!    thousands of steps near the river mouths); the multigrid / FFT alternatives do not follow
//!    the drainage network. `n = 1` keeps the step linear (no Newton iteration); the sea
//!    (at sea level, never below) and the map border are the base level.
//!
//!    Flow directions are drawn each step among the downhill neighbours with probability
//!    proportional to slope (hashed from the seed, deterministic): averaged over the steps this
//!    behaves like multiple-flow routing and avoids the straight grid-aligned valleys of D8.
//! 2. **Deposition**, the sediment term of Yuan et al. 2019 ("A new efficient method to solve
//!    the stream power law model taking into account sediment deposition", JGR Earth Surface
//!    124): `∂h/∂t = … + (G/A)·Qs`, with `Qs` the sediment flux from upstream. Solved for the
//!    deposit `d` of each sample given what arrives (upstream first), `d = G·Q / (A + G·a)`
//!    (`Q` the sediment arriving plus what the sample eroded, `a` the sample's area). Valley
//!    floors of large rivers aggrade and flatten, fans build where rivers leave steep ground;
//!    closed depressions trap all they can hold (they fill up to their spill height); what
//!    reaches the sea leaves the island (the sea floor is not changed, so the coastline keeps
//!    its shape).
//! 3. **Hillslopes**: linear creep (diffusion, [`ErosionSettings::smoothing`]) and thermal
//!    relaxation to the talus angle: every pair of neighbours steeper than `tan(talus)`
//!    exchanges a share of the excess height (symmetric, mass-conserving, Jacobi-style so it
//!    runs in parallel with identical results on any thread count). Both act between land
//!    samples only: the sea floor stays as it is.
//!
//! # Kernels
//!
//! A step is [`depression_fill`], [`flat_routing`], [`flow_receivers`], [`flow_order`],
//! [`flow_accumulation`], [`stream_power`], [`deposition`] and [`THERMAL_PASSES`] ×
//! [`thermal`]; around the steps, [`resample`] and [`upsample_delta`]. The GPU backend
//! (`island_gpu`, `shaders/erosion.wgsl`, `shaders/depression.wgsl`) has a pass of the same
//! name for each, pinned to it by a parity test, except [`flow_order`]: its sequential kernels
//! have order-free parallel formulations there.
//!
//! # Resolution
//!
//! The evolution runs on a coarse grid ([`ErosionSettings::resolution`] samples per side,
//! bilinear resampling); the height *change* is upsampled (bicubic) and added back to the
//! full-resolution land samples (the sea floor is left as it is), so fine detail survives and
//! the cost hardly grows with the output resolution (criterion, 2-core VM: about 26 ms at
//! 1025² and 34 ms at 4097² when the machine was quiet). Drainage and rivers then run at full
//! resolution on the result.

use crate::det_math;
use crate::drainage::{
    accumulate, for_neighbours, is_sea, receivers_by_rows, row_neighbours, NEIGHBOURS, NONE,
};
pub use crate::drainage::{depression_fill, flat_routing, flow_order};
use crate::hash::{hash_u32, stage_seed, unit};
use rayon::prelude::*;
use std::mem::MaybeUninit;

use crate::schema::{check_all, Check, ParamSpec, Slider, Value};

/// Default [`ErosionSettings::amount`].
pub const DEFAULT_AMOUNT: f32 = 0.5;
/// Default [`ErosionSettings::erodibility`].
pub const DEFAULT_ERODIBILITY: f32 = 6.0;
/// Default [`ErosionSettings::m_exponent`].
pub const DEFAULT_M_EXPONENT: f32 = 0.5;
/// Default [`ErosionSettings::channel_area`], m².
pub const DEFAULT_CHANNEL_AREA: f32 = 100.0;
/// Default [`ErosionSettings::deposition`].
pub const DEFAULT_DEPOSITION: f32 = 1.0;
/// Default [`ErosionSettings::talus_angle`], degrees.
pub const DEFAULT_TALUS_ANGLE: f32 = 33.0;
/// Default [`ErosionSettings::smoothing`].
pub const DEFAULT_SMOOTHING: f32 = 0.5;
/// Default [`ErosionSettings::steps`].
pub const DEFAULT_STEPS: u32 = 10;
/// Default [`ErosionSettings::resolution`].
pub const DEFAULT_RESOLUTION: u32 = 257;
/// Thermal relaxation passes per time step.
pub const THERMAL_PASSES: u32 = 2;
/// Share of the excess height a pair of samples exchanges per pass (≤ 1/16 keeps the Jacobi
/// update from overshooting with eight neighbours).
pub const THERMAL_RATE: f32 = 1.0 / 16.0;
/// Laplacian smoothing share per pass at `smoothing = 1` (≤ 1/12 keeps it stable with the
/// 8-neighbour weights 1 and ½).
const SMOOTH_RATE: f32 = 1.0 / 12.0;
/// Cell size (metres) at which [`ErosionSettings::smoothing`] is a share of [`SMOOTH_RATE`]
/// per pass (the default evolution grid of the default island).
const SMOOTH_REF_DX: f32 = 4.0;
/// Stage tag of the erosion's random flow directions (see [`crate::hash::tag`]).
const EROSION_TAG: u32 = 0x4552_4f44;

/// Settings of [`erode`].
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ErosionSettings {
    /// Whether [`erode`] changes anything. Default true.
    pub enabled: bool,
    /// Age of the landscape, 0..=1: 0 leaves the terrain as it is, 1 is a deeply dissected,
    /// old island. Default 0.5.
    pub amount: f32,
    /// `K·T`, stream-power erodibility times the duration at `amount = 1`,
    /// m^(1−2m) (dimensionless for `m = 0.5`), 0..=100. A knickpoint travels about
    /// `K·T·A^m / (1 + deposition)` metres up a river draining `A` m². Default 6.
    pub erodibility: f32,
    /// Drainage-area exponent `m` of the stream-power law (`n = 1`), 0.2..=0.8; it sets the
    /// concavity of river profiles (Flint's law `S ∝ A^−m`). Default 0.5.
    pub m_exponent: f32,
    /// Drainage area below which a sample is hillslope, m², 0..=1e6: rivers incise only where
    /// more drains through; hilltops and ridges are shaped by creep and talus alone, so the
    /// peaks keep most of their height. Default 100.
    pub channel_area: f32,
    /// Deposition coefficient `G` of Yuan et al. 2019, 0..=10: 0 = detachment-limited (all
    /// sediment leaves), 1 = about half of it settles on the way, larger = flatter, aggraded
    /// valley floors. Default 1.
    pub deposition: f32,
    /// Talus angle of the hillslopes, degrees, 5..=80: steeper slopes relax to it.
    /// Default 33.
    pub talus_angle: f32,
    /// Hillslope creep (linear diffusion) per time step, 0..=1: rounds hilltops and softens
    /// the grid pattern of the flow directions. Default 0.5.
    pub smoothing: f32,
    /// Implicit time steps, 1..=500. Default 10.
    pub steps: u32,
    /// Samples per side of the grid the evolution runs on, 33..=4097 (capped at the input
    /// resolution). Default 257 (4 m cells on the default 1024 m island).
    pub resolution: u32,
    /// Sea level, metres: the base level. Default 0.
    pub sea_level: f32,
}

impl Default for ErosionSettings {
    fn default() -> Self {
        ErosionSettings {
            enabled: true,
            amount: DEFAULT_AMOUNT,
            erodibility: DEFAULT_ERODIBILITY,
            m_exponent: DEFAULT_M_EXPONENT,
            channel_area: DEFAULT_CHANNEL_AREA,
            deposition: DEFAULT_DEPOSITION,
            talus_angle: DEFAULT_TALUS_ANGLE,
            smoothing: DEFAULT_SMOOTHING,
            steps: DEFAULT_STEPS,
            resolution: DEFAULT_RESOLUTION,
            sea_level: 0.0,
        }
    }
}

impl ErosionSettings {
    /// The parameters' schema ([`crate::schema`]).
    pub const PARAMS: &'static [ParamSpec<ErosionSettings>] = &[
        ParamSpec::boolean("enabled", true, "Whether the landscape evolution runs.", |s: &Self| Value::Bool(s.enabled))
            .property("erosion_enabled"),
        ParamSpec::float("amount", DEFAULT_AMOUNT, Check::Range(0.0, 1.0), "", "Age of the landscape: 0 as generated, 1 deeply dissected.", |s: &Self| Value::Float(s.amount))
            .slider("erosion_amount", Slider::new(0.0, 1.0).step(0.01)),
        ParamSpec::float("erodibility", DEFAULT_ERODIBILITY, Check::Range(0.0, 100.0), "", "Stream-power erodibility × duration (K·T): how far valleys cut back into the hills.", |s: &Self| Value::Float(s.erodibility))
            .slider("erosion_erodibility", Slider::new(0.0, 100.0).step(0.1)),
        ParamSpec::float("m_exponent", DEFAULT_M_EXPONENT, Check::Range(0.2, 0.8), "", "Drainage-area exponent `m` of the stream-power law: the concavity of river profiles (not exposed by the node).", |s: &Self| Value::Float(s.m_exponent)),
        ParamSpec::float("channel_area", DEFAULT_CHANNEL_AREA, Check::Range(0.0, 1.0e6), "m²", "Drainage area below which a sample is hillslope (no river incision).", |s: &Self| Value::Float(s.channel_area))
            .slider("erosion_channel_area", Slider::new(0.0, 100000.0).or_greater().suffix("m²")),
        ParamSpec::float("deposition", DEFAULT_DEPOSITION, Check::Range(0.0, 10.0), "", "Sediment deposition: 0 all sediment leaves, larger = flatter, aggraded valley floors.", |s: &Self| Value::Float(s.deposition))
            .slider("erosion_deposition", Slider::new(0.0, 10.0).step(0.05)),
        ParamSpec::float("talus_angle", DEFAULT_TALUS_ANGLE, Check::Range(5.0, 80.0), "°", "Steeper hillslopes relax to this angle.", |s: &Self| Value::Float(s.talus_angle))
            .slider("erosion_talus_angle", Slider::new(5.0, 80.0).step(0.5).suffix("°")),
        ParamSpec::float("smoothing", DEFAULT_SMOOTHING, Check::Range(0.0, 1.0), "", "Hillslope creep per time step (rounds hilltops).", |s: &Self| Value::Float(s.smoothing))
            .slider("erosion_smoothing", Slider::new(0.0, 1.0).step(0.01)),
        ParamSpec::int("steps", DEFAULT_STEPS as i64, Check::Range(1.0, 500.0), "", "Implicit time steps.", |s: &Self| Value::Int(s.steps as i64))
            .slider("erosion_steps", Slider::new(1.0, 500.0)),
        ParamSpec::int("resolution", DEFAULT_RESOLUTION as i64, Check::Range(33.0, 4097.0), "samples", "Samples per side of the evolution grid (capped at the resolution); the change is upsampled.", |s: &Self| Value::Int(s.resolution as i64))
            .slider("erosion_resolution", Slider::new(33.0, 4097.0)),
        ParamSpec::float("sea_level", 0.0, Check::Range(-1.0e4, 1.0e4), "m", "Base level of the evolution; the pipeline ignores it (its sea level is 0; not exposed by the node).", |s: &Self| Value::Float(s.sea_level)),
    ];

    /// Check every field ([`ErosionSettings::PARAMS`]); the first problem found is returned.
    pub fn validate(&self) -> Result<(), String> {
        check_all(Self::PARAMS, self).map_err(|e| format!("erosion: {} {}", e.field, e.message))
    }
}

/// What [`erode`] did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ErosionReport {
    /// Time steps run (0 when disabled or `amount` is 0).
    pub steps: u32,
    /// Samples per side of the grid the evolution ran on.
    pub resolution: u32,
    /// Volume removed by rivers, m³ (on the evolution grid).
    pub eroded_volume: f64,
    /// Volume of sediment deposited on land and in lakes, m³.
    pub deposited_volume: f64,
    /// Volume of sediment carried into the sea, m³ (it leaves the island).
    pub exported_volume: f64,
    /// Largest lowering of a sample of the evolution grid, metres.
    pub max_lowering: f32,
    /// Largest raising of a sample of the evolution grid (deposits), metres.
    pub max_raising: f32,
}

/// What [`erode`] runs, derived from its settings: the evolution grid, the number of steps and
/// the parameters every per-step kernel takes. Shared with the GPU backend (`island_gpu`), whose
/// passes mirror the kernels below by name.
#[derive(Clone, Debug)]
pub struct ErosionPlan {
    /// Samples per side of the evolution grid.
    pub nc: usize,
    /// Implicit time steps.
    pub steps: u32,
    /// Parameters of the per-step kernels.
    pub params: StepParams,
}

/// The plan of [`erode`] for an `n × n` grid `spacing` metres apart, or `None` when erosion
/// changes nothing (disabled, `amount` 0, no erodibility, or `n < 3`).
pub fn erosion_plan(
    n: usize,
    spacing: f32,
    settings: &ErosionSettings,
    seed: u64,
) -> Option<ErosionPlan> {
    let s = settings;
    let amount = s.amount.clamp(0.0, 1.0);
    if !s.enabled || amount == 0.0 || n < 3 || s.erodibility.is_nan() || s.erodibility <= 0.0 {
        return None;
    }
    let nc = (s.resolution.clamp(33, 4097) as usize).min(n);
    let steps = s.steps.clamp(1, 500);
    let dx = spacing * (n - 1) as f32 / (nc - 1) as f32;
    let params = StepParams {
        kdt: s.erodibility.min(100.0) * amount / steps as f32,
        g: s.deposition.clamp(0.0, 10.0),
        talus: det_math::tan(s.talus_angle.clamp(5.0, 80.0).to_radians()),
        sea: s.sea_level,
        dx,
        pow_count: {
            let m = s.m_exponent.clamp(0.2, 0.8);
            let ca = dx * dx;
            let channel_area = s.channel_area.clamp(0.0, 1.0e6);
            (0..=nc * nc)
                .into_par_iter()
                .map(|k| {
                    let a = k as f32 * ca;
                    if a < channel_area {
                        0.0
                    } else {
                        det_math::powf(a, m)
                    }
                })
                .collect()
        },
        // Creep is a diffusion: the same physical diffusivity is a smaller share per pass on
        // coarser cells (∝ 1/Δx²); capped at the stable share on finer ones.
        smooth: SMOOTH_RATE * s.smoothing.clamp(0.0, 1.0) * {
            let r = SMOOTH_REF_DX / dx;
            (r * r).min(1.0)
        },
        seed: stage_seed(seed, EROSION_TAG),
    };
    Some(ErosionPlan { nc, steps, params })
}

/// Erode `heights` (metres, `n × n` row-major, `spacing` metres apart) in place; see the
/// [module documentation](self). `seed` draws the flow directions (see the routing note under
/// incision in the module documentation); the result is deterministic, the same bits on any
/// rayon thread count. Invalid settings (see [`ErosionSettings::validate`]) are clamped.
pub fn erode(
    heights: &mut [f32],
    n: usize,
    spacing: f32,
    settings: &ErosionSettings,
    seed: u64,
) -> ErosionReport {
    assert_eq!(heights.len(), n * n, "heights must hold n² samples");
    let Some(ErosionPlan { nc, steps, params }) = erosion_plan(n, spacing, settings, seed) else {
        return ErosionReport::default();
    };
    let original = if nc == n {
        heights.to_vec()
    } else {
        resample(heights, n, nc)
    };
    let mut h = original.clone();
    let mut report = ErosionReport {
        steps,
        resolution: nc as u32,
        ..Default::default()
    };
    let mut scratch = vec![0.0f32; nc * nc];
    for k in 0..steps {
        step(&mut h, &mut scratch, nc, &params, k, &mut report);
    }
    // Height change back to the input resolution.
    let delta: Vec<f32> = h.par_iter().zip(&original).map(|(&a, &b)| a - b).collect();
    finish_report(&mut report, &delta);
    if nc == n {
        heights.copy_from_slice(&h);
    } else {
        upsample_delta(heights, n, &delta, nc, settings.sea_level);
    }
    report
}

/// `max_lowering` and `max_raising` of `report` from the height change of the evolution grid.
pub fn finish_report(report: &mut ErosionReport, delta: &[f32]) {
    let (lo, hi) = delta
        .iter()
        .fold((0.0f32, 0.0f32), |(lo, hi), &d| (lo.min(d), hi.max(d)));
    report.max_lowering = -lo;
    report.max_raising = hi;
}

/// Parameters of the per-step kernels (see [`erosion_plan`]).
#[derive(Clone, Debug)]
pub struct StepParams {
    /// `(k · a)^m` for a sample count `k` (`a` the sample area), `k = 0..=nc²`.
    pub pow_count: Vec<f32>,
    /// Creep share per thermal pass.
    pub smooth: f32,
    /// Stage seed of the random flow directions.
    pub seed: u32,
    /// Erodibility times the time step.
    pub kdt: f32,
    /// Deposition coefficient `G`.
    pub g: f32,
    /// Tangent of the talus angle.
    pub talus: f32,
    /// Sea level (the base level).
    pub sea: f32,
    /// Cell size of the evolution grid, metres.
    pub dx: f32,
}

impl StepParams {
    /// Seed of [`flow_receivers`] for time step `k` (0-based).
    pub fn step_seed(&self, k: u32) -> u32 {
        hash_u32(self.seed ^ hash_u32(k.wrapping_add(1)))
    }

    /// `A^m` of a drainage area (a whole multiple of the sample area), 0 below the channel
    /// area: a table lookup by sample count.
    #[inline]
    pub fn pow_area(&self, a: f32) -> f32 {
        let ca = self.dx * self.dx;
        self.pow_count[((a / ca + 0.5) as usize).min(self.pow_count.len() - 1)]
    }
}

/// Volumes one [`deposition`] call moved, m³.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SedimentBudget {
    /// Removed by incision.
    pub eroded: f64,
    /// Deposited on land and in depressions.
    pub deposited: f64,
    /// Carried into the sea.
    pub exported: f64,
}

/// One implicit time step on the evolution grid: [`depression_fill`], [`flat_routing`],
/// [`flow_receivers`], [`flow_order`], [`flow_accumulation`], [`stream_power`],
/// [`deposition`], then [`THERMAL_PASSES`] ×
/// [`thermal`]. `k` is the 0-based step index.
fn step(
    h: &mut [f32],
    scratch: &mut [f32],
    n: usize,
    p: &StepParams,
    k: u32,
    report: &mut ErosionReport,
) {
    let filled = depression_fill(h, n, p.sea);
    let rcv = flow_receivers_with_flats(&filled, n, p.sea, h, p.step_seed(k));
    let old = &mut *scratch;
    old.copy_from_slice(h);
    let b = fluvial(h, old, &filled, &rcv, n, p);
    report.eroded_volume += b.eroded;
    report.deposited_volume += b.deposited;
    report.exported_volume += b.exported;
    for _ in 0..THERMAL_PASSES {
        scratch.copy_from_slice(h);
        thermal(h, scratch, n, p);
    }
}

/// Root-index span of the groups of drainage trees [`fluvial`] handles as one task: fixed (not
/// derived from the thread count), so the volumes it sums per group are the same on any number
/// of threads.
const FLUVIAL_SPAN: usize = 1 << 13;

/// [`flow_order`], [`flow_accumulation`], [`stream_power`] and [`deposition`] of one step, with
/// the same heights bit for bit: `old` holds the heights before the step. The drainage trees
/// share no sample (their outlets, which none of these kernels changes, are outside them), and
/// each kernel only combines a sample with its receiver and donors, so groups of trees (those
/// whose first sample lies in one span of [`FLUVIAL_SPAN`] indices) go through all four in one
/// parallel task, in the order the sequential kernels visit their samples. Areas and sediment
/// are held by walk position within the group. The volumes are summed per group, then over the
/// groups in index order: a different rounding of the same sums than [`deposition`]'s.
fn fluvial(
    h: &mut [f32],
    old: &[f32],
    filled: &[f32],
    rcv: &[u32],
    n: usize,
    p: &StepParams,
) -> SedimentBudget {
    use std::sync::atomic::Ordering::Relaxed;
    let len = n * n;
    let ca = p.dx * p.dx;
    // Each sample is written only by the task owning its tree and read only by that task (as a
    // receiver) or as an outlet, which no task writes: relaxed loads and stores are plain moves.
    let hs = crate::flats::as_atomic_u32(bytemuck::cast_slice_mut(h));
    let get = |i: usize| f32::from_bits(hs[i].load(Relaxed));
    let set = |i: usize, v: f32| hs[i].store(v.to_bits(), Relaxed);
    let budgets: Vec<SedimentBudget> = (0..len.div_ceil(FLUVIAL_SPAN))
        .into_par_iter()
        .map(|g| {
            let roots = g * FLUVIAL_SPAN..((g + 1) * FLUVIAL_SPAN).min(len);
            let (mut order, mut at) = (Vec::new(), Vec::new());
            crate::drainage::walk_trees(rcv, n, roots, &mut Vec::new(), |c, k| {
                order.push(c);
                at.push(k);
            });
            // flow_accumulation: donors after their receiver, so upstream first is backwards.
            let mut area = vec![ca; order.len()];
            for k in (0..order.len()).rev() {
                if at[k] != NONE {
                    area[at[k] as usize] += area[k];
                }
            }
            // stream_power, receivers first.
            for (k, &c) in order.iter().enumerate() {
                let (c, r) = (c as usize, rcv[c as usize] as usize);
                if let Some(v) = incised(get(c), get(r), area[k], c, r, n, p) {
                    set(c, v);
                }
            }
            // deposition, upstream first; an outlet's sediment is never read.
            let mut qs = vec![0.0f32; order.len()];
            let mut b = SedimentBudget::default();
            for k in (0..order.len()).rev() {
                let c = order[k] as usize;
                let hc = get(c);
                let e = (old[c] - hc) * ca;
                b.eroded += e as f64;
                let q = qs[k] + e;
                if q <= 0.0 {
                    continue;
                }
                let d = deposit(q, filled[c] - old[c], area[k], p.g, ca);
                set(c, hc + d);
                b.deposited += (d * ca) as f64;
                let out = q - d * ca;
                if out <= 0.0 {
                    continue;
                }
                if is_sea(get(rcv[c] as usize), p.sea) {
                    b.exported += out as f64;
                } else if at[k] != NONE {
                    qs[at[k] as usize] += out;
                }
            }
            b
        })
        .collect();
    budgets
        .iter()
        .fold(SedimentBudget::default(), |s, b| SedimentBudget {
            eroded: s.eroded + b.eroded,
            deposited: s.deposited + b.deposited,
            exported: s.exported + b.exported,
        })
}

/// Drainage area (m²) of every sample: `cell_area` accumulated down the receivers `rcv`,
/// upstream first (`order` has receivers before donors).
pub fn flow_accumulation(order: &[u32], rcv: &[u32], len: usize, cell_area: f32) -> Vec<f32> {
    accumulate(order, rcv, len, cell_area)
}

/// Fluvial incision, the implicit stream-power step (Braun & Willett 2013), receivers first:
/// `h_i ← (h_i + F·h_r) / (1 + F)` where the sample is above its receiver (the sea counts at
/// sea level), `F = K·Δt·A_i^m / Δx_ir`.
pub fn stream_power(
    h: &mut [f32],
    order: &[u32],
    rcv: &[u32],
    area: &[f32],
    n: usize,
    p: &StepParams,
) {
    for &c in order {
        let c = c as usize;
        let r = rcv[c] as usize;
        if r == c {
            continue;
        }
        if let Some(v) = incised(h[c], h[r], area[c], c, r, n, p) {
            h[c] = v;
        }
    }
}

/// Sample `c`'s height after [`stream_power`]'s implicit step towards its receiver `r` (height
/// `hr`; the sea counts at sea level), `area` its drainage area; `None` where it is not above
/// the receiver (unchanged).
#[inline(always)]
fn incised(
    hc: f32,
    hr: f32,
    area: f32,
    c: usize,
    r: usize,
    n: usize,
    p: &StepParams,
) -> Option<f32> {
    let hr = if is_sea(hr, p.sea) { p.sea } else { hr };
    (hc > hr).then(|| {
        let f = p.kdt * p.pow_area(area) / (p.dx * dist_cells(c, r, n));
        (hc + f * hr) / (1.0 + f)
    })
}

/// Sediment deposition, upstream first (Yuan et al. 2019): each sample receives what its donors
/// pass on plus what it eroded (`old − h`), keeps `d` of it (all it can hold below the filled
/// surface in a depression, else `G·Q / (A + G·a)`) and passes the rest to its receiver.
pub fn deposition(
    h: &mut [f32],
    old: &[f32],
    filled: &[f32],
    order: &[u32],
    rcv: &[u32],
    area: &[f32],
    p: &StepParams,
) -> SedimentBudget {
    let len = h.len();
    let ca = p.dx * p.dx;
    let mut qs = vec![0.0f32; len];
    let (mut eroded, mut deposited, mut exported) = (0.0f64, 0.0f64, 0.0f64);
    for &c in order.iter().rev() {
        let c = c as usize;
        let e = (old[c] - h[c]) * ca;
        eroded += e as f64;
        let q = qs[c] + e;
        if q <= 0.0 {
            continue;
        }
        let d = deposit(q, filled[c] - old[c], area[c], p.g, ca);
        h[c] += d;
        deposited += (d * ca) as f64;
        let out = q - d * ca;
        let r = rcv[c] as usize;
        if r == c || out <= 0.0 {
            continue;
        }
        if is_sea(h[r], p.sea) {
            exported += out as f64;
        } else {
            qs[r] += out;
        }
    }
    SedimentBudget {
        eroded,
        deposited,
        exported,
    }
}

/// What a sample keeps (metres) of the `q` m³ of sediment it holds ([`deposition`]): all it can
/// hold below the filled surface (`room` metres) in a depression, else `G·Q / (A + G·a)`; never
/// more than `q` spread over its area `ca`.
#[inline(always)]
fn deposit(q: f32, room: f32, area: f32, g: f32, ca: f32) -> f32 {
    if room > 0.0 {
        (q / ca).min(room)
    } else {
        (g * q / (area + g * ca)).min(q / ca)
    }
}

/// One Jacobi pass of hillslope relaxation from `src` into `h`: thermal relaxation to the
/// talus angle (each neighbour pair steeper than `tan(talus)` exchanges [`THERMAL_RATE`] of the
/// excess) plus linear creep (`p.smooth` × the 8-neighbour Laplacian); between land samples
/// only, the sea floor stays as it is.
pub fn thermal(h: &mut [f32], src: &[f32], n: usize, p: &StepParams) {
    crate::grid::par_rows(h, n, |z, row| {
        thermal_row(src, n, z, p.talus * p.dx, p.smooth, p.sea, row)
    });
}

/// Row `z` of [`thermal`]: interior samples in a branch-free loop (vectorised), the two edge
/// samples and the edge rows one by one; the same operations in the same order either way.
#[inline(always)]
fn thermal_row_body(
    src: &[f32],
    n: usize,
    z: usize,
    talus: f32,
    smooth: f32,
    sea: f32,
    row: &mut [f32],
) {
    let ni = n as isize;
    let offs: [(isize, f32); 8] = [
        (-ni - 1, std::f32::consts::SQRT_2),
        (-ni, 1.0),
        (-ni + 1, std::f32::consts::SQRT_2),
        (-1, 1.0),
        (1, 1.0),
        (ni - 1, std::f32::consts::SQRT_2),
        (ni, 1.0),
        (ni + 1, std::f32::consts::SQRT_2),
    ];
    let sample = |i: usize, interior: bool| -> f32 {
        let hi = src[i];
        if is_sea(hi, sea) {
            return hi;
        }
        let (mut dh, mut lap) = (0.0f32, 0.0f32);
        let mut pair = |hj: f32, d: f32| {
            if is_sea(hj, sea) {
                return;
            }
            let t = talus * d;
            let diff = hj - hi;
            dh += (diff - t).max(0.0) - (-diff - t).max(0.0);
            lap += diff / (d * d);
        };
        if interior {
            for &(o, d) in &offs {
                pair(src[(i as isize + o) as usize], d);
            }
        } else {
            for_neighbours(i, n, |j, d| pair(src[j], d));
        }
        hi + THERMAL_RATE * dh + smooth * lap
    };
    let i0 = z * n;
    if z == 0 || z + 1 == n || n < 3 {
        for (x, v) in row.iter_mut().enumerate() {
            *v = sample(i0 + x, false);
        }
        return;
    }
    row[0] = sample(i0, false);
    row[n - 1] = sample(i0 + n - 1, false);
    // Interior: a sea neighbour adds nothing and a sea sample keeps its height, as selects.
    for (k, out) in row[1..n - 1].iter_mut().enumerate() {
        let i = i0 + 1 + k;
        let hi = src[i];
        let (mut dh, mut lap) = (0.0f32, 0.0f32);
        for &(o, d) in &offs {
            let hj = src[(i as isize + o) as usize];
            let t = talus * d;
            let diff = hj - hi;
            let land = !is_sea(hj, sea);
            let ddh = (diff - t).max(0.0) - (-diff - t).max(0.0);
            let dl = diff / (d * d);
            dh = if land { dh + ddh } else { dh };
            lap = if land { lap + dl } else { lap };
        }
        let v = hi + THERMAL_RATE * dh + smooth * lap;
        *out = if is_sea(hi, sea) { hi } else { v };
    }
}

crate::simd::dispatch! {
    /// [`thermal_row_body`], compiled for AVX2 when the CPU has it (no FMA: same bits).
    fn thermal_row(
        src: &[f32],
        n: usize,
        z: usize,
        talus: f32,
        smooth: f32,
        sea: f32,
        row: &mut [f32],
    ) => thermal_row_body
}

/// Flow receivers for one erosion step: a downhill neighbour on the filled surface drawn with
/// probability proportional to its slope (hashed from the sample and `seed`, see
/// [`StepParams::step_seed`], so deterministic), which removes the grid-aligned valleys of
/// plain D8; samples on flats take their [`flat_routing`] receiver `flat`; outlets are their
/// own receiver.
pub fn flow_receivers(
    filled: &[f32],
    flat: &[u32],
    n: usize,
    sea: f32,
    heights: &[f32],
    seed: u32,
) -> Vec<u32> {
    let (mut rcv, _) = random_receivers(filled, n, sea, heights, seed);
    for (r, &f) in rcv.iter_mut().zip(flat) {
        if *r == NONE {
            *r = f;
        }
    }
    rcv
}

/// [`flow_receivers`] with the flats routed here ([`flat_routing`] of the samples without a
/// lower neighbour only): what an erosion step uses.
fn flow_receivers_with_flats(
    filled: &[f32],
    n: usize,
    sea: f32,
    heights: &[f32],
    seed: u32,
) -> Vec<u32> {
    let (mut rcv, cand) = random_receivers(filled, n, sea, heights, seed);
    crate::flats::route_flats(filled, n, &mut rcv, cand);
    rcv
}

/// The random downhill receivers of [`flow_receivers`], [`NONE`] where there is no lower
/// neighbour, and those samples.
fn random_receivers(
    filled: &[f32],
    n: usize,
    sea: f32,
    heights: &[f32],
    seed: u32,
) -> (Vec<u32>, crate::flats::Candidates) {
    receivers_by_rows(filled, n, heights, |rows, h, i0, out| {
        random_row(rows, h, i0, n as u32, sea, seed, out)
    })
}

/// One inner row of [`random_receivers`] (`n >= 3`): `rows` are the filled rows above, at and
/// below it, `i0` the index of its first sample. Per sample: the downhill neighbours (in
/// [`NEIGHBOURS`] order) with their running sum of slopes, and the first whose running sum
/// exceeds the hashed pick (the last one if none does); [`NONE`] without a downhill neighbour.
/// Branch-free over the samples, so it vectorises.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn random_row_body(
    rows: [&[f32]; 3],
    heights: &[f32],
    i0: u32,
    n: u32,
    sea: f32,
    seed: u32,
    out: &mut [MaybeUninit<u32>],
) {
    let m = n as usize;
    let ([up, mid, down], heights, out) = crate::drainage::inner_row(rows, heights, i0, n, out);
    for x in 1..m - 1 {
        let i = i0 + x as u32;
        let hi = mid[x];
        let nb = row_neighbours([up, mid, down], x, i, n);
        // Running sums over the downhill neighbours only (adding +0.0 elsewhere changes
        // nothing: the sum starts at +0.0 and only grows).
        let mut cum = [0.0f32; 8];
        let mut down_k = [false; 8];
        let mut total = 0.0f32;
        for (k, &(v, d, _)) in nb.iter().enumerate() {
            let s = (hi - v) / d;
            down_k[k] = s > 0.0;
            total += if down_k[k] { s } else { 0.0 };
            cum[k] = total;
        }
        let pick = unit(hash_u32(i ^ seed)) * total;
        let (mut r, mut found, mut last) = (NONE, false, NONE);
        for (k, &(_, _, j)) in nb.iter().enumerate() {
            let take = down_k[k] && !found && pick < cum[k];
            r = if take { j } else { r };
            found |= take;
            last = if down_k[k] { j } else { last };
        }
        let r = if found { r } else { last };
        out[x].write(if is_sea(heights[x], sea) { i } else { r });
    }
}

crate::simd::dispatch! {
    /// [`random_row_body`], compiled for AVX2 when the CPU has it (no FMA: the same bits).
    fn random_row(rows: [&[f32]; 3], heights: &[f32], i0: u32, n: u32, sea: f32, seed: u32, out: &mut [MaybeUninit<u32>]) => random_row_body
}

/// Distance between neighbours `a` and `b`, in cells (1 or √2).
#[inline]
pub fn dist_cells(a: usize, b: usize, n: usize) -> f32 {
    if a % n == b % n || a / n == b / n {
        1.0
    } else {
        NEIGHBOURS[0].2
    }
}

/// Bilinear sample of an `n × n` grid at fractional grid coordinates.
#[inline]
fn bilinear(g: &[f32], n: usize, u: f32, v: f32) -> f32 {
    let x0 = (u.floor() as usize).min(n - 2);
    let z0 = (v.floor() as usize).min(n - 2);
    let (fx, fz) = (u - x0 as f32, v - z0 as f32);
    let i = z0 * n + x0;
    let a = g[i] + (g[i + 1] - g[i]) * fx;
    let b = g[i + n] + (g[i + n + 1] - g[i + n]) * fx;
    a + (b - a) * fz
}

/// Resample an `n × n` grid to `m × m` (same extent), bilinear.
pub fn resample(g: &[f32], n: usize, m: usize) -> Vec<f32> {
    let scale = (n - 1) as f32 / (m - 1) as f32;
    let mut out = vec![0.0f32; m * m];
    crate::grid::par_rows(&mut out, m, |z, row| {
        let v = z as f32 * scale;
        for (x, o) in row.iter_mut().enumerate() {
            *o = bilinear(g, n, x as f32 * scale, v);
        }
    });
    out
}

/// Catmull-Rom weights of the four taps around fractional offset `t` (0..1).
#[inline(always)]
pub fn catmull_rom(t: f32) -> [f32; 4] {
    let (t2, t3) = (t * t, t * t * t);
    [
        0.5 * (-t3 + 2.0 * t2 - t),
        0.5 * (3.0 * t3 - 5.0 * t2 + 2.0),
        0.5 * (-3.0 * t3 + 4.0 * t2 + t),
        0.5 * (t3 - t2),
    ]
}

/// Add the bicubic (Catmull-Rom, separable) upsampling of the `m × m` grid `delta` to the
/// `n × n` grid `g`: smooth across the coarse cells, where bilinear leaves creases that show
/// as facets in the shading. Sea samples (at or below `sea`) keep their height, so no sea
/// turns into land.
pub fn upsample_delta(g: &mut [f32], n: usize, delta: &[f32], m: usize, sea: f32) {
    let scale = (m - 1) as f32 / (n - 1) as f32;
    let tap = |k: isize| k.clamp(0, m as isize - 1) as usize;
    // Horizontal taps and weights per output column, shared by all rows.
    let cols: Vec<([usize; 4], [f32; 4])> = (0..n)
        .map(|x| {
            let u = x as f32 * scale;
            let x0 = (u.floor() as isize).min(m as isize - 2);
            let w = catmull_rom(u - x0 as f32);
            ([tap(x0 - 1), tap(x0), tap(x0 + 1), tap(x0 + 2)], w)
        })
        .collect();
    g.par_chunks_mut(n)
        .enumerate()
        .with_max_len(crate::grid::MAX_ROWS_PER_TASK)
        .for_each_init(
            || vec![0.0f32; m],
            |line, (z, row)| {
                let v = z as f32 * scale;
                let z0 = (v.floor() as isize).min(m as isize - 2);
                let w = catmull_rom(v - z0 as f32);
                let rows = [tap(z0 - 1), tap(z0), tap(z0 + 1), tap(z0 + 2)];
                for (x, l) in line.iter_mut().enumerate() {
                    *l = w[0] * delta[rows[0] * m + x]
                        + w[1] * delta[rows[1] * m + x]
                        + w[2] * delta[rows[2] * m + x]
                        + w[3] * delta[rows[3] * m + x];
                }
                for (o, (t, cw)) in row.iter_mut().zip(&cols) {
                    if !is_sea(*o, sea) {
                        *o += cw[0] * line[t[0]]
                            + cw[1] * line[t[1]]
                            + cw[2] * line[t[2]]
                            + cw[3] * line[t[3]];
                    }
                }
            },
        );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`thermal`] one sample at a time, as it was written before its rows were vectorised.
    fn thermal_reference(h: &mut [f32], src: &[f32], n: usize, p: &StepParams) {
        let talus = p.talus * p.dx;
        for (i, v) in h.iter_mut().enumerate() {
            let hi = src[i];
            if is_sea(hi, p.sea) {
                *v = hi;
                continue;
            }
            let (mut dh, mut lap) = (0.0f32, 0.0f32);
            for_neighbours(i, n, |j, d| {
                let hj = src[j];
                if is_sea(hj, p.sea) {
                    return;
                }
                let t = talus * d;
                let diff = hj - hi;
                dh += (diff - t).max(0.0) - (-diff - t).max(0.0);
                lap += diff / (d * d);
            });
            *v = hi + THERMAL_RATE * dh + p.smooth * lap;
        }
    }

    /// [`fluvial`] gives the heights of the sequential kernels it stands for ([`flow_order`],
    /// [`flow_accumulation`], [`stream_power`], [`deposition`]) bit for bit, and their volumes up
    /// to rounding, over several steps of a rough island with pits, sea and lakes: one group of
    /// trees (65²) and many (257², trees crossing the groups' spans).
    #[test]
    fn fluvial_equals_the_sequential_kernels() {
        for n in [65usize, 257] {
            let plan = erosion_plan(n, 1024.0 / (n - 1) as f32, &ErosionSettings::default(), 9)
                .expect("erosion enabled");
            let p = &plan.params;
            let fbm = crate::gradient_noise::Fbm::classic(6, 77);
            let noise = crate::gradient_noise::FbmRows::field(6.0 / n as f32, [0.0, 0.0], fbm);
            let mut h = vec![0.0f32; n * n];
            let mut row = vec![0.0f32; n];
            for z in 0..n {
                noise.row(z, &mut row);
                for (x, v) in row.iter().enumerate() {
                    let (dx, dz) = (x as f32 / n as f32 - 0.5, z as f32 / n as f32 - 0.5);
                    let r = (dx * dx + dz * dz).sqrt();
                    h[z * n + x] = 60.0 * (0.4 - r) + 25.0 * v;
                }
            }
            for k in 0..4 {
                let filled = depression_fill(&h, n, p.sea);
                assert!(
                    filled.iter().zip(&h).filter(|(f, h)| f > h).count() > 10,
                    "n {n} step {k}: the test wants depressions"
                );
                let rcv = flow_receivers_with_flats(&filled, n, p.sea, &h, p.step_seed(k));
                let old = h.clone();
                let mut want = h.clone();
                let order = flow_order(&rcv, n);
                let area = flow_accumulation(&order, &rcv, n * n, p.dx * p.dx);
                stream_power(&mut want, &order, &rcv, &area, n, p);
                let bw = deposition(&mut want, &old, &filled, &order, &rcv, &area, p);
                let bg = fluvial(&mut h, &old, &filled, &rcv, n, p);
                for (i, (g, w)) in h.iter().zip(&want).enumerate() {
                    assert_eq!(g.to_bits(), w.to_bits(), "n {n} step {k} sample {i}");
                }
                assert!(bw.eroded > 0.0 && bw.deposited > 0.0 && bw.exported > 0.0);
                for (g, w) in [
                    (bg.eroded, bw.eroded),
                    (bg.deposited, bw.deposited),
                    (bg.exported, bw.exported),
                ] {
                    assert!(
                        (g - w).abs() <= 1e-9 * w.abs(),
                        "n {n} step {k}: {g} vs {w}"
                    );
                }
                let mut scratch = vec![0.0f32; n * n];
                for _ in 0..THERMAL_PASSES {
                    scratch.copy_from_slice(&h);
                    thermal(&mut h, &scratch, n, p);
                }
            }
        }
    }

    /// The vectorised rows of [`thermal`] give the per-sample definition's bits: rough fields
    /// with sea, steep steps beyond the talus, NaN and ±0.
    #[test]
    fn thermal_rows_equal_the_per_sample_definition() {
        let mut s = 0x7f4a_7c15u32;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            s as f32 / u32::MAX as f32
        };
        for n in [3usize, 4, 9, 17, 64] {
            let p = erosion_plan(n, 7.0, &ErosionSettings::default(), 5)
                .expect("erosion enabled")
                .params;
            let mut src: Vec<f32> = (0..n * n).map(|_| next() * 40.0 - 8.0).collect();
            for (k, v) in [f32::NAN, -0.0, 0.0, 1e-30, 300.0].into_iter().enumerate() {
                src[(k * 7 + 3) % (n * n)] = v;
            }
            let mut got = vec![0.0f32; n * n];
            let mut want = vec![0.0f32; n * n];
            thermal(&mut got, &src, n, &p);
            thermal_reference(&mut want, &src, n, &p);
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g.to_bits(), w.to_bits(), "n {n} sample {i}");
            }
        }
    }
}
