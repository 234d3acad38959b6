//! The `get_last_stats()` statistics of a generation: one typed struct ([`NodeStats`]) filled by
//! the node's parts as they finish, converted to the `Dictionary` in one place
//! ([`NodeStats::to_dictionary`]).

use godot::prelude::*;
use island_core::{Island, Stats};

/// Backend names by `backend` property value (AUTO, GPU, CPU).
const BACKEND_NAMES: [&str; 3] = ["auto", "gpu", "cpu"];

/// What the generation itself reports (from the island and its chunk build).
#[derive(Clone, Debug)]
pub struct GenerationStats {
    /// The core's statistics (backend, land fraction, heights, stage times, GPU counters).
    pub core: Stats,
    /// `backend` property value when the generation was requested.
    pub requested_backend: i32,
    pub resolution: usize,
    pub seed: u64,
    pub chunks: usize,
    /// Chunk data preparation, ms.
    pub mesh_ms: f64,
    /// Chunk node build, ms.
    pub build_ms: f64,
    /// Surfaces uploaded in Godot's encoded layout / through `add_surface_from_arrays`.
    pub encoded_surfaces: i64,
    pub array_surfaces: i64,
    /// Chunks whose nodes already held the same mesh and collider (not rebuilt).
    pub kept_chunks: i64,
}

/// The water of the installed island: samples per kind and chunks with water meshes.
#[derive(Clone, Copy, Debug, Default)]
pub struct WaterStats {
    pub river: usize,
    pub lake: usize,
    pub sea: usize,
    pub chunks: usize,
}

/// The worst frame of a background installation.
#[derive(Clone, Copy, Debug, Default)]
pub struct FrameStats {
    pub ms_max: f64,
    pub cpu_ms_max: f64,
    pub phase: &'static str,
}

/// The scatter placement of the installed island.
#[derive(Clone, Debug, Default)]
pub struct ScatterStats {
    /// Instances per layer.
    pub counts: Vec<i64>,
    /// Placement and node build, ms (`None`: not placed by the generation, e.g. only erased).
    pub ms: Option<f64>,
    pub place_ms: Option<f64>,
    /// Worst frame (wall, CPU) of a background node build.
    pub frame_ms_max: Option<(f64, f64)>,
}

/// Everything `get_last_stats()` reports (empty before the first generation).
#[derive(Clone, Debug, Default)]
pub struct NodeStats {
    pub generation: Option<GenerationStats>,
    /// Splat maps and terrain layers after the install, ms.
    pub maps_ms: Option<f64>,
    /// A synchronous `regenerate()` from call to return, ms.
    pub regenerate_ms: Option<f64>,
    pub frame: Option<FrameStats>,
    pub water: Option<WaterStats>,
    pub scatter: Option<ScatterStats>,
}

impl NodeStats {
    /// A new generation's statistics (everything else is filled in as the install goes on).
    pub fn new(island: &Island, chunks: usize, mesh_ms: f64, build_ms: f64, backend: i32) -> Self {
        NodeStats {
            generation: Some(GenerationStats {
                core: island.stats.clone(),
                requested_backend: backend,
                resolution: island.field.resolution,
                seed: island.params.seed,
                chunks,
                mesh_ms,
                build_ms,
                encoded_surfaces: 0,
                array_surfaces: 0,
                kept_chunks: 0,
            }),
            ..Default::default()
        }
    }

    /// The scatter statistics, created when missing.
    pub fn scatter_mut(&mut self) -> &mut ScatterStats {
        self.scatter.get_or_insert_with(ScatterStats::default)
    }

    /// The `get_last_stats()` dictionary (keys documented in docs/api.md).
    pub fn to_dictionary(&self) -> VarDictionary {
        let mut d = VarDictionary::new();
        let Some(g) = &self.generation else {
            return d;
        };
        let s = &g.core;
        let mut stage_ms = VarDictionary::new();
        for (name, ms) in &s.stage_ms {
            stage_ms.set(name.as_str(), *ms);
        }
        d.set("backend", s.backend.as_str());
        d.set(
            "requested_backend",
            BACKEND_NAMES
                .get(g.requested_backend as usize)
                .copied()
                .unwrap_or("auto"),
        );
        d.set("resolution", g.resolution as i64);
        d.set("chunks", g.chunks as i64);
        d.set("seed", g.seed as i64);
        d.set("land_fraction", s.land_fraction as f64);
        d.set("min_height", s.min_height as f64);
        d.set("max_height", s.max_height as f64);
        d.set("total_ms", s.total_ms);
        d.set("stage_ms", &stage_ms);
        d.set("mesh_ms", g.mesh_ms);
        d.set("build_ms", g.build_ms);
        d.set("encoded_surfaces", g.encoded_surfaces);
        d.set("array_surfaces", g.array_surfaces);
        d.set("kept_chunks", g.kept_chunks);
        if s.backend == "gpu" {
            if let Some(name) = island_gpu::adapter_info() {
                d.set("adapter", name.as_str());
            }
        }
        if !s.backend_reason.is_empty() {
            d.set("backend_reason", s.backend_reason.as_str());
        }
        if let Some(k) = &s.gpu {
            d.set("gpu_dispatches", k.dispatches as i64);
            d.set("gpu_submissions", k.submissions as i64);
            d.set("gpu_host_waits", k.host_waits as i64);
            d.set("gpu_bytes_read_back", k.bytes_read_back as i64);
            d.set("gpu_bytes_uploaded", k.bytes_uploaded as i64);
        }
        if let Some(ms) = self.maps_ms {
            d.set("maps_ms", ms);
        }
        if let Some(ms) = self.regenerate_ms {
            d.set("regenerate_ms", ms);
        }
        if let Some(f) = &self.frame {
            d.set("node_frame_ms_max", f.ms_max);
            d.set("node_frame_cpu_ms_max", f.cpu_ms_max);
            d.set("node_frame_phase", f.phase);
        }
        if let Some(w) = &self.water {
            d.set("water_samples", (w.river + w.lake + w.sea) as i64);
            d.set("river_samples", w.river as i64);
            d.set("lake_samples", w.lake as i64);
            d.set("sea_samples", w.sea as i64);
            d.set("water_chunks", w.chunks as i64);
        }
        if let Some(sc) = &self.scatter {
            d.set(
                "scatter_counts",
                &PackedInt64Array::from(sc.counts.as_slice()),
            );
            if let Some(ms) = sc.ms {
                d.set("scatter_ms", ms);
            }
            if let Some(ms) = sc.place_ms {
                d.set("scatter_place_ms", ms);
            }
            if let Some((wall, cpu)) = sc.frame_ms_max {
                d.set("scatter_frame_ms_max", wall);
                d.set("scatter_frame_cpu_ms_max", cpu);
            }
        }
        d
    }
}
