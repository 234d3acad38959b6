//! Time the fBm stage alone: `cargo run --release -p island_core --example fbm_time [resolution]`.
//! Prints the best of 5 for `fbm_noise` (fresh output allocation per call) and `fbm_into`
//! (output buffer reused, as repeated generations do).
fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(1025);
    let step = 1024.0 / (n - 1) as f32 / 500.0;
    let s = island_core::hash::stage_seed(1, 1);
    let per = |t: f64| t * 1e9 / (n * n * 8) as f64;
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = std::time::Instant::now();
        let f = island_core::gradient_noise::fbm_noise(n, 1024.0, 500.0, 8, 2.0, 0.5, 1, 1);
        std::hint::black_box(&f);
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!(
        "fbm_noise 8 oct {n}^2: {:.2} ms, {:.3} ns/octave-sample",
        best * 1e3,
        per(best)
    );
    let mut out = vec![0.0f32; n * n];
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = std::time::Instant::now();
        island_core::gradient_noise::fbm_into(&mut out, n, step, [0.0, 0.0], 8, 2.0, 0.5, s);
        std::hint::black_box(&out);
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!(
        "fbm_into  8 oct {n}^2: {:.2} ms, {:.3} ns/octave-sample",
        best * 1e3,
        per(best)
    );
}
