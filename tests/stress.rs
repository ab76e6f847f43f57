//! Stress: 8 threads exporting, importing, cloning, computing on, moving and dropping shared
//! arrays for `DLARRAY_STRESS_SECS` seconds (default 2; `scripts/stress.sh` runs longer),
//! every result checked, every producer deleter run exactly once.

use dlarray::dlpack::ffi::*;
use dlarray::{Array, Axes, DType, ExportOptions, MemoryKind, RawDLPack};
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

static MADE: AtomicUsize = AtomicUsize::new(0);
static DELETED: AtomicUsize = AtomicUsize::new(0);

/// A foreign producer's tensor: 64 f32 values `k..k+64` in a boxed holder.
#[repr(C)]
struct Holder {
    managed: DLManagedTensorVersioned,
    shape: [i64; 1],
    strides: [i64; 1],
    data: Vec<f32>,
}

unsafe extern "C" fn delete(p: *mut DLManagedTensorVersioned) {
    // SAFETY: `p` heads a Holder leaked by `produce`; DLPack calls the deleter once.
    drop(unsafe { Box::from_raw(p as *mut Holder) });
    DELETED.fetch_add(1, Ordering::SeqCst);
}

fn produce(k: f32) -> RawDLPack {
    let mut h = Box::new(Holder {
        managed: DLManagedTensorVersioned {
            version: DLPackVersion { major: 1, minor: 3 },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete),
            flags: 0,
            dl_tensor: DLTensor {
                data: std::ptr::null_mut(),
                device: DLDevice::CPU,
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
        shape: [64],
        strides: [1],
        data: (0..64).map(|i| k + i as f32).collect(),
    });
    h.managed.dl_tensor.data = h.data.as_mut_ptr() as *mut c_void;
    h.managed.dl_tensor.shape = h.shape.as_mut_ptr();
    h.managed.dl_tensor.strides = h.strides.as_mut_ptr();
    MADE.fetch_add(1, Ordering::SeqCst);
    RawDLPack::Versioned(Box::into_raw(h) as *mut DLManagedTensorVersioned)
}

#[test]
fn eight_threads_share_arrays_without_losing_anything() {
    let secs: f64 = std::env::var("DLARRAY_STRESS_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2.0);
    let cpu = dlarray::get_device("cpu:0").unwrap();
    let tpus: Vec<_> = dlarray::devices()
        .unwrap()
        .into_iter()
        .filter(|d| d.platform() == "tpu")
        .collect();
    let base: Vec<f32> = (0..1024).map(|v| v as f32).collect();
    let x = Array::from_slice_on(&base, &[32, 32], &cpu).unwrap();
    let shared = Arc::new((x, tpus));
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let ops = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let (shared, base, ops) = (shared.clone(), base.clone(), ops.clone());
            std::thread::spawn(move || {
                let (x, tpus) = &*shared;
                let mut i = 0usize;
                let mut keep: Vec<Array> = Vec::new();
                while Instant::now() < deadline {
                    i += 1;
                    match (t + i) % 6 {
                        // Our own export, back in: the same array.
                        0 => {
                            let opts = ExportOptions {
                                max_version: Some((1, 0)),
                                ..Default::default()
                            };
                            let back = Array::from_dlpack(x.to_dlpack_with(opts).unwrap()).unwrap();
                            assert_eq!(
                                back.unsafe_buffer_pointer().unwrap(),
                                x.unsafe_buffer_pointer().unwrap()
                            );
                            keep.push(back);
                        }
                        // A foreign producer's tensor, computed on, kept a while.
                        1 => {
                            let k = (t * 1000 + i) as f32;
                            // SAFETY: a live tensor we own, over 64 readable f32s.
                            let a = unsafe { Array::from_dlpack_raw(produce(k)) }.unwrap();
                            let s = a.sum(Axes::All).unwrap().item::<f32>().unwrap();
                            assert_eq!(s, 64.0 * k + 2016.0);
                            keep.push(a);
                        }
                        // Compute on a clone.
                        2 => {
                            let y = (&x.clone() * &x.clone()).unwrap();
                            let v = y.to_vec::<f32>().unwrap();
                            assert_eq!(v[33], 33.0 * 33.0);
                        }
                        // Move to a TPU device, pinned memory, export the pinned copy.
                        3 => {
                            let d = &tpus[(t + i) % tpus.len()];
                            let p = x
                                .to_device(d)
                                .unwrap()
                                .with_memory_kind(MemoryKind::PinnedHost)
                                .unwrap();
                            let t = p.to_dlpack().unwrap();
                            let back = Array::from_dlpack(t).unwrap();
                            assert_eq!(back.to_vec::<f32>().unwrap(), base);
                        }
                        // A host-copy export of TPU device memory, consumed as foreign.
                        4 => {
                            let d = &tpus[i % tpus.len()];
                            let h = x.to_device(d).unwrap();
                            let t = h.to_dlpack().unwrap();
                            assert!(t.is_copied() || !t.is_versioned());
                            let back = Array::from_dlpack(t).unwrap().astype(DType::F64).unwrap();
                            assert_eq!(back.to_vec::<f64>().unwrap()[1023], 1023.0);
                        }
                        // Drop what was kept, on this thread or another.
                        _ => {
                            if keep.len() > 4 {
                                let old = std::mem::take(&mut keep);
                                std::thread::spawn(move || drop(old)).join().unwrap();
                            }
                        }
                    }
                    ops.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("a stress thread failed");
    }
    let made = MADE.load(Ordering::SeqCst);
    assert_eq!(
        DELETED.load(Ordering::SeqCst),
        made,
        "every deleter exactly once"
    );
    assert_eq!(
        shared.0.to_vec::<f32>().unwrap(),
        base,
        "the shared array is intact"
    );
    println!(
        "stress: 8 threads x {secs} s, {} operations, {made} foreign tensors, all released once",
        ops.load(Ordering::Relaxed)
    );
}

/// Eight threads register one backend name at once: exactly one wins with its devices, the
/// others are told the name is taken. (Registration is now one at a time, so a loser no
/// longer makes devices that nothing holds; that leak showed in CI's memcheck of
/// `dlpack_export`, whose tests register one fake backend from two threads.)
#[test]
fn racing_registrations_of_one_name_leave_nothing_behind() {
    use dlarray::host::{HostBackend, HostConfig};
    let start = Arc::new(std::sync::Barrier::new(8));
    let wins: usize = (0..8)
        .map(|_| {
            let start = start.clone();
            std::thread::spawn(move || {
                let backend = HostBackend::new(HostConfig {
                    name: "racer",
                    platform: "gpu",
                    platform_version: "race 1".into(),
                    device_count: 2,
                    memory_kinds: vec![MemoryKind::Device],
                    threads_per_device: 1,
                    pool_bytes: 0,
                    dlpack: vec![],
                })
                .expect("host backend");
                start.wait();
                match dlarray::register_backend(Arc::new(backend)) {
                    Ok(devices) => devices.len(),
                    Err(e) => {
                        assert!(e.to_string().contains("already registered"), "{e}");
                        0
                    }
                }
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .sum();
    assert_eq!(wins, 2, "one registration's two devices");
    assert!(dlarray::get_device("racer:1").is_ok());
}
