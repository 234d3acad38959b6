//! The `SplatPaint` resource: a `ProceduralIsland`'s painted splat, saved with the scene.
//!
//! The math lives in [`island_core::paint`]; this class only stores and encodes.

use crate::scatter::layer_moves::LayerMoves;
use godot::classes::{IResource, Resource};
use godot::prelude::*;
use island_core::paint::PaintLayer;
use island_core::scatter::{decode_erase_masks, encode_erase_masks, EraseMask};
use island_core::sculpt::SculptLayer;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

/// User paint of a [ProceduralIsland]'s splat: eight premultiplied layers per heightfield sample
/// kept as an override on top of the generated splat (see `island_core::paint`). Saved with the
/// scene (run-length encoded in [member data]); regenerating keeps it.
///
/// The paint stays at the resolution it was painted at: an island of another resolution shows a
/// resampled view of it, and going back to the painted resolution shows the original exactly.
/// Painting at another resolution makes that the paint's resolution.
///
/// Each island owns its paint: when an island finds that its paint is used by another island
/// (after `Node.duplicate()` or the editor's Duplicate), it makes its own copy before painting
/// or showing it, unless [member shared] is on.
#[derive(GodotClass)]
#[class(tool, base=Resource)]
pub struct SplatPaint {
    base: Base<Resource>,
    /// Encoded paint (storage only; empty = nothing painted).
    #[allow(dead_code)] // read and written through get_data/set_data
    #[export(storage)]
    #[var(get = get_data, set = set_data)]
    data: PackedByteArray,
    /// Let several islands use this paint on purpose (they must then have the same
    /// `resolution`). Off: an island that finds this paint in use by another island copies it
    /// first, so painting one island never paints another. The islands keep sharing it after
    /// the scene is saved and loaded when the paint is saved as a `.tres` file of its own (an
    /// island stores a paint that is part of the scene with itself, see
    /// [member ProceduralIsland.stored_resources]).
    #[export]
    shared: bool,
    /// Encoded scatter erase masks (storage only; empty = no scatter instance erased): per
    /// [member ProceduralIsland.scatter_layers] index, the samples where `TerrainBrush`'s
    /// `SCATTER_ERASE` mode removed that layer's instances. When layers are reordered, inserted
    /// or removed in the island, the masks move with their layers (a removed layer's mask comes
    /// back if the same layer is put back while the scene is open).
    #[allow(dead_code)] // read and written through get_scatter_erase_data/set_scatter_erase_data
    #[export(storage)]
    #[var(get = get_scatter_erase_data, set = set_scatter_erase_data)]
    scatter_erase_data: PackedByteArray,
    /// Encoded sculpt layer (storage only; empty = the terrain was never sculpted): the height
    /// offsets, flatten levels and sketched coast of `TerrainBrush`'s sculpt modes, in
    /// node-local metres, applied inside the generator (see `island_core::sculpt`). Kept when
    /// the island regenerates with any parameters; [method ProceduralIsland.clear_sculpt]
    /// removes it.
    #[allow(dead_code)] // read and written through get_sculpt_data/set_sculpt_data
    #[export(storage)]
    #[var(get = get_sculpt_data, set = set_sculpt_data)]
    sculpt_data: PackedByteArray,
    /// Decoded scatter erase masks, index = scatter layer, each at the resolution it was erased at.
    scatter_erase: Vec<Option<EraseMask>>,
    /// Decoded sculpt layer (shared with the generation requests made from it).
    sculpt: Option<Arc<SculptLayer>>,
    /// Encoding of `sculpt`, valid until the next change.
    sculpt_cache: RefCell<Option<PackedByteArray>>,
    /// Whether `sculpt` holds an edit, valid until the next change (the editor asks every
    /// frame).
    sculpt_used: std::cell::Cell<Option<bool>>,
    /// Decoded paint at the resolution it was painted at; `None` until first used or after an
    /// empty/invalid `data`.
    layer: Option<PaintLayer>,
    /// `layer` resampled to the resolution of the island showing it (derived, never saved).
    view: Option<PaintLayer>,
    /// The island using this paint (runtime only), for copy-on-duplicate.
    owner: Option<InstanceId>,
    /// Encoding of `layer`, valid until the next change.
    cache: RefCell<Option<PackedByteArray>>,
}

#[godot_api]
impl IResource for SplatPaint {
    fn init(base: Base<Resource>) -> Self {
        SplatPaint {
            base,
            data: PackedByteArray::new(),
            shared: false,
            scatter_erase_data: PackedByteArray::new(),
            sculpt_data: PackedByteArray::new(),
            scatter_erase: Vec::new(),
            sculpt: None,
            sculpt_cache: RefCell::new(None),
            sculpt_used: std::cell::Cell::new(None),
            layer: None,
            view: None,
            owner: None,
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
        self.view = None;
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

    /// The encoded scatter erase masks (what is saved).
    #[func]
    pub fn get_scatter_erase_data(&self) -> PackedByteArray {
        PackedByteArray::from(encode_erase_masks(&self.scatter_erase))
    }

    /// Replace the scatter erase masks with encoded data (from [method get_scatter_erase_data]).
    /// Invalid data is reported and leaves no instance erased.
    #[func]
    pub fn set_scatter_erase_data(&mut self, data: PackedByteArray) {
        match decode_erase_masks(data.as_slice()) {
            Ok(m) => self.scatter_erase = m,
            Err(e) => {
                godot_error!("SplatPaint: {e}");
                self.scatter_erase = Vec::new();
            }
        }
        self.base_mut().emit_changed();
    }

    /// Number of heightfield samples (at the resolution they were erased at) where scatter
    /// layer `layer`'s instances are erased.
    #[func]
    pub fn get_scatter_erased_samples(&self, layer: i32) -> i64 {
        usize::try_from(layer)
            .ok()
            .and_then(|l| self.scatter_erase.get(l))
            .and_then(|m| m.as_ref())
            .map_or(0, |m| m.count() as i64)
    }

    /// The encoded sculpt layer (what is saved).
    #[func]
    pub fn get_sculpt_data(&self) -> PackedByteArray {
        let Some(l) = &self.sculpt else {
            return PackedByteArray::new();
        };
        if let Some(c) = self.sculpt_cache.borrow().as_ref() {
            return c.clone();
        }
        let bytes = PackedByteArray::from(l.encode());
        *self.sculpt_cache.borrow_mut() = Some(bytes.clone());
        bytes
    }

    /// Replace the sculpt layer with encoded data (from [method get_sculpt_data]; empty = no
    /// sculpting). Invalid data is reported and leaves the sculpt layer as it was. The island
    /// shows the change at its next generation.
    #[func]
    pub fn set_sculpt_data(&mut self, data: PackedByteArray) {
        self.sculpt_used.set(None);
        if data.is_empty() {
            self.sculpt = None;
            *self.sculpt_cache.borrow_mut() = None;
        } else {
            match SculptLayer::decode(data.as_slice()) {
                Ok(l) => {
                    self.sculpt = Some(Arc::new(l));
                    *self.sculpt_cache.borrow_mut() = Some(data);
                }
                Err(e) => {
                    godot_error!("SplatPaint.sculpt_data: {e}; the sculpt layer is unchanged");
                    return;
                }
            }
        }
        self.base_mut().emit_changed();
    }

    /// Whether the terrain holds sculpt edits.
    #[func]
    pub fn has_sculpt(&self) -> bool {
        if let Some(u) = self.sculpt_used.get() {
            return u;
        }
        let u = self.sculpt.as_ref().is_some_and(|l| !l.is_empty());
        self.sculpt_used.set(Some(u));
        u
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
    /// The sculpt layer, when it holds edits (what a generation request carries).
    pub fn sculpt_for_generation(&self) -> Option<Arc<SculptLayer>> {
        self.sculpt.clone().filter(|_| self.has_sculpt())
    }

    /// The sculpt layer as it is (possibly empty), if any.
    pub fn sculpt(&self) -> Option<&SculptLayer> {
        self.sculpt.as_deref()
    }

    /// The sculpt layer to edit on an island grid of `resolution` samples over `world_size`
    /// metres, created empty when missing; a layer on another grid is resampled to this one
    /// first (every edit stays at its position). Copied first when a generation request still
    /// holds it.
    pub fn sculpt_mut(
        &mut self,
        resolution: usize,
        world_size: f32,
    ) -> Result<&mut SculptLayer, String> {
        *self.sculpt_cache.borrow_mut() = None;
        self.sculpt_used.set(None);
        match &self.sculpt {
            Some(l) if l.fits(resolution, world_size) => {}
            Some(l) => self.sculpt = Some(Arc::new(l.resample(resolution, world_size))),
            None => {
                self.sculpt = Some(Arc::new(
                    SculptLayer::new(resolution, world_size).map_err(|e| e.to_string())?,
                ))
            }
        }
        Ok(Arc::make_mut(self.sculpt.as_mut().expect("set above")))
    }

    /// Replace the sculpt layer (undo data, clearing); `None` removes it.
    pub fn set_sculpt(&mut self, layer: Option<SculptLayer>) {
        *self.sculpt_cache.borrow_mut() = None;
        self.sculpt_used.set(None);
        self.sculpt = layer.map(Arc::new);
    }

    /// The decoded paint, if any (at the resolution it was painted at).
    pub fn layer(&self) -> Option<&PaintLayer> {
        self.layer.as_ref()
    }

    /// The paint as an island of `resolution` shows it: the painted layer itself, or its
    /// resampled view once [`SplatPaint::prepare_view`] made it. `None` when nothing is painted.
    pub fn layer_for(&self, resolution: usize) -> Option<&PaintLayer> {
        let l = self.layer.as_ref()?;
        if l.resolution == resolution {
            return Some(l);
        }
        self.view.as_ref().filter(|v| v.resolution == resolution)
    }

    /// Make [`SplatPaint::layer_for`] answer for `resolution`: resample the painted layer into
    /// a view when it has another resolution. The painted layer itself is left as it is (and the
    /// saved data with it).
    pub fn prepare_view(&mut self, resolution: usize) {
        match &self.layer {
            Some(l) if l.resolution != resolution => {
                if self
                    .view
                    .as_ref()
                    .is_none_or(|v| v.resolution != resolution)
                {
                    self.view = Some(l.resample(resolution));
                }
            }
            _ => self.view = None,
        }
    }

    /// The paint to edit at `resolution`, created empty when missing. Painting at another
    /// resolution than the painted layer's makes its resampled view the painted layer: the
    /// paint is now at this resolution.
    pub fn layer_mut(&mut self, resolution: usize) -> &mut PaintLayer {
        *self.cache.borrow_mut() = None;
        if self
            .layer
            .as_ref()
            .is_some_and(|l| l.resolution != resolution)
        {
            self.prepare_view(resolution);
            self.layer = self.view.take();
        }
        self.view = None;
        self.layer
            .get_or_insert_with(|| PaintLayer::new(resolution))
    }

    /// Mark the paint as changed (after editing `layer_mut`). Does not emit `changed` (that
    /// would fire for every dab); the encoded data is rebuilt when it is next read (saving).
    pub fn touched(&mut self) {
        *self.cache.borrow_mut() = None;
        self.view = None;
    }

    /// The erase mask of scatter layer `layer` as an island of `resolution` reads it (resampled
    /// when it was erased at another resolution); `None` when nothing is erased.
    pub fn erase_mask_for(&self, layer: usize, resolution: usize) -> Option<EraseMask> {
        let m = self.scatter_erase.get(layer)?.as_ref()?;
        if m.is_empty() {
            return None;
        }
        Some(m.resample(resolution))
    }

    /// [`SplatPaint::erase_mask_for`] of layers `0..count`.
    pub fn erase_masks_for(&self, count: usize, resolution: usize) -> Vec<Option<EraseMask>> {
        (0..count)
            .map(|l| self.erase_mask_for(l, resolution))
            .collect()
    }

    /// Move the scatter erase masks with their layers after `scatter_layers` changed (see
    /// [`LayerMoves`]): a moved layer takes its mask to its new index, a removed layer's mask
    /// goes to `parked` (by resource id, in memory) and comes back if the same layer returns (an
    /// undone removal), an index whose slot no known layer held keeps its mask. Returns the
    /// indices whose mask changed (to re-place).
    pub fn remap_scatter_erase(
        &mut self,
        moves: &LayerMoves,
        parked: &mut HashMap<InstanceId, EraseMask>,
    ) -> Vec<usize> {
        let mut old = std::mem::take(&mut self.scatter_erase);
        let had: Vec<bool> = old.iter().map(Option::is_some).collect();
        let known = |j: usize| moves.old_ids.get(j).is_some_and(Option::is_some);
        for &(j, id) in &moves.gone {
            if let Some(m) = old.get_mut(j).and_then(Option::take) {
                parked.insert(id, m);
            }
        }
        let mut changed = Vec::new();
        let mut new: Vec<Option<EraseMask>> = Vec::with_capacity(moves.from.len());
        for (i, f) in moves.from.iter().enumerate() {
            let m = match f {
                Some(j) => old.get_mut(*j).and_then(Option::take),
                None => moves.new_ids[i]
                    .and_then(|id| parked.remove(&id))
                    .or_else(|| {
                        if known(i) {
                            None
                        } else {
                            old.get_mut(i).and_then(Option::take)
                        }
                    }),
            };
            if *f != Some(i) && (m.is_some() || had.get(i).copied().unwrap_or(false)) {
                changed.push(i);
            }
            new.push(m);
        }
        // Masks beyond the array that no known layer held stay where they are.
        for (j, m) in old.into_iter().enumerate().skip(new.len()) {
            if m.is_some() && !known(j) {
                new.resize_with(j, || None);
                new.push(m);
            }
        }
        while new.last().is_some_and(Option::is_none) {
            new.pop();
        }
        self.scatter_erase = new;
        changed
    }

    /// The erase mask of scatter layer `layer` to edit at `resolution`, created empty when
    /// missing (a mask erased at another resolution is resampled to this one first).
    pub fn erase_mask_mut(&mut self, layer: usize, resolution: usize) -> &mut EraseMask {
        if self.scatter_erase.len() <= layer {
            self.scatter_erase.resize_with(layer + 1, || None);
        }
        let slot = &mut self.scatter_erase[layer];
        if slot.as_ref().is_some_and(|m| m.resolution() != resolution) {
            *slot = slot.as_ref().map(|m| m.resample(resolution));
        }
        slot.get_or_insert_with(|| EraseMask::new(resolution))
    }

    /// Whether `island` may use this paint as its own: nobody else claimed it, the claimant is
    /// gone or no longer uses it, or the paint is [member shared]. Claims it for `island`.
    pub fn claim(&mut self, island: InstanceId, still_uses: impl Fn(InstanceId) -> bool) -> bool {
        if self.shared {
            return true;
        }
        match self.owner {
            Some(o) if o != island && still_uses(o) => false,
            _ => {
                self.owner = Some(island);
                true
            }
        }
    }

    /// A copy of this paint owned by nobody yet (same painted data, not shared).
    pub fn copy_for(&self, island: InstanceId) -> Gd<SplatPaint> {
        let mut copy = SplatPaint::new_gd();
        {
            let mut c = copy.bind_mut();
            c.layer = self.layer.clone();
            c.scatter_erase = self.scatter_erase.clone();
            c.sculpt = self.sculpt.clone();
            c.owner = Some(island);
        }
        copy
    }
}
