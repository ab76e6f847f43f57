//! `sin`, `cos` and `tan` of a float64: one scalar function each, and slice loops that run
//! it 8 or 4 lanes at a time.
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
//! `tan` shares the reduction and both kernels: `sin r / cos r` in even quarters,
//! `-cos r / sin r` in odd ones, each operand carried in two parts (the last rounding's
//! error) and divided by `expm1_f64`'s `quotient` (one division, the residual exact), then
//! rounded once: 0.88 ulp at worst on 3,000 results that differ from glibc's (3.0 % do),
//! where the quotient of the rounded `sin` and `cos` reached 2 ulps (0.1 % of results).
//! One kernel took 3.6-4.6 ns an element against 5.9-6.2 for the three passes of that
//! quotient (one thread, 64K, the Intel guest of the twenty-sixth sitting).
//!
//! Past `|x| = 2^20` (and for infinities and NaN) the rare element takes the C library's
//! `sin`/`cos`/`tan` (full argument reduction). Every path gives the same bits: the
//! written-out AVX-512 and AVX2 loops (`x86`), the compiler's loop over `fast` where there
//! is no AVX2, and the scalar function perform the same IEEE operations in the same order,
//! with no fused multiply-add but where it is exact (`tan`'s residual, which the scalar
//! function takes from Dekker's product). The written-out AVX-512 loop took 2.40-2.51 ns an
//! element against 3.75-5.01 for the compiler's AVX2 loop it replaced (one thread, 64K,
//! three alternated pairs on the Intel Xeon of the twenty-fifth sitting; the C library 11.9
//! on an earlier Intel guest).

use super::expm1_f64::quotient;
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

/// `tan x` (within 1 ulp; see `tan_near`): `-0` for `-0`, NaN for infinities and NaN.
#[inline(always)]
pub(crate) fn tan_f64(x: f64) -> f64 {
    if near(x) {
        fast::<TAN>(x)
    } else {
        far::<TAN>(x)
    }
}

/// The `Q` of `tan` in `fast`, `far` and the loops (0 is `sin`, 1 `cos`).
const TAN: u64 = 2;

/// Whether `fast` takes `x`: false for NaN.
#[inline(always)]
fn near(x: f64) -> bool {
    x.abs() <= BIG
}

/// The C library's `sin(x + Q pi/2)` (`tan x` for `TAN`), for the `x` that `near` refuses.
#[cold]
#[inline(never)]
fn far<const Q: u64>(x: f64) -> f64 {
    match Q {
        0 => x.sin(),
        1 => x.cos(),
        _ => x.tan(),
    }
}

/// What `sin`, `cos` and `tan` of `x` share: `k mod 4` in the low bits of `n`, and
/// `sin r = r - ts` and `cos r = w + tc` before their last roundings.
struct Parts {
    n: u64,
    r: f64,
    ts: f64,
    w: f64,
    tc: f64,
}

/// The reduction and both kernels, for `|x| <= 2^20`; no branch.
#[inline(always)]
fn parts(x: f64) -> Parts {
    let kd = x * std::f64::consts::FRAC_2_PI + SHIFT;
    let k = kd - SHIFT;
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
    let ts = (z * (0.5 * y - v * ps) - y) - v * S[0];
    let pc = z * (C[0] + z * (C[1] + z * (C[2] + z * (C[3] + z * (C[4] + z * C[5])))));
    let hz = 0.5 * z;
    let w = 1.0 - hz;
    let tc = ((1.0 - w) - hz) + (z * pc - r * y);
    // `k mod 4` from the sum's low bits (1.5 * 2^52 is a multiple of 4).
    Parts {
        n: kd.to_bits(),
        r,
        ts,
        w,
        tc,
    }
}

/// `sin(x + Q pi/2)` for `|x| <= 2^20` (`tan x` for `TAN`); no branch.
#[inline(always)]
fn fast<const Q: u64>(x: f64) -> f64 {
    if Q == TAN {
        return tan_near(x);
    }
    let p = parts(x);
    let n = p.n.wrapping_add(Q);
    let v = if n & 1 == 0 { p.r - p.ts } else { p.w + p.tc };
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

/// `tan x` for `|x| <= 2^20`: `sin r / cos r` (even `k`) or `-cos r / sin r` (odd), each
/// operand in two parts (its last rounding's error, by a fast two-sum: `|r| > |ts|` and
/// `|w| > |tc|`), divided by `expm1_f64`'s `quotient` and rounded once. No branch.
#[inline(always)]
fn tan_near(x: f64) -> f64 {
    let p = parts(x);
    let (s, c) = (p.r - p.ts, p.w + p.tc);
    let (s_lo, c_lo) = ((p.r - s) - p.ts, p.tc - (c - p.w));
    let odd = p.n & 1 != 0;
    let (a, a_lo, b, b_lo) = if odd {
        (c, c_lo, s, s_lo)
    } else {
        (s, s_lo, c, c_lo)
    };
    let (q, q_lo) = quotient(a, a_lo, b, b_lo);
    let t = f64::from_bits((q + q_lo).to_bits() ^ ((p.n & 1) << 63));
    // Below 2^-27, `tan x` rounds to `x` (and `-0` stays `-0`).
    if x.abs() < TINY { x } else { t }
}

/// `out[i] = sin_f64(xs[i])` for every `i` below the shorter of the two lengths.
pub(crate) fn sin_f64_into(xs: &[f64], out: &mut [MaybeUninit<f64>]) {
    into::<0>(xs, out)
}

/// `out[i] = cos_f64(xs[i])` for every `i` below the shorter of the two lengths.
pub(crate) fn cos_f64_into(xs: &[f64], out: &mut [MaybeUninit<f64>]) {
    into::<1>(xs, out)
}

/// `out[i] = tan_f64(xs[i])` for every `i` below the shorter of the two lengths.
pub(crate) fn tan_f64_into(xs: &[f64], out: &mut [MaybeUninit<f64>]) {
    into::<TAN>(xs, out)
}

/// Elements per block of the written-out loops: the block is still in L1 when `fix_far`
/// reads it again.
#[cfg(target_arch = "x86_64")]
const BLOCK: usize = 1024;

/// `out[i] = sin(xs[i] + Q pi/2)` (`sin_f64`, `cos_f64`; `tan_f64` for `TAN`) for every `i`
/// below the shorter length: `fast` in written-out AVX-512 or AVX2 lanes over each block,
/// then the block's far elements one by one. Without AVX2 (or off x86-64), the compiler's
/// loop over `fast`.
///
/// Written out because the compiler's loops fell short: in AVX-512 it kept most of `fast`
/// scalar (7.5 ns an element against 2.2 for its AVX2 loop, one thread of an Intel guest),
/// and its AVX2 loop lost its vectorisation when compiled beside another instance of it
/// (10 ns an element).
#[inline(always)]
fn into<const Q: u64>(xs: &[f64], out: &mut [MaybeUninit<f64>]) {
    #[cfg(target_arch = "x86_64")]
    {
        type Run = unsafe fn(*const f64, *mut f64, usize);
        let run: Option<Run> = if super::simd::has_avx512() {
            Some(x86::avx512_run::<Q>)
        } else if super::simd::has_avx2_fma() {
            Some(x86::avx2_run::<Q>)
        } else {
            None
        };
        if let Some(run) = run {
            for (xs, out) in xs.chunks(BLOCK).zip(out.chunks_mut(BLOCK)) {
                let n = xs.len().min(out.len());
                // SAFETY: `run` is the loop for a feature the processor has; `xs` holds `n`
                // readable elements and `out` `n` writable ones, apart.
                unsafe { run(xs.as_ptr(), out.as_mut_ptr().cast(), n) };
                super::simd::wide(|| super::simd::fix_far(&xs[..n], &mut out[..n], near, far::<Q>));
            }
            return;
        }
    }
    super::simd::map_near_far_in::<super::simd::Avx2, f64>(xs, out, fast::<Q>, near, far::<Q>)
}

/// `fast`'s operations, in its order, on 8 lanes (AVX-512) or twice 4 (AVX2); the lanes
/// `near` refuses hold garbage, which the caller replaces.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{C, PIO2_1, PIO2_2, PIO2_3, PIO2_3T, S, SHIFT, TAN, TINY};
    use crate::backends::host::expm1_f64::x86::quotient_lanes;
    use crate::backends::host::lanes::{v4, v8};
    use crate::backends::host::simd::by_eights;
    use std::arch::x86_64::*;
    use std::f64::consts::FRAC_2_PI;

    /// `parts` of one vector of f64 lanes, `$v` naming the width's operations:
    /// `(n, r, ts, w, tc)`.
    macro_rules! parts_lanes {
        ($v:ident, $x:expr) => {{
            use $v::*;
            let x = $x;
            // `-a`, exactly (a sign flip, as the scalar negation).
            let neg = |a| as_float(xori(as_int(a), seti(1 << 63)));
            let kd = add(mul(x, set(FRAC_2_PI)), set(SHIFT));
            let k = sub(kd, set(SHIFT));
            let (p2, p3) = (mul(k, set(PIO2_2)), mul(k, set(PIO2_3)));
            let r0 = sub(x, mul(k, set(PIO2_1)));
            let r1 = sub(r0, p2);
            let e1 = two_sum_err(r0, neg(p2), r1);
            let r2 = sub(r1, p3);
            let e2 = two_sum_err(r1, neg(p3), r2);
            let tail = sub(add(e1, e2), mul(k, set(PIO2_3T)));
            let r = add(r2, tail);
            let y = sub(tail, sub(r, r2));
            let z = mul(r, r);
            let v = mul(z, r);
            let horner = |c: &[f64]| {
                let mut p = set(c[c.len() - 1]);
                for &ci in c[..c.len() - 1].iter().rev() {
                    p = add(set(ci), mul(z, p));
                }
                p
            };
            let ps = horner(&S[1..]);
            let ts = sub(
                sub(mul(z, sub(mul(set(0.5), y), mul(v, ps))), y),
                mul(v, set(S[0])),
            );
            let pc = mul(z, horner(&C));
            let hz = mul(set(0.5), z);
            let w = sub(set(1.0), hz);
            let tc = add(sub(sub(set(1.0), w), hz), sub(mul(z, pc), mul(r, y)));
            (as_int(kd), r, ts, w, tc)
        }};
    }

    /// `fast::<$q>` of one vector (`$q` 0 or 1).
    macro_rules! fast_lanes {
        ($v:ident, $x:expr, $q:expr) => {{
            use $v::*;
            let x = $x;
            let (n, r, ts, w, tc) = parts_lanes!($v, x);
            let n = addi(n, seti($q));
            let v = select_odd(n, sub(r, ts), add(w, tc));
            let abs = as_float(andi(as_int(x), seti(!(1 << 63))));
            let v = select_lt(abs, set(TINY), if $q == 0 { x } else { set(1.0) }, v);
            as_float(xori(as_int(v), sll::<62>(andi(n, seti(2)))))
        }};
    }

    /// `tan_near` of one vector.
    macro_rules! tan_lanes {
        ($v:ident, $x:expr) => {{
            use $v::*;
            let x = $x;
            let (n, r, ts, w, tc) = parts_lanes!($v, x);
            let (s, c) = (sub(r, ts), add(w, tc));
            let (s_lo, c_lo) = (sub(sub(r, s), ts), sub(tc, sub(c, w)));
            let (a, a_lo) = (select_odd(n, s, c), select_odd(n, s_lo, c_lo));
            let (b, b_lo) = (select_odd(n, c, s), select_odd(n, c_lo, s_lo));
            let (q, q_lo) = quotient_lanes!($v, a, a_lo, b, b_lo);
            let t = as_float(xori(as_int(add(q, q_lo)), sll::<63>(andi(n, seti(1)))));
            let abs = as_float(andi(as_int(x), seti(!(1 << 63))));
            select_lt(abs, set(TINY), x, t)
        }};
    }

    /// `fast::<Q>` of 8 lanes.
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    fn lanes8<const Q: u64>(x: __m512d) -> __m512d {
        if Q == TAN {
            return tan_lanes!(v8, x);
        }
        fast_lanes!(v8, x, Q)
    }

    /// `fast::<Q>` of 4 lanes.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn lanes4<const Q: u64>(x: __m256d) -> __m256d {
        if Q == TAN {
            return tan_lanes!(v4, x);
        }
        fast_lanes!(v4, x, Q)
    }

    /// # Safety
    /// The processor must have AVX-512F, AVX2 and FMA; `src` readable and `dst` writable
    /// for `n` elements, apart.
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(super) unsafe fn avx512_run<const Q: u64>(src: *const f64, dst: *mut f64, n: usize) {
        // SAFETY: the pointers are the caller's; each block loads its 8 before storing them.
        unsafe {
            by_eights(src, dst, n, 0.0, |s, d| {
                _mm512_storeu_pd(d, lanes8::<Q>(_mm512_loadu_pd(s)))
            })
        }
    }

    /// # Safety
    /// The processor must have AVX2 and FMA; `src` readable and `dst` writable for `n`
    /// elements, apart.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn avx2_run<const Q: u64>(src: *const f64, dst: *mut f64, n: usize) {
        // SAFETY: the pointers are the caller's; each block loads its 8 before storing them.
        unsafe {
            by_eights(src, dst, n, 0.0, |s, d| {
                for h in [0, 4] {
                    _mm256_storeu_pd(d.add(h), lanes4::<Q>(_mm256_loadu_pd(s.add(h))))
                }
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{TAN, cos_f64, cos_f64_into, sin_f64, sin_f64_into, tan_f64, tan_f64_into};
    use crate::backends::host::dd_reference::uniform;
    use crate::backends::host::simd::Widest;
    use crate::backends::host::simd::float_checks::{check_near_far, spread_f64, ulps};

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
        use super::{fast, near};
        use crate::Array;
        let xs = arguments();
        // The slice loop (the written-out lanes this processor runs, then the far elements
        // one by one), from every start and at every length of a block's tail; the
        // compiler's loop over `fast` (what a processor without AVX2 runs) in AVX-512 lanes
        // where there are some; the backend's kernels.
        check_near_far::<Widest, f64>(&xs, sin_f64, sin_f64_into, near, fast::<0>, Array::sin);
        check_near_far::<Widest, f64>(&xs, cos_f64, cos_f64_into, near, fast::<1>, Array::cos);
        check_near_far::<Widest, f64>(&xs, tan_f64, tan_f64_into, near, fast::<TAN>, Array::tan);
    }

    /// Both written-out loops (the AVX2 one too, which a processor with AVX-512 does not
    /// run), at every length of a run's tail, against the scalar function where `fast` runs.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn each_written_out_loop_gives_the_bits_of_the_scalar_function() {
        use super::x86::{avx2_run, avx512_run};
        use crate::backends::host::simd::{has_avx2_fma, has_avx512};
        type Run = unsafe fn(*const f64, *mut f64, usize);
        let xs: Vec<f64> = arguments()
            .into_iter()
            .filter(|&x| super::near(x))
            .collect();
        let check = |run: Run, f: fn(f64) -> f64| {
            for len in [xs.len(), 1, 7, 8, 9, 13] {
                let mut out = vec![0.0; len];
                // SAFETY: the caller checked the processor's features; `xs` holds at least
                // `len` elements and `out` `len`, apart.
                unsafe { run(xs.as_ptr(), out.as_mut_ptr(), len) };
                for (i, (&x, &o)) in xs.iter().zip(&out).enumerate() {
                    assert_eq!(o.to_bits(), f(x).to_bits(), "element {i} of {len}: {x:e}");
                }
            }
        };
        let mut ran = 0;
        if has_avx512() {
            check(avx512_run::<0>, sin_f64);
            check(avx512_run::<1>, cos_f64);
            check(avx512_run::<TAN>, tan_f64);
            ran += 1;
        }
        if has_avx2_fma() {
            check(avx2_run::<0>, sin_f64);
            check(avx2_run::<1>, cos_f64);
            check(avx2_run::<TAN>, tan_f64);
            ran += 1;
        }
        eprintln!("{ran} written-out loops checked");
    }

    #[test]
    fn edges_and_symmetries_are_those_of_the_c_library() {
        for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert!(sin_f64(x).is_nan() && cos_f64(x).is_nan(), "{x}");
            assert!(tan_f64(x).is_nan(), "{x}");
        }
        assert_eq!(tan_f64(0.0).to_bits(), 0);
        assert_eq!(tan_f64(-0.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(sin_f64(0.0).to_bits(), 0);
        assert_eq!(sin_f64(-0.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!((cos_f64(0.0), cos_f64(-0.0)), (1.0, 1.0));
        for x in [1e-10, 1e-300, f64::MIN_POSITIVE, f64::from_bits(1)] {
            assert_eq!((sin_f64(x), sin_f64(-x), cos_f64(x)), (x, -x, 1.0));
            assert_eq!((tan_f64(x), tan_f64(-x)), (x, -x));
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
            assert_eq!(tan_f64(-x).to_bits(), (-tan_f64(x)).to_bits(), "{x}");
        }
    }

    #[test]
    fn within_an_ulp_of_the_c_library_and_mostly_its_bits() {
        // glibc's `sin`, `cos` and `tan` are correctly rounded but for rare cases (its `tan`
        // 0.56 ulp at worst on the sample below). fdlibm's kernels are within 1 ulp (0.71 at
        // worst on 400 of the results that differ here, at 50 digits), and 2.3 % of these
        // results differ from glibc's; `tan` 0.88 at worst on 3,000 that differ (at 60
        // digits), and 3.0 % differ. A wrong part of pi/2 or a lost term of `r_lo` shows as
        // results many ulps off near the multiples of pi/2, or as many more differences.
        let near_multiples = (1..200_000).map(|i| {
            let m = f64::from(i) * std::f64::consts::FRAC_PI_2;
            f64::from_bits(m.to_bits() + (i as u64 % 7) - 3)
        });
        let (mut n, mut differ) = (0usize, 0usize);
        for x in uniform(300_000, -1e6, 1e6, 7)
            .chain(uniform(300_000, -4.0, 4.0, 8))
            .chain(near_multiples)
        {
            let pairs = [
                (sin_f64(x), x.sin()),
                (cos_f64(x), x.cos()),
                (tan_f64(x), x.tan()),
            ];
            for (got, want) in pairs {
                assert!(ulps(got, want) <= 1, "{x:e}: {got:e}, libm {want:e}");
                differ += usize::from(got != want);
                n += 1;
            }
        }
        assert!(differ * 25 < n, "{differ} of {n} differ from the C library");
    }
}
