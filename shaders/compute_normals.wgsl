// Mirrors island_core::normals::compute_normals (central differences, one-sided at borders).
// Planar output (one f32 per sample per plane keeps every binding at 4 bytes per sample).
@group(0) @binding(2) var<storage, read> heights: array<f32>;
@group(0) @binding(3) var<storage, read_write> normal_x: array<f32>;
@group(0) @binding(4) var<storage, read_write> normal_y: array<f32>;
@group(0) @binding(5) var<storage, read_write> normal_z: array<f32>;

@compute @workgroup_size(GRID_TILE, GRID_TILE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let idx = sample_index(gid);
    if (idx < 0) {
        return;
    }
    let n = G.n;
    let x = gid.x;
    let z = gid.y;
    let x0 = select(x - 1u, 0u, x == 0u);
    let x1 = min(x + 1u, n - 1u);
    let z0 = select(z - 1u, 0u, z == 0u);
    let z1 = min(z + 1u, n - 1u);
    let dx = (heights[z * n + x1] - heights[z * n + x0]) / (f32(x1 - x0) * G.spacing);
    let dz = (heights[z1 * n + x] - heights[z0 * n + x]) / (f32(z1 - z0) * G.spacing);
    let len = sqrt(mul_r(dx, dx) + 1.0f + mul_r(dz, dz));
    normal_x[idx] = -dx / len;
    normal_y[idx] = 1.0f / len;
    normal_z[idx] = -dz / len;
}
