//! Arrays over memory someone else owns (a DLPack producer, an `ndarray`): the strided
//! description is validated here, and the device's backend builds the buffer
//! ([`Backend::wrap_foreign`](crate::Backend::wrap_foreign)), so it can read the memory in
//! place and release it only after its last queued use.

use crate::array::Array;
use crate::backends::{Address, Device, MemoryKind, Owner};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::layout::{Layout, for_each_run};
#[cfg(feature = "candle")]
use std::any::Any;

/// What a wrap describes: element `[0, .., 0]` at `data`, then shape and element strides.
pub(crate) struct Strided<'a> {
    pub data: *const u8,
    pub shape: &'a [usize],
    pub strides: &'a [isize],
    pub dtype: DType,
}

/// Wraps foreign memory as a single-device array without copying it, where our kernels can
/// read it in place (device memory, or host memory aligned for the dtype); otherwise copies
/// it to `device` and releases the owner at once. `host` says whether `data` is a host
/// address (else a device address of `device`'s runtime).
///
/// # Safety
/// Every element the shape and strides address from `data` must be readable (for host
/// memory) and stay unchanged while `owner` lives.
pub(crate) unsafe fn wrap(
    t: Strided<'_>,
    device: &Device,
    kind: MemoryKind,
    host: bool,
    owner: Owner,
) -> Result<Array> {
    let item = t.dtype.size_in_bytes();
    if t.shape.len() != t.strides.len() {
        return Err(Error::InvalidDlpack(format!(
            "shape {:?} and strides {:?} differ in length",
            t.shape, t.strides
        )));
    }
    let size = crate::layout::checked_size(t.shape)?;
    if size == 0 {
        drop(owner);
        let layout = Layout::contiguous(t.shape)?;
        let buffer = device.backend().upload(device.index(), kind, &[])?;
        return Ok(Array::from_buffer(device.clone(), t.dtype, buffer, layout));
    }
    // Size-1 axes are stride-agnostic: producers send anything there (0, 1, garbage).
    let strides: smallvec::SmallVec<[isize; 4]> = t
        .shape
        .iter()
        .zip(t.strides)
        .map(|(&d, &s)| if d == 1 { 0 } else { s })
        .collect();
    let (mut lo, mut hi) = (0i128, 0i128);
    for (&d, &s) in t.shape.iter().zip(&strides) {
        let reach = (d as i128 - 1) * s as i128;
        if reach < 0 { lo += reach } else { hi += reach }
    }
    let span = hi - lo + 1;
    let bytes = span * item as i128;
    let base = t.data as i128 + lo * item as i128;
    if bytes > isize::MAX as i128 || base < 0 || base + bytes > usize::MAX as i128 {
        return Err(Error::InvalidDlpack(format!(
            "shape {:?} with strides {:?} addresses memory outside the address space",
            t.shape, t.strides
        )));
    }
    // The span lies in 0..span from offset -lo, and span <= bytes <= isize::MAX: bounded.
    let layout = Layout::from_bounded_parts(t.shape, strides, (-lo) as usize);
    let (base, bytes) = (base as usize as *const u8, bytes as usize);
    if host {
        if t.dtype == DType::Bool {
            // SAFETY: the caller guarantees the addressed elements are readable.
            unsafe { check_bools(base, &layout)? };
        }
        // A device that cannot hold host memory (no CPU backend: the import's target is then
        // the default device) takes a copy, as misaligned data does.
        let holds_host = kind.is_host() || device.platform() == "cpu";
        if !(base as usize).is_multiple_of(item.min(8)) || !holds_host {
            // Kernels read whole elements: copy misaligned data (as JAX does for copy=None).
            // SAFETY: the span [base, base + bytes) holds every addressed element; the
            // caller guarantees it is readable.
            let src = unsafe { std::slice::from_raw_parts(base, bytes) };
            let buffer = device.backend().upload(device.index(), kind, src)?;
            drop(owner);
            return Ok(Array::from_buffer(device.clone(), t.dtype, buffer, layout));
        }
    }
    let address = if host {
        Address::Host(
            std::ptr::NonNull::new(base as *mut u8)
                .ok_or_else(|| Error::InvalidDlpack("the data address is NULL".into()))?,
        )
    } else {
        Address::Device(base as u64)
    };
    // SAFETY: the caller guarantees every addressed element stays valid and unchanged while
    // `owner` lives; [base, base + bytes) is exactly their span.
    let buffer = unsafe {
        device
            .backend()
            .wrap_foreign(device.index(), kind, address, bytes, owner)?
    };
    Ok(Array::from_buffer(device.clone(), t.dtype, buffer, layout))
}

#[cfg(feature = "candle")]
impl Array {
    /// Takes back the owner of a single-device array's foreign host memory without a copy,
    /// if `accept` takes it (given the owner, the buffer's address and the array's view of
    /// it): only when nothing else holds the array or its buffer (no clone, no view) and the
    /// backend lets the owner go. The array comes back unchanged otherwise.
    pub(crate) fn take_foreign(
        self,
        accept: &dyn Fn(&(dyn Any + Send + Sync), *const u8, &Layout) -> bool,
    ) -> std::result::Result<Owner, Array> {
        let mut inner = match super::RcInner::try_unwrap(self.0) {
            Ok(inner) => inner,
            Err(shared) => return Err(Array(shared)),
        };
        let taken = match &mut *inner.shards {
            [s] => crate::backends::Shared::get_mut(&mut s.buffer).and_then(|b| {
                let base = b.address().host()?.as_ptr() as *const u8;
                let layout = &s.layout;
                b.take_owner(&|o| accept(o, base, layout))
            }),
            _ => None,
        };
        taken.ok_or_else(|| Array(super::RcInner::new(inner)))
    }
}

/// Rust `bool` must be 0 or 1: reject foreign bytes that are not.
///
/// # Safety
/// Every element `layout` addresses from `base` must be readable.
unsafe fn check_bools(base: *const u8, layout: &Layout) -> Result<()> {
    let mut bad = false;
    for_each_run(
        layout.shape(),
        [layout.strides()],
        [layout.offset() as isize],
        0..layout.size(),
        |[off], len, [st]| {
            for j in 0..len as isize {
                // SAFETY: an offset the layout addresses; readable per the contract.
                bad |= unsafe { *base.offset(off + j * st) } > 1;
            }
        },
    );
    if bad {
        return Err(Error::InvalidDlpack(
            "a bool tensor holds a byte other than 0 or 1".into(),
        ));
    }
    Ok(())
}
