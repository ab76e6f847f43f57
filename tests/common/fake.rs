//! A configurable user backend for tests: host memory (so its kernels run), with any name,
//! platform, platform version and hardware id.

use dlarray::host::{HostBackend, HostConfig};
use dlarray::{
    Backend, BinaryOp, DType, Device, DeviceDesc, MemoryKind, ReduceOp, Result, Scalar,
    SharedBuffer, TensorRef, UnaryOp,
};
use std::sync::Arc;

#[derive(Debug)]
pub struct Fake {
    inner: HostBackend,
    name: &'static str,
    platform: &'static str,
    version: String,
    hardware_id: Option<i32>,
    /// Unary ops this backend refuses (to test `Error::Unsupported` from a user backend).
    denied: &'static [UnaryOp],
}

/// Registers a fake backend (once per name) and returns its first device.
pub fn fake_device(
    name: &'static str,
    platform: &'static str,
    version: &str,
    hardware_id: Option<i32>,
) -> Device {
    fake_device_with(name, platform, version, hardware_id, 1, &[])
}

/// As `fake_device`, with `devices` devices and some unary ops refused.
pub fn fake_device_with(
    name: &'static str,
    platform: &'static str,
    version: &str,
    hardware_id: Option<i32>,
    devices: usize,
    denied: &'static [UnaryOp],
) -> Device {
    if let Ok(d) = dlarray::get_device(&format!("{name}:0")) {
        return d;
    }
    let inner = HostBackend::new(HostConfig {
        name,
        platform,
        platform_version: version.to_string(),
        device_count: devices,
        memory_kinds: vec![MemoryKind::Device],
        threads_per_device: 1,
        pool_bytes: 1 << 20,
        dlpack: vec![],
    })
    .expect("host backend");
    let fake = Fake {
        inner,
        name,
        platform,
        version: version.to_string(),
        hardware_id,
        denied,
    };
    match dlarray::register_backend(Arc::new(fake)) {
        Ok(devs) => devs[0].clone(),
        // Another test registered it meanwhile.
        Err(_) => dlarray::get_device(&format!("{name}:0")).expect("registered"),
    }
}

impl Backend for Fake {
    fn name(&self) -> &str {
        self.name
    }
    fn platform(&self) -> &str {
        self.platform
    }
    fn platform_version(&self) -> String {
        self.version.clone()
    }
    fn devices(&self) -> Vec<DeviceDesc> {
        self.inner
            .devices()
            .into_iter()
            .map(|d| DeviceDesc {
                local_hardware_id: self.hardware_id,
                ..d
            })
            .collect()
    }
    fn upload(&self, d: usize, k: MemoryKind, b: &[u8]) -> Result<SharedBuffer> {
        self.inner.upload(d, k, b)
    }
    fn fill(&self, d: usize, k: MemoryKind, t: DType, v: Scalar, n: usize) -> Result<SharedBuffer> {
        self.inner.fill(d, k, t, v, n)
    }
    fn download(&self, s: TensorRef<'_>, dst: &mut [u8]) -> Result<()> {
        self.inner.download(s, dst)
    }
    fn download_uninit<'a>(
        &self,
        s: TensorRef<'_>,
        dst: &'a mut [std::mem::MaybeUninit<u8>],
    ) -> Result<&'a mut [u8]> {
        if self.name == "liar" {
            // A broken backend: hands back memory of its own instead of `dst`.
            return Ok(Box::leak(vec![7u8; dst.len()].into_boxed_slice()));
        }
        self.inner.download_uninit(s, dst)
    }
    fn copy(&self, s: TensorRef<'_>, d: usize, k: MemoryKind) -> Result<SharedBuffer> {
        self.inner.copy(s, d, k)
    }
    fn unary(&self, op: UnaryOp, x: TensorRef<'_>, out: DType) -> Result<SharedBuffer> {
        if self.denied.contains(&op) {
            return Err(dlarray::Error::Unsupported {
                backend: self.name.into(),
                op: op.name().into(),
                dtype: x.dtype,
            });
        }
        self.inner.unary(op, x, out)
    }
    fn binary(
        &self,
        op: BinaryOp,
        a: TensorRef<'_>,
        b: TensorRef<'_>,
        out: DType,
    ) -> Result<SharedBuffer> {
        self.inner.binary(op, a, b, out)
    }
    fn reduce(&self, op: ReduceOp, x: TensorRef<'_>, axes: &[usize]) -> Result<SharedBuffer> {
        self.inner.reduce(op, x, axes)
    }
    fn matmul(&self, a: TensorRef<'_>, b: TensorRef<'_>) -> Result<SharedBuffer> {
        self.inner.matmul(a, b)
    }
    fn cast(&self, x: TensorRef<'_>, to: DType) -> Result<SharedBuffer> {
        self.inner.cast(x, to)
    }
}
