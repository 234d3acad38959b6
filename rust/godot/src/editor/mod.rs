//! Editor support: the inspector header's picture, framing, and auto-regenerate.

pub mod auto_regenerate;
pub mod editor_view;
