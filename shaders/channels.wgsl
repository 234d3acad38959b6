// Mirrors island_core::channels::carve_rivers on the full grid (G.n samples per side). The
// river samples come as a list (`rivers`, downstream first, as the core's `Drainage::rivers`);
// `riv` maps a sample to its position in it. Every step of the core's definition is a min, a
// max or a copy along the receivers, so these passes give its exact bits:
// * carve_fill: shallow pits filled (heights raised to the filled surface outside lakes); the
//   heights go into `hkey` as order-preserving keys, so that atomicMin lowers them.
// * carve_init: `riv`, and each river sample's bed `filled − depth` (as a key in `bed`).
// * carve_bed_min: beds never above an upstream bed. Each river sample walks down the river
//   (receivers that are river samples) lowering the beds to its own with atomicMin, and stops
//   where a bed is already as low (the walk that lowered it carries the value on): every bed
//   ends at the least bed of its upstream river, in any order.
// * carve_bed_base: beds never below the base level, the lake level / sea level / filled height
//   where the river (walked down to its end) flows out.
// * carve_stamps: each river sample stamps bed + bank_slope · max(0, r − width/2) on the disk of
//   radius width/2 + bank_width (outside lakes); atomicMin keeps the lowest. The distances
//   come from `sqrt_table` (√k for k = dx² + dz², computed on the host: the core's `sqrt`
//   bits), products go through `mul_r` (no fused multiply-add).
// * carve_banks_walk: river samples never higher than an upstream river sample (walks as in
//   carve_bed_min, over the carved heights).
// * carve_decode: the keys back to heights.
struct RiverEntry {
    index: u32,
    depth: f32,
    width: f32,
    _pad: u32,
}
@group(0) @binding(1) var<uniform> P: Carve;
@group(0) @binding(2) var<storage, read> filled: array<f32>;
// Lake of each sample, CARVE_NONE where there is none.
@group(0) @binding(3) var<storage, read> lake: array<u32>;
@group(0) @binding(4) var<storage, read> rcv: array<u32>;
@group(0) @binding(5) var<storage, read> rivers: array<RiverEntry>;
@group(0) @binding(6) var<storage, read> sqrt_table: array<f32>;
@group(0) @binding(7) var<storage, read_write> heights: array<f32>;
@group(0) @binding(8) var<storage, read_write> hkey: array<atomic<u32>>;
@group(0) @binding(9) var<storage, read_write> riv: array<u32>;
@group(0) @binding(10) var<storage, read_write> bed: array<atomic<u32>>;

const CARVE_NONE: u32 = 0xffffffffu;

fn carve_key(v: f32) -> u32 {
    let b = bitcast<u32>(v);
    if ((b & 0x80000000u) != 0u) {
        return ~b;
    }
    return b | 0x80000000u;
}

fn carve_height(k: u32) -> f32 {
    if ((k & 0x80000000u) != 0u) {
        return bitcast<f32>(k & 0x7fffffffu);
    }
    return bitcast<f32>(~k);
}

// The river entry of this invocation (one per list position), or -1.
fn river_of(gid: vec3<u32>) -> i32 {
    let k = sample_index(gid);
    if (k < 0 || u32(k) >= P.count) {
        return -1;
    }
    return k;
}

@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn carve_fill(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    let iu = u32(i);
    var h = heights[iu];
    if (lake[iu] == CARVE_NONE && filled[iu] > h) {
        h = filled[iu];
    }
    heights[iu] = h;
    atomicStore(&hkey[iu], carve_key(h));
    riv[iu] = CARVE_NONE;
}

@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn carve_init(@builtin(global_invocation_id) gid: vec3<u32>) {
    let k = river_of(gid);
    if (k < 0) {
        return;
    }
    let r = rivers[u32(k)];
    riv[r.index] = u32(k);
    atomicStore(&bed[r.index], carve_key(filled[r.index] - r.depth));
}

@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn carve_bed_min(@builtin(global_invocation_id) gid: vec3<u32>) {
    let k = river_of(gid);
    if (k < 0) {
        return;
    }
    var c = rivers[u32(k)].index;
    let v = atomicLoad(&bed[c]);
    for (var step = 0u; step < P.count; step++) {
        let r = rcv[c];
        if (r == c || riv[r] == CARVE_NONE) {
            break;
        }
        if (atomicMin(&bed[r], v) <= v) {
            break;
        }
        c = r;
    }
}

@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn carve_bed_base(@builtin(global_invocation_id) gid: vec3<u32>) {
    let k = river_of(gid);
    if (k < 0) {
        return;
    }
    let i = rivers[u32(k)].index;
    var c = i;
    var base = 0.0f;
    for (var step = 0u; step <= P.count; step++) {
        let r = rcv[c];
        if (lake[r] != CARVE_NONE) {
            // A lake sample's filled height is its lake's level.
            base = filled[r];
            break;
        }
        if (!(filled[r] > P.sea_level)) {
            base = P.sea_level;
            break;
        }
        if (riv[r] == CARVE_NONE || r == c) {
            base = filled[r];
            break;
        }
        c = r;
    }
    atomicStore(&bed[i], carve_key(max(carve_height(atomicLoad(&bed[i])), base)));
}

@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn carve_stamps(@builtin(global_invocation_id) gid: vec3<u32>) {
    let k = river_of(gid);
    if (k < 0) {
        return;
    }
    let e = rivers[u32(k)];
    let n = i32(G.n);
    let kx = i32(e.index % G.n);
    let kz = i32(e.index / G.n);
    let half_w = 0.5f * e.width;
    let reach = half_w + P.bank_width;
    // One ring more than the core's floor(reach / spacing) (a division may round either
    // way here): the ring is outside `reach` and skipped.
    let rc = i32(floor(reach / P.spacing)) + 1;
    let b = carve_height(atomicLoad(&bed[e.index]));
    let table = arrayLength(&sqrt_table);
    for (var dz = -rc; dz <= rc; dz++) {
        let z = kz + dz;
        if (z < 0 || z >= n) {
            continue;
        }
        for (var dx = -rc; dx <= rc; dx++) {
            let x = kx + dx;
            if (x < 0 || x >= n) {
                continue;
            }
            let k2 = u32(dx * dx + dz * dz);
            if (k2 >= table) {
                continue;
            }
            let dist = mul_r(sqrt_table[k2], P.spacing);
            if (dist > reach) {
                continue;
            }
            let v = b + mul_r(P.bank_slope, max(dist - half_w, 0.0f));
            let j = u32(z * n + x);
            if (lake[j] == CARVE_NONE) {
                atomicMin(&hkey[j], carve_key(v));
            }
        }
    }
}

@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn carve_banks_walk(@builtin(global_invocation_id) gid: vec3<u32>) {
    let k = river_of(gid);
    if (k < 0) {
        return;
    }
    var c = rivers[u32(k)].index;
    let v = atomicLoad(&hkey[c]);
    for (var step = 0u; step < P.count; step++) {
        let r = rcv[c];
        if (r == c || riv[r] == CARVE_NONE || lake[r] != CARVE_NONE) {
            break;
        }
        if (atomicMin(&hkey[r], v) <= v) {
            break;
        }
        c = r;
    }
}

@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn carve_decode(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = sample_index(gid);
    if (i < 0) {
        return;
    }
    let iu = u32(i);
    heights[iu] = carve_height(atomicLoad(&hkey[iu]));
}
