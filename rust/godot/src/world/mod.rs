//! The island world: [`island_world`] (the `IslandWorld` node), [`plan`] (which islands at which
//! level, plain data) and [`ocean`] (the one sea surface and floor). Placement (which island in
//! which cell) is engine-free: `island_core::world`.

pub mod island_world;
pub mod ocean;
pub mod plan;
