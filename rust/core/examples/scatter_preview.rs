//! Top-down preview of the demo scatter layers on the default island: a hill-shaded relief with
//! one coloured dot per instance (see `MeshKind::preview_color`), written as a PNG.
//!
//! `cargo run --release -p island_core --example scatter_preview -- [out.png] [seed] [crop] [x z]`
//! (`crop` > 1 zooms by that factor on node-local `(x, z)`, default the centre.) Prints counts and
//! timings per layer.

use island_core::scatter::{demo_layers, place, place_all, ScatterInput};
use island_core::{generate, IslandParams};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let out = args
        .get(1)
        .cloned()
        .unwrap_or_else(|| "scatter_preview.png".into());
    let seed: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let crop: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1).max(1);
    let centre_x: f32 = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(0.0);
    let centre_z: f32 = args.get(5).and_then(|s| s.parse().ok()).unwrap_or(0.0);
    let params = IslandParams {
        seed,
        ..IslandParams::default()
    };
    let island = generate(&params).expect("island");
    let input = ScatterInput::from_island(&island);
    let f = &island.field;
    let n = f.resolution;

    // Relief: sea blue by depth, land green-brown-grey by height, lit from the north-west.
    let size = n; // output pixels per side
    let view = f.world_size / crop as f32; // metres shown
    let px = view / size as f32; // metres per pixel
    let to_world = |p: usize, c: f32| c - view * 0.5 + (p as f32 + 0.5) * px;
    let mut img = vec![0u8; size * size * 3];
    for j in 0..size {
        for i in 0..size {
            let (x, z) = (to_world(i, centre_x), to_world(j, centre_z));
            let h = f.height_at(x, z);
            let nrm = f.normal_at(x, z);
            let light = (nrm[0] * -0.5 + nrm[1] * 0.7 + nrm[2] * -0.5).max(0.0) / 0.99;
            let c = if h < 0.0 {
                let d = (-h / 18.0).min(1.0);
                [
                    30.0 + 40.0 * (1.0 - d),
                    80.0 + 80.0 * (1.0 - d),
                    150.0 + 60.0 * (1.0 - d),
                ]
            } else {
                let t = (h / 110.0).min(1.0);
                let sand = (1.0 - h / 3.5).clamp(0.0, 1.0);
                let base = [
                    110.0 + 90.0 * t + 100.0 * sand,
                    140.0 + 40.0 * t + 70.0 * sand,
                    90.0 + 110.0 * t + 60.0 * sand,
                ];
                base.map(|v: f32| v * (0.45 + 0.6 * light))
            };
            let k = (j * size + i) * 3;
            for (c_out, v) in img[k..k + 3].iter_mut().zip(c) {
                *c_out = v.clamp(0.0, 255.0) as u8;
            }
        }
    }

    let layers = demo_layers();
    let t_all = Instant::now();
    let placements: Vec<_> = layers
        .iter()
        .map(|l| {
            let t = Instant::now();
            let p = place(&input, l, None, seed, params.chunk_size as usize);
            (p, t.elapsed().as_secs_f64() * 1e3)
        })
        .collect();
    let total_ms = t_all.elapsed().as_secs_f64() * 1e3;
    let mut total = 0;
    for (l, (p, ms)) in layers.iter().zip(&placements) {
        println!(
            "{:<18} {:>7} instances  {:>6.2} ms  capacity {:>6.1}/100 m²  keep {:.3}{}",
            l.name,
            p.len(),
            ms,
            p.capacity,
            p.keep,
            if p.capped { " (capped)" } else { "" }
        );
        total += p.len();
    }
    println!("total {total} instances in {total_ms:.2} ms (one place per layer)");
    let t = Instant::now();
    let all = place_all(&input, &layers, &[], seed, params.chunk_size as usize).expect("place_all");
    println!(
        "place_all: {} instances in {:.2} ms",
        all.iter().map(|p| p.len()).sum::<usize>(),
        t.elapsed().as_secs_f64() * 1e3
    );

    // Dots: grass first (smallest), trees last; radius in pixels from the mesh footprint.
    let mut order: Vec<usize> = (0..layers.len()).collect();
    order.sort_by_key(|&k| match layers[k].mesh {
        island_core::scatter_meshes::MeshKind::Grass => 0,
        island_core::scatter_meshes::MeshKind::Rock => 1,
        _ => 2,
    });
    for k in order {
        let col = layers[k].mesh.preview_color();
        let radius_m = match layers[k].mesh {
            island_core::scatter_meshes::MeshKind::Grass => 0.4,
            island_core::scatter_meshes::MeshKind::Rock => 0.9,
            _ => 1.5,
        };
        let rp = (radius_m / px).max(0.5);
        for inst in placements[k].0.iter() {
            let ci = (inst.position[0] - centre_x + view * 0.5) / px;
            let cj = (inst.position[2] - centre_z + view * 0.5) / px;
            let (i0, i1) = ((ci - rp).floor() as i64, (ci + rp).ceil() as i64);
            let (j0, j1) = ((cj - rp).floor() as i64, (cj + rp).ceil() as i64);
            for j in j0..=j1 {
                for i in i0..=i1 {
                    if i < 0 || j < 0 || i >= size as i64 || j >= size as i64 {
                        continue;
                    }
                    let (dx, dy) = (i as f32 + 0.5 - ci, j as f32 + 0.5 - cj);
                    if dx * dx + dy * dy <= rp * rp {
                        let o = (j as usize * size + i as usize) * 3;
                        img[o..o + 3].copy_from_slice(&col);
                    }
                }
            }
        }
    }

    let file = std::fs::File::create(&out).expect("create png");
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), size as u32, size as u32);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.write_header()
        .expect("png header")
        .write_image_data(&img)
        .expect("png data");
    println!("wrote {out}");
}
