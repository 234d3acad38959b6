//! The sea, river and lake surfaces and the water summary made off the main thread.

pub mod water_nodes;
pub mod water_summary;
