// Shared by every compute pass (prepended to each pass file when the pipelines are built).
// Ported bit-for-bit from rust/core/src/{hash,gradient_noise,value_noise,grid}.rs.
// Float constants are the exact f32 values the Rust code uses (printed from Rust).

// The prelude generated from rust/gpu/src/uniforms.rs comes first: the constants shared with
// the Rust side (RIVER_SEGMENTS, NORM_PER_GROUP, ...) and every uniform struct (Grid and one
// per pass: Noise, Diamond, Biomes, Mask, Coast, River, Splat, Brush, ...).
//
// Bindings of every pass module (group 0): `G` (0) the grid; `P` (1) the pass's own uniform
// struct, declared in the pass file; storage buffers from 2 on, by name, `read` when the pass
// only reads them. The Rust side binds them by these names (rust/gpu/src/passes.rs).
@group(0) @binding(0) var<uniform> G: Grid;

const GRAD_K: f32 = 3.051804378628731e-5f;    // 2.0f32 / 65535.0
const C6: f32 = 0.1666666716337204f;           // 1.0f32 / 6.0
const C120: f32 = 0.008333333767950535f;       // 1.0f32 / 120.0
const C5040: f32 = 0.00019841270113829523f;    // 1.0f32 / 5040.0
const C362880: f32 = 2.7557318844628753e-6f;   // 1.0f32 / 362880.0
const PI: f32 = 3.1415927410125732f;           // std::f32::consts::PI
const THIRD: f32 = 0.3333333432674408f;        // 1.0f32 / 3.0
const TO_DEG: f32 = 57.295780181884766f;       // f32::to_degrees factor
const UNIT: f32 = 5.960464477539063e-8f;       // 1 / 2^24
const F32_MAX: f32 = 3.4028234663852886e38f;

// ---- exact rounding ----
// Drivers may fuse `a * b + c` into one FMA (SPIR-V allows contraction; NVIDIA does it), which
// skips the rounding of the product; Rust never does. Every product that feeds an add or a
// subtract in the shared noise goes through `mul_r`, whose result is the rounded product made
// opaque to the optimiser (its bits OR-ed with `G.zero`, a uniform that is always 0), so the
// sum is computed from the same rounded product as on the CPU.
fn rounded(x: f32) -> f32 {
    return bitcast<f32>(bitcast<u32>(x) | G.zero);
}

fn mul_r(a: f32, b: f32) -> f32 {
    return rounded(a * b);
}

// Position of sample `i` on a grid of `step` units per sample (rounded as `i as f32 * step`).
fn grid_pos(i: u32, step: f32) -> f32 {
    return mul_r(f32(i), step);
}

// ---- hash.rs ----
fn hash_u32(x0: u32) -> u32 {
    var x = x0;
    x ^= x >> 16u;
    x *= 0x7feb352du;
    x ^= x >> 15u;
    x *= 0x846ca68bu;
    x ^= x >> 16u;
    return x;
}

fn hash2(x: i32, y: i32, seed: u32) -> u32 {
    return hash_u32(bitcast<u32>(x) ^ hash_u32(bitcast<u32>(y) ^ seed));
}

fn unit(h: u32) -> f32 {
    return f32(h >> 8u) * UNIT;
}

fn hash2_unit(x: i32, y: i32, seed: u32) -> f32 {
    return unit(hash2(x, y, seed));
}

// 64-bit seed as (lo, hi) halves.
fn stage_seed(lo: u32, hi: u32, stage: u32) -> u32 {
    return hash_u32(lo ^ hash_u32(hi ^ hash_u32(stage + 0x9e3779b9u)));
}

// Rust's saturating `f as i32` (inputs are floored, finite).
fn f2i(f: f32) -> i32 {
    if (f >= 2147483648.0f) {
        return 2147483647;
    }
    if (f < -2147483648.0f) {
        return -2147483647 - 1;
    }
    return i32(f);
}

// ---- grid.rs ----
// Its arguments and result are rounded (`rounded`), so neither a caller's product nor this
// product is fused into a sum on either side.
fn smoothstep_(e0_in: f32, e1_in: f32, x_in: f32) -> f32 {
    let e0 = rounded(e0_in);
    let e1 = rounded(e1_in);
    let x = rounded(x_in);
    let t = clamp((x - e0) / (e1 - e0), 0.0f, 1.0f);
    return rounded(t * t * (3.0f - mul_r(2.0f, t)));
}

// ---- gradient_noise.rs ----
fn fade(t: f32) -> f32 {
    return t * t * t * (mul_r(t, mul_r(t, 6.0f) - 15.0f) + 10.0f);
}

fn grad_of(h: u32) -> vec2<f32> {
    return vec2<f32>(mul_r(f32(h & 0xffffu), GRAD_K) - 1.0f, mul_r(f32(h >> 16u), GRAD_K) - 1.0f);
}
// Mirrors gradient_noise::cell_coeffs + cell_eval: with n_ij the corner dot products,
// a(dx) = n00 + v (n01 - n00) = a0 + a1 dx, d(dx) = (n10 + v (n11 - n10)) - a(dx) = d0 + d1 dx,
// noise = (a(dx) + fade(dx) d(dx)) * 1.2, in the same order of operations.
// The coordinates are taken as rounded f32 values (`rounded`): the lattice cell is their floor
// and the fraction their exact difference to it, whatever expression produced them; every
// product that feeds a sum is rounded first (`mul_r`), as on the CPU.
fn gradient_noise(x_in: f32, y_in: f32, seed: u32) -> f32 {
    let x = rounded(x_in);
    let y = rounded(y_in);
    let xf = floor(x);
    let yf = floor(y);
    let xi = bitcast<u32>(f2i(xf));
    let yi = bitcast<u32>(f2i(yf));
    let dx = x - xf;
    let dy = y - yf;
    let dy1 = dy - 1.0f;
    let v = fade(dy);
    let hy0 = hash_u32(yi ^ seed);
    let hy1 = hash_u32((yi + 1u) ^ seed);
    let g00 = grad_of(hash_u32(xi ^ hy0));
    let g10 = grad_of(hash_u32((xi + 1u) ^ hy0));
    let g01 = grad_of(hash_u32(xi ^ hy1));
    let g11 = grad_of(hash_u32((xi + 1u) ^ hy1));
    let c00 = mul_r(g00.y, dy);
    let c10 = mul_r(g10.y, dy);
    let c01 = mul_r(g01.y, dy1);
    let c11 = mul_r(g11.y, dy1);
    let a0 = c00 + mul_r(v, c01 - c00);
    let a1 = g00.x + mul_r(v, g01.x - g00.x);
    let e10 = c10 - g10.x;
    let e11 = c11 - g11.x;
    let b0 = e10 + mul_r(v, e11 - e10);
    let b1 = g10.x + mul_r(v, g11.x - g10.x);
    let u = fade(dx);
    return (a0 + mul_r(a1, dx) + mul_r(u, (b0 - a0) + mul_r(b1 - a1, dx))) * 1.2f;
}
fn octave_seed(seed: u32, o: u32) -> u32 {
    return hash_u32(seed ^ (o * 0x68e31da4u));
}

fn fbm_point(x: f32, y: f32, seed: u32, octaves: u32, lacunarity: f32, persistence: f32) -> f32 {
    var sum = 0.0f;
    var amp = 1.0f;
    var norm = 0.0f;
    var f = 1.0f;
    for (var o = 0u; o < octaves; o++) {
        sum += mul_r(amp, gradient_noise(x * f, y * f, octave_seed(seed, o)));
        norm += amp;
        amp *= persistence;
        f *= lacunarity;
    }
    if (norm > 0.0f) {
        return sum / norm;
    }
    return 0.0f;
}

// fBm as the CPU row kernels compute it (`fbm_noise`, `fbm_field`): sum of
// amp * noise(x * f, y * f), then times 1 / norm.
fn fbm_grid(x: f32, y: f32, seed: u32, octaves: u32, lacunarity: f32, persistence: f32) -> f32 {
    var v = 0.0f;
    var amp = 1.0f;
    var norm = 0.0f;
    var f = 1.0f;
    for (var o = 0u; o < octaves; o++) {
        v += mul_r(amp, gradient_noise(x * f, y * f, octave_seed(seed, o)));
        norm += amp;
        amp *= persistence;
        f *= lacunarity;
    }
    var inv = 0.0f;
    if (norm > 0.0f) {
        inv = 1.0f / norm;
    }
    return v * inv;
}

// ---- value_noise.rs ----
fn cosine_fade(t: f32) -> f32 {
    let x = PI * (t - 0.5f);
    let x2 = x * x;
    let s = x * (1.0f + mul_r(x2, -C6 + mul_r(x2, C120 + mul_r(x2, -C5040 + mul_r(x2, C362880)))));
    // Clamped so lattice values are hit exactly (the series overshoots ±1 by 3.5e-6).
    return clamp(0.5f + mul_r(0.5f, s), 0.0f, 1.0f);
}

fn value_noise_point(x_in: f32, y_in: f32, seed: u32) -> f32 {
    let x = rounded(x_in);
    let y = rounded(y_in);
    let xf = floor(x);
    let yf = floor(y);
    let xi = f2i(xf);
    let yi = f2i(yf);
    let u = cosine_fade(x - xf);
    let v = cosine_fade(y - yf);
    let x1 = bitcast<i32>(bitcast<u32>(xi) + 1u);
    let y1 = bitcast<i32>(bitcast<u32>(yi) + 1u);
    let a = hash2_unit(xi, yi, seed);
    let b = hash2_unit(x1, yi, seed);
    let c = hash2_unit(xi, y1, seed);
    let d = hash2_unit(x1, y1, seed);
    let top = a + mul_r(u, b - a);
    let bot = c + mul_r(u, d - c);
    return top + mul_r(v, bot - top);
}

// Sample index of a 2-D invocation, or -1 when outside the grid.
fn sample_index(gid: vec3<u32>) -> i32 {
    if (gid.x >= G.n || gid.y >= G.n) {
        return -1;
    }
    return i32(gid.y * G.n + gid.x);
}

// Word of a byte-packing pass (four samples of the n² grid per u32 word, byte k of word w
// sample 4·w + k, as the host's `Vec<u8>`) of a 2-D invocation in a dispatch of `groups`
// workgroups (`ctx::packed_word_groups`), or -1 past the last word.
fn packed_word(gid: vec3<u32>, groups: vec3<u32>) -> i32 {
    let w = gid.y * groups.x * GRID_TILE + gid.x;
    if (w >= (G.n * G.n + 3u) / 4u) {
        return -1;
    }
    return i32(w);
}

// ---- splat bytes ----
// Four splat weights as bytes summing to 255, packed little-endian: the largest remainders get
// the bytes left over, ties to the lower layer; no weight (sum <= 0) is all grass. The same
// operations as island_core::splat::quantize_weights (auto_splat `quantize`, wetness).
fn quantize_weights(w: array<f32, 4>) -> u32 {
    var wk = array<f32, 4>(max(w[0], 0.0f), max(w[1], 0.0f), max(w[2], 0.0f), max(w[3], 0.0f));
    let s = ((wk[0] + wk[1]) + wk[2]) + wk[3];
    if (s <= 0.0f) {
        return 255u << 8u;
    }
    var out = array<u32, 4>(0u, 0u, 0u, 0u);
    var rem: array<f32, 4>;
    var total = 0u;
    for (var k = 0u; k < 4u; k++) {
        let v = rounded(wk[k] / s * 255.0f);
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
    return (out[0] & 255u) | ((out[1] & 255u) << 8u) | ((out[2] & 255u) << 16u) | ((out[3] & 255u) << 24u);
}
