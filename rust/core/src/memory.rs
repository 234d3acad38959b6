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
        unsafe { mallopt(M_MMAP_THRESHOLD, REUSE_BLOCK_LIMIT as i32) == 1 && mallopt(M_TRIM_THRESHOLD, KEEP_FREE_LIMIT as i32) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    #[test]
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn glibc_accepts_the_settings() {
        assert!(super::reuse_freed_memory());
    }
}
