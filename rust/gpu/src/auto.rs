//! [`crate::Backend::Auto`] by measurement: the GPU only where it was measured faster than the
//! CPU for this kind of work on this machine.
//!
//! The first AUTO generation of a [`AutoKey`] (adapter name, driver, addon version, resolution
//! and the kind of work) runs on both backends, timed, and keeps the faster island; the two
//! times go into an [`AutoStore`] (a JSON file in a folder the caller names, see
//! [`set_store_dir`]; without one they are kept for the process only). Later generations with
//! the same key follow the stored measurement; a new adapter, driver, addon version, resolution
//! or kind of work is measured again. A software or missing adapter never is: AUTO stays on the
//! CPU there without opening a device.
//!
//! Everything in this module but [`choose`]'s use of the process-wide store is plain data, so
//! the decision is unit-tested with fake timings.

use serde::{Deserialize, Serialize};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// File name of the store inside the folder given to [`set_store_dir`].
pub const STORE_FILE: &str = "island_gpu_auto.json";

/// Version of the store's layout; a file of another version is treated as empty.
const STORE_FORMAT: u32 = 1;

/// What a measurement is valid for: re-measured when any field changes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AutoKey {
    /// Adapter name and API, e.g. "NVIDIA H100 (Vulkan)".
    pub adapter: String,
    /// Driver name and version as the adapter reports them.
    pub driver: String,
    /// Version of this addon (the `island_gpu` crate).
    pub addon_version: String,
    /// Resolution (samples per side; every valid one is 2^n+1, so each is its own band).
    pub resolution: u32,
    /// The kind of work: the optional stages that change the cost ("erosion", "sculpt"), or
    /// "plain".
    pub work: String,
}

impl AutoKey {
    /// The key of generating `params` on `adapter`.
    pub fn new(adapter: &AdapterFacts, params: &island_core::IslandParams) -> AutoKey {
        let mut work = Vec::new();
        if params.erosion.enabled {
            work.push("erosion");
        }
        if params.sculpt.is_some() {
            work.push("sculpt");
        }
        AutoKey {
            adapter: adapter.name.clone(),
            driver: adapter.driver.clone(),
            addon_version: env!("CARGO_PKG_VERSION").to_string(),
            resolution: params.resolution,
            work: if work.is_empty() {
                "plain".into()
            } else {
                work.join(",")
            },
        }
    }
}

/// One measurement: the same island generated on both backends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// What it is valid for.
    pub key: AutoKey,
    /// Milliseconds, the whole island to the host on the GPU (device already open).
    pub gpu_ms: f64,
    /// Milliseconds, the whole island on the CPU.
    pub cpu_ms: f64,
}

impl Measurement {
    /// Whether the GPU won.
    pub fn gpu_faster(&self) -> bool {
        self.gpu_ms < self.cpu_ms
    }

    /// The `backend_reason` line of an AUTO generation that follows this measurement.
    pub fn reason(&self) -> String {
        let (who, first, second) = if self.gpu_faster() {
            ("gpu", self.gpu_ms, self.cpu_ms)
        } else {
            ("cpu", self.cpu_ms, self.gpu_ms)
        };
        let other = if self.gpu_faster() { "CPU" } else { "GPU" };
        let r = self.key.resolution;
        format!(
            "auto: {who} (measured {first:.1} ms vs {second:.1} ms on the {other} at {r}², {})",
            self.key.adapter
        )
    }
}

/// Every measurement kept (one per key).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AutoStore {
    /// Layout version ([`STORE_FORMAT`]).
    pub format: u32,
    /// One per key.
    pub measurements: Vec<Measurement>,
}

impl AutoStore {
    /// The store in `path`; empty when the file is missing, unreadable, not JSON or of another
    /// layout (it is then rewritten by the next measurement).
    pub fn load(path: &Path) -> AutoStore {
        std::fs::read(path)
            .ok()
            .and_then(|b| serde_json::from_slice::<AutoStore>(&b).ok())
            .filter(|s| s.format == STORE_FORMAT)
            .unwrap_or_default()
    }

    /// Write the store to `path` (its folder created when missing; written to a temporary file
    /// first and renamed, so a reader never sees half a file).
    pub fn save(&self, path: &Path) -> io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let json = serde_json::to_vec_pretty(&AutoStore {
            format: STORE_FORMAT,
            measurements: self.measurements.clone(),
        })
        .map_err(io::Error::other)?;
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, json)?;
        std::fs::rename(&tmp, path)
    }

    /// The measurement for `key`.
    pub fn get(&self, key: &AutoKey) -> Option<&Measurement> {
        self.measurements.iter().find(|m| &m.key == key)
    }

    /// Keep `m`, replacing any measurement of the same key.
    pub fn record(&mut self, m: Measurement) {
        self.measurements.retain(|x| x.key != m.key);
        self.measurements.push(m);
    }
}

/// What AUTO knows of the default adapter without opening a device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdapterFacts {
    /// Name and API, e.g. "llvmpipe (LLVM 15.0.7, 256 bits) (Vulkan)".
    pub name: String,
    /// Driver name and version.
    pub driver: String,
    /// A CPU / software rasteriser (lavapipe, WARP, SwiftShader).
    pub software: bool,
}

/// What AUTO does for one generation.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// The CPU, for this reason.
    Cpu(String),
    /// The GPU, for this reason.
    Gpu(String),
    /// No measurement for this key: time both backends.
    Measure(AutoKey),
}

/// AUTO's rule. `adapter` is `None` when there is no usable compute adapter.
pub fn decide(
    adapter: Option<&AdapterFacts>,
    store: &AutoStore,
    params: &island_core::IslandParams,
) -> Decision {
    let Some(a) = adapter else {
        return Decision::Cpu("auto: cpu (no GPU adapter)".into());
    };
    if a.software {
        return Decision::Cpu(format!("auto: cpu (software adapter {})", a.name));
    }
    let key = AutoKey::new(a, params);
    match store.get(&key) {
        Some(m) if m.gpu_faster() => Decision::Gpu(m.reason()),
        Some(m) => Decision::Cpu(m.reason()),
        None => Decision::Measure(key),
    }
}

/// The process-wide store: where it lives and what was read from there.
struct Shared {
    path: Option<PathBuf>,
    store: Option<AutoStore>,
}

static SHARED: Mutex<Shared> = Mutex::new(Shared {
    path: None,
    store: None,
});

/// Keep AUTO's measurements in `dir` ([`STORE_FILE`]); `None`: in memory for this process only
/// (the default). The Godot extension passes `OS.get_user_data_dir()`, the CLI its cache folder.
pub fn set_store_dir(dir: Option<&Path>) {
    let mut s = crate::sync::lock(&SHARED);
    let path = dir.map(|d| d.join(STORE_FILE));
    if s.path != path {
        s.path = path;
        s.store = None;
    }
}

/// Where the measurements are kept (`None`: in memory only).
pub fn store_path() -> Option<PathBuf> {
    crate::sync::lock(&SHARED).path.clone()
}

/// [`decide`] with the process-wide store (read from its file on first use).
pub(crate) fn decide_now(
    adapter: Option<&AdapterFacts>,
    params: &island_core::IslandParams,
) -> Decision {
    let mut s = crate::sync::lock(&SHARED);
    let path = s.path.clone();
    let store = s
        .store
        .get_or_insert_with(|| path.as_deref().map(AutoStore::load).unwrap_or_default());
    decide(adapter, store, params)
}

/// Keep `m` in the process-wide store and its file. A file that cannot be written leaves the
/// measurement in memory (and returns the error for the caller to mention).
pub(crate) fn record_now(m: Measurement) -> io::Result<()> {
    let mut s = crate::sync::lock(&SHARED);
    let path = s.path.clone();
    let store = s
        .store
        .get_or_insert_with(|| path.as_deref().map(AutoStore::load).unwrap_or_default());
    // Another process may have measured other keys meanwhile: merge with the file.
    if let Some(p) = &path {
        for other in AutoStore::load(p).measurements {
            if store.get(&other.key).is_none() {
                store.record(other);
            }
        }
    }
    store.record(m);
    match &path {
        Some(p) => store.save(p),
        None => Ok(()),
    }
}

/// Forget the measurements held in memory (the file stays); for tests.
#[doc(hidden)]
pub fn forget_in_memory() {
    crate::sync::lock(&SHARED).store = None;
}

#[cfg(test)]
mod tests {
    use super::*;
    use island_core::IslandParams;

    fn hw() -> AdapterFacts {
        AdapterFacts {
            name: "Fake RTX (Vulkan)".into(),
            driver: "fake 1.0".into(),
            software: false,
        }
    }

    fn params(resolution: u32) -> IslandParams {
        IslandParams {
            resolution,
            ..IslandParams::default()
        }
    }

    fn measured(a: &AdapterFacts, p: &IslandParams, gpu_ms: f64, cpu_ms: f64) -> AutoStore {
        let mut s = AutoStore::default();
        s.record(Measurement {
            key: AutoKey::new(a, p),
            gpu_ms,
            cpu_ms,
        });
        s
    }

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("island_gpu_auto_{}_{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d.join(STORE_FILE)
    }

    #[test]
    fn no_adapter_is_cpu() {
        let d = decide(None, &AutoStore::default(), &params(1025));
        assert_eq!(d, Decision::Cpu("auto: cpu (no GPU adapter)".into()));
    }

    #[test]
    fn software_adapter_is_cpu_without_measuring() {
        let a = AdapterFacts {
            software: true,
            ..hw()
        };
        // Even a stored measurement that favours the GPU is not looked at.
        let store = measured(&a, &params(1025), 1.0, 100.0);
        match decide(Some(&a), &store, &params(1025)) {
            Decision::Cpu(r) => assert!(r.starts_with("auto: cpu (software adapter"), "{r}"),
            d => panic!("{d:?}"),
        }
    }

    #[test]
    fn empty_store_measures() {
        let p = params(1025);
        assert_eq!(
            decide(Some(&hw()), &AutoStore::default(), &p),
            Decision::Measure(AutoKey::new(&hw(), &p))
        );
    }

    #[test]
    fn stored_gpu_faster_is_gpu() {
        let p = params(1025);
        let d = decide(Some(&hw()), &measured(&hw(), &p, 3.1, 7.9), &p);
        assert_eq!(
            d,
            Decision::Gpu(
                "auto: gpu (measured 3.1 ms vs 7.9 ms on the CPU at 1025², Fake RTX (Vulkan))"
                    .into()
            )
        );
    }

    #[test]
    fn stored_cpu_faster_is_cpu() {
        let p = params(1025);
        let d = decide(Some(&hw()), &measured(&hw(), &p, 17.0, 10.8), &p);
        assert_eq!(
            d,
            Decision::Cpu(
                "auto: cpu (measured 10.8 ms vs 17.0 ms on the GPU at 1025², Fake RTX (Vulkan))"
                    .into()
            )
        );
        // A tie is the CPU's (no reason to leave the reference path).
        let d = decide(Some(&hw()), &measured(&hw(), &p, 5.0, 5.0), &p);
        assert!(matches!(d, Decision::Cpu(_)), "{d:?}");
    }

    #[test]
    fn a_changed_key_is_measured_again() {
        let p = params(1025);
        let store = measured(&hw(), &p, 3.1, 7.9);
        let other_driver = AdapterFacts {
            driver: "fake 2.0".into(),
            ..hw()
        };
        let other_adapter = AdapterFacts {
            name: "Other GPU (Vulkan)".into(),
            ..hw()
        };
        for (a, q) in [
            (other_driver, p.clone()),
            (other_adapter, p.clone()),
            (hw(), params(4097)),
        ] {
            assert_eq!(
                decide(Some(&a), &store, &q),
                Decision::Measure(AutoKey::new(&a, &q))
            );
        }
        let mut eroded = p.clone();
        eroded.erosion.enabled = !p.erosion.enabled;
        assert!(matches!(
            decide(Some(&hw()), &store, &eroded),
            Decision::Measure(_)
        ));
        let mut old = store.clone();
        old.measurements[0].key.addon_version = "0.0.0-old".into();
        assert!(matches!(
            decide(Some(&hw()), &old, &p),
            Decision::Measure(_)
        ));
    }

    #[test]
    fn store_round_trips_and_replaces_a_key() {
        let path = tmp("roundtrip");
        let p = params(1025);
        let mut s = measured(&hw(), &p, 3.1, 7.9);
        s.save(&path).unwrap();
        assert_eq!(AutoStore::load(&path).measurements, s.measurements);
        s.record(Measurement {
            key: AutoKey::new(&hw(), &p),
            gpu_ms: 9.0,
            cpu_ms: 2.0,
        });
        assert_eq!(s.measurements.len(), 1);
        s.save(&path).unwrap();
        assert!(matches!(
            decide(Some(&hw()), &AutoStore::load(&path), &p),
            Decision::Cpu(_)
        ));
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }

    #[test]
    fn a_corrupt_or_missing_file_is_an_empty_store() {
        let path = tmp("corrupt");
        assert_eq!(AutoStore::load(&path), AutoStore::default());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        for junk in [
            &b"{ not json"[..],
            b"",
            b"\xff\xfe\x00garbage",
            b"{\"format\": 999, \"measurements\": []}",
            b"{\"format\": 1, \"measurements\": [{\"key\": 3}]}",
            b"[]",
        ] {
            std::fs::write(&path, junk).unwrap();
            let s = AutoStore::load(&path);
            assert_eq!(s, AutoStore::default());
            assert!(matches!(
                decide(Some(&hw()), &s, &params(1025)),
                Decision::Measure(_)
            ));
        }
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }
}
