//! Per-op overhead probe: a million sums of 1K f32 to a 0-d array (`cargo run --release
//! --example tiny_sum`); arguments `[ITERATIONS [ELEMENTS]]` (`tiny_sum 3000000 8`).
#[path = "probe/mod.rs"]
mod probe;

fn main() -> dlarray::Result<()> {
    probe::run("sum", 1024, |a| a.sum(dlarray::Axes::All))
}
