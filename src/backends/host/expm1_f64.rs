//! `e^x - 1`, `sinh` and `cosh` of a float64, and the two pieces they share with `tanh`
//! (`tanh_f64`): `E = e^y - 1` in two parts ([`em1`]) and `E / (E + c)` in two parts
//! ([`ratio`]). One scalar function each, and slice loops that run it 8 or 4 lanes at a
//! time.
//!
//! Why: these called the C library per element. One thread on the 2-core AMD EPYC
//! (AVX-512), 64K elements: `expm1` 6.8, `sinh` 11.1 and `cosh` 6.2 ns an element against
//! NumPy's 1.2, 1.2 and 0.9 (its AVX-512 loops). glibc's are within 1 (`expm1`) and 2 ulp.
//! These loops: 1.58-1.62, 2.40 and 2.63 ns, within 0.507, 0.507 and 0.500 ulp where glibc's
//! were 0.831, 1.72 and 0.999 ulp off on the same arguments (the tests' 330,000).
//!
//! The method is `tanh_f64`'s: `e^y = scale (1 + tmp)` from `exp_f64`'s reduction, and
//! `E = (scale - 1) + scale tmp` with every rounding error on the way carried in a second
//! term, `m_lo`: `E`'s relative accuracy holds as `y` goes to 0 (`scale = 1`, `E = tmp`),
//! where `e^y - 1` itself would be a difference of nearly equal numbers. Then, for
//! `a = |x|` and `q = E/(E + 1)` (so that `e^-a = 1 - q`):
//!
//! - `expm1 x = E` at `y = x`;
//! - `sinh a = (e^a - e^-a)/2 = (E + q)/2`, a sum of two positive terms;
//! - `cosh a = (e^a + e^-a)/2 = 1 + (E - q)/2`, where `E - q = E^2/(E + 1) >= 0`.
//!
//! Each is rounded once from a value within ~0.01 ulp of the exact one, so within ~0.51
//! ulp (measured against a double-double reference in the tests). This holds for
//! `|x| < 511`, where `exp_f64`'s reduction is exact in range and `E` (up to ~2^737) does
//! not overflow. Beyond, and for NaN, the scalar function's far path: `expm1` is `e^x`
//! (`-1` there lies far below half an ulp) or `-1`; `sinh` and `cosh` are `e^|x| / 2`,
//! as `(w/2) w` with `w = e^(|x|/2)` from 709 on, where `e^|x|` overflows before the
//! result does (within ~1.6 ulp there).
//!
//! Every path gives the same bits: the vector loops perform the scalar function's IEEE
//! operations in its order; the exact product errors come from fused multiply-adds in the
//! vector loops and Dekker's products in the scalar function (each exact).

use super::exp_f64::{Reduced, exp_f64, reduce_with};
use super::poly::{estrin6, two_sum_err};
use super::simd::fix_far;
use std::mem::MaybeUninit;

/// Where the two-part path holds: `|x| < 511` (the far path beyond, and for NaN).
const NEAR: f64 = 511.0;
/// `sinh x` rounds to `x` below this `|x|` (2^-27: `x^3/6 < 2^-55 |x|`), which is selected,
/// so no step meets a subnormal and `-0` stays `-0`.
pub(super) const TINY: f64 = 7.450_580_596_923_828e-9;
/// `expm1 x` rounds to `x` below this `|x|` (2^-54: `x^2/2 < 2^-55 |x|`).
const TINY_EXPM1: f64 = 5.551_115_123_125_783e-17;
pub(super) const SIGN: u64 = 1 << 63;

/// `e^r - 1 - r ~ r^2 (D[0] + D[1] r + ... + D[5] r^5)` on `|r| <= ln2/64`: interpolated at
/// the Chebyshev nodes of that interval (at 60 digits, rounded to f64), within 3.1e-22
/// absolutely. `exp`'s degree-6 `C` (2.2e-19) is not close enough here: where `k = 1`,
/// `E` (down to 0.0109) is the difference of `scale - 1` and `scale tmp`, and its error
/// relative to `E` is ~90 times `tmp`'s.
pub(super) const D: [f64; 6] = [
    0.5,
    f64::from_bits(0x3fc5_5555_5555_5555),
    f64::from_bits(0x3fa5_5555_5554_e93c),
    f64::from_bits(0x3f81_1111_1110_e106),
    f64::from_bits(0x3f56_c170_c680_344c),
    f64::from_bits(0x3f2a_01a4_4472_3f6e),
];

/// `e^y - 1 = m + m_lo` (`|m_lo|` within an ulp of `m`, the sum within ~2^-100 relatively
/// of the exact value) for `|y| < 512`.
///
/// `m = (scale - 1) + scale tmp`. The second term carries: the error of the sum (a fast
/// two-sum: `|scale - 1| >= 0.0214 > |scale tmp|` where `k != 0`, and `scale - 1 = 0`
/// where `k = 0`), of the product `scale tmp`, of `tmp`'s last sum, the term `tail tmp`
/// that `exp` drops, and of `scale - 1` itself (0 for `scale` in [1/2, 2], where most of
/// `tanh`'s and all of `expm1`'s small arguments fall; an ulp of `scale` above 2^53 and
/// below 1/2). `tanh`, whose `y >= 0` and whose result near `y = 44` does not feel an ulp of
/// `E`, leaves that last term out (`ANY_SCALE` false): it cost its loop ~5 % (2.08-2.11
/// against 1.97-2.00 ns an element).
#[inline(always)]
pub(super) fn em1<const ANY_SCALE: bool>(y: f64) -> (f64, f64) {
    let Reduced {
        r_hi,
        rest,
        tail,
        bits,
        ..
    } = reduce_with(y, |r, r2| r2 * estrin6(r, &D));
    let s = f64::from_bits(bits);
    let tmp = r_hi + rest;
    let b = s * tmp;
    let s1 = s - 1.0;
    let m = s1 + b;
    // `|r_hi| >= |rest|` but where both are below ~2^-52, whose error (~2^-106) is lost
    // beside `s1`.
    let lost = (rest - (tmp - r_hi)) + tail * tmp;
    let small = if ANY_SCALE {
        s * lost + two_sum_err(s, -1.0, s1)
    } else {
        s * lost
    };
    (m, (b - (m - s1)) + (prod_err(s, tmp, b) + small))
}

/// `E / (E + c)` as `q0 + q_lo` for `E = m + m_lo >= 0` and `c` 1 or 2: `q0 = m (1/d)`
/// with `d = m + c` in two parts, corrected by its exact residual, so that `q0 + q_lo` is
/// within ~2^-100 relatively (one division).
#[inline(always)]
pub(super) fn ratio(m: f64, m_lo: f64, c: f64) -> (f64, f64) {
    let d = m + c;
    let d_lo = two_sum_err(m, c, d) + m_lo;
    quotient(m, m_lo, d, d_lo)
}

/// `(m + m_lo) / (d + d_lo)` as `q0 + q_lo`, for two-part operands whose low parts are
/// below an ulp of their high parts: `q0 = m (1/d)` corrected by its exact residual (one
/// division). The residual's product error must be exact: no operand near the subnormals,
/// `|q0|` below ~2^995.
#[inline(always)]
pub(super) fn quotient(m: f64, m_lo: f64, d: f64, d_lo: f64) -> (f64, f64) {
    let inv = 1.0 / d;
    let q0 = m * inv;
    (q0, (quotient_residual(m, q0, d) + (m_lo - q0 * d_lo)) * inv)
}

/// `a b - p` for `p = a b` rounded: exact, as the error of a product is (no operand here is
/// near the subnormals). The vector loops take it from a fused multiply-add.
#[inline(always)]
fn prod_err(a: f64, b: f64, p: f64) -> f64 {
    if cfg!(any(target_feature = "fma", target_arch = "aarch64")) {
        a.mul_add(b, -p)
    } else {
        dekker_prod_err(a, b, p)
    }
}

/// [`prod_err`] without a fused multiply-add (x86-64's baseline has none, and the C
/// library's `fma` would be a call): Dekker's product of the halves of [`split`].
#[inline(always)]
pub(super) fn dekker_prod_err(a: f64, b: f64, p: f64) -> f64 {
    let ((ah, al), (bh, bl)) = (split(a), split(b));
    ((ah * bh - p) + ah * bl + al * bh) + al * bl
}

/// `m - q d` rounded once, for `q` within a few ulps of `m / d` (a fused multiply-add in the
/// vector loops): `q d = p + e` exactly, and `m - p` is exact (`p` is within a factor 2 of
/// `m`), so `(m - p) - e` is the one rounding of the exact value.
#[inline(always)]
fn quotient_residual(m: f64, q: f64, d: f64) -> f64 {
    if cfg!(any(target_feature = "fma", target_arch = "aarch64")) {
        (-q).mul_add(d, m)
    } else {
        let p = q * d;
        (m - p) - prod_err(q, d, p)
    }
}

/// Dekker's split: `a = hi + lo` with each half fitting 26 bits, so that products of halves
/// are exact (`|a| < 2^995`).
#[inline(always)]
fn split(a: f64) -> (f64, f64) {
    let c = 134_217_729.0 * a;
    let hi = c - (c - a);
    (hi, a - hi)
}

/// Whether `x` takes the two-part path (false for NaN).
#[inline(always)]
fn near(x: f64) -> bool {
    x.abs() < NEAR
}

/// `e^x - 1` within ~0.51 ulp: `x` itself below 2^-54 (and `-0` for `-0`), `-1` below
/// ~-37.4, `+inf` above ~709.78, NaN for NaN.
#[inline(always)]
pub(crate) fn expm1_f64(x: f64) -> f64 {
    if near(x) { expm1_near(x) } else { expm1_far(x) }
}

#[inline(always)]
fn expm1_near(x: f64) -> f64 {
    let (m, m_lo) = em1::<true>(x);
    if x.abs() < TINY_EXPM1 { x } else { m + m_lo }
}

#[cold]
fn expm1_far(x: f64) -> f64 {
    if x > 0.0 {
        exp_f64(x)
    } else if x < 0.0 {
        -1.0
    } else {
        x + x
    }
}

/// `sinh x` within ~0.51 ulp for `|x| < 511` (~1.6 from 709 to the overflow at ~710.48):
/// `x` itself below 2^-27, odd bit for bit, NaN for NaN.
#[inline(always)]
pub(crate) fn sinh_f64(x: f64) -> f64 {
    if near(x) { sinh_near(x) } else { sinh_far(x) }
}

#[inline(always)]
fn sinh_near(x: f64) -> f64 {
    let a = x.abs();
    let (m, m_lo) = em1::<true>(a);
    let (q0, q_lo) = ratio(m, m_lo, 1.0);
    let t = m + q0;
    let v = 0.5 * (t + (two_sum_err(m, q0, t) + (m_lo + q_lo)));
    let v = if a < TINY { a } else { v };
    f64::from_bits(v.to_bits() | (x.to_bits() & SIGN))
}

#[cold]
fn sinh_far(x: f64) -> f64 {
    half_exp(x.abs()).copysign(x)
}

/// `cosh`'s far path (its scalar function's and `fix_far`'s).
#[cold]
fn cosh_far(x: f64) -> f64 {
    half_exp(x.abs())
}

/// `e^a / 2` for `a >= 511` (NaN for NaN), without overflowing before the result does.
fn half_exp(a: f64) -> f64 {
    if a < 709.0 {
        0.5 * exp_f64(a)
    } else {
        let w = exp_f64(0.5 * a);
        (0.5 * w) * w
    }
}

/// `cosh x` within ~0.51 ulp for `|x| < 511` (~1.6 from 709 to the overflow at ~710.48):
/// 1 at 0, even bit for bit, NaN for NaN.
#[inline(always)]
pub(crate) fn cosh_f64(x: f64) -> f64 {
    if near(x) { cosh_near(x) } else { cosh_far(x) }
}

#[inline(always)]
fn cosh_near(x: f64) -> f64 {
    let (m, m_lo) = em1::<true>(x.abs());
    let (q0, q_lo) = ratio(m, m_lo, 1.0);
    let t = m - q0;
    let t_lo = two_sum_err(m, -q0, t) + (m_lo - q_lo);
    let h = 0.5 * t;
    let c = 1.0 + h;
    c + (two_sum_err(1.0, h, c) + 0.5 * t_lo)
}

/// The slice loops `elementwise::unary` runs on contiguous float64s: the vector loop of
/// each function's near path (AVX-512, or AVX2 with FMA), then the far elements redone by
/// the scalar function (`simd::fix_far`); the scalar function throughout elsewhere.
macro_rules! slice_loops {
    ($($into:ident: $f:ident, $far:ident, $lanes:ident;)*) => {$(
        pub(crate) fn $into(xs: &[f64], out: &mut [MaybeUninit<f64>]) {
            let n = xs.len().min(out.len());
            let (xs, out) = (&xs[..n], &mut out[..n]);
            #[cfg(target_arch = "x86_64")]
            if x86::run(xs, out, x86::Which::$lanes) {
                return fix_far(xs, out, near, $far);
            }
            for (o, &x) in out.iter_mut().zip(xs) {
                o.write($f(x));
            }
        }
    )*};
}

slice_loops! {
    expm1_f64_into: expm1_f64, expm1_far, Expm1;
    sinh_f64_into: sinh_f64, sinh_far, Sinh;
    cosh_f64_into: cosh_f64, cosh_far, Cosh;
}

/// The near paths on 8 lanes (AVX-512, `exp_f64`'s tables in registers) or twice 4 (AVX2,
/// its tables read by gathers), in the scalar functions' order.
#[cfg(target_arch = "x86_64")]
pub(super) mod x86 {
    use super::{D, SIGN, TINY, TINY_EXPM1};
    use crate::backends::host::exp_f64::x86::{reduce4, reduce8, tables};
    use crate::backends::host::lanes::{v4, v8};
    use crate::backends::host::poly::{avx2, avx512};
    use crate::backends::host::simd::by_eights;
    use std::arch::x86_64::*;
    use std::mem::MaybeUninit;

    /// Which function a loop computes.
    #[derive(Clone, Copy)]
    pub(super) enum Which {
        Expm1,
        Sinh,
        Cosh,
    }

    /// [`super::em1`] of one vector, `$v` naming the width's operations and `$reduce` its
    /// `exp_f64` reduction: `(m, m_lo)`.
    macro_rules! em1_lanes {
        ($v:ident, $any_scale:literal, $y:expr, $reduce:expr, $estrin6:path) => {{
            use $v::*;
            let (r_hi, rest, tail, s) = $reduce($y, |r, r2| mul(r2, $estrin6(r, &D)));
            let tmp = add(r_hi, rest);
            let b = mul(s, tmp);
            let s1 = sub(s, set(1.0));
            let m = add(s1, b);
            let lost = add(sub(rest, sub(tmp, r_hi)), mul(tail, tmp));
            let small = if $any_scale {
                add(mul(s, lost), two_sum_err(s, set(-1.0), s1))
            } else {
                mul(s, lost)
            };
            (
                m,
                add(
                    sub(b, sub(m, s1)),
                    add(fma(s, tmp, sub(set(0.0), b)), small),
                ),
            )
        }};
    }
    pub(in crate::backends::host) use em1_lanes;

    /// [`super::ratio`] of one vector: `(q0, q_lo)`.
    macro_rules! ratio_lanes {
        ($v:ident, $m:expr, $m_lo:expr, $c:expr) => {{
            use $v::*;
            let (m, m_lo, c) = ($m, $m_lo, set($c));
            let d = add(m, c);
            let d_lo = add(two_sum_err(m, c, d), m_lo);
            $crate::backends::host::expm1_f64::x86::quotient_lanes!($v, m, m_lo, d, d_lo)
        }};
    }
    pub(in crate::backends::host) use ratio_lanes;

    /// [`super::quotient`] of one vector: `(q0, q_lo)`, the residual by a fused
    /// multiply-add (exact, as the scalar function's Dekker product).
    macro_rules! quotient_lanes {
        ($v:ident, $m:expr, $m_lo:expr, $d:expr, $d_lo:expr) => {{
            use $v::*;
            let (m, m_lo, d, d_lo) = ($m, $m_lo, $d, $d_lo);
            let inv = div(set(1.0), d);
            let q0 = mul(m, inv);
            let res = fma(sub(set(0.0), q0), d, m);
            (q0, mul(add(res, sub(m_lo, mul(q0, d_lo))), inv))
        }};
    }
    pub(in crate::backends::host) use quotient_lanes;

    /// `f`'s near path of one vector `x`.
    macro_rules! near_lanes {
        ($v:ident, $f:expr, $x:expr, $reduce:expr, $estrin6:path) => {{
            use $v::*;
            let x = $x;
            let a = as_float(andi(as_int(x), seti(!SIGN)));
            match $f {
                Which::Expm1 => {
                    let (m, m_lo) = em1_lanes!($v, true, x, $reduce, $estrin6);
                    select_lt(a, set(TINY_EXPM1), x, add(m, m_lo))
                }
                Which::Sinh => {
                    let (m, m_lo) = em1_lanes!($v, true, a, $reduce, $estrin6);
                    let (q0, q_lo) = ratio_lanes!($v, m, m_lo, 1.0);
                    let t = add(m, q0);
                    let sum = add(t, add(two_sum_err(m, q0, t), add(m_lo, q_lo)));
                    let v = select_lt(a, set(TINY), a, mul(set(0.5), sum));
                    as_float(ori(as_int(v), andi(as_int(x), seti(SIGN))))
                }
                Which::Cosh => {
                    let (m, m_lo) = em1_lanes!($v, true, a, $reduce, $estrin6);
                    let (q0, q_lo) = ratio_lanes!($v, m, m_lo, 1.0);
                    let nq0 = sub(set(0.0), q0);
                    let t = add(m, nq0);
                    let t_lo = add(two_sum_err(m, nq0, t), sub(m_lo, q_lo));
                    let h = mul(set(0.5), t);
                    let c = add(set(1.0), h);
                    add(c, add(two_sum_err(set(1.0), h, c), mul(set(0.5), t_lo)))
                }
            }
        }};
    }

    /// Runs `f`'s near path over `xs` into `out` in the widest lanes this processor has;
    /// false (nothing written) without AVX2 and FMA. Far elements hold garbage after it.
    pub(super) fn run(xs: &[f64], out: &mut [MaybeUninit<f64>], f: Which) -> bool {
        let (src, dst, n) = (xs.as_ptr(), out.as_mut_ptr().cast::<f64>(), xs.len());
        if crate::backends::host::simd::has_avx512() {
            // SAFETY: the processor has AVX-512F, AVX2 and FMA (`has_avx512`); `xs` holds
            // `n` readable elements and `out` (as long, the caller's) `n` writable ones.
            unsafe { avx512_run(src, dst, n, f) };
            return true;
        }
        if crate::backends::host::simd::has_avx2_fma() {
            // SAFETY: the processor has AVX2 and FMA; the pointers as above.
            unsafe { avx2_run(src, dst, n, f) };
            return true;
        }
        false
    }

    /// # Safety
    /// The processor must have AVX-512F, AVX2 and FMA; `src` readable and `dst` writable for
    /// `n` elements, apart or the same.
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(super) unsafe fn avx512_run(src: *const f64, dst: *mut f64, n: usize, f: Which) {
        let t = tables();
        // SAFETY: the pointers are the caller's; each block loads its 8 before storing them.
        unsafe {
            by_eights(src, dst, n, 0.0, |s, d| {
                let y = near_lanes!(
                    v8,
                    f,
                    _mm512_loadu_pd(s),
                    |x, p| reduce8(x, &t, p),
                    avx512::estrin6
                );
                _mm512_storeu_pd(d, y)
            })
        }
    }

    /// # Safety
    /// The processor must have AVX2 and FMA; the pointers as [`avx512_run`] says.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn avx2_run(src: *const f64, dst: *mut f64, n: usize, f: Which) {
        // SAFETY: the pointers are the caller's; each block loads its 8 before storing them.
        unsafe {
            by_eights(src, dst, n, 0.0, |s, d| {
                for h in [0, 4] {
                    let y = near_lanes!(v4, f, _mm256_loadu_pd(s.add(h)), reduce4, avx2::estrin6);
                    _mm256_storeu_pd(d.add(h), y)
                }
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backends::host::dd_reference::{dd_add, exp_reference, ulp_error, uniform};
    use crate::backends::host::simd::float_checks::{
        check_array, check_slice_loop, spread_f64, ulps,
    };

    type Case = (
        fn(f64) -> f64,
        fn(&[f64], &mut [MaybeUninit<f64>]),
        fn(&crate::Array) -> crate::Result<crate::Array>,
        &'static str,
    );
    const CASES: [Case; 3] = [
        (expm1_f64, expm1_f64_into, crate::Array::expm1, "expm1"),
        (sinh_f64, sinh_f64_into, crate::Array::sinh, "sinh"),
        (cosh_f64, cosh_f64_into, crate::Array::cosh, "cosh"),
    ];

    /// `e^x` in double-double, scaled (`|x| < 700`).
    fn exp_dd(x: f64) -> (f64, f64) {
        let ((hi, lo), k) = exp_reference(x);
        let s = 2f64.powi(k);
        (hi * s, lo * s)
    }

    fn reference(name: &str, x: f64) -> (f64, f64) {
        let (e, f) = (exp_dd(x), exp_dd(-x));
        let half = |(hi, lo): (f64, f64)| (0.5 * hi, 0.5 * lo);
        match name {
            "expm1" => dd_add(e, (-1.0, 0.0)),
            "sinh" => half(dd_add(e, (-f.0, -f.1))),
            _ => half(dd_add(e, f)),
        }
    }

    fn arguments() -> Vec<f64> {
        uniform(1 << 14, -520.0, 520.0, 1)
            .chain(uniform(1 << 14, -25.0, 25.0, 2))
            .chain(uniform(1 << 13, -0.02, 0.02, 3))
            .chain(spread_f64(&[
                -f64::NAN,
                TINY,
                -TINY,
                TINY_EXPM1,
                -TINY_EXPM1,
                NEAR,
                -NEAR,
                709.0,
                710.4,
                -710.4,
                711.0,
                f64::MAX,
                f64::from_bits(1),
            ]))
            .collect()
    }

    #[test]
    fn every_path_gives_the_bits_of_the_scalar_function() {
        let xs = arguments();
        for (f, into, method, _) in CASES {
            let scalar: Vec<f64> = xs.iter().map(|&x| f(x)).collect();
            // The widest loop this processor has (the AVX2 one below).
            check_slice_loop(&xs, &scalar, into);
            check_array(&xs, &scalar, method);
        }
        #[cfg(target_arch = "x86_64")]
        if crate::backends::host::simd::has_avx2_fma() {
            macro_rules! avx2_loop {
                ($which:ident, $f:ident) => {{
                    let scalar: Vec<f64> = xs.iter().map(|&x| $f(x)).collect();
                    check_slice_loop(&xs, &scalar, |xs, out| {
                        let n = xs.len().min(out.len());
                        // SAFETY: the processor has AVX2 and FMA; `xs` and `out` hold `n`.
                        unsafe {
                            x86::avx2_run(
                                xs.as_ptr(),
                                out.as_mut_ptr().cast(),
                                n,
                                x86::Which::$which,
                            )
                        };
                        fix_far(&xs[..n], &mut out[..n], near, |x| $f(x));
                    });
                }};
            }
            avx2_loop!(Expm1, expm1_f64);
            avx2_loop!(Sinh, sinh_f64);
            avx2_loop!(Cosh, cosh_f64);
        }
    }

    #[test]
    fn edges_are_those_of_the_c_library() {
        let inf = f64::INFINITY;
        for x in [1e-20, 1e-300, f64::MIN_POSITIVE, 1e-310, f64::from_bits(1)] {
            for f in [expm1_f64, sinh_f64] {
                assert_eq!(f(x), x);
                assert_eq!(f(-x), -x);
            }
            assert_eq!(cosh_f64(x), 1.0);
            assert_eq!(cosh_f64(-x), 1.0);
        }
        for f in [expm1_f64, sinh_f64] {
            assert_eq!(f(0.0).to_bits(), 0);
            assert_eq!(f(-0.0).to_bits(), (-0.0f64).to_bits());
            assert_eq!(f(inf), inf);
        }
        assert_eq!(expm1_f64(-inf), -1.0);
        assert_eq!(expm1_f64(-38.0), -1.0);
        assert_eq!(expm1_f64(-37.0), -1.0 + f64::EPSILON / 2.0);
        assert_eq!(expm1_f64(709.8), inf);
        assert_eq!(expm1_f64(600.0), exp_f64(600.0));
        assert_eq!(sinh_f64(-inf), -inf);
        assert_eq!(cosh_f64(-inf), inf);
        assert_eq!(cosh_f64(0.0), 1.0);
        assert_eq!(sinh_f64(710.5), inf);
        assert_eq!(cosh_f64(-710.5), inf);
        for x in [709.5, 710.0, 710.47] {
            assert!(ulps(sinh_f64(x), x.sinh()) <= 2, "sinh({x})");
            assert!(ulps(cosh_f64(-x), x.cosh()) <= 2, "cosh({x})");
        }
        for (f, _, _, name) in CASES {
            assert!(f(f64::NAN).is_nan(), "{name}");
        }
    }

    #[test]
    fn within_half_an_ulp_and_two_of_the_c_library() {
        // Against a double-double reference, over every range the method takes apart
        // (k = 0, small k, negative and large k, near the far path). A lost term of `m_lo`
        // or of the ratio shows as an error of an ulp or more.
        let ranges = [
            (-20.0, 20.0),
            (-1.0, 1.0),
            (-0.0108, 0.0108),
            (-1e-4, 1e-4),
            (0.005, 0.03),
            (-0.03, -0.005),
            (-0.8, -0.6),
            (20.0, 45.0),
            (-45.0, -20.0),
            (100.0, 510.9),
            (-510.9, -100.0),
        ];
        for (f, _, _, name) in CASES {
            let (mut n, mut differ, mut worst, mut libm_worst) = (0usize, 0usize, 0f64, 0f64);
            for (seed, &(lo, hi)) in ranges.iter().enumerate() {
                for x in uniform(30_000, lo, hi, seed as u64 + 40) {
                    let (got, want) = (f(x), reference(name, x));
                    let err = ulp_error(got, want);
                    assert!(err <= 0.51, "{name}({x:e}) = {got:e}: {err} ulp off");
                    worst = worst.max(err);
                    let libm = match name {
                        "expm1" => x.exp_m1(),
                        "sinh" => x.sinh(),
                        _ => x.cosh(),
                    };
                    libm_worst = libm_worst.max(ulp_error(libm, want));
                    assert!(
                        ulps(got, libm) <= 2,
                        "{name}({x:e}) = {got:e}, libm {libm:e}"
                    );
                    differ += usize::from(got != libm);
                    n += 1;
                }
            }
            assert!(
                worst > 0.49,
                "{name}: the reference itself is off: worst {worst}"
            );
            eprintln!(
                "{name}: {differ} of {n} differ from the C library; worst {worst} ulp, the C library's {libm_worst}"
            );
        }
    }
}
