//! tch-rs interop: round trips of every shared dtype over the JAX test shapes, strided views
//! with storage offsets, zero-copy proven by addresses and by writes seen across, lifetimes
//! (either side first, views outliving the array, other threads), and every dtype, layout
//! and device either side lacks giving its error. CUDA cases run where a GPU is (they are in
//! `gpu_cuda`'s script); here the CPU ones.
#![cfg(feature = "tch")]

mod common;

use common::JAX_SHAPES;
use dlarray::{Array, DType, Error};
use tch::{Device as TDevice, Kind, Tensor};

const SHARED: [(DType, Kind); 12] = [
    (DType::Bool, Kind::Bool),
    (DType::U8, Kind::Uint8),
    (DType::I8, Kind::Int8),
    (DType::I16, Kind::Int16),
    (DType::I32, Kind::Int),
    (DType::I64, Kind::Int64),
    (DType::F16, Kind::Half),
    (DType::BF16, Kind::BFloat16),
    (DType::F32, Kind::Float),
    (DType::F64, Kind::Double),
    (DType::Complex64, Kind::ComplexFloat),
    (DType::Complex128, Kind::ComplexDouble),
];

fn dims(shape: &[usize]) -> Vec<i64> {
    shape.iter().map(|&n| n as i64).collect()
}

/// A tensor of `shape` holding 1, 2, 3, ... (mod 7; mod 2 for bool), of `kind`.
fn tensor(shape: &[usize], kind: Kind) -> Tensor {
    let n: usize = shape.iter().product();
    let m = if kind == Kind::Bool { 2 } else { 7 };
    let v: Vec<f64> = (0..n).map(|i| ((i + 1) % m) as f64).collect();
    Tensor::from_slice(&v).reshape(dims(shape)).to_kind(kind)
}

/// The real parts of a tensor's elements, row-major, as f64.
fn tensor_values(t: &Tensor) -> Vec<f64> {
    let t = if t.is_complex() {
        t.real()
    } else {
        t.shallow_clone()
    };
    let flat = t.to_kind(Kind::Double).contiguous().reshape([-1]);
    Vec::<f64>::try_from(&flat).unwrap()
}

/// The real parts of an array's elements, row-major, as f64.
fn array_values(a: &Array) -> Vec<f64> {
    match a.dtype() {
        DType::Complex64 | DType::Complex128 => a
            .astype(DType::Complex128)
            .unwrap()
            .to_vec::<num_complex::Complex64>()
            .unwrap()
            .iter()
            .map(|c| c.re)
            .collect(),
        _ => a.astype(DType::F64).unwrap().to_vec::<f64>().unwrap(),
    }
}

#[test]
fn every_shared_dtype_and_shape_round_trips() {
    for (ours, kind) in SHARED {
        for shape in JAX_SHAPES {
            let t = tensor(shape, kind);
            let a = Array::from_tch(&t).unwrap();
            assert_eq!(a.dtype(), ours);
            assert_eq!(a.shape(), shape, "{ours} {shape:?}");
            assert_eq!(array_values(&a), tensor_values(&t), "{ours} {shape:?}");
            let back = a.to_tch().unwrap();
            assert_eq!(back.kind(), kind);
            assert_eq!(back.size(), dims(shape));
            assert_eq!(tensor_values(&back), tensor_values(&t), "{ours} {shape:?}");
            if !shape.contains(&0) {
                assert_eq!(back.data_ptr(), t.data_ptr(), "{ours} {shape:?}");
            }
        }
    }
}

#[test]
fn views_with_strides_and_storage_offsets_are_shared() {
    let t = Tensor::arange(24, (Kind::Float, TDevice::Cpu)).reshape([4, 6]);
    let views = [
        t.shallow_clone(),
        t.tr(),                     // strides [1, 6]
        t.narrow(1, 2, 3),          // storage offset 2
        t.narrow(0, 1, 2).tr(),     // offset 6, transposed
        t.select(1, 4),             // a column: stride 6, offset 4
        t.slice(1, 0, 6, 2),        // every other column: stride 2
        t.expand([3, 4, 6], false), // a broadcast: stride 0
    ];
    for v in &views {
        let a = Array::from_tch(v).unwrap();
        assert_eq!(a.unsafe_buffer_pointer().unwrap(), v.data_ptr() as usize);
        assert_eq!(array_values(&a), tensor_values(v), "{v:?}");
        // Our ops read the strided memory in place.
        let sum: f64 = tensor_values(v).iter().sum();
        let ours = a
            .astype(DType::F64)
            .unwrap()
            .sum(dlarray::Axes::All)
            .unwrap();
        assert_eq!(ours.to_vec::<f64>().unwrap(), vec![sum]);
    }
    // Our views go to torch with their strides and offset.
    let a = Array::from_vec((0..24).map(|i| i as f32).collect(), &[4, 6]).unwrap();
    let v = a.t().unwrap();
    let tv = v.to_tch().unwrap();
    assert_eq!(tv.stride(), vec![1, 6]);
    assert_eq!(tv.data_ptr() as usize, v.unsafe_buffer_pointer().unwrap());
    assert_eq!(tensor_values(&tv), array_values(&v));
}

#[test]
fn writes_through_torch_are_seen_on_both_sides() {
    // torch -> dlarray: an in-place write after the import.
    let mut t = Tensor::zeros([2, 3], (Kind::Float, TDevice::Cpu));
    let a = Array::from_tch(&t).unwrap();
    let _ = t.fill_(7.0);
    assert_eq!(a.to_vec::<f32>().unwrap(), vec![7.0; 6]);
    // dlarray -> torch: torch writes the array's own memory.
    let a = Array::from_vec(vec![1i64, 2, 3], &[3]).unwrap();
    let mut t = a.to_tch().unwrap();
    let _ = t.fill_(5);
    assert_eq!(a.to_vec::<i64>().unwrap(), vec![5, 5, 5]);
}

#[test]
fn the_tensor_keeps_the_array_alive_and_the_array_the_tensor() {
    // The array dropped first: torch's storage holds it, also through views of views.
    let a = Array::from_vec((0..1000).map(|i| i as f64).collect(), &[10, 100]).unwrap();
    let p = a.unsafe_buffer_pointer().unwrap();
    let t = a.to_tch().unwrap();
    drop(a);
    let view = t.narrow(0, 9, 1).shallow_clone();
    drop(t);
    assert_eq!(view.data_ptr() as usize, p + 900 * 8);
    assert_eq!(
        tensor_values(&view),
        (900..1000).map(f64::from).collect::<Vec<_>>()
    );
    // The tensor dropped first: the array holds its storage.
    let t = Tensor::arange(64, (Kind::Int64, TDevice::Cpu));
    let a = Array::from_tch(&t).unwrap();
    drop(t);
    assert_eq!(a.to_vec::<i64>().unwrap(), (0..64).collect::<Vec<_>>());
    // Across threads, both ways.
    let t = Tensor::ones([256], (Kind::Float, TDevice::Cpu));
    let a = Array::from_tch(&t).unwrap();
    drop(t);
    let got = std::thread::spawn(move || a.to_vec::<f32>().unwrap())
        .join()
        .unwrap();
    assert_eq!(got, vec![1.0; 256]);
    let a = Array::from_vec(vec![3.0f32; 256], &[256]).unwrap();
    let t = a.to_tch().unwrap();
    let h = std::thread::spawn(move || {
        let s = t.sum(Kind::Float).double_value(&[]);
        drop(t); // the array is released on this thread
        s
    });
    drop(a);
    assert_eq!(h.join().unwrap(), 768.0);
}

#[test]
fn candidates_for_a_host_copy_are_copied() {
    // A reversed view (torch has no negative strides) and a TPU array: copied to host.
    let a = Array::from_vec((0..6).map(|i| i as f32).collect(), &[6]).unwrap();
    let r = a.flip(0).unwrap();
    let t = r.to_tch().unwrap();
    assert_eq!(tensor_values(&t), vec![5.0, 4.0, 3.0, 2.0, 1.0, 0.0]);
    assert_ne!(t.data_ptr() as usize, a.unsafe_buffer_pointer().unwrap());
    let tpu = dlarray::get_device("tpu:0").unwrap();
    let on_tpu = a.to_device(&tpu).unwrap();
    let t = on_tpu.to_tch().unwrap();
    assert_eq!(t.device(), TDevice::Cpu);
    assert_eq!(tensor_values(&t), vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
}

fn interop_message(e: Error) -> String {
    match e {
        Error::Interop {
            library: "tch",
            message,
        } => message,
        other => panic!("not a tch interop error: {other:?}"),
    }
}

#[test]
fn what_either_side_lacks_is_an_error_not_a_panic() {
    for d in [DType::U16, DType::U32, DType::U64] {
        let a = Array::zeros(&[2], d).unwrap();
        let m = interop_message(a.to_tch().unwrap_err());
        assert!(m.contains(&d.to_string()) && m.contains("astype"), "{m}");
        // Converted only when the caller asks.
        assert_eq!(
            a.astype(DType::I64).unwrap().to_tch().unwrap().kind(),
            Kind::Int64
        );
    }
    let q = Tensor::ones([4], (Kind::Float, TDevice::Cpu)).quantize_per_tensor(0.1, 0, Kind::QInt8);
    assert_eq!(
        interop_message(Array::from_tch(&q).unwrap_err()),
        "torch dtype qint8 has no dlarray dtype"
    );
    let f8 = Tensor::ones([4], (Kind::Float, TDevice::Cpu)).to_kind(Kind::Float8e4m3fn);
    assert_eq!(
        interop_message(Array::from_tch(&f8).unwrap_err()),
        "torch dtype float8_e4m3fn has no dlarray dtype"
    );
    let ch = Tensor::ones([4], (Kind::ComplexFloat, TDevice::Cpu)).to_kind(Kind::ComplexHalf);
    assert!(interop_message(Array::from_tch(&ch).unwrap_err()).contains("complex32"));
    let conj = Tensor::ones([4], (Kind::ComplexFloat, TDevice::Cpu)).conj();
    assert!(interop_message(Array::from_tch(&conj).unwrap_err()).contains("resolve_conj"));
    let sparse = Tensor::eye(3, (Kind::Float, TDevice::Cpu)).to_sparse_sparse_dim(2);
    assert!(interop_message(Array::from_tch(&sparse).unwrap_err()).contains("to_dense"));
    // An undefined tensor: tch's own accessors would panic.
    // SAFETY: a tensor handle wrapping an undefined at::Tensor, as tch's `Tensor::new` makes.
    let undefined = unsafe { Tensor::from_ptr(torch_sys::at_new_tensor()) };
    assert_eq!(
        interop_message(Array::from_tch(&undefined).unwrap_err()),
        "the tensor is undefined"
    );
    // A CSR tensor: torch throws on its strides, which is an error here, not tch's panic.
    let csr = Tensor::eye(3, (Kind::Float, TDevice::Cpu)).to_sparse_csr(None);
    assert!(Array::from_tch(&csr).is_err());
}
