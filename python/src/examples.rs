//! `dlspan.examples`: functions written with dlspan's typed view arguments, the pass-through
//! pattern for extension authors to copy — `axpy` (a float32 kernel with the GIL released when
//! large), `det3` (static extents in the argument's type), `trace` (a compact layout required) —
//! and `Particles`, a record array whose members NumPy and PyTorch see as strided tensors.

use crate::particles::Particles;
use dlspan::python::{DETACH_ELEMENTS, InArgument, PyView, PyViewMut};
use dlspan::view::Static;
use dlspan::{LayoutRight, LayoutStride};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// ``y += alpha * x`` for float32 vectors, in place: the typed-argument pattern.
///
/// Parameters
/// ----------
/// alpha : float
/// x : array
///     A one-axis float32 array of any framework and strides.
/// y : array
///     A writable one-axis float32 array of the same length, sharing no memory with ``x``.
///
/// Raises
/// ------
/// TypeError
///     An array is not float32, or not one-axis.
/// ValueError
///     The lengths differ, ``y`` is read-only or overlaps ``x``.
#[pyfunction]
fn axpy(py: Python<'_>, alpha: f32, x: PyView<'_, f32, 1>, mut y: PyViewMut<'_, f32, 1>) -> PyResult<()> {
    let x = x.view();
    let mut y = y.view_mut();
    let mut run = move || y.zip_with(&x, |y, &x| *y += alpha * x);
    // A shape mismatch is `x`'s: `y` is the array updated.
    if x.size() >= DETACH_ELEMENTS { py.detach(run) } else { run() }.in_argument("x")
}

/// The determinant of a 3x3 float64 matrix (its shape is part of the argument's type).
///
/// Parameters
/// ----------
/// m : array
///     A 3x3 float64 array with positive strides.
///
/// Returns
/// -------
/// float
///
/// Raises
/// ------
/// ValueError
///     ``m`` is not 3x3, or has a zero or negative stride.
#[pyfunction]
fn det3(m: PyView<'_, f64, 2, LayoutStride, (Static<3>, Static<3>)>) -> f64 {
    let m = m.view();
    m[[0, 0]] * (m[[1, 1]] * m[[2, 2]] - m[[1, 2]] * m[[2, 1]])
        - m[[0, 1]] * (m[[1, 0]] * m[[2, 2]] - m[[1, 2]] * m[[2, 0]])
        + m[[0, 2]] * (m[[1, 0]] * m[[2, 1]] - m[[1, 1]] * m[[2, 0]])
}

/// The trace of a square float64 matrix stored row-major (C-contiguous: the argument's type says so).
///
/// Parameters
/// ----------
/// m : array
///     A square, C-contiguous float64 array.
///
/// Returns
/// -------
/// float
///
/// Raises
/// ------
/// ValueError
///     ``m`` is not square, or not C-contiguous.
#[pyfunction]
fn trace(py: Python<'_>, m: PyView<'_, f64, 2, LayoutRight>) -> PyResult<f64> {
    let m = m.view();
    if m.extent(0) != m.extent(1) {
        let err =
            PyValueError::new_err(format!("expected a square matrix, got shape ({}, {})", m.extent(0), m.extent(1)));
        let _ = err.value(py).setattr("kind", "ShapeMismatch");
        return Err(err).in_argument("m");
    }
    Ok((0..m.extent(0)).map(|i| m[[i, i]]).sum())
}

/// The module's docstring.
pub(crate) const DOC: &str = "Functions written with dlspan's typed view arguments, for extension authors to \
                              copy: axpy (a float32 kernel), det3 (a 3x3 shape in the argument's type), trace \
                              (a C-contiguous layout required); and Particles, a record array whose members \
                              NumPy and PyTorch see as strided arrays.";

/// Fills the `dlspan.examples` module.
pub(crate) fn fill(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Particles>()?;
    m.add_function(wrap_pyfunction!(axpy, m)?)?;
    m.add_function(wrap_pyfunction!(det3, m)?)?;
    m.add_function(wrap_pyfunction!(trace, m)?)?;
    Ok(())
}
