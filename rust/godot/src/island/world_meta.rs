//! What an island knows of the `IslandWorld` that made it (the world's module depends on the
//! island's, not the other way round): the metas that mark world islands and the world's frame
//! log switch.

/// Meta of an island the world streams: its cell (`Vector2i`).
pub const CELL_META: &str = "island_world_cell";
/// Meta of a pinned island (a child the scene owns, see `IslandWorld.pin_island`): the cell it
/// stands for (`Vector2i`).
pub const PIN_META: &str = "island_world_pin";

/// `ISLAND_WORLD_FRAME_LOG=MS`: print every world frame over MS milliseconds, part by part
/// (a diagnostic for the frame budget; off when unset).
pub fn frame_log_threshold() -> Option<f64> {
    static T: std::sync::OnceLock<Option<f64>> = std::sync::OnceLock::new();
    *T.get_or_init(|| {
        std::env::var("ISLAND_WORLD_FRAME_LOG")
            .ok()
            .and_then(|v| v.parse().ok())
    })
}
