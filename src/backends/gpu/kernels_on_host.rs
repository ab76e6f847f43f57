//! Generated map and reduction kernels run on the host: the CUDA C source compiled by the host
//! C++ compiler with the CUDA built-ins emulated (a thread per CUDA thread, a barrier for
//! `__syncthreads`, a warp barrier for shuffles, blocks one after another), over grids small
//! enough that every thread loops. NVRTC proves the kernels compile; this proves what their
//! index arithmetic, unrolled loops and reduction trees compute, without a GPU (the fake
//! driver computes launches with the CPU backend instead of running them). The threefry
//! kernel is checked against `backends::threefry` the same way.

use super::codegen::generate;
use super::codegen::types::c_typedefs;
use super::kernel::{KernelSpec, MapOp};
use super::params::{BLOCK, MapParams, ReduceParams};
use crate::backends::{BinaryOp, BitsForm, Counters, ReduceOp};
use crate::dtype::DType;
use crate::layout::Layout;
use std::process::Command;

const HOST: &str = concat!(
    "#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>
#define DLARRAY_PRELUDE
",
    c_typedefs!(),
    r#"#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__
#define __shared__ static
#define __align__(n) alignas(n)
struct Dim3 { unsigned x, y, z; };
static Dim3 gridDim, blockDim;
static thread_local Dim3 blockIdx, threadIdx;
static std::barrier<>* block_barrier;
static std::barrier<>* warp_barrier;
static void __syncthreads() { block_barrier->arrive_and_wait(); }
inline float f_inf() { return INFINITY; }
inline double d_inf() { return INFINITY; }
/* __shfl_down_sync over warp 0 (the only warp the kernels shuffle in): a lane past the warp
   reads its own value, as on the GPU. */
template <class T> T shfl(T v, int o) {
  static T slot[32];
  slot[threadIdx.x] = v;
  warp_barrier->arrive_and_wait();
  T r = threadIdx.x + o < 32 ? slot[threadIdx.x + o] : v;
  warp_barrier->arrive_and_wait();
  return r;
}
template <class F> void launch(unsigned grid, unsigned block, F kernel) {
  gridDim = {grid, 1, 1};
  blockDim = {block, 1, 1};
  for (unsigned b = 0; b < grid; ++b) {
    std::barrier<> bar(block), warp(block < 32 ? block : 32);
    block_barrier = &bar;
    warp_barrier = &warp;
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < block; ++t)
      threads.emplace_back([=] { blockIdx = {b, 0, 0}; threadIdx = {t, 0, 0}; kernel(); });
    for (auto& t : threads) t.join();
  }
}
inline u32 rotl32(u32 x, u32 r) { return (x << r) | (x >> (32 - r)); }
"#
);

fn compiler() -> Option<String> {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let ok = Command::new(&cxx)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then_some(cxx)
}

fn list<T: std::fmt::Display>(v: &[T], suffix: &str) -> String {
    v.iter()
        .map(|x| format!("{x}{suffix}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Compiles `body` (the main function's statements) after the kernel `spec` and runs it;
/// returns what it printed, one number a line.
fn run(cxx: &str, spec: KernelSpec, body: &str) -> Vec<f64> {
    run_with(cxx, spec, "", body)
}

/// [`run`] with `globals` (C++ at file scope) after the kernel.
fn run_with(cxx: &str, spec: KernelSpec, globals: &str, body: &str) -> Vec<f64> {
    let k = generate(spec).expect("a kernel");
    let src = format!("{HOST}{}\n{globals}\nint main() {{\n{body}\n}}\n", k.source);
    let dir = std::env::temp_dir().join(format!("dlarray-on-host-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (file, exe) = (dir.join(format!("{}.cpp", k.entry)), dir.join(&k.entry));
    std::fs::write(&file, src).unwrap();
    let built = Command::new(cxx)
        .args(["-std=c++20", "-O1", "-w", "-pthread", "-o"])
        .arg(&exe)
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let out = Command::new(&exe).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

/// The C statements declaring `P_<entry> <name>` from `words`.
fn params(entry: &str, name: &str, words: &[u64]) -> String {
    format!(
        "  u64 {name}_w[] = {{{}}};\n  P_{entry} {name};\n  \
         static_assert(sizeof {name} == sizeof {name}_w, \"layout\");\n  \
         __builtin_memcpy(&{name}, {name}_w, sizeof {name}_w);\n",
        list(words, "ull")
    )
}

#[test]
fn a_map_kernel_adds_strided_inputs_over_a_looping_grid() {
    let Some(cxx) = compiler() else { return };
    // out[i, j] = x[i, j] + y[j, i]: y read transposed; 3 blocks of 64 threads for 5,000
    // elements, so every thread runs its unrolled loop several times, partly out of range.
    let (r, c) = (50usize, 100usize);
    let x = Layout::contiguous(&[r, c]).unwrap();
    let y = Layout::contiguous(&[c, r])
        .unwrap()
        .permute(&[1, 0])
        .unwrap();
    let p = MapParams::new(&[&x, &y]);
    let spec = KernelSpec::Map {
        op: MapOp::Binary(BinaryOp::Add),
        input: DType::F32,
        output: DType::F32,
        rank: p.shape.len() as u8,
    };
    let entry = spec.entry();
    let n = r * c;
    let body = format!(
        "{}  static float x[{n}], y[{n}], out[{n}];\n  \
         for (int i = 0; i < {n}; ++i) {{ x[i] = (float)i; y[i] = (float)(i % 97) * 1000.0f; out[i] = -1.0f; }}\n  \
         launch(3, 64, [&] {{ {entry}(p, out, x, y); }});\n  \
         for (int i = 0; i < {n}; ++i) printf(\"%.1f\\n\", out[i]);",
        params(&entry, "p", &p.pack())
    );
    let got = run(&cxx, spec, &body);
    assert_eq!(got.len(), n);
    for i in 0..r {
        for j in 0..c {
            let want = (i * c + j) as f64 + ((j * r + i) % 97) as f64 * 1000.0;
            assert_eq!(got[i * c + j], want, "[{i}, {j}]");
        }
    }
}

#[test]
fn a_contiguous_map_kernel_reads_16_bytes_a_load_and_every_other_alignment_by_element() {
    let Some(cxx) = compiler() else { return };
    // 1,003 elements: 250 loads of 4 and a tail of 3, over a grid that loops. Then the same
    // with the second operand one element in (not 16-byte aligned: the strided loop), and a
    // bool `where` (16 lanes a load, two operand widths equal to the output's).
    for (off, n) in [(0usize, 1003usize), (1, 1003), (0, 3)] {
        let x = Layout::contiguous(&[n]).unwrap();
        let y = Layout::from_parts(&[n], &[1], off, n + off).unwrap();
        let p = MapParams::new(&[&x, &y]);
        let spec = KernelSpec::Map {
            op: MapOp::Binary(BinaryOp::Add),
            input: DType::F32,
            output: DType::F32,
            rank: p.shape.len() as u8,
        };
        let entry = spec.entry();
        let len = n + off;
        let body = format!(
            "{}  alignas(16) static float x[{len}], y[{len}], out[{n}];\n  \
             for (int i = 0; i < {len}; ++i) {{ x[i] = (float)i; y[i] = (float)(i % 97) * 1000.0f; }}\n  \
             for (int i = 0; i < {n}; ++i) out[i] = -1.0f;\n  \
             launch(3, 64, [&] {{ {entry}(p, out, x, y); }});\n  \
             for (int i = 0; i < {n}; ++i) printf(\"%.1f\\n\", out[i]);",
            params(&entry, "p", &p.pack())
        );
        let got = run(&cxx, spec, &body);
        assert_eq!(got.len(), n);
        for (i, g) in got.iter().enumerate() {
            let want = i as f64 + ((i + off) % 97) as f64 * 1000.0;
            assert_eq!(*g, want, "element {i} of {n}, second operand {off} in");
        }
    }
    let n = 37;
    let c = Layout::contiguous(&[n]).unwrap();
    let p = MapParams::new(&[&c, &c, &c]);
    let spec = KernelSpec::Map {
        op: MapOp::Select,
        input: DType::U8,
        output: DType::U8,
        rank: 1,
    };
    let entry = spec.entry();
    let body = format!(
        "{}  alignas(16) static u8 c[{n}], a[{n}], b[{n}], out[{n}];\n  \
         for (int i = 0; i < {n}; ++i) {{ c[i] = i % 3 == 0; a[i] = (u8)i; b[i] = (u8)(200 + i); }}\n  \
         launch(2, 32, [&] {{ {entry}(p, out, c, a, b); }});\n  \
         for (int i = 0; i < {n}; ++i) printf(\"%d\\n\", out[i]);",
        params(&entry, "p", &p.pack())
    );
    let got = run(&cxx, spec, &body);
    for (i, g) in got.iter().enumerate() {
        let want = if i % 3 == 0 { i } else { 200 + i };
        assert_eq!(*g, want as f64, "where, element {i}");
    }
}

/// Runs the reduction of `op` over axis 1 of an `[rows, cols]` f32 matrix (values `f(i)`)
/// with `ReduceParams` as the launcher makes them, both passes when there are two.
fn reduce_rows(cxx: &str, op: ReduceOp, rows: usize, cols: usize, value: &str) -> Vec<f64> {
    let x = Layout::contiguous(&[rows, cols]).unwrap();
    // Few target blocks: long rows are cut into chunks, and grids loop over their blocks.
    let p = ReduceParams::new(&x, &[1], 4);
    let spec = |p: &ReduceParams| KernelSpec::Reduce {
        op,
        input: DType::F32,
        output: DType::F32,
        kept: p.kept_shape.len() as u8,
        reduced: p.red_shape.len() as u8,
    };
    let first = spec(&p);
    let entry = first.entry();
    let n = rows * cols;
    let parts = (p.n_out * p.chunks) as usize;
    let mut body = format!(
        "{}  static float x[{n}], part[{parts}];\n  \
         for (int i = 0; i < {n}; ++i) x[i] = {value};\n  \
         launch(3, {BLOCK}, [&] {{ {entry}(p, part, x); }});\n",
        params(&entry, "p", &p.pack())
    );
    if p.chunks > 1 {
        let q = p.second_pass();
        assert_eq!(
            spec(&q),
            first,
            "one kernel serves both passes of an f32 reduction"
        );
        body.push_str(&params(&entry, "q", &q.pack()));
        body.push_str(&format!(
            "  static float out[{rows}];\n  launch(2, {BLOCK}, [&] {{ {entry}(q, out, part); }});\n  \
             for (int i = 0; i < {rows}; ++i) printf(\"%.9g\\n\", out[i]);"
        ));
    } else {
        body.push_str(&format!(
            "  for (int i = 0; i < {rows}; ++i) printf(\"%.9g\\n\", part[i]);"
        ));
    }
    run(cxx, first, &body)
}

#[test]
fn reductions_fold_every_element_once_in_one_and_two_passes() {
    let Some(cxx) = compiler() else { return };
    // Short rows (one pass, 7 outputs over 3 blocks) and long rows (chunks, then a second
    // pass). Integer-valued floats: sums are exact in any order.
    for (rows, cols) in [(7usize, 3000usize), (2, 40_000)] {
        let got = reduce_rows(&cxx, ReduceOp::Sum, rows, cols, "(float)(i % 13)");
        assert_eq!(got.len(), rows);
        for (row, g) in got.iter().enumerate() {
            let want: f64 = (row * cols..(row + 1) * cols)
                .map(|i| (i % 13) as f64)
                .sum();
            assert_eq!(*g, want, "sum of row {row} of [{rows}, {cols}]");
        }
        let got = reduce_rows(
            &cxx,
            ReduceOp::Max,
            rows,
            cols,
            "(float)((i * 7919) % 10007)",
        );
        for (row, g) in got.iter().enumerate() {
            let want = (row * cols..(row + 1) * cols)
                .map(|i| ((i * 7919) % 10007) as f64)
                .fold(f64::MIN, f64::max);
            assert_eq!(*g, want, "max of row {row} of [{rows}, {cols}]");
        }
    }
    // Rows of odd length start at every alignment: the 16-byte loads' unaligned heads and
    // short tails are folded too, each element once (rows of 1001 and 5 elements, and of 2,
    // shorter than one 16-byte load).
    for (rows, cols) in [(9usize, 1001usize), (6, 5), (5, 2)] {
        let got = reduce_rows(&cxx, ReduceOp::Sum, rows, cols, "(float)(1 + i % 7)");
        for (row, g) in got.iter().enumerate() {
            let want: f64 = (row * cols..(row + 1) * cols)
                .map(|i| (1 + i % 7) as f64)
                .sum();
            assert_eq!(*g, want, "sum of row {row} of [{rows}, {cols}]");
        }
    }
    // A NaN anywhere makes the max NaN (NumPy's rule), also from the last, partial step.
    let got = reduce_rows(&cxx, ReduceOp::Max, 3, 1001, "i == 2001 ? NAN : 1.0f");
    assert_eq!(got[0], 1.0);
    assert!(got[1].is_nan() && got[2] == 1.0, "{got:?}");
}

/// The threefry kernel of `form` over `counters` (merged, as the launcher passes them), one
/// thread.
fn threefry(cxx: &str, key: [u32; 2], counters: &Counters, form: BitsForm) -> Vec<u32> {
    let c = counters.merged();
    let spec = KernelSpec::Threefry {
        form,
        rank: c.shape.len() as u8,
    };
    let entry = spec.entry();
    let mut words = vec![
        c.len() as u64,
        key[0] as u64 | (key[1] as u64) << 32,
        c.offset,
    ];
    words.extend(c.shape.iter().map(|&d| d as u64));
    words.extend(&c.strides);
    let n = c.len() * form.words();
    let body = format!(
        "{}  static u32 out[{n}];\n  launch(1, 1, [&] {{ {entry}(p, out); }});\n  \
         for (int i = 0; i < {n}; ++i) printf(\"%u\\n\", out[i]);",
        params(&entry, "p", &words)
    );
    run(cxx, spec, &body).iter().map(|&v| v as u32).collect()
}

#[test]
fn the_threefry_kernel_computes_threefry() {
    let Some(cxx) = compiler() else { return };
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
                threefry(&cxx, key, counters, form),
                want,
                "{form:?} {counters:?}"
            );
        }
    }
}

/// The generated kernels' complex functions (the `cx_*` of the prelude) agree with the CPU
/// backend's at every scale, inverse functions included: large parts, where the textbook forms overflow in an
/// intermediate (tanh(800) is 1, exp(800+0j) inf+0j, (1e30+1e30j)/(1e30+1e30j) 1 in
/// complex64), tiny ones, and zeros of either sign.
#[test]
fn the_kernels_complex_functions_agree_with_the_cpu_backends() {
    use crate::Array;
    use num_complex::Complex64;
    let Some(cxx) = compiler() else { return };
    let spec = KernelSpec::Map {
        op: MapOp::Binary(BinaryOp::Add),
        input: DType::F32,
        output: DType::F32,
        rank: 1,
    };
    // The prelude's complex types and functions (the host run skips the prelude, whose
    // conversions are CUDA assembly).
    let prelude = super::codegen::PRELUDE;
    let from = prelude
        .find("struct __align__(8) c64")
        .expect("complex types");
    let to = prelude
        .find("DLARRAY_COMPLEX(c128, double, )")
        .expect("complex128");
    let complex = &prelude[from..to + "DLARRAY_COMPLEX(c128, double, )".len()];
    let unary = [
        "exp", "sinh", "cosh", "tanh", "sin", "cos", "sqrt", "expm1", "log1p", "asinh", "atanh",
        "asin", "atan", "acos", "acosh",
    ];
    for (c, r, fmt, parts, rtol) in [
        (
            "c128",
            "double",
            "%.17g",
            &[
                0.0, -0.0, 0.5, -1.0, 2.0, -3.7, 20.0, -100.0, 800.0, 1e-30, 1e300,
            ][..],
            1e-13,
        ),
        (
            "c64",
            "float",
            "%.9g",
            &[
                0.0, -0.0, 0.5, -1.0, 2.0, -3.7, 20.0, -100.0, 800.0, 1e-30, 1e30,
            ][..],
            2e-6,
        ),
    ] {
        let z: Vec<Complex64> = parts
            .iter()
            .flat_map(|&re| parts.iter().map(move |&im| Complex64::new(re, im)))
            .collect();
        let n = z.len();
        let mut body = format!(
            "  static {c} z[{n}] = {{{}}};\n",
            list(
                &z.iter()
                    .map(|v| format!("{{({r}){:e}, ({r}){:e}}}", v.re, v.im))
                    .collect::<Vec<_>>(),
                ""
            )
        );
        let print = format!("printf(\"{fmt}\\n{fmt}\\n\", (double)w.re, (double)w.im);");
        for f in unary {
            body +=
                &format!("  for (int i = 0; i < {n}; ++i) {{ {c} w = cx_{f}(z[i]); {print} }}\n");
        }
        body += &format!(
            "  for (int i = 0; i < {n}; ++i) for (int j = 0; j < {n}; j += 7) {{ {c} w = cx_div(z[i], z[j]); {print} }}\n"
        );
        let got = run_with(&cxx, spec, complex, &body);
        let dtype = if c == "c64" {
            DType::Complex64
        } else {
            DType::Complex128
        };
        let a = Array::from_vec(z.clone(), &[n])
            .unwrap()
            .astype(dtype)
            .unwrap();
        let b = Array::from_vec(z.iter().step_by(7).copied().collect(), &[n.div_ceil(7)])
            .unwrap()
            .astype(dtype)
            .unwrap();
        let div = (&a.reshape(&[n as isize, 1]).unwrap() / &b).unwrap();
        let mut want = Vec::new();
        for f in unary {
            let w = match f {
                "exp" => a.exp(),
                "sinh" => a.sinh(),
                "cosh" => a.cosh(),
                "tanh" => a.tanh(),
                "sin" => a.sin(),
                "cos" => a.cos(),
                "sqrt" => a.sqrt(),
                "expm1" => a.expm1(),
                "log1p" => a.log1p(),
                "asinh" => a.asinh(),
                "atanh" => a.atanh(),
                "asin" => a.asin(),
                "atan" => a.atan(),
                "acos" => a.acos(),
                _ => a.acosh(),
            };
            want.push((f, w.unwrap()));
        }
        want.push(("div", div));
        let mut at = 0;
        for (f, w) in want {
            let w = w
                .astype(DType::Complex128)
                .unwrap()
                .to_vec::<Complex64>()
                .unwrap();
            for (k, w) in w.iter().enumerate() {
                let g = Complex64::new(got[at], got[at + 1]);
                at += 2;
                let tol = rtol * w.norm();
                let same =
                    |x: f64, y: f64| x == y || (x.is_nan() && y.is_nan()) || (x - y).abs() <= tol;
                assert!(
                    same(g.re, w.re) && same(g.im, w.im),
                    "{c} {f} #{k}: kernel {g}, cpu {w}"
                );
            }
        }
        assert_eq!(at, got.len());
    }
}
