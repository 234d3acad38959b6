//! Process memory settings for repeated generations.
//!
//! A generation allocates a few map-sized buffers (4–12 MB each at 1025²). glibc's malloc
//! hands such blocks back to the kernel when they are freed (they are `mmap`ed, or the heap
//! top is trimmed), so the next generation page-faults all of them in again: on the 2-core
//! virtual machine the benchmarks run on, that is about 6,400 page faults and 15–20 ms of CPU
//! time per default island, 10–15 % of the whole pipeline. [`reuse_freed_memory`] tells glibc
//! to keep such blocks for reuse instead.

/// Largest block (bytes) served from the reusable heap instead of a fresh `mmap`: glibc's
/// maximum, 32 MiB on 64-bit. Larger blocks (maps above 2049²) keep their own mappings and are
/// returned to the system when freed, so the memory kept is bounded.
pub const REUSE_BLOCK_LIMIT: usize = 32 << 20;

/// Free heap memory (bytes) kept at the top of a heap before glibc returns it to the system.
pub const KEEP_FREE_LIMIT: usize = 256 << 20;

/// Keep freed map-sized buffers for reuse by the next generation (glibc on Linux; a no-op
/// elsewhere). Process-wide: call it once at start-up from an application that generates
/// repeatedly (the `island` CLI, the benchmarks and the Godot extension do). Trade-off: up to
/// [`KEEP_FREE_LIMIT`] of freed memory may stay mapped to the process. Returns whether the
/// allocator accepted the settings.
pub fn reuse_freed_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn mallopt(param: i32, value: i32) -> i32;
        }
        const M_TRIM_THRESHOLD: i32 = -1;
        const M_MMAP_THRESHOLD: i32 = -3;
        // SAFETY: mallopt only changes allocator tuning parameters; both values are in the
        // ranges glibc documents (it returns 0 and changes nothing otherwise).
        unsafe {
            mallopt(M_MMAP_THRESHOLD, REUSE_BLOCK_LIMIT as i32) == 1
                && mallopt(M_TRIM_THRESHOLD, KEEP_FREE_LIMIT as i32) == 1
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// Buffers at least this large (bytes) are allocated by [`zeroed`] with transparent huge pages
/// requested: glibc always gives them fresh mappings, and faulting them in 2 MiB at a time
/// instead of 4 KiB costs a fraction of the time (64 MiB on the benchmark VM: ~100 ms in 4 KiB
/// pages, ~20 ms in huge pages).
pub const HUGE_PAGE_MIN: usize = REUSE_BLOCK_LIMIT;

/// A vector of `len` default values (zeros for numbers), first touched in parallel. Buffers of
/// [`HUGE_PAGE_MIN`] bytes or more ask the kernel for transparent huge pages (Linux
/// `madvise(MADV_HUGEPAGE)`; only a hint, ignored where unsupported).
pub fn zeroed<T: Copy + Default + Send + Sync>(len: usize) -> Vec<T> {
    filled_with(len, T::default)
}

/// A vector of `len` values `make()`, first touched in parallel, with huge pages requested like
/// [`zeroed`].
pub fn filled_with<T: Send>(len: usize, make: impl Fn() -> T + Sync) -> Vec<T> {
    use rayon::prelude::*;
    let mut v: Vec<T> = with_capacity(len);
    v.spare_capacity_mut()[..len]
        .par_chunks_mut(1 << 16)
        .for_each(|c| {
            for x in c {
                x.write(make());
            }
        });
    // SAFETY: the first `len` elements were initialised just above (capacity >= len).
    unsafe { v.set_len(len) };
    v
}

/// A vector of `len` zeros that nothing has touched yet: the allocator's zeroed memory
/// (`calloc`; a fresh mapping for large buffers, whose pages the kernel zeroes when first
/// written), with transparent huge pages requested for buffers of [`HUGE_PAGE_MIN`] bytes or
/// more, like [`with_capacity`]. For maps written once in parallel by their own pass, where
/// [`zeroed`]'s zeroing pass would be a second write.
pub fn zeros<T: bytemuck::Zeroable + Clone>(len: usize) -> Vec<T> {
    let bytes = len * std::mem::size_of::<T>();
    if bytes == 0 {
        return Vec::new();
    }
    let layout = std::alloc::Layout::array::<T>(len).expect("buffer too large");
    // SAFETY: the layout has a non-zero size; the allocation is checked for null; `T` is
    // `Zeroable`, so `len` zeroed values are valid `T`s, and the vector takes ownership of the
    // memory with the layout (alignment and size) the global allocator gave it.
    unsafe {
        let p = std::alloc::alloc_zeroed(layout) as *mut T;
        if p.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        if bytes >= HUGE_PAGE_MIN {
            advise_huge_pages(p as usize, bytes);
        }
        Vec::from_raw_parts(p, len, len)
    }
}

/// An empty vector with room for `len` values, for a map-sized output that is written once
/// through `spare_capacity_mut`: buffers of [`HUGE_PAGE_MIN`] bytes or more ask the kernel for
/// transparent huge pages, like [`zeroed`].
pub fn with_capacity<T>(len: usize) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(len);
    let bytes = len * std::mem::size_of::<T>();
    if bytes >= HUGE_PAGE_MIN {
        advise_huge_pages(v.as_mut_ptr() as usize, bytes);
    }
    v
}

fn advise_huge_pages(addr: usize, bytes: usize) {
    #[cfg(target_os = "linux")]
    {
        extern "C" {
            fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
        }
        const MADV_HUGEPAGE: i32 = 14;
        const HUGE: usize = 2 << 20;
        let start = (addr + HUGE - 1) & !(HUGE - 1);
        let end = (addr + bytes) & !(HUGE - 1);
        if end > start {
            // SAFETY: the range lies inside the vector's own allocation (rounded inwards to
            // whole huge pages); MADV_HUGEPAGE only changes how the kernel backs it.
            unsafe { madvise(start as *mut std::ffi::c_void, end - start, MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (addr, bytes);
}

/// Smallest block (bytes) [`BlockCache`] keeps for reuse: the size from which glibc always maps
/// a fresh block ([`REUSE_BLOCK_LIMIT`]); smaller blocks stay with the system allocator.
pub const BLOCK_CACHE_MIN: usize = REUSE_BLOCK_LIMIT;

/// Default of [`set_block_cache_limit`]: freed large blocks kept for reuse, in bytes (1 GiB; a
/// 4097² generation leaves about 390 MB kept, and fresh mappings push kept blocks out anyway).
pub const DEFAULT_BLOCK_CACHE_LIMIT: usize = 1 << 30;

/// Most blocks [`BlockCache`] keeps at once.
pub const BLOCK_CACHE_SLOTS: usize = 32;

/// Huge-page size the cached blocks are mapped and aligned in.
const HUGE_PAGE: usize = 2 << 20;

/// A global allocator for applications that generate islands of 4097² and more repeatedly:
/// map-sized blocks of [`BLOCK_CACHE_MIN`] bytes or more are mapped by it in transparent huge
/// pages and, when freed, kept (up to [`set_block_cache_limit`] bytes) for the next block of
/// the same size, instead of going back to the kernel, which zeroes every page of a fresh
/// mapping again when it is first written. A 4097² generation allocates about 1.25 GB of such
/// maps; on the benchmark VM a fresh 64 MiB block costs about 9 ms to fault in (36 ms in 4 KiB
/// pages), a reused one 2.7 ms to overwrite. Reuse works within one generation (maps freed
/// after the coast pass serve the erosion and drainage) and across generations: per 4097²
/// island about 10 blocks reused, 3 cut from larger kept ones, 4 mapped afresh.
///
/// The process never holds more than it would without the cache: a kept block stands for
/// memory that was in use before, and leaves when reused or when a fresh mapping takes its
/// place (see `take`), so the peak resident memory is that of the live blocks.
///
/// Everything else goes to [`std::alloc::System`]; so does everything on systems other than
/// 64-bit Linux on x86_64 or aarch64. Install it in the binary
/// (`#[global_allocator] static A: BlockCache = BlockCache;`): the Godot extension, the CLI
/// and the benchmarks do. [`release_cached_blocks`] returns the
/// kept blocks to the system.
pub struct BlockCache;

/// Freed blocks kept by [`BlockCache`]: (address, mapped length) pairs, 0 length for a free slot.
struct Kept {
    blocks: [(usize, usize); BLOCK_CACHE_SLOTS],
    bytes: usize,
}

static KEPT: std::sync::Mutex<Kept> = std::sync::Mutex::new(Kept {
    blocks: [(0, 0); BLOCK_CACHE_SLOTS],
    bytes: 0,
});

static KEPT_LIMIT: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(DEFAULT_BLOCK_CACHE_LIMIT);

/// How many bytes of freed large blocks [`BlockCache`] keeps for reuse at most (0 keeps none);
/// blocks kept beyond a lowered limit are returned to the system at once.
pub fn set_block_cache_limit(bytes: usize) {
    KEPT_LIMIT.store(bytes, std::sync::atomic::Ordering::Relaxed);
    trim_kept(bytes);
}

/// Return every block [`BlockCache`] keeps to the system (e.g. after the last generation of a
/// large island). Returns the bytes released.
pub fn release_cached_blocks() -> usize {
    trim_kept(0)
}

/// Bytes of freed blocks [`BlockCache`] keeps now.
pub fn cached_block_bytes() -> usize {
    lock_kept().bytes
}

/// How [`BlockCache`] has served its blocks since the process started: kept blocks of the
/// same size, kept larger blocks cut to size, fresh mappings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockCacheCounts {
    pub reused: usize,
    pub cut: usize,
    pub mapped: usize,
}

static COUNTS: [std::sync::atomic::AtomicUsize; 3] = [
    std::sync::atomic::AtomicUsize::new(0),
    std::sync::atomic::AtomicUsize::new(0),
    std::sync::atomic::AtomicUsize::new(0),
];

/// [`BlockCacheCounts`] so far.
pub fn block_cache_counts() -> BlockCacheCounts {
    let c = |k: usize| COUNTS[k].load(std::sync::atomic::Ordering::Relaxed);
    BlockCacheCounts {
        reused: c(0),
        cut: c(1),
        mapped: c(2),
    }
}

fn count(k: usize) {
    COUNTS[k].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

fn lock_kept() -> std::sync::MutexGuard<'static, Kept> {
    // A panic never happens while the lock is held; recover the data if it ever did.
    KEPT.lock().unwrap_or_else(|e| e.into_inner())
}

/// Unmap kept blocks until at most `limit` bytes stay; returns the bytes released.
fn trim_kept(limit: usize) -> usize {
    let mut k = lock_kept();
    let out = take_out(&mut k, limit);
    drop(k);
    unmap_all(&out)
}

/// Take kept blocks out of `k` (in slot order) until at most `limit` bytes stay; returns them
/// for [`unmap_all`] once the lock is released (no allocation: this runs inside the allocator).
fn take_out(k: &mut Kept, limit: usize) -> [(usize, usize); BLOCK_CACHE_SLOTS] {
    let mut out = [(0usize, 0usize); BLOCK_CACHE_SLOTS];
    for (kept, o) in k.blocks.iter_mut().zip(out.iter_mut()) {
        if k.bytes <= limit {
            break;
        }
        if kept.1 != 0 {
            *o = std::mem::take(kept);
            k.bytes -= o.1;
        }
    }
    out
}

/// Unmap the blocks [`take_out`] returned; returns their bytes.
fn unmap_all(blocks: &[(usize, usize)]) -> usize {
    let mut total = 0;
    for &(addr, len) in blocks.iter().filter(|b| b.1 != 0) {
        sys::unmap(addr, len);
        total += len;
    }
    total
}

/// Whether [`BlockCache`] serves a block of this layout itself (decided from the layout alone,
/// so allocation and release agree).
fn cached_layout(layout: std::alloc::Layout) -> bool {
    sys::SUPPORTED && layout.size() >= BLOCK_CACHE_MIN && layout.align() <= 4096
}

/// The mapped length of a cached block of `size` bytes: whole huge pages.
fn mapped_len(size: usize) -> usize {
    size.div_ceil(HUGE_PAGE) * HUGE_PAGE
}

impl BlockCache {
    /// A block of `len` mapped bytes: a kept one (`true`: its contents are stale) or a fresh,
    /// zeroed mapping (`false`); null if the system has no memory.
    ///
    /// A kept block of exactly `len` bytes is taken first, else the smallest larger one, whose
    /// tail is unmapped (its head's pages are in place already). Before a fresh mapping, kept
    /// blocks of at least `len` bytes in all (or all of them) are
    /// returned to the system, so the process never holds more than it would without the
    /// cache: kept blocks stand only for memory that was in use before (a block is kept when
    /// freed, and leaves the cache when reused or when a new mapping takes its place), and the
    /// peak resident memory stays that of the live blocks.
    fn take(len: usize) -> (*mut u8, bool) {
        let mut k = lock_kept();
        // The same size, else the smallest larger block with its tail handed back.
        let fit = (k.blocks.iter().enumerate())
            .filter(|&(_, &(_, l))| l >= len)
            .min_by_key(|&(_, &(_, l))| l)
            .map(|(slot, _)| slot);
        if let Some(slot) = fit {
            let (addr, l) = std::mem::take(&mut k.blocks[slot]);
            k.bytes -= l;
            drop(k);
            if l > len {
                sys::unmap(addr + len, l - len);
            }
            count(if l > len { 1 } else { 0 });
            return (addr as *mut u8, true);
        }
        // Room for the fresh mapping: kept blocks of at least `len` bytes (or all) go.
        let limit = k.bytes.saturating_sub(len);
        let out = take_out(&mut k, limit);
        drop(k);
        unmap_all(&out);
        count(2);
        (sys::map(len), false)
    }
}

// SAFETY: blocks of cached layouts are whole private mappings of `mapped_len(size)` bytes,
// aligned to 2 MiB (>= the layout's alignment, at most 4096), owned by exactly one user between
// `alloc` and `dealloc` (a kept block is removed from `KEPT` under the lock before it is handed
// out); every other layout is passed to `System` unchanged, and `cached_layout` depends only on
// the layout, so each block is released by the allocator that made it.
unsafe impl std::alloc::GlobalAlloc for BlockCache {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        if !cached_layout(layout) {
            return unsafe { std::alloc::System.alloc(layout) };
        }
        Self::take(mapped_len(layout.size())).0
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        if !cached_layout(layout) {
            return unsafe { std::alloc::System.alloc_zeroed(layout) };
        }
        let (p, stale) = Self::take(mapped_len(layout.size()));
        if stale {
            // SAFETY: `p` is a block of at least `layout.size()` writable bytes.
            unsafe { std::ptr::write_bytes(p, 0, layout.size()) };
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        if !cached_layout(layout) {
            return unsafe { std::alloc::System.dealloc(ptr, layout) };
        }
        let len = mapped_len(layout.size());
        {
            let mut k = lock_kept();
            let limit = KEPT_LIMIT.load(std::sync::atomic::Ordering::Relaxed);
            if k.bytes + len <= limit {
                if let Some(slot) = k.blocks.iter().position(|&(_, l)| l == 0) {
                    k.blocks[slot] = (ptr as usize, len);
                    k.bytes += len;
                    return;
                }
            }
        }
        sys::unmap(ptr as usize, len);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        // SAFETY (all branches): the caller's contract for `realloc` (a live block of
        // `layout`, a valid new size) is passed on unchanged.
        let new_layout =
            unsafe { std::alloc::Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (cached_layout(layout), cached_layout(new_layout)) {
            (false, false) => unsafe { std::alloc::System.realloc(ptr, layout, new_size) },
            (true, true) if mapped_len(layout.size()) == mapped_len(new_size) => ptr,
            _ => {
                let new = unsafe { self.alloc(new_layout) };
                if !new.is_null() {
                    unsafe {
                        std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                }
                new
            }
        }
    }
}

/// The memory mappings behind [`BlockCache`].
// 64-bit Linux on x86_64 and aarch64 (the addon's Linux builds): the `mmap` signature and flag
// values below are theirs. Elsewhere every block goes to the system allocator.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod sys {
    use super::HUGE_PAGE;
    use std::ffi::c_void;

    pub const SUPPORTED: bool = true;

    extern "C" {
        fn mmap(
            addr: *mut c_void,
            len: usize,
            prot: i32,
            flags: i32,
            fd: i32,
            off: i64,
        ) -> *mut c_void;
        fn munmap(addr: *mut c_void, len: usize) -> i32;
        fn madvise(addr: *mut c_void, len: usize, advice: i32) -> i32;
    }
    const PROT_READ: i32 = 1;
    const PROT_WRITE: i32 = 2;
    const MAP_PRIVATE: i32 = 2;
    const MAP_ANONYMOUS: i32 = 0x20;
    const MADV_HUGEPAGE: i32 = 14;

    /// A fresh zeroed mapping of `len` bytes (a multiple of [`HUGE_PAGE`]) starting on a huge
    /// page, with transparent huge pages requested; null on failure.
    pub fn map(len: usize) -> *mut u8 {
        let Some(over) = len.checked_add(HUGE_PAGE) else {
            return std::ptr::null_mut();
        };
        // SAFETY: an anonymous private mapping at an address of the kernel's choosing; the
        // unaligned head and the tail beyond `len` are unmapped again, leaving exactly
        // `[start, start + len)`, which nothing else refers to.
        unsafe {
            let p = mmap(
                std::ptr::null_mut(),
                over,
                PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS,
                -1,
                0,
            );
            if p as isize == -1 {
                return std::ptr::null_mut();
            }
            let base = p as usize;
            let start = (base + HUGE_PAGE - 1) & !(HUGE_PAGE - 1);
            if start > base {
                munmap(p, start - base);
            }
            let end = base + over;
            if end > start + len {
                munmap((start + len) as *mut c_void, end - start - len);
            }
            madvise(start as *mut c_void, len, MADV_HUGEPAGE);
            start as *mut u8
        }
    }

    /// Unmap a block made by [`map`].
    pub fn unmap(addr: usize, len: usize) {
        // SAFETY: `[addr, addr + len)` is a whole mapping made by `map` that nobody uses any more.
        unsafe { munmap(addr as *mut c_void, len) };
    }
}

#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
mod sys {
    pub const SUPPORTED: bool = false;
    pub fn map(_len: usize) -> *mut u8 {
        std::ptr::null_mut()
    }
    pub fn unmap(_addr: usize, _len: usize) {}
}

#[cfg(test)]
mod tests {
    #[test]
    fn zeroed_is_zero_small_and_huge() {
        for len in [0usize, 1, 1000, (super::HUGE_PAGE_MIN / 4) + 12345] {
            let v: Vec<f32> = super::zeroed(len);
            assert_eq!(v.len(), len);
            assert!(v.iter().all(|&x| x == 0.0));
        }
        let v: Vec<[u8; 4]> = super::zeroed(77);
        assert!(v.iter().all(|&x| x == [0; 4]));
    }

    #[test]
    fn zeros_are_zero_and_usable_small_and_huge() {
        for len in [0usize, 1, 1000, (super::HUGE_PAGE_MIN / 4) + 12345] {
            let mut v: Vec<f32> = super::zeros(len);
            assert_eq!(v.len(), len);
            assert!(v.iter().all(|&x| x.to_bits() == 0));
            // Grows and frees like any vector.
            v.push(1.5);
            assert_eq!(v[len], 1.5);
        }
        let v: Vec<u8> = super::zeros(3);
        assert_eq!(v, [0, 0, 0]);
    }

    /// Freed large blocks are kept and handed out again (same address), zeroed when asked for
    /// zeros; the limit and the release return them; small and over-aligned layouts pass by.
    #[test]
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    fn block_cache_reuses_large_blocks() {
        use super::*;
        use std::alloc::{GlobalAlloc, Layout};
        let a = BlockCache;
        let big = Layout::from_size_align(BLOCK_CACHE_MIN + 12345, 16).unwrap();
        let len = mapped_len(big.size());
        let counts = block_cache_counts();
        assert_eq!(len % (2 << 20), 0);
        assert!(len >= big.size());
        unsafe {
            let p = a.alloc_zeroed(big);
            assert!(!p.is_null());
            assert_eq!(p as usize % (2 << 20), 0);
            let s = std::slice::from_raw_parts_mut(p, big.size());
            assert!(s.iter().all(|&b| b == 0));
            s.fill(7);
            let before = cached_block_bytes();
            a.dealloc(p, big);
            assert_eq!(cached_block_bytes(), before + len);
            // The same block again, its old contents visible to `alloc`...
            let q = a.alloc(big);
            assert_eq!(q, p);
            assert_eq!(*q.add(big.size() - 1), 7);
            a.dealloc(q, big);
            // ... and zeroed for `alloc_zeroed`.
            let z = a.alloc_zeroed(big);
            assert_eq!(z, p);
            assert!(std::slice::from_raw_parts(z, big.size())
                .iter()
                .all(|&b| b == 0));
            // Growing within the mapped length keeps the block; past it moves the contents.
            *z.add(5) = 9;
            let g = a.realloc(z, big, big.size() + 100);
            assert_eq!(g, z);
            let grown = Layout::from_size_align(big.size() + 100, 16).unwrap();
            let h = a.realloc(g, grown, len + 1);
            assert_eq!(*h.add(5), 9);
            a.dealloc(h, Layout::from_size_align(len + 1, 16).unwrap());
            // A block of another size is mapped afresh, and the kept one makes room for it.
            release_cached_blocks();
            let r = a.alloc(big);
            a.dealloc(r, big);
            assert_eq!(cached_block_bytes(), len);
            let other = Layout::from_size_align(2 * len, 16).unwrap();
            let o = a.alloc(other);
            assert_eq!(cached_block_bytes(), 0, "the kept block made room");
            a.dealloc(o, other);
            assert_eq!(cached_block_bytes(), mapped_len(other.size()));
            // A smaller block comes from the larger kept one, its tail handed back.
            let s = a.alloc(big);
            assert_eq!(s, o);
            assert_eq!(cached_block_bytes(), 0);
            a.dealloc(s, big);
            assert_eq!(cached_block_bytes(), len);
            release_cached_blocks();
            let now = block_cache_counts();
            assert!(now.reused >= counts.reused + 2, "{now:?}");
            assert!(now.cut > counts.cut, "{now:?}");
            assert!(now.mapped >= counts.mapped + 3, "{now:?}");
            // A limit of 0 keeps nothing: blocks go straight back to the system.
            set_block_cache_limit(0);
            assert_eq!(cached_block_bytes(), 0);
            let r = a.alloc(big);
            a.dealloc(r, big);
            assert_eq!(cached_block_bytes(), 0);
            set_block_cache_limit(DEFAULT_BLOCK_CACHE_LIMIT);
            let r = a.alloc(big);
            a.dealloc(r, big);
            assert!(release_cached_blocks() >= len);
            assert_eq!(cached_block_bytes(), 0);
            // Small blocks stay with the system allocator.
            let small = Layout::from_size_align(1000, 8).unwrap();
            let p = a.alloc(small);
            a.dealloc(p, small);
            assert_eq!(cached_block_bytes(), 0);
        }
    }

    #[test]
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn glibc_accepts_the_settings() {
        assert!(super::reuse_freed_memory());
    }
}
