//! Drainage and noise peers for `cargo xtask bench`: richdem, fastscapelib and FastNoiseSIMD on
//! the very same heightfield as our kernels (`tests/bench/drainage_peers.py`, whose docstring
//! says what each peer does and how its result is checked).
//!
//! The peers live in their own venv, `${XDG_CACHE_HOME:-~/.cache}/procedural_island/venv_peers`,
//! created on first use with the versions tried on CPython 3.11:
//! * `richdem2` 2.4.3, the maintained fork of RichDEM (import name `richdem`): `richdem` 0.3.4
//!   itself does not build on CPython 3.11 (its bundled pybind11 predates 3.11);
//! * `fastscapelib` 0.3.0 (wheel);
//! * `pyfastnoisesimd` 0.4.2, built from source (no wheel past CPython 3.9) with
//!   `--no-build-isolation`: its setup.py needs numpy's headers at build time but does not
//!   declare numpy as a build dependency. Optional: when it does not build, a marker file in the
//!   venv records that, and the script prints `missing` for its rows.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The packages every peer run needs, pinned to the versions tried.
const PEER_PACKAGES: [&str; 5] = [
    "numpy==2.4.6",
    "richdem2==2.4.3",
    "fastscapelib==0.3.0",
    "setuptools",
    "wheel",
];
/// Built from source against the venv's numpy (see the module doc).
const NOISE_PACKAGE: &str = "pyfastnoisesimd==0.4.2";
/// Written into the venv when `NOISE_PACKAGE` failed to build, so it is not rebuilt every run.
const NOISE_FAILED_MARKER: &str = "pyfastnoisesimd_build_failed";

/// One result line of `drainage_peers.py`: `peer  NAME  N  median_ms  min_ms  reps  note`.
/// A peer that is missing or failed has NaN times, `reps` 0 and the reason in `note`.
#[derive(Clone, Debug, PartialEq)]
pub struct PeerRow {
    pub name: String,
    pub n: usize,
    pub median_ms: f64,
    pub min_ms: f64,
    pub reps: usize,
    pub note: String,
}

impl PeerRow {
    /// Whether it holds a timing of the job: measured, and its own result passed its check (a
    /// peer whose check fails did another job).
    pub fn usable(&self) -> bool {
        self.reps > 0 && self.median_ms.is_finite() && !self.note.starts_with("CHECK FAILED")
    }
}

/// `${XDG_CACHE_HOME:-~/.cache}/procedural_island/NAME`: where xtask keeps its Python venvs.
pub fn cached_venv_dir(name: &str) -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/tmp".into())).join(".cache")
        });
    base.join("procedural_island").join(name)
}

fn venv_dir() -> PathBuf {
    cached_venv_dir("venv_peers")
}

/// `python3 -m venv VENV` unless its python is already there.
pub fn create_venv(venv: &Path) -> Result<(), String> {
    if venv.join("bin").join("python").is_file() {
        return Ok(());
    }
    let ok = Command::new("python3")
        .arg("-m")
        .arg("venv")
        .arg(venv)
        .status()
        .map_err(|e| format!("cannot run python3: {e}"))?;
    if !ok.success() {
        return Err(format!("python3 -m venv {} failed", venv.display()));
    }
    Ok(())
}

fn imports(py: &Path, modules: &str) -> bool {
    Command::new(py)
        .args(["-c", &format!("import {modules}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Python with numpy, richdem (richdem2), fastscapelib and, when it builds, pyfastnoisesimd: the
/// cached peers venv, created (and filled with pip) when missing.
pub fn ensure_peer_venv() -> Result<PathBuf, String> {
    let venv = venv_dir();
    let py = venv.join("bin").join("python");
    let has_core = |py: &Path| imports(py, "numpy, richdem, fastscapelib");
    let noise_settled =
        |py: &Path| venv.join(NOISE_FAILED_MARKER).is_file() || imports(py, "pyfastnoisesimd");
    if py.is_file() && has_core(&py) && noise_settled(&py) {
        return Ok(py);
    }
    eprintln!(
        "xtask bench: installing the drainage peers ({}, {NOISE_PACKAGE}) into {}",
        PEER_PACKAGES.join(" "),
        venv.display()
    );
    create_venv(&venv)?;
    let pip = venv.join("bin").join("pip");
    if !has_core(&py) {
        let ok = Command::new(&pip)
            .arg("install")
            .arg("--quiet")
            .args(PEER_PACKAGES)
            .status()
            .map_err(|e| format!("cannot run pip: {e}"))?;
        if !ok.success() || !has_core(&py) {
            return Err(format!("pip install {} failed", PEER_PACKAGES.join(" ")));
        }
    }
    if !noise_settled(&py) {
        eprintln!("xtask bench: building {NOISE_PACKAGE} (C++, a minute or two) ...");
        let ok = Command::new(&pip)
            .args(["install", "--quiet", "--no-build-isolation", NOISE_PACKAGE])
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok || !imports(&py, "pyfastnoisesimd") {
            eprintln!(
                "xtask bench: {NOISE_PACKAGE} did not install; its rows will say missing \
                 (delete {} to try again)",
                venv.join(NOISE_FAILED_MARKER).display()
            );
            std::fs::write(venv.join(NOISE_FAILED_MARKER), "pip install failed\n")
                .map_err(|e| format!("cannot write the marker in {}: {e}", venv.display()))?;
        }
    }
    Ok(py)
}

/// Parse one `peer\tNAME\tN\tmedian_ms\tmin_ms\treps[\tnote]` line; None for any other line.
/// `nan` times are kept as NaN.
fn parse_peer_line(line: &str) -> Option<Result<PeerRow, String>> {
    let line = line.trim_end_matches(['\r', '\n']);
    let rest = line.strip_prefix("peer\t")?;
    let f: Vec<&str> = rest.splitn(6, '\t').collect();
    let bad = || format!("bad peer line: {line:?}");
    let parse = || -> Option<PeerRow> {
        Some(PeerRow {
            name: f.first().filter(|s| !s.is_empty())?.to_string(),
            n: f.get(1)?.parse().ok()?,
            median_ms: f.get(2)?.parse().ok()?,
            min_ms: f.get(3)?.parse().ok()?,
            reps: f.get(4)?.parse().ok()?,
            note: f.get(5).unwrap_or(&"").to_string(),
        })
    };
    Some(parse().ok_or_else(bad))
}

/// All peer rows of the script's stdout (other lines are ignored); an error for a malformed
/// `peer` line or when there is none.
fn parse_peer_output(stdout: &str) -> Result<Vec<PeerRow>, String> {
    let rows = stdout
        .lines()
        .filter_map(parse_peer_line)
        .collect::<Result<Vec<_>, _>>()?;
    if rows.is_empty() {
        return Err("drainage_peers.py printed no peer rows".into());
    }
    Ok(rows)
}

/// Run `tests/bench/drainage_peers.py DIR N,N.. REPS` with `py` (stderr passed through) and
/// parse its rows. `dir` holds `height_N.f32` and `height_N.json` for every size.
pub fn run_drainage_peers(
    py: &Path,
    dir: &Path,
    sizes: &[usize],
    reps: usize,
) -> Result<Vec<PeerRow>, String> {
    let script = crate::run::workspace_root().join("tests/bench/drainage_peers.py");
    let sizes = sizes
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let out = Command::new(py)
        .arg(&script)
        .arg(dir)
        .arg(&sizes)
        .arg(reps.to_string())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot start drainage_peers.py: {e}"))?;
    if !out.status.success() {
        return Err(format!("drainage_peers.py failed ({})", out.status));
    }
    parse_peer_output(&String::from_utf8_lossy(&out.stdout))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peer_lines_with_times_and_notes() {
        let out = "Warning! something a library printed\n\
                   peer\trichdem_fill\t1025\t123.4567\t120.0000\t3\tok: pits=0 raised=492\n\
                   peer\tfastscape_accumulate\t4097\t9.5\t9.25\t1\t\n";
        let rows = parse_peer_output(out).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            rows[0],
            PeerRow {
                name: "richdem_fill".into(),
                n: 1025,
                median_ms: 123.4567,
                min_ms: 120.0,
                reps: 3,
                note: "ok: pits=0 raised=492".into(),
            }
        );
        assert_eq!(rows[1].n, 4097);
        assert_eq!(rows[1].note, "");
    }

    #[test]
    fn missing_peer_is_nan() {
        let rows = parse_peer_output(
            "peer\tfastnoisesimd_fbm8\t1025\tnan\tnan\t0\tmissing: import pyfastnoisesimd failed (x)\r\n",
        )
        .unwrap();
        let r = &rows[0];
        assert!(r.median_ms.is_nan() && r.min_ms.is_nan());
        assert_eq!(r.reps, 0);
        assert_eq!(r.note, "missing: import pyfastnoisesimd failed (x)");
    }

    #[test]
    fn a_note_may_hold_tabs_and_a_line_without_note_is_fine() {
        let r = parse_peer_line("peer\ta\t5\t1\t1\t1\tx\ty")
            .unwrap()
            .unwrap();
        assert_eq!(r.note, "x\ty");
        let r = parse_peer_line("peer\ta\t5\t1\t1\t1").unwrap().unwrap();
        assert_eq!(r.note, "");
    }

    #[test]
    fn other_lines_are_ignored_and_bad_peer_lines_are_errors() {
        assert!(parse_peer_line("scipy_edt\t1025\t1\t1\t1\tmatch").is_none());
        assert!(parse_peer_line("peers\tx").is_none());
        assert!(parse_peer_output("no rows here\n").is_err());
        assert!(parse_peer_output("peer\trichdem_fill\t1025\tfast\t1\t3\tok\n").is_err());
        assert!(parse_peer_output("peer\t\t1025\t1\t1\t3\tok\n").is_err());
        assert!(parse_peer_output("peer\trichdem_fill\t1025\t1\t1\n").is_err());
    }
}
