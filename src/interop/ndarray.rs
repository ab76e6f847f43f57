//! ndarray interop (feature `ndarray`, on by default): zero-copy both ways where the memory
//! allows.

use crate::array::Array;
use crate::array::foreign::{Strided, wrap};
use crate::dtype::Element;
use crate::error::{Error, Result};
use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn, ShapeBuilder};

impl Array {
    /// The elements gathered to host memory as an `ndarray::ArrayD` (a copy).
    pub fn to_ndarray<T: Element>(&self) -> Result<ArrayD<T>> {
        let data = self.to_vec::<T>()?;
        ArrayD::from_shape_vec(IxDyn(self.shape()), data)
            .map_err(|e| Error::invalid(format!("to_ndarray: {e}")))
    }

    /// Takes `a` onto the default device without copying its data: the array keeps the
    /// ndarray's allocation alive (any strides, including negative ones).
    pub fn from_ndarray<T: Element>(a: ArrayD<T>) -> Result<Array> {
        let device = crate::backends::registry::default_device()?;
        if device.platform() != "cpu" {
            // Not host memory a non-CPU default device could read in place.
            return Array::from_vec(a.iter().copied().collect(), a.shape());
        }
        let shape = a.shape().to_vec();
        let strides: Vec<isize> = a.strides().to_vec();
        let data = a.as_ptr() as *const u8;
        let t = Strided {
            data,
            shape: &shape,
            strides: &strides,
            dtype: T::DTYPE,
        };
        let kind = device.default_memory_kind();
        // SAFETY: `a` owns every element its shape and strides address from `as_ptr()`; it
        // moves into the buffer's owner, so the memory stays valid and unchanged (nothing else
        // can reach it) for as long as the array lives. Moving an ArrayD does not move its
        // heap data.
        unsafe { wrap(t, &device, kind, true, Box::new(a)) }
    }

    /// A zero-copy `ndarray` view of a single-device array in host-addressable memory.
    pub fn as_ndarray_view<T: Element>(&self) -> Result<ArrayViewD<'_, T>> {
        if T::DTYPE != self.dtype() {
            return Err(Error::ElementType {
                array: self.dtype(),
                requested: T::DTYPE,
            });
        }
        let s = self.single().ok_or_else(|| {
            Error::invalid("as_ndarray_view needs a single-device array (use to_ndarray)")
        })?;
        let base = s
            .buffer
            .address()
            .host()
            .map(|p| p.as_ptr() as *const u8)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "{} memory is not host-addressable (use to_ndarray)",
                    s.device
                ))
            })? as *const T;
        s.device.backend().synchronize(s.device.index())?;
        let l = &s.layout;
        // ndarray views take non-negative strides: start at the lowest address and flip the
        // axes whose strides are negative.
        let mut start = l.offset() as isize;
        let mut strides = Vec::with_capacity(l.ndim());
        for (&d, &st) in l.shape().iter().zip(l.strides()) {
            if st < 0 && d > 0 {
                start += (d as isize - 1) * st;
            }
            strides.push(st.unsigned_abs());
        }
        let shape = l.shape().to_vec();
        // SAFETY: the layout was checked against the buffer, so every addressed element lies
        // in it; the buffer is immutable and outlives the borrow of `self`.
        let mut view = unsafe {
            ArrayViewD::from_shape_ptr(IxDyn(&shape).strides(IxDyn(&strides)), base.offset(start))
        };
        for (k, &st) in l.strides().iter().enumerate() {
            if st < 0 {
                view.invert_axis(Axis(k));
            }
        }
        Ok(view)
    }
}
