// Mirrors island_core::river::carve_river: distance of the noise-warped sample to the river
// polyline (computed on the CPU from the seed, 129 points), carving only ever lowers.
@group(0) @binding(2) var<storage, read_write> heights: array<f32>;
@group(0) @binding(3) var<storage, read_write> line: array<vec2<f32>>;

fn segment_distance(p: vec2<f32>, a: vec2<f32>, b: vec2<f32>) -> f32 {
    let dx = b.x - a.x;
    let dz = b.y - a.y;
    let px = p.x - a.x;
    let pz = p.y - a.y;
    let len2 = dx * dx + dz * dz;
    var t = 0.0f;
    if (len2 > 0.0f) {
        t = clamp((px * dx + pz * dz) / len2, 0.0f, 1.0f);
    }
    let ex = px - t * dx;
    let ez = pz - t * dz;
    return sqrt(ex * ex + ez * ez);
}

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let idx = sample_index(gid);
    if (idx < 0) {
        return;
    }
    let s = stage_seed(G.seed_lo, G.seed_hi, D.tag);
    let half = G.world_size * 0.5f;
    let width = G.river_width;
    let meander = G.river_meander;
    let ms = G.river_meander_scale;
    let reach = width * 0.5f + G.river_bank;
    let pz = f32(gid.y) * G.spacing - half;
    let px = f32(gid.x) * G.spacing - half;
    let lim = reach + meander * 1.0001f;
    // Cheap row test first (the CPU keeps only the segments whose z-range reaches the row).
    var any = false;
    for (var k = 0u; k + 1u < G.river_points; k++) {
        let a = line[k];
        let b = line[k + 1u];
        if (min(a.y, b.y) - lim <= pz && max(a.y, b.y) + lim >= pz) {
            any = true;
            break;
        }
    }
    if (!any) {
        return;
    }
    let nx = clamp(fbm_point(px / ms, pz / ms, s, 3u, 2.0f, 0.5f), -1.0f, 1.0f);
    let nz = clamp(fbm_point(px / ms + 31.7f, pz / ms - 17.3f, s, 3u, 2.0f, 0.5f), -1.0f, 1.0f);
    let q = vec2<f32>(px + meander * nx, pz + meander * nz);
    var d = 3.4028234663852886e38f;
    for (var k = 0u; k + 1u < G.river_points; k++) {
        let a = line[k];
        let b = line[k + 1u];
        if (min(a.y, b.y) - lim <= pz && max(a.y, b.y) + lim >= pz) {
            d = min(d, segment_distance(q, a, b));
        }
    }
    let t = 1.0f - smoothstep_(width * 0.5f, reach + 1e-3f, d);
    if (t > 0.0f) {
        let h = heights[idx];
        let carved = h + (-G.river_depth - h) * t;
        heights[idx] = min(h, carved);
    }
}
