//! Python scalars and nested sequences to arrays, with NumPy's dtype inference: all bools
//! give bool, all ints int64, any float float64, any complex complex128.

use dlarray::Array;
use dlarray::dtype::Complex64;
use pyo3::exceptions::{PyTypeError, PyValueError};
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
        // Past i64, NumPy's uint64 range (anything larger overflows there too).
        let i: i128 = match obj.extract::<i64>() {
            Ok(i) => i.into(),
            Err(_) => obj.extract::<u64>()?.into(),
        };
        (Kind::Int, Complex64::new(i as f64, 0.0), i)
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

pub fn from_nested(obj: &Bound<'_, PyAny>) -> PyResult<Array> {
    let mut shape = Vec::new();
    let mut vals = Vec::new();
    walk(obj, 0, &mut shape, &mut vals)?;
    let kind = vals
        .iter()
        .map(|v| v.0)
        .fold(Kind::Bool, |a, b| if b > a { b } else { a });
    let kind = if vals.is_empty() { Kind::Float } else { kind };
    let r = match kind {
        Kind::Bool => Array::from_vec(vals.iter().map(|v| v.2 != 0).collect::<Vec<bool>>(), &shape),
        Kind::Int if vals.iter().any(|v| v.2 > i64::MAX as i128) => {
            if vals.iter().any(|v| v.2 < 0) {
                return Err(PyValueError::new_err(
                    "integers span more than int64 and uint64 can hold together",
                ));
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
