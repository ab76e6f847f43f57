//! Kernel launches: the shared GPU backend's ops, each one generated kernel (two passes for
//! long reductions), its parameters packed from the layouts.

use super::buffer::GpuBuffer;
use super::codegen::{self, ops};
use super::device::DeviceState;
use super::driver::{Driver, KernelArg, LaunchDims};
use super::kernel::{KernelSpec, MapOp};
use super::params::{BLOCK, MapParams, MatmulParams, ReduceParams, TILE, UNROLL, blocks_for};
use super::transfer::{alloc, finish};
use crate::backends::{DeviceBuffer, ReduceOp, TensorRef};
use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::layout::checked_bytes;
use std::sync::Arc;

fn rank_u8(dev: &DeviceState<impl Driver>, rank: usize) -> Result<u8> {
    u8::try_from(rank).map_err(|_| Error::Backend {
        backend: dev.backend().to_string(),
        message: format!("{rank} axes after merging exceed the kernels' limit of 255"),
    })
}

/// Queues `spec` with `args` and returns the output once its event is recorded.
fn run<D: Driver>(
    dev: &Arc<DeviceState<D>>,
    spec: KernelSpec,
    op: &str,
    dims: LaunchDims,
    args: &[KernelArg],
) -> Result<()> {
    let f = dev.kernel(spec, op)?;
    // SAFETY: the arguments follow the generated signature of `spec` (params struct, output,
    // inputs); every address belongs to a buffer the caller keeps alive until the launch is
    // queued, after which the pools' stream ordering and the deferred queue keep them valid.
    dev.ok(unsafe { dev.driver.launch(dev.index, dev.stream, f, dims, args) })
}

fn grid(dev: &DeviceState<impl Driver>, blocks: u32) -> LaunchDims {
    LaunchDims {
        grid: [blocks.min(dev.info.max_grid_x.max(1)), 1, 1],
        block: BLOCK,
    }
}

/// An elementwise kernel over `inputs` (one shape) into a new contiguous buffer of dtype
/// `output` on the first input's device and memory kind.
pub(crate) fn map<D: Driver>(
    dev: &Arc<DeviceState<D>>,
    op: MapOp,
    inputs: &[TensorRef<'_>],
    buffers: &[&GpuBuffer<D>],
    output: DType,
) -> Result<GpuBuffer<D>> {
    dev.check()?;
    let input = inputs[inputs.len() - 1].dtype;
    if let Some((k, t)) = inputs
        .iter()
        .enumerate()
        .find(|(k, t)| t.dtype != op.operand_dtype(*k, input))
    {
        return Err(Error::DTypeMismatch {
            op: "kernel input",
            expected: op.operand_dtype(k, input).to_string(),
            got: t.dtype,
        });
    }
    match (op, codegen::map_output(op, input)) {
        (MapOp::Cast, _) => {}
        (_, None) => return Err(Error::unsupported(dev.backend(), op.name(), input)),
        (_, Some(want)) => crate::backends::op::expect_out(op.name(), output, want)?,
    }
    let layouts: Vec<_> = inputs.iter().map(|t| t.layout).collect();
    let p = MapParams::new(&layouts);
    let spec = KernelSpec::Map {
        op,
        input,
        output,
        rank: rank_u8(dev, p.rank())?,
    };
    // Threads for the 16-byte path where the kernel has one; when the operands turn out not
    // to be aligned for it, the strided loop covers the rest with the same threads.
    let lanes = codegen::map_lanes(op, input, output, p.rank()).unwrap_or(1);
    let n = p.n as usize;
    let bytes = checked_bytes(n, output.size_in_bytes(), &dev.name)?;
    let kind = buffers[0].memory_kind();
    let out = GpuBuffer::new(dev.clone(), alloc(dev, kind, bytes)?, bytes, kind, None);
    if n > 0 {
        let mut args = vec![KernelArg::Struct(p.pack()), KernelArg::Ptr(out.unified())];
        args.extend(buffers.iter().map(|b| KernelArg::Ptr(b.unified())));
        run(
            dev,
            spec,
            op.name(),
            grid(dev, blocks_for(p.n.div_ceil(UNROLL * lanes), u32::MAX)),
            &args,
        )?;
    }
    finish(out)
}

/// The element bytes of `value` as `dtype`, in two little-endian words.
fn value_words(dtype: DType, value: Scalar) -> [u64; 2] {
    let mut bytes = [0u8; 16];
    crate::with_dtype!(dtype, T => {
        let v = <T as crate::dtype::Element>::from_scalar(value);
        let src = bytemuck::bytes_of(&v);
        bytes[..src.len()].copy_from_slice(src);
    });
    [
        u64::from_le_bytes(bytes[..8].try_into().unwrap_or_default()),
        u64::from_le_bytes(bytes[8..].try_into().unwrap_or_default()),
    ]
}

pub(crate) fn fill<D: Driver>(
    dev: &Arc<DeviceState<D>>,
    kind: crate::backends::MemoryKind,
    dtype: DType,
    value: Scalar,
    len: usize,
) -> Result<GpuBuffer<D>> {
    let bytes = checked_bytes(len, dtype.size_in_bytes(), &dev.name)?;
    let out = GpuBuffer::new(dev.clone(), alloc(dev, kind, bytes)?, bytes, kind, None);
    if len > 0 {
        let [lo, hi] = value_words(dtype, value);
        let args = [
            KernelArg::U64(len as u64),
            KernelArg::U64(lo),
            KernelArg::U64(hi),
            KernelArg::Ptr(out.unified()),
        ];
        let dims = grid(dev, blocks_for(len as u64, u32::MAX));
        run(dev, KernelSpec::Fill { dtype }, "fill", dims, &args)?;
    }
    finish(out)
}

/// Threefry-2x32 random bits of `counters` as `form` (see [`crate::backends::threefry`]).
pub(crate) fn random_bits<D: Driver>(
    dev: &Arc<DeviceState<D>>,
    kind: crate::backends::MemoryKind,
    key: [u32; 2],
    counters: &crate::backends::Counters,
    form: crate::backends::BitsForm,
) -> Result<GpuBuffer<D>> {
    dev.check()?;
    let c = counters.merged();
    let n = c.len();
    let bytes = checked_bytes(n, 4 * form.words(), &dev.name)?;
    let out = GpuBuffer::new(dev.clone(), alloc(dev, kind, bytes)?, bytes, kind, None);
    if n > 0 {
        let mut words = vec![n as u64, key[0] as u64 | (key[1] as u64) << 32, c.offset];
        words.extend(c.shape.iter().map(|&d| d as u64));
        words.extend(&c.strides);
        let args = [KernelArg::Struct(words), KernelArg::Ptr(out.unified())];
        let spec = KernelSpec::Threefry {
            form,
            rank: rank_u8(dev, c.shape.len())?,
        };
        let dims = grid(dev, blocks_for(n as u64, u32::MAX));
        run(dev, spec, "random_bits", dims, &args)?;
    }
    finish(out)
}

/// Blocks that keep the device busy: four per multiprocessor.
fn target_blocks(dev: &DeviceState<impl Driver>) -> u64 {
    4 * dev.info.multiprocessors.max(1) as u64
}

pub(crate) fn reduce<D: Driver>(
    dev: &Arc<DeviceState<D>>,
    op: ReduceOp,
    x: TensorRef<'_>,
    xb: &GpuBuffer<D>,
    axes: &[usize],
) -> Result<GpuBuffer<D>> {
    dev.check()?;
    let dt = x.dtype;
    let acc = ops::accumulator(dt);
    if ops::reduce_identity(op, acc).is_none() {
        return Err(Error::unsupported(dev.backend(), op.name(), dt));
    }
    if let Some(&a) = axes.iter().find(|&&a| a >= x.layout.ndim()) {
        return Err(Error::IndexOutOfRange {
            what: "axis",
            index: a as i64,
            size: x.layout.ndim(),
        });
    }
    let p = ReduceParams::new(x.layout, axes, target_blocks(dev));
    let kind = xb.memory_kind();
    let bytes = checked_bytes(p.n_out as usize, dt.size_in_bytes(), &dev.name)?;
    let out = GpuBuffer::new(dev.clone(), alloc(dev, kind, bytes)?, bytes, kind, None);
    if p.n_out == 0 {
        return finish(out);
    }
    let spec = |input, output, kept: usize, reduced: usize| -> Result<KernelSpec> {
        Ok(KernelSpec::Reduce {
            op,
            input,
            output,
            kept: rank_u8(dev, kept)?,
            reduced: rank_u8(dev, reduced)?,
        })
    };
    let launch = |params: &ReduceParams, spec: KernelSpec, out: u64, input: u64| {
        let blocks = (params.n_out * params.chunks).min(u32::MAX as u64) as u32;
        let args = [
            KernelArg::Struct(params.pack()),
            KernelArg::Ptr(out),
            KernelArg::Ptr(input),
        ];
        run(dev, spec, op.name(), grid(dev, blocks), &args)
    };
    let (kr, rr) = (p.kept_shape.len(), p.red_shape.len());
    if p.chunks == 1 {
        launch(&p, spec(dt, dt, kr, rr)?, out.unified(), xb.unified())?;
        return finish(out);
    }
    // Long reductions with few outputs: partials per chunk in the accumulator dtype, then a
    // second pass over them.
    let pbytes = checked_bytes(
        (p.n_out * p.chunks) as usize,
        acc.size_in_bytes(),
        &dev.name,
    )?;
    let partial = GpuBuffer::new(dev.clone(), alloc(dev, kind, pbytes)?, pbytes, kind, None);
    launch(&p, spec(dt, acc, kr, rr)?, partial.unified(), xb.unified())?;
    let q = p.second_pass();
    let second = spec(acc, dt, q.kept_shape.len(), q.red_shape.len())?;
    launch(&q, second, out.unified(), partial.unified())?;
    // `partial` returns to the pool now: later work on this stream runs after the pass.
    drop(partial);
    finish(out)
}

pub(crate) fn matmul<D: Driver>(
    dev: &Arc<DeviceState<D>>,
    a: TensorRef<'_>,
    b: TensorRef<'_>,
    ab: &GpuBuffer<D>,
    bb: &GpuBuffer<D>,
) -> Result<GpuBuffer<D>> {
    dev.check()?;
    let dt = a.dtype;
    if b.dtype != dt {
        return Err(Error::DTypeMismatch {
            op: "matmul",
            expected: dt.to_string(),
            got: b.dtype,
        });
    }
    let (la, lb) = (a.layout, b.layout);
    let r = la.ndim();
    if r < 2
        || lb.ndim() != r
        || la.shape()[..r - 2] != lb.shape()[..r - 2]
        || la.shape()[r - 1] != lb.shape()[r - 2]
    {
        return Err(Error::ShapeMismatch {
            op: "matmul",
            lhs: la.shape().to_vec(),
            rhs: lb.shape().to_vec(),
        });
    }
    let p = MatmulParams::new(la, lb);
    let elements = crate::layout::checked_size(&[p.batch as usize, p.m as usize, p.n as usize])?;
    let bytes = checked_bytes(elements, dt.size_in_bytes(), &dev.name)?;
    let kind = ab.memory_kind();
    let out = GpuBuffer::new(dev.clone(), alloc(dev, kind, bytes)?, bytes, kind, None);
    if elements == 0 {
        return finish(out);
    }
    if let Some(g) = super::blas::gemm_for(&p, dt, ab.unified(), bb.unified(), out.unified()) {
        // SAFETY: the descriptor addresses the operands' elements as their layouts do and
        // the contiguous output; the buffers outlive the queued work (drops are ordered
        // after it).
        if let Some(r) = unsafe { dev.driver.gemm(dev.index, dev.stream, &g) } {
            dev.ok(r)?;
            return finish(out);
        }
    }
    let gx = p.n.div_ceil(TILE);
    if gx > dev.info.max_grid_x as u64 {
        return Err(Error::Backend {
            backend: dev.backend().to_string(),
            message: format!("matmul with {} columns exceeds the launch grid", p.n),
        });
    }
    let dims = LaunchDims {
        grid: [
            gx as u32,
            p.m.div_ceil(TILE).min(65535) as u32,
            p.batch.min(65535) as u32,
        ],
        block: BLOCK,
    };
    let spec = KernelSpec::Matmul {
        dtype: dt,
        batch: rank_u8(dev, p.batch_shape.len())?,
    };
    let args = [
        KernelArg::Struct(p.pack()),
        KernelArg::Ptr(out.unified()),
        KernelArg::Ptr(ab.unified()),
        KernelArg::Ptr(bb.unified()),
    ];
    run(dev, spec, "matmul", dims, &args)?;
    finish(out)
}
