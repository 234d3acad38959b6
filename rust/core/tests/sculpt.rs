//! The sculpt layer inside the generator (issue 23): flattened areas stay level and raised
//! bumps keep their height once erosion re-runs, a dam makes a lake, a sketched channel splits
//! the island (each part draining to the sea), and the edits survive a new seed and a
//! resolution change, bit-identically on every run.

use island_core::heightfield::Heightfield;
use island_core::paint::Masks;
use island_core::params::IslandShape;
use island_core::sculpt::{stamp, SculptBrush, SculptLayer, SculptMode};
use island_core::water::{LAKE, RIVER, SEA};
use island_core::{generate, Island, IslandParams};
use std::sync::Arc;

fn params(seed: u64, resolution: u32) -> IslandParams {
    let mut p = IslandParams {
        seed,
        resolution,
        chunk_size: 32,
        ..Default::default()
    };
    p.shape.shape = IslandShape::Round;
    p
}

fn brush(mode: SculptMode, radius: f32, strength: f32) -> SculptBrush {
    SculptBrush {
        mode,
        radius,
        strength,
        hardness: 0.6,
        flatten_height: 0.0,
        masks: Masks::default(),
        preview_land_height: 2.5,
    }
}

/// Dabs of `b` along the segment `a → c` every quarter radius, on the island as shown.
fn stroke(
    layer: &mut SculptLayer,
    shown: &mut Heightfield,
    b: &SculptBrush,
    a: [f32; 2],
    c: [f32; 2],
) {
    let len = ((c[0] - a[0]).powi(2) + (c[1] - a[1]).powi(2)).sqrt();
    let steps = ((len / (b.radius * 0.25)).ceil() as usize).max(1);
    for k in 0..=steps {
        let t = k as f32 / steps as f32;
        stamp(
            layer,
            shown,
            b,
            [a[0] + (c[0] - a[0]) * t, a[1] + (c[1] - a[1]) * t],
        )
        .unwrap();
    }
}

fn with_sculpt(p: &IslandParams, layer: &SculptLayer) -> IslandParams {
    IslandParams {
        sculpt: Some(Arc::new(layer.clone())),
        ..p.clone()
    }
}

fn index(i: &Island, x: f32, z: f32) -> usize {
    i.field.nearest_index(x, z)
}

/// Samples of `i` within `r` metres of `(x, z)`.
fn disc(i: &Island, x: f32, z: f32, r: f32) -> Vec<usize> {
    let n = i.field.resolution;
    let s = i.field.spacing();
    let half = i.field.world_size * 0.5;
    (0..n * n)
        .filter(|&k| {
            let (px, pz) = ((k % n) as f32 * s - half, (k / n) as f32 * s - half);
            ((px - x).powi(2) + (pz - z).powi(2)).sqrt() <= r
        })
        .collect()
}

/// A land point of `i` at a height in `lo..hi` metres, away from the map centre's river,
/// scanning a fixed spiral (deterministic).
fn land_point(i: &Island, lo: f32, hi: f32) -> [f32; 2] {
    for k in 0..4000 {
        let a = k as f32 * 0.61;
        let r = 40.0 + k as f32 * 0.08;
        let (x, z) = (r * a.cos(), r * a.sin());
        let h = i.field.height_at(x, z);
        if h > lo && h < hi && i.water.kind[index(i, x, z)] == 0 {
            return [x, z];
        }
    }
    panic!("no land between {lo} and {hi} m");
}

fn flatten_layer(plain: &Island, c: [f32; 2], level: f32, r: f32) -> SculptLayer {
    let mut layer = SculptLayer::new(plain.field.resolution, plain.field.world_size).unwrap();
    let mut shown = plain.field.clone();
    let b = SculptBrush {
        flatten_height: level,
        hardness: 0.7,
        ..brush(SculptMode::Flatten, r, 1.0)
    };
    for _ in 0..3 {
        stamp(&mut layer, &mut shown, &b, c).unwrap();
    }
    layer
}

fn max_dev(i: &Island, samples: &[usize], level: f32) -> f32 {
    samples
        .iter()
        .map(|&k| (i.field.heights[k] - level).abs())
        .fold(0.0, f32::max)
}

#[test]
fn a_flattened_area_stays_level_after_erosion_a_new_seed_and_a_new_resolution() {
    let p = params(3, 257);
    let plain = generate(&p).unwrap();
    let c = land_point(&plain, 25.0, 60.0);
    let level = plain.field.height_at(c[0], c[1]);
    let layer = flatten_layer(&plain, c, level, 60.0);
    let sculpted = generate(&with_sculpt(&p, &layer)).unwrap();
    // The hard core of the brush (70 % of the radius) is fully flattened.
    let core = disc(&sculpted, c[0], c[1], 60.0 * 0.65);
    assert!(core.len() > 50);
    let dev = max_dev(&sculpted, &core, level);
    assert!(dev <= 0.5, "flattened area deviates {dev} m from {level} m");
    // Before the edit the same area was far from level.
    assert!(max_dev(&plain, &core, level) > 2.0);
    for k in &core {
        assert_ne!(sculpted.water.kind[*k], SEA);
    }

    // Another seed: the shelf stays where it was, at its height.
    let other = generate(&with_sculpt(&params(11, 257), &layer)).unwrap();
    let dev = max_dev(&other, &core, level);
    assert!(dev <= 0.5, "after a seed change the shelf deviates {dev} m");

    // Another resolution: the layer is resampled, the shelf is the same metres.
    let fine = generate(&with_sculpt(&params(3, 513), &layer)).unwrap();
    let core_fine = disc(&fine, c[0], c[1], 60.0 * 0.6);
    let dev = max_dev(&fine, &core_fine, level);
    assert!(dev <= 0.5, "at 513² the shelf deviates {dev} m");
}

#[test]
fn a_raised_bump_keeps_its_height_through_erosion() {
    let p = params(5, 257);
    let plain = generate(&p).unwrap();
    let c = land_point(&plain, 15.0, 40.0);
    let mut layer = SculptLayer::new(257, p.world_size).unwrap();
    let mut shown = plain.field.clone();
    let b = brush(SculptMode::Raise, 40.0, 5.0);
    for _ in 0..4 {
        stamp(&mut layer, &mut shown, &b, c).unwrap();
    }
    let k = index(&plain, c[0], c[1]);
    let raised = shown.heights[k] - plain.field.heights[k];
    assert_eq!(raised, 20.0);
    let sculpted = generate(&with_sculpt(&p, &layer)).unwrap();
    let kept = sculpted.field.heights[k] - plain.field.heights[k];
    assert!(
        (kept - raised).abs() <= 0.1 * raised,
        "the bump is {kept} m high after erosion, the stroke made {raised} m"
    );
    // Only around the brush does the island change much.
    let far = disc(&plain, c[0], c[1], 400.0);
    let n = plain.field.resolution;
    let changed_far = (0..n * n)
        .filter(|k| !far.contains(k))
        .filter(|&k| (sculpted.field.heights[k] - plain.field.heights[k]).abs() > 1.0)
        .count();
    assert!(
        changed_far < n * n / 50,
        "{changed_far} samples far from the bump changed by more than 1 m"
    );
}

#[test]
fn lowering_digs_and_smoothing_evens_out() {
    let p = params(5, 257);
    let plain = generate(&p).unwrap();
    let c = land_point(&plain, 30.0, 60.0);
    let mut layer = SculptLayer::new(257, p.world_size).unwrap();
    let mut shown = plain.field.clone();
    let k = index(&plain, c[0], c[1]);
    stamp(
        &mut layer,
        &mut shown,
        &brush(SculptMode::Lower, 20.0, 6.0),
        c,
    )
    .unwrap();
    assert_eq!(shown.heights[k], plain.field.heights[k] - 6.0);
    let dug = generate(&with_sculpt(&p, &layer)).unwrap();
    assert!(dug.field.heights[k] < plain.field.heights[k] - 4.0);

    // Smoothing a rough area reduces its height variance.
    let mut layer = SculptLayer::new(257, p.world_size).unwrap();
    let mut shown = plain.field.clone();
    let area = disc(&plain, c[0], c[1], 30.0);
    let var = |h: &[f32]| {
        let m = area.iter().map(|&k| h[k]).sum::<f32>() / area.len() as f32;
        area.iter().map(|&k| (h[k] - m).powi(2)).sum::<f32>() / area.len() as f32
    };
    let v0 = var(&shown.heights);
    for _ in 0..6 {
        stamp(
            &mut layer,
            &mut shown,
            &brush(SculptMode::Smooth, 50.0, 1.0),
            c,
        )
        .unwrap();
    }
    assert!(var(&shown.heights) < 0.7 * v0);
}

/// Connected components (4-neighbourhood) of the samples where `is_land`, at least `min` big.
fn components(n: usize, is_land: impl Fn(usize) -> bool, min: usize) -> Vec<Vec<usize>> {
    let mut seen = vec![false; n * n];
    let mut out = Vec::new();
    for s in 0..n * n {
        if seen[s] || !is_land(s) {
            continue;
        }
        let mut comp = vec![];
        let mut stack = vec![s];
        seen[s] = true;
        while let Some(i) = stack.pop() {
            comp.push(i);
            let (x, z) = (i % n, i / n);
            let mut nb = vec![];
            if x > 0 {
                nb.push(i - 1);
            }
            if x + 1 < n {
                nb.push(i + 1);
            }
            if z > 0 {
                nb.push(i - n);
            }
            if z + 1 < n {
                nb.push(i + n);
            }
            for j in nb {
                if !seen[j] && is_land(j) {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        if comp.len() >= min {
            out.push(comp);
        }
    }
    out
}

#[test]
fn a_sketched_channel_makes_two_islands_each_draining_to_the_sea() {
    let p = params(7, 257);
    let plain = generate(&p).unwrap();
    let n = 257;
    let land = |i: &Island| {
        let i = i.clone();
        move |k: usize| i.water.kind[k] != SEA
    };
    assert_eq!(components(n, land(&plain), 500).len(), 1);
    let mut layer = SculptLayer::new(n, p.world_size).unwrap();
    let mut shown = plain.field.clone();
    let b = SculptBrush {
        hardness: 0.8,
        ..brush(SculptMode::SketchSea, 25.0, 1.0)
    };
    stroke(&mut layer, &mut shown, &b, [-480.0, 10.0], [480.0, 10.0]);
    let split = generate(&with_sculpt(&p, &layer)).unwrap();
    let parts = components(n, land(&split), 500);
    assert_eq!(parts.len(), 2, "the channel splits the island in two");
    let k = index(&split, 0.0, 10.0);
    assert_eq!(split.water.kind[k], SEA);
    assert!(split.field.heights[k] < -1.0, "the channel is under water");
    // Each island has rivers, and they reach the sea.
    for part in &parts {
        let rivers: Vec<usize> = part
            .iter()
            .copied()
            .filter(|&k| split.water.kind[k] == RIVER)
            .collect();
        assert!(!rivers.is_empty(), "a part without rivers");
        let mouths = rivers
            .iter()
            .filter(|&&k| {
                let (x, z) = (k % n, k / n);
                [(1i64, 0i64), (-1, 0), (0, 1), (0, -1)]
                    .iter()
                    .any(|(dx, dz)| {
                        let (xx, zz) = (x as i64 + dx, z as i64 + dz);
                        (0..n as i64).contains(&xx)
                            && (0..n as i64).contains(&zz)
                            && split.water.kind[zz as usize * n + xx as usize] == SEA
                    })
            })
            .count();
        assert!(mouths > 0, "no river of a part reaches the sea");
    }

    // Sketching land back where the channel was joins them again.
    let b = SculptBrush {
        hardness: 0.8,
        ..brush(SculptMode::SketchLand, 40.0, 1.0)
    };
    stroke(&mut layer, &mut shown, &b, [-200.0, 10.0], [200.0, 10.0]);
    stroke(&mut layer, &mut shown, &b, [-200.0, 10.0], [200.0, 10.0]);
    let joined = generate(&with_sculpt(&p, &layer)).unwrap();
    assert_eq!(components(n, land(&joined), 500).len(), 1);
    assert!(
        joined.field.heights[k] > 0.0,
        "sketched land rises above the sea"
    );
}

#[test]
fn a_ridge_across_a_valley_dams_a_lake() {
    let p = params(2, 257);
    let plain = generate(&p).unwrap();
    let n = 257;
    let s = plain.field.spacing();
    let half = plain.field.world_size * 0.5;
    let pos = |k: usize| [(k % n) as f32 * s - half, (k / n) as f32 * s - half];
    // The river sample with the most river upstream of it, inland (over 8 m): dam there,
    // across the flow (the downhill direction of the ground).
    let mut best: Option<(usize, usize)> = None;
    for k in 0..n * n {
        if plain.water.kind[k] != RIVER || plain.field.heights[k] < 8.0 {
            continue;
        }
        let [x, z] = pos(k);
        let up = disc(&plain, x, z, 120.0)
            .into_iter()
            .filter(|&j| {
                plain.water.kind[j] == RIVER && plain.field.heights[j] > plain.field.heights[k]
            })
            .count();
        if best.is_none_or(|b| up > b.1) {
            best = Some((k, up));
        }
    }
    let (k, up) = best.expect("an inland river");
    assert!(up > 10, "the river has {up} samples upstream");
    let [x, z] = pos(k);
    // The valley's fall line from heights 40 m away (the channel's own banks would point
    // across it).
    let h = |x: f32, z: f32| plain.field.height_bilinear(x, z);
    let (dx, dz) = (
        h(x - 40.0, z) - h(x + 40.0, z),
        h(x, z - 40.0) - h(x, z + 40.0),
    );
    let l = (dx * dx + dz * dz).sqrt().max(1e-6);
    let (ax, az) = (-dz / l, dx / l); // across the slope
                                      // Lake samples within 300 m upstream of the dam (on the uphill side of its line).
    let (fx, fz) = (dx / l, dz / l); // downhill
    let lakes_near = |i: &Island| {
        disc(i, x, z, 300.0)
            .into_iter()
            .filter(|&j| {
                let [px, pz] = pos(j);
                i.water.kind[j] == LAKE && (px - x) * fx + (pz - z) * fz < -20.0
            })
            .count()
    };
    let before = lakes_near(&plain);
    let mut layer = SculptLayer::new(n, p.world_size).unwrap();
    let mut shown = plain.field.clone();
    let b = brush(SculptMode::Raise, 18.0, 3.0);
    for _ in 0..5 {
        stroke(
            &mut layer,
            &mut shown,
            &b,
            [x - ax * 300.0, z - az * 300.0],
            [x + ax * 300.0, z + az * 300.0],
        );
    }
    let dammed = generate(&with_sculpt(&p, &layer)).unwrap();
    let after = lakes_near(&dammed);
    if std::env::var("SCULPT_DEBUG").is_ok() {
        let (cx, cz) = (k % n, k / n);
        eprintln!(
            "dam at {x},{z} k={k} across ({ax},{az}) h={}",
            plain.field.heights[k]
        );
        for isl in [&plain, &dammed] {
            for zz in (cz.saturating_sub(80)..(cz + 80).min(n)).step_by(3) {
                let row: String = (cx.saturating_sub(80)..(cx + 80).min(n))
                    .step_by(2)
                    .map(|xx| {
                        let j = zz * n + xx;
                        if layer.offset[j] > 1.0 {
                            '#'
                        } else {
                            ['.', '~', 'L', 'S'][isl.water.kind[j] as usize]
                        }
                    })
                    .collect();
                eprintln!("{row}");
            }
            eprintln!();
        }
    }
    assert!(
        after > before + 20,
        "a lake fills behind the dam: {before} lake samples near it before, {after} after"
    );
    // The dam holds: its crest is not carved.
    assert!(dammed.field.heights[k] > plain.field.heights[k] + 10.0);
}

#[test]
fn sculpted_generation_is_deterministic() {
    let p = params(3, 129);
    let plain = generate(&p).unwrap();
    let mut layer = SculptLayer::new(129, p.world_size).unwrap();
    let mut shown = plain.field.clone();
    stroke(
        &mut layer,
        &mut shown,
        &brush(SculptMode::Raise, 30.0, 4.0),
        [-100.0, 0.0],
        [100.0, 50.0],
    );
    stroke(
        &mut layer,
        &mut shown,
        &brush(SculptMode::SketchSea, 20.0, 1.0),
        [-300.0, -100.0],
        [300.0, -100.0],
    );
    let a = generate(&with_sculpt(&p, &layer)).unwrap();
    let b = generate(&with_sculpt(&p, &layer)).unwrap();
    assert_eq!(a.field.heights, b.field.heights);
    assert_eq!(a.water.kind, b.water.kind);
    // An empty layer changes nothing at all.
    let empty = SculptLayer::new(129, p.world_size).unwrap();
    let e = generate(&with_sculpt(&p, &empty)).unwrap();
    assert_eq!(e.field.heights, plain.field.heights);
}
