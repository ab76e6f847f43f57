//! Shape, stride and offset arithmetic.
//!
//! A [`Layout`] maps a multi-index `i` of `shape` to the element offset
//! `offset + Σ i[k] * strides[k]` in a buffer. Strides are in elements (as in DLPack) and may
//! be negative (reversed slices) or zero (broadcasting). Invariant kept by every constructor:
//! for a non-empty layout every reachable offset is `>= 0`; `span()` gives the range touched.

use crate::error::{Error, Result};
use smallvec::SmallVec;
use std::ops::{Range, RangeFrom, RangeFull, RangeTo};

/// Dimensions (small arrays stay inline: no allocation for ndim <= 4).
pub type Dims = SmallVec<[usize; 4]>;
/// Strides in elements.
pub type Strides = SmallVec<[isize; 4]>;

/// A strided view of a buffer.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    shape: Dims,
    strides: Strides,
    offset: usize,
}

/// One axis of a slice: NumPy's `start:stop:step`, with negative indices counting from the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slice {
    pub start: Option<isize>,
    pub stop: Option<isize>,
    pub step: isize,
}

impl Slice {
    pub fn new(start: Option<isize>, stop: Option<isize>, step: isize) -> Self {
        Slice { start, stop, step }
    }
    /// The whole axis (`:`).
    pub fn full() -> Self {
        Slice::new(None, None, 1)
    }
    /// The whole axis reversed (`::-1`).
    pub fn reversed() -> Self {
        Slice::new(None, None, -1)
    }
    /// `start:stop:step` with explicit bounds.
    pub fn with_step(start: isize, stop: isize, step: isize) -> Self {
        Slice::new(Some(start), Some(stop), step)
    }

    /// Resolves against an axis of length `n`: `(first index, length, step)`.
    pub(crate) fn resolve(&self, n: usize) -> Result<(isize, usize, isize)> {
        if self.step == 0 {
            return Err(Error::invalid("slice step cannot be zero"));
        }
        let n = n as isize;
        let norm = |i: isize| if i < 0 { i + n } else { i };
        let (start, len) = if self.step > 0 {
            let start = self.start.map_or(0, norm).clamp(0, n);
            let stop = self.stop.map_or(n, norm).clamp(0, n);
            let len = if stop > start {
                (stop - start + self.step - 1) / self.step
            } else {
                0
            };
            (start, len)
        } else {
            let start = self.start.map_or(n - 1, norm).clamp(-1, n - 1);
            let stop = self.stop.map_or(-1, norm).clamp(-1, n - 1);
            let step = -self.step;
            let len = if start > stop {
                (start - stop + step - 1) / step
            } else {
                0
            };
            (start, len)
        };
        Ok((start, len as usize, self.step))
    }
}

impl From<Range<usize>> for Slice {
    fn from(r: Range<usize>) -> Self {
        Slice::new(Some(r.start as isize), Some(r.end as isize), 1)
    }
}
impl From<RangeFrom<usize>> for Slice {
    fn from(r: RangeFrom<usize>) -> Self {
        Slice::new(Some(r.start as isize), None, 1)
    }
}
impl From<RangeTo<usize>> for Slice {
    fn from(r: RangeTo<usize>) -> Self {
        Slice::new(None, Some(r.end as isize), 1)
    }
}
impl From<RangeFull> for Slice {
    fn from(_: RangeFull) -> Self {
        Slice::full()
    }
}

/// Number of elements of `shape`, or an error if it overflows `usize`.
pub fn checked_size(shape: &[usize]) -> Result<usize> {
    shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| {
            Error::invalid(format!(
                "shape {shape:?} has more elements than fit in usize"
            ))
        })
}

/// Row-major strides of `shape`.
pub fn contiguous_strides(shape: &[usize]) -> Strides {
    let mut strides: Strides = SmallVec::from_elem(1, shape.len());
    let mut acc = 1isize;
    for k in (0..shape.len()).rev() {
        strides[k] = acc;
        acc = acc.saturating_mul(shape[k].max(1) as isize);
    }
    strides
}

/// Resolves a possibly negative axis against `ndim`.
pub fn normalize_axis(axis: isize, ndim: usize) -> Result<usize> {
    let a = if axis < 0 { axis + ndim as isize } else { axis };
    if a < 0 || a >= ndim as isize {
        return Err(Error::IndexOutOfRange {
            what: "axis",
            index: axis as i64,
            size: ndim,
        });
    }
    Ok(a as usize)
}

/// `a == b` for shapes, inline: slice `==` on integers calls `memcmp`, whose call costs more
/// than comparing the handful of axes an array has (it showed in every small op's profile).
#[inline]
pub fn same_shape(a: &[usize], b: &[usize]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// NumPy broadcasting of two shapes.
pub fn broadcast_shapes(op: &'static str, a: &[usize], b: &[usize]) -> Result<Dims> {
    if same_shape(a, b) {
        return Ok(SmallVec::from_slice(a));
    }
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
    Ok(out)
}

impl Clone for Layout {
    // By hand: SmallVec's derived clone goes element by element; these are plain copies, and
    // layouts are cloned on every op and export.
    fn clone(&self) -> Self {
        Layout {
            shape: SmallVec::from_slice(&self.shape),
            strides: SmallVec::from_slice(&self.strides),
            offset: self.offset,
        }
    }
}

impl Layout {
    /// A row-major layout of `shape` at offset 0.
    pub fn contiguous(shape: &[usize]) -> Layout {
        Layout {
            strides: contiguous_strides(shape),
            shape: SmallVec::from_slice(shape),
            offset: 0,
        }
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
        let layout = Layout {
            shape: SmallVec::from_slice(shape),
            strides: SmallVec::from_slice(strides),
            offset,
        };
        checked_size(shape)?;
        if let Some(span) = layout.checked_span() {
            if span.start < 0 || span.end > buffer_len as i128 {
                return Err(Error::invalid(format!(
                    "layout shape {shape:?} strides {strides:?} offset {offset} reaches \
                     elements {span:?}, outside a buffer of {buffer_len} elements"
                )));
            }
        } else if layout.size() > 0 {
            return Err(Error::invalid("layout offsets overflow"));
        }
        Ok(layout)
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }
    pub fn strides(&self) -> &[isize] {
        &self.strides
    }
    pub fn offset(&self) -> usize {
        self.offset
    }
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }
    pub fn size(&self) -> usize {
        self.shape.iter().product()
    }

    /// Range of element offsets touched (`start..end`), computed in i128 so it cannot overflow.
    /// `None` for an empty layout.
    fn checked_span(&self) -> Option<Range<i128>> {
        if self.shape.contains(&0) {
            return None;
        }
        let (mut lo, mut hi) = (self.offset as i128, self.offset as i128);
        for (&d, &s) in self.shape.iter().zip(&self.strides) {
            let reach = (d as i128 - 1) * s as i128;
            if reach < 0 {
                lo += reach;
            } else {
                hi += reach;
            }
        }
        Some(lo..hi + 1)
    }

    /// Element offsets touched by this layout (`0..0` when empty).
    pub fn span(&self) -> Range<usize> {
        match self.checked_span() {
            Some(r) => r.start as usize..r.end as usize,
            None => self.offset..self.offset,
        }
    }

    /// Row-major contiguous, ignoring the strides of size-1 axes.
    pub fn is_contiguous(&self) -> bool {
        let mut acc = 1isize;
        for (&d, &s) in self.shape.iter().zip(self.strides.iter()).rev() {
            if d == 1 {
                continue;
            }
            if s != acc {
                return self.size() == 0;
            }
            acc *= d as isize;
        }
        true
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
        let mut seen = vec![false; n];
        if perm.len() != n
            || perm
                .iter()
                .any(|&p| p >= n || std::mem::replace(&mut seen[p], true))
        {
            return Err(Error::invalid(format!(
                "{perm:?} is not a permutation of {n} axes"
            )));
        }
        Ok(Layout {
            shape: perm.iter().map(|&p| self.shape[p]).collect(),
            strides: perm.iter().map(|&p| self.strides[p]).collect(),
            offset: self.offset,
        })
    }

    /// Axes reversed (matrix transpose for 2-D).
    pub fn transpose(&self) -> Layout {
        let perm: Vec<usize> = (0..self.ndim()).rev().collect();
        // A reversal is always a valid permutation.
        Layout {
            shape: perm.iter().map(|&p| self.shape[p]).collect(),
            strides: perm.iter().map(|&p| self.strides[p]).collect(),
            offset: self.offset,
        }
    }

    /// A basic slice; axes beyond `slices.len()` are kept whole.
    pub fn slice(&self, slices: &[Slice]) -> Result<Layout> {
        if slices.len() > self.ndim() {
            return Err(Error::invalid(format!(
                "{} slices for an array of {} axes",
                slices.len(),
                self.ndim()
            )));
        }
        let mut out = self.clone();
        let mut offset = self.offset as isize;
        let mut empty = false;
        for (k, s) in slices.iter().enumerate() {
            let (start, len, step) = s.resolve(self.shape[k])?;
            out.shape[k] = len;
            out.strides[k] = self.strides[k] * step;
            if len == 0 {
                empty = true;
            } else {
                offset += start * self.strides[k];
            }
        }
        // An empty view keeps its base offset: `start` may lie past the end of the axis.
        out.offset = if empty { self.offset } else { offset as usize };
        Ok(out)
    }

    /// Broadcast to `shape` (NumPy rules): new leading axes and size-1 axes get stride 0.
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
        Ok(Layout {
            shape: SmallVec::from_slice(shape),
            strides,
            offset: self.offset,
        })
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
            return Ok(Some(Layout {
                shape: SmallVec::from_slice(shape),
                strides: contiguous_strides(shape),
                offset: self.offset,
            }));
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
        Ok(Some(Layout {
            shape: SmallVec::from_slice(shape),
            strides,
            offset: self.offset,
        }))
    }

    /// The layout with `axis` removed, positioned at `index` along it.
    pub fn select(&self, axis: usize, index: usize) -> Layout {
        let mut out = self.clone();
        out.offset = (self.offset as isize + index as isize * self.strides[axis]) as usize;
        out.shape.remove(axis);
        out.strides.remove(axis);
        out
    }

    /// The same layout moved by `delta` elements (used when a sub-buffer is re-based).
    pub fn with_offset(&self, offset: usize) -> Layout {
        Layout {
            offset,
            ..self.clone()
        }
    }
}

/// Merges axes that are contiguous in every operand and drops size-1 axes, so strided loops
/// run over the longest possible inner runs. Returns the merged shape and per-operand strides.
pub fn coalesce<const N: usize>(shape: &[usize], strides: [&[isize]; N]) -> (Dims, [Strides; N]) {
    let mut out_shape: Dims = SmallVec::new();
    let mut out_strides: [Strides; N] = std::array::from_fn(|_| SmallVec::new());
    for k in 0..shape.len() {
        if shape[k] == 1 {
            continue;
        }
        let mergeable = !out_shape.is_empty()
            && (0..N).all(|o| {
                let last = out_strides[o].len() - 1;
                out_strides[o][last] == strides[o][k] * shape[k] as isize
            });
        if mergeable {
            let last = out_shape.len() - 1;
            out_shape[last] *= shape[k];
            for o in 0..N {
                let l = out_strides[o].len() - 1;
                out_strides[o][l] = strides[o][k];
            }
        } else {
            out_shape.push(shape[k]);
            for o in 0..N {
                out_strides[o].push(strides[o][k]);
            }
        }
    }
    (out_shape, out_strides)
}

/// Visits the elements `range` (row-major linear positions in `shape`) as runs along the last
/// axis: `f(first offsets per operand, run length, inner strides per operand)`.
pub fn for_each_run<const N: usize>(
    shape: &[usize],
    strides: [&[isize]; N],
    base: [isize; N],
    range: Range<usize>,
    mut f: impl FnMut([isize; N], usize, [isize; N]),
) {
    if range.is_empty() {
        return;
    }
    let nd = shape.len();
    if nd == 0 {
        f(base, 1, [0; N]);
        return;
    }
    let inner = shape[nd - 1];
    let inner_strides: [isize; N] = std::array::from_fn(|o| strides[o][nd - 1]);
    let mut idx: Dims = SmallVec::from_elem(0, nd);
    let mut rem = range.start;
    for k in (0..nd).rev() {
        idx[k] = rem % shape[k];
        rem /= shape[k];
    }
    let mut pos = range.start;
    while pos < range.end {
        let len = (inner - idx[nd - 1]).min(range.end - pos);
        let offs: [isize; N] = std::array::from_fn(|o| {
            base[o]
                + idx
                    .iter()
                    .zip(strides[o])
                    .map(|(&i, &s)| i as isize * s)
                    .sum::<isize>()
        });
        f(offs, len, inner_strides);
        pos += len;
        idx[nd - 1] += len;
        let mut k = nd - 1;
        while idx[k] == shape[k] && k > 0 {
            idx[k] = 0;
            k -= 1;
            idx[k] += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_semantics_match_python() {
        let l = Layout::contiguous(&[10]);
        let cases: [(Slice, Vec<usize>); 6] = [
            (Slice::with_step(2, 8, 3), vec![2, 5]),
            (Slice::reversed(), (0..10).rev().collect()),
            (Slice::new(Some(-3), None, 1), vec![7, 8, 9]),
            (Slice::new(Some(8), Some(2), -2), vec![8, 6, 4]),
            (Slice::new(Some(20), None, 1), vec![]),
            (Slice::new(None, Some(-20), -1), (0..10).rev().collect()),
        ];
        for (s, want) in cases {
            let v = l.slice(&[s]).unwrap();
            let got: Vec<usize> = (0..v.size()).map(|i| v.offset_of(&[i])).collect();
            assert_eq!(got, want, "{s:?}");
        }
        assert!(l.slice(&[Slice::with_step(0, 1, 0)]).is_err());
    }

    #[test]
    fn reshape_of_transposed_needs_copy() {
        let t = Layout::contiguous(&[2, 3]).transpose();
        assert_eq!(t.reshape(&[6]).unwrap(), None);
        assert!(t.reshape(&[3, 2, 1]).unwrap().is_some());
        assert!(t.reshape(&[5]).is_err());
    }

    #[test]
    fn from_parts_rejects_out_of_bounds() {
        assert!(Layout::from_parts(&[3], &[2], 0, 5).is_ok());
        assert!(Layout::from_parts(&[3], &[2], 0, 4).is_err());
        assert!(Layout::from_parts(&[3], &[-1], 1, 10).is_err());
        assert!(Layout::from_parts(&[3], &[-1], 2, 10).is_ok());
        assert!(Layout::from_parts(&[0], &[-100], 0, 0).is_ok());
        assert!(Layout::from_parts(&[usize::MAX, 2], &[1, 1], 0, 4).is_err());
    }
}
