//! Peers of the Python benchmarks.
use pyo3::prelude::*;

/// The module.
#[pymodule(name = "dlspan_bench_peers")]
fn module(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}
