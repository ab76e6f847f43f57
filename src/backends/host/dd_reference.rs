//! Test references in double-double arithmetic (an unevaluated sum `hi + lo`, ~2^-104
//! relative): `e^x`, `tanh x` and `ln x` to ~2^-98, far below the half ulp the float64 functions are
//! measured against, and the argument generator their tests share.

/// `n` arguments from a fixed generator: uniform over `[lo, hi)`.
pub(crate) fn uniform(n: usize, lo: f64, hi: f64, seed: u64) -> impl Iterator<Item = f64> {
    let mut s = seed;
    (0..n).map(move |_| {
        s = s
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        lo + (hi - lo) * ((s >> 11) as f64 / (1u64 << 53) as f64)
    })
}

/// `a + b` as `s + e`, exactly, where `|a| >= |b|` or `a == 0`.
fn fast_two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    (s, b - (s - a))
}

/// Double-double arithmetic (an unevaluated sum `hi + lo`, ~2^-104 relative).
pub(crate) fn dd_add(a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
    let s = a.0 + b.0;
    let v = s - a.0;
    let e = (a.0 - (s - v)) + (b.0 - v);
    fast_two_sum(s, e + a.1 + b.1)
}

pub(crate) fn dd_mul(a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
    let p = a.0 * b.0;
    fast_two_sum(p, a.0.mul_add(b.0, -p) + (a.0 * b.1 + a.1 * b.0))
}

pub(crate) fn dd_div(a: (f64, f64), d: f64) -> (f64, f64) {
    let q = a.0 / d;
    fast_two_sum(q, ((-q).mul_add(d, a.0) + a.1) / d)
}

/// `e^x = (hi + lo) 2^k`, to ~2^-98 relative: `x = k ln2 + r` with `ln 2` to 160 bits,
/// then 28 terms of `e^r`'s series (`|r| <= 0.35`) by Horner's rule.
pub(crate) fn exp_reference(x: f64) -> ((f64, f64), i32) {
    const LN2: [f64; 3] = [
        f64::from_bits(0x3fe6_2e42_fefa_39ef),
        f64::from_bits(0x3c7a_bc9e_3b39_803f),
        f64::from_bits(0x3907_b57a_079a_1934),
    ];
    let k = (x * std::f64::consts::LOG2_E).round();
    let kl = dd_mul((k, 0.0), (LN2[0], LN2[1]));
    let r = dd_add(dd_add((x, 0.0), (-kl.0, -kl.1)), (-k * LN2[2], 0.0));
    let mut p = (1.0, 0.0);
    for n in (1..=28).rev() {
        p = dd_add((1.0, 0.0), dd_div(dd_mul(r, p), f64::from(n)));
    }
    (p, k as i32)
}

/// `a / b` in double-double: a quotient, then the quotient of its remainder.
pub(crate) fn dd_div2(a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
    let q1 = a.0 / b.0;
    let p = dd_mul(b, (q1, 0.0));
    let r = dd_add(a, (-p.0, -p.1));
    let q2 = r.0 / b.0;
    let p = dd_mul(b, (q2, 0.0));
    let r = dd_add(r, (-p.0, -p.1));
    dd_add(dd_add((q1, 0.0), (q2, 0.0)), (r.0 / b.0, 0.0))
}

/// `tanh |x|` as `hi + lo`, to ~2^-98 relative for `2^-27 <= |x| <= 22`: `m / (m + 2)` with
/// `m = e^(2|x|) - 1`.
pub(crate) fn tanh_reference(x: f64) -> (f64, f64) {
    let ((hi, lo), k) = exp_reference(2.0 * x.abs());
    let e = (hi * 2f64.powi(k), lo * 2f64.powi(k));
    let m = dd_add(e, (-1.0, 0.0));
    dd_div2(m, dd_add(m, (2.0, 0.0)))
}

/// How far `got` lies from the exact `hi + lo` (same sign, within a few ulps), in ulps of
/// `got`'s binade.
pub(crate) fn ulp_error(got: f64, (hi, lo): (f64, f64)) -> f64 {
    let ulp = f64::from_bits(got.to_bits() & 0x7ff0_0000_0000_0000) * f64::EPSILON;
    ((got - hi) - lo).abs() / ulp
}

/// `ln x` as `hi + lo`, to ~2^-100 relative for positive finite `x` (subnormals too): the C
/// library's `ln x` corrected by one Newton step on `e^y = x`, in double-double.
pub(crate) fn ln_reference(x: f64) -> (f64, f64) {
    // Subnormals scaled into the normal range first (ln 2^60 added back).
    let (x, add) = if x < f64::MIN_POSITIVE {
        (x * 2f64.powi(60), -60.0)
    } else {
        (x, 0.0)
    };
    let y0 = x.ln();
    let ((hi, lo), k) = exp_reference(y0);
    // `x 2^-k - e^(y0 - k ln2)`, each scaling exact.
    let xs = x * 2f64.powi(-k / 2) * 2f64.powi(k / 2 - k);
    let d = dd_div(dd_add((xs, 0.0), (-hi, -lo)), hi);
    let y = dd_add((y0, 0.0), d);
    let l2 = dd_mul(
        (add, 0.0),
        (
            f64::from_bits(0x3fe6_2e42_fefa_39ef),
            f64::from_bits(0x3c7a_bc9e_3b39_803f),
        ),
    );
    dd_add(y, l2)
}

/// The C library's (glibc's) float64 `asinh`, `acosh` and `atanh`, as Rust functions: Rust's
/// `f64::asinh`, `acosh` and `atanh` are formulas of its own over the C library's `ln` and
/// `log1p` (its `f64::ln_1p`, `exp_m1`, `sinh` and `cosh` are the C library's).
pub(crate) mod glibc {
    mod c {
        unsafe extern "C" {
            pub(super) safe fn asinh(x: f64) -> f64;
            pub(super) safe fn acosh(x: f64) -> f64;
            pub(super) safe fn atanh(x: f64) -> f64;
        }
    }
    pub(crate) fn asinh(x: f64) -> f64 {
        c::asinh(x)
    }
    pub(crate) fn acosh(x: f64) -> f64 {
        c::acosh(x)
    }
    pub(crate) fn atanh(x: f64) -> f64 {
        c::atanh(x)
    }
}
