//! [`Device`]: one device of one backend, and the [`MemoryKind`]s it offers.

use super::{Backend, DlpackCapability};
use crate::dlpack::ffi::DLDevice;
use crate::dlpack::stream::StreamConvention;
use crate::error::BufferError;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// Where on a device a buffer lives (JAX's memory kinds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemoryKind {
    /// The device's own memory (HBM on a TPU or GPU; plain RAM on a CPU).
    Device,
    /// Page-locked host memory the device can DMA from.
    PinnedHost,
    /// Ordinary host memory.
    UnpinnedHost,
}

impl MemoryKind {
    /// Every kind, in the order of their discriminants (the index of per-kind tables).
    pub const ALL: [MemoryKind; 3] = [
        MemoryKind::Device,
        MemoryKind::PinnedHost,
        MemoryKind::UnpinnedHost,
    ];
    /// The kind's name, as JAX spells it (`device`, `pinned_host`).
    pub const fn name(self) -> &'static str {
        match self {
            MemoryKind::Device => "device",
            MemoryKind::PinnedHost => "pinned_host",
            MemoryKind::UnpinnedHost => "unpinned_host",
        }
    }
    /// The kind of a name (`device`, `pinned_host`), if it is one.
    pub fn from_name(name: &str) -> Option<MemoryKind> {
        MemoryKind::ALL.into_iter().find(|k| k.name() == name)
    }
    /// Whether the host can address this memory directly.
    pub const fn is_host(self) -> bool {
        matches!(self, MemoryKind::PinnedHost | MemoryKind::UnpinnedHost)
    }
}

impl fmt::Display for MemoryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a backend says about one of its devices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceDesc {
    /// The device's index within its backend.
    pub index: usize,
    /// The runtime's own id for the hardware (CUDA ordinal, ...), when it has one.
    pub local_hardware_id: Option<i32>,
    /// Memory kinds offered; the first is the default.
    pub memory_kinds: Vec<MemoryKind>,
}

/// A device: cheap to clone, compared by name (`backend:index`).
///
/// Devices are made only by the registry, once per backend, and the registry never lets one
/// go (no backend is unregistered): so a `Device` is a plain reference to an entry that lives
/// as long as the program, and cloning or dropping one touches no reference count. Every op
/// result holds one, and the two atomic updates of a counted reference were ~10 % of an
/// 8-element add here (an uncontended atomic add costs ~7 ns on this machine).
#[derive(Clone)]
pub struct Device(&'static DeviceInner);

struct DeviceInner {
    backend: Arc<dyn Backend>,
    desc: DeviceDesc,
    name: String,
    /// Read once: the DLPack mapping consults it on every export and import.
    platform_version: String,
    /// The backend's DLPack declaration per memory kind (indexed by `MemoryKind as usize`),
    /// read once for the same reason.
    dlpack: [Option<DlpackCapability>; 3],
    /// JAX's DLPack device for each memory kind, and how that memory's runtime numbers
    /// streams: derived from the fields above, which never change, so every export and
    /// import reads a table instead of walking the platform rules again.
    dlpack_device: [Result<DLDevice, BufferError>; 3],
    streams: [StreamConvention; 3],
}

impl Device {
    /// A new device, never freed (see the type's note): only the registry calls this, once
    /// per device it keeps.
    pub(crate) fn new(backend: Arc<dyn Backend>, desc: DeviceDesc) -> Device {
        let name = format!("{}:{}", backend.name(), desc.index);
        let platform_version = backend.device_platform_version(desc.index);
        let mut dlpack = [None; 3];
        for &k in &desc.memory_kinds {
            dlpack[k as usize] = backend.dlpack_capability(desc.index, k);
        }
        let platform = backend.platform();
        let dlpack_device = MemoryKind::ALL.map(|k| {
            crate::dlpack::dlpack_device_for(
                1,
                platform,
                &platform_version,
                dlpack[k as usize],
                k,
                desc.local_hardware_id,
            )
        });
        let streams = MemoryKind::ALL.map(|k| {
            crate::dlpack::device::stream_convention_for(
                platform,
                &platform_version,
                dlpack[k as usize],
            )
        });
        Device(Box::leak(Box::new(DeviceInner {
            backend,
            desc,
            name,
            platform_version,
            dlpack,
            dlpack_device,
            streams,
        })))
    }
    /// `backend:index`, e.g. `cpu:0`, `tpu:3`.
    pub fn name(&self) -> &str {
        &self.0.name
    }
    /// The device's index within its backend.
    pub fn index(&self) -> usize {
        self.0.desc.index
    }
    /// The backend driving this device.
    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.0.backend
    }
    /// The backend's name (`cpu`, `tpu`, `wgpu`, `cuda`, ...).
    pub fn backend_name(&self) -> &str {
        self.0.backend.name()
    }
    /// The platform (`cpu`, `tpu`, `gpu`): what JAX's `device.platform` says.
    pub fn platform(&self) -> &str {
        self.0.backend.platform()
    }
    /// The platform's version string (driver and runtime, where there is one).
    pub fn platform_version(&self) -> &str {
        &self.0.platform_version
    }
    /// The hardware's own id, where the backend knows one.
    pub fn local_hardware_id(&self) -> Option<i32> {
        self.0.desc.local_hardware_id
    }
    /// The backend's DLPack declaration for memory `kind` (`None`: none, so JAX's platform
    /// rules apply). See [`Backend::dlpack_capability`].
    #[inline]
    pub fn dlpack_capability(&self, kind: MemoryKind) -> Option<DlpackCapability> {
        self.0.dlpack[kind as usize]
    }
    /// JAX's `__dlpack_device__` for a single-device array in memory `kind` here, or the
    /// exact `BufferError` saying why it has none.
    #[inline]
    pub fn dlpack_device(&self, kind: MemoryKind) -> Result<DLDevice, BufferError> {
        match &self.0.dlpack_device[kind as usize] {
            Ok(d) => Ok(*d),
            Err(e) => Err(e.clone()),
        }
    }
    /// Whether memory `kind` here is DLPack device `d` (no error built when it is not).
    #[inline]
    pub fn dlpack_device_is(&self, kind: MemoryKind, d: DLDevice) -> bool {
        matches!(&self.0.dlpack_device[kind as usize], Ok(x) if *x == d)
    }
    /// How the runtime holding memory `kind` here numbers streams (`__dlpack__(stream=)`).
    #[inline]
    pub fn stream_convention(&self, kind: MemoryKind) -> StreamConvention {
        self.0.streams[kind as usize]
    }
    /// The dtypes this device's kernels compute on (see [`Backend::kernel_dtypes`]).
    pub fn kernel_dtypes(&self) -> Vec<crate::dtype::DType> {
        self.0.backend.kernel_dtypes(self.0.desc.index)
    }
    /// The dtype an array made here gets where the caller named none and NumPy's default
    /// is `want` (float64, int64, complex128): `want` where this device computes it, else
    /// its 32-bit counterpart where that computes (wgpu: JAX's defaults with x64 disabled,
    /// as PyTorch's float32 on Apple's GPUs), else `want` (stored, not computed).
    pub fn default_dtype(&self, want: crate::dtype::DType) -> crate::dtype::DType {
        let Some(narrow) = want.narrow_64() else {
            return want;
        };
        let computes = self.kernel_dtypes();
        if computes.contains(&want) || !computes.contains(&narrow) {
            want
        } else {
            narrow
        }
    }
    /// What computes `matmul` here (see [`Backend::matmul_engine`]).
    pub fn matmul_engine(&self) -> Option<String> {
        self.0.backend.matmul_engine(self.0.desc.index)
    }
    /// The memory kinds this device offers.
    pub fn memory_kinds(&self) -> &[MemoryKind] {
        &self.0.desc.memory_kinds
    }
    /// The memory kind new arrays get.
    pub fn default_memory_kind(&self) -> MemoryKind {
        self.0
            .desc
            .memory_kinds
            .first()
            .copied()
            .unwrap_or(MemoryKind::Device)
    }
    /// Whether this device offers `kind`.
    pub fn supports_memory_kind(&self, kind: MemoryKind) -> bool {
        self.0.desc.memory_kinds.contains(&kind)
    }
}

impl PartialEq for Device {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0) || self.0.name == other.0.name
    }
}
impl Eq for Device {}
impl Hash for Device {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.name.hash(state)
    }
}
impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.name)
    }
}
impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.name)
    }
}
