//! [`WgpuBuffer`]: a storage buffer on one adapter. wgpu exposes no address for it (its
//! `Address` is `Opaque`), which is what makes DLPack export fall back to a host copy.

use super::context::Ctx;
use super::serial::SerialLock;
use crate::backends::{DeviceBuffer, MemoryKind};
use crate::error::Result;
use std::any::Any;
use std::mem::ManuallyDrop;
use std::sync::Arc;

/// Usage every array buffer has: kernels read and write it, copies go both ways.
pub(crate) const USAGE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
    .union(wgpu::BufferUsages::COPY_SRC)
    .union(wgpu::BufferUsages::COPY_DST);

#[derive(Debug)]
pub(crate) struct WgpuBuffer {
    pub device: usize,
    /// Dropped by hand, under the device's serial lock (see `Drop`).
    pub raw: ManuallyDrop<wgpu::Buffer>,
    /// Bytes of data (the allocation is rounded up to a multiple of 4).
    pub len: usize,
    /// The GL device's lock: a buffer may be dropped on any thread, and destroying it
    /// touches the GL context.
    serial: Option<Arc<SerialLock>>,
}

impl WgpuBuffer {
    pub fn alloc(ctx: &Ctx, device: usize, len: usize) -> Result<WgpuBuffer> {
        Ok(WgpuBuffer {
            device,
            raw: ManuallyDrop::new(ctx.create_buffer(len as u64, USAGE)?),
            len,
            serial: ctx.serial.clone(),
        })
    }

    /// A buffer holding `bytes`, written through the queue (ordered before later kernels).
    pub fn upload(ctx: &Ctx, device: usize, bytes: &[u8]) -> Result<WgpuBuffer> {
        let buf = WgpuBuffer::alloc(ctx, device, bytes.len())?;
        let whole = bytes.len() / 4 * 4;
        if whole > 0 {
            ctx.queue.write_buffer(&buf.raw, 0, &bytes[..whole]);
        }
        if whole < bytes.len() {
            // The queue writes whole words: pad the tail.
            let mut tail = [0u8; 4];
            tail[..bytes.len() - whole].copy_from_slice(&bytes[whole..]);
            ctx.queue.write_buffer(&buf.raw, whole as u64, &tail);
        }
        ctx.check()?;
        Ok(buf)
    }
}

impl Drop for WgpuBuffer {
    fn drop(&mut self) {
        // wgpu defers the destruction to its device; a panic inside it must not cross a
        // drop (a second panic aborts).
        let _g = self.serial.as_deref().map(SerialLock::lock);
        let raw = &mut self.raw;
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            // SAFETY: dropped exactly once, here; `raw` is not used afterwards.
            unsafe { ManuallyDrop::drop(raw) }
        }));
    }
}

impl DeviceBuffer for WgpuBuffer {
    fn device_index(&self) -> usize {
        self.device
    }
    fn memory_kind(&self) -> MemoryKind {
        MemoryKind::Device
    }
    fn len_bytes(&self) -> usize {
        self.len
    }
    fn alignment(&self) -> usize {
        // Buffers start on the device's own allocation boundary; WebGPU guarantees offsets
        // of 256 bytes are valid everywhere.
        256
    }
    fn address(&self) -> crate::backends::Address {
        crate::backends::Address::Opaque
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
