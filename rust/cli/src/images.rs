//! PNG encoders for the CLI outputs: 16-bit height, RGBA8 splat, indexed biomes and the
//! shaded colour-relief preview.

use island_core::water;
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
    let data: Vec<u8> = splat.iter().flatten().copied().collect();
    encode(
        n,
        n,
        png::ColorType::Rgba,
        png::BitDepth::Eight,
        None,
        &data,
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

fn lerp3(a: [f32; 3], b: [f32; 3], t: f32) -> [f32; 3] {
    [
        a[0] + (b[0] - a[0]) * t,
        a[1] + (b[1] - a[1]) * t,
        a[2] + (b[2] - a[2]) * t,
    ]
}

/// Colour of one preview pixel before shading.
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
    let t = (depth / sea_depth.max(1e-3)).clamp(0.0, 1.0).powf(0.55);
    lerp3(SHALLOW, DEEP, t)
}

/// Colour relief with hillshade: water shaded by depth, land coloured by the splat weights
/// (sand, grass, rock, snow) and lit from the north-west using the surface normals.
pub fn preview_rgb(island: &Island) -> Vec<u8> {
    let f = &island.field;
    let n = f.resolution;
    let p = &island.params;
    // Light from the north-west (map top-left), 40° above the horizon. Map x → image right,
    // map z → image down, so north-west is (-x, -z).
    let elev = 40f32.to_radians();
    let (lx, ly, lz) = (
        -elev.cos() / 2f32.sqrt(),
        elev.sin(),
        -elev.cos() / 2f32.sqrt(),
    );
    // Vertical exaggeration so gentle relief still reads; stronger on coarse grids.
    let exaggeration = 1.6;
    let mut rgb = Vec::with_capacity(n * n * 3);
    for i in 0..n * n {
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
            ground_color(h, island.splat[i], p.max_height).map(|v| v * shade)
        };
        rgb.extend(c.map(|v| v.round().clamp(0.0, 255.0) as u8));
    }
    // Thin darker line along the shore so the coast reads at a glance.
    let is_land = |x: usize, z: usize| f.heights[z * n + x] > 0.0;
    for z in 0..n {
        for x in 0..n {
            if !is_land(x, z) {
                continue;
            }
            let shore = (x > 0 && !is_land(x - 1, z))
                || (x + 1 < n && !is_land(x + 1, z))
                || (z > 0 && !is_land(x, z - 1))
                || (z + 1 < n && !is_land(x, z + 1));
            if shore {
                let o = (z * n + x) * 3;
                for k in 0..3 {
                    rgb[o + k] = (rgb[o + k] as f32 * 0.8) as u8;
                }
            }
        }
    }
    rgb
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
    let n = island.field.resolution;
    encode(
        n,
        n,
        png::ColorType::Rgb,
        png::BitDepth::Eight,
        None,
        &preview_rgb(island),
    )
}
