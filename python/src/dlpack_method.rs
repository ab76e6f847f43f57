//! `Array.__dlpack__` as a hand-written `METH_FASTCALL | METH_KEYWORDS` method.
//!
//! Every `np.from_dlpack(x)`, `torch.from_dlpack(x)` and `jax.dlpack.from_dlpack(x)` calls
//! it with keywords (NumPy passes `dl_device`, `copy` and `max_version`). pyo3's generated
//! parser turns each keyword name into UTF-8 and compares it with every parameter name:
//! `np.from_dlpack(array)` took 276 ns with it and 246 ns with this (NumPy's own arrays:
//! 204 ns). Here a keyword name is matched by pointer against interned names first (Python
//! interns the names at call sites), and by value only when that fails. The export itself is
//! [`PyArray::export_capsule`].

use crate::array::PyArray;
use pyo3::exceptions::{PySystemError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;
use std::ffi::CStr;

/// The keyword parameters, in the order `names()` lists them.
const PARAMS: [&CStr; 4] = [c"stream", c"max_version", c"dl_device", c"copy"];

const DOC: &CStr =
    c"__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, copy=None)
--

Exports this array as a DLPack capsule (the array API's __dlpack__): in place where the
consumer can read the memory, else a copy flagged IS_COPIED (or JAX's BufferError under the
strict policy). max_version=(1, x) gives a versioned capsule.";

/// Interned parameter names, made once per process.
fn names(py: Python<'_>) -> &'static [Py<PyString>; 4] {
    static NAMES: pyo3::sync::PyOnceLock<[Py<PyString>; 4]> = pyo3::sync::PyOnceLock::new();
    NAMES.get_or_init(py, || {
        PARAMS.map(|n| PyString::intern(py, n.to_str().expect("ASCII")).unbind())
    })
}

/// Which parameter the keyword `name` is: by pointer (Python interns the names at call
/// sites), else by value.
#[inline]
fn param_index(py: Python<'_>, name: Borrowed<'_, '_, PyAny>) -> PyResult<usize> {
    match names(py).iter().position(|n| n.as_ptr() == name.as_ptr()) {
        Some(i) => Ok(i),
        None => param_index_by_value(name),
    }
}

#[cold]
#[inline(never)]
fn param_index_by_value(name: Borrowed<'_, '_, PyAny>) -> PyResult<usize> {
    let name = name.cast::<PyString>()?;
    let s = name.to_cow()?;
    PARAMS
        .iter()
        .position(|p| p.to_bytes() == s.as_bytes())
        .ok_or_else(|| {
            PyTypeError::new_err(format!(
                "__dlpack__() got an unexpected keyword argument '{s}'"
            ))
        })
}

fn param_name(i: usize) -> &'static str {
    PARAMS[i].to_str().unwrap_or("?")
}

// The errors below are built out of line: inlined, their formatting code sat between the
// steps of every export and spread its code over more instruction-cache lines.

#[cold]
#[inline(never)]
fn positional(nargs: ffi::Py_ssize_t) -> PyErr {
    PyTypeError::new_err(format!(
        "__dlpack__() takes 0 positional arguments but {nargs} were given"
    ))
}

#[cold]
#[inline(never)]
fn repeated(i: usize) -> PyErr {
    PyTypeError::new_err(format!(
        "__dlpack__() got multiple values for argument '{}'",
        param_name(i)
    ))
}

#[cold]
#[inline(never)]
fn mistyped(py: Python<'_>, i: usize, e: PyErr) -> PyErr {
    let why = e.value(py).to_string();
    PyTypeError::new_err(format!("__dlpack__() argument '{}': {why}", param_name(i)))
}

#[cold]
#[inline(never)]
fn not_an_array(e: pyo3::CastError<'_, '_>) -> PyErr {
    e.into()
}

/// `copy`: a bool (or what pyo3 converts to one).
#[inline(never)]
fn copy_arg(v: Borrowed<'_, '_, PyAny>) -> PyResult<bool> {
    v.extract()
}

/// The call's arguments are read as borrowed pointers (`Borrowed`), not `Bound` handles:
/// CPython keeps them alive for the call, and each handle's reference count update was
/// ~12 instructions, eight of them per export.
fn call(
    py: Python<'_>,
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> PyResult<Py<PyAny>> {
    if nargs != 0 {
        return Err(positional(nargs));
    }
    // SAFETY: Python calls a method with its live `self`, borrowed for the call.
    let this = unsafe { Borrowed::from_ptr(py, slf) };
    let this = this.cast::<PyArray>().map_err(not_an_array)?;
    let mut values: [Option<Borrowed<'_, '_, PyAny>>; 4] = [None; 4];
    if !kwnames.is_null() {
        // SAFETY: for METH_FASTCALL | METH_KEYWORDS, `kwnames` is a tuple of the keyword
        // names (or NULL) and args[nargs..nargs + len(kwnames)] hold their values, all
        // borrowed for the call; `k` stays below the tuple's length.
        unsafe {
            for k in 0..ffi::PyTuple_GET_SIZE(kwnames) {
                let name = Borrowed::from_ptr(py, ffi::PyTuple_GET_ITEM(kwnames, k));
                let i = param_index(py, name)?;
                let value = Borrowed::from_ptr(py, *args.add(k as usize));
                if values[i].replace(value).is_some() {
                    return Err(repeated(i));
                }
            }
        }
    }
    let arg = |i: usize| values[i].filter(|v| !v.is_none());
    let typed = |i: usize| move |e: PyErr| mistyped(py, i, e);
    let max_version = arg(1).map(int_pair).transpose().map_err(typed(1))?;
    let dl_device = arg(2).map(int_pair).transpose().map_err(typed(2))?;
    let copy = arg(3).map(copy_arg).transpose().map_err(typed(3))?;
    this.get()
        .export_capsule(py, arg(0), max_version, dl_device, copy)
}

/// `max_version` and `dl_device`: a tuple of two ints read directly (pyo3's generic tuple
/// extraction took ~130 instructions of the ~1,300 of a whole export); anything else goes
/// through pyo3, for its conversions and its error messages.
fn int_pair<T>(v: Borrowed<'_, '_, PyAny>) -> PyResult<(T, T)>
where
    T: TryFrom<std::ffi::c_long>,
    (T, T): for<'a, 'py> FromPyObject<'a, 'py, Error = PyErr>,
{
    let p = v.as_ptr();
    // SAFETY: `p` is a live object; the tuple items are read only after the exact-type and
    // length checks, and borrowed for the duration of the call.
    unsafe {
        if ffi::PyTuple_CheckExact(p) == 1 && ffi::PyTuple_GET_SIZE(p) == 2 {
            let (a, b) = (ffi::PyTuple_GET_ITEM(p, 0), ffi::PyTuple_GET_ITEM(p, 1));
            if ffi::PyLong_CheckExact(a) == 1 && ffi::PyLong_CheckExact(b) == 1 {
                let (a, b) = (ffi::PyLong_AsLong(a), ffi::PyLong_AsLong(b));
                // -1 may mean an overflow error: pyo3's path then reports it properly.
                if a != -1
                    && b != -1
                    && let (Ok(a), Ok(b)) = (T::try_from(a), T::try_from(b))
                {
                    return Ok((a, b));
                }
                ffi::PyErr_Clear();
            }
        }
    }
    int_pair_slow(v)
}

/// Anything but an exact tuple of two small ints, through pyo3's conversion and errors.
#[cold]
#[inline(never)]
fn int_pair_slow<T>(v: Borrowed<'_, '_, PyAny>) -> PyResult<(T, T)>
where
    (T, T): for<'a, 'py> FromPyObject<'a, 'py, Error = PyErr>,
{
    v.extract()
}

// In the DLPack export's hot section (see `Array::to_dlpack_with`).
#[cfg_attr(target_os = "linux", unsafe(link_section = ".text.hot.dlpack_export"))]
unsafe extern "C" fn dlpack_fastcall(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls methods of this (GIL-only) module with the GIL held.
    let py = unsafe { Python::assume_attached() };
    // No panic may unwind into Python's C code.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        call(py, slf, args, nargs, kwnames)
    }))
    .unwrap_or_else(|_| Err(PySystemError::new_err("__dlpack__ panicked")));
    match result {
        Ok(capsule) => capsule.into_ptr(),
        Err(e) => {
            e.restore(py);
            std::ptr::null_mut()
        }
    }
}

/// Puts the method on `Array` (which defines no other `__dlpack__`).
pub fn install(py: Python<'_>) -> PyResult<()> {
    let def = Box::leak(Box::new(ffi::PyMethodDef {
        ml_name: c"__dlpack__".as_ptr(),
        ml_meth: ffi::PyMethodDefPointer {
            PyCFunctionFastWithKeywords: dlpack_fastcall,
        },
        ml_flags: ffi::METH_FASTCALL | ffi::METH_KEYWORDS,
        ml_doc: DOC.as_ptr(),
    }));
    let ty = py.get_type::<PyArray>();
    // SAFETY: `ty` is a live type object and `def` lives for the rest of the process (leaked
    // once, as PyDescr_NewMethod requires); the result is a new reference or NULL.
    let descr = unsafe {
        let p = ffi::PyDescr_NewMethod(ty.as_type_ptr(), def);
        Bound::from_owned_ptr_or_err(py, p)?
    };
    ty.setattr("__dlpack__", descr)
}
