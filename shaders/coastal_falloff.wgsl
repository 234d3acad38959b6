// Mirrors island_core::coast::coastal_falloff: metres from relief, signed distance, fine noise.
@group(0) @binding(1) var<uniform> P: Coast;
@group(0) @binding(2) var<storage, read_write> land01: array<f32>; // becomes the heights
@group(0) @binding(3) var<storage, read> dist: array<f32>;
@group(0) @binding(4) var<storage, read> fine: array<f32>;
@group(0) @binding(5) var<storage, read> rough: array<f32>;

@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    let d = dist[i];
    var large: f32;
    if (d >= 0.0f) {
        large = mul_r(P.beach_height, smoothstep_(0.0f, 0.25f * P.coast_width, d))
            + mul_r(land01[i] * P.max_height, smoothstep_(0.0f, P.coast_width, d));
    } else {
        large = -P.sea_depth * smoothstep_(0.0f, P.shelf_width, -d);
    }
    land01[i] = large + mul_r(fine[i] * P.fine_amplitude, rough[i]);
}
