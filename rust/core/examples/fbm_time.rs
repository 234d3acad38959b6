//! Time the fBm stage alone: `cargo run --release -p island_core --example fbm_time [resolution]`.
fn main() {
    let n: usize = std::env::args().nth(1).map(|s| s.parse().unwrap()).unwrap_or(1025);
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = std::time::Instant::now();
        let f = island_core::gradient_noise::fbm_noise(n, 1024.0, 400.0, 8, 2.0, 0.5, 1, 1);
        std::hint::black_box(&f);
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!("fbm 8 oct {n}^2: {:.2} ms, {:.3} ns/octave-sample", best * 1e3, best * 1e9 / (n * n * 8) as f64);
}
