// Mirrors island_core::erosion: one entry point per CPU kernel of the same name (resample,
// flow_receivers, flow_accumulation, stream_power, deposition, thermal, upsample_delta); the
// deposition also sums its volumes over the steps (`sed_total`) on the GPU.
// The evolution grid has P.nc samples per side; G.n is the full-resolution grid (resample,
// upsample_delta). Each step's filled surface and flat receivers come from
// `depression.wgsl` (depression_fill, flat_routing).
//
// The sequential kernels (receivers first / upstream first over the flood order) have parallel
// formulations with the same mathematical result:
// * flow_accumulation, deposition: donor-first iteration. A sample is processed once all of
//   its donors (neighbours whose receiver it is) were (`flags` holds 1 + the processing
//   dispatch's `P.iter`, 0 before); each workgroup iterates inside its DONOR_TILE² tile in
//   workgroup memory, so a dispatch carries a chain across a tile (see "the donor-first
//   iteration, tiled" below); the last flag counts the samples still waiting.
// * stream_power: the step `h ← (h + F·h_r) / (1 + F)` where `h > h_r`, else `h`, is
//   `φ(x) = min(c, a + b·x)` of the receiver's new height x (c = h, a = h / (1 + F),
//   b = F / (1 + F) ≥ 0); such functions compose in closed form, so pointer jumping
//   (stream_power_jump, ⌈log2(nc²)⌉ rounds) gives every sample the composition down to its
//   outlet, a constant.
@group(0) @binding(1) var<uniform> P: Erosion;
@group(0) @binding(2) var<storage, read> heights_in: array<f32>;
@group(0) @binding(3) var<storage, read_write> coarse: array<f32>;
@group(0) @binding(4) var<storage, read> filled: array<f32>;
@group(0) @binding(5) var<storage, read> flat: array<u32>;
@group(0) @binding(6) var<storage, read_write> h: array<f32>;
@group(0) @binding(7) var<storage, read_write> rcv: array<u32>;
@group(0) @binding(8) var<storage, read_write> area: array<f32>;
@group(0) @binding(9) var<storage, read_write> flags: array<atomic<u32>>;
@group(0) @binding(10) var<storage, read> pow_count: array<f32>;
@group(0) @binding(11) var<storage, read_write> state_a: array<vec4<f32>>;
@group(0) @binding(12) var<storage, read_write> state_b: array<vec4<f32>>;
@group(0) @binding(13) var<storage, read> old: array<f32>;
@group(0) @binding(14) var<storage, read_write> sed: array<vec4<f32>>;
@group(0) @binding(15) var<storage, read> src: array<f32>;
@group(0) @binding(16) var<storage, read> orig: array<f32>;
@group(0) @binding(17) var<storage, read_write> heights: array<f32>;
@group(0) @binding(18) var<storage, read_write> sed_total: array<vec4<f32>>;
// Per pointer-jumping round: 1 when some composition was not constant after it.
@group(0) @binding(19) var<storage, read_write> jump_left: array<atomic<u32>>;

// `c` of an outlet's constant function: larger than any height, small enough that
// `b · EROSION_BIG` (b < 1) stays finite.
const EROSION_BIG: f32 = 1.0e30f;

// island_core::drainage::is_sea (at or below sea level, or NaN).
fn is_sea(v: f32, sea: f32) -> bool {
    return !(v > sea);
}

// Sample index on the evolution grid, -1 outside.
fn coarse_index(gid: vec3<u32>) -> i32 {
    if (gid.x >= P.nc || gid.y >= P.nc) {
        return -1;
    }
    return i32(gid.y * P.nc + gid.x);
}

// Neighbour k (island_core::drainage::NEIGHBOURS order) of (x, z): index, or -1 off the grid.
fn neighbour(x: u32, z: u32, k: u32, n: u32) -> i32 {
    let dx = i32(k % 3u) - 1;
    let dz = i32(k / 3u) - 1;
    let a = i32(x) + dx;
    let b = i32(z) + dz;
    if (a < 0 || b < 0 || a >= i32(n) || b >= i32(n)) {
        return -1;
    }
    return b * i32(n) + a;
}

// Distance in cells of neighbour k (k = 0..8, the centre 4 skipped by the callers).
fn neighbour_dist(k: u32) -> f32 {
    if (k == 1u || k == 3u || k == 5u || k == 7u) {
        return 1.0f;
    }
    return SQRT_2;
}

// island_core::erosion::resample (bilinear), full grid (G.n) → evolution grid (P.nc);
// P.scale = (n − 1) / (nc − 1).
@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn resample(@builtin(global_invocation_id) gid: vec3<u32>) {
    let o = coarse_index(gid);
    if (o < 0) {
        return;
    }
    let n = G.n;
    let u = mul_r(f32(gid.x), P.scale);
    let v = mul_r(f32(gid.y), P.scale);
    let x0 = min(u32(floor(u)), n - 2u);
    let z0 = min(u32(floor(v)), n - 2u);
    let fx = u - f32(x0);
    let fz = v - f32(z0);
    let i = z0 * n + x0;
    let a = heights_in[i] + mul_r(heights_in[i + 1u] - heights_in[i], fx);
    let b = heights_in[i + n] + mul_r(heights_in[i + n + 1u] - heights_in[i + n], fx);
    coarse[o] = a + mul_r(b - a, fz);
}

// island_core::erosion::flow_receivers: a downhill neighbour drawn with probability
// proportional to its slope on the filled surface (P.seed is the step seed).
@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn flow_receivers(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = coarse_index(gid);
    if (i < 0) {
        return;
    }
    let n = P.nc;
    let x = gid.x;
    let z = gid.y;
    let iu = u32(i);
    if (is_sea(h[iu], P.sea) || x == 0u || z == 0u || x + 1u == n || z + 1u == n) {
        rcv[iu] = iu;
        return;
    }
    let hi = filled[iu];
    var cand_j: array<u32, 8>;
    var cand_t: array<f32, 8>;
    var k = 0u;
    var total = 0.0f;
    for (var m = 0u; m < 9u; m++) {
        if (m == 4u) {
            continue;
        }
        let j = u32(neighbour(x, z, m, n));
        let s = (hi - filled[j]) / neighbour_dist(m);
        if (s > 0.0f) {
            total += s;
            cand_j[k] = j;
            cand_t[k] = total;
            k++;
        }
    }
    if (k == 0u) {
        rcv[iu] = flat[iu];
        return;
    }
    let pick = unit(hash_u32(iu ^ P.seed)) * total;
    var r = cand_j[k - 1u];
    for (var m = 0u; m < k; m++) {
        if (pick < cand_t[m]) {
            r = cand_j[m];
            break;
        }
    }
    rcv[iu] = r;
}

// Whether donor j was processed before dispatch P.iter.
fn donor_ready(j: u32) -> bool {
    let f = atomicLoad(&flags[j]);
    return f != 0u && f <= P.iter;
}

// ---- the donor-first iteration, tiled --------------------------------------------------------
// flow_accumulation and deposition: a workgroup owns a DONOR_TILE² tile (DONOR_PER² samples
// per invocation) and iterates inside it, in workgroup memory, until nothing in the tile can
// progress: a sample is processed once each of its donors is either done in the tile (this
// dispatch or earlier) or outside the tile and done by an earlier dispatch. So one dispatch
// carries a chain across a whole tile, and a chain needs one more dispatch only where it
// crosses into another tile. Every sample still sums its donors in neighbour order from their
// final values: which dispatch or local step processes it never changes its value.
const DONOR_LEN: u32 = DONOR_TILE * DONOR_TILE;
// Samples per invocation along each axis.
const DONOR_PER: u32 = DONOR_TILE / GRID_TILE;
const DONOR_SAMPLES: u32 = DONOR_PER * DONOR_PER;
// The bits of a tile sample still waiting in `d_val` (a NaN no arithmetic produces; a value
// with these bits is stored as another NaN, see donor_store).
const DONOR_WAITING: u32 = 0xffffffffu;
// The processed samples' values (area, or the sediment passed on) as bits; DONOR_WAITING
// while waiting.
var<workgroup> d_val: array<u32, DONOR_LEN>;
// Samples processed in the current local step (0: the tile is stuck or finished).
var<workgroup> d_progress: atomic<u32>;

// Tile-local index of the invocation's sample s (0..DONOR_SAMPLES).
fn donor_slot(lid: vec3<u32>, s: u32) -> u32 {
    return (lid.y + GRID_TILE * (s / DONOR_PER)) * DONOR_TILE + lid.x + GRID_TILE * (s % DONOR_PER);
}

// Tile sample t done with value v.
fn donor_store(t: u32, v: f32) {
    let b = bitcast<u32>(v);
    d_val[t] = select(b, 0x7fffffffu, b == DONOR_WAITING);
}

fn donor_done(t: u32) -> bool {
    return d_val[t] != DONOR_WAITING;
}

fn donor_value(t: u32) -> f32 {
    return bitcast<f32>(d_val[t]);
}

// Grid coordinates of tile-local sample l of workgroup wid (off the grid: ≥ P.nc). Odd
// dispatches shift the tiles by half a tile, so that a chain running along a tile border of
// one tiling runs inside the tiles of the other.
fn donor_xy(wid: vec3<u32>, l: u32) -> vec2<u32> {
    let shift = (P.iter % 2u) * (DONOR_TILE / 2u);
    // Below 0 wraps around to a large u32: off the grid.
    return vec2<u32>(wid.x * DONOR_TILE + l % DONOR_TILE, wid.y * DONOR_TILE + l / DONOR_TILE) - vec2<u32>(shift);
}

// Tile-local index of neighbour m of tile-local sample l, or DONOR_LEN outside the tile.
fn donor_local(l: u32, m: u32) -> u32 {
    let a = i32(l % DONOR_TILE) + i32(m % 3u) - 1;
    let b = i32(l / DONOR_TILE) + i32(m / 3u) - 1;
    if (a < 0 || b < 0 || a >= i32(DONOR_TILE) || b >= i32(DONOR_TILE)) {
        return DONOR_LEN;
    }
    return u32(b) * DONOR_TILE + u32(a);
}

// Bit m set for each neighbour m (0..9, 4 the sample itself) that drains into sample i at xy.
fn donor_mask(xy: vec2<u32>, i: u32) -> u32 {
    var mask = 0u;
    for (var m = 0u; m < 9u; m++) {
        let jj = neighbour(xy.x, xy.y, m, P.nc);
        if (m == 4u || jj < 0) {
            continue;
        }
        if (rcv[u32(jj)] == i) {
            mask |= 1u << m;
        }
    }
    return mask;
}

// Whether every donor in `mask` of tile-local sample l at xy is done (see above).
fn donors_done(l: u32, xy: vec2<u32>, mask: u32) -> bool {
    for (var m = 0u; m < 9u; m++) {
        if ((mask & (1u << m)) == 0u) {
            continue;
        }
        let t = donor_local(l, m);
        if (t < DONOR_LEN) {
            if (!donor_done(t)) {
                return false;
            }
        } else if (!donor_ready(u32(neighbour(xy.x, xy.y, m, P.nc)))) {
            return false;
        }
    }
    return true;
}

// End of a local step: `ready` samples were processed; whether the tile goes on.
fn donor_step_end(ready: u32) -> bool {
    if (ready != 0u) {
        atomicAdd(&d_progress, 1u);
    }
    workgroupBarrier();
    return workgroupUniformLoad(&d_progress) != 0u;
}

// island_core::erosion::flow_accumulation: one dispatch of the tiled donor-first iteration
// (area = the cell plus the donors' areas, in neighbour order).
@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn flow_accumulation(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let n = P.nc;
    var mask: array<u32, DONOR_SAMPLES>;
    var todo = 0u;
    for (var s = 0u; s < DONOR_SAMPLES; s++) {
        let l = donor_slot(lid, s);
        let xy = donor_xy(wid, l);
        // Off the grid: done (never a donor).
        d_val[l] = 0u;
        if (xy.x < n && xy.y < n) {
            let i = xy.y * n + xy.x;
            if (atomicLoad(&flags[i]) != 0u) {
                donor_store(l, area[i]);
            } else {
                d_val[l] = DONOR_WAITING;
                mask[s] = donor_mask(xy, i);
                todo |= 1u << s;
            }
        }
    }
    for (var step = 0u; step <= DONOR_LEN; step++) {
        if (all(lid.xy == vec2<u32>(0u))) {
            atomicStore(&d_progress, 0u);
        }
        workgroupBarrier();
        var ready = 0u;
        var vals: array<f32, DONOR_SAMPLES>;
        for (var s = 0u; s < DONOR_SAMPLES; s++) {
            let l = donor_slot(lid, s);
            let xy = donor_xy(wid, l);
            if ((todo & (1u << s)) == 0u || !donors_done(l, xy, mask[s])) {
                continue;
            }
            var sum = P.cell_area;
            for (var m = 0u; m < 9u; m++) {
                if ((mask[s] & (1u << m)) == 0u) {
                    continue;
                }
                let t = donor_local(l, m);
                if (t < DONOR_LEN) {
                    sum += donor_value(t);
                } else {
                    sum += area[u32(neighbour(xy.x, xy.y, m, n))];
                }
            }
            vals[s] = sum;
            ready |= 1u << s;
        }
        workgroupBarrier();
        for (var s = 0u; s < DONOR_SAMPLES; s++) {
            if ((ready & (1u << s)) == 0u) {
                continue;
            }
            let l = donor_slot(lid, s);
            let xy = donor_xy(wid, l);
            let i = xy.y * n + xy.x;
            donor_store(l, vals[s]);
            area[i] = vals[s];
            atomicStore(&flags[i], P.iter + 1u);
        }
        if (ready != 0u) {
            atomicMax(&flags[n * n + 1u], P.iter + 1u);
        }
        todo &= ~ready;
        if (!donor_step_end(ready)) {
            break;
        }
    }
    if (todo != 0u) {
        atomicAdd(&flags[n * n], countOneBits(todo));
    }
}

// island_core::erosion::stream_power, start: sample iu's φ as (c, a, b, receiver) (what the
// first pointer-jumping round composes).
fn stream_power_start(iu: u32) -> vec4<f32> {
    let r = rcv[iu];
    let hi = h[iu];
    if (r == iu) {
        // An outlet: a constant, the base level for its donors.
        let v = select(hi, P.sea, is_sea(hi, P.sea));
        return vec4<f32>(EROSION_BIG, v, 0.0f, bitcast<f32>(iu));
    }
    let n = P.nc;
    var dist = SQRT_2;
    if (r % n == iu % n || r / n == iu / n) {
        dist = 1.0f;
    }
    let ca = P.dx * P.dx;
    let k = min(u32(area[iu] / ca + 0.5f), P.pow_len - 1u);
    let f = P.kdt * pow_count[k] / (P.dx * dist);
    return vec4<f32>(hi, hi / (1.0f + f), f / (1.0f + f), bitcast<f32>(r));
}

// Whether any sample of the workgroup still depends on its pointer after this round.
var<workgroup> jump_open: atomic<u32>;

// One pointer-jumping round (round P.iter): φ_i ∘ φ_ptr(i), state_a → state_b (round 0 composes
// the stream_power_start functions, state_a unread). A composition
// with b = 0 is a constant (it reached an outlet, or no longer depends on what is below) and
// no later round changes its result; `jump_left[P.iter]` is set when some sample's is not
// constant yet, so the rounds a grid needs can be counted (and a shorter run verified).
@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn stream_power_jump(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_index) li: u32,
) {
    if (li == 0u) {
        atomicStore(&jump_open, 0u);
    }
    workgroupBarrier();
    let i = coarse_index(gid);
    if (i >= 0) {
        var s: vec4<f32>;
        var t: vec4<f32>;
        if (P.iter == 0u) {
            s = stream_power_start(u32(i));
            t = stream_power_start(bitcast<u32>(s.w));
        } else {
            s = state_a[u32(i)];
            t = state_a[bitcast<u32>(s.w)];
        }
        let r = vec4<f32>(min(s.x, s.y + mul_r(s.z, t.x)), s.y + mul_r(s.z, t.y), s.z * t.z, t.w);
        state_b[u32(i)] = r;
        if (r.z != 0.0f) {
            atomicStore(&jump_open, 1u);
        }
    }
    workgroupBarrier();
    if (li == 0u && atomicLoad(&jump_open) != 0u) {
        atomicOr(&jump_left[P.iter], 1u);
    }
}

// The composed functions are constants (every chain ends at an outlet): the new heights.
@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn stream_power_apply(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = coarse_index(gid);
    if (i < 0) {
        return;
    }
    let iu = u32(i);
    if (rcv[iu] == iu) {
        return;
    }
    let s = state_a[iu];
    h[iu] = min(s.x, s.y);
}

// Sample i's height after the stream-power step (not an outlet): with P.apply, its final
// composition in `state_a` applied (stream_power_apply, done here instead of in a dispatch of
// its own); without, `h` holds it.
fn stream_height(i: u32) -> f32 {
    if (P.apply != 0u) {
        let s = state_a[i];
        return min(s.x, s.y);
    }
    return h[i];
}

// island_core::erosion::deposition of sample i (not an outlet) with `qs` received from its
// donors: h updated, sed[i] = (sediment passed on, eroded m³, deposited m³, exported m³);
// returns the sediment passed on.
fn deposit(i: u32, qs: f32) -> f32 {
    let r = rcv[i];
    let ca = P.dx * P.dx;
    let hs = stream_height(i);
    h[i] = hs;
    let e = mul_r(old[i] - hs, ca);
    let q = qs + e;
    var out = vec4<f32>(0.0f, e, 0.0f, 0.0f);
    if (q > 0.0f) {
        let room = filled[i] - old[i];
        var d: f32;
        if (room > 0.0f) {
            d = min(q / ca, room);
        } else {
            d = min(P.g * q / (area[i] + mul_r(P.g, ca)), q / ca);
        }
        h[i] = hs + d;
        let dv = d * ca;
        out.z = dv;
        let pass_on = q - mul_r(d, ca);
        if (pass_on > 0.0f) {
            if (rcv[r] == r) {
                // Into the sea (exported) or onto the map border (lost, as on the CPU).
                if (is_sea(h[r], P.sea)) {
                    out.w = pass_on;
                }
            } else {
                out.x = pass_on;
            }
        }
    }
    sed[i] = out;
    sed_total[i] = sed_total[i] + out;
    return out.x;
}

// island_core::erosion::deposition: one dispatch of the tiled donor-first iteration (see
// flow_accumulation). Outlets are not part of the flood order: they pass nothing on.
@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn deposition(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let n = P.nc;
    var mask: array<u32, DONOR_SAMPLES>;
    var todo = 0u;
    for (var s = 0u; s < DONOR_SAMPLES; s++) {
        let l = donor_slot(lid, s);
        let xy = donor_xy(wid, l);
        // Off the grid: done (never a donor).
        d_val[l] = 0u;
        if (xy.x < n && xy.y < n) {
            let i = xy.y * n + xy.x;
            if (atomicLoad(&flags[i]) != 0u) {
                donor_store(l, sed[i].x);
            } else {
                d_val[l] = DONOR_WAITING;
                if (rcv[i] != i) {
                    mask[s] = donor_mask(xy, i);
                }
                todo |= 1u << s;
            }
        }
    }
    for (var step = 0u; step <= DONOR_LEN; step++) {
        if (all(lid.xy == vec2<u32>(0u))) {
            atomicStore(&d_progress, 0u);
        }
        workgroupBarrier();
        var ready = 0u;
        var qs: array<f32, DONOR_SAMPLES>;
        for (var s = 0u; s < DONOR_SAMPLES; s++) {
            let l = donor_slot(lid, s);
            let xy = donor_xy(wid, l);
            if ((todo & (1u << s)) == 0u || !donors_done(l, xy, mask[s])) {
                continue;
            }
            var sum = 0.0f;
            for (var m = 0u; m < 9u; m++) {
                if ((mask[s] & (1u << m)) == 0u) {
                    continue;
                }
                let t = donor_local(l, m);
                if (t < DONOR_LEN) {
                    sum += donor_value(t);
                } else {
                    sum += sed[u32(neighbour(xy.x, xy.y, m, n))].x;
                }
            }
            qs[s] = sum;
            ready |= 1u << s;
        }
        workgroupBarrier();
        for (var s = 0u; s < DONOR_SAMPLES; s++) {
            if ((ready & (1u << s)) == 0u) {
                continue;
            }
            let l = donor_slot(lid, s);
            let xy = donor_xy(wid, l);
            let i = xy.y * n + xy.x;
            var v = 0.0f;
            if (rcv[i] == i) {
                // Nothing moved: `sed_total` unchanged.
                sed[i] = vec4<f32>(0.0f);
            } else {
                v = deposit(i, qs[s]);
            }
            donor_store(l, v);
            atomicStore(&flags[i], P.iter + 1u);
        }
        todo &= ~ready;
        if (!donor_step_end(ready)) {
            break;
        }
    }
    if (todo != 0u) {
        atomicAdd(&flags[n * n], countOneBits(todo));
    }
}

// island_core::erosion::thermal: one Jacobi pass, src → h.
@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn thermal(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = coarse_index(gid);
    if (i < 0) {
        return;
    }
    let iu = u32(i);
    let hi = src[iu];
    if (is_sea(hi, P.sea)) {
        h[iu] = hi;
        return;
    }
    var dh = 0.0f;
    var lap = 0.0f;
    for (var m = 0u; m < 9u; m++) {
        if (m == 4u) {
            continue;
        }
        let jj = neighbour(gid.x, gid.y, m, P.nc);
        if (jj < 0) {
            continue;
        }
        let hj = src[u32(jj)];
        if (is_sea(hj, P.sea)) {
            continue;
        }
        let d = neighbour_dist(m);
        let t = mul_r(P.talus_dx, d);
        let diff = hj - hi;
        dh += max(diff - t, 0.0f) - max(-diff - t, 0.0f);
        lap += diff / rounded(d * d);
    }
    h[iu] = (hi + mul_r(THERMAL_RATE, dh)) + mul_r(P.creep, lap);
}

// island_core::erosion::catmull_rom.
fn catmull_rom(t: f32) -> vec4<f32> {
    let t2 = mul_r(t, t);
    let t3 = mul_r(t2, t);
    // Every intermediate rounded: the shader compiler may not re-associate them either.
    return vec4<f32>(
        0.5f * rounded(rounded(-t3 + mul_r(2.0f, t2)) - t),
        0.5f * rounded(rounded(mul_r(3.0f, t3) - mul_r(5.0f, t2)) + 2.0f),
        0.5f * rounded(rounded(mul_r(-3.0f, t3) + mul_r(4.0f, t2)) + t),
        0.5f * rounded(t3 - t2),
    );
}

// Height change of coarse sample (x, z).
fn delta_at(x: u32, z: u32) -> f32 {
    let k = z * P.nc + x;
    return h[k] - orig[k];
}

fn tap(k: i32) -> u32 {
    return u32(clamp(k, 0, i32(P.nc) - 1));
}

// island_core::erosion::upsample_delta: the bicubic (Catmull-Rom) upsampling of the height
// change `h − orig` of the evolution grid added to the land samples of `heights` (G.n);
// P.scale = (nc − 1) / (n − 1).
@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn upsample_delta(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    let o = heights[u32(i)];
    if (is_sea(o, P.sea)) {
        return;
    }
    let m = i32(P.nc);
    let u = mul_r(f32(gid.x), P.scale);
    let x0 = min(f2i(floor(u)), m - 2);
    let cw = catmull_rom(u - f32(x0));
    let v = mul_r(f32(gid.y), P.scale);
    let z0 = min(f2i(floor(v)), m - 2);
    let w = catmull_rom(v - f32(z0));
    let rows = vec4<u32>(tap(z0 - 1), tap(z0), tap(z0 + 1), tap(z0 + 2));
    let cols = vec4<u32>(tap(x0 - 1), tap(x0), tap(x0 + 1), tap(x0 + 2));
    var line: vec4<f32>;
    for (var c = 0u; c < 4u; c++) {
        let t = cols[c];
        line[c] = rounded(rounded(rounded(mul_r(w.x, delta_at(t, rows.x))
            + mul_r(w.y, delta_at(t, rows.y))) + mul_r(w.z, delta_at(t, rows.z)))
            + mul_r(w.w, delta_at(t, rows.w)));
    }
    let add = rounded(rounded(rounded(mul_r(cw.x, line.x) + mul_r(cw.y, line.y))
        + mul_r(cw.z, line.z)) + mul_r(cw.w, line.w));
    heights[u32(i)] = o + add;
}
