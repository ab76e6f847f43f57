//! ndarray interop (feature `ndarray`, on by default).

use crate::array::Array;
use crate::dtype::Element;
use crate::error::{Error, Result};
use ndarray::{ArrayD, IxDyn};

impl Array {
    /// The elements gathered to host memory as an `ndarray::ArrayD`.
    pub fn to_ndarray<T: Element>(&self) -> Result<ArrayD<T>> {
        let data = self.to_vec::<T>()?;
        ArrayD::from_shape_vec(IxDyn(self.shape()), data)
            .map_err(|e| Error::invalid(format!("to_ndarray: {e}")))
    }

    /// An array holding the elements of `a` on the default device.
    pub fn from_ndarray<T: Element>(a: &ArrayD<T>) -> Result<Array> {
        let shape = a.shape().to_vec();
        match a.as_slice() {
            Some(s) => Array::from_slice(s, &shape),
            None => Array::from_vec(a.iter().copied().collect(), &shape),
        }
    }
}
