//! DLPack interchange: the C ABI ([`ffi`]), JAX's device rules (`device.rs`), export of arrays
//! as owned [`DLPackTensor`]s (with an automatic host-copy fallback for devices that cannot
//! export), and zero-copy import.

pub(crate) mod device;
mod export;
pub mod ffi;
pub(crate) mod import;
pub mod stream;
mod tensor;

pub use device::{dlpack_device_for, dlpack_device_of};
pub use export::ExportOptions;
pub use import::{consumer_stream, wait_for_producer};
pub use stream::{ExportSync, StreamArg, StreamConvention};
pub use tensor::{DLPackTensor, RawDLPack};

use std::sync::atomic::{AtomicU8, Ordering};

/// What an export does when the array's device cannot be exported as DLPack (wgpu, OpenCL,
/// TPU device memory, a sharded array).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DlpackPolicy {
    /// Copy to host memory and export that (`kDLCPU`, IS_COPIED); the reason is kept on the
    /// tensor (`fallback_reason()`) and logged at debug level.
    #[default]
    HostFallback,
    /// Return the `BufferError` (JAX's behaviour).
    Strict,
}

static POLICY: AtomicU8 = AtomicU8::new(0);

/// Sets the process-wide default policy (per-call `ExportOptions::policy` overrides it).
pub fn set_dlpack_policy(policy: DlpackPolicy) {
    POLICY.store(policy as u8, Ordering::Relaxed);
}

/// The process-wide default policy.
pub fn dlpack_policy() -> DlpackPolicy {
    match POLICY.load(Ordering::Relaxed) {
        1 => DlpackPolicy::Strict,
        _ => DlpackPolicy::HostFallback,
    }
}
