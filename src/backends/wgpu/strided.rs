//! Kernels that map strided inputs to one contiguous output (elementwise ops, casts, copies),
//! and how they are split into dispatches that respect the binding-size limit.
//!
//! The inputs' axes are first merged where every operand is contiguous across them, so a
//! contiguous or broadcast operand costs one division per element. An output too large for
//! one binding is cut along axis 0 into chunks whose every operand window fits one binding;
//! each chunk binds only the byte window it touches.

use super::buffer::WgpuBuffer;
use super::context::{Bind, Ctx, Dispatch, WORKGROUP};
use crate::error::Result;
use crate::layout::Layout;

/// One strided input of a map kernel.
pub(crate) struct Input<'a> {
    pub buffer: &'a WgpuBuffer,
    pub layout: &'a Layout,
    /// Bytes per element.
    pub item: usize,
}

/// The per-element part of a map kernel: WGSL declarations plus the statement body.
pub(crate) struct MapKernel {
    /// Cache key: op, dtypes, element sizes.
    pub key: String,
    /// Declarations (enable directives, helper functions) placed before the entry point.
    pub decls: String,
    /// WGSL array element type of each input and of the output.
    pub input_types: Vec<&'static str>,
    pub output_type: &'static str,
    /// Output elements each invocation writes (4 for one-byte outputs and 2 for two-byte
    /// ones, so each writes a whole word).
    pub per_invocation: u32,
    /// Statements computing invocation `t`'s output; `at(k, i)` gives input `k`'s element
    /// offset for output element `i`, and `pp(0)` the element count.
    pub body: String,
}

/// Axes merged across all operands; size-1 axes dropped (a scalar becomes one axis of 1).
pub(crate) fn merge_axes(shape: &[usize], strides: &[&[isize]]) -> (Vec<usize>, Vec<Vec<isize>>) {
    let mut out_shape: Vec<usize> = Vec::new();
    let mut out_strides: Vec<Vec<isize>> = vec![Vec::new(); strides.len()];
    for k in 0..shape.len() {
        if shape[k] == 1 {
            continue;
        }
        let merge = !out_shape.is_empty()
            && strides
                .iter()
                .zip(&out_strides)
                .all(|(s, o)| o[o.len() - 1] == s[k] * shape[k] as isize);
        if merge {
            let last = out_shape.len() - 1;
            out_shape[last] *= shape[k];
            for (o, s) in out_strides.iter_mut().zip(strides) {
                let l = o.len() - 1;
                o[l] = s[k];
            }
        } else {
            out_shape.push(shape[k]);
            for (o, s) in out_strides.iter_mut().zip(strides) {
                o.push(s[k]);
            }
        }
    }
    if out_shape.is_empty() {
        out_shape.push(1);
        for o in &mut out_strides {
            o.push(0);
        }
    }
    (out_shape, out_strides)
}

/// Elements one index of axis 0 reaches beyond its first (`1 + sum (n-1)|s|` over the
/// other axes): the extent of one axis-0 slice.
fn slice_extent(shape: &[usize], strides: &[isize]) -> u64 {
    1 + shape[1..]
        .iter()
        .zip(&strides[1..])
        .map(|(&n, &s)| (n as u64 - 1) * s.unsigned_abs() as u64)
        .sum::<u64>()
}

/// The byte window operand `(offset, strides)` touches for axis-0 indices `a..b`:
/// (aligned binding offset, binding size, element offset of index `a` relative to it).
fn window(
    shape: &[usize],
    strides: &[isize],
    offset: i64,
    item: u64,
    (a, b): (usize, usize),
    align: u64,
) -> (u64, u64, i64) {
    let first = offset + a as i64 * strides[0] as i64;
    let (mut lo, mut hi) = (first, first);
    let mut reach = |n: usize, s: isize| {
        let r = (n as i64 - 1) * s as i64;
        if r < 0 { lo += r } else { hi += r }
    };
    reach(b - a, strides[0]);
    for (&n, &s) in shape[1..].iter().zip(&strides[1..]) {
        reach(n, s);
    }
    let start = (lo as u64 * item) / align * align;
    let end = ((hi as u64 + 1) * item).div_ceil(4) * 4;
    (start, end - start, first - (start / item) as i64)
}

/// The aligned byte window holding every element `layout` reaches:
/// (binding offset, binding size, the layout's offset in elements relative to it).
pub(crate) fn span_window(layout: &Layout, item: usize, align: u64) -> (u64, u64, u32) {
    let span = layout.span();
    let item = item as u64;
    let start = (span.start as u64 * item) / align * align;
    let end = (span.end.max(span.start + 1) as u64 * item).div_ceil(4) * 4;
    let rel = layout.offset() as u64 - start / item;
    (start, end - start, rel as u32)
}

/// Runs `kernel` over `inputs` (all of the output's shape), writing a new contiguous buffer
/// of elements of `out_item` bytes.
pub(crate) fn run_map(
    ctx: &Ctx,
    device: usize,
    op: &str,
    kernel: &MapKernel,
    inputs: &[Input<'_>],
    out_item: usize,
) -> Result<WgpuBuffer> {
    let shape = inputs[0].layout.shape();
    let n: usize = shape.iter().product();
    let out = WgpuBuffer::alloc(ctx, device, n * out_item)?;
    if n == 0 {
        return Ok(out);
    }
    let strides: Vec<&[isize]> = inputs.iter().map(|i| i.layout.strides()).collect();
    let (shape, strides) = merge_axes(shape, &strides);
    let nd = shape.len();
    let key = format!("{}-nd{}", kernel.key, nd.min(UNROLLED + 1));
    let pipeline = ctx.pipeline(&key, || shader(kernel, nd))?;

    let align = ctx.offset_align().max(16);
    let budget = ctx.max_binding;
    let inner: usize = shape[1..].iter().product();
    // Chunks start where the output's byte offset is aligned.
    let row_bytes = (inner * out_item) as u64;
    let step = (align / gcd(row_bytes, align)) as usize;
    // Axis-0 indices per chunk so that every window fits one binding.
    let mut rows = shape[0];
    let operands = inputs
        .iter()
        .zip(&strides)
        .map(|(i, s)| {
            (
                i.item as u64,
                s[0].unsigned_abs() as u64,
                slice_extent(&shape, s),
            )
        })
        .chain(std::iter::once((
            out_item as u64,
            inner as u64,
            inner as u64,
        )));
    for (item, s0, extent) in operands {
        let fixed = extent * item + align + 4;
        if fixed > budget {
            return Err(too_large(ctx, op, fixed, budget));
        }
        if s0 > 0 {
            rows = rows.min(((budget - fixed) / (s0 * item)) as usize + 1);
        }
    }
    if rows < shape[0] {
        rows = rows / step * step;
        if rows == 0 {
            return Err(too_large(ctx, op, (step as u64) * row_bytes, budget));
        }
    }

    let mut a = 0;
    while a < shape[0] {
        let b = (a + rows).min(shape[0]);
        let count = ((b - a) * inner) as u32;
        let mut params = vec![count, nd as u32, 0];
        params.push((b - a) as u32);
        params.extend(shape[1..].iter().map(|&d| d as u32));
        let mut binds = Vec::with_capacity(inputs.len() + 1);
        for (input, s) in inputs.iter().zip(&strides) {
            let item = input.item as u64;
            let (off, size, rel) =
                window(&shape, s, input.layout.offset() as i64, item, (a, b), align);
            params.push(rel as i32 as u32);
            params.extend(s.iter().map(|&x| x as i32 as u32));
            binds.push(Bind {
                buffer: &input.buffer.raw,
                offset: off,
                size,
            });
        }
        let out_off = (a * inner * out_item) as u64;
        let out_size = ((count as usize * out_item) as u64).div_ceil(4) * 4;
        binds.push(Bind {
            buffer: &out.raw,
            offset: out_off,
            size: out_size,
        });
        let groups = u64::from(count.div_ceil(kernel.per_invocation)).div_ceil(WORKGROUP.into());
        ctx.submit(&[Dispatch {
            pipeline: pipeline.clone(),
            params,
            binds,
            workgroups: ctx.grid(groups)?,
        }])?;
        a = b;
    }
    Ok(out)
}

pub(crate) fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.max(1)
}

/// The limit [`too_large`] names, and [`is_binding_limit`] recognises.
const LIMIT_NAME: &str = "max_storage_buffer_binding_size";

/// Whether `e` is [`too_large`]'s error (callers with another way round fall back to it).
pub(crate) fn is_binding_limit(e: &crate::error::Error) -> bool {
    matches!(e, crate::error::Error::Backend { message, .. } if message.contains(LIMIT_NAME))
}

pub(crate) fn too_large(ctx: &Ctx, op: &str, need: u64, limit: u64) -> crate::error::Error {
    ctx.error(format!(
        "{op} needs a binding of {need} bytes for one slice of axis 0, over the adapter's \
         {LIMIT_NAME} of {limit} bytes; make the operands contiguous \
         (or split the array) first"
    ))
}

/// The WGSL of a map kernel: parameter block, bindings, the strided offset function, entry.
fn shader(k: &MapKernel, nd: usize) -> String {
    let mut s = String::new();
    s += &k.decls;
    s += super::wgsl::PRELUDE;
    s += super::wgsl::PARAMS;
    for (i, ty) in k.input_types.iter().enumerate() {
        s += &format!(
            "@group(0) @binding({}) var<storage, read> in{i}: array<{ty}>;\n",
            i + 1
        );
    }
    s += &format!(
        "@group(0) @binding({}) var<storage, read_write> out: array<{}>;\n",
        k.input_types.len() + 1,
        k.output_type
    );
    // Parameter block: [count, ndim, 0, shape[ndim], then per input: offset, strides[ndim]].
    s += &offset_fn(nd);
    s += r#"
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) ng: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let t = (wg.x + wg.y * ng.x) * 256u + li;
"#;
    s += &k.body;
    s += "\n}\n";
    s
}

/// Ranks up to which the offset computation is unrolled with the rank fixed at compile time
/// (rank 1, the contiguous and broadcast case, then needs no division at all).
const UNROLLED: usize = 4;

/// WGSL `at(k, lin)`: element offset of input `k` for output element `lin`. Index math is
/// most of an elementwise kernel's cost on a CPU driver, so small ranks get straight-line
/// code instead of a loop over the parameter block.
fn offset_fn(nd: usize) -> String {
    if nd > UNROLLED {
        return r#"
fn at(k: u32, lin: u32) -> u32 {
    let nd = pp(1);
    let base = 3u + nd + k * (nd + 1u);
    var off = bitcast<i32>(pp(base));
    var rem = lin;
    var d = nd;
    loop {
        if d == 0u { break; }
        d -= 1u;
        let n = pp(3u + d);
        off += i32(rem % n) * bitcast<i32>(pp(base + 1u + d));
        rem /= n;
    }
    return u32(off);
}
"#
        .to_string();
    }
    let mut f = format!(
        "
fn at(k: u32, lin: u32) -> u32 {{
    let base = {}u + k * {}u;
    var off = bitcast<i32>(pp(base));
",
        3 + nd,
        nd + 1
    );
    if nd == 1 {
        f += "    off += i32(lin) * bitcast<i32>(pp(base + 1u));\n";
    } else {
        f += "    var rem = lin;\n";
        for d in (0..nd).rev() {
            if d == 0 {
                f += "    off += i32(rem) * bitcast<i32>(pp(base + 1u));\n";
            } else {
                f += &format!(
                    "    off += i32(rem % pp({sh}u)) * bitcast<i32>(pp(base + {st}u));
    rem /= pp({sh}u);
",
                    sh = 3 + d,
                    st = 1 + d
                );
            }
        }
    }
    f += "    return u32(off);\n}\n";
    f
}

/// Output elements per invocation of an unpacked elementwise kernel: CPU drivers (lavapipe)
/// pay a fixed cost per invocation that several elements amortise.
pub(crate) const PER_INVOCATION: u32 = 4;

/// Body of an elementwise kernel: `value` is the WGSL expression of output element `i`
/// (written in terms of `i`), `store` turns a value into what is stored.
pub(crate) fn elementwise_body(
    value: &str,
    packed_bits: Option<u32>,
    store: impl Fn(&str) -> String,
) -> String {
    if let Some(bits) = packed_bits {
        format!(
            "    let first = t * {per}u;
    if first >= pp(0) {{ return; }}
    var w = 0u;
    for (var j = 0u; j < {per}u; j++) {{
        let i = first + j;
        if i < pp(0) {{ w |= ({}) << ({bits}u * j); }}
    }}
    out[t] = w;",
            store(value),
            per = 32 / bits
        )
    } else {
        format!(
            "    let first = t * {per}u;
    if first >= pp(0) {{ return; }}
    for (var j = 0u; j < {per}u; j++) {{
        let i = first + j;
        if i < pp(0) {{ out[i] = {}; }}
    }}",
            store(value),
            per = PER_INVOCATION
        )
    }
}

/// A dtype-blind strided copy of elements of `item` bytes (1, 2, 4, 8 or 16).
pub(crate) fn copy_kernel(item: usize) -> MapKernel {
    let body = if item >= 4 {
        let w = item / 4;
        format!(
            "    if t >= pp(0) {{ return; }}
    let s = at(0u, t) * {w}u;
    for (var k = 0u; k < {w}u; k++) {{ out[t * {w}u + k] = in0[s + k]; }}"
        )
    } else {
        let per = 4 / item;
        let mask = if item == 1 { "0xffu" } else { "0xffffu" };
        format!(
            "    let first = t * {per}u;
    if first >= pp(0) {{ return; }}
    var w = 0u;
    for (var j = 0u; j < {per}u; j++) {{
        let i = first + j;
        if i < pp(0) {{
            let byte = at(0u, i) * {item}u;
            w |= ((in0[byte >> 2u] >> ((byte & 3u) * 8u)) & {mask}) << (j * {bits}u);
        }}
    }}
    out[t] = w;",
            bits = item * 8
        )
    };
    MapKernel {
        key: format!("copy{item}"),
        decls: String::new(),
        input_types: vec!["u32"],
        output_type: "u32",
        per_invocation: if item >= 4 { 1 } else { (4 / item) as u32 },
        body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_axes_keeps_broadcast_and_drops_unit_axes() {
        let (s, st) = merge_axes(&[2, 1, 3, 4], &[&[12, 99, 4, 1], &[0, 0, 0, 1]]);
        // Axes 0 and 2 merge (both operands step evenly across them); axis 3 does not.
        assert_eq!(s, vec![6, 4]);
        assert_eq!(st, vec![vec![4, 1], vec![0, 1]]);
        let (s, st) = merge_axes(&[], &[&[]]);
        assert_eq!((s, st), (vec![1], vec![vec![0]]));
    }

    #[test]
    fn windows_cover_negative_strides() {
        // Axis 0 reversed over 10 rows of 4: rows 2..5 are elements 20..32, row 2 first at 28.
        let (off, size, rel) = window(&[10, 4], &[-4, 1], 36, 4, (2, 5), 16);
        assert_eq!((off, size, rel), (80, 48, 8));
    }
}

#[cfg(test)]
mod dump {
    /// Rank 1 (contiguous or broadcast operands) needs no division; the kernel text is
    /// printed for profiling outside the crate (`--nocapture`).
    #[test]
    fn rank_one_offsets_have_no_division() {
        let f = super::super::wgsl::Elem {
            dtype: crate::dtype::DType::F32,
            ty: "f32",
            store: "f32",
        };
        let k = super::super::elementwise::binary(crate::backends::BinaryOp::Add, f, f).unwrap();
        let wgsl = super::shader(&k, 1);
        println!("{wgsl}");
        let at = &wgsl[wgsl.find("fn at(").unwrap()..wgsl.find("@compute").unwrap()];
        assert!(!at.contains('%') && !at.contains('/'), "{at}");
        assert!(super::shader(&k, 3)[..].contains("% pp("));
    }
}
