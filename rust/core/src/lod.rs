//! Quadtree level of detail for the terrain meshes.
//!
//! The map is covered by a grid of root nodes (level 0). A node at level `d` covers
//! `root_cells >> d` grid cells per side and is drawn with the same `(chunk_cells + 1)²` vertices
//! at every level, so its vertex spacing halves per level; the finest level (`levels - 1`) is the
//! full-resolution chunk of `chunk_cells` cells.
//!
//! [`select`] splits a node at level `d` while the camera is closer than `lod_distance / 2^d` to
//! its bounding box, then restricts the tree so that leaves sharing an edge differ by at most one
//! level. [`node_mesh`] stitches each leaf edge that borders a coarser leaf: every odd edge vertex
//! is moved to the midpoint of its two even neighbours, so it lies exactly on the coarser mesh's
//! edge and no crack can open.

use crate::heightfield::{flat_shaded, grid_indices, ChunkMesh, Heightfield};
use std::collections::HashSet;

/// Most LOD levels.
pub const MAX_LEVELS: u32 = 6;

/// One quadtree node: `level` and its column/row among the nodes of that level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeKey {
    /// 0 = coarsest.
    pub level: u32,
    /// Column (x) among the nodes of this level.
    pub x: u32,
    /// Row (z) among the nodes of this level.
    pub z: u32,
}

/// Edge bits of [`Leaf::stitch`]: the neighbour on that side is one level coarser.
pub const EDGE_WEST: u8 = 1; // -x
/// +x side.
pub const EDGE_EAST: u8 = 2;
/// -z side.
pub const EDGE_NORTH: u8 = 4;
/// +z side.
pub const EDGE_SOUTH: u8 = 8;

/// A selected node with the edges it must stitch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Leaf {
    pub key: NodeKey,
    /// `EDGE_*` bits of the sides next to a coarser leaf.
    pub stitch: u8,
}

/// Static layout of the quadtree over one heightfield.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LodLayout {
    /// Samples per side of the heightfield.
    pub resolution: usize,
    /// Cells per side of every chunk mesh (vertices: `chunk_cells + 1` per side).
    pub chunk_cells: usize,
    /// Levels actually used (requested levels clamped so a root fits in the map).
    pub levels: u32,
    /// Cells per side of a level-0 node.
    pub root_cells: usize,
    /// Level-0 nodes per side.
    pub roots: usize,
    /// Edge length of the map, metres.
    pub world_size: f32,
}

/// Why a layout cannot be made.
#[derive(Clone, Debug, PartialEq)]
pub struct LodError(pub String);

impl std::fmt::Display for LodError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LodError {}

impl LodLayout {
    /// Layout for a `resolution²` map (2^n + 1) with chunks of `chunk_cells` cells (a power of
    /// two, at least 2, dividing `resolution - 1`) and `levels` (1..=6; clamped down so a level-0
    /// node fits in the map).
    pub fn new(
        resolution: usize,
        world_size: f32,
        chunk_cells: usize,
        levels: u32,
    ) -> Result<LodLayout, LodError> {
        if resolution < 3 || !(resolution - 1).is_power_of_two() {
            return Err(LodError(format!(
                "resolution must be 2^n + 1, got {resolution}"
            )));
        }
        if chunk_cells < 2 || !chunk_cells.is_power_of_two() || chunk_cells > resolution - 1 {
            return Err(LodError(format!(
                "chunk size must be a power of two from 2 to {}, got {chunk_cells}",
                resolution - 1
            )));
        }
        if !(1..=MAX_LEVELS).contains(&levels) {
            return Err(LodError(format!(
                "lod levels must be 1..={MAX_LEVELS}, got {levels}"
            )));
        }
        if !(world_size.is_finite() && world_size > 0.0) {
            return Err(LodError(format!(
                "world size must be positive, got {world_size}"
            )));
        }
        let max_levels = ((resolution - 1) / chunk_cells).trailing_zeros() + 1;
        let levels = levels.min(max_levels);
        let root_cells = chunk_cells << (levels - 1);
        Ok(LodLayout {
            resolution,
            chunk_cells,
            levels,
            root_cells,
            roots: (resolution - 1) / root_cells,
            world_size,
        })
    }

    /// Cells per side of a node at `level`.
    pub fn cells(&self, level: u32) -> usize {
        self.root_cells >> level
    }

    /// Sample step of a node's mesh at `level`.
    pub fn step(&self, level: u32) -> usize {
        self.cells(level) / self.chunk_cells
    }

    /// Nodes per side at `level`.
    pub fn per_side(&self, level: u32) -> usize {
        self.roots << level
    }

    /// First sample `(x0, z0)` of a node.
    pub fn origin(&self, k: NodeKey) -> (usize, usize) {
        let c = self.cells(k.level);
        (k.x as usize * c, k.z as usize * c)
    }

    /// Node-local rectangle `[x0, z0, x1, z1]` in metres.
    pub fn rect(&self, k: NodeKey) -> [f32; 4] {
        let s = self.world_size / (self.resolution - 1) as f32;
        let h = self.world_size * 0.5;
        let (x0, z0) = self.origin(k);
        let c = self.cells(k.level);
        [
            x0 as f32 * s - h,
            z0 as f32 * s - h,
            (x0 + c) as f32 * s - h,
            (z0 + c) as f32 * s - h,
        ]
    }
}

/// Camera and distances for [`select`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LodView {
    /// Camera position, node-local metres.
    pub camera: [f32; 3],
    /// Distance at which a level-0 node splits, metres (halved per level).
    pub lod_distance: f32,
    /// Height range of the terrain (bounding boxes span it), metres.
    pub y_range: [f32; 2],
}

fn distance_to_box(layout: &LodLayout, k: NodeKey, v: &LodView) -> f32 {
    let r = layout.rect(k);
    let [cx, cy, cz] = v.camera;
    let dx = (r[0] - cx).max(cx - r[2]).max(0.0);
    let dz = (r[1] - cz).max(cz - r[3]).max(0.0);
    let dy = (v.y_range[0] - cy).max(cy - v.y_range[1]).max(0.0);
    let d = (dx * dx + dy * dy + dz * dz).sqrt();
    if d.is_finite() {
        d
    } else {
        f32::INFINITY
    }
}

/// Leaf of `set` covering the cell `(x, z)` of `level` (itself or an ancestor), if any.
fn covering(set: &HashSet<NodeKey>, level: u32, x: u32, z: u32) -> Option<NodeKey> {
    (0..=level)
        .rev()
        .map(|l| NodeKey {
            level: l,
            x: x >> (level - l),
            z: z >> (level - l),
        })
        .find(|k| set.contains(k))
}

fn children(k: NodeKey) -> [NodeKey; 4] {
    let (l, x, z) = (k.level + 1, k.x * 2, k.z * 2);
    [
        NodeKey { level: l, x, z },
        NodeKey {
            level: l,
            x: x + 1,
            z,
        },
        NodeKey {
            level: l,
            x,
            z: z + 1,
        },
        NodeKey {
            level: l,
            x: x + 1,
            z: z + 1,
        },
    ]
}

/// Same-level neighbours of `k` across its four edges, in `EDGE_*` order (None outside the map).
fn side_cells(layout: &LodLayout, k: NodeKey) -> [(u8, Option<(u32, u32)>); 4] {
    let n = layout.per_side(k.level) as u32;
    [
        (EDGE_WEST, (k.x > 0).then(|| (k.x - 1, k.z))),
        (EDGE_EAST, (k.x + 1 < n).then(|| (k.x + 1, k.z))),
        (EDGE_NORTH, (k.z > 0).then(|| (k.x, k.z - 1))),
        (EDGE_SOUTH, (k.z + 1 < n).then(|| (k.x, k.z + 1))),
    ]
}

/// The leaves for a view: distance-based split, then restricted so edge neighbours differ by at
/// most one level, with each leaf's stitch edges. Sorted by key (deterministic).
pub fn select(layout: &LodLayout, view: &LodView) -> Vec<Leaf> {
    let mut set: HashSet<NodeKey> = HashSet::new();
    let mut stack: Vec<NodeKey> = Vec::new();
    for z in 0..layout.roots as u32 {
        for x in 0..layout.roots as u32 {
            stack.push(NodeKey { level: 0, x, z });
        }
    }
    let dist = if view.lod_distance.is_finite() {
        view.lod_distance.max(0.0)
    } else {
        0.0
    };
    while let Some(k) = stack.pop() {
        let split_at = dist / (1u32 << k.level) as f32;
        if k.level + 1 < layout.levels && distance_to_box(layout, k, view) < split_at {
            stack.extend(children(k));
        } else {
            set.insert(k);
        }
    }
    balance(layout, &mut set);
    let mut leaves: Vec<Leaf> = set
        .iter()
        .map(|&k| Leaf {
            key: k,
            stitch: stitch_mask(layout, &set, k),
        })
        .collect();
    leaves.sort();
    leaves
}

/// Split leaves until every leaf's edge neighbours are at most one level coarser.
fn balance(layout: &LodLayout, set: &mut HashSet<NodeKey>) {
    // Finest leaves first: splitting a coarse neighbour can only create finer leaves that need
    // checking again, so keep a work list.
    let mut work: Vec<NodeKey> = set.iter().copied().collect();
    work.sort_by_key(|k| std::cmp::Reverse(k.level));
    while let Some(k) = work.pop() {
        if !set.contains(&k) {
            continue;
        }
        for (_, cell) in side_cells(layout, k) {
            let Some((x, z)) = cell else { continue };
            // Split the covering leaf until it is at most one level coarser than k.
            while let Some(c) = covering(set, k.level, x, z) {
                if c.level + 1 >= k.level {
                    break;
                }
                set.remove(&c);
                for ch in children(c) {
                    set.insert(ch);
                    work.push(ch);
                }
            }
        }
    }
}

fn stitch_mask(layout: &LodLayout, set: &HashSet<NodeKey>, k: NodeKey) -> u8 {
    let mut m = 0;
    for (bit, cell) in side_cells(layout, k) {
        if let Some((x, z)) = cell {
            if covering(set, k.level, x, z).is_some_and(|c| c.level < k.level) {
                m |= bit;
            }
        }
    }
    m
}

/// Mesh of one leaf: `(chunk_cells + 1)²` vertices (smooth) taking every `step`-th sample, with
/// the odd vertices of every edge in `stitch` moved to the midpoint of their even neighbours.
/// Same layout, winding and UVs as [`Heightfield::region_mesh`]; `flat` gives un-indexed-looking
/// faceted triangles (6 vertices per cell). `layout` must match `field`.
pub fn node_mesh(field: &Heightfield, layout: &LodLayout, leaf: Leaf, flat: bool) -> ChunkMesh {
    let n = field.resolution;
    let c = layout.chunk_cells;
    let v = c + 1;
    let step = layout.step(leaf.key.level);
    let (x0, z0) = layout.origin(leaf.key);
    let inv = 1.0 / (n - 1) as f32;
    let mut pos = Vec::with_capacity(v * v);
    let mut nrm = Vec::with_capacity(v * v);
    let mut uvs = Vec::with_capacity(v * v);
    for j in 0..v {
        for i in 0..v {
            let (x, z) = (x0 + i * step, z0 + j * step);
            pos.push(field.position(x, z));
            nrm.push(field.normals[z * n + x]);
            uvs.push([x as f32 * inv, z as f32 * inv]);
        }
    }
    let s = leaf.stitch;
    let mut fix = |idx: usize, a: usize, b: usize| pos[idx][1] = (pos[a][1] + pos[b][1]) * 0.5;
    for t in (1..c).step_by(2) {
        if s & EDGE_NORTH != 0 {
            fix(t, t - 1, t + 1);
        }
        if s & EDGE_SOUTH != 0 {
            let r = c * v;
            fix(r + t, r + t - 1, r + t + 1);
        }
        if s & EDGE_WEST != 0 {
            fix(t * v, (t - 1) * v, (t + 1) * v);
        }
        if s & EDGE_EAST != 0 {
            fix(t * v + c, (t - 1) * v + c, (t + 1) * v + c);
        }
    }
    let indices = grid_indices(v);
    if flat {
        flat_shaded(&pos, &uvs, &indices)
    } else {
        ChunkMesh {
            positions: pos,
            normals: nrm,
            uvs,
            indices,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(n: usize) -> Heightfield {
        let h: Vec<f32> = (0..n * n)
            .map(|i| {
                let (x, z) = ((i % n) as f32, (i / n) as f32);
                (x * 0.37).sin() * 9.0 + (z * 0.23).cos() * 7.0 + ((i * 7919) % 13) as f32 * 0.3
            })
            .collect();
        Heightfield::new(n, 512.0, h)
    }

    fn view(cam: [f32; 3], dist: f32) -> LodView {
        LodView {
            camera: cam,
            lod_distance: dist,
            y_range: [-10.0, 20.0],
        }
    }

    fn cams() -> Vec<[f32; 3]> {
        vec![
            [0.0, 10.0, 0.0],
            [-250.0, 5.0, -250.0],
            [250.0, 40.0, -100.0],
            [37.0, 300.0, 190.0],
            [600.0, 0.0, 0.0],
            [-3.0, 0.0, 255.0],
        ]
    }

    /// Surface height of a leaf mesh along its edge polyline at node-local `(x, z)` on that edge.
    fn edge_height(m: &ChunkMesh, v: usize, edge: u8, x: f32, z: f32) -> f32 {
        let idx: Vec<usize> = (0..v)
            .map(|t| match edge {
                EDGE_NORTH => t,
                EDGE_SOUTH => (v - 1) * v + t,
                EDGE_WEST => t * v,
                _ => t * v + v - 1,
            })
            .collect();
        let along = |p: [f32; 3]| {
            if edge == EDGE_NORTH || edge == EDGE_SOUTH {
                p[0]
            } else {
                p[2]
            }
        };
        let q = if edge == EDGE_NORTH || edge == EDGE_SOUTH {
            x
        } else {
            z
        };
        for w in idx.windows(2) {
            let (a, b) = (m.positions[w[0]], m.positions[w[1]]);
            let (ta, tb) = (along(a), along(b));
            if q >= ta && q <= tb {
                let f = (q - ta) / (tb - ta);
                return a[1] + f * (b[1] - a[1]);
            }
        }
        panic!("point ({x}, {z}) not on the edge");
    }

    #[test]
    fn layout_validation_and_clamping() {
        assert!(LodLayout::new(100, 512.0, 16, 3).is_err());
        assert!(LodLayout::new(129, 512.0, 24, 3).is_err());
        assert!(LodLayout::new(129, 512.0, 16, 0).is_err());
        assert!(LodLayout::new(129, 512.0, 16, 7).is_err());
        assert!(LodLayout::new(129, f32::NAN, 16, 3).is_err());
        let l = LodLayout::new(129, 512.0, 16, 6).unwrap();
        assert_eq!((l.levels, l.root_cells, l.roots), (4, 128, 1));
        let l = LodLayout::new(257, 512.0, 16, 2).unwrap();
        assert_eq!((l.levels, l.root_cells, l.roots), (2, 32, 8));
        assert_eq!(l.step(0), 2);
        assert_eq!(l.step(1), 1);
    }

    #[test]
    fn leaves_cover_the_map_exactly_once_and_are_balanced() {
        let f = field(257);
        for levels in 1..=6 {
            let layout = LodLayout::new(257, 512.0, 16, levels).unwrap();
            for cam in cams() {
                let leaves = select(&layout, &view(cam, 300.0));
                let mut cover = vec![0u32; 256 * 256];
                for lf in &leaves {
                    let (x0, z0) = layout.origin(lf.key);
                    let c = layout.cells(lf.key.level);
                    for z in z0..z0 + c {
                        for x in x0..x0 + c {
                            cover[z * 256 + x] += 1;
                        }
                    }
                    assert_eq!(node_mesh(&f, &layout, *lf, false).positions.len(), 17 * 17);
                }
                assert!(
                    cover.iter().all(|&c| c == 1),
                    "levels {levels}, cam {cam:?}"
                );
                // Balance: for every leaf cell edge, the neighbouring leaf differs by ≤ 1 level.
                let set: HashSet<NodeKey> = leaves.iter().map(|l| l.key).collect();
                for lf in &leaves {
                    for (_, cell) in side_cells(&layout, lf.key) {
                        if let Some((x, z)) = cell {
                            if let Some(c) = covering(&set, lf.key.level, x, z) {
                                assert!(lf.key.level - c.level <= 1, "{lf:?} next to {c:?}");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn selection_follows_the_camera() {
        let layout = LodLayout::new(257, 512.0, 16, 4).unwrap();
        let near = select(&layout, &view([-250.0, 5.0, -250.0], 300.0));
        let far = select(&layout, &view([250.0, 5.0, 250.0], 300.0));
        assert_ne!(near, far);
        let finest = |ls: &[Leaf], x: f32, z: f32| {
            ls.iter()
                .find(|l| {
                    let r = layout.rect(l.key);
                    x >= r[0] && x < r[2] && z >= r[1] && z < r[3]
                })
                .unwrap()
                .key
                .level
        };
        assert_eq!(finest(&near, -250.0, -250.0), 3);
        assert!(finest(&near, 250.0, 250.0) < 3);
        assert_eq!(finest(&far, 250.0, 250.0), 3);
        assert!(finest(&far, -250.0, -250.0) < 3);
        // High above: everything coarse.
        let high = select(&layout, &view([0.0, 10000.0, 0.0], 300.0));
        assert!(high.iter().all(|l| l.key.level == 0));
        assert_eq!(high.len(), layout.roots * layout.roots);
        // NaN camera or distance: no panic, a valid (coarse) cover.
        let nan = select(&layout, &view([f32::NAN, 0.0, 0.0], f32::NAN));
        assert!(nan.iter().all(|l| l.key.level == 0));
    }

    /// Every pair of leaves sharing an edge describes the same polyline there: sampled densely,
    /// both meshes give the same height; and the fine side's vertices lie on the coarse edge.
    #[test]
    fn neighbour_edges_are_seam_free() {
        let f = field(257);
        let mut pairs = 0;
        let mut mixed = 0;
        for levels in [2, 3, 4, 5] {
            let layout = LodLayout::new(257, 512.0, 16, levels).unwrap();
            for cam in cams() {
                for dist in [150.0, 400.0, 900.0] {
                    let leaves = select(&layout, &view(cam, dist));
                    let meshes: Vec<ChunkMesh> = leaves
                        .iter()
                        .map(|l| node_mesh(&f, &layout, *l, false))
                        .collect();
                    for (ia, a) in leaves.iter().enumerate() {
                        for (ib, b) in leaves.iter().enumerate() {
                            let (ra, rb) = (layout.rect(a.key), layout.rect(b.key));
                            // b east of a / b south of a, overlapping along the edge.
                            let east = ra[2] == rb[0] && ra[1].max(rb[1]) < ra[3].min(rb[3]);
                            let south = ra[3] == rb[1] && ra[0].max(rb[0]) < ra[2].min(rb[2]);
                            if !east && !south {
                                continue;
                            }
                            pairs += 1;
                            if a.key.level != b.key.level {
                                mixed += 1;
                            }
                            let (lo, hi) = if east {
                                (ra[1].max(rb[1]), ra[3].min(rb[3]))
                            } else {
                                (ra[0].max(rb[0]), ra[2].min(rb[2]))
                            };
                            let samples = 256;
                            for s in 0..=samples {
                                let t = lo + (hi - lo) * s as f32 / samples as f32;
                                let (x, z) = if east { (ra[2], t) } else { (t, ra[3]) };
                                let (ea, eb) = if east {
                                    (EDGE_EAST, EDGE_WEST)
                                } else {
                                    (EDGE_SOUTH, EDGE_NORTH)
                                };
                                let ha = edge_height(&meshes[ia], 17, ea, x, z);
                                let hb = edge_height(&meshes[ib], 17, eb, x, z);
                                assert!(
                                    (ha - hb).abs() <= 1e-4,
                                    "crack {a:?}|{b:?} at ({x},{z}): {ha} vs {hb}"
                                );
                            }
                        }
                    }
                }
            }
        }
        assert!(pairs > 1000 && mixed > 100, "pairs {pairs}, mixed {mixed}");
    }

    #[test]
    fn stitching_only_moves_odd_edge_vertices_and_flat_matches() {
        let f = field(129);
        let layout = LodLayout::new(129, 512.0, 16, 3).unwrap();
        let leaf = Leaf {
            key: NodeKey {
                level: 2,
                x: 1,
                z: 2,
            },
            stitch: EDGE_WEST | EDGE_SOUTH,
        };
        let plain = node_mesh(&f, &layout, Leaf { stitch: 0, ..leaf }, false);
        let st = node_mesh(&f, &layout, leaf, false);
        let (x0, z0) = layout.origin(leaf.key);
        assert_eq!(plain, f.region_mesh(x0, z0, 16, 1, false));
        let mut moved = 0;
        for j in 0..17 {
            for i in 0..17 {
                let k = j * 17 + i;
                let on = (i == 0 && j % 2 == 1) || (j == 16 && i % 2 == 1);
                if on {
                    assert_eq!(
                        st.positions[k][1],
                        (plain.positions[k - if i == 0 { 17 } else { 1 }][1]
                            + plain.positions[k + if i == 0 { 17 } else { 1 }][1])
                            * 0.5
                    );
                    moved += 1;
                } else {
                    assert_eq!(st.positions[k], plain.positions[k]);
                }
            }
        }
        assert_eq!(moved, 16);
        let flat = node_mesh(&f, &layout, leaf, true);
        assert_eq!(flat.positions.len(), 16 * 16 * 6);
        // Flat triangles use the stitched corner positions.
        assert_eq!(flat.positions[0], st.positions[0]);
        assert_eq!(flat.positions[(15 * 16) * 6 + 5], st.positions[16 * 17]);
    }
}
