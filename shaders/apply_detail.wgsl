// Mirrors island_core::detail::apply_detail: base *= lerp(1, min(detail01, cap) / cap, strength).
@group(0) @binding(1) var<uniform> P: Detail;
@group(0) @binding(2) var<storage, read_write> base: array<f32>;
@group(0) @binding(3) var<storage, read> detail: array<f32>;

@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    let cap = max(P.cap, 1e-3f);
    let d01 = clamp(0.5f + 0.5f * detail[i], 0.0f, 1.0f);
    let m = min(d01, cap) / cap;
    base[i] = base[i] * (1.0f + mul_r(m - 1.0f, P.strength));
}
