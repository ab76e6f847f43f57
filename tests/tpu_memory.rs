//! The TPU-host emulation: platform `tpu`, memory kinds per buffer, explicit copies between
//! `device` and `pinned_host`.

mod common;

use common::*;
use dlarray::{Array, DType, MemoryKind, Sharding};

#[test]
fn tpu_devices_look_like_tpus() {
    let tpus = devices_of("tpu");
    let expected: usize = std::env::var("DLARRAY_TPU_DEVICES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
    assert_eq!(tpus.len(), expected);
    for (i, d) in tpus.iter().enumerate() {
        assert_eq!(d.name(), format!("tpu:{i}"));
        assert_eq!(d.platform(), "tpu");
        assert!(d.platform_version().contains("tpu"));
        assert_eq!(
            d.memory_kinds(),
            &[MemoryKind::Device, MemoryKind::PinnedHost]
        );
        assert_eq!(d.default_memory_kind(), MemoryKind::Device);
        assert_eq!(d.local_hardware_id(), Some(i as i32));
    }
}

#[test]
fn memory_kind_moves_are_explicit_copies_into_separate_allocations() {
    let tpu = devices_of("tpu")[0].clone();
    let x = Array::arange(0.0, 16.0, 1.0, DType::F32)
        .unwrap()
        .to_device(&tpu)
        .unwrap();
    assert_eq!(x.memory_kind(), MemoryKind::Device);
    let p = x.with_memory_kind(MemoryKind::PinnedHost).unwrap();
    assert_eq!(p.memory_kind(), MemoryKind::PinnedHost);
    assert_eq!(
        p.sharding(),
        &Sharding::SingleDevice(tpu.clone(), MemoryKind::PinnedHost)
    );
    assert_eq!(p.to_vec::<f32>().unwrap(), x.to_vec::<f32>().unwrap());
    // Back to device memory: another copy, same values.
    let d = p.with_memory_kind(MemoryKind::Device).unwrap();
    assert_eq!(d.memory_kind(), MemoryKind::Device);
    assert_eq!(d.to_vec::<f32>().unwrap(), x.to_vec::<f32>().unwrap());
    // The same kind again is a no-op (no copy).
    let same = p.with_memory_kind(MemoryKind::PinnedHost).unwrap();
    assert_eq!(same.memory_kind(), MemoryKind::PinnedHost);
}

#[test]
fn buffers_of_each_kind_are_distinct() {
    let tpu = devices_of("tpu")[1].clone();
    let x = Array::ones(&[1024], DType::F64)
        .unwrap()
        .to_device(&tpu)
        .unwrap();
    let p = x.with_memory_kind(MemoryKind::PinnedHost).unwrap();
    let px = shard_ptr(&x);
    let pp = shard_ptr(&p);
    assert_ne!(px, pp, "pinned_host is its own allocation");
    assert_eq!(px % 64, 0);
    assert_eq!(pp % 64, 0);
}

/// The host address of a single-shard array's data (emulated TPU memory is host memory).
fn shard_ptr(a: &Array) -> usize {
    a.unsafe_buffer_pointer().expect("single device")
}

#[test]
fn sharded_arrays_in_pinned_host_memory() {
    let tpus = devices_of("tpu");
    let x = Array::arange(0.0, 12.0, 1.0, DType::I64).unwrap();
    let s = Sharding::split(tpus.clone(), 0).unwrap();
    let y = x
        .device_put(&s)
        .unwrap()
        .with_memory_kind(MemoryKind::PinnedHost)
        .unwrap();
    assert_eq!(y.memory_kind(), MemoryKind::PinnedHost);
    for shard in y.addressable_shards() {
        assert_eq!(shard.data().memory_kind(), MemoryKind::PinnedHost);
    }
    assert_eq!(y.to_vec::<i64>().unwrap(), (0..12).collect::<Vec<i64>>());
    // Ops read pinned memory and write device memory (where the TPU computes).
    let z = (&y + &y).unwrap();
    assert_eq!(
        z.to_vec::<i64>().unwrap(),
        (0..12).map(|v| 2 * v).collect::<Vec<i64>>()
    );
}

#[test]
fn cpu_has_no_pinned_host_memory() {
    let x = Array::zeros(&[4], DType::F32).unwrap();
    let err = x.with_memory_kind(MemoryKind::PinnedHost).unwrap_err();
    assert!(err.to_string().contains("pinned_host"), "{err}");
    let err = Array::full_sharded(
        &[2],
        dlarray::Scalar::Int(1),
        DType::I8,
        &Sharding::SingleDevice(cpu(), MemoryKind::PinnedHost),
    )
    .unwrap_err();
    assert!(err.to_string().contains("cpu:0"), "{err}");
}
