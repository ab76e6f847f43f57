//! The array API's inspection utilities: `finfo`, `iinfo` and `__array_namespace_info__()`.

use crate::PyDevice;
use crate::dtype_arg::dtype_arg;
use crate::to_py;
use dlarray::DType;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Machine limits of a floating dtype (`dlarray.finfo(dlarray.float32).eps`).
#[pyclass(frozen, name = "finfo", module = "dlarray")]
pub struct Finfo {
    #[pyo3(get)]
    bits: u32,
    #[pyo3(get)]
    eps: f64,
    #[pyo3(get)]
    max: f64,
    #[pyo3(get)]
    min: f64,
    #[pyo3(get)]
    smallest_normal: f64,
    #[pyo3(get)]
    dtype: Py<crate::dtype_arg::PyDType>,
}

/// Limits of an integer dtype.
#[pyclass(frozen, name = "iinfo", module = "dlarray")]
pub struct Iinfo {
    #[pyo3(get)]
    bits: u32,
    #[pyo3(get)]
    max: i128,
    #[pyo3(get)]
    min: i128,
    #[pyo3(get)]
    dtype: Py<crate::dtype_arg::PyDType>,
}

/// `type` may be a dtype or an array.
fn dtype_of(x: &Bound<'_, PyAny>) -> PyResult<DType> {
    if let Ok(a) = x.cast::<crate::array::PyArray>() {
        return Ok(a.get().0.dtype());
    }
    dtype_arg(x)
}

#[pyfunction]
pub fn finfo(py: Python<'_>, r#type: &Bound<'_, PyAny>) -> PyResult<Finfo> {
    let dt = dtype_of(r#type)?;
    let (bits, eps, max, tiny, name) = match dt.real_part() {
        DType::F16 => (16, 2f64.powi(-10), 65504.0, 2f64.powi(-14), "float16"),
        DType::BF16 => (
            16,
            2f64.powi(-7),
            3.3895313892515355e38,
            2f64.powi(-126),
            "bfloat16",
        ),
        DType::F32 => (
            32,
            f32::EPSILON as f64,
            f32::MAX as f64,
            f32::MIN_POSITIVE as f64,
            "float32",
        ),
        DType::F64 => (64, f64::EPSILON, f64::MAX, f64::MIN_POSITIVE, "float64"),
        other => {
            return Err(PyValueError::new_err(format!(
                "finfo needs a floating or complex dtype, not {other}"
            )));
        }
    };
    Ok(Finfo {
        bits,
        eps,
        max,
        min: -max,
        smallest_normal: tiny,
        dtype: crate::dtype_arg::dtype_obj(py, dtype_arg(&pyo3::types::PyString::new(py, name))?)?,
    })
}

#[pyfunction]
pub fn iinfo(py: Python<'_>, r#type: &Bound<'_, PyAny>) -> PyResult<Iinfo> {
    let dt = dtype_of(r#type)?;
    if !dt.is_integer() {
        return Err(PyValueError::new_err(format!(
            "iinfo needs an integer dtype, not {dt}"
        )));
    }
    let bits = (dt.size_in_bytes() * 8) as u32;
    let (min, max) = dt.int_range().unwrap_or_default();
    Ok(Iinfo {
        bits,
        max,
        min,
        dtype: crate::dtype_arg::dtype_obj(py, dt)?,
    })
}

/// What `dlarray.__array_namespace_info__()` returns.
#[pyclass(frozen, name = "Info", module = "dlarray")]
pub struct Info;

#[pymethods]
impl Info {
    fn capabilities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        // Both hold: `x[mask]`, `nonzero` and the `unique_*` functions return arrays whose
        // shapes depend on the data (they run eagerly; nothing is traced).
        d.set_item("boolean indexing", true)?;
        d.set_item("data-dependent shapes", true)?;
        d.set_item("max dimensions", 64)?;
        Ok(d)
    }
    fn default_device(&self) -> PyResult<PyDevice> {
        dlarray::default_device().map(PyDevice).map_err(to_py)
    }
    #[pyo3(signature = (*, device=None))]
    fn default_dtypes<'py>(
        &self,
        py: Python<'py>,
        device: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        // Per device, as the array API allows: 32-bit where the device has no 64-bit
        // kernels (wgpu), what creation functions give there without a dtype.
        let dev = crate::functions::target_device(device)?;
        let d = PyDict::new(py);
        for (name, want) in [
            ("real floating", DType::F64),
            ("complex floating", DType::Complex128),
            ("integral", DType::I64),
            ("indexing", DType::I64),
        ] {
            d.set_item(
                name,
                crate::dtype_arg::dtype_obj(py, dev.default_dtype(want))?,
            )?;
        }
        Ok(d)
    }
    /// A tuple, as the array API (2025.12) has it.
    fn devices<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
        let devs: Vec<PyDevice> = dlarray::devices()
            .map_err(to_py)?
            .into_iter()
            .map(PyDevice)
            .collect();
        pyo3::types::PyTuple::new(py, devs)
    }
    #[pyo3(signature = (*, device=None, kind=None))]
    fn dtypes<'py>(
        &self,
        py: Python<'py>,
        device: Option<&Bound<'py, PyAny>>,
        kind: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let _ = device;
        let kinds: Vec<String> = match kind {
            None => Vec::new(),
            Some(k) => match k.extract::<String>() {
                Ok(s) => vec![s],
                Err(_) => k.extract()?,
            },
        };
        let wanted = |dt: DType| {
            kinds.is_empty()
                || kinds.iter().any(|k| match k.as_str() {
                    "bool" => dt == DType::Bool,
                    "signed integer" => {
                        matches!(dt, DType::I8 | DType::I16 | DType::I32 | DType::I64)
                    }
                    "unsigned integer" => {
                        matches!(dt, DType::U8 | DType::U16 | DType::U32 | DType::U64)
                    }
                    "integral" => dt.is_integer(),
                    "real floating" => dt.is_float(),
                    "complex floating" => dt.is_complex(),
                    "numeric" => dt != DType::Bool,
                    _ => false,
                })
        };
        let d = PyDict::new(py);
        for dt in DType::ALL {
            if wanted(dt) {
                d.set_item(dt.name(), crate::dtype_arg::dtype_obj(py, dt)?)?;
            }
        }
        Ok(d)
    }
}

#[pyfunction]
pub fn __array_namespace_info__() -> Info {
    Info
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Finfo>()?;
    m.add_class::<Iinfo>()?;
    m.add_function(wrap_pyfunction!(finfo, m)?)?;
    m.add_function(wrap_pyfunction!(iinfo, m)?)?;
    m.add_function(wrap_pyfunction!(__array_namespace_info__, m)?)?;
    Ok(())
}
