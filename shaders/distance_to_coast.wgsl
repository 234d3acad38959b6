// Mirrors island_core::distance::distance_to_coast: the exact Meijster EDT (same integer
// algorithm as the CPU), one invocation per column (phase 1) then one per row (phase 2).
// P.feature_is_land = 0: feature = water, writes the distance of land samples (positive);
// P.feature_is_land = 1: feature = land, writes the distance of water samples (negative).
@group(0) @binding(1) var<uniform> P: Distance;
@group(0) @binding(2) var<storage, read> mask: array<u32>;
@group(0) @binding(3) var<storage, read_write> g: array<i32>;
@group(0) @binding(4) var<storage, read_write> s_buf: array<i32>;
@group(0) @binding(5) var<storage, read_write> t_buf: array<i32>;
@group(0) @binding(6) var<storage, read_write> dist: array<f32>;
@group(0) @binding(7) var<storage, read_write> any_feature: array<atomic<u32>>;

fn is_feature(i: u32) -> bool {
    let land = mask[i] != 0u;
    return select(land, !land, P.feature_is_land == 0u);
}

@compute @workgroup_size(LINE_GROUP)
fn columns(@builtin(global_invocation_id) gid: vec3<u32>) {
    let n = G.n;
    let x = gid.x;
    if (x >= n) {
        return;
    }
    let inf = i32(2u * n);
    var found = false;
    var prev = inf;
    if (is_feature(x)) {
        prev = 0;
        found = true;
    }
    g[x] = prev;
    for (var y = 1u; y < n; y++) {
        let i = y * n + x;
        if (is_feature(i)) {
            prev = 0;
            found = true;
        } else {
            prev = prev + 1;
        }
        g[i] = prev;
    }
    var carry = g[(n - 1u) * n + x];
    for (var y = i32(n) - 2; y >= 0; y--) {
        let i = u32(y) * n + x;
        var cur = g[i];
        let b = carry + 1;
        if (b < cur) {
            cur = b;
            g[i] = cur;
        }
        carry = cur;
    }
    if (found) {
        atomicOr(&any_feature[P.feature_is_land], 1u);
    }
}

fn floor_div(a: i32, b: i32) -> i32 {
    // b > 0: Euclidean division == floor division.
    var q = a / b;
    if (a % b != 0 && a < 0) {
        q -= 1;
    }
    return q;
}

@compute @workgroup_size(LINE_GROUP)
fn rows(@builtin(global_invocation_id) gid: vec3<u32>) {
    let n = G.n;
    let y = gid.x;
    if (y >= n) {
        return;
    }
    let row = y * n;
    let m = i32(n);
    var q = 0;
    s_buf[row] = 0;
    t_buf[row] = 0;
    for (var u = 1; u < m; u++) {
        let gu = g[row + u32(u)];
        loop {
            if (q < 0) {
                break;
            }
            let sq = s_buf[row + u32(q)];
            let tq = t_buf[row + u32(q)];
            let gs = g[row + u32(sq)];
            let fa = (tq - sq) * (tq - sq) + gs * gs;
            let fb = (tq - u) * (tq - u) + gu * gu;
            if (fa > fb) {
                q -= 1;
            } else {
                break;
            }
        }
        if (q < 0) {
            q = 0;
            s_buf[row] = u;
        } else {
            let i = s_buf[row + u32(q)];
            let gi = g[row + u32(i)];
            let w = 1 + floor_div(u * u - i * i + gu * gu - gi * gi, 2 * (u - i));
            if (w < m) {
                q += 1;
                s_buf[row + u32(q)] = u;
                t_buf[row + u32(q)] = w;
            }
        }
    }
    let has = atomicLoad(&any_feature[P.feature_is_land]) != 0u;
    let far = f32(2u * n) * G.spacing;
    for (var x = m - 1; x >= 0; x--) {
        let sq = s_buf[row + u32(q)];
        let gs = g[row + u32(sq)];
        let d = (x - sq) * (x - sq) + gs * gs;
        let i = row + u32(x);
        let land = mask[i] != 0u;
        if (P.feature_is_land == 0u && land) {
            if (has) {
                dist[i] = (sqrt(f32(u32(d))) - 0.5f) * G.spacing;
            } else {
                dist[i] = far;
            }
        } else if (P.feature_is_land == 1u && !land) {
            if (has) {
                dist[i] = -(sqrt(f32(u32(d))) - 0.5f) * G.spacing;
            } else {
                dist[i] = -far;
            }
        }
        if (q > 0 && x == t_buf[row + u32(q)]) {
            q -= 1;
        }
    }
}
