//! Per-op overhead probe: a million 8-element adds (`cargo run --release --example tiny_add`);
//! arguments `[ITERATIONS [ELEMENTS]]` (`tiny_add 3000000 1024`).
#[path = "probe/mod.rs"]
mod probe;

fn main() -> dlarray::Result<()> {
    probe::run("add", 8, |a| a + a)
}
