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

    #[test]
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn glibc_accepts_the_settings() {
        assert!(super::reuse_freed_memory());
    }
}
