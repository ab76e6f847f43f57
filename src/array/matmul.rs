//! Matrix products: NumPy's `matmul` rules on one device, and the shard-by-shard product of
//! an array sharded over its rows (or batch axes).

use super::ops::{Target, broadcast_view, run_targets, targets_of};
use super::sharding::{PartitionSpec, Sharding};
use super::{Array, ShardData};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::layout::{Layout, broadcast_shapes};

impl Array {
    /// The array API's `vecdot`: `sum(conj(x1) * x2)` along `axis` (counted from the end:
    /// -1 by default), the other axes broadcast.
    pub fn vecdot(&self, other: &Array, axis: isize) -> Result<Array> {
        if axis >= 0 {
            return Err(Error::invalid(format!(
                "vecdot: axis counts from the end (-1, -2, ...), not {axis}"
            )));
        }
        let k = |a: &Array| crate::layout::normalize_axis(axis, a.ndim());
        let (ka, kb) = (k(self)?, k(other)?);
        if self.shape()[ka] != other.shape()[kb] {
            return Err(Error::ShapeMismatch {
                op: "vecdot",
                lhs: self.shape().to_vec(),
                rhs: other.shape().to_vec(),
            });
        }
        let prod = self
            .unary(crate::UnaryOp::Conj)?
            .binary(crate::BinaryOp::Mul, other)?;
        // In the operands' dtype, as the standard has it (a sum of small integers would
        // widen; here it wraps, as NumPy's `vecdot` does).
        prod.sum(vec![axis])?.astype(prod.dtype())
    }

    /// NumPy's `tensordot`: the sum of products over `axes_a` of this array and `axes_b` of
    /// `other` (equal lengths), one matmul of the two reshaped to matrices. The result's axes
    /// are this array's free axes, then `other`'s.
    pub fn tensordot(&self, other: &Array, axes_a: &[isize], axes_b: &[isize]) -> Result<Array> {
        if axes_a.len() != axes_b.len() {
            return Err(Error::invalid(format!(
                "tensordot: {} axes of the first array against {} of the second",
                axes_a.len(),
                axes_b.len()
            )));
        }
        let norm = |a: &Array, axes: &[isize]| -> Result<Vec<usize>> {
            let v: Vec<usize> = axes
                .iter()
                .map(|&x| crate::layout::normalize_axis(x, a.ndim()))
                .collect::<Result<_>>()?;
            let mut seen = v.clone();
            seen.sort_unstable();
            seen.dedup();
            if seen.len() != v.len() {
                return Err(Error::invalid("tensordot: an axis is named twice"));
            }
            Ok(v)
        };
        let (ca, cb) = (norm(self, axes_a)?, norm(other, axes_b)?);
        for (&i, &j) in ca.iter().zip(&cb) {
            if self.shape()[i] != other.shape()[j] {
                return Err(Error::ShapeMismatch {
                    op: "tensordot",
                    lhs: self.shape().to_vec(),
                    rhs: other.shape().to_vec(),
                });
            }
        }
        let fa: Vec<usize> = (0..self.ndim()).filter(|k| !ca.contains(k)).collect();
        let fb: Vec<usize> = (0..other.ndim()).filter(|k| !cb.contains(k)).collect();
        let size = |a: &Array, ks: &[usize]| ks.iter().map(|&k| a.shape()[k]).product::<usize>();
        let (m, k, n) = (size(self, &fa), size(self, &ca), size(other, &fb));
        let pa: Vec<usize> = fa.iter().chain(&ca).copied().collect();
        let pb: Vec<usize> = cb.iter().chain(&fb).copied().collect();
        let lhs = self.permute(&pa)?.reshape(&[m as isize, k as isize])?;
        let rhs = other.permute(&pb)?.reshape(&[k as isize, n as isize])?;
        let out: Vec<isize> = fa
            .iter()
            .map(|&i| self.shape()[i] as isize)
            .chain(fb.iter().map(|&j| other.shape()[j] as isize))
            .collect();
        lhs.matmul(&rhs)?.reshape(&out)
    }

    /// Matrix product with NumPy's `matmul` rules: 1-D operands are promoted to matrices and
    /// the added axis removed; batch axes broadcast.
    ///
    /// Where the left operand is sharded over its rows or batch axes (not over the contracted
    /// axis) and the right one is a matrix, every shard is multiplied where it lives, by a copy
    /// of the right operand on its device, and the product keeps the left operand's sharding:
    /// JAX's data-parallel product. Otherwise it is computed on the left operand's first
    /// device.
    pub fn matmul(&self, other: &Array) -> Result<Array> {
        let mismatch = || Error::ShapeMismatch {
            op: "matmul",
            lhs: self.shape().to_vec(),
            rhs: other.shape().to_vec(),
        };
        if self.ndim() == 0 || other.ndim() == 0 {
            return Err(mismatch());
        }
        let dtype = Array::promoted_on_devices(&[self, other]);
        if let Some(product) = self.matmul_by_shards(other, dtype)? {
            return Ok(product);
        }
        let first = self
            .shard_data()
            .first()
            .ok_or_else(|| Error::invalid("array has no shard"))?;
        let place = Sharding::SingleDevice(first.device.clone(), first.memory_kind());
        let a = self.astype(dtype)?.device_put(&place)?;
        let b = other.astype(dtype)?.device_put(&place)?;
        let (a_vec, b_vec) = (a.ndim() == 1, b.ndim() == 1);
        let a = if a_vec { a.reshape(&[1, -1])? } else { a };
        let b = if b_vec { b.reshape(&[-1, 1])? } else { b };
        let (sa, sb) = (a.shape(), b.shape());
        let (m, k1) = (sa[sa.len() - 2], sa[sa.len() - 1]);
        let (k2, n) = (sb[sb.len() - 2], sb[sb.len() - 1]);
        if k1 != k2 {
            return Err(mismatch());
        }
        let batch = broadcast_shapes("matmul", &sa[..sa.len() - 2], &sb[..sb.len() - 2])?;
        let full = |r: usize, c: usize| {
            let mut s = batch.to_vec();
            s.extend([r, c]);
            s
        };
        // Broadcast views of a few elements can ask for an enormous product: check its size
        // before a kernel allocates it.
        crate::layout::checked_size(&full(m, n))?;
        let a = a.broadcast_to(&full(m, k1))?;
        let b = b.broadcast_to(&full(k2, n))?;
        let (pa, pb) = (&a.shard_data()[0], &b.shard_data()[0]);
        let buf = first
            .device
            .backend()
            .matmul(pa.tensor(dtype), pb.tensor(dtype))?;
        let mut shape = full(m, n);
        let out = Array::from_buffer(
            first.device.clone(),
            dtype,
            buf,
            Layout::contiguous(&shape)?,
        );
        if a_vec || b_vec {
            if b_vec {
                shape.pop();
            }
            if a_vec {
                shape.remove(shape.len() - if b_vec { 1 } else { 2 });
            }
            let shape: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
            return out.reshape(&shape);
        }
        Ok(out)
    }

    /// The product computed where each shard of `self` lives, or `None` where that does not
    /// apply (one shard, a vector operand, `self` split over the contracted axis, or shapes
    /// that do not match, which the one-device path reports).
    fn matmul_by_shards(&self, other: &Array, dtype: DType) -> Result<Option<Array>> {
        let nd = self.ndim();
        let Sharding::Named(mesh, spec) = self.sharding() else {
            return Ok(None);
        };
        if nd < 2
            || other.ndim() != 2
            || self.shard_data().len() < 2
            || spec.get(nd - 1).is_some()
            || self.shape()[nd - 1] != other.shape()[0]
        {
            return Ok(None);
        }
        let (k, n) = (other.shape()[0], other.shape()[1]);
        let (a, b) = (self.astype(dtype)?, other.astype(dtype)?);
        let targets = targets_of(&a);
        let work = a.size().saturating_mul(n);
        let shards = run_targets(&targets, work, |t: &Target| {
            let lhs = a.region_on(&t.index, &t.device, t.kind)?;
            // The whole right operand on this shard's device (no copy where it already is),
            // broadcast over the shard's batch axes.
            let rhs = b.region_on(&[0..k, 0..n], &t.device, t.kind)?;
            let mut rhs_shape: Vec<usize> = t.index[..nd - 2].iter().map(|r| r.len()).collect();
            rhs_shape.extend([k, n]);
            let rhs_layout = broadcast_view(&rhs.layout, &rhs_shape)?;
            let rhs_view = ShardData {
                layout: rhs_layout.into_owned(),
                ..rhs
            };
            let buffer = t
                .device
                .backend()
                .matmul(lhs.tensor(dtype), rhs_view.tensor(dtype))?;
            let mut index = t.index.clone();
            index[nd - 1] = 0..n;
            let shape: Vec<usize> = index.iter().map(|r| r.len()).collect();
            Ok(ShardData {
                device: t.device.clone(),
                index,
                buffer,
                layout: Layout::contiguous(&shape)?,
            })
        })?;
        let mut out_spec: Vec<Option<String>> =
            (0..nd).map(|i| spec.get(i).map(str::to_string)).collect();
        out_spec[nd - 1] = None;
        let mut shape = self.shape().to_vec();
        shape[nd - 1] = n;
        Ok(Some(Array::from_shards(
            &shape,
            dtype,
            Sharding::Named(mesh.clone(), PartitionSpec(out_spec)),
            shards,
            false,
        )))
    }
}
