// Mirrors island_core::value_noise::value_noise (cosine value noise, frequency x2 per octave).
@group(0) @binding(1) var<uniform> P: Noise;
@group(0) @binding(2) var<storage, read_write> out_f: array<f32>;

@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    let s = stage_seed(G.seed_lo, G.seed_hi, P.tag);
    let y = grid_pos(gid.y, P.step);
    let xs = grid_pos(gid.x, P.step);
    var v = 0.0f;
    var amp = 1.0f;
    var norm = 0.0f;
    var f = 1.0f;
    for (var o = 0u; o < P.octaves; o++) {
        v += mul_r(amp, value_noise_point(xs * f, y * f, octave_seed(s, o)));
        norm += amp;
        amp *= P.persistence;
        f *= 2.0f;
    }
    var inv = 0.0f;
    if (norm > 0.0f) {
        inv = 1.0f / norm;
    }
    out_f[i] = v * inv;
}
