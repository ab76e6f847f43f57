//! Errors. Every failure a user can cause is a value of [`Error`]; nothing panics or aborts.

use crate::dtype::DType;

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in dlarray.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Operand shapes are incompatible for `op`.
    #[error("{}", shape_message(op, lhs, rhs))]
    ShapeMismatch {
        /// The operation that refused the shapes.
        op: &'static str,
        /// The first operand's shape.
        lhs: Vec<usize>,
        /// The second operand's shape (or the shape asked for).
        rhs: Vec<usize>,
    },
    /// An operand has a dtype the operation does not accept.
    #[error("{op}: dtype mismatch: expected {expected}, got {got}")]
    DTypeMismatch {
        /// The operation that refused the dtype.
        op: &'static str,
        /// What it accepts, in words (`a floating dtype`, `bool`, ...).
        expected: String,
        /// The dtype it was given.
        got: DType,
    },
    /// A backend cannot run `op` on `dtype`.
    #[error("backend `{backend}` does not support `{op}` on {dtype}")]
    Unsupported {
        /// The backend's name (`cpu`, `wgpu`, `cuda`, ...).
        backend: String,
        /// The operation.
        op: String,
        /// The dtype it cannot run on.
        dtype: DType,
    },
    /// An allocation could not be satisfied.
    #[error("out of memory on {device}: cannot allocate {bytes} bytes ({reason})")]
    OutOfMemory {
        /// The device's name (`cpu:0`, `cuda:1`, ...).
        device: String,
        /// The size asked for (u128: shapes whose byte count overflows `usize` say so too).
        bytes: u128,
        /// What the allocator said.
        reason: String,
    },
    /// No device with this name exists (or its backend is not loaded); the message names the
    /// devices that do.
    #[error("{0}")]
    UnknownDevice(String),
    /// An index or axis lies outside its range (NumPy's words for axes).
    #[error("{}", out_of_range(what, *index, *size))]
    IndexOutOfRange {
        /// What was indexed (`axis`, `index`, ...).
        what: &'static str,
        /// The index given (negative ones count from the end).
        index: i64,
        /// The length of what was indexed.
        size: usize,
    },
    /// A backend that was asked for (e.g. by `DLARRAY_REQUIRE`) is not available.
    #[error("backend `{backend}` is unavailable: {reason}")]
    BackendUnavailable {
        /// The backend's name.
        backend: String,
        /// Why discovery found no device (the driver's words where it gave any).
        reason: String,
    },
    /// The device is gone (driver reset, GPU removed, fatal kernel fault): this and every
    /// later call on it fail; arrays on other devices are unaffected.
    #[error("device {device} was lost: {reason}")]
    DeviceLost {
        /// The device's name.
        device: String,
        /// The driver's words for the loss.
        reason: String,
    },
    /// A backend reported a failure of its own (a driver error, ...).
    #[error("backend `{backend}`: {message}")]
    Backend {
        /// The backend's name.
        backend: String,
        /// Its message.
        message: String,
    },
    /// An exchange with another array library (candle, tch-rs) failed: a dtype or device
    /// the other side lacks, or that library's own error.
    #[error("{library}: {message}")]
    Interop {
        /// The other library: `candle` or `tch`.
        library: &'static str,
        /// What went wrong, naming the dtype or device where one is at fault.
        message: String,
    },
    /// An argument is invalid for a reason not covered above.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The data cannot be exported or imported as DLPack (Python's `BufferError`).
    #[error(transparent)]
    Buffer(#[from] BufferError),
    /// A DLPack exchange needs a copy, but `copy=false` forbids it (Python's `ValueError`).
    #[error("{0}")]
    CopyRequired(String),
    /// A DLPack tensor handed to `from_dlpack` is malformed.
    #[error("invalid DLPack tensor: {0}")]
    InvalidDlpack(String),
    /// A host read asked for a Rust type that does not match the array's dtype.
    #[error("type mismatch: array has dtype {array}, requested {requested}")]
    ElementType {
        /// The array's dtype.
        array: DType,
        /// The dtype of the Rust type asked for.
        requested: DType,
    },
}

fn shape_message(op: &str, lhs: &[usize], rhs: &[usize]) -> String {
    // A matmul's sizes that must agree are named (NumPy's gufunc error names them too).
    if op == "matmul" && !lhs.is_empty() && !rhs.is_empty() {
        let k1 = lhs[lhs.len() - 1];
        let k2 = if rhs.len() == 1 {
            rhs[0]
        } else {
            rhs[rhs.len() - 2]
        };
        if k1 != k2 {
            return format!(
                "matmul: shape mismatch: {lhs:?} vs {rhs:?}: the inner sizes differ ({k1} \
                 columns on the left, {k2} rows on the right)"
            );
        }
    }
    format!("{op}: shape mismatch: {lhs:?} vs {rhs:?}")
}

fn out_of_range(what: &str, index: i64, size: usize) -> String {
    if what == "axis" {
        format!("axis {index} is out of bounds for array of dimension {size}")
    } else {
        format!("{what} {index} is out of range for size {size}")
    }
}

/// The message of a caught panic's payload (`panic!` gives a `&str` or a `String`), for the
/// places that turn a panic into an error instead of letting it cross a C boundary.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

impl Error {
    pub(crate) fn unsupported(backend: &str, op: impl Into<String>, dtype: DType) -> Self {
        Error::Unsupported {
            backend: backend.to_string(),
            op: op.into(),
            dtype,
        }
    }

    pub(crate) fn invalid(msg: impl Into<String>) -> Self {
        Error::InvalidArgument(msg.into())
    }

    /// JAX's refusal of a cross-device exchange under `copy=False`, for a target and a source
    /// in whatever notation the caller speaks (DLPack devices, dlarray devices).
    pub fn copy_required(target: impl std::fmt::Display, source: impl std::fmt::Display) -> Self {
        Error::CopyRequired(format!(
            "Specified device={target} which requires a copy since the source device is \
             {source}, however copy=False. Set copy=True or copy=None to perform the requested \
             operation."
        ))
    }
}

/// Why an array cannot be exchanged through DLPack. The messages are JAX's (and NumPy's)
/// exact strings, so code matching on them behaves the same with dlarray.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BufferError {
    /// The array has more than one shard (JAX exports single-device arrays only).
    #[error("__dlpack__ only supported for unsharded arrays.")]
    Sharded,
    /// A `gpu` platform whose version names no runtime DLPack knows (the version string).
    #[error("Unknown GPU platform for __dlpack__: {0}")]
    UnknownGpuPlatform(String),
    /// The device has no hardware ordinal to put in the DLPack device id.
    #[error("Couldn't get local_hardware_id for __dlpack__")]
    NoHardwareId,
    /// TPU device memory, which DLPack cannot name (its pinned host memory it can).
    #[error("__dlpack__ device only supported for TPU pinned host memory")]
    TpuDeviceMemory,
    /// A platform with no DLPack device type (`wgpu`, ...): the platform's name.
    #[error("__dlpack__ device only supported for CPU, GPU and TPU pinned host, got platform: {0}")]
    UnsupportedPlatform(String),
    /// `dl_device` named a device type no backend here exports to (its code).
    #[error(
        "The device specification passed to to_dlpack contains an unsupported device type \
         (DLDeviceType: {0})"
    )]
    UnsupportedDeviceType(i32),
    /// `max_version` below (0, 5): the major and minor asked for.
    #[error(
        "dlarray does not support any version below (0, 5) but version (({0}, {1})) was requested."
    )]
    VersionTooOld(u32, u32),
    /// A read-only array asked for as a legacy (unversioned) tensor, which has no flag to
    /// say so.
    #[error(
        "Cannot export readonly array since signalling readonly is unsupported by DLPack \
         (supported by newer DLPack version)."
    )]
    ReadOnlyLegacy,
    /// Another reason, with its message.
    #[error("{0}")]
    Other(String),
}
