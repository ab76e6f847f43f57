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
    assert_eq!(
        dlarray::get_device("cuda:7").unwrap_err(),
        Error::UnknownDevice("cuda:7".into())
    );
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
