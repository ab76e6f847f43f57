//! The shared GPU runtime on the fake driver: every op against the CPU backend, the stream
//! and event rules, deferred release, DLPack, faults, three devices.

use super::fake::FakeDriver;
use super::{DriverErrorKind, GpuBackend, PoolLimits};
use crate::backends::{Backend, BinaryOp, Device, MemoryKind, ReduceOp, UnaryOp};
use crate::dlpack::ffi::DLDeviceType;
use crate::dlpack::stream::StreamArg;
use crate::dtype::DType;
use crate::error::Error;
use crate::{Array, ExportOptions, Sharding};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// One fake backend of three devices, registered once for the process.
fn fake() -> &'static (Arc<GpuBackend<FakeDriver>>, Vec<Device>) {
    static FAKE: OnceLock<(Arc<GpuBackend<FakeDriver>>, Vec<Device>)> = OnceLock::new();
    FAKE.get_or_init(|| {
        let be = Arc::new(
            GpuBackend::new(FakeDriver::new("fakecuda", 3), PoolLimits::default()).unwrap(),
        );
        let devs = crate::backends::register_backend(be.clone()).unwrap();
        (be, devs)
    })
}

/// Tests on the shared backend run one at a time: one test's waits run another's queues.
fn serial() -> MutexGuard<'static, ()> {
    static M: Mutex<()> = Mutex::new(());
    M.lock().unwrap_or_else(|e| e.into_inner())
}

/// A private backend for tests that break their devices.
fn private(devices: usize) -> GpuBackend<FakeDriver> {
    GpuBackend::new(
        FakeDriver::new("fakecuda-private", devices),
        PoolLimits::default(),
    )
    .unwrap()
}

fn cpu() -> Device {
    crate::backends::get_device("cpu:0").unwrap()
}

/// Values of every dtype: mixed signs, zero, large magnitudes, NaN and infinities for floats.
fn sample(dt: DType, n: usize) -> Array {
    let v: Vec<f64> = (0..n)
        .map(|i| match i % 11 {
            0 => 0.0,
            1 => -1.5,
            2 => 3.25,
            3 => 1e10,
            4 => -7.0,
            5 => f64::NAN,
            6 => f64::INFINITY,
            7 => 2.0,
            8 => -300.75,
            9 => 0.5,
            _ => 1.0 + i as f64,
        })
        .collect();
    let x = Array::from_vec(v, &[n]).unwrap();
    x.astype(dt).unwrap()
}

/// The bytes of `a` on the CPU; inexact values widened to complex128 with every NaN made
/// the same NaN (a NaN's sign and payload are not part of any op's result).
fn bytes(a: &Array) -> Vec<u8> {
    let a = a.to_device(&cpu()).unwrap();
    if a.dtype().is_inexact() {
        let c = a
            .astype(DType::Complex128)
            .unwrap()
            .to_vec::<num_complex::Complex64>()
            .unwrap();
        let canon = |v: f64| if v.is_nan() { f64::NAN } else { v };
        return c
            .iter()
            .flat_map(|z| [canon(z.re).to_bits(), canon(z.im).to_bits()])
            .flat_map(u64::to_ne_bytes)
            .collect();
    }
    crate::with_dtype!(a.dtype(), T => bytemuck::cast_slice::<T, u8>(&a.to_vec::<T>().unwrap()).to_vec())
}

fn same(gpu: &crate::Result<Array>, cpu: &crate::Result<Array>, what: &str) {
    match (gpu, cpu) {
        (Ok(g), Ok(c)) => {
            assert_eq!(g.shape(), c.shape(), "{what}: shape");
            assert_eq!(g.dtype(), c.dtype(), "{what}: dtype");
            assert_eq!(bytes(g), bytes(c), "{what}: values");
        }
        (Err(g), Err(_)) => assert!(!g.to_string().is_empty()),
        (g, c) => panic!("{what}: gpu {g:?} but cpu {c:?}"),
    }
}

#[test]
fn every_elementwise_op_and_cast_matches_the_cpu_on_strided_inputs() {
    let _g = serial();
    let (_, devs) = fake();
    let d = &devs[0];
    for &dt in &DType::ALL {
        let base = sample(dt, 24).reshape(&[2, 3, 4]).unwrap();
        // Transposed, sliced with a negative step, and broadcast views.
        let views = [
            base.clone(),
            base.permute(&[2, 0, 1]).unwrap(),
            base.slice(&[crate::layout::Slice::new(None, None, -1)])
                .unwrap(),
        ];
        for x in &views {
            let g = x.to_device(d).unwrap();
            for &op in UnaryOp::ALL {
                same(&g.unary(op), &x.unary(op), &format!("{op} {dt}"));
            }
            for &to in &DType::ALL {
                same(&g.astype(to), &x.astype(to), &format!("cast {dt} -> {to}"));
            }
            let y = x.t().unwrap().t().unwrap();
            let gy = y.to_device(d).unwrap();
            for &op in BinaryOp::ALL {
                same(&g.binary(op, &gy), &x.binary(op, &y), &format!("{op} {dt}"));
            }
        }
        // where, with a strided condition and broadcast values.
        let cond = sample(DType::Bool, 24)
            .reshape(&[2, 3, 4])
            .unwrap()
            .permute(&[0, 1, 2])
            .unwrap();
        let gc = cond.to_device(d).unwrap();
        let (x0, r0) = (views[1].clone(), sample(dt, 4));
        let (gx0, gr0) = (x0.to_device(d).unwrap(), r0.to_device(d).unwrap());
        let cond_t = cond.permute(&[2, 0, 1]).unwrap();
        let gc_t = gc.permute(&[2, 0, 1]).unwrap();
        same(
            &gc_t.where_cond(&gx0, &gr0.reshape(&[4, 1, 1]).unwrap()),
            &cond_t.where_cond(&x0, &r0.reshape(&[4, 1, 1]).unwrap()),
            &format!("where {dt}"),
        );
        // Broadcasting: [2, 3, 4] with [4] and [3, 1].
        let (x, row) = (base.clone(), sample(dt, 4));
        let col = sample(dt, 3).reshape(&[3, 1]).unwrap();
        let (gx, grow, gcol) = (
            x.to_device(d).unwrap(),
            row.to_device(d).unwrap(),
            col.to_device(d).unwrap(),
        );
        for op in [BinaryOp::Add, BinaryOp::Maximum, BinaryOp::Lt, BinaryOp::Eq] {
            same(
                &gx.binary(op, &grow),
                &x.binary(op, &row),
                &format!("{op} {dt} row"),
            );
            same(
                &gx.binary(op, &gcol),
                &x.binary(op, &col),
                &format!("{op} {dt} col"),
            );
        }
    }
}

#[test]
fn reductions_match_the_cpu_over_any_axes_including_two_pass_ones() {
    let _g = serial();
    let (_, devs) = fake();
    let d = &devs[0];
    for &dt in &DType::ALL {
        let x = sample(dt, 60).reshape(&[3, 4, 5]).unwrap();
        let g = x.to_device(d).unwrap();
        for axes in [
            vec![],
            vec![0],
            vec![1],
            vec![2],
            vec![0, 2],
            vec![1, 2],
            vec![0, 1, 2],
        ] {
            for op in ReduceOp::ALL {
                let what = format!("{op} {dt} over {axes:?}");
                let (rg, rc) = (
                    g.reduce(*op, axes.clone(), false),
                    x.reduce(*op, axes.clone(), false),
                );
                same(&rg, &rc, &what);
            }
        }
        let t = x.permute(&[2, 0, 1]).unwrap();
        same(
            &t.to_device(d).unwrap().max(vec![1]),
            &t.max(vec![1]),
            &format!("max {dt} transposed"),
        );
    }
    // Long reductions run in two passes (partials, then their reduction): integer sums are
    // exact, so they must agree bit for bit.
    for dt in [DType::I32, DType::U8, DType::I64] {
        let x = sample(dt, 40_000).reshape(&[2, 20_000]).unwrap();
        let g = x.to_device(d).unwrap();
        for axes in [vec![1], vec![0, 1]] {
            same(
                &g.sum(axes.clone()),
                &x.sum(axes.clone()),
                &format!("long sum {dt} {axes:?}"),
            );
            same(
                &g.max(axes.clone()),
                &x.max(axes.clone()),
                &format!("long max {dt} {axes:?}"),
            );
        }
    }
    let x = Array::from_vec(
        (0..30_000)
            .map(|i| (i % 7) as f32 * 0.25)
            .collect::<Vec<f32>>(),
        &[30_000],
    )
    .unwrap();
    let (s, c) = (
        x.to_device(d).unwrap().sum(vec![0]).unwrap(),
        x.sum(vec![0]).unwrap(),
    );
    let (s, c) = (
        s.to_device(&cpu()).unwrap().item::<f32>().unwrap(),
        c.item::<f32>().unwrap(),
    );
    assert!(
        (s - c).abs() <= 1e-3 * c.abs(),
        "two-pass f32 sum {s} vs {c}"
    );
}

#[test]
fn matmul_matches_the_cpu_with_batches_and_transposes() {
    let _g = serial();
    let (_, devs) = fake();
    let d = &devs[0];
    for &dt in &DType::ALL {
        let a = sample(dt, 2 * 5 * 3).reshape(&[2, 5, 3]).unwrap();
        let b = sample(dt, 2 * 3 * 4).reshape(&[2, 3, 4]).unwrap();
        let (ga, gb) = (a.to_device(d).unwrap(), b.to_device(d).unwrap());
        same(&ga.matmul(&gb), &a.matmul(&b), &format!("matmul {dt}"));
        let at = a.permute(&[0, 2, 1]).unwrap();
        let gat = at.to_device(d).unwrap();
        same(
            &gat.matmul(&gat.permute(&[0, 2, 1]).unwrap()),
            &at.matmul(&a),
            &format!("matmul {dt} transposed"),
        );
    }
}

#[test]
fn creation_fills_and_empty_arrays() {
    let _g = serial();
    let (_, devs) = fake();
    let d = &devs[1];
    for &dt in &DType::ALL {
        let g = Array::full_sharded(
            &[3, 70],
            crate::dtype::Scalar::Float(2.5),
            dt,
            &Sharding::single(d),
        )
        .unwrap();
        let c = Array::full_sharded(
            &[3, 70],
            crate::dtype::Scalar::Float(2.5),
            dt,
            &Sharding::single(&cpu()),
        )
        .unwrap();
        same(&Ok(g), &Ok(c), &format!("full {dt}"));
    }
    let e = Array::from_vec(Vec::<f32>::new(), &[0, 3])
        .unwrap()
        .to_device(d)
        .unwrap();
    assert_eq!(
        (&e + &e).unwrap().to_vec::<f32>().unwrap(),
        Vec::<f32>::new()
    );
    assert_eq!(
        e.sum(vec![0]).unwrap().to_vec::<f32>().unwrap(),
        vec![0.0; 3]
    );
    let s = Array::scalar(4i64).unwrap().to_device(d).unwrap();
    assert_eq!((&s * &s).unwrap().to_vec::<i64>().unwrap(), vec![16]);
}

#[test]
fn queued_work_runs_only_at_a_wait_and_download_waits_for_its_source_only() {
    // A backend of its own: other tests synchronising the shared one would run its queue.
    let be = private(1);
    let stream = be.devices[0].stream;
    let l = crate::layout::Layout::contiguous(&[3]).unwrap();
    let t = |b| tref(b, &l);
    let bytes: Vec<u8> = [1.0f32, 2.0, 3.0]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    let x = be.upload(0, MemoryKind::Device, &bytes).unwrap();
    let y = be.binary(BinaryOp::Add, t(&x), t(&x), DType::F32).unwrap();
    let z = be.binary(BinaryOp::Mul, t(&y), t(&y), DType::F32).unwrap();
    assert!(
        be.driver().pending(stream) >= 3,
        "the copy and kernels are queued, not run"
    );
    let read = |b: &crate::backends::SharedBuffer| {
        let mut out = [0u8; 12];
        be.download(tref(b, &l), &mut out).unwrap();
        out.chunks(4)
            .map(|c| f32::from_ne_bytes(c.try_into().unwrap()))
            .collect::<Vec<_>>()
    };
    assert_eq!(read(&y), vec![2.0, 4.0, 6.0]);
    assert!(
        be.driver().pending(stream) >= 1,
        "the download of y did not wait for z"
    );
    assert_eq!(read(&z), vec![4.0, 16.0, 36.0]);
}

/// An f32 view of `b`.
fn tref<'a>(
    b: &'a crate::backends::SharedBuffer,
    l: &'a crate::layout::Layout,
) -> crate::backends::TensorRef<'a> {
    typed(b, l, DType::F32)
}

/// A view of `b` as `dtype`.
fn typed<'a>(
    b: &'a crate::backends::SharedBuffer,
    l: &'a crate::layout::Layout,
    dtype: DType,
) -> crate::backends::TensorRef<'a> {
    crate::backends::TensorRef {
        buffer: &**b,
        layout: l,
        dtype,
    }
}

#[test]
fn moves_between_devices_kinds_and_backends_are_ordered() {
    let _g = serial();
    let (_, devs) = fake();
    let x = Array::from_vec((0..50).map(|i| i as f64).collect::<Vec<_>>(), &[5, 10]).unwrap();
    let a = x.to_device(&devs[0]).unwrap();
    let b = (&a + &a).unwrap().to_device(&devs[2]).unwrap();
    let c = (&b * &b).unwrap();
    let want: Vec<f64> = (0..50).map(|i| (2 * i * 2 * i) as f64).collect();
    assert_eq!(c.to_vec::<f64>().unwrap(), want);
    // Strided source, pinned memory on another device, and back.
    let t = a.t().unwrap().to_device(&devs[1]).unwrap();
    assert_eq!(bytes(&t), bytes(&x.t().unwrap()));
    let p = c.with_memory_kind(MemoryKind::PinnedHost).unwrap();
    assert_eq!(p.memory_kind(), MemoryKind::PinnedHost);
    assert_eq!((&p - &p).unwrap().to_vec::<f64>().unwrap(), vec![0.0; 50]);
    assert_eq!(
        p.with_memory_kind(MemoryKind::Device)
            .unwrap()
            .to_vec::<f64>()
            .unwrap(),
        want
    );
    // Operands on two devices: the second is moved to the first's.
    let mixed = (&a + &x.to_device(&devs[1]).unwrap()).unwrap();
    assert_eq!(mixed.devices(), vec![devs[0].clone()]);
}

#[test]
fn sharded_arrays_over_three_devices() {
    let _g = serial();
    let (_, devs) = fake();
    let x = Array::from_vec((0..36).map(|i| i as f32).collect::<Vec<_>>(), &[6, 6]).unwrap();
    let s = x
        .device_put(&Sharding::split(devs.clone(), 0).unwrap())
        .unwrap();
    assert_eq!(s.addressable_shards().len(), 3);
    let y = (&s * 2.0f32).unwrap().exp().unwrap();
    assert_eq!(bytes(&y), bytes(&(&x * 2.0f32).unwrap().exp().unwrap()));
    assert_eq!(
        bytes(&s.sum(vec![0]).unwrap()),
        bytes(&x.sum(vec![0]).unwrap())
    );
}

/// Random draws from the generated threefry kernel equal the CPU's, on one device, in
/// pinned memory, and over shardings that split rows or columns (strided counters).
#[test]
fn random_draws_match_the_cpu_from_the_threefry_kernel() {
    use crate::random::{Key, Sampler};
    let _g = serial();
    let (be, devs) = fake();
    let key = Key::new(2024);
    let on_cpu = Sampler::sharded(&key, &Sharding::single(&cpu()));
    let before = be.driver().counters().launches_run;
    let placements = [
        Sharding::single(&devs[0]),
        Sharding::SingleDevice(devs[1].clone(), MemoryKind::PinnedHost),
        Sharding::split(devs.clone(), 0).unwrap(),
        Sharding::split(devs.clone(), 1).unwrap(),
    ];
    for sharding in &placements {
        let s = Sampler::sharded(&key, sharding);
        for dt in [DType::U8, DType::U32, DType::U64] {
            same(
                &s.bits(&[5, 7], dt),
                &on_cpu.bits(&[5, 7], dt),
                &format!("bits {dt}"),
            );
        }
        same(
            &s.uniform(&[5, 7], DType::F64, -1.0, 2.0),
            &on_cpu.uniform(&[5, 7], DType::F64, -1.0, 2.0),
            "uniform",
        );
        same(
            &s.randint(&[5, 7], -9, 1 << 40, DType::I64),
            &on_cpu.randint(&[5, 7], -9, 1 << 40, DType::I64),
            "randint",
        );
        let keys = Key::new(5).split(4);
        assert_eq!(keys.len(), 4);
    }
    assert!(
        be.driver().counters().launches_run > before,
        "the kernel ran"
    );
}

#[test]
fn dlpack_declares_cuda_memory_and_round_trips_in_place() {
    let _g = serial();
    let (_, devs) = fake();
    let d = &devs[1];
    let x = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[4])
        .unwrap()
        .to_device(d)
        .unwrap();
    assert_eq!(
        x.dlpack_device().unwrap(),
        crate::DLDevice::new(DLDeviceType::kDLCUDA, 1)
    );
    let t = x.to_dlpack().unwrap();
    let ptr = t.dl_tensor().unwrap().data as u64;
    assert_eq!(Some(ptr), x.unsafe_buffer_pointer().ok().map(|p| p as u64));
    let back = Array::from_dlpack(t).unwrap();
    assert_eq!(back.devices(), vec![d.clone()]);
    assert_eq!(back.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
    let p = x.with_memory_kind(MemoryKind::PinnedHost).unwrap();
    assert_eq!(
        p.dlpack_device().unwrap(),
        crate::DLDevice::new(DLDeviceType::kDLCUDAHost, 1)
    );
}

#[test]
fn export_makes_the_consumers_stream_wait_and_import_waits_for_the_producer() {
    let _g = serial();
    let (be, devs) = fake();
    let fd = be.driver();
    let d = &devs[0];
    let x = Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3])
        .unwrap()
        .to_device(d)
        .unwrap();
    x.block_until_ready().unwrap();
    let want: Vec<u8> = [2.0f32, 4.0, 6.0]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    let consumer = fd.producer_stream(0);
    let opts = |s: StreamArg| ExportOptions {
        stream: s,
        ..ExportOptions::default()
    };
    let y = (&x + &x).unwrap();
    let t = y
        .to_dlpack_with(opts(StreamArg::Value(consumer.0 as i64)))
        .unwrap();
    let addr = t.dl_tensor().unwrap().data as u64;
    assert_eq!(
        fd.read_on_stream(consumer, addr, 12).unwrap(),
        want,
        "the consumer's stream waited"
    );
    // stream=-1: no synchronisation; the consumer sees the data only once it is there.
    let y = (&x + &x).unwrap();
    let t2 = y.to_dlpack_with(opts(StreamArg::NoSync)).unwrap();
    let a2 = t2.dl_tensor().unwrap().data as u64;
    assert_ne!(
        fd.read_on_stream(consumer, a2, 12).unwrap(),
        want,
        "no wait was queued"
    );
    // stream=None is CUDA's legacy default stream (handle 1); 0 is refused.
    let y = (&x + &x).unwrap();
    let t3 = y.to_dlpack_with(opts(StreamArg::Unspecified)).unwrap();
    let a3 = t3.dl_tensor().unwrap().data as u64;
    assert_eq!(
        fd.read_on_stream(super::StreamHandle(1), a3, 12).unwrap(),
        want
    );
    assert!(y.to_dlpack_with(opts(StreamArg::Value(0))).is_err());
    drop((t, t2, t3));

    // Import: a producer's write queued on its stream is seen by our kernels.
    let addr = fd.producer_alloc(0, &[0u8; 8]);
    let producer = fd.producer_stream(0);
    fd.queue_write(
        producer,
        addr,
        &[3i32, 4]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect::<Vec<_>>(),
    );
    // SAFETY: the producer stream is live.
    unsafe {
        d.backend()
            .dlpack_wait_for_producer(0, Some(producer.0 as usize))
    }
    .unwrap();
    let owner: crate::backends::Owner = Box::new(());
    // SAFETY: 8 bytes of fake device memory that stay allocated until `producer_free`.
    let buf = unsafe {
        d.backend().wrap_foreign(
            0,
            MemoryKind::Device,
            crate::Address::Device(addr),
            8,
            owner,
        )
    }
    .unwrap();
    let a = Array::from_buffer(
        d.clone(),
        DType::I32,
        buf,
        crate::layout::Layout::contiguous(&[2]).unwrap(),
    );
    assert_eq!((&a * &a).unwrap().to_vec::<i32>().unwrap(), vec![9, 16]);
    drop(a);
    d.backend().synchronize(0).unwrap();
    fd.producer_free(addr);
    // A pointer of another device, or no device at all, is refused.
    let other = fd.producer_alloc(2, &[0u8; 4]);
    for bad in [other, 0x1234] {
        // SAFETY: never read: the wrap is refused.
        let r = unsafe {
            d.backend().wrap_foreign(
                0,
                MemoryKind::Device,
                crate::Address::Device(bad),
                4,
                Box::new(()),
            )
        };
        assert!(matches!(r, Err(Error::InvalidDlpack(_))), "{r:?}");
    }
    fd.producer_free(other);
}

#[test]
fn imported_memory_is_released_once_after_its_last_queued_use() {
    let _g = serial();
    let (be, devs) = fake();
    let fd = be.driver();
    let d = &devs[0];
    d.backend().synchronize(0).unwrap();
    let released = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    struct Count(Arc<std::sync::atomic::AtomicUsize>);
    impl Drop for Count {
        fn drop(&mut self) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
    let addr = fd.producer_alloc(0, &[1u8, 2, 3, 4]);
    // SAFETY: 4 bytes of fake device memory, freed only after the owner is released.
    let buf = unsafe {
        d.backend().wrap_foreign(
            0,
            MemoryKind::Device,
            crate::Address::Device(addr),
            4,
            Box::new(Count(released.clone())),
        )
    }
    .unwrap();
    let a = Array::from_buffer(
        d.clone(),
        DType::U8,
        buf,
        crate::layout::Layout::contiguous(&[4]).unwrap(),
    );
    let b = (&a + &a).unwrap();
    drop(a);
    assert_eq!(
        released.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "a queued kernel still reads it"
    );
    assert_eq!(b.to_vec::<u8>().unwrap(), vec![2, 4, 6, 8]);
    d.backend().synchronize(0).unwrap();
    assert_eq!(
        released.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "released exactly once"
    );
    fd.producer_free(addr);
}

#[test]
fn kernels_are_compiled_once_per_device_and_load_failures_are_errors() {
    let be = private(2);
    let fd = be.driver();
    let x = be.upload(0, MemoryKind::Device, &[0u8; 16]).unwrap();
    let l = crate::layout::Layout::contiguous(&[4]).unwrap();
    let t = typed(&x, &l, DType::F32);
    be.unary(UnaryOp::Exp, t, DType::F32).unwrap();
    be.unary(UnaryOp::Exp, t, DType::F32).unwrap();
    assert_eq!(fd.counters().kernel_loads, 1);
    fd.fail_kernel_loads(true);
    let e = be.unary(UnaryOp::Sin, t, DType::F32).unwrap_err();
    assert!(e.to_string().contains("NVRTC_ERROR_COMPILATION"), "{e}");
    let e = be.unary(UnaryOp::LogicalNot, t, DType::F32).unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    fd.fail_kernel_loads(false);
    be.unary(UnaryOp::Sin, t, DType::F32).unwrap();
}

#[test]
fn out_of_memory_is_an_error_that_loses_nothing_and_the_cache_is_returned_first() {
    let be = private(1);
    let fd = be.driver();
    fd.set_budget(0, Some(1 << 20));
    let e = be
        .fill(
            0,
            MemoryKind::Device,
            DType::F32,
            crate::dtype::Scalar::Float(1.0),
            1 << 20,
        )
        .unwrap_err();
    assert!(matches!(e, Error::OutOfMemory { .. }), "{e}");
    // Fill the budget with cached blocks, then ask for a different size: the cache goes back.
    for _ in 0..3 {
        drop(
            be.fill(
                0,
                MemoryKind::Device,
                DType::U8,
                crate::dtype::Scalar::Int(1),
                300 << 10,
            )
            .unwrap(),
        );
    }
    let big = be
        .fill(
            0,
            MemoryKind::Device,
            DType::U8,
            crate::dtype::Scalar::Int(7),
            900 << 10,
        )
        .unwrap();
    let l = crate::layout::Layout::contiguous(&[900 << 10]).unwrap();
    let mut out = vec![0u8; 900 << 10];
    be.download(typed(&big, &l, DType::U8), &mut out).unwrap();
    assert!(out.iter().all(|&v| v == 7));
    drop(big);
    be.synchronize(0).unwrap();
    assert!(fd.live_device_bytes(0) <= 1 << 20);
    let e = be
        .upload(0, MemoryKind::Device, &vec![0u8; 2 << 20])
        .unwrap_err();
    assert!(matches!(e, Error::OutOfMemory { .. }), "{e}");
}

#[test]
fn a_lost_device_fails_every_later_call_and_drops_do_not_panic() {
    let be = private(2);
    let fd = be.driver();
    let x = be.upload(0, MemoryKind::Device, &[0u8; 16]).unwrap();
    let l = crate::layout::Layout::contiguous(&[4]).unwrap();
    let t = typed(&x, &l, DType::F32);
    fd.lose_device_after(0, fd.counters().launches_run);
    let y = be.unary(UnaryOp::Exp, t, DType::F32).unwrap();
    let e = be.synchronize(0).unwrap_err();
    assert!(matches!(e, Error::DeviceLost { .. }), "{e}");
    assert!(matches!(
        be.unary(UnaryOp::Exp, t, DType::F32),
        Err(Error::DeviceLost { .. })
    ));
    assert!(matches!(be.synchronize(0), Err(Error::DeviceLost { .. })));
    let mut out = [0u8; 16];
    assert!(be.download(t, &mut out).is_err());
    drop((x, y));
    // The other device is unaffected.
    let z = be.upload(1, MemoryKind::Device, &[1u8; 4]).unwrap();
    let lz = crate::layout::Layout::contiguous(&[4]).unwrap();
    let mut back = [0u8; 4];
    be.download(typed(&z, &lz, DType::U8), &mut back).unwrap();
    assert_eq!(back, [1; 4]);
}

#[test]
fn synchronize_reports_an_asynchronous_failure_once() {
    let be = private(1);
    let fd = be.driver();
    let x = be.upload(0, MemoryKind::Device, &[0u8; 16]).unwrap();
    let l = crate::layout::Layout::contiguous(&[4]).unwrap();
    let t = typed(&x, &l, DType::F32);
    fd.fail_next_run(DriverErrorKind::Other);
    let _y = be.unary(UnaryOp::Exp, t, DType::F32).unwrap();
    assert!(be.synchronize(0).is_err());
    be.synchronize(0).unwrap();
}

#[test]
fn pools_reuse_blocks_and_nothing_leaks() {
    let be = private(1);
    let fd = be.driver();
    for _ in 0..10 {
        let x = be.upload(0, MemoryKind::Device, &[5u8; 1000]).unwrap();
        let p = be.upload(0, MemoryKind::PinnedHost, &[5u8; 1000]).unwrap();
        drop((x, p));
        // Pinned blocks come back once the device has passed their last use.
        be.synchronize(0).unwrap();
    }
    be.synchronize(0).unwrap();
    let c = fd.counters();
    assert_eq!(c.device_allocs, 1, "one device block, reused: {c:?}");
    assert!(c.host_allocs <= 2, "pinned blocks reused: {c:?}");
    drop(be);
}

#[test]
fn composed_ops_concatenate_argmax_and_cumsum() {
    let _g = serial();
    let (_, devs) = fake();
    let x = sample(DType::F32, 24).reshape(&[4, 6]).unwrap();
    let g = x.to_device(&devs[2]).unwrap();
    let both = |a: crate::Result<Array>, b: crate::Result<Array>, what: &str| same(&a, &b, what);
    both(
        Array::concatenate(&[&g, &g.t().unwrap().reshape(&[4, 6]).unwrap()], 1),
        Array::concatenate(&[&x, &x.t().unwrap().reshape(&[4, 6]).unwrap()], 1),
        "concat",
    );
    both(
        Array::stack(&[&g, &g], 0),
        Array::stack(&[&x, &x], 0),
        "stack",
    );
    both(g.argmax(Some(1)), x.argmax(Some(1)), "argmax");
    both(g.argmin(None), x.argmin(None), "argmin");
    let i = sample(DType::I32, 24).reshape(&[4, 6]).unwrap();
    both(
        i.to_device(&devs[2]).unwrap().cumsum(Some(1)),
        i.cumsum(Some(1)),
        "cumsum",
    );
    let c = sample(DType::Bool, 24).reshape(&[4, 6]).unwrap();
    both(
        c.to_device(&devs[2])
            .unwrap()
            .where_cond(&g, &g.neg().unwrap()),
        c.where_cond(&x, &x.neg().unwrap()),
        "where",
    );
}

#[test]
fn matmul_goes_through_the_blas_where_layouts_allow_and_matches_the_kernel() {
    let _g = serial();
    let (be, devs) = fake();
    let d = &devs[0];
    let fd = be.driver();
    let close = |g: &Array, c: &Array, what: &str| {
        let (g, c) = (
            g.to_device(&cpu()).unwrap().astype(DType::F64).unwrap(),
            c.astype(DType::F64).unwrap(),
        );
        assert_eq!(g.shape(), c.shape(), "{what}");
        for (x, y) in g
            .to_vec::<f64>()
            .unwrap()
            .iter()
            .zip(c.to_vec::<f64>().unwrap())
        {
            assert!(
                (x - y).abs() <= 1e-2 * y.abs().max(1.0),
                "{what}: {x} vs {y}"
            );
        }
    };
    let values = |n: usize, dt: DType| {
        let v: Vec<f64> = (0..n).map(|i| ((i * 37) % 19) as f64 - 9.0).collect();
        Array::from_vec(v, &[n]).unwrap().astype(dt).unwrap()
    };
    for dt in [DType::F32, DType::F64, DType::F16, DType::BF16] {
        let a = values(2 * 5 * 3, dt).reshape(&[2, 5, 3]).unwrap();
        let b = values(2 * 3 * 4, dt).reshape(&[2, 3, 4]).unwrap();
        let (ga, gb) = (a.to_device(d).unwrap(), b.to_device(d).unwrap());
        // Row-major, transposed, broadcast over the batch, every other row (a leading
        // dimension of 6), and every other column (no unit stride: the generated kernel).
        let cases = |a: &Array, b: &Array| -> Vec<(Array, Array, bool)> {
            use crate::layout::Slice;
            let first = b.slice(&[Slice::new(Some(0), Some(1), 1)]).unwrap();
            let first = first.reshape(&[3, 4]).unwrap();
            let every_other = Slice::new(None, None, 2);
            vec![
                (a.clone(), b.clone(), true),
                (
                    b.permute(&[0, 2, 1]).unwrap(),
                    a.permute(&[0, 2, 1]).unwrap(),
                    true,
                ),
                (a.clone(), first.broadcast_to(&[2, 3, 4]).unwrap(), true),
                (
                    a.slice(&[Slice::full(), every_other]).unwrap(),
                    b.clone(),
                    true,
                ),
                (
                    a.slice(&[Slice::full(), Slice::full(), every_other])
                        .unwrap(),
                    b.slice(&[Slice::full(), Slice::new(None, Some(2), 1)])
                        .unwrap(),
                    false,
                ),
            ]
        };
        let on_cpu = cases(&a, &b);
        for (k, ((x, y, blas), (cx, cy, _))) in cases(&ga, &gb).iter().zip(&on_cpu).enumerate() {
            let what = format!("matmul {dt} case {k}");
            let before = fd.counters().gemms_run;
            let got = x.matmul(y).unwrap();
            close(&got, &cx.matmul(cy).unwrap(), &what);
            assert_eq!(fd.counters().gemms_run > before, *blas, "{what}: BLAS used");
            // The generated kernel computes the same.
            fd.without_blas(true);
            let kernel = x.matmul(y);
            fd.without_blas(false);
            close(
                &kernel.unwrap(),
                &cx.matmul(cy).unwrap(),
                &format!("{what} kernel"),
            );
        }
    }
    // Integers have no BLAS GEMM: the kernel.
    let before = fd.counters().gemms_queued;
    let i = values(12, DType::I32).reshape(&[3, 4]).unwrap();
    let gi = i.to_device(d).unwrap();
    same(
        &gi.matmul(&gi.t().unwrap()),
        &i.matmul(&i.t().unwrap()),
        "int32 matmul",
    );
    assert_eq!(fd.counters().gemms_queued, before);
    // `dlarray devices` says which runs, and why the kernel does when it does.
    let engine = d.matmul_engine().unwrap();
    assert!(
        engine.starts_with("the fake runtime's GEMM for"),
        "{engine}"
    );
    fd.without_blas(true);
    let engine = d.matmul_engine().unwrap();
    fd.without_blas(false);
    assert_eq!(
        engine,
        "the generated kernel (the fake runtime was set up without BLAS)"
    );
}

/// A backend whose transfers from host memory go in pieces of `piece` bytes.
fn with_pieces(piece: usize) -> GpuBackend<FakeDriver> {
    GpuBackend::new(
        FakeDriver::new("fakecuda-pieces", 1),
        PoolLimits {
            staging_piece: piece,
            ..PoolLimits::default()
        },
    )
    .unwrap()
}

#[test]
fn large_transfers_from_host_memory_go_in_pieces_through_two_pinned_blocks() {
    const PIECE: usize = 4096;
    let be = with_pieces(PIECE);
    let fd = be.driver();
    let pattern = |n: usize| -> Vec<u8> { (0..n).map(|i| (i * 7 + i / 251) as u8).collect() };
    let read = |b: &crate::backends::SharedBuffer, n: usize| {
        let l = crate::layout::Layout::contiguous(&[n]).unwrap();
        let mut out = vec![0u8; n];
        be.download(typed(b, &l, DType::U8), &mut out).unwrap();
        out
    };
    // Up to four pieces: one pinned block of the whole size, one copy.
    let small = pattern(4 * PIECE);
    let before = fd.counters();
    let b = be.upload(0, MemoryKind::Device, &small).unwrap();
    be.synchronize(0).unwrap();
    assert_eq!(fd.counters().copies_run - before.copies_run, 1);
    assert_eq!(read(&b, small.len()), small);
    // Beyond: ten pieces (the last one short) through at most two new pinned blocks of a
    // piece each, for the upload and for the download.
    let n = 9 * PIECE + 123;
    let data = pattern(n);
    be.synchronize(0).unwrap();
    let before = fd.counters();
    let blocks_before = fd.live_pinned_blocks();
    let b = be.upload(0, MemoryKind::Device, &data).unwrap();
    be.synchronize(0).unwrap();
    let after_upload = fd.counters();
    assert_eq!(after_upload.copies_run - before.copies_run, 10);
    assert!(after_upload.host_allocs - before.host_allocs <= 2);
    assert_eq!(read(&b, n), data);
    let after = fd.counters();
    assert_eq!(after.copies_run - after_upload.copies_run, 10, "in pieces");
    assert_eq!(
        after.host_allocs, after_upload.host_allocs,
        "the cached blocks"
    );
    assert!(fd.live_pinned_blocks() <= blocks_before + 2);
    // A part of it, from an offset that is not a piece boundary.
    let l = crate::layout::Layout::contiguous(&[n]).unwrap();
    let view = l
        .slice(&[crate::layout::Slice::new(Some(5000), None, 1)])
        .unwrap();
    let mut part = vec![0u8; n - 5000];
    be.download(typed(&b, &view, DType::U8), &mut part).unwrap();
    assert_eq!(part, data[5000..]);
    // A writer (a move from another backend) fills host memory first, then pieces.
    let before = fd.counters();
    // SAFETY: the closure writes every byte and reads none.
    let w = unsafe {
        be.upload_with(0, MemoryKind::Device, n, &mut |dst| {
            dst.copy_from_slice(&data);
            Ok(())
        })
    }
    .unwrap();
    be.synchronize(0).unwrap();
    assert_eq!(fd.counters().copies_run - before.copies_run, 10);
    assert_eq!(read(&w, n), data);
    // Pinned memory is asked for as such: one block, written in place.
    let p = be.upload(0, MemoryKind::PinnedHost, &data).unwrap();
    assert_eq!(read(&p, n), data);
    // Host staging that cannot be had is an error, before the writer runs.
    // SAFETY: the closure writes every byte (it is never called).
    let e = unsafe {
        be.upload_with(0, MemoryKind::Device, 1 << 62, &mut |_| {
            panic!("the writer runs only once its memory exists")
        })
    }
    .unwrap_err();
    assert!(matches!(e, Error::OutOfMemory { .. }), "{e}");
}

#[test]
fn a_device_lost_during_a_transfer_in_pieces_is_an_error_that_leaks_no_pinned_block() {
    const PIECE: usize = 4096;
    let n = 10 * PIECE;
    let data = vec![3u8; n];
    // Lost at the fourth piece of an upload.
    let be = with_pieces(PIECE);
    let fd = be.driver();
    fd.lose_device_after_copies(0, 3);
    let e = be.upload(0, MemoryKind::Device, &data).unwrap_err();
    assert!(matches!(e, Error::DeviceLost { .. }), "{e}");
    assert!(be.synchronize(0).is_err());
    let no_leak = |be: &GpuBackend<FakeDriver>| {
        // Whatever waits in the deferred queue goes back, then the cache is emptied: a
        // block that went neither way would still be pinned.
        be.devices[0].pump(true);
        be.devices[0].pinned.trim();
        assert_eq!(be.driver().live_pinned_blocks(), 0);
    };
    no_leak(&be);
    // Lost at the fourth piece of a download.
    let be = with_pieces(PIECE);
    let fd = be.driver();
    let b = be.upload(0, MemoryKind::Device, &data).unwrap();
    be.synchronize(0).unwrap();
    let l = crate::layout::Layout::contiguous(&[n]).unwrap();
    fd.lose_device_after_copies(0, 3);
    let mut out = vec![0u8; n];
    let e = be.download(typed(&b, &l, DType::U8), &mut out).unwrap_err();
    assert!(matches!(e, Error::DeviceLost { .. }), "{e}");
    drop(b);
    no_leak(&be);
}
