//! Receivers across the flats of a filled surface: [`crate::drainage::flat_routing`]'s
//! definition (Garbrecht & Martz 1997; Barnes, Lehman & Mulla 2014), computed with one bit
//! per sample.
//!
//! Two neighbouring flat samples always have the same filled height (neither has a lower
//! neighbour), so the flats are just the set bits of a row-major bit mask, and their two
//! breadth-first searches are bit-parallel over 8 × 8 tiles of it: each step dilates the
//! tiles the previous step reached (shifts within the tile, carries across its sides and
//! corners) and keeps the flat samples not reached yet, 64 samples per operation. Every tile
//! with flats has 64 entries for the distances and the keys, a sample's entry its place in
//! the tile: no search through the flats. Only the samples on a flat's edge (a neighbour that
//! is not flat) are looked at one by one for spilling and for the searches' seeds; a lake's
//! inside is words.
//!
//! The distances are the unique shortest-path lengths and every other step is per sample, so
//! the receivers are exactly the definition's, whatever the thread count (pinned by a test
//! against a sequential implementation of the definition).

use rayon::prelude::*;
use std::ops::Range;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// No receiver (the value of [`crate::drainage::NONE`], which is defined by it: this module
/// sits below `drainage`).
pub(crate) const NONE: u32 = u32::MAX;

/// Whether `h` is not above `level`, NaN included (the drainage's sea test,
/// [`crate::drainage`]'s `is_sea`, is this).
#[inline(always)]
pub(crate) fn not_above(h: f32, level: f32) -> bool {
    h.partial_cmp(&level) != Some(std::cmp::Ordering::Greater)
}

/// Rows per parallel task of the per-row passes.
const ROWS_PER_TASK: usize = 32;

/// The samples of an `n × n` grid without a receiver yet ([`route_flats`]' candidates), as
/// [`receivers_by_rows`](crate::drainage::receivers_by_rows) finds them.
pub(crate) struct Candidates {
    /// Row-major bits, `n.div_ceil(64)` words per row (bit `b` of word `wi` is sample
    /// `64·wi + b`): the candidates whose filled height is a number.
    pub words: Vec<u64>,
    /// The candidates whose filled height is not a number, in index order.
    pub nan: Vec<u32>,
}

impl Candidates {
    /// Words per row of an `n`-wide grid.
    pub fn words_per_row(n: usize) -> usize {
        n.div_ceil(64)
    }

    /// Records row `i0 / n`'s candidates (`rcv` is [`NONE`]) into its `words`, and into `nan`
    /// those whose `filled` height is not a number.
    #[inline(always)]
    pub fn record_row(
        rcv: &[u32],
        filled: &[f32],
        i0: usize,
        words: &mut [u64],
        nan: &mut Vec<u32>,
    ) {
        for (wi, (r, f)) in rcv.chunks(64).zip(filled.chunks(64)).enumerate() {
            // Most words have none (a fold without early exit, which vectorises).
            if !r.iter().fold(false, |any, &r| any | (r == NONE)) {
                words[wi] = 0;
                continue;
            }
            let (mut bits, mut nans) = (0u64, 0u64);
            for (b, (&r, &h)) in r.iter().zip(f).enumerate() {
                let c = (r == NONE) as u64;
                let is_nan = h.is_nan() as u64;
                bits |= (c & !is_nan & 1) << b;
                nans |= (c & is_nan) << b;
            }
            words[wi] = bits;
            for b in Bits(nans) {
                nan.push((i0 + wi * 64 + b) as u32);
            }
        }
    }
}

/// Routes the flats in place: `rcv` holds downhill receivers in which every outlet (sea, map
/// border) is its own receiver and every other sample a neighbour, except the `candidates`:
/// the non-outlet samples without a lower neighbour on `filled`, [`NONE`].
/// Each candidate gets its receiver: the first outlet neighbour at or below its height if it
/// has one, else (a flat sample) its way across the flat; a candidate whose filled height is
/// not a number and that spills nowhere stays [`NONE`] (the definition finds it no way out).
pub(crate) fn route_flats(filled: &[f32], n: usize, rcv: &mut [u32], candidates: Candidates) {
    let len = n * n;
    assert!(
        filled.len() == len && rcv.len() == len,
        "route_flats: n² samples"
    );
    let g = Grid {
        n,
        w: Candidates::words_per_row(n),
    };
    let Candidates { words: cand, nan } = candidates;
    assert_eq!(
        cand.len(),
        n * g.w,
        "route_flats: one word per 64 samples of a row"
    );
    if nan.is_empty() && cand.iter().all(|&c| c == 0) {
        return;
    }
    // The first outlet neighbour at or below `c`'s height (not above it, NaN included): only
    // candidates on the edge of the candidates can have one.
    let spill_of = |c: usize, rcv: &[u32]| -> u32 {
        let hc = filled[c];
        g.around(c)
            .into_iter()
            .find(|&j| not_above(filled[j], hc) && rcv[j] as usize == j)
            .map_or(NONE, |j| j as u32)
    };
    // The flats: the candidates with a height that spill nowhere, and the spilling ones.
    let mut flat = vec![0u64; n * g.w];
    let spills: Vec<(u32, u32)> = {
        let rcv = &*rcv;
        let mut spills: Vec<(u32, u32)> = flat
            .par_chunks_mut(ROWS_PER_TASK * g.w)
            .enumerate()
            .flat_map_iter(|(t, words)| {
                let mut out = Vec::new();
                for (r, row) in words.chunks_mut(g.w).enumerate() {
                    let z = t * ROWS_PER_TASK + r;
                    for (wi, f) in row.iter_mut().enumerate() {
                        let own = cand[z * g.w + wi];
                        let mut flats = own;
                        for b in Bits(own & !g.inner(&cand, z, wi)) {
                            let c = z * n + wi * 64 + b;
                            let s = spill_of(c, rcv);
                            if s != NONE {
                                flats &= !(1 << b);
                                out.push((c as u32, s));
                            }
                        }
                        *f = flats;
                    }
                }
                out
            })
            .collect();
        spills.extend(nan.iter().map(|&c| (c, spill_of(c as usize, rcv))));
        spills
    };
    drop(cand);
    for (c, s) in spills {
        rcv[c as usize] = s;
    }
    let t = n.div_ceil(8);
    let tiles = tiles_of(g, &flat, t);
    // Each tile with flats gets 64 entries of the searches' distances and the keys, in the
    // order of the tiles.
    let mut slots = Vec::with_capacity(tiles.len());
    let mut used = 0u32;
    for &tile in &tiles {
        slots.push(if tile == 0 { NONE } else { used });
        used += (tile != 0) as u32;
    }
    if used == 0 {
        return;
    }
    let f = Flats {
        g,
        bits: &flat,
        t,
        tiles: &tiles,
        slots: &slots,
    };
    // The seeds of the two searches, among the flats on a flat's edge: next to an
    // equal-height sample they can drain into (not flat, not an outlet: towards lower
    // terrain), and next to a higher sample (away from higher terrain).
    let (low, high): (Vec<Word>, Vec<Word>) = {
        let rcv = &*rcv;
        let parts: Vec<(Vec<Word>, Vec<Word>)> = (0..n.div_ceil(ROWS_PER_TASK))
            .into_par_iter()
            .map(|t| {
                let (mut low, mut high) = (Vec::new(), Vec::new());
                for z in t * ROWS_PER_TASK..((t + 1) * ROWS_PER_TASK).min(n) {
                    for wi in 0..g.w {
                        let word = flat[z * g.w + wi];
                        let (mut lo, mut hi) = (0u64, 0u64);
                        for b in Bits(word & !g.inner(&flat, z, wi)) {
                            let x = wi * 64 + b;
                            let c = z * n + x;
                            let hc = filled[c];
                            for (k, j) in g.around(c).into_iter().enumerate() {
                                let (zj, xj) = g.step(z, x, k);
                                let hj = filled[j];
                                if hj == hc && !f.has(zj, xj) && rcv[j] as usize != j {
                                    lo |= 1 << b;
                                }
                                if hj > hc {
                                    hi |= 1 << b;
                                }
                            }
                        }
                        if lo != 0 {
                            low.push(Word::new(z, wi, lo));
                        }
                        if hi != 0 {
                            high.push(Word::new(z, wi, hi));
                        }
                    }
                }
                (low, high)
            })
            .collect();
        let (low, high): (Vec<_>, Vec<_>) = parts.into_iter().unzip();
        (low.concat(), high.concat())
    };
    // Towards lower terrain and away from higher terrain: the two searches are independent,
    // concurrent.
    let entries = used as usize * 64;
    let (lo, hi) = rayon::join(|| f.distances(entries, low), || f.distances(entries, high));
    // What a flat sample's receiver minimises: `2·L − H`.
    let key: Vec<i64> = lo
        .par_iter()
        .zip(&hi)
        .with_min_len(1 << 14)
        .map(|(&l, &h)| 2 * l as i64 - h as i64)
        .collect();
    drop((lo, hi));
    // Each flat sample drains to its equal-height neighbour of least key (samples that drain,
    // not flat and not outlets, first; ties to the smallest neighbour index). Relaxed atomics:
    // the flats' entries are written, only the others' read.
    let at: &[AtomicU32] = as_atomic_u32(rcv);
    (0..n.div_ceil(ROWS_PER_TASK))
        .into_par_iter()
        .for_each(|t| {
            let rows = t * ROWS_PER_TASK..((t + 1) * ROWS_PER_TASK).min(n);
            f.receivers(rows, filled, &key, at)
        });
}

/// `map` as atomics, for relaxed loads and stores to distinct samples from several threads
/// (here and in [`crate::drainage`]'s parallel sums).
pub(crate) fn as_atomic_u32(map: &mut [u32]) -> &[AtomicU32] {
    const _: () = assert!(std::mem::align_of::<u32>() == std::mem::align_of::<AtomicU32>());
    // SAFETY: `AtomicU32` has the size and bit validity of `u32`, and the same alignment here
    // (checked above); `map` stays borrowed mutably while the atomics live.
    unsafe { &*(map as *mut [u32] as *const [AtomicU32]) }
}

/// An `n × n` grid's rows as `w` words of 64 samples each (bit `b` of word `wi` is sample
/// `64·wi + b`; the bits past `n` stay clear).
#[derive(Clone, Copy)]
struct Grid {
    n: usize,
    w: usize,
}

/// Some set bits of row `z`'s word `wi`.
#[derive(Clone, Copy)]
struct Word {
    z: u32,
    wi: u32,
    bits: u64,
}

impl Word {
    fn new(z: usize, wi: usize, bits: u64) -> Self {
        Word {
            z: z as u32,
            wi: wi as u32,
            bits,
        }
    }
}

/// The set bits of a word, lowest first.
struct Bits(u64);

impl Iterator for Bits {
    type Item = usize;
    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        (self.0 != 0).then(|| {
            let b = self.0.trailing_zeros() as usize;
            self.0 &= self.0 - 1;
            b
        })
    }
}

/// Neighbour steps `(dx, dz)` in [`crate::drainage::NEIGHBOURS`] order.
const STEPS: [(isize, isize); 8] = [
    (-1, -1),
    (0, -1),
    (1, -1),
    (-1, 0),
    (1, 0),
    (-1, 1),
    (0, 1),
    (1, 1),
];

impl Grid {
    /// The eight neighbours of sample `c`, not on the map border, in index order.
    #[inline(always)]
    fn around(self, c: usize) -> [usize; 8] {
        let n = self.n as isize;
        STEPS.map(|(dx, dz)| (c as isize + dz * n + dx) as usize)
    }

    /// Row and column of neighbour `k` of the sample at row `z`, column `x`.
    #[inline(always)]
    fn step(self, z: usize, x: usize, k: usize) -> (usize, usize) {
        let (dx, dz) = STEPS[k];
        ((z as isize + dz) as usize, (x as isize + dx) as usize)
    }

    /// The bits of row `z`'s word `wi` of `m` whose eight neighbours are all set in `m` (rows
    /// outside the grid count as clear).
    #[inline(always)]
    fn inner(self, m: &[u64], z: usize, wi: usize) -> u64 {
        let row = |z: usize| &m[z * self.w..(z + 1) * self.w];
        let three = |r: &[u64]| r[wi] & self.left(r, wi) & self.right(r, wi);
        let own = row(z);
        let mut inner = own[wi] & self.left(own, wi) & self.right(own, wi);
        inner &= if z > 0 { three(row(z - 1)) } else { 0 };
        inner &= if z + 1 < self.n { three(row(z + 1)) } else { 0 };
        inner
    }

    /// Bit `b` set where sample `64·wi + b − 1` of `row` is.
    #[inline(always)]
    fn left(self, row: &[u64], wi: usize) -> u64 {
        (row[wi] << 1) | if wi > 0 { row[wi - 1] >> 63 } else { 0 }
    }

    /// Bit `b` set where sample `64·wi + b + 1` of `row` is.
    #[inline(always)]
    fn right(self, row: &[u64], wi: usize) -> u64 {
        (row[wi] >> 1)
            | if wi + 1 < self.w {
                row[wi + 1] << 63
            } else {
                0
            }
    }
}

/// The flats of a [`Grid`] as row words and as tiles, with where each flat sample's entry is
/// (its tile's 64 entries, by its place in the tile).
#[derive(Clone, Copy)]
struct Flats<'a> {
    g: Grid,
    bits: &'a [u64],
    /// Tiles per side.
    t: usize,
    /// The flats again as 8 × 8 tiles, row-major (bit `8·r + c` of tile (`tz`, `tx`) is the
    /// sample at row `8·tz + r`, column `8·tx + c`), for the searches.
    tiles: &'a [u64],
    /// Per tile, where its 64 entries start, over 64 ([`NONE`] for tiles without flats).
    slots: &'a [u32],
}

/// One step's dilation in tiles (`t` per side), and the tiles it touched.
struct Growth {
    t: usize,
    bits: Vec<u64>,
    touched: Vec<(u32, u32)>,
}

impl Growth {
    /// Adds the samples `b` (not none) of tile (`tz`, `tx`).
    #[inline(always)]
    fn add(&mut self, tz: usize, tx: usize, b: u64) {
        let k = tz * self.t + tx;
        if self.bits[k] == 0 {
            self.touched.push((tz as u32, tx as u32));
        }
        self.bits[k] |= b;
    }
}

/// The samples of column 0 of a tile, and of column 7.
const COLUMN_0: u64 = 0x0101_0101_0101_0101;
const COLUMN_7: u64 = 0x8080_8080_8080_8080;

/// The row words `flat` of `g` as `t × t` tiles of 8 × 8 samples (see [`Flats::tiles`]).
fn tiles_of(g: Grid, flat: &[u64], t: usize) -> Vec<u64> {
    let mut tiles = vec![0u64; t * t];
    tiles.par_chunks_mut(t).enumerate().for_each(|(tz, row)| {
        for r in 0..8 {
            let z = tz * 8 + r;
            if z >= g.n {
                break;
            }
            for (wi, &word) in flat[z * g.w..(z + 1) * g.w].iter().enumerate() {
                if word == 0 {
                    continue;
                }
                for (k, tile) in row[wi * 8..].iter_mut().take(8).enumerate() {
                    *tile |= (word >> (8 * k) & 0xFF) << (8 * r);
                }
            }
        }
    });
    tiles
}

impl Flats<'_> {
    /// Whether the sample at row `z`, column `x` is flat.
    #[inline(always)]
    fn has(self, z: usize, x: usize) -> bool {
        self.bits[z * self.g.w + x / 64] >> (x % 64) & 1 != 0
    }

    /// The entry of the flat sample at row `z`, column `x`.
    #[inline(always)]
    fn entry(self, z: usize, x: usize) -> usize {
        self.slots[(z / 8) * self.t + x / 8] as usize * 64 + (z % 8) * 8 + x % 8
    }

    /// Breadth-first distances over the 8-connected flat samples, by entry (`count` entries):
    /// 1 at the `seeds`, one more per step, 0 where no seed's search arrives. Each step
    /// dilates the tiles the last step reached (within the tile, and across its sides and
    /// corners) and keeps the flats not reached before: a front along a column takes one tile
    /// per eight rows, not a word per row.
    fn distances(self, count: usize, seeds: Vec<Word>) -> Vec<u32> {
        let (t, tiles) = (self.t, self.tiles);
        let mut dist = vec![0u32; count];
        let mut reached = vec![0u64; tiles.len()];
        let mut grown = Growth {
            t,
            bits: vec![0u64; tiles.len()],
            touched: Vec::new(),
        };
        // The seeds, a byte of a row word in each tile row.
        for s in &seeds {
            let (z, wi) = (s.z as usize, s.wi as usize);
            for k in 0..8 {
                let byte = s.bits >> (8 * k) & 0xFF;
                if byte != 0 {
                    grown.add(z / 8, wi * 8 + k, byte << (8 * (z % 8)));
                }
            }
        }
        drop(seeds);
        let (mut front, mut next): (Vec<(u32, u32, u64)>, _) = (Vec::new(), Vec::new());
        let mut d = 1u32;
        loop {
            // The flats first reached at step `d`.
            next.clear();
            for &(tz, tx) in &grown.touched {
                let k = tz as usize * t + tx as usize;
                let new = grown.bits[k] & tiles[k] & !reached[k];
                grown.bits[k] = 0;
                if new != 0 {
                    reached[k] |= new;
                    let first = self.slots[k] as usize * 64;
                    for b in Bits(new) {
                        dist[first + b] = d;
                    }
                    next.push((tz, tx, new));
                }
            }
            grown.touched.clear();
            if next.is_empty() {
                break;
            }
            std::mem::swap(&mut front, &mut next);
            d += 1;
            // Their neighbours: within the tile, then across its sides and corners.
            for &(tz, tx, bits) in &front {
                let (tz, tx) = (tz as usize, tx as usize);
                let wide = bits | (bits << 1 & !COLUMN_0) | (bits >> 1 & !COLUMN_7);
                grown.add(tz, tx, wide | wide << 8 | wide >> 8);
                let tall = |b: u64| b | b << 8 | b >> 8;
                if tx > 0 && bits & COLUMN_0 != 0 {
                    grown.add(tz, tx - 1, tall((bits & COLUMN_0) << 7));
                }
                if tx + 1 < t && bits & COLUMN_7 != 0 {
                    grown.add(tz, tx + 1, tall((bits & COLUMN_7) >> 7));
                }
                if tz > 0 && bits & 0xFF != 0 {
                    grown.add(tz - 1, tx, (wide & 0xFF) << 56);
                    if tx > 0 && bits & 1 != 0 {
                        grown.add(tz - 1, tx - 1, 1 << 63);
                    }
                    if tx + 1 < t && bits & 1 << 7 != 0 {
                        grown.add(tz - 1, tx + 1, 1 << 56);
                    }
                }
                if tz + 1 < t && bits >> 56 != 0 {
                    grown.add(tz + 1, tx, wide >> 56);
                    if tx > 0 && bits & 1 << 56 != 0 {
                        grown.add(tz + 1, tx - 1, 1 << 7);
                    }
                    if tx + 1 < t && bits & 1 << 63 != 0 {
                        grown.add(tz + 1, tx + 1, 1);
                    }
                }
            }
        }
        dist
    }

    /// The receivers of the flat samples of `rows` (`key`: `2·L − H` by entry), stored into
    /// `at`: each drains to its equal-height neighbour of least key (samples that drain, not
    /// flat and not outlets, first; ties to the smallest neighbour index), or stays put
    /// (`NONE`) if none is less than its own. Relaxed atomics: the flats' entries are
    /// written, only the others' read. A flat inside a flat (eight flat neighbours) only
    /// compares their keys.
    fn receivers(self, rows: Range<usize>, filled: &[f32], key: &[i64], at: &[AtomicU32]) {
        let g = self.g;
        for z in rows {
            for wi in 0..g.w {
                let i = z * g.w + wi;
                let word = self.bits[i];
                if word == 0 {
                    continue;
                }
                let inner = g.inner(self.bits, z, wi);
                for b in Bits(word) {
                    let x = wi * 64 + b;
                    let c = z * g.n + x;
                    let around = g.around(c);
                    let (mut best, mut best_k) = (NONE, key[self.entry(z, x)]);
                    if inner >> b & 1 != 0 {
                        // Eight flat neighbours.
                        for (k, j) in around.into_iter().enumerate() {
                            let (zj, xj) = g.step(z, x, k);
                            let kj = key[self.entry(zj, xj)];
                            if kj < best_k {
                                best_k = kj;
                                best = j as u32;
                            }
                        }
                    } else {
                        let hc = filled[c];
                        for (k, j) in around.into_iter().enumerate() {
                            let (zj, xj) = g.step(z, x, k);
                            let kj = if self.has(zj, xj) {
                                key[self.entry(zj, xj)]
                            } else if filled[j] == hc && at[j].load(Relaxed) as usize != j {
                                i64::MIN
                            } else {
                                continue;
                            };
                            if kj < best_k {
                                best_k = kj;
                                best = j as u32;
                            }
                        }
                    }
                    debug_assert!(best != NONE, "flat sample {c} has no way down");
                    at[c].store(best, Relaxed);
                }
            }
        }
    }
}
