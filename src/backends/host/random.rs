//! Random bits on the host: the Threefry-2x32 hash of each element's counter, in parallel.

use super::engine::{out_ptr, out_slice, par_ranges};
use super::{HostBuffer, HostDevice};
use crate::backends::MemoryKind;
use crate::backends::threefry::{BitsForm, Counters};
use crate::error::Result;
use std::mem::MaybeUninit;

pub(crate) fn random_bits(
    dev: &HostDevice,
    kind: MemoryKind,
    key: [u32; 2],
    counters: &Counters,
    form: BitsForm,
) -> Result<HostBuffer> {
    let n = counters.len();
    let w = form.words();
    let words = n.checked_mul(w).ok_or_else(|| {
        crate::error::Error::invalid(format!("random bits: {n} elements overflow"))
    })?;
    let bytes = crate::layout::checked_bytes(words, 4, dev.name())?;
    let mut out = dev.alloc(bytes, kind)?;
    let o = out_ptr::<u32>(&mut out);
    // 20 rounds per element: about 100 simple operations for 8 bytes written, so the
    // parallel threshold is counted as if each element moved far more bytes than it does.
    par_ranges(dev, n, 64 * w, |r| {
        // SAFETY: the ranges `par_ranges` hands out are disjoint and inside 0..n, so words
        // w*r.start .. w*r.end are inside `out` and touched by this call only.
        let dst = unsafe { out_slice(o, &(w * r.start..w * r.end)) };
        // SAFETY: `hash_into` writes every word of `dst` and reads none; u32 has no invalid
        // bit patterns, so viewing the uninitialised words as u32 to write them is sound.
        let dst = unsafe { &mut *(dst as *mut [MaybeUninit<u32>] as *mut [u32]) };
        counters.hash_into(key, form, r, dst);
    });
    Ok(out)
}
