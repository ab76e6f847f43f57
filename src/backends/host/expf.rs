//! `exp` of a float32: one scalar function, and a slice loop that runs it 8 lanes at a time.
//!
//! The C library's `expf` is a call per element (~4 ns on the 2.45 GHz EPYC of issue 15; no
//! loop around it can vectorise). This one computes in f64, as glibc's `expf` does, and
//! rounds once to float32: the result is the exact value correctly rounded for all but 22 of
//! the 2^32 float32s, each of which lies within ~5e-15 of a halfway case and is one ulp off
//! (glibc's own bound is 0.502 ulp; PyTorch's SLEEF `expf_u10` promises 1 ulp).
//!
//! The method is glibc's (Szabolcs Nagy's `expf`): `x = (k + r) ln2 / 16` with `k` an integer
//! and `|r| <= 1/2`, then `e^x = 2^(k/16) 2^(r/16)`: `2^(k/16)` is a power of two times one of
//! 16 table entries, and `2^(r/16)` a degree-5 polynomial. A degree-8 polynomial over
//! `|r| <= ln2/2` with no table (this file's first version) took 0.73 ns an element in
//! AVX-512 on the Intel guest of `docs/benchmarks.md` and misrounded 1,431 inputs; this one
//! takes 0.50 ns (`exp_f32_into`; the compiler's loop over `exp_f32`, reading a 32-entry
//! table by gathers, took 0.55, with 64 entries 0.54). Without AVX-512 the compiler's AVX2
//! loop runs it (4 lanes, gathers): 1.02 ns an element there against 0.99 for the first
//! version.
//!
//! Every path gives the same bits: the AVX-512 loop (its 16-entry table in two registers,
//! read by one `vpermt2pd` per 8 lanes instead of a gather of 8 loads), the AVX2 loop the
//! compiler vectorises from `exp_f32`, and the scalar function, because each performs the
//! same IEEE operations in the same order. No fused multiply-add anywhere, for the same
//! reason.

use super::poly::estrin6;
use std::mem::MaybeUninit;

/// Below this, `exp` rounds to +0 in float32 (`exp(-104) < 2^-150`); clamping keeps `2^k` a
/// normal f64.
const LO: f32 = -120.0;
/// Above this, `exp` is +inf in float32 (`exp(89) > f32::MAX`).
const HI: f32 = 100.0;
/// Adding 1.5 * 2^52 rounds an f64 below 2^51 in magnitude to an integer (ties to even),
/// left in the low bits of the sum's representation.
const SHIFT: f64 = 6_755_399_441_055_744.0;
/// `16 / ln 2`: `x` in sixteenths of `ln 2`.
const INV_LN2_16: f64 = 16.0 * std::f64::consts::LOG2_E;

/// `TABLE[j]` is the bits of `2^(j/16)` less `j << 48`, so that adding `k << 48` (`k`'s low
/// four bits being `j`) to it gives the bits of `2^(k/16)`: the rest of `k` lands in the
/// exponent field. Computed at 50 digits and rounded to f64 (`2^(j/16)` never lies near a
/// halfway case at that precision).
const TABLE: [u64; 16] = [
    0x3ff0_0000_0000_0000,
    0x3fef_b558_6cf9_890f,
    0x3fef_72b8_3c7d_517b,
    0x3fef_387a_6e75_6238,
    0x3fef_06fe_0a31_b715,
    0x3fee_dea6_4c12_3422,
    0x3fee_bfda_d536_2a27,
    0x3fee_ab07_dd48_5429,
    0x3fee_a09e_667f_3bcd,
    0x3fee_a114_73eb_0187,
    0x3fee_ace5_422a_a0db,
    0x3fee_c491_82a3_f090,
    0x3fee_e89f_995a_d3ad,
    0x3fef_199b_dd85_529c,
    0x3fef_5818_dcfb_a487,
    0x3fef_a4af_a2a4_90da,
];

/// `2^(r/16)` on `|r| <= 1/2`: the degree-5 polynomial through the Chebyshev nodes of that
/// interval (computed at 50 digits, rounded to f64), relative error 4.6e-15.
const C: [f64; 6] = [
    1.000_000_000_000_004_4,
    0.043_321_698_784_996_61,
    0.000_938_384_792_486_206,
    1.355_080_777_749_983e-5,
    1.467_644_462_189_871e-7,
    1.271_608_503_034_998_7e-9,
];

/// `e^x` rounded to float32: +inf above ~88.72, +0 below ~-103.97, NaN for NaN.
#[inline(always)]
pub(crate) fn exp_f32(x: f32) -> f32 {
    // `clamp` keeps NaN (it fails both tests).
    let (r, s) = split(f64::from(x.clamp(LO, HI)) * INV_LN2_16);
    (estrin6(r, &C) * s) as f32
}

/// `2^(z/16)` as `2^(k/16) 2^(r/16)`: `(r, 2^(k/16))` with `k` the integer nearest `z` (ties
/// to even) and `|r| <= 1/2`, for `|z|` within the exponent's reach (`exp_f32` and
/// `tanhf` clamp their arguments).
#[inline(always)]
pub(super) fn split(z: f64) -> (f64, f64) {
    let kd = z + SHIFT;
    let k = kd.to_bits();
    // Exact: `z` and `kd - SHIFT` are within 1/2 of each other.
    let r = z - (kd - SHIFT);
    // The table's index is k's low four bits (`vpermt2pd` reads the same bits).
    (
        r,
        f64::from_bits(TABLE[(k % 16) as usize].wrapping_add(k << 48)),
    )
}

/// `out[i] = exp_f32(xs[i])` for every `i` below the shorter of the two lengths (callers pass
/// equal ones).
pub(crate) fn exp_f32_into(xs: &[f32], out: &mut [MaybeUninit<f32>]) {
    let n = xs.len().min(out.len());
    // SAFETY: `xs` holds `n` readable elements and `out` `n` writable ones.
    unsafe { exp_run(xs.as_ptr(), out.as_mut_ptr().cast(), n) }
}

/// `x = exp_f32(x)` for every element.
pub(crate) fn exp_f32_in_place(xs: &mut [f32]) {
    let p = xs.as_mut_ptr();
    // SAFETY: `p` holds `xs.len()` elements; `exp_run` reads each before writing it.
    unsafe { exp_run(p, p, xs.len()) }
}

/// `dst[i] = exp_f32(src[i])` for `i < n`.
///
/// # Safety
/// `src` must be readable and `dst` writable for `n` elements; they may be the same pointer
/// (each element, or block of 8, is read before it is written) but must not overlap
/// otherwise.
unsafe fn exp_run(src: *const f32, dst: *mut f32, n: usize) {
    #[cfg(target_arch = "x86_64")]
    if super::simd::has_avx512() {
        // SAFETY: the processor has AVX-512F (`has_avx512`); the pointers are the caller's.
        return unsafe { avx512::exp_run(src, dst, n) };
    }
    super::simd::wide(
        #[inline(always)]
        || {
            for i in 0..n {
                // SAFETY: `i < n`, as the caller guarantees for both pointers.
                unsafe { *dst.add(i) = exp_f32(*src.add(i)) };
            }
        },
    );
}

#[cfg(target_arch = "x86_64")]
pub(super) mod avx512 {
    use super::{C, HI, INV_LN2_16, LO, SHIFT, TABLE};
    use crate::backends::host::poly::avx512::estrin6;
    use std::arch::x86_64::*;

    /// [`super::exp_run`] 8 lanes at a time: `exp_f32`'s operations in vector form.
    ///
    /// # Safety
    /// The processor must have AVX-512F; the pointers as [`super::exp_run`] says.
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(super) unsafe fn exp_run(src: *const f32, dst: *mut f32, n: usize) {
        // SAFETY: the pointers are the caller's; each block loads its 8 before storing them.
        unsafe {
            super::super::simd::by_eights(src, dst, n, 0.0, |s, d| {
                _mm256_storeu_ps(d, lanes(_mm256_loadu_ps(s)))
            })
        }
    }

    /// `exp_f32` of 8 lanes.
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    fn lanes(x: __m256) -> __m256 {
        // `max(LO, x)` and `min(HI, _)` return their second operand when either is NaN: NaN
        // stays NaN, as `clamp` keeps it.
        let x = _mm256_min_ps(_mm256_set1_ps(HI), _mm256_max_ps(_mm256_set1_ps(LO), x));
        let (r, s) = split(_mm512_mul_pd(
            _mm512_cvtps_pd(x),
            _mm512_set1_pd(INV_LN2_16),
        ));
        let p = estrin6(r, &C);
        _mm512_cvtpd_ps(_mm512_mul_pd(p, s))
    }

    /// [`super::split`] of 8 lanes, the table in two registers.
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(in super::super) fn split(z: __m512d) -> (__m512d, __m512d) {
        let shift = _mm512_set1_pd(SHIFT);
        let kd = _mm512_add_pd(z, shift);
        let r = _mm512_sub_pd(z, _mm512_sub_pd(kd, shift));
        let k = _mm512_castpd_si512(kd);
        // SAFETY: TABLE holds 16 u64s: two unaligned loads of 8.
        let (t0, t1) = unsafe {
            (
                _mm512_loadu_pd(TABLE.as_ptr().cast()),
                _mm512_loadu_pd(TABLE.as_ptr().add(8).cast()),
            )
        };
        // Picks TABLE[k % 16]: `vpermt2pd` reads each index's low four bits.
        let t = _mm512_castpd_si512(_mm512_permutex2var_pd(t0, k, t1));
        (
            r,
            _mm512_castsi512_pd(_mm512_add_epi64(t, _mm512_slli_epi64::<48>(k))),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::{exp_f32, exp_f32_in_place, exp_f32_into, exp_run};
    use crate::backends::host::simd::float_checks::{
        check_array, check_slice_loop, check_wide_loops, every_4099th_f32, same_bits, spread_f32,
        ulps,
    };

    #[test]
    fn every_path_gives_the_bits_of_the_scalar_function() {
        let xs = spread_f32(&[88.72283, -103.27893]);
        let scalar: Vec<f32> = xs.iter().map(|&x| exp_f32(x)).collect();
        // The slice loop (AVX-512 where the processor has it, else AVX2), and in place.
        check_slice_loop(&xs, &scalar, exp_f32_into);
        let mut inplace = xs.clone();
        exp_f32_in_place(&mut inplace);
        assert!(same_bits(&inplace, &scalar));
        // The compiler's vectorised loop alone (what a machine without AVX-512 runs), in
        // AVX2 and in AVX-512 lanes.
        check_wide_loops(&xs, &scalar, exp_f32);
        let mut c = vec![0f32; xs.len()];
        // SAFETY: `xs` and `c` hold `xs.len()` elements each, apart.
        unsafe { exp_run(xs.as_ptr(), c.as_mut_ptr(), xs.len()) };
        assert!(same_bits(&c, &scalar));
        // And through the backend's kernels.
        check_array(&xs, &scalar, crate::Array::exp);
    }

    #[test]
    fn edges_are_those_of_the_c_library() {
        let nan = exp_f32(f32::NAN);
        assert!(nan.is_nan());
        assert_eq!(exp_f32(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp_f32(f32::NEG_INFINITY).to_bits(), 0);
        assert_eq!(exp_f32(0.0), 1.0);
        assert_eq!(exp_f32(-0.0), 1.0);
        assert_eq!(exp_f32(1.0), std::f32::consts::E);
        assert_eq!(exp_f32(88.72283).to_bits(), 0x7f7f_ff84);
        assert_eq!(exp_f32(88.72284), f32::INFINITY);
        assert_eq!(exp_f32(f32::MAX), f32::INFINITY);
        // The smallest subnormal, then rounding to zero.
        assert_eq!(exp_f32(-103.27893).to_bits(), 1);
        assert_eq!(exp_f32(-103.98).to_bits(), 0);
        assert_eq!(exp_f32(f32::MIN).to_bits(), 0);
        // Tiny arguments: 1 or its neighbours, as rounding says.
        assert_eq!(exp_f32(1e-10), 1.0);
        assert_eq!(exp_f32(-1e-10), 1.0);
        assert_eq!(exp_f32(1e-7), 1.000_000_1);
        // Two of the 22 inputs misrounded (by one ulp, each within ~5e-15 of halfway; the
        // f64 reference rounds these right, checked at 60 digits): when this changes, the
        // header's count is stale.
        let off = |bits: u32| {
            let x = f32::from_bits(bits);
            ulps(exp_f32(x), f64::from(x).exp() as f32)
        };
        assert_eq!((off(0x337f_ffff), off(0x38ad_9e29)), (1, 1));
    }

    #[test]
    fn every_4099th_float32_is_within_half_an_ulp_and_a_hair_of_the_f64_exp() {
        let mut off = 0usize;
        every_4099th_f32(|x| {
            let got = exp_f32(x);
            let want = f64::from(x).exp();
            if x.is_nan() {
                assert!(got.is_nan(), "exp({x:e})");
            } else if want.is_finite() && want as f32 != got {
                // Only where the exact value is a hair from halfway between two float32s.
                let (lo, hi) = (got.min(want as f32), got.max(want as f32));
                let mid = (f64::from(lo) + f64::from(hi)) / 2.0;
                assert_eq!(
                    ulps(got, want as f32),
                    1,
                    "exp({x:e}) = {got:e}, not {want:e}"
                );
                assert!(
                    ((want - mid) / want).abs() < 1e-13,
                    "exp({x:e}) = {got:e}, not {want:e}"
                );
                off += 1;
            } else {
                assert_eq!(got, want as f32, "exp({x:e})");
            }
        });
        // Misrounded halfway cases are rare: 22 of all 2^32 float32s (one run over every
        // bit pattern), so ~0.005 expected among these.
        assert!(off <= 1, "{off} results one ulp off");
    }
}
