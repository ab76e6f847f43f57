//! Where an array lives in DLPack terms: JAX's `__dlpack_device__` rules, in one flat
//! function.

use super::ffi::{DLDevice, DLDeviceType};
use super::stream::StreamConvention;
use crate::backends::{Device, DlpackCapability, MemoryKind};
use crate::error::BufferError;

/// The DLPack device of data on `shards` devices of `platform` / `platform_version`, in
/// memory `kind`, on hardware `hardware_id`, given the backend's `declared` capability for
/// that memory; or JAX's exact `BufferError`.
///
/// JAX's order: sharded; then a declared device type (the backend's word wins); then the
/// platform rules (`cpu`; `gpu` by the runtime its version names; `tpu` pinned host or
/// device memory; anything else). A backend that declares no device type for this memory
/// gets the platform rule's error, with JAX's message.
pub fn dlpack_device_for(
    shards: usize,
    platform: &str,
    platform_version: &str,
    declared: Option<DlpackCapability>,
    kind: MemoryKind,
    hardware_id: Option<i32>,
) -> Result<DLDevice, BufferError> {
    if shards != 1 {
        return Err(BufferError::Sharded);
    }
    match declared.map(|c| c.device_type) {
        Some(Some(DLDeviceType::kDLCPU)) => return Ok(DLDevice::CPU),
        Some(Some(t)) => {
            return Ok(DLDevice::new(
                t,
                hardware_id.ok_or(BufferError::NoHardwareId)?,
            ));
        }
        // Declared unexportable where the platform rule would export: say so.
        Some(None) if platform == "cpu" || (platform == "gpu" && kind != MemoryKind::Device) => {
            return Err(BufferError::Other(format!(
                "__dlpack__ is not supported for {kind} memory of this {platform} backend"
            )));
        }
        _ => {}
    }
    let pinned = kind == MemoryKind::PinnedHost;
    let device_type = match platform {
        // CPU memory is one address space: device id 0, whatever the device's index.
        "cpu" => return Ok(DLDevice::CPU),
        "gpu" => {
            let names = |runtime: &str| contains_ignore_case(platform_version, runtime);
            if names("cuda") {
                if pinned {
                    DLDeviceType::kDLCUDAHost
                } else {
                    DLDeviceType::kDLCUDA
                }
            } else if names("rocm") {
                if pinned {
                    DLDeviceType::kDLROCMHost
                } else {
                    DLDeviceType::kDLROCM
                }
            } else if names("oneapi") {
                DLDeviceType::kDLOneAPI
            } else {
                return Err(BufferError::UnknownGpuPlatform(
                    platform_version.to_string(),
                ));
            }
        }
        "tpu" if pinned => DLDeviceType::kDLTPUHost,
        "tpu" => return Err(BufferError::TpuDeviceMemory),
        other => return Err(BufferError::UnsupportedPlatform(other.to_string())),
    };
    let id = hardware_id.ok_or(BufferError::NoHardwareId)?;
    Ok(DLDevice::new(device_type, id))
}

fn contains_ignore_case(haystack: &str, needle: &str) -> bool {
    haystack
        .as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

/// The DLPack device of memory `kind` on `device` (a single shard): the device's table,
/// made by [`dlpack_device_for`] when the device was registered.
#[inline]
pub fn dlpack_device_of(device: &Device, kind: MemoryKind) -> Result<DLDevice, BufferError> {
    device.dlpack_device(kind)
}

/// How a runtime numbers streams: the backend's declaration for the memory, else the
/// runtime its platform version names (as the device rule above reads it).
pub fn stream_convention_for(
    platform: &str,
    platform_version: &str,
    declared: Option<DlpackCapability>,
) -> StreamConvention {
    if let Some(c) = declared {
        return c.streams;
    }
    match platform {
        "gpu" if contains_ignore_case(platform_version, "cuda") => StreamConvention::Cuda,
        "gpu" if contains_ignore_case(platform_version, "rocm") => StreamConvention::Rocm,
        _ => StreamConvention::None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use MemoryKind::*;

    #[test]
    fn every_branch() {
        let d = |t: DLDeviceType, id| Ok(DLDevice::new(t, id));
        assert_eq!(
            dlpack_device_for(1, "cpu", "cpu", None, Device, Some(3)),
            Ok(DLDevice::CPU)
        );
        assert_eq!(
            dlpack_device_for(2, "cpu", "cpu", None, Device, Some(0)),
            Err(BufferError::Sharded)
        );
        assert_eq!(
            dlpack_device_for(1, "gpu", "cuda 12.8", None, Device, Some(1)),
            d(DLDeviceType::kDLCUDA, 1)
        );
        assert_eq!(
            dlpack_device_for(1, "gpu", "CUDA", None, PinnedHost, Some(0)),
            d(DLDeviceType::kDLCUDAHost, 0)
        );
        assert_eq!(
            dlpack_device_for(1, "gpu", "rocm 6", None, Device, Some(2)),
            d(DLDeviceType::kDLROCM, 2)
        );
        assert_eq!(
            dlpack_device_for(1, "gpu", "rocm 6", None, PinnedHost, Some(2)),
            d(DLDeviceType::kDLROCMHost, 2)
        );
        assert_eq!(
            dlpack_device_for(1, "gpu", "oneapi level-zero", None, Device, Some(0)),
            d(DLDeviceType::kDLOneAPI, 0)
        );
        assert_eq!(
            dlpack_device_for(1, "gpu", "acme 1", None, Device, Some(0))
                .unwrap_err()
                .to_string(),
            "Unknown GPU platform for __dlpack__: acme 1"
        );
        assert_eq!(
            dlpack_device_for(1, "gpu", "cuda", None, Device, None),
            Err(BufferError::NoHardwareId)
        );
        assert_eq!(
            dlpack_device_for(1, "tpu", "tpu", None, PinnedHost, Some(3)),
            d(DLDeviceType::kDLTPUHost, 3)
        );
        assert_eq!(
            dlpack_device_for(1, "tpu", "tpu", None, PinnedHost, None),
            Err(BufferError::NoHardwareId)
        );
        assert_eq!(
            dlpack_device_for(1, "tpu", "tpu", None, Device, Some(0)),
            Err(BufferError::TpuDeviceMemory)
        );
        assert_eq!(
            dlpack_device_for(1, "wgpu", "wgpu 30 vulkan", None, Device, Some(0))
                .unwrap_err()
                .to_string(),
            "__dlpack__ device only supported for CPU, GPU and TPU pinned host, got platform: wgpu"
        );
    }

    #[test]
    fn a_declaration_wins_over_the_platform_strings() {
        let cap = |t| Some(DlpackCapability::host(t));
        // A user backend on platform "accel" that declares kDLCUDA memory.
        let cuda = Some(DlpackCapability {
            device_type: Some(DLDeviceType::kDLCUDA),
            streams: StreamConvention::Cuda,
        });
        assert_eq!(
            dlpack_device_for(1, "accel", "acme 2", cuda, Device, Some(3)),
            Ok(DLDevice::new(DLDeviceType::kDLCUDA, 3))
        );
        assert_eq!(
            dlpack_device_for(1, "accel", "acme 2", cuda, Device, None),
            Err(BufferError::NoHardwareId)
        );
        assert_eq!(
            dlpack_device_for(2, "accel", "acme 2", cuda, Device, Some(3)),
            Err(BufferError::Sharded)
        );
        assert_eq!(
            dlpack_device_for(1, "tpu", "tpu", cap(DLDeviceType::kDLCPU), Device, Some(7)),
            Ok(DLDevice::CPU)
        );
        // Declared unexportable: JAX's message where JAX has one ...
        assert_eq!(
            dlpack_device_for(
                1,
                "tpu",
                "tpu",
                Some(DlpackCapability::NONE),
                Device,
                Some(0)
            ),
            Err(BufferError::TpuDeviceMemory)
        );
        // ... and a plain one where the platform rule would have exported it.
        let e = dlpack_device_for(1, "cpu", "cpu", Some(DlpackCapability::NONE), Device, None);
        assert!(matches!(e, Err(BufferError::Other(_))), "{e:?}");
    }
}
