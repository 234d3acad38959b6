//! The `TerrainLayer` resource (one entry of `ProceduralIsland.terrain_layers`: name, tint,
//! optional albedo / normal / roughness textures, UV scale, triplanar blend) and
//! [`TerrainLayers`], the island's collaborator that turns the list into the built-in terrain
//! shader's parameters: three `Texture2DArray`s (albedo, normal, roughness; one slot per layer
//! that has that texture, every slot converted to one size and format with mipmaps) and per-layer
//! slot indices, tints, UV scales and triplanar blends.
//!
//! Built on the main thread only: when the list changes (checked every frame, cheap), when a
//! layer emits `changed` (its setters do, and it forwards its textures' `changed`) and when the
//! chunks' material changes. With no layers nothing is set on the material, so the terrain
//! looks exactly as without this feature; a layer without textures keeps the built-in colour.
//!
//! Textures whose pixels arrive later (a `NoiseTexture2D` generating on a thread, a
//! `GradientTexture2D` before its first update, a `CompressedTexture2D` still importing) are
//! *pending*, not errors: the layer is drawn without them and the arrays are rebuilt when the
//! texture emits `changed` or its pixels become readable (polled every
//! [`PENDING_POLL`]); only a texture still unreadable after [`PENDING_TIMEOUT`] is reported.

use godot::classes::image::{Format, Interpolation};
use godot::classes::{
    CompressedTexture2D, GradientTexture2D, IResource, Image, NoiseTexture2D, Resource,
    ShaderMaterial, Texture2D, Texture2DArray,
};
use godot::prelude::*;
use island_core::paint::LAYERS;
use std::time::{Duration, Instant};

/// How often pending textures (see the module doc) are asked for their pixels again.
pub const PENDING_POLL: Duration = Duration::from_millis(200);
/// How long a texture may stay pending before it is reported as unreadable.
pub const PENDING_TIMEOUT: Duration = Duration::from_secs(10);

/// Largest side of the texture arrays; bigger textures are scaled down to it.
pub const MAX_TEXTURE_SIZE: i32 = 4096;

/// Built-in layer names (the terrain shader's groups and `TerrainBrush.LAYER_*`).
pub const BUILTIN_NAMES: [&str; LAYERS] = [
    "Sand", "Grass", "Rock", "Snow", "Forest", "Dirt", "Gravel", "Meadow",
];

/// One splat layer's look in the built-in terrain material of a [ProceduralIsland]: entry `i` of
/// [member ProceduralIsland.terrain_layers] styles splat layer `i` (0 sand, 1 grass, 2 rock,
/// 3 snow, 4 forest, 5 dirt, 6 gravel, 7 meadow). A layer without an albedo texture keeps the
/// built-in procedural colour (multiplied by [member tint]); one with textures shows them,
/// projected from above on gentle ground and triplanar on steep slopes.
///
/// Textures of any size and format are accepted: they are decompressed, converted to RGBA8 and
/// scaled to the largest texture of the same kind (at most 4096 px) with mipmaps, in one
/// `Texture2DArray` per kind. Changing a property (or re-importing a texture) updates the island.
#[derive(GodotClass)]
#[class(tool, base=Resource)]
pub struct TerrainLayer {
    base: Base<Resource>,
    /// Name shown in the `TerrainBrush` layer menu (empty: the built-in name).
    #[export]
    #[var(set = set_name)]
    name: GString,
    /// Colour multiplied with the albedo texture, or with the built-in colour when there is no
    /// texture (white = unchanged).
    #[export]
    #[var(set = set_tint)]
    tint: Color,
    /// Albedo (colour) texture; null = the built-in procedural colour.
    // Editor-only: saved through `stored_textures` (see there).
    #[export]
    #[var(set = set_albedo_texture, usage_flags = [EDITOR])]
    albedo_texture: Option<Gd<Texture2D>>,
    /// Normal map (OpenGL convention, green up, like Godot's); null = the mesh normals.
    #[export]
    #[var(set = set_normal_texture, usage_flags = [EDITOR])]
    normal_texture: Option<Gd<Texture2D>>,
    /// Roughness texture (red channel, 0 smooth .. 1 rough); null = the layer's built-in
    /// roughness.
    #[export]
    #[var(set = set_roughness_texture, usage_flags = [EDITOR])]
    roughness_texture: Option<Gd<Texture2D>>,
    /// The three textures as saved, `[albedo, normal, roughness]` (storage only; scenes from
    /// before this property, with `albedo_texture = ...` lines, still load).
    ///
    /// Why not save the texture properties themselves: the editor's resource preview thread
    /// hashes every saved resource-typed property of a resource it previews by calling its
    /// getter (`Resource.hash_edited_version_for_preview`), and an extension's getter cannot run
    /// off the main thread. An array property is not hashed that way.
    #[allow(dead_code)] // read and written through get/set_stored_textures
    #[export(storage)]
    #[var(get = get_stored_textures, set = set_stored_textures)]
    stored_textures: VarArray,
    /// Metres per texture repeat (0.1..100).
    #[export(range = (0.1, 100.0, 0.1, or_greater, suffix = "m"))]
    #[var(set = set_uv_scale)]
    uv_scale: f32,
    /// How much the textures switch to triplanar projection on steep slopes (cliffs): 0 = always
    /// projected from above (stretched on cliffs), 1 = fully triplanar where the slope is steep.
    #[export(range = (0.0, 1.0, 0.01))]
    #[var(set = set_triplanar)]
    triplanar: f32,
}

#[godot_api]
impl IResource for TerrainLayer {
    fn init(base: Base<Resource>) -> Self {
        TerrainLayer {
            base,
            name: GString::new(),
            tint: Color::WHITE,
            albedo_texture: None,
            normal_texture: None,
            roughness_texture: None,
            stored_textures: VarArray::new(),
            uv_scale: 8.0,
            triplanar: 1.0,
        }
    }
}

#[godot_api]
impl TerrainLayer {
    #[func]
    pub fn set_name(&mut self, name: GString) {
        self.name = name;
        self.base_mut().emit_changed();
    }

    #[func]
    pub fn set_tint(&mut self, tint: Color) {
        self.tint = tint;
        self.base_mut().emit_changed();
    }

    #[func]
    pub fn set_albedo_texture(&mut self, texture: Option<Gd<Texture2D>>) {
        let old = std::mem::replace(&mut self.albedo_texture, texture.clone());
        self.follow_texture(old, texture);
    }

    #[func]
    pub fn set_normal_texture(&mut self, texture: Option<Gd<Texture2D>>) {
        let old = std::mem::replace(&mut self.normal_texture, texture.clone());
        self.follow_texture(old, texture);
    }

    #[func]
    pub fn set_roughness_texture(&mut self, texture: Option<Gd<Texture2D>>) {
        let old = std::mem::replace(&mut self.roughness_texture, texture.clone());
        self.follow_texture(old, texture);
    }

    /// `[albedo, normal, roughness]`, what is saved.
    #[func]
    pub fn get_stored_textures(&self) -> VarArray {
        let mut a = VarArray::new();
        for t in [
            &self.albedo_texture,
            &self.normal_texture,
            &self.roughness_texture,
        ] {
            a.push(&t.to_variant());
        }
        a
    }

    /// Load `[albedo, normal, roughness]` (missing entries and non-textures are null).
    #[func]
    pub fn set_stored_textures(&mut self, textures: VarArray) {
        let get = |i: usize| -> Option<Gd<Texture2D>> {
            textures
                .get(i)
                .and_then(|v| v.try_to::<Option<Gd<Texture2D>>>().ok())
                .flatten()
        };
        self.set_albedo_texture(get(0));
        self.set_normal_texture(get(1));
        self.set_roughness_texture(get(2));
    }

    #[func]
    pub fn set_uv_scale(&mut self, uv_scale: f32) {
        // The shader divides by it: keep it positive (the inspector range is 0.1..).
        self.uv_scale = if uv_scale.is_finite() {
            uv_scale.max(0.001)
        } else {
            8.0
        };
        self.base_mut().emit_changed();
    }

    #[func]
    pub fn set_triplanar(&mut self, triplanar: f32) {
        self.triplanar = if triplanar.is_finite() {
            triplanar.clamp(0.0, 1.0)
        } else {
            1.0
        };
        self.base_mut().emit_changed();
    }

    /// Forward the `changed` signal of the new texture (a re-import) and stop forwarding the
    /// old one's; then emit `changed`.
    fn follow_texture(&mut self, old: Option<Gd<Texture2D>>, new: Option<Gd<Texture2D>>) {
        let callable = Callable::from_object_method(&self.to_gd(), "emit_changed");
        let still_used = |t: &Gd<Texture2D>| {
            [
                &self.albedo_texture,
                &self.normal_texture,
                &self.roughness_texture,
            ]
            .iter()
            .any(|o| o.as_ref().is_some_and(|x| x == t))
        };
        if let Some(mut o) = old {
            if !still_used(&o) && o.is_connected("changed", &callable) {
                o.disconnect("changed", &callable);
            }
        }
        if let Some(mut n) = new {
            if !n.is_connected("changed", &callable) {
                n.connect("changed", &callable);
            }
        }
        self.base_mut().emit_changed();
    }
}

/// Plain copy of one layer's settings.
#[derive(Clone, Debug, PartialEq)]
struct LayerSpec {
    tint: Color,
    uv_scale: f32,
    triplanar: f32,
    textures: [Option<Gd<Texture2D>>; 3],
}

/// Texture kinds, in the order of [`LayerSpec::textures`].
const KINDS: [(&str, &str); 3] = [
    ("albedo", "layer_albedo_textures"),
    ("normal", "layer_normal_textures"),
    ("roughness", "layer_roughness_textures"),
];
/// Slot-index uniforms, same order.
const SLOT_PARAMS: [&str; 3] = [
    "layer_albedo_slot",
    "layer_normal_slot",
    "layer_roughness_slot",
];

/// The shader parameters built from the layer list.
#[derive(Default)]
struct Built {
    /// One array per kind (None: no layer has that texture).
    arrays: [Option<Gd<Texture2DArray>>; 3],
    /// Per layer and kind: slot in the array, -1 = none.
    slots: [[i32; LAYERS]; 3],
    tint: [Color; LAYERS],
    uv_scale: [Option<f32>; LAYERS],
    triplanar: [f32; LAYERS],
    /// Whether any layer is set (otherwise nothing is written on the materials).
    any: bool,
    /// Textures whose pixels are not there yet: (layer, kind, texture).
    pending: Vec<(usize, usize, Gd<Texture2D>)>,
}

/// The island's terrain-layer state (see the module doc).
#[derive(Default)]
pub struct TerrainLayers {
    /// Layers whose `changed` is connected to the island.
    connected: Vec<Option<Gd<TerrainLayer>>>,
    /// Set by a layer's `changed` (through the island) or a list change.
    dirty: bool,
    built: Option<Built>,
    /// Materials the current parameters were written on (instance ids).
    applied: Vec<InstanceId>,
    /// Whether the last write set layer parameters (to reset them when the list empties).
    wrote: bool,
    /// Since when some texture has been pending (None: none is).
    pending_since: Option<Instant>,
    /// When the pending textures were last asked for their pixels.
    pending_polled: Option<Instant>,
    /// Whether the pending textures' timeout has been reported (once per pending spell).
    pending_reported: bool,
}

impl TerrainLayers {
    /// A layer emitted `changed`.
    pub fn mark_dirty(&mut self) {
        self.dirty = true;
    }

    /// Whether some layer's texture is still waiting for its pixels (see the module doc).
    pub fn pending(&self) -> bool {
        self.built.as_ref().is_some_and(|b| !b.pending.is_empty())
    }

    /// Whether some layer has a texture (the shader must sample the arrays).
    pub fn textured(&self) -> bool {
        self.built
            .as_ref()
            .is_some_and(|b| b.arrays.iter().any(Option::is_some))
    }

    /// The shader's `Texture2DArray` of one kind (0 albedo, 1 normal, 2 roughness), if built.
    pub fn array(&self, kind: usize) -> Option<Gd<Texture2DArray>> {
        self.built.as_ref()?.arrays.get(kind)?.clone()
    }

    /// Follow the list (connect `changed` of new layers to `on_changed`), rebuild the arrays when
    /// something changed, and write the parameters on `mats` when they changed or a material is
    /// new. Cheap when nothing changed.
    pub fn sync(
        &mut self,
        layers: &Array<Option<Gd<TerrainLayer>>>,
        on_changed: &Callable,
        mats: &[Gd<ShaderMaterial>],
    ) {
        let current: Vec<Option<Gd<TerrainLayer>>> = layers.iter_shared().collect();
        if current != self.connected {
            for l in self.connected.iter().flatten() {
                let mut l = l.clone();
                if l.is_instance_valid() && l.is_connected("changed", on_changed) {
                    l.disconnect("changed", on_changed);
                }
            }
            for l in current.iter().flatten() {
                let mut l = l.clone();
                if !l.is_connected("changed", on_changed) {
                    l.connect("changed", on_changed);
                }
            }
            self.connected = current;
            self.dirty = true;
        }
        self.poll_pending();
        if self.dirty || self.built.is_none() {
            self.dirty = false;
            self.built = Some(build(&self.connected));
            self.applied.clear();
            if self.pending() {
                self.pending_since.get_or_insert_with(Instant::now);
            } else {
                self.pending_since = None;
                self.pending_reported = false;
            }
        }
        let ids: Vec<InstanceId> = mats.iter().map(|m| m.instance_id()).collect();
        if ids == self.applied {
            return;
        }
        self.applied = ids;
        let Some(built) = self.built.as_ref() else {
            return;
        };
        if !built.any && !self.wrote {
            // No layers: leave the material exactly as it is.
            return;
        }
        for m in mats {
            write(built, &mut m.clone());
        }
        self.wrote = built.any;
    }
}

impl TerrainLayers {
    /// Ask the pending textures for their pixels (every [`PENDING_POLL`]): rebuild when one has
    /// them; report those still unreadable after [`PENDING_TIMEOUT`] once.
    fn poll_pending(&mut self) {
        let Some(since) = self.pending_since else {
            return;
        };
        let Some(built) = self.built.as_ref() else {
            return;
        };
        let now = Instant::now();
        if self
            .pending_polled
            .is_some_and(|t| now.duration_since(t) < PENDING_POLL)
        {
            return;
        }
        self.pending_polled = Some(now);
        if built
            .pending
            .iter()
            .any(|(_, _, t)| !matches!(texture_image(t), Pixels::NotYet))
        {
            self.dirty = true;
            return;
        }
        if !self.pending_reported && now.duration_since(since) >= PENDING_TIMEOUT {
            self.pending_reported = true;
            for (i, k, t) in &built.pending {
                godot_error!(
                    "ProceduralIsland: terrain_layers[{i}] {} texture ({}): its pixels still \
                     cannot be read after {} s (get_image() returned null); the layer is drawn \
                     without it until the texture emits `changed`",
                    KINDS[*k].0,
                    t.get_class(),
                    PENDING_TIMEOUT.as_secs()
                );
            }
        }
    }
}

/// Read the specs and build the arrays.
fn build(layers: &[Option<Gd<TerrainLayer>>]) -> Built {
    let mut b = Built {
        tint: [Color::WHITE; LAYERS],
        triplanar: [1.0; LAYERS],
        slots: [[-1; LAYERS]; 3],
        ..Default::default()
    };
    if layers.len() > LAYERS {
        godot_warn!(
            "ProceduralIsland: terrain_layers has {} entries; only the first {LAYERS} (one per \
             splat layer) are used",
            layers.len()
        );
    }
    let specs: Vec<Option<LayerSpec>> = layers
        .iter()
        .take(LAYERS)
        .map(|l| {
            l.as_ref().map(|l| {
                let l = l.bind();
                LayerSpec {
                    tint: l.tint,
                    uv_scale: l.uv_scale,
                    triplanar: l.triplanar,
                    textures: [
                        l.albedo_texture.clone(),
                        l.normal_texture.clone(),
                        l.roughness_texture.clone(),
                    ],
                }
            })
        })
        .collect();
    b.any = specs.iter().any(Option::is_some);
    for (i, s) in specs.iter().enumerate() {
        if let Some(s) = s {
            b.tint[i] = s.tint;
            b.uv_scale[i] = Some(s.uv_scale);
            b.triplanar[i] = s.triplanar;
        }
    }
    for (k, (kind, _)) in KINDS.iter().enumerate() {
        let mut images: Vec<(usize, Gd<Image>)> = Vec::new();
        for (i, s) in specs.iter().enumerate() {
            let Some(tex) = s.as_ref().and_then(|s| s.textures[k].clone()) else {
                continue;
            };
            match texture_image(&tex) {
                Pixels::Ready(img) => images.push((i, img)),
                Pixels::NotYet => b.pending.push((i, k, tex)),
                Pixels::Failed(e) => godot_error!(
                    "ProceduralIsland: terrain_layers[{i}] {kind} texture: {e}; the layer is \
                     drawn without it"
                ),
            }
        }
        if images.is_empty() {
            continue;
        }
        let w = images.iter().map(|(_, i)| i.get_width()).max().unwrap_or(1);
        let h = images
            .iter()
            .map(|(_, i)| i.get_height())
            .max()
            .unwrap_or(1);
        let (w, h) = (w.min(MAX_TEXTURE_SIZE), h.min(MAX_TEXTURE_SIZE));
        let mut list: Array<Gd<Image>> = Array::new();
        for (slot, (i, img)) in images.iter().enumerate() {
            list.push(&uniform_image(img, w, h));
            b.slots[k][*i] = slot as i32;
        }
        let mut arr = Texture2DArray::new_gd();
        let err = arr.create_from_images(&list);
        if err == godot::global::Error::OK {
            b.arrays[k] = Some(arr);
        } else {
            godot_error!("ProceduralIsland: could not build the {kind} texture array: {err:?}");
            b.slots[k] = [-1; LAYERS];
        }
    }
    b
}

/// What reading a texture's pixels gave.
enum Pixels {
    /// An uncompressed image.
    Ready(Gd<Image>),
    /// Not yet: a texture that fills its pixels later (see [`fills_later`]).
    NotYet,
    /// Never (the reason).
    Failed(String),
}

/// Whether a texture without pixels now gets them later: a `NoiseTexture2D` with a noise
/// (generated on a thread, then `changed`), a `GradientTexture2D` (updated at the end of the
/// frame) and a `CompressedTexture2D` (still importing in the editor).
fn fills_later(tex: &Gd<Texture2D>) -> Result<(), String> {
    if let Ok(n) = tex.clone().try_cast::<NoiseTexture2D>() {
        return match n.get_noise() {
            Some(_) => Ok(()),
            None => Err("it is a NoiseTexture2D without a `noise`, which has no pixels".into()),
        };
    }
    if tex.clone().try_cast::<GradientTexture2D>().is_ok()
        || tex.clone().try_cast::<CompressedTexture2D>().is_ok()
    {
        return Ok(());
    }
    Err(format!(
        "its pixels cannot be read (get_image() returned null for a {})",
        tex.get_class()
    ))
}

/// A texture's pixels as an uncompressed image (any import format).
fn texture_image(tex: &Gd<Texture2D>) -> Pixels {
    let img = match tex.get_image() {
        Some(img) if !img.is_empty() => img,
        Some(_) if tex.get_width() <= 0 || tex.get_height() <= 0 => {
            return Pixels::Failed("the image is empty".into())
        }
        _ => {
            return match fills_later(tex) {
                Ok(()) => Pixels::NotYet,
                Err(e) => Pixels::Failed(e),
            }
        }
    };
    let mut img = img.duplicate_resource();
    if img.is_compressed() && img.decompress() != godot::global::Error::OK {
        return Pixels::Failed(format!(
            "its compressed format {:?} cannot be decompressed (re-import it as Lossless)",
            img.get_format()
        ));
    }
    Pixels::Ready(img)
}

/// `img` as RGBA8 of `w`×`h` with mipmaps (every slot of an array must match).
fn uniform_image(img: &Gd<Image>, w: i32, h: i32) -> Gd<Image> {
    let mut img = img.clone();
    if img.has_mipmaps() {
        img.clear_mipmaps();
    }
    if img.get_format() != Format::RGBA8 {
        img.convert(Format::RGBA8);
    }
    if img.get_width() != w || img.get_height() != h {
        img.resize_ex(w, h)
            .interpolation(Interpolation::CUBIC)
            .done();
    }
    img.generate_mipmaps();
    img
}

/// Write the built parameters on one material.
fn write(b: &Built, m: &mut Gd<ShaderMaterial>) {
    if !b.any {
        // The list was emptied: back to the shader defaults (exactly as without layers).
        for (_, p) in KINDS {
            m.set_shader_parameter(p, &Variant::nil());
        }
        for p in SLOT_PARAMS {
            m.set_shader_parameter(p, &Variant::nil());
        }
        for p in ["layer_tint", "layer_triplanar"] {
            m.set_shader_parameter(p, &Variant::nil());
        }
        for i in 0..LAYERS {
            m.set_shader_parameter(&uv_param(i), &Variant::nil());
        }
        m.set_shader_parameter("layer_normals_enabled", &Variant::nil());
        m.set_shader_parameter("terrain_layers_enabled", &Variant::nil());
        return;
    }
    for (k, (_, p)) in KINDS.iter().enumerate() {
        match &b.arrays[k] {
            Some(a) => m.set_shader_parameter(*p, &a.to_variant()),
            None => m.set_shader_parameter(*p, &Variant::nil()),
        }
        let slots = PackedInt32Array::from(&b.slots[k][..]);
        m.set_shader_parameter(SLOT_PARAMS[k], &slots.to_variant());
    }
    m.set_shader_parameter("terrain_layers_enabled", &true.to_variant());
    m.set_shader_parameter("layer_normals_enabled", &b.arrays[1].is_some().to_variant());
    let tints = PackedColorArray::from(&b.tint[..]);
    m.set_shader_parameter("layer_tint", &tints.to_variant());
    let tri = PackedFloat32Array::from(&b.triplanar[..]);
    m.set_shader_parameter("layer_triplanar", &tri.to_variant());
    for (i, s) in b.uv_scale.iter().enumerate() {
        let v = s.map_or(Variant::nil(), |s| s.to_variant());
        m.set_shader_parameter(&uv_param(i), &v);
    }
}

/// The shader's UV scale uniform of layer `i`.
fn uv_param(i: usize) -> String {
    format!("layer{i}_uv_scale")
}

/// Names for the brush's layer menu: the layers' names where set, else the built-in names.
pub fn layer_names(layers: &Array<Option<Gd<TerrainLayer>>>) -> [String; LAYERS] {
    let mut names = BUILTIN_NAMES.map(str::to_string);
    for (i, l) in layers.iter_shared().take(LAYERS).enumerate() {
        if let Some(l) = l {
            let n = l.bind().name.to_string();
            // The enum hint separates items with ',' and values with ':'.
            let n: String = n
                .chars()
                .filter(|c| *c != ',' && *c != ':' && !c.is_control())
                .collect();
            if !n.trim().is_empty() {
                names[i] = n.trim().to_string();
            }
        }
    }
    names
}

/// The `layer` enum hint string for `names`.
pub fn layer_hint(names: &[String; LAYERS]) -> String {
    names
        .iter()
        .enumerate()
        .map(|(i, n)| format!("{n}:{i}"))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    #[test]
    fn layer_hint_lists_every_layer_with_its_value() {
        let mut names = super::BUILTIN_NAMES.map(str::to_string);
        names[4] = "Moss".into();
        assert_eq!(
            super::layer_hint(&names),
            "Sand:0,Grass:1,Rock:2,Snow:3,Moss:4,Dirt:5,Gravel:6,Meadow:7"
        );
    }
}
