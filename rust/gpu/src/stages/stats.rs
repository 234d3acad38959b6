//! The statistics stage (`min_max_count_above.wgsl`): `island_core::grid::min_max_count_above`
//! over the island's final heights (range and land fraction), so that no CPU pass over the
//! heights is needed after a GPU generation. The result is 12 bytes, read back with the
//! island's last read-back.

use crate::ctx::grid2;
use crate::error::GpuError;
use crate::passes::Entry;
use crate::recorder::{u32s, Rec};
use crate::stages::host::*;
use crate::uniforms::{self as u, Grid};

/// The entry points this module dispatches (registered in `crate::shaders`).
const MIN_MAX_COUNT: Entry = Entry::new("min_max_count_above", "main");

/// Bytes of the pass's result (`!key(min)`, `key(max)`, count).
pub(crate) const RESULT_BYTES: u64 = 12;

/// The recording of these passes (`rec.method(..)` with this trait in scope).
pub(crate) trait StatsPasses {
    /// Clear `result` (at least [`RESULT_BYTES`]) and reduce `data` (the grid's n² values)
    /// into it; [`decode`] reads it.
    fn min_max_count_above(
        &mut self,
        data: &wgpu::Buffer,
        result: &wgpu::Buffer,
        level: f32,
    ) -> Result<(), GpuError>;
}

impl StatsPasses for Rec<'_> {
    fn min_max_count_above(
        &mut self,
        data: &wgpu::Buffer,
        result: &wgpu::Buffer,
        level: f32,
    ) -> Result<(), GpuError> {
        let n = self.n;
        self.enc.clear_buffer(result, 0, Some(RESULT_BYTES));
        self.pass(MIN_MAX_COUNT)
            .params(&u::Level { level })
            .read("data", data)
            .read_write("result", result)
            .run(grid2(n))
    }
}

/// The float whose order key (see the shader) is `k`.
fn from_key(k: u32) -> f32 {
    f32::from_bits(if k & 0x8000_0000 != 0 {
        k & 0x7fff_ffff
    } else {
        !k
    })
}

/// `((min, max), count)` from the pass's result bytes, as the CPU function returns them (an
/// empty grid gives `(inf, -inf)` and 0).
pub(crate) fn decode(bytes: &[u8]) -> ((f32, f32), usize) {
    let w = u32s(&bytes[..RESULT_BYTES as usize]);
    if w[1] == 0 {
        return ((f32::INFINITY, f32::NEG_INFINITY), 0);
    }
    ((from_key(!w[0]), from_key(w[1])), w[2] as usize)
}

/// GPU [`island_core::grid::min_max_count_above`] of a `resolution²` grid.
pub fn min_max_count_above(
    data: &[f32],
    resolution: usize,
    level: f32,
) -> Result<((f32, f32), usize), GpuError> {
    check_len("data", data.len(), resolution * resolution)?;
    with_gpu(Grid::new(resolution, 1.0, 0), |gpu, rec| {
        let d = gpu.storage_init("data", bytemuck::cast_slice(data));
        let out = gpu.storage("min_max_count", RESULT_BYTES);
        rec.min_max_count_above(&d, &out, level)?;
        let parts = rec.read_back(&[(&out, RESULT_BYTES)], None)?;
        Ok(decode(&parts[0]))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The order keys sort as the floats do, and decode back.
    #[test]
    fn keys_keep_the_order() {
        let key = |v: f32| {
            let b = v.to_bits();
            if b & 0x8000_0000 != 0 {
                !b
            } else {
                b | 0x8000_0000
            }
        };
        let vals = [
            f32::NEG_INFINITY,
            -1e30,
            -2.5,
            -1e-40,
            -0.0,
            0.0,
            1e-40,
            0.125,
            7.0,
            f32::MAX,
            f32::INFINITY,
        ];
        for w in vals.windows(2) {
            assert!(key(w[0]) < key(w[1]), "{} {}", w[0], w[1]);
        }
        for v in vals {
            assert_eq!(from_key(key(v)).to_bits(), v.to_bits());
        }
    }
}
