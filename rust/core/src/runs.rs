//! 8-connected components of a mask on an `n × n` grid, by row runs.
//!
//! The samples of the mask in each row form runs (maximal spans of consecutive samples); two
//! runs of neighbouring rows touch (8-connected) when their spans, each widened by one sample,
//! overlap. The runs are found row by row in parallel, joined by a union-find over the runs
//! (sequential, but there are far fewer runs than samples: a sea or a lake is a few runs per
//! row), and every run's component is its least run in row-major order — whose first sample is
//! the component's least sample index. The components depend only on the mask, so any
//! evaluation order gives them; the result equals a breadth-first flood from every seed, at a
//! fraction of its cost (no per-sample queue, sequential memory access).
//!
//! Used for the sea of the water map (the samples below sea level connected to the map's
//! border) and for the drainage's lake labels.

use rayon::prelude::*;

/// The runs of a mask and their 8-connected components.
pub struct Runs {
    n: usize,
    /// Runs of row `z`: `row_first[z]..row_first[z + 1]`.
    row_first: Vec<u32>,
    /// Per run: its first sample's column and one past its last.
    span: Vec<(u32, u32)>,
    /// Per run: the least run of its component (row-major).
    root: Vec<u32>,
    /// Per run: the least sample index of its component.
    label: Vec<u32>,
}

impl Runs {
    /// The runs of the samples `i` of an `n × n` grid where `inside(i)` holds, and their
    /// components.
    pub fn new(n: usize, inside: impl Fn(usize) -> bool + Sync) -> Runs {
        // Rows in parallel; their runs joined in row order.
        let rows: Vec<Vec<(u32, u32)>> = (0..n)
            .into_par_iter()
            .map(|z| {
                let base = z * n;
                let mut out = Vec::new();
                let mut x = 0;
                // Eight samples at a time through long stretches outside or inside (the sea,
                // dry land), one at a time near their ends.
                let eight =
                    |x: usize| (0..8).fold(0u32, |m, k| m | (inside(base + x + k) as u32) << k);
                while x < n {
                    while x + 8 <= n && eight(x) == 0 {
                        x += 8;
                    }
                    if x < n && inside(base + x) {
                        let x0 = x;
                        x += 1;
                        while x + 8 <= n && eight(x) == 0xff {
                            x += 8;
                        }
                        while x < n && inside(base + x) {
                            x += 1;
                        }
                        out.push((x0 as u32, x as u32));
                    } else {
                        x += 1;
                    }
                }
                out
            })
            .collect();
        let mut row_first = Vec::with_capacity(n + 1);
        let mut span = Vec::with_capacity(rows.iter().map(Vec::len).sum());
        for r in &rows {
            row_first.push(span.len() as u32);
            span.extend_from_slice(r);
        }
        row_first.push(span.len() as u32);
        drop(rows);
        let mut root: Vec<u32> = (0..span.len() as u32).collect();
        for z in 1..n {
            let (mut a, a_end) = (row_first[z - 1] as usize, row_first[z] as usize);
            let (mut b, b_end) = (row_first[z] as usize, row_first[z + 1] as usize);
            while a < a_end && b < b_end {
                let ((a0, a1), (b0, b1)) = (span[a], span[b]);
                // Touching: [a0, a1) and [b0, b1) overlap once one is widened by a sample.
                if b0 <= a1 && a0 <= b1 {
                    union(&mut root, a as u32, b as u32);
                }
                // The run that ends first can touch nothing further on.
                if a1 < b1 {
                    a += 1;
                } else {
                    b += 1;
                }
            }
        }
        // Flatten: every run's root is its component's least run (a run's parent is never
        // above it, so the parent is final when the run is reached), and the component's least
        // sample is its least run's first.
        let mut label = vec![0u32; span.len()];
        for z in 0..n {
            for r in row_first[z] as usize..row_first[z + 1] as usize {
                let p = root[root[r] as usize];
                root[r] = p;
                label[r] = if p as usize == r {
                    (z * n) as u32 + span[r].0
                } else {
                    label[p as usize]
                };
            }
        }
        Runs {
            n,
            row_first,
            span,
            root,
            label,
        }
    }

    /// Side of the grid.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Number of runs.
    pub fn len(&self) -> usize {
        self.span.len()
    }

    /// Whether the mask is empty.
    pub fn is_empty(&self) -> bool {
        self.span.is_empty()
    }

    /// The runs of row `z`, as run indices.
    pub fn row(&self, z: usize) -> std::ops::Range<usize> {
        self.row_first[z] as usize..self.row_first[z + 1] as usize
    }

    /// Column span `[x0, x1)` of run `r`.
    pub fn span(&self, r: usize) -> (usize, usize) {
        let (a, b) = self.span[r];
        (a as usize, b as usize)
    }

    /// The component of run `r`: its least run.
    pub fn root(&self, r: usize) -> usize {
        self.root[r] as usize
    }

    /// The least sample index of the component of run `r` (the first sample of its least run).
    pub fn label(&self, r: usize) -> u32 {
        self.label[r]
    }

    /// The run holding sample `i`, if it is inside the mask.
    pub fn run_of(&self, i: usize) -> Option<usize> {
        let (x, z) = ((i % self.n) as u32, i / self.n);
        let row = self.row(z);
        let k = row.start + self.span[row.clone()].partition_point(|&(_, b)| b <= x);
        (k < row.end && self.span[k].0 <= x).then_some(k)
    }

    /// A map of the grid: `value(run)` on the samples of each run, `outside` elsewhere (rows in
    /// parallel, written once).
    pub fn map<T: Copy + Send + Sync>(
        &self,
        outside: T,
        value: impl Fn(usize) -> T + Sync,
    ) -> Vec<T> {
        use std::mem::MaybeUninit;
        let n = self.n;
        let mut out: Vec<T> = crate::memory::with_capacity(n * n);
        out.spare_capacity_mut()[..n * n]
            .par_chunks_mut(n.max(1))
            .enumerate()
            .for_each(|(z, row)| {
                row.fill(MaybeUninit::new(outside));
                for r in self.row(z) {
                    let (x0, x1) = self.span(r);
                    row[x0..x1].fill(MaybeUninit::new(value(r)));
                }
            });
        // SAFETY: every element below n² was written just above (capacity >= n²).
        unsafe { out.set_len(n * n) };
        out
    }

    /// The components (least runs) of the mask's samples on the map border.
    pub fn border_roots(&self) -> Vec<usize> {
        let n = self.n;
        let mut out = Vec::new();
        for z in 0..n {
            let row = self.row(z);
            if z == 0 || z + 1 == n {
                out.extend(row.map(|r| self.root(r)));
            } else if !row.is_empty() {
                let (first, last) = (row.start, row.end - 1);
                if self.span[first].0 == 0 {
                    out.push(self.root(first));
                }
                if self.span[last].1 as usize == n {
                    out.push(self.root(last));
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// Join the components of runs `a` and `b`, the larger root below the smaller.
fn union(root: &mut [u32], a: u32, b: u32) {
    let (ra, rb) = (find(root, a), find(root, b));
    if ra < rb {
        root[rb as usize] = ra;
    } else if rb < ra {
        root[ra as usize] = rb;
    }
}

/// Root of run `r`, halving the path on the way.
fn find(root: &mut [u32], mut r: u32) -> u32 {
    while root[r as usize] != r {
        let p = root[root[r as usize] as usize];
        root[r as usize] = p;
        r = p;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Labels by a breadth-first flood in index order: each component gets its least index.
    fn flood_labels(mask: &[bool], n: usize) -> Vec<u32> {
        let mut label = vec![u32::MAX; n * n];
        for s in 0..n * n {
            if !mask[s] || label[s] != u32::MAX {
                continue;
            }
            label[s] = s as u32;
            let mut q = vec![s];
            while let Some(c) = q.pop() {
                crate::drainage::for_neighbours(c, n, |j, _| {
                    if mask[j] && label[j] == u32::MAX {
                        label[j] = s as u32;
                        q.push(j);
                    }
                });
            }
        }
        label
    }

    fn run_labels(runs: &Runs) -> Vec<u32> {
        runs.map(u32::MAX, |r| runs.label(r))
    }

    fn random_mask(n: usize, seed: u64, density: u64) -> Vec<bool> {
        let mut s = seed;
        (0..n * n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (s >> 33) % 100 < density
            })
            .collect()
    }

    #[test]
    fn components_equal_a_flood_on_random_masks() {
        for (n, seed, density) in [
            (1, 1, 50),
            (2, 2, 50),
            (7, 3, 30),
            (33, 4, 45),
            (64, 5, 55),
            (97, 6, 60),
            (128, 7, 40),
        ] {
            let mask = random_mask(n, seed, density);
            let runs = Runs::new(n, |i| mask[i]);
            assert_eq!(
                run_labels(&runs),
                flood_labels(&mask, n),
                "n {n} seed {seed}"
            );
            for (i, &inside) in mask.iter().enumerate() {
                let r = runs.run_of(i);
                assert_eq!(r.is_some(), inside, "run_of({i})");
                if let Some(r) = r {
                    let (x0, x1) = runs.span(r);
                    assert!(runs.row(i / n).contains(&r) && (x0..x1).contains(&(i % n)));
                }
            }
        }
    }

    #[test]
    fn long_stretches_inside_and_outside_equal_a_flood() {
        // Runs and gaps of every length around the eight-sample steps of the row scan: long
        // diagonal stripes, all inside, all outside, and long runs with single gaps.
        for n in [8usize, 9, 16, 31, 100, 257] {
            let masks: [Vec<bool>; 4] = [
                (0..n * n)
                    .map(|i| (i % n * 7 + i / n * 3) % 40 < 23)
                    .collect(),
                vec![true; n * n],
                vec![false; n * n],
                (0..n * n).map(|i| (i % n + i / n) % 17 != 0).collect(),
            ];
            for (k, mask) in masks.iter().enumerate() {
                let runs = Runs::new(n, |i| mask[i]);
                assert_eq!(run_labels(&runs), flood_labels(mask, n), "n {n} mask {k}");
                for (i, &inside) in mask.iter().enumerate() {
                    assert_eq!(
                        runs.run_of(i).is_some(),
                        inside,
                        "n {n} mask {k} run_of({i})"
                    );
                }
            }
        }
    }

    #[test]
    fn diagonal_steps_join_and_gaps_split() {
        // A staircase of single samples is one component (8-connected); two columns two
        // samples apart are two.
        let n = 6;
        let stair: Vec<bool> = (0..n * n).map(|i| i % n == i / n).collect();
        let runs = Runs::new(n, |i| stair[i]);
        assert_eq!(runs.len(), n);
        assert!((0..n).all(|r| runs.root(r) == 0 && runs.label(r) == 0));
        let cols: Vec<bool> = (0..n * n).map(|i| i % n == 1 || i % n == 3).collect();
        let runs = Runs::new(n, |i| cols[i]);
        let labels = run_labels(&runs);
        assert_eq!(labels[n + 1], 1);
        assert_eq!(labels[4 * n + 3], 3);
        assert_eq!(runs.border_roots(), vec![0, 1]);
    }

    #[test]
    fn border_roots_are_the_components_touching_the_border() {
        let n = 50;
        let mask = random_mask(n, 9, 58);
        let runs = Runs::new(n, |i| mask[i]);
        let labels = flood_labels(&mask, n);
        let mut want: Vec<u32> = (0..n * n)
            .filter(|&i| {
                let (x, z) = (i % n, i / n);
                mask[i] && (x == 0 || z == 0 || x + 1 == n || z + 1 == n)
            })
            .map(|i| labels[i])
            .collect();
        want.sort_unstable();
        want.dedup();
        let mut got: Vec<u32> = runs
            .border_roots()
            .into_iter()
            .map(|r| runs.label(r))
            .collect();
        got.sort_unstable();
        assert_eq!(got, want);
    }
}
