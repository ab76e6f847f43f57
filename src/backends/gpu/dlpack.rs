//! The GPU backend's side of DLPack: its declaration, the export handshake (the consumer's
//! stream waits for our event), the import handshake (our stream waits for the producer's),
//! and foreign memory wrapped in place.

use super::buffer::{GpuBuffer, Memory};
use super::device::DeviceState;
use super::driver::{Driver, DriverDlpack, StreamHandle};
use crate::backends::{Address, DlpackCapability, MemoryKind, Owner};
use crate::dlpack::stream::{ExportSync, StreamConvention};
use crate::error::{Error, Result};
use std::sync::Arc;

/// Device memory exports as the runtime's device type with its stream numbering; pinned
/// memory as its host type (the host reads it; no streams, NumPy's rule).
pub(crate) fn capability(dl: DriverDlpack, kind: MemoryKind) -> Option<DlpackCapability> {
    match kind {
        MemoryKind::Device => Some(DlpackCapability {
            device_type: Some(dl.device),
            streams: dl.streams,
        }),
        MemoryKind::PinnedHost => Some(
            dl.pinned_host
                .map_or(DlpackCapability::NONE, DlpackCapability::host),
        ),
        MemoryKind::UnpinnedHost => None,
    }
}

/// The runtime's handle for a stream the consumer named. CUDA: the legacy default stream is
/// handle 1 (`CU_STREAM_LEGACY`), the per-thread one 2 (`CU_STREAM_PER_THREAD`); ROCm's
/// default stream is the null handle.
fn consumer_stream(convention: StreamConvention, sync: ExportSync) -> Option<StreamHandle> {
    match (convention, sync) {
        (_, ExportSync::Stream(s)) => Some(StreamHandle(s as u64)),
        (StreamConvention::Cuda, ExportSync::LegacyDefault) => Some(StreamHandle(1)),
        (StreamConvention::Cuda, ExportSync::PerThreadDefault) => Some(StreamHandle(2)),
        (StreamConvention::Rocm, ExportSync::Default) => Some(StreamHandle(0)),
        _ => None,
    }
}

/// Before an in-place export of `b`: what `sync` asks, without blocking unless it says
/// `Wait` (or names no stream this runtime has).
pub(crate) fn export_sync<D: Driver>(
    b: &GpuBuffer<D>,
    convention: StreamConvention,
    sync: ExportSync,
) -> Result<()> {
    let dev = &b.dev;
    dev.check()?;
    let Some(ev) = b.ready else {
        return Ok(());
    };
    match sync {
        ExportSync::Skip => Ok(()),
        ExportSync::Wait => dev.ok(dev.driver.event_synchronize(dev.index, ev)),
        other => match consumer_stream(convention, other) {
            Some(s) => dev.ok(dev.driver.stream_wait_event(dev.index, s, ev)),
            None => dev.ok(dev.driver.event_synchronize(dev.index, ev)),
        },
    }
}

/// After importing memory the producer wrote on `producer` (its default stream when
/// `None`): our compute stream waits for it, without blocking the host.
pub(crate) fn wait_for_producer<D: Driver>(
    dev: &DeviceState<D>,
    convention: StreamConvention,
    producer: Option<usize>,
) -> Result<()> {
    let stream = match producer {
        Some(s) => StreamHandle(s as u64),
        // The producer's default stream: what `stream=None` names in its runtime.
        None => {
            let default = match convention {
                StreamConvention::Rocm => ExportSync::Default,
                _ => ExportSync::LegacyDefault,
            };
            consumer_stream(convention, default).unwrap_or(StreamHandle(0))
        }
    };
    let d = &*dev.driver;
    let ev = dev.ok(d.event_record(dev.index, stream))?;
    let r = d.stream_wait_event(dev.index, dev.stream, ev);
    d.event_destroy(dev.index, ev);
    dev.ok(r)
}

/// A buffer over a producer's memory: device memory of this device, or pinned host memory.
pub(crate) fn wrap_foreign<D: Driver>(
    dev: &Arc<DeviceState<D>>,
    kind: MemoryKind,
    address: Address,
    len: usize,
    owner: Owner,
) -> Result<GpuBuffer<D>> {
    match (kind, address) {
        (MemoryKind::Device, Address::Device(ptr)) => match dev.driver.device_of_pointer(ptr) {
            Some(i) if i == dev.index => {}
            Some(i) => {
                return Err(Error::InvalidDlpack(format!(
                    "device pointer {ptr:#x} belongs to {}:{i}, not {}",
                    dev.backend(),
                    dev.name
                )));
            }
            None => {
                return Err(Error::InvalidDlpack(format!(
                    "{ptr:#x} is not device memory {} knows",
                    dev.backend()
                )));
            }
        },
        (MemoryKind::PinnedHost, Address::Host(_)) => {}
        _ => {
            return Err(Error::Backend {
                backend: dev.backend().to_string(),
                message: format!(
                    "cannot wrap foreign memory at {address:?} as `{kind}` memory of {}",
                    dev.name
                ),
            });
        }
    }
    Ok(GpuBuffer::new(
        dev.clone(),
        Memory::Foreign {
            address,
            owner: Some(owner),
        },
        len,
        kind,
        None,
    ))
}
