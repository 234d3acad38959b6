//! [`IslandParts`]: the collaborators of a `ProceduralIsland` that own Godot nodes under it (the
//! chunk pool, the LOD meshes, the water surfaces, the scatter MultiMeshes) and the generation
//! job that fills the chunk pool. The node keeps them in one field and lends them, with itself
//! as the parent node, through one borrow helper (`ProceduralIsland::with_parts`), so the node's
//! own methods can be called re-entrantly while they add or free children.

use crate::island::chunk_pool::ChunkPool;
use crate::island::generation::GenerationJob;
use crate::island::lod::LodRuntime;
use crate::scatter::scatter_nodes::ScatterNodes;
use crate::water::water_nodes::WaterNodes;

/// See the module documentation.
#[derive(Default)]
pub struct IslandParts {
    /// Background worker, pending request, chunk build.
    pub job: GenerationJob,
    /// Chunk mesh and collider nodes.
    pub chunks: ChunkPool,
    /// Quadtree LOD nodes.
    pub lod: LodRuntime,
    /// Sea, river and lake surfaces.
    pub water: WaterNodes,
    /// Scatter MultiMeshes (and scene instances).
    pub scatter: ScatterNodes,
}
