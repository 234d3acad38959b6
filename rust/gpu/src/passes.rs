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

use crate::shaders::SHADERS;
use crate::uniforms;
use std::borrow::Cow;
use std::num::NonZeroU64;
use wgpu::naga;

const COMMON: &str = include_str!("../../../shaders/common.wgsl");

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
        for &(name, src) in SHADERS {
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

/// A compute entry point: `entry` of the registered shader module `module` (see
/// `crate::shaders`). Stage modules declare the ones they dispatch as constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub module: &'static str,
    pub entry: &'static str,
}

impl Entry {
    pub const fn new(module: &'static str, entry: &'static str) -> Entry {
        Entry { module, entry }
    }
}

/// Every compute pipeline: each entry point of each registered shader module, built once per
/// context.
pub(crate) struct Pipes {
    /// Sorted by `(module, entry)` (looked up at every dispatch).
    all: Vec<(&'static str, String, Pipe)>,
}

impl Pipes {
    pub fn new(b: &Builder) -> Result<Pipes, String> {
        let mut all = Vec::new();
        for (module, _, r) in &b.modules {
            for ep in &r.module.entry_points {
                all.push((*module, ep.name.clone(), b.pipe(module, &ep.name)?));
            }
        }
        all.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        Ok(Pipes { all })
    }

    /// The pipeline of `e` (None: no such registered module or entry point).
    pub fn get(&self, e: Entry) -> Option<&Pipe> {
        self.all
            .binary_search_by(|(m, name, _)| (*m, name.as_str()).cmp(&(e.module, e.entry)))
            .ok()
            .map(|k| &self.all[k].2)
    }

    /// Most storage bindings of one entry point.
    pub fn max_storage(&self) -> usize {
        self.all
            .iter()
            .map(|(_, _, p)| p.entry.storage.len())
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `Entry::new(module, entry)` with literals in the crate's sources names a registered shader
    /// module and one of its entry points (a typo would fail only when that pass runs on a
    /// GPU). No GPU needed.
    #[test]
    fn every_entry_constant_names_a_registered_entry_point() {
        let dir = std::env::var_os("CARGO_MANIFEST_DIR")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")))
            .join("src");
        let mut files = vec![dir.clone()];
        let mut found = 0;
        while let Some(p) = files.pop() {
            if p.is_dir() {
                files.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            for call in text.split("Entry::new(").skip(1) {
                let args: Vec<&str> = call.split(')').next().unwrap().split(',').collect();
                let lit = |a: &str| a.trim().trim_matches('"').to_string();
                if args.len() != 2 || !args[0].trim().starts_with('"') {
                    continue; // the definition itself
                }
                let (module, entry) = (lit(args[0]), lit(args[1]));
                if entry == "no_such_entry" {
                    continue; // the test of the error
                }
                let (_, src) = SHADERS
                    .iter()
                    .find(|(n, _)| *n == module)
                    .unwrap_or_else(|| {
                        panic!("{}: module {module} is not in shaders!", p.display())
                    });
                let r = Reflected::new(&module, &source(src)).unwrap();
                assert!(
                    r.module.entry_points.iter().any(|ep| ep.name == entry),
                    "{}: {module} has no entry point {entry}",
                    p.display()
                );
                found += 1;
            }
        }
        assert!(found >= 60, "only {found} entry constants found");
    }

    /// Every uniform struct has, in every module, the WGSL layout of its Rust mirror (member
    /// names, offsets, size), and every module parses, validates and binds `G` / `P` with the
    /// expected types. No GPU needed.
    #[test]
    fn wgsl_layouts_match_rust() {
        for &(name, src) in SHADERS {
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
