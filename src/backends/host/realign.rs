//! Elementwise loops whose operands sit at another place in a cache line than their output.
//!
//! An elementwise kernel stores its output in aligned vectors. An operand that starts at
//! another offset modulo the vector (two `Vec`s from the system allocator usually do: glibc
//! puts successive 4 KiB blocks 16 bytes apart) then has its loads split over two cache
//! lines. On the AMD EPYC guest (Zen 4) a bare 1K-element f32 add in 64-byte vectors took
//! 53-54 ns so, against 44 ns with both operands aligned. Here such an operand is read by
//! aligned loads only, each vector put together from two neighbouring aligned loads by one
//! two-source permute (`vpermt2d`): 43-44 ns. An aligned operand is loaded as it is: the
//! permute is not free (both operands through it took 53-60 ns). Through the whole runtime,
//! a 1K-element add over operands 16 to 48 bytes apart took 134-152 ns before, 125-133 ns
//! with this (array views at chosen offsets, old and new builds alternated, eight
//! processes each; the throwaway program is not in the tree).
//!
//! Two widths ([`Width`]): 64-byte vectors ([`Z`]), and 32-byte ones ([`Y`]) where the
//! processor runs 512-bit operations as two halves (`simd::halves_512`). There, in L1, the
//! narrower loop is the faster: a 1K-element add through the runtime, in turns with ndarray
//! (`benches/peers_in_turns.rs`), took 115-120 ns in 32-byte vectors against 122-126 ns in
//! 64-byte ones (`DLARRAY_VECTOR_BYTES=64`), three processes of each. The compiler
//! vectorises a plain loop in an AVX-512 function at 64 bytes, so at 32 bytes this module's
//! loop runs aligned operands too.
//!
//! Elements of 4 and 8 bytes only, whose offset is then a multiple of the permute's 4-byte
//! lanes; other sizes, and processors without AVX-512F (and VL, for 32 bytes), keep the
//! plain loop.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::{
    __m256i, __m512i, _mm256_add_epi32, _mm256_load_si256, _mm256_loadu_si256,
    _mm256_permutex2var_epi32, _mm256_set1_epi32, _mm256_setr_epi32, _mm512_add_epi32,
    _mm512_load_si512, _mm512_loadu_si512, _mm512_permutex2var_epi32, _mm512_set1_epi32,
    _mm512_setr_epi32,
};
use std::mem::MaybeUninit;

/// A vector width for the elementwise loops, with the processor features its loop needs.
pub(super) trait Width {
    /// Bytes in one vector: the output's alignment and the width of every load and store.
    const BYTES: usize;
    /// Whether [`realigned2`] also runs operands both as aligned as the output. Not at 64
    /// bytes: the compiler's own loop is as fast there.
    const ALIGNED_TOO: bool;
    /// The register.
    #[cfg(target_arch = "x86_64")]
    type Reg: Register;
    /// `f` inside a function compiled for this width's features; `None`, without calling
    /// it, where the processor lacks them.
    fn run<R>(f: impl FnOnce() -> R) -> Option<R>;
    /// Whether the processor has this width's features.
    #[cfg(target_arch = "x86_64")]
    fn available() -> bool;
}

/// 64-byte vectors: AVX-512F.
pub(super) struct Z;

/// 32-byte vectors, with AVX-512VL's two-source permute.
pub(super) struct Y;

impl Width for Z {
    const BYTES: usize = 64;
    const ALIGNED_TOO: bool = false;
    #[cfg(target_arch = "x86_64")]
    type Reg = __m512i;
    #[inline(always)]
    fn run<R>(f: impl FnOnce() -> R) -> Option<R> {
        super::simd::avx512_only(f)
    }
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn available() -> bool {
        super::simd::has_avx512()
    }
}

impl Width for Y {
    const BYTES: usize = 32;
    const ALIGNED_TOO: bool = true;
    #[cfg(target_arch = "x86_64")]
    type Reg = __m256i;
    #[inline(always)]
    fn run<R>(f: impl FnOnce() -> R) -> Option<R> {
        super::simd::avx512vl_only(f)
    }
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn available() -> bool {
        super::simd::has_avx512vl()
    }
}

/// A vector register and the four operations the loop needs.
///
/// # Safety
/// Every method needs the processor features of the `Width` whose register it is.
#[cfg(target_arch = "x86_64")]
pub(super) trait Register: Copy {
    /// An aligned load.
    unsafe fn load(p: *const u8) -> Self;
    /// An unaligned load.
    unsafe fn loadu(p: *const u8) -> Self;
    /// 4-byte lanes `k..k + lanes` of `low` followed by `high`.
    unsafe fn join(low: Self, index: Self, high: Self) -> Self;
    /// The index vector of [`join`](Self::join) for `k`.
    unsafe fn index(k: i32) -> Self;
}

#[cfg(target_arch = "x86_64")]
impl Register for __m512i {
    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: per the caller: aligned, readable, AVX-512F.
        unsafe { _mm512_load_si512(p as *const __m512i) }
    }
    #[inline(always)]
    unsafe fn loadu(p: *const u8) -> Self {
        // SAFETY: per the caller: readable, AVX-512F.
        unsafe { _mm512_loadu_si512(p as *const __m512i) }
    }
    #[inline(always)]
    unsafe fn join(low: Self, index: Self, high: Self) -> Self {
        // SAFETY: AVX-512F per the caller.
        unsafe { _mm512_permutex2var_epi32(low, index, high) }
    }
    #[inline(always)]
    unsafe fn index(k: i32) -> Self {
        // SAFETY: AVX-512F per the caller.
        unsafe {
            _mm512_add_epi32(
                _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                _mm512_set1_epi32(k),
            )
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl Register for __m256i {
    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: per the caller: aligned, readable, AVX.
        unsafe { _mm256_load_si256(p as *const __m256i) }
    }
    #[inline(always)]
    unsafe fn loadu(p: *const u8) -> Self {
        // SAFETY: per the caller: readable, AVX.
        unsafe { _mm256_loadu_si256(p as *const __m256i) }
    }
    #[inline(always)]
    unsafe fn join(low: Self, index: Self, high: Self) -> Self {
        // SAFETY: AVX-512F and VL per the caller.
        unsafe { _mm256_permutex2var_epi32(low, index, high) }
    }
    #[inline(always)]
    unsafe fn index(k: i32) -> Self {
        // SAFETY: AVX2 per the caller.
        unsafe {
            _mm256_add_epi32(
                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                _mm256_set1_epi32(k),
            )
        }
    }
}

/// `os[i] = f(xa[i], xb[i])` for `i` in `lo..hi`, where `os[lo]` starts on a `V::BYTES`
/// boundary and `hi - lo` elements fill whole vectors, every operand vector made of aligned
/// loads. Returns false, having written nothing, where it does not apply: elements not of 4
/// or 8 bytes, both operands as aligned as the output (unless `V::ALIGNED_TOO`), an operand
/// not aligned to 4 bytes, fewer than three vectors, or a processor without the width's
/// features.
///
/// Called inside `V::run`, the loop is compiled for the width; elsewhere (tests) its
/// intrinsics are calls, with the same results.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn realigned2<V: Width, T: Copy, U>(
    os: &mut [MaybeUninit<U>],
    xa: &[T],
    xb: &[T],
    lo: usize,
    hi: usize,
    f: &impl Fn(T, T) -> U,
) -> bool {
    let size = size_of::<T>();
    let vector = V::BYTES;
    if size != size_of::<U>()
        || !(size == 4 || size == 8)
        || hi > os.len()
        || xa.len() < hi
        || xb.len() < hi
    {
        return false;
    }
    let (pa, pb) = (
        xa.as_ptr() as usize + lo * size,
        xb.as_ptr() as usize + lo * size,
    );
    let (ma, mb) = (pa % vector, pb % vector);
    let bytes = hi.saturating_sub(lo) * size;
    if (ma == 0 && mb == 0 && !V::ALIGNED_TOO)
        || !ma.is_multiple_of(4)
        || !mb.is_multiple_of(4)
        || !(os.as_ptr() as usize + lo * size).is_multiple_of(vector)
        || !bytes.is_multiple_of(vector)
        || bytes < 3 * vector
        || !V::available()
    {
        return false;
    }
    // SAFETY (every arm): the processor has the width's features; `lo..hi` is within
    // `os`, `xa` and `xb`, the output aligned and the operands 4-byte aligned there, at
    // least three vectors long (all checked above); the arms pair `W` with the width and
    // element size so that `W` elements fill one vector.
    unsafe {
        macro_rules! arms {
            ($w:literal) => {
                match (ma == 0, mb == 0) {
                    (true, true) => {
                        run::<$w, V, T, U, Aligned<V>, Aligned<V>>(os, xa, xb, lo, hi, f)
                    }
                    (true, false) => {
                        run::<$w, V, T, U, Aligned<V>, Shifted<V>>(os, xa, xb, lo, hi, f)
                    }
                    (false, true) => {
                        run::<$w, V, T, U, Shifted<V>, Aligned<V>>(os, xa, xb, lo, hi, f)
                    }
                    (false, false) => {
                        run::<$w, V, T, U, Shifted<V>, Shifted<V>>(os, xa, xb, lo, hi, f)
                    }
                }
            };
        }
        match vector / size {
            16 => arms!(16),
            8 => arms!(8),
            _ => arms!(4),
        }
    }
    true
}

/// A run's operand, read one aligned vector at a time.
#[cfg(target_arch = "x86_64")]
trait Reader<V: Width>: Sized {
    /// Starts at `p`, 4-byte aligned, where the vector to read first begins.
    ///
    /// # Safety
    /// The width's features; the vector before `p` belongs to the operand's slice.
    unsafe fn new(p: *const u8) -> Self;
    /// The next vector.
    ///
    /// # Safety
    /// The width's features; the operand's slice holds the vector after the one returned.
    unsafe fn next(&mut self) -> V::Reg;
}

/// An operand as aligned as the output: plain aligned loads.
#[cfg(target_arch = "x86_64")]
struct Aligned<V> {
    at: *const u8,
    width: std::marker::PhantomData<V>,
}

#[cfg(target_arch = "x86_64")]
impl<V: Width> Reader<V> for Aligned<V> {
    #[inline(always)]
    unsafe fn new(p: *const u8) -> Self {
        Aligned {
            at: p,
            width: std::marker::PhantomData,
        }
    }
    #[inline(always)]
    unsafe fn next(&mut self) -> V::Reg {
        // SAFETY: aligned (the output's alignment, which this operand shares) and within
        // the operand's slice per the caller.
        unsafe {
            let v = V::Reg::load(self.at);
            self.at = self.at.add(V::BYTES);
            v
        }
    }
}

/// An operand `k` 4-byte lanes past a vector boundary. Each vector joins the upper lanes of
/// one aligned block and the lower lanes of the next; the second block is kept for the next
/// vector, so every block is loaded once.
#[cfg(target_arch = "x86_64")]
struct Shifted<V: Width> {
    /// The next aligned block to load.
    at: *const u8,
    /// The block loaded last, whose upper lanes start the next vector.
    low: V::Reg,
    /// Lanes `k..k + lanes` of the pair (low, next block).
    index: V::Reg,
}

#[cfg(target_arch = "x86_64")]
impl<V: Width> Reader<V> for Shifted<V> {
    #[inline(always)]
    unsafe fn new(p: *const u8) -> Self {
        let k = p as usize % V::BYTES / 4;
        // SAFETY: the aligned block `p` falls in starts less than a vector before it, in
        // the operand's slice per the caller; the width's features per the caller.
        unsafe {
            let block = p.sub(k * 4);
            Shifted {
                at: block.add(V::BYTES),
                low: V::Reg::load(block),
                index: V::Reg::index(k as i32),
            }
        }
    }
    #[inline(always)]
    unsafe fn next(&mut self) -> V::Reg {
        // SAFETY: aligned; it ends less than a vector past the vector returned, inside the
        // operand's slice per the caller.
        unsafe {
            let high = V::Reg::load(self.at);
            self.at = self.at.add(V::BYTES);
            let v = V::Reg::join(self.low, self.index, high);
            self.low = high;
            v
        }
    }
}

/// [`realigned2`]'s loop, `W` elements a vector, the operands read by `A` and `B`. The
/// first and last vectors are unaligned loads: around them a `Shifted` reader's blocks
/// would reach outside the run, maybe outside the operand's slice.
///
/// # Safety
/// As `realigned2` checks: the width's features; `lo..hi` within all three slices and at
/// least three vectors long; the operands 4-byte aligned; `W` elements of `T` fill a vector.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn run<const W: usize, V: Width, T: Copy, U, A: Reader<V>, B: Reader<V>>(
    os: &mut [MaybeUninit<U>],
    xa: &[T],
    xb: &[T],
    lo: usize,
    hi: usize,
    f: &impl Fn(T, T) -> U,
) {
    // SAFETY: per the contract. The readers start one vector into the run and stop one
    // vector before its end.
    unsafe {
        let (pa, pb, po) = (
            xa.as_ptr().add(lo),
            xb.as_ptr().add(lo),
            os.as_mut_ptr().add(lo),
        );
        let vectors = (hi - lo) / W;
        unaligned::<W, V, T, U>(pa, pb, po, 0, f);
        let mut ra = A::new(pa.add(W) as *const u8);
        let mut rb = B::new(pb.add(W) as *const u8);
        // Four vectors a turn: the loop's own instructions, and a short loop's fetch
        // across a 64-byte line of code, then cost little.
        let mut j = 1;
        while j + 4 < vectors {
            for i in 0..4 {
                apply::<W, V, T, U>(ra.next(), rb.next(), po.add((j + i) * W), f);
            }
            j += 4;
        }
        while j < vectors - 1 {
            apply::<W, V, T, U>(ra.next(), rb.next(), po.add(j * W), f);
            j += 1;
        }
        unaligned::<W, V, T, U>(pa, pb, po, vectors - 1, f);
    }
}

/// Vector `j` of a run, by unaligned loads. A function, not a closure: a closure is not
/// inlined into the `target_feature` function it is called from.
///
/// # Safety
/// The width's features; the run holds vector `j` in all three; `W` elements fill a vector.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn unaligned<const W: usize, V: Width, T: Copy, U>(
    pa: *const T,
    pb: *const T,
    po: *mut MaybeUninit<U>,
    j: usize,
    f: &impl Fn(T, T) -> U,
) {
    // SAFETY: per the contract.
    unsafe {
        let a = V::Reg::loadu(pa.add(j * W) as *const u8);
        let b = V::Reg::loadu(pb.add(j * W) as *const u8);
        apply::<W, V, T, U>(a, b, po.add(j * W), f);
    }
}

/// `out[j] = f(a[j], b[j])` over the `W` lanes of two vectors. By a plain loop over
/// arrays (not `array::from_fn`, which was not always inlined, and then cost a call and a
/// trip through memory).
///
/// # Safety
/// `out` is valid for `W` writes; `W` elements of `T` fill a vector.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn apply<const W: usize, V: Width, T: Copy, U>(
    a: V::Reg,
    b: V::Reg,
    out: *mut MaybeUninit<U>,
    f: &impl Fn(T, T) -> U,
) {
    debug_assert_eq!(W * size_of::<T>(), V::BYTES);
    // SAFETY: `[T; W]` is one vector (per the contract) of plain `Copy` elements of the
    // operand's dtype, and the vectors hold such elements' bytes; `out` per the contract.
    unsafe {
        let pa = std::ptr::read_unaligned(&a as *const V::Reg as *const [T; W]);
        let pb = std::ptr::read_unaligned(&b as *const V::Reg as *const [T; W]);
        for j in 0..W {
            out.add(j).write(MaybeUninit::new(f(pa[j], pb[j])));
        }
    }
}

/// Elsewhere the plain loop runs.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(super) fn realigned2<V: Width, T: Copy, U>(
    _: &mut [MaybeUninit<U>],
    _: &[T],
    _: &[T],
    _: usize,
    _: usize,
    _: &impl Fn(T, T) -> U,
) -> bool {
    false
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::{Width, Y, Z, realigned2};
    use std::mem::MaybeUninit;

    /// The first index of `v` at or after `from` whose element starts `k` elements past a
    /// boundary of `vector` bytes.
    fn placed<T>(v: &[T], from: usize, k: usize, vector: usize) -> usize {
        let size = size_of::<T>();
        let lanes = vector / size;
        let at = v[from..].as_ptr() as usize % vector / size;
        from + (lanes + k - at) % lanes
    }

    /// `realigned2` against the plain loop, each operand at every place in its vector,
    /// runs of three vectors and more, starting past an unaligned head and ending before
    /// the output's end (which it must not write).
    fn check<V: Width, T: Copy + std::fmt::Debug, U: Copy + PartialEq + std::fmt::Debug>(
        make: impl Fn(usize) -> T,
        f: impl Fn(T, T) -> U,
    ) {
        let size = size_of::<T>();
        let lanes = V::BYTES / size;
        for vectors in [3, 4, 5, 6, 7, 12] {
            let run = vectors * lanes;
            let n = run + 2 * lanes;
            let room_a: Vec<T> = (0..n + 2 * lanes).map(&make).collect();
            let room_b: Vec<T> = (0..n + 2 * lanes).map(|i| make(3 * i + 1)).collect();
            for ka in 0..lanes {
                for kb in 0..lanes {
                    let sa = placed(&room_a, 0, ka, V::BYTES);
                    let sb = placed(&room_b, 0, kb, V::BYTES);
                    let (xa, xb) = (&room_a[sa..sa + n], &room_b[sb..sb + n]);
                    let mut room = vec![MaybeUninit::<U>::uninit(); n + 2 * lanes];
                    // SAFETY: `room` holds that many elements of `U`.
                    unsafe { std::ptr::write_bytes(room.as_mut_ptr(), 0xA5, n + 2 * lanes) };
                    let so = placed(&room, 0, lanes - 3, V::BYTES);
                    let os = &mut room[so..so + n];
                    let (lo, hi) = (3, 3 + run);
                    let wrote = realigned2::<V, _, _>(os, xa, xb, lo, hi, &f);
                    let aligned = (ka, kb) == (lanes - 3, lanes - 3);
                    assert_eq!(wrote, V::available() && (V::ALIGNED_TOO || !aligned));
                    for (i, o) in os.iter().enumerate() {
                        let at = format!("{} bytes: ka {ka} kb {kb} i {i}", V::BYTES);
                        if wrote && (lo..hi).contains(&i) {
                            // SAFETY: written.
                            let got = unsafe { o.assume_init() };
                            assert_eq!(got, f(xa[i], xb[i]), "{at}");
                        } else {
                            // SAFETY: `o` is one `U`, its bytes all initialised.
                            let bytes = unsafe {
                                std::slice::from_raw_parts(o.as_ptr() as *const u8, size_of::<U>())
                            };
                            assert!(bytes.iter().all(|&b| b == 0xA5), "{at}: written");
                        }
                    }
                }
            }
        }
    }

    fn check_all<V: Width>() {
        check::<V, _, _>(|i| i as f32 * 0.5, |a: f32, b: f32| a + b);
        check::<V, _, _>(|i| i as f64 + 0.25, |a: f64, b: f64| a * b);
        check::<V, _, _>(|i| i as i32 - 7, |a: i32, b: i32| a.wrapping_sub(b));
        check::<V, _, _>(|i| (i as u64) << 33 | i as u64, |a: u64, b: u64| a ^ b);
        check::<V, _, _>(|i| i as f32, |a: f32, b: f32| u32::from(a < b));
    }

    #[test]
    fn realigned_runs_write_what_the_plain_loop_writes() {
        check_all::<Z>();
        check_all::<Y>();
    }

    /// Where it does not apply it writes nothing: other element sizes, widths that differ,
    /// fewer than three vectors, an output not on a boundary, a run past a slice.
    #[test]
    fn refuses_what_it_does_not_handle() {
        let xa: Vec<u16> = (0..256).collect();
        let mut out = vec![MaybeUninit::<u16>::uninit(); 256];
        let xor = |a: u16, b: u16| a ^ b;
        assert!(!realigned2::<Z, _, _>(
            &mut out,
            &xa[1..],
            &xa,
            0,
            128,
            &xor
        ));
        let xf: Vec<f32> = (0..256).map(|i| i as f32).collect();
        let mut wide = vec![MaybeUninit::<f64>::uninit(); 256];
        let widen = |a: f32, b: f32| f64::from(a + b);
        assert!(!realigned2::<Z, _, _>(
            &mut wide,
            &xf[1..],
            &xf,
            0,
            128,
            &widen
        ));
        let mut out = vec![MaybeUninit::<f32>::uninit(); 256];
        let so = placed(&out, 0, 0, 64);
        let (a, b) = (&xf[placed(&xf, 0, 1, 64)..], &xf[placed(&xf, 0, 2, 64)..]);
        let add = |p: f32, q: f32| p + q;
        assert!(
            !realigned2::<Z, _, _>(&mut out[so..], a, b, 0, 32, &add),
            "two vectors"
        );
        assert!(
            !realigned2::<Z, _, _>(&mut out[so + 1..], a, b, 0, 48, &add),
            "off a boundary"
        );
        assert!(
            !realigned2::<Z, _, _>(&mut out[so..], a, b, 0, 40, &add),
            "not whole vectors"
        );
        assert!(
            !realigned2::<Z, _, _>(&mut out[so..so + 32], a, b, 0, 48, &add),
            "past output"
        );
        assert!(
            !realigned2::<Z, _, _>(&mut out[so..], &a[..32], b, 0, 48, &add),
            "past operand"
        );
        assert!(
            !realigned2::<Y, _, _>(&mut out[so + 1..], a, b, 0, 48, &add),
            "off a boundary"
        );
    }
}
