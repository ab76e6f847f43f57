//! Printed arrays, as NumPy prints them (values in their dtype's form, aligned columns,
//! summaries beyond 1,000 elements), wrapped as `jax.Array`'s repr is: snapshots per dtype,
//! rank 0-4, summarised, sharded and on every backend.

use dlarray::{Array, DType, Sharding};
use half::{bf16, f16};
use num_complex::{Complex32, Complex64};

fn cpu() -> dlarray::Device {
    dlarray::get_device("cpu:0").unwrap()
}

#[test]
fn every_dtype_in_its_own_form() {
    let v = |a: Array| format!("{a:#}");
    assert_eq!(
        v(Array::from_vec(vec![true, false, true], &[3]).unwrap()),
        "[ true false  true]"
    );
    assert_eq!(
        v(Array::from_vec(vec![-1i8, 2, 127], &[3]).unwrap()),
        "[ -1   2 127]"
    );
    assert_eq!(
        v(Array::from_vec(vec![1u64 << 40, 7], &[2]).unwrap()),
        "[1099511627776             7]"
    );
    assert_eq!(
        v(Array::from_vec(vec![1i16, -2, 3, -4], &[2, 2]).unwrap()),
        "[[ 1 -2]\n [ 3 -4]]"
    );
    assert_eq!(
        v(Array::from_vec(vec![1.0f32, 2.5, -3.25], &[3]).unwrap()),
        "[ 1.    2.5  -3.25]"
    );
    assert_eq!(
        v(Array::from_vec(vec![1.0f64, 2.0, 3.0], &[3]).unwrap()),
        "[1. 2. 3.]"
    );
    assert_eq!(
        v(Array::from_vec(vec![f16::from_f32(0.5), f16::from_f32(2.0)], &[2]).unwrap()),
        "[0.5 2. ]"
    );
    assert_eq!(
        v(Array::from_vec(vec![bf16::from_f32(1.0), bf16::from_f32(-8.0)], &[2]).unwrap()),
        "[ 1. -8.]"
    );
    assert_eq!(
        v(Array::from_vec(vec![0.1f64, 0.25], &[2]).unwrap()),
        "[0.1  0.25]"
    );
    assert_eq!(
        v(Array::from_vec(vec![f64::NAN, f64::INFINITY, -1.0], &[3]).unwrap()),
        "[nan inf -1.]"
    );
    assert_eq!(
        v(Array::from_vec(vec![1e-5f64, 1.5], &[2]).unwrap()),
        "[1.0e-05 1.5e+00]"
    );
    assert_eq!(
        v(Array::from_vec(vec![1e10f64, 1.0], &[2]).unwrap()),
        "[1.e+10 1.e+00]"
    );
    assert_eq!(
        v(Array::from_vec(
            vec![Complex32::new(1.0, 2.0), Complex32::new(3.0, -4.0)],
            &[2]
        )
        .unwrap()),
        "[1.+2.j 3.-4.j]"
    );
    assert_eq!(
        v(Array::from_vec(vec![1.0f64, 2.123456], &[2]).unwrap()),
        "[1.       2.123456]"
    );
    assert_eq!(
        v(Array::arange(0.0, 2000.0, 1.0, DType::F64).unwrap()),
        "[0.000e+00 1.000e+00 2.000e+00 ... 1.997e+03 1.998e+03 1.999e+03]"
    );
    assert_eq!(
        v(Array::from_vec(vec![Complex64::new(0.5, 0.0)], &[1]).unwrap()),
        "[0.5+0.j]"
    );
}

#[test]
fn ranks_zero_to_four() {
    assert_eq!(format!("{:#}", Array::scalar(7i32).unwrap()), "7");
    assert_eq!(
        format!("{}", Array::scalar(2.5f32).unwrap()),
        "Array(2.5, dtype=float32, device=cpu:0)"
    );
    let a = Array::arange(0.0, 6.0, 1.0, DType::F32)
        .unwrap()
        .reshape(&[2, 3])
        .unwrap();
    assert_eq!(
        format!("{a}"),
        "Array([[0., 1., 2.],\n       [3., 4., 5.]], dtype=float32, device=cpu:0)"
    );
    let b = Array::arange(0.0, 8.0, 1.0, DType::I32)
        .unwrap()
        .reshape(&[2, 2, 2])
        .unwrap();
    assert_eq!(format!("{b:#}"), "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]");
    let c = Array::arange(0.0, 16.0, 1.0, DType::U8)
        .unwrap()
        .reshape(&[2, 2, 2, 2])
        .unwrap();
    assert_eq!(
        format!("{c:#}"),
        "[[[[ 0  1]\n   [ 2  3]]\n\n  [[ 4  5]\n   [ 6  7]]]\n\n\n [[[ 8  9]\n   [10 11]]\n\n  [[12 13]\n   [14 15]]]]"
    );
    // Views print their own elements.
    assert_eq!(
        format!("{:#}", a.t().unwrap()),
        "[[0. 3.]\n [1. 4.]\n [2. 5.]]"
    );
    assert_eq!(
        format!("{}", Array::zeros(&[0, 3], DType::F32).unwrap()),
        "Array([], shape=(0, 3), dtype=float32, device=cpu:0)"
    );
    assert_eq!(
        format!("{:#}", Array::zeros(&[0], DType::I64).unwrap()),
        "[]"
    );
}

#[test]
fn precision_from_the_formatter() {
    let a = Array::from_vec(vec![1.0f64, 2.123456], &[2]).unwrap();
    assert_eq!(format!("{a:#.3}"), "[1.000 2.123]");
    assert_eq!(
        format!("{a:.1}"),
        "Array([1.0, 2.1], dtype=float64, device=cpu:0)"
    );
    // Integers ignore it.
    assert_eq!(
        format!("{:#.3}", Array::from_vec(vec![5i32], &[1]).unwrap()),
        "[5]"
    );
}

#[test]
fn summaries_beyond_a_thousand_elements() {
    let a = Array::arange(0.0, 10000.0, 1.0, DType::I64)
        .unwrap()
        .reshape(&[100, 100])
        .unwrap();
    assert_eq!(
        format!("{a:#}"),
        "[[   0    1    2 ...   97   98   99]\n [ 100  101  102 ...  197  198  199]\n [ 200  201  202 ...  297  298  299]\n ...\n [9700 9701 9702 ... 9797 9798 9799]\n [9800 9801 9802 ... 9897 9898 9899]\n [9900 9901 9902 ... 9997 9998 9999]]"
    );
    let v = Array::arange(0.0, 1001.0, 1.0, DType::I32).unwrap();
    assert_eq!(format!("{v:#}"), "[   0    1    2 ...  998  999 1000]");
    // Exactly the threshold: everything.
    let w = Array::zeros(&[1000], DType::U8).unwrap();
    assert_eq!(format!("{w:#}").matches('0').count(), 1000);
    // A huge broadcast view prints without reading (or allocating) its 2^40 elements.
    let big = Array::scalar(1u8)
        .unwrap()
        .broadcast_to(&[1 << 20, 1 << 20])
        .unwrap();
    let s = format!("{big:#}");
    assert!(
        s.starts_with("[[1 1 1 ... 1 1 1]\n [1 1 1 ... 1 1 1]"),
        "{s}"
    );
}

/// Long rows wrap at NumPy's 75 columns, at the row's hanging indent, in `str` and `repr`.
#[test]
fn long_rows_wrap_as_numpy() {
    let x = Array::arange(0.0, 30.0, 1.0, DType::F64)
        .unwrap()
        .binary_scalar(dlarray::BinaryOp::Mul, dlarray::Scalar::Float(1.25), false)
        .unwrap();
    assert_eq!(
        format!("{x:#}"),
        "[ 0.    1.25  2.5   3.75  5.    6.25  7.5   8.75 10.   11.25 12.5  13.75\n \
         15.   16.25 17.5  18.75 20.   21.25 22.5  23.75 25.   26.25 27.5  28.75\n \
         30.   31.25 32.5  33.75 35.   36.25]"
    );
    assert_eq!(
        format!("{x}"),
        "Array([ 0.  ,  1.25,  2.5 ,  3.75,  5.  ,  6.25,  7.5 ,  8.75, 10.  ,\n       \
         11.25, 12.5 , 13.75, 15.  , 16.25, 17.5 , 18.75, 20.  , 21.25,\n       \
         22.5 , 23.75, 25.  , 26.25, 27.5 , 28.75, 30.  , 31.25, 32.5 ,\n       \
         33.75, 35.  , 36.25], dtype=float64, device=cpu:0)"
    );
}

#[test]
fn sharded_and_other_devices() {
    let tpus: Vec<_> = dlarray::devices()
        .unwrap()
        .into_iter()
        .filter(|d| d.platform() == "tpu")
        .collect();
    let x = Array::arange(0.0, 8.0, 1.0, DType::F32).unwrap();
    let s = x
        .device_put(&Sharding::split(tpus.clone(), 0).unwrap())
        .unwrap();
    assert_eq!(
        format!("{s}"),
        // What follows the rows passes 75 columns: on its own line, as NumPy's `array_repr`.
        "Array([0., 1., 2., 3., 4., 5., 6., 7.],\n      dtype=float32, sharding=NamedSharding(mesh={x: 4}, spec=('x',), devices=[tpu:0, tpu:1, tpu:2, tpu:3]))"
    );
    let p = x
        .to_device(&tpus[1])
        .unwrap()
        .with_memory_kind(dlarray::MemoryKind::PinnedHost)
        .unwrap();
    assert!(format!("{p}").ends_with("dtype=float32, device=tpu:1, memory_kind=pinned_host)"));
    // Every device prints the same values (wgpu reads only the shown corners).
    let big = Array::arange(0.0, 5000.0, 1.0, DType::F32)
        .unwrap()
        .reshape(&[50, 100])
        .unwrap();
    let want = format!("{big:#}");
    for d in dlarray::devices().unwrap() {
        if d == cpu() {
            continue;
        }
        assert_eq!(format!("{:#}", big.to_device(&d).unwrap()), want, "{d}");
    }
}

#[test]
fn views_too_large_to_print_whole_are_cut_or_refused() {
    // 6^20 elements: no axis is longer than 6, so three edge items would show them all.
    let a = Array::scalar(1u8).unwrap().broadcast_to(&[6; 20]).unwrap();
    let s = format!("{a:#}");
    assert!(
        s.starts_with("[[[[[[[[[[[[[[[[[[[[1 ... 1]"),
        "{}",
        &s[..60]
    );
    // 2^62 elements in 62 axes of 2: cannot be summarised at all, an error (not an abort).
    let b = Array::scalar(1u8).unwrap().broadcast_to(&[2; 62]).unwrap();
    let e = b.format_with(&Default::default()).unwrap_err();
    assert!(e.to_string().contains("too many elements to print"), "{e}");
    assert!(format!("{b}").contains("unreadable"));
}
