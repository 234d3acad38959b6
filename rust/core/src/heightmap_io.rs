//! Engine-free encoding and decoding of heightmap files (used by
//! `ProceduralIsland.export_heightmap` / `import_heightmap`).
//!
//! Formats, chosen by the file extension:
//!
//! | extension | content |
//! |-----------|---------|
//! | `.png`    | 16-bit greyscale PNG, `resolution²` pixels, row `z`, column `x` |
//! | `.r16`    | raw little-endian `u16`, `resolution²` values, row-major `z * resolution + x` |
//! | `.r32`    | raw little-endian `f32` heights in metres, same layout |
//! | `.exr`    | OpenEXR through Godot's `Image` (`FORMAT_RF`, metres); handled by the node |
//!
//! PNG16 and R16 store heights quantised over a fixed range derived from the parameters,
//! [`quantization_range`]: `0` is `-(sea_depth + 4·fine_amplitude)` and `65535` is
//! `max_height + beach_height + 4·fine_amplitude`. That range contains every height the
//! generator can produce (biome roughness is at most 4), so a generated island round-trips with
//! an error of at most half a step (`(hi - lo) / 131070`, ≈ 1.2 mm with the defaults). Heights
//! outside the range (e.g. imported ones) are clamped on export.

use crate::params::{IslandParams, MAX_RESOLUTION, MIN_RESOLUTION};

/// File format of a heightmap, chosen by the file extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeightmapFormat {
    /// 16-bit greyscale PNG, quantised over [`quantization_range`].
    Png16,
    /// Raw little-endian u16, quantised over [`quantization_range`].
    R16,
    /// Raw little-endian f32, metres.
    R32,
    /// OpenEXR, one float channel in metres (through Godot's `Image`).
    Exr,
}

impl HeightmapFormat {
    /// Format of `path` by its extension (case-insensitive).
    pub fn from_path(path: &str) -> Result<HeightmapFormat, String> {
        let ext = path
            .rsplit_once('.')
            .map(|(_, e)| e.to_ascii_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "png" => Ok(HeightmapFormat::Png16),
            "r16" => Ok(HeightmapFormat::R16),
            "r32" => Ok(HeightmapFormat::R32),
            "exr" => Ok(HeightmapFormat::Exr),
            _ => Err(format!(
                "unsupported heightmap extension in \"{path}\": use .png (16-bit), .r16, .r32 or .exr"
            )),
        }
    }
}

/// Heights (metres) mapped to 0 and 65535 by the 16-bit formats, for the given parameters.
pub fn quantization_range(p: &IslandParams) -> (f32, f32) {
    let fine = 4.0 * p.coast.fine_amplitude;
    (
        -(p.coast.sea_depth + fine),
        p.max_height + p.coast.beach_height + fine,
    )
}

/// Height in metres → 16-bit code over `lo..hi` (clamped, rounded to nearest).
pub fn quantize(h: f32, lo: f32, hi: f32) -> u16 {
    let t = ((h - lo) / (hi - lo)).clamp(0.0, 1.0);
    let t = if t.is_finite() { t } else { 0.0 };
    (t * 65535.0).round() as u16
}

/// 16-bit code → height in metres over `lo..hi`.
pub fn dequantize(v: u16, lo: f32, hi: f32) -> f32 {
    lo + (v as f32 / 65535.0) * (hi - lo)
}

fn check_len(heights: &[f32], resolution: usize) -> Result<(), String> {
    if resolution < 2 || heights.len() != resolution * resolution {
        return Err(format!(
            "expected {resolution}² heights, got {}",
            heights.len()
        ));
    }
    Ok(())
}

fn check_range(lo: f32, hi: f32) -> Result<(), String> {
    if !(lo.is_finite() && hi.is_finite() && hi > lo) {
        return Err(format!("invalid quantisation range {lo}..{hi}"));
    }
    Ok(())
}

/// Encode heights as raw little-endian u16 (R16).
pub fn encode_r16(heights: &[f32], lo: f32, hi: f32) -> Result<Vec<u8>, String> {
    check_range(lo, hi)?;
    Ok(heights
        .iter()
        .flat_map(|&h| quantize(h, lo, hi).to_le_bytes())
        .collect())
}

/// Decode raw little-endian u16 (R16) of exactly `resolution²` samples.
pub fn decode_r16(bytes: &[u8], resolution: usize, lo: f32, hi: f32) -> Result<Vec<f32>, String> {
    check_range(lo, hi)?;
    let want = resolution * resolution * 2;
    if bytes.len() != want {
        return Err(format!(
            "R16 file has {} bytes, expected {want} ({resolution}×{resolution} little-endian u16){}",
            bytes.len(),
            guess_side(bytes.len(), 2)
        ));
    }
    Ok(bytes
        .chunks_exact(2)
        .map(|c| dequantize(u16::from_le_bytes([c[0], c[1]]), lo, hi))
        .collect())
}

/// Encode heights as raw little-endian f32 metres (R32).
pub fn encode_r32(heights: &[f32]) -> Vec<u8> {
    heights.iter().flat_map(|h| h.to_le_bytes()).collect()
}

/// Largest absolute height accepted on import, metres.
pub const MAX_ABS_HEIGHT: f32 = 1.0e6;

/// Check that decoded heights are finite and within ±[`MAX_ABS_HEIGHT`].
pub fn check_heights(heights: &[f32]) -> Result<(), String> {
    if let Some((i, h)) = heights
        .iter()
        .enumerate()
        .find(|(_, h)| !h.is_finite() || h.abs() > MAX_ABS_HEIGHT)
    {
        return Err(format!(
            "height #{i} is {h}: heights must be finite and within ±{MAX_ABS_HEIGHT} m"
        ));
    }
    Ok(())
}

/// Decode raw little-endian f32 metres (R32) of exactly `resolution²` samples.
pub fn decode_r32(bytes: &[u8], resolution: usize) -> Result<Vec<f32>, String> {
    let want = resolution * resolution * 4;
    if bytes.len() != want {
        return Err(format!(
            "R32 file has {} bytes, expected {want} ({resolution}×{resolution} little-endian f32){}",
            bytes.len(),
            guess_side(bytes.len(), 4)
        ));
    }
    let h: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    check_heights(&h)?;
    Ok(h)
}

/// Whether `side` is a resolution the generator accepts (2^n + 1 within the limits).
fn is_valid_resolution(side: usize) -> bool {
    (MIN_RESOLUTION as usize..=MAX_RESOLUTION as usize).contains(&side)
        && (side - 1).is_power_of_two()
}

/// A hint for a file of the wrong size: which resolution it would fit, but only when that is a
/// resolution the generator accepts; otherwise what it holds and why it cannot be used.
fn side_hint(side: usize) -> String {
    if is_valid_resolution(side) {
        format!("; the file holds {side}×{side} samples: set `resolution` to {side} first")
    } else {
        format!(
            "; the file holds {side}×{side} samples, which is not a resolution this node \
             supports (2^n+1 from {MIN_RESOLUTION} to {MAX_RESOLUTION}): resample it first"
        )
    }
}

fn guess_side(len: usize, bpp: usize) -> String {
    if len == 0 {
        return "; the file is empty".to_string();
    }
    if !len.is_multiple_of(bpp) {
        return String::new();
    }
    let n = len / bpp;
    let s = (n as f64).sqrt().round() as usize;
    if s * s == n {
        side_hint(s)
    } else {
        String::new()
    }
}

/// Encode heights as a 16-bit greyscale PNG.
pub fn encode_png16(
    heights: &[f32],
    resolution: usize,
    lo: f32,
    hi: f32,
) -> Result<Vec<u8>, String> {
    check_len(heights, resolution)?;
    check_range(lo, hi)?;
    let mut data = Vec::with_capacity(heights.len() * 2);
    for &h in heights {
        data.extend_from_slice(&quantize(h, lo, hi).to_be_bytes());
    }
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, resolution as u32, resolution as u32);
        enc.set_color(png::ColorType::Grayscale);
        enc.set_depth(png::BitDepth::Sixteen);
        let mut w = enc
            .write_header()
            .map_err(|e| format!("PNG encoding failed: {e}"))?;
        w.write_image_data(&data)
            .map_err(|e| format!("PNG encoding failed: {e}"))?;
        w.finish()
            .map_err(|e| format!("PNG encoding failed: {e}"))?;
    }
    Ok(out)
}

/// Decode a 16-bit greyscale PNG of exactly `resolution × resolution` pixels.
pub fn decode_png16(bytes: &[u8], resolution: usize, lo: f32, hi: f32) -> Result<Vec<f32>, String> {
    check_range(lo, hi)?;
    let mut dec = png::Decoder::new(std::io::Cursor::new(bytes));
    dec.set_transformations(png::Transformations::IDENTITY);
    let mut reader = dec
        .read_info()
        .map_err(|e| format!("not a readable PNG file: {e}"))?;
    let info = reader.info();
    let (w, h) = (info.width as usize, info.height as usize);
    if (w, h) != (resolution, resolution) {
        return Err(format!(
            "PNG is {w}×{h} pixels, expected {resolution}×{resolution}{}",
            if w == h { side_hint(w) } else { String::new() }
        ));
    }
    if info.color_type != png::ColorType::Grayscale || info.bit_depth != png::BitDepth::Sixteen {
        return Err(format!(
            "PNG must be 16-bit greyscale, this one is {:?} with {} bits per channel",
            info.color_type, info.bit_depth as u8
        ));
    }
    let mut buf = vec![0u8; reader.output_buffer_size()];
    let frame = reader
        .next_frame(&mut buf)
        .map_err(|e| format!("corrupt PNG data: {e}"))?;
    let row = frame.line_size;
    if row < w * 2 || buf.len() < row * h {
        return Err("corrupt PNG data: short image".into());
    }
    let mut out = Vec::with_capacity(w * h);
    for z in 0..h {
        let line = &buf[z * row..z * row + w * 2];
        out.extend(
            line.chunks_exact(2)
                .map(|c| dequantize(u16::from_be_bytes([c[0], c[1]]), lo, hi)),
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(n: usize) -> Vec<f32> {
        (0..n * n)
            .map(|i| ((i % n) as f32 * 0.37).sin() * 40.0 + (i / n) as f32 * 0.5 - 10.0)
            .collect()
    }

    #[test]
    fn format_by_extension() {
        assert_eq!(
            HeightmapFormat::from_path("user://a/b.PNG"),
            Ok(HeightmapFormat::Png16)
        );
        assert_eq!(
            HeightmapFormat::from_path("x.r16"),
            Ok(HeightmapFormat::R16)
        );
        assert_eq!(
            HeightmapFormat::from_path("x.r32"),
            Ok(HeightmapFormat::R32)
        );
        assert_eq!(
            HeightmapFormat::from_path("x.exr"),
            Ok(HeightmapFormat::Exr)
        );
        assert!(HeightmapFormat::from_path("x.jpg")
            .unwrap_err()
            .contains(".r16"));
        assert!(HeightmapFormat::from_path("noext").is_err());
    }

    #[test]
    fn default_range_contains_all_generated_heights() {
        let p = IslandParams {
            resolution: 129,
            ..Default::default()
        };
        let island = crate::pipeline::generate(&p).unwrap();
        let (lo, hi) = quantization_range(&p);
        assert!(
            island.stats.min_height >= lo && island.stats.max_height <= hi,
            "{lo}..{hi} vs {:?}",
            island.stats
        );
    }

    #[test]
    fn quantize_ends_and_clamps() {
        assert_eq!(quantize(-10.0, -10.0, 10.0), 0);
        assert_eq!(quantize(10.0, -10.0, 10.0), 65535);
        assert_eq!(quantize(1e9, -10.0, 10.0), 65535);
        assert_eq!(quantize(f32::NAN, -10.0, 10.0), 0);
        assert_eq!(dequantize(65535, -10.0, 10.0), 10.0);
    }

    #[test]
    fn r16_and_png16_round_trip_within_half_a_step() {
        let n = 33;
        let h = sample(n);
        let (lo, hi) = (-60.0, 60.0);
        let step = (hi - lo) / 65535.0;
        let r16 = encode_r16(&h, lo, hi).unwrap();
        assert_eq!(r16.len(), n * n * 2);
        let png = encode_png16(&h, n, lo, hi).unwrap();
        for back in [
            decode_r16(&r16, n, lo, hi).unwrap(),
            decode_png16(&png, n, lo, hi).unwrap(),
        ] {
            for (a, b) in h.iter().zip(&back) {
                assert!((a - b).abs() <= step * 0.5 + 1e-5, "{a} vs {b}");
            }
        }
    }

    #[test]
    fn r32_round_trip_is_exact() {
        let h = sample(17);
        assert_eq!(decode_r32(&encode_r32(&h), 17).unwrap(), h);
    }

    #[test]
    fn wrong_sizes_and_corrupt_data_are_errors() {
        let h = sample(33);
        let e = decode_r32(&encode_r32(&h), 65).unwrap_err();
        assert!(e.contains("set `resolution` to 33"), "{e}");
        assert!(decode_r16(&[1, 2, 3], 33, 0.0, 1.0).is_err());
        let png = encode_png16(&h, 33, 0.0, 1.0).unwrap();
        assert!(decode_png16(&png, 65, 0.0, 1.0)
            .unwrap_err()
            .contains("33×33"));
        assert!(decode_png16(&png[..png.len() / 2], 33, 0.0, 1.0).is_err());
        assert!(decode_png16(b"garbage", 33, 0.0, 1.0).is_err());
        let mut bad = encode_r32(&h);
        bad[4..8].copy_from_slice(&f32::NAN.to_le_bytes());
        assert!(decode_r32(&bad, 33).unwrap_err().contains("#1"));
        assert!(encode_r16(&h, 1.0, 1.0).is_err());
    }

    #[test]
    fn size_hints_only_name_resolutions_the_node_accepts() {
        // An empty file: no "set resolution to 0".
        let e = decode_r32(&[], 33).unwrap_err();
        assert!(e.contains("empty") && !e.contains("to 0"), "{e}");
        let e = decode_r16(&[], 33, 0.0, 1.0).unwrap_err();
        assert!(e.contains("empty") && !e.contains("to 0"), "{e}");
        // A square file of a side the node cannot use (64 is not 2^n+1, 1 is below the minimum).
        let e = decode_r16(&vec![0; 64 * 64 * 2], 33, 0.0, 1.0).unwrap_err();
        assert!(
            e.contains("64×64") && e.contains("not a resolution") && !e.contains("to 64"),
            "{e}"
        );
        let e = decode_r32(&[0; 4], 33).unwrap_err();
        assert!(!e.contains("to 1 "), "{e}");
        // A valid side is suggested.
        let e = decode_r32(&vec![0; 65 * 65 * 4], 33).unwrap_err();
        assert!(e.contains("set `resolution` to 65 first"), "{e}");
        // A 16-bit PNG 65536 pixels wide: the header alone is enough to refuse it.
        let mut png = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut png, 65536, 1);
            enc.set_color(png::ColorType::Grayscale);
            enc.set_depth(png::BitDepth::Sixteen);
            let mut w = enc.write_header().unwrap();
            w.write_image_data(&vec![0; 65536 * 2]).unwrap();
        }
        let e = decode_png16(&png, 33, 0.0, 1.0).unwrap_err();
        assert!(!e.contains("to 65536"), "{e}");
        let mut png = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut png, 4096, 4096);
            enc.set_color(png::ColorType::Grayscale);
            enc.set_depth(png::BitDepth::Sixteen);
            let mut w = enc.write_header().unwrap();
            w.write_image_data(&vec![0; 4096 * 4096 * 2]).unwrap();
        }
        let e = decode_png16(&png, 33, 0.0, 1.0).unwrap_err();
        assert!(
            e.contains("4096×4096") && e.contains("not a resolution"),
            "{e}"
        );
    }

    #[test]
    fn png8_is_rejected_with_a_clear_message() {
        let mut out = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut out, 33, 33);
            enc.set_color(png::ColorType::Grayscale);
            enc.set_depth(png::BitDepth::Eight);
            let mut w = enc.write_header().unwrap();
            w.write_image_data(&[0u8; 33 * 33]).unwrap();
        }
        assert!(decode_png16(&out, 33, 0.0, 1.0)
            .unwrap_err()
            .contains("16-bit greyscale"));
    }
}
