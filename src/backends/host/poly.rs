//! The degree-5 polynomial evaluation the float functions share (`expf`, `tanhf`, `logf`,
//! `sincosf`, `tanh_f64`, `log_f64`), scalar and in AVX-512 and AVX2 lanes: Estrin's scheme,
//! three independent pairs then two levels, in one fixed order so that every path rounds
//! alike (no fused multiply-add); the two-sum error the float64 functions carry; and a
//! square root in two parts (`asinh_acosh_f64`, `asin_acos_f64`).

/// `c[0] + c[1] r + ... + c[5] r^5`.
#[inline(always)]
pub(crate) fn estrin6(r: f64, c: &[f64; 6]) -> f64 {
    let r2 = r * r;
    let (p01, p23, p45) = (c[0] + c[1] * r, c[2] + c[3] * r, c[4] + c[5] * r);
    p01 + r2 * (p23 + r2 * p45)
}

/// The rounding error of `s = a + b` (Knuth's two-sum: exact, whatever the magnitudes).
#[inline(always)]
pub(crate) fn two_sum_err(a: f64, b: f64, s: f64) -> f64 {
    let bb = s - a;
    (a - (s - bb)) + (b - bb)
}

/// About `1/(2r)` for positive normal `r`: `3/2 - m/2` over `2^k` for `2r = 2^k m` (the
/// exponent's and mantissa's bits subtracted from those of 2^1023: within 1/8, exact at
/// `m = 1`), then two Newton steps, each squaring the relative error (to 2^-12).
#[inline(always)]
fn half_recip(r: f64) -> f64 {
    let d = r + r;
    let v = f64::from_bits(0x7fe0_0000_0000_0000_u64.wrapping_sub(d.to_bits()));
    let v = v * (2.0 - d * v);
    v * (2.0 - d * v)
}

/// `sqrt(y + y_err)` as `r + r_lo` (`y_err` at most an ulp of `y`): `r` rounded, and
/// `r_lo = ((y - r^2) + y_err)/(2r)`, `y - r^2` exact by a fused multiply-add. `r` is held
/// at 2^-30 or more for the estimate of `1/(2r)` (`y = 0`, where the residual is 0).
#[inline(always)]
pub(crate) fn sqrt_parts(y: f64, y_err: f64) -> (f64, f64) {
    let r = y.sqrt();
    let residual = (-r).mul_add(r, y) + y_err;
    (r, residual * half_recip(r.max(9.313_225_746_154_785e-10)))
}

/// [`estrin6`] over a vector of f64 lanes, `$v` naming the width's operations
/// (`lanes::v8`, `lanes::v4`), in the scalar function's order.
#[cfg(target_arch = "x86_64")]
macro_rules! estrin6_lanes {
    ($v:ident, $r:expr, $c:expr) => {{
        use crate::backends::host::lanes::$v::*;
        let (r, c) = ($r, $c);
        let r2 = mul(r, r);
        let p01 = add(set(c[0]), mul(set(c[1]), r));
        let p23 = add(set(c[2]), mul(set(c[3]), r));
        let p45 = add(set(c[4]), mul(set(c[5]), r));
        add(p01, mul(r2, add(p23, mul(r2, p45))))
    }};
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512 {
    use std::arch::x86_64::__m512d;

    /// [`super::estrin6`] of 8 lanes.
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(crate) fn estrin6(r: __m512d, c: &[f64; 6]) -> __m512d {
        estrin6_lanes!(v8, r, c)
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2 {
    use std::arch::x86_64::__m256d;

    /// [`super::estrin6`] of 4 lanes.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn estrin6(r: __m256d, c: &[f64; 6]) -> __m256d {
        estrin6_lanes!(v4, r, c)
    }
}
