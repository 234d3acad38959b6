//! The chunks' material: the user's `terrain_material`, or the built-in splat shader
//! (`res://addons/procedural_island/terrain.gdshader`, or the copy compiled into the library
//! when the addon file cannot be loaded), created once per node.

use godot::classes::{Material, ResourceLoader, Shader, ShaderMaterial};
use godot::prelude::*;

/// Where the addon keeps its copy of `shaders/terrain.gdshader`.
const SHADER_PATH: &str = "res://addons/procedural_island/terrain.gdshader";
/// Built-in copy of the terrain shader, used when the addon file cannot be loaded.
const SHADER_CODE: &str = include_str!("../../../shaders/terrain.gdshader");

/// The node's material state.
#[derive(Default)]
pub struct TerrainMaterial {
    /// The built-in splat material (created on first use).
    default: Option<Gd<ShaderMaterial>>,
    /// `terrain_material` currently assigned to the chunks (instance id, or None for the
    /// default); None before the first assignment.
    applied: Option<Option<InstanceId>>,
}

/// A `ShaderMaterial` with the addon's shader at `path`, or with `code` (the copy compiled into
/// the library) when the addon file cannot be loaded. Shared by the terrain and water materials.
pub fn builtin_shader_material(path: &str, code: &str) -> Gd<ShaderMaterial> {
    let mut loader = ResourceLoader::singleton();
    let shader = if loader.exists(path) {
        loader.load(path).and_then(|r| r.try_cast::<Shader>().ok())
    } else {
        None
    };
    let shader = shader.unwrap_or_else(|| {
        let mut s = Shader::new_gd();
        s.set_code(code);
        s
    });
    let mut m = ShaderMaterial::new_gd();
    m.set_shader(&shader);
    m
}

impl TerrainMaterial {
    /// The material of every chunk: `user` or the built-in one.
    pub fn resolve(&mut self, user: Option<&Gd<Material>>) -> Gd<Material> {
        if let Some(m) = user {
            return m.clone();
        }
        self.default
            .get_or_insert_with(|| builtin_shader_material(SHADER_PATH, SHADER_CODE))
            .clone()
            .upcast()
    }

    /// Whether `user` is not the material last marked applied; marks it applied.
    pub fn changed(&mut self, user: Option<&Gd<Material>>) -> bool {
        let id = user.map(|m| m.instance_id());
        if self.applied == Some(id) {
            return false;
        }
        self.applied = Some(id);
        true
    }

    /// The materials the splat maps are set on: the built-in one (if created) and `user` when
    /// it is a `ShaderMaterial`.
    pub fn shader_materials(&self, user: Option<&Gd<Material>>) -> Vec<Gd<ShaderMaterial>> {
        let mut mats: Vec<Gd<ShaderMaterial>> = self.default.iter().cloned().collect();
        if let Some(t) = user.and_then(|t| t.clone().try_cast::<ShaderMaterial>().ok()) {
            mats.push(t);
        }
        mats
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn addon_shader_is_the_repository_shader() {
        let addon =
            include_str!("../../../godot_project/addons/procedural_island/terrain.gdshader");
        assert_eq!(
            addon,
            super::SHADER_CODE,
            "copy shaders/terrain.gdshader into the addon"
        );
    }
}
