//! One wgpu adapter and, once first used, its device and queue: limits, compiled-pipeline
//! cache, error capture and the submit/readback primitives every kernel goes through.
//!
//! wgpu reports most failures through callbacks rather than return values (and panics on an
//! uncaptured error by default). Every call that can fail runs inside an error scope or is
//! followed by a check of the error the device's handler recorded, so a failure becomes an
//! `Error::Backend` naming the device instead of a panic.

use super::serial::SerialLock;
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Invocations per workgroup of the elementwise, copy and reduction kernels.
pub(crate) const WORKGROUP: u32 = 256;

/// One adapter: the device is created on first use, so discovery stays cheap.
pub(crate) struct Gpu {
    pub name: String,
    adapter: wgpu::Adapter,
    pub info: wgpu::AdapterInfo,
    /// GL adapters only: every call on the device holds it (see `serial.rs`).
    pub serial: Option<Arc<SerialLock>>,
    ctx: OnceLock<std::result::Result<Ctx, String>>,
}

/// A live device with its queue.
pub(crate) struct Ctx {
    pub name: String,
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub limits: wgpu::Limits,
    /// Bytes one storage binding may span (the adapter's limit, optionally lowered by
    /// `DLARRAY_WGPU_MAX_BINDING`, and kept below 2^31 so element offsets fit in i32).
    pub max_binding: u64,
    /// Whether kernels may read and write f16 (`SHADER_F16`).
    pub f16: bool,
    pipelines: Mutex<HashMap<String, wgpu::ComputePipeline>>,
    /// The first error the device reported outside an error scope, or its loss.
    failure: Arc<Mutex<Failure>>,
    /// The GL device's serial lock, for buffers to take when they drop.
    pub serial: Option<Arc<SerialLock>>,
}

/// What the device's callbacks recorded since the last check.
#[derive(Default)]
enum Failure {
    #[default]
    None,
    /// An asynchronous error: reported once, by the next check (`synchronize`'s contract).
    Error(String),
    /// The device is gone: every later call fails with `Error::DeviceLost`.
    Lost(String),
}

/// A buffer range bound to a kernel.
pub(crate) struct Bind<'a> {
    pub buffer: &'a wgpu::Buffer,
    pub offset: u64,
    pub size: u64,
}

impl<'a> Bind<'a> {
    pub fn whole(buffer: &'a wgpu::Buffer) -> Bind<'a> {
        Bind {
            buffer,
            offset: 0,
            size: buffer.size(),
        }
    }
}

/// One dispatch: a pipeline, its bindings (binding 0 is the parameter block) and a
/// workgroup count (spread over x and y when it exceeds one dimension's limit).
pub(crate) struct Dispatch<'a> {
    pub pipeline: wgpu::ComputePipeline,
    pub params: Vec<u32>,
    pub binds: Vec<Bind<'a>>,
    pub workgroups: [u32; 3],
}

impl Gpu {
    pub fn new(name: String, adapter: wgpu::Adapter) -> Gpu {
        let info = adapter.get_info();
        let serial = (info.backend == wgpu::Backend::Gl).then(Arc::default);
        Gpu {
            name,
            adapter,
            info,
            serial,
            ctx: OnceLock::new(),
        }
    }

    /// The device if it has been opened.
    pub fn opened(&self) -> Option<&Ctx> {
        self.ctx.get().and_then(|c| c.as_ref().ok())
    }

    /// The device, created on first call; the error says why it could not be.
    pub fn ctx(&self) -> Result<&Ctx> {
        self.ctx
            .get_or_init(|| Ctx::open(&self.name, &self.adapter, self.serial.clone()))
            .as_ref()
            .map_err(|e| Error::Backend {
                backend: "wgpu".into(),
                message: format!("{}: could not open the device: {e}", self.name),
            })
    }
}

fn env_binding_limit() -> Option<u64> {
    let v = std::env::var("DLARRAY_WGPU_MAX_BINDING").ok()?;
    match v.trim().parse::<u64>() {
        Ok(n) if n >= 1024 => Some(n),
        _ => {
            log::warn!("ignoring DLARRAY_WGPU_MAX_BINDING={v:?}: not a byte count >= 1024");
            None
        }
    }
}

impl Ctx {
    fn open(
        name: &str,
        adapter: &wgpu::Adapter,
        serial: Option<Arc<SerialLock>>,
    ) -> std::result::Result<Ctx, String> {
        let want = wgpu::Features::SHADER_F16;
        let features = adapter.features() & want;
        let limits = adapter.limits();
        let desc = wgpu::DeviceDescriptor {
            label: Some(name),
            required_features: features,
            required_limits: limits.clone(),
            experimental_features: wgpu::ExperimentalFeatures::disabled(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        };
        let (device, queue) =
            pollster::block_on(adapter.request_device(&desc)).map_err(|e| e.to_string())?;
        let failure: Arc<Mutex<Failure>> = Arc::default();
        let sink = failure.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            log::error!("wgpu: {e}");
            let mut f = sink.lock().unwrap_or_else(|p| p.into_inner());
            if matches!(*f, Failure::None) {
                *f = Failure::Error(e.to_string());
            }
        }));
        let sink = failure.clone();
        device.set_device_lost_callback(move |reason, msg| {
            let mut f = sink.lock().unwrap_or_else(|p| p.into_inner());
            *f = Failure::Lost(format!("{reason:?}: {msg}"));
        });
        let align = u64::from(limits.min_storage_buffer_offset_alignment).max(4);
        let mut max_binding = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size)
            .min(i32::MAX as u64);
        if let Some(n) = env_binding_limit() {
            max_binding = max_binding.min(n);
        }
        Ok(Ctx {
            name: name.to_string(),
            f16: features.contains(wgpu::Features::SHADER_F16),
            max_binding: max_binding / align * align,
            limits,
            device,
            queue,
            pipelines: Mutex::default(),
            failure,
            serial,
        })
    }

    pub fn error(&self, message: impl std::fmt::Display) -> Error {
        Error::Backend {
            backend: "wgpu".into(),
            message: format!("{}: {message}", self.name),
        }
    }

    /// Fails with the first error the device recorded since the last check (then clears
    /// it), or with `DeviceLost` on every call once the device is gone.
    pub fn check(&self) -> Result<()> {
        let mut f = self.failure.lock().unwrap_or_else(|p| p.into_inner());
        match std::mem::take(&mut *f) {
            Failure::None => Ok(()),
            Failure::Error(m) => Err(self.error(m)),
            Failure::Lost(reason) => {
                *f = Failure::Lost(reason.clone());
                Err(Error::DeviceLost {
                    device: self.name.clone(),
                    reason,
                })
            }
        }
    }

    /// Marks the device lost (wgpu panicked inside it: its state is unknown).
    pub fn mark_lost(&self, reason: &str) {
        let mut f = self.failure.lock().unwrap_or_else(|p| p.into_inner());
        *f = Failure::Lost(reason.to_string());
    }

    /// Alignment of binding offsets, in bytes.
    pub fn offset_align(&self) -> u64 {
        u64::from(self.limits.min_storage_buffer_offset_alignment).max(4)
    }

    /// A new device buffer of at least `bytes` (rounded up to 4, at least 4).
    pub fn create_buffer(&self, bytes: u64, usage: wgpu::BufferUsages) -> Result<wgpu::Buffer> {
        let size = bytes.max(4).div_ceil(4) * 4;
        if size > self.limits.max_buffer_size {
            return Err(Error::OutOfMemory {
                device: self.name.clone(),
                bytes: u128::from(bytes),
                reason: format!(
                    "larger than the adapter's max_buffer_size of {} bytes",
                    self.limits.max_buffer_size
                ),
            });
        }
        self.check()?;
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let invalid = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size,
            usage,
            mapped_at_creation: false,
        });
        let invalid = pollster::block_on(invalid.pop());
        let oom = pollster::block_on(oom.pop());
        if let Some(e) = oom {
            return Err(Error::OutOfMemory {
                device: self.name.clone(),
                bytes: u128::from(bytes),
                reason: e.to_string(),
            });
        }
        if let Some(e) = invalid {
            return Err(self.error(e));
        }
        Ok(buffer)
    }

    /// The compiled pipeline for `key`, compiling `source()` on first use.
    pub fn pipeline(
        &self,
        key: &str,
        source: impl FnOnce() -> String,
    ) -> Result<wgpu::ComputePipeline> {
        let mut cache = self.pipelines.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = cache.get(key) {
            return Ok(p.clone());
        }
        let wgsl = source();
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = self
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(key),
                source: wgpu::ShaderSource::Wgsl(wgsl.into()),
            });
        let pipeline = self
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(key),
                layout: None,
                module: &module,
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            });
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(self.error(format!("kernel `{key}` failed to compile: {e}")));
        }
        cache.insert(key.to_string(), pipeline.clone());
        Ok(pipeline)
    }

    /// Records `dispatches` into one command buffer and submits it (without waiting).
    pub fn submit(&self, dispatches: &[Dispatch<'_>]) -> Result<()> {
        use wgpu::util::DeviceExt;
        self.check()?;
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        for d in dispatches {
            let words = super::wgsl::PARAM_WORDS;
            if d.params.len() > words {
                return Err(self.error(format!(
                    "kernel parameters of {} words exceed the block of {words} (too many axes)",
                    d.params.len()
                )));
            }
            let mut block = d.params.clone();
            block.resize(words, 0);
            let params = self
                .device
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("params"),
                    contents: bytemuck::cast_slice(&block),
                    usage: wgpu::BufferUsages::UNIFORM,
                });
            let mut entries = vec![wgpu::BindGroupEntry {
                binding: 0,
                resource: params.as_entire_binding(),
            }];
            for (i, b) in d.binds.iter().enumerate() {
                entries.push(wgpu::BindGroupEntry {
                    binding: i as u32 + 1,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: b.buffer,
                        offset: b.offset,
                        size: wgpu::BufferSize::new(b.size.max(4)),
                    }),
                });
            }
            let group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &d.pipeline.get_bind_group_layout(0),
                entries: &entries,
            });
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
            pass.set_pipeline(&d.pipeline);
            pass.set_bind_group(0, &group, &[]);
            let [x, y, z] = d.workgroups;
            pass.dispatch_workgroups(x, y, z);
        }
        self.queue.submit([encoder.finish()]);
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(self.error(e));
        }
        self.check()
    }

    /// Workgroup grid for `groups` workgroups: x up to the per-dimension limit, then y.
    pub fn grid(&self, groups: u64) -> Result<[u32; 3]> {
        let max = u64::from(self.limits.max_compute_workgroups_per_dimension.max(1));
        let x = groups.clamp(1, max);
        let y = groups.div_ceil(x);
        if y > max {
            return Err(self.error(format!(
                "{groups} workgroups exceed the adapter's grid of {max} x {max}"
            )));
        }
        Ok([x as u32, y as u32, 1])
    }

    /// Waits until all submitted work has finished.
    pub fn wait(&self) -> Result<()> {
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| self.error(e))?;
        self.check()
    }

    /// Copies `dst.len()` bytes starting at byte `offset` of `buffer` to the host, through a
    /// staging buffer; waits for every kernel queued before.
    pub fn read(&self, buffer: &wgpu::Buffer, offset: u64, dst: &mut [u8]) -> Result<()> {
        // Chunks bound the staging memory of a large read.
        const CHUNK: u64 = 64 << 20;
        let mut done = 0u64;
        let total = dst.len() as u64;
        while done < total {
            let len = (total - done).min(CHUNK);
            let start = offset + done;
            // Copies must start and end on 4-byte boundaries: widen, then slice.
            let lo = start / 4 * 4;
            let hi = (start + len).div_ceil(4) * 4;
            let staging = self.create_buffer(
                hi - lo,
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            )?;
            let mut encoder = self
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
            encoder.copy_buffer_to_buffer(buffer, lo, &staging, 0, hi - lo);
            self.queue.submit([encoder.finish()]);
            let (tx, rx) = std::sync::mpsc::channel();
            staging.map_async(wgpu::MapMode::Read, .., move |r| {
                let _ = tx.send(r);
            });
            self.wait()?;
            rx.recv()
                .map_err(|_| self.error("readback was cancelled"))?
                .map_err(|e| self.error(format!("readback failed: {e}")))?;
            {
                let view = staging
                    .get_mapped_range(..)
                    .map_err(|e| self.error(format!("readback failed: {e}")))?;
                let skip = (start - lo) as usize;
                dst[done as usize..(done + len) as usize]
                    .copy_from_slice(&view[skip..skip + len as usize]);
            }
            staging.unmap();
            done += len;
        }
        Ok(())
    }
}
