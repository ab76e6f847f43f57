//! Array -> DLPack: version negotiation, device and copy rules, the host-copy fallback, and
//! the managed tensors we hand out (their deleter frees what we allocated, exactly once).

use super::device::{dlpack_device_for, dlpack_device_of};
use super::ffi::*;
use super::stream::{StreamArg, export_sync};
use super::tensor::{DLPackTensor, Owned};
use super::{DlpackPolicy, dlpack_policy};
use crate::array::{Array, ShardData};
use crate::backends::host::{HostBuffer, HostPool, physical_memory};
use crate::backends::{Address, Device, DeviceBuffer, MemoryKind, Shared, SharedBuffer};
use crate::error::{BufferError, Error, Result};
use crate::layout::Layout;
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::{Arc, OnceLock};

/// How to export (the array API's `__dlpack__` keywords, plus the fallback policy).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExportOptions {
    /// Highest DLPack version the consumer understands: `None` or major 0 gives the legacy
    /// `DLManagedTensor`, `>= (1, 0)` a `DLManagedTensorVersioned` of version 1.3; below
    /// `(0, 5)` is refused.
    pub max_version: Option<(u32, u32)>,
    /// Where the consumer wants the data (`None`: where it is).
    pub dl_device: Option<DLDevice>,
    /// `Some(true)`: always copy; `Some(false)`: never; `None`: only if needed.
    pub copy: Option<bool>,
    /// The consumer's stream, with the array API's rules per runtime (see [`stream`]):
    /// `Unspecified` for host memory. `StreamArg::from(Option<i64>)` reads Python's value.
    ///
    /// [`stream`]: super::stream
    pub stream: StreamArg,
    /// Overrides the process-wide [`DlpackPolicy`].
    pub policy: Option<DlpackPolicy>,
}

/// What the export hands out: the data to describe and where it is.
struct Plan<'a> {
    /// The array itself when it is exported in place: if the tensor comes back to dlarray,
    /// this is what it imports as.
    origin: Option<Array>,
    source: Source<'a>,
    device: DLDevice,
    fallback: Option<BufferError>,
}

/// The stream handshake before `buffer` of `device` is handed out as DLPack device `dl`:
/// the array API's rule for the consumer's `stream` on that memory, executed by the backend.
#[inline]
fn sync_for_consumer(
    device: &Device,
    kind: MemoryKind,
    buffer: &dyn DeviceBuffer,
    dl: DLDevice,
    stream: StreamArg,
) -> Result<()> {
    let host = dl.device_type.is_host();
    // Host memory takes no stream, whatever the runtime's convention.
    let convention = if host {
        Default::default()
    } else {
        device.stream_convention(kind)
    };
    let rule = export_sync(convention, host, stream)?;
    device.backend().dlpack_export_sync(buffer, rule)
}

/// Refuses to describe `buffer` as DLPack device `dl`: a host address must go out under a
/// host device type and a device address under a device one (never a host pointer labelled
/// kDLCUDA), and opaque memory has no address at all.
#[inline]
fn check_address(device: &Device, buffer: &dyn DeviceBuffer, dl: DLDevice) -> Result<()> {
    let address = buffer.address();
    match address {
        Address::Host(_) if dl.device_type.is_host() => Ok(()),
        Address::Device(_) if !dl.device_type.is_host() => Ok(()),
        _ => Err(address_mismatch(device, address, dl)),
    }
}

#[cold]
fn address_mismatch(device: &Device, address: Address, dl: DLDevice) -> Error {
    let why = match address {
        Address::Opaque => format!(
            "buffers of backend `{}` have no raw address to export",
            device.backend_name()
        ),
        _ => format!(
            "{device} holds {address:?} memory, which cannot be exported as DLPack device {dl:?}"
        ),
    };
    BufferError::Other(why).into()
}

/// `copy=True` on the device where the array is: a fresh copy there. The copy is queued
/// behind the work on the source: only it needs the wait.
#[inline(never)]
fn copied_in_place<'a>(
    dtype: crate::DType,
    s: &ShardData,
    device: DLDevice,
    stream: StreamArg,
) -> Result<Plan<'a>> {
    let buffer = s
        .device
        .backend()
        .copy(s.tensor(dtype), s.device.index(), s.memory_kind())?;
    check_address(&s.device, &*buffer, device)?;
    sync_for_consumer(&s.device, s.memory_kind(), &*buffer, device, stream)?;
    Ok(Plan {
        origin: None,
        source: Source::Copy(buffer),
        device,
        fallback: None,
    })
}

/// An export refused before anything was done (out of the hot path's code).
#[cold]
#[inline(never)]
fn refused(e: BufferError) -> Error {
    e.into()
}

/// The memory a tensor describes.
enum Source<'a> {
    /// The array's own buffer and layout (zero-copy).
    InPlace(&'a SharedBuffer, &'a Layout),
    /// A fresh row-major copy of the whole array.
    Copy(SharedBuffer),
}

/// Host memory for export copies: a pool of its own, so repeated fallbacks reuse pages.
fn export_pool() -> &'static Arc<HostPool> {
    static POOL: OnceLock<Arc<HostPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        HostPool::new(
            "dlpack host copy".into(),
            physical_memory(),
            crate::backends::cpu::pool_bytes(),
        )
    })
}

impl Array {
    /// JAX's `__dlpack_device__`: where this array would be exported, or the exact
    /// `BufferError` saying why it cannot be.
    #[inline]
    pub fn dlpack_device(&self) -> Result<DLDevice, BufferError> {
        let shards = self.shard_data();
        let Some(s) = self.single() else {
            return dlpack_device_for(shards.len(), "", "", None, MemoryKind::Device, None);
        };
        dlpack_device_of(&s.device, s.memory_kind())
    }

    /// Whether [`dlpack_device`](Self::dlpack_device) is `(kDLCPU, 0)`: plain host memory,
    /// exported in place with nothing to wait for (cheaper than building the `Result`).
    #[inline]
    pub fn dlpack_is_cpu(&self) -> bool {
        self.single()
            .is_some_and(|s| s.device.dlpack_device_is(s.memory_kind(), DLDevice::CPU))
    }

    /// Host memory the host can address directly (CPU, pinned host memory).
    fn host_addressable(&self) -> bool {
        self.single().is_some_and(|s| {
            s.buffer.address().host().is_some()
                && (s.device.platform() == "cpu" || s.memory_kind().is_host())
        })
    }

    /// Exports with default options: legacy ABI, in place where possible, else (under the
    /// default policy) a host copy.
    pub fn to_dlpack(&self) -> Result<DLPackTensor> {
        self.to_dlpack_with(ExportOptions::default())
    }

    /// Exports as DLPack following the array API's `__dlpack__` rules.
    ///
    /// The in-place export of CPU memory is the hot path (every `np.from_dlpack`): it is built
    /// directly, and what only the other cases need (errors, copies, the fallback's log line)
    /// lives in functions of its own, so the hot path runs through fewer instructions and
    /// cache lines.
    // With the export's other hot functions in one section, which the linker puts first in
    // `.text`, together: only their own code (and the size of what precedes `.text`) moves
    // them, not changes elsewhere in the crate. Where their lines fall decides whether,
    // beside NumPy's and Python's own code, a set of the L1 instruction cache overflows
    // (70 misses a call against NumPy's 23, in callgrind's model, and 1.2-1.3x NumPy's
    // time). Adding the import's functions to the section moved the export's lines into
    // overflowing sets (51 misses): check with `scripts/py_instructions.sh` after a change.
    #[cfg_attr(target_os = "linux", unsafe(link_section = ".text.hot.dlpack_export"))]
    pub fn to_dlpack_with(&self, o: ExportOptions) -> Result<DLPackTensor> {
        match self.cpu_in_place(&o) {
            Some(t) => t,
            None => self.planned_export(o),
        }
    }

    /// Every export by the rules, through a [`Plan`]; [`cpu_in_place`](Self::cpu_in_place)
    /// gives the same tensor for the case it takes.
    fn planned_export(&self, o: ExportOptions) -> Result<DLPackTensor> {
        let versioned = match o.max_version {
            None => false,
            Some((major, minor)) if (major, minor) < (0, 5) => {
                return Err(refused(BufferError::VersionTooOld(major, minor)));
            }
            Some((major, _)) => major >= 1,
        };
        if let Some(d) = o.dl_device
            && d.device_type.name().is_none()
        {
            return Err(refused(BufferError::UnsupportedDeviceType(d.device_type.0)));
        }
        let plan = self.plan(&o)?;
        let copied = matches!(plan.source, Source::Copy(_));
        let read_only = self.is_read_only() && !copied;
        if read_only && !versioned {
            return Err(refused(BufferError::ReadOnlyLegacy));
        }
        if let Some(reason) = &plan.fallback {
            self.log_fallback(reason);
        }
        let mut flags = 0;
        if read_only {
            flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
        }
        if copied {
            flags |= DLPACK_FLAG_BITMASK_IS_COPIED;
        }
        Ok(build(plan, self.shape(), self.dtype(), versioned, flags))
    }

    /// The export nearly every consumer asks for (`np.from_dlpack`, `torch.from_dlpack` of a
    /// CPU array): plain CPU memory, in place, no device or copy requested. It is what the
    /// general path below decides for these options, decided without its plan: the device's
    /// `Result`, the match over devices and the moves of a `Plan` through three functions
    /// were ~100 of an export's ~500 instructions, and spread its path over more cache lines
    /// (`np.from_dlpack` runs dlarray's export between NumPy's and Python's own code, and
    /// the three together overflow sets of the instruction cache). `None`: anything else,
    /// or anything the general path refuses (it then says why).
    #[inline]
    fn cpu_in_place(&self, o: &ExportOptions) -> Option<Result<DLPackTensor>> {
        let versioned = match o.max_version {
            None => false,
            Some((major, _)) if major >= 1 => true,
            Some((0, minor)) if minor >= 5 => false,
            Some(_) => return None,
        };
        if o.dl_device.is_some() || o.copy == Some(true) {
            return None;
        }
        let s = self.single()?;
        let kind = s.memory_kind();
        let read_only = self.is_read_only();
        if !s.device.dlpack_device_is(kind, DLDevice::CPU)
            || (read_only && !versioned)
            || s.buffer.address().host().is_none()
        {
            return None;
        }
        if let Err(e) = sync_for_consumer(&s.device, kind, &*s.buffer, DLDevice::CPU, o.stream) {
            return Some(Err(e));
        }
        let flags = versioned.then_some(if read_only {
            DLPACK_FLAG_BITMASK_READ_ONLY
        } else {
            0
        });
        let dtype = self.dtype();
        let data = data_ptr(&*s.buffer, &s.layout, dtype);
        // The array itself rides along: it keeps the memory alive, and a tensor that comes
        // back to dlarray is this array again (`reclaim`).
        let owned = managed(
            data,
            DLDevice::CPU,
            &s.layout,
            dtype,
            flags,
            None,
            Some(self.clone()),
        );
        Some(Ok(DLPackTensor::from_owned(owned, None)))
    }

    #[cold]
    #[inline(never)]
    fn log_fallback(&self, reason: &BufferError) {
        log::debug!("DLPack export of {self:?} copied to host: {reason}");
    }

    fn plan(&self, o: &ExportOptions) -> Result<Plan<'_>> {
        let native = self.dlpack_device();
        let here = native.as_ref().ok().copied();
        match (native, o.dl_device) {
            (Ok(here), None) => self.in_place(here, Some(here), o),
            (Ok(here), Some(want)) if want == here => self.in_place(here, Some(here), o),
            (Ok(_), Some(DLDevice::CPU)) if self.host_addressable() => {
                self.in_place(DLDevice::CPU, here, o)
            }
            (Err(reason), None) => self.unexportable(reason, o),
            (native, Some(want)) => self.moved(native, want, o),
        }
    }

    /// The array's own memory described as DLPack `device` (`here`: where the array is).
    #[inline]
    fn in_place(
        &self,
        device: DLDevice,
        here: Option<DLDevice>,
        o: &ExportOptions,
    ) -> Result<Plan<'_>> {
        let s = self.single().ok_or(BufferError::Sharded)?;
        check_address(&s.device, &*s.buffer, device)?;
        if o.copy == Some(true) {
            return copied_in_place(self.dtype(), s, device, o.stream);
        }
        sync_for_consumer(&s.device, s.memory_kind(), &*s.buffer, device, o.stream)?;
        Ok(Plan {
            // Only when the tensor describes the array as it is (not relabelled as host).
            origin: (Some(device) == here).then(|| self.clone()),
            source: Source::InPlace(&s.buffer, &s.layout),
            device,
            fallback: None,
        })
    }

    /// No DLPack device describes the array where it is: the host copy, unless the policy or
    /// `copy=False` forbids it.
    #[inline(never)]
    fn unexportable(&self, reason: BufferError, o: &ExportOptions) -> Result<Plan<'_>> {
        let policy = o.policy.unwrap_or_else(dlpack_policy);
        if policy == DlpackPolicy::Strict || o.copy == Some(false) {
            return Err(reason.into());
        }
        self.host_copy(Some(reason), o.stream)
    }

    /// The consumer wants the data on `want`, elsewhere than where it is: a copy there,
    /// unless `copy=False` forbids it.
    #[inline(never)]
    fn moved(
        &self,
        native: Result<DLDevice, BufferError>,
        want: DLDevice,
        o: &ExportOptions,
    ) -> Result<Plan<'_>> {
        if o.copy == Some(false) {
            let src = match native {
                Ok(d) => format!("{d:?}"),
                Err(_) => format!("{:?}", self.devices()),
            };
            return Err(Error::copy_required(format!("{want:?}"), src));
        }
        if want == DLDevice::CPU {
            return self.host_copy(None, o.stream);
        }
        self.copy_to(want, o.stream)
    }

    /// Everything gathered into fresh host memory, exported as `(kDLCPU, 0)`.
    fn host_copy(&self, fallback: Option<BufferError>, stream: StreamArg) -> Result<Plan<'_>> {
        // Written by the host, here: nothing is pending, but the stream rule still holds.
        export_sync(Default::default(), true, stream)?;
        let bytes = self.size() * self.dtype().size_in_bytes();
        let mut buf: HostBuffer = export_pool().alloc(bytes, 0, MemoryKind::UnpinnedHost)?;
        // SAFETY: `buf` was just allocated with `bytes` bytes and is not shared yet; every
        // byte is written by the gather before the buffer is read.
        let dst = unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr(), bytes) };
        self.read_bytes(dst)?;
        Ok(Plan {
            origin: None,
            source: Source::Copy(SharedBuffer::new(buf)),
            device: DLDevice::CPU,
            fallback,
        })
    }

    /// A copy onto the device whose DLPack device is `want`.
    fn copy_to(&self, want: DLDevice, stream: StreamArg) -> Result<Plan<'_>> {
        for device in crate::backends::devices()? {
            for &kind in device.memory_kinds() {
                if dlpack_device_of(&device, kind) == Ok(want) {
                    let place = crate::Sharding::SingleDevice(device.clone(), kind);
                    let moved = self.device_put(&place)?;
                    let s = moved.single().ok_or(BufferError::Sharded)?;
                    // `device_put` already made a fresh row-major copy unless the data was
                    // there already (as a view of this array's buffer): copy only then.
                    let fresh = s.layout.is_contiguous()
                        && s.layout.offset() == 0
                        && !self
                            .shard_data()
                            .iter()
                            .any(|o| Shared::ptr_eq(&o.buffer, &s.buffer));
                    let buffer = if fresh {
                        s.buffer.clone()
                    } else {
                        let t = s.tensor(self.dtype());
                        s.device.backend().copy(t, s.device.index(), kind)?
                    };
                    check_address(&device, &*buffer, want)?;
                    sync_for_consumer(&device, kind, &*buffer, want, stream)?;
                    return Ok(Plan {
                        origin: None,
                        source: Source::Copy(buffer),
                        device: want,
                        fallback: None,
                    });
                }
            }
        }
        Err(BufferError::Other(format!("no device for DLPack device {want:?} is available")).into())
    }
}

/// What we allocate per export; the managed tensor comes first so the deleter can recover
/// the whole from the pointer it is given.
#[repr(C)]
struct Holder<M> {
    managed: M,
    /// `shape` (the first four) and `strides` (the last four) for up to 4 axes (the holder
    /// is in its heap block before pointers into it are taken, so they stay valid)...
    dims: [i64; 2 * INLINE_AXES],
    /// ... or here for more axes (an empty `Vec` costs no allocation).
    spill: Vec<i64>,
    /// Keeps the memory alive when `origin` does not.
    keep: Option<SharedBuffer>,
    /// The array exported in place, returned as is when the tensor comes back (`reclaim`).
    origin: Option<Array>,
}

/// Drops the holder at `h` and gives its block back to the thread's cache.
///
/// # Safety
/// `h` was made by `leak`, is initialised, and is not used afterwards.
unsafe fn free_holder<M>(h: *mut Holder<M>) {
    // SAFETY: per the contract: a live holder in a block `recycle::alloc` made with this
    // layout; dropped once, then its memory handed back once.
    unsafe {
        std::ptr::drop_in_place(h);
        crate::shared::recycle::free_hot(
            NonNull::new_unchecked(h.cast()),
            std::alloc::Layout::new::<Holder<M>>(),
        );
    }
}

/// Axes whose shape and strides live inside the holder itself.
const INLINE_AXES: usize = 4;

unsafe extern "C" fn delete_legacy(p: *mut DLManagedTensor) {
    if p.is_null() {
        return;
    }
    // A panic must not unwind into C.
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: `p` is the `managed` field (offset 0, repr(C)) of a Holder we leaked in
        // `build`; DLPack calls the deleter once, so the holder is freed once.
        unsafe { free_holder(p as *mut Holder<DLManagedTensor>) }
    });
}

// In the DLPack export's hot section (see `Array::to_dlpack_with`).
#[cfg_attr(target_os = "linux", unsafe(link_section = ".text.hot.dlpack_export"))]
unsafe extern "C" fn delete_versioned(p: *mut DLManagedTensorVersioned) {
    if p.is_null() {
        return;
    }
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: as in `delete_legacy`.
        unsafe { free_holder(p as *mut Holder<DLManagedTensorVersioned>) }
    });
}

/// The two managed-tensor ABIs, as far as `leak` needs them.
trait Managed {
    fn parts(&mut self) -> (&mut DLTensor, &mut *mut c_void);
}
impl Managed for DLManagedTensor {
    fn parts(&mut self) -> (&mut DLTensor, &mut *mut c_void) {
        (&mut self.dl_tensor, &mut self.manager_ctx)
    }
}
impl Managed for DLManagedTensorVersioned {
    fn parts(&mut self) -> (&mut DLTensor, &mut *mut c_void) {
        (&mut self.dl_tensor, &mut self.manager_ctx)
    }
}

/// Boxes the holder, writes `layout`'s shape and strides into it and points the tensor at
/// them, and leaks it to the consumer (the deleter takes it back).
fn leak<M: Managed>(
    managed: M,
    layout: &Layout,
    keep: Option<SharedBuffer>,
    origin: Option<Array>,
) -> NonNull<M> {
    let ndim = layout.ndim();
    let spill = if ndim > INLINE_AXES {
        spilled_dims(layout)
    } else {
        Vec::new()
    };
    // Written field by field into the heap block: no stack copy of the whole holder. The
    // block comes from the thread's cache of small blocks (a consumer that frees each tensor
    // before taking the next reuses one block: malloc and free were ~150 instructions of an
    // export's ~1,100).
    let u = crate::shared::recycle::alloc_hot(std::alloc::Layout::new::<Holder<M>>())
        .cast::<Holder<M>>()
        .as_ptr();
    // SAFETY: `u` points to an allocation for one Holder<M>; each field is written exactly once
    // through a raw field pointer (no reference to uninitialised memory is formed), after which
    // the holder is fully initialised.
    let h = unsafe {
        std::ptr::addr_of_mut!((*u).managed).write(managed);
        std::ptr::addr_of_mut!((*u).dims).write([0; 2 * INLINE_AXES]);
        std::ptr::addr_of_mut!((*u).spill).write(spill);
        std::ptr::addr_of_mut!((*u).keep).write(keep);
        std::ptr::addr_of_mut!((*u).origin).write(origin);
        &mut *u
    };
    let (shape, strides) = if ndim > INLINE_AXES {
        h.spill.split_at_mut(ndim)
    } else {
        // At most four axes: a loop of small, known trip count, which the compiler leaves
        // scalar (a vectorised copy put ~1 KB of code the export jumps over in its path).
        let (shape, strides) = h.dims.split_at_mut(INLINE_AXES);
        let axes = layout.shape().iter().zip(layout.strides());
        for (i, (&n, &st)) in axes.take(INLINE_AXES).enumerate() {
            shape[i] = n as i64;
            strides[i] = st as i64;
        }
        (shape, strides)
    };
    // 0-d tensors get NULL shape and strides.
    let (shape, strides) = if ndim == 0 {
        (std::ptr::null_mut(), std::ptr::null_mut())
    } else {
        (shape.as_mut_ptr(), strides.as_mut_ptr())
    };
    let p: *mut Holder<M> = h;
    // SAFETY: `p` is the live holder just leaked; it never moves again, so the pointers into
    // its `dims`/`spill` stay valid. `managed` is its first field (repr(C)), so the holder
    // pointer is also the managed-tensor pointer.
    unsafe {
        let (t, ctx) = (*p).managed.parts();
        *ctx = p as *mut c_void;
        t.shape = shape;
        t.strides = strides;
        NonNull::new_unchecked(p as *mut M)
    }
}

/// Shape then strides of a layout of more than [`INLINE_AXES`] axes, in a `Vec` of its own.
#[cold]
fn spilled_dims(layout: &Layout) -> Vec<i64> {
    let shape = layout.shape().iter().map(|&n| n as i64);
    shape
        .chain(layout.strides().iter().map(|&s| s as i64))
        .collect()
}

/// The address of `layout`'s first element in `buffer` (NULL for an empty tensor).
fn data_ptr(buffer: &dyn DeviceBuffer, layout: &Layout, dtype: crate::DType) -> *mut c_void {
    if layout.size() == 0 {
        return std::ptr::null_mut();
    }
    // Every exported buffer passed `check_address`, so it has an address.
    let base = buffer.address().raw().unwrap_or(0);
    (base + layout.offset() * dtype.size_in_bytes()) as *mut c_void
}

fn build(
    plan: Plan<'_>,
    shape: &[usize],
    dtype: crate::DType,
    versioned: bool,
    flags: u64,
) -> DLPackTensor {
    let contiguous;
    let (data, layout, keep) = match plan.source {
        Source::InPlace(buffer, layout) => {
            // The origin array keeps the buffer alive; without one, the holder does.
            let keep = plan.origin.is_none().then(|| buffer.clone());
            (data_ptr(&**buffer, layout, dtype), layout, keep)
        }
        Source::Copy(buffer) => {
            // The array's own shape: already checked.
            contiguous = Layout::contiguous_valid(shape);
            (
                data_ptr(&*buffer, &contiguous, dtype),
                &contiguous,
                Some(buffer),
            )
        }
    };
    let flags = versioned.then_some(flags);
    let owned = managed(data, plan.device, layout, dtype, flags, keep, plan.origin);
    DLPackTensor::from_owned(owned, plan.fallback)
}

/// The managed tensor describing `layout` over `data` as DLPack `device`: versioned with
/// `flags` when they are given, else legacy. `keep` and `origin` go into the holder.
#[inline]
// In the DLPack export's hot section (see `Array::to_dlpack_with`).
#[cfg_attr(target_os = "linux", unsafe(link_section = ".text.hot.dlpack_export"))]
fn managed(
    data: *mut c_void,
    device: DLDevice,
    layout: &Layout,
    dtype: crate::DType,
    flags: Option<u64>,
    keep: Option<SharedBuffer>,
    origin: Option<Array>,
) -> Owned {
    let (code, bits) = dtype.dlpack_code_bits();
    let dl_tensor = DLTensor {
        data,
        device,
        ndim: layout.ndim() as i32,
        dtype: DLDataType {
            code,
            bits,
            lanes: 1,
        },
        shape: std::ptr::null_mut(),
        strides: std::ptr::null_mut(),
        byte_offset: 0,
    };
    match flags {
        Some(flags) => {
            let managed = DLManagedTensorVersioned {
                version: DLPackVersion {
                    major: DLPACK_MAJOR_VERSION,
                    minor: DLPACK_MINOR_VERSION,
                },
                manager_ctx: std::ptr::null_mut(),
                deleter: Some(delete_versioned),
                flags,
                dl_tensor,
            };
            Owned::Versioned(leak(managed, layout, keep, origin))
        }
        None => {
            let managed = DLManagedTensor {
                dl_tensor,
                manager_ctx: std::ptr::null_mut(),
                deleter: Some(delete_legacy),
            };
            Owned::Legacy(leak(managed, layout, keep, origin))
        }
    }
}

/// A tensor dlarray exported, coming back to dlarray: rebuild the array from what the holder
/// kept instead of wrapping the memory a second time (the holder is freed here, which is all
/// its deleter would do). Returns the tensor untouched when it is not one of ours or holds a
/// standalone host copy.
///
/// # Safety
/// `owned` must be live and owned by the caller.
pub(crate) unsafe fn reclaim(owned: Owned) -> std::result::Result<Array, Owned> {
    // SAFETY (both arms): live per the contract. Our deleter in the tensor means the pointer
    // is the head (repr(C), offset 0) of a Holder we leaked in `build`; taking the Box back
    // consumes the tensor exactly once, as calling the deleter would.
    #[allow(unpredictable_function_pointer_comparisons)]
    unsafe {
        match owned {
            Owned::Legacy(p) => {
                let ours: unsafe extern "C" fn(*mut DLManagedTensor) = delete_legacy;
                if (*p.as_ptr()).deleter != Some(ours) {
                    return Err(owned);
                }
                let h = p.as_ptr() as *mut Holder<DLManagedTensor>;
                let Some(origin) = (*h).origin.take() else {
                    return Err(owned);
                };
                free_holder(h);
                Ok(origin)
            }
            Owned::Versioned(p) => {
                let ours: unsafe extern "C" fn(*mut DLManagedTensorVersioned) = delete_versioned;
                if (*p.as_ptr()).deleter != Some(ours) {
                    return Err(owned);
                }
                let h = p.as_ptr() as *mut Holder<DLManagedTensorVersioned>;
                let Some(origin) = (*h).origin.take() else {
                    return Err(owned);
                };
                let read_only = (*h).managed.flags & DLPACK_FLAG_BITMASK_READ_ONLY != 0;
                free_holder(h);
                Ok(origin.with_read_only(read_only))
            }
        }
    }
}

#[cfg(test)]
#[path = "export_tests.rs"]
mod tests;
