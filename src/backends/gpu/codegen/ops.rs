//! The C expression of each op on each dtype, over compute values (`a`, `b`): the GPU
//! counterpart of `host/math.rs`, with the same semantics (wrapping integers, truncating
//! integer division with `x / 0 == 0`, NaN-propagating max/min, half floats in f32).
//! `None` means the op does not exist on that dtype, exactly where the CPU backend says so.

use super::types::{compute, int_limits, store, unsigned, unsigned_exact};
use crate::backends::{BinaryOp, ReduceOp, UnaryOp};
use crate::dtype::{DType, Kind};

/// `f` with the C math suffix of `dt` (`expf` for f32 and half floats, `exp` for f64).
fn math(dt: DType, f: &str) -> String {
    if dt == DType::F64 {
        f.to_string()
    } else {
        format!("{f}f")
    }
}

/// Wrapping integer arithmetic through the unsigned type.
fn wrap(dt: DType, a: &str, op: &str, b: &str) -> String {
    let (t, u) = (compute(dt), unsigned(dt));
    format!("(({t})(({u}){a} {op} ({u}){b}))")
}

/// `op(a)`, the output's compute type, or `None`.
pub(crate) fn unary(op: UnaryOp, dt: DType, a: &str) -> Option<String> {
    let k = dt.kind();
    Some(match op {
        UnaryOp::Neg => match k {
            Kind::Bool => return None,
            Kind::Int | Kind::UInt => wrap(dt, "0", "-", a),
            Kind::Float => format!("(-{a})"),
            Kind::Complex => format!("cx_neg({a})"),
        },
        UnaryOp::Abs => match k {
            Kind::Bool => return None,
            Kind::Int => format!("({a} < 0 ? {} : {a})", wrap(dt, "0", "-", a)),
            Kind::UInt => a.to_string(),
            Kind::Float => format!("{}({a})", math(dt, "fabs")),
            Kind::Complex => format!("cx_abs({a})"),
        },
        UnaryOp::LogicalNot => match k {
            Kind::Bool => format!("(!{a})"),
            _ => return None,
        },
        UnaryOp::BitwiseInvert => match k {
            Kind::Bool => format!("(!{a})"),
            Kind::Int | Kind::UInt => format!("(({})(~{a}))", compute(dt)),
            _ => return None,
        },
        UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Round => {
            // `rint` rounds half to even, as NumPy's `round`.
            let f = match op {
                UnaryOp::Floor => "floor",
                UnaryOp::Ceil => "ceil",
                _ => "rint",
            };
            match k {
                Kind::Bool => return None,
                Kind::Int | Kind::UInt => a.to_string(),
                Kind::Float => format!("{}({a})", math(dt, f)),
                Kind::Complex if op == UnaryOp::Round => {
                    let r = if dt == DType::Complex64 {
                        "rintf"
                    } else {
                        "rint"
                    };
                    format!("mk({r}({a}.re), {r}({a}.im), {a})")
                }
                Kind::Complex => return None,
            }
        }
        UnaryOp::Sign => {
            let t = compute(dt);
            match k {
                Kind::Bool => return None,
                Kind::Int => format!("(({t})(({a} > 0) - ({a} < 0)))"),
                Kind::UInt => format!("(({t})({a} > 0))"),
                // NaN is its own sign; ±0 gives +0.
                Kind::Float => {
                    format!("({a} > 0 ? ({t})1 : ({a} < 0 ? ({t})-1 : ({a} == 0 ? ({t})0 : {a})))")
                }
                Kind::Complex => format!("cx_sign({a})"),
            }
        }
        UnaryOp::Exp
        | UnaryOp::Log
        | UnaryOp::Sqrt
        | UnaryOp::Sin
        | UnaryOp::Cos
        | UnaryOp::Tan
        | UnaryOp::Tanh => {
            let f = match op {
                UnaryOp::Exp => "exp",
                UnaryOp::Log => "log",
                UnaryOp::Sqrt => "sqrt",
                UnaryOp::Sin => "sin",
                UnaryOp::Cos => "cos",
                UnaryOp::Tan => "tan",
                _ => "tanh",
            };
            match k {
                Kind::Float => format!("{}({a})", math(dt, f)),
                Kind::Complex => format!("cx_{f}({a})"),
                _ => return None,
            }
        }
        UnaryOp::Conj => match k {
            Kind::Complex => format!("mk({a}.re, -{a}.im, {a})"),
            _ => return None,
        },
        UnaryOp::Signbit => match k {
            Kind::Float => format!("(signbit({a}) != 0)"),
            _ => return None,
        },
        UnaryOp::Asin
        | UnaryOp::Acos
        | UnaryOp::Atan
        | UnaryOp::Sinh
        | UnaryOp::Cosh
        | UnaryOp::Asinh
        | UnaryOp::Acosh
        | UnaryOp::Atanh
        | UnaryOp::Expm1
        | UnaryOp::Log1p => match k {
            Kind::Float => format!("{}({a})", math(dt, op.name())),
            Kind::Complex => format!("cx_{}({a})", op.name()),
            _ => return None,
        },
    })
}

/// `op(a, b)` in the output's compute type (bool for comparisons), or `None`.
pub(crate) fn binary(op: BinaryOp, dt: DType, a: &str, b: &str) -> Option<String> {
    use BinaryOp::*;
    let k = dt.kind();
    let int = matches!(k, Kind::Int | Kind::UInt);
    Some(match op {
        Add | Sub | Mul => {
            let (sym, cx) = match op {
                Add => ("+", "cx_add"),
                Sub => ("-", "cx_sub"),
                _ => ("*", "cx_mul"),
            };
            match k {
                Kind::Bool => return None,
                Kind::Int | Kind::UInt => wrap(dt, a, sym, b),
                Kind::Float => format!("({a} {sym} {b})"),
                Kind::Complex => format!("{cx}({a}, {b})"),
            }
        }
        Div => match k {
            Kind::Bool => return None,
            Kind::Int | Kind::UInt => {
                let t = compute(dt);
                // MIN / -1 overflows: wrapping gives MIN (only i32 and i64 can reach it;
                // narrower types divide in `int`, and the cast back wraps).
                let min_guard = if matches!(dt, DType::I32 | DType::I64) {
                    format!("({a} == {} && {b} == ({t})-1) ? {a} : ", int_limits(dt).0)
                } else {
                    String::new()
                };
                format!("({b} == 0 ? ({t})0 : {min_guard}({t})({a} / {b}))")
            }
            Kind::Float => format!("({a} / {b})"),
            Kind::Complex => format!("cx_div({a}, {b})"),
        },
        Pow => match k {
            Kind::Bool => return None,
            Kind::Int | Kind::UInt => format!("ipow({a}, {b})"),
            Kind::Float => format!("{}({a}, {b})", math(dt, "pow")),
            Kind::Complex => format!("cx_pow({a}, {b})"),
        },
        Maximum | Minimum => {
            let max = op == Maximum;
            match k {
                Kind::Bool if max => format!("({a} || {b})"),
                Kind::Bool => format!("({a} && {b})"),
                _ if int => {
                    let c = if max { ">" } else { "<" };
                    format!("({a} {c} {b} ? {a} : {b})")
                }
                Kind::Float => extreme(max, a, b),
                _ => return None,
            }
        }
        Eq | Ne => {
            let eq = if k == Kind::Complex {
                format!("cx_eq({a}, {b})")
            } else {
                format!("({a} == {b})")
            };
            if op == Eq { eq } else { format!("(!{eq})") }
        }
        Lt | Le | Gt | Ge => {
            let c = match op {
                Lt => "<",
                Le => "<=",
                Gt => ">",
                _ => ">=",
            };
            match k {
                Kind::Complex => return None,
                _ => format!("({a} {c} {b})"),
            }
        }
        LogicalAnd | LogicalOr | LogicalXor => {
            let c = match op {
                LogicalAnd => "&&",
                LogicalOr => "||",
                _ => "!=",
            };
            match k {
                Kind::Bool => format!("({a} {c} {b})"),
                _ => return None,
            }
        }
        // Half floats compute in float: their nextafter steps their own bits.
        Nextafter => match dt {
            DType::F32 | DType::F64 => format!("{}({a}, {b})", math(dt, "nextafter")),
            DType::F16 => format!("nextafter_h16({a}, {b}, 0)"),
            DType::BF16 => format!("nextafter_h16({a}, {b}, 1)"),
            _ => return None,
        },
        Atan2 | Copysign | Hypot | Logaddexp => match k {
            Kind::Float => {
                let f = match op {
                    Atan2 => math(dt, "atan2"),
                    Copysign => math(dt, "copysign"),
                    Hypot => math(dt, "hypot"),
                    _ => format!("logaddexp_{}", if dt == DType::F64 { "d" } else { "f" }),
                };
                format!("{f}({a}, {b})")
            }
            _ => return None,
        },
        FloorDivide | Remainder => match k {
            Kind::Int | Kind::UInt => {
                let t = compute(dt);
                // Truncated quotient and remainder, then moved down where the signs differ
                // (never for unsigned types). MIN / -1 wraps to MIN, as on the CPU.
                let min_guard = if matches!(dt, DType::I32 | DType::I64) {
                    format!("({a} == {} && {b} == ({t})-1) ? ", int_limits(dt).0)
                } else {
                    "false ? ".to_string()
                };
                let (q, r) = (
                    format!("({min_guard}{a} : ({t})({a} / {b}))"),
                    format!("({min_guard}({t})0 : ({t})({a} % {b}))"),
                );
                let adjust = format!("({r} != 0 && (({r} < 0) != ({b} < 0)))");
                let v = if op == FloorDivide {
                    format!("({t})({q} - ({adjust} ? 1 : 0))")
                } else {
                    format!("({t})({r} + ({adjust} ? {b} : ({t})0))")
                };
                format!("({b} == 0 ? ({t})0 : {v})")
            }
            Kind::Float => {
                let f = if op == FloorDivide {
                    "floor_div"
                } else {
                    "rem"
                };
                let suffix = if dt == DType::F64 { "d" } else { "f" };
                format!("{f}_{suffix}({a}, {b})")
            }
            _ => return None,
        },
        BitwiseAnd | BitwiseOr | BitwiseXor => {
            let (c, l) = match op {
                BitwiseAnd => ("&", "&&"),
                BitwiseOr => ("|", "||"),
                _ => ("^", "!="),
            };
            match k {
                Kind::Bool => format!("({a} {l} {b})"),
                _ if int => format!("(({})({a} {c} {b}))", compute(dt)),
                _ => return None,
            }
        }
        LeftShift | RightShift if int => {
            // Narrow types compute in 32 bits (the store truncates), so the count is tested
            // against the compute width: counts outside it give 0 or the sign, as NumPy's.
            let (t, u) = (compute(dt), unsigned(dt));
            let w = if dt.size_in_bytes() == 8 { 64 } else { 32 };
            let fits = format!("(({u}){b} < {w})");
            if op == LeftShift {
                format!("({fits} ? ({t})(({u}){a} << ({u}){b}) : ({t})0)")
            } else {
                let sign = if k == Kind::Int {
                    format!("({a} < 0 ? ({t})-1 : ({t})0)")
                } else {
                    format!("({t})0")
                };
                format!("({fits} ? ({t})({a} >> ({u}){b}) : {sign})")
            }
        }
        LeftShift | RightShift => return None,
    })
}

/// NaN-propagating max or min of two floats.
fn extreme(max: bool, a: &str, b: &str) -> String {
    let c = if max { ">" } else { "<" };
    format!("(({a} {c} {b} || {a} != {a}) ? {a} : {b})")
}

/// The real part of compute value `a` of dtype `from`, as a `double` (casts go through it,
/// as the CPU backend's go through `Scalar::Float(f64)`).
fn as_double(from: DType, a: &str) -> String {
    match from.kind() {
        Kind::Bool => format!("({a} ? 1.0 : 0.0)"),
        Kind::Complex => format!("(double){a}.re"),
        _ => format!("(double){a}"),
    }
}

/// The stored element of dtype `to` for compute value `a` of dtype `from`: `Element::
/// from_scalar(a.to_scalar())` of the CPU backend, in C.
pub(crate) fn cast_store(from: DType, to: DType, a: &str) -> String {
    let (fk, tk) = (from.kind(), to.kind());
    match tk {
        Kind::Bool => match fk {
            Kind::Complex => format!("(u8)({a}.re != 0 || {a}.im != 0)"),
            _ => format!("(u8)({a} != 0)"),
        },
        Kind::Int | Kind::UInt => {
            let t = compute(to);
            match fk {
                Kind::Bool => format!("({t})({a} ? 1 : 0)"),
                // Two's-complement truncation, through the unsigned type of the target's width.
                Kind::Int | Kind::UInt => format!("({t})({})({a})", unsigned_exact(to)),
                Kind::Float | Kind::Complex => format!("sat_{t}({})", as_double(from, a)),
            }
        }
        Kind::Float => match to {
            // One rounding from the widest form: f64 and 64-bit integers round straight to
            // the half float, as `f16::from_f64` does.
            DType::F16 | DType::BF16 => {
                let (viaf, viad) = if to == DType::F16 {
                    ("f2h", "d2h")
                } else {
                    ("f2b", "d2b")
                };
                match from {
                    DType::F16 | DType::BF16 | DType::F32 => format!("{viaf}({a})"),
                    DType::Complex64 => format!("{viaf}({a}.re)"),
                    _ => format!("{viad}({})", as_double(from, a)),
                }
            }
            DType::F32 => match fk {
                Kind::Int | Kind::UInt => format!("(float){a}"),
                _ => format!("(float){}", as_double(from, a)),
            },
            _ => as_double(from, a),
        },
        Kind::Complex => {
            let (c, r) = if to == DType::Complex64 {
                ("c64", DType::F32)
            } else {
                ("c128", DType::F64)
            };
            let re = |v: &str, d: DType| cast_store(d, r, v);
            match fk {
                Kind::Complex => format!(
                    "mk({}, {}, {c}())",
                    re(&format!("{a}.re"), from.real_part()),
                    re(&format!("{a}.im"), from.real_part())
                ),
                _ => format!("mk({}, 0, {c}())", re(a, from)),
            }
        }
    }
}

/// The dtype a reduction of `input` accumulates in (and its partial results are stored in).
pub(crate) fn accumulator(input: DType) -> DType {
    match input {
        DType::F16 | DType::BF16 => DType::F32,
        d => d,
    }
}

/// The identity of `op` in accumulator type `acc`, or `None` where the op does not exist.
pub(crate) fn reduce_identity(op: ReduceOp, acc: DType) -> Option<String> {
    let t = compute(acc);
    let k = acc.kind();
    Some(match (op, k) {
        (ReduceOp::Sum | ReduceOp::Prod, Kind::Bool) => return None,
        (ReduceOp::Prod, Kind::Complex) => format!("mk(1, 0, {t}())"),
        (ReduceOp::Prod, _) => format!("({t})1"),
        (ReduceOp::Sum, Kind::Complex) => format!("mk(0, 0, {t}())"),
        (ReduceOp::Sum, _) => format!("({t})0"),
        (_, Kind::Complex) => return None,
        (ReduceOp::Max, Kind::Bool) => "false".into(),
        (ReduceOp::Min, Kind::Bool) => "true".into(),
        (ReduceOp::Max, Kind::Float) if acc == DType::F64 => "(-d_inf())".into(),
        (ReduceOp::Max, Kind::Float) => "(-f_inf())".into(),
        (ReduceOp::Min, Kind::Float) if acc == DType::F64 => "d_inf()".into(),
        (ReduceOp::Min, Kind::Float) => "f_inf()".into(),
        (ReduceOp::Max, _) => int_limits(acc).0.into(),
        (ReduceOp::Min, _) => int_limits(acc).1.into(),
    })
}

/// `op`'s combination of two accumulator values.
pub(crate) fn reduce_combine(op: ReduceOp, acc: DType, x: &str, y: &str) -> String {
    let bop = match op {
        ReduceOp::Sum => BinaryOp::Add,
        ReduceOp::Prod => BinaryOp::Mul,
        ReduceOp::Max => BinaryOp::Maximum,
        ReduceOp::Min => BinaryOp::Minimum,
    };
    // `reduce_identity` filtered the pairs that have no combination.
    binary(bop, acc, x, y).unwrap_or_default()
}

/// The accumulator's value stored as dtype `out` (a partial keeps the accumulator dtype).
pub(crate) fn reduce_store(acc: DType, out: DType, v: &str) -> String {
    if acc == out {
        store(out, v)
    } else {
        cast_store(acc, out, v)
    }
}
