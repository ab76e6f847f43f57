//! Sharded add (and a row-sharded matmul) over 2 CPU devices vs the same op on 1 of them
//! (one core each): `cargo bench --bench sharding`. Target for the add: >= 1.7x on 2 cores.
//!
//! The add is memory-bound, so what two cores gain depends on the machine's memory system.
//! `raw_*` measures that ceiling in the same run: the same add written as a plain loop over
//! preallocated vectors on 1 and 2 scoped threads, with no runtime at all.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dlarray::{Array, Device, Sharding};
use std::hint::black_box;
use std::sync::OnceLock;
use std::time::Duration;

const N: usize = 1 << 24;

/// The two CPU devices (one core each) every benchmark here compares.
fn cpu_pair() -> Vec<Device> {
    static CPUS: OnceLock<Vec<Device>> = OnceLock::new();
    CPUS.get_or_init(|| {
        // SAFETY: the first benchmark calls this before any other thread exists and before
        // dlarray reads its environment.
        unsafe { std::env::set_var("DLARRAY_CPU_DEVICES", "2") };
        let cpus: Vec<_> = dlarray::devices()
            .unwrap()
            .into_iter()
            .filter(|d| d.platform() == "cpu")
            .collect();
        assert_eq!(cpus.len(), 2);
        cpus
    })
    .clone()
}

fn sharded_add(c: &mut Criterion) {
    let cpus = cpu_pair();
    let mut g = c.benchmark_group("add_f32_16M_sharding");
    g.throughput(Throughput::Bytes(12 * N as u64));
    let x: Vec<f32> = (0..N).map(|i| (i % 1000) as f32).collect();
    let y: Vec<f32> = (0..N).map(|i| (i % 7) as f32).collect();
    let on = |v: &[f32]| {
        Array::from_slice(v, &[N])
            .unwrap()
            .to_device(&cpus[0])
            .unwrap()
    };
    let (a1, b1) = (on(&x), on(&y));
    g.bench_function("1_device", |b| b.iter(|| black_box((&a1 + &b1).unwrap())));
    let split = Sharding::split(cpus, 0).unwrap();
    let (a2, b2) = (
        a1.device_put(&split).unwrap(),
        b1.device_put(&split).unwrap(),
    );
    g.bench_function("2_devices", |b| b.iter(|| black_box((&a2 + &b2).unwrap())));
    let mut out = vec![0f32; N];
    for threads in [1, 2] {
        g.bench_function(format!("raw_{threads}_threads"), |b| {
            b.iter(|| raw_add(&x, &y, &mut out, threads))
        });
    }
    g.finish();
}

/// A mid-size add, where dispatching the shards must cost less than the add itself.
fn sharded_add_256k(c: &mut Criterion) {
    const M: usize = 1 << 18;
    let cpus = cpu_pair();
    let mut g = c.benchmark_group("add_f32_256K_sharding");
    g.throughput(Throughput::Bytes(12 * M as u64));
    let x: Vec<f32> = (0..M).map(|i| i as f32).collect();
    let one = Array::from_slice(&x, &[M])
        .unwrap()
        .to_device(&cpus[0])
        .unwrap();
    g.bench_function("1_device", |b| b.iter(|| black_box((&one + &one).unwrap())));
    let two = one.device_put(&Sharding::split(cpus, 0).unwrap()).unwrap();
    g.bench_function("2_devices", |b| {
        b.iter(|| black_box((&two + &two).unwrap()))
    });
    g.finish();
}

/// A row-sharded matrix product (each device multiplies its rows by its own copy of the
/// right matrix) vs the same product on one device.
fn sharded_matmul(c: &mut Criterion) {
    const M: usize = 2048;
    const K: usize = 1024;
    let cpus = cpu_pair();
    let mut g = c.benchmark_group("matmul_f32_2048x1024x1024_sharding");
    g.throughput(Throughput::Elements((2 * M * K * K) as u64));
    let x: Vec<f32> = (0..M * K).map(|i| (i % 17) as f32 * 0.25).collect();
    let a1 = Array::from_slice(&x, &[M, K])
        .unwrap()
        .to_device(&cpus[0])
        .unwrap();
    let w = Array::from_slice(&x[..K * K], &[K, K])
        .unwrap()
        .to_device(&cpus[0])
        .unwrap();
    g.bench_function("1_device", |b| b.iter(|| black_box(a1.matmul(&w).unwrap())));
    let a2 = a1.device_put(&Sharding::split(cpus, 0).unwrap()).unwrap();
    g.bench_function("2_devices", |b| {
        b.iter(|| black_box(a2.matmul(&w).unwrap()))
    });
    g.finish();
}

/// `out = x + y` split over `threads` scoped threads.
fn raw_add(x: &[f32], y: &[f32], out: &mut [f32], threads: usize) {
    let chunk = out.len().div_ceil(threads);
    std::thread::scope(|s| {
        for ((o, p), q) in out
            .chunks_mut(chunk)
            .zip(x.chunks(chunk))
            .zip(y.chunks(chunk))
        {
            s.spawn(move || {
                for ((o, p), q) in o.iter_mut().zip(p).zip(q) {
                    *o = p + q;
                }
            });
        }
    });
    black_box(out);
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(15)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    targets = sharded_add, sharded_add_256k, sharded_matmul
}
criterion_main!(benches);
