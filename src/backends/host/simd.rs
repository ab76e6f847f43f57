//! Runs a hot loop with the processor's wider vector unit when it has one.
//!
//! The crate is built for the baseline target (SSE2 on x86-64) so that one binary runs on every
//! machine. Loops that are not bound by memory (a sum's lane additions, say) gain from AVX2;
//! `wide` compiles its closure a second time inside an AVX2 function and picks one copy at run
//! time, the way NumPy and PyTorch dispatch their kernels.

use std::mem::MaybeUninit;

/// Runs `block` over `n` elements 8 at a time, from `src` to `dst`: on each run of 8 in
/// place, then on the last 1-7 through a copy padded with `pad`, so that a vector loop has no
/// scalar tail to write (the same operations, so the same bits, in one pass instead of up to
/// 7). Inlined into its caller, so a block compiled for AVX-512 stays AVX-512.
///
/// # Safety
/// `src` must be readable and `dst` writable for `n` elements; they may be the same pointer
/// (`block` must read its 8 elements before writing them) but must not overlap otherwise.
/// `block` is given two pointers to 8 elements each, apart or the same.
#[inline(always)]
pub(crate) unsafe fn by_eights<T: Copy>(
    src: *const T,
    dst: *mut T,
    n: usize,
    pad: T,
    mut block: impl FnMut(*const T, *mut T),
) {
    let mut i = 0;
    while i + 8 <= n {
        // SAFETY: `i + 8 <= n`: both runs lie inside the caller's `n` elements.
        block(unsafe { src.add(i) }, unsafe { dst.add(i) });
        i += 8;
    }
    if i < n {
        let mut tail = [pad; 8];
        // SAFETY: `n - i < 8` elements from `i` are readable, and the copy holds 8.
        unsafe { std::ptr::copy_nonoverlapping(src.add(i), tail.as_mut_ptr(), n - i) };
        let t = tail.as_mut_ptr();
        block(t, t);
        // SAFETY: `n - i` elements from `i` are writable; `tail` is apart from them.
        unsafe { std::ptr::copy_nonoverlapping(tail.as_ptr(), dst.add(i), n - i) };
    }
}

/// Redoes the elements `near` refuses, whose lanes a vector loop filled with garbage: a
/// select over the slice, without a branch per element, as zeros and negative numbers may be
/// half of it (`log` of data with gaps; a branch there cost ~3 ns an element in
/// mispredictions). An and over the slice, which vectorises, finds whether there is one.
#[inline(always)]
pub(crate) fn fix_far<T: Copy>(
    xs: &[T],
    out: &mut [MaybeUninit<T>],
    near: impl Fn(T) -> bool,
    far: impl Fn(T) -> T,
) {
    if !xs.iter().fold(true, |acc, &x| acc & near(x)) {
        for (o, &x) in out.iter_mut().zip(xs) {
            // SAFETY: the caller's vector loop wrote every element of `out`.
            let v = unsafe { o.assume_init() };
            o.write(if near(x) { v } else { far(x) });
        }
    }
}

/// `out[i] = fast(xs[i])` for the elements `near` accepts and `far(xs[i])` for the others,
/// for every `i` below the shorter length: `fast` (branch-free, inlined) over a block in
/// the widest lanes the compiler has ([`wide_arith`]), then the block's few far elements one
/// by one (found by an and over the block, which vectorises). The same bits as the scalar
/// `if near(x) { fast(x) } else { far(x) }`.
#[inline(always)]
pub(crate) fn map_near_far<T: Copy>(
    xs: &[T],
    out: &mut [MaybeUninit<T>],
    fast: impl Fn(T) -> T,
    near: impl Fn(T) -> bool,
    far: impl Fn(T) -> T,
) {
    map_near_far_in::<Widest, T>(xs, out, fast, near, far)
}

/// [`map_near_far`] with `fast`'s loop in the lanes `L` picks: float64 `sin`/`cos` took
/// 7.5 ns an element in the compiler's AVX-512 loop (it kept most of it scalar) against 2.2
/// in its AVX2 one.
#[inline(always)]
pub(crate) fn map_near_far_in<L: Lanes, T: Copy>(
    xs: &[T],
    out: &mut [MaybeUninit<T>],
    fast: impl Fn(T) -> T,
    near: impl Fn(T) -> bool,
    far: impl Fn(T) -> T,
) {
    // Blocks that stay in L1 between the vector pass and the check.
    const BLOCK: usize = 1024;
    for (xs, out) in xs.chunks(BLOCK).zip(out.chunks_mut(BLOCK)) {
        L::run(
            #[inline(always)]
            || {
                for (o, &x) in out.iter_mut().zip(xs) {
                    o.write(fast(x));
                }
            },
        );
        let all_near = wide(
            #[inline(always)]
            || xs.iter().fold(true, |acc, &x| acc & near(x)),
        );
        if !all_near {
            for (o, &x) in out.iter_mut().zip(xs) {
                if !near(x) {
                    o.write(far(x));
                }
            }
        }
    }
}

/// Test helpers for the float loops: bits, ulps, and a slice loop against its scalar
/// function.
#[cfg(test)]
pub(crate) mod float_checks {
    use super::MaybeUninit;

    /// A float's bits, widened.
    pub(crate) trait Bits: Copy + Default {
        fn bits(self) -> u64;
        fn nan(self) -> bool;
    }

    impl Bits for f32 {
        fn bits(self) -> u64 {
            self.to_bits().into()
        }
        fn nan(self) -> bool {
            self.is_nan()
        }
    }

    impl Bits for f64 {
        fn bits(self) -> u64 {
            self.to_bits()
        }
        fn nan(self) -> bool {
            self.is_nan()
        }
    }

    /// The distance in steps between two finite floats of one sign.
    pub(crate) fn ulps<T: Bits>(a: T, b: T) -> u64 {
        a.bits().abs_diff(b.bits())
    }

    /// The same bits, or both NaN (NaN's payload is free).
    pub(crate) fn same<T: Bits>(a: T, b: T) -> bool {
        a.bits() == b.bits() || (a.nan() && b.nan())
    }

    pub(crate) fn same_bits<T: Bits>(a: &[T], b: &[T]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(&p, &q)| same(p, q))
    }

    /// A slice loop: `out[i] = f(xs[i])`.
    pub(crate) type SliceFn<T> = fn(&[T], &mut [MaybeUninit<T>]);

    /// Checks one function `f` of the trigonometric files (`sin`, `cos`, `tan`): its slice
    /// loop, the compiler's loop over `fast` in the lanes `L` picks (on the elements `near`
    /// takes), and the backend's kernels through `op`, contiguous and strided, against `f`.
    /// `f` and `fast` are functions themselves (not pointers), so that `fast` inlines into
    /// the lanes' loop as it does in the kernels.
    pub(crate) fn check_near_far<L: super::Lanes, T: Bits + crate::Element>(
        xs: &[T],
        f: impl Fn(T) -> T,
        into: SliceFn<T>,
        near: impl Fn(T) -> bool,
        fast: impl Fn(T) -> T,
        op: fn(&crate::Array) -> crate::Result<crate::Array>,
    ) {
        let want: Vec<T> = xs.iter().map(|&x| f(x)).collect();
        check_slice_loop(xs, &want, into);
        let near: Vec<usize> = (0..xs.len()).filter(|&i| near(xs[i])).collect();
        let mut a: Vec<T> = near.iter().map(|&i| xs[i]).collect();
        L::run(
            #[inline(always)]
            || {
                for v in &mut a {
                    *v = fast(*v);
                }
            },
        );
        for (&i, &v) in near.iter().zip(&a) {
            assert_eq!(v.bits(), want[i].bits(), "element {i}");
        }
        check_array(xs, &want, op);
    }

    /// Checks an `Array` method (`Array::exp`, say) through the backend's kernels,
    /// contiguous (split over its threads) and strided, against the scalar function's
    /// results.
    pub(crate) fn check_array<T: Bits + crate::Element>(
        xs: &[T],
        scalar: &[T],
        op: fn(&crate::Array) -> crate::Result<crate::Array>,
    ) {
        let arr = crate::Array::from_vec(xs.to_vec(), &[xs.len()]).unwrap();
        let e = op(&arr).unwrap().to_vec::<T>().unwrap();
        assert!(same_bits(&e, scalar));
        let strided = arr.slice(&[crate::Slice::new(Some(1), None, 3)]).unwrap();
        let e = op(&strided).unwrap().to_vec::<T>().unwrap();
        let want: Vec<T> = scalar[1..].iter().step_by(3).copied().collect();
        assert!(same_bits(&e, &want));
    }

    /// Checks the compiler's vectorised loop over the scalar function `f` (what a machine
    /// without AVX-512 runs), in AVX2 and in AVX-512 lanes, against `scalar`.
    pub(crate) fn check_wide_loops(xs: &[f32], scalar: &[f32], f: impl Fn(f32) -> f32 + Copy) {
        let each = |o: &mut [f32]| o.iter_mut().for_each(|e| *e = f(*e));
        let mut a = xs.to_vec();
        super::wide(
            #[inline(always)]
            || each(&mut a),
        );
        assert!(same_bits(&a, scalar));
        let mut b = xs.to_vec();
        super::wide_arith(
            #[inline(always)]
            || each(&mut b),
        );
        assert!(same_bits(&b, scalar));
    }

    /// 2^17 float32 bit patterns spread over every exponent and both signs, then NaN, the
    /// infinities and -0, then `extra`: the inputs of the float32 functions' path tests.
    pub(crate) fn spread_f32(extra: &[f32]) -> Vec<f32> {
        (0..1u32 << 17)
            .map(|i| f32::from_bits(i.wrapping_mul(32_771)))
            .chain([f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0])
            .chain(extra.iter().copied())
            .collect()
    }

    /// 2^14 float64 bit patterns spread over every exponent and both signs, then NaN, the
    /// infinities and both zeros, then `extra`: what the float64 functions' path tests add to
    /// their own ranges.
    pub(crate) fn spread_f64(extra: &[f64]) -> Vec<f64> {
        (0..1u64 << 14)
            .map(|i| f64::from_bits(i.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
            .chain([f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0])
            .chain(extra.iter().copied())
            .collect()
    }

    /// Calls `check` on every 4099th float32 bit pattern from 0 (1,047,812 of them, every
    /// sign, exponent and NaN), a sample of the exhaustive runs the float32 functions' headers
    /// report.
    pub(crate) fn every_4099th_f32(mut check: impl FnMut(f32)) {
        let mut bits = 0u32;
        loop {
            check(f32::from_bits(bits));
            match bits.checked_add(4099) {
                Some(b) => bits = b,
                None => break,
            }
        }
    }

    /// Checks a slice loop built on [`super::by_eights`] against its scalar function's
    /// results (`scalar[i]` for `xs[i]`): from every start 0-8, at every length 0-39 (the
    /// 8-lane blocks and their tails) and at the whole rest.
    pub(crate) fn check_slice_loop<T: Bits>(
        xs: &[T],
        scalar: &[T],
        run: fn(&[T], &mut [MaybeUninit<T>]),
    ) {
        for start in 0..9 {
            for len in (0..40).chain([xs.len() - start]) {
                let mut out = vec![MaybeUninit::new(T::default()); len];
                run(&xs[start..start + len], &mut out);
                for (i, (o, &want)) in out.iter().zip(&scalar[start..]).enumerate() {
                    // SAFETY: every element was initialised (and `run` wrote each).
                    let got = unsafe { o.assume_init() };
                    assert!(same(got, want), "start {start}, length {len}, element {i}");
                }
            }
        }
    }
}

/// Calls `f`, inside an AVX2 + FMA function where the processor has both.
///
/// `f` is inlined into that function, so the loops it contains are vectorised for AVX2. No
/// result changes: Rust never contracts `a * b + c` into an FMA on its own.
#[inline(always)]
pub(crate) fn wide<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if has_avx2_fma() {
        // SAFETY: the processor has AVX2 and FMA (`has_avx2_fma`).
        return unsafe { avx2(f) };
    }
    f()
}

/// Whether the processor has AVX2 and FMA (every AVX2 processor made has both, but they are
/// two flags, and code compiled for FMA must not run where one is missing).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn has_avx2_fma() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn avx2<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// Calls `f` inside an AVX-512 function where the processor has AVX-512F (and AVX2 and FMA),
/// else as [`wide`]. For loops bound by arithmetic only: float32 `exp`'s first f64 polynomial
/// took 0.80 ns an element against 1.05-1.07 in AVX2 on this EPYC, with the same bits (Zen 4
/// runs a 512-bit operation in two halves, and still gains from issuing half as many). A
/// loop bound by memory gains nothing, and every closure passed here is compiled once more.
#[inline(always)]
pub(crate) fn wide_arith<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if has_avx512() {
        // SAFETY: the processor has AVX-512F, AVX2 and FMA (`has_avx512`).
        return unsafe { avx512(f) };
    }
    wide(f)
}

/// `out[i] = f(xs[i])` for every `i` below the shorter length, inside [`wide_arith`], where
/// the compiler vectorises a branch-free `f` (`inv_trigf`, `atan_f64`, `asin_acos_f64`).
#[inline(always)]
pub(crate) fn wide_arith_map<T: Copy>(xs: &[T], out: &mut [MaybeUninit<T>], f: impl Fn(T) -> T) {
    wide_arith(
        #[inline(always)]
        || {
            for (o, &x) in out.iter_mut().zip(xs) {
                o.write(f(x));
            }
        },
    )
}

/// Calls `f` inside an AVX-512 function where the processor has AVX-512F (and AVX2 and FMA);
/// `None`, without calling it, elsewhere. For loops over operands that sit in L1, where
/// 64-byte loads and stores halve the accesses (`engine::map2`'s short runs).
#[inline(always)]
pub(crate) fn avx512_only<R>(f: impl FnOnce() -> R) -> Option<R> {
    #[cfg(target_arch = "x86_64")]
    if has_avx512() {
        // SAFETY: the processor has AVX-512F, AVX2 and FMA (`has_avx512`).
        return Some(unsafe { avx512(f) });
    }
    let _ = f;
    None
}

/// As [`avx512_only`], in a function that may also use AVX-512VL (512-bit instructions on
/// 256-bit registers): `realign::Y`'s loop.
#[inline(always)]
pub(crate) fn avx512vl_only<R>(f: impl FnOnce() -> R) -> Option<R> {
    #[cfg(target_arch = "x86_64")]
    if has_avx512vl() {
        // SAFETY: the processor has AVX-512F and VL, AVX2 and FMA (`has_avx512vl`).
        return Some(unsafe { avx512vl(f) });
    }
    let _ = f;
    None
}

/// Whether the processor runs [`avx512vl`]'s code.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn has_avx512vl() -> bool {
    has_avx512() && std::arch::is_x86_feature_detected!("avx512vl")
}

#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn has_avx512vl() -> bool {
    false
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
fn avx512vl<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// Whether the elementwise loops over operands in L1 run in 32-byte vectors rather than 64:
/// where the processor runs a 512-bit operation as two 256-bit halves (AMD family 19h,
/// Zen 4, the first of AMD's with AVX-512), 64-byte vectors halve the instructions but not
/// the work, and a 1K-element f32 add through the runtime took 115-120 ns in 32-byte vectors
/// against 122-126 ns in 64-byte ones (`realign`). Intel's AVX-512
/// cores gain from 64 (30-37 ns against 45-55 ns for the bare loop on the Intel guest).
/// `DLARRAY_VECTOR_BYTES=32` or `64` overrides the choice (read once), to compare both on
/// one machine.
pub(crate) fn halves_512() -> bool {
    static HALVES: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HALVES.get_or_init(|| match std::env::var("DLARRAY_VECTOR_BYTES").as_deref() {
        Ok("32") => true,
        Ok("64") => false,
        _ => amd_19h(),
    })
}

/// Whether the processor is AMD's family 19h (Zen 3 and Zen 4; of those only Zen 4 has
/// AVX-512), read once. Where a kernel's best lanes differ between it and Intel's AVX-512
/// cores, measured on both, the kernel asks this.
pub(crate) fn amd_19h() -> bool {
    static AMD: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AMD.get_or_init(|| amd_family() == Some(0x19))
}

/// The processor's family where it is AMD's: the base family plus the extended one.
fn amd_family() -> Option<u32> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::__cpuid;
        // Leaves 0 and 1 exist on every x86_64 processor.
        let (vendor, signature) = (__cpuid(0), __cpuid(1));
        let amd = (vendor.ebx, vendor.edx, vendor.ecx) == (0x6874_7541, 0x6974_6e65, 0x444d_4163);
        let base = (signature.eax >> 8) & 0xf;
        let family = if base == 0xf {
            base + ((signature.eax >> 20) & 0xff)
        } else {
            base
        };
        amd.then_some(family)
    }
    #[cfg(not(target_arch = "x86_64"))]
    None
}

/// Whether the processor runs [`avx512`]'s code: AVX-512F, AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn has_avx512() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
fn avx512<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// Which of [`wide`] and [`wide_arith`] a generic loop (`engine::map1_in`) runs in.
pub(crate) trait Lanes {
    fn run<R>(f: impl FnOnce() -> R) -> R;
}

/// [`wide`]: loops bound by memory, and most arithmetic.
pub(crate) struct Avx2;

/// [`wide_arith`]: loops bound by arithmetic that measured faster in AVX-512.
pub(crate) struct Widest;

impl Lanes for Avx2 {
    #[inline(always)]
    fn run<R>(f: impl FnOnce() -> R) -> R {
        wide(f)
    }
}

impl Lanes for Widest {
    #[inline(always)]
    fn run<R>(f: impl FnOnce() -> R) -> R {
        wide_arith(f)
    }
}

/// `acc` plus the sum of `xs`, in 64 independent partial sums where the processor has AVX2.
///
/// LLVM's own vectorising of the generic lane loop leaves 16 partial sums, two vector
/// chains that wait on the add's latency every step, and a 16-step serial merge: ~45 ns of a
/// 1K sum that eight chains and a pairwise merge finish in ~20. The partial sums are taken
/// in a fixed order, so a given array sums to the same bits on every run.
pub(crate) fn sum_f32(acc: f32, xs: &[f32]) -> Option<f32> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, checked just above.
        return Some(unsafe { x86::sum_f32(acc, xs) });
    }
    let _ = (acc, xs);
    None
}

/// As [`sum_f32`], for f64: 32 partial sums.
pub(crate) fn sum_f64(acc: f64, xs: &[f64]) -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, checked just above.
        return Some(unsafe { x86::sum_f64(acc, xs) });
    }
    let _ = (acc, xs);
    None
}

/// The max (or min) of `acc` and `xs` by an explicit AVX2 loop, where the processor has AVX2
/// and `xs` holds no NaN (`None` otherwise: the caller's scalar rule then decides, as NaN
/// propagates whichever element it is). The generic lanes took ~250 ns for 1K f32, a
/// compare and a blend per element behind a 16-step serial merge.
pub(crate) fn extreme_f32(acc: f32, xs: &[f32], max: bool) -> Option<f32> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && !acc.is_nan() {
        // SAFETY: the processor has AVX2, checked just above.
        return unsafe { x86::extreme_f32(acc, xs, max) };
    }
    let _ = (acc, xs, max);
    None
}

/// As [`extreme_f32`], for f64.
pub(crate) fn extreme_f64(acc: f64, xs: &[f64], max: bool) -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && !acc.is_nan() {
        // SAFETY: the processor has AVX2, checked just above.
        return unsafe { x86::extreme_f64(acc, xs, max) };
    }
    let _ = (acc, xs, max);
    None
}

/// Converts `src` to float16 in `dst` (same length), rounding to nearest even: with the F16C
/// instructions, 8 lanes at a time, where the processor has them, else element by element
/// (`half`, the same values). `half`'s own slice converter calls a function pointer per 8
/// elements (~0.3 ns an element); this loop is bound by memory.
pub(crate) fn f32_to_f16(src: &[f32], dst: &mut [MaybeUninit<half::f16>]) {
    assert_eq!(src.len(), dst.len());
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("f16c") {
        // SAFETY: the processor has F16C (which implies AVX), checked just above; `dst`
        // holds `src.len()` elements.
        unsafe { x86::f32_to_f16(src, dst.as_mut_ptr() as *mut u16) };
        return;
    }
    for (d, &s) in dst.iter_mut().zip(src) {
        d.write(half::f16::from_f32(s));
    }
}

/// As [`f32_to_f16`], the other way (exact: every float16 is a float32).
pub(crate) fn f16_to_f32(src: &[half::f16], dst: &mut [MaybeUninit<f32>]) {
    assert_eq!(src.len(), dst.len());
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("f16c") {
        // SAFETY: as in `f32_to_f16`; `f16` is a transparent `u16`.
        unsafe {
            x86::f16_to_f32(
                src.as_ptr() as *const u16,
                src.len(),
                dst.as_mut_ptr() as *mut f32,
            )
        };
        return;
    }
    for (d, &s) in dst.iter_mut().zip(src) {
        d.write(s.to_f32());
    }
}

/// bfloat16 to float32 in `dst` (same length): exact, a bfloat16 being the high half of the
/// float32 with the same value; a loop the AVX2 copy vectorises.
pub(crate) fn bf16_to_f32(src: &[half::bf16], dst: &mut [MaybeUninit<f32>]) {
    assert_eq!(src.len(), dst.len());
    wide(
        #[inline(always)]
        || {
            for (d, s) in dst.iter_mut().zip(src) {
                d.write(f32::from_bits(u32::from(s.to_bits()) << 16));
            }
        },
    )
}

/// float32 to bfloat16 in `dst` (same length), rounding to nearest even as `half` does; its
/// `from_f32` branches, which kept the loop scalar, and [`bf16_round`] does not.
pub(crate) fn f32_to_bf16(src: &[f32], dst: &mut [MaybeUninit<half::bf16>]) {
    assert_eq!(src.len(), dst.len());
    wide(
        #[inline(always)]
        || {
            for (d, &s) in dst.iter_mut().zip(src) {
                d.write(bf16_round(s));
            }
        },
    )
}

/// `bf16::from_f32` (round to nearest even; a NaN stays a quiet NaN) without branches.
#[inline(always)]
fn bf16_round(x: f32) -> half::bf16 {
    let b = x.to_bits();
    let rounded = (b.wrapping_add(0x7fff + ((b >> 16) & 1)) >> 16) as u16;
    let quiet = ((b >> 16) as u16) | 0x0040;
    half::bf16::from_bits(if x.is_nan() { quiet } else { rounded })
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// `src` to float16 bits at `dst` (room for `src.len()`).
    ///
    /// # Safety
    /// The processor has F16C; `dst` is valid for `src.len()` writes.
    #[target_feature(enable = "avx,f16c")]
    pub(super) unsafe fn f32_to_f16(src: &[f32], dst: *mut u16) {
        let n = src.len();
        let mut i = 0;
        // SAFETY: each step reads 8 elements of `src` at i..i + 8 <= n and writes 8 at
        // `dst + i`, inside its room; the tail goes through 8-element stack buffers.
        unsafe {
            while i + 8 <= n {
                let v = _mm256_loadu_ps(src.as_ptr().add(i));
                let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(v);
                _mm_storeu_si128(dst.add(i) as *mut __m128i, h);
                i += 8;
            }
            if i < n {
                let mut buf = [0f32; 8];
                buf[..n - i].copy_from_slice(&src[i..]);
                let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(_mm256_loadu_ps(buf.as_ptr()));
                let mut out = [0u16; 8];
                _mm_storeu_si128(out.as_mut_ptr() as *mut __m128i, h);
                std::ptr::copy_nonoverlapping(out.as_ptr(), dst.add(i), n - i);
            }
        }
    }

    /// `n` float16 bits at `src` to float32 at `dst` (room for `n`).
    ///
    /// # Safety
    /// The processor has F16C; `src` is valid for `n` reads and `dst` for `n` writes.
    #[target_feature(enable = "avx,f16c")]
    pub(super) unsafe fn f16_to_f32(src: *const u16, n: usize, dst: *mut f32) {
        let mut i = 0;
        // SAFETY: as in `f32_to_f16`, with the roles swapped.
        unsafe {
            while i + 8 <= n {
                let h = _mm_loadu_si128(src.add(i) as *const __m128i);
                _mm256_storeu_ps(dst.add(i), _mm256_cvtph_ps(h));
                i += 8;
            }
            if i < n {
                let mut buf = [0u16; 8];
                std::ptr::copy_nonoverlapping(src.add(i), buf.as_mut_ptr(), n - i);
                let v = _mm256_cvtph_ps(_mm_loadu_si128(buf.as_ptr() as *const __m128i));
                let mut out = [0f32; 8];
                _mm256_storeu_ps(out.as_mut_ptr(), v);
                std::ptr::copy_nonoverlapping(out.as_ptr(), dst.add(i), n - i);
            }
        }
    }

    /// Eight vector accumulators: enough independent adds in flight to cover the add's
    /// latency at two adds per cycle.
    const ACCS: usize = 8;

    /// The body of `extreme_f32` / `extreme_f64`: four vector accumulators and a mask of
    /// the NaNs met (`vmaxps` alone would drop them: it returns its second operand when
    /// either is NaN).
    macro_rules! extreme {
        ($acc:ident, $xs:ident, $max:ident, $t:ty, $w:expr, $set1:ident, $zero:ident, $load:ident,
         $maxv:ident, $minv:ident, $or:ident, $cmp:ident, $movemask:ident, $store:ident) => {{
            const W: usize = $w;
            const A: usize = 4;
            let mut blocks = $xs.chunks_exact(W * A);
            let mut rows = blocks.remainder().chunks_exact(W);
            // SAFETY: every load reads W elements inside a chunk of at least W elements of
            // `xs`, the store writes W elements into `lanes`; AVX2 is present per this
            // function's contract.
            let (lanes, nan) = unsafe {
                let mut v = [$set1($acc); A];
                let mut nan = $zero();
                for b in &mut blocks {
                    for (k, a) in v.iter_mut().enumerate() {
                        let x = $load(b.as_ptr().add(k * W));
                        nan = $or(nan, $cmp::<_CMP_UNORD_Q>(x, x));
                        *a = if $max { $maxv(*a, x) } else { $minv(*a, x) };
                    }
                }
                for r in &mut rows {
                    let x = $load(r.as_ptr());
                    nan = $or(nan, $cmp::<_CMP_UNORD_Q>(x, x));
                    v[0] = if $max { $maxv(v[0], x) } else { $minv(v[0], x) };
                }
                let m = if $max {
                    $maxv($maxv(v[0], v[1]), $maxv(v[2], v[3]))
                } else {
                    $minv($minv(v[0], v[1]), $minv(v[2], v[3]))
                };
                let mut lanes = [0 as $t; W];
                $store(lanes.as_mut_ptr(), m);
                (lanes, $movemask(nan))
            };
            if nan != 0 {
                return None;
            }
            let pick = |a: $t, x: $t| {
                let keep = if $max { a > x } else { a < x };
                if keep || a.is_nan() { a } else { x }
            };
            let total = lanes.into_iter().fold($acc, pick);
            Some(rows.remainder().iter().fold(total, |a, &x| pick(a, x)))
        }};
    }

    /// # Safety
    /// The processor must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn extreme_f32(acc: f32, xs: &[f32], max: bool) -> Option<f32> {
        extreme!(
            acc,
            xs,
            max,
            f32,
            8,
            _mm256_set1_ps,
            _mm256_setzero_ps,
            _mm256_loadu_ps,
            _mm256_max_ps,
            _mm256_min_ps,
            _mm256_or_ps,
            _mm256_cmp_ps,
            _mm256_movemask_ps,
            _mm256_storeu_ps
        )
    }

    /// # Safety
    /// The processor must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn extreme_f64(acc: f64, xs: &[f64], max: bool) -> Option<f64> {
        extreme!(
            acc,
            xs,
            max,
            f64,
            4,
            _mm256_set1_pd,
            _mm256_setzero_pd,
            _mm256_loadu_pd,
            _mm256_max_pd,
            _mm256_min_pd,
            _mm256_or_pd,
            _mm256_cmp_pd,
            _mm256_movemask_pd,
            _mm256_storeu_pd
        )
    }

    /// The body of `sum_f32` / `sum_f64`: `ACCS` vector accumulators, merged pairwise.
    ///
    /// Partial sum `p` (of `W * ACCS`) adds, in order, the elements of each whole block of
    /// `W * ACCS` whose index is `p` modulo the block; the rows left after the blocks go to
    /// the first `W` partial sums; then the partial sums merge pairwise and the last elements
    /// are added one by one. That order is fixed by the indices alone, so an array sums to the
    /// same bits wherever it sits in memory (a NaN's payload aside).
    ///
    /// Where the slice starts `h` elements past a 32-byte boundary (a `Vec` from the system
    /// allocator sits 16 bytes past one), half of its 32-byte loads would straddle two cache
    /// lines: 1K f32 in L1 took 30 ns so against 19.5 aligned, 4K 133 ns against 75. There
    /// the blocks are read as aligned vectors instead, and the partial sums are kept rotated
    /// by `h` lanes: lane `x` of accumulator `k` holds partial sum `k * W + x - h` (modulo
    /// the block), which is exactly what aligned vector `k` of a block holds. The first and
    /// last vectors, partly outside the blocks, and the rows are rotated into place with a
    /// lane permutation and zeros filled in (a partial sum starts at +0.0 and so is never
    /// -0.0: adding +0.0 changes no bit). The pairwise merge pairs the same partial sums
    /// in the rotated layout, some with their operands swapped, and its result is rotated
    /// back before the last steps.
    macro_rules! sum {
        ($acc:ident, $xs:ident, $t:ty, $w:expr, $zero:ident, $load:ident, $add:ident,
         $store:ident, $blend:ident, $rot:ident, $upper:ident) => {{
            const W: usize = $w;
            const B: usize = W * ACCS;
            let n_blocks = $xs.len() / B;
            let body = n_blocks * B;
            let rows = $xs[body..].chunks_exact(W);
            // Elements from the 32-byte boundary at or below the slice's start to it.
            let h = if n_blocks == 0 {
                0
            } else {
                ($xs.as_ptr() as usize % 32) / std::mem::size_of::<$t>()
            };
            // SAFETY: every vector load reads W elements inside `xs` (with h > 0 the aligned
            // vectors of the blocks lie inside 0..body, and the first and last are read as
            // xs[0..W] and xs[body - W..body], body >= B); the store writes W elements into
            // `rotated`; AVX2 is present per this function's contract.
            let mut lanes = unsafe {
                let mut v = [$zero(); ACCS];
                if h == 0 {
                    for b in $xs[..body].chunks_exact(B) {
                        for (k, a) in v.iter_mut().enumerate() {
                            *a = $add(*a, $load(b.as_ptr().add(k * W)));
                        }
                    }
                    for r in rows.clone() {
                        v[0] = $add(v[0], $load(r.as_ptr()));
                    }
                } else {
                    let upper = $upper(h);
                    // Aligned vector k holds elements k * W - h .. (k + 1) * W - h.
                    let first = W - h;
                    v[0] = $blend($zero(), $rot($load($xs.as_ptr()), h), upper);
                    for k in 1..ACCS {
                        v[k] = $load($xs.as_ptr().add(first + (k - 1) * W));
                    }
                    for m in 1..n_blocks {
                        let b = $xs.as_ptr().add(first + m * B - W);
                        for (k, a) in v.iter_mut().enumerate() {
                            *a = $add(*a, $load(b.add(k * W)));
                        }
                    }
                    let last = $rot($load($xs.as_ptr().add(body - W)), h);
                    v[0] = $add(v[0], $blend(last, $zero(), upper));
                    // Row lane j is partial sum j: lane j + h of the first two accumulators.
                    for r in rows.clone() {
                        let x = $rot($load(r.as_ptr()), h);
                        v[0] = $add(v[0], $blend($zero(), x, upper));
                        v[1] = $add(v[1], $blend(x, $zero(), upper));
                    }
                }
                let q = [
                    $add(v[0], v[4]),
                    $add(v[1], v[5]),
                    $add(v[2], v[6]),
                    $add(v[3], v[7]),
                ];
                let mut stored = [0 as $t; W];
                $store(
                    stored.as_mut_ptr(),
                    $add($add(q[0], q[2]), $add(q[1], q[3])),
                );
                // Rotated left by h, by index: `rotate_left` made three `memcpy` calls, ~4 %
                // of a whole 1K-element sum's instructions.
                std::array::from_fn::<$t, W, _>(|i| stored[(i + h) % W])
            };
            let mut width = W;
            while width > 1 {
                width /= 2;
                for i in 0..width {
                    lanes[i] += lanes[i + width];
                }
            }
            rows.remainder().iter().fold($acc + lanes[0], |a, &x| a + x)
        }};
    }

    /// For `sum!`: the 32-bit lane permutations moving each element `h` lanes up (f32:
    /// `h < 8`; f64: `h < 4`, as pairs of 32-bit lanes), and the masks of the lanes at or
    /// above `h`.
    const fn rotations(f64_lanes: bool) -> ([[i32; 8]; 8], [[i32; 8]; 8]) {
        let (mut rot, mut upper) = ([[0; 8]; 8], [[0; 8]; 8]);
        let w = if f64_lanes { 4 } else { 8 };
        let mut h = 0;
        while h < w {
            let mut y = 0;
            while y < 8 {
                let (x, half) = if f64_lanes { (y / 2, y % 2) } else { (y, 0) };
                let from = (x + w - h) % w;
                rot[h][y] = if f64_lanes { 2 * from + half } else { from } as i32;
                upper[h][y] = if x >= h { -1 } else { 0 };
                y += 1;
            }
            h += 1;
        }
        (rot, upper)
    }
    const ROT_F32: ([[i32; 8]; 8], [[i32; 8]; 8]) = rotations(false);
    const ROT_F64: ([[i32; 8]; 8], [[i32; 8]; 8]) = rotations(true);

    #[target_feature(enable = "avx2")]
    fn rot_f32(v: __m256, h: usize) -> __m256 {
        // SAFETY: the table row holds 8 i32s (an unaligned load reads them).
        let idx = unsafe { _mm256_loadu_si256(ROT_F32.0[h].as_ptr().cast()) };
        _mm256_permutevar8x32_ps(v, idx)
    }

    #[target_feature(enable = "avx2")]
    fn upper_f32(h: usize) -> __m256 {
        // SAFETY: as in `rot_f32`.
        unsafe { _mm256_castsi256_ps(_mm256_loadu_si256(ROT_F32.1[h].as_ptr().cast())) }
    }

    #[target_feature(enable = "avx2")]
    fn rot_f64(v: __m256d, h: usize) -> __m256d {
        // SAFETY: as in `rot_f32`.
        let idx = unsafe { _mm256_loadu_si256(ROT_F64.0[h].as_ptr().cast()) };
        _mm256_castps_pd(_mm256_permutevar8x32_ps(_mm256_castpd_ps(v), idx))
    }

    #[target_feature(enable = "avx2")]
    fn upper_f64(h: usize) -> __m256d {
        // SAFETY: as in `rot_f32`.
        unsafe { _mm256_castsi256_pd(_mm256_loadu_si256(ROT_F64.1[h].as_ptr().cast())) }
    }

    /// # Safety
    /// The processor must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn sum_f32(acc: f32, xs: &[f32]) -> f32 {
        sum!(
            acc,
            xs,
            f32,
            8,
            _mm256_setzero_ps,
            _mm256_loadu_ps,
            _mm256_add_ps,
            _mm256_storeu_ps,
            _mm256_blendv_ps,
            rot_f32,
            upper_f32
        )
    }

    /// # Safety
    /// The processor must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn sum_f64(acc: f64, xs: &[f64]) -> f64 {
        sum!(
            acc,
            xs,
            f64,
            4,
            _mm256_setzero_pd,
            _mm256_loadu_pd,
            _mm256_add_pd,
            _mm256_storeu_pd,
            _mm256_blendv_pd,
            rot_f64,
            upper_f64
        )
    }
}

#[cfg(test)]
mod tests {
    use super::{bf16_round, extreme_f32, extreme_f64, sum_f32, sum_f64, wide};

    /// The same bits as `half` on every 257th float32 pattern and every edge around the
    /// rounding boundaries, infinities and NaNs.
    #[test]
    fn bf16_rounding_matches_half() {
        let edges = [
            0u32,
            1,
            0x7fff,
            0x8000,
            0x8001,
            0x1_8000,
            0x7f7f_8000,
            0x7f7f_ffff,
        ];
        let specials = [0x7f80_0000u32, 0x7f80_0001, 0x7fc0_0000, 0x7fff_ffff];
        let sampled = (0..=u32::MAX / 257).map(|i| i * 257);
        for b in sampled.chain(edges).chain(specials) {
            for b in [b, b | 0x8000_0000] {
                let x = f32::from_bits(b);
                let (got, want) = (bf16_round(x), half::bf16::from_f32(x));
                assert_eq!(got.to_bits(), want.to_bits(), "{b:#010x}");
            }
        }
    }

    #[test]
    fn explicit_sums_match_a_plain_sum_at_every_length_and_offset() {
        // Integers below 2^24 sum exactly in any order, so every tail and block boundary
        // must give the same total as the plain loop.
        let xs: Vec<f32> = (0..300).map(|i| (i % 17) as f32 - 5.0).collect();
        let ys: Vec<f64> = xs.iter().map(|&x| f64::from(x) * 3.0).collect();
        for start in 0..9 {
            for end in start..xs.len() {
                let plain: f32 = xs[start..end].iter().sum();
                if let Some(s) = sum_f32(1.5, &xs[start..end]) {
                    assert_eq!(s, plain + 1.5, "f32 {start}..{end}");
                }
                let plain: f64 = ys[start..end].iter().sum();
                if let Some(s) = sum_f64(-2.0, &ys[start..end]) {
                    assert_eq!(s, plain - 2.0, "f64 {start}..{end}");
                }
            }
        }
    }

    #[test]
    fn explicit_sums_give_the_same_bits_at_every_address() {
        // Values of mixed signs and magnitudes, whose sum depends on the order of additions:
        // a slice must sum to the same bits whatever its misalignment (the aligned-block
        // path against the plain one, on copies at every element offset of a 64-byte line).
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let xs: Vec<f64> = (0..1200)
            .map(|_| {
                let r = next();
                let mag = 10f64.powi((r % 9) as i32 - 4);
                (((r >> 11) as f64 / (1u64 << 53) as f64) - 0.5) * mag
            })
            .collect();
        for len in (0..140).chain([255, 256, 257, 511, 1000, 1199]) {
            let mut want32 = None;
            let mut want64 = None;
            // 64-byte aligned storage: offset `o` puts the slice o elements past a line.
            let mut buf32 = vec![Line([0f32; 16]); len / 16 + 3];
            let mut buf64 = vec![Line([0f64; 8]); len / 8 + 3];
            for o in 0..16 {
                let flat32 = flatten(&mut buf32);
                flat32[o..o + len]
                    .iter_mut()
                    .zip(&xs)
                    .for_each(|(d, &x)| *d = x as f32);
                let got = sum_f32(0.25, &flat32[o..o + len]).map(f32::to_bits);
                assert_eq!(*want32.get_or_insert(got), got, "f32 len {len} offset {o}");
                if o < 8 {
                    let flat64 = flatten(&mut buf64);
                    flat64[o..o + len].copy_from_slice(&xs[..len]);
                    let got = sum_f64(0.25, &flat64[o..o + len]).map(f64::to_bits);
                    assert_eq!(*want64.get_or_insert(got), got, "f64 len {len} offset {o}");
                }
            }
        }
    }

    /// One 64-byte line of `N` elements of `T` (`N * size_of::<T>()` is 64).
    #[derive(Clone, Copy)]
    #[repr(C, align(64))]
    struct Line<T, const N: usize>([T; N]);

    /// The lines' elements as one slice.
    fn flatten<T, const N: usize>(v: &mut [Line<T, N>]) -> &mut [T] {
        assert_eq!(
            size_of::<Line<T, N>>(),
            N * size_of::<T>(),
            "a line has padding"
        );
        // SAFETY: a `Line` is `N` elements with no padding (repr(C), checked just above), so
        // the lines are `v.len() * N` contiguous, initialised elements, borrowed mutably for
        // as long as `v`.
        unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<T>(), v.len() * N) }
    }

    #[test]
    fn explicit_extremes_match_the_scalar_rule_and_leave_nan_to_it() {
        let xs: Vec<f32> = (0..300).map(|i| ((i * 37) % 101) as f32 - 50.5).collect();
        let ys: Vec<f64> = xs.iter().map(|&x| f64::from(x) * -1.5).collect();
        for max in [true, false] {
            let pick32 = |a: f32, b: f32| if max { a.max(b) } else { a.min(b) };
            let pick64 = |a: f64, b: f64| if max { a.max(b) } else { a.min(b) };
            for start in 0..9 {
                for end in start..xs.len() {
                    let acc = if max { -60.0 } else { 60.0 };
                    let want = xs[start..end].iter().fold(acc, |a, &b| pick32(a, b));
                    if let Some(got) = extreme_f32(acc, &xs[start..end], max) {
                        assert_eq!(got, want, "f32 max={max} {start}..{end}");
                    }
                    let want = ys[start..end].iter().fold(acc.into(), |a, &b| pick64(a, b));
                    if let Some(got) = extreme_f64(acc.into(), &ys[start..end], max) {
                        assert_eq!(got, want, "f64 max={max} {start}..{end}");
                    }
                }
            }
        }
        // A NaN anywhere (block, row or tail) is left to the caller, or propagates.
        for at in [0, 40, 299] {
            let mut zs = xs.clone();
            zs[at] = f32::NAN;
            assert!(
                extreme_f32(0.0, &zs, true).is_none_or(f32::is_nan),
                "NaN at {at}"
            );
            assert!(
                extreme_f32(0.0, &zs, false).is_none_or(f32::is_nan),
                "NaN at {at}"
            );
        }
        assert!(extreme_f32(f32::NAN, &xs, true).is_none());
    }

    #[test]
    fn explicit_sums_propagate_nan_and_infinity() {
        let mut xs = vec![1.0f32; 200];
        xs[137] = f32::INFINITY;
        if let Some(s) = sum_f32(0.0, &xs) {
            assert_eq!(s, f32::INFINITY);
            xs[3] = f32::NEG_INFINITY;
            assert!(sum_f32(0.0, &xs).unwrap().is_nan());
        }
        let mut ys = vec![1.0f64; 77];
        ys[76] = f64::NAN;
        if let Some(s) = sum_f64(0.0, &ys) {
            assert!(s.is_nan());
        }
    }

    #[test]
    fn wide_returns_what_the_closure_returns() {
        let xs: Vec<f32> = (0..1000).map(|i| i as f32).collect();
        let s = wide(|| xs.iter().sum::<f32>());
        assert_eq!(s, xs.iter().sum::<f32>());
    }
}
