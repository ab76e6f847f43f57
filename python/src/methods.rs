//! The NumPy- and JAX-style convenience methods of `Array` (`argmax`, `ravel`, `copy`,
//! `real`, `nbytes`, ...), written in Python over the module's functions (methods.py): each is
//! one call of the function of the same meaning, so there is nothing for them to get wrong.

use pyo3::prelude::*;
use pyo3::types::PyModule;

pub fn install(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let code = PyModule::from_code(
        py,
        pyo3::ffi::c_str!(include_str!("methods.py")),
        c"dlarray/methods.py",
        c"dlarray._methods",
    )?;
    code.getattr("install")?
        .call1((py.get_type::<crate::array::PyArray>(), m))?;
    Ok(())
}
