//! Runs a queued launch of the fake driver: unpacks the parameter words exactly as the
//! generated kernel reads them, and computes with the CPU backend over those layouts.

use super::State;
use crate::backends::gpu::codegen::ops::accumulator;
use crate::backends::gpu::driver::KernelArg;
use crate::backends::gpu::kernel::{KernelSpec, MapOp};
use crate::backends::gpu::params::{MapParams, MatmulParams, ReduceParams};
use crate::backends::host::ForeignBuffer;
use crate::backends::{Backend, DeviceBuffer, MemoryKind, TensorRef};
use crate::dtype::DType;
use crate::layout::Layout;
use std::ptr::NonNull;
use std::sync::{Arc, OnceLock};

/// The reference: a one-device, one-thread CPU backend.
fn cpu() -> Result<&'static Arc<dyn Backend>, String> {
    static CPU: OnceLock<Result<Arc<dyn Backend>, String>> = OnceLock::new();
    CPU.get_or_init(|| {
        crate::backends::host::HostBackend::new(crate::backends::host::HostConfig {
            name: "fake-gpu-reference",
            platform: "cpu",
            platform_version: "cpu".into(),
            device_count: 1,
            memory_kinds: vec![MemoryKind::Device],
            threads_per_device: 1,
            pool_bytes: 0,
            dlpack: vec![],
        })
        .map(|b| Arc::new(b) as Arc<dyn Backend>)
    })
    .as_ref()
    .map_err(Clone::clone)
}

fn ptr_arg(args: &[KernelArg], i: usize) -> Result<u64, String> {
    match args.get(i) {
        Some(KernelArg::Ptr(p)) => Ok(*p),
        other => Err(format!("argument {i} should be a pointer, got {other:?}")),
    }
}

fn u64_arg(args: &[KernelArg], i: usize) -> Result<u64, String> {
    match args.get(i) {
        Some(KernelArg::U64(v)) => Ok(*v),
        other => Err(format!("argument {i} should be a u64, got {other:?}")),
    }
}

fn words(args: &[KernelArg]) -> Result<&[u64], String> {
    match args.first() {
        Some(KernelArg::Struct(w)) => Ok(w),
        other => Err(format!(
            "argument 0 should be the parameter struct, got {other:?}"
        )),
    }
}

/// A CPU-backend buffer over the fake memory at `addr` up to the end of its block.
fn view(s: &State, addr: u64) -> Result<ForeignBuffer, String> {
    let len = s.extent(addr).ok_or_else(|| {
        format!("CUDA_ERROR_ILLEGAL_ADDRESS: {addr:#x} is not in a live allocation")
    })?;
    let p = s.resolve(addr, len)?;
    let p = NonNull::new(p).ok_or("null block")?;
    Ok(ForeignBuffer::new(
        p,
        len,
        0,
        MemoryKind::Device,
        Box::new(()),
    ))
}

/// Writes the CPU result `out` (contiguous, `dtype`) to the fake memory at `addr`.
fn store(
    s: &State,
    addr: u64,
    result: &dyn crate::backends::DeviceBuffer,
    dtype: DType,
    n: usize,
) -> Result<(), String> {
    let bytes = n * dtype.size_in_bytes();
    let dst = s.resolve(addr, bytes)?;
    let layout = Layout::contiguous(&[n]).map_err(|e| e.to_string())?;
    let t = TensorRef {
        buffer: result,
        layout: &layout,
        dtype,
    };
    // SAFETY: `resolve` checked that `bytes` bytes at `dst` lie in a live block.
    let out = unsafe { std::slice::from_raw_parts_mut(dst, bytes) };
    cpu()?.download(t, out).map_err(|e| e.to_string())
}

fn layout(shape: &[u64], strides: &[i64], offset: i64, elements: usize) -> Result<Layout, String> {
    let shape: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
    let strides: Vec<isize> = strides.iter().map(|&s| s as isize).collect();
    let offset = usize::try_from(offset).map_err(|_| format!("negative offset {offset}"))?;
    Layout::from_parts(&shape, &strides, offset, elements)
        .map_err(|e| format!("bad parameters: {e}"))
}

/// The offset of linear index `idx` over `shape` (row-major), as the generated loop computes it.
fn offset_of(mut idx: u64, shape: &[u64], strides: &[i64]) -> i64 {
    let mut o = 0i64;
    for d in (1..shape.len()).rev() {
        o += (idx % shape[d]) as i64 * strides[d];
        idx /= shape[d];
    }
    if !shape.is_empty() {
        o += idx as i64 * strides[0];
    }
    o
}

pub(super) fn run(s: &State, spec: KernelSpec, args: &[KernelArg]) -> Result<(), String> {
    let cpu = cpu()?;
    let e = |e: crate::Error| e.to_string();
    match spec {
        KernelSpec::Map {
            op,
            input,
            output,
            rank,
        } => {
            let arity = op.arity();
            let p = MapParams::unpack(words(args)?, rank as usize, arity)
                .ok_or("parameter words do not match the kernel")?;
            let out = ptr_arg(args, 1)?;
            let bufs = (0..arity)
                .map(|k| view(s, ptr_arg(args, 2 + k)?))
                .collect::<Result<Vec<_>, String>>()?;
            // The condition of `where` is bool; every other operand has the input dtype.
            let dts: Vec<DType> = (0..arity).map(|k| op.operand_dtype(k, input)).collect();
            let layouts = (0..arity)
                .map(|k| {
                    let elements = bufs[k].len_bytes() / dts[k].size_in_bytes();
                    layout(&p.shape, &p.strides[k], p.offsets[k], elements)
                })
                .collect::<Result<Vec<_>, String>>()?;
            let t = |k: usize| TensorRef {
                buffer: &bufs[k],
                layout: &layouts[k],
                dtype: dts[k],
            };
            let r = match op {
                MapOp::Unary(u) => cpu.unary(u, t(0), output),
                MapOp::Binary(b) => cpu.binary(b, t(0), t(1), output),
                MapOp::Cast => cpu.cast(t(0), output),
                MapOp::Select => cpu.select(t(0), t(1), t(2)),
            }
            .map_err(e)?;
            store(s, out, &*r, output, p.n as usize)
        }
        KernelSpec::Threefry { form, rank } => {
            // The struct as the kernel reads it: n, key, offset, shape[rank], strides[rank].
            let w = words(args)?;
            let rank = rank as usize;
            if w.len() != 3 + 2 * rank {
                return Err(format!(
                    "threefry: {} parameter words for rank {rank}",
                    w.len()
                ));
            }
            let counters = crate::backends::Counters {
                shape: w[3..3 + rank].iter().map(|&v| v as usize).collect(),
                strides: w[3 + rank..].to_vec(),
                offset: w[2],
            };
            let n = w[0] as usize;
            if counters.len() != n {
                return Err(format!("threefry: n = {n} for shape {:?}", counters.shape));
            }
            let key = [w[1] as u32, (w[1] >> 32) as u32];
            let words_out = n * form.words();
            let dst = s.resolve(ptr_arg(args, 1)?, words_out * 4)?;
            let mut h = vec![0u32; words_out];
            counters.hash_into(key, form, 0..n, &mut h);
            // SAFETY: `resolve` checked the whole range; u32 words as bytes.
            unsafe { std::ptr::copy_nonoverlapping(h.as_ptr() as *const u8, dst, words_out * 4) };
            Ok(())
        }
        KernelSpec::Fill { dtype } => {
            let (n, lo, hi) = (u64_arg(args, 0)?, u64_arg(args, 1)?, u64_arg(args, 2)?);
            let item = dtype.size_in_bytes();
            let mut value = lo.to_le_bytes().to_vec();
            value.extend(hi.to_le_bytes());
            let dst = s.resolve(ptr_arg(args, 3)?, n as usize * item)?;
            for i in 0..n as usize {
                // SAFETY: `resolve` checked the whole range.
                unsafe { std::ptr::copy_nonoverlapping(value.as_ptr(), dst.add(i * item), item) };
            }
            Ok(())
        }
        KernelSpec::Reduce {
            op,
            input,
            output,
            kept,
            reduced,
        } => {
            let p = ReduceParams::unpack(words(args)?, kept as usize, reduced as usize)
                .ok_or("parameter words do not match the kernel")?;
            let (out, src) = (ptr_arg(args, 1)?, ptr_arg(args, 2)?);
            let buf = view(s, src)?;
            let item = input.size_in_bytes();
            let acc = accumulator(input);
            for b in 0..p.n_out * p.chunks {
                let (j, c) = (b / p.chunks, b % p.chunks);
                let base = p.offset + offset_of(j, &p.kept_shape, &p.kept_strides);
                let (lo, hi) = (c * p.chunk, ((c + 1) * p.chunk).min(p.m));
                // Gather this block's elements, then fold them with the CPU backend.
                let mut gathered = Vec::new();
                for t in lo..hi.max(lo) {
                    let o = base + offset_of(t, &p.red_shape, &p.red_strides);
                    let o =
                        usize::try_from(o).map_err(|_| format!("negative element offset {o}"))?;
                    let at = o * item;
                    if at + item > buf.len_bytes() {
                        return Err(format!(
                            "CUDA_ERROR_ILLEGAL_ADDRESS: element {o} past the buffer"
                        ));
                    }
                    let from = s.resolve(src + at as u64, item)?;
                    // SAFETY: `resolve` checked the element's bytes.
                    gathered.extend_from_slice(unsafe { std::slice::from_raw_parts(from, item) });
                }
                let n = gathered.len() / item;
                let staged = cpu.upload(0, MemoryKind::Device, &gathered).map_err(e)?;
                let l = Layout::contiguous(&[n]).map_err(e)?;
                let mut cur = staged;
                let mut dt = input;
                if acc != input {
                    cur = cpu
                        .cast(
                            TensorRef {
                                buffer: &*cur,
                                layout: &l,
                                dtype: input,
                            },
                            acc,
                        )
                        .map_err(e)?;
                    dt = acc;
                }
                let folded = cpu
                    .reduce(
                        op,
                        TensorRef {
                            buffer: &*cur,
                            layout: &l,
                            dtype: dt,
                        },
                        &[0],
                    )
                    .map_err(e)?;
                let scalar = Layout::contiguous(&[]).map_err(e)?;
                let result = if output != dt {
                    cpu.cast(
                        TensorRef {
                            buffer: &*folded,
                            layout: &scalar,
                            dtype: dt,
                        },
                        output,
                    )
                    .map_err(e)?
                } else {
                    folded
                };
                store(
                    s,
                    out + b * output.size_in_bytes() as u64,
                    &*result,
                    output,
                    1,
                )?;
            }
            Ok(())
        }
        KernelSpec::Matmul { dtype, batch } => {
            let p = MatmulParams::unpack(words(args)?, batch as usize)
                .ok_or("parameter words do not match the kernel")?;
            let out = ptr_arg(args, 1)?;
            let (ba, bb) = (view(s, ptr_arg(args, 2)?)?, view(s, ptr_arg(args, 3)?)?);
            let item = dtype.size_in_bytes();
            for z in 0..p.batch {
                let ao = p.a[2] + offset_of(z, &p.batch_shape, &p.a_batch);
                let bo = p.b[2] + offset_of(z, &p.batch_shape, &p.b_batch);
                let la = layout(&[p.m, p.k], &p.a[..2], ao, ba.len_bytes() / item)?;
                let lb = layout(&[p.k, p.n], &p.b[..2], bo, bb.len_bytes() / item)?;
                let r = cpu
                    .matmul(
                        TensorRef {
                            buffer: &ba,
                            layout: &la,
                            dtype,
                        },
                        TensorRef {
                            buffer: &bb,
                            layout: &lb,
                            dtype,
                        },
                    )
                    .map_err(e)?;
                let mn = (p.m * p.n) as usize;
                store(s, out + z * (mn * item) as u64, &*r, dtype, mn)?;
            }
            Ok(())
        }
    }
}

/// Runs a BLAS GEMM by its column-major definition: `C = op(A) · op(B)`, `C` being `m x n`
/// with `C(i, j)` at `i + j * ldc`. Computed as the row-major product
/// `Cᵀ[n, m] = op(B)ᵀ · op(A)ᵀ`, which is `C`'s memory when `ldc == m` (the runtime's
/// contiguous outputs), with each operand's layout read off its descriptor.
pub(super) fn gemm(s: &State, g: &crate::backends::gpu::blas::Gemm) -> Result<(), String> {
    if g.ldc != g.m {
        return Err(format!("the fake GEMM writes packed outputs only: {g:?}"));
    }
    let cpu = cpu()?;
    let item = g.dtype.size_in_bytes() as u64;
    let (m, n, k) = (g.m as u64, g.n as u64, g.k as u64);
    for z in 0..g.batch as u64 {
        let at = |p: u64, stride: i64| p + z * stride as u64 * item;
        let (ba, bb) = (
            view(s, at(g.a.ptr, g.a.batch_stride))?,
            view(s, at(g.b.ptr, g.b.batch_stride))?,
        );
        let (lda, ldb) = (g.a.ld as i64, g.b.ld as i64);
        // op(B)ᵀ is n x k: element (j, l) is op(B)(l, j).
        let bt = if g.b.trans { [1, ldb] } else { [ldb, 1] };
        // op(A)ᵀ is k x m: element (l, i) is op(A)(i, l).
        let at_ = if g.a.trans { [1, lda] } else { [lda, 1] };
        let lb = layout(&[n, k], &bt, 0, bb.len_bytes() / item as usize)?;
        let la = layout(&[k, m], &at_, 0, ba.len_bytes() / item as usize)?;
        let r = cpu
            .matmul(
                TensorRef {
                    buffer: &bb,
                    layout: &lb,
                    dtype: g.dtype,
                },
                TensorRef {
                    buffer: &ba,
                    layout: &la,
                    dtype: g.dtype,
                },
            )
            .map_err(|e| e.to_string())?;
        let mn = (m * n) as usize;
        store(s, g.c + z * g.c_stride as u64 * item, &*r, g.dtype, mn)?;
    }
    Ok(())
}
