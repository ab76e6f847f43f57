//! Host memory: 64-byte aligned buffers and a per-device caching pool.
//!
//! Freshly `malloc`ed pages fault on first touch; for the large temporaries of array code that
//! halves throughput (ndarray's `&a + &b` pays it on every call). Like PyTorch's caching
//! allocator, each device keeps released blocks by size class and hands them out again;
//! blocks of at most 64 KiB go to caches all host pools share instead (see `small`).
//!
//! Large blocks are 2 MiB aligned and, on Linux, asked to be backed by transparent huge pages
//! (as NumPy does from 4 MiB): a streaming kernel over 4 KiB pages walks the page tables every
//! 4 KiB, and on this project's 2-core machines huge pages made a 16M-element sum about 20 %
//! and an add about 5 % faster.

use crate::backends::{DeviceBuffer, MemoryKind};
use crate::error::{Error, Result};
use std::alloc::{self, Layout as AllocLayout};
use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

/// Alignment of host buffers: a cache line, and enough for AVX-512 loads. One exception: a
/// kernel's output of at most 8 KiB over contiguous operands that all sit alike past a 32-byte
/// boundary (a `Vec` from the system allocator, 16 bytes past one) takes their misalignment,
/// so its loop runs on aligned vectors; `DeviceBuffer::alignment` says so. NumPy's results
/// over such operands are no better aligned (JAX copies them on import).
pub const HOST_ALIGN: usize = 64;

/// Blocks up to this size are rounded to `HOST_ALIGN`; larger ones to 64 KiB, so repeated
/// shapes hit the same class without wasting more than a page-run.
const SMALL_BLOCK: usize = 1 << 16;

/// Blocks from this size on are huge-page aligned and advised (NumPy's threshold).
const HUGE_BLOCK: usize = 1 << 22;
/// A transparent huge page on x86-64 and most AArch64 kernels.
const HUGE_PAGE: usize = 1 << 21;

/// The alignment a block of size class `class` is allocated with (and freed with).
fn block_align(class: usize) -> usize {
    if class >= HUGE_BLOCK {
        HUGE_PAGE
    } else {
        HOST_ALIGN
    }
}

/// Asks the kernel to back the page-aligned part of `ptr..ptr+len` with huge pages, from
/// 4 MiB on (NumPy's threshold): the pool's large blocks, and memory of the Rust allocator
/// (a vector `to_vec` fills, a staging buffer). A fresh 4 MiB vector otherwise takes 1,024
/// page faults as it is first written, which cost a 4 MiB `to_vec` more than the copy
/// itself. Only advice: where THP is off or `madvise` fails, the memory works the same.
fn advise_huge_range(ptr: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    if len >= HUGE_BLOCK {
        const PAGE: usize = 4096;
        let start = (ptr as usize).next_multiple_of(PAGE);
        let end = (ptr as usize + len) / PAGE * PAGE;
        if end > start {
            // SAFETY: `start..end` lies inside one live allocation the caller owns (`ptr..ptr
            // + len`) and is page aligned; MADV_HUGEPAGE changes no contents.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, len);
}

fn size_class(bytes: usize) -> Option<usize> {
    let step = if bytes <= SMALL_BLOCK {
        HOST_ALIGN
    } else {
        SMALL_BLOCK
    };
    bytes.max(1).checked_next_multiple_of(step)
}

/// One device's allocator and cache for one memory kind.
pub struct HostPool {
    device_name: String,
    /// Largest single allocation accepted (physical memory): larger requests fail fast with
    /// `OutOfMemory` instead of relying on the kernel's overcommit policy.
    max_alloc: u64,
    /// Most bytes kept cached (not in use) at once.
    max_cached: usize,
    cache: Mutex<Cache>,
}

/// Released blocks by size class, and their total size.
#[derive(Default)]
struct Cache {
    blocks: HashMap<usize, Vec<Block>, BuildHasherDefault<ClassHasher>>,
    bytes: usize,
}

impl Cache {
    /// A cached block of `class`, if one waits.
    fn take(&mut self, class: usize) -> Option<NonNull<u8>> {
        let Block(p) = self.blocks.get_mut(&class)?.pop()?;
        self.bytes -= class;
        Some(p)
    }

    /// Keeps `ptr` (a block of `class`) while the cache stays within `max` bytes, else frees
    /// it.
    fn keep_or_free(cache: &Mutex<Cache>, max: usize, ptr: NonNull<u8>, class: usize) {
        let mut c = cache.lock().unwrap_or_else(|e| e.into_inner());
        if c.bytes + class <= max {
            c.bytes += class;
            c.blocks.entry(class).or_default().push(Block(ptr));
            return;
        }
        drop(c);
        free_block(ptr, class);
    }
}

/// Hashes a size class with one multiply (Fibonacci hashing): the keys are trusted integers,
/// and SipHash cost a tenth of a small op's time.
#[derive(Default)]
struct ClassHasher(u64);

impl Hasher for ClassHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(self.0 ^ u64::from(b));
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// An owned, aligned heap block.
struct Block(NonNull<u8>);
// SAFETY: a Block is a unique owner of plain heap memory; moving it between threads is sound.
unsafe impl Send for Block {}

impl HostPool {
    /// A pool for `device_name` whose allocations stop at `max_alloc` bytes, keeping at most
    /// `max_cached` bytes of freed blocks for reuse.
    pub fn new(device_name: String, max_alloc: u64, max_cached: usize) -> Arc<HostPool> {
        Arc::new(HostPool {
            device_name,
            max_alloc,
            max_cached,
            cache: Mutex::new(Cache::default()),
        })
    }

    fn oom(&self, bytes: usize, reason: impl Into<String>) -> Error {
        Error::OutOfMemory {
            device: self.device_name.clone(),
            bytes: bytes as u128,
            reason: reason.into(),
        }
    }

    /// A buffer of `len` zero bytes.
    pub fn alloc_zeroed(
        self: &Arc<Self>,
        len: usize,
        device: usize,
        kind: MemoryKind,
    ) -> Result<HostBuffer> {
        let mut buf = self.alloc(len, device, kind)?;
        // SAFETY: the block holds at least `len` writable bytes and is ours alone.
        unsafe { std::ptr::write_bytes(buf.as_mut_ptr(), 0, len) };
        Ok(buf)
    }

    /// A buffer of `len` bytes whose contents are unspecified (possibly uninitialised).
    ///
    /// # Safety
    /// Every byte must be written before the buffer is read or shared (as a `DeviceBuffer`,
    /// its host address lets safe code read it).
    pub unsafe fn alloc_uninit(
        self: &Arc<Self>,
        len: usize,
        device: usize,
        kind: MemoryKind,
    ) -> Result<HostBuffer> {
        self.alloc(len, device, kind)
    }

    /// As [`alloc_uninit`](Self::alloc_uninit), for this crate's kernels, which write every
    /// byte of their outputs before returning them.
    pub(crate) fn alloc(
        self: &Arc<Self>,
        len: usize,
        device: usize,
        kind: MemoryKind,
    ) -> Result<HostBuffer> {
        self.alloc_shifted(len, device, kind, 0)
    }

    /// [`alloc_shifted`](Self::alloc_shifted)'s common case, inlined: a small block from
    /// this thread's cache for `len` bytes `shift` bytes in, and its size class (`None` when
    /// none waits or the request is not small). [`HostBuffer::small`] makes the buffer.
    #[inline(always)]
    pub(crate) fn take_cached(&self, len: usize, shift: usize) -> Option<(NonNull<u8>, usize)> {
        let shift = shift % HOST_ALIGN;
        if len as u64 > self.max_alloc {
            return None;
        }
        let class = len.checked_add(shift).and_then(size_class)?;
        if !small::holds(class) {
            return None;
        }
        Some((small::take_mine(class)?, class))
    }

    /// As [`alloc`](Self::alloc), starting `shift` bytes (below `HOST_ALIGN`) past the block's
    /// 64-byte boundary: a kernel's output with the misalignment its inputs share, so that,
    /// after a few elements, every load and store of its loop is aligned (see
    /// `engine::matching_shift`).
    pub(crate) fn alloc_shifted(
        self: &Arc<Self>,
        len: usize,
        device: usize,
        kind: MemoryKind,
        shift: usize,
    ) -> Result<HostBuffer> {
        debug_assert!(shift < HOST_ALIGN);
        let shift = shift % HOST_ALIGN;
        if len as u64 > self.max_alloc {
            return Err(self.oom(
                len,
                format!("larger than the {} bytes of host memory", self.max_alloc),
            ));
        }
        let class = len
            .checked_add(shift)
            .and_then(size_class)
            .ok_or_else(|| self.oom(len, "size overflows"))?;
        let small = small::holds(class);
        let cached = if small {
            small::take(class)
        } else {
            self.cache
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take(class)
        };
        let ptr = match cached {
            Some(p) => p,
            None => {
                let layout = AllocLayout::from_size_align(class, block_align(class))
                    .map_err(|e| self.oom(len, e.to_string()))?;
                // SAFETY: `layout` has a non-zero size (size_class never returns 0).
                let p = unsafe { alloc::alloc(layout) };
                let p =
                    NonNull::new(p).ok_or_else(|| self.oom(len, "the system allocator failed"))?;
                advise_huge_range(p.as_ptr(), class);
                p
            }
        };
        Ok(HostBuffer {
            // SAFETY: the block holds `class >= len + shift` bytes.
            ptr: unsafe { ptr.add(shift) },
            len,
            class,
            shift: shift as u8,
            device,
            kind,
            // A small block goes back to the caches every pool shares (see `small`).
            pool: (!small).then(|| self.clone()),
        })
    }

    fn release(&self, ptr: NonNull<u8>, class: usize) {
        Cache::keep_or_free(&self.cache, self.max_cached, ptr, class);
    }

    /// Frees every cached block.
    pub fn trim(&self) {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        for (class, blocks) in cache.blocks.drain() {
            for Block(p) in blocks {
                free_block(p, class);
            }
        }
        cache.bytes = 0;
    }
}

/// The caches of the smallest blocks, shared by every host pool: a per-thread one in front
/// (as glibc's tcache is to malloc), then one for the process. Blocks up to `MAX_CLASS` are
/// all `HOST_ALIGN`-aligned heap blocks of their class, so any pool can hand out one another
/// pool released, and a small buffer holds no reference to its pool: taking and dropping one
/// was two atomic updates (~14 ns here) of an 8-element add, whose result is such a buffer.
///
/// An op on a few elements frees its inputs' temporaries and allocates its result on the
/// same thread, and a pool's lock (two uncontended round trips, ~28 ns here) was a sixth of
/// an 8-element add: the thread's own `SMALL_LIMIT` blocks (64 KiB at most) serve it without one.
/// Blocks of 4 KiB to 64 KiB (the results of ops one thread runs alone) have `MEDIUM_LIMIT`
/// of their own, so a loop of them keeps the small ones' slots: the pool's lock, its map
/// and its reference count took ~55 ns of a 2K-element f32 add (255 ns, 198 ns without).
/// Blocks freed on other threads, or more than a thread keeps, wait in the shared cache (at
/// most `SHARED_BYTES`, outside every pool's `max_cached`). A thread's blocks are freed when
/// it exits; the shared cache's when the process does.
mod small {
    use super::{Cache, HOST_ALIGN, free_block};
    use crate::thread_blocks::{self, ThreadBlocks};
    use std::ptr::NonNull;
    use std::sync::{LazyLock, Mutex};

    /// Largest class the thread's `BLOCKS` keep: 4 KiB, and one shifted by up to a cache line
    /// (a 1K-element f32 result matched to its inputs' misalignment).
    const SMALL_CLASS: usize = 4096 + HOST_ALIGN;
    /// Largest class kept here, by the thread's `MEDIUM` past `SMALL_CLASS`.
    const MAX_CLASS: usize = super::SMALL_BLOCK;
    /// Blocks the thread's `BLOCKS` keep.
    const SMALL_LIMIT: usize = 16;
    /// At most 256 KiB a thread.
    const MEDIUM_LIMIT: usize = 4;
    const SHARED_BYTES: usize = 4 << 20;
    const _: () = assert!(MAX_CLASS <= super::SMALL_BLOCK && MAX_CLASS.is_multiple_of(HOST_ALIGN));
    /// A bin per class (a multiple of `HOST_ALIGN`): the small ones from 0, the medium ones
    /// from the first past `SMALL_CLASS`.
    const SMALL_BINS: usize = SMALL_CLASS / HOST_ALIGN + 1;
    const MEDIUM_BINS: usize = (MAX_CLASS - SMALL_CLASS) / HOST_ALIGN;

    /// Whether blocks of `class` are kept here rather than by their pool.
    pub(super) fn holds(class: usize) -> bool {
        class <= MAX_CLASS
    }

    thread_local! {
        static BLOCKS: ThreadBlocks<SMALL_BINS> =
            const { ThreadBlocks::new(SMALL_LIMIT, free_small) };
        static MEDIUM: ThreadBlocks<MEDIUM_BINS> =
            const { ThreadBlocks::new(MEDIUM_LIMIT, free_medium) };
    }

    /// The bin of a medium `class` (past `SMALL_CLASS`) in `MEDIUM`.
    fn medium_bin(class: usize) -> usize {
        (class - SMALL_CLASS) / HOST_ALIGN - 1
    }

    /// The class of `MEDIUM`'s bin `bin` (the inverse of [`medium_bin`]).
    fn medium_class(bin: usize) -> usize {
        SMALL_CLASS + (bin + 1) * HOST_ALIGN
    }

    /// Frees a small block of bin `bin` (see `free_block`).
    fn free_small(ptr: NonNull<u8>, bin: usize) {
        free_block(ptr, bin * HOST_ALIGN);
    }

    /// Frees a medium block of bin `bin` (see `free_block`).
    fn free_medium(ptr: NonNull<u8>, bin: usize) {
        free_block(ptr, medium_class(bin));
    }

    static SHARED: LazyLock<Mutex<Cache>> = LazyLock::new(Mutex::default);

    /// A block of `class` (at most `MAX_CLASS`, a multiple of `HOST_ALIGN`) from this
    /// thread's cache, if one waits there.
    #[inline]
    pub(super) fn take_mine(class: usize) -> Option<NonNull<u8>> {
        if class <= SMALL_CLASS {
            thread_blocks::take(&BLOCKS, class / HOST_ALIGN)
        } else {
            thread_blocks::take(&MEDIUM, medium_bin(class))
        }
    }

    /// A cached block of `class` (at most `MAX_CLASS`), if one waits.
    pub(super) fn take(class: usize) -> Option<NonNull<u8>> {
        // During the thread's teardown its cache is gone and the shared one serves.
        let mine = take_mine(class);
        mine.or_else(|| SHARED.lock().unwrap_or_else(|e| e.into_inner()).take(class))
    }

    /// Keeps `ptr` (a block of `class`, at most `MAX_CLASS`, no longer used) in the thread's
    /// cache; what that gives up (a block of another class, when full) goes to the shared
    /// cache, or is freed when that is full too.
    #[inline(always)]
    pub(super) fn put(ptr: NonNull<u8>, class: usize) {
        // SAFETY: per the contract `ptr` is an unused block of `class` (64-byte aligned, at
        // least 64 long), which is what its bin's `free_small`/`free_medium` frees.
        let left = unsafe {
            if class <= SMALL_CLASS {
                thread_blocks::put(&BLOCKS, ptr, class / HOST_ALIGN)
                    .map(|(p, bin)| (p, bin * HOST_ALIGN))
            } else {
                thread_blocks::put(&MEDIUM, ptr, medium_bin(class))
                    .map(|(p, bin)| (p, medium_class(bin)))
            }
        };
        if let Some((ptr, class)) = left {
            to_shared(ptr, class);
        }
    }

    /// A block the thread's cache did not keep: to the shared cache, or freed.
    #[cold]
    #[inline(never)]
    fn to_shared(ptr: NonNull<u8>, class: usize) {
        Cache::keep_or_free(&SHARED, SHARED_BYTES, ptr, class);
    }
}

fn free_block(ptr: NonNull<u8>, class: usize) {
    // SAFETY: `ptr` came from `alloc::alloc` with exactly this size and alignment (the layout
    // was valid then, so it is now) and is freed once: only its unique owner calls this.
    unsafe {
        alloc::dealloc(
            ptr.as_ptr(),
            AllocLayout::from_size_align_unchecked(class, block_align(class)),
        )
    }
}

impl Drop for HostPool {
    fn drop(&mut self) {
        self.trim();
    }
}

/// A block of host memory owned by one device.
pub struct HostBuffer {
    /// The first byte: `shift` bytes into the block.
    ptr: NonNull<u8>,
    len: usize,
    class: usize,
    /// Bytes from the block's start to `ptr` (below `HOST_ALIGN`; 0 but for kernel outputs
    /// matched to their inputs' misalignment).
    shift: u8,
    device: usize,
    kind: MemoryKind,
    /// The pool a large block goes back to; `None` for a small one (see `small`).
    pool: Option<Arc<HostPool>>,
}

// SAFETY: the buffer uniquely owns its heap block. Its contents are written only while a
// kernel holds the sole reference (before the buffer is shared), and read-only afterwards.
unsafe impl Send for HostBuffer {}
// SAFETY: see `Send`: shared access is read-only.
unsafe impl Sync for HostBuffer {}

impl HostBuffer {
    /// The first byte, to write through.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }
    /// The buffer over `block`, a small block of `class` from
    /// [`HostPool::take_cached`] for `len` bytes `shift` bytes in.
    #[inline(always)]
    pub(crate) fn small(
        block: NonNull<u8>,
        class: usize,
        len: usize,
        shift: usize,
        device: usize,
        kind: MemoryKind,
    ) -> HostBuffer {
        let shift = shift % HOST_ALIGN;
        debug_assert!(small::holds(class) && len + shift <= class);
        HostBuffer {
            // SAFETY: the block holds `class >= len + shift` bytes (`take_cached`).
            ptr: unsafe { block.add(shift) },
            len,
            class,
            shift: shift as u8,
            device,
            kind,
            pool: None,
        }
    }

    /// The first byte, to write through while the buffer has no other user.
    #[inline(always)]
    pub(crate) fn first(&self) -> NonNull<u8> {
        self.ptr
    }
    /// The first byte.
    pub fn as_ptr(&self) -> *const u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for HostBuffer {
    fn drop(&mut self) {
        // SAFETY: `ptr` lies `shift` bytes into the block (see `alloc_shifted`).
        let block = unsafe { NonNull::new_unchecked(self.ptr.as_ptr().sub(self.shift.into())) };
        match &self.pool {
            Some(pool) => pool.release(block, self.class),
            None => small::put(block, self.class),
        }
    }
}

impl fmt::Debug for HostBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.pool {
            Some(pool) => write!(
                f,
                "HostBuffer({} bytes on {} {})",
                self.len, pool.device_name, self.kind
            ),
            None => write!(
                f,
                "HostBuffer({} bytes on host device {} {})",
                self.len, self.device, self.kind
            ),
        }
    }
}

impl DeviceBuffer for HostBuffer {
    fn device_index(&self) -> usize {
        self.device
    }
    fn memory_kind(&self) -> MemoryKind {
        self.kind
    }
    fn len_bytes(&self) -> usize {
        self.len
    }
    fn alignment(&self) -> usize {
        match self.shift {
            0 => HOST_ALIGN,
            s => 1 << s.trailing_zeros(),
        }
    }
    fn address(&self) -> crate::backends::Address {
        crate::backends::Address::Host(self.ptr)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Physical memory of this machine in bytes (`/proc/meminfo`, read once), or a generous
/// default.
pub fn physical_memory() -> u64 {
    static MEM: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *MEM.get_or_init(read_physical_memory)
}

/// A host `Vec` of `n` default values, or `Error::OutOfMemory` when it cannot be had: larger
/// than physical memory (the kernel's overcommit would let it through, then kill the process
/// on first touch) or refused by the allocator (`vec![..]` would abort instead).
pub fn try_host_vec<T: Clone + Default>(n: usize, device: &str) -> Result<Vec<T>> {
    let mut v = try_host_capacity(n, device)?;
    v.resize(n, T::default());
    Ok(v)
}

/// An empty vector with room for `n` elements, with `try_host_vec`'s checks and errors.
pub(crate) fn try_host_capacity<T>(n: usize, device: &str) -> Result<Vec<T>> {
    let item = std::mem::size_of::<T>().max(1);
    let oom = |reason: String| Error::OutOfMemory {
        device: device.to_string(),
        bytes: n as u128 * item as u128,
        reason,
    };
    let bytes = crate::layout::checked_bytes(n, item, device)?;
    if bytes as u64 > physical_memory() {
        return Err(oom(format!(
            "larger than the {} bytes of host memory",
            physical_memory()
        )));
    }
    let mut v: Vec<T> = Vec::new();
    v.try_reserve_exact(n).map_err(|e| oom(e.to_string()))?;
    advise_huge_range(v.as_mut_ptr().cast(), bytes);
    Ok(v)
}

fn read_physical_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map(|kb| kb * 1024)
        .unwrap_or(1 << 40)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_reuses_blocks_and_respects_limits() {
        let pool = HostPool::new("test:0".into(), 1 << 30, 1 << 20);
        let a = pool.alloc(1000, 0, MemoryKind::Device).unwrap();
        let p = a.as_ptr();
        assert_eq!(p as usize % HOST_ALIGN, 0);
        drop(a);
        let b = pool.alloc(1000, 0, MemoryKind::Device).unwrap();
        assert_eq!(
            b.as_ptr(),
            p,
            "a released block of the same class is reused"
        );
        let err = pool.alloc(1 << 31, 0, MemoryKind::Device).unwrap_err();
        assert!(matches!(err, Error::OutOfMemory { .. }), "{err}");
        let zero = pool.alloc(0, 0, MemoryKind::Device).unwrap();
        assert_eq!(zero.len_bytes(), 0);
        let mut big = pool.alloc(HUGE_BLOCK + 1, 0, MemoryKind::Device).unwrap();
        assert_eq!(
            big.as_ptr() as usize % HUGE_PAGE,
            0,
            "large blocks are huge-page aligned"
        );
        // SAFETY: the block holds HUGE_BLOCK + 1 writable bytes and is ours alone.
        unsafe { std::ptr::write_bytes(big.as_mut_ptr(), 7, HUGE_BLOCK + 1) };
    }

    #[test]
    fn shifted_buffers_start_past_the_boundary_and_free_their_block() {
        let pool = HostPool::new("test:0".into(), 1 << 30, 1 << 20);
        for (len, shift) in [
            (4096, 16),
            (4096, 48),
            (100, 4),
            (8192, 16),
            (0, 8),
            (70_000, 32),
        ] {
            let mut a = pool
                .alloc_shifted(len, 0, MemoryKind::Device, shift)
                .unwrap();
            assert_eq!(a.as_ptr() as usize % HOST_ALIGN, shift, "len {len}");
            assert_eq!(a.len_bytes(), len);
            assert_eq!(a.alignment(), 1 << shift.trailing_zeros());
            // SAFETY: the buffer holds `len` writable bytes and is ours alone.
            unsafe { std::ptr::write_bytes(a.as_mut_ptr(), 3, len) };
            let block = a.as_ptr() as usize - shift;
            drop(a);
            // The block went back whole: the same class, unshifted, gets it again.
            let b = pool.alloc(len + shift, 0, MemoryKind::Device).unwrap();
            assert_eq!(b.as_ptr() as usize, block, "len {len} shift {shift}");
            assert_eq!(b.alignment(), HOST_ALIGN);
        }
    }

    #[test]
    fn cached_blocks_are_taken_shifted_and_only_when_small_and_waiting() {
        let pool = HostPool::new("test:0".into(), 1 << 30, 1 << 20);
        // Leave a block of 100 + 16 bytes' class in this thread's cache.
        let a = pool.alloc_shifted(100, 0, MemoryKind::Device, 16).unwrap();
        let block = a.as_ptr() as usize - 16;
        drop(a);
        let (p, class) = pool
            .take_cached(100, 16)
            .expect("the block just freed waits");
        assert_eq!(p.as_ptr() as usize, block);
        let b = HostBuffer::small(p, class, 100, 16, 0, MemoryKind::Device);
        assert_eq!(b.as_ptr() as usize, block + 16);
        assert_eq!(b.first().as_ptr() as usize, block + 16);
        assert_eq!(b.len_bytes(), 100);
        drop(b);
        // Too large for the small caches, or over the pool's limit: the slow path's work.
        assert!(pool.take_cached(1 << 20, 0).is_none());
        let tiny = HostPool::new("test:1".into(), 64, 1 << 20);
        assert!(tiny.take_cached(65, 0).is_none());
    }

    #[test]
    fn small_blocks_move_between_threads_and_their_caches() {
        let pool = HostPool::new("test:0".into(), 1 << 30, 1 << 20);
        // More than one thread's cache holds: the rest go to the shared cache.
        let bufs: Vec<HostBuffer> = (0..40)
            .map(|i| pool.alloc(64 * (i % 4 + 1), 0, MemoryKind::Device).unwrap())
            .collect();
        // Freed on a thread that then exits (its cache is freed with it).
        std::thread::spawn(move || drop(bufs)).join().unwrap();
        let again: Vec<HostBuffer> = (0..40)
            .map(|_| {
                let mut b = pool.alloc(200, 0, MemoryKind::Device).unwrap();
                assert_eq!(b.as_ptr() as usize % HOST_ALIGN, 0);
                // SAFETY: the block holds 200 writable bytes and is ours alone.
                unsafe { std::ptr::write_bytes(b.as_mut_ptr(), 1, 200) };
                b
            })
            .collect();
        let freed: Vec<*const u8> = again.iter().map(|b| b.as_ptr()).collect();
        drop(again);
        // This thread's cache hands one of its own blocks back for the same class.
        let b = pool.alloc(250, 0, MemoryKind::Device).unwrap();
        assert!(
            freed.contains(&b.as_ptr()),
            "a block this thread freed is reused"
        );
    }

    #[test]
    fn small_blocks_freed_on_one_thread_serve_another() {
        let pool = HostPool::new("test:0".into(), 1 << 30, 1 << 20);
        // An unusual size, so that no other test's blocks share the class.
        let len = 4032 - 8;
        let bufs: Vec<HostBuffer> = (0..40)
            .map(|_| pool.alloc(len, 0, MemoryKind::Device).unwrap())
            .collect();
        let freed: Vec<usize> = bufs.iter().map(|b| b.as_ptr() as usize).collect();
        // The freeing thread keeps some for itself (freed when it exits); the rest wait in
        // the shared cache, where a thread with an empty cache of its own finds them.
        std::thread::spawn(move || drop(bufs)).join().unwrap();
        let got = std::thread::spawn(move || {
            let b = pool.alloc(len, 0, MemoryKind::Device).unwrap();
            assert!(b.pool.is_none(), "a small block holds no pool reference");
            b.as_ptr() as usize
        })
        .join()
        .unwrap();
        assert!(
            freed.contains(&got),
            "a block from the shared cache is reused"
        );
    }
}
