//! The ATOLL's shallow lagoon (`lagoon.wgsl`): `island_core::shape::shallow_lagoon` with the
//! flood fill on the host over one bit per sample (`sea_bits`, read back) and the raise on the
//! GPU (`shallow_lagoon`, its bits uploaded): 1/8 byte per sample each way instead of the
//! heights (4 bytes each way), one round trip.

use crate::ctx::{grid2, Gpu};
use crate::error::GpuError;
use crate::passes::Entry;
use crate::recorder::{u32s, Rec};
use crate::stages::host::*;
use crate::uniforms::{self as u, Grid};
use island_core::shape::{lagoon_region, lagoon_sample, LAGOON_DEPTH};
use island_core::IslandParams;

/// The entry points this module dispatches (registered in `crate::shaders`).
const SEA_BITS: Entry = Entry::new("lagoon", "sea_bits");
const SHALLOW_LAGOON: Entry = Entry::new("lagoon", "shallow_lagoon");

/// Workgroup size of `sea_bits` (one invocation per 32-sample word).
const BITS_GROUP: u32 = 64;

/// u32 words of one bit per sample of an n² grid.
fn words(n: usize) -> usize {
    (n * n).div_ceil(32)
}

/// The recording of these passes (`rec.method(..)` with this trait in scope).
pub(crate) trait LagoonPasses {
    /// [`island_core::shape::shallow_lagoon`] of `heights` (in place) for `p`: the sea bits read
    /// back, the lagoon found on the host, its bits uploaded and the floor raised on the GPU.
    /// One round trip; nothing when `p`'s outline has no lagoon.
    fn shallow_lagoon(
        &mut self,
        gpu: &Gpu,
        p: &IslandParams,
        heights: &wgpu::Buffer,
    ) -> Result<(), GpuError>;
}

impl LagoonPasses for Rec<'_> {
    fn shallow_lagoon(
        &mut self,
        gpu: &Gpu,
        p: &IslandParams,
        heights: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        if lagoon_sample(p).is_none() {
            return Ok(());
        }
        let n = self.n;
        let w = words(n);
        let bytes = (w * 4) as u64;
        let sea = gpu.storage("sea bits", bytes);
        self.ensure_slots(1)?;
        self.pass(SEA_BITS)
            .read("heights_in", heights)
            .write("sea", &sea)
            .run(((w as u32).div_ceil(BITS_GROUP), 1, 1))?;
        let bits = u32s(&self.read_back(&[(&sea, bytes)], None)?[0]);
        let is_sea = |i: usize| (bits[i / 32] >> (i % 32)) & 1 != 0;
        let Some(region) = lagoon_region(p, is_sea) else {
            return Ok(());
        };
        let mut lagoon = vec![0u32; w];
        for i in region {
            lagoon[i / 32] |= 1 << (i % 32);
        }
        let lagoon_bits = gpu.storage("lagoon bits", bytes);
        gpu.upload(&lagoon_bits, 0, bytemuck::cast_slice(&lagoon));
        self.ensure_slots(1)?;
        self.pass(SHALLOW_LAGOON)
            .params(&u::Lagoon {
                depth: LAGOON_DEPTH,
            })
            .read("lagoon_bits", &lagoon_bits)
            .read_write("heights", heights)
            .run(grid2(n))
    }
}

/// GPU [`island_core::shape::shallow_lagoon`] (returns the new heights; unchanged without a
/// lagoon).
pub fn shallow_lagoon(p: &IslandParams, heights: &[f32]) -> Result<Vec<f32>, GpuError> {
    p.validate()?;
    let n = p.resolution as usize;
    check_len("heights", heights.len(), n * n)?;
    with_gpu(Grid::new(n, p.world_size, p.seed), |gpu, rec| {
        let h = gpu.storage_init("heights", bytemuck::cast_slice(heights));
        rec.shallow_lagoon(gpu, p, &h)?;
        read_f32(rec, &h, heights.len())
    })
}
