//! `dlarray.random`: JAX's `jax.random` on explicit keys, bit for bit. A key is a uint32
//! array of shape (2,), as `jax.random.PRNGKey(seed)` (or `jax.random.key_data(key)`) is,
//! and any `__dlpack__` producer holding one is accepted.

use crate::array::PyArray;
use crate::functions::{place, shape_arg};
use crate::to_py;
use dlarray::random::{Key, Sampler};
use dlarray::{Array, DType};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// The key a Python argument holds: a uint32 array of shape (2,).
fn key_arg(key: &Bound<'_, PyAny>) -> PyResult<Key> {
    let a = crate::array_arg(key)?;
    if a.dtype() != DType::U32 || a.shape() != [2] {
        return Err(PyTypeError::new_err(format!(
            "a random key is a uint32 array of shape (2,) (dlarray.random.key(seed), \
             jax.random.PRNGKey(seed) or jax.random.key_data(key)), not {} of shape {:?}",
            a.dtype(),
            a.shape()
        )));
    }
    let w = a.to_vec::<u32>().map_err(to_py)?;
    Ok(Key::from_data([w[0], w[1]]))
}

fn key_array(keys: &[Key]) -> PyResult<Array> {
    let words: Vec<u32> = keys.iter().flat_map(|k| k.data()).collect();
    Array::from_slice(&words, &[keys.len(), 2]).map_err(to_py)
}

fn sampler(key: &Bound<'_, PyAny>, device: Option<&Bound<'_, PyAny>>) -> PyResult<Sampler> {
    Ok(Sampler::sharded(&key_arg(key)?, &place(device)?))
}

/// `key(seed)`: the raw key of an integer seed, as `jax.random.PRNGKey(seed)`.
#[pyfunction]
fn key(seed: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    let seed: i64 = seed
        .extract()
        .map_err(|_| PyTypeError::new_err("a seed is an integer that fits in 64 bits"))?;
    let k = Key::new(seed);
    Ok(PyArray(key_array(&[k])?.reshape(&[2]).map_err(to_py)?))
}

/// `split(key, num=2)`: `num` new keys, shape (num, 2), as `jax.random.split`.
#[pyfunction]
#[pyo3(signature = (key, num=2))]
fn split(key: &Bound<'_, PyAny>, num: usize) -> PyResult<PyArray> {
    Ok(PyArray(key_array(&key_arg(key)?.split(num))?))
}

/// `fold_in(key, data)`: a key derived from `key` and a 32-bit integer, as `jax.random.fold_in`.
#[pyfunction]
fn fold_in(key: &Bound<'_, PyAny>, data: i64) -> PyResult<PyArray> {
    let k = key_arg(key)?.fold_in(data as u32);
    Ok(PyArray(key_array(&[k])?.reshape(&[2]).map_err(to_py)?))
}

/// The arguments every distribution takes, then the draw itself without the GIL.
struct Draw {
    sampler: Sampler,
    shape: Vec<usize>,
    dtype: DType,
}

impl Draw {
    fn new(
        key: &Bound<'_, PyAny>,
        shape: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        default: DType,
        device: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Draw> {
        Ok(Draw {
            sampler: sampler(key, device)?,
            shape: shape.map_or(Ok(Vec::new()), shape_arg)?,
            dtype: crate::functions::dtype_for(dtype, default, device)?,
        })
    }

    fn run(
        self,
        py: Python<'_>,
        f: impl FnOnce(&Sampler, &[usize], DType) -> dlarray::Result<Array> + Send,
    ) -> PyResult<PyArray> {
        py.detach(|| f(&self.sampler, &self.shape, self.dtype))
            .map(PyArray)
            .map_err(to_py)
    }
}

#[pyfunction]
#[pyo3(signature = (key, shape=None, dtype=None, *, device=None))]
fn bits(
    py: Python<'_>,
    key: &Bound<'_, PyAny>,
    shape: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    Draw::new(key, shape, dtype, DType::U32, device)?.run(py, |s, sh, d| s.bits(sh, d))
}

#[pyfunction]
#[pyo3(signature = (key, shape=None, dtype=None, minval=0.0, maxval=1.0, *, device=None))]
fn uniform(
    py: Python<'_>,
    key: &Bound<'_, PyAny>,
    shape: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    minval: f64,
    maxval: f64,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    Draw::new(key, shape, dtype, DType::F32, device)?
        .run(py, |s, sh, d| s.uniform(sh, d, minval, maxval))
}

#[pyfunction]
#[pyo3(signature = (key, shape=None, dtype=None, *, device=None))]
fn normal(
    py: Python<'_>,
    key: &Bound<'_, PyAny>,
    shape: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    Draw::new(key, shape, dtype, DType::F32, device)?.run(py, |s, sh, d| s.normal(sh, d))
}

#[pyfunction]
#[pyo3(signature = (key, shape, minval, maxval, dtype=None, *, device=None))]
#[allow(clippy::too_many_arguments)]
fn randint(
    py: Python<'_>,
    key: &Bound<'_, PyAny>,
    shape: &Bound<'_, PyAny>,
    minval: &Bound<'_, PyAny>,
    maxval: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let bound = |v: &Bound<'_, PyAny>| -> PyResult<i64> {
        // Python ints beyond i64 clip as JAX clips bounds to the dtype.
        match v.extract::<i64>() {
            Ok(i) => Ok(i),
            Err(_) => match v.extract::<i128>() {
                Ok(i) => Ok(i.clamp(i64::MIN as i128, i64::MAX as i128) as i64),
                Err(_) => Err(PyValueError::new_err("randint bounds are integers")),
            },
        }
    };
    let (lo, hi) = (bound(minval)?, bound(maxval)?);
    Draw::new(key, Some(shape), dtype, DType::I32, device)?
        .run(py, |s, sh, d| s.randint(sh, lo, hi, d))
}

/// Adds `dlarray.random` to the module, importable as `import dlarray.random`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let r = PyModule::new(m.py(), "random")?;
    r.add_function(wrap_pyfunction!(key, &r)?)?;
    r.add_function(wrap_pyfunction!(split, &r)?)?;
    r.add_function(wrap_pyfunction!(fold_in, &r)?)?;
    r.add_function(wrap_pyfunction!(bits, &r)?)?;
    r.add_function(wrap_pyfunction!(uniform, &r)?)?;
    r.add_function(wrap_pyfunction!(normal, &r)?)?;
    r.add_function(wrap_pyfunction!(randint, &r)?)?;
    m.add_submodule(&r)?;
    m.py()
        .import("sys")?
        .getattr("modules")?
        .set_item("dlarray.random", &r)?;
    Ok(())
}
