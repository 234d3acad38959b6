// Mirrors island_core::drainage, one entry point (or a few, for the relaxations) per core
// function of the same name, on the full grid (G.n samples per side):
// * receivers: steepest descent over the filled surface (D8, ties to the smallest neighbour
//   index); samples on filled flats take their receiver from flat_routing (`depression.wgsl`).
// * accumulate (island_core::drainage::accumulate_counts): upstream sample counts. Every
//   sample's word in `acc` holds (count << ACC_SHIFT) | donors still to come. accumulate_init
//   counts the donors; accumulate starts a walk at every sample without donors and carries its
//   count down the receivers with one atomicAdd per step, which adds the count and takes one
//   donor off in the same read-modify-write: the walk that takes the last donor off reads the
//   receiver's finished count and walks on, the others stop. One dispatch, every sample added
//   once, no thread ever waits for another; integer sums do not depend on the order of the
//   adds, so the counts are exact. accumulate_area: area = f32(count) · cell_area, one
//   rounding (the core's `areas`).
// * lake_labels: the submerged samples (filled > heights), 8-connected, labelled with the
//   smallest sample index of their component, in three dispatches: lake_init (every submerged
//   sample its own tree), lake_union (a lock-free union-find over the neighbour pairs) and
//   lake_flatten (each sample to its root). A root is only ever linked below a smaller index,
//   so each component's root is its smallest index: exact, whatever the interleaving.
// * lakes_of: per component, at its label: samples (atomicAdd), lowest height key (atomicMin),
//   outlet (atomicMin of the receivers outside it) in lake_stats; the smallest index at the
//   lowest height in lake_deepest; lake_list appends the components that are lakes to `lakes`
//   in no fixed order (the host sorts them by label: the core's numbering). Counts, mins and
//   copies only: exact.
@group(0) @binding(2) var<storage, read> filled: array<f32>;
@group(0) @binding(3) var<storage, read> flat: array<u32>;
@group(0) @binding(4) var<storage, read> heights: array<f32>;
@group(0) @binding(5) var<storage, read_write> rcv: array<u32>;
@group(0) @binding(6) var<storage, read_write> acc: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read_write> area: array<f32>;
@group(0) @binding(8) var<storage, read_write> label: array<atomic<u32>>;
@group(0) @binding(9) var<storage, read_write> lake_samples: array<atomic<u32>>;
@group(0) @binding(10) var<storage, read_write> lake_low: array<atomic<u32>>;
@group(0) @binding(11) var<storage, read_write> lake_deep: array<atomic<u32>>;
@group(0) @binding(12) var<storage, read_write> lake_outlet: array<atomic<u32>>;
// [0]: lakes appended; then DRAIN_LAKE_WORDS words per lake (see lake_list).
@group(0) @binding(13) var<storage, read_write> lakes: array<atomic<u32>>;
// Lake of each sample (its label where that component is a lake), DRAIN_NONE elsewhere.
@group(0) @binding(15) var<storage, read_write> lake_of: array<u32>;
@group(0) @binding(1) var<uniform> P: Drainage;

// island_core::drainage::NONE.
const DRAIN_NONE: u32 = 0xffffffffu;
// Bits of an `acc` word holding the donors still to come (at most 8).
const ACC_SHIFT: u32 = 4u;
const ACC_PENDING: u32 = 15u;

// Neighbour m (0..9, 4 the sample itself) of (x, z), -1 off the grid.
fn drain_neighbour(x: u32, z: u32, m: u32) -> i32 {
    let n = G.n;
    let a = i32(x) + i32(m % 3u) - 1;
    let b = i32(z) + i32(m / 3u) - 1;
    if (a < 0 || b < 0 || a >= i32(n) || b >= i32(n)) {
        return -1;
    }
    return b * i32(n) + a;
}

// Order-preserving key of a height (island_core::drainage's flood key, high half).
fn height_key(v: f32) -> u32 {
    let b = bitcast<u32>(v);
    if ((b & 0x80000000u) != 0u) {
        return ~b;
    }
    return b | 0x80000000u;
}

fn key_height(k: u32) -> f32 {
    if ((k & 0x80000000u) != 0u) {
        return bitcast<f32>(k & 0x7fffffffu);
    }
    return bitcast<f32>(~k);
}

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

// Donors of sample i at (x, z): neighbours whose receiver it is.
fn donors(i: u32, x: u32, z: u32) -> u32 {
    var k = 0u;
    for (var m = 0u; m < 9u; m++) {
        let j = drain_neighbour(x, z, m);
        if (m != 4u && j >= 0 && rcv[u32(j)] == i) {
            k++;
        }
    }
    return k;
}

// accumulate, start: a count of 1 and the donors to come.
@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn accumulate_init(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    let iu = u32(i);
    atomicStore(&acc[iu], (1u << ACC_SHIFT) | donors(iu, gid.x, gid.y));
}

// accumulate: the walks down the receivers from every sample without donors.
@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn accumulate(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    var c = u32(i);
    // From the donors, not from `acc`: other walks change `acc[c]` meanwhile.
    if (donors(c, gid.x, gid.y) != 0u) {
        return;
    }
    var count = 1u;
    // A walk is at most as long as the grid (receivers have no cycles).
    for (var step = 0u; step < G.n * G.n; step++) {
        let r = rcv[c];
        if (r == c) {
            break;
        }
        let add = (count << ACC_SHIFT) - 1u;
        let now = atomicAdd(&acc[r], add) + add;
        if ((now & ACC_PENDING) != 0u) {
            break;
        }
        c = r;
        count = now >> ACC_SHIFT;
    }
}

// island_core::drainage::areas: count · cell_area.
@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn accumulate_area(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    let iu = u32(i);
    area[iu] = f32(atomicLoad(&acc[iu]) >> ACC_SHIFT) * P.cell_area;
}

// island_core::drainage's `submerged`: under the filled surface.
fn submerged(i: u32) -> bool {
    return filled[i] > heights[i];
}

// lake_labels, start: own index on submerged samples; the lake statistics cleared.
@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn lake_init(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    let iu = u32(i);
    atomicStore(&label[iu], select(DRAIN_NONE, iu, submerged(iu)));
    atomicStore(&lake_samples[iu], 0u);
    atomicStore(&lake_low[iu], DRAIN_NONE);
    atomicStore(&lake_deep[iu], DRAIN_NONE);
    atomicStore(&lake_outlet[iu], DRAIN_NONE);
}

// Root of sample c's tree (parents only ever point to smaller indices), halving the path.
fn lake_find(x: u32) -> u32 {
    var c = x;
    // Each step goes to a smaller index: at most x steps.
    for (var step = 0u; step <= x; step++) {
        let p = atomicLoad(&label[c]);
        if (p == c) {
            break;
        }
        let gp = atomicLoad(&label[p]);
        if (gp < p) {
            atomicMin(&label[c], gp);
        }
        c = p;
    }
    return c;
}

// Join the trees of a and b: the larger root is linked below the smaller one. atomicMin on a
// root that another invocation linked meanwhile may replace its link; the loop then joins the
// replaced parent too, so no connection is lost.
fn lake_unite(a: u32, b: u32) {
    var ra = lake_find(a);
    var rb = lake_find(b);
    // Each failed link moves `ra` to a smaller index.
    for (var step = 0u; step <= max(a, b); step++) {
        if (ra == rb) {
            return;
        }
        if (ra < rb) {
            let t = ra;
            ra = rb;
            rb = t;
        }
        let old = atomicMin(&label[ra], rb);
        if (old == ra) {
            return;
        }
        ra = lake_find(old);
        rb = lake_find(rb);
    }
}

// lake_labels: join every submerged sample with its submerged neighbours before it (west,
// north-west, north, north-east). Lock-free union-find (atomic min-linking, as in Playne &
// Hawick 2018's GPU labelling): the root of a component ends at its smallest index (roots
// are only ever linked below smaller indices), whatever the interleaving.
@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn lake_union(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    let iu = u32(i);
    if (!submerged(iu)) {
        return;
    }
    for (var k = 0u; k < 4u; k++) {
        let j = drain_neighbour(gid.x, gid.y, k);
        if (j >= 0 && submerged(u32(j))) {
            lake_unite(iu, u32(j));
        }
    }
}

// lake_labels, end: every submerged sample labelled with its root.
@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn lake_flatten(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    let iu = u32(i);
    if (submerged(iu)) {
        atomicStore(&label[iu], lake_find(iu));
    }
}

// lakes_of, per component at its label: samples, lowest height, outlet.
@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn lake_stats(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    let iu = u32(i);
    let l = atomicLoad(&label[iu]);
    if (l == DRAIN_NONE) {
        return;
    }
    atomicAdd(&lake_samples[l], 1u);
    atomicMin(&lake_low[l], height_key(heights[iu]));
    let r = rcv[iu];
    if (atomicLoad(&label[r]) != l) {
        atomicMin(&lake_outlet[l], r);
    }
}

// lakes_of: the smallest index at the lowest height of each component.
@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn lake_deepest(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    let iu = u32(i);
    let l = atomicLoad(&label[iu]);
    if (l != DRAIN_NONE && height_key(heights[iu]) == atomicLoad(&lake_low[l])) {
        atomicMin(&lake_deep[l], iu);
    }
}

// Whether the component labelled `l` is a lake: deep and large enough.
fn is_lake(l: u32) -> bool {
    let depth = filled[l] - key_height(atomicLoad(&lake_low[l]));
    let samples = atomicLoad(&lake_samples[l]);
    return depth >= P.lake_min_depth && f32(samples) * P.cell_area >= P.lake_min_area;
}

// lakes_of: append every component that is a lake (deep and large enough) to `lakes`:
// label, samples, deepest, outlet, level (f32 bits), depth (f32 bits). At most P.max_lakes
// are written; the count goes on (the host then knows the list is incomplete).
@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn lake_list(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    let iu = u32(i);
    if (atomicLoad(&label[iu]) != iu) {
        return;
    }
    if (!is_lake(iu)) {
        return;
    }
    let level = filled[iu];
    let depth = level - key_height(atomicLoad(&lake_low[iu]));
    let samples = atomicLoad(&lake_samples[iu]);
    let k = atomicAdd(&lakes[0], 1u);
    if (k >= P.max_lakes) {
        return;
    }
    let o = 1u + k * DRAIN_LAKE_WORDS;
    atomicStore(&lakes[o], iu);
    atomicStore(&lakes[o + 1u], samples);
    atomicStore(&lakes[o + 2u], atomicLoad(&lake_deep[iu]));
    atomicStore(&lakes[o + 3u], atomicLoad(&lake_outlet[iu]));
    atomicStore(&lakes[o + 4u], bitcast<u32>(level));
    atomicStore(&lakes[o + 5u], bitcast<u32>(depth));
}

// lakes_of: the lake of every sample (`lake_of`, by label; the host numbers them).
@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn lake_mark(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    let iu = u32(i);
    let l = atomicLoad(&label[iu]);
    var o = DRAIN_NONE;
    if (l != DRAIN_NONE && is_lake(l)) {
        o = l;
    }
    lake_of[iu] = o;
}

// The receivers compacted for the read-back, one byte per sample (see packed_word): the
// direction of the receiver, (dz + 1)·3 + dx + 1 (4: the sample itself), as the host decodes
// them.
@group(0) @binding(16) var<storage, read_write> rcv_codes: array<u32>;

@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn pack_receivers(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let ww = packed_word(gid, groups);
    if (ww < 0) {
        return;
    }
    let w = u32(ww);
    let n = G.n;
    let nn = n * n;
    var word = 0u;
    for (var k = 0u; k < 4u; k++) {
        let i = 4u * w + k;
        if (i < nn) {
            let r = rcv[i];
            let dx = i32(r % n) - i32(i % n) + 1;
            let dz = i32(r / n) - i32(i / n) + 1;
            word |= (u32(dz * 3 + dx) & 0xffu) << (8u * k);
        }
    }
    rcv_codes[w] = word;
}

// The pipeline's drainage read-back, compact (the host rebuilds from these what its flow
// order, river samples, lake numbering and water map read; see `DrainageRead::Lean` in
// rust/gpu/src/stages/drainage.rs): every sample with a drainage area of at least
// P.river_area (the river candidates; a receiver's area is never smaller than its donor's, so
// their receivers are in the list too) or in a lake, appended to `samples` after its count
// word in no order (the host sorts them by index), DRAIN_SAMPLE_WORDS words each: index,
// area (f32 bits), receiver, lake (label or DRAIN_NONE), filled height (f32 bits). At most
// P.max_samples are written; the count goes on.
@group(0) @binding(17) var<storage, read_write> samples: array<atomic<u32>>;

@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn sample_list(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    let iu = u32(i);
    let lake = lake_of[iu];
    if (!(area[iu] >= P.river_area) && lake == DRAIN_NONE) {
        return;
    }
    let k = atomicAdd(&samples[0], 1u);
    if (k >= P.max_samples) {
        return;
    }
    let o = 1u + k * DRAIN_SAMPLE_WORDS;
    atomicStore(&samples[o], iu);
    atomicStore(&samples[o + 1u], bitcast<u32>(area[iu]));
    atomicStore(&samples[o + 2u], rcv[iu]);
    atomicStore(&samples[o + 3u], lake);
    atomicStore(&samples[o + 4u], bitcast<u32>(filled[iu]));
}

// The river carving's changes for the read-back: every sample whose height (`heights`, carved)
// differs from `before` (the heights before the carving), appended to `changes` after its
// count word in no order: index, height (f32 bits). At most P.max_samples are written; the
// count goes on.
@group(0) @binding(18) var<storage, read> before: array<f32>;
@group(0) @binding(19) var<storage, read_write> changes: array<atomic<u32>>;

@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn carve_changes(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    let iu = u32(i);
    let v = bitcast<u32>(heights[iu]);
    if (v == bitcast<u32>(before[iu])) {
        return;
    }
    let k = atomicAdd(&changes[0], 1u);
    if (k >= P.max_samples) {
        return;
    }
    atomicStore(&changes[1u + 2u * k], iu);
    atomicStore(&changes[2u + 2u * k], v);
}
