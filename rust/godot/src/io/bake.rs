//! Bake: the generated island as plain Godot nodes, saved as a scene ([`bake_scene`]) that
//! loads without the extension, or written as glTF ([`export_gltf`]) for other tools.
//!
//! The scene (`.tscn` or `.scn`) holds a `Node3D` root with
//! * `Terrain`: one `MeshInstance3D` per chunk (`Chunk_<cx>_<cz>`, full resolution: positions,
//!   normals, UVs over the island, splat weights 0..3 as vertex colours), each with a
//!   `StaticBody3D` / `CollisionShape3D` / `HeightMapShape3D` collider laid out exactly like the
//!   live island's (same heights, position and scale, so ray casts hit the same points);
//! * `Water`: copies of the island's sea, river and lake surfaces, when there are any.
//!
//! Materials: the terrain keeps the material the island draws with. For the built-in one (and the
//! built-in water material) the shader *code* is embedded in the scene as a sub-resource (not a
//! reference to `res://addons/procedural_island/*.gdshader`, which a project without the addon
//! lacks), and the splat maps, the water depth map and the `TerrainLayer` texture arrays are
//! embedded as images. A user `terrain_material` / `water_material` saved as a file is referenced
//! by its path. No class of the extension is used, so the scene loads in any Godot 4 project.
//!
//! glTF (`.gltf` or `.glb`): the same meshes (no colliders), with plain `StandardMaterial3D`s
//! (glTF cannot carry Godot shaders); the splat weights of layers 0..3 stay in the vertex colours
//! (`COLOR_0`: r sand, g grass, b rock, a snow) for masks in Blender.

use crate::island::chunk_data::mesh_colors;
use godot::classes::mesh::{ArrayType, PrimitiveType};
use godot::classes::{
    ArrayMesh, BaseMaterial3D, CollisionShape3D, DirAccess, GltfDocument, GltfState,
    HeightMapShape3D, Material, MeshInstance3D, Node, Node3D, PackedScene, ResourceSaver, Shader,
    ShaderMaterial, StandardMaterial3D, StaticBody3D, Texture2DArray,
};
use godot::global::Error;
use godot::prelude::*;
use island_core::Island;
use std::collections::HashMap;

/// What a bake needs from the island node.
pub struct BakeInput<'a> {
    /// Name of the root node (the island node's name).
    pub name: String,
    pub island: &'a Island,
    pub flat_shading: bool,
    /// The material the chunks are drawn with.
    pub terrain_material: Gd<Material>,
    /// The island node (its internal water surfaces are copied).
    pub node: Gd<Node3D>,
}

/// A failed bake: the Godot error code and a message for `push_error`.
pub type BakeResult<T> = Result<T, (Error, String)>;

/// Which file a path asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Scene,
    Gltf,
}

/// Check the path's extension against `target`.
pub fn check_path(path: &str, target: Target) -> BakeResult<()> {
    let lower = path.to_lowercase();
    let ok: &[&str] = match target {
        Target::Scene => &[".tscn", ".scn"],
        Target::Gltf => &[".gltf", ".glb"],
    };
    let file = lower.rsplit(['/', '\\']).next().unwrap_or("");
    if path.trim().is_empty() || file.len() <= 5 || !ok.iter().any(|e| lower.ends_with(e)) {
        return Err((
            Error::ERR_FILE_BAD_PATH,
            format!(
                "bad path \"{path}\": expected a file name ending in {}",
                ok.join(" or ")
            ),
        ));
    }
    Ok(())
}

/// Chunk size of the island's chunks (its parameters' `chunk_size`, or one chunk when that does
/// not divide the map).
fn chunk_size(island: &Island) -> usize {
    let n = island.field.resolution;
    let cs = island.params.chunk_size as usize;
    if cs > 0 && (n - 1).is_multiple_of(cs) {
        cs
    } else {
        n - 1
    }
}

/// Mesh of chunk (cx, cz) at full resolution (the same vertices as the live chunk).
fn chunk_mesh(island: &Island, cx: usize, cz: usize, cs: usize, flat: bool) -> Gd<ArrayMesh> {
    let field = &island.field;
    let m = field.chunk_mesh(cx, cz, cs, flat);
    let colors = mesh_colors(&m, &island.splat, field.resolution);
    let mut arrays = VarArray::new();
    arrays.resize(ArrayType::MAX.ord() as usize, &Variant::nil());
    let v = crate::island::surface::vec3_array(&m.positions);
    let nrm = crate::island::surface::vec3_array(&m.normals);
    let uv: PackedVector2Array = m.uvs.iter().map(|p| Vector2::new(p[0], p[1])).collect();
    let idx: PackedInt32Array = m.indices.iter().map(|&i| i as i32).collect();
    arrays.set(ArrayType::VERTEX.ord() as usize, &v.to_variant());
    arrays.set(ArrayType::NORMAL.ord() as usize, &nrm.to_variant());
    arrays.set(ArrayType::TEX_UV.ord() as usize, &uv.to_variant());
    arrays.set(
        ArrayType::COLOR.ord() as usize,
        &PackedColorArray::from(&colors[..]).to_variant(),
    );
    arrays.set(ArrayType::INDEX.ord() as usize, &idx.to_variant());
    let mut mesh = ArrayMesh::new_gd();
    mesh.add_surface_from_arrays(PrimitiveType::TRIANGLES, &arrays);
    mesh
}

/// Copies made by [`standalone_material`], by source material (shared sources stay shared).
type MaterialCache = HashMap<InstanceId, Gd<Material>>;

/// A copy of `m` that does not depend on the addon: a `ShaderMaterial` whose shader is a file
/// gets the shader code embedded instead.
fn standalone_material(m: &Gd<Material>, cache: &mut MaterialCache) -> Gd<Material> {
    cache
        .entry(m.instance_id())
        .or_insert_with(|| standalone_copy(m))
        .clone()
}

fn standalone_copy(m: &Gd<Material>) -> Gd<Material> {
    let Ok(sm) = m.clone().try_cast::<ShaderMaterial>() else {
        return m.clone();
    };
    let mut copy = sm.duplicate_resource();
    warn_unreadable_arrays(&copy);
    if let Some(shader) = sm.get_shader() {
        if !shader.get_path().is_empty() {
            let mut s = Shader::new_gd();
            s.set_code(&shader.get_code());
            copy.set_shader(&s);
        }
    }
    copy.upcast()
}

/// Headless Godot (the dummy renderer) cannot read a `Texture2DArray`'s pixels back, so the
/// `TerrainLayer` texture arrays would be saved empty: say so.
fn warn_unreadable_arrays(m: &Gd<ShaderMaterial>) {
    for p in [
        "layer_albedo_textures",
        "layer_normal_textures",
        "layer_roughness_textures",
    ] {
        let v = m.get_shader_parameter(p);
        let Ok(a) = v.try_to::<Gd<Texture2DArray>>() else {
            continue;
        };
        if a.get_layers() > 0 && a.get_layer_data(0).is_none() {
            godot_warn!(
                "ProceduralIsland.bake: the pixels of `{p}` cannot be read back with this                  renderer (headless?): the baked scene's terrain layer textures will be empty;                  bake from the editor or a windowed run"
            );
        }
    }
}

/// The island as plain nodes (root not in the tree; the caller frees it). `colliders` adds the
/// `StaticBody3D`s; `gltf` gives every mesh a `StandardMaterial3D` instead of the island's.
fn build_tree(input: &BakeInput, colliders: bool, gltf: bool) -> Gd<Node3D> {
    let island = input.island;
    let field = &island.field;
    let cs = chunk_size(island);
    let per_side = (field.resolution - 1) / cs;
    let mut root = Node3D::new_alloc();
    root.set_name(&input.name);
    let mut terrain = Node3D::new_alloc();
    terrain.set_name("Terrain");
    root.add_child(&terrain);
    let mut cache = MaterialCache::new();
    let terrain_mat: Gd<Material> = if gltf {
        let mut m = StandardMaterial3D::new_gd();
        m.set_name("terrain");
        m.set_albedo(Color::from_rgb(0.45, 0.5, 0.35));
        m.upcast()
    } else {
        standalone_material(&input.terrain_material, &mut cache)
    };
    for cz in 0..per_side {
        for cx in 0..per_side {
            let mut mi = MeshInstance3D::new_alloc();
            mi.set_name(&format!("Chunk_{cx}_{cz}"));
            let mut mesh = chunk_mesh(island, cx, cz, cs, input.flat_shading);
            if gltf {
                mesh.surface_set_material(0, &terrain_mat);
            } else {
                mi.set_material_override(&terrain_mat);
            }
            mi.set_mesh(&mesh);
            terrain.add_child(&mi);
            if colliders {
                let col = field.chunk_collider(cx, cz, cs);
                let mut shape = HeightMapShape3D::new_gd();
                shape.set_map_width(col.width as i32);
                shape.set_map_depth(col.depth as i32);
                shape.set_map_data(&PackedFloat32Array::from(&col.heights[..]));
                let mut body = StaticBody3D::new_alloc();
                body.set_name("StaticBody3D");
                let mut shape_node = CollisionShape3D::new_alloc();
                shape_node.set_name("CollisionShape3D");
                shape_node.set_shape(&shape);
                shape_node.set_position(Vector3::new(col.offset[0], col.offset[1], col.offset[2]));
                shape_node.set_scale(Vector3::new(col.cell_size, 1.0, col.cell_size));
                body.add_child(&shape_node);
                mi.add_child(&body);
            }
        }
    }
    // The water surfaces: the island's internal `Sea` and `Water_<cx>_<cz>` meshes.
    let mut water: Option<Gd<Node3D>> = None;
    let node = input.node.clone().upcast::<Node>();
    let count = node.get_child_count_ex().include_internal(true).done();
    for i in 0..count {
        let Some(child) = node.get_child_ex(i).include_internal(true).done() else {
            continue;
        };
        let name = child.get_name().to_string();
        if name != "Sea" && !name.starts_with("Water_") {
            continue;
        }
        let Ok(src) = child.try_cast::<MeshInstance3D>() else {
            continue;
        };
        let Some(mesh) = src.get_mesh() else {
            continue;
        };
        if !src.is_visible() || mesh.get_surface_count() == 0 {
            continue;
        }
        let mut mesh = mesh.duplicate_resource();
        let w = water.get_or_insert_with(|| {
            let mut w = Node3D::new_alloc();
            w.set_name("Water");
            root.add_child(&w);
            w
        });
        let mut mi = MeshInstance3D::new_alloc();
        mi.set_name(&name);
        mi.set_transform(src.get_transform());
        mi.set_cast_shadows_setting(src.get_cast_shadows_setting());
        if gltf {
            let mut m = StandardMaterial3D::new_gd();
            m.set_name("water");
            m.set_albedo(Color::from_rgba(0.1, 0.35, 0.5, 0.7));
            m.set_transparency(godot::classes::base_material_3d::Transparency::ALPHA);
            let m: Gd<BaseMaterial3D> = m.upcast();
            for s in 0..mesh.get_surface_count() {
                mesh.surface_set_material(s, &m);
            }
        } else if let Some(m) = src.get_material_override() {
            mi.set_material_override(&standalone_material(&m, &mut cache));
        }
        mi.set_mesh(&mesh);
        w.add_child(&mi);
    }
    set_owner_recursive(&root.clone().upcast(), &root.clone().upcast());
    root
}

fn set_owner_recursive(node: &Gd<Node>, owner: &Gd<Node>) {
    for mut c in node.get_children().iter_shared() {
        c.set_owner(owner);
        set_owner_recursive(&c, owner);
    }
}

/// Make the folder of `path` (so a bake into a new folder works).
fn make_dir(path: &str) -> BakeResult<()> {
    let Some(cut) = path.rfind('/') else {
        return Ok(());
    };
    let dir = &path[..cut];
    if dir.is_empty() || dir.ends_with(':') || dir.ends_with(":/") {
        return Ok(());
    }
    let err = DirAccess::make_dir_recursive_absolute(dir);
    if err != Error::OK && err != Error::ERR_ALREADY_EXISTS {
        return Err((err, format!("cannot create the folder \"{dir}\": {err:?}")));
    }
    Ok(())
}

/// Save the island as a scene at `path` (`.tscn` or `.scn`).
pub fn bake_scene(input: &BakeInput, path: &str) -> BakeResult<()> {
    check_path(path, Target::Scene)?;
    make_dir(path)?;
    let root = build_tree(input, true, false);
    let mut scene = PackedScene::new_gd();
    let packed = scene.pack(&root);
    root.upcast::<Node>().free();
    if packed != Error::OK {
        return Err((
            packed,
            format!("could not pack the baked scene: {packed:?}"),
        ));
    }
    let err = ResourceSaver::singleton().save_ex(&scene).path(path).done();
    if err != Error::OK {
        return Err((err, format!("could not write \"{path}\": {err:?}")));
    }
    Ok(())
}

/// Write the island's meshes as glTF at `path` (`.gltf` or `.glb`).
pub fn export_gltf(input: &BakeInput, path: &str) -> BakeResult<()> {
    check_path(path, Target::Gltf)?;
    make_dir(path)?;
    let root = build_tree(input, false, true);
    let mut doc = GltfDocument::new_gd();
    let state = GltfState::new_gd();
    let err = doc.append_from_scene(&root, &state);
    let result = if err != Error::OK {
        Err((err, format!("glTF export failed: {err:?}")))
    } else {
        let err = doc.write_to_filesystem(&state, path);
        if err != Error::OK {
            Err((err, format!("could not write \"{path}\": {err:?}")))
        } else {
            Ok(())
        }
    };
    root.upcast::<Node>().free();
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_need_the_right_extension() {
        assert!(check_path("res://baked/island.tscn", Target::Scene).is_ok());
        assert!(check_path("user://island.SCN", Target::Scene).is_ok());
        assert!(check_path("res://island.glb", Target::Gltf).is_ok());
        assert!(check_path("/tmp/x/island.gltf", Target::Gltf).is_ok());
        for bad in [
            "",
            "res://island.res",
            "res://.tscn",
            "res://island.tscn.txt",
        ] {
            assert_eq!(
                check_path(bad, Target::Scene).unwrap_err().0,
                Error::ERR_FILE_BAD_PATH,
                "{bad}"
            );
        }
        assert!(check_path("res://island.tscn", Target::Gltf).is_err());
    }
}
