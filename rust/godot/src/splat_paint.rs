//! The `SplatPaint` resource: a `ProceduralIsland`'s painted splat, saved with the scene.
//!
//! The math lives in [`island_core::paint`]; this class only stores and encodes.

use godot::classes::{IResource, Resource};
use godot::prelude::*;
use island_core::paint::PaintLayer;
use std::cell::RefCell;

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
    layer: Option<PaintLayer>,
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
    /// The decoded paint, if any (at its own resolution).
    pub fn layer(&self) -> Option<&PaintLayer> {
        self.layer.as_ref()
    }

    /// The paint at `resolution`, created empty or resampled as needed.
    pub fn layer_mut(&mut self, resolution: usize) -> &mut PaintLayer {
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
    pub fn touched(&mut self) {
        *self.cache.borrow_mut() = None;
    }
}
