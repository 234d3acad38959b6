//! [`GpuError`]: why the GPU could not produce an island.

use island_core::ParamError;
use std::fmt;

/// Why the GPU could not produce an island.
#[derive(Clone, Debug, PartialEq)]
pub enum GpuError {
    /// The parameters failed validation (the CPU would reject them too).
    Invalid(ParamError),
    /// No usable compute adapter (or device) on this machine.
    NoAdapter(String),
    /// The requested grid does not fit the adapter's limits.
    TooLarge(String),
    /// A wgpu validation, out-of-memory or internal error.
    Wgpu(String),
    /// The device was lost.
    DeviceLost(String),
    /// The operation has no GPU version (the caller uses the CPU one).
    Unsupported(String),
    /// The cancel flag of [`generate_gpu_with`] / [`generate_with`] was raised.
    Cancelled,
    /// An iteration recorded with a speculative dispatch count had not converged (the
    /// pipeline generates again with checks; never returned by the public functions).
    Unconverged(String),
}

impl fmt::Display for GpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuError::Invalid(e) => e.fmt(f),
            GpuError::NoAdapter(s) => write!(f, "no GPU: {s}"),
            GpuError::TooLarge(s) => write!(f, "too large for the GPU: {s}"),
            GpuError::Wgpu(s) => write!(f, "GPU error: {s}"),
            GpuError::DeviceLost(s) => write!(f, "GPU device lost: {s}"),
            GpuError::Unsupported(s) => write!(f, "not available on the GPU: {s}"),
            GpuError::Cancelled => f.write_str("generation cancelled"),
            GpuError::Unconverged(s) => write!(f, "GPU iterations did not converge: {s}"),
        }
    }
}

impl std::error::Error for GpuError {}

impl From<ParamError> for GpuError {
    fn from(e: ParamError) -> Self {
        GpuError::Invalid(e)
    }
}
