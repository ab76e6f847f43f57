//! Every op on every dtype against a naive reference computed on `Scalar`s (exact integer
//! arithmetic in i128, floats in f64, complex in Complex64), on the CPU and the TPU backend.

mod common;

use common::*;
use dlarray::dtype::Complex64;
use dlarray::{
    Array, Axes, BinaryOp, DType, Device, Error, MemoryKind, ReduceOp, Scalar, Sharding, UnaryOp,
};

/// Test inputs for `dtype`: six values, positive ones first (for log and sqrt).
fn values(dtype: DType, second: bool) -> Vec<Scalar> {
    let ints: [i128; 6] = if second {
        [3, 1, 2, 5, -2, -7]
    } else {
        [2, 7, 1, 4, -3, 0]
    };
    match dtype {
        DType::Bool => (0..6)
            .map(|i| Scalar::Bool((i + second as i32) % 2 == 0))
            .collect(),
        d if d.is_integer() => ints
            .iter()
            .map(|&v| {
                Scalar::Int(if d.kind() == dlarray::dtype::Kind::UInt {
                    v.abs()
                } else {
                    v
                })
            })
            .collect(),
        d if d.is_float() => ints
            .iter()
            .map(|&v| Scalar::Float(v as f64 * 0.75 + if second { 0.5 } else { 0.25 }))
            .collect(),
        _ => ints
            .iter()
            .map(|&v| Scalar::Complex(Complex64::new(v as f64 * 0.5 + 0.25, 1.0 - v as f64 * 0.25)))
            .collect(),
    }
}

fn as_f64(s: Scalar) -> f64 {
    match s {
        Scalar::Bool(b) => b as u8 as f64,
        Scalar::Int(i) => i as f64,
        Scalar::Float(f) => f,
        Scalar::Complex(c) => c.re,
    }
}
fn as_c(s: Scalar) -> Complex64 {
    match s {
        Scalar::Complex(c) => c,
        other => Complex64::new(as_f64(other), 0.0),
    }
}
fn truthy(s: Scalar) -> bool {
    match s {
        Scalar::Bool(b) => b,
        Scalar::Int(i) => i != 0,
        Scalar::Float(f) => f != 0.0,
        Scalar::Complex(c) => c.re != 0.0 || c.im != 0.0,
    }
}

/// The reference for a binary op on two values of `dtype`: (result dtype, value), or None if
/// the op is not defined there.
fn ref_binary(op: BinaryOp, dtype: DType, x: Scalar, y: Scalar) -> Option<(DType, Scalar)> {
    use BinaryOp::*;
    use Scalar::*;
    if op.is_logical() {
        let (p, q) = (truthy(x), truthy(y));
        let r = match op {
            LogicalAnd => p & q,
            LogicalOr => p | q,
            _ => p ^ q,
        };
        return Some((DType::Bool, Bool(r)));
    }
    if op.is_comparison() {
        let r = match (x, y) {
            (Complex(a), Complex(b)) => match op {
                Eq => a == b,
                Ne => a != b,
                _ => return None,
            },
            (Bool(a), Bool(b)) => cmp(op, a, b),
            (Int(a), Int(b)) => cmp(op, a, b),
            _ => cmp(op, as_f64(x), as_f64(y)),
        };
        return Some((DType::Bool, Bool(r)));
    }
    if (op == Div || op.is_real_float()) && !dtype.is_inexact() {
        let (a, b) = (as_f64(x), as_f64(y));
        let r = match op {
            Div => a / b,
            Atan2 => a.atan2(b),
            Copysign => a.copysign(b),
            Hypot => a.hypot(b),
            Nextafter => next_in(DType::F64, a, b),
            _ => (a.exp() + b.exp()).ln(),
        };
        return Some((DType::F64, Float(r)));
    }
    if let (Bool(a), Bool(b), FloorDivide | Remainder | Pow) = (x, y, op) {
        // NumPy computes these in int8; a zero divisor gives 0.
        let (a, b) = (i128::from(a), i128::from(b));
        let r = match op {
            FloorDivide => a * b,
            Remainder => 0,
            _ => a.pow(b as u32),
        };
        return Some((DType::I8, Int(r)));
    }
    let r = match (x, y) {
        (Bool(a), Bool(b)) => match op {
            Add | Maximum | BitwiseOr => Bool(a | b),
            Mul | Minimum | BitwiseAnd => Bool(a & b),
            BitwiseXor => Bool(a ^ b),
            _ => return None,
        },
        (Int(a), Int(b)) if op.is_shift() => {
            let bits = 8 * dtype.size_in_bytes() as i128;
            Int(match op {
                _ if (0..bits).contains(&b) && op == LeftShift => a << b,
                _ if (0..bits).contains(&b) => a >> b,
                LeftShift => 0,
                _ => -((a < 0) as i128),
            })
        }
        (Int(a), Int(b)) => Int(match op {
            Add => a + b,
            Sub => a - b,
            Mul => a * b,
            Maximum => a.max(b),
            Minimum => a.min(b),
            BitwiseAnd => a & b,
            BitwiseOr => a | b,
            BitwiseXor => a ^ b,
            FloorDivide | Remainder if b == 0 => 0,
            FloorDivide => a.div_euclid(b) - ((b < 0 && a.rem_euclid(b) != 0) as i128),
            Remainder => a - b * (a.div_euclid(b) - ((b < 0 && a.rem_euclid(b) != 0) as i128)),
            Pow if b < 0 => match a {
                1 => 1,
                -1 if b % 2 == 0 => 1,
                -1 => -1,
                _ => 0,
            },
            Pow => {
                // Wrap to the dtype at every step, as fixed-width integers do.
                let mut acc = Int(1);
                for _ in 0..b {
                    acc = round_to(dtype, Int(as_int(acc) * a));
                }
                as_int(acc)
            }
            _ => return None,
        }),
        (Float(a), Float(b)) => Float(match op {
            Add => a + b,
            Sub => a - b,
            Mul => a * b,
            Div => a / b,
            Maximum => a.max(b),
            Minimum => a.min(b),
            Pow => a.powf(b),
            FloorDivide => (a / b).floor(),
            Remainder => a - b * (a / b).floor(),
            Atan2 => a.atan2(b),
            Copysign => a.copysign(b),
            Hypot => a.hypot(b),
            Logaddexp => (a.exp() + b.exp()).ln(),
            Nextafter => return Some((dtype, Float(next_in(dtype, a, b)))),
            _ => return None,
        }),
        (Complex(a), Complex(b)) => Complex(match op {
            Add => a + b,
            Sub => a - b,
            Mul => a * b,
            Div => a / b,
            Pow => a.powc(b),
            _ => return None,
        }),
        _ => return None,
    };
    Some((dtype, r))
}

fn as_int(s: Scalar) -> i128 {
    match s {
        Scalar::Int(i) => i,
        other => as_f64(other) as i128,
    }
}

/// The next value of `dtype` after `a` (a value of it) towards `b`, found by search: the
/// nearest value of the dtype strictly between `a` and a nudged `b`.
fn next_in(dtype: DType, a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    if a == b {
        return b;
    }
    let round = |x: f64| match round_to(dtype, Scalar::Float(x)) {
        Scalar::Float(f) => f,
        _ => x,
    };
    // The neighbour of a finite float (`next_up`/`next_down`, which MSRV 1.85 lacks):
    // the bits of a float of one sign order like integers.
    fn step64(x: f64, up: bool) -> f64 {
        if x == 0.0 {
            let tiny = f64::from_bits(1);
            return if up { tiny } else { -tiny };
        }
        let b = x.to_bits();
        f64::from_bits(if (x > 0.0) == up { b + 1 } else { b - 1 })
    }
    fn step32(x: f32, up: bool) -> f32 {
        if x == 0.0 {
            let tiny = f32::from_bits(1);
            return if up { tiny } else { -tiny };
        }
        let b = x.to_bits();
        f32::from_bits(if (x > 0.0) == up { b + 1 } else { b - 1 })
    }
    if dtype == DType::F64 {
        return step64(a, b > a);
    }
    // Step through f32 neighbours until the value in `dtype` moves (a half-float ulp is at
    // most 2^16 of them).
    let mut x = a as f32;
    loop {
        x = step32(x, b > a);
        let r = round(x as f64);
        if r != a {
            return r;
        }
    }
}

fn cmp<T: PartialOrd>(op: BinaryOp, a: T, b: T) -> bool {
    match op {
        BinaryOp::Eq => a == b,
        BinaryOp::Ne => a != b,
        BinaryOp::Lt => a < b,
        BinaryOp::Le => a <= b,
        BinaryOp::Gt => a > b,
        _ => a >= b,
    }
}

fn ref_unary(op: UnaryOp, dtype: DType, x: Scalar) -> Option<(DType, Scalar)> {
    use Scalar::*;
    use UnaryOp::*;
    match (op, x) {
        (LogicalNot | BitwiseInvert, Bool(b)) => Some((DType::Bool, Bool(!b))),
        (BitwiseInvert, Int(i)) => Some((dtype, Int(!i))),
        (BitwiseInvert, _) => None,
        (Signbit, Float(f)) => Some((DType::Bool, Bool(f.is_sign_negative()))),
        (Signbit, _) => None,
        (Conj, Complex(c)) => Some((dtype, Complex(c.conj()))),
        (Conj, v) => Some((dtype, v)),
        // abs of a bool is the bool (NumPy's and JAX's); negation has no bool meaning.
        (Abs, Bool(b)) => Some((DType::Bool, Bool(b))),
        (LogicalNot, _) | (Neg, Bool(_)) => None,
        (Neg, Int(i)) => Some((dtype, Int(-i))),
        (Neg, Float(f)) => Some((dtype, Float(-f))),
        (Neg, Complex(c)) => Some((dtype, Complex(-c))),
        (Abs, Int(i)) => Some((dtype, Int(i.abs()))),
        (Abs, Float(f)) => Some((dtype, Float(f.abs()))),
        (Abs, Complex(c)) => Some((dtype.real_part(), Float(c.norm()))),
        (Floor | Ceil | Round | Sign, Bool(_)) => None,
        (Floor | Ceil | Round, Int(i)) => Some((dtype, Int(i))),
        (Sign, Int(i)) => Some((dtype, Int(i.signum()))),
        (Floor | Ceil | Round | Sign, Float(f)) => Some((
            dtype,
            Float(match op {
                Floor => f.floor(),
                Ceil => f.ceil(),
                Round => f.round_ties_even(),
                _ if f > 0.0 => 1.0,
                _ if f < 0.0 => -1.0,
                _ if f == 0.0 => 0.0,
                _ => f,
            }),
        )),
        (Floor | Ceil, Complex(_)) => None,
        (Round, Complex(c)) => Some((
            dtype,
            Complex(Complex64::new(
                c.re.round_ties_even(),
                c.im.round_ties_even(),
            )),
        )),
        (Sign, Complex(c)) => Some((
            dtype,
            Complex(if c.norm() == 0.0 {
                Complex64::new(0.0, 0.0)
            } else {
                c / c.norm()
            }),
        )),
        (_, Complex(c)) => Some((
            dtype,
            Complex(match op {
                // num-complex ignores the sign of a zero on a branch cut (C99 and NumPy take
                // the side it names): evaluate a hair off the cut, on that side.
                Asin | Acos | Atanh | Acosh | Log | Sqrt if c.im == 0.0 => {
                    let off = Complex64::new(c.re, 1e-300f64.copysign(c.im));
                    return ref_unary(op, dtype, Complex(off));
                }
                Asinh | Atan if c.re == 0.0 => {
                    let off = Complex64::new(1e-300f64.copysign(c.re), c.im);
                    return ref_unary(op, dtype, Complex(off));
                }
                Exp => c.exp(),
                Log => c.ln(),
                Sqrt => c.sqrt(),
                Sin => c.sin(),
                Cos => c.cos(),
                Tan => c.tan(),
                Tanh => c.tanh(),
                Asin => c.asin(),
                Acos => c.acos(),
                Atan => c.atan(),
                Sinh => c.sinh(),
                Cosh => c.cosh(),
                Asinh => c.asinh(),
                Acosh => c.acosh(),
                Atanh => c.atanh(),
                Expm1 => c.exp() - 1.0,
                _ => (c + 1.0).ln(),
            }),
        )),
        (_, v) => {
            let f = as_f64(v);
            let r = match op {
                Exp => f.exp(),
                Log => f.ln(),
                Sqrt => f.sqrt(),
                Sin => f.sin(),
                Cos => f.cos(),
                Tan => f.tan(),
                Tanh => f.tanh(),
                Asin => f.asin(),
                Acos => f.acos(),
                Atan => f.atan(),
                Sinh => f.sinh(),
                Cosh => f.cosh(),
                Asinh => f.asinh(),
                Acosh => f.acosh(),
                Atanh => f.atanh(),
                Expm1 => f.exp_m1(),
                _ => f.ln_1p(),
            };
            Some((dtype.float_dtype(), Float(r)))
        }
    }
}

/// The host devices and the wgpu ones (for ops composed of kernels every backend has).
fn host_and_wgpu_devices() -> Vec<Device> {
    let mut devs = host_devices();
    let all = dlarray::backends::devices().unwrap();
    devs.extend(all.into_iter().filter(|d| d.backend().name() == "wgpu"));
    devs
}

fn host_devices() -> Vec<Device> {
    vec![
        cpu(),
        devices_of("tpu").into_iter().next().expect("a tpu device"),
    ]
}

fn expect_unsupported(what: &str, r: dlarray::Result<Array>) {
    match r {
        Err(Error::Unsupported { backend, op, dtype }) => {
            assert!(!backend.is_empty() && !op.is_empty(), "{what}: {dtype}")
        }
        Err(Error::DTypeMismatch { .. }) => {}
        other => panic!("{what}: expected an unsupported-op error, got {other:?}"),
    }
}

#[test]
fn binary_ops_every_dtype() {
    for dev in host_devices() {
        for &dtype in &DType::ALL {
            let (xs, ys) = (values(dtype, false), values(dtype, true));
            let a = from_scalars(&xs, &[2, 3], dtype, &dev);
            let b = from_scalars(&ys, &[2, 3], dtype, &dev);
            for &op in BinaryOp::ALL {
                let what = format!("{op} {dtype} on {dev}");
                let want: Option<Vec<(DType, Scalar)>> = xs
                    .iter()
                    .zip(&ys)
                    .map(|(&x, &y)| ref_binary(op, dtype, x, y))
                    .collect();
                let got = a.binary(op, &b);
                match want {
                    None => expect_unsupported(&what, got),
                    Some(want) => {
                        let got = got.unwrap_or_else(|e| panic!("{what}: {e}"));
                        assert_eq!(got.dtype(), want[0].0, "{what}: dtype");
                        assert_eq!(got.shape(), &[2, 3]);
                        let want: Vec<Scalar> = want.iter().map(|w| w.1).collect();
                        assert_close(&what, got.dtype(), &to_scalars(&got), &want);
                    }
                }
            }
        }
    }
}

#[test]
fn unary_ops_every_dtype() {
    for dev in host_devices() {
        for &dtype in &DType::ALL {
            let xs: Vec<Scalar> = values(dtype, false);
            // Positive inputs only, so log and sqrt stay real.
            let xs: Vec<Scalar> = xs.into_iter().take(4).collect();
            let a = from_scalars(&xs, &[4], dtype, &dev);
            for &op in UnaryOp::ALL {
                let what = format!("{op} {dtype} on {dev}");
                let want: Option<Vec<(DType, Scalar)>> =
                    xs.iter().map(|&x| ref_unary(op, dtype, x)).collect();
                match want {
                    None => expect_unsupported(&what, a.unary(op)),
                    Some(want) => {
                        let got = a.unary(op).unwrap_or_else(|e| panic!("{what}: {e}"));
                        assert_eq!(got.dtype(), want[0].0, "{what}: dtype");
                        let want: Vec<Scalar> = want.iter().map(|w| w.1).collect();
                        assert_close(&what, got.dtype(), &to_scalars(&got), &want);
                    }
                }
            }
        }
    }
}

/// Naive reduction of a row-major [rows, cols] block over `axis` (None: all).
fn ref_reduce(
    op: ReduceOp,
    dtype: DType,
    xs: &[Scalar],
    cols: usize,
    axis: Option<usize>,
) -> Option<Vec<Scalar>> {
    let rows = xs.len() / cols;
    let groups: Vec<Vec<Scalar>> = match axis {
        None => vec![xs.to_vec()],
        Some(0) => (0..cols)
            .map(|c| (0..rows).map(|r| xs[r * cols + c]).collect())
            .collect(),
        _ => xs.chunks(cols).map(|c| c.to_vec()).collect(),
    };
    groups
        .iter()
        .map(|g| {
            Some(match op {
                ReduceOp::Sum => match dtype.sum_dtype() {
                    DType::I64 | DType::U64 => {
                        Scalar::Int(g.iter().map(|&s| as_int(round_to(DType::I64, s))).sum())
                    }
                    _ if dtype.is_complex() => Scalar::Complex(g.iter().map(|&s| as_c(s)).sum()),
                    _ => Scalar::Float(g.iter().map(|&s| as_f64(s)).sum()),
                },
                ReduceOp::Prod => match dtype.sum_dtype() {
                    DType::I64 | DType::U64 => {
                        Scalar::Int(g.iter().map(|&s| as_int(round_to(DType::I64, s))).product())
                    }
                    _ if dtype.is_complex() => {
                        Scalar::Complex(g.iter().map(|&s| as_c(s)).product())
                    }
                    _ => Scalar::Float(g.iter().map(|&s| as_f64(s)).product()),
                },
                _ if dtype.is_complex() => return None,
                ReduceOp::Max => *g
                    .iter()
                    .max_by(|a, b| as_f64(**a).total_cmp(&as_f64(**b)))?,
                ReduceOp::Min => *g
                    .iter()
                    .min_by(|a, b| as_f64(**a).total_cmp(&as_f64(**b)))?,
                _ => return None,
            })
        })
        .collect()
}

#[test]
fn reductions_every_dtype_and_axis() {
    for dev in host_devices() {
        for &dtype in &DType::ALL {
            let xs: Vec<Scalar> = values(dtype, false)
                .into_iter()
                .chain(values(dtype, true))
                .collect();
            let a = from_scalars(&xs, &[3, 4], dtype, &dev);
            for &op in ReduceOp::ALL {
                for axis in [None, Some(0), Some(1)] {
                    let what = format!("{op} {dtype} axis {axis:?} on {dev}");
                    let axes = axis.map_or(Axes::All, |a| Axes::from(a as isize));
                    let got = a.reduce(op, axes, false);
                    match ref_reduce(op, dtype, &xs, 4, axis) {
                        None => expect_unsupported(&what, got),
                        Some(want) => {
                            let got = got.unwrap_or_else(|e| panic!("{what}: {e}"));
                            let dt = if matches!(op, ReduceOp::Sum | ReduceOp::Prod) {
                                dtype.sum_dtype()
                            } else {
                                dtype
                            };
                            assert_eq!(got.dtype(), dt, "{what}");
                            assert_close(&what, dt, &to_scalars(&got), &want);
                        }
                    }
                }
            }
            let mean = a.mean(1);
            if dtype.is_complex() || dtype.is_float() || dtype.is_integer() || dtype == DType::Bool
            {
                let mean = mean.unwrap_or_else(|e| panic!("mean {dtype}: {e}"));
                assert_eq!(mean.dtype(), dtype.float_dtype());
                let sums = ref_reduce(ReduceOp::Sum, dtype.float_dtype(), &xs, 4, Some(1)).unwrap();
                let want: Vec<Scalar> = sums
                    .into_iter()
                    .map(|s| match s {
                        Scalar::Complex(c) => Scalar::Complex(c / 4.0),
                        other => Scalar::Float(as_f64(other) / 4.0),
                    })
                    .collect();
                assert_close(
                    &format!("mean {dtype}"),
                    mean.dtype(),
                    &to_scalars(&mean),
                    &want,
                );
            }
        }
    }
}

#[test]
fn keepdims_and_negative_axes() {
    let a = Array::from_vec((0..24).map(|v| v as f32).collect(), &[2, 3, 4]).unwrap();
    let s = a.reduce(ReduceOp::Sum, [-1, 0], true).unwrap();
    assert_eq!(s.shape(), &[1, 3, 1]);
    assert_eq!(s.to_vec::<f32>().unwrap(), vec![60.0, 92.0, 124.0]);
    assert!(a.sum([0, -3]).is_err(), "duplicate axis");
    assert!(a.sum(3).is_err(), "axis out of range");
    let empty = Array::zeros(&[0, 3], DType::F32).unwrap();
    assert_eq!(empty.sum(0).unwrap().to_vec::<f32>().unwrap(), vec![0.0; 3]);
    assert!(
        empty.max(0).is_err(),
        "max of an empty axis has no identity"
    );
}

fn ref_matmul(
    dtype: DType,
    a: &[Scalar],
    b: &[Scalar],
    m: usize,
    k: usize,
    n: usize,
) -> Vec<Scalar> {
    let mut out = Vec::new();
    for i in 0..m {
        for j in 0..n {
            let terms = (0..k).map(|p| (a[i * k + p], b[p * n + j]));
            out.push(match dtype {
                DType::Bool => Scalar::Bool(terms.into_iter().any(|(x, y)| truthy(x) && truthy(y))),
                d if d.is_integer() => Scalar::Int(terms.map(|(x, y)| as_int(x) * as_int(y)).sum()),
                d if d.is_complex() => Scalar::Complex(terms.map(|(x, y)| as_c(x) * as_c(y)).sum()),
                _ => Scalar::Float(terms.map(|(x, y)| as_f64(x) * as_f64(y)).sum()),
            });
        }
    }
    out
}

#[test]
fn matmul_every_dtype_with_batches_and_vectors() {
    let (m, k, n) = (3, 4, 2);
    for dev in host_devices() {
        for &dtype in &DType::ALL {
            let xs: Vec<Scalar> = values(dtype, false)
                .into_iter()
                .chain(values(dtype, true))
                .collect();
            let ys: Vec<Scalar> = values(dtype, true)
                .into_iter()
                .chain(values(dtype, false))
                .take(k * n)
                .collect();
            let a = from_scalars(&xs, &[m, k], dtype, &dev);
            let b = from_scalars(&ys, &[k, n], dtype, &dev);
            let what = format!("matmul {dtype} on {dev}");
            let got = a.matmul(&b).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(got.shape(), &[m, n]);
            assert_close(
                &what,
                dtype,
                &to_scalars(&got),
                &ref_matmul(dtype, &xs, &ys, m, k, n),
            );
            // Transposed (strided) operands go through the same kernels without a copy.
            let at = from_scalars(&xs, &[k, m], dtype, &dev).t().unwrap();
            let at_vals = to_scalars(&at);
            let got = at.matmul(&b).unwrap();
            assert_close(
                &format!("{what} (transposed lhs)"),
                dtype,
                &to_scalars(&got),
                &ref_matmul(dtype, &at_vals, &ys, m, k, n),
            );
        }
    }
    // Batches broadcast; 1-D operands are promoted and squeezed (NumPy rules).
    let a = Array::from_vec((0..24).map(|v| v as f64).collect(), &[2, 3, 4]).unwrap();
    let b = Array::from_vec((0..4).map(|v| v as f64).collect(), &[4]).unwrap();
    let c = a.matmul(&b).unwrap();
    assert_eq!(c.shape(), &[2, 3]);
    assert_eq!(
        c.to_vec::<f64>().unwrap(),
        vec![14.0, 38.0, 62.0, 86.0, 110.0, 134.0]
    );
    let w = Array::from_vec((0..8).map(|v| v as f64).collect(), &[4, 2]).unwrap();
    let d = a.matmul(&w).unwrap();
    assert_eq!(d.shape(), &[2, 3, 2]);
    assert_eq!(&d.to_vec::<f64>().unwrap()[..2], &[28.0, 34.0]);
    assert!(
        a.matmul(&Array::zeros(&[3, 2], DType::F64).unwrap())
            .is_err()
    );
    // k = 0 gives zeros.
    let z = Array::zeros(&[2, 0], DType::F32)
        .unwrap()
        .matmul(&Array::zeros(&[0, 3], DType::F32).unwrap())
        .unwrap();
    assert_eq!(z.to_vec::<f32>().unwrap(), vec![0.0; 6]);
}

#[test]
fn large_matmul_matches_reference() {
    // Big enough for the threaded GEMM path.
    let (m, k, n) = (130, 257, 65);
    let a: Vec<f32> = (0..m * k).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
    let b: Vec<f32> = (0..k * n).map(|i| ((i * 5) % 11) as f32 - 5.0).collect();
    let c = Array::from_vec(a.clone(), &[m, k])
        .unwrap()
        .matmul(&Array::from_vec(b.clone(), &[k, n]).unwrap())
        .unwrap();
    let got = c.to_vec::<f32>().unwrap();
    for i in (0..m).step_by(7) {
        for j in 0..n {
            let want: f32 = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
            assert_eq!(got[i * n + j], want, "({i}, {j})");
        }
    }
}

/// f32, f64, float16 and bfloat16 products big enough for the blocked AVX2 path (where the
/// processor has it: every dimension 16 or more), batched, with a transposed operand and a
/// depth over one block: each element is the exact sum of small integer products, rounded
/// once to the dtype.
#[test]
fn float_matmuls_of_batched_transposed_operands_round_once() {
    let (batch, m, k, n) = (2, 20, 300, 33);
    // Non-negative, so the sums (~6,000) need rounding in float16 and bfloat16.
    let a: Vec<f64> = (0..batch * m * k).map(|i| ((i * 7) % 11) as f64).collect();
    let b: Vec<f64> = (0..batch * n * k).map(|i| ((i * 5) % 9) as f64).collect();
    // b is stored [batch, n, k] and used transposed: element (p, j) of matrix q at
    // q * n * k + j * k + p.
    let mut want = Vec::with_capacity(batch * m * n);
    for q in 0..batch {
        for i in 0..m {
            for j in 0..n {
                want.push(
                    (0..k)
                        .map(|p| a[(q * m + i) * k + p] * b[(q * n + j) * k + p])
                        .sum::<f64>(),
                );
            }
        }
    }
    let want = Array::from_vec(want, &[batch, m, n]).unwrap();
    for dtype in [DType::F32, DType::F64, DType::F16, DType::BF16] {
        let x = Array::from_vec(a.clone(), &[batch, m, k])
            .unwrap()
            .astype(dtype)
            .unwrap();
        let y = Array::from_vec(b.clone(), &[batch, n, k])
            .unwrap()
            .astype(dtype)
            .unwrap()
            .permute(&[0, 2, 1])
            .unwrap();
        let got = x.matmul(&y).unwrap();
        assert_eq!((got.dtype(), got.shape()), (dtype, &[batch, m, n][..]));
        assert_eq!(
            got.astype(DType::F64).unwrap().to_vec::<f64>().unwrap(),
            want.astype(dtype)
                .unwrap()
                .astype(DType::F64)
                .unwrap()
                .to_vec::<f64>()
                .unwrap(),
            "{dtype}"
        );
    }
}

#[test]
fn astype_every_pair() {
    for &from in &DType::ALL {
        let xs = values(from, false);
        let a = from_scalars(&xs, &[6], from, &cpu());
        let exact = to_scalars(&a);
        for &to in &DType::ALL {
            let b = a.astype(to).unwrap();
            assert_eq!(b.dtype(), to);
            let want: Vec<Scalar> = exact.iter().map(|&s| round_to(to, s)).collect();
            assert_close(&format!("{from} -> {to}"), to, &to_scalars(&b), &want);
        }
    }
}

/// The contiguous float32 <-> float16 casts take `simd`'s converters (F16C), the strided
/// ones the element path: every float16, and float32s spread over all bit patterns
/// (subnormals, ties, overflow to inf, NaNs), give the same values both ways and `half`'s.
#[test]
fn float16_casts_of_contiguous_and_strided_tensors_agree() {
    use half::f16;
    let same16 = |a: f16, b: f16| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
    let same32 = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
    // Odd lengths, so the vector loops' tails run too.
    let wide: Vec<f32> = (0..=u32::MAX / 4093)
        .map(|i| f32::from_bits(i * 4093))
        .collect();
    let narrow: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
    let tpu = devices_of("tpu").into_iter().next().expect("a tpu device");
    for dev in [cpu(), tpu] {
        cast_agrees(&dev, &wide, DType::F16, 0, f16::from_f32, same16);
        cast_agrees(&dev, &narrow, DType::F32, 1, f16::to_f32, same32);
    }
}

/// `xs` cast to `to` on `dev`: the contiguous result equals `reference` element by element,
/// and the strided one (every other element from `first`) equals the contiguous one.
fn cast_agrees<S: dlarray::Element, D: dlarray::Element>(
    dev: &Device,
    xs: &[S],
    to: DType,
    first: usize,
    reference: impl Fn(S) -> D,
    same: impl Fn(D, D) -> bool,
) {
    use dlarray::Slice;
    let a = Array::from_vec(xs.to_vec(), &[xs.len()]).unwrap();
    let a = a.to_device(dev).unwrap();
    let fast = a.astype(to).unwrap().to_vec::<D>().unwrap();
    let every_other = a
        .slice(&[Slice::with_step(first as isize, xs.len() as isize, 2)])
        .unwrap();
    let slow = every_other.astype(to).unwrap().to_vec::<D>().unwrap();
    for (i, (&x, &y)) in xs.iter().zip(&fast).enumerate() {
        assert!(same(y, reference(x)), "{dev}: {x:?} -> {y:?} contiguous");
        if i % 2 == first {
            let z = slow[i / 2];
            assert!(same(y, z), "{dev}: {x:?} -> {y:?} vs strided {z:?}");
        }
    }
}

#[test]
fn deep_copy_is_equal_in_fresh_memory_with_the_same_sharding() {
    for &dt in &DType::ALL {
        let a = from_scalars(&values(dt, false), &[6], dt, &cpu());
        let c = a.deep_copy().unwrap();
        assert_eq!((c.dtype(), c.shape()), (dt, a.shape()));
        assert_eq!(to_scalars(&c), to_scalars(&a), "{dt}");
        assert_ne!(
            c.unsafe_buffer_pointer().unwrap(),
            a.unsafe_buffer_pointer().unwrap(),
            "{dt}: a copy, not a clone of the handle"
        );
    }
    // A transposed view comes back row-major; a sharded array keeps its sharding.
    let t = Array::from_vec((0..6).map(|i| i as f32).collect(), &[2, 3])
        .unwrap()
        .permute(&[1, 0])
        .unwrap();
    assert_eq!(
        t.deep_copy().unwrap().to_vec::<f32>().unwrap(),
        t.to_vec::<f32>().unwrap()
    );
    let tpus: Vec<_> = dlarray::devices()
        .unwrap()
        .into_iter()
        .filter(|d| d.platform() == "tpu")
        .take(2)
        .collect();
    let s = Sharding::split(tpus, 0).unwrap();
    let x = t.device_put(&s).unwrap();
    let y = x.deep_copy().unwrap();
    assert_eq!(y.sharding(), x.sharding());
    assert_eq!(y.to_vec::<f32>().unwrap(), t.to_vec::<f32>().unwrap());
    // The memory kind stays: a copy of pinned host memory is pinned host memory.
    let p = t
        .to_device(&s.devices()[0])
        .unwrap()
        .with_memory_kind(MemoryKind::PinnedHost)
        .unwrap();
    let q = p.deep_copy().unwrap();
    assert_eq!(q.memory_kind(), MemoryKind::PinnedHost);
    assert_eq!(q.to_vec::<f32>().unwrap(), t.to_vec::<f32>().unwrap());
}

#[test]
fn broadcasting_promotion_and_operators() {
    let a = Array::from_vec(vec![1i32, 2, 3], &[3, 1]).unwrap();
    let b = Array::from_vec(vec![0.5f32, 1.5], &[2]).unwrap();
    let c = (&a + &b).unwrap();
    assert_eq!(c.shape(), &[3, 2]);
    assert_eq!(
        c.dtype(),
        DType::F64,
        "int32 + float32 promotes to float64 (NumPy)"
    );
    assert_eq!(
        c.to_vec::<f64>().unwrap(),
        vec![1.5, 2.5, 2.5, 3.5, 3.5, 4.5]
    );
    let d = (&a / &a).unwrap();
    assert_eq!(d.dtype(), DType::F64, "true division of integers");
    let u = Array::from_vec(vec![200u8, 100], &[2]).unwrap();
    assert_eq!(
        (&u + &u).unwrap().to_vec::<u8>().unwrap(),
        vec![144, 200],
        "integers wrap"
    );
    let t = Array::from_vec(vec![true, false], &[2]).unwrap();
    let f = Array::from_vec(vec![true, true], &[2]).unwrap();
    assert_eq!(
        (&t & &f).unwrap().to_vec::<bool>().unwrap(),
        vec![true, false]
    );
    assert_eq!(
        (&t | &f).unwrap().to_vec::<bool>().unwrap(),
        vec![true, true]
    );
    assert_eq!(
        (&t ^ &f).unwrap().to_vec::<bool>().unwrap(),
        vec![false, true]
    );
    assert_eq!((!&t).unwrap().to_vec::<bool>().unwrap(), vec![false, true]);
    assert_eq!((-&b).unwrap().to_vec::<f32>().unwrap(), vec![-0.5, -1.5]);
    let s = Array::scalar(2.0f32).unwrap();
    assert_eq!((&b * &s).unwrap().to_vec::<f32>().unwrap(), vec![1.0, 3.0]);
    assert!(matches!(
        &a + &Array::zeros(&[2, 1], DType::I32).unwrap(),
        Err(Error::ShapeMismatch { .. })
    ));
}

#[test]
fn large_strided_and_broadcast_inputs_use_every_thread_path() {
    // Big enough to split over threads; strided (transposed, reversed) and broadcast inputs.
    let (r, c) = (300usize, 257usize);
    let data: Vec<f32> = (0..r * c).map(|i| (i % 101) as f32).collect();
    let x = Array::from_vec(data.clone(), &[r, c]).unwrap();
    let xt = x.t().unwrap();
    let y = (&xt * &xt).unwrap();
    let got = y.to_vec::<f32>().unwrap();
    for j in (0..c).step_by(13) {
        for i in (0..r).step_by(7) {
            assert_eq!(got[j * r + i], data[i * c + j] * data[i * c + j]);
        }
    }
    let row = Array::from_vec((0..c).map(|v| v as f32).collect(), &[c]).unwrap();
    let z = (&x - &row)
        .unwrap()
        .sum(0)
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    for j in (0..c).step_by(11) {
        let want: f32 = (0..r).map(|i| data[i * c + j] - j as f32).sum();
        assert!(
            (z[j] - want).abs() <= 1e-3 * want.abs().max(1.0),
            "column {j}"
        );
    }
    let rev = x
        .slice(&[dlarray::Slice::reversed(), dlarray::Slice::reversed()])
        .unwrap();
    let total = rev.sum(Axes::All).unwrap().item::<f32>().unwrap();
    let want: f64 = data.iter().map(|&v| v as f64).sum();
    assert!((total as f64 - want).abs() <= 1e-5 * want);
}

#[test]
fn a_parallel_sum_gives_the_same_bits_every_time() {
    // Values of very different magnitudes make f32 addition order-dependent: the threads'
    // partial sums must be combined in a fixed order, whatever finished first.
    let n = 1 << 20;
    let data: Vec<f32> = (0..n)
        .map(|i| {
            if i % 97 == 0 {
                1.0e7
            } else {
                0.1 + (i % 13) as f32 * 1.0e-3
            }
        })
        .collect();
    let x = Array::from_vec(data, &[n]).unwrap();
    let first = x.sum(Axes::All).unwrap().item::<f32>().unwrap();
    for _ in 0..30 {
        let again = x.sum(Axes::All).unwrap().item::<f32>().unwrap();
        assert_eq!(again.to_bits(), first.to_bits());
    }
}

/// Rust scalars as operands, both ways, with NumPy 2's weak-scalar promotion (NEP 50).
#[test]
fn scalar_operands_are_weak() {
    let a = Array::from_vec(vec![1.0f32, 2.0, 4.0], &[3]).unwrap();
    let b = (&a * 2.0).unwrap();
    assert_eq!(
        (b.dtype(), b.to_vec::<f32>().unwrap()),
        (DType::F32, vec![2.0, 4.0, 8.0])
    );
    let c = (1.0 / &a).unwrap();
    assert_eq!(c.to_vec::<f32>().unwrap(), vec![1.0, 0.5, 0.25]);
    let d = (10 - a.clone()).unwrap();
    assert_eq!(
        (d.dtype(), d.to_vec::<f32>().unwrap()),
        (DType::F32, vec![9.0, 8.0, 6.0])
    );
    let u = Array::from_vec(vec![250u8, 1], &[2]).unwrap();
    let v = (&u + 1i32).unwrap();
    assert_eq!(
        (v.dtype(), v.to_vec::<u8>().unwrap()),
        (DType::U8, vec![251, 2])
    );
    let e = (&u + 300i32).unwrap_err();
    assert!(e.to_string().contains("out of bounds for uint8"), "{e}");
    // True division computes integers in float64: any integer divides, as in NumPy.
    let h = (&u / -2i32).unwrap();
    assert_eq!(
        (h.dtype(), h.to_vec::<f64>().unwrap()),
        (DType::F64, vec![-125.0, -0.5])
    );
    let h = (300i32 / &u).unwrap();
    assert_eq!(h.to_vec::<f64>().unwrap(), vec![1.2, 300.0]);
    let i = Array::from_vec(vec![1i32, 2], &[2]).unwrap();
    let f = (&i * 2.5).unwrap();
    assert_eq!(
        (f.dtype(), f.to_vec::<f64>().unwrap()),
        (DType::F64, vec![2.5, 5.0])
    );
    // On another device the scalar is made there (no gather).
    let tpu = dlarray::get_device("tpu:1").unwrap();
    let t = (&a.to_device(&tpu).unwrap() + 1.0).unwrap();
    let h = (&a * half::f16::from_f32(0.5)).unwrap(); // any element type, weak
    assert_eq!(h.dtype(), DType::F32);
    assert_eq!(t.devices(), vec![tpu]);
    assert_eq!(t.to_vec::<f32>().unwrap(), vec![2.0, 3.0, 5.0]);
}

/// The ops composed from backend ops, on every device (NumPy's results).
#[test]
fn composed_ops_on_every_backend() {
    let nan = f32::NAN;
    for d in dlarray::devices().unwrap() {
        let on = |v: Vec<f32>, s: &[usize]| Array::from_vec(v, s).unwrap().to_device(&d).unwrap();
        let x = on(vec![1.0, -2.0, 3.0, 4.0, nan, f32::INFINITY], &[2, 3]);
        let z = x.zeros_like().unwrap();
        assert_eq!(
            (z.shape(), z.dtype(), z.devices()),
            (&[2usize, 3][..], DType::F32, vec![d.clone()])
        );
        assert_eq!(
            x.full_like(7.0).unwrap().to_vec::<f32>().unwrap(),
            vec![7.0; 6],
            "{d}"
        );
        assert_eq!(
            x.ones_like()
                .unwrap()
                .sum(Axes::All)
                .unwrap()
                .item::<f32>()
                .unwrap(),
            6.0
        );
        let b = |a: Array| a.to_vec::<bool>().unwrap();
        assert_eq!(
            b(x.isnan().unwrap()),
            vec![false, false, false, false, true, false],
            "{d}"
        );
        assert_eq!(
            b(x.isfinite().unwrap()),
            vec![true, true, true, true, false, false],
            "{d}"
        );
        let c = on(vec![-5.0, 0.5, 9.0], &[3])
            .clip(Some(0.0), Some(1.0))
            .unwrap();
        assert_eq!(
            (c.dtype(), c.to_vec::<f32>().unwrap()),
            (DType::F32, vec![0.0, 0.5, 1.0]),
            "{d}"
        );
        let y = on(vec![0.0, 0.0, 1.0, 0.0, 2.0, 3.0], &[2, 3]);
        assert_eq!(b(y.any(1).unwrap()), vec![true, true], "{d}");
        assert_eq!(b(y.all(1).unwrap()), vec![false, false], "{d}");
        assert_eq!(b(y.any(0).unwrap()), vec![false, true, true], "{d}");
        let v = on(vec![1.0, 2.0, 3.0, 4.0], &[2, 2]);
        let var = v.var(Axes::All, 0).unwrap().item::<f32>().unwrap();
        assert!((var - 1.25).abs() < 1e-6, "{d}: {var}");
        let std1 = v.std(0, 1).unwrap().to_vec::<f32>().unwrap();
        assert!(
            std1.iter().all(|s| (s - 2f32.sqrt()).abs() < 1e-6),
            "{d}: {std1:?}"
        );
        // Shape helpers are views.
        let e = v.expand_dims(0).unwrap();
        assert_eq!(e.shape(), &[1, 2, 2]);
        assert_eq!(e.squeeze(None).unwrap().shape(), &[2, 2]);
        assert_eq!(v.expand_dims(-1).unwrap().shape(), &[2, 2, 1]);
        assert!(v.squeeze(Some(&[0])).is_err());
        assert_eq!(
            v.flatten().unwrap().to_vec::<f32>().unwrap(),
            vec![1.0, 2.0, 3.0, 4.0]
        );
    }
    // Integers: var in float64, clip keeps the dtype, isnan all false.
    let i = Array::from_vec(vec![1i32, 2, 3, 4], &[4]).unwrap();
    assert_eq!(i.var(Axes::All, 0).unwrap().dtype(), DType::F64);
    assert_eq!(
        i.clip(Some(2.0), Some(3.0))
            .unwrap()
            .to_vec::<i32>()
            .unwrap(),
        vec![2, 2, 3, 3]
    );
    assert_eq!(i.isnan().unwrap().to_vec::<bool>().unwrap(), vec![false; 4]);
    // Bounds outside an integer dtype's range clip to its ends (NumPy 2; an op would refuse
    // them as out of bounds).
    let u = Array::from_vec(vec![0u8, 7, 255], &[3]).unwrap();
    let c = u.clip(Some(-2.0), Some(300.0)).unwrap();
    assert_eq!(
        (c.dtype(), c.to_vec::<u8>().unwrap()),
        (DType::U8, vec![0, 7, 255])
    );
    let c = u
        .clip_to(Some(Scalar::Int(-(1 << 100))), Some(Scalar::Int(3)))
        .unwrap();
    assert_eq!(c.to_vec::<u8>().unwrap(), vec![0, 3, 3]);
    // Creation.
    let l = Array::linspace(0.0, 1.0, 5, true, DType::F64).unwrap();
    assert_eq!(l.to_vec::<f64>().unwrap(), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
    let l = Array::linspace(0.0, 1.0, 4, false, DType::F32).unwrap();
    assert_eq!(l.to_vec::<f32>().unwrap(), vec![0.0, 0.25, 0.5, 0.75]);
    assert_eq!(
        Array::linspace(2.0, 3.0, 1, true, DType::F64)
            .unwrap()
            .to_vec::<f64>()
            .unwrap(),
        vec![2.0]
    );
    assert_eq!(
        Array::linspace(2.0, 3.0, 0, true, DType::F64)
            .unwrap()
            .size(),
        0
    );
    let e = Array::eye(3, Some(4), 1, DType::I32).unwrap();
    assert_eq!(
        e.to_vec::<i32>().unwrap(),
        vec![0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]
    );
    assert_eq!(
        Array::eye(2, None, -5, DType::F32)
            .unwrap()
            .to_vec::<f32>()
            .unwrap(),
        vec![0.0; 4]
    );
    // Every diagonal of a 3 x 4 matrix, as NumPy's `eye(3, 4, k)`.
    for k in -4isize..=5 {
        let e = Array::eye(3, Some(4), k, DType::I32).unwrap();
        let want: Vec<i32> = (0..12).map(|p| i32::from(p % 4 - p / 4 == k)).collect();
        assert_eq!(e.to_vec::<i32>().unwrap(), want, "k = {k}");
    }
    // Rows the diagonal never crosses are not visited: 2^40 rows of nothing, at once.
    assert_eq!(
        Array::eye(1 << 40, Some(0), 0, DType::F32).unwrap().shape(),
        &[1 << 40, 0]
    );
    assert_eq!(
        Array::eye(0, Some(1 << 40), -3, DType::F32).unwrap().size(),
        0
    );
    // A sharded array's *_like keeps the sharding.
    let tpus: Vec<_> = dlarray::devices()
        .unwrap()
        .into_iter()
        .filter(|d| d.platform() == "tpu")
        .collect();
    let s = Array::zeros(&[8], DType::F32)
        .unwrap()
        .device_put(&Sharding::split(tpus, 0).unwrap())
        .unwrap();
    assert_eq!(s.ones_like().unwrap().sharding(), s.sharding());
}

#[test]
fn where_chooses_elementwise_with_broadcasting_and_promotion() {
    for dev in host_devices() {
        let c = Array::from_vec(vec![true, false, true, false, false, true], &[2, 3])
            .unwrap()
            .to_device(&dev)
            .unwrap();
        for &dtype in &DType::ALL {
            let xs = values(dtype, false);
            let x = from_scalars(&xs[..3], &[3], dtype, &dev);
            let y = from_scalars(&values(dtype, true)[..1], &[1], dtype, &dev);
            let got = c
                .where_cond(&x, &y)
                .unwrap_or_else(|e| panic!("where {dtype}: {e}"));
            assert_eq!(got.dtype(), dtype);
            let want: Vec<Scalar> = [0, 1, 2, 0, 1, 2]
                .iter()
                .zip([true, false, true, false, false, true])
                .map(|(&j, t)| if t { xs[j] } else { values(dtype, true)[0] })
                .collect();
            assert_close(
                &format!("where {dtype} on {dev}"),
                dtype,
                &to_scalars(&got),
                &want,
            );
        }
        // Promotion of the values, a non-bool condition refused, shapes checked.
        let i = Array::from_vec(vec![1i32, 2, 3], &[3])
            .unwrap()
            .to_device(&dev)
            .unwrap();
        let f = Array::from_vec(vec![0.5f64], &[1])
            .unwrap()
            .to_device(&dev)
            .unwrap();
        let r = c.where_cond(&i, &f).unwrap();
        assert_eq!(r.dtype(), DType::F64);
        assert_eq!(
            r.to_vec::<f64>().unwrap(),
            vec![1.0, 0.5, 3.0, 0.5, 0.5, 3.0]
        );
        assert!(matches!(
            i.where_cond(&i, &i),
            Err(dlarray::Error::DTypeMismatch { .. })
        ));
        let bad = Array::from_vec(vec![1i32, 2], &[2])
            .unwrap()
            .to_device(&dev)
            .unwrap();
        assert!(matches!(
            c.where_cond(&bad, &i),
            Err(dlarray::Error::ShapeMismatch { .. })
        ));
    }
}

#[test]
fn concatenate_stack_and_split() {
    for dev in host_and_wgpu_devices() {
        let a = Array::from_vec((0..6).map(|i| i as f32).collect::<Vec<_>>(), &[2, 3]).unwrap();
        // int16 promotes with float32 to float32 (NumPy); wgpu has no int16 kernels.
        let b = if dev.kernel_dtypes().contains(&DType::I16) {
            Array::from_vec(vec![10i16, 11, 12], &[1, 3]).unwrap()
        } else {
            Array::from_vec(vec![10f32, 11., 12.], &[1, 3]).unwrap()
        };
        let (a, b) = (a.to_device(&dev).unwrap(), b.to_device(&dev).unwrap());
        let c = Array::concatenate(&[&a, &b], 0).unwrap();
        assert_eq!(
            (c.shape(), c.dtype()),
            (&[3usize, 3][..], DType::F32),
            "{dev}"
        );
        assert_eq!(
            c.to_vec::<f32>().unwrap(),
            vec![0., 1., 2., 3., 4., 5., 10., 11., 12.]
        );
        // Along the last axis, with a transposed (strided) operand.
        let t = Array::concatenate(&[&a.t().unwrap(), &a.t().unwrap()], -1).unwrap();
        assert_eq!(t.shape(), &[3, 4]);
        assert_eq!(
            t.to_vec::<f32>().unwrap(),
            vec![0., 3., 0., 3., 1., 4., 1., 4., 2., 5., 2., 5.]
        );
        assert!(matches!(
            Array::concatenate(&[&a, &b.t().unwrap()], 0),
            Err(dlarray::Error::ShapeMismatch { .. })
        ));
        let s = Array::stack(&[&a, &a], 1).unwrap();
        assert_eq!(s.shape(), &[2, 2, 3]);
        assert_eq!(
            s.index_axis(1, 1).unwrap().to_vec::<f32>().unwrap(),
            a.to_vec::<f32>().unwrap()
        );
        let parts = c.split(3, 0).unwrap();
        assert_eq!(parts.len(), 3);
        assert_eq!(parts[2].to_vec::<f32>().unwrap(), vec![10., 11., 12.]);
        let uneven = c.split_at_indices(&[1, 5], 1).unwrap();
        assert_eq!(
            uneven.iter().map(|p| p.shape()[1]).collect::<Vec<_>>(),
            vec![1, 2, 0]
        );
        assert!(c.split(2, 0).is_err());
    }
}

/// Integer results as i64 on the CPU (wgpu computes them in 32 bits).
fn ints(a: dlarray::Result<Array>) -> dlarray::Result<Vec<i64>> {
    let cpu = dlarray::backends::get_device("cpu:0")?;
    a?.to_device(&cpu)?.astype(DType::I64)?.to_vec::<i64>()
}

#[test]
fn argmax_argmin_and_cumsum() {
    for dev in host_and_wgpu_devices() {
        let x = Array::from_vec(vec![3.0f32, 7.0, 7.0, -1.0, f32::NAN, 2.0], &[2, 3])
            .unwrap()
            .to_device(&dev)
            .unwrap();
        assert_eq!(ints(x.argmax(Some(1))).unwrap(), vec![1, 1], "{dev}");
        assert_eq!(ints(x.argmin(Some(1))).unwrap(), vec![0, 1], "{dev}");
        assert_eq!(ints(x.argmax(None)).unwrap(), vec![4]);
        assert_eq!(ints(x.argmin(Some(0))).unwrap(), vec![1, 1, 1]);
        let i = Array::from_vec(vec![5i32, -2, 9, 9], &[4])
            .unwrap()
            .to_device(&dev)
            .unwrap();
        assert_eq!(ints(i.argmax(Some(0))).unwrap(), vec![2]);
        assert!(
            Array::from_vec(Vec::<f32>::new(), &[0])
                .unwrap()
                .argmax(None)
                .is_err()
        );
        let c = i.cumsum(None).unwrap();
        assert!(matches!(c.dtype(), DType::I64 | DType::I32), "{dev}");
        assert_eq!(ints(Ok(c)).unwrap(), vec![5, 3, 12, 21]);
        let m = Array::from_vec((1..=10).collect::<Vec<u32>>(), &[2, 5])
            .unwrap()
            .to_device(&dev)
            .unwrap();
        assert_eq!(
            ints(m.cumsum(Some(1))).unwrap(),
            vec![1, 3, 6, 10, 15, 6, 13, 21, 30, 40]
        );
        assert_eq!(
            ints(m.cumsum(Some(0))).unwrap(),
            vec![1, 2, 3, 4, 5, 7, 9, 11, 13, 15]
        );
    }
}

/// max/min over long runs go through independent lanes: every element still counts, and a
/// NaN anywhere (in any lane, or in the tail) propagates.
#[test]
fn long_max_and_min_see_every_element_and_keep_nan() {
    for n in [15usize, 16, 17, 100, 1000, 1 << 17] {
        let v: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1013) as f32 - 500.0).collect();
        let a = Array::from_vec(v.clone(), &[n]).unwrap();
        let want_max = v.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
        let want_min = v.iter().cloned().fold(f32::INFINITY, f32::min);
        assert_eq!(
            a.max(Axes::All).unwrap().item::<f32>().unwrap(),
            want_max,
            "{n}"
        );
        assert_eq!(
            a.min(Axes::All).unwrap().item::<f32>().unwrap(),
            want_min,
            "{n}"
        );
        let ints: Vec<i32> = v.iter().map(|&x| x as i32).collect();
        let ai = Array::from_vec(ints, &[n]).unwrap();
        assert_eq!(
            ai.max(Axes::All).unwrap().item::<i32>().unwrap(),
            want_max as i32
        );
        for at in [0, n / 2, n - 1] {
            let mut w = v.clone();
            w[at] = f32::NAN;
            let a = Array::from_vec(w, &[n]).unwrap();
            assert!(
                a.max(Axes::All).unwrap().item::<f32>().unwrap().is_nan(),
                "{n} {at}"
            );
            assert!(
                a.min(Axes::All).unwrap().item::<f32>().unwrap().is_nan(),
                "{n} {at}"
            );
        }
    }
}

/// Shift counts at and past each width, and negative ones: 0 (or the sign, shifting a
/// negative value right), as NumPy's `left_shift`/`right_shift` give; Rust's and C's own
/// shifts are undefined or mask the count there.
#[test]
fn shifts_at_and_past_the_width() {
    let counts: [i128; 12] = [0, 1, 7, 8, 15, 16, 31, 32, 33, 63, 64, -1];
    for dev in host_devices() {
        for dtype in DType::ALL.into_iter().filter(|d| d.is_integer()) {
            let bits = 8 * dtype.size_in_bytes() as i128;
            let signed = dtype.kind() == dlarray::dtype::Kind::Int;
            for value in [1i128, 5, -3] {
                let value = if signed { value } else { value.abs() };
                let ns: Vec<Scalar> = counts
                    .iter()
                    .map(|&n| round_to(dtype, Scalar::Int(n)))
                    .collect();
                let xs = vec![Scalar::Int(value); ns.len()];
                let a = from_scalars(&xs, &[ns.len()], dtype, &dev);
                let n = from_scalars(&ns, &[ns.len()], dtype, &dev);
                for op in [BinaryOp::LeftShift, BinaryOp::RightShift] {
                    let want: Vec<Scalar> = ns
                        .iter()
                        .map(|c| {
                            let Scalar::Int(c) = *c else { unreachable!() };
                            let r = match op {
                                _ if !(0..bits).contains(&c) && op == BinaryOp::LeftShift => 0,
                                _ if !(0..bits).contains(&c) => -((value < 0) as i128),
                                BinaryOp::LeftShift => value << c,
                                _ => value >> c,
                            };
                            round_to(dtype, Scalar::Int(r))
                        })
                        .collect();
                    let got = a.binary(op, &n).unwrap();
                    assert_eq!(to_scalars(&got), want, "{op} {dtype} of {value} on {dev}");
                }
            }
        }
    }
}

#[test]
fn bitwise_ops_refuse_floats_and_shifts_refuse_bool() {
    let f = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    let b = Array::from_slice(&[true, false], &[2]).unwrap();
    let e = f.bitwise_and(&f).unwrap_err().to_string();
    assert!(e.contains("bitwise_and") && e.contains("float32"), "{e}");
    let e = b.left_shift(&b).unwrap_err().to_string();
    assert!(
        e.contains("bitwise_left_shift") && e.contains("integer"),
        "{e}"
    );
    let e = f.bitwise_invert().unwrap_err().to_string();
    assert!(e.contains("bitwise_invert"), "{e}");
    assert_eq!(
        to_scalars(&(&b & &b.bitwise_invert().unwrap()).unwrap()),
        vec![Scalar::Bool(false); 2]
    );
}

#[test]
fn tile_repeat_meshgrid_diff_tensordot_as_numpy() {
    let a = Array::from_vec(vec![1i32, 2, 3, 4], &[2, 2]).unwrap();
    let t = a.tile(&[2, 1, 2]).unwrap();
    assert_eq!(t.shape(), &[2, 2, 4]);
    assert_eq!(
        t.to_vec::<i32>().unwrap(),
        [1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2, 3, 4, 3, 4]
    );
    assert_eq!(
        a.tile(&[2]).unwrap().to_vec::<i32>().unwrap(),
        [1, 2, 1, 2, 3, 4, 3, 4]
    );
    let r = a.repeat(2, Some(0)).unwrap();
    assert_eq!(
        (r.shape(), r.to_vec::<i32>().unwrap()),
        (&[4usize, 2][..], vec![1, 2, 1, 2, 3, 4, 3, 4])
    );
    assert_eq!(
        a.repeat(3, None).unwrap().to_vec::<i32>().unwrap(),
        [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]
    );
    let x = Array::from_vec(vec![1.0f64, 2.0, 3.0], &[3]).unwrap();
    let y = Array::from_vec(vec![10.0f64, 20.0], &[2]).unwrap();
    let g = Array::meshgrid(&[&x, &y], "xy").unwrap();
    assert_eq!(g[0].shape(), &[2, 3]);
    assert_eq!(
        g[0].to_vec::<f64>().unwrap(),
        [1.0, 2.0, 3.0, 1.0, 2.0, 3.0]
    );
    assert_eq!(
        g[1].to_vec::<f64>().unwrap(),
        [10.0, 10.0, 10.0, 20.0, 20.0, 20.0]
    );
    let g = Array::meshgrid(&[&x, &y], "ij").unwrap();
    assert_eq!(g[1].shape(), &[3, 2]);
    assert!(Array::meshgrid(&[&a], "xy").is_err());
    let sq = Array::from_vec(vec![1i64, 4, 9, 16, 25], &[5]).unwrap();
    assert_eq!(
        sq.diff(1, -1, None, None).unwrap().to_vec::<i64>().unwrap(),
        [3, 5, 7, 9]
    );
    assert_eq!(
        sq.diff(2, 0, None, None).unwrap().to_vec::<i64>().unwrap(),
        [2, 2, 2]
    );
    let pre = Array::from_vec(vec![0i64], &[1]).unwrap();
    assert_eq!(
        sq.diff(1, 0, Some(&pre), None)
            .unwrap()
            .to_vec::<i64>()
            .unwrap(),
        [1, 3, 5, 7, 9]
    );
    let m = Array::arange(0.0, 24.0, 1.0, DType::F64)
        .unwrap()
        .reshape(&[2, 3, 4])
        .unwrap();
    let n = Array::arange(0.0, 60.0, 1.0, DType::F64)
        .unwrap()
        .reshape(&[3, 4, 5])
        .unwrap();
    let td = m.tensordot(&n, &[1, 2], &[0, 1]).unwrap();
    assert_eq!(td.shape(), &[2, 5]);
    // The same as summing the products by hand.
    let (mv, nv) = (m.to_vec::<f64>().unwrap(), n.to_vec::<f64>().unwrap());
    let want: Vec<f64> = (0..2)
        .flat_map(|i| (0..5).map(move |l| (i, l)))
        .map(|(i, l)| (0..12).map(|jk| mv[i * 12 + jk] * nv[jk * 5 + l]).sum())
        .collect();
    assert_eq!(td.to_vec::<f64>().unwrap(), want);
    assert!(m.tensordot(&n, &[0], &[0]).is_err());
}

#[test]
fn any_and_all_over_nothing() {
    let e = Array::zeros(&[0, 3], DType::F32).unwrap();
    assert_eq!(
        e.any(dlarray::Axes::All).unwrap().to_vec::<bool>().unwrap(),
        [false]
    );
    assert_eq!(
        e.all(dlarray::Axes::All).unwrap().to_vec::<bool>().unwrap(),
        [true]
    );
    assert_eq!(
        e.all(vec![0]).unwrap().to_vec::<bool>().unwrap(),
        [true, true, true]
    );
    assert_eq!(e.any(vec![1]).unwrap().shape(), &[0]);
}

#[test]
fn sort_argsort_searchsorted_unique_isin_as_numpy() {
    let nan = f64::NAN;
    let x = Array::from_vec(vec![3.0, nan, -1.0, 3.0, 0.0, -0.0], &[6]).unwrap();
    let s = x.sort(-1, false).unwrap().to_vec::<f64>().unwrap();
    assert_eq!(&s[..5], &[-1.0, 0.0, -0.0, 3.0, 3.0]);
    assert!(s[5].is_nan());
    // Stable: equal keys keep their order (0.0 at 4 before -0.0 at 5; 3.0 at 0 before 3).
    assert_eq!(
        x.argsort(-1, false).unwrap().to_vec::<i64>().unwrap(),
        [2, 4, 5, 0, 3, 1]
    );
    assert_eq!(
        x.argsort(0, true).unwrap().to_vec::<i64>().unwrap(),
        [1, 0, 3, 4, 5, 2]
    );
    let m = Array::from_vec(vec![3i32, 1, 2, 9, 7, 8], &[2, 3]).unwrap();
    assert_eq!(
        m.sort(1, false).unwrap().to_vec::<i32>().unwrap(),
        [1, 2, 3, 7, 8, 9]
    );
    assert_eq!(
        m.sort(0, true).unwrap().to_vec::<i32>().unwrap(),
        [9, 7, 8, 3, 1, 2]
    );
    let sorted = Array::from_vec(vec![1i64, 2, 2, 5], &[4]).unwrap();
    let v = Array::from_vec(vec![2i64, 0, 6, 5], &[4]).unwrap();
    assert_eq!(
        sorted
            .searchsorted(&v, false)
            .unwrap()
            .to_vec::<i64>()
            .unwrap(),
        [1, 0, 4, 3]
    );
    assert_eq!(
        sorted
            .searchsorted(&v, true)
            .unwrap()
            .to_vec::<i64>()
            .unwrap(),
        [3, 0, 4, 4]
    );
    let u = Array::from_vec(vec![2u8, 1, 2, 3, 1, 2], &[2, 3]).unwrap();
    let [values, first, inverse, counts] = u.unique_all().unwrap();
    assert_eq!(values.to_vec::<u8>().unwrap(), [1, 2, 3]);
    assert_eq!(first.to_vec::<i64>().unwrap(), [1, 0, 3]);
    assert_eq!(inverse.shape(), &[2, 3]);
    assert_eq!(inverse.to_vec::<i64>().unwrap(), [1, 0, 1, 2, 0, 1]);
    assert_eq!(counts.to_vec::<i64>().unwrap(), [2, 3, 1]);
    let [nans, ..] = Array::from_vec(vec![nan, 1.0, nan], &[3])
        .unwrap()
        .unique_all()
        .unwrap();
    assert_eq!(
        nans.size(),
        3,
        "each NaN is distinct, as the array API has it"
    );
    let t = Array::from_vec(vec![2u8, 3], &[2]).unwrap();
    assert_eq!(
        u.isin(&t, false).unwrap().to_vec::<bool>().unwrap(),
        [true, false, true, true, false, true]
    );
    assert!(u.isin(&t, true).unwrap().to_vec::<bool>().unwrap()[1]);
}

#[test]
fn take_take_along_axis_and_nonzero() {
    let a = Array::arange(0.0, 12.0, 1.0, DType::I32)
        .unwrap()
        .reshape(&[3, 4])
        .unwrap();
    let i = Array::from_vec(vec![2i64, -1, 0], &[3]).unwrap();
    let t = a.take(&i, Some(1)).unwrap();
    assert_eq!(t.shape(), &[3, 3]);
    assert_eq!(t.to_vec::<i32>().unwrap(), [2, 3, 0, 6, 7, 4, 10, 11, 8]);
    assert_eq!(
        a.take(&i, Some(0)).unwrap().to_vec::<i32>().unwrap()[..4],
        [8, 9, 10, 11]
    );
    let bad = Array::from_vec(vec![4i64], &[1]).unwrap();
    assert!(matches!(
        a.take(&bad, Some(1)),
        Err(Error::IndexOutOfRange { .. })
    ));
    assert!(a.take(&i, None).is_err());
    let idx = a.argsort(1, true).unwrap();
    let back = a.take_along_axis(&idx, 1).unwrap();
    assert_eq!(
        back.to_vec::<i32>().unwrap(),
        a.sort(1, true).unwrap().to_vec::<i32>().unwrap()
    );
    let z = Array::from_vec(vec![0i32, 3, 0, 0, 5, 6], &[2, 3]).unwrap();
    let nz = z.nonzero().unwrap();
    assert_eq!(nz[0].to_vec::<i64>().unwrap(), [0, 1, 1]);
    assert_eq!(nz[1].to_vec::<i64>().unwrap(), [1, 1, 2]);
    assert!(Array::from_vec(vec![1i32], &[]).unwrap().nonzero().is_err());
}

/// Views of one vector starting `skip` elements in: contiguous operands at every misalignment
/// a vector can have, so the kernels' aligned-output path (an output shifted to the operands'
/// misalignment, its head peeled) is checked at every offset and length around the vector
/// width and the sizes where it stops.
#[test]
fn elementwise_ops_over_misaligned_operands_compute_every_element() {
    let lens = (0..=70).chain([1023, 1024, 1025, 2047, 2048, 2049, 4100]);
    for len in lens {
        for skip in 0..9usize {
            let n = len + skip;
            let a = Array::from_vec((0..n).map(|i| i as f32 * 0.5).collect(), &[n]).unwrap();
            let b = Array::from_vec((0..n).map(|i| (i % 7) as f32).collect(), &[n]).unwrap();
            let view = |x: &Array| {
                x.slice(&[dlarray::Slice::with_step(skip as isize, n as isize, 1)])
                    .unwrap()
            };
            let (va, vb) = (view(&a), view(&b));
            let want: Vec<f32> = (skip..n).map(|i| i as f32 * 0.5 + (i % 7) as f32).collect();
            let sum = (&va + &vb).unwrap();
            assert_eq!(sum.to_vec::<f32>().unwrap(), want, "len {len} skip {skip}");
            let neg: Vec<f32> = va.unary(UnaryOp::Neg).unwrap().to_vec().unwrap();
            let want_neg: Vec<f32> = (skip..n).map(|i| -(i as f32 * 0.5)).collect();
            assert_eq!(neg, want_neg, "len {len} skip {skip}");
            let lt: Vec<bool> = va.binary(BinaryOp::Lt, &vb).unwrap().to_vec().unwrap();
            let want_lt: Vec<bool> = (skip..n)
                .map(|i| (i as f32 * 0.5) < (i % 7) as f32)
                .collect();
            assert_eq!(lt, want_lt, "len {len} skip {skip}");
            // A shifted result is still element-aligned, and an operand of the next op.
            if len > 0 {
                assert_eq!(sum.unsafe_buffer_pointer().unwrap() % 4, 0);
                let twice = (&sum + &sum).unwrap().to_vec::<f32>().unwrap();
                assert_eq!(twice, want.iter().map(|v| v * 2.0).collect::<Vec<_>>());
            }
        }
    }
    // Other widths: bytes (any address is element-aligned) and complex (8-byte elements,
    // 4-byte aligned), at every byte offset within a vector.
    for skip in 0..40usize {
        let n = 1000 + skip;
        let x = Array::from_vec((0..n).map(|i| (i % 100) as i8).collect(), &[n]).unwrap();
        let v = x
            .slice(&[dlarray::Slice::with_step(skip as isize, n as isize, 1)])
            .unwrap();
        let got: Vec<i8> = (&v + &v).unwrap().to_vec().unwrap();
        let want: Vec<i8> = (skip..n)
            .map(|i| ((i % 100) as i8).wrapping_mul(2))
            .collect();
        assert_eq!(got, want, "i8 skip {skip}");
    }
    let c = Array::from_vec(
        (0..600)
            .map(|i| dlarray::dtype::Complex32::new(i as f32, 1.0))
            .collect(),
        &[600],
    )
    .unwrap();
    for skip in 0..5isize {
        let v = c.slice(&[dlarray::Slice::with_step(skip, 600, 1)]).unwrap();
        let got: Vec<dlarray::dtype::Complex32> = (&v + &v).unwrap().to_vec().unwrap();
        let want: Vec<_> = (skip..600)
            .map(|i| dlarray::dtype::Complex32::new(2.0 * i as f32, 2.0))
            .collect();
        assert_eq!(got, want, "complex64 skip {skip}");
    }
}

/// float16's and bfloat16's exp over all 65,536 values: the contiguous path (blocks widened
/// to float32) gives the same bits as the strided path (element by element) and as the C
/// library's `expf` rounded to the half type, over lengths that end mid-block and split
/// across threads.
#[test]
fn half_float_exp_blocks_match_the_element_path_on_every_value() {
    use dlarray::dtype::{bf16, f16};
    check_half_exp(
        f16::from_bits,
        |x: f16| x.to_bits(),
        f16::to_f32,
        f16::from_f32,
    );
    check_half_exp(
        bf16::from_bits,
        |x: bf16| x.to_bits(),
        bf16::to_f32,
        bf16::from_f32,
    );
}

fn check_half_exp<T: dlarray::Element>(
    from_bits: fn(u16) -> T,
    to_bits: fn(T) -> u16,
    widen: fn(T) -> f32,
    narrow: fn(f32) -> T,
) {
    use dlarray::Slice;
    let all: Vec<T> = (0..=u16::MAX).map(from_bits).collect();
    let twice: Vec<T> = all.iter().flat_map(|&v| [v, v]).collect();
    let want: Vec<T> = all.iter().map(|&v| narrow(widen(v).exp())).collect();
    // Every NaN as one value: which NaN comes out is not specified.
    let bits = |v: &[T]| -> Vec<u32> {
        v.iter()
            .map(|&x| {
                if widen(x).is_nan() {
                    u32::MAX
                } else {
                    to_bits(x).into()
                }
            })
            .collect()
    };
    for n in [0, 1, 511, 513, 65_536] {
        let dense = Array::from_vec(all[..n].to_vec(), &[n]).unwrap();
        let strided = Array::from_vec(twice[..2 * n].to_vec(), &[2 * n])
            .unwrap()
            .slice(&[Slice::with_step(0, 2 * n as isize, 2)])
            .unwrap();
        let got = dense.unary(UnaryOp::Exp).unwrap().to_vec::<T>().unwrap();
        let element = strided.unary(UnaryOp::Exp).unwrap().to_vec::<T>().unwrap();
        assert_eq!(
            bits(&got),
            bits(&want[..n]),
            "blocks, {:?}, n = {n}",
            T::DTYPE
        );
        assert_eq!(
            bits(&element),
            bits(&want[..n]),
            "elements, {:?}, n = {n}",
            T::DTYPE
        );
    }
}

/// A float32 sum of a mid-size array (128-512 KiB, where the host device splits over its
/// threads only when its helpers are awake) is the same bits alone, in a loop, and after the
/// helpers went back to sleep: the chunks, and so the partial sums, depend on the size only.
#[test]
fn mid_size_sums_are_the_same_bits_whether_or_not_helpers_take_part() {
    let cpu = cpu();
    for n in [40_000usize, 100_000] {
        // Values whose float32 sum depends on the order it is taken in.
        let xs: Vec<f32> = (0..n)
            .map(|i| ((i * 7919 % 10007) as f32 - 5000.0) * 1.37e-3 + (i % 3) as f32 * 1e4)
            .collect();
        let a = Array::from_vec(xs, &[n]).unwrap().to_device(&cpu).unwrap();
        let bits = |a: &Array| a.sum(Axes::All).unwrap().to_vec::<f32>().unwrap()[0].to_bits();
        // After an idle spell the first sum runs alone; the next ones form a loop.
        std::thread::sleep(std::time::Duration::from_millis(20));
        let first = bits(&a);
        for _ in 0..20 {
            assert_eq!(bits(&a), first, "{n} elements");
        }
        // Right after a large op, whose helpers still poll.
        let big = Array::zeros(&[1 << 20], DType::F32)
            .unwrap()
            .to_device(&cpu)
            .unwrap();
        for _ in 0..20 {
            let _ = (&big + &big).unwrap();
            assert_eq!(bits(&a), first, "{n} elements after a large op");
        }
        // A reduction over an axis of a 2-d view takes the same path.
        let m = a.reshape(&[1, n as isize]).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let row = m
            .sum(Axes::These(vec![1]))
            .unwrap()
            .to_vec::<f32>()
            .unwrap()[0]
            .to_bits();
        assert_eq!(row, first, "{n} elements over an axis");
        // Many outputs (rows of 250), split by output: each row's sum is the same bits alone,
        // in a loop, and near its exact value.
        let rows = a.reshape(&[(n / 250) as isize, 250]).unwrap();
        let sums = |a: &Array| {
            a.sum(Axes::These(vec![1]))
                .unwrap()
                .to_vec::<f32>()
                .unwrap()
        };
        std::thread::sleep(std::time::Duration::from_millis(20));
        let alone = sums(&rows);
        for _ in 0..20 {
            assert_eq!(sums(&rows), alone, "{n} elements in rows of 250");
        }
        let host = a.to_vec::<f32>().unwrap();
        for (r, (got, xs)) in alone.iter().zip(host.chunks(250)).enumerate() {
            let exact: f64 = xs.iter().map(|&x| f64::from(x)).sum();
            assert!(
                (f64::from(*got) - exact).abs()
                    <= 1e-5 * xs.iter().map(|x| x.abs() as f64).sum::<f64>(),
                "row {r}: {got} against {exact}"
            );
        }
    }
}

/// An op's result on one device is one shard holding the whole array: its region is
/// `0..n` along every axis, for every rank (up to four built inline, more collected).
#[test]
fn single_device_results_hold_the_whole_region_at_every_rank() {
    for shape in [
        vec![],
        vec![3],
        vec![2, 0],
        vec![2, 3, 1],
        vec![1, 2, 3, 2],
        vec![2, 1, 3, 1, 2],
        vec![1, 2, 1, 2, 1, 2, 3],
    ] {
        let n: usize = shape.iter().product();
        let a = Array::from_vec((0..n).map(|i| i as f32).collect(), &shape).unwrap();
        let b = (&a + &a).unwrap();
        let shards = b.addressable_shards();
        assert_eq!(shards.len(), 1, "{shape:?}");
        let want: Vec<_> = shape.iter().map(|&d| 0..d).collect();
        assert_eq!(shards[0].index(), &want[..], "{shape:?}");
        let doubled: Vec<f32> = (0..n).map(|i| 2.0 * i as f32).collect();
        assert_eq!(b.to_vec::<f32>().unwrap(), doubled, "{shape:?}");
        assert_eq!(b.shape(), &shape[..], "{shape:?}");
    }
}

/// Complex division as NumPy's (Smith's method), on every host device: quotients of large
/// and small numbers (whose |b|^2 overflows or underflows), zero divisors and infinite ones.
#[test]
fn complex_division_scales_as_numpy() {
    use dlarray::dtype::Complex32;
    let inf = f64::INFINITY;
    let cases: [(Complex64, Complex64, Complex64); 6] = [
        (
            Complex64::new(1e200, 1e200),
            Complex64::new(1e200, 1e200),
            Complex64::new(1.0, 0.0),
        ),
        (
            Complex64::new(1e-200, 1e-200),
            Complex64::new(1e-200, 1e-200),
            Complex64::new(1.0, 0.0),
        ),
        (
            Complex64::new(1.0, 1.0),
            Complex64::new(1e200, -1e200),
            Complex64::new(0.0, 1e-200),
        ),
        (
            Complex64::new(2.0, 3.0),
            Complex64::new(inf, 1.0),
            Complex64::new(0.0, 0.0),
        ),
        (
            Complex64::new(1.0, 1.0),
            Complex64::new(0.0, 0.0),
            Complex64::new(inf, inf),
        ),
        (
            Complex64::new(-3.0, 4.0),
            Complex64::new(0.0, 2.0),
            Complex64::new(2.0, 1.5),
        ),
    ];
    for device in dlarray::devices().unwrap() {
        if device.platform() == "wgpu" {
            continue; // no complex dtypes there
        }
        let (n, d): (Vec<_>, Vec<_>) = cases.iter().map(|&(a, b, _)| (a, b)).unzip();
        let na = Array::from_slice_on(&n, &[6], &device).unwrap();
        let da = Array::from_slice_on(&d, &[6], &device).unwrap();
        let q = (&na / &da).unwrap().to_vec::<Complex64>().unwrap();
        for (got, (a, b, want)) in q.iter().zip(&cases) {
            let close = |x: f64, y: f64| x == y || (x - y).abs() <= 1e-15 * y.abs();
            assert!(
                close(got.re, want.re) && close(got.im, want.im),
                "{a} / {b} = {got} on {device}"
            );
        }
        // complex64: |b|^2 of 1e30 overflows float32 (this was NaN).
        let big = Complex32::new(1e30, 1e30);
        let a = Array::from_slice_on(&[big, Complex32::new(1e-30, -1e-30)], &[2], &device).unwrap();
        let q = (&a / &a).unwrap().to_vec::<Complex32>().unwrap();
        assert_eq!(q, [Complex32::new(1.0, 0.0); 2], "on {device}");
    }
}

/// Two bools: `+` and maximum are `or`, `*` and minimum `and`, floor division, remainder and
/// powers compute in int8, as NumPy, PyTorch and JAX have them; subtraction is refused.
#[test]
fn bool_arithmetic_as_numpy() {
    for device in dlarray::devices().unwrap() {
        bool_arithmetic_on(&device);
    }
}

fn bool_arithmetic_on(device: &Device) {
    let p = Array::from_slice_on(&[true, true, false, false], &[4], device).unwrap();
    let q = Array::from_slice_on(&[true, false, true, false], &[4], device).unwrap();
    let bools = |op| {
        let r = p.binary(op, &q).unwrap();
        assert_eq!(r.dtype(), DType::Bool, "{op:?} on {device}");
        r.to_vec::<bool>().unwrap()
    };
    assert_eq!(bools(BinaryOp::Add), [true, true, true, false]);
    assert_eq!(bools(BinaryOp::Maximum), [true, true, true, false]);
    assert_eq!(bools(BinaryOp::Mul), [true, false, false, false]);
    assert_eq!(bools(BinaryOp::Minimum), [true, false, false, false]);
    let ints = |op| {
        let r = p.binary(op, &q).unwrap();
        assert_eq!(r.dtype(), DType::I8, "{op:?} on {device}");
        r.to_vec::<i8>().unwrap()
    };
    // NumPy: integer division by zero is 0.
    assert_eq!(ints(BinaryOp::FloorDivide), [1, 0, 0, 0]);
    assert_eq!(ints(BinaryOp::Remainder), [0, 0, 0, 0]);
    assert_eq!(ints(BinaryOp::Pow), [1, 1, 0, 1]);
    let with_scalar = (&p + true).unwrap();
    assert_eq!(with_scalar.to_vec::<bool>().unwrap(), [true; 4]);
    assert!(p.binary(BinaryOp::Sub, &q).is_err());
}

/// An integer outside the array's range: an error in arithmetic, one answer for every
/// element in a comparison (NumPy 2's), whichever side the scalar is on.
#[test]
fn comparisons_with_out_of_range_integers_answer() {
    let u = Array::from_vec(vec![0u8, 200], &[2]).unwrap();
    let cmp = |op, v: i64, first| {
        let r = u.binary_scalar(op, Scalar::Int(v.into()), first).unwrap();
        assert_eq!((r.dtype(), r.shape()), (DType::Bool, &[2][..]));
        r.to_vec::<bool>().unwrap()[0]
    };
    use BinaryOp::*;
    for (v, first, lt, le, gt, ge) in [
        (300, false, true, true, false, false), // x < 300
        (-1, false, false, false, true, true),  // x > -1
        (300, true, false, false, true, true),  // 300 > x
        (-1, true, true, true, false, false),   // -1 < x
    ] {
        let got = [
            cmp(Lt, v, first),
            cmp(Le, v, first),
            cmp(Gt, v, first),
            cmp(Ge, v, first),
        ];
        assert_eq!(got, [lt, le, gt, ge], "{v} first={first}");
        assert!(!cmp(Eq, v, first) && cmp(Ne, v, first));
    }
    assert!(u.binary_scalar(Add, Scalar::Int(300), false).is_err());
}

/// The array API's `expm1(±0 + 0j) = 0 + 0j` (and its conjugate): the real part is +0 for
/// either zero, the imaginary part keeps its sign. `expm1(-0) * cos(0) - 0` alone is -0.
#[test]
fn complex_expm1_of_signed_zeros() {
    use dlarray::dtype::Complex32;
    let zeros = [(0.0, 0.0), (-0.0, 0.0), (0.0, -0.0), (-0.0, -0.0)];
    for device in dlarray::devices().unwrap() {
        if device.platform() == "wgpu" {
            continue; // no complex dtypes there
        }
        let z: Vec<Complex64> = zeros.iter().map(|&(r, i)| Complex64::new(r, i)).collect();
        let got = Array::from_slice_on(&z, &[4], &device)
            .unwrap()
            .expm1()
            .unwrap();
        let got32 = Array::from_slice_on(
            &z.iter()
                .map(|c| Complex32::new(c.re as f32, c.im as f32))
                .collect::<Vec<_>>(),
            &[4],
            &device,
        )
        .unwrap()
        .expm1()
        .unwrap()
        .to_vec::<Complex32>()
        .unwrap();
        for ((g, g32), &(_, im)) in got
            .to_vec::<Complex64>()
            .unwrap()
            .iter()
            .zip(&got32)
            .zip(&zeros)
        {
            for (re, gi) in [(g.re, g.im), (g32.re as f64, g32.im as f64)] {
                assert!(
                    re == 0.0 && re.is_sign_positive(),
                    "real part {re} on {device}"
                );
                assert!(
                    gi == 0.0 && gi.is_sign_negative() == im.is_sign_negative(),
                    "{device}"
                );
            }
        }
    }
}

/// Edges found against NumPy: integer powers over the whole exponent (modulo 2^bits),
/// asinh and acosh of the largest floats, the mean of half floats.
#[test]
fn integer_powers_large_asinh_and_half_means_as_numpy() {
    // 3^(2^64 - 2) mod 2^64, as Python's pow(3, 2**64 - 2, 2**64) and NumPy give it.
    let b = Array::from_vec(vec![3u64, 7, u64::MAX], &[3]).unwrap();
    let e = Array::from_vec(vec![u64::MAX - 1; 3], &[3]).unwrap();
    assert_eq!(
        b.pow(&e).unwrap().to_vec::<u64>().unwrap(),
        [10248191152060862009, 9035139954469984465, 1]
    );
    let b = Array::from_vec(vec![3i64, -3], &[2]).unwrap();
    let e = Array::from_vec(vec![i64::MAX; 2], &[2]).unwrap();
    // pow(3, 2**63 - 1, 2**64) = 12297829382473034411, i.e. -6148914691236517205 as i64.
    assert_eq!(
        b.pow(&e).unwrap().to_vec::<i64>().unwrap(),
        [-6148914691236517205, 6148914691236517205]
    );
    let x = Array::from_vec(vec![f64::MAX, -f64::MAX, 1e300], &[3]).unwrap();
    let a = x.asinh().unwrap().to_vec::<f64>().unwrap();
    assert!((a[0] - 710.475_860_073_943_9).abs() < 1e-12, "{a:?}");
    assert_eq!(a[1], -a[0]);
    assert!((a[2] - (2f64.ln() + 1e300f64.ln())).abs() < 1e-10, "{a:?}");
    let c = x.acosh().unwrap().to_vec::<f64>().unwrap();
    assert!(
        (c[0] - 710.475_860_073_943_9).abs() < 1e-12 && c[1].is_nan(),
        "{c:?}"
    );
    let f = Array::from_vec(vec![f32::MAX], &[1]).unwrap();
    assert!((f.asinh().unwrap().to_vec::<f32>().unwrap()[0] - 89.415_985).abs() < 1e-4);
    let h = Array::from_vec(vec![half::f16::MAX, half::f16::from_f32(10000.0)], &[2]).unwrap();
    let m = h.mean(Axes::All).unwrap();
    assert_eq!(m.dtype(), DType::F16);
    assert_eq!(m.to_vec::<half::f16>().unwrap()[0].to_f32(), 37760.0);
}
