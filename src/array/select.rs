//! `where`: elementwise choice between two arrays by a boolean one, with broadcasting of all
//! three and NumPy's promotion of the two values.

use super::Array;
use super::ops::{broadcast_region, broadcast_view, output_placement, run_targets, shard_out};
use crate::backends::TensorRef;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::layout::broadcast_shapes;

impl Array {
    /// `self ? on_true : on_false` elementwise (NumPy's `where(cond, x, y)`): `self` is the
    /// bool condition; the three broadcast together, and the values promote to one dtype.
    ///
    /// ```
    /// # use dlarray::Array;
    /// let c = Array::from_vec(vec![true, false, true], &[3])?;
    /// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3])?;
    /// let y = Array::from_vec(vec![0.0f32], &[1])?;
    /// assert_eq!(c.where_cond(&x, &y)?.to_vec::<f32>()?, vec![1.0, 0.0, 3.0]);
    /// # Ok::<(), dlarray::Error>(())
    /// ```
    pub fn where_cond(&self, on_true: &Array, on_false: &Array) -> Result<Array> {
        if self.dtype() != DType::Bool {
            return Err(Error::DTypeMismatch {
                op: "where",
                expected: "a bool condition".into(),
                got: self.dtype(),
            });
        }
        // The condition's devices count too: the result may be placed there.
        let dt = match Array::promoted_on_devices(&[on_true, on_false]) {
            d if d == on_true.dtype() || d == on_false.dtype() => d,
            d => Array::on_devices_of(&[self, on_true, on_false], d),
        };
        let (x, y) = (on_true.astype(dt)?, on_false.astype(dt)?);
        let shape = broadcast_shapes("where", self.shape(), x.shape())?;
        let shape = broadcast_shapes("where", &shape, y.shape())?;
        let (sharding, targets) = output_placement(&[self, &x, &y], &shape)?;
        let total: usize = shape.iter().product();
        let shards = run_targets(&targets, total, |t| {
            let sub: Vec<usize> = t.index.iter().map(|r| r.len()).collect();
            let part =
                |a: &Array| a.region_on(&broadcast_region(&t.index, a.shape()), &t.device, t.kind);
            let (pc, px, py) = (part(self)?, part(&x)?, part(&y)?);
            let (lc, lx, ly) = (
                broadcast_view(&pc.layout, &sub)?,
                broadcast_view(&px.layout, &sub)?,
                broadcast_view(&py.layout, &sub)?,
            );
            let buf = t.device.backend().select(
                TensorRef {
                    buffer: &*pc.buffer,
                    layout: &lc,
                    dtype: DType::Bool,
                },
                TensorRef {
                    buffer: &*px.buffer,
                    layout: &lx,
                    dtype: dt,
                },
                TensorRef {
                    buffer: &*py.buffer,
                    layout: &ly,
                    dtype: dt,
                },
            )?;
            shard_out(t, buf)
        })?;
        Ok(Array::from_shards(&shape, dt, sharding, shards, false))
    }
}
