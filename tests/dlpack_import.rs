//! Import: a hand-built producer checks that every malformed field is a clear error, that the
//! deleter runs exactly once on every path, and that valid tensors (strided, negative,
//! size-0/size-1 quirks, read-only, pinned host) are wrapped without copying.

use dlarray::dlpack::ffi::*;
use dlarray::{Array, DType, Error, MemoryKind, RawDLPack};
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What the producer hands out; every field may be made wrong.
#[derive(Clone)]
struct Spec {
    data: Vec<u64>, // u64 storage: 8-byte aligned
    null_data: bool,
    byte_offset: u64,
    ndim: i32,
    shape: Option<Vec<i64>>,
    strides: Option<Vec<i64>>,
    dtype: DLDataType,
    device: DLDevice,
    version: DLPackVersion,
    flags: u64,
}

impl Spec {
    /// A 2x3 float32 tensor holding 0..6.
    fn f32_2x3() -> Spec {
        let vals: Vec<f32> = (0..6).map(|v| v as f32).collect();
        let mut data = vec![0u64; 3];
        // SAFETY: 24 bytes of u64 storage hold 6 f32s.
        unsafe { std::ptr::copy_nonoverlapping(vals.as_ptr(), data.as_mut_ptr() as *mut f32, 6) };
        Spec {
            data,
            null_data: false,
            byte_offset: 0,
            ndim: 2,
            shape: Some(vec![2, 3]),
            strides: Some(vec![3, 1]),
            dtype: DLDataType {
                code: 2,
                bits: 32,
                lanes: 1,
            },
            device: DLDevice::CPU,
            version: DLPackVersion { major: 1, minor: 3 },
            flags: 0,
        }
    }
}

struct Keep {
    spec: Spec,
    count: Arc<AtomicUsize>,
}

#[repr(C)]
struct LegacyBox {
    managed: DLManagedTensor,
    keep: Keep,
}
#[repr(C)]
struct VersionedBox {
    managed: DLManagedTensorVersioned,
    keep: Keep,
}

unsafe extern "C" fn del_legacy(p: *mut DLManagedTensor) {
    // SAFETY: p is the first field of a leaked LegacyBox.
    let b = unsafe { Box::from_raw(p as *mut LegacyBox) };
    b.keep.count.fetch_add(1, Ordering::SeqCst);
}
unsafe extern "C" fn del_versioned(p: *mut DLManagedTensorVersioned) {
    // SAFETY: p is the first field of a leaked VersionedBox.
    let b = unsafe { Box::from_raw(p as *mut VersionedBox) };
    b.keep.count.fetch_add(1, Ordering::SeqCst);
}

fn dl_tensor(k: &mut Keep) -> DLTensor {
    let s = &mut k.spec;
    DLTensor {
        data: if s.null_data {
            std::ptr::null_mut()
        } else {
            s.data.as_mut_ptr() as *mut c_void
        },
        device: s.device,
        ndim: s.ndim,
        dtype: s.dtype,
        shape: s
            .shape
            .as_mut()
            .map_or(std::ptr::null_mut(), |v| v.as_mut_ptr()),
        strides: s
            .strides
            .as_mut()
            .map_or(std::ptr::null_mut(), |v| v.as_mut_ptr()),
        byte_offset: s.byte_offset,
    }
}

fn legacy(spec: Spec) -> (RawDLPack, Arc<AtomicUsize>) {
    let count = Arc::new(AtomicUsize::new(0));
    let mut b = Box::new(LegacyBox {
        managed: DLManagedTensor {
            dl_tensor: DLTensor {
                data: std::ptr::null_mut(),
                device: DLDevice::CPU,
                ndim: 0,
                dtype: DLDataType {
                    code: 0,
                    bits: 0,
                    lanes: 0,
                },
                shape: std::ptr::null_mut(),
                strides: std::ptr::null_mut(),
                byte_offset: 0,
            },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(del_legacy),
        },
        keep: Keep {
            spec,
            count: count.clone(),
        },
    });
    b.managed.dl_tensor = dl_tensor(&mut b.keep);
    (
        RawDLPack::Legacy(Box::into_raw(b) as *mut DLManagedTensor),
        count,
    )
}

fn versioned(spec: Spec) -> (RawDLPack, Arc<AtomicUsize>) {
    let count = Arc::new(AtomicUsize::new(0));
    let (version, flags) = (spec.version, spec.flags);
    let mut b = Box::new(VersionedBox {
        managed: DLManagedTensorVersioned {
            version,
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(del_versioned),
            flags,
            dl_tensor: DLTensor {
                data: std::ptr::null_mut(),
                device: DLDevice::CPU,
                ndim: 0,
                dtype: DLDataType {
                    code: 0,
                    bits: 0,
                    lanes: 0,
                },
                shape: std::ptr::null_mut(),
                strides: std::ptr::null_mut(),
                byte_offset: 0,
            },
        },
        keep: Keep {
            spec,
            count: count.clone(),
        },
    });
    b.managed.dl_tensor = dl_tensor(&mut b.keep);
    (
        RawDLPack::Versioned(Box::into_raw(b) as *mut DLManagedTensorVersioned),
        count,
    )
}

fn import(raw: RawDLPack) -> dlarray::Result<Array> {
    // SAFETY: the test producer's tensors are live and owned by us; shape/strides arrays are
    // ndim long wherever ndim matches them (the malformed cases are what import must catch
    // before reading past them: their ndim is checked first).
    unsafe { Array::from_dlpack_raw(raw) }
}

/// Imports `spec` both ways; checks the deleter ran once after the array is dropped.
fn import_both(spec: &Spec) -> Vec<dlarray::Result<Array>> {
    let mut out = Vec::new();
    for make in [legacy, versioned] {
        let (raw, count) = make(spec.clone());
        let r = import(raw);
        if r.is_err() {
            assert_eq!(
                count.load(Ordering::SeqCst),
                1,
                "deleter runs once on failure"
            );
        }
        out.push(r.map(|a| {
            // An empty tensor references no memory: it is released at once.
            let held = if a.size() == 0 { 1 } else { 0 };
            assert_eq!(
                count.load(Ordering::SeqCst),
                held,
                "deleter waits for the array"
            );
            let copy = Array::from_vec(a.to_f64_vec().unwrap(), a.shape()).unwrap();
            drop(a);
            assert_eq!(
                count.load(Ordering::SeqCst),
                1,
                "deleter runs once when the array drops"
            );
            copy
        }));
    }
    out
}

fn expect_invalid(spec: Spec, needle: &str) {
    for r in import_both(&spec) {
        match r {
            Err(Error::InvalidDlpack(m)) => {
                assert!(m.contains(needle), "{m:?} should mention {needle:?}")
            }
            other => panic!("expected an InvalidDlpack error mentioning {needle:?}, got {other:?}"),
        }
    }
}

#[test]
fn valid_tensor_is_wrapped_without_copy() {
    let (raw, count) = versioned(Spec::f32_2x3());
    let RawDLPack::Versioned(p) = raw else {
        unreachable!()
    };
    // SAFETY: live until imported.
    let data = unsafe { (*p).dl_tensor.data } as usize;
    let a = import(raw).unwrap();
    assert_eq!(a.shape(), &[2, 3]);
    assert_eq!(a.dtype(), DType::F32);
    assert_eq!(a.unsafe_buffer_pointer().unwrap(), data, "zero-copy");
    assert_eq!(
        a.to_vec::<f32>().unwrap(),
        vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    );
    let b = (&a + &a).unwrap();
    let view = a.t().unwrap();
    drop(a);
    assert_eq!(
        count.load(Ordering::SeqCst),
        0,
        "a view still uses the memory"
    );
    assert_eq!(
        view.to_vec::<f32>().unwrap(),
        vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    );
    drop(view);
    assert_eq!(count.load(Ordering::SeqCst), 1);
    assert_eq!(b.to_vec::<f32>().unwrap()[5], 10.0);
}

#[test]
fn malformed_fields_are_errors_and_release_the_tensor() {
    let base = Spec::f32_2x3();
    expect_invalid(
        Spec {
            null_data: true,
            ..base.clone()
        },
        "data is NULL",
    );
    expect_invalid(
        Spec {
            ndim: -1,
            ..base.clone()
        },
        "ndim",
    );
    expect_invalid(
        Spec {
            ndim: 65,
            ..base.clone()
        },
        "ndim",
    );
    expect_invalid(
        Spec {
            shape: None,
            ..base.clone()
        },
        "shape is NULL",
    );
    expect_invalid(
        Spec {
            shape: Some(vec![2, -3]),
            ..base.clone()
        },
        "negative dimension",
    );
    expect_invalid(
        Spec {
            dtype: DLDataType {
                code: 2,
                bits: 32,
                lanes: 2,
            },
            ..base.clone()
        },
        "lanes",
    );
    expect_invalid(
        Spec {
            dtype: DLDataType {
                code: 2,
                bits: 12,
                lanes: 1,
            },
            ..base.clone()
        },
        "12 bits",
    );
    expect_invalid(
        Spec {
            dtype: DLDataType {
                code: 6,
                bits: 1,
                lanes: 1,
            },
            ..base.clone()
        },
        "1 bits",
    );
    expect_invalid(
        Spec {
            dtype: DLDataType {
                code: 1,
                bits: 1,
                lanes: 1,
            },
            ..base.clone()
        },
        "1 bits",
    );
    expect_invalid(
        Spec {
            dtype: DLDataType {
                code: 99,
                bits: 8,
                lanes: 1,
            },
            ..base.clone()
        },
        "type code 99",
    );
    expect_invalid(
        Spec {
            dtype: DLDataType {
                code: 10,
                bits: 8,
                lanes: 1,
            },
            ..base.clone()
        },
        "type code 10",
    );
    expect_invalid(
        Spec {
            device: DLDevice::new(DLDeviceType(99), 0),
            ..base.clone()
        },
        "device type 99",
    );
    expect_invalid(
        Spec {
            shape: Some(vec![i64::MAX, 4]),
            ..base.clone()
        },
        "overflows",
    );
    // Each axis fits, the element count does not; and one whose bytes do not fit in i64.
    expect_invalid(
        Spec {
            shape: Some(vec![i64::MAX, 2]),
            strides: Some(vec![0, 0]),
            ..base.clone()
        },
        "overflows",
    );
    expect_invalid(
        Spec {
            shape: Some(vec![1 << 62, 1]),
            strides: Some(vec![0, 0]),
            ..base.clone()
        },
        "does not fit in i64",
    );
    expect_invalid(
        Spec {
            strides: Some(vec![i64::MAX / 2, 1]),
            ..base.clone()
        },
        "outside the address space",
    );
    expect_invalid(
        Spec {
            strides: Some(vec![-(i64::MAX / 2), 1]),
            ..base.clone()
        },
        "outside the address space",
    );
}

#[test]
fn unknown_major_version_only_calls_the_deleter() {
    for major in [0, 2, 100] {
        let spec = Spec {
            version: DLPackVersion { major, minor: 0 },
            ..Spec::f32_2x3()
        };
        let (raw, count) = versioned(spec);
        let e = import(raw).unwrap_err();
        assert!(
            e.to_string().contains(&format!("major version {major}")),
            "{e}"
        );
        assert_eq!(count.load(Ordering::SeqCst), 1);
    }
}

#[test]
fn null_strides_follow_the_version() {
    let spec = Spec {
        strides: None,
        ..Spec::f32_2x3()
    };
    // Legacy and 1.0/1.1: compact row-major.
    let (raw, _) = legacy(spec.clone());
    assert_eq!(import(raw).unwrap().to_vec::<f32>().unwrap()[4], 4.0);
    for minor in [0, 1] {
        let (raw, _) = versioned(Spec {
            version: DLPackVersion { major: 1, minor },
            ..spec.clone()
        });
        assert!(import(raw).is_ok());
    }
    // 1.2 and later forbid it.
    for minor in [2, 3, 9] {
        let (raw, count) = versioned(Spec {
            version: DLPackVersion { major: 1, minor },
            ..spec.clone()
        });
        let e = import(raw).unwrap_err();
        assert!(e.to_string().contains("forbid"), "{e}");
        assert_eq!(count.load(Ordering::SeqCst), 1);
    }
}

#[test]
fn strided_negative_and_offset_views() {
    // Column-major 2x3 (the transpose of a 3x2 buffer).
    let r = import_both(&Spec {
        strides: Some(vec![1, 2]),
        ..Spec::f32_2x3()
    });
    for a in r {
        assert_eq!(
            a.unwrap().to_vec::<f64>().unwrap(),
            vec![0.0, 2.0, 4.0, 1.0, 3.0, 5.0]
        );
    }
    // Reversed rows: data points at the last row, stride -3 (NumPy's `x[::-1]`).
    let spec = Spec {
        byte_offset: 12,
        strides: Some(vec![-3, 1]),
        ..Spec::f32_2x3()
    };
    for a in import_both(&spec) {
        assert_eq!(
            a.unwrap().to_vec::<f64>().unwrap(),
            vec![3.0, 4.0, 5.0, 0.0, 1.0, 2.0]
        );
    }
    // Every other column, columns reversed: [:, ::-2] of the 2x3.
    let spec = Spec {
        byte_offset: 8,
        shape: Some(vec![2, 2]),
        strides: Some(vec![3, -2]),
        ..Spec::f32_2x3()
    };
    for a in import_both(&spec) {
        assert_eq!(
            a.unwrap().to_vec::<f64>().unwrap(),
            vec![2.0, 0.0, 5.0, 3.0]
        );
    }
    // Broadcast (stride 0) rows.
    let spec = Spec {
        strides: Some(vec![0, 1]),
        ..Spec::f32_2x3()
    };
    for a in import_both(&spec) {
        assert_eq!(
            a.unwrap().to_vec::<f64>().unwrap(),
            vec![0.0, 1.0, 2.0, 0.0, 1.0, 2.0]
        );
    }
}

#[test]
fn size_one_and_size_zero_axes_are_stride_agnostic() {
    // (3, 1) / (1, 4) / (2, 1, 3) with garbage strides on the size-1 axes.
    let cases: [(Vec<i64>, Vec<i64>, usize); 4] = [
        (vec![3, 1], vec![1, 12345], 3),
        (vec![1, 4], vec![0, 1], 4),
        (vec![2, 1, 3], vec![3, -77, 1], 6),
        (vec![6, 1, 1], vec![1, 8, 80], 6),
    ];
    for (shape, strides, n) in cases {
        let spec = Spec {
            ndim: shape.len() as i32,
            shape: Some(shape.clone()),
            strides: Some(strides),
            ..Spec::f32_2x3()
        };
        for a in import_both(&spec) {
            let v = a.unwrap().to_vec::<f64>().unwrap();
            assert_eq!(v, (0..n).map(|i| i as f64).collect::<Vec<_>>(), "{shape:?}");
        }
    }
    // Size 0: NULL data, any strides; the deleter still runs once.
    for shape in [vec![0i64], vec![0, 4], vec![3, 0], vec![2, 0, 1]] {
        let spec = Spec {
            null_data: true,
            ndim: shape.len() as i32,
            strides: Some(vec![0; shape.len()]),
            shape: Some(shape.clone()),
            ..Spec::f32_2x3()
        };
        for a in import_both(&spec) {
            let a = a.unwrap();
            let want: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
            assert_eq!(a.shape(), want.as_slice());
            assert_eq!(a.size(), 0);
        }
    }
    // 0-d: shape and strides may be NULL.
    let spec = Spec {
        ndim: 0,
        shape: None,
        strides: None,
        ..Spec::f32_2x3()
    };
    for a in import_both(&spec) {
        let a = a.unwrap();
        assert_eq!(a.shape(), &[] as &[usize]);
        assert_eq!(a.to_vec::<f64>().unwrap(), vec![0.0]);
    }
}

#[test]
fn read_only_flag_is_honoured() {
    let spec = Spec {
        flags: DLPACK_FLAG_BITMASK_READ_ONLY,
        ..Spec::f32_2x3()
    };
    let (raw, _) = versioned(spec);
    let a = import(raw).unwrap();
    assert!(a.is_read_only());
    // Exporting it again says so (versioned), and the legacy ABI, which cannot, refuses.
    let t = a
        .to_dlpack_with(dlarray::ExportOptions {
            max_version: Some((1, 0)),
            ..Default::default()
        })
        .unwrap();
    assert!(t.is_read_only());
    let e = a.to_dlpack().unwrap_err();
    assert_eq!(
        e.to_string(),
        "Cannot export readonly array since signalling readonly is unsupported by DLPack (supported by newer DLPack version)."
    );
    // A copy is the consumer's own: writable.
    let c = a
        .to_dlpack_with(dlarray::ExportOptions {
            copy: Some(true),
            ..Default::default()
        })
        .unwrap();
    assert!(!c.is_read_only());
    // Ops produce new (writable) arrays.
    assert!(!(&a + &a).unwrap().is_read_only());
    // Legacy imports cannot be flagged.
    let (raw, _) = legacy(Spec::f32_2x3());
    assert!(!import(raw).unwrap().is_read_only());
}

#[test]
fn bool_bytes_are_checked() {
    let mut spec = Spec {
        dtype: DLDataType {
            code: 6,
            bits: 8,
            lanes: 1,
        },
        ..Spec::f32_2x3()
    };
    spec.data = vec![u64::from_le_bytes([1, 0, 1, 1, 0, 0, 0, 0])];
    for a in import_both(&spec) {
        assert_eq!(
            a.unwrap().to_vec::<f64>().unwrap(),
            vec![1.0, 0.0, 1.0, 1.0, 0.0, 0.0]
        );
    }
    spec.data = vec![u64::from_le_bytes([1, 0, 2, 1, 0, 0, 0, 0])];
    expect_invalid(spec, "bool");
}

#[test]
fn misaligned_data_is_copied_and_released_at_once() {
    // float32 at byte offset 2: not 4-aligned.
    let mut spec = Spec {
        byte_offset: 2,
        shape: Some(vec![2, 2]),
        strides: Some(vec![2, 1]),
        ..Spec::f32_2x3()
    };
    spec.data = vec![0; 3];
    let vals: [f32; 4] = [1.5, 2.5, 3.5, 4.5];
    // SAFETY: 24 bytes of storage; 16 bytes written at offset 2.
    unsafe {
        std::ptr::copy_nonoverlapping(
            vals.as_ptr() as *const u8,
            (spec.data.as_mut_ptr() as *mut u8).add(2),
            16,
        )
    };
    let (raw, count) = legacy(spec);
    let a = import(raw).unwrap();
    assert_eq!(
        count.load(Ordering::SeqCst),
        1,
        "copied, so the producer's memory is released"
    );
    assert_eq!(a.to_vec::<f32>().unwrap(), vals.to_vec());
    assert_eq!(a.unsafe_buffer_pointer().unwrap() % 64, 0);
}

#[test]
fn pinned_host_types_land_on_the_matching_backend() {
    // TPU pinned host memory of tpu:1 goes to tpu:1's pinned_host, without a copy.
    let spec = Spec {
        device: DLDevice::new(DLDeviceType::kDLTPUHost, 1),
        ..Spec::f32_2x3()
    };
    let (raw, _) = versioned(spec);
    let RawDLPack::Versioned(p) = raw else {
        unreachable!()
    };
    // SAFETY: live until imported.
    let data = unsafe { (*p).dl_tensor.data } as usize;
    let a = import(raw).unwrap();
    assert_eq!(a.devices()[0].name(), "tpu:1");
    assert_eq!(a.memory_kind(), MemoryKind::PinnedHost);
    assert_eq!(a.unsafe_buffer_pointer().unwrap(), data);
    assert_eq!(
        a.dlpack_device().unwrap(),
        DLDevice::new(DLDeviceType::kDLTPUHost, 1)
    );
    // CUDA pinned memory with no CUDA backend: host memory all the same, held by the CPU.
    let spec = Spec {
        device: DLDevice::new(DLDeviceType::kDLCUDAHost, 0),
        ..Spec::f32_2x3()
    };
    let (raw, _) = legacy(spec);
    let a = import(raw).unwrap();
    assert_eq!(a.devices()[0].platform(), "cpu");
    assert_eq!(a.to_vec::<f32>().unwrap()[5], 5.0);
    // Device memory of a GPU we do not have.
    let spec = Spec {
        device: DLDevice::new(DLDeviceType::kDLCUDA, 0),
        ..Spec::f32_2x3()
    };
    expect_invalid(
        spec,
        "no available device matches DLPack device (kDLCUDA, 0)",
    );
    // ... and the error says what to do instead.
    let spec = Spec {
        device: DLDevice::new(DLDeviceType::kDLCUDA, 0),
        ..Spec::f32_2x3()
    };
    expect_invalid(spec, "ask the producer for a host copy");
}

#[test]
fn a_dlpack_tensor_dropped_unconsumed_releases_once() {
    let (raw, count) = legacy(Spec::f32_2x3());
    // SAFETY: live and owned.
    let t = unsafe { dlarray::DLPackTensor::from_raw(raw) }.unwrap();
    assert_eq!(t.shape().unwrap(), vec![2, 3]);
    drop(t);
    assert_eq!(count.load(Ordering::SeqCst), 1);
    // SAFETY: a NULL pointer is rejected before anything is read.
    assert!(
        unsafe { dlarray::DLPackTensor::from_raw(RawDLPack::Legacy(std::ptr::null_mut())) }
            .is_err()
    );
}

#[test]
fn the_deleter_may_run_on_another_thread() {
    let (raw, count) = versioned(Spec::f32_2x3());
    let a = import(raw).unwrap();
    let h = std::thread::spawn(move || {
        assert_eq!(a.to_vec::<f32>().unwrap()[1], 1.0);
        drop(a);
    });
    h.join().unwrap();
    assert_eq!(count.load(Ordering::SeqCst), 1);
}

#[test]
fn sub_byte_and_vector_dtypes_are_refused_clearly() {
    // float4_e2m1fn as XLA (lanes 1) and PyTorch (lanes 2) export it; float8 variants.
    for dtype in [
        DLDataType {
            code: 17,
            bits: 4,
            lanes: 1,
        },
        DLDataType {
            code: 17,
            bits: 4,
            lanes: 2,
        },
        DLDataType {
            code: 12,
            bits: 8,
            lanes: 1,
        },
        DLDataType {
            code: 2,
            bits: 16,
            lanes: 4,
        },
    ] {
        let spec = Spec {
            dtype,
            ..Spec::f32_2x3()
        };
        for r in import_both(&spec) {
            assert!(
                matches!(r, Err(Error::InvalidDlpack(_))),
                "{dtype:?}: {r:?}"
            );
        }
    }
}

/// The catalogue: malformed tensors, each with the typed error it must give and its deleter
/// run exactly once, through both ABIs (or the one a case is specific to).
#[test]
fn catalogue_of_malformed_tensors() {
    let base = Spec::f32_2x3();
    let dt = |code, bits, lanes| DLDataType { code, bits, lanes };
    let with = |f: &dyn Fn(&mut Spec)| {
        let mut s = base.clone();
        f(&mut s);
        s
    };
    let bool_bytes = {
        let mut s = base.clone();
        s.dtype = dt(6, 8, 1);
        s.data = vec![0x0000_0000_0201_0100, 0, 0]; // bytes 00 01 01 02 ..: a 2
        s
    };
    #[rustfmt::skip]
    let cases: Vec<(&str, Spec, &str)> = vec![
        ("null data", with(&|s| s.null_data = true), "data is NULL"),
        ("ndim -1", with(&|s| s.ndim = -1), "ndim"),
        ("ndim 65", with(&|s| s.ndim = 65), "ndim"),
        ("ndim i32::MIN", with(&|s| s.ndim = i32::MIN), "ndim"),
        ("null shape", with(&|s| s.shape = None), "shape is NULL"),
        ("negative dim", with(&|s| s.shape = Some(vec![2, -3])), "negative dimension"),
        ("i64::MIN dim", with(&|s| s.shape = Some(vec![i64::MIN, 1])), "negative dimension"),
        ("i64::MAX x 4", with(&|s| s.shape = Some(vec![i64::MAX, 4])), "overflows"),
        ("i64::MAX x 2, stride 0", with(&|s| { s.shape = Some(vec![i64::MAX, 2]); s.strides = Some(vec![0, 0]) }), "overflows"),
        ("2^62 f32: bytes overflow", with(&|s| { s.shape = Some(vec![1 << 62, 1]); s.strides = Some(vec![0, 0]) }), "does not fit in i64"),
        ("2^31 cubed", with(&|s| { s.ndim = 3; s.shape = Some(vec![1 << 31; 3]); s.strides = Some(vec![0; 3]) }), "overflows"),
        ("lanes 2", with(&|s| s.dtype = dt(2, 32, 2)), "lanes"),
        ("lanes 0", with(&|s| s.dtype = dt(2, 32, 0)), "lanes"),
        ("float 12 bits", with(&|s| s.dtype = dt(2, 12, 1)), "12 bits"),
        ("float 128 bits", with(&|s| s.dtype = dt(2, 128, 1)), "128 bits"),
        ("bool 1 bit", with(&|s| s.dtype = dt(6, 1, 1)), "1 bits"),
        ("uint 1 bit", with(&|s| s.dtype = dt(1, 1, 1)), "1 bits"),
        ("int 128 bits", with(&|s| s.dtype = dt(0, 128, 1)), "128 bits"),
        ("complex 32 bits", with(&|s| s.dtype = dt(5, 32, 1)), "32 bits"),
        ("bfloat 32 bits", with(&|s| s.dtype = dt(4, 32, 1)), "32 bits"),
        ("opaque handle", with(&|s| s.dtype = dt(3, 64, 1)), "type code 3"),
        ("float8", with(&|s| s.dtype = dt(10, 8, 1)), "type code 10"),
        ("float4", with(&|s| s.dtype = dt(17, 4, 1)), "type code 17"),
        ("type code 99", with(&|s| s.dtype = dt(99, 8, 1)), "type code 99"),
        ("device type 99", with(&|s| s.device = DLDevice::new(DLDeviceType(99), 0)), "device type 99"),
        ("device type -1", with(&|s| s.device = DLDevice::new(DLDeviceType(-1), 0)), "device type -1"),
        ("CUDA memory, no CUDA backend", with(&|s| s.device = DLDevice::new(DLDeviceType::kDLCUDA, 0)), "no available device"),
        ("Vulkan memory", with(&|s| s.device = DLDevice::new(DLDeviceType::kDLVulkan, 0)), "no available device"),
        ("stride i64::MAX/2", with(&|s| s.strides = Some(vec![i64::MAX / 2, 1])), "outside the address space"),
        ("stride -i64::MAX/2", with(&|s| s.strides = Some(vec![-(i64::MAX / 2), 1])), "outside the address space"),
        ("stride i64::MIN", with(&|s| s.strides = Some(vec![i64::MIN, 1])), "outside the address space"),
        ("byte_offset u64::MAX", with(&|s| s.byte_offset = u64::MAX), "overflows"),
        ("bool byte 2", bool_bytes, "other than 0 or 1"),
    ];
    assert!(cases.len() >= 30, "{} cases", cases.len());
    for (name, spec, needle) in &cases {
        for make in [legacy, versioned] {
            let (raw, count) = make(spec.clone());
            match import(raw) {
                Err(Error::InvalidDlpack(m)) => {
                    assert!(
                        m.contains(needle),
                        "{name}: {m:?} should mention {needle:?}"
                    )
                }
                other => panic!("{name}: expected InvalidDlpack, got {other:?}"),
            }
            assert_eq!(
                count.load(Ordering::SeqCst),
                1,
                "{name}: deleter exactly once"
            );
        }
    }
    // Versioned-only faults.
    let versioned_cases = [
        (
            "major version 2",
            with(&|s| s.version = DLPackVersion { major: 2, minor: 0 }),
            "major version 2",
        ),
        (
            "major version 0",
            with(&|s| s.version = DLPackVersion { major: 0, minor: 9 }),
            "major version 0",
        ),
        (
            "NULL strides from 1.2",
            with(&|s| {
                s.strides = None;
                s.version = DLPackVersion { major: 1, minor: 2 }
            }),
            "strides are NULL",
        ),
    ];
    for (name, spec, needle) in &versioned_cases {
        let (raw, count) = versioned(spec.clone());
        match import(raw) {
            Err(Error::InvalidDlpack(m)) => assert!(m.contains(needle), "{name}: {m:?}"),
            other => panic!("{name}: expected InvalidDlpack, got {other:?}"),
        }
        assert_eq!(
            count.load(Ordering::SeqCst),
            1,
            "{name}: deleter exactly once"
        );
    }
    println!(
        "catalogue: {} malformed tensors x 2 ABIs + {} versioned-only",
        cases.len(),
        versioned_cases.len()
    );
}
