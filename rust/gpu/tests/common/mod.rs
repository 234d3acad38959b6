//! Shared by the GPU test files: whether a compute adapter is there.

/// True when the GPU is there; otherwise prints the skip line (or panics when required).
pub fn gpu(name: &str) -> bool {
    match island_gpu::adapter_info() {
        Some(a) => {
            println!("{name}: adapter {a}");
            true
        }
        None => {
            let why = island_gpu::adapter_error().unwrap_or_default();
            if std::env::var("ISLAND_REQUIRE_GPU").is_ok_and(|v| v == "1") {
                panic!("{name}: ISLAND_REQUIRE_GPU=1 but no GPU adapter ({why})");
            }
            println!("SKIPPED: {name}: no GPU adapter ({why})");
            false
        }
    }
}
