//! `dlarray.Array`: the Python face of [`dlarray::Array`], a DLPack producer.

use crate::operand::{check_weak_int, operand, weak_scalar};
use crate::{PyDevice, device_arg, to_py};
use dlarray::array::format::{FormatOptions, Style};
use dlarray::dlpack::StreamArg;
use dlarray::{
    Array, Axes, BinaryOp, DLDevice, DLDeviceType, DLPackTensor, DlpackPolicy, ExportOptions,
    MemoryKind, Scalar,
};
use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

#[pyclass(frozen, name = "Array", module = "dlarray")]
pub struct PyArray(pub Array);

impl PyArray {
    /// `__dlpack__`'s work once its arguments are parsed (by `dlpack_method`, which defines
    /// the method itself).
    pub(crate) fn export_capsule(
        &self,
        py: Python<'_>,
        stream: Option<Borrowed<'_, '_, PyAny>>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        let options = ExportOptions {
            max_version,
            dl_device: dl_device.map(|(t, id)| DLDevice {
                device_type: DLDeviceType(t),
                device_id: id,
            }),
            copy,
            stream: match stream {
                None => StreamArg::Unspecified,
                Some(s) => stream_arg(s)?,
            },
            policy: None,
        };
        // An in-place export of CPU memory takes ~100 ns and waits for nothing: releasing the
        // GIL would cost as much. Everything else (a copy, or memory of a device whose queued
        // work the export may wait for) runs with the GIL released.
        let in_place = dl_device.is_none() && copy != Some(true) && self.0.dlpack_is_cpu();
        let t = if in_place {
            self.0.to_dlpack_with(options)
        } else {
            export_detached(py, &self.0, options)
        }
        .map_err(to_py)?;
        crate::capsule::new_capsule(py, t.into_raw())
    }

    pub(crate) fn bin(
        &self,
        py: Python<'_>,
        op: BinaryOp,
        other: &Bound<'_, PyAny>,
        swap: bool,
    ) -> PyResult<PyArray> {
        if let Some(v) = weak_scalar(other, self.0.dtype())? {
            check_weak_int(self.0.dtype(), op, v, swap)?;
            return py
                .detach(|| self.0.binary_scalar(op, v, swap))
                .map(PyArray)
                .map_err(to_py);
        }
        let o = operand(&self.0, other)?;
        let (a, b) = if swap { (&o, &self.0) } else { (&self.0, &o) };
        py.detach(|| a.binary(op, b)).map(PyArray).map_err(to_py)
    }
}

/// `__dlpack__(stream=...)`: an int (a Python `None` never gets here).
#[inline(never)]
fn stream_arg(s: Borrowed<'_, '_, PyAny>) -> PyResult<StreamArg> {
    s.extract::<i64>()
        .map(|v| StreamArg::from(Some(v)))
        .map_err(|_| PyTypeError::new_err("stream must be an int or None"))
}

/// An export that may copy or wait for a device, with the GIL released meanwhile.
#[inline(never)]
fn export_detached(py: Python<'_>, a: &Array, o: ExportOptions) -> dlarray::Result<DLPackTensor> {
    py.detach(|| a.to_dlpack_with(o))
}

#[pymethods]
impl PyArray {
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.0.shape())
    }
    #[getter]
    fn ndim(&self) -> usize {
        self.0.ndim()
    }
    #[getter]
    fn size(&self) -> usize {
        self.0.size()
    }
    /// The dtype (`dlarray.float32`), equal to its name (`"float32"`).
    #[getter]
    fn dtype(&self, py: Python<'_>) -> PyResult<Py<crate::dtype_arg::PyDType>> {
        crate::dtype_arg::dtype_obj(py, self.0.dtype())
    }
    /// The device of a single-device array (for a sharded array: the first shard's).
    #[getter]
    fn device(&self) -> Option<PyDevice> {
        self.0.devices().into_iter().next().map(PyDevice)
    }
    #[getter]
    fn devices(&self) -> Vec<PyDevice> {
        self.0.devices().into_iter().map(PyDevice).collect()
    }
    fn platform(&self) -> String {
        self.0
            .devices()
            .first()
            .map_or(String::new(), |d| d.platform().to_string())
    }
    #[getter]
    fn memory_kind(&self) -> &'static str {
        self.0.memory_kind().name()
    }
    #[getter]
    fn is_read_only(&self) -> bool {
        self.0.is_read_only()
    }

    /// `stream` is the array API's: dlarray orders the move on its own streams, so only
    /// `None` is taken.
    #[pyo3(signature = (device, /, *, stream=None, memory_kind=None))]
    fn to_device(
        &self,
        py: Python<'_>,
        device: &Bound<'_, PyAny>,
        stream: Option<&Bound<'_, PyAny>>,
        memory_kind: Option<&str>,
    ) -> PyResult<PyArray> {
        if stream.is_some() {
            return Err(PyValueError::new_err(
                "to_device(stream=...): dlarray orders moves on its own streams; pass None",
            ));
        }
        let d = device_arg(device)?;
        let a = py.detach(|| self.0.to_device(&d)).map_err(to_py)?;
        let a = match memory_kind {
            Some(k) => {
                let kind = MemoryKind::from_name(k)
                    .ok_or_else(|| PyValueError::new_err(format!("unknown memory kind {k:?}")))?;
                py.detach(|| a.with_memory_kind(kind)).map_err(to_py)?
            }
            None => a,
        };
        Ok(PyArray(a))
    }

    /// This array split along `axis` over `devices` (uneven splits allowed): each device
    /// holds a slice; ops run shard by shard.
    #[pyo3(signature = (devices, axis=0))]
    fn shard(
        &self,
        py: Python<'_>,
        devices: Vec<Bound<'_, PyAny>>,
        axis: usize,
    ) -> PyResult<PyArray> {
        let devs = devices
            .iter()
            .map(device_arg)
            .collect::<PyResult<Vec<_>>>()?;
        let sharding = dlarray::Sharding::split(devs, axis).map_err(to_py)?;
        py.detach(|| self.0.device_put(&sharding))
            .map(PyArray)
            .map_err(to_py)
    }
    /// `(device name, start:stop of each axis)` for every shard.
    #[getter]
    fn shards(&self) -> Vec<(String, Vec<(usize, usize)>)> {
        self.0
            .addressable_shards()
            .iter()
            .map(|s| {
                let idx = s.index().iter().map(|r| (r.start, r.end)).collect();
                (s.device().name().to_string(), idx)
            })
            .collect()
    }

    /// Waits until the work producing this array (on every device holding a shard) is done
    /// and returns the array, as JAX's `block_until_ready`; an asynchronous error of that
    /// work is raised here. Timings of device work need it.
    fn block_until_ready(slf: PyRef<'_, Self>, py: Python<'_>) -> PyResult<Py<Self>> {
        let a = slf.0.clone();
        py.detach(|| a.block_until_ready()).map_err(to_py)?;
        Ok(slf.into())
    }

    fn unsafe_buffer_pointer(&self) -> PyResult<usize> {
        self.0.unsafe_buffer_pointer().map_err(to_py)
    }

    /// Where `__dlpack__()` will put the tensor: under the host-fallback policy, an array
    /// that cannot export its memory reports `(kDLCPU, 0)`, where its copy will live (so
    /// PyTorch and JAX, which ask first, accept it); under `"strict"`, JAX's BufferError.
    fn __dlpack_device__(&self) -> PyResult<(i32, i32)> {
        match self.0.dlpack_device() {
            Ok(d) => Ok((d.device_type.0, d.device_id)),
            Err(e) if dlarray::dlpack::dlpack_policy() == DlpackPolicy::Strict => {
                Err(PyBufferError::new_err(e.to_string()))
            }
            Err(_) => Ok((DLDeviceType::kDLCPU.0, 0)),
        }
    }

    /// Above NumPy's 0: NumPy's operators give way to ours, so `ndarray + Array` and
    /// `np.float32(2) * Array` are computed here and give an Array (they gave an ndarray,
    /// through a host copy), as with JAX's arrays (100) and PyTorch's tensors.
    #[classattr]
    #[allow(non_upper_case_globals)]
    const __array_priority__: f64 = 100.0;

    /// The elements' bytes, row-major, in the machine's byte order (NumPy's `tobytes()`).
    fn tobytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        let b = py.detach(|| self.0.to_bytes()).map_err(to_py)?;
        Ok(pyo3::types::PyBytes::new(py, &b))
    }

    /// Pickling: the bytes, dtype and shape (`dlarray._from_bytes` rebuilds the array on the
    /// default device of the process that unpickles it, as JAX's arrays do).
    #[allow(clippy::type_complexity)]
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(
        Bound<'py, PyAny>,
        (Bound<'py, pyo3::types::PyBytes>, &'static str, Vec<usize>),
    )> {
        let py = slf.py();
        let rebuild = py.import("dlarray")?.getattr("_from_bytes")?;
        let a = slf.get();
        let shape = a.0.shape().to_vec();
        Ok((rebuild, (a.tobytes(py)?, a.0.dtype().name(), shape)))
    }

    /// `copy.copy`: fresh memory, as NumPy's (a DLPack consumer may write into an array's
    /// memory, so the handle alone would not do).
    fn __copy__(&self, py: Python<'_>) -> PyResult<PyArray> {
        py.detach(|| self.0.deep_copy()).map(PyArray).map_err(to_py)
    }

    /// `copy.deepcopy`: as `copy.copy` (an array holds no Python objects).
    fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        self.__copy__(py)
    }

    /// NumPy's conversion protocol: a zero-copy view where the memory allows.
    #[pyo3(signature = (dtype=None, copy=None))]
    fn __array__<'py>(
        slf: &Bound<'py, Self>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let np = py.import("numpy")?;
        let kwargs = pyo3::types::PyDict::new(py);
        // Ask for host memory: pinned host memory (kDLTPUHost, which NumPy does not know)
        // then comes in place as kDLCPU, anything else through a host copy.
        kwargs.set_item("device", "cpu")?;
        if let Some(c) = copy {
            kwargs.set_item("copy", c)?;
        }
        let a = np.call_method("from_dlpack", (slf,), Some(&kwargs))?;
        match dtype {
            Some(dt) => a.call_method1("astype", (dt,)),
            None => Ok(a),
        }
    }

    /// `Array([[1., 2.], [3., 4.]], dtype=float32, device=cpu:0)`, as `jax.Array`'s repr
    /// (values as NumPy prints them, summarised beyond 1,000 elements).
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| self.0.repr_with(None, Style::Python))
            .map_err(to_py)
    }

    /// The values alone, as NumPy's `str`.
    fn __str__(&self, py: Python<'_>) -> PyResult<String> {
        let o = FormatOptions {
            style: Style::Python,
            ..Default::default()
        };
        py.detach(|| self.0.format_with(&o)).map_err(to_py)
    }

    /// NumPy's basic indexing: integers, slices and one `...` (a view where memory allows;
    /// a sharded array keeps its sharding when only axes that are not split are cut).
    fn __getitem__(&self, key: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        crate::indexing::get(&self.0, key).map(PyArray)
    }

    /// Arrays are immutable (as JAX's): the message says what to write instead.
    fn __setitem__(&self, _key: &Bound<'_, PyAny>, _value: &Bound<'_, PyAny>) -> PyResult<()> {
        Err(PyTypeError::new_err(
            "dlarray arrays are immutable and do not support item assignment: instead of \
             x[idx] = y, use x = x.at[idx].set(y) (or dlarray.where(mask, y, x))",
        ))
    }

    fn __len__(&self) -> PyResult<usize> {
        self.0
            .shape()
            .first()
            .copied()
            .ok_or_else(|| PyTypeError::new_err("len() of a 0-d array"))
    }

    /// This array as `dtype`. As in the array API, `copy=True` (the default) always returns
    /// fresh memory, and `copy=False` returns this array itself when the dtype already matches.
    #[pyo3(signature = (dtype, /, *, copy=true))]
    pub(crate) fn astype(
        &self,
        py: Python<'_>,
        dtype: &Bound<'_, PyAny>,
        copy: bool,
    ) -> PyResult<PyArray> {
        let dt = crate::dtype_arg::dtype_arg(dtype)?;
        // A conversion asked for: through the host where the device has no cast kernel
        // for it (a float64 array stored on wgpu converts there too).
        py.detach(|| match (dt == self.0.dtype(), copy) {
            (true, true) => self.0.deep_copy(),
            _ => self.0.astype_anywhere(dt),
        })
        .map(PyArray)
        .map_err(to_py)
    }

    // The reductions take NumPy's method keywords, so that NumPy's functions work on a
    // dlarray array and return one (`np.sum(x)` calls `x.sum(axis=None, dtype=None,
    // out=None)`; it raised "unexpected keyword argument 'out'"), as JAX's arrays do. `out`
    // must be None: arrays are immutable.
    #[pyo3(signature = (axis=None, dtype=None, out=None, keepdims=false))]
    fn sum(
        slf: PyRef<'_, Self>,
        axis: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<PyArray> {
        no_out(out)?;
        crate::functions::sum(slf.py(), slf, axis, dtype, keepdims)
    }
    #[pyo3(signature = (axis=None, dtype=None, out=None, keepdims=false))]
    fn prod(
        slf: PyRef<'_, Self>,
        axis: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<PyArray> {
        no_out(out)?;
        crate::functions::prod(slf.py(), slf, axis, dtype, keepdims)
    }
    /// `dtype=` computes the mean in that dtype, as NumPy's.
    #[pyo3(signature = (axis=None, dtype=None, out=None, keepdims=false))]
    fn mean(
        slf: PyRef<'_, Self>,
        axis: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<PyArray> {
        no_out(out)?;
        let py = slf.py();
        match dtype {
            Some(d) => {
                let x = Bound::new(py, slf.astype(py, d, false)?)?;
                crate::functions::mean(py, x.borrow(), axis, keepdims)
            }
            None => crate::functions::mean(py, slf, axis, keepdims),
        }
    }
    #[pyo3(signature = (axis=None, out=None, keepdims=false))]
    fn max(
        slf: PyRef<'_, Self>,
        axis: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<PyArray> {
        no_out(out)?;
        crate::functions::max(slf.py(), slf, axis, keepdims)
    }
    #[pyo3(signature = (axis=None, out=None, keepdims=false))]
    fn min(
        slf: PyRef<'_, Self>,
        axis: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<PyArray> {
        no_out(out)?;
        crate::functions::min(slf.py(), slf, axis, keepdims)
    }
    fn __floor__(&self, py: Python<'_>) -> PyResult<PyArray> {
        py.detach(|| self.0.floor()).map(PyArray).map_err(to_py)
    }
    fn __ceil__(&self, py: Python<'_>) -> PyResult<PyArray> {
        py.detach(|| self.0.ceil()).map(PyArray).map_err(to_py)
    }
    #[pyo3(signature = (axis=None, out=None, keepdims=false))]
    fn any(
        slf: PyRef<'_, Self>,
        axis: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<PyArray> {
        no_out(out)?;
        crate::functions::any(slf.py(), slf, axis, keepdims)
    }
    #[pyo3(signature = (axis=None, out=None, keepdims=false))]
    fn all(
        slf: PyRef<'_, Self>,
        axis: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<PyArray> {
        no_out(out)?;
        crate::functions::all(slf.py(), slf, axis, keepdims)
    }
    /// Variance; `correction` is the array API's name for NumPy's `ddof` (either may be
    /// given).
    #[pyo3(signature = (axis=None, dtype=None, out=None, ddof=None, keepdims=false, *, correction=None))]
    fn var(
        slf: PyRef<'_, Self>,
        axis: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        ddof: Option<f64>,
        keepdims: bool,
        correction: Option<f64>,
    ) -> PyResult<PyArray> {
        spread_method(slf, axis, dtype, out, ddof, keepdims, correction, false)
    }
    /// Standard deviation, with `var`'s keywords.
    #[pyo3(signature = (axis=None, dtype=None, out=None, ddof=None, keepdims=false, *, correction=None))]
    fn std(
        slf: PyRef<'_, Self>,
        axis: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        ddof: Option<f64>,
        keepdims: bool,
        correction: Option<f64>,
    ) -> PyResult<PyArray> {
        spread_method(slf, axis, dtype, out, ddof, keepdims, correction, true)
    }
    #[pyo3(signature = (min=None, max=None))]
    fn clip(
        &self,
        py: Python<'_>,
        min: Option<&Bound<'_, PyAny>>,
        max: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyArray> {
        crate::extras::clipped(py, &self.0, min, max)
    }
    #[pyo3(signature = (axis=None))]
    fn squeeze(&self, axis: Option<&Bound<'_, PyAny>>) -> PyResult<PyArray> {
        let axes: Option<Vec<isize>> = match axis {
            None => None,
            Some(a) => Some(match a.extract::<isize>() {
                Ok(i) => vec![i],
                Err(_) => a.extract()?,
            }),
        };
        self.0.squeeze(axes.as_deref()).map(PyArray).map_err(to_py)
    }
    fn flatten(&self) -> PyResult<PyArray> {
        self.0.flatten().map(PyArray).map_err(to_py)
    }

    fn matmul(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        let o = operand(&self.0, other)?;
        py.detach(|| self.0.matmul(&o)).map(PyArray).map_err(to_py)
    }
    fn __matmul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        self.matmul(py, other)
    }
    /// `other @ self`, for the producers whose own `@` gives way to ours (an ndarray).
    fn __rmatmul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        let o = operand(&self.0, other)?;
        py.detach(|| o.matmul(&self.0)).map(PyArray).map_err(to_py)
    }
    fn __lshift__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        self.bin(py, BinaryOp::LeftShift, o, false)
    }
    fn __rlshift__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        self.bin(py, BinaryOp::LeftShift, o, true)
    }
    fn __rshift__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        self.bin(py, BinaryOp::RightShift, o, false)
    }
    fn __rrshift__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        self.bin(py, BinaryOp::RightShift, o, true)
    }
    fn __and__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        self.bin(py, BinaryOp::BitwiseAnd, o, false)
    }
    fn __rand__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        self.bin(py, BinaryOp::BitwiseAnd, o, true)
    }
    fn __or__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        self.bin(py, BinaryOp::BitwiseOr, o, false)
    }
    fn __ror__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        self.bin(py, BinaryOp::BitwiseOr, o, true)
    }
    fn __xor__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        self.bin(py, BinaryOp::BitwiseXor, o, false)
    }
    fn __rxor__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        self.bin(py, BinaryOp::BitwiseXor, o, true)
    }
    fn __add__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        self.bin(py, BinaryOp::Add, o, false)
    }
    fn __radd__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        self.bin(py, BinaryOp::Add, o, true)
    }
    fn __sub__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        self.bin(py, BinaryOp::Sub, o, false)
    }
    fn __rsub__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        self.bin(py, BinaryOp::Sub, o, true)
    }
    fn __mul__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        self.bin(py, BinaryOp::Mul, o, false)
    }
    fn __rmul__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        self.bin(py, BinaryOp::Mul, o, true)
    }
    fn __truediv__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        self.bin(py, BinaryOp::Div, o, false)
    }
    fn __rtruediv__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        self.bin(py, BinaryOp::Div, o, true)
    }
    fn __floordiv__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        self.bin(py, BinaryOp::FloorDivide, o, false)
    }
    fn __rfloordiv__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        self.bin(py, BinaryOp::FloorDivide, o, true)
    }
    fn __mod__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        self.bin(py, BinaryOp::Remainder, o, false)
    }
    fn __rmod__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        self.bin(py, BinaryOp::Remainder, o, true)
    }
    fn __pow__(
        &self,
        py: Python<'_>,
        o: &Bound<'_, PyAny>,
        _modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyArray> {
        self.bin(py, BinaryOp::Pow, o, false)
    }
    /// `2 ** a`, `2.5 ** a` (the scalar weak, as in `a ** 2`).
    fn __rpow__(
        &self,
        py: Python<'_>,
        o: &Bound<'_, PyAny>,
        _modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyArray> {
        self.bin(py, BinaryOp::Pow, o, true)
    }
    fn __neg__(&self, py: Python<'_>) -> PyResult<PyArray> {
        py.detach(|| self.0.unary(dlarray::UnaryOp::Neg))
            .map(PyArray)
            .map_err(to_py)
    }
    fn __pos__(&self) -> PyArray {
        PyArray(self.0.clone())
    }
    fn __abs__(&self, py: Python<'_>) -> PyResult<PyArray> {
        py.detach(|| self.0.unary(dlarray::UnaryOp::Abs))
            .map(PyArray)
            .map_err(to_py)
    }
    /// `~a`: logical not of a bool array (bitwise not of integers is not an op yet).
    fn __invert__(&self, py: Python<'_>) -> PyResult<PyArray> {
        py.detach(|| self.0.unary(dlarray::UnaryOp::BitwiseInvert))
            .map(PyArray)
            .map_err(to_py)
    }

    /// Elementwise comparisons, returning bool arrays (NumPy's and the array API's `==`, not
    /// object identity); an operand that is no array or scalar gives `NotImplemented`.
    fn __richcmp__(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        op: pyo3::basic::CompareOp,
    ) -> PyResult<Py<PyAny>> {
        use pyo3::basic::CompareOp as C;
        let bop = match op {
            C::Lt => BinaryOp::Lt,
            C::Le => BinaryOp::Le,
            C::Eq => BinaryOp::Eq,
            C::Ne => BinaryOp::Ne,
            C::Gt => BinaryOp::Gt,
            C::Ge => BinaryOp::Ge,
        };
        if let Some(v) = weak_scalar(other, self.0.dtype())? {
            let r = py
                .detach(|| self.0.binary_scalar(bop, v, false))
                .map_err(to_py)?;
            return Ok(Py::new(py, PyArray(r))?.into_any());
        }
        match operand(&self.0, other) {
            Ok(o) => {
                let r = py.detach(|| self.0.binary(bop, &o)).map_err(to_py)?;
                Ok(Py::new(py, PyArray(r))?.into_any())
            }
            Err(e) if e.is_instance_of::<PyTypeError>(py) => Ok(py.NotImplemented()),
            Err(e) => Err(e),
        }
    }

    /// The one element of a size-1 array as a Python scalar (NumPy's `item()`).
    #[pyo3(signature = ())]
    fn item(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        if self.0.size() != 1 {
            return Err(PyValueError::new_err(
                "can only convert an array of size 1 to a Python scalar",
            ));
        }
        let s = py.detach(|| first_scalar(&self.0)).map_err(to_py)?;
        scalar_to_py(py, s)
    }

    fn __bool__(&self, py: Python<'_>) -> PyResult<bool> {
        match self.0.size() {
            1 => Ok(match py.detach(|| first_scalar(&self.0)).map_err(to_py)? {
                Scalar::Bool(b) => b,
                Scalar::Int(i) => i != 0,
                Scalar::Float(f) => f != 0.0,
                Scalar::Complex(c) => c.re != 0.0 || c.im != 0.0,
            }),
            0 => Err(PyValueError::new_err(
                "The truth value of an empty array is ambiguous. Use a.size > 0 to check that \
                 an array is not empty.",
            )),
            _ => Err(PyValueError::new_err(
                "The truth value of an array with more than one element is ambiguous. Use \
                 a.any() or a.all()",
            )),
        }
    }

    fn __float__(&self, py: Python<'_>) -> PyResult<f64> {
        Ok(match self.one(py)? {
            Scalar::Bool(b) => f64::from(u8::from(b)),
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) => f,
            // Python's and NumPy's: a complex number is not a real one (it was its real part).
            Scalar::Complex(_) => {
                return Err(PyTypeError::new_err(
                    "float() argument must be a string or a real number, not 'complex'",
                ));
            }
        })
    }

    /// Python's `int()`: floats truncated exactly at any size (`int(1e300)` was clamped to
    /// 2^127), infinities an OverflowError and NaN a ValueError, as Python's and NumPy's.
    fn __int__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let v = match self.one(py)? {
            Scalar::Bool(b) => i128::from(b),
            Scalar::Int(i) => i,
            Scalar::Float(f) if f.is_finite() => {
                // SAFETY: PyLong_FromDouble takes any finite double and returns a new
                // reference or NULL with an exception set, which `from_owned_ptr_or_err` turns
                // into the error.
                return unsafe {
                    Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyLong_FromDouble(f.trunc()))
                }
                .map(Bound::unbind);
            }
            Scalar::Float(f) if f.is_nan() => {
                return Err(PyValueError::new_err("cannot convert float NaN to integer"));
            }
            Scalar::Float(_) => {
                return Err(pyo3::exceptions::PyOverflowError::new_err(
                    "cannot convert float infinity to integer",
                ));
            }
            Scalar::Complex(_) => {
                return Err(PyTypeError::new_err(
                    "int() argument must be a string, a bytes-like object or a real number, \
                     not 'complex'",
                ));
            }
        };
        Ok(v.into_pyobject(py)?.into_any().unbind())
    }

    fn __complex__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let c = match self.one(py)? {
            Scalar::Bool(b) => f64::from(u8::from(b)).into(),
            Scalar::Int(i) => (i as f64).into(),
            Scalar::Float(f) => f.into(),
            Scalar::Complex(c) => c,
        };
        Ok(pyo3::types::PyComplex::from_doubles(py, c.re, c.im)
            .into_any()
            .unbind())
    }

    fn __index__(&self, py: Python<'_>) -> PyResult<i128> {
        // NumPy's rule: only 0-d integer arrays are indices (a shape-(1,) array is not).
        if !self.0.dtype().is_integer() || self.0.ndim() != 0 {
            return Err(PyTypeError::new_err(
                "only integer scalar arrays can be converted to a scalar index",
            ));
        }
        match self.one(py)? {
            Scalar::Int(i) => Ok(i),
            _ => Err(PyTypeError::new_err(
                "only integer scalar arrays can be converted to a scalar index",
            )),
        }
    }

    /// The elements as nested Python lists (a 0-d array gives its scalar).
    fn tolist(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let vals = py.detach(|| all_scalars(&self.0)).map_err(to_py)?;
        let mut it = vals.into_iter();
        nested(py, self.0.shape(), &mut it)
    }

    /// Axes reversed (NumPy's `.T`).
    #[getter(T)]
    fn t(&self) -> PyResult<PyArray> {
        self.0.t().map(PyArray).map_err(to_py)
    }

    /// The last two axes swapped (the array API's `mT`).
    #[getter(mT)]
    fn m_t(&self) -> PyResult<PyArray> {
        self.0.matrix_transpose().map(PyArray).map_err(to_py)
    }

    /// `a.reshape(2, 3)` or `a.reshape((2, 3))`; one entry may be -1. A view where the
    /// strides allow (as NumPy).
    #[pyo3(signature = (*shape))]
    fn reshape(&self, py: Python<'_>, shape: &Bound<'_, PyTuple>) -> PyResult<PyArray> {
        let dims: Vec<isize> =
            if shape.len() == 1 && !shape.get_item(0)?.is_instance_of::<pyo3::types::PyInt>() {
                shape.get_item(0)?.extract()?
            } else {
                shape.extract()?
            };
        py.detach(|| self.0.reshape(&dims))
            .map(PyArray)
            .map_err(to_py)
    }

    /// The array API namespace of these arrays: the `dlarray` module.
    #[pyo3(signature = (*, api_version=None))]
    fn __array_namespace__(
        &self,
        py: Python<'_>,
        api_version: Option<&str>,
    ) -> PyResult<Py<PyAny>> {
        let _ = api_version;
        Ok(py.import("dlarray")?.into_any().unbind())
    }
}

impl PyArray {
    /// The element of a size-1 array, or NumPy's TypeError for Python's conversions.
    fn one(&self, py: Python<'_>) -> PyResult<Scalar> {
        if self.0.size() != 1 {
            return Err(PyTypeError::new_err(
                "only length-1 arrays can be converted to Python scalars",
            ));
        }
        py.detach(|| first_scalar(&self.0)).map_err(to_py)
    }
}

/// `axis=None | int | sequence of ints`.
pub(crate) fn axes_arg(axis: Option<&Bound<'_, PyAny>>) -> PyResult<Axes> {
    Ok(match axis {
        None => Axes::All,
        Some(a) => match a.extract::<isize>() {
            Ok(i) => Axes::from(i),
            Err(_) => Axes::from(a.extract::<Vec<isize>>()?),
        },
    })
}

fn first_scalar(a: &Array) -> dlarray::Result<Scalar> {
    let flat = a.reshape(&[-1])?.slice(&[dlarray::Slice::from(0..1)])?;
    Ok(all_scalars(&flat)?[0])
}

fn all_scalars(a: &Array) -> dlarray::Result<Vec<Scalar>> {
    dlarray::with_dtype!(a.dtype(), T => {
        let v = a.to_vec::<T>()?;
        // Fallible, as every allocation a user's sizes reach (a broadcast view can be huge).
        let mut out: Vec<Scalar> = Vec::new();
        out.try_reserve_exact(v.len()).map_err(|e| dlarray::Error::OutOfMemory {
            device: "host".into(),
            bytes: (v.len() * std::mem::size_of::<Scalar>()) as u128,
            reason: e.to_string(),
        })?;
        out.extend(v.into_iter().map(dlarray::Element::to_scalar));
        Ok(out)
    })
}

fn scalar_to_py(py: Python<'_>, s: Scalar) -> PyResult<Py<PyAny>> {
    Ok(match s {
        Scalar::Bool(b) => pyo3::types::PyBool::new(py, b)
            .to_owned()
            .into_any()
            .unbind(),
        Scalar::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
        Scalar::Float(f) => f.into_pyobject(py)?.into_any().unbind(),
        Scalar::Complex(c) => pyo3::types::PyComplex::from_doubles(py, c.re, c.im)
            .into_any()
            .unbind(),
    })
}

fn nested(
    py: Python<'_>,
    shape: &[usize],
    it: &mut impl Iterator<Item = Scalar>,
) -> PyResult<Py<PyAny>> {
    match shape.split_first() {
        None => scalar_to_py(py, it.next().unwrap_or(Scalar::Int(0))),
        Some((&n, rest)) => {
            // The list at its full length first, as NumPy makes it: a length no memory holds
            // (an empty array of 2^40 rows) is a MemoryError at once, not a process that
            // grows until the system kills it.
            let len = pyo3::ffi::Py_ssize_t::try_from(n)
                .map_err(|_| pyo3::exceptions::PyMemoryError::new_err("list too long"))?;
            // SAFETY: PyList_New returns a new reference, or NULL with an exception set.
            let list = unsafe { Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyList_New(len))? };
            for i in 0..len {
                let item = nested(py, rest, it)?;
                // SAFETY: `list` is a list of length `len` made above, whose slot `i` is still
                // empty; SET_ITEM takes over the item's reference. Should a later item fail,
                // the list is dropped with its remaining slots NULL, which CPython allows.
                unsafe { pyo3::ffi::PyList_SET_ITEM(list.as_ptr(), i, item.into_ptr()) };
            }
            Ok(list.unbind())
        }
    }
}

/// `out=` of NumPy's methods: only None (dlarray arrays are immutable).
fn no_out(out: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    match out {
        Some(o) if !o.is_none() => Err(PyTypeError::new_err(
            "out= is not supported: dlarray arrays are immutable (out must be None)",
        )),
        _ => Ok(()),
    }
}

/// `var` (or `std`) as a method, with NumPy's `ddof` or the array API's `correction`.
#[allow(clippy::too_many_arguments)]
fn spread_method(
    slf: PyRef<'_, PyArray>,
    axis: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    out: Option<&Bound<'_, PyAny>>,
    ddof: Option<f64>,
    keepdims: bool,
    correction: Option<f64>,
    std: bool,
) -> PyResult<PyArray> {
    no_out(out)?;
    let correction = match (ddof, correction) {
        (Some(_), Some(_)) => {
            return Err(PyValueError::new_err(
                "ddof and correction are the same argument: give one",
            ));
        }
        (d, c) => d.or(c).unwrap_or(0.0),
    };
    let py = slf.py();
    let x = match dtype {
        Some(d) => Bound::new(py, slf.astype(py, d, false)?)?.borrow(),
        None => slf,
    };
    if std {
        crate::functions::std_dev(py, x, axis, correction, keepdims)
    } else {
        crate::functions::var(py, x, axis, correction, keepdims)
    }
}
