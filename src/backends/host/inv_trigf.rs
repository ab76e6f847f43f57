//! float32 `asin`, `acos` and `atan`, computed in float64 and rounded once.
//!
//! Why: these called the C library per element (`asinf`, `acosf`, `atanf`). One thread on
//! the 2-core AMD EPYC (AVX-512), 64K elements: 3.3, 4.2 and 4.8 ns an element against
//! NumPy's 0.40, 0.40 and 0.48 (its AVX-512 loops), 0.10-0.12x. Here each function is
//! branch-free float64 arithmetic (a reduction picked by selects, one polynomial, one
//! `sqrt` or one division), so the slice loops vectorise: 8 float64 lanes with AVX-512,
//! 1.55-1.7, 1.7 and 1.15-1.2 ns an element. What bounds them on Zen 4: `asin` without
//! its polynomial still took 1.10 ns, without its `sqrt` too 0.35 (a throwaway copy of the
//! loop), so the 512-bit `sqrt` costs ~0.75 ns an element; `atan`'s division likewise.
//! NumPy computes in float32 lanes, twice as many a vector, to ~1 ulp.
//!
//! Accuracy. The polynomials are within 2^-52.7 (`atan`) and 2^-54 (`asin`) relatively of
//! the function on their intervals, with the float64 coefficients as written; the
//! reductions add a few float64 roundings (bounds at each function). Measured on all 2^32
//! float32s against glibc's float64 functions (correctly rounded): before the rounding to
//! float32 within 2^-50.5 (`asin`, at 0.505), 2^-51.9 (`acos`) and 2^-51.6 (`atan`), and
//! after it the same bits as those functions rounded to float32 on every one of them (a
//! throwaway program, 4 minutes). glibc's `asinf`, `acosf` and `atanf`, which these
//! replace, differ from those bits on 4.6M, 5.4M and 21.1M float32s. The tests check both
//! on every 4099th float32 and every float32 near the reductions' seams.
//!
//! The coefficients are Chebyshev fits (mpmath's `chebyfit`, 60 digits) of
//! `(f(sqrt s)/sqrt s - 1)/s` in `s` over the reduced interval, rounded to float64; the
//! error bounds above were measured with those roundings, at 1,500 points in mpmath.
//!
//! Every path gives the same bits: the slice loops run the scalar functions (inside
//! `simd::wide_arith`, which lets the compiler vectorise them), and no operation is fused.

use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, PI};
use std::mem::MaybeUninit;

/// `(atan(u)/u - 1)/u^2` in `s = u^2` for `|u| <= tan(pi/8)` (`s <= 0.17157`), degree 9.
const ATAN: [f64; 10] = [
    -0.333_333_333_333_332_5,
    0.199_999_999_998_984_07,
    -0.142_857_142_660_965_97,
    0.111_111_096_365_330_2,
    -0.090_908_525_571_326_63,
    0.076_910_551_576_092_79,
    -0.066_496_136_870_109_7,
    0.057_363_321_151_317_86,
    -0.044_833_344_549_758_38,
    0.022_750_524_703_963_62,
];

/// `(asin(v)/v - 1)/v^2` in `s = v^2` for `|v| <= 1/2` (`s <= 1/4`), degree 11.
const ASIN: [f64; 12] = [
    0.166_666_666_666_666_5,
    0.075_000_000_000_207_64,
    0.044_642_857_103_423_646,
    0.030_381_947_367_098_48,
    0.022_372_047_631_744_51,
    0.017_355_259_955_786_323,
    0.013_929_652_902_326_633,
    0.011_875_494_382_636_922,
    0.007_802_949_477_353_317_5,
    0.016_035_514_349_148_82,
    -0.010_749_050_339_697_808,
    0.028_169_218_060_881_414,
];

/// `tan(pi/8)` and `tan(3pi/8)`: where `atan`'s reduction changes.
const TAN_PI_8: f64 = std::f64::consts::SQRT_2 - 1.0;
const TAN_3PI_8: f64 = std::f64::consts::SQRT_2 + 1.0;

/// `c[0] + c[1] s + ... + c[N-1] s^(N-1)` for `N` = 10, 12 or 14, by Estrin's scheme: pairs
/// `c[2i] + c[2i+1] s`, then those paired with `s^2`, then (`N` = 10, 12) a Horner step in
/// `s^4`, or (`N` = 14) two pairs in `s^4` joined by `s^8`. The chain of dependent
/// operations is 4-5 multiply-adds deep against Horner's 9-13 (float32 `asin` 1.52-1.56 ns
/// an element against 1.73-1.74). No fused multiply-add: every path rounds alike.
#[inline(always)]
pub(super) fn estrin<const N: usize>(s: f64, c: &[f64; N]) -> f64 {
    const { assert!(N == 10 || N == 12 || N == 14) };
    let s2 = s * s;
    let s4 = s2 * s2;
    let q = |i: usize| c[i] + c[i + 1] * s;
    let r0 = q(0) + q(2) * s2;
    let r1 = q(4) + q(6) * s2;
    if N == 14 {
        let r2 = q(8) + q(10) * s2;
        return (r0 + s4 * r1) + (s4 * s4) * (r2 + s4 * q(12));
    }
    let r2 = if N == 12 { q(8) + q(10) * s2 } else { q(8) };
    r0 + s4 * (r1 + s4 * r2)
}

/// `atan x`. For `a = |x|`: `a <= tan(pi/8)` takes `a` itself; up to `tan(3pi/8)`,
/// `pi/4 + atan((a - 1)/(a + 1))`; beyond, `pi/2 + atan(-1/a)`. One division either way,
/// and the reduced `|u| <= tan(pi/8)`. `u` is within ~3 float64 roundings of the exact
/// quotient, and `atan` is flatter than the identity, so the sum is within ~2^-50
/// relatively: at `a = tan(pi/8)` it is `pi/4 - 0.3927`, no worse than halved. Infinities
/// give `±pi/2` (`-1/inf = -0`), NaN stays NaN (every comparison false: `u = a`), and `±0`
/// and tiny `x` return themselves (`s` underflows).
#[inline(always)]
pub(crate) fn atan_f32(x: f32) -> f32 {
    atan_wide(x) as f32
}

/// [`atan_f32`] before its rounding to float32.
#[inline(always)]
fn atan_wide(x: f32) -> f64 {
    let a = f64::from(x.abs());
    let mid = a > TAN_PI_8;
    let far = a > TAN_3PI_8;
    let (num, den, base) = if far {
        (-1.0, a, FRAC_PI_2)
    } else if mid {
        (a - 1.0, a + 1.0, FRAC_PI_4)
    } else {
        (a, 1.0, 0.0)
    };
    let u = num / den;
    let s = u * u;
    (base + (u + u * (s * estrin(s, &ATAN)))).copysign(f64::from(x))
}

/// `asin x`. For `a = |x| <= 1/2` the polynomial at `a`; above, `pi/2 - 2 asin(sqrt(z))`
/// with `z = (1 - a)/2`, exact for a float32 `a`, and `sqrt` rounded once. Where `a` is
/// just above 1/2 the difference is `pi/6` against `pi/3` subtracted: twice the relative
/// error of `asin(sqrt z)`, ~2^-51. `|x| > 1` gives NaN (`sqrt` of a negative), `±1`
/// gives `±pi/2`, `±0` and tiny `x` themselves.
#[inline(always)]
pub(crate) fn asin_f32(x: f32) -> f32 {
    asin_wide(x) as f32
}

/// [`asin_f32`] before its rounding to float32.
#[inline(always)]
fn asin_wide(x: f32) -> f64 {
    let (near, p) = asin_reduced(x);
    (if near { p } else { FRAC_PI_2 - 2.0 * p }).copysign(f64::from(x))
}

/// `asin |x|` for `|x| <= 1/2` (`near`), else `asin(sqrt((1 - |x|)/2))`. One select, on
/// `s`, and `v = sqrt(s)` on both sides: for a float32 `a`, `a^2` is exact in float64, so
/// `sqrt(a^2) = a`. With `v` a second select on the same condition, the compiler moved
/// both selects past the polynomial and computed it once for each side (no faster or
/// slower here, where the `sqrt` bounds the loop, but twice the arithmetic).
#[inline(always)]
fn asin_reduced(x: f32) -> (bool, f64) {
    let a = f64::from(x.abs());
    let near = a <= 0.5;
    let s = if near { a * a } else { 0.5 * (1.0 - a) };
    let v = s.sqrt();
    (near, v + v * (s * estrin(s, &ASIN)))
}

/// `acos x`: `pi/2 - asin x` for `|x| <= 1/2` (at least `pi/3`: no cancellation); above,
/// `2 asin(sqrt z)` for `x > 0` and `pi - 2 asin(sqrt z)` for `x < 0`, `z = (1 - |x|)/2`.
/// Near `x = 1` the result is `2 asin(sqrt z)` itself, relatively as exact as it. `acos 1`
/// is `+0`, `acos -1` is `pi`, `|x| > 1` NaN.
#[inline(always)]
pub(crate) fn acos_f32(x: f32) -> f32 {
    acos_wide(x) as f32
}

/// [`acos_f32`] before its rounding to float32.
#[inline(always)]
fn acos_wide(x: f32) -> f64 {
    let (near, p) = asin_reduced(x);
    if near {
        FRAC_PI_2 - p.copysign(f64::from(x))
    } else if x > 0.0 {
        2.0 * p
    } else {
        PI - 2.0 * p
    }
}

/// The slice loops `elementwise::unary` runs on contiguous float32s: the scalar function
/// over each element, inside an AVX-512 (or AVX2) function where the compiler vectorises it.
macro_rules! slice_loops {
    ($($f:ident => $into:ident),*) => {$(
        pub(crate) fn $into(xs: &[f32], out: &mut [MaybeUninit<f32>]) {
            super::simd::wide_arith_map(xs, out, $f)
        }
    )*};
}

slice_loops!(asin_f32 => asin_f32_into, acos_f32 => acos_f32_into, atan_f32 => atan_f32_into);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backends::host::simd::float_checks::{
        check_array, check_slice_loop, check_wide_loops, every_4099th_f32, same, spread_f32,
    };

    type Case = (
        fn(f32) -> f32,
        fn(&[f32], &mut [MaybeUninit<f32>]),
        fn(f64) -> f64,
        fn(&crate::Array) -> crate::Result<crate::Array>,
        &'static str,
    );

    const CASES: [Case; 3] = [
        (
            asin_f32,
            asin_f32_into,
            f64::asin,
            crate::Array::asin,
            "asin",
        ),
        (
            acos_f32,
            acos_f32_into,
            f64::acos,
            crate::Array::acos,
            "acos",
        ),
        (
            atan_f32,
            atan_f32_into,
            f64::atan,
            crate::Array::atan,
            "atan",
        ),
    ];

    #[test]
    fn every_path_gives_the_bits_of_the_scalar_function() {
        let edges = [
            0.5,
            -0.5,
            1.0,
            -1.0,
            0.414_213_56,
            2.414_213_6,
            -2.414_213_6,
        ];
        let xs = spread_f32(&edges);
        for (f, into, _, method, _) in CASES {
            let scalar: Vec<f32> = xs.iter().map(|&x| f(x)).collect();
            check_slice_loop(&xs, &scalar, into);
            check_wide_loops(&xs, &scalar, f);
            check_array(&xs, &scalar, method);
        }
    }

    #[test]
    fn every_4099th_float32_gets_the_f64_function_rounded_once() {
        for (f, _, reference, _, name) in CASES {
            every_4099th_f32(|x| {
                let (got, want) = (f(x), reference(f64::from(x)) as f32);
                assert!(same(got, want), "{name}({x:e}) = {got:e}, not {want:e}");
            });
        }
    }

    #[test]
    fn before_rounding_every_4099th_float32_is_within_2_pow_minus_50_of_the_function() {
        // glibc's float64 functions are correctly rounded (2^-53): a mutation that costs
        // 2^-44, which the rounded bits let through on all but ~1 in 2^20 arguments, fails.
        type Wide = (fn(f32) -> f64, fn(f64) -> f64, &'static str);
        let wide: [Wide; 3] = [
            (asin_wide, f64::asin, "asin"),
            (acos_wide, f64::acos, "acos"),
            (atan_wide, f64::atan, "atan"),
        ];
        for (f, reference, name) in wide {
            every_4099th_f32(|x| {
                let (got, want) = (f(x), reference(f64::from(x)));
                if want.is_finite() && want != 0.0 {
                    let err = ((got - want) / want).abs();
                    assert!(
                        err <= 2f64.powi(-50),
                        "{name}({x:e}): {got:e}, {err:e} from {want:e}"
                    );
                }
            });
        }
    }

    #[test]
    fn every_float32_near_the_reductions_seams_gets_the_f64_function_rounded_once() {
        // 4096 float32s either side of each point where a reduction changes.
        for (f, _, reference, _, name) in CASES {
            for seam in [0.5f32, 1.0, 0.414_213_56, 2.414_213_6, 1e-4, 1e4] {
                let b = seam.to_bits();
                for bits in b - 4096..b + 4096 {
                    for x in [f32::from_bits(bits), -f32::from_bits(bits)] {
                        let (got, want) = (f(x), reference(f64::from(x)) as f32);
                        assert!(same(got, want), "{name}({x:e}) = {got:e}, not {want:e}");
                    }
                }
            }
        }
    }

    #[test]
    fn edges_are_those_of_the_c_library() {
        let (inf, h) = (f32::INFINITY, std::f32::consts::FRAC_PI_2);
        assert_eq!(atan_f32(inf), h);
        assert_eq!(atan_f32(-inf), -h);
        assert_eq!(atan_f32(f32::MAX), h);
        assert_eq!(asin_f32(1.0), h);
        assert_eq!(asin_f32(-1.0), -h);
        assert_eq!(acos_f32(1.0).to_bits(), 0);
        assert_eq!(acos_f32(-1.0), std::f32::consts::PI);
        assert_eq!(acos_f32(0.0), h);
        assert_eq!(acos_f32(-0.0), h);
        for x in [1.000_000_1f32, -1.000_000_1, 2.0, inf, -inf, f32::NAN] {
            assert!(asin_f32(x).is_nan(), "asin({x})");
            assert!(acos_f32(x).is_nan(), "acos({x})");
        }
        assert!(atan_f32(f32::NAN).is_nan());
        // The odd functions keep the sign of zero; tiny arguments are their own value.
        for f in [asin_f32, atan_f32] {
            assert_eq!(f(-0.0).to_bits(), (-0.0f32).to_bits());
            assert_eq!(f(0.0).to_bits(), 0);
            for x in [1e-10f32, f32::MIN_POSITIVE, f32::from_bits(1)] {
                assert_eq!(f(x), x);
                assert_eq!(f(-x), -x);
            }
        }
    }
}
