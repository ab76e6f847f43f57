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
    /// Frees a block of a key: called on what is still kept when the thread exits. Unsafe:
    /// the block must be one allocated as its key says, and used by no one.
    free: unsafe fn(NonNull<u8>, K),
}

impl<K: Copy + PartialEq + 'static, const N: usize> ThreadBlocks<K, N> {
    /// An empty cache whose leftovers `free` frees (for a `const` thread-local).
    pub(crate) const fn new(free: unsafe fn(NonNull<u8>, K)) -> Self {
        ThreadBlocks {
            slots: [None; N],
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

/// Keeps `ptr` (a block of `key`, no longer used) in this thread's cache; false when the
/// cache is full or away, and the caller keeps the block.
pub(crate) fn put<K: Copy + PartialEq + 'static, const N: usize>(
    local: &'static Local<K, N>,
    ptr: NonNull<u8>,
    key: K,
) -> bool {
    local
        .try_with(|c| {
            let Ok(mut c) = c.try_borrow_mut() else {
                return false;
            };
            match c.slots.iter_mut().find(|s| s.is_none()) {
                Some(slot) => {
                    *slot = Some((ptr, key));
                    true
                }
                None => false,
            }
        })
        .unwrap_or(false)
}
