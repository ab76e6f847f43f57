//! [`ForeignBuffer`]: host memory someone else owns (a DLPack producer, an `ndarray`), seen
//! as a buffer of a host-memory backend without copying: the default
//! [`Backend::wrap_foreign`](crate::Backend::wrap_foreign). Host backends run eagerly, so
//! no queued work can outlive the array: the owner is dropped, exactly once, when the last
//! array using the memory goes.

use crate::backends::{Address, DeviceBuffer, MemoryKind, Owner};
use std::any::Any;
use std::fmt;
use std::ptr::NonNull;

/// A foreign host allocation seen as a buffer of `len` bytes from `ptr`.
pub struct ForeignBuffer {
    ptr: NonNull<u8>,
    len: usize,
    device: usize,
    kind: MemoryKind,
    /// `None` once [`DeviceBuffer::take_owner`] handed it back.
    owner: Option<Owner>,
}

// SAFETY: the memory is only read through this buffer, and owners are Send + Sync.
unsafe impl Send for ForeignBuffer {}
// SAFETY: as above.
unsafe impl Sync for ForeignBuffer {}

impl ForeignBuffer {
    /// Wraps `ptr..ptr + len`, kept valid by `owner` (the caller of
    /// `Backend::wrap_foreign` promised so).
    pub(crate) fn new(
        ptr: NonNull<u8>,
        len: usize,
        device: usize,
        kind: MemoryKind,
        owner: Owner,
    ) -> ForeignBuffer {
        ForeignBuffer {
            ptr,
            len,
            device,
            kind,
            owner: Some(owner),
        }
    }
}

impl fmt::Debug for ForeignBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ForeignBuffer({} bytes at {:p}, {})",
            self.len, self.ptr, self.kind
        )
    }
}

impl DeviceBuffer for ForeignBuffer {
    fn device_index(&self) -> usize {
        self.device
    }
    fn memory_kind(&self) -> MemoryKind {
        self.kind
    }
    fn len_bytes(&self) -> usize {
        self.len
    }
    fn alignment(&self) -> usize {
        1 << (self.ptr.as_ptr() as usize).trailing_zeros().min(12)
    }
    fn address(&self) -> Address {
        Address::Host(self.ptr)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    // Host backends run eagerly: no work is queued on the memory once the caller holds the
    // only reference.
    fn take_owner(&mut self, accept: &dyn Fn(&(dyn Any + Send + Sync)) -> bool) -> Option<Owner> {
        if accept(self.owner.as_deref()?) {
            self.owner.take()
        } else {
            None
        }
    }
}
