//! Paths inside the generator (issue 38): a road stays within its grade and level across after
//! erosion, carries its splat layer and no scatter, and lets a river it crosses reach the sea; a
//! river path holds river water on a bed that never rises and ends in the sea; a canal below sea
//! level makes two islands of one; everything bit-identical run to run.

use island_core::params::IslandShape;
use island_core::paths::{road_cover, PathKind, PathSet, PathSpec};
use island_core::scatter::{place, ScatterInput, ScatterLayer};
use island_core::water::{DRY, LAKE, RIVER, SEA};
use island_core::{generate, Island, IslandParams};
use std::sync::Arc;

fn params(seed: u64) -> IslandParams {
    let mut p = IslandParams {
        seed,
        resolution: 513,
        chunk_size: 32,
        ..Default::default()
    };
    p.shape.shape = IslandShape::Round;
    p
}

fn with_paths(p: &IslandParams, paths: Vec<PathSpec>) -> IslandParams {
    IslandParams {
        paths: Some(Arc::new(PathSet { paths, brush: None })),
        ..p.clone()
    }
}

/// Bilinear height at `(x, z)`.
fn height(i: &Island, x: f32, z: f32) -> f32 {
    i.field.height_at(x, z)
}

fn kind(i: &Island, x: f32, z: f32) -> u8 {
    i.water.kind[i.field.nearest_index(x, z)]
}

/// Whether a wet sample lies within `r` metres of `(x, z)`.
fn near_water(i: &Island, x: f32, z: f32, r: f32) -> bool {
    let s = i.field.spacing();
    let m = (r / s).ceil() as i32;
    (-m..=m).any(|a| {
        (-m..=m).any(|b| {
            let (dx, dz) = (a as f32 * s, b as f32 * s);
            dx * dx + dz * dz <= r * r && kind(i, x + dx, z + dz) != DRY
        })
    })
}

/// Points every `step` metres along the polyline.
fn walk(points: &[[f32; 2]], step: f32) -> Vec<([f32; 2], [f32; 2])> {
    let mut out = Vec::new();
    for w in points.windows(2) {
        let (a, b) = (w[0], w[1]);
        let (dx, dz) = (b[0] - a[0], b[1] - a[1]);
        let len = (dx * dx + dz * dz).sqrt();
        let k = (len / step).floor() as usize;
        for s in 0..k {
            let t = s as f32 * step / len;
            out.push(([a[0] + dx * t, a[1] + dz * t], [dx / len, dz / len]));
        }
    }
    out
}

/// The last x along z = `z` (from the centre outwards, +x) that is land.
fn coast_x(i: &Island, z: f32) -> f32 {
    let mut last = 0.0;
    let mut x = 0.0;
    while x < 500.0 {
        if height(i, x, z) > 0.0 {
            last = x;
        }
        x += 1.0;
    }
    last
}

#[test]
fn a_road_keeps_its_grade_is_level_across_and_carries_its_splat_without_scatter() {
    let p = params(3);
    let plain = generate(&p).unwrap();
    let xc = coast_x(&plain, 0.0);
    // From the beach inland, with a bend.
    let pts = vec![[xc - 3.0, 0.0], [xc - 120.0, 30.0], [xc - 300.0, 10.0]];
    let mut road = PathSpec::new(PathKind::Road, pts.clone());
    road.width = 8.0;
    road.shoulder = 6.0;
    road.max_grade = 8.0;
    road.splat_layer = 0;
    let pr = with_paths(&p, vec![road.clone()]);
    let isl = generate(&pr).unwrap();
    assert_eq!(
        isl.field.heights,
        generate(&pr).unwrap().field.heights,
        "same paths, same bits"
    );
    // The ends need less than the grade, so the grade holds all along.
    let (h0, h1) = (
        height(&plain, pts[0][0], 0.0),
        height(&plain, pts[2][0], 10.0),
    );
    assert!(
        (h1 - h0).abs() / 300.0 < 0.08,
        "test set-up: ends {h0} {h1}"
    );
    let centre = walk(&pts, 2.0);
    let mut worst_grade = 0.0f32;
    let mut worst_across = 0.0f32;
    let mut dry = 0;
    for (k, (c, t)) in centre.iter().enumerate() {
        let hc = height(&isl, c[0], c[1]);
        // Crossings (a river's bed or a lake's shore within 6 m) are not the road's surface.
        if near_water(&isl, c[0], c[1], 6.0) {
            continue;
        }
        dry += 1;
        // Level across the road surface (1 m inside each edge).
        let (nx, nz) = (-t[1] * 3.0, t[0] * 3.0);
        for s in [1.0, -1.0] {
            let h = height(&isl, c[0] + s * nx, c[1] + s * nz);
            worst_across = worst_across.max((h - hc).abs());
        }
        // Grade over 10 m along.
        if let Some((c2, _)) = centre.get(k + 5) {
            if !near_water(&isl, c2[0], c2[1], 6.0) {
                let d = ((c2[0] - c[0]).powi(2) + (c2[1] - c[1]).powi(2)).sqrt();
                let g = (height(&isl, c2[0], c2[1]) - hc).abs() / d;
                worst_grade = worst_grade.max(g);
            }
        }
        // The road's splat layer.
        let s = isl.splat[isl.field.nearest_index(c[0], c[1])];
        assert!(s[0] >= 204, "splat {s:?} at {c:?}");
    }
    assert!(dry > 60, "{dry} dry centre samples");
    assert!(worst_grade <= 0.085, "grade {worst_grade}");
    assert!(worst_across <= 0.2, "across {worst_across}");
    // The road changed the land (it is not the plain island's ground).
    let moved = centre
        .iter()
        .filter(|(c, _)| (height(&isl, c[0], c[1]) - height(&plain, c[0], c[1])).abs() > 0.5)
        .count();
    assert!(moved > 10, "{moved}");

    // No scatter instance on the road surface.
    let set = pr.paths.as_deref().unwrap();
    let cover = road_cover(set, 513, pr.world_size).unwrap();
    let layer = ScatterLayer {
        density: 5.0,
        min_distance: 2.0,
        max_slope_degrees: 60.0,
        ..Default::default()
    };
    let input = ScatterInput {
        cleared: &cover,
        ..ScatterInput::from_island(&isl)
    };
    let placed = place(&input, &layer, None, 7, 32).chunks.concat();
    let free = place(&ScatterInput::from_island(&isl), &layer, None, 7, 32)
        .chunks
        .concat();
    let near = |x: f32, z: f32| {
        centre
            .iter()
            .map(|(c, _)| ((c[0] - x).powi(2) + (c[1] - z).powi(2)).sqrt())
            .fold(f32::INFINITY, f32::min)
    };
    let on_road = |inst: &[island_core::scatter::Instance]| {
        inst.iter()
            .filter(|i| near(i.position[0], i.position[2]) < 4.0)
            .count()
    };
    assert!(on_road(&free) > 5, "the test needs instances there");
    assert_eq!(on_road(&placed), 0);
}

#[test]
fn a_river_it_crosses_still_reaches_the_sea_through_a_ford() {
    let p = params(3);
    let plain = generate(&p).unwrap();
    let n = 513usize;
    // A river sample far from the coast, on a long river (high accumulation).
    let sp = plain.field.spacing();
    let half = plain.field.world_size * 0.5;
    let mut pick = None;
    for k in 0..n * n {
        if plain.water.kind[k] != RIVER {
            continue;
        }
        let (x, z) = ((k % n) as f32 * sp - half, (k / n) as f32 * sp - half);
        if (x * x + z * z).sqrt() < 200.0 && plain.field.heights[k] > 5.0 {
            pick = Some((x, z));
            break;
        }
    }
    let (x, z) = pick.expect("a river inland on seed 3");
    // A road across it, east to west.
    let road = PathSpec::new(PathKind::Road, vec![[x - 60.0, z], [x + 60.0, z]]);
    let isl = generate(&with_paths(&p, vec![road])).unwrap();
    // Water connected to the crossing reaches the sea.
    let start = (0..n * n)
        .filter(|&k| isl.water.kind[k] == RIVER || isl.water.kind[k] == LAKE)
        .min_by(|&a, &b| {
            let d = |k: usize| {
                let (px, pz) = ((k % n) as f32 * sp - half, (k / n) as f32 * sp - half);
                (px - x).powi(2) + (pz - z).powi(2)
            };
            d(a).total_cmp(&d(b))
        })
        .unwrap();
    let (sx, sz) = (
        (start % n) as f32 * sp - half,
        (start / n) as f32 * sp - half,
    );
    assert!(
        ((sx - x).powi(2) + (sz - z).powi(2)).sqrt() < 12.0,
        "the river still crosses the road"
    );
    let mut seen = vec![false; n * n];
    let mut stack = vec![start];
    seen[start] = true;
    let mut sea = false;
    while let Some(k) = stack.pop() {
        if isl.water.kind[k] == SEA {
            sea = true;
            break;
        }
        let (i, j) = (k % n, k / n);
        for (di, dj) in [
            (-1i32, 0i32),
            (1, 0),
            (0, -1),
            (0, 1),
            (1, 1),
            (-1, -1),
            (1, -1),
            (-1, 1),
        ] {
            let (a, b) = (i as i32 + di, j as i32 + dj);
            if a < 0 || b < 0 || a >= n as i32 || b >= n as i32 {
                continue;
            }
            let q = b as usize * n + a as usize;
            if !seen[q] && isl.water.kind[q] != DRY {
                seen[q] = true;
                stack.push(q);
            }
        }
    }
    assert!(sea, "the river from the crossing reaches the sea");
}

#[test]
fn a_river_path_holds_water_on_a_falling_bed_and_ends_in_the_sea() {
    let p = params(3);
    let plain = generate(&p).unwrap();
    // From inland down to beyond the coast along -z (drawn from the sea end first: the
    // generator finds the upper end by itself).
    let mut zc = 0.0;
    let mut z = 0.0;
    while z > -500.0 {
        if height(&plain, 40.0, z) > 0.0 {
            zc = z;
        }
        z -= 1.0;
    }
    let pts = vec![[40.0, zc - 30.0], [40.0, -60.0]];
    let mut river = PathSpec::new(PathKind::River, pts);
    river.width = 8.0;
    river.depth = 3.0;
    river.shoulder = 8.0;
    let isl = generate(&with_paths(&p, vec![river])).unwrap();
    // Downstream: from z = -60 towards the sea.
    let mut wet = 0;
    let mut total = 0;
    let mut prev = f32::INFINITY;
    let mut ended = false;
    let mut z = -60.0;
    while z > zc - 30.0 {
        let k = isl.field.nearest_index(40.0, z);
        let kd = isl.water.kind[k];
        if kd == SEA || kd == LAKE {
            ended = true;
            break;
        }
        total += 1;
        if kd == RIVER {
            wet += 1;
        }
        let h = isl.field.heights[k];
        assert!(h <= prev + 1e-3, "the bed rises at z {z}: {prev} → {h}");
        prev = h;
        z -= 2.0;
    }
    assert!(ended, "the river ends in the sea or a lake");
    assert!(total > 50, "{total}");
    assert!(
        wet as f32 >= 0.9 * total as f32,
        "{wet} of {total} centre samples are river water"
    );
}

#[test]
fn a_canal_below_sea_level_makes_two_islands_of_one() {
    let p = params(3);
    let mut canal = PathSpec::new(PathKind::Canal, vec![[-520.0, 0.0], [520.0, 0.0]]);
    canal.width = 16.0;
    canal.level = -3.0;
    let isl = generate(&with_paths(&p, vec![canal])).unwrap();
    let n = 513usize;
    for x in [-300.0, -100.0, 0.0, 100.0, 300.0] {
        assert_eq!(kind(&isl, x, 0.0), SEA, "canal at x {x}");
    }
    // Land components (4-connected, height > 0): the two halves are apart.
    let mut comp = vec![u32::MAX; n * n];
    let mut sizes = Vec::new();
    for s in 0..n * n {
        if comp[s] != u32::MAX || isl.field.heights[s] <= 0.0 {
            continue;
        }
        let id = sizes.len() as u32;
        let mut stack = vec![s];
        comp[s] = id;
        let mut size = 0usize;
        while let Some(k) = stack.pop() {
            size += 1;
            let (i, j) = (k % n, k / n);
            let nb = [
                (i > 0).then(|| k - 1),
                (i + 1 < n).then(|| k + 1),
                (j > 0).then(|| k - n),
                (j + 1 < n).then(|| k + n),
            ];
            for q in nb.into_iter().flatten() {
                if comp[q] == u32::MAX && isl.field.heights[q] > 0.0 {
                    comp[q] = id;
                    stack.push(q);
                }
            }
        }
        sizes.push(size);
    }
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    assert!(
        sizes.len() >= 2 && sizes[1] * 5 > sizes[0],
        "{:?}",
        &sizes[..sizes.len().min(4)]
    );
}

#[test]
fn a_ridge_raises_the_land_along_it_and_bad_paths_are_errors() {
    let p = params(3);
    let plain = generate(&p).unwrap();
    let mut ridge = PathSpec::new(PathKind::Ridge, vec![[-150.0, -100.0], [150.0, -100.0]]);
    ridge.height = 25.0;
    ridge.width = 10.0;
    let isl = generate(&with_paths(&p, vec![ridge.clone()])).unwrap();
    for x in [-100.0, 0.0, 100.0] {
        let rise = height(&isl, x, -100.0) - height(&plain, x, -100.0);
        assert!(rise > 15.0, "ridge at x {x}: {rise}");
    }
    // Far from it, little changes.
    let far = (height(&isl, 0.0, 250.0) - height(&plain, 0.0, 250.0)).abs();
    assert!(far < 3.0, "{far}");
    let mut bad = ridge;
    bad.width = f32::NAN;
    let e = generate(&with_paths(&p, vec![bad])).unwrap_err();
    assert!(e.to_string().contains("paths"), "{e}");
}
