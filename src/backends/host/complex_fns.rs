//! Complex exp, sinh, cosh, tanh, sqrt, expm1 and log1p of finite arguments as NumPy
//! computes them (its npymath follows FreeBSD's msun), in the precision of the parts
//! (complex64 in f32). sin and cos are sinh and cosh of `iz` (in `math`).
//!
//! num-complex takes the textbook forms, which overflow in an intermediate where the result
//! is representable: `exp(800 + 0j)` is `inf * (cos 0 + i sin 0)` = inf+NaNj, `tanh(800)`
//! is `inf / inf` = NaN (it is 1), and `sqrt(-1 + 1e-30j)` in polar form has a real part of
//! 6e-17 (it is 5e-31; in complex64 the real part came out negative). Infinite and NaN
//! arguments are answered before these run (`complex_edges`, or num-complex's own cases).

use num_traits::Float;

/// `(re, im)` of a complex number in parts.
type P<F> = (F, F);

/// Above this, `exp(x)` overflows (ln of the largest finite value, rounded down).
fn exp_limit<F: Float>() -> F {
    F::max_value().ln() - F::one()
}

/// `exp(x) * (c, s)` for `x` past [`exp_limit`]: the exponential in two halves, each
/// multiplied in before the other, so a small `c` or `s` keeps a finite product finite.
fn scaled<F: Float>(x: F, c: F, s: F) -> P<F> {
    let h = (x / (F::one() + F::one())).exp();
    (c * h * h, s * h * h)
}

/// `e^(x + iy)` for finite `x`.
pub fn exp<F: Float>(x: F, y: F) -> P<F> {
    if y == F::zero() {
        return (x.exp(), y); // keeps the sign of the zero; exp(800) is inf, not inf+NaNj
    }
    let (s, c) = y.sin_cos();
    if x > exp_limit() {
        return scaled(x, c, s);
    }
    let e = x.exp();
    (e * c, e * s)
}

/// `sinh(x + iy) = (sinh x cos y, cosh x sin y)` for finite `x` and `y`.
pub fn sinh<F: Float>(x: F, y: F) -> P<F> {
    if y == F::zero() {
        return (x.sinh(), y);
    }
    let (s, c) = y.sin_cos();
    if x.abs() > exp_limit() {
        // sinh and cosh are e^|x| / 2 here, up to the sign.
        let half = F::one() / (F::one() + F::one());
        let (re, im) = scaled(x.abs(), c * half, s * half);
        return (if x < F::zero() { -re } else { re }, im);
    }
    (x.sinh() * c, x.cosh() * s)
}

/// `cosh(x + iy) = (cosh x cos y, sinh x sin y)` for finite `x` and `y`.
pub fn cosh<F: Float>(x: F, y: F) -> P<F> {
    if y == F::zero() {
        return (x.cosh(), x * y); // msun's sign for the zero imaginary part
    }
    let (s, c) = y.sin_cos();
    if x.abs() > exp_limit() {
        let half = F::one() / (F::one() + F::one());
        let (re, im) = scaled(x.abs(), c * half, s * half);
        return (re, if x < F::zero() { -im } else { im });
    }
    (x.cosh() * c, x.sinh() * s)
}

/// `tanh(x + iy)` for finite `x` and `y` (Kahan's form, as msun's `ctanh`).
pub fn tanh<F: Float>(x: F, y: F) -> P<F> {
    // Past this |x|, tanh x rounds to ±1 and the imaginary part is 4 sin y cos y e^(-2|x|).
    let big = if std::mem::size_of::<F>() == 4 {
        F::from(9.0)
    } else {
        F::from(22.0)
    }
    .unwrap_or_else(F::max_value);
    if x.abs() >= big {
        let four = F::from(4.0).unwrap_or_else(F::one);
        let two = F::one() + F::one();
        let (s, c) = y.sin_cos();
        return (F::one().copysign(x), four * s * c * (-two * x.abs()).exp());
    }
    let t = y.tan();
    let beta = F::one() + t * t;
    let s = x.sinh();
    let rho = (F::one() + s * s).sqrt();
    let denom = F::one() + beta * s * s;
    (beta * rho * s / denom, t / denom)
}

/// The principal square root of a finite `x + iy`: a real part >= 0, computed without the
/// cancellation of the polar form, scaled where `|x| + |z|` would overflow.
pub fn sqrt<F: Float>(x: F, y: F) -> P<F> {
    if x == F::zero() && y == F::zero() {
        return (F::zero(), y);
    }
    let four = F::from(4.0).unwrap_or_else(F::one);
    let big = F::max_value() / four;
    if x.abs() > big || y.abs() > big {
        // sqrt(z) = 2 sqrt(z / 4): the quarter cannot overflow.
        let (re, im) = sqrt(x / four, y / four);
        return (re + re, im + im);
    }
    let two = F::one() + F::one();
    let t = ((x.abs() + x.hypot(y)) / two).sqrt();
    if x >= F::zero() {
        (t, y / (t + t))
    } else {
        (y.abs() / (t + t), t.copysign(y))
    }
}

/// `e^z - 1` as NumPy's `nc_expm1`: the real part from `expm1`, exact near 0.
pub fn expm1<F: Float>(x: F, y: F) -> P<F> {
    let two = F::one() + F::one();
    let a = (y / two).sin();
    (x.exp_m1() * y.cos() - two * a * a, x.exp() * y.sin())
}

/// `ln(1 + z)` as NumPy's `nc_log1p` (the sign of a zero imaginary part kept, so the
/// branch cut below -1 is taken from the side the zero says).
pub fn log1p<F: Float>(x: F, y: F) -> P<F> {
    let u = x + F::one();
    (u.hypot(y).ln(), y.atan2(u))
}

/// Whether both parts are finite (the functions above are for such arguments only).
pub fn finite<F: Float>(x: F, y: F) -> bool {
    x.is_finite() && y.is_finite()
}
