//! Arrays with Rust scalars: `&a * 2.0`, `2.0 * &a`, `&a + 1i32`, with NumPy 2's promotion of
//! Python scalars (NEP 50): a scalar is *weak*. It takes the array's dtype when its kind fits
//! (an integer with an integer array, a float with a float array: `f32 * 2.0` stays f32, `u8
//! + 1` stays u8), and otherwise the default dtype of its kind (`i32 * 2.5` is f64; a complex
//! scalar with an f32 array gives complex64). An integer out of the array's range is an error,
//! as NumPy's `OverflowError`, never a silent wrap; except in a comparison, which has one
//! answer for every element (`u8 == -1` is all false, `u8 < 300` all true), as NumPy 2's.

use super::Array;
use super::sharding::Sharding;
use crate::backends::BinaryOp;
use crate::dtype::{DType, Element, Kind, Scalar};
use crate::error::{Error, Result};

/// The dtype a weak scalar `s` takes against an array of dtype `array`.
pub fn weak_scalar_dtype(array: DType, s: Scalar) -> DType {
    let kind = match s {
        Scalar::Bool(_) => Kind::Bool,
        Scalar::Int(_) => Kind::Int,
        Scalar::Float(_) => Kind::Float,
        Scalar::Complex(_) => Kind::Complex,
    };
    let a = match array.kind() {
        Kind::UInt => Kind::Int, // one kind for promotion with a weak integer
        k => k,
    };
    if kind <= a {
        return array;
    }
    match kind {
        Kind::Bool => DType::Bool,
        Kind::Int | Kind::UInt => DType::I64,
        Kind::Float => DType::F64,
        Kind::Complex if array == DType::F64 => DType::Complex128,
        Kind::Complex if array.is_float() => DType::Complex64,
        Kind::Complex => DType::Complex128,
    }
}

/// The dtype a weak scalar `s` takes as an operand of `op` beside an array of dtype `array`:
/// [`weak_scalar_dtype`], except that ops computing integers in float64 (true division,
/// atan2, ...) take an integer as float64 too, whatever its range: NumPy's `uint8_array / -2`
/// is float64, not an overflow of uint8.
pub fn weak_operand_dtype(array: DType, op: BinaryOp, s: Scalar) -> DType {
    let dtype = weak_scalar_dtype(array, s);
    if (op == BinaryOp::Div || op.is_real_float()) && dtype.is_integer() {
        return DType::F64;
    }
    dtype
}

/// Where an integer scalar `s` falls outside the range of the integer `dtype` it was given:
/// `Less` below, `Greater` above; `None` when it fits (or either is not an integer).
pub fn int_overflow(dtype: DType, s: Scalar) -> Option<std::cmp::Ordering> {
    let Scalar::Int(i) = s else { return None };
    if !dtype.is_integer() {
        return None;
    }
    let fits = crate::with_dtype!(dtype, T => T::from_scalar(s).to_scalar() == Scalar::Int(i));
    // Every integer dtype's range holds 0: a value outside it lies on its own sign's side.
    (!fits).then(|| i.cmp(&0))
}

/// What every element of an integer array compares as against an integer outside its
/// range, on `side` of it (`None` for an op that is no comparison): `x < v` and `x <= v`
/// hold for every `x` when `v` is above the range, and so on.
fn out_of_range_comparison(
    op: BinaryOp,
    side: std::cmp::Ordering,
    scalar_first: bool,
) -> Option<bool> {
    use BinaryOp::*;
    let above = side == std::cmp::Ordering::Greater;
    match (op, scalar_first) {
        (Eq, _) => Some(false),
        (Ne, _) => Some(true),
        // `x < v` (and `v > x`) holds for every `x` when `v` is above the range.
        (Lt | Le, false) | (Gt | Ge, true) => Some(above),
        (Gt | Ge, false) | (Lt | Le, true) => Some(!above),
        _ => None,
    }
}

impl Array {
    /// `op(self, value)` (or `op(value, self)` when `scalar_first`) with `value` a weak
    /// scalar (see the module docs). The scalar is made on this array's first device.
    pub fn binary_scalar(&self, op: BinaryOp, value: Scalar, scalar_first: bool) -> Result<Array> {
        let mut dtype = weak_operand_dtype(self.dtype(), op, value);
        if dtype != self.dtype() {
            // A float scalar with an integer array, a true division, an int with a bool
            // array: 32 bits where the devices have no 64-bit kernels (see `Array::binary`).
            // A comparison stays exact: an int outside int32 is answered below, as any
            // int outside the array's range.
            dtype = self.on_devices(dtype);
        }
        if let (Scalar::Int(i), Some(side)) = (value, int_overflow(dtype, value)) {
            if let Some(answer) = out_of_range_comparison(op, side, scalar_first) {
                let all = Scalar::Bool(answer);
                return Array::full_sharded(self.shape(), all, DType::Bool, self.sharding());
            }
            return Err(Error::invalid(format!(
                "integer {i} is out of bounds for {dtype} (the array's dtype); convert the \
                 array first, e.g. a.astype(DType::I64)"
            )));
        }
        let device = self
            .devices()
            .into_iter()
            .next()
            .ok_or_else(|| Error::invalid("array has no device"))?;
        // In the array's memory kind: a scalar in another kind would move the result there.
        let s = Array::full_sharded(
            &[],
            value,
            dtype,
            &Sharding::SingleDevice(device, self.memory_kind()),
        )?;
        if scalar_first {
            s.binary(op, self)
        } else {
            self.binary(op, &s)
        }
    }
}

// `array op scalar`: one generic impl, so a bare literal (`2.0`, `1`) needs no annotation:
// the output type is known whatever the literal becomes.
macro_rules! array_op_scalar {
    ($($tr:ident $m:ident => $op:ident),*) => {$(
        impl<T: Element> std::ops::$tr<T> for &Array {
            type Output = Result<Array>;
            fn $m(self, rhs: T) -> Result<Array> {
                self.binary_scalar(BinaryOp::$op, rhs.to_scalar(), false)
            }
        }
        impl<T: Element> std::ops::$tr<T> for Array {
            type Output = Result<Array>;
            fn $m(self, rhs: T) -> Result<Array> {
                self.binary_scalar(BinaryOp::$op, rhs.to_scalar(), false)
            }
        }
    )*};
}
array_op_scalar!(Add add => Add, Sub sub => Sub, Mul mul => Mul, Div div => Div);

// `scalar op array`: the orphan rule wants one impl per scalar type, and two float (or two
// integer) types would make a bare literal ambiguous. So: `f64` for float literals and `i32`
// for integer ones (Rust's own defaults); the scalar is weak either way, so its Rust type
// does not change the result's dtype.
macro_rules! scalar_op_array {
    ($($t:ty),*) => {$(
        scalar_op_array!(@one $t, Add add => Add, Sub sub => Sub, Mul mul => Mul, Div div => Div);
    )*};
    (@one $t:ty, $($tr:ident $m:ident => $op:ident),*) => {$(
        impl std::ops::$tr<&Array> for $t {
            type Output = Result<Array>;
            fn $m(self, rhs: &Array) -> Result<Array> {
                rhs.binary_scalar(BinaryOp::$op, self.to_scalar(), true)
            }
        }
        impl std::ops::$tr<Array> for $t {
            type Output = Result<Array>;
            fn $m(self, rhs: Array) -> Result<Array> {
                rhs.binary_scalar(BinaryOp::$op, self.to_scalar(), true)
            }
        }
    )*};
}
scalar_op_array!(f64, i32);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nep50_weak_scalars() {
        use DType::*;
        let w = |a, s| weak_scalar_dtype(a, s);
        assert_eq!(w(F32, Scalar::Float(2.0)), F32);
        assert_eq!(w(F16, Scalar::Int(3)), F16);
        assert_eq!(w(U8, Scalar::Int(1)), U8);
        assert_eq!(w(I32, Scalar::Float(2.5)), F64);
        assert_eq!(w(Bool, Scalar::Int(1)), I64);
        assert_eq!(
            w(F32, Scalar::Complex(crate::dtype::Complex64::new(0.0, 1.0))),
            Complex64
        );
        assert_eq!(
            w(F64, Scalar::Complex(crate::dtype::Complex64::new(0.0, 1.0))),
            Complex128
        );
        assert_eq!(w(Complex64, Scalar::Float(1.0)), Complex64);
        assert_eq!(w(I8, Scalar::Bool(true)), I8);
    }
}
