//! The array API's creation and elementwise functions at module level (`dlarray.zeros`,
//! `dlarray.linspace`, `dlarray.isnan`, ...), with its keyword conventions: `dtype=` any
//! dtype object, `device=` a device or its name; float64 as the default float.

use crate::array::PyArray;
use crate::dtype_arg::dtype_arg;
use crate::{device_arg, to_py};
use dlarray::{Array, DType, Scalar, Sharding};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt};

fn dtype_or(dtype: Option<&Bound<'_, PyAny>>, default: DType) -> PyResult<DType> {
    dtype.map_or(Ok(default), dtype_arg)
}

/// The sharding new arrays get: `device=`, else the default device.
fn place(device: Option<&Bound<'_, PyAny>>) -> PyResult<Sharding> {
    let d = match device {
        Some(d) => device_arg(d)?,
        None => dlarray::default_device().map_err(to_py)?,
    };
    Ok(Sharding::single(&d))
}

fn shape_arg(shape: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    match shape.extract::<usize>() {
        Ok(n) => Ok(vec![n]),
        Err(_) => shape.extract::<Vec<usize>>(),
    }
}

/// A Python scalar as a dlarray scalar, with the dtype NumPy infers for it.
fn scalar_arg(v: &Bound<'_, PyAny>) -> PyResult<(Scalar, DType)> {
    if v.is_instance_of::<PyBool>() {
        Ok((Scalar::Bool(v.extract()?), DType::Bool))
    } else if v.is_instance_of::<PyInt>() {
        Ok((Scalar::Int(v.extract()?), DType::I64))
    } else if v.is_instance_of::<PyFloat>() {
        Ok((Scalar::Float(v.extract()?), DType::F64))
    } else if let Ok(c) = v.cast::<pyo3::types::PyComplex>() {
        let c = dlarray::dtype::Complex64::new(c.real(), c.imag());
        Ok((Scalar::Complex(c), DType::Complex128))
    } else {
        Err(PyTypeError::new_err(
            "fill_value must be a Python bool, int, float or complex",
        ))
    }
}

fn full_on(
    py: Python<'_>,
    shape: &[usize],
    value: Scalar,
    dtype: DType,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let s = place(device)?;
    py.detach(|| Array::full_sharded(shape, value, dtype, &s))
        .map(PyArray)
        .map_err(to_py)
}

#[pyfunction]
#[pyo3(signature = (shape, *, dtype=None, device=None))]
pub fn zeros(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    full_on(
        py,
        &shape_arg(shape)?,
        Scalar::Int(0),
        dtype_or(dtype, DType::F64)?,
        device,
    )
}

#[pyfunction]
#[pyo3(signature = (shape, *, dtype=None, device=None))]
pub fn ones(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    full_on(
        py,
        &shape_arg(shape)?,
        Scalar::Int(1),
        dtype_or(dtype, DType::F64)?,
        device,
    )
}

#[pyfunction]
#[pyo3(signature = (shape, fill_value, *, dtype=None, device=None))]
pub fn full(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    fill_value: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let (v, inferred) = scalar_arg(fill_value)?;
    full_on(
        py,
        &shape_arg(shape)?,
        v,
        dtype_or(dtype, inferred)?,
        device,
    )
}

fn like(
    py: Python<'_>,
    x: &PyArray,
    value: Option<Scalar>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let dt = dtype_or(dtype, x.0.dtype())?;
    let v = value.unwrap_or(Scalar::Int(0));
    match device {
        Some(_) => full_on(py, x.0.shape(), v, dt, device),
        // Where `x` is, sharding included.
        None => py
            .detach(|| Array::full_sharded(x.0.shape(), v, dt, x.0.sharding()))
            .map(PyArray)
            .map_err(to_py),
    }
}

#[pyfunction]
#[pyo3(signature = (x, /, *, dtype=None, device=None))]
pub fn zeros_like(
    py: Python<'_>,
    x: PyRef<'_, PyArray>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    like(py, &x, Some(Scalar::Int(0)), dtype, device)
}

#[pyfunction]
#[pyo3(signature = (x, /, *, dtype=None, device=None))]
pub fn ones_like(
    py: Python<'_>,
    x: PyRef<'_, PyArray>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    like(py, &x, Some(Scalar::Int(1)), dtype, device)
}

#[pyfunction]
#[pyo3(signature = (x, /, fill_value, *, dtype=None, device=None))]
pub fn full_like(
    py: Python<'_>,
    x: PyRef<'_, PyArray>,
    fill_value: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let (v, _) = scalar_arg(fill_value)?;
    like(py, &x, Some(v), dtype, device)
}

/// Moves a freshly made host array to `device=` when given.
fn placed(py: Python<'_>, a: Array, device: Option<&Bound<'_, PyAny>>) -> PyResult<PyArray> {
    match device {
        Some(d) => {
            let d = device_arg(d)?;
            py.detach(|| a.to_device(&d)).map(PyArray).map_err(to_py)
        }
        None => Ok(PyArray(a)),
    }
}

#[pyfunction]
#[pyo3(signature = (start, /, stop, num, *, dtype=None, device=None, endpoint=true))]
#[allow(clippy::too_many_arguments)]
pub fn linspace(
    py: Python<'_>,
    start: f64,
    stop: f64,
    num: usize,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    endpoint: bool,
) -> PyResult<PyArray> {
    let dt = dtype_or(dtype, DType::F64)?;
    let a = py
        .detach(|| Array::linspace(start, stop, num, endpoint, dt))
        .map_err(to_py)?;
    placed(py, a, device)
}

#[pyfunction]
#[pyo3(signature = (n_rows, n_cols=None, /, *, k=0, dtype=None, device=None))]
pub fn eye(
    py: Python<'_>,
    n_rows: usize,
    n_cols: Option<usize>,
    k: isize,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let dt = dtype_or(dtype, DType::F64)?;
    let a = py
        .detach(|| Array::eye(n_rows, n_cols, k, dt))
        .map_err(to_py)?;
    placed(py, a, device)
}

macro_rules! elementwise {
    ($($name:ident => $f:expr),* $(,)?) => {$(
        #[pyfunction]
        pub fn $name(py: Python<'_>, x: PyRef<'_, PyArray>) -> PyResult<PyArray> {
            let f: fn(&Array) -> dlarray::Result<Array> = $f;
            let a = x.0.clone();
            py.detach(|| f(&a)).map(PyArray).map_err(to_py)
        }
    )*};
}
elementwise!(
    isnan => Array::isnan,
    isfinite => Array::isfinite,
    abs => Array::abs,
    exp => Array::exp,
    log => Array::log,
    sqrt => Array::sqrt,
    sin => Array::sin,
    cos => Array::cos,
    tanh => Array::tanh,
    negative => Array::neg,
    logical_not => Array::logical_not,
);

/// Adds every function of this file to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(zeros, m)?)?;
    m.add_function(wrap_pyfunction!(ones, m)?)?;
    m.add_function(wrap_pyfunction!(full, m)?)?;
    m.add_function(wrap_pyfunction!(zeros_like, m)?)?;
    m.add_function(wrap_pyfunction!(ones_like, m)?)?;
    m.add_function(wrap_pyfunction!(full_like, m)?)?;
    m.add_function(wrap_pyfunction!(linspace, m)?)?;
    m.add_function(wrap_pyfunction!(eye, m)?)?;
    m.add_function(wrap_pyfunction!(isnan, m)?)?;
    m.add_function(wrap_pyfunction!(isfinite, m)?)?;
    m.add_function(wrap_pyfunction!(abs, m)?)?;
    m.add_function(wrap_pyfunction!(exp, m)?)?;
    m.add_function(wrap_pyfunction!(log, m)?)?;
    m.add_function(wrap_pyfunction!(sqrt, m)?)?;
    m.add_function(wrap_pyfunction!(sin, m)?)?;
    m.add_function(wrap_pyfunction!(cos, m)?)?;
    m.add_function(wrap_pyfunction!(tanh, m)?)?;
    m.add_function(wrap_pyfunction!(negative, m)?)?;
    m.add_function(wrap_pyfunction!(logical_not, m)?)?;
    Ok(())
}
