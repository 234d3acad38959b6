//! Files and exports: bake to a scene or glTF, heightmap and image files, how layers and paint are saved.

pub mod bake;
pub mod heightmap_io;
pub mod island_io;
pub mod stored_resources;
