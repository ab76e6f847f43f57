//! Caching allocators: device memory per device and pinned host memory per backend.
//!
//! A freed block goes back to its pool, keyed by its rounded size, and the next request of
//! that class reuses it without a driver call, as PyTorch's caching allocator does. Device
//! blocks are only ever used by work on their device's compute stream (or by copies the
//! runtime waits for), so a block freed now may be handed to work queued later on the same
//! stream without an event: the stream runs them in order. Pinned blocks are read by the
//! device asynchronously, so they come back only after an event (see `deferred.rs`).

use super::driver::{Driver, DriverError, DriverErrorKind, DriverResult, StreamHandle};
use std::collections::BTreeMap;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, MutexGuard};

/// Sizes are rounded to classes so that freed blocks fit later requests: 512 bytes up to
/// 1 MiB, then quarter steps of the next power of two (at most 25 % waste).
/// `None` when no class holds `bytes` (more than half the address space).
pub(crate) fn size_class(bytes: usize) -> Option<usize> {
    let b = bytes.max(1);
    if b <= 1 << 20 {
        return Some(b.div_ceil(512) * 512);
    }
    let quarter = b.checked_next_power_of_two()? / 4;
    b.div_ceil(quarter).checked_mul(quarter)
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding a pool lock cannot leave the map inconsistent (every update is
    // one insert or remove), so a poisoned lock is still usable.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Freed blocks of one kind, by size class.
#[derive(Debug)]
pub(crate) struct FreeList<P> {
    blocks: BTreeMap<usize, Vec<P>>,
    pub cached: usize,
}

impl<P> Default for FreeList<P> {
    fn default() -> Self {
        FreeList {
            blocks: BTreeMap::new(),
            cached: 0,
        }
    }
}

impl<P> FreeList<P> {
    /// A cached block of exactly `class` bytes.
    pub fn take(&mut self, class: usize) -> Option<P> {
        let list = self.blocks.get_mut(&class)?;
        let p = list.pop()?;
        if list.is_empty() {
            self.blocks.remove(&class);
        }
        self.cached -= class;
        Some(p)
    }
    pub fn put(&mut self, class: usize, p: P) {
        self.blocks.entry(class).or_default().push(p);
        self.cached += class;
    }
    /// Every cached block, emptying the list.
    pub fn drain(&mut self) -> Vec<(usize, P)> {
        self.cached = 0;
        std::mem::take(&mut self.blocks)
            .into_iter()
            .flat_map(|(c, v)| v.into_iter().map(move |p| (c, p)))
            .collect()
    }
}

/// Device memory of one device.
#[derive(Debug)]
pub(crate) struct DevicePool {
    pub free: FreeList<u64>,
    /// Bytes cached beyond which freed blocks go back to the driver.
    pub limit: usize,
    /// Bytes handed out and not yet returned (what a leak test checks).
    pub in_use: usize,
}

impl DevicePool {
    pub fn new(limit: usize) -> DevicePool {
        DevicePool {
            free: FreeList::default(),
            limit,
            in_use: 0,
        }
    }
}

/// Allocates `class` bytes on `device`: a cached block, or a new one; when the driver is
/// out of memory, the cache is returned to it and the allocation retried once.
pub(crate) fn device_alloc<D: Driver>(
    driver: &D,
    pool: &Mutex<DevicePool>,
    device: usize,
    stream: StreamHandle,
    class: usize,
) -> DriverResult<u64> {
    {
        let mut guard = lock(pool);
        if let Some(p) = guard.free.take(class) {
            guard.in_use += class;
            return Ok(p);
        }
    }
    let ptr = match driver.mem_alloc(device, stream, class) {
        Err(e) if e.kind == DriverErrorKind::OutOfMemory => {
            let cached = lock(pool).free.drain();
            for (_, p) in cached {
                let _ = driver.mem_free(device, stream, p);
            }
            // Stream-ordered frees complete with the stream; this is the out-of-memory path,
            // where waiting (as PyTorch's allocator does) beats failing.
            let _ = driver.stream_synchronize(device, stream);
            driver.mem_alloc(device, stream, class)?
        }
        other => other?,
    };
    lock(pool).in_use += class;
    Ok(ptr)
}

/// Returns a device block: cached, or freed stream-ordered when the cache is full.
pub(crate) fn device_free<D: Driver>(
    driver: &D,
    pool: &Mutex<DevicePool>,
    device: usize,
    stream: StreamHandle,
    ptr: u64,
    class: usize,
) {
    let mut p = lock(pool);
    p.in_use -= class;
    if p.free.cached + class <= p.limit {
        p.free.put(class, ptr);
        return;
    }
    drop(p);
    // A failed free (a lost device) leaves nothing to do: the context owns the memory.
    let _ = driver.mem_free(device, stream, ptr);
}

/// A pinned host pointer (Send: the memory is plain host memory; who may touch it when is
/// the runtime's event discipline).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HostPtr(pub NonNull<u8>);
// SAFETY: a pinned block is plain host memory handed between threads by ownership.
unsafe impl Send for HostPtr {}
// SAFETY: as above; shared access is only reads after the runtime's events.
unsafe impl Sync for HostPtr {}

/// Pinned host memory shared by every device of one backend (pinned memory is portable).
pub(crate) struct PinnedPool<D: Driver> {
    pub driver: Arc<D>,
    free: Mutex<FreeList<HostPtr>>,
    limit: usize,
}

impl<D: Driver> PinnedPool<D> {
    pub fn new(driver: Arc<D>, limit: usize) -> PinnedPool<D> {
        PinnedPool {
            driver,
            free: Mutex::new(FreeList::default()),
            limit,
        }
    }
    /// A block of at least `bytes`; returns it with its class.
    pub fn alloc(&self, bytes: usize) -> DriverResult<(HostPtr, usize)> {
        let class = size_class(bytes).ok_or_else(|| too_large(bytes))?;
        if let Some(p) = lock(&self.free).take(class) {
            return Ok((p, class));
        }
        let p = match self.driver.host_alloc(class) {
            Err(e) if e.kind == DriverErrorKind::OutOfMemory => {
                self.trim();
                self.driver.host_alloc(class)?
            }
            other => other?,
        };
        Ok((HostPtr(p), class))
    }
    /// Returns a block no queued work uses any more.
    pub fn free(&self, p: HostPtr, class: usize) {
        let mut f = lock(&self.free);
        if f.cached + class <= self.limit {
            f.put(class, p);
            return;
        }
        drop(f);
        // SAFETY: the block came from `host_alloc(class)` and its last use has passed.
        unsafe { self.driver.host_free(p.0, class) };
    }
    /// Gives every cached block back to the driver.
    pub fn trim(&self) {
        let cached = lock(&self.free).drain();
        for (class, p) in cached {
            // SAFETY: cached blocks have no users.
            unsafe { self.driver.host_free(p.0, class) };
        }
    }
}

impl<D: Driver> Drop for PinnedPool<D> {
    fn drop(&mut self) {
        self.trim();
    }
}

/// An out-of-memory error from the pool itself (a size no class can hold).
pub(crate) fn too_large(bytes: usize) -> DriverError {
    DriverError::new(
        DriverErrorKind::OutOfMemory,
        "allocate",
        format!("{bytes} bytes exceed any allocation the device can make"),
    )
}
