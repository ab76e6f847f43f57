//! `atan` of a float64: one branch-free scalar function, and a slice loop in which the
//! compiler vectorises it.
//!
//! Why: the C library's `atan` is a call per element with branches on the argument's size,
//! 8.1 ns an element on one thread of the 2-core AMD EPYC (AVX-512), 64K elements, against
//! NumPy's 1.24 (its AVX-512 loop).
//!
//! The method is fdlibm's: for `a = |x|`, one of five reductions by `a`'s size, each one
//! division, `u = (p a - q)/(r a + t)`, with `atan a = atan(c) + atan(u)` for `c` in
//! {0, 1/2, 1, 3/2, inf}, so that `|u| <= 7/16`; then `atan u = u + u s P(s)`, `s = u^2`,
//! `P` of degree 11 (a Chebyshev fit at 60 digits, within 2^-57.9 relatively with its float64
//! coefficients), and `atan(c)` in two parts, summed small terms first. Here the reduction
//! is picked by selects, not branches. The numerators `2a - 1`, `a - 1` and `a - 3/2` are
//! exact on their intervals (Sterbenz); the denominator and the quotient round, so `u`
//! is within ~1.5 ulp of the exact quotient, which is at most ~1/2 ulp of the result
//! (`|u|` is at most half the result where `c > 0`). With the final rounding: within ~1
//! ulp, as fdlibm's and musl's `atan`. glibc's is closer (IBM's, within ~0.5 ulp); the
//! tests bound ours at 1 ulp from glibc's and count how often they differ.
//!
//! Infinities give `±pi/2` (`-1/inf = -0`), NaN stays NaN (every comparison false: the last
//! reduction, `-1/NaN`), and `±0` and tiny `x` return themselves (`s` underflows). No fused
//! multiply-add: every path rounds alike.

use super::inv_trigf::estrin;
use std::mem::MaybeUninit;

/// `(atan(u)/u - 1)/u^2` in `s = u^2` for `|u| <= 7/16`, degree 11.
const P: [f64; 12] = [
    f64::from_bits(0xbfd5_5555_5555_5555),
    f64::from_bits(0x3fc9_9999_9999_98c5),
    f64::from_bits(0xbfc2_4924_9248_5503),
    f64::from_bits(0x3fbc_71c7_1bd2_b8bc),
    f64::from_bits(0xbfb7_45d1_54c8_4f7a),
    f64::from_bits(0x3fb3_b137_5ce5_bdc6),
    f64::from_bits(0xbfb1_10c9_ce7b_0572),
    f64::from_bits(0x3fae_1708_00a4_6210),
    f64::from_bits(0xbfaa_b59b_417b_2d3f),
    f64::from_bits(0x3fa7_0018_16fd_063f),
    f64::from_bits(0xbfa0_f62b_ba6a_2558),
    f64::from_bits(0x3f8e_4167_464d_3de8),
];

/// `atan(1/2)`, `pi/4`, `atan(3/2)` and `pi/2`, each as a float64 and the rest (60 digits).
const ATAN_HALF: (f64, f64) = (
    f64::from_bits(0x3fdd_ac67_0561_bb4f),
    f64::from_bits(0x3c7a_2b7f_222f_65e2),
);
const PI_4: (f64, f64) = (
    f64::from_bits(0x3fe9_21fb_5444_2d18),
    f64::from_bits(0x3c81_a626_3314_5c07),
);
const ATAN_3_2: (f64, f64) = (
    f64::from_bits(0x3fef_730b_d281_f69b),
    f64::from_bits(0x3c70_0788_7af0_cbbd),
);
const PI_2: (f64, f64) = (
    f64::from_bits(0x3ff9_21fb_5444_2d18),
    f64::from_bits(0x3c91_a626_3314_5c07),
);

/// `atan x` within ~1 ulp.
#[inline(always)]
pub(crate) fn atan_f64(x: f64) -> f64 {
    let a = x.abs();
    // (numerator, denominator, atan(c)): `u = num/den = (a - c)/(1 + a c)` scaled.
    let (num, den, (hi, lo)) = if a < 0.4375 {
        (a, 1.0, (0.0, 0.0))
    } else if a < 0.6875 {
        (2.0 * a - 1.0, 2.0 + a, ATAN_HALF)
    } else if a < 1.1875 {
        (a - 1.0, a + 1.0, PI_4)
    } else if a < 2.4375 {
        (a - 1.5, 1.0 + 1.5 * a, ATAN_3_2)
    } else {
        (-1.0, a, PI_2)
    };
    let u = num / den;
    let s = u * u;
    let t = hi + (u + (u * (s * estrin(s, &P)) + lo));
    t.copysign(x)
}

/// `out[i] = atan_f64(xs[i])` for every `i` below the shorter length, inside an AVX-512
/// (or AVX2) function where the compiler vectorises it.
pub(crate) fn atan_f64_into(xs: &[f64], out: &mut [MaybeUninit<f64>]) {
    super::simd::wide_arith_map(xs, out, atan_f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backends::host::dd_reference::uniform;
    use crate::backends::host::simd::float_checks::{
        check_array, check_slice_loop, spread_f64, ulps,
    };

    fn arguments() -> Vec<f64> {
        uniform(1 << 15, -4.0, 4.0, 1)
            .chain(uniform(1 << 13, -1e6, 1e6, 2))
            .chain([0.4375, 0.6875, 1.1875, 2.4375, 1.0, 0.5, 1.5])
            .flat_map(|x| [x, -x])
            .chain(spread_f64(&[f64::MAX, f64::from_bits(1)]))
            .collect()
    }

    #[test]
    fn every_path_gives_the_bits_of_the_scalar_function() {
        let xs = arguments();
        let scalar: Vec<f64> = xs.iter().map(|&x| atan_f64(x)).collect();
        check_slice_loop(&xs, &scalar, atan_f64_into);
        check_array(&xs, &scalar, crate::Array::atan);
    }

    #[test]
    fn edges_are_those_of_the_c_library() {
        let h = std::f64::consts::FRAC_PI_2;
        assert_eq!(atan_f64(f64::INFINITY), h);
        assert_eq!(atan_f64(f64::NEG_INFINITY), -h);
        assert_eq!(atan_f64(f64::MAX), h);
        assert_eq!(atan_f64(1.0), std::f64::consts::FRAC_PI_4);
        assert!(atan_f64(f64::NAN).is_nan());
        assert_eq!(atan_f64(0.0).to_bits(), 0);
        assert_eq!(atan_f64(-0.0).to_bits(), (-0.0f64).to_bits());
        for x in [1e-10, 1e-300, f64::MIN_POSITIVE, 1e-310, f64::from_bits(1)] {
            assert_eq!(atan_f64(x), x);
            assert_eq!(atan_f64(-x), -x);
        }
    }

    #[test]
    fn within_an_ulp_of_the_c_library_and_mostly_its_bits() {
        // glibc's `atan` is within ~0.5 ulp, ours within ~1: at most an ulp apart, and
        // apart on few arguments. A polynomial 2^-50 off instead of 2^-58, or a
        // reduction's constant without its low part, differs on far more.
        let (mut n, mut differ) = (0usize, 0usize);
        for (seed, (lo, hi)) in [(0.0, 0.5), (0.4, 0.7), (0.6, 1.3), (1.1, 2.5), (2.3, 50.0)]
            .into_iter()
            .enumerate()
        {
            for x in uniform(100_000, lo, hi, seed as u64 + 60) {
                let (got, want) = (atan_f64(x), x.atan());
                assert!(ulps(got, want) <= 1, "atan({x:e}) = {got:e}, libm {want:e}");
                differ += usize::from(got != want);
                n += 1;
            }
        }
        eprintln!("{differ} of {n} differ from the C library");
        assert!(differ * 20 < n, "{differ} of {n} differ from the C library");
    }
}
