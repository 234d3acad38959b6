//! The island in Godot's navigation: a source-geometry parser registered with
//! `NavigationServer3D` (so a `NavigationRegion3D` above the island bakes its walkable ground
//! with `bake_navigation_mesh()`, in the editor and in a game) and
//! [`ProceduralIsland::bake_navigation_mesh_async`] (a `NavigationMesh` of the island baked on
//! the navigation server's worker threads, [signal navigation_baked] when done).
//!
//! The walkable ground is `island_core::navigation::walkable_triangles`: the terrain over dry
//! cells only (no sea floor, river or lake bed); the agent's `agent_max_slope` drops the steep
//! parts while baking. The island's own internal nodes (chunk and LOD meshes, their
//! `HeightMapShape3D` colliders, the sea, river and lake surfaces) would otherwise be parsed by
//! Godot's built-in parsers as well, the water surfaces as walkable floors: the parser removes
//! what they added for those nodes (the scatter `MultiMeshInstance3D`s stay, as obstacles).
//!
//! The navigation classes are "experimental" in godot-rust's API (behind a feature we do not
//! enable), so they are reached through dynamic calls (`Object::call`) on their objects. Every
//! call happens on the main thread: the parser runs in `parse_source_geometry_data` (main
//! thread only), and the asynchronous bake's callback is called by the navigation server's
//! main-thread sync.

use crate::island::procedural_island::ProceduralIsland;
use godot::classes::{Engine, Node, Node3D, Object, Resource};
use godot::prelude::*;
use island_core::navigation::{auto_step, walkable_triangles};
use island_core::Island;
use std::cell::Cell;

thread_local! {
    /// The registered parser (main thread only).
    static PARSER: Cell<Option<Rid>> = const { Cell::new(None) };
    /// `(geometry data instance, vertex floats, indices)` after our last parser call.
    static LAST: Cell<(i64, usize, usize)> = const { Cell::new((0, 0, 0)) };
}

fn server() -> Option<Gd<Object>> {
    let e = Engine::singleton();
    let name = StringName::from("NavigationServer3D");
    e.has_singleton(&name)
        .then(|| e.get_singleton(&name))
        .flatten()
}

/// Register the island's source-geometry parser with `NavigationServer3D` (once per process;
/// run when an island enters the tree, through [`crate::island::node_hooks`]).
pub fn register_parser() {
    if PARSER.get().is_some() {
        return;
    }
    let Some(mut ns) = server() else {
        return;
    };
    let rid = ns.call("source_geometry_parser_create", &[]).to::<Rid>();
    let callback = Callable::from_fn("ProceduralIsland navigation parser", |args| {
        if let [mesh, data, node] = args {
            parse(mesh, data, node);
        }
    });
    ns.call(
        "source_geometry_parser_set_callback",
        &[rid.to_variant(), callback.to_variant()],
    );
    PARSER.set(Some(rid));
}

/// Free the parser (library unload).
pub fn unregister_parser() {
    if let (Some(rid), Some(mut ns)) = (PARSER.take(), server()) {
        ns.call("free_rid", &[rid.to_variant()]);
    }
}

/// The walkable triangles of `island` as Godot vertices.
pub fn walkable_faces(island: &Island) -> PackedVector3Array {
    walkable_triangles(
        &island.field,
        &island.water,
        auto_step(island.field.resolution),
    )
    .iter()
    .map(|p| Vector3::new(p[0], p[1], p[2]))
    .collect()
}

/// Whether `node` is one of an island's internal nodes (or below one): the island's internal
/// children are all `INTERNAL_MODE_BACK`, after its normal children.
fn island_internal(node: &Gd<Node>) -> bool {
    let mut child = node.clone();
    while let Some(parent) = child.get_parent() {
        if parent.clone().try_cast::<ProceduralIsland>().is_ok() {
            return child.get_index_ex().include_internal(true).done()
                >= parent.get_child_count_ex().include_internal(false).done();
        }
        child = parent;
    }
    false
}

fn sizes(data: &Gd<Resource>) -> (usize, usize) {
    let v = data.clone().upcast::<Object>().call("get_vertices", &[]);
    let i = data.clone().upcast::<Object>().call("get_indices", &[]);
    (
        v.try_to::<PackedFloat32Array>().map_or(0, |a| a.len()),
        i.try_to::<PackedInt32Array>().map_or(0, |a| a.len()),
    )
}

fn parse(_mesh: &Variant, data: &Variant, node: &Variant) {
    let (Ok(mut data), Ok(node)) = (data.try_to::<Gd<Resource>>(), node.try_to::<Gd<Node>>())
    else {
        return;
    };
    let id = data.instance_id().to_i64();
    if let Ok(isl) = node.clone().try_cast::<ProceduralIsland>() {
        let island = isl.bind().runtime_parts().0;
        if let Some(island) = island {
            let faces = walkable_faces(&island);
            let xf = isl.clone().upcast::<Node3D>().get_global_transform();
            data.call("add_faces", &[faces.to_variant(), xf.to_variant()]);
        }
    } else if island_internal(&node) && !node.is_class("MultiMeshInstance3D") {
        // Godot's own parsers just added this node's mesh or collider: take it out again.
        let (last_id, v0, i0) = LAST.get();
        let (v, i) = sizes(&data);
        if last_id == id && (v > v0 || i > i0) {
            let verts = data.call("get_vertices", &[]).to::<PackedFloat32Array>();
            let idx = data.call("get_indices", &[]).to::<PackedInt32Array>();
            data.call("set_vertices", &[verts.subarray(0..v0).to_variant()]);
            data.call("set_indices", &[idx.subarray(0..i0).to_variant()]);
        }
    }
    let (v, i) = sizes(&data);
    LAST.set((id, v, i));
}

#[godot_api(secondary)]
impl ProceduralIsland {
    /// Bake `navigation_mesh` (a `NavigationMesh`, its agent and cell settings as set) from the
    /// island's walkable ground on the navigation server's worker threads, without blocking;
    /// [signal navigation_baked] fires on the main thread when it is ready. The mesh is in the
    /// island's node-local space: give it to a `NavigationRegion3D` that has the island's
    /// global transform (for example a child of the island at its origin). Call it after
    /// [signal generation_finished] (e.g. after [method regenerate_async]). Returns `false`
    /// (with an error) when there is no island yet, `navigation_mesh` is not a
    /// `NavigationMesh`, or that mesh is still being baked.
    #[func]
    pub fn bake_navigation_mesh_async(&mut self, navigation_mesh: Option<Gd<Resource>>) -> bool {
        let fail = |m: &str| {
            godot_error!("ProceduralIsland.bake_navigation_mesh_async: {m}");
            false
        };
        let Some(mesh) = navigation_mesh.filter(|m| m.is_class("NavigationMesh")) else {
            return fail("navigation_mesh must be a NavigationMesh");
        };
        let Some(island) = self.runtime_parts().0 else {
            return fail("no island has been generated yet");
        };
        let Some(mut ns) = server() else {
            return fail("no NavigationServer3D");
        };
        if ns
            .call("is_baking_navigation_mesh", &[mesh.to_variant()])
            .try_to::<bool>()
            .unwrap_or(false)
        {
            return fail("this NavigationMesh is still being baked");
        }
        let Some(mut data) = godot::classes::ClassDb::singleton()
            .instantiate("NavigationMeshSourceGeometryData3D")
            .try_to::<Gd<Resource>>()
            .ok()
        else {
            return fail("cannot create NavigationMeshSourceGeometryData3D");
        };
        data.call(
            "add_faces",
            &[
                walkable_faces(&island).to_variant(),
                Transform3D::IDENTITY.to_variant(),
            ],
        );
        let me = self.to_gd().instance_id();
        let baked = mesh.clone();
        let callback = Callable::from_fn("ProceduralIsland navigation bake", move |_| {
            if let Ok(isl) = Gd::<ProceduralIsland>::try_from_instance_id(me) {
                isl.signals().navigation_baked().emit(&baked);
            }
        });
        ns.call(
            "bake_from_source_geometry_data_async",
            &[mesh.to_variant(), data.to_variant(), callback.to_variant()],
        );
        true
    }

    /// The island's walkable ground (dry cells only, see the class docs of
    /// `bake_navigation_mesh_async`) as a triangle list of node-local vertices, three per
    /// triangle: what the navigation parser gives `NavigationServer3D`. Empty before the first
    /// generation.
    #[func]
    pub fn get_walkable_faces(&self) -> PackedVector3Array {
        self.runtime_parts()
            .0
            .map_or_else(PackedVector3Array::new, |i| walkable_faces(&i))
    }
}
