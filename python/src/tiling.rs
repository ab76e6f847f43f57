//! The array API's `tile`, `repeat`, `meshgrid`, `diff` and `tensordot`: thin wrappers over
//! dlarray's own (broadcast views reshaped, slices subtracted, one matmul).

use crate::{PyArray, to_py};
use dlarray::{Array, DType};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

#[pyfunction]
#[pyo3(signature = (x, repetitions, /))]
fn tile(py: Python<'_>, x: PyRef<'_, PyArray>, repetitions: Vec<usize>) -> PyResult<PyArray> {
    let a = x.0.clone();
    py.detach(|| a.tile(&repetitions))
        .map(PyArray)
        .map_err(to_py)
}

/// `repeat(x, repeats, /, *, axis=None)`: one count for every element, or one count per
/// element along `axis` (an integer array; the output's length is their sum).
#[pyfunction]
#[pyo3(signature = (x, repeats, /, *, axis=None))]
fn repeat(
    py: Python<'_>,
    x: PyRef<'_, PyArray>,
    repeats: &Bound<'_, PyAny>,
    axis: Option<isize>,
) -> PyResult<PyArray> {
    if let Ok(n) = repeats.extract::<usize>() {
        let a = x.0.clone();
        return py.detach(|| a.repeat(n, axis)).map(PyArray).map_err(to_py);
    }
    let r = crate::array_arg(repeats)?;
    if !r.dtype().is_integer() || r.ndim() > 1 {
        return Err(PyTypeError::new_err(
            "repeat: repeats is an integer or a 1-D integer array",
        ));
    }
    // Read in their own dtype (a device without 64-bit kernels refuses a cast to int64);
    // uint64 counts past i64::MAX are large, not negative.
    let counts: Vec<usize> = if r.dtype() == DType::U64 {
        let c = r.to_vec::<u64>().map_err(to_py)?;
        c.into_iter().map(|c| c as usize).collect()
    } else {
        r.to_i64_vec()
            .map_err(to_py)?
            .into_iter()
            .map(usize::try_from)
            .collect::<Result<_, _>>()
            .map_err(|_| PyValueError::new_err("repeat: a negative count"))?
    };
    let a = x.0.clone();
    py.detach(|| a.repeat_each(&counts, axis))
        .map(PyArray)
        .map_err(to_py)
}

#[pyfunction]
#[pyo3(signature = (*arrays, indexing="xy"))]
fn meshgrid<'py>(
    py: Python<'py>,
    arrays: Vec<PyRef<'py, PyArray>>,
    indexing: &str,
) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
    let xs: Vec<Array> = arrays.iter().map(|a| a.0.clone()).collect();
    let grids = py
        .detach(|| {
            let refs: Vec<&Array> = xs.iter().collect();
            Array::meshgrid(&refs, indexing)
        })
        .map_err(to_py)?;
    pyo3::types::PyTuple::new(py, grids.into_iter().map(PyArray))
}

#[pyfunction]
#[pyo3(signature = (x, /, *, axis=-1, n=1, prepend=None, append=None))]
fn diff(
    py: Python<'_>,
    x: PyRef<'_, PyArray>,
    axis: isize,
    n: usize,
    prepend: Option<&Bound<'_, PyAny>>,
    append: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let (pre, app) = (
        prepend.map(crate::array_arg).transpose()?,
        append.map(crate::array_arg).transpose()?,
    );
    let a = x.0.clone();
    py.detach(|| a.diff(n, axis, pre.as_ref(), app.as_ref()))
        .map(PyArray)
        .map_err(to_py)
}

/// `tensordot(x1, x2, /, *, axes=2)`: `axes` an integer N (the last N axes of `x1` against
/// the first N of `x2`) or two sequences of axes.
#[pyfunction]
#[pyo3(signature = (x1, x2, /, *, axes=None))]
fn tensordot(
    py: Python<'_>,
    x1: PyRef<'_, PyArray>,
    x2: PyRef<'_, PyArray>,
    axes: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let (a, b) = (x1.0.clone(), x2.0.clone());
    let (aa, ab): (Vec<isize>, Vec<isize>) = match axes {
        None => tail_head(&a, 2)?,
        Some(ax) => match ax.extract::<usize>() {
            Ok(n) => tail_head(&a, n)?,
            Err(_) => ax.extract().map_err(|_| {
                PyTypeError::new_err("tensordot: axes is an integer or two sequences of axes")
            })?,
        },
    };
    py.detach(|| a.tensordot(&b, &aa, &ab))
        .map(PyArray)
        .map_err(to_py)
}

#[pyfunction]
#[pyo3(signature = (x1, x2, /, *, axis=-1))]
fn vecdot(
    py: Python<'_>,
    x1: PyRef<'_, PyArray>,
    x2: PyRef<'_, PyArray>,
    axis: isize,
) -> PyResult<PyArray> {
    let (a, b) = (x1.0.clone(), x2.0.clone());
    py.detach(|| a.vecdot(&b, axis)).map(PyArray).map_err(to_py)
}

/// The last `n` axes of `a` and the first `n` of the other operand.
fn tail_head(a: &Array, n: usize) -> PyResult<(Vec<isize>, Vec<isize>)> {
    if n > a.ndim() {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "tensordot: axes={n} exceeds the first array's {} dimensions",
            a.ndim()
        )));
    }
    let nd = a.ndim() as isize;
    let n = n as isize;
    Ok(((nd - n..nd).collect(), (0..n).collect()))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    for f in [
        wrap_pyfunction!(tile, m)?,
        wrap_pyfunction!(repeat, m)?,
        wrap_pyfunction!(meshgrid, m)?,
        wrap_pyfunction!(diff, m)?,
        wrap_pyfunction!(tensordot, m)?,
        wrap_pyfunction!(vecdot, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
