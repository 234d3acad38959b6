// Mirrors island_core::drainage: `receivers` (steepest descent over the filled surface, D8,
// ties to the smallest neighbour index; samples on filled flats take their receiver from
// flat_routing, `depression.wgsl`).
// The accumulation of the drainage area over these receivers is `erosion.wgsl`'s
// `flow_accumulation` (island_core::drainage::accumulate is the kernel behind both). The
// filled surface and flat receivers are `depression.wgsl`'s depression_fill and flat_routing.
@group(0) @binding(2) var<storage, read> filled: array<f32>;
@group(0) @binding(3) var<storage, read> flat: array<u32>;
@group(0) @binding(4) var<storage, read> heights: array<f32>;
@group(0) @binding(5) var<storage, read_write> rcv: array<u32>;
@group(0) @binding(1) var<uniform> P: Drainage;

@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn receivers(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    let n = G.n;
    let x = gid.x;
    let z = gid.y;
    let iu = u32(i);
    if (!(heights[iu] > P.sea_level) || x == 0u || z == 0u || x + 1u == n || z + 1u == n) {
        rcv[iu] = iu;
        return;
    }
    let hi = filled[iu];
    var best = 0xffffffffu;
    var best_s = 0.0f;
    for (var m = 0u; m < 9u; m++) {
        if (m == 4u) {
            continue;
        }
        let j = (z + m / 3u - 1u) * n + (x + m % 3u - 1u);
        var d = SQRT_2;
        if (m == 1u || m == 3u || m == 5u || m == 7u) {
            d = 1.0f;
        }
        let s = (hi - filled[j]) / d;
        if (s > best_s) {
            best_s = s;
            best = j;
        }
    }
    if (best == 0xffffffffu) {
        best = flat[iu];
    }
    rcv[iu] = best;
}
