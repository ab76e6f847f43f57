//! [`Array::astype_anywhere`]: a conversion asked for by the user, through host memory
//! where a device has no cast kernel for it.
//!
//! A backend may store dtypes it cannot compute (wgpu keeps the float64, int64 and complex
//! arrays moved there). Such an array could be moved away but not converted where it is:
//! `astype(float32)` of a float64 array on wgpu was "does not support cast". Ops keep
//! [`Array::astype`], which refuses: their own casts must never narrow 64-bit data behind
//! the user's back (`exp` of a float64 array there would come back float32).

use super::Array;
use crate::backends::host::try_host_vec;
use crate::backends::{Device, MemoryKind, SharedBuffer, TensorRef};
use crate::dtype::{DType, Element};
use crate::error::{Error, Result};

impl Array {
    /// [`astype`](Self::astype), except that a shard whose device has no cast kernel for
    /// these dtypes is converted on the host (one download, one upload) and put back in
    /// the same memory: what an explicit conversion by the user wants (Python's `astype`
    /// and `asarray(x, dtype=)`), so that data a device stores can always be converted
    /// there. Each element converts as the CPU backend's cast converts it.
    pub fn astype_anywhere(&self, dtype: DType) -> Result<Array> {
        if dtype == self.dtype() {
            return Ok(self.clone());
        }
        self.per_shard(dtype, |d, t, kind| match d.backend().cast(t, dtype) {
            Err(Error::Unsupported { .. }) => cast_through_host(d, t, dtype, kind),
            r => r,
        })
    }
}

/// `t` (on `device`) converted to `to` on the host and uploaded back into memory `kind`:
/// a row-major buffer of `to`, what a backend's cast kernel gives.
fn cast_through_host(
    device: &Device,
    t: TensorRef<'_>,
    to: DType,
    kind: MemoryKind,
) -> Result<SharedBuffer> {
    let n = t.layout.size();
    crate::with_dtype!(t.dtype, S => crate::with_dtype!(to, D => {
        let mut src: Vec<S> = try_host_vec(n, device.name())?;
        // SAFETY: `src` holds n initialised elements of S (plain data), viewed as their
        // bytes for the download (try_host_vec checked that the byte count fits); the
        // device writes the row-major elements of a tensor of the same dtype, each a
        // valid S.
        let raw = unsafe {
            std::slice::from_raw_parts_mut(
                src.as_mut_ptr().cast::<u8>(),
                n * std::mem::size_of::<S>(),
            )
        };
        device.backend().download(t, raw)?;
        let out: Vec<D> = src.iter().map(|s| D::from_scalar(s.to_scalar())).collect();
        // SAFETY: `out` holds n initialised elements of D (plain data without padding),
        // read as bytes while it lives.
        let bytes = unsafe {
            std::slice::from_raw_parts(out.as_ptr().cast::<u8>(), n * std::mem::size_of::<D>())
        };
        device.backend().upload(device.index(), kind, bytes)
    }))
}
