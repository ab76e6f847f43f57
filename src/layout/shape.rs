//! Shape arithmetic: checked element and byte counts, row-major strides, axes, broadcasting.
//!
//! The limit every shape obeys is ndarray's: the product of its non-zero axis lengths is at
//! most `isize::MAX`. Then element counts, row-major strides and every offset of a layout
//! that stays inside its span fit in `isize`, and only byte counts (times the item size) are
//! left to check, which [`checked_bytes`] does.

use crate::error::{Error, Result};
use smallvec::SmallVec;

/// Dimensions (small arrays stay inline: no allocation for ndim <= 4).
pub type Dims = SmallVec<[usize; 4]>;
/// Strides in elements.
pub type Strides = SmallVec<[isize; 4]>;

/// `xs` as an inline list when it has at most 4 entries, copied entry by entry: SmallVec's
/// `from_slice` copies a slice of run-time length with a call to `memcpy` (~25 instructions),
/// and every op builds several of these lists (its output's shape, strides and region).
#[inline(always)]
pub(crate) fn small<T: Copy + Default>(xs: &[T]) -> SmallVec<[T; 4]> {
    if xs.len() > 4 {
        return SmallVec::from_slice(xs);
    }
    let mut buf = [T::default(); 4];
    for (k, b) in buf.iter_mut().enumerate() {
        if let Some(&x) = xs.get(k) {
            *b = x;
        }
    }
    SmallVec::from_buf_and_len(buf, xs.len())
}

/// Most elements an array may have (and most elements the non-empty axes of an empty one
/// may multiply to): `isize::MAX`, as in ndarray and Rust's own allocation limit.
pub const MAX_ELEMENTS: usize = isize::MAX as usize;

/// Number of elements of `shape`, or an error when the product of its non-zero axes exceeds
/// [`MAX_ELEMENTS`] (so `[0, 2^62, 2^62]` is refused too: its strides would overflow).
#[inline]
pub fn checked_size(shape: &[usize]) -> Result<usize> {
    let mut nonzero = 1usize;
    let mut empty = false;
    for &d in shape {
        if d == 0 {
            empty = true;
            continue;
        }
        match nonzero.checked_mul(d) {
            Some(p) if p <= MAX_ELEMENTS => nonzero = p,
            _ => return Err(too_large(shape)),
        }
    }
    Ok(if empty { 0 } else { nonzero })
}

#[cold]
pub(crate) fn too_large(shape: &[usize]) -> Error {
    let exact: u128 = shape
        .iter()
        .filter(|&&d| d != 0)
        .try_fold(1u128, |acc, &d| acc.checked_mul(d as u128))
        .unwrap_or(u128::MAX);
    let count = if exact == u128::MAX {
        "more than 2^128".to_string()
    } else {
        exact.to_string()
    };
    Error::invalid(format!(
        "shape {shape:?} has {count} elements, more than an array can hold ({MAX_ELEMENTS})"
    ))
}

/// Bytes of `elements` items of `item_size` bytes, for `device`'s allocator: a product that
/// overflows is `Error::OutOfMemory` (no allocation of that size can succeed).
#[inline]
pub fn checked_bytes(elements: usize, item_size: usize, device: &str) -> Result<usize> {
    match elements.checked_mul(item_size) {
        Some(b) if b <= isize::MAX as usize => Ok(b),
        _ => Err(bytes_overflow(elements, item_size, device)),
    }
}

#[cold]
fn bytes_overflow(elements: usize, item_size: usize, device: &str) -> Error {
    Error::OutOfMemory {
        device: device.to_string(),
        bytes: elements as u128 * item_size as u128,
        reason: "the size exceeds the address space".into(),
    }
}

/// Row-major strides of `shape` (a shape [`checked_size`] accepts, so none overflows).
#[inline]
pub fn contiguous_strides(shape: &[usize]) -> Strides {
    let n = shape.len();
    if n <= 4 {
        return SmallVec::from_buf_and_len(strides_of_four(shape), n);
    }
    strides_past_four(shape)
}

/// The row-major strides of a shape of at most 4 axes, padded to 4 entries. Inline for up to
/// 4 axes, as `small` (every op's output layout is built here), and without indexing by the
/// rank: the suffix products over the shape padded with 1s are the strides of its first
/// axes. A loop that stored into a run-time index kept the list in memory and copied it out
/// with wider loads than those stores (a failed store forwarding per op); this one stays in
/// registers.
#[inline(always)]
fn strides_of_four(shape: &[usize]) -> [isize; 4] {
    let d = |k: usize| shape.get(k).map_or(1, |&x| x.max(1)) as isize;
    let s2 = d(3);
    let s1 = s2.saturating_mul(d(2));
    let s0 = s1.saturating_mul(d(1));
    [s0, s1, s2, 1]
}

/// [`contiguous_strides`] of more than 4 axes.
#[inline(never)]
fn strides_past_four(shape: &[usize]) -> Strides {
    let n = shape.len();
    let mut strides: Strides = SmallVec::from_elem(1, n);
    let mut acc = 1isize;
    for k in (0..n).rev() {
        strides[k] = acc;
        acc = acc.saturating_mul(shape[k].max(1) as isize);
    }
    strides
}

/// Writes [`contiguous_strides`] of `shape` into `p`, entry by entry (see [`write_inline`]).
///
/// # Safety
/// As [`write_inline`]'s.
#[inline(always)]
pub(crate) unsafe fn write_contiguous_strides(p: *mut Strides, shape: &[usize]) {
    let n = shape.len();
    // SAFETY: per the contract.
    unsafe {
        if n <= 4 {
            write_inline(p, strides_of_four(shape), n);
        } else {
            p.write(strides_past_four(shape));
        }
    }
}

/// Writes [`small`] of `xs` into `p`, entry by entry (see [`write_inline`]).
///
/// # Safety
/// As [`write_inline`]'s.
#[inline(always)]
pub(crate) unsafe fn write_small<T: Copy + Default>(p: *mut SmallVec<[T; 4]>, xs: &[T]) {
    // SAFETY: per the contract.
    unsafe {
        if xs.len() > 4 {
            p.write(SmallVec::from_slice(xs));
            return;
        }
        let at = |k: usize| xs.get(k).copied().unwrap_or_default();
        write_inline(p, [at(0), at(1), at(2), at(3)], xs.len());
    }
}

/// Writes the list of the first `len` (at most 4) entries of `buf` into `p`, held inline, one
/// entry at a time. A `SmallVec` built whole (`from_buf_and_len`) and then moved into place
/// was staged on the stack and copied with loads wider than the stores that had just built
/// it: a failed store forwarding for each list of an op's result (its shape, strides and
/// region).
///
/// The entries of `buf` past `len` are written and forgotten, so `T` must need no drop
/// (shape entries, strides, ranges).
///
/// # Safety
/// `p` is valid for writes and aligned, and holds nothing that needs dropping.
#[inline(always)]
pub(crate) unsafe fn write_inline<T>(p: *mut SmallVec<[T; 4]>, buf: [T; 4], len: usize) {
    debug_assert!(len <= 4);
    debug_assert!(!std::mem::needs_drop::<T>());
    // SAFETY: per the contract; an empty inline list has room for 4 entries, written before
    // the length that makes the first `len` of them its elements.
    unsafe {
        p.write(SmallVec::new());
        let v = &mut *p;
        let d = v.as_mut_ptr();
        for (k, x) in buf.into_iter().enumerate() {
            d.add(k).write(x);
        }
        v.set_len(len.min(4));
    }
}

/// Resolves a possibly negative axis against `ndim`.
pub fn normalize_axis(axis: isize, ndim: usize) -> Result<usize> {
    let a = if axis < 0 {
        axis.checked_add(ndim as isize)
    } else {
        Some(axis)
    };
    match a {
        Some(a) if a >= 0 && (a as usize) < ndim => Ok(a as usize),
        _ => Err(Error::IndexOutOfRange {
            what: "axis",
            index: axis as i64,
            size: ndim,
        }),
    }
}

/// `a == b` for shapes, inline: slice `==` on integers calls `memcmp`, whose call costs more
/// than comparing the handful of axes an array has (it showed in every small op's profile).
#[inline]
pub fn same_shape(a: &[usize], b: &[usize]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// NumPy broadcasting of two shapes; the result obeys the size limit ([`checked_size`]).
#[inline]
pub fn broadcast_shapes(op: &'static str, a: &[usize], b: &[usize]) -> Result<Dims> {
    if same_shape(a, b) {
        return Ok(small(a));
    }
    broadcast_distinct(op, a, b)
}

/// `broadcast_shapes` of two different shapes (out of line: the common case is equal ones).
fn broadcast_distinct(op: &'static str, a: &[usize], b: &[usize]) -> Result<Dims> {
    let n = a.len().max(b.len());
    let mut out: Dims = SmallVec::from_elem(0, n);
    for k in 0..n {
        let da = if k + a.len() >= n {
            a[k + a.len() - n]
        } else {
            1
        };
        let db = if k + b.len() >= n {
            b[k + b.len() - n]
        } else {
            1
        };
        out[k] = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => {
                return Err(Error::ShapeMismatch {
                    op,
                    lhs: a.to_vec(),
                    rhs: b.to_vec(),
                });
            }
        };
    }
    checked_size(&out)?;
    Ok(out)
}

/// The axis order that moves `axis` of an `ndim`-axis array last, the others kept in order
/// (for [`Layout::permute`](super::Layout::permute)).
pub fn axis_last(ndim: usize, axis: usize) -> Vec<usize> {
    let mut perm: Vec<usize> = (0..ndim).filter(|&k| k != axis).collect();
    perm.push(axis);
    perm
}

/// The permutation that undoes `perm` (`inverse[perm[i]] == i`).
pub fn inverse_permutation(perm: &[usize]) -> Vec<usize> {
    let mut inverse = vec![0; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inverse[p] = i;
    }
    inverse
}
