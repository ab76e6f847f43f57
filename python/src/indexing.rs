//! `Array[key]`: NumPy's basic indexing (integers, slices, one `...`), as views.

use dlarray::{Array, Slice};
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyEllipsis, PySlice, PyTuple};

/// One entry of an indexing key.
enum Item {
    Index(isize),
    Range(Slice),
    Ellipsis,
}

fn item(k: &Bound<'_, PyAny>) -> PyResult<Item> {
    if k.is_instance_of::<PyEllipsis>() {
        return Ok(Item::Ellipsis);
    }
    if let Ok(s) = k.cast::<PySlice>() {
        let part = |name: &str| -> PyResult<Option<isize>> { s.getattr(name)?.extract() };
        let step = part("step")?.unwrap_or(1);
        if step == 0 {
            return Err(PyValueError::new_err("slice step cannot be zero"));
        }
        return Ok(Item::Range(Slice::new(part("start")?, part("stop")?, step)));
    }
    // A Python bool is an int, but NumPy reads it as a mask: refuse it rather than index 0/1.
    if !k.is_instance_of::<pyo3::types::PyBool>()
        && let Ok(i) = k
            .call_method0("__index__")
            .and_then(|i| i.extract::<isize>())
    {
        return Ok(Item::Index(i));
    }
    Err(PyTypeError::new_err(format!(
        "only integers, slices (`:`) and ellipsis (`...`) are valid indices, got {}",
        k.get_type().name()?
    )))
}

/// `a[key]`: a view where the memory allows (see `Array::slice` and `Array::index_axis`).
pub(crate) fn get(a: &Array, key: &Bound<'_, PyAny>) -> PyResult<Array> {
    let items: Vec<Item> = match key.cast::<PyTuple>() {
        Ok(t) => t.iter().map(|k| item(&k)).collect::<PyResult<_>>()?,
        Err(_) => vec![item(key)?],
    };
    let nd = a.ndim();
    let given = items
        .iter()
        .filter(|i| !matches!(i, Item::Ellipsis))
        .count();
    if items.iter().filter(|i| matches!(i, Item::Ellipsis)).count() > 1 {
        return Err(PyIndexError::new_err(
            "an index can only have a single ellipsis ('...')",
        ));
    }
    if given > nd {
        return Err(PyIndexError::new_err(format!(
            "too many indices for array: array is {nd}-dimensional, but {given} were indexed"
        )));
    }
    // One slice per axis, and the integer indices to take afterwards.
    let mut slices = Vec::with_capacity(nd);
    let mut picks = Vec::new();
    for it in items {
        match it {
            Item::Ellipsis => slices.extend((0..nd - given).map(|_| Slice::full())),
            Item::Range(s) => slices.push(s),
            Item::Index(i) => {
                let axis = slices.len();
                let n = a.shape()[axis];
                let j = if i < 0 { i + n as isize } else { i };
                if j < 0 || j >= n as isize {
                    return Err(PyIndexError::new_err(format!(
                        "index {i} is out of bounds for axis {axis} with size {n}"
                    )));
                }
                picks.push((axis, j as usize));
                slices.push(Slice::full());
            }
        }
    }
    let mut out = a.slice(&slices).map_err(crate::to_py)?;
    // Last axis first, so the earlier axes keep their numbers.
    for &(axis, j) in picks.iter().rev() {
        out = out.index_axis(axis as isize, j).map_err(crate::to_py)?;
    }
    Ok(out)
}
