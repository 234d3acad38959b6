//! Row and column of a sample index without a division instruction.
//!
//! The drainage kernels look up the row and column of every sample they visit (to tell the
//! grid's border, where neighbours need bounds checks, from its interior). A hardware integer
//! division takes 14–40 cycles on current x86-64 cores and was the single most expensive
//! instruction of the flow-order walk and the depression fill; multiplying by a precomputed
//! reciprocal gives the same quotient in a few cycles.
//!
//! Method: Lemire, Kaser & Kurz, "Faster remainder by direct computation" (2019): with
//! `M = ⌈2⁶⁴ / d⌉`, `⌊M·i / 2⁶⁴⌋ = ⌊i / d⌋` for every `i < 2³²` and every divisor `1 < d < 2³²`.
//! The results are exact integers, so nothing downstream changes a bit.

/// Divides sample indices (below 2³²) by a grid's side `n`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SideDiv {
    /// The grid's side.
    n: usize,
    /// `⌈2⁶⁴ / n⌉`, or 0 for `n <= 1` (whose quotient is taken as the index itself).
    m: u64,
    /// All ones for `n <= 1`, else 0: the index itself added to the quotient.
    one: usize,
}

impl SideDiv {
    /// The divider for side `n` (below 2³²; a side of 0 holds no sample to divide).
    pub(crate) fn new(n: usize) -> Self {
        assert!((n as u64) < 1 << 32, "grid side out of range: {n}");
        if n <= 1 {
            SideDiv {
                n,
                m: 0,
                one: usize::MAX,
            }
        } else {
            SideDiv {
                n,
                m: u64::MAX / n as u64 + 1,
                one: 0,
            }
        }
    }

    /// The grid's side.
    #[inline(always)]
    pub(crate) fn n(self) -> usize {
        self.n
    }

    /// `(i % n, i / n)`: the column and row of sample `i` (below 2³²).
    #[inline(always)]
    pub(crate) fn column_row(self, i: usize) -> (usize, usize) {
        debug_assert!((i as u64) < 1 << 32, "sample index beyond 2^32: {i}");
        let z = ((self.m as u128 * i as u128) >> 64) as usize + (i & self.one);
        (i - z * self.n, z)
    }

    /// Whether sample `i` lies on the grid's border (first or last row or column), where some
    /// of its eight neighbours are missing.
    #[inline(always)]
    pub(crate) fn on_border(self, i: usize) -> bool {
        let (x, z) = self.column_row(i);
        x == 0 || z == 0 || x + 1 >= self.n || z + 1 >= self.n
    }
}

#[cfg(test)]
mod tests {
    use super::SideDiv;

    /// The quotients and remainders match `/` and `%` for small and large sides, over whole
    /// grids and at the top of the index range, where a reciprocal one unit too small or too
    /// large would first be off.
    #[test]
    fn column_row_matches_division() {
        let mut sides: Vec<usize> = (1..=300).collect();
        sides.extend([
            513,
            1025,
            2049,
            4097,
            8193,
            16385,
            65535,
            65536,
            65537,
            1 << 20,
        ]);
        sides.extend([(1 << 31) - 1, 1 << 31, (1 << 32) - 5, (1 << 32) - 1]);
        for &n in &sides {
            let d = SideDiv::new(n);
            let top = (1usize << 32) - 1;
            let whole = if n <= 4097 {
                (0..n * n).step_by(1 + n / 64).collect()
            } else {
                vec![]
            };
            let edges = (0..2000).flat_map(|k| [k, top - k, k * n, (k * n).saturating_sub(1)]);
            for i in whole.into_iter().chain(edges).filter(|&i| i <= top) {
                assert_eq!(d.column_row(i), (i % n, i / n), "n = {n}, i = {i}");
                let (x, z) = (i % n, i / n);
                let border = x == 0 || z == 0 || x + 1 == n || z + 1 >= n;
                assert_eq!(d.on_border(i), border, "n = {n}, i = {i}");
            }
        }
    }

    /// An empty grid (side 0) gets a divider too (it has no sample to divide): the kernels
    /// make one before looking at any sample.
    #[test]
    fn a_side_of_zero_is_accepted() {
        assert_eq!(SideDiv::new(0).n(), 0);
        assert_eq!(SideDiv::new(1).column_row(5), (0, 5));
    }

    /// Every index of a 1025² grid (the default map), exhaustively.
    #[test]
    fn every_index_of_the_default_grid() {
        let (n, d) = (1025, SideDiv::new(1025));
        for i in 0..n * n {
            assert_eq!(d.column_row(i), (i % n, i / n));
        }
    }
}
