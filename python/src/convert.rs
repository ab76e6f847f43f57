//! Python scalars and nested sequences to arrays, with NumPy's dtype inference: all bools
//! give bool, all ints int64, any float float64, any complex complex128.

use dlarray::dtype::Complex64;
use dlarray::{Array, DType, Element, Scalar};
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyComplex, PyFloat, PyInt, PyList, PyTuple};

#[derive(Clone, Copy, PartialEq, PartialOrd)]
enum Kind {
    Bool,
    Int,
    Float,
    Complex,
}

/// Flattens `obj` into `out`, recording the shape seen at each depth.
fn walk(
    obj: &Bound<'_, PyAny>,
    depth: usize,
    shape: &mut Vec<usize>,
    out: &mut Vec<(Kind, Complex64, i128)>,
) -> PyResult<()> {
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let n = obj.len()?;
        if shape.len() == depth {
            shape.push(n);
        } else if shape.get(depth) != Some(&n) {
            return Err(PyValueError::new_err(
                "ragged nested sequence: every list at one depth must have the same length",
            ));
        }
        for item in obj.try_iter()? {
            walk(&item?, depth + 1, shape, out)?;
        }
        return Ok(());
    }
    if depth < shape.len() {
        return Err(PyValueError::new_err(
            "ragged nested sequence: a scalar where a list was",
        ));
    }
    let v = if obj.is_instance_of::<PyBool>() {
        let b: bool = obj.extract()?;
        (Kind::Bool, Complex64::new(b as u8 as f64, 0.0), b as i128)
    } else if obj.is_instance_of::<PyInt>() {
        // Past i128 only a float dtype takes it (`from_nested` checks): i128::MAX or MIN
        // stands for it, beside its nearest float.
        match crate::operand::py_int(obj)? {
            Ok(i) => (Kind::Int, Complex64::new(i as f64, 0.0), i),
            Err(f) => (
                Kind::Int,
                Complex64::new(f, 0.0),
                if f < 0.0 { i128::MIN } else { i128::MAX },
            ),
        }
    } else if obj.is_instance_of::<PyFloat>() {
        (Kind::Float, Complex64::new(obj.extract()?, 0.0), 0)
    } else if let Ok(c) = obj.cast::<PyComplex>() {
        (Kind::Complex, Complex64::new(c.real(), c.imag()), 0)
    } else {
        return Err(PyTypeError::new_err(format!(
            "cannot make an array of {} (expected numbers, nested lists or a __dlpack__ producer)",
            obj.get_type().name()?
        )));
    };
    out.push(v);
    Ok(())
}

/// NumPy's words for an integer that no C integer holds.
pub(crate) fn too_large() -> PyErr {
    PyOverflowError::new_err("Python int too large to convert to C long")
}

/// An array of the Python scalars in `obj` (a scalar or nested sequences), of `dtype` when
/// given, else of the dtype NumPy infers. With a dtype, each value must convert as NumPy's
/// `asarray(obj, dtype=...)` has it (and PyTorch's and JAX's refuse too): an integer out of
/// the dtype's range is an `OverflowError`, a float truncates toward zero but NaN and
/// infinity do not convert to an integer, a complex converts to no real dtype. Casting
/// afterwards would wrap 256 to 0 in uint8 and drop an imaginary part without a word.
pub fn from_nested(obj: &Bound<'_, PyAny>, dtype: Option<DType>) -> PyResult<Array> {
    let mut shape = Vec::new();
    let mut vals = Vec::new();
    walk(obj, 0, &mut shape, &mut vals)?;
    let Some(dtype) = dtype else {
        return inferred(&shape, &vals);
    };
    for &(kind, v, i) in &vals {
        convertible(kind, v, i, dtype)?;
    }
    // Built in `dtype` here, on the host, and made an array once: a cast after would run on
    // the default device, and one without 64-bit kernels (wgpu) refuses int64 and float64.
    let value = |&(kind, v, i): &(Kind, Complex64, i128)| match kind {
        Kind::Bool => Scalar::Bool(i != 0),
        // Ints to a float or complex dtype through float64 (v holds it), as NumPy converts
        // them, which also takes the ints past uint64 a float dtype holds.
        Kind::Int if dtype.is_inexact() => Scalar::Float(v.re),
        // Each value on its own, as NumPy converts them: a float truncates toward zero;
        // every one fits `dtype` (checked above), so `from_scalar` neither wraps nor
        // saturates.
        Kind::Int => Scalar::Int(i),
        Kind::Float => Scalar::Float(v.re),
        Kind::Complex => Scalar::Complex(v),
    };
    // Copied into the runtime's own (64-byte aligned) memory, which JAX and others alias.
    dlarray::with_dtype!(dtype, T => Array::from_slice(
        &vals.iter().map(|v| T::from_scalar(value(v))).collect::<Vec<T>>(),
        &shape,
    ))
    .map_err(crate::to_py)
}

/// Whether a Python scalar of `kind` (value `v`, or `i` for ints and bools) converts to
/// `dtype`, with NumPy's exception and words where it does not.
fn convertible(kind: Kind, v: Complex64, i: i128, dtype: DType) -> PyResult<()> {
    match kind {
        _ if dtype == DType::Bool => Ok(()),
        Kind::Complex if dtype.is_integer() => Err(PyTypeError::new_err(
            "int() argument must be a string, a bytes-like object or a real number, not 'complex'",
        )),
        Kind::Complex if !dtype.is_complex() => Err(PyTypeError::new_err(
            "float() argument must be a string or a real number, not 'complex'",
        )),
        Kind::Float if dtype.is_integer() => {
            let x = v.re;
            if x.is_nan() {
                Err(PyValueError::new_err("cannot convert float NaN to integer"))
            } else if x.is_infinite() {
                Err(PyOverflowError::new_err(
                    "cannot convert float infinity to integer",
                ))
            } else {
                // Saturates far outside any C integer, which `int_fits` then refuses.
                int_fits(x.trunc() as i128, dtype)
            }
        }
        Kind::Int if dtype.is_integer() => int_fits(i, dtype),
        _ => Ok(()),
    }
}

/// Whether the Python int `i` converts to `dtype` (any int to a dtype that is not an integer),
/// with NumPy's `OverflowError`s: NumPy converts through a C integer first (int64; uint64
/// past it for the unsigned dtypes), then checks the dtype's range.
pub fn int_fits(i: i128, dtype: DType) -> PyResult<()> {
    let Some((lo, hi)) = dtype.int_range() else {
        return Ok(());
    };
    if !c_integer(i) || (lo < 0 && i64::try_from(i).is_err()) {
        Err(too_large())
    } else if i < lo || i > hi {
        Err(PyOverflowError::new_err(format!(
            "Python integer {i} out of bounds for {dtype}"
        )))
    } else {
        Ok(())
    }
}

/// Whether an int converts to a C integer: int64, or uint64 past it.
fn c_integer(i: i128) -> bool {
    (i64::MIN as i128..=u64::MAX as i128).contains(&i)
}

/// The array of `vals` in the dtype NumPy infers for them.
fn inferred(shape: &[usize], vals: &[(Kind, Complex64, i128)]) -> PyResult<Array> {
    let shape = shape.to_vec();
    let kind = vals
        .iter()
        .map(|v| v.0)
        .fold(Kind::Bool, |a, b| if b > a { b } else { a });
    let kind = if vals.is_empty() { Kind::Float } else { kind };
    let r = match kind {
        Kind::Bool => Array::from_vec(vals.iter().map(|v| v.2 != 0).collect::<Vec<bool>>(), &shape),
        Kind::Int if vals.iter().any(|v| i64::try_from(v.2).is_err()) => {
            if vals.iter().any(|v| !c_integer(v.2)) {
                return Err(too_large());
            }
            // An int int64 holds beside one only uint64 holds: NumPy types each as the
            // first of int64 and uint64 that holds it, and promotes the two to float64
            // (`[2**63, 1]` is float64, `[2**63]` uint64).
            let int64 =
                |v: &(Kind, Complex64, i128)| v.0 == Kind::Int && i64::try_from(v.2).is_ok();
            if vals.iter().any(|v| v.2 < 0) || vals.iter().any(int64) {
                // Neither int64 nor uint64 holds them all: NumPy's float64.
                let floats: Vec<f64> = vals.iter().map(|v| v.1.re).collect();
                return Array::from_vec(floats, &shape).map_err(crate::to_py);
            }
            Array::from_vec(
                vals.iter().map(|v| v.2 as u64).collect::<Vec<u64>>(),
                &shape,
            )
        }
        Kind::Int => Array::from_vec(
            vals.iter().map(|v| v.2 as i64).collect::<Vec<i64>>(),
            &shape,
        ),
        Kind::Float => Array::from_vec(vals.iter().map(|v| v.1.re).collect::<Vec<f64>>(), &shape),
        Kind::Complex => {
            Array::from_vec(vals.iter().map(|v| v.1).collect::<Vec<Complex64>>(), &shape)
        }
    };
    r.map_err(crate::to_py)
}
