//! The CPU end of the pipeline: the read-back, the heightfield and the statistics.

use super::stats::{self, StatsPasses};
use crate::error::GpuError;
use crate::run::Run;

/// The island's last GPU products to the host, compact: the biome index one byte per sample
/// (packed on the GPU), the RGBA8 splat and the heights' statistics (reduced on the GPU, 12
/// bytes). The heights arrived with the drainage stage (the stages after it do not change
/// them).
pub(crate) fn stage_readback(run: &mut Run) -> Result<(), GpuError> {
    let (rec, r) = run.parts();
    let nn = r.n * r.n;
    super::biomes::pack_index(rec, &r.biome_index, &r.biome_bytes)?;
    rec.min_max_count_above(&r.heights, &r.stats, 0.0)?;
    let mut parts = rec.read_back(
        &[
            (&r.biome_bytes, nn as u64),
            (&r.packed_splat, nn as u64 * 4),
            (&r.stats, stats::RESULT_BYTES),
        ],
        Some(&r.staging),
    )?;
    // Other generations may use the buffers from here on.
    run.res = None;
    run.height_stats = Some(stats::decode(&parts.pop().expect("3 parts")));
    let splat_bytes = parts.pop().expect("3 parts");
    let mut biomes = parts.pop().expect("3 parts");
    biomes.truncate(nn);
    run.biomes = biomes;
    run.splat = splat_bytes
        .chunks_exact(4)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect();
    Ok(())
}

/// The heightfield: its normals were computed on the CPU from the final heights on their own
/// thread, started when the tail began (`pipeline::tail`), while the GPU ran the normals,
/// splat and statistics and the host waited for the read-back; this joins it.
pub(crate) fn stage_heightfield(run: &mut Run) -> Result<(), GpuError> {
    let job = run
        .field_job
        .take()
        .expect("the tail started the heightfield");
    let field = job
        .join()
        .map_err(|_| GpuError::Wgpu("the heightfield thread panicked".into()))?;
    run.field = Some(field);
    Ok(())
}

/// The statistics from the GPU's reduction (no pass over the heights on the CPU): the land
/// fraction and the height range, as `island_core`'s statistics stage computes them.
pub(crate) fn stage_stats(run: &mut Run) -> Result<(), GpuError> {
    let ((min_height, max_height), land) = run.height_stats.expect("read back");
    let nn = (run.p.resolution as usize).pow(2);
    run.stats = (land as f32 / nn as f32, min_height, max_height);
    Ok(())
}
