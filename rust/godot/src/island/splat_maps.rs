//! The island's splat maps: two RGBA8 textures (layers 0..3 and 4..7) composed from the
//! generated splat and the painted [`SplatPaint`], read by the terrain shader; and the splat
//! queries.
//!
//! The math lives in [`island_core::paint`]; this module only converts and uploads.

use crate::brush::splat_paint::SplatPaint;
use godot::classes::image::Format as ImageFormat;
use godot::classes::{Image, ImageTexture, ShaderMaterial};
use godot::prelude::*;
use island_core::paint::{self, compose_maps, PaintLayer, Rect, Surface};
use island_core::Island;
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

/// Runtime splat maps of an island.
#[derive(Default)]
pub struct SplatMaps {
    /// Layers 0..3 and 4..7 as RGBA8 images and textures.
    maps: Option<Maps>,
    /// The maps belong to an older island: recompose them in full.
    stale: bool,
    /// Map 0's image, texture and spare pixel array for the resolution a running generation
    /// will install, made in quiet frames before it finishes (see [`SplatMaps::prepare_spare`]).
    pending: Option<Pending>,
    /// Map 0's next pixels copied ahead (see [`SplatMaps::precopy`]): source address, bytes
    /// copied so far, and the address of the array they went into.
    precopied: Option<(usize, usize, usize)>,
}

/// Bytes [`SplatMaps::precopy`] copies per call: 8 MiB, about 1.5 ms on the 2-core VM of
/// docs/benchmarks.md (a 2049² map takes two frames).
const PRECOPY_STEP_BYTES: usize = 8 << 20;

/// Map 0 made ahead for a new resolution: creating a 2049² texture and its pixel arrays in the
/// install frame took 15–17 ms (an `IslandWorld` island installs at a size it never had), most
/// of it page faults of 32 MB of fresh memory. Made in quiet frames instead: two pixel arrays
/// grown by [`PENDING_STEP_BYTES`] a frame (a grown array keeps its pages: only the new tail is
/// touched), then the image over the first and its texture; the second is the spare that the
/// install frame copies the map into.
struct Pending {
    resolution: usize,
    arrays: [PackedByteArray; 2],
    texture: Option<(Gd<Image>, Gd<ImageTexture>)>,
}

/// Bytes a pending pixel array grows by per quiet frame (128 pages: about half a millisecond
/// of page faults on the 2-core VM of docs/benchmarks.md, 3.3 µs a page).
const PENDING_STEP_BYTES: usize = 1 << 19;

/// Most bytes of freed map pixel arrays kept for maps made later ([`recycle`]).
const POOL_MAX_BYTES: usize = 96 << 20;

thread_local! {
    /// Pixel arrays of freed maps (main thread only), given to the next maps of the same size:
    /// an `IslandWorld` frees and makes islands of a few sizes all the time, and memory
    /// already mapped costs no page faults.
    static POOL: RefCell<Vec<PackedByteArray>> = const { RefCell::new(Vec::new()) };
}

fn on_main_thread() -> bool {
    let os = godot::classes::Os::singleton();
    os.get_thread_caller_id() == os.get_main_thread_id()
}

/// Keep `a` (the pixels of a freed map of at least [`PENDING_MIN_SIDE`]²) for [`pooled`].
fn recycle(a: PackedByteArray) {
    let len = a.len();
    if len < PENDING_MIN_SIDE * PENDING_MIN_SIDE * 4 || !on_main_thread() {
        return;
    }
    POOL.with_borrow_mut(|pool| {
        let held: usize = pool.iter().map(|p| p.len()).sum();
        if held + len <= POOL_MAX_BYTES {
            pool.push(a);
        }
    });
}

/// A kept pixel array of `len` bytes, if any.
fn pooled(len: usize) -> Option<PackedByteArray> {
    if !on_main_thread() {
        return None;
    }
    POOL.with_borrow_mut(|pool| {
        let i = pool.iter().position(|p| p.len() == len)?;
        Some(pool.swap_remove(i))
    })
}

/// Keep `count` pixel arrays for maps of `resolution`² (made now: call it while a scene loads,
/// not in a game frame). `IslandWorld` does, for the sizes its islands will have, so that even
/// its first islands install without making 16 MB of fresh memory in a frame.
pub fn warm_pool(resolution: usize, count: usize) {
    let len = resolution * resolution * 4;
    let have = POOL.with_borrow(|pool| pool.iter().filter(|p| p.len() == len).count());
    for _ in have..count {
        let mut a = PackedByteArray::new();
        a.resize(len);
        recycle(a);
    }
}

/// Forget the kept pixel arrays (when the extension unloads, before Godot's own shutdown).
pub fn release_pool() {
    POOL.with_borrow_mut(|p| p.clear());
}

impl Drop for Maps {
    fn drop(&mut self) {
        let full = self.resolution * self.resolution * 4;
        for k in 0..2 {
            if let Some(a) = self.spare[k].take() {
                recycle(a);
            }
            if self.images[k].get_width() as usize == self.resolution {
                // Shared with the image until it is freed (right after this).
                let data = self.images[k].get_data();
                if data.len() == full {
                    recycle(data);
                }
            }
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        let full = self.resolution * self.resolution * 4;
        for a in self.arrays.iter_mut() {
            if a.len() == full {
                recycle(std::mem::take(a));
            }
        }
        if let Some((image, _)) = &self.texture {
            recycle(image.get_data());
        }
    }
}

/// Maps from this many samples per side on are made ahead ([`SplatMaps::prepare_spare`]);
/// smaller ones cost well under a millisecond in the install frame.
const PENDING_MIN_SIDE: usize = 513;

/// The largest map (bytes) for which [`Maps`] keeps a spare pixel array: 4097² (64 MiB).
const SPARE_MAX_BYTES: usize = 4097 * 4097 * 4;

struct Maps {
    resolution: usize,
    images: [Gd<Image>; 2],
    textures: [Gd<ImageTexture>; 2],
    /// Map 1 (the user layers) holds only zeros: it is 1×1 (see `update`).
    zero_map_1: bool,
    /// Each map's previous pixels, no longer shared with its image: the next full write copies
    /// into them (memory already mapped) instead of into a new array, which at 1025² cost 1–4
    /// ms of page faults on the main thread in the install frame. Kept up to
    /// [`SPARE_MAX_BYTES`].
    spare: [Option<PackedByteArray>; 2],
}

/// Whether the maps of an unpainted island are the generated splat as map 0 and zeros as map 1
/// (what `compose_maps` gives for an empty paint layer when every weight sums to 255, without
/// its per-sample work). False when some sample needs `compose_maps`' requantisation, or a road
/// is painted with a user layer (map 1 is not all zeros).
pub(crate) fn unpainted_is_splat(base: paint::Base, n: usize) -> bool {
    use rayon::prelude::*;
    base.upper.is_none()
        && base.lower.len() == n * n
        && base.lower.par_chunks(1 << 14).all(|c| {
            // A fold without early exit: vectorised.
            c.iter().fold(true, |ok, s| {
                ok & (s.iter().map(|&v| v as u32).sum::<u32>() == 255)
            })
        })
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

impl Maps {
    /// Write `bytes` (the texels of `r`) into map `k` and update its texture. `precopied`: the
    /// address of a spare array that already holds `bytes` (see [`SplatMaps::precopy`]).
    fn write(&mut self, k: usize, r: Rect, bytes: &[u8], precopied: Option<usize>) {
        let n = self.resolution;
        if r == Rect::full(n) {
            // Same size and format: replace the pixels and update the texture in place.
            let pba = match self.spare[k].take() {
                Some(s)
                    if s.len() == bytes.len()
                        && precopied == Some(s.as_slice().as_ptr() as usize) =>
                {
                    s
                }
                Some(mut s) if s.len() == bytes.len() => {
                    // Not shared (the image let go of it): written in place, no copy on write.
                    s.as_mut_slice().copy_from_slice(bytes);
                    s
                }
                _ => PackedByteArray::from(bytes),
            };
            // The image's pixels (shared, not copied): once it takes `pba`, only this holds them.
            let old = self.images[k].get_data();
            self.images[k].set_data(n as i32, n as i32, false, ImageFormat::RGBA8, &pba);
            if bytes.len() <= SPARE_MAX_BYTES {
                self.spare[k] = Some(old);
            }
        } else {
            let Some(src) = rgba_image(r.w, r.h, bytes) else {
                return;
            };
            self.images[k].blit_rect(
                &src,
                Rect2i::from_components(0, 0, r.w as i32, r.h as i32),
                Vector2i::new(r.x0 as i32, r.z0 as i32),
            );
        }
        self.textures[k].update(&self.images[k]);
    }

    /// Replace map 1 by `image` (another size: the texture is recreated with it).
    fn set_map_1(&mut self, image: Option<Gd<Image>>, zero: bool) {
        let Some(image) = image else {
            return;
        };
        self.textures[1].set_image(&image);
        self.images[1] = image;
        self.zero_map_1 = zero;
        self.spare[1] = None;
    }
}

impl SplatMaps {
    /// Copy part of `island`'s generated splat (map 0 of an unpainted island whose weights
    /// need no requantisation, `plain`) into the array the install's full update of map 0 will
    /// take, [`PRECOPY_STEP_BYTES`] per call, so that the install frame does not copy it (3 ms
    /// at 2049²). Returns whether it copied something (the caller installs in a later frame);
    /// false when all is copied or nothing can be copied ahead (no array of that size ready).
    /// Called in the frames between the last chunk and the install.
    pub fn precopy(&mut self, island: &Island, plain: bool) -> bool {
        if !plain {
            return false;
        }
        let n = island.field.resolution;
        let src: &[u8] = bytemuck::cast_slice(&island.splat);
        let target = match (self.pending.as_mut(), self.maps.as_mut()) {
            (Some(p), _) if p.resolution == n && p.texture.is_some() => &mut p.arrays[1],
            (_, Some(m)) if m.resolution == n => match m.spare[0].as_mut() {
                Some(a) => a,
                None => return false,
            },
            _ => return false,
        };
        if target.len() != src.len() {
            return false;
        }
        let dst = target.as_slice().as_ptr() as usize;
        let from = match self.precopied {
            Some((s, done, d)) if s == src.as_ptr() as usize && d == dst => done,
            _ => 0,
        };
        if from == src.len() {
            return false;
        }
        let to = (from + PRECOPY_STEP_BYTES).min(src.len());
        target.as_mut_slice()[from..to].copy_from_slice(&src[from..to]);
        self.precopied = Some((src.as_ptr() as usize, to, dst));
        true
    }

    /// Forget a copy made ahead (a new build starts: its island may reuse the old one's memory).
    pub fn forget_precopy(&mut self) {
        self.precopied = None;
    }

    /// Make the spare pixel arrays of the maps in use (see `Maps::spare`) if they are missing,
    /// and when the running generation (`resolution` samples per side) will install maps of
    /// another size, map 0's image, texture and spare array for it, one of them per call:
    /// called in frames with little else to do (while a generation runs on the worker), so that
    /// the install frame only copies the pixels.
    pub fn prepare_spare(&mut self, resolution: usize) {
        let n = resolution;
        let same = self.maps.as_ref().is_some_and(|m| m.resolution == n);
        if !same && (PENDING_MIN_SIDE..=4097).contains(&n) {
            if self.pending.as_ref().is_some_and(|p| p.resolution != n) {
                self.pending = None;
            }
            let bytes = n * n * 4;
            let p = self.pending.get_or_insert_with(|| Pending {
                resolution: n,
                arrays: [(); 2].map(|_| pooled(bytes).unwrap_or_default()),
                texture: None,
            });
            if p.texture.is_some() {
                // Ready.
            } else if let Some(a) = p.arrays.iter_mut().find(|a| a.len() < bytes) {
                a.resize((a.len() + PENDING_STEP_BYTES).min(bytes));
            } else {
                // The image takes the first array as it is (shared, not copied).
                let image = Image::create_from_data(
                    n as i32,
                    n as i32,
                    false,
                    ImageFormat::RGBA8,
                    &std::mem::take(&mut p.arrays[0]),
                );
                let texture = image.as_ref().and_then(ImageTexture::create_from_image);
                match (image, texture) {
                    (Some(i), Some(t)) => p.texture = Some((i, t)),
                    _ => self.pending = None,
                }
            }
            return;
        }
        let Some(m) = self.maps.as_mut() else {
            return;
        };
        let bytes = m.resolution * m.resolution * 4;
        if bytes > SPARE_MAX_BYTES {
            return;
        }
        for k in 0..2 {
            if m.spare[k].is_none() && !(k == 1 && m.zero_map_1) {
                let mut a = PackedByteArray::new();
                a.resize(bytes);
                m.spare[k] = Some(a);
            }
        }
    }

    /// After a (re)generation: show the paint at the island's resolution (a resampled view when
    /// it was painted at another one; the painted data is not changed) and rebuild both maps,
    /// then point `materials` at them. `plain`: what [`unpainted_is_splat`] says of `island`
    /// when the generation's worker found it (off the main thread); `None`: found here.
    pub fn island_changed(
        &mut self,
        island: &Island,
        paint: Option<&Gd<SplatPaint>>,
        materials: &[Gd<ShaderMaterial>],
        plain: Option<bool>,
    ) {
        let n = island.field.resolution;
        if let Some(p) = paint {
            let mut p = p.clone();
            let mut b = p.bind_mut();
            b.prepare_view(n);
        }
        // Rebuild both maps in full, reusing the images and textures of the same resolution.
        self.stale = true;
        self.update(island, paint, None, materials, plain);
    }

    /// Recompose the maps in `rect` (None: everything), upload them and point `materials` at
    /// them (`plain`: see [`Self::island_changed`]).
    pub fn update(
        &mut self,
        island: &Island,
        paint: Option<&Gd<SplatPaint>>,
        rect: Option<Rect>,
        materials: &[Gd<ShaderMaterial>],
        plain: Option<bool>,
    ) {
        let n = island.field.resolution;
        let guard = paint.map(|p| p.bind());
        let painted = guard.as_ref().and_then(|g| g.layer_for(n));
        let full = Rect::full(n);
        let same_size = self.maps.as_ref().is_some_and(|m| m.resolution == n);
        let needs_full = !same_size || self.stale;
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
            None if r == full
                && plain.unwrap_or_else(|| unpainted_is_splat(island.base_splat(), n)) =>
            {
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
                compose_maps(layer, island.base_splat(), r).map(|(a, b)| (Cow::Owned(a), Some(b)))
            }
        };
        let (a, b) = match composed {
            Ok(v) => v,
            Err(e) => {
                godot_error!("ProceduralIsland: splat maps: {e}");
                return;
            }
        };
        // Map 0 copied ahead in full from exactly these bytes: the array it went into.
        let pre = match self.precopied.take() {
            Some((src, done, dst)) if src == a.as_ptr() as usize && done == a.len() => Some(dst),
            _ => None,
        };
        // Map 1 (the user layers 4..7) is a 1×1 black image while it is all zeros (an unpainted
        // island): a full one would hold `resolution²` zero texels twice (image and texture),
        // 537 MB at 8193². The shader samples it clamped, so it reads zeros everywhere.
        let zero_b = b.as_ref().is_none_or(|b| b.iter().all(|&v| v == 0));
        self.stale = false;
        if !same_size {
            let ib = if zero_b {
                rgba_image(1, 1, &[0; 4])
            } else {
                b.as_deref().and_then(|b| rgba_image(n, n, b))
            };
            let Some(ib) = ib else {
                return;
            };
            let Some(tb) = ImageTexture::create_from_image(&ib) else {
                return;
            };
            // Map 0 made ahead in quiet frames (complete): only its pixels are copied now.
            let ready = self.pending.take().and_then(|mut p| {
                if p.resolution != n || p.arrays[1].len() != n * n * 4 {
                    return None;
                }
                let (image, texture) = p.texture.take()?;
                Some((image, texture, std::mem::take(&mut p.arrays[1])))
            });
            if let Some((image, texture, spare)) = ready {
                let mut m = Maps {
                    resolution: n,
                    images: [image, ib],
                    textures: [texture, tb],
                    zero_map_1: zero_b,
                    spare: [Some(spare), None],
                };
                m.write(0, full, &a, pre);
                self.maps = Some(m);
            } else {
                let Some(ia) = rgba_image(n, n, &a) else {
                    return;
                };
                let Some(ta) = ImageTexture::create_from_image(&ia) else {
                    return;
                };
                self.maps = Some(Maps {
                    resolution: n,
                    images: [ia, ib],
                    textures: [ta, tb],
                    zero_map_1: zero_b,
                    spare: [None, None],
                });
            }
        } else if let Some(m) = self.maps.as_mut() {
            m.write(0, r, &a, pre);
            match (m.zero_map_1, zero_b) {
                // Still all zeros: nothing to upload.
                (true, true) => {}
                (false, true) if r == full => m.set_map_1(rgba_image(1, 1, &[0; 4]), true),
                (zero, _) => {
                    if zero {
                        // The first paint of a user layer: a full-size map 1.
                        m.set_map_1(rgba_image(n, n, &vec![0u8; n * n * 4]), false);
                    }
                    let zeros;
                    let b = match b.as_deref() {
                        Some(b) => b,
                        None => {
                            zeros = vec![0u8; r.w * r.h * 4];
                            &zeros
                        }
                    };
                    m.write(1, r, b, None);
                }
            }
        }
        drop(guard);
        self.apply(materials);
    }

    /// Point the terrain material(s) at the maps.
    pub fn apply(&self, materials: &[Gd<ShaderMaterial>]) {
        let Some(m) = self.maps.as_ref() else {
            return;
        };
        for mat in materials {
            let mut mat = mat.clone();
            mat.set_shader_parameter(PARAM_MAP_0, &m.textures[0].to_variant());
            mat.set_shader_parameter(PARAM_MAP_1, &m.textures[1].to_variant());
            mat.set_shader_parameter(PARAM_SIZE, &(m.resolution as f32).to_variant());
            mat.set_shader_parameter(PARAM_ENABLED, &true.to_variant());
        }
    }

    /// A copy of map `index` (0 or 1), `resolution²` (an all-zero map 1 too).
    pub fn image(&self, index: i32) -> Option<Gd<Image>> {
        let m = self.maps.as_ref()?;
        let img = m.images.get(usize::try_from(index).ok()?)?;
        if index == 1 && m.zero_map_1 {
            let n = m.resolution as i32;
            return Image::create_empty(n, n, false, ImageFormat::RGBA8);
        }
        Some(img.duplicate_resource())
    }

    /// Map texture `index` (0 or 1); map 1 is 1×1 black while no user layer is painted.
    pub fn texture(&self, index: i32) -> Option<Gd<ImageTexture>> {
        let m = self.maps.as_ref()?;
        m.textures.get(usize::try_from(index).ok()?).cloned()
    }
}

/// The eight splat weights at node-local `(x, z)` including `paint` (see
/// `ProceduralIsland.get_splat_weights_at`).
pub fn weights_at(
    island: &Island,
    paint: Option<&Gd<SplatPaint>>,
    x: f32,
    z: f32,
) -> PackedFloat32Array {
    let n = island.field.resolution;
    let surf = Surface {
        field: &island.field,
        base: island.base_splat(),
    };
    let guard = paint.map(|p| p.bind());
    let empty;
    let layer = match guard.as_ref().and_then(|g| g.layer_for(n)) {
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
        assert!(unpainted_is_splat((&splat).into(), n));
        let all = Rect::full(n);
        let bytes: &[u8] = bytemuck::cast_slice(&splat);
        assert_eq!(
            (bytes.to_vec(), vec![0u8; n * n * 4]),
            compose_maps(&PaintLayer::new(n), &splat, all).unwrap()
        );
        let mut odd = splat.clone();
        odd[5] = [1, 2, 3, 4];
        assert!(!unpainted_is_splat((&odd).into(), n));
        assert!(!unpainted_is_splat((&splat[1..]).into(), n));
        let upper = vec![[0u8; 4]; n * n];
        let roads = paint::Base {
            lower: &splat,
            upper: Some(&upper),
        };
        assert!(!unpainted_is_splat(roads, n), "a road on a user layer");
    }
}
