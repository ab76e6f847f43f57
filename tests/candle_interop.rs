//! candle interop: round trips of every shared dtype over the JAX test shapes, strided views,
//! zero-copy proven by addresses and by a write seen across, lifetimes, and every dtype and
//! device candle or dlarray lacks giving its error.
#![cfg(feature = "candle")]

mod common;

use candle_core::{DType as CDType, Device as CDevice, Storage, Tensor, Var};
use common::JAX_SHAPES;
use dlarray::{Array, DType, Error};

const SHARED: [(DType, CDType); 9] = [
    (DType::U8, CDType::U8),
    (DType::U32, CDType::U32),
    (DType::I16, CDType::I16),
    (DType::I32, CDType::I32),
    (DType::I64, CDType::I64),
    (DType::BF16, CDType::BF16),
    (DType::F16, CDType::F16),
    (DType::F32, CDType::F32),
    (DType::F64, CDType::F64),
];

/// A tensor of `shape` holding 1, 2, 3, ... (mod 7), converted to `dtype`.
fn tensor(shape: &[usize], dtype: CDType) -> Tensor {
    let n: usize = shape.iter().product();
    let v: Vec<f64> = (0..n).map(|i| (i % 7) as f64 + 1.0).collect();
    Tensor::from_vec(v, shape, &CDevice::Cpu)
        .unwrap()
        .to_dtype(dtype)
        .unwrap()
}

/// The tensor's elements, row-major, as f64.
fn tensor_values(t: &Tensor) -> Vec<f64> {
    t.to_dtype(CDType::F64)
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1::<f64>()
        .unwrap()
}

fn array_values(a: &Array) -> Vec<f64> {
    a.astype(DType::F64).unwrap().to_vec::<f64>().unwrap()
}

/// Address of a CPU tensor's element [0, .., 0].
fn tensor_ptr(t: &Tensor) -> usize {
    let (s, l) = t.storage_and_layout();
    let Storage::Cpu(cpu) = &*s else {
        panic!("not a CPU tensor")
    };
    let item = t.dtype().size_in_bytes();
    let base = match cpu {
        candle_core::CpuStorage::F32(v) => v.as_ptr() as usize,
        candle_core::CpuStorage::U8(v) => v.as_ptr() as usize,
        candle_core::CpuStorage::I64(v) => v.as_ptr() as usize,
        _ => panic!("tensor_ptr: add the dtype"),
    };
    base + l.start_offset() * item
}

#[test]
fn every_shared_dtype_and_shape_round_trips() {
    for (ours, theirs) in SHARED {
        for shape in JAX_SHAPES {
            let t = tensor(shape, theirs);
            let a = Array::from_candle(&t).unwrap();
            assert_eq!(a.dtype(), ours);
            assert_eq!(a.shape(), shape, "{ours} {shape:?}");
            assert_eq!(array_values(&a), tensor_values(&t), "{ours} {shape:?}");
            assert!(a.is_read_only());
            // Back: the tensor it came from, whole.
            let back = a.clone().into_candle().unwrap();
            assert_eq!(back.dtype(), theirs);
            assert_eq!(back.dims(), shape);
            assert_eq!(tensor_values(&back), tensor_values(&t));
            // A copy, from an array built on our side.
            let copy = Array::from_candle(&t).unwrap().to_candle().unwrap();
            assert_eq!(tensor_values(&copy), tensor_values(&t), "{ours} {shape:?}");
        }
    }
}

#[test]
fn from_candle_shares_memory_with_any_view() {
    let t = tensor(&[3, 4], CDType::F32);
    let views = [
        t.clone(),
        t.t().unwrap(),                                 // transposed: strides [1, 4]
        t.narrow(1, 1, 2).unwrap(),                     // start offset 1
        t.narrow(0, 1, 2).unwrap().t().unwrap(),        // offset 4, transposed
        t.narrow(1, 2, 1).unwrap().squeeze(1).unwrap(), // a column: stride 4
    ];
    for v in &views {
        let a = Array::from_candle(v).unwrap();
        assert_eq!(a.shape(), v.dims());
        assert_eq!(a.unsafe_buffer_pointer().unwrap(), tensor_ptr(v), "{v:?}");
        assert_eq!(array_values(&a), tensor_values(v));
        // Ops on the array read the strided memory in place.
        let s: f64 = tensor_values(v).iter().sum();
        let sum = a
            .astype(DType::F64)
            .unwrap()
            .sum(dlarray::Axes::All)
            .unwrap();
        assert_eq!(sum.to_vec::<f64>().unwrap(), vec![s]);
    }
}

#[test]
fn a_write_through_candle_is_seen_by_the_array() {
    let var = Var::from_tensor(&tensor(&[2, 3], CDType::F32)).unwrap();
    let a = Array::from_candle(var.as_tensor()).unwrap();
    assert_eq!(
        a.unsafe_buffer_pointer().unwrap(),
        tensor_ptr(var.as_tensor())
    );
    let ones = Tensor::ones((2, 3), CDType::F32, &CDevice::Cpu).unwrap();
    var.set(&(ones * 9.0).unwrap()).unwrap();
    assert_eq!(a.to_vec::<f32>().unwrap(), vec![9.0; 6]);
}

#[test]
fn into_candle_moves_a_vec_and_gives_back_the_tensor_it_came_from() {
    // A vector made into an array on cpu, then a tensor: the same allocation throughout.
    let v: Vec<f32> = (0..12).map(|i| i as f32).collect();
    let p = v.as_ptr() as usize;
    let a = Array::from_vec(v, &[3, 4]).unwrap();
    assert_eq!(a.unsafe_buffer_pointer().unwrap(), p);
    let t = a.into_candle().unwrap();
    assert_eq!(tensor_ptr(&t), p);
    assert_eq!(
        tensor_values(&t),
        (0..12).map(f64::from).collect::<Vec<_>>()
    );

    // candle -> dlarray -> candle: the very tensor back (same id, same storage).
    let t = tensor(&[2, 3], CDType::I64);
    let back = Array::from_candle(&t).unwrap().into_candle().unwrap();
    assert_eq!(back.id(), t.id());
    let tt = t.t().unwrap();
    let back = Array::from_candle(&tt).unwrap().into_candle().unwrap();
    assert_eq!(back.id(), tt.id());
}

#[test]
fn into_candle_copies_what_it_cannot_move() {
    let v: Vec<f32> = (0..6).map(|i| i as f32).collect();
    let p = v.as_ptr() as usize;
    // A clone alive: the vector stays with it.
    let a = Array::from_vec(v, &[2, 3]).unwrap();
    let keep = a.clone();
    let t = a.into_candle().unwrap();
    assert_ne!(tensor_ptr(&t), p);
    assert_eq!(
        keep.to_vec::<f32>().unwrap(),
        vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    );
    assert_eq!(tensor_values(&t), vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    // A view of the vector (the only holder): copied, row-major.
    let a = Array::from_vec((0..6).map(|i| i as f32).collect(), &[2, 3]).unwrap();
    let t = a.t().unwrap().into_candle().unwrap();
    assert_eq!(t.dims(), &[3, 2]);
    assert_eq!(tensor_values(&t), vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    // A view of a candle tensor other than the tensor's own: copied.
    let src = tensor(&[3, 4], CDType::F32);
    let a = Array::from_candle(&src).unwrap().t().unwrap();
    let t = a.into_candle().unwrap();
    assert_ne!(t.id(), src.id());
    assert_eq!(tensor_values(&t), tensor_values(&src.t().unwrap()));
    // Computed arrays (pool memory) are copied too.
    let a = (&Array::from_vec(vec![1.0f32, 2.0], &[2]).unwrap() * 2.0).unwrap();
    assert_eq!(tensor_values(&a.into_candle().unwrap()), vec![2.0, 4.0]);
}

#[test]
fn either_side_may_go_first_on_any_thread() {
    // The tensor dropped first: the array keeps the storage alive.
    let t = tensor(&[64, 64], CDType::F32);
    let want = tensor_values(&t);
    let a = Array::from_candle(&t).unwrap();
    drop(t);
    assert_eq!(array_values(&a), want);
    // The array dropped first: the tensor is unaffected.
    let t = tensor(&[8], CDType::U8);
    let a = Array::from_candle(&t).unwrap();
    drop(a);
    assert_eq!(
        tensor_values(&t),
        (0..8).map(|i| (i % 7) as f64 + 1.0).collect::<Vec<_>>()
    );
    // Across threads, in both orders.
    let t = tensor(&[16, 16], CDType::F32);
    let want = tensor_values(&t);
    let a = Array::from_candle(&t).unwrap();
    let h = std::thread::spawn(move || {
        let v = array_values(&a);
        drop(a);
        v
    });
    drop(t);
    assert_eq!(h.join().unwrap(), want);
    let a = Array::from_vec(vec![1.0f32; 1024], &[1024]).unwrap();
    let t = std::thread::spawn(move || a.into_candle().unwrap())
        .join()
        .unwrap();
    assert_eq!(tensor_values(&t), vec![1.0; 1024]);
}

#[test]
fn dtypes_the_other_side_lacks_are_errors() {
    for d in [
        DType::Bool,
        DType::I8,
        DType::U16,
        DType::U64,
        DType::Complex64,
        DType::Complex128,
    ] {
        let a = Array::zeros(&[2], d).unwrap();
        for e in [
            a.to_candle().unwrap_err(),
            a.clone().into_candle().unwrap_err(),
        ] {
            let Error::Interop { library, message } = &e else {
                panic!("{e:?}")
            };
            assert_eq!(*library, "candle");
            assert!(message.contains(&d.to_string()), "{message}");
            assert!(message.contains("astype"), "{message}");
        }
        // Converted only when the caller asks.
        let t = a.astype(DType::F32).unwrap().into_candle().unwrap();
        assert_eq!(t.dtype(), CDType::F32);
    }
    let f8 = tensor(&[2], CDType::F8E4M3);
    let e = Array::from_candle(&f8).unwrap_err();
    assert_eq!(
        e.to_string(),
        "candle: candle dtype f8e4m3 has no dlarray dtype"
    );
}
