//! `dlspan.diagnostics`: what tests and debugging sessions ask of dlspan's Python layer — the view
//! arguments alive — and the test hook that holds a view while Python code runs.

use dlspan::python::PyView;
use pyo3::prelude::*;

/// The number of view arguments alive (the borrows dlspan's registry holds).
///
/// Returns
/// -------
/// int
///     0 between calls: every call releases its arguments, whether it returns or raises.
#[pyfunction]
fn live_borrows(py: Python<'_>) -> usize {
    dlspan::python::live_borrows(py)
}

/// Test hook, not API: holds a view of ``x`` (one-axis float64) while ``callback()`` runs, then
/// returns the view's sum, as an extension that calls back into Python does.
#[pyfunction]
fn _sum_during(x: PyView<'_, f64, 1>, callback: &Bound<'_, PyAny>) -> PyResult<f64> {
    let view = x.view();
    callback.call0()?;
    Ok(view.sum())
}

/// The module's docstring.
pub(crate) const DOC: &str = "What tests and debugging sessions ask of dlspan: live_borrows, the number of view \
                              arguments alive.";

/// Fills the `dlspan.diagnostics` module.
pub(crate) fn fill(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(live_borrows, m)?)?;
    m.add_function(wrap_pyfunction!(_sum_during, m)?)?;
    Ok(())
}
