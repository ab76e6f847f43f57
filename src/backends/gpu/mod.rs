//! The GPU runtime CUDA, ROCm and oneAPI share (as `host/` is shared by cpu and tpu): one
//! [`Driver`] trait with the calls a GPU backend needs, and [`GpuBackend`], the backend
//! logic written once over it.
//!
//! # What the runtime does
//! - **Memory kinds**: `device` (device memory from a caching, stream-ordered pool) and
//!   `pinned_host` (page-locked host memory every device reaches at the same address, from
//!   a pool shared by the devices).
//! - **One compute stream per device** runs every kernel and every copy into device memory,
//!   in submission order. A second stream serves downloads, which wait for their source's
//!   event only. Every buffer carries the event recorded after the work that wrote it.
//! - **Across devices**, copies are ordered by events both ways (the target's allocation
//!   before the copy, the copy before the target's next use).
//! - **Deferred release**: pinned blocks and imported DLPack memory are released only once
//!   an event recorded at their drop has passed; the producer's deleter runs exactly once,
//!   after our last queued use.
//! - **Kernels** are generated per op, dtype and rank (`codegen`), compiled on first use by
//!   the driver (NVRTC, hiprtc) and cached per device.
//! - **Errors**: a failed allocation is `OutOfMemory` (after the pool returned its cache to
//!   the driver and retried once), a sticky driver fault `DeviceLost` for every later call.
//!
//! The fake driver (`fake`, feature `fake-gpu`) runs all of this without hardware.

#![warn(missing_docs)]

pub mod blas;
pub(crate) mod buffer;
pub mod codegen;
mod deferred;
pub(crate) mod device;
mod dlpack;
pub mod driver;
#[cfg(any(test, feature = "fake-gpu"))]
pub mod fake;
pub mod kernel;
#[cfg(test)]
mod kernels_on_host;
mod launch;
pub(crate) mod memory;
#[cfg(feature = "nvrtc")]
pub mod nvrtc;
pub(crate) mod params;
#[cfg(test)]
mod tests;
mod transfer;

pub use driver::{
    DeviceInfo, Driver, DriverDlpack, DriverError, DriverErrorKind, DriverResult, EventHandle,
    FunctionHandle, KernelArg, LaunchDims, StreamHandle,
};
pub use kernel::{KernelSource, KernelSpec, MapOp};

use crate::backends::{
    Address, Backend, BinaryOp, DeviceBuffer, DeviceDesc, DlpackCapability, MemoryKind, Owner,
    ReduceOp, SharedBuffer, TensorRef, UnaryOp,
};
use crate::dlpack::stream::ExportSync;
use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use buffer::GpuBuffer;
use device::DeviceState;
use memory::PinnedPool;
use std::fmt;
use std::sync::Arc;

/// Pool limits: bytes of freed blocks kept for reuse.
#[derive(Debug, Clone, Copy)]
pub struct PoolLimits {
    /// Per device (default: a quarter of the device's memory).
    pub device: Option<usize>,
    /// Pinned host memory, shared (default 2 GiB). Pinning costs far more than copying
    /// (cuMemHostAlloc of 256 MiB took ~60 ms on the H200 machine, the copy 5 ms), and a
    /// loop of transfers keeps two blocks of its size cycling (one in flight, one being
    /// released): a cache smaller than that pinned and unpinned on every call (d2h into
    /// pinned memory at 4.1 GB/s against 54 GB/s for torch's copy into a kept tensor).
    pub pinned: usize,
    /// The piece size of transfers from and to host memory that is not pinned (default 16
    /// MiB; a transfer pins two blocks of it).
    pub staging_piece: usize,
}

impl Default for PoolLimits {
    fn default() -> Self {
        PoolLimits {
            device: None,
            pinned: 2 << 30,
            staging_piece: transfer::STAGING_PIECE,
        }
    }
}

/// A backend over a GPU [`Driver`]: every device the driver reports, platform `gpu`.
pub struct GpuBackend<D: Driver> {
    driver: Arc<D>,
    devices: Vec<Arc<DeviceState<D>>>,
}

impl<D: Driver> fmt::Debug for GpuBackend<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "GpuBackend({}, {} devices)",
            self.driver.runtime(),
            self.devices.len()
        )
    }
}

impl<D: Driver> GpuBackend<D> {
    /// Creates each device's streams; a driver with no devices is an error (the backend is
    /// unavailable, with the reason).
    pub fn new(driver: D, limits: PoolLimits) -> std::result::Result<GpuBackend<D>, String> {
        let driver = Arc::new(driver);
        let n = driver.device_count();
        if n == 0 {
            return Err(format!("{}: no devices", driver.runtime()));
        }
        let pinned = Arc::new(PinnedPool::new(driver.clone(), limits.pinned));
        let mut devices = Vec::with_capacity(n);
        for i in 0..n {
            let limit = limits
                .device
                .unwrap_or((driver.device_info(i).total_memory / 4) as usize);
            let piece = limits.staging_piece.max(1);
            let dev = DeviceState::new(driver.clone(), i, pinned.clone(), limit, piece)
                .map_err(|e| format!("{}:{i}: {e}", driver.runtime()))?;
            devices.push(Arc::new(dev));
        }
        Ok(GpuBackend { driver, devices })
    }

    /// The driver (a test reads the fake's counters through it).
    pub fn driver(&self) -> &D {
        &self.driver
    }

    fn device(&self, index: usize) -> Result<&Arc<DeviceState<D>>> {
        let d = self.devices.get(index).ok_or_else(|| {
            Error::UnknownDevice(format!(
                "{}:{index} does not exist ({} has {} devices)",
                self.driver.runtime(),
                self.driver.runtime(),
                self.devices.len()
            ))
        })?;
        d.check()?;
        Ok(d)
    }

    /// The buffer behind a kernel input, which must be one of ours.
    fn buffer<'a>(&self, t: &TensorRef<'a>) -> Result<&'a GpuBuffer<D>> {
        t.buffer
            .as_any()
            .downcast_ref::<GpuBuffer<D>>()
            .ok_or_else(|| Error::Backend {
                backend: self.driver.runtime().to_string(),
                message: format!("{:?} is not a buffer of this backend", t.buffer),
            })
    }
}

impl<D: Driver> Backend for GpuBackend<D> {
    fn name(&self) -> &str {
        self.driver.runtime()
    }
    fn platform(&self) -> &str {
        "gpu"
    }
    fn platform_version(&self) -> String {
        self.driver.platform_version()
    }
    fn matmul_engine(&self, device: usize) -> Option<String> {
        Some(match self.driver.blas(device) {
            Ok(library) => format!(
                "{library} for floating and complex dtypes with unit-stride rows or columns; \
                 the generated kernel otherwise"
            ),
            Err(why) => format!("the generated kernel ({why})"),
        })
    }
    fn devices(&self) -> Vec<DeviceDesc> {
        self.devices
            .iter()
            .map(|d| DeviceDesc {
                index: d.index,
                local_hardware_id: Some(d.info.ordinal),
                memory_kinds: vec![MemoryKind::Device, MemoryKind::PinnedHost],
            })
            .collect()
    }
    fn upload(&self, device: usize, kind: MemoryKind, bytes: &[u8]) -> Result<SharedBuffer> {
        let dev = self.device(device)?;
        Ok(SharedBuffer::new(transfer::upload(dev, kind, bytes)?))
    }
    unsafe fn upload_with(
        &self,
        device: usize,
        kind: MemoryKind,
        len: usize,
        write: &mut dyn FnMut(&mut [u8]) -> Result<()>,
    ) -> Result<SharedBuffer> {
        let dev = self.device(device)?;
        // SAFETY: forwarded contract on `write`.
        Ok(SharedBuffer::new(unsafe {
            transfer::upload_with(dev, kind, len, write)?
        }))
    }
    fn fill(
        &self,
        device: usize,
        kind: MemoryKind,
        dtype: DType,
        value: Scalar,
        len: usize,
    ) -> Result<SharedBuffer> {
        let dev = self.device(device)?;
        Ok(SharedBuffer::new(launch::fill(
            dev, kind, dtype, value, len,
        )?))
    }
    fn random_bits(
        &self,
        device: usize,
        kind: MemoryKind,
        key: [u32; 2],
        counters: &crate::backends::Counters,
        form: crate::backends::BitsForm,
    ) -> Result<SharedBuffer> {
        let dev = self.device(device)?;
        Ok(SharedBuffer::new(launch::random_bits(
            dev, kind, key, counters, form,
        )?))
    }
    fn download(&self, src: TensorRef<'_>, dst: &mut [u8]) -> Result<()> {
        let b = self.buffer(&src)?;
        b.dev.check()?;
        if src.layout.is_contiguous() {
            return transfer::download(b, src.layout.offset() * src.dtype.size_in_bytes(), dst);
        }
        let packed = launch::map(&b.dev, MapOp::Cast, &[src], &[b], src.dtype)?;
        transfer::download(&packed, 0, dst)
    }
    fn copy(&self, src: TensorRef<'_>, device: usize, kind: MemoryKind) -> Result<SharedBuffer> {
        let b = self.buffer(&src)?;
        let target = self.device(device)?;
        b.dev.check()?;
        let item = src.dtype.size_in_bytes();
        if !src.layout.is_contiguous() {
            let packed = launch::map(&b.dev, MapOp::Cast, &[src], &[b], src.dtype)?;
            if Arc::ptr_eq(&b.dev, target) && kind == packed.memory_kind() {
                return Ok(SharedBuffer::new(packed));
            }
            let bytes = packed.len_bytes();
            return Ok(SharedBuffer::new(transfer::copy(
                &packed, 0, bytes, target, kind,
            )?));
        }
        let bytes = src.layout.size() * item;
        let start = src.layout.offset() * item;
        Ok(SharedBuffer::new(transfer::copy(
            b, start, bytes, target, kind,
        )?))
    }
    fn unary(&self, op: UnaryOp, x: TensorRef<'_>, out: DType) -> Result<SharedBuffer> {
        let b = self.buffer(&x)?;
        Ok(SharedBuffer::new(launch::map(
            &b.dev,
            MapOp::Unary(op),
            &[x],
            &[b],
            out,
        )?))
    }
    fn binary(
        &self,
        op: BinaryOp,
        a: TensorRef<'_>,
        b: TensorRef<'_>,
        out: DType,
    ) -> Result<SharedBuffer> {
        let ba = self.buffer(&a)?;
        // An operand on another device of this backend is moved to the first one's.
        let (moved, moved_layout);
        let b = if b.buffer.device_index() != a.buffer.device_index() {
            moved = self.copy(b, ba.dev.index, MemoryKind::Device)?;
            moved_layout = crate::layout::Layout::contiguous(b.layout.shape())?;
            TensorRef {
                buffer: &*moved,
                layout: &moved_layout,
                dtype: b.dtype,
            }
        } else {
            b
        };
        let bb = self.buffer(&b)?;
        Ok(SharedBuffer::new(launch::map(
            &ba.dev,
            MapOp::Binary(op),
            &[a, b],
            &[ba, bb],
            out,
        )?))
    }
    fn reduce(&self, op: ReduceOp, x: TensorRef<'_>, axes: &[usize]) -> Result<SharedBuffer> {
        let b = self.buffer(&x)?;
        Ok(SharedBuffer::new(launch::reduce(&b.dev, op, x, b, axes)?))
    }
    fn matmul(&self, a: TensorRef<'_>, b: TensorRef<'_>) -> Result<SharedBuffer> {
        let (ba, bb) = (self.buffer(&a)?, self.buffer(&b)?);
        if ba.dev.index != bb.dev.index {
            return Err(Error::invalid(format!(
                "matmul operands are on {} and {}: move one first",
                ba.dev.name, bb.dev.name
            )));
        }
        Ok(SharedBuffer::new(launch::matmul(&ba.dev, a, b, ba, bb)?))
    }
    fn cast(&self, x: TensorRef<'_>, to: DType) -> Result<SharedBuffer> {
        let b = self.buffer(&x)?;
        Ok(SharedBuffer::new(launch::map(
            &b.dev,
            MapOp::Cast,
            &[x],
            &[b],
            to,
        )?))
    }
    fn select(
        &self,
        cond: TensorRef<'_>,
        a: TensorRef<'_>,
        b: TensorRef<'_>,
    ) -> Result<SharedBuffer> {
        crate::backends::host::select_operands(&cond, &a, &b)?;
        let bufs = [self.buffer(&cond)?, self.buffer(&a)?, self.buffer(&b)?];
        if bufs.iter().any(|x| x.dev.index != bufs[1].dev.index) {
            return Err(Error::invalid("where: operands on different devices"));
        }
        Ok(SharedBuffer::new(launch::map(
            &bufs[1].dev,
            MapOp::Select,
            &[cond, a, b],
            &bufs,
            a.dtype,
        )?))
    }
    fn synchronize(&self, device: usize) -> Result<()> {
        self.device(device)?.synchronize()
    }
    unsafe fn wrap_foreign(
        &self,
        device: usize,
        kind: MemoryKind,
        address: Address,
        len: usize,
        owner: Owner,
    ) -> Result<SharedBuffer> {
        let dev = self.device(device)?;
        Ok(SharedBuffer::new(dlpack::wrap_foreign(
            dev, kind, address, len, owner,
        )?))
    }
    fn dlpack_capability(&self, _device: usize, kind: MemoryKind) -> Option<DlpackCapability> {
        dlpack::capability(self.driver.dlpack(), kind)
    }
    fn dlpack_export_sync(&self, buffer: &dyn DeviceBuffer, sync: ExportSync) -> Result<()> {
        let b = buffer
            .as_any()
            .downcast_ref::<GpuBuffer<D>>()
            .ok_or_else(|| Error::invalid("not a buffer of this backend"))?;
        dlpack::export_sync(b, self.driver.dlpack().streams, sync)
    }
    fn dlpack_work_stream(&self, device: usize) -> Option<usize> {
        self.devices.get(device).map(|d| d.stream.0 as usize)
    }
    unsafe fn dlpack_wait_for_producer(
        &self,
        device: usize,
        producer: Option<usize>,
    ) -> Result<()> {
        let dev = self.device(device)?;
        dlpack::wait_for_producer(dev, self.driver.dlpack().streams, producer)
    }
}
