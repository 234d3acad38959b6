// Mirrors island_core::drainage::{depression_fill, flat_routing} on a grid of P.n samples per
// side (the full grid for the drainage, the evolution grid for the erosion). Both are defined
// without any visiting order, so these parallel relaxations give the CPU's exact bits:
// * depression_fill: filled(c) = max(h(c), min over the neighbours of filled(n)), outlets (sea:
//   at or below P.sea; the map border) fixed, relaxed from +∞ down to the greatest solution
//   (Planchon & Darboux 2001). Heights are compared as order-preserving u32 keys (the CPU's
//   Priority-Flood key) so that min applies an update; sea samples count as the lowest
//   key. Values are only ever copied (min / max), never computed: bit-identical.
// * flat_routing: integer breadth-first distances on the flats of the filled surface, `lo`
//   (steps to the flat's way out) and `hi` (steps from higher ground), relaxed as shortest
//   paths: the unique fixed point, whatever the order. Then each flat sample drains to its
//   equal-height neighbour of least 2·lo − hi (non-flat neighbours first, ties to the smallest
//   neighbour index).
// The relaxation passes iterate inside their workgroup's RELAX_TILE² tile (four samples per
// invocation, kept in workgroup memory with a one-sample halo read at the start) until an
// iteration changes nothing there, then write the tile to the other buffer of a pair (Jacobi
// between tiles, so a dispatch's result, and the number of dispatches, never depend on the
// order the hardware runs the tiles in), so a dispatch carries a value across the tile; tiles
// with nothing left to change (no flat sample; every land sample filled to its own height)
// skip the iterations and copy their tile. `changed[0]` counts the samples a dispatch changed
// (0: converged), `changed[1]` is 1 + the last dispatch (`P.iter`) that changed one.
@group(0) @binding(1) var<uniform> P: Depression;
@group(0) @binding(2) var<storage, read> h: array<f32>;
@group(0) @binding(3) var<storage, read_write> fill_key: array<u32>;
@group(0) @binding(4) var<storage, read_write> filled: array<f32>;
@group(0) @binding(5) var<storage, read_write> class_of: array<u32>;
// lo at 2·i, hi at 2·i + 1.
@group(0) @binding(6) var<storage, read_write> dist: array<u32>;
@group(0) @binding(7) var<storage, read_write> flat: array<u32>;
@group(0) @binding(8) var<storage, read_write> changed: array<atomic<u32>>;
// What a relaxation dispatch writes: the next dispatch's fill_key / dist (the host swaps the
// two buffers every dispatch), so every tile of a dispatch reads its halo as the previous
// dispatch left it, whatever the order the tiles run in.
@group(0) @binding(9) var<storage, read_write> fill_key_out: array<u32>;
@group(0) @binding(10) var<storage, read_write> dist_out: array<u32>;

// island_core::drainage::NONE; also "not reached" for distances and +∞ for fill keys.
const DEP_NONE: u32 = 0xffffffffu;
const CLASS_FLAT: u32 = 1u;
const CLASS_DRAIN: u32 = 2u;
const CLASS_OUTLET: u32 = 3u;
// RELAX_TILE (rust/gpu/src/uniforms.rs): side of the relaxation passes' tiles, GRID_TILE²
// invocations, four samples each.
// Most local iterations per dispatch of the relaxation passes: a value crosses the tile
// (RELAX_TILE² samples) in fewer.
const FILL_LOCAL_ITERS: u32 = RELAX_TILE * RELAX_TILE + 1u;
// Side of a tile with its halo.
const HALO_SIDE: u32 = RELAX_TILE + 2u;
const HALO_LEN: u32 = HALO_SIDE * HALO_SIDE;

var<workgroup> t_key: array<u32, HALO_LEN>;
var<workgroup> t_lo: array<u32, HALO_LEN>;
var<workgroup> t_hi: array<u32, HALO_LEN>;
var<workgroup> t_f: array<f32, HALO_LEN>;
// Samples of the tile that may still change; the tile skips its iterations when there are
// none (the same answer for the whole workgroup, so the barriers stay uniform).
var<workgroup> t_open: atomic<u32>;
// Samples a local iteration changed, alternately in [0] and [1] (iteration k counts in
// [k % 2]; the other one is cleared meanwhile): the tile iterates until one changes nothing.
var<workgroup> t_moved: array<atomic<u32>, 2>;

// After local iteration `it`'s update (`moved`: whether this invocation changed its sample):
// whether the tile iterates again. Clears the counter of the next iteration first (nobody
// uses it now: the last reads of it were before this iteration's first barrier).
fn local_step_moved(it: u32, moved: bool, first: bool) -> bool {
    if (first) {
        atomicStore(&t_moved[(it + 1u) % 2u], 0u);
    }
    if (moved) {
        atomicAdd(&t_moved[it % 2u], 1u);
    }
    return workgroupUniformLoad(&t_moved[it % 2u]) != 0u;
}

// Outlet: sea (at or below P.sea, or NaN) or the map border.
fn dep_outlet(i: u32) -> bool {
    let x = i % P.n;
    let z = i / P.n;
    return !(h[i] > P.sea) || x == 0u || z == 0u || x + 1u == P.n || z + 1u == P.n;
}

// Order-preserving key of a height (island_core::drainage's flood key, high half).
fn order_key(v: f32) -> u32 {
    let b = bitcast<u32>(v);
    if ((b & 0x80000000u) != 0u) {
        return ~b;
    }
    return b | 0x80000000u;
}

fn from_key(k: u32) -> f32 {
    if ((k & 0x80000000u) != 0u) {
        return bitcast<f32>(k & 0x7fffffffu);
    }
    return bitcast<f32>(~k);
}

// Neighbour k (0..9, 4 the sample itself) of sample (x, z), -1 off the grid.
fn dep_neighbour(x: u32, z: u32, k: u32) -> i32 {
    let a = i32(x) + i32(k % 3u) - 1;
    let b = i32(z) + i32(k / 3u) - 1;
    if (a < 0 || b < 0 || a >= i32(P.n) || b >= i32(P.n)) {
        return -1;
    }
    return b * i32(P.n) + a;
}

// Grid index of halo-tile entry t of workgroup `wid`, -1 off the grid.
fn halo_index(wid: vec3<u32>, t: u32) -> i32 {
    let x = i32(wid.x * RELAX_TILE + t % HALO_SIDE) - 1;
    let z = i32(wid.y * RELAX_TILE + t / HALO_SIDE) - 1;
    if (x < 0 || z < 0 || x >= i32(P.n) || z >= i32(P.n)) {
        return -1;
    }
    return z * i32(P.n) + x;
}

// Tile-local coordinates of the invocation's sample s (0..4) in a relaxation tile.
fn relax_local(lid: vec3<u32>, s: u32) -> vec2<u32> {
    return lid.xy + GRID_TILE * vec2<u32>(s % 2u, s / 2u);
}

// Offset of neighbour k inside the halo tile.
fn halo_offset(k: u32) -> i32 {
    return (i32(k / 3u) - 1) * i32(HALO_SIDE) + i32(k % 3u) - 1;
}

// Distance + 1, saturating at "not reached".
fn step_dist(d: u32) -> u32 {
    return select(d + 1u, DEP_NONE, d == DEP_NONE);
}

// depression_fill, start: outlets at their height (sea lowest), the rest +∞ (the first
// relaxation dispatch reads these instead of fill_key).
fn fill_start(i: u32) -> u32 {
    if (!(h[i] > P.sea)) {
        return 0u;
    } else if (dep_outlet(i)) {
        return order_key(h[i]);
    }
    return DEP_NONE;
}

// The filled surface at sample i once fill_key holds the result (fill_decode's value).
fn surface(i: u32) -> f32 {
    if (!(h[i] > P.sea)) {
        return h[i];
    }
    return from_key(fill_key[i]);
}

// depression_fill, one relaxation dispatch: fill_key → fill_key_out.
@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn fill_relax(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    for (var t = lid.y * GRID_TILE + lid.x; t < HALO_LEN; t += GRID_TILE * GRID_TILE) {
        let j = halo_index(wid, t);
        var k = DEP_NONE;
        if (j >= 0 && P.iter == 0u) {
            k = fill_start(u32(j));
        } else if (j >= 0) {
            k = fill_key[u32(j)];
        }
        t_key[t] = k;
    }
    workgroupBarrier();
    var me: array<i32, 4>;
    var idx: array<u32, 4>;
    var on_grid: array<bool, 4>;
    var live: array<bool, 4>;
    var hk: array<u32, 4>;
    var start: array<u32, 4>;
    for (var s = 0u; s < 4u; s++) {
        let l = relax_local(lid, s);
        let g = wid.xy * RELAX_TILE + l;
        me[s] = i32((l.y + 1u) * HALO_SIDE + l.x + 1u);
        idx[s] = g.y * P.n + g.x;
        live[s] = false;
        on_grid[s] = g.x < P.n && g.y < P.n;
        if (on_grid[s]) {
            live[s] = !dep_outlet(idx[s]);
            hk[s] = order_key(h[idx[s]]);
        }
        start[s] = t_key[me[s]];
        // A sample at its own height (filled = h) is final.
        if (live[s] && start[s] != hk[s]) {
            atomicAdd(&t_open, 1u);
        }
    }
    // A tile with nothing open copies itself (the loop does not run).
    let iters = select(FILL_LOCAL_ITERS, 0u, workgroupUniformLoad(&t_open) == 0u);
    for (var it = 0u; it < iters; it++) {
        var m: array<u32, 4>;
        for (var s = 0u; s < 4u; s++) {
            m[s] = DEP_NONE;
            if (live[s]) {
                for (var k = 0u; k < 9u; k++) {
                    if (k != 4u) {
                        m[s] = min(m[s], t_key[me[s] + halo_offset(k)]);
                    }
                }
            }
        }
        workgroupBarrier();
        var moved = false;
        for (var s = 0u; s < 4u; s++) {
            if (live[s]) {
                let v = min(t_key[me[s]], max(hk[s], m[s]));
                moved = moved || v != t_key[me[s]];
                t_key[me[s]] = v;
            }
        }
        if (!local_step_moved(it, moved, all(lid.xy == vec2<u32>(0u)))) {
            break;
        }
    }
    for (var s = 0u; s < 4u; s++) {
        let v = t_key[me[s]];
        if (on_grid[s]) {
            fill_key_out[idx[s]] = v;
        }
        if (live[s] && v < start[s]) {
            atomicAdd(&changed[0], 1u);
            atomicMax(&changed[1], P.iter + 1u);
        }
    }
}

// depression_fill, end: the filled heights (sea samples keep theirs, NaN included).
@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn fill_decode(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.n || gid.y >= P.n) {
        return;
    }
    let i = gid.y * P.n + gid.x;
    filled[i] = surface(i);
}

// flat_routing, start: the filled surface decoded from fill_key (what fill_decode writes), the
// class of each sample, the receivers of samples that spill into an outlet at their height,
// and the distances' seeds (lo 0 on non-flat samples; hi 1 on flat samples next to higher
// ground).
@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn flat_init(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.n || gid.y >= P.n) {
        return;
    }
    let i = gid.y * P.n + gid.x;
    let hc = surface(i);
    filled[i] = hc;
    flat[i] = DEP_NONE;
    if (dep_outlet(i)) {
        class_of[i] = CLASS_OUTLET;
        dist[2u * i] = DEP_NONE;
        dist[2u * i + 1u] = DEP_NONE;
        return;
    }
    var lower = false;
    var higher = false;
    var spill = DEP_NONE;
    for (var k = 0u; k < 9u; k++) {
        if (k == 4u) {
            continue;
        }
        let jj = dep_neighbour(gid.x, gid.y, k);
        if (jj < 0) {
            continue;
        }
        let j = u32(jj);
        let hj = surface(j);
        lower = lower || hj < hc;
        higher = higher || hj > hc;
        if (spill == DEP_NONE && !(hj > hc) && dep_outlet(j)) {
            spill = j;
        }
    }
    if (lower || spill != DEP_NONE) {
        class_of[i] = CLASS_DRAIN;
        if (!lower) {
            flat[i] = spill;
        }
        dist[2u * i] = 0u;
        dist[2u * i + 1u] = DEP_NONE;
    } else {
        class_of[i] = CLASS_FLAT;
        dist[2u * i] = DEP_NONE;
        dist[2u * i + 1u] = select(DEP_NONE, 1u, higher);
    }
}

// flat_routing, one relaxation dispatch of both distances, dist → dist_out: on flat samples,
// d ← min(d, 1 + min over the equal-height neighbours).
@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn flat_relax(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    for (var t = lid.y * GRID_TILE + lid.x; t < HALO_LEN; t += GRID_TILE * GRID_TILE) {
        let j = halo_index(wid, t);
        var lo = DEP_NONE;
        var hi = DEP_NONE;
        var f = 0.0f;
        if (j >= 0) {
            lo = dist[2u * u32(j)];
            hi = dist[2u * u32(j) + 1u];
            f = filled[u32(j)];
        }
        t_lo[t] = lo;
        t_hi[t] = hi;
        t_f[t] = f;
    }
    workgroupBarrier();
    var me: array<i32, 4>;
    var idx: array<u32, 4>;
    var on_grid: array<bool, 4>;
    var live: array<bool, 4>;
    var lo0: array<u32, 4>;
    var hi0: array<u32, 4>;
    var hc: array<f32, 4>;
    for (var s = 0u; s < 4u; s++) {
        let l = relax_local(lid, s);
        let g = wid.xy * RELAX_TILE + l;
        me[s] = i32((l.y + 1u) * HALO_SIDE + l.x + 1u);
        idx[s] = g.y * P.n + g.x;
        live[s] = false;
        on_grid[s] = g.x < P.n && g.y < P.n;
        if (on_grid[s]) {
            live[s] = class_of[idx[s]] == CLASS_FLAT;
        }
        lo0[s] = t_lo[me[s]];
        hi0[s] = t_hi[me[s]];
        hc[s] = t_f[me[s]];
        if (live[s]) {
            atomicAdd(&t_open, 1u);
        }
    }
    // A tile with nothing open copies itself (the loop does not run). Off-grid halo entries
    // are "not reached": they never lower a distance.
    let iters = select(FILL_LOCAL_ITERS, 0u, workgroupUniformLoad(&t_open) == 0u);
    for (var it = 0u; it < iters; it++) {
        var ml: array<u32, 4>;
        var mh: array<u32, 4>;
        for (var s = 0u; s < 4u; s++) {
            ml[s] = DEP_NONE;
            mh[s] = DEP_NONE;
            if (live[s]) {
                for (var k = 0u; k < 9u; k++) {
                    if (k == 4u) {
                        continue;
                    }
                    let t = me[s] + halo_offset(k);
                    if (t_f[t] == hc[s]) {
                        ml[s] = min(ml[s], t_lo[t]);
                        mh[s] = min(mh[s], t_hi[t]);
                    }
                }
            }
        }
        workgroupBarrier();
        var moved = false;
        for (var s = 0u; s < 4u; s++) {
            if (live[s]) {
                let lo = min(t_lo[me[s]], step_dist(ml[s]));
                let hi = min(t_hi[me[s]], step_dist(mh[s]));
                moved = moved || lo != t_lo[me[s]] || hi != t_hi[me[s]];
                t_lo[me[s]] = lo;
                t_hi[me[s]] = hi;
            }
        }
        if (!local_step_moved(it, moved, all(lid.xy == vec2<u32>(0u)))) {
            break;
        }
    }
    for (var s = 0u; s < 4u; s++) {
        if (on_grid[s]) {
            dist_out[2u * idx[s]] = t_lo[me[s]];
            dist_out[2u * idx[s] + 1u] = t_hi[me[s]];
        }
        if (live[s] && (t_lo[me[s]] < lo0[s] || t_hi[me[s]] < hi0[s])) {
            atomicAdd(&changed[0], 1u);
            atomicMax(&changed[1], P.iter + 1u);
        }
    }
}

// 2·lo − hi of a flat sample ("not reached" counts as 0, as on the CPU).
fn flat_key(i: u32) -> i32 {
    let lo = dist[2u * i];
    let hi = dist[2u * i + 1u];
    return 2 * i32(select(lo, 0u, lo == DEP_NONE)) - i32(select(hi, 0u, hi == DEP_NONE));
}

// flat_routing, end: each flat sample's receiver.
@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn flat_receivers(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= P.n || gid.y >= P.n) {
        return;
    }
    let i = gid.y * P.n + gid.x;
    if (class_of[i] != CLASS_FLAT) {
        return;
    }
    let hc = filled[i];
    var best = DEP_NONE;
    var best_k = flat_key(i);
    for (var k = 0u; k < 9u; k++) {
        if (k == 4u) {
            continue;
        }
        let jj = dep_neighbour(gid.x, gid.y, k);
        if (jj < 0) {
            continue;
        }
        let j = u32(jj);
        if (filled[j] != hc) {
            continue;
        }
        var kj: i32;
        let c = class_of[j];
        if (c == CLASS_FLAT) {
            kj = flat_key(j);
        } else if (c == CLASS_DRAIN) {
            kj = -2147483647 - 1;
        } else {
            continue;
        }
        if (kj < best_k) {
            best_k = kj;
            best = j;
        }
    }
    flat[i] = best;
}
