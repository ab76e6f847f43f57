//! Typed, bounds-checked reads of a kernel input that lives in host memory.

use crate::backends::TensorRef;
use crate::dtype::Element;
use crate::error::{Error, Result};
use crate::layout::Layout;

/// A checked view: every offset its layout reaches lies inside the buffer.
#[derive(Clone, Copy)]
pub(crate) struct View<'a, T> {
    base: *const T,
    /// Whether it is row-major contiguous is the layout's own cached flag: a `bool` field
    /// here left 7 bytes of padding, which copies of the view read back with loads wider than
    /// the stores that wrote them (a failed store forwarding on every op).
    pub layout: &'a Layout,
    /// The element count, taken once here: a kernel asks for it several times (to allocate,
    /// to slice, to split), and each product over the shape showed in a small op's profile.
    len: usize,
}

// SAFETY: a View only reads an immutable buffer that outlives it ('a).
unsafe impl<T: Sync> Send for View<'_, T> {}
// SAFETY: as above; shared reads only.
unsafe impl<T: Sync> Sync for View<'_, T> {}

impl<'a, T: Element> View<'a, T> {
    /// Checks dtype, host accessibility, alignment and bounds of `t`. Inlined, with its
    /// errors built out of line: a `Result<View>` returned through memory was read back with
    /// 16-byte loads of what the callee had stored 8 bytes at a time, a failed store
    /// forwarding that `perf` put at ~8 % of an 8-element add's time.
    #[inline(always)]
    pub fn new(t: &TensorRef<'a>, backend: &str) -> Result<Self> {
        if t.dtype != T::DTYPE {
            return Err(wrong_dtype::<T>(t.dtype));
        }
        let Some(base) = t.buffer.address().host() else {
            return Err(not_host(t, backend));
        };
        let base = base.as_ptr() as *const T;
        if !(base as usize).is_multiple_of(std::mem::align_of::<T>()) {
            return Err(misaligned::<T>(backend));
        }
        let contiguous = t.layout.is_contiguous();
        let size = t.layout.size();
        // A contiguous view reaches offset..offset+size; others need the strided span.
        let end = if contiguous {
            t.layout.offset().saturating_add(size)
        } else {
            t.layout.span().end
        };
        let capacity = t.buffer.len_bytes() / std::mem::size_of::<T>();
        // An empty view reaches no element, whatever its offset.
        if size > 0 && end > capacity {
            return Err(out_of_bounds(t, end, capacity));
        }
        Ok(View {
            base,
            layout: t.layout,
            len: size,
        })
    }

    /// The elements as one slice when the layout is row-major contiguous.
    pub fn as_slice(&self) -> Option<&'a [T]> {
        if !self.layout.is_contiguous() {
            return None;
        }
        let n = self.len;
        if n == 0 {
            return Some(&[]);
        }
        // SAFETY: contiguous and bounds-checked in `new`: elements offset..offset+n exist,
        // are initialised (written by whoever produced the buffer) and are not mutated.
        Some(unsafe { std::slice::from_raw_parts(self.base.add(self.layout.offset()), n) })
    }

    /// The number of elements (`layout.size()`).
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// The element at buffer offset `off`.
    ///
    /// # Safety
    /// `off` must be an offset this view's layout reaches (`new` checked that all of them lie
    /// inside the buffer); kernels derive it from the layout's own shape and strides.
    #[inline(always)]
    pub unsafe fn at(&self, off: isize) -> T {
        // SAFETY: per the contract, `off` is inside the checked buffer.
        unsafe { *self.base.offset(off) }
    }

    pub fn base(&self) -> *const T {
        self.base
    }
}

#[cold]
#[inline(never)]
fn wrong_dtype<T: Element>(got: crate::dtype::DType) -> Error {
    Error::ElementType {
        array: got,
        requested: T::DTYPE,
    }
}

#[cold]
#[inline(never)]
fn not_host(t: &TensorRef<'_>, backend: &str) -> Error {
    Error::Backend {
        backend: backend.to_string(),
        message: format!("{:?} is not host-accessible memory", t.buffer),
    }
}

#[cold]
#[inline(never)]
fn misaligned<T: Element>(backend: &str) -> Error {
    Error::Backend {
        backend: backend.to_string(),
        message: format!("buffer is not aligned for {}", T::DTYPE),
    }
}

#[cold]
#[inline(never)]
fn out_of_bounds(t: &TensorRef<'_>, end: usize, capacity: usize) -> Error {
    Error::invalid(format!(
        "view {:?} reaches element {end} of a buffer holding {capacity}",
        t.layout
    ))
}
