//! [`DeviceBuffer`]: memory one backend owns on one of its devices, and its typed
//! [`Address`].

use super::MemoryKind;
use std::any::Any;
use std::fmt::Debug;
use std::ptr::NonNull;

pub use crate::shared::Shared;

/// Where a buffer's bytes are: exactly one kind of address, so that memory can never be
/// described as something it is not (a host pointer exported under a GPU device type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Address {
    /// Host-addressable memory (CPU RAM, pinned host memory). The host may read it once the
    /// backend's queued work on it has finished (after `synchronize`, or the backend's own
    /// wait in `download`).
    Host(NonNull<u8>),
    /// An address in a device runtime's own address space (CUDA, ROCm, Level Zero): passed
    /// to that runtime and to DLPack consumers, never dereferenced by the host.
    Device(u64),
    /// Handle-based memory with no raw address (wgpu, OpenCL).
    Opaque,
}

impl Address {
    /// The host pointer, for host-addressable memory.
    pub fn host(self) -> Option<NonNull<u8>> {
        match self {
            Address::Host(p) => Some(p),
            _ => None,
        }
    }
    /// The address as an integer, for memory that has one (host or device).
    pub fn raw(self) -> Option<usize> {
        match self {
            Address::Host(p) => Some(p.as_ptr() as usize),
            Address::Device(a) => usize::try_from(a).ok(),
            Address::Opaque => None,
        }
    }
}

/// A counted handle to a buffer, what backends return and arrays hold: `Shared` rather than
/// `Arc`, so an op's result buffer is freed without atomic updates when its array goes (see
/// `Shared`). Make one with `SharedBuffer::new(buffer)`.
pub type SharedBuffer = Shared<dyn DeviceBuffer>;

impl Shared<dyn DeviceBuffer> {
    /// A handle to the buffer `make` returns, the only one: the handle's memory is taken
    /// first, so that, inlined, `make` writes the buffer's fields straight into it.
    #[inline(always)]
    pub fn new_with<B: DeviceBuffer + 'static>(make: impl FnOnce() -> B) -> SharedBuffer {
        // SAFETY: fresh from `place_with` (coerced to the trait object), owned by no handle.
        unsafe { Shared::from_placed(Shared::place_with(make)) }
    }

    /// A handle to `buffer`, the only one. Inlined, so the buffer's fields go from
    /// registers into the handle's memory (see `Shared::place`).
    #[inline(always)]
    pub fn new<B: DeviceBuffer + 'static>(buffer: B) -> SharedBuffer {
        // SAFETY: fresh from `place` (coerced to the trait object), owned by no handle.
        unsafe { Shared::from_placed(Shared::place(buffer)) }
    }
}

/// Keeps foreign memory alive; dropping it releases the memory (a DLPack deleter, an
/// `ndarray`'s storage). A backend drops it only after its last queued use of the memory.
/// It is `Any` so that an interop layer can take back what it put in (a `Vec<T>`, a candle
/// tensor) through [`DeviceBuffer::take_owner`].
pub type Owner = Box<dyn std::any::Any + Send + Sync>;

/// Memory owned by one backend on one of its devices.
///
/// # Drop contract
/// Dropping the last reference to a buffer may happen on any thread (a DLPack consumer's
/// deleter, Python's garbage collector), with no device context current. It must never
/// block on the device, never panic, and must be ordered after every use of the buffer
/// already queued: an asynchronous backend frees stream-ordered (or defers the free until an
/// event has passed); the memory of a buffer wrapping foreign memory is released (its
/// [`Owner`] dropped) only after the work reading it has finished.
pub trait DeviceBuffer: Send + Sync + Debug {
    /// Index of the owning device within its backend.
    fn device_index(&self) -> usize;
    /// The memory kind the buffer lives in.
    fn memory_kind(&self) -> MemoryKind;
    /// The buffer's size in bytes.
    fn len_bytes(&self) -> usize;
    /// Alignment of the start of the buffer, in bytes.
    fn alignment(&self) -> usize;
    /// Where the bytes are (see [`Address`]).
    fn address(&self) -> Address;
    /// For the owning backend to recover its concrete type; the layers above never downcast.
    fn as_any(&self) -> &dyn Any;
    /// For a buffer wrapping foreign memory that no queued work still reads: hands its
    /// [`Owner`] back if `accept` takes it, leaving the buffer holding nothing, so the memory
    /// can leave without a copy (an array made from a `Vec<T>` becoming a candle tensor).
    /// The caller holds the only reference (`Shared::get_mut`) and drops the buffer right
    /// after. `None` (the default) where the buffer owns its memory or must outlive queued
    /// work.
    fn take_owner(&mut self, accept: &dyn Fn(&(dyn Any + Send + Sync)) -> bool) -> Option<Owner> {
        let _ = accept;
        None
    }
}

/// `bytes` viewed as memory that may be uninitialised, for a `download_uninit` to write into.
pub(crate) fn as_uninit(bytes: &mut [u8]) -> &mut [std::mem::MaybeUninit<u8>] {
    // SAFETY: `u8` and `MaybeUninit<u8>` share a layout; through the view only bytes are
    // written (a `MaybeUninit<u8>` can hold nothing that is not a valid `u8` once written).
    unsafe { &mut *(bytes as *mut [u8] as *mut [std::mem::MaybeUninit<u8>]) }
}

/// `bytes` as initialised bytes.
///
/// # Safety
/// Every byte of `bytes` has been written.
pub(crate) unsafe fn assume_init(bytes: &mut [std::mem::MaybeUninit<u8>]) -> &mut [u8] {
    // SAFETY: the layouts match, and the caller vouches that every byte is initialised.
    unsafe { &mut *(bytes as *mut [std::mem::MaybeUninit<u8>] as *mut [u8]) }
}
