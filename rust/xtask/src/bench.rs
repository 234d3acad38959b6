//! `cargo xtask bench` (owned by the benchmark engineer).

/// Run the benchmark suite.
pub fn run(_args: &[String]) -> Result<(), String> {
    Err("bench: not implemented yet".into())
}
