//! NumPy's basic slices (`start:stop:step`) resolved against an axis length.

use crate::error::{Error, Result};
use std::ops::{Range, RangeFrom, RangeFull, RangeTo};

/// One axis of a slice: NumPy's `start:stop:step`, with negative indices counting from the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slice {
    /// The first index (`None`: the start, or the end for a negative step).
    pub start: Option<isize>,
    /// The index past the last (`None`: the end, or before the start for a negative step).
    pub stop: Option<isize>,
    /// The step (non-zero).
    pub step: isize,
}

impl Slice {
    /// `start:stop:step`, as Python spells it.
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
    ///
    /// Computed in `i128`, so any `isize` start, stop and step (`isize::MIN` included) gives
    /// Python's answer instead of wrapping: `a[0:10:sys.maxsize]` is `[a[0]]`.
    pub(crate) fn resolve(&self, n: usize) -> Result<(isize, usize, isize)> {
        if self.step == 0 {
            return Err(Error::invalid("slice step cannot be zero"));
        }
        let n = n as i128;
        let step = self.step as i128;
        let norm = |i: isize| {
            let i = i as i128;
            if i < 0 { i + n } else { i }
        };
        let (start, len) = if step > 0 {
            let start = self.start.map_or(0, norm).clamp(0, n);
            let stop = self.stop.map_or(n, norm).clamp(0, n);
            let len = if stop > start {
                (stop - start + step - 1) / step
            } else {
                0
            };
            (start, len)
        } else {
            let start = self.start.map_or(n - 1, norm).clamp(-1, n - 1);
            let stop = self.stop.map_or(-1, norm).clamp(-1, n - 1);
            let len = if start > stop {
                (start - stop - step - 1) / -step
            } else {
                0
            };
            (start, len)
        };
        // start lies in -1..=n and len in 0..=n, and n (an axis length of a valid layout)
        // is at most isize::MAX: both convert exactly.
        Ok((start as isize, len as usize, self.step))
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
