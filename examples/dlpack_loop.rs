//! Round-trip probe: export + import of one array, many times
//! (`cargo run --release --example dlpack_loop -- 1000000`).
use dlarray::{Array, DType};
fn main() -> dlarray::Result<()> {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let x = Array::zeros(&[256], DType::F32)?;
    let t = std::time::Instant::now();
    for _ in 0..n {
        let back = Array::from_dlpack(x.to_dlpack()?)?;
        std::hint::black_box(back);
    }
    println!(
        "{:.0} ns per round trip",
        t.elapsed().as_nanos() as f64 / n as f64
    );
    Ok(())
}
