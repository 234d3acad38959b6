//! The CPU end of the pipeline: the read-back, the heightfield and the statistics.

use crate::error::GpuError;
use crate::recorder::f32s;
use crate::run::Run;
use island_core::grid::min_max;
use island_core::heightfield::Heightfield;

pub(crate) fn stage_readback(run: &mut Run) -> Result<(), GpuError> {
    let gpu = run.gpu;
    let (_, r) = run.parts();
    let bytes = (r.n * r.n * 4) as u64;
    let mut parts = gpu.read_back(
        &[
            (&r.heights, bytes),
            (&r.biome_index, bytes),
            (&r.packed_splat, bytes),
        ],
        Some(&r.staging),
    )?;
    // Other generations may use the buffers from here on.
    run.res = None;
    let splat_bytes = parts.pop().expect("3 parts");
    let biome_bytes = parts.pop().expect("3 parts");
    run.heights = f32s(&parts.pop().expect("3 parts"));
    run.biomes = biome_bytes.chunks_exact(4).map(|c| c[0]).collect();
    run.splat = splat_bytes
        .chunks_exact(4)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect();
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
