//! Discovery, `DLARRAY_BACKENDS` / `DLARRAY_REQUIRE`, device counts, and users' own backends.

mod common;

use common::fake::fake_device_with;
use dlarray::host::{HostBackend, HostConfig};
use dlarray::{Array, DType, Error, MemoryKind, UnaryOp};
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

    // Each device says what computes its matmul.
    assert!(text.contains("matmul on cpu:0: ") && text.contains("matmul on tpu:3: "));
    let (ok, blocked) = cli(&[("DLARRAY_CPU_GEMM", "crate")], &["devices"]);
    assert!(
        ok && blocked.contains("matmul on cpu:0: the gemm crate"),
        "{blocked}"
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

/// A backend written before `tan` was an op answers `Unsupported` for it (its `match` has a
/// `_` arm): `Array::tan` then composes `sin / cos` from the ops it has, with the bits those
/// give on the host; with `sin` refused too, the error names `sin`.
#[test]
fn tan_is_composed_on_a_backend_without_it() {
    use UnaryOp::*;
    let d = fake_device_with("no-tan", "gpu", "", Some(0), 1, &[Tan]);
    let xs: Vec<f64> = (0..50).map(|i| f64::from(i) * 0.37 - 9.0).collect();
    let host = Array::from_vec(xs.clone(), &[50]).unwrap();
    let x = host.to_device(&d).unwrap();
    let want = host.sin().unwrap().div(&host.cos().unwrap()).unwrap();
    let got = x.tan().unwrap();
    assert_eq!(got.devices(), vec![d]);
    assert_eq!(got.to_vec::<f64>().unwrap(), want.to_vec::<f64>().unwrap());
    // The kernel itself, on the host: within an ulp or two of the quotient.
    for (k, q) in host
        .tan()
        .unwrap()
        .to_vec::<f64>()
        .unwrap()
        .iter()
        .zip(want.to_vec::<f64>().unwrap())
    {
        assert!((k - q).abs() <= 4.0 * f64::EPSILON * q.abs(), "{k} {q}");
    }
    let d = fake_device_with("no-trig", "gpu", "", Some(0), 1, &[Tan, Sin]);
    let x = host.to_device(&d).unwrap();
    let msg = x.tan().unwrap_err().to_string();
    assert_eq!(msg, "backend `no-trig` does not support `sin` on float64");
}

#[test]
fn users_register_their_own_backends() {
    use UnaryOp::*;
    let denied = &[Exp, Log, Sqrt, Sin, Cos, Tanh];
    fake_device_with("limited", "gpu", "acme-runtime 0.1", Some(0), 2, denied);
    let devs: Vec<dlarray::Device> = dlarray::devices()
        .unwrap()
        .into_iter()
        .filter(|d| d.backend_name() == "limited")
        .collect();
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
        dlpack: vec![],
    })
    .unwrap();
    assert!(
        dlarray::register_backend(Arc::new(again)).is_err(),
        "names are unique"
    );
}

/// No Vulkan driver: wgpu is unavailable (with the reason) at once, and requiring it fails.
#[cfg(all(feature = "wgpu", target_os = "linux"))]
#[test]
fn to_vec_reads_a_user_backend_and_refuses_one_that_hands_back_other_memory() {
    let x = Array::from_vec(vec![1.5f32, -2.0, 3.25, 8.0], &[2, 2]).unwrap();
    // The host backend's own download writes the vector's memory directly.
    let good = fake_device_with("honest", "cpu", "acme 1", Some(0), 1, &[]);
    let on = x.to_device(&good).unwrap();
    assert_eq!(on.to_vec::<f32>().unwrap(), [1.5, -2.0, 3.25, 8.0]);
    assert_eq!(
        on.t().unwrap().to_vec::<f32>().unwrap(),
        [1.5, 3.25, -2.0, 8.0]
    );
    assert!(matches!(on.to_vec::<i32>(), Err(Error::ElementType { .. })));
    // A backend whose download_uninit returns memory of its own: an error, not its bytes.
    let liar = fake_device_with("liar", "cpu", "acme 1", Some(0), 1, &[]);
    let err = x.to_device(&liar).unwrap().to_vec::<f32>().unwrap_err();
    assert!(
        matches!(&err, Error::Backend { backend, message }
            if backend == "liar" && message.contains("other than the buffer")),
        "{err}"
    );
}

#[test]
fn wgpu_without_a_driver_is_unavailable_not_a_panic() {
    let no_driver = [
        ("VK_ICD_FILENAMES", "/nonexistent/icd.json"),
        ("VK_DRIVER_FILES", "/nonexistent/icd.json"),
        ("WGPU_BACKEND", "vulkan"),
    ];
    let t = std::time::Instant::now();
    let (ok, out) = cli(&no_driver, &["devices"]);
    assert!(ok, "{out}");
    assert!(
        out.contains("backend wgpu unavailable: no wgpu adapter"),
        "{out}"
    );
    eprintln!("discovery without a driver: {:?}", t.elapsed());
    let mut env = no_driver.to_vec();
    env.push(("DLARRAY_REQUIRE", "cpu,wgpu"));
    let (ok, out) = cli(&env, &["devices"]);
    assert!(!ok, "{out}");
    assert!(out.contains("backend `wgpu` is unavailable"), "{out}");
}

#[test]
fn cuda_without_a_driver_is_unavailable_with_the_reason_and_fails_when_required() {
    let driver = [("DLARRAY_CUDA_DRIVER", "/nonexistent/libcuda.so.1")];
    let t = std::time::Instant::now();
    let (ok, out) = cli(&driver, &["devices"]);
    assert!(ok, "{out}");
    assert!(
        out.contains("backend cuda unavailable: /nonexistent/libcuda.so.1 not found (no NVIDIA driver installed)"),
        "{out}"
    );
    eprintln!("CUDA discovery without a driver: {:?}", t.elapsed());
    let mut env = driver.to_vec();
    env.push(("DLARRAY_REQUIRE", "cpu,cuda"));
    let (ok, out) = cli(&env, &["devices"]);
    assert!(!ok, "{out}");
    assert!(out.contains("backend `cuda` is unavailable"), "{out}");
}

#[test]
fn unknown_backend_names_are_errors_listing_the_known_ones() {
    let (ok, text) = cli(&[("DLARRAY_BACKENDS", "cpu,rocm")], &["devices"]);
    assert!(!ok, "{text}");
    assert!(
        text.contains("DLARRAY_BACKENDS names unknown backend(s) `rocm`")
            && text.contains("cpu, tpu, wgpu, cuda"),
        "{text}"
    );
    let (ok, text) = cli(
        &[("DLARRAY_BACKENDS", "cpu")],
        &["bench", "--backends", "gpu", "--sizes", "16"],
    );
    assert!(!ok, "{text}");
    assert!(
        text.contains("--backends names unknown backend(s) `gpu`"),
        "{text}"
    );
}
