//! The CUDA backend on a real GPU (`scripts/gpu-check.sh run` on the lent machine):
//! `cargo test --release --test gpu_cuda -- --ignored`. Without a GPU they are ignored; the
//! same logic runs on the fake driver in CI (`backends::gpu::tests`).
#![cfg(feature = "cuda")]

use dlarray::backends::get_device;
use dlarray::{Array, DType, Device, MemoryKind};

fn cuda() -> Device {
    get_device("cuda:0").unwrap_or_else(|e| panic!("no CUDA device: {e}"))
}

fn host(dt: DType, n: usize) -> Array {
    let v: Vec<f64> = (0..n)
        .map(|i| ((i * 7919) % 97) as f64 * 0.5 - 20.0)
        .collect();
    Array::from_vec(v, &[n]).unwrap().astype(dt).unwrap()
}

fn values(a: &Array) -> Vec<f64> {
    a.to_device(&get_device("cpu:0").unwrap())
        .unwrap()
        .astype(DType::F64)
        .unwrap()
        .to_vec::<f64>()
        .unwrap()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn elementwise_reductions_casts_and_matmul_match_the_cpu() {
    let d = cuda();
    for dt in [
        DType::F32,
        DType::F64,
        DType::F16,
        DType::BF16,
        DType::I32,
        DType::U8,
        DType::I64,
    ] {
        let x = host(dt, 1 << 16).reshape(&[256, 256]).unwrap();
        let g = x.to_device(&d).unwrap();
        let check = |gpu: Array, cpu: Array, what: &str| {
            // Progress on stderr (`--nocapture`): a hang on the GPU shows where it is.
            eprintln!("  {dt} {what}");
            let (a, b) = (values(&gpu), values(&cpu));
            assert_eq!(a.len(), b.len(), "{what}");
            for (i, (p, q)) in a.iter().zip(&b).enumerate() {
                let tol = if dt.is_float() {
                    1e-2 * q.abs().max(1.0)
                } else {
                    0.0
                };
                assert!(
                    (p - q).abs() <= tol || (p.is_nan() && q.is_nan()),
                    "{what} {dt} [{i}]: {p} vs {q}"
                );
            }
        };
        check(
            (&g + &g.t().unwrap()).unwrap(),
            (&x + &x.t().unwrap()).unwrap(),
            "add transposed",
        );
        check(g.max(vec![1]).unwrap(), x.max(vec![1]).unwrap(), "max rows");
        check(
            g.astype(DType::F32).unwrap(),
            x.astype(DType::F32).unwrap(),
            "cast",
        );
        if !dt.is_float() {
            check(
                g.sum(vec![0, 1]).unwrap(),
                x.sum(vec![0, 1]).unwrap(),
                "sum",
            );
        }
        if dt != DType::U8 {
            let a = g.slice(&[dlarray::Slice::new(None, Some(64), 1)]).unwrap();
            let b = x.slice(&[dlarray::Slice::new(None, Some(64), 1)]).unwrap();
            check(a.matmul(&g).unwrap(), b.matmul(&x).unwrap(), "matmul");
        }
    }
    // A long f32 sum (two passes) against f64 on the host.
    eprintln!("  f32 long sum");
    let x = host(DType::F32, 1 << 24);
    let s = values(&x.to_device(&d).unwrap().sum(vec![0]).unwrap())[0];
    let want: f64 = values(&x).iter().sum();
    assert!(
        (s - want).abs() <= 1e-4 * want.abs().max(1.0),
        "{s} vs {want}"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn pinned_memory_dlpack_and_moves() {
    let d = cuda();
    let x = host(DType::F32, 1000).to_device(&d).unwrap();
    assert_eq!(
        x.dlpack_device().unwrap(),
        dlarray::DLDevice::new(dlarray::DLDeviceType::kDLCUDA, 0)
    );
    let p = x.with_memory_kind(MemoryKind::PinnedHost).unwrap();
    assert_eq!(values(&p), values(&x));
    let t = x.to_dlpack().unwrap();
    let ptr = t.dl_tensor().unwrap().data as usize;
    let back = Array::from_dlpack(t).unwrap();
    assert_eq!(back.unsafe_buffer_pointer().unwrap(), ptr);
    assert_eq!(values(&back), values(&x));
    d.backend().synchronize(0).unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn random_draws_and_bitwise_ops_match_the_cpu() {
    use dlarray::random::{Key, Sampler};
    let key = Key::new(99);
    let on_cpu = Sampler::sharded(
        &key,
        &dlarray::Sharding::single(&get_device("cpu:0").unwrap()),
    );
    let on_gpu = Sampler::sharded(&key, &dlarray::Sharding::single(&cuda()));
    let shape = [1 << 20];
    for dt in [DType::U8, DType::U32, DType::U64] {
        let (g, c) = (
            on_gpu.bits(&shape, dt).unwrap(),
            on_cpu.bits(&shape, dt).unwrap(),
        );
        assert_eq!(values(&g), values(&c), "bits {dt}");
    }
    for dt in [DType::F16, DType::BF16, DType::F32, DType::F64] {
        let g = on_gpu.uniform(&shape, dt, -1.0, 3.0).unwrap();
        let c = on_cpu.uniform(&shape, dt, -1.0, 3.0).unwrap();
        assert_eq!(values(&g), values(&c), "uniform {dt}");
    }
    let g = on_gpu.randint(&shape, -7, 1 << 40, DType::I64).unwrap();
    let c = on_cpu.randint(&shape, -7, 1 << 40, DType::I64).unwrap();
    assert_eq!(values(&g), values(&c), "randint");
    let g = on_gpu.normal(&shape, DType::F32).unwrap();
    let c = on_cpu.normal(&shape, DType::F32).unwrap();
    for (x, y) in values(&g).iter().zip(values(&c)) {
        assert!((x - y).abs() <= 1e-5 * y.abs().max(1.0), "normal {x} {y}");
    }
    let a = on_cpu.bits(&[4096], DType::U32).unwrap();
    let b = on_cpu.randint(&[4096], 0, 40, DType::U32).unwrap();
    let (ga, gb) = (a.to_device(&cuda()).unwrap(), b.to_device(&cuda()).unwrap());
    for op in [
        dlarray::BinaryOp::BitwiseXor,
        dlarray::BinaryOp::LeftShift,
        dlarray::BinaryOp::RightShift,
        dlarray::BinaryOp::Remainder,
        dlarray::BinaryOp::FloorDivide,
    ] {
        assert_eq!(
            values(&ga.binary(op, &gb).unwrap()),
            values(&a.binary(op, &b).unwrap()),
            "{op}"
        );
    }
}
