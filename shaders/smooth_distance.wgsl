// Mirrors island_core::coast_smoothing::smooth_distance: the signed distance to the coast in
// fixed point (1/QUANT m, floored, + bias so it is non-negative), three box passes along x and
// three along z (rounded integer means, edges replicated; integer arithmetic, so the same bits
// as the CPU), then blended into the exact distance away from the coast. One invocation per
// sample (quantize, blend) or per line (rows, columns).
@group(0) @binding(1) var<uniform> P: SmoothDistance;
@group(0) @binding(2) var<storage, read_write> dist: array<f32>;
@group(0) @binding(3) var<storage, read> src: array<i32>;
@group(0) @binding(4) var<storage, read_write> dst: array<i32>;

@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn quantize(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    dst[i] = i32(floor(clamp(dist[i], -P.cap, P.cap) * P.quant)) + P.bias;
}

fn box_mean(sum: i32, w: i32) -> i32 {
    return (sum + w / 2) / w;
}

@compute @workgroup_size(LINE_GROUP)
fn rows(@builtin(global_invocation_id) gid: vec3<u32>) {
    let n = i32(G.n);
    let z = i32(gid.x);
    if (z >= n) {
        return;
    }
    let k = i32(P.radius);
    let w = 2 * k + 1;
    let base = z * n;
    var sum = 0;
    for (var j = -k; j <= k; j++) {
        sum += src[base + clamp(j, 0, n - 1)];
    }
    for (var x = 0; x < n; x++) {
        dst[base + x] = box_mean(sum, w);
        sum += src[base + clamp(x + k + 1, 0, n - 1)] - src[base + clamp(x - k, 0, n - 1)];
    }
}

@compute @workgroup_size(LINE_GROUP)
fn columns(@builtin(global_invocation_id) gid: vec3<u32>) {
    let n = i32(G.n);
    let x = i32(gid.x);
    if (x >= n) {
        return;
    }
    let k = i32(P.radius);
    let w = 2 * k + 1;
    var sum = 0;
    for (var j = -k; j <= k; j++) {
        sum += src[clamp(j, 0, n - 1) * n + x];
    }
    for (var z = 0; z < n; z++) {
        dst[z * n + x] = box_mean(sum, w);
        sum += src[clamp(z + k + 1, 0, n - 1) * n + x] - src[clamp(z - k, 0, n - 1) * n + x];
    }
}

@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn blend(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    let d = dist[i];
    let s = rounded(f32(src[i] - P.bias) * (1.0f / P.quant));
    let t = smoothstep_(0.0f, P.keep, abs(d));
    let v = d + mul_r(s - d, t);
    if ((v > 0.0f) == (d > 0.0f)) {
        dist[i] = v;
    }
}
