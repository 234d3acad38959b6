//! The chunks' material: the user's `terrain_material`, or the built-in splat shader
//! (`res://addons/procedural_island/terrain.gdshader`, or the copy compiled into the library
//! when the addon file cannot be loaded), created once per node.
//!
//! The built-in material switches between two builds of that one shader file: while no
//! `TerrainLayer` has a texture it draws with a copy that has `#define TERRAIN_NO_LAYER_TEXTURES`
//! after its `shader_type` line (never samples the layer texture arrays: the same picture with
//! less work), and with the file itself once a layer has a texture. Both declare the same
//! uniforms, so the parameters stay on the material across the switch. On a software
//! rasteriser (a CPU-type rendering device: Mesa's llvmpipe/lavapipe) the textured build also
//! has `#define TERRAIN_NO_ANISOTROPY` (trilinear instead of anisotropic sampling of the layer
//! textures, which took minutes per frame there).

use godot::classes::{Material, ResourceLoader, Shader, ShaderMaterial};
use godot::prelude::*;
use std::cell::RefCell;

thread_local! {
    /// The two builds of the terrain shader, shared by every island (main thread only): a
    /// world of islands parses and compiles them once, not once per island. Keyed by the
    /// shader file's code, so an edited file gets new builds.
    static SHADERS: RefCell<Option<SharedShaders>> = const { RefCell::new(None) };
}

struct SharedShaders {
    code: GString,
    software: bool,
    textured: Gd<Shader>,
    plain: Gd<Shader>,
}

/// Forget the shared shader builds (when the extension unloads, before Godot's own shutdown).
pub fn release_shader_cache() {
    SHADERS.with_borrow_mut(|s| s.take());
}

/// Where the addon keeps its copy of `shaders/terrain.gdshader`.
const SHADER_PATH: &str = "res://addons/procedural_island/terrain.gdshader";
/// Built-in copy of the terrain shader, used when the addon file cannot be loaded.
const SHADER_CODE: &str = include_str!("../../../../shaders/terrain.gdshader");

/// The define that leaves the layer textures out of the terrain shader.
const NO_LAYER_TEXTURES: &str = "#define TERRAIN_NO_LAYER_TEXTURES";
/// The define that samples the layer textures without anisotropic filtering.
const NO_ANISOTROPY: &str = "#define TERRAIN_NO_ANISOTROPY";

/// `code` with [`NO_LAYER_TEXTURES`] after its `shader_type` line (unchanged when it has none:
/// such a shader would not compile anyway).
fn without_layer_textures(code: &str) -> String {
    with_define(code, NO_LAYER_TEXTURES)
}

/// `code` with `define` after its `shader_type` line (unchanged when it has none).
fn with_define(code: &str, define: &str) -> String {
    // Byte offset of the end of the first line that starts with `shader_type`.
    let mut at = 0;
    let mut end = None;
    for line in code.split_inclusive('\n') {
        at += line.len();
        if line.trim_start().starts_with("shader_type") {
            end = Some(at);
            break;
        }
    }
    let Some(end) = end else {
        return code.to_string();
    };
    let mut out = String::with_capacity(code.len() + define.len() + 2);
    out.push_str(&code[..end]);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(define);
    out.push('\n');
    out.push_str(&code[end..]);
    out
}

/// The built-in splat material and the two builds of its shader.
struct Builtin {
    material: Gd<ShaderMaterial>,
    /// The shader file itself (samples the layer textures).
    textured: Gd<Shader>,
    /// The build with [`NO_LAYER_TEXTURES`].
    plain: Gd<Shader>,
    /// Whether `material` draws with `textured`.
    uses_textures: bool,
}

/// The node's material state.
#[derive(Default)]
pub struct TerrainMaterial {
    /// The built-in splat material (made by [`TerrainMaterial::prepare`]).
    builtin: Option<Builtin>,
    /// `terrain_material` currently assigned to the chunks (instance id, or None for the
    /// default); None before the first assignment.
    applied: Option<Option<InstanceId>>,
}

/// The addon's shader at `path`, or one with `code` (the copy compiled into the library) when
/// the addon file cannot be loaded.
fn builtin_shader(path: &str, code: &str) -> Gd<Shader> {
    let mut loader = ResourceLoader::singleton();
    let shader = if loader.exists(path) {
        loader.load(path).and_then(|r| r.try_cast::<Shader>().ok())
    } else {
        None
    };
    shader.unwrap_or_else(|| {
        let mut s = Shader::new_gd();
        s.set_code(code);
        s
    })
}

/// A `ShaderMaterial` with the addon's shader at `path`, or with `code` (the copy compiled into
/// the library) when the addon file cannot be loaded. Shared by the terrain and water materials.
pub fn builtin_shader_material(path: &str, code: &str) -> Gd<ShaderMaterial> {
    let mut m = ShaderMaterial::new_gd();
    m.set_shader(&builtin_shader(path, code));
    m
}

/// Whether the rendering device is a CPU (a software rasteriser such as llvmpipe), where
/// anisotropic texture sampling is pathologically slow. False without a rendering device
/// (headless) or on the Compatibility renderer.
fn software_rasteriser() -> bool {
    use godot::classes::rendering_device::DeviceType;
    use godot::classes::RenderingServer;
    let rs = RenderingServer::singleton();
    rs.get_rendering_device().is_some() && rs.get_video_adapter_type() == DeviceType::CPU
}

/// Make the shared terrain shader builds now (a few milliseconds, mostly Godot parsing the
/// shader code), e.g. while a scene loads, rather than in the frame of the first island node.
pub fn warm_up() {
    let _ = shared_shaders();
}

/// The textured and plain builds of the terrain shader, made once and shared.
fn shared_shaders() -> (Gd<Shader>, Gd<Shader>) {
    let file = builtin_shader(SHADER_PATH, SHADER_CODE);
    let code = file.get_code();
    let software = software_rasteriser();
    // Only the main thread shares (and releases at unload) its builds: an island made on a
    // loader thread (threaded scene loading) gets its own, freed with it.
    let os = godot::classes::Os::singleton();
    let main = os.get_thread_caller_id() == os.get_main_thread_id();
    let build = |file: Gd<Shader>| {
        let text = code.to_string();
        let mut plain = Shader::new_gd();
        plain.set_code(&without_layer_textures(&text));
        let textured = if software {
            let mut t = Shader::new_gd();
            t.set_code(&with_define(&text, NO_ANISOTROPY));
            t
        } else {
            file
        };
        (textured, plain)
    };
    if !main {
        return build(file);
    }
    SHADERS.with_borrow_mut(|cache| {
        if let Some(c) = cache.as_ref() {
            if c.code == code && c.software == software {
                return (c.textured.clone(), c.plain.clone());
            }
        }
        let (textured, plain) = build(file);
        *cache = Some(SharedShaders {
            code: code.clone(),
            software,
            textured: textured.clone(),
            plain: plain.clone(),
        });
        (textured, plain)
    })
}

impl TerrainMaterial {
    /// The material of every chunk: `user` or the built-in one.
    pub fn resolve(&mut self, user: Option<&Gd<Material>>) -> Gd<Material> {
        if let Some(m) = user {
            return m.clone();
        }
        self.prepare();
        let b = self.builtin.as_ref().expect("made by prepare");
        b.material.clone().upcast()
    }

    /// Make the built-in material (once; a few milliseconds, mostly Godot parsing the shader
    /// code): the node calls it when it becomes ready, so the first frames of a generation
    /// do not pay for it.
    pub fn prepare(&mut self) {
        if self.builtin.is_some() {
            return;
        }
        let (textured, plain) = shared_shaders();
        let mut material = ShaderMaterial::new_gd();
        material.set_shader(&plain);
        self.builtin = Some(Builtin {
            material,
            textured,
            plain,
            uses_textures: false,
        });
    }

    /// Draw the built-in material with the layer textures (`true`: some `TerrainLayer` has a
    /// texture) or without them.
    pub fn use_layer_textures(&mut self, textured: bool) {
        let Some(b) = self.builtin.as_mut() else {
            return;
        };
        if b.uses_textures != textured {
            b.uses_textures = textured;
            let shader = if textured { &b.textured } else { &b.plain };
            b.material.set_shader(shader);
        }
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
        let mut mats: Vec<Gd<ShaderMaterial>> =
            self.builtin.iter().map(|b| b.material.clone()).collect();
        if let Some(t) = user.and_then(|t| t.clone().try_cast::<ShaderMaterial>().ok()) {
            mats.push(t);
        }
        mats
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_define_goes_after_the_shader_type_line() {
        let code = "// doc\nshader_type spatial;\nuniform float a;\n";
        assert_eq!(
            super::without_layer_textures(code),
            "// doc\nshader_type spatial;\n#define TERRAIN_NO_LAYER_TEXTURES\nuniform float a;\n"
        );
        assert_eq!(
            super::without_layer_textures("shader_type spatial;"),
            "shader_type spatial;\n#define TERRAIN_NO_LAYER_TEXTURES\n"
        );
        assert_eq!(super::without_layer_textures("nothing"), "nothing");
        // Only a line that starts with it counts (the shader's comments mention it).
        assert_eq!(
            super::without_layer_textures("// after `shader_type`\nshader_type spatial;\n"),
            "// after `shader_type`\nshader_type spatial;\n#define TERRAIN_NO_LAYER_TEXTURES\n"
        );
        let real = super::without_layer_textures(super::SHADER_CODE);
        assert!(real.contains("shader_type spatial;\n#define TERRAIN_NO_LAYER_TEXTURES\n"));
        assert!(super::SHADER_CODE.contains("#ifdef TERRAIN_NO_LAYER_TEXTURES"));
    }

    #[test]
    fn addon_shader_is_the_repository_shader() {
        let addon =
            include_str!("../../../../godot_project/addons/procedural_island/terrain.gdshader");
        assert_eq!(
            addon,
            super::SHADER_CODE,
            "copy shaders/terrain.gdshader into the addon"
        );
    }
}
