//! The files generated from the parameter schema (`island_core::schema`):
//!
//! * the parameter tables of `docs/inspector.md`, between `<!-- params:GROUP begin ... -->` and
//!   `<!-- params:GROUP end -->` (the prose around them is written by hand);
//! * `godot_project/tests/data/parameter_schema.json`, which `test_parameter_schema.gd`
//!   compares with the `ProceduralIsland` node's properties (range hints and defaults).
//!
//! ```text
//! cargo xtask docs                  # builds and runs this with `write`
//! schema_docs write|check
//! ```
//!
//! `check` (and the test below, which `cargo test --workspace` runs: `test = true` in the
//! manifest) fails when a checked-in file differs from what `write` would make. An example of the
//! core rather than a part of xtask: xtask, built first by every `cargo xtask` command, would
//! otherwise build the core on its own, with other features than the build it then starts (a
//! newcomer's first build compiled the core twice).

use island_core::schema::{self, Check, Kind, ParamInfo, Slider, Value};
use std::fs;
use std::path::{Path, PathBuf};

/// The inspector reference, relative to the workspace root.
const INSPECTOR: &str = "docs/inspector.md";
/// The schema the GDScript test reads, relative to the workspace root.
const SCHEMA_JSON: &str = "godot_project/tests/data/parameter_schema.json";

/// A number as the docs write it: `1e6` from a million up, `−` for minus.
fn num(v: f32) -> String {
    let s = if v != 0.0 && v.abs() >= 1.0e6 {
        format!("{v:e}")
    } else {
        format!("{v}")
    };
    s.replace('-', "−")
}

fn span(lo: f32, hi: f32) -> String {
    if lo < 0.0 || hi < 0.0 {
        format!("{} – {}", num(lo), num(hi))
    } else {
        format!("{}–{}", num(lo), num(hi))
    }
}

fn enum_list(names: &[&str]) -> String {
    names
        .iter()
        .enumerate()
        .map(|(i, n)| format!("{n} = {i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The "range" cell: what the generator accepts, and the slider where it spans less.
fn range_cell(p: &ParamInfo) -> String {
    let accepted = match (p.check, p.kind) {
        (_, Kind::Enum(names)) => enum_list(names),
        (Check::Any, _) => "—".to_string(),
        (Check::Custom(text), _) => text.to_string(),
        (Check::Range(lo, hi), _) => span(lo, hi),
        (Check::ZeroOrRange(lo, hi), _) => format!("0, or {}", span(lo, hi)),
        (Check::Positive, _) => "> 0".to_string(),
        (Check::PositiveFinite, _) => "> 0 (no upper limit)".to_string(),
        (Check::NonNegative, _) => "≥ 0".to_string(),
    };
    let Some(s) = p.slider else {
        return accepted;
    };
    let same = match p.check {
        Check::Range(lo, hi) | Check::ZeroOrRange(lo, hi) => {
            s.min == lo && s.max == hi && !s.or_less && !s.or_greater
        }
        _ => false,
    };
    if same {
        accepted
    } else {
        let mut slider = format!("slider {}", span(s.min, s.max));
        if s.or_greater {
            slider.push('+');
        }
        if s.or_less {
            slider.push_str(", or less");
        }
        format!("{accepted} ({slider})")
    }
}

fn default_cell(p: &ParamInfo) -> String {
    match (p.default, p.kind) {
        (Value::Int(i), Kind::Enum(names)) => names
            .get(i as usize)
            .map_or_else(|| i.to_string(), |n| n.to_string()),
        (Value::Bool(b), _) => b.to_string(),
        (Value::Int(i), _) => i.to_string(),
        (Value::Float(f), _) => num(f),
    }
}

fn type_cell(kind: Kind) -> &'static str {
    match kind {
        Kind::Bool => "bool",
        Kind::Int => "int",
        Kind::Float => "float",
        Kind::Enum(_) => "int (enum)",
    }
}

/// The generated text of one group: the table of its node properties, then the parameters of
/// the group that the node does not expose.
fn group_table(group: &str) -> String {
    let all: Vec<ParamInfo> = island_core::schema_index::all()
        .into_iter()
        .filter(|p| p.group == group)
        .collect();
    let mut out = String::from(
        "| property | type | unit | range | default | what it does |\n|---|---|---|---|---|---|\n",
    );
    for p in all.iter().filter(|p| p.property.is_some()) {
        let unit = if p.unit.is_empty() { "—" } else { p.unit };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} |\n",
            p.property.unwrap(),
            type_cell(p.kind),
            unit,
            range_cell(p),
            default_cell(p),
            p.doc.replace('|', "\\|"),
        ));
    }
    let core_only: Vec<&ParamInfo> = all.iter().filter(|p| p.property.is_none()).collect();
    if !core_only.is_empty() {
        out.push_str("\nIn the core only (parameter files and the CLI, not on the node):\n\n");
        for p in core_only {
            let unit = if p.unit.is_empty() {
                String::new()
            } else {
                format!(" {}", p.unit)
            };
            out.push_str(&format!(
                "* `{}` ({}, {}{unit}, default {}): {}\n",
                p.path,
                type_cell(p.kind),
                range_cell(p),
                default_cell(p),
                p.doc
            ));
        }
    }
    out
}

fn begin_marker(group: &str) -> String {
    format!("<!-- params:{group} begin: generated by `cargo xtask docs` from the schema in rust/core; edit the schema, not this table -->")
}

fn end_marker(group: &str) -> String {
    format!("<!-- params:{group} end -->")
}

/// `text` with every group's marked block replaced by its generated table.
fn inspector_md(text: &str) -> Result<String, String> {
    let mut out = text.to_string();
    for (group, _) in schema::GROUPS {
        let (b, e) = (begin_marker(group), end_marker(group));
        let start = out
            .find(&b)
            .ok_or_else(|| format!("{INSPECTOR} lacks the marker {b}"))?;
        let body = start + b.len();
        let end = out[body..]
            .find(&e)
            .map(|i| body + i)
            .ok_or_else(|| format!("{INSPECTOR} lacks the marker {e}"))?;
        out.replace_range(body..end, &format!("\n{}", group_table(group)));
    }
    Ok(out)
}

fn json_f32(v: f32) -> serde_json::Value {
    // The f32's exact value as an f64: a Godot float property holds exactly this.
    serde_json::json!(v as f64)
}

/// The `hint_string` gdext registers for `#[export(range = (min, max, step, or_greater,
/// or_less, suffix = "..."))]` (`godot::register::property::export_fns::export_range`: the
/// literals' shortest decimal forms, the flags in that order).
fn hint_string(s: Slider) -> String {
    let mut h = format!("{},{}", s.min, s.max);
    if let Some(step) = s.step {
        h.push_str(&format!(",{step}"));
    }
    if s.or_greater {
        h.push_str(",or_greater");
    }
    if s.or_less {
        h.push_str(",or_less");
    }
    if !s.suffix.is_empty() {
        h.push_str(&format!(",suffix:{}", s.suffix));
    }
    h
}

fn json_slider(s: Slider) -> serde_json::Value {
    serde_json::json!({
        "hint_string": hint_string(s),
        "min": json_f32(s.min),
        "max": json_f32(s.max),
        "step": s.step.map(json_f32),
        "or_less": s.or_less,
        "or_greater": s.or_greater,
        "suffix": s.suffix,
    })
}

/// The schema of every node property, for `test_parameter_schema.gd`.
fn schema_json() -> String {
    let props: Vec<serde_json::Value> = island_core::schema_index::all()
        .into_iter()
        .filter_map(|p| {
            let name = p.property?;
            let (kind, default) = match (p.kind, p.default) {
                (Kind::Enum(names), Value::Int(i)) => {
                    ("enum", serde_json::json!({"value": i, "names": names}))
                }
                (_, Value::Bool(b)) => ("bool", serde_json::json!(b)),
                (_, Value::Int(i)) => ("int", serde_json::json!(i)),
                (_, Value::Float(f)) => ("float", json_f32(f)),
            };
            Some(serde_json::json!({
                "property": name,
                "path": p.path,
                "kind": kind,
                "default": default,
                "slider": p.slider.map(json_slider),
            }))
        })
        .collect();
    let doc = serde_json::json!({
        "generated_by": "cargo xtask docs (from island_core::schema); do not edit",
        "properties": props,
    });
    serde_json::to_string_pretty(&doc).unwrap() + "\n"
}

/// Every generated file: its path and the contents it should have.
fn generated(root: &Path) -> Result<Vec<(PathBuf, String)>, String> {
    let md_path = root.join(INSPECTOR);
    let md = fs::read_to_string(&md_path).map_err(|e| format!("{}: {e}", md_path.display()))?;
    Ok(vec![
        (md_path, inspector_md(&md)?),
        (root.join(SCHEMA_JSON), schema_json()),
    ])
}

/// `cargo xtask docs` (`schema_docs write`): write the generated files.
fn write(root: &Path) -> Result<(), String> {
    for (path, text) in generated(root)? {
        if fs::read_to_string(&path).ok().as_deref() == Some(text.as_str()) {
            continue;
        }
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        eprintln!("schema_docs: wrote {}", path.display());
    }
    Ok(())
}

/// Fails when a checked-in generated file differs from what [`write`] would make.
fn check(root: &Path) -> Result<(), String> {
    let stale: Vec<String> = generated(root)?
        .into_iter()
        .filter(|(path, text)| fs::read_to_string(path).ok().as_deref() != Some(text.as_str()))
        .map(|(path, _)| path.display().to_string())
        .collect();
    if stale.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "docs are stale: run cargo xtask docs ({} differ from the parameter schema)",
            stale.join(", ")
        ))
    }
}

/// The workspace root (this example lives in `rust/core/examples`).
fn workspace_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

fn main() -> std::process::ExitCode {
    let arg = std::env::args().nth(1);
    let result = match arg.as_deref() {
        Some("write") => write(&workspace_root()),
        Some("check") => check(&workspace_root()),
        _ => Err("usage: schema_docs write|check".to_string()),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("schema_docs: error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn generated_docs_are_fresh() {
        super::check(&super::workspace_root()).unwrap();
    }
}
