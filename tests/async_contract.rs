//! The asynchronous backend contract (`backends/mod.rs`), exercised on a fake asynchronous
//! backend whose queues run only when waited on: submission order, cross-device events,
//! `download` waiting for its source only, `synchronize` reporting asynchronous errors,
//! stream-ordered frees, deferred release of imported memory, the DLPack stream handshake,
//! out-of-memory and device loss.

mod common;

use common::async_fake::async_fake;
use dlarray::dlpack::ffi::*;
use dlarray::{Address, Array, Device, Error, ExportOptions, RawDLPack};
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// The fake backend is shared by every test of this binary: they take turns.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs every queue dry (leftovers of earlier tests), so counts start clean.
fn settle(devs: &[Device]) {
    for d in devs {
        let _ = d.backend().synchronize(d.index());
    }
}

fn host(v: &[f32], shape: &[usize]) -> Array {
    let cpu = dlarray::get_device("cpu:0").unwrap();
    Array::from_slice_on(v, shape, &cpu).unwrap()
}

#[test]
fn work_runs_in_order_and_only_when_waited_on() {
    let _g = serial();
    let (fake, devs) = async_fake();
    let a = host(&[1.0, 2.0, 3.0, 4.0], &[2, 2])
        .to_device(&devs[0])
        .unwrap();
    let b = (&a + &a).unwrap();
    let c = (&b * &b).unwrap();
    let s = c.sum(dlarray::Axes::All).unwrap();
    assert!(fake.pending(0) >= 3, "nothing ran yet: {}", fake.pending(0));
    // Reading b waits for b's job only: c and s are still queued.
    assert_eq!(b.to_vec::<f32>().unwrap(), vec![2.0, 4.0, 6.0, 8.0]);
    assert!(fake.pending(0) >= 2, "c and s still pending");
    assert_eq!(s.item::<f32>().unwrap(), 4.0 + 16.0 + 36.0 + 64.0);
    assert_eq!(c.to_vec::<f32>().unwrap(), vec![4.0, 16.0, 36.0, 64.0]);
    // Buffers are device addresses, never host pointers.
    let p = c.unsafe_buffer_pointer().unwrap();
    assert!(p >= 0xD1A0_0000_0000, "{p:#x}");
    assert!(matches!(
        c.addressable_shards()[0].data().dlpack_device(),
        Ok(d) if d.device_type == DLDeviceType::kDLCUDA
    ));
    // Views and transposes are strided reads of device memory.
    let t = c.t().unwrap();
    assert_eq!(
        (&t + &c).unwrap().to_vec::<f32>().unwrap(),
        vec![8.0, 52.0, 52.0, 128.0]
    );
    c.block_until_ready().unwrap();
}

#[test]
fn cross_device_use_waits_for_the_producer() {
    let _g = serial();
    let (fake, devs) = async_fake();
    settle(&devs);
    let x = host(&[1.0, 2.0, 3.0], &[3]).to_device(&devs[0]).unwrap();
    x.block_until_ready().unwrap();
    let y = x.exp().unwrap(); // queued on device 0
    let waits = fake.counters().waits();
    // A copy to device 1 must wait for device 0's job, which nothing else runs.
    let z = y.to_device(&devs[1]).unwrap();
    let w = (&z + &z).unwrap();
    assert_eq!(fake.pending(0), 1, "device 0's exp has not run");
    let got = w.to_vec::<f32>().unwrap();
    let want: Vec<f32> = [1.0f32, 2.0, 3.0].iter().map(|v| 2.0 * v.exp()).collect();
    assert_eq!(
        got, want,
        "device 1 read device 0's result after it was written"
    );
    assert!(
        fake.counters().waits() >= waits + 2,
        "an event wait and the download"
    );
}

#[test]
fn synchronize_reports_the_first_async_error_once() {
    let _g = serial();
    let (fake, devs) = async_fake();
    let x = host(&[1.0, 2.0], &[2]).to_device(&devs[0]).unwrap();
    x.block_until_ready().unwrap();
    fake.fail_next_job("injected kernel fault");
    let y = x.neg().unwrap(); // enqueue succeeds: the failure is asynchronous
    let e = y.block_until_ready().unwrap_err();
    assert!(e.to_string().contains("injected kernel fault"), "{e}");
    // Reported once: the next synchronize is clean, and the device still works.
    y.block_until_ready().unwrap();
    assert_eq!(x.neg().unwrap().to_vec::<f32>().unwrap(), vec![-1.0, -2.0]);
}

#[test]
fn drops_never_block_and_free_in_stream_order() {
    let _g = serial();
    let (fake, devs) = async_fake();
    settle(&devs);
    let (allocs, frees) = (fake.counters().allocs(), fake.counters().frees());
    let x = host(&[5.0; 1024], &[1024]).to_device(&devs[0]).unwrap();
    let y = (&x * &x).unwrap();
    let z = y.sqrt().unwrap();
    let ran = fake.counters().jobs_run();
    // Dropped with their work still queued: nothing runs and nothing is freed yet.
    drop(x);
    drop(y);
    assert_eq!(
        fake.counters().jobs_run(),
        ran,
        "a drop never waits for the device"
    );
    assert_eq!(
        fake.counters().frees(),
        frees,
        "frees are queued behind the uses"
    );
    // z's job reads y, whose free was queued after it: the result is right.
    assert_eq!(z.to_vec::<f32>().unwrap(), vec![5.0; 1024]);
    drop(z);
    // A drop on another thread is fine too.
    let w = host(&[1.0], &[1]).to_device(&devs[0]).unwrap();
    std::thread::spawn(move || drop(w)).join().unwrap();
    devs[0].backend().synchronize(0).unwrap();
    let made = fake.counters().allocs() - allocs;
    assert_eq!(
        fake.counters().frees() - frees,
        made,
        "every allocation freed"
    );
}

/// A kDLCUDA tensor over a producer's fake device allocation, with a counting deleter.
struct Produced {
    raw: RawDLPack,
    deleted: Arc<AtomicUsize>,
}

#[repr(C)]
struct Holder {
    managed: DLManagedTensorVersioned,
    shape: [i64; 1],
    strides: [i64; 1],
    deleted: Arc<AtomicUsize>,
    addr: u64,
}

unsafe extern "C" fn delete(p: *mut DLManagedTensorVersioned) {
    // SAFETY: `p` is the first field of a Holder leaked in `produce`.
    let h = unsafe { Box::from_raw(p as *mut Holder) };
    h.deleted.fetch_add(1, Ordering::SeqCst);
    let (fake, _) = async_fake();
    fake.producer_free(h.addr);
}

fn produce(values: &[f32]) -> Produced {
    let (fake, _) = async_fake();
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    let addr = fake.producer_alloc(&bytes);
    let deleted = Arc::new(AtomicUsize::new(0));
    let mut h = Box::new(Holder {
        managed: DLManagedTensorVersioned {
            version: DLPackVersion { major: 1, minor: 3 },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete),
            flags: 0,
            dl_tensor: DLTensor {
                data: addr as *mut c_void,
                device: DLDevice::new(DLDeviceType::kDLCUDA, 0),
                ndim: 1,
                dtype: DLDataType {
                    code: type_code::kDLFloat,
                    bits: 32,
                    lanes: 1,
                },
                shape: std::ptr::null_mut(),
                strides: std::ptr::null_mut(),
                byte_offset: 0,
            },
        },
        shape: [values.len() as i64],
        strides: [1],
        deleted: deleted.clone(),
        addr,
    });
    h.managed.dl_tensor.shape = h.shape.as_mut_ptr();
    h.managed.dl_tensor.strides = h.strides.as_mut_ptr();
    let p = Box::into_raw(h) as *mut DLManagedTensorVersioned;
    Produced {
        raw: RawDLPack::Versioned(p),
        deleted,
    }
}

#[test]
fn imported_device_memory_is_released_after_its_last_queued_use() {
    let _g = serial();
    let (fake, devs) = async_fake();
    devs[0].backend().synchronize(0).unwrap();
    let t = produce(&[1.0, 2.0, 3.0, 4.0]);
    // SAFETY: a live tensor we own, over 16 readable bytes of fake device memory.
    let x = unsafe { Array::from_dlpack_raw(t.raw) }.unwrap();
    assert_eq!(
        x.devices(),
        vec![devs[0].clone()],
        "landed on the fake device"
    );
    let y = (&x + &x).unwrap(); // queued: reads the producer's memory later
    drop(x);
    assert_eq!(
        t.deleted.load(Ordering::SeqCst),
        0,
        "still used by queued work"
    );
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![2.0, 4.0, 6.0, 8.0]);
    devs[0].backend().synchronize(0).unwrap();
    assert_eq!(
        t.deleted.load(Ordering::SeqCst),
        1,
        "released exactly once, after use"
    );
    assert!(fake.counters().releases() >= 1);
    // A failed import releases at once, exactly once.
    let bad = produce(&[1.0]);
    // SAFETY: as above; the dtype is then made invalid.
    unsafe {
        if let RawDLPack::Versioned(p) = bad.raw {
            (*p).dl_tensor.dtype.lanes = 4;
        }
        assert!(Array::from_dlpack_raw(bad.raw).is_err());
    }
    assert_eq!(bad.deleted.load(Ordering::SeqCst), 1);
}

#[test]
fn export_makes_the_consumer_stream_wait() {
    let _g = serial();
    let (fake, devs) = async_fake();
    settle(&devs);
    let x = host(&[1.0, 2.0, 3.0], &[3]).to_device(&devs[0]).unwrap();
    x.block_until_ready().unwrap();
    let want: Vec<u8> = [2.0f32, 4.0, 6.0]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    let read = |t: &dlarray::DLPackTensor, stream: usize| {
        let a = t.dl_tensor().unwrap().data as u64;
        fake.read_on_stream(stream, a, 12)
    };
    // A consumer stream handle: the export records an event and makes that stream wait.
    let y = (&x + &x).unwrap();
    let opts = |s: Option<i64>| ExportOptions {
        max_version: Some((1, 0)),
        stream: s.into(),
        ..Default::default()
    };
    let t = y.to_dlpack_with(opts(Some(0x7000))).unwrap();
    assert_eq!(
        t.dl_tensor().unwrap().device,
        DLDevice::new(DLDeviceType::kDLCUDA, 0)
    );
    assert_eq!(fake.pending(0), 1, "the export does not wait itself");
    assert_eq!(
        read(&t, 0x7000),
        want,
        "the consumer's stream saw the finished data"
    );
    // stream=None is CUDA's legacy default stream (1).
    let y = (&x + &x).unwrap();
    let t = y.to_dlpack_with(opts(None)).unwrap();
    assert_eq!(read(&t, 1), want);
    // stream=-1: no synchronisation, so the consumer sees unfinished memory (zeros) until
    // it synchronises itself: a missing wait is a wrong result, not a lucky pass.
    let y = (&x + &x).unwrap();
    let t = y.to_dlpack_with(opts(Some(-1))).unwrap();
    assert_eq!(read(&t, 0x7001), vec![0u8; 12]);
    y.block_until_ready().unwrap();
    assert_eq!(read(&t, 0x7001), want);
    // CUDA refuses 0; the error comes before anything is handed out.
    let e = y.to_dlpack_with(opts(Some(0))).unwrap_err();
    assert!(e.to_string().contains("ambiguous"), "{e}");
    // Export and re-import is the same array; a DLPack round trip through another
    // consumer's view of the memory keeps the data on the device.
    let t = y.to_dlpack_with(opts(Some(2))).unwrap();
    let back = Array::from_dlpack(t).unwrap();
    assert_eq!(
        back.unsafe_buffer_pointer().unwrap(),
        y.unsafe_buffer_pointer().unwrap()
    );
    // The consumer stream we pass when importing from a producer on this device.
    assert_eq!(
        dlarray::dlpack::consumer_stream(DLDevice::new(DLDeviceType::kDLCUDA, 1)).as_raw(),
        Some(0x5001)
    );
}

#[test]
fn out_of_memory_and_device_loss_are_errors_that_lose_nothing() {
    let _g = serial();
    let (fake, devs) = async_fake();
    settle(&devs);
    let (allocs, frees) = (fake.counters().allocs(), fake.counters().frees());
    let src = host(&[3.0; 64], &[64]);
    fake.set_budget(Some(256 + 128));
    let x = src.to_device(&devs[0]).unwrap(); // 256 bytes
    let e = (&x + &x).unwrap_err(); // another 256: over budget
    assert!(matches!(e, Error::OutOfMemory { .. }), "{e}");
    fake.set_budget(None);
    // The device is lost while the next job runs.
    let y = (&x + &x).unwrap();
    fake.lose_after(0);
    let e = y.to_vec::<f32>().unwrap_err();
    assert!(matches!(e, Error::DeviceLost { .. }), "{e}");
    let e = (&x * &x).unwrap_err();
    assert!(
        matches!(e, Error::DeviceLost { .. }),
        "every later call: {e}"
    );
    assert!(matches!(
        x.block_until_ready(),
        Err(Error::DeviceLost { .. })
    ));
    // Inputs elsewhere are intact; on another device of the backend, work goes on.
    assert_eq!(src.to_vec::<f32>().unwrap(), vec![3.0; 64]);
    let on1 = src.to_device(&devs[1]).unwrap();
    assert_eq!(
        (&on1 + &on1).unwrap().to_vec::<f32>().unwrap(),
        vec![6.0; 64]
    );
    // Nothing leaked: the lost device's memory is still released.
    drop((x, y, on1));
    fake.revive(0);
    settle(&devs);
    let made = fake.counters().allocs() - allocs;
    assert_eq!(fake.counters().frees() - frees, made);
    assert!(matches!(
        devs[0].backend().synchronize(0),
        Ok(()) | Err(Error::DeviceLost { .. })
    ));
}

#[test]
fn buffers_have_one_typed_address() {
    let _g = serial();
    let (_, devs) = async_fake();
    let x = host(&[1.0], &[1]).to_device(&devs[0]).unwrap();
    assert!(x.unsafe_buffer_pointer().unwrap() >= 0xD1A0_0000_0000);
    let shard = &x.addressable_shards()[0];
    assert_eq!(
        shard.data().unsafe_buffer_pointer().unwrap(),
        x.unsafe_buffer_pointer().unwrap()
    );
    // The address kind decides what DLPack may call the memory.
    let e = x.to_dlpack_with(ExportOptions {
        dl_device: Some(DLDevice::CPU),
        copy: Some(false),
        ..Default::default()
    });
    assert!(
        e.is_err(),
        "device memory is never exported as kDLCPU in place"
    );
    let copied = x
        .to_dlpack_with(ExportOptions {
            dl_device: Some(DLDevice::CPU),
            max_version: Some((1, 0)),
            ..Default::default()
        })
        .unwrap();
    assert!(copied.is_copied());
    assert!(Address::Opaque.raw().is_none());
}

#[test]
fn faults_in_sharded_ops_moves_and_exports_lose_nothing() {
    let _g = serial();
    let (fake, devs) = async_fake();
    settle(&devs);
    let (allocs, frees) = (fake.counters().allocs(), fake.counters().frees());
    let vals: Vec<f32> = (0..64).map(|v| v as f32).collect();
    let src = host(&vals, &[8, 8]);
    let rows = dlarray::Sharding::split(devs.clone(), 0).unwrap();
    let x = src.device_put(&rows).unwrap();
    assert_eq!(x.addressable_shards().len(), 2);
    // Out of memory in the middle of a sharded op: room for one shard's output only.
    fake.set_budget(Some(32 * 4));
    let e = (&x + &x).unwrap_err();
    assert!(matches!(e, Error::OutOfMemory { .. }), "{e}");
    // ... and in the middle of a move onto the devices, and of a device-to-device move.
    fake.set_budget(Some(32 * 4));
    assert!(matches!(
        src.device_put(&rows),
        Err(Error::OutOfMemory { .. })
    ));
    fake.set_budget(Some(0));
    let one = dlarray::Sharding::single(&devs[1]);
    assert!(matches!(x.device_put(&one), Err(Error::OutOfMemory { .. })));
    fake.set_budget(None);
    assert_eq!(x.to_vec::<f32>().unwrap(), vals, "the input is intact");
    // DLPack export of the sharded array: a host copy, unaffected by the device budget.
    fake.set_budget(Some(0));
    let t = x
        .to_dlpack_with(ExportOptions {
            max_version: Some((1, 0)),
            ..Default::default()
        })
        .unwrap();
    assert!(t.is_copied());
    assert_eq!(
        Array::from_dlpack(t).unwrap().to_vec::<f32>().unwrap(),
        vals
    );
    fake.set_budget(None);
    // Device loss while a sharded op runs: the op's result cannot be read, later calls on
    // the lost device fail, the host original is intact.
    let y = (&x * &x).unwrap();
    fake.lose_after(0);
    let e = y.to_vec::<f32>().unwrap_err();
    assert!(matches!(e, Error::DeviceLost { .. }), "{e}");
    assert!(matches!(x.to_vec::<f32>(), Err(Error::DeviceLost { .. })));
    assert_eq!(src.to_vec::<f32>().unwrap(), vals);
    drop((x, y));
    fake.revive(0);
    fake.revive(1);
    settle(&devs);
    settle(&devs);
    let made = fake.counters().allocs() - allocs;
    assert_eq!(fake.counters().frees() - frees, made, "nothing leaked");
}
