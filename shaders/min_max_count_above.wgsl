// Mirrors island_core::grid::min_max_count_above: the smallest and largest value of a grid and
// how many values lie above P.level, in one pass (the pipeline's statistics: the heights' range
// and land fraction, level 0). Each workgroup reduces its tile in workgroup atomics, then adds
// one result per workgroup to `result`, which the recorder clears first:
//   result[0] = !key(min), result[1] = key(max), result[2] = count above the level,
// where key() maps a float's bits to a u32 of the same order (negatives flipped, positives with
// the sign bit set), so that atomicMax on the keys is max on the floats, and on the flipped key
// is min (a cleared buffer is the identity of all three). min and max are exact in any order,
// so the result is the CPU's bit for bit (NaN heights do not occur).
@group(0) @binding(1) var<uniform> P: Level;
@group(0) @binding(2) var<storage, read> data: array<f32>;
@group(0) @binding(3) var<storage, read_write> result: array<atomic<u32>>;

var<workgroup> w_min: atomic<u32>;
var<workgroup> w_max: atomic<u32>;
var<workgroup> w_count: atomic<u32>;

fn order_key(v: f32) -> u32 {
    let b = bitcast<u32>(v);
    return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
}

@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_index) li: u32,
) {
    if (li == 0u) {
        atomicStore(&w_min, 0u);
        atomicStore(&w_max, 0u);
        atomicStore(&w_count, 0u);
    }
    workgroupBarrier();
    let i = sample_index(gid);
    if (i >= 0) {
        let v = data[i];
        let k = order_key(v);
        atomicMax(&w_min, ~k);
        atomicMax(&w_max, k);
        if (v > P.level) {
            atomicAdd(&w_count, 1u);
        }
    }
    workgroupBarrier();
    if (li == 0u) {
        let c = atomicLoad(&w_count);
        // A workgroup wholly outside the grid leaves the identities alone.
        if (atomicLoad(&w_max) != 0u) {
            atomicMax(&result[0], atomicLoad(&w_min));
            atomicMax(&result[1], atomicLoad(&w_max));
        }
        if (c != 0u) {
            atomicAdd(&result[2], c);
        }
    }
}
