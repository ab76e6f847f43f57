//! [`DlpackCapability`]: what a backend declares about DLPack for one memory kind.

use crate::dlpack::ffi::DLDeviceType;
use crate::dlpack::stream::StreamConvention;

/// A backend's DLPack declaration for one memory kind of one device (see
/// [`Backend::dlpack_capability`](super::Backend::dlpack_capability)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DlpackCapability {
    /// The DLPack device type this memory exports as, or `None`: it cannot be exported, and
    /// JAX's platform rules give the `BufferError` (the export falls back to a host copy).
    pub device_type: Option<DLDeviceType>,
    /// How the runtime numbers streams for the `stream` argument.
    pub streams: StreamConvention,
}

impl DlpackCapability {
    /// Host memory the host reads directly: exported as `device_type`, no streams.
    pub const fn host(device_type: DLDeviceType) -> DlpackCapability {
        DlpackCapability {
            device_type: Some(device_type),
            streams: StreamConvention::None,
        }
    }
    /// Memory that cannot be exported in place.
    pub const NONE: DlpackCapability = DlpackCapability {
        device_type: None,
        streams: StreamConvention::None,
    };
}
