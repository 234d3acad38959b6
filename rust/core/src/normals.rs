//! Smooth normals and slopes from the global heightfield (central differences in metres).

use crate::det_math;
use std::mem::MaybeUninit;

/// Unit normal at every sample (+Y up), from central differences (one-sided at the border).
///
/// Same values as `normal_at_sample` at every sample: interior columns take a vectorised
/// row kernel (the same operations in the same order, divisions kept), the two border columns
/// (and maps narrower than 3) call `normal_at_sample` itself.
pub fn compute_normals(heights: &[f32], resolution: usize, spacing: f32) -> Vec<[f32; 3]> {
    let n = resolution;
    if n == 0 || heights.len() < n * n {
        // Too few heights: flat (+Y) normals rather than a panic.
        return vec![[0.0f32, 1.0, 0.0]; n * n];
    }
    // Written once, row by row in parallel, without zero-filling first (a 12 MB memset on one
    // thread cost as much as the kernel).
    let mut out: Vec<[f32; 3]> = crate::memory::with_capacity(n * n);
    crate::grid::par_rows(&mut out.spare_capacity_mut()[..n * n], n, |z, row| {
        normals_row(heights, n, spacing, z, row)
    });
    // SAFETY: every row chunk of the first n² slots was fully written by `normals_row`
    // (border columns and the interior span cover 0..n; narrow maps write every sample).
    unsafe { out.set_len(n * n) };
    out
}

/// Row `z` of [`compute_normals`] (the same bits) into `out` (`resolution` normals), for
/// passes that need the normals of a few rows at a time rather than the whole map.
pub(crate) fn normals_of_row(
    heights: &[f32],
    resolution: usize,
    spacing: f32,
    z: usize,
    out: &mut [[f32; 3]],
) {
    assert_eq!(out.len(), resolution, "one row of normals");
    assert!(heights.len() >= resolution * resolution && z < resolution);
    // SAFETY: `MaybeUninit<T>` has the layout of `T`, and `normals_row` only ever writes
    // initialised values into the slice, so it stays initialised.
    let out = unsafe { &mut *(out as *mut [[f32; 3]] as *mut [MaybeUninit<[f32; 3]>]) };
    normals_row(heights, resolution, spacing, z, out);
}

crate::simd::dispatch! {
    /// Row `z` of [`compute_normals`], compiled for AVX2 when the CPU has it (no FMA: same bits).
    fn normals_row(h: &[f32], n: usize, spacing: f32, z: usize, row: &mut [MaybeUninit<[f32; 3]>]) => normals_row_body
}

#[inline(always)]
fn normals_row_body(
    h: &[f32],
    n: usize,
    spacing: f32,
    z: usize,
    row: &mut [MaybeUninit<[f32; 3]>],
) {
    if n < 3 {
        for (x, o) in row.iter_mut().enumerate() {
            o.write(normal_at_sample(h, n, spacing, x, z));
        }
        return;
    }
    let (z0, z1) = (z.saturating_sub(1), (z + 1).min(n - 1));
    // The divisors of `normal_at_sample` for an interior column and for this row.
    let dx_den = 2.0f32 * spacing;
    let dz_den = (z1 - z0) as f32 * spacing;
    let hr = &h[z * n..z * n + n];
    let (ha, hb) = (&h[z0 * n..z0 * n + n], &h[z1 * n..z1 * n + n]);
    row[0].write(normal_at_sample(h, n, spacing, 0, z));
    row[n - 1].write(normal_at_sample(h, n, spacing, n - 1, z));
    let m = n - 2;
    let (left, right, up, down) = (&hr[..m], &hr[2..], &ha[1..n - 1], &hb[1..n - 1]);
    for ((((o, &l), &r), &u), &d) in row[1..n - 1]
        .iter_mut()
        .zip(left)
        .zip(right)
        .zip(up)
        .zip(down)
    {
        let dx = (r - l) / dx_den;
        let dz = (d - u) / dz_den;
        let len = (dx * dx + 1.0 + dz * dz).sqrt();
        o.write([-dx / len, 1.0 / len, -dz / len]);
    }
}

/// Normal at sample `(x, z)`.
#[inline(always)]
pub(crate) fn normal_at_sample(h: &[f32], n: usize, spacing: f32, x: usize, z: usize) -> [f32; 3] {
    let (x0, x1) = (x.saturating_sub(1), (x + 1).min(n - 1));
    let (z0, z1) = (z.saturating_sub(1), (z + 1).min(n - 1));
    let dx = (h[z * n + x1] - h[z * n + x0]) / ((x1 - x0) as f32 * spacing);
    let dz = (h[z1 * n + x] - h[z0 * n + x]) / ((z1 - z0) as f32 * spacing);
    let len = (dx * dx + 1.0 + dz * dz).sqrt();
    [-dx / len, 1.0 / len, -dz / len]
}

/// Slope in degrees (0 = flat, 90 = vertical) of a unit normal.
#[inline(always)]
pub fn slope_degrees(normal: [f32; 3]) -> f32 {
    det_math::acos(normal[1].clamp(-1.0, 1.0)).to_degrees()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plane_normals_and_slope() {
        let n = 9;
        let spacing = 2.0;
        // h = x_metres * 1.0 (45 degrees)
        let h: Vec<f32> = (0..n * n).map(|i| (i % n) as f32 * spacing).collect();
        let nm = compute_normals(&h, n, spacing);
        for v in &nm {
            assert!((slope_degrees(*v) - 45.0).abs() < 1e-3);
            assert!(v[0] < 0.0 && v[2].abs() < 1e-6);
        }
    }

    #[test]
    fn too_few_heights_give_flat_normals() {
        assert_eq!(
            compute_normals(&[1.0, 2.0, 3.0], 2, 1.0),
            vec![[0.0, 1.0, 0.0]; 4]
        );
        assert!(compute_normals(&[], 0, 1.0).is_empty());
    }

    /// The row kernel (interior fast path, border columns, AVX2 or baseline copy) gives the
    /// bits of [`normal_at_sample`] everywhere, including one-sided borders, tiny maps and
    /// non-finite heights.
    #[test]
    fn fast_rows_equal_per_sample_definition() {
        for n in [1usize, 2, 3, 4, 5, 17, 40] {
            for spacing in [0.37f32, 1.0, 2.5] {
                let mut h: Vec<f32> = (0..n * n)
                    .map(|i| {
                        ((i as u64 * 2_654_435_761) % 10_007) as f32 * 0.013 - 40.0
                            + (i % 7) as f32 * 3.1
                    })
                    .collect();
                if n > 4 {
                    h[n + 2] = f32::NAN;
                    h[2 * n + 3] = f32::INFINITY;
                    h[3 * n] = -1.0e30;
                }
                let got = compute_normals(&h, n, spacing);
                for z in 0..n {
                    for x in 0..n {
                        let want = normal_at_sample(&h, n, spacing, x, z);
                        let g = got[z * n + x];
                        let same = (0..3).all(|k| {
                            g[k].to_bits() == want[k].to_bits()
                                || (g[k].is_nan() && want[k].is_nan())
                        });
                        assert!(
                            same,
                            "n {n} spacing {spacing} ({x}, {z}): {g:?} vs {want:?}"
                        );
                    }
                }
                // The baseline copy (no AVX2) must agree with the dispatched one bit for bit.
                for z in 0..n {
                    let mut row = vec![MaybeUninit::new([0.0f32; 3]); n];
                    normals_row_body(&h, n, spacing, z, &mut row);
                    // SAFETY: initialised above (and overwritten by the kernel).
                    let row: Vec<[f32; 3]> = row
                        .into_iter()
                        .map(|v| unsafe { v.assume_init() })
                        .collect();
                    for x in 0..n {
                        let g = got[z * n + x];
                        let same = (0..3).all(|k| {
                            g[k].to_bits() == row[x][k].to_bits()
                                || (g[k].is_nan() && row[x][k].is_nan())
                        });
                        assert!(same, "baseline row n {n} ({x}, {z})");
                    }
                }
            }
        }
    }
}
