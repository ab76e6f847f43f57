//! Moving bytes: uploads through pinned staging, downloads on the copy stream, and copies
//! between memory kinds and devices, ordered by events.

use super::buffer::{GpuBuffer, Memory, PinnedReturn};
use super::device::DeviceState;
use super::driver::Driver;
use super::memory::{HostPtr, device_alloc, size_class, too_large};
use crate::backends::MemoryKind;
use crate::error::{Error, Result};
use std::sync::Arc;

/// Host memory that is not pinned moves in pieces of this size (by default) through two
/// pinned blocks taking turns: the host copies one piece while the device copies the other,
/// and a large array needs no pinned block of its own size (pinning costs ~10x the copy, and
/// a 4 GiB upload would have pinned 4 GiB on every call: more than the cache keeps).
pub(crate) const STAGING_PIECE: usize = 16 << 20;

/// Uploads of up to this many pieces (64 MiB by default) stage through one pinned block of
/// their size, which the writer fills directly (one copy, and the block comes back to the
/// cache); larger ones go in pieces.
const WHOLE_STAGING_PIECES: usize = 4;

/// Whether an upload of `len` bytes of `kind` to `dev` goes in pieces.
fn in_pieces<D: Driver>(dev: &DeviceState<D>, kind: MemoryKind, len: usize) -> bool {
    kind == MemoryKind::Device && len > dev.staging_piece.saturating_mul(WHOLE_STAGING_PIECES)
}

/// A pinned staging block and the event after the last copy that used it.
struct Staging {
    ptr: HostPtr,
    class: usize,
    used: Option<super::driver::EventHandle>,
}

impl Staging {
    fn new<D: Driver>(dev: &DeviceState<D>, bytes: usize) -> Result<Staging> {
        let (ptr, class) = dev.pinned_alloc(bytes)?;
        Ok(Staging {
            ptr,
            class,
            used: None,
        })
    }

    /// Waits until the last copy using the block has run.
    fn wait<D: Driver>(&mut self, dev: &DeviceState<D>) -> Result<()> {
        match self.used.take() {
            Some(ev) => {
                let r = dev.driver.event_synchronize(dev.index, ev);
                dev.driver.event_destroy(dev.index, ev);
                dev.ok(r)
            }
            None => Ok(()),
        }
    }

    /// Records that a copy queued on `stream` uses the block.
    fn used_by<D: Driver>(
        &mut self,
        dev: &DeviceState<D>,
        stream: super::driver::StreamHandle,
    ) -> Result<()> {
        self.used = Some(dev.ok(dev.driver.event_record(dev.index, stream))?);
        Ok(())
    }

    fn addr(&self) -> u64 {
        self.ptr.0.as_ptr() as u64
    }
}

/// The block piece `i` of a transfer uses: the two take turns, each pinned at its first use.
fn turn<'a, D: Driver>(
    dev: &DeviceState<D>,
    blocks: &'a mut Vec<Staging>,
    piece: usize,
    i: usize,
) -> Result<&'a mut Staging> {
    if blocks.len() <= i % 2 {
        blocks.push(Staging::new(dev, piece)?);
    }
    Ok(&mut blocks[i % 2])
}

/// The staging blocks of a transfer in pieces, given back when it ends: to the cache at
/// once where every copy using them has run, else after the compute stream passes (uploads
/// run there) or once the copy stream has (downloads: a failed one may have copies queued).
fn release_pieces<D: Driver>(dev: &DeviceState<D>, blocks: Vec<Staging>, on_copy_stream: bool) {
    for mut b in blocks {
        if on_copy_stream {
            // A lost device fails at once and reads nothing more: the block is free anyway.
            let _ = b.wait(dev);
            dev.pinned.free(b.ptr, b.class);
        } else {
            if let Some(ev) = b.used.take() {
                dev.driver.event_destroy(dev.index, ev);
            }
            release_staging(dev, b.ptr, b.class);
        }
    }
}

/// Copies host memory `src` (not pinned) to device address `dst` on the compute stream, in
/// pieces through two pinned blocks: the host fills one while the device reads the other.
fn upload_pieces<D: Driver>(dev: &DeviceState<D>, src: &[u8], dst: u64) -> Result<()> {
    // Callers send more than a piece (`in_pieces`); the size is at least 1 (`GpuBackend::new`).
    let piece = dev.staging_piece;
    let mut blocks: Vec<Staging> = Vec::with_capacity(2);
    let result = (|| {
        for (i, chunk) in src.chunks(piece).enumerate() {
            let b = turn(dev, &mut blocks, piece, i)?;
            b.wait(dev)?;
            // SAFETY: the block holds `piece >= chunk.len()` bytes, and the copy that read
            // it last has run (waited above): nothing else reads or writes it.
            unsafe { std::ptr::copy_nonoverlapping(chunk.as_ptr(), b.ptr.0.as_ptr(), chunk.len()) };
            // SAFETY: the target range lies inside the caller's allocation of `src.len()`
            // bytes; the block stays ours until its event has passed (`release_pieces`).
            dev.ok(unsafe {
                dev.driver.memcpy(
                    dev.index,
                    dev.stream,
                    dst + (i * piece) as u64,
                    b.addr(),
                    chunk.len(),
                )
            })?;
            b.used_by(dev, dev.stream)?;
        }
        Ok(())
    })();
    release_pieces(dev, blocks, false);
    result
}

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
    if in_pieces(dev, kind, len) {
        // Large: the writer fills host memory, which moves in pieces. One more host copy
        // than the whole-size pinned block, but pinning a block that size cost more than
        // copying it.
        let mut host = zeroed_host(len).ok_or_else(|| Error::OutOfMemory {
            device: "host".into(),
            bytes: len as u128,
            reason: format!("staging an upload to {}", dev.name),
        })?;
        write(&mut host)?;
        return upload(dev, kind, &host);
    }
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

/// `len` zero bytes from the allocator's zeroed memory (`calloc`: at this size fresh pages
/// the kernel zeroes as they are first written, not a pass of its own), or `None` when the
/// allocation fails.
fn zeroed_host(len: usize) -> Option<Vec<u8>> {
    if len == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u8>(len).ok()?;
    // SAFETY: the layout has a non-zero size.
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    // SAFETY: `p` is a fresh allocation of the global allocator with the layout of `len`
    // bytes (alignment 1), all initialised (zeroed): a Vec<u8> of length and capacity `len`
    // may own it.
    (!p.is_null()).then(|| unsafe { Vec::from_raw_parts(p, len, len) })
}

/// A new buffer of `kind` on `dev` holding `bytes` (host memory that is not pinned).
pub(crate) fn upload<D: Driver>(
    dev: &Arc<DeviceState<D>>,
    kind: MemoryKind,
    bytes: &[u8],
) -> Result<GpuBuffer<D>> {
    if in_pieces(dev, kind, bytes.len()) {
        let mem = alloc(dev, kind, bytes.len())?;
        let dst = mem.unified();
        // Dropped on an error: its memory goes back after the copies queued so far.
        let buffer = GpuBuffer::new(dev.clone(), mem, bytes.len(), kind, None);
        upload_pieces(dev, bytes, dst)?;
        return finish(buffer);
    }
    let mut write = |dst: &mut [u8]| {
        dst.copy_from_slice(bytes);
        Ok(())
    };
    // SAFETY: `write` writes every byte of `dst` and reads none.
    unsafe { upload_with(dev, kind, bytes.len(), &mut write) }
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
    // Pieces through two pinned blocks: the device copies piece i + 1 while the host
    // copies piece i out.
    let piece = dst.len().min(dev.staging_piece).max(1);
    let mut blocks: Vec<Staging> = Vec::with_capacity(2);
    let total = dst.len();
    let n = total.div_ceil(piece);
    let queue = |blocks: &mut Vec<Staging>, i: usize| -> Result<()> {
        let b = turn(dev, blocks, piece, i)?;
        let len = piece.min(total - i * piece);
        let from = src.unified() + (start + i * piece) as u64;
        // SAFETY: the source range is inside the buffer, which outlives this call; the
        // block holds `piece >= len` bytes, its previous piece was copied out (waited for
        // below before this piece was queued), and it is ours until `release_pieces`.
        dev.ok(unsafe { d.memcpy(dev.index, dev.copy_stream, b.addr(), from, len) })?;
        b.used_by(dev, dev.copy_stream)
    };
    let result = (|| {
        queue(&mut blocks, 0)?;
        for (i, chunk) in dst.chunks_mut(piece).enumerate() {
            if i + 1 < n {
                queue(&mut blocks, i + 1)?;
            }
            let b = &mut blocks[i % 2];
            b.wait(dev)?;
            // SAFETY: the copy into the block has finished; `chunk` is a distinct slice.
            unsafe {
                std::ptr::copy_nonoverlapping(b.ptr.0.as_ptr(), chunk.as_mut_ptr(), chunk.len())
            };
        }
        Ok(())
    })();
    release_pieces(dev, blocks, true);
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
