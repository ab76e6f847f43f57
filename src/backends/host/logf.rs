//! `ln` of a float32: one scalar function, and a slice loop the compiler vectorises.
//!
//! The C library's `logf` is a call per element (1.14 ns an element from Python on the
//! Intel guest of `docs/benchmarks.md`, against NumPy's 0.38 and PyTorch's 0.13). This one
//! computes in f64 and rounds once to float32, as [`super::expf`] does, by the method of
//! glibc's `logf` (Szabolcs Nagy's) with a larger polynomial:
//!
//! `x = 2^k z` with `z` in `[OFF, 2 OFF)`, an interval split into 32 by `z`'s bits, and
//! `ln x = k ln2 - ln(invc) + ln(1 + r)` with `r = z invc - 1`. `invc` is near `1/c` for
//! `c` the middle of `z`'s part, rounded to 20 bits, so that `z invc` (24 bits times 20) and
//! `r` are exact; `-ln(invc)` is tabulated to f64. `OFF` puts 1 in the middle of part 16,
//! whose `invc` is 1: near `x = 1`, `r = x - 1` exactly and the result keeps its relative
//! accuracy. `|r| <= 1/64`, and `ln(1 + r) = r + r^2 P(r)` with `P` of degree 6 (relative
//! error 2^-57). Float32 subnormals are normal f64s: no special case.
//!
//! Why 32 parts: in AVX-512 the two tables fit in eight registers and are read by permutes.
//! With 64 parts and a polynomial of degree 5 (the same accuracy) they were read by gathers,
//! which took a third of the loop's time on the AMD EPYC (Zen 4): 1.36-1.42 ns an element
//! there then, one thread, 64K.
//!
//! Measured on all 2^32 float32s against glibc's f64 `ln` rounded to float32: three differ
//! (the same three as with 64 parts), each within 6.2e-17 (relatively) of halfway between
//! two float32s. At 60 digits two of them (`x = 1.1794383e-2`, `9.472636`) are glibc's
//! misroundings and this function's results are right; one (`x = 3.985e23`, 3.0e-17 from
//! halfway) is this function's, one ulp off.
//! glibc's own `logf` promises 0.82 ulp, PyTorch's SLEEF `logf_u10` 1 ulp.
//!
//! Zero, negative numbers, infinity and NaN take `far`: the C library's answers (`-inf`,
//! NaN, `inf`, NaN) without its call. The slice loop runs the branch-free `fast` over a
//! block in AVX-512 or AVX2 lanes, then redoes the block's few such elements. Every path
//! gives the same bits: the same IEEE operations in the same order, no fused multiply-add.

use std::mem::MaybeUninit;

/// The bits of `OFF`: 1 less 16.5 parts of `2^47` (0.7421875).
const OFF: u64 = 0x3fe7_c000_0000_0000;
/// Adding 1.5 * 2^52 to a small integer leaves it in the low bits of the sum's
/// representation (and the reverse: the bits plus `n` less the sum is `n`).
const SHIFT: f64 = 6_755_399_441_055_744.0;
const LN2: f64 = std::f64::consts::LN_2;

/// `(ln(1 + r) - r) / r^2` on `|r| <= 1/64`: the degree-6 polynomial through the 7
/// Chebyshev nodes of that interval (computed at 60 digits, rounded to f64), relative error
/// 2^-50 (2^-57 of `ln(1 + r)`).
const P: [f64; 7] = [
    f64::from_bits(0xbfe0000000000000),
    f64::from_bits(0x3fd55555555561c8),
    f64::from_bits(0xbfd0000000000b34),
    f64::from_bits(0x3fc999998d26c9b2),
    f64::from_bits(0xbfc555554a212f68),
    f64::from_bits(0x3fc24ab2e4a28b0b),
    f64::from_bits(0xbfc001667dbd1bd0),
];

/// `invc` for each of the 32 parts of `[OFF, 2 OFF)`: `1/c` for `c` the part's middle,
/// rounded to 20 bits (computed at 60 digits), 1 for the part around 1.
const INVC: [f64; 32] = [
    1.333333969116211,
    1.306121826171875,
    1.2800006866455078,
    1.2549018859863281,
    1.2307701110839844,
    1.2075462341308594,
    1.1851844787597656,
    1.1636371612548828,
    1.1428565979003906,
    1.1228065490722656,
    1.1034488677978516,
    1.0847454071044922,
    1.0666675567626953,
    1.0491809844970703,
    1.0322589874267578,
    1.0158729553222656,
    1.0,
    0.9696969985961914,
    0.9411764144897461,
    0.9142856597900391,
    0.8888893127441406,
    0.8648653030395508,
    0.8421049118041992,
    0.8205127716064453,
    0.8000001907348633,
    0.7804880142211914,
    0.7619047164916992,
    0.7441864013671875,
    0.7272729873657227,
    0.7111110687255859,
    0.6956520080566406,
    0.6808509826660156,
];
/// `-ln(invc)` for each part, likewise.
#[allow(clippy::excessive_precision)]
const LOGC: [f64; 32] = [
    -0.2876825492888254,
    -0.26706230841177336,
    -0.24686061437318488,
    -0.22705739103069952,
    -0.207640080033726,
    -0.18859039494686775,
    -0.16989844074877208,
    -0.15155058358038093,
    -0.13353091578725074,
    -0.11583139829252123,
    -0.09844060925491162,
    -0.0813453116283524,
    -0.06453935560224987,
    -0.048009845034934905,
    -0.03174959238385225,
    -0.015748297363492616,
    0.0,
    0.030771628864431744,
    0.06062468142108139,
    0.08961221829433369,
    0.11778255881933894,
    0.14518150320514564,
    0.1718506741592597,
    0.19782580293456642,
    0.22314331289565909,
    0.24783589568371575,
    0.2719337750882883,
    0.2954637360567914,
    0.3184533734907299,
    0.34092664657523974,
    0.362905732107976,
    0.3844118181196287,
];

/// `P(r)` in one fixed order (Estrin's), on every path: `p01 + r^2 (p23 + r^2 (p45 + r^2 c6))`.
#[inline(always)]
fn poly(r: f64) -> f64 {
    let r2 = r * r;
    let (p01, p23, p45) = (P[0] + P[1] * r, P[2] + P[3] * r, P[4] + P[5] * r);
    p01 + r2 * (p23 + r2 * (p45 + r2 * P[6]))
}

/// `ln x` rounded to float32: `-inf` for `±0`, NaN below 0 and for NaN, `inf` for `inf`.
#[inline(always)]
pub(crate) fn ln_f32(x: f32) -> f32 {
    if near(x) { fast(x) } else { far(x) }
}

/// Whether `fast` takes `x`: positive and finite (false for NaN).
#[inline(always)]
fn near(x: f32) -> bool {
    x > 0.0 && x < f32::INFINITY
}

/// For the `x` that `near` refuses, the C library's answers without its call (zeros and
/// negative numbers are common input: `log` of a mask, of data with gaps): `-inf` for `±0`,
/// `inf` for `inf`, and NaN from `0/0` (as glibc raises it) below 0 or for NaN.
#[inline(always)]
fn far(x: f32) -> f32 {
    if x == 0.0 {
        f32::NEG_INFINITY
    } else if x == f32::INFINITY {
        x
    } else {
        // `x 0` is -0 or NaN: `-0/0` is the invalid operation's NaN (glibc's `(x-x)/(x-x)`),
        // NaN stays NaN.
        (x * 0.0) / 0.0
    }
}

/// `ln x` for positive finite `x`; no branch.
#[inline(always)]
fn fast(x: f32) -> f32 {
    let bits = f64::from(x).to_bits();
    // `k` in the top 12 bits (two's complement), the part's index in the next 5.
    let tmp = bits.wrapping_sub(OFF);
    let i = ((tmp >> 47) % 32) as usize;
    let (invc, logc) = (INVC[i], LOGC[i]);
    let z = f64::from_bits(bits.wrapping_sub(tmp & (0xfff << 52)));
    // `k + 1024` (nonnegative: `x >= 2^-149`), then `k` as an f64 without a 64-bit integer
    // conversion (AVX2 has none).
    let kb = tmp.wrapping_add(1024 << 52) >> 52;
    let k = f64::from_bits(SHIFT.to_bits() + kb) - (SHIFT + 1024.0);
    let r = z * invc - 1.0;
    let r2 = r * r;
    ((k * LN2 + logc) + (r + r2 * poly(r))) as f32
}

/// `z`'s low bits that `r`'s second part takes in [`fast_wide`] (20, the bits of `invc`).
const Z_LO: u64 = (1 << 20) - 1;

/// `ln x` for a positive normal finite f64 `x`, to float32's needs: `fast`'s method and
/// table, with `z` taken apart so that `r` stays exact as two parts (`z` has 53 bits here,
/// not 24: `z_hi`, 33 bits, times `invc`, 20, is exact). Its rounding, then the table's and
/// the sum's, leave the result within ~2^-51 of `ln x` relatively (`|ln x| >= 1/128` outside
/// the part around 1, where `logc` is 0). For a float32 `x`, `z_lo` is 0 and the result is
/// `fast`'s. No branch.
#[inline(always)]
fn fast_wide(x: f64) -> f64 {
    let bits = x.to_bits();
    let tmp = bits.wrapping_sub(OFF);
    let i = ((tmp >> 47) % 32) as usize;
    let (invc, logc) = (INVC[i], LOGC[i]);
    let z = bits.wrapping_sub(tmp & (0xfff << 52));
    let kb = tmp.wrapping_add(1024 << 52) >> 52;
    let k = f64::from_bits(SHIFT.to_bits() + kb) - (SHIFT + 1024.0);
    let (z_hi, z_all) = (f64::from_bits(z & !Z_LO), f64::from_bits(z));
    let r = (z_hi * invc - 1.0) + (z_all - z_hi) * invc;
    let r2 = r * r;
    (k * LN2 + logc) + (r + r2 * poly(r))
}

/// Whether `fast_wide` takes `x`: normal, positive and finite (false for NaN).
#[inline(always)]
fn near_wide(x: f64) -> bool {
    (f64::MIN_POSITIVE..f64::INFINITY).contains(&x)
}

/// `ln x` of an f64 to float32's needs (see [`fast_wide`]): the kernel of the float32
/// functions that take a logarithm of an f64 made from their argument (`log1p`, `asinh`,
/// `acosh`, `atanh` in `f32_via_f64`). The float64 `ln` (`log_f64`), within 0.502 ulp of
/// float64, carries its sums in two parts and reads three tables of 128; this one, a table
/// of 64 and one rounding more, is what a float32 result needs. Edges and subnormals: the
/// float64 `ln`'s answers.
#[inline(always)]
pub(crate) fn ln_wide(x: f64) -> f64 {
    if near_wide(x) {
        fast_wide(x)
    } else {
        super::log_f64::ln_f64(x)
    }
}

/// `out[i] = ln_wide(xs[i])` for every `i` below the shorter of the two lengths.
pub(crate) fn ln_wide_into(xs: &[f64], out: &mut [MaybeUninit<f64>]) {
    let n = xs.len().min(out.len());
    let (xs, out) = (&xs[..n], &mut out[..n]);
    #[cfg(target_arch = "x86_64")]
    {
        if super::simd::has_avx512() {
            // SAFETY: the processor has AVX-512F, AVX2 and FMA (`has_avx512`).
            return unsafe { lanes::avx512_wide(xs, out) };
        }
        if super::simd::has_avx2_fma() {
            // SAFETY: the processor has AVX2 and FMA, checked just above.
            return unsafe { lanes::avx2_wide(xs, out) };
        }
    }
    super::simd::map_near_far(xs, out, fast_wide, near_wide, super::log_f64::ln_f64)
}

/// `out[i] = ln_f32(xs[i])` for every `i` below the shorter of the two lengths.
pub(crate) fn ln_f32_into(xs: &[f32], out: &mut [MaybeUninit<f32>]) {
    // The compiler keeps `fast`'s loop scalar (it prices the table's gathers too high), so
    // the x86 lanes are written out (`lanes`); elsewhere the scalar loop.
    #[cfg(target_arch = "x86_64")]
    {
        if super::simd::has_avx512() {
            // SAFETY: the processor has AVX-512F, AVX2 and FMA (`has_avx512`).
            return unsafe { lanes::avx512(xs, out) };
        }
        if crate::backends::host::simd::has_avx2_fma() {
            // SAFETY: the processor has AVX2 and FMA, checked just above.
            return unsafe { lanes::avx2(xs, out) };
        }
    }
    super::simd::map_near_far(xs, out, fast, near, far)
}

/// `fast` in AVX-512 (8 lanes) and AVX2 (4 lanes): the same operations, the tables read by
/// two-source permutes from registers in AVX-512 and by gathers in AVX2.
#[cfg(target_arch = "x86_64")]
mod lanes {
    use super::{INVC, LN2, LOGC, MaybeUninit, OFF, P, SHIFT, Z_LO, far, near};
    use crate::backends::host::lanes::{v4, v8};
    use crate::backends::host::log_f64::ln_f64;
    use std::arch::x86_64::*;

    /// `fast`'s body over one vector of f64 lanes: `$v` names the module of the width's
    /// operations, `$look` reads `(invc, logc)` at the parts' indices, and the last form
    /// computes `r` from `z`'s bits and `invc` (`fast_wide`'s in two parts).
    macro_rules! fast_lanes {
        ($v:ident, $a:expr, $look:expr) => {
            fast_lanes!($v, $a, $look, |z, invc| sub(
                mul(as_float(z), invc),
                set(1.0)
            ))
        };
        ($v:ident, $a:expr, $look:expr, wide) => {
            fast_lanes!($v, $a, $look, |z, invc| {
                let z_hi = as_float(andi(z, seti(!Z_LO)));
                add(
                    sub(mul(z_hi, invc), set(1.0)),
                    mul(sub(as_float(z), z_hi), invc),
                )
            })
        };
        ($v:ident, $a:expr, $look:expr, |$z:ident, $invc:ident| $r:expr) => {{
            use $v::*;
            let bits = as_int($a);
            let tmp = subi(bits, seti(OFF));
            let (invc, logc) = $look(andi(srl::<47>(tmp), seti(31)));
            let $z = subi(bits, andi(tmp, seti(0xfff << 52)));
            let kb = srl::<52>(addi(tmp, seti(1024 << 52)));
            let k = sub(
                as_float(addi(seti(SHIFT.to_bits()), kb)),
                set(SHIFT + 1024.0),
            );
            let $invc = invc;
            let r = $r;
            let r2 = mul(r, r);
            let p01 = add(set(P[0]), mul(set(P[1]), r));
            let p23 = add(set(P[2]), mul(set(P[3]), r));
            let p45 = add(set(P[4]), mul(set(P[5]), r));
            let p = add(
                p01,
                mul(r2, add(p23, mul(r2, add(p45, mul(r2, set(P[6])))))),
            );
            add(add(mul(k, set(LN2)), logc), add(r, mul(r2, p)))
        }};
    }

    /// Both tables in registers, for the AVX-512 loops (loaded once per slice).
    type Tables = (v8::Table32, v8::Table32);

    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    fn tables() -> Tables {
        (v8::load32(&INVC), v8::load32(&LOGC))
    }

    /// `(invc, logc)` at the indices `i` (each below 32) by permutes: on the AMD EPYC (Zen 4)
    /// two gathers of 8 took a third of the loop's time.
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    fn look8(t: &Tables, i: __m512i) -> (__m512d, __m512d) {
        (
            v8::as_float(v8::pick32(&t.0, i)),
            v8::as_float(v8::pick32(&t.1, i)),
        )
    }

    /// `(invc, logc)` at the indices `i` (each below 32) by gathers.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn look4(i: __m256i) -> (__m256d, __m256d) {
        // SAFETY: each index is below 32, and both tables hold 32 f64s (scale 8 bytes).
        unsafe { (v4::gather(&INVC, i), v4::gather(&LOGC, i)) }
    }

    /// `fast` of 8 lanes (garbage in a lane `near` refuses).
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    fn lanes8(t: &Tables, a: __m512d) -> __m512d {
        fast_lanes!(v8, a, |i| look8(t, i))
    }

    /// `fast` of 4 lanes (likewise).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn lanes4(a: __m256d) -> __m256d {
        fast_lanes!(v4, a, look4)
    }

    /// `fast_wide` of 8 lanes (garbage in a lane `near_wide` refuses).
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    fn wide8(t: &Tables, a: __m512d) -> __m512d {
        fast_lanes!(v8, a, |i| look8(t, i), wide)
    }

    /// `fast_wide` of 4 lanes (likewise).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn wide4(a: __m256d) -> __m256d {
        fast_lanes!(v4, a, look4, wide)
    }

    /// `ln_wide_into` in AVX-512: 8 lanes a block (the last through a padded copy), then the
    /// far elements one by one.
    ///
    /// # Safety
    /// The processor must have AVX-512F, AVX2 and FMA.
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(super) unsafe fn avx512_wide(xs: &[f64], out: &mut [MaybeUninit<f64>]) {
        let n = xs.len().min(out.len());
        let t = tables();
        // SAFETY: `xs` holds `n` readable elements and `out` `n` writable ones, apart; each
        // block loads its 8 before storing them.
        unsafe {
            super::super::simd::by_eights(xs.as_ptr(), out.as_mut_ptr().cast(), n, 1.0, |s, d| {
                _mm512_storeu_pd(d, wide8(&t, _mm512_loadu_pd(s)))
            })
        };
        super::super::simd::fix_far(&xs[..n], &mut out[..n], super::near_wide, ln_f64);
    }

    /// `ln_wide_into` in AVX2: twice 4 lanes a block, then the far elements one by one.
    ///
    /// # Safety
    /// The processor must have AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn avx2_wide(xs: &[f64], out: &mut [MaybeUninit<f64>]) {
        let n = xs.len().min(out.len());
        // SAFETY: as in `avx512_wide`.
        unsafe {
            super::super::simd::by_eights(xs.as_ptr(), out.as_mut_ptr().cast(), n, 1.0, |s, d| {
                for h in [0, 4] {
                    _mm256_storeu_pd(d.add(h), wide4(_mm256_loadu_pd(s.add(h))))
                }
            })
        };
        super::super::simd::fix_far(&xs[..n], &mut out[..n], super::near_wide, ln_f64);
    }

    /// The slice loop in AVX-512: 8 lanes a block (the last through a padded copy), then the
    /// far elements one by one.
    ///
    /// # Safety
    /// The processor must have AVX-512F, AVX2 and FMA.
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(super) unsafe fn avx512(xs: &[f32], out: &mut [MaybeUninit<f32>]) {
        let n = xs.len().min(out.len());
        let t = tables();
        // SAFETY: `xs` holds `n` readable elements and `out` `n` writable ones, apart; each
        // block loads its 8 before storing them.
        unsafe {
            super::super::simd::by_eights(xs.as_ptr(), out.as_mut_ptr().cast(), n, 1.0, |s, d| {
                let a = _mm512_cvtps_pd(_mm256_loadu_ps(s));
                _mm256_storeu_ps(d, _mm512_cvtpd_ps(lanes8(&t, a)))
            })
        };
        super::super::simd::fix_far(&xs[..n], &mut out[..n], near, far);
    }

    /// The slice loop in AVX2: 4 lanes a block, then the far elements one by one.
    ///
    /// # Safety
    /// The processor must have AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn avx2(xs: &[f32], out: &mut [MaybeUninit<f32>]) {
        let n = xs.len().min(out.len());
        let (mut src, mut dst) = (xs[..n].chunks_exact(4), out[..n].chunks_exact_mut(4));
        for (s, d) in (&mut src).zip(&mut dst) {
            // SAFETY: `s` holds 4 readable f32s and `d` 4 writable ones.
            unsafe {
                let a = _mm256_cvtps_pd(_mm_loadu_ps(s.as_ptr()));
                _mm_storeu_ps(d.as_mut_ptr().cast(), _mm256_cvtpd_ps(lanes4(a)));
            }
        }
        for (o, &x) in dst.into_remainder().iter_mut().zip(src.remainder()) {
            o.write(if near(x) { super::fast(x) } else { far(x) });
        }
        super::super::simd::fix_far(&xs[..n], &mut out[..n], near, far);
    }
}

#[cfg(test)]
mod tests {
    use super::{ln_f32, ln_f32_into, ln_wide, ln_wide_into};
    use crate::backends::host::simd::float_checks::{
        check_array, check_slice_loop, every_4099th_f32, same, spread_f32,
    };

    #[test]
    fn every_path_gives_the_bits_of_the_scalar_function() {
        let xs = spread_f32(&[
            0.0,
            1.0,
            f32::MAX,
            f32::MIN_POSITIVE,
            f32::from_bits(1),
            -1.0,
        ]);
        let scalar: Vec<f32> = xs.iter().map(|&x| ln_f32(x)).collect();
        // The widest loop this processor has, then each narrower one.
        check_slice_loop(&xs, &scalar, ln_f32_into);
        #[cfg(target_arch = "x86_64")]
        if crate::backends::host::simd::has_avx2_fma() {
            check_slice_loop(&xs, &scalar, |xs, out| {
                // SAFETY: the processor has AVX2 and FMA, checked just above.
                unsafe { super::lanes::avx2(xs, out) }
            });
        }
        check_slice_loop(&xs, &scalar, |xs, out| {
            crate::backends::host::simd::map_near_far(xs, out, super::fast, super::near, super::far)
        });
        check_array(&xs, &scalar, crate::Array::log);
    }

    #[test]
    fn edges_are_those_of_the_c_library() {
        assert_eq!(ln_f32(0.0), f32::NEG_INFINITY);
        assert_eq!(ln_f32(-0.0), f32::NEG_INFINITY);
        assert!(ln_f32(-1.0).is_nan() && ln_f32(f32::NAN).is_nan());
        assert!(ln_f32(f32::NEG_INFINITY).is_nan());
        assert_eq!(ln_f32(f32::INFINITY), f32::INFINITY);
        assert_eq!(ln_f32(1.0).to_bits(), 0);
        // The float32 nearest e lies below it.
        assert_eq!(ln_f32(std::f32::consts::E), 0.999_999_94);
        assert_eq!(ln_f32(2.0), std::f32::consts::LN_2);
        // Either side of 1, where the result is small: a hair less than x - 1.
        let below_eps = f32::from_bits(f32::EPSILON.to_bits() - 1);
        assert_eq!(ln_f32(1.0 + f32::EPSILON), below_eps);
        assert_eq!(ln_f32(1.0 - f32::EPSILON / 2.0), -f32::EPSILON / 2.0);
        // The smallest subnormal and the largest float32.
        assert_eq!(ln_f32(f32::from_bits(1)), -103.27893);
        assert_eq!(ln_f32(f32::MAX), 88.72284);
    }

    #[test]
    fn every_4099th_float32_gets_the_f64_ln_rounded_once() {
        // On all 2^32 (one run) three results differ from glibc's f64 `ln` rounded to
        // float32 (see the header), none of them in this sample.
        every_4099th_f32(|x| {
            let (got, want) = (ln_f32(x), f64::from(x).ln() as f32);
            assert!(same(got, want), "{x:e}: {got:e}, not {want:e}");
        });
    }

    /// Arguments for `ln_wide`: float64 `ln`'s, and every binade evenly.
    fn wide_arguments() -> Vec<f64> {
        use crate::backends::host::dd_reference::uniform;
        crate::backends::host::log_f64::tests::arguments()
            .into_iter()
            .chain(uniform(1 << 14, -1074.0, 1024.0, 7).map(f64::exp2))
            .collect()
    }

    #[test]
    fn the_wide_kernel_gives_the_same_bits_on_every_path() {
        let xs = wide_arguments();
        let scalar: Vec<f64> = xs.iter().map(|&x| ln_wide(x)).collect();
        check_slice_loop(&xs, &scalar, ln_wide_into);
        #[cfg(target_arch = "x86_64")]
        if crate::backends::host::simd::has_avx2_fma() {
            check_slice_loop(&xs, &scalar, |xs, out| {
                // SAFETY: the processor has AVX2 and FMA, checked just above.
                unsafe { super::lanes::avx2_wide(xs, out) }
            });
        }
        check_slice_loop(&xs, &scalar, |xs, out| {
            crate::backends::host::simd::map_near_far(
                xs,
                out,
                super::fast_wide,
                super::near_wide,
                crate::backends::host::log_f64::ln_f64,
            )
        });
    }

    #[test]
    fn the_wide_kernel_is_within_3_ulp_of_f64_and_fasts_bits_on_float32s() {
        use crate::backends::host::dd_reference::{ln_reference, ulp_error};
        let mut worst = 0f64;
        for x in wide_arguments() {
            let got = ln_wide(x);
            if !(x > 0.0 && x < f64::INFINITY) {
                let want = crate::backends::host::log_f64::ln_f64(x);
                assert!(same(got, want), "{x:e}: {got:e}, not {want:e}");
                continue;
            }
            if got == 0.0 {
                assert_eq!(x, 1.0);
                continue;
            }
            let err = ulp_error(got, ln_reference(x));
            assert!(err <= 3.0, "ln_wide({x:e}) = {got:e}: {err} ulp off");
            worst = worst.max(err);
        }
        assert!(worst > 0.5, "the reference itself is off: worst {worst}");
        eprintln!("ln_wide: worst {worst} ulp of f64");
        // On a float32 `z`'s second part is 0: `fast`'s bits, rounded once.
        every_4099th_f32(|x| {
            let (got, want) = (ln_wide(f64::from(x)) as f32, ln_f32(x));
            assert!(same(got, want), "{x:e}: {got:e}, not {want:e}");
        });
    }
}
