//! The CUDA driver API functions dlarray calls, loaded from `libcuda.so.1` at run time. No
//! logic: types, constants, and one table of function pointers, every one resolved when the
//! library is loaded, so a driver too old for one of them is "backend unavailable: ...
//! lacks cuX" at discovery instead of a panic at first use (cudarc resolves lazily and
//! panics, research §1.1 and §1.7, which is why this layer is our own).

use libloading::Library;
use std::ffi::{c_char, c_int, c_uint, c_void};

pub type CUresult = c_int;
pub type CUdevice = c_int;
pub type CUdeviceptr = u64;
pub type CUcontext = *mut c_void;
pub type CUstream = *mut c_void;
pub type CUevent = *mut c_void;
pub type CUmodule = *mut c_void;
pub type CUfunction = *mut c_void;

pub const CUDA_SUCCESS: CUresult = 0;
pub const CUDA_ERROR_NOT_READY: CUresult = 600;
pub const CU_STREAM_NON_BLOCKING: c_uint = 1;
pub const CU_EVENT_DISABLE_TIMING: c_uint = 2;
pub const CU_MEMHOSTALLOC_PORTABLE: c_uint = 1;
pub const CU_MEMHOSTALLOC_DEVICEMAP: c_uint = 2;
pub const CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: c_int = 9;

/// `CUdevice_attribute` values used.
pub mod attr {
    use std::ffi::c_int;
    pub const MAX_THREADS_PER_BLOCK: c_int = 1;
    pub const MAX_GRID_DIM_X: c_int = 5;
    pub const MULTIPROCESSOR_COUNT: c_int = 16;
    pub const UNIFIED_ADDRESSING: c_int = 41;
    pub const COMPUTE_CAPABILITY_MAJOR: c_int = 75;
    pub const COMPUTE_CAPABILITY_MINOR: c_int = 76;
    pub const MEMORY_POOLS_SUPPORTED: c_int = 115;
}

macro_rules! cuda_fns {
    ($($field:ident : $sym:literal => fn($($arg:ty),*);)*) => {
        /// The loaded driver: every function dlarray calls.
        pub struct Lib {
            $(pub $field: unsafe extern "C" fn($($arg),*) -> CUresult,)*
            _lib: Library,
        }
        impl Lib {
            /// Loads `libcuda.so.1` (or `path`) and resolves every function.
            pub fn load(path: &str) -> Result<Lib, String> {
                // SAFETY: loading the driver runs its initialisers, which have no
                // preconditions.
                let lib = unsafe { Library::new(path) }.map_err(|e| {
                    format!("{path} not found (no NVIDIA driver installed): {e}")
                })?;
                $(
                    // SAFETY: the symbol has the C signature of the CUDA driver API's header,
                    // which is the field's type.
                    let $field = *unsafe { lib.get(concat!($sym, "\0").as_bytes()) }.map_err(|_| {
                        format!("the NVIDIA driver at {path} lacks {} (driver too old)", $sym)
                    })?;
                )*
                Ok(Lib { $($field,)* _lib: lib })
            }
        }
    };
}

cuda_fns! {
    init: "cuInit" => fn(c_uint);
    driver_get_version: "cuDriverGetVersion" => fn(*mut c_int);
    device_get_count: "cuDeviceGetCount" => fn(*mut c_int);
    device_get: "cuDeviceGet" => fn(*mut CUdevice, c_int);
    device_get_name: "cuDeviceGetName" => fn(*mut c_char, c_int, CUdevice);
    device_total_mem: "cuDeviceTotalMem_v2" => fn(*mut usize, CUdevice);
    device_get_attribute: "cuDeviceGetAttribute" => fn(*mut c_int, c_int, CUdevice);
    primary_ctx_retain: "cuDevicePrimaryCtxRetain" => fn(*mut CUcontext, CUdevice);
    primary_ctx_release: "cuDevicePrimaryCtxRelease_v2" => fn(CUdevice);
    ctx_set_current: "cuCtxSetCurrent" => fn(CUcontext);
    stream_create: "cuStreamCreate" => fn(*mut CUstream, c_uint);
    stream_destroy: "cuStreamDestroy_v2" => fn(CUstream);
    stream_synchronize: "cuStreamSynchronize" => fn(CUstream);
    stream_wait_event: "cuStreamWaitEvent" => fn(CUstream, CUevent, c_uint);
    event_create: "cuEventCreate" => fn(*mut CUevent, c_uint);
    event_record: "cuEventRecord" => fn(CUevent, CUstream);
    event_query: "cuEventQuery" => fn(CUevent);
    event_synchronize: "cuEventSynchronize" => fn(CUevent);
    event_destroy: "cuEventDestroy_v2" => fn(CUevent);
    mem_alloc: "cuMemAlloc_v2" => fn(*mut CUdeviceptr, usize);
    mem_free: "cuMemFree_v2" => fn(CUdeviceptr);
    mem_alloc_async: "cuMemAllocAsync" => fn(*mut CUdeviceptr, usize, CUstream);
    mem_free_async: "cuMemFreeAsync" => fn(CUdeviceptr, CUstream);
    mem_host_alloc: "cuMemHostAlloc" => fn(*mut *mut c_void, usize, c_uint);
    mem_free_host: "cuMemFreeHost" => fn(*mut c_void);
    memcpy_async: "cuMemcpyAsync" => fn(CUdeviceptr, CUdeviceptr, usize, CUstream);
    module_load_data: "cuModuleLoadData" => fn(*mut CUmodule, *const c_void);
    module_unload: "cuModuleUnload" => fn(CUmodule);
    module_get_function: "cuModuleGetFunction" => fn(*mut CUfunction, CUmodule, *const c_char);
    launch_kernel: "cuLaunchKernel" => fn(
        CUfunction, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, CUstream,
        *mut *mut c_void, *mut *mut c_void
    );
    pointer_get_attribute: "cuPointerGetAttribute" => fn(*mut c_void, c_int, CUdeviceptr);
    get_error_name: "cuGetErrorName" => fn(CUresult, *mut *const c_char);
    get_error_string: "cuGetErrorString" => fn(CUresult, *mut *const c_char);
}
