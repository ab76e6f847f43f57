//! `Array[key]` with NumPy's rules: basic indexing (integers, slices, one `...`, `None`) as
//! views, and advanced indexing (integer arrays, boolean masks, lists) as one gather.

use dlarray::{Array, DType, Slice};
use pyo3::exceptions::{PyIndexError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyEllipsis, PyList, PySlice, PyTuple};

/// One entry of an indexing key.
enum Item {
    Index(isize),
    Range(Slice),
    Ellipsis,
    NewAxis,
    /// Integer indices along one axis (broadcast with the other advanced indices).
    Ints(Array),
    /// A boolean mask over as many axes as it has.
    Mask(Array),
    /// A new axis of length 1 that `Ints` then index (a 0-d mask: `[0]` or `[]`).
    MaskAxis(Array),
}

fn item(k: &Bound<'_, PyAny>) -> PyResult<Item> {
    if k.is_instance_of::<PyEllipsis>() {
        return Ok(Item::Ellipsis);
    }
    if k.is_none() {
        return Ok(Item::NewAxis);
    }
    if let Ok(s) = k.cast::<PySlice>() {
        return slice_item(s).map(Item::Range);
    }
    // A Python bool is a 0-d mask, as NumPy reads it (not the index 0 or 1).
    if k.is_instance_of::<PyBool>() {
        let b: bool = k.extract()?;
        return Ok(Item::Mask(
            Array::from_vec(vec![b], &[]).map_err(crate::to_py)?,
        ));
    }
    // An int, or anything with `__index__` (which the conversion calls): without looking the
    // method up by name, a third of `a[1]`'s time.
    if let Ok(i) = k.extract::<isize>() {
        return Ok(Item::Index(i));
    }
    if k.is_instance_of::<PyList>()
        || k.hasattr("__dlpack__")?
        || k.cast::<crate::PyArray>().is_ok()
    {
        let a = crate::array_arg(k)?;
        return match a.dtype() {
            DType::Bool => Ok(Item::Mask(a)),
            d if d.is_integer() => Ok(Item::Ints(a)),
            // An empty list is an empty integer index, as NumPy takes it.
            _ if a.size() == 0 => Ok(Item::Ints(a.astype(DType::I64).map_err(crate::to_py)?)),
            d => Err(PyIndexError::new_err(format!(
                "arrays used as indices must be of integer (or boolean) type, not {d}"
            ))),
        };
    }
    Err(PyTypeError::new_err(format!(
        "only integers, slices (`:`), ellipsis (`...`), None, and integer or boolean arrays \
         are valid indices, got {}",
        k.get_type().name()?
    )))
}

/// A Python slice as a [`Slice`], read by CPython's own `PySlice_Unpack` (one call, where
/// reading its three attributes cost ~100 ns): it raises Python's errors (a zero step,
/// indices that are not integers), clamps indices past `isize` as Python does, and stands in
/// for omitted bounds with the extreme values, which read back as `None` here (an omitted
/// bound and its extreme select the same elements; `Slice::full()` marks the whole axis).
fn slice_item(s: &Bound<'_, PySlice>) -> PyResult<Slice> {
    let (mut start, mut stop, mut step): (ffi::Py_ssize_t, ffi::Py_ssize_t, ffi::Py_ssize_t) =
        (0, 0, 0);
    // SAFETY: `s` is a live slice object; the call only reads it and writes the three outputs.
    if unsafe { ffi::PySlice_Unpack(s.as_ptr(), &mut start, &mut stop, &mut step) } < 0 {
        return Err(PyErr::fetch(s.py()));
    }
    let (first, last) = if step > 0 {
        (0, ffi::PY_SSIZE_T_MAX)
    } else {
        (ffi::PY_SSIZE_T_MAX, ffi::PY_SSIZE_T_MIN)
    };
    Ok(Slice::new(
        (start != first).then_some(start),
        (stop != last).then_some(stop),
        step,
    ))
}

/// Masks become integer indices (one array per masked axis, from `nonzero`); a 0-d mask is a
/// new axis of length 1 (True) or 0 (False).
fn expand_masks(items: Vec<Item>) -> PyResult<Vec<Item>> {
    let mut out = Vec::with_capacity(items.len());
    for it in items {
        match it {
            Item::Mask(m) if m.ndim() == 0 => {
                let keep = m.to_vec::<bool>().map_err(crate::to_py)?[0];
                let idx: Vec<i64> = if keep { vec![0] } else { vec![] };
                let n = idx.len();
                out.push(Item::MaskAxis(
                    Array::from_vec(idx, &[n]).map_err(crate::to_py)?,
                ));
            }
            Item::Mask(m) => {
                for ix in m.nonzero().map_err(crate::to_py)? {
                    out.push(Item::Ints(ix));
                }
            }
            other => out.push(other),
        }
    }
    Ok(out)
}

/// `a[key]`: basic indexing is a view (see `Array::slice` and `Array::index_axis`);
/// advanced indexing gathers once (`Array::take` over the advanced axes flattened).
pub(crate) fn get(a: &Array, key: &Bound<'_, PyAny>) -> PyResult<Array> {
    let items: Vec<Item> = match key.cast::<PyTuple>() {
        Ok(t) => t.iter().map(|k| item(&k)).collect::<PyResult<_>>()?,
        Err(_) => vec![item(key)?],
    };
    // Masks over several axes must fit before expansion: count them by their rank.
    let consumed = |it: &Item| match it {
        Item::Ellipsis | Item::NewAxis | Item::MaskAxis(_) => 0,
        Item::Mask(m) => m.ndim(),
        _ => 1,
    };
    let nd = a.ndim();
    let given: usize = items.iter().map(consumed).sum();
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
    // Check masks against the axes they cover.
    let mut axis = 0;
    for it in &items {
        match it {
            Item::Ellipsis => axis += nd - given,
            Item::Mask(m) => {
                let covered = &a.shape()[axis..axis + m.ndim()];
                if m.shape() != covered {
                    return Err(PyIndexError::new_err(format!(
                        "boolean index of shape {:?} does not match the indexed axes of shape {covered:?}",
                        m.shape()
                    )));
                }
                axis += m.ndim();
            }
            other => axis += consumed(other),
        }
    }
    let items = expand_masks(items)?;
    // NumPy places the broadcast axes by the key as written: advanced indices split by a
    // slice, `None` or `...` (even a `...` that stands for no axis) put them first.
    let mut runs = 0;
    let mut in_run = false;
    for it in &items {
        let adv = matches!(it, Item::Ints(_) | Item::Index(_) | Item::MaskAxis(_));
        runs += usize::from(adv && !in_run);
        in_run = adv;
    }
    let separated = runs > 1;
    // `...` as full slices; `None` as new axes of length 1 (a view), so that every item then
    // stands for exactly one axis.
    let given: usize = items.iter().map(consumed).sum();
    let mut shape: Vec<isize> = Vec::with_capacity(items.len() + nd);
    let mut flat: Vec<Item> = Vec::with_capacity(items.len() + nd);
    let mut src = 0;
    for it in items {
        match it {
            Item::Ellipsis => {
                for _ in 0..nd - given {
                    shape.push(a.shape()[src] as isize);
                    flat.push(Item::Range(Slice::full()));
                    src += 1;
                }
            }
            Item::NewAxis => {
                shape.push(1);
                flat.push(Item::Range(Slice::full()));
            }
            Item::MaskAxis(ix) => {
                shape.push(1);
                flat.push(Item::Ints(ix));
            }
            other => {
                shape.push(a.shape()[src] as isize);
                flat.push(other);
                src += 1;
            }
        }
    }
    for &n in &a.shape()[src..] {
        shape.push(n as isize);
        flat.push(Item::Range(Slice::full()));
    }
    // New axes are inserted by a reshape (a view); without them the array is the base.
    let base = if shape.len() == nd && shape.iter().zip(a.shape()).all(|(&n, &m)| n as usize == m) {
        a.clone()
    } else {
        a.reshape(&shape).map_err(crate::to_py)?
    };
    let advanced = flat.iter().any(|i| matches!(i, Item::Ints(_)));
    if !advanced {
        return basic(&base, &flat);
    }
    gather(&base, flat, separated)
}

/// Slices and integer picks, as views.
fn basic(a: &Array, items: &[Item]) -> PyResult<Array> {
    let mut slices = Vec::with_capacity(items.len());
    let mut picks = Vec::new();
    for (axis, it) in items.iter().enumerate() {
        match it {
            Item::Range(s) => slices.push(*s),
            Item::Index(i) => {
                picks.push((axis, checked(*i, axis, a.shape()[axis])?));
                slices.push(Slice::full());
            }
            _ => slices.push(Slice::full()),
        }
    }
    // Integers alone (`a[1]`, `a[1, 2]`) need no slice view first.
    let mut out = if slices.iter().all(|s| *s == Slice::full()) {
        a.clone()
    } else {
        a.slice(&slices).map_err(crate::to_py)?
    };
    // Last axis first, so the earlier axes keep their numbers.
    for &(axis, j) in picks.iter().rev() {
        out = out.index_axis(axis as isize, j).map_err(crate::to_py)?;
    }
    Ok(out)
}

fn checked(i: isize, axis: usize, n: usize) -> PyResult<usize> {
    let j = if i < 0 { i + n as isize } else { i };
    if j < 0 || j >= n as isize {
        return Err(PyIndexError::new_err(format!(
            "index {i} is out of bounds for axis {axis} with size {n}"
        )));
    }
    Ok(j as usize)
}

/// NumPy's advanced indexing: the integer arrays (and integers, which join them) broadcast
/// to one shape; the axes they index are gathered through one flat index; the result's
/// broadcast axes stand where the indexed axes were when those are adjacent in the key
/// (`separated` false), else first.
fn gather(a: &Array, items: Vec<Item>, separated: bool) -> PyResult<Array> {
    // Slices first (views); the advanced axes keep their positions.
    let slices: Vec<Slice> = items
        .iter()
        .map(|it| match it {
            Item::Range(s) => *s,
            _ => Slice::full(),
        })
        .collect();
    let x = a.slice(&slices).map_err(crate::to_py)?;
    let mut adv_axes = Vec::new();
    let mut adv: Vec<Array> = Vec::new();
    for (axis, it) in items.into_iter().enumerate() {
        match it {
            Item::Ints(ix) => {
                adv_axes.push(axis);
                adv.push(ix);
            }
            Item::Index(i) => {
                adv_axes.push(axis);
                adv.push(Array::from_vec(vec![i as i64], &[]).map_err(crate::to_py)?);
            }
            _ => {}
        }
    }
    let mut b_shape: Vec<usize> = Vec::new();
    for ix in &adv {
        b_shape = dlarray::layout::broadcast_shapes("index", &b_shape, ix.shape())
            .map(|d| d.to_vec())
            .map_err(|_| {
            PyIndexError::new_err(format!(
                "shape mismatch: indexing arrays could not be broadcast together with shapes {}",
                adv.iter()
                    .map(|a| format!("{:?}", a.shape()))
                    .collect::<Vec<_>>()
                    .join(" ")
            ))
        })?;
    }
    let count: usize = b_shape.iter().product();
    // The flat index into the advanced axes, row-major over them.
    let mut flat = vec![0i64; count];
    let mut stride = 1i64;
    for (ix, &axis) in adv.iter().zip(&adv_axes).rev() {
        let n = x.shape()[axis];
        // Read in their own dtype: wgpu's nonzero gives int32 indices and has no int64.
        let v = ix
            .broadcast_to(&b_shape)
            .and_then(|b| b.to_i64_vec())
            .map_err(crate::to_py)?;
        for (f, &i) in flat.iter_mut().zip(&v) {
            *f += checked(i as isize, axis, n)? as i64 * stride;
        }
        stride *= n as i64;
    }
    // Advanced axes to the front, merged into one, gathered, and split into `b_shape`.
    let rest: Vec<usize> = (0..x.ndim()).filter(|k| !adv_axes.contains(k)).collect();
    let perm: Vec<usize> = adv_axes.iter().chain(&rest).copied().collect();
    let mut merged: Vec<isize> = vec![stride as isize];
    merged.extend(rest.iter().map(|&k| x.shape()[k] as isize));
    let moved = x
        .permute(&perm)
        .and_then(|m| m.reshape(&merged))
        .map_err(crate::to_py)?;
    let idx = Array::from_vec(flat, &[count]).map_err(crate::to_py)?;
    let taken = moved.take(&idx, Some(0)).map_err(crate::to_py)?;
    let mut out_shape: Vec<isize> = b_shape.iter().map(|&n| n as isize).collect();
    out_shape.extend(rest.iter().map(|&k| x.shape()[k] as isize));
    let out = taken.reshape(&out_shape).map_err(crate::to_py)?;
    if separated || adv_axes[0] == 0 {
        return Ok(out);
    }
    // The broadcast axes go where the first advanced axis was.
    let (nb, first) = (b_shape.len(), adv_axes[0]);
    let before: Vec<usize> = (nb..nb + first).collect();
    let after: Vec<usize> = (nb + first..out.ndim()).collect();
    let order: Vec<usize> = before.into_iter().chain(0..nb).chain(after).collect();
    out.permute(&order).map_err(crate::to_py)
}
