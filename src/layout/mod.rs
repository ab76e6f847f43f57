//! Shape, stride and offset arithmetic: the bottom layer. `array`, `backends` and `dlpack` use
//! it; it uses none of them.
//!
//! A [`Layout`] maps a multi-index `i` of `shape` to the element offset
//! `offset + Σ i[k] * strides[k]` in a buffer. Strides are in elements (as in DLPack) and may
//! be negative (reversed slices) or zero (broadcasting).
//!
//! **Invariant**, enforced by every constructor (in release builds too), after ndarray's:
//! - the product of the non-zero axis lengths is at most `isize::MAX` ([`checked_size`]);
//! - for a non-empty layout every reachable offset lies in `0..=isize::MAX`.
//!
//! So `size()`, `offset_of` and the strided loops in [`walk`](for_each_run) cannot overflow;
//! only byte counts (times the item size) remain to check, at allocation ([`checked_bytes`]).

mod shape;
mod slice;
mod walk;

pub use shape::{
    Dims, MAX_ELEMENTS, Strides, axis_last, broadcast_shapes, checked_bytes, checked_size,
    contiguous_strides, inverse_permutation, normalize_axis, same_shape,
};
pub(crate) use shape::{small, write_inline, write_small};
pub use slice::Slice;
pub use walk::{coalesce, for_each_run};

use crate::error::{Error, Result};
use smallvec::SmallVec;
use std::ops::Range;

/// A strided view of a buffer (see the module docs for its invariant).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    shape: Dims,
    strides: Strides,
    offset: usize,
    /// The product of `shape`, and whether the layout is row-major contiguous: functions of
    /// the three fields above, set by `assemble` (every constructor's last step) and never
    /// changed after. Each kernel input asks for both on every op, and the two loops were
    /// ~4 % of an 8-element add.
    size: usize,
    contiguous: bool,
}

impl Clone for Layout {
    // By hand: SmallVec's derived clone goes element by element; these are plain copies, and
    // layouts are cloned on every op and export.
    fn clone(&self) -> Self {
        Layout {
            shape: small(&self.shape),
            strides: small(&self.strides),
            offset: self.offset,
            size: self.size,
            contiguous: self.contiguous,
        }
    }
}

/// Row-major contiguous, ignoring the strides of size-1 axes (an empty layout is).
fn row_major(shape: &[usize], strides: &[isize], size: usize) -> bool {
    let mut acc = 1isize;
    for (&d, &s) in shape.iter().zip(strides.iter()).rev() {
        if d == 1 {
            continue;
        }
        if s != acc {
            return size == 0;
        }
        // No overflow: the product of the non-zero axes is at most isize::MAX.
        acc = acc.wrapping_mul(d as isize);
    }
    true
}

/// Range of element offsets `(shape, strides, offset)` touches, in i128 so it cannot
/// overflow; `None` for an empty shape.
fn span_of(shape: &[usize], strides: &[isize], offset: usize) -> Option<Range<i128>> {
    if shape.contains(&0) {
        return None;
    }
    let (mut lo, mut hi) = (offset as i128, offset as i128);
    for (&d, &s) in shape.iter().zip(strides) {
        let reach = (d as i128 - 1) * s as i128;
        if reach < 0 {
            lo += reach;
        } else {
            hi += reach;
        }
    }
    Some(lo..hi + 1)
}

impl Layout {
    /// The layout of parts that obey the invariant, with its cached size and contiguity.
    #[inline(always)]
    fn assemble(shape: Dims, strides: Strides, offset: usize) -> Layout {
        // No overflow: by the invariant, the product of the non-zero axes fits.
        let size = shape.iter().product();
        let contiguous = row_major(&shape, &strides, size);
        Layout {
            shape,
            strides,
            offset,
            size,
            contiguous,
        }
    }

    /// Checks the invariant for raw parts (shape already checked by `checked_size`).
    fn checked(shape: &[usize], strides: &[isize], offset: usize) -> Result<Layout> {
        if let Some(span) = span_of(shape, strides, offset)
            && (span.start < 0 || span.end - 1 > isize::MAX as i128)
        {
            return Err(Error::invalid(format!(
                "layout shape {shape:?} strides {strides:?} offset {offset} reaches element \
                 offsets {span:?}, outside 0..=isize::MAX"
            )));
        }
        Ok(Layout::assemble(small(shape), small(strides), offset))
    }

    /// A row-major layout of `shape` at offset 0; an error when `shape` has more elements
    /// than an array can hold.
    #[inline]
    pub fn contiguous(shape: &[usize]) -> Result<Layout> {
        // One pass (every op builds its output's layout here): the row-major strides are the
        // suffix products of max(d, 1), whose total is the product of the non-zero axes, so
        // checking that total is `checked_size`'s check.
        let mut strides: Strides = SmallVec::from_elem(1, shape.len());
        let mut acc = 1usize;
        for (s, &d) in strides.iter_mut().zip(shape).rev() {
            *s = acc as isize;
            match acc.checked_mul(d.max(1)) {
                Some(p) if p <= MAX_ELEMENTS => acc = p,
                _ => return Err(shape::too_large(shape)),
            }
        }
        Ok(Layout {
            strides,
            shape: small(shape),
            offset: 0,
            size: shape.iter().product(),
            contiguous: true,
        })
    }

    /// `contiguous` for a shape known to obey the size limit: the shape of an existing
    /// layout, or one `checked_size`/`broadcast_shapes` accepted. The op path builds every
    /// output layout here, and the check would be repeated work.
    #[inline(always)]
    pub(crate) fn contiguous_valid(shape: &[usize]) -> Layout {
        debug_assert!(checked_size(shape).is_ok(), "{shape:?} was not checked");
        Layout {
            strides: contiguous_strides(shape),
            shape: small(shape),
            offset: 0,
            size: shape.iter().product(),
            contiguous: true,
        }
    }

    /// Writes [`contiguous_valid`](Self::contiguous_valid) of `shape` into `p`, field by
    /// field: built whole and moved into an op's result, its lists went through the stack
    /// (see `write_inline`).
    ///
    /// # Safety
    /// `p` is valid for writes and aligned, and holds nothing that needs dropping.
    #[inline(always)]
    pub(crate) unsafe fn write_contiguous_valid(p: *mut Layout, shape: &[usize]) {
        use std::ptr::addr_of_mut;
        debug_assert!(checked_size(shape).is_ok(), "{shape:?} was not checked");
        // SAFETY: per the contract; every field is written.
        unsafe {
            shape::write_small(addr_of_mut!((*p).shape), shape);
            shape::write_contiguous_strides(addr_of_mut!((*p).strides), shape);
            addr_of_mut!((*p).offset).write(0);
            addr_of_mut!((*p).size).write(shape.iter().product());
            addr_of_mut!((*p).contiguous).write(true);
        }
    }

    /// A layout of parts whose reach the caller has already bounded, as [`from_parts`]
    /// would check it: the shape passed `checked_size`, shape and strides have one entry per
    /// axis, and every offset reachable from `offset` lies in `0..=isize::MAX`. A foreign
    /// wrap measures the span of what it wraps to bound the memory; measuring it again here
    /// cost 158 of the 4,671 instructions of `dlarray.from_dlpack(numpy_array)`.
    ///
    /// [`from_parts`]: Self::from_parts
    #[inline]
    pub(crate) fn from_bounded_parts(shape: &[usize], strides: Strides, offset: usize) -> Layout {
        debug_assert_eq!(shape.len(), strides.len());
        debug_assert!(checked_size(shape).is_ok(), "{shape:?} was not checked");
        debug_assert!(
            span_of(shape, &strides, offset)
                .is_none_or(|r| r.start >= 0 && r.end - 1 <= isize::MAX as i128),
            "{shape:?} {strides:?} from {offset} was not bounded"
        );
        Layout::assemble(small(shape), strides, offset)
    }

    /// A layout from raw parts; checks that every reachable offset lies in `0..buffer_len`.
    pub fn from_parts(
        shape: &[usize],
        strides: &[isize],
        offset: usize,
        buffer_len: usize,
    ) -> Result<Layout> {
        if shape.len() != strides.len() {
            return Err(Error::invalid(format!(
                "shape {shape:?} and strides {strides:?} differ in length"
            )));
        }
        checked_size(shape)?;
        // Inside the buffer and inside 0..=isize::MAX (the invariant), in one pass.
        let end = (buffer_len as i128).min(isize::MAX as i128 + 1);
        if let Some(span) = span_of(shape, strides, offset)
            && (span.start < 0 || span.end > end)
        {
            return Err(Error::invalid(format!(
                "layout shape {shape:?} strides {strides:?} offset {offset} reaches \
                 elements {span:?}, outside a buffer of {buffer_len} elements"
            )));
        }
        Ok(Layout::assemble(small(shape), small(strides), offset))
    }

    /// The extent of each axis.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }
    /// The step in elements along each axis (negative for reversed views).
    pub fn strides(&self) -> &[isize] {
        &self.strides
    }
    /// The element offset of index (0, .., 0) into the buffer.
    pub fn offset(&self) -> usize {
        self.offset
    }
    /// The number of axes.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }
    /// Number of elements (cannot overflow: see the invariant).
    #[inline(always)]
    pub fn size(&self) -> usize {
        self.size
    }

    /// Element offsets touched (`start..end`; `offset..offset` when empty).
    pub fn span(&self) -> Range<usize> {
        match span_of(&self.shape, &self.strides, self.offset) {
            // Both ends lie in 0..=isize::MAX + 1 by the invariant.
            Some(r) => r.start as usize..r.end as usize,
            None => self.offset..self.offset,
        }
    }

    /// Row-major contiguous, ignoring the strides of size-1 axes.
    #[inline(always)]
    pub fn is_contiguous(&self) -> bool {
        self.contiguous
    }

    /// Offset of the element at `index` (which must be in range).
    pub fn offset_of(&self, index: &[usize]) -> usize {
        let mut off = self.offset as isize;
        for (&i, &s) in index.iter().zip(&self.strides) {
            off += i as isize * s;
        }
        off as usize
    }

    /// Axes permuted: axis `k` of the result is axis `perm[k]` of `self`.
    pub fn permute(&self, perm: &[usize]) -> Result<Layout> {
        let n = self.ndim();
        let mut seen: SmallVec<[bool; 8]> = SmallVec::from_elem(false, n);
        if perm.len() != n
            || perm
                .iter()
                .any(|&p| p >= n || std::mem::replace(&mut seen[p], true))
        {
            return Err(Error::invalid(format!(
                "{perm:?} is not a permutation of {n} axes"
            )));
        }
        // The same axes in another order: same size and span. Filled in place (SmallVec's
        // `collect` cost more than the rest of a transpose).
        let (mut shape, mut strides) = (self.shape.clone(), self.strides.clone());
        for (k, &p) in perm.iter().enumerate() {
            shape[k] = self.shape[p];
            strides[k] = self.strides[p];
        }
        Ok(Layout::assemble(shape, strides, self.offset))
    }

    /// Axes reversed (matrix transpose for 2-D).
    pub fn transpose(&self) -> Layout {
        Layout::assemble(
            self.shape.iter().rev().copied().collect(),
            self.strides.iter().rev().copied().collect(),
            self.offset,
        )
    }

    /// A basic slice; axes beyond `slices.len()` are kept whole. Any `isize` bounds and step
    /// give Python's result.
    pub fn slice(&self, slices: &[Slice]) -> Result<Layout> {
        if slices.len() > self.ndim() {
            return Err(Error::invalid(format!(
                "{} slices for an array of {} axes",
                slices.len(),
                self.ndim()
            )));
        }
        let (mut shape, mut strides): (Dims, Strides) = (small(&self.shape), small(&self.strides));
        let mut offset = self.offset as i128;
        let mut empty = self.size() == 0;
        for (k, s) in slices.iter().enumerate() {
            let (start, len, step) = s.resolve(self.shape[k])?;
            shape[k] = len;
            // A stride is only ever multiplied by an index below the length, so on an axis
            // of one element (where `stride * step` may not fit) the old stride serves.
            strides[k] = if len > 1 {
                self.strides[k]
                    .checked_mul(step)
                    .ok_or_else(|| Error::invalid("slice stride overflows"))?
            } else {
                self.strides[k]
            };
            if len == 0 {
                empty = true;
            } else {
                offset += start as i128 * self.strides[k] as i128;
            }
        }
        // An empty view keeps its base offset: `start` may lie past the end of the axis. A
        // non-empty one selects elements of this layout, so its offsets stay in range.
        let offset = if empty {
            self.offset
        } else {
            usize::try_from(offset).map_err(|_| Error::invalid("slice offset overflows"))?
        };
        Ok(Layout::assemble(shape, strides, offset))
    }

    /// Broadcast to `shape` (NumPy rules): new leading axes and size-1 axes get stride 0. The
    /// target must obey the size limit: `[1 << 62, 4]` is an error, not an empty array.
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Layout> {
        let n = shape.len();
        let err = || Error::ShapeMismatch {
            op: "broadcast_to",
            lhs: self.shape.to_vec(),
            rhs: shape.to_vec(),
        };
        if n < self.ndim() {
            return Err(err());
        }
        checked_size(shape)?;
        let lead = n - self.ndim();
        let mut strides: Strides = SmallVec::from_elem(0, n);
        for k in 0..self.ndim() {
            let (d, t) = (self.shape[k], shape[lead + k]);
            strides[lead + k] = if d == t {
                self.strides[k]
            } else if d == 1 {
                0
            } else {
                return Err(err());
            };
        }
        // Repeated axes reach no new offset; kept axes reach what they did.
        Ok(Layout::assemble(small(shape), strides, self.offset))
    }

    /// A view with `shape` if the elements can be addressed without copying (NumPy's
    /// no-copy reshape), else `None`.
    pub fn reshape(&self, shape: &[usize]) -> Result<Option<Layout>> {
        let size = checked_size(shape)?;
        if size != self.size() {
            return Err(Error::ShapeMismatch {
                op: "reshape",
                lhs: self.shape.to_vec(),
                rhs: shape.to_vec(),
            });
        }
        if size == 0 || self.is_contiguous() {
            // Row-major by construction, and `shape` passed `checked_size` above.
            let mut view = Layout::contiguous_valid(shape);
            view.offset = self.offset;
            return Ok(Some(view));
        }
        // Group old and new axes into runs of equal products; each old run must be contiguous.
        let old: Vec<(usize, isize)> = self
            .shape
            .iter()
            .zip(&self.strides)
            .filter(|(d, _)| **d != 1)
            .map(|(&d, &s)| (d, s))
            .collect();
        let mut strides: Strides = SmallVec::from_elem(1, shape.len());
        let (mut oi, mut ni) = (0usize, 0usize);
        while oi < old.len() && ni < shape.len() {
            let (mut oj, mut nj) = (oi + 1, ni + 1);
            let (mut op, mut np) = (old[oi].0, shape[ni]);
            while op != np {
                if np < op {
                    np *= shape[nj];
                    nj += 1;
                } else {
                    op *= old[oj].0;
                    oj += 1;
                }
            }
            for k in oi..oj - 1 {
                if old[k].1 != old[k + 1].1 * old[k + 1].0 as isize {
                    return Ok(None);
                }
            }
            strides[nj - 1] = old[oj - 1].1;
            for k in (ni + 1..nj).rev() {
                strides[k - 1] = strides[k] * shape[k] as isize;
            }
            oi = oj;
            ni = nj;
        }
        // The same elements addressed in another grouping: the span is unchanged.
        Ok(Some(Layout::assemble(small(shape), strides, self.offset)))
    }

    /// The layout with `axis` removed, positioned at `index` along it.
    pub fn select(&self, axis: usize, index: usize) -> Result<Layout> {
        let Some(&n) = self.shape.get(axis) else {
            return Err(Error::IndexOutOfRange {
                what: "axis",
                index: axis as i64,
                size: self.ndim(),
            });
        };
        if index >= n {
            return Err(Error::IndexOutOfRange {
                what: "index",
                index: index as i64,
                size: n,
            });
        }
        let (mut shape, mut strides): (Dims, Strides) = (small(&self.shape), small(&self.strides));
        shape.remove(axis);
        strides.remove(axis);
        // An element of this layout: its offset is in range.
        let offset = (self.offset as isize + index as isize * self.strides[axis]) as usize;
        Ok(Layout::assemble(shape, strides, offset))
    }

    /// The same shape and strides at another base offset (when a sub-buffer is re-based).
    pub fn with_offset(&self, offset: usize) -> Result<Layout> {
        Layout::checked(&self.shape, &self.strides, offset)
    }
}

#[cfg(test)]
mod tests;
