//! The pluggable part: the object-safe [`Backend`] and [`DeviceBuffer`] traits, memory kinds,
//! the op descriptions kernels receive, and the registry that discovers backends at run time.
//!
//! A backend knows devices, buffers and kernels; it knows nothing of `Array` or sharding.
//! Every buffer it hands out is immutable once returned (ops allocate their outputs), which is
//! what lets arrays share buffers across threads without locks.
//!
//! # The asynchronous contract
//! Every backend obeys these rules; eager backends (cpu, tpu) obey them trivially.
//! 1. **Submission order.** Work on one device runs in the order it was submitted. A buffer
//!    returned by any call is valid input to any later call on the same backend, whether or
//!    not the work producing it has run yet.
//! 2. **Cross-device order is the backend's job.** When a buffer of device A is read by work
//!    on device B of the same backend (`copy`, a kernel), the backend makes B wait for A's
//!    pending writes (an event per buffer, as cudarc and cubecl do). Moves between backends
//!    go through [`Backend::download`], which waits.
//! 3. **`download` waits only for its source**: the work that produces `src`, not the whole
//!    device.
//! 4. **`synchronize(device)` waits for all queued work** and returns the first asynchronous
//!    error reported since the previous call (then clears it). A lost device keeps failing
//!    with [`Error::DeviceLost`] on every call.
//! 5. **Drops never block**, never panic, run on any thread, and are ordered after every
//!    queued use (see [`DeviceBuffer`]'s drop contract); foreign memory is released only
//!    after its last queued use.
//! 6. **Errors are typed**: a failed allocation is `OutOfMemory`, a lost device `DeviceLost`,
//!    an op a device cannot run `Unsupported { backend, op, dtype }`; nothing panics.
//! 7. **New ops have defaults.** Every method added to [`Backend`] after the core set below
//!    has a default body (`Err(Unsupported)` for ops), so a user's backend keeps compiling.

mod buffer;
mod concat;
mod device;
mod dlpack_caps;
pub(crate) mod host;
pub(crate) mod op;
pub(crate) mod registry;
pub mod threefry;

pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
#[cfg(any(test, feature = "fake-gpu", feature = "nvrtc"))]
pub mod gpu;
pub mod tpu_host;
#[cfg(feature = "wgpu")]
pub mod wgpu;

pub use buffer::{Address, DeviceBuffer, Owner, Shared, SharedBuffer};
pub use device::{Device, DeviceDesc, MemoryKind};
pub use dlpack_caps::DlpackCapability;
pub use op::{BinaryOp, ReduceOp, TensorRef, UnaryOp};
pub use registry::{
    BackendStatus, backends, check_backend_names, devices, get_device, register_backend,
};
pub use threefry::{BitsForm, Counters};

use crate::dlpack::stream::ExportSync;
use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use std::fmt::Debug;

/// `op` over `axes` of `x` converted to `out` first (`Backend::reduce_as`'s default, and the
/// fallback of backends that widen only some dtypes as they read).
pub(crate) fn reduce_converted<B: Backend + ?Sized>(
    backend: &B,
    op: ReduceOp,
    x: TensorRef<'_>,
    axes: &[usize],
    out: DType,
) -> Result<SharedBuffer> {
    if out == x.dtype {
        return backend.reduce(op, x, axes);
    }
    let converted = backend.cast(x, out)?;
    let layout = crate::layout::Layout::contiguous(x.layout.shape())?;
    let t = TensorRef {
        buffer: &*converted,
        layout: &layout,
        dtype: out,
    };
    backend.reduce(op, t, axes)
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
    /// What computes `matmul` on `device` (a library, or the backend's own kernel), and why
    /// when it is not the usual one: what `dlarray devices` prints, so that a benchmark
    /// reader knows what was measured. `None` when the backend does not say.
    fn matmul_engine(&self, _device: usize) -> Option<String> {
        None
    }

    /// A new buffer holding `bytes` on `device` in memory `kind`.
    fn upload(&self, device: usize, kind: MemoryKind, bytes: &[u8]) -> Result<SharedBuffer>;
    /// A new buffer of `len` elements of `dtype`, each equal to `value`.
    fn fill(
        &self,
        device: usize,
        kind: MemoryKind,
        dtype: DType,
        value: Scalar,
        len: usize,
    ) -> Result<SharedBuffer>;
    /// A new buffer of `len` bytes on `device` in memory `kind`, whose bytes `write` fills:
    /// the target allocates (host memory, or pinned staging for a device) and the source
    /// writes straight into it, so a move between backends is one copy. The default stages
    /// through a host `Vec` and [`upload`](Backend::upload).
    ///
    /// # Safety
    /// `write` receives memory that may be uninitialised: it must write every byte and read
    /// none before writing it. (dlarray passes a `download` of the source.)
    unsafe fn upload_with(
        &self,
        device: usize,
        kind: MemoryKind,
        len: usize,
        write: &mut dyn FnMut(&mut [u8]) -> Result<()>,
    ) -> Result<SharedBuffer> {
        let mut staging = host::try_host_vec::<u8>(len, &format!("{}:{device}", self.name()))?;
        write(&mut staging)?;
        self.upload(device, kind, &staging)
    }
    /// Copies the elements of `src` (row-major order) into `dst`, which has exactly
    /// `src.layout.size() * dtype size` bytes. Waits for the work producing `src` only.
    fn download(&self, src: TensorRef<'_>, dst: &mut [u8]) -> Result<()>;
    /// `download` into memory that may be uninitialised, returning `dst` written (the same
    /// memory: the caller checks). Backends that copy without reading `dst` override it; the
    /// default zeroes `dst` first, a second pass over the bytes that `Array::to_vec` of host
    /// memory paid before every copy.
    fn download_uninit<'a>(
        &self,
        src: TensorRef<'_>,
        dst: &'a mut [std::mem::MaybeUninit<u8>],
    ) -> Result<&'a mut [u8]> {
        dst.fill(std::mem::MaybeUninit::new(0));
        // SAFETY: every byte of `dst` was just written.
        let dst = unsafe { buffer::assume_init(dst) };
        self.download(src, dst)?;
        Ok(dst)
    }
    /// A contiguous copy of `src` on `device` (this backend) in memory `kind`.
    fn copy(&self, src: TensorRef<'_>, device: usize, kind: MemoryKind) -> Result<SharedBuffer>;

    /// Elementwise `op(x)`; the output has dtype `out` (e.g. `abs` of complex is real).
    fn unary(&self, op: UnaryOp, x: TensorRef<'_>, out: DType) -> Result<SharedBuffer>;
    /// Elementwise `op(a, b)` on operands of one dtype whose layouts share one shape
    /// (broadcasting is done with zero strides); the output has dtype `out`.
    fn binary(
        &self,
        op: BinaryOp,
        a: TensorRef<'_>,
        b: TensorRef<'_>,
        out: DType,
    ) -> Result<SharedBuffer>;
    /// Reduces over `axes` (sorted, unique); the output drops those axes and keeps the dtype.
    fn reduce(&self, op: ReduceOp, x: TensorRef<'_>, axes: &[usize]) -> Result<SharedBuffer>;
    /// `op` over `axes`, accumulated in and returned as dtype `out` (NumPy's sum of uint8 as
    /// uint64) without converting the input first where the backend can. The default
    /// converts `x` to `out`, then reduces.
    fn reduce_as(
        &self,
        op: ReduceOp,
        x: TensorRef<'_>,
        axes: &[usize],
        out: DType,
    ) -> Result<SharedBuffer> {
        reduce_converted(self, op, x, axes, out)
    }
    /// Batched matrix product of `[batch.., m, k]` by `[batch.., k, n]` (the batch axes of both
    /// already broadcast to one shape) into a contiguous `[batch.., m, n]`.
    fn matmul(&self, a: TensorRef<'_>, b: TensorRef<'_>) -> Result<SharedBuffer>;
    /// Elementwise conversion to `to`.
    fn cast(&self, x: TensorRef<'_>, to: DType) -> Result<SharedBuffer>;
    /// Elementwise `cond ? a : b` (the array API's `where`): `cond` is bool, `a` and `b` have
    /// one dtype, and all three one shape (broadcast with zero strides); the output has `a`'s
    /// dtype. The default is `Unsupported`.
    fn select(
        &self,
        cond: TensorRef<'_>,
        a: TensorRef<'_>,
        b: TensorRef<'_>,
    ) -> Result<SharedBuffer> {
        let _ = (cond, b);
        Err(Error::unsupported(self.name(), "where", a.dtype))
    }
    /// The concatenation of `parts` (one dtype, shapes equal but along `axis`) along `axis`,
    /// contiguous, in memory `kind` of `device`. The default gathers the parts through the
    /// host: each part is downloaded once and the result written straight into the target's
    /// memory (`upload_with`), which is right for host backends and correct everywhere.
    fn concat(
        &self,
        parts: &[TensorRef<'_>],
        axis: usize,
        device: usize,
        kind: MemoryKind,
    ) -> Result<SharedBuffer> {
        concat::through_host(self, parts, axis, device, kind)
    }
    /// Random bits: the Threefry-2x32 hash under `key` of each element's counter (see
    /// [`Counters`]), as `form` (u32 words; `Wide` is one u64 per element), in a new
    /// contiguous buffer on `device` in memory `kind`. Every backend must give the same bits,
    /// which is what makes a random array the same on every backend and sharding. The default
    /// hashes on the host and uploads the result once.
    fn random_bits(
        &self,
        device: usize,
        kind: MemoryKind,
        key: [u32; 2],
        counters: &Counters,
        form: BitsForm,
    ) -> Result<SharedBuffer> {
        let words = counters.hash_on_host(key, form, self.name())?;
        self.upload(device, kind, crate::array::as_bytes(&words))
    }
    /// Waits until all work queued on `device` has finished (eager backends return at once)
    /// and returns the first asynchronous error since the previous call.
    fn synchronize(&self, _device: usize) -> Result<()> {
        Ok(())
    }

    // ---- foreign memory and DLPack (defaults suit eager host-memory backends) ----

    /// A buffer of this backend over memory someone else owns (a DLPack producer's), which
    /// this backend's kernels can read in place. The backend keeps `owner` until its last
    /// queued use of the memory has finished, then drops it (that runs the producer's
    /// deleter). The default wraps host memory of a host memory kind, or of a backend whose
    /// devices compute on host memory (`platform() == "cpu"`), and refuses the rest.
    ///
    /// # Safety
    /// `address..address + len` must stay valid, and unchanged, while `owner` lives.
    unsafe fn wrap_foreign(
        &self,
        device: usize,
        kind: MemoryKind,
        address: Address,
        len: usize,
        owner: Owner,
    ) -> Result<SharedBuffer> {
        match address {
            Address::Host(ptr) if kind.is_host() || self.platform() == "cpu" => Ok(
                SharedBuffer::new(host::ForeignBuffer::new(ptr, len, device, kind, owner)),
            ),
            _ => Err(Error::Backend {
                backend: self.name().to_string(),
                message: format!(
                    "cannot wrap foreign memory at {address:?} as `{kind}` memory of device {device}"
                ),
            }),
        }
    }

    /// This backend's DLPack declaration for memory `kind` of `device`: the DLPack device
    /// type it exports as and how its streams are numbered. `None` (the default) keeps JAX's
    /// platform-string rules (`platform()` `cpu`, `tpu`, or `gpu` with `cuda`/`rocm`/`oneapi`
    /// in the platform version). Read once per device, when its `Device` is made.
    fn dlpack_capability(&self, _device: usize, _kind: MemoryKind) -> Option<DlpackCapability> {
        None
    }

    /// Before an in-place DLPack export of `buffer`: do what `sync` says (the array API's
    /// stream rule, resolved by `dlpack::stream::export_sync`): make the consumer's stream
    /// wait for the queued work on `buffer`, or wait for it here. Called without Python's
    /// GIL. The default waits for the whole device unless told to skip.
    fn dlpack_export_sync(&self, buffer: &dyn DeviceBuffer, sync: ExportSync) -> Result<()> {
        match sync {
            ExportSync::Skip => Ok(()),
            _ => self.synchronize(buffer.device_index()),
        }
    }

    /// The stream this backend runs `device`'s work on, as a raw handle (`None`: no streams,
    /// or the runtime's default stream). Reported to the C exchange API, and passed as
    /// `__dlpack__(stream=...)` when importing onto `device`.
    fn dlpack_work_stream(&self, _device: usize) -> Option<usize> {
        None
    }

    /// After importing memory a producer wrote on its stream `producer` (a raw handle, or
    /// `None` for its default stream): make `device`'s work wait for that stream before any
    /// later use. Eager host backends need nothing.
    ///
    /// # Safety
    /// `producer` must be a live stream handle of this backend's runtime.
    unsafe fn dlpack_wait_for_producer(
        &self,
        _device: usize,
        _producer: Option<usize>,
    ) -> Result<()> {
        Ok(())
    }
}
