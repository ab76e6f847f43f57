//! float32 `log1p`, `expm1`, `sinh`, `cosh`, `asinh`, `acosh` and `atanh` through float64
//! vector kernels (`logf::ln_wide`, `exp_f64`): each float32 is widened, a float64 argument
//! made from it exactly or nearly so (`pre`), the kernel run over a block of those, and the
//! result finished in float64 and rounded once to float32 (`post`).
//!
//! Why: these called the C library per element. On the 2-core AMD EPYC (AVX-512) of
//! `docs/benchmarks.md`, from Python on 1M float32s, `log1p` took 5.5 ms and `expm1` 6.6 ms
//! against NumPy's 0.5 ms (its AVX-512 loops), 0.07-0.10x; `sinh` 0.06x.
//!
//! Accuracy. The kernels are within 2.06 (`ln_wide`, relatively ~2^-51) and 0.517 (`exp`)
//! ulp of float64, and each `pre`/`post` below adds at most a few float64 roundings,
//! relatively 2^-40 or less of the result on the paths that use them (the bounds are at each
//! function). A float32 is 2^29 times coarser, so the one rounding to float32 is correct
//! except where the exact value lies within ~2^-40 (relatively) of a halfway point between
//! two float32s: the tests find the same bits as glibc's float64 function rounded to float32
//! on every 4099th float32 (glibc's own `asinh`, `acosh` and `atanh`, not Rust's `f64::asinh`
//! and the others, which are formulas of Rust's own). On every 5th (859M) `asinh`, `acosh`
//! and `atanh` gave the bits of Rust's `f64` functions everywhere (a run of the twenty-first
//! sitting) and `log1p` glibc's everywhere but at 8.472636: there the exact value lies 2^-55
//! below a halfway point, glibc's float64 `log1p` rounds to the halfway point itself and
//! then to the even float32 above; this module's result is the one below, correctly rounded.
//! (The `ln` kernel was float64's `log_f64`, to 0.502 ulp with three tables of 128 read by
//! gathers: `log1p` took 3.3 ns an element against 1.5 now, one thread on the AMD EPYC.)
//!
//! Where cancellation would cost the relative accuracy (arguments near 0), a short Taylor
//! polynomial takes over; for `log1p` below 2^-29 the float32 argument itself is the answer.
//!
//! Every path gives the same bits: the slice loop and the scalar function perform the same
//! IEEE operations (the kernels' own paths agree, see their files), with no fused
//! multiply-add.

use super::exp_f64::{exp_f64, exp_f64_into};
use super::logf::{ln_wide, ln_wide_into};
use super::simd::wide;
use std::mem::MaybeUninit;

/// Elements per block: the widened arguments and the kernel's results (8 KiB each) stay in
/// L1. One thread, 1M float32s: `expm1` 1.6 ns an element in blocks of 512 or 1024, 1.85 in
/// blocks of 2048, ~2.5 in blocks of 256 (each block calls three loops).
const BLOCK: usize = 1024;

/// Below this magnitude `log1p x` is `x`: the next term is under 2^-30 of it, below half a
/// float32 ulp, and `1 + x` would no longer be exact.
const TINY: f32 = 1.0 / (1u64 << 29) as f32;

/// Which float64 kernel a function runs.
#[derive(Clone, Copy)]
enum Kernel {
    Ln,
    Exp,
}

/// One float32 function as `pre`, a kernel and `post`.
trait ViaF64 {
    const KERNEL: Kernel;
    /// The kernel's argument for `x`.
    fn pre(x: f32) -> f64;
    /// The result for `x`, given `p = pre(x)` and `k` the kernel's value at `p`.
    fn post(x: f32, p: f64, k: f64) -> f32;
}

/// The scalar function: what the slice loop computes for one element.
#[inline(always)]
fn scalar<F: ViaF64>(x: f32) -> f32 {
    let p = F::pre(x);
    let k = match F::KERNEL {
        Kernel::Ln => ln_wide(p),
        Kernel::Exp => exp_f64(p),
    };
    F::post(x, p, k)
}

/// `out[i] = scalar::<F>(xs[i])` for every `i` below the shorter length, block by block:
/// `pre` over the block (vectorised), the kernel's slice loop, then `post` (vectorised).
#[inline(always)]
fn slice<F: ViaF64>(xs: &[f32], out: &mut [MaybeUninit<f32>]) {
    let mut args = [0f64; BLOCK];
    let mut vals = [MaybeUninit::<f64>::uninit(); BLOCK];
    for (xs, out) in xs.chunks(BLOCK).zip(out.chunks_mut(BLOCK)) {
        let n = xs.len().min(out.len());
        let (args, vals) = (&mut args[..n], &mut vals[..n]);
        wide(
            #[inline(always)]
            || {
                for (p, &x) in args.iter_mut().zip(xs) {
                    *p = F::pre(x);
                }
            },
        );
        match F::KERNEL {
            Kernel::Ln => ln_wide_into(args, vals),
            Kernel::Exp => exp_f64_into(args, vals),
        }
        wide(
            #[inline(always)]
            || {
                for ((o, &x), (&p, k)) in out.iter_mut().zip(xs).zip(args.iter().zip(&*vals)) {
                    // SAFETY: the kernel wrote each of the block's `n` values.
                    o.write(F::post(x, p, unsafe { k.assume_init() }));
                }
            },
        );
    }
}

/// `x + x^3/6 + x^5/120 + x^7/5040`: `sinh` for `|x| < 2^-5`, where the next term is under
/// 2^-58 of the sum.
#[inline(always)]
fn sinh_series(x: f64) -> f64 {
    let x2 = x * x;
    x + x * x2 * (1.0 / 6.0 + x2 * (1.0 / 120.0 + x2 * (1.0 / 5040.0)))
}

/// Where `expm1`, `sinh`, `asinh` and `atanh` leave `exp`/`ln` for their series: at `2^-5` the
/// cancellation in `e - 1/e` (or `ln` of a sum near 1) costs at most ~2^-47 relatively.
const SERIES_BELOW: f64 = 1.0 / 32.0;

/// `log1p x = ln(1 + x)`. For `|x| >= 2^-29` the sum `1 + x` of a float32 and 1 is exact in
/// float64 (at most 53 bits from 1 down to `x`'s last bit), so the result is the kernel's,
/// rounded once; below, `x` (see `TINY`). `-1` gives `-inf`, below it NaN, from `ln`.
struct Log1p;

impl ViaF64 for Log1p {
    const KERNEL: Kernel = Kernel::Ln;
    #[inline(always)]
    fn pre(x: f32) -> f64 {
        1.0 + f64::from(x)
    }
    #[inline(always)]
    fn post(x: f32, _: f64, k: f64) -> f32 {
        if x.abs() < TINY { x } else { k as f32 }
    }
}

/// `expm1 x = e^x - 1`. For `|x| >= 2^-5`, `e^x - 1` in float64: the subtraction is exact
/// near 1 and the kernel's error (2^-52 of `e^x`) is at most 2^-47 of `e^x - 1`. Below, the
/// series to `x^8/8!` (the rest under 2^-58 of it). With the series below 2^-10 and four
/// terms, 4 of 613M float32s (every 7th) rounded the other way from glibc, all just above
/// 2^-10, where the kernel's error was 2^-43 of the result.
struct Expm1;

impl ViaF64 for Expm1 {
    const KERNEL: Kernel = Kernel::Exp;
    #[inline(always)]
    fn pre(x: f32) -> f64 {
        f64::from(x)
    }
    #[inline(always)]
    fn post(_: f32, p: f64, k: f64) -> f32 {
        // `p` times the rest, not `p` plus the rest: -0 + 0 would be +0.
        let c = [
            1.0 / 6.0,
            1.0 / 24.0,
            1.0 / 120.0,
            1.0 / 720.0,
            1.0 / 5040.0,
            1.0 / 40320.0,
        ];
        let tail = c[0] + p * (c[1] + p * (c[2] + p * (c[3] + p * (c[4] + p * c[5]))));
        let series = p * (1.0 + p * (0.5 + p * tail));
        (if p.abs() < SERIES_BELOW {
            series
        } else {
            k - 1.0
        }) as f32
    }
}

/// `cosh x = (e^|x| + e^-|x|) / 2`: a sum of two positive terms, no cancellation. Overflows
/// to infinity where the float32 result does (from |x| ~ 89.4).
struct Cosh;

impl ViaF64 for Cosh {
    const KERNEL: Kernel = Kernel::Exp;
    #[inline(always)]
    fn pre(x: f32) -> f64 {
        f64::from(x.abs())
    }
    #[inline(always)]
    fn post(_: f32, _: f64, e: f64) -> f32 {
        (0.5 * (e + 1.0 / e)) as f32
    }
}

/// `sinh x = sign(x) (e^|x| - e^-|x|) / 2`, the series below `SERIES_BELOW` (where the
/// difference would lose up to 2^-47 relatively; the series' first dropped term is under
/// 2^-58 of the sum).
struct Sinh;

impl ViaF64 for Sinh {
    const KERNEL: Kernel = Kernel::Exp;
    #[inline(always)]
    fn pre(x: f32) -> f64 {
        f64::from(x.abs())
    }
    #[inline(always)]
    fn post(x: f32, a: f64, e: f64) -> f32 {
        let v = if a < SERIES_BELOW {
            sinh_series(a)
        } else {
            0.5 * (e - 1.0 / e)
        };
        (v as f32).copysign(x)
    }
}

/// `asinh x = sign(x) ln(|x| + sqrt(x^2 + 1))`: `x^2` is exact in float64 (24-bit
/// significands), the sum of positive terms loses nothing. Near 0 the logarithm of a
/// number near 1 would have an absolute, not relative, error: the series
/// `x - x^3/6 + 3x^5/40 - ... - 945x^11/42240` below `SERIES_BELOW` (the first term dropped
/// is under 2^-65 of the sum).
struct Asinh;

impl ViaF64 for Asinh {
    const KERNEL: Kernel = Kernel::Ln;
    #[inline(always)]
    fn pre(x: f32) -> f64 {
        let a = f64::from(x.abs());
        a + (a * a + 1.0).sqrt()
    }
    #[inline(always)]
    fn post(x: f32, _: f64, k: f64) -> f32 {
        let a = f64::from(x.abs());
        let a2 = a * a;
        let tail =
            3.0 / 40.0 - a2 * (15.0 / 336.0 - a2 * (105.0 / 3456.0 - a2 * (945.0 / 42240.0)));
        let series = a - a * a2 * (1.0 / 6.0 - a2 * tail);
        let v = if a < SERIES_BELOW { series } else { k };
        (v as f32).copysign(x)
    }
}

/// `acosh x = ln(x + sqrt(x^2 - 1))` for `x >= 1` (NaN below). `x^2 - 1` is
/// exact for a float32 `x` near 1 (`2k 2^-23 + k^2 2^-46`), and `acosh x >= 2^-11` there, so
/// the kernel's absolute error (~2^-51) stays 2^-40 of the result.
struct Acosh;

impl ViaF64 for Acosh {
    const KERNEL: Kernel = Kernel::Ln;
    #[inline(always)]
    fn pre(x: f32) -> f64 {
        let x = f64::from(x);
        // Below 1 the sum would cancel to 0 (and `ln` give -inf) for large negative `x`.
        if x >= 1.0 {
            x + (x * x - 1.0).sqrt()
        } else {
            f64::NAN
        }
    }
    #[inline(always)]
    fn post(_: f32, _: f64, k: f64) -> f32 {
        k as f32
    }
}

/// `atanh x = sign(x) ln((1 + |x|) / (1 - |x|)) / 2`: both sums are exact in float64 for a
/// float32 above 2^-29; `1` gives infinity, beyond it NaN (a negative ratio). The series
/// `x + x^3/3 + ... + x^11/11` below `SERIES_BELOW` (the first term dropped under 2^-63 of
/// it). To `x^7/7`, where that term is 2^-43, one float32 of 613M (every 7th) rounded the
/// other way from glibc: 0.030195266.
struct Atanh;

impl ViaF64 for Atanh {
    const KERNEL: Kernel = Kernel::Ln;
    #[inline(always)]
    fn pre(x: f32) -> f64 {
        let a = f64::from(x.abs());
        (1.0 + a) / (1.0 - a)
    }
    #[inline(always)]
    fn post(x: f32, _: f64, k: f64) -> f32 {
        let a = f64::from(x.abs());
        let a2 = a * a;
        let tail = 1.0 / 5.0 + a2 * (1.0 / 7.0 + a2 * (1.0 / 9.0 + a2 * (1.0 / 11.0)));
        let series = a + a * a2 * (1.0 / 3.0 + a2 * tail);
        let v = if a < SERIES_BELOW { series } else { 0.5 * k };
        (v as f32).copysign(x)
    }
}

/// The slice loops `elementwise::unary` runs on contiguous float32s, and the scalar
/// functions of the strided path (`math`), which give the same bits.
macro_rules! entry_points {
    ($($f:ident, $into:ident, $t:ty;)*) => {$(
        pub(crate) fn $f(x: f32) -> f32 {
            scalar::<$t>(x)
        }
        pub(crate) fn $into(xs: &[f32], out: &mut [MaybeUninit<f32>]) {
            slice::<$t>(xs, out)
        }
    )*};
}

entry_points! {
    log1p_f32, log1p_f32_into, Log1p;
    expm1_f32, expm1_f32_into, Expm1;
    cosh_f32, cosh_f32_into, Cosh;
    sinh_f32, sinh_f32_into, Sinh;
    asinh_f32, asinh_f32_into, Asinh;
    acosh_f32, acosh_f32_into, Acosh;
    atanh_f32, atanh_f32_into, Atanh;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backends::host::dd_reference::glibc;
    use crate::backends::host::simd::float_checks::{
        check_array, check_slice_loop, every_4099th_f32, same, spread_f32,
    };

    type Case = (
        fn(f32) -> f32,
        fn(&[f32], &mut [MaybeUninit<f32>]),
        fn(f64) -> f64,
        fn(&crate::Array) -> crate::Result<crate::Array>,
        &'static str,
    );

    const CASES: [Case; 7] = [
        (
            log1p_f32,
            log1p_f32_into,
            f64::ln_1p,
            crate::Array::log1p,
            "log1p",
        ),
        (
            expm1_f32,
            expm1_f32_into,
            f64::exp_m1,
            crate::Array::expm1,
            "expm1",
        ),
        (
            cosh_f32,
            cosh_f32_into,
            f64::cosh,
            crate::Array::cosh,
            "cosh",
        ),
        (
            sinh_f32,
            sinh_f32_into,
            f64::sinh,
            crate::Array::sinh,
            "sinh",
        ),
        (
            asinh_f32,
            asinh_f32_into,
            glibc::asinh,
            crate::Array::asinh,
            "asinh",
        ),
        (
            acosh_f32,
            acosh_f32_into,
            glibc::acosh,
            crate::Array::acosh,
            "acosh",
        ),
        (
            atanh_f32,
            atanh_f32_into,
            glibc::atanh,
            crate::Array::atanh,
            "atanh",
        ),
    ];

    #[test]
    fn every_path_gives_the_bits_of_the_scalar_function() {
        let xs = spread_f32(&[-f32::NAN, 1.0, -1.0, 1e-9, -1e-9, 0.03, -0.03, 89.4, -89.4]);
        for (f, into, _, method, _) in CASES {
            let scalar: Vec<f32> = xs.iter().map(|&x| f(x)).collect();
            check_slice_loop(&xs, &scalar, into);
            check_array(&xs, &scalar, method);
        }
    }

    #[test]
    fn every_4099th_float32_gets_the_c_librarys_f64_function_rounded_once() {
        for (f, _, reference, _, name) in CASES {
            every_4099th_f32(|x| {
                let (got, want) = (f(x), reference(f64::from(x)) as f32);
                assert!(same(got, want), "{name}({x:e}) = {got:e}, not {want:e}");
            });
        }
        // Where shorter series rounded the other way (see `Expm1` and `Atanh`).
        for x in [1.184_707e-3f32, 1.263_590_9e-3, 1.377_671_4e-3] {
            assert_eq!(expm1_f32(x), f64::from(x).exp_m1() as f32);
        }
        assert_eq!(
            atanh_f32(3.019_526_6e-2),
            f64::from(3.019_526_6e-2f32).atanh() as f32
        );
    }

    #[test]
    fn edges_are_those_of_the_c_library() {
        let inf = f32::INFINITY;
        assert_eq!(log1p_f32(-1.0), -inf);
        assert!(log1p_f32(-1.5).is_nan());
        assert_eq!(log1p_f32(inf), inf);
        assert_eq!(expm1_f32(-inf), -1.0);
        assert_eq!(expm1_f32(inf), inf);
        assert_eq!(expm1_f32(89.0), inf);
        assert_eq!(cosh_f32(-inf), inf);
        assert_eq!(cosh_f32(0.0), 1.0);
        assert_eq!(sinh_f32(-inf), -inf);
        assert_eq!(sinh_f32(f32::MAX), inf);
        assert_eq!(asinh_f32(-inf), -inf);
        assert_eq!(acosh_f32(1.0), 0.0);
        assert!(acosh_f32(0.5).is_nan());
        assert_eq!(acosh_f32(inf), inf);
        assert_eq!(atanh_f32(1.0), inf);
        assert_eq!(atanh_f32(-1.0), -inf);
        assert!(atanh_f32(1.5).is_nan());
        // The odd functions keep the sign of zero; tiny arguments are their own value.
        for f in [log1p_f32, expm1_f32, sinh_f32, asinh_f32, atanh_f32] {
            assert_eq!(f(-0.0).to_bits(), (-0.0f32).to_bits());
            for x in [1e-10f32, f32::MIN_POSITIVE, f32::from_bits(1)] {
                assert_eq!(f(x), x);
                assert_eq!(f(-x), -x);
            }
        }
        for f in [
            log1p_f32, expm1_f32, cosh_f32, sinh_f32, asinh_f32, acosh_f32, atanh_f32,
        ] {
            assert!(f(f32::NAN).is_nan());
        }
    }
}
