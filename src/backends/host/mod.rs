//! The host runtime shared by the backends whose memory is host RAM: the CPU backend and the
//! TPU-host emulation. Each device owns its allocation pools (one per memory kind) and its own
//! thread pool, so devices are independent allocation and execution domains and a sharded
//! array's shards really run side by side.

mod affinity;
mod asin_acos_f64;
mod asinh_acosh_f64;
mod atan_f64;
mod atanh_f64;
mod buffer;
mod cast;
mod complex_edges;
mod complex_fns;
#[cfg(test)]
mod dd_reference;
mod elementwise;
mod engine;
mod exp_f64;
mod expf;
mod expm1_f64;
mod f32_via_f64;
mod foreign;
#[cfg(target_arch = "x86_64")]
mod gemm_avx2;
mod helpers;
mod inv_trigf;
mod l1d;
#[cfg(target_arch = "x86_64")]
mod lanes;
mod log_f64;
mod logf;
mod math;
mod matmul;
mod mid_band;
mod poly;
mod random;
mod realign;
mod reduce;
mod simd;
mod sincos_f64;
mod sincosf;
mod tanh_f64;
mod tanhf;
mod view;

pub(crate) use buffer::try_host_capacity;
pub use buffer::{HOST_ALIGN, HostBuffer, HostPool, physical_memory, try_host_vec};
pub use foreign::ForeignBuffer;

use crate::backends::{
    Backend, BinaryOp, DeviceDesc, DlpackCapability, MemoryKind, ReduceOp, SharedBuffer, TensorRef,
    UnaryOp,
};
use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use std::ptr::NonNull;
use std::sync::Arc;
use view::View;

/// Configuration of a host backend.
#[derive(Debug, Clone)]
pub struct HostConfig {
    /// The backend's name.
    pub name: &'static str,
    /// The platform its devices report.
    pub platform: &'static str,
    /// The platform version string.
    pub platform_version: String,
    /// Devices to drive.
    pub device_count: usize,
    /// Memory kinds of every device; the first is the default.
    pub memory_kinds: Vec<MemoryKind>,
    /// Worker threads per device.
    pub threads_per_device: usize,
    /// Bytes each (device, memory kind) pool may keep cached.
    pub pool_bytes: usize,
    /// The DLPack declaration per memory kind; a kind not listed declares nothing, so JAX's
    /// platform rules apply to it (see [`Backend::dlpack_capability`]).
    pub dlpack: Vec<(MemoryKind, DlpackCapability)>,
}

/// One host device: a thread pool and one allocation pool per memory kind.
pub(crate) struct HostDevice {
    index: usize,
    /// `backend:index`, for errors.
    name: String,
    threads: usize,
    /// Runs parallel gemm (`install`), whose caller sleeps while the workers compute.
    pool: rayon::ThreadPool,
    /// Help `par_for` callers, which compute too (see `helpers`).
    helpers: helpers::Helpers,
    /// Whether mid-size ops pay for the helpers here (see `mid_band`).
    mid_band: mid_band::MidBand,
    memory: Vec<(MemoryKind, Arc<HostPool>)>,
    /// Bytes of a core's L1 data cache (see `engine::Direction`).
    l1d: usize,
}

impl HostDevice {
    pub(crate) fn alloc(&self, bytes: usize, kind: MemoryKind) -> Result<HostBuffer> {
        self.alloc_shifted(bytes, kind, 0)
    }

    /// As `alloc`, `shift` bytes past a 64-byte boundary (see `HostPool::alloc_shifted`).
    pub(crate) fn alloc_shifted(
        &self,
        bytes: usize,
        kind: MemoryKind,
        shift: usize,
    ) -> Result<HostBuffer> {
        let Some((_, pool)) = self.memory.iter().find(|(k, _)| *k == kind) else {
            return Err(no_memory_of(kind));
        };
        pool.alloc_shifted(bytes, self.index, kind, shift)
    }

    /// As [`alloc_shifted`](Self::alloc_shifted), the buffer already shared, with its first
    /// byte to write through (the caller holds the only handle until it returns it).
    ///
    /// Why: an out-of-line allocation returned its `Result<HostBuffer>` through memory, and
    /// the kernel read it back with wider loads than the stores that wrote it, a failed store
    /// forwarding that `perf` put at ~10 % of an 8-element add's time. Inlined, a block from
    /// the thread's cache goes from registers straight into the shared handle, and what comes
    /// back fits in registers.
    #[inline(always)]
    pub(crate) fn alloc_shared(
        &self,
        bytes: usize,
        kind: MemoryKind,
        shift: usize,
    ) -> Result<(SharedBuffer, NonNull<u8>)> {
        if let Some((_, pool)) = self.memory.iter().find(|(k, _)| *k == kind)
            && let Some((block, class)) = pool.take_cached(bytes, shift)
        {
            // Built after the handle's memory is taken (`new_with`), from scalars: built
            // before, it was kept across that call as a whole and copied in (the same
            // failed forwarding).
            let index = self.index;
            let buf = SharedBuffer::new_with(|| {
                HostBuffer::small(block, class, bytes, shift, index, kind)
            });
            // SAFETY: as in `HostBuffer::small`, the offset stays inside the block.
            let first = unsafe { block.add(shift % buffer::HOST_ALIGN) };
            return Ok((buf, first));
        }
        self.alloc_shared_slow(bytes, kind, shift)
    }

    #[inline(never)]
    fn alloc_shared_slow(
        &self,
        bytes: usize,
        kind: MemoryKind,
        shift: usize,
    ) -> Result<(SharedBuffer, NonNull<u8>)> {
        let buf = self.alloc_shifted(bytes, kind, shift)?;
        let first = buf.first();
        Ok((finish(buf), first))
    }

    #[inline]
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Memory kind kernels write their outputs to.
    pub(crate) fn default_kind(&self) -> MemoryKind {
        self.memory[0].0
    }

    /// Runs `f` on this device's threads.
    pub(crate) fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        if self.threads <= 1 {
            f()
        } else {
            self.pool.install(f)
        }
    }

    pub(crate) fn threads(&self) -> usize {
        self.threads
    }

    /// Queues a job from `make` on up to `n` of this device's helper threads (those on other
    /// CPUs than the caller's first) and returns at once, with how many were queued.
    pub(crate) fn help(&self, n: usize, make: &mut dyn FnMut() -> helpers::Job) -> usize {
        self.helpers.post(n, make)
    }

    /// Bytes of a core's L1 data cache.
    #[inline(always)]
    pub(crate) fn l1d_bytes(&self) -> usize {
        self.l1d
    }

    pub(crate) fn mid_band(&self) -> &mid_band::MidBand {
        &self.mid_band
    }

    /// See `Helpers::ready_for_mid_work`.
    pub(crate) fn helpers_ready_for_mid_work(&self) -> bool {
        self.helpers.ready_for_mid_work()
    }

    /// See `Helpers::all_polling`.
    pub(crate) fn helpers_polling(&self) -> bool {
        self.helpers.all_polling()
    }
}

/// A backend whose devices compute on host memory.
pub struct HostBackend {
    config: HostConfig,
    devices: Vec<HostDevice>,
}

impl std::fmt::Debug for HostBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "HostBackend({}, {} devices)",
            self.config.name, self.config.device_count
        )
    }
}

impl HostBackend {
    /// One device of `threads` threads with device memory only and no cache: what the host
    /// modules' own tests run their kernels on.
    #[cfg(test)]
    pub(crate) fn for_tests(name: &'static str, threads: usize) -> HostBackend {
        HostBackend::new(HostConfig {
            name,
            platform: "cpu",
            platform_version: "cpu".into(),
            device_count: 1,
            memory_kinds: vec![MemoryKind::Device],
            threads_per_device: threads,
            pool_bytes: 0,
            dlpack: vec![],
        })
        .unwrap()
    }

    /// A backend of `config`'s devices, or why it cannot start.
    pub fn new(config: HostConfig) -> std::result::Result<HostBackend, String> {
        if config.memory_kinds.is_empty() {
            return Err("a host backend needs at least one memory kind".into());
        }
        let max_alloc = physical_memory();
        let threads = config.threads_per_device.max(1);
        // A device of one thread runs everything on its caller: nothing to place or help.
        let cpus = if threads > 1 {
            affinity::cpus_to_pin()
        } else {
            Vec::new()
        };
        let mut devices = Vec::with_capacity(config.device_count);
        for index in 0..config.device_count {
            let name = format!("{}:{index}", config.name);
            // Thread i's CPU, the same for helper i and rayon worker i (`None`: unpinned).
            // Devices take consecutive CPUs, as they take consecutive shares of the cores.
            let device_cpus: Vec<Option<usize>> = (0..threads)
                .map(|i| (!cpus.is_empty()).then(|| cpus[(index * threads + i) % cpus.len()]))
                .collect();
            let helpers = helpers::Helpers::start(
                &name,
                if threads > 1 { &device_cpus } else { &[] },
                helpers::spin_window(),
            )?;
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .thread_name({
                    let name = name.clone();
                    move |i| format!("{name}-{i}")
                })
                .start_handler(move |i| {
                    if let Some(cpu) = device_cpus[i] {
                        affinity::pin_current_thread(cpu);
                    }
                })
                .build()
                .map_err(|e| format!("cannot start threads for {name}: {e}"))?;
            let memory = config
                .memory_kinds
                .iter()
                .map(|&k| {
                    (
                        k,
                        HostPool::new(format!("{name} {k}"), max_alloc, config.pool_bytes),
                    )
                })
                .collect();
            devices.push(HostDevice {
                index,
                name,
                threads,
                pool,
                helpers,
                mid_band: Default::default(),
                memory,
                l1d: l1d::l1d_bytes(),
            });
        }
        Ok(HostBackend { config, devices })
    }

    fn device(&self, index: usize) -> Result<&HostDevice> {
        self.devices.get(index).ok_or_else(|| {
            Error::UnknownDevice(format!(
                "unknown device `{}:{index}`: backend `{}` has {} devices",
                self.config.name,
                self.config.name,
                self.devices.len()
            ))
        })
    }

    /// The device a kernel input lives on.
    fn device_of(&self, t: &TensorRef<'_>) -> Result<&HostDevice> {
        self.device(t.buffer.device_index())
    }

    /// `Backend::reduce`, the operand by reference (see `elementwise::run2`).
    #[inline(always)]
    fn reduce_of(&self, op: ReduceOp, x: &TensorRef<'_>, axes: &[usize]) -> Result<SharedBuffer> {
        if axes.windows(2).any(|w| w[0] >= w[1]) || axes.iter().any(|&a| a >= x.layout.ndim()) {
            return Err(Error::invalid(format!(
                "{op}: axes {axes:?} must be sorted, unique and below {}",
                x.layout.ndim()
            )));
        }
        let dev = self.device_of(x)?;
        reduce::reduce(self, dev, op, x, axes)
    }

    /// By reference, reading the fields where they are: copying a `TensorRef` just written
    /// field by field reads it back with wider loads (a failed store forwarding).
    #[inline(always)]
    fn view<'a, T: crate::dtype::Element>(&self, t: &TensorRef<'a>) -> Result<View<'a, T>> {
        View::new(t, self.config.name)
    }

    fn unsupported(&self, op: impl Into<String>, dtype: DType) -> Error {
        Error::unsupported(self.config.name, op, dtype)
    }
}

#[cold]
#[inline(never)]
fn no_memory_of(kind: MemoryKind) -> Error {
    Error::invalid(format!("device has no `{kind}` memory"))
}

#[inline(always)]
pub(super) fn finish(buf: HostBuffer) -> SharedBuffer {
    SharedBuffer::new(buf)
}

impl Backend for HostBackend {
    fn name(&self) -> &str {
        self.config.name
    }
    fn platform(&self) -> &str {
        self.config.platform
    }
    fn platform_version(&self) -> String {
        self.config.platform_version.clone()
    }
    fn matmul_engine(&self, _device: usize) -> Option<String> {
        Some(matmul::engine())
    }
    fn devices(&self) -> Vec<DeviceDesc> {
        (0..self.config.device_count)
            .map(|index| DeviceDesc {
                index,
                local_hardware_id: i32::try_from(index).ok(),
                memory_kinds: self.config.memory_kinds.clone(),
            })
            .collect()
    }

    fn dlpack_capability(&self, _device: usize, kind: MemoryKind) -> Option<DlpackCapability> {
        self.config
            .dlpack
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, c)| *c)
    }

    fn upload(&self, device: usize, kind: MemoryKind, bytes: &[u8]) -> Result<SharedBuffer> {
        let dev = self.device(device)?;
        let mut buf = dev.alloc(bytes.len(), kind)?;
        engine::par_memcpy(dev, bytes.as_ptr(), buf.as_mut_ptr(), bytes.len());
        Ok(finish(buf))
    }

    unsafe fn upload_with(
        &self,
        device: usize,
        kind: MemoryKind,
        len: usize,
        write: &mut dyn FnMut(&mut [u8]) -> Result<()>,
    ) -> Result<SharedBuffer> {
        let dev = self.device(device)?;
        let mut buf = dev.alloc(len, kind)?;
        // SAFETY: `buf` was just allocated with `len` bytes and is not shared; the caller's
        // contract makes `write` fill it without reading it first.
        let dst = unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr(), len) };
        write(dst)?;
        Ok(finish(buf))
    }

    fn random_bits(
        &self,
        device: usize,
        kind: MemoryKind,
        key: [u32; 2],
        counters: &crate::backends::Counters,
        form: crate::backends::BitsForm,
    ) -> Result<SharedBuffer> {
        let dev = self.device(device)?;
        Ok(finish(random::random_bits(dev, kind, key, counters, form)?))
    }

    fn fill(
        &self,
        device: usize,
        kind: MemoryKind,
        dtype: DType,
        value: Scalar,
        len: usize,
    ) -> Result<SharedBuffer> {
        let dev = self.device(device)?;
        let bytes = crate::layout::checked_bytes(len, dtype.size_in_bytes(), dev.name())?;
        let mut buf = dev.alloc(bytes, kind)?;
        crate::with_dtype!(dtype, T => engine::fill::<T>(dev, &mut buf, len, <T as crate::dtype::Element>::from_scalar(value)));
        Ok(finish(buf))
    }

    fn download(&self, src: TensorRef<'_>, dst: &mut [u8]) -> Result<()> {
        self.download_uninit(src, crate::backends::buffer::as_uninit(dst))
            .map(|_| ())
    }

    fn download_uninit<'a>(
        &self,
        src: TensorRef<'_>,
        dst: &'a mut [std::mem::MaybeUninit<u8>],
    ) -> Result<&'a mut [u8]> {
        let want = src.layout.size().checked_mul(src.dtype.size_in_bytes());
        if want != Some(dst.len()) {
            return Err(Error::invalid(format!(
                "download of {} {} elements into a buffer of {} bytes",
                src.layout.size(),
                src.dtype,
                dst.len()
            )));
        }
        let dev = self.device_of(&src)?;
        cast::copy_to_bytes(self, dev, src, dst)?;
        // SAFETY: `copy_to_bytes` wrote every byte of `dst` (its whole length).
        Ok(unsafe { crate::backends::buffer::assume_init(dst) })
    }

    fn copy(&self, src: TensorRef<'_>, device: usize, kind: MemoryKind) -> Result<SharedBuffer> {
        let dev = self.device(device)?;
        let bytes =
            crate::layout::checked_bytes(src.layout.size(), src.dtype.size_in_bytes(), dev.name())?;
        let mut buf = dev.alloc(bytes, kind)?;
        // SAFETY: `buf` was just allocated with exactly `bytes` bytes and is not shared; the
        // bytes may be uninitialised, which `MaybeUninit` allows.
        let dst = unsafe {
            std::slice::from_raw_parts_mut(
                buf.as_mut_ptr() as *mut std::mem::MaybeUninit<u8>,
                bytes,
            )
        };
        cast::copy_to_bytes(self, dev, src, dst)?;
        Ok(finish(buf))
    }

    fn unary(&self, op: UnaryOp, x: TensorRef<'_>, out: DType) -> Result<SharedBuffer> {
        let dev = self.device_of(&x)?;
        elementwise::unary(self, dev, op, &x, out)
    }

    fn binary(
        &self,
        op: BinaryOp,
        a: TensorRef<'_>,
        b: TensorRef<'_>,
        out: DType,
    ) -> Result<SharedBuffer> {
        if a.dtype != b.dtype {
            return Err(Error::DTypeMismatch {
                op: op.name(),
                expected: a.dtype.to_string(),
                got: b.dtype,
            });
        }
        if !crate::layout::same_shape(a.layout.shape(), b.layout.shape()) {
            return Err(Error::ShapeMismatch {
                op: op.name(),
                lhs: a.layout.shape().to_vec(),
                rhs: b.layout.shape().to_vec(),
            });
        }
        // Read once (a virtual call): the check and the device both use it.
        let index = a.buffer.device_index();
        if index != b.buffer.device_index() {
            return Err(Error::invalid(format!(
                "{op}: operands on different devices"
            )));
        }
        let dev = self.device(index)?;
        // By reference (see `run2`).
        elementwise::binary(self, dev, op, &a, &b, out)
    }

    fn reduce(&self, op: ReduceOp, x: TensorRef<'_>, axes: &[usize]) -> Result<SharedBuffer> {
        self.reduce_of(op, &x, axes)
    }

    fn matmul(&self, a: TensorRef<'_>, b: TensorRef<'_>) -> Result<SharedBuffer> {
        let dev = self.device_of(&a)?;
        matmul::matmul(self, dev, a, b).map(finish)
    }

    fn cast(&self, x: TensorRef<'_>, to: DType) -> Result<SharedBuffer> {
        let dev = self.device_of(&x)?;
        cast::cast(self, dev, x, to).map(finish)
    }

    fn reduce_as(
        &self,
        op: ReduceOp,
        x: TensorRef<'_>,
        axes: &[usize],
        out: DType,
    ) -> Result<SharedBuffer> {
        if out == x.dtype {
            // By reference: passing `x` on by value copied it (see `elementwise::run2`).
            return self.reduce_of(op, &x, axes);
        }
        let dev = self.device_of(&x)?;
        if let Some(r) = reduce::widened(self, dev, op, &x, axes, out) {
            return r;
        }
        // Everything else: convert, then reduce (the trait's default).
        crate::backends::reduce_converted(self, op, x, axes, out)
    }

    fn select(
        &self,
        cond: TensorRef<'_>,
        a: TensorRef<'_>,
        b: TensorRef<'_>,
    ) -> Result<SharedBuffer> {
        select_operands(&cond, &a, &b)?;
        if [&cond, &b]
            .iter()
            .any(|t| t.buffer.device_index() != a.buffer.device_index())
        {
            return Err(Error::invalid("where: operands on different devices"));
        }
        let dev = self.device_of(&a)?;
        elementwise::select(self, dev, cond, a, b).map(finish)
    }
}

/// Checks what every backend's `select` requires: a bool condition, one value dtype, one
/// shape.
pub(crate) fn select_operands(
    cond: &TensorRef<'_>,
    a: &TensorRef<'_>,
    b: &TensorRef<'_>,
) -> Result<()> {
    if cond.dtype != DType::Bool || a.dtype != b.dtype {
        return Err(Error::DTypeMismatch {
            op: "where",
            expected: format!("a bool condition and two {} operands", a.dtype),
            got: if cond.dtype != DType::Bool {
                cond.dtype
            } else {
                b.dtype
            },
        });
    }
    for t in [cond, b] {
        if !crate::layout::same_shape(t.layout.shape(), a.layout.shape()) {
            return Err(Error::ShapeMismatch {
                op: "where",
                lhs: a.layout.shape().to_vec(),
                rhs: t.layout.shape().to_vec(),
            });
        }
    }
    Ok(())
}
