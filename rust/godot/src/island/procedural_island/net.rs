//! What `IslandSync` needs from the island: its parameters in the network's form, the
//! parameters received from an authority, and the fingerprint of what it shows.

use super::*;
use island_core::sync::{self, Fingerprint, ParamsMessage};

impl ProceduralIsland {
    /// The generator parameters: the properties', or those an `IslandSync` authority sent
    /// (with this island's own coast mask; the authority's travels as a hash).
    pub(super) fn generation_params(&self) -> Result<island_core::IslandParams, String> {
        let own = self.params()?;
        Ok(match &self.net_params {
            Some(p) => island_core::IslandParams {
                coast_mask: own.coast_mask,
                ..p.clone()
            },
            None => own,
        })
    }

    /// Take the generator parameters of `m` (from an `IslandSync` authority): the properties
    /// show them, and they are used as they are (the shaping curve as the authority sampled
    /// it) until [`ProceduralIsland::clear_net_params`]. Does not regenerate.
    pub fn set_net_params(&mut self, m: &ParamsMessage) {
        self.load_params(&m.params);
        self.sculpt_enabled = m.sculpt_enabled;
        self.backend = m.backend as i32;
        self.net_params = Some(m.params.clone());
    }

    /// Generate from the properties again (the sync node left).
    pub fn clear_net_params(&mut self) {
        self.net_params = None;
    }

    /// The parameters as an `IslandSync` authority sends them (validated), with `base_paint`
    /// (the paint hash before the first logged edit).
    pub fn net_params_message(&self, base_paint: u64) -> Result<ParamsMessage, String> {
        let params = self.generation_params()?;
        let mut check = params.clone();
        check.sculpt = None;
        check.validate().map_err(|e| e.to_string())?;
        let backend = u8::try_from(self.backend)
            .ok()
            .filter(|b| *b <= 2)
            .ok_or(format!("invalid parameter `backend`: {}", self.backend))?;
        Ok(ParamsMessage {
            addon_version: env!("CARGO_PKG_VERSION").to_string(),
            coast_mask_hash: coast_mask_hash(&params),
            params,
            sculpt_enabled: self.sculpt_enabled,
            backend,
            base_paint_hash: base_paint,
        })
    }

    /// [`sync::hash_bytes`] of the coast mask these properties use (0 without one).
    pub fn coast_mask_hash(&self) -> Result<u64, String> {
        Ok(coast_mask_hash(&self.params()?))
    }

    /// Hash of the paint, scatter erase masks and sculpt layer ([`sync::paint_hash`]).
    pub fn paint_hash(&self) -> u64 {
        let Some(p) = &self.splat_paint else {
            return sync::paint_hash(None, &[], None);
        };
        let p = p.bind();
        let n = p.get_resolution().max(0) as usize;
        let masks = p.erase_masks_for(self.scatter_layers.len().max(64), n.max(2));
        sync::paint_hash(p.layer(), &masks, p.sculpt())
    }

    /// The fingerprint of the shown island after `edits` edits (None before a generation).
    pub fn fingerprint(&self, edits: u32) -> Option<Fingerprint> {
        let island = self.island.as_deref()?;
        Some(Fingerprint::of(island, self.paint_hash(), edits))
    }

    /// The backend that generated the shown island (`cpu`, `gpu`; empty before one).
    pub fn generated_backend(&self) -> String {
        self.last_stats
            .to_dictionary()
            .get("backend")
            .map(|v| v.to_string())
            .unwrap_or_default()
    }
}

fn coast_mask_hash(p: &island_core::IslandParams) -> u64 {
    p.coast_mask.as_ref().map_or(0, |m| {
        let (w, h) = m.size();
        let mut bytes = Vec::with_capacity(16 + m.values().len() * 4);
        bytes.extend_from_slice(&(w as u64).to_le_bytes());
        bytes.extend_from_slice(&(h as u64).to_le_bytes());
        for v in m.values() {
            bytes.extend_from_slice(&v.to_bits().to_le_bytes());
        }
        sync::hash_bytes(&bytes)
    })
}
