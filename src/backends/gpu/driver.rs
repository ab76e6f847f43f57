//! [`Driver`]: the calls a GPU runtime (CUDA, ROCm, Level Zero) must offer for the shared
//! backend logic in [`GpuBackend`](super::GpuBackend) to drive it.
//!
//! The seam sits where cubecl and cudarc's `result` layer sit: raw handles and unified
//! addresses, no ownership. Everything above it (pools, events on buffers, deferred release,
//! the kernel cache, DLPack) is written once and tested on the fake driver, which is why
//! the trait is this small and this literal.
//!
//! Addresses are *unified*: a device pointer and a pinned host pointer are both a `u64`,
//! and [`Driver::memcpy`] infers the direction (CUDA's `cuMemcpyAsync` under UVA,
//! `hipMemcpyAsync(.., hipMemcpyDefault)`, `zeCommandListAppendMemoryCopy`).

use super::kernel::KernelSource;
use crate::dlpack::ffi::DLDeviceType;
use crate::dlpack::stream::StreamConvention;
use std::fmt;
use std::ptr::NonNull;

/// A stream (queue) handle in the runtime's own encoding (a `CUstream`, `hipStream_t`). The
/// runtime's special values (CUDA's legacy stream `1`) are valid handles too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StreamHandle(pub u64);

/// An event recorded on a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EventHandle(pub u64);

/// A loaded kernel entry point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FunctionHandle(pub u64);

/// What kind of failure a driver call reported: the backend maps it onto [`crate::Error`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DriverErrorKind {
    /// The allocation cannot be satisfied (CUDA_ERROR_OUT_OF_MEMORY).
    OutOfMemory,
    /// The device or its context is unusable from now on (illegal address, ECC error,
    /// launch failure, a removed device): sticky.
    DeviceLost,
    /// Anything else: a bad argument, a missing feature, a compile error.
    Other,
}

/// A failed driver call: which call, what kind, and the runtime's own words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverError {
    /// What kind of failure it is.
    pub kind: DriverErrorKind,
    /// The runtime function that failed (`cuMemAllocAsync`).
    pub call: &'static str,
    /// The runtime's error name and text (`CUDA_ERROR_OUT_OF_MEMORY: out of memory`).
    pub message: String,
}

impl DriverError {
    /// An error of `kind` from runtime function `call`, with the runtime's words.
    pub fn new(kind: DriverErrorKind, call: &'static str, message: impl Into<String>) -> Self {
        DriverError {
            kind,
            call,
            message: message.into(),
        }
    }
}

impl fmt::Display for DriverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} failed: {}", self.call, self.message)
    }
}

/// A driver call's result.
pub type DriverResult<T> = std::result::Result<T, DriverError>;

/// What the runtime says about one device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Marketing name (`NVIDIA H200`).
    pub name: String,
    /// The runtime's ordinal for the device (DLPack's `device_id`, JAX's local hardware id).
    pub ordinal: i32,
    /// Device memory in bytes.
    pub total_memory: u64,
    /// Threads per block the kernels may use (at least 256 is assumed by the generator).
    pub max_threads_per_block: u32,
    /// Largest grid in x.
    pub max_grid_x: u32,
    /// Multiprocessors (sizes the passes of long reductions).
    pub multiprocessors: u32,
}

/// How a runtime appears in DLPack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DriverDlpack {
    /// Device memory's device type (kDLCUDA, kDLROCM, kDLOneAPI).
    pub device: DLDeviceType,
    /// Pinned host memory's device type (kDLCUDAHost, kDLROCMHost), if the runtime has one.
    pub pinned_host: Option<DLDeviceType>,
    /// How the runtime numbers streams for `__dlpack__(stream=...)`.
    pub streams: StreamConvention,
}

/// One argument of a kernel launch, passed by value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelArg {
    /// A unified address (`T*` in the kernel).
    Ptr(u64),
    /// A 64-bit integer.
    U64(u64),
    /// A `struct` passed by value, laid out as the generated source declares it (only 8-byte
    /// fields, so no padding question arises).
    Struct(Vec<u64>),
}

/// Grid and block of a launch (1-D blocks; the grid may use y and z).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchDims {
    /// Blocks in x, y and z.
    pub grid: [u32; 3],
    /// Threads per block (one dimension).
    pub block: u32,
}

/// The calls the shared GPU backend makes. All work calls are asynchronous: they queue work on
/// `stream` and return; errors of the work itself surface at the next synchronising call.
///
/// Implementations never panic: a missing symbol, a lost device, a bad handle are
/// [`DriverError`]s. `device` is the backend's device index (`0..device_count()`).
pub trait Driver: Send + Sync + 'static {
    /// The runtime's short name (`cuda`, `rocm`): the backend's name and error prefix.
    fn runtime(&self) -> &'static str;
    /// `cuda 12.8`: JAX's DLPack rules read the runtime from it.
    fn platform_version(&self) -> String;
    /// The runtime's DLPack identity.
    fn dlpack(&self) -> DriverDlpack;
    /// Devices found at load time.
    fn device_count(&self) -> usize;
    /// What the runtime says about `device` (read once, when the backend is made).
    fn device_info(&self, device: usize) -> DeviceInfo;

    /// A new stream that does not synchronise with the runtime's default stream.
    fn stream_create(&self, device: usize) -> DriverResult<StreamHandle>;
    /// Waits for everything queued on `stream`.
    fn stream_synchronize(&self, device: usize, stream: StreamHandle) -> DriverResult<()>;
    /// Records a new event on `stream` (which may be a foreign or special stream).
    fn event_record(&self, device: usize, stream: StreamHandle) -> DriverResult<EventHandle>;
    /// Whether the work before `event` has finished (never blocks).
    fn event_query(&self, device: usize, event: EventHandle) -> DriverResult<bool>;
    /// Blocks until the work before `event` has finished.
    fn event_synchronize(&self, device: usize, event: EventHandle) -> DriverResult<()>;
    /// Releases `event` (the runtime defers this until it has passed).
    fn event_destroy(&self, device: usize, event: EventHandle);
    /// Makes later work on `stream` wait for `event` (of any device of this runtime).
    fn stream_wait_event(
        &self,
        device: usize,
        stream: StreamHandle,
        event: EventHandle,
    ) -> DriverResult<()>;

    /// Device memory, usable by work queued on `stream` after this call.
    fn mem_alloc(&self, device: usize, stream: StreamHandle, bytes: usize) -> DriverResult<u64>;
    /// Frees device memory after the work already queued on `stream`.
    fn mem_free(&self, device: usize, stream: StreamHandle, ptr: u64) -> DriverResult<()>;
    /// Page-locked host memory every device can reach at the same address (portable, not
    /// write-combined: the host reads it at full speed).
    fn host_alloc(&self, bytes: usize) -> DriverResult<NonNull<u8>>;
    /// Frees memory from [`host_alloc`](Driver::host_alloc); no queued work may still use it.
    ///
    /// # Safety
    /// `ptr` came from `host_alloc(bytes)` and is not used again.
    unsafe fn host_free(&self, ptr: NonNull<u8>, bytes: usize);
    /// Queues a copy of `bytes` between unified addresses (device or pinned host, on any
    /// device of this runtime).
    ///
    /// # Safety
    /// Both ranges must be valid until the copy has run; host memory must be pinned memory
    /// of this runtime.
    unsafe fn memcpy(
        &self,
        device: usize,
        stream: StreamHandle,
        dst: u64,
        src: u64,
        bytes: usize,
    ) -> DriverResult<()>;

    /// Compiles (or loads from the runtime's own cache) `source` for `device`.
    fn load_kernel(&self, device: usize, source: &KernelSource) -> DriverResult<FunctionHandle>;
    /// Queues `function` with `args`.
    ///
    /// # Safety
    /// `args` must match the kernel's signature, and every address in them must stay valid
    /// until the kernel has run.
    unsafe fn launch(
        &self,
        device: usize,
        stream: StreamHandle,
        function: FunctionHandle,
        dims: LaunchDims,
        args: &[KernelArg],
    ) -> DriverResult<()>;

    /// The device (backend index) owning device address `ptr`, if the runtime knows it
    /// (CUDA's `cuPointerGetAttribute(DEVICE_ORDINAL)`): checks imported DLPack pointers.
    fn device_of_pointer(&self, ptr: u64) -> Option<usize>;

    /// Queues `gemm` (column-major, strided-batched: cuBLAS's `cublasGemmStridedBatchedEx`)
    /// on `stream` through the runtime's BLAS library. `None` when the driver has no BLAS
    /// for it (no library found, or a dtype it lacks): the generated matmul kernel runs
    /// instead. f32 is computed in f32 (never TF32), f16 and bf16 accumulate in f32.
    ///
    /// # Safety
    /// The operands and the output must be valid for every element the descriptor
    /// addresses until the queued work has run.
    unsafe fn gemm(
        &self,
        _device: usize,
        _stream: StreamHandle,
        _gemm: &super::blas::Gemm,
    ) -> Option<DriverResult<()>> {
        None
    }

    /// The BLAS library `gemm` calls on `device` (its name or path), or why there is none
    /// (not found, turned off, refused on this device). Looks the library up if no matmul
    /// has yet.
    fn blas(&self, _device: usize) -> Result<String, String> {
        Err(format!("{} has no BLAS library", self.runtime()))
    }
}
