//! DLPack benchmarks: `cargo bench --bench dlpack`.
//!
//! - export + import round trip on CPU at 1 KiB, 1 MiB, 256 MiB (no byte copied: constant)
//! - host-fallback export of a 64 MiB TPU-device-memory array vs a plain memcpy of 64 MiB

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use dlarray::{Array, DType, ExportOptions};
use std::hint::black_box;
use std::time::Duration;

fn round_trip(c: &mut Criterion) {
    let mut g = c.benchmark_group("dlpack_round_trip_cpu");
    for (label, bytes) in [
        ("1KiB", 1usize << 10),
        ("1MiB", 1 << 20),
        ("256MiB", 256 << 20),
    ] {
        let x = Array::zeros(&[bytes / 4], DType::F32).unwrap();
        for (abi, max_version) in [("legacy", None), ("versioned", Some((1, 0)))] {
            let o = ExportOptions {
                max_version,
                ..Default::default()
            };
            g.bench_with_input(BenchmarkId::new(abi, label), &x, |b, x| {
                b.iter(|| {
                    let t = x.to_dlpack_with(o).unwrap();
                    black_box(Array::from_dlpack(t).unwrap())
                })
            });
        }
    }
    g.finish();
}

fn host_fallback(c: &mut Criterion) {
    const BYTES: usize = 64 << 20;
    let mut g = c.benchmark_group("host_fallback_64MiB");
    g.throughput(Throughput::Bytes(BYTES as u64));
    let src = vec![1u8; BYTES];
    let mut dst = vec![0u8; BYTES];
    g.bench_function("memcpy_preallocated", |b| {
        b.iter(|| {
            dst.copy_from_slice(black_box(&src));
            black_box(&dst);
        })
    });
    g.bench_function("memcpy_fresh_vec", |b| b.iter(|| black_box(src.clone())));
    let tpu = dlarray::get_device("tpu:0").unwrap();
    let x = Array::zeros(&[BYTES / 4], DType::F32)
        .unwrap()
        .to_device(&tpu)
        .unwrap();
    g.bench_function("dlarray_tpu_device_to_dlpack", |b| {
        b.iter(|| {
            let t = x.to_dlpack().unwrap();
            assert!(t.fallback_reason().is_some());
            black_box(t)
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = round_trip, host_fallback
}
criterion_main!(benches);
