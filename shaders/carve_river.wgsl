// Mirrors island_core::river::carve_river: distance of the noise-warped sample to the river
// polyline (computed on the CPU from the seed, RIVER_SEGMENTS + 1 points), carving only ever lowers.
@group(0) @binding(1) var<uniform> P: River;
@group(0) @binding(2) var<storage, read_write> heights: array<f32>;
@group(0) @binding(3) var<storage, read> line: array<vec2<f32>>;
// Per row: bit k of `segs` set when segment k's z-range (± lim) reaches the row (the CPU's
// per-row segment list; RIVER_SEGMENTS <= 128 is checked on the Rust side); [lo, hi] = union
// of their x-ranges (± lim).
struct RowInfo {
    segs: vec4<u32>,
    lo: f32,
    hi: f32,
    _p0: f32,
    _p1: f32,
}
@group(0) @binding(4) var<storage, read_write> row_info: array<RowInfo>;

fn segment_distance(p: vec2<f32>, a: vec2<f32>, b: vec2<f32>) -> f32 {
    let dx = b.x - a.x;
    let dz = b.y - a.y;
    let px = p.x - a.x;
    let pz = p.y - a.y;
    let len2 = mul_r(dx, dx) + mul_r(dz, dz);
    var t = 0.0f;
    if (len2 > 0.0f) {
        t = clamp((mul_r(px, dx) + mul_r(pz, dz)) / len2, 0.0f, 1.0f);
    }
    let ex = px - mul_r(t, dx);
    let ez = pz - mul_r(t, dz);
    return sqrt(mul_r(ex, ex) + mul_r(ez, ez));
}

fn river_lim() -> f32 {
    let reach = P.width * 0.5f + P.bank;
    return reach + mul_r(P.meander, 1.0001f);
}

// One invocation per row: the segments that can reach it.
@compute @workgroup_size(LINE_GROUP)
fn rows(@builtin(global_invocation_id) gid: vec3<u32>) {
    let z = gid.x;
    if (z >= G.n) {
        return;
    }
    let half = G.world_size * 0.5f;
    let pz = grid_pos(z, G.spacing) - half;
    let lim = river_lim();
    var segs = vec4<u32>(0u, 0u, 0u, 0u);
    var lo = 3.4028234663852886e38f;
    var hi = -3.4028234663852886e38f;
    for (var k = 0u; k + 1u < P.points && k < RIVER_SEGMENTS; k++) {
        let a = line[k];
        let b = line[k + 1u];
        if (min(a.y, b.y) - lim <= pz && max(a.y, b.y) + lim >= pz) {
            segs[k / 32u] |= 1u << (k % 32u);
            lo = min(lo, min(a.x, b.x) - lim);
            hi = max(hi, max(a.x, b.x) + lim);
        }
    }
    row_info[z] = RowInfo(segs, lo, hi, 0.0f, 0.0f);
}

// Segment k of the row can reach x = px (the CPU only visits x inside such x-spans; any other
// segment is farther than `reach` from the displaced sample, so it cannot lower the minimum
// below the carve distance).
fn reaches_x(k: u32, px: f32, lim: f32) -> bool {
    let a = line[k];
    let b = line[k + 1u];
    return min(a.x, b.x) - lim <= px && max(a.x, b.x) + lim >= px;
}

@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let idx = sample_index(gid);
    if (idx < 0) {
        return;
    }
    let info = row_info[gid.y];
    let half = G.world_size * 0.5f;
    let px = grid_pos(gid.x, G.spacing) - half;
    if (px < info.lo || px > info.hi) {
        return;
    }
    let lim = river_lim();
    var any = false;
    for (var w = 0u; w < 4u && !any; w++) {
        var bits = info.segs[w];
        while (bits != 0u) {
            let k = w * 32u + firstTrailingBit(bits);
            bits &= bits - 1u;
            if (reaches_x(k, px, lim)) {
                any = true;
                break;
            }
        }
    }
    if (!any) {
        return;
    }
    let s = stage_seed(G.seed_lo, G.seed_hi, P.tag);
    let width = P.width;
    let meander = P.meander;
    let ms = P.meander_scale;
    let reach = width * 0.5f + P.bank;
    let pz = grid_pos(gid.y, G.spacing) - half;
    let nx = clamp(fbm_point(px / ms, pz / ms, s, 3u, 2.0f, 0.5f), -1.0f, 1.0f);
    let nz = clamp(fbm_point(px / ms + RIVER_WARP_OFFSET.x, pz / ms + RIVER_WARP_OFFSET.y, s, 3u, 2.0f, 0.5f), -1.0f, 1.0f);
    let q = vec2<f32>(px + mul_r(meander, nx), pz + mul_r(meander, nz));
    var d = 3.4028234663852886e38f;
    for (var w = 0u; w < 4u; w++) {
        var bits = info.segs[w];
        while (bits != 0u) {
            let k = w * 32u + firstTrailingBit(bits);
            bits &= bits - 1u;
            if (reaches_x(k, px, lim)) {
                d = min(d, segment_distance(q, line[k], line[k + 1u]));
            }
        }
    }
    let t = 1.0f - smoothstep_(width * 0.5f, reach + 1e-3f, d);
    if (t > 0.0f) {
        let h = heights[idx];
        let carved = h + mul_r(-P.depth - h, t);
        heights[idx] = min(h, carved);
    }
}
