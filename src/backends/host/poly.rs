//! The degree-5 polynomial evaluation the float32 functions share (`expf`, `tanhf`, `logf`,
//! `sincosf`), scalar and in AVX-512 lanes: Estrin's scheme, three independent pairs then two
//! levels, in one fixed order so that every path rounds alike (no fused multiply-add).

/// `c[0] + c[1] r + ... + c[5] r^5`.
#[inline(always)]
pub(crate) fn estrin6(r: f64, c: &[f64; 6]) -> f64 {
    let r2 = r * r;
    let (p01, p23, p45) = (c[0] + c[1] * r, c[2] + c[3] * r, c[4] + c[5] * r);
    p01 + r2 * (p23 + r2 * p45)
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512 {
    use std::arch::x86_64::*;

    /// [`super::estrin6`] of 8 lanes.
    #[inline]
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(crate) fn estrin6(r: __m512d, c: &[f64; 6]) -> __m512d {
        let c = |j: usize| _mm512_set1_pd(c[j]);
        let r2 = _mm512_mul_pd(r, r);
        let p01 = _mm512_add_pd(c(0), _mm512_mul_pd(c(1), r));
        let p23 = _mm512_add_pd(c(2), _mm512_mul_pd(c(3), r));
        let p45 = _mm512_add_pd(c(4), _mm512_mul_pd(c(5), r));
        _mm512_add_pd(
            p01,
            _mm512_mul_pd(r2, _mm512_add_pd(p23, _mm512_mul_pd(r2, p45))),
        )
    }
}
