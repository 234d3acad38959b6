// Mirrors island_core::splat::auto_splat: jittered weights, separable box blur passes
// (radius 1, clamped borders), largest-remainder quantisation to RGBA8 summing to 255.
// Weights are planar (w0..w3 = sand, grass, rock, snow) so every binding holds 4 bytes per
// sample (software adapters cap a storage binding at 128 MiB).
@group(0) @binding(1) var<uniform> P: Splat;
@group(0) @binding(2) var<storage, read> heights: array<f32>;
@group(0) @binding(3) var<storage, read> normal_y: array<f32>;
@group(0) @binding(4) var<storage, read> sandiness: array<f32>;
@group(0) @binding(5) var<storage, read_write> w0: array<f32>;
@group(0) @binding(6) var<storage, read_write> w1: array<f32>;
@group(0) @binding(7) var<storage, read_write> w2: array<f32>;
@group(0) @binding(8) var<storage, read_write> w3: array<f32>;
@group(0) @binding(9) var<storage, read_write> blur_tmp: array<f32>;
// The result of `quantize`: RGBA8 packed little-endian.
@group(0) @binding(10) var<storage, read_write> packed: array<u32>;

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
    let hj = rounded(height) + rounded(jit);
    let sand = 1.0f - smoothstep_(P.sand_height - 1.5f, P.sand_height + 1.5f, hj);
    let snow_h = mul_r(P.snow_height, P.max_height);
    let snow = mul_r(
        smoothstep_(snow_h - 4.0f, snow_h + 4.0f, hj),
        1.0f - smoothstep_(P.rock_slope + 4.0f, P.rock_slope + 14.0f, slope_deg),
    );
    let rock = smoothstep_(P.rock_slope - 6.0f, P.rock_slope + 6.0f, slope_deg);
    let rest = mul_r(1.0f - rock, 1.0f - snow);
    let sandy = max(sand, sandy_biome);
    let w = vec4<f32>(mul_r(rest, sandy), mul_r(rest, 1.0f - sandy), rock, mul_r(1.0f - rock, snow));
    let s = w.x + w.y + w.z + w.w;
    if (s > 0.0f) {
        return vec4<f32>(w.x / s, w.y / s, w.z / s, w.w / s);
    }
    return vec4<f32>(0.0f, 1.0f, 0.0f, 0.0f);
}

@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn weights(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    let s = stage_seed(G.seed_lo, G.seed_hi, P.tag);
    // Jitter noise = fbm_noise(n, world, SPLAT_JITTER_SCALE, 3, 2, 0.5): P.jitter_step = world / (n - 1) / SPLAT_JITTER_SCALE.
    let j = P.jitter * fbm_grid(grid_pos(gid.x, P.jitter_step), grid_pos(gid.y, P.jitter_step), s, 3u, 2.0f, 0.5f);
    let ny = normal_y[i];
    let slope = acos(clamp(ny, -1.0f, 1.0f)) * TO_DEG;
    let w = splat_weights(heights[i], slope, sandiness[i], j);
    w0[i] = w.x;
    w1[i] = w.y;
    w2[i] = w.z;
    w3[i] = w.w;
}

// Channel P.channel. P.vertical = 0: blur_tmp = horizontal blur of the channel; 1: the
// channel = vertical blur of blur_tmp. One CPU box_blur_pass = both, for each channel.
@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn blur(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    let n = G.n;
    let x = gid.x;
    let z = gid.y;
    let k = P.channel;
    if (P.vertical == 0u) {
        let a = load_w(k, z * n + select(x - 1u, 0u, x == 0u));
        let b = load_w(k, z * n + x);
        let c = load_w(k, z * n + min(x + 1u, n - 1u));
        blur_tmp[i] = (a + b + c) * THIRD;
    } else {
        let a = blur_tmp[select(z - 1u, 0u, z == 0u) * n + x];
        let b = blur_tmp[z * n + x];
        let c = blur_tmp[min(z + 1u, n - 1u) * n + x];
        store_w(k, u32(i), (a + b + c) * THIRD);
    }
}

@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn quantize(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    packed[i] = quantize_weights(array<f32, 4>(w0[i], w1[i], w2[i], w3[i]));
}
