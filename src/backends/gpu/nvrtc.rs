//! NVRTC, CUDA's run-time compiler, loaded at run time: a compiler library that needs no GPU,
//! so every generated kernel is compiled in CI, and the CUDA backend compiles its kernels
//! with it. Found in, in order: `DLARRAY_NVRTC` (a file), the folders in
//! `DLARRAY_CUDA_LIBS`, `CUDA_PATH`/`CUDA_HOME`, `/usr/local/cuda`, the `nvidia` wheels of
//! the active Python environment (`VIRTUAL_ENV`, as PyPI's torch installs them), and the
//! loader's own search path. NVRTC 13 and 12 are both accepted.
//!
//! Every call returns an error; nothing here panics (cudarc's loader panics when the library
//! or a symbol is missing, research §1.7, which is why this is its own small binding).

use libloading::{Library, Symbol};
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::path::PathBuf;

type Program = *mut c_void;
type Status = c_int;

/// The NVRTC functions dlarray calls, resolved once.
struct Fns {
    version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> Status,
    create: unsafe extern "C" fn(
        *mut Program,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> Status,
    compile: unsafe extern "C" fn(Program, c_int, *const *const c_char) -> Status,
    ptx_size: unsafe extern "C" fn(Program, *mut usize) -> Status,
    ptx: unsafe extern "C" fn(Program, *mut c_char) -> Status,
    log_size: unsafe extern "C" fn(Program, *mut usize) -> Status,
    log: unsafe extern "C" fn(Program, *mut c_char) -> Status,
    destroy: unsafe extern "C" fn(*mut Program) -> Status,
    error_string: unsafe extern "C" fn(Status) -> *const c_char,
}

/// A loaded NVRTC.
pub struct Nvrtc {
    fns: Fns,
    /// Where it was found.
    pub path: String,
    /// `(major, minor)`.
    pub version: (i32, i32),
    _lib: Library,
    /// `libnvrtc-builtins`, which NVRTC opens by name at its first compile: loaded first from
    /// NVRTC's own folder, which is not on the loader's path for a pip wheel.
    _builtins: Option<Library>,
}

const NAMES: [&str; 3] = ["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"];

/// Folders that may hold CUDA's libraries, in search order.
pub fn library_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Ok(v) = std::env::var("DLARRAY_CUDA_LIBS") {
        dirs.extend(std::env::split_paths(&v));
    }
    for var in ["CUDA_PATH", "CUDA_HOME"] {
        if let Ok(v) = std::env::var(var) {
            dirs.push(PathBuf::from(&v).join("lib64"));
            dirs.push(PathBuf::from(v).join("lib"));
        }
    }
    dirs.push(PathBuf::from("/usr/local/cuda/lib64"));
    // PyPI's CUDA wheels: nvidia/cu13/lib (CUDA 13), nvidia/<component>/lib (CUDA 12).
    if let Ok(venv) = std::env::var("VIRTUAL_ENV")
        && let Ok(entries) = std::fs::read_dir(PathBuf::from(venv).join("lib"))
    {
        for e in entries.flatten() {
            let nvidia = e.path().join("site-packages").join("nvidia");
            for sub in ["cu13", "cuda_nvrtc", "cublas", "cuda_runtime"] {
                dirs.push(nvidia.join(sub).join("lib"));
            }
        }
    }
    dirs
}

impl Nvrtc {
    /// Finds and loads NVRTC; the error says where it looked.
    pub fn load() -> Result<Nvrtc, String> {
        let mut candidates: Vec<String> = Vec::new();
        if let Ok(p) = std::env::var("DLARRAY_NVRTC") {
            candidates.push(p);
        }
        for d in library_dirs() {
            for n in NAMES {
                let p = d.join(n);
                if p.exists() {
                    candidates.push(p.to_string_lossy().into_owned());
                }
            }
        }
        candidates.extend(NAMES.iter().map(|n| n.to_string()));
        let mut tried = Vec::new();
        for c in candidates {
            // SAFETY: loading NVRTC runs its initialisers, which have no preconditions.
            match unsafe { Library::new(&c) } {
                Ok(lib) => match Nvrtc::bind(lib, &c) {
                    Ok(n) => return Ok(n),
                    Err(e) => tried.push(format!("{c}: {e}")),
                },
                Err(e) => tried.push(format!("{c}: {e}")),
            }
        }
        Err(format!(
            "NVRTC not found (set DLARRAY_NVRTC or DLARRAY_CUDA_LIBS, or install the \
             nvidia-cuda-nvrtc wheel); tried: {}",
            tried.join("; ")
        ))
    }

    fn bind(lib: Library, path: &str) -> Result<Nvrtc, String> {
        macro_rules! sym {
            ($name:literal) => {{
                // SAFETY: the symbol has the C signature NVRTC's header declares for it,
                // which is the field's type.
                let s: Symbol<'_, _> = unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                    .map_err(|e| format!("missing {}: {e}", $name))?;
                *s
            }};
        }
        let fns = Fns {
            version: sym!("nvrtcVersion"),
            create: sym!("nvrtcCreateProgram"),
            compile: sym!("nvrtcCompileProgram"),
            ptx_size: sym!("nvrtcGetPTXSize"),
            ptx: sym!("nvrtcGetPTX"),
            log_size: sym!("nvrtcGetProgramLogSize"),
            log: sym!("nvrtcGetProgramLog"),
            destroy: sym!("nvrtcDestroyProgram"),
            error_string: sym!("nvrtcGetErrorString"),
        };
        let builtins = std::path::Path::new(path).parent().and_then(|dir| {
            let entries = std::fs::read_dir(dir).ok()?;
            entries.flatten().find_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let wanted = name.starts_with("libnvrtc-builtins.so") && !name.contains(".alt.");
                // SAFETY: NVRTC's builtins library has no initialisers with preconditions.
                wanted
                    .then(|| unsafe { Library::new(e.path()) }.ok())
                    .flatten()
            })
        });
        let (mut major, mut minor) = (0, 0);
        // SAFETY: two valid out-pointers.
        let st = unsafe { (fns.version)(&mut major, &mut minor) };
        if st != 0 {
            return Err(format!("nvrtcVersion failed with status {st}"));
        }
        Ok(Nvrtc {
            fns,
            path: path.to_string(),
            version: (major, minor),
            _lib: lib,
            _builtins: builtins,
        })
    }

    fn status(&self, call: &str, st: Status) -> Result<(), String> {
        if st == 0 {
            return Ok(());
        }
        // SAFETY: NVRTC returns a static string for any status.
        let s = unsafe { (self.fns.error_string)(st) };
        let text = if s.is_null() {
            format!("status {st}")
        } else {
            // SAFETY: a NUL-terminated static string.
            unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
        };
        Err(format!("{call}: {text}"))
    }

    /// Compiles CUDA C++ `source` to PTX with `options` (e.g. `--gpu-architecture=sm_90`);
    /// a compile error returns NVRTC's log.
    pub fn compile(&self, source: &str, name: &str, options: &[&str]) -> Result<Vec<u8>, String> {
        let src = CString::new(source).map_err(|_| "kernel source holds a NUL byte".to_string())?;
        let name = CString::new(name).map_err(|_| "kernel name holds a NUL byte".to_string())?;
        let opts: Vec<CString> = options
            .iter()
            .map(|o| CString::new(*o).map_err(|_| format!("option {o:?} holds a NUL byte")))
            .collect::<Result<_, _>>()?;
        let opt_ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
        let mut prog: Program = std::ptr::null_mut();
        // SAFETY: valid NUL-terminated strings; no headers.
        let st = unsafe {
            (self.fns.create)(
                &mut prog,
                src.as_ptr(),
                name.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        self.status("nvrtcCreateProgram", st)?;
        let result = (|| {
            // SAFETY: `prog` is a live program; the options outlive the call.
            let st =
                unsafe { (self.fns.compile)(prog, opt_ptrs.len() as c_int, opt_ptrs.as_ptr()) };
            if st != 0 {
                let mut n = 0usize;
                // SAFETY: live program, valid out-pointer.
                unsafe { (self.fns.log_size)(prog, &mut n) };
                let mut log = vec![0u8; n.max(1)];
                // SAFETY: `log` holds the size NVRTC asked for.
                unsafe { (self.fns.log)(prog, log.as_mut_ptr() as *mut c_char) };
                let log = String::from_utf8_lossy(&log)
                    .trim_end_matches('\0')
                    .to_string();
                return Err(format!(
                    "{}\n{log}",
                    self.status("nvrtcCompileProgram", st).unwrap_err()
                ));
            }
            let mut n = 0usize;
            // SAFETY: live program, valid out-pointer.
            self.status("nvrtcGetPTXSize", unsafe {
                (self.fns.ptx_size)(prog, &mut n)
            })?;
            let mut ptx = vec![0u8; n];
            // SAFETY: `ptx` holds the size NVRTC reported.
            self.status("nvrtcGetPTX", unsafe {
                (self.fns.ptx)(prog, ptx.as_mut_ptr() as *mut c_char)
            })?;
            Ok(ptx)
        })();
        // SAFETY: `prog` was created above and is destroyed once.
        unsafe { (self.fns.destroy)(&mut prog) };
        result
    }
}
