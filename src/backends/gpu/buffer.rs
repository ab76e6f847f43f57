//! [`GpuBuffer`]: memory of one device of a GPU backend (device memory, pinned host memory,
//! or a producer's memory imported through DLPack), with the event its producing work
//! recorded.
//!
//! Drops follow the contract in `backends/mod.rs`: device blocks return to the device's pool
//! (reuse is ordered by the compute stream); pinned blocks and foreign owners are released
//! through the deferred queue once the work queued before the drop has passed. Nothing
//! blocks and nothing panics.

use super::device::DeviceState;
use super::driver::{Driver, EventHandle};
use super::memory::{HostPtr, device_free};
use crate::backends::{Address, DeviceBuffer, MemoryKind, Owner};
use std::any::Any;
use std::fmt;
use std::ptr::NonNull;
use std::sync::Arc;

/// Where a buffer's bytes are.
pub(crate) enum Memory {
    /// A block of the device pool.
    Device { ptr: u64, class: usize },
    /// A block of the pinned pool.
    Pinned { ptr: HostPtr, class: usize },
    /// A producer's memory: never freed here; `owner` (its deleter) is dropped after our last
    /// queued use.
    Foreign {
        address: Address,
        owner: Option<Owner>,
    },
}

// SAFETY: a foreign host address is memory its owner keeps valid for any thread (the
// `wrap_foreign` contract); the other variants hold plain integers and pinned blocks.
unsafe impl Send for Memory {}
// SAFETY: as above; the memory is only read through a buffer.
unsafe impl Sync for Memory {}

impl Memory {
    /// The unified address kernels and copies use.
    pub fn unified(&self) -> u64 {
        match self {
            Memory::Device { ptr, .. } => *ptr,
            Memory::Pinned { ptr, .. } => ptr.0.as_ptr() as u64,
            Memory::Foreign { address, .. } => match address {
                Address::Host(p) => p.as_ptr() as u64,
                Address::Device(a) => *a,
                Address::Opaque => 0,
            },
        }
    }
    pub fn address(&self) -> Address {
        match self {
            Memory::Device { ptr, .. } => Address::Device(*ptr),
            Memory::Pinned { ptr, .. } => Address::Host(ptr.0),
            Memory::Foreign { address, .. } => *address,
        }
    }
}

/// A buffer of a GPU backend.
pub(crate) struct GpuBuffer<D: Driver> {
    pub dev: Arc<DeviceState<D>>,
    /// `None` only while dropping.
    mem: Option<Memory>,
    len: usize,
    kind: MemoryKind,
    /// Recorded after the work that wrote the buffer (`None`: written before it was
    /// returned, by the host).
    pub ready: Option<EventHandle>,
}

impl<D: Driver> GpuBuffer<D> {
    pub fn new(
        dev: Arc<DeviceState<D>>,
        mem: Memory,
        len: usize,
        kind: MemoryKind,
        ready: Option<EventHandle>,
    ) -> GpuBuffer<D> {
        GpuBuffer {
            dev,
            mem: Some(mem),
            len,
            kind,
            ready,
        }
    }
    pub fn unified(&self) -> u64 {
        self.mem.as_ref().map_or(0, Memory::unified)
    }
    /// The host pointer of host-addressable memory.
    pub fn host_ptr(&self) -> Option<NonNull<u8>> {
        self.mem.as_ref().and_then(|m| m.address().host())
    }
}

impl<D: Driver> fmt::Debug for GpuBuffer<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "GpuBuffer({} bytes at {:#x} on {}, {})",
            self.len,
            self.unified(),
            self.dev.name,
            self.kind
        )
    }
}

impl<D: Driver> Drop for GpuBuffer<D> {
    fn drop(&mut self) {
        let d = &self.dev;
        if let Some(e) = self.ready.take() {
            d.driver.event_destroy(d.index, e);
        }
        match self.mem.take() {
            Some(Memory::Device { ptr, class }) => {
                device_free(&*d.driver, &d.pool, d.index, d.stream, ptr, class);
            }
            Some(Memory::Pinned { ptr, class }) => {
                let pool = d.pinned.clone();
                d.defer(Box::new(PinnedReturn {
                    pool: Some(pool),
                    ptr,
                    class,
                }));
            }
            Some(Memory::Foreign {
                owner: Some(owner), ..
            }) => d.defer(Box::new(owner)),
            Some(Memory::Foreign { owner: None, .. }) | None => {}
        }
        d.pump(false);
    }
}

/// Returns a pinned block to its pool when dropped (by the deferred queue).
pub(crate) struct PinnedReturn<D: Driver> {
    pub pool: Option<Arc<super::memory::PinnedPool<D>>>,
    pub ptr: HostPtr,
    pub class: usize,
}

impl<D: Driver> Drop for PinnedReturn<D> {
    fn drop(&mut self) {
        if let Some(pool) = self.pool.take() {
            pool.free(self.ptr, self.class);
        }
    }
}

impl<D: Driver> DeviceBuffer for GpuBuffer<D> {
    fn device_index(&self) -> usize {
        self.dev.index
    }
    fn memory_kind(&self) -> MemoryKind {
        self.kind
    }
    fn len_bytes(&self) -> usize {
        self.len
    }
    fn alignment(&self) -> usize {
        1 << self.unified().trailing_zeros().min(12)
    }
    fn address(&self) -> Address {
        self.mem.as_ref().map_or(Address::Opaque, Memory::address)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
