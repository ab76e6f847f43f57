//! The DLPack C ABI (`dlpack.h`, version 1.3), as `#[repr(C)]` Rust types.
//!
//! Device types and type codes are newtypes over their C integer types rather than Rust enums:
//! a producer may send any value, and an out-of-range Rust enum would be undefined behaviour.

#![allow(non_upper_case_globals)]

use std::ffi::c_void;
use std::fmt;

/// The DLPack version this crate speaks.
pub const DLPACK_MAJOR_VERSION: u32 = 1;
/// The minor DLPack version this crate speaks.
pub const DLPACK_MINOR_VERSION: u32 = 3;

/// `DLManagedTensorVersioned.flags`: the consumer must not write through the tensor.
pub const DLPACK_FLAG_BITMASK_READ_ONLY: u64 = 1 << 0;
/// The tensor is a copy made by the producer; the consumer owns it alone.
pub const DLPACK_FLAG_BITMASK_IS_COPIED: u64 = 1 << 1;
/// A sub-byte dtype is padded rather than packed.
pub const DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED: u64 = 1 << 2;

/// `DLPackVersion`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DLPackVersion {
    /// Incompatible ABI changes bump it.
    pub major: u32,
    /// Compatible additions bump it.
    pub minor: u32,
}

/// `DLDeviceType` (a C enum: 4 bytes).
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DLDeviceType(pub i32);

impl DLDeviceType {
    /// Host memory.
    pub const kDLCPU: Self = Self(1);
    /// CUDA device memory.
    pub const kDLCUDA: Self = Self(2);
    /// Pinned CUDA host memory (`cudaMallocHost`).
    pub const kDLCUDAHost: Self = Self(3);
    /// OpenCL device memory.
    pub const kDLOpenCL: Self = Self(4);
    /// Vulkan buffers.
    pub const kDLVulkan: Self = Self(7);
    /// Metal buffers.
    pub const kDLMetal: Self = Self(8);
    /// NVIDIA Vision Programming Interface.
    pub const kDLVPI: Self = Self(9);
    /// ROCm (HIP) device memory.
    pub const kDLROCM: Self = Self(10);
    /// Pinned ROCm host memory (`hipMallocHost`).
    pub const kDLROCMHost: Self = Self(11);
    /// A reserved extension device type.
    pub const kDLExtDev: Self = Self(12);
    /// CUDA managed (unified) memory (`cudaMallocManaged`).
    pub const kDLCUDAManaged: Self = Self(13);
    /// oneAPI (SYCL / Level Zero) unified shared memory.
    pub const kDLOneAPI: Self = Self(14);
    /// WebGPU buffers.
    pub const kDLWebGPU: Self = Self(15);
    /// Qualcomm Hexagon DSP memory.
    pub const kDLHexagon: Self = Self(16);
    /// Microsoft MAIA device memory.
    pub const kDLMAIA: Self = Self(17);
    /// AWS Trainium device memory.
    pub const kDLTrn: Self = Self(18);
    /// TPU pinned host memory. Not in the DLPack 1.3 release: JAX hard-codes 20
    /// (`jax/_src/typing.py`, 2026-06) and upstream dlpack `main` adds it after 1.3
    /// (dmlc/dlpack PR #188, with kDLTPU = 19).
    pub const kDLTPUHost: Self = Self(20);

    /// Every value dlarray knows, with its C name.
    pub const KNOWN: [(Self, &'static str); 18] = [
        (Self::kDLCPU, "kDLCPU"),
        (Self::kDLCUDA, "kDLCUDA"),
        (Self::kDLCUDAHost, "kDLCUDAHost"),
        (Self::kDLOpenCL, "kDLOpenCL"),
        (Self::kDLVulkan, "kDLVulkan"),
        (Self::kDLMetal, "kDLMetal"),
        (Self::kDLVPI, "kDLVPI"),
        (Self::kDLROCM, "kDLROCM"),
        (Self::kDLROCMHost, "kDLROCMHost"),
        (Self::kDLExtDev, "kDLExtDev"),
        (Self::kDLCUDAManaged, "kDLCUDAManaged"),
        (Self::kDLOneAPI, "kDLOneAPI"),
        (Self::kDLWebGPU, "kDLWebGPU"),
        (Self::kDLHexagon, "kDLHexagon"),
        (Self::kDLMAIA, "kDLMAIA"),
        (Self::kDLTrn, "kDLTrn"),
        (Self(19), "kDLTPU"),
        (Self::kDLTPUHost, "kDLTPUHost"),
    ];

    /// The device type's name in dlpack.h (`kDLCPU`, ...), if it is a known one.
    pub fn name(self) -> Option<&'static str> {
        Self::KNOWN
            .iter()
            .find(|(v, _)| *v == self)
            .map(|(_, n)| *n)
    }

    /// Memory the host can read directly.
    pub fn is_host(self) -> bool {
        matches!(
            self,
            Self::kDLCPU | Self::kDLCUDAHost | Self::kDLROCMHost | Self::kDLTPUHost
        )
    }
}

impl fmt::Debug for DLDeviceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n}"),
            None => write!(f, "DLDeviceType({})", self.0),
        }
    }
}

/// `DLDevice`.
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct DLDevice {
    /// Which runtime's memory.
    pub device_type: DLDeviceType,
    /// The device's ordinal within that runtime (0 for host memory).
    pub device_id: i32,
}

impl DLDevice {
    /// The device `device_id` of `device_type`.
    pub const fn new(device_type: DLDeviceType, device_id: i32) -> Self {
        DLDevice {
            device_type,
            device_id,
        }
    }
    /// `(kDLCPU, 0)`: host memory.
    pub const CPU: DLDevice = DLDevice::new(DLDeviceType::kDLCPU, 0);
}

impl fmt::Debug for DLDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({:?}, {})", self.device_type, self.device_id)
    }
}

/// `DLDataTypeCode` values (stored as `u8` in [`DLDataType::code`]).
pub mod type_code {
    /// Signed integers.
    pub const kDLInt: u8 = 0;
    /// Unsigned integers.
    pub const kDLUInt: u8 = 1;
    /// IEEE floats (16, 32, 64 bits).
    pub const kDLFloat: u8 = 2;
    /// Opaque handles (pointers).
    pub const kDLOpaqueHandle: u8 = 3;
    /// bfloat16.
    pub const kDLBfloat: u8 = 4;
    /// Complex numbers (bits: of the pair).
    pub const kDLComplex: u8 = 5;
    /// Booleans (8 bits, 0 or 1).
    pub const kDLBool: u8 = 6;
    // The 8-, 6- and 4-bit floats of DLPack 1.1 and later, by their names in dlpack.h.
    /// The 8-bit float `e3m4` (dlpack.h's `kDLFloat8_e3m4`); no dlarray dtype maps to it.
    pub const kDLFloat8_e3m4: u8 = 7;
    /// The 8-bit float `e4m3` (dlpack.h's `kDLFloat8_e4m3`); no dlarray dtype maps to it.
    pub const kDLFloat8_e4m3: u8 = 8;
    /// The 8-bit float `e4m3b11fnuz` (dlpack.h's `kDLFloat8_e4m3b11fnuz`); no dlarray dtype maps to it.
    pub const kDLFloat8_e4m3b11fnuz: u8 = 9;
    /// The 8-bit float `e4m3fn` (dlpack.h's `kDLFloat8_e4m3fn`); no dlarray dtype maps to it.
    pub const kDLFloat8_e4m3fn: u8 = 10;
    /// The 8-bit float `e4m3fnuz` (dlpack.h's `kDLFloat8_e4m3fnuz`); no dlarray dtype maps to it.
    pub const kDLFloat8_e4m3fnuz: u8 = 11;
    /// The 8-bit float `e5m2` (dlpack.h's `kDLFloat8_e5m2`); no dlarray dtype maps to it.
    pub const kDLFloat8_e5m2: u8 = 12;
    /// The 8-bit float `e5m2fnuz` (dlpack.h's `kDLFloat8_e5m2fnuz`); no dlarray dtype maps to it.
    pub const kDLFloat8_e5m2fnuz: u8 = 13;
    /// The 8-bit float `e8m0fnu` (dlpack.h's `kDLFloat8_e8m0fnu`); no dlarray dtype maps to it.
    pub const kDLFloat8_e8m0fnu: u8 = 14;
    /// The 6-bit float `e2m3fn` (dlpack.h's `kDLFloat6_e2m3fn`); no dlarray dtype maps to it.
    pub const kDLFloat6_e2m3fn: u8 = 15;
    /// The 6-bit float `e3m2fn` (dlpack.h's `kDLFloat6_e3m2fn`); no dlarray dtype maps to it.
    pub const kDLFloat6_e3m2fn: u8 = 16;
    /// The 4-bit float `e2m1fn` (dlpack.h's `kDLFloat4_e2m1fn`); no dlarray dtype maps to it.
    pub const kDLFloat4_e2m1fn: u8 = 17;
}

/// `DLDataType`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DLDataType {
    /// The kind of number ([`type_code`]).
    pub code: u8,
    /// Bits per element (per lane).
    pub bits: u8,
    /// Vector lanes per element (1 for every dtype dlarray has).
    pub lanes: u16,
}

/// `DLTensor`: a borrowed view; the managed structs own it.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DLTensor {
    /// The data's base address (host or device); element `[0, .., 0]` is at
    /// `data + byte_offset`.
    pub data: *mut c_void,
    /// Where the data is.
    pub device: DLDevice,
    /// Number of axes.
    pub ndim: i32,
    /// Element type.
    pub dtype: DLDataType,
    /// `ndim` sizes.
    pub shape: *mut i64,
    /// In elements; may be NULL (compact row-major) only before DLPack 1.2.
    pub strides: *mut i64,
    /// Bytes from `data` to element `[0, .., 0]`.
    pub byte_offset: u64,
}

/// `DLManagedTensor` (the legacy, unversioned ABI; capsule name `dltensor`).
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensor {
    /// The tensor described.
    pub dl_tensor: DLTensor,
    /// The producer's context for its deleter.
    pub manager_ctx: *mut c_void,
    /// Called once by the consumer when it is done with the tensor.
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

/// `DLManagedTensorVersioned` (capsule name `dltensor_versioned`).
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensorVersioned {
    /// The DLPack version the producer filled the struct for.
    pub version: DLPackVersion,
    /// The producer's context for its deleter.
    pub manager_ctx: *mut c_void,
    /// Called once by the consumer when it is done with the tensor.
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    /// `DLPACK_FLAG_BITMASK_*` bits (read-only, copied, padded sub-byte types).
    pub flags: u64,
    /// The tensor described.
    pub dl_tensor: DLTensor,
}

// The layouts every producer and consumer agree on (64-bit targets).
#[cfg(target_pointer_width = "64")]
const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<DLPackVersion>() == 8);
    assert!(size_of::<DLDevice>() == 8);
    assert!(size_of::<DLDataType>() == 4);
    assert!(offset_of!(DLDataType, bits) == 1);
    assert!(offset_of!(DLDataType, lanes) == 2);
    assert!(size_of::<DLTensor>() == 48);
    assert!(offset_of!(DLTensor, device) == 8);
    assert!(offset_of!(DLTensor, ndim) == 16);
    assert!(offset_of!(DLTensor, dtype) == 20);
    assert!(offset_of!(DLTensor, shape) == 24);
    assert!(offset_of!(DLTensor, strides) == 32);
    assert!(offset_of!(DLTensor, byte_offset) == 40);
    assert!(size_of::<DLManagedTensor>() == 64);
    assert!(offset_of!(DLManagedTensor, manager_ctx) == 48);
    assert!(offset_of!(DLManagedTensor, deleter) == 56);
    assert!(size_of::<DLManagedTensorVersioned>() == 80);
    assert!(offset_of!(DLManagedTensorVersioned, manager_ctx) == 8);
    assert!(offset_of!(DLManagedTensorVersioned, deleter) == 16);
    assert!(offset_of!(DLManagedTensorVersioned, flags) == 24);
    assert!(offset_of!(DLManagedTensorVersioned, dl_tensor) == 32);
};
