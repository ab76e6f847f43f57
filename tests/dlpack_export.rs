//! Export: JAX's device rules and exact BufferErrors, version negotiation, dl_device / copy,
//! the host-copy fallback, layout fields, and round trips of every dtype and JAX test shape.

mod common;

use common::fake::fake_device;
use common::*;
use dlarray::dlpack::ffi::*;
use dlarray::{
    Array, BufferError, DType, DlpackPolicy, Error, ExportOptions, MemoryKind, Scalar, Sharding,
};

fn v1() -> ExportOptions {
    ExportOptions {
        max_version: Some((1, 0)),
        ..Default::default()
    }
}

fn sample(dtype: DType, shape: &[usize]) -> Array {
    let n: usize = shape.iter().product();
    let vals: Vec<Scalar> = (0..n).map(|i| Scalar::Int((i % 5) as i128 + 1)).collect();
    from_scalars(&vals, shape, dtype, &cpu())
}

#[test]
fn round_trip_every_dtype_and_shape_without_copying() {
    for dtype in DType::ALL {
        for &shape in &JAX_SHAPES {
            for versioned in [false, true] {
                let a = sample(dtype, shape);
                let o = ExportOptions {
                    max_version: versioned.then_some((1, 3)),
                    ..Default::default()
                };
                let t = a.to_dlpack_with(o).unwrap();
                assert_eq!(t.is_versioned(), versioned);
                let dl = *t.dl_tensor().unwrap();
                assert_eq!(dl.device, DLDevice::CPU);
                assert_eq!(dl.byte_offset, 0);
                assert_eq!(dl.ndim as usize, shape.len());
                assert_eq!((dl.dtype.code, dl.dtype.bits, dl.dtype.lanes), {
                    let (c, b) = dtype.dlpack_code_bits();
                    (c, b, 1)
                });
                if !shape.is_empty() {
                    assert!(
                        !dl.strides.is_null(),
                        "strides are never NULL when ndim > 0"
                    );
                }
                let size: usize = shape.iter().product();
                if size == 0 {
                    assert!(dl.data.is_null(), "NULL data for size 0");
                } else {
                    assert_eq!(
                        dl.data as usize,
                        a.unsafe_buffer_pointer().unwrap(),
                        "zero-copy"
                    );
                }
                assert!(!t.is_copied());
                let b = Array::from_dlpack(t).unwrap();
                assert_eq!(b.shape(), shape);
                assert_eq!(b.dtype(), dtype);
                if size > 0 {
                    assert_eq!(
                        b.unsafe_buffer_pointer().unwrap(),
                        a.unsafe_buffer_pointer().unwrap()
                    );
                }
                assert_eq!(to_scalars(&b), to_scalars(&a), "{dtype} {shape:?}");
            }
        }
    }
}

#[test]
fn versions_are_negotiated() {
    let a = sample(DType::F32, &[2, 2]);
    for (max, versioned) in [
        (None, false),
        (Some((0, 5)), false),
        (Some((0, 8)), false),
        (Some((1, 0)), true),
        (Some((100, 3)), true),
    ] {
        let t = a
            .to_dlpack_with(ExportOptions {
                max_version: max,
                ..Default::default()
            })
            .unwrap();
        assert_eq!(t.is_versioned(), versioned, "{max:?}");
        if versioned {
            assert_eq!(t.version(), Some(DLPackVersion { major: 1, minor: 3 }));
        }
    }
    let e = a
        .to_dlpack_with(ExportOptions {
            max_version: Some((0, 4)),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "dlarray does not support any version below (0, 5) but version ((0, 4)) was requested."
    );
    assert!(matches!(e, Error::Buffer(BufferError::VersionTooOld(0, 4))));
}

#[test]
fn exact_buffer_errors_of_dlpack_device() {
    let tpus = devices_of("tpu");
    let x = Array::arange(0.0, 8.0, 1.0, DType::F32).unwrap();
    // Sharded.
    let s = x
        .device_put(&Sharding::split(tpus.clone(), 0).unwrap())
        .unwrap();
    assert_eq!(
        s.dlpack_device().unwrap_err().to_string(),
        "__dlpack__ only supported for unsharded arrays."
    );
    let r = x
        .device_put(&Sharding::Replicated(tpus[..2].to_vec()))
        .unwrap();
    assert_eq!(r.dlpack_device(), Err(BufferError::Sharded));
    // TPU device memory vs pinned host.
    let t = x.to_device(&tpus[2]).unwrap();
    assert_eq!(
        t.dlpack_device().unwrap_err().to_string(),
        "__dlpack__ device only supported for TPU pinned host memory"
    );
    let p = t.with_memory_kind(MemoryKind::PinnedHost).unwrap();
    assert_eq!(
        p.dlpack_device(),
        Ok(DLDevice::new(DLDeviceType::kDLTPUHost, 2))
    );
    // A user's GPU backend whose runtime dlarray does not know.
    let acme = fake_device("acmegpu", "gpu", "acme-runtime 0.1", Some(0));
    let a = x.to_device(&acme).unwrap();
    assert_eq!(
        a.dlpack_device().unwrap_err().to_string(),
        "Unknown GPU platform for __dlpack__: acme-runtime 0.1"
    );
    // A CUDA backend without a hardware id.
    let noid = fake_device("noidgpu", "gpu", "cuda 12.8 (fake)", None);
    let a = x.to_device(&noid).unwrap();
    assert_eq!(
        a.dlpack_device().unwrap_err().to_string(),
        "Couldn't get local_hardware_id for __dlpack__"
    );
    // ... and with one: kDLCUDA with that id.
    let cuda = fake_device("fakecuda", "gpu", "cuda 12.8 (fake)", Some(5));
    let on_cuda = x.to_device(&cuda).unwrap();
    assert_eq!(
        on_cuda.dlpack_device(),
        Ok(DLDevice::new(DLDeviceType::kDLCUDA, 5))
    );
    // Its buffers are host memory: never exported under kDLCUDA (a consumer would hand a
    // host pointer to CUDA).
    let e = on_cuda.to_dlpack().unwrap_err();
    assert!(
        e.to_string()
            .contains("which cannot be exported as DLPack device (kDLCUDA, 5)"),
        "{e}"
    );
    // A platform with no DLPack support at all.
    let w = fake_device("fakewgpu", "wgpu", "wgpu 30 vulkan (fake)", Some(0));
    let a = x.to_device(&w).unwrap();
    assert_eq!(
        a.dlpack_device().unwrap_err().to_string(),
        "__dlpack__ device only supported for CPU, GPU and TPU pinned host, got platform: wgpu"
    );
    // CPU is always device id 0.
    assert_eq!(x.dlpack_device(), Ok(DLDevice::CPU));
}

#[test]
fn host_fallback_copies_and_keeps_the_reason() {
    let tpus = devices_of("tpu");
    let w = fake_device("fakewgpu", "wgpu", "wgpu 30 vulkan (fake)", Some(0));
    let x = Array::arange(0.0, 12.0, 1.0, DType::F32)
        .unwrap()
        .reshape(&[3, 4])
        .unwrap();
    let cases = [
        (x.to_device(&tpus[0]).unwrap(), BufferError::TpuDeviceMemory),
        (
            x.to_device(&w).unwrap(),
            BufferError::UnsupportedPlatform("wgpu".into()),
        ),
        (
            x.device_put(&Sharding::split(tpus.clone(), 0).unwrap())
                .unwrap(),
            BufferError::Sharded,
        ),
    ];
    for (a, reason) in cases {
        // Default (HostFallback): a host copy, flagged, with the reason kept.
        let t = a.to_dlpack_with(v1()).unwrap();
        assert!(t.is_copied());
        assert_eq!(t.fallback_reason(), Some(&reason));
        assert_eq!(t.dl_tensor().unwrap().device, DLDevice::CPU);
        let back = Array::from_dlpack(t).unwrap();
        assert_eq!(back.to_vec::<f32>().unwrap(), x.to_vec::<f32>().unwrap());
        // Legacy works too (no flags to carry, the reason is still on the tensor).
        let t = a.to_dlpack().unwrap();
        assert_eq!(t.fallback_reason(), Some(&reason));
        // Strict and copy=false return the exact error instead.
        let strict = ExportOptions {
            policy: Some(DlpackPolicy::Strict),
            ..v1()
        };
        assert_eq!(
            a.to_dlpack_with(strict).unwrap_err(),
            Error::Buffer(reason.clone())
        );
        let no_copy = ExportOptions {
            copy: Some(false),
            ..v1()
        };
        assert_eq!(
            a.to_dlpack_with(no_copy).unwrap_err(),
            Error::Buffer(reason.clone())
        );
    }
}

#[test]
fn dl_device_and_copy_keywords() {
    let tpus = devices_of("tpu");
    let x = Array::arange(0.0, 6.0, 1.0, DType::F64).unwrap();
    // Same device or (kDLCPU, 0) on host memory: zero-copy.
    let same = ExportOptions {
        dl_device: Some(DLDevice::CPU),
        ..v1()
    };
    let t = x.to_dlpack_with(same).unwrap();
    assert!(!t.is_copied());
    assert_eq!(
        t.dl_tensor().unwrap().data as usize,
        x.unsafe_buffer_pointer().unwrap()
    );
    let pinned = x
        .to_device(&tpus[1])
        .unwrap()
        .with_memory_kind(MemoryKind::PinnedHost)
        .unwrap();
    let t = pinned.to_dlpack_with(same).unwrap();
    assert!(!t.is_copied(), "pinned host memory is host memory");
    assert_eq!(t.dl_tensor().unwrap().device, DLDevice::CPU);
    assert_eq!(
        t.dl_tensor().unwrap().data as usize,
        pinned.unsafe_buffer_pointer().unwrap()
    );
    // TPU device memory to (kDLCPU, 0): JAX's explicit host copy (even under Strict).
    let hbm = x.to_device(&tpus[1]).unwrap();
    let strict_cpu = ExportOptions {
        policy: Some(DlpackPolicy::Strict),
        ..same
    };
    let t = hbm.to_dlpack_with(strict_cpu).unwrap();
    assert!(t.is_copied());
    assert_eq!(t.fallback_reason(), None, "asked for, not a fallback");
    // ... but not with copy=false: JAX's ValueError text.
    let e = hbm
        .to_dlpack_with(ExportOptions {
            copy: Some(false),
            ..same
        })
        .unwrap_err();
    assert!(matches!(e, Error::CopyRequired(_)));
    assert_eq!(
        e.to_string(),
        "Specified device=(kDLCPU, 0) which requires a copy since the source device is [tpu:1], \
         however copy=False. Set copy=True or copy=None to perform the requested operation."
    );
    // CPU data to TPU pinned host of tpu:3: copied there.
    let to_tpu = ExportOptions {
        dl_device: Some(DLDevice::new(DLDeviceType::kDLTPUHost, 3)),
        ..v1()
    };
    let t = x.to_dlpack_with(to_tpu).unwrap();
    assert!(t.is_copied());
    let back = Array::from_dlpack(t).unwrap();
    assert_eq!(back.devices()[0].name(), "tpu:3");
    assert_eq!(back.memory_kind(), MemoryKind::PinnedHost);
    assert_eq!(back.to_vec::<f64>().unwrap(), x.to_vec::<f64>().unwrap());
    // A device type nobody knows.
    let e = x
        .to_dlpack_with(ExportOptions {
            dl_device: Some(DLDevice::new(DLDeviceType(99), 0)),
            ..v1()
        })
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "The device specification passed to to_dlpack contains an unsupported device type (DLDeviceType: 99)"
    );
    // A known type with no such device here.
    let e = x
        .to_dlpack_with(ExportOptions {
            dl_device: Some(DLDevice::new(DLDeviceType::kDLROCM, 0)),
            ..v1()
        })
        .unwrap_err();
    assert!(matches!(e, Error::Buffer(BufferError::Other(_))), "{e}");
    // copy=true: always a copy, flagged.
    let t = x
        .to_dlpack_with(ExportOptions {
            copy: Some(true),
            ..v1()
        })
        .unwrap();
    assert!(t.is_copied());
    assert_ne!(
        t.dl_tensor().unwrap().data as usize,
        x.unsafe_buffer_pointer().unwrap()
    );
    // Streams are for devices with streams only.
    assert!(
        x.to_dlpack_with(ExportOptions {
            stream: Some(1).into(),
            ..v1()
        })
        .is_err()
    );
}

#[test]
fn natural_strides_are_exported_including_negative_ones() {
    let x = Array::arange(0.0, 12.0, 1.0, DType::I32)
        .unwrap()
        .reshape(&[3, 4])
        .unwrap();
    let t = x.t().unwrap().to_dlpack().unwrap();
    assert_eq!(t.shape().unwrap(), vec![4, 3]);
    assert_eq!(t.strides().unwrap(), Some(vec![1, 4]));
    let r = x
        .slice(&[
            dlarray::Slice::reversed(),
            dlarray::Slice::with_step(0, 4, 2),
        ])
        .unwrap();
    let t = r.to_dlpack().unwrap();
    assert_eq!(t.strides().unwrap(), Some(vec![-4, 2]));
    let back = Array::from_dlpack(t).unwrap();
    assert_eq!(back.to_vec::<i32>().unwrap(), vec![8, 10, 4, 6, 0, 2]);
}

/// Shapes and strides of up to 4 axes live inside the exported holder, more in a heap block:
/// both sides of that edge, transposed so strides are not the row-major ones, through both
/// ABIs, read back by a consumer that copies (not our own fast path).
#[test]
fn many_axes_export_their_shapes_and_strides() {
    for ndim in 1..=7usize {
        let shape: Vec<usize> = (0..ndim).map(|k| 2 + k % 2).collect();
        let n: usize = shape.iter().product();
        let x = Array::arange(0.0, n as f64, 1.0, DType::I64)
            .unwrap()
            .reshape(&shape.iter().map(|&d| d as isize).collect::<Vec<_>>())
            .unwrap();
        let xt = x.t().unwrap();
        let want_shape: Vec<i64> = xt.shape().iter().map(|&d| d as i64).collect();
        let mut row_major = vec![1i64; ndim];
        for k in (0..ndim.saturating_sub(1)).rev() {
            row_major[k] = row_major[k + 1] * shape[k + 1] as i64;
        }
        let want_strides: Vec<i64> = row_major.iter().rev().copied().collect();
        for max_version in [None, Some((1, 3))] {
            let o = ExportOptions {
                max_version,
                ..Default::default()
            };
            let t = xt.to_dlpack_with(o).unwrap();
            assert_eq!(t.shape().unwrap(), want_shape, "ndim {ndim}");
            assert_eq!(
                t.strides().unwrap(),
                Some(want_strides.clone()),
                "ndim {ndim}"
            );
            // Through a copy of the struct, as a foreign consumer sees it.
            let dl = *t.dl_tensor().unwrap();
            // SAFETY: the tensor is live and describes `n` readable i64 elements.
            let shape = unsafe { std::slice::from_raw_parts(dl.shape, ndim) };
            assert_eq!(shape, want_shape.as_slice());
            let back = Array::from_dlpack(t).unwrap();
            assert_eq!(
                back.to_vec::<i64>().unwrap(),
                xt.to_vec::<i64>().unwrap(),
                "ndim {ndim}"
            );
        }
    }
}

#[test]
fn the_buffer_lives_until_the_deleter_runs() {
    let t = {
        let x = Array::arange(0.0, 1000.0, 1.0, DType::F32).unwrap();
        x.to_dlpack().unwrap()
    }; // x dropped: the tensor keeps the buffer alive
    let dl = *t.dl_tensor().unwrap();
    // SAFETY: the exported tensor is live, so its 1000 floats are readable.
    let v = unsafe { std::slice::from_raw_parts(dl.data as *const f32, 1000) };
    assert_eq!(v[999], 999.0);
    // Ownership handed to a "consumer" that calls the deleter itself.
    let RawDLPack::Legacy(p) = t.into_raw() else {
        panic!("legacy")
    };
    // SAFETY: we own it now; the deleter is ours and is called once.
    unsafe { ((*p).deleter.unwrap())(p) };
}

use dlarray::RawDLPack;

#[cfg(feature = "ndarray")]
#[test]
fn ndarray_interop_is_zero_copy() {
    let a = ndarray::Array2::from_shape_fn((3, 4), |(i, j)| (i * 4 + j) as f32).into_dyn();
    let ptr = a.as_ptr() as usize;
    let x = Array::from_ndarray(a).unwrap();
    assert_eq!(
        x.unsafe_buffer_pointer().unwrap(),
        ptr,
        "from_ndarray takes the allocation"
    );
    let v = x.as_ndarray_view::<f32>().unwrap();
    assert_eq!(v.as_ptr() as usize, ptr, "as_ndarray_view borrows it");
    assert_eq!(v[[2, 3]], 11.0);
    // Strided and reversed views survive both ways.
    let r = x.slice(&[dlarray::Slice::reversed()]).unwrap().t().unwrap();
    let rv = r.as_ndarray_view::<f32>().unwrap();
    assert_eq!(rv.shape(), &[4, 3]);
    assert_eq!(rv[[0, 0]], 8.0);
    assert_eq!(
        rv.iter().copied().collect::<Vec<_>>(),
        r.to_vec::<f32>().unwrap()
    );
    let mut nd = ndarray::Array2::from_shape_fn((4, 5), |(i, j)| (i * 5 + j) as i64);
    nd.invert_axis(ndarray::Axis(1));
    let y = Array::from_ndarray(nd.clone().into_dyn()).unwrap();
    assert_eq!(
        y.to_vec::<i64>().unwrap(),
        nd.iter().copied().collect::<Vec<_>>()
    );
    assert_eq!(y.to_ndarray::<i64>().unwrap(), nd.into_dyn());
    // Sharded arrays cannot be borrowed, only gathered.
    let s = x
        .device_put(&Sharding::split(devices_of("tpu"), 0).unwrap())
        .unwrap();
    assert!(s.as_ndarray_view::<f32>().is_err());
    assert_eq!(s.to_ndarray::<f32>().unwrap().shape(), &[3, 4]);
}

#[test]
fn our_own_tensors_come_back_as_the_same_array() {
    let x = Array::arange(0.0, 6.0, 1.0, DType::F32)
        .unwrap()
        .reshape(&[2, 3])
        .unwrap()
        .t()
        .unwrap();
    for o in [ExportOptions::default(), v1()] {
        let back = Array::from_dlpack(x.to_dlpack_with(o).unwrap()).unwrap();
        assert_eq!(back.shape(), x.shape());
        assert_eq!(
            back.unsafe_buffer_pointer().unwrap(),
            x.unsafe_buffer_pointer().unwrap()
        );
        assert_eq!(back.to_vec::<f32>().unwrap(), x.to_vec::<f32>().unwrap());
        // Through the raw pointer, as a consumer would hand it back.
        let raw = x.to_dlpack_with(o).unwrap().into_raw();
        // SAFETY: a live tensor we own (just exported).
        let again = unsafe { Array::from_dlpack_raw(raw) }.unwrap();
        assert_eq!(again.to_vec::<f32>().unwrap(), x.to_vec::<f32>().unwrap());
    }
    // Pinned TPU memory exported as (kDLCPU, 0) comes back as what the tensor says: host
    // memory, held by the CPU device.
    let tpu = dlarray::get_device("tpu:2").unwrap();
    let p = x
        .to_device(&tpu)
        .unwrap()
        .with_memory_kind(MemoryKind::PinnedHost)
        .unwrap();
    let t = p
        .to_dlpack_with(ExportOptions {
            dl_device: Some(DLDevice::CPU),
            ..v1()
        })
        .unwrap();
    let back = Array::from_dlpack(t).unwrap();
    assert_eq!(back.devices()[0].platform(), "cpu");
    assert_eq!(
        back.unsafe_buffer_pointer().unwrap(),
        p.unsafe_buffer_pointer().unwrap()
    );
    // Copies come back through the general (wrapping) path.
    let c = Array::from_dlpack(
        x.to_dlpack_with(ExportOptions {
            copy: Some(true),
            ..v1()
        })
        .unwrap(),
    )
    .unwrap();
    assert_ne!(
        c.unsafe_buffer_pointer().unwrap(),
        x.unsafe_buffer_pointer().unwrap()
    );
    assert_eq!(c.to_vec::<f32>().unwrap(), x.to_vec::<f32>().unwrap());
}

/// Exported tensors released on another thread (their holders' blocks land in that thread's
/// cache), and exported on a thread that exits before they come back: every tensor still
/// reads its data, and each is released once.
#[test]
fn tensors_exported_on_one_thread_are_released_on_another() {
    let a = Array::from_vec((0..64).map(|i| i as f32).collect(), &[64]).unwrap();
    let tensors: Vec<_> = (0..100).map(|_| a.to_dlpack().unwrap()).collect();
    std::thread::spawn(move || drop(tensors)).join().unwrap();
    let b = a.clone();
    let made_elsewhere =
        std::thread::spawn(move || (0..100).map(|_| b.to_dlpack().unwrap()).collect::<Vec<_>>())
            .join()
            .unwrap();
    for t in made_elsewhere {
        let x = Array::from_dlpack(t).unwrap();
        assert_eq!(x.to_vec::<f32>().unwrap()[5], 5.0);
    }
    // The source array is intact.
    assert_eq!(a.to_vec::<f32>().unwrap()[63], 63.0);
}
