//! Filling a buffer with one repeated element, for any dtype: the element's bytes make a
//! pattern of 1, 2 or 4 words that a kernel repeats (zeros use the queue's clear instead).

use super::buffer::WgpuBuffer;
use super::context::{Bind, Ctx, Dispatch, WORKGROUP};
use crate::error::Result;

const SHADER: &str = r#"
{PARAMS}
@group(0) @binding(1) var<storage, read_write> out: array<u32>;

// Parameter block: [words, pattern length, pattern words..].
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) ng: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let t = (wg.x + wg.y * ng.x) * 256u + li;
    if t >= pp(0) { return; }
    out[t] = pp(2u + t % pp(1));
}
"#;

/// A buffer of `len` elements, each the bytes `element`.
pub(crate) fn fill(ctx: &Ctx, device: usize, element: &[u8], len: usize) -> Result<WgpuBuffer> {
    let out = WgpuBuffer::alloc(ctx, device, len * element.len())?;
    let bytes = out.raw.size();
    if len == 0 {
        return Ok(out);
    }
    if element.iter().all(|&b| b == 0) {
        let mut encoder = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        encoder.clear_buffer(&out.raw, 0, None);
        ctx.queue.submit([encoder.finish()]);
        ctx.check()?;
        return Ok(out);
    }
    // Elements of 1 or 2 bytes repeat within a word; larger ones are whole words.
    let mut pattern = element.to_vec();
    while pattern.len() < 4 {
        pattern.extend_from_slice(element);
    }
    let words: Vec<u32> = pattern
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let pipeline = ctx.pipeline("fill", || SHADER.replace("{PARAMS}", super::wgsl::PARAMS))?;
    // Windows start on multiples of the pattern (16 bytes at most) and of the alignment.
    let window = ctx.max_binding / 256 * 256;
    let mut start = 0u64;
    while start < bytes {
        let size = window.min(bytes - start);
        let mut params = vec![(size / 4) as u32, words.len() as u32];
        params.extend(&words);
        ctx.submit(&[Dispatch {
            pipeline: pipeline.clone(),
            params,
            binds: vec![Bind {
                buffer: &out.raw,
                offset: start,
                size,
            }],
            workgroups: ctx.grid((size / 4).div_ceil(WORKGROUP.into()))?,
        }])?;
        start += size;
    }
    Ok(out)
}
