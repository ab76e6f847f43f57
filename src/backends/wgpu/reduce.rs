//! Reductions over axes: a workgroup tree reduction, in as many passes as needed.
//!
//! Each workgroup folds one part of one output's reduced elements (strided reads, 256
//! invocations), then halves its partial values in workgroup memory down to one. A
//! reduction with few outputs is split into several parts per output so every core has
//! work; the parts' partial results are reduced again by the same kernel, contiguously.

use super::buffer::WgpuBuffer;
use super::context::{Bind, Ctx, Dispatch, WORKGROUP};
use super::strided::{merge_axes, span_window, too_large};
use super::wgsl::{Elem, PRELUDE, enables};
use crate::backends::ReduceOp;
use crate::error::Result;
use crate::layout::Layout;

/// Workgroups a reduction aims to keep busy; each folds at least `MIN_PART` elements.
const TARGET_GROUPS: usize = 64;
const MIN_PART: usize = 4 * WORKGROUP as usize;

/// The accumulator of `op` over `x`: WGSL type, identity and fold.
fn reducer(op: ReduceOp, ty: &str) -> Option<(&'static str, &'static str, &'static str)> {
    Some(match (op, ty) {
        (ReduceOp::Sum, "f32") => ("f32", "0.0", "a + b"),
        (ReduceOp::Sum, "i32") => ("i32", "0", "a + b"),
        (ReduceOp::Sum, "u32") => ("u32", "0u", "a + b"),
        (ReduceOp::Prod, "f32") => ("f32", "1.0", "a * b"),
        (ReduceOp::Prod, "i32") => ("i32", "1", "a * b"),
        (ReduceOp::Prod, "u32") => ("u32", "1u", "a * b"),
        (ReduceOp::Max, "f32") => ("f32", "bitcast<f32>(0xff800000u)", "fmax(a, b)"),
        (ReduceOp::Max, "i32") => ("i32", "(-2147483647 - 1)", "max(a, b)"),
        (ReduceOp::Max, "u32") => ("u32", "0u", "max(a, b)"),
        (ReduceOp::Min, "f32") => ("f32", "bitcast<f32>(0x7f800000u)", "fmin(a, b)"),
        (ReduceOp::Min, "i32") => ("i32", "2147483647", "min(a, b)"),
        (ReduceOp::Min, "u32") => ("u32", "4294967295u", "min(a, b)"),
        _ => return None,
    })
}

/// Whether `op` reduces `x` on this backend (bool goes through u32 in the caller).
pub(crate) fn supported(op: ReduceOp, x: Elem) -> bool {
    reducer(op, x.ty).is_some()
}

/// [`reducer`] of `input`, or `Unsupported` naming the op and dtype.
fn reducer_of(op: ReduceOp, input: Elem) -> Result<(&'static str, &'static str, &'static str)> {
    reducer(op, input.ty)
        .ok_or_else(|| crate::error::Error::unsupported("wgpu", op.name(), input.dtype))
}

/// The kernel type partial results of `input` are kept in.
fn acc_elem(input: Elem, acc: &'static str) -> Elem {
    Elem {
        dtype: input.dtype,
        ty: acc,
        store: acc,
    }
}

/// The reduced-axes offset of element `r`: straight-line code for one reduced axis of known
/// position (the common case), the general loop otherwise.
fn red_offset(nk: usize, nr: usize) -> String {
    if nr == 1 && nk <= 4 {
        format!("i32(r) * bitcast<i32>(pp({}u))", 7 + 2 * nk + 1)
    } else {
        "offset(7u + 2u * nk, nr, r)".to_string()
    }
}

#[allow(clippy::too_many_arguments)]
fn shader(
    input: Elem,
    acc: &str,
    ident: &str,
    fold: &str,
    out: &str,
    store: &str,
    red_off: &str,
) -> String {
    let load = input.load("x", "i");
    format!(
        r#"{enable}{PRELUDE}
{params}
@group(0) @binding(1) var<storage, read> x: array<{xs}>;
@group(0) @binding(2) var<storage, read_write> out: array<{out}>;
var<workgroup> part: array<{acc}, 256>;

fn fold(a: {acc}, b: {acc}) -> {acc} {{ return {fold}; }}
fn load(i: u32) -> {acc} {{ return {load}; }}

// Parameter block: [R, parts, chunk, outputs, nk, nr, offset,
//                   kept shape[nk], kept strides[nk], reduced shape[nr], reduced strides[nr]].
fn offset(first: u32, nd: u32, lin: u32) -> i32 {{
    var off = 0;
    var rem = lin;
    var d = nd;
    loop {{
        if d == 0u {{ break; }}
        d -= 1u;
        let n = pp(first + d);
        off += i32(rem % n) * bitcast<i32>(pp(first + nd + d));
        rem /= n;
    }}
    return off;
}}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) ng: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {{
    let g = wg.x + wg.y * ng.x;
    if g >= pp(1) * pp(3) {{ return; }}
    let o = g / pp(1);
    let part_index = g % pp(1);
    let nk = pp(4);
    let nr = pp(5);
    let base = bitcast<i32>(pp(6)) + offset(7u, nk, o);
    let r0 = part_index * pp(2);
    let r1 = min(pp(0), r0 + pp(2));
    var acc: {acc} = {ident};
    for (var r = r0 + li; r < r1; r += 256u) {{
        acc = fold(acc, load(u32(base + {red_off})));
    }}
    part[li] = acc;
    workgroupBarrier();
    for (var s = 128u; s > 0u; s >>= 1u) {{
        if li < s {{ part[li] = fold(part[li], part[li + s]); }}
        workgroupBarrier();
    }}
    if li == 0u {{ out[g] = {store}; }}
}}
"#,
        params = super::wgsl::PARAMS,
        // The last pass of a split reduction reads f32 partial results and may store f16.
        enable = if out == "f16" {
            "enable f16;\n"
        } else {
            enables(&[input])
        },
        xs = input.store,
        load = if input.ty == acc {
            load
        } else {
            format!("{acc}({load})")
        },
        store = store.replace("$", "part[0]"),
        red_off = red_off,
    )
}

/// Reduces `x` (a strided view `layout`, of kernel type `input`) over `axes` into a new
/// buffer of `out` elements.
///
/// An input wider than one binding is cut in halves along its widest axis until the pieces
/// fit: pieces along a reduced axis give partial results (in the accumulator type) that are
/// reduced once more; pieces along the outermost kept axis give consecutive blocks of the
/// output.
pub(crate) fn reduce(
    ctx: &Ctx,
    device: usize,
    op: ReduceOp,
    (x, layout, input): (&WgpuBuffer, &Layout, Elem),
    axes: &[usize],
    out: Elem,
) -> Result<WgpuBuffer> {
    let (acc, _, _) = reducer_of(op, input)?;
    let align = ctx.offset_align().max(16);
    if span_window(layout, input.dtype.size_in_bytes(), align).1 <= ctx.max_binding {
        return reduce_fitting(ctx, device, op, (x, layout, input), axes, out);
    }
    let acc_elem = acc_elem(input, acc);
    let partial = reduce_split(ctx, device, op, (x, layout, input), axes, acc_elem)?;
    if out == acc_elem || out.store == acc {
        return Ok(partial);
    }
    let outputs = partial.len / 4;
    let flat = Layout::contiguous(&[outputs])?;
    let input = super::strided::Input {
        buffer: &partial,
        layout: &flat,
        item: 4,
    };
    let kernel = super::elementwise::cast(acc_elem, out);
    super::strided::run_map(
        ctx,
        device,
        op.name(),
        &kernel,
        &[input],
        out.dtype.size_in_bytes(),
    )
}

/// [`reduce`] into the accumulator type `acc`, halving the input until it fits.
fn reduce_split(
    ctx: &Ctx,
    device: usize,
    op: ReduceOp,
    (x, layout, input): (&WgpuBuffer, &Layout, Elem),
    axes: &[usize],
    acc: Elem,
) -> Result<WgpuBuffer> {
    let align = ctx.offset_align().max(16);
    let size = span_window(layout, input.dtype.size_in_bytes(), align).1;
    if size <= ctx.max_binding {
        return reduce_fitting(ctx, device, op, (x, layout, input), axes, acc);
    }
    let (shape, strides) = (layout.shape(), layout.strides());
    let widest = (0..shape.len())
        .filter(|&a| shape[a] > 1)
        .max_by_key(|&a| (shape[a] - 1) * strides[a].unsigned_abs());
    let first_kept = (0..shape.len()).find(|&a| !axes.contains(&a) && shape[a] > 1);
    let Some(axis) = widest.filter(|&a| axes.contains(&a) || Some(a) == first_kept) else {
        // The widest axis is an inner kept axis: its outputs are not one block.
        return Err(too_large(ctx, op.name(), size, ctx.max_binding));
    };
    let n = shape[axis] as isize;
    let mut halves = Vec::with_capacity(2);
    for (start, stop) in [(0, n / 2), (n / 2, n)] {
        let mut slices = vec![crate::layout::Slice::full(); layout.ndim()];
        slices[axis] = crate::layout::Slice::with_step(start, stop, 1);
        let piece = layout.slice(&slices)?;
        halves.push(reduce_split(
            ctx,
            device,
            op,
            (x, &piece, input),
            axes,
            acc,
        )?);
    }
    // Both halves side by side: a block of the output each (kept axis), or two partial
    // results to reduce again (reduced axis).
    let (lo, hi) = (halves[0].len, halves[1].len);
    let joined = WgpuBuffer::alloc(ctx, device, lo + hi)?;
    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    encoder.copy_buffer_to_buffer(&halves[0].raw, 0, &joined.raw, 0, lo as u64);
    encoder.copy_buffer_to_buffer(&halves[1].raw, 0, &joined.raw, lo as u64, hi as u64);
    ctx.queue.submit([encoder.finish()]);
    ctx.check()?;
    if !axes.contains(&axis) {
        return Ok(joined);
    }
    let stacked = Layout::contiguous(&[2, lo / 4])?;
    reduce_fitting(ctx, device, op, (&joined, &stacked, acc), &[0], acc)
}

/// [`reduce`] of an input that fits one binding.
fn reduce_fitting(
    ctx: &Ctx,
    device: usize,
    op: ReduceOp,
    (x, layout, input): (&WgpuBuffer, &Layout, Elem),
    axes: &[usize],
    out: Elem,
) -> Result<WgpuBuffer> {
    let (acc, ident, fold) = reducer_of(op, input)?;
    let (shape, strides) = (layout.shape(), layout.strides());
    let split = |keep: bool| -> (Vec<usize>, Vec<isize>) {
        let idx: Vec<usize> = (0..shape.len())
            .filter(|k| axes.contains(k) != keep)
            .collect();
        let s: Vec<usize> = idx.iter().map(|&k| shape[k]).collect();
        let st: Vec<isize> = idx.iter().map(|&k| strides[k]).collect();
        let (s, mut st) = merge_axes(&s, &[&st]);
        (s, st.remove(0))
    };
    let outputs: usize = (0..shape.len())
        .filter(|k| !axes.contains(k))
        .map(|k| shape[k])
        .product();
    let result = WgpuBuffer::alloc(ctx, device, outputs * out.dtype.size_in_bytes())?;
    if outputs == 0 {
        return Ok(result);
    }
    let acc_elem = acc_elem(input, acc);
    let align = ctx.offset_align().max(16);
    // The first pass reads `x`; later ones read the previous pass's partial results.
    let mut partials: Option<WgpuBuffer> = None;
    let mut layout = layout.clone();
    let (mut kept, mut red) = (split(true), split(false));
    loop {
        let r: usize = red.0.iter().product();
        let mut parts = TARGET_GROUPS
            .div_ceil(outputs)
            .min(r.div_ceil(MIN_PART))
            .max(1);
        let chunk = r.div_ceil(parts).max(1);
        parts = r.div_ceil(chunk).max(1);
        let last = parts == 1;
        let (src, elem) = match &partials {
            None => (x, input),
            Some(p) => (p, acc_elem),
        };
        let (out_ty, store) = if last {
            (out.store, out.store("$"))
        } else {
            (acc, "$".to_string())
        };
        let key = format!("reduce-{op}-{}-{}-{}", elem.store, elem.ty, out_ty);
        let red_off = red_offset(kept.0.len(), red.0.len());
        let key = format!("{key}-{red_off}");
        let pipeline = ctx.pipeline(&key, || {
            shader(elem, acc, ident, fold, out_ty, &store, &red_off)
        })?;
        let (off, size, rel) = span_window(&layout, elem.dtype.size_in_bytes().min(4), align);
        let (off, size, rel) = if partials.is_some() {
            (0, src.raw.size(), 0)
        } else {
            (off, size, rel)
        };
        if size > ctx.max_binding {
            return Err(too_large(ctx, op.name(), size, ctx.max_binding));
        }
        let target = if last {
            None
        } else {
            Some(WgpuBuffer::alloc(ctx, device, outputs * parts * 4)?)
        };
        let dst = target.as_ref().unwrap_or(&result);
        if dst.raw.size() > ctx.max_binding {
            return Err(too_large(ctx, op.name(), dst.raw.size(), ctx.max_binding));
        }
        let mut params = vec![
            r as u32,
            parts as u32,
            chunk as u32,
            outputs as u32,
            kept.0.len() as u32,
            red.0.len() as u32,
            rel,
        ];
        params.extend(kept.0.iter().map(|&d| d as u32));
        params.extend(kept.1.iter().map(|&d| d as i32 as u32));
        params.extend(red.0.iter().map(|&d| d as u32));
        params.extend(red.1.iter().map(|&d| d as i32 as u32));
        ctx.submit(&[Dispatch {
            pipeline,
            params,
            binds: vec![
                Bind {
                    buffer: &src.raw,
                    offset: off,
                    size,
                },
                Bind::whole(&dst.raw),
            ],
            workgroups: ctx.grid((outputs * parts) as u64)?,
        }])?;
        if last {
            return Ok(result);
        }
        // wgpu keeps the previous partials alive until the submitted pass has run.
        partials = target;
        layout = Layout::contiguous(&[outputs, parts])?;
        kept = (vec![outputs], vec![parts as isize]);
        red = (vec![parts], vec![1]);
    }
}
