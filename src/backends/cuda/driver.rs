//! [`CudaDriver`]: the shared GPU runtime's [`Driver`] over the CUDA driver API (`sys`,
//! `result`) and NVRTC. Every call makes the device's primary context current first (the
//! context PyTorch and CuPy use too), since drops arrive on any thread.

use super::cublas::Cublas;
use super::result::check;
use super::sys::{self, CUcontext, CUdevice, CUmodule, Lib, attr};
use crate::backends::gpu::nvrtc::Nvrtc;
use crate::backends::gpu::{
    DeviceInfo, Driver, DriverDlpack, DriverError, DriverErrorKind, DriverResult, EventHandle,
    FunctionHandle, KernelArg, KernelSource, LaunchDims, StreamHandle,
};
use crate::dlpack::ffi::DLDeviceType;
use crate::dlpack::stream::StreamConvention;
use std::ffi::{CString, c_int, c_void};
use std::ptr::NonNull;
use std::sync::{Mutex, OnceLock};

struct Dev {
    device: CUdevice,
    ctx: CUcontext,
    info: DeviceInfo,
    /// `compute_XY` for NVRTC.
    arch: String,
    /// Stream-ordered allocation (`cuMemAllocAsync`) is supported.
    pools: bool,
}

/// The CUDA driver, its devices' primary contexts, and NVRTC.
pub struct CudaDriver {
    lib: Lib,
    nvrtc: Result<Nvrtc, String>,
    devices: Vec<Dev>,
    /// `cuDriverGetVersion`: 12080 for 12.8.
    version: i32,
    modules: Mutex<Vec<(usize, CUmodule)>>,
    /// cuBLAS, loaded at the first matmul.
    cublas: OnceLock<Result<Cublas, String>>,
    /// Per device: its cuBLAS handle.
    blas_handles: Mutex<Vec<BlasHandle>>,
}

/// A device's cuBLAS handle: not made yet, made (an address), or refused (cuBLAS could not
/// make one, or refused a call): the generated kernel serves that device.
#[derive(Clone, Copy)]
enum BlasHandle {
    Unmade,
    Made(usize),
    Refused,
}

// SAFETY: CUDA contexts, modules and the driver's function table may be used from any
// thread; each call makes the right context current on the calling thread first.
unsafe impl Send for CudaDriver {}
// SAFETY: as above.
unsafe impl Sync for CudaDriver {}

fn other(call: &'static str, msg: impl Into<String>) -> DriverError {
    DriverError::new(DriverErrorKind::Other, call, msg)
}

impl CudaDriver {
    /// cuBLAS, loaded on first use, or why it is not there.
    fn cublas(&self) -> Result<&Cublas, &String> {
        self.cublas
            .get_or_init(|| match std::env::var("DLARRAY_CUDA_BLAS").as_deref() {
                // The generated kernel for every matmul: A/B runs against cuBLAS.
                Ok("0") => Err("cuBLAS disabled by DLARRAY_CUDA_BLAS=0".into()),
                _ => Cublas::load(),
            })
            .as_ref()
    }

    /// Initialises the driver and retains each device's primary context.
    pub fn new(lib: Lib, nvrtc: Result<Nvrtc, String>) -> Result<CudaDriver, String> {
        let ok = |call, code| check(&lib, call, code).map_err(|e| e.to_string());
        // SAFETY: plain calls with valid out-pointers, in the order the driver requires.
        unsafe {
            ok("cuInit", (lib.init)(0))?;
            let mut version = 0;
            ok("cuDriverGetVersion", (lib.driver_get_version)(&mut version))?;
            let mut n = 0;
            ok("cuDeviceGetCount", (lib.device_get_count)(&mut n))?;
            if n <= 0 {
                return Err("the NVIDIA driver reports no CUDA devices".into());
            }
            let mut devices = Vec::new();
            for ordinal in 0..n {
                let mut device = 0;
                ok("cuDeviceGet", (lib.device_get)(&mut device, ordinal))?;
                let get = |a: c_int| {
                    let mut v = 0;
                    ok(
                        "cuDeviceGetAttribute",
                        (lib.device_get_attribute)(&mut v, a, device),
                    )
                    .map(|_| v)
                };
                if get(attr::UNIFIED_ADDRESSING)? == 0 {
                    return Err(format!("CUDA device {ordinal} lacks unified addressing"));
                }
                let mut name = [0 as std::ffi::c_char; 256];
                ok(
                    "cuDeviceGetName",
                    (lib.device_get_name)(name.as_mut_ptr(), 255, device),
                )?;
                let name = std::ffi::CStr::from_ptr(name.as_ptr())
                    .to_string_lossy()
                    .into_owned();
                let mut total = 0usize;
                ok(
                    "cuDeviceTotalMem",
                    (lib.device_total_mem)(&mut total, device),
                )?;
                let mut ctx = std::ptr::null_mut();
                ok(
                    "cuDevicePrimaryCtxRetain",
                    (lib.primary_ctx_retain)(&mut ctx, device),
                )?;
                let (major, minor) = (
                    get(attr::COMPUTE_CAPABILITY_MAJOR)?,
                    get(attr::COMPUTE_CAPABILITY_MINOR)?,
                );
                devices.push(Dev {
                    device,
                    ctx,
                    info: DeviceInfo {
                        name,
                        ordinal,
                        total_memory: total as u64,
                        max_threads_per_block: get(attr::MAX_THREADS_PER_BLOCK)? as u32,
                        max_grid_x: get(attr::MAX_GRID_DIM_X)? as u32,
                        multiprocessors: get(attr::MULTIPROCESSOR_COUNT)? as u32,
                    },
                    arch: format!("--gpu-architecture=compute_{major}{minor}"),
                    pools: get(attr::MEMORY_POOLS_SUPPORTED)? != 0,
                });
            }
            // NVRTC newer than the driver makes PTX the driver rejects at load time.
            let nvrtc = nvrtc.and_then(|n| {
                if n.version.0 * 1000 + n.version.1 * 10 > version {
                    Err(format!(
                        "NVRTC {}.{} ({}) is newer than the driver's CUDA {}.{}: its PTX would not load",
                        n.version.0,
                        n.version.1,
                        n.path,
                        version / 1000,
                        version % 1000 / 10
                    ))
                } else {
                    Ok(n)
                }
            });
            let blas_handles = Mutex::new(vec![BlasHandle::Unmade; devices.len()]);
            Ok(CudaDriver {
                lib,
                nvrtc,
                devices,
                version,
                modules: Mutex::new(Vec::new()),
                cublas: OnceLock::new(),
                blas_handles,
            })
        }
    }

    fn dev(&self, device: usize, call: &'static str) -> DriverResult<&Dev> {
        let d = self
            .devices
            .get(device)
            .ok_or_else(|| other(call, format!("no CUDA device {device}")))?;
        // SAFETY: a context retained in `new` and released only in `drop`.
        check(&self.lib, "cuCtxSetCurrent", unsafe {
            (self.lib.ctx_set_current)(d.ctx)
        })?;
        Ok(d)
    }

    fn ok(&self, call: &'static str, code: sys::CUresult) -> DriverResult<()> {
        check(&self.lib, call, code)
    }
}

impl Drop for CudaDriver {
    fn drop(&mut self) {
        let modules = std::mem::take(&mut *self.modules.lock().unwrap_or_else(|e| e.into_inner()));
        for (device, m) in modules {
            if self.dev(device, "cuModuleUnload").is_ok() {
                // SAFETY: a module loaded by `load_kernel`, unloaded once.
                unsafe { (self.lib.module_unload)(m) };
            }
        }
        for d in &self.devices {
            // SAFETY: retained once in `new`.
            unsafe { (self.lib.primary_ctx_release)(d.device) };
        }
    }
}

impl Driver for CudaDriver {
    fn runtime(&self) -> &'static str {
        "cuda"
    }
    fn platform_version(&self) -> String {
        format!("cuda {}.{}", self.version / 1000, self.version % 1000 / 10)
    }
    fn dlpack(&self) -> DriverDlpack {
        DriverDlpack {
            device: DLDeviceType::kDLCUDA,
            pinned_host: Some(DLDeviceType::kDLCUDAHost),
            streams: StreamConvention::Cuda,
        }
    }
    fn device_count(&self) -> usize {
        self.devices.len()
    }
    fn device_info(&self, device: usize) -> DeviceInfo {
        self.devices[device.min(self.devices.len() - 1)]
            .info
            .clone()
    }
    fn stream_create(&self, device: usize) -> DriverResult<StreamHandle> {
        self.dev(device, "cuStreamCreate")?;
        let mut s = std::ptr::null_mut();
        // SAFETY: valid out-pointer; the context is current.
        self.ok("cuStreamCreate", unsafe {
            (self.lib.stream_create)(&mut s, sys::CU_STREAM_NON_BLOCKING)
        })?;
        Ok(StreamHandle(s as u64))
    }
    fn stream_synchronize(&self, device: usize, stream: StreamHandle) -> DriverResult<()> {
        self.dev(device, "cuStreamSynchronize")?;
        // SAFETY: a stream handle of this context (or a special handle).
        self.ok("cuStreamSynchronize", unsafe {
            (self.lib.stream_synchronize)(stream.0 as _)
        })
    }
    fn event_record(&self, device: usize, stream: StreamHandle) -> DriverResult<EventHandle> {
        self.dev(device, "cuEventRecord")?;
        let mut e = std::ptr::null_mut();
        // SAFETY: valid out-pointer; the context is current.
        self.ok("cuEventCreate", unsafe {
            (self.lib.event_create)(&mut e, sys::CU_EVENT_DISABLE_TIMING)
        })?;
        // SAFETY: a fresh event and a live stream.
        let r = self.ok("cuEventRecord", unsafe {
            (self.lib.event_record)(e, stream.0 as _)
        });
        if let Err(err) = r {
            // SAFETY: created above, destroyed once.
            unsafe { (self.lib.event_destroy)(e) };
            return Err(err);
        }
        Ok(EventHandle(e as u64))
    }
    fn event_query(&self, device: usize, event: EventHandle) -> DriverResult<bool> {
        self.dev(device, "cuEventQuery")?;
        // SAFETY: a live event.
        match unsafe { (self.lib.event_query)(event.0 as _) } {
            sys::CUDA_ERROR_NOT_READY => Ok(false),
            code => self.ok("cuEventQuery", code).map(|()| true),
        }
    }
    fn event_synchronize(&self, device: usize, event: EventHandle) -> DriverResult<()> {
        self.dev(device, "cuEventSynchronize")?;
        // SAFETY: a live event.
        self.ok("cuEventSynchronize", unsafe {
            (self.lib.event_synchronize)(event.0 as _)
        })
    }
    fn event_destroy(&self, device: usize, event: EventHandle) {
        if self.dev(device, "cuEventDestroy").is_ok() {
            // SAFETY: a live event, destroyed once (the driver defers it past pending work).
            unsafe { (self.lib.event_destroy)(event.0 as _) };
        }
    }
    fn stream_wait_event(
        &self,
        device: usize,
        stream: StreamHandle,
        event: EventHandle,
    ) -> DriverResult<()> {
        self.dev(device, "cuStreamWaitEvent")?;
        // SAFETY: a live event; the stream is ours, special, or the consumer's live stream.
        self.ok("cuStreamWaitEvent", unsafe {
            (self.lib.stream_wait_event)(stream.0 as _, event.0 as _, 0)
        })
    }
    fn mem_alloc(&self, device: usize, stream: StreamHandle, bytes: usize) -> DriverResult<u64> {
        let d = self.dev(device, "cuMemAlloc")?;
        let mut p = 0u64;
        if d.pools {
            // SAFETY: valid out-pointer; a stream of this context.
            self.ok("cuMemAllocAsync", unsafe {
                (self.lib.mem_alloc_async)(&mut p, bytes.max(1), stream.0 as _)
            })?;
        } else {
            // SAFETY: valid out-pointer.
            self.ok("cuMemAlloc", unsafe {
                (self.lib.mem_alloc)(&mut p, bytes.max(1))
            })?;
        }
        Ok(p)
    }
    fn mem_free(&self, device: usize, stream: StreamHandle, ptr: u64) -> DriverResult<()> {
        let d = self.dev(device, "cuMemFree")?;
        if d.pools {
            // SAFETY: memory from `mem_alloc`, freed once, after the stream's queued work.
            self.ok("cuMemFreeAsync", unsafe {
                (self.lib.mem_free_async)(ptr, stream.0 as _)
            })
        } else {
            // SAFETY: as above; `cuMemFree` waits for the device to finish with it.
            self.ok("cuMemFree", unsafe { (self.lib.mem_free)(ptr) })
        }
    }
    fn host_alloc(&self, bytes: usize) -> DriverResult<NonNull<u8>> {
        self.dev(0, "cuMemHostAlloc")?;
        let mut p: *mut c_void = std::ptr::null_mut();
        let flags = sys::CU_MEMHOSTALLOC_PORTABLE | sys::CU_MEMHOSTALLOC_DEVICEMAP;
        // SAFETY: valid out-pointer. Portable and mapped, not write-combined: the host reads
        // this memory at full speed.
        self.ok("cuMemHostAlloc", unsafe {
            (self.lib.mem_host_alloc)(&mut p, bytes.max(1), flags)
        })?;
        NonNull::new(p as *mut u8).ok_or_else(|| other("cuMemHostAlloc", "returned NULL"))
    }
    unsafe fn host_free(&self, ptr: NonNull<u8>, _bytes: usize) {
        if self.dev(0, "cuMemFreeHost").is_ok() {
            // SAFETY: the caller passes memory from `host_alloc`, once.
            unsafe { (self.lib.mem_free_host)(ptr.as_ptr() as _) };
        }
    }
    unsafe fn memcpy(
        &self,
        device: usize,
        stream: StreamHandle,
        dst: u64,
        src: u64,
        bytes: usize,
    ) -> DriverResult<()> {
        self.dev(device, "cuMemcpyAsync")?;
        // SAFETY: the caller keeps both unified ranges valid until the copy has run.
        self.ok("cuMemcpyAsync", unsafe {
            (self.lib.memcpy_async)(dst, src, bytes, stream.0 as _)
        })
    }
    fn load_kernel(&self, device: usize, source: &KernelSource) -> DriverResult<FunctionHandle> {
        let d = self.dev(device, "cuModuleLoadData")?;
        let nvrtc = self
            .nvrtc
            .as_ref()
            .map_err(|e| other("nvrtcCompileProgram", format!("no usable NVRTC: {e}")))?;
        let mut ptx = nvrtc
            .compile(&source.source, &format!("{}.cu", source.entry), &[&d.arch])
            .map_err(|e| other("nvrtcCompileProgram", e))?;
        if ptx.last() != Some(&0) {
            ptx.push(0);
        }
        let mut m = std::ptr::null_mut();
        // SAFETY: NUL-terminated PTX; the context is current.
        self.ok("cuModuleLoadData", unsafe {
            (self.lib.module_load_data)(&mut m, ptx.as_ptr() as _)
        })?;
        self.modules
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((device, m));
        let name = CString::new(source.entry.as_str())
            .map_err(|_| other("cuModuleGetFunction", "NUL in name"))?;
        let mut f = std::ptr::null_mut();
        // SAFETY: a loaded module and a NUL-terminated name.
        self.ok("cuModuleGetFunction", unsafe {
            (self.lib.module_get_function)(&mut f, m, name.as_ptr())
        })?;
        Ok(FunctionHandle(f as u64))
    }
    unsafe fn launch(
        &self,
        device: usize,
        stream: StreamHandle,
        function: FunctionHandle,
        dims: LaunchDims,
        args: &[KernelArg],
    ) -> DriverResult<()> {
        self.dev(device, "cuLaunchKernel")?;
        // Scalars first (their storage must not move once pointed at), then the pointers.
        let scalars: Vec<u64> = args
            .iter()
            .map(|a| match a {
                KernelArg::Ptr(v) | KernelArg::U64(v) => *v,
                KernelArg::Struct(_) => 0,
            })
            .collect();
        let mut params: Vec<*mut c_void> = args
            .iter()
            .zip(&scalars)
            .map(|(a, s)| match a {
                KernelArg::Struct(w) => w.as_ptr() as *mut c_void,
                _ => s as *const u64 as *mut c_void,
            })
            .collect();
        let [gx, gy, gz] = dims.grid;
        // SAFETY: the caller guarantees the arguments match the kernel's signature; each
        // parameter pointer points at storage alive for this call (CUDA copies the values).
        self.ok("cuLaunchKernel", unsafe {
            (self.lib.launch_kernel)(
                function.0 as _,
                gx,
                gy,
                gz,
                dims.block,
                1,
                1,
                0,
                stream.0 as _,
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        })
    }
    unsafe fn gemm(
        &self,
        device: usize,
        stream: StreamHandle,
        g: &crate::backends::gpu::blas::Gemm,
    ) -> Option<DriverResult<()>> {
        let blas = self.cublas().ok()?;
        if let Err(e) = self.dev(device, "cublasGemmStridedBatchedEx") {
            return Some(Err(e));
        }
        // Held across the call: a handle is not to be used by two threads at once.
        let mut handles = self.blas_handles.lock().unwrap_or_else(|e| e.into_inner());
        let handle = match handles[device] {
            BlasHandle::Made(h) => h,
            BlasHandle::Refused => return None,
            BlasHandle::Unmade => match blas.create() {
                Ok(h) => {
                    handles[device] = BlasHandle::Made(h);
                    h
                }
                Err(_) => {
                    handles[device] = BlasHandle::Refused;
                    return None;
                }
            },
        };
        // SAFETY: the handle was made in this device's context, which `dev` made current,
        // and the lock keeps other threads off it; the caller's contract for the memory.
        match unsafe { blas.gemm(handle, stream.0, g) } {
            // cuBLAS refuses a call before queueing anything (a status, not a fault): the
            // generated kernel serves this device from now on.
            Err(e) if e.kind == DriverErrorKind::Other => {
                handles[device] = BlasHandle::Refused;
                None
            }
            r => Some(r),
        }
    }
    fn blas(&self, device: usize) -> Result<String, String> {
        let blas = self.cublas().map_err(Clone::clone)?;
        let handles = self.blas_handles.lock().unwrap_or_else(|e| e.into_inner());
        match handles.get(device) {
            Some(BlasHandle::Refused) => Err(format!(
                "cuBLAS ({}) refused a handle or a call on this device",
                blas.path
            )),
            _ => Ok(format!("cuBLAS ({})", blas.path)),
        }
    }
    fn device_of_pointer(&self, ptr: u64) -> Option<usize> {
        self.dev(0, "cuPointerGetAttribute").ok()?;
        let mut ordinal: c_int = -1;
        // SAFETY: a valid out-pointer of the attribute's type (int).
        let code = unsafe {
            (self.lib.pointer_get_attribute)(
                &mut ordinal as *mut c_int as _,
                sys::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                ptr,
            )
        };
        if code != sys::CUDA_SUCCESS {
            return None;
        }
        self.devices.iter().position(|d| d.info.ordinal == ordinal)
    }
}
