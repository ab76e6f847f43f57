//! The `dlarray` Python module: dlarray arrays that NumPy, PyTorch and JAX consume through
//! `__dlpack__`, and `from_dlpack` / `asarray` that consume theirs.

mod array;
mod capsule;
mod convert;
mod dlpack_method;
mod dtype_arg;
mod exchange;
mod extras;
mod functions;
mod indexing;
mod info;
mod joins;
mod methods;
mod operand;
mod random;
mod sorting;
mod tiling;

use array::PyArray;
use dlarray::{Array, DlpackPolicy};
use pyo3::exceptions::{PyAttributeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

pyo3::create_exception!(
    dlarray,
    UnsupportedError,
    pyo3::exceptions::PyTypeError,
    "An op a backend lacks for a dtype (names backend, op and dtype)."
);

/// Converts a dlarray error to the Python exception the array API expects.
#[cold]
pub(crate) fn to_py(e: dlarray::Error) -> PyErr {
    use dlarray::Error::*;
    use pyo3::exceptions::*;
    let msg = e.to_string();
    match e {
        Buffer(b) => PyBufferError::new_err(b.to_string()),
        CopyRequired(m) => PyValueError::new_err(m),
        Unsupported { .. } => UnsupportedError::new_err(msg),
        OutOfMemory { .. } => PyMemoryError::new_err(msg),
        UnknownDevice(_) => PyValueError::new_err(msg),
        IndexOutOfRange { .. } => PyIndexError::new_err(msg),
        ShapeMismatch { .. } | DTypeMismatch { .. } | ElementType { .. } => {
            PyValueError::new_err(msg)
        }
        InvalidDlpack(m) => PyBufferError::new_err(m),
        InvalidArgument(m) => PyValueError::new_err(m),
        _ => PyRuntimeError::new_err(msg),
    }
}

/// A device: `name` (`cpu:0`, `tpu:1`, `wgpu:0`), platform, runtime and memory kinds.
#[pyclass(frozen, name = "Device", module = "dlarray")]
pub(crate) struct PyDevice(pub dlarray::Device);

#[pymethods]
impl PyDevice {
    #[getter]
    fn name(&self) -> &str {
        self.0.name()
    }
    fn platform(&self) -> &str {
        self.0.platform()
    }
    #[getter]
    fn platform_version(&self) -> &str {
        self.0.platform_version()
    }
    #[getter]
    fn memory_kinds(&self) -> Vec<&'static str> {
        self.0.memory_kinds().iter().map(|k| k.name()).collect()
    }
    fn __repr__(&self) -> String {
        format!("Device({})", self.0.name())
    }
    fn __str__(&self) -> &str {
        self.0.name()
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<PyDevice>().is_ok_and(|o| o.get().0 == self.0)
    }
    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.0.name().hash(&mut h);
        h.finish()
    }
}

/// A device given as a `Device` or its name.
pub(crate) fn device_arg(d: &Bound<'_, PyAny>) -> PyResult<dlarray::Device> {
    if let Ok(dev) = d.cast::<PyDevice>() {
        return Ok(dev.get().0.clone());
    }
    let name: String = d.extract()?;
    dlarray::get_device(&name).map_err(to_py)
}

/// Every available device, or those of one platform (`"cpu"`, `"tpu"`, `"wgpu"`, ...).
#[pyfunction]
#[pyo3(signature = (platform=None))]
fn devices(platform: Option<&str>) -> PyResult<Vec<PyDevice>> {
    Ok(dlarray::devices()
        .map_err(to_py)?
        .into_iter()
        .filter(|d| platform.is_none_or(|p| d.platform() == p))
        .map(PyDevice)
        .collect())
}

/// `"host_fallback"` (default): arrays whose memory cannot be exported are copied to host;
/// `"strict"`: JAX's exact BufferError instead.
#[pyfunction]
fn set_dlpack_policy(policy: &str) -> PyResult<()> {
    let p = match policy {
        "host_fallback" => DlpackPolicy::HostFallback,
        "strict" => DlpackPolicy::Strict,
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown DLPack policy {other:?}: expected \"host_fallback\" or \"strict\""
            )));
        }
    };
    dlarray::set_dlpack_policy(p);
    Ok(())
}

/// The array API's `from_dlpack`: consumes any `__dlpack__` producer (or a raw capsule).
#[pyfunction]
#[pyo3(signature = (x, /, *, device=None, copy=None))]
pub(crate) fn from_dlpack(
    x: &Bound<'_, PyAny>,
    device: Option<&Bound<'_, PyAny>>,
    copy: Option<bool>,
) -> PyResult<PyArray> {
    if device.is_none() && copy.is_none() {
        if let Ok(a) = x.cast::<PyArray>() {
            return Ok(PyArray(a.get().0.clone())); // our own array: nothing to exchange
        }
        if is_ndarray(x) {
            // A NumPy array, as is: NumPy's own call (its arrays are host memory: no
            // stream). The common case, apart from the general path below so that its code
            // stays on few instruction-cache lines.
            if let Some(c) = call_dlpack_by_name(x) {
                return import_capsule(&c);
            }
        } else if let Some(api) = exchange::producer_table(x) {
            // The C exchange API skips the Python-level call and the capsule.
            return exchange::import_with(x, api).map(PyArray);
        }
    }
    from_dlpack_general(x, device, copy)
}

/// The array in a capsule a producer just made (consumed here).
#[inline]
fn import_capsule(capsule: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    let raw = capsule::consume(capsule)?;
    // SAFETY: `consume` took ownership of a managed tensor from a valid capsule. (Import
    // only validates and wraps: cheap enough to keep the GIL.)
    unsafe { Array::from_dlpack_raw(raw) }
        .map(PyArray)
        .map_err(to_py)
}

/// Every other producer, target device and copy request: the producer is asked by name,
/// with the keywords the array API gives it.
#[inline(never)]
fn from_dlpack_general(
    x: &Bound<'_, PyAny>,
    device: Option<&Bound<'_, PyAny>>,
    copy: Option<bool>,
) -> PyResult<PyArray> {
    let py = x.py();
    let target = device.map(device_arg).transpose()?;
    let capsule = if let Ok(method) = x.getattr(pyo3::intern!(py, "__dlpack__")) {
        // With a target device the producer is asked for it (`dl_device`), so a CUDA tensor
        // wanted on the CPU arrives as the producer's own host copy, as in NumPy and PyTorch.
        let wanted = target.as_ref().map(requested_dl_device);
        let stream = consumer_stream(x, wanted)?;
        match call_dlpack(&method, wanted, copy, stream) {
            Ok(c) => c,
            // A producer predating max_version/dl_device/copy: ask again with no keywords
            // (the copy to `target`, if any, then happens here).
            Err(e) if e.is_instance_of::<pyo3::exceptions::PyTypeError>(py) && copy.is_none() => {
                method.call0()?
            }
            // It cannot export to that device: take its own and copy here (refused below
            // when copy=False and the devices differ).
            Err(e)
                if e.is_instance_of::<pyo3::exceptions::PyBufferError>(py) && wanted.is_some() =>
            {
                call_dlpack(&method, None, copy, consumer_stream(x, None)?)?
            }
            Err(e) => return Err(e),
        }
    } else if x.get_type().name()? == "PyCapsule" {
        x.clone()
    } else {
        return Err(PyAttributeError::new_err(format!(
            "from_dlpack needs an object with __dlpack__ and __dlpack_device__, got {}",
            x.get_type().name()?
        )));
    };
    let a = import_capsule(&capsule)?.0;
    let a = match target {
        Some(d) if a.devices() != vec![d.clone()] => {
            if copy == Some(false) {
                return Err(to_py(dlarray::Error::copy_required(
                    &d,
                    format!("{:?}", a.devices()),
                )));
            }
            py.detach(|| a.to_device(&d)).map_err(to_py)?
        }
        _ => a,
    };
    Ok(PyArray(a))
}

/// The DLPack device a producer is asked to export to for `target`: the target's own where it
/// has one, else host memory (copied onto the target after import: TPU device memory, wgpu).
fn requested_dl_device(target: &dlarray::Device) -> (i32, i32) {
    let d = dlarray::dlpack::dlpack_device_of(target, target.default_memory_kind())
        .unwrap_or(dlarray::DLDevice::CPU);
    (d.device_type.0, d.device_id)
}

/// The `stream=` to pass a producer whose data will arrive on DLPack device `wanted` (or, if
/// not given, where `__dlpack_device__` says it is): the stream our backend will use it on,
/// in its runtime's numbering; `None` for host memory (which takes no stream).
fn consumer_stream(x: &Bound<'_, PyAny>, wanted: Option<(i32, i32)>) -> PyResult<Option<i64>> {
    let (t, id) = match wanted {
        Some(d) => d,
        // A NumPy array is host memory: no stream, and no call to ask.
        None if is_ndarray(x) => return Ok(None),
        None => match x.call_method0(pyo3::intern!(x.py(), "__dlpack_device__")) {
            Ok(d) => d.extract::<(i32, i32)>()?,
            // A capsule-only or partial producer: nothing to go on.
            Err(_) => return Ok(None),
        },
    };
    let d = dlarray::DLDevice::new(dlarray::DLDeviceType(t), id);
    Ok(dlarray::dlpack::consumer_stream(d).as_raw())
}

/// Whether `x` is exactly a `numpy.ndarray` (not a subclass, which could live elsewhere):
/// its type is recognised once and then compared by identity.
fn is_ndarray(x: &Bound<'_, PyAny>) -> bool {
    use pyo3::sync::PyOnceLock;
    static NDARRAY: PyOnceLock<Py<pyo3::types::PyType>> = PyOnceLock::new();
    let py = x.py();
    if let Some(t) = NDARRAY.get(py) {
        return x.get_type().is(t.bind(py));
    }
    // Only once NumPy is imported (by whoever made `x`): never import it here.
    let found = || -> Option<Bound<'_, pyo3::types::PyType>> {
        let modules = py.import("sys").and_then(|s| s.getattr("modules")).ok()?;
        let np = modules.get_item("numpy").ok()?;
        np.getattr("ndarray")
            .ok()?
            .cast_into::<pyo3::types::PyType>()
            .ok()
    };
    match found() {
        Some(t) => {
            let is = x.get_type().is(&t);
            let _ = NDARRAY.set(py, t.unbind());
            is
        }
        None => false,
    }
}

/// `__dlpack__(max_version=(1, 0), dl_device=..., copy=..., stream=...)` through the bound
/// `method`, naming only what is set (the common keywords, `max_version` alone, are one
/// dictionary made once: a callee gets its own copy of `**kwargs`).
fn call_dlpack<'py>(
    method: &Bound<'py, PyAny>,
    dl_device: Option<(i32, i32)>,
    copy: Option<bool>,
    stream: Option<i64>,
) -> PyResult<Bound<'py, PyAny>> {
    use pyo3::sync::PyOnceLock;
    let py = method.py();
    if stream.is_none() && dl_device.is_none() && copy.is_none() {
        static PLAIN: PyOnceLock<Py<PyDict>> = PyOnceLock::new();
        let kw = PLAIN.get_or_try_init(py, || {
            let d = PyDict::new(py);
            d.set_item(pyo3::intern!(py, "max_version"), (1, 0))?;
            Ok::<_, PyErr>(d.unbind())
        })?;
        return method.call((), Some(kw.bind(py)));
    }
    let kwargs = PyDict::new(py);
    kwargs.set_item(pyo3::intern!(py, "max_version"), (1, 0))?;
    if let Some(s) = stream {
        kwargs.set_item(pyo3::intern!(py, "stream"), s)?;
    }
    if let Some(d) = dl_device {
        kwargs.set_item(pyo3::intern!(py, "dl_device"), d)?;
    }
    if let Some(c) = copy {
        kwargs.set_item(pyo3::intern!(py, "copy"), c)?;
    }
    method.call((), Some(&kwargs))
}

/// `x.__dlpack__(max_version=(1, 0))` as NumPy's `from_dlpack` makes the call: one vectorcall
/// of the method by name, with no bound method and no keyword dictionary (which the callee's
/// FASTCALL parser would unpack again). `None` on an error (an older producer refusing
/// `max_version`, say): [`call_dlpack`]'s path then makes the call and handles each kind.
#[cfg(not(feature = "abi3"))]
fn call_dlpack_by_name<'py>(x: &Bound<'py, PyAny>) -> Option<Bound<'py, PyAny>> {
    use pyo3::ffi;
    use pyo3::sync::PyOnceLock;
    use pyo3::types::PyTuple;
    let py = x.py();
    static KEYWORDS: PyOnceLock<(Py<PyTuple>, Py<PyTuple>)> = PyOnceLock::new();
    let (names, version) = KEYWORDS
        .get_or_try_init(py, || {
            let names = PyTuple::new(py, [pyo3::intern!(py, "max_version")])?;
            let version = PyTuple::new(py, [1, 0])?;
            Ok::<_, PyErr>((names.unbind(), version.unbind()))
        })
        .ok()?;
    let args = [x.as_ptr(), version.as_ptr()];
    // SAFETY: `args` holds `self` (one positional argument, so nargsf is 1) followed by the
    // value of each name in `names`, all live for the call; the result is a new reference or
    // NULL with an exception set (taken, and dropped, by `from_owned_ptr_or_err`).
    unsafe {
        let r = ffi::PyObject_VectorcallMethod(
            pyo3::intern!(py, "__dlpack__").as_ptr(),
            args.as_ptr(),
            1,
            names.as_ptr(),
        );
        Bound::from_owned_ptr_or_err(py, r).ok()
    }
}

/// The stable ABI (before 3.12) has no `PyObject_VectorcallMethod`: [`call_dlpack`]'s path
/// makes the call.
#[cfg(feature = "abi3")]
fn call_dlpack_by_name<'py>(_x: &Bound<'py, PyAny>) -> Option<Bound<'py, PyAny>> {
    None
}

/// Whether `x` is an array (ours or any `__dlpack__` producer) or a list or tuple holding one
/// at any depth. Numbers answer at once: a long list of numbers costs no attribute lookups.
fn contains_array(x: &Bound<'_, PyAny>) -> PyResult<bool> {
    use pyo3::types::{PyBool, PyComplex, PyFloat, PyInt, PyList, PyTuple};
    if x.is_instance_of::<PyFloat>()
        || x.is_instance_of::<PyInt>()
        || x.is_instance_of::<PyBool>()
        || x.is_instance_of::<PyComplex>()
    {
        return Ok(false);
    }
    if x.is_instance_of::<PyList>() || x.is_instance_of::<PyTuple>() {
        for item in x.try_iter()? {
            if contains_array(&item?)? {
                return Ok(true);
            }
        }
        return Ok(false);
    }
    Ok(x.cast::<PyArray>().is_ok() || x.hasattr("__dlpack__")? || x.hasattr("__array__")?)
}

/// An object with NumPy's `__array__` and no `__dlpack__` (NumPy scalars such as
/// `np.int64(3)`, array-likes of other libraries): the array it gives, imported. `None` when
/// it has no `__array__`.
pub(crate) fn via_array_method(obj: &Bound<'_, PyAny>) -> PyResult<Option<Array>> {
    if !obj.hasattr("__array__")? {
        return Ok(None);
    }
    let a = obj.call_method0("__array__")?;
    if !a.hasattr("__dlpack__")? {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "{}.__array__() gave a {}, which has no __dlpack__",
            obj.get_type().name()?,
            a.get_type().name()?
        )));
    }
    from_dlpack(&a, None, None).map(|a| Some(a.0))
}

/// Any array-like argument as an array: `asarray(x)` with no keywords (ours as they are,
/// DLPack producers imported, lists and scalars converted).
pub(crate) fn array_arg(x: &Bound<'_, PyAny>) -> PyResult<Array> {
    Ok(asarray(x, None, None, None)?.0)
}

/// A list or tuple holding arrays (any `__dlpack__` or `__array__` producer, 0-d ones and
/// NumPy scalars included, possibly beside numbers) stacked along a new first axis, as NumPy's `asarray([a, b])`; `None` for
/// anything else.
fn stack_of_arrays(obj: &Bound<'_, PyAny>) -> PyResult<Option<Array>> {
    let is_seq =
        obj.is_instance_of::<pyo3::types::PyList>() || obj.is_instance_of::<pyo3::types::PyTuple>();
    if !is_seq || obj.len()? == 0 || !contains_array(obj)? {
        return Ok(None);
    }
    let items: Vec<Bound<'_, PyAny>> = obj.try_iter()?.collect::<PyResult<_>>()?;
    let parts: Vec<Array> = items.iter().map(array_arg).collect::<PyResult<_>>()?;
    // Each part is cast where it is: 32 bits where its devices have no 64-bit kernels.
    let refs: Vec<&Array> = parts.iter().collect();
    let dtype = Array::promoted_on_devices(&refs);
    let parts: Vec<Array> = parts
        .iter()
        .map(|p| p.astype(dtype))
        .collect::<dlarray::Result<_>>()
        .map_err(to_py)?;
    let refs: Vec<&Array> = parts.iter().collect();
    Array::stack(&refs, 0).map(Some).map_err(to_py)
}

/// An array from a list, a scalar, any `__dlpack__` producer (NumPy, PyTorch, JAX) or any
/// `__array__` producer (NumPy scalars).
/// `copy` is the array API's: `True` always copies, `False` never does (a `ValueError` where
/// a copy is needed, with NumPy's words), `None` copies only where it must.
#[pyfunction]
#[pyo3(signature = (obj, /, *, dtype=None, device=None, copy=None))]
pub(crate) fn asarray(
    obj: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    copy: Option<bool>,
) -> PyResult<PyArray> {
    let py = obj.py();
    let dtype = dtype.map(dtype_arg::dtype_arg).transpose()?;
    // Whether `a` still shares memory with `obj`.
    let (a, mut shared) = if let Ok(a) = obj.cast::<PyArray>() {
        (a.get().0.clone(), true)
    } else if let Some(stacked) = stack_of_arrays(obj)? {
        (stacked, false)
    } else if obj.hasattr("__dlpack__")? {
        // An import is a view of the producer's memory.
        (from_dlpack(obj, None, None)?.0, true)
    } else if let Some(a) = via_array_method(obj)? {
        // A view of what `__array__` gave, which may be the producer's memory.
        (a, true)
    } else if dtype.is_none() {
        // Python values take NumPy's default dtypes, as the device they go to computes
        // them (float32 for floats on wgpu, as JAX with x64 disabled), converted again
        // where that narrows them so that an int out of int32's range raises.
        let a = convert::from_nested(obj, None)?;
        let narrow = functions::target_device(device)?.default_dtype(a.dtype());
        if narrow == a.dtype() {
            (a, false)
        } else {
            (convert::from_nested(obj, Some(narrow))?, false)
        }
    } else {
        (convert::from_nested(obj, dtype)?, false)
    };
    let no_copy =
        || PyValueError::new_err("Unable to avoid copy while creating an array as requested.");
    let a = match dtype {
        Some(dt) => {
            if dt != a.dtype() {
                if copy == Some(false) {
                    return Err(no_copy());
                }
                shared = false;
            }
            py.detach(|| a.astype_anywhere(dt)).map_err(to_py)?
        }
        None => a,
    };
    let a = match device {
        Some(d) => {
            let d = device_arg(d)?;
            if a.devices() != [d.clone()] {
                if copy == Some(false) {
                    return Err(no_copy());
                }
                shared = false;
            }
            py.detach(|| a.to_device(&d)).map_err(to_py)?
        }
        None => a,
    };
    match copy {
        Some(false) if !shared => Err(no_copy()),
        Some(true) if shared => py.detach(|| a.deep_copy()).map(PyArray).map_err(to_py),
        _ => Ok(PyArray(a)),
    }
}

#[pymodule(name = "dlarray")]
fn dlarray_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyArray>()?;
    dlpack_method::install(m.py())?;
    m.py()
        .get_type::<PyArray>()
        .setattr("__dlpack_c_exchange_api__", exchange::capsule(m.py())?)?;
    m.add_class::<PyDevice>()?;
    m.add("UnsupportedError", m.py().get_type::<UnsupportedError>())?;
    // Whether this module was built without optimisation (the tests' `--profile dev`): the
    // benchmarks under python/bench refuse to time it (a call takes ~10x as long there).
    m.add("_debug_build", cfg!(debug_assertions))?;
    m.add_function(wrap_pyfunction!(devices, m)?)?;
    m.add_function(wrap_pyfunction!(asarray, m)?)?;
    m.add_function(wrap_pyfunction!(from_dlpack, m)?)?;
    m.add_function(wrap_pyfunction!(set_dlpack_policy, m)?)?;
    functions::register(m)?;
    joins::register(m)?;
    extras::register(m)?;
    info::register(m)?;
    random::register(m)?;
    tiling::register(m)?;
    sorting::register(m)?;
    // The dtypes by name (`dlarray.float32 == a.dtype`), as the array API's namespace has them.
    m.add_class::<dtype_arg::PyDType>()?;
    m.add_function(wrap_pyfunction!(dtype_arg::_dtype, m)?)?;
    for d in dlarray::DType::ALL {
        m.add(d.name(), dtype_arg::dtype_obj(m.py(), d)?)?;
    }
    methods::install(m)?;
    Ok(())
}
