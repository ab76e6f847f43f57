//! Per-op overhead probe: sums of 1K f32 to a 0-d array (`cargo run --release --example
//! tiny_sum`); a second argument sets the element count (`tiny_sum 3000000 8`).
use dlarray::{Array, Axes};
fn main() -> dlarray::Result<()> {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let len: usize = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1024);
    let a = Array::from_vec((0..len).map(|i| i as f32).collect(), &[len])?;
    let t = std::time::Instant::now();
    let mut last = a.clone();
    for _ in 0..n {
        last = a.sum(Axes::All)?;
    }
    let per = t.elapsed().as_nanos() as f64 / n as f64;
    println!(
        "{per:.0} ns per {len}-element sum; last = {:?}",
        last.to_vec::<f32>()?
    );
    Ok(())
}
