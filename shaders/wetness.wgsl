// Mirrors island_core::wetness::apply_wetness, per sample over the packed splat bytes (after
// auto_splat's quantize): beds sandy, banks greener with exp(−e / WET_SCALE), river mouths
// sandy, dry steep ground rockier; then the bytes re-quantised (common.wgsl's
// quantize_weights, as auto_splat's quantize). `dist` is the signed distance to the inland
// water (positive inside, the distance_to_coast pass over the `inland` mask). Products that
// feed a sum go through mul_r (no fused multiply-add); exp, acos and the division in
// smoothstep may differ from the CPU's by a few ULP, so a byte may differ by one where a
// weight sits on a quantisation boundary.
@group(0) @binding(1) var<uniform> P: Wetness;
@group(0) @binding(2) var<storage, read> heights: array<f32>;
@group(0) @binding(3) var<storage, read> normal_y: array<f32>;
@group(0) @binding(4) var<storage, read> inland: array<u32>;
@group(0) @binding(5) var<storage, read> dist: array<f32>;
@group(0) @binding(6) var<storage, read_write> packed: array<u32>;

@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn apply_wetness(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    let iu = u32(i);
    let h = heights[iu];
    let wet_here = inland[iu] != 0u;
    if (h < 0.0f && !wet_here) {
        return;
    }
    let b = packed[iu];
    var w0: array<f32, 4>;
    for (var k = 0u; k < 4u; k++) {
        w0[k] = f32((b >> (8u * k)) & 255u) * (1.0f / 255.0f);
    }
    var w = w0;
    let strength = P.strength;
    if (wet_here) {
        let t = mul_r(BED_SAND, strength);
        for (var k = 0u; k < 4u; k++) {
            var add = 0.0f;
            if (k == SPLAT_SAND) {
                add = t;
            }
            w[k] = mul_r(w[k], 1.0f - t) + add;
        }
    } else {
        let e = -dist[iu];
        let wet = exp(-e / WET_SCALE) * strength;
        if (h < P.beach) {
            let t = wet * (1.0f - w[SPLAT_SNOW]);
            let moved = mul_r(w[SPLAT_GRASS] + mul_r(w[SPLAT_ROCK], 0.5f), t);
            w[SPLAT_GRASS] -= mul_r(w[SPLAT_GRASS], t);
            w[SPLAT_ROCK] -= mul_r(mul_r(w[SPLAT_ROCK], 0.5f), t);
            w[SPLAT_SAND] += moved;
        } else {
            let from_sand = mul_r(w[SPLAT_SAND], wet);
            let from_rock = mul_r(mul_r(w[SPLAT_ROCK], 0.5f), wet);
            w[SPLAT_SAND] -= from_sand;
            w[SPLAT_ROCK] -= from_rock;
            w[SPLAT_GRASS] += from_sand + from_rock;
            let ny = clamp(normal_y[iu], -1.0f, 1.0f);
            let slope = acos(ny) * WET_DEGREES;
            let dry = smoothstep_(DRY_FROM, DRY_FULL, e)
                * smoothstep_(P.dry_slope, P.rock_slope, slope) * 0.5f * strength;
            let to_rock = mul_r(w[SPLAT_GRASS], dry);
            w[SPLAT_GRASS] -= to_rock;
            w[SPLAT_ROCK] += to_rock;
        }
    }
    if (w[0] != w0[0] || w[1] != w0[1] || w[2] != w0[2] || w[3] != w0[3]) {
        packed[iu] = quantize_weights(w);
    }
}
