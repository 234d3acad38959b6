// Mirrors island_core::diamond_square: corners, then per level a diamond pass and a square
// pass (P.step = distance between known corners, P.amp = amplitude of the pass). At the map edge the square pass
// averages only its in-bounds neighbours, in the CPU order (left, right, up, down).
@group(0) @binding(1) var<uniform> P: Diamond;
@group(0) @binding(2) var<storage, read_write> h: array<f32>;

fn jitter(x: u32, z: u32, seed: u32) -> f32 {
    return hash2_unit(bitcast<i32>(x), bitcast<i32>(z), seed) * 2.0f - 1.0f;
}

fn ds_seed() -> u32 {
    return stage_seed(G.seed_lo, G.seed_hi, P.tag);
}

@compute @workgroup_size(4)
fn corners(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= 4u) {
        return;
    }
    let last = G.n - 1u;
    let x = select(0u, last, (gid.x & 1u) != 0u);
    let z = select(0u, last, (gid.x & 2u) != 0u);
    h[z * G.n + x] = jitter(x, z, ds_seed());
}

@compute @workgroup_size(DS_TILE, DS_TILE)
fn diamond_pass(@builtin(global_invocation_id) gid: vec3<u32>) {
    let n = G.n;
    let step = P.step;
    let half = step / 2u;
    let cnt = (n - 1u) / step;
    if (gid.x >= cnt || gid.y >= cnt) {
        return;
    }
    let x = gid.x * step + half;
    let z = gid.y * step + half;
    let v0 = h[(z - half) * n + x - half];
    let v1 = h[(z - half) * n + x + half];
    let v2 = h[(z + half) * n + x - half];
    let v3 = h[(z + half) * n + x + half];
    var avg: f32;
    if (P.ridge != 0u) {
        let mn = min(min(min(v0, v1), v2), v3);
        let mx = max(max(max(v0, v1), v2), v3);
        avg = (mn + mx) * 0.5f;
    } else {
        avg = (((v0 + v1) + v2) + v3) / 4.0f;
    }
    h[z * n + x] = avg + mul_r(P.amp, jitter(x, z, ds_seed()));
}

@compute @workgroup_size(DS_TILE, DS_TILE)
fn square_pass(@builtin(global_invocation_id) gid: vec3<u32>) {
    let n = G.n;
    let step = P.step;
    let half = step / 2u;
    let rows = (n - 1u) / half + 1u;
    if (gid.y >= rows) {
        return;
    }
    let z = gid.y * half;
    let x0 = select(0u, half, (gid.y % 2u) == 0u);
    let x = x0 + gid.x * step;
    if (x >= n) {
        return;
    }
    var vals: array<f32, 4>;
    var k = 0u;
    if (x >= half) {
        vals[k] = h[z * n + x - half];
        k += 1u;
    }
    if (x + half < n) {
        vals[k] = h[z * n + x + half];
        k += 1u;
    }
    if (z >= half) {
        vals[k] = h[(z - half) * n + x];
        k += 1u;
    }
    if (z + half < n) {
        vals[k] = h[(z + half) * n + x];
        k += 1u;
    }
    var avg: f32;
    if (P.ridge != 0u) {
        var mn = 3.4028234663852886e38f;
        var mx = -3.4028234663852886e38f;
        for (var j = 0u; j < k; j++) {
            mn = min(mn, vals[j]);
            mx = max(mx, vals[j]);
        }
        avg = (mn + mx) * 0.5f;
    } else {
        var sum = vals[0];
        for (var j = 1u; j < k; j++) {
            sum += vals[j];
        }
        avg = sum / f32(k);
    }
    h[z * n + x] = avg + mul_r(P.amp, jitter(x, z, ds_seed()));
}
