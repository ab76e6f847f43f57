//! Element types: [`DType`], the [`Element`] trait that ties a Rust type to its dtype, NumPy-style
//! type promotion, and the per-element [`Scalar`] used by casts and `full`.

pub use half::{bf16, f16};
pub use num_complex::{Complex32, Complex64};
use std::fmt;

/// The element type of an array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// `bool`: one byte, 0 or 1.
    Bool,
    /// `int8`.
    I8,
    /// `int16`.
    I16,
    /// `int32`.
    I32,
    /// `int64`.
    I64,
    /// `uint8`.
    U8,
    /// `uint16`.
    U16,
    /// `uint32`.
    U32,
    /// `uint64`.
    U64,
    /// `float16` (IEEE half, `half::f16`).
    F16,
    /// `bfloat16` (`half::bf16`).
    BF16,
    /// `float32`.
    F32,
    /// `float64`.
    F64,
    /// `complex64`: two `float32`s (`num_complex::Complex32`).
    Complex64,
    /// `complex128`: two `float64`s (`num_complex::Complex64`).
    Complex128,
}

/// The broad kind of a dtype, used by promotion and by op validity checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// `bool`.
    Bool,
    /// Unsigned integers.
    UInt,
    /// Signed integers.
    Int,
    /// Real floating point.
    Float,
    /// Complex floating point.
    Complex,
}

impl DType {
    /// Every dtype, in declaration order.
    pub const ALL: [DType; 15] = [
        DType::Bool,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
        DType::Complex64,
        DType::Complex128,
    ];

    /// Size of one element in bytes (bool is stored as one byte, as DLPack requires).
    pub const fn size_in_bytes(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::I16 | DType::U16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 | DType::Complex64 => 8,
            DType::Complex128 => 16,
        }
    }

    /// NumPy-style name (`"float32"`, `"bool"`, `"complex64"`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::U8 => "uint8",
            DType::U16 => "uint16",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::Complex64 => "complex64",
            DType::Complex128 => "complex128",
        }
    }

    /// Parses a NumPy-style name (also accepts `f32`, `i64`, ... shorthands).
    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL
            .into_iter()
            .find(|d| d.name() == name)
            .or(match name {
                "i8" => Some(DType::I8),
                "i16" => Some(DType::I16),
                "i32" => Some(DType::I32),
                "i64" => Some(DType::I64),
                "u8" => Some(DType::U8),
                "u16" => Some(DType::U16),
                "u32" => Some(DType::U32),
                "u64" => Some(DType::U64),
                "f16" => Some(DType::F16),
                "bf16" => Some(DType::BF16),
                "f32" => Some(DType::F32),
                "f64" => Some(DType::F64),
                "c64" => Some(DType::Complex64),
                "c128" => Some(DType::Complex128),
                _ => None,
            })
    }

    /// The dtype's kind: bool, signed or unsigned integer, float, complex.
    pub const fn kind(self) -> Kind {
        match self {
            DType::Bool => Kind::Bool,
            DType::U8 | DType::U16 | DType::U32 | DType::U64 => Kind::UInt,
            DType::I8 | DType::I16 | DType::I32 | DType::I64 => Kind::Int,
            DType::F16 | DType::BF16 | DType::F32 | DType::F64 => Kind::Float,
            DType::Complex64 | DType::Complex128 => Kind::Complex,
        }
    }

    /// A real floating dtype (f16, bf16, f32, f64).
    pub const fn is_float(self) -> bool {
        matches!(self.kind(), Kind::Float)
    }
    /// A complex dtype.
    pub const fn is_complex(self) -> bool {
        matches!(self.kind(), Kind::Complex)
    }
    /// A signed or unsigned integer dtype.
    pub const fn is_integer(self) -> bool {
        matches!(self.kind(), Kind::Int | Kind::UInt)
    }
    /// The smallest and largest value of an integer dtype (`None` for the others).
    pub const fn int_range(self) -> Option<(i128, i128)> {
        let bits = (self.size_in_bytes() * 8) as u32;
        match self.kind() {
            Kind::Int => Some((-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)),
            Kind::UInt => Some((0, (1i128 << bits) - 1)),
            _ => None,
        }
    }
    /// Floating or complex: the dtypes on which exp, log, sin, ... are defined.
    pub const fn is_inexact(self) -> bool {
        self.is_float() || self.is_complex()
    }

    /// DLPack `(type code, bits)` for this dtype (lanes are always 1). Every export asks: a
    /// table indexed by the dtype (the match below took ~16 instructions of each).
    #[inline]
    pub const fn dlpack_code_bits(self) -> (u8, u8) {
        DLPACK_CODE_BITS[self as usize]
    }

    /// [`dlpack_code_bits`](Self::dlpack_code_bits) worked out, for the tables.
    const fn dlpack_code_bits_of(self) -> (u8, u8) {
        use crate::dlpack::ffi::type_code::*;
        let bits = (self.size_in_bytes() * 8) as u8;
        let code = match self.kind() {
            Kind::Int => kDLInt,
            Kind::UInt => kDLUInt,
            Kind::Float if matches!(self, DType::BF16) => kDLBfloat,
            Kind::Float => kDLFloat,
            Kind::Complex => kDLComplex,
            Kind::Bool => kDLBool,
        };
        (code, bits)
    }

    /// The dtype for a DLPack `(type code, bits)`, if dlarray has one. Every import asks:
    /// a table indexed by code and by the bits' power of two, built from
    /// [`dlpack_code_bits`](Self::dlpack_code_bits) at compile time (a search of
    /// [`ALL`](Self::ALL) took ~60 instructions of an import for float32).
    #[inline]
    pub fn from_dlpack_code_bits(code: u8, bits: u8) -> Option<DType> {
        // Bits 8, 16, 32, 64, 128 are columns 0..5; any other width has no dtype.
        if !bits.is_power_of_two() || bits < 8 {
            return None;
        }
        let column = (bits.trailing_zeros() - 3) as usize;
        *DLPACK_TABLE.get(code as usize)?.get(column)?
    }

    /// The real dtype matching a complex one (abs of complex64 is float32).
    pub const fn real_part(self) -> DType {
        match self {
            DType::Complex64 => DType::F32,
            DType::Complex128 => DType::F64,
            d => d,
        }
    }

    /// The 32-bit counterpart of a 64-bit dtype (float64 -> float32, int64 -> int32,
    /// uint64 -> uint32, complex128 -> complex64): what JAX computes in with x64 disabled, and
    /// so what a device without 64-bit kernels (wgpu) computes in. `None` for other dtypes.
    pub const fn narrow_64(self) -> Option<DType> {
        match self {
            DType::F64 => Some(DType::F32),
            DType::I64 => Some(DType::I32),
            DType::U64 => Some(DType::U32),
            DType::Complex128 => Some(DType::Complex64),
            _ => None,
        }
    }

    /// The dtype `sum` accumulates and returns in (NumPy: small ints widen to 64 bits).
    pub const fn sum_dtype(self) -> DType {
        match self.kind() {
            Kind::Bool | Kind::Int => DType::I64,
            Kind::UInt => DType::U64,
            _ => self,
        }
    }

    /// The floating dtype an operation needing a float (mean, true division) uses for `self`.
    pub const fn float_dtype(self) -> DType {
        match self.kind() {
            Kind::Float | Kind::Complex => self,
            _ => DType::F64,
        }
    }

    fn int_bits(self) -> u32 {
        (self.size_in_bytes() * 8) as u32
    }

    /// NumPy 2 promotion of two dtypes (symmetric, `promote(a, a) == a`).
    pub fn promote(a: DType, b: DType) -> DType {
        use Kind::*;
        if a == b {
            return a;
        }
        let (lo, hi) = if a.kind() <= b.kind() { (a, b) } else { (b, a) };
        match (lo.kind(), hi.kind()) {
            (Bool, _) => hi,
            (UInt, UInt) | (Int, Int) => {
                if lo.int_bits() >= hi.int_bits() {
                    lo
                } else {
                    hi
                }
            }
            (UInt, Int) => {
                // A signed type that holds every value of the unsigned one, else float64.
                let need = lo.int_bits() * 2;
                match need.max(hi.int_bits()) {
                    16 => DType::I16,
                    32 => DType::I32,
                    64 => DType::I64,
                    _ => DType::F64,
                }
            }
            (UInt | Int, Float) => {
                let need = match lo.int_bits() {
                    8 => 16,
                    16 => 32,
                    _ => 64,
                };
                float_with_bits(hi, need)
            }
            (Float, Float) => {
                if matches!(
                    (lo, hi),
                    (DType::F16, DType::BF16) | (DType::BF16, DType::F16)
                ) {
                    DType::F32
                } else if lo.size_in_bytes() >= hi.size_in_bytes() {
                    lo
                } else {
                    hi
                }
            }
            (UInt | Int | Float, Complex) => {
                let real = DType::promote(lo, hi.real_part());
                if real == DType::F64 {
                    DType::Complex128
                } else {
                    hi
                }
            }
            (Complex, Complex) => DType::Complex128,
            _ => hi,
        }
    }
}

/// The smallest float at least as wide as both `f` and `bits`.
fn float_with_bits(f: DType, bits: u32) -> DType {
    if f.int_bits() >= bits {
        return f;
    }
    match bits {
        16 => DType::F16,
        32 => DType::F32,
        _ => DType::F64,
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A dtype-erased value: what a cast goes through and what `full` takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    /// A boolean.
    Bool(bool),
    /// Any integer of any dtype (i128 holds every `u64` and `i64`).
    Int(i128),
    /// A real float, widened to f64.
    Float(f64),
    /// A complex number, widened to complex128.
    Complex(Complex64),
}

/// A Rust type that is the element of some [`DType`].
///
/// Implemented for `bool`, the primitive integers, `half::f16`, `half::bf16`, `f32`, `f64`,
/// `Complex32` and `Complex64`. Host buffers hold elements in their native in-memory form.
pub trait Element: Copy + Send + Sync + fmt::Debug + PartialEq + Default + 'static {
    /// The dtype whose elements this type holds.
    const DTYPE: DType;
    /// The value, dtype-erased.
    fn to_scalar(self) -> Scalar;
    /// The value converted to this type with Rust's `as` rules: floats truncate (saturating)
    /// to integers, integers wrap, real types take a complex's real part, and `bool` is true
    /// for anything nonzero.
    fn from_scalar(s: Scalar) -> Self;
}

macro_rules! int_element {
    ($($t:ty => $d:ident),*) => {$(
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            #[inline(always)]
            fn to_scalar(self) -> Scalar { Scalar::Int(self as i128) }
            #[inline(always)]
            fn from_scalar(s: Scalar) -> Self {
                match s {
                    Scalar::Bool(b) => b as $t,
                    Scalar::Int(i) => i as $t,
                    Scalar::Float(f) => f as $t,
                    Scalar::Complex(c) => c.re as $t,
                }
            }
        }
    )*};
}
int_element!(i8 => I8, i16 => I16, i32 => I32, i64 => I64, u8 => U8, u16 => U16, u32 => U32, u64 => U64);

macro_rules! float_element {
    ($t:ty, $d:ident, $from_f64:expr, $to_f64:expr, $from_int:expr) => {
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            #[inline(always)]
            fn to_scalar(self) -> Scalar {
                Scalar::Float($to_f64(self))
            }
            #[inline(always)]
            fn from_scalar(s: Scalar) -> Self {
                match s {
                    Scalar::Bool(b) => $from_f64(b as u8 as f64),
                    Scalar::Int(i) => $from_int(i),
                    Scalar::Float(f) => $from_f64(f),
                    Scalar::Complex(c) => $from_f64(c.re),
                }
            }
        }
    };
}
float_element!(f32, F32, |f: f64| f as f32, |x: f32| x as f64, |i: i128| i
    as f32);
float_element!(f64, F64, |f: f64| f, |x: f64| x, |i: i128| i as f64);
float_element!(f16, F16, f16::from_f64, f16::to_f64, |i: i128| {
    f16::from_f64(i as f64)
});
float_element!(bf16, BF16, bf16::from_f64, bf16::to_f64, |i: i128| {
    bf16::from_f64(i as f64)
});

impl Element for bool {
    const DTYPE: DType = DType::Bool;
    #[inline(always)]
    fn to_scalar(self) -> Scalar {
        Scalar::Bool(self)
    }
    #[inline(always)]
    fn from_scalar(s: Scalar) -> Self {
        match s {
            Scalar::Bool(b) => b,
            Scalar::Int(i) => i != 0,
            Scalar::Float(f) => f != 0.0,
            Scalar::Complex(c) => c.re != 0.0 || c.im != 0.0,
        }
    }
}

impl Element for Complex32 {
    const DTYPE: DType = DType::Complex64;
    #[inline(always)]
    fn to_scalar(self) -> Scalar {
        Scalar::Complex(Complex64::new(self.re as f64, self.im as f64))
    }
    #[inline(always)]
    fn from_scalar(s: Scalar) -> Self {
        match s {
            Scalar::Complex(c) => Complex32::new(c.re as f32, c.im as f32),
            other => Complex32::new(f32::from_scalar(other), 0.0),
        }
    }
}

impl Element for Complex64 {
    const DTYPE: DType = DType::Complex128;
    #[inline(always)]
    fn to_scalar(self) -> Scalar {
        Scalar::Complex(self)
    }
    #[inline(always)]
    fn from_scalar(s: Scalar) -> Self {
        match s {
            Scalar::Complex(c) => c,
            other => Complex64::new(f64::from_scalar(other), 0.0),
        }
    }
}

/// Calls `$body` with the type alias `$t` bound to the Rust element type of `$dtype`.
#[macro_export]
#[doc(hidden)]
macro_rules! with_dtype {
    ($dtype:expr, $t:ident => $body:expr) => {{
        use $crate::dtype::DType as __D;
        match $dtype {
            __D::Bool => {
                type $t = bool;
                $body
            }
            __D::I8 => {
                type $t = i8;
                $body
            }
            __D::I16 => {
                type $t = i16;
                $body
            }
            __D::I32 => {
                type $t = i32;
                $body
            }
            __D::I64 => {
                type $t = i64;
                $body
            }
            __D::U8 => {
                type $t = u8;
                $body
            }
            __D::U16 => {
                type $t = u16;
                $body
            }
            __D::U32 => {
                type $t = u32;
                $body
            }
            __D::U64 => {
                type $t = u64;
                $body
            }
            __D::F16 => {
                type $t = $crate::dtype::f16;
                $body
            }
            __D::BF16 => {
                type $t = $crate::dtype::bf16;
                $body
            }
            __D::F32 => {
                type $t = f32;
                $body
            }
            __D::F64 => {
                type $t = f64;
                $body
            }
            __D::Complex64 => {
                type $t = $crate::dtype::Complex32;
                $body
            }
            __D::Complex128 => {
                type $t = $crate::dtype::Complex64;
                $body
            }
        }
    }};
}

/// `(type code, bits)` per dtype, indexed by `DType as usize` (`ALL` lists the dtypes in
/// declaration order, which the loop checks at compile time).
const DLPACK_CODE_BITS: [(u8, u8); DType::ALL.len()] = {
    let mut t = [(0, 0); DType::ALL.len()];
    let mut i = 0;
    while i < DType::ALL.len() {
        let d = DType::ALL[i];
        assert!(d as usize == i, "DType::ALL is in declaration order");
        t[i] = d.dlpack_code_bits_of();
        i += 1;
    }
    t
};

/// [`DType::from_dlpack_code_bits`]'s table: rows are DLPack type codes up to `kDLBool`,
/// columns 8, 16, 32, 64 and 128 bits.
const DLPACK_TABLE: [[Option<DType>; 5]; 7] = {
    let mut t = [[None; 5]; 7];
    let mut i = 0;
    while i < DType::ALL.len() {
        let d = DType::ALL[i];
        let (code, bits) = d.dlpack_code_bits();
        t[code as usize][(bits.trailing_zeros() - 3) as usize] = Some(d);
        i += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_64_halves_the_64_bit_types_and_keeps_their_kind() {
        for d in DType::ALL {
            let wide = matches!(d.kind(), Kind::Int | Kind::UInt | Kind::Float)
                && d.size_in_bytes() == 8
                || d == DType::Complex128;
            match d.narrow_64() {
                Some(n) => {
                    assert!(wide, "{d} narrowed to {n}");
                    assert_eq!(n.kind(), d.kind(), "{d} -> {n}");
                    assert_eq!(2 * n.size_in_bytes(), d.size_in_bytes(), "{d} -> {n}");
                }
                None => assert!(!wide, "{d} not narrowed"),
            }
        }
    }

    #[test]
    fn promotion_is_symmetric_and_idempotent() {
        for a in DType::ALL {
            assert_eq!(DType::promote(a, a), a);
            for b in DType::ALL {
                assert_eq!(DType::promote(a, b), DType::promote(b, a), "{a} {b}");
            }
        }
    }

    #[test]
    fn promotion_matches_numpy() {
        use DType::*;
        let cases = [
            (Bool, I8, I8),
            (U8, I8, I16),
            (U32, I32, I64),
            (U64, I64, F64),
            (I8, F16, F16),
            (I16, F16, F32),
            (I32, F32, F64),
            (F16, BF16, F32),
            (F32, F64, F64),
            (F64, Complex64, Complex128),
            (F32, Complex64, Complex64),
            (I64, Complex64, Complex128),
        ];
        for (a, b, want) in cases {
            assert_eq!(DType::promote(a, b), want, "{a} + {b}");
        }
    }

    #[test]
    fn dlpack_codes_round_trip() {
        for d in DType::ALL {
            let (c, b) = d.dlpack_code_bits();
            assert_eq!(DType::from_dlpack_code_bits(c, b), Some(d));
        }
        assert_eq!(DType::Bool.dlpack_code_bits(), (6, 8));
        assert_eq!(DType::BF16.dlpack_code_bits(), (4, 16));
        assert_eq!(DType::Complex64.dlpack_code_bits(), (5, 64));
        assert_eq!(DType::from_dlpack_code_bits(6, 1), None);
    }

    #[test]
    fn dlpack_code_table_matches_a_search_of_every_dtype() {
        for code in 0..=u8::MAX {
            for bits in 0..=u8::MAX {
                let found = DType::ALL
                    .into_iter()
                    .find(|d| d.dlpack_code_bits() == (code, bits));
                assert_eq!(
                    DType::from_dlpack_code_bits(code, bits),
                    found,
                    "({code}, {bits})"
                );
            }
        }
    }
}
