//! Multiplayer: [`island_sync`] (the `IslandSync` node) and [`world_sync`] (its state under an
//! `IslandWorld`). The messages themselves (parameters,
//! edit commands and log, fingerprints) are engine-free: `island_core::sync`.

pub mod island_sync;
pub mod world_sync;
