//! Random bits on a wgpu device: the Threefry-2x32 hash of each element's counter, one
//! invocation per element. WGSL has no 64-bit integers, so the kernel takes blocks whose
//! counters all fit in 32 bits (the high counter word is then 0); others are hashed on the
//! host by the caller.

use super::buffer::WgpuBuffer;
use super::context::{Bind, Ctx, Dispatch, WORKGROUP};
use crate::backends::threefry::{BitsForm, Counters};
use crate::error::Result;

/// Axes a block may have after merging.
const MAX_RANK: usize = 8;

const SHADER: &str = r#"
{PARAMS}
@group(0) @binding(1) var<storage, read_write> out: array<u32>;

fn rotl(x: u32, r: u32) -> u32 { return (x << r) | (x >> (32u - r)); }

// Parameter block: [elements, first element, key0, key1, form, rank, offset,
// shape[rank], strides[rank]]. Form 0: w0 ^ w1; 1: w0, w1; 2: w1, w0 (a little-endian u64).
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) ng: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let t = (wg.x + wg.y * ng.x) * 256u + li;
    if t >= pp(0u) { return; }
    let rank = pp(5u);
    var rest = pp(1u) + t;
    var counter = pp(6u);
    for (var k = rank; k > 0u; k--) {
        let n = pp(6u + k);
        counter += (rest % n) * pp(6u + rank + k);
        rest /= n;
    }
    let k0 = pp(2u); let k1 = pp(3u); let k2 = k0 ^ k1 ^ 0x1BD11BDAu;
    var x0 = 0u + k0;
    var x1 = counter + k1;
    let ks = array<u32, 3>(k0, k1, k2);
    let rot = array<u32, 8>(13u, 15u, 26u, 6u, 17u, 29u, 16u, 24u);
    for (var i = 0u; i < 5u; i++) {
        for (var j = 0u; j < 4u; j++) {
            x0 += x1;
            x1 = rotl(x1, rot[(i % 2u) * 4u + j]) ^ x0;
        }
        x0 += ks[(i + 1u) % 3u];
        x1 += ks[(i + 2u) % 3u] + i + 1u;
    }
    switch pp(4u) {
        case 0u: { out[t] = x0 ^ x1; }
        case 1u: { out[2u * t] = x0; out[2u * t + 1u] = x1; }
        default: { out[2u * t] = x1; out[2u * t + 1u] = x0; }
    }
}
"#;

/// The merged block as 32-bit shape, strides and offset, or `None` when some counter
/// needs more than 32 bits or there are too many axes.
fn merged_u32(c: &Counters) -> Option<(Vec<u32>, Vec<u32>, u32)> {
    let m = c.merged();
    if m.last()? > u32::MAX as u64 || m.shape.len() > MAX_RANK {
        return None;
    }
    let shape = m.shape.iter().map(|&n| n as u32).collect();
    let strides = m.strides.iter().map(|&s| s as u32).collect();
    Some((shape, strides, m.offset as u32))
}

/// The hashes of `counters` as `form`, or `None` when the kernel cannot take this block.
pub(crate) fn random_bits(
    ctx: &Ctx,
    device: usize,
    key: [u32; 2],
    counters: &Counters,
    form: BitsForm,
) -> Result<Option<WgpuBuffer>> {
    let Some((shape, strides, offset)) = merged_u32(counters) else {
        return Ok(None);
    };
    let n = counters.len();
    let w = form.words();
    let out = WgpuBuffer::alloc(ctx, device, n * w * 4)?;
    if n == 0 {
        return Ok(Some(out));
    }
    let code = match form {
        BitsForm::Xor => 0,
        BitsForm::Pair => 1,
        _ => 2,
    };
    let pipeline = ctx.pipeline("threefry", || {
        SHADER.replace("{PARAMS}", super::wgsl::PARAMS)
    })?;
    // Windows of whole elements within the binding limit.
    let per_window = (ctx.max_binding / 256 * 256) as usize / (4 * w);
    let mut first = 0usize;
    while first < n {
        let count = per_window.min(n - first);
        let mut params = vec![
            count as u32,
            first as u32,
            key[0],
            key[1],
            code,
            shape.len() as u32,
            offset,
        ];
        params.extend(&shape);
        params.extend(&strides);
        ctx.submit(&[Dispatch {
            pipeline: pipeline.clone(),
            params,
            binds: vec![Bind {
                buffer: &out.raw,
                offset: (first * w * 4) as u64,
                size: (count * w * 4) as u64,
            }],
            workgroups: ctx.grid((count as u64).div_ceil(WORKGROUP.into()))?,
        }])?;
        first += count;
    }
    Ok(Some(out))
}
