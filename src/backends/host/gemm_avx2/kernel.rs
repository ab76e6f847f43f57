//! The register tiles: `MR x NR` of C kept in 12 AVX registers while `kc` steps of one packed
//! A panel (MR values per step) and one packed B panel (NR values per step) stream past.
//!
//! Per step: two vector loads of B, MR broadcasts of A and 2 * MR fused multiply-adds into
//! independent accumulators (12 chains cover the FMA units' latency 4 x throughput 2 with
//! room). 12 accumulators + 2 B vectors + 1 broadcast = 15 of the 16 registers, BLIS's
//! Haswell shape (6x16 for f32, 6x8 for f64).

use std::arch::x86_64::*;

/// An element type with a register tile.
pub(crate) trait Tile: Copy + Send + Sync + 'static {
    /// Rows of the tile (the A panel's width).
    const MR: usize;
    /// Columns of the tile (the B panel's width): two vectors.
    const NR: usize;

    /// `C[..mr, ..nr] (+)= A_panel * B_panel` over `kc` steps; `accumulate` adds to C's old
    /// values instead of overwriting them (C may be uninitialised when it is false).
    ///
    /// # Safety
    /// The processor has AVX2 and FMA; `a` holds `kc * MR` and `b` `kc * NR` elements; `c`
    /// addresses an `mr x nr` tile (`mr <= MR`, `nr <= NR`) with row stride `ldc`, written by
    /// no one else meanwhile.
    #[allow(clippy::too_many_arguments)]
    unsafe fn tile(
        kc: usize,
        a: *const Self,
        b: *const Self,
        c: *mut Self,
        ldc: usize,
        accumulate: bool,
        mr: usize,
        nr: usize,
    );
}

/// One tile kernel per element type; the bodies differ only in the intrinsics' names.
macro_rules! tile_kernel {
    ($t:ty, $nr:expr, $lanes:expr, $vec:ty, $zero:ident, $load:ident, $store:ident,
     $bcast:ident, $fma:ident, $add:ident) => {
        impl Tile for $t {
            const MR: usize = 6;
            const NR: usize = $nr;

            unsafe fn tile(
                kc: usize,
                a: *const $t,
                b: *const $t,
                c: *mut $t,
                ldc: usize,
                accumulate: bool,
                mr: usize,
                nr: usize,
            ) {
                // SAFETY: forwarded from the caller.
                unsafe { kernel(kc, a, b, c, ldc, accumulate, mr, nr) }
            }
        }

        #[target_feature(enable = "avx2,fma")]
        #[allow(clippy::too_many_arguments)]
        unsafe fn kernel(
            kc: usize,
            mut a: *const $t,
            mut b: *const $t,
            c: *mut $t,
            ldc: usize,
            accumulate: bool,
            mr: usize,
            nr: usize,
        ) {
            const MR: usize = 6;
            const L: usize = $lanes;
            let mut acc: [[$vec; 2]; MR] = [[$zero(); 2]; MR];
            // SAFETY (the whole body): the panels hold `kc` steps of MR and NR elements, as
            // the caller guarantees; C is touched only inside the `mr x nr` tile.
            unsafe {
                if accumulate {
                    // C's old values are read after the loop: fetch them during it.
                    for r in 0..mr {
                        _mm_prefetch::<_MM_HINT_T0>(c.add(r * ldc) as *const i8);
                        _mm_prefetch::<_MM_HINT_T0>(c.add(r * ldc + nr - 1) as *const i8);
                    }
                }
                let step = |a: *const $t, b: *const $t, acc: &mut [[$vec; 2]; MR]| {
                    let b0 = $load(b);
                    let b1 = $load(b.add(L));
                    for r in 0..MR {
                        let ar = $bcast(&*a.add(r));
                        acc[r][0] = $fma(ar, b0, acc[r][0]);
                        acc[r][1] = $fma(ar, b1, acc[r][1]);
                    }
                };
                // Four steps per branch: the loop's counter and jump cost less per FMA.
                for _ in 0..kc / 4 {
                    for u in 0..4 {
                        step(a.add(u * MR), b.add(u * 2 * L), &mut acc);
                    }
                    a = a.add(4 * MR);
                    b = b.add(8 * L);
                }
                for _ in 0..kc % 4 {
                    step(a, b, &mut acc);
                    a = a.add(MR);
                    b = b.add(2 * L);
                }
                if mr == MR && nr == 2 * L {
                    for (r, row) in acc.iter().enumerate() {
                        let p = c.add(r * ldc);
                        let (mut v0, mut v1) = (row[0], row[1]);
                        if accumulate {
                            v0 = $add(v0, $load(p));
                            v1 = $add(v1, $load(p.add(L)));
                        }
                        $store(p, v0);
                        $store(p.add(L), v1);
                    }
                    return;
                }
                // An edge tile: spill the registers and write the part inside C.
                let mut buf = [[0.0 as $t; 2 * L]; MR];
                for (r, row) in acc.iter().enumerate() {
                    $store(buf[r].as_mut_ptr(), row[0]);
                    $store(buf[r].as_mut_ptr().add(L), row[1]);
                }
                for (r, vals) in buf.iter().enumerate().take(mr) {
                    let p = c.add(r * ldc);
                    for (j, &v) in vals.iter().enumerate().take(nr) {
                        *p.add(j) = if accumulate { *p.add(j) + v } else { v };
                    }
                }
            }
        }
    };
}

mod f32_tile {
    use super::*;
    tile_kernel!(
        f32,
        16,
        8,
        __m256,
        _mm256_setzero_ps,
        _mm256_loadu_ps,
        _mm256_storeu_ps,
        _mm256_broadcast_ss,
        _mm256_fmadd_ps,
        _mm256_add_ps
    );
}

mod f64_tile {
    use super::*;
    tile_kernel!(
        f64,
        8,
        4,
        __m256d,
        _mm256_setzero_pd,
        _mm256_loadu_pd,
        _mm256_storeu_pd,
        _mm256_broadcast_sd,
        _mm256_fmadd_pd,
        _mm256_add_pd
    );
}
