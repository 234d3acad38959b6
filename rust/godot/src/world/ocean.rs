//! The world's one ocean: a sea surface at y = 0 and a sea floor at the islands' border depth,
//! both following the targets, so the open sea between islands has no edge, seam or step. The
//! islands of a world draw no sea of their own (their maps end at the same depth as this floor).

use godot::classes::base_material_3d::ShadingMode;
use godot::classes::geometry_instance_3d::ShadowCastingSetting;
use godot::classes::node::InternalMode;
use godot::classes::{MeshInstance3D, Node3D, PlaneMesh, ShaderMaterial, StandardMaterial3D};
use godot::prelude::*;
/// The surfaces move in steps of this many metres (so nothing swims as the target moves).
const SNAP: f64 = 256.0;
/// The sea floor lies this much below the islands' border depth, so it never fights with an
/// island's own floor where they overlap (invisible under metres of water).
pub const FLOOR_GAP: f32 = 0.05;
/// The world sea's `ripple_scale` (the water shader's default, 0.035, suits lakes and an
/// island's own sea): waves of about 60 m and shorter.
const OPEN_SEA_RIPPLE_SCALE: f32 = 0.1;

/// The two internal surfaces.
pub struct Ocean {
    sea: Gd<MeshInstance3D>,
    floor: Gd<MeshInstance3D>,
    size: f32,
}

impl Ocean {
    /// Make the surfaces under `parent`: `size` metres across, the floor at `-depth`
    /// (`material`: the sea's material, or null for the built-in water shader).
    pub fn new(parent: &mut Gd<Node3D>, size: f32, depth: f32) -> Ocean {
        let mut sea = MeshInstance3D::new_alloc();
        sea.set_name("WorldSea");
        let mut plane = PlaneMesh::new_gd();
        plane.set_size(Vector2::new(size, size));
        sea.set_mesh(&plane);
        sea.set_cast_shadows_setting(ShadowCastingSetting::OFF);
        // The islands' own water shader (the addon's file, or the copy compiled in).
        let mut m = crate::island::material::builtin_shader_material(
            crate::water::water_nodes::SHADER_PATH,
            crate::water::water_nodes::SHADER_CODE,
        );
        // No island map under the world's sea: the whole surface is "outside" at the border
        // depth (the per-pixel shoreline fade still follows the islands' beaches).
        m.set_shader_parameter("map_rect", &Vector3::new(1.0e9, 1.0e9, 1.0).to_variant());
        m.set_shader_parameter("outside_depth", &depth.to_variant());
        // Open-sea waves: shorter than an island's sheltered ripples (about 60 m down to 7 m:
        // the default's 180 m waves read as regular bands from a boat), fading out with
        // distance.
        m.set_shader_parameter("ripple_scale", &OPEN_SEA_RIPPLE_SCALE.to_variant());
        sea.set_material_override(&m);
        let mut floor = MeshInstance3D::new_alloc();
        floor.set_name("WorldSeaFloor");
        let mut fplane = PlaneMesh::new_gd();
        fplane.set_size(Vector2::new(size, size));
        floor.set_mesh(&fplane);
        floor.set_cast_shadows_setting(ShadowCastingSetting::OFF);
        let mut fm = StandardMaterial3D::new_gd();
        fm.set_albedo(Color::from_rgb(0.55, 0.50, 0.38));
        fm.set_shading_mode(ShadingMode::PER_PIXEL);
        floor.set_material_override(&fm);
        floor.set_position(Vector3::new(0.0, -depth - FLOOR_GAP, 0.0));
        for n in [&sea, &floor] {
            parent
                .add_child_ex(&n.clone())
                .internal(InternalMode::BACK)
                .done();
        }
        Ocean { sea, floor, size }
    }

    /// Centre both surfaces near world `(x, z)` (node-local metres), in [`SNAP`] steps.
    pub fn follow(&mut self, x: f64, z: f64) {
        if !(x.is_finite() && z.is_finite()) {
            return;
        }
        let sx = ((x / SNAP).round() * SNAP) as f32;
        let sz = ((z / SNAP).round() * SNAP) as f32;
        if self.sea.is_instance_valid() {
            self.sea.set_position(Vector3::new(sx, 0.0, sz));
        }
        if self.floor.is_instance_valid() {
            let y = self.floor.get_position().y;
            self.floor.set_position(Vector3::new(sx, y, sz));
        }
    }

    /// The floor at `-depth` (the islands' border depth changed).
    pub fn set_depth(&mut self, depth: f32) {
        if self.floor.is_instance_valid() {
            let p = self.floor.get_position();
            self.floor
                .set_position(Vector3::new(p.x, -depth - FLOOR_GAP, p.z));
        }
        if let Some(mut m) = self
            .sea
            .get_material_override()
            .and_then(|m| m.try_cast::<ShaderMaterial>().ok())
        {
            m.set_shader_parameter("outside_depth", &depth.to_variant());
        }
    }

    /// Edge of the surfaces, metres.
    pub fn size(&self) -> f32 {
        self.size
    }

    /// Free the surfaces.
    pub fn free(self) {
        for mut n in [self.sea, self.floor] {
            if n.is_instance_valid() {
                n.queue_free();
            }
        }
    }
}
