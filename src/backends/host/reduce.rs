//! Reductions over axes: sum (f16/bf16 accumulate in f32), max and min (NaN propagates;
//! on bool they are any/all).

use super::engine::{SendPtr, alloc_out, alloc_out_shared, out_ptr, out_slice, par_for, split};
use super::math::{Arith, Real, dispatch, dispatch_arith};
use super::simd::{self, wide};
use super::view::View;
use super::{HostBackend, HostDevice, finish};
use crate::backends::{ReduceOp, SharedBuffer, TensorRef};
use crate::dtype::Element;
use crate::error::Result;
use crate::layout::{Dims, Strides, coalesce, for_each_run};
use half::{bf16, f16};
use num_complex::{Complex32, Complex64};

/// How a reduction folds elements of `T` into an accumulator.
trait Reducer<T>: Sync {
    type Acc: Copy + Send + Sync;
    /// The output element (the input's, or the wider type a sum of small integers returns).
    type Out: Element;
    fn init(&self) -> Self::Acc;
    fn fold(&self, acc: Self::Acc, v: T) -> Self::Acc;
    fn combine(&self, a: Self::Acc, b: Self::Acc) -> Self::Acc;
    fn finish(&self, acc: Self::Acc) -> Self::Out;
    /// Folds a contiguous run; overridden where independent lanes let the loop vectorise.
    fn fold_slice(&self, acc: Self::Acc, xs: &[T]) -> Self::Acc
    where
        T: Copy,
    {
        xs.iter().fold(acc, |a, &v| self.fold(a, v))
    }
}

/// The type a sum accumulates in.
trait SumAcc: Element {
    type Acc: Arith;
    fn widen(self) -> Self::Acc;
    fn narrow(a: Self::Acc) -> Self;
    /// `acc` plus the sum of a contiguous run by an explicitly vectorised loop, where this
    /// type and processor have one (`None`: use the generic lanes).
    #[inline(always)]
    fn sum_run(_acc: Self::Acc, _xs: &[Self]) -> Option<Self::Acc> {
        None
    }
}
macro_rules! sum_self {
    ($($t:ty $(=> $run:path)?),*) => {$(impl SumAcc for $t {
        type Acc = $t;
        #[inline(always)] fn widen(self) -> $t { self }
        #[inline(always)] fn narrow(a: $t) -> $t { a }
        $(#[inline(always)] fn sum_run(acc: $t, xs: &[$t]) -> Option<$t> { $run(acc, xs) })?
    })*};
}
sum_self!(
    i8, i16, i32, i64, u8, u16, u32, u64, f32 => simd::sum_f32, f64 => simd::sum_f64, Complex32,
    Complex64
);
impl SumAcc for f16 {
    type Acc = f32;
    fn widen(self) -> f32 {
        self.to_f32()
    }
    fn narrow(a: f32) -> f16 {
        f16::from_f32(a)
    }
}
impl SumAcc for bf16 {
    type Acc = f32;
    fn widen(self) -> f32 {
        self.to_f32()
    }
    fn narrow(a: f32) -> bf16 {
        bf16::from_f32(a)
    }
}

struct Sum;
/// Independent partial sums per run: lets LLVM vectorise and, for floats, limits error growth
/// the way pairwise summation does.
const LANES: usize = 16;

impl<T: SumAcc> Reducer<T> for Sum {
    type Acc = T::Acc;
    type Out = T;
    fn init(&self) -> T::Acc {
        T::Acc::ZERO
    }
    fn fold(&self, acc: T::Acc, v: T) -> T::Acc {
        acc.add(v.widen())
    }
    fn combine(&self, a: T::Acc, b: T::Acc) -> T::Acc {
        a.add(b)
    }
    fn finish(&self, acc: T::Acc) -> T {
        T::narrow(acc)
    }
    #[inline(always)] // into `wide`'s AVX2 copy
    fn fold_slice(&self, acc: T::Acc, xs: &[T]) -> T::Acc {
        if let Some(total) = T::sum_run(acc, xs) {
            return total;
        }
        let mut lanes = [T::Acc::ZERO; LANES];
        let mut chunks = xs.chunks_exact(LANES);
        for c in &mut chunks {
            for (l, &v) in lanes.iter_mut().zip(c) {
                *l = l.add(v.widen());
            }
        }
        let mut total = acc;
        for l in lanes {
            total = total.add(l);
        }
        chunks
            .remainder()
            .iter()
            .fold(total, |a, &v| a.add(v.widen()))
    }
}

struct Prod;
impl<T: SumAcc> Reducer<T> for Prod {
    type Acc = T::Acc;
    type Out = T;
    fn init(&self) -> T::Acc {
        T::Acc::ONE
    }
    fn fold(&self, acc: T::Acc, v: T) -> T::Acc {
        acc.mul(v.widen())
    }
    fn combine(&self, a: T::Acc, b: T::Acc) -> T::Acc {
        a.mul(b)
    }
    fn finish(&self, acc: T::Acc) -> T {
        T::narrow(acc)
    }
}

/// Integers and bools widened to 64 bits as they are read: NumPy's sum and prod of small
/// integers, without converting the input first (a sum of 3 GiB of uint8 reads it once).
trait Widen: Element {
    type Wide: Arith;
    fn wide(self) -> Self::Wide;
}
macro_rules! widen {
    ($($t:ty => $w:ty),*) => {$(impl Widen for $t {
        type Wide = $w;
        #[inline(always)] fn wide(self) -> $w { self as $w }
    })*};
}
widen!(i8 => i64, i16 => i64, i32 => i64, i64 => i64, u8 => u64, u16 => u64, u32 => u64,
    u64 => u64, bool => i64);

/// Sum (`prod == false`) or product in the widened type.
struct Widened {
    prod: bool,
}
impl<T: Widen> Reducer<T> for Widened {
    type Acc = T::Wide;
    type Out = T::Wide;
    fn init(&self) -> T::Wide {
        if self.prod {
            T::Wide::ONE
        } else {
            T::Wide::ZERO
        }
    }
    #[inline(always)]
    fn fold(&self, acc: T::Wide, v: T) -> T::Wide {
        if self.prod {
            acc.mul(v.wide())
        } else {
            acc.add(v.wide())
        }
    }
    fn combine(&self, a: T::Wide, b: T::Wide) -> T::Wide {
        if self.prod { a.mul(b) } else { a.add(b) }
    }
    fn finish(&self, acc: T::Wide) -> T::Wide {
        acc
    }
    #[inline(always)] // into `wide`'s AVX2 copy
    fn fold_slice(&self, acc: T::Wide, xs: &[T]) -> T::Wide {
        if self.prod {
            return xs.iter().fold(acc, |a, &v| a.mul(v.wide()));
        }
        let mut lanes = [T::Wide::ZERO; LANES];
        let mut chunks = xs.chunks_exact(LANES);
        for c in &mut chunks {
            for (l, &v) in lanes.iter_mut().zip(c) {
                *l = l.add(v.wide());
            }
        }
        let total = lanes.iter().fold(acc, |a, &l| a.add(l));
        chunks
            .remainder()
            .iter()
            .fold(total, |a, &v| a.add(v.wide()))
    }
}

/// Sum or product of integers or bools into 64 bits (`None`: not such a reduction).
pub(crate) fn widened(
    be: &HostBackend,
    dev: &HostDevice,
    op: ReduceOp,
    x: &TensorRef<'_>,
    axes: &[usize],
    out: crate::dtype::DType,
) -> Option<Result<SharedBuffer>> {
    use crate::dtype::DType as D;
    let prod = match op {
        ReduceOp::Sum => false,
        ReduceOp::Prod => true,
        _ => return None,
    };
    let r = Widened { prod };
    macro_rules! go {
        ($t:ty) => {
            Some(be.view::<$t>(x).and_then(|v| run(dev, &v, axes, &r)))
        };
    }
    match (x.dtype, out) {
        (D::I8, D::I64) => go!(i8),
        (D::I16, D::I64) => go!(i16),
        (D::I32, D::I64) => go!(i32),
        (D::Bool, D::I64) => go!(bool),
        (D::U8, D::U64) => go!(u8),
        (D::U16, D::U64) => go!(u16),
        (D::U32, D::U64) => go!(u32),
        _ => None,
    }
}

struct Extreme {
    max: bool,
}

/// A max or min of a contiguous run by an explicitly vectorised loop, where this type and
/// processor have one and the run holds no NaN (`None`: use the generic lanes).
trait ExtremeRun: Real {
    #[inline(always)]
    fn extreme_run(_acc: Self, _xs: &[Self], _max: bool) -> Option<Self> {
        None
    }
}
macro_rules! extreme_run {
    ($($t:ty $(=> $run:path)?),*) => {$(impl ExtremeRun for $t {
        $(#[inline(always)] fn extreme_run(acc: $t, xs: &[$t], max: bool) -> Option<$t> {
            $run(acc, xs, max)
        })?
    })*};
}
extreme_run!(
    i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32 => simd::extreme_f32,
    f64 => simd::extreme_f64
);

impl<T: ExtremeRun> Reducer<T> for Extreme {
    type Acc = T;
    type Out = T;
    fn init(&self) -> T {
        if self.max { T::LOWEST } else { T::HIGHEST }
    }
    fn fold(&self, acc: T, v: T) -> T {
        if self.max { acc.max_(v) } else { acc.min_(v) }
    }
    fn combine(&self, a: T, b: T) -> T {
        self.fold(a, b)
    }
    fn finish(&self, acc: T) -> T {
        acc
    }
    /// Independent lanes, as for sums: one running extreme per lane turns the loop into
    /// vector compares and blends (a single accumulator serialises every element on the one
    /// before, ~30x slower). NaN still propagates: a lane that met one keeps it, and the
    /// lanes are folded together with the same NaN-keeping max/min.
    #[inline(always)] // into `wide`'s AVX2 copy
    fn fold_slice(&self, acc: T, xs: &[T]) -> T {
        if let Some(total) = T::extreme_run(acc, xs, self.max) {
            return total;
        }
        let mut lanes = [acc; LANES];
        let mut chunks = xs.chunks_exact(LANES);
        if self.max {
            for c in &mut chunks {
                for (l, &v) in lanes.iter_mut().zip(c) {
                    *l = l.max_(v);
                }
            }
        } else {
            for c in &mut chunks {
                for (l, &v) in lanes.iter_mut().zip(c) {
                    *l = l.min_(v);
                }
            }
        }
        let total = lanes.into_iter().fold(acc, |a, l| self.fold(a, l));
        chunks
            .remainder()
            .iter()
            .fold(total, |a, &v| self.fold(a, v))
    }
}

/// max/min of bools: any/all.
struct BoolExtreme {
    max: bool,
}
impl Reducer<bool> for BoolExtreme {
    type Acc = bool;
    type Out = bool;
    fn init(&self) -> bool {
        !self.max
    }
    fn fold(&self, acc: bool, v: bool) -> bool {
        if self.max { acc | v } else { acc & v }
    }
    fn combine(&self, a: bool, b: bool) -> bool {
        self.fold(a, b)
    }
    fn finish(&self, acc: bool) -> bool {
        acc
    }
}

pub(crate) fn reduce(
    be: &HostBackend,
    dev: &HostDevice,
    op: ReduceOp,
    // By reference, as the view below and the result: see `elementwise::run2`.
    x: &TensorRef<'_>,
    axes: &[usize],
) -> Result<SharedBuffer> {
    let dt = x.dtype;
    let no = || be.unsupported(op.name(), dt);
    match op {
        ReduceOp::Sum => dispatch_arith!(dt, T => {
            run(dev, &be.view::<T>(x)?, axes, &Sum)
        }, else Err(no())),
        ReduceOp::Prod => dispatch_arith!(dt, T => {
            run(dev, &be.view::<T>(x)?, axes, &Prod)
        }, else Err(no())),
        ReduceOp::Max | ReduceOp::Min => {
            let max = op == ReduceOp::Max;
            dispatch!(dt, [I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64], T => {
                run(dev, &be.view::<T>(x)?, axes, &Extreme { max })
            }, else match dt {
                crate::dtype::DType::Bool => run(dev, &be.view::<bool>(x)?, axes, &BoolExtreme { max }),
                _ => Err(no()),
            })
        }
    }
}

/// The reduced axes of a view: shape and strides (coalesced) and element count.
struct Inner {
    shape: Dims,
    strides: Strides,
    len: usize,
}

fn fold_inner<T: Element, R: Reducer<T>>(
    v: &View<'_, T>,
    inner: &Inner,
    base: isize,
    range: std::ops::Range<usize>,
    r: &R,
) -> R::Acc {
    let mut acc = r.init();
    for_each_run(
        &inner.shape,
        [&inner.strides],
        [base],
        range,
        |[off], len, [st]| {
            if st == 1 {
                // SAFETY: a unit-stride run of `len` elements from an offset the checked layout
                // reaches lies inside the buffer.
                let xs = unsafe { std::slice::from_raw_parts(v.base().offset(off), len) };
                acc = wide(|| r.fold_slice(acc, xs));
            } else {
                for j in 0..len as isize {
                    // SAFETY: element j of a run the layout's walk produced.
                    acc = r.fold(acc, unsafe { v.at(off + j * st) });
                }
            }
        },
    );
    acc
}

/// All of a contiguous input to one output: the common `x.sum()`, without the layout walk's
/// set-up (which costs as much as summing a thousand elements). Chunks and their order are
/// those of the general path, so the result has the same bits. (Not shared with `run`'s
/// one-output branch through a folding closure: the fold then left `wide`'s AVX2 copy and a
/// 1K sum took ~20 % longer.)
fn reduce_slice<T: Element, R: Reducer<T>>(
    dev: &HostDevice,
    xs: &[T],
    r: &R,
) -> Result<SharedBuffer> {
    let (out, o) = alloc_out_shared::<R::Out>(dev, 1, 0)?;
    let acc = if let Some(sp) = split(dev, xs.len(), size_of::<T>()) {
        let chunk = sp.chunk;
        let mut partial = vec![r.init(); xs.len().div_ceil(chunk)];
        let slots = SendPtr(partial.as_mut_ptr());
        sp.run(dev, partial.len(), &|c| {
            let part = &xs[c * chunk..((c + 1) * chunk).min(xs.len())];
            let acc = wide(|| r.fold_slice(r.init(), part));
            // SAFETY: slot `c` is written by this chunk only; `partial` outlives `par_for`.
            unsafe { slots.ptr().add(c).write(acc) };
        });
        partial.into_iter().fold(r.init(), |a, b| r.combine(a, b))
    } else {
        wide(|| r.fold_slice(r.init(), xs))
    };
    // SAFETY: `out` holds exactly one element.
    let slot = unsafe { out_slice(o, &(0..1)) };
    slot[0].write(r.finish(acc));
    Ok(out)
}

fn run<T: Element, R: Reducer<T>>(
    dev: &HostDevice,
    v: &View<'_, T>,
    axes: &[usize],
    r: &R,
) -> Result<SharedBuffer> {
    let l = v.layout;
    if axes.len() == l.ndim()
        && let Some(xs) = v.as_slice()
    {
        return reduce_slice(dev, xs, r);
    }
    let kept: Dims = (0..l.ndim()).filter(|a| !axes.contains(a)).collect();
    let kshape: Dims = kept.iter().map(|&a| l.shape()[a]).collect();
    let kstrides: Strides = kept.iter().map(|&a| l.strides()[a]).collect();
    let rshape: Dims = axes.iter().map(|&a| l.shape()[a]).collect();
    let rstrides: Strides = axes.iter().map(|&a| l.strides()[a]).collect();
    let (shape, [strides]) = coalesce(&rshape, [&rstrides]);
    let inner = Inner {
        len: rshape.iter().product(),
        shape,
        strides,
    };
    let m: usize = kshape.iter().product();
    let mut out = alloc_out::<R::Out>(dev, m)?;
    let o = out_ptr::<R::Out>(&mut out);
    let base = l.offset() as isize;

    if m == 1 {
        // One output: split the reduction itself over the device's threads.
        let acc = if let Some(sp) = split(dev, inner.len, size_of::<T>()) {
            let chunk = sp.chunk;
            let chunks = inner.len.div_ceil(chunk);
            // One partial result per chunk, combined in chunk order: the sum of the same
            // array is the same bits however the threads were scheduled.
            let mut partial = vec![r.init(); chunks];
            let slots = SendPtr(partial.as_mut_ptr());
            sp.run(dev, chunks, &|c| {
                let range = c * chunk..((c + 1) * chunk).min(inner.len);
                let acc = fold_inner(v, &inner, base, range, r);
                // SAFETY: slot `c` is written by this chunk only; `partial` outlives `par_for`.
                unsafe { slots.ptr().add(c).write(acc) };
            });
            partial.into_iter().fold(r.init(), |a, b| r.combine(a, b))
        } else {
            fold_inner(v, &inner, base, 0..inner.len, r)
        };
        // SAFETY: `out` holds exactly one element.
        let slot = unsafe { out_slice(o, &(0..1)) };
        slot[0].write(r.finish(acc));
        return Ok(finish(out));
    }

    let (ks, [kst]) = coalesce(&kshape, [&kstrides]);
    // Parallel over outputs; weight the split by the work per output.
    let work = |range: std::ops::Range<usize>| {
        let mut pos = range.start;
        for_each_run(&ks, [&kst], [base], range, |[off], len, [st]| {
            // SAFETY: outputs pos..pos+len belong to this range only.
            let os = unsafe { out_slice(o, &(pos..pos + len)) };
            for (j, slot) in os.iter_mut().enumerate() {
                let acc = fold_inner(v, &inner, off + j as isize * st, 0..inner.len, r);
                slot.write(r.finish(acc));
            }
            pos += len;
        });
    };
    // Parallel over outputs, split by the traffic each reads. Outputs are independent, so
    // how they are chunked changes no bits.
    let per_output = inner.len.max(1).saturating_mul(size_of::<T>());
    match split(dev, m, per_output) {
        Some(sp) => sp.timed(dev, || {
            if sp.helpers {
                par_for(dev, m.div_ceil(sp.chunk), &|c| {
                    work(sp.chunk * c..(sp.chunk * (c + 1)).min(m))
                });
            } else {
                work(0..m);
            }
        }),
        None => work(0..m),
    }
    Ok(finish(out))
}
