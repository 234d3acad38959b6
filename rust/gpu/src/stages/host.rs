//! What the single-stage entry points share: argument checks, a recorder on the shared context,
//! read-backs.

use crate::ctx::{self, Gpu};
use crate::error::GpuError;
use crate::recorder::{f32s, u32s, Rec};
use crate::uniforms::Grid;
use island_core::params::ParamError;

pub(crate) fn bad(field: &str, message: impl Into<String>) -> GpuError {
    GpuError::Invalid(ParamError {
        field: field.into(),
        message: message.into(),
    })
}

pub(crate) fn check_n(n: usize) -> Result<(), GpuError> {
    if !(2..=8193).contains(&n) {
        return Err(bad("resolution", format!("must be 2..=8193, got {n}")));
    }
    Ok(())
}

pub(crate) fn check_len(field: &str, len: usize, want: usize) -> Result<(), GpuError> {
    if len != want {
        return Err(bad(field, format!("has {len} values, expected {want}")));
    }
    Ok(())
}

pub(crate) fn with_gpu<T>(
    g: Grid,
    f: impl FnOnce(&Gpu, &mut Rec) -> Result<T, GpuError>,
) -> Result<T, GpuError> {
    check_n(g.n as usize)?;
    let gpu = ctx::gpu()?;
    gpu.guarded(|| {
        let mut rec = Rec::new(&gpu, &g);
        f(&gpu, &mut rec)
    })
}

pub(crate) fn read_f32(rec: &mut Rec, b: &wgpu::Buffer, len: usize) -> Result<Vec<f32>, GpuError> {
    Ok(f32s(
        &rec.read_back(&[(b, len as u64 * 4)], None)?.remove(0),
    ))
}

pub(crate) fn read_u32(rec: &mut Rec, b: &wgpu::Buffer, len: usize) -> Result<Vec<u32>, GpuError> {
    Ok(u32s(
        &rec.read_back(&[(b, len as u64 * 4)], None)?.remove(0),
    ))
}

pub(crate) fn upload(gpu: &Gpu, b: &wgpu::Buffer, data: &[u8]) {
    gpu.upload(b, 0, data);
}
