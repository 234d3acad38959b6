//! The CPU end of the pipeline: the read-back, the heightfield and the statistics.

use crate::error::GpuError;
use crate::run::Run;
use island_core::grid::min_max;
use island_core::heightfield::Heightfield;

/// The island's last GPU products to the host, compact: the biome index one byte per sample
/// (packed on the GPU) and the RGBA8 splat. The heights arrived with the drainage stage (the
/// stages after it do not change them).
pub(crate) fn stage_readback(run: &mut Run) -> Result<(), GpuError> {
    let (rec, r) = run.parts();
    let nn = r.n * r.n;
    super::biomes::pack_index(rec, &r.biome_index, &r.biome_bytes)?;
    let mut parts = rec.read_back(
        &[
            (&r.biome_bytes, nn as u64),
            (&r.packed_splat, nn as u64 * 4),
        ],
        Some(&r.staging),
    )?;
    // Other generations may use the buffers from here on.
    run.res = None;
    let splat_bytes = parts.pop().expect("2 parts");
    let mut biomes = parts.pop().expect("2 parts");
    biomes.truncate(nn);
    run.biomes = biomes;
    run.splat = splat_bytes
        .chunks_exact(4)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect();
    debug_assert_eq!(run.heights.len(), nn, "the drainage stage left the heights");
    Ok(())
}

pub(crate) fn stage_heightfield(run: &mut Run) -> Result<(), GpuError> {
    let p = run.p;
    let heights = std::mem::take(&mut run.heights);
    run.field = Some(Heightfield::new(
        p.resolution as usize,
        p.world_size,
        heights,
    ));
    Ok(())
}

pub(crate) fn stage_stats(run: &mut Run) -> Result<(), GpuError> {
    let field = run.field.as_ref().expect("heightfield stage ran");
    let (min_height, max_height) = min_max(&field.heights);
    let land = field.heights.iter().filter(|&&h| h > 0.0).count();
    run.stats = (
        land as f32 / field.heights.len() as f32,
        min_height,
        max_height,
    );
    Ok(())
}
