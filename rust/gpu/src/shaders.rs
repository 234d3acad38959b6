//! The shader registry: one line per WGSL file of `shaders/` (named after the core function it
//! mirrors). Every entry point of every registered file becomes a compute pipeline when the
//! context is created (`crate::passes::Pipes`); a stage module names the ones it dispatches as
//! [`Entry`](crate::passes::Entry) constants. This module is a leaf, so the stages above can
//! be added without touching the layers between.

/// `(module name, WGSL source)` of `shaders/<name>.wgsl` for each name.
macro_rules! shaders {
    ($($name:ident,)*) => {
        /// Every shader module: `(name, source)`.
        pub(crate) const SHADERS: &[(&str, &str)] = &[$((
            stringify!($name),
            include_str!(concat!("../../../shaders/", stringify!($name), ".wgsl")),
        )),*];
    };
}

shaders! {
    hash_probe,
    fbm_noise,
    smooth_distance,
    value_noise,
    diamond_square,
    gaussian_islands,
    normalize_01,
    apply_detail,
    biome_blend,
    apply_shaping_curve,
    island_mask,
    distance_to_coast,
    coastal_falloff,
    carve_river,
    compute_normals,
    auto_splat,
    erosion,
    drainage,
    channels,
    wetness,
    depression,
    fill_by_rule,
    min_max_count_above,
    volcano,
    lagoon,
}
