//! The loops every host kernel shares: splitting work over a device's threads and walking
//! strided operands in long inner runs.

use super::mid_band::Choice;
use super::realign::{Width, Y, Z, realigned2};
use super::simd::wide;
use super::view::View;
use super::{HostBuffer, HostDevice};
use crate::backends::SharedBuffer;
use crate::dtype::Element;
use crate::layout::{coalesce, contiguous_strides, for_each_run};
use std::mem::MaybeUninit;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

/// From this many bytes of traffic (read plus written) a kernel may split over the
/// device's threads even when its helpers sleep; below, waking a sleeping helper costs more
/// than the work saved. Around it the device learns which way pays, and from
/// `mid_max_bytes` on always splits (see `mid_min_bytes`). `DLARRAY_PAR_MIN_BYTES`
/// overrides it (read once), to move the band on another machine.
const PAR_MIN_BYTES: usize = 1 << 19;

/// The threshold in bytes, `PAR_MIN_BYTES` unless overridden.
pub(crate) fn par_min_bytes() -> usize {
    static MIN: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *MIN.get_or_init(|| {
        std::env::var("DLARRAY_PAR_MIN_BYTES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(PAR_MIN_BYTES)
    })
}

/// A raw pointer that may cross threads; the code that shares it guarantees disjoint writes.
#[derive(Clone, Copy)]
pub(crate) struct SendPtr<T>(pub *mut T);

impl<T> SendPtr<T> {
    /// The pointer. A method (not `.0`) so closures capture the whole `Send` wrapper.
    #[inline(always)]
    pub fn ptr(self) -> *mut T {
        self.0
    }
}
// SAFETY: users only write disjoint index ranges through it (see `par_ranges`).
unsafe impl<T> Send for SendPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SendPtr<T> {}

/// Runs `f(0)`, .., `f(chunks - 1)` on `dev`'s threads, the calling thread included.
///
/// The caller does not hand the work over and sleep (as `ThreadPool::install` does): it
/// queues `threads - 1` helpers and takes chunks itself from a shared counter, so a helper
/// that wakes late (tens of microseconds on a virtual machine) finds the work done and costs
/// nothing, and the op is never much slower than on one thread. Helpers poll for the next job
/// for a short window before they sleep (`helpers`), so back-to-back ops skip the wake-up.
///
/// Not generic on purpose: every kernel (op x dtype) reaches the pool through this one
/// function, so the job machinery is compiled once instead of once per kernel.
pub(crate) fn par_for(dev: &HostDevice, chunks: usize, f: &(dyn Fn(usize) + Sync)) {
    // More chunks than 32 bits count (never from a kernel: a few per thread) run here alone.
    let Ok(count) = u32::try_from(chunks) else {
        (0..chunks).for_each(f);
        return;
    };
    if chunks <= 1 || dev.threads() <= 1 {
        (0..chunks).for_each(f);
        return;
    }
    let shared = Arc::new(Shared {
        left: AtomicU64::new(u64::from(count)),
        active: AtomicUsize::new(0),
        closed: AtomicBool::new(false),
        panicked: AtomicBool::new(false),
        // SAFETY: the lifetime is erased only for the helpers, which call `f` while `closed`
        // is false or they are counted in `active`; this function returns (and `f`'s borrow
        // ends) only after `closed` is set and `active` is back to zero.
        job: JobPtr(unsafe {
            std::mem::transmute::<&(dyn Fn(usize) + Sync), &'static (dyn Fn(usize) + Sync)>(f)
        }),
    });
    dev.help(dev.threads().min(chunks) - 1, &mut || {
        let s = shared.clone();
        Box::new(move || s.help())
    });
    let mine = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| shared.run(f, false)));
    shared.closed.store(true, Ordering::SeqCst);
    let mut spins = 0u32;
    while shared.active.load(Ordering::Acquire) != 0 {
        // A helper is finishing its last chunk: at most one chunk's time.
        spins += 1;
        if spins < 1 << 12 {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
    if let Err(p) = mine {
        std::panic::resume_unwind(p);
    }
    if shared.panicked.load(Ordering::Acquire) {
        panic!("a kernel panicked on a helper thread");
    }
}

/// The job `f` of a `par_for` call, shared with its helpers.
#[derive(Clone, Copy)]
struct JobPtr(&'static (dyn Fn(usize) + Sync));

/// What a `par_for` caller and its helpers share: the chunks not taken yet, and who is still
/// inside the job.
struct Shared {
    /// The chunks not taken yet, `front..back`, packed as `front << 32 | back`. The caller
    /// takes from the front and the helpers from the back, so an op run again and again
    /// gives each thread mostly the same chunks, whose data its own L2 still holds: taken
    /// in turn from one counter, they moved between the cores' caches, and a 256K-element
    /// f32 add took 18-25 µs where two threads that keep their halves take 13-14 µs (49-57
    /// µs when the halves swap every time). A helper that comes late still finds the work
    /// done.
    left: AtomicU64,
    /// Helpers that may be calling the job.
    active: AtomicUsize,
    /// Set by the caller once it has run out of chunks: a helper that starts later leaves
    /// without touching the job.
    closed: AtomicBool,
    panicked: AtomicBool,
    job: JobPtr,
}

impl Shared {
    /// Runs chunks until none is left: from the front for the caller, from the back for a
    /// helper.
    fn run(&self, f: &(dyn Fn(usize) + Sync), from_back: bool) {
        while let Some(c) = self.take(from_back) {
            f(c);
        }
    }

    /// Takes the first chunk left (or the last), if any is.
    fn take(&self, from_back: bool) -> Option<usize> {
        let mut cur = self.left.load(Ordering::Relaxed);
        loop {
            let (front, back) = (cur >> 32, cur & u64::from(u32::MAX));
            if front >= back {
                return None;
            }
            let (next, c) = if from_back {
                (front << 32 | (back - 1), back - 1)
            } else {
                ((front + 1) << 32 | back, front)
            };
            match self
                .left
                .compare_exchange_weak(cur, next, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return Some(c as usize),
                Err(now) => cur = now,
            }
        }
    }

    fn help(&self) {
        // Counted before looking at `closed` (both SeqCst): either the caller sees this
        // helper in `active` and waits, or this helper sees `closed` and leaves.
        self.active.fetch_add(1, Ordering::SeqCst);
        if !self.closed.load(Ordering::SeqCst) {
            let job = self.job.0;
            let ran =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.run(job, true)));
            if ran.is_err() {
                self.panicked.store(true, Ordering::Release);
            }
        }
        // Release: the caller's Acquire load sees every write the job made.
        self.active.fetch_sub(1, Ordering::Release);
    }
}

/// From a quarter of the `par_min_bytes` threshold (128 KiB by default) up to four times it,
/// the device learns whether splitting pays (`mid_band`): its gain there changes with the
/// machine of the moment. Below `par_min_bytes` a kernel considers splitting only when its
/// helpers are awake or ops of this size come in a loop (`Helpers::ready_for_mid_work`):
/// waking a sleeping helper for it cost more than it saved (3.6 µs on average at 16K
/// elements of float32 add), and a 16K-element sum (64 KiB) gained nothing.
fn mid_min_bytes() -> usize {
    par_min_bytes() / 4
}

/// Where the learned band ends: from here on splitting always paid (a 256K-element float32
/// add, 3 MiB, took 22 to 24 µs split against 35 to 37 µs alone on the guest where 16K ones
/// were faster alone).
fn mid_max_bytes() -> usize {
    par_min_bytes().saturating_mul(4)
}

/// The least traffic a chunk carries: below it, taking a chunk (an atomic on a line both
/// threads write) costs more than balancing saves.
const MIN_CHUNK_BYTES: usize = 1 << 15;

/// How a kernel over `n` items splits over a device's threads.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Split {
    /// Items per chunk. Set by the size alone, so a reduction's partial results, and so its
    /// bits, never depend on whether the helpers were awake.
    pub chunk: usize,
    /// Whether the helpers take chunks too (else the caller runs them all).
    pub helpers: bool,
    /// For a mid-size op, the device's choice, whose time `timed` reports back.
    learn: Option<Choice>,
    traffic: usize,
}

impl Split {
    /// Runs `f(0)`, .., `f(chunks - 1)`: on the device's threads, or on the caller.
    pub(crate) fn run(self, dev: &HostDevice, chunks: usize, f: &(dyn Fn(usize) + Sync)) {
        self.timed(dev, || {
            if self.helpers {
                par_for(dev, chunks, f);
            } else {
                (0..chunks).for_each(f);
            }
        });
    }

    /// Runs `work`, this split's execution (shared or alone, as `helpers` says); for a
    /// mid-size op, tells the device how long it took (see `mid_band`).
    pub(crate) fn timed<R>(self, dev: &HostDevice, work: impl FnOnce() -> R) -> R {
        // Only a stretch's counted ops (`octave` set) read the clock: the others would pay
        // two reads (~40 ns, 2-3 % of a 16K-element add) for a time `record` drops.
        let Some(choice) = self.learn.filter(|c| c.octave.is_some()) else {
            return work();
        };
        let start = Instant::now();
        let r = work();
        dev.mid_band().record(choice, self.traffic, start.elapsed());
        r
    }
}

/// How to split `n` items of `bytes` bytes of traffic each over `dev`'s threads (a few
/// chunks per thread balance load), or `None` when the work is too small to split, or there
/// is one thread.
#[inline(always)]
pub(crate) fn split(dev: &HostDevice, n: usize, bytes: usize) -> Option<Split> {
    // Inline, the common answer for small work skips the call (and its returned struct):
    // ~25 of a small sum's instructions.
    let bytes = bytes.max(1);
    let traffic = n.saturating_mul(bytes);
    if traffic < mid_min_bytes() {
        return None;
    }
    split_band(dev, n, bytes, traffic)
}

/// [`split`] for `traffic` (`n` items of `bytes`, at least 1) of at least `mid_min_bytes`.
fn split_band(dev: &HostDevice, n: usize, bytes: usize, traffic: usize) -> Option<Split> {
    let threads = dev.threads();
    if threads <= 1 {
        return None;
    }
    let learn = (traffic < mid_max_bytes()
        && (traffic >= par_min_bytes() || dev.helpers_ready_for_mid_work()))
    .then(|| {
        dev.mid_band()
            .choose(traffic, mid_min_bytes(), || dev.helpers_polling())
    });
    Some(Split {
        chunk: (n / (threads * 4)).max(MIN_CHUNK_BYTES / bytes).max(1),
        helpers: learn.map_or(traffic >= par_min_bytes(), |c| c.split),
        learn,
        traffic,
    })
}

/// Runs `f` over disjoint ranges covering `0..n` (items of `bytes` bytes of traffic each), in
/// parallel on `dev`'s threads when large.
pub(crate) fn par_ranges(
    dev: &HostDevice,
    n: usize,
    bytes: usize,
    f: impl Fn(Range<usize>) + Sync,
) {
    let Some(sp) = split(dev, n, bytes) else {
        f(0..n);
        return;
    };
    sp.timed(dev, || {
        if !sp.helpers {
            // Elementwise results do not depend on the chunks: one run on the caller.
            return f(0..n);
        }
        // Multiples of 64 keep chunks cache-line aligned.
        let chunk = sp.chunk.next_multiple_of(64);
        par_for(dev, n.div_ceil(chunk), &|c| {
            f(c * chunk..((c + 1) * chunk).min(n))
        });
    });
}

/// The output slice `r` of a buffer being filled by a kernel.
///
/// # Safety
/// `out` must point to at least `r.end` elements that no one else reads or writes meanwhile.
pub(crate) unsafe fn out_slice<'a, U>(
    out: SendPtr<MaybeUninit<U>>,
    r: &Range<usize>,
) -> &'a mut [MaybeUninit<U>] {
    // SAFETY: guaranteed by the caller.
    unsafe { std::slice::from_raw_parts_mut(out.ptr().add(r.start), r.len()) }
}

/// Allocates the output of an elementwise kernel: `n` elements of `U` on `dev`.
#[inline]
pub(crate) fn alloc_out<U: Element>(
    dev: &HostDevice,
    n: usize,
) -> crate::error::Result<HostBuffer> {
    alloc_out_shifted::<U>(dev, n, 0)
}

/// The vector width the contiguous loops are aligned to (AVX2's 32 bytes: a 32-byte load at a
/// 32-byte boundary never splits a cache line).
const VECTOR_ALIGN: usize = 32;

/// The largest output [`matching_shift`] shifts: 2K f32 elements (a 2K-element add over
/// misaligned vectors took 311 ns unshifted, 259 ns shifted; a 4K-element one gained nothing).
const SHIFT_MAX_BYTES: usize = 8 << 10;

/// Where in a 64-byte line a kernel's output of elements as wide as its inputs' should start:
/// where the first of `inputs` (the first elements of contiguous operands) starts. Then the
/// loop, once past the few elements before the output's boundary (`aligned_head`,
/// `overlapped2`), loads that operand and stores the output by aligned vectors only. 0 when
/// an operand is strided, when the widths differ, or when the first is aligned already.
///
/// Why: a `Vec<f32>` from the system allocator starts 16, 32 or 48 bytes past a line, and a
/// 1K-element add over two such vectors into a 64-byte aligned output took ~64 ns here
/// against ~45 ns for aligned operands (every other load split a line); with the output
/// shifted to match and the head peeled, ~48 ns. When the operands disagree, matching one
/// still pays: 64-byte vectors at (16, 32) bytes past a line into an output at 0 took 45 ns,
/// into one at 16 (the first's) 37 ns. Only outputs of at most `SHIFT_MAX_BYTES`: beyond,
/// the operands leave L1 and the loop waits on L2, where the split loads cost nothing
/// measurable (a 16K-element add: 1.91 µs unshifted, 1.97 µs shifted).
pub(crate) fn matching_shift<T, U>(inputs: &[Option<*const T>], n: usize) -> usize {
    if size_of::<T>() != size_of::<U>()
        || size_of::<T>() == 0
        || n <= SMALL_RUN
        || n.saturating_mul(size_of::<U>()) > SHIFT_MAX_BYTES
        || inputs.iter().any(Option::is_none)
    {
        return 0;
    }
    match inputs.first() {
        Some(Some(p)) => *p as usize % 64,
        _ => 0,
    }
}

/// Contiguous runs of at most this many elements skip the thread split, the AVX2 copy and the
/// aligned head: for them, deciding those costs more than the loop itself.
const SMALL_RUN: usize = 16;

/// How many of the `len` elements at `out` come before its first `VECTOR_ALIGN` boundary:
/// the head a contiguous loop runs first, so the rest runs on aligned addresses.
#[inline(always)]
pub(crate) fn aligned_head<U>(out: *const U, len: usize) -> usize {
    let size = size_of::<U>();
    let m = out as usize % VECTOR_ALIGN;
    if m == 0 || size == 0 || !m.is_multiple_of(size) {
        return 0;
    }
    ((VECTOR_ALIGN - m) / size).min(len)
}

/// As [`alloc_out`], `shift` bytes past a 64-byte boundary (see [`matching_shift`]).
#[inline]
pub(crate) fn alloc_out_shifted<U: Element>(
    dev: &HostDevice,
    n: usize,
    shift: usize,
) -> crate::error::Result<HostBuffer> {
    let bytes = crate::layout::checked_bytes(n, std::mem::size_of::<U>(), dev.name())?;
    dev.alloc_shifted(bytes, dev.default_kind(), shift)
}

/// As [`alloc_out_shifted`], the buffer already shared, with where to write it (see
/// `HostDevice::alloc_shared`).
#[inline(always)]
pub(crate) fn alloc_out_shared<U: Element>(
    dev: &HostDevice,
    n: usize,
    shift: usize,
) -> crate::error::Result<(SharedBuffer, SendPtr<MaybeUninit<U>>)> {
    let bytes = crate::layout::checked_bytes(n, std::mem::size_of::<U>(), dev.name())?;
    let (buf, first) = dev.alloc_shared(bytes, dev.default_kind(), shift)?;
    Ok((buf, SendPtr(first.as_ptr() as *mut MaybeUninit<U>)))
}

/// The start of a kernel's output buffer, typed.
pub(crate) fn out_ptr<U>(buf: &mut HostBuffer) -> SendPtr<MaybeUninit<U>> {
    SendPtr(buf.as_mut_ptr() as *mut MaybeUninit<U>)
}

/// `out[i] = f(x[i])` over the row-major elements of `x`; `out` must hold `x.len()`
/// elements that nothing else touches meanwhile.
pub(crate) fn map1<T: Element, U: Element>(
    dev: &HostDevice,
    x: View<'_, T>,
    out: SendPtr<MaybeUninit<U>>,
    f: impl Fn(T) -> U + Sync + Send,
) {
    map1_in::<super::simd::Avx2, T, U>(dev, x, out, f)
}

/// [`map1`], its contiguous loop run in the lanes `L` says (`simd::Widest` for a loop bound
/// by arithmetic).
pub(crate) fn map1_in<L: super::simd::Lanes, T: Element, U: Element>(
    dev: &HostDevice,
    x: View<'_, T>,
    out: SendPtr<MaybeUninit<U>>,
    f: impl Fn(T) -> U + Sync + Send,
) {
    let n = x.len();
    let o = out;
    let bytes = size_of::<T>() + size_of::<U>();
    if let Some(xs) = x.as_slice() {
        if n <= SMALL_RUN {
            // SAFETY: `out` holds n elements, written by this thread alone.
            let os = unsafe { out_slice(o, &(0..n)) };
            for (o, &v) in os.iter_mut().zip(xs) {
                o.write(f(v));
            }
            return;
        }
        let turns = alternates(dev, n.saturating_mul(bytes));
        par_ranges(dev, n, bytes, |r| {
            // SAFETY: `out` holds n elements; ranges are disjoint.
            let os = unsafe { out_slice(o, &r) };
            let xs = &xs[r];
            let head = aligned_head(os.as_ptr(), os.len());
            let backward = turns && Direction::next() == Direction::Backward;
            L::run(
                #[inline(always)]
                || {
                    if backward {
                        return map1_blocks_backward(os, xs, head, &f);
                    }
                    // One loop over two spans (the unaligned head, then the rest), so it is
                    // compiled once.
                    for (lo, hi) in [(0, head), (head, os.len())] {
                        for (o, &v) in os[lo..hi].iter_mut().zip(&xs[lo..hi]) {
                            o.write(f(v));
                        }
                    }
                },
            );
        });
        return;
    }
    let shape = x.layout.shape();
    let os = contiguous_strides(shape);
    let (cshape, [xs, ost]) = coalesce(shape, [x.layout.strides(), &os]);
    par_ranges(dev, n, bytes, |r| {
        for_each_run(
            &cshape,
            [&xs, &ost],
            [x.layout.offset() as isize, 0],
            r,
            |[xo, oo], len, [xi, _]| {
                // SAFETY: output offsets of a row-major walk are oo..oo+len, inside `out`.
                let os = unsafe { out_slice(o, &(oo as usize..oo as usize + len)) };
                for (j, o) in os.iter_mut().enumerate() {
                    // SAFETY: element j of a run the layout's walk produced.
                    o.write(f(unsafe { x.at(xo + j as isize * xi) }));
                }
            },
        );
    });
}

/// Bytes of output [`map1_blocks_backward`] writes forward at a time.
const BACKWARD_BLOCK_BYTES: usize = 1024;

/// `os[i] = f(xs[i])` from the end: blocks of `BACKWARD_BLOCK_BYTES` from the last to the
/// first, each walked forward (so its loop vectorises as the forward one does), and the
/// unaligned `head` elements last. Backward at the granularity of the cache, for
/// [`Direction`]'s alternation: a unary negation of 8K f32 elements took 664-692 ns forward
/// each time and 535-538 ns alternating, against ndarray's 597-607.
#[inline(always)]
fn map1_blocks_backward<T: Copy, U>(
    os: &mut [MaybeUninit<U>],
    xs: &[T],
    head: usize,
    f: &impl Fn(T) -> U,
) {
    let block = (BACKWARD_BLOCK_BYTES / size_of::<U>().max(1)).max(1);
    let mut hi = os.len();
    while hi > head {
        let lo = hi - (hi - head - 1) % block - 1;
        for (o, &v) in os[lo..hi].iter_mut().zip(&xs[lo..hi]) {
            o.write(f(v));
        }
        hi = lo;
    }
    for (o, &v) in os[..head].iter_mut().zip(&xs[..head]) {
        o.write(f(v));
    }
}

/// The most traffic (operands read plus output written) of a contiguous run that `map2` runs
/// by whole vectors ([`overlapped2`]): the runs one thread takes alone (below
/// `mid_min_bytes`). In L1 (48 KiB on the Intel guest, 32 KiB on the AMD one), on Intel,
/// halving the loads and stores is what counts: a 1K-element f32 add took 45-55 ns in AVX2
/// against 30-37 ns in 64-byte vectors. On the AMD guest, which runs a 512-bit operation as
/// two halves, 32-byte vectors are the faster in L1 (`realign::Y`, `simd::halves_512`). Past
/// L1, where the operands come from L2, what counts is the direction the run takes
/// ([`Direction`]), in 64-byte vectors on both; `map1`'s runs alternate in the same band.
const L1_RUN_BYTES: usize = 128 << 10;

/// Whether a contiguous elementwise op of `traffic` bytes alternates its direction
/// ([`Direction::next`]): past the core's L1d, in the band one thread runs alone
/// (`L1_RUN_BYTES`). The one rule `map1` and `map2` share.
#[inline(always)]
fn alternates(dev: &HostDevice, traffic: usize) -> bool {
    traffic > dev.l1d_bytes() && traffic <= L1_RUN_BYTES
}

/// Which way [`overlapped2`] walks its aligned middle.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Direction {
    Forward,
    Backward,
}

impl Direction {
    /// The direction of this thread's next run past L1: the other one than its last's.
    ///
    /// Why: an op whose operands and output (say 36 KiB) just exceed L1 (32 KiB), walked in
    /// the same direction as the op before it over the same memory, finds each line evicted
    /// just before it needs it: the least recently used line is always the next one (a
    /// least-recently-used cache under a cyclic walk larger than itself misses every time).
    /// Walked the other way, it starts where the previous walk ended, on what L1 still
    /// holds. On the AMD EPYC guest (Zen 4, 32 KiB L1d), a bare AVX-512 loop of 3K-element
    /// f32 adds over the same operands took 196-204 ns alternating against 317-364 ns forward
    /// each time, 4K elements 337-348 against 446-481, 8K 771-775 against 891-910; through
    /// the runtime, 3K-element adds took 283-293 ns against 432-471 before (ndarray's:
    /// 324-337 ns). In L1 both directions take the same time. It holds for
    /// any chain of elementwise ops over data of this size (an update `x = x + dx` in a loop,
    /// `(a + b) * c`): each starts on the lines the previous one touched last.
    /// Elementwise results do not depend on the order they are computed in.
    #[inline(always)]
    fn next() -> Direction {
        thread_local! {
            static LAST_BACKWARD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        }
        LAST_BACKWARD
            .try_with(|b| {
                let backward = !b.get();
                b.set(backward);
                if backward {
                    Direction::Backward
                } else {
                    Direction::Forward
                }
            })
            .unwrap_or(Direction::Forward)
    }

    /// The direction for a run writing `out` from operands at `xa` and `xb`, whose traffic
    /// exceeds L1 or not (`past_l1`). Past L1, alternating (see [`next`](Self::next)).
    /// Within it, forward, but backward where the output starts just ahead of an operand
    /// (see [`ALIAS_WINDOW`]). Past L1 the alternation wins even so: bare loops of
    /// 4K-element f32 adds with the output 176 bytes ahead of both operands took 414-421 ns
    /// alternating against 437-441 ns backward and 551 ns forward each time.
    #[inline(always)]
    fn of_run(past_l1: bool, out: usize, xa: usize, xb: usize) -> Direction {
        if past_l1 {
            Direction::next()
        } else if aliases_ahead(out, xa) || aliases_ahead(out, xb) {
            Direction::Backward
        } else {
            Direction::Forward
        }
    }
}

/// `os[i] = f(xa[i], xb[i])` by vectors of output `V::BYTES` wide: one unaligned vector at
/// the start, aligned ones from the output's first boundary, one unaligned vector ending at
/// the end. The first and last overlap the middle, whose elements they compute and write
/// again with the same value: a peeled scalar head took ~8 ns of a 1K-element add. Sound
/// because `os` is the kernel's own output, which no operand shares and nothing reads
/// meanwhile. Called inside the width's context (`Width::run`).
#[inline(always)]
fn overlapped2<V: Width, T: Copy, U>(
    os: &mut [MaybeUninit<U>],
    xa: &[T],
    xb: &[T],
    past_l1: bool,
    f: &impl Fn(T, T) -> U,
) {
    let n = os.len();
    let (xa, xb) = (&xa[..n], &xb[..n]);
    match V::BYTES / size_of::<U>().max(1) {
        64 => vectors2::<64, V, _, _>(os, xa, xb, past_l1, f),
        32 => vectors2::<32, V, _, _>(os, xa, xb, past_l1, f),
        16 => vectors2::<16, V, _, _>(os, xa, xb, past_l1, f),
        8 => vectors2::<8, V, _, _>(os, xa, xb, past_l1, f),
        4 => vectors2::<4, V, _, _>(os, xa, xb, past_l1, f),
        2 => vectors2::<2, V, _, _>(os, xa, xb, past_l1, f),
        _ => zip2(os, xa, xb, f),
    }
}

/// [`overlapped2`] for `W` elements to a vector of output (`xa` and `xb` as long as `os`).
#[inline(always)]
fn vectors2<const W: usize, V: Width, T: Copy, U>(
    os: &mut [MaybeUninit<U>],
    xa: &[T],
    xb: &[T],
    past_l1: bool,
    f: &impl Fn(T, T) -> U,
) {
    let n = os.len();
    if n < 2 * W {
        return zip2(os, xa, xb, f);
    }
    let bytes = V::BYTES;
    let head = (bytes - os.as_ptr() as usize % bytes) % bytes / size_of::<U>().max(1);
    let end = n - (n - head) % W;
    let last = n - W;
    let (po, pa, pb) = (
        os.as_ptr() as usize,
        xa.as_ptr() as usize,
        xb.as_ptr() as usize,
    );
    match Direction::of_run(past_l1, po, pa, pb) {
        Direction::Forward => {
            vector2::<W, _, _>(os, xa, xb, 0, f);
            if !realigned2::<V, _, _>(os, xa, xb, head, end, f) {
                zip2(&mut os[head..end], &xa[head..end], &xb[head..end], f);
            }
            vector2::<W, _, _>(os, xa, xb, last, f);
        }
        Direction::Backward => {
            vector2::<W, _, _>(os, xa, xb, last, f);
            let mut hi = end;
            while hi >= head + W {
                hi -= W;
                vector2::<W, _, _>(os, xa, xb, hi, f);
            }
            vector2::<W, _, _>(os, xa, xb, 0, f);
        }
    }
}

/// How far (bytes) ahead of an operand, modulo 4 KiB, an output may start and still make
/// a forward loop wait: a load whose address matches an older store's in its low 12 bits
/// may wait for that store (4K aliasing), and a forward loop whose output runs a few vectors
/// ahead of an operand (mod 4 KiB) loads each vector soon after storing to the same low
/// bits. On the AMD EPYC guest (Zen 4), in one process of two to four (the processor's
/// dependence predictor), a 1K-element f32 add took 211-247 ns with the output 64 to 192
/// bytes ahead of its first operand, 154-177 ns at 256 and 320, against 118-121 ns at the
/// other offsets; run backward, 115-118 ns in every process (the first operand's place in
/// its page scanned by 64 bytes, the output a block from the thread's cache). A backward
/// loop waits alike where the output runs as far behind.
const ALIAS_WINDOW: usize = 384;

/// Whether `out` starts within [`ALIAS_WINDOW`] bytes ahead of `x`, modulo 4 KiB: where a
/// forward loop writing `out` from `x` waits on 4K aliasing.
#[inline(always)]
fn aliases_ahead(out: usize, x: usize) -> bool {
    let ahead = out.wrapping_sub(x) % 4096;
    ahead != 0 && ahead <= ALIAS_WINDOW
}

/// `os[i] = f(xa[i], xb[i])` over the shortest of the three.
#[inline(always)]
fn zip2<T: Copy, U>(os: &mut [MaybeUninit<U>], xa: &[T], xb: &[T], f: &impl Fn(T, T) -> U) {
    for ((o, &p), &q) in os.iter_mut().zip(xa).zip(xb) {
        o.write(f(p, q));
    }
}

/// `os[i] = f(xa[i], xb[i])` for the `W` elements from `lo`, read into arrays first: written
/// straight from the slices, the compiler could not rule out that a store overwrites a later
/// load, and unrolled the elements one by one.
#[inline(always)]
fn vector2<const W: usize, T: Copy, U>(
    os: &mut [MaybeUninit<U>],
    xa: &[T],
    xb: &[T],
    lo: usize,
    f: &impl Fn(T, T) -> U,
) {
    let (ca, cb) = (&xa[lo..lo + W], &xb[lo..lo + W]);
    let pa: [T; W] = std::array::from_fn(|j| ca[j]);
    let pb: [T; W] = std::array::from_fn(|j| cb[j]);
    let r: [U; W] = std::array::from_fn(|j| f(pa[j], pb[j]));
    for (o, v) in os[lo..lo + W].iter_mut().zip(r) {
        o.write(v);
    }
}

/// `out[i] = f(a[i], b[i])` over two views of one shape (same contract on `out` as `map1`).
pub(crate) fn map2<T: Element, U: Element>(
    dev: &HostDevice,
    a: View<'_, T>,
    b: View<'_, T>,
    out: SendPtr<MaybeUninit<U>>,
    f: impl Fn(T, T) -> U + Sync + Send,
) {
    let n = a.len();
    let o = out;
    let bytes = 2 * size_of::<T>() + size_of::<U>();
    if let (Some(xa), Some(xb)) = (a.as_slice(), b.as_slice()) {
        if n <= SMALL_RUN {
            // SAFETY: `out` holds n elements, written by this thread alone.
            let os = unsafe { out_slice(o, &(0..n)) };
            for ((o, &p), &q) in os.iter_mut().zip(xa).zip(xb) {
                o.write(f(p, q));
            }
            return;
        }
        let traffic = n.saturating_mul(bytes);
        let wide_run = traffic <= L1_RUN_BYTES;
        let past_l1 = alternates(dev, traffic);
        par_ranges(dev, n, bytes, |r| {
            // SAFETY: `out` holds n elements; ranges are disjoint.
            let os = unsafe { out_slice(o, &r) };
            let (xa, xb) = (&xa[r.clone()], &xb[r]);
            // The whole op's traffic, not the range's: a split op's ranges are each small,
            // and their operands come from L2 all the same.
            if wide_run {
                // Past L1 the direction counts, not the width: 64-byte vectors stay (a 4K
                // add took 413-418 ns so, 423-425 in 32-byte ones).
                let done = if !past_l1 && super::simd::halves_512() {
                    Y::run(
                        #[inline(always)]
                        || overlapped2::<Y, _, _>(os, xa, xb, past_l1, &f),
                    )
                } else {
                    Z::run(
                        #[inline(always)]
                        || overlapped2::<Z, _, _>(os, xa, xb, past_l1, &f),
                    )
                };
                if done.is_some() {
                    return;
                }
            }
            let head = aligned_head(os.as_ptr(), os.len());
            wide(
                #[inline(always)]
                || {
                    // As in `map1`: the unaligned head, then the rest, by one loop.
                    for (lo, hi) in [(0, head), (head, os.len())] {
                        let (a, b) = (&xa[lo..hi], &xb[lo..hi]);
                        for ((o, &p), &q) in os[lo..hi].iter_mut().zip(a).zip(b) {
                            o.write(f(p, q));
                        }
                    }
                },
            );
        });
        return;
    }
    let shape = a.layout.shape();
    let os = contiguous_strides(shape);
    let (cshape, [sa, sb, so]) = coalesce(shape, [a.layout.strides(), b.layout.strides(), &os]);
    let base = [a.layout.offset() as isize, b.layout.offset() as isize, 0];
    par_ranges(dev, n, bytes, |r| {
        for_each_run(
            &cshape,
            [&sa, &sb, &so],
            base,
            r,
            |[ao, bo, oo], len, [ai, bi, _]| {
                // SAFETY: output offsets of a row-major walk are oo..oo+len, inside `out`.
                let os = unsafe { out_slice(o, &(oo as usize..oo as usize + len)) };
                // SAFETY (every `at` below): element j of a run the layouts' walk produced,
                // for operands whose inner strides are (ai, bi).
                match (ai, bi) {
                    // Broadcasting a scalar-like operand: keep it in a register.
                    (1, 0) => {
                        let q = unsafe { b.at(bo) };
                        for (j, o) in os.iter_mut().enumerate() {
                            o.write(f(unsafe { a.at(ao + j as isize) }, q));
                        }
                    }
                    (0, 1) => {
                        let p = unsafe { a.at(ao) };
                        for (j, o) in os.iter_mut().enumerate() {
                            o.write(f(p, unsafe { b.at(bo + j as isize) }));
                        }
                    }
                    _ => {
                        for (j, o) in os.iter_mut().enumerate() {
                            let j = j as isize;
                            let (p, q) = unsafe { (a.at(ao + j * ai), b.at(bo + j * bi)) };
                            o.write(f(p, q));
                        }
                    }
                }
            },
        );
    });
}

/// Fills `len` elements of `buf` with `value`.
pub(crate) fn fill<T: Element>(dev: &HostDevice, buf: &mut HostBuffer, len: usize, value: T) {
    let o = SendPtr(buf.as_mut_ptr() as *mut MaybeUninit<T>);
    par_ranges(dev, len, size_of::<T>(), |r| {
        // SAFETY: the buffer holds `len` elements; ranges are disjoint.
        for s in unsafe { out_slice(o, &r) } {
            s.write(value);
        }
    });
}

/// `memcpy` of `len` bytes split over the device's threads.
pub(crate) fn par_memcpy(dev: &HostDevice, src: *const u8, dst: *mut u8, len: usize) {
    let (s, d) = (SendPtr(src as *mut u8), SendPtr(dst));
    // Each byte is read once and written once.
    par_ranges(dev, len, 2, |r| {
        // SAFETY: callers pass `len` readable bytes at `src` and `len` writable bytes at `dst`
        // that do not overlap; ranges are disjoint.
        unsafe {
            std::ptr::copy_nonoverlapping(s.ptr().add(r.start), d.ptr().add(r.start), r.len())
        }
    });
}

#[cfg(test)]
mod tests {
    use super::super::realign::{Y, Z};
    use super::{
        ALIAS_WINDOW, BACKWARD_BLOCK_BYTES, Direction, JobPtr, SMALL_RUN, Shared, VECTOR_ALIGN,
        aliases_ahead, aligned_head, matching_shift, mid_min_bytes, overlapped2,
    };
    use super::{map1_blocks_backward, mid_max_bytes, par_min_bytes, split};
    use crate::backends::host::HostBackend;
    use std::mem::MaybeUninit;
    use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};

    fn backend(threads: usize) -> HostBackend {
        HostBackend::for_tests("split-test", threads)
    }

    #[test]
    fn the_split_is_set_by_the_size_and_only_the_helpers_part_by_their_state() {
        let one = backend(1);
        assert!(
            split(one.device(0).unwrap(), 1 << 24, 4).is_none(),
            "one thread"
        );
        let two = backend(2);
        let dev = two.device(0).unwrap();
        let mid = mid_min_bytes() / 4;
        assert!(split(dev, mid - 1, 4).is_none(), "below the mid band");
        // In the band: the same chunks whether the helpers take part or not (the first call
        // after a quiet spell may run alone, the next ones form a loop).
        let chunks: Vec<_> = (0..100).map(|_| split(dev, 2 * mid, 4).unwrap()).collect();
        assert!(
            chunks.iter().all(|s| s.chunk == chunks[0].chunk),
            "{chunks:?}"
        );
        if !super::super::helpers::spin_window().is_zero() {
            // (Any of them: a loaded machine may pause this thread past the window.)
            assert!(
                chunks.iter().any(|s| s.helpers),
                "a loop of mid-size ops uses the helpers"
            );
        }
        // From `par_min_bytes` on, the helpers' state does not matter; a size not measured
        // yet splits first (in at least 32 KiB chunks), and from `mid_max_bytes` on always.
        let large = split(dev, par_min_bytes() / 4, 4).unwrap();
        assert!(large.helpers);
        assert!(large.chunk * 4 >= 1 << 15);
        assert!(split(dev, mid_max_bytes() / 4, 4).unwrap().helpers);
        // Sizes whose byte count overflows still split (no panic).
        assert!(split(dev, usize::MAX, 16).unwrap().helpers);
    }

    /// The caller takes chunks from the front and helpers from the back, each chunk once,
    /// until they meet, also when several threads take at once.
    #[test]
    fn chunks_are_taken_from_both_ends_each_once() {
        fn nothing(_: usize) {}
        let shared = |n: u32| Shared {
            left: AtomicU64::new(u64::from(n)),
            active: AtomicUsize::new(0),
            closed: AtomicBool::new(false),
            panicked: AtomicBool::new(false),
            job: JobPtr(&nothing),
        };
        let s = shared(5);
        assert_eq!(s.take(false), Some(0));
        assert_eq!(s.take(true), Some(4));
        assert_eq!(s.take(false), Some(1));
        assert_eq!(s.take(true), Some(3));
        assert_eq!(s.take(true), Some(2));
        assert_eq!((s.take(false), s.take(true)), (None, None));
        assert_eq!(shared(0).take(false), None);

        let s = shared(10_000);
        let taken: Vec<Vec<usize>> = std::thread::scope(|scope| {
            let hs: Vec<_> = (0..4)
                .map(|t| {
                    let s = &s;
                    scope.spawn(move || std::iter::from_fn(|| s.take(t > 0)).collect())
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        // The front's chunks ascend, a helper's descend.
        assert!(taken[0].windows(2).all(|w| w[0] < w[1]));
        assert!(taken[1].windows(2).all(|w| w[0] > w[1]));
        let mut all: Vec<usize> = taken.concat();
        all.sort_unstable();
        assert_eq!(all, (0..10_000).collect::<Vec<_>>());
    }

    #[test]
    fn outputs_take_the_first_inputs_place_in_its_line() {
        let at = |a: usize| Some(a as *const f32);
        assert_eq!(
            matching_shift::<f32, f32>(&[at(0x1010), at(0x2030)], 1024),
            16
        );
        assert_eq!(matching_shift::<f32, f32>(&[at(0x1004)], 17), 4);
        // The place in a 64-byte line, not in a 32-byte vector.
        assert_eq!(matching_shift::<f32, f32>(&[at(0x1030)], 1024), 48);
        // A small run skips the peel (`SMALL_RUN`), so its output keeps the pool's alignment.
        assert_eq!(matching_shift::<f32, f32>(&[at(0x1004)], SMALL_RUN), 0);
        // The first aligned, an operand strided (None), or of another width: no shift.
        assert_eq!(
            matching_shift::<f32, f32>(&[at(0x1000), at(0x2020)], 1024),
            0
        );
        assert_eq!(matching_shift::<f32, f32>(&[at(0x1010), None], 1024), 0);
        assert_eq!(matching_shift::<f32, f32>(&[None, at(0x1010)], 1024), 0);
        assert_eq!(matching_shift::<f32, bool>(&[at(0x1010)], 1024), 0);
        assert_eq!(matching_shift::<f32, f32>(&[at(0x1010)], 2048), 16);
        // Past the size where it pays (and sizes that would overflow a byte count).
        assert_eq!(matching_shift::<f32, f32>(&[at(0x1010)], 2049), 0);
        assert_eq!(matching_shift::<f32, f32>(&[at(0x1010)], usize::MAX), 0);
    }

    /// `overlapped2` against the plain loop: every length up to a few vectors, every place of
    /// the output in its line, each element width (64 lanes of u8 down to 4 of 16 bytes),
    /// and vectors of 64 and 32 bytes.
    #[test]
    fn overlapped_vectors_write_what_the_plain_loop_writes() {
        fn check<T: Copy + PartialEq + std::fmt::Debug, U: Copy + PartialEq + std::fmt::Debug>(
            make: impl Fn(usize) -> T,
            f: impl Fn(T, T) -> U,
        ) {
            let size = size_of::<U>();
            for n in 0..200 {
                let xa: Vec<T> = (0..n).map(&make).collect();
                let xb: Vec<T> = (0..n).map(|i| make(3 * i + 1)).collect();
                // Within L1, then past it twice: one forward walk and one backward.
                for (skip, past_l1, wide) in (0..64 / size)
                    .flat_map(|s| [(s, false), (s, true), (s, true)])
                    .flat_map(|(s, p)| [(s, p, true), (s, p, false)])
                {
                    // Room for the output to start anywhere in a line.
                    // Filled with a pattern no check value has: an element left unwritten
                    // reads as that pattern and fails the comparison.
                    let mut room = vec![MaybeUninit::<U>::uninit(); n + 64];
                    // SAFETY: `room` holds n + 64 elements of `U`.
                    unsafe { std::ptr::write_bytes(room.as_mut_ptr(), 0xA5, n + 64) };
                    let base = room.as_ptr() as usize % 64 / size;
                    let lo = (skip + 64 / size - base) % (64 / size);
                    let os = &mut room[lo..lo + n];
                    if wide {
                        overlapped2::<Z, _, _>(os, &xa, &xb, past_l1, &f);
                    } else {
                        overlapped2::<Y, _, _>(os, &xa, &xb, past_l1, &f);
                    }
                    for i in 0..n {
                        // SAFETY: every byte is initialised (the pattern or a value), and every
                        // type checked here takes any bytes.
                        let got = unsafe { os[i].assume_init() };
                        assert_eq!(
                            got,
                            f(xa[i], xb[i]),
                            "n {n} skip {skip} {past_l1} {wide} i {i}"
                        );
                    }
                }
            }
        }
        check(|i| i as u8, |a: u8, b: u8| a.wrapping_add(b));
        check(|i| i as f32 * 0.5, |a: f32, b: f32| a + b);
        check(|i| i as f64, |a: f64, b: f64| a * b);
        check(|i| i as f32, |a: f32, b: f32| u8::from(a < b));
        check(
            |i| num_complex::Complex64::new(i as f64, 1.0),
            |a: num_complex::Complex64, b| a * b,
        );
    }

    /// The unary loop run backward by blocks writes every element once, the head included,
    /// for lengths around the block and head sizes of each width.
    #[test]
    fn unary_blocks_backward_write_what_the_forward_loop_writes() {
        fn check<U: Copy + PartialEq + std::fmt::Debug>(f: impl Fn(u32) -> U) {
            let block = BACKWARD_BLOCK_BYTES / size_of::<U>();
            for n in [0, 1, 7, block - 1, block, block + 1, 3 * block + 5] {
                for head in [0, 1, 7].into_iter().filter(|&h| h <= n) {
                    let xs: Vec<u32> = (0..n as u32).map(|i| i * 7 + 1).collect();
                    let mut os = vec![MaybeUninit::<U>::uninit(); n];
                    let calls = vec![std::cell::Cell::new(0u32); n];
                    // Each element's index is recoverable from its value: count the calls.
                    map1_blocks_backward(&mut os, &xs, head, &|v: u32| {
                        let c = &calls[(v as usize - 1) / 7];
                        c.set(c.get() + 1);
                        f(v)
                    });
                    assert!(
                        calls.iter().all(|c| c.get() == 1),
                        "n {n} head {head}: {calls:?}"
                    );
                    for (i, o) in os.iter().enumerate() {
                        // SAFETY: every element was written once (checked above).
                        assert_eq!(unsafe { o.assume_init() }, f(xs[i]), "n {n} head {head}");
                    }
                }
            }
        }
        check(|v| v as f32 * 0.5);
        check(|v| v as u8);
        check(|v| f64::from(v) - 3.0);
    }

    /// Past L1 each run of a thread walks the other way than its last, whatever the
    /// addresses; within L1, backward only where the output starts just ahead of an operand.
    #[test]
    fn runs_past_l1_alternate_and_runs_within_it_dodge_4k_aliasing() {
        use Direction::{Backward, Forward};
        let first = Direction::of_run(true, 0x1040, 0x1000, 0x5000);
        let second = Direction::of_run(true, 0x9000, 0x1000, 0x5000);
        assert_ne!(first, second, "past L1: the other way than the last run");
        assert_eq!(Direction::of_run(true, 0x1040, 0x1000, 0x5000), first);
        assert_eq!(Direction::of_run(false, 0x9000, 0x1000, 0x5000), Forward);
        assert_eq!(Direction::of_run(false, 0x1040, 0x1000, 0x5000), Backward);
        assert_eq!(
            Direction::of_run(false, 0x1040, 0x7f00, 0x5040 - 64),
            Backward
        );
        assert_eq!(
            Direction::of_run(false, 0x1000, 0x1040, 0x5000),
            Forward,
            "behind the operand: forward is right"
        );
    }

    /// An output a few vectors ahead of an operand (mod 4 KiB) runs the aligned middle
    /// backward, and writes what the plain loop writes, at every distance around the window.
    #[test]
    fn outputs_just_ahead_of_an_operand_run_backward_to_the_same_values() {
        assert!(
            !aliases_ahead(0x1000, 0x1000),
            "the same place: no older store aliases"
        );
        assert!(aliases_ahead(0x2040, 0x1000) && aliases_ahead(0x1000 + ALIAS_WINDOW, 0));
        assert!(
            !aliases_ahead(0x1000 + ALIAS_WINDOW + 64, 0),
            "beyond the window"
        );
        assert!(
            !aliases_ahead(0x1000, 0x1040),
            "behind the operand: forward is right"
        );
        fn check<T: Copy + PartialEq + std::fmt::Debug>(
            make: impl Fn(usize) -> T,
            f: impl Fn(T, T) -> T,
        ) {
            let size = size_of::<T>();
            for n in [40, 1000, 1024 / size + 3] {
                let mut room = vec![MaybeUninit::<T>::uninit(); n + 64];
                // SAFETY: `room` holds n + 64 elements of `T`; any bytes are a value of the
                // types checked here, and the pattern is none of the results.
                unsafe { std::ptr::write_bytes(room.as_mut_ptr(), 0xA5, n + 64) };
                let os = &mut room[7..7 + n];
                let out = os.as_ptr() as usize;
                for ahead in (0..=ALIAS_WINDOW + 2 * 64).step_by(size.max(16)) {
                    // An operand `ahead` bytes behind the output, modulo 4 KiB.
                    let page: Vec<T> = (0..n + 8192 / size).map(&make).collect();
                    let start = (page.as_ptr() as usize)
                        .wrapping_sub(out)
                        .wrapping_add(ahead);
                    let skip = (4096 - start % 4096) % 4096 / size;
                    let xa = &page[skip..skip + n];
                    assert_eq!(out.wrapping_sub(xa.as_ptr() as usize) % 4096, ahead % 4096);
                    let xb: Vec<T> = (0..n).map(|i| make(3 * i + 1)).collect();
                    overlapped2::<Z, _, _>(os, xa, &xb, false, &f);
                    for i in 0..n {
                        // SAFETY: every element was written (or holds the pattern).
                        let got = unsafe { os[i].assume_init() };
                        assert_eq!(got, f(xa[i], xb[i]), "n {n} ahead {ahead} i {i}");
                    }
                }
            }
        }
        check(|i| i as f32 * 0.5, |a: f32, b: f32| a + b);
        check(|i| i as u8, |a: u8, b: u8| a.wrapping_mul(b));
        check(|i| i as f64, |a: f64, b: f64| a - b);
    }

    #[test]
    fn the_head_ends_at_the_outputs_vector_boundary() {
        for base in (0..2 * VECTOR_ALIGN).step_by(4) {
            let p = (0x10000 + base) as *const f32;
            let head = aligned_head(p, 1000);
            assert_eq!((p as usize + 4 * head) % VECTOR_ALIGN, 0, "base {base}");
            assert!(head < VECTOR_ALIGN / 4);
            assert_eq!(aligned_head(p, 2), head.min(2), "never past the end");
        }
        // An address no element boundary reaches the vector boundary from: no head.
        assert_eq!(aligned_head(0x10004 as *const [f32; 2], 100), 0);
    }
}
