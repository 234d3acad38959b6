//! Developer tasks: `cargo xtask <godot-path|build|test|demo|bench>`.

mod bench;
mod godot;

use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask <command> [args]

commands:
  godot-path   print how Godot 4 is started (installs a private copy when needed)
  bench [..]   run the benchmark suite";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(cmd) = args.first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let rest = &args[1..];
    let result = match cmd.as_str() {
        "godot-path" => godot_path(),
        "bench" => bench::run(rest),
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unknown command `{other}`\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask {cmd}: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn godot_path() -> Result<(), String> {
    let l = godot::godot_launcher()?;
    eprintln!("Godot {}", l.version);
    println!("{}", l.describe());
    Ok(())
}
