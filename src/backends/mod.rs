//! The pluggable part: the object-safe [`Backend`] and [`DeviceBuffer`] traits, memory kinds,
//! the op descriptions kernels receive, and the registry that discovers backends at run time.
//!
//! A backend knows devices, buffers and kernels; it knows nothing of `Array` or sharding.
//! Every buffer it hands out is immutable once returned (ops allocate their outputs), which is
//! what lets arrays share buffers across threads without locks.

mod device;
pub(crate) mod host;
pub(crate) mod op;
pub(crate) mod registry;

pub mod cpu;
pub mod tpu_host;
#[cfg(feature = "wgpu")]
pub mod wgpu;

pub use device::{Device, DeviceDesc, MemoryKind};
pub use op::{BinaryOp, ReduceOp, TensorRef, UnaryOp};
pub use registry::{BackendStatus, backends, devices, get_device, register_backend};

use crate::dtype::{DType, Scalar};
use crate::error::Result;
use std::any::Any;
use std::fmt::Debug;
use std::sync::Arc;

/// Memory owned by one backend on one of its devices.
pub trait DeviceBuffer: Send + Sync + Debug {
    /// Index of the owning device within its backend.
    fn device_index(&self) -> usize;
    fn memory_kind(&self) -> MemoryKind;
    fn len_bytes(&self) -> usize;
    /// Alignment of the start of the buffer, in bytes.
    fn alignment(&self) -> usize;
    /// The start of the buffer when the host can read it directly (CPU, pinned host memory).
    fn host_ptr(&self) -> Option<*const u8>;
    /// The raw device address where one exists (CUDA, ROCm, oneAPI); `None` for handle-based
    /// APIs (wgpu, OpenCL) and for host memory.
    fn device_ptr(&self) -> Option<u64> {
        None
    }
    /// For the owning backend to recover its concrete type; the layers above never downcast.
    fn as_any(&self) -> &dyn Any;
}

/// A backend: a family of devices with their allocator, copies and kernels.
///
/// Object safe; held as `Arc<dyn Backend>`. Kernels read their inputs as [`TensorRef`]s (any
/// strides, including 0 for broadcasting and negative ones) and return new, contiguous
/// (row-major) buffers on the device of their first input.
pub trait Backend: Send + Sync + Debug {
    /// Short unique name (`cpu`, `tpu`, `wgpu`, ...): devices are `name:index`.
    fn name(&self) -> &str;
    /// Platform in JAX's sense (`cpu`, `gpu`, `tpu`, `wgpu`, ...): what DLPack maps on.
    fn platform(&self) -> &str;
    /// Free text naming runtime and version (`cpu`, `cuda 12.8`, `wgpu 30`).
    fn platform_version(&self) -> String;
    /// The platform version of one device, where devices of one backend differ (a wgpu
    /// backend drives Vulkan and GL adapters side by side: `wgpu 30 vulkan llvmpipe`).
    fn device_platform_version(&self, _device: usize) -> String {
        self.platform_version()
    }
    /// The devices this backend drives, by index.
    fn devices(&self) -> Vec<DeviceDesc>;
    /// The dtypes `device`'s kernels compute on (any dtype can still be stored and moved);
    /// an op on another dtype is `Error::Unsupported`.
    fn kernel_dtypes(&self, _device: usize) -> Vec<DType> {
        DType::ALL.to_vec()
    }

    /// A new buffer holding `bytes` on `device` in memory `kind`.
    fn upload(
        &self,
        device: usize,
        kind: MemoryKind,
        bytes: &[u8],
    ) -> Result<Arc<dyn DeviceBuffer>>;
    /// A new buffer of `len` elements of `dtype`, each equal to `value`.
    fn fill(
        &self,
        device: usize,
        kind: MemoryKind,
        dtype: DType,
        value: Scalar,
        len: usize,
    ) -> Result<Arc<dyn DeviceBuffer>>;
    /// Copies the elements of `src` (row-major order) into `dst`, which has exactly
    /// `src.layout.size() * dtype size` bytes. Waits for pending work on the buffer.
    fn download(&self, src: TensorRef<'_>, dst: &mut [u8]) -> Result<()>;
    /// A contiguous copy of `src` on `device` (this backend) in memory `kind`.
    fn copy(
        &self,
        src: TensorRef<'_>,
        device: usize,
        kind: MemoryKind,
    ) -> Result<Arc<dyn DeviceBuffer>>;

    /// Elementwise `op(x)`; the output has dtype `out` (e.g. `abs` of complex is real).
    fn unary(&self, op: UnaryOp, x: TensorRef<'_>, out: DType) -> Result<Arc<dyn DeviceBuffer>>;
    /// Elementwise `op(a, b)` on operands of one dtype whose layouts share one shape
    /// (broadcasting is done with zero strides); the output has dtype `out`.
    fn binary(
        &self,
        op: BinaryOp,
        a: TensorRef<'_>,
        b: TensorRef<'_>,
        out: DType,
    ) -> Result<Arc<dyn DeviceBuffer>>;
    /// Reduces over `axes` (sorted, unique); the output drops those axes and keeps the dtype.
    fn reduce(
        &self,
        op: ReduceOp,
        x: TensorRef<'_>,
        axes: &[usize],
    ) -> Result<Arc<dyn DeviceBuffer>>;
    /// Batched matrix product of `[batch.., m, k]` by `[batch.., k, n]` (the batch axes of both
    /// already broadcast to one shape) into a contiguous `[batch.., m, n]`.
    fn matmul(&self, a: TensorRef<'_>, b: TensorRef<'_>) -> Result<Arc<dyn DeviceBuffer>>;
    /// Elementwise conversion to `to`.
    fn cast(&self, x: TensorRef<'_>, to: DType) -> Result<Arc<dyn DeviceBuffer>>;
    /// Waits until all work queued on `device` has finished (eager backends return at once).
    fn synchronize(&self, _device: usize) -> Result<()> {
        Ok(())
    }
}
