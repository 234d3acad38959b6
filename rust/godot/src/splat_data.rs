//! Painted splat data: the `SplatPaint` resource saved with the scene, the island's splat maps
//! (two RGBA8 textures read by the terrain shader) and the island's splat queries.
//!
//! The math lives in [`island_core::paint`]; this module only stores, converts and uploads.

use crate::procedural_island::ProceduralIsland;
use godot::classes::image::Format as ImageFormat;
use godot::classes::{IResource, Image, ImageTexture, Resource, ShaderMaterial};
use godot::prelude::*;
use island_core::paint::{self, compose_maps, PaintLayer, Rect, Surface};
use std::borrow::Cow;
use std::cell::RefCell;

/// Shader parameters written by the island (see `terrain.gdshader`).
pub const PARAM_MAP_0: &str = "splat_map_0";
/// Layers 4..7.
pub const PARAM_MAP_1: &str = "splat_map_1";
/// Whether the maps are set (otherwise the shader uses the vertex colours).
pub const PARAM_ENABLED: &str = "splat_maps_enabled";
/// Samples per side of the maps.
pub const PARAM_SIZE: &str = "splat_map_size";

/// User paint of a [ProceduralIsland]'s splat: eight premultiplied layers per heightfield sample
/// kept as an override on top of the generated splat (see `island_core::paint`). Saved with the
/// scene (run-length encoded in [member data]); regenerating keeps it, a new resolution
/// resamples it.
#[derive(GodotClass)]
#[class(tool, base=Resource)]
pub struct SplatPaint {
    base: Base<Resource>,
    /// Encoded paint (storage only; empty = nothing painted).
    #[allow(dead_code)] // read and written through get_data/set_data
    #[export(storage)]
    #[var(get = get_data, set = set_data)]
    data: PackedByteArray,
    /// Decoded paint; `None` until first used or after an empty/invalid `data`.
    pub(crate) layer: Option<PaintLayer>,
    /// Encoding of `layer`, valid until the next change.
    cache: RefCell<Option<PackedByteArray>>,
}

#[godot_api]
impl IResource for SplatPaint {
    fn init(base: Base<Resource>) -> Self {
        SplatPaint {
            base,
            data: PackedByteArray::new(),
            layer: None,
            cache: RefCell::new(None),
        }
    }
}

#[godot_api]
impl SplatPaint {
    /// The encoded paint (what is saved).
    #[func]
    pub fn get_data(&self) -> PackedByteArray {
        let Some(layer) = &self.layer else {
            return PackedByteArray::new();
        };
        if let Some(c) = self.cache.borrow().as_ref() {
            return c.clone();
        }
        let bytes = PackedByteArray::from(layer.encode());
        *self.cache.borrow_mut() = Some(bytes.clone());
        bytes
    }

    /// Replace the paint with encoded data (from [method get_data]). Invalid data is reported
    /// and leaves the paint empty.
    #[func]
    pub fn set_data(&mut self, data: PackedByteArray) {
        *self.cache.borrow_mut() = None;
        if data.is_empty() {
            self.layer = None;
            return;
        }
        match PaintLayer::decode(data.as_slice()) {
            Ok(l) => {
                self.layer = Some(l);
                *self.cache.borrow_mut() = Some(data);
            }
            Err(e) => {
                godot_error!("SplatPaint: {e}");
                self.layer = None;
            }
        }
        self.base_mut().emit_changed();
    }

    /// Samples per side of the paint (0 when nothing was painted yet).
    #[func]
    pub fn get_resolution(&self) -> i32 {
        self.layer.as_ref().map_or(0, |l| l.resolution as i32)
    }

    /// Whether no texel is painted.
    #[func]
    pub fn is_empty(&self) -> bool {
        self.layer.as_ref().is_none_or(|l| l.is_empty())
    }
}

impl SplatPaint {
    /// The paint at `resolution`, created empty or resampled as needed.
    pub(crate) fn layer_mut(&mut self, resolution: usize) -> &mut PaintLayer {
        *self.cache.borrow_mut() = None;
        let l = self
            .layer
            .get_or_insert_with(|| PaintLayer::new(resolution));
        if l.resolution != resolution {
            *l = l.resample(resolution);
        }
        l
    }

    /// Mark the paint as changed (after editing `layer_mut`). Does not emit `changed` (that
    /// would fire for every dab); the encoded data is rebuilt when it is next read (saving).
    pub(crate) fn touched(&mut self) {
        *self.cache.borrow_mut() = None;
    }
}

/// Runtime splat maps of an island.
#[derive(Default)]
pub struct PaintRuntime {
    /// Layers 0..3 and 4..7 as RGBA8 images and textures.
    maps: Option<Maps>,
    /// The maps belong to an older island: recompose them in full.
    stale: bool,
}

struct Maps {
    resolution: usize,
    images: [Gd<Image>; 2],
    textures: [Gd<ImageTexture>; 2],
    /// Map 1 (the user layers) holds only zeros: an unpainted regenerate need not re-upload it.
    zero_map_1: bool,
}

/// Whether the maps of an unpainted island are the generated splat as map 0 and zeros as map 1
/// (what `compose_maps` gives for an empty paint layer when every weight sums to 255, without
/// its per-sample work). False when some sample needs `compose_maps`' requantisation.
fn unpainted_is_splat(splat: &[[u8; 4]], n: usize) -> bool {
    use rayon::prelude::*;
    splat.len() == n * n
        && splat
            .par_iter()
            .all(|s| s.iter().map(|&v| v as u32).sum::<u32>() == 255)
}

/// Map 0's bytes and map 1's (`None`: all zeros).
type MapBytes<'a> = (Cow<'a, [u8]>, Option<Vec<u8>>);

fn rgba_image(w: usize, h: usize, bytes: &[u8]) -> Option<Gd<Image>> {
    Image::create_from_data(
        w as i32,
        h as i32,
        false,
        ImageFormat::RGBA8,
        &PackedByteArray::from(bytes),
    )
}

impl ProceduralIsland {
    /// After a (re)generation: resample the paint to the new resolution and rebuild both maps.
    pub(crate) fn splat_island_changed(&mut self) {
        let Some(n) = self.island.as_ref().map(|i| i.field.resolution) else {
            return;
        };
        if let Some(mut p) = self.splat_paint.clone() {
            let mut b = p.bind_mut();
            if b.layer.as_ref().is_some_and(|l| l.resolution != n) {
                b.layer_mut(n);
                b.touched();
            }
        }
        // Rebuild both maps in full, reusing the images and textures of the same resolution.
        self.paint_rt.stale = true;
        self.update_splat_maps(None);
    }

    /// Recompose the maps in `rect` (None: everything) and upload them.
    pub(crate) fn update_splat_maps(&mut self, rect: Option<Rect>) {
        let Some(island) = self.island.as_ref() else {
            return;
        };
        let n = island.field.resolution;
        let paint_gd = self.splat_paint.clone();
        let guard = paint_gd.as_ref().map(|p| p.bind());
        let painted = guard
            .as_ref()
            .and_then(|g| g.layer.as_ref())
            .filter(|l| l.resolution == n);
        let full = Rect {
            x0: 0,
            z0: 0,
            w: n,
            h: n,
        };
        let same_size = self
            .paint_rt
            .maps
            .as_ref()
            .is_some_and(|m| m.resolution == n);
        let needs_full = !same_size || self.paint_rt.stale;
        let r = if needs_full {
            full
        } else {
            rect.unwrap_or(full)
        };
        if r.is_empty() {
            return;
        }
        // Nothing painted: map 0 is the generated splat as it is (no copy), map 1 all zeros
        // (`None`, made only when an image needs it).
        let composed: Result<MapBytes, _> = match painted {
            None if r == full && unpainted_is_splat(&island.splat, n) => {
                Ok((Cow::Borrowed(bytemuck::cast_slice(&island.splat)), None))
            }
            _ => {
                let empty;
                let layer = match painted {
                    Some(l) => l,
                    None => {
                        empty = PaintLayer::new(n);
                        &empty
                    }
                };
                compose_maps(layer, &island.splat, r).map(|(a, b)| (Cow::Owned(a), Some(b)))
            }
        };
        let (a, b) = match composed {
            Ok(v) => v,
            Err(e) => {
                godot_error!("ProceduralIsland: splat maps: {e}");
                return;
            }
        };
        let unpainted = b.is_none();
        let zeros = || vec![0u8; r.w * r.h * 4];
        self.paint_rt.stale = false;
        if !same_size {
            let (Some(ia), Some(ib)) = (
                rgba_image(n, n, &a),
                rgba_image(n, n, &b.unwrap_or_else(zeros)),
            ) else {
                return;
            };
            let (Some(ta), Some(tb)) = (
                ImageTexture::create_from_image(&ia),
                ImageTexture::create_from_image(&ib),
            ) else {
                return;
            };
            self.paint_rt.maps = Some(Maps {
                resolution: n,
                images: [ia, ib],
                textures: [ta, tb],
                zero_map_1: unpainted,
            });
        } else if let Some(m) = self.paint_rt.maps.as_mut() {
            // Map 1 still all zeros: nothing to upload.
            let b = if unpainted && m.zero_map_1 {
                None
            } else {
                m.zero_map_1 = unpainted;
                Some(b.unwrap_or_else(zeros))
            };
            for (k, bytes) in [Some(a.as_ref()), b.as_deref()].into_iter().enumerate() {
                let Some(bytes) = bytes else { continue };
                if r == full {
                    // Same size and format: replace the pixels and update the texture in place.
                    m.images[k].set_data(
                        n as i32,
                        n as i32,
                        false,
                        ImageFormat::RGBA8,
                        &PackedByteArray::from(bytes),
                    );
                } else {
                    let Some(src) = rgba_image(r.w, r.h, bytes) else {
                        continue;
                    };
                    m.images[k].blit_rect(
                        &src,
                        Rect2i::from_components(0, 0, r.w as i32, r.h as i32),
                        Vector2i::new(r.x0 as i32, r.z0 as i32),
                    );
                }
                m.textures[k].update(&m.images[k]);
            }
        }
        drop(guard);
        self.apply_splat_params();
    }

    /// Point the terrain material(s) at the maps.
    pub(crate) fn apply_splat_params(&mut self) {
        let Some(m) = self.paint_rt.maps.as_ref() else {
            return;
        };
        let mut mats: Vec<Gd<ShaderMaterial>> = Vec::new();
        if let Some(d) = &self.default_material {
            mats.push(d.clone());
        }
        if let Some(t) = self
            .terrain_material
            .as_ref()
            .and_then(|t| t.clone().try_cast::<ShaderMaterial>().ok())
        {
            mats.push(t);
        }
        for mut mat in mats {
            mat.set_shader_parameter(PARAM_MAP_0, &m.textures[0].to_variant());
            mat.set_shader_parameter(PARAM_MAP_1, &m.textures[1].to_variant());
            mat.set_shader_parameter(PARAM_SIZE, &(m.resolution as f32).to_variant());
            mat.set_shader_parameter(PARAM_ENABLED, &true.to_variant());
        }
    }

    /// The island's paint resource, created (and assigned to [member splat_paint]) when missing.
    pub(crate) fn paint_resource(&mut self) -> Gd<SplatPaint> {
        if let Some(p) = &self.splat_paint {
            return p.clone();
        }
        let p = SplatPaint::new_gd();
        self.splat_paint = Some(p.clone());
        p
    }
}

#[godot_api(secondary)]
impl ProceduralIsland {
    /// The eight splat weights (sand, grass, rock, snow, then the four user layers 4..7;
    /// summing to 1) at node-local `(x, z)` metres, bilinearly interpolated between samples and
    /// including the paint of [member splat_paint]. Empty when no island has been generated.
    #[func]
    pub fn get_splat_weights_at(&self, x: f32, z: f32) -> PackedFloat32Array {
        let Some(island) = self.island.as_ref() else {
            return PackedFloat32Array::new();
        };
        let n = island.field.resolution;
        let surf = Surface {
            field: &island.field,
            base: &island.splat,
        };
        let guard = self.splat_paint.as_ref().map(|p| p.bind());
        let empty;
        let layer = match guard
            .as_ref()
            .and_then(|g| g.layer.as_ref())
            .filter(|l| l.resolution == n)
        {
            Some(l) => l,
            None => {
                empty = PaintLayer::new(n);
                &empty
            }
        };
        match paint::weights_at(layer, &surf, x, z) {
            Ok(w) => PackedFloat32Array::from(&w[..]),
            Err(e) => {
                godot_error!("ProceduralIsland.get_splat_weights_at: {e}");
                PackedFloat32Array::new()
            }
        }
    }

    /// Splat map `index` (0: layers 0..3 in r, g, b, a; 1: layers 4..7) as a
    /// `resolution × resolution` RGBA8 image including the paint (a copy), or null when there
    /// is no island or the index is not 0 or 1. Each sample's eight bytes sum to 255.
    #[func]
    pub fn get_splat_map_image(&self, index: i32) -> Option<Gd<Image>> {
        let m = self.paint_rt.maps.as_ref()?;
        let img = m.images.get(usize::try_from(index).ok()?)?;
        Some(img.duplicate_resource())
    }

    /// Splat map texture `index` (0 or 1) that the terrain shader reads (`splat_map_0`,
    /// `splat_map_1`), or null.
    #[func]
    pub fn get_splat_map_texture(&self, index: i32) -> Option<Gd<ImageTexture>> {
        let m = self.paint_rt.maps.as_ref()?;
        m.textures.get(usize::try_from(index).ok()?).cloned()
    }

    /// Rebuild the splat maps from the generated splat and [member splat_paint] (call after
    /// replacing or editing the paint resource by hand; painting with a TerrainBrush does this
    /// itself).
    #[func]
    pub fn refresh_splat_maps(&mut self) {
        self.splat_island_changed();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unpainted_maps_equal_compose_maps_of_an_empty_layer() {
        let n = 33;
        let splat: Vec<[u8; 4]> = (0..n * n)
            .map(|i| {
                let a = (i * 37 % 256) as u8;
                [a, 255 - a, 0, 0]
            })
            .collect();
        // The shortcut (the splat bytes as map 0, zeros as map 1) is what compose_maps gives.
        assert!(unpainted_is_splat(&splat, n));
        let all = Rect {
            x0: 0,
            z0: 0,
            w: n,
            h: n,
        };
        let bytes: &[u8] = bytemuck::cast_slice(&splat);
        assert_eq!(
            (bytes.to_vec(), vec![0u8; n * n * 4]),
            compose_maps(&PaintLayer::new(n), &splat, all).unwrap()
        );
        let mut odd = splat.clone();
        odd[5] = [1, 2, 3, 4];
        assert!(!unpainted_is_splat(&odd, n));
        assert!(!unpainted_is_splat(&splat[1..], n));
    }
}
