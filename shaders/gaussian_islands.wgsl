// Mirrors island_core::gaussian_islands: sum of the (CPU-drawn) mountains' truncated gaussians.
// mountains[i] = (x, z, radius, amplitude), metres from the map corner.
@group(0) @binding(1) var<uniform> P: Gaussian;
@group(0) @binding(2) var<storage, read_write> out_f: array<f32>;
@group(0) @binding(3) var<storage, read> mountains: array<vec4<f32>>;

@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    let pz = grid_pos(gid.y, G.spacing);
    let px = grid_pos(gid.x, G.spacing);
    var sum = 0.0f;
    for (var k = 0u; k < P.mountain_count; k++) {
        let m = mountains[k];
        // Same row filter as the CPU (mountains whose support reaches this row).
        if (abs(m.y - pz) > 3.0f * m.z) {
            continue;
        }
        let d2 = mul_r(px - m.x, px - m.x) + mul_r(pz - m.y, pz - m.y);
        let cut = 3.0f * m.z;
        if (d2 > cut * cut) {
            continue;
        }
        let sigma = 0.5f * m.z;
        sum += mul_r(m.w, exp(-d2 / (2.0f * sigma * sigma)));
    }
    out_f[i] = sum;
}
