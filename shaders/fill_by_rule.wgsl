// Mirrors island_core::paint::fill_by_rule for the Paint and Erase modes: the brush applied over
// the whole island with amount strength * mask(height, slope) (no radius, no falloff).
// Paint texels: 8 bytes, layers 0..3 packed little-endian in paint_a, 4..7 in paint_b.
@group(0) @binding(1) var<uniform> P: Brush;
@group(0) @binding(2) var<storage, read> heights: array<f32>;
@group(0) @binding(3) var<storage, read> normal_y: array<f32>;
@group(0) @binding(4) var<storage, read> base_splat: array<u32>;
@group(0) @binding(5) var<storage, read_write> paint_a: array<u32>;
@group(0) @binding(6) var<storage, read_write> paint_b: array<u32>;
@group(0) @binding(7) var<storage, read_write> changed: array<atomic<u32>>;

fn range_weight(v: f32, lo: f32, hi: f32, fade: f32) -> f32 {
    if (!(v >= lo && v <= hi)) {
        return 0.0f;
    }
    if (fade <= 0.0f) {
        return 1.0f;
    }
    return smoothstep_(lo, lo + fade, v) * (1.0f - smoothstep_(hi - fade, hi, v));
}

// Rust's f32::round (half away from zero) for s >= 0.
fn round_half_up(s: f32) -> f32 {
    let r = floor(s);
    if (s - r >= 0.5f) {
        return r + 1.0f;
    }
    return r;
}

// Mirrors paint::without_layer: `t` without `layer`, rescaled to sum 255, written to `out`;
// false (and `out` untouched) when the rest sums to 0.5 or less.
fn without_layer(t_in: array<f32, 8>, layer: u32, out: ptr<function, array<f32, 8>>) -> bool {
    var t = t_in;
    t[layer] = 0.0f;
    var s = 0.0f;
    for (var k = 0u; k < 8u; k++) {
        s += t[k];
    }
    if (!(s > 0.5f)) {
        return false;
    }
    let sc = 255.0f / s;
    for (var k = 0u; k < 8u; k++) {
        t[k] *= sc;
    }
    *out = t;
    return true;
}

@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let idx = sample_index(gid);
    if (idx < 0) {
        return;
    }
    let i = u32(idx);
    let slope = acos(clamp(normal_y[i], -1.0f, 1.0f)) * TO_DEG;
    let m = range_weight(heights[i], P.min_height, P.max_height, P.height_fade)
        * range_weight(slope, P.min_slope, P.max_slope, P.slope_fade);
    let a = mul_r(P.strength, m);
    if (a <= 0.0f) {
        return;
    }
    let pa = paint_a[i];
    let pb = paint_b[i];
    var p: array<u32, 8>;
    for (var k = 0u; k < 4u; k++) {
        p[k] = (pa >> (8u * k)) & 255u;
        p[k + 4u] = (pb >> (8u * k)) & 255u;
    }
    let layer = P.layer;
    var t: array<f32, 8>;
    for (var k = 0u; k < 8u; k++) {
        t[k] = 0.0f;
    }
    if (P.mode == 0u) {
        t[layer] = 255.0f;
    } else {
        // composite(base, p)
        let bp = base_splat[i];
        var b0: array<f32, 8>;
        for (var k = 0u; k < 8u; k++) {
            b0[k] = 0.0f;
        }
        for (var k = 0u; k < 4u; k++) {
            b0[k] = f32((bp >> (8u * k)) & 255u);
        }
        var asum = 0u;
        for (var k = 0u; k < 8u; k++) {
            asum += p[k];
        }
        var b = b0;
        var bs = 0.0f;
        for (var k = 0u; k < 8u; k++) {
            bs += b[k];
        }
        if (bs <= 0.0f) {
            for (var k = 0u; k < 8u; k++) {
                b[k] = 0.0f;
            }
            b[1] = 255.0f;
        } else if (bs != 255.0f) {
            let sc = 255.0f / bs;
            for (var k = 0u; k < 8u; k++) {
                b[k] *= sc;
            }
        }
        let keep = f32(255u - min(asum, 255u)) / 255.0f;
        var f: array<f32, 8>;
        for (var k = 0u; k < 8u; k++) {
            f[k] = mul_r(b[k], keep) + f32(p[k]);
        }
        if (!(f[layer] > 0.0f)) {
            return;
        }
        // erase_target(f, base, layer)
        if (!without_layer(f, layer, &t) && !without_layer(b0, layer, &t)) {
            for (var k = 0u; k < 8u; k++) {
                t[k] = 0.0f;
            }
            t[select(1u, 0u, layer == 1u)] = 255.0f;
        }
    }
    // apply(p, t, a)
    let keep = 1.0f - a;
    var v: array<f32, 8>;
    var s = 0.0f;
    for (var k = 0u; k < 8u; k++) {
        v[k] = mul_r(f32(p[k]), keep) + mul_r(t[k], a);
        s += v[k];
    }
    let total = u32(clamp(round_half_up(s), 0.0f, 255.0f));
    // quantize_to_total(v, total)
    var q: array<u32, 8>;
    for (var k = 0u; k < 8u; k++) {
        q[k] = 0u;
    }
    var s2 = 0.0f;
    for (var k = 0u; k < 8u; k++) {
        s2 += max(v[k], 0.0f);
    }
    if (total != 0u && s2 > 0.0f) {
        let scale = f32(total) / s2;
        var rem: array<f32, 8>;
        var sum = 0u;
        for (var k = 0u; k < 8u; k++) {
            let x = rounded(max(v[k], 0.0f) * scale);
            let fl = min(floor(x), 255.0f);
            q[k] = u32(fl);
            rem[k] = x - fl;
            sum += u32(fl);
        }
        var left = 0u;
        if (total > sum) {
            left = total - sum;
        }
        while (left > 0u) {
            var best = 0u;
            for (var k = 1u; k < 8u; k++) {
                if (rem[k] > rem[best]) {
                    best = k;
                }
            }
            if (rem[best] < 0.0f) {
                break;
            }
            q[best] = min(q[best] + 1u, 255u);
            rem[best] = -1.0f;
            left -= 1u;
        }
    }
    let na = q[0] | (q[1] << 8u) | (q[2] << 16u) | (q[3] << 24u);
    let nb = q[4] | (q[5] << 8u) | (q[6] << 16u) | (q[7] << 24u);
    if (na != pa || nb != pb) {
        paint_a[i] = na;
        paint_b[i] = nb;
        atomicAdd(&changed[0], 1u);
    }
}
