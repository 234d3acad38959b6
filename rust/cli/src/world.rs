//! `island world`: the layout of an endless island world over a rectangle, as a JSON list
//! and a top-down map picture.
//!
//! The islands come from [`island_core::world::island_at`]; each one on the map is generated
//! on the CPU at a low resolution ([`island_core::world::island_params_with_resolution`]) and
//! drawn with [`island_core::preview::preview_rgb_sized`]. The map has world x to the right and
//! world z down (as the island previews), one pixel per `metres_per_pixel` metres.

use island_core::world::{self, IslandPlacement, WorldParams};
use island_core::world_map::WorldMap;
use island_core::IslandParams;
use std::path::PathBuf;

/// Most cells `island world` accepts in one rectangle.
const MAX_CELLS: i128 = 65_536;
/// Largest map edge, pixels.
const MAX_MAP_SIZE: u32 = 16_384;

#[derive(clap::Args, Debug)]
pub struct WorldArgs {
    /// World seed: the layout and every island's seed derive from it.
    #[arg(long, value_name = "N")]
    seed: u64,
    /// Rectangle to map: world x and z of two corners, metres, `X0,Z0,X1,Z1` with X0 < X1 and
    /// Z0 < Z1; negative values are fine (`--rect -8192,-8192,0,0`).
    #[arg(long, value_name = "X0,Z0,X1,Z1", allow_hyphen_values = true)]
    rect: String,
    /// Output directory (created when missing): islands.json and map.png.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Cell edge, metres; each cell holds at most one island and must exceed --size-max.
    #[arg(long, value_name = "M", default_value_t = world::DEFAULT_CELL_SIZE)]
    cell_size: f32,
    /// Probability that a cell has an island, 0..1.
    #[arg(long, value_name = "P", default_value_t = world::DEFAULT_ISLAND_CHANCE)]
    chance: f32,
    /// Smallest island map edge, metres.
    #[arg(long, value_name = "M", default_value_t = world::DEFAULT_ISLAND_SIZE_MIN)]
    size_min: f32,
    /// Largest island map edge, metres.
    #[arg(long, value_name = "M", default_value_t = world::DEFAULT_ISLAND_SIZE_MAX)]
    size_max: f32,
    /// Full-detail heightfield density, samples per metre (sets each island's listed
    /// resolution; the map itself uses --island-resolution).
    #[arg(long, value_name = "S", default_value_t = world::DEFAULT_SAMPLES_PER_METRE)]
    samples_per_metre: f32,
    /// Edge of map.png along the rectangle's longer side, pixels (the other side keeps the
    /// rectangle's aspect).
    #[arg(long, value_name = "PX", default_value_t = 1024)]
    map_size: u32,
    /// Samples per side of the low-detail generation drawn on the map: 2^n+1 from 33 to 8193
    /// (lowered to an island's own full resolution where that is smaller).
    #[arg(long, value_name = "N", default_value_t = 129)]
    island_resolution: u32,
}

fn parse_rect(s: &str) -> Result<[f64; 4], String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.len() != 4 {
        return Err(format!(
            "--rect must be four numbers X0,Z0,X1,Z1, got `{s}`"
        ));
    }
    let mut r = [0.0f64; 4];
    for (v, p) in r.iter_mut().zip(&parts) {
        *v = p
            .parse::<f64>()
            .map_err(|_| format!("--rect: `{p}` is not a number (in `{s}`)"))?;
        if !v.is_finite() {
            return Err(format!("--rect: `{p}` is not a finite number (in `{s}`)"));
        }
    }
    if r[2] <= r[0] || r[3] <= r[1] {
        return Err(format!(
            "--rect must have X0 < X1 and Z0 < Z1, got x {}..{} and z {}..{}",
            r[0], r[2], r[1], r[3]
        ));
    }
    Ok(r)
}

/// The map's pixel size: `map_size` along the longer side of the rectangle.
fn map_dims(rect: [f64; 4], map_size: u32) -> (usize, usize, f64) {
    let (w, h) = (rect[2] - rect[0], rect[3] - rect[1]);
    let px_per_m = map_size as f64 / w.max(h);
    let side = |m: f64| ((m * px_per_m).round() as usize).clamp(1, map_size as usize);
    (side(w), side(h), px_per_m)
}

/// Does the island's square overlap the rectangle (with a positive area)?
fn overlaps(isl: &IslandPlacement, rect: [f64; 4]) -> bool {
    let b = isl.bounds();
    b[0] < rect[2] && rect[0] < b[2] && b[1] < rect[3] && rect[1] < b[3]
}

pub fn run(args: &WorldArgs) -> Result<(), String> {
    let rect = parse_rect(&args.rect)?;
    let params = WorldParams {
        world_seed: args.seed,
        cell_size: args.cell_size,
        island_chance: args.chance,
        island_size_min: args.size_min,
        island_size_max: args.size_max,
        samples_per_metre: args.samples_per_metre,
    };
    params.validate().map_err(|e| e.to_string())?;
    let r = args.island_resolution;
    if !(33..=8193).contains(&r) || !(r - 1).is_power_of_two() {
        return Err(format!(
            "--island-resolution must be 2^n+1 between 33 and 8193 (33, 65, 129, ...), got {r}"
        ));
    }
    if args.map_size == 0 || args.map_size > MAX_MAP_SIZE {
        return Err(format!(
            "--map-size must be 1..={MAX_MAP_SIZE} pixels, got {}",
            args.map_size
        ));
    }
    // The cells `cells_in_rect` will list, counted first: the rectangle is half-open, so one
    // ending exactly on a cell border does not reach into the next cell.
    let c0 = world::cell_at(&params, rect[0], rect[1]);
    let mut c1 = world::cell_at(&params, rect[2], rect[3]);
    let o1 = world::cell_origin(&params, c1);
    for k in 0..2 {
        if c1[k] > c0[k] && rect[k + 2] <= o1[k] {
            c1[k] -= 1;
        }
    }
    let count = (c1[0] as i128 - c0[0] as i128 + 1) * (c1[1] as i128 - c0[1] as i128 + 1);
    if count > MAX_CELLS {
        return Err(format!(
            "--rect spans {count} cells of {} m; at most {MAX_CELLS} (use a smaller rectangle or larger cells)",
            params.cell_size
        ));
    }
    crate::prepare_out_dir(&args.out)?;

    let islands: Vec<IslandPlacement> =
        world::cells_in_rect(&params, rect[0], rect[1], rect[2], rect[3])
            .into_iter()
            .filter_map(|c| world::island_at(&params, c))
            .filter(|isl| overlaps(isl, rect))
            .collect();

    let (width, height, px_per_m) = map_dims(rect, args.map_size);
    let mut map = WorldMap::new(width, height, rect, px_per_m);
    map.draw_grid(&params);
    let base = IslandParams::default();
    let mut entries = Vec::with_capacity(islands.len());
    for isl in &islands {
        let res = world::coarse_resolution(isl, r as usize);
        let p = world::island_params_with_resolution(&base, isl, res);
        let island = island_core::generate(&p).map_err(|e| {
            format!(
                "island of cell [{}, {}] (seed {}): {e}",
                isl.cell[0], isl.cell[1], isl.seed
            )
        })?;
        map.draw_island(isl, &island)?;
        let mut entry =
            serde_json::to_value(isl).map_err(|e| format!("cannot serialise an island: {e}"))?;
        entry["bounds"] = serde_json::json!(isl.bounds());
        entry["map_resolution"] = serde_json::json!(res);
        entry["land_fraction"] = serde_json::json!(island.stats.land_fraction);
        entries.push(entry);
    }

    let doc = serde_json::json!({
        "world": params,
        "rect": rect,
        "cells": count as u64,
        "islands": entries,
        "map_png": {
            "width": width,
            "height": height,
            "metres_per_pixel": 1.0 / px_per_m,
            "orientation": "pixel (0, 0) at world (x0, z0); world x to the right, z down",
            "encoding": "RGB8 shaded relief of every island (island_resolution samples per side), deep sea elsewhere, faint lines on cell borders",
        },
        "island_resolution": r,
    });
    let json = serde_json::to_string_pretty(&doc)
        .map_err(|e| format!("cannot serialise islands.json: {e}"))?;
    let written: Vec<PathBuf> = vec![args.out.join("islands.json"), args.out.join("map.png")];
    crate::write_file(&written[0], json.as_bytes())?;
    crate::write_file(&written[1], &map.png()?)?;
    println!(
        "island: world seed {} over x {}..{} z {}..{}: {} cells, {} islands, map {}x{} px",
        args.seed,
        rect[0],
        rect[2],
        rect[1],
        rect[3],
        count,
        islands.len(),
        width,
        height
    );
    for f in &written {
        println!("  wrote {}", f.display());
    }
    Ok(())
}

/// The map as a PNG file.
trait CliPng {
    fn png(&self) -> Result<Vec<u8>, String>;
}

impl CliPng for WorldMap {
    fn png(&self) -> Result<Vec<u8>, String> {
        let bytes = self.rgb8();
        let (width, height) = self.size();
        let mut buf = Vec::new();
        {
            let fail = |e: png::EncodingError| format!("PNG encoding failed: {e}");
            let mut enc = png::Encoder::new(&mut buf, width as u32, height as u32);
            enc.set_color(png::ColorType::Rgb);
            enc.set_depth(png::BitDepth::Eight);
            let mut w = enc.write_header().map_err(fail)?;
            w.write_image_data(&bytes).map_err(fail)?;
            w.finish().map_err(fail)?;
        }
        Ok(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rect_parsing() {
        assert_eq!(parse_rect("0,0,10,20").unwrap(), [0.0, 0.0, 10.0, 20.0]);
        assert_eq!(parse_rect(" -5, -6 ,1,2").unwrap(), [-5.0, -6.0, 1.0, 2.0]);
        assert!(parse_rect("0,0,10").unwrap_err().contains("four numbers"));
        assert!(parse_rect("0,0,x,1").unwrap_err().contains("not a number"));
        assert!(parse_rect("0,0,inf,1").unwrap_err().contains("finite"));
        assert!(parse_rect("5,0,1,1").unwrap_err().contains("X0 < X1"));
        assert!(parse_rect("0,0,1,0").unwrap_err().contains("Z0 < Z1"));
    }

    #[test]
    fn map_dims_keep_the_aspect() {
        assert_eq!(map_dims([0.0, 0.0, 100.0, 50.0], 1000).0, 1000);
        assert_eq!(map_dims([0.0, 0.0, 100.0, 50.0], 1000).1, 500);
        assert_eq!(map_dims([0.0, 0.0, 1.0, 1e9], 100).0, 1);
    }
}
