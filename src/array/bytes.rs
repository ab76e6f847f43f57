//! An array as raw bytes and back: NumPy's `tobytes()` / `frombuffer`, what serialisation
//! (Python's pickle, files, sockets) needs.

use super::Array;
use crate::backends::Device;
use crate::backends::host::try_host_vec;
use crate::dtype::DType;
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
