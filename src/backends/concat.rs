//! Concatenation through the host: the default [`Backend::concat`](super::Backend::concat).

use super::{Backend, MemoryKind, SharedBuffer, TensorRef};
use crate::error::{Error, Result};
use crate::layout::checked_bytes;

/// Downloads each part once and writes the row-major concatenation along `axis` straight
/// into a new buffer of `backend` (through `upload_with`).
pub(crate) fn through_host<B: Backend + ?Sized>(
    backend: &B,
    parts: &[TensorRef<'_>],
    axis: usize,
    device: usize,
    kind: MemoryKind,
) -> Result<SharedBuffer> {
    let first = parts
        .first()
        .ok_or_else(|| Error::invalid("concat of no arrays"))?;
    let (shape, dtype) = (first.layout.shape(), first.dtype);
    if axis >= shape.len() {
        return Err(Error::IndexOutOfRange {
            what: "axis",
            index: axis as i64,
            size: shape.len(),
        });
    }
    for p in parts {
        let s = p.layout.shape();
        let same = s.len() == shape.len()
            && s.iter()
                .zip(shape)
                .enumerate()
                .all(|(k, (a, b))| k == axis || a == b);
        if p.dtype != dtype || !same {
            return Err(Error::ShapeMismatch {
                op: "concat",
                lhs: shape.to_vec(),
                rhs: s.to_vec(),
            });
        }
    }
    let item = dtype.size_in_bytes();
    let outer: usize = shape[..axis].iter().product();
    let inner: usize = shape[axis + 1..].iter().product();
    let name = format!("{}:{device}", backend.name());
    // Each part as row-major bytes: `outer` rows of `len * inner` elements.
    let mut hosted = Vec::with_capacity(parts.len());
    for p in parts {
        let bytes = checked_bytes(p.layout.size(), item, &name)?;
        let mut v = super::host::try_host_vec::<u8>(bytes, &name)?;
        backend.download(*p, &mut v)?;
        hosted.push((v, p.layout.shape()[axis] * inner * item));
    }
    let total: usize = hosted.iter().map(|(v, _)| v.len()).sum();
    let mut write = |dst: &mut [u8]| {
        let mut at = 0;
        for o in 0..outer {
            for (v, row) in &hosted {
                dst[at..at + row].copy_from_slice(&v[o * row..(o + 1) * row]);
                at += row;
            }
        }
        Ok(())
    };
    // SAFETY: `write` fills every byte of the `total` bytes (the rows of every part, for
    // every outer index, sum to `total`) and reads none.
    unsafe { backend.upload_with(device, kind, total, &mut write) }
}
