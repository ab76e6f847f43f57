//! The f64 lane operations the written-out vector loops (`logf`, `exp_f64`, `tanh_f64`,
//! `sincos_f64`) are built from, one module per width with the same names: `v8` (AVX-512, 8
//! lanes) and `v4` (AVX2 with FMA, 4 lanes). A function's body is written once, as a macro
//! over the operations of `$v`, and instantiated for each width, so that the widths cannot
//! drift apart: each performs the scalar function's IEEE operations in its order.

/// Defines each `name(args) -> ret = body` as an inlined function enabling `$features`.
macro_rules! ops {
    ($features:literal: $($name:ident($($p:ident: $t:ty),*) -> $r:ty = $body:expr;)*) => {$(
        #[inline]
        #[target_feature(enable = $features)]
        pub(crate) fn $name($($p: $t),*) -> $r { $body }
    )*};
}

/// A table row of up to four f64 columns, 32 bytes and aligned to them, so that one load
/// reads a row (`v8::rows3`, `v4::rows3`).
#[derive(Clone, Copy)]
#[repr(C, align(32))]
pub(crate) struct Row(pub(crate) [f64; 4]);

/// The operations of 8 f64 lanes (AVX-512F).
pub(crate) mod v8 {
    use std::arch::x86_64::*;
    pub(crate) type F = __m512d;
    pub(crate) type I = __m512i;
    ops! { "avx512f,avx2,fma":
        // `poly::two_sum_err`: the rounding error of `s = a + b`.
        two_sum_err(a: F, b: F, s: F) -> F = {
            let bb = sub(s, a);
            add(sub(a, sub(s, bb)), sub(b, bb))
        };
        add(a: F, b: F) -> F = _mm512_add_pd(a, b);
        sub(a: F, b: F) -> F = _mm512_sub_pd(a, b);
        mul(a: F, b: F) -> F = _mm512_mul_pd(a, b);
        div(a: F, b: F) -> F = _mm512_div_pd(a, b);
        fma(a: F, b: F, c: F) -> F = _mm512_fmadd_pd(a, b, c);
        set(a: f64) -> F = _mm512_set1_pd(a);
        seti(a: u64) -> I = _mm512_set1_epi64(a as i64);
        addi(a: I, b: I) -> I = _mm512_add_epi64(a, b);
        subi(a: I, b: I) -> I = _mm512_sub_epi64(a, b);
        andi(a: I, b: I) -> I = _mm512_and_si512(a, b);
        ori(a: I, b: I) -> I = _mm512_or_si512(a, b);
        xori(a: I, b: I) -> I = _mm512_xor_si512(a, b);
        as_int(a: F) -> I = _mm512_castpd_si512(a);
        as_float(a: I) -> F = _mm512_castsi512_pd(a);
        // `vminpd` returns its second operand when either is NaN.
        min(a: F, b: F) -> F = _mm512_min_pd(a, b);
        // The lanes where `a < b` (false for NaN) take `yes`, the others `no`.
        select_lt(a: F, b: F, yes: F, no: F) -> F =
            _mm512_mask_blend_pd(_mm512_cmp_pd_mask::<_CMP_LT_OQ>(a, b), no, yes);
        // The lanes where `n` is odd take `odd`, the others `even`.
        select_odd(n: I, even: F, odd: F) -> F =
            _mm512_mask_blend_pd(_mm512_test_epi64_mask(n, _mm512_set1_epi64(1)), even, odd);
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(crate) fn srl<const N: u32>(a: I) -> I {
        _mm512_srli_epi64::<N>(a)
    }
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(crate) fn sll<const N: u32>(a: I) -> I {
        _mm512_slli_epi64::<N>(a)
    }
    /// A table of 32 64-bit entries in four registers, read by [`pick32`] without a gather
    /// (`exp_f64`'s `2^(j/32)`).
    pub(crate) type Table32 = [I; 4];

    /// `t` in registers.
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(crate) fn load32<T: Copy>(t: &[T; 32]) -> Table32 {
        const { assert!(size_of::<T>() == 8) };
        // SAFETY: `t` holds 32 entries of 8 bytes: four unaligned loads of 64 bytes.
        [0, 8, 16, 24].map(|i| unsafe { _mm512_loadu_si512(t.as_ptr().add(i).cast()) })
    }

    /// `t[i % 32]` in each lane: `vpermt2q` reads each index's low four bits (which of 16),
    /// bit 4 picks the lower or upper 16.
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(crate) fn pick32(t: &Table32, i: I) -> I {
        let upper = _mm512_test_epi64_mask(i, _mm512_set1_epi64(16));
        let lo = _mm512_permutex2var_epi64(t[0], i, t[1]);
        let hi = _mm512_permutex2var_epi64(t[2], i, t[3]);
        _mm512_mask_blend_epi64(upper, lo, hi)
    }

    /// Columns 0, 1 and 2 of the rows `t[i]`: a 32-byte load per lane, then a transpose.
    /// Zen 4 runs a gather of 8 as 8 loads and more: three gathers of 8 from 128 entries,
    /// `ln`'s, took 1.1 ns an element in a loop of them alone, against 0.1 for this (one
    /// thread on the AMD EPYC), and `ln`'s whole loop took 2.3.
    ///
    /// # Safety
    /// Every lane of `i` must index `t`.
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(crate) unsafe fn rows3<const N: usize>(t: &[super::Row; N], i: I) -> (F, F, F) {
        let mut at = [0u64; 8];
        // SAFETY: `at` holds 64 bytes.
        unsafe { _mm512_storeu_si512(at.as_mut_ptr().cast(), i) };
        let p = t.as_ptr().cast::<f64>();
        // SAFETY: the caller's: each index is below `N`, and each row is 32 bytes, aligned.
        let row = |k: usize| unsafe { _mm256_load_pd(p.add(4 * at[k] as usize)) };
        // Rows k and k + 4 side by side: (a_k b_k c_k - | a_k+4 b_k+4 c_k+4 -).
        let pair = |k: usize| _mm512_insertf64x4::<1>(_mm512_castpd256_pd512(row(k)), row(k + 4));
        let (r04, r15, r26, r37) = (pair(0), pair(1), pair(2), pair(3));
        // (a0 a1 c0 c1 | a4 a5 c4 c5), (b0 b1 - - | b4 b5 - -) and the same of rows 2, 3, 6, 7.
        let (ac01, b01) = (_mm512_unpacklo_pd(r04, r15), _mm512_unpackhi_pd(r04, r15));
        let (ac23, b23) = (_mm512_unpacklo_pd(r26, r37), _mm512_unpackhi_pd(r26, r37));
        let first = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
        let third = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
        (
            _mm512_permutex2var_pd(ac01, first, ac23),
            _mm512_permutex2var_pd(b01, first, b23),
            _mm512_permutex2var_pd(ac01, third, ac23),
        )
    }
}

/// The operations of 4 f64 lanes (AVX2 and FMA).
pub(crate) mod v4 {
    use std::arch::x86_64::*;
    pub(crate) type F = __m256d;
    pub(crate) type I = __m256i;
    ops! { "avx2,fma":
        // `poly::two_sum_err`: the rounding error of `s = a + b`.
        two_sum_err(a: F, b: F, s: F) -> F = {
            let bb = sub(s, a);
            add(sub(a, sub(s, bb)), sub(b, bb))
        };
        add(a: F, b: F) -> F = _mm256_add_pd(a, b);
        sub(a: F, b: F) -> F = _mm256_sub_pd(a, b);
        mul(a: F, b: F) -> F = _mm256_mul_pd(a, b);
        div(a: F, b: F) -> F = _mm256_div_pd(a, b);
        fma(a: F, b: F, c: F) -> F = _mm256_fmadd_pd(a, b, c);
        set(a: f64) -> F = _mm256_set1_pd(a);
        seti(a: u64) -> I = _mm256_set1_epi64x(a as i64);
        addi(a: I, b: I) -> I = _mm256_add_epi64(a, b);
        subi(a: I, b: I) -> I = _mm256_sub_epi64(a, b);
        andi(a: I, b: I) -> I = _mm256_and_si256(a, b);
        ori(a: I, b: I) -> I = _mm256_or_si256(a, b);
        xori(a: I, b: I) -> I = _mm256_xor_si256(a, b);
        as_int(a: F) -> I = _mm256_castpd_si256(a);
        as_float(a: I) -> F = _mm256_castsi256_pd(a);
        min(a: F, b: F) -> F = _mm256_min_pd(a, b);
        select_lt(a: F, b: F, yes: F, no: F) -> F =
            _mm256_blendv_pd(no, yes, _mm256_cmp_pd::<_CMP_LT_OQ>(a, b));
        // `vblendvpd` reads each lane's sign bit: `n`'s lowest, shifted there.
        select_odd(n: I, even: F, odd: F) -> F =
            _mm256_blendv_pd(even, odd, _mm256_castsi256_pd(_mm256_slli_epi64::<63>(n)));
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn srl<const N: i32>(a: I) -> I {
        _mm256_srli_epi64::<N>(a)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn sll<const N: i32>(a: I) -> I {
        _mm256_slli_epi64::<N>(a)
    }
    /// `t[i]` in each lane.
    ///
    /// # Safety
    /// Every lane of `i` must index `t`.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(crate) unsafe fn gather<const N: usize>(t: &[f64; N], i: I) -> F {
        // SAFETY: the caller's.
        unsafe { _mm256_i64gather_pd::<8>(t.as_ptr().cast(), i) }
    }

    /// Columns 0, 1 and 2 of the rows `t[i]`, as `v8::rows3`: four 32-byte loads and a
    /// transpose in place of three gathers.
    ///
    /// # Safety
    /// Every lane of `i` must index `t`.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(crate) unsafe fn rows3<const N: usize>(t: &[super::Row; N], i: I) -> (F, F, F) {
        let mut at = [0u64; 4];
        // SAFETY: `at` holds 32 bytes.
        unsafe { _mm256_storeu_si256(at.as_mut_ptr().cast(), i) };
        let p = t.as_ptr().cast::<f64>();
        // SAFETY: the caller's: each index is below `N`, and each row is 32 bytes, aligned.
        let row = |k: usize| unsafe { _mm256_load_pd(p.add(4 * at[k] as usize)) };
        // (a0 a1 c0 c1), (b0 b1 - -), and the same of rows 2 and 3.
        let (r0, r1, r2, r3) = (row(0), row(1), row(2), row(3));
        let (ac01, b01) = (_mm256_unpacklo_pd(r0, r1), _mm256_unpackhi_pd(r0, r1));
        let (ac23, b23) = (_mm256_unpacklo_pd(r2, r3), _mm256_unpackhi_pd(r2, r3));
        (
            _mm256_permute2f128_pd::<0x20>(ac01, ac23),
            _mm256_permute2f128_pd::<0x20>(b01, b23),
            _mm256_permute2f128_pd::<0x31>(ac01, ac23),
        )
    }
}
