//! The stage lists written in the docs and in the node's help are the pipeline's own
//! (`island_core::pipeline::STAGES`, `island_gpu::GPU_STAGES`): a new stage that is not added
//! to them fails here (issue 25: they had drifted, erosion and drainage were missing).

use std::path::PathBuf;

fn root() -> PathBuf {
    manifest_dir().join("../..")
}

/// The file's text with doc-comment markers and the diagram's box lines removed and every run
/// of whitespace made one space (a list may wrap across lines).
fn normalized(rel: &str) -> String {
    let text = std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    text.replace("///", " ")
        .replace('│', " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn ticked(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[test]
fn docs_and_help_list_the_pipelines_stages() {
    let cpu = ticked(&island_core::pipeline::STAGES);
    let gpu = ticked(&island_gpu::GPU_STAGES);
    let arrows = island_core::pipeline::STAGES.join(" → ");
    for (file, wants) in [
        ("docs/api.md", vec![cpu.clone(), gpu.clone()]),
        ("docs/gpu-backend.md", vec![cpu.clone(), gpu.clone()]),
        (
            "rust/godot/src/island/procedural_island/mod.rs",
            vec![cpu.clone(), gpu.clone()],
        ),
        ("docs/architecture.md", vec![arrows.clone()]),
    ] {
        let text = normalized(file);
        for want in wants {
            assert!(
                text.contains(&want),
                "{file} does not list the stages as the pipeline has them: {want}"
            );
        }
    }
}

/// This package's directory: the one `cargo test` runs the test for (a test binary reused from
/// a target dir shared with another checkout still reads this checkout's files), else the one
/// it was compiled in.
fn manifest_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}
