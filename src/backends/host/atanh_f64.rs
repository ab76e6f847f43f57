//! `atanh` of a float64 through `log1p`'s vector loop (`log_f64::ln_1p_f64_into`).
//!
//! Why: this was Rust's `f64::atanh`, `(2x/(1 - x)).ln_1p()/2`, a call of the C library's
//! `log1p` per element (7.0 ns an element on one thread of the 2-core AMD EPYC, 64K
//! elements, against NumPy's 1.65), and less accurate than glibc's own `atanh` (its
//! quotient rounded where glibc's form keeps `2x` exact): 3 ulp off at x = -0.96749, where
//! glibc's and this one are within half an ulp.
//!
//! The method is fdlibm's (glibc's too): `atanh a = log1p(w)/2` for `a = |x|`, with
//! `w = 2a + 2a a/(1 - a)` below 1/2 (the exact `2a` first, the rounded quotient only in the
//! smaller term) and `w = 2a/(1 - a)` from 1/2 (`1 - a` exact there), then the sign put
//! back. One division. glibc's `log1p` under it is within 1 ulp, ours within 0.5
//! (`log_f64`), so the result is in the C library's class or closer: against a
//! double-double reference on 500K arguments, 1.44 ulp at worst (the quotient's rounding)
//! where glibc's `atanh` is 1.67 off; the two differ on 9 % of them, by 2 ulp at most.
//!
//! Edges fall out of the arithmetic: `±1` gives `±inf` (`w = inf`), `|x| > 1` and NaN give
//! NaN (`w < -1` or NaN), `±0` and tiny `x` themselves (`w = 2a`, `log1p(2a) = 2a`).
//! Every path gives the same bits: `w` and the halving are the same float64 operations in
//! the scalar function and in the block loops, and `log1p`'s loops give its scalar bits.

use super::log_f64::{ln_1p_f64, ln_1p_f64_into};
use super::simd::wide_arith;
use std::mem::MaybeUninit;

/// Elements per block: the arguments (8 KiB) stay in L1 between the passes.
const BLOCK: usize = 1024;

/// `log1p`'s argument for `x`.
#[inline(always)]
fn arg(x: f64) -> f64 {
    let a = x.abs();
    let q = a / (1.0 - a);
    let t = a + a;
    if a < 0.5 { t + t * q } else { q + q }
}

/// The result from `x` and `l = log1p(arg(x))`.
#[inline(always)]
fn finish(x: f64, l: f64) -> f64 {
    (0.5 * l).copysign(x)
}

/// `atanh x`, in the C library's accuracy class (see the module's docs).
#[inline(always)]
pub(crate) fn atanh_f64(x: f64) -> f64 {
    finish(x, ln_1p_f64(arg(x)))
}

/// `out[i] = atanh_f64(xs[i])` for every `i` below the shorter length, a block at a time:
/// the arguments (vectorised), `log1p`'s loop, the halving (vectorised).
pub(crate) fn atanh_f64_into(xs: &[f64], out: &mut [MaybeUninit<f64>]) {
    let mut args = [0f64; BLOCK];
    for (xs, out) in xs.chunks(BLOCK).zip(out.chunks_mut(BLOCK)) {
        let n = xs.len().min(out.len());
        let (xs, out, args) = (&xs[..n], &mut out[..n], &mut args[..n]);
        wide_arith(
            #[inline(always)]
            || {
                for (p, &x) in args.iter_mut().zip(xs) {
                    *p = arg(x);
                }
            },
        );
        ln_1p_f64_into(args, out);
        wide_arith(
            #[inline(always)]
            || {
                for (o, &x) in out.iter_mut().zip(xs) {
                    // SAFETY: `ln_1p_f64_into` wrote each of the block's `n` values.
                    let l = unsafe { o.assume_init() };
                    o.write(finish(x, l));
                }
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backends::host::dd_reference::glibc::atanh;
    use crate::backends::host::dd_reference::{dd_add, dd_div2, ln_reference, ulp_error, uniform};
    use crate::backends::host::simd::float_checks::{
        check_array, check_slice_loop, spread_f64, ulps,
    };

    #[test]
    fn every_path_gives_the_bits_of_the_scalar_function() {
        let xs: Vec<f64> = uniform(1 << 14, -1.0, 1.0, 1)
            .chain(uniform(1 << 12, 0.99, 1.01, 2))
            .chain(spread_f64(&[0.5, -0.5, 1.0, -1.0]))
            .collect();
        let scalar: Vec<f64> = xs.iter().map(|&x| atanh_f64(x)).collect();
        check_slice_loop(&xs, &scalar, atanh_f64_into);
        check_array(&xs, &scalar, crate::Array::atanh);
    }

    #[test]
    fn edges_are_those_of_the_c_library() {
        assert_eq!(atanh_f64(1.0), f64::INFINITY);
        assert_eq!(atanh_f64(-1.0), f64::NEG_INFINITY);
        for x in [1.0 + f64::EPSILON, 2.0, f64::INFINITY, f64::NAN] {
            assert!(atanh_f64(x).is_nan(), "atanh({x})");
            assert!(atanh_f64(-x).is_nan(), "atanh(-{x})");
        }
        assert_eq!(atanh_f64(0.0).to_bits(), 0);
        assert_eq!(atanh_f64(-0.0).to_bits(), (-0.0f64).to_bits());
        for x in [1e-10, 1e-300, f64::MIN_POSITIVE, 1e-310, f64::from_bits(1)] {
            assert_eq!(atanh_f64(x), x);
            assert_eq!(atanh_f64(-x), -x);
        }
    }

    /// `atanh x = ln((1 + x)/(1 - x))/2` in double-double: both sums exact as two parts,
    /// their quotient, and `ln(hi + lo) = ln(hi) + lo/hi` (the next term is ~2^-106).
    fn reference(x: f64) -> (f64, f64) {
        let two = |a: f64, b: f64| {
            let s = a + b;
            (s, crate::backends::host::poly::two_sum_err(a, b, s))
        };
        let (hi, lo) = dd_div2(two(1.0, x), two(1.0, -x));
        let (l, m) = dd_add(ln_reference(hi), (lo / hi, 0.0));
        (0.5 * l, 0.5 * m)
    }

    #[test]
    fn within_two_ulp_of_the_c_library_and_mostly_its_bits() {
        // A quotient or sum rounded where fdlibm's form keeps it exact, or `log1p`'s error
        // grown, shows as more results apart and further.
        let (mut n, mut differ, mut worst, mut libm_worst) = (0usize, 0usize, 0f64, 0f64);
        let ranges = [
            (-1.0, 1.0),
            (-0.5, 0.5),
            (0.45, 0.55),
            (0.9, 1.0),
            (-1e-3, 1e-3),
        ];
        for (seed, (lo, hi)) in ranges.into_iter().enumerate() {
            for x in uniform(100_000, lo, hi, seed as u64 + 80) {
                let (got, want) = (atanh_f64(x), atanh(x));
                assert!(
                    ulps(got, want) <= 2,
                    "atanh({x:e}) = {got:e}, libm {want:e}"
                );
                differ += usize::from(got != want);
                n += 1;
                let exact = reference(x);
                worst = worst.max(ulp_error(got, exact));
                libm_worst = libm_worst.max(ulp_error(want, exact));
            }
        }
        eprintln!(
            "{differ} of {n} differ from the C library; worst {worst} ulp, the C library's {libm_worst}"
        );
        // 1.44 ulp at worst here, glibc's 1.67 (the quotient's rounding, under `log1p`).
        assert!(worst <= 1.5, "worst {worst} ulp");
        assert!(differ * 5 < n, "{differ} of {n} differ from the C library");
    }
}
