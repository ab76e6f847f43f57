//! Elementwise ops and casts as WGSL: which (op, dtype) pairs exist, and the expression of
//! each. Semantics follow the CPU backend: integers wrap, integer division by zero gives 0,
//! max/min propagate NaN, float-to-integer casts saturate (NaN gives 0).

use super::strided::{MapKernel, elementwise_body};
use super::wgsl::{Elem, enables};
use crate::backends::{BinaryOp, UnaryOp};
use crate::dtype::DType;

/// WGSL helpers: pow, saturating casts, and the transcendental functions drivers get wrong.
const HELPERS: &str = r#"
// C's pow (IEEE 754's special cases, which WGSL's pow leaves indeterminate).
fn pow_f(a: f32, b: f32) -> f32 {
    let inf = bitcast<f32>(0x7f800000u);
    if b == 0.0 || a == 1.0 { return 1.0; }
    if is_nan(a) || is_nan(b) { return a + b; }
    if abs(b) == inf {
        if a == -1.0 { return 1.0; }
        return select(0.0, inf, (abs(a) > 1.0) == (b > 0.0));
    }
    // An odd integral exponent keeps the base's sign (of a zero and an infinity too).
    let odd = fract(b) == 0.0 && abs(b) < 16777216.0 && (u32(abs(b)) & 1u) == 1u;
    if a == 0.0 || abs(a) == inf {
        let r = select(0.0, inf, (a == 0.0) == (b < 0.0));
        return select(r, -r, odd && neg_bit(a));
    }
    let r = pow(abs(a), b);
    if a > 0.0 { return r; }
    // A negative finite base has a real power only for integral exponents.
    if fract(b) != 0.0 { return nan_f(); }
    return select(r, -r, odd);
}
fn pow_i(a: i32, b: i32) -> i32 {
    if b < 0 {
        // 1 / a^|b| truncated, as C and the CPU backend do.
        if a == 1 { return 1; }
        if a == -1 { return select(-1, 1, (b & 1) == 0); }
        return 0;
    }
    var r = 1; var x = a; var e = u32(b);
    loop { if e == 0u { break; } if (e & 1u) == 1u { r *= x; } x *= x; e >>= 1u; }
    return r;
}
fn nan_f() -> f32 { return bitcast<f32>(0x7fc00000u); }
// Drivers' exp, log, sinh, tanh, asinh and atanh are accurate only in absolute terms near
// 0 (WGSL bounds `log` by 2^-21 absolute on [0.5, 2], and derives sinh and tanh from exp):
// llvmpipe's tanh(1e-30) was 3e-8 and its log1p(1e-6) 5 % off. These keep ~1 ulp there
// with polynomials, and use the driver's functions only where they are accurate.
// e^a - 1: the Taylor polynomial to a^9/9! on |a| < 0.5 (the next term is below 4e-10 of
// the value), else exp(a) - 1, which no longer cancels.
fn expm1_f(a: f32) -> f32 {
    if abs(a) < 0.5 {
        return a * (1.0 + a * (0.5 + a * (0.16666667 + a * (0.041666668 + a * (0.008333334
            + a * (0.0013888889 + a * (0.0001984127 + a * (2.4801588e-5 + a * 2.7557319e-6))))))));
    }
    if is_nan(a) { return a; }
    return exp(a) - 1.0;
}
// ln(1 + a) on (-0.5, 1), where 1 + a is in (0.5, 2): 2 atanh(s) with s = a / (2 + a),
// |s| < 1/3, by its series to s^17 (the next term is below 3e-10 of the sum).
fn log1p_series(a: f32) -> f32 {
    let s = a / (2.0 + a);
    let z = s * s;
    return 2.0 * s * (1.0 + z * (0.33333334 + z * (0.2 + z * (0.14285715 + z * (0.11111111
        + z * (0.09090909 + z * (0.07692308 + z * (0.06666667 + z * 0.05882353))))))));
}
fn log1p_f(a: f32) -> f32 {
    if a > -0.5 && a < 1.0 { return log1p_series(a); }
    if is_nan(a) || a < -1.0 { return nan_f(); }
    if a == -1.0 { return bitcast<f32>(0xff800000u); }
    return log(1.0 + a);
}
// ln(a): on (0.5, 2), where the driver's log is only absolutely accurate, as ln(1 + (a - 1))
// (a - 1 is exact there).
fn log_f(a: f32) -> f32 {
    if a > 0.5 && a < 2.0 { return log1p_series(a - 1.0); }
    return log(a);
}
// Past 88.7 e^x overflows though sinh and cosh do not until ~89.4: (e^(x/2) / 2) e^(x/2).
fn big_half_exp(x: f32) -> f32 { let h = exp(0.5 * x); return (0.5 * h) * h; }
fn sinh_f(a: f32) -> f32 {
    let x = abs(a);
    if x < 1.0 {
        let t = expm1_f(x);
        return with_sign_of(0.5 * (t + t / (t + 1.0)), a);
    }
    if x > 88.0 { return with_sign_of(big_half_exp(x), a); }
    return sinh(a);
}
fn cosh_f(a: f32) -> f32 {
    let x = abs(a);
    if x > 88.0 { return big_half_exp(x); }
    return cosh(a);
}
fn tanh_f(a: f32) -> f32 {
    if is_nan(a) { return a; }
    // Past 20, tanh is 1 in float32; the clamp keeps e^2x finite.
    let t = expm1_f(2.0 * min(abs(a), 20.0));
    return with_sign_of(t / (t + 2.0), a);
}
// Past 1e4, 1 + x^2 is x^2 in float32: ln(2x), without squaring x (which overflows at 2e19).
fn asinh_f(a: f32) -> f32 {
    let x = abs(a);
    if is_nan(a) { return a; }
    if x > 1.0e4 { return with_sign_of(log(x) + 0.6931472, a); }
    return with_sign_of(log1p_f(x + x * x / (1.0 + sqrt(1.0 + x * x))), a);
}
fn acosh_f(a: f32) -> f32 {
    if !(a >= 1.0) { return nan_f(); }
    if a > 1.0e4 { return log(a) + 0.6931472; }
    let t = a - 1.0;
    return log1p_f(t + sqrt(2.0 * t + t * t));
}
fn atanh_f(a: f32) -> f32 {
    let x = abs(a);
    if is_nan(a) || x > 1.0 { return nan_f(); }
    if x == 1.0 { return with_sign_of(bitcast<f32>(0x7f800000u), a); }
    return with_sign_of(0.5 * log1p_f(2.0 * x / (1.0 - x)), a);
}
// Cephes' atanf (~2 ulp): reduced to |x| <= tan(pi/8) by pi/2 - atan(1/x) and
// pi/4 + atan((x - 1) / (x + 1)), then an odd polynomial. llvmpipe's atan was 2e-5 off at
// small arguments (350 ulp at 1e-29); asin, acos and atan2 go through this one.
fn atan_f(a: f32) -> f32 {
    var x = abs(a);
    var y = 0.0;
    if x > 2.4142137 { y = 1.5707964; x = -1.0 / x; }
    else if x > 0.41421357 { y = 0.7853982; x = (x - 1.0) / (x + 1.0); }
    let z = x * x;
    y += (((0.0805374449538 * z - 0.138776856032) * z + 0.199777106478) * z - 0.333329491539) * z * x + x;
    return with_sign_of(y, a);
}
// atan2 with IEEE's signed zeros and infinities (drivers differ at the edges).
fn neg_bit(x: f32) -> bool { return (bitcast<u32>(x) & 0x80000000u) != 0u; }
fn with_sign_of(m: f32, y: f32) -> f32 { return select(m, -m, neg_bit(y)); }
fn atan2_f(y: f32, x: f32) -> f32 {
    let pi = 3.1415927410125732;
    let inf = bitcast<f32>(0x7f800000u);
    if is_nan(y) || is_nan(x) { return y + x; }
    if y == 0.0 { return with_sign_of(select(0.0, pi, neg_bit(x)), y); }
    if abs(x) == inf {
        if abs(y) == inf { return with_sign_of(select(0.7853981852531433, 2.356194496154785, x < 0.0), y); }
        return with_sign_of(select(0.0, pi, x < 0.0), y);
    }
    if x == 0.0 || abs(y) == inf { return with_sign_of(1.5707963705062866, y); }
    // Through atan_f: llvmpipe's atan2 was 2e-5 off at small angles. y / x may round to 0
    // or inf; atan_f takes both.
    let t = atan_f(abs(y / x));
    return with_sign_of(select(t, pi - t, x < 0.0), y);
}
// C's nextafter on the bits (subnormals included, which drivers may flush in arithmetic).
fn nextafter_f(a: f32, b: f32) -> f32 {
    if is_nan(a) || is_nan(b) { return bitcast<f32>(0x7fc00000u); }
    if a == b { return b; }
    let bits = bitcast<u32>(a);
    if a == 0.0 { return bitcast<f32>(select(1u, 0x80000001u, b < 0.0)); }
    return bitcast<f32>(select(bits - 1u, bits + 1u, (a < b) == (a > 0.0)));
}
fn nextafter_h(a: f32, b: f32) -> f32 {
    if is_nan(a) || is_nan(b) { return bitcast<f32>(0x7fc00000u); }
    if a == b { return b; }
    let h = pack2x16float(vec2<f32>(a, 0.0)) & 0xffffu;
    var r = select(h - 1u, h + 1u, (a < b) == (a > 0.0));
    if a == 0.0 { r = select(1u, 0x8001u, b < 0.0); }
    return unpack2x16float(r).x;
}
fn hypot_f(a: f32, b: f32) -> f32 {
    let x = abs(a); let y = abs(b);
    let inf = bitcast<f32>(0x7f800000u);
    if x == inf || y == inf { return inf; }
    if is_nan(x) || is_nan(y) { return x + y; }
    let m = max(x, y); let n = min(x, y);
    if m == 0.0 { return 0.0; }
    let r = n / m;
    return m * sqrt(1.0 + r * r);
}
fn logaddexp_f(a: f32, b: f32) -> f32 {
    if a == b { return a + 0.6931471805599453; }
    let d = a - b;
    if d > 0.0 { return a + log1p_f(exp(-d)); }
    if d <= 0.0 { return b + log1p_f(exp(d)); }
    return d;
}
// NumPy's floor_divide and remainder (npy_divmod): the quotient rounded down, the remainder
// with the divisor's sign; integer division by zero gives 0, as on the CPU.
// The remainder is a - q * b, not `%`: naga's GLSL output keeps `%`, which GLSL leaves
// undefined for negative operands. By -1 the quotient is the negation (MIN wraps to MIN).
fn floor_div_i(a: i32, b: i32) -> i32 {
    if b == 0 { return 0; }
    if b == -1 { return 0 - a; }
    let q = a / b; let r = a - q * b;
    return select(q, q - 1, r != 0 && ((r < 0) != (b < 0)));
}
fn rem_i(a: i32, b: i32) -> i32 {
    if b == 0 || b == -1 { return 0; }
    let r = a - (a / b) * b;
    return select(r, r + b, r != 0 && ((r < 0) != (b < 0)));
}
fn neg_zero_if(neg: bool) -> f32 { return select(0.0, bitcast<f32>(0x80000000u), neg); }
// C's fmod, exact as C's: |b| 2^k subtracted for falling k while |a| >= |b|. Each step is
// exact (Sterbenz: the two are within a factor of 2), and there are at most as many as the
// exponents differ (a - b trunc(a / b) lost every digit once a / b passed 2^24).
fn fmod_f(a: f32, b: f32) -> f32 {
    let ax = abs(a); let ay = abs(b);
    // On the bits: GL drivers fold comparisons with infinities and NaN.
    let a_special = (bitcast<u32>(a) & 0x7f800000u) == 0x7f800000u;
    if a_special || is_nan(b) || ay == 0.0 { return nan_f(); }
    if ax < ay || (bitcast<u32>(ay) == 0x7f800000u) { return a; }
    let eb = frexp(ay).exp;
    var r = ax;
    loop {
        if r < ay { break; }
        var s = ldexp(ay, frexp(r).exp - eb);
        if s > r { s = s * 0.5; }
        r = r - s;
    }
    return with_sign_of(r, a);
}
fn divmod_f(a: f32, b: f32) -> vec2<f32> {
    var m = fmod_f(a, b);
    // By zero: IEEE's a / b and fmod's NaN, spelt out (drivers may not divide by zero so).
    if b == 0.0 {
        let nan = bitcast<f32>(0x7fc00000u);
        let neg = (bitcast<u32>(a) ^ bitcast<u32>(b)) & 0x80000000u;
        let inf = bitcast<f32>(0x7f800000u | neg);
        return vec2<f32>(select(inf, nan, a == 0.0 || is_nan(a)), nan);
    }
    var div = (a - m) / b;
    // `!(x == 0.0)`, not `x != 0.0`: drivers compile `!=` as an ordered test, false for NaN.
    if !(m == 0.0) {
        if (b < 0.0) != (m < 0.0) { m += b; div -= 1.0; }
    } else {
        m = neg_zero_if(b < 0.0);
    }
    var q = neg_zero_if((bitcast<u32>(a / b) & 0x80000000u) != 0u);
    if !(div == 0.0) { q = floor(div); if div - q > 0.5 { q += 1.0; } }
    return vec2<f32>(q, m);
}
fn floor_div_f(a: f32, b: f32) -> f32 { return divmod_f(a, b).x; }
fn rem_f(a: f32, b: f32) -> f32 { return divmod_f(a, b).y; }
fn pow_u(a: u32, b: u32) -> u32 {
    var r = 1u; var x = a; var e = b;
    loop { if e == 0u { break; } if (e & 1u) == 1u { r *= x; } x *= x; e >>= 1u; }
    return r;
}
fn f2i(x: f32) -> i32 {
    if is_nan(x) { return 0; }
    if x >= 2147483648.0 { return 2147483647; }
    if x <= -2147483648.0 { return -2147483647 - 1; }
    return i32(x);
}
fn f2u(x: f32) -> u32 {
    if is_nan(x) || x <= 0.0 { return 0u; }
    if x >= 4294967296.0 { return 4294967295u; }
    return u32(x);
}
"#;

/// The WGSL expression of `op(a)` for compute type `ty`, if the op exists for it.
fn unary_expr(op: UnaryOp, ty: &str) -> Option<String> {
    use UnaryOp::*;
    let e = match (op, ty) {
        (Neg, "f32" | "i32") => "-a".into(),
        (Neg, "u32") => "0u - a".into(),
        (Abs, "f32" | "i32") => "abs(a)".into(),
        (Abs, "u32") => "a".into(),
        (Exp, "f32") => "exp(a)".into(),
        (Log, "f32") => "log_f(a)".into(),
        (Sqrt, "f32") => "sqrt(a)".into(),
        (Sin, "f32") => "sin(a)".into(),
        (Cos, "f32") => "cos(a)".into(),
        // The quotient, as `Array::tan` composed it before `tan` was an op: drivers' `tan`
        // varies more than their `sin` and `cos`.
        (Tan, "f32") => "(sin(a) / cos(a))".into(),
        // The `_f` helpers (HELPERS): accurate near 0 and at large arguments where the
        // drivers' functions are not, with NaN (and ±inf at atanh's ends) spelt out outside
        // the domains, where WGSL's results are indeterminate.
        (Tanh, "f32") => "tanh_f(a)".into(),
        // Through atan2: drivers' asin and acos are far less accurate (llvmpipe's asin(0.5)
        // is 4e-4 off).
        (Asin, "f32") => {
            "select(atan2_f(a, sqrt((1.0 - a) * (1.0 + a))), nan_f(), abs(a) > 1.0)".into()
        }
        (Acos, "f32") => {
            "select(atan2_f(sqrt((1.0 - a) * (1.0 + a)), a), nan_f(), abs(a) > 1.0)".into()
        }
        (Atan, "f32") => "atan_f(a)".into(),
        (Sinh, "f32") => "sinh_f(a)".into(),
        (Cosh, "f32") => "cosh_f(a)".into(),
        (Asinh, "f32") => "asinh_f(a)".into(),
        (Acosh, "f32") => "acosh_f(a)".into(),
        (Atanh, "f32") => "atanh_f(a)".into(),
        (Expm1, "f32") => "expm1_f(a)".into(),
        (Log1p, "f32") => "log1p_f(a)".into(),
        (LogicalNot | BitwiseInvert, "bool") => "!a".into(),
        (Signbit, "f32") => "neg_bit(a)".into(),
        (BitwiseInvert, "i32" | "u32") => "~a".into(),
        (Floor, "f32") => "floor(a)".into(),
        (Ceil, "f32") => "ceil(a)".into(),
        // WGSL's `round` rounds half to even, as NumPy's.
        (Round, "f32") => "round(a)".into(),
        (Floor | Ceil | Round, "i32" | "u32") => "a".into(),
        // NaN is its own sign; ±0 gives +0.
        (Sign, "f32") => {
            "select(select(select(a, 0.0, a == 0.0), -1.0, a < 0.0), 1.0, a > 0.0)".into()
        }
        (Sign, "i32") => "sign(a)".into(),
        (Sign, "u32") => "select(0u, 1u, a > 0u)".into(),
        _ => return None,
    };
    Some(e)
}

/// The WGSL expression of `op(a, b)` for compute type `ty`, if the op exists for it.
fn binary_expr(op: BinaryOp, ty: &str) -> Option<String> {
    use BinaryOp::*;
    let num = matches!(ty, "f32" | "i32" | "u32");
    let int = matches!(ty, "i32" | "u32");
    let e = match op {
        Add if num => "a + b".into(),
        Sub if num => "a - b".into(),
        Mul if num => "a * b".into(),
        Div if ty == "f32" => "a / b".into(),
        Div if int => format!("select(a / b, {ty}(0), b == {ty}(0))"),
        Pow => match ty {
            "f32" => "pow_f(a, b)".into(),
            "i32" => "pow_i(a, b)".into(),
            "u32" => "pow_u(a, b)".into(),
            _ => return None,
        },
        Maximum => match ty {
            "f32" => "fmax(a, b)".into(),
            "bool" => "a || b".into(),
            _ => "max(a, b)".into(),
        },
        Minimum => match ty {
            "f32" => "fmin(a, b)".into(),
            "bool" => "a && b".into(),
            _ => "min(a, b)".into(),
        },
        Eq => "a == b".into(),
        // Not `a != b`: that compiles to an ordered comparison, false for NaN.
        Ne => "!(a == b)".into(),
        Lt | Le | Gt | Ge => {
            let sym = match op {
                Lt => "<",
                Le => "<=",
                Gt => ">",
                _ => ">=",
            };
            if ty == "bool" {
                format!("u32(a) {sym} u32(b)")
            } else {
                format!("a {sym} b")
            }
        }
        LogicalAnd if ty == "bool" => "a && b".into(),
        LogicalOr if ty == "bool" => "a || b".into(),
        LogicalXor if ty == "bool" => "a != b".into(),
        Atan2 if ty == "f32" => "atan2_f(a, b)".into(),
        Copysign if ty == "f32" => {
            "bitcast<f32>((bitcast<u32>(a) & 0x7fffffffu) | (bitcast<u32>(b) & 0x80000000u))".into()
        }
        Hypot if ty == "f32" => "hypot_f(a, b)".into(),
        Nextafter if ty == "f32" => "nextafter_f(a, b)".into(),
        Logaddexp if ty == "f32" => "logaddexp_f(a, b)".into(),
        FloorDivide => match ty {
            "f32" => "floor_div_f(a, b)".into(),
            "i32" => "floor_div_i(a, b)".into(),
            "u32" => "select(a / b, 0u, b == 0u)".into(),
            _ => return None,
        },
        Remainder => match ty {
            "f32" => "rem_f(a, b)".into(),
            "i32" => "rem_i(a, b)".into(),
            "u32" => "select(a % b, 0u, b == 0u)".into(),
            _ => return None,
        },
        BitwiseAnd if ty == "bool" => "a && b".into(),
        BitwiseOr if ty == "bool" => "a || b".into(),
        BitwiseXor if ty == "bool" => "a != b".into(),
        BitwiseAnd if int => "a & b".into(),
        BitwiseOr if int => "a | b".into(),
        BitwiseXor if int => "a ^ b".into(),
        // WGSL takes the count modulo 32: counts outside 0..32 (negative ones read as large
        // unsigned) give 0, or the sign for a right shift, as on the CPU.
        LeftShift if int => format!("select({ty}(0), a << u32(b), u32(b) < 32u)"),
        RightShift if ty == "u32" => "select(0u, a >> b, b < 32u)".into(),
        RightShift if ty == "i32" => {
            "select(select(0i, -1i, a < 0i), a >> u32(b), u32(b) < 32u)".into()
        }
        _ => return None,
    };
    Some(e)
}

/// The WGSL expression converting `a` from compute type `from` to `to`.
fn cast_expr(from: &str, to: &str) -> String {
    match (from, to) {
        (f, t) if f == t => "a".into(),
        ("bool", t) => format!("select({t}(0), {t}(1), a)"),
        // `!(a == 0)`, not `a != 0`: NaN is true, and `!=` is an ordered comparison.
        (f, "bool") => format!("!(a == {f}(0))"),
        ("f32", "i32") => "f2i(a)".into(),
        ("f32", "u32") => "f2u(a)".into(),
        ("i32", "u32") => "bitcast<u32>(a)".into(),
        ("u32", "i32") => "bitcast<i32>(a)".into(),
        (_, t) => format!("{t}(a)"),
    }
}

fn kernel(key: String, inputs: &[Elem], out: Elem, result_ty: &str, expr: &str) -> MapKernel {
    let params: Vec<String> = ["a", "b", "c"]
        .iter()
        .zip(inputs)
        .map(|(n, e)| format!("{n}: {}", e.ty))
        .collect();
    let mut all = inputs.to_vec();
    all.push(out);
    let mut decls = enables(&all).to_string();
    decls += HELPERS;
    decls += &format!(
        "fn f({}) -> {result_ty} {{ return {expr}; }}\n",
        params.join(", ")
    );
    let args: Vec<String> = inputs
        .iter()
        .enumerate()
        .map(|(k, e)| e.load(&format!("in{k}"), &format!("at({k}u, i)")))
        .collect();
    let value = format!("f({})", args.join(", "));
    MapKernel {
        key,
        decls,
        input_types: inputs.iter().map(|e| e.store).collect(),
        output_type: out.store,
        per_invocation: match out.packed_bits() {
            Some(bits) => 32 / bits,
            None => super::strided::PER_INVOCATION,
        },
        body: elementwise_body(&value, out.packed_bits(), |v| out.store(v)),
    }
}

/// The kernel of `op(x)` with output `out`, or `None` when the op does not exist for `x`.
pub(crate) fn unary(op: UnaryOp, x: Elem, out: Elem) -> Option<MapKernel> {
    let expr = unary_expr(op, x.ty)?;
    let key = format!("unary-{op}-{}-{}", x.dtype, out.dtype);
    let out_ok = out.ty == x.ty || (op == UnaryOp::Signbit && out.ty == "bool");
    out_ok.then(|| kernel(key, &[x], out, out.ty, &expr))
}

/// The kernel of `op(a, b)` with output `out`, or `None` when the op does not exist.
pub(crate) fn binary(op: BinaryOp, x: Elem, out: Elem) -> Option<MapKernel> {
    // f16 computes in f32: its nextafter steps the f16 bits, not the f32 ones.
    let expr = if op == BinaryOp::Nextafter && x.dtype == DType::F16 {
        "nextafter_h(a, b)".to_string()
    } else {
        binary_expr(op, x.ty)?
    };
    let key = format!("binary-{op}-{}-{}", x.dtype, out.dtype);
    Some(kernel(key, &[x, x], out, out.ty, &expr))
}

/// The kernel of `where`: `cond ? x : y` (WGSL's `select(false_value, true_value, cond)`).
pub(crate) fn select(cond: Elem, x: Elem) -> MapKernel {
    let key = format!("select-{}", x.dtype);
    kernel(key, &[cond, x, x], x, x.ty, "select(c, b, a)")
}

/// The kernel converting `x` to `out`.
pub(crate) fn cast(x: Elem, out: Elem) -> MapKernel {
    let key = format!("cast-{}-{}", x.dtype, out.dtype);
    let expr = cast_expr(x.ty, out.ty);
    // Floats saturate to a narrow integer's range (Rust's `as`, the CPU's rule); integers
    // wrap (the store keeps the low bits).
    let expr = match (x.ty, out.dtype) {
        ("f32", DType::I8) => format!("clamp({expr}, -128i, 127i)"),
        ("f32", DType::I16) => format!("clamp({expr}, -32768i, 32767i)"),
        ("f32", DType::U8) => format!("min({expr}, 255u)"),
        ("f32", DType::U16) => format!("min({expr}, 65535u)"),
        _ => expr,
    };
    kernel(key, &[x], out, out.ty, &expr)
}
