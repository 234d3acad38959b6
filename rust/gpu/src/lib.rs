//! wgpu backend (in progress).
