//! Sharded add over 2 CPU devices vs the same add on 1 of them (one core each):
//! `cargo bench --bench sharding`. Target: >= 1.7x on 2 cores.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dlarray::{Array, Sharding};
use std::hint::black_box;
use std::time::Duration;

const N: usize = 1 << 24;

fn sharded_add(c: &mut Criterion) {
    // SAFETY: set before any other thread exists and before dlarray reads its environment.
    unsafe { std::env::set_var("DLARRAY_CPU_DEVICES", "2") };
    let cpus: Vec<_> = dlarray::devices()
        .unwrap()
        .into_iter()
        .filter(|d| d.platform() == "cpu")
        .collect();
    assert_eq!(cpus.len(), 2);
    let mut g = c.benchmark_group("add_f32_16M_sharding");
    g.throughput(Throughput::Bytes(12 * N as u64));
    let x: Vec<f32> = (0..N).map(|i| (i % 1000) as f32).collect();
    let one = Array::from_vec(x, &[N])
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

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(15)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    targets = sharded_add
}
criterion_main!(benches);
