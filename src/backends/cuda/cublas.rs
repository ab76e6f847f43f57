//! cuBLAS for matmul, loaded at the first matmul (never at discovery: the library and its
//! `cublasLt` are ~700 MB to map), from the folders NVRTC is looked for in. One handle per
//! device, made on its first GEMM in the device's primary context. A missing or unusable
//! cuBLAS is not an error: the generated kernel multiplies instead.

use crate::backends::gpu::blas::Gemm;
use crate::backends::gpu::{DriverError, DriverErrorKind, DriverResult};
use crate::dtype::DType;
use libloading::Library;
use std::ffi::{c_int, c_void};

type Handle = *mut c_void;
type Status = c_int;

const OP_N: c_int = 0;
const OP_T: c_int = 1;
/// `cudaDataType`.
const R_16F: c_int = 2;
const R_16BF: c_int = 14;
const R_32F: c_int = 0;
const R_64F: c_int = 1;
const C_32F: c_int = 4;
const C_64F: c_int = 5;
/// `cublasComputeType_t`: f32 and f64 without reduced-precision shortcuts (no TF32).
const COMPUTE_32F: c_int = 68;
const COMPUTE_64F: c_int = 70;
const GEMM_DEFAULT: c_int = -1;
const STATUS_ALLOC_FAILED: Status = 3;

type GemmFn = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    *const c_void,
    *const c_void,
    c_int,
    c_int,
    i64,
    *const c_void,
    c_int,
    c_int,
    i64,
    *const c_void,
    *mut c_void,
    c_int,
    c_int,
    i64,
    c_int,
    c_int,
    c_int,
) -> Status;

/// `cublasGemmEx`: `GemmFn` without the three batch arguments.
type GemmOneFn = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    *const c_void,
    *const c_void,
    c_int,
    c_int,
    *const c_void,
    c_int,
    c_int,
    *const c_void,
    *mut c_void,
    c_int,
    c_int,
    c_int,
    c_int,
) -> Status;

/// The loaded library.
pub struct Cublas {
    create: unsafe extern "C" fn(*mut Handle) -> Status,
    set_stream: unsafe extern "C" fn(Handle, *mut c_void) -> Status,
    gemm: GemmFn,
    /// One product (a batch of 1) goes through `cublasGemmEx`, the call PyTorch's `mm`
    /// makes: cuBLAS's heuristics for a strided batch of one may pick another kernel.
    gemm_one: Option<GemmOneFn>,
    /// Where it was loaded from (what `dlarray devices` names).
    pub path: String,
    _lib: Library,
    /// `libcublasLt`, which cuBLAS needs and a pip wheel's folder is not on the loader's
    /// path for: loaded first from the same folder.
    _lt: Option<Library>,
}

const NAMES: [(&str, &str); 3] = [
    ("libcublas.so.13", "libcublasLt.so.13"),
    ("libcublas.so.12", "libcublasLt.so.12"),
    ("libcublas.so", "libcublasLt.so"),
];

impl Cublas {
    /// Finds and loads cuBLAS; the error says where it looked.
    pub fn load() -> Result<Cublas, String> {
        let mut tried = Vec::new();
        let dirs = crate::backends::gpu::nvrtc::library_dirs();
        let found = dirs.iter().flat_map(|d| {
            NAMES
                .iter()
                .map(move |(l, lt)| (d.join(l), Some(d.join(lt))))
        });
        let bare = NAMES
            .iter()
            .map(|(l, _)| (std::path::PathBuf::from(l), None));
        for (path, lt) in found.filter(|(p, _)| p.exists()).chain(bare) {
            // SAFETY: loading cuBLAS runs its initialisers, which have no preconditions.
            let lt = lt
                .filter(|p| p.exists())
                .and_then(|p| unsafe { Library::new(p) }.ok());
            // SAFETY: as above.
            match unsafe { Library::new(&path) } {
                Ok(lib) => match Cublas::bind(lib, lt, &path.to_string_lossy()) {
                    Ok(c) => return Ok(c),
                    Err(e) => tried.push(e),
                },
                Err(e) => tried.push(format!("{}: {e}", path.display())),
            }
        }
        Err(format!("cuBLAS not found; tried: {}", tried.join("; ")))
    }

    fn bind(lib: Library, lt: Option<Library>, path: &str) -> Result<Cublas, String> {
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: the symbol has the C signature cuBLAS's header declares for it,
                // which is the field's type.
                *unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                    .map_err(|_| format!("{path} lacks {}", $name))?
            };
        }
        Ok(Cublas {
            create: sym!("cublasCreate_v2"),
            set_stream: sym!("cublasSetStream_v2"),
            gemm: sym!("cublasGemmStridedBatchedEx"),
            // SAFETY: as in `sym!`.
            gemm_one: unsafe { lib.get(b"cublasGemmEx\0") }.ok().map(|f| *f),
            path: path.to_string(),
            _lt: lt,
            _lib: lib,
        })
    }

    /// A handle in the current context (the caller made the device's context current).
    pub fn create(&self) -> Result<usize, String> {
        let mut h: Handle = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        match unsafe { (self.create)(&mut h) } {
            0 => Ok(h as usize),
            s => Err(format!("cublasCreate failed with status {s}")),
        }
    }

    /// Queues `g` on `stream` with `handle`.
    ///
    /// # Safety
    /// `handle` from [`Cublas::create`] in the current context, not used concurrently; the
    /// descriptor's memory valid until the work has run.
    pub unsafe fn gemm(&self, handle: usize, stream: u64, g: &Gemm) -> DriverResult<()> {
        let err = |call: &'static str, s: Status| {
            let kind = if s == STATUS_ALLOC_FAILED {
                DriverErrorKind::OutOfMemory
            } else {
                DriverErrorKind::Other
            };
            DriverError::new(kind, call, format!("cuBLAS status {s} for {g:?}"))
        };
        let h = handle as Handle;
        // SAFETY: a live handle and a stream of its context.
        let s = unsafe { (self.set_stream)(h, stream as *mut c_void) };
        if s != 0 {
            return Err(err("cublasSetStream", s));
        }
        let (one32, zero32) = ([1.0f32, 0.0], [0.0f32, 0.0]);
        let (one64, zero64) = ([1.0f64, 0.0], [0.0f64, 0.0]);
        // The data type, and whether it computes in f64 (else f32: f16 and bf16 accumulate
        // there). Scalars are of the compute type, real or complex (the imaginary half 0).
        let (data, wide) = match g.dtype {
            DType::F16 => (R_16F, false),
            DType::BF16 => (R_16BF, false),
            DType::F32 => (R_32F, false),
            DType::Complex64 => (C_32F, false),
            DType::F64 => (R_64F, true),
            DType::Complex128 => (C_64F, true),
            other => {
                return Err(DriverError::new(
                    DriverErrorKind::Other,
                    "cublasGemmStridedBatchedEx",
                    format!("no cuBLAS GEMM for {other}"),
                ));
            }
        };
        let (compute, alpha, beta): (c_int, *const c_void, *const c_void) = if wide {
            (COMPUTE_64F, one64.as_ptr().cast(), zero64.as_ptr().cast())
        } else {
            (COMPUTE_32F, one32.as_ptr().cast(), zero32.as_ptr().cast())
        };
        let op = |t: bool| if t { OP_T } else { OP_N };
        if let (1, Some(one)) = (g.batch, self.gemm_one) {
            // SAFETY: as below, without the batch strides.
            let s = unsafe {
                one(
                    h,
                    op(g.a.trans),
                    op(g.b.trans),
                    g.m,
                    g.n,
                    g.k,
                    alpha,
                    g.a.ptr as *const c_void,
                    data,
                    g.a.ld,
                    g.b.ptr as *const c_void,
                    data,
                    g.b.ld,
                    beta,
                    g.c as *mut c_void,
                    data,
                    g.ldc,
                    compute,
                    GEMM_DEFAULT,
                )
            };
            return match s {
                0 => Ok(()),
                s => Err(err("cublasGemmEx", s)),
            };
        }
        // SAFETY: host scalars of the compute type's scale type (real or complex), alive for
        // the call (cuBLAS reads host scalars before returning); the caller's contract for
        // the rest.
        let s = unsafe {
            (self.gemm)(
                h,
                op(g.a.trans),
                op(g.b.trans),
                g.m,
                g.n,
                g.k,
                alpha,
                g.a.ptr as *const c_void,
                data,
                g.a.ld,
                g.a.batch_stride,
                g.b.ptr as *const c_void,
                data,
                g.b.ld,
                g.b.batch_stride,
                beta,
                g.c as *mut c_void,
                data,
                g.ldc,
                g.c_stride,
                g.batch,
                compute,
                GEMM_DEFAULT,
            )
        };
        if s != 0 {
            return Err(err("cublasGemmStridedBatchedEx", s));
        }
        Ok(())
    }
}
