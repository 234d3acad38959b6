//! Multiplayer: [`island_sync`] (the `IslandSync` node). The messages themselves (parameters,
//! edit commands and log, fingerprints) are engine-free: `island_core::sync`.

pub mod island_sync;
