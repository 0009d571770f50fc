use dlspan::pyo3::prelude::*;
use dlspan::python::{InArgument, PyView, PyViewMut};

/// y += alpha * x, for float32 vectors from any framework (strided, reversed: no copy).
#[pyfunction(crate = "dlspan::pyo3")]
fn axpy(py: Python<'_>, alpha: f32, x: PyView<'_, f32, 1>, mut y: PyViewMut<'_, f32, 1>) -> PyResult<()> {
    let (x, mut y) = (x.view(), y.view_mut());
    // The views are plain Rust values: the loop runs with the GIL released. An `x` of another
    // length is a ValueError naming `x` (`in_argument`).
    py.detach(|| y.zip_with(&x, |y, &x| *y += alpha * x)).in_argument("x")
}

/// The sum of each row of a float32 matrix.
#[pyfunction(crate = "dlspan::pyo3")]
fn row_sums(m: PyView<'_, f32, 2>) -> Vec<f32> {
    m.view().outer_iter().map(|row| row.sum()).collect()
}

/// Kernels over NumPy, PyTorch and JAX arrays, written in Rust with dlspan.
#[pymodule(crate = "dlspan::pyo3")]
mod my_kernels {
    #[pymodule_export]
    use super::{axpy, row_sums};
}
