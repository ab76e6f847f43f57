//! Dtype conversion and strided copies.

use super::engine::{SendPtr, alloc_out, map1, out_ptr, par_memcpy};
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
    crate::with_dtype!(x.dtype, S => crate::with_dtype!(to, D => {
        let v = be.view::<S>(x)?;
        let mut out = alloc_out::<D>(dev, v.len())?;
        map1(dev, v, out_ptr(&mut out), |s: S| D::from_scalar(s.to_scalar()));
        Ok(out)
    }))
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
    let v = be.view::<T>(src)?;
    if let Some(s) = v.as_slice() {
        par_memcpy(
            dev,
            s.as_ptr() as *const u8,
            dst.as_mut_ptr() as *mut u8,
            dst.len(),
        );
        return Ok(());
    }
    if (dst.as_mut_ptr() as usize) % std::mem::align_of::<T>() == 0 {
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
