//! The water of carved rivers spread sideways across their channels (part of the water map of
//! the drainage stage, [`crate::pipeline::hydrology`]).
//!
//! From every river sample a flood goes over the dry samples within half its width plus its
//! banks whose ground lies below the river's surface and never falls going outwards, so the
//! water fills the channel up to the banks, follows the valley's contours and stays on its side
//! of a ridge. A sample reached by several rivers takes the lowest surface. Every spread sample
//! has a neighbour at most as high, ground and water, that leads back to its river sample: the
//! water still never runs uphill.
//!
//! **In parallel, the sequential result.** Where a flood may go depends only on what no flood
//! changes: the heights, the sea and the lakes, and the river samples themselves with their
//! surfaces (a flood passes a river sample whose surface is at most its own, and every sample
//! it spreads to, dry before or spread to by another river). A flood only turns dry samples
//! into river and lowers the surface of spread samples. So each flood is found on its own, the
//! floods in parallel, and their samples are applied afterwards, keeping the lowest surface:
//! the bits of the floods run one after another in river order (pinned by a test against that
//! sequential definition on real islands).

use crate::drainage::{Drainage, NEIGHBOURS};
use crate::water::{DRY, RIVER};
use rayon::prelude::*;

/// Rivers per parallel task.
const RIVERS_PER_TASK: usize = 32;

/// Spread each river's water across its channel (see the [module documentation](self)):
/// `kind` and `level` are the water map with the river samples of `d` set (the sea, the lakes
/// and the river samples at their surfaces), `heights` the carved ground.
pub(crate) fn spread_rivers(heights: &[f32], d: &Drainage, kind: &mut [u8], level: &mut [f32]) {
    let n = d.n;
    // Zero-initialised: only the pages near rivers are touched.
    let mut centre = vec![false; n * n];
    for r in &d.rivers {
        centre[r.index as usize] = true;
    }
    let (kind_at, level_at, centre_at) = (&*kind, &*level, &centre);
    // The samples each group of floods reaches (besides the river samples), with the surface.
    let reached: Vec<Vec<(u32, f32)>> = d
        .rivers
        .par_chunks(RIVERS_PER_TASK)
        .map_init(Visited::default, |seen, rivers| {
            let mut out = Vec::new();
            let mut stack = Vec::new();
            for r in rivers {
                let c = r.index as usize;
                if kind_at[c] != RIVER {
                    continue;
                }
                let surface = level_at[c];
                // Half the channel, the banks up to the surface (at the steepest default bank,
                // 2 m per metre of depth) and one sample.
                let reach = 0.5 * r.width + 2.0 * r.depth + d.spacing;
                let reach2 = {
                    let r = reach / d.spacing;
                    r * r
                };
                let (cx, cz) = ((c % n) as i64, (c / n) as i64);
                seen.start(reach2);
                stack.clear();
                // Samples travel with their offset from the centre: the neighbours' offsets
                // and indices follow without a division (the neighbours in `for_neighbours`'
                // order, those outside the map left out).
                let nn = n as i64;
                stack.push((c, 0i64, 0i64));
                while let Some((i, ix, iz)) = stack.pop() {
                    let hi = heights[i];
                    for &(dx, dz, _) in &NEIGHBOURS {
                        let (jx, jz) = (ix + dx as i64, iz + dz as i64);
                        let (ax, az) = (cx + jx, cz + jz);
                        if ax < 0 || az < 0 || ax >= nn || az >= nn {
                            continue;
                        }
                        if ((jx * jx + jz * jz) as f32) > reach2 || seen.contains(jx, jz) {
                            continue;
                        }
                        let j = (az * nn + ax) as usize;
                        let hj = heights[j];
                        if hj < hi || hj >= surface {
                            continue;
                        }
                        match kind_at[j] {
                            DRY => out.push((j as u32, surface)),
                            RIVER if !centre_at[j] => out.push((j as u32, surface)),
                            // Through another river sample only where its surface is not
                            // higher (its neighbours reached from here need a way down at
                            // most as high).
                            RIVER if level_at[j] <= surface => {}
                            _ => continue,
                        }
                        seen.insert(jx, jz);
                        stack.push((j, jx, jz));
                    }
                }
            }
            out
        })
        .collect();
    for (j, surface) in reached.into_iter().flatten() {
        let j = j as usize;
        match kind[j] {
            DRY => {
                kind[j] = RIVER;
                level[j] = surface;
            }
            RIVER if !centre[j] && level[j] > surface => level[j] = surface,
            _ => {}
        }
    }
}

/// The samples one flood has reached, in a window around its river sample (generation stamps:
/// nothing to clear between floods), or in a set when the window would be huge.
#[derive(Default)]
struct Visited {
    /// Half-width of the window (samples).
    half: i64,
    stamp: Vec<u32>,
    generation: u32,
    set: std::collections::HashSet<(i64, i64)>,
    windowed: bool,
}

impl Visited {
    /// The most window entries (16 MiB of stamps); larger reaches use the set.
    const MAX_WINDOW: usize = 1 << 22;

    /// A new flood reaching `reach2` squared samples from its river sample: only that reached.
    fn start(&mut self, reach2: f32) {
        let half = if reach2.is_finite() && reach2 >= 0.0 {
            reach2.sqrt().ceil() as i64 + 1
        } else {
            i64::MAX
        };
        let w = half.checked_mul(2).and_then(|w| w.checked_add(1));
        match w.map(|w| w as u128 * w as u128) {
            Some(cells) if cells <= Self::MAX_WINDOW as u128 => {
                self.windowed = true;
                self.half = half;
                let cells = cells as usize;
                if self.stamp.len() < cells {
                    self.stamp.resize(cells, 0);
                }
                self.generation = self.generation.wrapping_add(1);
                if self.generation == 0 {
                    self.stamp.fill(0);
                    self.generation = 1;
                }
            }
            _ => {
                self.windowed = false;
                self.set.clear();
            }
        }
        self.insert(0, 0);
    }

    #[inline]
    fn slot(&self, dx: i64, dz: i64) -> usize {
        let w = 2 * self.half + 1;
        ((dz + self.half) * w + dx + self.half) as usize
    }

    /// Whether the sample at `(dx, dz)` from the river sample (inside the reach) is reached.
    #[inline]
    fn contains(&self, dx: i64, dz: i64) -> bool {
        if self.windowed {
            self.stamp[self.slot(dx, dz)] == self.generation
        } else {
            self.set.contains(&(dx, dz))
        }
    }

    #[inline]
    fn insert(&mut self, dx: i64, dz: i64) {
        if self.windowed {
            let s = self.slot(dx, dz);
            self.stamp[s] = self.generation;
        } else {
            self.set.insert((dx, dz));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drainage::for_neighbours;
    use crate::water::{Water, SEA};
    use crate::IslandParams;

    /// The floods one after another in river order, each reading and writing the map as it
    /// goes: the definition [`spread_rivers`] is pinned to.
    fn spread_sequential(heights: &[f32], d: &Drainage, kind: &mut [u8], level: &mut [f32]) {
        let n = d.n;
        let mut stamp = vec![0u32; n * n];
        let mut centre = vec![false; n * n];
        for r in &d.rivers {
            centre[r.index as usize] = true;
        }
        let mut stack: Vec<usize> = Vec::new();
        for (k, r) in d.rivers.iter().enumerate() {
            let c = r.index as usize;
            if kind[c] != RIVER {
                continue;
            }
            let surface = level[c];
            let reach = 0.5 * r.width + 2.0 * r.depth + d.spacing;
            let reach2 = {
                let r = reach / d.spacing;
                r * r
            };
            let (cx, cz) = ((c % n) as i64, (c / n) as i64);
            let k = k as u32 + 1;
            stamp[c] = k;
            stack.clear();
            stack.push(c);
            while let Some(i) = stack.pop() {
                let hi = heights[i];
                for_neighbours(i, n, |j, _| {
                    if stamp[j] == k {
                        return;
                    }
                    let (jx, jz) = ((j % n) as i64 - cx, (j / n) as i64 - cz);
                    if ((jx * jx + jz * jz) as f32) > reach2 {
                        return;
                    }
                    let hj = heights[j];
                    if hj < hi || hj >= surface {
                        return;
                    }
                    match kind[j] {
                        DRY => {
                            kind[j] = RIVER;
                            level[j] = surface;
                        }
                        RIVER if !centre[j] && level[j] > surface => {
                            level[j] = surface;
                        }
                        RIVER if level[j] <= surface => {}
                        _ => return,
                    }
                    stamp[j] = k;
                    stack.push(j);
                });
            }
        }
    }

    /// The window and the set (reaches too large for a window) remember the same samples.
    #[test]
    fn visited_window_and_set_agree() {
        let marks = [(0i64, 0i64), (3, -2), (-7, 7), (7, -7), (1, 0)];
        let huge = ((Visited::MAX_WINDOW as f32).sqrt() * 0.6).powi(2);
        for (reach2, windowed) in [(49.0f32, true), (huge, false), (f32::INFINITY, false)] {
            let mut v = Visited::default();
            // Two floods: the second starts from nothing, whatever the first left.
            for flood in 0..2 {
                v.start(reach2);
                assert_eq!(v.windowed, windowed, "{reach2}");
                for (k, &(dx, dz)) in marks.iter().enumerate() {
                    assert_eq!(v.contains(dx, dz), k == 0, "{reach2}");
                    if (k + flood) % 2 == 0 {
                        v.insert(dx, dz);
                    }
                }
                for (k, &(dx, dz)) in marks.iter().enumerate() {
                    assert_eq!(
                        v.contains(dx, dz),
                        k == 0 || (k + flood) % 2 == 0,
                        "{reach2}"
                    );
                }
            }
        }
    }

    /// The drainage stage of `p` by hand: the carved heights, their drainage and water map.
    fn island(p: &IslandParams) -> (Vec<f32>, Drainage, Water) {
        let mut h = crate::pipeline::raw_heights(p).unwrap();
        crate::pipeline::erosion_stage(p, &mut h);
        let n = p.resolution as usize;
        crate::basins::dig_lake_basins(&mut h, n, p.spacing(), 0.0, &p.basins, p.seed);
        let d = crate::drainage::drainage_lean(&h, n, p.spacing(), 0.0, &p.drainage);
        crate::channels::carve_rivers(&mut h, &d, &crate::pipeline::carve_settings(p));
        let water = crate::pipeline::hydrology(p, &h, &d).water;
        (h, d, water)
    }

    /// On real islands (every river spread, rivers through each other's water, lakes and sea
    /// in the way): the parallel floods give the sequential floods' map, on any thread count,
    /// and that is the pipeline's water map.
    #[test]
    fn parallel_floods_equal_the_sequential_ones() {
        for (seed, shape) in [(1u64, None), (7, Some(crate::IslandShape::Archipelago))] {
            let mut p = IslandParams {
                resolution: 513,
                seed,
                ..Default::default()
            };
            if let Some(s) = shape {
                p.shape.shape = s;
            }
            let (h, d, water) = island(&p);
            // Before the spread: the river samples as the water map sets them, every sample
            // the spread added back to dry.
            let centre: std::collections::HashSet<u32> = d.rivers.iter().map(|r| r.index).collect();
            let (mut kind0, mut level0) = (water.kind.clone(), water.level.clone());
            let mut spread = 0;
            for i in 0..kind0.len() {
                if kind0[i] == RIVER && !centre.contains(&(i as u32)) {
                    kind0[i] = DRY;
                    level0[i] = f32::NAN;
                    spread += 1;
                }
            }
            assert!(spread > 20, "seed {seed}: only {spread} spread samples");
            assert!(kind0.contains(&SEA));
            let (mut ks, mut ls) = (kind0.clone(), level0.clone());
            spread_sequential(&h, &d, &mut ks, &mut ls);
            for threads in [1, 2, 3] {
                let (mut kp, mut lp) = (kind0.clone(), level0.clone());
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap()
                    .install(|| spread_rivers(&h, &d, &mut kp, &mut lp));
                assert_eq!(kp, ks, "seed {seed}, {threads} threads: kinds");
                let bits = |l: &[f32]| l.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                assert_eq!(
                    bits(&lp),
                    bits(&ls),
                    "seed {seed}, {threads} threads: levels"
                );
            }
            assert_eq!(ks, water.kind);
        }
    }
}
