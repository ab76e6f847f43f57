//! A fake *asynchronous* backend: the model for the fake drivers of the GPU backends.
//!
//! - Device memory lives behind addresses that are not host pointers (`0xD1A0_0000_0000` up);
//!   the host never dereferences them.
//! - Every call only *queues* work; a device's queue runs only when something waits on it
//!   (`synchronize`, a `download` of a buffer it produces, an event wait of another device, a
//!   consumer stream told to wait). A missing wait therefore reads unwritten memory (zeros):
//!   a wrong result, not a lucky pass.
//! - Buffers free stream-ordered: a drop queues the free; foreign memory's owner (a DLPack
//!   deleter) is released by the queue, after the work reading it.
//! - Fault injection: an allocation budget (`OutOfMemory`), device loss after N more jobs,
//!   a failing job (an asynchronous error `synchronize` reports once).
//! - Counters of allocations, frees, jobs, waits, synchronisations and owner releases.
//!
//! Kernels compute for real: each job copies its inputs' device memory into an inner host
//! backend, runs the op there and writes the result back into device memory.
#![allow(dead_code)]

use dlarray::dlpack::ffi::DLDeviceType;
use dlarray::dlpack::{ExportSync, StreamConvention};
use dlarray::host::{HostBackend, HostConfig};
use dlarray::{
    Address, Backend, BinaryOp, DType, Device, DeviceBuffer, DeviceDesc, DlpackCapability, Error,
    Layout, MemoryKind, Owner, ReduceOp, Result, Scalar, SharedBuffer, TensorRef, UnaryOp,
};
use std::any::Any;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};

/// Device memory: one byte block per allocation, keyed by its base address.
type Block = Arc<Mutex<Vec<u8>>>;

/// What the fake has done, for tests to assert on.
#[derive(Default, Debug)]
pub struct Counters {
    pub allocs: AtomicUsize,
    pub frees: AtomicUsize,
    pub jobs_run: AtomicUsize,
    /// Waits the backend inserted: downloads, cross-device events, consumer streams.
    pub waits: AtomicUsize,
    pub syncs: AtomicUsize,
    /// Foreign owners (DLPack deleters) released by the queue.
    pub releases: AtomicUsize,
    pub producer_waits: AtomicUsize,
}

fn count(c: &AtomicUsize) -> usize {
    c.load(Ordering::SeqCst)
}

impl Counters {
    pub fn allocs(&self) -> usize {
        count(&self.allocs)
    }
    pub fn frees(&self) -> usize {
        count(&self.frees)
    }
    pub fn jobs_run(&self) -> usize {
        count(&self.jobs_run)
    }
    pub fn waits(&self) -> usize {
        count(&self.waits)
    }
    pub fn releases(&self) -> usize {
        count(&self.releases)
    }
}

type Job = Box<dyn FnOnce(&Inner) -> Result<()> + Send>;

/// Jobs that must run even on a lost device (host-side bookkeeping of the driver).
enum Item {
    Work(Job),
    Cleanup(Box<dyn FnOnce(&Inner) + Send>),
}

#[derive(Default)]
struct Queue {
    items: VecDeque<(u64, Item)>,
    /// Sequence number of the last job submitted / run.
    submitted: u64,
    done: u64,
}

#[derive(Default)]
struct Faults {
    /// Bytes that may still be allocated (`None`: unlimited).
    budget: Option<usize>,
    /// Jobs that may still run before the device is lost.
    lose_after: Option<usize>,
    /// A message the next job fails with.
    fail_next: Option<String>,
}

pub struct Inner {
    name: &'static str,
    host: HostBackend,
    queues: Vec<Mutex<Queue>>,
    memory: Mutex<BTreeMap<u64, Block>>,
    next_addr: AtomicU64,
    /// First asynchronous error per device since the last synchronize.
    errors: Vec<Mutex<Option<Error>>>,
    lost: Vec<Mutex<Option<String>>>,
    faults: Mutex<Faults>,
    /// Consumer stream handle -> (device, sequence number it was told to wait for).
    stream_waits: Mutex<HashMap<usize, (usize, u64)>>,
    pub counters: Counters,
    me: Weak<Inner>,
}

/// The backend registered with dlarray.
#[derive(Clone)]
pub struct AsyncFake(pub Arc<Inner>);

impl fmt::Debug for AsyncFake {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AsyncFake({})", self.0.name)
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A buffer in fake device memory.
pub struct FakeBuf {
    device: usize,
    addr: u64,
    len: usize,
    block: Block,
    /// Offset of `addr` in `block` (non-zero for foreign memory inside a producer's block).
    start: usize,
    /// Sequence number of the job that writes it (0: written by nobody, i.e. foreign).
    ready: u64,
    /// For foreign memory: the producer's owner, released stream-ordered on drop.
    owner: Option<Owner>,
    backend: Weak<Inner>,
}

impl fmt::Debug for FakeBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "FakeBuf({} bytes at {:#x} on device {})",
            self.len, self.addr, self.device
        )
    }
}

impl Drop for FakeBuf {
    fn drop(&mut self) {
        // Never blocks on the device and never panics: the free (or the owner's release) is
        // queued behind every use already submitted.
        let Some(inner) = self.backend.upgrade() else {
            return;
        };
        let owner = self.owner.take();
        let (addr, foreign) = (self.addr, owner.is_some());
        inner.submit_item(
            self.device,
            Item::Cleanup(Box::new(move |i: &Inner| {
                if foreign {
                    drop(owner);
                    i.counters.releases.fetch_add(1, Ordering::SeqCst);
                } else if let Some(block) = lock(&i.memory).remove(&addr) {
                    // Poisoned, so a use after free reads garbage, not the old data.
                    lock(&block).fill(0xEE);
                    i.counters.frees.fetch_add(1, Ordering::SeqCst);
                }
            })),
        );
    }
}

impl DeviceBuffer for FakeBuf {
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
        256
    }
    fn address(&self) -> Address {
        Address::Device(self.addr)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// What a job needs of an input: its memory, where it is, and the view.
struct Input {
    device: usize,
    block: Block,
    start: usize,
    len: usize,
    ready: u64,
    layout: Layout,
    dtype: DType,
}

impl Inner {
    fn err(&self, message: impl Into<String>) -> Error {
        Error::Backend {
            backend: self.name.into(),
            message: message.into(),
        }
    }

    fn check_lost(&self, device: usize) -> Result<()> {
        match lock(
            self.lost
                .get(device)
                .ok_or_else(|| self.err("no such device"))?,
        )
        .as_ref()
        {
            Some(reason) => Err(Error::DeviceLost {
                device: format!("{}:{device}", self.name),
                reason: reason.clone(),
            }),
            None => Ok(()),
        }
    }

    fn submit_item(&self, device: usize, item: Item) -> u64 {
        let mut q = lock(&self.queues[device]);
        q.submitted += 1;
        let seq = q.submitted;
        q.items.push_back((seq, item));
        seq
    }

    fn submit(&self, device: usize, job: Job) -> u64 {
        self.submit_item(device, Item::Work(job))
    }

    /// Runs `device`'s queue up to and including job `seq` (the queue lock is not held while
    /// a job runs: jobs wait on other devices' queues).
    fn run_until(&self, device: usize, seq: u64) {
        loop {
            let next = {
                let mut q = lock(&self.queues[device]);
                match q.items.front() {
                    Some((s, _)) if *s <= seq => q.items.pop_front(),
                    _ => None,
                }
            };
            let Some((s, item)) = next else { return };
            match item {
                Item::Cleanup(f) => f(self),
                Item::Work(job) => {
                    let r = self
                        .check_lost(device)
                        .and_then(|_| self.before_job(device))
                        .and_then(|_| job(self));
                    self.counters.jobs_run.fetch_add(1, Ordering::SeqCst);
                    if let Err(e) = r {
                        lock(&self.errors[device]).get_or_insert(e);
                    }
                }
            }
            lock(&self.queues[device]).done = s;
        }
    }

    fn run_all(&self, device: usize) {
        let seq = lock(&self.queues[device]).submitted;
        self.run_until(device, seq);
    }

    /// Fault injection, checked as each job starts.
    fn before_job(&self, device: usize) -> Result<()> {
        let mut f = lock(&self.faults);
        if let Some(m) = f.fail_next.take() {
            return Err(self.err(m));
        }
        if let Some(n) = f.lose_after.as_mut() {
            if *n == 0 {
                f.lose_after = None;
                *lock(&self.lost[device]) = Some("injected device loss".into());
                return self.check_lost(device);
            }
            *n -= 1;
        }
        Ok(())
    }

    fn alloc(&self, device: usize, len: usize) -> Result<(u64, Block)> {
        self.check_lost(device)?;
        {
            let mut f = lock(&self.faults);
            if let Some(b) = f.budget.as_mut() {
                if len > *b {
                    return Err(Error::OutOfMemory {
                        device: format!("{}:{device}", self.name),
                        bytes: len as u128,
                        reason: "injected: the device is full".into(),
                    });
                }
                *b -= len;
            }
        }
        let block: Block = Arc::new(Mutex::new(vec![0; len]));
        // Far from any host mapping, 4 KiB apart.
        let addr = self
            .next_addr
            .fetch_add((len as u64).div_ceil(4096).max(1) * 4096, Ordering::SeqCst);
        lock(&self.memory).insert(addr, block.clone());
        self.counters.allocs.fetch_add(1, Ordering::SeqCst);
        Ok((addr, block))
    }

    fn buffer(&self, device: usize, addr: u64, len: usize, block: Block, ready: u64) -> FakeBuf {
        FakeBuf {
            device,
            addr,
            len,
            block,
            start: 0,
            ready,
            owner: None,
            backend: self.me.clone(),
        }
    }

    fn input(&self, t: TensorRef<'_>) -> Result<Input> {
        let b = t.buffer.as_any().downcast_ref::<FakeBuf>().ok_or_else(|| {
            self.err(format!("given a buffer of another backend: {:?}", t.buffer))
        })?;
        Ok(Input {
            device: b.device,
            block: b.block.clone(),
            start: b.start,
            len: b.len,
            ready: b.ready,
            layout: t.layout.clone(),
            dtype: t.dtype,
        })
    }

    /// Before a job on `device` reads `inputs`: the cross-device event waits (contract rule 2).
    fn order_inputs(&self, device: usize, inputs: &[&Input]) {
        for i in inputs {
            if i.device != device {
                let (src, ready) = (i.device, i.ready);
                self.submit(
                    device,
                    Box::new(move |inner: &Inner| {
                        inner.counters.waits.fetch_add(1, Ordering::SeqCst);
                        inner.run_until(src, ready);
                        Ok(())
                    }),
                );
            }
        }
    }

    /// An input's device bytes as a host buffer of the inner backend (as the job runs).
    fn stage(&self, i: &Input) -> Result<SharedBuffer> {
        let block = lock(&i.block);
        let bytes = block
            .get(i.start..i.start + i.len)
            .ok_or_else(|| self.err("input outside its memory block"))?;
        self.host.upload(0, MemoryKind::Device, bytes)
    }

    /// Queues `op` over `inputs` on `device`, writing `out_len` bytes of new device memory.
    fn launch(
        &self,
        device: usize,
        inputs: Vec<Input>,
        out_len: usize,
        op: impl FnOnce(&HostBackend, &[TensorRef<'_>]) -> Result<SharedBuffer> + Send + 'static,
    ) -> Result<SharedBuffer> {
        self.check_lost(device)?;
        let (addr, block) = self.alloc(device, out_len)?;
        self.order_inputs(device, &inputs.iter().collect::<Vec<_>>());
        let out = block.clone();
        let seq = self.submit(
            device,
            Box::new(move |inner: &Inner| {
                let staged = inputs
                    .iter()
                    .map(|i| inner.stage(i))
                    .collect::<Result<Vec<_>>>()?;
                let refs: Vec<TensorRef<'_>> = inputs
                    .iter()
                    .zip(&staged)
                    .map(|(i, b)| TensorRef {
                        buffer: &**b,
                        layout: &i.layout,
                        dtype: i.dtype,
                    })
                    .collect();
                let result = op(&inner.host, &refs)?;
                let n = result.len_bytes();
                let mut o = lock(&out);
                let dst = o
                    .get_mut(..n)
                    .ok_or_else(|| inner.err("output too small"))?;
                let flat = Layout::contiguous(&[n])?;
                inner.host.download(
                    TensorRef {
                        buffer: &*result,
                        layout: &flat,
                        dtype: DType::U8,
                    },
                    dst,
                )
            }),
        );
        Ok(SharedBuffer::new(
            self.buffer(device, addr, out_len, block, seq),
        ))
    }
}

static NEXT_BASE: AtomicU64 = AtomicU64::new(0xD1A0_0000_0000);

impl AsyncFake {
    /// A fake async backend called `name` with `devices` devices (not registered).
    pub fn new(name: &'static str, devices: usize) -> AsyncFake {
        let host = HostBackend::new(HostConfig {
            name,
            platform: "cpu",
            platform_version: "inner host".into(),
            device_count: 1,
            memory_kinds: vec![MemoryKind::Device],
            threads_per_device: 1,
            pool_bytes: 0,
            dlpack: vec![],
        })
        .expect("inner host backend");
        let inner = Arc::new_cyclic(|me| Inner {
            name,
            host,
            queues: (0..devices).map(|_| Mutex::default()).collect(),
            memory: Mutex::default(),
            next_addr: AtomicU64::new(NEXT_BASE.fetch_add(1 << 36, Ordering::SeqCst)),
            errors: (0..devices).map(|_| Mutex::default()).collect(),
            lost: (0..devices).map(|_| Mutex::default()).collect(),
            faults: Mutex::default(),
            stream_waits: Mutex::default(),
            counters: Counters::default(),
            me: me.clone(),
        });
        AsyncFake(inner)
    }

    pub fn counters(&self) -> &Counters {
        &self.0.counters
    }

    /// Jobs queued on `device` and not yet run.
    pub fn pending(&self, device: usize) -> usize {
        lock(&self.0.queues[device]).items.len()
    }

    /// Live device allocations (ours and producers').
    pub fn live_blocks(&self) -> usize {
        lock(&self.0.memory).len()
    }

    /// Allocations fail once `bytes` more have been allocated.
    pub fn set_budget(&self, bytes: Option<usize>) {
        lock(&self.0.faults).budget = bytes;
    }
    /// The device is lost when the job after the next `jobs` ones starts.
    pub fn lose_after(&self, jobs: usize) {
        lock(&self.0.faults).lose_after = Some(jobs);
    }
    /// The next job to run fails with `message` (an asynchronous error).
    pub fn fail_next_job(&self, message: &str) {
        lock(&self.0.faults).fail_next = Some(message.into());
    }
    /// Brings a lost device back (between tests sharing the registered backend).
    pub fn revive(&self, device: usize) {
        *lock(&self.0.lost[device]) = None;
        *lock(&self.0.faults) = Faults::default();
    }

    /// Another framework's allocation in the same runtime, holding `bytes`: its address.
    pub fn producer_alloc(&self, bytes: &[u8]) -> u64 {
        let (addr, block) = self.0.alloc(0, bytes.len()).expect("producer alloc");
        lock(&block).copy_from_slice(bytes);
        addr
    }

    /// Frees a producer allocation (what a DLPack deleter of that framework does).
    pub fn producer_free(&self, addr: u64) {
        lock(&self.0.memory).remove(&addr);
    }

    /// A consumer reading `len` bytes at device address `addr` on its stream `stream`: first
    /// whatever that stream was told to wait for runs, then the bytes are read as they are.
    pub fn read_on_stream(&self, stream: usize, addr: u64, len: usize) -> Vec<u8> {
        if let Some((device, seq)) = lock(&self.0.stream_waits).remove(&stream) {
            self.0.run_until(device, seq);
        }
        let memory = lock(&self.0.memory);
        let (&base, block) = memory.range(..=addr).next_back().expect("a fake address");
        let start = (addr - base) as usize;
        lock(block)[start..start + len].to_vec()
    }

    /// Registers this backend (once per name) and returns its devices.
    pub fn register(&self) -> Vec<Device> {
        match dlarray::register_backend(Arc::new(self.clone())) {
            Ok(devs) => devs,
            Err(_) => (0..self.0.queues.len())
                .map(|i| dlarray::get_device(&format!("{}:{i}", self.0.name)).expect("registered"))
                .collect(),
        }
    }
}

/// The one fake registered per test binary, with two devices.
pub fn async_fake() -> (&'static AsyncFake, Vec<Device>) {
    static FAKE: OnceLock<(AsyncFake, Vec<Device>)> = OnceLock::new();
    let (f, d) = FAKE.get_or_init(|| {
        let f = AsyncFake::new("fakeasync", 2);
        let d = f.register();
        (f, d)
    });
    (f, d.clone())
}

fn bytes_of(dtype: DType, elements: usize) -> usize {
    elements * dtype.size_in_bytes()
}

impl Backend for AsyncFake {
    fn name(&self) -> &str {
        self.0.name
    }
    fn platform(&self) -> &str {
        "gpu"
    }
    fn platform_version(&self) -> String {
        "fake-async 1 (dlarray test runtime)".into()
    }
    fn devices(&self) -> Vec<DeviceDesc> {
        (0..self.0.queues.len())
            .map(|index| DeviceDesc {
                index,
                local_hardware_id: Some(index as i32),
                memory_kinds: vec![MemoryKind::Device],
            })
            .collect()
    }

    fn upload(&self, device: usize, _: MemoryKind, bytes: &[u8]) -> Result<SharedBuffer> {
        let i = &self.0;
        let (addr, block) = i.alloc(device, bytes.len())?;
        // An async host-to-device copy from staging the call filled now.
        let staging = bytes.to_vec();
        let out = block.clone();
        let seq = i.submit(
            device,
            Box::new(move |_| {
                lock(&out).copy_from_slice(&staging);
                Ok(())
            }),
        );
        Ok(SharedBuffer::new(i.buffer(
            device,
            addr,
            bytes.len(),
            block,
            seq,
        )))
    }

    fn fill(
        &self,
        device: usize,
        kind: MemoryKind,
        dtype: DType,
        value: Scalar,
        len: usize,
    ) -> Result<SharedBuffer> {
        let i = &self.0;
        let n = bytes_of(dtype, len);
        let (addr, block) = i.alloc(device, n)?;
        let out = block.clone();
        let seq = i.submit(
            device,
            Box::new(move |inner: &Inner| {
                let b = inner.host.fill(0, kind, dtype, value, len)?;
                let flat = Layout::contiguous(&[n])?;
                let t = TensorRef {
                    buffer: &*b,
                    layout: &flat,
                    dtype: DType::U8,
                };
                inner.host.download(t, &mut lock(&out))
            }),
        );
        Ok(SharedBuffer::new(i.buffer(device, addr, n, block, seq)))
    }

    fn download(&self, src: TensorRef<'_>, dst: &mut [u8]) -> Result<()> {
        let i = &self.0;
        let input = i.input(src)?;
        // Contract rule 3: wait for the job producing the source only.
        i.counters.waits.fetch_add(1, Ordering::SeqCst);
        i.run_until(input.device, input.ready);
        i.check_lost(input.device)?;
        let staged = i.stage(&input)?;
        i.host.download(
            TensorRef {
                buffer: &*staged,
                layout: &input.layout,
                dtype: input.dtype,
            },
            dst,
        )
    }

    fn copy(&self, src: TensorRef<'_>, device: usize, _: MemoryKind) -> Result<SharedBuffer> {
        let input = self.0.input(src)?;
        let n = bytes_of(input.dtype, input.layout.size());
        self.0.launch(device, vec![input], n, |h, t| {
            h.copy(t[0], 0, MemoryKind::Device)
        })
    }

    fn unary(&self, op: UnaryOp, x: TensorRef<'_>, out: DType) -> Result<SharedBuffer> {
        let input = self.0.input(x)?;
        let n = bytes_of(out, input.layout.size());
        self.0.launch(input.device, vec![input], n, move |h, t| {
            h.unary(op, t[0], out)
        })
    }

    fn binary(
        &self,
        op: BinaryOp,
        a: TensorRef<'_>,
        b: TensorRef<'_>,
        out: DType,
    ) -> Result<SharedBuffer> {
        let (ia, ib) = (self.0.input(a)?, self.0.input(b)?);
        let n = bytes_of(out, ia.layout.size());
        let device = ia.device;
        self.0.launch(device, vec![ia, ib], n, move |h, t| {
            h.binary(op, t[0], t[1], out)
        })
    }

    fn reduce(&self, op: ReduceOp, x: TensorRef<'_>, axes: &[usize]) -> Result<SharedBuffer> {
        let input = self.0.input(x)?;
        let kept: usize = (0..input.layout.ndim())
            .filter(|k| !axes.contains(k))
            .map(|k| input.layout.shape()[k])
            .product();
        let n = bytes_of(input.dtype, kept);
        let axes = axes.to_vec();
        self.0.launch(input.device, vec![input], n, move |h, t| {
            h.reduce(op, t[0], &axes)
        })
    }

    fn matmul(&self, a: TensorRef<'_>, b: TensorRef<'_>) -> Result<SharedBuffer> {
        let (ia, ib) = (self.0.input(a)?, self.0.input(b)?);
        let (sa, sb) = (ia.layout.shape(), ib.layout.shape());
        let nd = sa.len();
        let mut out = sa.to_vec();
        out[nd - 1] = sb[nd - 1];
        let n = bytes_of(ia.dtype, dlarray::layout::checked_size(&out)?);
        let device = ia.device;
        self.0
            .launch(device, vec![ia, ib], n, |h, t| h.matmul(t[0], t[1]))
    }

    fn cast(&self, x: TensorRef<'_>, to: DType) -> Result<SharedBuffer> {
        let input = self.0.input(x)?;
        let n = bytes_of(to, input.layout.size());
        self.0
            .launch(input.device, vec![input], n, move |h, t| h.cast(t[0], to))
    }

    fn synchronize(&self, device: usize) -> Result<()> {
        let i = &self.0;
        i.counters.syncs.fetch_add(1, Ordering::SeqCst);
        i.run_all(device);
        // Contract rule 4: the first asynchronous error since the last call, then cleared;
        // a lost device keeps failing.
        if let Some(e) = lock(&i.errors[device]).take() {
            return Err(e);
        }
        i.check_lost(device)
    }

    unsafe fn wrap_foreign(
        &self,
        device: usize,
        _: MemoryKind,
        address: Address,
        len: usize,
        owner: Owner,
    ) -> Result<SharedBuffer> {
        let i = &self.0;
        let Address::Device(addr) = address else {
            return Err(i.err(format!("cannot wrap {address:?}: not device memory")));
        };
        let memory = lock(&i.memory);
        let (&base, block) = memory
            .range(..=addr)
            .next_back()
            .filter(|(b, blk)| addr + len as u64 <= **b + lock(blk).len() as u64)
            .ok_or_else(|| i.err(format!("{addr:#x}+{len} is not fake device memory")))?;
        Ok(SharedBuffer::new(FakeBuf {
            device,
            addr,
            len,
            block: block.clone(),
            start: (addr - base) as usize,
            ready: 0,
            owner: Some(owner),
            backend: i.me.clone(),
        }))
    }

    fn dlpack_capability(&self, _: usize, _: MemoryKind) -> Option<DlpackCapability> {
        Some(DlpackCapability {
            device_type: Some(DLDeviceType::kDLCUDA),
            streams: StreamConvention::Cuda,
        })
    }

    fn dlpack_export_sync(&self, buffer: &dyn DeviceBuffer, sync: ExportSync) -> Result<()> {
        let i = &self.0;
        let b = buffer
            .as_any()
            .downcast_ref::<FakeBuf>()
            .ok_or_else(|| i.err("export of a foreign buffer type"))?;
        i.check_lost(b.device)?;
        let stream = match sync {
            ExportSync::Skip => return Ok(()),
            ExportSync::Wait => {
                i.run_until(b.device, b.ready);
                return Ok(());
            }
            ExportSync::LegacyDefault | ExportSync::Default => 1,
            ExportSync::PerThreadDefault => 2,
            ExportSync::Stream(h) => h,
        };
        // An event at the buffer's job, waited on by the consumer's stream.
        i.counters.waits.fetch_add(1, Ordering::SeqCst);
        lock(&i.stream_waits).insert(stream, (b.device, b.ready));
        Ok(())
    }

    fn dlpack_work_stream(&self, device: usize) -> Option<usize> {
        Some(0x5000 + device)
    }

    unsafe fn dlpack_wait_for_producer(&self, _: usize, _: Option<usize>) -> Result<()> {
        self.0
            .counters
            .producer_waits
            .fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}
