// Mirrors island_core::grid::normalize_01: min/max reduction (two passes), then rescale.
@group(0) @binding(1) var<uniform> P: Normalize;
@group(0) @binding(2) var<storage, read_write> data: array<f32>;
@group(0) @binding(3) var<storage, read_write> partial: array<vec2<f32>>;
@group(0) @binding(4) var<storage, read_write> minmax: array<vec2<f32>>;

// NORM_WORKGROUP invocations reduce NORM_NORM_PER_GROUP samples per workgroup (constants shared with
// the Rust side, which sizes the partial buffer and the dispatches with them).
const WG: u32 = NORM_WORKGROUP;

var<workgroup> smn: array<f32, NORM_WORKGROUP>;
var<workgroup> smx: array<f32, NORM_WORKGROUP>;

fn tree_reduce(lid: u32) {
    for (var s = WG / 2u; s > 0u; s = s / 2u) {
        workgroupBarrier();
        if (lid < s) {
            smn[lid] = min(smn[lid], smn[lid + s]);
            smx[lid] = max(smx[lid], smx[lid + s]);
        }
    }
    workgroupBarrier();
}

@compute @workgroup_size(NORM_WORKGROUP)
fn reduce_partial(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid3: vec3<u32>) {
    let lid = lid3.x;
    let len = G.n * G.n;
    let start = wid.x * NORM_PER_GROUP;
    var mn = F32_MAX;
    var mx = -F32_MAX;
    for (var k = lid; k < NORM_PER_GROUP; k += WG) {
        let j = start + k;
        if (j < len) {
            let v = data[j];
            mn = min(mn, v);
            mx = max(mx, v);
        }
    }
    smn[lid] = mn;
    smx[lid] = mx;
    tree_reduce(lid);
    if (lid == 0u) {
        partial[wid.x] = vec2<f32>(smn[0], smx[0]);
    }
}

// One workgroup; P.partials = number of partial results.
@compute @workgroup_size(NORM_WORKGROUP)
fn reduce_final(@builtin(local_invocation_id) lid3: vec3<u32>) {
    let lid = lid3.x;
    var mn = F32_MAX;
    var mx = -F32_MAX;
    for (var k = lid; k < P.partials; k += WG) {
        let p = partial[k];
        mn = min(mn, p.x);
        mx = max(mx, p.y);
    }
    smn[lid] = mn;
    smx[lid] = mx;
    tree_reduce(lid);
    if (lid == 0u) {
        minmax[0] = vec2<f32>(smn[0], smx[0]);
    }
}

@compute @workgroup_size(NORM_WORKGROUP)
fn apply(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let j = gid.x + gid.y * nwg.x * WG;
    if (j >= G.n * G.n) {
        return;
    }
    let mm = minmax[0];
    let span = mm.y - mm.x;
    if (span > 0.0f && span <= F32_MAX) {
        let inv = 1.0f / span;
        data[j] = (data[j] - mm.x) * inv;
    } else {
        data[j] = 0.5f;
    }
}
