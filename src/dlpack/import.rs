//! DLPack -> Array: every field validated (never undefined behaviour on a bad tensor), then a
//! zero-copy wrap on the matching device; the producer's deleter runs exactly once, when the
//! last array using the memory drops (or at once, on any failure).

use super::device::dlpack_device_of;
use super::ffi::*;
use super::stream::{StreamArg, consumer_arg};
use super::tensor::{DLPackTensor, Owned, RawDLPack};
use crate::array::Array;
use crate::array::foreign::{Strided, wrap};
use crate::backends::{Device, MemoryKind};
use crate::dtype::DType;
use crate::error::{Error, Result};

/// Calls the deleter when dropped: held from the moment we own a tensor, so that every exit
/// (success or any error) releases it exactly once.
struct Guard(Owned);
// SAFETY: DLPack deleters may run on any thread.
unsafe impl Send for Guard {}
// SAFETY: the guard is never read through a shared reference.
unsafe impl Sync for Guard {}
impl Drop for Guard {
    fn drop(&mut self) {
        // SAFETY: the guard is the tensor's only owner, and drops once.
        unsafe { self.0.delete() }
    }
}

/// Most axes accepted (NumPy's limit).
const MAX_NDIM: i32 = 64;

fn bad(msg: impl Into<String>) -> Error {
    Error::InvalidDlpack(msg.into())
}

fn dtype_of(t: &DLTensor) -> Result<DType> {
    let DLDataType { code, bits, lanes } = t.dtype;
    if lanes != 1 {
        return Err(bad(format!("lanes must be 1, got {lanes}")));
    }
    DType::from_dlpack_code_bits(code, bits).ok_or_else(|| {
        use type_code::*;
        let known = [kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLComplex, kDLBool].contains(&code);
        if known {
            bad(format!(
                "{bits} bits is not a supported width for DLPack type code {code}"
            ))
        } else {
            bad(format!(
                "unknown or unsupported DLPack type code {code} ({bits} bits)"
            ))
        }
    })
}

/// The device that holds imported memory of DLPack device `d`.
pub(crate) fn target_device(d: DLDevice) -> Result<(Device, MemoryKind, bool)> {
    use crate::backends::registry::find_device;
    if d.device_type.name().is_none() {
        return Err(bad(format!(
            "unknown DLPack device type {}",
            d.device_type.0
        )));
    }
    let cpu = || {
        // The first CPU device never changes once found (built-in backends are discovered
        // once, ahead of users'), so it is looked up once: every host import needs it.
        static HOST: std::sync::OnceLock<crate::backends::Device> = std::sync::OnceLock::new();
        let found = HOST.get().cloned().or_else(|| {
            let d = find_device(|dev| dev.platform() == "cpu")?;
            Some(HOST.get_or_init(|| d).clone())
        });
        // Without a CPU backend (`DLARRAY_BACKENDS=wgpu`), host memory is copied onto the
        // default device (`wrap` uploads what its device cannot hold), as an import of
        // misaligned memory is: the array API's `copy=None` copies where it must.
        let dev = match found {
            Some(dev) => dev,
            None => crate::backends::registry::default_device().map_err(|e| {
                bad(format!(
                    "no device is available to hold imported host memory: {e}"
                ))
            })?,
        };
        let kind = dev.default_memory_kind();
        Ok((dev, kind, true))
    };
    if d == DLDevice::CPU {
        return cpu();
    }
    // A backend whose memory maps to exactly this DLPack device (pinned host of CUDA, ROCm or
    // TPU; device memory of a GPU backend).
    let maps = |dev: &Device, kind: MemoryKind| dlpack_device_of(dev, kind) == Ok(d);
    if let Some(dev) = find_device(|dev| dev.memory_kinds().iter().any(|&k| maps(dev, k))) {
        let kind = dev
            .memory_kinds()
            .iter()
            .copied()
            .find(|&k| maps(&dev, k))
            .unwrap_or(MemoryKind::Device);
        return Ok((dev, kind, d.device_type.is_host()));
    }
    if d.device_type.is_host() {
        // Host memory of a runtime we do not have: host memory all the same.
        return cpu();
    }
    Err(bad(format!(
        "no available device matches DLPack device {d:?}: no backend here holds that memory; \
         ask the producer for a host copy instead (dl_device=(kDLCPU, 0); in Python, \
         dlarray.from_dlpack(x, device=\"cpu:0\"))"
    )))
}

/// What a consumer importing memory of DLPack device `d` passes as
/// `__dlpack__(stream=...)`: for device memory of one of our backends with streams, the stream
/// that backend will use it on (in that runtime's numbering); otherwise `None`.
pub fn consumer_stream(d: DLDevice) -> StreamArg {
    if d.device_type.is_host() {
        return StreamArg::Unspecified;
    }
    match target_device(d) {
        Ok((dev, kind, _)) => consumer_arg(
            dev.stream_convention(kind),
            dev.backend().dlpack_work_stream(dev.index()),
        ),
        Err(_) => StreamArg::Unspecified,
    }
}

/// After importing memory of DLPack device `d` that its producer wrote on stream `producer`
/// (the C exchange API's `current_work_stream`): makes the importing device's work wait
/// for that stream. Host memory needs nothing.
///
/// # Safety
/// `producer` must be a live stream handle of the runtime that `d` belongs to.
pub unsafe fn wait_for_producer(d: DLDevice, producer: Option<usize>) -> Result<()> {
    if d.device_type.is_host() {
        return Ok(());
    }
    let (dev, _, _) = target_device(d)?;
    // SAFETY: forwarded contract.
    unsafe {
        dev.backend()
            .dlpack_wait_for_producer(dev.index(), producer)
    }
}

impl Array {
    /// Imports a DLPack tensor without copying where the memory allows (see the module docs).
    pub fn from_dlpack(tensor: DLPackTensor) -> Result<Array> {
        let owned = tensor.into_owned();
        // SAFETY: a DLPackTensor's contract (from_raw, or our own export) makes the pointer
        // live, owned, with ndim-long shape/strides arrays.
        unsafe { import(owned) }
    }

    /// Imports a raw managed tensor, taking ownership: its deleter is called exactly once,
    /// also when the import fails.
    ///
    /// # Safety
    /// As [`DLPackTensor::from_raw`]: a live managed tensor of the stated ABI, owned by the
    /// caller, with `ndim`-long shape/strides arrays, and data readable for every element the
    /// shape and strides address.
    pub unsafe fn from_dlpack_raw(raw: RawDLPack) -> Result<Array> {
        // SAFETY: forwarded contract.
        let t = unsafe { DLPackTensor::from_raw(raw)? };
        Array::from_dlpack(t)
    }
}

/// # Safety
/// See `Array::from_dlpack_raw`.
unsafe fn import(owned: Owned) -> Result<Array> {
    // SAFETY: forwarded contract.
    let owned = match unsafe { super::export::reclaim(owned) } {
        Ok(array) => return Ok(array),
        Err(owned) => owned,
    };
    let guard = Guard(owned);
    // SAFETY: live per the contract; for versioned tensors only the stable header is read
    // before the version check.
    let (t, legacy_strides_ok, read_only) = unsafe {
        match owned {
            Owned::Legacy(p) => ((*p.as_ptr()).dl_tensor, true, false),
            Owned::Versioned(p) => {
                let m = &*p.as_ptr();
                if m.version.major != DLPACK_MAJOR_VERSION {
                    return Err(bad(format!(
                        "DLPack major version {} is not supported (dlarray speaks {}.{})",
                        m.version.major, DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION
                    )));
                }
                (
                    m.dl_tensor,
                    m.version.minor < 2,
                    m.flags & DLPACK_FLAG_BITMASK_READ_ONLY != 0,
                )
            }
        }
    };
    if t.ndim < 0 || t.ndim > MAX_NDIM {
        return Err(bad(format!(
            "ndim must be in 0..={MAX_NDIM}, got {}",
            t.ndim
        )));
    }
    let ndim = t.ndim as usize;
    let dtype = dtype_of(&t)?;
    if ndim > 0 && t.shape.is_null() {
        return Err(bad(format!("shape is NULL for ndim {ndim}")));
    }
    // SAFETY: non-NULL and ndim long per the contract.
    let raw_shape: &[i64] = if ndim == 0 {
        &[]
    } else {
        unsafe { std::slice::from_raw_parts(t.shape, ndim) }
    };
    let mut shape: smallvec::SmallVec<[usize; 4]> = smallvec::SmallVec::with_capacity(ndim);
    for &d in raw_shape {
        shape.push(
            usize::try_from(d).map_err(|_| bad(format!("negative dimension in {raw_shape:?}")))?,
        );
    }
    // A shape whose element count or byte count does not fit in i64 (DLPack's own integer)
    // cannot describe real memory: refused before anything reads it.
    let size = crate::layout::checked_size(&shape)
        .ok()
        .filter(|&n| {
            n.checked_mul(dtype.size_in_bytes())
                .is_some_and(|b| b <= i64::MAX as usize)
        })
        .ok_or_else(|| {
            bad(format!(
                "shape {raw_shape:?} of {dtype} overflows: its element or byte count does not fit in i64"
            ))
        })?;
    let strides: smallvec::SmallVec<[isize; 4]> = if ndim == 0 {
        smallvec::SmallVec::new()
    } else if t.strides.is_null() {
        if !legacy_strides_ok {
            return Err(bad(format!(
                "strides are NULL for ndim {ndim}, which DLPack 1.2 and later forbid"
            )));
        }
        crate::layout::contiguous_strides(&shape)
    } else {
        // SAFETY: non-NULL and ndim long per the contract.
        let s = unsafe { std::slice::from_raw_parts(t.strides, ndim) };
        s.iter()
            .map(|&v| isize::try_from(v).map_err(|_| bad(format!("stride {v} overflows"))))
            .collect::<Result<_>>()?
    };
    if size > 0 && t.data.is_null() {
        return Err(bad(format!("data is NULL for a tensor of {size} elements")));
    }
    let data = (t.data as usize)
        .checked_add(usize::try_from(t.byte_offset).map_err(|_| bad("byte_offset overflows"))?)
        .ok_or_else(|| bad("data + byte_offset overflows"))?;
    let (device, kind, host) = target_device(t.device)?;
    let strided = Strided {
        data: data as *const u8,
        shape: &shape,
        strides: &strides,
        dtype,
    };
    // SAFETY: the producer guarantees the addressed elements are readable and unchanged
    // while it owns the memory; the guard keeps ownership until the array drops.
    let array = unsafe { wrap(strided, &device, kind, host, Box::new(guard))? };
    Ok(array.with_read_only(read_only))
}
