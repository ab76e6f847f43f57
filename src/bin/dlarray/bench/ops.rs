//! The benchmarked ops: what each moves or computes, and one timed run of it on a device.

use dlarray::{Array, Axes, DType, Device, ExportOptions, Result, Scalar, Sharding};

/// One benchmarked operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    H2d,
    D2h,
    D2d,
    DlpackExport,
    DlpackImport,
    DlpackCopy,
    Add,
    Mul,
    Exp,
    Sum,
    Max,
    Matmul,
    Cast,
}

impl Op {
    pub const ALL: [Op; 13] = [
        Op::H2d,
        Op::D2h,
        Op::D2d,
        Op::DlpackExport,
        Op::DlpackImport,
        Op::DlpackCopy,
        Op::Add,
        Op::Mul,
        Op::Exp,
        Op::Sum,
        Op::Max,
        Op::Matmul,
        Op::Cast,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Op::H2d => "h2d",
            Op::D2h => "d2h",
            Op::D2d => "d2d",
            Op::DlpackExport => "dlpack_export",
            Op::DlpackImport => "dlpack_import",
            Op::DlpackCopy => "dlpack_copy",
            Op::Add => "add",
            Op::Mul => "mul",
            Op::Exp => "exp",
            Op::Sum => "sum",
            Op::Max => "max",
            Op::Matmul => "matmul",
            Op::Cast => "cast",
        }
    }

    /// What `--ops` accepts, for the error listing them.
    pub fn from_name(s: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|o| o.name() == s)
    }

    /// Throughput in FLOP/s (matmul) rather than bytes/s (the rest).
    pub fn counts_flops(self) -> bool {
        self == Op::Matmul
    }

    /// Whether memory bandwidth bounds the op (its plot panel shows the memcpy line). The
    /// in-place DLPack exchanges move no bytes at all.
    pub fn memory_bound(self) -> bool {
        !matches!(self, Op::Matmul | Op::DlpackExport | Op::DlpackImport)
    }

    /// The shape the op runs on for a size of `n` elements: matmul squares of side
    /// floor(sqrt(n)), a vector otherwise.
    pub fn shape(self, n: usize) -> Vec<usize> {
        if self == Op::Matmul {
            let side = (n as f64).sqrt() as usize;
            vec![side.max(1); 2]
        } else {
            vec![n]
        }
    }

    /// Work per run: FLOP for matmul, else bytes read plus written (the tensor once for
    /// copies and DLPack, 3 elements for add and mul, 2 for exp, 1 for reductions, source
    /// plus destination for cast).
    pub fn work(self, shape: &[usize], dtype: DType) -> f64 {
        let n: f64 = shape.iter().map(|&d| d as f64).product();
        let item = dtype.size_in_bytes() as f64;
        match self {
            Op::Matmul => 2.0 * (shape[0] as f64).powi(3),
            Op::Add | Op::Mul => 3.0 * n * item,
            Op::Exp => 2.0 * n * item,
            Op::Cast => n * (item + cast_target(dtype).size_in_bytes() as f64),
            _ => n * item,
        }
    }
}

/// The dtype `cast` converts to: float16 from float32, float32 from anything else.
pub fn cast_target(d: DType) -> DType {
    if d == DType::F32 {
        DType::F16
    } else {
        DType::F32
    }
}

/// What one timed run returns: arrays whose work must finish inside the timing, and
/// anything else kept alive until after it (DLPack tensors, host vectors).
pub enum Output {
    Array(Array),
    Other(#[allow(dead_code)] Box<dyn std::any::Any>),
}

impl Output {
    pub fn wait(&self) -> Result<()> {
        match self {
            Output::Array(a) => a.block_until_ready(),
            Output::Other(_) => Ok(()),
        }
    }
}

/// What a run consumes: made before the timing (a DLPack tensor to import), or nothing.
pub enum Input {
    None,
    Dlpack(dlarray::DLPackTensor),
}

fn versioned(copy: Option<bool>) -> ExportOptions {
    ExportOptions {
        max_version: Some((1, 0)),
        copy,
        dl_device: copy.map(|_| dlarray::dlpack::ffi::DLDevice::CPU),
        ..Default::default()
    }
}

type Upload = Box<dyn Fn(&Device) -> Result<Array>>;

/// The operands of one cell, on its device.
pub struct Cell {
    pub op: Op,
    pub x: Array,
    y: Array,
    /// `h2d`: an upload of a host vector made once.
    upload: Option<Upload>,
    device: Device,
    peer: Option<Device>,
}

impl Cell {
    /// Operands of `shape` and `dtype` on `device` (`peer`: where `d2d` copies to).
    pub fn new(
        op: Op,
        shape: &[usize],
        dtype: DType,
        device: &Device,
        peer: Option<Device>,
    ) -> Result<Cell> {
        let n: usize = shape.iter().product();
        // Made on the device in `dtype` (a float64 array cast on the default device fails
        // where that device has no 64-bit kernels: wgpu as the only backend).
        let fill = |v: f64| -> Result<Array> {
            Array::full_sharded(shape, Scalar::Float(v), dtype, &Sharding::single(device))
        };
        let (x, y) = (fill(0.5)?, fill(0.25)?);
        let upload: Option<Upload> = (op == Op::H2d).then(|| {
            let shape = shape.to_vec();
            dlarray::with_dtype!(dtype, T => {
                let v = vec![T::default(); n];
                Box::new(move |d: &Device| Array::from_slice_on(&v, &shape, d)) as Upload
            })
        });
        x.block_until_ready()?;
        Ok(Cell {
            op,
            x,
            y,
            upload,
            device: device.clone(),
            peer,
        })
    }

    /// The input a run consumes, made outside the timing.
    pub fn input(&self) -> Result<Input> {
        Ok(match self.op {
            Op::DlpackImport => Input::Dlpack(self.x.to_dlpack_with(versioned(None))?),
            _ => Input::None,
        })
    }

    /// One run of the op.
    pub fn run(&self, input: Input) -> Result<Output> {
        let (x, y) = (&self.x, &self.y);
        let a = |r: Result<Array>| r.map(Output::Array);
        match self.op {
            Op::H2d => match &self.upload {
                Some(up) => a(up(&self.device)),
                None => unreachable!("h2d cells carry their upload"),
            },
            Op::D2h => dlarray::with_dtype!(x.dtype(), T => {
                Ok(Output::Other(Box::new(x.to_vec::<T>()?)))
            }),
            Op::D2d => a(x.to_device(self.peer.as_ref().unwrap_or(&self.device))),
            Op::DlpackExport => Ok(Output::Other(Box::new(x.to_dlpack_with(versioned(None))?))),
            Op::DlpackCopy => Ok(Output::Other(Box::new(
                x.to_dlpack_with(versioned(Some(true)))?,
            ))),
            Op::DlpackImport => match input {
                Input::Dlpack(t) => a(Array::from_dlpack(t)),
                Input::None => unreachable!("dlpack_import runs on a prepared tensor"),
            },
            Op::Add => a(x + y),
            Op::Mul => a(x * y),
            Op::Exp => a(x.exp()),
            Op::Sum => a(x.sum(Axes::All)),
            Op::Max => a(x.max(Axes::All)),
            Op::Matmul => a(x.matmul(y)),
            Op::Cast => a(x.astype(cast_target(x.dtype()))),
        }
    }

    /// Waits for all work queued on the cell's devices (the peer too, for `d2d`) and
    /// returns the first asynchronous error.
    pub fn synchronize(&self) -> Result<()> {
        for d in std::iter::once(&self.device).chain(self.peer.as_ref()) {
            d.backend().synchronize(d.index())?;
        }
        Ok(())
    }

    /// Whether this cell's DLPack export is the host-copy fallback rather than in place.
    pub fn copied(&self) -> bool {
        match self.op {
            Op::DlpackCopy => true,
            Op::DlpackExport | Op::DlpackImport => self
                .x
                .to_dlpack_with(versioned(None))
                .map(|t| t.is_copied())
                .unwrap_or(false),
            _ => false,
        }
    }
}
