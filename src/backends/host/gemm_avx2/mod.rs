//! A blocked matrix product for f32, f64, float16 and bfloat16 on x86-64 processors with AVX2
//! and FMA (BLIS's loop nest around a 6 x 16 / 6 x 8 register tile).
//!
//! Why our own, where the `gemm` crate's AVX2 kernel is as fast on one thread (92 GFLOP/s
//! each for f32 1024^3 on a Zen 3 core, ~92 % of its FMA peak): its threads are a rayon job
//! the caller waits on, split in fixed shares, so a worker the host descheduled or woke late
//! holds the whole product (2 threads: 16-22 ms after idle against 13-18 here, in
//! `examples/idle_matmul.rs`). Here the threads take row blocks from `par_for`'s counter and
//! the caller computes from the start. float16 and bfloat16 are widened while packing (the
//! crate path cast whole operands first: a 256^3 bfloat16 product took 3x as long as f32).
//! Where the processor has AVX-512 the crate's wider kernels stay in use (see [`enabled`]).
//!
//! The loop nest, outermost first: columns of C in blocks of `nc`, and depth in groups of up
//! to `GROUP_DEPTH`: B's `depth x nc` block (~4 MiB, in the shared L3) is packed once, by all
//! threads. Then each task, a block of `mc` rows (and, for short products, a share of the
//! columns), runs every depth block of the group: it packs its `mc x kc` block of A (in its
//! core's L2), then for each B panel (`kc x NR`, in L1) each A panel: the tile. Two joins per
//! column block and depth group; no thread waits on another inside them.

mod kernel;
mod operand;
mod pack;

pub(crate) use kernel::Tile;
pub(crate) use operand::Operand;
pub(crate) use pack::Strided;

use super::HostDevice;
use super::engine::{SendPtr, par_for};
use std::cell::RefCell;
use std::mem::MaybeUninit;

/// Depth of a block: a B panel of `KC x NR` is 16 KiB, half of L1.
const KC: usize = 256;
/// Bytes of an A block (`mc x kc`), ~144 KiB: well inside a Zen 3 or Skylake core's L2 with
/// room for C's rows and B's panel.
const A_BLOCK_BYTES: usize = 144 * KC * 4;
/// Bytes of a B block (`depth x nc`), 4 MiB: in the shared L3.
const B_BLOCK_BYTES: usize = 4080 * KC * 4;
/// The most depth one packed B block covers (16 depth blocks), so B's block stays ~4 MiB
/// however deep the product.
const GROUP_DEPTH: usize = 16 * KC;
/// The deepest float16 or bfloat16 product [`gemm`] takes: their C is staged in f32 and
/// rounded once, which needs the whole depth in one group.
pub(crate) const NARROW_DEPTH_MAX: usize = GROUP_DEPTH;

/// Whether matmul uses this product for f32, f64, float16 and bfloat16: the processor has AVX2 and FMA and no
/// AVX-512 (there the `gemm` crate's 16-lane kernels are faster), unless `DLARRAY_CPU_GEMM`
/// says `blocked` (always, where AVX2 and FMA exist) or `crate` (never). Read once.
pub(crate) fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| {
        let avx2 = std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma");
        let default = avx2 && !std::arch::is_x86_feature_detected!("avx512f");
        match std::env::var("DLARRAY_CPU_GEMM").as_deref() {
            Ok("crate") => false,
            Ok("blocked") => avx2,
            Ok(other) => {
                log::warn!("DLARRAY_CPU_GEMM={other:?} is neither `blocked` nor `crate`: ignored");
                default
            }
            Err(_) => default,
        }
    })
}

/// `c = a * b` for an `m x k` matrix `a` and a `k x n` matrix `b`; `c` has row stride `ldc`
/// and unit column stride. With `dev`, the work is split over its threads. float16 and
/// bfloat16 accumulate in f32 and are rounded once, as each element of `c` is written.
///
/// # Safety
/// The processor has AVX2 and FMA (and F16C for float16); every element of `a` and `b` is
/// readable; `c` addresses `m x n` elements written by no one else meanwhile; `k > 0`, and
/// at most [`NARROW_DEPTH_MAX`] for float16 and bfloat16.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gemm<S: Operand>(
    dev: Option<&HostDevice>,
    m: usize,
    n: usize,
    k: usize,
    a: Strided<S>,
    b: Strided<S>,
    c: *mut S,
    ldc: usize,
) {
    type T<S> = <S as Operand>::Acc;
    if m == 0 || n == 0 {
        return;
    }
    let (mr, nr) = (T::<S>::MR, T::<S>::NR);
    let size = size_of::<T<S>>();
    let threads = dev.map_or(1, |d| d.threads());
    // Even block sizes: 1030 deep is 5 blocks of 206, not 4 of 256 and one of 6.
    let kc_len = k.div_ceil(k.div_ceil(KC));
    let depth_blocks: Vec<(usize, usize)> = (0..k)
        .step_by(kc_len)
        .map(|pc| (pc, kc_len.min(k - pc)))
        .collect();
    let groups: Vec<&[(usize, usize)]> = depth_blocks.chunks(GROUP_DEPTH / kc_len).collect();
    debug_assert!(
        S::NATIVE || groups.len() == 1,
        "float16 deeper than NARROW_DEPTH_MAX"
    );
    // B's block holds a group's depth: the deeper the group, the fewer its columns.
    let group_depth = k.min(GROUP_DEPTH / kc_len * kc_len);
    let nc_max = (B_BLOCK_BYTES / (group_depth * size))
        .max(1)
        .next_multiple_of(nr);
    let mc_max = (A_BLOCK_BYTES / (KC * size)).next_multiple_of(mr);
    // Row blocks: a multiple of the thread count where the rows allow, so no thread idles
    // at the end (1024 rows on 2 threads: 8 blocks of 128, not 7 of 144 and one of 16).
    let mut row_blocks = m.div_ceil(mc_max);
    if threads > 1 {
        row_blocks = row_blocks.next_multiple_of(threads).min(m.div_ceil(mr));
    }
    let mc_len = m.div_ceil(row_blocks).next_multiple_of(mr);
    let row_blocks = m.div_ceil(mc_len);
    // Too few row blocks for the threads (a short, wide product): split the columns too.
    let col_splits = if row_blocks < threads {
        threads.div_ceil(row_blocks)
    } else {
        1
    };
    let c = SendPtr(c);
    let run = |chunks: usize, f: &(dyn Fn(usize) + Sync)| match dev {
        Some(d) if chunks > 1 => par_for(d, chunks, f),
        _ => (0..chunks).for_each(f),
    };
    for (jc, (g, group)) in (0..n)
        .step_by(nc_max)
        .flat_map(|jc| groups.iter().enumerate().map(move |gg| (jc, gg)))
    {
        // The group's first depth and its depth.
        let g0 = group[0].0;
        let gk = group.iter().map(|&(_, kc)| kc).sum::<usize>();
        let nc = nc_max.min(n - jc);
        let b_panels = nc.div_ceil(nr);
        let per_split = b_panels.div_ceil(col_splits);
        // The group's depth of B for these columns is packed first (depth block by depth
        // block, `gk * nr` elements per panel), so each thread then runs its rows through
        // every depth block of the group without waiting for the others.
        with_scratch(&B_SCRATCH, b_panels * gk * nr, |bp: *mut T<S>| {
            let bp = SendPtr(bp);
            let block_at = |pc: usize, kc: usize, jp: usize| {
                (pc - g0) * nc.next_multiple_of(nr) + jp * kc * nr
            };
            run(b_panels * group.len(), &|task| {
                let (jp, (pc, kc)) = (task % b_panels, group[task / b_panels]);
                let j0 = jp * nr;
                // SAFETY: columns jc + j0.. (at most nr, inside n) and rows pc..pc + kc are
                // elements of b; this panel's kc * nr elements of the scratch (which holds
                // gk * nr per panel) are written by this task only.
                unsafe {
                    pack::b_panel(
                        b,
                        jc + j0,
                        nr.min(nc - j0),
                        pc,
                        kc,
                        bp.ptr().add(block_at(pc, kc, jp)),
                    )
                }
            });
            run(row_blocks * col_splits, &|task| {
                let (block, split) = (task / col_splits, task % col_splits);
                let ic = block * mc_len;
                let mc = mc_len.min(m - ic);
                let a_panels = mc.div_ceil(mr);
                let cols =
                    (split * per_split).min(b_panels)..((split + 1) * per_split).min(b_panels);
                if cols.is_empty() {
                    // More column splits than panels (many threads, a narrow product).
                    return;
                }
                // Where the tiles write: C itself, or (for a narrower S) an f32 block of
                // this task's rows and columns that is rounded into C at the end.
                let (col0, col_end) = (cols.start * nr, (cols.end * nr).min(nc));
                let width = col_end - col0;
                let staged = if S::NATIVE { 0 } else { mc * width };
                with_scratch(&C_SCRATCH, staged, |cs: *mut T<S>| {
                    let (dst, dst_ld) = if S::NATIVE {
                        // `NATIVE`: S is T<S> (Operand's safety contract).
                        (c.ptr().wrapping_add(ic * ldc + jc + col0) as *mut T<S>, ldc)
                    } else {
                        (cs, width)
                    };
                    with_scratch(&A_SCRATCH, a_panels * kc_len * mr, |ap: *mut T<S>| {
                        for (depth_block, &(pc, kc)) in group.iter().enumerate() {
                            for ip in 0..a_panels {
                                let i0 = ip * mr;
                                // SAFETY: rows ic + i0.. (inside m) and columns pc..pc + kc are
                                // elements of a; panel ip holds kc * mr elements of this thread's
                                // scratch.
                                unsafe {
                                    pack::a_panel(
                                        a,
                                        ic + i0,
                                        mr.min(mc - i0),
                                        pc,
                                        kc,
                                        ap.add(ip * kc * mr),
                                    )
                                }
                            }
                            for jp in cols.clone() {
                                let j0 = jp * nr;
                                for ip in 0..a_panels {
                                    let i0 = ip * mr;
                                    // SAFETY: the processor has AVX2 and FMA (the caller's
                                    // promise); both panels were packed with kc steps; the tile
                                    // at (ic + i0, jc + j0) is inside C (or its staged block)
                                    // and belongs to this task's rows and columns only.
                                    unsafe {
                                        T::<S>::tile(
                                            kc,
                                            ap.add(ip * kc * mr),
                                            bp.ptr().add(block_at(pc, kc, jp)),
                                            dst.add(i0 * dst_ld + j0 - col0),
                                            dst_ld,
                                            g > 0 || depth_block > 0,
                                            mr.min(mc - i0),
                                            nr.min(nc - j0),
                                        )
                                    }
                                }
                            }
                        }
                    });
                    if !S::NATIVE {
                        for r in 0..mc {
                            // SAFETY: every tile of these rows and columns was written (the
                            // first depth block writes without reading), so row r of the staged
                            // block is initialised; row ic + r, columns jc + col0.. of C belong
                            // to this task.
                            unsafe {
                                let row = std::slice::from_raw_parts(
                                    cs.add(r * width) as *const T<S>,
                                    width,
                                );
                                let out =
                                    c.ptr().add((ic + r) * ldc + jc + col0) as *mut MaybeUninit<S>;
                                S::narrow(row, std::slice::from_raw_parts_mut(out, width));
                            }
                        }
                    }
                });
            });
        });
    }
}

thread_local! {
    /// Each thread's A block, kept between products (a fresh 144 KiB block faulted in its
    /// pages on every call).
    static A_SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// The calling thread's B block, shared with the helpers.
    static B_SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// Each thread's f32 block of C for a float16 or bfloat16 product, rounded into C once
    /// every depth block is in.
    static C_SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Calls `f` with `len` elements of this thread's scratch `key`, 64-byte aligned (so a
/// 32-byte load never splits a cache line), grown as needed and kept.
fn with_scratch<T, R>(
    key: &'static std::thread::LocalKey<RefCell<Vec<u8>>>,
    len: usize,
    f: impl FnOnce(*mut T) -> R,
) -> R {
    let bytes = len * size_of::<T>() + 64;
    key.with(|cell| match cell.try_borrow_mut() {
        Ok(mut v) => {
            if v.len() < bytes {
                *v = vec![0u8; bytes];
            }
            f(aligned(&mut v))
        }
        // Re-entered on this thread (a product run inside another's task): a block of its own.
        Err(_) => f(aligned(&mut vec![0u8; bytes])),
    })
}

fn aligned<T>(v: &mut [u8]) -> *mut T {
    let p = v.as_mut_ptr();
    // SAFETY: the buffer has 64 bytes beyond what is used, so the aligned start stays inside.
    unsafe { p.add(p.align_offset(64)) as *mut T }
}

#[cfg(test)]
mod tests;
