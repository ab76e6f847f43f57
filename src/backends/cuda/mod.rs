//! The CUDA backend (feature `cuda`): the shared GPU runtime (`backends::gpu`) over the CUDA
//! driver API and NVRTC, both loaded at run time: building needs no CUDA toolkit, and a
//! machine without a driver reports `backend unavailable: <reason>` in milliseconds.
//!
//! # Contract
//! - Devices `cuda:N`, platform `gpu`, platform version `cuda <driver version>` (so JAX's
//!   DLPack rules give kDLCUDA), local hardware id = the CUDA ordinal.
//! - Memory kinds `device` (stream-ordered `cuMemAllocAsync` under the runtime's caching
//!   pool) and `pinned_host` (`cuMemHostAlloc`, portable and mapped, not write-combined).
//! - One non-blocking compute stream per device, in the device's primary context (the one
//!   PyTorch uses); downloads on a second stream; cross-device use ordered by events.
//! - DLPack: device memory is kDLCUDA with CUDA's stream numbering (None and 1: legacy
//!   default stream, 2: per-thread, 0 refused, else a `cudaStream_t`); pinned memory is
//!   kDLCUDAHost. Imports of kDLCUDA memory are read in place, and the producer's deleter
//!   runs after our last queued use.
//! - Kernels: generated CUDA C (`gpu::codegen`), compiled by NVRTC for the device's compute
//!   capability on first use and cached per device. Without a usable NVRTC (absent, or newer
//!   than the driver) memory and copies work and every kernel is a clear error.
//!
//! # Where the libraries are found
//! The driver: `DLARRAY_CUDA_DRIVER`, else `libcuda.so.1` on the loader's path. NVRTC: see
//! `gpu::nvrtc` (`DLARRAY_NVRTC`, `DLARRAY_CUDA_LIBS`, `CUDA_PATH`, `/usr/local/cuda`, the
//! active venv's `nvidia` wheels). cuBLAS (`libcublas.so.13`/`.12`): the same folders, at the
//! first matmul; without it the generated tiled kernel multiplies.
//! - Matmul: cuBLAS's strided-batched GEMM for f16, bf16, f32 (no TF32), f64 and complex
//!   operands whose matrices are row- or column-major with one batch stride
//!   (`gpu::blas`); the generated kernel for every other dtype and layout.

#![warn(missing_docs)]

mod cublas;
mod driver;
mod result;
mod sys;

pub use driver::CudaDriver;

use super::Backend;
use super::gpu::nvrtc::Nvrtc;
use super::gpu::{GpuBackend, PoolLimits};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

/// How long discovery waits for the driver (`DLARRAY_CUDA_TIMEOUT` seconds, default 20): a
/// wedged driver can block `cuInit` indefinitely.
fn timeout() -> Duration {
    let secs = std::env::var("DLARRAY_CUDA_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(20);
    Duration::from_secs(secs)
}

/// Loads the driver, initialises it and makes the backend, on a thread of its own under a
/// time limit; every failure is a reason, never a panic.
pub(crate) fn discover() -> Result<Arc<dyn Backend>, String> {
    let path = std::env::var("DLARRAY_CUDA_DRIVER").unwrap_or_else(|_| "libcuda.so.1".into());
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("dlarray-cuda-discovery".into())
        .spawn(move || {
            let made = std::panic::catch_unwind(|| {
                let lib = sys::Lib::load(&path)?;
                let driver = CudaDriver::new(lib, Nvrtc::load())?;
                GpuBackend::new(driver, PoolLimits::default())
            })
            .unwrap_or_else(|p| {
                Err(format!(
                    "discovery panicked: {}",
                    crate::error::panic_message(&p)
                ))
            });
            let _ = tx.send(made);
        });
    if let Err(e) = spawned {
        return Err(format!("cannot start the discovery thread: {e}"));
    }
    match rx.recv_timeout(timeout()) {
        Ok(made) => made.map(|b| Arc::new(b) as Arc<dyn Backend>),
        Err(_) => Err(format!(
            "the CUDA driver did not initialise within {} s (DLARRAY_CUDA_TIMEOUT)",
            timeout().as_secs()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::result::classify;
    use crate::backends::gpu::DriverErrorKind;

    #[test]
    fn a_missing_driver_is_a_reason() {
        let e = super::sys::Lib::load("/nonexistent/libcuda.so.1")
            .err()
            .unwrap();
        assert!(e.contains("not found"), "{e}");
        // A library without the driver's symbols: the first one missing is named.
        let e = super::sys::Lib::load("libm.so.6").err().unwrap();
        assert!(e.contains("lacks cuInit"), "{e}");
    }

    #[test]
    fn status_codes_map_onto_error_kinds() {
        assert_eq!(classify(2), DriverErrorKind::OutOfMemory);
        assert_eq!(classify(700), DriverErrorKind::DeviceLost);
        assert_eq!(classify(719), DriverErrorKind::DeviceLost);
        assert_eq!(classify(1), DriverErrorKind::Other);
    }
}
