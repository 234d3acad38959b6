//! Island outlines (issue 22): AUTO shows the whole range over the seeds, each shape has its
//! character, the land fraction is honoured, drawn masks are followed, bad masks error, and
//! the outline does not depend on the thread count.

use island_core::params::{CoastMask, IslandShape};
use island_core::pipeline::generate_fields;
use island_core::shape::{resolve, shape_mask};
use island_core::water::SEA;
use island_core::{generate, Algorithm, IslandParams};
use std::sync::Arc;

fn params(seed: u64, resolution: u32) -> IslandParams {
    IslandParams {
        seed,
        resolution,
        chunk_size: 32,
        ..Default::default()
    }
}

fn with_shape(seed: u64, resolution: u32, shape: IslandShape) -> IslandParams {
    let mut p = params(seed, resolution);
    p.shape.shape = shape;
    p
}

/// Connected components of land (8-neighbourhood) with at least `min` samples.
fn landmasses(mask: &[u8], n: usize, min: usize) -> usize {
    let mut seen = vec![false; n * n];
    let mut count = 0;
    for start in 0..n * n {
        if mask[start] == 0 || seen[start] {
            continue;
        }
        let mut stack = vec![start];
        seen[start] = true;
        let mut size = 0;
        while let Some(i) = stack.pop() {
            size += 1;
            let (x, z) = ((i % n) as i64, (i / n) as i64);
            for dz in -1..=1 {
                for dx in -1..=1 {
                    let (nx, nz) = (x + dx, z + dz);
                    if nx < 0 || nz < 0 || nx >= n as i64 || nz >= n as i64 {
                        continue;
                    }
                    let j = nz as usize * n + nx as usize;
                    if mask[j] != 0 && !seen[j] {
                        seen[j] = true;
                        stack.push(j);
                    }
                }
            }
        }
        if size >= min {
            count += 1;
        }
    }
    count
}

/// √(λ1/λ2) of the land's second moments.
fn elongation(mask: &[u8], n: usize) -> f64 {
    let (mut c, mut sx, mut sz) = (0.0f64, 0.0, 0.0);
    for (i, &m) in mask.iter().enumerate() {
        if m != 0 {
            c += 1.0;
            sx += (i % n) as f64;
            sz += (i / n) as f64;
        }
    }
    let (mx, mz) = (sx / c, sz / c);
    let (mut xx, mut zz, mut xz) = (0.0, 0.0, 0.0);
    for (i, &m) in mask.iter().enumerate() {
        if m != 0 {
            let (dx, dz) = ((i % n) as f64 - mx, (i / n) as f64 - mz);
            xx += dx * dx;
            zz += dz * dz;
            xz += dx * dz;
        }
    }
    let tr = xx + zz;
    let det = xx * zz - xz * xz;
    let disc = (tr * tr / 4.0 - det).max(0.0).sqrt();
    ((tr / 2.0 + disc) / (tr / 2.0 - disc).max(1e-9)).sqrt()
}

/// Land area / area of the convex hull of the land samples.
fn solidity(mask: &[u8], n: usize) -> f64 {
    let mut pts: Vec<(i64, i64)> = Vec::new();
    // Per row, the extreme land samples are enough for the hull.
    for z in 0..n {
        let row = &mask[z * n..(z + 1) * n];
        if let (Some(a), Some(b)) = (
            row.iter().position(|&v| v != 0),
            row.iter().rposition(|&v| v != 0),
        ) {
            pts.push((a as i64, z as i64));
            pts.push((b as i64, z as i64));
        }
    }
    pts.sort();
    pts.dedup();
    let cross = |o: (i64, i64), a: (i64, i64), b: (i64, i64)| {
        (a.0 - o.0) * (b.1 - o.1) - (a.1 - o.1) * (b.0 - o.0)
    };
    let mut hull: Vec<(i64, i64)> = Vec::new();
    for pass in 0..2 {
        let start = hull.len();
        let it: Box<dyn Iterator<Item = &(i64, i64)>> = if pass == 0 {
            Box::new(pts.iter())
        } else {
            Box::new(pts.iter().rev())
        };
        for &p in it {
            while hull.len() >= start + 2
                && cross(hull[hull.len() - 2], hull[hull.len() - 1], p) <= 0
            {
                hull.pop();
            }
            hull.push(p);
        }
        hull.pop();
    }
    let mut area2 = 0i64;
    for i in 0..hull.len() {
        let (a, b) = (hull[i], hull[(i + 1) % hull.len()]);
        area2 += a.0 * b.1 - b.0 * a.1;
    }
    // Samples as unit squares: the hull of their centres misses half a sample around.
    let hull_area = area2.abs() as f64 / 2.0 + hull.len() as f64 * 0.5;
    let land = mask.iter().filter(|&&v| v != 0).count() as f64;
    land / hull_area
}

fn land_fraction(mask: &[u8]) -> f64 {
    mask.iter().filter(|&&v| v != 0).count() as f64 / mask.len() as f64
}

/// Sea samples not reachable from the map border through sea (4-neighbourhood).
fn enclosed_sea(mask: &[u8], n: usize) -> usize {
    let mut outside = vec![false; n * n];
    let mut stack: Vec<usize> = (0..n)
        .flat_map(|k| [k, (n - 1) * n + k, k * n, k * n + n - 1])
        .filter(|&i| mask[i] == 0)
        .collect();
    for &i in &stack {
        outside[i] = true;
    }
    while let Some(i) = stack.pop() {
        let (x, z) = (i % n, i / n);
        let mut push = |j: usize| {
            if mask[j] == 0 && !outside[j] {
                outside[j] = true;
                stack.push(j);
            }
        };
        if x > 0 {
            push(i - 1);
        }
        if x + 1 < n {
            push(i + 1);
        }
        if z > 0 {
            push(i - n);
        }
        if z + 1 < n {
            push(i + n);
        }
    }
    (0..n * n).filter(|&i| mask[i] == 0 && !outside[i]).count()
}

#[test]
fn auto_shows_the_whole_range_over_seeds() {
    let n = 257usize;
    let (mut multi, mut long, mut concave) = (0, 0, 0);
    let mut shapes = std::collections::BTreeSet::new();
    for seed in 1..=24u64 {
        let p = params(seed, n as u32);
        let mask = shape_mask(&p).unwrap();
        let (lm, el, so) = (
            landmasses(&mask, n, 20),
            elongation(&mask, n),
            solidity(&mask, n),
        );
        let lf = land_fraction(&mask);
        println!(
            "seed {seed:2} {:11} landmasses {lm} elongation {el:.2} solidity {so:.2} land {lf:.3}",
            resolve(&p).shape.name()
        );
        shapes.insert(resolve(&p).shape.name());
        multi += (lm > 1) as u32;
        long += (el >= 1.8) as u32;
        concave += (so <= 0.75) as u32;
        assert!((0.05..0.45).contains(&lf), "seed {seed}: land {lf}");
    }
    println!("multi {multi} long {long} concave {concave} shapes {shapes:?}");
    assert!(multi >= 3, "{multi} seeds with more than one landmass");
    assert!(long >= 3, "{long} seeds with elongation >= 1.8");
    assert!(concave >= 3, "{concave} seeds with solidity <= 0.75");
    assert!(shapes.len() >= 5, "{shapes:?}");
}

#[test]
fn archipelago_has_three_or_more_landmasses() {
    let n = 257usize;
    for seed in 1..=8u64 {
        let mask = shape_mask(&with_shape(seed, n as u32, IslandShape::Archipelago)).unwrap();
        let lm = landmasses(&mask, n, 20);
        println!("seed {seed}: {lm} landmasses");
        assert!(lm >= 3, "seed {seed}: {lm} landmasses");
    }
}

#[test]
fn atoll_encloses_a_lagoon_that_is_sea() {
    let n = 257usize;
    for seed in 1..=6u64 {
        let p = with_shape(seed, n as u32, IslandShape::Atoll);
        let mask = shape_mask(&p).unwrap();
        let lagoon = enclosed_sea(&mask, n);
        println!(
            "seed {seed}: lagoon {lagoon} samples, solidity {:.2}",
            solidity(&mask, n)
        );
        assert!(lagoon > n * n / 10, "seed {seed}: lagoon {lagoon}");
        assert_eq!(mask[(n / 2) * n + n / 2], 0);
    }
    // The lagoon's water is sea (level 0), not a lake.
    let island = generate(&with_shape(1, n as u32, IslandShape::Atoll)).unwrap();
    let c = (n / 2) * n + n / 2;
    assert_eq!(island.water.kind[c], SEA);
    assert_eq!(island.water.level[c], 0.0);
    // A shallow lagoon (turquoise over sand), not the open sea's depth.
    let depth = -island.field.heights[c];
    assert!(
        depth > 0.0 && depth <= island_core::shape::LAGOON_DEPTH + 0.01,
        "lagoon depth {depth} m"
    );
    let open_sea = -island.field.heights[8 * n + 8];
    assert!(
        open_sea > 2.0 * island_core::shape::LAGOON_DEPTH,
        "open sea {open_sea} m"
    );
}

#[test]
fn elongated_keeps_its_aspect_ratio() {
    let n = 257usize;
    for (seed, aspect, orientation) in [(1u64, 2.5f32, 30.0f32), (2, 2.0, 100.0), (3, 3.0, 0.0)] {
        let mut p = with_shape(seed, n as u32, IslandShape::Elongated);
        p.shape.aspect_ratio = aspect;
        p.shape.orientation = orientation;
        let mask = shape_mask(&p).unwrap();
        let el = elongation(&mask, n);
        println!("seed {seed} aspect {aspect}: elongation {el:.2}");
        assert!(
            (el / aspect as f64 - 1.0).abs() <= 0.2,
            "aspect {aspect}: elongation {el}"
        );
    }
}

#[test]
fn crescent_has_a_concave_bay() {
    let n = 257usize;
    for seed in 1..=6u64 {
        let mut p = with_shape(seed, n as u32, IslandShape::Crescent);
        p.shape.bay_direction = 0.0;
        let mask = shape_mask(&p).unwrap();
        let so = solidity(&mask, n);
        // Inside the bay (it opens towards +x): sea, with land around it (round islands
        // measure a solidity of 0.94-0.98).
        let bay = (n / 2) * n + n / 2 + (0.45 * (n / 2) as f32) as usize;
        println!("seed {seed}: solidity {so:.2}, bay sample {}", mask[bay]);
        assert!(so <= 0.85, "seed {seed}: solidity {so}");
        assert_eq!(mask[bay], 0, "seed {seed}: the bay is sea");
    }
}

#[test]
fn volcano_has_a_dominant_peak_and_crater_lake() {
    let p = with_shape(3, 257, IslandShape::Volcanic);
    let island = generate(&p).unwrap();
    assert!(
        island.stats.max_height > 0.6 * p.max_height,
        "{:?}",
        island.stats.max_height
    );
    assert!(island.stats.lake_count >= 1, "no crater lake");
}

/// `shape.cone_height` sets the cone: a lower one gives a lower island; the default is the
/// cone of the first VOLCANIC islands (the golden outputs pin its bits).
#[test]
fn cone_height_sets_the_volcano() {
    let mut p = with_shape(3, 257, IslandShape::Volcanic);
    let tall = generate(&p).unwrap().stats.max_height;
    p.shape.cone_height = 0.4;
    let low = generate(&p).unwrap().stats.max_height;
    assert!(low < tall - 0.2 * p.max_height, "tall {tall}, low {low}");
}

#[test]
fn land_fraction_is_honoured() {
    let n = 257usize;
    for shape in IslandShape::ALL {
        for lf in [0.15f32, 0.3] {
            let mut p = with_shape(7, n as u32, shape);
            p.shape.land_fraction = lf;
            let got = land_fraction(&shape_mask(&p).unwrap());
            println!("{} {lf}: {got:.4}", shape.name());
            assert!(
                (got - lf as f64).abs() < 0.005,
                "{} {lf}: {got}",
                shape.name()
            );
        }
    }
    // Final land (after coast, erosion and rivers) stays within a few per cent of the map.
    let mut p = params(5, 257);
    p.shape.land_fraction = 0.3;
    let island = generate(&p).unwrap();
    let got = island.stats.land_fraction;
    assert!((got - 0.3).abs() < 0.04, "final land {got}");
}

#[test]
fn round_is_the_legacy_mask() {
    let p = with_shape(4, 257, IslandShape::Round);
    let g = p.grid();
    let legacy = island_core::mask::island_mask(
        &g,
        &p.mask,
        island_core::pipeline::border_margin(&p),
        island_core::hash::tag::MASK,
    );
    assert_eq!(shape_mask(&p).unwrap(), legacy);
}

#[test]
fn gaussian_islands_with_separation_stay_separate() {
    let n = 257usize;
    let mut p = params(2, n as u32);
    p.algorithm = Algorithm::GaussianIslands;
    p.gaussian.separation = 0.3;
    p.gaussian.cells = 4;
    let mask = shape_mask(&p).unwrap();
    let lm = landmasses(&mask, n, 10);
    let mountains = island_core::gaussian_islands::gaussian_mountains(
        p.world_size,
        4,
        p.gaussian.density,
        0.3,
        p.seed,
        island_core::hash::tag::BASE,
    );
    println!("{lm} landmasses for {} mountains", mountains.len());
    assert!(
        lm >= 3 && lm + 2 >= mountains.len(),
        "{lm} of {}",
        mountains.len()
    );
    let island = generate(&p).unwrap();
    assert!(island.stats.land_fraction > 0.05);
}

/// A drawn outline: an L-shaped island with a round lake-less bay, `w × h` grey pixels.
fn drawn(w: usize, h: usize) -> Vec<u8> {
    let mut img = vec![0u8; w * h];
    for y in 0..h {
        for x in 0..w {
            let (u, v) = (x as f32 / w as f32, y as f32 / h as f32);
            let bar = (0.2..0.45).contains(&u) && (0.15..0.85).contains(&v);
            let foot = (0.2..0.8).contains(&u) && (0.6..0.85).contains(&v);
            let (du, dv) = (u - 0.7, v - 0.3);
            let blob = du * du + dv * dv < 0.02;
            if bar || foot || blob {
                img[y * w + x] = 255;
            }
        }
    }
    img
}

#[test]
fn drawn_mask_is_followed() {
    let n = 513usize;
    let (w, h) = (n, n);
    let img = drawn(w, h);
    let mut p = params(9, n as u32);
    p.coast_mask = Some(Arc::new(CoastMask::from_luma8(w, h, &img).unwrap()));
    let island = generate(&p).unwrap();
    let land: Vec<bool> = island.field.heights.iter().map(|&v| v > 0.0).collect();
    let (mut inter, mut uni) = (0usize, 0usize);
    for i in 0..n * n {
        let want = img[i] >= 128;
        inter += (want && land[i]) as usize;
        uni += (want || land[i]) as usize;
    }
    let iou = inter as f64 / uni as f64;
    println!("IoU {iou:.3}");
    assert!(iou >= 0.9, "IoU {iou}");
}

/// Grey in a drawn mask is a soft preference: a mid-grey area is part land, part sea (in
/// noise-shaped coves, not a threshold edge), a lighter grey gives more land than a darker one,
/// black and white are followed exactly, and the seed changes only the grey parts.
#[test]
fn grey_in_a_drawn_mask_is_a_soft_preference() {
    let n = 257usize;
    // Columns: white land on the left, then grey bands of 0.35, 0.5 and 0.65, black on the right
    // (and a black frame so the map border is sea).
    let band = |x: usize| match x * 5 / n {
        0 => 255u8,
        1 => 89,
        2 => 128,
        3 => 166,
        _ => 0,
    };
    let mut img = vec![0u8; n * n];
    for z in 16..n - 16 {
        for x in 16..n - 16 {
            img[z * n + x] = band(x);
        }
    }
    let mask_for = |seed: u64| {
        let mut p = params(seed, n as u32);
        p.coast_mask = Some(Arc::new(CoastMask::from_luma8(n, n, &img).unwrap()));
        shape_mask(&p).unwrap()
    };
    let share = |m: &[u8], b: usize| {
        let (mut land, mut all) = (0usize, 0usize);
        for z in 40..n - 40 {
            for x in (b * n / 5 + 4).max(30)..((b + 1) * n / 5 - 4).min(n - 30) {
                land += m[z * n + x] as usize;
                all += 1;
            }
        }
        land as f64 / all as f64
    };
    let a = mask_for(1);
    let (white, g35, g50, g65, black) = (
        share(&a, 0),
        share(&a, 1),
        share(&a, 2),
        share(&a, 3),
        share(&a, 4),
    );
    println!("land share: white {white:.2}, grey 0.35 {g35:.2}, 0.5 {g50:.2}, 0.65 {g65:.2}, black {black:.2}");
    assert_eq!(white, 1.0);
    assert_eq!(black, 0.0);
    assert!((0.2..=0.8).contains(&g50), "mid grey is part land: {g50}");
    assert!(
        g35 < g50 && g50 < g65,
        "lighter grey, more land: {g35} {g50} {g65}"
    );
    // Another seed draws other coves in the grey, the same land in the white.
    let b = mask_for(2);
    let differ = (0..n * n).filter(|&i| a[i] != b[i]).count();
    assert!(
        differ > 100,
        "the seed shapes the grey parts: {differ} samples differ"
    );
    assert!((0..n * n)
        .filter(|&i| img[i] == 255 || img[i] == 0)
        .all(|i| a[i] == b[i]));
}

#[test]
fn resampled_mask_works() {
    let n = 257usize;
    let img = drawn(300, 180);
    let mut p = params(9, n as u32);
    p.coast_mask = Some(Arc::new(CoastMask::from_luma8(300, 180, &img).unwrap()));
    let mask = shape_mask(&p).unwrap();
    let (mut inter, mut uni) = (0usize, 0usize);
    for z in 0..n {
        for x in 0..n {
            let (ix, iz) = (x * 299 / (n - 1), z * 179 / (n - 1));
            let want = img[iz * 300 + ix] >= 128;
            let got = mask[z * n + x] == 1;
            inter += (want && got) as usize;
            uni += (want || got) as usize;
        }
    }
    let iou = inter as f64 / uni as f64;
    println!("resampled IoU {iou:.3}");
    assert!(iou >= 0.85, "IoU {iou}");
    generate(&p).unwrap();
}

#[test]
fn bad_masks_error() {
    assert!(CoastMask::from_luma8(0, 0, &[]).is_err());
    assert!(CoastMask::from_luma8(4, 4, &[0; 15]).is_err());
    assert_eq!(
        CoastMask::from_luma8(4, 4, &[0; 16]).unwrap_err().field,
        "coast_mask"
    );
    assert!(CoastMask::from_luma8(4, 4, &[255; 16]).is_err());
    assert!(CoastMask::from_values(2, 2, vec![0.0, 1.0, f32::NAN, 0.0]).is_err());
    // Land only in the sea border ring: no land left on the map.
    let n = 64;
    let mut img = vec![0u8; n * n];
    img[0] = 255;
    let mut p = params(1, 65);
    p.coast_mask = Some(Arc::new(CoastMask::from_luma8(n, n, &img).unwrap()));
    let e = generate(&p).unwrap_err();
    assert_eq!(e.field, "coast_mask", "{e}");
    assert!(generate_fields(&p).is_err());
}

#[test]
fn outline_does_not_depend_on_thread_count() {
    let pool = |t| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .unwrap()
    };
    let (one, two) = (pool(1), pool(2));
    for shape in IslandShape::ALL {
        let mut p = with_shape(11, 257, shape);
        p.shape.land_fraction = if shape == IslandShape::Round {
            0.25
        } else {
            0.0
        };
        let a = one.install(|| shape_mask(&p).unwrap());
        let b = two.install(|| shape_mask(&p).unwrap());
        assert!(a == b, "{}", shape.name());
    }
    let p = with_shape(12, 129, IslandShape::Volcanic);
    let a = one.install(|| generate(&p).unwrap());
    let b = two.install(|| generate(&p).unwrap());
    assert!(a.field.heights == b.field.heights);
}

#[test]
fn every_shape_generates_rivers_to_the_sea() {
    for shape in IslandShape::ALL {
        let p = with_shape(21, 257, shape);
        let island = generate(&p).unwrap();
        println!(
            "{}: land {:.3}, {} rivers, {} lakes",
            shape.name(),
            island.stats.land_fraction,
            island.stats.river_count,
            island.stats.lake_count
        );
        assert!(island.stats.land_fraction > 0.05, "{}", shape.name());
        assert!(island.field.heights.iter().all(|h| h.is_finite()));
        if shape != IslandShape::Atoll {
            assert!(island.stats.river_count > 0, "{}", shape.name());
        }
    }
}

#[test]
fn same_island_at_every_resolution() {
    // Same seed and shape: the outline at 129² is the 257² one subsampled, up to sampling.
    for shape in [
        IslandShape::Auto,
        IslandShape::Archipelago,
        IslandShape::Crescent,
    ] {
        let a = shape_mask(&with_shape(5, 129, shape)).unwrap();
        let b = shape_mask(&with_shape(5, 257, shape)).unwrap();
        let mut differ = 0;
        for z in 0..129 {
            for x in 0..129 {
                differ += (a[z * 129 + x] != b[2 * z * 257 + 2 * x]) as usize;
            }
        }
        let share = differ as f64 / (129.0 * 129.0);
        assert!(share < 0.02, "{}: {share}", shape.name());
    }
}
