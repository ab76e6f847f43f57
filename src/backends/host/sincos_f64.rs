//! `sin` and `cos` of a float64: one scalar function each, and slice loops the compiler
//! vectorises.
//!
//! The C library's `sin` is a call per element with branches on the argument's size
//! (7.65 ns an element from Python on the Intel guest of `docs/benchmarks.md`, against
//! NumPy's 14.97 and PyTorch's 0.42). These are branch-free for `|x| <= 2^20`:
//!
//! - `x = k pi/2 + r`: `k` by rounding `x 2/pi`, then `r` by subtracting `k pi/2` in four
//!   parts (fdlibm's `pio2_1`, `pio2_2`, `pio2_3` of 33, 33 and 28 bits, whose products
//!   with `k < 2^20` are exact, and `pio2_3t`). `x - k pio2_1` is exact (Sterbenz); the next
//!   two subtractions keep their rounding errors (two-sums), so `r` comes as `r_hi + r_lo`
//!   within ~2^-120 absolutely, while the closest f64 to a multiple of `pi/2` below 2^20
//!   leaves `|r|` above ~2^-60: `r` is good to ~2^-60 relatively everywhere.
//! - fdlibm's kernels on `r_hi + r_lo` (`|r| <= pi/4`): `sin r = r + r^3 S(r^2)` and
//!   `cos r = 1 - r^2/2 + r^4 C(r^2)`, `S` and `C` of degree 5, with `r_lo`'s first-order
//!   terms and `1 - r^2/2`'s rounding carried. Both are evaluated, and `k mod 4` picks one,
//!   per lane, and its sign.
//!
//! Within 1 ulp, as fdlibm's (and musl's) `sin` and `cos`: 0.71 at worst on a sample
//! checked at 50 digits, where glibc's are correctly rounded but for rare cases (2.3 % of
//! results differ from glibc's by one ulp). PyTorch's SLEEF loop promises 1 ulp.
//!
//! Past `|x| = 2^20` (and for infinities and NaN) the rare element takes the C library's
//! `sin`/`cos` (full argument reduction). Every path gives the same bits: the compiler's
//! AVX-512 or AVX2 loop and the scalar function perform the same IEEE operations in the same
//! order, with no fused multiply-add. The loop is AVX2's even where the processor has
//! AVX-512: the compiler kept most of its AVX-512 loop scalar (7.5 ns an element against 2.2
//! on one thread of the Intel guest; the C library 11.9).

use super::poly::two_sum_err;
use std::mem::MaybeUninit;

/// Past this `|x|`, the C library's full reduction (`k` no longer fits 20 bits).
const BIG: f64 = 1_048_576.0;
/// Below this `|x|` (2^-27), `sin x` rounds to `x` and `cos x` to 1.
const TINY: f64 = 7.450_580_596_923_828e-9;
/// Adding 1.5 * 2^52 rounds an f64 below 2^51 in magnitude to an integer (ties to even),
/// left in the low bits of the sum's representation.
const SHIFT: f64 = 6_755_399_441_055_744.0;
/// `pi/2` in four parts: 33 bits, 33, 28, and the rest rounded to f64 (fdlibm's).
const PIO2_1: f64 = f64::from_bits(0x3ff9_21fb_5440_0000);
const PIO2_2: f64 = f64::from_bits(0x3dd0_b461_1a60_0000);
const PIO2_3: f64 = f64::from_bits(0x3ba3_198a_2e00_0000);
const PIO2_3T: f64 = f64::from_bits(0x397b_839a_2520_49c1);

/// fdlibm's `__kernel_sin` coefficients: `sin r ~ r + S1 r^3 + ... + S6 r^13` on
/// `|r| <= pi/4`, within 2^-58 relatively.
const S: [f64; 6] = [
    f64::from_bits(0xbfc5_5555_5555_5549),
    f64::from_bits(0x3f81_1111_1110_f8a6),
    f64::from_bits(0xbf2a_01a0_19c1_61d5),
    f64::from_bits(0x3ec7_1de3_57b1_fe7d),
    f64::from_bits(0xbe5a_e5e6_8a2b_9ceb),
    f64::from_bits(0x3de5_d93a_5acf_d57c),
];
/// fdlibm's `__kernel_cos` coefficients: `cos r ~ 1 - r^2/2 + C1 r^4 + ... + C6 r^14`,
/// within 2^-58.
const C: [f64; 6] = [
    f64::from_bits(0x3fa5_5555_5555_554c),
    f64::from_bits(0xbf56_c16c_16c1_5177),
    f64::from_bits(0x3efa_01a0_19cb_1590),
    f64::from_bits(0xbe92_7e4f_809c_52ad),
    f64::from_bits(0x3e21_ee9e_bdb4_b1c4),
    f64::from_bits(0xbda8_fae9_be88_54d4),
];

/// `sin x`: `-0` for `-0`, NaN for infinities and NaN.
#[inline(always)]
pub(crate) fn sin_f64(x: f64) -> f64 {
    if near(x) { fast::<0>(x) } else { far::<0>(x) }
}

/// `cos x`: NaN for infinities and NaN.
#[inline(always)]
pub(crate) fn cos_f64(x: f64) -> f64 {
    if near(x) { fast::<1>(x) } else { far::<1>(x) }
}

/// Whether `fast` takes `x`: false for NaN.
#[inline(always)]
fn near(x: f64) -> bool {
    x.abs() <= BIG
}

/// The C library's `sin(x + Q pi/2)`, for the `x` that `near` refuses.
#[cold]
#[inline(never)]
fn far<const Q: u64>(x: f64) -> f64 {
    if Q == 0 { x.sin() } else { x.cos() }
}

/// `sin(x + Q pi/2)` for `|x| <= 2^20`; no branch.
#[inline(always)]
fn fast<const Q: u64>(x: f64) -> f64 {
    let kd = x * std::f64::consts::FRAC_2_PI + SHIFT;
    let k = kd - SHIFT;
    // `k mod 4`, from the sum's low bits (1.5 * 2^52 is a multiple of 4), plus Q.
    let n = kd.to_bits().wrapping_add(Q);
    let (p2, p3) = (k * PIO2_2, k * PIO2_3);
    let r0 = x - k * PIO2_1;
    let r1 = r0 - p2;
    let e1 = two_sum_err(r0, -p2, r1);
    let r2 = r1 - p3;
    let e2 = two_sum_err(r1, -p3, r2);
    let tail = (e1 + e2) - k * PIO2_3T;
    let r = r2 + tail;
    let y = tail - (r - r2);
    // fdlibm's kernels (`iy = 1`).
    let z = r * r;
    let v = z * r;
    let ps = S[1] + z * (S[2] + z * (S[3] + z * (S[4] + z * S[5])));
    let sin = r - ((z * (0.5 * y - v * ps) - y) - v * S[0]);
    let pc = z * (C[0] + z * (C[1] + z * (C[2] + z * (C[3] + z * (C[4] + z * C[5])))));
    let hz = 0.5 * z;
    let w = 1.0 - hz;
    let cos = w + (((1.0 - w) - hz) + (z * pc - r * y));
    let v = if n & 1 == 0 { sin } else { cos };
    // Below 2^-27 (where `k = 0`), `sin x` rounds to `x` and `cos x` to 1: selected, which
    // keeps `sin(-0) = -0` (`r_hi + r_lo` is +0 there).
    let v = if x.abs() < TINY {
        if Q == 0 { x } else { 1.0 }
    } else {
        v
    };
    // Quarters 2 and 3 are the negations of 0 and 1.
    f64::from_bits(v.to_bits() ^ ((n & 2) << 62))
}

/// `out[i] = sin_f64(xs[i])` for every `i` below the shorter of the two lengths.
pub(crate) fn sin_f64_into(xs: &[f64], out: &mut [MaybeUninit<f64>]) {
    super::simd::map_near_far_in::<super::simd::Avx2, f64>(xs, out, fast::<0>, near, far::<0>)
}

/// `out[i] = cos_f64(xs[i])` for every `i` below the shorter of the two lengths.
pub(crate) fn cos_f64_into(xs: &[f64], out: &mut [MaybeUninit<f64>]) {
    super::simd::map_near_far_in::<super::simd::Avx2, f64>(xs, out, fast::<1>, near, far::<1>)
}

#[cfg(test)]
mod tests {
    use super::{cos_f64, cos_f64_into, sin_f64, sin_f64_into};
    use crate::backends::host::dd_reference::uniform;
    use crate::backends::host::simd::Widest;
    use crate::backends::host::simd::float_checks::{check_sin_cos, spread_f64, ulps};

    fn arguments() -> Vec<f64> {
        uniform(1 << 14, -10.0, 10.0, 1)
            .chain(uniform(1 << 13, -1.1e6, 1.1e6, 2))
            .chain((1..2000).map(|i| f64::from(i) * std::f64::consts::FRAC_PI_2))
            .chain(spread_f64(&[
                1e-300,
                f64::from_bits(1),
                super::BIG,
                -super::BIG,
                f64::MAX,
            ]))
            .collect()
    }

    #[test]
    fn every_path_gives_the_bits_of_the_scalar_function() {
        let xs = arguments();
        let sin: Vec<f64> = xs.iter().map(|&x| sin_f64(x)).collect();
        let cos: Vec<f64> = xs.iter().map(|&x| cos_f64(x)).collect();
        // The slice loops (the compiler's AVX2 lanes, then the far elements one by one),
        // from every start and at every length of a block's tail; the compiler's AVX-512
        // loop too, which a processor with AVX-512 could be given; the backend's kernels.
        check_sin_cos::<Widest, f64>(
            &xs,
            (&sin, &cos),
            (sin_f64_into, cos_f64_into),
            super::near,
            super::fast::<0>,
            super::fast::<1>,
        );
    }

    #[test]
    fn edges_and_symmetries_are_those_of_the_c_library() {
        for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert!(sin_f64(x).is_nan() && cos_f64(x).is_nan(), "{x}");
        }
        assert_eq!(sin_f64(0.0).to_bits(), 0);
        assert_eq!(sin_f64(-0.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!((cos_f64(0.0), cos_f64(-0.0)), (1.0, 1.0));
        for x in [1e-10, 1e-300, f64::MIN_POSITIVE, f64::from_bits(1)] {
            assert_eq!((sin_f64(x), sin_f64(-x), cos_f64(x)), (x, -x, 1.0));
        }
        // The f64 nearest pi: its sine is the difference, to the last bit.
        assert_eq!(sin_f64(std::f64::consts::PI), 1.224_646_799_147_353_2e-16);
        assert_eq!(
            cos_f64(std::f64::consts::FRAC_PI_2),
            6.123_233_995_736_766e-17
        );
        for x in [0.5, 3.0, 1e5, 1_048_575.9, 1_048_576.0, 2e6, 1e300] {
            assert_eq!(sin_f64(-x).to_bits(), (-sin_f64(x)).to_bits(), "{x}");
            assert_eq!(cos_f64(-x).to_bits(), cos_f64(x).to_bits(), "{x}");
        }
    }

    #[test]
    fn within_an_ulp_of_the_c_library_and_mostly_its_bits() {
        // glibc's `sin` and `cos` are correctly rounded but for rare cases; fdlibm's kernels
        // are within 1 ulp (0.71 at worst on 400 of the results that differ here, at 50
        // digits), and 2.3 % of these results differ from glibc's. A wrong part of pi/2 or a
        // lost term of `r_lo` shows as results many ulps off near the multiples of pi/2, or
        // as many more differences.
        let near_multiples = (1..200_000).map(|i| {
            let m = f64::from(i) * std::f64::consts::FRAC_PI_2;
            f64::from_bits(m.to_bits() + (i as u64 % 7) - 3)
        });
        let (mut n, mut differ) = (0usize, 0usize);
        for x in uniform(300_000, -1e6, 1e6, 7)
            .chain(uniform(300_000, -4.0, 4.0, 8))
            .chain(near_multiples)
        {
            for (got, want) in [(sin_f64(x), x.sin()), (cos_f64(x), x.cos())] {
                assert!(ulps(got, want) <= 1, "{x:e}: {got:e}, libm {want:e}");
                differ += usize::from(got != want);
                n += 1;
            }
        }
        assert!(differ * 25 < n, "{differ} of {n} differ from the C library");
    }
}
