//! `dlspan.diagnostics`: what tests and debugging sessions ask of dlspan's Python layer — the view
//! arguments alive — and the test hook that holds a view while Python code runs.

use dlspan::python::PyView;
use pyo3::prelude::*;

/// The number of view arguments alive (borrows registered): 0 between calls.
#[pyfunction]
fn live_borrows(py: Python<'_>) -> usize {
    dlspan::python::live_borrows(py)
}

/// Test hook (not API): holds a view of `x` while `callback()` runs Python code, then sums the view
/// — what an extension that calls back into Python does. The view's memory must stay alive.
#[pyfunction]
fn _sum_during(x: PyView<'_, f64, 1>, callback: &Bound<'_, PyAny>) -> PyResult<f64> {
    let view = x.view();
    callback.call0()?;
    Ok(view.sum())
}

/// The module's docstring.
pub(crate) const DOC: &str = "What tests and debugging sessions ask of dlspan's Python layer (live_borrows).";

/// Fills the `dlspan.diagnostics` module.
pub(crate) fn fill(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(live_borrows, m)?)?;
    m.add_function(wrap_pyfunction!(_sum_during, m)?)?;
    Ok(())
}
