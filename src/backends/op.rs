//! What a kernel is asked to do: op names and strided views of input buffers.

use super::DeviceBuffer;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::layout::Layout;
use std::fmt;

/// A strided, typed view of a buffer: what kernels read.
#[derive(Clone, Copy)]
pub struct TensorRef<'a> {
    /// The memory read.
    pub buffer: &'a dyn DeviceBuffer,
    /// Shape, strides (in elements) and offset of the view into `buffer`.
    pub layout: &'a Layout,
    /// The element type.
    pub dtype: DType,
}

impl fmt::Debug for TensorRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TensorRef({} {:?})", self.dtype, self.layout)
    }
}

macro_rules! op_enum {
    ($(#[$m:meta])* $name:ident { $($v:ident => $s:literal),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $(#[doc = concat!("`", $s, "`.")] $v),* }
        impl $name {
            /// Every op, in declaration order (what tests and kernel checks iterate).
            pub const ALL: &'static [$name] = &[$($name::$v),*];
            /// The op's name, as used in errors (`Unsupported { op, .. }`).
            pub const fn name(self) -> &'static str {
                match self { $($name::$v => $s),* }
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str(self.name()) }
        }
    };
}

op_enum!(
    /// Elementwise ops of one operand. Non-exhaustive: a user backend's `match` needs a `_`
    /// arm (returning `Error::Unsupported`), so new ops do not break it.
    #[non_exhaustive]
    UnaryOp {
        Neg => "neg", Abs => "abs", Exp => "exp", Log => "log", Sqrt => "sqrt",
        Sin => "sin", Cos => "cos", Tan => "tan", Tanh => "tanh", LogicalNot => "logical_not",
        Floor => "floor", Ceil => "ceil", Round => "round", Sign => "sign",
        BitwiseInvert => "bitwise_invert",
        Asin => "asin", Acos => "acos", Atan => "atan", Sinh => "sinh", Cosh => "cosh",
        Asinh => "asinh", Acosh => "acosh", Atanh => "atanh", Expm1 => "expm1", Log1p => "log1p",
        Signbit => "signbit", Conj => "conj",
    }
);

op_enum!(
    /// Elementwise ops of two operands (non-exhaustive, as [`UnaryOp`]).
    #[non_exhaustive]
    BinaryOp {
        Add => "add", Sub => "sub", Mul => "mul", Div => "div",
        Maximum => "maximum", Minimum => "minimum", Pow => "pow",
        Eq => "equal", Ne => "not_equal", Lt => "less", Le => "less_equal",
        Gt => "greater", Ge => "greater_equal",
        LogicalAnd => "logical_and", LogicalOr => "logical_or", LogicalXor => "logical_xor",
        BitwiseAnd => "bitwise_and", BitwiseOr => "bitwise_or", BitwiseXor => "bitwise_xor",
        LeftShift => "bitwise_left_shift", RightShift => "bitwise_right_shift",
        FloorDivide => "floor_divide", Remainder => "remainder",
        Atan2 => "atan2", Copysign => "copysign", Hypot => "hypot", Logaddexp => "logaddexp",
        Nextafter => "nextafter",
    }
);

op_enum!(
    /// Reductions over axes (non-exhaustive, as [`UnaryOp`]).
    #[non_exhaustive]
    ReduceOp { Sum => "sum", Max => "max", Min => "min", Prod => "prod" }
);

impl BinaryOp {
    /// Comparisons return bool whatever their input dtype.
    pub const fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
        )
    }
    /// and, or, xor of truth values: bool in, bool out, whatever the operands' dtype.
    pub const fn is_logical(self) -> bool {
        matches!(
            self,
            BinaryOp::LogicalAnd | BinaryOp::LogicalOr | BinaryOp::LogicalXor
        )
    }
    /// and, or, xor: on integers bit by bit, on bool the logical op.
    pub const fn is_bitwise(self) -> bool {
        matches!(
            self,
            BinaryOp::BitwiseAnd | BinaryOp::BitwiseOr | BinaryOp::BitwiseXor
        )
    }
    /// Functions of real floats (integers compute in float64, as NumPy's `/`).
    pub const fn is_real_float(self) -> bool {
        matches!(
            self,
            BinaryOp::Atan2
                | BinaryOp::Copysign
                | BinaryOp::Hypot
                | BinaryOp::Logaddexp
                | BinaryOp::Nextafter
        )
    }
    /// Shifts: integers only. A count outside `0..bits` gives 0 (the sign for a right shift
    /// of a negative value), as NumPy's and XLA's shifts do; C's and WGSL's are undefined or
    /// wrap there, so every kernel tests the count.
    pub const fn is_shift(self) -> bool {
        matches!(self, BinaryOp::LeftShift | BinaryOp::RightShift)
    }
}

/// Checks the output dtype the front end asked a kernel for.
pub(crate) fn expect_out(op: &str, got: DType, want: DType) -> Result<()> {
    if got != want {
        return Err(Error::DTypeMismatch {
            op: "kernel output",
            expected: format!("{want} for {op}"),
            got,
        });
    }
    Ok(())
}
