//! # dlarray
//!
//! A Rust array runtime with pluggable backends and first-class DLPack interchange.
//!
//! An [`Array`] has a shape, a [`DType`] and a [`Sharding`]: its data lives on one or more
//! devices, each belonging to a backend held as `Arc<dyn Backend>` (CPU, an emulated TPU, and
//! any backend a user registers). Backends are discovered at run time.
//!
//! ```
//! use dlarray::{Array, DType, Result};
//! # fn main() -> Result<()> {
//! let a = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
//! let b = Array::ones(&[2], DType::F32)?;
//! let c = (&a + &b)?;                       // broadcasting
//! assert_eq!(c.to_vec::<f32>()?, vec![2.0, 3.0, 4.0, 5.0]);
//! assert_eq!(a.matmul(&a)?.sum(dlarray::Axes::All)?.item::<f32>()?, 54.0);
//! # Ok(()) }
//! ```
//!
//! Environment: `DLARRAY_BACKENDS` limits discovery (`cpu,tpu`), `DLARRAY_REQUIRE` makes a
//! missing backend an error, `DLARRAY_CPU_DEVICES` / `DLARRAY_TPU_DEVICES` set device counts
//! (defaults 1 and 4), `DLARRAY_CPU_THREADS` threads per host device, `DLARRAY_POOL_BYTES` the
//! per-device buffer cache.

// Every public item says what it is: CI's clippy runs deny warnings, so this is enforced.
#![warn(missing_docs)]

pub mod array;
pub mod backends;
pub mod dlpack;
pub mod dtype;
pub mod error;
pub mod interop;
pub mod layout;
pub mod random;
mod shared;
mod thread_blocks;

pub use array::sharding::{Mesh, PartitionSpec, Sharding};
pub use array::{Array, Axes, ScalarValue, Shard};
pub use backends::registry::default_device;
pub use backends::{
    Address, Backend, BackendStatus, BinaryOp, Device, DeviceBuffer, DeviceDesc, DlpackCapability,
    MemoryKind, Owner, ReduceOp, Shared, SharedBuffer, TensorRef, UnaryOp, backends, devices,
    get_device, register_backend,
};
pub use dlpack::ffi::{DLDevice, DLDeviceType};
pub use dlpack::{DLPackTensor, DlpackPolicy, ExportOptions, RawDLPack, set_dlpack_policy};
pub use dtype::{DType, Element, Scalar};
pub use error::{BufferError, Error, Result};
pub use layout::{Layout, Slice};

/// Host-memory building blocks for backends that compute on host RAM (used by the CPU and
/// TPU-host backends; available to users writing their own).
pub mod host {
    pub use crate::backends::host::{
        ForeignBuffer, HOST_ALIGN, HostBackend, HostBuffer, HostConfig, HostPool, try_host_vec,
    };
}

// Compile-time check of the contract that `Array` can cross threads.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Array>();
    assert_send_sync::<Device>();
};

/// The README's examples compile and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
