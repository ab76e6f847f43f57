//! Data-dependent indexing: `take`, `take_along_axis`, `nonzero`. The indices decide the
//! output, so these read the array on the host, gather there, and place the result on the
//! array's first device (one read and one write, whatever the backend).

use super::Array;
use crate::dtype::{DType, Element};
use crate::error::{Error, Result};
use crate::layout::{axis_last, inverse_permutation, normalize_axis};

/// Integer indices as i64, wrapped as NumPy wraps negative ones, each checked against `n`.
fn indices_in(indices: &Array, n: usize) -> Result<Vec<usize>> {
    if !indices.dtype().is_integer() {
        return Err(Error::DTypeMismatch {
            op: "take",
            expected: "integer indices".into(),
            got: indices.dtype(),
        });
    }
    let values = indices.to_i64_vec()?;
    values
        .into_iter()
        .map(|i| {
            let j = if i < 0 { i + n as i64 } else { i };
            if (0..n as i64).contains(&j) {
                Ok(j as usize)
            } else {
                Err(Error::IndexOutOfRange {
                    what: "index",
                    index: i,
                    size: n,
                })
            }
        })
        .collect()
}

impl Array {
    /// The elements of an integer array as `i64`, row-major, read in the array's own dtype
    /// and widened on the host: a cast to int64 first would run where the array is, and a
    /// device without 64-bit kernels (wgpu, whose index results are int32) refuses it.
    /// uint64 values past `i64::MAX` read as `i64::MAX` (past any axis or count).
    pub fn to_i64_vec(&self) -> Result<Vec<i64>> {
        if !self.dtype().is_integer() {
            return Err(Error::DTypeMismatch {
                op: "to_i64_vec",
                expected: "an integer dtype".into(),
                got: self.dtype(),
            });
        }
        Ok(crate::with_dtype!(self.dtype(), T => self
            .to_vec::<T>()?
            .into_iter()
            .map(|x| match x.to_scalar() {
                crate::Scalar::Int(i) => i64::try_from(i).unwrap_or(i64::MAX),
                _ => 0,
            })
            .collect()))
    }

    /// The array API's `take`: the entries `indices` (1-D) selects along `axis` (`None`
    /// only for a 1-D array). Negative indices count from the end, as NumPy's.
    pub fn take(&self, indices: &Array, axis: Option<isize>) -> Result<Array> {
        let axis = match axis {
            Some(a) => normalize_axis(a, self.ndim())?,
            None if self.ndim() == 1 => 0,
            None => {
                return Err(Error::invalid(
                    "take: axis is required for arrays of more than one dimension",
                ));
            }
        };
        if indices.ndim() != 1 {
            return Err(Error::invalid(format!(
                "take: indices must be 1-D, not of shape {:?}",
                indices.shape()
            )));
        }
        let n = self.shape()[axis];
        let idx = indices_in(indices, n)?;
        // The axis first: each index then selects one contiguous block of `inner` items.
        let mut perm: Vec<usize> = vec![axis];
        perm.extend((0..self.ndim()).filter(|&k| k != axis));
        let moved = self.permute(&perm)?;
        let inner: usize = moved.shape()[1..].iter().product();
        let out = crate::with_dtype!(self.dtype(), T => {
            let data = moved.to_vec::<T>()?;
            let mut out: Vec<T> = crate::backends::host::try_host_vec(idx.len() * inner, "host")?;
            for (o, &i) in out.chunks_mut(inner.max(1)).zip(&idx) {
                o.copy_from_slice(&data[i * inner..(i + 1) * inner]);
            }
            let mut shape = moved.shape().to_vec();
            shape[0] = idx.len();
            Array::from_vec(out, &shape)?
        });
        out.permute(&inverse_permutation(&perm))?
            .device_put(&self.first_place())
    }

    /// The array API's `take_along_axis`: `out[.., j, ..] = x[.., indices[.., j, ..], ..]`
    /// along `axis`, `indices` having this array's rank (other axes broadcast together).
    pub fn take_along_axis(&self, indices: &Array, axis: isize) -> Result<Array> {
        let axis = normalize_axis(axis, self.ndim())?;
        if indices.ndim() != self.ndim() {
            return Err(Error::invalid(format!(
                "take_along_axis: indices of rank {} for an array of rank {}",
                indices.ndim(),
                self.ndim()
            )));
        }
        // Broadcast every axis but `axis` together, then move `axis` last.
        let mut xs = self.shape().to_vec();
        let mut is = indices.shape().to_vec();
        xs[axis] = 1;
        is[axis] = 1;
        let mut common = crate::layout::broadcast_shapes("take_along_axis", &xs, &is)?;
        let (n, m) = (self.shape()[axis], indices.shape()[axis]);
        common[axis] = n;
        let x = self.broadcast_to(&common)?;
        common[axis] = m;
        let ind = indices.broadcast_to(&common)?;
        let perm = axis_last(self.ndim(), axis);
        let (x, ind) = (x.permute(&perm)?, ind.permute(&perm)?);
        let idx = indices_in(&ind, n)?;
        let out = crate::with_dtype!(self.dtype(), T => {
            let data = x.to_vec::<T>()?;
            let rows = idx.len() / m.max(1);
            let mut out: Vec<T> = Vec::with_capacity(idx.len());
            for r in 0..rows {
                out.extend(idx[r * m..(r + 1) * m].iter().map(|&i| data[r * n + i]));
            }
            Array::from_vec(out, ind.shape())?
        });
        out.permute(&inverse_permutation(&perm))?
            .device_put(&self.first_place())
    }

    /// The indices of the non-zero elements, one int64 array per axis, in row-major order
    /// (the array API's `nonzero`; 0-d arrays are refused, as it says).
    pub fn nonzero(&self) -> Result<Vec<Array>> {
        if self.ndim() == 0 {
            return Err(Error::invalid(
                "nonzero is not defined for 0-d arrays (use atleast_1d or x[None])",
            ));
        }
        let truth = if self.dtype() == DType::Bool {
            self.clone()
        } else {
            self.binary_scalar(crate::BinaryOp::Ne, crate::Scalar::Int(0), false)?
        };
        let flags = truth.to_vec::<bool>()?;
        let shape = self.shape();
        let mut per_axis: Vec<Vec<i64>> = vec![Vec::new(); shape.len()];
        for (flat, _) in flags.iter().enumerate().filter(|(_, f)| **f) {
            let mut rest = flat;
            for k in (0..shape.len()).rev() {
                per_axis[k].push((rest % shape[k]) as i64);
                rest /= shape[k];
            }
        }
        let home = self.first_place();
        per_axis
            .into_iter()
            .map(|v| {
                let n = v.len();
                self.indices_on(Array::from_vec(v, &[n])?, &home)
            })
            .collect()
    }
}
