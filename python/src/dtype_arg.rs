//! What Python users pass as a dtype: a name (`"float32"`), a NumPy dtype or scalar type
//! (`np.float32`, `np.dtype("int8")`), a PyTorch dtype (`torch.bfloat16`), or Python's own
//! `bool`, `int`, `float` and `complex` (NumPy's defaults for them).

use dlarray::DType;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyString, PyType};

/// The dtype `obj` names, or a TypeError saying what is accepted.
pub fn dtype_arg(obj: &Bound<'_, PyAny>) -> PyResult<DType> {
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
