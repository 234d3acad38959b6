//! A top-down map of a region of an island world: the deep sea, faint lines on the cell
//! borders, each island's shaded relief (from its generated terrain) or the outline of its
//! square, and dots (players, cameras). Used by the CLI's `island world` and by `IslandWorld`'s
//! inspector map.
//!
//! World x runs to the right and world z down (as the island previews); pixel (0, 0) is the
//! corner at (x0, z0) of the mapped rectangle.

use crate::world::{self, IslandPlacement, WorldParams};
use crate::Island;

/// Background: the preview's deep-sea colour, so an island's square blends into the sea.
pub const SEA: [f32; 3] = [16.0, 48.0, 104.0];
/// Faint cell grid lines drawn on the open sea.
pub const GRID: [f32; 3] = [30.0, 66.0, 124.0];

/// The map picture being drawn: f32 RGB per pixel.
pub struct WorldMap {
    width: usize,
    height: usize,
    rect: [f64; 4],
    px_per_m: f64,
    rgb: Vec<[f32; 3]>,
}

impl WorldMap {
    /// A map of `width` × `height` pixels over `rect` (world x0, z0, x1, z1, metres) at
    /// `px_per_m` pixels per metre, all deep sea.
    pub fn new(width: usize, height: usize, rect: [f64; 4], px_per_m: f64) -> WorldMap {
        WorldMap {
            width,
            height,
            rect,
            px_per_m,
            rgb: vec![SEA; width * height],
        }
    }

    /// World x of pixel column `px`'s centre.
    fn x_of(&self, px: usize) -> f64 {
        self.rect[0] + (px as f64 + 0.5) / self.px_per_m
    }

    /// World z of pixel row `pz`'s centre.
    fn z_of(&self, pz: usize) -> f64 {
        self.rect[1] + (pz as f64 + 0.5) / self.px_per_m
    }

    /// The pixel columns (or rows) whose centres lie in `[a, b)` along an axis starting at
    /// `origin` with `len` pixels.
    fn span(&self, a: f64, b: f64, origin: f64, len: usize) -> std::ops::Range<usize> {
        let to_px = |v: f64| ((v - origin) * self.px_per_m - 0.5).ceil();
        let lo = to_px(a).clamp(0.0, len as f64) as usize;
        let hi = to_px(b).clamp(0.0, len as f64) as usize;
        lo..hi.max(lo)
    }

    /// One-pixel lines on the cell borders inside the map.
    pub fn draw_grid(&mut self, params: &WorldParams) {
        let c = params.cell_size as f64;
        // Skip the grid when cells are under 8 pixels: it would only darken the sea.
        if c * self.px_per_m < 8.0 {
            return;
        }
        let cells = world::cells_in_rect(
            params,
            self.rect[0],
            self.rect[1],
            self.rect[2],
            self.rect[3],
        );
        for cell in cells {
            let o = world::cell_origin(params, cell);
            let px = ((o[0] - self.rect[0]) * self.px_per_m).floor();
            let pz = ((o[1] - self.rect[1]) * self.px_per_m).floor();
            if px >= 0.0 && (px as usize) < self.width {
                for z in 0..self.height {
                    self.rgb[z * self.width + px as usize] = GRID;
                }
            }
            if pz >= 0.0 && (pz as usize) < self.height {
                let row = pz as usize * self.width;
                self.rgb[row..row + self.width].fill(GRID);
            }
        }
    }

    /// Resample the island's preview bilinearly into its square, fading the square's outer
    /// 3 % into the sea so its edge never shows.
    pub fn draw_island(&mut self, isl: &IslandPlacement, island: &Island) -> Result<(), String> {
        let b = isl.bounds();
        let s = isl.world_size as f64;
        let footprint = (s * self.px_per_m).ceil() as usize + 1;
        let side = footprint.clamp(2, island.field.resolution);
        let pre = crate::preview::preview_rgb_sized(island, side)?;
        let at = |x: usize, z: usize| {
            let o = (z * side + x) * 3;
            [pre[o] as f32, pre[o + 1] as f32, pre[o + 2] as f32]
        };
        let fade = 0.03;
        for pz in self.span(b[1], b[3], self.rect[1], self.height) {
            let v = (self.z_of(pz) - b[1]) / s;
            for px in self.span(b[0], b[2], self.rect[0], self.width) {
                let u = (self.x_of(px) - b[0]) / s;
                // Preview pixel p sits at p / (side - 1) of the map (corners on corners).
                let fx = (u * (side - 1) as f64).clamp(0.0, (side - 1) as f64);
                let fz = (v * (side - 1) as f64).clamp(0.0, (side - 1) as f64);
                let (x0, z0) = (fx.floor() as usize, fz.floor() as usize);
                let (x1, z1) = ((x0 + 1).min(side - 1), (z0 + 1).min(side - 1));
                let (tx, tz) = ((fx - x0 as f64) as f32, (fz - z0 as f64) as f32);
                let mix =
                    |a: [f32; 3], b: [f32; 3], t: f32| [0, 1, 2].map(|k| a[k] + (b[k] - a[k]) * t);
                let c = mix(
                    mix(at(x0, z0), at(x1, z0), tx),
                    mix(at(x0, z1), at(x1, z1), tx),
                    tz,
                );
                let edge = u.min(v).min(1.0 - u).min(1.0 - v).max(0.0);
                let w = (edge / fade).min(1.0) as f32;
                let w = w * w * (3.0 - 2.0 * w);
                let dst = &mut self.rgb[pz * self.width + px];
                *dst = mix(*dst, c, w);
            }
        }
        Ok(())
    }

    /// A one-pixel outline of the square `bounds` (world x0, z0, x1, z1) in `color` (RGB 0..255):
    /// an island whose terrain is not at hand (not loaded).
    pub fn draw_outline(&mut self, bounds: [f64; 4], color: [f32; 3]) {
        let xs = self.span(bounds[0], bounds[2], self.rect[0], self.width);
        let zs = self.span(bounds[1], bounds[3], self.rect[1], self.height);
        if xs.is_empty() || zs.is_empty() {
            return;
        }
        for px in xs.clone() {
            self.rgb[zs.start * self.width + px] = color;
            self.rgb[(zs.end - 1) * self.width + px] = color;
        }
        for pz in zs {
            self.rgb[pz * self.width + xs.start] = color;
            self.rgb[pz * self.width + xs.end - 1] = color;
        }
    }

    /// A filled disc of `radius_px` pixels at world (x, z) in `color` (a player, a camera).
    pub fn draw_dot(&mut self, x: f64, z: f64, radius_px: f64, color: [f32; 3]) {
        let cx = (x - self.rect[0]) * self.px_per_m;
        let cz = (z - self.rect[1]) * self.px_per_m;
        let r = radius_px.max(0.5);
        let (x0, x1) = (
            (cx - r).floor().max(0.0),
            (cx + r).ceil().min(self.width as f64),
        );
        let (z0, z1) = (
            (cz - r).floor().max(0.0),
            (cz + r).ceil().min(self.height as f64),
        );
        if x0 >= x1 || z0 >= z1 {
            return;
        }
        for pz in z0 as usize..z1 as usize {
            for px in x0 as usize..x1 as usize {
                let (dx, dz) = (px as f64 + 0.5 - cx, pz as f64 + 0.5 - cz);
                if dx * dx + dz * dz <= r * r {
                    self.rgb[pz * self.width + px] = color;
                }
            }
        }
    }

    /// Width and height, pixels.
    pub fn size(&self) -> (usize, usize) {
        (self.width, self.height)
    }

    /// The pixels as RGB8, row by row from world (x0, z0).
    pub fn rgb8(&self) -> Vec<u8> {
        self.rgb
            .iter()
            .flat_map(|c| c.map(|v| v.round().clamp(0.0, 255.0) as u8))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outline_and_dot_land_where_they_belong() {
        // 100 × 50 px over x 0..1000, z 0..500: 0.1 px per metre.
        let mut m = WorldMap::new(100, 50, [0.0, 0.0, 1000.0, 500.0], 0.1);
        let white = [255.0; 3];
        m.draw_outline([200.0, 100.0, 400.0, 300.0], white);
        let px = |m: &WorldMap, x: usize, z: usize| {
            let o = (z * 100 + x) * 3;
            let b = m.rgb8();
            [b[o], b[o + 1], b[o + 2]]
        };
        assert_eq!(px(&m, 20, 10), [255; 3], "outline corner");
        assert_eq!(px(&m, 39, 29), [255; 3], "opposite corner");
        assert_eq!(px(&m, 30, 20), [16, 48, 104], "inside stays sea");
        m.draw_dot(700.0, 250.0, 2.0, [255.0, 0.0, 0.0]);
        assert_eq!(px(&m, 70, 25), [255, 0, 0]);
        assert_eq!(px(&m, 75, 25), [16, 48, 104]);
        // Off the map: nothing drawn, no panic.
        m.draw_dot(-50.0, -50.0, 3.0, white);
        m.draw_outline([2000.0, 0.0, 3000.0, 100.0], white);
        assert_eq!(m.size(), (100, 50));
    }

    #[test]
    fn an_island_draws_its_relief_in_its_square() {
        let params = WorldParams::default();
        let cell = (0..64)
            .map(|i| [i, 0])
            .find(|c| world::island_at(&params, *c).is_some())
            .expect("an island in the first 64 cells");
        let p = world::island_at(&params, cell).unwrap();
        let ip = world::island_params_with_resolution(&crate::IslandParams::default(), &p, 65);
        let island = crate::generate(&ip).unwrap();
        let b = p.bounds();
        let mut m = WorldMap::new(64, 64, b, 64.0 / (b[2] - b[0]));
        m.draw_island(&p, &island).unwrap();
        let rgb = m.rgb8();
        let centre = ((32 * 64) + 32) * 3;
        assert_ne!(
            &rgb[centre..centre + 3],
            &[16, 48, 104],
            "land in the middle"
        );
        assert_eq!(&rgb[0..3], &[16, 48, 104], "the corner fades into the sea");
    }
}
