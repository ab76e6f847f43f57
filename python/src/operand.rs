//! The other operand of an `Array` operator: a Python scalar (weak, as NumPy 2 and the array
//! API take it), a NumPy scalar or a subclass of a Python number (strong, as NumPy converts
//! it), or an array (any `__dlpack__` producer).

use crate::array::PyArray;
use crate::to_py;
use dlarray::array::scalar_ops::{int_overflow, weak_operand_dtype};
use dlarray::{Array, BinaryOp, DType, Scalar};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

/// The other operand of an arithmetic operator that is not a Python scalar (see
/// `weak_scalar`): an Array, any `__dlpack__` producer (NumPy, PyTorch, JAX arrays, imported
/// without a copy where memory allows), a NumPy scalar (`np.float32(2)`: its own dtype, as
/// NEP 50 keeps it), or a subclass of a Python number (`IntEnum`): NumPy's dtype for it,
/// as NumPy converts it. Scalars are made on this array's device.
pub(crate) fn operand(this: &Array, other: &Bound<'_, PyAny>) -> PyResult<Array> {
    if let Ok(a) = other.cast::<PyArray>() {
        return Ok(a.get().0.clone());
    }
    if other.hasattr("__dlpack__")? {
        return crate::from_dlpack(other, None, None).map(|a| a.0);
    }
    let s = match crate::via_array_method(other)? {
        Some(a) => a,
        None => crate::convert::from_nested(other, None)?,
    };
    if s.ndim() != 0 {
        return Err(PyTypeError::new_err(
            "operands must be Arrays or Python scalars",
        ));
    }
    let d = this.devices();
    match d.first() {
        Some(dev) if d.len() == 1 => s.to_device(dev).map_err(to_py),
        _ => Ok(s),
    }
}

/// A Python scalar operand (exactly a `bool`, `int`, `float` or `complex`): *weak*, as NEP 50
/// and the array API take it (`Array::binary_scalar`): it takes the array's dtype when its
/// kind fits (`float32 * 2.0` is float32, `uint8 + 1` uint8) and its kind's default dtype
/// otherwise (`int64 * 2.5` is float64, `float32 * 1j` complex64). NumPy's scalar types
/// (`np.float64(2)`, a `float` subclass) are strongly typed in NEP 50, and go the array way.
/// `None` for anything else.
///
/// `array` is the other operand's dtype: an int past i128 (no integer dtype holds it) is a
/// float beside a float array, as NumPy converts it there, and beside an integer array an int
/// out of every range (a comparison has its answer; arithmetic raises in `check_weak_int`).
pub(crate) fn weak_scalar(o: &Bound<'_, PyAny>, array: DType) -> PyResult<Option<Scalar>> {
    use pyo3::types::{PyBool, PyComplex, PyFloat, PyInt};
    Ok(Some(if o.is_exact_instance_of::<PyBool>() {
        Scalar::Bool(o.extract()?)
    } else if o.is_exact_instance_of::<PyInt>() {
        match py_int(o)? {
            Ok(i) => Scalar::Int(i),
            Err(f) if array.is_inexact() => Scalar::Float(f),
            Err(f) => Scalar::Int(if f < 0.0 { i128::MIN } else { i128::MAX }),
        }
    } else if o.is_exact_instance_of::<PyFloat>() {
        Scalar::Float(o.extract()?)
    } else if let Ok(c) = o.cast_exact::<PyComplex>() {
        Scalar::Complex(dlarray::dtype::Complex64::new(c.real(), c.imag()))
    } else {
        return Ok(None);
    }))
}

/// A Python int as an `i128`, or (`Err`) as the nearest float when it is past i128 (an
/// `OverflowError` past float64's range, as Python's `float()`).
pub(crate) fn py_int(o: &Bound<'_, PyAny>) -> PyResult<Result<i128, f64>> {
    match o.extract::<i128>() {
        Ok(i) => Ok(Ok(i)),
        Err(_) => o.extract::<f64>().map(Err),
    }
}

/// NumPy 2's `OverflowError` for a Python int outside the integer dtype it takes as `op`'s
/// operand (ops that compute integers in float64, as true division, take any int; a
/// comparison has its answer, `Array::binary_scalar`'s).
///
/// And NumPy's `ValueError` for an integer array raised to a negative int (`scalar_first`:
/// the int is the base, which may be anything): the kernels give C's truncated 1/x^n, 0 for
/// |x| > 1, a silent answer where NumPy and PyTorch refuse.
pub(crate) fn check_weak_int(
    array: DType,
    op: BinaryOp,
    s: Scalar,
    scalar_first: bool,
) -> PyResult<()> {
    let dtype = weak_operand_dtype(array, op, s);
    if let (BinaryOp::Pow, Scalar::Int(i), false) = (op, s, scalar_first)
        && i < 0
        && dtype.is_integer()
    {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "Integers to negative integer powers are not allowed.",
        ));
    }
    match (s, int_overflow(dtype, s)) {
        (Scalar::Int(i), Some(_)) if !op.is_comparison() => crate::convert::int_fits(i, dtype),
        _ => Ok(()),
    }
}
