//! Helpers shared by the core's integration tests (`mod common;` in each test file).

// Each test file uses a subset of these.
#![allow(dead_code)]

use proptest::prelude::*;

/// Proptest cases per target: `PROPTEST_CASES` when set (`cargo xtask fuzz`), else `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Any `f32`, with NaN, the infinities, ±0, the extremes and ordinary ranges well represented.
pub fn wild_f32() -> impl Strategy<Value = f32> {
    prop_oneof![
        Just(f32::NAN),
        Just(f32::INFINITY),
        Just(f32::NEG_INFINITY),
        Just(0.0),
        Just(-0.0),
        Just(f32::MAX),
        Just(f32::MIN_POSITIVE),
        -2.0f32..2.0,
        -1.0e4f32..1.0e4,
        any::<f32>(),
    ]
}

/// `f()` run inside a rayon pool of `threads` threads (determinism tests).
pub fn on_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}
