//! Helpers shared by the integration tests: dtype-erased reads and writes, and a tolerant
//! comparison that knows each dtype's precision.
#![allow(dead_code)]

pub mod async_fake;
pub mod dlpack_fuzz;
pub mod fake;

use dlarray::{Array, DType, Device, Element, Scalar};

/// The shapes JAX's DLPack tests run over (scalars, size-1 and size-0 axes).
pub const JAX_SHAPES: [&[usize]; 11] = [
    &[],
    &[4],
    &[3, 4],
    &[2, 3, 4],
    &[3, 1],
    &[1, 4],
    &[2, 1, 4],
    &[0],
    &[0, 4],
    &[3, 0],
    &[2, 0, 1],
];

/// The array's elements as scalars (row-major).
pub fn to_scalars(a: &Array) -> Vec<Scalar> {
    dlarray::with_dtype!(a.dtype(), T => {
        a.to_vec::<T>().expect("read back").into_iter().map(|v| v.to_scalar()).collect()
    })
}

/// An array of `dtype` holding `vals` converted to that dtype, on `device`.
pub fn from_scalars(vals: &[Scalar], shape: &[usize], dtype: DType, device: &Device) -> Array {
    dlarray::with_dtype!(dtype, T => {
        let data: Vec<T> = vals.iter().map(|&s| T::from_scalar(s)).collect();
        Array::from_slice_on(&data, shape, device).expect("create")
    })
}

/// `s` rounded to `dtype` (what a correct kernel would store).
pub fn round_to(dtype: DType, s: Scalar) -> Scalar {
    dlarray::with_dtype!(dtype, T => T::from_scalar(s).to_scalar())
}

fn tolerance(dtype: DType) -> f64 {
    match dtype {
        DType::F16 | DType::BF16 => 1e-2,
        DType::F32 | DType::Complex64 => 1e-5,
        _ => 1e-11,
    }
}

fn close_f(dtype: DType, g: f64, w: f64) -> bool {
    (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= tolerance(dtype) * (1.0 + w.abs())
}

/// Whether `got` (read from an array of `dtype`) matches the exact result `want`.
pub fn close(dtype: DType, got: Scalar, want: Scalar) -> bool {
    let want = round_to(dtype, want);
    match (got, want) {
        (Scalar::Float(g), Scalar::Float(w)) => close_f(dtype, g, w),
        (Scalar::Complex(g), Scalar::Complex(w)) => {
            close_f(dtype, g.re, w.re) && close_f(dtype, g.im, w.im)
        }
        (g, w) => g == w,
    }
}

/// Asserts elementwise closeness with a readable failure.
pub fn assert_close(what: &str, dtype: DType, got: &[Scalar], want: &[Scalar]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            close(dtype, *g, *w),
            "{what}: element {i}: got {g:?}, want {:?} (exact {w:?})",
            round_to(dtype, *w)
        );
    }
}

pub fn devices_of(platform: &str) -> Vec<Device> {
    dlarray::devices()
        .expect("devices")
        .into_iter()
        .filter(|d| d.platform() == platform)
        .collect()
}

pub fn cpu() -> Device {
    dlarray::get_device("cpu:0").expect("cpu:0")
}
