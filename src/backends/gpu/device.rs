//! [`DeviceState`]: one device of a GPU backend: its streams, pools, kernel cache, deferred
//! releases and health, and the mapping of driver errors onto [`Error`].

use super::codegen;
use super::deferred::{Deferred, take_passed};
use super::driver::{
    DeviceInfo, Driver, DriverError, DriverErrorKind, EventHandle, FunctionHandle, StreamHandle,
};
use super::kernel::KernelSpec;
use super::memory::{DevicePool, PinnedPool, lock};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub(crate) struct DeviceState<D: Driver> {
    pub driver: Arc<D>,
    pub index: usize,
    /// `cuda:0`: what errors name.
    pub name: String,
    pub info: DeviceInfo,
    /// Where every kernel and every copy into device memory runs.
    pub stream: StreamHandle,
    /// Downloads: they wait for their source's event only, not for the compute queue.
    pub copy_stream: StreamHandle,
    pub pool: Mutex<DevicePool>,
    pub pinned: Arc<PinnedPool<D>>,
    pub deferred: Mutex<Vec<Deferred>>,
    /// The piece size of transfers from and to host memory that is not pinned.
    pub staging_piece: usize,
    kernels: Mutex<HashMap<KernelSpec, FunctionHandle>>,
    /// Set once the device is lost; every later call fails with it.
    lost: Mutex<Option<String>>,
}

impl<D: Driver> DeviceState<D> {
    pub fn new(
        driver: Arc<D>,
        index: usize,
        pinned: Arc<PinnedPool<D>>,
        pool_limit: usize,
        staging_piece: usize,
    ) -> std::result::Result<DeviceState<D>, DriverError> {
        let info = driver.device_info(index);
        let stream = driver.stream_create(index)?;
        let copy_stream = driver.stream_create(index)?;
        Ok(DeviceState {
            name: format!("{}:{index}", driver.runtime()),
            driver,
            index,
            info,
            stream,
            copy_stream,
            pool: Mutex::new(DevicePool::new(pool_limit)),
            pinned,
            deferred: Mutex::new(Vec::new()),
            staging_piece,
            kernels: Mutex::new(HashMap::new()),
            lost: Mutex::new(None),
        })
    }

    pub fn backend(&self) -> &'static str {
        self.driver.runtime()
    }

    /// Fails when the device was lost.
    pub fn check(&self) -> Result<()> {
        match &*lock(&self.lost) {
            Some(reason) => Err(Error::DeviceLost {
                device: self.name.clone(),
                reason: reason.clone(),
            }),
            None => Ok(()),
        }
    }

    /// The [`Error`] for a failed driver call that wanted `bytes` (0 when not allocating).
    pub fn fail(&self, e: DriverError, bytes: usize) -> Error {
        match e.kind {
            DriverErrorKind::OutOfMemory => Error::OutOfMemory {
                device: self.name.clone(),
                bytes: bytes as u128,
                reason: e.to_string(),
            },
            DriverErrorKind::DeviceLost => {
                let reason = e.to_string();
                lock(&self.lost).get_or_insert_with(|| reason.clone());
                Error::DeviceLost {
                    device: self.name.clone(),
                    reason,
                }
            }
            DriverErrorKind::Other => Error::Backend {
                backend: self.backend().to_string(),
                message: format!("{}: {e}", self.name),
            },
        }
    }

    /// A driver call's result as a crate result.
    pub fn ok<T>(&self, r: std::result::Result<T, DriverError>) -> Result<T> {
        r.map_err(|e| self.fail(e, 0))
    }

    /// The loaded kernel for `spec`, generated and compiled on first use.
    pub fn kernel(&self, spec: KernelSpec, op: &str) -> Result<FunctionHandle> {
        let mut cache = lock(&self.kernels);
        if let Some(&f) = cache.get(&spec) {
            return Ok(f);
        }
        let dtype = match spec {
            KernelSpec::Map { input, .. } | KernelSpec::Reduce { input, .. } => input,
            KernelSpec::Fill { dtype } | KernelSpec::Matmul { dtype, .. } => dtype,
            KernelSpec::Threefry { .. } => crate::dtype::DType::U32,
        };
        let source =
            codegen::generate(spec).ok_or_else(|| Error::unsupported(self.backend(), op, dtype))?;
        let f = self.ok(self.driver.load_kernel(self.index, &source))?;
        cache.insert(spec, f);
        Ok(f)
    }

    /// An event after the work queued so far on the compute stream.
    pub fn record(&self) -> Result<EventHandle> {
        self.ok(self.driver.event_record(self.index, self.stream))
    }

    /// Queues `release` to be dropped once the compute stream passes this point.
    pub fn defer(&self, release: Box<dyn Send>) {
        // A lost device records no event: nothing will read the memory again.
        let event = self.driver.event_record(self.index, self.stream).ok();
        lock(&self.deferred).push(Deferred { event, release });
    }

    /// A pinned block of at least `bytes`, with its class. Blocks this device released wait in
    /// the deferred queue until their event passes: the queue is pumped first, so a loop of
    /// transfers reuses its own blocks instead of pinning new memory (pinning costs ~10x the
    /// copy).
    pub fn pinned_alloc(&self, bytes: usize) -> Result<(super::memory::HostPtr, usize)> {
        self.pump(false);
        self.pinned.alloc(bytes).map_err(|e| self.fail(e, bytes))
    }

    /// Releases what the device no longer uses (all of it after a full synchronisation).
    pub fn pump(&self, all: bool) {
        let released = {
            let mut q = lock(&self.deferred);
            if q.is_empty() {
                return;
            }
            take_passed(&*self.driver, self.index, &mut q, all)
        };
        drop(released);
    }

    /// Waits for everything queued on the device.
    pub fn synchronize(&self) -> Result<()> {
        self.check()?;
        let r = self
            .driver
            .stream_synchronize(self.index, self.stream)
            .and_then(|()| self.driver.stream_synchronize(self.index, self.copy_stream));
        let r = self.ok(r);
        self.pump(r.is_ok());
        r
    }
}

impl<D: Driver> Drop for DeviceState<D> {
    fn drop(&mut self) {
        // Backends live for the process in the registry; one built by a test is dropped.
        let _ = self.driver.stream_synchronize(self.index, self.stream);
        let _ = self.driver.stream_synchronize(self.index, self.copy_stream);
        self.pump(true);
        let cached = lock(&self.pool).free.drain();
        for (_, p) in cached {
            let _ = self.driver.mem_free(self.index, self.stream, p);
        }
    }
}
