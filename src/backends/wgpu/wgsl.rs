//! How dtypes look in WGSL: the type kernels compute in, the array type they are stored as,
//! and the load/store expressions between the two.
//!
//! Buffers keep dlarray's byte layout (so uploads, downloads and DLPack copies are plain
//! byte copies): bool and 8-bit integers are one byte per element, packed four to a `u32`
//! word in WGSL, and 16-bit integers two to a word (WGSL has no narrower integer; they
//! compute in `i32`/`u32`, and keeping the low bits on store wraps them as NumPy does); f16
//! is stored as `f16` (with `SHADER_F16`) and computed in f32, as the CPU backend does.

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
            DType::I8 | DType::I16 => ("i32", "u32"),
            DType::U8 | DType::U16 => ("u32", "u32"),
            DType::F16 if ctx.f16 => ("f32", "f16"),
            _ => return None,
        };
        Some(Elem { dtype, ty, store })
    }

    /// Bits per element of a dtype packed several to a `u32` word (bool and 8-bit integers:
    /// 8, 16-bit integers: 16); `None` for one element per array entry. Packed outputs are
    /// written a word at a time.
    pub fn packed_bits(self) -> Option<u32> {
        match self.dtype {
            DType::Bool | DType::I8 | DType::U8 => Some(8),
            DType::I16 | DType::U16 => Some(16),
            _ => None,
        }
    }

    pub fn packed(self) -> bool {
        self.packed_bits().is_some()
    }

    pub fn needs_f16(self) -> bool {
        self.store == "f16"
    }

    /// WGSL that loads element `i` (an expression of type u32) of array `arr` as `self.ty`.
    pub fn load(self, arr: &str, i: &str) -> String {
        let Some(bits) = self.packed_bits() else {
            return match self.store {
                "f16" => format!("f32({arr}[{i}])"),
                _ => format!("{arr}[{i}]"),
            };
        };
        // Element i is lane (i mod lanes) of word i / lanes, `lanes` 4 or 2.
        let (lane, log) = if bits == 8 { (3, 2) } else { (1, 1) };
        let word = format!("{arr}[({i}) >> {log}u]");
        let shift = format!("((({i}) & {lane}u) * {bits}u)");
        match self.ty {
            "bool" => format!("((({word} >> {shift}) & 0xffu) != 0u)"),
            // The element's bits moved to the top, then an arithmetic shift extends the sign.
            "i32" => format!(
                "(bitcast<i32>({word} << ({top}u - {shift})) >> {top}u)",
                top = 32 - bits
            ),
            _ => format!("(({word} >> {shift}) & {mask})", mask = mask(bits)),
        }
    }

    /// WGSL converting value `v` (of `self.ty`) to what is stored: the array element for
    /// unpacked types, the byte (as u32) for packed ones.
    pub fn store(self, v: &str) -> String {
        match (self.packed_bits(), self.ty) {
            (Some(_), "bool") => format!("select(0u, 1u, {v})"),
            // The low bits: integer results wrap to the element's width.
            (Some(bits), "i32") => format!("(bitcast<u32>({v}) & {})", mask(bits)),
            (Some(bits), _) => format!("(({v}) & {})", mask(bits)),
            _ if self.store == "f16" => format!("f16({v})"),
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

/// The WGSL mask of a packed element's `bits`.
fn mask(bits: u32) -> &'static str {
    if bits == 8 { "0xffu" } else { "0xffffu" }
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
