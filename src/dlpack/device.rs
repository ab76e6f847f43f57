//! Where an array lives in DLPack terms: JAX's `__dlpack_device__` rules, in one flat
//! function.

use super::ffi::{DLDevice, DLDeviceType};
use crate::backends::{Device, MemoryKind};
use crate::error::BufferError;

/// The DLPack device of data on `shards` devices of `platform` / `platform_version`, in
/// memory `kind`, on hardware `hardware_id`; or JAX's exact `BufferError`.
pub fn dlpack_device_for(
    shards: usize,
    platform: &str,
    platform_version: &str,
    kind: MemoryKind,
    hardware_id: Option<i32>,
) -> Result<DLDevice, BufferError> {
    if shards != 1 {
        return Err(BufferError::Sharded);
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

/// The DLPack device of memory `kind` on `device` (a single shard).
pub fn dlpack_device_of(device: &Device, kind: MemoryKind) -> Result<DLDevice, BufferError> {
    dlpack_device_for(
        1,
        device.platform(),
        device.platform_version(),
        kind,
        device.local_hardware_id(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use MemoryKind::*;

    #[test]
    fn every_branch() {
        let d = |t: DLDeviceType, id| Ok(DLDevice::new(t, id));
        assert_eq!(
            dlpack_device_for(1, "cpu", "cpu", Device, Some(3)),
            Ok(DLDevice::CPU)
        );
        assert_eq!(
            dlpack_device_for(2, "cpu", "cpu", Device, Some(0)),
            Err(BufferError::Sharded)
        );
        assert_eq!(
            dlpack_device_for(1, "gpu", "cuda 12.8", Device, Some(1)),
            d(DLDeviceType::kDLCUDA, 1)
        );
        assert_eq!(
            dlpack_device_for(1, "gpu", "CUDA", PinnedHost, Some(0)),
            d(DLDeviceType::kDLCUDAHost, 0)
        );
        assert_eq!(
            dlpack_device_for(1, "gpu", "rocm 6", Device, Some(2)),
            d(DLDeviceType::kDLROCM, 2)
        );
        assert_eq!(
            dlpack_device_for(1, "gpu", "rocm 6", PinnedHost, Some(2)),
            d(DLDeviceType::kDLROCMHost, 2)
        );
        assert_eq!(
            dlpack_device_for(1, "gpu", "oneapi level-zero", Device, Some(0)),
            d(DLDeviceType::kDLOneAPI, 0)
        );
        assert_eq!(
            dlpack_device_for(1, "gpu", "acme 1", Device, Some(0))
                .unwrap_err()
                .to_string(),
            "Unknown GPU platform for __dlpack__: acme 1"
        );
        assert_eq!(
            dlpack_device_for(1, "gpu", "cuda", Device, None),
            Err(BufferError::NoHardwareId)
        );
        assert_eq!(
            dlpack_device_for(1, "tpu", "tpu", PinnedHost, Some(3)),
            d(DLDeviceType::kDLTPUHost, 3)
        );
        assert_eq!(
            dlpack_device_for(1, "tpu", "tpu", PinnedHost, None),
            Err(BufferError::NoHardwareId)
        );
        assert_eq!(
            dlpack_device_for(1, "tpu", "tpu", Device, Some(0)),
            Err(BufferError::TpuDeviceMemory)
        );
        assert_eq!(
            dlpack_device_for(1, "wgpu", "wgpu 30 vulkan", Device, Some(0))
                .unwrap_err()
                .to_string(),
            "__dlpack__ device only supported for CPU, GPU and TPU pinned host, got platform: wgpu"
        );
    }
}
