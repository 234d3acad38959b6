//! What the layout nodes (`IslandStamp`, `IslandPath`) share: each is a child of a
//! `ProceduralIsland` that regenerates when it changes. The island is not imported as a type
//! here: the island's module imports the layout nodes.

use godot::classes::{Engine, Node, Node3D};
use godot::prelude::*;

/// The parent `ProceduralIsland` of `node`, if it has one.
pub fn parent_island<T: Inherits<Node>>(node: &Gd<T>) -> Option<Gd<Node>> {
    node.clone()
        .upcast::<Node>()
        .get_parent()
        .filter(|p| p.is_class("ProceduralIsland"))
}

/// A layout node changed: refresh its configuration warnings and tell its island (next frame,
/// coalesced). In the editor the island's auto-regenerate notices the new request by itself;
/// in a game the island regenerates in the background. Call it with the node's `base_mut()`
/// (the warnings read the node back).
pub fn layout_changed<T: Inherits<Node3D> + Inherits<Node>>(node: &Gd<T>) {
    let mut n = node.clone().upcast::<Node3D>();
    if !n.is_inside_tree() {
        return;
    }
    n.update_configuration_warnings();
    if Engine::singleton().is_editor_hint() {
        return;
    }
    if let Some(mut isl) = parent_island(node) {
        isl.call_deferred("_on_layout_changed", &[]);
    }
}
