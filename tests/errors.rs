//! Every user-caused failure is an `Error` value: no panic, no abort.

use dlarray::{Array, DType, Error, Slice};

#[test]
fn shape_mismatches() {
    let a = Array::zeros(&[2, 3], DType::F32).unwrap();
    let b = Array::zeros(&[4], DType::F32).unwrap();
    let e = (&a + &b).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { op: "add", .. }), "{e}");
    assert_eq!(e.to_string(), "add: shape mismatch: [2, 3] vs [4]");
    assert!(matches!(
        a.matmul(&a),
        Err(Error::ShapeMismatch { op: "matmul", .. })
    ));
    assert!(matches!(
        Array::from_vec(vec![1.0f32; 5], &[2, 3]),
        Err(Error::ShapeMismatch { .. })
    ));
    assert!(matches!(
        a.reshape(&[4, 2]),
        Err(Error::ShapeMismatch { op: "reshape", .. })
    ));
    assert!(a.reshape(&[-1, -1]).is_err());
    assert!(a.broadcast_to(&[3, 3]).is_err());
    assert!(a.permute(&[0, 0]).is_err());
    assert!(
        a.slice(&[Slice::full(), Slice::full(), Slice::full()])
            .is_err()
    );
    assert!(a.slice(&[Slice::with_step(0, 2, 0)]).is_err(), "zero step");
}

#[test]
fn dtype_mismatches() {
    let a = Array::zeros(&[2], DType::F32).unwrap();
    let e = a.to_vec::<f64>().unwrap_err();
    assert_eq!(
        e,
        Error::ElementType {
            array: DType::F32,
            requested: DType::F64
        }
    );
    assert!(matches!(a.logical_not(), Err(Error::DTypeMismatch { .. })));
    assert!(a.item::<f32>().is_err(), "item of two elements");
}

#[test]
fn unsupported_ops_name_backend_op_and_dtype() {
    let c = Array::zeros(&[2], DType::Complex64).unwrap();
    let e = c.maximum(&c).unwrap_err();
    assert_eq!(
        e,
        Error::Unsupported {
            backend: "cpu".into(),
            op: "maximum".into(),
            dtype: DType::Complex64
        }
    );
    assert_eq!(
        e.to_string(),
        "backend `cpu` does not support `maximum` on complex64"
    );
    assert!(matches!(c.less(&c), Err(Error::Unsupported { .. })));
    let b = Array::zeros(&[2], DType::Bool).unwrap();
    assert!(matches!(-&b, Err(Error::Unsupported { .. })));
    assert!(matches!(&b - &b, Err(Error::Unsupported { .. })));
}

#[test]
fn allocation_failure_is_out_of_memory() {
    let e = Array::zeros(&[1 << 40], DType::U8).unwrap_err();
    assert!(matches!(e, Error::OutOfMemory { .. }), "{e}");
    let e = Array::zeros(&[1 << 30, 1 << 30], DType::F64).unwrap_err();
    assert!(
        matches!(e, Error::OutOfMemory { .. } | Error::InvalidArgument(_)),
        "{e}"
    );
    let e = Array::zeros(&[usize::MAX, 2], DType::U8).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    // The runtime is still usable afterwards.
    assert_eq!(
        Array::ones(&[2], DType::U8)
            .unwrap()
            .to_vec::<u8>()
            .unwrap(),
        vec![1, 1]
    );
}

#[test]
fn unknown_devices_and_indices() {
    assert!(matches!(
        dlarray::get_device("cuda:7"),
        Err(Error::UnknownDevice(m)) if m.starts_with("unknown device `cuda:7`")
    ));
    assert!(matches!(
        dlarray::get_device("cpu:99"),
        Err(Error::UnknownDevice(_))
    ));
    let a = Array::zeros(&[2, 3], DType::I32).unwrap();
    assert!(matches!(
        a.index_axis(1, 3),
        Err(Error::IndexOutOfRange {
            what: "index",
            index: 3,
            size: 3
        })
    ));
    assert!(matches!(
        a.index_axis(2, 0),
        Err(Error::IndexOutOfRange { what: "axis", .. })
    ));
    assert!(matches!(
        a.sum(-3),
        Err(Error::IndexOutOfRange {
            what: "axis",
            index: -3,
            size: 2
        })
    ));
    assert!(Array::arange(0.0, 1.0, 0.0, DType::F32).is_err());
    assert!(Array::arange(0.0, f64::INFINITY, 1.0, DType::F32).is_err());
}

/// The sizes of issue "checked shapes everywhere", tried as a new user would: each is a clear
/// error (these wrapped, aborted or crashed with SIGSEGV before).
#[test]
fn sizes_that_overflow_are_errors() {
    let one = |shape: &[usize]| Array::ones(shape, DType::F32).unwrap();
    // [2^32, 1] @ [1, 2^32]: an output of 2^64 elements.
    let a = one(&[1, 1]).broadcast_to(&[1 << 32, 1]).unwrap();
    let b = one(&[1, 1]).broadcast_to(&[1, 1 << 32]).unwrap();
    let e = a.matmul(&b).unwrap_err();
    assert!(e.to_string().contains("more than an array can hold"), "{e}");
    // A broadcast whose size wraps to 0.
    let e = Array::scalar(1f32)
        .unwrap()
        .broadcast_to(&[1 << 62, 4])
        .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    assert!(one(&[1]).broadcast_to(&[1 << 32, 1 << 32]).is_err());
    // Operand broadcasting: [2^32, 1] + [1, 2^32].
    assert!((&a + &b).is_err());
    // Creation.
    assert!(Array::zeros(&[1 << 32, 1 << 32], DType::F32).is_err());
    assert!(matches!(
        Array::zeros(&[1 << 62], DType::F32),
        Err(Error::OutOfMemory { .. })
    ));
    assert!(Array::zeros(&[0, 1 << 62, 1 << 62], DType::F32).is_err());
    // Reshape targets.
    let v = one(&[4]);
    assert!(v.reshape(&[1 << 62, 1 << 62, 0]).is_err());
    assert!(v.reshape(&[-1, isize::MAX]).is_err());
    // Copies of an array: tile's products and repeat's sum of counts (each aborted or, in a
    // debug build, panicked on overflow before).
    let m = one(&[2, 3]);
    assert!(m.tile(&[1 << 62, 4]).is_err());
    assert!(m.tile(&[usize::MAX, 2]).is_err());
    let e = m.repeat_each(&[usize::MAX, 1], Some(0)).unwrap_err();
    assert!(e.to_string().contains("sum overflows"), "{e}");
    assert!(m.repeat_each(&[1 << 62, 4], Some(0)).is_err());
    assert!(matches!(
        m.repeat_each(&[1 << 40, 1], Some(0)),
        Err(Error::OutOfMemory { .. })
    ));
}

#[test]
fn repeat_each_counts_elements_along_an_axis() {
    let a = Array::from_vec(vec![1i32, 2, 3, 4, 5, 6], &[2, 3]).unwrap();
    let r = a.repeat_each(&[2, 0, 1], Some(1)).unwrap();
    assert_eq!(r.shape(), &[2, 3]);
    assert_eq!(r.to_vec::<i32>().unwrap(), [1, 1, 3, 4, 4, 6]);
    let r = a.repeat_each(&[0, 2], Some(-2)).unwrap();
    assert_eq!(r.to_vec::<i32>().unwrap(), [4, 5, 6, 4, 5, 6]);
    // None: the flattened array; one count: every element.
    let r = a.repeat_each(&[1, 0, 0, 0, 0, 2], None).unwrap();
    assert_eq!(r.to_vec::<i32>().unwrap(), [1, 6, 6]);
    assert_eq!(
        a.repeat_each(&[2], Some(0))
            .unwrap()
            .to_vec::<i32>()
            .unwrap(),
        [1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6]
    );
    let e = a.repeat_each(&[1, 2], Some(1)).unwrap_err();
    assert!(
        e.to_string().contains("2 counts for an axis of length 3"),
        "{e}"
    );
    assert!(a.repeat_each(&[1], Some(2)).is_err());
}

#[test]
fn huge_valid_views_fail_to_read_with_out_of_memory() {
    // A stride-0 view of 2^60 f32: a valid array, but no host can hold it.
    let big = Array::scalar(1f32)
        .unwrap()
        .broadcast_to(&[1 << 60])
        .unwrap();
    assert_eq!(big.size(), 1 << 60);
    assert!(matches!(
        big.to_vec::<f32>(),
        Err(Error::OutOfMemory { .. })
    ));
    for d in dlarray::devices().unwrap() {
        if d.name() == "cpu:0" {
            continue;
        }
        let e = big.to_device(&d).unwrap_err();
        assert!(matches!(e, Error::OutOfMemory { .. }), "{d}: {e}");
    }
    // DLPack describes it in place (stride 0), as NumPy would; a copy is refused.
    assert_eq!(big.to_dlpack().unwrap().shape().unwrap(), vec![1i64 << 60]);
    let copy = dlarray::ExportOptions {
        copy: Some(true),
        ..Default::default()
    };
    let e = big.to_dlpack_with(copy).unwrap_err();
    assert!(matches!(e, Error::OutOfMemory { .. }), "{e}");
    // And arange of 10^10 f32 (40 GB) is refused before anything is built.
    let e = Array::arange(0.0, 1e10, 1.0, DType::F32).unwrap_err();
    assert!(matches!(e, Error::OutOfMemory { .. }), "{e}");
}

#[test]
fn extreme_slices_and_meshes() {
    let a = Array::arange(0.0, 10.0, 1.0, DType::I32).unwrap();
    let s = a
        .slice(&[Slice::new(Some(0), Some(10), isize::MAX)])
        .unwrap();
    assert_eq!(s.to_vec::<i32>().unwrap(), vec![0]);
    let s = a.slice(&[Slice::new(None, None, isize::MIN)]).unwrap();
    assert_eq!(s.to_vec::<i32>().unwrap(), vec![9]);
    let s = a
        .slice(&[Slice::new(Some(isize::MIN), Some(isize::MAX), 3)])
        .unwrap();
    assert_eq!(s.to_vec::<i32>().unwrap(), vec![0, 3, 6, 9]);
    assert!(a.index_axis(isize::MIN, 0).is_err());
    let devs = dlarray::devices().unwrap();
    let e = dlarray::Mesh::new(devs, &[1 << 32, 1 << 32, 2], &["a", "b", "c"]).unwrap_err();
    assert!(e.to_string().contains("more than an array can hold"), "{e}");
}

#[test]
fn errors_say_what_to_do() {
    let e = dlarray::get_device("cuda:0").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("unknown device `cuda:0`; the devices here are cpu:0"),
        "{e}"
    );
    let e = dlarray::get_device("tpu:99").unwrap_err();
    assert!(e.to_string().contains("tpu:3"), "{e}");
    let a = Array::zeros(&[2, 3], DType::F32).unwrap();
    let e = a.sum(5).unwrap_err();
    assert_eq!(
        e.to_string(),
        "axis 5 is out of bounds for array of dimension 2"
    );
}

#[test]
fn a_matmul_mismatch_names_the_inner_sizes() {
    let a = Array::zeros(&[2, 3], DType::F32).unwrap();
    let b = Array::zeros(&[4, 5], DType::F32).unwrap();
    assert_eq!(
        a.matmul(&b).unwrap_err().to_string(),
        "matmul: shape mismatch: [2, 3] vs [4, 5]: the inner sizes differ (3 columns on the \
         left, 4 rows on the right)"
    );
}

#[test]
fn reshape_infers_one_axis_and_refuses_the_rest() {
    let a = Array::arange(0.0, 6.0, 1.0, DType::F32).unwrap();
    let v = a.reshape(&[2, -1]).unwrap();
    assert_eq!(v.shape(), &[2, 3]);
    assert_eq!(
        v.unsafe_buffer_pointer().unwrap(),
        a.unsafe_buffer_pointer().unwrap(),
        "a view of the same memory"
    );
    assert_eq!(a.reshape(&[-1, 1, 2]).unwrap().shape(), &[3, 1, 2]);
    assert_eq!(
        a.reshape(&[4, -1]).unwrap_err(),
        Error::ShapeMismatch {
            op: "reshape",
            lhs: vec![6],
            rhs: vec![4, 0],
        }
    );
    for bad in [&[-2, 3][..], &[-1, -1], &[2, -3]] {
        let e = a.reshape(bad).unwrap_err().to_string();
        assert!(e.contains("invalid reshape target"), "{bad:?}: {e}");
    }
    // Six axes (beyond the inline lists) and back.
    let six = a.reshape(&[1, 1, 2, 1, 3, 1]).unwrap();
    assert_eq!(six.shape(), &[1, 1, 2, 1, 3, 1]);
    assert_eq!(
        six.reshape(&[-1]).unwrap().to_vec::<f32>().unwrap(),
        [0., 1., 2., 3., 4., 5.]
    );
    // A transposed array is copied, not viewed, and keeps the transposed order.
    let t = a.reshape(&[2, 3]).unwrap().t().unwrap();
    assert_eq!(
        t.reshape(&[-1]).unwrap().to_vec::<f32>().unwrap(),
        [0., 3., 1., 4., 2., 5.]
    );
}

#[test]
fn views_of_one_shard_keep_values_and_refuse_bad_axes() {
    let a = Array::arange(0.0, 24.0, 1.0, DType::I32)
        .unwrap()
        .reshape(&[2, 3, 4])
        .unwrap();
    let t = a.t().unwrap();
    assert_eq!(t.shape(), &[4, 3, 2]);
    assert_eq!(
        t.unsafe_buffer_pointer().unwrap(),
        a.unsafe_buffer_pointer().unwrap()
    );
    let p = a.permute(&[1, 2, 0]).unwrap();
    assert_eq!(p.shape(), &[3, 4, 2]);
    // p[i, j, k] = a[k, i, j]
    let pv = p.to_vec::<i32>().unwrap();
    assert_eq!(&pv[..4], &[0, 12, 1, 13]);
    for bad in [&[0, 1][..], &[0, 1, 3], &[0, 0, 1], &[2, 1, 0, 3]] {
        let e = a.permute(bad).unwrap_err().to_string();
        assert!(e.contains("is not a permutation of 3 axes"), "{bad:?}: {e}");
    }
    // 0-d and 1-d transposes are the array itself; six axes go past the inline lists.
    let s = Array::full(&[], 7, DType::I32).unwrap();
    assert_eq!(s.t().unwrap().item::<i32>().unwrap(), 7);
    let six = a.reshape(&[1, 2, 1, 3, 4, 1]).unwrap();
    assert_eq!(six.t().unwrap().shape(), &[1, 4, 3, 1, 2, 1]);
    assert_eq!(six.squeeze(None).unwrap().shape(), &[2, 3, 4]);
    assert_eq!(six.squeeze(Some(&[0, -1])).unwrap().shape(), &[2, 1, 3, 4]);
    assert!(six.squeeze(Some(&[1])).is_err(), "axis 1 has size 2");
    assert!(six.squeeze(Some(&[6])).is_err(), "no axis 6");
    assert_eq!(a.expand_dims(0).unwrap().shape(), &[1, 2, 3, 4]);
    assert_eq!(a.expand_dims(2).unwrap().shape(), &[2, 3, 1, 4]);
    assert_eq!(a.expand_dims(-1).unwrap().shape(), &[2, 3, 4, 1]);
    assert!(a.expand_dims(5).is_err());
    assert_eq!(
        a.expand_dims(1).unwrap().to_vec::<i32>().unwrap(),
        a.to_vec::<i32>().unwrap()
    );
}
