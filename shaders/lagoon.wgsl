// The GPU's part of island_core::shape::shallow_lagoon (the ATOLL's lagoon floor raised to
// -P.depth): the flood fill from the lagoon's centre runs on the host
// (island_core::shape::lagoon_region) over one bit per sample, so the heights never leave the
// GPU. `sea_bits` packs "height < 0" (bit k of word w: sample 32·w + k), `shallow_lagoon`
// raises the samples whose bit the host set in `lagoon_bits` (max, exact).
@group(0) @binding(1) var<uniform> P: Lagoon;
@group(0) @binding(2) var<storage, read> heights_in: array<f32>;
@group(0) @binding(3) var<storage, read_write> sea: array<u32>;
@group(0) @binding(4) var<storage, read> lagoon_bits: array<u32>;
@group(0) @binding(5) var<storage, read_write> heights: array<f32>;

@compute @workgroup_size(64)
fn sea_bits(@builtin(global_invocation_id) gid: vec3<u32>) {
    let w = gid.x;
    let len = G.n * G.n;
    if (w >= (len + 31u) / 32u) {
        return;
    }
    var bits = 0u;
    for (var k = 0u; k < 32u; k++) {
        let i = w * 32u + k;
        if (i < len && heights_in[i] < 0.0f) {
            bits |= 1u << k;
        }
    }
    sea[w] = bits;
}

@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn shallow_lagoon(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    let k = u32(i);
    if (((lagoon_bits[k / 32u] >> (k % 32u)) & 1u) != 0u) {
        heights[i] = max(heights[i], -P.depth);
    }
}
