//! `tanh` of a float32: one scalar function, and a slice loop that runs it 8 lanes at a time.
//!
//! The C library's `tanhf` is a call per element with branches on the argument's size
//! (5.65 ns an element from Python on the Intel guest of `docs/benchmarks.md`, against
//! NumPy's 0.29 and PyTorch's 0.15). This one computes in f64 and rounds once to float32,
//! as [`super::expf`] does, with no branch:
//!
//! `tanh x = sign(x) m / (m + 2)` with `m = e^(2|x|) - 1`, and `m` from `expf`'s table:
//! `2|x| = (k + r) ln2 / 16`, `m = (s - 1) + s q` with `s = 2^(k/16)` and
//! `q = 2^(r/16) - 1` a degree-6 polynomial with no constant term. Without the constant,
//! `q` keeps its relative accuracy as `|x|` goes to 0 (`k = 0`, `s = 1`, `m = q`), where
//! `e^(2|x|)` itself would leave `m` a difference of nearly equal numbers; and `s - 1` is
//! exact for the `s` near 1 where `m` is small. `m` is within ~2^-50 of its exact value
//! relatively, the quotient's sensitivity to it is at most 1 (`2 / (m + 2)`), so the
//! result before the last rounding is within ~2^-49. Measured on all 2^32 float32s: every
//! result is glibc's f64 `tanh` rounded to float32, and the closest case to halfway
//! (7.3e-16 from it) is rounded right: correctly rounded throughout (PyTorch's SLEEF
//! `tanhf_u10` promises 1 ulp).
//!
//! Taking `|x|` and putting the sign back makes the function odd bit for bit. Past `|x| = 10`
//! (clamped there) `tanh` rounds to 1 in float32 (`1 - tanh 9.02 < 2^-25`); the clamp keeps
//! `e^(2|x|)` finite and NaN, which fails the comparison, stays NaN.
//!
//! Every path gives the same bits (the AVX-512 loop reading the table with `vpermt2pd`, the
//! AVX2 loop the compiler vectorises from `tanh_f32`, the scalar function): each performs
//! the same IEEE operations in the same order, with no fused multiply-add.

use super::expf::split;
use super::poly::estrin6;
use std::mem::MaybeUninit;

/// Past this `|x|`, `tanh` rounds to 1 in float32.
const HI: f32 = 10.0;
/// `32 / ln 2`: `2|x|` in sixteenths of `ln 2`.
const INV_LN2_32: f64 = 32.0 * std::f64::consts::LOG2_E;

/// `(2^(r/16) - 1) / r` on `|r| <= 1/2`: the degree-5 polynomial through the Chebyshev nodes
/// of that interval (computed at 50 digits, rounded to f64), relative error 6.8e-16.
const C: [f64; 6] = [
    0.043_321_698_784_996_61,
    0.000_938_384_792_808_987_3,
    1.355_080_777_749_983e-5,
    1.467_610_032_183_767_2e-7,
    1.271_608_503_034_998_7e-9,
    9.181_334_960_907_254e-12,
];

/// `tanh x` rounded to float32: `±1` past `|x| ~ 9.01`, `x` itself for tiny `x`, `-0` for
/// `-0`, NaN for NaN.
#[inline(always)]
pub(crate) fn tanh_f32(x: f32) -> f32 {
    let a = x.abs();
    // `min(HI, a)` as `vminps` computes it: NaN fails `HI < a` and stays.
    let a = if HI < a { HI } else { a };
    let (r, s) = split(f64::from(a) * INV_LN2_32);
    let m = (s - 1.0) + s * (r * estrin6(r, &C));
    ((m / (m + 2.0)) as f32).copysign(x)
}

/// `out[i] = tanh_f32(xs[i])` for every `i` below the shorter of the two lengths (callers
/// pass equal ones).
pub(crate) fn tanh_f32_into(xs: &[f32], out: &mut [MaybeUninit<f32>]) {
    let n = xs.len().min(out.len());
    // SAFETY: `xs` holds `n` readable elements and `out` `n` writable ones.
    unsafe { tanh_run(xs.as_ptr(), out.as_mut_ptr().cast(), n) }
}

/// `dst[i] = tanh_f32(src[i])` for `i < n`.
///
/// # Safety
/// `src` must be readable and `dst` writable for `n` elements, apart.
unsafe fn tanh_run(src: *const f32, dst: *mut f32, n: usize) {
    #[cfg(target_arch = "x86_64")]
    if super::simd::has_avx512() {
        // SAFETY: the processor has AVX-512F (`has_avx512`); the pointers are the caller's.
        return unsafe { avx512::tanh_run(src, dst, n) };
    }
    super::simd::wide(
        #[inline(always)]
        || {
            for i in 0..n {
                // SAFETY: `i < n`, as the caller guarantees for both pointers.
                unsafe { *dst.add(i) = tanh_f32(*src.add(i)) };
            }
        },
    );
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::super::expf::avx512::split;
    use super::{C, HI, INV_LN2_32};
    use crate::backends::host::poly::avx512::estrin6;
    use std::arch::x86_64::*;

    /// [`super::tanh_run`] 8 lanes at a time: `tanh_f32`'s operations in vector form.
    ///
    /// # Safety
    /// The processor must have AVX-512F; the pointers as [`super::tanh_run`] says.
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(super) unsafe fn tanh_run(src: *const f32, dst: *mut f32, n: usize) {
        // SAFETY: the pointers are the caller's; each block loads its 8 before storing them.
        unsafe {
            super::super::simd::by_eights(src, dst, n, 0.0, |s, d| {
                _mm256_storeu_ps(d, lanes(_mm256_loadu_ps(s)))
            })
        }
    }

    /// `tanh_f32` of 8 lanes.
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    fn lanes(x: __m256) -> __m256 {
        let sign = _mm256_set1_ps(-0.0);
        // `min(HI, a)` returns its second operand when either is NaN: NaN stays NaN.
        let a = _mm256_min_ps(_mm256_set1_ps(HI), _mm256_andnot_ps(sign, x));
        let (r, s) = split(_mm512_mul_pd(
            _mm512_cvtps_pd(a),
            _mm512_set1_pd(INV_LN2_32),
        ));
        let p = estrin6(r, &C);
        let one = _mm512_set1_pd(1.0);
        let m = _mm512_add_pd(_mm512_sub_pd(s, one), _mm512_mul_pd(s, _mm512_mul_pd(r, p)));
        let t = _mm512_div_pd(m, _mm512_add_pd(m, _mm512_set1_pd(2.0)));
        // `t` is +0 or more (or NaN): or-ing in x's sign bit is `copysign`.
        _mm256_or_ps(_mm512_cvtpd_ps(t), _mm256_and_ps(sign, x))
    }
}

#[cfg(test)]
mod tests {
    use super::{tanh_f32, tanh_f32_into, tanh_run};
    use crate::backends::host::simd::float_checks::{
        check_array, check_slice_loop, check_wide_loops, every_4099th_f32, same, same_bits,
        spread_f32,
    };

    #[test]
    fn every_path_gives_the_bits_of_the_scalar_function() {
        let xs = spread_f32(&[-f32::NAN]);
        let scalar: Vec<f32> = xs.iter().map(|&x| tanh_f32(x)).collect();
        // The slice loop (AVX-512 where the processor has it, else AVX2).
        check_slice_loop(&xs, &scalar, tanh_f32_into);
        // The compiler's vectorised loop alone (what a machine without AVX-512 runs), in
        // AVX2 and in AVX-512 lanes.
        check_wide_loops(&xs, &scalar, tanh_f32);
        let mut c = vec![0f32; xs.len()];
        // SAFETY: `xs` and `c` hold `xs.len()` elements each, apart.
        unsafe { tanh_run(xs.as_ptr(), c.as_mut_ptr(), xs.len()) };
        assert!(same_bits(&c, &scalar));
        // And through the backend's kernels.
        check_array(&xs, &scalar, crate::Array::tanh);
    }

    #[test]
    fn edges_and_the_sign_are_those_of_the_c_library() {
        assert!(tanh_f32(f32::NAN).is_nan());
        assert_eq!(tanh_f32(f32::INFINITY), 1.0);
        assert_eq!(tanh_f32(f32::NEG_INFINITY), -1.0);
        assert_eq!(tanh_f32(0.0).to_bits(), 0);
        assert_eq!(tanh_f32(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(tanh_f32(f32::MAX), 1.0);
        assert_eq!(tanh_f32(f32::MIN), -1.0);
        // The last float32 below 1, then 1 (`1 - tanh x` falls under 2^-25 at ~9.01).
        assert_eq!(tanh_f32(9.0), 0.999_999_94);
        assert_eq!(tanh_f32(9.1), 1.0);
        // Tiny and subnormal arguments are their own tanh; the function is odd.
        for x in [1e-10f32, 1e-30, f32::MIN_POSITIVE, 1e-40, f32::from_bits(1)] {
            assert_eq!(tanh_f32(x), x);
            assert_eq!(tanh_f32(-x), -x);
        }
        assert_eq!(tanh_f32(0.5), 0.462_117_16);
        assert_eq!(tanh_f32(-0.5), -0.462_117_16);
    }

    #[test]
    fn every_4099th_float32_gets_the_f64_tanh_rounded_once() {
        // On all 2^32 (one run) no result differs from glibc's f64 `tanh` rounded to float32;
        // the 12 closest to halfway (the nearest 7.3e-16 from it, relatively) are rounded
        // right, checked at 60 digits. A sample of that run here, both signs.
        every_4099th_f32(|x| {
            let (got, want) = (tanh_f32(x), f64::from(x).tanh() as f32);
            assert!(same(got, want), "tanh({x:e}) = {got:e}, not {want:e}");
        });
        // The closest to halfway: x = 0.0014914835, whose tanh lies 7.3e-16 (relatively)
        // from the midpoint of two float32s.
        let x = f32::from_bits(985_890_274);
        assert_eq!(tanh_f32(x), f64::from(x).tanh() as f32);
    }
}
