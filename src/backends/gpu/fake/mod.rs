//! [`FakeDriver`]: a GPU [`Driver`] without a GPU, on which the whole shared runtime (and
//! each backend's own logic over it) is tested.
//!
//! - **Memory**: device memory is host memory behind addresses that are *not* host
//!   pointers (non-canonical, so a host dereference faults); pinned memory is real host
//!   memory. An address outside every live block is CUDA's illegal address: sticky.
//! - **Queues run only at a wait**: work is queued per stream and runs when someone
//!   synchronises a stream or an event, or waits on one. A missing event wait shows up as
//!   stale data, and a use after a stream-ordered free as an illegal address.
//! - **Kernels run on the CPU backend**: a launch unpacks the same parameter words the
//!   generated source reads, builds the layouts from them, and computes with the CPU
//!   backend's kernels (the reference semantics), so packing errors fail tests.
//! - **Faults**: a memory budget (out of memory), device loss after N launches, a failing
//!   kernel at run time, failing kernel loads.
//! - **Counters**: allocations, frees, launches, loads, synchronisations, waits.

mod exec;

use super::driver::{
    DeviceInfo, Driver, DriverDlpack, DriverError, DriverErrorKind, DriverResult, EventHandle,
    FunctionHandle, KernelArg, LaunchDims, StreamHandle,
};
use super::kernel::{KernelSource, KernelSpec};
use crate::dlpack::ffi::DLDeviceType;
use crate::dlpack::stream::StreamConvention;
use std::alloc::Layout as AllocLayout;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ptr::NonNull;
use std::sync::{Mutex, MutexGuard};

/// First fake device address: non-canonical on x86-64 and AArch64, so never a host pointer.
const DEVICE_BASE: u64 = 0xdead_0000_0000_0000;
const ALIGN: usize = 256;

/// What the fake has done, for tests to assert on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FakeCounters {
    /// `mem_alloc` calls that returned memory.
    pub device_allocs: usize,
    /// Stream-ordered frees that have run.
    pub device_frees: usize,
    /// Pinned blocks allocated.
    pub host_allocs: usize,
    /// Pinned blocks freed.
    pub host_frees: usize,
    /// Kernels loaded (compiled).
    pub kernel_loads: usize,
    /// Launches queued.
    pub launches_queued: usize,
    /// Launches that have run.
    pub launches_run: usize,
    /// Copies that have run.
    pub copies_run: usize,
    /// Stream and event synchronisations.
    pub synchronizations: usize,
    /// `stream_wait_event` calls.
    pub stream_waits: usize,
    /// BLAS GEMMs queued.
    pub gemms_queued: usize,
    /// BLAS GEMMs that have run.
    pub gemms_run: usize,
}

enum Op {
    Copy {
        dst: u64,
        src: u64,
        bytes: usize,
    },
    Launch {
        spec: KernelSpec,
        args: Vec<KernelArg>,
    },
    /// Waits for `stream` to have run `seq` ops.
    Wait {
        stream: u64,
        seq: u64,
    },
    Free {
        ptr: u64,
    },
    /// A BLAS GEMM (column-major, strided-batched).
    Gemm(crate::backends::gpu::blas::Gemm),
    /// A producer's write (test helper): `bytes` to `dst`.
    Write {
        dst: u64,
        bytes: Vec<u8>,
    },
}

#[derive(Default)]
struct Queue {
    device: usize,
    ops: VecDeque<Op>,
    /// Ops queued / run so far.
    queued: u64,
    run: u64,
}

struct Block {
    device: usize,
    ptr: NonNull<u8>,
    len: usize,
    /// `false` for memory a test "producer" owns (not counted as the runtime's).
    runtime: bool,
}

struct State {
    next_device: u64,
    next_handle: u64,
    /// Device memory by fake address; pinned memory by host address.
    device: BTreeMap<u64, Block>,
    pinned: BTreeMap<u64, Block>,
    streams: HashMap<u64, Queue>,
    events: HashMap<u64, (u64, u64)>,
    kernels: HashMap<u64, KernelSpec>,
    counters: FakeCounters,
    lost: Vec<Option<String>>,
    /// The first failure of queued work per device, reported by the next synchronising call.
    async_error: Vec<Option<DriverError>>,
    budget: Vec<Option<usize>>,
    lose_after: Vec<Option<usize>>,
    /// Copies a device still queues before it is lost (at the next one).
    copies_left: Vec<Option<usize>>,
    fail_next_run: Option<DriverErrorKind>,
    fail_loads: bool,
    /// No BLAS library: matmul takes the generated kernel.
    no_blas: bool,
}

// SAFETY: the raw pointers are owned allocations only touched under the state's mutex.
unsafe impl Send for State {}

/// The fake GPU runtime (see the module docs).
pub struct FakeDriver {
    name: &'static str,
    devices: usize,
    state: Mutex<State>,
}

fn err(kind: DriverErrorKind, call: &'static str, msg: impl Into<String>) -> DriverError {
    DriverError::new(kind, call, msg)
}

fn alloc_host(len: usize) -> Option<NonNull<u8>> {
    let layout = AllocLayout::from_size_align(len.max(1), ALIGN).ok()?;
    // SAFETY: the layout has a non-zero size.
    NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) })
}

/// # Safety
/// `ptr` came from `alloc_host(len)`.
unsafe fn free_host(ptr: NonNull<u8>, len: usize) {
    if let Ok(layout) = AllocLayout::from_size_align(len.max(1), ALIGN) {
        // SAFETY: allocated with this layout by `alloc_host`.
        unsafe { std::alloc::dealloc(ptr.as_ptr(), layout) };
    }
}

impl State {
    fn live_device_bytes(&self, device: usize) -> usize {
        self.device
            .values()
            .filter(|b| b.device == device && b.runtime)
            .map(|b| b.len)
            .sum()
    }

    /// The host pointer behind unified address `addr` for `len` bytes.
    fn resolve(&self, addr: u64, len: usize) -> Result<*mut u8, String> {
        for map in [&self.device, &self.pinned] {
            if let Some((&start, b)) = map.range(..=addr).next_back()
                && addr - start + len as u64 <= b.len as u64
            {
                // SAFETY: inside the block (checked just above).
                return Ok(unsafe { b.ptr.as_ptr().add((addr - start) as usize) });
            }
        }
        Err(format!(
            "CUDA_ERROR_ILLEGAL_ADDRESS: {len} bytes at {addr:#x} are not in a live allocation"
        ))
    }

    /// The bytes available from `addr` to the end of its block.
    fn extent(&self, addr: u64) -> Option<usize> {
        for map in [&self.device, &self.pinned] {
            if let Some((&start, b)) = map.range(..=addr).next_back()
                && addr - start < b.len.max(1) as u64
            {
                return Some(b.len - (addr - start) as usize);
            }
        }
        None
    }

    fn queue(&mut self, stream: u64, device: usize) -> &mut Queue {
        self.streams.entry(stream).or_insert_with(|| Queue {
            device,
            ..Queue::default()
        })
    }

    fn push(&mut self, device: usize, stream: u64, op: Op) {
        let q = self.queue(stream, device);
        q.ops.push_back(op);
        q.queued += 1;
    }

    /// Runs `stream` until it has run `seq` ops (all of them for `u64::MAX`).
    fn run(&mut self, stream: u64, seq: u64) {
        loop {
            let Some(q) = self.streams.get_mut(&stream) else {
                return;
            };
            if q.run >= seq {
                return;
            }
            let device = q.device;
            let Some(op) = q.ops.pop_front() else {
                return;
            };
            q.run += 1;
            self.execute(device, op);
        }
    }

    fn fail_async(&mut self, device: usize, e: DriverError) {
        if e.kind == DriverErrorKind::DeviceLost && self.lost[device].is_none() {
            self.lost[device] = Some(e.message.clone());
        }
        self.async_error[device].get_or_insert(e);
    }

    fn execute(&mut self, device: usize, op: Op) {
        if self.lost[device].is_some() {
            return;
        }
        match op {
            Op::Wait { stream, seq } => self.run(stream, seq),
            Op::Copy { dst, src, bytes } => {
                self.counters.copies_run += 1;
                match (self.resolve(src, bytes), self.resolve(dst, bytes)) {
                    // SAFETY: both ranges lie inside live blocks; `copy` allows overlap.
                    (Ok(s), Ok(d)) => unsafe { std::ptr::copy(s, d, bytes) },
                    (Err(m), _) | (_, Err(m)) => {
                        self.fail_async(device, err(DriverErrorKind::DeviceLost, "memcpy", m))
                    }
                }
            }
            Op::Write { dst, bytes } => match self.resolve(dst, bytes.len()) {
                // SAFETY: the range lies inside a live block.
                Ok(d) => unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), d, bytes.len()) },
                Err(m) => self.fail_async(device, err(DriverErrorKind::DeviceLost, "write", m)),
            },
            Op::Free { ptr } => {
                if let Some(b) = self.device.remove(&ptr) {
                    self.counters.device_frees += 1;
                    // SAFETY: the block was allocated by `alloc_host(b.len)`.
                    unsafe { free_host(b.ptr, b.len) };
                }
            }
            Op::Gemm(g) => {
                self.counters.gemms_run += 1;
                if let Err(m) = exec::gemm(self, &g) {
                    self.fail_async(device, err(DriverErrorKind::DeviceLost, "gemm", m));
                }
            }
            Op::Launch { spec, args } => {
                self.counters.launches_run += 1;
                if let Some(n) = self.lose_after[device]
                    && self.counters.launches_run > n
                {
                    self.fail_async(
                        device,
                        err(
                            DriverErrorKind::DeviceLost,
                            "kernel",
                            "CUDA_ERROR_LAUNCH_FAILED (injected)",
                        ),
                    );
                    return;
                }
                if let Some(kind) = self.fail_next_run.take() {
                    self.fail_async(
                        device,
                        err(kind, "kernel", "injected failure of a queued kernel"),
                    );
                    return;
                }
                if let Err(m) = exec::run(self, spec, &args) {
                    self.fail_async(device, err(DriverErrorKind::DeviceLost, "kernel", m));
                }
            }
        }
    }
}

impl FakeDriver {
    /// A runtime named `name` (the backend's name) with `devices` devices of 1 GiB each.
    pub fn new(name: &'static str, devices: usize) -> FakeDriver {
        FakeDriver {
            name,
            devices,
            state: Mutex::new(State {
                next_device: DEVICE_BASE,
                next_handle: 16,
                device: BTreeMap::new(),
                pinned: BTreeMap::new(),
                streams: HashMap::new(),
                events: HashMap::new(),
                kernels: HashMap::new(),
                counters: FakeCounters::default(),
                lost: vec![None; devices],
                async_error: vec![None; devices],
                budget: vec![None; devices],
                lose_after: vec![None; devices],
                copies_left: vec![None; devices],
                fail_next_run: None,
                fail_loads: false,
                no_blas: false,
            }),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn live(&self, s: &State, device: usize, call: &'static str) -> DriverResult<()> {
        match s.lost.get(device) {
            Some(Some(m)) => Err(err(DriverErrorKind::DeviceLost, call, m.clone())),
            Some(None) => Ok(()),
            None => Err(err(
                DriverErrorKind::Other,
                call,
                format!("no device {device}"),
            )),
        }
    }

    /// The first asynchronous failure on `device`, taken.
    fn take_async(&self, s: &mut State, device: usize) -> DriverResult<()> {
        match s.async_error.get_mut(device).and_then(Option::take) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    // ---- test controls ----

    /// What the fake has done so far.
    pub fn counters(&self) -> FakeCounters {
        self.state().counters.clone()
    }
    /// Device bytes the runtime holds on `device` (cached blocks included).
    pub fn live_device_bytes(&self, device: usize) -> usize {
        self.state().live_device_bytes(device)
    }
    /// Pinned blocks alive.
    pub fn live_pinned_blocks(&self) -> usize {
        self.state().pinned.len()
    }
    /// Ops queued on `stream` and not yet run.
    pub fn pending(&self, stream: StreamHandle) -> usize {
        self.state()
            .streams
            .get(&stream.0)
            .map_or(0, |q| q.ops.len())
    }
    /// Allocations on `device` fail once the runtime would hold more than `bytes`.
    pub fn set_budget(&self, device: usize, bytes: Option<usize>) {
        self.state().budget[device] = bytes;
    }
    /// The device is lost at the run of launch number `launches + 1` (counted over all
    /// devices from the start).
    pub fn lose_device_after(&self, device: usize, launches: usize) {
        self.state().lose_after[device] = Some(launches);
    }
    /// The device is lost when the runtime queues a copy on it after `copies` more.
    pub fn lose_device_after_copies(&self, device: usize, copies: usize) {
        self.state().copies_left[device] = Some(copies);
    }
    /// The next kernel to run fails with `kind`.
    pub fn fail_next_run(&self, kind: DriverErrorKind) {
        self.state().fail_next_run = Some(kind);
    }
    /// The runtime has no BLAS library (a machine without cuBLAS).
    pub fn without_blas(&self, none: bool) {
        self.state().no_blas = none;
    }
    /// Kernel loads fail (a compiler error, a missing NVRTC).
    pub fn fail_kernel_loads(&self, fail: bool) {
        self.state().fail_loads = fail;
    }
    /// Device memory a "producer" (another framework) owns, holding `bytes`.
    pub fn producer_alloc(&self, device: usize, bytes: &[u8]) -> u64 {
        let mut s = self.state();
        let len = bytes.len().max(1);
        let ptr = alloc_host(len).unwrap_or(NonNull::dangling());
        // SAFETY: a fresh block of at least `bytes.len()` bytes.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr.as_ptr(), bytes.len()) };
        let addr = s.next_device;
        s.next_device += (len as u64).div_ceil(ALIGN as u64) * ALIGN as u64 + ALIGN as u64;
        s.device.insert(
            addr,
            Block {
                device,
                ptr,
                len,
                runtime: false,
            },
        );
        addr
    }
    /// Frees a producer's memory now (what its deleter does).
    pub fn producer_free(&self, addr: u64) {
        if let Some(b) = self.state().device.remove(&addr) {
            // SAFETY: allocated by `alloc_host(b.len)`.
            unsafe { free_host(b.ptr, b.len) };
        }
    }
    /// A stream of another framework on `device`.
    pub fn producer_stream(&self, device: usize) -> StreamHandle {
        let mut s = self.state();
        s.next_handle += 1;
        let h = s.next_handle;
        s.queue(h, device);
        StreamHandle(h)
    }
    /// Queues a write of `bytes` at `addr` on `stream` (a producer's kernel).
    pub fn queue_write(&self, stream: StreamHandle, addr: u64, bytes: &[u8]) {
        let mut s = self.state();
        let device = s.streams.get(&stream.0).map_or(0, |q| q.device);
        s.push(
            device,
            stream.0,
            Op::Write {
                dst: addr,
                bytes: bytes.to_vec(),
            },
        );
    }
    /// What a consumer on `stream` reads at `addr`: the stream's queue runs first (so the
    /// waits queued on it are honoured, and only those).
    pub fn read_on_stream(
        &self,
        stream: StreamHandle,
        addr: u64,
        len: usize,
    ) -> Result<Vec<u8>, String> {
        let mut s = self.state();
        s.run(stream.0, u64::MAX);
        let p = s.resolve(addr, len)?;
        // SAFETY: `resolve` checked the range lies in a live block.
        Ok(unsafe { std::slice::from_raw_parts(p, len) }.to_vec())
    }
}

impl Drop for FakeDriver {
    fn drop(&mut self) {
        let s = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        for (_, b) in std::mem::take(&mut s.device)
            .into_iter()
            .chain(std::mem::take(&mut s.pinned))
        {
            // SAFETY: every block came from `alloc_host(b.len)`.
            unsafe { free_host(b.ptr, b.len) };
        }
    }
}

impl Driver for FakeDriver {
    fn runtime(&self) -> &'static str {
        self.name
    }
    fn platform_version(&self) -> String {
        "cuda 12.8 (fake driver)".into()
    }
    fn dlpack(&self) -> DriverDlpack {
        DriverDlpack {
            device: DLDeviceType::kDLCUDA,
            pinned_host: Some(DLDeviceType::kDLCUDAHost),
            streams: StreamConvention::Cuda,
        }
    }
    fn device_count(&self) -> usize {
        self.devices
    }
    fn device_info(&self, device: usize) -> DeviceInfo {
        DeviceInfo {
            name: format!("fake GPU {device}"),
            ordinal: device as i32,
            total_memory: 1 << 30,
            max_threads_per_block: 1024,
            // Small, so that tests reach the grid-stride loops.
            max_grid_x: 64,
            multiprocessors: 2,
        }
    }
    fn stream_create(&self, device: usize) -> DriverResult<StreamHandle> {
        let mut s = self.state();
        self.live(&s, device, "cuStreamCreate")?;
        s.next_handle += 1;
        let h = s.next_handle;
        s.queue(h, device);
        Ok(StreamHandle(h))
    }
    fn stream_synchronize(&self, device: usize, stream: StreamHandle) -> DriverResult<()> {
        let mut s = self.state();
        self.live(&s, device, "cuStreamSynchronize")?;
        s.counters.synchronizations += 1;
        s.run(stream.0, u64::MAX);
        self.take_async(&mut s, device)?;
        self.live(&s, device, "cuStreamSynchronize")
    }
    fn event_record(&self, device: usize, stream: StreamHandle) -> DriverResult<EventHandle> {
        let mut s = self.state();
        self.live(&s, device, "cuEventRecord")?;
        let seq = s.queue(stream.0, device).queued;
        s.next_handle += 1;
        let h = s.next_handle;
        s.events.insert(h, (stream.0, seq));
        Ok(EventHandle(h))
    }
    fn event_query(&self, device: usize, event: EventHandle) -> DriverResult<bool> {
        let s = self.state();
        self.live(&s, device, "cuEventQuery")?;
        let &(stream, seq) = s
            .events
            .get(&event.0)
            .ok_or_else(|| err(DriverErrorKind::Other, "cuEventQuery", "unknown event"))?;
        Ok(s.streams.get(&stream).is_none_or(|q| q.run >= seq))
    }
    fn event_synchronize(&self, device: usize, event: EventHandle) -> DriverResult<()> {
        let mut s = self.state();
        self.live(&s, device, "cuEventSynchronize")?;
        s.counters.synchronizations += 1;
        let &(stream, seq) = s.events.get(&event.0).ok_or_else(|| {
            err(
                DriverErrorKind::Other,
                "cuEventSynchronize",
                "unknown event",
            )
        })?;
        s.run(stream, seq);
        self.take_async(&mut s, device)?;
        self.live(&s, device, "cuEventSynchronize")
    }
    fn event_destroy(&self, _device: usize, event: EventHandle) {
        self.state().events.remove(&event.0);
    }
    fn stream_wait_event(
        &self,
        device: usize,
        stream: StreamHandle,
        event: EventHandle,
    ) -> DriverResult<()> {
        let mut s = self.state();
        self.live(&s, device, "cuStreamWaitEvent")?;
        let &(on, seq) = s
            .events
            .get(&event.0)
            .ok_or_else(|| err(DriverErrorKind::Other, "cuStreamWaitEvent", "unknown event"))?;
        s.counters.stream_waits += 1;
        s.push(device, stream.0, Op::Wait { stream: on, seq });
        Ok(())
    }
    fn mem_alloc(&self, device: usize, _stream: StreamHandle, bytes: usize) -> DriverResult<u64> {
        let mut s = self.state();
        self.live(&s, device, "cuMemAllocAsync")?;
        let oom = || {
            err(
                DriverErrorKind::OutOfMemory,
                "cuMemAllocAsync",
                "CUDA_ERROR_OUT_OF_MEMORY: out of memory",
            )
        };
        let limit = s.budget[device].unwrap_or(1 << 30);
        if s.live_device_bytes(device).saturating_add(bytes) > limit {
            return Err(oom());
        }
        let ptr = alloc_host(bytes).ok_or_else(oom)?;
        let addr = s.next_device;
        s.next_device += (bytes.max(1) as u64).div_ceil(ALIGN as u64) * ALIGN as u64 + ALIGN as u64;
        s.device.insert(
            addr,
            Block {
                device,
                ptr,
                len: bytes,
                runtime: true,
            },
        );
        s.counters.device_allocs += 1;
        Ok(addr)
    }
    fn mem_free(&self, device: usize, stream: StreamHandle, ptr: u64) -> DriverResult<()> {
        let mut s = self.state();
        self.live(&s, device, "cuMemFreeAsync")?;
        s.push(device, stream.0, Op::Free { ptr });
        Ok(())
    }
    fn host_alloc(&self, bytes: usize) -> DriverResult<NonNull<u8>> {
        let mut s = self.state();
        let p = alloc_host(bytes).ok_or_else(|| {
            err(
                DriverErrorKind::OutOfMemory,
                "cuMemHostAlloc",
                "out of host memory",
            )
        })?;
        s.pinned.insert(
            p.as_ptr() as u64,
            Block {
                device: 0,
                ptr: p,
                len: bytes,
                runtime: true,
            },
        );
        s.counters.host_allocs += 1;
        Ok(p)
    }
    unsafe fn host_free(&self, ptr: NonNull<u8>, _bytes: usize) {
        let mut s = self.state();
        if let Some(b) = s.pinned.remove(&(ptr.as_ptr() as u64)) {
            s.counters.host_frees += 1;
            // SAFETY: allocated by `alloc_host(b.len)`.
            unsafe { free_host(b.ptr, b.len) };
        }
    }
    unsafe fn memcpy(
        &self,
        device: usize,
        stream: StreamHandle,
        dst: u64,
        src: u64,
        bytes: usize,
    ) -> DriverResult<()> {
        let mut s = self.state();
        if let Some(left) = s.copies_left[device] {
            if left == 0 {
                s.copies_left[device] = None;
                s.lost[device] = Some("CUDA_ERROR_LAUNCH_FAILED (injected during a copy)".into());
            } else {
                s.copies_left[device] = Some(left - 1);
            }
        }
        self.live(&s, device, "cuMemcpyAsync")?;
        s.push(device, stream.0, Op::Copy { dst, src, bytes });
        Ok(())
    }
    fn load_kernel(&self, device: usize, source: &KernelSource) -> DriverResult<FunctionHandle> {
        let mut s = self.state();
        self.live(&s, device, "nvrtcCompileProgram")?;
        if s.fail_loads {
            return Err(err(
                DriverErrorKind::Other,
                "nvrtcCompileProgram",
                "NVRTC_ERROR_COMPILATION (injected)",
            ));
        }
        if !source.source.contains(&format!("void {}(", source.entry)) {
            return Err(err(
                DriverErrorKind::Other,
                "cuModuleGetFunction",
                format!("CUDA_ERROR_NOT_FOUND: no entry point {}", source.entry),
            ));
        }
        s.counters.kernel_loads += 1;
        s.next_handle += 1;
        let h = s.next_handle;
        s.kernels.insert(h, source.spec);
        Ok(FunctionHandle(h))
    }
    unsafe fn launch(
        &self,
        device: usize,
        stream: StreamHandle,
        function: FunctionHandle,
        dims: LaunchDims,
        args: &[KernelArg],
    ) -> DriverResult<()> {
        let mut s = self.state();
        self.live(&s, device, "cuLaunchKernel")?;
        let spec = *s.kernels.get(&function.0).ok_or_else(|| {
            err(
                DriverErrorKind::Other,
                "cuLaunchKernel",
                "CUDA_ERROR_INVALID_HANDLE",
            )
        })?;
        if dims.block == 0
            || dims.grid.contains(&0)
            || dims.grid[0] > self.device_info(device).max_grid_x
        {
            return Err(err(
                DriverErrorKind::Other,
                "cuLaunchKernel",
                format!("CUDA_ERROR_INVALID_VALUE: launch dimensions {dims:?}"),
            ));
        }
        s.counters.launches_queued += 1;
        s.push(
            device,
            stream.0,
            Op::Launch {
                spec,
                args: args.to_vec(),
            },
        );
        Ok(())
    }
    unsafe fn gemm(
        &self,
        device: usize,
        stream: StreamHandle,
        g: &crate::backends::gpu::blas::Gemm,
    ) -> Option<DriverResult<()>> {
        let mut s = self.state();
        if s.no_blas || !crate::backends::gpu::blas::blas_dtype(g.dtype) {
            return None;
        }
        if let Err(e) = self.live(&s, device, "cublasGemmStridedBatchedEx") {
            return Some(Err(e));
        }
        s.counters.gemms_queued += 1;
        s.push(device, stream.0, Op::Gemm(*g));
        Some(Ok(()))
    }
    fn blas(&self, _device: usize) -> Result<String, String> {
        if self.state().no_blas {
            Err("the fake runtime was set up without BLAS".into())
        } else {
            Ok("the fake runtime's GEMM".into())
        }
    }
    fn device_of_pointer(&self, ptr: u64) -> Option<usize> {
        let s = self.state();
        let (&start, b) = s.device.range(..=ptr).next_back()?;
        (ptr - start < b.len.max(1) as u64).then_some(b.device)
    }
}
