//! Kernel source generation: CUDA C++ for every [`KernelSpec`], over strided, broadcast
//! inputs. HIP compiles the same dialect (hiprtc); OpenCL C needs only a different prelude
//! and entry decoration, which is why the generator is split into the per-dtype pieces
//! (`types`), the per-op expressions (`ops`) and the loop templates here.
//!
//! Every kernel takes its shape and strides as a by-value `struct` of 64-bit words (see
//! `params.rs`); indices are 64-bit, and every loop is grid-strided, so one kernel serves
//! any size and any launch grid.

pub(crate) mod ops;
pub(crate) mod types;

/// The prelude every kernel begins with (guarded: several kernels may share one program).
pub const PRELUDE: &str = types::PRELUDE;

use super::kernel::{KernelSource, KernelSpec, MapOp};
use super::params::{BLOCK, TILE, UNROLL};
use crate::backends::{BinaryOp, ReduceOp, UnaryOp};
use crate::dtype::DType;
use std::fmt::Write;
use types::{compute, load, storage, store};

/// The output dtype a map op has on input `dt` (`None`: the op does not exist there).
pub(crate) fn map_output(op: MapOp, dt: DType) -> Option<DType> {
    match op {
        MapOp::Unary(u) => {
            ops::unary(u, dt, "a")?;
            Some(match (u, dt) {
                (UnaryOp::Abs, DType::Complex64 | DType::Complex128) => dt.real_part(),
                (UnaryOp::Signbit, _) => DType::Bool,
                _ => dt,
            })
        }
        MapOp::Binary(b) => {
            ops::binary(b, dt, "a", "b")?;
            Some(if b.is_comparison() { DType::Bool } else { dt })
        }
        MapOp::Cast => None,
        MapOp::Select => Some(dt),
    }
}

/// Elements a thread of the map kernel of these reads and writes at once when its operands
/// are contiguous (`contiguous_map`): 16 bytes of them where every operand and the output
/// have one width and the kernel one axis; `None` where it has no such path. Launches size
/// their grids by it.
pub(crate) fn map_lanes(op: MapOp, input: DType, output: DType, rank: usize) -> Option<u64> {
    let width = output.size_in_bytes();
    let one_width = (0..op.arity()).all(|k| op.operand_dtype(k, input).size_in_bytes() == width);
    (rank == 1 && one_width && width <= 16).then_some((16 / width) as u64)
}

/// The source of `spec`, or `None` when its op does not exist on its dtype.
pub fn generate(spec: KernelSpec) -> Option<KernelSource> {
    let entry = spec.entry();
    let mut src = String::from(types::PRELUDE);
    match spec {
        KernelSpec::Map {
            op,
            input,
            output,
            rank,
        } => map(&mut src, &entry, op, input, output, rank as usize)?,
        KernelSpec::Fill { dtype } => fill(&mut src, &entry, dtype),
        KernelSpec::Reduce {
            op,
            input,
            output,
            kept,
            reduced,
        } => reduce(
            &mut src,
            &entry,
            op,
            input,
            output,
            kept as usize,
            reduced as usize,
        )?,
        KernelSpec::Matmul { dtype, batch } => matmul(&mut src, &entry, dtype, batch as usize),
        KernelSpec::Threefry { form, rank } => threefry(&mut src, &entry, form, rank as usize),
    }
    Some(KernelSource {
        spec,
        entry,
        source: src,
    })
}

/// `u64 name[n];` unless `n == 0` (C++ has no zero-length arrays).
fn array_field(out: &mut String, ty: &str, name: &str, dims: &[usize]) {
    if dims.iter().all(|&d| d > 0) {
        let dims: String = dims.iter().map(|d| format!("[{d}]")).collect();
        let _ = writeln!(out, "  {ty} {name}{dims};");
    }
}

/// Statements adding the offsets of linear index `idx` over `shape` to each `targets[k]`,
/// whose strides are `strides[k]` (C expressions of arrays indexed by axis).
fn decompose(
    out: &mut String,
    idx: &str,
    rank: usize,
    shape: &str,
    targets: &[(&str, &str)],
    indent: &str,
) {
    if rank == 0 {
        return;
    }
    let _ = writeln!(out, "{indent}{{ u64 r_ = {idx};");
    for d in (1..rank).rev() {
        let _ = writeln!(
            out,
            "{indent}  {{ u64 c_ = r_ % {shape}[{d}]; r_ /= {shape}[{d}];"
        );
        for (t, s) in targets {
            let _ = writeln!(out, "{indent}    {t} += (i64)c_ * {s}[{d}];");
        }
        let _ = writeln!(out, "{indent}  }}");
    }
    // The outermost axis needs no remainder: what is left of the index is its coordinate.
    for (t, s) in targets {
        let _ = writeln!(out, "{indent}  {t} += (i64)r_ * {s}[0];");
    }
    let _ = writeln!(out, "{indent}}}");
}

fn map(
    out: &mut String,
    entry: &str,
    op: MapOp,
    input: DType,
    output: DType,
    rank: usize,
) -> Option<()> {
    let arity = op.arity();
    // The stored result from the stored operands `e[k]`.
    let value_of = |e: [&str; 3]| -> Option<String> {
        let (a, b) = (load(input, e[0]), load(input, e[1]));
        Some(match op {
            MapOp::Unary(u) => store(output, &ops::unary(u, input, &a)?),
            MapOp::Binary(bo) => store(output, &ops::binary(bo, input, &a, &b)?),
            MapOp::Cast => ops::cast_store(input, output, &a),
            // Stored values are chosen as they are: no conversion.
            MapOp::Select => format!("({} != 0 ? {} : {})", e[0], e[1], e[2]),
        })
    };
    let value = value_of(["in0[o0]", "in1[o1]", "in2[o2]"])?;
    if map_output(op, input).is_some_and(|o| o != output) {
        return None;
    }
    let lanes = map_lanes(op, input, output, rank);
    let p = format!("P_{entry}");
    let _ = writeln!(out, "struct {p} {{\n  u64 n;");
    array_field(out, "u64", "shape", &[rank]);
    array_field(out, "i64", "stride", &[arity, rank]);
    array_field(out, "i64", "offset", &[arity]);
    let _ = writeln!(out, "}};");
    let ins: String = (0..arity)
        .map(|k| {
            format!(
                ", const {} *__restrict__ in{k}",
                storage(op.operand_dtype(k, input))
            )
        })
        .collect();
    if let Some(lanes) = lanes {
        for (k, t) in (0..arity)
            .map(|k| storage(op.operand_dtype(k, input)))
            .chain([storage(output)])
            .enumerate()
        {
            let _ = writeln!(
                out,
                "struct __align__(16) V16_{entry}_{k} {{ {t} e[{lanes}]; }};"
            );
        }
    }
    let _ = writeln!(
        out,
        "extern \"C\" __global__ void {entry}({p} p, {} *__restrict__ out{ins}) {{",
        storage(output)
    );
    if let Some(n) = lanes {
        let lanes = ["r0_[u_].e[k_]", "r1_[u_].e[k_]", "r2_[u_].e[k_]"];
        let tail = [
            "in0[p.offset[0] + i]",
            "in1[p.offset[1] + i]",
            "in2[p.offset[2] + i]",
        ];
        let (value, tail) = (value_of(lanes)?, value_of(tail)?);
        contiguous_map(out, entry, arity, n as usize, &value, &tail);
    }
    // UNROLL elements a step, `step` apart (each coalesced), loaded before any is stored.
    let _ = writeln!(
        out,
        "  const u64 step = (u64)gridDim.x * blockDim.x;\n  \
         for (u64 i0 = (u64)blockIdx.x * blockDim.x + threadIdx.x; i0 < p.n; i0 += {UNROLL} * step) {{\n  \
         #pragma unroll\n  \
         for (int u_ = 0; u_ < {UNROLL}; ++u_) {{\n    \
         const u64 i = i0 + u_ * step;\n    \
         if (i >= p.n) break;"
    );
    for k in 0..arity {
        let _ = writeln!(out, "    i64 o{k} = p.offset[{k}];");
    }
    let targets: Vec<(String, String)> = (0..arity)
        .map(|k| (format!("o{k}"), format!("p.stride[{k}]")))
        .collect();
    let t: Vec<(&str, &str)> = targets
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    decompose(out, "i", rank, "p.shape", &t, "    ");
    let _ = writeln!(out, "    out[i] = {value};\n  }}\n  }}\n}}");
    Some(())
}

fn fill(out: &mut String, entry: &str, dt: DType) {
    let t = storage(dt);
    let _ = writeln!(
        out,
        "extern \"C\" __global__ void {entry}(u64 n, u64 lo, u64 hi, {t} *__restrict__ out) {{\n  \
         __align__(16) u64 w[2] = {{lo, hi}};\n  \
         const {t} v = *(const {t} *)w;\n  \
         const u64 step = (u64)gridDim.x * blockDim.x;\n  \
         for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) out[i] = v;\n}}"
    );
}

/// Threefry-2x32 of each element's counter (`off + Σ idx[k] * stride[k]`, 64-bit), the
/// rounds written out as `backends::threefry` has them. Parameters: a struct of n, the key
/// (low word first), the offset, then shape and strides of `rank` axes.
fn threefry(out: &mut String, entry: &str, form: crate::backends::BitsForm, rank: usize) {
    use crate::backends::BitsForm;
    let dims = if rank == 0 {
        String::new()
    } else {
        format!(" u64 shape[{rank}]; u64 strides[{rank}];")
    };
    let store = match form {
        BitsForm::Xor => "out[i] = x0 ^ x1;",
        BitsForm::Pair => "out[2 * i] = x0; out[2 * i + 1] = x1;",
        // A u64 per element, little-endian: the low word (x1) first.
        _ => "out[2 * i] = x1; out[2 * i + 1] = x0;",
    };
    let _ = writeln!(
        out,
        "struct P_{entry} {{ u64 n; u64 key; u64 off;{dims} }};\n\
         extern \"C\" __global__ void {entry}(P_{entry} p, u32 *__restrict__ out) {{\n  \
         const u32 k0 = (u32)p.key, k1 = (u32)(p.key >> 32), k2 = k0 ^ k1 ^ 0x1BD11BDAu;\n  \
         const u32 ks[3] = {{k0, k1, k2}};\n  \
         const u32 rot[8] = {{13, 15, 26, 6, 17, 29, 16, 24}};\n  \
         const u64 step = (u64)gridDim.x * blockDim.x;\n  \
         for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += step) {{\n    \
         u64 c = p.off;{rest}",
        rest = if rank == 0 { "" } else { " u64 rest = i;" }
    );
    for k in (0..rank).rev() {
        let _ = writeln!(
            out,
            "    c += (rest % p.shape[{k}]) * p.strides[{k}]; rest /= p.shape[{k}];"
        );
    }
    let _ = writeln!(
        out,
        "    u32 x0 = (u32)(c >> 32) + k0, x1 = (u32)c + k1;\n\
         #pragma unroll\n    \
         for (int r = 0; r < 5; ++r) {{\n\
         #pragma unroll\n      \
         for (int j = 0; j < 4; ++j) {{ x0 += x1; x1 = rotl32(x1, rot[(r % 2) * 4 + j]) ^ x0; }}\n      \
         x0 += ks[(r + 1) % 3]; x1 += ks[(r + 2) % 3] + (u32)(r + 1);\n    }}\n    \
         {store}\n  }}\n}}"
    );
}

#[allow(clippy::too_many_arguments)]
fn reduce(
    out: &mut String,
    entry: &str,
    op: ReduceOp,
    input: DType,
    output: DType,
    kept: usize,
    reduced: usize,
) -> Option<()> {
    let acc = ops::accumulator(input);
    // A pass writes partials (the accumulator dtype) or the result (a dtype accumulating
    // in the same type: f16 results from f32 partials).
    if output != acc && ops::accumulator(output) != acc {
        return None;
    }
    let identity = ops::reduce_identity(op, acc)?;
    let at = compute(acc);
    let p = format!("P_{entry}");
    let _ = writeln!(
        out,
        "struct {p} {{\n  u64 n_out; u64 m; u64 chunk; u64 chunks;"
    );
    array_field(out, "u64", "kshape", &[kept]);
    array_field(out, "i64", "kstride", &[kept]);
    array_field(out, "u64", "rshape", &[reduced]);
    array_field(out, "i64", "rstride", &[reduced]);
    let _ = writeln!(out, "  i64 offset;\n}};");
    if reduced == 1 {
        // 16 bytes of elements, loaded as one (the fast path of `contiguous_fold`).
        let _ = writeln!(
            out,
            "struct __align__(16) V16_{entry} {{ {} e[{}]; }};",
            storage(input),
            16 / input.size_in_bytes()
        );
    }
    let _ = writeln!(
        out,
        "extern \"C\" __global__ void {entry}({p} p, {} *__restrict__ out, const {} *__restrict__ in) {{",
        storage(output),
        storage(input)
    );
    let _ = writeln!(
        out,
        "  __shared__ {at} sh[{BLOCK}];\n  \
         const u64 total = p.n_out * p.chunks;\n  \
         for (u64 b = blockIdx.x; b < total; b += gridDim.x) {{\n    \
         const u64 j = b / p.chunks, c = b % p.chunks;\n    \
         i64 base = p.offset;"
    );
    decompose(out, "j", kept, "p.kshape", &[("base", "p.kstride")], "    ");
    let combine = ops::reduce_combine(op, acc, "acc", "v");
    // Loads give the compute type, which is the accumulator type (half floats load as f32).
    let load_acc = load(input, "in[o]");
    let _ = writeln!(
        out,
        "    const u64 lo = c * p.chunk;\n    \
         const u64 hi = lo + p.chunk < p.m ? lo + p.chunk : p.m;\n    \
         {at} acc = {identity};"
    );
    if reduced == 1 {
        contiguous_fold(out, entry, input, &combine);
    }
    let _ = writeln!(
        out,
        "    for (u64 t0 = lo + threadIdx.x; t0 < hi; t0 += {UNROLL} * blockDim.x) {{\n      \
         {at} v_[{UNROLL}];\n      \
         #pragma unroll\n      \
         for (int u_ = 0; u_ < {UNROLL}; ++u_) {{\n        \
         const u64 t = t0 + u_ * blockDim.x;\n        \
         v_[u_] = {identity};\n        \
         if (t >= hi) continue;\n        \
         i64 o = base;"
    );
    decompose(
        out,
        "t",
        reduced,
        "p.rshape",
        &[("o", "p.rstride")],
        "        ",
    );
    // The loads above are independent; combining after them keeps UNROLL in flight. Each
    // thread still folds its elements in increasing order, as with one load a step.
    let _ = writeln!(
        out,
        "        v_[u_] = {load_acc};\n      }}\n      \
         #pragma unroll\n      \
         for (int u_ = 0; u_ < {UNROLL}; ++u_) {{ const {at} v = v_[u_]; acc = {combine}; }}\n    }}"
    );
    if reduced == 1 {
        let _ = writeln!(out, "    }}");
    }
    // Shared memory down to one warp, then shuffles within it.
    let tree = ops::reduce_combine(op, acc, "sh[threadIdx.x]", "sh[threadIdx.x + s]");
    // The shuffle is taken once, into `o_`: a combine that names its operand twice (max,
    // min: `a > b ? a : b`) would shuffle conditionally, and a `__shfl_down_sync` that not
    // every lane of its mask reaches hangs the warp (it did on the H200: `max` over rows).
    let warp = ops::reduce_combine(op, acc, "acc", "o_");
    let _ = writeln!(
        out,
        "    sh[threadIdx.x] = acc;\n    __syncthreads();\n    \
         for (unsigned s = blockDim.x / 2; s >= 32; s >>= 1) {{\n      \
         if (threadIdx.x < s) sh[threadIdx.x] = {tree};\n      __syncthreads();\n    }}\n    \
         if (threadIdx.x < 32) {{\n      \
         acc = sh[threadIdx.x];\n      \
         for (int s = 16; s > 0; s >>= 1) {{ const {at} o_ = shfl(acc, s); acc = {warp}; }}\n      \
         if (threadIdx.x == 0) out[b] = {};\n    }}\n    \
         __syncthreads();\n  }}\n}}",
        ops::reduce_store(acc, output, "acc")
    );
    Some(())
}

/// The fast path of a map over one axis, taken when every operand has unit stride and it and
/// the output start on a 16-byte boundary (fresh allocations do): `lanes` elements a load
/// and a store, `UNROLL` of each in flight a thread; the last `n % lanes` elements one a
/// thread. Element loads reached 0.94x of a device copy's bandwidth for add f32 on the
/// H200 and PyTorch's 16-byte loads 1.02x (`scripts/gpu_bench.py`, 2026-12-04). Returns
/// from the kernel; the strided loop the caller writes next serves every other launch.
fn contiguous_map(
    out: &mut String,
    entry: &str,
    arity: usize,
    lanes: usize,
    value: &str,
    tail: &str,
) {
    let unit: String = (0..arity)
        .map(|k| format!(" && p.stride[{k}][0] == 1"))
        .collect();
    let aligned: String = (0..arity)
        .map(|k| format!(" | (u64)(in{k} + p.offset[{k}])"))
        .collect();
    let _ = writeln!(
        out,
        "  if (true{unit} && (((u64)out{aligned}) & 15) == 0) {{\n    \
         const u64 step = (u64)gridDim.x * blockDim.x, nv_ = p.n / {lanes};\n    \
         V16_{entry}_{arity} *w_ = (V16_{entry}_{arity} *)out;"
    );
    for k in 0..arity {
        let _ = writeln!(
            out,
            "    const V16_{entry}_{k} *v{k}_ = (const V16_{entry}_{k} *)(in{k} + p.offset[{k}]);"
        );
    }
    let regs: String = (0..arity)
        .map(|k| format!(" V16_{entry}_{k} r{k}_[{UNROLL}];"))
        .collect();
    let loads: String = (0..arity)
        .map(|k| format!(" r{k}_[u_] = v{k}_[q];"))
        .collect();
    let _ = writeln!(
        out,
        "    for (u64 q0 = (u64)blockIdx.x * blockDim.x + threadIdx.x; q0 < nv_; q0 += {UNROLL} * step) {{\n     \
         {regs}\n      \
         #pragma unroll\n      \
         for (int u_ = 0; u_ < {UNROLL}; ++u_) {{ const u64 q = q0 + u_ * step; if (q < nv_) {{{loads} }} }}\n      \
         #pragma unroll\n      \
         for (int u_ = 0; u_ < {UNROLL}; ++u_) {{\n        \
         const u64 q = q0 + u_ * step;\n        \
         if (q >= nv_) break;\n        \
         V16_{entry}_{arity} o_;\n        \
         #pragma unroll\n        \
         for (int k_ = 0; k_ < {lanes}; ++k_) o_.e[k_] = {value};\n        \
         w_[q] = o_;\n      }}\n    }}"
    );
    let _ = writeln!(
        out,
        "    for (u64 i = nv_ * {lanes} + (u64)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += step) \
         out[i] = {tail};\n    return;\n  }}"
    );
}

/// The fast path of a reduction over one axis, taken when that axis has unit stride: the
/// chunk `[lo, hi)` read 16 bytes a load (`UNROLL` loads in flight a thread), its unaligned
/// head and short tail one element a thread. Element loads, 4 bytes a warp lane, left the
/// H200's sum f32 at 0.78x of a device copy's bandwidth (`scripts/gpu_bench.py`,
/// 2026-12-04): the copy engine and PyTorch read 16 bytes a lane. Opens an `if` whose `else`
/// is the strided loop the caller writes next.
fn contiguous_fold(out: &mut String, entry: &str, input: DType, combine: &str) {
    let s = storage(input);
    let at = compute(ops::accumulator(input));
    let lanes = 16 / input.size_in_bytes();
    let elem = |e: &str| load(input, e);
    // `(u64)ptr % 16` needs the element itself aligned, which every allocation and DLPack
    // producer gives; a pointer that is not is read by the strided loop instead.
    let _ = writeln!(
        out,
        "    const {s} *s_ = in + base;\n    \
         if (p.rstride[0] == 1 && ((u64)s_ & (sizeof({s}) - 1)) == 0) {{\n      \
         const u64 mis_ = ((u64)(s_ + lo) & 15) / sizeof({s});\n      \
         const u64 head_ = mis_ == 0 ? 0 : ({lanes} - mis_ < hi - lo ? {lanes} - mis_ : hi - lo);\n      \
         const u64 nv_ = (hi - lo - head_) / {lanes};\n      \
         const V16_{entry} *w_ = (const V16_{entry} *)(s_ + lo + head_);\n      \
         for (u64 q0 = threadIdx.x; q0 < nv_; q0 += {UNROLL} * blockDim.x) {{\n        \
         V16_{entry} r_[{UNROLL}];\n        \
         #pragma unroll\n        \
         for (int u_ = 0; u_ < {UNROLL}; ++u_) {{ const u64 q = q0 + u_ * blockDim.x; if (q < nv_) r_[u_] = w_[q]; }}\n        \
         #pragma unroll\n        \
         for (int u_ = 0; u_ < {UNROLL}; ++u_) {{\n          \
         if (q0 + u_ * blockDim.x >= nv_) break;\n          \
         #pragma unroll\n          \
         for (int k_ = 0; k_ < {lanes}; ++k_) {{ const {at} v = {ev}; acc = {combine}; }}\n        \
         }}\n      }}\n      \
         // Head and tail: fewer than {lanes} elements each, so one a thread.\n      \
         if (threadIdx.x < head_) {{ const {at} v = {eh}; acc = {combine}; }}\n      \
         const u64 tl_ = lo + head_ + nv_ * {lanes} + threadIdx.x;\n      \
         if (tl_ < hi) {{ const {at} v = {et}; acc = {combine}; }}\n    \
         }} else {{",
        ev = elem("r_[u_].e[k_]"),
        eh = elem("s_[lo + threadIdx.x]"),
        et = elem("s_[tl_]"),
    );
}

fn matmul(out: &mut String, entry: &str, dt: DType, batch: usize) {
    let acc = ops::accumulator(dt);
    let at = compute(acc);
    let zero = match dt {
        DType::Bool => "false".to_string(),
        DType::Complex64 | DType::Complex128 => format!("mk(0, 0, {at}())"),
        _ => format!("({at})0"),
    };
    let mac = match dt {
        DType::Bool => "(acc || (x && y))".to_string(),
        _ => {
            let prod = ops::binary(BinaryOp::Mul, acc, "x", "y").unwrap_or_default();
            ops::binary(BinaryOp::Add, acc, "acc", &prod).unwrap_or_default()
        }
    };
    let p = format!("P_{entry}");
    let _ = writeln!(out, "struct {p} {{\n  u64 m; u64 n; u64 k; u64 batch;");
    array_field(out, "u64", "bshape", &[batch]);
    array_field(out, "i64", "a_bst", &[batch]);
    array_field(out, "i64", "b_bst", &[batch]);
    let _ = writeln!(
        out,
        "  i64 a_rs; i64 a_cs; i64 a_off; i64 b_rs; i64 b_cs; i64 b_off;\n}};"
    );
    let t = storage(dt);
    let _ = writeln!(
        out,
        "extern \"C\" __global__ void {entry}({p} p, {t} *__restrict__ out, const {t} *__restrict__ a, const {t} *__restrict__ b) {{\n  \
         __shared__ {at} ta[{TILE}][{TILE} + 1];\n  \
         __shared__ {at} tb[{TILE}][{TILE} + 1];\n  \
         const unsigned tx = threadIdx.x % {TILE}, ty = threadIdx.x / {TILE};\n  \
         const u64 col = (u64)blockIdx.x * {TILE} + tx;\n  \
         for (u64 z = blockIdx.z; z < p.batch; z += gridDim.z) {{\n    \
         i64 ao = p.a_off, bo = p.b_off;"
    );
    decompose(
        out,
        "z",
        batch,
        "p.bshape",
        &[("ao", "p.a_bst"), ("bo", "p.b_bst")],
        "    ",
    );
    let la = load(dt, "a[ao + (i64)row * p.a_rs + (i64)(k0 + tx) * p.a_cs]");
    let lb = load(dt, "b[bo + (i64)(k0 + ty) * p.b_rs + (i64)col * p.b_cs]");
    let _ = writeln!(
        out,
        "    for (u64 by = blockIdx.y; by * {TILE} < p.m; by += gridDim.y) {{\n      \
         const u64 row = by * {TILE} + ty;\n      \
         {at} acc = {zero};\n      \
         for (u64 k0 = 0; k0 < p.k; k0 += {TILE}) {{\n        \
         ta[ty][tx] = (row < p.m && k0 + tx < p.k) ? ({at}){la} : {zero};\n        \
         tb[ty][tx] = (k0 + ty < p.k && col < p.n) ? ({at}){lb} : {zero};\n        \
         __syncthreads();\n        \
         for (int kk = 0; kk < {TILE}; ++kk) {{ const {at} x = ta[ty][kk], y = tb[kk][tx]; acc = {mac}; }}\n        \
         __syncthreads();\n      }}\n      \
         if (row < p.m && col < p.n) out[(z * p.m + row) * p.n + col] = {};\n    }}\n  }}\n}}",
        ops::reduce_store(acc, dt, "acc")
    );
}

/// Every spec the backend can ask for, over the ranks given: what the CI check compiles.
pub fn all_specs(max_rank: u8) -> Vec<KernelSpec> {
    let mut specs = Vec::new();
    for &dt in &DType::ALL {
        for rank in 0..=max_rank {
            for &u in UnaryOp::ALL {
                if let Some(output) = map_output(MapOp::Unary(u), dt) {
                    specs.push(KernelSpec::Map {
                        op: MapOp::Unary(u),
                        input: dt,
                        output,
                        rank,
                    });
                }
            }
            for &b in BinaryOp::ALL {
                if let Some(output) = map_output(MapOp::Binary(b), dt) {
                    specs.push(KernelSpec::Map {
                        op: MapOp::Binary(b),
                        input: dt,
                        output,
                        rank,
                    });
                }
            }
            specs.push(KernelSpec::Map {
                op: MapOp::Select,
                input: dt,
                output: dt,
                rank,
            });
            for &to in &DType::ALL {
                specs.push(KernelSpec::Map {
                    op: MapOp::Cast,
                    input: dt,
                    output: to,
                    rank,
                });
            }
        }
        specs.push(KernelSpec::Fill { dtype: dt });
        for &op in ReduceOp::ALL {
            let acc = ops::accumulator(dt);
            if ops::reduce_identity(op, acc).is_none() {
                continue;
            }
            for kept in 0..=max_rank.min(2) {
                for reduced in 0..=max_rank.clamp(1, 2) {
                    for output in [acc, dt] {
                        specs.push(KernelSpec::Reduce {
                            op,
                            input: dt,
                            output,
                            kept,
                            reduced,
                        });
                    }
                }
            }
            if acc != dt {
                // The second pass of a half-float reduction reads f32 partials.
                specs.push(KernelSpec::Reduce {
                    op,
                    input: acc,
                    output: dt,
                    kept: 1,
                    reduced: 1,
                });
            }
        }
        for batch in 0..=max_rank.min(2) {
            specs.push(KernelSpec::Matmul { dtype: dt, batch });
        }
    }
    for form in crate::backends::BitsForm::ALL {
        for rank in 0..=max_rank {
            specs.push(KernelSpec::Threefry { form, rank });
        }
    }
    specs.sort_by_key(|s| s.entry());
    specs.dedup();
    specs
}
