//! Batched matrix product: 64x64 output tiles per workgroup, staged through workgroup
//! memory 16 along k at a time; each of the 16x16 invocations accumulates a 4x4 block.
//! Operands are read through their strides (a transposed operand costs no copy); the
//! batch offsets of both operands are computed on the host, so broadcast batch axes work.

use super::buffer::WgpuBuffer;
use super::context::{Bind, Ctx, Dispatch};
use super::strided::{span_window, too_large};
use super::wgsl::{Elem, enables};
use crate::array::layout::Layout;
use crate::error::{Error, Result};

const TILE: usize = 64;
/// Batches per dispatch: under the grid's z limit, and a multiple of 32 so each
/// dispatch's window of the offsets buffer starts aligned.
const BATCHES_PER_DISPATCH: usize = 65280;

fn shader(x: Elem) -> String {
    let acc = x.ty;
    format!(
        r#"{enable}
@group(0) @binding(0) var<storage, read> p: array<u32>;
@group(0) @binding(1) var<storage, read> offs: array<u32>;
@group(0) @binding(2) var<storage, read> a: array<{xs}>;
@group(0) @binding(3) var<storage, read> b: array<{xs}>;
@group(0) @binding(4) var<storage, read_write> out: array<{xs}>;
var<workgroup> ta: array<{acc}, 1024>;
var<workgroup> tb: array<{acc}, 1024>;

// Parameter block: [m, n, k, a row stride, a col stride, b row stride, b col stride,
//                   first batch of this dispatch].
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {{
    let m = p[0];
    let n = p[1];
    let k = p[2];
    let ars = bitcast<i32>(p[3]);
    let acs = bitcast<i32>(p[4]);
    let brs = bitcast<i32>(p[5]);
    let bcs = bitcast<i32>(p[6]);
    let aoff = bitcast<i32>(offs[2u * wg.z]);
    let boff = bitcast<i32>(offs[2u * wg.z + 1u]);
    let row0 = wg.y * 64u;
    let col0 = wg.x * 64u;
{acc_decl}
    for (var k0 = 0u; k0 < k; k0 += 16u) {{
        for (var e = 0u; e < 4u; e++) {{
            let idx = li + e * 256u;
            let ar = row0 + idx / 16u;
            let ac = k0 + idx % 16u;
            var va = {zero};
            if ar < m && ac < k {{
                let i = u32(aoff + i32(ar) * ars + i32(ac) * acs);
                va = {load_a};
            }}
            ta[idx] = va;
            let br = k0 + idx / 64u;
            let bc = col0 + idx % 64u;
            var vb = {zero};
            if br < k && bc < n {{
                let i = u32(boff + i32(br) * brs + i32(bc) * bcs);
                vb = {load_b};
            }}
            tb[idx] = vb;
        }}
        workgroupBarrier();
        for (var kk = 0u; kk < 16u; kk++) {{
{inner}
        }}
        workgroupBarrier();
    }}
    let base = wg.z * m * n;
{write}
}}
"#,
        enable = enables(&[x]),
        xs = x.store,
        zero = x.lit(0.0),
        load_a = x.load("a", "i"),
        load_b = x.load("b", "i"),
        acc_decl = acc_decl(x),
        inner = inner_product(),
        write = write_out(x),
    )
}

// The 4x4 block each invocation accumulates is written out as sixteen scalars: arrays
// indexed in loops become per-lane memory on CPU drivers, straight-line scalars stay in
// vector registers.

fn acc_decl(x: Elem) -> String {
    (0..16)
        .map(|v| format!("    var c{v}: {} = {};\n", x.ty, x.lit(0.0)))
        .collect()
}

fn inner_product() -> String {
    let mut s = String::new();
    for i in 0..4 {
        s += &format!("            let a{i} = ta[(lid.y * 4u + {i}u) * 16u + kk];\n");
    }
    for j in 0..4 {
        s += &format!("            let b{j} = tb[kk * 64u + lid.x * 4u + {j}u];\n");
    }
    for i in 0..4 {
        for j in 0..4 {
            s += &format!("            c{v} += a{i} * b{j};\n", v = i * 4 + j);
        }
    }
    s
}

fn write_out(x: Elem) -> String {
    let mut s = String::new();
    for i in 0..4 {
        for j in 0..4 {
            s += &format!(
                "    {{ let r = row0 + lid.y * 4u + {i}u; let c = col0 + lid.x * 4u + {j}u;
      if r < m && c < n {{ out[base + r * n + c] = {}; }} }}\n",
                x.store(&format!("c{}", i * 4 + j))
            );
        }
    }
    s
}

/// `a @ b` for `a: [batch.., m, k]`, `b: [batch.., k, n]` (batch axes already broadcast).
pub(crate) fn matmul(
    ctx: &Ctx,
    device: usize,
    x: Elem,
    (a, la): (&WgpuBuffer, &Layout),
    (b, lb): (&WgpuBuffer, &Layout),
) -> Result<WgpuBuffer> {
    let nd = la.ndim();
    if nd < 2 || lb.ndim() != nd {
        return Err(Error::invalid(
            "matmul operands must have the same rank >= 2",
        ));
    }
    let (m, k, n) = (la.shape()[nd - 2], la.shape()[nd - 1], lb.shape()[nd - 1]);
    let batch_shape = &la.shape()[..nd - 2];
    let batches: usize = batch_shape.iter().product();
    let item = x.dtype.size_in_bytes();
    let out = WgpuBuffer::alloc(ctx, device, batches * m * n * item)?;
    if batches * m * n == 0 {
        return Ok(out);
    }
    if k == 0 {
        // An empty sum: zeros.
        return super::fill::fill(ctx, device, &vec![0u8; item], batches * m * n);
    }
    let align = ctx.offset_align().max(16);
    let (a_off, a_size, a_rel) = span_window(la, item, align);
    let (b_off, b_size, b_rel) = span_window(lb, item, align);
    for size in [a_size, b_size, out.raw.size()] {
        if size > ctx.max_binding {
            return Err(too_large(ctx, "matmul", size, ctx.max_binding));
        }
    }
    // Element offset of every batch's matrices, relative to the bound windows.
    let mut offs: Vec<u32> = Vec::with_capacity(2 * batches);
    let mut idx = vec![0usize; nd - 2];
    for _ in 0..batches {
        let at = |l: &Layout, rel: u32| {
            let o: isize = idx
                .iter()
                .zip(l.strides())
                .map(|(&i, &s)| i as isize * s)
                .sum();
            (rel as isize + o) as i32 as u32
        };
        offs.push(at(la, a_rel));
        offs.push(at(lb, b_rel));
        for d in (0..idx.len()).rev() {
            idx[d] += 1;
            if idx[d] < batch_shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    let offs_buf = {
        use wgpu::util::DeviceExt;
        ctx.device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("matmul offsets"),
                contents: bytemuck::cast_slice(&offs),
                usage: wgpu::BufferUsages::STORAGE,
            })
    };
    let key = format!("matmul-{}", x.dtype);
    let pipeline = ctx.pipeline(&key, || shader(x))?;
    let (sa, sb) = (la.strides(), lb.strides());
    let mut first = 0;
    while first < batches {
        let count = BATCHES_PER_DISPATCH.min(batches - first);
        let params = vec![
            m as u32,
            n as u32,
            k as u32,
            sa[nd - 2] as i32 as u32,
            sa[nd - 1] as i32 as u32,
            sb[nd - 2] as i32 as u32,
            sb[nd - 1] as i32 as u32,
            first as u32,
        ];
        let out_off = (first * m * n * item) as u64;
        ctx.submit(&[Dispatch {
            pipeline: pipeline.clone(),
            params,
            binds: vec![
                Bind {
                    buffer: &offs_buf,
                    offset: (first * 8) as u64,
                    size: (count * 8) as u64,
                },
                Bind {
                    buffer: &a.raw,
                    offset: a_off,
                    size: a_size,
                },
                Bind {
                    buffer: &b.raw,
                    offset: b_off,
                    size: b_size,
                },
                Bind {
                    buffer: &out.raw,
                    offset: out_off,
                    size: ((count * m * n * item) as u64).div_ceil(4) * 4,
                },
            ],
            workgroups: [
                n.div_ceil(TILE) as u32,
                m.div_ceil(TILE) as u32,
                count as u32,
            ],
        }])?;
        first += count;
    }
    Ok(out)
}
