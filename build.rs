//! Build script: only feature `tch` needs one. It compiles `src/interop/tch/blob.cpp` (a
//! torch tensor over our memory with a deleter, which tch lacks) against the libtorch that
//! torch-sys found, and passes the link arguments tch's own build script cannot pass on to
//! the binaries of a dependent (tch-rs#980): an rpath to libtorch, so tests and examples run
//! without `LD_LIBRARY_PATH`, and, for the examples, `--no-as-needed -ltorch`, which keeps
//! `libtorch_cuda` loaded on a GPU machine.

#[cfg(feature = "tch")]
use std::{env, path::PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "tch")]
    tch();
}

#[cfg(feature = "tch")]
fn tch() {
    println!("cargo:rerun-if-changed=src/interop/tch/blob.cpp");
    // torch-sys has `links = "tch"` and prints `cargo:libtorch_lib=...`.
    let lib = PathBuf::from(
        env::var("DEP_TCH_LIBTORCH_LIB").expect("torch-sys did not report its libtorch lib dir"),
    );
    let include = lib.parent().map(|p| p.join("include")).unwrap_or_default();
    let abi = env::var("LIBTORCH_CXX11_ABI").unwrap_or_else(|_| "1".into());
    println!("cargo:rerun-if-env-changed=LIBTORCH_CXX11_ABI");
    cc::Build::new()
        .cpp(true)
        .file("src/interop/tch/blob.cpp")
        .include(&include)
        .include(include.join("torch/csrc/api/include"))
        .flag_if_supported("-std=c++17")
        .flag_if_supported("-w")
        .define("_GLIBCXX_USE_CXX11_ABI", abi.as_str())
        .compile("dlarray_tch_blob");
    let target = env::var("TARGET").unwrap_or_default();
    if !target.contains("msvc") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
    }
    if target.contains("linux") {
        println!("cargo:rustc-link-arg-examples=-Wl,--no-as-needed");
        println!("cargo:rustc-link-arg-examples=-ltorch");
        println!("cargo:rustc-link-arg-examples=-Wl,--as-needed");
    }
}
