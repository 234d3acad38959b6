//! PNG encoders for the CLI outputs: 16-bit height, RGBA8 splat, indexed biomes and the
//! shaded colour-relief preview.

use island_core::Island;

fn encode(
    width: usize,
    height: usize,
    color: png::ColorType,
    depth: png::BitDepth,
    palette: Option<Vec<u8>>,
    data: &[u8],
) -> Result<Vec<u8>, String> {
    let mut buf = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut buf, width as u32, height as u32);
        enc.set_color(color);
        enc.set_depth(depth);
        if let Some(p) = palette {
            enc.set_palette(p);
        }
        let mut w = enc
            .write_header()
            .map_err(|e| format!("PNG encoding failed: {e}"))?;
        w.write_image_data(data)
            .map_err(|e| format!("PNG encoding failed: {e}"))?;
        w.finish()
            .map_err(|e| format!("PNG encoding failed: {e}"))?;
    }
    Ok(buf)
}

/// 16-bit greyscale height map: 0 = `min` metres, 65535 = `max` metres.
pub fn height_png(heights: &[f32], n: usize, min: f32, max: f32) -> Result<Vec<u8>, String> {
    let span = max - min;
    let scale = if span > 0.0 && span.is_finite() {
        65535.0 / span
    } else {
        0.0
    };
    let mut data = Vec::with_capacity(heights.len() * 2);
    for &h in heights {
        let v = ((h - min) * scale).round().clamp(0.0, 65535.0) as u16;
        data.extend_from_slice(&v.to_be_bytes()); // PNG stores 16-bit samples big-endian
    }
    encode(
        n,
        n,
        png::ColorType::Grayscale,
        png::BitDepth::Sixteen,
        None,
        &data,
    )
}

/// RGBA8 splat map: (sand, grass, rock, snow).
pub fn splat_png(splat: &[[u8; 4]], n: usize) -> Result<Vec<u8>, String> {
    encode(
        n,
        n,
        png::ColorType::Rgba,
        png::BitDepth::Eight,
        None,
        splat.as_flattened(),
    )
}

/// Palette colour of biome `i` (the default table's five biomes get fitting colours).
pub fn biome_color(i: usize) -> [u8; 3] {
    const PALETTE: [[u8; 3]; 16] = [
        [150, 200, 90],  // meadow
        [40, 110, 50],   // forest hills
        [130, 120, 115], // mountains
        [190, 150, 90],  // plateau
        [235, 210, 140], // dunes
        [70, 150, 170],
        [170, 80, 150],
        [220, 120, 60],
        [100, 90, 200],
        [200, 60, 60],
        [60, 200, 180],
        [240, 240, 90],
        [120, 60, 40],
        [30, 60, 120],
        [200, 200, 200],
        [90, 40, 110],
    ];
    PALETTE[i % PALETTE.len()]
}

/// Indexed-colour biome map: palette entry `i` = biome `i`.
pub fn biomes_png(biomes: &[u8], n: usize, count: usize) -> Result<Vec<u8>, String> {
    let count = count.clamp(1, 256);
    let palette: Vec<u8> = (0..count).flat_map(biome_color).collect();
    if let Some(&b) = biomes.iter().find(|&&b| b as usize >= count) {
        return Err(format!("biome index {b} out of range for {count} biomes"));
    }
    encode(
        n,
        n,
        png::ColorType::Indexed,
        png::BitDepth::Eight,
        Some(palette),
        biomes,
    )
}

/// Water map: 8-bit grey, one byte per sample: 0 dry, 1 river, 2 lake, 3 sea
/// ([`island_core::water`] kinds).
pub fn water_png(kind: &[u8], n: usize) -> Result<Vec<u8>, String> {
    encode(
        n,
        n,
        png::ColorType::Grayscale,
        png::BitDepth::Eight,
        None,
        kind,
    )
}

/// The preview as an RGB8 PNG.
pub fn preview_png(island: &Island) -> Result<Vec<u8>, String> {
    let n = island_core::preview::full_preview_size(island.field.resolution);
    encode(
        n,
        n,
        png::ColorType::Rgb,
        png::BitDepth::Eight,
        None,
        &island_core::preview::preview_rgb(island)?,
    )
}
