//! `sin`, `cos` and `tan` of a float32: one scalar function each, and slice loops the
//! compiler vectorises.
//!
//! The C library's `sinf` is a call per element with branches on the argument's size
//! (3.75 ns an element from Python on the Intel guest of `docs/benchmarks.md`, against
//! NumPy's 0.50 and PyTorch's 0.20). These compute in f64 and round once to float32, as
//! [`super::expf`] does:
//!
//! - `x = k pi/2 + r` with `|r| <= pi/4`: `k` by rounding `x 2/pi`, then `r` by subtracting
//!   `k pi/2` in three parts (fdlibm's `pio2_1`, `pio2_2`, `pio2_2t`). The first two have 33
//!   significant bits, so for `|k| < 2^20` their products with `k` are exact and
//!   `x - k pio2_1` is exact (Sterbenz); `r` is then within ~2^-52 of `x - k pi/2`
//!   relatively, even for the float32 closest to a multiple of `pi/2`.
//! - `sin r = r (1 + r^2 S(r^2))`, `cos r = 1 + r^2 C(r^2)`, `S` and `C` of degree 5
//!   (relative errors 2^-55 and 2^-51.6); `k mod 4` picks one, per lane, and its sign. The
//!   product form keeps `sin(-0) = -0`. (One polynomial with its coefficients picked per
//!   lane took 0.875 ns an element in AVX-512 on the Intel guest, both evaluated and one
//!   kept 0.933; the C library's `sinf` 2.65.)
//!
//! `tan` evaluates both polynomials and divides in f64 (`sin r / cos r`, or `-cos r / sin r`
//! in odd quarters): 1.9-2.0 ns an element against 3.8-3.9 for the three passes of
//! `sin_f32(x) / cos_f32(x)`, which rounded three times (one thread, 64K, Intel guest).
//!
//! The result before the last rounding is within ~2^-50 of the exact value: it rounds to
//! the float32 nearest the exact value but where that lies a hair from halfway between two.
//! Past `|x| = 2^20` (and for infinities and NaN) the rare element takes the C library's f64
//! `sin`/`cos`/`tan` rounded to float32 (full argument reduction).
//!
//! The slice loops run the branch-free `fast` over a block in AVX-512 or AVX2 lanes (the
//! compiler vectorises it: no table), then redo the block's few out-of-range elements one
//! by one. Every path gives the same bits: the same IEEE operations in the same order, no
//! fused multiply-add.

use super::poly::estrin6;
use std::mem::MaybeUninit;

/// Past this `|x|`, the f64 C library's full reduction (`k` no longer fits 20 bits).
const BIG: f32 = 1_048_576.0;
/// Adding 1.5 * 2^52 rounds an f64 below 2^51 in magnitude to an integer (ties to even),
/// left in the low bits of the sum's representation.
const SHIFT: f64 = 6_755_399_441_055_744.0;
/// `pi/2` in three parts: 33 bits, the next 33, and the rest rounded to f64.
const PIO2_1: f64 = f64::from_bits(0x3ff9_21fb_5440_0000);
const PIO2_2: f64 = f64::from_bits(0x3dd0_b461_1a60_0000);
const PIO2_3: f64 = f64::from_bits(0x3ba3_198a_2e03_7073);

/// `(sin(r)/r - 1) / r^2` in `t = r^2` on `0 <= t <= 0.786^2`: the degree-5 polynomial
/// through the Chebyshev nodes of that interval (computed at 50 digits, rounded to f64).
const S: [f64; 6] = [
    -0.166_666_666_666_666_66,
    0.008_333_333_333_330_93,
    -0.000_198_412_698_367_308_9,
    2.755_731_608_820_367_5e-6,
    -2.505_112_885_678_672_5e-8,
    1.591_791_417_048_074e-10,
];
/// `(cos(r) - 1) / r^2` in `t = r^2`, likewise.
const C: [f64; 6] = [
    -0.499_999_999_999_999_67,
    0.041_666_666_666_630_65,
    -0.001_388_888_888_208_647_3,
    2.480_158_260_185_282_7e-5,
    -2.755_585_103_465_456_5e-7,
    2.066_518_254_984_404_5e-9,
];

/// `sin x` rounded to float32: `-0` for `-0`, NaN for infinities and NaN.
#[inline(always)]
pub(crate) fn sin_f32(x: f32) -> f32 {
    one::<0>(x)
}

/// `cos x` rounded to float32: NaN for infinities and NaN.
#[inline(always)]
pub(crate) fn cos_f32(x: f32) -> f32 {
    one::<1>(x)
}

/// `tan x` rounded to float32: the float64 quotient of the two polynomials, rounded once
/// (nearly always the float32 nearest the exact value, where `sin_f32(x) / cos_f32(x)`
/// rounds three times). `-0` for `-0`, NaN for infinities and NaN.
#[inline(always)]
pub(crate) fn tan_f32(x: f32) -> f32 {
    one::<TAN>(x)
}

/// The `Q` of `tan` in `one`, `fast`, `far` and `run` (0 is `sin`, 1 `cos`).
const TAN: u64 = 2;

/// `sin(x + Q pi/2)`: `sin` for `Q = 0`, `cos` for `Q = 1`; `tan` for `TAN`.
#[inline(always)]
fn one<const Q: u64>(x: f32) -> f32 {
    if near(x) { fast::<Q>(x) } else { far::<Q>(x) }
}

/// Whether `fast` takes `x`: false for NaN.
#[inline(always)]
fn near(x: f32) -> bool {
    x.abs() <= BIG
}

/// The f64 C library's `sin(x + Q pi/2)` rounded to float32, for the `x` that `near` refuses.
#[cold]
#[inline(never)]
fn far<const Q: u64>(x: f32) -> f32 {
    let a = f64::from(x);
    (match Q {
        0 => a.sin(),
        1 => a.cos(),
        _ => a.tan(),
    }) as f32
}

/// `sin(x + Q pi/2)` for `|x| <= 2^20` (`tan x` for `TAN`); no branch.
#[inline(always)]
fn fast<const Q: u64>(x: f32) -> f32 {
    let a = f64::from(x);
    let kd = a * std::f64::consts::FRAC_2_PI + SHIFT;
    let kf = kd - SHIFT;
    // `k mod 4`, from the sum's low bits (1.5 * 2^52 is a multiple of 4), plus Q.
    let k = kd.to_bits().wrapping_add(Q);
    let r = ((a - kf * PIO2_1) - kf * PIO2_2) - kf * PIO2_3;
    let t = r * r;
    if Q == TAN {
        // tan(r + k pi/2) is `tan r` for even `k` and `-1 / tan r` for odd: both
        // polynomials, and the quotient picked per lane (`sin r` is not 0 where `k` is odd).
        let (s, c) = (r * (1.0 + t * estrin6(t, &S)), 1.0 + t * estrin6(t, &C));
        let odd = k & 1 != 0;
        let q = if odd { c / s } else { s / c };
        return (if odd { -q } else { q }) as f32;
    }
    // One polynomial, its coefficients picked per lane: `r (1 + t S(t))` for sin r in even
    // quarters, `1 (1 + t C(t))` for cos r in odd ones (the factor 1 is exact).
    let odd = k & 1 != 0;
    let p: [f64; 6] = std::array::from_fn(|j| if odd { C[j] } else { S[j] });
    let v = (if odd { 1.0 } else { r }) * (1.0 + t * estrin6(t, &p));
    // Quarters 2 and 3 are the negations of 0 and 1.
    f64::from_bits(v.to_bits() ^ ((k & 2) << 62)) as f32
}

/// `out[i] = sin_f32(xs[i])` for every `i` below the shorter of the two lengths.
pub(crate) fn sin_f32_into(xs: &[f32], out: &mut [MaybeUninit<f32>]) {
    run::<0>(xs, out)
}

/// `out[i] = cos_f32(xs[i])` for every `i` below the shorter of the two lengths.
pub(crate) fn cos_f32_into(xs: &[f32], out: &mut [MaybeUninit<f32>]) {
    run::<1>(xs, out)
}

/// `out[i] = tan_f32(xs[i])` for every `i` below the shorter of the two lengths.
pub(crate) fn tan_f32_into(xs: &[f32], out: &mut [MaybeUninit<f32>]) {
    run::<TAN>(xs, out)
}

fn run<const Q: u64>(xs: &[f32], out: &mut [MaybeUninit<f32>]) {
    super::simd::map_near_far(xs, out, fast::<Q>, near, far::<Q>)
}

#[cfg(test)]
mod tests {
    use super::{TAN, cos_f32, cos_f32_into, sin_f32, sin_f32_into, tan_f32, tan_f32_into};
    use crate::backends::host::simd::Avx2;
    use crate::backends::host::simd::float_checks::{
        check_near_far, every_4099th_f32, same, spread_f32,
    };

    #[test]
    fn every_path_gives_the_bits_of_the_scalar_function() {
        use super::{fast, near};
        use crate::Array;
        let xs = spread_f32(&[1_048_576.0, 1_048_576.1, -1_048_576.1, 3e38, 1e-40]);
        // The slice loop (AVX-512 or AVX2 lanes, then the far elements one by one), from
        // every start and at every length of a block's tail; the compiler's AVX2 loop alone
        // (what a machine without AVX-512 runs); the backend's kernels.
        check_near_far::<Avx2, f32>(&xs, sin_f32, sin_f32_into, near, fast::<0>, Array::sin);
        check_near_far::<Avx2, f32>(&xs, cos_f32, cos_f32_into, near, fast::<1>, Array::cos);
        check_near_far::<Avx2, f32>(&xs, tan_f32, tan_f32_into, near, fast::<TAN>, Array::tan);
    }

    #[test]
    fn edges_and_symmetries_are_those_of_the_c_library() {
        for x in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            assert!(sin_f32(x).is_nan() && cos_f32(x).is_nan(), "{x}");
            assert!(tan_f32(x).is_nan(), "{x}");
        }
        assert_eq!(tan_f32(0.0).to_bits(), 0);
        assert_eq!(tan_f32(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(sin_f32(0.0).to_bits(), 0);
        assert_eq!(sin_f32(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!((cos_f32(0.0), cos_f32(-0.0)), (1.0, 1.0));
        // Tiny and subnormal arguments: sin x = x, cos x = 1.
        for x in [1e-10f32, f32::MIN_POSITIVE, 1e-40, f32::from_bits(1)] {
            assert_eq!((sin_f32(x), sin_f32(-x), cos_f32(x)), (x, -x, 1.0));
            assert_eq!((tan_f32(x), tan_f32(-x)), (x, -x));
        }
        // The float32 nearest pi/2 and pi: the results are the small differences.
        let h = std::f32::consts::FRAC_PI_2;
        assert_eq!(cos_f32(h), (f64::from(h)).cos() as f32);
        assert_eq!(sin_f32(std::f32::consts::PI), -8.742_278e-8);
        // Odd and even, inside and past 2^20.
        for x in [0.5f32, 3.0, 1e5, 1_048_575.9, 1_048_576.0, 2e6, 3e38] {
            assert_eq!(sin_f32(-x).to_bits(), (-sin_f32(x)).to_bits(), "{x}");
            assert_eq!(cos_f32(-x).to_bits(), cos_f32(x).to_bits(), "{x}");
            assert_eq!(tan_f32(-x).to_bits(), (-tan_f32(x)).to_bits(), "{x}");
        }
    }

    #[test]
    fn every_4099th_float32_gets_the_f64_value_rounded_once() {
        // On every float32 up to 2^20 (one run; the far ones are the C library's by
        // construction) no result differs from glibc's f64 `sin` and `cos` rounded to
        // float32. A sample of that run here, both signs.
        every_4099th_f32(|x| {
            let a = f64::from(x);
            let pairs = [
                (sin_f32(x), a.sin() as f32),
                (cos_f32(x), a.cos() as f32),
                (tan_f32(x), a.tan() as f32),
            ];
            for (got, want) in pairs {
                assert!(same(got, want), "{x:e}: {got:e}, not {want:e}");
            }
        });
    }
}
