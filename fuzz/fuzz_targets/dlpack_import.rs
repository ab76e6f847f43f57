//! Fuzzes DLPack import with arbitrary managed tensors (see the harness for what is checked).
#![no_main]

#[path = "../../tests/common/dlpack_fuzz.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    harness::run(data);
});
