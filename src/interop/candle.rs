//! candle interop (feature `candle`): CPU tensors cross without copies where memory allows.
//!
//! candle speaks no DLPack, so this is the bridge (candle#1850, #973). What is zero-copy:
//!
//! | call | zero-copy when | otherwise |
//! |---|---|---|
//! | [`Array::from_candle`] | always (CPU tensor, any strides and start offset) | - |
//! | [`Array::into_candle`] | the array alone holds a buffer that is a `Vec<T>` (from [`Array::from_vec`] on `cpu`) or the candle tensor it came from, seen whole | a copy |
//! | [`Array::to_candle`] | never | a copy |
//!
//! candle's storage is shared between tensors and candle can write it in place
//! (`slice_set`, `Var::set`), so an array made from a tensor is read-only for DLPack consumers,
//! and sees such writes, exactly as another candle view of the storage would.

use crate::array::Array;
use crate::array::foreign::{Strided, wrap};
use crate::backends::registry::find_device;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::layout::Layout;
use candle_core::{CpuStorage, DType as CDType, Device as CDevice, Storage, Tensor};
use std::any::Any;

fn err(message: impl Into<String>) -> Error {
    Error::Interop {
        library: "candle",
        message: message.into(),
    }
}

fn candle_err(e: candle_core::Error) -> Error {
    err(e.to_string())
}

/// Our dtype for a candle dtype; candle's 8-, 6- and 4-bit floats have none.
pub fn dtype_from_candle(d: CDType) -> Result<DType> {
    Ok(match d {
        CDType::U8 => DType::U8,
        CDType::U32 => DType::U32,
        CDType::I16 => DType::I16,
        CDType::I32 => DType::I32,
        CDType::I64 => DType::I64,
        CDType::BF16 => DType::BF16,
        CDType::F16 => DType::F16,
        CDType::F32 => DType::F32,
        CDType::F64 => DType::F64,
        other => {
            return Err(err(format!(
                "candle dtype {} has no dlarray dtype",
                other.as_str()
            )));
        }
    })
}

/// candle's dtype for ours; candle has no bool, int8, uint16, uint64 or complex.
pub fn dtype_to_candle(d: DType) -> Result<CDType> {
    Ok(match d {
        DType::U8 => CDType::U8,
        DType::U32 => CDType::U32,
        DType::I16 => CDType::I16,
        DType::I32 => CDType::I32,
        DType::I64 => CDType::I64,
        DType::BF16 => CDType::BF16,
        DType::F16 => CDType::F16,
        DType::F32 => CDType::F32,
        DType::F64 => CDType::F64,
        other => {
            return Err(err(format!(
                "candle has no dtype for {other}: cast first (`astype`) to one it has \
                 (uint8, uint32, int16, int32, int64, bfloat16, float16, float32, float64)"
            )));
        }
    })
}

/// Runs `$body` with `$T` bound to the Rust element type of a dtype candle and dlarray share.
macro_rules! with_shared_type {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            DType::U8 => {
                type $T = u8;
                $body
            }
            DType::U32 => {
                type $T = u32;
                $body
            }
            DType::I16 => {
                type $T = i16;
                $body
            }
            DType::I32 => {
                type $T = i32;
                $body
            }
            DType::I64 => {
                type $T = i64;
                $body
            }
            DType::BF16 => {
                type $T = half::bf16;
                $body
            }
            DType::F16 => {
                type $T = half::f16;
                $body
            }
            DType::F32 => {
                type $T = f32;
                $body
            }
            DType::F64 => {
                type $T = f64;
                $body
            }
            other => return Err(dtype_to_candle(other).unwrap_err()),
        }
    };
}

/// Address of the first element of a CPU storage's vector.
fn storage_ptr(s: &CpuStorage) -> *const u8 {
    match s {
        CpuStorage::U8(v) => v.as_ptr().cast(),
        CpuStorage::U32(v) => v.as_ptr().cast(),
        CpuStorage::I16(v) => v.as_ptr().cast(),
        CpuStorage::I32(v) => v.as_ptr().cast(),
        CpuStorage::I64(v) => v.as_ptr().cast(),
        CpuStorage::BF16(v) => v.as_ptr().cast(),
        CpuStorage::F16(v) => v.as_ptr().cast(),
        CpuStorage::F32(v) => v.as_ptr().cast(),
        CpuStorage::F64(v) => v.as_ptr().cast(),
        CpuStorage::F8E4M3(v) => v.as_ptr().cast(),
        CpuStorage::F6E2M3(v)
        | CpuStorage::F6E3M2(v)
        | CpuStorage::F4(v)
        | CpuStorage::F8E8M0(v) => v.as_ptr(),
    }
}

fn device_name(d: &CDevice) -> String {
    match d {
        CDevice::Cpu => "cpu".into(),
        CDevice::Cuda(_) => "cuda".into(),
        CDevice::Metal(_) => "metal".into(),
    }
}

/// Whether an array layout views the same elements as candle's dims and strides (wrapping
/// zeroes the strides of size-1 axes, which address nothing).
fn same_view(dims: &[usize], strides: &[isize], l: &Layout) -> bool {
    dims == l.shape()
        && dims
            .iter()
            .zip(strides.iter().zip(l.strides()))
            .all(|(&d, (&a, &b))| d <= 1 || a == b)
}

/// Where a candle tensor's element `[0, .., 0]` is, with its shape and strides.
fn tensor_parts(t: &Tensor) -> Result<(*const u8, Vec<usize>, Vec<isize>)> {
    let (storage, layout) = t.storage_and_layout();
    let base = match &*storage {
        Storage::Cpu(s) => storage_ptr(s),
        _ => {
            return Err(err(format!(
                "a tensor on candle's {} device: only CPU tensors are exchanged (feature \
                 `candle` is CPU-only); move it with `to_device(&Device::Cpu)` first",
                device_name(t.device())
            )));
        }
    };
    // The guard is a lock: take the address and let it go (candle's in-place ops need it).
    drop(storage);
    let item = dtype_from_candle(t.dtype())?.size_in_bytes();
    let offset = layout
        .start_offset()
        .checked_mul(item)
        .ok_or_else(|| err("the tensor's start offset overflows"))?;
    let strides = layout
        .stride()
        .iter()
        .map(|&s| isize::try_from(s).map_err(|_| err("a stride overflows isize")))
        .collect::<Result<Vec<_>>>()?;
    Ok((base.wrapping_add(offset), layout.dims().to_vec(), strides))
}

impl Array {
    /// A candle CPU tensor as an array on the `cpu` device, without copying: any strides
    /// and start offset; the array keeps (a clone of) the tensor alive and is read-only for
    /// DLPack consumers (candle storage is shared). candle's 8-, 6- and 4-bit floats, and
    /// tensors on CUDA or Metal, are an [`Error::Interop`].
    pub fn from_candle(t: &Tensor) -> Result<Array> {
        let dtype = dtype_from_candle(t.dtype())?;
        let (data, shape, strides) = tensor_parts(t)?;
        let device = find_device(|d| d.platform() == "cpu")
            .ok_or_else(|| err("no cpu device is available to hold the tensor"))?;
        let kind = device.default_memory_kind();
        let s = Strided {
            data,
            shape: &shape,
            strides: &strides,
            dtype,
        };
        // SAFETY: `data`, shape and strides are the tensor's own view of its storage's vector,
        // so every element they address is in it. The vector lives while any clone of the
        // tensor does, and the clone moves into the buffer's owner.
        let a = unsafe { wrap(s, &device, kind, true, Box::new(t.clone())) }?;
        Ok(a.with_read_only(true))
    }

    /// The array as a candle CPU tensor, moved without a copy when the array alone holds a
    /// buffer that is a `Vec<T>` of a dtype candle has, seen whole and row-major
    /// ([`Array::from_vec`] on the `cpu` device gives one), or a candle tensor it was made
    /// from, seen with that tensor's own layout. Otherwise (a clone or a view of the array
    /// alive, pool memory, another device) the data is copied as by
    /// [`to_candle`](Array::to_candle). Dtypes candle lacks are an [`Error::Interop`]: cast
    /// first with `astype`.
    pub fn into_candle(self) -> Result<Tensor> {
        let shape = self.shape().to_vec();
        with_shared_type!(self.dtype(), T => {
            let item = std::mem::size_of::<T>();
            let whole_vec = |o: &(dyn Any + Send + Sync), base: *const u8, l: &Layout| {
                o.downcast_ref::<Vec<T>>().is_some_and(|v| {
                    v.as_ptr().cast() == base && l.offset() == 0 && l.is_contiguous() && v.len() == l.size()
                })
            };
            let own_tensor = |o: &(dyn Any + Send + Sync), base: *const u8, l: &Layout| {
                o.downcast_ref::<Tensor>().is_some_and(|t| {
                    tensor_parts(t).is_ok_and(|(data, dims, strides)| {
                        data == base.wrapping_add(l.offset() * item)
                            && same_view(&dims, &strides, l)
                    })
                })
            };
            let accept = |o: &(dyn Any + Send + Sync), base: *const u8, l: &Layout| {
                whole_vec(o, base, l) || own_tensor(o, base, l)
            };
            match self.take_foreign(&accept) {
                Err(array) => array.to_candle(),
                Ok(owner) => match owner.downcast::<Vec<T>>() {
                    Ok(v) => Tensor::from_vec(*v, shape, &CDevice::Cpu).map_err(candle_err),
                    Err(owner) => owner
                        .downcast::<Tensor>()
                        .map(|t| *t)
                        .map_err(|_| err("into_candle took an owner it did not accept")),
                },
            }
        })
    }

    /// A copy of the array's elements as a row-major candle CPU tensor (from any device).
    /// Dtypes candle lacks are an [`Error::Interop`]: cast first with `astype`.
    pub fn to_candle(&self) -> Result<Tensor> {
        let shape = self.shape().to_vec();
        with_shared_type!(self.dtype(), T => {
            let v = self.to_vec::<T>()?;
            Tensor::from_vec(v, shape, &CDevice::Cpu).map_err(candle_err)
        })
    }
}
