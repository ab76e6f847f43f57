//! What Python users pass as a dtype: a name (`"float32"`), a NumPy dtype or scalar type
//! (`np.float32`, `np.dtype("int8")`), a PyTorch dtype (`torch.bfloat16`), or Python's own
//! `bool`, `int`, `float` and `complex` (NumPy's defaults for them).

use dlarray::DType;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyString, PyType};

/// The dtype `obj` names, or a TypeError saying what is accepted.
pub fn dtype_arg(obj: &Bound<'_, PyAny>) -> PyResult<DType> {
    if let Ok(d) = obj.cast::<PyDType>() {
        return Ok(d.get().0);
    }
    let name: String = if let Ok(s) = obj.cast::<PyString>() {
        s.to_str()?.to_string()
    } else if let Ok(t) = obj.cast::<PyType>() {
        // Python's builtins, then NumPy's scalar types (`np.float32.__name__ == "float32"`).
        let py = obj.py();
        let builtins = py.import("builtins")?;
        let is = |n: &str| builtins.getattr(n).is_ok_and(|b| b.is(t));
        if is("bool") {
            "bool".into()
        } else if is("int") {
            "int64".into()
        } else if is("float") {
            "float64".into()
        } else if is("complex") {
            "complex128".into()
        } else {
            t.name()?.to_string()
        }
    } else if let Ok(n) = obj.getattr("name").and_then(|n| n.extract::<String>()) {
        // `np.dtype(...)`.
        n
    } else {
        // `torch.float32` prints as "torch.float32".
        let s = obj.str()?.to_string();
        s.strip_prefix("torch.").unwrap_or(&s).to_string()
    };
    let alias = match name.as_str() {
        "bool_" => "bool",
        "float" => "float32", // torch.float
        "double" => "float64",
        "half" => "float16",
        "cfloat" => "complex64",
        "cdouble" => "complex128",
        "int" => "int32",
        "long" => "int64",
        "short" => "int16",
        n => n,
    };
    DType::from_name(alias).ok_or_else(|| {
        let known: Vec<&str> = DType::ALL.iter().map(|d| d.name()).collect();
        let msg = format!(
            "unknown dtype {name:?}: expected one of {} (a name, a NumPy or PyTorch dtype)",
            known.join(", ")
        );
        // A misspelt name is a bad value; anything else is the wrong kind of object.
        if obj.is_instance_of::<PyString>() {
            PyValueError::new_err(msg)
        } else {
            PyTypeError::new_err(msg)
        }
    })
}

/// A dlarray dtype as a Python object (`dlarray.float32`, `a.dtype`), as the array API wants
/// dtypes: not strings, but equal to their names (`a.dtype == "float32"`) and hashing as
/// them, so either works as a dict key; equal to NumPy's and PyTorch's dtypes of the same
/// name too. `.dtype` is the NumPy dtype, so `np.asarray(x, dtype=a.dtype)` works.
#[pyclass(frozen, name = "dtype", module = "dlarray")]
pub struct PyDType(pub DType);

#[pymethods]
impl PyDType {
    /// The name, as NumPy spells it (`"float32"`).
    #[getter]
    fn name(&self) -> &'static str {
        self.0.name()
    }
    /// Bytes per element.
    #[getter]
    fn itemsize(&self) -> usize {
        self.0.size_in_bytes()
    }
    /// The same dtype in NumPy (bfloat16 through `ml_dtypes`, which JAX installs).
    #[getter]
    fn dtype<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        if self.0 == DType::BF16 {
            return py
                .import("ml_dtypes")?
                .getattr("bfloat16")
                .and_then(|t| py.import("numpy")?.getattr("dtype")?.call1((t,)));
        }
        py.import("numpy")?
            .getattr("dtype")?
            .call1((self.0.name(),))
    }
    fn __str__(&self) -> &'static str {
        self.0.name()
    }
    fn __repr__(&self) -> String {
        format!("dlarray.{}", self.0.name())
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        dtype_arg(other).is_ok_and(|d| d == self.0)
    }
    fn __ne__(&self, other: &Bound<'_, PyAny>) -> bool {
        !self.__eq__(other)
    }
    /// The name's hash: a dict keyed by names finds dtypes, and the other way round.
    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        PyString::new(py, self.0.name()).hash()
    }
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (&'static str,))> {
        Ok((py.import("dlarray")?.getattr("_dtype")?, (self.0.name(),)))
    }
}

/// The dtype object of `d` (one per dtype, shared).
pub fn dtype_obj(py: Python<'_>, d: DType) -> PyResult<Py<PyDType>> {
    use pyo3::sync::PyOnceLock;
    static OBJS: PyOnceLock<Vec<Py<PyDType>>> = PyOnceLock::new();
    let all = OBJS.get_or_try_init(py, || {
        DType::ALL
            .iter()
            .map(|&d| Py::new(py, PyDType(d)))
            .collect::<PyResult<Vec<_>>>()
    })?;
    let i = DType::ALL.iter().position(|&x| x == d).unwrap_or(0);
    Ok(all[i].clone_ref(py))
}

/// `dlarray._dtype(name)`: unpickling.
#[pyfunction]
pub fn _dtype(py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<Py<PyDType>> {
    dtype_obj(py, dtype_arg(name)?)
}
