//! Deterministic transcendental functions for the generation path.
//!
//! `f32::exp`, `ln`, `powf`, `acos`, `tan`, `cos`, `hypot`… call the platform's math library
//! (glibc, the Windows CRT, Apple's libm), whose results are not correctly rounded and differ in
//! the last bit between platforms; erosion and the drainage network amplify one ulp into a
//! different valley. Every function here is the pure-Rust [`libm`] crate (a port of musl /
//! FreeBSD msun): plain IEEE-754 `+ − × ÷ √` and integer bit work, compiled by rustc (which
//! never contracts `a * b + c` into a fused multiply-add), so the same input gives the same bits
//! on every OS, CPU and thread count. Only `sqrt`, `fma` and `rint` may use a hardware
//! instruction inside `libm`, and those are exact by IEEE-754.
//!
//! `f32::sqrt`, `abs`, `floor`, `ceil`, `round`, `min`, `max`, `clamp`, `mul_add`,
//! `to_radians` and `to_degrees` (one multiplication by a constant) are exact or fully specified
//! and stay as they are. `tests/no_platform_math.rs` fails on any platform-math call in
//! `src/` outside this module and test code.

/// `e^x` (≤ 0.51 ULP). For `|x| < 88` the table-driven algorithm of ARM's optimized-routines
/// (the one glibc's `expf` uses), written out here: `libm`'s `expf` (FreeBSD's) is about twice as
/// slow, and the gaussian-islands base evaluates one per sample and mountain. The work is in
/// `f64` with plain `+ −  ×` (the same bits everywhere); other inputs (overflow, underflow,
/// NaN, ±∞) go to `libm`.
#[inline]
pub fn exp(x: f32) -> f32 {
    // 2^(i/32) as f64 bits, minus i << 47 (so that adding k << 47 scales by 2^(k/32)).
    const T: [u64; 32] = [
        0x3ff0000000000000,
        0x3fefd9b0d3158574,
        0x3fefb5586cf9890f,
        0x3fef9301d0125b51,
        0x3fef72b83c7d517b,
        0x3fef54873168b9aa,
        0x3fef387a6e756238,
        0x3fef1e9df51fdee1,
        0x3fef06fe0a31b715,
        0x3feef1a7373aa9cb,
        0x3feedea64c123422,
        0x3feece086061892d,
        0x3feebfdad5362a27,
        0x3feeb42b569d4f82,
        0x3feeab07dd485429,
        0x3feea47eb03a5585,
        0x3feea09e667f3bcd,
        0x3fee9f75e8ec5f74,
        0x3feea11473eb0187,
        0x3feea589994cce13,
        0x3feeace5422aa0db,
        0x3feeb737b0cdc5e5,
        0x3feec49182a3f090,
        0x3feed503b23e255d,
        0x3feee89f995ad3ad,
        0x3feeff76f2fb5e47,
        0x3fef199bdd85529c,
        0x3fef3720dcef9069,
        0x3fef5818dcfba487,
        0x3fef7c97337b9b5f,
        0x3fefa4afa2a490da,
        0x3fefd0765b6e4540,
    ];
    // 32 / ln 2; 1.5 · 2^52 (adding it rounds to an integer); the minimax cubic of 2^(r/32).
    let inv_ln2_n = f64::from_bits(0x40471547652b82fe);
    let shift = f64::from_bits(0x4338000000000000);
    let c0 = f64::from_bits(0x3ebc6af84b912394);
    let c1 = f64::from_bits(0x3f2ebfce50fac4f3);
    let c2 = f64::from_bits(0x3f962e42ff0c52d6);
    // |x| ≥ 88 (0x42b0_0000 is 88.0), ∞ and NaN.
    if (x.to_bits() >> 20) & 0x7ff >= 0x42b {
        return libm::expf(x);
    }
    let z = inv_ln2_n * x as f64;
    let kd = z + shift;
    let ki = kd.to_bits();
    let kd = kd - shift;
    let r = z - kd;
    let t = T[(ki % 32) as usize].wrapping_add(ki << 47);
    let s = f64::from_bits(t);
    let p = c0 * r + c1;
    let r2 = r * r;
    let y = c2 * r + 1.0;
    let y = p * r2 + y;
    (y * s) as f32
}

/// Natural logarithm.
#[inline]
pub fn ln(x: f32) -> f32 {
    libm::logf(x)
}

/// `x^y`.
#[inline]
pub fn powf(x: f32, y: f32) -> f32 {
    libm::powf(x, y)
}

/// `x^n` by repeated squaring, in the order of compiler-rt's `__powisf2` (what `f32::powi`
/// calls at run time on most targets), written out so that the order of the multiplications is
/// ours and not left to the optimiser.
#[inline]
pub fn powi(mut x: f32, n: i32) -> f32 {
    let recip = n < 0;
    let mut b = n;
    let mut r = 1.0f32;
    loop {
        if b & 1 != 0 {
            r *= x;
        }
        b /= 2;
        if b == 0 {
            break;
        }
        x *= x;
    }
    if recip {
        1.0 / r
    } else {
        r
    }
}

/// Arc cosine, radians.
#[inline]
pub fn acos(x: f32) -> f32 {
    libm::acosf(x)
}

/// Tangent of `x` radians.
#[inline]
pub fn tan(x: f32) -> f32 {
    libm::tanf(x)
}

/// Sine of `x` radians.
#[inline]
pub fn sin(x: f32) -> f32 {
    libm::sinf(x)
}

/// Cosine of `x` radians.
#[inline]
pub fn cos(x: f32) -> f32 {
    libm::cosf(x)
}

/// `√(x² + y²)` without undue overflow.
#[inline]
pub fn hypot(x: f32, y: f32) -> f32 {
    libm::hypotf(x, y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powi_matches_repeated_multiplication() {
        for &x in &[0.0f32, 1.0, -1.5, 0.37, 2.0, 1.0e-3, 123.456] {
            assert_eq!(powi(x, 0), 1.0);
            assert_eq!(powi(x, 1).to_bits(), x.to_bits());
            assert_eq!(powi(x, 2).to_bits(), (x * x).to_bits());
            assert_eq!(powi(x, 3).to_bits(), (x * x * x).to_bits());
            assert_eq!(powi(x, 4).to_bits(), ((x * x) * (x * x)).to_bits());
            assert_eq!(powi(x, -2).to_bits(), (1.0 / (x * x)).to_bits());
        }
    }

    #[test]
    fn exp_is_within_about_half_an_ulp() {
        // Against the f64 exponential (error far below an f32 ULP), over normal results.
        let mut worst = 0.0f64;
        for i in 0..2_000_000 {
            let x = -87.0f32 + i as f32 * (175.0 / 2_000_000.0);
            let want = (x as f64).exp();
            let w = want as f32;
            let ulp = (f32::from_bits(w.to_bits() + 1) - w) as f64;
            worst = worst.max((exp(x) as f64 - want).abs() / ulp);
        }
        assert!(worst < 0.6, "exp: worst {worst} ULP");
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(1.0), std::f32::consts::E);
        assert_eq!(exp(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp(f32::INFINITY), f32::INFINITY);
        assert!(exp(f32::NAN).is_nan());
        assert_eq!(exp(89.0), f32::INFINITY);
        assert_eq!(exp(-110.0), 0.0);
    }

    #[test]
    fn close_to_the_platform() {
        // Sanity: within a few ulps of the platform functions over a range of inputs.
        let near = |a: f32, b: f32| (a - b).abs() <= 4.0 * f32::EPSILON * a.abs().max(b.abs());
        for i in 0..2000 {
            let x = i as f32 * 0.0123 - 12.0;
            assert!(near(exp(x), x.exp()), "exp {x}");
            assert!(near(sin(x), x.sin()) || (sin(x) - x.sin()).abs() < 1e-7);
            assert!(near(cos(x), x.cos()) || (cos(x) - x.cos()).abs() < 1e-7);
            assert!(near(hypot(x, 0.7 * x + 1.0), x.hypot(0.7 * x + 1.0)));
            let y = x.abs() + 1e-3;
            assert!(
                near(ln(y), y.ln()) || (ln(y) - y.ln()).abs() < 1e-7,
                "ln {y}"
            );
            assert!(near(powf(y, 0.4), y.powf(0.4)), "powf {y}");
            let c = (x / 12.0).clamp(-1.0, 1.0);
            assert!((acos(c) - c.acos()).abs() < 1e-6, "acos {c}");
            let t = x / 16.0;
            assert!(
                near(tan(t), t.tan()) || (tan(t) - t.tan()).abs() < 1e-7,
                "tan {t}"
            );
        }
    }
}
