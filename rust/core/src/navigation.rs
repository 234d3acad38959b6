//! Walkable ground for navigation meshes: the island's terrain triangles without water.
//!
//! [`walkable_triangles`] lists the terrain's triangles (node-local metres, the same split as
//! [`Heightfield`]'s meshes) over every grid cell whose four corners are dry ground (no river,
//! lake or sea sample), optionally on a coarser grid (`step` samples per cell). The sea floor,
//! river beds and lake beds are left out entirely; steep slopes stay in (a navigation baker
//! drops them by its agent's maximum slope). Plain data: the Godot layer hands the triangles to
//! `NavigationServer3D` (its source-geometry parser and the asynchronous bake helper).

use crate::heightfield::Heightfield;
use crate::water::{Water, DRY};

/// Most cells per side [`auto_step`] allows (256² cells: 131 072 triangles).
pub const MAX_CELLS_PER_SIDE: usize = 256;

/// The coarsest step that keeps at most [`MAX_CELLS_PER_SIDE`] cells per side.
pub fn auto_step(resolution: usize) -> usize {
    resolution
        .saturating_sub(1)
        .div_ceil(MAX_CELLS_PER_SIDE)
        .max(1)
}

/// Triangles (three node-local vertices each, clockwise seen from above like the render
/// meshes) over the dry cells of `field`, taking every `step`-th sample (`step >= 1`). A cell
/// is dry when its four corners are; with `step > 1` water narrower than a cell between dry
/// corners is not seen.
pub fn walkable_triangles(field: &Heightfield, water: &Water, step: usize) -> Vec<[f32; 3]> {
    let n = field.resolution;
    let step = step.max(1);
    if n < 2 {
        return Vec::new();
    }
    let dry = |ix: usize, iz: usize| water.kind.get(iz * n + ix).is_none_or(|&k| k == DRY);
    let mut lines: Vec<usize> = (0..n).step_by(step).collect();
    if *lines.last().expect("n >= 2") != n - 1 {
        lines.push(n - 1);
    }
    let mut out = Vec::new();
    for zw in lines.windows(2) {
        let (z0, z1) = (zw[0], zw[1]);
        for xw in lines.windows(2) {
            let (x0, x1) = (xw[0], xw[1]);
            if !(dry(x0, z0) && dry(x1, z0) && dry(x0, z1) && dry(x1, z1)) {
                continue;
            }
            let p00 = field.position(x0, z0);
            let p10 = field.position(x1, z0);
            let p01 = field.position(x0, z1);
            let p11 = field.position(x1, z1);
            // The diagonal from (x1, z0) to (x0, z1), as the meshes and colliders.
            out.extend_from_slice(&[p00, p10, p01, p10, p11, p01]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::water::{RIVER, SEA};

    #[test]
    fn wet_cells_are_left_out() {
        let n = 5;
        let field = Heightfield::new(n, 4.0, (0..n * n).map(|i| i as f32).collect());
        let mut water = Water {
            resolution: n,
            level: vec![f32::NAN; n * n],
            kind: vec![DRY; n * n],
        };
        assert_eq!(walkable_triangles(&field, &water, 1).len(), 16 * 6);
        water.kind[0] = SEA; // one corner cell
        water.kind[2 * n + 2] = RIVER; // the centre: four cells
        assert_eq!(walkable_triangles(&field, &water, 1).len(), 11 * 6);
        // Every vertex is a dry sample's position.
        for p in walkable_triangles(&field, &water, 1) {
            let i = field.nearest_index(p[0], p[2]);
            assert_eq!(water.kind[i], DRY);
            assert_eq!(p[1], field.heights[i]);
        }
        // Coarser: 2×2 cells of 2 samples.
        assert_eq!(
            walkable_triangles(&field, &Water::default(), 2).len(),
            4 * 6
        );
        assert_eq!(
            walkable_triangles(&field, &Water::default(), 3).len(),
            4 * 6
        );
    }

    #[test]
    fn auto_step_bounds_the_cells() {
        assert_eq!(auto_step(129), 1);
        assert_eq!(auto_step(257), 1);
        assert_eq!(auto_step(513), 2);
        assert_eq!(auto_step(1025), 4);
        assert_eq!(auto_step(4097), 16);
    }
}
