//! Foundation benchmarks, side by side with ndarray in one run:
//! `cargo bench --bench foundation`.
//!
//! - add f32 16M elements (allocating the result) vs ndarray `&a + &b`
//! - matmul f32 1024x1024 vs ndarray `dot` (matrixmultiply, threaded)
//! - sum f32 16M vs ndarray `sum`
//! - an 8-element add through the whole runtime vs ndarray (per-op overhead)

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dlarray::{Array, Axes};
use ndarray::Array1;
use std::hint::black_box;
use std::time::Duration;

const N: usize = 1 << 24;

fn add(c: &mut Criterion) {
    let mut g = c.benchmark_group("add_f32_16M");
    g.throughput(Throughput::Bytes(12 * N as u64));
    let x: Vec<f32> = (0..N).map(|i| (i % 1000) as f32).collect();
    let (na, nb) = (Array1::from(x.clone()), Array1::from(x.clone()));
    g.bench_function("ndarray", |b| b.iter(|| black_box(&na + &nb)));
    let (da, db) = (
        Array::from_vec(x.clone(), &[N]).unwrap(),
        Array::from_vec(x, &[N]).unwrap(),
    );
    g.bench_function("dlarray", |b| b.iter(|| black_box((&da + &db).unwrap())));
    g.finish();
}

fn sum(c: &mut Criterion) {
    let mut g = c.benchmark_group("sum_f32_16M");
    g.throughput(Throughput::Bytes(4 * N as u64));
    let x: Vec<f32> = (0..N).map(|i| (i % 3) as f32).collect();
    let na = Array1::from(x.clone());
    g.bench_function("ndarray", |b| b.iter(|| black_box(na.sum())));
    let da = Array::from_vec(x, &[N]).unwrap();
    g.bench_function("dlarray", |b| {
        b.iter(|| black_box(da.sum(Axes::All).unwrap()))
    });
    g.finish();
}

fn matmul(c: &mut Criterion) {
    const M: usize = 1024;
    let mut g = c.benchmark_group("matmul_f32_1024");
    g.throughput(Throughput::Elements(2 * (M * M * M) as u64)); // flops
    let x: Vec<f32> = (0..M * M).map(|i| (i % 17) as f32 * 0.125).collect();
    let na = ndarray::Array2::from_shape_vec((M, M), x.clone()).unwrap();
    g.bench_function("ndarray", |b| b.iter(|| black_box(na.dot(&na))));
    let da = Array::from_vec(x, &[M, M]).unwrap();
    g.bench_function("dlarray", |b| b.iter(|| black_box(da.matmul(&da).unwrap())));
    g.finish();
}

fn tiny(c: &mut Criterion) {
    let mut g = c.benchmark_group("add_f32_8_overhead");
    let x: Vec<f32> = (0..8).map(|i| i as f32).collect();
    let (na, nb) = (Array1::from(x.clone()), Array1::from(x.clone()));
    g.bench_function("ndarray", |b| b.iter(|| black_box(&na + &nb)));
    let (da, db) = (
        Array::from_vec(x.clone(), &[8]).unwrap(),
        Array::from_vec(x, &[8]).unwrap(),
    );
    g.bench_function("dlarray", |b| b.iter(|| black_box((&da + &db).unwrap())));
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(15)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    targets = add, sum, matmul, tiny
}
criterion_main!(benches);
