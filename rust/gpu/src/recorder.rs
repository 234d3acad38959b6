//! The command recorder at the bottom of the stages: [`Rec`] records compute passes into one
//! command encoder (see [`crate::ctx::Pass`]), submits and waits ([`Rec::flush`]). Each stage
//! module adds its passes with an extension trait of its own (`NoisePasses`, `ErosionPasses`, …).

use crate::ctx::{Frame, Gpu, Pass, DISPATCH_SLOTS};
use crate::error::GpuError;
use crate::passes::Entry;
use crate::uniforms as u;

/// Records passes into one command encoder.
pub(crate) struct Rec<'g> {
    pub gpu: &'g Gpu,
    fr: Frame<'g>,
    pub enc: wgpu::CommandEncoder,
    pub n: usize,
}

impl<'g> Rec<'g> {
    pub fn new(gpu: &'g Gpu, grid: &u::Grid) -> Self {
        Rec {
            gpu,
            fr: Frame::new(gpu, grid),
            enc: gpu.encoder(),
            n: grid.n as usize,
        }
    }

    /// Describe one dispatch of entry point `e` (see [`Pass`]; an entry point that is not
    /// registered makes [`Pass::run`] fail).
    pub fn pass<'r>(&'r mut self, e: Entry) -> Pass<'r, 'g> {
        let pipe = self.gpu.pipes.get(e).ok_or(e);
        Pass::new(&mut self.fr, &mut self.enc, pipe)
    }

    /// Submit what was recorded and wait; start a new encoder (the per-dispatch uniform
    /// slots are free again).
    pub fn flush(&mut self) -> Result<(), GpuError> {
        let enc = std::mem::replace(&mut self.enc, self.gpu.encoder());
        self.gpu.submit_wait(enc)?;
        self.fr.reset();
        Ok(())
    }

    /// Submit what was recorded without waiting for it; start a new encoder (the per-dispatch
    /// uniform slots are free again: their next writes are queued after this submission).
    pub fn submit(&mut self) {
        let enc = std::mem::replace(&mut self.enc, self.gpu.encoder());
        self.gpu.submit(enc);
        self.fr.reset();
    }

    /// Submit what was recorded together with copies of `parts` (`(buffer, bytes)`) into a
    /// staging buffer, wait once and return their bytes: one round trip where a
    /// [`Rec::flush`] followed by [`Gpu::read_back`] takes two.
    pub fn read_back(
        &mut self,
        parts: &[(&wgpu::Buffer, u64)],
        staging: Option<&wgpu::Buffer>,
    ) -> Result<Vec<Vec<u8>>, GpuError> {
        let enc = std::mem::replace(&mut self.enc, self.gpu.encoder());
        let out = self.gpu.read_back_after(enc, parts, staging)?;
        self.fr.reset();
        Ok(out)
    }

    /// Per-dispatch uniform slots used since the last [`Rec::flush`].
    pub fn slots_used(&self) -> u64 {
        self.fr.used()
    }

    /// Submit first (without waiting) when fewer than `k` per-dispatch uniform slots are left.
    pub fn ensure_slots(&mut self, k: u64) -> Result<(), GpuError> {
        if self.slots_used() + k > DISPATCH_SLOTS {
            self.submit();
        }
        Ok(())
    }
}

pub(crate) fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

pub(crate) fn u32s(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}
