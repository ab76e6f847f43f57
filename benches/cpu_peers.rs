//! dlarray beside ndarray and candle on the CPU, in one run, over the sizes where threading,
//! pool and dispatch costs start and stop paying for themselves:
//! `cargo bench --bench cpu_peers` (a filter such as `-- sum_f32/` narrows it).
//!
//! - add f32 (allocating the result) and sum f32 at 1K, 16K, 256K, 1M, 4M, 16M, 64M
//!   elements, with a plain memcpy of the same bytes as the bandwidth limit
//! - exp f32 and f64 at 1K, 16K, 256K, 1M, 16M elements (a compute-bound map: ndarray's
//!   `mapv` calls the C library per element)
//! - matmul f32 1024x1024
//! - an 8-element add through the whole runtime (per-op overhead)
//! - a DLPack export + import round trip
//!
//! NumPy and PyTorch on the same work: `python/bench/numeric_peers.py`, in the same minutes
//! (`scripts/bench-peers.sh` runs both).

mod common;

use candle_core::{Device as CDevice, Tensor};
use common::{SIZES, data};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use dlarray::{Array, Axes};
use ndarray::Array1;
use std::hint::black_box;
use std::time::Duration;

fn add(c: &mut Criterion) {
    let mut g = c.benchmark_group("add_f32");
    for (label, n) in SIZES {
        g.throughput(Throughput::Bytes(12 * n as u64));
        let x = data(n);
        let (da, db) = (
            Array::from_vec(x.clone(), &[n]).unwrap(),
            Array::from_vec(x.clone(), &[n]).unwrap(),
        );
        g.bench_function(BenchmarkId::new("dlarray", label), |b| {
            b.iter(|| black_box((&da + &db).unwrap()))
        });
        // On dlarray's own memory, as NumPy and torch read NumPy's (see `sum`).
        let (pa, pb) = (
            Array::from_slice(&x, &[n]).unwrap(),
            Array::from_slice(&x, &[n]).unwrap(),
        );
        g.bench_function(BenchmarkId::new("dlarray_own_memory", label), |b| {
            b.iter(|| black_box((&pa + &pb).unwrap()))
        });
        let (na, nb) = (Array1::from(x.clone()), Array1::from(x.clone()));
        g.bench_function(BenchmarkId::new("ndarray", label), |b| {
            b.iter(|| black_box(&na + &nb))
        });
        // Two operands, as for the others (one tensor twice reads half the bytes).
        let (ca, cb) = (
            Tensor::from_vec(x.clone(), n, &CDevice::Cpu).unwrap(),
            Tensor::from_vec(x.clone(), n, &CDevice::Cpu).unwrap(),
        );
        g.bench_function(BenchmarkId::new("candle", label), |b| {
            b.iter(|| black_box((&ca + &cb).unwrap()))
        });
        let mut dst = vec![0f32; n];
        g.bench_function(BenchmarkId::new("memcpy", label), |b| {
            b.iter(|| dst.copy_from_slice(black_box(&x)))
        });
    }
    g.finish();
}

fn sum(c: &mut Criterion) {
    let mut g = c.benchmark_group("sum_f32");
    for (label, n) in SIZES {
        g.throughput(Throughput::Bytes(4 * n as u64));
        let x = data(n);
        let da = Array::from_vec(x.clone(), &[n]).unwrap();
        g.bench_function(BenchmarkId::new("dlarray", label), |b| {
            b.iter(|| black_box(da.sum(Axes::All).unwrap()))
        });
        // The same values copied into dlarray's own memory (the host pool: 64-byte aligned,
        // huge pages from 4 MiB, as NumPy's allocator gives NumPy's and so torch's inputs in
        // numeric_peers.py); `from_vec` above keeps the Vec's 16-byte-aligned 4 KiB pages,
        // as ndarray and candle read theirs.
        let dp = Array::from_slice(&x, &[n]).unwrap();
        g.bench_function(BenchmarkId::new("dlarray_own_memory", label), |b| {
            b.iter(|| black_box(dp.sum(Axes::All).unwrap()))
        });
        let na = Array1::from(x.clone());
        g.bench_function(BenchmarkId::new("ndarray", label), |b| {
            b.iter(|| black_box(na.sum()))
        });
        let ct = Tensor::from_vec(x, n, &CDevice::Cpu).unwrap();
        g.bench_function(BenchmarkId::new("candle", label), |b| {
            b.iter(|| black_box(ct.sum_all().unwrap()))
        });
    }
    g.finish();
}

fn exp(c: &mut Criterion) {
    exp_group(c, "exp_f32", f32::exp);
    exp_group(c, "exp_f64", f64::exp);
}

/// `exp` of one float type (`libm` is the C library's, which ndarray's `mapv` calls per
/// element).
fn exp_group<T>(c: &mut Criterion, name: &str, libm: fn(T) -> T)
where
    T: dlarray::Element + candle_core::WithDType,
{
    let mut g = c.benchmark_group(name);
    for (label, n) in SIZES.into_iter().filter(|(l, _)| EXP_SIZES.contains(l)) {
        g.throughput(Throughput::Bytes((2 * size_of::<T>() * n) as u64));
        // Arguments spread over [-10, 10): no overflow, no shortcut for 0.
        let x: Vec<T> = (0..n)
            .map(|i| T::from_f64((i % 2000) as f64 * 0.01 - 10.0))
            .collect();
        let da = Array::from_vec(x.clone(), &[n]).unwrap();
        g.bench_function(BenchmarkId::new("dlarray", label), |b| {
            b.iter(|| black_box(da.exp().unwrap()))
        });
        let na = Array1::from(x.clone());
        g.bench_function(BenchmarkId::new("ndarray", label), |b| {
            b.iter(|| black_box(na.mapv(libm)))
        });
        let ct = Tensor::from_vec(x, n, &CDevice::Cpu).unwrap();
        g.bench_function(BenchmarkId::new("candle", label), |b| {
            b.iter(|| black_box(ct.exp().unwrap()))
        });
    }
    g.finish();
}

/// The sizes of the exp group (64M would take ~1 s a sample).
const EXP_SIZES: [&str; 5] = ["1K", "16K", "256K", "1M", "16M"];

fn matmul(c: &mut Criterion) {
    const N: usize = 1024;
    let mut g = c.benchmark_group("matmul_f32_1024");
    g.throughput(Throughput::Elements(2 * (N * N * N) as u64));
    let x: Vec<f32> = (0..N * N).map(|i| (i % 17) as f32 * 0.1).collect();
    let da = Array::from_vec(x.clone(), &[N, N]).unwrap();
    g.bench_function("dlarray", |b| b.iter(|| black_box(da.matmul(&da).unwrap())));
    let ct = Tensor::from_vec(x.clone(), (N, N), &CDevice::Cpu).unwrap();
    g.bench_function("candle", |b| b.iter(|| black_box(ct.matmul(&ct).unwrap())));
    let na = ndarray::Array2::from_shape_vec((N, N), x).unwrap();
    g.bench_function("ndarray", |b| b.iter(|| black_box(na.dot(&na))));
    g.finish();
}

fn tiny(c: &mut Criterion) {
    let mut g = c.benchmark_group("add_f32_8_overhead");
    let x = data(8);
    let da = Array::from_vec(x.clone(), &[8]).unwrap();
    g.bench_function("dlarray", |b| b.iter(|| black_box((&da + &da).unwrap())));
    let ct = Tensor::from_vec(x.clone(), 8, &CDevice::Cpu).unwrap();
    g.bench_function("candle", |b| b.iter(|| black_box((&ct + &ct).unwrap())));
    let na = Array1::from(x);
    g.bench_function("ndarray", |b| b.iter(|| black_box(&na + &na)));
    g.finish();
}

fn dlpack(c: &mut Criterion) {
    let da = Array::from_vec(data(256), &[256]).unwrap();
    c.bench_function("dlpack_round_trip_1KiB", |b| {
        b.iter(|| black_box(Array::from_dlpack(da.to_dlpack().unwrap()).unwrap()))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20);
    targets = add, sum, exp, matmul, tiny, dlpack
}
criterion_main!(benches);
