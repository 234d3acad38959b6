// Mirrors island_core::biomes::biome_blend (displaced-grid Voronoi, smooth blend).
// table[b] = (height_scale, exponent, roughness, sandiness).
@group(0) @binding(2) var<storage, read_write> base: array<f32>;
@group(0) @binding(3) var<storage, read_write> biome_index: array<u32>;
@group(0) @binding(4) var<storage, read_write> rough: array<f32>;
@group(0) @binding(5) var<storage, read_write> sand: array<f32>;
@group(0) @binding(6) var<storage, read_write> table: array<vec4<f32>>;

fn biome_site(i: i32, j: i32, distortion: f32, s: u32) -> vec2<f32> {
    let h = hash2(i, j, s);
    let ox = unit(hash_u32(h ^ 0x55551111u)) - 0.5f;
    let oz = unit(hash_u32(h ^ 0x22229999u)) - 0.5f;
    return vec2<f32>(f32(i) + 0.5f + ox * distortion, f32(j) + 0.5f + oz * distortion);
}

fn region_biome(i: i32, j: i32, count: u32, s: u32) -> u32 {
    return hash_u32(hash2(i, j, s) ^ 0x00b107e5u) % count;
}

fn biome_relief(b: vec4<f32>, base01: f32) -> f32 {
    let t = clamp(base01, 0.0f, 1.0f);
    var p = 0.0f;
    if (t > 0.0f) {
        p = pow(t, b.y);
    }
    return b.x * p;
}

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let idx = sample_index(gid);
    if (idx < 0) {
        return;
    }
    let s = stage_seed(G.seed_lo, G.seed_hi, D.tag);
    let px = f32(gid.x) * G.spacing;
    let pz = f32(gid.y) * G.spacing;
    let base01 = base[idx];
    let cell = G.biome_cell;
    let ns = cell * 0.5f;
    let wx = fbm_point(px / ns, pz / ns, s ^ 0x0f0f0f0fu, 3u, 2.0f, 0.5f);
    let wz = fbm_point(px / ns + 19.1f, pz / ns - 7.3f, s ^ 0x0f0f0f0fu, 3u, 2.0f, 0.5f);
    let qx = (px + G.boundary_noise * wx) / cell;
    let qz = (pz + G.boundary_noise * wz) / cell;
    let ci = f2i(floor(qx));
    let cj = f2i(floor(qz));
    var d: array<f32, 25>;
    var b: array<u32, 25>;
    var dmin = 3.4028234663852886e38f;
    var imin = 0u;
    var k = 0u;
    for (var dj = -2; dj <= 2; dj++) {
        for (var di = -2; di <= 2; di++) {
            let i = ci + di;
            let j = cj + dj;
            let site = biome_site(i, j, G.biome_distortion, s);
            let ex = site.x - qx;
            let ez = site.y - qz;
            let dist = sqrt(ex * ex + ez * ez) * cell;
            d[k] = dist;
            b[k] = region_biome(i, j, G.biome_count, s);
            if (dist < dmin) {
                dmin = dist;
                imin = k;
            }
            k += 1u;
        }
    }
    var wsum = 0.0f;
    var hh = 0.0f;
    var r = 0.0f;
    var sd = 0.0f;
    for (var m = 0u; m < 25u; m++) {
        let w = 1.0f - smoothstep_(0.0f, G.blend_width, d[m] - dmin);
        if (w > 0.0f) {
            let bi = table[b[m]];
            wsum += w;
            hh += w * biome_relief(bi, base01);
            r += w * bi.z;
            sd += w * bi.w;
        }
    }
    let inv = 1.0f / wsum;
    base[idx] = hh * inv;
    biome_index[idx] = b[imin];
    rough[idx] = r * inv;
    sand[idx] = sd * inv;
}
