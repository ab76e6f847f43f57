//! wgpu benchmarks: `cargo bench --bench wgpu` (needs a wgpu adapter, e.g. lavapipe).
//!
//! - host-fallback DLPack export of a 64 MiB wgpu array vs a hand-written staging readback
//!   of a 64 MiB buffer (copy to a MAP_READ buffer, map, memcpy out), on the same adapter
//! - add, sum and matmul throughput on wgpu next to the CPU backend

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use dlarray::{Array, Axes, DType, Device, Scalar, Sharding};
use std::hint::black_box;
use std::time::Duration;

const BYTES: usize = 64 << 20;

fn wgpu_device() -> Option<Device> {
    dlarray::devices()
        .ok()?
        .into_iter()
        .find(|d| d.platform() == "wgpu")
}

/// The readback an application would write by hand with wgpu's own API.
struct Raw {
    device: wgpu::Device,
    queue: wgpu::Queue,
    src: wgpu::Buffer,
}

impl Raw {
    fn new() -> Option<Raw> {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()))
            .into_iter()
            .find(|a| a.get_info().backend != wgpu::Backend::Gl)?;
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            required_limits: adapter.limits(),
            ..Default::default()
        }))
        .ok()?;
        let src = device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: BYTES as u64,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        queue.write_buffer(&src, 0, &vec![1u8; BYTES]);
        Some(Raw { device, queue, src })
    }

    fn read(&self, dst: &mut [u8]) {
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: BYTES as u64,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut e = self.device.create_command_encoder(&Default::default());
        e.copy_buffer_to_buffer(&self.src, 0, &staging, 0, BYTES as u64);
        self.queue.submit([e.finish()]);
        staging.map_async(wgpu::MapMode::Read, .., |r| r.unwrap());
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .unwrap();
        dst.copy_from_slice(&staging.get_mapped_range(..).unwrap());
        staging.unmap();
    }
}

fn host_fallback(c: &mut Criterion) {
    let (Some(dev), Some(raw)) = (wgpu_device(), Raw::new()) else {
        eprintln!("no wgpu adapter: skipping");
        return;
    };
    let mut g = c.benchmark_group("wgpu_host_fallback_64MiB");
    g.throughput(Throughput::Bytes(BYTES as u64));
    let x = Array::full_sharded(
        &[BYTES / 4],
        Scalar::Float(1.0),
        DType::F32,
        &Sharding::single(&dev),
    )
    .unwrap();
    g.bench_function("dlarray_to_dlpack", |b| {
        b.iter(|| black_box(x.to_dlpack().unwrap()))
    });
    let mut dst = vec![0u8; BYTES];
    g.bench_function("hand_written_staging_readback", |b| {
        b.iter(|| {
            raw.read(&mut dst);
            black_box(&dst);
        })
    });
    g.finish();
}

fn compute(c: &mut Criterion) {
    let Some(gpu) = wgpu_device() else {
        return;
    };
    let cpu = dlarray::get_device("cpu:0").unwrap();
    let mut g = c.benchmark_group("wgpu_vs_cpu");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    let n = 1 << 22;
    for dev in [&cpu, &gpu] {
        let put = |a: Array| a.to_device(dev).unwrap();
        let x = put(Array::full(&[n], 1.5f32, DType::F32).unwrap());
        let m = put(Array::full(&[512, 512], 0.5f32, DType::F32).unwrap());
        let run = |f: &dyn Fn() -> Array| {
            let r = f();
            r.block_until_ready().unwrap();
            r
        };
        g.throughput(Throughput::Bytes(12 * n as u64));
        g.bench_function(BenchmarkId::new("add_f32_4M", dev.name()), |b| {
            b.iter(|| run(&|| (&x + &x).unwrap()))
        });
        g.throughput(Throughput::Bytes(4 * n as u64));
        g.bench_function(BenchmarkId::new("sum_f32_4M", dev.name()), |b| {
            b.iter(|| run(&|| x.sum(Axes::All).unwrap()))
        });
        g.throughput(Throughput::Elements(2 * 512 * 512 * 512));
        g.bench_function(BenchmarkId::new("matmul_f32_512", dev.name()), |b| {
            b.iter(|| run(&|| m.matmul(&m).unwrap()))
        });
    }
    g.finish();
}

criterion_group!(benches, host_fallback, compute);
criterion_main!(benches);
