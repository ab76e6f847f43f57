//! Discovery, `DLARRAY_BACKENDS` / `DLARRAY_REQUIRE`, device counts, and users' own backends.

mod common;

use dlarray::host::{HostBackend, HostConfig};
use dlarray::{
    Array, Backend, BinaryOp, DType, DeviceBuffer, DeviceDesc, Error, MemoryKind, ReduceOp, Result,
    Scalar, TensorRef, UnaryOp,
};
use std::process::Command;
use std::sync::Arc;

/// CI lists every backend whose driver it installs: each must be present, or this fails.
#[test]
fn required_backends_are_available() {
    let devices = dlarray::devices().expect("every backend in DLARRAY_REQUIRE is available");
    for name in std::env::var("DLARRAY_REQUIRE")
        .unwrap_or_default()
        .split(',')
    {
        let name = name.trim();
        if name.is_empty() {
            continue;
        }
        assert!(
            devices.iter().any(|d| d.backend_name() == name),
            "required backend {name} has no device"
        );
    }
    assert_eq!(devices[0].name(), "cpu:0", "CPU comes first");
}

fn cli(env: &[(&str, &str)], args: &[&str]) -> (bool, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dlarray"));
    cmd.args(args);
    for var in [
        "DLARRAY_REQUIRE",
        "DLARRAY_BACKENDS",
        "DLARRAY_CPU_DEVICES",
        "DLARRAY_TPU_DEVICES",
    ] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run dlarray");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

#[test]
fn environment_controls_discovery() {
    let (ok, text) = cli(&[], &["devices"]);
    assert!(ok, "{text}");
    assert!(
        text.contains("cpu:0") && text.contains("tpu:3") && !text.contains("tpu:4"),
        "{text}"
    );

    let (ok, text) = cli(&[("DLARRAY_BACKENDS", "cpu")], &["devices"]);
    assert!(ok && !text.contains("tpu:0"), "{text}");
    assert!(
        text.contains("backend tpu unavailable: not listed in DLARRAY_BACKENDS"),
        "{text}"
    );

    let (ok, text) = cli(
        &[("DLARRAY_CPU_DEVICES", "3"), ("DLARRAY_TPU_DEVICES", "2")],
        &["devices"],
    );
    assert!(
        ok && text.contains("cpu:2") && text.contains("tpu:1") && !text.contains("tpu:2"),
        "{text}"
    );

    let (ok, text) = cli(&[("DLARRAY_TPU_DEVICES", "lots")], &["devices"]);
    assert!(
        ok,
        "a bad count makes the backend unavailable, not the program fail: {text}"
    );
    assert!(text.contains("DLARRAY_TPU_DEVICES=\"lots\""), "{text}");
}

#[test]
fn a_required_backend_that_is_missing_is_an_error_naming_the_reason() {
    let (ok, text) = cli(
        &[("DLARRAY_BACKENDS", "cpu"), ("DLARRAY_REQUIRE", "cpu,tpu")],
        &["devices"],
    );
    assert!(!ok, "{text}");
    assert!(
        text.contains("backend `tpu` is unavailable: not listed in DLARRAY_BACKENDS"),
        "{text}"
    );
    let (ok, text) = cli(&[("DLARRAY_REQUIRE", "warp-drive")], &["devices"]);
    assert!(
        !ok && text.contains("backend `warp-drive` is unavailable: no such backend"),
        "{text}"
    );
    let (ok, text) = cli(
        &[("DLARRAY_REQUIRE", "tpu"), ("DLARRAY_TPU_DEVICES", "0")],
        &["devices"],
    );
    assert!(!ok && text.contains("DLARRAY_TPU_DEVICES"), "{text}");
}

#[test]
fn the_tour_checks_itself() {
    let (ok, text) = cli(&[], &[]);
    assert!(ok, "{text}");
    assert!(
        text.contains("all checks passed") && !text.contains("MISMATCH"),
        "{text}"
    );
}

/// A user's backend: host memory, but no transcendental kernels, and platform `gpu` with a
/// runtime dlarray does not know (what the DLPack layer must reject by name).
#[derive(Debug)]
struct Limited(HostBackend);

impl Backend for Limited {
    fn name(&self) -> &str {
        "limited"
    }
    fn platform(&self) -> &str {
        "gpu"
    }
    fn platform_version(&self) -> String {
        "acme-runtime 0.1".into()
    }
    fn devices(&self) -> Vec<DeviceDesc> {
        self.0.devices()
    }
    fn upload(&self, d: usize, k: MemoryKind, b: &[u8]) -> Result<Arc<dyn DeviceBuffer>> {
        self.0.upload(d, k, b)
    }
    fn fill(
        &self,
        d: usize,
        k: MemoryKind,
        t: DType,
        v: Scalar,
        n: usize,
    ) -> Result<Arc<dyn DeviceBuffer>> {
        self.0.fill(d, k, t, v, n)
    }
    fn download(&self, s: TensorRef<'_>, dst: &mut [u8]) -> Result<()> {
        self.0.download(s, dst)
    }
    fn copy(&self, s: TensorRef<'_>, d: usize, k: MemoryKind) -> Result<Arc<dyn DeviceBuffer>> {
        self.0.copy(s, d, k)
    }
    fn unary(&self, op: UnaryOp, x: TensorRef<'_>, out: DType) -> Result<Arc<dyn DeviceBuffer>> {
        match op {
            UnaryOp::Neg | UnaryOp::Abs => self.0.unary(op, x, out),
            _ => Err(Error::Unsupported {
                backend: "limited".into(),
                op: op.name().into(),
                dtype: x.dtype,
            }),
        }
    }
    fn binary(
        &self,
        op: BinaryOp,
        a: TensorRef<'_>,
        b: TensorRef<'_>,
        out: DType,
    ) -> Result<Arc<dyn DeviceBuffer>> {
        self.0.binary(op, a, b, out)
    }
    fn reduce(
        &self,
        op: ReduceOp,
        x: TensorRef<'_>,
        axes: &[usize],
    ) -> Result<Arc<dyn DeviceBuffer>> {
        self.0.reduce(op, x, axes)
    }
    fn matmul(&self, a: TensorRef<'_>, b: TensorRef<'_>) -> Result<Arc<dyn DeviceBuffer>> {
        self.0.matmul(a, b)
    }
    fn cast(&self, x: TensorRef<'_>, to: DType) -> Result<Arc<dyn DeviceBuffer>> {
        self.0.cast(x, to)
    }
}

#[test]
fn users_register_their_own_backends() {
    let inner = HostBackend::new(HostConfig {
        name: "limited",
        platform: "gpu",
        platform_version: String::new(),
        device_count: 2,
        memory_kinds: vec![MemoryKind::Device],
        threads_per_device: 1,
        pool_bytes: 1 << 20,
    })
    .unwrap();
    let devs = dlarray::register_backend(Arc::new(Limited(inner))).unwrap();
    assert_eq!(
        devs.iter()
            .map(|d| d.name().to_string())
            .collect::<Vec<_>>(),
        ["limited:0", "limited:1"]
    );
    assert!(
        dlarray::devices()
            .unwrap()
            .iter()
            .any(|d| d.name() == "limited:1")
    );
    let d = dlarray::get_device("limited:1").unwrap();
    assert_eq!(
        (d.platform(), d.platform_version()),
        ("gpu", "acme-runtime 0.1")
    );

    let x = Array::from_vec(vec![1.0f32, -2.0, 3.0], &[3])
        .unwrap()
        .to_device(&d)
        .unwrap();
    assert_eq!(x.devices(), vec![d.clone()]);
    assert_eq!(
        x.abs().unwrap().to_vec::<f32>().unwrap(),
        vec![1.0, 2.0, 3.0]
    );
    assert_eq!(
        (&x + &x).unwrap().to_vec::<f32>().unwrap(),
        vec![2.0, -4.0, 6.0]
    );
    match x.exp() {
        Err(Error::Unsupported { backend, op, dtype }) => {
            assert_eq!(
                (backend.as_str(), op.as_str(), dtype),
                ("limited", "exp", DType::F32)
            );
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
    let msg = x.sin().unwrap_err().to_string();
    assert_eq!(msg, "backend `limited` does not support `sin` on float32");

    // Mixing with built-in devices moves data through the host.
    let y = Array::from_vec(vec![1.0f32, 1.0, 1.0], &[3]).unwrap();
    assert_eq!(
        (&x + &y).unwrap().to_vec::<f32>().unwrap(),
        vec![2.0, -1.0, 4.0]
    );

    let again = HostBackend::new(HostConfig {
        name: "limited",
        platform: "gpu",
        platform_version: String::new(),
        device_count: 1,
        memory_kinds: vec![MemoryKind::Device],
        threads_per_device: 1,
        pool_bytes: 0,
    })
    .unwrap();
    assert!(
        dlarray::register_backend(Arc::new(Limited(again))).is_err(),
        "names are unique"
    );
}
