//! The array API's joining, searching and cumulative functions: `concat`, `stack`,
//! `unstack`, `argmax`, `argmin`, `cumulative_sum`, `cumulative_prod`.

use crate::{PyArray, to_py};
use dlarray::Array;
use pyo3::prelude::*;

fn arrays(xs: &[Bound<'_, PyAny>]) -> PyResult<Vec<Array>> {
    xs.iter().map(crate::array_arg).collect()
}

/// `concat(arrays, /, *, axis=0)`; `axis=None` joins the flattened arrays.
#[pyfunction]
#[pyo3(signature = (arrays, /, *, axis=Some(0)))]
pub fn concat(
    py: Python<'_>,
    arrays: Vec<Bound<'_, PyAny>>,
    axis: Option<isize>,
) -> PyResult<PyArray> {
    let xs = self::arrays(&arrays)?;
    py.detach(|| {
        let flat;
        let xs = match axis {
            Some(_) => &xs,
            None => {
                flat = xs
                    .iter()
                    .map(|a| a.reshape(&[-1]))
                    .collect::<dlarray::Result<Vec<_>>>()?;
                &flat
            }
        };
        let refs: Vec<&Array> = xs.iter().collect();
        Array::concatenate(&refs, axis.unwrap_or(0))
    })
    .map(PyArray)
    .map_err(to_py)
}

/// `stack(arrays, /, *, axis=0)`.
#[pyfunction]
#[pyo3(signature = (arrays, /, *, axis=0))]
pub fn stack(py: Python<'_>, arrays: Vec<Bound<'_, PyAny>>, axis: isize) -> PyResult<PyArray> {
    let xs = self::arrays(&arrays)?;
    py.detach(|| Array::stack(&xs.iter().collect::<Vec<_>>(), axis))
        .map(PyArray)
        .map_err(to_py)
}

/// `unstack(x, /, *, axis=0)`: the views along `axis`, as a tuple.
#[pyfunction]
#[pyo3(signature = (x, /, *, axis=0))]
pub fn unstack<'py>(
    py: Python<'py>,
    x: PyRef<'py, PyArray>,
    axis: isize,
) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
    let a = &x.0;
    let k = dlarray::layout::normalize_axis(axis, a.ndim()).map_err(to_py)?;
    let n = a.shape()[k];
    let views = (0..n)
        .map(|i| a.index_axis(k as isize, i).map(PyArray).map_err(to_py))
        .collect::<PyResult<Vec<_>>>()?;
    pyo3::types::PyTuple::new(py, views)
}

fn arg(
    py: Python<'_>,
    x: &Array,
    axis: Option<isize>,
    keepdims: bool,
    max: bool,
) -> PyResult<PyArray> {
    py.detach(|| {
        let r = if max {
            x.argmax(axis)?
        } else {
            x.argmin(axis)?
        };
        if !keepdims {
            return Ok(r);
        }
        let axes = axis.map_or(dlarray::Axes::All, |a| dlarray::Axes::These(vec![a]));
        crate::functions::keep(x, r, &axes)
    })
    .map(PyArray)
    .map_err(to_py)
}

/// `argmax(x, /, *, axis=None, keepdims=False)`.
#[pyfunction]
#[pyo3(signature = (x, /, *, axis=None, keepdims=false))]
pub fn argmax(
    py: Python<'_>,
    x: PyRef<'_, PyArray>,
    axis: Option<isize>,
    keepdims: bool,
) -> PyResult<PyArray> {
    arg(py, &x.0, axis, keepdims, true)
}

/// `argmin(x, /, *, axis=None, keepdims=False)`.
#[pyfunction]
#[pyo3(signature = (x, /, *, axis=None, keepdims=false))]
pub fn argmin(
    py: Python<'_>,
    x: PyRef<'_, PyArray>,
    axis: Option<isize>,
    keepdims: bool,
) -> PyResult<PyArray> {
    arg(py, &x.0, axis, keepdims, false)
}

/// `cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False)`: `axis` may be
/// omitted only for one-dimensional arrays, as the array API says.
#[pyfunction]
#[pyo3(signature = (x, /, *, axis=None, dtype=None, include_initial=false))]
pub fn cumulative_sum(
    py: Python<'_>,
    x: PyRef<'_, PyArray>,
    axis: Option<isize>,
    dtype: Option<&Bound<'_, PyAny>>,
    include_initial: bool,
) -> PyResult<PyArray> {
    let dtype = dtype.map(crate::dtype_arg::dtype_arg).transpose()?;
    cumulative(py, &x.0, axis, dtype, include_initial, false)
}

/// `cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False)`, as
/// `cumulative_sum`.
#[pyfunction]
#[pyo3(signature = (x, /, *, axis=None, dtype=None, include_initial=false))]
pub fn cumulative_prod(
    py: Python<'_>,
    x: PyRef<'_, PyArray>,
    axis: Option<isize>,
    dtype: Option<&Bound<'_, PyAny>>,
    include_initial: bool,
) -> PyResult<PyArray> {
    let dtype = dtype.map(crate::dtype_arg::dtype_arg).transpose()?;
    cumulative(py, &x.0, axis, dtype, include_initial, true)
}

/// The running sum (or product) of the array API: `include_initial` puts the identity
/// first.
pub(crate) fn cumulative(
    py: Python<'_>,
    x: &Array,
    axis: Option<isize>,
    dtype: Option<dlarray::DType>,
    include_initial: bool,
    product: bool,
) -> PyResult<PyArray> {
    if axis.is_none() && x.ndim() != 1 {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "a cumulative sum or product needs axis for arrays of more than one dimension",
        ));
    }
    let axis = axis.unwrap_or(0);
    let a = x.clone();
    py.detach(|| {
        let a = match dtype {
            Some(d) => a.astype(d)?,
            None => a,
        };
        let s = if product {
            a.cumprod(Some(axis))?
        } else {
            a.cumsum(Some(axis))?
        };
        let s = match dtype {
            Some(d) => s.astype(d)?,
            None => s,
        };
        if !include_initial {
            return Ok(s);
        }
        let k = dlarray::layout::normalize_axis(axis, a.ndim())?;
        let mut shape = s.shape().to_vec();
        shape[k] = 1;
        // On the result's device: `concatenate` places its result on the first array's.
        let place = dlarray::Sharding::single(&s.devices()[0]);
        let first = dlarray::Scalar::Int(product as i128);
        let initial = Array::full_sharded(&shape, first, s.dtype(), &place)?;
        Array::concatenate(&[&initial, &s], k as isize)
    })
    .map(PyArray)
    .map_err(to_py)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    for f in [
        wrap_pyfunction!(concat, m)?,
        wrap_pyfunction!(stack, m)?,
        wrap_pyfunction!(unstack, m)?,
        wrap_pyfunction!(argmax, m)?,
        wrap_pyfunction!(argmin, m)?,
        wrap_pyfunction!(cumulative_sum, m)?,
        wrap_pyfunction!(cumulative_prod, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
