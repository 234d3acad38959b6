// Mirrors island_core::mask::island_mask: deformed circle, border ring always water.
@group(0) @binding(1) var<uniform> P: Mask;
@group(0) @binding(2) var<storage, read_write> mask: array<u32>;

@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let idx = sample_index(gid);
    if (idx < 0) {
        return;
    }
    let s = stage_seed(G.seed_lo, G.seed_hi, P.tag);
    let half = G.world_size * 0.5f;
    let r = P.radius * half;
    let amp = P.amp; // MASK_DEFORMATION * (1 - roundness), computed on the CPU
    let pz = grid_pos(gid.y, G.spacing) - half;
    let px = grid_pos(gid.x, G.spacing) - half;
    let border = min(half - abs(px), half - abs(pz));
    let d0 = sqrt(mul_r(px, px) + mul_r(pz, pz)) / r;
    var land: bool;
    if (d0 - amp >= 1.0f) {
        land = false;
    } else if (d0 + amp < 1.0f) {
        land = true;
    } else {
        let nz = clamp(MASK_NOISE_GAIN * fbm_point(px / P.noise_scale, pz / P.noise_scale, s, 4u, 2.0f, 0.5f), -1.0f, 1.0f);
        land = d0 + mul_r(amp, nz) < 1.0f;
    }
    mask[idx] = select(0u, 1u, land && border > P.margin);
}
