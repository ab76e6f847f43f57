//! Matrix products: on x86-64 with AVX2 (and no AVX-512), dlarray's blocked product
//! (`gemm_avx2`) for f32, f64, f16 and bf16; otherwise the `gemm` crate (packed SIMD kernels,
//! threaded) for f16, f32, f64 and complex, bf16 through f32; integers and bool with a plain
//! row-times-column loop.

use super::engine::{SendPtr, alloc_out, out_ptr, out_slice, par_for, par_ranges};
use super::math::{Arith, dispatch};
use super::view::View;
use super::{HostBackend, HostBuffer, HostDevice};
use crate::backends::{DeviceBuffer, TensorRef};
use crate::dtype::{DType, Element};
use crate::error::{Error, Result};
use crate::layout::{Layout, contiguous_strides, for_each_run};
use std::mem::MaybeUninit;

#[cfg(target_arch = "x86_64")]
use super::gemm_avx2::{self, Strided};

/// Products smaller than this many multiply-adds run on one thread.
const GEMM_PAR_MIN: usize = 1 << 18;

struct Dims3 {
    batch: Vec<usize>,
    m: usize,
    k: usize,
    n: usize,
    /// Elements of the output (`batch.. * m * n`), checked against the size limit.
    total: usize,
}

fn dims(a: &Layout, b: &Layout) -> Result<Dims3> {
    let (sa, sb) = (a.shape(), b.shape());
    let mismatch = || Error::ShapeMismatch {
        op: "matmul",
        lhs: sa.to_vec(),
        rhs: sb.to_vec(),
    };
    if sa.len() < 2 || sa.len() != sb.len() || sa[..sa.len() - 2] != sb[..sb.len() - 2] {
        return Err(mismatch());
    }
    let nd = sa.len();
    if sa[nd - 1] != sb[nd - 2] {
        return Err(mismatch());
    }
    let batch = sa[..nd - 2].to_vec();
    let (m, k, n) = (sa[nd - 2], sa[nd - 1], sb[nd - 1]);
    // Inputs can be broadcast views of a few elements whose product is enormous
    // ([2^32, 1] @ [1, 2^32]): the output size is checked before anything is allocated.
    let mut out = batch.clone();
    out.extend([m, n]);
    let total = crate::layout::checked_size(&out)?;
    Ok(Dims3 {
        batch,
        m,
        k,
        n,
        total,
    })
}

pub(crate) fn matmul(
    be: &HostBackend,
    dev: &HostDevice,
    a: TensorRef<'_>,
    b: TensorRef<'_>,
) -> Result<HostBuffer> {
    if a.dtype != b.dtype {
        return Err(Error::DTypeMismatch {
            op: "matmul",
            expected: a.dtype.to_string(),
            got: b.dtype,
        });
    }
    let d = dims(a.layout, b.layout)?;
    #[cfg(target_arch = "x86_64")]
    if let Some(out) = blocked(be, dev, a, b, &d) {
        return out;
    }
    let dt = a.dtype;
    match dt {
        DType::F32 => gemm_run::<f32>(be, dev, a, b, &d),
        DType::F64 => gemm_run::<f64>(be, dev, a, b, &d),
        DType::F16 => gemm_run::<half::f16>(be, dev, a, b, &d),
        DType::Complex64 => gemm_run::<num_complex::Complex32>(be, dev, a, b, &d),
        DType::Complex128 => gemm_run::<num_complex::Complex64>(be, dev, a, b, &d),
        DType::BF16 => {
            // The crate has no bf16 kernel: widen to f32 (exact), multiply, round once.
            let wa = super::cast::cast(be, dev, a, DType::F32)?;
            let wb = super::cast::cast(be, dev, b, DType::F32)?;
            let (la, lb) = (
                Layout::contiguous(a.layout.shape())?,
                Layout::contiguous(b.layout.shape())?,
            );
            let ta = TensorRef {
                buffer: &wa as &dyn DeviceBuffer,
                layout: &la,
                dtype: DType::F32,
            };
            let tb = TensorRef {
                buffer: &wb as &dyn DeviceBuffer,
                layout: &lb,
                dtype: DType::F32,
            };
            let prod = gemm_run::<f32>(be, dev, ta, tb, &d)?;
            let lo = Layout::contiguous(&out_shape(&d))?;
            let to = TensorRef {
                buffer: &prod as &dyn DeviceBuffer,
                layout: &lo,
                dtype: DType::F32,
            };
            super::cast::cast(be, dev, to, DType::BF16)
        }
        DType::Bool => naive_run::<bool>(be, dev, a, b, &d, |acc, x, y| acc | (x & y), false),
        _ => dispatch!(dt, [I8, I16, I32, I64, U8, U16, U32, U64], T => {
            naive_run::<T>(be, dev, a, b, &d, |acc, x, y| acc.add(x.mul(y)), T::ZERO)
        }, else Err(be.unsupported("matmul", dt))),
    }
}

/// What `matmul` runs on this processor (the backend's `matmul_engine`).
pub(crate) fn engine() -> String {
    #[cfg(target_arch = "x86_64")]
    if gemm_avx2::enabled() {
        return "dlarray's blocked AVX2 product for float32, float64, float16 and bfloat16 \
                (16 or more rows and columns; DLARRAY_CPU_GEMM=crate turns it off), the gemm \
                crate otherwise; a loop for integers and bool"
            .into();
    }
    "the gemm crate for floating and complex dtypes (bfloat16 widened to float32); a loop \
     for integers and bool"
        .into()
}

fn out_shape(d: &Dims3) -> Vec<usize> {
    let mut s = d.batch.clone();
    s.extend([d.m, d.n]);
    s
}

/// Calls `f(a offset, b offset, out offset)` for every matrix of the batch.
fn for_each_matrix(a: &Layout, b: &Layout, d: &Dims3, mut f: impl FnMut(isize, isize, usize)) {
    let nb: usize = d.batch.iter().product();
    let bs = d.batch.len();
    let out_strides: Vec<isize> = contiguous_strides(&d.batch)
        .iter()
        .map(|s| s * (d.m * d.n) as isize)
        .collect();
    let base = [a.offset() as isize, b.offset() as isize, 0];
    let strides = [&a.strides()[..bs], &b.strides()[..bs], &out_strides[..]];
    for_each_run(
        &d.batch,
        strides,
        base,
        0..nb,
        |[ao, bo, oo], len, [ai, bi, oi]| {
            for j in 0..len as isize {
                f(ao + j * ai, bo + j * bi, (oo + j * oi) as usize);
            }
        },
    );
}

/// The row and column strides of the matrices of `l` (its last two axes; `dims` checked
/// there are two).
fn matrix_strides(l: &Layout) -> (isize, isize) {
    let s = l.strides();
    (s[s.len() - 2], s[s.len() - 1])
}

fn gemm_run<T: Element>(
    be: &HostBackend,
    dev: &HostDevice,
    a: TensorRef<'_>,
    b: TensorRef<'_>,
    d: &Dims3,
) -> Result<HostBuffer> {
    let (va, vb) = (be.view::<T>(&a)?, be.view::<T>(&b)?);
    let total = d.total;
    let mut out = alloc_out::<T>(dev, total)?;
    let o = out_ptr::<T>(&mut out);
    if d.k == 0 {
        let zero = T::from_scalar(crate::dtype::Scalar::Int(0));
        par_ranges(dev, total, size_of::<T>(), |r| {
            // SAFETY: `out` holds `total` elements; ranges are disjoint.
            for s in unsafe { out_slice(o, &r) } {
                s.write(zero);
            }
        });
        return Ok(out);
    }
    let ((ars, acs), (brs, bcs)) = (matrix_strides(a.layout), matrix_strides(b.layout));
    let par = if (d.m * d.n).saturating_mul(d.k) >= GEMM_PAR_MIN && dev.threads() > 1 {
        gemm::Parallelism::Rayon(dev.threads())
    } else {
        gemm::Parallelism::None
    };
    let parallel = !matches!(par, gemm::Parallelism::None);
    let one = T::from_scalar(crate::dtype::Scalar::Int(1));
    let run = || {
        for_each_matrix(a.layout, b.layout, d, |ao, bo, oo| {
            // SAFETY: the views were bounds-checked, so every (row, col) of each matrix the
            // strides address lies in its buffer; `out` holds `total` elements and matrix
            // `oo..oo + m*n` is written by this call only. `read_dst` is false, so the
            // uninitialised output is never read.
            unsafe {
                gemm::gemm::<T>(
                    d.m,
                    d.n,
                    d.k,
                    (o.ptr() as *mut T).add(oo),
                    1,
                    d.n as isize,
                    false,
                    va.base().offset(ao),
                    acs,
                    ars,
                    vb.base().offset(bo),
                    bcs,
                    brs,
                    one,
                    one,
                    false,
                    false,
                    false,
                    par,
                )
            }
        });
    };
    // Only a parallel gemm needs the device's threads: handing a small product to the pool
    // and waiting for it cost ~35 us (a 32x32 matmul ran at 1.7 GFLOP/s).
    if parallel {
        dev.install(run);
    } else {
        run();
    }
    Ok(out)
}

/// The blocked AVX2 product (see [`gemm_avx2`]) for f32, f64, float16 and bfloat16, where
/// it is enabled and the shape suits it (`None` otherwise): it packs both operands, which a
/// product with a dimension under 16 (a matrix times a vector) does not repay; the `gemm`
/// crate has unpacked kernels for those.
#[cfg(target_arch = "x86_64")]
fn blocked(
    be: &HostBackend,
    dev: &HostDevice,
    a: TensorRef<'_>,
    b: TensorRef<'_>,
    d: &Dims3,
) -> Option<Result<HostBuffer>> {
    if d.m < 16 || d.n < 16 || d.k == 0 || !gemm_avx2::enabled() {
        return None;
    }
    match a.dtype {
        DType::F32 => Some(blocked_run::<f32>(be, dev, a, b, d)),
        DType::F64 => Some(blocked_run::<f64>(be, dev, a, b, d)),
        // float16 and bfloat16 stage C in f32 for one rounding, up to a depth.
        DType::BF16 if d.k <= gemm_avx2::NARROW_DEPTH_MAX => {
            Some(blocked_run::<half::bf16>(be, dev, a, b, d))
        }
        DType::F16
            if d.k <= gemm_avx2::NARROW_DEPTH_MAX
                && std::arch::is_x86_feature_detected!("f16c") =>
        {
            Some(blocked_run::<half::f16>(be, dev, a, b, d))
        }
        _ => None,
    }
}

#[cfg(target_arch = "x86_64")]
fn blocked_run<T: Element + gemm_avx2::Operand>(
    be: &HostBackend,
    dev: &HostDevice,
    a: TensorRef<'_>,
    b: TensorRef<'_>,
    d: &Dims3,
) -> Result<HostBuffer> {
    let (va, vb) = (be.view::<T>(&a)?, be.view::<T>(&b)?);
    let mut out = alloc_out::<T>(dev, d.total)?;
    let o = out_ptr::<T>(&mut out);
    let ((ars, acs), (brs, bcs)) = (matrix_strides(a.layout), matrix_strides(b.layout));
    let threads = ((d.m * d.n).saturating_mul(d.k) >= GEMM_PAR_MIN).then_some(dev);
    for_each_matrix(a.layout, b.layout, d, |ao, bo, oo| {
        // SAFETY: `blocked` runs this only where the processor has AVX2 and FMA (and F16C
        // for float16) and k > 0; the views were bounds-checked, so every (row, col) the
        // strides address lies in its buffer; matrix `oo..oo + m*n` of `out` is written by
        // this call only.
        unsafe {
            gemm_avx2::gemm::<T>(
                threads,
                d.m,
                d.n,
                d.k,
                Strided {
                    ptr: va.base().offset(ao),
                    rs: ars,
                    cs: acs,
                },
                Strided {
                    ptr: vb.base().offset(bo),
                    rs: brs,
                    cs: bcs,
                },
                (o.ptr() as *mut T).add(oo),
                d.n,
            )
        }
    });
    Ok(out)
}

fn naive_run<T: Element>(
    be: &HostBackend,
    dev: &HostDevice,
    a: TensorRef<'_>,
    b: TensorRef<'_>,
    d: &Dims3,
    fma: impl Fn(T, T, T) -> T + Sync + Send,
    zero: T,
) -> Result<HostBuffer> {
    let (va, vb): (View<'_, T>, View<'_, T>) = (be.view(&a)?, be.view(&b)?);
    let total = d.total;
    let mut out = alloc_out::<T>(dev, total)?;
    let o: SendPtr<MaybeUninit<T>> = out_ptr(&mut out);
    let ((ars, acs), (brs, bcs)) = (matrix_strides(a.layout), matrix_strides(b.layout));
    let (m, n, k) = (d.m, d.n, d.k);
    for_each_matrix(a.layout, b.layout, d, |ao, bo, oo| {
        // Rows are independent: split them over the device's threads.
        let rows = |r: std::ops::Range<usize>| {
            for i in r {
                // SAFETY: row i of this matrix, written by this iteration only.
                let row = unsafe { out_slice(o, &(oo + i * n..oo + (i + 1) * n)) };
                for (j, slot) in row.iter_mut().enumerate() {
                    let mut acc = zero;
                    for p in 0..k {
                        // SAFETY: (i, p) of matrix `ao` and (p, j) of matrix `bo`: elements
                        // the checked views' layouts reach.
                        let (x, y) = unsafe {
                            (
                                va.at(ao + i as isize * ars + p as isize * acs),
                                vb.at(bo + p as isize * brs + j as isize * bcs),
                            )
                        };
                        acc = fma(acc, x, y);
                    }
                    slot.write(acc);
                }
            }
        };
        if (m * n).saturating_mul(k) >= GEMM_PAR_MIN {
            par_for(dev, m, &|i| rows(i..i + 1));
        } else {
            rows(0..m);
        }
    });
    Ok(out)
}
