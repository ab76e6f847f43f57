//! The wgpu backend against the CPU backend: every op on every dtype (same result where the
//! device has kernels for the dtype, `Unsupported` naming wgpu otherwise), strided and
//! broadcast inputs, reductions, matmul, casts, fills, moves between devices, sharding, and
//! the DLPack host-copy fallback with JAX's exact error.
//!
//! Needs a wgpu adapter (lavapipe in CI). With `DLARRAY_REQUIRE` naming `wgpu`, a missing
//! adapter fails every test here; without it, the tests say so and check nothing.
#![cfg(feature = "wgpu")]

mod common;

use common::*;
use dlarray::dlpack::{DlpackPolicy, ExportOptions};
use dlarray::{Array, Axes, BinaryOp, DType, Device, Error, ReduceOp, Scalar, Slice, UnaryOp};

/// The wgpu devices; `devices()` fails when wgpu is required and missing.
fn gpus() -> Vec<Device> {
    let d = devices_of("wgpu");
    if d.is_empty() {
        eprintln!("no wgpu adapter: wgpu tests check nothing (set DLARRAY_REQUIRE=wgpu to fail)");
    }
    d
}

/// Deterministic test values for `dtype`, with the edge cases of each kind.
fn values(dtype: DType, n: usize, salt: usize) -> Vec<Scalar> {
    let floats = [
        -6.5, -2.0, -0.5, 0.0, 0.25, 1.0, 3.75, 7.0, 2.5, -1.25, 0.5, 5.5,
    ];
    let ints: [i128; 12] = [
        -7,
        -3,
        -1,
        0,
        1,
        2,
        5,
        100_000,
        -2_147_483_648,
        2_147_483_647,
        3,
        9,
    ];
    let uints: [i128; 12] = [0, 1, 2, 3, 7, 100, 4_294_967_295, 65_536, 5, 9, 31, 2];
    (0..n)
        .map(|i| {
            let k = (i * 7 + salt * 5) % 12;
            match dtype {
                DType::Bool => Scalar::Bool(!(i + salt).is_multiple_of(3)),
                d if d.is_float() => Scalar::Float(floats[k]),
                d if d.is_complex() => {
                    Scalar::Complex(dlarray::dtype::Complex64::new(floats[k], 1.0))
                }
                d if d.kind() == dlarray::dtype::Kind::UInt => {
                    Scalar::Int(uints[k] % (1 << (d.size_in_bytes().min(4) * 8)))
                }
                d => {
                    let bits = d.size_in_bytes() * 8;
                    let v = ints[k];
                    Scalar::Int(if bits < 32 { v % (1 << (bits - 1)) } else { v })
                }
            }
        })
        .collect()
}

/// `cpu` and `gpu` are the same computation on both backends: equal results where the
/// device computes on every dtype involved, an `Unsupported` naming wgpu otherwise.
fn same(
    what: &str,
    dev: &Device,
    dtypes: &[DType],
    cpu: dlarray::Result<Array>,
    gpu: dlarray::Result<Array>,
) {
    let kernels = dev.kernel_dtypes();
    let mut want = match cpu {
        Ok(a) => a,
        Err(Error::Unsupported { .. } | Error::DTypeMismatch { .. }) => {
            assert!(gpu.is_err(), "{what}: CPU refuses it, wgpu gave {gpu:?}");
            return;
        }
        Err(e) => panic!("{what}: CPU failed: {e}"),
    };
    // Without 64-bit kernels, sums, means and true divisions use the 32-bit dtype (as JAX
    // without x64); the CPU's 64-bit result, cast, is the reference (integers wrap alike).
    let narrow = match want.dtype() {
        DType::F64 => DType::F32,
        DType::I64 => DType::I32,
        DType::U64 => DType::U32,
        d => d,
    };
    let identity = dtypes.is_empty();
    if !identity
        && !kernels.contains(&want.dtype())
        && kernels.contains(&narrow)
        && !dtypes.contains(&want.dtype())
    {
        want = want.astype(narrow).unwrap();
    }
    let can = dtypes.is_empty()
        || dtypes
            .iter()
            .chain([&want.dtype()])
            .all(|d| kernels.contains(d));
    match gpu {
        Ok(got) => {
            assert!(can, "{what}: wgpu computed a dtype it does not list");
            assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
            assert_eq!(got.shape(), want.shape(), "{what}: shape");
            assert_eq!(got.devices(), vec![dev.clone()], "{what}: device");
            assert_close(what, want.dtype(), &to_scalars(&got), &to_scalars(&want));
        }
        Err(Error::Unsupported { backend, op, dtype }) => {
            assert!(!can, "{what}: wgpu refused {op} on {dtype}");
            assert_eq!(backend, "wgpu", "{what}");
            assert!(!op.is_empty(), "{what}");
        }
        Err(e) => panic!("{what}: {e}"),
    }
}

#[test]
fn platform_and_dlpack_device() {
    for dev in gpus() {
        assert_eq!(dev.platform(), "wgpu");
        assert!(
            dev.platform_version().starts_with("wgpu 30 "),
            "{}",
            dev.platform_version()
        );
        assert_eq!(dev.memory_kinds(), &[dlarray::MemoryKind::Device]);
        let a = Array::from_slice_on(&[1.0f32, 2.0], &[2], &dev).unwrap();
        match a.dlpack_device() {
            Err(e) => assert_eq!(
                e.to_string(),
                "__dlpack__ device only supported for CPU, GPU and TPU pinned host, got platform: wgpu"
            ),
            other => panic!("{dev}: expected the BufferError, got {other:?}"),
        }
        let k = dev.kernel_dtypes();
        for d in [DType::F32, DType::I32, DType::U32, DType::Bool] {
            assert!(k.contains(&d), "{dev} lacks {d}");
        }
    }
}

#[test]
fn every_dtype_round_trips_and_fills() {
    for dev in gpus() {
        for dtype in DType::ALL {
            // Odd lengths exercise the word padding of 1- and 2-byte dtypes.
            let xs = values(dtype, 13, 1);
            let a = from_scalars(&xs, &[13], dtype, &dev);
            assert_eq!(
                to_scalars(&a),
                to_scalars(&from_scalars(&xs, &[13], dtype, &cpu()))
            );
            // Strided reads go through the copy kernel (every element size).
            let rev = a.slice(&[Slice::with_step(11, 0, -3)]).unwrap();
            let want: Vec<Scalar> = [11usize, 8, 5, 2]
                .iter()
                .map(|&i| round_to(dtype, xs[i]))
                .collect();
            assert_eq!(to_scalars(&rev), want, "{dtype} reversed slice");
            let moved = rev.to_device(&cpu()).unwrap();
            assert_eq!(to_scalars(&moved), want, "{dtype} to cpu");
            let back = moved.to_device(&dev).unwrap();
            assert_eq!(to_scalars(&back), want, "{dtype} back");
            for v in [
                Scalar::Int(0),
                Scalar::Int(1),
                Scalar::Float(-2.5),
                Scalar::Bool(true),
            ] {
                let f =
                    Array::full_sharded(&[7], v, dtype, &dlarray::Sharding::single(&dev)).unwrap();
                assert_eq!(
                    to_scalars(&f),
                    vec![round_to(dtype, v); 7],
                    "full {dtype} {v:?}"
                );
            }
        }
    }
}

#[test]
fn binary_ops_match_cpu_with_strides_and_broadcasting() {
    for dev in gpus() {
        for dtype in DType::ALL {
            let a_c = from_scalars(&values(dtype, 30, 0), &[5, 6], dtype, &cpu());
            let b_c = from_scalars(&values(dtype, 30, 1), &[5, 6], dtype, &cpu());
            let r_c = from_scalars(&values(dtype, 6, 2), &[1, 6], dtype, &cpu());
            let (a_g, b_g, r_g) = (
                a_c.to_device(&dev).unwrap(),
                b_c.to_device(&dev).unwrap(),
                r_c.to_device(&dev).unwrap(),
            );
            for &op in BinaryOp::ALL {
                let what = format!("{op} {dtype} on {dev}");
                same(
                    &what,
                    &dev,
                    &[dtype],
                    a_c.binary(op, &b_c),
                    a_g.binary(op, &b_g),
                );
                // Transposed and reversed operands.
                let tc = b_c
                    .t()
                    .unwrap()
                    .slice(&[Slice::reversed(), Slice::full()])
                    .unwrap();
                let tg = b_g
                    .t()
                    .unwrap()
                    .slice(&[Slice::reversed(), Slice::full()])
                    .unwrap();
                same(
                    &format!("{what} strided"),
                    &dev,
                    &[dtype],
                    a_c.t().unwrap().binary(op, &tc),
                    a_g.t().unwrap().binary(op, &tg),
                );
                same(
                    &format!("{what} broadcast"),
                    &dev,
                    &[dtype],
                    a_c.binary(op, &r_c),
                    a_g.binary(op, &r_g),
                );
            }
        }
    }
}

#[test]
fn where_matches_cpu_with_strides_and_broadcasting() {
    for dev in gpus() {
        let cond_c = from_scalars(&values(DType::Bool, 30, 3), &[5, 6], DType::Bool, &cpu());
        let cond_g = cond_c.to_device(&dev).unwrap();
        for dtype in DType::ALL {
            let a_c = from_scalars(&values(dtype, 30, 0), &[5, 6], dtype, &cpu());
            let r_c = from_scalars(&values(dtype, 6, 2), &[1, 6], dtype, &cpu());
            let (a_g, r_g) = (a_c.to_device(&dev).unwrap(), r_c.to_device(&dev).unwrap());
            let what = format!("where {dtype} on {dev}");
            same(
                &what,
                &dev,
                &[dtype],
                cond_c.where_cond(&a_c, &r_c),
                cond_g.where_cond(&a_g, &r_g),
            );
            let (tc, tg) = (a_c.t().unwrap(), a_g.t().unwrap());
            same(
                &format!("{what} transposed"),
                &dev,
                &[dtype],
                cond_c
                    .t()
                    .unwrap()
                    .where_cond(&tc, &tc.neg().unwrap_or(tc.clone())),
                cond_g
                    .t()
                    .unwrap()
                    .where_cond(&tg, &tg.neg().unwrap_or(tg.clone())),
            );
        }
    }
}

#[test]
fn unary_ops_match_cpu() {
    for dev in gpus() {
        for dtype in DType::ALL {
            // |x| <= 1e5: GPU sin and cos reduce larger arguments inexactly (WGSL promises
            // accuracy only on [-pi, pi]; lavapipe is close to 1e5).
            let xs: Vec<Scalar> = values(dtype, 24, 3)
                .into_iter()
                .map(|v| match v {
                    Scalar::Int(i) if i.abs() > 100_000 => Scalar::Int(i.signum() * 99_991),
                    v => v,
                })
                .collect();
            let x_c = from_scalars(&xs, &[4, 6], dtype, &cpu());
            let x_g = x_c.to_device(&dev).unwrap();
            for &op in UnaryOp::ALL {
                let what = format!("{op} {dtype} on {dev}");
                if op == UnaryOp::Conj && !dtype.is_complex() {
                    // A real array is its own conjugate: the same array, no kernel.
                    let c = x_g.unary(op).unwrap();
                    assert_eq!(
                        c.unsafe_buffer_pointer().ok(),
                        x_g.unsafe_buffer_pointer().ok()
                    );
                    continue;
                }
                same(&what, &dev, &[dtype], x_c.unary(op), x_g.unary(op));
                same(
                    &format!("{what} transposed"),
                    &dev,
                    &[dtype],
                    x_c.t().unwrap().unary(op),
                    x_g.t().unwrap().unary(op),
                );
            }
        }
    }
}

#[test]
fn float_edge_cases() {
    let nan = f32::NAN;
    let inf = f32::INFINITY;
    let xs = [
        nan, 1.0, -inf, inf, 0.0, -0.0, 3e9, -3e9, -1.5, 2.0, nan, -2.0,
    ];
    let ys = [
        1.0, nan, 1.0, -inf, -0.0, 0.0, 2.0, 3.0, 2.0, -1.0, nan, 3.0,
    ];
    for dev in gpus() {
        let (a_c, b_c) = (
            Array::from_slice_on(&xs, &[12], &cpu()).unwrap(),
            Array::from_slice_on(&ys, &[12], &cpu()).unwrap(),
        );
        let (a_g, b_g) = (a_c.to_device(&dev).unwrap(), b_c.to_device(&dev).unwrap());
        for &op in BinaryOp::ALL {
            same(
                &format!("{op} f32 edges"),
                &dev,
                &[DType::F32],
                a_c.binary(op, &b_c),
                a_g.binary(op, &b_g),
            );
        }
        for to in [DType::I32, DType::U32, DType::Bool, DType::F16] {
            same(
                &format!("cast f32 edges to {to}"),
                &dev,
                &[DType::F32],
                a_c.astype(to),
                a_g.astype(to),
            );
        }
        for op in [ReduceOp::Max, ReduceOp::Min, ReduceOp::Sum] {
            same(
                &format!("{op} with NaN"),
                &dev,
                &[DType::F32],
                a_c.reduce(op, dlarray::Axes::All, false),
                a_g.reduce(op, dlarray::Axes::All, false),
            );
        }
    }
}

/// A float64 that only promotion makes (int32 + float32, int32 / 2, int32 + 1.5) is float32
/// on wgpu, which has no 64-bit kernels, as its true divisions and sums (these were
/// "wgpu does not support cast on float64"); float64 operands stay refused.
#[test]
fn promotion_to_float64_computes_in_float32_without_64_bit_kernels() {
    for dev in gpus() {
        if dev.kernel_dtypes().contains(&DType::F64) {
            continue;
        }
        let i = Array::from_slice_on(&[1i32, 2, 3], &[3], &dev).unwrap();
        let f = Array::from_slice_on(&[0.5f32, 0.25, 2.0], &[3], &dev).unwrap();
        let u = Array::from_slice_on(&[1u8, 2, 3], &[3], &dev).unwrap();
        let cases = [
            ((&i + &f).unwrap(), [1.5, 2.25, 5.0]),
            ((&f * &i).unwrap(), [0.5, 0.5, 6.0]),
            ((&u - &f).unwrap(), [0.5, 1.75, 1.0]),
            ((&i / 2i32).unwrap(), [0.5, 1.0, 1.5]),
            ((&i + 1.5f64).unwrap(), [2.5, 3.5, 4.5]),
            ((2.0f64 / &u).unwrap(), [2.0, 1.0, 2.0 / 3.0]),
        ];
        for (k, (got, want)) in cases.into_iter().enumerate() {
            assert_eq!(
                (got.dtype(), got.devices()),
                (DType::F32, vec![dev.clone()]),
                "{k}"
            );
            assert_eq!(
                got.to_vec::<f32>().unwrap(),
                want.map(|v: f64| v as f32),
                "{k}"
            );
        }
        let d = Array::from_slice_on(&[1.0f64, 2.0], &[2], &dev).unwrap();
        assert!(
            (&d + &d).is_err(),
            "float64 operands have no kernel on {dev}"
        );
    }
    // On the CPU, NumPy's float64.
    let i = Array::from_vec(vec![1i32, 2], &[2]).unwrap();
    assert_eq!((&i / 2i32).unwrap().dtype(), DType::F64);
    let f = Array::from_vec(vec![1f32, 2.0], &[2]).unwrap();
    assert_eq!((&i + &f).unwrap().dtype(), DType::F64);
}

/// The other ops that promote: matmul, `where` and concatenation take the same 32-bit type
/// where promotion alone makes a 64-bit one (int32 @ float32 was "wgpu does not support cast
/// on float64"), and int32 with uint32 computes in int32 (JAX without x64), except a
/// comparison, which int32 would answer wrongly for large uint32 values: it stays refused.
#[test]
fn promotion_to_64_bits_computes_in_32_for_every_promoting_op() {
    for dev in gpus() {
        if dev.kernel_dtypes().contains(&DType::F64) {
            continue;
        }
        let i = Array::from_slice_on(&[1i32, 2, 3, 4], &[2, 2], &dev).unwrap();
        let f = Array::from_slice_on(&[0.5f32, 0.25, 2.0, 1.0], &[2, 2], &dev).unwrap();
        let u = Array::from_slice_on(&[3u32, 1, 2, 5], &[2, 2], &dev).unwrap();
        let product = i.matmul(&f).unwrap();
        assert_eq!(product.dtype(), DType::F32);
        assert_eq!(product.to_vec::<f32>().unwrap(), [4.5, 2.25, 9.5, 4.75]);
        let product = i.matmul(&u).unwrap();
        assert_eq!(product.dtype(), DType::I32);
        assert_eq!(product.to_vec::<i32>().unwrap(), [7, 11, 17, 23]);
        let sum = (&i + &u).unwrap();
        assert_eq!(sum.dtype(), DType::I32);
        assert_eq!(sum.to_vec::<i32>().unwrap(), [4, 3, 5, 9]);
        let mask = Array::from_slice_on(&[true, false, false, true], &[2, 2], &dev).unwrap();
        let chosen = mask.where_cond(&i, &f).unwrap();
        assert_eq!(chosen.dtype(), DType::F32);
        assert_eq!(chosen.to_vec::<f32>().unwrap(), [1.0, 0.25, 2.0, 4.0]);
        // A Python-style int beside a bool array: int64 on the CPU, int32 here.
        let b = Array::from_slice_on(&[true, false], &[2], &dev).unwrap();
        let sum = b
            .binary_scalar(BinaryOp::Add, Scalar::Int(2), false)
            .unwrap();
        assert_eq!(sum.dtype(), DType::I32);
        assert_eq!(sum.to_vec::<i32>().unwrap(), [3, 2]);
        let eq = b
            .binary_scalar(BinaryOp::Eq, Scalar::Int(1), false)
            .unwrap();
        assert_eq!(eq.to_vec::<bool>().unwrap(), [true, false]);
        let far = b
            .binary_scalar(BinaryOp::Lt, Scalar::Int(1 << 40), false)
            .unwrap();
        assert_eq!(far.to_vec::<bool>().unwrap(), [true, true]);
        let joined = Array::concatenate(&[&i, &u, &i], 0).unwrap();
        assert_eq!(joined.dtype(), DType::I32);
        assert_eq!(joined.shape(), [6, 2]);
        assert!(
            i.binary(BinaryOp::Lt, &u).is_err(),
            "int32 < uint32 needs int64 on {dev}"
        );
    }
    // On the CPU, NumPy's 64-bit types.
    let i = Array::from_vec(vec![1i32, 2], &[2]).unwrap();
    let u = Array::from_vec(vec![3_000_000_000u32, 1], &[2]).unwrap();
    assert_eq!(i.matmul(&u).unwrap().dtype(), DType::I64);
    let less = i.binary(BinaryOp::Lt, &u).unwrap();
    assert_eq!(less.to_vec::<bool>().unwrap(), [true, false]);
}

/// The first CPU device.
fn cpu_device() -> Device {
    dlarray::devices()
        .unwrap()
        .into_iter()
        .find(|d| d.platform() == "cpu")
        .expect("a cpu device")
}

/// The wgpu devices with no kernels for `dtype`.
fn gpus_without(dtype: DType) -> Vec<Device> {
    gpus()
        .into_iter()
        .filter(|d| !d.kernel_dtypes().contains(&dtype))
        .collect()
}

/// An op over arrays on different devices narrows for every device that casts an operand:
/// each operand is cast where it is, so an int32 array on the CPU divided by one on wgpu (or
/// `where`, `matmul`, `concat`, `isin`, `searchsorted` with an operand there) computes in
/// 32 bits. Only the first operand's devices were asked, and wgpu refused the float64 cast
/// of its own operand.
#[test]
fn promotion_over_operands_on_several_devices_narrows_for_each() {
    let cpu = cpu_device();
    for dev in gpus_without(DType::F64) {
        // The defaults of arrays made without a dtype: 32 bits here.
        assert_eq!(dev.default_dtype(DType::F64), DType::F32);
        assert_eq!(dev.default_dtype(DType::I64), DType::I32);
        assert_eq!(dev.default_dtype(DType::F16), DType::F16);
        let i = Array::from_slice_on(&[1i32, 2, 3, 4], &[2, 2], &cpu).unwrap();
        let j = Array::from_slice_on(&[2i32, 4, 1, 8], &[2, 2], &dev).unwrap();
        let f = Array::from_slice_on(&[0.5f32, 0.25, 2.0, 1.0], &[2, 2], &dev).unwrap();
        let quotient = i.binary(BinaryOp::Div, &j).unwrap();
        assert_eq!(quotient.dtype(), DType::F32);
        assert_eq!(quotient.to_vec::<f32>().unwrap(), [0.5, 0.5, 3.0, 0.5]);
        let sum = (&i + &f).unwrap();
        assert_eq!(sum.dtype(), DType::F32);
        assert_eq!(sum.to_vec::<f32>().unwrap(), [1.5, 2.25, 5.0, 5.0]);
        let product = i.matmul(&f).unwrap();
        assert_eq!(product.to_vec::<f32>().unwrap(), [4.5, 2.25, 9.5, 4.75]);
        let mask = Array::from_slice_on(&[true, false, false, true], &[2, 2], &dev).unwrap();
        let chosen = mask.where_cond(&i, &f).unwrap();
        assert_eq!(chosen.to_vec::<f32>().unwrap(), [1.0, 0.25, 2.0, 4.0]);
        let cpu_mask = Array::from_slice_on(&[true, false], &[2], &cpu).unwrap();
        let chosen = cpu_mask.where_cond(&f, &i).unwrap();
        assert_eq!(chosen.dtype(), DType::F32);
        let joined = Array::concatenate(&[&i, &f], 0).unwrap();
        assert_eq!(joined.dtype(), DType::F32);
        assert_eq!(joined.shape(), [4, 2]);
        // Computed on the host, cast where each array is: isin and searchsorted too.
        let hits = f.isin(&j, false).unwrap();
        assert_eq!(hits.to_vec::<bool>().unwrap(), [false, false, true, true]);
        let sorted = Array::from_slice_on(&[1i32, 3, 5], &[3], &cpu).unwrap();
        let at = sorted.searchsorted(&f, false).unwrap();
        assert_eq!(at.to_i64_vec().unwrap(), [0, 0, 1, 0]);
        // Integer indices read in their own dtype: wgpu's are int32.
        let nz = f
            .binary_scalar(BinaryOp::Gt, Scalar::Float(0.6), false)
            .unwrap()
            .nonzero()
            .unwrap();
        assert_eq!(nz[1].to_i64_vec().unwrap(), [0, 1]);
    }
    // Where every device has 64-bit kernels, NumPy's float64.
    assert_eq!(cpu.default_dtype(DType::F64), DType::F64);
    assert_eq!(cpu.default_dtype(DType::Complex128), DType::Complex128);
    let i = Array::from_slice_on(&[1i32, 2], &[2], &cpu).unwrap();
    let f = Array::from_slice_on(&[0.5f32, 0.25], &[2], &cpu).unwrap();
    assert_eq!((&i + &f).unwrap().dtype(), DType::F64);
}

/// A dtype wgpu stores but cannot compute converts there when the user asks for it
/// (`astype_anywhere`, Python's `astype`): through the host, back into the same device. The
/// ops' own casts (`astype`) still refuse, so 64-bit data is never narrowed silently.
#[test]
fn stored_dtypes_convert_on_request_through_the_host() {
    let cpu = cpu_device();
    for dev in gpus_without(DType::F64) {
        let a = Array::from_slice_on(&[1.5f64, -2.0, 3.25], &[3], &dev).unwrap();
        assert!(matches!(
            a.astype(DType::F32),
            Err(Error::Unsupported { .. })
        ));
        let f = a.astype_anywhere(DType::F32).unwrap();
        assert_eq!((f.dtype(), f.devices()), (DType::F32, vec![dev.clone()]));
        assert_eq!(f.to_vec::<f32>().unwrap(), [1.5, -2.0, 3.25]);
        let i = a.astype_anywhere(DType::I64).unwrap();
        assert_eq!(i.to_vec::<i64>().unwrap(), [1, -2, 3]);
        // And back to a stored dtype, from a strided view, over a cpu + wgpu sharding.
        let back = f.slice(&[Slice::with_step(0, 3, 2)]).unwrap();
        assert_eq!(
            back.astype_anywhere(DType::F64)
                .unwrap()
                .to_vec::<f64>()
                .unwrap(),
            [1.5, 3.25]
        );
        let sharded = Array::from_slice_on(&[1.0f64, 2.0, 3.0, 4.0], &[4], &cpu)
            .unwrap()
            .device_put(&dlarray::Sharding::split(vec![cpu.clone(), dev.clone()], 0).unwrap())
            .unwrap();
        let s = sharded.astype_anywhere(DType::F32).unwrap();
        assert_eq!(s.devices(), vec![cpu.clone(), dev.clone()]);
        assert_eq!(s.to_vec::<f32>().unwrap(), [1.0, 2.0, 3.0, 4.0]);
    }
}

/// A reduction that takes two passes (a (3, 1000) float16 array to one value) stores float16
/// from the first pass's float32 partials: its last shader lacked `enable f16;` and failed to
/// compile. And var/std of integers take float32 where float64 has no kernels (as `mean`); they
/// were "wgpu does not support cast on float64".
#[test]
fn split_reductions_store_f16_and_integer_variance_computes_in_f32() {
    let values: Vec<f32> = (0..3000)
        .map(|i| ((i * 37) % 1001) as f32 - 500.0)
        .collect();
    for dev in gpus() {
        if dev.kernel_dtypes().contains(&DType::F16) {
            let x = Array::from_slice_on(&values, &[3, 1000], &dev)
                .unwrap()
                .astype(DType::F16)
                .unwrap();
            for (op, want) in [(ReduceOp::Min, -500.0f32), (ReduceOp::Max, 500.0)] {
                let got = x.reduce(op, Axes::All, false).unwrap();
                assert_eq!(got.dtype(), DType::F16, "{op} on {dev}");
                let got = got.astype(DType::F32).unwrap().to_vec::<f32>().unwrap();
                assert_eq!(got, [want], "{op} on {dev}");
            }
        }
        if !dev.kernel_dtypes().contains(&DType::F64) {
            let i = Array::from_slice_on(&[1i32, 2, 3, 4], &[4], &dev).unwrap();
            let var = i.var(Axes::All, 0.0).unwrap();
            assert_eq!(var.dtype(), DType::F32, "var on {dev}");
            assert_eq!(var.to_vec::<f32>().unwrap(), [1.25]);
            let std = i.std(Axes::All, 1.0).unwrap();
            assert!((std.to_vec::<f32>().unwrap()[0] - (5.0f32 / 3.0).sqrt()).abs() < 1e-6);
        }
    }
}

/// `copy=True` of a dtype wgpu stores but has no kernels for (float64, int64, complex) is a
/// byte copy: it went through the cast kernel and was "wgpu does not support cast on int64".
#[test]
fn deep_copies_of_every_stored_dtype() {
    for dev in gpus() {
        for &dt in &DType::ALL {
            let a = from_scalars(&values(dt, 12, 5), &[3, 4], dt, &dev);
            let view = a
                .slice(&[Slice::full(), Slice::new(Some(3), None, -2)])
                .unwrap();
            for x in [&a, &view] {
                let c = x
                    .deep_copy()
                    .unwrap_or_else(|e| panic!("{dt} on {dev}: {e}"));
                assert_eq!(
                    (c.dtype(), c.shape(), c.devices()),
                    (dt, x.shape(), vec![dev.clone()])
                );
                assert_eq!(to_scalars(&c), to_scalars(x), "{dt} on {dev}");
            }
        }
    }
}

/// Index results computed on the host (argsort, searchsorted, nonzero, unique_all) come back
/// as the device's index dtype, int32 without 64-bit kernels as argmax's: they came back
/// int64, which wgpu could neither add to nor compare ("does not support sub on int64"),
/// and `take` cast its indices to int64 where they were, which wgpu refused too.
#[test]
fn host_computed_indices_are_int32_without_64_bit_kernels_and_usable() {
    for dev in gpus() {
        if dev.kernel_dtypes().contains(&DType::I64) {
            continue;
        }
        let x = Array::from_slice_on(&[3.0f32, 1.0, 2.0, 1.0], &[4], &dev).unwrap();
        let order = x.argsort(0, false).unwrap();
        let sorted = x.sort(0, false).unwrap();
        let at = sorted.searchsorted(&x, true).unwrap();
        let nz = x
            .binary_scalar(BinaryOp::Gt, Scalar::Float(1.5), false)
            .unwrap()
            .nonzero()
            .unwrap();
        let [_, first, inverse, counts] = x.unique_all().unwrap();
        for (what, a) in [
            ("argsort", &order),
            ("searchsorted", &at),
            ("nonzero", &nz[0]),
            ("first", &first),
            ("inverse", &inverse),
            ("counts", &counts),
        ] {
            assert_eq!(
                (a.dtype(), a.devices()),
                (DType::I32, vec![dev.clone()]),
                "{what}"
            );
        }
        assert_eq!(order.to_vec::<i32>().unwrap(), [1, 3, 2, 0]);
        let back = (&at - 1i32).unwrap();
        assert_eq!(back.to_vec::<i32>().unwrap(), [3, 1, 2, 1]);
        assert_eq!(
            x.take(&order, Some(0)).unwrap().to_vec::<f32>().unwrap(),
            [1.0, 1.0, 2.0, 3.0]
        );
        assert_eq!(counts.to_vec::<i32>().unwrap(), [2, 1, 1]);
    }
    // On the CPU, int64 as NumPy's.
    let x = Array::from_vec(vec![3.0f32, 1.0], &[2]).unwrap();
    assert_eq!(x.argsort(0, false).unwrap().dtype(), DType::I64);
}

/// The transcendental functions against the CPU's at every scale: drivers' own are accurate
/// only in absolute terms near 0 (llvmpipe's tanh(1e-30) was 3e-8, expm1(1e-6) 5 % off,
/// asinh(2e19) inf, atan(0.03) 2e-5 off), and their fmod and pow leave IEEE's edges open
/// (1 % 1e-30 was 0, (-inf) ** -5.1 NaN, 4.2 // -inf NaN).
#[test]
fn transcendental_functions_are_accurate_at_every_scale() {
    let mut xs: Vec<f32> = Vec::new();
    for k in -300..=300 {
        let m = 10f32.powf(k as f32 / 10.0);
        xs.extend([m, -m]);
    }
    xs.extend((0..=600).map(|i| (i as f32 - 300.0) / 100.0));
    xs.extend([
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        88.5,
        -88.5,
        89.0,
    ]);
    let n = xs.len();
    // Within 1e-5 of the CPU's value (drivers' exp alone is ~40 ulp at 80); results that
    // are subnormal may be flushed to zero (GPUs do).
    let close = |what: &str, x: f32, y: f32, got: f32, want: f32| {
        let ok = got == want
            || (got.is_nan() && want.is_nan())
            || ((got - want).abs() <= 1e-5 * want.abs())
            || (want.abs() < f32::MIN_POSITIVE && got.abs() < f32::MIN_POSITIVE);
        assert!(ok, "{what}({x:e}, {y:e}) = {got:e}, want {want:e}");
    };
    for dev in gpus() {
        let x_c = Array::from_slice_on(&xs, &[n], &cpu()).unwrap();
        let x_g = x_c.to_device(&dev).unwrap();
        for op in [
            UnaryOp::Exp,
            UnaryOp::Expm1,
            UnaryOp::Log,
            UnaryOp::Log1p,
            UnaryOp::Sin,
            UnaryOp::Cos,
            UnaryOp::Tan,
            UnaryOp::Tanh,
            UnaryOp::Sinh,
            UnaryOp::Cosh,
            UnaryOp::Asin,
            UnaryOp::Acos,
            UnaryOp::Atan,
            UnaryOp::Asinh,
            UnaryOp::Acosh,
            UnaryOp::Atanh,
        ] {
            let want = x_c.unary(op).unwrap().to_vec::<f32>().unwrap();
            let got = x_g.unary(op).unwrap().to_vec::<f32>().unwrap();
            for ((&x, &g), &w) in xs.iter().zip(&got).zip(&want) {
                // Drivers reduce sin and cos of huge arguments with a float32 pi.
                if matches!(op, UnaryOp::Sin | UnaryOp::Cos | UnaryOp::Tan) && x.abs() > 1e4 {
                    continue;
                }
                close(op.name(), x, 0.0, g, w);
            }
        }
        // Binary ops over every pair of a smaller grid of magnitudes and edges.
        let grid: Vec<f32> = xs.iter().step_by(23).copied().collect();
        let (a, b): (Vec<f32>, Vec<f32>) = grid
            .iter()
            .flat_map(|&p| grid.iter().map(move |&q| (p, q)))
            .unzip();
        let m = a.len();
        let (a_c, b_c) = (
            Array::from_slice_on(&a, &[m], &cpu()).unwrap(),
            Array::from_slice_on(&b, &[m], &cpu()).unwrap(),
        );
        let (a_g, b_g) = (a_c.to_device(&dev).unwrap(), b_c.to_device(&dev).unwrap());
        for op in [
            BinaryOp::FloorDivide,
            BinaryOp::Remainder,
            BinaryOp::Pow,
            BinaryOp::Atan2,
            BinaryOp::Logaddexp,
            BinaryOp::Hypot,
        ] {
            let want = a_c.binary(op, &b_c).unwrap().to_vec::<f32>().unwrap();
            let got = a_g.binary(op, &b_g).unwrap().to_vec::<f32>().unwrap();
            for i in 0..m {
                // A subnormal base: drivers flush it before pow sees it.
                if op == BinaryOp::Pow && a[i] != 0.0 && a[i].abs() < f32::MIN_POSITIVE {
                    continue;
                }
                close(op.name(), a[i], b[i], got[i], want[i]);
            }
        }
    }
}

#[test]
fn casts_between_every_pair() {
    for dev in gpus() {
        for from in DType::ALL {
            let x_c = from_scalars(&values(from, 12, 4), &[3, 4], from, &cpu());
            let x_g = x_c.to_device(&dev).unwrap();
            for to in DType::ALL {
                // A cast to the same dtype is the array itself, on any device.
                let dtypes: &[DType] = if from == to { &[] } else { &[from, to] };
                same(
                    &format!("cast {from} -> {to}"),
                    &dev,
                    dtypes,
                    x_c.astype(to),
                    x_g.astype(to),
                );
            }
        }
    }
}

#[test]
fn reductions_over_every_axis_set() {
    for dev in gpus() {
        for dtype in DType::ALL {
            let x_c = from_scalars(&values(dtype, 60, 5), &[3, 4, 5], dtype, &cpu());
            let x_g = x_c.to_device(&dev).unwrap();
            let axes: [Option<&[isize]>; 8] = [
                None,
                Some(&[0]),
                Some(&[1]),
                Some(&[2]),
                Some(&[0, 1]),
                Some(&[0, 2]),
                Some(&[1, 2]),
                Some(&[]),
            ];
            for &op in ReduceOp::ALL {
                for ax in axes {
                    let what = format!("{op} {dtype} axes {ax:?} on {dev}");
                    let (c, g) = match ax {
                        None => (
                            x_c.reduce(op, dlarray::Axes::All, false),
                            x_g.reduce(op, dlarray::Axes::All, false),
                        ),
                        Some(a) => (x_c.reduce(op, a, false), x_g.reduce(op, a, false)),
                    };
                    same(&what, &dev, &[dtype], c, g);
                }
                // A permuted, reversed view.
                let pc = x_c
                    .permute(&[2, 0, 1])
                    .unwrap()
                    .slice(&[Slice::reversed()])
                    .unwrap();
                let pg = x_g
                    .permute(&[2, 0, 1])
                    .unwrap()
                    .slice(&[Slice::reversed()])
                    .unwrap();
                same(
                    &format!("{op} {dtype} strided"),
                    &dev,
                    &[dtype],
                    pc.reduce(op, 1, false),
                    pg.reduce(op, 1, false),
                );
            }
        }
    }
}

#[test]
fn large_reductions_use_several_passes() {
    for dev in gpus() {
        let n = 1_000_003;
        let xs: Vec<f32> = (0..n)
            .map(|i| ((i * 7919) % 1000) as f32 / 1000.0)
            .collect();
        let want: f64 = xs.iter().map(|&v| v as f64).sum();
        let a = Array::from_slice_on(&xs, &[n], &dev).unwrap();
        let got = a.sum(dlarray::Axes::All).unwrap().item::<f32>().unwrap() as f64;
        assert!((got - want).abs() <= 1e-5 * want, "sum {got} vs {want}");
        let m = a.max(dlarray::Axes::All).unwrap().item::<f32>().unwrap();
        assert_eq!(m, 0.999);
        let ints: Vec<i32> = (0..n as i32).map(|i| i % 17 - 8).collect();
        let b = Array::from_slice_on(&ints, &[n], &dev).unwrap();
        let want: i32 = ints.iter().sum();
        assert_eq!(
            b.sum(dlarray::Axes::All).unwrap().item::<i32>().unwrap(),
            want
        );
        // Few rows, long reductions: several parts per output.
        let c = b
            .slice(&[Slice::with_step(0, 1_000_000, 1)])
            .unwrap()
            .reshape(&[4, 250_000])
            .unwrap();
        let got = c.sum(1).unwrap().to_vec::<i32>().unwrap();
        let want: Vec<i32> = ints[..1_000_000]
            .chunks(250_000)
            .map(|r| r.iter().sum())
            .collect();
        assert_eq!(got, want);
    }
}

#[test]
fn matmul_matches_cpu() {
    let cases: [(&[usize], &[usize]); 6] = [
        (&[1, 1], &[1, 1]),
        (&[3, 5], &[5, 2]),
        (&[65, 70], &[70, 33]),
        (&[3, 17, 9], &[9, 20]),
        (&[2, 1, 4, 6], &[3, 6, 5]),
        (&[7], &[7, 3]),
    ];
    for dev in gpus() {
        for dtype in DType::ALL {
            for (sa, sb) in cases {
                let (na, nb): (usize, usize) = (sa.iter().product(), sb.iter().product());
                let a_c = from_scalars(&small(dtype, na, 1), sa, dtype, &cpu());
                let b_c = from_scalars(&small(dtype, nb, 2), sb, dtype, &cpu());
                let (a_g, b_g) = (a_c.to_device(&dev).unwrap(), b_c.to_device(&dev).unwrap());
                let what = format!("matmul {dtype} {sa:?} @ {sb:?} on {dev}");
                same(&what, &dev, &[dtype], a_c.matmul(&b_c), a_g.matmul(&b_g));
            }
            // Transposed operands read through their strides.
            let a_c = from_scalars(&small(dtype, 40 * 30, 3), &[40, 30], dtype, &cpu());
            let a_g = a_c.to_device(&dev).unwrap();
            same(
                &format!("matmul {dtype} a.T @ a on {dev}"),
                &dev,
                &[dtype],
                a_c.t().unwrap().matmul(&a_c),
                a_g.t().unwrap().matmul(&a_g),
            );
        }
    }
}

/// Small values, so products and sums are exact in every dtype.
fn small(dtype: DType, n: usize, salt: usize) -> Vec<Scalar> {
    (0..n)
        .map(|i| {
            let v = ((i * 5 + salt * 3) % 7) as i128 - 2;
            match dtype {
                DType::Bool => Scalar::Bool(v > 0),
                d if d.kind() == dlarray::dtype::Kind::UInt => Scalar::Int(v.abs()),
                d if d.is_integer() => Scalar::Int(v),
                d if d.is_complex() => {
                    Scalar::Complex(dlarray::dtype::Complex64::new(v as f64, 0.5))
                }
                _ => Scalar::Float(v as f64 * 0.5),
            }
        })
        .collect()
}

#[test]
fn unsupported_dtypes_name_backend_op_and_dtype() {
    for dev in gpus() {
        let a = Array::from_slice_on(&[1.0f64, 2.0], &[2], &dev).unwrap();
        match &a + &a {
            Err(Error::Unsupported { backend, op, dtype }) => {
                assert_eq!(
                    (backend.as_str(), op.as_str(), dtype),
                    ("wgpu", "add", DType::F64)
                );
            }
            other => panic!("expected Unsupported, got {other:?}"),
        }
        // The data is intact and movable.
        assert_eq!(a.to_vec::<f64>().unwrap(), vec![1.0, 2.0]);
        assert!(matches!(
            a.unary(UnaryOp::Exp),
            Err(Error::Unsupported { .. })
        ));
        // Integers needing a float compute in float32 here (no float64 kernels).
        let i = Array::from_slice_on(&[1i32, 2], &[2], &dev).unwrap();
        let e = i.unary(UnaryOp::Exp).unwrap();
        assert_eq!(e.dtype(), DType::F32);
        let want = [Scalar::Float(1f64.exp()), Scalar::Float(2f64.exp())];
        assert_close("exp i32", DType::F32, &to_scalars(&e), &want);
        assert_eq!(i.sum(dlarray::Axes::All).unwrap().dtype(), DType::I32);
    }
}

/// 8- and 16-bit integers are packed several to a WGSL word: odd lengths (a word half
/// written), wrapping arithmetic at the type's edges, floats saturating into them, reductions
/// and matmul (computed in 32 bits, then narrowed), each as the CPU does.
#[test]
fn narrow_integers_wrap_and_saturate_as_on_the_cpu() {
    for dev in gpus() {
        for dtype in [DType::I8, DType::U8, DType::I16, DType::U16] {
            let bits = dtype.size_in_bytes() as u32 * 8;
            let (lo, hi): (i128, i128) = if dtype.kind() == dlarray::dtype::Kind::UInt {
                (0, (1 << bits) - 1)
            } else {
                (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
            };
            let xs: Vec<Scalar> = [hi, lo, hi - 1, lo + 1, 0, 1, 3, hi / 2, 2, 7, lo / 3, 5, 9]
                .iter()
                .map(|&v| Scalar::Int(v))
                .collect();
            for n in [1, 3, 7, 13] {
                let a_c = from_scalars(&xs[..n], &[n], dtype, &cpu());
                let b_c = from_scalars(&xs[13 - n..], &[n], dtype, &cpu());
                let (a_g, b_g) = (a_c.to_device(&dev).unwrap(), b_c.to_device(&dev).unwrap());
                // `f` on the CPU operands and on the wgpu ones.
                let check = |op: String, f: &dyn Fn(&Array, &Array) -> dlarray::Result<Array>| {
                    let what = format!("{op} {dtype} [{n}] on {dev}");
                    same(&what, &dev, &[dtype], f(&a_c, &b_c), f(&a_g, &b_g));
                };
                for op in [
                    BinaryOp::Add,
                    BinaryOp::Sub,
                    BinaryOp::Mul,
                    BinaryOp::FloorDivide,
                    BinaryOp::Remainder,
                    BinaryOp::LeftShift,
                    BinaryOp::RightShift,
                    BinaryOp::BitwiseXor,
                    BinaryOp::Lt,
                ] {
                    check(op.to_string(), &|a, b| a.binary(op, b));
                }
                for op in [UnaryOp::Neg, UnaryOp::Abs, UnaryOp::BitwiseInvert] {
                    check(op.to_string(), &|a, _| a.unary(op));
                }
                for op in [ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min] {
                    check(op.to_string(), &|a, _| {
                        a.reduce(op, dlarray::Axes::All, false)
                    });
                }
            }
            // Floats out of range, NaN and fractions into the narrow type: saturated, 0,
            // truncated (Rust's `as`).
            let fs: Vec<Scalar> = [300.0, -300.0, f64::NAN, 1e10, -1.5, 2.7, 65535.9, -40000.0]
                .iter()
                .map(|&v| Scalar::Float(v))
                .collect();
            let f_c = from_scalars(&fs, &[fs.len()], DType::F32, &cpu());
            // int32 into the narrow type wraps.
            let w_c = from_scalars(&xs, &[13], DType::I32, &cpu())
                .binary(
                    BinaryOp::Mul,
                    &Array::full(&[13], 1001i32, DType::I32).unwrap(),
                )
                .unwrap();
            for src_c in [f_c, w_c] {
                let (from, src_g) = (src_c.dtype(), src_c.to_device(&dev).unwrap());
                same(
                    &format!("cast {from} -> {dtype} on {dev}"),
                    &dev,
                    &[from, dtype],
                    src_c.astype(dtype),
                    src_g.astype(dtype),
                );
            }
            // A [3, 5] @ [5, 7] product wraps in the narrow type.
            let m_c = from_scalars(&xs[..12].repeat(3)[..15], &[3, 5], dtype, &cpu());
            let k_c = from_scalars(&xs.repeat(3)[..35], &[5, 7], dtype, &cpu());
            let (m_g, k_g) = (m_c.to_device(&dev).unwrap(), k_c.to_device(&dev).unwrap());
            same(
                &format!("matmul {dtype} on {dev}"),
                &dev,
                &[dtype],
                m_c.matmul(&k_c),
                m_g.matmul(&k_g),
            );
        }
    }
}

/// With `DLARRAY_WGPU_ADAPTERS=all`, lavapipe's Vulkan and GL adapters are two devices: the
/// sharding test runs again in a child process that sees both (one test thread: wgpu's GL
/// backend is not fit for concurrent use).
#[test]
fn sharding_over_every_adapter() {
    if gpus().is_empty() {
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "moves_between_devices_and_sharding",
            "--test-threads=1",
        ])
        .env("DLARRAY_WGPU_ADAPTERS", "all")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed:\n{text}");
    assert!(text.contains("1 passed"), "{text}");
}

#[test]
fn moves_between_devices_and_sharding() {
    let gs = gpus();
    if std::env::var("DLARRAY_WGPU_ADAPTERS").as_deref() == Ok("all") {
        eprintln!("wgpu devices: {gs:?}");
    }
    if gs.is_empty() {
        return;
    }
    let xs: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5).collect();
    let a = Array::from_slice_on(&xs, &[10, 100], &gs[0]).unwrap();
    for dev in &gs {
        let b = a.to_device(dev).unwrap();
        assert_eq!(b.to_vec::<f32>().unwrap(), xs, "to {dev}");
        assert_eq!(b.devices(), vec![dev.clone()]);
    }
    // Sharded over every wgpu device (one or more), rows split unevenly.
    let mesh = dlarray::Mesh::new(gs.clone(), &[gs.len()], &["x"]).unwrap();
    let sharding = dlarray::Sharding::Named(mesh, dlarray::PartitionSpec::new(&[Some("x"), None]));
    let s = a.device_put(&sharding).unwrap();
    assert_eq!(s.addressable_shards().len(), gs.len());
    let sum = (&s + &s).unwrap();
    assert_eq!(sum.devices(), s.devices());
    assert_eq!(sum.addressable_shards().len(), gs.len());
    let want: Vec<f32> = xs.iter().map(|v| v * 2.0).collect();
    assert_eq!(sum.to_vec::<f32>().unwrap(), want);
    let cpu_copy = Array::from_slice_on(&xs, &[10, 100], &cpu()).unwrap();
    assert_eq!((&s + &cpu_copy).unwrap().to_vec::<f32>().unwrap(), want);
}

#[test]
fn dlpack_export_falls_back_to_a_host_copy() {
    const MSG: &str =
        "__dlpack__ device only supported for CPU, GPU and TPU pinned host, got platform: wgpu";
    for dev in gpus() {
        let xs: Vec<i32> = (0..24).collect();
        let a = Array::from_slice_on(&xs, &[4, 6], &dev)
            .unwrap()
            .t()
            .unwrap();
        // Legacy tensors have no flags; the versioned one says IS_COPIED.
        let legacy = a.to_dlpack().unwrap();
        assert_eq!(
            legacy.fallback_reason().map(|e| e.to_string()).as_deref(),
            Some(MSG)
        );
        drop(legacy);
        let t = a
            .to_dlpack_with(ExportOptions {
                max_version: Some((1, 0)),
                ..Default::default()
            })
            .unwrap();
        assert!(t.is_copied());
        assert_eq!(
            t.fallback_reason().map(|e| e.to_string()).as_deref(),
            Some(MSG)
        );
        let back = Array::from_dlpack(t).unwrap();
        assert_eq!(back.devices(), vec![cpu()]);
        assert_eq!(back.to_vec::<i32>().unwrap(), a.to_vec::<i32>().unwrap());
        let strict = ExportOptions {
            policy: Some(DlpackPolicy::Strict),
            ..Default::default()
        };
        match a.to_dlpack_with(strict) {
            Err(Error::Buffer(e)) => assert_eq!(e.to_string(), MSG),
            other => panic!("strict: {other:?}"),
        }
        let no_copy = ExportOptions {
            copy: Some(false),
            ..Default::default()
        };
        match a.to_dlpack_with(no_copy) {
            Err(Error::Buffer(e)) => assert_eq!(e.to_string(), MSG),
            other => panic!("copy=False: {other:?}"),
        }
    }
}

/// Many threads on one device at once (GL adapters serialise inside dlarray; wgpu's own GL
/// context lock used to panic and abort the process), each result checked, buffers dropped
/// on whichever thread holds them last.
#[test]
fn many_threads_share_one_device() {
    let gpu = gpus()[0].clone();
    let base: Vec<f32> = (0..4096).map(|i| i as f32).collect();
    let x = Array::from_vec(base.clone(), &[64, 64])
        .unwrap()
        .to_device(&gpu)
        .unwrap();
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let (x, base) = (x.clone(), base.clone());
            std::thread::spawn(move || {
                for i in 0..6 {
                    let k = (t * 10 + i) as f32;
                    let y = (&x
                        + &Array::scalar(k)
                            .unwrap()
                            .to_device(&x.devices()[0])
                            .unwrap())
                        .unwrap();
                    let want: Vec<f32> = base.iter().map(|v| v + k).collect();
                    assert_eq!(y.to_vec::<f32>().unwrap(), want, "thread {t} step {i}");
                    let s = y.sum(dlarray::Axes::All).unwrap().item::<f32>().unwrap();
                    assert!(s > 0.0);
                }
                x // dropped by the main thread
            })
        })
        .collect();
    for t in threads {
        drop(t.join().expect("no panic, no abort"));
    }
}

/// Moves onto a wgpu device write straight into wgpu's staging memory, padded to whole words.
#[test]
fn moves_of_any_length_arrive_intact() {
    let gpu = gpus()[0].clone();
    for n in [0usize, 1, 3, 4, 5, 7, 1001] {
        let v: Vec<u8> = (0..n).map(|i| (i * 37 % 251) as u8).collect();
        let a = Array::from_vec(v.clone(), &[n]).unwrap();
        let g = a.to_device(&gpu).unwrap();
        assert_eq!(g.to_vec::<u8>().unwrap(), v, "{n} bytes");
        // A strided view of a TPU array, moved across backends.
        let tpu = dlarray::get_device("tpu:0").unwrap();
        let t = a
            .to_device(&tpu)
            .unwrap()
            .slice(&[Slice::new(None, None, -2)])
            .unwrap();
        let want: Vec<u8> = v.iter().rev().step_by(2).copied().collect();
        assert_eq!(t.to_device(&gpu).unwrap().to_vec::<u8>().unwrap(), want);
    }
}

/// Random draws on a wgpu device are the CPU's bit for bit (bits, uniform, randint: integer
/// and correctly rounded ops), from the WGSL threefry kernel, for whole arrays and for blocks
/// of a sharded one; normal within WGSL's log/sqrt accuracy.
#[test]
fn random_draws_match_cpu() {
    use dlarray::random::{Key, Sampler};
    let key = Key::new(77);
    let cpu_s = Sampler::sharded(&key, &dlarray::Sharding::single(&cpu()));
    for dev in gpus() {
        let s = Sampler::sharded(&key, &dlarray::Sharding::single(&dev));
        for shape in [vec![1000], vec![3, 7, 5], vec![]] {
            // 8- and 16-bit draws are the low bits of 32-bit ones, cast on the device.
            for dtype in [DType::U8, DType::U16, DType::U32, DType::U64] {
                let (g, c) = (s.bits(&shape, dtype), cpu_s.bits(&shape, dtype));
                assert_eq!(
                    to_scalars(&g.unwrap()),
                    to_scalars(&c.unwrap()),
                    "bits {dtype} {shape:?}"
                );
            }
            let g = s.uniform(&shape, DType::F32, -2.0, 3.0).unwrap();
            let c = cpu_s.uniform(&shape, DType::F32, -2.0, 3.0).unwrap();
            assert_eq!(to_scalars(&g), to_scalars(&c), "uniform {shape:?}");
            let g = s.randint(&shape, -5, 1000, DType::I32).unwrap();
            let c = cpu_s.randint(&shape, -5, 1000, DType::I32).unwrap();
            assert_eq!(to_scalars(&g), to_scalars(&c), "randint {shape:?}");
            let g = s.normal(&shape, DType::F32).unwrap();
            let c = cpu_s.normal(&shape, DType::F32).unwrap();
            assert_close(
                &format!("normal {shape:?}"),
                DType::F32,
                &to_scalars(&g),
                &to_scalars(&c),
            );
        }
        // Column blocks of a sharded array: strided counters.
        let other = devices_of("wgpu")
            .into_iter()
            .find(|d| d != &dev)
            .unwrap_or_else(cpu);
        let sharding = dlarray::Sharding::split(vec![dev.clone(), other], 1).unwrap();
        let g = Sampler::sharded(&key, &sharding)
            .bits(&[6, 9], DType::U32)
            .unwrap();
        let c = cpu_s.bits(&[6, 9], DType::U32).unwrap();
        assert_eq!(to_scalars(&g), to_scalars(&c), "sharded bits");
    }
}
