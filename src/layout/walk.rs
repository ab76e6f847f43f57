//! Strided loops: merging axes into long runs and visiting the elements of a layout run by
//! run. Kernels (host and GPU parameter packing) use these; they rely on the layout
//! invariant (offsets fit in `isize`) and do no checks of their own.

use super::shape::{Dims, Strides};
use smallvec::SmallVec;
use std::ops::Range;

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
