//! What the per-op probes (`tiny_add`, `tiny_sum`) share: the arguments `[ITERATIONS
//! [ELEMENTS]]`, the input (0, 1, 2, ... as f32) and the timing. `scripts/instructions.sh`
//! runs them under callgrind with two iteration counts to count one op's instructions.
use dlarray::{Array, Result};
use std::time::Instant;

/// Runs `op` on a fresh f32 vector of ELEMENTS (default `default_len`) ITERATIONS times
/// (default a million), each result dropped as the next is made, and prints the mean time.
/// With `PROBE_OWN` set the input is copied into the runtime's own (aligned, pooled) memory
/// instead of wrapping the `Vec`, to tell alignment effects from dispatch costs.
pub fn run(what: &str, default_len: usize, op: impl Fn(&Array) -> Result<Array>) -> Result<()> {
    let mut args = std::env::args().skip(1).map(|s| s.parse::<usize>().ok());
    let n = args.next().flatten().unwrap_or(1_000_000);
    let len = args.next().flatten().unwrap_or(default_len);
    let v: Vec<f32> = (0..len).map(|i| i as f32).collect();
    let a = if std::env::var_os("PROBE_OWN").is_some() {
        Array::from_slice(&v, &[len])?
    } else {
        Array::from_vec(v, &[len])?
    };
    let t = Instant::now();
    let mut last = a.clone();
    for _ in 0..n {
        last = op(&a)?;
    }
    let per = t.elapsed().as_nanos() as f64 / n.max(1) as f64;
    let tail = last.to_vec::<f32>()?.last().copied();
    println!("{per:.0} ns per {len}-element {what}; last ends {tail:?}");
    Ok(())
}
