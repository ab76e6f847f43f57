//! The GPU runtime's generated threefry kernel, run on the host: its CUDA C source is compiled
//! by the host C++ compiler with the CUDA built-ins stubbed (one thread, one block), and its
//! output compared with `backends::threefry`. NVRTC (tests/nvrtc_kernels.rs) proves that it
//! compiles for the GPU; this proves what it computes, without one.
#![cfg(any(feature = "fake-gpu", feature = "nvrtc"))]

use dlarray::backends::gpu::codegen::generate;
use dlarray::backends::gpu::kernel::KernelSpec;
use dlarray::backends::{BitsForm, Counters};
use std::process::Command;

const STUBS: &str = r#"#include <cstdint>
#include <cstdio>
#define DLARRAY_PRELUDE
typedef uint32_t u32;
typedef uint64_t u64;
inline u32 rotl32(u32 x, u32 r) { return (x << r) | (x >> (32 - r)); }
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__
struct Dim3 { unsigned x, y, z; };
static const Dim3 gridDim = {1, 1, 1}, blockDim = {1, 1, 1}, blockIdx = {0, 0, 0},
                  threadIdx = {0, 0, 0};
"#;

fn compiler() -> Option<String> {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    Command::new(&cxx)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|_| cxx)
}

/// Runs the kernel of `form` over `counters` (merged, as the launcher passes them).
fn run_kernel(cxx: &str, key: [u32; 2], counters: &Counters, form: BitsForm) -> Vec<u32> {
    let c = counters.merged();
    let spec = KernelSpec::Threefry {
        form,
        rank: c.shape.len() as u8,
    };
    let k = generate(spec).expect("a threefry kernel");
    let mut words = vec![
        c.len() as u64,
        key[0] as u64 | (key[1] as u64) << 32,
        c.offset,
    ];
    words.extend(c.shape.iter().map(|&d| d as u64));
    words.extend(&c.strides);
    let list: Vec<String> = words.iter().map(|w| format!("{w}ull")).collect();
    let n = c.len() * form.words();
    let main = format!(
        "int main() {{\n  u64 w[] = {{{}}};\n  P_{e} p;\n  static_assert(sizeof p == sizeof w, \"layout\");\n  \
         __builtin_memcpy(&p, w, sizeof w);\n  static u32 out[{n}];\n  {e}(p, out);\n  \
         for (int i = 0; i < {n}; ++i) printf(\"%u\\n\", out[i]);\n}}\n",
        list.join(", "),
        e = k.entry
    );
    let dir = std::env::temp_dir().join(format!("dlarray-threefry-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, exe) = (dir.join(format!("{}.cpp", k.entry)), dir.join(&k.entry));
    std::fs::write(&src, format!("{STUBS}{}\n{main}", k.source)).unwrap();
    let built = Command::new(cxx)
        .args(["-O1", "-w", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let out = Command::new(&exe).output().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

#[test]
fn the_generated_kernel_computes_threefry() {
    let Some(cxx) = compiler() else {
        eprintln!("skipped: no C++ compiler (set CXX)");
        return;
    };
    let shape = [3usize << 31, 4, 6];
    // A block with counters past 2^32 (the high word matters), strided on two axes.
    let block = Counters::of_block(&shape, &[(3 << 31) - 2..3 << 31, 1..3, 2..5]).unwrap();
    let whole_row = Counters::of_block(&[10, 7], &[0..10, 0..7]).unwrap();
    let key = [0x1319_8a2e, 0x0370_7344];
    for counters in [&block, &whole_row] {
        for form in BitsForm::ALL {
            let mut want = vec![0u32; counters.len() * form.words()];
            counters.hash_into(key, form, 0..counters.len(), &mut want);
            assert_eq!(
                run_kernel(&cxx, key, counters, form),
                want,
                "{form:?} {counters:?}"
            );
        }
    }
}
