//! The `dlspan` Python module.
use pyo3::prelude::*;

/// The `dlspan` module.
#[pymodule(name = "dlspan")]
fn module(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}
