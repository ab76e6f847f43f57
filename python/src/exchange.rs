//! The DLPack 1.3 C exchange API: a static function table on the `Array` type
//! (`__dlpack_c_exchange_api__`, a capsule named `dlpack_exchange_api`), so C-level consumers
//! skip the Python-level `__dlpack__` call and the capsule; and `from_dlpack` uses a
//! producer's table (PyTorch 2.13 has one) when its type carries it.
//!
//! Every function returns 0 on success and -1 with a Python exception set (or, for the
//! allocator, after calling `SetError`); none unwinds across the C boundary.

use crate::array::PyArray;
use dlarray::dlpack::ffi::{DLManagedTensorVersioned, DLPackVersion, DLTensor};
use dlarray::{Array, DLDevice, DType, ExportOptions, RawDLPack, Sharding};
use pyo3::exceptions::PyBufferError;
use pyo3::ffi;
use pyo3::prelude::*;
use std::ffi::{CStr, CString, c_char, c_int, c_void};

type SetError = unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char);

/// Runs an exchange-API entry point: a panic inside dlarray becomes `on_panic()`'s return
/// value (which reports it) instead of unwinding into C, which would abort the interpreter.
fn ffi_guard(body: impl FnOnce() -> c_int, on_panic: impl FnOnce(String) -> c_int) -> c_int {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(rc) => rc,
        Err(p) => {
            let msg = dlarray::error::panic_message(&*p);
            on_panic(format!("internal error in dlarray (please report): {msg}"))
        }
    }
}

/// Reports a panic of a Python-facing entry point as a RuntimeError.
fn py_panic(msg: String) -> c_int {
    Python::attach(|py| pyo3::exceptions::PyRuntimeError::new_err(msg).restore(py));
    -1
}

#[repr(C)]
pub struct ExchangeApiHeader {
    pub version: DLPackVersion,
    pub prev_api: *mut ExchangeApiHeader,
}

#[repr(C)]
pub struct ExchangeApi {
    pub header: ExchangeApiHeader,
    pub managed_tensor_allocator: Option<
        unsafe extern "C" fn(
            *mut DLTensor,
            *mut *mut DLManagedTensorVersioned,
            *mut c_void,
            Option<SetError>,
        ) -> c_int,
    >,
    pub managed_tensor_from_py_object_no_sync:
        Option<unsafe extern "C" fn(*mut c_void, *mut *mut DLManagedTensorVersioned) -> c_int>,
    pub managed_tensor_to_py_object_no_sync:
        Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned, *mut *mut c_void) -> c_int>,
    pub dltensor_from_py_object_no_sync:
        Option<unsafe extern "C" fn(*mut c_void, *mut DLTensor) -> c_int>,
    pub current_work_stream: Option<unsafe extern "C" fn(i32, i32, *mut *mut c_void) -> c_int>,
}

const _: () = assert!(std::mem::size_of::<ExchangeApi>() == 56);

/// The table lives for the process, as the protocol requires.
struct Table(ExchangeApi);
// SAFETY: the table is never written after construction; `prev_api` is NULL.
unsafe impl Sync for Table {}

static TABLE: Table = Table(ExchangeApi {
    header: ExchangeApiHeader {
        version: DLPackVersion { major: 1, minor: 3 },
        prev_api: std::ptr::null_mut(),
    },
    managed_tensor_allocator: Some(allocate),
    managed_tensor_from_py_object_no_sync: Some(from_py_object),
    managed_tensor_to_py_object_no_sync: Some(to_py_object),
    dltensor_from_py_object_no_sync: None,
    current_work_stream: Some(current_work_stream),
});

const CAPSULE_NAME: &CStr = c"dlpack_exchange_api";

/// The capsule set as `Array.__dlpack_c_exchange_api__`.
pub fn capsule(py: Python<'_>) -> PyResult<Py<PyAny>> {
    let ptr = &TABLE.0 as *const ExchangeApi as *mut c_void;
    // SAFETY: a static table and a static name; no destructor needed.
    let cap = unsafe { ffi::PyCapsule_New(ptr, CAPSULE_NAME.as_ptr(), None) };
    if cap.is_null() {
        return Err(PyErr::fetch(py));
    }
    // SAFETY: a new, owned reference.
    Ok(unsafe { Bound::from_owned_ptr(py, cap) }.unbind())
}

fn versioned_export(a: &Array) -> dlarray::Result<*mut DLManagedTensorVersioned> {
    let t = a.to_dlpack_with(ExportOptions {
        max_version: Some((1, 3)),
        ..Default::default()
    })?;
    match t.into_raw() {
        RawDLPack::Versioned(p) => Ok(p),
        RawDLPack::Legacy(_) => unreachable!("max_version 1.3 gives a versioned tensor"),
    }
}

unsafe extern "C" fn from_py_object(
    obj: *mut c_void,
    out: *mut *mut DLManagedTensorVersioned,
) -> c_int {
    ffi_guard(|| from_py_object_inner(obj, out), py_panic)
}

fn from_py_object_inner(obj: *mut c_void, out: *mut *mut DLManagedTensorVersioned) -> c_int {
    Python::attach(|py| {
        // SAFETY: the caller passes a live PyObject* and holds a reference to it.
        let obj = unsafe { Bound::from_borrowed_ptr(py, obj.cast()) };
        let r = obj
            .cast::<PyArray>()
            .map_err(PyErr::from)
            .and_then(|a| versioned_export(&a.get().0).map_err(crate::to_py));
        match r {
            Ok(p) => {
                // SAFETY: `out` is the caller's slot.
                unsafe { *out = p };
                0
            }
            Err(e) => {
                e.restore(py);
                -1
            }
        }
    })
}

unsafe extern "C" fn to_py_object(
    tensor: *mut DLManagedTensorVersioned,
    out: *mut *mut c_void,
) -> c_int {
    ffi_guard(|| to_py_object_inner(tensor, out), py_panic)
}

fn to_py_object_inner(tensor: *mut DLManagedTensorVersioned, out: *mut *mut c_void) -> c_int {
    Python::attach(|py| {
        // SAFETY: the caller hands us ownership of a live versioned tensor.
        let r = unsafe { Array::from_dlpack_raw(RawDLPack::Versioned(tensor)) }
            .map_err(crate::to_py)
            .and_then(|a| Py::new(py, PyArray(a)));
        match r {
            Ok(obj) => {
                // SAFETY: `out` is the caller's slot; it receives our new reference.
                unsafe { *out = obj.into_ptr().cast() };
                0
            }
            Err(e) => {
                e.restore(py);
                -1
            }
        }
    })
}

unsafe extern "C" fn allocate(
    prototype: *mut DLTensor,
    out: *mut *mut DLManagedTensorVersioned,
    error_ctx: *mut c_void,
    set_error: Option<SetError>,
) -> c_int {
    ffi_guard(
        || allocate_inner(prototype, out, error_ctx, set_error),
        |msg| report(error_ctx, set_error, "RuntimeError", msg),
    )
}

/// Reports an allocator failure through the caller's `SetError`.
fn report(error_ctx: *mut c_void, set_error: Option<SetError>, kind: &str, msg: String) -> c_int {
    if let Some(f) = set_error {
        let kind = CString::new(kind).unwrap_or_default();
        let msg = CString::new(msg.replace('\0', " ")).unwrap_or_default();
        // SAFETY: the caller's callback, with NUL-terminated strings that live across it.
        unsafe { f(error_ctx, kind.as_ptr(), msg.as_ptr()) };
    }
    -1
}

fn allocate_inner(
    prototype: *mut DLTensor,
    out: *mut *mut DLManagedTensorVersioned,
    error_ctx: *mut c_void,
    set_error: Option<SetError>,
) -> c_int {
    let fail = |kind: &str, msg: String| report(error_ctx, set_error, kind, msg);
    if prototype.is_null() || out.is_null() {
        return fail("ValueError", "NULL prototype or output slot".into());
    }
    // SAFETY: a non-NULL prototype the caller keeps alive for this call.
    let p = unsafe { &*prototype };
    let Some(dtype) =
        DType::from_dlpack_code_bits(p.dtype.code, p.dtype.bits).filter(|_| p.dtype.lanes == 1)
    else {
        return fail(
            "BufferError",
            format!("unsupported DLPack dtype {:?}", p.dtype),
        );
    };
    if p.ndim < 0 || (p.ndim > 0 && p.shape.is_null()) {
        return fail("ValueError", "invalid ndim or NULL shape".into());
    }
    // SAFETY: `shape` holds `ndim` entries.
    let dims = unsafe { std::slice::from_raw_parts(p.shape, p.ndim as usize) };
    let Ok(shape) = dims
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<Result<Vec<_>, _>>()
    else {
        return fail("ValueError", format!("negative dimension in {dims:?}"));
    };
    let r = device_of(p.device).and_then(|d| {
        let a = Array::full_sharded(
            &shape,
            dlarray::Scalar::Int(0),
            dtype,
            &Sharding::single(&d),
        )?;
        versioned_export(&a)
    });
    match r {
        Ok(t) => {
            // SAFETY: checked non-NULL above.
            unsafe { *out = t };
            0
        }
        Err(e) => fail("RuntimeError", e.to_string()),
    }
}

/// The device a DLPack device names: the CPU, or a pinned-host kind's backend.
fn device_of(d: DLDevice) -> dlarray::Result<dlarray::Device> {
    if d.device_type == dlarray::DLDeviceType::kDLCPU {
        return dlarray::get_device("cpu:0");
    }
    Err(dlarray::Error::InvalidArgument(format!(
        "the exchange API allocates on the CPU only, not {d:?}"
    )))
}

/// The stream our backend runs the work of DLPack device `(device_type, device_id)` on:
/// NULL for host memory and devices without streams (their work is done when an op returns).
unsafe extern "C" fn current_work_stream(
    device_type: i32,
    device_id: i32,
    out: *mut *mut c_void,
) -> c_int {
    ffi_guard(
        || {
            let d = DLDevice::new(dlarray::DLDeviceType(device_type), device_id);
            let stream = work_stream(d).unwrap_or(0);
            if !out.is_null() {
                // SAFETY: the caller's slot.
                unsafe { *out = stream as *mut c_void };
            }
            0
        },
        py_panic,
    )
}

/// Our work stream for DLPack device `d`, where one of our devices holds that memory.
fn work_stream(d: DLDevice) -> Option<usize> {
    if d.device_type.is_host() {
        return None;
    }
    dlarray::devices().ok()?.into_iter().find_map(|dev| {
        dev.memory_kinds()
            .iter()
            .any(|&k| dlarray::dlpack::dlpack_device_of(&dev, k) == Ok(d))
            .then(|| dev.backend().dlpack_work_stream(dev.index()))
            .flatten()
    })
}

/// A producer's exchange table, when its type carries one of a major version we speak.
pub fn producer_table(x: &Bound<'_, PyAny>) -> Option<*const ExchangeApi> {
    let ty = x.get_type();
    // Most producers (NumPy) have no table, and looking up a missing attribute raises and
    // clears an AttributeError: ~0.5 us, more than the rest of the import. The answer per type
    // is cached; the cache holds each type, so its address cannot be reused by another.
    static SEEN: std::sync::Mutex<Vec<(Py<pyo3::types::PyType>, usize)>> =
        std::sync::Mutex::new(Vec::new());
    if let Ok(seen) = SEEN.lock()
        && let Some((_, p)) = seen.iter().find(|(t, _)| t.as_ptr() == ty.as_ptr())
    {
        return (*p != 0).then_some(*p as *const ExchangeApi);
    }
    let found = lookup_table(&ty);
    if let Ok(mut seen) = SEEN.lock()
        && seen.len() < 64
    {
        seen.push((ty.unbind(), found.map_or(0, |p| p as usize)));
    }
    found
}

fn lookup_table(ty: &Bound<'_, pyo3::types::PyType>) -> Option<*const ExchangeApi> {
    let attr = ty.getattr("__dlpack_c_exchange_api__").ok()?;
    // SAFETY: checks the capsule's name before reading its pointer.
    let p = unsafe {
        if ffi::PyCapsule_IsValid(attr.as_ptr(), CAPSULE_NAME.as_ptr()) != 1 {
            return None;
        }
        ffi::PyCapsule_GetPointer(attr.as_ptr(), CAPSULE_NAME.as_ptr()) as *const ExchangeApi
    };
    // SAFETY: the table is static in the producer, per the protocol.
    let api = unsafe { p.as_ref()? };
    (api.header.version.major == 1 && api.managed_tensor_from_py_object_no_sync.is_some())
        .then_some(p)
}

/// Imports `x` through its producer's table: the tensor comes without synchronisation
/// (`_no_sync`), so our device's work is then made to wait for the producer's current work
/// stream on that device.
pub fn import_with(x: &Bound<'_, PyAny>, api: *const ExchangeApi) -> PyResult<Array> {
    let raw = export_with(x, api)?;
    let RawDLPack::Versioned(p) = raw else {
        unreachable!("export_with returns versioned tensors")
    };
    // SAFETY: the producer handed us a live versioned tensor.
    let device = unsafe { (*p).dl_tensor.device };
    let mut stream: *mut c_void = std::ptr::null_mut();
    if !device.device_type.is_host() {
        // SAFETY: `producer_table` checked the table; its functions follow the protocol.
        if let Some(f) = unsafe { (*api).current_work_stream } {
            // SAFETY: a slot of ours for the producer to fill.
            if unsafe { f(device.device_type.0, device.device_id, &mut stream) } != 0 {
                stream = std::ptr::null_mut();
            }
        }
    }
    // SAFETY: the producer handed us ownership of a versioned tensor.
    let a = unsafe { Array::from_dlpack_raw(raw) }.map_err(crate::to_py)?;
    let producer = (!stream.is_null()).then_some(stream as usize);
    // SAFETY: the producer reported this live stream of its runtime for that device.
    unsafe { dlarray::dlpack::wait_for_producer(device, producer) }.map_err(crate::to_py)?;
    Ok(a)
}

/// Exports `x` through its producer's table.
pub fn export_with(x: &Bound<'_, PyAny>, api: *const ExchangeApi) -> PyResult<RawDLPack> {
    // SAFETY: `producer_table` checked the table and this function.
    let f = unsafe { (*api).managed_tensor_from_py_object_no_sync }
        .ok_or_else(|| PyBufferError::new_err("exchange API without an export function"))?;
    let mut out: *mut DLManagedTensorVersioned = std::ptr::null_mut();
    // SAFETY: `x` is alive for the call; the producer fills `out` or sets an exception.
    let rc = unsafe { f(x.as_ptr().cast(), &mut out) };
    if rc != 0 || out.is_null() {
        return Err(PyErr::take(x.py()).unwrap_or_else(|| {
            PyBufferError::new_err("the producer's exchange API failed without an error")
        }));
    }
    Ok(RawDLPack::Versioned(out))
}
