//! The command recorder at the bottom of the stages: [`Rec`] records compute passes into one
//! command encoder (see [`crate::ctx::Pass`]), submits and waits ([`Rec::flush`]). Each stage
//! module adds its passes with an extension trait of its own (`NoisePasses`, `ErosionPasses`, …).

use crate::ctx::{Frame, Gpu, Pass, DISPATCH_SLOTS};
use crate::error::GpuError;
use crate::learned::{self, IterKey};
use crate::passes::Entry;
use crate::uniforms as u;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Records passes into one command encoder.
pub(crate) struct Rec<'g> {
    pub gpu: &'g Gpu,
    fr: Frame<'g>,
    pub enc: wgpu::CommandEncoder,
    pub n: usize,
    /// Speculative iteration counts (see [`Speculation`]); `None`: every iteration reads its
    /// convergence counter back.
    spec: Option<Speculation>,
    /// Counts to learn from the next read-back ([`Rec::learn_later`]).
    later: Vec<LearnLater>,
}

/// A count learned from words read back with the next read-back, whatever it is for.
struct LearnLater {
    key: IterKey,
    words: wgpu::Buffer,
    len: u64,
    runs: u32,
    count: fn(&[u32]) -> u32,
}

/// Runs of an iteration seen before its count is used: the erosion's first time step often
/// needs fewer relaxation dispatches than the later ones, so one run is not enough to go by
/// (an iteration that runs once per generation, as the drainage's, counts its run as these).
pub(crate) const MIN_RUNS: u32 = 2;

/// Generations whose speculative counts fell short (generated again with checks).
static MISSES: AtomicU64 = AtomicU64::new(0);

/// Generations of this process whose speculative counts fell short.
pub(crate) fn speculation_misses() -> u64 {
    MISSES.load(Ordering::Relaxed)
}

/// Dispatches recorded beyond the learned count when speculating on the erosion's coarser
/// evolution grid (the counts there vary by about one between the erosion's steps and between
/// seeds; each of these iterations runs once per step, so a dispatch of margin costs ten per
/// island). A count that falls short costs a second, checked generation.
const SPEC_MARGIN: u32 = 1;

/// The margin of the iterations on the island's own grid (the drainage's relaxations, once per
/// generation): their counts follow the island's largest lakes and flats and vary more
/// between seeds (`flat_routing` at 1025²: 4 for seeds 1–4, 7 for seed 5, which missed with a
/// margin of 1: one generation in eight ran twice). Three dispatches more cost two full-grid
/// passes per island; a miss costs the whole generation again.
const SPEC_MARGIN_FULL: u32 = 3;

/// Test hook ([`set_margin`]): the margin in place of [`SPEC_MARGIN`] (`u32::MAX`: none).
static MARGIN: AtomicU32 = AtomicU32::new(u32::MAX);

/// Test hook: record `margin` dispatches beyond the learned counts instead of
/// [`SPEC_MARGIN`] (`None`: the default again).
pub(crate) fn set_margin(margin: Option<u32>) {
    MARGIN.store(margin.unwrap_or(u32::MAX), Ordering::Relaxed);
}
/// Counters one generation can verify.
const VERIFY_SLOTS: u64 = 64;

/// Speculative iteration: an iterative pass whose count was learned in earlier runs records
/// that many dispatches (plus [`SPEC_MARGIN`], once seen in [`MIN_RUNS`] runs) without reading
/// its convergence counter back, and copies the counter after the last dispatch into a
/// verification slot (on the GPU). The slots come back with the next read-back, whatever it is for ([`Rec::read_back`]),
/// before the host uses anything read: all zero, every iteration converged and the results
/// are exactly the checked ones (a dispatch after convergence changes nothing); else
/// [`GpuError::Unconverged`], the pipeline generates again with checks, and the counts that
/// fell short are learned anew. (The GPU passes that follow an unconverged iteration only
/// waste time: every loop in the shaders is bounded.)
struct Speculation {
    slots: wgpu::Buffer,
    keys: Vec<IterKey>,
    /// Slots already read back and found zero.
    checked: usize,
}

impl<'g> Rec<'g> {
    pub fn new(gpu: &'g Gpu, grid: &u::Grid) -> Self {
        Rec {
            gpu,
            fr: Frame::new(gpu, grid),
            enc: gpu.encoder(),
            n: grid.n as usize,
            spec: None,
            later: Vec::new(),
        }
    }

    /// Nothing recorded so far waits for a later read-back: no verification slot unchecked and
    /// no count still to learn.
    pub fn settled(&self) -> bool {
        self.unchecked_slots().is_none() && self.later.is_empty()
    }

    /// Speculate from here on (see [`Speculation`]): the pipeline's generations after the
    /// first of each size.
    pub fn speculate(&mut self) {
        let slots = self.gpu.storage("verification", VERIFY_SLOTS * 4);
        self.enc.clear_buffer(&slots, 0, None);
        self.spec = Some(Speculation {
            slots,
            keys: Vec::new(),
            checked: 0,
        });
    }

    /// The dispatches to record for iteration `key` without reading its counter back, when
    /// speculating and its count is known and a verification slot is left.
    pub fn speculative_count(&self, key: IterKey) -> Option<u32> {
        let spec = self.spec.as_ref()?;
        if spec.keys.len() as u64 >= VERIFY_SLOTS {
            return None;
        }
        learned::get(key)
            .filter(|(_, runs)| *runs >= MIN_RUNS)
            .map(|(k, _)| {
                let m = MARGIN.load(Ordering::Relaxed);
                let default = if key.1 == self.n {
                    SPEC_MARGIN_FULL
                } else {
                    SPEC_MARGIN
                };
                k + if m == u32::MAX { default } else { m }
            })
    }

    /// Record the copy of the 4-byte convergence counter at `offset` of `counter` (0 when
    /// `key`'s speculative dispatches sufficed) into the next verification slot.
    pub fn verify_zero(&mut self, key: IterKey, counter: &wgpu::Buffer, offset: u64) {
        let spec = self.spec.as_mut().expect("speculating");
        let slot = spec.keys.len() as u64 * 4;
        spec.keys.push(key);
        self.enc
            .copy_buffer_to_buffer(counter, offset, &spec.slots, slot, 4);
    }

    /// Learn `key`'s count (`count` of the first `len` u32 words of `words`, over `runs`
    /// checked runs) from the next read-back: no round trip of its own.
    pub fn learn_later(
        &mut self,
        key: IterKey,
        words: &wgpu::Buffer,
        len: u64,
        runs: u32,
        count: fn(&[u32]) -> u32,
    ) {
        self.later.push(LearnLater {
            key,
            words: words.clone(),
            len,
            runs,
            count,
        });
    }

    /// The verification slots not checked yet, as a read-back part (slots `0..k`).
    fn unchecked_slots(&self) -> Option<(wgpu::Buffer, u64)> {
        let spec = self.spec.as_ref()?;
        (spec.keys.len() > spec.checked).then(|| (spec.slots.clone(), spec.keys.len() as u64 * 4))
    }

    /// Check the read-back verification slots `0..k`: an iteration that had not converged
    /// makes its count unknown again and the generation [`GpuError::Unconverged`].
    fn check_verification(&mut self, bytes: &[u8]) -> Result<(), GpuError> {
        let Some(spec) = &mut self.spec else {
            return Ok(());
        };
        spec.checked = bytes.len() / 4;
        let missed: Vec<IterKey> = u32s(bytes)
            .iter()
            .zip(&spec.keys)
            .filter(|(&c, _)| c != 0)
            .map(|(_, &k)| k)
            .collect();
        if missed.is_empty() {
            return Ok(());
        }
        MISSES.fetch_add(1, Ordering::Relaxed);
        learned::forget(&missed);
        Err(GpuError::Unconverged(format!("{missed:?}")))
    }

    /// Describe one dispatch of entry point `e` (see [`Pass`]; an entry point that is not
    /// registered makes [`Pass::run`] fail).
    pub fn pass<'r>(&'r mut self, e: Entry) -> Pass<'r, 'g> {
        let pipe = self.gpu.pipes.get(e).ok_or(e);
        Pass::new(&mut self.fr, &mut self.enc, pipe)
    }

    /// Submit what was recorded and wait; start a new encoder (the per-dispatch uniform
    /// slots are free again).
    pub fn flush(&mut self) -> Result<(), GpuError> {
        let enc = std::mem::replace(&mut self.enc, self.gpu.encoder());
        self.gpu.submit_wait(enc)?;
        self.fr.reset();
        Ok(())
    }

    /// Submit what was recorded without waiting for it; start a new encoder (the per-dispatch
    /// uniform slots are free again: their next writes are queued after this submission).
    pub fn submit(&mut self) {
        let enc = std::mem::replace(&mut self.enc, self.gpu.encoder());
        self.gpu.submit(enc);
        self.fr.reset();
    }

    /// Submit what was recorded together with copies of `parts` (`(buffer, bytes)`) into a
    /// staging buffer, wait once and return their bytes: one round trip where a
    /// [`Rec::flush`] followed by [`Gpu::read_back`] takes two. When speculating, the
    /// verification slots recorded since the last read-back come along and are checked before
    /// anything is returned: nothing on the host ever sees the products of an iteration that
    /// had not converged ([`GpuError::Unconverged`] instead).
    pub fn read_back(
        &mut self,
        parts: &[(&wgpu::Buffer, u64)],
        staging: Option<&wgpu::Buffer>,
    ) -> Result<Vec<Vec<u8>>, GpuError> {
        let verify = self.unchecked_slots();
        let later = std::mem::take(&mut self.later);
        let mut all = parts.to_vec();
        if let Some((b, bytes)) = &verify {
            all.push((b, *bytes));
        }
        all.extend(later.iter().map(|l| (&l.words, l.len * 4)));
        let enc = std::mem::replace(&mut self.enc, self.gpu.encoder());
        let mut out = self.gpu.read_back_after(enc, &all, staging)?;
        self.fr.reset();
        for l in later.iter().rev() {
            let words = u32s(&out.pop().expect("a part to learn from"));
            learned::learn(l.key, (l.count)(&words), l.runs);
        }
        if verify.is_some() {
            let slots = out.pop().expect("the verification part");
            self.check_verification(&slots)?;
        }
        Ok(out)
    }

    /// Per-dispatch uniform slots used since the last [`Rec::flush`].
    pub fn slots_used(&self) -> u64 {
        self.fr.used()
    }

    /// Submit first (without waiting) when fewer than `k` per-dispatch uniform slots are left.
    pub fn ensure_slots(&mut self, k: u64) -> Result<(), GpuError> {
        if self.slots_used() + k > DISPATCH_SLOTS {
            self.submit();
        }
        Ok(())
    }
}

pub(crate) fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

pub(crate) fn u32s(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}
