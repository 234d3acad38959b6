//! The island's full-resolution chunk nodes: one internal `MeshInstance3D` per chunk, with a
//! `StaticBody3D` / `CollisionShape3D` / `HeightMapShape3D` collider, reused between regenerates
//! while the chunk count stays the same.
//!
//! The pool owns the nodes and the verified surface layouts ([`SurfaceCache`]); the parent
//! (the `ProceduralIsland`) is passed to the calls that add or remove children.
//!
//! When an asynchronous build needs another chunk count (a new `chunk_size` or `resolution`),
//! the previous island's nodes are *retired* ([`ChunkPool::retire`]): they stay in the scene,
//! drawn and colliding, while the new chunks are built hidden with their colliders disabled;
//! [`ChunkPool::swap_in`] then shows the new chunks and frees the old ones in the same frame.
//! So every part of the island has a mesh and a collider in every frame of a rebuild.
//!
//! With LOD on the chunk nodes carry no mesh (see `ChunkOptions::meshes`): the LOD nodes draw
//! the island and the chunk nodes keep their colliders. [`ChunkPool::meshless`] lists the chunks
//! whose surface must be built before they are drawn again.

use crate::island::chunk_data::{chunk_data_undigested, ChunkData, ChunkOptions};
use crate::island::surface::SurfaceCache;
use godot::classes::node::InternalMode;
use godot::classes::{
    ArrayMesh, CollisionShape3D, HeightMapShape3D, Material, MeshInstance3D, Node3D, StaticBody3D,
};
use godot::prelude::*;
use island_core::{ChunkCollider, Island};

/// Godot objects of one chunk, reused between regenerates.
struct ChunkNodes {
    instance: Gd<MeshInstance3D>,
    mesh: Gd<ArrayMesh>,
    collider: Option<ColliderNodes>,
    /// Chunk (cx, cz) the node is named after.
    named: Option<(u32, u32)>,
    /// The mesh holds this island's surface (false: empty, LOD draws the island).
    has_surface: bool,
    /// Digests of the chunk data the mesh and the collider were last built from
    /// ([`ChunkPool::mark`]); `None` after any other change to them.
    mesh_content: Option<u128>,
    collider_content: Option<u128>,
}

struct ColliderNodes {
    body: Gd<StaticBody3D>,
    shape_node: Gd<CollisionShape3D>,
    shape: Gd<HeightMapShape3D>,
    /// Position and scale last given to `shape_node`.
    placed: Option<([f32; 3], f32)>,
}

/// The chunk node pool (see the module doc).
#[derive(Default)]
pub struct ChunkPool {
    nodes: Vec<ChunkNodes>,
    /// The previous island's nodes, kept in the scene while `nodes` is built hidden.
    retired: Vec<ChunkNodes>,
    /// Verified Godot surface layouts (chunk and LOD meshes).
    pub surfaces: SurfaceCache,
    /// Material given to new chunk nodes.
    material: Option<Gd<Material>>,
}

impl ChunkPool {
    /// Number of pooled chunk nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Whether someone freed one of the internal chunk nodes.
    pub fn any_freed(&self) -> bool {
        self.nodes.iter().any(|c| !c.instance.is_instance_valid())
    }

    /// `surfaces.fast` / `surfaces.slow` now (to count a build's surfaces).
    pub fn surface_counts(&self) -> (u64, u64) {
        (self.surfaces.fast, self.surfaces.slow)
    }

    /// The material new chunk nodes get (existing nodes keep theirs, see [`Self::apply_material`]).
    pub fn use_material(&mut self, material: Option<Gd<Material>>) {
        self.material = material;
    }

    /// Give every chunk node `material` (and use it for new ones).
    pub fn apply_material(&mut self, material: Option<Gd<Material>>) {
        for c in &mut self.nodes {
            if c.instance.is_instance_valid() {
                c.instance.set_material_override(material.as_ref());
            }
        }
        self.material = material;
    }

    /// Material of the first chunk node (what the LOD nodes copy).
    pub fn first_material(&self) -> Option<Gd<Material>> {
        self.nodes
            .first()
            .filter(|c| c.instance.is_instance_valid())
            .and_then(|c| c.instance.get_material_override())
    }

    /// Create nodes until there are `count`.
    pub fn grow_to(&mut self, parent: &mut Gd<Node3D>, count: usize) {
        while self.nodes.len() < count {
            self.new_node(parent);
        }
    }

    /// Chunks whose mesh holds no surface (built with LOD on), in order.
    pub fn meshless(&self) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&i| !self.nodes[i].has_surface)
            .collect()
    }

    /// Whether any chunk's mesh holds no surface.
    pub fn missing_surfaces(&self) -> bool {
        self.nodes.iter().any(|c| !c.has_surface)
    }

    /// Whether chunk `i`'s mesh (`.0`) and collider (`.1`) were built from chunk data of
    /// these digests ([`ChunkData::mesh_digest`], [`ChunkData::collider_digest`]) and nothing
    /// changed them since: setting that data again would change nothing.
    pub fn holds(&self, i: usize, mesh: u128, collider: u128) -> (bool, bool) {
        let Some(c) = self.nodes.get(i).filter(|c| c.instance.is_instance_valid()) else {
            return (false, false);
        };
        let collider_valid = c
            .collider
            .as_ref()
            .is_none_or(|n| n.body.is_instance_valid() && n.shape_node.is_instance_valid());
        (
            c.mesh_content == Some(mesh),
            collider_valid && c.collider_content == Some(collider),
        )
    }

    /// Chunk `i`'s mesh and collider now hold chunk data of these digests (see
    /// [`Self::holds`]).
    pub fn mark(&mut self, i: usize, mesh: u128, collider: u128) {
        if let Some(c) = self.nodes.get_mut(i) {
            c.mesh_content = Some(mesh);
            c.collider_content = Some(collider);
        }
    }

    /// Whether chunk `i` has a surface (false also when there is no such chunk).
    pub fn has_surface(&self, i: usize) -> bool {
        self.nodes.get(i).is_some_and(|c| c.has_surface)
    }

    /// Chunk `i`'s mesh from its encoded surface; an empty surface (`vertex_count` 0) empties the
    /// mesh (LOD on: the chunk keeps only its collider).
    pub fn set_surface(
        &mut self,
        parent: &mut Gd<Node3D>,
        i: usize,
        data: &ChunkData,
        island: &Island,
        cs: usize,
        flat: bool,
    ) {
        let c = self.node(parent, i);
        if c.named != Some((data.cx, data.cz)) {
            c.instance
                .set_name(&format!("Chunk_{}_{}", data.cx, data.cz));
            c.named = Some((data.cx, data.cz));
        }
        // Our encoded bytes; the arrays only for the first chunk of a shape (to verify the
        // encoding against Godot's) or when the encoding does not match this Godot.
        let (field, splat) = (&island.field, &island.splat);
        let c = &mut self.nodes[i];
        c.mesh_content = None;
        c.has_surface = data.surface.vertex_count > 0;
        if !c.has_surface {
            if c.mesh.get_surface_count() > 0 {
                c.mesh.clear_surfaces();
            }
            return;
        }
        self.surfaces.set_surface(&mut c.mesh, &data.surface, || {
            let m = field.chunk_mesh(data.cx as usize, data.cz as usize, cs, flat);
            let colors = crate::island::chunk_data::mesh_colors(&m, splat, field.resolution);
            (m, colors)
        });
    }

    /// Build and set the full-resolution surfaces of `chunks` from `island` (the rayon pool
    /// encodes a batch, the main thread copies it into the meshes) for about `budget_ms` (at
    /// least one batch; infinite: all of them). Returns how many were set (a prefix of
    /// `chunks`).
    pub fn build_surfaces(
        &mut self,
        parent: &mut Gd<Node3D>,
        island: &Island,
        chunks: &[usize],
        flat: bool,
        budget_ms: f64,
    ) -> usize {
        use rayon::prelude::*;
        let cs = island.params.chunk_size as usize;
        let options = ChunkOptions {
            chunk_size: cs,
            flat,
            collision: false,
            meshes: true,
        };
        let t = std::time::Instant::now();
        let mut done = 0;
        for batch in chunks.chunks(2 * rayon::current_num_threads().max(1)) {
            if done > 0 && t.elapsed().as_secs_f64() * 1e3 >= budget_ms {
                break;
            }
            let data: Vec<ChunkData> = batch
                .par_iter()
                .map(|&i| chunk_data_undigested(&island.field, &island.splat, options, i))
                .collect();
            for (&i, d) in batch.iter().zip(&data) {
                self.set_surface(parent, i, d, island, cs, flat);
            }
            done += batch.len();
        }
        done
    }

    /// Chunk `i`'s collider: the heights of `col`, or none (the body is removed).
    pub fn set_collider(&mut self, parent: &mut Gd<Node3D>, i: usize, col: Option<&ChunkCollider>) {
        let c = self.node(parent, i);
        c.collider_content = None;
        match col {
            Some(col) => {
                if c.collider
                    .as_ref()
                    .is_some_and(|n| !n.body.is_instance_valid())
                {
                    c.collider = None;
                }
                let nodes = c.collider.get_or_insert_with(|| {
                    let mut body = StaticBody3D::new_alloc();
                    body.set_name("StaticBody3D");
                    let mut shape_node = CollisionShape3D::new_alloc();
                    shape_node.set_name("CollisionShape3D");
                    let shape = HeightMapShape3D::new_gd();
                    shape_node.set_shape(&shape);
                    body.add_child(&shape_node);
                    c.instance.add_child(&body);
                    ColliderNodes {
                        body,
                        shape_node,
                        shape,
                        placed: None,
                    }
                });
                let (w, d) = (col.width as i32, col.depth as i32);
                if nodes.shape.get_map_width() != w {
                    nodes.shape.set_map_width(w);
                }
                if nodes.shape.get_map_depth() != d {
                    nodes.shape.set_map_depth(d);
                }
                nodes
                    .shape
                    .set_map_data(&PackedFloat32Array::from(&col.heights[..]));
                // Pooled nodes keep their chunk: the transform rarely changes.
                let place = (col.offset, col.cell_size);
                if nodes.placed != Some(place) || !nodes.shape_node.is_instance_valid() {
                    nodes.shape_node.set_position(Vector3::new(
                        col.offset[0],
                        col.offset[1],
                        col.offset[2],
                    ));
                    nodes
                        .shape_node
                        .set_scale(Vector3::new(col.cell_size, 1.0, col.cell_size));
                    nodes.placed = Some(place);
                }
                if self.retired.is_empty() {
                    return;
                }
                // Staging: the retired island collides until the swap.
                self.set_collider_enabled(i, false);
            }
            None => {
                if let Some(mut nodes) = c.collider.take() {
                    if nodes.body.is_instance_valid() {
                        c.instance.remove_child(&nodes.body);
                        nodes.body.queue_free();
                    }
                }
            }
        }
    }

    /// Show or hide the chunk meshes from `start` on (their colliders stay).
    pub fn set_visible_from(&mut self, start: usize, visible: bool) {
        for c in self.nodes.iter_mut().skip(start) {
            if c.instance.is_instance_valid() {
                c.instance.set_visible(visible);
            }
        }
    }

    /// Whether chunk `i` has a collider (enabled or not).
    pub fn has_collider(&self, i: usize) -> bool {
        self.nodes.get(i).is_some_and(|c| {
            c.collider
                .as_ref()
                .is_some_and(|col| col.body.is_instance_valid())
        })
    }

    /// Enable or disable chunk `i`'s collider (if it has one).
    pub fn set_collider_enabled(&mut self, i: usize, enabled: bool) {
        if let Some(col) = self.nodes[i]
            .collider
            .as_mut()
            .filter(|col| col.shape_node.is_instance_valid())
        {
            col.shape_node.set_disabled(!enabled);
        }
    }

    /// Remove and free every chunk node (retired ones included).
    pub fn free_all(&mut self, parent: &mut Gd<Node3D>) {
        free_nodes(parent, std::mem::take(&mut self.nodes));
        free_nodes(parent, std::mem::take(&mut self.retired));
    }

    /// Keep the current nodes in the scene as they are (drawn, colliding) and start an empty
    /// pool whose new nodes are hidden with disabled colliders until [`ChunkPool::swap_in`].
    /// When a retired island is already shown, the half-built hidden nodes are dropped instead.
    pub fn retire(&mut self, parent: &mut Gd<Node3D>) {
        if self.is_staging() {
            free_nodes(parent, std::mem::take(&mut self.nodes));
            return;
        }
        self.retired = std::mem::take(&mut self.nodes);
        for (i, c) in self.retired.iter_mut().enumerate() {
            if c.instance.is_instance_valid() {
                // Free the `Chunk_x_z` names for the new nodes.
                c.instance.set_name(&format!("RetiredChunk_{i}"));
            }
            c.named = None;
        }
    }

    /// Whether a retired island is shown while the pool's nodes are built hidden.
    pub fn is_staging(&self) -> bool {
        !self.retired.is_empty()
    }

    /// End staging (nothing when not staging): free the retired nodes and show the pool's
    /// meshes and colliders, in the same frame.
    pub fn swap_in(&mut self, parent: &mut Gd<Node3D>) {
        if !self.is_staging() {
            return;
        }
        free_nodes(parent, std::mem::take(&mut self.retired));
        self.set_visible_from(0, true);
        for i in 0..self.nodes.len() {
            self.set_collider_enabled(i, true);
        }
    }

    /// Pooled node `i`, (re)creating the pool when someone freed an internal chunk.
    fn node(&mut self, parent: &mut Gd<Node3D>, i: usize) -> &mut ChunkNodes {
        if i < self.nodes.len() && !self.nodes[i].instance.is_instance_valid() {
            // Someone freed an internal chunk: rebuild the pool from scratch.
            self.free_all(parent);
        }
        self.grow_to(parent, i + 1);
        &mut self.nodes[i]
    }

    /// Append one (empty) chunk node to the pool (hidden while staging).
    fn new_node(&mut self, parent: &mut Gd<Node3D>) {
        let mut instance = MeshInstance3D::new_alloc();
        let mesh = ArrayMesh::new_gd();
        instance.set_mesh(&mesh);
        if self.is_staging() {
            instance.set_visible(false);
        }
        instance.set_material_override(self.material.as_ref());
        parent
            .add_child_ex(&instance)
            .internal(InternalMode::BACK)
            .done();
        self.nodes.push(ChunkNodes {
            instance,
            mesh,
            collider: None,
            named: None,
            has_surface: false,
            mesh_content: None,
            collider_content: None,
        });
    }
}

/// Remove and free `nodes` from `parent`.
fn free_nodes(parent: &mut Gd<Node3D>, nodes: Vec<ChunkNodes>) {
    for mut c in nodes {
        if c.instance.is_instance_valid() {
            parent.remove_child(&c.instance);
            c.instance.queue_free();
        }
    }
}
