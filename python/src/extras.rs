//! More of the array API namespace, composed in the library from ops every backend has:
//! constants, `square`, `positive`, `reciprocal`, `trunc`, `isinf`, `tan`, `log2`, `log10`,
//! `clip`, `arange`, `empty`, `empty_like`, `broadcast_to`, `broadcast_arrays`,
//! `broadcast_shapes`, `flip`, `moveaxis`, `roll`, `tril`, `triu`, `count_nonzero`,
//! `result_type`, `can_cast`, `isdtype`.

use crate::operand::{operand, weak_scalar};
use crate::{PyArray, to_py};
use dlarray::{Array, BinaryOp, DType};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

type R = dlarray::Result<Array>;

fn run(py: Python<'_>, f: impl FnOnce() -> R + Send) -> PyResult<PyArray> {
    py.detach(f).map(PyArray).map_err(to_py)
}

#[pyfunction]
pub fn square(py: Python<'_>, x: PyRef<'_, PyArray>) -> PyResult<PyArray> {
    let a = x.0.clone();
    run(py, || a.binary(BinaryOp::Mul, &a))
}

#[pyfunction]
pub fn positive(x: PyRef<'_, PyArray>) -> PyArray {
    PyArray(x.0.clone())
}

#[pyfunction]
pub fn reciprocal(py: Python<'_>, x: PyRef<'_, PyArray>) -> PyResult<PyArray> {
    let a = x.0.clone();
    run(py, || 1.0 / &a)
}

#[pyfunction]
pub fn trunc(py: Python<'_>, x: PyRef<'_, PyArray>) -> PyResult<PyArray> {
    let a = x.0.clone();
    run(py, || a.trunc())
}

#[pyfunction]
pub fn isinf(py: Python<'_>, x: PyRef<'_, PyArray>) -> PyResult<PyArray> {
    let a = x.0.clone();
    run(py, || a.isinf())
}

#[pyfunction]
pub fn tan(py: Python<'_>, x: PyRef<'_, PyArray>) -> PyResult<PyArray> {
    let a = x.0.clone();
    run(py, || a.tan())
}

#[pyfunction]
pub fn log2(py: Python<'_>, x: PyRef<'_, PyArray>) -> PyResult<PyArray> {
    let a = x.0.clone();
    run(py, || a.log2())
}

#[pyfunction]
pub fn log10(py: Python<'_>, x: PyRef<'_, PyArray>) -> PyResult<PyArray> {
    let a = x.0.clone();
    run(py, || a.log10())
}

#[pyfunction]
#[pyo3(signature = (x, /, min=None, max=None))]
pub fn clip(
    py: Python<'_>,
    x: PyRef<'_, PyArray>,
    min: Option<&Bound<'_, PyAny>>,
    max: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    clipped(py, &x.0, min, max)
}

/// `clip(x, min, max)` (function and method): each bound a Python scalar (weak, exact for
/// any int: `Array::clip_to`) or an array (`maximum` / `minimum`, broadcast, as the 2023.12
/// array API allows and NumPy does).
pub(crate) fn clipped(
    py: Python<'_>,
    x: &Array,
    min: Option<&Bound<'_, PyAny>>,
    max: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let min = min.filter(|b| !b.is_none());
    let max = max.filter(|b| !b.is_none());
    // Array bounds: all three cast first to the dtype they promote to (maximum and minimum
    // are exact in it), so that where a device holding one has no 64-bit kernels they
    // compute in 32 bits, as any op there (step by step, `x` met one bound as float64 and
    // the next one's device refused that). `None` marks a Python scalar bound.
    let mut limits: Vec<(BinaryOp, &Bound<'_, PyAny>, Option<Array>)> = Vec::with_capacity(2);
    for (bound, op) in [(min, BinaryOp::Maximum), (max, BinaryOp::Minimum)] {
        let Some(b) = bound else { continue };
        let array = match weak_scalar(b, x.dtype())? {
            Some(_) => None,
            None => Some(operand(x, b)?),
        };
        limits.push((op, b, array));
    }
    let mut arrays: Vec<&Array> = vec![x];
    arrays.extend(limits.iter().filter_map(|l| l.2.as_ref()));
    let dtype = Array::promoted_on_devices(&arrays);
    let cast = |a: &Array| -> PyResult<Array> {
        if a.dtype() == dtype {
            Ok(a.clone())
        } else {
            Ok(run(py, || a.astype(dtype))?.0)
        }
    };
    // In NumPy's order, `minimum(maximum(x, min), max)`: `max` wins where min > max.
    let mut a = cast(x)?;
    for (op, b, array) in limits {
        a = match (array, weak_scalar(b, a.dtype())?) {
            (Some(o), _) => {
                let o = cast(&o)?;
                run(py, || a.binary(op, &o))?.0
            }
            (None, Some(v)) => {
                let (lo, hi) = if op == BinaryOp::Maximum {
                    (Some(v), None)
                } else {
                    (None, Some(v))
                };
                run(py, || a.clip_to(lo, hi))?.0
            }
            // A scalar stays one whatever the dtype it is read for.
            (None, None) => a,
        };
    }
    Ok(PyArray(a))
}

/// `arange(start, /, stop=None, step=1, *, dtype=None, device=None)`: integers when every
/// bound is one (int64), else float64.
#[pyfunction]
#[pyo3(signature = (start, /, stop=None, step=None, *, dtype=None, device=None))]
pub fn arange(
    py: Python<'_>,
    start: &Bound<'_, PyAny>,
    stop: Option<&Bound<'_, PyAny>>,
    step: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let all_int = [Some(start), stop, step]
        .into_iter()
        .flatten()
        .all(|v| v.is_instance_of::<pyo3::types::PyInt>());
    let f = |v: &Bound<'_, PyAny>| v.extract::<f64>();
    let (lo, hi) = match stop {
        Some(s) => (f(start)?, f(s)?),
        None => (0.0, f(start)?),
    };
    let st = step.map(f).transpose()?.unwrap_or(1.0);
    let default = if all_int { DType::I64 } else { DType::F64 };
    let dt = crate::functions::dtype_for(dtype, default, device)?;
    if all_int && dtype.is_none() && dt != default {
        // The device's 32-bit default (wgpu) holds the bounds or raises, as JAX with x64
        // disabled: NumPy's wrap-around applies to a dtype asked for, not to one we chose.
        for v in [Some(start), stop].into_iter().flatten() {
            match crate::operand::py_int(v)? {
                Ok(i) => crate::convert::int_fits(i, dt)?,
                Err(_) => return Err(crate::convert::too_large()),
            }
        }
    }
    let a = Array::arange(lo, hi, st, dt).map_err(to_py)?;
    crate::functions::placed(py, a, device)
}

/// `empty(shape, *, dtype=None, device=None)`: zeros (dlarray never hands out unwritten
/// memory).
#[pyfunction]
#[pyo3(signature = (shape, *, dtype=None, device=None))]
pub fn empty(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    crate::functions::zeros(py, shape, dtype, device)
}

/// `empty_like(x, /, *, dtype=None, device=None)`: zeros like `x`.
#[pyfunction]
#[pyo3(signature = (x, /, *, dtype=None, device=None))]
pub fn empty_like(
    py: Python<'_>,
    x: PyRef<'_, PyArray>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    crate::functions::zeros_like(py, x, dtype, device)
}

#[pyfunction]
#[pyo3(signature = (x, /, shape))]
pub fn broadcast_to(x: PyRef<'_, PyArray>, shape: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    let shape = crate::functions::shape_arg(shape)?;
    x.0.broadcast_to(&shape).map(PyArray).map_err(to_py)
}

fn broadcast(shapes: &[Vec<usize>]) -> PyResult<Vec<usize>> {
    let mut out: Vec<usize> = Vec::new();
    for s in shapes {
        out = dlarray::layout::broadcast_shapes("broadcast_shapes", &out, s)
            .map_err(to_py)?
            .to_vec();
    }
    Ok(out)
}

#[pyfunction]
#[pyo3(signature = (*shapes))]
pub fn broadcast_shapes<'py>(
    py: Python<'py>,
    shapes: Vec<Vec<usize>>,
) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
    pyo3::types::PyTuple::new(py, broadcast(&shapes)?)
}

#[pyfunction]
#[pyo3(signature = (*arrays))]
pub fn broadcast_arrays<'py>(
    py: Python<'py>,
    arrays: Vec<PyRef<'py, PyArray>>,
) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
    let shapes: Vec<Vec<usize>> = arrays.iter().map(|a| a.0.shape().to_vec()).collect();
    let shape = broadcast(&shapes)?;
    let out = arrays
        .iter()
        .map(|a| a.0.broadcast_to(&shape).map(PyArray).map_err(to_py))
        .collect::<PyResult<Vec<_>>>()?;
    pyo3::types::PyTuple::new(py, out)
}

#[pyfunction]
#[pyo3(signature = (x, /, *, axis=None))]
pub fn flip(x: PyRef<'_, PyArray>, axis: Option<&Bound<'_, PyAny>>) -> PyResult<PyArray> {
    let axes = crate::array::axes_arg(axis)?;
    x.0.flip(axes).map(PyArray).map_err(to_py)
}

fn axes_list(v: &Bound<'_, PyAny>) -> PyResult<Vec<isize>> {
    match v.extract::<isize>() {
        Ok(i) => Ok(vec![i]),
        Err(_) => v.extract::<Vec<isize>>(),
    }
}

#[pyfunction]
#[pyo3(signature = (x, source, destination, /))]
pub fn moveaxis(
    x: PyRef<'_, PyArray>,
    source: &Bound<'_, PyAny>,
    destination: &Bound<'_, PyAny>,
) -> PyResult<PyArray> {
    let nd = x.0.ndim();
    let norm = |a: isize| dlarray::layout::normalize_axis(a, nd).map_err(to_py);
    let src = axes_list(source)?
        .into_iter()
        .map(norm)
        .collect::<PyResult<Vec<_>>>()?;
    let dst = axes_list(destination)?
        .into_iter()
        .map(norm)
        .collect::<PyResult<Vec<_>>>()?;
    if src.len() != dst.len() {
        return Err(PyValueError::new_err(
            "source and destination must have the same number of elements",
        ));
    }
    let mut order: Vec<usize> = (0..nd).filter(|k| !src.contains(k)).collect();
    let mut pairs: Vec<(usize, usize)> = dst.into_iter().zip(src).collect();
    pairs.sort_unstable();
    for (d, s) in pairs {
        order.insert(d.min(order.len()), s);
    }
    x.0.permute(&order).map(PyArray).map_err(to_py)
}

#[pyfunction]
#[pyo3(signature = (x, /, shift, *, axis=None))]
pub fn roll(
    py: Python<'_>,
    x: PyRef<'_, PyArray>,
    shift: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let shifts = axes_list(shift)?;
    let axes = axis.map(axes_list).transpose()?;
    let a = x.0.clone();
    run(py, move || match axes {
        None => a.roll(shifts.iter().sum(), None),
        Some(axes) => {
            let mut r = a;
            for (i, &ax) in axes.iter().enumerate() {
                let s = if shifts.len() == 1 {
                    shifts[0]
                } else {
                    shifts.get(i).copied().unwrap_or(0)
                };
                r = r.roll(s, Some(ax))?;
            }
            Ok(r)
        }
    })
}

#[pyfunction]
#[pyo3(signature = (x, /, *, k=0))]
pub fn tril(py: Python<'_>, x: PyRef<'_, PyArray>, k: isize) -> PyResult<PyArray> {
    let a = x.0.clone();
    run(py, move || a.triangle(k, false))
}

#[pyfunction]
#[pyo3(signature = (x, /, *, k=0))]
pub fn triu(py: Python<'_>, x: PyRef<'_, PyArray>, k: isize) -> PyResult<PyArray> {
    let a = x.0.clone();
    run(py, move || a.triangle(k, true))
}

#[pyfunction]
#[pyo3(signature = (x, /, *, axis=None, keepdims=false))]
pub fn count_nonzero(
    py: Python<'_>,
    x: PyRef<'_, PyArray>,
    axis: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
) -> PyResult<PyArray> {
    let axes = crate::array::axes_arg(axis)?;
    let a = x.0.clone();
    run(py, move || {
        let zero = dlarray::Array::full_sharded(
            &[],
            dlarray::Scalar::Int(0),
            a.dtype(),
            &dlarray::Sharding::single(&a.devices()[0]),
        )?;
        let nz = a.binary(BinaryOp::Ne, &zero)?;
        nz.reduce(dlarray::ReduceOp::Sum, axes, keepdims)
    })
}

/// The dtype of an array or dtype argument.
fn dtype_of(v: &Bound<'_, PyAny>) -> PyResult<DType> {
    match v.cast::<PyArray>() {
        Ok(a) => Ok(a.get().0.dtype()),
        Err(_) => crate::dtype_arg::dtype_arg(v),
    }
}

#[pyfunction]
#[pyo3(signature = (*arrays_and_dtypes))]
pub fn result_type(
    py: Python<'_>,
    arrays_and_dtypes: Vec<Bound<'_, PyAny>>,
) -> PyResult<Py<crate::dtype_arg::PyDType>> {
    use pyo3::types::{PyBool, PyComplex, PyFloat, PyInt};
    // Python scalars are weak (NEP 50, the array API since 2024.12): they take the kind's
    // place against the arrays' and dtypes' result, which they need beside them.
    let (mut typed, mut weak) = (Vec::new(), Vec::new());
    for v in &arrays_and_dtypes {
        if v.is_instance_of::<PyBool>() {
            weak.push(dlarray::Scalar::Bool(v.extract()?));
        } else if v.is_instance_of::<PyInt>() {
            weak.push(dlarray::Scalar::Int(v.extract::<i64>().unwrap_or(0) as i128));
        } else if v.is_instance_of::<PyFloat>() {
            weak.push(dlarray::Scalar::Float(v.extract()?));
        } else if v.is_instance_of::<PyComplex>() {
            weak.push(dlarray::Scalar::Complex(dlarray::dtype::Complex64::new(
                0.0, 0.0,
            )));
        } else {
            typed.push(dtype_of(v)?);
        }
    }
    let mut it = typed.into_iter();
    let first = it.next().ok_or_else(|| {
        PyValueError::new_err("at least one array or dtype is required (scalars alone have none)")
    })?;
    let mut d = it.fold(first, DType::promote);
    for s in weak {
        d = dlarray::array::scalar_ops::weak_scalar_dtype(d, s);
    }
    crate::dtype_arg::dtype_obj(py, d)
}

#[pyfunction]
#[pyo3(signature = (from_, to, /))]
pub fn can_cast(from_: &Bound<'_, PyAny>, to: &Bound<'_, PyAny>) -> PyResult<bool> {
    let (f, t) = (dtype_of(from_)?, crate::dtype_arg::dtype_arg(to)?);
    Ok(DType::promote(f, t) == t)
}

#[pyfunction]
#[pyo3(signature = (dtype, kind))]
pub fn isdtype(dtype: &Bound<'_, PyAny>, kind: &Bound<'_, PyAny>) -> PyResult<bool> {
    let d = crate::dtype_arg::dtype_arg(dtype)?;
    if let Ok(kinds) = kind.extract::<Vec<Bound<'_, PyAny>>>()
        && !kind.is_instance_of::<pyo3::types::PyString>()
    {
        for k in kinds {
            if isdtype(dtype, &k)? {
                return Ok(true);
            }
        }
        return Ok(false);
    }
    if let Ok(name) = kind.extract::<String>() {
        use dlarray::dtype::Kind;
        let k = d.kind();
        let known = match name.as_str() {
            "bool" => Some(k == Kind::Bool),
            "signed integer" => Some(k == Kind::Int),
            "unsigned integer" => Some(k == Kind::UInt),
            "integral" => Some(matches!(k, Kind::Int | Kind::UInt)),
            "real floating" => Some(k == Kind::Float),
            "complex floating" => Some(k == Kind::Complex),
            "numeric" => Some(k != Kind::Bool),
            _ => None,
        };
        if let Some(b) = known {
            return Ok(b);
        }
    }
    Ok(crate::dtype_arg::dtype_arg(kind)? == d)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("e", std::f64::consts::E)?;
    m.add("pi", std::f64::consts::PI)?;
    m.add("inf", f64::INFINITY)?;
    m.add("nan", f64::NAN)?;
    m.add("newaxis", m.py().None())?;
    // The standard's version whose rules the module follows (tuples from `devices()`,
    // `unstack`, `broadcast_arrays`).
    m.add("__array_api_version__", "2025.12")?;
    for f in [
        wrap_pyfunction!(square, m)?,
        wrap_pyfunction!(positive, m)?,
        wrap_pyfunction!(reciprocal, m)?,
        wrap_pyfunction!(trunc, m)?,
        wrap_pyfunction!(isinf, m)?,
        wrap_pyfunction!(tan, m)?,
        wrap_pyfunction!(log2, m)?,
        wrap_pyfunction!(log10, m)?,
        wrap_pyfunction!(clip, m)?,
        wrap_pyfunction!(arange, m)?,
        wrap_pyfunction!(empty, m)?,
        wrap_pyfunction!(empty_like, m)?,
        wrap_pyfunction!(broadcast_to, m)?,
        wrap_pyfunction!(broadcast_shapes, m)?,
        wrap_pyfunction!(broadcast_arrays, m)?,
        wrap_pyfunction!(flip, m)?,
        wrap_pyfunction!(moveaxis, m)?,
        wrap_pyfunction!(roll, m)?,
        wrap_pyfunction!(tril, m)?,
        wrap_pyfunction!(triu, m)?,
        wrap_pyfunction!(count_nonzero, m)?,
        wrap_pyfunction!(result_type, m)?,
        wrap_pyfunction!(can_cast, m)?,
        wrap_pyfunction!(isdtype, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
