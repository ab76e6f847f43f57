//! `tanh` of a float64: one scalar function, and slice loops that run it 8 or 4 lanes at a
//! time.
//!
//! The C library's `tanh` is a call per element with branches on the argument's size
//! (6.2 ns an element from Python on the Intel guest of `docs/benchmarks.md`, against
//! NumPy's 1.3 and PyTorch's 0.65), and glibc's is within 2 ulp. This one is within 0.509
//! ulp (measured against a double-double reference), with no branch, 1.8 ns an element in
//! AVX-512 on one thread (2.6 in AVX2):
//!
//! `tanh x = sign(x) m / (m + 2)` with `m = e^(2|x|) - 1`, and `e^(2|x|)` from
//! [`super::exp_f64`]'s reduction: `scale (1 + tmp)`, `scale = 2^(k/32)`, `|tmp| < 0.0111`.
//! `m = (scale - 1) + scale tmp`, where `scale - 1` is exact (`scale` is a multiple of its
//! ulp below 2^53) and the rounding errors of `tmp`'s last sum, of `scale tmp` and of the
//! sum, and the term `tail tmp` that `exp` drops, are carried in a second term (`m_lo`).
//! That keeps `m`'s relative accuracy as `|x|` goes to 0 (`k = 0`, `scale = 1`, `m = tmp`),
//! where `e^(2|x|) - 1` itself would be a difference of nearly equal numbers, and where
//! `k = 1` makes `m` (down to 0.0109) a difference of `scale - 1` and `scale tmp`.
//! The quotient is `q0 = m (1 / (m + 2))` corrected by its exact residual: one division,
//! and one final rounding of a value within ~0.01 ulp of the exact `tanh` (the polynomial's
//! error and the roundings of `tmp`'s small terms, relative to `m`). The exact
//! residuals come from fused multiply-adds in the vector loops and from Dekker's products
//! in the scalar function, which give the same values (each is exact, or the one rounding
//! of an exact value), so every path gives the same bits. `m` and the quotient are
//! `expm1_f64`'s [`em1`] and [`ratio`] (and their lanes), which `expm1`, `sinh` and `cosh`
//! share.
//!
//! Past `|x| = 22` (clamped there) `tanh` rounds to 1 (`1 - tanh 19.1 < 2^-54`); below
//! `2^-27` it rounds to `x` (`x^3 / 3 < 2^-55 |x|`), which is selected, so no step ever
//! meets a subnormal. Taking `|x|` and putting the sign back makes the function odd bit
//! for bit; NaN fails both comparisons and stays NaN.

use super::expm1_f64::{SIGN, TINY, em1, ratio};
use std::mem::MaybeUninit;

/// `tanh` rounds to 1 past this `|x|`.
const HI: f64 = 22.0;

/// `tanh x` within ~0.5 ulp: `±1` past `|x| ~ 19.1`, `x` itself below `2^-27`, `-0` for
/// `-0`, NaN for NaN.
#[inline(always)]
pub(crate) fn tanh_f64(x: f64) -> f64 {
    let a = x.abs();
    // `min(HI, a)` as `vminpd` computes it: NaN fails `HI < a` and stays.
    let a = if HI < a { HI } else { a };
    let (m, m_lo) = em1::<false>(a + a);
    let (q0, q_lo) = ratio(m, m_lo, 2.0);
    let q = q0 + q_lo;
    let t = if a < TINY { a } else { q };
    f64::from_bits(t.to_bits() | (x.to_bits() & SIGN))
}

/// `out[i] = tanh_f64(xs[i])` for every `i` below the shorter of the two lengths (callers
/// pass equal ones).
pub(crate) fn tanh_f64_into(xs: &[f64], out: &mut [MaybeUninit<f64>]) {
    let n = xs.len().min(out.len());
    let (src, dst) = (xs.as_ptr(), out.as_mut_ptr().cast::<f64>());
    #[cfg(target_arch = "x86_64")]
    {
        if super::simd::has_avx512() {
            // SAFETY: the processor has AVX-512F, AVX2 and FMA (`has_avx512`); `xs` holds
            // `n` readable elements and `out` `n` writable ones, apart.
            return unsafe { x86::avx512_run(src, dst, n) };
        }
        if super::simd::has_avx2_fma() {
            // SAFETY: the processor has AVX2 and FMA; the pointers as above.
            return unsafe { x86::avx2_run(src, dst, n) };
        }
    }
    for (o, &x) in out[..n].iter_mut().zip(xs) {
        o.write(tanh_f64(x));
    }
}

/// `tanh_f64`'s operations, in its order, on 8 lanes (AVX-512, `exp_f64`'s tables in
/// registers) or twice 4 (AVX2, its tables read by gathers).
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{HI, SIGN, TINY};
    use crate::backends::host::exp_f64::x86::{reduce4, reduce8, tables};
    use crate::backends::host::expm1_f64::D;
    use crate::backends::host::expm1_f64::x86::{em1_lanes, ratio_lanes};
    use crate::backends::host::lanes::{v4, v8};
    use crate::backends::host::poly::{avx2, avx512};
    use crate::backends::host::simd::by_eights;
    use std::arch::x86_64::*;

    /// `tanh_f64` over one vector of f64 lanes, `$v` naming the module of the width's
    /// operations and `$reduce` its `exp_f64` reduction.
    macro_rules! tanh_lanes {
        ($v:ident, $x:expr, $reduce:expr, $estrin6:path) => {{
            use $v::*;
            let x = $x;
            let a = min(set(HI), as_float(andi(as_int(x), seti(!SIGN))));
            let (m, m_lo) = em1_lanes!($v, false, add(a, a), $reduce, $estrin6);
            let (q0, q_lo) = ratio_lanes!($v, m, m_lo, 2.0);
            let t = select_lt(a, set(TINY), a, add(q0, q_lo));
            as_float(ori(as_int(t), andi(as_int(x), seti(SIGN))))
        }};
    }

    /// # Safety
    /// The processor must have AVX-512F, AVX2 and FMA; `src` readable and `dst` writable for
    /// `n` elements, apart or the same.
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(super) unsafe fn avx512_run(src: *const f64, dst: *mut f64, n: usize) {
        let t = tables();
        // SAFETY: the pointers are the caller's; each block loads its 8 before storing them.
        unsafe {
            by_eights(src, dst, n, 0.0, |s, d| {
                let y = tanh_lanes!(
                    v8,
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
    pub(super) unsafe fn avx2_run(src: *const f64, dst: *mut f64, n: usize) {
        // SAFETY: the pointers are the caller's; each block loads its 8 before storing them.
        unsafe {
            by_eights(src, dst, n, 0.0, |s, d| {
                for h in [0, 4] {
                    let y = tanh_lanes!(v4, _mm256_loadu_pd(s.add(h)), reduce4, avx2::estrin6);
                    _mm256_storeu_pd(d.add(h), y)
                }
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{tanh_f64, tanh_f64_into};
    use crate::backends::host::dd_reference::{tanh_reference, ulp_error, uniform};
    use crate::backends::host::simd::float_checks::{
        check_array, check_slice_loop, spread_f64, ulps,
    };

    fn arguments() -> Vec<f64> {
        uniform(1 << 15, -25.0, 25.0, 1)
            .chain(uniform(1 << 13, -0.02, 0.02, 2))
            .chain(spread_f64(&[
                -f64::NAN,
                super::TINY,
                -super::TINY,
                22.0,
                f64::MAX,
                f64::from_bits(1),
            ]))
            .collect()
    }

    #[test]
    fn every_path_gives_the_bits_of_the_scalar_function() {
        let xs = arguments();
        let scalar: Vec<f64> = xs.iter().map(|&x| tanh_f64(x)).collect();
        // The widest loop this processor has, then the AVX2 one.
        check_slice_loop(&xs, &scalar, tanh_f64_into);
        #[cfg(target_arch = "x86_64")]
        if crate::backends::host::simd::has_avx2_fma() {
            check_slice_loop(&xs, &scalar, |xs, out| {
                let n = xs.len().min(out.len());
                // SAFETY: the processor has AVX2 and FMA; `xs` and `out` hold `n` each.
                unsafe { super::x86::avx2_run(xs.as_ptr(), out.as_mut_ptr().cast(), n) }
            });
        }
        // Dekker's product errors (the scalar function's, on x86-64) are the fused
        // multiply-add's exact values, over operands of the sizes `tanh_f64` meets.
        for (&x, &y) in xs.iter().zip(xs.iter().rev()) {
            if x.is_nan() || y.is_nan() {
                continue;
            }
            let (a, b) = (x.abs().clamp(1e-30, 1e30), y.abs().clamp(1e-30, 1e30));
            let p = a * b;
            assert_eq!(
                crate::backends::host::expm1_f64::dekker_prod_err(a, b, p),
                a.mul_add(b, -p),
                "{a:e} {b:e}"
            );
        }
        check_array(&xs, &scalar, crate::Array::tanh);
    }

    #[test]
    fn edges_and_the_sign() {
        assert!(tanh_f64(f64::NAN).is_nan());
        assert_eq!(tanh_f64(f64::INFINITY), 1.0);
        assert_eq!(tanh_f64(f64::NEG_INFINITY), -1.0);
        assert_eq!(tanh_f64(0.0).to_bits(), 0);
        assert_eq!(tanh_f64(-0.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(tanh_f64(f64::MAX), 1.0);
        assert_eq!(tanh_f64(f64::MIN), -1.0);
        // The last f64 below 1 (1 - tanh x falls under 2^-54 at ~19.06), then 1.
        assert_eq!(tanh_f64(19.0), 1.0 - f64::EPSILON / 2.0);
        assert_eq!(tanh_f64(19.1), 1.0);
        for x in [1e-10, 1e-300, f64::MIN_POSITIVE, 1e-310, f64::from_bits(1)] {
            assert_eq!(tanh_f64(x), x);
            assert_eq!(tanh_f64(-x), -x);
        }
    }

    #[test]
    fn within_half_an_ulp_and_two_of_the_c_library() {
        // Against a double-double reference: at most 0.509 ulp (the one rounding of a value
        // within ~0.01 ulp of the exact one), over every range the method takes
        // apart (k = 0, small k, large k, near the clamp). glibc's `tanh` is within 2 ulp
        // (tanh(-0.53058982719613) is 2 ulp off there); a wrong residual or a lost term of
        // `m_lo` shows as an error of an ulp or more.
        let ranges = [
            (-20.0, 20.0),
            (-1.0, 1.0),
            (-0.0108, 0.0108),
            (-1e-4, 1e-4),
            (0.005, 0.03),
            (0.5, 0.6),
            (15.0, 19.2),
        ];
        let (mut n, mut differ, mut worst) = (0usize, 0usize, 0f64);
        for (seed, &(lo, hi)) in ranges.iter().enumerate() {
            for x in uniform(100_000, lo, hi, seed as u64 + 20) {
                let got = tanh_f64(x);
                let err = ulp_error(got.abs(), tanh_reference(x));
                assert!(err <= 0.51, "tanh({x:e}) = {got:e}: {err} ulp off");
                worst = worst.max(err);
                let want = x.tanh();
                assert!(ulps(got, want) <= 2, "tanh({x:e}) = {got:e}, libm {want:e}");
                differ += usize::from(got != want);
                n += 1;
            }
        }
        assert!(worst > 0.49, "the reference itself is off: worst {worst}");
        eprintln!("{differ} of {n} differ from the C library, worst {worst}");
    }
}
