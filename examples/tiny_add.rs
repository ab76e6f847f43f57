//! Per-op overhead probe: a million 8-element adds (`cargo run --release --example tiny_add`).
use dlarray::Array;
fn main() -> dlarray::Result<()> {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let a = Array::from_vec((0..8).map(|i| i as f32).collect(), &[8])?;
    let t = std::time::Instant::now();
    let mut last = a.clone();
    for _ in 0..n {
        last = (&a + &a)?;
    }
    let per = t.elapsed().as_nanos() as f64 / n as f64;
    println!(
        "{per:.0} ns per 8-element add; last = {:?}",
        last.to_vec::<f32>()?
    );
    Ok(())
}
