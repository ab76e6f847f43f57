//! Elementwise kernels: which (op, dtype) pairs exist, and the per-element function of each.
#![allow(clippy::bool_comparison)] // generic comparisons instantiated for bool too

use super::engine::{
    alloc_out, alloc_out_shared, map1_in, map2, matching_shift, out_ptr, out_slice, par_ranges,
};
use super::f32_via_f64 as via;
use super::math::{
    Arith, ComplexSign, DivMod, Real, RealFloat, Rounding, Shift, Transcendental, dispatch,
    dispatch_arith,
};
use super::{HostBackend, HostBuffer, HostDevice, finish};
use super::{
    asin_acos_f64, asinh_acosh_f64, atan_f64, atanh_f64, exp_f64, expf, expm1_f64, inv_trigf,
    log_f64, logf, simd, sincos_f64, sincosf, tanh_f64, tanhf,
};
use crate::backends::op::expect_out;
use crate::backends::{BinaryOp, SharedBuffer, TensorRef, UnaryOp};
use crate::dtype::{DType, Element};
use crate::error::Result;
use crate::layout::{coalesce, contiguous_strides, for_each_run};
use num_complex::{Complex32, Complex64};
use std::mem::MaybeUninit;

/// The first element of a contiguous view (what `matching_shift` aligns the output to).
fn first<T: Element>(v: &super::view::View<'_, T>) -> Option<*const T> {
    v.as_slice().map(<[T]>::as_ptr)
}

fn run1<T: Element, U: Element>(
    be: &HostBackend,
    dev: &HostDevice,
    x: &TensorRef<'_>,
    f: impl Fn(T) -> U + Sync + Send,
) -> Result<SharedBuffer> {
    run1_in::<simd::Avx2, T, U>(be, dev, x, f)
}

/// [`run1`] in the lanes `L` says (see `engine::map1_in`).
fn run1_in<L: simd::Lanes, T: Element, U: Element>(
    be: &HostBackend,
    dev: &HostDevice,
    // By reference, as the view and the result (see `run2`).
    x: &TensorRef<'_>,
    f: impl Fn(T) -> U + Sync + Send,
) -> Result<SharedBuffer> {
    let v = be.view::<T>(x)?;
    let shift = matching_shift::<T, U>(&[first(&v)], v.len());
    let (out, first) = alloc_out_shared::<U>(dev, v.len(), shift)?;
    map1_in::<L, T, U>(dev, v, first, f);
    Ok(out)
}

/// `exp` of a contiguous float16 or bfloat16 tensor, a block at a time: the block widened to
/// float32 (`widen`), float32's vectorising exp over it, narrowed back (`narrow`). Element by
/// element, float16's conversions went through `half`'s per-call feature check and kept the
/// loop scalar (1M elements: 3.4 ms, bfloat16 1.7 ms, float32 0.7). The same bits as the
/// element path: widening is exact, narrowing rounds to nearest even as `half` does, and
/// `exp_f32` is one function whatever the lanes. `None` for a strided tensor (the element
/// path takes it).
fn half_exp<T: Element>(
    be: &HostBackend,
    dev: &HostDevice,
    x: TensorRef<'_>,
    widen: fn(&[T], &mut [MaybeUninit<f32>]),
    narrow: fn(&[f32], &mut [MaybeUninit<T>]),
) -> Option<Result<SharedBuffer>> {
    const BLOCK: usize = 512;
    contiguous_map(be, dev, x, 8, |xs: &[T], os| {
        let mut block = [MaybeUninit::<f32>::uninit(); BLOCK];
        for (src, dst) in xs.chunks(BLOCK).zip(os.chunks_mut(BLOCK)) {
            let w = &mut block[..src.len()];
            widen(src, w);
            // SAFETY: `widen` wrote every element of `w`.
            let w: &mut [f32] = unsafe { &mut *(w as *mut [MaybeUninit<f32>] as *mut [f32]) };
            expf::exp_f32_in_place(w);
            narrow(w, dst);
        }
    })
}

/// A function (`exp`, `tanh`) of a contiguous tensor of a float type, `run` filling each
/// range of the output from the same range of the input, split over the device's threads
/// with each element counted as `weight` bytes of traffic (what the split decides on: 8 for
/// exp, which is bound by arithmetic; 16 for float32 tanh, sin and cos, which take ~1.5-2x
/// exp's time an element; 24 for float64 tanh, ~2.7x). `None` for a strided tensor: the element path takes it, with the same bits.
fn contiguous_map<T: Element>(
    be: &HostBackend,
    dev: &HostDevice,
    x: TensorRef<'_>,
    weight: usize,
    run: impl Fn(&[T], &mut [MaybeUninit<T>]) + Sync,
) -> Option<Result<SharedBuffer>> {
    let v = match be.view::<T>(&x) {
        Ok(v) => v,
        Err(e) => return Some(Err(e)),
    };
    let xs = v.as_slice()?;
    Some(alloc_out::<T>(dev, xs.len()).map(|mut out| {
        let o = out_ptr::<T>(&mut out);
        par_ranges(dev, xs.len(), weight, |r| {
            // SAFETY: `out` holds xs.len() elements; the ranges are disjoint.
            let os = unsafe { out_slice(o, &r) };
            run(&xs[r], os);
        });
        finish(out)
    }))
}

fn run2<T: Element, U: Element>(
    be: &HostBackend,
    dev: &HostDevice,
    // By reference: by value, the caller copied each operand for the call with loads wider
    // than the stores that had just written it (a failed store forwarding per op).
    a: &TensorRef<'_>,
    b: &TensorRef<'_>,
    f: impl Fn(T, T) -> U + Sync + Send,
) -> Result<SharedBuffer> {
    let (va, vb) = (be.view::<T>(a)?, be.view::<T>(b)?);
    let shift = matching_shift::<T, U>(&[first(&va), first(&vb)], va.len());
    let (out, first) = alloc_out_shared::<U>(dev, va.len(), shift)?;
    map2(dev, va, vb, first, f);
    Ok(out)
}

pub(crate) fn unary(
    be: &HostBackend,
    dev: &HostDevice,
    op: UnaryOp,
    x: &TensorRef<'_>,
    out: DType,
) -> Result<SharedBuffer> {
    let dt = x.dtype;
    let no = || be.unsupported(op.name(), dt);
    let want = match (op, dt) {
        (UnaryOp::Abs, DType::Complex64 | DType::Complex128) => dt.real_part(),
        (UnaryOp::Signbit, _) => DType::Bool,
        _ => dt,
    };
    expect_out(op.name(), out, want)?;
    match op {
        UnaryOp::Neg => {
            dispatch_arith!(dt, T => run1(be, dev, x, <T as Arith>::neg), else Err(no()))
        }
        UnaryOp::Abs => match dt {
            DType::Complex64 => run1(be, dev, x, |c: Complex32| c.norm()),
            DType::Complex128 => run1(be, dev, x, |c: Complex64| c.norm()),
            _ => dispatch!(dt, [I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64],
                T => run1(be, dev, x, T::abs_), else Err(no())),
        },
        UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Round | UnaryOp::Sign => match (op, dt) {
            (UnaryOp::Round, DType::Complex64) => run1(be, dev, x, |c: Complex32| {
                Complex32::new(c.re.round_ties_even(), c.im.round_ties_even())
            }),
            (UnaryOp::Round, DType::Complex128) => run1(be, dev, x, |c: Complex64| {
                Complex64::new(c.re.round_ties_even(), c.im.round_ties_even())
            }),
            (UnaryOp::Sign, DType::Complex64) => {
                run1(be, dev, x, <Complex32 as ComplexSign>::sign_)
            }
            (UnaryOp::Sign, DType::Complex128) => {
                run1(be, dev, x, <Complex64 as ComplexSign>::sign_)
            }
            _ => {
                dispatch!(dt, [I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64], T => match op {
                UnaryOp::Floor => run1(be, dev, x, T::floor_),
                UnaryOp::Ceil => run1(be, dev, x, T::ceil_),
                UnaryOp::Round => run1(be, dev, x, T::round_),
                _ => run1(be, dev, x, T::sign_),
            }, else Err(no()))
            }
        },
        UnaryOp::LogicalNot => match dt {
            DType::Bool => run1(be, dev, x, |v: bool| !v),
            _ => Err(no()),
        },
        UnaryOp::Conj => match dt {
            DType::Complex64 => run1(be, dev, x, |c: Complex32| c.conj()),
            DType::Complex128 => run1(be, dev, x, |c: Complex64| c.conj()),
            _ => Err(no()),
        },
        UnaryOp::Signbit => dispatch!(dt, [F16, BF16, F32, F64],
            T => run1(be, dev, x, |v: T| v.is_sign_negative()), else Err(no())),
        UnaryOp::BitwiseInvert => dispatch!(dt, [Bool, I8, I16, I32, I64, U8, U16, U32, U64],
            T => run1(be, dev, x, |v: T| !v), else Err(no())),
        UnaryOp::Exp
        | UnaryOp::Log
        | UnaryOp::Sqrt
        | UnaryOp::Sin
        | UnaryOp::Cos
        | UnaryOp::Tan
        | UnaryOp::Tanh
        | UnaryOp::Asin
        | UnaryOp::Acos
        | UnaryOp::Atan
        | UnaryOp::Sinh
        | UnaryOp::Cosh
        | UnaryOp::Asinh
        | UnaryOp::Acosh
        | UnaryOp::Atanh
        | UnaryOp::Expm1
        | UnaryOp::Log1p => {
            let blocked = match (op, dt) {
                (UnaryOp::Exp, DType::F16) => {
                    half_exp(be, dev, *x, simd::f16_to_f32, simd::f32_to_f16)
                }
                (UnaryOp::Exp, DType::BF16) => {
                    half_exp(be, dev, *x, simd::bf16_to_f32, simd::f32_to_bf16)
                }
                // Vector loops of their own (8 f64 lanes with AVX-512; see each file), not the
                // C library's call per element.
                (UnaryOp::Exp, DType::F32) => contiguous_map(be, dev, *x, 8, expf::exp_f32_into),
                (UnaryOp::Exp, DType::F64) => contiguous_map(be, dev, *x, 8, exp_f64::exp_f64_into),
                (UnaryOp::Log, DType::F32) => contiguous_map(be, dev, *x, 8, logf::ln_f32_into),
                (UnaryOp::Log, DType::F64) => contiguous_map(be, dev, *x, 8, log_f64::ln_f64_into),
                (UnaryOp::Log1p, DType::F64) => {
                    contiguous_map(be, dev, *x, 24, log_f64::ln_1p_f64_into)
                }
                (UnaryOp::Tanh, DType::F32) => {
                    contiguous_map(be, dev, *x, 16, tanhf::tanh_f32_into)
                }
                (UnaryOp::Tanh, DType::F64) => {
                    contiguous_map(be, dev, *x, 24, tanh_f64::tanh_f64_into)
                }
                (UnaryOp::Atan, DType::F64) => {
                    contiguous_map(be, dev, *x, 16, atan_f64::atan_f64_into)
                }
                (UnaryOp::Asin, DType::F64) => {
                    contiguous_map(be, dev, *x, 16, asin_acos_f64::asin_f64_into)
                }
                (UnaryOp::Acos, DType::F64) => {
                    contiguous_map(be, dev, *x, 16, asin_acos_f64::acos_f64_into)
                }
                (UnaryOp::Asinh, DType::F64) => {
                    contiguous_map(be, dev, *x, 24, asinh_acosh_f64::asinh_f64_into)
                }
                (UnaryOp::Acosh, DType::F64) => {
                    contiguous_map(be, dev, *x, 24, asinh_acosh_f64::acosh_f64_into)
                }
                (UnaryOp::Atanh, DType::F64) => {
                    contiguous_map(be, dev, *x, 32, atanh_f64::atanh_f64_into)
                }
                (UnaryOp::Expm1, DType::F64) => {
                    contiguous_map(be, dev, *x, 16, expm1_f64::expm1_f64_into)
                }
                (UnaryOp::Sinh, DType::F64) => {
                    contiguous_map(be, dev, *x, 24, expm1_f64::sinh_f64_into)
                }
                (UnaryOp::Cosh, DType::F64) => {
                    contiguous_map(be, dev, *x, 24, expm1_f64::cosh_f64_into)
                }
                (UnaryOp::Sin, DType::F32) => {
                    contiguous_map(be, dev, *x, 16, sincosf::sin_f32_into)
                }
                (UnaryOp::Sin, DType::F64) => {
                    contiguous_map(be, dev, *x, 16, sincos_f64::sin_f64_into)
                }
                (UnaryOp::Cos, DType::F64) => {
                    contiguous_map(be, dev, *x, 16, sincos_f64::cos_f64_into)
                }
                (UnaryOp::Cos, DType::F32) => {
                    contiguous_map(be, dev, *x, 16, sincosf::cos_f32_into)
                }
                (UnaryOp::Tan, DType::F32) => {
                    contiguous_map(be, dev, *x, 16, sincosf::tan_f32_into)
                }
                (UnaryOp::Tan, DType::F64) => {
                    contiguous_map(be, dev, *x, 24, sincos_f64::tan_f64_into)
                }
                // Through the float64 `ln` and `exp` loops (`f32_via_f64`).
                (UnaryOp::Log1p, DType::F32) => {
                    contiguous_map(be, dev, *x, 16, via::log1p_f32_into)
                }
                (UnaryOp::Expm1, DType::F32) => {
                    contiguous_map(be, dev, *x, 16, via::expm1_f32_into)
                }
                (UnaryOp::Sinh, DType::F32) => contiguous_map(be, dev, *x, 16, via::sinh_f32_into),
                (UnaryOp::Cosh, DType::F32) => contiguous_map(be, dev, *x, 16, via::cosh_f32_into),
                (UnaryOp::Asinh, DType::F32) => {
                    contiguous_map(be, dev, *x, 16, via::asinh_f32_into)
                }
                (UnaryOp::Acosh, DType::F32) => {
                    contiguous_map(be, dev, *x, 16, via::acosh_f32_into)
                }
                (UnaryOp::Atanh, DType::F32) => {
                    contiguous_map(be, dev, *x, 16, via::atanh_f32_into)
                }
                (UnaryOp::Asin, DType::F32) => {
                    contiguous_map(be, dev, *x, 16, inv_trigf::asin_f32_into)
                }
                (UnaryOp::Acos, DType::F32) => {
                    contiguous_map(be, dev, *x, 16, inv_trigf::acos_f32_into)
                }
                (UnaryOp::Atan, DType::F32) => {
                    contiguous_map(be, dev, *x, 16, inv_trigf::atan_f32_into)
                }
                _ => None,
            };
            if let Some(r) = blocked {
                return r;
            }
            // One `run1` per function (not a `fn` pointer picked at run time): each loop is
            // compiled around its function, so `sqrt` vectorises instead of making an
            // indirect call per element.
            dispatch!(dt, [F16, BF16, F32, F64, Complex64, Complex128], T => match op {
                // Bound by arithmetic: AVX-512 where there is one (`simd::wide_arith`).
                UnaryOp::Exp => run1_in::<simd::Widest, T, T>(be, dev, x, T::exp_),
                UnaryOp::Log => run1(be, dev, x, T::ln_),
                UnaryOp::Sqrt => run1(be, dev, x, T::sqrt_),
                UnaryOp::Sin => run1(be, dev, x, T::sin_),
                UnaryOp::Cos => run1(be, dev, x, T::cos_),
                UnaryOp::Tan => run1(be, dev, x, T::tan_),
                UnaryOp::Tanh => run1(be, dev, x, T::tanh_),
                UnaryOp::Asin => run1(be, dev, x, T::asin_),
                UnaryOp::Acos => run1(be, dev, x, T::acos_),
                UnaryOp::Atan => run1(be, dev, x, T::atan_),
                UnaryOp::Sinh => run1(be, dev, x, T::sinh_),
                UnaryOp::Cosh => run1(be, dev, x, T::cosh_),
                UnaryOp::Asinh => run1(be, dev, x, T::asinh_),
                UnaryOp::Acosh => run1(be, dev, x, T::acosh_),
                UnaryOp::Atanh => run1(be, dev, x, T::atanh_),
                UnaryOp::Expm1 => run1(be, dev, x, T::expm1_),
                _ => run1(be, dev, x, T::log1p_),
            }, else Err(no()))
        }
    }
}

// One caller (HostBackend::binary): inlined there, as it was before the contract's changes
// tipped the heuristics (a call here cost ~30 instructions per op).
#[inline(always)]
pub(crate) fn binary(
    be: &HostBackend,
    dev: &HostDevice,
    op: BinaryOp,
    a: &TensorRef<'_>,
    b: &TensorRef<'_>,
    out: DType,
) -> Result<SharedBuffer> {
    use BinaryOp::*;
    let dt = a.dtype;
    let no = || be.unsupported(op.name(), dt);
    let want = if op.is_comparison() { DType::Bool } else { dt };
    expect_out(op.name(), out, want)?;
    match op {
        // Separate arms (not a table of fn pointers) so each loop inlines its operation and
        // vectorises.
        Add => dispatch_arith!(dt, T => run2(be, dev, a, b, <T as Arith>::add), else Err(no())),
        Sub => dispatch_arith!(dt, T => run2(be, dev, a, b, <T as Arith>::sub), else Err(no())),
        Mul => dispatch_arith!(dt, T => run2(be, dev, a, b, <T as Arith>::mul), else Err(no())),
        Div => dispatch_arith!(dt, T => run2(be, dev, a, b, <T as Arith>::div), else Err(no())),
        Pow => dispatch_arith!(dt, T => run2(be, dev, a, b, <T as Arith>::pow), else Err(no())),
        Maximum | Minimum => {
            dispatch!(dt, [I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64], T => {
                if op == Maximum { run2(be, dev, a, b, T::max_) } else { run2(be, dev, a, b, T::min_) }
            }, else match dt {
                DType::Bool if op == Maximum => run2(be, dev, a, b, |p: bool, q: bool| p | q),
                DType::Bool => run2(be, dev, a, b, |p: bool, q: bool| p & q),
                _ => Err(no()),
            })
        }
        Eq | Ne => crate::with_dtype!(dt, T => {
            if op == Eq { run2(be, dev, a, b, |p: T, q: T| p == q) }
            else { run2(be, dev, a, b, |p: T, q: T| p != q) }
        }),
        Lt | Le | Gt | Ge => dispatch!(dt,
            [Bool, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64], T => match op {
                Lt => run2(be, dev, a, b, |p: T, q: T| p < q),
                Le => run2(be, dev, a, b, |p: T, q: T| p <= q),
                Gt => run2(be, dev, a, b, |p: T, q: T| p > q),
                _ => run2(be, dev, a, b, |p: T, q: T| p >= q),
            }, else Err(no())),
        LogicalAnd | LogicalOr | LogicalXor => match dt {
            DType::Bool => match op {
                LogicalAnd => run2(be, dev, a, b, |p: bool, q: bool| p & q),
                LogicalOr => run2(be, dev, a, b, |p: bool, q: bool| p | q),
                _ => run2(be, dev, a, b, |p: bool, q: bool| p ^ q),
            },
            _ => Err(no()),
        },
        BitwiseAnd | BitwiseOr | BitwiseXor => dispatch!(dt,
            [Bool, I8, I16, I32, I64, U8, U16, U32, U64], T => match op {
                BitwiseAnd => run2(be, dev, a, b, |p: T, q: T| p & q),
                BitwiseOr => run2(be, dev, a, b, |p: T, q: T| p | q),
                _ => run2(be, dev, a, b, |p: T, q: T| p ^ q),
            }, else Err(no())),
        Atan2 | Copysign | Hypot | Logaddexp | Nextafter => {
            dispatch!(dt, [F16, BF16, F32, F64], T => match op {
                Atan2 => run2(be, dev, a, b, T::atan2_),
                Copysign => run2(be, dev, a, b, T::copysign_),
                Hypot => run2(be, dev, a, b, T::hypot_),
                Nextafter => run2(be, dev, a, b, T::nextafter_),
                _ => run2(be, dev, a, b, T::logaddexp_),
            }, else Err(no()))
        }
        FloorDivide | Remainder => {
            dispatch!(dt, [I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64], T => {
                if op == FloorDivide { run2(be, dev, a, b, T::floor_div_) } else { run2(be, dev, a, b, T::rem_) }
            }, else Err(no()))
        }
        LeftShift | RightShift => dispatch!(dt, [I8, I16, I32, I64, U8, U16, U32, U64], T => {
            if op == LeftShift { run2(be, dev, a, b, T::shl_) } else { run2(be, dev, a, b, T::shr_) }
        }, else Err(no())),
    }
}

/// `cond ? a : b` elementwise over one shape (any strides).
pub(crate) fn select(
    be: &HostBackend,
    dev: &HostDevice,
    cond: TensorRef<'_>,
    a: TensorRef<'_>,
    b: TensorRef<'_>,
) -> Result<HostBuffer> {
    crate::with_dtype!(a.dtype, T => {
        let (vc, va, vb) = (be.view::<bool>(&cond)?, be.view::<T>(&a)?, be.view::<T>(&b)?);
        let shape = va.layout.shape();
        let n = va.len();
        let mut out = alloc_out::<T>(dev, n)?;
        let o = out_ptr(&mut out);
        let os = contiguous_strides(shape);
        let (cshape, [sc, sa, sb, so]) = coalesce(
            shape,
            [vc.layout.strides(), va.layout.strides(), vb.layout.strides(), &os],
        );
        let base = [
            vc.layout.offset() as isize,
            va.layout.offset() as isize,
            vb.layout.offset() as isize,
            0,
        ];
        // A bool condition, two operands read, one written.
        par_ranges(dev, n, 1 + 3 * size_of::<T>(), |r| {
            for_each_run(&cshape, [&sc, &sa, &sb, &so], base, r, |[co, ao, bo, oo], len, [ci, ai, bi, _]| {
                // SAFETY: output offsets of a row-major walk are oo..oo+len, inside `out`.
                let os = unsafe { out_slice(o, &(oo as usize..oo as usize + len)) };
                for (j, slot) in os.iter_mut().enumerate() {
                    let j = j as isize;
                    // SAFETY: element j of a run the layouts' walk produced, for operands
                    // whose inner strides are (ci, ai, bi).
                    let v = unsafe {
                        if vc.at(co + j * ci) { va.at(ao + j * ai) } else { vb.at(bo + j * bi) }
                    };
                    slot.write(v);
                }
            });
        });
        Ok(out)
    })
}
