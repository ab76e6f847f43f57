//! tch-rs interop (feature `tch`): CPU and CUDA tensors cross without copies.
//!
//! tch has no DLPack (tch-rs PR #746 has been open since 2023), so this is the bridge:
//!
//! - [`Array::from_tch`] reads a tensor's memory in place (any sizes, strides and storage
//!   offset), keeping a shallow clone alive, on the `cpu` device or on the dlarray device of
//!   the tensor's CUDA device.
//! - [`Array::to_tch`] gives torch our memory in place. Unlike tch's `from_blob`, which has
//!   no deleter, the tensor is made by a small C++ shim (`blob.cpp`) with one: the torch
//!   storage itself keeps the array alive, so no torch view (`narrow`, `shallow_clone`, ...)
//!   can outlive the memory, and the tensor is a plain `tch::Tensor`.
//!
//! Every accessor goes through torch-sys with its error checked, so what tch's safe API
//! would panic on (an undefined tensor, a sparse layout, an unsigned kind tch cannot name)
//! is an [`Error::Interop`] here. torch tensors are writable: torch may write memory it got
//! from [`Array::to_tch`], and an array made by [`Array::from_tch`] sees torch's later
//! in-place writes, exactly as DLPack exchanges with PyTorch behave.
//!
//! CUDA hand-off: tch has no stream API, and torch's current stream is the legacy default
//! stream unless the caller changed it. Importing makes our stream wait for that stream;
//! exporting makes that stream wait for our pending writes.

use crate::array::Array;
use crate::array::foreign::{Strided, wrap};
use crate::dlpack::ffi::{DLDevice, DLDeviceType};
use crate::dlpack::stream::ExportSync;
use crate::dtype::DType;
use crate::error::{Error, Result};
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::Arc;
use torch_sys::C_tensor;

unsafe extern "C" {
    fn dlarray_tch_from_blob(
        data: *mut c_void,
        sizes: *const i64,
        strides: *const i64,
        ndim: usize,
        scalar_type: c_int,
        cuda_index: c_int,
        release: unsafe extern "C" fn(*mut c_void),
        ctx: *mut c_void,
        err: *mut *mut c_char,
    ) -> *mut c_void;
    fn dlarray_tch_free_error(err: *mut c_char);
}

fn err(message: impl Into<String>) -> Error {
    Error::Interop {
        library: "tch",
        message: message.into(),
    }
}

/// The message of a C error string from torch-sys or our shim, which it frees.
///
/// # Safety
/// `e` is NULL or a `malloc`ed NUL-terminated string nothing else frees.
unsafe fn take_error(e: *mut c_char) -> Option<String> {
    if e.is_null() {
        return None;
    }
    // SAFETY: per the contract, a live NUL-terminated string.
    let s = unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned();
    // SAFETY: torch-sys and the shim both allocate with malloc (strdup); ours frees with free.
    unsafe { dlarray_tch_free_error(e) };
    Some(s)
}

/// `v`, or the error torch-sys recorded for the call that produced it.
fn checked<T>(v: T) -> Result<T> {
    // SAFETY: torch-sys hands over a malloc'ed string (or NULL) and forgets it.
    match unsafe { take_error(torch_sys::get_and_reset_last_err()) } {
        None => Ok(v),
        Some(e) => Err(err(e)),
    }
}

/// c10's `ScalarType` numbering for our dtypes (`c10/core/ScalarType.h`).
fn scalar_type(d: DType) -> c_int {
    match d {
        DType::U8 => 0,
        DType::I8 => 1,
        DType::I16 => 2,
        DType::I32 => 3,
        DType::I64 => 4,
        DType::F16 => 5,
        DType::F32 => 6,
        DType::F64 => 7,
        DType::Complex64 => 9,
        DType::Complex128 => 10,
        DType::Bool => 11,
        DType::BF16 => 15,
        DType::U16 => 27,
        DType::U32 => 28,
        DType::U64 => 29,
    }
}

/// Our dtype for a c10 scalar type. torch's uint16/32/64 are read too, although tch has no
/// `Kind` for them.
fn dtype_of(code: c_int) -> Result<DType> {
    if let Some(d) = DType::ALL.into_iter().find(|&d| scalar_type(d) == code) {
        return Ok(d);
    }
    let name = match code {
        8 => "complex32 (ComplexHalf)",
        12 => "qint8",
        13 => "quint8",
        14 => "qint32",
        16 => "quint4x2",
        17 => "quint2x4",
        23 => "float8_e5m2",
        24 => "float8_e4m3fn",
        25 => "float8_e5m2fnuz",
        26 => "float8_e4m3fnuz",
        _ => "",
    };
    Err(err(if name.is_empty() {
        format!("torch scalar type {code} has no dlarray dtype")
    } else {
        format!("torch dtype {name} has no dlarray dtype")
    }))
}

/// Whether tch can name the kind of a tensor of `d` (its `Kind` has no unsigned types but
/// uint8, and `Tensor::kind()` panics on the others).
fn tch_has(d: DType) -> bool {
    !matches!(d, DType::U16 | DType::U32 | DType::U64)
}

/// A tensor kept alive as the owner of an array's memory.
struct TchOwner {
    _tensor: tch::Tensor,
}
// SAFETY: tch tensors are Send; the owner is never used through a shared reference, only
// dropped (which releases a reference count, thread-safe in torch).
unsafe impl Sync for TchOwner {}

/// The DLPack device of a tensor's memory, from torch-sys's device code.
fn tensor_device(code: c_int) -> Result<DLDevice> {
    match code {
        -1 => Ok(DLDevice::CPU),
        i if i >= 0 => Ok(DLDevice::new(DLDeviceType::kDLCUDA, i)),
        -2 => Err(err(
            "the tensor is on MPS or a device tch cannot name (XPU, meta, ...): only CPU and \
             CUDA tensors are exchanged",
        )),
        other => Err(err(format!(
            "the tensor is on a device tch reports as {other}: only CPU and CUDA tensors are \
             exchanged"
        ))),
    }
}

/// The host copy fallback (no raw address, several shards, negative strides): a row-major
/// copy on the `cpu` device.
fn host_copy(a: &Array) -> Result<Array> {
    let cpu = crate::backends::registry::find_device(|d| d.platform() == "cpu")
        .ok_or_else(|| err("no cpu device is available for the host copy"))?;
    crate::with_dtype!(a.dtype(), T => {
        let v = a.to_vec::<T>()?;
        Array::from_slice_on(&v, a.shape(), &cpu)
    })
}

/// Drops the `Arc<Array>` a torch storage held: torch's deleter, on whatever thread lets the
/// storage go.
unsafe extern "C" fn release(ctx: *mut c_void) {
    // A panic must not unwind into C++.
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: `ctx` came from `Arc::into_raw` in `to_tch`, and torch calls its deleter
        // exactly once.
        drop(unsafe { Arc::from_raw(ctx as *const Array) });
    });
}

impl Array {
    /// A tch tensor as an array without copying: CPU tensors land on the `cpu` device, CUDA
    /// tensors on the dlarray device of their CUDA device (after our stream waits for
    /// torch's legacy default stream). Any sizes, strides and storage offset; every kind
    /// both sides have (bool, the ints, f16, bf16, f32, f64, complex64/128, and torch's
    /// uint16/32/64). A shallow clone of the tensor keeps its storage alive. Undefined,
    /// sparse or MKL-DNN tensors, quantized and 8-bit float kinds, tensors with the
    /// conjugate or negative bit set, and other devices are an [`Error::Interop`].
    pub fn from_tch(t: &tch::Tensor) -> Result<Array> {
        let p = t.as_ptr() as *mut C_tensor;
        // SAFETY (every call on `p` below): `p` is a live tensor of `t`, borrowed for the
        // call; torch-sys catches C++ exceptions and records them for `checked`.
        if checked(unsafe { torch_sys::at_defined(p) })? == 0 {
            return Err(err("the tensor is undefined"));
        }
        if checked(unsafe { torch_sys::at_is_sparse(p) })? != 0 {
            return Err(err(
                "a sparse tensor has no strided memory: call to_dense() first",
            ));
        }
        if checked(unsafe { torch_sys::at_is_mkldnn(p) })? != 0 {
            return Err(err(
                "an MKL-DNN tensor has no strided memory: call to_dense() first",
            ));
        }
        let dtype = dtype_of(checked(unsafe { torch_sys::at_scalar_type(p) })?)?;
        if t.f_is_conj().map_err(|e| err(e.to_string()))? {
            return Err(err(
                "the tensor has its conjugate bit set: call resolve_conj() first",
            ));
        }
        if t.f_is_neg().map_err(|e| err(e.to_string()))? {
            return Err(err(
                "the tensor has its negative bit set: call resolve_neg() first",
            ));
        }
        let ndim = checked(unsafe { torch_sys::at_dim(p) })?;
        let (mut sizes, mut strides) = (vec![0i64; ndim], vec![0i64; ndim]);
        // SAFETY: both vectors hold `ndim` entries, as at_shape and at_stride write.
        checked(unsafe { torch_sys::at_shape(p, sizes.as_mut_ptr()) })?;
        checked(unsafe { torch_sys::at_stride(p, strides.as_mut_ptr()) })?;
        let data = checked(unsafe { torch_sys::at_data_ptr(p) })? as *const u8;
        let d = tensor_device(checked(unsafe { torch_sys::at_device(p) })?)?;
        let shape = sizes
            .iter()
            .map(|&s| usize::try_from(s).map_err(|_| err(format!("negative size {s}"))))
            .collect::<Result<Vec<_>>>()?;
        let strides = strides
            .iter()
            .map(|&s| isize::try_from(s).map_err(|_| err(format!("stride {s} overflows"))))
            .collect::<Result<Vec<_>>>()?;
        let (device, kind, host) = crate::dlpack::import::target_device(d).map_err(|e| {
            err(format!(
                "no dlarray device holds the tensor's memory ({}): {e}",
                d.device_type.name().unwrap_or("?")
            ))
        })?;
        let s = Strided {
            data,
            shape: &shape,
            strides: &strides,
            dtype,
        };
        let owner = Box::new(TchOwner {
            _tensor: t.shallow_clone(),
        });
        // SAFETY: `data` (already past the storage offset), sizes and strides are torch's own
        // view of its storage; the shallow clone moved into the owner keeps that storage
        // alive for as long as the array lives.
        let a = unsafe { wrap(s, &device, kind, host, owner) }?;
        if !host {
            // SAFETY: `None` names the producer's default stream, always live.
            unsafe { crate::dlpack::import::wait_for_producer(d, None) }?;
        }
        Ok(a)
    }

    /// The array as a tch tensor over the same memory: a single-device array in host memory
    /// or in CUDA device memory with non-negative strides goes over in place (torch's legacy
    /// default stream first waits for our pending writes); anything else (another device,
    /// several shards, negative strides) goes through a host copy. The torch storage holds a
    /// clone of the array and releases it when torch lets the storage go, so the tensor and
    /// every view of it may outlive `self`. A read-only array (one made from a candle tensor)
    /// goes over in place too: torch has no read-only tensors, so do not write through it.
    /// Dtypes tch cannot name (uint16/32/64) are an [`Error::Interop`]: cast first with
    /// `astype`.
    pub fn to_tch(&self) -> Result<tch::Tensor> {
        let dtype = self.dtype();
        if !tch_has(dtype) {
            return Err(err(format!(
                "tch has no kind for {dtype}: cast first (`astype`), e.g. to int64"
            )));
        }
        let in_place = self.single().and_then(|s| {
            let negative = s.layout.strides().iter().any(|&st| st < 0);
            let address = s.buffer.address();
            let cuda = crate::dlpack::device::dlpack_device_of(&s.device, s.memory_kind())
                .ok()
                .filter(|d| d.device_type == DLDeviceType::kDLCUDA)
                .map(|d| d.device_id);
            let host = address.host().is_some() && cuda.is_none();
            (!negative && (host || (cuda.is_some() && address.raw().is_some())))
                .then_some((address.raw()?, cuda))
        });
        let Some((base, cuda)) = in_place else {
            return host_copy(self)?.to_tch();
        };
        let s = self.single().ok_or_else(|| err("no single shard"))?;
        let sync = if cuda.is_some() {
            ExportSync::LegacyDefault
        } else {
            ExportSync::Wait
        };
        s.device.backend().dlpack_export_sync(&*s.buffer, sync)?;
        let data = base + s.layout.offset() * dtype.size_in_bytes();
        let sizes: Vec<i64> = s.layout.shape().iter().map(|&n| n as i64).collect();
        let strides: Vec<i64> = s.layout.strides().iter().map(|&st| st as i64).collect();
        let mine = Arc::new(self.clone());
        let ctx = Arc::into_raw(mine.clone()) as *mut c_void;
        let mut e: *mut c_char = std::ptr::null_mut();
        // SAFETY: `data` addresses every element the sizes and strides reach (the layout was
        // checked against the buffer); `ctx` is an `Arc<Array>` that keeps the buffer alive
        // until torch calls `release` on it, once. The shim catches every C++ exception.
        let t = unsafe {
            dlarray_tch_from_blob(
                data as *mut c_void,
                sizes.as_ptr(),
                strides.as_ptr(),
                sizes.len(),
                scalar_type(dtype),
                cuda.unwrap_or(-1),
                release,
                ctx,
                &mut e,
            )
        };
        if t.is_null() {
            // torch may or may not have run the deleter before it threw: if our clone is not
            // the only other reference, `ctx` is still ours to drop.
            if Arc::strong_count(&mine) == 2 {
                // SAFETY: torch did not take `ctx` (it would have released it).
                drop(unsafe { Arc::from_raw(ctx as *const Array) });
            }
            // SAFETY: the shim set `e` to a malloc'ed message (or left it NULL).
            let message = unsafe { take_error(e) }.unwrap_or_else(|| "from_blob failed".into());
            return Err(err(message));
        }
        // SAFETY: `t` is a heap `at::Tensor*`, which is what tch's `C_tensor` is; tch's
        // Tensor now owns and frees it.
        Ok(unsafe { tch::Tensor::from_ptr(t as *mut C_tensor) })
    }
}
