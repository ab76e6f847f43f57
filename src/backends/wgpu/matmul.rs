//! Batched matrix product: output tiles per workgroup, staged through workgroup memory
//! `TK` along k at a time; each invocation accumulates a block in registers ([`TILING`]).
//! Operands are read through their strides (a transposed operand costs no copy); the
//! batch offsets of both operands are computed on the host, so broadcast batch axes work.

use super::buffer::WgpuBuffer;
use super::context::{Bind, Ctx, Dispatch};
use super::strided::{span_window, too_large};
use super::wgsl::{Elem, enables};
use crate::error::{Error, Result};
use crate::layout::Layout;

/// Tiling: a workgroup of `WX x WY` invocations computes a `(WY*BM) x (WX*BN)` output tile,
/// staging `TK` columns of `a` and rows of `b` at a time through workgroup memory; each
/// invocation accumulates a `BM x BN` block in registers.
#[derive(Clone, Copy)]
pub(crate) struct Tiling {
    pub wx: usize,
    pub wy: usize,
    pub bm: usize,
    pub bn: usize,
    pub tk: usize,
}

/// Measured on lavapipe (2 cores): fewer, fatter invocations pay fewer barrier switches.
pub(crate) const TILING: Tiling = Tiling {
    wx: 8,
    wy: 8,
    bm: 8,
    bn: 8,
    tk: 16,
};

impl Tiling {
    fn tm(self) -> usize {
        self.wy * self.bm
    }
    fn tn(self) -> usize {
        self.wx * self.bn
    }
}

/// Batches per dispatch: under the grid's z limit, and a multiple of 32 so each
/// dispatch's window of the offsets buffer starts aligned.
const BATCHES_PER_DISPATCH: usize = 65280;

pub(crate) fn shader(x: Elem, t: Tiling) -> String {
    let acc = x.ty;
    let (tm, tn, tk) = (t.tm(), t.tn(), t.tk);
    let threads = t.wx * t.wy;
    let zero = x.lit(0.0);
    let mut s = String::new();
    s += enables(&[x]);
    s += super::wgsl::PARAMS;
    s += &format!(
        "@group(0) @binding(1) var<storage, read> offs: array<u32>;
@group(0) @binding(2) var<storage, read> a: array<{xs}>;
@group(0) @binding(3) var<storage, read> b: array<{xs}>;
@group(0) @binding(4) var<storage, read_write> out: array<{xs}>;
var<workgroup> ta: array<{acc}, {na}>;
var<workgroup> tb: array<{acc}, {nb}>;

// Parameter block: [m, n, k, a row stride, a col stride, b row stride, b col stride,
//                   element offset of the output in its binding].
@compute @workgroup_size({wx}, {wy})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {{
    let m = pp(0u);
    let n = pp(1u);
    let k = pp(2u);
    let ars = bitcast<i32>(pp(3u));
    let acs = bitcast<i32>(pp(4u));
    let brs = bitcast<i32>(pp(5u));
    let bcs = bitcast<i32>(pp(6u));
    let aoff = bitcast<i32>(offs[2u * wg.z]);
    let boff = bitcast<i32>(offs[2u * wg.z + 1u]);
    let row0 = wg.y * {tm}u;
    let col0 = wg.x * {tn}u;
",
        xs = x.store,
        na = tm * tk,
        nb = tk * tn,
        wx = t.wx,
        wy = t.wy,
    );
    for v in 0..t.bm * t.bn {
        s += &format!("    var c{v}: {acc} = {zero};\n");
    }
    s += &format!("    for (var k0 = 0u; k0 < k; k0 += {tk}u) {{\n");
    // Cooperative tile loads: each invocation loads its share of both tiles.
    s += &format!(
        "        for (var e = 0u; e < {ea}u; e++) {{
            let idx = li + e * {threads}u;
            let ar = row0 + idx / {tk}u;
            let ac = k0 + idx % {tk}u;
            var va = {zero};
            if ar < m && ac < k {{ let i = u32(aoff + i32(ar) * ars + i32(ac) * acs); va = {la}; }}
            ta[idx] = va;
        }}
        for (var e = 0u; e < {eb}u; e++) {{
            let idx = li + e * {threads}u;
            let br = k0 + idx / {tn}u;
            let bc = col0 + idx % {tn}u;
            var vb = {zero};
            if br < k && bc < n {{ let i = u32(boff + i32(br) * brs + i32(bc) * bcs); vb = {lb}; }}
            tb[idx] = vb;
        }}
        workgroupBarrier();
        for (var kk = 0u; kk < {tk}u; kk++) {{
",
        ea = (tm * tk).div_ceil(threads),
        eb = (tk * tn).div_ceil(threads),
        la = x.load("a", "i"),
        lb = x.load("b", "i"),
    );
    for i in 0..t.bm {
        s += &format!(
            "            let a{i} = ta[(lid.y * {bm}u + {i}u) * {tk}u + kk];\n",
            bm = t.bm
        );
    }
    for j in 0..t.bn {
        s += &format!(
            "            let b{j} = tb[kk * {tn}u + lid.x * {bn}u + {j}u];\n",
            bn = t.bn
        );
    }
    for i in 0..t.bm {
        for j in 0..t.bn {
            s += &format!("            c{v} += a{i} * b{j};\n", v = i * t.bn + j);
        }
    }
    s += "        }\n        workgroupBarrier();\n    }\n    let base = pp(7u) + wg.z * m * n;\n";
    for i in 0..t.bm {
        for j in 0..t.bn {
            s += &format!(
                "    {{ let r = row0 + lid.y * {bm}u + {i}u; let c = col0 + lid.x * {bn}u + {j}u;
      if r < m && c < n {{ out[base + r * n + c] = {}; }} }}\n",
                x.store(&format!("c{}", i * t.bn + j)),
                bm = t.bm,
                bn = t.bn
            );
        }
    }
    s += "}\n";
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
    // Checked here too: the backend may be called directly, not only through `matmul`.
    let total = crate::layout::checked_size(&[batches, m, n])?;
    let out = WgpuBuffer::alloc(
        ctx,
        device,
        crate::layout::checked_bytes(total, item, &ctx.name)?,
    )?;
    if total == 0 {
        return Ok(out);
    }
    if k == 0 {
        // An empty sum: zeros.
        return super::fill::fill(ctx, device, &vec![0u8; item], total);
    }
    let align = ctx.offset_align().max(16);
    let (a_off, a_size, a_rel) = span_window(la, item, align);
    let (b_off, b_size, b_rel) = span_window(lb, item, align);
    let key = format!("matmul-{}", x.dtype);
    let pipeline = ctx.pipeline(&key, || shader(x, TILING))?;
    if batches == 1
        && b_size <= ctx.max_binding
        && (a_size > ctx.max_binding || out.raw.size() > ctx.max_binding)
    {
        let blocks = RowBlocks {
            pipeline: &pipeline,
            b: (&b.raw, b_off, b_size, b_rel),
            dims: (m, k, n, item),
        };
        blocks.run(ctx, (a, la), lb.strides(), &out)?;
        return Ok(out);
    }
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
            0, // each dispatch's output binding starts at its first batch (aligned)
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
                n.div_ceil(TILING.tn()) as u32,
                m.div_ceil(TILING.tm()) as u32,
                count as u32,
            ],
        }])?;
        first += count;
    }
    Ok(out)
}

/// One matrix product whose `a` or output is wider than a binding (and whose `b` fits):
/// computed in blocks of rows, each binding only its rows of `a` and of the output.
struct RowBlocks<'a> {
    pipeline: &'a wgpu::ComputePipeline,
    /// `b`: buffer, binding offset, size, element offset relative to the binding.
    b: (&'a wgpu::Buffer, u64, u64, u32),
    /// m, k, n, bytes per element.
    dims: (usize, usize, usize, usize),
}

impl RowBlocks<'_> {
    fn run(
        &self,
        ctx: &Ctx,
        (a, la): (&WgpuBuffer, &Layout),
        sb: &[isize],
        out: &WgpuBuffer,
    ) -> Result<()> {
        use wgpu::util::DeviceExt;
        let (m, k, n, item) = self.dims;
        let nd = la.ndim();
        let (rs, cs) = (
            la.strides()[nd - 2].unsigned_abs(),
            la.strides()[nd - 1].unsigned_abs(),
        );
        let align = ctx.offset_align().max(16);
        let limit = ctx.max_binding as usize;
        // Rows per block such that both windows fit (binding offsets are aligned down, the
        // kernel adds the rest as an element offset).
        let row_bytes = n * item;
        let slack = align as usize + 4;
        let a_fixed = ((k - 1) * cs + 1) * item + slack;
        let by_a = if rs == 0 {
            m
        } else {
            limit.saturating_sub(a_fixed) / (rs * item) + 1
        };
        let by_out = limit.saturating_sub(slack) / row_bytes.max(1);
        let rows = by_a.min(by_out).min(m);
        if rows == 0 || a_fixed > limit {
            return Err(too_large(
                ctx,
                "matmul",
                (a_fixed + row_bytes) as u64,
                ctx.max_binding,
            ));
        }
        let (b_buf, b_off, b_size, b_rel) = self.b;
        let mut r0 = 0;
        while r0 < m {
            let r1 = (r0 + rows).min(m);
            let mut slices = vec![crate::layout::Slice::full(); nd];
            slices[nd - 2] = crate::layout::Slice::with_step(r0 as isize, r1 as isize, 1);
            let block = la.slice(&slices)?;
            let (a_off, a_size, a_rel) = span_window(&block, item, align);
            let offs = ctx
                .device
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("matmul offsets"),
                    contents: bytemuck::cast_slice(&[a_rel, b_rel]),
                    usage: wgpu::BufferUsages::STORAGE,
                });
            let params = vec![
                (r1 - r0) as u32,
                n as u32,
                k as u32,
                la.strides()[nd - 2] as i32 as u32,
                la.strides()[nd - 1] as i32 as u32,
                sb[nd - 2] as i32 as u32,
                sb[nd - 1] as i32 as u32,
                ((r0 * row_bytes) as u64 % align) as u32 / item as u32,
            ];
            let out_start = (r0 * row_bytes) as u64 / align * align;
            let out_end = ((r1 * row_bytes) as u64).div_ceil(4) * 4;
            ctx.submit(&[Dispatch {
                pipeline: self.pipeline.clone(),
                params,
                binds: vec![
                    Bind::whole(&offs),
                    Bind {
                        buffer: &a.raw,
                        offset: a_off,
                        size: a_size,
                    },
                    Bind {
                        buffer: b_buf,
                        offset: b_off,
                        size: b_size,
                    },
                    Bind {
                        buffer: &out.raw,
                        offset: out_start,
                        size: out_end - out_start,
                    },
                ],
                workgroups: [
                    n.div_ceil(TILING.tn()) as u32,
                    (r1 - r0).div_ceil(TILING.tm()) as u32,
                    1,
                ],
            }])?;
            r0 = r1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod dump {
    /// The f32 kernel for `DLARRAY_TILING=wx,wy,bm,bn,tk` (default: the tiling in use) keeps
    /// its block in scalars; printed for timing variants outside the crate (`--nocapture`).
    #[test]
    fn matmul_block_is_unrolled() {
        let v: Vec<usize> = std::env::var("DLARRAY_TILING")
            .unwrap_or_else(|_| "8,8,8,8,16".into())
            .split(',')
            .map(|x| x.parse().unwrap())
            .collect();
        let t = super::Tiling {
            wx: v[0],
            wy: v[1],
            bm: v[2],
            bn: v[3],
            tk: v[4],
        };
        let f = super::super::wgsl::Elem {
            dtype: crate::dtype::DType::F32,
            ty: "f32",
            store: "f32",
        };
        let wgsl = super::shader(f, t);
        println!("{wgsl}");
        let last = t.bm * t.bn - 1;
        assert!(wgsl.contains(&format!("var c{last}: f32")), "{wgsl}");
        assert!(!wgsl.contains(&format!("var c{}:", last + 1)));
        assert!(wgsl.contains(&format!("@workgroup_size({}, {})", t.wx, t.wy)));
    }
}
