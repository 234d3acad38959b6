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

/// `e^x`.
#[inline]
pub fn exp(x: f32) -> f32 {
    libm::expf(x)
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
