//! Developer tasks: `cargo xtask <godot-path|build|docs|test|demo|bench>`.

mod bake_check;
mod bench;
mod editor_session;
mod godot;
mod package;
mod peers;
mod run;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Duration;

use run::{
    godot_output_problems, parse_summary, run_captured, run_inherit, workspace_root, Finished,
};

const USAGE: &str = "usage: cargo xtask <command> [args]

commands:
  godot-path   print how Godot 4 is started (installs a private copy when needed)
  build        build the GDExtension (dev profile), copy it into the addon, import the project
  docs         write the parameter tables of docs/inspector.md and the GDScript test's
               parameter_schema.json from the core's parameter schema
  test         cargo fmt --check, clippy -D warnings, cargo tests (fuzz targets bounded; generated docs up
               to date), build,
               the GDScript suite in headless Godot, the editor, package and bake checks
  package      release build, then dist/procedural_island-<version>.zip (addons/procedural_island/);
               --lib PATH adds another platform's library, --check-debug runs the test's check
  fuzz [N]     the proptest fuzz targets with N cases each (default 20000), release build
  demo         build, write the CLI outputs to out/, render the demo scene to out/demo.png
  bench [..]   run the benchmark suite
  editor-session
               build, then one whole session of the real windowed editor under Xvfb (the
               test's real-editor check alone)";

/// Godot arguments used for every run: no audio device is needed (and ALSA would print errors).
const GODOT_COMMON: [&str; 2] = ["--audio-driver", "Dummy"];
/// The project folder, relative to the workspace root.
const PROJECT: &str = "godot_project";
const ADDON_LIB: &str = "godot_project/addons/procedural_island/bin/libprocedural_island.so";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(cmd) = args.first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let rest = &args[1..];
    let result = match cmd.as_str() {
        "godot-path" => godot_path(),
        "build" => build(BuildScope::Addon).map(|_| ()),
        "docs" => docs(),
        "test" => test(rest),
        "fuzz" => fuzz(rest),
        "package" => package::run(rest),
        "demo" => demo(rest),
        "bench" => bench::run(rest),
        "editor-session" => {
            build(BuildScope::Addon).and_then(|l| editor_session::editor_session_check(&l))
        }
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

/// Write the files generated from the core's parameter schema (the `schema_docs` example of
/// the core; its test, run by `cargo test --workspace`, fails when they are stale). Built with
/// `--workspace`: the features resolved as for the tests, so nothing is built again.
fn docs() -> Result<(), String> {
    run_inherit(cargo().args([
        "build",
        "--quiet",
        "--workspace",
        "--example",
        "schema_docs",
    ]))?;
    run_inherit(
        Command::new(run::target_dir().join("debug/examples/schema_docs"))
            .current_dir(workspace_root())
            .arg("write"),
    )
}

fn godot_path() -> Result<(), String> {
    let l = godot::godot_launcher()?;
    eprintln!("Godot {}", l.version);
    println!("{}", l.describe());
    Ok(())
}

fn cargo() -> Command {
    let mut c = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    c.current_dir(workspace_root());
    c
}

/// A Godot command for the project, with the common arguments.
fn godot(launcher: &godot::GodotLauncher) -> Command {
    let mut c = launcher.command();
    c.current_dir(workspace_root());
    c.args(GODOT_COMMON);
    c
}

fn check_godot_run(what: &str, f: &Finished, allowed: &[&str]) -> Result<(), String> {
    let problems = godot_output_problems(&f.text, allowed);
    let mut msg = Vec::new();
    if !f.success() {
        msg.push(format!("Godot {}", f.describe_exit()));
    }
    msg.extend(problems.into_iter().map(|p| format!("  {p}")));
    if msg.is_empty() {
        Ok(())
    } else {
        Err(format!("{what} failed:\n{}", msg.join("\n")))
    }
}

/// Which cargo build produces the extension library.
#[derive(Clone, Copy)]
enum BuildScope {
    /// `cargo build -p procedural_island`: only what the addon needs.
    Addon,
    /// After `cargo test --workspace`: the same targets (and so the same unified features) as the
    /// tests, so every dependency compiled for them is reused instead of built a second time.
    AfterTests,
}

/// Build the extension (dev profile), copy the library into the addon, import the project.
fn build(scope: BuildScope) -> Result<godot::GodotLauncher, String> {
    build_with(scope, false)
}

/// [`build`]; with `render`, the packages a render under Xvfb needs are made sure of too. Godot
/// (installed when missing: 121 packages downloaded and unpacked, 32 s on the benchmark VM, minutes
/// on a slow line) and those packages are prepared on a second thread while cargo builds: the one
/// waits on the network, the other on the CPUs.
fn build_with(scope: BuildScope, render: bool) -> Result<godot::GodotLauncher, String> {
    let prepare = std::thread::spawn(move || {
        if render {
            godot::ensure_render_deps()?;
        }
        godot::godot_launcher()
    });
    let built = build_library(scope);
    let launcher = prepare
        .join()
        .map_err(|_| "the thread preparing Godot panicked".to_string());
    built?;
    let launcher = launcher??;
    eprintln!("xtask: Godot {}", launcher.version);
    import_project(&launcher)?;
    Ok(launcher)
}

/// The cargo build of [`build`], and the library copied into the addon.
fn build_library(scope: BuildScope) -> Result<(), String> {
    let root = workspace_root();
    match scope {
        // The extension and the CLI in one build: one resolution of the features of their shared
        // dependencies (alone, the CLI's clap derive turns on `syn/full`, which rebuilt serde's
        // derive and everything above it, island_core and wgpu included: 5 minutes of a
        // newcomer's `cargo xtask demo` on 2 cores).
        BuildScope::Addon => {
            run_inherit(cargo().args(["build", "-p", "procedural_island", "-p", "island"]))?
        }
        BuildScope::AfterTests => run_inherit(cargo().args([
            "build",
            "--workspace",
            "--lib",
            "--bins",
            "--tests",
            "--examples",
        ]))?,
    }
    let built = run::target_dir().join("debug/libprocedural_island.so");
    if !built.is_file() {
        return Err(format!(
            "cargo build succeeded but {} is missing",
            built.display()
        ));
    }
    let dest = root.join(ADDON_LIB);
    install_library(&built, &dest)?;
    eprintln!("xtask: {} -> {}", built.display(), dest.display());
    Ok(())
}

/// Copy next to the destination, then rename: a Godot that has the old library mapped keeps
/// its (unlinked) copy instead of crashing on a file rewritten under it.
fn install_library(src: &Path, dest: &Path) -> Result<(), String> {
    let dir = dest.parent().ok_or("addon library path has no parent")?;
    fs::create_dir_all(dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    let same = match (fs::read(src), fs::read(dest)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if same {
        return Ok(());
    }
    let tmp = dir.join(format!(
        ".libprocedural_island.so.tmp{}",
        std::process::id()
    ));
    fs::copy(src, &tmp).map_err(|e| format!("copy {} -> {}: {e}", src.display(), tmp.display()))?;
    fs::rename(&tmp, dest).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        format!("rename {} -> {}: {e}", tmp.display(), dest.display())
    })
}

/// `godot --headless --path godot_project --import`: class cache, extension list, imported assets.
fn import_project(launcher: &godot::GodotLauncher) -> Result<(), String> {
    let first_import = !workspace_root().join(PROJECT).join(".godot").is_dir();
    let import = || {
        let mut c = godot(launcher);
        c.args(["--headless", "--path", PROJECT, "--import"]);
        run_captured(c, Duration::from_secs(600), true)
    };
    let mut f = import()?;
    let crashed = !f.timed_out && f.status.is_some_and(|s| s.code().is_none());
    if first_import && crashed {
        // Known engine issue (godotengine/godot#111048): the very first headless import of a
        // project with any GDExtension (no .godot/ yet) finishes its work and then dies at exit
        // in the GDExtension documentation step; later imports exit cleanly, and so does the
        // first with `--frame-delay 800` (checked with Godot 4.6.3). Say so loudly and import
        // again: the second import must be clean.
        eprintln!(
            "xtask: WARNING: the first import of a fresh project crashed at exit ({}); importing again",
            f.describe_exit()
        );
        f = import()?;
    }
    let res = check_godot_run("Godot project import", &f, &[]);
    if res.is_err() {
        eprintln!("{}", f.text);
    }
    res?;
    let ext_list = workspace_root()
        .join(PROJECT)
        .join(".godot/extension_list.cfg");
    let listed = fs::read_to_string(&ext_list).unwrap_or_default();
    if !listed.contains("procedural_island.gdextension") {
        return Err(format!(
            "import did not register the extension ({} lacks it)",
            ext_list.display()
        ));
    }
    eprintln!("xtask: project imported ({:.1} s)", f.elapsed.as_secs_f64());
    Ok(())
}

fn test(args: &[String]) -> Result<(), String> {
    let mut filter = None;
    let mut skip_cargo = false;
    for a in args {
        if let Some(f) = a.strip_prefix("--filter=") {
            filter = Some(f.to_string());
        } else if a == "--no-cargo-tests" {
            skip_cargo = true;
        } else {
            return Err(format!(
                "unknown argument `{a}` (known: --filter=SUBSTRING, --no-cargo-tests)"
            ));
        }
    }
    if !skip_cargo {
        lint()?;
        run_inherit(cargo().args(["test", "--workspace"]))?;
        // The documented maximum resolution from the CLI (ignored in a plain `cargo test`:
        // about a minute and a few GiB). The generator crates are fully optimised in the dev
        // profile (see the workspace Cargo.toml), so this measures the shipped code paths.
        // `--workspace`: the features resolved as for the `cargo test --workspace` above, so
        // nothing is built again (`-p island` alone rebuilt wgpu and island_core with the CLI's
        // own feature set: minutes on 2 cores with a cold cache).
        run_inherit(cargo().args([
            "test",
            "--workspace",
            "--test",
            "cli",
            "--",
            "--ignored",
            "--nocapture",
            "the_documented_maximum_resolution",
        ]))?;
    }
    let launcher = build(if skip_cargo {
        BuildScope::Addon
    } else {
        BuildScope::AfterTests
    })?;
    runner_self_check(&launcher)?;

    // The GDScript suite.
    let mut c = godot(&launcher);
    c.args([
        "--headless",
        "--path",
        PROJECT,
        "-s",
        "res://tests/run_tests.gd",
    ]);
    if let Some(f) = &filter {
        c.arg("--").arg(format!("--filter={f}"));
    }
    let f = run_captured(c, Duration::from_secs(1800), false)?;
    let summary = parse_summary(&f.text);
    let mut problems = Vec::new();
    match summary {
        None => problems
            .push("the suite printed no `N passed, N failed` summary (crashed?)".to_string()),
        Some((_, failed)) if failed > 0 => {
            problems.push(format!("{failed} GDScript test(s) failed"))
        }
        Some((0, 0)) => problems.push("no GDScript test ran".to_string()),
        Some(_) => {}
    }
    if let Err(e) = check_godot_run("GDScript suite", &f, &[]) {
        problems.push(e);
    }
    let failing: Vec<&str> = f.text.lines().filter(|l| l.starts_with("FAIL ")).collect();
    if !problems.is_empty() {
        return Err(format!("{}\n{}", failing.join("\n"), problems.join("\n")));
    }
    let (passed, failed) = summary.unwrap();
    eprintln!(
        "xtask: GDScript suite finished in {:.1} s",
        f.elapsed.as_secs_f64()
    );

    if filter.is_none() {
        editor_check(&launcher)?;
        editor_session::editor_session_check(&launcher)?;
        package::package_check(&launcher)?;
        bake_check::bake_check(&launcher)?;
    }
    println!("{passed} passed, {failed} failed");
    Ok(())
}

/// `cargo fmt --check` and `cargo clippy -D warnings` over every crate and target.
fn lint() -> Result<(), String> {
    run_inherit(cargo().args(["fmt", "--all", "--", "--check"]))
        .map_err(|e| format!("{e}\n(run `cargo fmt --all` to fix the formatting)"))?;
    run_inherit(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))
}

/// The proptest fuzz targets of the core (heightmap and paint decoders, paint operations,
/// parameter validation and generation) with many more cases than `cargo test` runs.
fn fuzz(args: &[String]) -> Result<(), String> {
    let cases: u32 = match args {
        [] => 20_000,
        [n] => n
            .parse()
            .map_err(|_| format!("`{n}` is not a number of cases"))?,
        _ => return Err("usage: cargo xtask fuzz [CASES]".into()),
    };
    eprintln!("xtask: fuzzing with {cases} cases per target");
    run_inherit(cargo().env("PROPTEST_CASES", cases.to_string()).args([
        "test",
        "--release",
        "-p",
        "island_core",
        "--test",
        "fuzz",
        "--test",
        "proptest_params",
    ]))
}

/// Run the runner against a fixture with known outcomes, so a runner that cannot fail is caught.
fn runner_self_check(launcher: &godot::GodotLauncher) -> Result<(), String> {
    let root = workspace_root();
    let dir = std::env::temp_dir().join(format!(
        "procedural_island_runner_check_{}",
        std::process::id()
    ));
    let _ = fs::remove_dir_all(&dir);
    let tests = dir.join("tests");
    fs::create_dir_all(&tests).map_err(|e| format!("create {}: {e}", tests.display()))?;
    let copy = |from: PathBuf, to: PathBuf| {
        fs::copy(&from, &to)
            .map(|_| ())
            .map_err(|e| format!("copy {}: {e}", from.display()))
    };
    copy(
        root.join(PROJECT).join("tests/run_tests.gd"),
        tests.join("run_tests.gd"),
    )?;
    copy(
        root.join(PROJECT).join("tests/test_case.gd"),
        tests.join("test_case.gd"),
    )?;
    copy(
        root.join("rust/xtask/fixtures/runner_fixture.gd"),
        tests.join("test_fixture.gd"),
    )?;
    fs::write(
        dir.join("project.godot"),
        "config_version=5\n\n[application]\n\nconfig/name=\"runner check\"\n",
    )
    .map_err(|e| format!("write project.godot: {e}"))?;

    let mut imp = launcher.command();
    imp.args(GODOT_COMMON)
        .arg("--headless")
        .arg("--path")
        .arg(&dir)
        .arg("--import");
    let f = run_captured(imp, Duration::from_secs(300), true)?;
    if !f.success() {
        return Err(format!(
            "runner check: import failed ({})\n{}",
            f.describe_exit(),
            f.text
        ));
    }
    let mut c = launcher.command();
    c.args(GODOT_COMMON)
        .arg("--headless")
        .arg("--path")
        .arg(&dir)
        .args(["-s", "res://tests/run_tests.gd"]);
    let f = run_captured(c, Duration::from_secs(300), true)?;
    let _ = fs::remove_dir_all(&dir);

    let expect = [
        "PASS test_fixture.gd::test_a_passes",
        "FAIL test_fixture.gd::test_b_fails: one is two (got 1, expected 2)",
        "FAIL test_fixture.gd::test_c_no_assertions: no assertions",
        "FAIL test_fixture.gd::test_d_script_error_after_await: script error:",
        "FAIL test_fixture.gd::test_e_times_out: timed out after 1 s",
        "PASS test_fixture.gd::test_f_expected_error",
        "FAIL test_fixture.gd::test_g_unexpected_error: unexpected error: surprise",
        "FAIL test_fixture.gd::test_h_expected_error_missing: expected an error containing 'never'",
        "PASS test_fixture.gd::test_i_coroutine",
    ];
    let mut missing: Vec<&str> = expect
        .iter()
        .copied()
        .filter(|e| !f.text.lines().any(|l| l.starts_with(e)))
        .collect();
    if parse_summary(&f.text) != Some((3, 6)) {
        missing.push("summary `3 passed, 6 failed`");
    }
    if f.status.and_then(|s| s.code()) != Some(1) {
        missing.push("exit code 1");
    }
    if !missing.is_empty() {
        return Err(format!(
            "test runner self-check: missing {:?} ({})\n{}",
            missing,
            f.describe_exit(),
            f.text
        ));
    }
    eprintln!(
        "xtask: test runner self-check ok (passes, failures, timeouts and errors are reported)"
    );
    Ok(())
}

/// Open the demo scene in the headless editor, let it run a while, quit. The demo's root script
/// is a tool script that prints a line when the scene is instantiated in the editor; the editor
/// must print it (with the island node really being a `ProceduralIsland`) and report no problems.
fn editor_check(launcher: &godot::GodotLauncher) -> Result<(), String> {
    let mut c = godot(launcher);
    c.args([
        "--headless",
        "--editor",
        "--path",
        PROJECT,
        "res://demo/demo.tscn",
        "--quit-after",
        "300",
    ]);
    let f = run_captured(c, Duration::from_secs(600), false)?;
    check_godot_run("headless editor check", &f, &[])?;
    const OPENED: &str = "demo: scene opened in the editor, island node class ProceduralIsland";
    if !f.text.lines().any(|l| l.trim() == OPENED) {
        return Err(format!("headless editor check: the editor did not open res://demo/demo.tscn (no `{OPENED}` line)"));
    }
    eprintln!(
        "xtask: editor opened res://demo/demo.tscn and quit cleanly ({:.1} s)",
        f.elapsed.as_secs_f64()
    );
    Ok(())
}

fn demo(args: &[String]) -> Result<(), String> {
    let mut seed = None;
    for a in args {
        if let Some(s) = a.strip_prefix("--seed=") {
            seed = Some(
                s.parse::<u64>()
                    .map_err(|_| format!("--seed needs a whole number, got `{s}`"))?,
            );
        } else {
            return Err(format!("unknown argument `{a}` (known: --seed=N)"));
        }
    }
    let root = workspace_root();
    let out = root.join("out");
    fs::create_dir_all(&out).map_err(|e| format!("create {}: {e}", out.display()))?;
    let launcher = build_with(BuildScope::Addon, true)?;

    // CLI outputs for the same island: the binary `build` made (`cargo run -p island` would
    // resolve the features again, for the CLI alone, and rebuild).
    let mut cli = Command::new(run::target_dir().join("debug/island"));
    cli.current_dir(&root).args(["generate", "--out"]).arg(&out);
    if let Some(s) = seed {
        cli.arg("--seed").arg(s.to_string());
    }
    run_inherit(&mut cli)?;

    // Render the demo scene once: the orbit view, then the largest lake seen from its shore.
    render_demo(
        &launcher,
        &root,
        &out.join("demo.png"),
        seed,
        &out.join("demo_lake.png"),
    )?;
    for name in [
        "preview.png",
        "height.png",
        "splat.png",
        "biomes.png",
        "island.json",
    ] {
        let p = out.join(name);
        if p.is_file() {
            println!("{}", p.display());
        }
    }
    Ok(())
}

/// Render `res://demo/demo.tscn` into `png` (Xvfb + lavapipe when there is no display), and
/// from the same run its lake view into `lake_png`.
fn render_demo(
    launcher: &godot::GodotLauncher,
    root: &Path,
    png: &Path,
    seed: Option<u64>,
    lake_png: &Path,
) -> Result<(), String> {
    let _ = fs::remove_file(png);
    let _ = fs::remove_file(lake_png);
    let mut gargs: Vec<String> = GODOT_COMMON.iter().map(|s| s.to_string()).collect();
    gargs.extend(
        [
            "--rendering-driver",
            "vulkan",
            "--rendering-method",
            "forward_plus",
            "--path",
            PROJECT,
            "res://demo/demo.tscn",
            "--",
        ]
        .map(String::from),
    );
    gargs.push(format!("--screenshot={}", png.display()));
    if let Some(s) = seed {
        gargs.push(format!("--seed={s}"));
    }
    gargs.push(format!("--lake-screenshot={}", lake_png.display()));
    let has_display = std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty())
        || std::env::var_os("WAYLAND_DISPLAY").is_some_and(|d| !d.is_empty());
    let mut c = if has_display {
        let mut c = launcher.command();
        c.args(&gargs);
        c
    } else {
        godot::ensure_render_deps()?;
        let mut c = Command::new("xvfb-run");
        c.args(["-a", "-s", "-screen 0 1280x720x24"]);
        c.arg(&launcher.program)
            .args(&launcher.pre_args)
            .args(&gargs);
        // No real display: render with lavapipe (Mesa's software Vulkan) unless told otherwise.
        if std::env::var_os("VK_ICD_FILENAMES").is_none() {
            match godot::lavapipe_icd() {
                Some(icd) => {
                    c.env("VK_ICD_FILENAMES", icd);
                }
                None => {
                    eprintln!("xtask: warning: no lavapipe ICD found; Vulkan may fail under Xvfb")
                }
            }
        }
        c
    };
    c.current_dir(root);
    let f = run_captured(c, Duration::from_secs(1800), false)?;
    check_godot_run("demo render", &f, &[])?;
    eprintln!("xtask: rendered in {:.0} s", f.elapsed.as_secs_f64());
    for p in [png, lake_png] {
        let size = fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        if size == 0 {
            return Err(format!("the demo did not write {}", p.display()));
        }
        println!("{} ({} bytes)", p.display(), size);
    }
    Ok(())
}
