//! The DLPack import harness shared by the fuzz target (`fuzz/fuzz_targets/dlpack_import.rs`)
//! and its corpus replay in the test suite (`tests/fuzz_replay.rs`).
//!
//! Bytes become an arbitrary managed tensor (every field: ABI and version, flags, device,
//! dtype, ndim, shape, strides, byte_offset, NULL pointers) over a real 4 KiB buffer, with a
//! counting deleter. Checked: no crash; the import is an error or an array whose shape and
//! elements are exactly what the tensor describes (read independently here, in i128); the
//! deleter runs exactly once. A tensor that would claim memory outside its buffer (a lying
//! producer, which no consumer can detect) gets NULL data instead, unless its sizes alone
//! make it invalid: so every tensor the import could accept is truthful, and every invalid
//! one still reaches the import.
#![allow(dead_code)]

use dlarray::dlpack::ffi::*;
use dlarray::{Array, DType, RawDLPack};
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

const BUF: usize = 4096;

struct Cursor<'a>(&'a [u8], usize);

impl Cursor<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.0.get(self.1).copied().unwrap_or(0);
        self.1 += 1;
        b
    }
    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.byte() as usize % from.len()]
    }
    fn u64(&mut self) -> u64 {
        (0..8).fold(0u64, |a, _| (a << 8) | u64::from(self.byte()))
    }
}

fn dim(c: &mut Cursor<'_>) -> i64 {
    match c.byte() % 12 {
        0 => 0,
        1 => -1,
        2 => i64::MAX,
        3 => 1 << 32,
        4 => 1 << 62,
        5 => i64::MIN,
        6..=8 => 1,
        _ => i64::from(c.byte() % 9),
    }
}

fn stride(c: &mut Cursor<'_>) -> i64 {
    match c.byte() % 12 {
        0 => 0,
        1 => -1,
        2 => i64::MAX,
        3 => i64::MIN,
        4 => 1 << 40,
        5 => -(1 << 40),
        6 => 1,
        _ => i64::from(c.byte() as i8 / 8),
    }
}

/// Storage for one tensor, kept by its holder until the deleter runs.
struct Parts {
    buf: Vec<u64>,
    shape: Vec<i64>,
    strides: Vec<i64>,
    count: Arc<AtomicUsize>,
}

#[repr(C)]
struct Legacy {
    managed: DLManagedTensor,
    parts: Parts,
}
#[repr(C)]
struct Versioned {
    managed: DLManagedTensorVersioned,
    parts: Parts,
}

unsafe extern "C" fn del_legacy(p: *mut DLManagedTensor) {
    // SAFETY: heads a Legacy leaked in `run`.
    let b = unsafe { Box::from_raw(p as *mut Legacy) };
    b.parts.count.fetch_add(1, Ordering::SeqCst);
}
unsafe extern "C" fn del_versioned(p: *mut DLManagedTensorVersioned) {
    // SAFETY: heads a Versioned leaked in `run`.
    let b = unsafe { Box::from_raw(p as *mut Versioned) };
    b.parts.count.fetch_add(1, Ordering::SeqCst);
}

fn item_size(code: u8, bits: u8) -> Option<usize> {
    DType::from_dlpack_code_bits(code, bits).map(|d| d.size_in_bytes())
}

/// Byte offsets (from `data + byte_offset`) of every element, row-major, if the tensor is
/// small enough to walk; `None` when the shape is invalid or too large.
fn element_offsets(shape: &[i64], strides: &[i64], item: usize) -> Option<Vec<i128>> {
    if shape.iter().any(|&d| d < 0) {
        return None;
    }
    let n = shape
        .iter()
        .try_fold(1i128, |a, &d| a.checked_mul(d as i128))?;
    if n > 100_000 {
        return None;
    }
    let mut out = Vec::with_capacity(n as usize);
    let mut idx = vec![0i64; shape.len()];
    for _ in 0..n {
        let off: i128 = idx
            .iter()
            .zip(strides)
            .map(|(&i, &s)| i as i128 * s as i128)
            .sum::<i128>()
            * item as i128;
        out.push(off);
        for k in (0..shape.len()).rev() {
            idx[k] += 1;
            if idx[k] < shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    Some(out)
}

/// Runs one input through the import and checks it; returns whether an array came out.
pub fn run(data: &[u8]) -> bool {
    let mut c = Cursor(data, 0);
    let abi = c.byte();
    let versioned = abi % 4 != 0;
    let version = DLPackVersion {
        major: c.pick(&[1, 1, 1, 0, 2, 100]),
        minor: u32::from(c.byte() % 5),
    };
    let flags = u64::from(c.byte() & 7);
    let device = DLDevice::new(
        DLDeviceType(c.pick(&[1, 1, 1, 1, 2, 3, 4, 7, 10, 11, 13, 14, 20, 99, -1])),
        i32::from(c.byte() % 3),
    );
    let dtype = DLDataType {
        code: c.pick(&[0, 1, 2, 2, 2, 4, 5, 6, 3, 10, 17, 99]),
        bits: c.pick(&[8, 16, 32, 32, 64, 64, 128, 1, 4, 12, 0]),
        lanes: c.pick(&[1, 1, 1, 1, 1, 0, 2, 4]),
    };
    let ndim: i32 = match c.byte() % 10 {
        0 => -1,
        1 => 65,
        n => i32::from(n % 5),
    };
    let alloc = ndim.clamp(0, 70) as usize;
    let shape: Vec<i64> = (0..alloc).map(|_| dim(&mut c)).collect();
    let null_strides = c.byte() % 5 == 0;
    let strides: Vec<i64> = if null_strides {
        Vec::new()
    } else {
        (0..alloc).map(|_| stride(&mut c)).collect()
    };
    let null_shape = c.byte() % 17 == 0;
    let byte_offset = match c.byte() % 8 {
        0 => u64::MAX,
        1 => 1,
        2 => c.u64() % BUF as u64,
        _ => 0,
    };
    let misalign = c.byte() % 7 == 0;
    let mut null_data = c.byte() % 13 == 0;
    let mut buf: Vec<u64> = (0..BUF as u64 / 8)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .collect();
    let bool_ok = c.byte() % 3 != 0;
    if dtype.code == 6 && bool_ok {
        // Mostly valid bools (0/1 bytes), sometimes not.
        for w in buf.iter_mut() {
            *w &= 0x0101_0101_0101_0101;
        }
    }
    // Where element [0, ..] lies: the middle of the buffer, so negative strides fit too.
    let start = BUF as i128 / 2 + i128::from(misalign) + byte_offset as i128;
    let item = item_size(dtype.code, dtype.bits);
    // The independent reading of what this tensor describes (None: not walkable).
    let eff_strides: Vec<i64> = if null_strides {
        let mut s = vec![1i64; shape.len()];
        for k in (0..shape.len().saturating_sub(1)).rev() {
            s[k] = s[k + 1].saturating_mul(shape[k + 1].max(1));
        }
        s
    } else {
        strides.clone()
    };
    let offsets = item.and_then(|it| element_offsets(&shape, &eff_strides, it));
    let fits = offsets.as_ref().is_some_and(|o| {
        let it = item.unwrap_or(1) as i128;
        o.iter()
            .all(|&x| start + x >= 0 && start + x + it <= BUF as i128)
    });
    let shape_invalid = shape.iter().any(|&d| d < 0)
        || shape
            .iter()
            .try_fold(1i128, |a, &d| a.checked_mul(d as i128))
            .and_then(|n| n.checked_mul(item.unwrap_or(1) as i128))
            .is_none_or(|b| b > i64::MAX as i128);
    let empty = shape.contains(&0);
    let mut buf_probe = 0u8;
    let here = &mut buf_probe as *mut u8 as u128; // any live address: data is one like it
    let offset_overflows = here + BUF as u128 + byte_offset as u128 > usize::MAX as u128;
    // A tensor the import might accept must be truthful about its memory.
    if !fits && !shape_invalid && !empty && !offset_overflows {
        null_data = true;
    }
    // What the buffer holds, kept here: the holder (and the buffer) may be freed as soon as
    // the import copies, before the checks below read the expectation.
    let snapshot: Vec<u8> = buf.iter().flat_map(|w| w.to_ne_bytes()).collect();
    let count = Arc::new(AtomicUsize::new(0));
    let mut parts = Parts {
        buf,
        shape,
        strides,
        count: count.clone(),
    };
    let base = parts.buf.as_mut_ptr() as *mut u8;
    let data_ptr = if null_data {
        std::ptr::null_mut()
    } else {
        // SAFETY: BUF/2 + 1 is inside the buffer.
        unsafe { base.add(BUF / 2 + usize::from(misalign)) as *mut c_void }
    };
    let dl = |p: &mut Parts| DLTensor {
        data: data_ptr,
        device,
        ndim,
        dtype,
        shape: if null_shape || p.shape.is_empty() && ndim != 0 {
            std::ptr::null_mut()
        } else {
            p.shape.as_mut_ptr()
        },
        strides: if null_strides {
            std::ptr::null_mut()
        } else {
            p.strides.as_mut_ptr()
        },
        byte_offset,
    };
    let raw = if versioned {
        let mut b = Box::new(Versioned {
            managed: DLManagedTensorVersioned {
                version,
                manager_ctx: std::ptr::null_mut(),
                deleter: Some(del_versioned),
                flags,
                dl_tensor: dl(&mut parts),
            },
            parts,
        });
        b.managed.dl_tensor = dl(&mut b.parts);
        RawDLPack::Versioned(Box::into_raw(b) as *mut DLManagedTensorVersioned)
    } else {
        let mut b = Box::new(Legacy {
            managed: DLManagedTensor {
                dl_tensor: dl(&mut parts),
                manager_ctx: std::ptr::null_mut(),
                deleter: Some(del_legacy),
            },
            parts,
        });
        b.managed.dl_tensor = dl(&mut b.parts);
        RawDLPack::Legacy(Box::into_raw(b) as *mut DLManagedTensor)
    };
    // SAFETY: a live tensor we own; shape/strides hold `ndim` entries where non-NULL and
    // 0 <= ndim <= 70; data is truthful wherever the import could accept the tensor.
    let result = unsafe { Array::from_dlpack_raw(raw) };
    let ok = result.is_ok();
    if let Ok(a) = &result {
        check_array(
            a,
            start,
            &snapshot,
            item,
            &offsets,
            versioned && flags & 1 != 0,
        );
    }
    drop(result);
    assert_eq!(
        count.load(Ordering::SeqCst),
        1,
        "the deleter runs exactly once"
    );
    ok
}

/// An accepted tensor must read back exactly as described.
#[allow(clippy::unnecessary_cast)] // `as *const u8` is a no-op for T = u8 only
fn check_array(
    a: &Array,
    start: i128,
    snapshot: &[u8],
    item: Option<usize>,
    offsets: &Option<Vec<i128>>,
    read_only: bool,
) {
    assert_eq!(a.is_read_only(), read_only, "READ_ONLY honoured");
    let (Some(item), Some(offsets)) = (item, offsets) else {
        assert_eq!(a.size(), 0, "an accepted non-empty tensor was walkable");
        return;
    };
    assert_eq!(a.size(), offsets.len());
    assert_eq!(a.dtype().size_in_bytes(), item);
    let got: Vec<u8> = dlarray::with_dtype!(a.dtype(), T => {
        let v = a.to_vec::<T>().expect("an accepted array reads back");
        // SAFETY: Element types are plain data; the Vec holds v.len() initialised values.
        unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, v.len() * item) }.to_vec()
    });
    let mut want = Vec::with_capacity(got.len());
    for &o in offsets {
        // `fits` held for every accepted non-empty tensor: inside the 4 KiB buffer.
        let at = (start + o) as usize;
        want.extend_from_slice(&snapshot[at..at + item]);
    }
    assert_eq!(got, want, "elements as the tensor describes them");
}
