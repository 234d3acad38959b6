//! Guard of the determinism guarantee (docs/api.md, "Determinism"): no code in `src/` calls the
//! platform's math library (`f32::exp`, `ln`, `powf`, `sin`, …, whose last bits differ between
//! glibc, the Windows CRT and Apple's libm). Everything on the generation path uses
//! `island_core::det_math` instead. Fails naming `file:line` of each offending call.
//!
//! Scanned: every `.rs` file under `rust/core/src`, up to its `#[cfg(test)] mod tests` (test
//! code may compare against the platform), with `//` comments removed. Not scanned:
//! `det_math.rs` itself (the one place allowed to wrap the functions) and the files of
//! [`ALLOWED`].

use std::path::{Path, PathBuf};

/// Files allowed to call platform math, with the reason. Empty: everything in `src/` feeds an
/// output of the generator (heights, splat, biomes, water, scatter, meshes, LOD, preview).
const ALLOWED: &[(&str, &str)] = &[("det_math.rs", "the deterministic wrappers themselves")];

/// Methods (`x.name(`) and paths (`f32::name(`, `f64::name(`) that reach the platform's libm,
/// or (`powi`) whose multiplication order is up to the compiler.
const FUNCTIONS: &[&str] = &[
    "exp", "exp2", "exp_m1", "ln", "ln_1p", "log", "log2", "log10", "powf", "powi", "sin", "cos",
    "tan", "sin_cos", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh",
    "atanh", "hypot", "cbrt", "gamma", "ln_gamma", "erf", "erfc",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The platform-math calls in `text` (one file): `(line number, function, line)`.
fn offending(text: &str) -> Vec<(usize, &'static str, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (k, raw) in lines.iter().enumerate() {
        let t = raw.trim_start();
        if t.starts_with("#[cfg(test)]") {
            let next = lines[k + 1..]
                .iter()
                .map(|l| l.trim())
                .find(|l| !l.is_empty());
            if next.is_some_and(|l| l.starts_with("mod tests")) {
                break;
            }
        }
        let code = raw.split("//").next().unwrap_or("");
        for f in FUNCTIONS {
            let pats = [format!(".{f}("), format!("f32::{f}("), format!("f64::{f}(")];
            if pats.iter().any(|p| code.contains(p.as_str())) {
                found.push((k + 1, *f, raw.trim().to_string()));
            }
        }
    }
    found
}

#[test]
fn the_scanner_sees_calls() {
    let src = "fn a(x: f32) -> f32 {\n    x.exp() + f64::sin(1.0) as f32 // .cos( in a comment\n}\n\
               fn b(y: f32) -> f32 { y.powi(2) }\n#[cfg(test)]\nmod tests {\n    fn c() { 1f32.ln(); }\n}\n";
    let got: Vec<(usize, &str)> = offending(src).iter().map(|o| (o.0, o.1)).collect();
    assert_eq!(got, vec![(2, "exp"), (2, "sin"), (4, "powi")]);
    // Exact functions and the wrappers are fine.
    assert!(offending("let r = x.sqrt().abs().floor() + det_math::exp(y) + n.pow(2);").is_empty());
}

#[test]
fn no_platform_math_on_the_generation_path() {
    let root = manifest_dir().join("src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    files.sort();
    assert!(
        files.len() > 20,
        "scanned {} files under {root:?}",
        files.len()
    );
    let mut report = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if ALLOWED.iter().any(|(a, _)| *a == rel) {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for (line, func, code) in offending(&text) {
            report.push(format!("rust/core/src/{rel}:{line}: `{func}` in `{code}`"));
        }
    }
    assert!(
        report.is_empty(),
        "platform math on the generation path (use island_core::det_math, see its docs):\n{}",
        report.join("\n")
    );
}

/// This package's directory: the one `cargo test` runs the test for (a test binary reused from
/// a target dir shared with another checkout still reads this checkout's files), else the one
/// it was compiled in.
fn manifest_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}
