//! Smooth normals and slopes from the global heightfield (central differences in metres).

use crate::grid::par_rows;

/// Unit normal at every sample (+Y up), from central differences (one-sided at the border).
pub fn compute_normals(heights: &[f32], resolution: usize, spacing: f32) -> Vec<[f32; 3]> {
    let n = resolution;
    let mut out = vec![[0.0f32; 3]; n * n];
    par_rows(&mut out, n, |z, row| {
        for (x, o) in row.iter_mut().enumerate() {
            *o = normal_at_sample(heights, n, spacing, x, z);
        }
    });
    out
}

/// Normal at sample `(x, z)`.
#[inline(always)]
pub fn normal_at_sample(h: &[f32], n: usize, spacing: f32, x: usize, z: usize) -> [f32; 3] {
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
    normal[1].clamp(-1.0, 1.0).acos().to_degrees()
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
}
