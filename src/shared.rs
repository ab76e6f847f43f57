//! `Shared<T>`: a reference-counted pointer with no weak count, whose last owner frees the
//! value without an atomic read-modify-write.
//!
//! Why not `std::sync::Arc`: every op makes an array and a buffer and drops them again, and
//! an uncontended `lock`-prefixed update costs ~7 ns on the machines we measure (a twentieth
//! of an 8-element add). `Arc`'s drop does two (strong, then weak); `Shared`'s does none when
//! the count reads 1, which is the usual case for an op's result.
//!
//! Invariant: `count` is the number of live `Shared` handles to the allocation. There are no
//! weak handles, so a count of 1 observed by a handle's owner means that owner holds the only
//! handle, and no other thread can raise it (raising it needs a handle to clone).

use std::alloc::Layout;
use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering, fence};

/// The allocation: the count, then the value (last, so `Counted<dyn Trait>` is possible).
pub(crate) struct Counted<T: ?Sized> {
    pub(crate) count: AtomicUsize,
    pub(crate) value: T,
}

/// A shared, immutable `T` counted without a weak count (see the module's comment).
pub struct Shared<T: ?Sized> {
    ptr: NonNull<Counted<T>>,
    /// Owns a `Counted<T>` for drop check.
    _owns: PhantomData<Counted<T>>,
}

// SAFETY: as for `Arc<T>`: handles on several threads share `&T` (needs `Sync`) and the last
// one, on any thread, drops the `T` (needs `Send`).
unsafe impl<T: ?Sized + Sync + Send> Send for Shared<T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized + Sync + Send> Sync for Shared<T> {}

/// Counts above this abort, as `Arc` does: `mem::forget` of clones in a loop must not wrap
/// the count to zero and free a value still in use.
const MAX_COUNT: usize = isize::MAX as usize;

impl<T> Shared<T> {
    /// A handle to `value`, the only one.
    pub fn new(value: T) -> Shared<T> {
        Shared {
            ptr: Shared::place(value),
            _owns: PhantomData,
        }
    }

    /// `value` counted once, in memory from the per-thread cache (or the allocator). Unsized
    /// handles coerce the pointer this returns (`NonNull` coerces as `Box` does). Inlined: a
    /// value passed to a call goes through memory, and its copy into place read it back with
    /// wider loads than the stores that wrote it (a failed store forwarding).
    #[inline(always)]
    pub(crate) fn place(value: T) -> NonNull<Counted<T>> {
        let ptr = Shared::<T>::memory();
        // SAFETY: fresh from `memory`, written by nothing else.
        unsafe { Shared::fill(ptr, value) };
        ptr
    }

    /// As [`place`](Self::place), for the value `make` returns, made once the memory is
    /// taken (see [`new_with`](Self::new_with)).
    #[inline(always)]
    pub(crate) fn place_with(make: impl FnOnce() -> T) -> NonNull<Counted<T>> {
        let ptr = Shared::<T>::memory();
        // SAFETY: fresh from `memory`, written by nothing else. Should `make` panic, the
        // memory is lost, never read.
        unsafe { Shared::fill(ptr, make()) };
        ptr
    }

    /// A handle made in two steps, for a value too large to build before its memory is
    /// taken without a copy (`new_with`'s closure is itself copied in, with loads wider than
    /// the stores that built it): [`memory`](Self::memory) first, then this writes `value`,
    /// which the caller builds in the call's argument, inlined into place.
    ///
    /// # Safety
    /// `ptr` came from `memory()` and nothing has been written to it.
    #[inline(always)]
    pub(crate) unsafe fn init(ptr: NonNull<Counted<T>>, value: T) -> Shared<T> {
        // SAFETY: per the contract.
        unsafe { Shared::fill(ptr, value) };
        Shared {
            ptr,
            _owns: PhantomData,
        }
    }

    /// As [`init`](Self::init), the value written in place by `write`, field by field: a
    /// value built whole and moved in (an array's handle, ~360 bytes) was staged on the stack
    /// and copied with loads wider than the stores that had just built it.
    ///
    /// # Safety
    /// `ptr` came from `memory()` and nothing has been written to it; `write` initialises
    /// every field of the value it is given, and does not panic.
    #[inline(always)]
    pub(crate) unsafe fn init_in_place(
        ptr: NonNull<Counted<T>>,
        write: impl FnOnce(*mut T),
    ) -> Shared<T> {
        // SAFETY: per the contract: `write` initialises the value, the count follows.
        unsafe {
            let p = ptr.as_ptr();
            write(std::ptr::addr_of_mut!((*p).value));
            std::ptr::addr_of_mut!((*p).count).write(AtomicUsize::new(1));
        }
        Shared {
            ptr,
            _owns: PhantomData,
        }
    }

    /// Writes `value` counted once into `ptr`, field by field (so that, inlined, each goes
    /// straight from where it was computed).
    ///
    /// # Safety
    /// `ptr` came from `memory()` and nothing has been written to it: fresh memory of
    /// `Counted<T>`'s size and alignment, owned by no one, whose fields are written here
    /// before any handle exists.
    #[inline(always)]
    unsafe fn fill(ptr: NonNull<Counted<T>>, value: T) {
        // SAFETY: per the contract.
        unsafe {
            let p = ptr.as_ptr();
            std::ptr::addr_of_mut!((*p).value).write(value);
            std::ptr::addr_of_mut!((*p).count).write(AtomicUsize::new(1));
        }
    }

    /// Fresh memory for one `Counted<T>`, from the per-thread cache (or the allocator).
    #[inline(always)]
    pub(crate) fn memory() -> NonNull<Counted<T>> {
        recycle::alloc(Layout::new::<Counted<T>>()).cast::<Counted<T>>()
    }

    /// A handle to the value `make` returns, the only one. The memory is taken first, so
    /// that, inlined, `make` writes the value straight into it: an array's handle is ~340
    /// bytes, and building it on the stack first cost a `memcpy` per op.
    #[inline(always)]
    pub fn new_with(make: impl FnOnce() -> T) -> Shared<T> {
        Shared {
            ptr: Shared::place_with(make),
            _owns: PhantomData,
        }
    }

    /// The value, if this is the only handle; the handle back otherwise.
    pub fn try_unwrap(this: Shared<T>) -> Result<T, Shared<T>> {
        if !this.is_unique() {
            return Err(this);
        }
        let this = std::mem::ManuallyDrop::new(this);
        let ptr = this.ptr.as_ptr();
        // SAFETY: the only handle (is_unique's Acquire load saw 1, and with no weak handles
        // nothing can raise it), and it is not dropped (ManuallyDrop): the value is ours to
        // move out, once, and then its memory to free.
        unsafe {
            let value = std::ptr::addr_of!((*ptr).value).read();
            recycle::free(
                NonNull::new_unchecked(ptr.cast()),
                Layout::new::<Counted<T>>(),
            );
            Ok(value)
        }
    }
}

impl<T: ?Sized> Shared<T> {
    /// A handle owning `ptr`, which `place` made (coerced to `T`, possibly unsized).
    ///
    /// # Safety
    /// `ptr` came from `Shared::place` and no handle owns it yet.
    pub(crate) unsafe fn from_placed(ptr: NonNull<Counted<T>>) -> Shared<T> {
        Shared {
            ptr,
            _owns: PhantomData,
        }
    }

    fn counted(&self) -> &Counted<T> {
        // SAFETY: the allocation lives while any handle does, and this is one.
        unsafe { self.ptr.as_ref() }
    }

    /// Whether this is the only handle. Acquire: every other handle's drop (a Release
    /// decrement) happens before what the caller then does with the value.
    fn is_unique(&self) -> bool {
        self.counted().count.load(Ordering::Acquire) == 1
    }

    /// The value, mutably, if this is the only handle.
    pub fn get_mut(this: &mut Shared<T>) -> Option<&mut T> {
        if this.is_unique() {
            // SAFETY: the only handle, borrowed mutably: no other reference to the value
            // exists or can be made while the borrow lasts.
            Some(unsafe { &mut this.ptr.as_mut().value })
        } else {
            None
        }
    }

    /// Whether both handles point to the same allocation.
    pub fn ptr_eq(a: &Shared<T>, b: &Shared<T>) -> bool {
        std::ptr::addr_eq(a.ptr.as_ptr(), b.ptr.as_ptr())
    }
}

impl<T: ?Sized> Clone for Shared<T> {
    fn clone(&self) -> Shared<T> {
        // Relaxed, as `Arc`: a new handle comes from an existing one, which keeps the value
        // alive; ordering matters only for the drop that frees it.
        let old = self.counted().count.fetch_add(1, Ordering::Relaxed);
        if old > MAX_COUNT {
            std::process::abort();
        }
        Shared {
            ptr: self.ptr,
            _owns: PhantomData,
        }
    }
}

impl<T: ?Sized> Drop for Shared<T> {
    fn drop(&mut self) {
        let count = &self.counted().count;
        // The last handle frees without a read-modify-write (see the module's invariant);
        // any other drops its count with Release, so its uses of the value happen before the
        // free, which the Acquire load or fence orders after every such decrement.
        if count.load(Ordering::Acquire) != 1 {
            if count.fetch_sub(1, Ordering::Release) != 1 {
                return;
            }
            fence(Ordering::Acquire);
        }
        let layout = Layout::for_value(self.counted());
        // SAFETY: no handle is left (the count was 1 and was ours), so nothing else reads the
        // allocation: the value is dropped once, then its memory (made by `place` with this
        // layout) goes back.
        unsafe {
            std::ptr::drop_in_place(self.ptr.as_ptr());
            recycle::free(self.ptr.cast(), layout);
        }
    }
}

impl<T: ?Sized> Deref for Shared<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.counted().value
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// Small blocks kept per thread for the next block of the same layout: `Shared`'s handles
/// (an op makes two, its array and its buffer, and drops two; the allocator's own round trip
/// for them was ~280 instructions of an 8-element add's ~1,930) and DLPack export holders.
/// Like NumPy's cache of small dimension arrays, bounded (16 blocks of at most 1 KiB a
/// thread) and freed when the thread ends.
pub(crate) mod recycle {
    use crate::thread_blocks::{self, ThreadBlocks};
    use std::alloc::{self, Layout};
    use std::ptr::NonNull;

    /// Blocks kept a thread.
    const LIMIT: usize = 16;
    /// Largest block kept.
    const MAX_SIZE: usize = 1024;
    /// A bin per multiple of 8 bytes up to `MAX_SIZE`, for each of the two alignments kept.
    const BINS: usize = 2 * (MAX_SIZE / 8 + 1);

    thread_local! {
        static BLOCKS: ThreadBlocks<BINS> = const { ThreadBlocks::new(LIMIT, dealloc) };
    }

    /// The bin of `layout`: only sizes up to `MAX_SIZE` aligned to 8 or 16 bytes (a
    /// `Counted<T>` holds a count, so its size is a multiple of 8 and its alignment at least
    /// 8). Its blocks are aligned for the cache's link.
    #[inline(always)]
    fn bin(layout: Layout) -> Option<usize> {
        let (size, align) = (layout.size(), layout.align());
        ((8..=MAX_SIZE).contains(&size) && size.is_multiple_of(8) && (align == 8 || align == 16))
            .then(|| size / 8 + usize::from(align == 16) * (MAX_SIZE / 8 + 1))
    }

    /// The layout whose blocks go in `bin` (the inverse of [`bin`]).
    fn layout_of(bin: usize) -> Layout {
        let (align, size) = if bin > MAX_SIZE / 8 {
            (16, (bin - (MAX_SIZE / 8 + 1)) * 8)
        } else {
            (8, bin * 8)
        };
        Layout::from_size_align(size, align).expect("a bin's size is a multiple of its alignment")
    }

    /// # Safety
    /// `ptr` came from `alloc::alloc(layout_of(bin))` and no one uses it.
    unsafe fn dealloc(ptr: NonNull<u8>, bin: usize) {
        // SAFETY: per the contract.
        unsafe { dealloc_block(ptr, layout_of(bin)) };
    }

    /// Memory for `layout` (non-zero size): a kept block, or the allocator's (which aborts
    /// when memory runs out, as `Box::new` does). Inlined: the layout is most often a
    /// constant, and its bin with it.
    #[inline(always)]
    pub(crate) fn alloc(layout: Layout) -> NonNull<u8> {
        match bin(layout).and_then(|b| thread_blocks::take(&BLOCKS, b)) {
            Some(p) => p,
            None => alloc_new(layout),
        }
    }

    /// [`alloc`] from the allocator. Out of line, and out of the DLPack export's hot section
    /// (see `Array::to_dlpack_with`): the export's fast path takes kept blocks.
    #[cold]
    #[inline(never)]
    fn alloc_new(layout: Layout) -> NonNull<u8> {
        // SAFETY: every layout passed here is a `Counted<T>`'s (which holds a count) or a DLPack
        // holder's (which holds a managed tensor): never of size zero.
        let p = unsafe { alloc::alloc(layout) };
        NonNull::new(p).unwrap_or_else(|| alloc::handle_alloc_error(layout))
    }

    /// Takes back `ptr`, made by `alloc` with `layout`: kept for the next handle, or freed.
    ///
    /// # Safety
    /// `ptr` came from `alloc(layout)`, holds no live value, and is not used afterwards.
    #[inline(always)]
    pub(crate) unsafe fn free(ptr: NonNull<u8>, layout: Layout) {
        let left = match bin(layout) {
            // SAFETY: per the contract the block is unused from now on; `bin` keeps only
            // layouts aligned to 8 or more and at least 8 long, whose `layout_of` is `layout`.
            Some(b) => {
                unsafe { thread_blocks::put(&BLOCKS, ptr, b) }.map(|(p, b)| (p, layout_of(b)))
            }
            None => Some((ptr, layout)),
        };
        if let Some((ptr, layout)) = left {
            // SAFETY: the block given back is `ptr`, or one the cache kept: from `alloc::alloc`
            // (directly, or kept and handed out again) with `layout`, and unused now.
            unsafe { dealloc_block(ptr, layout) };
        }
    }

    /// [`alloc`] out of line, in the DLPack export's hot section (see
    /// `Array::to_dlpack_with`), for the export's holders: where the export's code lies beside
    /// NumPy's and Python's decides its instruction-cache misses, and this keeps the section
    /// as it was measured (`scripts/py_instructions.sh`) when `alloc` and `free` were calls.
    #[cfg_attr(target_os = "linux", unsafe(link_section = ".text.hot.dlpack_export"))]
    #[inline(never)]
    pub(crate) fn alloc_hot(layout: Layout) -> NonNull<u8> {
        alloc(layout)
    }

    /// [`free`] out of line, in the DLPack export's hot section (see [`alloc_hot`]).
    ///
    /// # Safety
    /// As [`free`].
    #[cfg_attr(target_os = "linux", unsafe(link_section = ".text.hot.dlpack_export"))]
    #[inline(never)]
    pub(crate) unsafe fn free_hot(ptr: NonNull<u8>, layout: Layout) {
        // SAFETY: per the contract.
        unsafe { free(ptr, layout) }
    }

    /// Frees a block the thread's cache does not keep, or gave up.
    ///
    /// # Safety
    /// As `alloc::dealloc`.
    #[cold]
    #[inline(never)]
    unsafe fn dealloc_block(ptr: NonNull<u8>, layout: Layout) {
        // SAFETY: per the contract.
        unsafe { alloc::dealloc(ptr.as_ptr(), layout) };
    }
}

#[cfg(test)]
mod tests {
    use super::Shared;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts its drops, to see each value dropped exactly once.
    struct Probe(Arc<AtomicUsize>);
    impl Drop for Probe {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn the_value_is_dropped_once_by_the_last_handle() {
        let drops = Arc::new(AtomicUsize::new(0));
        let a = Shared::<Probe>::new(Probe(drops.clone()));
        let b = a.clone();
        assert!(Shared::ptr_eq(&a, &b));
        drop(a);
        assert_eq!(drops.load(Ordering::SeqCst), 0);
        drop(b);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn new_with_holds_what_make_returned_counted_once() {
        let drops = Arc::new(AtomicUsize::new(0));
        let a = Shared::<(Probe, [u64; 40])>::new_with(|| (Probe(drops.clone()), [7; 40]));
        assert_eq!(a.1, [7; 40]);
        let b = a.clone();
        drop(a);
        assert_eq!(drops.load(Ordering::SeqCst), 0);
        let (probe, _) = Shared::try_unwrap(b).ok().expect("the only handle");
        drop(probe);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn unwrap_and_get_mut_only_for_the_only_handle() {
        let mut a = Shared::<u32>::new(5);
        let b = a.clone();
        assert!(Shared::get_mut(&mut a).is_none());
        let a = Shared::try_unwrap(a).unwrap_err();
        drop(b);
        let mut a = a;
        *Shared::get_mut(&mut a).unwrap() += 1;
        assert_eq!(Shared::try_unwrap(a).ok(), Some(6));
    }

    #[test]
    fn handles_dropped_on_many_threads_drop_the_value_once() {
        let drops = Arc::new(AtomicUsize::new(0));
        for _ in 0..200 {
            let a = Shared::<Probe>::new(Probe(drops.clone()));
            let hs: Vec<_> = (0..4)
                .map(|_| {
                    let c = a.clone();
                    std::thread::spawn(move || drop(c))
                })
                .collect();
            drop(a);
            for h in hs {
                h.join().unwrap();
            }
        }
        assert_eq!(drops.load(Ordering::SeqCst), 200);
    }

    #[test]
    fn recycled_memory_serves_only_its_own_layout() {
        // Fill the thread's cache with two layouts, then take both back many times over:
        // each value must read back as written (a block of the wrong size would overlap).
        for round in 0..100u64 {
            let small: Vec<_> = (0..20).map(Shared::<u16>::new).collect();
            let big: Vec<_> = (0..20)
                .map(|i| Shared::<[u64; 40]>::new([round + i; 40]))
                .collect();
            drop(small);
            let again: Vec<_> = (0..20u64)
                .map(|i| Shared::<[u64; 40]>::new([i; 40]))
                .collect();
            for (i, (b, a)) in big.iter().zip(&again).enumerate() {
                assert_eq!(**b, [round + i as u64; 40]);
                assert_eq!(**a, [i as u64; 40]);
            }
            let huge = Shared::<[u8; 4096]>::new([7; 4096]);
            assert_eq!(Shared::try_unwrap(huge).ok().map(|v| v[4095]), Some(7));
        }
    }

    #[test]
    fn unsized_values_through_a_trait_object() {
        trait Named: Send + Sync {
            fn name(&self) -> String;
        }
        struct N(u8);
        impl Named for N {
            fn name(&self) -> String {
                format!("n{}", self.0)
            }
        }
        // SAFETY: fresh from `place`, owned by no handle.
        let s: Shared<dyn Named> = unsafe { Shared::from_placed(Shared::place(N(3))) };
        assert_eq!(s.clone().name(), "n3");
    }
}
