//! DLPack capsules: making them (producer) and consuming them (consumer), with the
//! protocol's naming rules: `dltensor` / `dltensor_versioned`, renamed `used_*` by the
//! consumer, whose destructor calls the deleter only while the capsule is unconsumed.

use dlarray::RawDLPack;
use dlarray::dlpack::ffi::{DLManagedTensor, DLManagedTensorVersioned};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use std::ffi::CStr;

const LEGACY: &CStr = c"dltensor";
const USED_LEGACY: &CStr = c"used_dltensor";
const VERSIONED: &CStr = c"dltensor_versioned";
const USED_VERSIONED: &CStr = c"used_dltensor_versioned";

/// Capsule destructor for `dltensor` capsules.
unsafe extern "C" fn destroy_legacy(capsule: *mut ffi::PyObject) {
    // SAFETY: Python calls this with the capsule being destroyed and the GIL held; the
    // pointer under the name `dltensor` is the `DLManagedTensor` we stored.
    unsafe {
        if ffi::PyCapsule_IsValid(capsule, USED_LEGACY.as_ptr()) == 1 {
            return; // consumed: the consumer owns the tensor now
        }
        let (mut t, mut v, mut tb) = (
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
        ffi::PyErr_Fetch(&mut t, &mut v, &mut tb);
        let p = ffi::PyCapsule_GetPointer(capsule, LEGACY.as_ptr()) as *mut DLManagedTensor;
        if p.is_null() {
            ffi::PyErr_WriteUnraisable(capsule);
        } else if let Some(deleter) = (*p).deleter {
            deleter(p);
        }
        ffi::PyErr_Restore(t, v, tb);
    }
}

/// Capsule destructor for `dltensor_versioned` capsules.
unsafe extern "C" fn destroy_versioned(capsule: *mut ffi::PyObject) {
    // SAFETY: as `destroy_legacy`, for `DLManagedTensorVersioned`.
    unsafe {
        if ffi::PyCapsule_IsValid(capsule, USED_VERSIONED.as_ptr()) == 1 {
            return;
        }
        let (mut t, mut v, mut tb) = (
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
        ffi::PyErr_Fetch(&mut t, &mut v, &mut tb);
        let p =
            ffi::PyCapsule_GetPointer(capsule, VERSIONED.as_ptr()) as *mut DLManagedTensorVersioned;
        if p.is_null() {
            ffi::PyErr_WriteUnraisable(capsule);
        } else if let Some(deleter) = (*p).deleter {
            deleter(p);
        }
        ffi::PyErr_Restore(t, v, tb);
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
