//! `hash_probe.wgsl`: the shared hashes and noise of `common.wgsl`, for the parity tests.

use crate::error::GpuError;
use crate::passes::Entry;
use crate::stages::host::*;
use crate::uniforms::{Grid, LINE_GROUP};

/// The entry points this module dispatches (registered in `crate::shaders`).
const HASH_PROBE: Entry = Entry::new("hash_probe", "main");

/// For each input `v`: `[hash_u32(v), hash2(v, !v, 12345), stage_seed(v | (v*3) << 32, 5),
/// gradient_noise(..) bits]` computed on the GPU (pins the WGSL port).
pub fn hash_probe(inputs: &[u32]) -> Result<Vec<[u32; 4]>, GpuError> {
    with_gpu(Grid::new(2, 1.0, 0), |gpu, rec| {
        let inb = gpu.storage_init("probe_in", bytemuck::cast_slice(inputs));
        let out = gpu.storage("probe_out", inputs.len() as u64 * 16);
        let groups = (inputs.len() as u32).div_ceil(LINE_GROUP);
        rec.pass(HASH_PROBE)
            .read("probe_in", &inb)
            .write("probe_out", &out)
            .run((groups.max(1), 1, 1))?;
        let v = read_u32(rec, &out, inputs.len() * 4)?;
        Ok(v.chunks_exact(4)
            .map(|c| [c[0], c[1], c[2], c[3]])
            .collect())
    })
}
