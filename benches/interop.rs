//! candle <-> dlarray <-> tch exchange: `cargo bench --bench interop --features candle,tch`.
//!
//! Each exchange of a 1 KiB and a 256 MiB f32 tensor, beside the copy path candle's
//! maintainers recommend (candle#1850: `to_vec` on one side, `from_vec` on the other) in the
//! same run. The zero-copy paths are constant in size; the copy paths scale with it.

use candle_core::{Device as CDevice, Tensor as CTensor};
use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use dlarray::Array;
use std::hint::black_box;
use std::time::Duration;
use tch::{Device as TDevice, Kind, Tensor as TTensor};

const SIZES: [(&str, usize); 2] = [("1KiB", 1 << 10), ("256MiB", 256 << 20)];

fn candle_tensor(n: usize) -> CTensor {
    CTensor::from_vec(vec![1.0f32; n], n, &CDevice::Cpu).unwrap()
}

fn candle(c: &mut Criterion) {
    let mut g = c.benchmark_group("candle");
    for (label, bytes) in SIZES {
        let n = bytes / 4;
        let t = candle_tensor(n);
        g.bench_with_input(BenchmarkId::new("from_candle", label), &t, |b, t| {
            b.iter(|| black_box(Array::from_candle(t).unwrap()))
        });
        g.bench_with_input(
            BenchmarkId::new("copy to_vec1+from_vec", label),
            &t,
            |b, t| {
                b.iter(|| black_box(Array::from_vec(t.to_vec1::<f32>().unwrap(), &[n]).unwrap()))
            },
        );
        // Back to candle: the array made from a Vec moves into a tensor (the Vec is made
        // outside the timing).
        g.bench_function(BenchmarkId::new("into_candle", label), |b| {
            b.iter_batched(
                || Array::from_vec(vec![1.0f32; n], &[n]).unwrap(),
                |a| black_box(a.into_candle().unwrap()),
                BatchSize::PerIteration,
            )
        });
        let a = Array::from_vec(vec![1.0f32; n], &[n]).unwrap();
        g.bench_with_input(
            BenchmarkId::new("copy to_vec+from_vec", label),
            &a,
            |b, a| {
                b.iter(|| {
                    let v = a.to_vec::<f32>().unwrap();
                    black_box(CTensor::from_vec(v, n, &CDevice::Cpu).unwrap())
                })
            },
        );
    }
    g.finish();
}

fn tch(c: &mut Criterion) {
    let mut g = c.benchmark_group("tch");
    for (label, bytes) in SIZES {
        let n = bytes / 4;
        let t = TTensor::ones([n as i64], (Kind::Float, TDevice::Cpu));
        g.bench_with_input(BenchmarkId::new("from_tch", label), &t, |b, t| {
            b.iter(|| black_box(Array::from_tch(t).unwrap()))
        });
        g.bench_with_input(
            BenchmarkId::new("copy try_from+from_vec", label),
            &t,
            |b, t| {
                b.iter(|| {
                    black_box(Array::from_vec(Vec::<f32>::try_from(t).unwrap(), &[n]).unwrap())
                })
            },
        );
        let a = Array::from_vec(vec![1.0f32; n], &[n]).unwrap();
        g.bench_with_input(BenchmarkId::new("to_tch", label), &a, |b, a| {
            b.iter(|| black_box(a.to_tch().unwrap()))
        });
        g.bench_with_input(
            BenchmarkId::new("copy to_vec+from_slice", label),
            &a,
            |b, a| b.iter(|| black_box(TTensor::from_slice(&a.to_vec::<f32>().unwrap()))),
        );
    }
    g.finish();
}

/// candle -> tch through dlarray (both hops in place) against candle's `to_vec1` into tch's
/// `from_slice`.
fn candle_to_tch(c: &mut Criterion) {
    let mut g = c.benchmark_group("candle_to_tch");
    for (label, bytes) in SIZES {
        let t = candle_tensor(bytes / 4);
        g.bench_with_input(BenchmarkId::new("via dlarray", label), &t, |b, t| {
            b.iter(|| black_box(Array::from_candle(t).unwrap().to_tch().unwrap()))
        });
        g.bench_with_input(
            BenchmarkId::new("copy to_vec1+from_slice", label),
            &t,
            |b, t| b.iter(|| black_box(TTensor::from_slice(&t.to_vec1::<f32>().unwrap()))),
        );
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    targets = candle, tch, candle_to_tch
}
criterion_main!(benches);
