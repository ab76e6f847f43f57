//! Per-op overhead probe: sums of 1K f32 (`cargo run --release --example tiny_sum`).
use dlarray::{Array, Axes};
fn main() -> dlarray::Result<()> {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let a = Array::from_vec((0..1024).map(|i| i as f32).collect(), &[1024])?;
    let t = std::time::Instant::now();
    let mut last = a.clone();
    for _ in 0..n {
        last = a.sum(Axes::All)?;
    }
    let per = t.elapsed().as_nanos() as f64 / n as f64;
    println!("{per:.0} ns per 1K sum; last = {:?}", last.to_vec::<f32>()?);
    Ok(())
}
