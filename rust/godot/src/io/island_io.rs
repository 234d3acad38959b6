//! The island's heights and splat as Godot `Image`s, and heightmap files (`.png` 16-bit, `.r16`,
//! `.r32`, `.exr`) through Godot's `FileAccess` / `Image`. The encodings are in
//! [`crate::io::heightmap_io`].

use crate::io::heightmap_io::{self, HeightmapFormat};
use godot::classes::file_access::ModeFlags;
use godot::classes::image::Format as ImageFormat;
use godot::classes::{FileAccess, Image};
use godot::global::Error;
use godot::prelude::*;
use island_core::{Island, IslandParams};

/// An I/O failure: the error code to return and the message to print.
pub type IoResult<T> = Result<T, (Error, String)>;

/// The heights as a `resolution × resolution` `FORMAT_RF` image in metres.
pub fn heightmap_image(island: &Island) -> Option<Gd<Image>> {
    let n = island.field.resolution as i32;
    let bytes: Vec<u8> = island
        .field
        .heights
        .iter()
        .flat_map(|h| h.to_le_bytes())
        .collect();
    Image::create_from_data(n, n, false, ImageFormat::RF, &PackedByteArray::from(bytes))
}

/// The generated splat weights as a `resolution × resolution` `FORMAT_RGBA8` image.
pub fn splat_image(island: &Island) -> Option<Gd<Image>> {
    let n = island.field.resolution as i32;
    let bytes: Vec<u8> = island.splat.iter().flatten().copied().collect();
    Image::create_from_data(
        n,
        n,
        false,
        ImageFormat::RGBA8,
        &PackedByteArray::from(bytes),
    )
}

/// Write `island`'s heights to `path` (format from the extension).
pub fn export_heightmap(island: Option<&Island>, path: &str) -> IoResult<()> {
    let format = HeightmapFormat::from_path(path).map_err(|m| (Error::ERR_FILE_UNRECOGNIZED, m))?;
    let island = island.ok_or_else(|| {
        (
            Error::ERR_UNCONFIGURED,
            "no island generated yet".to_string(),
        )
    })?;
    let n = island.field.resolution;
    let (lo, hi) = heightmap_io::quantization_range(&island.params);
    let bytes = match format {
        HeightmapFormat::Png16 => heightmap_io::encode_png16(&island.field.heights, n, lo, hi),
        HeightmapFormat::R16 => heightmap_io::encode_r16(&island.field.heights, lo, hi),
        HeightmapFormat::R32 => Ok(heightmap_io::encode_r32(&island.field.heights)),
        HeightmapFormat::Exr => {
            let img = heightmap_image(island).ok_or_else(|| {
                (
                    Error::ERR_CANT_CREATE,
                    "could not create the image".to_string(),
                )
            })?;
            let e = img.save_exr_ex(path).grayscale(true).done();
            return if e == Error::OK {
                Ok(())
            } else {
                Err((e, format!("saving EXR failed: {e:?}")))
            };
        }
    }
    .map_err(|m| (Error::ERR_INVALID_DATA, m))?;
    let mut file = FileAccess::open(path, ModeFlags::WRITE).ok_or_else(|| {
        let e = FileAccess::get_open_error();
        (
            if e == Error::OK {
                Error::ERR_FILE_CANT_WRITE
            } else {
                e
            },
            "cannot open the file for writing".to_string(),
        )
    })?;
    file.store_buffer(&PackedByteArray::from(bytes));
    let e = file.get_error();
    file.close();
    if e != Error::OK && e != Error::ERR_FILE_EOF {
        return Err((e, format!("write failed: {e:?}")));
    }
    Ok(())
}

/// Heights read from `path` for the parameters `p` (exactly `resolution²` samples).
pub fn read_heightmap(p: &IslandParams, path: &str) -> IoResult<Vec<f32>> {
    let format = HeightmapFormat::from_path(path).map_err(|m| (Error::ERR_FILE_UNRECOGNIZED, m))?;
    let n = p.resolution as usize;
    if !FileAccess::file_exists(path) {
        return Err((Error::ERR_FILE_NOT_FOUND, "file not found".into()));
    }
    let (lo, hi) = heightmap_io::quantization_range(p);
    let bad = |m: String| (Error::ERR_FILE_CORRUPT, m);
    let heights = match format {
        HeightmapFormat::Exr => {
            let mut img = Image::load_from_file(path)
                .ok_or_else(|| bad("not a readable EXR image".to_string()))?;
            let (w, h) = (img.get_width() as usize, img.get_height() as usize);
            if (w, h) != (n, n) {
                return Err(bad(format!("image is {w}×{h}, expected {n}×{n}")));
            }
            if img.get_format() != ImageFormat::RF {
                img.convert(ImageFormat::RF);
            }
            let data = img.get_data();
            heightmap_io::decode_r32(data.as_slice(), n).map_err(bad)?
        }
        _ => {
            let bytes = FileAccess::get_file_as_bytes(path);
            let bytes = bytes.as_slice();
            match format {
                HeightmapFormat::Png16 => heightmap_io::decode_png16(bytes, n, lo, hi),
                HeightmapFormat::R16 => heightmap_io::decode_r16(bytes, n, lo, hi),
                _ => heightmap_io::decode_r32(bytes, n),
            }
            .map_err(bad)?
        }
    };
    Ok(heights)
}
