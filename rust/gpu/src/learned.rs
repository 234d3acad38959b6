//! The dispatch counts the GPU pipeline's iterations needed (the depression relaxations, the
//! tiled donor-first accumulation, the stream-power rounds), learned in checked runs and used to
//! speculate (`recorder::Speculation`). Kept for the process, and in the folder of AUTO's
//! measurements when there is one ([`FILE`], next to [`crate::auto::STORE_FILE`]), so that a
//! game's first island of a size speculates too. The counts depend on the terrain and the
//! shaders, not on the adapter; a file of another addon version is ignored (and rewritten).

use crate::sync::lock;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// An iterative pass (a relaxation, a donor-first iteration) on a grid of a given side.
pub(crate) type IterKey = (&'static str, usize);

/// The iterations that learn counts (the names of [`IterKey`]s; a file's other names are
/// ignored).
const KNOWN: [&str; 4] = [
    "depression_fill",
    "flat_routing",
    "flow_accumulation",
    "stream_power",
];

/// File name of the counts inside the folder of AUTO's store.
pub const FILE: &str = "island_gpu_iterations.json";
/// Layout version of [`FILE`].
const FORMAT: u32 = 1;

#[derive(Serialize, Deserialize)]
struct FileCounts {
    format: u32,
    addon_version: String,
    counts: Vec<FileEntry>,
}

#[derive(Serialize, Deserialize)]
struct FileEntry {
    what: String,
    n: usize,
    /// The largest count seen.
    count: u32,
    /// In how many runs.
    runs: u32,
}

struct Learned {
    /// Per key: the largest count seen, and in how many runs.
    counts: BTreeMap<IterKey, (u32, u32)>,
    /// The file the counts were merged from and are saved to.
    path: Option<PathBuf>,
    /// Changed since the last save.
    dirty: bool,
}

static LEARNED: Mutex<Learned> = Mutex::new(Learned {
    counts: BTreeMap::new(),
    path: None,
    dirty: false,
});

/// `f` on the counts, merged first with the file of the current store folder when it changed.
fn with<T>(f: impl FnOnce(&mut Learned) -> T) -> T {
    let mut l = lock(&LEARNED);
    let path = crate::auto::store_path().map(|p| p.with_file_name(FILE));
    if path != l.path {
        if let Some(p) = &path {
            for (k, (count, runs)) in load(p) {
                let e = l.counts.entry(k).or_insert((0, 0));
                *e = (e.0.max(count), e.1.max(runs));
            }
        }
        l.path = path;
    }
    f(&mut l)
}

/// The counts in `path`: none when the file is missing, unreadable, of another layout or of
/// another addon version.
fn load(path: &Path) -> Vec<(IterKey, (u32, u32))> {
    let Some(file) = std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice::<FileCounts>(&b).ok())
        .filter(|f| f.format == FORMAT && f.addon_version == env!("CARGO_PKG_VERSION"))
    else {
        return Vec::new();
    };
    file.counts
        .iter()
        .filter_map(|e| {
            let what = KNOWN.iter().find(|k| **k == e.what)?;
            Some(((*what, e.n), (e.count, e.runs)))
        })
        .collect()
}

/// The largest count of `key` seen, and in how many runs.
pub(crate) fn get(key: IterKey) -> Option<(u32, u32)> {
    with(|l| l.counts.get(&key).copied())
}

/// `key` needed `count` dispatches in `runs` checked runs (the largest of them).
pub(crate) fn learn(key: IterKey, count: u32, runs: u32) {
    with(|l| {
        let e = l.counts.entry(key).or_insert((0, 0));
        *e = (e.0.max(count), e.1 + runs);
        l.dirty = true;
    })
}

/// The counts of `keys` fell short: unknown again.
pub(crate) fn forget(keys: &[IterKey]) {
    with(|l| {
        for k in keys {
            l.counts.remove(k);
        }
        l.dirty = true;
    })
}

/// Test hook: every count set to `count`, or with `None` all forgotten (the file too, at the
/// next save).
pub(crate) fn set_all(count: Option<u32>) {
    with(|l| {
        match count {
            Some(c) => l.counts.values_mut().for_each(|v| v.0 = c),
            None => l.counts.clear(),
        }
        l.dirty = true;
    })
}

/// Write the counts to the store folder's file when they changed (a temporary file renamed
/// over the old one); a failure only costs the next process its checked runs.
pub(crate) fn save() {
    with(|l| {
        let Some(path) = l.path.clone().filter(|_| l.dirty) else {
            return;
        };
        let file = FileCounts {
            format: FORMAT,
            addon_version: env!("CARGO_PKG_VERSION").to_string(),
            counts: l
                .counts
                .iter()
                .map(|(&(what, n), &(count, runs))| FileEntry {
                    what: what.to_string(),
                    n,
                    count,
                    runs,
                })
                .collect(),
        };
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let written = serde_json::to_vec_pretty(&file)
            .map_err(std::io::Error::other)
            .and_then(|json| {
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir)?;
                }
                std::fs::write(&tmp, json)?;
                std::fs::rename(&tmp, &path)
            });
        if written.is_ok() {
            l.dirty = false;
        }
    })
}
