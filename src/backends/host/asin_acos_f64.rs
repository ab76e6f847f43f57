//! `asin` and `acos` of a float64: branch-free scalar functions, and slice loops in which the
//! compiler vectorises them.
//!
//! Why: they were the C library's, a call per element with branches on the argument: 4.3
//! and 4.5 ns an element on one thread of the 2-core AMD EPYC (AVX-512), 64K elements,
//! against NumPy's 1.26 and 1.37 (its AVX-512 loops).
//!
//! The method is fdlibm's reduction with a polynomial in place of its rational function and
//! its division. For `a = |x|`:
//! - up to 1/2, `asin a = a + a s P(s)` with `s = a^2`;
//! - above, `asin a = pi/2 - 2 asin(v)` with `v = sqrt(z)`, `z = (1 - a)/2` (exact), and
//!   `asin v = v + v z P(z)`.
//!
//! `P` is of degree 13 on `[0, 1/4]` (a Chebyshev fit at 60 digits, within 2^-58.6 relatively
//! with its float64 coefficients), evaluated by Estrin's scheme (`inv_trigf::estrin`). `v`'s
//! rounding is what costs fdlibm its extra care above 1/2 (the result is `pi/2 - 2v` and
//! less, so `v`'s half ulp would be up to an ulp of it): here `v` is carried in two parts
//! (`poly::sqrt_parts`, whose correction needs no division), and the subtraction from `pi/2`
//! (or `pi`) with its rounding error. `acos` is `pi/2 - asin x` up to 1/2, else `2 asin v`
//! (`x > 0`) or `pi - 2 asin v`. Every result is one sum `(B + m v) + (B_lo + m lo)` with its
//! large part's error carried, `m = ±1` or `±2`.
//!
//! Accuracy: glibc's (IBM's) are correctly rounded but for rare cases. Ours differ from them
//! on 1.2 % (`asin`) and 0.5 % (`acos`) of the test's 1M arguments, by an ulp; on 4,000 of
//! those, measured at 40 digits (mpmath), ours were 0.68 and 0.64 ulp off at worst (just
//! above 1/2, where the polynomial's term is largest beside the result). The tests bound ours
//! at 1 ulp from glibc's and the share that differs at 3 %.
//!
//! `±1` gives `±pi/2` (`asin`), `+0` and `pi` (`acos`); `|x| > 1` and NaN give NaN (`z < 0`,
//! or every comparison false and `z` NaN); `±0` and tiny `x` give themselves (`asin`: `s`
//! underflows). Every path gives the same bits: the scalar functions are the vectorised
//! loops' operations, and the one fused multiply-add (`sqrt_parts`'s residual) is exact.

use super::inv_trigf::estrin;
use super::poly::{sqrt_parts, two_sum_err};
use super::simd::wide_arith_map;
use std::mem::MaybeUninit;

/// `(asin(u)/u - 1)/u^2` in `s = u^2` for `s <= 1/4`, degree 13.
const P: [f64; 14] = [
    f64::from_bits(0x3fc5_5555_5555_5555),
    f64::from_bits(0x3fb3_3333_3333_3388),
    f64::from_bits(0x3fa6_db6d_b6da_c1e0),
    f64::from_bits(0x3f9f_1c71_c7a5_2ba3),
    f64::from_bits(0x3f96_e8ba_123e_494c),
    f64::from_bits(0x3f91_c4ef_ce23_019f),
    f64::from_bits(0x3f8c_990a_d3d8_fdca),
    f64::from_bits(0x3f87_b027_ee1d_d585),
    f64::from_bits(0x3f83_b49d_e712_1487),
    f64::from_bits(0x3f83_1622_469c_e5ad),
    f64::from_bits(0x3f68_f193_7434_18ff),
    f64::from_bits(0x3f94_0619_2d12_4629),
    f64::from_bits(0xbf93_b416_bb7d_9257),
    f64::from_bits(0x3f9e_529c_6fce_9bb4),
];

/// `pi/2` and `pi`, each as a float64 and the rest (60 digits).
const PI_2: (f64, f64) = (
    f64::from_bits(0x3ff9_21fb_5444_2d18),
    f64::from_bits(0x3c91_a626_3314_5c07),
);
const PI: (f64, f64) = (
    f64::from_bits(0x4009_21fb_5444_2d18),
    f64::from_bits(0x3ca1_a626_3314_5c07),
);

/// The reduction of `x`: whether `|x| <= 1/2` (`near`), and `asin` of `a = |x|` (`near`) or
/// of `v = sqrt((1 - a)/2)` as `v + lo` (`lo` the root's low part and the polynomial's term).
#[inline(always)]
fn reduced(x: f64) -> (bool, f64, f64) {
    let a = x.abs();
    let near = a <= 0.5;
    let z = 0.5 - 0.5 * a;
    let (r, r_lo) = sqrt_parts(z, 0.0);
    let (v, v_lo, s) = if near { (a, 0.0, a * a) } else { (r, r_lo, z) };
    (near, v, v_lo + v * (s * estrin(s, &P)))
}

/// `(b_hi + m v) + (b_lo + m lo)`, the first sum's rounding error carried (`m v` exact).
#[inline(always)]
fn sum((b_hi, b_lo): (f64, f64), m: f64, v: f64, lo: f64) -> f64 {
    let mv = m * v;
    let h = b_hi + mv;
    h + ((b_lo + two_sum_err(b_hi, mv, h)) + m * lo)
}

/// `asin x` (see the module's docs).
#[inline(always)]
pub(crate) fn asin_f64(x: f64) -> f64 {
    let (near, v, lo) = reduced(x);
    let (b, m) = if near {
        ((0.0, 0.0), 1.0)
    } else {
        (PI_2, -2.0)
    };
    sum(b, m, v, lo).copysign(x)
}

/// `acos x` (see the module's docs).
#[inline(always)]
pub(crate) fn acos_f64(x: f64) -> f64 {
    let (near, v, lo) = reduced(x);
    let (b, m) = if near {
        (PI_2, -1.0f64.copysign(x))
    } else if x > 0.0 {
        ((0.0, 0.0), 2.0)
    } else {
        (PI, -2.0)
    };
    sum(b, m, v, lo)
}

/// `out[i] = asin_f64(xs[i])` for every `i` below the shorter length.
pub(crate) fn asin_f64_into(xs: &[f64], out: &mut [MaybeUninit<f64>]) {
    wide_arith_map(xs, out, asin_f64)
}

/// `out[i] = acos_f64(xs[i])` for every `i` below the shorter length.
pub(crate) fn acos_f64_into(xs: &[f64], out: &mut [MaybeUninit<f64>]) {
    wide_arith_map(xs, out, acos_f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backends::host::dd_reference::uniform;
    use crate::backends::host::simd::float_checks::{
        check_array, check_slice_loop, spread_f64, ulps,
    };

    fn arguments() -> Vec<f64> {
        uniform(1 << 14, -1.0, 1.0, 1)
            .chain(uniform(1 << 12, 0.49, 0.51, 2))
            .chain(uniform(1 << 12, -60.0, 0.0, 3).map(|e| 1.0 - e.exp2()))
            .chain(uniform(1 << 12, -1074.0, 0.0, 4).map(|e| -e.exp2()))
            .chain(spread_f64(&[0.5, -0.5, 1.0, -1.0]))
            .collect()
    }

    #[test]
    fn every_path_gives_the_bits_of_the_scalar_function() {
        let xs = arguments();
        let scalar: Vec<f64> = xs.iter().map(|&x| asin_f64(x)).collect();
        check_slice_loop(&xs, &scalar, asin_f64_into);
        check_array(&xs, &scalar, crate::Array::asin);
        let scalar: Vec<f64> = xs.iter().map(|&x| acos_f64(x)).collect();
        check_slice_loop(&xs, &scalar, acos_f64_into);
        check_array(&xs, &scalar, crate::Array::acos);
    }

    #[test]
    fn edges_are_those_of_the_c_library() {
        use std::f64::consts::{FRAC_PI_2, PI as PI64};
        assert_eq!(asin_f64(1.0), FRAC_PI_2);
        assert_eq!(asin_f64(-1.0), -FRAC_PI_2);
        assert_eq!(acos_f64(1.0).to_bits(), 0);
        assert_eq!(acos_f64(-1.0), PI64);
        assert_eq!(acos_f64(0.0), FRAC_PI_2);
        assert_eq!(acos_f64(-0.0), FRAC_PI_2);
        assert_eq!(asin_f64(0.0).to_bits(), 0);
        assert_eq!(asin_f64(-0.0).to_bits(), (-0.0f64).to_bits());
        for x in [1e-10, 1e-300, f64::MIN_POSITIVE, 1e-310, f64::from_bits(1)] {
            assert_eq!(asin_f64(x), x);
            assert_eq!(asin_f64(-x), -x);
            assert_eq!(
                acos_f64(x),
                if x > 1e-17 { FRAC_PI_2 - x } else { FRAC_PI_2 }
            );
        }
        for x in [1.0 + f64::EPSILON, 2.0, f64::INFINITY, f64::NAN] {
            for f in [asin_f64, acos_f64] {
                assert!(f(x).is_nan() && f(-x).is_nan(), "{x}");
            }
        }
    }

    #[test]
    fn within_an_ulp_of_the_c_library_and_mostly_its_bits() {
        // Without the root's low part, or with the subtraction's error dropped, results
        // near 1/2 and 1 land 1-2 ulp from glibc's, and many more of them differ.
        let ranges = [
            (-1.0, 1.0),
            (0.45, 0.55),
            (0.9, 1.0),
            (0.999_999, 1.0),
            (-1e-4, 1e-4),
        ];
        for (name, ours, theirs) in [
            (
                "asin",
                asin_f64 as fn(f64) -> f64,
                f64::asin as fn(f64) -> f64,
            ),
            ("acos", acos_f64, f64::acos),
        ] {
            let (mut n, mut differ) = (0usize, 0usize);
            for (seed, &(lo, hi)) in ranges.iter().enumerate() {
                for x in uniform(100_000, lo, hi, seed as u64 + 20).flat_map(|x| [x, -x]) {
                    let (got, want) = (ours(x), theirs(x));
                    assert!(
                        ulps(got, want) <= 1,
                        "{name}({x:e}) = {got:e}, glibc {want:e}"
                    );
                    differ += usize::from(got != want);
                    n += 1;
                }
            }
            eprintln!("{name}: {differ} of {n} differ from the C library");
            assert!(differ * 100 < 3 * n, "{name}: {differ} of {n} differ");
        }
    }
}
