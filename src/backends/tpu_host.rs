//! TPU-host emulation: platform `tpu`, `DLARRAY_TPU_DEVICES` devices (default 4), each with
//! `device` (standing in for HBM) and `pinned_host` memory held in separate allocation pools.
//!
//! Kernels run on host memory, but everything above the backend sees a TPU: platform `tpu`,
//! a memory kind per buffer, and moves between kinds as explicit copies (as `device_put` to
//! another memory kind is in JAX). That is what the DLPack layer's TPU rules are tested on.

use super::cpu::{env_count, pool_bytes, threads_per_device};
use super::host::{HostBackend, HostConfig};
use super::{Backend, DlpackCapability, MemoryKind};
use crate::dlpack::ffi::DLDeviceType;
use std::sync::Arc;

pub(crate) fn discover() -> Result<Arc<dyn Backend>, String> {
    let devices = env_count("DLARRAY_TPU_DEVICES", 4)?;
    let backend = HostBackend::new(HostConfig {
        name: "tpu",
        platform: "tpu",
        platform_version: "tpu host emulation (dlarray)".to_string(),
        device_count: devices,
        memory_kinds: vec![MemoryKind::Device, MemoryKind::PinnedHost],
        threads_per_device: threads_per_device(devices)?,
        pool_bytes: pool_bytes() / 2,
        // JAX's rule: only pinned host memory exports (as kDLTPUHost); device memory is HBM.
        dlpack: vec![
            (MemoryKind::Device, DlpackCapability::NONE),
            (
                MemoryKind::PinnedHost,
                DlpackCapability::host(DLDeviceType::kDLTPUHost),
            ),
        ],
    })?;
    Ok(Arc::new(backend))
}
