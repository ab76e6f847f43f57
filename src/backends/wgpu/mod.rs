//! The wgpu backend: one device per adapter wgpu finds (Vulkan, Metal, DX12, GL), compute in
//! WGSL kernels compiled once per device.
//!
//! Kernels exist for f32, i32, u32 and bool (and f16 where the adapter has `SHADER_F16`);
//! every dtype can be stored, moved and copied. Work is queued: an op returns once its
//! kernel is submitted, and host reads wait for it. wgpu gives no address for a buffer, so
//! DLPack sees platform `wgpu` and exports through a host copy.

mod buffer;
mod context;
mod elementwise;
mod fill;
mod matmul;
mod random;
mod reduce;
mod serial;
mod strided;
mod wgsl;

use crate::backends::op::expect_out;
use crate::backends::{
    Backend, BinaryOp, DeviceDesc, MemoryKind, ReduceOp, SharedBuffer, TensorRef, UnaryOp,
};
use crate::dtype::{DType, Element, Scalar};
use crate::error::{Error, Result};
use crate::layout::Layout;
use buffer::WgpuBuffer;
use context::{Ctx, Gpu};
use std::sync::Arc;
use strided::{Input, run_map};
use wgsl::Elem;

/// The wgpu major version this build links, as it appears in `platform_version`.
const WGPU_VERSION: &str = "wgpu 30";

/// The wgpu backend: its adapters, each opened on first use.
pub struct WgpuBackend {
    gpus: Vec<Gpu>,
}

impl std::fmt::Debug for WgpuBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self
            .gpus
            .iter()
            .map(|g| format!("{} ({:?} {})", g.name, g.info.backend, g.info.name))
            .collect();
        f.debug_struct("WgpuBackend")
            .field("devices", &names)
            .finish()
    }
}

/// Finds the adapters that can run compute shaders. Honours wgpu's own `WGPU_BACKEND`
/// (e.g. `vulkan`, `gl`) to limit which graphics APIs are tried.
pub(crate) fn discover() -> std::result::Result<Arc<dyn Backend>, String> {
    // The same hardware is often reachable through two APIs (Vulkan and GL on Mesa). GL is
    // asked only when no other API offers a compute adapter: wgpu's GL backend serialises
    // every call on one context lock and panics when it waits over 6 s, so it is unfit for
    // concurrent use, and opening EGL costs ~0.1 s per process. `DLARRAY_WGPU_ADAPTERS=all`
    // keeps every adapter of every API.
    let backends = wgpu::InstanceDescriptor::new_without_display_handle_from_env().backends;
    let all = std::env::var("DLARRAY_WGPU_ADAPTERS").as_deref() == Ok("all");
    let mut adapters = compute_adapters(backends - wgpu::Backends::GL)?;
    if all || adapters.is_empty() {
        adapters.extend(compute_adapters(backends & wgpu::Backends::GL)?);
    }
    if adapters.is_empty() {
        return Err(
            "no wgpu adapter with compute shaders was found (on Linux, install a \
                    Vulkan driver, e.g. Mesa's lavapipe: apt install mesa-vulkan-drivers)"
                .to_string(),
        );
    }
    let gpus = adapters
        .into_iter()
        .enumerate()
        .map(|(i, a)| Gpu::new(format!("wgpu:{i}"), a))
        .collect();
    Ok(Arc::new(WgpuBackend { gpus }))
}

/// The adapters of `backends` that run compute shaders.
fn compute_adapters(backends: wgpu::Backends) -> std::result::Result<Vec<wgpu::Adapter>, String> {
    if backends.is_empty() {
        return Ok(Vec::new());
    }
    // wgpu and drivers below it may panic on a broken installation: that must read as
    // "backend unavailable", never take the process down.
    let found = std::panic::catch_unwind(|| {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
        desc.backends = backends;
        let instance = wgpu::Instance::new(desc);
        pollster::block_on(instance.enumerate_adapters(backends))
    })
    .map_err(|_| "wgpu panicked while enumerating adapters".to_string())?;
    Ok(found
        .into_iter()
        .filter(|a| {
            a.get_downlevel_capabilities()
                .flags
                .contains(wgpu::DownlevelFlags::COMPUTE_SHADERS)
        })
        .collect())
}

/// The bytes of one element of `dtype` equal to `value`.
fn element_bytes(dtype: DType, value: Scalar) -> Vec<u8> {
    crate::with_dtype!(dtype, T => bytemuck::bytes_of(&T::from_scalar(value)).to_vec())
}

impl WgpuBackend {
    /// Runs one backend call on `device`: holding its GL lock (GL adapters only), with a
    /// panic inside wgpu turned into `DeviceLost` for this call (the device is then marked
    /// lost: its state is unknown).
    fn guard<T>(&self, device: usize, f: impl FnOnce() -> Result<T>) -> Result<T> {
        let Some(gpu) = self.gpus.get(device) else {
            return f(); // reports the unknown device
        };
        serial::guarded(
            gpu.serial.as_deref(),
            &gpu.name,
            |msg| {
                if let Some(ctx) = gpu.opened() {
                    ctx.mark_lost(&format!("wgpu panicked: {msg}"));
                }
            },
            f,
        )
    }

    /// The device a kernel input lives on (`usize::MAX` for a foreign buffer: the call then
    /// reports it).
    fn device_of(&self, t: &TensorRef<'_>) -> usize {
        self.buffer(t).map_or(usize::MAX, |b| b.device)
    }

    fn ctx(&self, device: usize) -> Result<&Ctx> {
        self.gpus
            .get(device)
            .ok_or_else(|| {
                Error::UnknownDevice(format!(
                    "unknown device `wgpu:{device}`: backend `wgpu` has {} devices",
                    self.gpus.len()
                ))
            })?
            .ctx()
    }

    fn buffer<'a>(&self, t: &TensorRef<'a>) -> Result<&'a WgpuBuffer> {
        t.buffer
            .as_any()
            .downcast_ref::<WgpuBuffer>()
            .ok_or_else(|| Error::invalid("wgpu kernel given a buffer of another backend"))
    }

    /// The kernel type of `dtype` on `device`, or `Unsupported` naming `op`.
    fn elem(&self, ctx: &Ctx, op: &str, dtype: DType) -> Result<Elem> {
        Elem::of(ctx, dtype).ok_or_else(|| Error::unsupported("wgpu", op, dtype))
    }

    fn map(
        &self,
        op: &str,
        kernel: &strided::MapKernel,
        inputs: &[TensorRef<'_>],
        out_item: usize,
    ) -> Result<WgpuBuffer> {
        let device = self.buffer(&inputs[0])?.device;
        let mut ins = Vec::with_capacity(inputs.len());
        for t in inputs {
            let buffer = self.buffer(t)?;
            if buffer.device != device {
                return Err(Error::invalid(format!(
                    "{op}: operands on wgpu:{} and wgpu:{device}",
                    buffer.device
                )));
            }
            ins.push(Input {
                buffer,
                layout: t.layout,
                item: t.dtype.size_in_bytes(),
            });
        }
        run_map(self.ctx(device)?, device, op, kernel, &ins, out_item)
    }

    /// `x` converted to `to`, both kernel types.
    fn cast_buf(&self, x: TensorRef<'_>, from: Elem, to: Elem) -> Result<WgpuBuffer> {
        self.map(
            "cast",
            &elementwise::cast(from, to),
            &[x],
            to.dtype.size_in_bytes(),
        )
    }

    /// A contiguous copy of `src` on its own device.
    fn copy_same_device(&self, ctx: &Ctx, src: TensorRef<'_>) -> Result<WgpuBuffer> {
        let buf = self.buffer(&src)?;
        let item = src.dtype.size_in_bytes();
        let bytes = (src.layout.size() * item) as u64;
        let start = (src.layout.offset() * item) as u64;
        if src.layout.is_contiguous() && start.is_multiple_of(4) && bytes.is_multiple_of(4) {
            let out = WgpuBuffer::alloc(ctx, buf.device, bytes as usize)?;
            if bytes > 0 {
                let mut encoder = ctx
                    .device
                    .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
                encoder.copy_buffer_to_buffer(&buf.raw, start, &out.raw, 0, bytes);
                ctx.queue.submit([encoder.finish()]);
                ctx.check()?;
            }
            return Ok(out);
        }
        let kernel = strided::copy_kernel(item);
        self.map("copy", &kernel, &[src], item)
    }
}

/// `src` (a strided view of `buf`) into `dst`, row-major, by reading the span of bytes it
/// reaches and gathering on the host; needs no binding at all.
fn gather_on_host(ctx: &Ctx, buf: &WgpuBuffer, src: TensorRef<'_>, dst: &mut [u8]) -> Result<()> {
    let item = src.dtype.size_in_bytes();
    let span = src.layout.span();
    let n = crate::layout::checked_bytes(span.end - span.start, item, &ctx.name)?;
    let mut bytes = crate::backends::host::try_host_vec::<u8>(n, &ctx.name)?;
    ctx.read(&buf.raw, (span.start * item) as u64, &mut bytes)?;
    let base = (src.layout.offset() - span.start) as isize;
    let mut out = 0;
    crate::layout::for_each_run(
        src.layout.shape(),
        [src.layout.strides()],
        [base],
        0..src.layout.size(),
        |[first], len, [step]| {
            for k in 0..len as isize {
                let at = (first + k * step) as usize * item;
                dst[out..out + item].copy_from_slice(&bytes[at..at + item]);
                out += item;
            }
        },
    );
    Ok(())
}

fn done(b: WgpuBuffer) -> Result<SharedBuffer> {
    Ok(SharedBuffer::new(b))
}

fn device_only(kind: MemoryKind) -> Result<()> {
    if kind != MemoryKind::Device {
        return Err(Error::invalid(format!(
            "wgpu devices have only `device` memory, not `{kind}`"
        )));
    }
    Ok(())
}

/// The 32-bit dtype a packed one (bool, 8- and 16-bit integers) reduces and multiplies in.
fn wide_of(e: Elem) -> DType {
    if e.ty == "i32" {
        DType::I32
    } else {
        DType::U32
    }
}

/// The backend's work, each call run by `Backend` under `guard` (the GL lock, panics caught).
impl WgpuBackend {
    fn kernel_dtypes_raw(&self, device: usize) -> Vec<DType> {
        match self.ctx(device) {
            Ok(ctx) => DType::ALL
                .into_iter()
                .filter(|&d| Elem::of(ctx, d).is_some())
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    fn upload_raw(&self, device: usize, kind: MemoryKind, bytes: &[u8]) -> Result<SharedBuffer> {
        device_only(kind)?;
        done(WgpuBuffer::upload(self.ctx(device)?, device, bytes)?)
    }

    fn fill_raw(
        &self,
        device: usize,
        kind: MemoryKind,
        dtype: DType,
        value: Scalar,
        len: usize,
    ) -> Result<SharedBuffer> {
        device_only(kind)?;
        let bytes = element_bytes(dtype, value);
        done(fill::fill(self.ctx(device)?, device, &bytes, len)?)
    }

    fn download_raw(&self, src: TensorRef<'_>, dst: &mut [u8]) -> Result<()> {
        let buf = self.buffer(&src)?;
        let ctx = self.ctx(buf.device)?;
        let item = src.dtype.size_in_bytes();
        if dst.len() != src.layout.size() * item {
            return Err(Error::invalid("download: destination size does not match"));
        }
        if dst.is_empty() {
            return ctx.wait();
        }
        if src.layout.is_contiguous() {
            return ctx.read(&buf.raw, (src.layout.offset() * item) as u64, dst);
        }
        match self.copy_same_device(ctx, src) {
            Ok(packed) => ctx.read(&packed.raw, 0, dst),
            // A view too scattered for the copy kernel's bindings (a transposed array over
            // the limit): read the bytes it spans and gather on the host instead.
            Err(e) if strided::is_binding_limit(&e) => gather_on_host(ctx, buf, src, dst),
            Err(e) => Err(e),
        }
    }

    fn copy_raw(
        &self,
        src: TensorRef<'_>,
        device: usize,
        kind: MemoryKind,
    ) -> Result<SharedBuffer> {
        device_only(kind)?;
        let buf = self.buffer(&src)?;
        let ctx = self.ctx(device)?;
        if buf.device == device {
            match self.copy_same_device(ctx, src) {
                Ok(b) => return done(b),
                Err(e) if strided::is_binding_limit(&e) => {} // through the host below
                Err(e) => return Err(e),
            }
        }
        // Adapters share no memory (and a view too scattered for one binding cannot be
        // packed on the device): through the host.
        let n = src.layout.size() * src.dtype.size_in_bytes();
        let mut host = crate::backends::host::try_host_vec::<u8>(n, &ctx.name)?;
        self.download(src, &mut host)?;
        done(WgpuBuffer::upload(ctx, device, &host)?)
    }

    fn unary_raw(&self, op: UnaryOp, x: TensorRef<'_>, out: DType) -> Result<SharedBuffer> {
        let ctx = self.ctx(self.buffer(&x)?.device)?;
        let e = self.elem(ctx, op.name(), x.dtype)?;
        let want = if op == UnaryOp::Signbit {
            DType::Bool
        } else {
            x.dtype
        };
        expect_out(op.name(), out, want)?;
        let o = self.elem(ctx, op.name(), want)?;
        let kernel = elementwise::unary(op, e, o)
            .ok_or_else(|| Error::unsupported("wgpu", op.name(), x.dtype))?;
        done(self.map(op.name(), &kernel, &[x], out.size_in_bytes())?)
    }

    fn binary_raw(
        &self,
        op: BinaryOp,
        a: TensorRef<'_>,
        b: TensorRef<'_>,
        out: DType,
    ) -> Result<SharedBuffer> {
        let ctx = self.ctx(self.buffer(&a)?.device)?;
        let e = self.elem(ctx, op.name(), a.dtype)?;
        if b.dtype != a.dtype {
            return Err(Error::DTypeMismatch {
                op: "binary kernel",
                expected: a.dtype.to_string(),
                got: b.dtype,
            });
        }
        let want = if op.is_comparison() {
            DType::Bool
        } else {
            a.dtype
        };
        expect_out(op.name(), out, want)?;
        let oe = self.elem(ctx, op.name(), out)?;
        let kernel = elementwise::binary(op, e, oe)
            .ok_or_else(|| Error::unsupported("wgpu", op.name(), a.dtype))?;
        done(self.map(op.name(), &kernel, &[a, b], out.size_in_bytes())?)
    }

    fn select_raw(
        &self,
        cond: TensorRef<'_>,
        a: TensorRef<'_>,
        b: TensorRef<'_>,
    ) -> Result<SharedBuffer> {
        crate::backends::host::select_operands(&cond, &a, &b)?;
        let ctx = self.ctx(self.buffer(&a)?.device)?;
        let e = self.elem(ctx, "where", a.dtype)?;
        let c = self.elem(ctx, "where", DType::Bool)?;
        let kernel = elementwise::select(c, e);
        done(self.map("where", &kernel, &[cond, a, b], a.dtype.size_in_bytes())?)
    }

    fn reduce_raw(&self, op: ReduceOp, x: TensorRef<'_>, axes: &[usize]) -> Result<SharedBuffer> {
        let buf = self.buffer(&x)?;
        let ctx = self.ctx(buf.device)?;
        let e = self.elem(ctx, op.name(), x.dtype)?;
        if e.packed() && (e.dtype != DType::Bool || op != ReduceOp::Sum) {
            // A reduction writes one output per workgroup, not a packed word: reduce in the
            // 32-bit type, then back (max/min of bool are any/all over 0/1; narrow integer
            // sums and products wrap on the way back, as they would have in their width).
            let u = self.elem(ctx, op.name(), wide_of(e))?;
            let wide = self.cast_buf(x, e, u)?;
            let layout = Layout::contiguous(x.layout.shape())?;
            let r = reduce::reduce(ctx, buf.device, op, (&wide, &layout, u), axes, u)?;
            let kept: Vec<usize> = (0..layout.ndim())
                .filter(|k| !axes.contains(k))
                .map(|k| layout.shape()[k])
                .collect();
            let rl = Layout::contiguous(&kept)?;
            let t = TensorRef {
                buffer: &r,
                layout: &rl,
                dtype: u.dtype,
            };
            return done(self.cast_buf(t, u, e)?);
        }
        if !reduce::supported(op, e) {
            return Err(Error::unsupported("wgpu", op.name(), x.dtype));
        }
        done(reduce::reduce(
            ctx,
            buf.device,
            op,
            (buf, x.layout, e),
            axes,
            e,
        )?)
    }

    fn matmul_raw(&self, a: TensorRef<'_>, b: TensorRef<'_>) -> Result<SharedBuffer> {
        let (ba, bb) = (self.buffer(&a)?, self.buffer(&b)?);
        if ba.device != bb.device {
            return Err(Error::invalid(format!(
                "matmul: operands on wgpu:{} and wgpu:{}",
                ba.device, bb.device
            )));
        }
        let ctx = self.ctx(ba.device)?;
        let e = self.elem(ctx, "matmul", a.dtype)?;
        if b.dtype != a.dtype {
            return Err(Error::DTypeMismatch {
                op: "matmul kernel",
                expected: a.dtype.to_string(),
                got: b.dtype,
            });
        }
        if e.packed() {
            // In the 32-bit type, then back: for bool, OR of ANDs counts the true products and
            // tests for non-zero; narrow integers wrap alike in 32 bits and in their own.
            let u = self.elem(ctx, "matmul", wide_of(e))?;
            let (wa, wb) = (self.cast_buf(a, e, u)?, self.cast_buf(b, e, u)?);
            let (la, lb) = (
                Layout::contiguous(a.layout.shape())?,
                Layout::contiguous(b.layout.shape())?,
            );
            let p = matmul::matmul(ctx, ba.device, u, (&wa, &la), (&wb, &lb))?;
            let nd = la.ndim();
            let mut shape = la.shape()[..nd - 1].to_vec();
            shape.push(lb.shape()[nd - 1]);
            let pl = Layout::contiguous(&shape)?;
            let t = TensorRef {
                buffer: &p,
                layout: &pl,
                dtype: u.dtype,
            };
            return done(self.cast_buf(t, u, e)?);
        }
        done(matmul::matmul(
            ctx,
            ba.device,
            e,
            (ba, a.layout),
            (bb, b.layout),
        )?)
    }

    fn cast_raw(&self, x: TensorRef<'_>, to: DType) -> Result<SharedBuffer> {
        let ctx = self.ctx(self.buffer(&x)?.device)?;
        let from = self.elem(ctx, "cast", x.dtype)?;
        let to_e = self.elem(ctx, "cast", to)?;
        done(self.cast_buf(x, from, to_e)?)
    }

    fn synchronize_raw(&self, device: usize) -> Result<()> {
        self.ctx(device)?.wait()
    }
}

impl Backend for WgpuBackend {
    fn name(&self) -> &str {
        "wgpu"
    }
    fn platform(&self) -> &str {
        "wgpu"
    }
    fn platform_version(&self) -> String {
        WGPU_VERSION.to_string()
    }
    fn device_platform_version(&self, device: usize) -> String {
        match self.gpus.get(device) {
            Some(g) => format!("{WGPU_VERSION} {} {}", g.info.backend.to_str(), g.info.name),
            None => WGPU_VERSION.to_string(),
        }
    }
    fn devices(&self) -> Vec<DeviceDesc> {
        (0..self.gpus.len())
            .map(|index| DeviceDesc {
                index,
                local_hardware_id: None,
                memory_kinds: vec![MemoryKind::Device],
            })
            .collect()
    }

    /// wgpu buffers have no address a DLPack consumer could use: declared unexportable, so
    /// exports fall back to a host copy (JAX's platform message says why).
    fn dlpack_capability(
        &self,
        _device: usize,
        _kind: MemoryKind,
    ) -> Option<crate::backends::DlpackCapability> {
        Some(crate::backends::DlpackCapability::NONE)
    }

    fn kernel_dtypes(&self, device: usize) -> Vec<DType> {
        self.guard(device, || Ok(self.kernel_dtypes_raw(device)))
            .unwrap_or_default()
    }

    fn matmul_engine(&self, _device: usize) -> Option<String> {
        Some("dlarray's tiled WGSL kernel (narrow integers and bool widened to 32 bits)".into())
    }

    fn upload(&self, device: usize, kind: MemoryKind, bytes: &[u8]) -> Result<SharedBuffer> {
        self.guard(device, || self.upload_raw(device, kind, bytes))
    }

    fn fill(
        &self,
        device: usize,
        kind: MemoryKind,
        dtype: DType,
        value: Scalar,
        len: usize,
    ) -> Result<SharedBuffer> {
        self.guard(device, || self.fill_raw(device, kind, dtype, value, len))
    }

    /// Hashed by a WGSL kernel where every counter fits in 32 bits (any array of up to 2^32
    /// elements), else on the host and uploaded.
    fn random_bits(
        &self,
        device: usize,
        kind: MemoryKind,
        key: [u32; 2],
        counters: &crate::backends::Counters,
        form: crate::backends::BitsForm,
    ) -> Result<SharedBuffer> {
        device_only(kind)?;
        self.guard(device, || {
            let ctx = self.ctx(device)?;
            match random::random_bits(ctx, device, key, counters, form)? {
                Some(b) => done(b),
                None => {
                    let words = counters.hash_on_host(key, form, self.name())?;
                    self.upload_raw(device, kind, crate::array::as_bytes(&words))
                }
            }
        })
    }

    /// A move onto this device is one copy: the source writes straight into wgpu's staging
    /// memory (`Queue::write_buffer_with`), which the queue then copies into the buffer.
    unsafe fn upload_with(
        &self,
        device: usize,
        kind: MemoryKind,
        len: usize,
        write: &mut dyn FnMut(&mut [u8]) -> Result<()>,
    ) -> Result<SharedBuffer> {
        device_only(kind)?;
        self.guard(device, || {
            let ctx = self.ctx(device)?;
            let buf = WgpuBuffer::alloc(ctx, device, len)?;
            // The queue writes whole words: the staging area is padded to 4 bytes.
            let padded = len.div_ceil(4) * 4;
            let Some(size) = wgpu::BufferSize::new(padded as u64) else {
                return done(buf);
            };
            let mut view = ctx
                .queue
                .write_buffer_with(&buf.raw, 0, size)
                .ok_or_else(|| ctx.error(format!("cannot stage an upload of {len} bytes")))?;
            let ptr = view.slice(..).as_raw_ptr();
            // SAFETY: `ptr` is the view's `padded` bytes of staging memory, ours until the
            // view drops below; it is only written: the padding here, the rest by `write`,
            // whose contract (this function's caller's) is to write every byte and read none.
            let dst = unsafe { std::slice::from_raw_parts_mut(ptr.as_ptr() as *mut u8, padded) };
            dst[len..].fill(0);
            write(&mut dst[..len])?;
            drop(view);
            ctx.check()?;
            done(buf)
        })
    }

    fn download(&self, src: TensorRef<'_>, dst: &mut [u8]) -> Result<()> {
        self.guard(self.device_of(&src), || self.download_raw(src, dst))
    }

    fn copy(&self, src: TensorRef<'_>, device: usize, kind: MemoryKind) -> Result<SharedBuffer> {
        if self.device_of(&src) == device {
            return self.guard(device, || self.copy_raw(src, device, kind));
        }
        // Adapters share no memory: through the host, one device at a time (holding both
        // devices' GL locks at once could deadlock against a copy the other way).
        device_only(kind)?;
        let n = crate::layout::checked_bytes(
            src.layout.size(),
            src.dtype.size_in_bytes(),
            &format!("wgpu:{device}"),
        )?;
        let mut host = crate::backends::host::try_host_vec::<u8>(n, &format!("wgpu:{device}"))?;
        self.download(src, &mut host)?;
        self.upload(device, kind, &host)
    }

    fn unary(&self, op: UnaryOp, x: TensorRef<'_>, out: DType) -> Result<SharedBuffer> {
        self.guard(self.device_of(&x), || self.unary_raw(op, x, out))
    }

    fn binary(
        &self,
        op: BinaryOp,
        a: TensorRef<'_>,
        b: TensorRef<'_>,
        out: DType,
    ) -> Result<SharedBuffer> {
        self.guard(self.device_of(&a), || self.binary_raw(op, a, b, out))
    }

    fn select(
        &self,
        cond: TensorRef<'_>,
        a: TensorRef<'_>,
        b: TensorRef<'_>,
    ) -> Result<SharedBuffer> {
        self.guard(self.device_of(&a), || self.select_raw(cond, a, b))
    }

    fn reduce(&self, op: ReduceOp, x: TensorRef<'_>, axes: &[usize]) -> Result<SharedBuffer> {
        self.guard(self.device_of(&x), || self.reduce_raw(op, x, axes))
    }

    fn matmul(&self, a: TensorRef<'_>, b: TensorRef<'_>) -> Result<SharedBuffer> {
        self.guard(self.device_of(&a), || self.matmul_raw(a, b))
    }

    fn cast(&self, x: TensorRef<'_>, to: DType) -> Result<SharedBuffer> {
        self.guard(self.device_of(&x), || self.cast_raw(x, to))
    }

    fn synchronize(&self, device: usize) -> Result<()> {
        self.guard(device, || self.synchronize_raw(device))
    }
}
