//! `island`: command-line front end of the procedural island generator.
//!
//! ```text
//! island generate [--config FILE.json] [--seed N] [--resolution N] [--algorithm NAME]
//!                 [--erosion on|off] [--rivers flow|bezier|off] [--shape NAME] [--mask FILE.png]
//!                 [--backend auto|gpu|cpu] --out DIR
//! island params
//! island world --seed N --rect X0,Z0,X1,Z1 --out DIR [--cell-size M] [--chance P]
//!              [--size-min M] [--size-max M] [--samples-per-metre S] [--map-size PX]
//!              [--island-resolution N]
//! ```
//!
//! Errors (bad parameters, unreadable config, unwritable output) are printed on stderr as one
//! clear line and the process exits with status 1; usage errors exit with clap's status 2.

mod images;
mod world;

// Freed map-sized blocks (4097² maps and larger) are kept for the next generation: see
// island_core::memory::BlockCache.
#[global_allocator]
static ALLOC: island_core::memory::BlockCache = island_core::memory::BlockCache;

use clap::{Parser, Subcommand, ValueEnum};
use island_core::params::{CoastMask, IslandShape, RiverMode};
use island_core::{Algorithm, Island, IslandParams};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "island",
    version,
    about = "Procedural island generator (heightmap, splat, biomes, preview)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Generate an island and write height.r32, height.png, splat.png, biomes.png, preview.png, water.png
    /// and island.json into the output directory.
    Generate(GenerateArgs),
    /// Print the default parameters as JSON (a valid --config file).
    Params,
    /// Lay out an endless island world over a rectangle: write islands.json (the world
    /// parameters and every island whose map overlaps the rectangle) and map.png (a top-down
    /// map of the rectangle with each island's shaded relief).
    World(world::WorldArgs),
}

#[derive(clap::Args, Debug)]
struct GenerateArgs {
    /// JSON parameter file; may be partial (missing fields take their defaults).
    #[arg(long, value_name = "FILE.json")]
    config: Option<PathBuf>,
    /// Seed (overrides the config).
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Samples per side, 2^n+1 from 33 to 8193 (overrides the config).
    #[arg(long, value_name = "N")]
    resolution: Option<u32>,
    /// Base height algorithm: fbm, value_noise, diamond_square or gaussian_islands (overrides the config).
    #[arg(long, value_name = "NAME")]
    algorithm: Option<String>,
    /// Landscape evolution (erosion): on or off (overrides the config).
    #[arg(long, value_enum, value_name = "on|off")]
    erosion: Option<OnOff>,
    /// Rivers: flow (along the drainage network), bezier (one canal through the centre) or off
    /// (overrides the config).
    #[arg(long, value_enum, value_name = "flow|bezier|off")]
    rivers: Option<Rivers>,
    /// Island outline: auto (the seed picks), round, elongated, crescent, archipelago, atoll or
    /// volcanic (overrides the config).
    #[arg(long, value_name = "NAME")]
    shape: Option<String>,
    /// Drawn outline replacing the generated one: a PNG (grey or colour; its luminance is used,
    /// white = land, black = sea, grey = a soft preference decided by the seed's noise), resampled to the map.
    #[arg(long, value_name = "FILE.png")]
    mask: Option<PathBuf>,
    /// Where to generate: auto, gpu or cpu.
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    backend: Backend,
    /// Output directory (created when missing).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum OnOff {
    On,
    Off,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Rivers {
    /// Rivers along the drainage network, carved into the terrain.
    Flow,
    /// One noisy Bézier canal through the island centre.
    Bezier,
    /// No rivers.
    Off,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Backend {
    /// A hardware GPU when available, else the CPU.
    Auto,
    /// The GPU (any adapter with compute, software ones included); the CPU with a warning when none works.
    Gpu,
    /// CPU (rayon).
    Cpu,
}

impl Backend {
    fn name(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Gpu => "gpu",
            Backend::Cpu => "cpu",
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Generate(args) => generate(&args),
        Command::Params => print_params(),
        Command::World(args) => world::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("island: error: {msg}");
            ExitCode::FAILURE
        }
    }
}

fn print_params() -> Result<(), String> {
    let s = serde_json::to_string_pretty(&IslandParams::default())
        .map_err(|e| format!("cannot serialise parameters: {e}"))?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{s}").map_err(|e| format!("cannot write to stdout: {e}"))
}

/// Parameters from the config file (if any) with the command-line flags applied on top.
fn load_params(args: &GenerateArgs) -> Result<IslandParams, String> {
    let mut chunk_size_given = false;
    let mut p = match &args.config {
        Some(path) => {
            let text = fs::read_to_string(path)
                .map_err(|e| format!("cannot read config `{}`: {e}", path.display()))?;
            let value: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| format!("config `{}` is not valid JSON: {e}", path.display()))?;
            if !value.is_object() {
                return Err(format!(
                    "config `{}` must be a JSON object of parameters",
                    path.display()
                ));
            }
            chunk_size_given = value.get("chunk_size").is_some();
            serde_json::from_value::<IslandParams>(value.clone()).map_err(|e| {
                let field = bad_field(&value)
                    .map(|f| format!(" `{f}`"))
                    .unwrap_or_default();
                format!(
                    "config `{}` has a bad parameter{field}: {e}",
                    path.display()
                )
            })?
        }
        None => IslandParams::default(),
    };
    if let Some(seed) = args.seed {
        p.seed = seed;
    }
    if let Some(name) = &args.algorithm {
        p.algorithm = Algorithm::from_name(name).ok_or_else(|| {
            let names: Vec<&str> = Algorithm::ALL.iter().map(|a| a.name()).collect();
            format!(
                "unknown algorithm `{name}` (expected one of: {})",
                names.join(", ")
            )
        })?;
    }
    if let Some(name) = &args.shape {
        p.shape.shape = IslandShape::from_name(name).ok_or_else(|| {
            let names: Vec<&str> = IslandShape::ALL.iter().map(|s| s.name()).collect();
            format!(
                "unknown shape `{name}` (expected one of: {})",
                names.join(", ")
            )
        })?;
    }
    if let Some(path) = &args.mask {
        p.coast_mask = Some(std::sync::Arc::new(read_mask(path)?));
    }
    if let Some(e) = args.erosion {
        p.erosion.enabled = e == OnOff::On;
    }
    if let Some(r) = args.rivers {
        p.river.mode = match r {
            Rivers::Flow => RiverMode::Flow,
            Rivers::Bezier => RiverMode::Bezier,
            Rivers::Off => RiverMode::Off,
        };
    }
    if let Some(r) = args.resolution {
        p.resolution = r;
        // The CLI writes whole maps, so the chunk size only matters for validation: when the
        // user picked a small resolution and no chunk size, shrink the default chunk to fit.
        if !chunk_size_given && r >= 17 && (r - 1).is_power_of_two() && (r - 1) % p.chunk_size != 0
        {
            p.chunk_size = (r - 1).clamp(16, 256);
        }
    }
    p.validate().map_err(|e| e.to_string())?;
    Ok(p)
}

/// A drawn outline from a PNG file: the luminance of each pixel (alpha ignored).
fn read_mask(path: &Path) -> Result<CoastMask, String> {
    let bad = |e: &dyn std::fmt::Display| format!("cannot read mask `{}`: {e}", path.display());
    let bytes = fs::read(path).map_err(|e| bad(&e))?;
    let mut dec = png::Decoder::new(std::io::Cursor::new(bytes));
    dec.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = dec.read_info().map_err(|e| bad(&e))?;
    let mut buf = vec![0u8; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).map_err(|e| bad(&e))?;
    let (w, h) = (info.width as usize, info.height as usize);
    let channels = info.color_type.samples();
    let luma: Vec<u8> = buf[..info.buffer_size()]
        .chunks_exact(info.line_size)
        .flat_map(|line| {
            line.chunks_exact(channels)
                .take(w)
                .map(|px| match px.len() {
                    1 | 2 => px[0],
                    // Rec. 709 luma, in integers.
                    _ => {
                        ((px[0] as u32 * 2126 + px[1] as u32 * 7152 + px[2] as u32 * 722) / 10000)
                            as u8
                    }
                })
        })
        .collect();
    CoastMask::from_luma8(w, h, &luma).map_err(|e| format!("mask `{}`: {e}", path.display()))
}

/// The dotted path of the first config field that fails to deserialise on its own.
fn bad_field(value: &serde_json::Value) -> Option<String> {
    fn find(
        v: &serde_json::Value,
        prefix: &str,
        wrap: &dyn Fn(serde_json::Value) -> serde_json::Value,
    ) -> Option<String> {
        let obj = v.as_object()?;
        for (k, child) in obj {
            let single = wrap(serde_json::json!({ k.as_str(): child }));
            if serde_json::from_value::<IslandParams>(single).is_err() {
                let path = format!("{prefix}{k}");
                // Descend into nested objects for a more precise path.
                let inner = |x: serde_json::Value| wrap(serde_json::json!({ k.as_str(): x }));
                return Some(find(child, &format!("{path}."), &inner).unwrap_or(path));
            }
        }
        None
    }
    find(value, "", &|x| x)
}

/// Where `auto` keeps its GPU-versus-CPU measurements: `$XDG_CACHE_HOME/procedural_island`,
/// else `~/.cache/procedural_island` (`%LOCALAPPDATA%\procedural_island` on Windows).
fn auto_store_dir() -> Option<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("XDG_CACHE_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".cache")))
        .or_else(|| var("LOCALAPPDATA"))
        .map(|d| d.join("procedural_island"))
}

/// Run the generator on the requested backend (`auto` uses the GPU only where it was measured
/// faster, see docs/gpu-backend.md; `gpu` falls back to the CPU with one warning when no adapter
/// works or the GPU fails).
fn run_backend(p: &IslandParams, backend: Backend) -> Result<Island, String> {
    island_gpu::auto::set_store_dir(auto_store_dir().as_deref());
    let b = match backend {
        Backend::Auto => island_gpu::Backend::Auto,
        Backend::Gpu => island_gpu::Backend::Gpu,
        Backend::Cpu => island_gpu::Backend::Cpu,
    };
    let (island, warning) = island_gpu::generate(p, b).map_err(|e| e.to_string())?;
    if let Some(w) = warning {
        eprintln!("island: warning: {w}");
    }
    Ok(island)
}

fn generate(args: &GenerateArgs) -> Result<(), String> {
    let p = load_params(args)?;
    prepare_out_dir(&args.out)?;
    let island = run_backend(&p, args.backend)?;
    let stats = island.stats.clone();
    let written = write_outputs(island, args.backend, &args.out)?;
    let s = &stats;
    println!(
        "island: {}x{} {} seed {} on {} in {:.1} ms: land {:.1}%, heights {:.2}..{:.2} m",
        p.resolution,
        p.resolution,
        p.algorithm.name(),
        p.seed,
        s.backend,
        s.total_ms,
        s.land_fraction * 100.0,
        s.min_height,
        s.max_height
    );
    println!(
        "  backend: {}",
        if s.backend_reason.is_empty() {
            &s.backend
        } else {
            &s.backend_reason
        }
    );
    println!(
        "  rivers: {} ({:.0} m), lakes: {} ({:.0} m²)",
        s.river_count, s.river_length_m, s.lake_count, s.lake_area_m2
    );
    for f in written {
        println!("  wrote {}", f.display());
    }
    Ok(())
}

fn prepare_out_dir(out: &Path) -> Result<(), String> {
    if out.exists() && !out.is_dir() {
        return Err(format!(
            "output path `{}` exists and is not a directory",
            out.display()
        ));
    }
    fs::create_dir_all(out)
        .map_err(|e| format!("cannot create output directory `{}`: {e}", out.display()))?;
    // Probe writability before spending time on generation.
    let probe = out.join(".island_write_probe");
    fs::write(&probe, b"")
        .map_err(|e| format!("output directory `{}` is not writable: {e}", out.display()))?;
    let _ = fs::remove_file(&probe);
    Ok(())
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), String> {
    fs::write(path, bytes).map_err(|e| format!("cannot write `{}`: {e}", path.display()))
}

/// The files `generate` writes, in the order it lists them.
const OUTPUT_FILES: [&str; 7] = [
    "height.r32",
    "height.png",
    "splat.png",
    "biomes.png",
    "preview.png",
    "water.png",
    "island.json",
];

/// Write every output file; returns their paths ([`OUTPUT_FILES`]). The island is consumed:
/// the preview, which reads the most maps, is written first, and each map is freed as soon as
/// the last file made from it is written, so that no more than the island itself is alive at
/// once (at 8193² the island alone is about 1.6 GiB, the normals half of it).
fn write_outputs(mut island: Island, backend: Backend, out: &Path) -> Result<Vec<PathBuf>, String> {
    let n = island.field.resolution;
    let put = |name: &str, bytes: &[u8]| write_file(&out.join(name), bytes);

    put("preview.png", &images::preview_png(&island)?)?;
    island.field.normals = Vec::new();
    put("water.png", &images::water_png(&island.water.kind, n)?)?;
    island.water = Default::default();
    put("splat.png", &images::splat_png(&island.splat, n)?)?;
    island.splat = Vec::new();
    let biome_count = island.params.biomes.biomes.len();
    put(
        "biomes.png",
        &images::biomes_png(&island.biomes, n, biome_count)?,
    )?;
    island.biomes = Vec::new();

    let heights = &island.field.heights;
    write_r32(&out.join("height.r32"), heights)?;
    let (hmin, hmax) = (island.stats.min_height, island.stats.max_height);
    put("height.png", &images::height_png(heights, n, hmin, hmax)?)?;

    let palette: Vec<serde_json::Value> = island
        .params
        .biomes
        .biomes
        .iter()
        .enumerate()
        .map(|(i, b)| serde_json::json!({ "index": i, "name": b.name, "color": images::biome_color(i) }))
        .collect();
    let doc = serde_json::json!({
        "params": island.params,
        "shape": shape_json(&island.params),
        "stats": island.stats,
        "backend_requested": backend.name(),
        "height_png": { "min": hmin, "max": hmax, "encoding": "16-bit grey, 0 = min, 65535 = max metres" },
        "height_r32": { "resolution": n, "encoding": "little-endian f32, row-major (z * resolution + x), metres, sea level 0" },
        "splat_png": { "encoding": "RGBA8 = (sand, grass, rock, snow), channels sum to 255" },
        "preview_png": { "size": island_core::preview::full_preview_size(n), "encoding": "RGB8 shaded relief; every sample, or every other sample above 8192 px" },
        "water": {
            "river_count": island.stats.river_count,
            "river_length_m": island.stats.river_length_m,
            "lake_count": island.stats.lake_count,
            "lake_area_m2": island.stats.lake_area_m2,
        },
        "erosion_ms": stage_ms(&island, "erosion"),
        "drainage_ms": stage_ms(&island, "drainage"),
        "water_png": { "encoding": "8-bit grey, one byte per sample: 0 dry, 1 river, 2 lake, 3 sea" },
        "biomes_png": { "encoding": "8-bit indexed, palette index = biome index", "palette": palette },
    });
    let json = serde_json::to_string_pretty(&doc)
        .map_err(|e| format!("cannot serialise island.json: {e}"))?;
    put("island.json", json.as_bytes())?;
    Ok(OUTPUT_FILES.iter().map(|f| out.join(f)).collect())
}

/// `height.r32`: the heights as little-endian f32, written a block at a time (no copy of the
/// whole map).
fn write_r32(path: &Path, heights: &[f32]) -> Result<(), String> {
    let err = |e: std::io::Error| format!("cannot write `{}`: {e}", path.display());
    let mut file = fs::File::create(path).map_err(err)?;
    let mut block = Vec::with_capacity(1 << 20);
    for chunk in heights.chunks(block.capacity() / 4) {
        block.clear();
        for h in chunk {
            block.extend_from_slice(&h.to_le_bytes());
        }
        file.write_all(&block).map_err(err)?;
    }
    Ok(())
}

/// The outline the island got: requested and resolved shape with its parameters, or the drawn
/// mask's size.
fn shape_json(p: &IslandParams) -> serde_json::Value {
    if let Some(m) = &p.coast_mask {
        let (w, h) = m.size();
        return serde_json::json!({ "requested": p.shape.shape.name(), "resolved": "coast_mask", "coast_mask": [w, h] });
    }
    let r = island_core::shape::resolve(p);
    serde_json::json!({
        "requested": p.shape.shape.name(),
        "resolved": r.shape.name(),
        "follows_gaussians": island_core::shape::gaussian_follows(p),
        "land_fraction": r.land_fraction,
        "aspect_ratio": r.aspect_ratio,
        "orientation": r.orientation,
        "bay_depth": r.bay_depth,
        "bay_direction": r.bay_direction,
        "island_count": r.island_count,
        "crater_lake": r.crater_lake,
    })
}

/// Milliseconds of stage `name` (0 when the backend did not report it).
fn stage_ms(island: &Island, name: &str) -> f64 {
    island
        .stats
        .stage_ms
        .iter()
        .find(|(s, _)| s == name)
        .map_or(0.0, |(_, ms)| *ms)
}
