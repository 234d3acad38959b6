//! Time the fBm stage alone: `cargo run --release -p island_core --example fbm_time [resolution]`.
//! Prints the best of 5 for `fbm_noise` (8 octaves of the default fBm settings, fresh output
//! allocation per call).
use island_core::gradient_noise::fbm_noise;
use island_core::params::FbmParams;
use island_core::Grid;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(1025);
    let grid = Grid::new(n, 1024.0, 1);
    let fbm = FbmParams::default();
    let per = |t: f64| t * 1e9 / (n * n * fbm.octaves as usize) as f64;
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = std::time::Instant::now();
        let f = fbm_noise(&grid, &fbm, 1);
        std::hint::black_box(&f);
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!(
        "fbm_noise {} oct {n}^2: {:.2} ms, {:.3} ns/octave-sample",
        fbm.octaves,
        best * 1e3,
        per(best)
    );
}
