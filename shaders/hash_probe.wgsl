// Test-only probe: hash functions of given inputs, to pin the port bit-for-bit.
@group(0) @binding(2) var<storage, read> probe_in: array<u32>;
@group(0) @binding(3) var<storage, read_write> probe_out: array<u32>;

@compute @workgroup_size(LINE_GROUP)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= arrayLength(&probe_in)) {
        return;
    }
    let v = probe_in[i];
    probe_out[i * 4u] = hash_u32(v);
    probe_out[i * 4u + 1u] = hash2(bitcast<i32>(v), bitcast<i32>(~v), 12345u);
    probe_out[i * 4u + 2u] = stage_seed(v, v * 3u, 5u);
    probe_out[i * 4u + 3u] = bitcast<u32>(gradient_noise(mul_r(f32(v & 0xffffu), 0.37f) - 900.0f, f32(v >> 16u) * 0.11f, v));
}
