//! The loops every host kernel shares: splitting work over a device's threads and walking
//! strided operands in long inner runs.

use super::simd::wide;
use super::view::View;
use super::{HostBuffer, HostDevice};
use crate::dtype::Element;
use crate::layout::{coalesce, contiguous_strides, for_each_run};
use std::mem::MaybeUninit;
use std::ops::Range;

/// Below this many elements a kernel runs on the calling thread: dispatching to a pool costs
/// more than the work.
pub(crate) const PAR_MIN: usize = 1 << 15;

/// A raw pointer that may cross threads; the code that shares it guarantees disjoint writes.
#[derive(Clone, Copy)]
pub(crate) struct SendPtr<T>(pub *mut T);

impl<T> SendPtr<T> {
    /// The pointer. A method (not `.0`) so closures capture the whole `Send` wrapper.
    #[inline(always)]
    pub fn ptr(self) -> *mut T {
        self.0
    }
}
// SAFETY: users only write disjoint index ranges through it (see `par_ranges`).
unsafe impl<T> Send for SendPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SendPtr<T> {}

/// Runs `f(0)`, .., `f(chunks - 1)` on `dev`'s threads.
///
/// Not generic on purpose: every kernel (op x dtype) reaches the pool through this one
/// function, so rayon's job machinery is compiled once instead of once per kernel (it was
/// most of the crate's code size).
pub(crate) fn par_for(dev: &HostDevice, chunks: usize, f: &(dyn Fn(usize) + Sync)) {
    if chunks <= 1 || dev.threads() <= 1 {
        (0..chunks).for_each(f);
        return;
    }
    dev.install(|| {
        use rayon::prelude::*;
        (0..chunks).into_par_iter().for_each(f);
    });
}

/// The chunk length to split `n` elements of work into over `dev`'s threads (a few chunks per
/// thread balance load), or `None` when `n` is too small or there is one thread.
pub(crate) fn chunk_len(dev: &HostDevice, n: usize) -> Option<usize> {
    let threads = dev.threads();
    (n >= PAR_MIN && threads > 1).then(|| (n / (threads * 4)).max(PAR_MIN / 2))
}

/// Runs `f` over disjoint ranges covering `0..n`, in parallel on `dev`'s threads when large.
pub(crate) fn par_ranges(dev: &HostDevice, n: usize, f: impl Fn(Range<usize>) + Sync) {
    let Some(chunk) = chunk_len(dev, n) else {
        f(0..n);
        return;
    };
    // Multiples of 64 keep chunks cache-line aligned.
    let chunk = chunk.next_multiple_of(64);
    par_for(dev, n.div_ceil(chunk), &|c| {
        f(c * chunk..((c + 1) * chunk).min(n))
    });
}

/// The output slice `r` of a buffer being filled by a kernel.
///
/// # Safety
/// `out` must point to at least `r.end` elements that no one else reads or writes meanwhile.
pub(crate) unsafe fn out_slice<'a, U>(
    out: SendPtr<MaybeUninit<U>>,
    r: &Range<usize>,
) -> &'a mut [MaybeUninit<U>] {
    // SAFETY: guaranteed by the caller.
    unsafe { std::slice::from_raw_parts_mut(out.ptr().add(r.start), r.len()) }
}

/// Allocates the output of an elementwise kernel: `n` elements of `U` on `dev`.
#[inline]
pub(crate) fn alloc_out<U: Element>(
    dev: &HostDevice,
    n: usize,
) -> crate::error::Result<HostBuffer> {
    let bytes = crate::layout::checked_bytes(n, std::mem::size_of::<U>(), dev.name())?;
    dev.alloc(bytes, dev.default_kind())
}

/// The start of a kernel's output buffer, typed.
pub(crate) fn out_ptr<U>(buf: &mut HostBuffer) -> SendPtr<MaybeUninit<U>> {
    SendPtr(buf.as_mut_ptr() as *mut MaybeUninit<U>)
}

/// `out[i] = f(x[i])` over the row-major elements of `x`; `out` must hold `x.layout.size()`
/// elements that nothing else touches meanwhile.
pub(crate) fn map1<T: Element, U: Element>(
    dev: &HostDevice,
    x: View<'_, T>,
    out: SendPtr<MaybeUninit<U>>,
    f: impl Fn(T) -> U + Sync + Send,
) {
    let n = x.layout.size();
    let o = out;
    if let Some(xs) = x.as_slice() {
        par_ranges(dev, n, |r| {
            // SAFETY: `out` holds n elements; ranges are disjoint.
            let os = unsafe { out_slice(o, &r) };
            wide(|| {
                for (o, &v) in os.iter_mut().zip(&xs[r]) {
                    o.write(f(v));
                }
            });
        });
        return;
    }
    let shape = x.layout.shape();
    let os = contiguous_strides(shape);
    let (cshape, [xs, ost]) = coalesce(shape, [x.layout.strides(), &os]);
    par_ranges(dev, n, |r| {
        for_each_run(
            &cshape,
            [&xs, &ost],
            [x.layout.offset() as isize, 0],
            r,
            |[xo, oo], len, [xi, _]| {
                // SAFETY: output offsets of a row-major walk are oo..oo+len, inside `out`.
                let os = unsafe { out_slice(o, &(oo as usize..oo as usize + len)) };
                for (j, o) in os.iter_mut().enumerate() {
                    // SAFETY: element j of a run the layout's walk produced.
                    o.write(f(unsafe { x.at(xo + j as isize * xi) }));
                }
            },
        );
    });
}

/// `out[i] = f(a[i], b[i])` over two views of one shape (same contract on `out` as `map1`).
pub(crate) fn map2<T: Element, U: Element>(
    dev: &HostDevice,
    a: View<'_, T>,
    b: View<'_, T>,
    out: SendPtr<MaybeUninit<U>>,
    f: impl Fn(T, T) -> U + Sync + Send,
) {
    let n = a.layout.size();
    let o = out;
    if let (Some(xa), Some(xb)) = (a.as_slice(), b.as_slice()) {
        par_ranges(dev, n, |r| {
            // SAFETY: `out` holds n elements; ranges are disjoint.
            let os = unsafe { out_slice(o, &r) };
            wide(|| {
                for ((o, &p), &q) in os.iter_mut().zip(&xa[r.clone()]).zip(&xb[r]) {
                    o.write(f(p, q));
                }
            });
        });
        return;
    }
    let shape = a.layout.shape();
    let os = contiguous_strides(shape);
    let (cshape, [sa, sb, so]) = coalesce(shape, [a.layout.strides(), b.layout.strides(), &os]);
    let base = [a.layout.offset() as isize, b.layout.offset() as isize, 0];
    par_ranges(dev, n, |r| {
        for_each_run(
            &cshape,
            [&sa, &sb, &so],
            base,
            r,
            |[ao, bo, oo], len, [ai, bi, _]| {
                // SAFETY: output offsets of a row-major walk are oo..oo+len, inside `out`.
                let os = unsafe { out_slice(o, &(oo as usize..oo as usize + len)) };
                // SAFETY (every `at` below): element j of a run the layouts' walk produced,
                // for operands whose inner strides are (ai, bi).
                match (ai, bi) {
                    // Broadcasting a scalar-like operand: keep it in a register.
                    (1, 0) => {
                        let q = unsafe { b.at(bo) };
                        for (j, o) in os.iter_mut().enumerate() {
                            o.write(f(unsafe { a.at(ao + j as isize) }, q));
                        }
                    }
                    (0, 1) => {
                        let p = unsafe { a.at(ao) };
                        for (j, o) in os.iter_mut().enumerate() {
                            o.write(f(p, unsafe { b.at(bo + j as isize) }));
                        }
                    }
                    _ => {
                        for (j, o) in os.iter_mut().enumerate() {
                            let j = j as isize;
                            let (p, q) = unsafe { (a.at(ao + j * ai), b.at(bo + j * bi)) };
                            o.write(f(p, q));
                        }
                    }
                }
            },
        );
    });
}

/// Fills `len` elements of `buf` with `value`.
pub(crate) fn fill<T: Element>(dev: &HostDevice, buf: &mut HostBuffer, len: usize, value: T) {
    let o = SendPtr(buf.as_mut_ptr() as *mut MaybeUninit<T>);
    par_ranges(dev, len, |r| {
        // SAFETY: the buffer holds `len` elements; ranges are disjoint.
        for s in unsafe { out_slice(o, &r) } {
            s.write(value);
        }
    });
}

/// `memcpy` of `len` bytes split over the device's threads.
pub(crate) fn par_memcpy(dev: &HostDevice, src: *const u8, dst: *mut u8, len: usize) {
    let (s, d) = (SendPtr(src as *mut u8), SendPtr(dst));
    par_ranges(dev, len, |r| {
        // SAFETY: callers pass `len` readable bytes at `src` and `len` writable bytes at `dst`
        // that do not overlap; ranges are disjoint.
        unsafe {
            std::ptr::copy_nonoverlapping(s.ptr().add(r.start), d.ptr().add(r.start), r.len())
        }
    });
}
