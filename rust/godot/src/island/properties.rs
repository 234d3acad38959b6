//! The node's inspector properties, declared once.
//!
//! [`island_node!`] takes one table (in `procedural_island/table.rs`): every exported property with its
//! doc comment (the editor help, through gdext's `register-docs`), its `#[export_group]`,
//! `#[export(...)]` range/enum/unit attributes, and where its value comes from:
//!
//! * `core(fbm.octaves)`: a generator parameter. Its default is read from
//!   `IslandParams::default()` and `params()` writes it back to that field, converted by
//!   [`CoreValue`] (e.g. a negative `i32` for a `u32` count is rejected with the field's name);
//! * `node(expr)`: a node setting that is not part of `IslandParams`, with its default.
//!
//! From that one table the macro generates the struct fields with their attributes, the `init`
//! body (`with_defaults`) and the mapping to `IslandParams` (`params`). Adding a generator
//! parameter is one row in the table.
//!
//! Why a `macro_rules!` table and not a derive or a nested `IslandParams` resource: gdext reads
//! `#[export]` attributes from the fields of the `GodotClass` struct itself (there is no
//! flattening of a nested struct into the parent's properties), the exported names, groups, types
//! and defaults must stay what scenes already store, and a declarative macro keeps the attributes
//! verbatim (readable, checked by gdext as before) without a proc-macro crate. The conversions
//! are ordinary trait impls, so the table carries no code.

use crate::island::coast_mask_watch::CoastMaskWatch;
use godot::classes::image::Format;
use godot::classes::{Curve, Texture2D};
use godot::prelude::*;
use island_core::params::{CoastMask, IslandShape, RiverMode};
use island_core::Algorithm;
use std::cell::RefCell;
use std::sync::Arc;

/// Samples taken from `shaping_curve` for the core's lookup table.
pub const CURVE_SAMPLES: usize = 256;

/// Inspector dropdown of `resolution`: `label:value` items, so the inspector stores the value
/// (a bare `"33,65,..."` list would store the item's position).
pub const RESOLUTION_HINT: &str =
    "33:33,65:65,129:129,257:257,513:513,1025:1025,2049:2049,4097:4097,8193:8193";
/// Inspector dropdown of `chunk_size` (`label:value` items, as [`RESOLUTION_HINT`]).
pub const CHUNK_HINT: &str = "16:16,32:32,64:64,128:128,256:256";
/// Inspector dropdown of `algorithm`: readable labels, the stored values are the
/// `ALGORITHM_*` constants.
pub const ALGORITHM_HINT: &str = "fBm:0,Value noise:1,Diamond-square:2,Gaussian islands:3";
/// Inspector dropdown of `river_mode` (`RIVER_MODE_*`).
pub const RIVER_MODE_HINT: &str = "Flow (drainage):0,Bezier canal:1,Off:2";
/// Inspector dropdown of `backend` (`BACKEND_*`).
pub const BACKEND_HINT: &str = "Auto:0,GPU:1,CPU:2";
/// Inspector dropdown of `collision_mode` (`lod::COLLISION_*`).
pub const COLLISION_MODE_HINT: &str = "Near the camera:0,All chunks:1";

/// Conversion between an exported property value and the `IslandParams` field `C` it stands for.
pub trait CoreValue<C> {
    /// The property value for the core's value (used for the defaults).
    fn from_core(core: &C) -> Self;
    /// Write the property's value into the core field; `name` is the property, for the message.
    fn store(&self, name: &str, core: &mut C) -> Result<(), String>;
    /// Set the property from the core's value (parameters received from the network); the
    /// resource-valued properties (curve, coast mask) keep theirs.
    fn load(&mut self, core: &C)
    where
        Self: Sized,
    {
        *self = Self::from_core(core);
    }
}

impl CoreValue<f32> for f32 {
    fn from_core(core: &f32) -> Self {
        *core
    }
    fn store(&self, _: &str, core: &mut f32) -> Result<(), String> {
        *core = *self;
        Ok(())
    }
}

impl CoreValue<bool> for bool {
    fn from_core(core: &bool) -> Self {
        *core
    }
    fn store(&self, _: &str, core: &mut bool) -> Result<(), String> {
        *core = *self;
        Ok(())
    }
}

/// Counts and sizes: negative values are rejected (the core validates the rest).
impl CoreValue<u32> for i32 {
    fn from_core(core: &u32) -> Self {
        *core as i32
    }
    fn store(&self, name: &str, core: &mut u32) -> Result<(), String> {
        *core = u32::try_from(*self)
            .map_err(|_| format!("invalid parameter `{name}`: must be >= 0, got {self}"))?;
        Ok(())
    }
}

/// The seed: any integer, reinterpreted.
impl CoreValue<u64> for i64 {
    fn from_core(core: &u64) -> Self {
        *core as i64
    }
    fn store(&self, _: &str, core: &mut u64) -> Result<(), String> {
        *core = *self as u64;
        Ok(())
    }
}

/// `algorithm`: the index into [`Algorithm::ALL`] (the `ALGORITHM_*` constants).
impl CoreValue<Algorithm> for i32 {
    fn from_core(core: &Algorithm) -> Self {
        Algorithm::ALL.iter().position(|a| a == core).unwrap_or(0) as i32
    }
    fn store(&self, name: &str, core: &mut Algorithm) -> Result<(), String> {
        *core = usize::try_from(*self)
            .ok()
            .and_then(|i| Algorithm::ALL.get(i).copied())
            .ok_or_else(|| {
                format!(
                    "invalid parameter `{name}`: must be 0..={}, got {self}",
                    Algorithm::ALL.len() - 1
                )
            })?;
        Ok(())
    }
}

/// `river_mode`: the index into [`RiverMode::ALL`] (`RIVER_MODE_FLOW` = 0, `BEZIER` = 1,
/// `OFF` = 2).
impl CoreValue<RiverMode> for i32 {
    fn from_core(core: &RiverMode) -> Self {
        RiverMode::ALL.iter().position(|m| m == core).unwrap_or(0) as i32
    }
    fn store(&self, name: &str, core: &mut RiverMode) -> Result<(), String> {
        *core = usize::try_from(*self)
            .ok()
            .and_then(|i| RiverMode::ALL.get(i).copied())
            .ok_or_else(|| {
                format!(
                    "invalid parameter `{name}`: must be 0..={}, got {self}",
                    RiverMode::ALL.len() - 1
                )
            })?;
        Ok(())
    }
}

/// `river_enabled` (before `river_mode` existed): false forces [`RiverMode::Off`], true keeps
/// the mode (its row comes after `river_mode`'s, so it is stored last).
impl CoreValue<RiverMode> for bool {
    fn from_core(core: &RiverMode) -> Self {
        *core != RiverMode::Off
    }
    fn store(&self, _: &str, core: &mut RiverMode) -> Result<(), String> {
        if !*self {
            *core = RiverMode::Off;
        }
        Ok(())
    }
}

/// `shaping_curve`: sampled at [`CURVE_SAMPLES`] points; null keeps the core's built-in curve.
impl CoreValue<Vec<f32>> for Option<Gd<Curve>> {
    fn from_core(_: &Vec<f32>) -> Self {
        None
    }
    fn load(&mut self, _: &Vec<f32>) {}
    fn store(&self, _: &str, core: &mut Vec<f32>) -> Result<(), String> {
        if let Some(c) = self {
            *core = (0..CURVE_SAMPLES)
                .map(|i| c.sample(i as f32 / (CURVE_SAMPLES - 1) as f32))
                .collect();
        }
        Ok(())
    }
}

/// `island_shape`: the index into [`IslandShape::ALL`] (`SHAPE_AUTO` = 0 ... `SHAPE_VOLCANIC` = 6).
impl CoreValue<IslandShape> for i32 {
    fn from_core(core: &IslandShape) -> Self {
        IslandShape::ALL.iter().position(|s| s == core).unwrap_or(0) as i32
    }
    fn store(&self, name: &str, core: &mut IslandShape) -> Result<(), String> {
        *core = usize::try_from(*self)
            .ok()
            .and_then(|i| IslandShape::ALL.get(i).copied())
            .ok_or_else(|| {
                format!(
                    "invalid parameter `{name}`: must be 0..={}, got {self}",
                    IslandShape::ALL.len() - 1
                )
            })?;
        Ok(())
    }
}

/// `coast_mask`: the texture's image converted to 8-bit luminance here, on the main thread
/// (the worker gets plain bytes). Null keeps the generated outline. The conversion (an image
/// read back from the texture, copied and converted) is cached per texture until the texture
/// emits `changed`: the editor builds the parameters every frame with auto-regenerate on.
impl CoreValue<Option<Arc<CoastMask>>> for Option<Gd<Texture2D>> {
    fn from_core(_: &Option<Arc<CoastMask>>) -> Self {
        None
    }
    fn load(&mut self, _: &Option<Arc<CoastMask>>) {}
    fn store(&self, name: &str, core: &mut Option<Arc<CoastMask>>) -> Result<(), String> {
        let Some(tex) = self else {
            *core = None;
            return Ok(());
        };
        *core = Some(coast_mask_cached(tex, name)?);
        Ok(())
    }
}

/// One converted coast mask: valid while `fresh`, which the texture's `changed` clears. Plain
/// data only (no Godot value lives in the thread-local past the main loop).
struct CachedMask {
    texture: InstanceId,
    /// Connected to the texture's `changed`.
    watch: Gd<CoastMaskWatch>,
    mask: Arc<CoastMask>,
}

impl CachedMask {
    /// Disconnect from the texture (if it still exists).
    fn release(self) {
        let callable = Callable::from_object_method(&self.watch, "on_changed");
        if let Ok(mut tex) = Gd::<Texture2D>::try_from_instance_id(self.texture) {
            if tex.is_connected("changed", &callable) {
                tex.disconnect("changed", &callable);
            }
        }
    }
}

/// Disconnect every cached mask from its texture and forget them (when the extension unloads,
/// before its classes are unregistered).
pub fn release_mask_cache() {
    let all = MASK_CACHE.with_borrow_mut(std::mem::take);
    for e in all {
        e.release();
    }
}

/// Textures converted most recently (main thread only; a few islands with their own masks).
const MASK_CACHE_LEN: usize = 4;

thread_local! {
    static MASK_CACHE: RefCell<Vec<CachedMask>> = const { RefCell::new(Vec::new()) };
}

/// The coast mask of `tex`, converted once and again only after the texture changed.
fn coast_mask_cached(tex: &Gd<Texture2D>, name: &str) -> Result<Arc<CoastMask>, String> {
    let id = tex.instance_id();
    let entry = MASK_CACHE.with_borrow(|c| {
        c.iter()
            .find(|e| e.texture == id)
            .map(|e| (e.watch.bind().is_stale(), e.mask.clone()))
    });
    if let Some((false, mask)) = &entry {
        return Ok(mask.clone());
    }
    let mask = Arc::new(coast_mask_of(tex, name)?);
    MASK_CACHE.with_borrow_mut(|c| match c.iter_mut().find(|e| e.texture == id) {
        // A changed texture: its `changed` is already connected to the watch.
        Some(e) => {
            e.watch.bind_mut().refreshed();
            e.mask = mask.clone();
        }
        None => {
            let watch = CoastMaskWatch::new_gd();
            tex.clone().connect(
                "changed",
                &Callable::from_object_method(&watch, "on_changed"),
            );
            if c.len() >= MASK_CACHE_LEN {
                c.remove(0).release();
            }
            c.push(CachedMask {
                texture: id,
                watch,
                mask: mask.clone(),
            });
        }
    });
    Ok(mask)
}

/// `tex`'s image as an 8-bit luminance coast mask (`name` for the error).
fn coast_mask_of(tex: &Gd<Texture2D>, name: &str) -> Result<CoastMask, String> {
    let bad = |why: &str| format!("invalid parameter `{name}`: {why}");
    let img = tex
        .get_image()
        .ok_or_else(|| bad("the texture has no image data"))?;
    if img.is_empty() {
        return Err(bad("the image is empty"));
    }
    // Work on a copy: the texture's own image must not change format.
    let mut img = img.duplicate_resource();
    if img.is_compressed() && img.decompress() != godot::global::Error::OK {
        return Err(bad("cannot decompress the image"));
    }
    img.convert(Format::L8);
    let (w, h) = (
        img.get_width().max(0) as usize,
        img.get_height().max(0) as usize,
    );
    let data = img.get_data().to_vec();
    CoastMask::from_luma8(w, h, &data).map_err(|e| e.to_string())
}

/// Default of one table row (see the module doc).
macro_rules! property_default {
    ($core:ident, core($($f:ident).+)) => {
        $crate::island::properties::CoreValue::from_core(&$core.$($f).+)
    };
    ($core:ident, node($e:expr)) => {
        $e
    };
}

/// Core mapping of one table row: `core` rows write their field, `node` rows nothing.
macro_rules! property_store {
    ($node:ident, $params:ident, $prop:ident, core($($f:ident).+)) => {
        $crate::island::properties::CoreValue::store(
            &$node.$prop,
            stringify!($prop),
            &mut $params.$($f).+,
        )?
    };
    ($node:ident, $params:ident, $prop:ident, node($e:expr)) => {};
}

/// Reverse of [`property_store`]: `core` rows take their field's value, `node` rows stay.
macro_rules! property_load {
    ($node:ident, $params:ident, $prop:ident, core($($f:ident).+)) => {
        $crate::island::properties::CoreValue::load(&mut $node.$prop, &$params.$($f).+)
    };
    ($node:ident, $params:ident, $prop:ident, node($e:expr)) => {};
}

/// The node struct from the property table and its runtime state: fields with their
/// attributes, `with_defaults(base)` (the `init` body) and `params()` (the generator
/// parameters, not yet validated by the core). See the module doc.
macro_rules! island_node {
    (
        $(#[$($meta:tt)*])*
        pub struct $Node:ident {
            $base:ident : Base<$BaseClass:ident>,
            properties {
                $(
                    $(#[$($pmeta:tt)*])*
                    $prop:ident : $pty:ty = $kind:ident ( $($src:tt)* ),
                )*
            }
            state {
                $(
                    $(#[$($smeta:tt)*])*
                    $state:ident : $sty:ty = $sinit:expr,
                )*
            }
        }
    ) => {
        $(#[$($meta)*])*
        pub struct $Node {
            $base: Base<$BaseClass>,
            $( $(#[$($pmeta)*])* pub(super) $prop: $pty, )*
            $( $(#[$($smeta)*])* pub(super) $state: $sty, )*
        }

        impl $Node {
            /// Every property at its default (core ones from `IslandParams::default()`).
            pub(super) fn with_defaults($base: Base<$BaseClass>) -> Self {
                let defaults = island_core::IslandParams::default();
                Self {
                    $base,
                    $( $prop: $crate::island::properties::property_default!(defaults, $kind($($src)*)), )*
                    $( $state: $sinit, )*
                }
            }

            /// The generator parameters from the properties (not validated by the core yet;
            /// negative counts and an unknown algorithm are rejected here).
            pub(super) fn params(&self) -> Result<island_core::IslandParams, String> {
                let mut params = island_core::IslandParams::default();
                $( $crate::island::properties::property_store!(self, params, $prop, $kind($($src)*)); )*
                Ok(params)
            }

            /// Set every generator property from `params` (the curve and coast mask
            /// properties keep their resources).
            pub(super) fn load_params(&mut self, params: &island_core::IslandParams) {
                $( $crate::island::properties::property_load!(self, params, $prop, $kind($($src)*)); )*
            }
        }
    };
}

pub(crate) use {island_node, property_default, property_load, property_store};

#[cfg(test)]
mod tests {
    use super::*;

    /// The value the inspector stores for each item of an ENUM hint (`label:value` or the
    /// position), as Godot's `EditorPropertyEnum` does.
    fn enum_values(hint: &str) -> Vec<(String, i64)> {
        hint.split(',')
            .enumerate()
            .map(|(i, item)| match item.split_once(':') {
                Some((label, v)) => (label.to_string(), v.parse().unwrap()),
                None => (item.to_string(), i as i64),
            })
            .collect()
    }

    #[test]
    fn size_dropdowns_store_the_size_itself() {
        for hint in [RESOLUTION_HINT, CHUNK_HINT] {
            for (label, value) in enum_values(hint) {
                assert_eq!(label.parse::<i64>().unwrap(), value, "{hint}");
            }
        }
        let res: Vec<i64> = enum_values(RESOLUTION_HINT).iter().map(|v| v.1).collect();
        assert!(res.contains(&(island_core::IslandParams::default().resolution as i64)));
    }

    #[test]
    fn enum_dropdowns_show_readable_labels_and_store_the_constants() {
        for hint in [
            ALGORITHM_HINT,
            RIVER_MODE_HINT,
            BACKEND_HINT,
            COLLISION_MODE_HINT,
        ] {
            let items = enum_values(hint);
            for (i, (label, value)) in items.iter().enumerate() {
                // Values are the positions (the `*_` constants), labels are words, not
                // SHOUTED_IDENTIFIERS that the inspector cuts at its default width.
                assert_eq!(*value, i as i64, "{hint}");
                assert!(
                    !label.contains('_') && label != &label.to_uppercase() || label.len() <= 3,
                    "{label}"
                );
            }
        }
        // The algorithm menu lists the core's algorithms in their order.
        assert_eq!(enum_values(ALGORITHM_HINT).len(), Algorithm::ALL.len());
        for (i, a) in Algorithm::ALL.iter().enumerate() {
            assert_eq!(*a as i64, i as i64, "{}", a.name());
        }
    }

    #[test]
    fn conversions_reject_what_the_core_cannot_hold() {
        let mut n = 0u32;
        assert!(CoreValue::store(&-1i32, "fbm_octaves", &mut n)
            .unwrap_err()
            .contains("invalid parameter `fbm_octaves`: must be >= 0, got -1"));
        let mut a = Algorithm::default();
        assert_eq!(
            CoreValue::store(&9i32, "algorithm", &mut a).unwrap_err(),
            "invalid parameter `algorithm`: must be 0..=3, got 9"
        );
        for (i, alg) in Algorithm::ALL.iter().enumerate() {
            assert_eq!(<i32 as CoreValue<Algorithm>>::from_core(alg), i as i32);
        }
        let mut seed = 0u64;
        CoreValue::store(&-1i64, "seed", &mut seed).unwrap();
        assert_eq!(seed, u64::MAX);
    }
}
