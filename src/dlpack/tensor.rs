//! [`DLPackTensor`]: an owned managed tensor (legacy or versioned) whose deleter runs exactly
//! once: on drop, unless ownership is handed on with `into_raw`.

use super::ffi::{
    DLManagedTensor, DLManagedTensorVersioned, DLPACK_FLAG_BITMASK_IS_COPIED,
    DLPACK_FLAG_BITMASK_READ_ONLY, DLPackVersion, DLTensor,
};
use crate::error::{BufferError, Error, Result};
use std::fmt;
use std::ptr::NonNull;

/// A raw managed-tensor pointer of either ABI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawDLPack {
    /// `DLManagedTensor*` (capsule name `dltensor`).
    Legacy(*mut DLManagedTensor),
    /// `DLManagedTensorVersioned*` (capsule name `dltensor_versioned`).
    Versioned(*mut DLManagedTensorVersioned),
}

#[derive(Clone, Copy)]
pub(crate) enum Owned {
    Legacy(NonNull<DLManagedTensor>),
    Versioned(NonNull<DLManagedTensorVersioned>),
}

impl Owned {
    /// Calls the producer's deleter (if it gave one).
    ///
    /// # Safety
    /// Must be called at most once, on a live managed tensor.
    pub(crate) unsafe fn delete(self) {
        // SAFETY: per this function's contract the pointer is live and this is the only call;
        // the deleter is the producer's, which takes the very pointer it handed out.
        unsafe {
            match self {
                Owned::Legacy(p) => {
                    if let Some(d) = (*p.as_ptr()).deleter {
                        d(p.as_ptr())
                    }
                }
                Owned::Versioned(p) => {
                    if let Some(d) = (*p.as_ptr()).deleter {
                        d(p.as_ptr())
                    }
                }
            }
        }
    }
}

/// An owned DLPack managed tensor.
pub struct DLPackTensor {
    owned: Owned,
    fallback: Option<BufferError>,
}

// SAFETY: DLPack requires deleters to be callable from any thread; the tensor's fields are
// read-only once exported.
unsafe impl Send for DLPackTensor {}
// SAFETY: shared access only reads fields.
unsafe impl Sync for DLPackTensor {}

impl DLPackTensor {
    pub(crate) fn from_owned(owned: Owned, fallback: Option<BufferError>) -> Self {
        DLPackTensor { owned, fallback }
    }

    /// Takes ownership of a producer's managed tensor.
    ///
    /// # Safety
    /// `raw` must point to a live managed tensor of the stated ABI whose ownership passes to
    /// the result (nobody else may call its deleter), with valid `shape`/`strides` arrays of
    /// `ndim` entries (when non-NULL) for as long as it lives. Field values themselves are
    /// validated on import.
    pub unsafe fn from_raw(raw: RawDLPack) -> Result<DLPackTensor> {
        let owned = match raw {
            RawDLPack::Legacy(p) => NonNull::new(p).map(Owned::Legacy),
            RawDLPack::Versioned(p) => NonNull::new(p).map(Owned::Versioned),
        }
        .ok_or_else(|| Error::InvalidDlpack("NULL managed tensor".into()))?;
        Ok(DLPackTensor {
            owned,
            fallback: None,
        })
    }

    /// Hands ownership to the caller (a consumer), who must call the deleter exactly once.
    pub fn into_raw(self) -> RawDLPack {
        match self.into_owned() {
            Owned::Legacy(p) => RawDLPack::Legacy(p.as_ptr()),
            Owned::Versioned(p) => RawDLPack::Versioned(p.as_ptr()),
        }
    }

    /// Gives up the tensor without running its deleter.
    pub(crate) fn into_owned(mut self) -> Owned {
        // Forgetting self must not leak the fields it owns besides the tensor.
        self.fallback = None;
        let o = self.owned;
        std::mem::forget(self);
        o
    }

    /// Whether the tensor is a versioned (DLPack 1.x) `DLManagedTensorVersioned`.
    pub fn is_versioned(&self) -> bool {
        matches!(self.owned, Owned::Versioned(_))
    }

    /// The version of a versioned tensor (`None` for the legacy ABI).
    pub fn version(&self) -> Option<DLPackVersion> {
        match self.owned {
            Owned::Legacy(_) => None,
            // SAFETY: the version field leads every versioned layout and the tensor is live.
            Owned::Versioned(p) => Some(unsafe { (*p.as_ptr()).version }),
        }
    }

    /// The flags (0 for the legacy ABI, which has none).
    pub fn flags(&self) -> u64 {
        match self.owned {
            Owned::Legacy(_) => 0,
            // SAFETY: `flags` sits before the point where future ABIs may change layout.
            Owned::Versioned(p) => unsafe { (*p.as_ptr()).flags },
        }
    }

    /// Whether the producer flagged the data as a copy (IS_COPIED; versioned tensors only).
    pub fn is_copied(&self) -> bool {
        self.flags() & DLPACK_FLAG_BITMASK_IS_COPIED != 0
    }

    /// Whether the producer flagged the data read-only (READ_ONLY; versioned tensors only).
    pub fn is_read_only(&self) -> bool {
        self.flags() & DLPACK_FLAG_BITMASK_READ_ONLY != 0
    }

    /// The tensor description; an error for a versioned tensor of another major version,
    /// whose fields past `flags` cannot be read.
    pub fn dl_tensor(&self) -> Result<&DLTensor> {
        match self.owned {
            // SAFETY: live, and owned by self for the borrow's duration.
            Owned::Legacy(p) => Ok(unsafe { &(*p.as_ptr()).dl_tensor }),
            Owned::Versioned(p) => {
                let v = self
                    .version()
                    .unwrap_or(DLPackVersion { major: 0, minor: 0 });
                if v.major != super::ffi::DLPACK_MAJOR_VERSION {
                    return Err(Error::InvalidDlpack(format!(
                        "DLPack major version {} cannot be read (dlarray speaks 1.x)",
                        v.major
                    )));
                }
                // SAFETY: as above; the major version matches our layout.
                Ok(unsafe { &(*p.as_ptr()).dl_tensor })
            }
        }
    }

    /// The shape (empty for 0-d tensors).
    pub fn shape(&self) -> Result<Vec<i64>> {
        let t = self.dl_tensor()?;
        if t.ndim <= 0 || t.shape.is_null() {
            return Ok(Vec::new());
        }
        // SAFETY: `from_raw`'s contract (and our own exports) guarantee `ndim` entries.
        Ok(unsafe { std::slice::from_raw_parts(t.shape, t.ndim as usize) }.to_vec())
    }

    /// The strides in elements (`None` when NULL).
    pub fn strides(&self) -> Result<Option<Vec<i64>>> {
        let t = self.dl_tensor()?;
        if t.ndim <= 0 || t.strides.is_null() {
            return Ok(None);
        }
        // SAFETY: as for `shape`.
        Ok(Some(
            unsafe { std::slice::from_raw_parts(t.strides, t.ndim as usize) }.to_vec(),
        ))
    }

    /// Why this export was copied to host memory instead of exported in place, if it was:
    /// the exact `BufferError` a strict export would have returned.
    pub fn fallback_reason(&self) -> Option<&BufferError> {
        self.fallback.as_ref()
    }
}

impl Drop for DLPackTensor {
    fn drop(&mut self) {
        // SAFETY: we own the tensor and this is the only place (besides into_raw/into_owned,
        // which forget self) that gives it up.
        unsafe { self.owned.delete() }
    }
}

impl fmt::Debug for DLPackTensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("DLPackTensor");
        d.field("versioned", &self.is_versioned());
        if let Ok(t) = self.dl_tensor() {
            d.field("device", &t.device)
                .field("dtype", &t.dtype)
                .field("shape", &self.shape().unwrap_or_default());
        }
        d.field("flags", &self.flags())
            .field("fallback_reason", &self.fallback)
            .finish()
    }
}
