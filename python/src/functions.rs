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

pub(crate) fn dtype_or(dtype: Option<&Bound<'_, PyAny>>, default: DType) -> PyResult<DType> {
    dtype.map_or(Ok(default), dtype_arg)
}

/// The device a new array goes to: `device=`, else the default device.
pub(crate) fn target_device(device: Option<&Bound<'_, PyAny>>) -> PyResult<dlarray::Device> {
    match device {
        Some(d) => device_arg(d),
        None => dlarray::default_device().map_err(to_py),
    }
}

/// `dtype=`, else NumPy's `default` as the array's device computes it: float32 for float64
/// on a device without 64-bit kernels (wgpu), as JAX's defaults with x64 disabled; the
/// array API lets default dtypes depend on the device (`default_dtypes(device=)`).
pub(crate) fn dtype_for(
    dtype: Option<&Bound<'_, PyAny>>,
    default: DType,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<DType> {
    match dtype {
        Some(d) => dtype_arg(d),
        None => Ok(target_device(device)?.default_dtype(default)),
    }
}

/// The sharding new arrays get: `device=`, else the default device.
pub(crate) fn place(device: Option<&Bound<'_, PyAny>>) -> PyResult<Sharding> {
    Ok(Sharding::single(&target_device(device)?))
}

/// A shape: an int or a sequence of ints, none negative (NumPy's ValueError, not the
/// OverflowError of a conversion to an unsigned integer; a negative int alone was a
/// TypeError about sequences).
pub(crate) fn shape_arg(shape: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    let dims = match shape.extract::<i64>() {
        Ok(n) => vec![n],
        Err(_) => shape.extract::<Vec<i64>>()?,
    };
    dims.into_iter()
        .map(|n| {
            usize::try_from(n).map_err(|_| {
                pyo3::exceptions::PyValueError::new_err("negative dimensions are not allowed")
            })
        })
        .collect()
}

/// A Python scalar as a dlarray scalar, and `dtype` or else the dtype NumPy infers for it.
/// An int past i128 fills only a float or complex dtype (NumPy's object arrays aside).
fn scalar_arg(v: &Bound<'_, PyAny>, dtype: Option<DType>) -> PyResult<(Scalar, DType)> {
    let (s, inferred) = if v.is_instance_of::<PyBool>() {
        (Scalar::Bool(v.extract()?), DType::Bool)
    } else if v.is_instance_of::<PyInt>() {
        match crate::operand::py_int(v)? {
            Ok(i) => (Scalar::Int(i), DType::I64),
            Err(f) if dtype.is_some_and(DType::is_inexact) => (Scalar::Float(f), DType::F64),
            Err(_) => return Err(crate::convert::too_large()),
        }
    } else if v.is_instance_of::<PyFloat>() {
        (Scalar::Float(v.extract()?), DType::F64)
    } else if let Ok(c) = v.cast::<pyo3::types::PyComplex>() {
        let c = dlarray::dtype::Complex64::new(c.real(), c.imag());
        (Scalar::Complex(c), DType::Complex128)
    } else {
        return Err(PyTypeError::new_err(
            "fill_value must be a Python bool, int, float or complex",
        ));
    };
    Ok((s, dtype.unwrap_or(inferred)))
}

/// An int fill value must fit an integer dtype, as NumPy's `full(2, 300, dtype=uint8)`
/// refuses (it gave 44); floats and complex numbers cast, as there.
fn fill_fits(value: Scalar, dtype: DType) -> PyResult<()> {
    match value {
        Scalar::Int(i) => crate::convert::int_fits(i, dtype),
        _ => Ok(()),
    }
}

fn full_on(
    py: Python<'_>,
    shape: &[usize],
    value: Scalar,
    dtype: DType,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    fill_fits(value, dtype)?;
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
        dtype_for(dtype, DType::F64, device)?,
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
        dtype_for(dtype, DType::F64, device)?,
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
    let given = dtype.map(dtype_arg).transpose()?;
    let (v, mut dtype) = scalar_arg(fill_value, given)?;
    if given.is_none() {
        dtype = target_device(device)?.default_dtype(dtype);
    }
    full_on(py, &shape_arg(shape)?, v, dtype, device)
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
    fill_fits(v, dt)?;
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
    let (v, _) = scalar_arg(fill_value, Some(dtype_or(dtype, x.0.dtype())?))?;
    like(py, &x, Some(v), dtype, device)
}

/// Moves a freshly made host array to `device=` when given.
pub(crate) fn placed(
    py: Python<'_>,
    a: Array,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
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
    let dt = dtype_for(dtype, DType::F64, device)?;
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
    let dt = dtype_for(dtype, DType::F64, device)?;
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
    floor => Array::floor,
    ceil => Array::ceil,
    round => Array::round,
    sign => Array::sign,
    bitwise_invert => Array::bitwise_invert,
    asin => Array::asin,
    acos => Array::acos,
    atan => Array::atan,
    sinh => Array::sinh,
    cosh => Array::cosh,
    asinh => Array::asinh,
    acosh => Array::acosh,
    atanh => Array::atanh,
    expm1 => Array::expm1,
    log1p => Array::log1p,
    signbit => Array::signbit,
    conj => Array::conj,
    real => Array::real,
    imag => Array::imag,
);

/// `op(x1, x2)` where either side may be a Python scalar or any array (as the 2024.12 array
/// API allows), with the usual promotion.
fn binary_fn(
    py: Python<'_>,
    op: dlarray::BinaryOp,
    x1: &Bound<'_, PyAny>,
    x2: &Bound<'_, PyAny>,
) -> PyResult<PyArray> {
    if let Ok(a) = x1.cast::<PyArray>() {
        return a.get().bin(py, op, x2, false);
    }
    if let Ok(b) = x2.cast::<PyArray>() {
        return b.get().bin(py, op, x1, true);
    }
    let a = crate::asarray(x1, None, None, None)?;
    a.bin(py, op, x2, false)
}

macro_rules! binary {
    ($($name:ident => $op:ident),* $(,)?) => {$(
        #[pyfunction]
        pub fn $name(py: Python<'_>, x1: &Bound<'_, PyAny>, x2: &Bound<'_, PyAny>) -> PyResult<PyArray> {
            binary_fn(py, dlarray::BinaryOp::$op, x1, x2)
        }
    )*};
}
binary!(
    add => Add, subtract => Sub, multiply => Mul, divide => Div, pow => Pow,
    maximum => Maximum, minimum => Minimum, equal => Eq, not_equal => Ne, less => Lt,
    less_equal => Le, greater => Gt, greater_equal => Ge, logical_and => LogicalAnd,
    logical_or => LogicalOr, logical_xor => LogicalXor, bitwise_and => BitwiseAnd,
    bitwise_or => BitwiseOr, bitwise_xor => BitwiseXor, bitwise_left_shift => LeftShift,
    bitwise_right_shift => RightShift, floor_divide => FloorDivide, remainder => Remainder,
    atan2 => Atan2, copysign => Copysign, hypot => Hypot, logaddexp => Logaddexp,
    nextafter => Nextafter,
);

/// An operand of `where`: an array as it is, a Python scalar weakly typed by `other` (the
/// array on the other side, when there is one), as NEP 50 promotes it: the array's dtype
/// unless the scalar is of a higher kind (an int beside bools is int64, a float beside
/// integers float64), and 32 bits where a device holding one of the arrays (`cond` too: the
/// result may go there) has no 64-bit kernels, as any op's promotion there.
fn where_operand(x: &Bound<'_, PyAny>, other: &Bound<'_, PyAny>, cond: &Array) -> PyResult<Array> {
    if let Ok(a) = x.cast::<PyArray>() {
        return Ok(a.get().0.clone());
    }
    let dtype = match other.cast::<PyArray>() {
        Ok(o) => {
            let o = &o.get().0;
            match crate::operand::weak_scalar(x, o.dtype())? {
                Some(v) => {
                    let d = dlarray::array::scalar_ops::weak_scalar_dtype(o.dtype(), v);
                    Some(if d == o.dtype() {
                        d
                    } else {
                        Array::on_devices_of(&[o, cond], d)
                    })
                }
                None => None,
            }
        }
        Err(_) => None,
    };
    let name = dtype.map(|d| pyo3::types::PyString::new(x.py(), d.name()));
    Ok(crate::asarray(x, name.as_ref().map(|d| d.as_any()), None, None)?.0)
}

/// `where(condition, x1, x2)`: `x1` where `condition` holds, else `x2`, broadcast together.
#[pyfunction]
#[pyo3(name = "where")]
pub fn where_(
    py: Python<'_>,
    condition: &Bound<'_, PyAny>,
    x1: &Bound<'_, PyAny>,
    x2: &Bound<'_, PyAny>,
) -> PyResult<PyArray> {
    let c = crate::array_arg(condition)?;
    let (a, b) = (where_operand(x1, x2, &c)?, where_operand(x2, x1, &c)?);
    py.detach(|| c.where_cond(&a, &b))
        .map(PyArray)
        .map_err(to_py)
}

/// The reduced array with the reduced axes put back as size 1 (`keepdims=True`).
pub(crate) fn keep(x: &Array, r: Array, axes: &dlarray::Axes) -> dlarray::Result<Array> {
    let nd = x.ndim();
    let reduced: Vec<usize> = match axes {
        dlarray::Axes::All => (0..nd).collect(),
        dlarray::Axes::These(v) => v
            .iter()
            .map(|&a| dlarray::layout::normalize_axis(a, nd))
            .collect::<dlarray::Result<_>>()?,
    };
    let shape: Vec<isize> = (0..nd)
        .map(|k| {
            if reduced.contains(&k) {
                1
            } else {
                x.shape()[k] as isize
            }
        })
        .collect();
    r.reshape(&shape)
}

macro_rules! reduction {
    ($($name:ident => $f:expr),* $(,)?) => {$(
        #[pyfunction]
        #[pyo3(signature = (x, /, *, axis=None, keepdims=false))]
        pub fn $name(
            py: Python<'_>,
            x: PyRef<'_, PyArray>,
            axis: Option<&Bound<'_, PyAny>>,
            keepdims: bool,
        ) -> PyResult<PyArray> {
            let axes = crate::array::axes_arg(axis)?;
            let a = x.0.clone();
            let f: fn(&Array, dlarray::Axes) -> dlarray::Result<Array> = $f;
            py.detach(|| {
                let r = f(&a, axes.clone())?;
                if keepdims { keep(&a, r, &axes) } else { Ok(r) }
            })
            .map(PyArray)
            .map_err(to_py)
        }
    )*};
}
reduction!(
    max => |a, ax| a.max(ax),
    min => |a, ax| a.min(ax),
    mean => |a, ax| a.mean(ax),
    any => |a, ax| a.any(ax),
    all => |a, ax| a.all(ax),
);

macro_rules! accumulation {
    ($($name:ident => $f:expr),* $(,)?) => {$(
        /// The array API's form: `dtype=` converts `x` first, accumulates in it and returns it.
        #[pyfunction]
        #[pyo3(signature = (x, /, *, axis=None, dtype=None, keepdims=false))]
        pub fn $name(
            py: Python<'_>,
            x: PyRef<'_, PyArray>,
            axis: Option<&Bound<'_, PyAny>>,
            dtype: Option<&Bound<'_, PyAny>>,
            keepdims: bool,
        ) -> PyResult<PyArray> {
            let axes = crate::array::axes_arg(axis)?;
            let dtype = dtype.map(dtype_arg).transpose()?;
            let a = x.0.clone();
            let f: fn(&Array, dlarray::Axes) -> dlarray::Result<Array> = $f;
            py.detach(|| {
                let src = match dtype {
                    Some(d) => a.astype(d)?,
                    None => a.clone(),
                };
                let r = f(&src, axes.clone())?;
                // An integer `dtype` narrower than 64 bits is the result's too (the sum widens
                // small integers; the narrowing wraps as accumulating in `dtype` would).
                let r = match dtype {
                    Some(d) if r.dtype() != d => r.astype(d)?,
                    _ => r,
                };
                if keepdims { keep(&a, r, &axes) } else { Ok(r) }
            })
            .map(PyArray)
            .map_err(to_py)
        }
    )*};
}
accumulation!(sum => |a, ax| a.sum(ax), prod => |a, ax| a.prod(ax));

/// `var` or `std` of `x` with the array API's keywords.
fn spread(
    py: Python<'_>,
    x: &PyArray,
    axis: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
    f: impl Fn(&Array, dlarray::Axes) -> dlarray::Result<Array> + Send + Sync,
) -> PyResult<PyArray> {
    let axes = crate::array::axes_arg(axis)?;
    let a = x.0.clone();
    py.detach(|| {
        let r = f(&a, axes.clone())?;
        if keepdims { keep(&a, r, &axes) } else { Ok(r) }
    })
    .map(PyArray)
    .map_err(to_py)
}

#[pyfunction]
#[pyo3(signature = (x, /, *, axis=None, correction=0.0, keepdims=false))]
pub fn var(
    py: Python<'_>,
    x: PyRef<'_, PyArray>,
    axis: Option<&Bound<'_, PyAny>>,
    correction: f64,
    keepdims: bool,
) -> PyResult<PyArray> {
    spread(py, &x, axis, keepdims, |a, ax| a.var(ax, correction))
}

#[pyfunction]
#[pyo3(name = "std", signature = (x, /, *, axis=None, correction=0.0, keepdims=false))]
pub fn std_dev(
    py: Python<'_>,
    x: PyRef<'_, PyArray>,
    axis: Option<&Bound<'_, PyAny>>,
    correction: f64,
    keepdims: bool,
) -> PyResult<PyArray> {
    spread(py, &x, axis, keepdims, |a, ax| a.std(ax, correction))
}

#[pyfunction]
pub fn matmul(py: Python<'_>, x1: PyRef<'_, PyArray>, x2: PyRef<'_, PyArray>) -> PyResult<PyArray> {
    let (a, b) = (x1.0.clone(), x2.0.clone());
    py.detach(|| a.matmul(&b)).map(PyArray).map_err(to_py)
}

#[pyfunction]
#[pyo3(signature = (x, /, shape, *, copy=None))]
pub fn reshape(x: PyRef<'_, PyArray>, shape: Vec<isize>, copy: Option<bool>) -> PyResult<PyArray> {
    let r = x.0.reshape(&shape).map_err(to_py)?;
    match copy {
        Some(true) => r.deep_copy().map(PyArray).map_err(to_py),
        _ => Ok(PyArray(r)),
    }
}

#[pyfunction]
pub fn permute_dims(x: PyRef<'_, PyArray>, axes: Vec<usize>) -> PyResult<PyArray> {
    x.0.permute(&axes).map(PyArray).map_err(to_py)
}

#[pyfunction]
pub fn matrix_transpose(x: PyRef<'_, PyArray>) -> PyResult<PyArray> {
    x.0.matrix_transpose().map(PyArray).map_err(to_py)
}

#[pyfunction]
#[pyo3(signature = (x, /, axis))]
pub fn squeeze(x: PyRef<'_, PyArray>, axis: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    let axes: Vec<isize> = match axis.extract::<isize>() {
        Ok(i) => vec![i],
        Err(_) => axis.extract()?,
    };
    x.0.squeeze(Some(&axes)).map(PyArray).map_err(to_py)
}

/// `axis` an integer or (the array API since 2025.12) a tuple of positions in the output.
#[pyfunction]
#[pyo3(signature = (x, /, axis=None))]
pub fn expand_dims(x: PyRef<'_, PyArray>, axis: Option<&Bound<'_, PyAny>>) -> PyResult<PyArray> {
    let axes: Vec<isize> = match axis {
        None => vec![0],
        Some(a) => match a.extract::<isize>() {
            Ok(i) => vec![i],
            Err(_) => a.extract()?,
        },
    };
    let out_nd = x.0.ndim() + axes.len();
    let mut at: Vec<usize> = axes
        .iter()
        .map(|&k| dlarray::layout::normalize_axis(k, out_nd))
        .collect::<dlarray::Result<_>>()
        .map_err(to_py)?;
    at.sort_unstable();
    if at.windows(2).any(|w| w[0] == w[1]) {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "expand_dims: repeated axis",
        ));
    }
    let mut a = x.0.clone();
    for k in at {
        a = a.expand_dims(k as isize).map_err(to_py)?;
    }
    Ok(PyArray(a))
}

#[pyfunction]
#[pyo3(signature = (x, dtype, /, *, copy=true, device=None))]
pub fn astype(
    py: Python<'_>,
    x: PyRef<'_, PyArray>,
    dtype: &Bound<'_, PyAny>,
    copy: bool,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let r = x.astype(py, dtype, copy)?;
    placed(py, r.0, device)
}

/// Unpickling (`Array.__reduce__`): the array of `dtype` and `shape` whose row-major bytes
/// are `data` (`Array.tobytes()`), on `device` or the default device.
#[pyfunction]
#[pyo3(name = "_from_bytes", signature = (data, dtype, shape, device=None))]
pub fn from_bytes(
    py: Python<'_>,
    data: &[u8],
    dtype: &Bound<'_, PyAny>,
    shape: Vec<usize>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let dtype = dtype_arg(dtype)?;
    let device = match device {
        Some(d) => device_arg(d)?,
        None => dlarray::default_device().map_err(to_py)?,
    };
    py.detach(|| Array::from_bytes_on(data, dtype, &shape, &device))
        .map(PyArray)
        .map_err(to_py)
}

/// `a` laid out as `like` is (its sharding: devices and memory kinds), for results that
/// Python code composes from ops whose outputs land on one device (`x.at[idx].set(y)`).
#[pyfunction]
#[pyo3(name = "_placed_like")]
pub fn placed_like(
    py: Python<'_>,
    a: PyRef<'_, PyArray>,
    like: PyRef<'_, PyArray>,
) -> PyResult<PyArray> {
    let (a, s) = (a.0.clone(), like.0.sharding().clone());
    py.detach(|| a.device_put(&s)).map(PyArray).map_err(to_py)
}

/// Adds every function of this file to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(from_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(placed_like, m)?)?;
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
    for f in [
        wrap_pyfunction!(floor, m)?,
        wrap_pyfunction!(ceil, m)?,
        wrap_pyfunction!(round, m)?,
        wrap_pyfunction!(sign, m)?,
        wrap_pyfunction!(prod, m)?,
        wrap_pyfunction!(where_, m)?,
    ] {
        m.add_function(f)?;
    }
    m.add_function(wrap_pyfunction!(log, m)?)?;
    m.add_function(wrap_pyfunction!(sqrt, m)?)?;
    m.add_function(wrap_pyfunction!(sin, m)?)?;
    m.add_function(wrap_pyfunction!(cos, m)?)?;
    m.add_function(wrap_pyfunction!(tanh, m)?)?;
    m.add_function(wrap_pyfunction!(negative, m)?)?;
    m.add_function(wrap_pyfunction!(logical_not, m)?)?;
    for f in [
        wrap_pyfunction!(add, m)?,
        wrap_pyfunction!(subtract, m)?,
        wrap_pyfunction!(multiply, m)?,
        wrap_pyfunction!(divide, m)?,
        wrap_pyfunction!(pow, m)?,
        wrap_pyfunction!(maximum, m)?,
        wrap_pyfunction!(minimum, m)?,
        wrap_pyfunction!(equal, m)?,
        wrap_pyfunction!(not_equal, m)?,
        wrap_pyfunction!(less, m)?,
        wrap_pyfunction!(less_equal, m)?,
        wrap_pyfunction!(greater, m)?,
        wrap_pyfunction!(greater_equal, m)?,
        wrap_pyfunction!(logical_and, m)?,
        wrap_pyfunction!(logical_or, m)?,
        wrap_pyfunction!(logical_xor, m)?,
        wrap_pyfunction!(bitwise_and, m)?,
        wrap_pyfunction!(bitwise_or, m)?,
        wrap_pyfunction!(bitwise_xor, m)?,
        wrap_pyfunction!(bitwise_left_shift, m)?,
        wrap_pyfunction!(bitwise_right_shift, m)?,
        wrap_pyfunction!(bitwise_invert, m)?,
        wrap_pyfunction!(floor_divide, m)?,
        wrap_pyfunction!(asin, m)?,
        wrap_pyfunction!(acos, m)?,
        wrap_pyfunction!(atan, m)?,
        wrap_pyfunction!(sinh, m)?,
        wrap_pyfunction!(cosh, m)?,
        wrap_pyfunction!(asinh, m)?,
        wrap_pyfunction!(acosh, m)?,
        wrap_pyfunction!(atanh, m)?,
        wrap_pyfunction!(expm1, m)?,
        wrap_pyfunction!(log1p, m)?,
        wrap_pyfunction!(signbit, m)?,
        wrap_pyfunction!(conj, m)?,
        wrap_pyfunction!(real, m)?,
        wrap_pyfunction!(imag, m)?,
        wrap_pyfunction!(remainder, m)?,
        wrap_pyfunction!(atan2, m)?,
        wrap_pyfunction!(copysign, m)?,
        wrap_pyfunction!(hypot, m)?,
        wrap_pyfunction!(logaddexp, m)?,
        wrap_pyfunction!(nextafter, m)?,
        wrap_pyfunction!(sum, m)?,
        wrap_pyfunction!(max, m)?,
        wrap_pyfunction!(min, m)?,
        wrap_pyfunction!(mean, m)?,
        wrap_pyfunction!(any, m)?,
        wrap_pyfunction!(all, m)?,
        wrap_pyfunction!(var, m)?,
        wrap_pyfunction!(std_dev, m)?,
        wrap_pyfunction!(matmul, m)?,
        wrap_pyfunction!(reshape, m)?,
        wrap_pyfunction!(permute_dims, m)?,
        wrap_pyfunction!(matrix_transpose, m)?,
        wrap_pyfunction!(squeeze, m)?,
        wrap_pyfunction!(expand_dims, m)?,
        wrap_pyfunction!(astype, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
