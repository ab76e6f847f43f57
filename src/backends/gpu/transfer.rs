//! Moving bytes: uploads through pinned staging, downloads on the copy stream, and copies
//! between memory kinds and devices, ordered by events.

use super::buffer::{GpuBuffer, Memory, PinnedReturn};
use super::device::DeviceState;
use super::driver::Driver;
use super::memory::{HostPtr, device_alloc, size_class, too_large};
use crate::backends::MemoryKind;
use crate::error::{Error, Result};
use std::sync::Arc;

/// Downloads are staged in pieces of this size, so a large array needs no pinned block of
/// its own size.
const STAGING_PIECE: usize = 64 << 20;

fn refuse_kind(dev: &DeviceState<impl Driver>, kind: MemoryKind) -> Error {
    Error::invalid(format!(
        "{} has memory kinds `device` and `pinned_host`, not `{kind}`",
        dev.name
    ))
}

/// New, unwritten memory of `kind` on `dev`.
pub(crate) fn alloc<D: Driver>(
    dev: &DeviceState<D>,
    kind: MemoryKind,
    bytes: usize,
) -> Result<Memory> {
    match kind {
        MemoryKind::Device => {
            let class = size_class(bytes).ok_or_else(|| dev.fail(too_large(bytes), bytes))?;
            let ptr = device_alloc(&*dev.driver, &dev.pool, dev.index, dev.stream, class)
                .map_err(|e| dev.fail(e, bytes))?;
            Ok(Memory::Device { ptr, class })
        }
        MemoryKind::PinnedHost => {
            let (ptr, class) = dev.pinned_alloc(bytes)?;
            Ok(Memory::Pinned { ptr, class })
        }
        other => Err(refuse_kind(dev, other)),
    }
}

/// Gives a pinned staging block back once the compute stream has passed what was queued.
fn release_staging<D: Driver>(dev: &DeviceState<D>, ptr: HostPtr, class: usize) {
    dev.defer(Box::new(PinnedReturn {
        pool: Some(dev.pinned.clone()),
        ptr,
        class,
    }));
}

/// A buffer of `len` bytes that `write` fills: in place for pinned memory; for device
/// memory through a pinned staging block, copied asynchronously.
///
/// # Safety
/// `write` must write every byte of the slice it gets and read none before writing it.
pub(crate) unsafe fn upload_with<D: Driver>(
    dev: &Arc<DeviceState<D>>,
    kind: MemoryKind,
    len: usize,
    write: &mut dyn FnMut(&mut [u8]) -> Result<()>,
) -> Result<GpuBuffer<D>> {
    let (staging, class) = dev.pinned_alloc(len)?;
    // SAFETY: the block holds at least `len` bytes and nothing else uses it; `write`
    // initialises all of them before anyone reads.
    let slice = unsafe { std::slice::from_raw_parts_mut(staging.0.as_ptr(), len) };
    if let Err(e) = write(slice) {
        dev.pinned.free(staging, class);
        return Err(e);
    }
    match kind {
        MemoryKind::PinnedHost => Ok(GpuBuffer::new(
            dev.clone(),
            Memory::Pinned {
                ptr: staging,
                class,
            },
            len,
            kind,
            None,
        )),
        MemoryKind::Device => {
            let mem = match alloc(dev, kind, len) {
                Ok(m) => m,
                Err(e) => {
                    dev.pinned.free(staging, class);
                    return Err(e);
                }
            };
            let dst = mem.unified();
            let buffer = GpuBuffer::new(dev.clone(), mem, len, kind, None);
            if len > 0 {
                // SAFETY: both ranges hold `len` bytes; the staging block stays alive until
                // the deferred queue sees the copy's event pass; `buffer` owns the target.
                let r = unsafe {
                    dev.driver
                        .memcpy(dev.index, dev.stream, dst, staging.0.as_ptr() as u64, len)
                };
                release_staging(dev, staging, class);
                dev.ok(r)?;
            } else {
                dev.pinned.free(staging, class);
            }
            finish(buffer)
        }
        other => {
            dev.pinned.free(staging, class);
            Err(refuse_kind(dev, other))
        }
    }
}

/// Records the event after the work writing `buffer` and returns it.
pub(crate) fn finish<D: Driver>(mut buffer: GpuBuffer<D>) -> Result<GpuBuffer<D>> {
    buffer.ready = Some(buffer.dev.record()?);
    buffer.dev.pump(false);
    Ok(buffer)
}

/// Copies `dst.len()` bytes from byte `start` of `src` to `dst`, waiting for the work that
/// wrote `src` only.
pub(crate) fn download<D: Driver>(src: &GpuBuffer<D>, start: usize, dst: &mut [u8]) -> Result<()> {
    let dev = &src.dev;
    let d = &*dev.driver;
    if start
        .checked_add(dst.len())
        .is_none_or(|end| end > src_len(src))
    {
        return Err(Error::invalid(format!(
            "download of {} bytes from byte {start} overruns a buffer of {} bytes",
            dst.len(),
            src_len(src)
        )));
    }
    if dst.is_empty() {
        return Ok(());
    }
    if let Some(ev) = src.ready {
        // Host-addressable memory is read by the host once its writer has finished; device
        // memory is copied on the copy stream after it.
        if src.host_ptr().is_some() {
            dev.ok(d.event_synchronize(dev.index, ev))?;
        } else {
            dev.ok(d.stream_wait_event(dev.index, dev.copy_stream, ev))?;
        }
    }
    if let Some(p) = src.host_ptr() {
        // SAFETY: the range lies inside the buffer (checked above), its writer has finished,
        // and `dst` is a distinct, writable slice.
        unsafe {
            std::ptr::copy_nonoverlapping(p.as_ptr().add(start), dst.as_mut_ptr(), dst.len())
        };
        return Ok(());
    }
    let piece = dst.len().min(STAGING_PIECE);
    let (staging, class) = dev.pinned_alloc(piece)?;
    let result = (|| {
        for (i, chunk) in dst.chunks_mut(piece).enumerate() {
            let from = src.unified() + (start + i * piece) as u64;
            // SAFETY: the source range is inside the buffer, which outlives this call; the
            // staging block holds `piece >= chunk.len()` bytes and is ours until freed below,
            // after the copy's event has passed.
            dev.ok(unsafe {
                d.memcpy(
                    dev.index,
                    dev.copy_stream,
                    staging.0.as_ptr() as u64,
                    from,
                    chunk.len(),
                )
            })?;
            let ev = dev.ok(d.event_record(dev.index, dev.copy_stream))?;
            let waited = d.event_synchronize(dev.index, ev);
            d.event_destroy(dev.index, ev);
            dev.ok(waited)?;
            // SAFETY: the copy into the staging block has finished.
            unsafe {
                std::ptr::copy_nonoverlapping(staging.0.as_ptr(), chunk.as_mut_ptr(), chunk.len())
            };
        }
        Ok(())
    })();
    if result.is_ok() {
        dev.pinned.free(staging, class);
    } else {
        // A failed copy may still be queued: release the block after the copy stream.
        dev.defer(Box::new(PinnedReturn {
            pool: Some(dev.pinned.clone()),
            ptr: staging,
            class,
        }));
    }
    result
}

fn src_len<D: Driver>(b: &GpuBuffer<D>) -> usize {
    crate::backends::DeviceBuffer::len_bytes(b)
}

/// A contiguous copy of bytes `start..start + bytes` of `src` into new memory of `kind` on
/// `target` (any device of the same backend).
pub(crate) fn copy<D: Driver>(
    src: &GpuBuffer<D>,
    start: usize,
    bytes: usize,
    target: &Arc<DeviceState<D>>,
    kind: MemoryKind,
) -> Result<GpuBuffer<D>> {
    let s = &src.dev;
    let d = &*s.driver;
    let mem = alloc(target, kind, bytes)?;
    let dst = mem.unified();
    let buffer = GpuBuffer::new(target.clone(), mem, bytes, kind, None);
    if bytes == 0 {
        return Ok(buffer);
    }
    let cross = !Arc::ptr_eq(s, target);
    if cross && kind == MemoryKind::Device {
        // The target's allocation is ordered on its own stream: the copy waits for it.
        let allocated = target.record()?;
        let r = d.stream_wait_event(s.index, s.stream, allocated);
        d.event_destroy(target.index, allocated);
        s.ok(r)?;
    }
    // Pinned sources written by the host, and buffers made by other devices' copies, are
    // ordered already; the copy runs on the source's stream after its writer.
    // SAFETY: the source range lies inside `src`, which the caller keeps alive until the
    // copy's event (ours below) has passed or the stream frees it in order; the target
    // holds `bytes`.
    s.ok(unsafe { d.memcpy(s.index, s.stream, dst, src.unified() + start as u64, bytes) })?;
    let done = s.record()?;
    let mut buffer = buffer;
    if cross {
        // The target's later work waits for the copy.
        let r = d.stream_wait_event(target.index, target.stream, done);
        if let Err(e) = r {
            d.event_destroy(s.index, done);
            return Err(target.fail(e, 0));
        }
    }
    buffer.ready = Some(done);
    s.pump(false);
    Ok(buffer)
}
