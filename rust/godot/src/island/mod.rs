//! The `ProceduralIsland` node ([`procedural_island`]) and its collaborators: the generation
//! ([`generation`], [`worker`]), chunks and colliders ([`chunk_data`], [`chunk_pool`], [`surface`]),
//! [`lod`], the terrain material ([`material`], [`terrain_layer`], [`splat_maps`]), runtime
//! queries and navigation, statistics and the per-frame budget.

pub mod chunk_data;
pub mod chunk_pool;
pub mod coast_mask_watch;
pub mod frame_watch;
pub mod generation;
pub mod island_parts;
pub mod island_path;
pub mod island_stamp;
pub mod layout_node;
pub mod lod;
pub mod material;
pub mod navigation;
pub mod node_hooks;
pub mod procedural_island;
pub mod properties;
pub mod runtime_maps;
pub mod runtime_queries;
pub mod server_mode;
pub mod splat_maps;
pub mod stats;
pub mod surface;
pub mod terrain_layer;
pub mod worker;
pub mod world_meta;
