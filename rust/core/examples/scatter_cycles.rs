//! Scratch: run the demo layers N times (argument) on one thread, for `perf stat`.
use island_core::scatter::{demo_layers, place_all, ScatterInput};
use island_core::{generate, IslandParams};
fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let only: Option<usize> = std::env::args().nth(2).and_then(|s| s.parse().ok());
    let island = generate(&IslandParams::default()).unwrap();
    let input = ScatterInput::from_island(&island);
    let mut layers = demo_layers();
    if let Some(k) = only {
        layers = vec![layers[k].clone()];
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let mut c = 0;
    pool.install(|| {
        for _ in 0..n {
            c += place_all(&input, &layers, &[], 1, 64)
                .unwrap()
                .iter()
                .map(|p| p.len())
                .sum::<usize>();
        }
    });
    println!("{c}");
}
