//! `asinh` and `acosh` of a float64 through `ln`'s vector loop, to within 0.51 ulp.
//!
//! Why: `asinh` was Rust's `f64::asinh` (its own formula over the C library's `log1p`,
//! `hypot` and a division) and `acosh` Rust's `f64::acosh` (`ln(x + sqrt(x^2 - 1))`, a call
//! of `ln` per element): 19.5 and 5.3 ns an element on one thread of the 2-core AMD EPYC (64K
//! elements; NumPy 2.1 for `asinh`). glibc's own (fdlibm's) are within ~2 ulp: against a
//! double-double reference, its `asinh` is 1.68 ulp off near 0.84, its `acosh` 2.15 near
//! 1.0001.
//!
//! Both are `ln u` with `u = a + sqrt(a^2 + 1)` (`a = |x|`, the sign put back) or
//! `u = x + sqrt(x^2 - 1)`, and both lose their accuracy in `u`'s roundings, not in the
//! logarithm. Here `u` is carried in two parts, all but exactly:
//! - `x^2` exactly as `p + p_lo` (a fused multiply-add for `p_lo`), then `y = p ± 1` with its
//!   two-sum error added to `p_lo`: `y + y_err` is `x^2 ± 1` to ~2^-106;
//! - `r = sqrt(y)` and its residual `(y - r^2) + y_err` (again a fused multiply-add), over
//!   `2r`: `r + r_lo` is the root to ~2^-104. The division is an estimate of `1/(2r)` from
//!   the exponent's bits and two Newton steps (to 2^-12, exact at powers of two), which is
//!   plenty for a term 2^-53 of `r`, and cheaper than Zen 4's 512-bit division;
//! - `s = a + r` and its two-sum error plus `r_lo`: `s + e = u`.
//!
//! `log_f64::ln_sum_f64` takes `ln(s + e)` with the tail carried into its reduction, as
//! `log1p` does: near `x = 0` (`asinh`) `u` is `1 + a + ...` and the tail holds what the
//! rounded `s` lost, so no separate path is needed for small arguments. Against a
//! double-double reference on 500K arguments the results are within 0.504 ulp, the
//! logarithm's own error: at most half an ulp and a hair, against glibc's 1.68 and 2.15.
//!
//! From `a = 2^28`, `u` is `2a` to 2^-58 (the dropped term is `1/(2a)`), and `x^2` would
//! overflow further on: `s = 2a`, `e = 0`. From `2^1022`, where `2a` leaves `ln_sum`'s range,
//! `ln a + ln 2` (`far`). NaN stays NaN, `acosh` below 1 is NaN (set so first: `x^2 - 1` is
//! positive again below -1), `±inf` gives `±inf` (`asinh`) and `inf` (`acosh`), `±0` and
//! subnormals are themselves (`asinh`: `ln(1 + a)` with `a` in the tail).
//!
//! Every path gives the same bits: the scalar function performs the same IEEE operations as
//! the vectorised block loops (a fused multiply-add is exact whether the processor's or the C
//! library's `fma`), and `ln_sum`'s loops give its scalar bits.

use super::log_f64::{ln_f64, ln_sum_f64, ln_sum_f64_into};
use super::poly::{sqrt_parts, two_sum_err};
use super::simd::wide_arith;
use std::f64::consts::LN_2;
use std::mem::MaybeUninit;

/// Elements per block: `s` and `e` (8 KiB) stay in L1 between the passes, with the block's
/// arguments and results.
const BLOCK: usize = 512;
/// 2^28: from here `u = 2a` (see the module's docs).
const BIG: f64 = 268_435_456.0;
/// 2^1022: from here `far`.
const FAR: f64 = 4.494_232_837_155_79e307;

/// `(s, e)` with `s + e = b + sqrt(q^2 + c)` to ~2^-104 relative (`b >= 0` or NaN, `c` at
/// least `q^2`'s ulp unless 0): `q^2 + c` as `y + y_err`, its root as `r + r_lo`, then
/// `b + r` with its two-sum error. From `BIG`, `(2b, 0)`.
#[inline(always)]
fn parts(b: f64, q: f64, c: f64) -> (f64, f64) {
    let p = q * q;
    let p_lo = q.mul_add(q, -p);
    let y = p + c;
    let (r, r_lo) = sqrt_parts(y, two_sum_err(p, c, y) + p_lo);
    let s = b + r;
    let e = two_sum_err(b, r, s) + r_lo;
    if b > BIG { (b + b, 0.0) } else { (s, e) }
}

/// `asinh`'s parts of `a = |x|`: `u = a + sqrt(a^2 + 1)`.
#[inline(always)]
fn asinh_parts(x: f64) -> (f64, f64) {
    let a = x.abs();
    parts(a, a, 1.0)
}

/// `acosh`'s parts: `u = x + sqrt(x^2 - 1)`, with `x^2 - 1` as `t^2 + 2t` for `t = x - 1`
/// (exact) up to 2: there `x^2 - 1` is as small as 2^-51, and `y = x^2 - 1` rounded to
/// `x^2`'s ulp would leave `y_err` too large beside it for one correction of the root.
#[inline(always)]
fn acosh_parts(x: f64) -> (f64, f64) {
    // Below 1 (and NaN), NaN: `x^2 - 1` is no guard, being positive again below -1, and
    // `x + sqrt(x^2 - 1)` is `-inf + inf` = NaN only while `x^2` is finite (`acosh(-1e200)`
    // was `inf`).
    let x = if x >= 1.0 { x } else { f64::NAN };
    let t = x - 1.0;
    let near_1 = x <= 2.0;
    parts(
        x,
        if near_1 { t } else { x },
        if near_1 { t + t } else { -1.0 },
    )
}

/// Whether the block loops' result stands: below 2^1022 in magnitude (true for NaN).
#[inline(always)]
fn near(x: f64) -> bool {
    x.abs() < FAR || x.is_nan()
}

/// `asinh x` within 0.51 ulp (see the module's docs).
#[inline(always)]
pub(crate) fn asinh_f64(x: f64) -> f64 {
    if near(x) {
        let (s, e) = asinh_parts(x);
        ln_sum_f64(s, e).copysign(x)
    } else {
        asinh_far(x)
    }
}

/// `asinh x` from 2^1022 on: `ln |x| + ln 2` with the sign.
#[inline(always)]
fn asinh_far(x: f64) -> f64 {
    (ln_f64(x.abs()) + LN_2).copysign(x)
}

/// `acosh x` within 0.51 ulp; NaN below 1 (see the module's docs).
#[inline(always)]
pub(crate) fn acosh_f64(x: f64) -> f64 {
    if near(x) {
        let (s, e) = acosh_parts(x);
        ln_sum_f64(s, e)
    } else {
        acosh_far(x)
    }
}

/// `acosh x` from 2^1022 on: `ln x + ln 2`, and NaN for `x <= -2^1022`.
#[inline(always)]
fn acosh_far(x: f64) -> f64 {
    if x > 0.0 { ln_f64(x) + LN_2 } else { f64::NAN }
}

/// `out[i] = asinh_f64(xs[i])` for every `i` below the shorter length.
pub(crate) fn asinh_f64_into(xs: &[f64], out: &mut [MaybeUninit<f64>]) {
    blocks::<true>(xs, out)
}

/// `out[i] = acosh_f64(xs[i])` for every `i` below the shorter length.
pub(crate) fn acosh_f64_into(xs: &[f64], out: &mut [MaybeUninit<f64>]) {
    blocks::<false>(xs, out)
}

/// `asinh` (`ASINH`) or `acosh` a block at a time: the parts (vectorised), `ln_sum`'s loop,
/// then the sign (`asinh`) and the far elements.
#[inline(always)]
fn blocks<const ASINH: bool>(xs: &[f64], out: &mut [MaybeUninit<f64>]) {
    let (mut s, mut e) = ([0f64; BLOCK], [0f64; BLOCK]);
    for (xs, out) in xs.chunks(BLOCK).zip(out.chunks_mut(BLOCK)) {
        let n = xs.len().min(out.len());
        let (xs, out, s, e) = (&xs[..n], &mut out[..n], &mut s[..n], &mut e[..n]);
        wide_arith(
            #[inline(always)]
            || {
                for ((s, e), &x) in s.iter_mut().zip(e.iter_mut()).zip(xs) {
                    (*s, *e) = if ASINH {
                        asinh_parts(x)
                    } else {
                        acosh_parts(x)
                    };
                }
            },
        );
        ln_sum_f64_into(s, e, out);
        wide_arith(
            #[inline(always)]
            || {
                if ASINH {
                    for (o, &x) in out.iter_mut().zip(xs) {
                        // SAFETY: `ln_sum_f64_into` wrote each of the block's `n` values.
                        let l = unsafe { o.assume_init() };
                        o.write(l.copysign(x));
                    }
                    super::simd::fix_far(xs, out, near, asinh_far)
                } else {
                    super::simd::fix_far(xs, out, near, acosh_far)
                }
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backends::host::dd_reference::glibc::{acosh, asinh};
    use crate::backends::host::dd_reference::{dd_add, dd_mul, ln_reference, ulp_error, uniform};
    use crate::backends::host::simd::float_checks::{
        check_array, check_slice_loop, spread_f64, ulps,
    };

    /// Arguments over both functions' ranges: small and tiny, around 1 and 2, mid, past
    /// `BIG`, a sweep of bit patterns, and the edges.
    fn arguments() -> Vec<f64> {
        uniform(1 << 13, -4.0, 4.0, 1)
            .chain(uniform(1 << 12, 1.0, 1.001, 2))
            .chain(uniform(1 << 12, -60.0, 100.0, 3).map(f64::exp2))
            .chain(uniform(1 << 11, -1e9, 1e9, 4))
            .chain(spread_f64(&[
                1.0,
                -1.0,
                BIG,
                -BIG,
                FAR,
                -FAR,
                f64::MAX,
                f64::MIN,
                f64::MIN_POSITIVE,
                f64::from_bits(1),
            ]))
            .collect()
    }

    #[test]
    fn every_path_gives_the_bits_of_the_scalar_function() {
        let xs = arguments();
        let scalar: Vec<f64> = xs.iter().map(|&x| asinh_f64(x)).collect();
        check_slice_loop(&xs, &scalar, asinh_f64_into);
        check_array(&xs, &scalar, crate::Array::asinh);
        let scalar: Vec<f64> = xs.iter().map(|&x| acosh_f64(x)).collect();
        check_slice_loop(&xs, &scalar, acosh_f64_into);
        check_array(&xs, &scalar, crate::Array::acosh);
    }

    #[test]
    fn edges_are_those_of_the_c_library() {
        let inf = f64::INFINITY;
        assert_eq!(asinh_f64(inf), inf);
        assert_eq!(asinh_f64(-inf), -inf);
        assert!(asinh_f64(f64::NAN).is_nan());
        assert_eq!(asinh_f64(0.0).to_bits(), 0);
        assert_eq!(asinh_f64(-0.0).to_bits(), (-0.0f64).to_bits());
        for x in [1e-10, 1e-300, f64::MIN_POSITIVE, 1e-310, f64::from_bits(1)] {
            assert_eq!(asinh_f64(x), x);
            assert_eq!(asinh_f64(-x), -x);
        }
        // glibc's bits at the largest f64 and either side of the far path.
        assert_eq!(asinh_f64(f64::MAX), 710.475_860_073_943_9);
        assert_eq!(asinh_f64(-f64::MAX), -710.475_860_073_943_9);
        assert_eq!(acosh_f64(f64::MAX), 710.475_860_073_943_9);
        for x in [
            FAR,
            FAR * (1.0 - f64::EPSILON),
            BIG,
            BIG * (1.0 + f64::EPSILON),
        ] {
            assert!(ulps(asinh_f64(x), asinh(x)) <= 1, "asinh({x:e})");
            assert!(ulps(acosh_f64(x), acosh(x)) <= 1, "acosh({x:e})");
        }
        assert_eq!(acosh_f64(1.0).to_bits(), 0);
        assert_eq!(acosh_f64(inf), inf);
        for x in [
            1.0 - f64::EPSILON / 2.0,
            0.5,
            0.0,
            -0.0,
            -1.0,
            -3.0,
            -1e200,
            -f64::MAX,
            -FAR,
            -inf,
            f64::NAN,
        ] {
            assert!(acosh_f64(x).is_nan(), "acosh({x})");
        }
    }

    /// `sqrt(hi + lo)` in double-double: the root of `hi`, corrected by one Newton step.
    fn dd_sqrt((hi, lo): (f64, f64)) -> (f64, f64) {
        let r = hi.sqrt();
        let sq = dd_mul((r, 0.0), (r, 0.0));
        let rest = dd_add((hi, lo), (-sq.0, -sq.1));
        dd_add((r, 0.0), (rest.0 / (2.0 * r), 0.0))
    }

    /// `b + sqrt(b^2 + c)` in double-double, then its `ln` (`ln(hi + lo) = ln hi + lo/hi`,
    /// the next term ~2^-106). For `asinh` near 0 the sum is `1 + (b + (root - 1))`, whose
    /// low part keeps `b`'s last bits.
    fn reference(b: f64, c: f64) -> (f64, f64) {
        let root = dd_sqrt(dd_add(dd_mul((b, 0.0), (b, 0.0)), (c, 0.0)));
        let u = if c > 0.0 {
            dd_add((1.0, 0.0), dd_add((b, 0.0), dd_add(root, (-1.0, 0.0))))
        } else {
            dd_add((b, 0.0), root)
        };
        dd_add(ln_reference(u.0), (u.1 / u.0, 0.0))
    }

    #[test]
    fn within_0_51_ulp_where_the_c_library_is_2_ulp_off() {
        // Where `u` is rounded (no `r_lo`, say, or `x^2` without its low part) the results
        // are 0.8 ulp off and more near 0 and 1, and the shared worst over 0.51 shows it.
        let asinh_ranges = [
            (1e-7, 1e-3),
            (1e-3, 0.5),
            (0.5, 2.0),
            (2.0, 64.0),
            (64.0, 1e9),
        ];
        let acosh_ranges = [
            (1.0, 1.0 + 1e-9),
            (1.0, 1.01),
            (1.01, 2.0),
            (2.0, 64.0),
            (64.0, 1e9),
        ];
        for (asinh_fn, ranges) in [(true, asinh_ranges), (false, acosh_ranges)] {
            let (mut n, mut differ, mut worst, mut libm_worst) = (0usize, 0usize, 0f64, 0f64);
            for (seed, &(lo, hi)) in ranges.iter().enumerate() {
                for x in uniform(40_000, lo, hi, seed as u64 + 50) {
                    let (got, libm, want) = if asinh_fn {
                        (asinh_f64(-x), -asinh(x), reference(x, 1.0))
                    } else {
                        (acosh_f64(x), acosh(x), reference(x, -1.0))
                    };
                    let err = ulp_error(got.abs(), want);
                    let name = if asinh_fn { "asinh(-x)" } else { "acosh(x)" };
                    assert!(err <= 0.51, "{name} for x = {x:e}: {got:e}, {err} ulp off");
                    worst = worst.max(err);
                    libm_worst = libm_worst.max(ulp_error(libm.abs(), want));
                    differ += usize::from(got != libm);
                    n += 1;
                }
            }
            assert!(worst > 0.49, "the reference itself is off: worst {worst}");
            eprintln!(
                "{}: worst {worst} ulp; {differ} of {n} differ from the C library, whose worst is {libm_worst}",
                if asinh_fn { "asinh" } else { "acosh" }
            );
        }
    }
}
