//! Per-element arithmetic for every dtype, as traits the kernels are generic over.
//! Integers wrap (as NumPy's do); half floats compute in f32; max/min propagate NaN.

use super::f32_via_f64 as via;
use super::inv_trigf as inv;
use crate::dtype::Element;
use half::{bf16, f16};
use num_complex::{Complex32, Complex64};

/// Arithmetic: every dtype except bool.
pub(crate) trait Arith: Element {
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
    fn pow(self, o: Self) -> Self;
    fn neg(self) -> Self;
    const ZERO: Self;
    const ONE: Self;
}

/// Ordered numbers (integers and floats): max, min, abs.
pub(crate) trait Real: Arith + PartialOrd {
    fn max_(self, o: Self) -> Self;
    fn min_(self, o: Self) -> Self;
    fn abs_(self) -> Self;
    /// Identities of max and min reductions.
    const LOWEST: Self;
    const HIGHEST: Self;
}

/// Floats and complex numbers: the transcendental functions.
pub(crate) trait Transcendental: Arith {
    fn exp_(self) -> Self;
    fn ln_(self) -> Self;
    fn sqrt_(self) -> Self;
    fn sin_(self) -> Self;
    fn cos_(self) -> Self;
    fn tan_(self) -> Self;
    fn tanh_(self) -> Self;
    fn asin_(self) -> Self;
    fn acos_(self) -> Self;
    fn atan_(self) -> Self;
    fn sinh_(self) -> Self;
    fn cosh_(self) -> Self;
    fn asinh_(self) -> Self;
    fn acosh_(self) -> Self;
    fn atanh_(self) -> Self;
    fn expm1_(self) -> Self;
    fn log1p_(self) -> Self;
}

/// `fn m(self) -> Self { self.f() }` for each `m => f`: a trait method forwarding to the
/// type's own function.
macro_rules! forward {
    ($($m:ident => $f:ident),* $(,)?) => {$(
        #[inline(always)] fn $m(self) -> Self { self.$f() }
    )*};
}

/// [`forward!`] for complex numbers: the edge cases of `complex_edges` first (Annex G's
/// infinities and NaNs), then `complex_fns` for finite arguments (NumPy's forms, which do
/// not overflow in an intermediate); num-complex for what neither answers.
macro_rules! edged_fns {
    ($($m:ident => $f:ident),* $(,)?) => {$(
        #[inline(always)] fn $m(self) -> Self {
            let z = num_complex::Complex64::new(self.re.into(), self.im.into());
            match super::complex_edges::$f(z) {
                Some(w) => Self::new(w.re as _, w.im as _),
                None if super::complex_fns::finite(self.re, self.im) => {
                    let (re, im) = super::complex_fns::$f(self.re, self.im);
                    Self::new(re, im)
                }
                None => self.$f(),
            }
        }
    )*};
}

/// [`forward!`] for half floats: computed in f32 and rounded back once.
macro_rules! forward_f32 {
    ($t:ty: $($m:ident => $f:ident),* $(,)?) => {$(
        #[inline(always)] fn $m(self) -> Self { <$t>::from_f32(self.to_f32().$f()) }
    )*};
}

macro_rules! int_math {
    ($($t:ty: $abs:expr),*) => {$(
        impl Arith for $t {
            #[inline(always)] fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            #[inline(always)] fn sub(self, o: Self) -> Self { self.wrapping_sub(o) }
            #[inline(always)] fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
            /// Truncating division; division by zero gives 0 (NumPy warns and gives 0).
            #[inline(always)] fn div(self, o: Self) -> Self {
                if o == 0 { 0 } else { self.wrapping_div(o) }
            }
            #[inline(always)] fn pow(self, o: Self) -> Self {
                #[allow(unused_comparisons)]
                if o < 0 {
                    // Integer powers with negative exponents: 1/x^n truncated (C semantics).
                    #[allow(unused_comparisons)]
                    return match self { 1 => 1, x if x == (0 as $t).wrapping_sub(1) && x < 0 => {
                        if o % 2 == 0 { 1 } else { x }
                    } _ => 0 };
                }
                // x^e mod 2^bits over the whole exponent, as NumPy (wrapping_pow takes a u32,
                // and 3^(2^64 - 2) is not 3^(2^32 - 1) modulo 2^64).
                let (mut e, mut r, mut x) = (o as u64, 1 as $t, self);
                while e != 0 {
                    if e & 1 == 1 {
                        r = r.wrapping_mul(x);
                    }
                    x = x.wrapping_mul(x);
                    e >>= 1;
                }
                r
            }
            #[inline(always)] fn neg(self) -> Self { self.wrapping_neg() }
            const ZERO: Self = 0;
            const ONE: Self = 1;
        }
        impl Real for $t {
            #[inline(always)] fn max_(self, o: Self) -> Self { Ord::max(self, o) }
            #[inline(always)] fn min_(self, o: Self) -> Self { Ord::min(self, o) }
            #[inline(always)] fn abs_(self) -> Self { $abs(self) }
            const LOWEST: Self = <$t>::MIN;
            const HIGHEST: Self = <$t>::MAX;
        }
    )*};
}
int_math!(
    i8: i8::wrapping_abs, i16: i16::wrapping_abs, i32: i32::wrapping_abs, i64: i64::wrapping_abs,
    u8: |x| x, u16: |x| x, u32: |x| x, u64: |x| x
);

/// Integer shifts with NumPy's and XLA's rule for counts outside `0..BITS`: a left shift
/// gives 0, a right shift the sign (0 or -1). Rust's `<<` panics there in debug builds and
/// masks the count in release, so the count is tested first.
pub(crate) trait Shift: Element {
    fn shl_(self, n: Self) -> Self;
    fn shr_(self, n: Self) -> Self;
}

macro_rules! int_shift {
    ($($t:ty),*) => {$(
        impl Shift for $t {
            #[inline(always)] fn shl_(self, n: Self) -> Self {
                #[allow(unused_comparisons)]
                if n < 0 || n as u64 >= <$t>::BITS as u64 { 0 } else { self << n }
            }
            #[inline(always)] fn shr_(self, n: Self) -> Self {
                #[allow(unused_comparisons)]
                if n < 0 || n as u64 >= <$t>::BITS as u64 {
                    if self < 0 { !0 } else { 0 }
                } else {
                    self >> n
                }
            }
        }
    )*};
}
int_shift!(i8, i16, i32, i64, u8, u16, u32, u64);

/// NumPy's `floor_divide` and `remainder`: the quotient rounded down, and the remainder with
/// the divisor's sign. Integer division by zero gives 0 for both (NumPy warns and gives 0),
/// and `MIN // -1` wraps to `MIN`. Floats follow NumPy's `npy_divmod` step by step.
pub(crate) trait DivMod: Element {
    fn floor_div_(self, o: Self) -> Self;
    fn rem_(self, o: Self) -> Self;
}

macro_rules! int_divmod {
    ($($t:ty),*) => {$(
        impl DivMod for $t {
            #[inline(always)] fn floor_div_(self, o: Self) -> Self {
                if o == 0 { return 0; }
                let (q, r) = (self.wrapping_div(o), self.wrapping_rem(o));
                #[allow(unused_comparisons)]
                if r != 0 && ((r < 0) != (o < 0)) { q.wrapping_sub(1) } else { q }
            }
            #[inline(always)] fn rem_(self, o: Self) -> Self {
                if o == 0 { return 0; }
                let r = self.wrapping_rem(o);
                #[allow(unused_comparisons)]
                if r != 0 && ((r < 0) != (o < 0)) { r.wrapping_add(o) } else { r }
            }
        }
    )*};
}
int_divmod!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! float_divmod {
    ($($t:ty: $f:ty),*) => {$(
        impl DivMod for $t {
            #[inline(always)] fn floor_div_(self, o: Self) -> Self {
                let (a, b) = (<$f>::from(self), <$f>::from(o));
                <$t as FromWork<$f>>::from_work(divmod(a, b).0)
            }
            #[inline(always)] fn rem_(self, o: Self) -> Self {
                let (a, b) = (<$f>::from(self), <$f>::from(o));
                <$t as FromWork<$f>>::from_work(if b == 0.0 { a % b } else { divmod(a, b).1 })
            }
        }
    )*};
}
float_divmod!(f32: f32, f64: f64, f16: f32, bf16: f32);

/// A float type's value from the type it computes in (itself, or f32 for half floats):
/// one direct conversion per element, in the kernels' inner loops.
trait FromWork<F> {
    fn from_work(x: F) -> Self;
}
impl FromWork<f32> for f32 {
    #[inline(always)]
    fn from_work(x: f32) -> f32 {
        x
    }
}
impl FromWork<f64> for f64 {
    #[inline(always)]
    fn from_work(x: f64) -> f64 {
        x
    }
}
impl FromWork<f32> for f16 {
    #[inline(always)]
    fn from_work(x: f32) -> f16 {
        f16::from_f32(x)
    }
}
impl FromWork<f32> for bf16 {
    #[inline(always)]
    fn from_work(x: f32) -> bf16 {
        bf16::from_f32(x)
    }
}

/// NumPy's `npy_divmod`: `(floor(a / b), a mod b)` with the remainder taking `b`'s sign.
#[inline(always)]
fn divmod<F: num_traits::Float>(a: F, b: F) -> (F, F) {
    let zero = F::zero();
    let mut m = a % b;
    if b == zero {
        return (a / b, m);
    }
    let mut div = (a - m) / b;
    if m != zero {
        if (b < zero) != (m < zero) {
            m = m + b;
            div = div - F::one();
        }
    } else {
        m = zero.copysign(b);
    }
    let q = if div != zero {
        let f = div.floor();
        if div - f > F::from(0.5).unwrap_or(zero) {
            f + F::one()
        } else {
            f
        }
    } else {
        zero.copysign(a / b)
    };
    (q, m)
}

/// Functions of two real floats, as NumPy's: `atan2`, `copysign`, `hypot` (no overflow in
/// the squares; infinite if either is, even beside NaN), and `logaddexp` (`log(e^a + e^b)`
/// without overflow; `a + log 2` when the two are equal, which keeps equal infinities).
pub(crate) trait RealFloat: Element {
    fn atan2_(self, o: Self) -> Self;
    fn copysign_(self, o: Self) -> Self;
    fn hypot_(self, o: Self) -> Self;
    fn logaddexp_(self, o: Self) -> Self;
    /// The next value of this dtype after `self` towards `o` (C's `nextafter`, stepping in
    /// this dtype's own precision: a half float steps by a half-float ulp).
    fn nextafter_(self, o: Self) -> Self;
}

/// `nextafter` on the bits of a float of `BITS` bits: one step of the integer that orders
/// same-signed floats.
#[inline(always)]
fn next_bits(a: f64, b: f64, bits: u64, sign: u64) -> Option<u64> {
    if a.is_nan() || b.is_nan() || a == b {
        return None;
    }
    Some(if a == 0.0 {
        // The smallest subnormal, with `b`'s sign.
        if b < 0.0 { sign | 1 } else { 1 }
    } else if (a < b) == (a > 0.0) {
        bits + 1
    } else {
        bits - 1
    })
}

macro_rules! real_float {
    ($($t:ty: $f:ty),*) => {$(
        impl RealFloat for $t {
            #[inline(always)] fn atan2_(self, o: Self) -> Self {
                <$t as FromWork<$f>>::from_work(<$f>::from(self).atan2(<$f>::from(o)))
            }
            #[inline(always)] fn copysign_(self, o: Self) -> Self {
                <$t as FromWork<$f>>::from_work(<$f>::from(self).copysign(<$f>::from(o)))
            }
            #[inline(always)] fn hypot_(self, o: Self) -> Self {
                <$t as FromWork<$f>>::from_work(<$f>::from(self).hypot(<$f>::from(o)))
            }
            #[inline(always)] fn nextafter_(self, o: Self) -> Self {
                let (a, b) = (f64::from(self), f64::from(o));
                let sign = 1u64 << (8 * size_of::<$t>() - 1);
                match next_bits(a, b, self.to_bits() as u64, sign) {
                    Some(bits) => <$t>::from_bits(bits as _),
                    // NaN in, NaN out; equal values give `o` (so nextafter(0, -0) is -0).
                    None if a.is_nan() || b.is_nan() => <$t as FromWork<$f>>::from_work(<$f>::NAN),
                    None => o,
                }
            }
            #[inline(always)] fn logaddexp_(self, o: Self) -> Self {
                let (a, b) = (<$f>::from(self), <$f>::from(o));
                let r = if a == b {
                    a + std::f64::consts::LN_2 as $f
                } else {
                    let d = a - b;
                    if d > 0.0 { a + (-d).exp().ln_1p() } else if d <= 0.0 { b + d.exp().ln_1p() } else { d }
                };
                <$t as FromWork<$f>>::from_work(r)
            }
        }
    )*};
}
real_float!(f32: f32, f64: f64, f16: f32, bf16: f32);

macro_rules! float_math {
    ($($t:ty: $exp:expr, $ln:expr, $tanh:expr, $sin:expr, $cos:expr, $tan:expr, $sinh:expr, $cosh:expr,
        $asinh:expr, $acosh:expr, $atanh:expr, $expm1:expr, $log1p:expr, $asin:expr, $acos:expr,
        $atan:expr),*) => {$(
        impl Arith for $t {
            #[inline(always)] fn add(self, o: Self) -> Self { self + o }
            #[inline(always)] fn sub(self, o: Self) -> Self { self - o }
            #[inline(always)] fn mul(self, o: Self) -> Self { self * o }
            #[inline(always)] fn div(self, o: Self) -> Self { self / o }
            #[inline(always)] fn pow(self, o: Self) -> Self { self.powf(o) }
            #[inline(always)] fn neg(self) -> Self { -self }
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
        }
        impl Real for $t {
            #[inline(always)] fn max_(self, o: Self) -> Self { if self > o || self.is_nan() { self } else { o } }
            #[inline(always)] fn min_(self, o: Self) -> Self { if self < o || self.is_nan() { self } else { o } }
            #[inline(always)] fn abs_(self) -> Self { self.abs() }
            const LOWEST: Self = <$t>::NEG_INFINITY;
            const HIGHEST: Self = <$t>::INFINITY;
        }
        impl Transcendental for $t {
            #[inline(always)] fn exp_(self) -> Self { $exp(self) }
            #[inline(always)] fn ln_(self) -> Self { $ln(self) }
            #[inline(always)] fn tanh_(self) -> Self { $tanh(self) }
            #[inline(always)] fn sin_(self) -> Self { $sin(self) }
            #[inline(always)] fn cos_(self) -> Self { $cos(self) }
            #[inline(always)] fn tan_(self) -> Self { $tan(self) }
            #[inline(always)] fn sinh_(self) -> Self { $sinh(self) }
            #[inline(always)] fn cosh_(self) -> Self { $cosh(self) }
            #[inline(always)] fn asinh_(self) -> Self { $asinh(self) }
            #[inline(always)] fn acosh_(self) -> Self { $acosh(self) }
            #[inline(always)] fn atanh_(self) -> Self { $atanh(self) }
            #[inline(always)] fn expm1_(self) -> Self { $expm1(self) }
            #[inline(always)] fn log1p_(self) -> Self { $log1p(self) }
            #[inline(always)] fn asin_(self) -> Self { $asin(self) }
            #[inline(always)] fn acos_(self) -> Self { $acos(self) }
            #[inline(always)] fn atan_(self) -> Self { $atan(self) }
            forward!(sqrt_ => sqrt);
        }
    )*};
}

// Both exps and float32's ln, tanh, sin, cos and tan vectorise (`expf`, `exp_f64`, `logf`,
// `tanhf`, `sincosf`), as do float32's hyperbolic functions, expm1 and log1p (through the
// float64 loops, `f32_via_f64`), float32's asin, acos and atan (`inv_trigf`), float64's
// expm1, sinh and cosh (`expm1_f64`), asin and acos (`asin_acos_f64`), atan (`atan_f64`),
// asinh and acosh (`asinh_acosh_f64`), atanh (`atanh_f64`) and log1p (`log_f64`); the
// strided path calls the same functions.
float_math!(
    f32: super::expf::exp_f32, super::logf::ln_f32, super::tanhf::tanh_f32,
        super::sincosf::sin_f32, super::sincosf::cos_f32, super::sincosf::tan_f32, via::sinh_f32, via::cosh_f32,
        via::asinh_f32, via::acosh_f32, via::atanh_f32, via::expm1_f32, via::log1p_f32,
        inv::asin_f32, inv::acos_f32, inv::atan_f32,
    f64: super::exp_f64::exp_f64, super::log_f64::ln_f64, super::tanh_f64::tanh_f64,
        super::sincos_f64::sin_f64, super::sincos_f64::cos_f64, super::sincos_f64::tan_f64,
        super::expm1_f64::sinh_f64,
        super::expm1_f64::cosh_f64, super::asinh_acosh_f64::asinh_f64,
        super::asinh_acosh_f64::acosh_f64, super::atanh_f64::atanh_f64,
        super::expm1_f64::expm1_f64, super::log_f64::ln_1p_f64,
        super::asin_acos_f64::asin_f64, super::asin_acos_f64::acos_f64,
        super::atan_f64::atan_f64
);

macro_rules! half_math {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            #[inline(always)] fn add(self, o: Self) -> Self { <$t>::from_f32(self.to_f32() + o.to_f32()) }
            #[inline(always)] fn sub(self, o: Self) -> Self { <$t>::from_f32(self.to_f32() - o.to_f32()) }
            #[inline(always)] fn mul(self, o: Self) -> Self { <$t>::from_f32(self.to_f32() * o.to_f32()) }
            #[inline(always)] fn div(self, o: Self) -> Self { <$t>::from_f32(self.to_f32() / o.to_f32()) }
            #[inline(always)] fn pow(self, o: Self) -> Self { <$t>::from_f32(self.to_f32().powf(o.to_f32())) }
            #[inline(always)] fn neg(self) -> Self { -self }
            const ZERO: Self = <$t>::ZERO;
            const ONE: Self = <$t>::ONE;
        }
        impl Real for $t {
            #[inline(always)] fn max_(self, o: Self) -> Self { if self > o || self.is_nan() { self } else { o } }
            #[inline(always)] fn min_(self, o: Self) -> Self { if self < o || self.is_nan() { self } else { o } }
            #[inline(always)] fn abs_(self) -> Self { <$t>::from_bits(self.to_bits() & 0x7fff) }
            const LOWEST: Self = <$t>::NEG_INFINITY;
            const HIGHEST: Self = <$t>::INFINITY;
        }
        impl Transcendental for $t {
            // float32's branch-free exp (`expf`), not the C library's call per element: the
            // same results on every float16 and bfloat16 (tested on all of them).
            #[inline(always)] fn exp_(self) -> Self {
                <$t>::from_f32(super::expf::exp_f32(self.to_f32()))
            }
            // Likewise float32's ln, tanh, sin and cos (`logf`, `tanhf`, `sincosf`).
            #[inline(always)] fn ln_(self) -> Self {
                <$t>::from_f32(super::logf::ln_f32(self.to_f32()))
            }
            #[inline(always)] fn tanh_(self) -> Self {
                <$t>::from_f32(super::tanhf::tanh_f32(self.to_f32()))
            }
            #[inline(always)] fn sin_(self) -> Self {
                <$t>::from_f32(super::sincosf::sin_f32(self.to_f32()))
            }
            #[inline(always)] fn cos_(self) -> Self {
                <$t>::from_f32(super::sincosf::cos_f32(self.to_f32()))
            }
            #[inline(always)] fn tan_(self) -> Self {
                <$t>::from_f32(super::sincosf::tan_f32(self.to_f32()))
            }
            // And float32's asin, acos and atan (`inv_trigf`).
            #[inline(always)] fn asin_(self) -> Self { <$t>::from_f32(inv::asin_f32(self.to_f32())) }
            #[inline(always)] fn acos_(self) -> Self { <$t>::from_f32(inv::acos_f32(self.to_f32())) }
            #[inline(always)] fn atan_(self) -> Self { <$t>::from_f32(inv::atan_f32(self.to_f32())) }
            forward_f32!($t: sqrt_ => sqrt, sinh_ => sinh,
                cosh_ => cosh, asinh_ => asinh, acosh_ => acosh, atanh_ => atanh,
                expm1_ => exp_m1, log1p_ => ln_1p);
        }
    )*};
}
half_math!(f16, bf16);

macro_rules! complex_math {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            #[inline(always)] fn add(self, o: Self) -> Self { self + o }
            #[inline(always)] fn sub(self, o: Self) -> Self { self - o }
            #[inline(always)] fn mul(self, o: Self) -> Self { self * o }
            #[inline(always)] fn div(self, o: Self) -> Self {
                let (re, im) = super::complex_fns::div(self.re, self.im, o.re, o.im);
                <$t>::new(re, im)
            }
            #[inline(always)] fn pow(self, o: Self) -> Self { self.powc(o) }
            #[inline(always)] fn neg(self) -> Self { -self }
            const ZERO: Self = <$t>::new(0.0, 0.0);
            const ONE: Self = <$t>::new(1.0, 0.0);
        }
        impl Transcendental for $t {
            forward!(ln_ => ln);
            // Annex G's infinities and NaNs first (num-complex misses them), then NumPy's
            // forms for finite arguments (`complex_fns`).
            edged_fns!(sqrt_ => sqrt, tanh_ => tanh, sinh_ => sinh, cosh_ => cosh,
                asinh_ => asinh, acosh_ => acosh, atanh_ => atanh, acos_ => acos);
            // asin z = -i asinh(iz), atan z = -i atanh(iz): C99's definitions, edges included.
            #[inline(always)] fn asin_(self) -> Self {
                let w = Self::new(-self.im, self.re).asinh_();
                Self::new(w.im, -w.re)
            }
            #[inline(always)] fn atan_(self) -> Self {
                let w = Self::new(-self.im, self.re).atanh_();
                Self::new(w.im, -w.re)
            }
            #[inline(always)] fn exp_(self) -> Self {
                if super::complex_fns::finite(self.re, self.im) {
                    let (re, im) = super::complex_fns::exp(self.re, self.im);
                    return Self::new(re, im);
                }
                self.exp() // num-complex answers Annex G's edges of exp
            }
            // sin z = -i sinh(iz), cos z = cosh(iz): C99's definitions, edges included.
            #[inline(always)] fn sin_(self) -> Self {
                let w = Self::new(-self.im, self.re).sinh_();
                Self::new(w.im, -w.re)
            }
            #[inline(always)] fn cos_(self) -> Self { Self::new(-self.im, self.re).cosh_() }
            // tan z = -i tanh(iz), C99's definition: finite where sin and cos of a large
            // imaginary part both overflow (`tan(800j)` is `1j`).
            #[inline(always)] fn tan_(self) -> Self {
                let w = Self::new(-self.im, self.re).tanh_();
                Self::new(w.im, -w.re)
            }
            // num-complex has neither: NumPy's forms (exact near 0, and the sign of a zero
            // imaginary part kept on log1p's branch cut).
            #[inline(always)] fn expm1_(self) -> Self {
                if super::complex_fns::finite(self.re, self.im) {
                    let (re, im) = super::complex_fns::expm1(self.re, self.im);
                    return Self::new(re, im);
                }
                self.exp() - Self::ONE
            }
            #[inline(always)] fn log1p_(self) -> Self {
                let (re, im) = super::complex_fns::log1p(self.re, self.im);
                Self::new(re, im)
            }
        }
    )*};
}
complex_math!(Complex32, Complex64);

/// floor, ceil, round (half to even) and sign, as NumPy has them for real numbers: integers
/// are their own floor, ceil and round; the sign of NaN is NaN, of ±0 is +0.
pub(crate) trait Rounding: Element {
    fn floor_(self) -> Self;
    fn ceil_(self) -> Self;
    fn round_(self) -> Self;
    fn sign_(self) -> Self;
}

macro_rules! int_rounding {
    ($($t:ty: $sign:expr),*) => {$(
        impl Rounding for $t {
            #[inline(always)] fn floor_(self) -> Self { self }
            #[inline(always)] fn ceil_(self) -> Self { self }
            #[inline(always)] fn round_(self) -> Self { self }
            #[inline(always)] fn sign_(self) -> Self { $sign(self) }
        }
    )*};
}
int_rounding!(
    i8: i8::signum, i16: i16::signum, i32: i32::signum, i64: i64::signum,
    u8: |x: u8| x.min(1), u16: |x: u16| x.min(1), u32: |x: u32| x.min(1), u64: |x: u64| x.min(1)
);

macro_rules! float_rounding {
    ($($t:ty: $to:expr, $from:expr),*) => {$(
        impl Rounding for $t {
            #[inline(always)] fn floor_(self) -> Self { $from($to(self).floor()) }
            #[inline(always)] fn ceil_(self) -> Self { $from($to(self).ceil()) }
            #[inline(always)] fn round_(self) -> Self { $from($to(self).round_ties_even()) }
            #[inline(always)] fn sign_(self) -> Self {
                let x = $to(self);
                // ±0 gives +0 (the array API), NaN stays NaN.
                $from(if x > 0.0 { 1.0 } else if x < 0.0 { -1.0 } else if x == 0.0 { 0.0 } else { x })
            }
        }
    )*};
}
float_rounding!(
    f32: |x: f32| x, |x: f32| x,
    f64: |x: f64| x, |x: f64| x,
    f16: f16::to_f32, f16::from_f32,
    bf16: bf16::to_f32, bf16::from_f32
);

/// NumPy 2's sign of a complex number: `z / |z|`, and +0 + 0j for any zero.
pub(crate) trait ComplexSign: Copy {
    fn sign_(self) -> Self;
}
macro_rules! complex_sign {
    ($($t:ty),*) => {$(
        impl ComplexSign for $t {
            #[inline(always)]
            fn sign_(self) -> Self {
                let n = self.norm();
                // The array API: the sign of ±0 ± 0j is +0 + 0j.
                if n == 0.0 { <$t>::new(0.0, 0.0) } else { self / n }
            }
        }
    )*};
}
complex_sign!(Complex32, Complex64);

/// Dispatches `$dtype` over a set of dtypes, binding `$t` to the element type; any other
/// dtype evaluates `$else`.
macro_rules! dispatch {
    ($dtype:expr, [$($d:ident),*], $t:ident => $body:expr, else $else:expr) => {{
        #[allow(unused_imports)]
        use half::{bf16 as BF16, f16 as F16};
        #[allow(unused_imports)]
        use num_complex::{Complex32 as Complex64, Complex64 as Complex128};
        #[allow(non_camel_case_types, unused)]
        type I8 = i8;
        #[allow(non_camel_case_types, unused)]
        type I16 = i16;
        #[allow(non_camel_case_types, unused)]
        type I32 = i32;
        #[allow(non_camel_case_types, unused)]
        type I64 = i64;
        #[allow(non_camel_case_types, unused)]
        type U8 = u8;
        #[allow(non_camel_case_types, unused)]
        type U16 = u16;
        #[allow(non_camel_case_types, unused)]
        type U32 = u32;
        #[allow(non_camel_case_types, unused)]
        type U64 = u64;
        #[allow(non_camel_case_types, unused)]
        type F32 = f32;
        #[allow(non_camel_case_types, unused)]
        type F64 = f64;
        #[allow(non_camel_case_types, unused)]
        type Bool = bool;
        match $dtype {
            $($crate::dtype::DType::$d => { type $t = $d; $body })*
            #[allow(unreachable_patterns)]
            _ => $else,
        }
    }};
}
pub(crate) use dispatch;

/// `dispatch!` over every dtype with arithmetic (all but bool).
macro_rules! dispatch_arith {
    ($dtype:expr, $t:ident => $body:expr, else $else:expr) => {
        $crate::backends::host::math::dispatch!($dtype,
            [I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64, Complex64, Complex128],
            $t => $body, else $else)
    };
}
pub(crate) use dispatch_arith;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_edge_cases() {
        assert_eq!(Arith::div(7i32, 0), 0);
        assert_eq!(Arith::div(i32::MIN, -1), i32::MIN);
        assert_eq!(Arith::pow(2i32, -1), 0);
        assert_eq!(Arith::pow(-1i32, -3), -1);
        assert_eq!(Arith::pow(-1i32, -2), 1);
        assert_eq!(Arith::pow(3u8, 2), 9);
        assert_eq!(Arith::neg(1u8), 255);
        assert_eq!(Real::abs_(i8::MIN), i8::MIN);
    }

    /// Every float16 and bfloat16: exp, ln, tanh, sin and cos are the C library's float32
    /// functions of the value, rounded to the half type (what they were before they took
    /// float32's vectorising `expf`, `logf`, `tanhf` and `sincosf`); NaN for NaN.
    #[test]
    fn half_transcendentals_match_the_c_library_on_every_value() {
        fn check<T: Transcendental + Copy + PartialEq + std::fmt::Debug>(
            x: T,
            widen: fn(T) -> f32,
            narrow: fn(f32) -> T,
        ) {
            type Pair<T> = (fn(T) -> T, fn(f32) -> f32);
            let pairs: [Pair<T>; 5] = [
                (T::exp_, f32::exp),
                (T::ln_, f32::ln),
                (T::tanh_, f32::tanh),
                (T::sin_, f32::sin),
                (T::cos_, f32::cos),
            ];
            for (ours, c) in pairs {
                let (got, want) = (ours(x), narrow(c(widen(x))));
                if widen(want).is_nan() {
                    assert!(widen(got).is_nan(), "{x:?}: {got:?}, want NaN");
                } else {
                    assert_eq!(got, want, "{x:?}");
                }
            }
        }
        for bits in 0..=u16::MAX {
            check(f16::from_bits(bits), f16::to_f32, f16::from_f32);
            check(bf16::from_bits(bits), bf16::to_f32, bf16::from_f32);
        }
    }

    #[test]
    fn float_max_propagates_nan() {
        assert!(Real::max_(f32::NAN, 1.0).is_nan());
        assert!(Real::max_(1.0f32, f32::NAN).is_nan());
        assert!(Real::min_(f16::NAN, f16::ONE).is_nan());
        assert_eq!(Real::abs_(bf16::from_f32(-2.5)), bf16::from_f32(2.5));
    }
}
