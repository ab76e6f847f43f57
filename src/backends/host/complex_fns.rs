//! Complex division, and exp, sinh, cosh, tanh, sqrt, expm1, log1p, asinh, atanh, acos and
//! acosh of finite arguments, as NumPy computes them (its npymath follows FreeBSD's msun),
//! in the precision of the parts (complex64 in f32). sin, cos, asin and atan are these of
//! `iz` (in `math`).
//!
//! num-complex takes the textbook forms, which overflow in an intermediate where the result
//! is representable: `exp(800 + 0j)` is `inf * (cos 0 + i sin 0)` = inf+NaNj, `tanh(800)`
//! is `inf / inf` = NaN (it is 1), and `sqrt(-1 + 1e-30j)` in polar form has a real part of
//! 6e-17 (it is 5e-31; in complex64 the real part came out negative). Infinite and NaN
//! arguments are answered before these run (`complex_edges`, or num-complex's own cases).

use num_traits::Float;

/// `(re, im)` of a complex number in parts.
type P<F> = (F, F);

/// `a / b` for complex numbers as NumPy divides them (Smith's method): the divisor is scaled
/// by its larger part, so the quotient neither overflows nor underflows where it is
/// representable. num-complex divides by `|b|^2`, which overflows past ~1e154 (~1e19 in
/// complex64) and underflows below the square roots of the smallest normals: `(1e30 + 1e30j)
/// / (1e30 + 1e30j)` in complex64 was NaN. A zero divisor gives NumPy's complex infinity or
/// NaN (`(1+1j) / 0 = inf+infj`), and a finite number over an infinite one is 0.
#[inline(always)]
pub fn div<F: Float>(ar: F, ai: F, br: F, bi: F) -> P<F> {
    let (br_abs, bi_abs) = (br.abs(), bi.abs());
    if br_abs >= bi_abs {
        if br_abs == F::zero() && bi_abs == F::zero() {
            return (ar / br_abs, ai / br_abs);
        }
        let rat = bi / br;
        let scl = F::one() / (br + bi * rat);
        ((ar + ai * rat) * scl, (ai - ar * rat) * scl)
    } else {
        // Also the NaN divisors: every comparison with NaN is false.
        let rat = br / bi;
        let scl = F::one() / (bi + br * rat);
        ((ar * rat + ai) * scl, (ai * rat - ar) * scl)
    }
}

/// Past this, `exp(x)` is within a factor e of overflowing (ln of the largest value, less 1).
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

/// `e^z - 1` as NumPy's `nc_expm1`: the real part from `expm1`, exact near 0. The `+ 0`
/// turns the `-0` that `expm1(-0) * cos(0) - 0` gives into the `+0` the array API names
/// for `expm1(±0 + 0j)`; it changes no other value.
pub fn expm1<F: Float>(x: F, y: F) -> P<F> {
    let two = F::one() + F::one();
    let a = (y / two).sin();
    (
        x.exp_m1() * y.cos() - two * a * a + F::zero(),
        x.exp() * y.sin(),
    )
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

/// `ln(z)` for a finite `z`, as `(ln|z|, arg z)` with `|z|` by `hypot` (no overflow).
fn ln<F: Float>(x: F, y: F) -> P<F> {
    (x.hypot(y).ln(), y.atan2(x))
}

/// `asinh(x + iy)`, finite: `ln(z + sqrt(z^2 + 1))` in the right half plane, where `z` and the
/// root point the same way and nothing cancels, and by oddness (`asinh(-z) = -asinh(z)`,
/// `asinh(conj z) = conj asinh(z)`) in the left one. The logarithm is taken as `log1p(u)`
/// with `u = z + z^2 / (sqrt(z^2 + 1) + 1)`, exact for small `z` (`ln` of `1 + z` rounds
/// `z` away). `z^2 + 1` keeps the sign of its zero imaginary part, which picks the side of
/// the cut along the imaginary axis: `asinh(+0 - 3.7i)` is `1.98 - i pi/2`, as NumPy's.
/// Past 1e8, `ln(2z)` (`z^2` would overflow; the dropped term is `1 / (4 z^2)`).
pub fn asinh<F: Float>(x: F, y: F) -> P<F> {
    let ax = x.abs();
    let two = F::one() + F::one();
    let (re, im) = if ax.hypot(y) > F::from(1e8).unwrap_or_else(F::max_value) {
        let (lr, li) = ln(ax, y);
        (two.ln() + lr, li)
    } else {
        let (z2r, z2i) = (ax * ax - y * y, two * ax * y);
        let (sr, si) = sqrt(z2r + F::one(), z2i);
        let (qr, qi) = div(z2r, z2i, sr + F::one(), si);
        let (ur, ui) = (ax + qr, y + qi);
        (
            (two * ur + ur * ur + ui * ui).ln_1p() / two,
            ui.atan2(F::one() + ur),
        )
    };
    (if x.is_sign_negative() { -re } else { re }, im)
}

/// `atanh(x + iy)`, finite, in Kahan's form (as msun's `catanh`): the real part
/// `log1p(4|x| / ((1 - |x|)^2 + y^2)) / 4`, the imaginary `atan2(2y, (1 - |x|)(1 + |x|) - y^2) / 2`,
/// and the sign of `x` by oddness; past [`huge`] (~1e153; ~5e18 in f32) the real part is
/// `Re(1/z)` and the imaginary `±pi/2`.
pub fn atanh<F: Float>(x: F, y: F) -> P<F> {
    let ax = x.abs();
    let two = F::one() + F::one();
    let (re, im) = if ax > huge::<F>() || y.abs() > huge::<F>() {
        let (r, _) = div(F::one(), F::zero(), ax, y);
        let half_pi = F::from(std::f64::consts::FRAC_PI_2).unwrap_or_else(F::one);
        (r, half_pi.copysign(y))
    } else if ax == F::one() && y.abs() < F::epsilon().sqrt() {
        // On the pole's line: log1p(4 / y^2) / 4 is ln(2 / |y|) / 2 to O(y^2), and y^2
        // underflows (atanh(1 + 1e-310i) has a real part of 357, not inf).
        (
            (two.ln() - y.abs().ln()) / two,
            // As below: +0 when y is 0 (atanh(1 + 0i) = inf + 0i).
            (two * y).atan2((F::one() - ax) * (F::one() + ax) - y * y) / two,
        )
    } else {
        let d = (F::one() - ax) * (F::one() - ax) + y * y;
        let four = two + two;
        (
            (four * ax / d).ln_1p() / four,
            (two * y).atan2((F::one() - ax) * (F::one() + ax) - y * y) / two,
        )
    };
    (if x.is_sign_negative() { -re } else { re }, im)
}

/// `acos z = pi/2 - asin z`, with `asin z = -i asinh(iz)`.
pub fn acos<F: Float>(x: F, y: F) -> P<F> {
    let (wr, wi) = asinh(-y, x);
    let half_pi = F::from(std::f64::consts::FRAC_PI_2).unwrap_or_else(F::one);
    (half_pi - wi, wr)
}

/// `acosh z` from `acos z` as msun's `cacosh`: `(|Im acos z|, ±Re acos z)` with the sign of
/// `y`.
pub fn acosh<F: Float>(x: F, y: F) -> P<F> {
    let (r, i) = acos(x, y);
    (i.abs(), r.copysign(y))
}

/// Past this, `(1 - x)^2 + y^2` could overflow (in f32 it is f32's own limit's root).
fn huge<F: Float>() -> F {
    F::max_value().sqrt() / (F::one() + F::one() + F::one() + F::one())
}
