//! `cargo xtask package`: the zip a Godot user unzips into their project.
//!
//! The archive holds exactly `addons/procedural_island/` (the layout Godot's Asset Library
//! expects): the addon files from `godot_project/addons/procedural_island/` (no `bin/` content
//! from the work tree, no hidden files), the release library of this platform (stripped by
//! `[profile.release]`), both licence texts and the addon README. Libraries of other platforms
//! come from `.github/workflows/release.yml`, which runs this same command on each OS
//! (`--lib PATH` adds a library built elsewhere, e.g. the Windows DLL or the macOS universal
//! dylib).
//!
//! `--windows` cross-builds the Windows x86_64 DLL on Linux as well (Rust's
//! `x86_64-pc-windows-gnu` target with MinGW-w64's linker, `gcc-mingw-w64-x86-64` on Debian),
//! checks with MinGW's `objdump` that the DLL exports the GDExtension entry symbol, and puts it
//! into the zip next to the Linux library.
//!
//! `cargo xtask test` packages the debug library it just built into a temporary zip
//! ([`package_check`]), unzips it into an empty project and loads it in headless Godot, so the
//! packaging and the `.gdextension` paths are tested on every run without a second (release)
//! build of the whole dependency tree.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::godot::GodotLauncher;
use crate::run::{run_captured, run_inherit, target_dir, workspace_root};
use crate::{cargo, GODOT_COMMON};

/// The addon folder inside the project and inside the zip.
const ADDON: &str = "addons/procedural_island";
/// File name of the library on each platform, as the `.gdextension` names it.
pub const LIB_NAMES: [&str; 3] = [
    "libprocedural_island.so",
    "procedural_island.dll",
    "libprocedural_island.dylib",
];

/// Library file name for the platform this xtask runs on.
pub fn host_lib_name() -> &'static str {
    if cfg!(target_os = "windows") {
        LIB_NAMES[1]
    } else if cfg!(target_os = "macos") {
        LIB_NAMES[2]
    } else {
        LIB_NAMES[0]
    }
}

/// The workspace version (from the `island_core` manifest, which inherits it).
fn version() -> Result<String, String> {
    let manifest = fs::read_to_string(workspace_root().join("Cargo.toml"))
        .map_err(|e| format!("read Cargo.toml: {e}"))?;
    let mut in_pkg = false;
    for line in manifest.lines() {
        let l = line.trim();
        if l.starts_with('[') {
            in_pkg = l == "[workspace.package]";
        } else if in_pkg {
            if let Some(v) = l.strip_prefix("version") {
                let v = v
                    .trim_start()
                    .trim_start_matches('=')
                    .trim()
                    .trim_matches('"');
                return Ok(v.to_string());
            }
        }
    }
    Err("no version in [workspace.package] of Cargo.toml".into())
}

/// `cargo xtask package [--lib PATH]...`: release build, then `dist/procedural_island-<v>.zip`.
pub fn run(args: &[String]) -> Result<(), String> {
    let mut extra = Vec::new();
    let mut windows = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--check-debug" => {
                let launcher = crate::build(crate::BuildScope::Addon)?;
                return package_check(&launcher);
            }
            "--windows" => windows = true,
            "--lib" => extra.push(PathBuf::from(
                it.next().ok_or("--lib needs a path to a built library")?,
            )),
            other => {
                return Err(format!(
                    "unknown argument `{other}` (known: --lib PATH, --windows, --check-debug)"
                ))
            }
        }
    }
    run_inherit(cargo().args(["build", "--release", "-p", "procedural_island"]))?;
    let mut libs = vec![target_dir().join("release").join(host_lib_name())];
    if windows {
        libs.push(build_windows_dll()?);
    }
    libs.extend(extra);
    let out = workspace_root()
        .join("dist")
        .join(format!("procedural_island-{}.zip", version()?));
    let n = write_zip(&out, &libs)?;
    eprintln!("xtask: wrote {} ({n} files)", out.display());
    Ok(())
}

/// Rust target of the Windows cross-build.
const WINDOWS_TARGET: &str = "x86_64-pc-windows-gnu";
/// MinGW-w64 tools of the Windows cross-build.
const MINGW_GCC: &str = "x86_64-w64-mingw32-gcc";
const MINGW_OBJDUMP: &str = "x86_64-w64-mingw32-objdump";
/// The symbol Godot calls in a GDExtension library (`entry_symbol` in the `.gdextension`).
pub const ENTRY_SYMBOL: &str = "gdext_rust_init";

/// Cross-build the release DLL for Windows x86_64 and check that it exports [`ENTRY_SYMBOL`].
fn build_windows_dll() -> Result<PathBuf, String> {
    run_inherit(
        cargo()
            .args([
                "build",
                "--release",
                "-p",
                "procedural_island",
                "--target",
                WINDOWS_TARGET,
            ])
            .env("CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER", MINGW_GCC),
    )
    .map_err(|e| {
        format!(
            "{e}\n(the Windows cross-build needs `rustup target add {WINDOWS_TARGET}` and \
             MinGW-w64: `apt install gcc-mingw-w64-x86-64` on Debian/Ubuntu)"
        )
    })?;
    let dll = target_dir()
        .join(WINDOWS_TARGET)
        .join("release")
        .join(LIB_NAMES[1]);
    let exports = dll_exports(&dll)?;
    if !exports.iter().any(|e| e == ENTRY_SYMBOL) {
        return Err(format!(
            "{} does not export {ENTRY_SYMBOL} (exports: {})",
            dll.display(),
            exports.join(", ")
        ));
    }
    eprintln!(
        "xtask: {} exports {ENTRY_SYMBOL} ({} exports)",
        dll.display(),
        exports.len()
    );
    Ok(dll)
}

/// Names in the export table of a PE library (`objdump -p`).
pub fn dll_exports(dll: &Path) -> Result<Vec<String>, String> {
    let out = std::process::Command::new(MINGW_OBJDUMP)
        .arg("-p")
        .arg(dll)
        .output()
        .map_err(|e| format!("cannot run {MINGW_OBJDUMP}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{MINGW_OBJDUMP} -p {} failed: {}",
            dll.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(parse_pe_exports(&String::from_utf8_lossy(&out.stdout)))
}

/// The names of objdump's "[Ordinal/Name Pointer] Table" (lines `\t[   0] name`).
fn parse_pe_exports(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut in_table = false;
    for line in text.lines() {
        if line.contains("[Ordinal/Name Pointer] Table") {
            in_table = true;
            continue;
        }
        if in_table {
            let l = line.trim();
            match l.strip_prefix('[').and_then(|r| r.split_once(']')) {
                Some((_, name)) if !name.trim().is_empty() => names.push(name.trim().to_string()),
                _ => break,
            }
        }
    }
    names
}

/// Every file of the addon that ships: relative paths under `addons/procedural_island/`.
fn addon_files(root: &Path) -> Result<Vec<PathBuf>, String> {
    fn walk(dir: &Path, rel: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
        let mut entries: Vec<_> = fs::read_dir(dir)
            .map_err(|e| format!("read {}: {e}", dir.display()))?
            .filter_map(Result::ok)
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name();
            let name_s = name.to_string_lossy();
            if name_s.starts_with('.') {
                continue;
            }
            let path = e.path();
            let r = rel.join(&name);
            if path.is_dir() {
                // Libraries are added explicitly (release builds only), never from the tree.
                if r == Path::new("bin") {
                    continue;
                }
                walk(&path, &r, out)?;
            } else {
                out.push(r);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(
        &root.join("godot_project").join(ADDON),
        Path::new(""),
        &mut out,
    )?;
    Ok(out)
}

/// Write the zip: addon files, `libs` into `bin/`, licences. Returns the number of files.
pub fn write_zip(out: &Path, libs: &[PathBuf]) -> Result<usize, String> {
    let root = workspace_root();
    let addon = root.join("godot_project").join(ADDON);
    let mut entries: Vec<(String, Vec<u8>)> = Vec::new();
    let read = |p: &Path| fs::read(p).map_err(|e| format!("read {}: {e}", p.display()));
    for rel in addon_files(&root)? {
        let name = format!("{ADDON}/{}", rel.to_string_lossy().replace('\\', "/"));
        entries.push((name, read(&addon.join(&rel))?));
    }
    for lib in libs {
        let name = lib
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| format!("{} has no file name", lib.display()))?;
        if !LIB_NAMES.contains(&name) {
            return Err(format!(
                "{name} is not a library name the .gdextension file lists ({})",
                LIB_NAMES.join(", ")
            ));
        }
        entries.push((format!("{ADDON}/bin/{name}"), read(lib)?));
    }
    for lic in ["LICENSE-MIT", "LICENSE-APACHE"] {
        entries.push((format!("{ADDON}/{lic}"), read(&root.join(lic))?));
    }
    if let Some(dir) = out.parent() {
        fs::create_dir_all(dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    }
    let file = fs::File::create(out).map_err(|e| format!("create {}: {e}", out.display()))?;
    let mut zip = zip::ZipWriter::new(file);
    let dir_opts = zip::write::SimpleFileOptions::default();
    let mut dirs = std::collections::BTreeSet::new();
    for (name, _) in &entries {
        let mut p = name.as_str();
        while let Some((parent, _)) = p.rsplit_once('/') {
            dirs.insert(format!("{parent}/"));
            p = parent;
        }
    }
    for d in &dirs {
        zip.add_directory(d.as_str(), dir_opts)
            .map_err(|e| format!("zip {d}: {e}"))?;
    }
    for (name, bytes) in &entries {
        let exec = name.ends_with(".so") || name.ends_with(".dylib") || name.ends_with(".dll");
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .unix_permissions(if exec { 0o755 } else { 0o644 });
        zip.start_file(name.as_str(), opts)
            .map_err(|e| format!("zip {name}: {e}"))?;
        zip.write_all(bytes)
            .map_err(|e| format!("zip {name}: {e}"))?;
    }
    zip.finish()
        .map_err(|e| format!("zip {}: {e}", out.display()))?;
    Ok(entries.len())
}

/// Unzip `zip` into `dir` (which must be empty or missing); returns the extracted file names.
pub fn unzip(zip_path: &Path, dir: &Path) -> Result<Vec<String>, String> {
    let f = fs::File::open(zip_path).map_err(|e| format!("open {}: {e}", zip_path.display()))?;
    let mut z = zip::ZipArchive::new(f).map_err(|e| format!("read {}: {e}", zip_path.display()))?;
    let mut names = Vec::new();
    for i in 0..z.len() {
        let mut e = z.by_index(i).map_err(|e| format!("zip entry {i}: {e}"))?;
        let rel = e
            .enclosed_name()
            .ok_or_else(|| format!("unsafe path in zip: {}", e.name()))?;
        let path = dir.join(&rel);
        if e.is_dir() {
            fs::create_dir_all(&path).map_err(|e| format!("create {}: {e}", path.display()))?;
            continue;
        }
        if let Some(p) = path.parent() {
            fs::create_dir_all(p).map_err(|e| format!("create {}: {e}", p.display()))?;
        }
        let mut out =
            fs::File::create(&path).map_err(|e| format!("create {}: {e}", path.display()))?;
        std::io::copy(&mut e, &mut out).map_err(|e| format!("write {}: {e}", path.display()))?;
        names.push(e.name().to_string());
    }
    Ok(names)
}

/// The check `cargo xtask test` runs: package the debug library just built, unzip the archive
/// into a fresh empty project and load it in headless Godot: the class must exist and generate
/// an island with land on it.
pub fn package_check(launcher: &GodotLauncher) -> Result<(), String> {
    let tmp = std::env::temp_dir().join(format!("procedural_island_pkg_{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    let zip_path = tmp.join("procedural_island-test.zip");
    let lib = target_dir().join("debug").join(host_lib_name());
    write_zip(&zip_path, &[lib])?;

    let project = tmp.join("fresh_project");
    fs::create_dir_all(&project).map_err(|e| format!("create {}: {e}", project.display()))?;
    let names = unzip(&zip_path, &project)?;
    // Exactly the addon folder, with a library, the licences and the extension file.
    if let Some(stray) = names.iter().find(|n| !n.starts_with(&format!("{ADDON}/"))) {
        return Err(format!("package: {stray} is outside {ADDON}/"));
    }
    for want in [
        format!("{ADDON}/procedural_island.gdextension"),
        format!("{ADDON}/plugin.cfg"),
        format!("{ADDON}/LICENSE-MIT"),
        format!("{ADDON}/LICENSE-APACHE"),
        format!("{ADDON}/bin/{}", host_lib_name()),
    ] {
        if !names.contains(&want) {
            return Err(format!(
                "package: {want} is missing (has {})",
                names.join(", ")
            ));
        }
    }
    let gdext = fs::read_to_string(project.join(ADDON).join("procedural_island.gdextension"))
        .map_err(|e| format!("read .gdextension: {e}"))?;
    for lib in LIB_NAMES {
        if !gdext.contains(&format!("res://{ADDON}/bin/{lib}")) {
            return Err(format!(
                "package: the .gdextension file does not list bin/{lib}"
            ));
        }
    }

    fs::write(
        project.join("project.godot"),
        "config_version=5\n\n[application]\n\nconfig/name=\"fresh\"\n",
    )
    .map_err(|e| format!("write project.godot: {e}"))?;
    fs::write(project.join("check.gd"), CHECK_SCRIPT)
        .map_err(|e| format!("write check.gd: {e}"))?;

    let mut imp = launcher.command();
    imp.args(GODOT_COMMON)
        .arg("--headless")
        .arg("--path")
        .arg(&project)
        .arg("--import");
    let f = run_captured(imp, Duration::from_secs(300), true)?;
    // The first import of a project with the extension may abort at exit (see import_project);
    // the check below runs in a second process either way.
    let mut c = launcher.command();
    c.args(GODOT_COMMON)
        .arg("--headless")
        .arg("--path")
        .arg(&project)
        .args(["-s", "res://check.gd"]);
    let run = run_captured(c, Duration::from_secs(300), true)?;
    let ok = run.text.lines().any(|l| l.trim() == "PACKAGE_OK");
    if !ok {
        return Err(format!(
            "package: the unzipped addon did not load in a fresh project\n--- import ({})\n{}\n--- run ({})\n{}",
            f.describe_exit(),
            f.text,
            run.describe_exit(),
            run.text
        ));
    }
    let _ = fs::remove_dir_all(&tmp);
    eprintln!("xtask: package unzipped into a fresh project and loaded");
    Ok(())
}

/// Runs in the fresh project: the extension's class exists and generates land.
const CHECK_SCRIPT: &str = r#"extends SceneTree

func _initialize() -> void:
	if not ClassDB.class_exists("ProceduralIsland"):
		printerr("ProceduralIsland is not registered")
		quit(1)
		return
	var island = ClassDB.instantiate("ProceduralIsland")
	island.set("resolution", 65)
	island.set("chunk_size", 32)
	island.set("generate_on_ready", false)
	root.add_child(island)
	if not island.call("regenerate"):
		printerr("regenerate() failed")
		quit(1)
		return
	var stats: Dictionary = island.call("get_last_stats")
	var peak: float = -INF
	for i in 33:
		for j in 33:
			peak = max(peak, island.call("get_height_at", (i - 16) * 16.0, (j - 16) * 16.0))
	if stats.get("land_fraction", 0.0) <= 0.0 or peak <= 1.0:
		printerr("no land generated: ", stats, " peak ", peak)
		quit(1)
		return
	print("PACKAGE_OK")
	island.free()
	quit(0)
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pe_export_names_come_from_the_name_pointer_table() {
        let text = "The Export Tables (interpreted .edata section contents)\n\n\
            Export Address Table -- Ordinal Base 1\n\
            \t[   0] +base[   1] 1a2b0 Export RVA\n\n\
            [Ordinal/Name Pointer] Table\n\
            \t[   0] gdext_rust_init\n\
            \t[   1] rust_eh_personality\n\n\
            The Function Table (interpreted .pdata section contents)\n";
        assert_eq!(
            parse_pe_exports(text),
            vec!["gdext_rust_init", "rust_eh_personality"]
        );
        assert!(parse_pe_exports("no table here").is_empty());
    }
}
