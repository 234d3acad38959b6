//! The bake check of `cargo xtask test`: `ProceduralIsland.bake()` must write a scene that loads
//! in a project WITHOUT the addon or the extension.
//!
//! 1. In the repository's project (extension loaded), `tests/bake/bake_export.gd` generates a
//!    small island with water, bakes it into a fresh temporary folder and writes the expected
//!    heights (`get_height_at` at sample points and between samples) to `expected.json`.
//! 2. That folder becomes a new Godot project (a `project.godot`, `tests/bake/bake_check.gd`
//!    copied in, nothing else); headless Godot loads the baked scene there and compares the mesh
//!    vertex heights and ray casts against the `HeightMapShape3D` colliders with the expected
//!    heights, checks the water surfaces and that the scene is self-contained. It prints
//!    `BAKE_OK`.

use std::fs;
use std::time::Duration;

use crate::godot::GodotLauncher;
use crate::run::{run_captured, workspace_root};
use crate::{check_godot_run, GODOT_COMMON, PROJECT};

pub fn bake_check(launcher: &GodotLauncher) -> Result<(), String> {
    let tmp = std::env::temp_dir().join(format!("procedural_island_bake_{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    let project = tmp.join("no_addon_project");
    fs::create_dir_all(&project).map_err(|e| format!("create {}: {e}", project.display()))?;

    let mut export = launcher.command();
    export
        .current_dir(workspace_root())
        .args(GODOT_COMMON)
        .args(["--headless", "--path", PROJECT])
        .args(["-s", "res://tests/bake/bake_export.gd", "--"])
        .arg(format!("--out={}", project.display()));
    let f = run_captured(export, Duration::from_secs(300), true)?;
    check_godot_run("bake export", &f, &[])?;
    if !project.join("baked_island.tscn").is_file() {
        return Err(format!(
            "bake export wrote no baked_island.tscn\n{}",
            f.text
        ));
    }

    fs::write(
        project.join("project.godot"),
        "config_version=5\n\n[application]\n\nconfig/name=\"bake_check\"\n",
    )
    .map_err(|e| format!("write project.godot: {e}"))?;
    fs::copy(
        workspace_root()
            .join(PROJECT)
            .join("tests/bake/bake_check.gd"),
        project.join("bake_check.gd"),
    )
    .map_err(|e| format!("copy bake_check.gd: {e}"))?;
    let mut c = launcher.command();
    c.args(GODOT_COMMON)
        .arg("--headless")
        .arg("--path")
        .arg(&project)
        .args(["-s", "res://bake_check.gd"]);
    let run = run_captured(c, Duration::from_secs(300), true)?;
    let ok = run.text.lines().any(|l| l.trim() == "BAKE_OK");
    let clean = check_godot_run("bake check", &run, &[]);
    if !ok || clean.is_err() {
        return Err(format!(
            "bake: the baked scene did not load or check out in a project without the addon ({})\n{}\n{}",
            run.describe_exit(),
            run.text,
            clean.err().unwrap_or_default()
        ));
    }
    let _ = fs::remove_dir_all(&tmp);
    eprintln!("xtask: baked scene loaded and checked in a project without the extension");
    Ok(())
}
