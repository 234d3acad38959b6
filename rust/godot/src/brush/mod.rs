//! Painting and sculpting: the `TerrainBrush` node and the `SplatPaint` resource it writes.

pub mod splat_paint;
pub mod terrain_brush;
