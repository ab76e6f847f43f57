//! [`KernelSpec`]: what one generated kernel computes (the cache key), and
//! [`KernelSource`], the spec with its generated source, which drivers compile.

use crate::backends::{BinaryOp, BitsForm, ReduceOp, UnaryOp};
use crate::dtype::DType;

/// The per-element operation of a map kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MapOp {
    /// One operand.
    Unary(UnaryOp),
    /// Two operands of one dtype.
    Binary(BinaryOp),
    /// Conversion to the output dtype (a strided copy when the dtypes are equal).
    Cast,
    /// `where`: a bool condition, then two operands of the input dtype.
    Select,
}

impl MapOp {
    /// Operands read per element.
    pub fn arity(self) -> usize {
        match self {
            MapOp::Binary(_) => 2,
            MapOp::Select => 3,
            _ => 1,
        }
    }
    /// The dtype of operand `k` for an op on `input` (the condition of `where` is bool).
    pub fn operand_dtype(self, k: usize, input: crate::dtype::DType) -> crate::dtype::DType {
        if self == MapOp::Select && k == 0 {
            crate::dtype::DType::Bool
        } else {
            input
        }
    }
    /// The op's name, as errors use it.
    pub fn name(self) -> &'static str {
        match self {
            MapOp::Unary(op) => op.name(),
            MapOp::Binary(op) => op.name(),
            MapOp::Cast => "cast",
            MapOp::Select => "where",
        }
    }
}

/// One kernel, as generated: everything that changes its source. Shapes and strides are
/// launch parameters, so one kernel serves every shape of its rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KernelSpec {
    /// `out[i] = op(in0[at0(i)], ..)` over a contiguous output of `rank` (merged) axes.
    Map {
        /// The per-element operation.
        op: MapOp,
        /// The operands' dtype (the values' dtype for `where`).
        input: DType,
        /// The output's dtype.
        output: DType,
        /// Axes after merging.
        rank: u8,
    },
    /// Every element of a contiguous output set to one value.
    Fill {
        /// The element's dtype.
        dtype: DType,
    },
    /// One pass of a reduction: `kept` output axes, `reduced` axes folded into a value of
    /// the accumulator dtype (the input's, or f32 for half floats); written as `output`.
    Reduce {
        /// The reduction.
        op: ReduceOp,
        /// The dtype read.
        input: DType,
        /// The dtype written (partials, or the result).
        output: DType,
        /// Output axes after merging.
        kept: u8,
        /// Reduced axes after merging.
        reduced: u8,
    },
    /// Threefry-2x32 random bits of a block of `rank` (merged) axes, written as `form`.
    Threefry {
        /// Which words each element's output holds.
        form: BitsForm,
        /// Axes of the block after merging.
        rank: u8,
    },
    /// Tiled matrix product over `batch` broadcast batch axes.
    Matmul {
        /// The operands' and output's dtype.
        dtype: DType,
        /// Batch axes after merging.
        batch: u8,
    },
}

impl KernelSpec {
    /// The kernel's entry-point name: unique per spec, a valid C identifier.
    pub fn entry(&self) -> String {
        let d = |t: DType| t.name();
        match *self {
            KernelSpec::Map {
                op,
                input,
                output,
                rank,
            } => format!("map_{}_{}_{}_r{rank}", op.name(), d(input), d(output)),
            KernelSpec::Fill { dtype } => format!("fill_{}", d(dtype)),
            KernelSpec::Reduce {
                op,
                input,
                output,
                kept,
                reduced,
            } => format!(
                "reduce_{}_{}_{}_k{kept}_r{reduced}",
                op.name(),
                d(input),
                d(output)
            ),
            KernelSpec::Matmul { dtype, batch } => format!("matmul_{}_b{batch}", d(dtype)),
            KernelSpec::Threefry { form, rank } => format!("threefry_{}_r{rank}", form.name()),
        }
    }
}

/// A kernel ready for a driver: its spec (what a fake driver executes), entry point and
/// source (what a real one compiles).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelSource {
    /// What the kernel computes.
    pub spec: KernelSpec,
    /// The `extern "C"` entry point's name.
    pub entry: String,
    /// C-family source in the runtime's dialect (CUDA C++ for NVRTC and hiprtc).
    pub source: String,
}
