//! `argmax`, `argmin` and `cumsum`, composed from the kernels every backend has (`max`,
//! `min`, comparisons, `where`, `concatenate`), so they run on every backend and sharding.

use super::Array;
use crate::backends::{BinaryOp, ReduceOp};
use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::layout::normalize_axis;

impl Array {
    /// The index (int64; int32 on devices without 64-bit kernels) of the first largest element along `axis` (NumPy's `argmax`: a
    /// NaN counts as the largest); `None` looks at the flattened array.
    pub fn argmax(&self, axis: Option<isize>) -> Result<Array> {
        self.arg_extreme(ReduceOp::Max, axis)
    }

    /// The index (int64) of the first smallest element along `axis` (a NaN counts as the
    /// smallest, as in NumPy).
    pub fn argmin(&self, axis: Option<isize>) -> Result<Array> {
        self.arg_extreme(ReduceOp::Min, axis)
    }

    fn arg_extreme(&self, op: ReduceOp, axis: Option<isize>) -> Result<Array> {
        let (x, axis) = match axis {
            None => (self.reshape(&[-1])?, 0),
            Some(a) => (self.clone(), normalize_axis(a, self.ndim())?),
        };
        if x.ndim() == 0 {
            return Err(Error::invalid(
                "argmax/argmin of a zero-dimensional array needs axis=None",
            ));
        }
        let n = x.shape()[axis];
        if n == 0 {
            return Err(Error::invalid(format!(
                "attempt to get arg{op} of an empty sequence"
            )));
        }
        // The extreme propagates NaN, so where it is NaN the NaNs are the hits.
        let m = x.reduce(op, [axis as isize], true)?;
        let hit = x
            .binary(BinaryOp::Eq, &m)?
            .binary(BinaryOp::LogicalOr, &x.isnan()?)?;
        let place = x.first_place();
        let mut shape = vec![1isize; x.ndim()];
        shape[axis] = n as isize;
        // int64, or int32 on devices without 64-bit kernels (as JAX without x64).
        let idx = x.on_devices(DType::I64);
        let index = Array::arange(0.0, n as f64, 1.0, idx)?
            .device_put(&place)?
            .reshape(&shape)?;
        let past = Array::full_sharded(&[], Scalar::Int(n as i128), idx, &place)?;
        hit.where_cond(&index, &past)?
            .reduce(ReduceOp::Min, [axis as isize], false)
    }

    /// The running sum along `axis` (NumPy's `cumsum`; small integers and bools sum in 64
    /// bits). `None` sums the flattened array.
    pub fn cumsum(&self, axis: Option<isize>) -> Result<Array> {
        self.scan(BinaryOp::Add, axis)
    }

    /// The running product along `axis` (NumPy's `cumprod`, with `cumsum`'s dtypes).
    pub fn cumprod(&self, axis: Option<isize>) -> Result<Array> {
        self.scan(BinaryOp::Mul, axis)
    }

    /// An inclusive scan with `op`, in `log2(n)` passes of shifted `op`s (Hillis and Steele),
    /// so it runs on every backend.
    fn scan(&self, op: BinaryOp, axis: Option<isize>) -> Result<Array> {
        let (x, axis) = match axis {
            None => (self.reshape(&[-1])?, 0),
            Some(a) => (self.clone(), normalize_axis(a, self.ndim())?),
        };
        if x.ndim() == 0 {
            return Err(Error::invalid(format!(
                "cumulative {op} of a zero-dimensional array needs axis=None"
            )));
        }
        let mut acc = x.astype(x.on_devices(x.dtype().sum_dtype()))?;
        let n = acc.shape()[axis];
        let mut shift = 1;
        while shift < n {
            // acc[i] = acc[i - shift] op acc[i] for i >= shift; the first `shift` stay.
            let head = acc.range_along(axis, 0..shift)?;
            let tail = acc.range_along(axis, shift..n)?;
            let before = acc.range_along(axis, 0..n - shift)?;
            let combined = before.binary(op, &tail)?;
            acc = Array::concatenate(&[&head, &combined], axis as isize)?;
            shift *= 2;
        }
        Ok(acc)
    }
}
