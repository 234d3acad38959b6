//! Shaded relief of the default island before and after erosion, with rivers and lakes.
//!
//! `cargo run --release -p island_core --example erosion_preview -- [seed] [out_dir]`
//! writes `erosion_before.png` and `erosion_after.png` (default directory `out/`).

use island_core::channels::{carve_rivers, CarveSettings};
use island_core::drainage::{drainage, Drainage, DrainageSettings, NONE};
use island_core::erosion::{erode, ErosionSettings};
use island_core::{generate, IslandParams};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seed: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let dir = args.get(2).cloned().unwrap_or_else(|| "out".into());
    std::fs::create_dir_all(&dir).unwrap();
    let p = IslandParams {
        seed,
        ..Default::default()
    };
    let t = Instant::now();
    let island = generate(&p).unwrap();
    println!("generate {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    let n = p.resolution as usize;
    let sp = p.spacing();
    let ds = DrainageSettings::default();

    let before = island.field.heights.clone();
    let d0 = drainage(&before, n, sp, 0.0, &ds);
    write(&format!("{dir}/erosion_before.png"), &before, &d0, n, sp);

    let mut h = before.clone();
    let t = Instant::now();
    let mut es = ErosionSettings::default();
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<f32>().ok());
    if let Some(v) = env("EROSION_K") {
        es.erodibility = v;
    }
    if let Some(v) = env("EROSION_G") {
        es.deposition = v;
    }
    if let Some(v) = env("EROSION_AMOUNT") {
        es.amount = v;
    }
    if let Some(v) = env("EROSION_STEPS") {
        es.steps = v as u32;
    }
    if let Some(v) = env("EROSION_RES") {
        es.resolution = v as u32;
    }
    if let Some(v) = env("EROSION_SMOOTHING") {
        es.smoothing = v;
    }
    if let Some(v) = env("EROSION_TALUS") {
        es.talus_angle = v;
    }
    if let Some(v) = env("EROSION_CHANNEL_AREA") {
        es.channel_area = v;
    }
    if let Some(v) = env("EROSION_M") {
        es.m_exponent = v;
    }
    let rep = erode(&mut h, n, sp, &es, seed);
    let t_erode = t.elapsed();
    let t = Instant::now();
    let d1 = drainage(&h, n, sp, 0.0, &ds);
    let t_drain = t.elapsed();
    let t = Instant::now();
    let carve = carve_rivers(&mut h, &d1, &CarveSettings::default());
    let t_carve = t.elapsed();
    println!(
        "erode {:.1} ms, drainage {:.1} ms, carve {:.1} ms; {rep:?}; {carve:?}",
        t_erode.as_secs_f64() * 1e3,
        t_drain.as_secs_f64() * 1e3,
        t_carve.as_secs_f64() * 1e3
    );
    println!(
        "lakes before {} after {}, river samples before {} after {}",
        d0.lakes.len(),
        d1.lakes.len(),
        d0.rivers.len(),
        d1.rivers.len()
    );
    let peak = |v: &[f32]| v.iter().fold(f32::MIN, |a, &b| a.max(b));
    let land = |v: &[f32]| v.iter().filter(|&&x| x > 0.0).count();
    println!(
        "peak {:.1} -> {:.1} m, land samples {} -> {}",
        peak(&before),
        peak(&h),
        land(&before),
        land(&h)
    );
    write(&format!("{dir}/erosion_after.png"), &h, &d1, n, sp);
    // A 3× close-up of a 256² window (`PREVIEW_CROP=x0,z0`, default the map centre).
    let (x0, z0) = std::env::var("PREVIEW_CROP")
        .ok()
        .and_then(|v| {
            let (a, b) = v.split_once(',')?;
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .unwrap_or((n / 2 - 128, n / 2 - 128));
    crop(
        &format!("{dir}/erosion_after.png"),
        &format!("{dir}/erosion_after_zoom.png"),
        n,
        x0,
        z0,
    );
}

fn crop(src: &str, dst: &str, n: usize, x0: usize, z0: usize) {
    let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(src).unwrap()));
    let mut r = dec.read_info().unwrap();
    let mut buf = vec![0u8; r.output_buffer_size()];
    r.next_frame(&mut buf).unwrap();
    let (w, k) = (256usize, 3usize);
    let mut out = vec![0u8; w * k * w * k * 3];
    for z in 0..w * k {
        for x in 0..w * k {
            let (sx, sz) = ((x0 + x / k).min(n - 1), (z0 + z / k).min(n - 1));
            for c in 0..3 {
                out[(z * w * k + x) * 3 + c] = buf[(sz * n + sx) * 3 + c];
            }
        }
    }
    let file = std::fs::File::create(dst).unwrap();
    let mut enc = png::Encoder::new(
        std::io::BufWriter::new(file),
        (w * k) as u32,
        (w * k) as u32,
    );
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.write_header().unwrap().write_image_data(&out).unwrap();
    println!("wrote {dst}");
}

fn write(path: &str, h: &[f32], d: &Drainage, n: usize, sp: f32) {
    let mut rgb = vec![0u8; n * n * 3];
    let mut river = vec![0.0f32; n * n];
    for r in &d.rivers {
        river[r.index as usize] = r.width;
    }
    for z in 0..n {
        for x in 0..n {
            let i = z * n + x;
            let at = |a: usize, b: usize| h[b.min(n - 1) * n + a.min(n - 1)];
            let gx = (at(x + 1, z) - at(x.saturating_sub(1), z)) / (2.0 * sp);
            let gz = (at(x, z + 1) - at(x, z.saturating_sub(1))) / (2.0 * sp);
            // Light from the north-west, 45° up.
            let nl = (1.0 + gx + gz) / ((1.0 + gx * gx + gz * gz).sqrt() * 3f32.sqrt());
            let shade = (0.35 + 0.75 * nl.max(0.0)).min(1.3);
            let v = h[i];
            let mut c = if v <= 0.0 {
                let t = (-v / 18.0).min(1.0);
                [
                    40.0 + 40.0 * (1.0 - t),
                    90.0 + 60.0 * (1.0 - t),
                    160.0 + 40.0 * (1.0 - t),
                ]
            } else {
                let t = (v / 110.0).min(1.0);
                if t < 0.5 {
                    let u = t / 0.5;
                    [90.0 + 80.0 * u, 140.0 + 10.0 * u, 70.0 + 20.0 * u]
                } else {
                    let u = (t - 0.5) / 0.5;
                    [170.0 + 70.0 * u, 150.0 + 90.0 * u, 90.0 + 150.0 * u]
                }
            };
            if v > 0.0 {
                for k in &mut c {
                    *k *= shade;
                }
            }
            if d.lake_id[i] != NONE {
                c = [60.0, 120.0, 210.0];
            } else if river[i] > 0.0 {
                c = [30.0, 90.0, 230.0];
            }
            for k in 0..3 {
                rgb[i * 3 + k] = c[k].clamp(0.0, 255.0) as u8;
            }
        }
    }
    let file = std::fs::File::create(path).unwrap();
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), n as u32, n as u32);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.write_header().unwrap().write_image_data(&rgb).unwrap();
    println!("wrote {path}");
}
