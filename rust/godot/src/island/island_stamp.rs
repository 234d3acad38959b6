//! The `IslandStamp` node: a landmark placed by hand that the island grows around.
//!
//! The shapes are engine-free (`island_core::stamps`); this node gives one its position,
//! rotation and size from its transform and tells its island when it changes.

use crate::island::layout_node::{layout_changed, parent_island};
use godot::classes::image::Format;
use godot::classes::notify::Node3DNotification;
use godot::classes::{INode3D, Node3D, Texture2D};
use godot::prelude::*;
use island_core::stamps::{
    Stamp, StampImage, StampKind, DEFAULT_FALLOFF, DEFAULT_HEIGHT, DEFAULT_RADIUS,
};
use std::cell::RefCell;
use std::sync::Arc;

/// A landmark the island grows around: a mountain, a crater, a plateau, a basin (a lake fills
/// it), a bay cut into the coast, an islet rising from the sea, or your own heightmap image
/// ([constant KIND_HEIGHTMAP] with [member heightmap]). Add it as a child of a
/// [ProceduralIsland]; its position (x, z), rotation about the vertical axis and scale (x, z)
/// place and shape it. Stamps enter the generator where the sculpt layer does, before erosion
/// and drainage (stamps first, then the brush's sculpting on top), so valleys, rivers, lakes,
/// splat and scatter follow them; they survive regenerate and seed changes.
///
/// Moving, rotating or editing a stamp regenerates the island (in the editor: in the background
/// at once, or 0.3 s after the last of a run of changes such as a drag, with Godot's own undo; in
/// a game: in the background at the next frame). Several stamps add up in the order of the children.
#[derive(GodotClass)]
#[class(tool, base=Node3D)]
pub struct IslandStamp {
    base: Base<Node3D>,
    /// What the stamp makes: [constant KIND_MOUNTAIN], [constant KIND_CRATER],
    /// [constant KIND_PLATEAU], [constant KIND_BASIN], [constant KIND_BAY], [constant KIND_ISLET],
    /// [constant KIND_HEIGHTMAP].
    #[export]
    #[var(set = set_kind, hint = ENUM, hint_string = "Mountain:0,Crater:1,Plateau:2,Basin:3,Bay:4,Islet:5,Heightmap:6")]
    kind: i32,
    /// [constant KIND_HEIGHTMAP]: the image raised [member height] m at its white, nothing at its
    /// black (its red channel, 0..1; 16-bit and float images keep their precision). It covers
    /// the square of [member radius] around the node (times its scale), its top row towards -z.
    #[export]
    #[var(set = set_heightmap)]
    heightmap: Option<Gd<Texture2D>>,
    /// Radius, metres (times the node's scale along its own x and z).
    #[export(range = (1.0, 5000.0, 0.5, or_greater, suffix = "m"))]
    #[var(set = set_radius)]
    radius: f32,
    /// Mountain and islet height, crater and basin depth, metres; for a plateau the height of its
    /// flat top above sea level.
    #[export(range = (-100.0, 1000.0, 0.1, or_less, or_greater, suffix = "m"))]
    #[var(set = set_height)]
    height: f32,
    /// Edge fade, fraction of the radius (0 = a hard edge).
    #[export(range = (0.0, 1.0, 0.01))]
    #[var(set = set_falloff)]
    falloff: f32,
    /// Off: the island ignores the stamp.
    #[export]
    #[var(set = set_enabled)]
    enabled: bool,
    /// The heightmap's values, read once per texture (cleared when it changes).
    image_cache: RefCell<Option<Arc<StampImage>>>,
}

#[godot_api]
impl INode3D for IslandStamp {
    fn init(base: Base<Node3D>) -> Self {
        IslandStamp {
            base,
            kind: 0,
            radius: DEFAULT_RADIUS,
            height: DEFAULT_HEIGHT,
            falloff: DEFAULT_FALLOFF,
            enabled: true,
            heightmap: None,
            image_cache: RefCell::new(None),
        }
    }

    fn ready(&mut self) {
        self.base_mut().set_notify_local_transform(true);
        self.changed();
    }

    fn on_notification(&mut self, what: Node3DNotification) {
        match what {
            Node3DNotification::LOCAL_TRANSFORM_CHANGED => self.changed(),
            Node3DNotification::EXIT_TREE => self.changed(),
            _ => {}
        }
    }

    fn get_configuration_warnings(&self) -> PackedStringArray {
        self.get_warnings()
    }
}

#[godot_api]
impl IslandStamp {
    /// A rounded peak.
    #[constant]
    pub const KIND_MOUNTAIN: i32 = 0;
    /// A bowl with a raised rim.
    #[constant]
    pub const KIND_CRATER: i32 = 1;
    /// A flat top at [member height] above sea level (held level through erosion).
    #[constant]
    pub const KIND_PLATEAU: i32 = 2;
    /// A hollow that fills with a lake.
    #[constant]
    pub const KIND_BASIN: i32 = 3;
    /// Sea cut into the coast.
    #[constant]
    pub const KIND_BAY: i32 = 4;
    /// New land rising from the sea.
    #[constant]
    pub const KIND_ISLET: i32 = 5;
    /// Your own heightmap ([member heightmap]) raised [member height] m.
    #[constant]
    pub const KIND_HEIGHTMAP: i32 = 6;

    /// What is wrong with the stamp (its configuration warnings): not under a
    /// [ProceduralIsland] or a value out of range. Empty when fine.
    #[func]
    pub fn get_warnings(&self) -> PackedStringArray {
        let mut w = PackedStringArray::new();
        if self.island().is_none() {
            w.push("IslandStamp must be a child of a ProceduralIsland");
        }
        if let Err(e) = self.stamp().validate() {
            w.push(&GString::from(&e.to_string()));
        }
        w
    }

    #[func]
    fn set_kind(&mut self, v: i32) {
        self.kind = v;
        self.changed();
    }
    #[func]
    fn set_radius(&mut self, v: f32) {
        self.radius = v;
        self.changed();
    }
    #[func]
    fn set_height(&mut self, v: f32) {
        self.height = v;
        self.changed();
    }
    #[func]
    fn set_falloff(&mut self, v: f32) {
        self.falloff = v;
        self.changed();
    }
    #[func]
    fn set_enabled(&mut self, v: bool) {
        self.enabled = v;
        self.changed();
    }
    #[func]
    fn set_heightmap(&mut self, v: Option<Gd<Texture2D>>) {
        let this = self.to_gd();
        let callable = Callable::from_object_method(&this, "_on_heightmap_changed");
        if let Some(mut old) = self.heightmap.take() {
            if old.is_connected("changed", &callable) {
                old.disconnect("changed", &callable);
            }
        }
        if let Some(mut t) = v.clone() {
            if !t.is_connected("changed", &callable) {
                t.connect("changed", &callable);
            }
        }
        self.heightmap = v;
        self._on_heightmap_changed();
    }

    /// The heightmap texture changed (a NoiseTexture2D finished, an image was set): read it again.
    #[func]
    fn _on_heightmap_changed(&mut self) {
        self.image_cache.replace(None);
        self.changed();
    }
}

impl IslandStamp {
    /// The parent island.
    fn island(&self) -> Option<Gd<Node>> {
        parent_island(&*self.base())
    }

    /// Whether the island uses this stamp.
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// The stamp in the island's frame (the node's local transform: it is the island's child).
    pub fn stamp(&self) -> Stamp {
        let t = self.base().get_transform();
        let b = t.basis;
        // Godot's yaw: the basis' x column is (cos θ, 0, -sin θ) times the x scale.
        let x = b.col_a();
        let z = b.col_c();
        let sx = (x.x * x.x + x.z * x.z).sqrt();
        let sz = (z.x * z.x + z.z * z.z).sqrt();
        // cos θ and sin θ of the yaw from the basis itself (no trigonometric call, so the same
        // bits on every platform); a degenerate basis counts as unrotated.
        let rotation = if sx > 0.0 {
            [x.x / sx, -x.z / sx]
        } else {
            [1.0, 0.0]
        };
        let kind = usize::try_from(self.kind)
            .ok()
            .and_then(|k| StampKind::ALL.get(k).copied())
            .unwrap_or(StampKind::Mountain);
        Stamp {
            kind,
            center: [t.origin.x, t.origin.z],
            radius_x: self.radius * sx,
            radius_z: self.radius * sz,
            rotation,
            height: self.height,
            falloff: self.falloff,
            image: if kind == StampKind::Heightmap {
                self.image()
            } else {
                None
            },
        }
    }

    /// The heightmap's values (cached; `None` without a readable texture).
    fn image(&self) -> Option<Arc<StampImage>> {
        if let Some(img) = self.image_cache.borrow().as_ref() {
            return Some(img.clone());
        }
        let img = Arc::new(image_of(self.heightmap.as_ref()?)?);
        self.image_cache.replace(Some(img.clone()));
        Some(img)
    }

    /// Tell the island (next frame, coalesced): in the editor its auto-regenerate notices the
    /// new request by itself; in a game it regenerates in the background.
    fn changed(&mut self) {
        layout_changed(&*self.base_mut());
    }
}

/// The red channel of `tex` as 0..1 values (a copy converted to 32-bit float; values outside
/// 0..1, as an HDR image may hold, are clamped). `None` when it has no image data.
fn image_of(tex: &Gd<Texture2D>) -> Option<StampImage> {
    let img = tex.get_image()?;
    if img.is_empty() {
        return None;
    }
    // Work on a copy: the texture's own image must not change format.
    let mut img = img.duplicate_resource();
    if img.is_compressed() && img.decompress() != godot::global::Error::OK {
        return None;
    }
    img.convert(Format::RF);
    let (w, h) = (
        img.get_width().max(0) as usize,
        img.get_height().max(0) as usize,
    );
    let bytes = img.get_data();
    let values: Vec<f32> = bytes
        .as_slice()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]).clamp(0.0, 1.0))
        .collect();
    Some(StampImage {
        width: w,
        height: h,
        values,
    })
}
