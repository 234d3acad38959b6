//! Golden fingerprints: the same island, bit for bit, on every OS, CPU and thread count
//! (docs/api.md, "Determinism").
//!
//! Generates a few small islands (every base algorithm, a couple of seeds, the river modes,
//! erosion on and off), hashes every output (heights, normals, biomes, splat, water, statistics,
//! preview, chunk and LOD meshes, colliders, scatter placement, scatter meshes) with FNV-1a 64
//! over little-endian bytes, and compares the lines with `tests/golden/fingerprints.txt`. Each
//! island is generated four times, on rayon pools of 1 and 2 threads, on the default pool, and
//! with the AVX2 kernels off (`island_core::set_force_scalar`), and all four must agree.
//!
//! A deliberate change of the generator's output (a new stage, a retuned default) changes the
//! fingerprints: re-bless with one command and commit the file with the change,
//!
//! ```text
//! ISLAND_BLESS=1 cargo test -p island_core --test golden
//! ```
//!
//! and say in the commit why the islands changed.

use island_core::lod::{node_mesh, select, LodLayout, LodView};
use island_core::paint::Masks;
use island_core::params::{CoastMask, IslandShape, RiverMode};
use island_core::scatter::{demo_layers, place_all, ScatterInput};
use island_core::scatter_meshes::MeshKind;
use island_core::sculpt::{stamp, SculptBrush, SculptLayer, SculptMode};
use island_core::{generate, Algorithm, ChunkMesh, Island, IslandParams};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

/// FNV-1a 64.
#[derive(Clone, Copy)]
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= x as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    fn u32(&mut self, v: u32) {
        self.bytes(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }
    fn f32(&mut self, v: f32) {
        self.u32(v.to_bits());
    }
    fn f32s(&mut self, v: &[f32]) {
        for &x in v {
            self.f32(x);
        }
    }
    fn vecs<const N: usize>(&mut self, v: &[[f32; N]]) {
        for a in v {
            self.f32s(a);
        }
    }
}

fn mesh(h: &mut Fnv, m: &ChunkMesh) {
    h.u64(m.positions.len() as u64);
    h.vecs(&m.positions);
    h.vecs(&m.normals);
    h.vecs(&m.uvs);
    for &i in &m.indices {
        h.u32(i);
    }
}

/// The cases: (name, parameters). Small maps so the test is quick in debug builds.
fn cases() -> Vec<(String, IslandParams)> {
    let base = |algorithm: &str, seed: u64| IslandParams {
        resolution: 257,
        seed,
        algorithm: Algorithm::from_name(algorithm).unwrap(),
        ..Default::default()
    };
    let mut v = Vec::new();
    for a in ["fbm", "value_noise", "diamond_square", "gaussian_islands"] {
        for seed in [1u64, 20260611] {
            v.push((format!("{a}/{seed}"), base(a, seed)));
        }
    }
    let mut p = base("fbm", 7);
    p.river.mode = RiverMode::Bezier;
    v.push(("fbm/7/bezier".into(), p));
    let mut p = base("fbm", 7);
    p.erosion.enabled = false;
    p.river.mode = RiverMode::Off;
    v.push(("fbm/7/no-erosion-no-rivers".into(), p));
    let mut p = base("fbm", 3);
    p.resolution = 129;
    p.world_size = 1500.0;
    v.push(("fbm/3/129".into(), p));
    // Every named outline, and a drawn mask with grey in it.
    for shape in [
        IslandShape::Round,
        IslandShape::Elongated,
        IslandShape::Crescent,
        IslandShape::Archipelago,
        IslandShape::Atoll,
        IslandShape::Volcanic,
    ] {
        let mut p = base("fbm", 5);
        p.resolution = 129;
        p.shape.shape = shape;
        v.push((format!("shape/{}/129", shape.name()), p));
    }
    let mut p = base("fbm", 5);
    p.resolution = 129;
    let img: Vec<u8> = (0..64 * 64)
        .map(|i| {
            let (x, z) = ((i % 64) as f32 - 31.5, (i / 64) as f32 - 31.5);
            let r = (x * x + z * z).sqrt();
            (255.0 * (1.0 - (r - 14.0) / 14.0).clamp(0.0, 1.0)) as u8
        })
        .collect();
    p.coast_mask = Some(Arc::new(CoastMask::from_luma8(64, 64, &img).unwrap()));
    v.push(("mask/grey/129".into(), p));
    // A sculpted island: every sculpt mode, applied by the brush's own dabs.
    let mut p = base("fbm", 5);
    p.resolution = 129;
    p.shape.shape = IslandShape::Round;
    let plain = generate(&p).unwrap();
    let mut layer = SculptLayer::new(129, p.world_size).unwrap();
    let mut shown = plain.field.clone();
    for (mode, at, strength) in [
        (SculptMode::Raise, [-120.0f32, 40.0f32], 6.0f32),
        (SculptMode::Lower, [100.0, -60.0], 4.0),
        (SculptMode::Smooth, [0.0, 0.0], 0.8),
        (SculptMode::Flatten, [60.0, 120.0], 1.0),
        (SculptMode::SketchSea, [-200.0, -150.0], 1.0),
        (SculptMode::SketchLand, [330.0, 0.0], 1.0),
    ] {
        let b = SculptBrush {
            mode,
            radius: 60.0,
            strength,
            hardness: 0.5,
            flatten_height: 25.0,
            masks: Masks::default(),
            preview_land_height: 2.5,
        };
        stamp(&mut layer, &mut shown, &b, at).unwrap();
    }
    p.sculpt = Some(Arc::new(layer));
    v.push(("sculpt/129".into(), p));
    v
}

/// Every output of one island, one hash each, as `key=hex` fields.
fn fingerprint(p: &IslandParams) -> String {
    let i: Island = generate(p).unwrap();
    let n = i.field.resolution;
    let mut parts: Vec<(&str, Fnv)> = Vec::new();
    let mut put = |k: &'static str, f: &dyn Fn(&mut Fnv)| {
        let mut h = Fnv::new();
        f(&mut h);
        parts.push((k, h));
    };
    put("heights", &|h| h.f32s(&i.field.heights));
    put("normals", &|h| h.vecs(&i.field.normals));
    put("biomes", &|h| h.bytes(&i.biomes));
    put("splat", &|h| i.splat.iter().for_each(|s| h.bytes(s)));
    put("water", &|h| {
        h.f32s(&i.water.level);
        h.bytes(&i.water.kind);
    });
    put("stats", &|h| {
        let s = &i.stats;
        h.f32s(&[s.land_fraction, s.min_height, s.max_height]);
        h.u32(s.river_count);
        h.f32(s.river_length_m);
        h.u32(s.lake_count);
        h.f32(s.lake_area_m2);
    });
    put("preview", &|h| {
        h.bytes(&island_core::preview::preview_rgb(&i).expect("preview"));
        h.bytes(&island_core::preview::preview_rgb_sized(&i, 100).unwrap());
    });
    put("chunks", &|h| {
        let cs = 64;
        let cps = (n - 1) / cs;
        for cz in 0..cps {
            for cx in 0..cps {
                mesh(h, &i.field.chunk_mesh(cx, cz, cs, false));
                let c = i.field.chunk_collider(cx, cz, cs);
                h.u64(c.width as u64);
                h.u64(c.depth as u64);
                h.f32s(&c.heights);
            }
        }
    });
    put("lod", &|h| {
        let layout = LodLayout::new(n, i.field.world_size, 16, 4).unwrap();
        let c = i.field.world_size * 0.5;
        let view = LodView {
            camera: [c * 0.6, 80.0, c * 1.3],
            lod_distance: c * 0.8,
            y_range: [i.stats.min_height, i.stats.max_height],
        };
        for leaf in select(&layout, &view) {
            h.u32(leaf.key.level);
            h.u32(leaf.key.x);
            h.u32(leaf.key.z);
            h.u32(leaf.stitch as u32);
            mesh(h, &node_mesh(&i.field, &layout, leaf, false));
        }
    });
    put("scatter", &|h| {
        let input = ScatterInput::from_island(&i);
        let layers = demo_layers();
        let placed = place_all(&input, &layers, &[], p.seed, p.chunk_size as usize).unwrap();
        for pl in &placed {
            h.f32s(&[pl.capacity, pl.keep]);
            h.u32(pl.capped as u32);
            for inst in pl.iter() {
                h.f32s(&inst.position);
                h.f32s(&[inst.yaw, inst.scale]);
                h.f32s(&inst.up);
                h.u32(inst.sample);
                h.f32s(&inst.transform_rows());
            }
        }
    });
    let mut s = String::new();
    for (k, h) in parts {
        write!(s, " {k}={:016x}", h.0).unwrap();
    }
    s
}

/// Meshes of the scatter models (no island involved).
fn scatter_meshes_line() -> String {
    let mut h = Fnv::new();
    let mut k = 0;
    while let Some(kind) = MeshKind::from_index(k) {
        let m = kind.mesh();
        h.vecs(&m.positions);
        h.vecs(&m.normals);
        h.vecs(&m.colors);
        m.indices.iter().for_each(|&x| h.u32(x));
        k += 1;
    }
    format!("scatter_meshes kinds={k} meshes={:016x}", h.0)
}

fn golden_path() -> PathBuf {
    manifest_dir().join("tests/golden/fingerprints.txt")
}

fn on_pool(threads: usize, p: &IslandParams) -> String {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(|| fingerprint(p))
}

#[test]
fn fnv_1a_64_reference_vectors() {
    let mut h = Fnv::new();
    h.bytes(b"");
    assert_eq!(h.0, 0xcbf2_9ce4_8422_2325);
    h.bytes(b"a");
    assert_eq!(h.0, 0xaf63_dc4c_8601_ec8c);
    let mut h = Fnv::new();
    h.bytes(b"foobar");
    assert_eq!(h.0, 0x8594_4171_f739_67e8);
}

/// The one test that generates: the variants run one after the other, since
/// `set_force_scalar` is process-wide.
#[test]
fn golden_fingerprints() {
    let mut lines = vec![
        "# Golden fingerprints of rust/core/tests/golden.rs (FNV-1a 64 of each output)."
            .to_string(),
        "# Regenerate: ISLAND_BLESS=1 cargo test -p island_core --test golden".to_string(),
    ];
    let mut mismatched_variants = Vec::new();
    for (name, p) in cases() {
        let main = fingerprint(&p);
        for (variant, got) in [
            ("1 thread", on_pool(1, &p)),
            ("2 threads", on_pool(2, &p)),
            ("scalar kernels", {
                island_core::set_force_scalar(true);
                let s = on_pool(2, &p);
                island_core::set_force_scalar(false);
                s
            }),
        ] {
            if got != main {
                mismatched_variants.push(format!(
                    "{name} ({variant}):\n  {got}\n  default pool:\n  {main}"
                ));
            }
        }
        lines.push(format!("{name}{main}"));
    }
    lines.push(scatter_meshes_line());
    assert!(
        mismatched_variants.is_empty(),
        "thread count or SIMD path changed the output:\n{}",
        mismatched_variants.join("\n")
    );
    let text = lines.join("\n") + "\n";
    let path = golden_path();
    if std::env::var_os("ISLAND_BLESS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
        eprintln!("blessed {}", path.display());
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; generate it with ISLAND_BLESS=1 cargo test -p island_core --test golden",
            path.display()
        )
    });
    let want = want.replace("\r\n", "\n");
    if want != text {
        let mut diff = String::new();
        let (w, g): (Vec<&str>, Vec<&str>) = (want.lines().collect(), text.lines().collect());
        for k in 0..w.len().max(g.len()) {
            let (a, b) = (
                w.get(k).copied().unwrap_or(""),
                g.get(k).copied().unwrap_or(""),
            );
            if a != b {
                writeln!(diff, "- {a}\n+ {b}").unwrap();
            }
        }
        panic!(
            "the islands differ from {} (- expected, + got):\n{diff}\nIf the change is deliberate, \
             re-bless with ISLAND_BLESS=1 cargo test -p island_core --test golden and commit the file.",
            path.display()
        );
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
