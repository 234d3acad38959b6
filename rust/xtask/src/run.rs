//! Running child processes (cargo, Godot) with merged, echoed, captured output and a time limit,
//! and judging Godot's output.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What a finished child left behind.
pub struct Finished {
    pub status: Option<ExitStatus>,
    pub timed_out: bool,
    /// stdout and stderr, interleaved in the order they were written.
    pub text: String,
    /// When each line of `text` arrived (since the start), in order.
    pub line_times: Vec<Duration>,
    pub elapsed: Duration,
}

impl Finished {
    /// When the first line containing `needle` arrived (since the start).
    pub fn first_line_at(&self, needle: &str) -> Option<Duration> {
        self.text
            .lines()
            .zip(&self.line_times)
            .find(|(l, _)| l.contains(needle))
            .map(|(_, t)| *t)
    }

    pub fn success(&self) -> bool {
        !self.timed_out && self.status.is_some_and(|s| s.success())
    }

    pub fn describe_exit(&self) -> String {
        if self.timed_out {
            return "timed out (killed)".into();
        }
        match self.status {
            Some(s) => match (s.code(), std::os::unix::process::ExitStatusExt::signal(&s)) {
                (Some(c), _) => format!("exit code {c}"),
                (None, Some(sig)) => format!("killed by signal {sig}"),
                _ => format!("{s}"),
            },
            None => "no exit status".into(),
        }
    }
}

pub fn describe(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// Run `cmd` in its own process group; stdout+stderr are merged, echoed (unless `quiet`) and
/// captured. After `limit` the whole process group is killed.
pub fn run_captured(mut cmd: Command, limit: Duration, quiet: bool) -> Result<Finished, String> {
    let what = describe(&cmd);
    eprintln!("xtask: $ {what}");
    let (reader, writer) = std::io::pipe().map_err(|e| format!("pipe: {e}"))?;
    let writer2 = writer.try_clone().map_err(|e| format!("pipe: {e}"))?;
    cmd.stdin(Stdio::null())
        .stdout(writer)
        .stderr(writer2)
        .process_group(0);
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start `{what}`: {e}"))?;
    // Drop our copies of the write ends (moved into `cmd`) so the reader sees EOF.
    drop(cmd);
    let captured = Arc::new(Mutex::new(String::new()));
    let cap2 = Arc::clone(&captured);
    let times = Arc::new(Mutex::new(Vec::new()));
    let times2 = Arc::clone(&times);
    let reader_thread = std::thread::spawn(move || {
        let mut r = BufReader::new(reader);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match r.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let line = String::from_utf8_lossy(&buf);
                    if !quiet {
                        let mut out = std::io::stdout().lock();
                        let _ = out.write_all(line.as_bytes());
                        let _ = out.flush();
                    }
                    cap2.lock().unwrap().push_str(&line);
                    times2.lock().unwrap().push(start.elapsed());
                }
            }
        }
    });
    let pid = child.id();
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) => {}
            Err(e) => return Err(format!("waiting for `{what}`: {e}")),
        }
        if start.elapsed() > limit {
            timed_out = true;
            eprintln!(
                "xtask: `{what}` ran past {} s, killing its process group",
                limit.as_secs()
            );
            kill_group(pid);
            break child.wait().ok();
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // Children left in the group (e.g. Xvfb behind xvfb-run) would keep the pipe open.
    let grace = Instant::now();
    while !reader_thread.is_finished() && grace.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    if !reader_thread.is_finished() {
        kill_group(pid);
    }
    let _ = reader_thread.join();
    let text = std::mem::take(&mut *captured.lock().unwrap());
    let line_times = std::mem::take(&mut *times.lock().unwrap());
    Ok(Finished {
        status,
        timed_out,
        text,
        line_times,
        elapsed: start.elapsed(),
    })
}

fn kill_group(pgid: u32) {
    let _ = Command::new("kill")
        .arg("-KILL")
        .arg("--")
        .arg(format!("-{pgid}"))
        .status();
}

/// Run a command with inherited stdio; error unless it succeeds.
pub fn run_inherit(cmd: &mut Command) -> Result<(), String> {
    let what = describe(cmd);
    eprintln!("xtask: $ {what}");
    let status = cmd
        .status()
        .map_err(|e| format!("cannot start `{what}`: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{what}` failed ({status})"))
    }
}

/// Problems in Godot's output that fail a run. `ERROR: <text>` lines are accepted only when the
/// test runner declared them expected (an `EXPECTED-ERROR: <text>` line) or `<text>` contains one
/// of `allowed`.
pub fn godot_output_problems(text: &str, allowed: &[&str]) -> Vec<String> {
    let mut problems = Vec::new();
    let expected: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("EXPECTED-ERROR: "))
        .map(str::trim)
        .collect();
    for line in text.lines() {
        let t = line.trim();
        const FATAL: [&str; 8] = [
            "SCRIPT ERROR",
            "Can't open dynamic library",
            "ObjectDB instances leaked",
            "Leaked instance",
            "Program crashed",
            "handle_crash",
            "Parse Error",
            "panicked at",
        ];
        if FATAL.iter().any(|f| t.contains(f))
            || (t.contains("RID allocations") && t.contains("leaked"))
        {
            problems.push(t.to_string());
            continue;
        }
        if let Some(msg) = t.strip_prefix("ERROR: ") {
            let msg = msg.trim();
            if expected.contains(&msg) || allowed.iter().any(|a| msg.contains(a)) {
                continue;
            }
            problems.push(t.to_string());
        }
    }
    problems.dedup();
    problems
}

/// `N passed, M failed` (the runner's last summary line).
pub fn parse_summary(text: &str) -> Option<(u32, u32)> {
    text.lines().rev().find_map(|l| {
        let l = l.trim();
        let (p, f) = l.split_once(" passed, ")?;
        let f = f.strip_suffix(" failed")?;
        Some((p.parse().ok()?, f.parse().ok()?))
    })
}

/// Workspace root (two levels above this crate).
pub fn workspace_root() -> PathBuf {
    // `cargo run` (and so `cargo xtask`) sets CARGO_MANIFEST_DIR for the running binary: prefer
    // it over the path baked in at compile time, so an xtask binary reused from a shared target
    // dir built by another checkout still works on the checkout that runs it.
    let here = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    here.parent()
        .and_then(|p| p.parent())
        .map(PathBuf::from)
        .unwrap_or(here)
}

/// Cargo's target directory: `$CARGO_TARGET_DIR` (relative to the workspace root) or `target/`.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR").filter(|v| !v.is_empty()) {
        Some(d) => {
            let d = PathBuf::from(d);
            if d.is_absolute() {
                d
            } else {
                workspace_root().join(d)
            }
        }
        None => workspace_root().join("target"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_clean_output() {
        let t = "Godot Engine v4.6\nPASS a.gd::test_x\n1 passed, 0 failed\n";
        assert!(godot_output_problems(t, &[]).is_empty());
        assert_eq!(parse_summary(t), Some((1, 0)));
    }

    #[test]
    fn flags_errors_crashes_and_leaks() {
        let t = "SCRIPT ERROR: Invalid call\nERROR: boom\n   at: x\nWARNING: ObjectDB instances leaked at exit\n\
                 ERROR: 3 RID allocations of type 'X' were leaked at exit.\nhandle_crash: Program crashed with signal 11\n";
        let p = godot_output_problems(t, &[]);
        assert_eq!(p.len(), 5, "{p:?}");
        assert!(p[1].contains("boom"));
    }

    #[test]
    fn expected_and_allowed_errors_pass() {
        let t = "ERROR: bad resolution 100\n   at: foo\nEXPECTED-ERROR: bad resolution 100\nERROR: harmless thing\n";
        assert!(godot_output_problems(t, &["harmless"]).is_empty());
        assert_eq!(godot_output_problems(t, &[]).len(), 1);
        // An expectation only covers exactly that message.
        let t2 = "ERROR: bad resolution 200\nEXPECTED-ERROR: bad resolution 100\n";
        assert_eq!(godot_output_problems(t2, &[]).len(), 1);
    }

    #[test]
    fn summary_parsing() {
        assert_eq!(parse_summary("x\n12 passed, 3 failed\n"), Some((12, 3)));
        assert_eq!(parse_summary("no summary\n"), None);
        assert_eq!(parse_summary("1 passed, x failed"), None);
    }
}
