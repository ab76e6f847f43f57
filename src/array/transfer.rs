//! Moving data: `device_put` (resharding), `to_device`, `with_memory_kind`, and gathers to
//! host memory.

use super::sharding::Sharding;
use super::{Array, ShardData};
use crate::backends::{Device, MemoryKind};
use crate::error::{Error, Result};
use crate::layout::{Layout, Slice, contiguous_strides, for_each_run};
use std::ops::Range;

fn contains(outer: &[Range<usize>], inner: &[Range<usize>]) -> bool {
    outer.len() == inner.len()
        && outer
            .iter()
            .zip(inner)
            .all(|(o, i)| o.start <= i.start && i.end <= o.end)
}

fn intersect(a: &[Range<usize>], b: &[Range<usize>]) -> Option<Vec<Range<usize>>> {
    let out: Vec<Range<usize>> = a
        .iter()
        .zip(b)
        .map(|(x, y)| x.start.max(y.start)..x.end.min(y.end))
        .collect();
    (out.iter().all(|r| !r.is_empty())).then_some(out)
}

/// The view of `shard` restricted to the global `region` (which it contains).
fn sub_view(shard: &ShardData, region: &[Range<usize>]) -> Result<Layout> {
    let slices: Vec<Slice> = region
        .iter()
        .zip(&shard.index)
        .map(|(r, o)| Slice::from(r.start - o.start..r.end - o.start))
        .collect();
    shard.layout.slice(&slices)
}

impl Array {
    /// This array laid out by `sharding` (a copy only where data must move).
    pub fn device_put(&self, sharding: &Sharding) -> Result<Array> {
        self.put(sharding, sharding.memory_kind())
    }

    /// This array on `device`, in its default memory kind.
    pub fn to_device(&self, device: &Device) -> Result<Array> {
        self.device_put(&Sharding::single(device))
    }

    /// The same sharding in another memory kind: an explicit copy into a separate
    /// allocation, as JAX's `device_put` to another memory kind.
    pub fn with_memory_kind(&self, kind: MemoryKind) -> Result<Array> {
        let sharding = match self.sharding() {
            Sharding::SingleDevice(d, _) => Sharding::SingleDevice(d.clone(), kind),
            other => other.clone(),
        };
        self.put(&sharding, kind)
    }

    fn put(&self, sharding: &Sharding, kind: MemoryKind) -> Result<Array> {
        if sharding == self.sharding() && kind == self.memory_kind() {
            return Ok(self.clone());
        }
        let targets = sharding.shard_indices(self.shape())?;
        let mut shards = Vec::with_capacity(targets.len());
        for (device, index) in targets {
            if !device.supports_memory_kind(kind) {
                return Err(Error::invalid(format!(
                    "device {device} has no `{kind}` memory (it has {:?})",
                    device.memory_kinds()
                )));
            }
            shards.push(self.region_on(&index, &device, kind)?);
        }
        Ok(Array::from_shards(
            self.shape(),
            self.dtype(),
            sharding.clone(),
            shards,
            self.is_read_only(),
        ))
    }

    /// The global `region` of this array as a buffer view on `device` in `kind`: a view of an
    /// existing shard where one already holds it there, else a copy.
    pub(crate) fn region_on(
        &self,
        region: &[Range<usize>],
        device: &Device,
        kind: MemoryKind,
    ) -> Result<ShardData> {
        let shape: Vec<usize> = region.iter().map(|r| r.len()).collect();
        let holders = || {
            self.shard_data()
                .iter()
                .filter(|s| contains(&s.index, region))
        };
        let same_place = |s: &&ShardData| s.device == *device && s.memory_kind() == kind;
        if let Some(s) = holders().find(same_place) {
            return Ok(ShardData {
                device: device.clone(),
                index: region.iter().cloned().collect(),
                buffer: s.buffer.clone(),
                layout: sub_view(s, region)?,
            });
        }
        let dtype = self.dtype();
        // Prefer a holder on the same backend: the backend copies device to device.
        if let Some(s) = holders().find(|s| s.device.backend_name() == device.backend_name()) {
            let layout = sub_view(s, region)?;
            let t = crate::backends::TensorRef {
                buffer: &*s.buffer,
                layout: &layout,
                dtype,
            };
            let buffer = device.backend().copy(t, device.index(), kind)?;
            return Ok(ShardData {
                device: device.clone(),
                index: region.iter().cloned().collect(),
                buffer,
                layout: Layout::contiguous(&shape)?,
            });
        }
        // Otherwise one copy: the target allocates (its own memory, or staging it can send on)
        // and the holders download straight into it.
        let n: usize = shape.iter().product();
        let len = crate::layout::checked_bytes(n, dtype.size_in_bytes(), device.name())?;
        // SAFETY: `region_to_host` writes every byte of `dst` (it fails, having read none,
        // when the sizes differ) and never reads it.
        let buffer = unsafe {
            device
                .backend()
                .upload_with(device.index(), kind, len, &mut |dst| {
                    self.region_to_host(region, dst)
                })?
        };
        Ok(ShardData {
            device: device.clone(),
            index: region.iter().cloned().collect(),
            buffer,
            layout: Layout::contiguous(&shape)?,
        })
    }

    /// All elements, row-major, into `dst` (exactly `size * itemsize` bytes).
    pub(crate) fn read_bytes(&self, dst: &mut [u8]) -> Result<()> {
        let full: Vec<Range<usize>> = self.shape().iter().map(|&n| 0..n).collect();
        self.region_to_host(&full, dst)
    }

    /// The global `region`, row-major, into `dst`, assembled from whichever shards hold it.
    fn region_to_host(&self, region: &[Range<usize>], dst: &mut [u8]) -> Result<()> {
        let dtype = self.dtype();
        let item = dtype.size_in_bytes();
        let shape: Vec<usize> = region.iter().map(|r| r.len()).collect();
        let n: usize = shape.iter().product();
        if n.checked_mul(item) != Some(dst.len()) {
            return Err(Error::invalid("host buffer size does not match the region"));
        }
        if n == 0 {
            return Ok(());
        }
        if let Some(s) = self
            .shard_data()
            .iter()
            .find(|s| contains(&s.index, region))
        {
            let layout = sub_view(s, region)?;
            let t = crate::backends::TensorRef {
                buffer: &*s.buffer,
                layout: &layout,
                dtype,
            };
            return s.device.backend().download(t, dst);
        }
        let dst_strides = contiguous_strides(&shape);
        let mut done: Vec<&[Range<usize>]> = Vec::new();
        let mut covered = 0usize;
        for s in self.shard_data() {
            if done.contains(&s.index.as_slice()) {
                continue; // a replica of a shard already copied
            }
            let Some(part) = intersect(&s.index, region) else {
                continue;
            };
            done.push(&s.index);
            let sub_shape: Vec<usize> = part.iter().map(|r| r.len()).collect();
            let m: usize = sub_shape.iter().product();
            let mut tmp = crate::backends::host::try_host_vec::<u8>(
                crate::layout::checked_bytes(m, item, "host")?,
                "host",
            )?;
            let layout = sub_view(s, &part)?;
            let t = crate::backends::TensorRef {
                buffer: &*s.buffer,
                layout: &layout,
                dtype,
            };
            s.device.backend().download(t, &mut tmp)?;
            let base: isize = part
                .iter()
                .zip(region)
                .zip(&dst_strides)
                .map(|((p, r), st)| (p.start - r.start) as isize * st)
                .sum();
            let src_strides = contiguous_strides(&sub_shape);
            for_each_run(
                &sub_shape,
                [&dst_strides, &src_strides],
                [base, 0],
                0..m,
                |[d, s], len, _| {
                    let (d, s) = (d as usize * item, s as usize * item);
                    dst[d..d + len * item].copy_from_slice(&tmp[s..s + len * item]);
                },
            );
            covered += m;
        }
        if covered != n {
            return Err(Error::invalid(format!(
                "shards cover {covered} of the {n} elements requested"
            )));
        }
        Ok(())
    }
}
