//! Fuzz targets (proptest): the heightmap decoders and the splat paint never panic on anything,
//! and what they accept is well formed.
//!
//! `cargo test` runs each target for its default number of cases (bounded, a few seconds);
//! `cargo xtask fuzz` runs the same targets with `PROPTEST_CASES` raised (and the other
//! proptest files with it). A failure prints the minimal input; proptest also keeps it under
//! `proptest-regressions/` so it is replayed first next time.

use island_core::heightmap_io::{
    decode_png16, decode_r16, decode_r32, encode_png16, encode_r16, encode_r32, MAX_ABS_HEIGHT,
};
use island_core::paint::{
    compose_maps, fill_by_rule, stamp, stroke, Brush, Masks, Mode, PaintLayer, Rect, Surface,
    LAYERS,
};
use island_core::Heightfield;
use proptest::prelude::*;

mod common;
use common::{cases, wild_f32};

fn resolution() -> impl Strategy<Value = usize> {
    prop_oneof![
        Just(0usize),
        Just(1),
        Just(2),
        Just(33),
        Just(65),
        0usize..80
    ]
}

/// A valid 16-bit PNG of `n²` pixels with varied content, then `flips` bytes overwritten.
fn png_bytes(n: usize, seed: u32) -> Vec<u8> {
    let heights: Vec<f32> = (0..n * n)
        .map(|i| ((i as u32).wrapping_mul(2_654_435_761) ^ seed) as f32 / u32::MAX as f32)
        .collect();
    encode_png16(&heights, n, 0.0, 1.0).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), ..ProptestConfig::default() })]

    /// Any bytes: R16/R32/PNG16 decoding returns an error or exactly `resolution²` finite heights.
    #[test]
    fn decoders_never_panic_on_bytes(
        bytes in prop::collection::vec(any::<u8>(), 0..20_000),
        res in resolution(),
        lo in wild_f32(),
        hi in wild_f32(),
    ) {
        for h in [
            decode_r16(&bytes, res, lo, hi),
            decode_r32(&bytes, res),
            decode_png16(&bytes, res, lo, hi),
        ]
        .into_iter()
        .flatten()
        {
            prop_assert_eq!(h.len(), res * res);
            let bound = MAX_ABS_HEIGHT.max(lo.abs()).max(hi.abs());
            prop_assert!(h.iter().all(|v| v.is_finite() && v.abs() <= bound));
        }
    }

    /// A valid PNG with bytes overwritten (header, chunk lengths, CRCs, zlib data): an error or a
    /// well-formed map, never a panic or a huge allocation.
    #[test]
    fn png_decoder_survives_corruption(
        side in prop_oneof![Just(33usize), Just(65)],
        seed in any::<u32>(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..12),
    ) {
        let mut bytes = png_bytes(side, seed);
        for (at, v) in edits {
            let i = at.index(bytes.len());
            bytes[i] = v;
        }
        if let Ok(h) = decode_png16(&bytes, side, -10.0, 100.0) {
            prop_assert_eq!(h.len(), side * side);
            prop_assert!(h.iter().all(|v| (-10.0..=100.0).contains(v)));
        }
    }

    /// What the encoders write, the decoders read back (16-bit formats within half a step).
    #[test]
    fn encode_decode_round_trip(
        side in prop_oneof![Just(33usize), Just(65)],
        heights in prop::collection::vec(-500.0f32..2000.0, 65 * 65),
        lo in -600.0f32..-1.0,
        span in 1.0f32..3000.0,
    ) {
        let h = &heights[..side * side];
        let hi = lo + span;
        // Half a quantisation step, plus the f32 rounding of `lo + t · (hi − lo)`.
        let tol = (hi - lo) / 131_070.0 + 4.0 * f32::EPSILON * lo.abs().max(hi.abs());
        let r32 = decode_r32(&encode_r32(h), side).unwrap();
        prop_assert_eq!(&r32[..], h);
        let r16 = decode_r16(&encode_r16(h, lo, hi).unwrap(), side, lo, hi).unwrap();
        let png = decode_png16(&encode_png16(h, side, lo, hi).unwrap(), side, lo, hi).unwrap();
        for ((a, b), c) in h.iter().zip(&r16).zip(&png) {
            let want = a.clamp(lo, hi);
            prop_assert!((want - b).abs() <= tol, "r16 {} -> {}", a, b);
            prop_assert_eq!(b, c);
        }
    }

    /// The saved-paint decoder: any bytes give an error or a paint whose texels sum to ≤ 255 and
    /// which encodes back to an equal paint.
    #[test]
    fn paint_decoder_never_panics(
        bytes in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..4_000),
            // A valid header followed by noise reaches the run-length decoder.
            prop::collection::vec(any::<u8>(), 0..4_000).prop_map(|mut v| {
                let mut b = b"ISP1".to_vec();
                b.extend_from_slice(&33u32.to_le_bytes());
                b.append(&mut v);
                b
            }),
        ],
    ) {
        if let Ok(p) = PaintLayer::decode(&bytes) {
            prop_assert_eq!(p.data.len(), p.resolution * p.resolution);
            prop_assert!(p.data.iter().all(|t| t.iter().map(|&v| v as u32).sum::<u32>() <= 255));
            prop_assert_eq!(PaintLayer::decode(&p.encode()).unwrap(), p);
        }
    }
}

/// One paint operation with arbitrary (often invalid) values.
#[derive(Clone, Debug)]
enum Op {
    Stamp([f32; 2]),
    Stroke([f32; 2], [f32; 2]),
    Fill,
    Clear(usize),
    SetRegion(Rect, u8),
    Resample(usize),
}

fn op() -> impl Strategy<Value = Op> {
    let pos = (wild_f32(), wild_f32()).prop_map(|(a, b)| [a, b]);
    let near = (-80.0f32..80.0, -80.0f32..80.0).prop_map(|(a, b)| [a, b]);
    let pt = prop_oneof![3 => near, 1 => pos];
    prop_oneof![
        4 => pt.clone().prop_map(Op::Stamp),
        3 => (pt.clone(), pt).prop_map(|(a, b)| Op::Stroke(a, b)),
        1 => Just(Op::Fill),
        1 => (0usize..10).prop_map(Op::Clear),
        1 => (0usize..40, 0usize..40, 0usize..40, 0usize..40, any::<u8>())
            .prop_map(|(x0, z0, w, h, v)| Op::SetRegion(Rect { x0, z0, w, h }, v)),
        1 => prop_oneof![Just(0usize), Just(2), Just(17), Just(33), Just(65)].prop_map(Op::Resample),
    ]
}

fn brush() -> impl Strategy<Value = Brush> {
    let sane = (
        0usize..LAYERS,
        0usize..3,
        0.5f32..40.0,
        0.0f32..=1.0,
        0.0f32..=1.0,
        0.05f32..1.0,
    );
    let wild = (
        0usize..12,
        0usize..3,
        wild_f32(),
        wild_f32(),
        wild_f32(),
        wild_f32(),
    );
    (
        prop_oneof![3 => sane, 1 => wild],
        wild_f32(),
        wild_f32(),
        wild_f32(),
        -10.0f32..100.0,
    )
        .prop_map(
            |((layer, mode, radius, strength, hardness, spacing), a, b, c, minh)| {
                let mode = [Mode::Paint, Mode::Erase, Mode::Smooth][mode];
                let masks = Masks {
                    min_height: minh,
                    height_fade: if a.is_finite() { a.abs() % 20.0 } else { a },
                    min_slope: if b.is_finite() { b.abs() % 90.0 } else { b },
                    slope_fade: if c.is_finite() { c.abs() % 30.0 } else { c },
                    ..Masks::default()
                };
                Brush {
                    layer,
                    mode,
                    radius,
                    strength,
                    hardness,
                    masks,
                    spacing,
                }
            },
        )
}

/// A rough 33² terrain: heights and normals vary so masks and slopes matter.
fn terrain() -> Heightfield {
    let n = 33;
    let heights = (0..n * n)
        .map(|i| {
            let (x, z) = ((i % n) as f32, (i / n) as f32);
            (x * 0.4).sin() * 12.0 + (z * 0.3).cos() * 8.0 + x
        })
        .collect();
    Heightfield::new(n, 128.0, heights)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(200), ..ProptestConfig::default() })]

    /// Random sequences of stamps, strokes, fills, clears, region writes and resamples with
    /// arbitrary brushes: never a panic; invalid brushes are errors that change nothing; after
    /// every accepted operation each texel's paint sums to ≤ 255 and the visible weights to 255.
    #[test]
    fn paint_operations_keep_weights_valid(
        ops in prop::collection::vec((op(), brush()), 1..12),
    ) {
        let field = terrain();
        let n = field.resolution;
        let base: Vec<[u8; 4]> = (0..n * n)
            .map(|i| [(i % 256) as u8, 255 - (i % 256) as u8, 0, 0])
            .collect();
        let surf = Surface { field: &field, base: (&base).into() };
        let mut paint = PaintLayer::new(n);
        for (op, b) in ops {
            let before = paint.clone();
            let valid = b.validate().is_ok();
            let result = match op {
                Op::Stamp(c) => stamp(&mut paint, &surf, &b, c).map(|_| ()),
                Op::Stroke(a, c) => stroke(&mut paint, &surf, &b, a, c, None).map(|_| ()),
                Op::Fill => fill_by_rule(&mut paint, &surf, &b).map(|_| ()),
                Op::Clear(l) => paint.clear_layer(l).map(|_| ()),
                Op::SetRegion(r, v) => {
                    let bytes = vec![v / LAYERS as u8; r.w * r.h * LAYERS];
                    paint.set_region(r, &bytes)
                }
                Op::Resample(m) => {
                    // Resampling to another size and back keeps a paint of the right size.
                    if m >= 2 {
                        let r = paint.resample(m);
                        prop_assert_eq!(r.data.len(), m * m);
                        prop_assert!(r.data.iter().all(|t| t.iter().map(|&v| v as u32).sum::<u32>() <= 255));
                    }
                    Ok(())
                }
            };
            match (&op, result) {
                (Op::Stamp(_) | Op::Stroke(..) | Op::Fill, Err(_)) => {
                    prop_assert!(!valid, "a valid brush was refused: {:?}", b);
                    prop_assert_eq!(&paint, &before, "a refused operation changed the paint");
                }
                (Op::Stamp(_) | Op::Stroke(..) | Op::Fill, Ok(())) => prop_assert!(valid),
                (_, Err(_)) => prop_assert_eq!(&paint, &before),
                _ => {}
            }
            for (i, t) in paint.data.iter().enumerate() {
                prop_assert!(t.iter().map(|&v| v as u32).sum::<u32>() <= 255, "texel {} {:?}", i, t);
                let w = paint.weights(&base, i);
                prop_assert!(w.iter().all(|v| v.is_finite() && *v >= 0.0));
                prop_assert!((w.iter().sum::<f32>() - 255.0).abs() < 1e-2, "weights {:?}", w);
            }
            let all = Rect { x0: 0, z0: 0, w: n, h: n };
            let (a, c) = compose_maps(&paint, &base, all).unwrap();
            prop_assert_eq!(a.len(), n * n * 4);
            prop_assert_eq!(c.len(), n * n * 4);
        }
    }
}
