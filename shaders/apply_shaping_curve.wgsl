// Mirrors island_core::shaping::apply_shaping_curve (linear LUT over [0, 1]).
@group(0) @binding(1) var<uniform> P: Shaping;
@group(0) @binding(2) var<storage, read_write> heights: array<f32>;
@group(0) @binding(3) var<storage, read> lut: array<f32>;

@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let idx = sample_index(gid);
    if (idx < 0) {
        return;
    }
    let n = P.lut_len;
    let x = rounded(clamp(heights[idx], 0.0f, 1.0f) * f32(n - 1u));
    let i = min(u32(x), n - 2u);
    let f = x - f32(i);
    heights[idx] = lut[i] + mul_r(lut[i + 1u] - lut[i], f);
}
