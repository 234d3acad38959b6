//! Gaussian mountain islands.
//!
//! A `cells × cells` grid of candidate cells; each cell keeps a mountain with probability
//! `density` (Bernoulli, hashed), at a random centre inside the cell and with a random peak
//! height. Each mountain's radius grows until it touches its nearest neighbour
//! (`radius = nearest / 2 * (1 - separation)`; negative separation makes neighbours merge). The
//! height field is the sum of the gaussians `a·exp(-d²/(2σ²))`, `σ = radius / 2`, truncated at
//! `3·radius` where they are below 2e-8.

use crate::det_math;
use crate::grid::{par_rows, Grid};
use crate::hash::{hash2, stage_seed, unit};
use crate::params::GaussianParams;

/// One mountain: centre (metres, map corner at 0), radius (metres), peak amplitude.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mountain {
    /// Centre x, metres from the map's x = 0 edge.
    pub x: f32,
    /// Centre z, metres from the map's z = 0 edge.
    pub z: f32,
    /// Radius at which it touches its nearest neighbour, metres.
    pub radius: f32,
    /// Peak height (0.5..1).
    pub amplitude: f32,
}

/// The mountains for a map of `world_size` metres with the settings of [`GaussianParams`]
/// (`cells`, `density`, `separation`); the GPU pass gets them from here.
pub fn gaussian_mountains(
    world_size: f32,
    cells: u32,
    density: f32,
    separation: f32,
    seed: u64,
    tag: u32,
) -> Vec<Mountain> {
    let s = stage_seed(seed, tag);
    let cell = world_size / cells as f32;
    let mut m = Vec::new();
    for j in 0..cells as i32 {
        for i in 0..cells as i32 {
            let h = hash2(i, j, s);
            if unit(h) >= density {
                continue;
            }
            let h1 = hash2(i, j, s ^ 0x1234_5678);
            let h2 = hash2(i, j, s ^ 0x0bad_f00d);
            let h3 = hash2(i, j, s ^ 0x7777_aaaa);
            m.push(Mountain {
                x: (i as f32 + 0.15 + 0.7 * unit(h1)) * cell,
                z: (j as f32 + 0.15 + 0.7 * unit(h2)) * cell,
                radius: 0.0,
                amplitude: 0.5 + 0.5 * unit(h3),
            });
        }
    }
    if m.is_empty() {
        // An empty draw still gives an island: one mountain in the middle.
        m.push(Mountain {
            x: world_size * 0.5,
            z: world_size * 0.5,
            radius: 0.0,
            amplitude: 1.0,
        });
    }
    let n = m.len();
    for a in 0..n {
        let mut nearest = f32::INFINITY;
        for b in 0..n {
            if a != b {
                let (ex, ez) = (m[a].x - m[b].x, m[a].z - m[b].z);
                let d = (ex * ex + ez * ez).sqrt();
                nearest = nearest.min(d);
            }
        }
        if !nearest.is_finite() {
            nearest = world_size * 0.6;
        }
        m[a].radius = (nearest * 0.5 * (1.0 - separation)).max(cell * 0.05);
    }
    m
}

/// One mountain's factor `exp(-dx²/(2σ²))` at the sample columns `x0..x0 + f.len()` (a
/// little wider than its `3·radius` support; the support test is made per sample).
struct Columns {
    x0: usize,
    f: Vec<f32>,
}

/// Sum of gaussian mountains (the `gaussian_islands.wgsl` pass) over `g`, with the cells,
/// density and separation of `p` and the stage seed of `(g.seed, tag)`.
///
/// Each sample within `3·radius` of a mountain gets `a·(exp(-dx²/(2σ²))·exp(-dz²/(2σ²)))`
/// (mountains added in order): the separable form needs one exponential per mountain and column
/// plus one per mountain and row instead of one per sample and mountain, and differs from
/// `a·exp(-d²/(2σ²))` (the WGSL pass) by a few ULPs.
///
/// Output is unnormalised (≥ 0), row-major.
pub fn gaussian_islands(g: &Grid, p: &GaussianParams, tag: u32) -> Vec<f32> {
    let (resolution, world_size) = (g.resolution, g.world_size);
    let mountains = gaussian_mountains(world_size, p.cells, p.density, p.separation, g.seed, tag);
    let spacing = world_size / (resolution - 1) as f32;
    let two_s2 = |m: &Mountain| {
        let sigma = 0.5 * m.radius;
        2.0 * sigma * sigma
    };
    let columns: Vec<Columns> = mountains
        .iter()
        .map(|m| {
            let cut = 3.0 * m.radius;
            let last = (resolution - 1) as f32;
            let x0 = ((m.x - cut) / spacing).floor() - 1.0;
            let x1 = ((m.x + cut) / spacing).ceil() + 1.0;
            let (x0, x1) = (x0.clamp(0.0, last) as usize, x1.clamp(0.0, last) as usize);
            let f = (x0..=x1)
                .map(|x| {
                    let dx = x as f32 * spacing - m.x;
                    det_math::exp(-(dx * dx) / two_s2(m))
                })
                .collect();
            Columns { x0, f }
        })
        .collect();
    let mut out = vec![0.0f32; resolution * resolution];
    par_rows(&mut out, resolution, |z, row| {
        let pz = z as f32 * spacing;
        for (m, c) in mountains.iter().zip(&columns) {
            let cut = 3.0 * m.radius;
            // Only mountains whose support reaches this row.
            if (m.z - pz).abs() > cut {
                continue;
            }
            let dz = pz - m.z;
            let ez = det_math::exp(-(dz * dz) / two_s2(m));
            for (k, &ex) in c.f.iter().enumerate() {
                let x = c.x0 + k;
                let dx = x as f32 * spacing - m.x;
                if dx * dx + dz * dz <= cut * cut {
                    row[x] += m.amplitude * (ex * ez);
                }
            }
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radii_touch_nearest_neighbour() {
        let m = gaussian_mountains(1000.0, 6, 0.8, 0.0, 4, 1);
        assert!(m.len() > 3);
        for a in &m {
            let nearest = m
                .iter()
                .filter(|b| !std::ptr::eq(*b, a))
                .map(|b| ((a.x - b.x).powi(2) + (a.z - b.z).powi(2)).sqrt())
                .fold(f32::INFINITY, f32::min);
            assert!((a.radius * 2.0 - nearest).abs() < 1e-3);
        }
        let merged = gaussian_mountains(1000.0, 6, 0.8, -0.5, 4, 1);
        assert!(merged[0].radius > m[0].radius);
    }

    #[test]
    fn density_controls_count() {
        let few = gaussian_mountains(1000.0, 16, 0.1, 0.0, 9, 1).len();
        let many = gaussian_mountains(1000.0, 16, 0.9, 0.0, 9, 1).len();
        assert!(few < 60 && many > 180, "{few} {many}");
    }

    #[test]
    fn peaks_at_centres() {
        let res = 129;
        let gp = GaussianParams {
            cells: 3,
            density: 1.0,
            separation: 0.0,
        };
        let f = gaussian_islands(&Grid::new(res, 1280.0, 5), &gp, 1);
        let m = gaussian_mountains(1280.0, 3, 1.0, 0.0, 5, 1);
        let sp = 1280.0 / 128.0;
        let c = &m[0];
        let (ix, iz) = ((c.x / sp).round() as usize, (c.z / sp).round() as usize);
        let here = f[iz * res + ix];
        assert!(here > 0.5 * c.amplitude);
        let far = f[0];
        assert!(here > far);
    }
}
