//! [`CoastMaskWatch`]: marks a cached coast mask stale when its texture changes.
//!
//! The texture's `changed` signal is connected to a method of this object (an engine callable)
//! rather than to a Rust closure: godot-rust tracks every connection of a Rust closure to an
//! object that is still alive when the extension unloads and warns about hot-reload at each
//! editor exit; a texture in the editor's resource cache outlives the island that read it.

use godot::prelude::*;

/// Internal helper of `ProceduralIsland.coast_mask` (one per cached texture).
#[derive(GodotClass)]
#[class(tool, internal, init, base=RefCounted)]
pub struct CoastMaskWatch {
    /// The texture emitted `changed` since the mask was made.
    stale: bool,
}

#[godot_api]
impl CoastMaskWatch {
    /// Connected to the texture's `changed`.
    #[func]
    fn on_changed(&mut self) {
        self.stale = true;
    }
}

impl CoastMaskWatch {
    /// Whether the texture changed since the mask was made.
    pub fn is_stale(&self) -> bool {
        self.stale
    }

    /// The mask was made again from the texture.
    pub fn refreshed(&mut self) {
        self.stale = false;
    }
}
