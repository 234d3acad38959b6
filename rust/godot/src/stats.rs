//! The `get_last_stats()` dictionary of a generation.

use godot::prelude::*;
use island_core::Island;

/// Backend names by `backend` property value (AUTO, GPU, CPU).
const BACKEND_NAMES: [&str; 3] = ["auto", "gpu", "cpu"];

/// Statistics of a generated island (see `ProceduralIsland.get_last_stats`).
pub fn stats_dictionary(
    island: &Island,
    chunks: usize,
    mesh_ms: f64,
    build_ms: f64,
    backend: i32,
) -> VarDictionary {
    let s = &island.stats;
    let mut stage_ms = VarDictionary::new();
    for (name, ms) in &s.stage_ms {
        stage_ms.set(name.as_str(), *ms);
    }
    let mut d = VarDictionary::new();
    d.set("backend", s.backend.as_str());
    d.set(
        "requested_backend",
        BACKEND_NAMES
            .get(backend as usize)
            .copied()
            .unwrap_or("auto"),
    );
    d.set("resolution", island.field.resolution as i64);
    d.set("chunks", chunks as i64);
    d.set("seed", island.params.seed as i64);
    d.set("land_fraction", s.land_fraction as f64);
    d.set("min_height", s.min_height as f64);
    d.set("max_height", s.max_height as f64);
    d.set("total_ms", s.total_ms);
    d.set("stage_ms", &stage_ms);
    d.set("mesh_ms", mesh_ms);
    d.set("build_ms", build_ms);
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
    d
}
