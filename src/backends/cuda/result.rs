//! CUDA status codes as [`DriverError`]s: the name and text the driver gives, and the kind
//! the runtime maps onto `OutOfMemory` / `DeviceLost` / a backend error.

use super::sys::{CUDA_SUCCESS, CUresult, Lib};
use crate::backends::gpu::{DriverError, DriverErrorKind, DriverResult};
use std::ffi::{CStr, c_char};

/// Codes after which the context is unusable (CUDA's "sticky" errors) or the device gone.
const LOST: [CUresult; 12] = [
    4,   // CUDA_ERROR_DEINITIALIZED
    46,  // CUDA_ERROR_DEVICE_UNAVAILABLE
    214, // CUDA_ERROR_ECC_UNCORRECTABLE
    700, // CUDA_ERROR_ILLEGAL_ADDRESS
    702, // CUDA_ERROR_LAUNCH_TIMEOUT
    714, // CUDA_ERROR_HARDWARE_STACK_ERROR
    715, // CUDA_ERROR_ILLEGAL_INSTRUCTION
    716, // CUDA_ERROR_MISALIGNED_ADDRESS
    717, // CUDA_ERROR_INVALID_ADDRESS_SPACE
    718, // CUDA_ERROR_INVALID_PC
    719, // CUDA_ERROR_LAUNCH_FAILED
    999, // CUDA_ERROR_UNKNOWN
];

/// The kind of failure a status code means.
pub fn classify(code: CUresult) -> DriverErrorKind {
    match code {
        2 => DriverErrorKind::OutOfMemory,
        c if LOST.contains(&c) => DriverErrorKind::DeviceLost,
        _ => DriverErrorKind::Other,
    }
}

fn text(
    f: unsafe extern "C" fn(CUresult, *mut *const c_char) -> CUresult,
    code: CUresult,
) -> String {
    let mut p: *const c_char = std::ptr::null();
    // SAFETY: a valid out-pointer; the driver returns a static string or an error.
    if unsafe { f(code, &mut p) } != CUDA_SUCCESS || p.is_null() {
        return format!("CUDA error {code}");
    }
    // SAFETY: a NUL-terminated static string of the driver.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// `Ok` for `CUDA_SUCCESS`, else the error of `call`.
pub fn check(lib: &Lib, call: &'static str, code: CUresult) -> DriverResult<()> {
    if code == CUDA_SUCCESS {
        return Ok(());
    }
    Err(DriverError::new(
        classify(code),
        call,
        format!(
            "{}: {}",
            text(lib.get_error_name, code),
            text(lib.get_error_string, code)
        ),
    ))
}
