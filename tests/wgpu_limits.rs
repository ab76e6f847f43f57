//! Arrays larger than one wgpu storage binding: elementwise ops, casts and copies run in
//! chunks, reductions in pieces, and what cannot be split fails with an error naming the
//! limit.
//!
//! The adapter's real limit (128 MiB on lavapipe) is exercised once with a large array; the
//! chunking logic is exercised on small arrays by re-running this binary with the binding
//! limit lowered to 4 KiB (`DLARRAY_WGPU_MAX_BINDING`, read when the device opens).
#![cfg(feature = "wgpu")]

mod common;

use common::*;
use dlarray::{Array, Axes, BinaryOp, DType, Error, Slice};

const SMALL_LIMIT: &str = "4096";

#[test]
fn chunked_under_a_small_binding_limit() {
    if devices_of("wgpu").is_empty() {
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "small_limit_child", "--nocapture"])
        .env("DLARRAY_WGPU_MAX_BINDING", SMALL_LIMIT)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed:\n{text}");
    assert!(
        text.contains("1 passed"),
        "the child test did not run:\n{text}"
    );
}

/// Run by `chunked_under_a_small_binding_limit` with the limit lowered.
#[test]
#[ignore = "run by chunked_under_a_small_binding_limit with DLARRAY_WGPU_MAX_BINDING set"]
fn small_limit_child() {
    assert_eq!(
        std::env::var("DLARRAY_WGPU_MAX_BINDING").as_deref(),
        Ok(SMALL_LIMIT)
    );
    for dev in devices_of("wgpu") {
        // 30 x 200 f32: 24 KB per operand, six times the limit; one row (800 bytes) fits.
        let xs: Vec<f32> = (0..6000).map(|i| (i % 97) as f32 - 40.0).collect();
        let ys: Vec<f32> = (0..6000).map(|i| (i % 13) as f32 * 0.5).collect();
        let a_c = Array::from_slice_on(&xs, &[30, 200], &cpu()).unwrap();
        let b_c = Array::from_slice_on(&ys, &[30, 200], &cpu()).unwrap();
        let (a, b) = (a_c.to_device(&dev).unwrap(), b_c.to_device(&dev).unwrap());
        let check = |what: &str, got: dlarray::Result<Array>, want: dlarray::Result<Array>| {
            let (got, want) = (got.unwrap_or_else(|e| panic!("{what}: {e}")), want.unwrap());
            assert_close(what, want.dtype(), &to_scalars(&got), &to_scalars(&want));
        };
        check("add", &a + &b, &a_c + &b_c);
        check(
            "less (bool output)",
            a.binary(BinaryOp::Lt, &b),
            a_c.binary(BinaryOp::Lt, &b_c),
        );
        // Reversed rows: the chunks of a negative-stride operand.
        let rev = |x: &Array| x.slice(&[Slice::reversed(), Slice::reversed()]).unwrap();
        check("add reversed", &rev(&a) + &b, &rev(&a_c) + &b_c);
        check(
            "broadcast row",
            &a + &b
                .slice(&[Slice::with_step(0, 1, 1), Slice::full()])
                .unwrap(),
            &a_c + &b_c
                .slice(&[Slice::with_step(0, 1, 1), Slice::full()])
                .unwrap(),
        );
        for to in [DType::I32, DType::Bool, DType::F16, DType::U32] {
            if !dev.kernel_dtypes().contains(&to) {
                continue; // f16 needs SHADER_F16 (the GL adapter lacks it)
            }
            check(&format!("cast to {to}"), a.astype(to), a_c.astype(to));
        }
        // Strided copies of 1-, 2- and 8-byte elements.
        for dt in [DType::I8, DType::I16, DType::F64] {
            let c = a_c.astype(dt).unwrap();
            let g = c.to_device(&dev).unwrap();
            check(&format!("strided read {dt}"), Ok(rev(&g)), Ok(rev(&c)));
        }
        check(
            "fill",
            Array::full_sharded(
                &[5000],
                dlarray::Scalar::Int(3),
                DType::I32,
                &dlarray::Sharding::single(&dev),
            ),
            Array::full_sharded(
                &[5000],
                dlarray::Scalar::Int(3),
                DType::I32,
                &dlarray::Sharding::single(&cpu()),
            ),
        );
        // Reductions in pieces: full, along rows and along columns.
        check("sum all", a.sum(Axes::All), a_c.sum(Axes::All));
        check("max all", a.max(Axes::All), a_c.max(Axes::All));
        check("sum rows", a.sum(1), a_c.sum(1));
        check("min reversed rows", rev(&a).min(1), rev(&a_c).min(1));
        // A transposed operand wider than a binding per row cannot be chunked: a clear error.
        let wide = Array::from_slice_on(&xs, &[2, 3000], &dev).unwrap();
        let err = (&wide.t().unwrap() + &wide.t().unwrap()).unwrap_err();
        assert!(
            err.to_string()
                .contains("max_storage_buffer_binding_size of 4096 bytes"),
            "{err}"
        );
        // ... but reading it, or moving it, gathers on the host instead.
        let tw = wide.t().unwrap();
        let want: Vec<f32> = (0..3000).flat_map(|j| [xs[j], xs[3000 + j]]).collect();
        assert_eq!(tw.to_vec::<f32>().unwrap(), want);
        assert_eq!(tw.to_device(&dev).unwrap().to_vec::<f32>().unwrap(), want);
        let err = wide.sum(0).unwrap_err();
        assert!(
            err.to_string().contains("max_storage_buffer_binding_size"),
            "{err}"
        );
        // A matmul whose `a` and output exceed a binding runs in blocks of rows ...
        let w_c = Array::from_slice_on(&ys[..200 * 3], &[200, 3], &cpu()).unwrap();
        let w = w_c.to_device(&dev).unwrap();
        check("matmul in row blocks", a.matmul(&w), a_c.matmul(&w_c));
        let big_c = Array::from_slice_on(&xs, &[1500, 4], &cpu()).unwrap();
        let big = big_c.to_device(&dev).unwrap();
        let v_c = Array::from_slice_on(&ys[..12], &[4, 3], &cpu()).unwrap();
        let v = v_c.to_device(&dev).unwrap();
        check("matmul of a tall a", big.matmul(&v), big_c.matmul(&v_c));
        // ... but a `b` over the limit is a clear error.
        let err = a.matmul(&b.t().unwrap()).unwrap_err();
        assert!(
            err.to_string().contains("max_storage_buffer_binding_size"),
            "{err}"
        );
        assert!(matches!(err, Error::Backend { .. }), "{err:?}");
    }
}

#[test]
fn arrays_over_the_adapter_binding_limit() {
    for dev in devices_of("wgpu") {
        // 33 Mi f32 = 132 MiB: over lavapipe's 128 MiB binding limit.
        let n = 33 << 20;
        let a = Array::full_sharded(
            &[n],
            dlarray::Scalar::Float(1.5),
            DType::F32,
            &dlarray::Sharding::single(&dev),
        )
        .unwrap();
        let b = Array::arange(0.0, n as f64, 1.0, DType::F32)
            .unwrap()
            .to_device(&dev)
            .unwrap();
        let c = (&a + &b).unwrap();
        let v = c.to_vec::<f32>().unwrap();
        assert_eq!(v.len(), n);
        for i in [0, 1, n / 2, n - 2, n - 1] {
            assert_eq!(v[i], i as f32 + 1.5, "element {i}");
        }
        let s = a.sum(Axes::All).unwrap().item::<f32>().unwrap() as f64;
        assert!(
            (s - 1.5 * n as f64).abs() < 1e-4 * 1.5 * n as f64,
            "sum {s}"
        );
    }
}
