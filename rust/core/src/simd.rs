//! Runtime CPU-feature dispatch for the hot row kernels.
//!
//! A kernel body is written once as an `#[inline(always)]` function; [`dispatch!`] builds a
//! wrapper that calls an AVX2-compiled copy when the CPU supports it and the baseline copy
//! otherwise. Only wider vectors are enabled (no FMA), and Rust never contracts `a * b + c`, so
//! both copies return bit-identical results.

/// Build `fn $name(args)` dispatching to an AVX2 instance of `$body` when available.
macro_rules! dispatch {
    ($(#[$m:meta])* $vis:vis fn $name:ident($($a:ident : $t:ty),* $(,)?) => $body:ident) => {
        $(#[$m])*
        #[inline]
        $vis fn $name($($a: $t),*) {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2")]
                unsafe fn avx2($($a: $t),*) {
                    $body($($a),*)
                }
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU supports AVX2 (checked just above).
                    return unsafe { avx2($($a),*) };
                }
            }
            $body($($a),*)
        }
    };
}
pub(crate) use dispatch;
