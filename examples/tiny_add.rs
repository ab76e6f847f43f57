//! Per-op overhead probe: a million 8-element adds (`cargo run --release --example tiny_add`);
//! a second argument sets the element count (`tiny_add 3000000 1024`).
use dlarray::Array;
fn main() -> dlarray::Result<()> {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let len: usize = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(8);
    let a = Array::from_vec((0..len).map(|i| i as f32).collect(), &[len])?;
    let t = std::time::Instant::now();
    let mut last = a.clone();
    for _ in 0..n {
        last = (&a + &a)?;
    }
    let per = t.elapsed().as_nanos() as f64 / n as f64;
    println!(
        "{per:.0} ns per {len}-element add; last ends {:?}",
        last.to_vec::<f32>()?.last()
    );
    Ok(())
}
