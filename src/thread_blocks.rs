//! A per-thread cache of freed memory blocks, as glibc's tcache is to malloc: a block freed on
//! a thread serves that thread's next allocation of the same key without a lock. The key is
//! what freeing the block needs (a host size class, a `Layout`). Two caches use it: the
//! host pools' small blocks (`backends::host::buffer`) and `Shared`'s handles.
//!
//! Every access goes through `try_with` and `try_borrow_mut`: during the thread's teardown,
//! or re-entered (from an allocator), the cache steps aside and the caller falls back to its
//! own path. Blocks still kept when the thread exits are freed then.

use std::cell::RefCell;
use std::ptr::NonNull;
use std::thread::LocalKey;

/// Up to `N` freed blocks, each with its key.
pub(crate) struct ThreadBlocks<K: Copy + PartialEq + 'static, const N: usize> {
    slots: [Option<(NonNull<u8>, K)>; N],
    /// The slot a full cache gives up next for a newer block (round robin).
    evict: usize,
    /// Frees a block of a key: called on what is still kept when the thread exits. Unsafe:
    /// the block must be one allocated as its key says, and used by no one.
    free: unsafe fn(NonNull<u8>, K),
}

impl<K: Copy + PartialEq + 'static, const N: usize> ThreadBlocks<K, N> {
    /// An empty cache whose leftovers `free` frees (for a `const` thread-local).
    pub(crate) const fn new(free: unsafe fn(NonNull<u8>, K)) -> Self {
        ThreadBlocks {
            slots: [None; N],
            evict: 0,
            free,
        }
    }
}

impl<K: Copy + PartialEq + 'static, const N: usize> Drop for ThreadBlocks<K, N> {
    fn drop(&mut self) {
        for &(ptr, key) in self.slots.iter().flatten() {
            // SAFETY: only `put` fills a slot, with a block its caller no longer uses, of the
            // key it was allocated with; the cache is its only owner.
            unsafe { (self.free)(ptr, key) };
        }
    }
}

/// The thread's cache (a `thread_local!` of `ThreadBlocks`).
pub(crate) type Local<K, const N: usize> = LocalKey<RefCell<ThreadBlocks<K, N>>>;

/// A block of `key` this thread's cache keeps, if one waits.
pub(crate) fn take<K: Copy + PartialEq + 'static, const N: usize>(
    local: &'static Local<K, N>,
    key: K,
) -> Option<NonNull<u8>> {
    local
        .try_with(|c| {
            let mut c = c.try_borrow_mut().ok()?;
            let slot = c
                .slots
                .iter_mut()
                .find(|s| matches!(s, Some((_, k)) if *k == key))?;
            slot.take().map(|(p, _)| p)
        })
        .ok()
        .flatten()
}

/// Keeps `ptr` (a block of `key`, no longer used) in this thread's cache. Returns the block
/// the caller disposes of instead, if any: the one a full cache gave up for it, or `ptr`
/// itself when the cache is away.
///
/// Why a full cache gives up an older block rather than refuse the new one: the blocks it
/// holds may be of sizes the thread no longer uses, and refusing would leave every later
/// size to the caller's slower path for good. A loop of 1536-element f32 adds filled the
/// host's four 4-64 KiB slots with 6 KiB blocks, and the 2K-element adds after it took the
/// pool's lock on every op: 0.73-0.75x the faster of ndarray and candle, against 1.12-1.20x
/// where no other size came first.
pub(crate) fn put<K: Copy + PartialEq + 'static, const N: usize>(
    local: &'static Local<K, N>,
    ptr: NonNull<u8>,
    key: K,
) -> Option<(NonNull<u8>, K)> {
    local
        .try_with(|c| {
            let Ok(mut c) = c.try_borrow_mut() else {
                return Some((ptr, key));
            };
            if let Some(slot) = c.slots.iter_mut().find(|s| s.is_none()) {
                *slot = Some((ptr, key));
                return None;
            }
            let i = c.evict;
            c.evict = (i + 1) % N;
            c.slots[i].replace((ptr, key))
        })
        .unwrap_or(Some((ptr, key)))
}

#[cfg(test)]
mod tests {
    use super::{ThreadBlocks, put, take};
    use std::cell::RefCell;
    use std::ptr::NonNull;

    /// The blocks are addresses only, never read or freed.
    unsafe fn forget(_: NonNull<u8>, _: usize) {}

    thread_local! {
        static TWO: RefCell<ThreadBlocks<usize, 2>> = const { RefCell::new(ThreadBlocks::new(forget)) };
    }

    fn block(i: usize) -> NonNull<u8> {
        NonNull::new((i * 64) as *mut u8).unwrap()
    }

    #[test]
    fn a_full_cache_gives_up_its_older_blocks_for_new_sizes() {
        assert_eq!(put(&TWO, block(1), 10), None);
        assert_eq!(put(&TWO, block(2), 20), None);
        // Full: a block of a new size takes the first slot, whose block comes back.
        assert_eq!(put(&TWO, block(3), 30), Some((block(1), 10)));
        assert_eq!(take(&TWO, 30), Some(block(3)));
        assert_eq!(take(&TWO, 10), None);
        // The freed slot is filled first; when full again, the next slot in turn goes.
        assert_eq!(put(&TWO, block(4), 40), None);
        assert_eq!(put(&TWO, block(5), 50), Some((block(2), 20)));
        assert_eq!(take(&TWO, 40), Some(block(4)));
        assert_eq!(take(&TWO, 50), Some(block(5)));
        assert_eq!(take(&TWO, 50), None);
    }
}
