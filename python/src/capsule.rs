//! DLPack capsules: making them (producer) and consuming them (consumer), with the
//! protocol's naming rules: `dltensor` / `dltensor_versioned`, renamed `used_*` by the
//! consumer, whose destructor calls the deleter only while the capsule is unconsumed.

use dlarray::RawDLPack;
use dlarray::dlpack::ffi::{DLManagedTensor, DLManagedTensorVersioned};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use std::ffi::{CStr, c_void};

const LEGACY: &CStr = c"dltensor";
const USED_LEGACY: &CStr = c"used_dltensor";
const VERSIONED: &CStr = c"dltensor_versioned";
const USED_VERSIONED: &CStr = c"used_dltensor_versioned";

/// Capsule destructor for `dltensor` capsules.
unsafe extern "C" fn destroy_legacy(capsule: *mut ffi::PyObject) {
    // SAFETY: Python calls this with the capsule being destroyed and the GIL held; a pointer
    // under the name `dltensor` is the `DLManagedTensor` we stored.
    unsafe {
        destroy(capsule, LEGACY, |p| {
            let p = p as *mut DLManagedTensor;
            if let Some(deleter) = (*p).deleter {
                deleter(p);
            }
        })
    }
}

/// Capsule destructor for `dltensor_versioned` capsules.
// In the DLPack export's hot section (see `Array::to_dlpack_with`).
#[cfg_attr(target_os = "linux", unsafe(link_section = ".text.hot.dlpack_export"))]
unsafe extern "C" fn destroy_versioned(capsule: *mut ffi::PyObject) {
    // SAFETY: as `destroy_legacy`, for `DLManagedTensorVersioned`.
    unsafe {
        destroy(capsule, VERSIONED, |p| {
            let p = p as *mut DLManagedTensorVersioned;
            if let Some(deleter) = (*p).deleter {
                deleter(p);
            }
        })
    }
}

/// Runs `delete` on the tensor of a capsule still named `name` (unconsumed); a consumer
/// renamed it otherwise, and owns the tensor. A pending exception is kept across the deleter
/// (which may drop Python objects); with none pending, there is nothing to save.
///
/// # Safety
/// `capsule` is a live capsule, the GIL is held, and `delete` accepts the pointer a capsule
/// named `name` holds.
unsafe fn destroy(capsule: *mut ffi::PyObject, name: &CStr, delete: impl FnOnce(*mut c_void)) {
    // SAFETY: per the contract. The name is compared by pointer first: a capsule we made and
    // nobody consumed still carries our static name.
    unsafe {
        let current = ffi::PyCapsule_GetName(capsule);
        if current.is_null() {
            ffi::PyErr_Clear();
            return;
        }
        if current != name.as_ptr() && CStr::from_ptr(current) != name {
            return; // consumed: the consumer owns the tensor now
        }
        let pending = !ffi::PyErr_Occurred().is_null();
        let (mut t, mut v, mut tb) = (
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
        if pending {
            ffi::PyErr_Fetch(&mut t, &mut v, &mut tb);
        }
        let p = ffi::PyCapsule_GetPointer(capsule, current);
        if p.is_null() {
            ffi::PyErr_WriteUnraisable(capsule);
        } else {
            delete(p);
        }
        if pending {
            ffi::PyErr_Restore(t, v, tb);
        } else if !ffi::PyErr_Occurred().is_null() {
            // A destructor must not leave an exception behind.
            ffi::PyErr_WriteUnraisable(capsule);
        }
    }
}

/// A capsule owning `raw` (its deleter runs when the capsule dies unconsumed).
pub fn new_capsule(py: Python<'_>, raw: RawDLPack) -> PyResult<Py<PyAny>> {
    let (ptr, name, destructor): (*mut std::ffi::c_void, &CStr, ffi::PyCapsule_Destructor) =
        match raw {
            RawDLPack::Legacy(p) => (p.cast(), LEGACY, destroy_legacy),
            RawDLPack::Versioned(p) => (p.cast(), VERSIONED, destroy_versioned),
        };
    // SAFETY: `ptr` is a live managed tensor we own; the name is a static C string.
    let cap = unsafe { ffi::PyCapsule_New(ptr, name.as_ptr(), Some(destructor)) };
    if cap.is_null() {
        // The capsule was not made: release the tensor ourselves.
        // SAFETY: ownership never left us; `from_raw` + drop runs the deleter once.
        drop(unsafe { dlarray::DLPackTensor::from_raw(raw) });
        return Err(PyErr::fetch(py));
    }
    // SAFETY: `cap` is a new, owned reference.
    Ok(unsafe { Bound::from_owned_ptr(py, cap) }.unbind())
}

/// Takes the managed tensor out of a DLPack capsule, renaming it `used_*` first, so the
/// capsule's destructor no longer frees it whatever happens next.
pub fn consume(capsule: &Bound<'_, PyAny>) -> PyResult<RawDLPack> {
    let cap = capsule.as_ptr();
    // SAFETY: `cap` is a live object; the capsule functions check its type.
    unsafe {
        if ffi::PyCapsule_CheckExact(cap) == 0 {
            return Err(PyTypeError::new_err(format!(
                "expected a DLPack capsule, got {}",
                capsule.get_type().name()?
            )));
        }
        for (name, used, versioned) in [
            (VERSIONED, USED_VERSIONED, true),
            (LEGACY, USED_LEGACY, false),
        ] {
            if ffi::PyCapsule_IsValid(cap, name.as_ptr()) == 1 {
                let p = ffi::PyCapsule_GetPointer(cap, name.as_ptr());
                if ffi::PyCapsule_SetName(cap, used.as_ptr()) != 0 {
                    return Err(PyErr::fetch(capsule.py()));
                }
                return Ok(if versioned {
                    RawDLPack::Versioned(p.cast())
                } else {
                    RawDLPack::Legacy(p.cast())
                });
            }
        }
        if ffi::PyCapsule_IsValid(cap, USED_LEGACY.as_ptr()) == 1
            || ffi::PyCapsule_IsValid(cap, USED_VERSIONED.as_ptr()) == 1
        {
            return Err(PyValueError::new_err(
                "this DLPack capsule was already consumed: a capsule can be consumed only once",
            ));
        }
        let name = ffi::PyCapsule_GetName(cap);
        let name = if name.is_null() {
            "NULL".to_string()
        } else {
            CStr::from_ptr(name).to_string_lossy().into_owned()
        };
        ffi::PyErr_Clear();
        Err(PyTypeError::new_err(format!(
            "expected a capsule named `dltensor` or `dltensor_versioned`, got `{name}`"
        )))
    }
}
