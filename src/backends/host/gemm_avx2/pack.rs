//! Packing: copying a block of A or B into the order the tile kernel reads it, so the kernel
//! streams contiguous memory whatever the operands' strides (transposed, broadcast, negative).
//!
//! A block of `mc` rows becomes panels of `MR` rows, step-major (`MR` values of column `p`,
//! then of `p + 1`); a block of `nc` columns of B becomes panels of `NR` columns, step-major.
//! Rows or columns past the matrix's edge are packed as zeros, so edge tiles compute on
//! zeros and the kernel has one shape.

use super::kernel::Tile;

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

/// Packs rows `rows.start..rows.start + mr` (at most `MR`; fewer at the edge), columns
/// `k0..k0 + kc` of `a` into `dst` (`kc * MR` elements).
///
/// # Safety
/// Every (row, column) named is an element of `a`; `dst` holds `kc * MR` elements.
pub(crate) unsafe fn a_panel<T: Tile>(
    a: Strided<T>,
    i0: usize,
    mr: usize,
    k0: usize,
    kc: usize,
    dst: *mut T,
) {
    // SAFETY (the whole body): the caller's guarantees; `dst` is written at p * MR + r with
    // p < kc and r < MR.
    unsafe {
        if mr == T::MR && a.cs == 1 {
            // Row-major A: MR sequential read streams, one per row.
            for r in 0..T::MR {
                let src = a.at(i0 + r, k0);
                for p in 0..kc {
                    *dst.add(p * T::MR + r) = *src.add(p);
                }
            }
            return;
        }
        for p in 0..kc {
            for r in 0..T::MR {
                *dst.add(p * T::MR + r) = if r < mr {
                    *a.at(i0 + r, k0 + p)
                } else {
                    T::ZERO
                };
            }
        }
    }
}

/// Packs columns `j0..j0 + nr` (at most `NR`), rows `k0..k0 + kc` of `b` into `dst`
/// (`kc * NR` elements).
///
/// # Safety
/// Every (row, column) named is an element of `b`; `dst` holds `kc * NR` elements.
pub(crate) unsafe fn b_panel<T: Tile>(
    b: Strided<T>,
    j0: usize,
    nr: usize,
    k0: usize,
    kc: usize,
    dst: *mut T,
) {
    // SAFETY (the whole body): as in `a_panel`, with NR.
    unsafe {
        if nr == T::NR && b.cs == 1 {
            // Row-major B: each step is NR contiguous elements.
            for p in 0..kc {
                std::ptr::copy_nonoverlapping(b.at(k0 + p, j0), dst.add(p * T::NR), T::NR);
            }
            return;
        }
        for p in 0..kc {
            for j in 0..T::NR {
                *dst.add(p * T::NR + j) = if j < nr {
                    *b.at(k0 + p, j0 + j)
                } else {
                    T::ZERO
                };
            }
        }
    }
}
