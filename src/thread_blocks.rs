//! A per-thread cache of freed memory blocks, as glibc's tcache is to malloc: a block freed on
//! a thread serves that thread's next allocation of the same size without a lock. It serves
//! the host pools' small and medium blocks (`backends::host::buffer`) and `Shared`'s handles
//! with DLPack's export holders (`shared::recycle`).
//!
//! Each size has a bin (the caller maps its sizes, or layouts, to bins and back): a list
//! threaded through the kept blocks themselves, the newest first. Taking and keeping a block
//! are a few loads and stores. The slots this replaced (a list of (block, key) pairs searched
//! on every call, behind a `RefCell`) cost ~30 instructions a take and ~45 a keep, and an
//! 8-element add does three of each (its array's handle, its buffer's handle, its data).
//!
//! Every access goes through `try_with`: during the thread's teardown the cache steps aside
//! and the caller falls back to its own path. Nothing inside calls out (the cache never frees
//! a block while in use; it hands back the block to free), so `Cell`s suffice. Blocks still
//! kept when the thread exits are freed then.

use std::cell::Cell;
use std::ptr::NonNull;
use std::thread::LocalKey;

/// A kept block's first word: the next block of its bin.
type Link = Option<NonNull<u8>>;

/// Up to `limit` freed blocks, in `B` bins.
pub(crate) struct ThreadBlocks<const B: usize> {
    /// Per bin, the newest kept block; each kept block's first word links the next one.
    heads: [Cell<Link>; B],
    /// Blocks per bin.
    counts: [Cell<u16>; B],
    /// Blocks kept in all.
    held: Cell<usize>,
    limit: usize,
    /// Where a full cache looks first for a block of another bin to give up (round robin).
    evict: Cell<usize>,
    /// Frees a block of a bin: called on what is still kept when the thread exits. Unsafe:
    /// the block must be one allocated as its bin says, and used by no one.
    free: unsafe fn(NonNull<u8>, usize),
}

impl<const B: usize> ThreadBlocks<B> {
    /// An empty cache that keeps up to `limit` blocks and whose leftovers `free` frees (for a
    /// `const` thread-local).
    pub(crate) const fn new(limit: usize, free: unsafe fn(NonNull<u8>, usize)) -> Self {
        assert!(
            limit <= u16::MAX as usize,
            "a bin counts its blocks in 16 bits"
        );
        ThreadBlocks {
            heads: [const { Cell::new(None) }; B],
            counts: [const { Cell::new(0) }; B],
            held: Cell::new(0),
            limit,
            evict: Cell::new(0),
            free,
        }
    }

    /// The newest block of `bin`, unlinked, if it holds one.
    #[inline(always)]
    fn pop(&self, bin: usize) -> Option<NonNull<u8>> {
        let head = self.heads.get(bin)?;
        let p = head.get()?;
        // SAFETY: `p` is a kept block: `push` wrote its first word, aligned for a pointer, and
        // nothing has written it since (no one uses a kept block).
        head.set(unsafe { p.cast::<Link>().read() });
        self.counts[bin].set(self.counts[bin].get() - 1);
        self.held.set(self.held.get() - 1);
        Some(p)
    }

    /// Links `p` first in `bin`.
    ///
    /// # Safety
    /// `p` is a block of `bin`, aligned for a pointer and at least one long, used by no one.
    #[inline(always)]
    unsafe fn push(&self, bin: usize, p: NonNull<u8>) {
        let head = &self.heads[bin];
        // SAFETY: per the contract, the first word of `p` is ours to write.
        unsafe { p.cast::<Link>().write(head.get()) };
        head.set(Some(p));
        self.counts[bin].set(self.counts[bin].get() + 1);
        self.held.set(self.held.get() + 1);
    }

    /// Gives up a block of a bin other than `keep`, if one is kept: the first from the
    /// eviction cursor on. Out of line: only a full cache calls it.
    #[cold]
    #[inline(never)]
    fn give_up_other(&self, keep: usize) -> Option<(NonNull<u8>, usize)> {
        if self.counts[keep].get() as usize == self.held.get() {
            return None;
        }
        let start = self.evict.get();
        let bin = (start..B)
            .chain(0..start)
            .find(|&b| b != keep && self.counts[b].get() > 0)?;
        self.evict.set((bin + 1) % B);
        Some((self.pop(bin)?, bin))
    }
}

impl<const B: usize> Drop for ThreadBlocks<B> {
    fn drop(&mut self) {
        for bin in 0..B {
            while let Some(p) = self.pop(bin) {
                // SAFETY: only `put` keeps a block, one its caller no longer uses, of the bin
                // it was allocated for; the cache is its only owner.
                unsafe { (self.free)(p, bin) };
            }
        }
    }
}

/// The thread's cache (a `thread_local!` of `ThreadBlocks`).
pub(crate) type Local<const B: usize> = LocalKey<ThreadBlocks<B>>;

/// A block of `bin` this thread's cache keeps, if one waits (the newest).
#[inline(always)]
pub(crate) fn take<const B: usize>(local: &'static Local<B>, bin: usize) -> Option<NonNull<u8>> {
    local.try_with(|c| c.pop(bin)).ok().flatten()
}

/// Keeps `ptr` (a block of `bin`, no longer used) in this thread's cache. Returns the block
/// the caller disposes of instead, if any, with its bin: one of another bin that a full cache
/// gave up for it, or `ptr` itself when the cache is away, has no such bin, or is full of
/// blocks of this bin.
///
/// Why a full cache gives up a block of another size rather than refuse the new one: the
/// blocks it holds may be of sizes the thread no longer uses, and refusing would leave every
/// later size to the caller's slower path for good. A loop of 1536-element f32 adds filled the
/// host's four 4-64 KiB slots with 6 KiB blocks, and the 2K-element adds after it took the
/// pool's lock on every op: 0.73-0.75x the faster of ndarray and candle, against 1.12-1.20x
/// where no other size came first.
///
/// # Safety
/// `ptr` is a block of `bin` (as the cache's `free` takes it), aligned for a pointer and at
/// least one long, and no one uses it from now on.
#[inline(always)]
pub(crate) unsafe fn put<const B: usize>(
    local: &'static Local<B>,
    ptr: NonNull<u8>,
    bin: usize,
) -> Option<(NonNull<u8>, usize)> {
    local
        .try_with(|c| {
            if bin >= B {
                return Some((ptr, bin));
            }
            let mut left = None;
            if c.held.get() >= c.limit {
                left = c.give_up_other(bin);
                if left.is_none() {
                    return Some((ptr, bin));
                }
            }
            // SAFETY: per the contract.
            unsafe { c.push(bin, ptr) };
            left
        })
        .unwrap_or(Some((ptr, bin)))
}

#[cfg(test)]
mod tests {
    use super::{ThreadBlocks, put, take};
    use std::ptr::NonNull;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Frees nothing: the tests' blocks are leaked boxes.
    unsafe fn forget(_: NonNull<u8>, _: usize) {}

    thread_local! {
        static TWO: ThreadBlocks<8> = const { ThreadBlocks::new(2, forget) };
    }

    static FREED: AtomicUsize = AtomicUsize::new(0);

    /// Frees a leaked box of the tests, counting.
    unsafe fn count_free(p: NonNull<u8>, _: usize) {
        // SAFETY: every block put in `COUNTED` is a `block()`.
        drop(unsafe { Box::from_raw(p.cast::<usize>().as_ptr()) });
        FREED.fetch_add(1, Ordering::SeqCst);
    }

    thread_local! {
        static COUNTED: ThreadBlocks<4> = const { ThreadBlocks::new(8, count_free) };
    }

    #[test]
    fn what_a_thread_keeps_is_freed_when_it_exits() {
        std::thread::spawn(|| {
            for bin in [0, 3, 3] {
                // SAFETY: a leaked box, used by no one else.
                assert_eq!(unsafe { put(&COUNTED, block(), bin) }, None);
            }
            let p = take(&COUNTED, 3).expect("a block of bin 3 was kept");
            // SAFETY: a block `put` kept, handed back to its only user.
            unsafe { count_free(p, 3) };
        })
        .join()
        .unwrap();
        assert_eq!(FREED.load(Ordering::SeqCst), 3);
    }

    /// A fresh block a pointer long (leaked: the cache writes its link into it).
    fn block() -> NonNull<u8> {
        NonNull::from(Box::leak(Box::new(0usize))).cast()
    }

    /// Keeps `p` in bin `bin` of `TWO`.
    fn keep(p: NonNull<u8>, bin: usize) -> Option<(NonNull<u8>, usize)> {
        // SAFETY: a leaked box, used by no one else.
        unsafe { put(&TWO, p, bin) }
    }

    #[test]
    fn a_full_cache_gives_up_its_blocks_of_other_sizes_for_new_ones() {
        let [b1, b2, b3, b4, b5] = [(); 5].map(|_| block());
        assert_eq!(keep(b1, 1), None);
        assert_eq!(keep(b2, 2), None);
        // Full: a block of a new size takes the place of another size's block.
        assert_eq!(keep(b3, 3), Some((b1, 1)));
        assert_eq!(take(&TWO, 3), Some(b3));
        assert_eq!(take(&TWO, 1), None);
        // Room again: kept without giving anything up.
        assert_eq!(keep(b4, 2), None);
        // Full of bin 2 alone: its own size is refused, as nothing else could go.
        assert_eq!(keep(b5, 2), Some((b5, 2)));
        // Newest first.
        assert_eq!(take(&TWO, 2), Some(b4));
        assert_eq!(take(&TWO, 2), Some(b2));
        assert_eq!(take(&TWO, 2), None);
        // A bin past the cache's is refused.
        assert_eq!(keep(b5, 8), Some((b5, 8)));
    }
}
