//! [`Runtime`]: the maps behind a `ProceduralIsland`'s runtime queries (`find_points`,
//! `get_surface_at`, see `runtime_queries`), built on the first query after each generation and
//! kept until the next one. The node's state holds it; it does not depend on the node.

use godot::prelude::*;
use island_core::surface_query::SurfaceMaps;
use island_core::Island;
use std::cell::{OnceCell, RefCell};
use std::sync::{Arc, Weak};

/// Runtime-query state of one island (the node's one field for this module).
#[derive(Default)]
pub struct Runtime {
    /// The maps of the island they were built from (compared by pointer, dropped with it).
    maps: RefCell<Option<(Weak<Island>, Arc<SurfaceMaps>)>>,
    /// The dictionary keys of `ProceduralIsland.get_surface_at`, made once.
    keys: OnceCell<[Variant; 9]>,
}

impl Runtime {
    /// The surface maps of `island`, built now if the cache holds another island's.
    pub fn maps(&self, island: &Arc<Island>) -> Arc<SurfaceMaps> {
        let mut cache = self.maps.borrow_mut();
        if let Some((w, m)) = cache.as_ref() {
            if w.as_ptr() == Arc::as_ptr(island) && w.strong_count() > 0 {
                return m.clone();
            }
        }
        let m = Arc::new(SurfaceMaps::of(island));
        *cache = Some((Arc::downgrade(island), m.clone()));
        m
    }

    pub(crate) fn keys(&self) -> &[Variant; 9] {
        self.keys.get_or_init(|| {
            [
                "layer",
                "layer_name",
                "weights",
                "biome",
                "water",
                "water_depth",
                "slope_degrees",
                "wetness",
                "height",
            ]
            .map(|k| StringName::from(k).to_variant())
        })
    }
}
