//! An array as raw bytes and back: NumPy's `tobytes()` / `frombuffer`, what serialisation
//! (Python's pickle, files, sockets) needs; and [`Array::astype_anywhere`], a conversion
//! through host bytes where a device has no cast kernel.
//!
//! A backend may store dtypes it cannot compute (wgpu keeps the float64, int64 and complex
//! arrays moved there). Such an array could be moved away but not converted where it is:
//! `astype(float32)` of a float64 array on wgpu was "does not support cast". Ops keep
//! [`Array::astype`], which refuses: their own casts must never narrow 64-bit data behind
//! the user's back (`exp` of a float64 array there would come back float32).

use super::Array;
use crate::backends::host::try_host_vec;
use crate::backends::{Device, MemoryKind, SharedBuffer, TensorRef};
use crate::dtype::{DType, Element, Scalar};
use crate::error::{Error, Result};
use crate::layout::{Layout, checked_bytes, checked_size};

impl Array {
    /// Every element, row-major, in the machine's byte order (NumPy's `tobytes()`),
    /// gathered from every shard.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let len = checked_bytes(self.size(), self.dtype().size_in_bytes(), "host")?;
        let mut out: Vec<u8> = try_host_vec(len, "host")?;
        self.read_bytes(&mut out)?;
        Ok(out)
    }

    /// The array of `dtype` and `shape` whose row-major elements, in the machine's byte
    /// order, are `bytes` (what [`to_bytes`](Self::to_bytes) gives), copied to `device`.
    /// The length must match exactly, and a bool array's bytes must each be 0 or 1 (any
    /// other byte is not a bool).
    pub fn from_bytes_on(
        bytes: &[u8],
        dtype: DType,
        shape: &[usize],
        device: &Device,
    ) -> Result<Array> {
        let want = checked_bytes(checked_size(shape)?, dtype.size_in_bytes(), device.name())?;
        if bytes.len() != want {
            return Err(Error::invalid(format!(
                "from_bytes: {} bytes for {want} ({shape:?} of {dtype})",
                bytes.len()
            )));
        }
        if dtype == DType::Bool
            && let Some(k) = bytes.iter().position(|&b| b > 1)
        {
            return Err(Error::invalid(format!(
                "from_bytes: byte {k} is {}, not a bool (0 or 1)",
                bytes[k]
            )));
        }
        let buffer =
            device
                .backend()
                .upload(device.index(), device.default_memory_kind(), bytes)?;
        Ok(Array::from_buffer(
            device.clone(),
            dtype,
            buffer,
            Layout::contiguous(shape)?,
        ))
    }
}

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
/// a row-major buffer of `to`, what a backend's cast kernel gives. Through `Scalar`s: one
/// read per source dtype and one write per target dtype, not a body per pair (225 of them
/// grew the crate enough to move unrelated functions out of each other's reach for
/// inlining: a 0-d sum took 58 more instructions).
fn cast_through_host(
    device: &Device,
    t: TensorRef<'_>,
    to: DType,
    kind: MemoryKind,
) -> Result<SharedBuffer> {
    let n = t.layout.size();
    let values: Vec<Scalar> = crate::with_dtype!(t.dtype, S => {
        let mut src: Vec<S> = try_host_vec(n, device.name())?;
        // SAFETY: `src` holds n initialised elements of S (plain data), viewed as their
        // bytes for the download (try_host_vec checked that the byte count fits); the
        // device writes the row-major elements of a tensor of the same dtype, each a
        // valid S.
        let raw = unsafe {
            std::slice::from_raw_parts_mut(src.as_mut_ptr().cast::<u8>(), n * std::mem::size_of::<S>())
        };
        device.backend().download(t, raw)?;
        src.iter().map(|s| s.to_scalar()).collect()
    });
    crate::with_dtype!(to, D => {
        let out: Vec<D> = values.iter().map(|&s| D::from_scalar(s)).collect();
        // SAFETY: `out` holds n initialised elements of D (plain data without padding),
        // read as bytes while it lives.
        let bytes = unsafe {
            std::slice::from_raw_parts(out.as_ptr().cast::<u8>(), n * std::mem::size_of::<D>())
        };
        device.backend().upload(device.index(), kind, bytes)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip_every_dtype_and_refuse_what_is_not_one() {
        let cpu = crate::backends::registry::default_device().unwrap();
        for &dt in &DType::ALL {
            let a = Array::arange(0.0, 6.0, 1.0, DType::I8)
                .and_then(|a| a.astype(dt))
                .and_then(|a| a.reshape(&[2, 3]))
                .and_then(|a| a.permute(&[1, 0]))
                .unwrap();
            let bytes = a.to_bytes().unwrap();
            assert_eq!(bytes.len(), 6 * dt.size_in_bytes());
            let b = Array::from_bytes_on(&bytes, dt, &[3, 2], &cpu).unwrap();
            assert_eq!(b.to_bytes().unwrap(), bytes, "{dt}");
            assert_eq!((b.dtype(), b.shape()), (dt, &[3, 2][..]));
            assert!(Array::from_bytes_on(&bytes[1..], dt, &[3, 2], &cpu).is_err());
        }
        let e = Array::from_bytes_on(&[0, 2], DType::Bool, &[2], &cpu).unwrap_err();
        assert!(e.to_string().contains("byte 1 is 2"), "{e}");
        assert!(Array::from_bytes_on(&[], DType::F32, &[1 << 62, 8], &cpu).is_err());
    }
}
