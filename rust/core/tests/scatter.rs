//! Scatter placement on the default island: surface contact, masks, spacing across chunk borders,
//! density, determinism, seeds, erase/restore, incremental rebuilds; built-in meshes.

use island_core::paint::{range_weight, Rect};
use island_core::scatter::*;
use island_core::scatter_meshes::{MeshKind, ScatterMesh};
use island_core::{generate, Island, IslandParams};
use std::collections::HashMap;
use std::sync::OnceLock;

mod common;
use common::on_threads;

fn island() -> &'static Island {
    static I: OnceLock<Island> = OnceLock::new();
    I.get_or_init(|| generate(&IslandParams::default()).expect("default island"))
}

fn input() -> ScatterInput<'static> {
    ScatterInput::from_island(island())
}

const CHUNK: usize = 64;

fn all(p: &Placement) -> Vec<Instance> {
    p.iter().copied().collect()
}

/// Bit pattern of an instance, for exact comparisons.
fn bits(i: &Instance) -> [u32; 10] {
    [
        i.position[0].to_bits(),
        i.position[1].to_bits(),
        i.position[2].to_bits(),
        i.yaw.to_bits(),
        i.scale.to_bits(),
        i.up[0].to_bits(),
        i.up[1].to_bits(),
        i.up[2].to_bits(),
        i.sample,
        0,
    ]
}

fn placement_bits(p: &Placement) -> Vec<Vec<[u32; 10]>> {
    p.chunks
        .iter()
        .map(|c| c.iter().map(bits).collect())
        .collect()
}

/// A broad test layer: moderate density on gentle land, not capped.
fn broad_layer() -> ScatterLayer {
    ScatterLayer {
        name: "broad".into(),
        density: 6.0,
        min_distance: 2.0,
        min_height: 1.0,
        max_height: 40.0,
        height_fade: 3.0,
        min_slope_degrees: 0.0,
        max_slope_degrees: 30.0,
        slope_fade: 5.0,
        sink: 0.15,
        ..ScatterLayer::default()
    }
}

fn layers() -> Vec<ScatterLayer> {
    let mut v = demo_layers();
    v.push(broad_layer());
    // A hard slope limit without fade: instances near the limit are where a mask read at another
    // surface than the node's `get_normal_at` let some through (reported: 10 of 1755 at 22-26°).
    v.push(ScatterLayer {
        name: "gentle".into(),
        max_slope_degrees: 20.0,
        slope_fade: 0.0,
        ..broad_layer()
    });
    v
}

#[test]
fn instances_lie_on_the_rendered_surface() {
    let f = &island().field;
    for layer in layers() {
        let p = place(&input(), &layer, None, 7, CHUNK);
        assert!(!p.is_empty(), "{} placed nothing", layer.name);
        let mut exact = 0;
        for i in p.iter() {
            let want = f.height_at(i.position[0], i.position[2]) - layer.sink;
            assert!(
                (i.position[1] - want).abs() <= 0.01,
                "{}: y {} vs {want}",
                layer.name,
                i.position[1]
            );
            exact += (i.position[1] == want) as usize;
        }
        assert_eq!(
            exact,
            p.len(),
            "{}: y is height_at - sink exactly",
            layer.name
        );
    }
}

#[test]
fn masks_are_respected() {
    let isl = island();
    let f = &isl.field;
    for layer in layers() {
        let p = place(&input(), &layer, None, 3, CHUNK);
        for i in p.iter() {
            let (x, z) = (i.position[0], i.position[2]);
            let h = f.height_at(x, z);
            let s = i.sample as usize;
            // The slope mask reads the smooth normal at the point, the one the node's
            // `get_normal_at` answers with (not the nearest sample's).
            let slope = f.normal_at(x, z)[1].clamp(-1.0, 1.0).acos().to_degrees();
            assert!(
                h >= layer.min_height && h <= layer.max_height,
                "{}: height {h}",
                layer.name
            );
            // 0.01° tolerance: the placement's portable acos differs from libm by < 1e-6°.
            assert!(
                slope >= layer.min_slope_degrees - 0.01 && slope <= layer.max_slope_degrees + 0.01,
                "{}: slope {slope}",
                layer.name
            );
            assert_eq!(s, f.nearest_index(x, z));
            assert!(
                layer.biome_mask & (1 << isl.biomes[s]) != 0,
                "{}: biome {}",
                layer.name,
                isl.biomes[s]
            );
            if let Some(m) = layer.splat {
                let w = isl.splat[s][m.layer] as f32 / 255.0;
                assert!(w >= m.min_weight, "{}: splat weight {w}", layer.name);
            }
            let l = (i.up[0].powi(2) + i.up[1].powi(2) + i.up[2].powi(2)).sqrt();
            assert!((l - 1.0).abs() < 1e-5 && i.up[1] > 0.0);
            assert!(i.scale >= layer.scale_min && i.scale <= layer.scale_max);
        }
    }
}

/// Pairs closer than `r` (horizontal), found through a hash grid of cell `r`; also counts the
/// pairs closer than `2r` that straddle a chunk border (to show those were checked).
fn close_pairs(p: &Placement, r: f32) -> (usize, usize) {
    let pts: Vec<(usize, [f64; 2])> = p
        .chunks
        .iter()
        .enumerate()
        .flat_map(|(c, v)| {
            v.iter()
                .map(move |i| (c, [i.position[0] as f64, i.position[2] as f64]))
        })
        .collect();
    let cell = 2.0 * r as f64;
    let key = |q: [f64; 2]| ((q[0] / cell).floor() as i64, (q[1] / cell).floor() as i64);
    let mut grid: HashMap<(i64, i64), Vec<usize>> = HashMap::new();
    for (k, (_, q)) in pts.iter().enumerate() {
        grid.entry(key(*q)).or_default().push(k);
    }
    let (mut bad, mut across) = (0, 0);
    for (k, (ck, q)) in pts.iter().enumerate() {
        let (gx, gz) = key(*q);
        for dz in -1..=1 {
            for dx in -1..=1 {
                for &o in grid.get(&(gx + dx, gz + dz)).into_iter().flatten() {
                    if o <= k {
                        continue;
                    }
                    let (co, qo) = pts[o];
                    let d = ((q[0] - qo[0]).powi(2) + (q[1] - qo[1]).powi(2)).sqrt();
                    if d < r as f64 {
                        bad += 1;
                    }
                    if d < 2.0 * r as f64 && co != *ck {
                        across += 1;
                    }
                }
            }
        }
    }
    (bad, across)
}

#[test]
fn min_distance_holds_across_chunk_borders() {
    for layer in layers() {
        for chunk in [16, CHUNK] {
            let p = place(&input(), &layer, None, 11, chunk);
            let (bad, across) = close_pairs(&p, layer.min_distance);
            assert_eq!(
                bad, 0,
                "{} (chunk {chunk}): pairs closer than min_distance",
                layer.name
            );
            if p.len() > 500 {
                assert!(
                    across > 0,
                    "{}: no neighbours across chunk borders",
                    layer.name
                );
            }
        }
    }
    // Dense, capped layer: the pattern itself.
    let dense = ScatterLayer {
        density: 1000.0,
        min_distance: 1.0,
        min_height: -1000.0,
        max_slope_degrees: 90.0,
        ..ScatterLayer::default()
    };
    let p = place(&input(), &dense, None, 5, 32);
    assert!(p.capped && p.len() > 500_000);
    assert_eq!(close_pairs(&p, 1.0).0, 0);
}

/// Weighted eligible area (m²) of a layer, computed from the samples independently of the
/// placement code (libm acos; sample heights, normals, biomes and splat).
fn eligible_area(layer: &ScatterLayer) -> f64 {
    let isl = island();
    let f = &isl.field;
    let s = f.spacing() as f64;
    let n = f.resolution;
    let mut sum = 0.0f64;
    for i in 0..n * n {
        let h = f.heights[i];
        let slope = f.normals[i][1].clamp(-1.0, 1.0).acos().to_degrees();
        // Slope: the brush's fade, except none at an open limit (0° or 90°).
        let (lo, hi, fd) = (
            layer.min_slope_degrees,
            layer.max_slope_degrees,
            layer.slope_fade,
        );
        let slope_w = if slope < lo || slope > hi {
            0.0
        } else if fd <= 0.0 {
            1.0
        } else {
            let ss = |a: f32, b: f32, x: f32| {
                let t = ((x - a) / (b - a)).clamp(0.0, 1.0);
                t * t * (3.0 - 2.0 * t)
            };
            let a = if lo <= 0.0 {
                1.0
            } else {
                ss(lo, lo + fd, slope)
            };
            let b = if hi >= 90.0 {
                1.0
            } else {
                1.0 - ss(hi - fd, hi, slope)
            };
            a * b
        };
        let mut w =
            range_weight(h, layer.min_height, layer.max_height, layer.height_fade) * slope_w;
        if layer.biome_mask & (1 << isl.biomes[i]) == 0 {
            w = 0.0;
        }
        if let Some(m) = layer.splat {
            let v = isl.splat[i][m.layer] as f32 / 255.0;
            w *= if v < m.min_weight {
                0.0
            } else if m.fade <= 0.0 {
                1.0
            } else {
                let t = ((v - m.min_weight) / m.fade).clamp(0.0, 1.0);
                t * t * (3.0 - 2.0 * t)
            };
        }
        // Border samples stand for half (edges) or a quarter (corners) of a cell.
        let (x, z) = (i % n, i / n);
        let ex = if x == 0 || x == n - 1 { 0.5 } else { 1.0 };
        let ez = if z == 0 || z == n - 1 { 0.5 } else { 1.0 };
        sum += w as f64 * ex * ez;
    }
    sum * s * s
}

#[test]
fn count_matches_density_on_eligible_ground() {
    for layer in layers() {
        let p = place(&input(), &layer, None, 1, CHUNK);
        assert!(!p.capped, "{} is capped", layer.name);
        let want = layer.density as f64 / 100.0 * eligible_area(&layer);
        let got = p.len() as f64;
        let ratio = got / want;
        println!(
            "{:<18} {:>7} instances, expected {:>9.1} ({ratio:.3})",
            layer.name,
            p.len(),
            want
        );
        assert!(
            (0.8..=1.2).contains(&ratio),
            "{}: {got} instances, expected {want:.0}",
            layer.name
        );
    }
}

#[test]
fn density_above_capacity_is_capped() {
    let layer = ScatterLayer {
        density: 500.0,
        ..broad_layer()
    };
    let cap = layer.capacity();
    // ≈ 0.68 / r² per m²: 17 per 100 m² at r = 2.
    assert!((14.0..20.0).contains(&cap), "capacity {cap}");
    let p = place(&input(), &layer, None, 1, CHUNK);
    assert!(p.capped && p.keep == 1.0 && p.capacity == cap);
    let want = cap as f64 / 100.0 * eligible_area(&layer);
    let ratio = p.len() as f64 / want;
    assert!((0.8..=1.2).contains(&ratio), "capped count ratio {ratio}");
}

#[test]
fn identical_for_any_thread_count_and_chunk_size() {
    for layer in layers() {
        let runs: Vec<Vec<Vec<[u32; 10]>>> = [1, 2, 4]
            .iter()
            .map(|&t| {
                on_threads(t, || {
                    placement_bits(&place(&input(), &layer, None, 99, CHUNK))
                })
            })
            .collect();
        assert_eq!(runs[0], runs[1], "{}: 1 vs 2 threads", layer.name);
        assert_eq!(runs[0], runs[2], "{}: 1 vs 4 threads", layer.name);
        // Other chunkings hold the same instances.
        let sorted = |p: &Placement| {
            let mut v: Vec<[u32; 10]> = p.iter().map(bits).collect();
            v.sort_unstable();
            v
        };
        let a = sorted(&place(&input(), &layer, None, 99, CHUNK));
        for chunk in [16, 100, 1024] {
            assert_eq!(a, sorted(&place(&input(), &layer, None, 99, chunk)));
        }
    }
}

#[test]
fn place_all_equals_one_place_per_layer() {
    let layers = layers();
    let erase = {
        let mut e = EraseMask::new(island().field.resolution);
        e.paint_disc(&island().field, [50.0, -40.0], 90.0, true);
        e
    };
    let masks: Vec<Option<&EraseMask>> = (0..layers.len())
        .map(|k| (k % 2 == 0).then_some(&erase))
        .collect();
    let all = place_all(&input(), &layers, &masks, 21, CHUNK).unwrap();
    for ((l, p), m) in layers.iter().zip(&all).zip(&masks) {
        let one = place(&input(), l, *m, 21, CHUNK);
        assert_eq!(placement_bits(p), placement_bits(&one), "{}", l.name);
        assert_eq!(
            (p.capacity, p.keep, p.capped),
            (one.capacity, one.keep, one.capped)
        );
    }
    assert!(place_all(&input(), &layers, &masks[..1], 21, CHUNK).is_err());
}

#[test]
fn a_new_seed_moves_instances() {
    for layer in layers() {
        let a = all(&place(&input(), &layer, None, 1, CHUNK));
        let b = all(&place(&input(), &layer, None, 2, CHUNK));
        let pa: std::collections::HashSet<[u32; 2]> = a
            .iter()
            .map(|i| [i.position[0].to_bits(), i.position[2].to_bits()])
            .collect();
        let same = b
            .iter()
            .filter(|i| pa.contains(&[i.position[0].to_bits(), i.position[2].to_bits()]))
            .count();
        assert!(
            same * 100 <= b.len(),
            "{}: {same} of {} kept their place",
            layer.name,
            b.len()
        );
        // Roughly the same number, since the masks did not change.
        let ratio = b.len() as f64 / a.len() as f64;
        assert!((0.8..1.25).contains(&ratio), "{}: {ratio}", layer.name);
        // The salt moves them too.
        let salted = ScatterLayer {
            seed_salt: layer.seed_salt ^ 0xabc,
            ..layer.clone()
        };
        let c = all(&place(&input(), &salted, None, 1, CHUNK));
        let same = c
            .iter()
            .filter(|i| pa.contains(&[i.position[0].to_bits(), i.position[2].to_bits()]))
            .count();
        assert!(same * 100 <= c.len().max(1), "{}: salt", layer.name);
    }
}

#[test]
fn erase_removes_exactly_the_erased_instances_and_clearing_restores_them() {
    let f = &island().field;
    let n = f.resolution;
    for layer in layers() {
        let full = place(&input(), &layer, None, 4, CHUNK);
        let mut erase = EraseMask::new(n);
        // A few brush dabs and a rectangle, some across chunk borders.
        let mut changed = Rect::default();
        for (c, r) in [
            ([0.0f32, 0.0f32], 60.0f32),
            ([-128.0, 64.0], 25.0),
            ([150.0, -200.0], 80.0),
        ] {
            changed = changed.union(&erase.paint_disc(f, c, r, true));
        }
        changed = changed.union(&erase.set_rect(
            Rect {
                x0: 300,
                z0: 600,
                w: 90,
                h: 40,
            },
            true,
        ));
        // Restore a hole inside the first dab.
        changed = changed.union(&erase.paint_disc(f, [10.0, 10.0], 12.0, false));
        assert!(erase.count() > 10_000);
        let erased = place(&input(), &layer, Some(&erase), 4, CHUNK);
        let want: Vec<Vec<[u32; 10]>> = full
            .chunks
            .iter()
            .map(|c| {
                c.iter()
                    .filter(|i| !erase.is_erased(i.sample as usize))
                    .map(bits)
                    .collect()
            })
            .collect();
        assert_eq!(placement_bits(&erased), want, "{}", layer.name);
        assert!(erased.len() < full.len(), "{}: nothing erased", layer.name);

        // Incremental: rebuilding only the chunks the rectangle touches gives the fresh result.
        let mut inc = full.clone();
        let chunks = chunks_to_rebuild(changed, n, CHUNK);
        assert!(!chunks.is_empty() && chunks.len() < full.chunks.len());
        inc.rebuild_chunks(&input(), &layer, Some(&erase), 4, &chunks)
            .unwrap();
        assert_eq!(
            placement_bits(&inc),
            placement_bits(&erased),
            "{}",
            layer.name
        );

        // Clearing restores the very same instances.
        let mut cleared = erase.clone();
        cleared.clear();
        assert!(cleared.is_empty());
        let back = place(&input(), &layer, Some(&cleared), 4, CHUNK);
        assert_eq!(
            placement_bits(&back),
            placement_bits(&full),
            "{}",
            layer.name
        );
        inc.rebuild_chunks(&input(), &layer, Some(&cleared), 4, &chunks)
            .unwrap();
        assert_eq!(
            placement_bits(&inc),
            placement_bits(&full),
            "{}",
            layer.name
        );

        // Round trip through the saved words.
        let copy = EraseMask::from_words(n, erase.words().to_vec()).unwrap();
        assert_eq!(copy, erase);
    }
}

#[test]
fn chunks_to_rebuild_covers_the_rect_plus_two_samples() {
    let n = 1025;
    // One sample in the middle of chunk (2, 3).
    let one = Rect {
        x0: 2 * 64 + 30,
        z0: 3 * 64 + 30,
        w: 1,
        h: 1,
    };
    assert_eq!(chunks_to_rebuild(one, n, 64), vec![(2, 3)]);
    // Two samples from a border: both neighbours.
    let near = Rect {
        x0: 2 * 64 + 1,
        z0: 3 * 64 + 30,
        w: 1,
        h: 1,
    };
    assert_eq!(chunks_to_rebuild(near, n, 64), vec![(1, 3), (2, 3)]);
    let corner = Rect {
        x0: 1023,
        z0: 1024,
        w: 2,
        h: 1,
    };
    assert_eq!(chunks_to_rebuild(corner, n, 64), vec![(15, 15)]);
    assert!(chunks_to_rebuild(Rect::default(), n, 64).is_empty());
    // A height edit: rebuilding the reported chunks equals a fresh placement.
    let isl = island();
    let layer = broad_layer();
    let before = place(&input(), &layer, None, 8, 64);
    let mut edited = isl.field.heights.clone();
    // Around an instance of the placement (sample = (world + size/2) / spacing).
    let placed = all(&before);
    let inst = placed[placed.len() / 2];
    let (half, sp) = (
        isl.field.world_size * 0.5,
        isl.field.world_size / (n - 1) as f32,
    );
    let (cx, cz) = (
        ((inst.position[0] + half) / sp) as usize,
        ((inst.position[2] + half) / sp) as usize,
    );
    let rect = Rect {
        x0: cx.clamp(35, n - 36) - 35,
        z0: cz.clamp(15, n - 16) - 15,
        w: 70,
        h: 30,
    };
    for z in rect.z0..rect.z0 + rect.h {
        for x in rect.x0..rect.x0 + rect.w {
            edited[z * n + x] += 6.0;
        }
    }
    let field2 = island_core::Heightfield::new(n, isl.field.world_size, edited);
    let input2 = ScatterInput {
        field: &field2,
        ..input()
    };
    let fresh = place(&input2, &layer, None, 8, 64);
    let mut inc = before.clone();
    inc.rebuild_chunks(&input2, &layer, None, 8, &chunks_to_rebuild(rect, n, 64))
        .unwrap();
    assert_eq!(placement_bits(&inc), placement_bits(&fresh));
    assert_ne!(placement_bits(&before), placement_bits(&fresh));
}

#[test]
fn wetness_mask_uses_the_supplied_map() {
    let isl = island();
    let n = isl.field.resolution;
    // "Wetness" = sample column / n: keep the western half only.
    let wet: Vec<f32> = (0..n * n).map(|i| (i % n) as f32 / n as f32).collect();
    let layer = ScatterLayer {
        wetness: Some(WetnessMask {
            min: 0.0,
            max: 0.5,
            fade: 0.0,
        }),
        ..broad_layer()
    };
    let with = place(&input().with_wetness(&wet), &layer, None, 1, CHUNK);
    let without = place(&input(), &layer, None, 1, CHUNK);
    assert!(!with.is_empty() && with.len() < without.len());
    for i in with.iter() {
        assert!(wet[i.sample as usize] <= 0.5);
    }
}

#[test]
fn layers_round_trip_through_json_and_chunk_buffers_match() {
    for l in demo_layers() {
        let j = serde_json::to_string(&l).unwrap();
        let back: ScatterLayer = serde_json::from_str(&j).unwrap();
        assert_eq!(back, l);
    }
    // Missing fields take their defaults.
    let partial: ScatterLayer =
        serde_json::from_str(r#"{"density": 3.0, "mesh": "rock"}"#).unwrap();
    assert_eq!(partial.density, 3.0);
    assert_eq!(partial.mesh, MeshKind::Rock);
    assert_eq!(partial.min_distance, DEFAULT_MIN_DISTANCE);
    let p = place(&input(), &broad_layer(), None, 1, CHUNK);
    let (cx, cz) = (0..p.chunks_per_side * p.chunks_per_side)
        .map(|i| (i % p.chunks_per_side, i / p.chunks_per_side))
        .find(|&(x, z)| !p.chunk(x, z).is_empty())
        .unwrap();
    let buf = p.chunk_buffer(cx, cz);
    assert_eq!(buf.len(), 12 * p.chunk(cx, cz).len());
    assert_eq!(&buf[..12], &p.chunk(cx, cz)[0].transform_rows());
}

#[test]
fn validation_rejects_bad_layers_and_inputs() {
    assert!(ScatterLayer::default().validate().is_ok());
    for l in demo_layers() {
        l.validate().unwrap();
    }
    let bad = [
        ScatterLayer {
            density: -1.0,
            ..Default::default()
        },
        ScatterLayer {
            min_distance: 0.0,
            ..Default::default()
        },
        ScatterLayer {
            min_height: 5.0,
            max_height: 1.0,
            ..Default::default()
        },
        ScatterLayer {
            max_slope_degrees: 95.0,
            ..Default::default()
        },
        ScatterLayer {
            scale_min: 2.0,
            scale_max: 1.0,
            ..Default::default()
        },
        ScatterLayer {
            align_to_normal: 1.5,
            ..Default::default()
        },
        ScatterLayer {
            sink: f32::NAN,
            ..Default::default()
        },
        ScatterLayer {
            splat: Some(SplatMask {
                layer: 9,
                min_weight: 0.5,
                fade: 0.0,
            }),
            ..Default::default()
        },
    ];
    for l in bad {
        assert!(l.validate().is_err(), "{l:?}");
        assert!(try_place(&input(), &l, None, 1, CHUNK).is_err());
    }
    let short = vec![0u8; 10];
    let inp = ScatterInput {
        biomes: &short,
        ..input()
    };
    assert!(try_place(&inp, &ScatterLayer::default(), None, 1, CHUNK).is_err());
    let wrong = EraseMask::new(33);
    assert!(try_place(&input(), &ScatterLayer::default(), Some(&wrong), 1, CHUNK).is_err());
}

#[test]
fn portable_math_matches_libm() {
    for k in 0..=1000 {
        let y = k as f32 / 1000.0;
        let d = slope_degrees(y) - y.acos().to_degrees();
        assert!(d.abs() < 1e-4, "slope {y}: {d}");
        let t = k as f32 / 1001.0;
        let (s, c) = sin_cos_turns(t);
        let a = t as f64 * std::f64::consts::TAU;
        assert!((s as f64 - a.sin()).abs() < 2e-6 && (c as f64 - a.cos()).abs() < 2e-6);
    }
}

#[test]
fn instance_basis_is_scaled_orthonormal_and_right_handed() {
    let layer = ScatterLayer {
        align_to_normal: 1.0,
        scale_min: 0.5,
        scale_max: 2.0,
        ..demo_layers()[2].clone()
    };
    let p = place(&input(), &layer, None, 3, CHUNK);
    assert!(p.len() > 100);
    let dot = |a: [f32; 3], b: [f32; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    for i in p.iter().take(2000) {
        let [x, y, z] = i.basis();
        let k2 = i.scale * i.scale;
        for v in [x, y, z] {
            assert!((dot(v, v) - k2).abs() < 1e-4 * k2.max(1.0));
        }
        assert!(dot(x, y).abs() < 1e-4 * k2 && dot(y, z).abs() < 1e-4 * k2);
        let c = [
            x[1] * y[2] - x[2] * y[1],
            x[2] * y[0] - x[0] * y[2],
            x[0] * y[1] - x[1] * y[0],
        ];
        assert!(dot(c, z) > 0.0, "right-handed");
        let up = [y[0] / i.scale, y[1] / i.scale, y[2] / i.scale];
        assert!(dot(up, i.up) > 0.9999);
        // Fully aligned: up is the terrain normal.
        let nrm = island().field.normal_at(i.position[0], i.position[2]);
        assert!(dot(nrm, i.up) > 0.9999);
        let t = i.transform_rows();
        assert_eq!([t[0], t[4], t[8]], x);
        assert_eq!([t[3], t[7], t[11]], i.position);
    }
}

// ---- meshes ----

fn check_mesh(kind: MeshKind, m: &ScatterMesh) {
    let name = kind.name();
    let nv = m.positions.len();
    assert!(
        nv > 0 && m.normals.len() == nv && m.colors.len() == nv,
        "{name}"
    );
    assert_eq!(m.indices.len() % 3, 0, "{name}");
    assert!(m.indices.iter().all(|&i| (i as usize) < nv), "{name}");
    assert!(
        (20..=400).contains(&m.triangle_count()),
        "{name}: {} triangles",
        m.triangle_count()
    );
    for t in m.indices.chunks(3) {
        let [a, b, c] = [0, 1, 2].map(|k| m.positions[t[k] as usize]);
        let u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
        let v = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
        let cr = [
            u[1] * v[2] - u[2] * v[1],
            u[2] * v[0] - u[0] * v[2],
            u[0] * v[1] - u[1] * v[0],
        ];
        let area2 = (cr[0] * cr[0] + cr[1] * cr[1] + cr[2] * cr[2]).sqrt();
        assert!(area2 > 1e-6, "{name}: degenerate triangle");
        for &k in t {
            let nrm = m.normals[k as usize];
            let l = (nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]).sqrt();
            assert!((l - 1.0).abs() < 1e-5, "{name}: normal length {l}");
            // Clockwise seen from the normal's side.
            let d = (cr[0] * nrm[0] + cr[1] * nrm[1] + cr[2] * nrm[2]) / area2;
            assert!(d < -0.999, "{name}: winding/normal mismatch {d}");
        }
    }
    for c in &m.colors {
        assert!(
            c.iter().all(|v| (0.0..=1.0).contains(v)),
            "{name}: colour {c:?}"
        );
    }
}

/// Every edge (by quantised position) shared by exactly two triangles, once in each direction.
fn is_closed(m: &ScatterMesh) -> bool {
    let q = |p: [f32; 3]| p.map(|v| (v * 1e4).round() as i64);
    let mut edges: HashMap<([i64; 3], [i64; 3]), i32> = HashMap::new();
    for t in m.indices.chunks(3) {
        for k in 0..3 {
            let a = q(m.positions[t[k] as usize]);
            let b = q(m.positions[t[(k + 1) % 3] as usize]);
            *edges.entry((a, b)).or_default() += 1;
        }
    }
    edges
        .iter()
        .all(|(&(a, b), &n)| n == 1 && edges.get(&(b, a)) == Some(&1))
}

#[test]
fn built_in_meshes_are_valid_and_sensibly_sized() {
    for kind in MeshKind::ALL {
        let m = kind.mesh();
        check_mesh(kind, &m);
        let (lo, hi) = m.bounds();
        let (w, h) = ((hi[0] - lo[0]).max(hi[2] - lo[2]), hi[1] - lo[1]);
        let (hmin, hmax, wmax) = match kind {
            MeshKind::Palm => (5.5, 9.0, 8.0),
            MeshKind::Broadleaf => (5.0, 9.0, 6.0),
            MeshKind::Conifer => (7.0, 12.0, 5.0),
            MeshKind::Rock => (0.6, 2.0, 3.0),
            MeshKind::Grass => (0.3, 1.0, 1.0),
        };
        assert!(
            (hmin..=hmax).contains(&h) && w <= wmax && w > 0.1,
            "{}: height {h}, width {w}",
            kind.name()
        );
        // Origin at the base: nothing far below the ground, the base near the origin.
        assert!(
            lo[1] >= -0.5 && lo[1] <= 0.05,
            "{}: lowest {}",
            kind.name(),
            lo[1]
        );
        assert_eq!(MeshKind::from_index(kind as i64), Some(kind));
    }
    assert!(is_closed(&MeshKind::Rock.mesh()), "rock is watertight");
    assert_eq!(MeshKind::from_index(5), None);
}

/// An island without biomes (an imported heightmap) places as if every sample were biome 0, and
/// no layers at all is an empty result, never a panic.
#[test]
fn islands_without_biomes_and_empty_layer_lists() {
    let isl = island();
    let no_biomes = ScatterInput {
        biomes: &[],
        ..ScatterInput::from_island(isl)
    };
    assert!(place_all(&no_biomes, &[], &[], 1, 64).unwrap().is_empty());
    let zeros = vec![0u8; isl.biomes.len()];
    let biome0 = ScatterInput {
        biomes: &zeros,
        ..ScatterInput::from_island(isl)
    };
    let layers = demo_layers();
    let a = place_all(&no_biomes, &layers, &[], 7, 64).unwrap();
    let b = place_all(&biome0, &layers, &[], 7, 64).unwrap();
    assert_eq!(a.len(), layers.len());
    for (pa, pb) in a.iter().zip(&b) {
        assert_eq!(placement_bits(pa), placement_bits(pb));
    }
    assert!(a.iter().map(|p| all(p).len()).sum::<usize>() > 0);
    let short = vec![0u8; 3];
    let bad = ScatterInput {
        biomes: &short,
        ..ScatterInput::from_island(isl)
    };
    assert!(place_all(&bad, &layers, &[], 7, 64).is_err());
}

#[test]
fn masked_erase_touches_only_samples_in_the_disc_that_pass_the_brush_masks() {
    let f = &island().field;
    let n = f.resolution;
    let masks = island_core::paint::Masks {
        min_height: 5.0,
        max_height: 30.0,
        max_slope: 25.0,
        ..Default::default()
    };
    let (c, r) = ([40.0f32, -60.0f32], 120.0f32);
    let mut e = EraseMask::new(n);
    let (count, changed) = e.paint_masked(f, c, r, &masks, true);
    assert!(!changed.is_empty());
    let mut inside = 0;
    for z in 0..n {
        for x in 0..n {
            let i = z * n + x;
            let p = f.position(x, z);
            let d2 = (p[0] - c[0]).powi(2) + (p[2] - c[1]).powi(2);
            let slope = island_core::normals::slope_degrees(f.normals[i]);
            let want = d2 <= r * r && masks.weight(f.heights[i], slope) > 0.0;
            assert_eq!(e.is_erased(i), want, "sample ({x}, {z})");
            inside += want as usize;
        }
    }
    assert!(inside > 100, "the masks leave samples to erase ({inside})");
    assert_eq!(e.count(), inside);
    assert_eq!(count, inside);
    // The returned rectangle bounds the changed samples; repeating changes nothing.
    let (k2, r2) = e.paint_masked(f, c, r, &masks, true);
    assert!(r2.is_empty() && k2 == 0);
    // Restoring through the same masks clears exactly them.
    let (k3, back) = e.paint_masked(f, c, r, &masks, false);
    assert_eq!(back, changed);
    assert_eq!(k3, inside);
    assert!(e.is_empty());
}

#[test]
fn erase_region_snapshots_round_trip_and_reject_bad_input() {
    let f = &island().field;
    let n = f.resolution;
    let mut e = EraseMask::new(n);
    e.paint_disc(f, [0.0, 0.0], 30.0, true);
    let before = e.clone();
    let rect = Rect {
        x0: 470,
        z0: 475,
        w: 90,
        h: 80,
    };
    let snap = e.region(rect).unwrap();
    assert_eq!(snap.len(), 90 * 80);
    e.paint_disc(f, [0.0, 0.0], 30.0, false);
    assert!(e != before);
    let ch = e.set_region(rect, &snap).unwrap();
    assert!(!ch.is_empty());
    assert!(e == before, "the snapshot restores the mask");
    assert!(e.set_region(rect, &snap[1..]).is_err());
    let out = Rect {
        x0: n - 10,
        z0: 0,
        w: 20,
        h: 5,
    };
    assert!(e.region(out).is_err());
    assert!(e == before, "errors change nothing");
}

#[test]
fn erase_masks_encode_decode_and_resample() {
    let f = &island().field;
    let n = f.resolution;
    let mut a = EraseMask::new(n);
    a.paint_disc(f, [100.0, 50.0], 40.0, true);
    a.paint_disc(f, [-300.0, 10.0], 9.0, true);
    let empty = EraseMask::new(n);
    let masks = vec![None, Some(a.clone()), Some(empty), None];
    let bytes = encode_erase_masks(&masks);
    assert!(
        bytes.len() < 4096,
        "run-length encoded ({} bytes)",
        bytes.len()
    );
    let back = decode_erase_masks(&bytes).unwrap();
    assert!(
        back == vec![None, Some(a.clone())],
        "trailing empties dropped"
    );
    assert!(encode_erase_masks(&[None, Some(EraseMask::new(n))]).is_empty());
    assert_eq!(decode_erase_masks(&[]).unwrap(), Vec::new());
    for bad in [
        &bytes[..bytes.len() - 3],
        &b"XXXX\x01\x00\x00\x00"[..],
        &[bytes.as_slice(), &[0u8]].concat()[..],
    ] {
        assert!(decode_erase_masks(bad).is_err());
    }
    // Resampling keeps the erased area where it was.
    let half = a.resample(513);
    assert_eq!(half.resolution(), 513);
    let ratio = half.count() as f64 / (a.count() as f64 / 4.0);
    assert!((0.8..1.25).contains(&ratio), "erased area kept ({ratio})");
    assert!(
        half.is_erased(((50.0 + 512.0) / 2.0) as usize * 513 + ((100.0 + 512.0) / 2.0) as usize)
    );
    assert!(a.resample(n) == a);
}

#[test]
fn an_empty_placement_filled_chunk_by_chunk_equals_place() {
    let n = island().field.resolution;
    for layer in layers() {
        let full = place(&input(), &layer, None, 9, CHUNK);
        let mut p = Placement::empty(&layer, n, CHUNK).unwrap();
        assert!(p.is_empty());
        assert_eq!(
            (p.capacity, p.capped, p.keep, p.chunks_per_side),
            (full.capacity, full.capped, full.keep, full.chunks_per_side)
        );
        let cps = p.chunks_per_side;
        for cz in 0..cps {
            for cx in 0..cps {
                p.rebuild_chunks(&input(), &layer, None, 9, &[(cx, cz)])
                    .unwrap();
            }
        }
        assert_eq!(placement_bits(&p), placement_bits(&full), "{}", layer.name);
    }
    let bad = ScatterLayer {
        min_distance: 0.0,
        ..ScatterLayer::default()
    };
    assert!(Placement::empty(&bad, n, CHUNK).is_err());
}

/// Nothing grows in rivers and lakes: no instance of the demo layers stands on a river or lake
/// sample of the default island, and without the water map some would.
#[test]
fn nothing_is_placed_in_rivers_and_lakes() {
    use island_core::water::{LAKE, RIVER};
    let isl = island();
    let wet = |k: u8| k == RIVER || k == LAKE;
    assert!(
        isl.water.kind.iter().any(|&k| wet(k)),
        "the island has rivers"
    );
    let layers = demo_layers();
    let with = place_all(&input(), &layers, &[], 7, CHUNK).unwrap();
    let in_water = |ps: &[Placement]| {
        ps.iter()
            .flat_map(all)
            .filter(|i| wet(isl.water.kind[i.sample as usize]))
            .count()
    };
    assert_eq!(in_water(&with), 0);
    let blind = ScatterInput {
        water: &[],
        ..input()
    };
    let without = place_all(&blind, &layers, &[], 7, CHUNK).unwrap();
    assert!(in_water(&without) > 0);
    // A water map of the wrong size is an error.
    let short = vec![0u8; 5];
    let bad = ScatterInput {
        water: &short,
        ..input()
    };
    assert!(place_all(&bad, &layers, &[], 7, CHUNK).is_err());
}
