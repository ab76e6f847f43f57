//! Runs a hot loop with the processor's wider vector unit when it has one.
//!
//! The crate is built for the baseline target (SSE2 on x86-64) so that one binary runs on every
//! machine. Loops that are not bound by memory (a sum's lane additions, say) gain from AVX2;
//! `wide` compiles its closure a second time inside an AVX2 function and picks one copy at run
//! time, the way NumPy and PyTorch dispatch their kernels.

/// Calls `f`, inside an AVX2 + FMA function where the processor has both.
///
/// `f` is inlined into that function, so the loops it contains are vectorised for AVX2. No
/// result changes: Rust never contracts `a * b + c` into an FMA on its own.
#[inline(always)]
pub(crate) fn wide<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the processor has AVX2 and FMA, checked just above.
        return unsafe { avx2(f) };
    }
    f()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn avx2<R>(f: impl FnOnce() -> R) -> R {
    f()
}

#[cfg(test)]
mod tests {
    use super::wide;

    #[test]
    fn wide_returns_what_the_closure_returns() {
        let xs: Vec<f32> = (0..1000).map(|i| i as f32).collect();
        let s = wide(|| xs.iter().sum::<f32>());
        assert_eq!(s, xs.iter().sum::<f32>());
    }
}
