//! The op front end: checks shapes and dtypes, promotes, broadcasts, places operands on the
//! devices of the output's shards, and runs the backend kernels shard by shard (in parallel
//! when there are several shards and enough work).

use super::sharding::{PartitionSpec, Sharding};
use super::{Array, Region, ShardData};
use crate::backends::{BinaryOp, Device, MemoryKind, ReduceOp, SharedBuffer, TensorRef, UnaryOp};
use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::layout::{Dims, Layout, broadcast_shapes, normalize_axis, same_shape};
use std::borrow::Cow;
use std::ops::Range;

/// Which axes a reduction runs over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Axes {
    /// Every axis.
    All,
    /// These axes (negative ones count from the end).
    These(Vec<isize>),
}
impl From<isize> for Axes {
    fn from(a: isize) -> Self {
        Axes::These(vec![a])
    }
}
impl From<&[isize]> for Axes {
    fn from(a: &[isize]) -> Self {
        Axes::These(a.to_vec())
    }
}
impl<const N: usize> From<[isize; N]> for Axes {
    fn from(a: [isize; N]) -> Self {
        Axes::These(a.to_vec())
    }
}
impl From<Vec<isize>> for Axes {
    fn from(a: Vec<isize>) -> Self {
        Axes::These(a)
    }
}

/// Where one output shard is computed.
pub(super) struct Target {
    pub device: Device,
    pub kind: MemoryKind,
    pub index: Region,
}

/// Shards with at least this many elements in total run side by side. Below it, waking a
/// pool thread (~20 us here) costs more than computing the other shards in turn (a 128K-
/// element add takes ~20 us on one core).
const SHARD_PAR_MIN: usize = 1 << 17;

/// Runs `f` for every target, in parallel when worthwhile: the calling thread computes the
/// last target while rayon's global pool takes the others. (Persistent workers, not a thread
/// per shard: spawning cost ~30 us per thread, more than a 64K-element add takes.)
pub(super) fn run_targets(
    targets: &[Target],
    total: usize,
    f: impl Fn(&Target) -> Result<ShardData> + Sync,
) -> Result<Vec<ShardData>> {
    if targets.len() <= 1 || total < SHARD_PAR_MIN {
        return targets.iter().map(&f).collect();
    }
    // A panicking shard is an error of this op, not a panic of the caller.
    let guarded = |t: &Target| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(t)))
            .unwrap_or_else(|_| Err(Error::invalid("a shard's computation panicked")))
    };
    let mut out: Vec<Option<Result<ShardData>>> = targets.iter().map(|_| None).collect();
    rayon::in_place_scope(|scope| {
        let (mine, rest) = out.split_last_mut().expect("targets.len() > 1");
        let (last, others) = targets.split_last().expect("targets.len() > 1");
        for (slot, t) in rest.iter_mut().zip(others) {
            let guarded = &guarded;
            scope.spawn(move |_| *slot = Some(guarded(t)));
        }
        *mine = Some(guarded(last));
    });
    out.into_iter()
        .map(|r| r.unwrap_or_else(|| Err(Error::invalid("a shard's computation did not run"))))
        .collect()
}

/// Where an elementwise op over `operands` (broadcast to `shape`) computes: sharded as the
/// first operand when it has the full shape, else as the first later operand that has it and
/// is sharded, else on the first operand's first device.
pub(super) fn output_placement(
    operands: &[&Array],
    shape: &[usize],
) -> Result<(Sharding, Vec<Target>)> {
    let chosen = operands
        .iter()
        .enumerate()
        .find(|(k, a)| same_shape(a.shape(), shape) && (*k == 0 || !a.is_single_device()));
    if let Some((_, a)) = chosen {
        return Ok((a.sharding().clone(), targets_of(a)));
    }
    let s = operands[0]
        .shard_data()
        .first()
        .ok_or_else(|| Error::invalid("array has no shard"))?;
    let t = Target {
        device: s.device.clone(),
        kind: s.memory_kind(),
        index: super::whole_region(shape),
    };
    Ok((Sharding::SingleDevice(t.device.clone(), t.kind), vec![t]))
}

pub(super) fn targets_of(a: &Array) -> Vec<Target> {
    a.shard_data()
        .iter()
        .map(|s| Target {
            device: s.device.clone(),
            kind: s.memory_kind(),
            index: s.index.clone(),
        })
        .collect()
}

/// `region` of an output of `out_ndim` axes, as seen by an operand of `shape` broadcast to it.
pub(super) fn broadcast_region(region: &[Range<usize>], shape: &[usize]) -> Vec<Range<usize>> {
    let lead = region.len() - shape.len();
    shape
        .iter()
        .enumerate()
        .map(|(k, &d)| {
            // An axis of extent 1 is broadcast: every region of the output reads its one
            // element, also a region of one that does not start at 0 (the second of two
            // one-row shards asked a (1, n) operand for its row 1, which it has not).
            if d == 1 {
                0..1
            } else {
                region[lead + k].clone()
            }
        })
        .collect()
}

pub(super) fn shard_out(t: &Target, buffer: SharedBuffer) -> Result<ShardData> {
    let shape: Vec<usize> = t.index.iter().map(|r| r.len()).collect();
    Ok(ShardData {
        device: t.device.clone(),
        index: t.index.clone(),
        buffer,
        layout: Layout::contiguous(&shape)?,
    })
}

/// `layout` broadcast to `shape`, borrowed when unchanged.
pub(super) fn broadcast_view<'a>(layout: &'a Layout, shape: &[usize]) -> Result<Cow<'a, Layout>> {
    Ok(if same_shape(layout.shape(), shape) {
        Cow::Borrowed(layout)
    } else {
        Cow::Owned(layout.broadcast_to(shape)?)
    })
}

/// The one shard of an array on one device under a single-device sharding: there a kernel's
/// output is the whole result, and the general path's target and shard lists (most of a small
/// op's fixed cost: a 1K cast spent ~0.5 us in them) are not needed.
fn sole_shard(x: &Array) -> Option<&ShardData> {
    x.single().filter(|_| x.has_single_device_sharding())
}

/// A kernel's output `buf` (row-major, `shape`) as the array on `s`'s device.
#[inline]
fn whole_result(s: &ShardData, dtype: DType, buf: SharedBuffer, shape: &[usize]) -> Array {
    Array::from_contiguous_buffer(&s.device, dtype, buf, shape)
}

/// Both operands' shards, when each has one and they share its device: then the kernel runs
/// directly. This is the common case, and the per-op overhead of small arrays is dominated
/// by what the general path allocates.
#[inline(always)]
fn single_device<'a>(a: &'a Array, b: &'a Array) -> Option<(&'a ShardData, &'a ShardData)> {
    let (sa, sb) = (a.single()?, b.single()?);
    (sa.device == sb.device).then_some((sa, sb))
}

/// `Err(e)`, out of line. Built inline, the compiler merged the error's copy into the
/// result with the success's store of one pointer: every small op then copied the 80-byte
/// result from stack slots that the success path never wrote, and the loads of those
/// slots waited on older stores of other widths (a 1K-element add spent ~6 ns there).
#[cold]
#[inline(never)]
fn failed(e: crate::Error) -> Result<Array> {
    Err(e)
}

/// Runs `op` on the device of `a` over two operands there, broadcast to `shape`.
fn binary_kernel(
    op: BinaryOp,
    a: &ShardData,
    b: &ShardData,
    shape: &[usize],
    compute: DType,
    out: DType,
) -> Result<SharedBuffer> {
    let la = broadcast_view(&a.layout, shape)?;
    let lb = broadcast_view(&b.layout, shape)?;
    let ta = TensorRef {
        buffer: &*a.buffer,
        layout: &la,
        dtype: compute,
    };
    let tb = TensorRef {
        buffer: &*b.buffer,
        layout: &lb,
        dtype: compute,
    };
    a.device.backend().binary(op, ta, tb, out)
}

impl Array {
    /// This array converted to `dtype` (a no-op when it already has it).
    pub fn astype(&self, dtype: DType) -> Result<Array> {
        if dtype == self.dtype() {
            return Ok(self.clone());
        }
        self.converted(dtype)
    }

    /// `astype` for an op's operand: borrows when no conversion is needed. An op's own
    /// operands are the common case, and cloning them costs two atomic updates each.
    fn as_dtype(&self, dtype: DType) -> Result<Cow<'_, Array>> {
        if dtype == self.dtype() {
            return Ok(Cow::Borrowed(self));
        }
        self.converted(dtype).map(Cow::Owned)
    }

    /// A copy of this array in fresh memory, with the same sharding and memory kinds
    /// (row-major per shard): what the array API's `copy=True` asks for, since an array shares
    /// its buffers with every clone and every DLPack consumer. A byte copy, so it works for
    /// every dtype a device stores (wgpu copies float64 it has no cast kernel for).
    pub fn deep_copy(&self) -> Result<Array> {
        self.per_shard(self.dtype(), |d, t, kind| {
            d.backend().copy(t, d.index(), kind)
        })
    }

    /// Every shard run through the backend's cast kernel (an identity cast copies).
    fn converted(&self, dtype: DType) -> Result<Array> {
        self.per_shard(dtype, |d, t, _| d.backend().cast(t, dtype))
    }

    /// The array whose shards are `kernel`'s outputs (of `dtype`) for this array's shards,
    /// each given its device and memory kind; same shape and sharding.
    #[inline]
    pub(super) fn per_shard(
        &self,
        dtype: DType,
        kernel: impl Fn(&Device, TensorRef<'_>, MemoryKind) -> Result<SharedBuffer> + Sync,
    ) -> Result<Array> {
        if let Some(s) = sole_shard(self) {
            let buf = kernel(&s.device, s.tensor(self.dtype()), s.memory_kind())?;
            return Ok(whole_result(s, dtype, buf, self.shape()));
        }
        let targets = targets_of(self);
        let shards = run_targets(&targets, self.size(), |t| {
            let s = self.region_on(&t.index, &t.device, t.kind)?;
            let buf = kernel(&t.device, s.tensor(self.dtype()), t.kind)?;
            shard_out(t, buf)
        })?;
        Ok(Array::from_shards(
            self.shape(),
            dtype,
            self.sharding().clone(),
            shards,
            false,
        ))
    }

    /// `want`, or its 32-bit counterpart where a device holding this array has no kernels
    /// for it (wgpu has no 64-bit types): what JAX does with x64 disabled, so integer sums,
    /// means and true divisions work there.
    #[inline]
    pub(super) fn on_devices(&self, want: DType) -> DType {
        Array::on_devices_of(&[self], want)
    }

    /// `want`, or its 32-bit counterpart where a device holding one of `arrays` has no
    /// kernels for it (wgpu has no 64-bit types), for an op over them: each operand is cast
    /// on its own devices before the op moves it, so any of them decides (an `int32` array on
    /// the CPU divided by one sharded onto wgpu computes in float32, as JAX with x64
    /// disabled).
    #[inline]
    pub fn on_devices_of(arrays: &[&Array], want: DType) -> DType {
        // Inline, the common answer (not a 64-bit type) skips the call: ~30 of a small
        // sum's instructions.
        match want.narrow_64() {
            None => want,
            Some(narrow) => Array::narrowed_unless_all_compute(arrays, want, narrow),
        }
    }

    /// `want` where every device holding `arrays` has kernels for it, else `narrow`.
    #[inline(never)]
    fn narrowed_unless_all_compute(arrays: &[&Array], want: DType, narrow: DType) -> DType {
        let has = |a: &&Array| {
            a.shard_data()
                .iter()
                .all(|s| s.device.kernel_dtypes().contains(&want))
        };
        if arrays.iter().all(has) { want } else { narrow }
    }

    /// The dtype an op over `arrays` computes in: NumPy's promotion, except that a 64-bit
    /// type promotion alone makes (`int32 + float32` gives float64, `int32 + uint32` int64)
    /// is its 32-bit counterpart where a device holding one of them has no 64-bit kernels
    /// (wgpu), as JAX computes with x64 disabled. A 64-bit operand keeps its type (and such
    /// devices refuse it). Float32 for no arrays.
    ///
    /// ```
    /// use dlarray::{Array, DType};
    /// let i = Array::from_vec(vec![1i32, 2], &[2]).unwrap();
    /// let f = Array::from_vec(vec![0.5f32, 1.0], &[2]).unwrap();
    /// assert_eq!(Array::promoted_on_devices(&[&i, &f]), DType::F64); // on the CPU
    /// ```
    pub fn promoted_on_devices(arrays: &[&Array]) -> DType {
        let mut dtypes = arrays.iter().map(|a| a.dtype());
        let Some(first) = dtypes.next() else {
            return DType::F32;
        };
        let p = dtypes.fold(first, DType::promote);
        if arrays.iter().any(|a| a.dtype() == p) {
            p
        } else {
            Array::on_devices_of(arrays, p)
        }
    }

    /// Elementwise `op(self)`.
    pub fn unary(&self, op: UnaryOp) -> Result<Array> {
        let identity = match op {
            // The conjugate of a real number is itself: no kernel, no copy.
            UnaryOp::Conj => !self.dtype().is_complex(),
            // |b| of a bool is b, as NumPy's and JAX's abs give it.
            UnaryOp::Abs => self.dtype() == DType::Bool,
            _ => false,
        };
        if identity {
            return Ok(self.clone());
        }
        let (input, out) = match op {
            UnaryOp::LogicalNot => (DType::Bool, DType::Bool),
            UnaryOp::Abs => (self.dtype(), self.dtype().real_part()),
            UnaryOp::Neg => (self.dtype(), self.dtype()),
            UnaryOp::Signbit => {
                if !self.dtype().is_float() {
                    return Err(Error::DTypeMismatch {
                        op: op.name(),
                        expected: "a real floating dtype".into(),
                        got: self.dtype(),
                    });
                }
                (self.dtype(), DType::Bool)
            }
            UnaryOp::BitwiseInvert => {
                let d = self.dtype();
                if !(d.is_integer() || d == DType::Bool) {
                    return Err(Error::DTypeMismatch {
                        op: op.name(),
                        expected: "an integer or boolean dtype".into(),
                        got: d,
                    });
                }
                (d, d)
            }
            // The array API: integers are their own floor, ceil and round; bool has none.
            UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Round | UnaryOp::Sign => {
                if self.dtype() == DType::Bool {
                    return Err(Error::DTypeMismatch {
                        op: op.name(),
                        expected: "a numeric dtype".into(),
                        got: DType::Bool,
                    });
                }
                (self.dtype(), self.dtype())
            }
            // exp, log, ...: integers compute in float64 (NumPy's promotion).
            _ => {
                let f = self.on_devices(self.dtype().float_dtype());
                (f, f)
            }
        };
        if op == UnaryOp::LogicalNot && self.dtype() != DType::Bool {
            return Err(Error::DTypeMismatch {
                op: op.name(),
                expected: "bool".into(),
                got: self.dtype(),
            });
        }
        let x = self.as_dtype(input)?;
        if let Some(s) = sole_shard(&x) {
            let buf = s.device.backend().unary(op, s.tensor(input), out)?;
            return Ok(whole_result(s, out, buf, x.shape()));
        }
        let targets = targets_of(&x);
        let shards = run_targets(&targets, x.size(), |t| {
            let s = x.region_on(&t.index, &t.device, t.kind)?;
            let buf = t.device.backend().unary(op, s.tensor(input), out)?;
            shard_out(t, buf)
        })?;
        Ok(Array::from_shards(
            x.shape(),
            out,
            x.sharding().clone(),
            shards,
            false,
        ))
    }

    /// Elementwise `op(self, other)` with NumPy broadcasting and type promotion. The output
    /// takes the sharding of the operand with the output's shape (the left one first); the
    /// other operand is resharded to match.
    pub fn binary(&self, op: BinaryOp, other: &Array) -> Result<Array> {
        let (da, db) = (self.dtype(), other.dtype());
        // Equal dtypes (the common case) skip the promotion table's call.
        let mut common = if da == db { da } else { DType::promote(da, db) };
        // int32 < uint32 compared in int32 would answer wrongly for large values: comparisons
        // of integers take the exact int64 or nothing.
        if common != da && common != db && !(op.is_comparison() && common.is_integer()) {
            common = Array::on_devices_of(&[self, other], common);
        }
        if common == DType::Bool
            && let Some(r) = self.bool_arithmetic(op, other)
        {
            return r;
        }
        let expected = if op.is_shift() && !common.is_integer() {
            Some("integer dtypes")
        } else if op.is_bitwise() && !(common.is_integer() || common == DType::Bool) {
            Some("integer or boolean dtypes")
        } else {
            None
        };
        if let Some(expected) = expected {
            return Err(Error::DTypeMismatch {
                op: op.name(),
                expected: expected.into(),
                got: common,
            });
        }
        let (compute, out) = if op.is_logical() {
            (DType::Bool, DType::Bool)
        } else if op.is_comparison() {
            (common, DType::Bool)
        } else if (op == BinaryOp::Div || op.is_real_float()) && !common.is_inexact() {
            // True division of integers gives float64, as NumPy's `/`.
            let f = Array::on_devices_of(&[self, other], DType::F64);
            (f, f)
        } else {
            (common, common)
        };
        let (a, b) = (self.as_dtype(compute)?, other.as_dtype(compute)?);
        let shape = broadcast_shapes(op.name(), a.shape(), b.shape())?;
        if let Some((sa, sb)) = single_device(&a, &b) {
            return match binary_kernel(op, sa, sb, &shape, compute, out) {
                Ok(buf) => Ok(whole_result(sa, out, buf, &shape)),
                Err(e) => failed(e),
            };
        }
        let (sharding, targets) = output_placement(&[&a, &b], &shape)?;
        let total: usize = shape.iter().product();
        let shards = run_targets(&targets, total, |t| {
            let sub: Vec<usize> = t.index.iter().map(|r| r.len()).collect();
            let pa = a.region_on(&broadcast_region(&t.index, a.shape()), &t.device, t.kind)?;
            let pb = b.region_on(&broadcast_region(&t.index, b.shape()), &t.device, t.kind)?;
            let buf = binary_kernel(op, &pa, &pb, &sub, compute, out)?;
            shard_out(t, buf)
        })?;
        Ok(Array::from_shards(&shape, out, sharding, shards, false))
    }

    /// Arithmetic on two bools as NumPy, PyTorch and JAX have it: `+` is `or`, `*` is `and`
    /// (as the backends' own bool `maximum` and `minimum`); floor division, remainder and
    /// powers compute in int8 (NumPy's result dtype). `None` for the ops that take bools as
    /// they are, or refuse them (subtraction has no bool meaning; NumPy refuses it too).
    #[cold]
    #[inline(never)]
    fn bool_arithmetic(&self, op: BinaryOp, other: &Array) -> Option<Result<Array>> {
        Some(match op {
            BinaryOp::Add => self.binary(BinaryOp::BitwiseOr, other),
            BinaryOp::Mul => self.binary(BinaryOp::BitwiseAnd, other),
            BinaryOp::FloorDivide | BinaryOp::Remainder | BinaryOp::Pow => self
                .as_dtype(DType::I8)
                .and_then(|a| a.binary(op, &*other.as_dtype(DType::I8)?)),
            _ => return None,
        })
    }

    /// Reduces over `axes`; `keepdims` keeps them as size-1 axes. Runs shard by shard when no
    /// reduced axis is split, else on the array gathered to its first device.
    pub fn reduce(&self, op: ReduceOp, axes: impl Into<Axes>, keepdims: bool) -> Result<Array> {
        let nd = self.ndim();
        let axes: Dims = match axes.into() {
            // The common case, built without SmallVec's general `collect` (a tenth of a small
            // sum's overhead went to collecting these two lists).
            Axes::All if nd <= 4 => Dims::from_buf_and_len([0, 1, 2, 3], nd),
            Axes::All => (0..nd).collect(),
            Axes::These(v) => {
                let mut axes = v
                    .iter()
                    .map(|&a| normalize_axis(a, nd))
                    .collect::<Result<Dims>>()?;
                axes.sort_unstable();
                if axes.windows(2).any(|w| w[0] == w[1]) {
                    return Err(Error::invalid(format!("duplicate axis in {axes:?}")));
                }
                axes
            }
        };
        let extent: usize = axes.iter().map(|&a| self.shape()[a]).product();
        if extent == 0 && !matches!(op, ReduceOp::Sum | ReduceOp::Prod) {
            return Err(Error::invalid(format!(
                "zero-size array to reduction operation {op} which has no identity"
            )));
        }
        // NumPy: sums and products of small integers and bools accumulate in 64 bits; the
        // backend widens as it reads (`reduce_as`), so the input is not converted first.
        let out = match op {
            ReduceOp::Sum | ReduceOp::Prod => self.on_devices(self.dtype().sum_dtype()),
            _ => self.dtype(),
        };
        let keep = |k: usize| !axes.contains(&k);
        let out_shape: Dims = match (axes.len() == nd, keepdims) {
            (true, false) => Dims::new(),
            (true, true) => Dims::from_elem(1, nd),
            _ => (0..nd)
                .filter_map(|k| {
                    if keep(k) {
                        Some(self.shape()[k])
                    } else if keepdims {
                        Some(1)
                    } else {
                        None
                    }
                })
                .collect(),
        };
        if let Some(s) = sole_shard(self) {
            let buf = s
                .device
                .backend()
                .reduce_as(op, s.tensor(self.dtype()), &axes, out)?;
            return Ok(whole_result(s, out, buf, &out_shape));
        }
        let x = self.clone();
        let split = x
            .shard_data()
            .iter()
            .any(|s| axes.iter().any(|&a| s.index[a].len() != x.shape()[a]));
        let x = if split {
            let s = &x.shard_data()[0];
            x.device_put(&Sharding::SingleDevice(s.device.clone(), s.memory_kind()))?
        } else {
            x
        };
        let targets: Vec<Target> = x
            .shard_data()
            .iter()
            .map(|s| Target {
                device: s.device.clone(),
                kind: s.memory_kind(),
                index: (0..nd)
                    .filter_map(|k| {
                        if keep(k) {
                            Some(s.index[k].clone())
                        } else if keepdims {
                            Some(0..1)
                        } else {
                            None
                        }
                    })
                    .collect(),
            })
            .collect();
        let shards = run_targets(&targets, x.size(), |t| {
            let s = x
                .shard_data()
                .iter()
                .find(|s| s.device == t.device)
                .ok_or_else(|| Error::invalid("reduction lost a shard"))?;
            let buf = t
                .device
                .backend()
                .reduce_as(op, s.tensor(x.dtype()), &axes, out)?;
            shard_out(t, buf)
        })?;
        let sharding = match (x.sharding(), keepdims) {
            (Sharding::Named(m, spec), true) => Sharding::Named(
                m.clone(),
                PartitionSpec(
                    (0..nd)
                        .map(|k| {
                            if keep(k) {
                                spec.get(k).map(str::to_string)
                            } else {
                                None
                            }
                        })
                        .collect(),
                ),
            ),
            (s, false) => s.without_axes(&axes),
            (s, true) => s.clone(),
        };
        Ok(Array::from_shards(&out_shape, out, sharding, shards, false))
    }

    /// The sum over `axes` (small integers and bools accumulate in 64 bits, as NumPy's).
    pub fn sum(&self, axes: impl Into<Axes>) -> Result<Array> {
        self.reduce(ReduceOp::Sum, axes, false)
    }
    /// The maximum over `axes` (NaN propagates).
    pub fn max(&self, axes: impl Into<Axes>) -> Result<Array> {
        self.reduce(ReduceOp::Max, axes, false)
    }
    /// The product over `axes` (1 for none; small integers multiply in 64 bits, as NumPy's).
    pub fn prod(&self, axes: impl Into<Axes>) -> Result<Array> {
        self.reduce(ReduceOp::Prod, axes, false)
    }
    /// The minimum over `axes` (NaN propagates).
    pub fn min(&self, axes: impl Into<Axes>) -> Result<Array> {
        self.reduce(ReduceOp::Min, axes, false)
    }

    /// Arithmetic mean over `axes` (integers average in float64).
    pub fn mean(&self, axes: impl Into<Axes>) -> Result<Array> {
        let axes = axes.into();
        let count = self.count_over(&axes)?;
        // Half floats as NumPy takes their mean: summed and divided in float32, rounded once
        // at the end (the float16 sum of [65504, 10000] overflowed before the division).
        let out = self.dtype().float_dtype();
        if matches!(out, DType::F16 | DType::BF16) {
            return self
                .astype(self.on_devices(DType::F32))?
                .mean(axes)?
                .astype(out);
        }
        let total = self.astype(self.on_devices(out))?.sum(axes)?;
        let s = &total.shard_data()[0];
        let divisor = Array::full_sharded(
            &[],
            Scalar::Float(count as f64),
            total.dtype(),
            &Sharding::SingleDevice(s.device.clone(), s.memory_kind()),
        )?;
        total.binary(BinaryOp::Div, &divisor)
    }
}

macro_rules! named_ops {
    (unary: $($u:ident => $uo:ident),*; binary: $($b:ident => $bo:ident),*) => {
        impl Array {
            $(
                #[doc = concat!("Elementwise `", stringify!($u), "`.")]
                pub fn $u(&self) -> Result<Array> { self.unary(UnaryOp::$uo) }
            )*
            $(
                #[doc = concat!("Elementwise `", stringify!($b), "` with broadcasting.")]
                pub fn $b(&self, other: &Array) -> Result<Array> { self.binary(BinaryOp::$bo, other) }
            )*
        }
    };
}
named_ops!(
    unary: neg => Neg, abs => Abs, exp => Exp, log => Log, sqrt => Sqrt, sin => Sin, cos => Cos,
        tanh => Tanh, logical_not => LogicalNot, floor => Floor, ceil => Ceil, round => Round,
        sign => Sign, bitwise_invert => BitwiseInvert, asin => Asin, acos => Acos, atan => Atan,
        sinh => Sinh, cosh => Cosh, asinh => Asinh, acosh => Acosh, atanh => Atanh,
        expm1 => Expm1, log1p => Log1p, signbit => Signbit, conj => Conj;
    binary: add => Add, sub => Sub, mul => Mul, div => Div, maximum => Maximum,
        minimum => Minimum, pow => Pow, equal => Eq, not_equal => Ne, less => Lt,
        less_equal => Le, greater => Gt, greater_equal => Ge, logical_and => LogicalAnd,
        logical_or => LogicalOr, logical_xor => LogicalXor, bitwise_and => BitwiseAnd,
        bitwise_or => BitwiseOr, bitwise_xor => BitwiseXor, left_shift => LeftShift,
        right_shift => RightShift, floor_divide => FloorDivide, remainder => Remainder,
        atan2 => Atan2, copysign => Copysign, hypot => Hypot, logaddexp => Logaddexp,
        nextafter => Nextafter
);

macro_rules! operators {
    ($($tr:ident $m:ident => $op:ident),*) => {$(
        impl std::ops::$tr<&Array> for &Array {
            type Output = Result<Array>;
            fn $m(self, rhs: &Array) -> Result<Array> { self.binary(BinaryOp::$op, rhs) }
        }
        impl std::ops::$tr<Array> for Array {
            type Output = Result<Array>;
            fn $m(self, rhs: Array) -> Result<Array> { self.binary(BinaryOp::$op, &rhs) }
        }
    )*};
}
operators!(Add add => Add, Sub sub => Sub, Mul mul => Mul, Div div => Div,
    BitAnd bitand => BitwiseAnd, BitOr bitor => BitwiseOr, BitXor bitxor => BitwiseXor,
    Shl shl => LeftShift, Shr shr => RightShift, Rem rem => Remainder);

impl std::ops::Neg for &Array {
    type Output = Result<Array>;
    fn neg(self) -> Result<Array> {
        self.unary(UnaryOp::Neg)
    }
}
/// `!a`: logical not of bool, bitwise not of integers (Rust's `!` on each).
impl std::ops::Not for &Array {
    type Output = Result<Array>;
    fn not(self) -> Result<Array> {
        self.unary(UnaryOp::BitwiseInvert)
    }
}
