//! The DLPack import fuzz harness in the ordinary test suite: the committed corpus of the fuzz
//! target (`fuzz/corpus/dlpack_import`, grown by `scripts/fuzz.sh`) replayed as regression
//! cases, plus inputs from a fixed pseudo-random stream, so every CI run covers it.

mod common;

use common::dlpack_fuzz::run;

#[test]
fn the_fuzz_corpus_replays_cleanly() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/dlpack_import");
    let mut n = 0;
    let mut accepted = 0;
    for entry in std::fs::read_dir(&dir).expect("the committed corpus") {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        accepted += usize::from(run(&bytes));
        n += 1;
    }
    assert!(n >= 1, "no corpus in {}", dir.display());
    println!("replayed {n} corpus inputs, {accepted} accepted");
}

#[test]
fn pseudo_random_tensors() {
    // xorshift64*: the same 20,000 inputs on every run.
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut accepted = 0;
    for _ in 0..20_000 {
        let mut bytes = [0u8; 64];
        for b in bytes.iter_mut() {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            *b = (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 56) as u8;
        }
        accepted += usize::from(run(&bytes));
    }
    // Both outcomes are exercised.
    assert!(accepted > 100 && accepted < 19_900, "{accepted} accepted");
}
