//! Views of a sharded array computed shard by shard where the shards live, when the view
//! leaves the split axes alone: slices and indexing along axes that are not split, and
//! reshapes of the axes after the last split one. Each returns `None` where a split axis would
//! change, and the caller gathers instead.

use super::{Array, ShardData};
use crate::error::Result;
use crate::layout::{Layout, Slice};

impl Array {
    /// Whether some shard holds only part of axis `k`.
    fn is_split(&self, k: usize) -> bool {
        let n = self.shape()[k];
        self.shard_data().iter().any(|sh| sh.index[k] != (0..n))
    }

    /// Each shard sliced where it lives, when the slice leaves every split axis whole: a view
    /// with this array's sharding, no copy (JAX keeps such a slice's sharding too). `None`
    /// when a split axis is cut, which needs a gather.
    pub(super) fn slice_shards(&self, slices: &[Slice]) -> Result<Option<Array>> {
        let shape = Layout::contiguous(self.shape())?
            .slice(slices)?
            .shape()
            .to_vec();
        // Per axis: the slice to apply to every shard, or the whole axis where it is unchanged.
        let mut local = vec![Slice::full(); self.ndim()];
        for (k, s) in slices.iter().enumerate() {
            let n = self.shape()[k];
            if s.resolve(n)? == (0, n, 1) {
                continue;
            }
            if self.is_split(k) {
                return Ok(None);
            }
            local[k] = *s;
        }
        let shards = self
            .0
            .shards
            .iter()
            .map(|sh| {
                let mut index = sh.index.clone();
                for (k, r) in index.iter_mut().enumerate() {
                    if local[k] != Slice::full() {
                        *r = 0..shape[k];
                    }
                }
                Ok(ShardData {
                    device: sh.device.clone(),
                    index,
                    buffer: sh.buffer.clone(),
                    layout: sh.layout.slice(&local)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(Array::from_shards(
            &shape,
            self.dtype(),
            self.sharding().clone(),
            shards,
            self.0.read_only,
        )))
    }

    /// The sub-array at `index` along `axis`, taken in every shard, when `axis` is not split.
    pub(super) fn index_axis_shards(&self, axis: usize, index: usize) -> Option<Array> {
        if self.is_split(axis) {
            return None;
        }
        let shards = self
            .shard_data()
            .iter()
            .map(|sh| {
                let mut region = sh.index.clone();
                region.remove(axis);
                Some(ShardData {
                    device: sh.device.clone(),
                    index: region,
                    buffer: sh.buffer.clone(),
                    layout: sh.layout.select(axis, index).ok()?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let mut shape = self.shape().to_vec();
        shape.remove(axis);
        let sources: Vec<Option<usize>> =
            (0..self.ndim()).filter(|&k| k != axis).map(Some).collect();
        Some(Array::from_shards(
            &shape,
            self.dtype(),
            self.sharding().with_axes(&sources),
            shards,
            self.0.read_only,
        ))
    }

    /// `shape` when it keeps every axis up to the last split one and reshapes only the axes
    /// after it (`[batch, h, w]` split over batch to `[batch, h * w]`, say): each shard is
    /// reshaped where it lives, as a view where its strides allow, else copied there.
    pub(super) fn reshape_shards(&self, shape: &[usize]) -> Result<Option<Array>> {
        let kept = match (0..self.ndim()).rev().find(|&k| self.is_split(k)) {
            Some(last) => last + 1,
            None => 0, // every shard whole (replicas): each reshapes all of its copy
        };
        if shape.len() < kept || shape[..kept] != self.shape()[..kept] {
            return Ok(None);
        }
        let shards = self
            .shard_data()
            .iter()
            .map(|sh| {
                let mut index = sh.index[..kept].to_vec();
                index.extend(shape[kept..].iter().map(|&n| 0..n));
                let local: Vec<usize> = index.iter().map(|r| r.len()).collect();
                Ok(ShardData {
                    index: index.into_iter().collect(),
                    ..sh.reshaped(self.dtype(), &local)?
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let sources: Vec<Option<usize>> =
            (0..shape.len()).map(|k| (k < kept).then_some(k)).collect();
        Ok(Some(Array::from_shards(
            shape,
            self.dtype(),
            self.sharding().with_axes(&sources),
            shards,
            self.0.read_only,
        )))
    }
}
