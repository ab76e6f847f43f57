//! Joining and splitting arrays: `concatenate`, `stack`, `split`.

use super::Array;
use crate::backends::TensorRef;
use crate::error::{Error, Result};
use crate::layout::{Layout, normalize_axis};

impl Array {
    /// The arrays joined along an existing `axis` (NumPy's `concatenate`, the array API's
    /// `concat`): shapes equal but along `axis`, dtypes promoted to one. The result lives on
    /// the first array's first device (sharded inputs are gathered there).
    ///
    /// ```
    /// # use dlarray::Array;
    /// let a = Array::from_vec(vec![1i32, 2], &[1, 2])?;
    /// let b = Array::from_vec(vec![3i32, 4, 5, 6], &[2, 2])?;
    /// let c = Array::concatenate(&[&a, &b], 0)?;
    /// assert_eq!(c.shape(), &[3, 2]);
    /// assert_eq!(c.to_vec::<i32>()?, vec![1, 2, 3, 4, 5, 6]);
    /// # Ok::<(), dlarray::Error>(())
    /// ```
    pub fn concatenate(arrays: &[&Array], axis: isize) -> Result<Array> {
        let first = arrays
            .first()
            .ok_or_else(|| Error::invalid("concatenate needs at least one array"))?;
        if first.ndim() == 0 {
            return Err(Error::invalid(
                "zero-dimensional arrays cannot be concatenated",
            ));
        }
        let axis = normalize_axis(axis, first.ndim())?;
        let dtype = Array::promoted_on_devices(arrays);
        let s = &first.shard_data()[0];
        let (device, kind) = (s.device.clone(), s.memory_kind());
        let mut shape = first.shape().to_vec();
        shape[axis] = 0;
        let mut gathered = Vec::with_capacity(arrays.len());
        for a in arrays {
            let ok = a.ndim() == first.ndim()
                && (0..a.ndim()).all(|k| k == axis || a.shape()[k] == first.shape()[k]);
            if !ok {
                return Err(Error::ShapeMismatch {
                    op: "concatenate",
                    lhs: first.shape().to_vec(),
                    rhs: a.shape().to_vec(),
                });
            }
            shape[axis] += a.shape()[axis];
            let g = a
                .astype(dtype)?
                .device_put(&super::sharding::Sharding::SingleDevice(
                    device.clone(),
                    kind,
                ))?;
            gathered.push(g);
        }
        let refs: Vec<TensorRef<'_>> = gathered
            .iter()
            .map(|g| {
                let s = &g.shard_data()[0];
                TensorRef {
                    buffer: &*s.buffer,
                    layout: &s.layout,
                    dtype,
                }
            })
            .collect();
        let buffer = device.backend().concat(&refs, axis, device.index(), kind)?;
        Ok(Array::from_buffer(
            device,
            dtype,
            buffer,
            Layout::contiguous(&shape)?,
        ))
    }

    /// The arrays (one shape) joined along a new `axis` (`-1` is the last of the result).
    pub fn stack(arrays: &[&Array], axis: isize) -> Result<Array> {
        let first = arrays
            .first()
            .ok_or_else(|| Error::invalid("stack needs at least one array"))?;
        if let Some(a) = arrays.iter().find(|a| a.shape() != first.shape()) {
            return Err(Error::ShapeMismatch {
                op: "stack",
                lhs: first.shape().to_vec(),
                rhs: a.shape().to_vec(),
            });
        }
        let k = normalize_axis(axis, first.ndim() + 1)? as isize;
        let expanded = arrays
            .iter()
            .map(|a| a.expand_dims(k))
            .collect::<Result<Vec<_>>>()?;
        let refs: Vec<&Array> = expanded.iter().collect();
        Array::concatenate(&refs, k)
    }

    /// Views of `self` cut along `axis` before each of `indices` (NumPy's `split` with
    /// indices; indices past the end give empty pieces, as NumPy's do).
    pub fn split_at_indices(&self, indices: &[usize], axis: isize) -> Result<Vec<Array>> {
        let axis = normalize_axis(axis, self.ndim())?;
        let n = self.shape()[axis];
        let mut bounds = vec![0];
        bounds.extend(indices.iter().map(|&i| i.min(n)));
        bounds.push(n);
        bounds
            .windows(2)
            .map(|w| self.range_along(axis, w[0]..w[1].max(w[0])))
            .collect()
    }

    /// `sections` equal views of `self` along `axis` (an error unless they divide it).
    pub fn split(&self, sections: usize, axis: isize) -> Result<Vec<Array>> {
        let k = normalize_axis(axis, self.ndim())?;
        let n = self.shape()[k];
        if sections == 0 || !n.is_multiple_of(sections) {
            return Err(Error::invalid(format!(
                "array split does not result in an equal division: {n} into {sections}"
            )));
        }
        let step = n / sections;
        let idx: Vec<usize> = (1..sections).map(|i| i * step).collect();
        self.split_at_indices(&idx, axis)
    }
}
