//! Vegetation and rocks: the `ScatterLayer` resource and the scatter MultiMeshes.

pub mod layer_moves;
pub mod scatter_layer;
pub mod scatter_nodes;
