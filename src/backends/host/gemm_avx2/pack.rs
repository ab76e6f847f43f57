//! Packing: copying a block of A or B into the order the tile kernel reads it, so the kernel
//! streams contiguous memory whatever the operands' strides (transposed, broadcast, negative).
//!
//! A block of `mc` rows becomes panels of `MR` rows, step-major (`MR` values of column `p`,
//! then of `p + 1`); a block of `nc` columns of B becomes panels of `NR` columns, step-major.
//! Rows or columns past the matrix's edge are packed as zeros, so edge tiles compute on
//! zeros and the kernel has one shape.

use super::kernel::Tile;
use super::operand::Operand;
use std::mem::MaybeUninit;

/// A strided matrix: element (i, j) at `ptr + i * rs + j * cs`.
#[derive(Clone, Copy)]
pub(crate) struct Strided<T> {
    pub ptr: *const T,
    pub rs: isize,
    pub cs: isize,
}

// SAFETY: the matrices are only read, by the threads of one product that its caller
// keeps alive until they are done.
unsafe impl<T: Sync> Send for Strided<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for Strided<T> {}

impl<T> Strided<T> {
    /// # Safety
    /// (i, j) is an element of the matrix.
    #[inline(always)]
    unsafe fn at(self, i: usize, j: usize) -> *const T {
        // SAFETY: guaranteed by the caller.
        unsafe { self.ptr.offset(i as isize * self.rs + j as isize * self.cs) }
    }
}

/// Packs rows `i0..i0 + mr` (`mr <= MR`; fewer at the edge), columns `k0..k0 + kc` of `a`
/// into `dst` (`kc * MR` elements), widened to the accumulator type.
///
/// # Safety
/// Every (row, column) named is an element of `a`; `dst` holds `kc * MR` elements; `kc` is
/// at most `KC`.
pub(crate) unsafe fn a_panel<S: Operand>(
    a: Strided<S>,
    i0: usize,
    mr: usize,
    k0: usize,
    kc: usize,
    dst: *mut S::Acc,
) {
    let w = S::Acc::MR;
    // SAFETY: as promised by the caller; `through` calls `fill` with `kc * w` elements.
    unsafe {
        through::<S>(kc * w, dst, |d| {
            if mr == w && a.cs == 1 {
                // Row-major A: w sequential read streams, one per row.
                for r in 0..w {
                    let src = a.at(i0 + r, k0);
                    for p in 0..kc {
                        *d.add(p * w + r) = *src.add(p);
                    }
                }
                return;
            }
            for p in 0..kc {
                for r in 0..w {
                    *d.add(p * w + r) = if r < mr {
                        *a.at(i0 + r, k0 + p)
                    } else {
                        S::ZERO
                    };
                }
            }
        })
    }
}

/// Packs columns `j0..j0 + nr` (`nr <= NR`), rows `k0..k0 + kc` of `b` into `dst` (`kc * NR`
/// elements), widened to the accumulator type.
///
/// # Safety
/// Every (row, column) named is an element of `b`; `dst` holds `kc * NR` elements; `kc` is
/// at most `KC`.
pub(crate) unsafe fn b_panel<S: Operand>(
    b: Strided<S>,
    j0: usize,
    nr: usize,
    k0: usize,
    kc: usize,
    dst: *mut S::Acc,
) {
    let w = S::Acc::NR;
    // SAFETY: as in `a_panel`.
    unsafe {
        through::<S>(kc * w, dst, |d| {
            if nr == w && b.cs == 1 {
                // Row-major B: each step is w contiguous elements.
                for p in 0..kc {
                    std::ptr::copy_nonoverlapping(b.at(k0 + p, j0), d.add(p * w), w);
                }
                return;
            }
            for p in 0..kc {
                for j in 0..w {
                    *d.add(p * w + j) = if j < nr {
                        *b.at(k0 + p, j0 + j)
                    } else {
                        S::ZERO
                    };
                }
            }
        })
    }
}

/// The most elements of a panel: `KC` steps of the widest tile (f32's 16).
const PANEL_MAX: usize = super::KC * 16;

/// Calls `fill` with where to write `len` elements of `S`: `dst` itself when `S` is its
/// accumulator type, else a stack buffer that is widened into `dst` afterwards.
///
/// # Safety
/// `dst` holds `len <= PANEL_MAX` elements; `fill` writes all `len` elements it is given.
unsafe fn through<S: Operand>(len: usize, dst: *mut S::Acc, fill: impl FnOnce(*mut S)) {
    if S::NATIVE {
        // `NATIVE`: `S` is `S::Acc` (the trait's safety contract).
        fill(dst as *mut S);
        return;
    }
    let mut buf = [const { MaybeUninit::<S>::uninit() }; PANEL_MAX];
    let buf = &mut buf[..len];
    fill(buf.as_mut_ptr() as *mut S);
    // SAFETY: `fill` initialised all `len` elements; `dst` holds `len` elements.
    unsafe {
        let src = std::slice::from_raw_parts(buf.as_ptr() as *const S, len);
        let out = std::slice::from_raw_parts_mut(dst as *mut MaybeUninit<S::Acc>, len);
        S::widen(src, out);
    }
}
