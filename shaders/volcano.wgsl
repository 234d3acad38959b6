// Mirrors island_core::shape::{raise_cone, dig_crater}: the VOLCANIC outline's cone, raised
// before the erosion, and its crater, dug after it, over the land samples within the volcano's
// radius (over_volcano: rho = distance from the centre / radius, in half-map units), in place.
// The CPU computes the volcano's geometry (island_core::shape::volcano) and passes it in P.
@group(0) @binding(1) var<uniform> P: Volcano;
@group(0) @binding(2) var<storage, read_write> heights: array<f32>;

// rho of sample (x, z), as over_volcano computes it.
fn volcano_rho(x: u32, z: u32) -> f32 {
    let dz = grid_pos(z, G.spacing) / P.half - 1.0f - P.cz;
    let dx = grid_pos(x, G.spacing) / P.half - 1.0f - P.cx;
    return sqrt(mul_r(dx, dx) + mul_r(dz, dz)) / P.radius;
}

// Land samples within the radius get max(h, h / 2 + cone), cone = peak (1 - rho)².
@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn raise_cone(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    let h = heights[i];
    if (h <= 0.0f) {
        return;
    }
    let rho = volcano_rho(gid.x, gid.y);
    if (rho < 1.0f) {
        let cone = mul_r(P.peak * (1.0f - rho), 1.0f - rho);
        heights[i] = max(h, 0.5f * h + cone);
    }
}

// Land samples within crater_radius of the cone get min(h, rim - depth · rim · bowl²),
// bowl = 1 - (rho / crater_radius)².
@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn dig_crater(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    let h = heights[i];
    if (h <= 0.0f) {
        return;
    }
    let rho = volcano_rho(gid.x, gid.y);
    if (rho < 1.0f && rho < P.crater_radius) {
        let t = rho / P.crater_radius;
        let bowl = 1.0f - mul_r(t, t);
        heights[i] = min(h, P.rim - mul_r(P.crater_depth * P.rim * bowl, bowl));
    }
}
