//! The array API's sorting, searching, set and data-dependent indexing functions: `sort`,
//! `argsort`, `searchsorted`, `unique_*`, `isin`, `take`, `take_along_axis`, `nonzero`.

use crate::{PyArray, to_py};
use dlarray::Array;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyTuple;

macro_rules! ordering {
    ($($name:ident => $method:ident),*) => {$(
        /// The array API's form; `stable` is accepted and always holds (every sort here is).
        #[pyfunction]
        #[pyo3(signature = (x, /, *, axis=-1, descending=false, stable=true))]
        fn $name(
            py: Python<'_>,
            x: PyRef<'_, PyArray>,
            axis: isize,
            descending: bool,
            stable: bool,
        ) -> PyResult<PyArray> {
            let _ = stable;
            let a = x.0.clone();
            py.detach(|| a.$method(axis, descending)).map(PyArray).map_err(to_py)
        }
    )*};
}
ordering!(sort => sort, argsort => argsort);

#[pyfunction]
#[pyo3(signature = (x1, x2, /, *, side="left", sorter=None))]
fn searchsorted(
    py: Python<'_>,
    x1: PyRef<'_, PyArray>,
    x2: &Bound<'_, PyAny>,
    side: &str,
    sorter: Option<PyRef<'_, PyArray>>,
) -> PyResult<PyArray> {
    let right = match side {
        "left" => false,
        "right" => true,
        other => {
            return Err(PyValueError::new_err(format!(
                "searchsorted: side must be \"left\" or \"right\", not {other:?}"
            )));
        }
    };
    let sorted = match sorter {
        Some(s) => x1.0.take(&s.0, Some(0)).map_err(to_py)?,
        None => x1.0.clone(),
    };
    let values = match x2.cast::<PyArray>() {
        Ok(v) => v.get().0.clone(),
        // A Python scalar takes the sorted array's dtype (weakly, as NEP 50).
        Err(_) => {
            crate::asarray(
                x2,
                Some(&pyo3::types::PyString::new(py, sorted.dtype().name())),
                None,
                None,
            )?
            .0
        }
    };
    py.detach(|| sorted.searchsorted(&values, right))
        .map(PyArray)
        .map_err(to_py)
}

/// The named tuples of the set functions, made once.
fn result_type<'py>(py: Python<'py>, name: &str, fields: &[&str]) -> PyResult<Bound<'py, PyAny>> {
    static TYPES: PyOnceLock<Py<pyo3::types::PyDict>> = PyOnceLock::new();
    let cache =
        TYPES.get_or_try_init(py, || Ok::<_, PyErr>(pyo3::types::PyDict::new(py).unbind()))?;
    let cache = cache.bind(py);
    if let Some(t) = cache.get_item(name)? {
        return Ok(t);
    }
    let t = py
        .import("collections")?
        .getattr("namedtuple")?
        .call1((name, fields.to_vec()))?;
    cache.set_item(name, &t)?;
    Ok(t)
}

fn unique(py: Python<'_>, x: &Array) -> PyResult<[PyArray; 4]> {
    let a = x.clone();
    let [v, i, inv, c] = py.detach(|| a.unique_all()).map_err(to_py)?;
    Ok([PyArray(v), PyArray(i), PyArray(inv), PyArray(c)])
}

#[pyfunction]
fn unique_all<'py>(py: Python<'py>, x: PyRef<'py, PyArray>) -> PyResult<Bound<'py, PyAny>> {
    let t = result_type(
        py,
        "UniqueAllResult",
        &["values", "indices", "inverse_indices", "counts"],
    )?;
    let [v, i, inv, c] = unique(py, &x.0)?;
    t.call1((v, i, inv, c))
}

#[pyfunction]
fn unique_counts<'py>(py: Python<'py>, x: PyRef<'py, PyArray>) -> PyResult<Bound<'py, PyAny>> {
    let t = result_type(py, "UniqueCountsResult", &["values", "counts"])?;
    let [v, _, _, c] = unique(py, &x.0)?;
    t.call1((v, c))
}

#[pyfunction]
fn unique_inverse<'py>(py: Python<'py>, x: PyRef<'py, PyArray>) -> PyResult<Bound<'py, PyAny>> {
    let t = result_type(py, "UniqueInverseResult", &["values", "inverse_indices"])?;
    let [v, _, inv, _] = unique(py, &x.0)?;
    t.call1((v, inv))
}

#[pyfunction]
fn unique_values(py: Python<'_>, x: PyRef<'_, PyArray>) -> PyResult<PyArray> {
    let [v, ..] = unique(py, &x.0)?;
    Ok(v)
}

#[pyfunction]
#[pyo3(signature = (x1, x2, /, *, invert=false))]
fn isin(
    py: Python<'_>,
    x1: &Bound<'_, PyAny>,
    x2: &Bound<'_, PyAny>,
    invert: bool,
) -> PyResult<PyArray> {
    let (a, b) = (crate::array_arg(x1)?, crate::array_arg(x2)?);
    py.detach(|| a.isin(&b, invert)).map(PyArray).map_err(to_py)
}

#[pyfunction]
#[pyo3(signature = (x, indices, /, *, axis=None))]
fn take(
    py: Python<'_>,
    x: PyRef<'_, PyArray>,
    indices: &Bound<'_, PyAny>,
    axis: Option<isize>,
) -> PyResult<PyArray> {
    let (a, i) = (x.0.clone(), crate::array_arg(indices)?);
    py.detach(|| a.take(&i, axis)).map(PyArray).map_err(to_py)
}

#[pyfunction]
#[pyo3(signature = (x, indices, /, *, axis=-1))]
fn take_along_axis(
    py: Python<'_>,
    x: PyRef<'_, PyArray>,
    indices: &Bound<'_, PyAny>,
    axis: isize,
) -> PyResult<PyArray> {
    let (a, i) = (x.0.clone(), crate::array_arg(indices)?);
    py.detach(|| a.take_along_axis(&i, axis))
        .map(PyArray)
        .map_err(to_py)
}

#[pyfunction]
fn nonzero<'py>(py: Python<'py>, x: PyRef<'py, PyArray>) -> PyResult<Bound<'py, PyTuple>> {
    let a = x.0.clone();
    let parts = py.detach(|| a.nonzero()).map_err(to_py)?;
    PyTuple::new(py, parts.into_iter().map(PyArray))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    for f in [
        wrap_pyfunction!(sort, m)?,
        wrap_pyfunction!(argsort, m)?,
        wrap_pyfunction!(searchsorted, m)?,
        wrap_pyfunction!(unique_all, m)?,
        wrap_pyfunction!(unique_counts, m)?,
        wrap_pyfunction!(unique_inverse, m)?,
        wrap_pyfunction!(unique_values, m)?,
        wrap_pyfunction!(isin, m)?,
        wrap_pyfunction!(take, m)?,
        wrap_pyfunction!(take_along_axis, m)?,
        wrap_pyfunction!(nonzero, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
