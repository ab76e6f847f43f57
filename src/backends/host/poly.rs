//! The degree-5 polynomial evaluation the float functions share (`expf`, `tanhf`, `logf`,
//! `sincosf`, `tanh_f64`, `log_f64`), scalar and in AVX-512 and AVX2 lanes: Estrin's scheme,
//! three independent pairs then two levels, in one fixed order so that every path rounds
//! alike (no fused multiply-add); and the two-sum error the float64 functions carry.

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
