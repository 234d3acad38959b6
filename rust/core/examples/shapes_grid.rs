//! Render `docs/shapes.png`: a 4×4 grid of the shaded previews of 16 consecutive seeds with
//! the default parameters (island shape AUTO), so the range of outlines shows at a glance.
//!
//! ```text
//! cargo run -p island_core --example shapes_grid -- [OUT.png] [FIRST_SEED] [RESOLUTION] [SHAPE]
//! ```
//! Defaults: `docs/shapes.png`, seed 1, resolution 513, shape `auto`. Prints each seed's
//! resolved shape.

use island_core::params::IslandShape;
use island_core::preview::preview_rgb_sized;
use island_core::{generate, IslandParams};

const CELL: usize = 256;
const GAP: usize = 4;

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = args
        .first()
        .cloned()
        .unwrap_or_else(|| "docs/shapes.png".into());
    let first: u64 = args
        .get(1)
        .map_or(Ok(1), |s| s.parse())
        .map_err(|e| format!("{e}"))?;
    let resolution: u32 = args
        .get(2)
        .map_or(Ok(513), |s| s.parse())
        .map_err(|e| format!("{e}"))?;
    let shape = match args.get(3) {
        Some(s) => IslandShape::from_name(s).ok_or(format!("unknown shape {s}"))?,
        None => IslandShape::Auto,
    };
    let side = 4 * CELL + 5 * GAP;
    let mut img = vec![255u8; side * side * 3];
    for k in 0..16u64 {
        let mut p = IslandParams {
            seed: first + k,
            resolution,
            ..Default::default()
        };
        p.shape.shape = shape;
        if p.resolution < 1025 {
            p.chunk_size = 32;
        }
        let resolved = island_core::shape::resolve(&p);
        let island = generate(&p).map_err(|e| e.to_string())?;
        println!(
            "seed {:3}: {:11} land {:.3}",
            p.seed,
            resolved.shape.name(),
            island.stats.land_fraction
        );
        let rgb = preview_rgb_sized(&island, CELL)?;
        let (cx, cy) = ((k % 4) as usize, (k / 4) as usize);
        let (ox, oy) = (GAP + cx * (CELL + GAP), GAP + cy * (CELL + GAP));
        for y in 0..CELL {
            let dst = ((oy + y) * side + ox) * 3;
            img[dst..dst + CELL * 3].copy_from_slice(&rgb[y * CELL * 3..(y + 1) * CELL * 3]);
        }
    }
    let file = std::fs::File::create(&out).map_err(|e| format!("{out}: {e}"))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), side as u32, side as u32);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut w = enc.write_header().map_err(|e| e.to_string())?;
    w.write_image_data(&img).map_err(|e| e.to_string())?;
    println!("wrote {out}");
    Ok(())
}
