//! The compute passes: WGSL modules, their entry points, and each entry point's bindings
//! reflected with naga (by name), so that a dispatch names the buffers it binds.
//!
//! A module is `uniforms::wgsl_prelude()` (constants and uniform structs) + `common.wgsl` +
//! the pass file. Its global variables are bound by name:
//!
//! * `G` (binding 0): the [`Grid`](crate::uniforms::Grid) of the recording;
//! * `P` (binding 1): the pass's own uniform struct, one dynamic-offset slot per dispatch;
//! * every other binding: a storage buffer, `var<storage, read>` when the pass only reads it.
//!
//! Each entry point gets a bind group layout holding exactly the globals it uses (naga's
//! per-entry-point analysis); [`Pass`](crate::ctx::Pass) checks at every dispatch that the
//! buffers given match those bindings by name and by access (read / write / read-write).

use crate::uniforms;
use std::borrow::Cow;
use std::num::NonZeroU64;
use wgpu::naga;

const COMMON: &str = include_str!("../../../shaders/common.wgsl");

/// Every pass module: `(name, source)`.
pub(crate) const MODULES: &[(&str, &str)] = &[
    (
        "hash_probe",
        include_str!("../../../shaders/hash_probe.wgsl"),
    ),
    ("fbm_noise", include_str!("../../../shaders/fbm_noise.wgsl")),
    (
        "smooth_distance",
        include_str!("../../../shaders/smooth_distance.wgsl"),
    ),
    (
        "value_noise",
        include_str!("../../../shaders/value_noise.wgsl"),
    ),
    (
        "diamond_square",
        include_str!("../../../shaders/diamond_square.wgsl"),
    ),
    (
        "gaussian_islands",
        include_str!("../../../shaders/gaussian_islands.wgsl"),
    ),
    (
        "normalize_01",
        include_str!("../../../shaders/normalize_01.wgsl"),
    ),
    (
        "apply_detail",
        include_str!("../../../shaders/apply_detail.wgsl"),
    ),
    (
        "biome_blend",
        include_str!("../../../shaders/biome_blend.wgsl"),
    ),
    (
        "apply_shaping_curve",
        include_str!("../../../shaders/apply_shaping_curve.wgsl"),
    ),
    (
        "island_mask",
        include_str!("../../../shaders/island_mask.wgsl"),
    ),
    (
        "distance_to_coast",
        include_str!("../../../shaders/distance_to_coast.wgsl"),
    ),
    (
        "coastal_falloff",
        include_str!("../../../shaders/coastal_falloff.wgsl"),
    ),
    (
        "carve_river",
        include_str!("../../../shaders/carve_river.wgsl"),
    ),
    (
        "compute_normals",
        include_str!("../../../shaders/compute_normals.wgsl"),
    ),
    (
        "auto_splat",
        include_str!("../../../shaders/auto_splat.wgsl"),
    ),
    ("erosion", include_str!("../../../shaders/erosion.wgsl")),
    ("drainage", include_str!("../../../shaders/drainage.wgsl")),
    ("channels", include_str!("../../../shaders/channels.wgsl")),
    ("wetness", include_str!("../../../shaders/wetness.wgsl")),
    (
        "depression",
        include_str!("../../../shaders/depression.wgsl"),
    ),
    (
        "fill_by_rule",
        include_str!("../../../shaders/fill_by_rule.wgsl"),
    ),
];

/// Binding of the grid uniform `G`.
pub(crate) const GRID_BINDING: u32 = 0;
/// Binding of the per-pass uniform `P`.
pub(crate) const PARAMS_BINDING: u32 = 1;

/// The body of `rounded()` in `common.wgsl`: what keeps products from being fused into a later
/// add (see there).
pub(crate) const FMA_GUARD: &str = "return bitcast<f32>(bitcast<u32>(x) | G.zero);";

/// Test switch: build the modules with `rounded()` as the identity, i.e. without the FMA guard
/// (see `tests/fma_guard.rs`). Read when the context is created.
pub(crate) static FMA_GUARD_OFF: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// The full WGSL source of a pass module.
pub(crate) fn source(pass: &str) -> String {
    let src = format!("{}\n{COMMON}\n{pass}", uniforms::wgsl_prelude());
    if FMA_GUARD_OFF.load(std::sync::atomic::Ordering::SeqCst) {
        // The bindings are reflected per entry point, so a pass that no longer reads `G` simply
        // gets no `G` binding.
        src.replace(FMA_GUARD, "return x;")
    } else {
        src
    }
}

/// A storage binding of an entry point.
#[derive(Clone, Debug)]
pub(crate) struct StorageSlot {
    pub name: String,
    pub binding: u32,
    /// Declared `read_write` (the layout's access must match the declaration).
    pub writable: bool,
    /// The entry point reads it (or queries its length).
    pub reads: bool,
    /// The entry point writes it.
    pub writes: bool,
}

/// The per-pass uniform of an entry point.
#[derive(Clone, Debug)]
pub(crate) struct ParamsSlot {
    /// WGSL struct name (a [`uniforms::Uniform::NAME`]).
    pub ty: String,
    pub size: u64,
}

/// What an entry point binds (only the globals it uses).
#[derive(Clone, Debug)]
pub(crate) struct EntryLayout {
    pub grid: bool,
    pub params: Option<ParamsSlot>,
    pub storage: Vec<StorageSlot>,
}

/// A WGSL struct's layout: `(name, [(member, offset)], size)`.
#[cfg(test)]
pub(crate) type StructLayout = (String, Vec<(String, u32)>, u32);

/// A parsed and validated module.
pub(crate) struct Reflected {
    module: naga::Module,
    info: naga::valid::ModuleInfo,
}

impl Reflected {
    pub fn new(name: &str, src: &str) -> Result<Reflected, String> {
        let module =
            naga::front::wgsl::parse_str(src).map_err(|e| format!("{name}: {}", e.message()))?;
        let info = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::default(),
        )
        .validate(&module)
        .map_err(|e| format!("{name}: {e}"))?;
        Ok(Reflected { module, info })
    }

    /// The bindings `entry` uses.
    pub fn entry(&self, entry: &str) -> Result<EntryLayout, String> {
        let idx = self
            .module
            .entry_points
            .iter()
            .position(|e| e.name == entry)
            .ok_or_else(|| format!("no entry point {entry}"))?;
        let fi = self.info.get_entry_point(idx);
        let mut out = EntryLayout {
            grid: false,
            params: None,
            storage: Vec::new(),
        };
        for (h, var) in self.module.global_variables.iter() {
            let Some(rb) = &var.binding else { continue };
            let used = fi[h];
            if used.is_empty() {
                continue;
            }
            let name = var.name.clone().unwrap_or_default();
            if rb.group != 0 {
                return Err(format!("{entry}: {name} is not in group 0"));
            }
            match var.space {
                naga::AddressSpace::Uniform if rb.binding == GRID_BINDING && name == "G" => {
                    out.grid = true
                }
                naga::AddressSpace::Uniform if rb.binding == PARAMS_BINDING && name == "P" => {
                    let ty = &self.module.types[var.ty];
                    out.params = Some(ParamsSlot {
                        ty: ty.name.clone().unwrap_or_default(),
                        size: ty.inner.size(self.module.to_ctx()) as u64,
                    });
                }
                naga::AddressSpace::Storage { access } if rb.binding > PARAMS_BINDING => {
                    out.storage.push(StorageSlot {
                        name,
                        binding: rb.binding,
                        writable: access.contains(naga::StorageAccess::STORE),
                        reads: used.intersects(
                            naga::valid::GlobalUse::READ | naga::valid::GlobalUse::QUERY,
                        ),
                        writes: used.contains(naga::valid::GlobalUse::WRITE),
                    })
                }
                _ => {
                    return Err(format!(
                        "{entry}: unexpected binding {name} ({:?}, binding {})",
                        var.space, rb.binding
                    ))
                }
            }
        }
        Ok(out)
    }

    /// Every struct type of the module.
    #[cfg(test)]
    pub fn structs(&self) -> Vec<StructLayout> {
        self.module
            .types
            .iter()
            .filter_map(|(_, t)| match &t.inner {
                naga::TypeInner::Struct { members, span } => Some((
                    t.name.clone().unwrap_or_default(),
                    members
                        .iter()
                        .map(|m| (m.name.clone().unwrap_or_default(), m.offset))
                        .collect(),
                    *span,
                )),
                _ => None,
            })
            .collect()
    }
}

/// One compute pipeline with the bindings of its entry point.
pub(crate) struct Pipe {
    /// `module::entry`.
    pub label: String,
    pub pipeline: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
    pub entry: EntryLayout,
}

/// The shader modules of one device, and a pipeline builder.
pub(crate) struct Builder<'d> {
    device: &'d wgpu::Device,
    modules: Vec<(&'static str, wgpu::ShaderModule, Reflected)>,
}

impl<'d> Builder<'d> {
    pub fn new(device: &'d wgpu::Device) -> Result<Builder<'d>, String> {
        let mut modules = Vec::new();
        for &(name, src) in MODULES {
            let src = source(src);
            let r = Reflected::new(name, &src)?;
            let m = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(name),
                source: wgpu::ShaderSource::Wgsl(Cow::Owned(src)),
            });
            modules.push((name, m, r));
        }
        Ok(Builder { device, modules })
    }

    /// The pipeline of `module::entry`, with a layout of exactly the globals it uses.
    pub fn pipe(&self, module: &str, entry: &str) -> Result<Pipe, String> {
        let (_, m, r) = self
            .modules
            .iter()
            .find(|(n, _, _)| *n == module)
            .ok_or_else(|| format!("no shader module {module}"))?;
        let label = format!("{module}::{entry}");
        let el = r.entry(entry).map_err(|e| format!("{module}: {e}"))?;
        let uniform = |binding, dynamic: bool, size: Option<u64>| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: dynamic,
                min_binding_size: size.and_then(NonZeroU64::new),
            },
            count: None,
        };
        let mut entries = Vec::new();
        if el.grid {
            entries.push(uniform(
                GRID_BINDING,
                false,
                Some(std::mem::size_of::<uniforms::Grid>() as u64),
            ));
        }
        if let Some(p) = &el.params {
            entries.push(uniform(PARAMS_BINDING, true, Some(p.size)));
        }
        for s in &el.storage {
            entries.push(wgpu::BindGroupLayoutEntry {
                binding: s.binding,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage {
                        read_only: !s.writable,
                    },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            });
        }
        let layout = self
            .device
            .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some(&label),
                entries: &entries,
            });
        let pl = self
            .device
            .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(&label),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            });
        let pipeline = self
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(&label),
                layout: Some(&pl),
                module: m,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            });
        Ok(Pipe {
            label,
            pipeline,
            layout,
            entry: el,
        })
    }
}

/// Every compute pipeline, built once per context.
pub(crate) struct Pipes {
    pub hash_probe: Pipe,
    pub fbm: Pipe,
    pub value: Pipe,
    pub ds_corners: Pipe,
    pub ds_diamond: Pipe,
    pub ds_square: Pipe,
    pub gaussian: Pipe,
    pub norm_partial: Pipe,
    pub norm_final: Pipe,
    pub norm_apply: Pipe,
    pub detail: Pipe,
    pub biome: Pipe,
    pub shaping: Pipe,
    pub mask: Pipe,
    pub edt_columns: Pipe,
    pub edt_rows: Pipe,
    pub smooth_quantize: Pipe,
    pub smooth_rows: Pipe,
    pub smooth_columns: Pipe,
    pub smooth_blend: Pipe,
    pub coast: Pipe,
    pub river_rows: Pipe,
    pub river: Pipe,
    pub normals: Pipe,
    pub splat_weights: Pipe,
    pub splat_blur: Pipe,
    pub splat_quantize: Pipe,
    pub fill_by_rule: Pipe,
    pub erosion_resample: Pipe,
    pub flow_receivers: Pipe,
    pub flow_accumulation: Pipe,
    pub stream_power_init: Pipe,
    pub stream_power_jump: Pipe,
    pub stream_power_apply: Pipe,
    pub deposition: Pipe,
    pub thermal: Pipe,
    pub upsample_delta: Pipe,
    pub receivers: Pipe,
    pub budget_add: Pipe,
    pub fill_init: Pipe,
    pub fill_relax: Pipe,
    pub fill_decode: Pipe,
    pub flat_init: Pipe,
    pub flat_relax: Pipe,
    pub flat_receivers: Pipe,
    pub accumulate_init: Pipe,
    pub accumulate: Pipe,
    pub accumulate_area: Pipe,
    pub lake_init: Pipe,
    pub lake_union: Pipe,
    pub lake_flatten: Pipe,
    pub lake_stats: Pipe,
    pub lake_deepest: Pipe,
    pub lake_list: Pipe,
    pub lake_mark: Pipe,
    pub carve_fill: Pipe,
    pub carve_init: Pipe,
    pub carve_bed_min: Pipe,
    pub carve_bed_base: Pipe,
    pub carve_stamps: Pipe,
    pub carve_banks_walk: Pipe,
    pub carve_decode: Pipe,
    pub apply_wetness: Pipe,
}

impl Pipes {
    pub fn new(b: &Builder) -> Result<Pipes, String> {
        Ok(Pipes {
            hash_probe: b.pipe("hash_probe", "main")?,
            fbm: b.pipe("fbm_noise", "main")?,
            value: b.pipe("value_noise", "main")?,
            ds_corners: b.pipe("diamond_square", "corners")?,
            ds_diamond: b.pipe("diamond_square", "diamond_pass")?,
            ds_square: b.pipe("diamond_square", "square_pass")?,
            gaussian: b.pipe("gaussian_islands", "main")?,
            norm_partial: b.pipe("normalize_01", "reduce_partial")?,
            norm_final: b.pipe("normalize_01", "reduce_final")?,
            norm_apply: b.pipe("normalize_01", "apply")?,
            detail: b.pipe("apply_detail", "main")?,
            biome: b.pipe("biome_blend", "main")?,
            shaping: b.pipe("apply_shaping_curve", "main")?,
            mask: b.pipe("island_mask", "main")?,
            edt_columns: b.pipe("distance_to_coast", "columns")?,
            edt_rows: b.pipe("distance_to_coast", "rows")?,
            smooth_quantize: b.pipe("smooth_distance", "quantize")?,
            smooth_rows: b.pipe("smooth_distance", "rows")?,
            smooth_columns: b.pipe("smooth_distance", "columns")?,
            smooth_blend: b.pipe("smooth_distance", "blend")?,
            coast: b.pipe("coastal_falloff", "main")?,
            river_rows: b.pipe("carve_river", "rows")?,
            river: b.pipe("carve_river", "main")?,
            normals: b.pipe("compute_normals", "main")?,
            splat_weights: b.pipe("auto_splat", "weights")?,
            splat_blur: b.pipe("auto_splat", "blur")?,
            splat_quantize: b.pipe("auto_splat", "quantize")?,
            fill_by_rule: b.pipe("fill_by_rule", "main")?,
            erosion_resample: b.pipe("erosion", "resample")?,
            flow_receivers: b.pipe("erosion", "flow_receivers")?,
            flow_accumulation: b.pipe("erosion", "flow_accumulation")?,
            stream_power_init: b.pipe("erosion", "stream_power_init")?,
            stream_power_jump: b.pipe("erosion", "stream_power_jump")?,
            stream_power_apply: b.pipe("erosion", "stream_power_apply")?,
            deposition: b.pipe("erosion", "deposition")?,
            thermal: b.pipe("erosion", "thermal")?,
            upsample_delta: b.pipe("erosion", "upsample_delta")?,
            receivers: b.pipe("drainage", "receivers")?,
            budget_add: b.pipe("erosion", "budget_add")?,
            fill_init: b.pipe("depression", "fill_init")?,
            fill_relax: b.pipe("depression", "fill_relax")?,
            fill_decode: b.pipe("depression", "fill_decode")?,
            flat_init: b.pipe("depression", "flat_init")?,
            flat_relax: b.pipe("depression", "flat_relax")?,
            flat_receivers: b.pipe("depression", "flat_receivers")?,
            accumulate_init: b.pipe("drainage", "accumulate_init")?,
            accumulate: b.pipe("drainage", "accumulate")?,
            accumulate_area: b.pipe("drainage", "accumulate_area")?,
            lake_init: b.pipe("drainage", "lake_init")?,
            lake_union: b.pipe("drainage", "lake_union")?,
            lake_flatten: b.pipe("drainage", "lake_flatten")?,
            lake_stats: b.pipe("drainage", "lake_stats")?,
            lake_deepest: b.pipe("drainage", "lake_deepest")?,
            lake_list: b.pipe("drainage", "lake_list")?,
            lake_mark: b.pipe("drainage", "lake_mark")?,
            carve_fill: b.pipe("channels", "carve_fill")?,
            carve_init: b.pipe("channels", "carve_init")?,
            carve_bed_min: b.pipe("channels", "carve_bed_min")?,
            carve_bed_base: b.pipe("channels", "carve_bed_base")?,
            carve_stamps: b.pipe("channels", "carve_stamps")?,
            carve_banks_walk: b.pipe("channels", "carve_banks_walk")?,
            carve_decode: b.pipe("channels", "carve_decode")?,
            apply_wetness: b.pipe("wetness", "apply_wetness")?,
        })
    }

    /// Most storage bindings of one entry point.
    pub fn max_storage(&self) -> usize {
        [
            &self.hash_probe,
            &self.fbm,
            &self.value,
            &self.ds_corners,
            &self.ds_diamond,
            &self.ds_square,
            &self.gaussian,
            &self.norm_partial,
            &self.norm_final,
            &self.norm_apply,
            &self.detail,
            &self.biome,
            &self.shaping,
            &self.mask,
            &self.edt_columns,
            &self.edt_rows,
            &self.smooth_quantize,
            &self.smooth_rows,
            &self.smooth_columns,
            &self.smooth_blend,
            &self.coast,
            &self.river_rows,
            &self.river,
            &self.normals,
            &self.splat_weights,
            &self.splat_blur,
            &self.splat_quantize,
            &self.fill_by_rule,
            &self.erosion_resample,
            &self.flow_receivers,
            &self.flow_accumulation,
            &self.stream_power_init,
            &self.stream_power_jump,
            &self.stream_power_apply,
            &self.deposition,
            &self.thermal,
            &self.upsample_delta,
            &self.receivers,
            &self.budget_add,
            &self.fill_init,
            &self.fill_relax,
            &self.fill_decode,
            &self.flat_init,
            &self.flat_relax,
            &self.flat_receivers,
            &self.accumulate_init,
            &self.accumulate,
            &self.accumulate_area,
            &self.lake_init,
            &self.lake_union,
            &self.lake_flatten,
            &self.lake_stats,
            &self.lake_deepest,
            &self.lake_list,
            &self.lake_mark,
            &self.carve_fill,
            &self.carve_init,
            &self.carve_bed_min,
            &self.carve_bed_base,
            &self.carve_stamps,
            &self.carve_banks_walk,
            &self.carve_decode,
            &self.apply_wetness,
        ]
        .iter()
        .map(|p| p.entry.storage.len())
        .max()
        .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every uniform struct has, in every module, the WGSL layout of its Rust mirror (member
    /// names, offsets, size), and every module parses, validates and binds `G` / `P` with the
    /// expected types. No GPU needed.
    #[test]
    fn wgsl_layouts_match_rust() {
        for &(name, src) in MODULES {
            let r = Reflected::new(name, &source(src)).unwrap();
            let structs = r.structs();
            for (ty, fields, size) in uniforms::ALL {
                let (_, members, span) = structs
                    .iter()
                    .find(|s| s.0 == *ty)
                    .unwrap_or_else(|| panic!("{name}: no struct {ty}"));
                let want: Vec<(String, u32)> = fields
                    .iter()
                    .map(|f| (f.name.to_string(), f.offset as u32))
                    .collect();
                assert_eq!(members, &want, "{name}: members of {ty}");
                assert_eq!(*span as usize, *size, "{name}: size of {ty}");
            }
            if let Some((_, _, span)) = structs.iter().find(|s| s.0 == "RowInfo") {
                assert_eq!(*span as u64, uniforms::RIVER_ROW_BYTES, "RowInfo");
            }
            for ep in &r.module.entry_points {
                let wg = ep.workgroup_size;
                assert!(
                    [
                        [uniforms::GRID_TILE, uniforms::GRID_TILE, 1],
                        [uniforms::LINE_GROUP, 1, 1],
                        [uniforms::DS_TILE, uniforms::DS_TILE, 1],
                        [uniforms::NORM_WORKGROUP as u32, 1, 1],
                        [4, 1, 1],
                    ]
                    .contains(&wg),
                    "{name}::{}: workgroup size {wg:?}",
                    ep.name
                );
                let el = r.entry(&ep.name).unwrap();
                if let Some(p) = &el.params {
                    let (_, _, size) = uniforms::ALL
                        .iter()
                        .find(|u| u.0 == p.ty)
                        .unwrap_or_else(|| panic!("{name}: P has type {}", p.ty));
                    assert_eq!(p.size as usize, *size);
                }
                let mut bindings: Vec<u32> = el.storage.iter().map(|s| s.binding).collect();
                bindings.dedup();
                assert_eq!(bindings.len(), el.storage.len(), "{name}::{}", ep.name);
            }
        }
    }

    /// The shared constants reach WGSL with their exact values.
    #[test]
    fn constants_are_exact() {
        let src = source("");
        let r = Reflected::new("prelude", &src).unwrap();
        let m = &r.module;
        let find = |n: &str| {
            m.constants
                .iter()
                .find(|(_, c)| c.name.as_deref() == Some(n))
                .map(|(_, c)| &m.global_expressions[c.init])
                .unwrap_or_else(|| panic!("no const {n}"))
        };
        let lit = |e: &naga::Expression| match e {
            naga::Expression::Literal(naga::Literal::F32(v)) => v.to_bits(),
            naga::Expression::Literal(naga::Literal::U32(v)) => *v,
            e => panic!("not a literal: {e:?}"),
        };
        assert_eq!(
            lit(find("MASK_NOISE_GAIN")),
            island_core::mask::MASK_NOISE_GAIN.to_bits()
        );
        assert_eq!(
            lit(find("RIVER_SEGMENTS")) as usize,
            island_core::river::RIVER_SEGMENTS
        );
        for (n, want) in [
            ("RIVER_WARP_OFFSET", island_core::river::RIVER_WARP_OFFSET),
            ("BIOME_WARP_OFFSET", island_core::biomes::BIOME_WARP_OFFSET),
        ] {
            let naga::Expression::Compose { components, .. } = find(n) else {
                panic!("{n} is not a vector");
            };
            let got: Vec<u32> = components
                .iter()
                .map(|&h| lit(&m.global_expressions[h]))
                .collect();
            assert_eq!(got, vec![want[0].to_bits(), want[1].to_bits()], "{n}");
        }
    }
}
