//! How dtypes look in WGSL: the type kernels compute in, the array type they are stored as,
//! and the load/store expressions between the two.
//!
//! Buffers keep dlarray's byte layout (so uploads, downloads and DLPack copies are plain
//! byte copies): bool is one byte per element, packed four to a `u32` word in WGSL; f16 is
//! stored as `f16` (with `SHADER_F16`) and computed in f32, as the CPU backend does.

use super::context::Ctx;
use crate::dtype::DType;

/// A dtype kernels can compute on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Elem {
    pub dtype: DType,
    /// The WGSL type values are computed in: `f32`, `i32`, `u32` or `bool`.
    pub ty: &'static str,
    /// The WGSL array element type the buffer is declared as.
    pub store: &'static str,
}

impl Elem {
    /// The kernel view of `dtype` on this device, if kernels support it.
    pub fn of(ctx: &Ctx, dtype: DType) -> Option<Elem> {
        let (ty, store) = match dtype {
            DType::F32 => ("f32", "f32"),
            DType::I32 => ("i32", "i32"),
            DType::U32 => ("u32", "u32"),
            DType::Bool => ("bool", "u32"),
            DType::F16 if ctx.f16 => ("f32", "f16"),
            _ => return None,
        };
        Some(Elem { dtype, ty, store })
    }

    /// One element per byte, four to a word: outputs are written a word at a time.
    pub fn packed(self) -> bool {
        self.dtype == DType::Bool
    }

    pub fn needs_f16(self) -> bool {
        self.store == "f16"
    }

    /// WGSL that loads element `i` (an expression of type u32) of array `arr` as `self.ty`.
    pub fn load(self, arr: &str, i: &str) -> String {
        match self.store {
            "f16" => format!("f32({arr}[{i}])"),
            _ if self.packed() => {
                format!("((({arr}[({i}) >> 2u] >> ((({i}) & 3u) * 8u)) & 0xffu) != 0u)")
            }
            _ => format!("{arr}[{i}]"),
        }
    }

    /// WGSL converting value `v` (of `self.ty`) to what is stored: the array element for
    /// unpacked types, the byte (as u32) for packed ones.
    pub fn store(self, v: &str) -> String {
        match self.store {
            "f16" => format!("f16({v})"),
            _ if self.packed() => format!("select(0u, 1u, {v})"),
            _ => v.to_string(),
        }
    }

    /// A literal of `self.ty`.
    pub fn lit(self, v: f64) -> String {
        match self.ty {
            "f32" => format!("f32({v:?})"),
            "i32" => format!("i32({})", v as i64),
            "u32" => format!("{}u", v as u64),
            _ => (v != 0.0).to_string(),
        }
    }
}

/// `enable f16;` when any of `elems` stores f16.
pub(crate) fn enables(elems: &[Elem]) -> &'static str {
    if elems.iter().any(|e| e.needs_f16()) {
        "enable f16;\n"
    } else {
        ""
    }
}

/// WGSL helpers every kernel may call.
pub(crate) const PRELUDE: &str = r#"
fn is_nan(x: f32) -> bool {
    // By bits: a shader compiler may assume `x != x` is false.
    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}
fn fmax(a: f32, b: f32) -> f32 { return select(b, a, a > b || is_nan(a)); }
fn fmin(a: f32, b: f32) -> f32 { return select(b, a, a < b || is_nan(a)); }
"#;

/// Words in every kernel's parameter block: a uniform buffer (fixed size) rather than a
/// storage array, so CPU drivers load parameters once instead of per element (3x faster
/// elementwise kernels on lavapipe).
pub(crate) const PARAM_WORDS: usize = 256;

/// The parameter block and its accessor; kernels read parameter `i` as `pp(i)`.
pub(crate) const PARAMS: &str = "@group(0) @binding(0) var<uniform> p: array<vec4<u32>, 64>;
fn pp(i: u32) -> u32 { return p[i >> 2u][i & 3u]; }
";
