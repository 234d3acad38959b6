//! Single GPU stages with the signatures of their CPU counterparts in `island_core` (same
//! names and arguments), for the parity tests and the benchmark. Each call uploads its inputs,
//! runs the stage's shader(s) and reads the result back.
//!
//! One module per stage (or family of kernels): its uniform builders (from the core's settings
//! structs), its passes (an extension trait of [`crate::recorder::Rec`]), its single-stage
//! entry points (re-exported here) and, for a stage of the whole pipeline, its stage function
//! (ordered by `crate::pipeline`). The modules only depend on the layers below them
//! (`recorder`, `run`, `ctx`, `passes`, `uniforms`, `error`) and on each other without a
//! circle (`tests/module_graph.rs`).

pub(crate) mod base;
pub(crate) mod biomes;
pub(crate) mod channels;
pub(crate) mod coast;
pub(crate) mod depression;
pub(crate) mod detail;
pub(crate) mod distance;
pub(crate) mod drainage;
pub(crate) mod erosion;
pub(crate) mod host;
pub(crate) mod lagoon;
pub(crate) mod mask;
pub(crate) mod noise;
pub(crate) mod normals;
pub(crate) mod paint;
pub(crate) mod probe;
pub(crate) mod readback;
pub(crate) mod river;
pub(crate) mod shaping;
pub(crate) mod splat;
pub(crate) mod stats;
pub(crate) mod volcano;
pub(crate) mod wetness;

pub use base::{diamond_square, gaussian_islands, normalize_01};
pub use biomes::biome_blend;
pub use channels::carve_rivers;
pub use coast::coastal_falloff;
pub use depression::{depression_fill, flat_routing};
pub use detail::apply_detail;
pub use distance::{distance_to_coast, smooth_distance};
pub use drainage::{accumulate, drainage, drainage_lean, lake_labels, receivers, DrainageIters};
pub use erosion::{
    deposition, erode, flow_accumulation, flow_receivers, resample, stream_power, thermal,
    upsample_delta, PassTimes,
};
pub use lagoon::shallow_lagoon;
pub use mask::island_mask;
pub use noise::{fbm_noise, value_noise};
pub use normals::compute_normals;
pub use paint::fill_by_rule;
pub use probe::hash_probe;
pub use river::carve_river;
pub use shaping::apply_shaping_curve;
pub use splat::auto_splat;
pub use stats::min_max_count_above;
pub use volcano::{dig_crater, raise_cone};
pub use wetness::apply_wetness;
