//! `IslandSync` over an `IslandWorld`: the world's layout travels once, each edit names its cell,
//! and every peer streams its own islands. A cell's edits are applied, in the log's order, to
//! that cell's detailed island whenever it is loaded; the world keeps the result in the cell's
//! paint while the island is unloaded (`IslandWorld`'s per-cell edits), so each edit is applied
//! once per peer. Peers report one fingerprint per detailed cell; the authority compares those
//! of the cells it has loaded too.

use crate::brush::terrain_brush::TerrainBrush;
use crate::world::island_world::IslandWorld;
use godot::prelude::*;
use island_core::sync::{CellEdit, Fingerprint, WorldEditLog};
use std::collections::HashMap;
use std::time::Instant;

/// Reports from peers about cells the authority has not loaded, kept at most.
const MAX_PENDING: usize = 1024;

/// What `IslandSync` keeps for a world (plain data; the nodes are passed in).
#[derive(Default)]
pub struct WorldSync {
    /// Every accepted edit, in order (added through [`WorldSync::push`] / [`WorldSync::set_log`],
    /// which keep `counts`).
    log: WorldEditLog,
    /// Per cell: how many edits of the log it has.
    counts: HashMap<[i32; 2], u32>,
    /// Per cell: how many of its edits are applied (in the world's paint of that cell).
    pub applied: HashMap<[i32; 2], u32>,
    /// Peer: per cell, the island and edit count last reported.
    pub reported: HashMap<[i32; 2], (InstanceId, u32)>,
    /// Authority: fingerprints from peers not compared yet, by (peer, cell).
    pub pending: HashMap<(i32, [i32; 2]), (Fingerprint, String)>,
    /// Authority: the edit count each (peer, cell) was last verified at.
    pub verified: HashMap<(i32, [i32; 2]), u32>,
}

/// The result of comparing one peer's cell.
pub struct Verdict {
    /// The peer.
    pub peer: i32,
    /// The cell.
    pub cell: [i32; 2],
    /// Ok(fingerprint hex) or Err(reason).
    pub result: Result<String, String>,
}

impl WorldSync {
    /// The log.
    pub fn log(&self) -> &WorldEditLog {
        &self.log
    }

    /// Append an accepted edit.
    pub fn push(&mut self, e: CellEdit) {
        *self.counts.entry(e.cell).or_default() += 1;
        self.log.edits.push(e);
    }

    /// Take a whole log (a peer's first message).
    pub fn set_log(&mut self, log: WorldEditLog) {
        self.counts.clear();
        for e in &log.edits {
            *self.counts.entry(e.cell).or_default() += 1;
        }
        self.log = log;
    }

    /// Edits of the log for `cell`.
    pub fn count_for(&self, cell: [i32; 2]) -> u32 {
        self.counts.get(&cell).copied().unwrap_or(0)
    }

    /// Edits in the log.
    pub fn len(&self) -> usize {
        self.log.edits.len()
    }

    /// Whether the log has no edit.
    pub fn is_empty(&self) -> bool {
        self.log.edits.is_empty()
    }

    /// Edits applied, over all cells.
    pub fn applied_total(&self) -> u32 {
        self.applied.values().sum()
    }

    /// The `k`-th edit of `cell`.
    fn nth_of(&self, cell: [i32; 2], k: u32) -> Option<&CellEdit> {
        self.log
            .edits
            .iter()
            .filter(|e| e.cell == cell)
            .nth(k as usize)
    }

    /// Cells with edits not applied yet.
    fn behind(&self) -> Vec<[i32; 2]> {
        let mut v: Vec<[i32; 2]> = self
            .counts
            .iter()
            .filter(|(c, n)| self.applied.get(*c).copied().unwrap_or(0) < **n)
            .map(|(c, _)| *c)
            .collect();
        v.sort();
        v
    }

    /// Apply the next edits of cells whose detailed island is loaded and idle, within
    /// `budget_ms`. Returns how many were applied.
    pub fn apply(
        &mut self,
        world: &Gd<IslandWorld>,
        brush: &mut Gd<TerrainBrush>,
        budget_ms: f64,
    ) -> usize {
        let t = Instant::now();
        let mut n = 0;
        for cell in self.behind() {
            loop {
                if t.elapsed().as_secs_f64() * 1000.0 > budget_ms {
                    return n;
                }
                let Some(isl) = world.bind().detail_island([cell[0] as i64, cell[1] as i64]) else {
                    break;
                };
                if isl.bind().is_generating() || isl.bind().island().is_none() {
                    break;
                }
                let k = self.applied.get(&cell).copied().unwrap_or(0);
                let Some(edit) = self.nth_of(cell, k).cloned() else {
                    break;
                };
                let path = brush.get_path_to(&isl);
                brush.set("island", &path.to_variant());
                if let Err(e) = brush.bind_mut().apply_edit(&edit.command) {
                    godot_warn!(
                        "IslandSync: edit {k} of cell ({}, {}) did nothing: {e}",
                        cell[0],
                        cell[1]
                    );
                }
                self.applied.insert(cell, k + 1);
                n += 1;
            }
        }
        n
    }

    /// Whether every loaded detailed island has all its edits and is idle.
    pub fn idle(&self, world: &Gd<IslandWorld>) -> bool {
        let w = world.bind();
        self.behind()
            .iter()
            .all(|c| w.detail_island([c[0] as i64, c[1] as i64]).is_none())
            && w.detail_cells()
                .iter()
                .all(|(_, isl)| !isl.bind().is_generating() && isl.bind().island().is_some())
    }

    /// The fingerprint of `cell`'s detailed island when it is loaded, idle and has all its
    /// edits.
    pub fn fingerprint(&self, world: &Gd<IslandWorld>, cell: [i32; 2]) -> Option<Fingerprint> {
        let isl = world
            .bind()
            .detail_island([cell[0] as i64, cell[1] as i64])?;
        let want = self.count_for(cell);
        if self.applied.get(&cell).copied().unwrap_or(0) != want || isl.bind().is_generating() {
            return None;
        }
        // Bound first: the borrow guard must end before `isl` does.
        let f = isl.bind().fingerprint(want);
        f
    }

    /// Peer: the cells to report now (caught up, not reported at this count for this island),
    /// with their fingerprint and backend.
    pub fn reports(&mut self, world: &Gd<IslandWorld>) -> Vec<([i32; 2], Fingerprint, String)> {
        let cells = world.bind().detail_cells();
        let mut out = Vec::new();
        for (c, isl) in cells {
            let cell = [c[0] as i32, c[1] as i32];
            let Some(f) = self.fingerprint(world, cell) else {
                continue;
            };
            let key = (isl.instance_id(), f.edits);
            if self.reported.get(&cell) == Some(&key) {
                continue;
            }
            self.reported.insert(cell, key);
            out.push((cell, f, isl.bind().generated_backend()));
        }
        out
    }

    /// Authority: keep a peer's report until the cell can be compared.
    pub fn keep(&mut self, peer: i32, cell: [i32; 2], f: Fingerprint, backend: String) {
        if self.pending.len() >= MAX_PENDING && !self.pending.contains_key(&(peer, cell)) {
            return;
        }
        self.pending.insert((peer, cell), (f, backend));
    }

    /// Authority: compare the reports of cells loaded here at the same edit count.
    pub fn compare(&mut self, world: &Gd<IslandWorld>) -> Vec<Verdict> {
        let keys: Vec<(i32, [i32; 2])> = self.pending.keys().copied().collect();
        let mut out = Vec::new();
        for (peer, cell) in keys {
            let Some(mine) = self.fingerprint(world, cell) else {
                continue;
            };
            let (theirs, backend) = self.pending[&(peer, cell)].clone();
            if theirs.edits != mine.edits {
                continue;
            }
            self.pending.remove(&(peer, cell));
            let diffs = mine.differences(&theirs);
            let result = if diffs.is_empty() {
                self.verified.insert((peer, cell), theirs.edits);
                Ok(mine.hex())
            } else {
                Err(format!(
                    "cell ({}, {}) after {} edits: the peer's {} differ from the authority's \
                     (peer backend {backend})",
                    cell[0],
                    cell[1],
                    theirs.edits,
                    diffs.join(", ")
                ))
            };
            out.push(Verdict { peer, cell, result });
        }
        out
    }
}
