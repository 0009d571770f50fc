//! `dlspan.examples`: functions written with dlspan's typed view arguments, the pass-through
//! pattern for extension authors to copy — `axpy` (a float32 kernel with the GIL released when
//! large), `det3` (static extents in the argument's type), `trace` (a compact layout required) —
//! and `Particles`, a record array whose members NumPy and PyTorch see as strided tensors.

use crate::particles::Particles;
use dlspan::python::{DETACH_ELEMENTS, PyView, PyViewMut};
use dlspan::view::Static;
use dlspan::{DlpackError, LayoutRight, LayoutStride};
use pyo3::prelude::*;

/// `y += alpha * x` for float32 vectors of any strides: the typed-argument pattern.
#[pyfunction]
fn axpy(py: Python<'_>, alpha: f32, x: PyView<'_, f32, 1>, mut y: PyViewMut<'_, f32, 1>) -> PyResult<()> {
    let x = x.view();
    let mut y = y.view_mut();
    let mut run = move || y.zip_with(&x, |y, &x| *y += alpha * x);
    if x.size() >= DETACH_ELEMENTS { py.detach(run) } else { run() }?;
    Ok(())
}

/// The determinant of a 3×3 float64 matrix: static extents in the argument's type.
#[pyfunction]
fn det3(m: PyView<'_, f64, 2, LayoutStride, (Static<3>, Static<3>)>) -> f64 {
    let m = m.view();
    m[[0, 0]] * (m[[1, 1]] * m[[2, 2]] - m[[1, 2]] * m[[2, 1]])
        - m[[0, 1]] * (m[[1, 0]] * m[[2, 2]] - m[[1, 2]] * m[[2, 0]])
        + m[[0, 2]] * (m[[1, 0]] * m[[2, 1]] - m[[1, 1]] * m[[2, 0]])
}

/// The trace of a square float64 matrix stored row-major (compact layout required).
#[pyfunction]
fn trace(m: PyView<'_, f64, 2, LayoutRight>) -> PyResult<f64> {
    let m = m.view();
    if m.extent(0) != m.extent(1) {
        return Err(DlpackError::ShapeMismatch { axis: 1, expected: m.extent(0), found: m.extent(1) }.into());
    }
    Ok((0..m.extent(0)).map(|i| m[[i, i]]).sum())
}

/// The module's docstring.
pub(crate) const DOC: &str = "Functions written with dlspan's typed view arguments, for extension authors to copy \
                              (axpy, det3, trace), and a record array (Particles).";

/// Fills the `dlspan.examples` module.
pub(crate) fn fill(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Particles>()?;
    m.add_function(wrap_pyfunction!(axpy, m)?)?;
    m.add_function(wrap_pyfunction!(det3, m)?)?;
    m.add_function(wrap_pyfunction!(trace, m)?)?;
    Ok(())
}
