//! Painting benchmark: a 100-dab stroke of radius 20 m on a generated 1025² island (1 m
//! spacing), plus recomposing the touched region of the two RGBA8 splat maps.

use criterion::{criterion_group, criterion_main, Criterion};
use island_core::paint::{compose_maps, stroke, Brush, Masks, Mode, PaintLayer, Surface};
use island_core::{generate, IslandParams};
use std::hint::black_box;

fn bench_paint(c: &mut Criterion) {
    let params = IslandParams {
        resolution: 1025,
        ..IslandParams::default()
    };
    let island = generate(&params).expect("default island");
    let surf = Surface {
        field: &island.field,
        base: island.base_splat(),
    };
    let brush = Brush {
        layer: 3,
        mode: Mode::Paint,
        radius: 20.0,
        strength: 0.5,
        hardness: 0.5,
        masks: Masks {
            min_height: 0.0,
            max_height: 1e5,
            height_fade: 2.0,
            min_slope: 0.0,
            max_slope: 60.0,
            slope_fade: 5.0,
        },
        spacing: 0.1,
    };
    // 100 dabs: 99 steps of 2 m.
    let (from, to) = ([-99.0f32, 10.0f32], [99.0f32, 10.0f32]);
    let mut g = c.benchmark_group("paint");
    g.sample_size(20);
    g.bench_function("stroke_100_dabs_r20_1025", |b| {
        b.iter_batched_ref(
            || PaintLayer::new(1025),
            |paint| {
                let (ch, _) = stroke(paint, &surf, &brush, from, to, None).expect("stroke");
                black_box(ch)
            },
            criterion::BatchSize::LargeInput,
        )
    });
    g.bench_function("stroke_100_dabs_r20_1025_with_maps", |b| {
        b.iter_batched_ref(
            || PaintLayer::new(1025),
            |paint| {
                let (ch, _) = stroke(paint, &surf, &brush, from, to, None).expect("stroke");
                black_box(compose_maps(paint, &island.splat, ch.rect).expect("maps"))
            },
            criterion::BatchSize::LargeInput,
        )
    });
    for mode in [Mode::Erase, Mode::Smooth] {
        let b2 = Brush { mode, ..brush };
        let mut base_paint = PaintLayer::new(1025);
        stroke(&mut base_paint, &surf, &brush, from, to, None).expect("stroke");
        g.bench_function(
            format!("stroke_100_dabs_r20_1025_{mode:?}").to_lowercase(),
            |b| {
                b.iter_batched_ref(
                    || base_paint.clone(),
                    |paint| black_box(stroke(paint, &surf, &b2, from, to, None).expect("stroke")),
                    criterion::BatchSize::LargeInput,
                )
            },
        );
    }
    g.finish();
}

criterion_group!(benches, bench_paint);
criterion_main!(benches);
