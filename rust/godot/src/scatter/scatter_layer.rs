//! The `ScatterLayer` resource: one kind of vegetation or rock scattered over a
//! `ProceduralIsland` (its `scatter_layers`). It maps onto `island_core::scatter::ScatterLayer`
//! ([`ScatterLayer::to_core`]); the instances are placed by the core and drawn by
//! [`crate::scatter::scatter_nodes`].

use godot::classes::{IResource, Mesh, PackedScene, Resource};
use godot::prelude::*;
use island_core::scatter::{self as core, SplatMask};
use island_core::scatter_meshes::MeshKind;

/// One scatter layer of a [ProceduralIsland]: instances of a mesh (or a built-in low-poly mesh)
/// placed on the terrain as blue noise (no two closer than [member min_distance]), thinned by
/// [member density] and the height, slope, biome and splat masks. Deterministic per island seed
/// and [member seed_salt]. Changing a property re-places the layer.
#[derive(GodotClass)]
#[class(tool, base=Resource)]
pub struct ScatterLayer {
    base: Base<Resource>,
    /// Mesh drawn for every instance; null draws the built-in mesh [member builtin_mesh].
    #[export_group(name = "Mesh")]
    #[export]
    #[var(set, usage_flags = [EDITOR])]
    mesh: Option<Gd<Mesh>>,
    /// Built-in low-poly mesh with vertex colours, used while [member mesh] is null:
    /// [constant PALM], [constant BROADLEAF], [constant CONIFER], [constant ROCK] or
    /// [constant GRASS].
    #[export]
    #[var(set, hint = ENUM, hint_string = "Palm:0,Broadleaf:1,Conifer:2,Rock:3,Grass:4")]
    builtin_mesh: i32,
    /// Objects with their own nodes (scripts, lights, colliders, animations): when set, every
    /// instance of the layer is an instance of this scene (its root must be a Node3D; it gets the
    /// instance's position, rotation and scale) instead of a MultiMesh entry of [member mesh].
    /// All instances are instantiated (not only those near the camera), chunk by chunk within the
    /// island's `build_budget_ms`; keep the layer's count modest (each is a node tree). The
    /// nodes are internal children of the island, never saved. [member collision] still sizes its
    /// boxes from [member mesh] (or the built-in mesh).
    #[export]
    #[var(set, usage_flags = [EDITOR])]
    scene: Option<Gd<PackedScene>>,
    /// [member mesh] and [member scene] as saved, `[mesh, scene]` (storage only; scenes from
    /// before this property, with `mesh = ...` lines, still load). The two are not saved as
    /// resource properties because the editor's preview thread calls the getter of every saved
    /// resource property of a resource it previews, and an extension's getter cannot run off
    /// the main thread (see `TerrainLayer.stored_textures`).
    #[allow(dead_code)] // read and written through get/set_stored_resources
    #[export(storage)]
    #[var(get = get_stored_resources, set = set_stored_resources)]
    stored_resources: VarArray,
    /// Instances per 100 m² of fully eligible ground (capped at what [member min_distance]
    /// allows, about 65 / min_distance²).
    #[export_group(name = "Placement")]
    #[export(range = (0.0, 200.0, 0.1, or_greater))]
    #[var(set)]
    density: f32,
    /// No two instances of the layer closer than this (horizontally), metres (0.25..1000).
    #[export(range = (0.25, 100.0, 0.05, or_greater, suffix = "m"))]
    #[var(set)]
    min_distance: f32,
    /// Mixed into the seed so that layers with the same settings differ.
    #[export(range = (0.0, 100000.0, 1.0, or_greater))]
    #[var(set)]
    seed_salt: i64,
    /// Lowest terrain height, metres.
    #[export_group(name = "Height Mask")]
    #[export(range = (-100.0, 1000.0, 0.1, or_less, or_greater, suffix = "m"))]
    #[var(set)]
    min_height: f32,
    /// Highest terrain height, metres.
    #[export(range = (-100.0, 1000.0, 0.1, or_less, or_greater, suffix = "m"))]
    #[var(set)]
    max_height: f32,
    /// Smooth fade inside each height limit, metres.
    #[export(range = (0.0, 100.0, 0.1, or_greater, suffix = "m"))]
    #[var(set)]
    height_fade: f32,
    /// Lowest terrain slope, degrees.
    #[export_group(name = "Slope Mask")]
    #[export(range = (0.0, 90.0, 0.1, suffix = "°"))]
    #[var(set)]
    min_slope_degrees: f32,
    /// Steepest terrain slope, degrees.
    #[export(range = (0.0, 90.0, 0.1, suffix = "°"))]
    #[var(set)]
    max_slope_degrees: f32,
    /// Smooth fade inside each slope limit, degrees.
    #[export(range = (0.0, 90.0, 0.1, suffix = "°"))]
    #[var(set)]
    slope_fade: f32,
    /// Biomes allowed: bit `i` = biome index `i` (see [method ProceduralIsland.get_biome_at]);
    /// -1 = every biome.
    #[export_group(name = "Biome and Splat Mask")]
    #[export]
    #[var(set)]
    biome_mask: i64,
    /// Splat layer that must be present (0 sand, 1 grass, 2 rock, 3 snow); -1 = no splat mask.
    #[export(range = (-1.0, 7.0, 1.0))]
    #[var(set)]
    splat_layer: i32,
    /// Splat weight (0..1) of [member splat_layer] below which nothing is placed.
    #[export(range = (0.0, 1.0, 0.01))]
    #[var(set)]
    splat_min_weight: f32,
    /// Smooth fade above [member splat_min_weight] (0 = hard edge).
    #[export(range = (0.0, 1.0, 0.01))]
    #[var(set)]
    splat_fade: f32,
    /// Smallest uniform scale.
    #[export_group(name = "Instances")]
    #[export(range = (0.01, 10.0, 0.01, or_greater))]
    #[var(set)]
    scale_min: f32,
    /// Largest uniform scale (>= scale_min).
    #[export(range = (0.01, 10.0, 0.01, or_greater))]
    #[var(set)]
    scale_max: f32,
    /// Random rotation about the up axis.
    #[export]
    #[var(set)]
    random_yaw: bool,
    /// 0 = upright, 1 = along the terrain normal.
    #[export(range = (0.0, 1.0, 0.01))]
    #[var(set)]
    align_to_normal: f32,
    /// How far instances sink below the surface, metres.
    #[export(range = (-10.0, 10.0, 0.01, or_less, or_greater, suffix = "m"))]
    #[var(set)]
    sink: f32,
    /// Camera distance from which instances are drawn (GeometryInstance3D
    /// `visibility_range_begin`), metres.
    #[export_group(name = "Visibility")]
    #[export(range = (0.0, 10000.0, 1.0, or_greater, suffix = "m"))]
    #[var(set)]
    visibility_range_begin: f32,
    /// Fade margin at [member visibility_range_begin], metres.
    #[export(range = (0.0, 10000.0, 1.0, or_greater, suffix = "m"))]
    #[var(set)]
    visibility_range_begin_margin: f32,
    /// Camera distance beyond which instances are hidden (0 = always drawn), metres.
    #[export(range = (0.0, 10000.0, 1.0, or_greater, suffix = "m"))]
    #[var(set)]
    visibility_range_end: f32,
    /// Fade margin at [member visibility_range_end] (instances fade out over it), metres.
    #[export(range = (0.0, 10000.0, 1.0, or_greater, suffix = "m"))]
    #[var(set)]
    visibility_range_end_margin: f32,
    /// Shadows of the instances (GeometryInstance3D `cast_shadow`): OFF, ON, DOUBLE_SIDED or
    /// SHADOWS_ONLY (MultiMesh layers; a [member scene] keeps its own settings). Dense small layers
    /// (grass) look nearly the same without shadows and render much faster.
    #[export]
    #[var(set, hint = ENUM, hint_string = "Off:0,On:1,Double-sided:2,Shadows only:3")]
    cast_shadow: i32,
    /// [constant COLLISION_NONE]: no colliders. [constant COLLISION_NEAR_CAMERA]: a StaticBody3D
    /// with a box sized from the mesh's AABB (times the instance's scale, turned with it) for
    /// every instance within [member collision_radius] of the active camera, added and removed as
    /// the camera moves within the island's `build_budget_ms` (not in the editor).
    #[export_group(name = "Collision")]
    #[export]
    #[var(set, hint = ENUM, hint_string = "None:0,Near the camera:1")]
    collision: i32,
    /// Distance from the active camera within which instances get colliders, metres.
    #[export(range = (1.0, 1000.0, 1.0, or_greater, suffix = "m"))]
    #[var(set)]
    collision_radius: f32,
}

#[godot_api]
impl IResource for ScatterLayer {
    fn init(base: Base<Resource>) -> Self {
        let d = core::ScatterLayer::default();
        Self {
            base,
            mesh: None,
            scene: None,
            stored_resources: VarArray::new(),
            builtin_mesh: mesh_index(d.mesh),
            density: d.density,
            min_distance: d.min_distance,
            seed_salt: d.seed_salt as i64,
            min_height: d.min_height,
            max_height: d.max_height,
            height_fade: d.height_fade,
            min_slope_degrees: d.min_slope_degrees,
            max_slope_degrees: d.max_slope_degrees,
            slope_fade: d.slope_fade,
            biome_mask: -1,
            splat_layer: -1,
            splat_min_weight: 0.3,
            splat_fade: 0.3,
            scale_min: d.scale_min,
            scale_max: d.scale_max,
            random_yaw: d.random_yaw,
            align_to_normal: d.align_to_normal,
            sink: d.sink,
            visibility_range_begin: 0.0,
            visibility_range_begin_margin: 0.0,
            visibility_range_end: 0.0,
            visibility_range_end_margin: 0.0,
            cast_shadow: 1,
            collision: 0,
            collision_radius: 50.0,
        }
    }
}

/// The primary `#[godot_api]` block of [`ScatterLayer`] with `items`, plus one `#[func]` setter per
/// listed property that emits `changed` when the value differs (the island re-places a layer on
/// its `changed` signal instead of comparing every layer every frame).
macro_rules! layer_api {
    ([$($field:ident / $set:ident : $ty:ty),* $(,)?] $($items:tt)*) => {
        #[godot_api]
        impl ScatterLayer {
            $($items)*
            $(
                /// Property setter: emits `changed` when the value differs.
                #[func]
                pub fn $set(&mut self, value: $ty) {
                    if self.$field != value {
                        self.$field = value;
                        self.base_mut().emit_changed();
                    }
                }
            )*
        }
    };
}

layer_api! {
    [
    mesh / set_mesh: Option<Gd<Mesh>>,
    builtin_mesh / set_builtin_mesh: i32,
    scene / set_scene: Option<Gd<PackedScene>>,
    density / set_density: f32,
    min_distance / set_min_distance: f32,
    seed_salt / set_seed_salt: i64,
    min_height / set_min_height: f32,
    max_height / set_max_height: f32,
    height_fade / set_height_fade: f32,
    min_slope_degrees / set_min_slope_degrees: f32,
    max_slope_degrees / set_max_slope_degrees: f32,
    slope_fade / set_slope_fade: f32,
    biome_mask / set_biome_mask: i64,
    splat_layer / set_splat_layer: i32,
    splat_min_weight / set_splat_min_weight: f32,
    splat_fade / set_splat_fade: f32,
    scale_min / set_scale_min: f32,
    scale_max / set_scale_max: f32,
    random_yaw / set_random_yaw: bool,
    align_to_normal / set_align_to_normal: f32,
    sink / set_sink: f32,
    visibility_range_begin / set_visibility_range_begin: f32,
    visibility_range_begin_margin / set_visibility_range_begin_margin: f32,
    visibility_range_end / set_visibility_range_end: f32,
    visibility_range_end_margin / set_visibility_range_end_margin: f32,
    cast_shadow / set_cast_shadow: i32,
    collision / set_collision: i32,
    collision_radius / set_collision_radius: f32,
    ]

    /// Built-in mesh: leaning palm, ~7 m.
    #[constant]
    pub const PALM: i32 = 0;
    /// Built-in mesh: broadleaf tree, ~7 m.
    #[constant]
    pub const BROADLEAF: i32 = 1;
    /// Built-in mesh: conifer, ~9.5 m.
    #[constant]
    pub const CONIFER: i32 = 2;
    /// Built-in mesh: rock, ~2 m across.
    #[constant]
    pub const ROCK: i32 = 3;
    /// Built-in mesh: grass tuft, ~0.6 m.
    #[constant]
    pub const GRASS: i32 = 4;
    /// [member collision]: no colliders.
    #[constant]
    pub const COLLISION_NONE: i32 = 0;
    /// [member collision]: colliders on the instances near the active camera.
    #[constant]
    pub const COLLISION_NEAR_CAMERA: i32 = 1;

    /// The demo layer `index` (0 palms on beaches, 1 broadleaf forest on slopes, 2 rocks on
    /// cliffs, 3 conifers high up, 4 grass) as a new resource, or null for another index.
    #[func]
    pub fn demo_layer(index: i32) -> Option<Gd<ScatterLayer>> {
        let layers = core::demo_layers();
        let l = layers.get(usize::try_from(index).ok()?)?;
        let mut r = ScatterLayer::new_gd();
        r.bind_mut().set_from_core(l);
        if l.mesh == MeshKind::Grass {
            // Thousands of small tufts: no shadows (they add little and cost a lot).
            r.bind_mut().cast_shadow = 0;
        }
        r.set_name(l.name.as_str());
        Some(r)
    }

    /// `[mesh, scene]`, what is saved.
    #[func]
    pub fn get_stored_resources(&self) -> VarArray {
        let mut a = VarArray::new();
        a.push(&self.mesh.to_variant());
        a.push(&self.scene.to_variant());
        a
    }

    /// Load `[mesh, scene]` (missing entries and other types are null).
    #[func]
    pub fn set_stored_resources(&mut self, resources: VarArray) {
        let mesh = resources
            .get(0)
            .and_then(|v| v.try_to::<Option<Gd<Mesh>>>().ok())
            .flatten();
        let scene = resources
            .get(1)
            .and_then(|v| v.try_to::<Option<Gd<PackedScene>>>().ok())
            .flatten();
        self.set_mesh(mesh);
        self.set_scene(scene);
    }

    /// An empty string when every value is valid, else the reason.
    #[func]
    pub fn get_validation_error(&self) -> GString {
        let checked = self
            .to_core()
            .and_then(|_| self.collision())
            .and_then(|_| self.shadow());
        match checked {
            Ok(_) => GString::new(),
            Err(e) => e.as_str().into(),
        }
    }
}

/// Index of a built-in mesh in the `builtin_mesh` enum.
pub fn mesh_index(kind: MeshKind) -> i32 {
    MeshKind::ALL.iter().position(|k| *k == kind).unwrap_or(0) as i32
}

impl ScatterLayer {
    /// The core layer, or the first invalid value.
    pub fn to_core(&self) -> Result<core::ScatterLayer, String> {
        let mesh = MeshKind::from_index(self.builtin_mesh as i64)
            .ok_or_else(|| format!("`builtin_mesh` must be 0..=4, got {}", self.builtin_mesh))?;
        let seed_salt = u32::try_from(self.seed_salt).map_err(|_| {
            format!(
                "`seed_salt` must be 0..={}, got {}",
                u32::MAX,
                self.seed_salt
            )
        })?;
        let biome_mask = if self.biome_mask == -1 {
            u32::MAX
        } else {
            u32::try_from(self.biome_mask).map_err(|_| {
                format!(
                    "`biome_mask` must be -1 or 0..={}, got {}",
                    u32::MAX,
                    self.biome_mask
                )
            })?
        };
        let splat = match self.splat_layer {
            -1 => None,
            l => Some(SplatMask {
                layer: usize::try_from(l)
                    .map_err(|_| format!("`splat_layer` must be -1..=7, got {l}"))?,
                min_weight: self.splat_min_weight,
                fade: self.splat_fade,
            }),
        };
        let vis = [
            ("visibility_range_begin", self.visibility_range_begin),
            (
                "visibility_range_begin_margin",
                self.visibility_range_begin_margin,
            ),
            ("visibility_range_end", self.visibility_range_end),
            (
                "visibility_range_end_margin",
                self.visibility_range_end_margin,
            ),
        ];
        for (name, v) in vis {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("`{name}` must be finite and >= 0, got {v}"));
            }
        }
        let layer = core::ScatterLayer {
            name: self.base().get_name().to_string(),
            mesh,
            density: self.density,
            min_distance: self.min_distance,
            min_height: self.min_height,
            max_height: self.max_height,
            height_fade: self.height_fade,
            min_slope_degrees: self.min_slope_degrees,
            max_slope_degrees: self.max_slope_degrees,
            slope_fade: self.slope_fade,
            biome_mask,
            splat,
            wetness: None,
            scale_min: self.scale_min,
            scale_max: self.scale_max,
            random_yaw: self.random_yaw,
            align_to_normal: self.align_to_normal,
            sink: self.sink,
            seed_salt,
        };
        layer.validate()?;
        Ok(layer)
    }

    /// Copy a core layer's values (the visibility settings stay).
    pub fn set_from_core(&mut self, l: &core::ScatterLayer) {
        self.builtin_mesh = mesh_index(l.mesh);
        self.density = l.density;
        self.min_distance = l.min_distance;
        self.seed_salt = l.seed_salt as i64;
        self.min_height = l.min_height;
        self.max_height = l.max_height;
        self.height_fade = l.height_fade;
        self.min_slope_degrees = l.min_slope_degrees;
        self.max_slope_degrees = l.max_slope_degrees;
        self.slope_fade = l.slope_fade;
        self.biome_mask = if l.biome_mask == u32::MAX {
            -1
        } else {
            l.biome_mask as i64
        };
        match l.splat {
            Some(s) => {
                self.splat_layer = s.layer as i32;
                self.splat_min_weight = s.min_weight;
                self.splat_fade = s.fade;
            }
            None => self.splat_layer = -1,
        }
        self.scale_min = l.scale_min;
        self.scale_max = l.scale_max;
        self.random_yaw = l.random_yaw;
        self.align_to_normal = l.align_to_normal;
        self.sink = l.sink;
    }

    /// The scene instanced per instance, if any.
    pub fn scene(&self) -> Option<Gd<PackedScene>> {
        self.scene.clone()
    }

    /// The custom mesh, if any.
    pub fn custom_mesh(&self) -> Option<Gd<Mesh>> {
        self.mesh.clone()
    }

    /// Collision radius when [member collision] is NEAR_CAMERA, `None` for NONE; an error for a
    /// bad value.
    pub fn collision(&self) -> Result<Option<f32>, String> {
        match self.collision {
            0 => Ok(None),
            1 if self.collision_radius.is_finite() && self.collision_radius > 0.0 => {
                Ok(Some(self.collision_radius))
            }
            1 => Err(format!(
                "`collision_radius` must be finite and > 0, got {}",
                self.collision_radius
            )),
            c => Err(format!("`collision` must be 0 or 1, got {c}")),
        }
    }

    /// [member cast_shadow] (Godot's `ShadowCastingSetting` value), or an error for a bad value.
    pub fn shadow(&self) -> Result<i32, String> {
        match self.cast_shadow {
            c @ 0..=3 => Ok(c),
            c => Err(format!("`cast_shadow` must be 0..=3, got {c}")),
        }
    }

    /// `[begin, begin_margin, end, end_margin]` of the visibility range.
    pub fn visibility(&self) -> [f32; 4] {
        [
            self.visibility_range_begin,
            self.visibility_range_begin_margin,
            self.visibility_range_end,
            self.visibility_range_end_margin,
        ]
    }
}
