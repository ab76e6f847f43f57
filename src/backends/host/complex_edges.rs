//! Complex functions at infinities and NaNs, as C99's Annex G (and the array API, which
//! follows it) defines them. num-complex computes finite inputs well but gives NaN or the
//! wrong infinity at these edges; each function here answers the edge cases and returns
//! `None` for everything else.
//!
//! Each table is written for `x >= 0` (where the function is odd or even) and `y >= 0`; the
//! other quadrants come from `f(conj z) = conj f(z)` and the parity.

use num_complex::Complex64 as C;
use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, PI};

const NAN: f64 = f64::NAN;
const INF: f64 = f64::INFINITY;

fn c(re: f64, im: f64) -> C {
    C::new(re, im)
}

/// Whether `z` is an edge case: a part infinite or NaN.
fn edge(z: C) -> bool {
    !(z.re.is_finite() && z.im.is_finite())
}

/// Runs `f` on `z` moved to the upper half plane (`y >= 0` by its sign bit) and conjugates
/// the answer back: `f(conj z) = conj f(z)`.
fn upper(z: C, f: impl Fn(f64, f64) -> C) -> C {
    if z.im.is_sign_negative() {
        f(z.re, -z.im).conj()
    } else {
        f(z.re, z.im)
    }
}

/// Runs `f` on `z` moved to `x >= 0` and `y >= 0` for an odd function (`f(-z) = -f(z)`).
fn odd(z: C, f: impl Fn(f64, f64) -> C) -> C {
    if z.re.is_sign_negative() && !z.re.is_nan() {
        -upper(-z, &f)
    } else {
        upper(z, f)
    }
}

/// The square root (Annex G.6.4.2).
pub fn sqrt(z: C) -> Option<C> {
    edge(z).then(|| {
        upper(z, |x, y| {
            if y == INF {
                c(INF, INF)
            } else if x == -INF {
                if y.is_nan() { c(NAN, INF) } else { c(0.0, INF) }
            } else if x == INF {
                if y.is_nan() { c(INF, NAN) } else { c(INF, 0.0) }
            } else {
                c(NAN, NAN)
            }
        })
    })
}

/// The table sinh and cosh share for `x >= 0`, `y >= 0` (G.6.2.4 and G.6.2.5): they differ
/// only on the imaginary axis, where sinh gives `±0 + iNaN` and cosh `NaN ± i0`.
fn sinh_cosh(x: f64, y: f64, on_axis: C) -> C {
    if x == 0.0 {
        on_axis
    } else if x.is_finite() {
        c(NAN, NAN)
    } else if x == INF {
        if y == 0.0 {
            c(INF, 0.0)
        } else if y.is_finite() {
            c(INF * y.cos(), INF * y.sin())
        } else {
            c(INF, NAN)
        }
    } else if y == 0.0 {
        c(NAN, 0.0)
    } else {
        c(NAN, NAN)
    }
}

/// The hyperbolic sine (G.6.2.5): odd.
pub fn sinh(z: C) -> Option<C> {
    edge(z).then(|| odd(z, |x, y| sinh_cosh(x, y, c(0.0, NAN))))
}

/// The hyperbolic cosine (G.6.2.4): even, so `x >= 0` by negating `z`.
pub fn cosh(z: C) -> Option<C> {
    edge(z).then(|| {
        let z = if z.re.is_sign_negative() && !z.re.is_nan() {
            -z
        } else {
            z
        };
        upper(z, |x, y| sinh_cosh(x, y, c(NAN, 0.0)))
    })
}

/// The hyperbolic tangent (G.6.2.6, with C23's `tanh(+0 + i∞) = +0 + iNaN`, which the array
/// API takes).
pub fn tanh(z: C) -> Option<C> {
    edge(z).then(|| {
        odd(z, |x, y| {
            if x == INF {
                c(
                    1.0,
                    if y.is_finite() {
                        // The sign of sin(2y), from sin(y) cos(y): 2y overflows for the
                        // largest y (FreeBSD's ctanh, which NumPy uses, does the same).
                        (y.sin() * y.cos()).signum() * 0.0
                    } else {
                        0.0
                    },
                )
            } else if x == 0.0 {
                c(0.0, NAN)
            } else if x.is_nan() && y == 0.0 {
                c(NAN, 0.0)
            } else {
                c(NAN, NAN)
            }
        })
    })
}

/// The inverse hyperbolic sine (G.6.2.2).
pub fn asinh(z: C) -> Option<C> {
    edge(z).then(|| {
        if z.re.is_nan() {
            return if z.im == 0.0 {
                c(NAN, z.im)
            } else if z.im.is_infinite() {
                c(INF, NAN)
            } else {
                c(NAN, NAN)
            };
        }
        odd(z, |x, y| {
            if x == INF {
                if y.is_nan() {
                    c(INF, NAN)
                } else if y == INF {
                    c(INF, FRAC_PI_4)
                } else {
                    c(INF, 0.0)
                }
            } else if y == INF {
                c(INF, FRAC_PI_2)
            } else {
                c(NAN, NAN)
            }
        })
    })
}

/// The inverse hyperbolic tangent (G.6.2.3). Also `atanh(+0 + iNaN) = +0 + iNaN`.
pub fn atanh(z: C) -> Option<C> {
    edge(z).then(|| {
        if z.re.is_nan() {
            return if z.im.is_infinite() {
                c(0.0, FRAC_PI_2.copysign(z.im))
            } else {
                c(NAN, NAN)
            };
        }
        odd(z, |x, y| {
            if x == INF {
                c(0.0, if y.is_nan() { NAN } else { FRAC_PI_2 })
            } else if y == INF {
                c(0.0, FRAC_PI_2)
            } else if x == 0.0 {
                c(0.0, NAN)
            } else {
                c(NAN, NAN)
            }
        })
    })
}

/// The inverse hyperbolic cosine (G.6.2.1).
pub fn acosh(z: C) -> Option<C> {
    edge(z).then(|| {
        upper(z, |x, y| {
            if x.is_nan() {
                if y == INF { c(INF, NAN) } else { c(NAN, NAN) }
            } else if y.is_nan() {
                if x.is_infinite() {
                    c(INF, NAN)
                } else if x == 0.0 {
                    c(NAN, FRAC_PI_2)
                } else {
                    c(NAN, NAN)
                }
            } else if y == INF {
                if x == INF {
                    c(INF, FRAC_PI_4)
                } else if x == -INF {
                    c(INF, 3.0 * FRAC_PI_4)
                } else {
                    c(INF, FRAC_PI_2)
                }
            } else if x == INF {
                c(INF, 0.0)
            } else {
                c(INF, PI)
            }
        })
    })
}

/// The inverse cosine (G.6.1.1).
pub fn acos(z: C) -> Option<C> {
    edge(z).then(|| {
        upper(z, |x, y| {
            if x.is_nan() {
                if y == INF { c(NAN, -INF) } else { c(NAN, NAN) }
            } else if y.is_nan() {
                if x.is_infinite() {
                    c(NAN, INF)
                } else if x == 0.0 {
                    c(FRAC_PI_2, NAN)
                } else {
                    c(NAN, NAN)
                }
            } else if y == INF {
                if x == INF {
                    c(FRAC_PI_4, -INF)
                } else if x == -INF {
                    c(3.0 * FRAC_PI_4, -INF)
                } else {
                    c(FRAC_PI_2, -INF)
                }
            } else if x == INF {
                c(0.0, -INF)
            } else {
                c(PI, -INF)
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(a: C, b: C) -> bool {
        let eq =
            |p: f64, q: f64| (p.is_nan() && q.is_nan()) || (p == q && p.signum() == q.signum());
        eq(a.re, b.re) && eq(a.im, b.im)
    }

    #[test]
    fn annex_g_tables_and_their_symmetries() {
        type Edge = fn(C) -> Option<C>;
        let cases: [(Edge, C, C); 14] = [
            (sqrt, c(INF, NAN), c(INF, NAN)),
            (sqrt, c(-INF, 1.0), c(0.0, INF)),
            (sqrt, c(-INF, -1.0), c(0.0, -INF)),
            (sinh, c(INF, 0.0), c(INF, 0.0)),
            (sinh, c(-INF, -0.0), c(-INF, -0.0)),
            (cosh, c(0.0, INF), c(NAN, 0.0)),
            (tanh, c(INF, 1.0), c(1.0, 0.0)),
            (tanh, c(-INF, 1.0), c(-1.0, 0.0)),
            // C99's `1 + i0 sin(2y)`, as NumPy and PyTorch give it (the array API writes
            // `1 + 0j` for every y > 0).
            (tanh, c(INF, 2.0), c(1.0, -0.0)),
            (tanh, c(INF, f64::MAX), c(1.0, -0.0)),
            (asinh, c(INF, INF), c(INF, FRAC_PI_4)),
            (atanh, c(NAN, -INF), c(0.0, -FRAC_PI_2)),
            (acosh, c(-INF, 1.0), c(INF, PI)),
            (acos, c(INF, -1.0), c(0.0, INF)),
        ];
        for (f, z, want) in cases {
            let got = f(z).expect("an edge case");
            assert!(same(got, want), "{z} -> {got}, want {want}");
        }
        assert!(
            sqrt(c(4.0, 0.0)).is_none(),
            "finite inputs are num-complex's"
        );
    }
}
