// Mirrors island_core::biomes::biome_blend (displaced-grid Voronoi, smooth blend).
// table[b] = (height_scale, exponent, roughness, sandiness).
@group(0) @binding(1) var<uniform> P: Biomes;
@group(0) @binding(2) var<storage, read_write> base: array<f32>;
@group(0) @binding(3) var<storage, read_write> biome_index: array<u32>;
@group(0) @binding(4) var<storage, read_write> rough: array<f32>;
@group(0) @binding(5) var<storage, read_write> sand: array<f32>;
@group(0) @binding(6) var<storage, read> table: array<vec4<f32>>;

fn biome_site(i: i32, j: i32, distortion: f32, s: u32) -> vec2<f32> {
    let h = hash2(i, j, s);
    let ox = unit(hash_u32(h ^ 0x55551111u)) - 0.5f;
    let oz = unit(hash_u32(h ^ 0x22229999u)) - 0.5f;
    return vec2<f32>(f32(i) + 0.5f + mul_r(ox, distortion), f32(j) + 0.5f + mul_r(oz, distortion));
}

fn region_biome(i: i32, j: i32, count: u32, s: u32) -> u32 {
    return hash_u32(hash2(i, j, s) ^ 0x00b107e5u) % count;
}

// Mirrors island_core::biomes::log2_approx (Cephes log2f polynomial) for t > 0.
fn log2_approx(t: f32) -> f32 {
    var ts = t;
    var e = -127;
    if (t < 1.17549435e-38f) {
        // Subnormals are scaled into the normal range first.
        ts = t * 8388608.0f;
        e = -150;
    }
    let bits = bitcast<u32>(ts);
    e += i32((bits >> 23u) & 0xffu);
    var m = bitcast<f32>((bits & 0x007fffffu) | 0x3f800000u);
    // Mantissa in [sqrt(1/2), sqrt(2)).
    if (m > 1.41421354f) {
        m = m * 0.5f;
        e += 1;
    }
    let x = m - 1.0f;
    let z = x * x;
    var p = 0.070376836f;
    p = mul_r(p, x) - 0.1151461f;
    p = mul_r(p, x) + 0.116769984f;
    p = mul_r(p, x) - 0.12420141f;
    p = mul_r(p, x) + 0.14249323f;
    p = mul_r(p, x) - 0.16668057f;
    p = mul_r(p, x) + 0.20000714f;
    p = mul_r(p, x) - 0.24999994f;
    p = mul_r(p, x) + 0.3333333f;
    let y = mul_r(x, z * p) - 0.5f * z;
    return mul_r(y, 0.44269505f) + mul_r(x, 0.44269505f) + y + x + f32(e);
}

// Mirrors island_core::biomes::exp2_approx (Cephes exp2f polynomial): 0 below -126.
fn exp2_approx(y: f32) -> f32 {
    if (y < -126.0f) {
        return 0.0f;
    }
    let yc = min(y, 127.0f);
    // Nearest integer, ties to even (the CPU adds 1.5 * 2^23).
    let n = round(yc);
    let x = yc - n;
    var p = 0.00015353362f;
    p = mul_r(p, x) + 0.0013398874f;
    p = mul_r(p, x) + 0.009618437f;
    p = mul_r(p, x) + 0.055503324f;
    p = mul_r(p, x) + 0.24022648f;
    p = mul_r(p, x) + 0.6931472f;
    let px = 1.0f + mul_r(x, p);
    return px * bitcast<f32>(u32(i32(n) + 127) << 23u);
}

// height_scale * t^exponent as island_core::biomes::biome_relief computes it:
// 2^(exponent * log2 t), 0 at t = 0.
fn biome_relief(b: vec4<f32>, base01: f32) -> f32 {
    let t = clamp(base01, 0.0f, 1.0f);
    var p = 0.0f;
    if (t > 0.0f) {
        p = exp2_approx(b.y * log2_approx(t));
    }
    return b.x * p;
}

// P.warp_step = spacing / cell: the boundary wiggle is `fbm_field(n, step, offset, 3, 2, 0.5,
// s ^ 0x0f0f0f0f)` on the CPU, offsets (0, 0) and BIOME_WARP_OFFSET = (19.1, -7.3).
@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let idx = sample_index(gid);
    if (idx < 0) {
        return;
    }
    let s = stage_seed(G.seed_lo, G.seed_hi, P.tag);
    let px = grid_pos(gid.x, G.spacing);
    let pz = grid_pos(gid.y, G.spacing);
    let base01 = base[idx];
    let cell = P.cell;
    let ws = s ^ 0x0f0f0f0fu;
    let xs = grid_pos(gid.x, P.warp_step);
    let zs = grid_pos(gid.y, P.warp_step);
    let wx = fbm_grid(xs + 0.0f, zs + 0.0f, ws, 3u, 2.0f, 0.5f);
    let wz = fbm_grid(xs + BIOME_WARP_OFFSET.x, zs + BIOME_WARP_OFFSET.y, ws, 3u, 2.0f, 0.5f);
    let qx = (px + mul_r(P.boundary_noise, wx)) / cell;
    let qz = (pz + mul_r(P.boundary_noise, wz)) / cell;
    let ci = f2i(floor(qx));
    let cj = f2i(floor(qz));
    // Squared distances (cell units) to the 5x5 surrounding sites.
    var d2: array<f32, 25>;
    var bi: array<u32, 25>;
    var kmin = 0u;
    var k = 0u;
    for (var dj = -2; dj <= 2; dj++) {
        for (var di = -2; di <= 2; di++) {
            let i = ci + di;
            let j = cj + dj;
            let site = biome_site(i, j, P.distortion, s);
            let dx = site.x - qx;
            let dz = site.y - qz;
            d2[k] = mul_r(dx, dx) + mul_r(dz, dz);
            bi[k] = region_biome(i, j, P.count, s);
            if (d2[k] < d2[kmin]) {
                kmin = k;
            }
            k += 1u;
        }
    }
    let dmin = rounded(sqrt(d2[kmin]) * cell);
    let reach = (dmin + P.blend_width) / cell;
    let reach2 = reach * reach;
    // Weight per biome: 1 - smoothstep(0, blend, d - d_min) for every site within reach.
    var wb: array<f32, MAX_BIOMES>;
    for (var m = 0u; m < MAX_BIOMES; m++) {
        wb[m] = 0.0f;
    }
    for (var m = 0u; m < 25u; m++) {
        if (d2[m] < reach2) {
            let d = rounded(sqrt(d2[m]) * cell);
            wb[bi[m]] += 1.0f - smoothstep_(0.0f, P.blend_width, d - dmin);
        }
    }
    var wsum = 0.0f;
    var hh = 0.0f;
    var r = 0.0f;
    var sd = 0.0f;
    for (var m = 0u; m < P.count && m < MAX_BIOMES; m++) {
        let w = wb[m];
        if (w > 0.0f) {
            let t = table[m];
            wsum += w;
            hh += mul_r(w, biome_relief(t, base01));
            r += mul_r(w, t.z);
            sd += mul_r(w, t.w);
        }
    }
    let inv = 1.0f / wsum;
    base[idx] = hh * inv;
    biome_index[idx] = bi[kmin];
    rough[idx] = r * inv;
    sand[idx] = sd * inv;
}

// The biome index compacted for the read-back, one byte per sample (see packed_word).
@group(0) @binding(7) var<storage, read_write> biome_bytes: array<u32>;

@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn pack_index(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let ww = packed_word(gid, groups);
    if (ww < 0) {
        return;
    }
    let w = u32(ww);
    let nn = G.n * G.n;
    var word = 0u;
    for (var k = 0u; k < 4u; k++) {
        let i = 4u * w + k;
        if (i < nn) {
            word |= (biome_index[i] & 0xffu) << (8u * k);
        }
    }
    biome_bytes[w] = word;
}
