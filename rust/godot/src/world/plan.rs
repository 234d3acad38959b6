//! What the world should have loaded, as plain data (no Godot objects): for each island near a
//! target, the level it should be shown at and the order in which the work is done.
//!
//! Levels, by the distance from the nearest target to the island's map square (0 inside it):
//! [`Level::Coarse`] within the view distance (a low-resolution generation of the same island),
//! [`Level::Detail`] within the detail distance (full resolution, water, scatter), with
//! colliders within the collision distance ([`colliders_for`]).
//! An island already loaded keeps its level until the distance passes the ring by
//! [`HYSTERESIS`] (so a target on a ring's edge does not make it flicker), and is freed beyond
//! [`FREE_FACTOR`] × the view distance.
//!
//! Work order: nearest first, where the distance is the smaller of the distance now and the
//! distance from where the target will be in [`LOOKAHEAD_S`] seconds at its velocity, so the
//! islands ahead of a moving target come before the ones behind it.

use island_core::world::{cells_in_rect, island_at, IslandPlacement, WorldParams};

/// Seconds ahead of a moving target that count as near as the target itself.
pub const LOOKAHEAD_S: f64 = 20.0;
/// Islands are freed beyond this factor of the view distance.
pub const FREE_FACTOR: f64 = 1.2;
/// A loaded level is kept until its ring is passed by this fraction of the ring's distance.
pub const HYSTERESIS: f64 = 0.1;
/// Most cells looked at per target (the view distance is capped so the scan stays bounded).
pub const MAX_CELLS_PER_TARGET: usize = 4096;

/// How much of an island is loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Nothing.
    None = 0,
    /// The coarse, far mesh.
    Coarse = 1,
    /// Full resolution with colliders, water and scatter.
    Detail = 2,
}

/// One target the world streams around: position and velocity (world metres, metres per
/// second).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Target {
    pub position: [f64; 3],
    pub velocity: [f64; 3],
}

/// The ring distances, metres (validated by the node: 0 < collision ≤ detail ≤ view).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rings {
    pub view: f64,
    pub detail: f64,
    pub collision: f64,
}

/// An island the world should hold, with its level and work priority (smaller first).
#[derive(Clone, Debug, PartialEq)]
pub struct Want {
    pub placement: IslandPlacement,
    pub level: Level,
    /// Distance from the nearest target now, metres.
    pub distance: f64,
    /// Work order key (see the module doc), metres.
    pub priority: f64,
}

/// Horizontal distance from `(x, z)` to the square `[x0, z0, x1, z1]` (0 inside).
pub fn distance_to_square(x: f64, z: f64, b: [f64; 4]) -> f64 {
    let dx = (b[0] - x).max(x - b[2]).max(0.0);
    let dz = (b[1] - z).max(z - b[3]).max(0.0);
    (dx * dx + dz * dz).sqrt()
}

/// The level an island at `distance` should have, given what it has now (`current`).
pub fn level_for(distance: f64, rings: &Rings, current: Level) -> Level {
    let keep = |ring: f64, l: Level| current >= l && distance <= ring * (1.0 + HYSTERESIS);
    if distance <= rings.detail || keep(rings.detail, Level::Detail) {
        Level::Detail
    } else if distance <= rings.view || keep(rings.view, Level::Coarse) {
        Level::Coarse
    } else if current != Level::None && distance <= rings.view * FREE_FACTOR {
        // Between the view ring (+ hysteresis) and the free distance: keep what is there, but
        // no more than the coarse mesh.
        Level::Coarse
    } else {
        Level::None
    }
}

/// Whether a detailed island at `distance` should have colliders, given whether it has them
/// (`current`): within the collision ring, kept until the ring is passed by [`HYSTERESIS`].
pub fn colliders_for(distance: f64, rings: &Rings, current: bool) -> bool {
    distance <= rings.collision || (current && distance <= rings.collision * (1.0 + HYSTERESIS))
}

/// Every island within [`FREE_FACTOR`] × the view distance of a target, with the level it
/// should have (`current` tells the level each cell has now), nearest work first. Cells
/// without an island are left out; so are islands whose level is [`Level::None`].
pub fn plan(
    params: &WorldParams,
    targets: &[Target],
    rings: &Rings,
    current: impl Fn([i64; 2]) -> Level,
) -> Vec<Want> {
    let mut cells: Vec<[i64; 2]> = Vec::new();
    let cell = params.cell_size as f64;
    // The scan reaches the farthest an island can matter: its map may start anywhere in the
    // cell, so one cell more than the free distance.
    let max_reach = (MAX_CELLS_PER_TARGET as f64).sqrt() * 0.5 * cell;
    let reach = (rings.view * FREE_FACTOR + cell).min(max_reach);
    for t in targets {
        let [x, _, z] = t.position;
        if !(x.is_finite() && z.is_finite()) {
            continue;
        }
        cells.extend(cells_in_rect(
            params,
            x - reach,
            z - reach,
            x + reach,
            z + reach,
        ));
    }
    cells.sort_unstable();
    cells.dedup();
    let mut wants: Vec<Want> = cells
        .into_iter()
        .filter_map(|c| {
            let p = island_at(params, c)?;
            let b = p.bounds();
            let mut distance = f64::INFINITY;
            let mut priority = f64::INFINITY;
            for t in targets {
                let [x, _, z] = t.position;
                if !(x.is_finite() && z.is_finite()) {
                    continue;
                }
                let now = distance_to_square(x, z, b);
                let [vx, _, vz] = t.velocity;
                let ahead = if vx.is_finite() && vz.is_finite() {
                    distance_to_square(x + vx * LOOKAHEAD_S, z + vz * LOOKAHEAD_S, b)
                } else {
                    now
                };
                distance = distance.min(now);
                priority = priority.min(now.min(ahead));
            }
            let level = level_for(distance, rings, current(c));
            (level != Level::None).then_some(Want {
                placement: p,
                level,
                distance,
                priority,
            })
        })
        .collect();
    wants.sort_by(|a, b| {
        a.priority
            .total_cmp(&b.priority)
            .then(a.placement.cell.cmp(&b.placement.cell))
    });
    wants
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rings() -> Rings {
        Rings {
            view: 8000.0,
            detail: 2000.0,
            collision: 800.0,
        }
    }

    #[test]
    fn levels_follow_the_rings_with_hysteresis() {
        let r = rings();
        assert_eq!(level_for(0.0, &r, Level::None), Level::Detail);
        assert_eq!(level_for(2000.0, &r, Level::None), Level::Detail);
        assert_eq!(level_for(2100.0, &r, Level::None), Level::Coarse);
        assert_eq!(level_for(2100.0, &r, Level::Detail), Level::Detail);
        assert_eq!(level_for(2300.0, &r, Level::Detail), Level::Coarse);
        assert_eq!(level_for(8500.0, &r, Level::None), Level::None);
        assert_eq!(level_for(8500.0, &r, Level::Coarse), Level::Coarse);
        assert_eq!(level_for(9500.0, &r, Level::Coarse), Level::Coarse);
        assert_eq!(level_for(9700.0, &r, Level::Coarse), Level::None);
    }

    #[test]
    fn colliders_follow_the_collision_ring_with_hysteresis() {
        let r = rings();
        assert!(colliders_for(0.0, &r, false));
        assert!(colliders_for(800.0, &r, false));
        assert!(!colliders_for(801.0, &r, false));
        assert!(
            colliders_for(870.0, &r, true),
            "kept within 10 % past the ring"
        );
        assert!(!colliders_for(890.0, &r, true), "dropped beyond it");
        assert!(!colliders_for(1500.0, &r, false));
    }

    #[test]
    fn plan_holds_every_island_in_view_nearest_first() {
        let p = WorldParams::default();
        let t = Target {
            position: [100.0, 0.0, 100.0],
            velocity: [0.0; 3],
        };
        let w = plan(&p, &[t], &rings(), |_| Level::None);
        assert!(!w.is_empty());
        // Every island within the view distance is there, at the right level; none beyond.
        for j in -4..=4 {
            for i in -4..=4 {
                let Some(pl) = island_at(&p, [i, j]) else {
                    continue;
                };
                let d = distance_to_square(100.0, 100.0, pl.bounds());
                let found = w.iter().find(|x| x.placement.cell == [i, j]);
                if d <= 8000.0 {
                    let f = found.expect("an island in view is planned");
                    assert_eq!(
                        f.level,
                        if d <= 2000.0 {
                            Level::Detail
                        } else {
                            Level::Coarse
                        }
                    );
                    assert_eq!(f.distance, d);
                } else {
                    assert!(found.is_none(), "island at {d} m not planned");
                }
            }
        }
        assert!(w.windows(2).all(|a| a[0].priority <= a[1].priority));
    }

    #[test]
    fn a_moving_target_puts_the_islands_ahead_first() {
        let p = WorldParams::default();
        let still = Target {
            position: [0.0, 0.0, 0.0],
            velocity: [0.0; 3],
        };
        let east = Target {
            velocity: [120.0, 0.0, 0.0],
            ..still
        };
        let a = plan(&p, &[still], &rings(), |_| Level::None);
        let b = plan(&p, &[east], &rings(), |_| Level::None);
        assert_eq!(a.len(), b.len(), "the same islands");
        // With the velocity, the islands east of the target rank higher than without.
        let rank = |w: &[Want], c: [i64; 2]| w.iter().position(|x| x.placement.cell == c);
        let ahead = b
            .iter()
            .find(|x| x.placement.center[0] > 1000.0 && x.distance > 1000.0)
            .expect("an island to the east")
            .placement
            .cell;
        assert!(rank(&b, ahead) < rank(&a, ahead));
    }

    #[test]
    fn several_targets_stream_the_union_of_their_rings() {
        let p = WorldParams::default();
        let t1 = Target {
            position: [0.0, 0.0, 0.0],
            velocity: [0.0; 3],
        };
        let t2 = Target {
            position: [40000.0, 0.0, 0.0],
            velocity: [0.0; 3],
        };
        let a = plan(&p, &[t1], &rings(), |_| Level::None);
        let b = plan(&p, &[t2], &rings(), |_| Level::None);
        let both = plan(&p, &[t1, t2], &rings(), |_| Level::None);
        assert_eq!(both.len(), a.len() + b.len(), "far apart: disjoint sets");
        for w in a.iter().chain(&b) {
            assert!(both
                .iter()
                .any(|x| x.placement == w.placement && x.level == w.level));
        }
        // Non-finite targets are ignored.
        let nan = Target {
            position: [f64::NAN, 0.0, 0.0],
            velocity: [0.0; 3],
        };
        assert_eq!(plan(&p, &[t1, nan], &rings(), |_| Level::None), a);
    }
}
