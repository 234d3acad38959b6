// Mirrors island_core::mask::island_mask: deformed circle, border ring always water.
@group(0) @binding(2) var<storage, read_write> mask: array<u32>;

const MASK_DEFORMATION: f32 = 0.3499999940395355f; // 0.35f32

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let idx = sample_index(gid);
    if (idx < 0) {
        return;
    }
    let s = stage_seed(G.seed_lo, G.seed_hi, D.tag);
    let half = G.world_size * 0.5f;
    let r = G.mask_radius * half;
    let amp = MASK_DEFORMATION * (1.0f - G.mask_roundness);
    let pz = f32(gid.y) * G.spacing - half;
    let px = f32(gid.x) * G.spacing - half;
    let border = min(half - abs(px), half - abs(pz));
    let nz = fbm_point(px / G.mask_noise_scale, pz / G.mask_noise_scale, s, 4u, 2.0f, 0.5f);
    let d = sqrt(px * px + pz * pz) / r + amp * nz;
    mask[idx] = select(0u, 1u, d < 1.0f && border > G.mask_margin);
}
