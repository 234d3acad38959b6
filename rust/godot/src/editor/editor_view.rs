//! Data for the editor plugin: the inspector header's preview picture and the island's bounds
//! for framing it in the 3D viewport. The picture itself is drawn by
//! [`island_core::preview`]; the camera math of "Frame island" lives here so that GDScript
//! only moves the editor camera.

use godot::classes::image::Format as ImageFormat;
use godot::classes::Image;
use godot::prelude::*;
use island_core::Island;

/// The shaded top-down relief as a `size × size` `FORMAT_RGB8` image (pixel `(x, z)`: map x to
/// the right, map z down).
pub fn preview_image(island: &Island, size: i32) -> Result<Gd<Image>, String> {
    let s = usize::try_from(size).map_err(|_| format!("size must be positive, got {size}"))?;
    let rgb = island_core::preview::preview_rgb_sized(island, s)?;
    Image::create_from_data(
        size,
        size,
        false,
        ImageFormat::RGB8,
        &PackedByteArray::from(rgb),
    )
    .ok_or_else(|| "could not create the image".to_string())
}

/// Node-local bounds of the terrain: the whole map in x and z, the lowest to the highest
/// generated height in y.
pub fn local_aabb(island: &Island) -> Aabb {
    let half = island.field.world_size * 0.5;
    let (lo, hi) = island
        .field
        .heights
        .iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &h| {
            (lo.min(h), hi.max(h))
        });
    let (lo, hi) = if lo <= hi { (lo, hi) } else { (0.0, 0.0) };
    Aabb::new(
        Vector3::new(-half, lo, -half),
        Vector3::new(2.0 * half, hi - lo, 2.0 * half),
    )
}

/// Global bounds of `local` under the transform `xf` (the box around its eight transformed
/// corners).
pub fn global_aabb(xf: Transform3D, local: Aabb) -> Aabb {
    xf * local
}

/// Orbit camera that shows the whole box `aabb` (global): looking at its centre from the
/// south-east (+x, +z), `pitch_degrees` above the horizon, far enough that the bounding sphere
/// fits a perspective camera of vertical field of view `fov_degrees` and aspect `aspect`
/// (width / height). Returns the camera transform and its distance to the centre.
pub fn frame_transform(
    aabb: Aabb,
    fov_degrees: f32,
    aspect: f32,
    pitch_degrees: f32,
) -> (Transform3D, f32) {
    let centre = aabb.center();
    let radius = (aabb.size.length() * 0.5).max(0.5);
    let vfov = fov_degrees.clamp(1.0, 179.0).to_radians();
    let aspect = if aspect.is_finite() && aspect > 0.0 {
        aspect
    } else {
        1.0
    };
    // The narrower of the two fields of view decides.
    let hfov = 2.0 * ((vfov * 0.5).tan() * aspect).atan();
    let half = 0.5 * vfov.min(hfov);
    // 5 % margin around the sphere.
    let distance = radius * 1.05 / half.sin();
    let pitch = pitch_degrees.clamp(1.0, 89.0).to_radians();
    let yaw = 45f32.to_radians();
    let dir = Vector3::new(
        pitch.cos() * yaw.sin(),
        pitch.sin(),
        pitch.cos() * yaw.cos(),
    );
    // A camera looks along its -z: z points from the centre to the eye.
    let z = dir;
    let x = Vector3::UP.cross(z).normalized();
    let y = z.cross(x);
    let xf = Transform3D::new(Basis::from_cols(x, y, z), centre + dir * distance);
    (xf, distance)
}
