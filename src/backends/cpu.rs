//! The CPU backend: `DLARRAY_CPU_DEVICES` devices (default 1) over host RAM.
//!
//! The machine's cores are divided between the devices (`DLARRAY_CPU_THREADS` per device
//! overrides), as XLA's host platform does with several CPU devices: shards on different
//! devices then run side by side instead of fighting over one pool.

use super::host::{HostBackend, HostConfig};
use super::{Backend, DlpackCapability, MemoryKind};
use crate::dlpack::ffi::DLDeviceType;
use std::sync::Arc;

/// Reads a positive count from `var`, or `default` when unset.
pub(crate) fn env_count(var: &str, default: usize) -> Result<usize, String> {
    match std::env::var(var) {
        Err(_) => Ok(default),
        Ok(v) => match v.trim().parse::<usize>() {
            Ok(n) if (1..=1024).contains(&n) => Ok(n),
            _ => Err(format!("{var}={v:?} is not a count between 1 and 1024")),
        },
    }
}

/// Threads for each of `devices` devices sharing this machine's cores.
pub(crate) fn threads_per_device(devices: usize) -> Result<usize, String> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    env_count("DLARRAY_CPU_THREADS", (cores / devices).max(1))
}

/// Bytes of freed buffers each device keeps for reuse (`DLARRAY_POOL_BYTES`, default 1 GiB
/// or an eighth of RAM, whichever is smaller).
pub(crate) fn pool_bytes() -> usize {
    std::env::var("DLARRAY_POOL_BYTES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| ((super::host::physical_memory() / 8) as usize).min(1 << 30))
}

pub(crate) fn discover() -> Result<Arc<dyn Backend>, String> {
    let devices = env_count("DLARRAY_CPU_DEVICES", 1)?;
    let backend = HostBackend::new(HostConfig {
        name: "cpu",
        platform: "cpu",
        platform_version: format!("cpu {}", std::env::consts::ARCH),
        device_count: devices,
        memory_kinds: vec![MemoryKind::Device],
        threads_per_device: threads_per_device(devices)?,
        pool_bytes: pool_bytes(),
        dlpack: vec![(
            MemoryKind::Device,
            DlpackCapability::host(DLDeviceType::kDLCPU),
        )],
    })?;
    Ok(Arc::new(backend))
}
