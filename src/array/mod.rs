//! [`Array`]: the global view of data sharded over devices (after `jax.Array`).
//!
//! An array is an immutable value: ops return new arrays and clones share buffers. It holds a
//! global shape and dtype, a [`Sharding`], and one shard per device, each a strided view
//! (`Layout`) of a backend buffer covering the slice of the global array the sharding gives
//! that device.

mod bytes;
mod composed;
pub(crate) mod foreign;
pub mod format;
mod gather;
mod join;
mod matmul;
mod ops;
pub mod scalar_ops;
mod search;
mod select;
mod shard_list;
mod shard_views;
pub mod sharding;
mod sorting;
mod tiling;
mod transfer;

use crate::backends::{self, Device, MemoryKind, Shared, SharedBuffer, TensorRef};
use crate::dtype::{DType, Element, Scalar};
use crate::error::{Error, Result};
use crate::layout::{
    Dims, Layout, Slice, checked_size, normalize_axis, small, write_inline, write_small,
};
use sharding::Sharding;
use smallvec::SmallVec;
use std::fmt;
use std::ops::Range;
use std::sync::OnceLock;

pub use ops::Axes;

/// A global slice: one range per axis (inline for up to 4 axes).
pub(crate) type Region = SmallVec<[Range<usize>; 4]>;
/// The region `0..n` along every axis of `shape`: a whole array's one shard.
#[inline(always)]
pub(crate) fn whole_region(shape: &[usize]) -> Region {
    let nd = shape.len();
    if nd > 4 {
        return shape.iter().map(|&n| 0..n).collect();
    }
    Region::from_buf_and_len(region_of_four(shape), nd)
}

/// The ranges of a shape of at most 4 axes, padded to 4. Not indexed by the rank (see
/// `contiguous_strides`): the list stays in registers.
#[inline(always)]
fn region_of_four(shape: &[usize]) -> [Range<usize>; 4] {
    let end = |k: usize| shape.get(k).copied().unwrap_or(0);
    [0..end(0), 0..end(1), 0..end(2), 0..end(3)]
}

/// Writes [`whole_region`] of `shape` into `p`, range by range (see `write_inline`).
///
/// # Safety
/// `p` is valid for writes and aligned, and holds nothing that needs dropping.
#[inline(always)]
unsafe fn write_whole_region(p: *mut Region, shape: &[usize]) {
    let nd = shape.len();
    // SAFETY: per the contract.
    unsafe {
        if nd > 4 {
            p.write(whole_region(shape));
            return;
        }
        write_inline(p, region_of_four(shape), nd);
    }
}

use shard_list::Shards;

/// One device's part of an array.
#[derive(Clone)]
pub(crate) struct ShardData {
    pub device: Device,
    /// The global slice this shard holds.
    pub index: Region,
    pub buffer: SharedBuffer,
    /// View of `buffer` with the shape of `index`.
    pub layout: Layout,
}

impl ShardData {
    pub fn tensor(&self, dtype: DType) -> TensorRef<'_> {
        TensorRef {
            buffer: &*self.buffer,
            layout: &self.layout,
            dtype,
        }
    }
    pub fn memory_kind(&self) -> MemoryKind {
        self.buffer.memory_kind()
    }

    /// This shard's data with `shape` (same element count): a view where the strides allow,
    /// else a row-major copy on the shard's own device (as NumPy's reshape).
    pub fn reshaped(&self, dtype: DType, shape: &[usize]) -> Result<ShardData> {
        let (buffer, layout) = match self.layout.reshape(shape)? {
            Some(view) => (self.buffer.clone(), view),
            None => {
                let copy = self.device.backend().copy(
                    self.tensor(dtype),
                    self.device.index(),
                    self.memory_kind(),
                )?;
                (copy, Layout::contiguous(shape)?)
            }
        };
        Ok(ShardData {
            device: self.device.clone(),
            index: whole_region(shape),
            buffer,
            layout,
        })
    }
}

struct Inner {
    shape: Dims,
    dtype: DType,
    /// Set when the array is made, except for single-device results of ops, whose sharding
    /// is only built when asked for: it holds a second reference to the device, and taking
    /// and dropping it was ~7 % of an 8-element add whose sharding nobody reads.
    sharding: OnceLock<Sharding>,
    shards: Shards,
    read_only: bool,
}

impl Inner {
    /// [`single`](Self::single) for a row-major `buffer` of `shape`, written into `p` field by
    /// field (see `Array::from_contiguous_buffer`).
    ///
    /// # Safety
    /// `p` is valid for writes and aligned; nothing in it needs dropping.
    #[inline(always)]
    unsafe fn write_single(
        p: *mut Inner,
        device: &Device,
        dtype: DType,
        buffer: SharedBuffer,
        shape: &[usize],
    ) {
        use std::ptr::addr_of_mut;
        // SAFETY: per the contract; every field of `Inner` and of its one shard is written.
        unsafe {
            write_small(addr_of_mut!((*p).shape), shape);
            addr_of_mut!((*p).dtype).write(dtype);
            addr_of_mut!((*p).sharding).write(OnceLock::new());
            addr_of_mut!((*p).read_only).write(false);
            let s = Shards::write_one(addr_of_mut!((*p).shards));
            addr_of_mut!((*s).device).write(device.clone());
            write_whole_region(addr_of_mut!((*s).index), shape);
            addr_of_mut!((*s).buffer).write(buffer);
            Layout::write_contiguous_valid(addr_of_mut!((*s).layout), shape);
        }
    }

    /// One device's array over the whole of `buffer` as `layout` (of `shape`) views it, its
    /// sharding left to be built when asked for. The shape comes apart from the layout: read
    /// back out of it, the op path's result cost ~18 more instructions.
    #[inline(always)]
    fn single(
        device: Device,
        dtype: DType,
        buffer: SharedBuffer,
        shape: &[usize],
        layout: Layout,
    ) -> Inner {
        debug_assert_eq!(shape, layout.shape());
        Inner {
            shape: small(shape),
            dtype,
            sharding: OnceLock::new(),
            shards: Shards::One(ShardData {
                device,
                index: whole_region(shape),
                buffer,
                layout,
            }),
            read_only: false,
        }
    }
}

/// An n-dimensional array whose data lives on one or more devices.
///
/// An `Array` is immutable and cheap to clone (one reference count); views (slices,
/// transposes, broadcasts) share memory, and every op returns a new array. Ops take NumPy's
/// promotion and broadcasting, run on the devices holding the data, and keep a sharding
/// where JAX keeps it.
///
/// ```
/// use dlarray::{Array, Axes, DType, Slice};
/// # fn main() -> dlarray::Result<()> {
/// // Creation: from host data (kept without a copy on the CPU), or made on a device.
/// let a = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
/// let z = Array::zeros(&[3], DType::F32)?;
/// let r = Array::arange(0.0, 6.0, 1.0, DType::I32)?.reshape(&[2, -1])?;
///
/// // Elementwise with broadcasting and weak scalars; reductions over any axes.
/// let b = ((&a + &z)? * 2.0)?;
/// assert_eq!(b.sum(1)?.to_vec::<f32>()?, [12.0, 30.0]);
/// assert_eq!(r.max(Axes::All)?.item::<i32>()?, 5);
/// assert_eq!(a.mean(0)?.to_vec::<f32>()?, [2.5, 3.5, 4.5]);
///
/// // Views: a slice and a transpose read the same memory.
/// let col = a.slice(&[Slice::full(), Slice::with_step(1, 3, 1)])?;
/// assert_eq!(col.t()?.shape(), &[2, 2]);
///
/// // Linear algebra, sorting, and NumPy's printing.
/// let m = a.matmul(&a.t()?)?;
/// assert_eq!(m.to_vec::<f32>()?, [14.0, 32.0, 32.0, 77.0]);
/// assert_eq!(a.sort(1, true)?.to_vec::<f32>()?, [3.0, 2.0, 1.0, 6.0, 5.0, 4.0]);
/// assert_eq!(format!("{r:#}"), "[[0 1 2]\n [3 4 5]]");
///
/// // DLPack: export to any consumer and import back, zero-copy on the host.
/// let t = a.to_dlpack()?;
/// let back = Array::from_dlpack(t)?;
/// assert_eq!(back.to_vec::<f32>()?, a.to_vec::<f32>()?);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Array(RcInner);

/// The array's shared state, counted without a weak count, and freed by its last owner without
/// an atomic update (`crate::shared`): nothing takes a weak reference to an array.
type RcInner = crate::shared::Shared<Inner>;

/// One device's part of an array, as `addressable_shards()` returns it.
#[derive(Clone, Debug)]
pub struct Shard {
    device: Device,
    index: Vec<Range<usize>>,
    data: Array,
}

impl Shard {
    /// The device holding this shard.
    pub fn device(&self) -> &Device {
        &self.device
    }
    /// The global slice this shard holds, one range per axis.
    pub fn index(&self) -> &[Range<usize>] {
        &self.index
    }
    /// The shard's data as a single-device array.
    pub fn data(&self) -> &Array {
        &self.data
    }
}

/// Views `data` as its bytes.
pub(crate) fn as_bytes<T: Element>(data: &[T]) -> &[u8] {
    // SAFETY: every Element type is plain data without padding or interior pointers (bool is
    // one byte), so its memory is `size_of_val(data)` initialised bytes.
    unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, std::mem::size_of_val(data)) }
}

impl Array {
    pub(crate) fn from_shards(
        shape: &[usize],
        dtype: DType,
        sharding: Sharding,
        shards: impl Into<Shards>,
        read_only: bool,
    ) -> Array {
        Array(RcInner::new(Inner {
            shape: small(shape),
            dtype,
            sharding: OnceLock::from(sharding),
            shards: shards.into(),
            read_only,
        }))
    }

    /// A single-device array over a whole buffer region.
    pub(crate) fn from_buffer(
        device: Device,
        dtype: DType,
        buffer: SharedBuffer,
        layout: Layout,
    ) -> Array {
        // The shape copied out first: it is read while `layout` moves in.
        let shape = small(layout.shape());
        let memory = RcInner::memory();
        let inner = Inner::single(device, dtype, buffer, &shape, layout);
        // SAFETY: fresh from `memory`, written by nothing else.
        Array(unsafe { RcInner::init(memory, inner) })
    }

    /// A single-device array over a whole row-major buffer of `shape` (checked already): a
    /// kernel's output. Everything is built from the shape inside the handle's memory: a
    /// `Layout` passed in (as `from_buffer` takes it) was built on the stack and copied in
    /// with wider loads than the stores that wrote it, a failed store forwarding that `perf`
    /// put at ~15 % of an 8-element add's time.
    #[inline(never)]
    pub(crate) fn from_contiguous_buffer(
        device: &Device,
        dtype: DType,
        buffer: SharedBuffer,
        shape: &[usize],
    ) -> Array {
        let memory = RcInner::memory();
        // SAFETY: fresh from `memory`, written by nothing else; `write_single` writes every
        // field and cannot panic.
        Array(unsafe {
            RcInner::init_in_place(memory, |p| {
                Inner::write_single(p, device, dtype, buffer, shape)
            })
        })
    }

    pub(crate) fn shard_data(&self) -> &[ShardData] {
        &self.0.shards
    }

    // ---- creation ----

    /// An array of `shape` holding `data` (row-major) on the default device. On a `cpu`
    /// device the array takes the vector itself, without a copy (and `into_candle` can hand
    /// it on the same way); on other devices the data is copied there.
    pub fn from_vec<T: Element>(data: Vec<T>, shape: &[usize]) -> Result<Array> {
        let device = backends::registry::default_device()?;
        if device.platform() != "cpu" || data.is_empty() {
            return Array::from_slice_on(&data, shape, &device);
        }
        if checked_size(shape)? != data.len() {
            return Err(Error::ShapeMismatch {
                op: "from_vec",
                lhs: vec![data.len()],
                rhs: shape.to_vec(),
            });
        }
        let strides = crate::layout::contiguous_strides(shape);
        let t = foreign::Strided {
            data: data.as_ptr() as *const u8,
            shape,
            strides: &strides,
            dtype: T::DTYPE,
        };
        let kind = device.default_memory_kind();
        // SAFETY: `data` holds exactly the row-major elements of `shape` from `as_ptr()`; it
        // moves into the buffer's owner (moving a Vec does not move its heap data), so the
        // memory stays valid and unchanged while the array lives.
        unsafe { foreign::wrap(t, &device, kind, true, Box::new(data)) }
    }

    /// An array of `shape` holding a copy of `data` (row-major) on the default device.
    pub fn from_slice<T: Element>(data: &[T], shape: &[usize]) -> Result<Array> {
        Array::from_slice_on(data, shape, &backends::registry::default_device()?)
    }

    /// An array of `shape` holding a copy of `data` on `device` (its default memory kind).
    pub fn from_slice_on<T: Element>(
        data: &[T],
        shape: &[usize],
        device: &Device,
    ) -> Result<Array> {
        if checked_size(shape)? != data.len() {
            return Err(Error::ShapeMismatch {
                op: "from_slice",
                lhs: vec![data.len()],
                rhs: shape.to_vec(),
            });
        }
        let buffer = device.backend().upload(
            device.index(),
            device.default_memory_kind(),
            as_bytes(data),
        )?;
        Ok(Array::from_buffer(
            device.clone(),
            T::DTYPE,
            buffer,
            Layout::contiguous(shape)?,
        ))
    }

    /// A 0-d array holding `value`.
    pub fn scalar<T: Element>(value: T) -> Result<Array> {
        Array::from_slice(&[value], &[])
    }

    /// `shape` filled with `value` converted to `dtype`, laid out by `sharding`.
    pub fn full_sharded(
        shape: &[usize],
        value: Scalar,
        dtype: DType,
        sharding: &Sharding,
    ) -> Result<Array> {
        checked_size(shape)?;
        let kind = sharding.memory_kind();
        let mut shards = Vec::new();
        for (device, index) in sharding.shard_indices(shape)? {
            let sub: Vec<usize> = index.iter().map(|r| r.len()).collect();
            let buffer =
                device
                    .backend()
                    .fill(device.index(), kind, dtype, value, sub.iter().product())?;
            shards.push(ShardData {
                device,
                layout: Layout::contiguous(&sub)?,
                index: index.into(),
                buffer,
            });
        }
        Ok(Array::from_shards(
            shape,
            dtype,
            sharding.clone(),
            shards,
            false,
        ))
    }

    /// `shape` filled with `value` (converted to `dtype`) on the default device.
    pub fn full(shape: &[usize], value: impl Into<ScalarValue>, dtype: DType) -> Result<Array> {
        let d = backends::registry::default_device()?;
        Array::full_sharded(shape, value.into().0, dtype, &Sharding::single(&d))
    }

    /// `shape` of zeros of `dtype` on the default device.
    pub fn zeros(shape: &[usize], dtype: DType) -> Result<Array> {
        Array::full(shape, 0i64, dtype)
    }

    /// `shape` of ones of `dtype` on the default device.
    pub fn ones(shape: &[usize], dtype: DType) -> Result<Array> {
        Array::full(shape, 1i64, dtype)
    }

    /// `start, start + step, ...` below `stop` (above, for a negative step), as NumPy's.
    pub fn arange(start: f64, stop: f64, step: f64, dtype: DType) -> Result<Array> {
        if step == 0.0 || !step.is_finite() || !start.is_finite() || !stop.is_finite() {
            return Err(Error::invalid(format!(
                "arange({start}, {stop}, {step}): step must be non-zero and bounds finite"
            )));
        }
        let n = ((stop - start) / step).ceil().max(0.0);
        if n > (isize::MAX as f64) {
            return Err(Error::invalid("arange: too many elements"));
        }
        let n = n as usize;
        let exact_int = start.fract() == 0.0 && step.fract() == 0.0 && !dtype.is_inexact();
        // Built straight in the result's element type: one buffer the size of the result,
        // allocated fallibly (a too-large request is OutOfMemory, not an abort).
        crate::with_dtype!(dtype, T => {
            let mut data: Vec<T> = crate::backends::host::try_host_vec(n, "host")?;
            for (i, v) in data.iter_mut().enumerate() {
                *v = T::from_scalar(if exact_int {
                    Scalar::Int(start as i128 + i as i128 * step as i128)
                } else {
                    Scalar::Float(start + i as f64 * step)
                });
            }
            // Kept without a copy on a cpu device: a copy would need the memory twice.
            Array::from_vec(data, &[n])
        })
    }

    // ---- properties ----

    /// The extent of each axis.
    pub fn shape(&self) -> &[usize] {
        &self.0.shape
    }
    /// The number of axes.
    pub fn ndim(&self) -> usize {
        self.0.shape.len()
    }
    /// The number of elements (1 for a 0-d array).
    pub fn size(&self) -> usize {
        self.0.shape.iter().product()
    }
    /// The element type.
    pub fn dtype(&self) -> DType {
        self.0.dtype
    }
    /// How the array is laid out over devices.
    pub fn sharding(&self) -> &Sharding {
        self.0.sharding.get_or_init(|| {
            // Only `from_buffer` leaves it unset, with exactly one shard.
            let s = &self.0.shards[0];
            Sharding::SingleDevice(s.device.clone(), s.memory_kind())
        })
    }
    /// The devices holding shards, each once.
    pub fn devices(&self) -> Vec<Device> {
        self.sharding().devices()
    }
    /// The memory kind of the shards (`device`, `pinned_host`).
    pub fn memory_kind(&self) -> MemoryKind {
        self.0
            .shards
            .first()
            .map_or(MemoryKind::Device, ShardData::memory_kind)
    }
    /// True for arrays whose memory must not be written by DLPack consumers.
    pub fn is_read_only(&self) -> bool {
        self.0.read_only
    }
    /// Whether the array lives on a single device.
    pub fn is_single_device(&self) -> bool {
        self.0.shards.len() == 1
    }
    /// Whether the sharding is `SingleDevice`, without building one left unset (those are).
    pub(crate) fn has_single_device_sharding(&self) -> bool {
        self.0
            .sharding
            .get()
            .is_none_or(|s| matches!(s, Sharding::SingleDevice(..)))
    }

    /// Each device's part, with the global slice it holds.
    pub fn addressable_shards(&self) -> Vec<Shard> {
        self.0
            .shards
            .iter()
            .map(|s| Shard {
                device: s.device.clone(),
                index: s.index.to_vec(),
                data: Array::from_buffer(
                    s.device.clone(),
                    self.dtype(),
                    s.buffer.clone(),
                    s.layout.clone(),
                ),
            })
            .collect()
    }

    /// The one shard of a single-device array.
    pub(crate) fn single(&self) -> Option<&ShardData> {
        match &*self.0.shards {
            [s] => Some(s),
            _ => None,
        }
    }

    /// The address of the first element of a single-device array: a host pointer for host
    /// memory, a device pointer where the backend has one. Valid while the array lives.
    pub fn unsafe_buffer_pointer(&self) -> Result<usize> {
        let s = self.single().ok_or_else(|| {
            Error::invalid("unsafe_buffer_pointer() is supported only for unsharded arrays.")
        })?;
        let offset = s.layout.offset() * self.dtype().size_in_bytes();
        s.buffer
            .address()
            .raw()
            .map(|p| p + offset)
            .ok_or_else(|| Error::Backend {
                backend: s.device.backend_name().to_string(),
                message: "buffers of this backend have no raw address".into(),
            })
    }

    /// Waits until every shard's pending work is done.
    pub fn block_until_ready(&self) -> Result<()> {
        for s in &self.0.shards {
            s.device.backend().synchronize(s.device.index())?;
        }
        Ok(())
    }

    // ---- host reads ----

    /// The elements in row-major order, gathered from every shard.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        if T::DTYPE != self.dtype() {
            return Err(Error::ElementType {
                array: self.dtype(),
                requested: T::DTYPE,
            });
        }
        let n = self.size();
        if let Some(s) = self.single().filter(|_| n > 0) {
            return self.download_vec(s, n);
        }
        let mut out: Vec<T> = crate::backends::host::try_host_vec(n, "host")?;
        // SAFETY: `out` holds n initialised elements of T (plain data), viewed as bytes for
        // the copy (try_host_vec checked that n * size_of::<T>() fits); every byte written
        // is part of a valid T of the same dtype.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(
                out.as_mut_ptr() as *mut u8,
                n * std::mem::size_of::<T>(),
            )
        };
        self.read_bytes(bytes)?;
        Ok(out)
    }

    /// `to_vec` of a single-device array: its `n` elements downloaded straight into the
    /// vector's unused capacity, with no zeroing pass first.
    fn download_vec<T: Element>(&self, s: &ShardData, n: usize) -> Result<Vec<T>> {
        let mut out: Vec<T> = crate::backends::host::try_host_capacity(n, "host")?;
        // try_host_capacity checked that n elements' bytes fit in usize.
        let bytes = n * std::mem::size_of::<T>();
        let start = out.as_mut_ptr() as *mut u8;
        // SAFETY: the vector's capacity holds at least n elements of T, i.e. `bytes` bytes
        // from `start`, uninitialised, which `MaybeUninit<u8>` allows; nothing else refers
        // to them while `raw` lives.
        let raw = unsafe {
            std::slice::from_raw_parts_mut(start as *mut std::mem::MaybeUninit<u8>, bytes)
        };
        let written = s
            .device
            .backend()
            .download_uninit(s.tensor(self.dtype()), raw)?;
        if !std::ptr::eq(written.as_ptr(), start) || written.len() != bytes {
            return Err(Error::Backend {
                backend: s.device.backend_name().to_string(),
                message: "download_uninit returned memory other than the buffer it was given"
                    .into(),
            });
        }
        // SAFETY: `written` is the same `bytes` bytes, initialised (it is a `&mut [u8]`):
        // the array's elements in its dtype, which is T's (checked by the caller), the very
        // bytes the other path of `to_vec` writes over an initialised vector of T.
        unsafe { out.set_len(n) };
        Ok(out)
    }

    /// The value of a one-element array.
    pub fn item<T: Element>(&self) -> Result<T> {
        if self.size() != 1 {
            return Err(Error::invalid(format!(
                "item() needs exactly one element, the array has {}",
                self.size()
            )));
        }
        Ok(self.to_vec::<T>()?[0])
    }

    /// Elements as `f64` whatever the dtype (complex: real part), for display and tests.
    pub fn to_f64_vec(&self) -> Result<Vec<f64>> {
        crate::with_dtype!(self.dtype(), T => {
            Ok(self.to_vec::<T>()?.into_iter().map(|v| f64::from_scalar(v.to_scalar())).collect())
        })
    }

    // ---- views ----

    fn map_single_view(&self, f: impl Fn(&Layout) -> Result<Layout>) -> Result<Array> {
        if let Some(s) = self.single() {
            // Borrowed: `gathered_single` would clone the shard (its lists) for nothing.
            return Ok(self.view_of(s, f(&s.layout)?));
        }
        let s = self.gathered_single()?;
        let layout = f(&s.layout)?;
        Ok(self.view_of(&s, layout))
    }

    /// A new view, with this array's dtype and read-only flag, of the buffer `s` holds.
    fn view_of(&self, s: &ShardData, layout: Layout) -> Array {
        Array::from_buffer(s.device.clone(), self.dtype(), s.buffer.clone(), layout)
            .with_read_only(self.0.read_only)
    }

    /// The array on one device: itself if it is already, else gathered to its first device.
    fn gathered_single(&self) -> Result<ShardData> {
        if let Some(s) = self.single() {
            return Ok(s.clone());
        }
        let first = self
            .devices()
            .into_iter()
            .next()
            .ok_or_else(|| Error::invalid("array has no device"))?;
        let a = self.device_put(&Sharding::SingleDevice(first, self.memory_kind()))?;
        a.single()
            .cloned()
            .ok_or_else(|| Error::invalid("gather did not give one shard"))
    }

    pub(crate) fn with_read_only(mut self, read_only: bool) -> Array {
        if self.0.read_only == read_only {
            return self;
        }
        if let Some(inner) = RcInner::get_mut(&mut self.0) {
            inner.read_only = read_only;
            return self;
        }
        let i = &self.0;
        Array::from_shards(
            &i.shape,
            i.dtype,
            self.sharding().clone(),
            i.shards.clone(),
            read_only,
        )
    }

    /// A view with `shape` (one entry may be -1: inferred). Copies only when the strides
    /// cannot express the new shape (as NumPy). A sharded array reshaped only after its last
    /// split axis stays sharded (each shard reshaped where it lives); otherwise it is gathered
    /// first.
    pub fn reshape(&self, shape: &[isize]) -> Result<Array> {
        let shape = infer_shape(shape, self.size())?;
        if self.0.shards.len() > 1
            && let Some(a) = self.reshape_shards(&shape)?
        {
            return Ok(a);
        }
        // One shard whose layout takes the new shape: a view of it, without first cloning the
        // shard as the general path does (with the shape's lists, that path made a reshape of 8
        // elements cost more than an add of them: 181 ns against 131).
        if let Some(s) = self.single()
            && let Some(view) = s.layout.reshape(&shape)?
        {
            return Ok(self.view_of(s, view));
        }
        let whole = self.gathered_single()?;
        let s = whole.reshaped(self.dtype(), &shape)?;
        if Shared::ptr_eq(&s.buffer, &whole.buffer) {
            return Ok(self.view_of(&s, s.layout.clone()));
        }
        // A copy is new memory: not read-only, whatever this array is.
        Ok(Array::from_buffer(
            s.device,
            self.dtype(),
            s.buffer,
            s.layout,
        ))
    }

    /// Axes permuted (`perm[k]` is the old axis that becomes axis `k`); no copy, and a
    /// sharded array keeps its shards (the sharding's spec is permuted with them).
    pub fn permute(&self, perm: &[usize]) -> Result<Array> {
        // One shard on one device (the common case): a view of its layout. The general path
        // below builds lists of shards and a permuted sharding, which made a transpose of 8
        // elements cost twice an add of them.
        if let Some(s) = self.single().filter(|_| self.has_single_device_sharding()) {
            let layout = s.layout.permute(perm)?;
            return Ok(self.view_of(s, layout));
        }
        // Validates perm.
        Layout::contiguous(self.shape())?.permute(perm)?;
        let shards = self
            .0
            .shards
            .iter()
            .map(|s| {
                Ok(ShardData {
                    device: s.device.clone(),
                    index: perm.iter().map(|&p| s.index[p].clone()).collect::<Region>(),
                    buffer: s.buffer.clone(),
                    layout: s.layout.permute(perm)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let shape: Vec<usize> = perm.iter().map(|&p| self.shape()[p]).collect();
        Ok(Array::from_shards(
            &shape,
            self.dtype(),
            self.sharding().permuted(perm),
            shards,
            self.0.read_only,
        ))
    }

    /// Axes reversed (the matrix transpose for 2-D).
    pub fn t(&self) -> Result<Array> {
        let mut perm: Dims = SmallVec::from_elem(0, self.ndim());
        for (k, p) in perm.iter_mut().rev().enumerate() {
            *p = k;
        }
        self.permute(&perm)
    }

    /// A basic slice (`start:stop:step` per axis, missing axes whole); no copy on one device,
    /// nor on many when only axes that are not split are cut (a sharded array whose split axis
    /// is cut is gathered to its first device first).
    pub fn slice(&self, slices: &[Slice]) -> Result<Array> {
        if self.0.shards.len() > 1
            && let Some(view) = self.slice_shards(slices)?
        {
            return Ok(view);
        }
        self.map_single_view(|l| l.slice(slices))
    }

    /// The view of elements `range` along `axis` (every other axis whole): what splits,
    /// rolls and scans cut.
    pub(crate) fn range_along(&self, axis: usize, range: std::ops::Range<usize>) -> Result<Array> {
        let mut s: Vec<Slice> = (0..self.ndim()).map(|_| Slice::full()).collect();
        s[axis] = Slice::new(Some(range.start as isize), Some(range.end as isize), 1);
        self.slice(&s)
    }

    /// The sub-array at `index` along `axis` (that axis removed); no copy on one device, nor on
    /// many when `axis` is not split.
    pub fn index_axis(&self, axis: isize, index: usize) -> Result<Array> {
        let axis = normalize_axis(axis, self.ndim())?;
        let n = self.shape()[axis];
        if index >= n {
            return Err(Error::IndexOutOfRange {
                what: "index",
                index: index as i64,
                size: n,
            });
        }
        if self.0.shards.len() > 1
            && let Some(view) = self.index_axis_shards(axis, index)
        {
            return Ok(view);
        }
        self.map_single_view(|l| l.select(axis, index))
    }

    /// A broadcast view with `shape` (size-1 and missing leading axes repeat, stride 0).
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Array> {
        self.map_single_view(|l| l.broadcast_to(shape))
    }
}

/// Resolves one `-1` in a reshape target.
fn infer_shape(shape: &[isize], size: usize) -> Result<Dims> {
    // Filled in place: SmallVec's `collect` is ~70 instructions a list, and a reshape of a
    // small array is mostly such overhead.
    let mut out: Dims = SmallVec::from_elem(0, shape.len());
    let mut unknown = None;
    for (k, &d) in shape.iter().enumerate() {
        match d {
            -1 if unknown.is_none() => unknown = Some(k),
            0.. => out[k] = d as usize,
            _ => return Err(Error::invalid(format!("invalid reshape target {shape:?}"))),
        }
    }
    let Some(k) = unknown else {
        // Its size is checked against the array's by the layout's reshape.
        return Ok(out);
    };
    let known: Dims = out.iter().map(|&d| d.max(1)).collect();
    let prod = checked_size(&known)?;
    if prod == 0 || !size.is_multiple_of(prod) {
        return Err(Error::ShapeMismatch {
            op: "reshape",
            lhs: vec![size],
            rhs: out.to_vec(),
        });
    }
    out[k] = size / prod;
    Ok(out)
}

/// A value for `full`: any element type, or a [`Scalar`].
pub struct ScalarValue(pub Scalar);
impl<T: Element> From<T> for ScalarValue {
    fn from(v: T) -> Self {
        ScalarValue(v.to_scalar())
    }
}
impl From<Scalar> for ScalarValue {
    fn from(v: Scalar) -> Self {
        ScalarValue(v)
    }
}

impl fmt::Debug for Array {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Array(shape={:?}, dtype={}, sharding={:?})",
            self.shape(),
            self.dtype(),
            self.sharding()
        )
    }
}
