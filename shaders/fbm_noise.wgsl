// Mirrors island_core::gradient_noise::fbm_noise (octave-outer row kernel, sum * (1 / norm)).
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
    out_f[i] = fbm_grid(xs, y, s, P.octaves, P.lacunarity, P.persistence);
}
