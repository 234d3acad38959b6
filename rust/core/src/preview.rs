//! Top-down shaded colour relief of an island: the CLI's `preview.png` and the editor's
//! inspector header picture.
//!
//! Water is tinted by depth, land coloured by the generated splat weights (sand, grass, rock,
//! snow) and lit from the north-west with the surface normals; a thin darker line marks the
//! shore. Map x runs to the image's right and map z down (pixel `(x, z)` as in the heightmap).

use crate::det_math;
use crate::pipeline::Island;
use crate::water;

/// Largest preview edge, pixels ([`preview_rgb_sized`] rejects larger sizes).
pub const MAX_PREVIEW_SIZE: usize = 8192;

fn lerp3(a: [f32; 3], b: [f32; 3], t: f32) -> [f32; 3] {
    [
        a[0] + (b[0] - a[0]) * t,
        a[1] + (b[1] - a[1]) * t,
        a[2] + (b[2] - a[2]) * t,
    ]
}

/// Colour of one land pixel before shading.
fn ground_color(h: f32, splat: [u8; 4], max_height: f32) -> [f32; 3] {
    const SAND: [f32; 3] = [222.0, 204.0, 152.0];
    const GRASS_LOW: [f32; 3] = [106.0, 156.0, 66.0];
    const GRASS_HIGH: [f32; 3] = [68.0, 112.0, 52.0];
    const ROCK: [f32; 3] = [132.0, 121.0, 108.0];
    const SNOW: [f32; 3] = [246.0, 248.0, 252.0];
    let t = (h / (0.6 * max_height)).clamp(0.0, 1.0);
    let grass = lerp3(GRASS_LOW, GRASS_HIGH, t);
    let w = splat.map(|v| v as f32 / 255.0);
    let mut c = [0.0f32; 3];
    for k in 0..3 {
        c[k] = w[0] * SAND[k] + w[1] * grass[k] + w[2] * ROCK[k] + w[3] * SNOW[k];
    }
    c
}

/// Colour of a water pixel of depth `depth` metres (> 0).
fn water_color(depth: f32, sea_depth: f32) -> [f32; 3] {
    const SHALLOW: [f32; 3] = [110.0, 196.0, 210.0];
    const DEEP: [f32; 3] = [16.0, 48.0, 104.0];
    let t = (depth / sea_depth.max(1e-3)).clamp(0.0, 1.0);
    let t = det_math::powf(t, 0.55);
    lerp3(SHALLOW, DEEP, t)
}

/// Shaded colour of heightfield sample `i`.
fn sample_color(island: &Island, i: usize) -> [u8; 3] {
    let f = &island.field;
    let p = &island.params;
    // Light from the north-west (map top-left), 40° above the horizon. Map x → image right,
    // map z → image down, so north-west is (-x, -z).
    let elev = 40f32.to_radians();
    let (lx, ly, lz) = (
        -det_math::cos(elev) / 2f32.sqrt(),
        det_math::sin(elev),
        -det_math::cos(elev) / 2f32.sqrt(),
    );
    // Vertical exaggeration so gentle relief still reads.
    let exaggeration = 1.6;
    let h = f.heights[i];
    let nrm = f.normals[i];
    let (nx, ny, nz) = (nrm[0] * exaggeration, nrm[1], nrm[2] * exaggeration);
    let len = (nx * nx + ny * ny + nz * nz).sqrt().max(1e-6);
    let lambert = ((nx * lx + ny * ly + nz * lz) / len).max(0.0) / ly; // 1 on flat ground
    let kind = island.water.kind.get(i).copied().unwrap_or(water::DRY);
    let c = if kind == water::LAKE || kind == water::RIVER {
        // Fresh water: depth below its surface, a shallower tint than the sea's.
        let depth = (island.water.level[i] - h).max(0.0);
        let c = water_color(depth + 0.15 * p.coast.sea_depth, p.coast.sea_depth);
        c.map(|v| v * (0.85 + 0.15 * lambert.min(1.3)))
    } else if h <= 0.0 {
        let c = water_color(-h, p.coast.sea_depth);
        // The sea floor shows a little through shallow water.
        let through = 0.25 * (1.0 - (-h / p.coast.sea_depth).clamp(0.0, 1.0));
        c.map(|v| v * (1.0 - through + through * lambert.min(1.3)))
    } else {
        let shade = (0.30 + 0.70 * lambert).min(1.35);
        let splat = island.splat.get(i).copied().unwrap_or([0, 255, 0, 0]);
        ground_color(h, splat, p.max_height).map(|v| v * shade)
    };
    c.map(|v| v.round().clamp(0.0, 255.0) as u8)
}

/// Edge of the full-detail preview of a `resolution`² heightfield: the resolution itself, or
/// every other sample (`(resolution - 1) / 2 + 1`) above [`MAX_PREVIEW_SIZE`] (8193² → 4097²), so
/// the documented maximum resolution has a preview too.
pub fn full_preview_size(resolution: usize) -> usize {
    let mut size = resolution.max(1);
    while size > MAX_PREVIEW_SIZE {
        size = (size - 1) / 2 + 1;
    }
    size
}

/// The full-detail preview, [`full_preview_size`]² RGB8 pixels, row by row.
pub fn preview_rgb(island: &Island) -> Result<Vec<u8>, String> {
    preview_rgb_sized(island, full_preview_size(island.field.resolution))
}

/// The preview as `size × size` RGB8 pixels (row by row): pixel `(px, pz)` shows the nearest
/// heightfield sample, so `size == resolution` is the full-detail picture and smaller sizes
/// are quick thumbnails. Errors when `size` is 0 or above [`MAX_PREVIEW_SIZE`], or the island
/// has no samples.
pub fn preview_rgb_sized(island: &Island, size: usize) -> Result<Vec<u8>, String> {
    let n = island.field.resolution;
    if size == 0 || size > MAX_PREVIEW_SIZE {
        return Err(format!(
            "preview size must be 1..={MAX_PREVIEW_SIZE}, got {size}"
        ));
    }
    if n == 0 || island.field.heights.len() < n * n || island.field.normals.len() < n * n {
        return Err("the island has no heightfield".into());
    }
    // Output pixel → nearest sample column/row (the corners map onto the corners).
    let pick: Vec<usize> = (0..size)
        .map(|p| {
            if size == 1 {
                n / 2
            } else {
                ((p as f64 * (n - 1) as f64 / (size - 1) as f64).round() as usize).min(n - 1)
            }
        })
        .collect();
    let mut rgb = Vec::with_capacity(size * size * 3);
    for &z in &pick {
        for &x in &pick {
            rgb.extend(sample_color(island, z * n + x));
        }
    }
    // Thin darker line along the shore so the coast reads at a glance.
    let f = &island.field;
    let is_land = |px: usize, pz: usize| f.heights[pick[pz] * n + pick[px]] > 0.0;
    for pz in 0..size {
        for px in 0..size {
            if !is_land(px, pz) {
                continue;
            }
            let shore = (px > 0 && !is_land(px - 1, pz))
                || (px + 1 < size && !is_land(px + 1, pz))
                || (pz > 0 && !is_land(px, pz - 1))
                || (pz + 1 < size && !is_land(px, pz + 1));
            if shore {
                let o = (pz * size + px) * 3;
                for k in 0..3 {
                    rgb[o + k] = (rgb[o + k] as f32 * 0.8) as u8;
                }
            }
        }
    }
    Ok(rgb)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::IslandParams;

    fn island() -> Island {
        let p = IslandParams {
            resolution: 129,
            chunk_size: 32,
            world_size: 1024.0,
            ..IslandParams::default()
        };
        crate::pipeline::generate(&p).expect("valid parameters")
    }

    #[test]
    fn the_documented_maximum_resolution_has_a_full_preview_size() {
        assert_eq!(full_preview_size(129), 129);
        assert_eq!(full_preview_size(4097), 4097);
        // 8193 is above the largest preview: every other sample, exactly.
        assert_eq!(full_preview_size(8193), 4097);
        assert!(full_preview_size(MAX_PREVIEW_SIZE + 1) <= MAX_PREVIEW_SIZE);
    }

    #[test]
    fn full_size_matches_every_sample_and_thumbnails_pick_the_nearest() {
        let isl = island();
        let n = isl.field.resolution;
        let full = preview_rgb(&isl).unwrap();
        assert_eq!(full.len(), n * n * 3);
        // A thumbnail of (n-1)/2+1 pixels takes every second sample; away from the shore
        // line (which depends on the neighbours at that size) the colours are the same.
        let s = (n - 1) / 2 + 1;
        let half = preview_rgb_sized(&isl, s).unwrap();
        assert_eq!(half.len(), s * s * 3);
        let c = s / 2;
        let (fx, fz) = (2 * c, 2 * c);
        let land = isl.field.heights[fz * n + fx] > 0.0;
        assert!(land, "the centre of the default island is land");
        // Corner (deep sea, never a shore pixel) and centre.
        assert_eq!(half[0..3], full[0..3]);
        let shore_free = |px: usize, pz: usize| {
            let at = |x: usize, z: usize| isl.field.heights[z * n + x] > 0.0;
            [
                (0i64, 0i64),
                (-2, 0),
                (2, 0),
                (0, -2),
                (0, 2),
                (-1, 0),
                (1, 0),
                (0, -1),
                (0, 1),
            ]
            .iter()
            .all(|&(dx, dz)| at((px as i64 + dx) as usize, (pz as i64 + dz) as usize) == at(px, pz))
        };
        assert!(shore_free(fx, fz));
        assert_eq!(
            half[(c * s + c) * 3..(c * s + c) * 3 + 3],
            full[(fz * n + fx) * 3..(fz * n + fx) * 3 + 3]
        );
    }

    #[test]
    fn land_and_sea_pixels_differ() {
        let isl = island();
        let s = 64;
        let img = preview_rgb_sized(&isl, s).unwrap();
        let n = isl.field.resolution;
        let mut sea = Vec::new();
        let mut land = Vec::new();
        for pz in 0..s {
            for px in 0..s {
                let x = (px * (n - 1) + (s - 1) / 2) / (s - 1);
                let z = (pz * (n - 1) + (s - 1) / 2) / (s - 1);
                let o = (pz * s + px) * 3;
                let c = [img[o] as i32, img[o + 1] as i32, img[o + 2] as i32];
                if isl.field.heights[z * n + x] > 1.0 {
                    land.push(c);
                } else if isl.field.heights[z * n + x] < -1.0 {
                    sea.push(c);
                }
            }
        }
        assert!(!land.is_empty() && !sea.is_empty());
        // Sea pixels are blue-dominant, land pixels are not.
        assert!(sea.iter().all(|c| c[2] > c[0]), "sea is bluish");
        let bluish_land = land.iter().filter(|c| c[2] > c[0] && c[2] > c[1]).count();
        assert!(
            bluish_land * 20 < land.len(),
            "land is mostly not blue: {bluish_land}/{}",
            land.len()
        );
    }

    #[test]
    fn bad_sizes_are_errors() {
        let isl = island();
        assert!(preview_rgb_sized(&isl, 0).is_err());
        assert!(preview_rgb_sized(&isl, MAX_PREVIEW_SIZE + 1).is_err());
        assert_eq!(preview_rgb_sized(&isl, 1).unwrap().len(), 3);
    }
}
