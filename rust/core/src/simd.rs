//! SIMD in the core: one idiom, plus hand-written kernels only where it cannot serve.
//!
//! **The idiom.** A row kernel is plain portable Rust written once as an `#[inline(always)]`
//! body — straight loops over slices or fixed 8-lane arrays, or the [`lanes`] types
//! ([`lanes::F8`], [`lanes::I8`], [`lanes::M8`]: eight lanes with lane-wise IEEE operations)
//! where a kernel needs selects, masks or lane-wise integer work — and [`dispatch!`] builds a
//! wrapper that calls an AVX2-compiled copy of it when the CPU supports it and the baseline
//! (SSE2) copy otherwise. Only wider vectors are enabled (no FMA), and Rust never contracts
//! `a * b + c`, so both copies return bit-identical results. Users: `gradient_noise`
//! (`fbm_row`), `value_noise`, `mask`, `river`, `biomes` (with [`lanes`]), `distance`,
//! `normals`.
//!
//! **Hand-written kernels** (`std::arch` AVX2 intrinsics, behind [`has_avx2`]) exist only where
//! the compiler leaves the idiom scalar; each sits next to its scalar reference, performs the
//! same operations in the same order, and names in a header comment the test that pins it to
//! that reference bit for bit and the bench row that justifies it:
//! `gradient_noise::avx2` (the in-register lattice window of the fBm octave row) and
//! `coast::avx2` (the fused shaping-curve + coastal-falloff row, with gathers and blends).

/// Whether the AVX2 kernels may run: the CPU has AVX2 (cached by the standard library after
/// the first call) and [`force_scalar`] is off.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn has_avx2() -> bool {
    !force_scalar() && std::arch::is_x86_feature_detected!("avx2")
}

/// [`force_scalar`]'s state: 0 off, 1 on, 2 not read from the environment yet.
static FORCE_SCALAR: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(2);

/// Whether the baseline (SSE2 / portable) kernels run even on a CPU with AVX2: set by the
/// environment variable `ISLAND_FORCE_SCALAR=1` (read once, at the first generation) or by
/// [`set_force_scalar`]. Both paths give the same bits (`tests/golden.rs` checks it); this is
/// a switch for that check and for bisecting a suspected difference, not for speed.
pub fn force_scalar() -> bool {
    use std::sync::atomic::Ordering::Relaxed;
    match FORCE_SCALAR.load(Relaxed) {
        0 => false,
        1 => true,
        _ => {
            let on = std::env::var_os("ISLAND_FORCE_SCALAR").is_some_and(|v| v == "1");
            // A concurrent set_force_scalar wins over the environment.
            let _ = FORCE_SCALAR.compare_exchange(2, on as u8, Relaxed, Relaxed);
            FORCE_SCALAR.load(Relaxed) == 1
        }
    }
}

/// Turn [`force_scalar`] on or off for the whole process (overrides `ISLAND_FORCE_SCALAR`).
/// Affects generations started afterwards.
pub fn set_force_scalar(on: bool) {
    FORCE_SCALAR.store(on as u8, std::sync::atomic::Ordering::Relaxed);
}

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
                if $crate::simd::has_avx2() {
                    // SAFETY: the CPU supports AVX2 (checked just above).
                    return unsafe { avx2($($a),*) };
                }
            }
            $body($($a),*)
        }
    };
}
pub(crate) use dispatch;

/// Eight f32 lanes with lane-wise IEEE operations (plain arrays that compile to AVX2 or SSE
/// vectors; no FMA, so every build gives the same bits).
pub(crate) mod lanes {
    use std::ops::{Add, Div, Mul, Sub};

    pub const N: usize = 8;

    #[derive(Clone, Copy, Debug, PartialEq)]
    #[repr(C, align(32))]
    pub struct F8(pub [f32; N]);

    /// Lane masks: all ones (true) or zero.
    #[derive(Clone, Copy, Debug, PartialEq)]
    #[repr(C, align(32))]
    pub struct M8(pub [u32; N]);

    /// Integer lanes (wrapping arithmetic).
    #[derive(Clone, Copy, Debug, PartialEq)]
    #[repr(C, align(32))]
    pub struct I8(pub [i32; N]);

    #[inline(always)]
    fn map<T: Copy, U: Copy + Default>(a: [T; N], f: impl Fn(T) -> U) -> [U; N] {
        let mut r = [U::default(); N];
        for l in 0..N {
            r[l] = f(a[l]);
        }
        r
    }

    #[inline(always)]
    fn zip<T: Copy, U: Copy, V: Copy + Default>(
        a: [T; N],
        b: [U; N],
        f: impl Fn(T, U) -> V,
    ) -> [V; N] {
        let mut r = [V::default(); N];
        for l in 0..N {
            r[l] = f(a[l], b[l]);
        }
        r
    }

    macro_rules! binop {
        ($tr:ident, $f:ident, $op:tt) => {
            impl $tr for F8 {
                type Output = F8;
                #[inline(always)]
                fn $f(self, o: F8) -> F8 {
                    F8(zip(self.0, o.0, |a, b| a $op b))
                }
            }
        };
    }
    binop!(Add, add, +);
    binop!(Sub, sub, -);
    binop!(Mul, mul, *);
    binop!(Div, div, /);

    impl F8 {
        #[inline(always)]
        pub fn splat(v: f32) -> F8 {
            F8([v; N])
        }
        #[inline(always)]
        pub fn load(s: &[f32]) -> F8 {
            let mut r = [0.0; N];
            r.copy_from_slice(&s[..N]);
            F8(r)
        }
        #[inline(always)]
        pub fn sqrt(self) -> F8 {
            F8(map(self.0, f32::sqrt))
        }
        #[inline(always)]
        pub fn lt(self, o: F8) -> M8 {
            M8(zip(self.0, o.0, |a, b| 0u32.wrapping_sub((a < b) as u32)))
        }
        #[inline(always)]
        pub fn gt(self, o: F8) -> M8 {
            o.lt(self)
        }
        #[inline(always)]
        pub fn le(self, o: F8) -> M8 {
            M8(zip(self.0, o.0, |a, b| 0u32.wrapping_sub((a <= b) as u32)))
        }
        #[inline(always)]
        pub fn ge(self, o: F8) -> M8 {
            o.le(self)
        }
        #[inline(always)]
        pub fn eq(self, o: F8) -> M8 {
            M8(zip(self.0, o.0, |a, b| 0u32.wrapping_sub((a == b) as u32)))
        }
        /// `f32::clamp` lane-wise (NaN stays NaN).
        #[inline(always)]
        pub fn clamp(self, lo: f32, hi: f32) -> F8 {
            let x = self.lt(F8::splat(lo)).select(F8::splat(lo), self);
            x.gt(F8::splat(hi)).select(F8::splat(hi), x)
        }
        /// The lanes where `m` is set, +0.0 elsewhere.
        #[inline(always)]
        pub fn and(self, m: M8) -> F8 {
            F8(zip(self.0, m.0, |a, k| f32::from_bits(a.to_bits() & k)))
        }
        #[inline(always)]
        pub fn abs(self) -> F8 {
            F8(map(self.0, |a| f32::from_bits(a.to_bits() & 0x7fff_ffff)))
        }
        /// `a > b ? a : b` lane-wise.
        #[inline(always)]
        pub fn max(self, o: F8) -> F8 {
            self.gt(o).select(self, o)
        }
        /// `a < b ? a : b` lane-wise.
        #[inline(always)]
        pub fn min(self, o: F8) -> F8 {
            self.lt(o).select(self, o)
        }
        /// Smallest lane (`b < a ? b : a` from the first lane on).
        #[inline(always)]
        pub fn hmin(self) -> f32 {
            self.0
                .iter()
                .fold(self.0[0], |a, &b| if b < a { b } else { a })
        }
        /// Largest lane (`b > a ? b : a` from the first lane on).
        #[inline(always)]
        pub fn hmax(self) -> f32 {
            self.0
                .iter()
                .fold(self.0[0], |a, &b| if b > a { b } else { a })
        }
        #[inline(always)]
        pub fn to_bits(self) -> I8 {
            I8(map(self.0, |a| a.to_bits() as i32))
        }
    }

    impl M8 {
        #[inline(always)]
        pub fn select(self, a: F8, b: F8) -> F8 {
            F8(zip(
                self.0,
                zip(a.0, b.0, |x, y| (x.to_bits(), y.to_bits())),
                |k, (x, y)| f32::from_bits((x & k) | (y & !k)),
            ))
        }
        #[inline(always)]
        pub fn select_i(self, a: I8, b: I8) -> I8 {
            I8(zip(self.0, zip(a.0, b.0, |x, y| (x, y)), |k, (x, y)| {
                ((x as u32 & k) | (y as u32 & !k)) as i32
            }))
        }
        #[inline(always)]
        pub fn and_mask(self, o: M8) -> M8 {
            M8(zip(self.0, o.0, |a, b| a & b))
        }
        /// Bit l set where lane l is set (a sign-bit gather, `movmskps`).
        #[inline(always)]
        pub fn bits(self) -> u32 {
            #[cfg(target_arch = "x86_64")]
            {
                use std::arch::x86_64::{__m128, _mm_movemask_ps};
                let [a, b]: [[u32; 4]; 2] = [
                    [self.0[0], self.0[1], self.0[2], self.0[3]],
                    [self.0[4], self.0[5], self.0[6], self.0[7]],
                ];
                // SAFETY: [u32; 4] and __m128 have the same size and every bit pattern is valid
                // for both; SSE is part of the x86_64 baseline, so the intrinsic is available.
                unsafe {
                    let (a, b) = (
                        std::mem::transmute::<[u32; 4], __m128>(a),
                        std::mem::transmute::<[u32; 4], __m128>(b),
                    );
                    (_mm_movemask_ps(a) | (_mm_movemask_ps(b) << 4)) as u32
                }
            }
            #[cfg(not(target_arch = "x86_64"))]
            {
                let mut m = 0;
                for l in 0..N {
                    m |= (self.0[l] >> 31) << l;
                }
                m
            }
        }
    }

    impl I8 {
        #[inline(always)]
        pub fn splat(v: i32) -> I8 {
            I8([v; N])
        }
        #[inline(always)]
        pub fn add(self, o: I8) -> I8 {
            I8(zip(self.0, o.0, i32::wrapping_add))
        }
        #[inline(always)]
        pub fn sub(self, o: I8) -> I8 {
            I8(zip(self.0, o.0, i32::wrapping_sub))
        }
        #[inline(always)]
        pub fn and(self, m: u32) -> I8 {
            I8(map(self.0, |a| (a as u32 & m) as i32))
        }
        #[inline(always)]
        pub fn or(self, m: u32) -> I8 {
            I8(map(self.0, |a| (a as u32 | m) as i32))
        }
        #[inline(always)]
        pub fn shr(self, n: u32) -> I8 {
            I8(map(self.0, |a| ((a as u32) >> n) as i32))
        }
        #[inline(always)]
        pub fn shl(self, n: u32) -> I8 {
            I8(map(self.0, |a| ((a as u32) << n) as i32))
        }
        #[inline(always)]
        pub fn eq(self, o: I8) -> M8 {
            M8(zip(self.0, o.0, |a, b| 0u32.wrapping_sub((a == b) as u32)))
        }
        #[inline(always)]
        pub fn to_f32(self) -> F8 {
            F8(map(self.0, |a| a as f32))
        }
        #[inline(always)]
        pub fn bits_to_f32(self) -> F8 {
            F8(map(self.0, |a| f32::from_bits(a as u32)))
        }
    }
}
