//! Splat painting: masks, falloff, dabs, strokes, erase, smooth, override model, resampling,
//! serialisation, ray marching.

use island_core::paint::*;
use island_core::Heightfield;

/// A ramp rising `slope_ratio` metres per metre along x, 0 m at the west edge.
fn ramp(res: usize, world: f32, slope_ratio: f32) -> Heightfield {
    let s = world / (res - 1) as f32;
    let heights = (0..res * res)
        .map(|i| (i % res) as f32 * s * slope_ratio)
        .collect();
    Heightfield::new(res, world, heights)
}

fn flat(res: usize, world: f32, h: f32) -> Heightfield {
    Heightfield::new(res, world, vec![h; res * res])
}

fn base_grass(n: usize) -> Vec<[u8; 4]> {
    vec![[0, 255, 0, 0]; n * n]
}

fn sum_ok(w: &[f32; LAYERS]) -> bool {
    (w.iter().sum::<f32>() - 255.0).abs() < 1e-3
}

#[test]
fn falloff_follows_hardness() {
    for h in [0.0f32, 0.25, 0.5, 0.9, 1.0] {
        assert_eq!(falloff(0.0, h), 1.0);
        assert_eq!(falloff(1.01, h), 0.0);
        assert_eq!(falloff(h * 0.999, h), 1.0, "flat core up to hardness {h}");
        let mut last = 1.0;
        for k in 0..=100 {
            let v = falloff(k as f32 / 100.0, h);
            assert!(v <= last + 1e-6 && (0.0..=1.0).contains(&v));
            last = v;
        }
    }
    assert!(falloff(0.99, 1.0) == 1.0);
    // Softer brushes give less at mid radius.
    assert!(falloff(0.6, 0.0) < falloff(0.6, 0.5));
    assert!(
        (falloff(0.5, 0.0) - 0.5).abs() < 1e-6,
        "smoothstep midpoint"
    );
    assert_eq!(falloff(f32::NAN, 0.5), 0.0);
}

#[test]
fn range_weight_fades_inside_and_is_zero_outside() {
    assert_eq!(range_weight(79.9, 80.0, 200.0, 5.0), 0.0);
    assert_eq!(range_weight(80.0, 80.0, 200.0, 5.0), 0.0);
    assert!(
        range_weight(82.5, 80.0, 200.0, 5.0) > 0.4 && range_weight(82.5, 80.0, 200.0, 5.0) < 0.6
    );
    assert_eq!(range_weight(90.0, 80.0, 200.0, 5.0), 1.0);
    assert_eq!(range_weight(200.1, 80.0, 200.0, 5.0), 0.0);
    assert_eq!(
        range_weight(80.0, 80.0, 200.0, 0.0),
        1.0,
        "hard edge includes the limit"
    );
    assert_eq!(range_weight(f32::NAN, 0.0, 1.0, 0.0), 0.0);
}

#[test]
fn brush_validation() {
    let ok = Brush::default();
    assert!(ok.validate().is_ok());
    for b in [
        Brush { layer: 8, ..ok },
        Brush { radius: 0.0, ..ok },
        Brush {
            radius: f32::NAN,
            ..ok
        },
        Brush {
            strength: 1.5,
            ..ok
        },
        Brush {
            hardness: -0.1,
            ..ok
        },
        Brush { spacing: 0.0, ..ok },
        Brush {
            masks: Masks {
                min_height: 10.0,
                max_height: 5.0,
                ..Masks::default()
            },
            ..ok
        },
        Brush {
            masks: Masks {
                slope_fade: -1.0,
                ..Masks::default()
            },
            ..ok
        },
    ] {
        assert!(
            matches!(b.validate(), Err(PaintError::InvalidBrush(_))),
            "{b:?}"
        );
    }
}

#[test]
fn quantize_keeps_totals() {
    let q = quantize_to_total(&[1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0], 255);
    assert_eq!(q.iter().map(|&v| v as u32).sum::<u32>(), 255);
    assert_eq!(q, [85, 85, 85, 0, 0, 0, 0, 0]);
    let q = quantize_to_total(&[0.3, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.2], 100);
    assert_eq!(q, [60, 0, 0, 0, 0, 0, 0, 40]);
    assert_eq!(quantize_to_total(&[0.0; 8], 255), [0; 8]);
}

#[test]
fn paint_increases_layer_and_keeps_weights_normalised() {
    let f = flat(65, 64.0, 10.0);
    let base = base_grass(65);
    let surf = Surface {
        field: &f,
        base: (&base).into(),
    };
    let mut p = PaintLayer::new(65);
    let brush = Brush {
        layer: 3,
        strength: 0.5,
        hardness: 0.5,
        radius: 8.0,
        ..Brush::default()
    };
    let c = stamp(&mut p, &surf, &brush, [0.0, 0.0]).unwrap();
    // Disc of radius 8 at 1 m spacing: about π·64 ≈ 201 texels, the outer ring gets ~0.
    assert!(c.texels > 150 && c.texels <= 225, "{c:?}");
    let centre = 32 * 65 + 32;
    let w = p.weights(&base, centre);
    assert!(sum_ok(&w));
    assert!(
        (w[3] - 127.5).abs() <= 1.0,
        "half strength at the centre: {w:?}"
    );
    // A second dab increases it further; every texel stays normalised.
    stamp(&mut p, &surf, &brush, [0.0, 0.0]).unwrap();
    let w2 = p.weights(&base, centre);
    assert!(w2[3] > w[3] + 50.0);
    for i in 0..65 * 65 {
        assert!(sum_ok(&p.weights(&base, i)), "texel {i}");
        assert!(p.data[i].iter().map(|&v| v as u32).sum::<u32>() <= 255);
    }
    // Falloff: the texel at 6 m gets less than the one at 2 m.
    let w_near = p.weights(&base, 32 * 65 + 34)[3];
    let w_far = p.weights(&base, 32 * 65 + 38)[3];
    assert!(w_near > w_far && w_far > 0.0, "{w_near} {w_far}");
    // Far away nothing changed.
    assert_eq!(p.data[0], [0; 8]);
}

#[test]
fn masks_block_painting_outside_height_and_slope() {
    // Ramp rising 1 m per metre (45°) from 0 m at x=-32 to 64 m at x=+32.
    let f = ramp(65, 64.0, 1.0);
    let base = base_grass(65);
    let surf = Surface {
        field: &f,
        base: (&base).into(),
    };
    let mut p = PaintLayer::new(65);
    // Height range 80..200: entirely above the ramp -> nothing.
    let high = Brush {
        layer: 3,
        strength: 1.0,
        hardness: 1.0,
        radius: 40.0,
        masks: Masks {
            min_height: 80.0,
            max_height: 200.0,
            height_fade: 2.0,
            ..Masks::default()
        },
        ..Brush::default()
    };
    assert_eq!(stamp(&mut p, &surf, &high, [0.0, 0.0]).unwrap().texels, 0);
    assert!(p.is_empty());
    assert_eq!(fill_by_rule(&mut p, &surf, &high).unwrap().texels, 0);
    assert!(p.is_empty());
    // Slope under 35°: the ramp is 45° -> nothing.
    let gentle = Brush {
        masks: Masks {
            max_slope: 35.0,
            slope_fade: 5.0,
            ..Masks::default()
        },
        ..high
    };
    assert_eq!(stamp(&mut p, &surf, &gentle, [0.0, 0.0]).unwrap().texels, 0);
    assert_eq!(fill_by_rule(&mut p, &surf, &gentle).unwrap().texels, 0);
    assert!(p.is_empty());
    // Height range 20..40 with fade 5: only columns with those heights change; full weight
    // beyond the fade.
    let band = Brush {
        masks: Masks {
            min_height: 20.0,
            max_height: 40.0,
            height_fade: 5.0,
            ..Masks::default()
        },
        ..high
    };
    let c = fill_by_rule(&mut p, &surf, &band).unwrap();
    assert!(c.texels > 0);
    for z in 0..65 {
        for x in 0..65 {
            let h = x as f32;
            let w = p.weights(&base, z * 65 + x)[3];
            if h <= 20.0 || h >= 40.0 {
                assert_eq!(w, 0.0, "h {h}");
            } else if (25.0..=35.0).contains(&h) {
                assert!((w - 255.0).abs() < 0.5, "h {h} w {w}");
            } else {
                assert!(w > 0.0 && w < 255.0, "fade at h {h}: {w}");
            }
        }
    }
}

#[test]
fn snow_above_80m_under_35_degrees() {
    // Plateau at 100 m on the right half with a 60° cliff in between, flat 10 m on the left.
    let n = 129;
    let world = 128.0;
    let heights: Vec<f32> = (0..n * n)
        .map(|i| {
            let x = (i % n) as f32 - 64.0;
            if x < -5.0 {
                10.0
            } else if x > 5.0 {
                100.0
            } else {
                55.0 + x * 9.0
            }
        })
        .collect();
    let f = Heightfield::new(n, world, heights);
    let base = base_grass(n);
    let surf = Surface {
        field: &f,
        base: (&base).into(),
    };
    let mut p = PaintLayer::new(n);
    let snow = Brush {
        layer: 3,
        strength: 1.0,
        masks: Masks {
            min_height: 80.0,
            max_height: 1e5,
            height_fade: 0.0,
            min_slope: 0.0,
            max_slope: 35.0,
            slope_fade: 0.0,
        },
        ..Brush::default()
    };
    fill_by_rule(&mut p, &surf, &snow).unwrap();
    let row = 64 * n;
    assert_eq!(p.weights(&base, row + 20)[3], 0.0, "low flat");
    assert_eq!(p.weights(&base, row + 64)[3], 0.0, "cliff");
    assert!(
        (p.weights(&base, row + 120)[3] - 255.0).abs() < 0.5,
        "plateau"
    );
}

#[test]
fn erase_and_clear_layer() {
    let f = flat(65, 64.0, 10.0);
    let base = base_grass(65);
    let surf = Surface {
        field: &f,
        base: (&base).into(),
    };
    let mut p = PaintLayer::new(65);
    let paint = Brush {
        layer: 5,
        strength: 1.0,
        hardness: 1.0,
        radius: 5.0,
        ..Brush::default()
    };
    stamp(&mut p, &surf, &paint, [0.0, 0.0]).unwrap();
    let c = 32 * 65 + 32;
    assert_eq!(p.weights(&base, c)[5], 255.0);
    let erase = Brush {
        mode: Mode::Erase,
        strength: 0.5,
        ..paint
    };
    stamp(&mut p, &surf, &erase, [0.0, 0.0]).unwrap();
    let w = p.weights(&base, c);
    assert!(sum_ok(&w));
    assert!((w[5] - 127.5).abs() <= 1.0, "{w:?}");
    // Erasing a layer that is all the texel's weight falls back to the base (grass).
    assert!(w[1] > 120.0, "{w:?}");
    // Full erase removes the layer.
    let erase_all = Brush {
        strength: 1.0,
        ..erase
    };
    stamp(&mut p, &surf, &erase_all, [0.0, 0.0]).unwrap();
    let w = p.weights(&base, c);
    assert_eq!(w[5], 0.0);
    assert!(sum_ok(&w));
    // Erasing a layer that is not there changes nothing.
    let before = p.clone();
    assert_eq!(
        stamp(
            &mut p,
            &surf,
            &Brush {
                layer: 6,
                ..erase_all
            },
            [0.0, 0.0]
        )
        .unwrap()
        .texels,
        0
    );
    assert_eq!(p, before);
    // Erase a base layer (grass) -> it goes to zero at full strength.
    let mut q = PaintLayer::new(65);
    stamp(
        &mut q,
        &surf,
        &Brush {
            layer: 1,
            ..erase_all
        },
        [0.0, 0.0],
    )
    .unwrap();
    assert_eq!(q.weights(&base, c)[1], 0.0);
    // clear_layer removes the paint of that layer only.
    let mut r = PaintLayer::new(65);
    stamp(&mut r, &surf, &paint, [0.0, 0.0]).unwrap();
    stamp(
        &mut r,
        &surf,
        &Brush {
            layer: 4,
            strength: 0.5,
            ..paint
        },
        [10.0, 10.0],
    )
    .unwrap();
    let changed = r.clear_layer(5).unwrap();
    assert!(changed > 50);
    assert!(r.data.iter().all(|t| t[5] == 0));
    assert!(r.data.iter().any(|t| t[4] > 0));
    assert_eq!(
        r.weights(&base, c),
        [0.0, 255.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    );
    assert!(r.clear_layer(8).is_err());
}

#[test]
fn smooth_blends_a_hard_edge() {
    let f = flat(65, 64.0, 10.0);
    let base = base_grass(65);
    let surf = Surface {
        field: &f,
        base: (&base).into(),
    };
    let mut p = PaintLayer::new(65);
    // Paint the right half with layer 2 by rule: masks can't split by x, so paint columns by dabs.
    let hard = Brush {
        layer: 2,
        strength: 1.0,
        hardness: 1.0,
        radius: 0.5,
        spacing: 0.5,
        ..Brush::default()
    };
    for z in 0..65 {
        let zz = z as f32 - 32.0;
        stroke(&mut p, &surf, &hard, [0.0, zz], [32.0, zz], None).unwrap();
    }
    let row = 32 * 65;
    assert_eq!(p.weights(&base, row + 31)[2], 0.0);
    assert_eq!(p.weights(&base, row + 32)[2], 255.0);
    let smooth = Brush {
        mode: Mode::Smooth,
        strength: 1.0,
        hardness: 1.0,
        radius: 12.0,
        ..Brush::default()
    };
    let c = stamp(&mut p, &surf, &smooth, [0.0, 0.0]).unwrap();
    assert!(c.texels > 0);
    let l = p.weights(&base, row + 31);
    let r = p.weights(&base, row + 32);
    assert!(
        l[2] > 50.0 && l[2] < 205.0,
        "left of the edge now partly rock: {l:?}"
    );
    assert!(
        r[2] > 50.0 && r[2] < 205.0,
        "right of the edge now partly grass: {r:?}"
    );
    assert!(sum_ok(&l) && sum_ok(&r));
    // Far from the edge inside the brush nothing changes (uniform neighbourhood).
    assert_eq!(p.weights(&base, row + 22)[2], 0.0);
}

#[test]
fn stroke_spacing() {
    let (pts, carry) = stroke_points([0.0, 0.0], [10.0, 0.0], 2.5, None);
    assert_eq!(pts.len(), 5);
    assert_eq!(pts[4], [10.0, 0.0]);
    assert!(carry.abs() < 1e-5);
    let (pts, carry) = stroke_points([0.0, 0.0], [4.0, 0.0], 3.0, None);
    assert_eq!(pts, vec![[0.0, 0.0], [3.0, 0.0]]);
    assert!((carry - 1.0).abs() < 1e-5);
    // Continuing: next dab 2 m into the next segment.
    let (pts, carry) = stroke_points([4.0, 0.0], [8.0, 0.0], 3.0, Some(carry));
    assert_eq!(pts, vec![[6.0, 0.0]]);
    assert!((carry - 2.0).abs() < 1e-5);
    // A short segment with no dab accumulates the carry.
    let (pts, carry) = stroke_points([8.0, 0.0], [8.5, 0.0], 3.0, Some(carry));
    assert!(pts.is_empty());
    assert!((carry - 2.5).abs() < 1e-5);
    // Dabs of a painted stroke follow the spacing.
    let f = flat(65, 64.0, 1.0);
    let base = base_grass(65);
    let surf = Surface {
        field: &f,
        base: (&base).into(),
    };
    let mut p = PaintLayer::new(65);
    let b = Brush {
        layer: 4,
        strength: 1.0,
        hardness: 1.0,
        radius: 1.0,
        spacing: 8.0,
        ..Brush::default()
    };
    stroke(&mut p, &surf, &b, [-16.0, 0.0], [16.0, 0.0], None).unwrap();
    let painted: Vec<usize> = (0..65).filter(|x| p.data[32 * 65 + x][4] > 0).collect();
    assert_eq!(
        painted,
        vec![15, 16, 17, 23, 24, 25, 31, 32, 33, 39, 40, 41, 47, 48, 49]
    );
}

#[test]
fn regenerate_keeps_paint_and_resample_preserves_it() {
    let f = flat(65, 64.0, 10.0);
    let base = base_grass(65);
    let surf = Surface {
        field: &f,
        base: (&base).into(),
    };
    let mut p = PaintLayer::new(65);
    let b = Brush {
        layer: 6,
        strength: 0.8,
        hardness: 0.7,
        radius: 10.0,
        ..Brush::default()
    };
    stamp(&mut p, &surf, &b, [0.0, 0.0]).unwrap();
    // New base (a "regenerated" island: all sand): painted texels keep their paint, the rest
    // shows the new base.
    let sand = vec![[255u8, 0, 0, 0]; 65 * 65];
    let c = 32 * 65 + 32;
    let w_old = p.weights(&base, c);
    let w_new = p.weights(&sand, c);
    assert_eq!(w_old[6], w_new[6]);
    assert!((w_new[6] - 204.0).abs() <= 1.0);
    assert_eq!(p.weights(&sand, 0)[0], 255.0);
    // Resample to 129² and back: same coverage within rounding.
    let up = p.resample(129);
    assert_eq!(up.resolution, 129);
    assert_eq!(up.data[64 * 129 + 64], p.data[c]);
    let total = |q: &PaintLayer| {
        q.data.iter().map(|t| t[6] as f64).sum::<f64>() / (q.resolution * q.resolution) as f64
    };
    assert!((total(&up) - total(&p)).abs() / total(&p) < 0.05);
    let down = up.resample(65);
    for (a, b) in down.data.iter().zip(&p.data) {
        assert!((a[6] as i32 - b[6] as i32).abs() <= 1);
    }
    assert_eq!(p.resample(65), p);
}

#[test]
fn encode_decode_round_trip_and_rejects_garbage() {
    let f = flat(65, 64.0, 10.0);
    let base = base_grass(65);
    let surf = Surface {
        field: &f,
        base: (&base).into(),
    };
    let mut p = PaintLayer::new(65);
    stamp(
        &mut p,
        &surf,
        &Brush {
            layer: 3,
            radius: 6.0,
            ..Brush::default()
        },
        [5.0, -3.0],
    )
    .unwrap();
    let bytes = p.encode();
    assert!(
        bytes.len() < 65 * 65 * 8 / 4,
        "zeros are run-length encoded: {}",
        bytes.len()
    );
    assert_eq!(PaintLayer::decode(&bytes).unwrap(), p);
    let empty = PaintLayer::new(1025);
    let e = empty.encode();
    assert!(e.len() < 32);
    assert_eq!(PaintLayer::decode(&e).unwrap(), empty);
    assert!(PaintLayer::decode(b"nope").is_err());
    assert!(PaintLayer::decode(&bytes[..bytes.len() - 3]).is_err());
    let mut extra = bytes.clone();
    extra.push(7);
    assert!(PaintLayer::decode(&extra).is_err());
    let mut big = PaintLayer::new(3).encode();
    big[4] = 0xff;
    big[7] = 0x7f;
    assert!(PaintLayer::decode(&big).is_err());
}

#[test]
fn regions_round_trip_for_undo() {
    let f = flat(65, 64.0, 10.0);
    let base = base_grass(65);
    let surf = Surface {
        field: &f,
        base: (&base).into(),
    };
    let mut p = PaintLayer::new(65);
    let before_all = p.clone();
    let b = Brush {
        layer: 2,
        strength: 0.7,
        radius: 5.0,
        ..Brush::default()
    };
    let (ch, _) = stroke(&mut p, &surf, &b, [-10.0, 0.0], [10.0, 4.0], None).unwrap();
    assert!(ch.texels > 0 && !ch.rect.is_empty());
    let before = before_all.region(ch.rect).unwrap();
    let after = p.region(ch.rect).unwrap();
    let mut q = p.clone();
    q.set_region(ch.rect, &before).unwrap();
    assert_eq!(q, before_all, "undo restores exactly");
    q.set_region(ch.rect, &after).unwrap();
    assert_eq!(q, p, "redo restores exactly");
    assert!(q.set_region(ch.rect, &after[1..]).is_err());
    assert!(q
        .region(Rect {
            x0: 60,
            z0: 0,
            w: 10,
            h: 1
        })
        .is_err());
    let mut bad = after.clone();
    bad[0] = 255;
    bad[1] = 255;
    assert!(q.set_region(ch.rect, &bad).is_err());
}

#[test]
fn compose_maps_sum_to_255() {
    let f = ramp(65, 64.0, 0.5);
    let base: Vec<[u8; 4]> = (0..65 * 65)
        .map(|i| {
            if i % 2 == 0 {
                [100, 100, 55, 0]
            } else {
                [0, 0, 0, 255]
            }
        })
        .collect();
    let surf = Surface {
        field: &f,
        base: (&base).into(),
    };
    let mut p = PaintLayer::new(65);
    stamp(
        &mut p,
        &surf,
        &Brush {
            layer: 7,
            strength: 0.6,
            radius: 10.0,
            ..Brush::default()
        },
        [0.0, 0.0],
    )
    .unwrap();
    let all = Rect::full(65);
    let (a, b) = compose_maps(&p, &base, all).unwrap();
    for i in 0..65 * 65 {
        let s: u32 = a[i * 4..i * 4 + 4]
            .iter()
            .chain(&b[i * 4..i * 4 + 4])
            .map(|&v| v as u32)
            .sum();
        assert_eq!(s, 255);
    }
    assert_eq!(&a[0..4], &[100, 100, 55, 0]);
    assert!(b[(32 * 65 + 32) * 4 + 3] > 140);
    let w = weights_at(&p, &surf, 0.0, 0.0).unwrap();
    assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-5);
    assert!(w[7] > 0.55);
}

#[test]
fn mismatched_paint_is_an_error() {
    let f = flat(65, 64.0, 10.0);
    let base = base_grass(65);
    let surf = Surface {
        field: &f,
        base: (&base).into(),
    };
    let mut p = PaintLayer::new(33);
    assert!(matches!(
        stamp(&mut p, &surf, &Brush::default(), [0.0, 0.0]),
        Err(PaintError::Mismatch(_))
    ));
    let short = vec![[0u8; 4]; 10];
    let surf2 = Surface {
        field: &f,
        base: (&short).into(),
    };
    let mut q = PaintLayer::new(65);
    assert!(fill_by_rule(&mut q, &surf2, &Brush::default()).is_err());
}

#[test]
fn ray_march_hits_the_surface() {
    let f = ramp(129, 128.0, 0.5);
    // Straight down onto x = 10: height 0.5 * (10 + 64) = 37.
    let hit = ray_march(&f, [10.0, 500.0, -3.0], [0.0, -1.0, 0.0], 1000.0).unwrap();
    assert!(
        (hit[1] - 37.0).abs() < 1e-3 && (hit[0] - 10.0).abs() < 1e-4,
        "{hit:?}"
    );
    // Oblique ray.
    let o = [-100.0, 200.0, 0.0];
    let d = [1.0, -1.0, 0.2];
    let hit = ray_march(&f, o, d, 1000.0).unwrap();
    assert!(
        (hit[1] - f.height_at(hit[0], hit[2])).abs() < 1e-2,
        "{hit:?}"
    );
    // Misses: pointing up, outside the map, too short.
    assert!(ray_march(&f, [0.0, 200.0, 0.0], [0.0, 1.0, 0.0], 1000.0).is_none());
    assert!(ray_march(&f, [500.0, 200.0, 0.0], [0.0, -1.0, 0.0], 1000.0).is_none());
    assert!(ray_march(&f, [0.0, 200.0, 0.0], [0.0, -1.0, 0.0], 10.0).is_none());
    assert!(ray_march(&f, [0.0, 200.0, 0.0], [0.0, 0.0, 0.0], 10.0).is_none());
}
