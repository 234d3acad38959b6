//! The modules of `island_gpu` depend on each other without a circle (issue 25): every
//! `crate::…` and `super::…` path in `src/**/*.rs` (tests included) is an edge from the file's
//! module to the longest module prefix of the path (an item of `lib.rs` is an edge to the crate
//! root), and the graph must be acyclic. A failure names the circle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module path of a source file relative to `src/` (`lib.rs` is the root, `""`).
fn module_of(rel: &Path) -> String {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let file = parts.pop().expect("a file name");
    let stem = file.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts.join("::")
}

fn sources(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
    for e in std::fs::read_dir(dir).expect("src readable") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            sources(&p, root, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let rel = p.strip_prefix(root).expect("under src");
            let text = std::fs::read_to_string(&p).expect("source readable");
            out.push((module_of(rel), text));
        }
    }
}

/// The code of a file without comments (line comments, doc comments, block comments) and
/// without string literals, so that paths in prose and strings do not count.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                i += 1;
            }
            i += 2;
        } else if b[i] == b'\'' && b.get(i + 2) == Some(&b'\'') {
            // A character literal ('"', 'x'); lifetimes have no closing quote there.
            out.push_str("' '");
            i += 3;
        } else if b[i] == b'\'' && b.get(i + 1) == Some(&b'\\') && b.get(i + 3) == Some(&b'\'') {
            out.push_str("' '");
            i += 4;
        } else if b[i] == b'r'
            && (b.get(i + 1) == Some(&b'#') || b.get(i + 1) == Some(&b'"'))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            // A raw string r"…" / r#"…"#.
            let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
            if b.get(i + 1 + hashes) != Some(&b'"') {
                out.push('r');
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            i += 2 + hashes;
            while i < b.len() && !b[i..].starts_with(&close) {
                i += 1;
            }
            i += close.len();
            out.push_str("\"\"");
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

/// Every path that starts with `prefix` (`crate::`, `super::`), brace groups expanded one
/// level (`crate::a::{b, c::d}` gives `a::b` and `a::c::d`).
fn paths_after(code: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut rest = code;
    while let Some(k) = rest.find(prefix) {
        let before = rest[..k].chars().last();
        rest = &rest[k + prefix.len()..];
        if before.is_some_and(|c| is_ident(c) || c == ':') {
            continue;
        }
        let head: String = rest
            .chars()
            .take_while(|&c| is_ident(c) || c == ':')
            .collect();
        let tail = &rest[head.len()..];
        if head.ends_with("::") && tail.starts_with('{') {
            let end = tail.find('}').unwrap_or(tail.len());
            for item in tail[1..end].split(',') {
                let item: String = item
                    .trim()
                    .chars()
                    .take_while(|&c| is_ident(c) || c == ':')
                    .collect();
                if item.is_empty() || item == "self" {
                    out.push(head.trim_end_matches("::").to_string());
                } else {
                    out.push(format!("{head}{item}"));
                }
            }
        } else {
            out.push(head.trim_end_matches("::").to_string());
        }
    }
    out
}

/// Every `a::b…` path that does not start with `crate`, `super`, `self` or `::` (candidates for
/// paths relative to the module; [`resolve`] keeps those that name a child module).
fn relative_paths(code: &str) -> Vec<String> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts =
            is_ident(chars[i]) && (i == 0 || !(is_ident(chars[i - 1]) || chars[i - 1] == ':'));
        if !starts {
            i += 1;
            continue;
        }
        let head: String = chars[i..]
            .iter()
            .take_while(|&&c| is_ident(c) || c == ':')
            .collect();
        i += head.chars().count();
        let first = head.split("::").next().unwrap_or("");
        if head.contains("::") && !["crate", "super", "self", "std", "island_core"].contains(&first)
        {
            out.push(head.trim_end_matches("::").to_string());
        }
    }
    out
}

/// Where the first inline module (`mod name {`) of a file starts (the end when there is none).
fn inline_mod_start(code: &str) -> usize {
    let mut from = 0;
    while let Some(k) = code[from..].find("mod ") {
        let at = from + k;
        let rest = &code[at + 4..];
        let name_len = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .count();
        let after = rest[name_len..].trim_start();
        let word_start =
            at == 0 || !code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_');
        if word_start && name_len > 0 && after.starts_with('{') {
            return at;
        }
        from = at + 4;
    }
    code.len()
}

/// The module a path names: its longest prefix that is a module (the root when none is).
fn resolve(path: &str, modules: &BTreeSet<String>) -> String {
    let segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    for k in (1..=segs.len()).rev() {
        let m = segs[..k].join("::");
        if modules.contains(&m) {
            return m;
        }
    }
    String::new()
}

/// `code` without its `#[cfg(test)] mod … { … }` blocks.
fn without_test_modules(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(k) = rest.find("#[cfg(test)]") {
        let after = rest[k + "#[cfg(test)]".len()..].trim_start();
        let open = after.find('{');
        if !after.starts_with("mod ") || open.is_none() {
            out.push_str(&rest[..k + 1]);
            rest = &rest[k + 1..];
            continue;
        }
        out.push_str(&rest[..k]);
        let start = rest.len() - after.len() + open.unwrap_or(0);
        let mut depth = 0usize;
        let mut end = rest.len();
        for (i, c) in rest[start..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = start + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The module graph of the crate under `src`; `with_tests`: unit-test modules count too.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    graph_of(src, true)
}

fn graph_of(src: &Path, with_tests: bool) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    sources(src, src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|(m, _)| m.clone()).collect();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, text) in &files {
        let code = code_only(text);
        let code = if with_tests {
            code
        } else {
            without_test_modules(&code)
        };
        let parent = m.rsplit_once("::").map_or("", |(p, _)| p);
        let mut targets: Vec<String> = Vec::new();
        for p in paths_after(&code, "crate::") {
            let t = resolve(&p, &modules);
            if t.is_empty() {
                println!("{m}: crate::{p} is an item of lib.rs");
            }
            targets.push(t);
        }
        // Paths relative to the module (`child::item`, as `lib.rs` uses its modules).
        for p in relative_paths(&code) {
            let full = if m.is_empty() { p } else { format!("{m}::{p}") };
            let t = resolve(&full, &modules);
            if t.len() > m.len() {
                targets.push(t);
            }
        }
        // `super::` in the file's body is the parent module; inside an inline module (`mod
        // tests { use super::*; }`, at the end of a file) it is the file's own module.
        let inline = inline_mod_start(&code);
        for (part, base) in [(&code[..inline], parent), (&code[inline..], m.as_str())] {
            for p in paths_after(part, "super::") {
                let full = match (base.is_empty(), p.is_empty()) {
                    (true, _) => p,
                    (false, true) => base.to_string(),
                    (false, false) => format!("{base}::{p}"),
                };
                targets.push(resolve(&full, &modules));
            }
        }
        let edges = g.entry(m.clone()).or_default();
        for t in targets {
            if &t != m {
                edges.insert(t);
            }
        }
    }
    g
}

/// A circle of `g`, if any, as the modules along it.
fn find_cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        m: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(m.to_string(), 1);
        stack.push(m.to_string());
        for t in g.get(m).into_iter().flatten() {
            match state.get(t.as_str()).copied().unwrap_or(0) {
                1 => {
                    let at = stack.iter().position(|s| s == t).expect("on the stack");
                    let mut c = stack[at..].to_vec();
                    c.push(t.clone());
                    return Some(c);
                }
                0 => {
                    if let Some(c) = visit(t, g, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(m.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for m in g.keys() {
        if state.get(m.as_str()).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(m, g, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

fn name(m: &str) -> &str {
    if m.is_empty() {
        "crate (lib.rs)"
    } else {
        m
    }
}

#[test]
fn gpu_modules_have_no_circle() {
    let src = manifest_dir().join("src");
    let g = graph(&src);
    assert!(
        g[""].contains("pipeline") && g["pipeline"].contains("stages::erosion"),
        "the graph sees lib.rs's relative paths and pipeline's brace groups"
    );
    for (m, deps) in &g {
        let d: Vec<&str> = deps.iter().map(|s| name(s)).collect();
        println!("{} -> {}", name(m), d.join(", "));
    }
    if let Some(c) = find_cycle(&g) {
        let c: Vec<&str> = c.iter().map(|s| name(s)).collect();
        panic!("module circle in island_gpu: {}", c.join(" -> "));
    }
}

/// The same for every crate of the workspace (issue 25: "no circle between the modules of any
/// crate"), for the code the crates ship: unit-test modules (`#[cfg(test)] mod tests`) may use
/// higher modules to build realistic input (the core's tests generate islands with `pipeline`).
#[test]
fn no_crate_of_the_workspace_has_a_module_circle() {
    let rust = manifest_dir().join("..");
    let mut circles = Vec::new();
    for krate in ["core", "gpu", "godot", "cli", "xtask"] {
        let src = rust.join(krate).join("src");
        assert!(src.is_dir(), "{} exists", src.display());
        let g = graph_of(&src, false);
        assert!(g.len() > 1, "rust/{krate} has modules");
        if let Some(c) = find_cycle(&g) {
            let c: Vec<&str> = c.iter().map(|s| name(s)).collect();
            circles.push(format!("rust/{krate}: {}", c.join(" -> ")));
        }
    }
    assert!(circles.is_empty(), "module circles: {circles:#?}");
}

/// The checker sees a circle when there is one (two modules using each other, and one through
/// `super::`).
#[test]
fn a_circle_is_found() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("c".into());
    g.entry("c".into()).or_default().insert("a".into());
    assert_eq!(
        find_cycle(&g),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
    let code = code_only(
        "use crate::x::{self, y::Z, w};\n// crate::q\nlet s = \"crate::r\";\nsuper::v::f();",
    );
    assert_eq!(paths_after(&code, "crate::"), ["x", "x::y::Z", "x::w"]);
    assert_eq!(paths_after(&code, "super::"), ["v::f"]);
    let code = "use crate::a;\n#[cfg(test)]\nmod tests {\n    use crate::b::{c};\n}\nfn f() {}\n";
    assert_eq!(paths_after(&without_test_modules(code), "crate::"), ["a"]);
}

/// This package's directory: the one `cargo test` runs the test for (a test binary reused from
/// a target dir shared with another checkout still reads this checkout's files), else the one
/// it was compiled in.
fn manifest_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}
