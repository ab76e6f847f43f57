//! How each dtype looks in generated C: its storage type, the type kernels compute in, the
//! loads and stores between them, and the prelude of helpers every kernel includes.
//!
//! Kernels include no headers: NVRTC and hiprtc find `cuda_fp16.h` only where a toolkit's
//! include folder is on the path (it is not, with the pip wheels), so half floats are stored
//! as `u16` and converted with PTX `cvt` (f16) or bit shifts (bf16), as research §1.4 notes.

use crate::dtype::DType;

/// The C type an element is stored as.
pub(crate) fn storage(dt: DType) -> &'static str {
    match dt {
        DType::Bool | DType::U8 => "u8",
        DType::I8 => "i8",
        DType::I16 => "i16",
        DType::I32 => "i32",
        DType::I64 => "i64",
        DType::U16 | DType::F16 | DType::BF16 => "u16",
        DType::U32 => "u32",
        DType::U64 => "u64",
        DType::F32 => "float",
        DType::F64 => "double",
        DType::Complex64 => "c64",
        DType::Complex128 => "c128",
    }
}

/// The C type an element is computed in (half floats in f32, as the CPU backend does).
pub(crate) fn compute(dt: DType) -> &'static str {
    match dt {
        DType::Bool => "bool",
        DType::F16 | DType::BF16 => "float",
        d => storage(d),
    }
}

/// The unsigned C type integer arithmetic of `dt` wraps in (signed overflow is undefined in
/// C; narrow types would promote to `int` and could overflow it in `u16 * u16`).
pub(crate) fn unsigned(dt: DType) -> &'static str {
    match dt.size_in_bytes() {
        8 => "u64",
        _ => "u32",
    }
}

/// The unsigned C type of exactly `dt`'s width (truncating conversions go through it).
pub(crate) fn unsigned_exact(dt: DType) -> &'static str {
    match dt.size_in_bytes() {
        1 => "u8",
        2 => "u16",
        4 => "u32",
        _ => "u64",
    }
}

/// A stored element `e` as a compute value.
pub(crate) fn load(dt: DType, e: &str) -> String {
    match dt {
        DType::Bool => format!("({e} != 0)"),
        DType::F16 => format!("h2f({e})"),
        DType::BF16 => format!("b2f({e})"),
        _ => e.to_string(),
    }
}

/// A compute value `v` as a stored element.
pub(crate) fn store(dt: DType, v: &str) -> String {
    match dt {
        DType::Bool => format!("(u8)({v})"),
        DType::F16 => format!("f2h({v})"),
        DType::BF16 => format!("f2b({v})"),
        _ => v.to_string(),
    }
}

/// The smallest and largest value of an integer dtype, as C literals.
pub(crate) fn int_limits(dt: DType) -> (&'static str, &'static str) {
    match dt {
        DType::I8 => ("(i8)-128", "(i8)127"),
        DType::I16 => ("(i16)-32768", "(i16)32767"),
        DType::I32 => ("(i32)(-2147483647 - 1)", "(i32)2147483647"),
        DType::I64 => (
            "(i64)(-9223372036854775807LL - 1)",
            "(i64)9223372036854775807LL",
        ),
        DType::U8 => ("(u8)0", "(u8)255"),
        DType::U16 => ("(u16)0", "(u16)65535"),
        DType::U32 => ("(u32)0", "(u32)4294967295u"),
        DType::U64 => ("(u64)0", "(u64)18446744073709551615ull"),
        _ => ("0", "0"),
    }
}

/// Helpers shared by every kernel: integer names, complex types and functions, half-float
/// conversions, saturating float-to-int conversions. Guarded, so several kernels can share
/// one translation unit (the CI check compiles them in batches).
/// The C names of the integer types every kernel uses (also what host runs of the kernels
/// declare, `gpu::kernels_on_host`).
macro_rules! c_typedefs {
    () => {
        "typedef unsigned char u8;
typedef signed char i8;
typedef short i16;
typedef unsigned short u16;
typedef int i32;
typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;
"
    };
}
#[cfg(test)]
pub(crate) use c_typedefs;

pub(crate) const PRELUDE: &str = concat!(
    "#ifndef DLARRAY_PRELUDE
#define DLARRAY_PRELUDE
",
    c_typedefs!(),
    r#"
__device__ __forceinline__ float h2f(u16 h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ u16 f2h(float f) { u16 h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
__device__ __forceinline__ u16 d2h(double d) { u16 h; asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h) : "d"(d)); return h; }
__device__ __forceinline__ float b2f(u16 b) { return __uint_as_float(((u32)b) << 16); }
/* Round to nearest even; NaN stays a (quiet) NaN. */
__device__ __forceinline__ u16 f2b(float f) {
  u32 u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (u16)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (u16)(u >> 16);
}
/* f64 -> bf16 in one rounding: truncate to f32, keep the lost bits as a sticky bit (round to
   odd), then round to nearest even; f32's 24 bits leave bf16's 8 room for it. */
__device__ __forceinline__ u16 d2b(double d) {
  float f = __double2float_rz(d);
  if (d == d && (double)f != d) f = __uint_as_float(__float_as_uint(f) | 1u);
  return f2b(f);
}
__device__ __forceinline__ float f_inf() { return __int_as_float(0x7f800000); }
__device__ __forceinline__ double d_inf() { return __longlong_as_double(0x7ff0000000000000LL); }

struct __align__(8) c64 { float re, im; };
struct __align__(16) c128 { double re, im; };
#define DLARRAY_COMPLEX(C, R, SFX)                                                            \
__device__ __forceinline__ C mk(R re, R im, C) { C z; z.re = re; z.im = im; return z; }          \
__device__ __forceinline__ C cx_add(C a, C b) { return mk(a.re + b.re, a.im + b.im, a); }        \
__device__ __forceinline__ C cx_sub(C a, C b) { return mk(a.re - b.re, a.im - b.im, a); }        \
__device__ __forceinline__ C cx_neg(C a) { return mk(-a.re, -a.im, a); }                         \
__device__ __forceinline__ C cx_mul(C a, C b) {                                                 \
  return mk(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re, a); }                          \
/* NumPy's (Smith's) division: scaled by the divisor's larger part, no overflow of |b|^2. */  \
__device__ __forceinline__ C cx_div(C a, C b) {                                                 \
  R br = fabs##SFX(b.re), bi = fabs##SFX(b.im);                                                 \
  if (br >= bi) {                                                                               \
    if (br == (R)0 && bi == (R)0) return mk(a.re / br, a.im / br, a);                           \
    R rat = b.im / b.re, scl = (R)1 / (b.re + b.im * rat);                                      \
    return mk((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl, a); }                       \
  R rat = b.re / b.im, scl = (R)1 / (b.im + b.re * rat);                                        \
  return mk((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl, a); }                         \
__device__ __forceinline__ bool cx_eq(C a, C b) { return a.re == b.re && a.im == b.im; }         \
__device__ __forceinline__ R cx_abs(C a) { return hypot##SFX(a.re, a.im); }                      \
/* exp, sinh, cosh, tanh, sin, cos of finite arguments as NumPy (msun): no intermediate     */  \
/* overflows where the result is finite (exp(800+0j) is inf+0j, tanh(800) is 1).           */   \
__device__ __forceinline__ R cx_big(C a) { return sizeof(R) == 4 ? (R)87 : (R)708; }            \
__device__ __forceinline__ C cx_exp(C a) {                                                      \
  if (a.im == (R)0) return mk(exp##SFX(a.re), a.im, a);                                         \
  R s = sin##SFX(a.im), c = cos##SFX(a.im);                                                     \
  if (a.re > cx_big(a)) { R h = exp##SFX(a.re * (R)0.5); return mk(c * h * h, s * h * h, a); }  \
  R e = exp##SFX(a.re); return mk(e * c, e * s, a); }                                           \
__device__ __forceinline__ C cx_log(C a) {                                                      \
  return mk(log##SFX(hypot##SFX(a.re, a.im)), atan2##SFX(a.im, a.re), a); }                     \
__device__ __forceinline__ C cx_sqrt(C a) {                                                     \
  if (a.re == (R)0 && a.im == (R)0) return mk((R)0, a.im, a);                                   \
  R t = sqrt##SFX((fabs##SFX(a.re) + hypot##SFX(a.re, a.im)) * (R)0.5);                         \
  if (a.re >= (R)0) return mk(t, a.im / (t + t), a);                                            \
  return mk(fabs##SFX(a.im) / (t + t), copysign##SFX(t, a.im), a); }                            \
__device__ __forceinline__ C cx_sinh(C a) {                                                     \
  if (a.im == (R)0) return mk(sinh##SFX(a.re), a.im, a);                                        \
  R s = sin##SFX(a.im), c = cos##SFX(a.im);                                                     \
  if (fabs##SFX(a.re) > cx_big(a)) {                                                            \
    R h = exp##SFX(fabs##SFX(a.re) * (R)0.5), re = c * (R)0.5 * h * h;                          \
    return mk(a.re < (R)0 ? -re : re, s * (R)0.5 * h * h, a); }                                 \
  return mk(sinh##SFX(a.re) * c, cosh##SFX(a.re) * s, a); }                                     \
__device__ __forceinline__ C cx_cosh(C a) {                                                     \
  if (a.im == (R)0) return mk(cosh##SFX(a.re), a.re * a.im, a);                                 \
  R s = sin##SFX(a.im), c = cos##SFX(a.im);                                                     \
  if (fabs##SFX(a.re) > cx_big(a)) {                                                            \
    R h = exp##SFX(fabs##SFX(a.re) * (R)0.5), im = s * (R)0.5 * h * h;                          \
    return mk(c * (R)0.5 * h * h, a.re < (R)0 ? -im : im, a); }                                 \
  return mk(cosh##SFX(a.re) * c, sinh##SFX(a.re) * s, a); }                                     \
__device__ __forceinline__ C cx_tanh(C a) {                                                     \
  if (fabs##SFX(a.re) >= (sizeof(R) == 4 ? (R)9 : (R)22)) {                                     \
    R s = sin##SFX(a.im), c = cos##SFX(a.im);                                                   \
    return mk(copysign##SFX((R)1, a.re), (R)4 * s * c * exp##SFX((R)-2 * fabs##SFX(a.re)), a); }\
  R t = tan##SFX(a.im), beta = (R)1 + t * t, s = sinh##SFX(a.re);                               \
  R rho = sqrt##SFX((R)1 + s * s), d = (R)1 + beta * s * s;                                     \
  return mk(beta * rho * s / d, t / d, a); }                                                    \
__device__ __forceinline__ C cx_i(C a) { return mk(-a.im, a.re, a); }                           \
__device__ __forceinline__ C cx_minus_i(C a) { return mk(a.im, -a.re, a); }                     \
__device__ __forceinline__ C cx_sin(C a) { return cx_minus_i(cx_sinh(cx_i(a))); }               \
__device__ __forceinline__ C cx_cos(C a) { return cx_cosh(cx_i(a)); }                           \
__device__ __forceinline__ C cx_tan(C a) { return cx_minus_i(cx_tanh(cx_i(a))); }               \
__device__ __forceinline__ C cx_pow(C a, C b) { return cx_exp(cx_mul(b, cx_log(a))); }      \
__device__ __forceinline__ C cx_sign(C a) {                                                     \
  R n = cx_abs(a); return n == (R)0 ? mk((R)0, (R)0, a) : mk(a.re / n, a.im / n, a); }           \
/* The inverse functions as the CPU backend's (complex_fns.rs): asinh and atanh in the right */ \
/* half plane (nothing cancels) and by oddness in the left; asin, atan of iz; acos, acosh.  */  \
__device__ __forceinline__ C cx_asinh(C a) {                                                    \
  R ax = fabs##SFX(a.re), y = a.im, re, im;                                                     \
  if (hypot##SFX(ax, y) > (R)1e8) { C l = cx_log(mk(ax, y, a)); re = l.re + log##SFX((R)2); im = l.im; }\
  else {                                                                                        \
    R zr = ax * ax - y * y, zi = (R)2 * ax * y;                                                 \
    C s = cx_sqrt(mk(zr + (R)1, zi, a)), q = cx_div(mk(zr, zi, a), mk(s.re + (R)1, s.im, a));   \
    R ur = ax + q.re, ui = y + q.im;                                                            \
    re = log1p##SFX((R)2 * ur + ur * ur + ui * ui) / (R)2; im = atan2##SFX(ui, (R)1 + ur); }    \
  return mk(copysign##SFX((R)1, a.re) < (R)0 ? -re : re, im, a); }                             \
__device__ __forceinline__ C cx_atanh(C a) {                                                    \
  R ax = fabs##SFX(a.re), y = a.im, re, im;                                                     \
  R huge = sqrt##SFX(sizeof(R) == 4 ? (R)3.4e38 : (R)1.7e308) / (R)4;                           \
  if (ax > huge || fabs##SFX(y) > huge) {                                                       \
    re = cx_div(mk((R)1, (R)0, a), mk(ax, y, a)).re; im = copysign##SFX((R)1.5707963267948966, y); }\
  else if (ax == (R)1 && fabs##SFX(y) < (sizeof(R) == 4 ? (R)3.4e-4 : (R)1.5e-8)) {             \
    re = (log##SFX((R)2) - log##SFX(fabs##SFX(y))) / (R)2; im = atan2##SFX((R)2 * y, ((R)1 - ax) * ((R)1 + ax) - y * y) / (R)2; }\
  else {                                                                                        \
    R d = ((R)1 - ax) * ((R)1 - ax) + y * y;                                                    \
    re = log1p##SFX((R)4 * ax / d) / (R)4;                                                      \
    im = atan2##SFX((R)2 * y, ((R)1 - ax) * ((R)1 + ax) - y * y) / (R)2; }                      \
  return mk(copysign##SFX((R)1, a.re) < (R)0 ? -re : re, im, a); }                             \
__device__ __forceinline__ C cx_asin(C a) { return cx_minus_i(cx_asinh(cx_i(a))); }             \
__device__ __forceinline__ C cx_acos(C a) {                                                     \
  C s = cx_asin(a); return mk((R)1.5707963267948966 - s.re, -s.im, a); }                        \
__device__ __forceinline__ C cx_acosh(C a) {                                                    \
  C w = cx_acos(a); return mk(fabs##SFX(w.im), copysign##SFX(w.re, a.im), a); }                 \
__device__ __forceinline__ C cx_atan(C a) { return cx_minus_i(cx_atanh(cx_i(a))); }             \
/* NumPy's nc_expm1 and nc_log1p: exact near 0, the sign of a zero imaginary part kept;   */    \
/* expm1's `+ 0` makes expm1(-0 + 0j) the +0 + 0j the array API names.                     */    \
__device__ __forceinline__ C cx_expm1(C a) {                                                    \
  R h = sin##SFX(a.im * (R)0.5);                                                                \
  R re = expm1##SFX(a.re) * cos##SFX(a.im) - (R)2 * h * h + (R)0;                              \
  return mk(re, exp##SFX(a.re) * sin##SFX(a.im), a); }                                          \
__device__ __forceinline__ C cx_log1p(C a) {                                                    \
  R u = a.re + (R)1; return mk(log##SFX(hypot##SFX(u, a.im)), atan2##SFX(a.im, u), a); }
DLARRAY_COMPLEX(c64, float, f)
DLARRAY_COMPLEX(c128, double, )

/* Float to integer as Rust's `as` (and NumPy on most platforms): saturating, NaN to 0. */
#define DLARRAY_SAT(T, LO, HI, MIN, MAX)                                                         \
__device__ __forceinline__ T sat_##T(double x) {                                                 \
  return x != x ? (T)0 : x <= LO ? MIN : x >= HI ? MAX : (T)x; }
DLARRAY_SAT(i8, -128.0, 128.0, (i8)-128, (i8)127)
DLARRAY_SAT(i16, -32768.0, 32768.0, (i16)-32768, (i16)32767)
DLARRAY_SAT(i32, -2147483648.0, 2147483648.0, (i32)(-2147483647 - 1), (i32)2147483647)
DLARRAY_SAT(i64, -9223372036854775808.0, 9223372036854775808.0, (i64)(-9223372036854775807LL - 1), (i64)9223372036854775807LL)
DLARRAY_SAT(u8, 0.0, 256.0, (u8)0, (u8)255)
DLARRAY_SAT(u16, 0.0, 65536.0, (u16)0, (u16)65535)
DLARRAY_SAT(u32, 0.0, 4294967296.0, (u32)0, (u32)4294967295u)
DLARRAY_SAT(u64, 0.0, 18446744073709551616.0, (u64)0, (u64)18446744073709551615ull)

/* Integer powers as the CPU backend computes them: wrapping (x^e modulo 2^bits over the
   whole exponent, as NumPy); negative exponents truncate (1/x^n in C terms). */
#define DLARRAY_IPOW(T, U)                                                                     \
__device__ __forceinline__ T ipow(T a, T b) {                                                   \
  if (b < (T)0) return a == (T)1 ? (T)1 : (a == (T)-1 ? ((b & (T)1) ? a : (T)1) : (T)0);        \
  u64 e = (u64)b;                                                                               \
  U r = 1, x = (U)a;                                                                            \
  while (e) { if (e & 1) r *= x; x *= x; e >>= 1; }                                             \
  return (T)r; }
DLARRAY_IPOW(i8, u32)
DLARRAY_IPOW(i16, u32)
DLARRAY_IPOW(i32, u32)
DLARRAY_IPOW(i64, u64)
DLARRAY_IPOW(u8, u32)
DLARRAY_IPOW(u16, u32)
DLARRAY_IPOW(u32, u32)
DLARRAY_IPOW(u64, u64)

/* NumPy's floor_divide and remainder of floats (npy_divmod): the quotient rounded down, the
   remainder with the divisor's sign; by zero, a / b and fmod's NaN. Half floats use f. */
#define DLARRAY_DIVMOD(R, SFX)                                                                 \
__device__ __forceinline__ R floor_div_##SFX(R a, R b) {                                        \
  R m = fmod##SFX##_(a, b); if (b == (R)0) return a / b;                                         \
  R div = (a - m) / b;                                                                          \
  if (m != (R)0) { if ((b < (R)0) != (m < (R)0)) div -= (R)1; }                                 \
  if (div == (R)0) return copysign##SFX##_((R)0, a / b);                                         \
  R q = floor##SFX##_(div); return div - q > (R)0.5 ? q + (R)1 : q; }                            \
__device__ __forceinline__ R rem_##SFX(R a, R b) {                                              \
  R m = fmod##SFX##_(a, b); if (b == (R)0) return m;                                             \
  if (m != (R)0) { if ((b < (R)0) != (m < (R)0)) m += b; } else m = copysign##SFX##_((R)0, b);  \
  return m; }
#define fmodf_ fmodf
#define fmodd_ fmod
#define copysignf_ copysignf
#define copysignd_ copysign
#define floorf_ floorf
#define floord_ floor
DLARRAY_DIVMOD(float, f)
DLARRAY_DIVMOD(double, d)
/* log(e^a + e^b) without overflow, as NumPy's logaddexp. */
#define DLARRAY_LOGADDEXP(R, SFX, F)                                                            \
__device__ __forceinline__ R logaddexp_##SFX(R a, R b) {                                        \
  if (a == b) return a + (R)0.6931471805599453;                                                 \
  R d = a - b;                                                                                  \
  if (d > (R)0) return a + log1p##F(exp##F(-d));                                                \
  if (d <= (R)0) return b + log1p##F(exp##F(d));                                                \
  return d; }
DLARRAY_LOGADDEXP(float, f, f)
DLARRAY_LOGADDEXP(double, d, )

/* nextafter of a float16 (bf = 0) or bfloat16 (bf = 1) value held in a float. */
__device__ __forceinline__ float nextafter_h16(float a, float b, int bf) {
  if (a != a || b != b) return a + b;
  if (a == b) return b;
  u16 h = bf ? f2b(a) : f2h(a), r;
  if (a == 0.0f) r = b < 0.0f ? (u16)0x8001 : (u16)1;
  else r = ((a < b) == (a > 0.0f)) ? (u16)(h + 1) : (u16)(h - 1);
  return bf ? b2f(r) : h2f(r);
}

/* A 32-bit rotate (threefry); r in 1..31. */
__device__ __forceinline__ u32 rotl32(u32 x, u32 r) { return (x << r) | (x >> (32 - r)); }

/* Warp shuffles for every accumulator type (narrow ones travel as int). */
__device__ __forceinline__ float shfl(float v, int o) { return __shfl_down_sync(0xffffffffu, v, o); }
__device__ __forceinline__ double shfl(double v, int o) { return __shfl_down_sync(0xffffffffu, v, o); }
__device__ __forceinline__ i64 shfl(i64 v, int o) { return __shfl_down_sync(0xffffffffu, v, o); }
__device__ __forceinline__ u64 shfl(u64 v, int o) { return __shfl_down_sync(0xffffffffu, v, o); }
__device__ __forceinline__ i32 shfl(i32 v, int o) { return __shfl_down_sync(0xffffffffu, v, o); }
__device__ __forceinline__ u32 shfl(u32 v, int o) { return __shfl_down_sync(0xffffffffu, v, o); }
__device__ __forceinline__ i16 shfl(i16 v, int o) { return (i16)__shfl_down_sync(0xffffffffu, (i32)v, o); }
__device__ __forceinline__ u16 shfl(u16 v, int o) { return (u16)__shfl_down_sync(0xffffffffu, (u32)v, o); }
__device__ __forceinline__ i8 shfl(i8 v, int o) { return (i8)__shfl_down_sync(0xffffffffu, (i32)v, o); }
__device__ __forceinline__ u8 shfl(u8 v, int o) { return (u8)__shfl_down_sync(0xffffffffu, (u32)v, o); }
__device__ __forceinline__ bool shfl(bool v, int o) { return __shfl_down_sync(0xffffffffu, (i32)v, o) != 0; }
__device__ __forceinline__ c64 shfl(c64 v, int o) { return mk(shfl(v.re, o), shfl(v.im, o), v); }
__device__ __forceinline__ c128 shfl(c128 v, int o) { return mk(shfl(v.re, o), shfl(v.im, o), v); }
#endif
"#
);
