//! Dtype conversion and strided copies.

use super::engine::{SendPtr, alloc_out, map1, out_ptr, out_slice, par_memcpy, par_ranges};
use super::simd;
use super::{HostBackend, HostBuffer, HostDevice};
use crate::backends::TensorRef;
use crate::dtype::{DType, Element};
use crate::error::Result;
use std::mem::MaybeUninit;

/// Elementwise conversion through [`crate::dtype::Scalar`] (the match on the scalar's
/// variant folds away once both types are known).
pub(crate) fn cast(
    be: &HostBackend,
    dev: &HostDevice,
    x: TensorRef<'_>,
    to: DType,
) -> Result<HostBuffer> {
    if let Some(out) = cast_half_contiguous(be, dev, x, to)? {
        return Ok(out);
    }
    crate::with_dtype!(x.dtype, S => crate::with_dtype!(to, D => {
        let v = be.view::<S>(&x)?;
        let mut out = alloc_out::<D>(dev, v.len())?;
        map1(dev, v, out_ptr(&mut out), |s: S| D::from_scalar(s.to_scalar()));
        Ok(out)
    }))
}

/// float32 <-> float16 of a contiguous tensor with `simd`'s converters (F16C where the
/// processor has it): the element path goes through f64 and converts in software, ~1 ns an
/// element. Both round to nearest even, so the values are the same. `None` for every other
/// cast or layout.
fn cast_half_contiguous(
    be: &HostBackend,
    dev: &HostDevice,
    x: TensorRef<'_>,
    to: DType,
) -> Result<Option<HostBuffer>> {
    fn convert<S: Element, D: Element>(
        be: &HostBackend,
        dev: &HostDevice,
        x: TensorRef<'_>,
        f: fn(&[S], &mut [MaybeUninit<D>]),
    ) -> Result<Option<HostBuffer>> {
        let v = be.view::<S>(&x)?;
        let Some(xs) = v.as_slice() else {
            return Ok(None);
        };
        let mut out = alloc_out::<D>(dev, xs.len())?;
        let o = out_ptr(&mut out);
        par_ranges(dev, xs.len(), size_of::<S>() + size_of::<D>(), |r| {
            // SAFETY: `out` holds xs.len() elements; ranges are disjoint.
            f(&xs[r.clone()], unsafe { out_slice(o, &r) });
        });
        Ok(Some(out))
    }
    match (x.dtype, to) {
        (DType::F32, DType::F16) => convert(be, dev, x, simd::f32_to_f16),
        (DType::F16, DType::F32) => convert(be, dev, x, simd::f16_to_f32),
        _ => Ok(None),
    }
}

/// Copies the elements of `src` in row-major order into `dst` (exactly their byte size),
/// writing every byte and reading none.
pub(crate) fn copy_to_bytes(
    be: &HostBackend,
    dev: &HostDevice,
    src: TensorRef<'_>,
    dst: &mut [MaybeUninit<u8>],
) -> Result<()> {
    crate::with_dtype!(src.dtype, T => copy_typed::<T>(be, dev, src, dst))
}

fn copy_typed<T: Element>(
    be: &HostBackend,
    dev: &HostDevice,
    src: TensorRef<'_>,
    dst: &mut [MaybeUninit<u8>],
) -> Result<()> {
    let v = be.view::<T>(&src)?;
    if let Some(s) = v.as_slice() {
        par_memcpy(
            dev,
            s.as_ptr() as *const u8,
            dst.as_mut_ptr() as *mut u8,
            dst.len(),
        );
        return Ok(());
    }
    if (dst.as_mut_ptr() as usize).is_multiple_of(std::mem::align_of::<T>()) {
        map1(
            dev,
            v,
            SendPtr(dst.as_mut_ptr() as *mut MaybeUninit<T>),
            |e: T| e,
        );
    } else {
        // The caller's bytes are not aligned for T: gather into an aligned block first.
        let mut tmp = alloc_out::<T>(dev, v.len())?;
        map1(dev, v, out_ptr(&mut tmp), |e: T| e);
        par_memcpy(dev, tmp.as_ptr(), dst.as_mut_ptr() as *mut u8, dst.len());
    }
    Ok(())
}
