// Mirrors island_core::splat::auto_splat: jittered weights, separable box blur passes
// (radius 1, clamped borders), largest-remainder quantisation to RGBA8 summing to 255.
// Weights are planar (w0..w3 = sand, grass, rock, snow) so every binding holds 4 bytes per
// sample (software adapters cap a storage binding at 128 MiB).
@group(0) @binding(2) var<storage, read_write> heights: array<f32>;
// Binding 3: the normals' y component (f32 bits) for `weights`, the packed RGBA8 result of
// `quantize` (the caller binds the output buffer there).
@group(0) @binding(3) var<storage, read_write> ny_or_packed: array<u32>;
@group(0) @binding(4) var<storage, read_write> sandiness: array<f32>;
@group(0) @binding(5) var<storage, read_write> w0: array<f32>;
@group(0) @binding(6) var<storage, read_write> w1: array<f32>;
@group(0) @binding(7) var<storage, read_write> w2: array<f32>;
@group(0) @binding(8) var<storage, read_write> w3: array<f32>;
@group(0) @binding(9) var<storage, read_write> wtmp: array<f32>;

fn load_w(k: u32, i: u32) -> f32 {
    switch k {
        case 0u: { return w0[i]; }
        case 1u: { return w1[i]; }
        case 2u: { return w2[i]; }
        default: { return w3[i]; }
    }
}

fn store_w(k: u32, i: u32, v: f32) {
    switch k {
        case 0u: { w0[i] = v; }
        case 1u: { w1[i] = v; }
        case 2u: { w2[i] = v; }
        default: { w3[i] = v; }
    }
}

fn splat_weights(height: f32, slope_deg: f32, sandy_biome: f32, jit: f32) -> vec4<f32> {
    let hj = height + jit;
    let sand = 1.0f - smoothstep_(G.sand_height - 1.5f, G.sand_height + 1.5f, hj);
    let snow_h = G.snow_height * G.max_height;
    let snow = smoothstep_(snow_h - 4.0f, snow_h + 4.0f, hj)
        * (1.0f - smoothstep_(G.rock_slope + 4.0f, G.rock_slope + 14.0f, slope_deg));
    let rock = smoothstep_(G.rock_slope - 6.0f, G.rock_slope + 6.0f, slope_deg);
    let rest = (1.0f - rock) * (1.0f - snow);
    let sandy = max(sand, sandy_biome);
    let w = vec4<f32>(rest * sandy, rest * (1.0f - sandy), rock, (1.0f - rock) * snow);
    let s = w.x + w.y + w.z + w.w;
    if (s > 0.0f) {
        return vec4<f32>(w.x / s, w.y / s, w.z / s, w.w / s);
    }
    return vec4<f32>(0.0f, 1.0f, 0.0f, 0.0f);
}

@compute @workgroup_size(16, 16)
fn weights(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    let s = stage_seed(G.seed_lo, G.seed_hi, D.tag);
    // Jitter noise = fbm_noise(n, world, SPLAT_JITTER_SCALE, 3, 2, 0.5): D.step = world / (n - 1) / 40.
    let j = G.splat_jitter * fbm_grid(f32(gid.x) * D.step, f32(gid.y) * D.step, s, 3u, 2.0f, 0.5f);
    let ny = bitcast<f32>(ny_or_packed[i]);
    let slope = acos(clamp(ny, -1.0f, 1.0f)) * TO_DEG;
    let w = splat_weights(heights[i], slope, sandiness[i], j);
    w0[i] = w.x;
    w1[i] = w.y;
    w2[i] = w.z;
    w3[i] = w.w;
}

// Channel D.level. D.which = 0: wtmp = horizontal blur of the channel; D.which = 1: the
// channel = vertical blur of wtmp. One CPU box_blur_pass = both, for each channel.
@compute @workgroup_size(16, 16)
fn blur(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    let n = G.n;
    let x = gid.x;
    let z = gid.y;
    let k = D.level;
    if (D.which == 0u) {
        let a = load_w(k, z * n + select(x - 1u, 0u, x == 0u));
        let b = load_w(k, z * n + x);
        let c = load_w(k, z * n + min(x + 1u, n - 1u));
        wtmp[i] = (a + b + c) * THIRD;
    } else {
        let a = wtmp[select(z - 1u, 0u, z == 0u) * n + x];
        let b = wtmp[z * n + x];
        let c = wtmp[min(z + 1u, n - 1u) * n + x];
        store_w(k, u32(i), (a + b + c) * THIRD);
    }
}

@compute @workgroup_size(16, 16)
fn quantize(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    var wk = array<f32, 4>(max(w0[i], 0.0f), max(w1[i], 0.0f), max(w2[i], 0.0f), max(w3[i], 0.0f));
    let s = ((wk[0] + wk[1]) + wk[2]) + wk[3];
    var out = array<u32, 4>(0u, 0u, 0u, 0u);
    if (s <= 0.0f) {
        ny_or_packed[i] = 255u << 8u;
        return;
    }
    var rem: array<f32, 4>;
    var total = 0u;
    for (var k = 0u; k < 4u; k++) {
        let v = wk[k] / s * 255.0f;
        let f = min(floor(v), 255.0f);
        out[k] = u32(f);
        rem[k] = v - f;
        total += u32(f);
    }
    var left = 0u;
    if (total < 255u) {
        left = 255u - total;
    }
    while (left > 0u) {
        var best = 0u;
        for (var k = 1u; k < 4u; k++) {
            if (rem[k] > rem[best]) {
                best = k;
            }
        }
        out[best] += 1u;
        rem[best] = -1.0f;
        left -= 1u;
    }
    ny_or_packed[i] = (out[0] & 255u) | ((out[1] & 255u) << 8u) | ((out[2] & 255u) << 16u) | ((out[3] & 255u) << 24u);
}
