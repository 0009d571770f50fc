//! `dlspan_test_extension`: a Python extension built on the `dlspan` crate as any extension author
//! builds one — a shared library of its own, separate from the `dlspan` package's — for the tests of
//! rule Y18 (one `dlspan.Tensor` class and one borrow registry per process) and Y19 (results in the
//! caller's framework): `python/tests/test_extension.py`; and native PyTorch operators registered
//! from its init (`cube`, with its gradient): `python/tests/test_native_operator.py`.

use dlspan::ManagedTensor;
use dlspan::python::{Output, PyDynView, PyView, PyViewMut};
use pyo3::prelude::*;

/// Holds a view of `x` while `callback()` runs Python code (which may call the `dlspan` package or
/// this extension), then sums the view.
#[pyfunction]
fn hold_during(x: PyView<'_, f64, 1>, callback: &Bound<'_, PyAny>) -> PyResult<f64> {
    let view = x.view();
    callback.call0()?;
    Ok(view.sum())
}

/// Holds a mutable view of `x` while `callback()` runs Python code, then fills it with `value`.
#[pyfunction]
fn fill_during(mut x: PyViewMut<'_, f64, 1>, value: f64, callback: &Bound<'_, PyAny>) -> PyResult<()> {
    callback.call0()?;
    x.view_mut().for_each_unordered(|v| *v = value);
    Ok(())
}

/// `x[:] = value`.
#[pyfunction]
fn fill(mut x: PyViewMut<'_, f64, 1>, value: f64) {
    x.view_mut().for_each_unordered(|v| *v = value);
}

/// `2 * x` in the caller's framework, and the address of the result's first element as the
/// extension wrote it (zero-copy: the framework's array starts there).
#[pyfunction]
fn double<'py>(py: Python<'py>, x: PyView<'py, f64, 1>) -> PyResult<(Bound<'py, PyAny>, usize)> {
    let mut out = Output::like(py, &x, dlspan::dtype::dtype_of::<f64>(), &[x.view().size()])?;
    let address = {
        let mut view = out.view_mut::<f64, 1>()?;
        view.zip_with(&x.view(), |o, &x| *o = 2.0 * x)?;
        view.data_handle() as usize
    };
    Ok((out.finish()?, address))
}

/// A `dlspan.Tensor` holding `values`, made by this extension.
#[pyfunction]
fn tensor(py: Python<'_>, values: Vec<f64>) -> PyResult<Bound<'_, PyAny>> {
    let n = values.len();
    dlspan::python::into_tensor(py, ManagedTensor::from_owner(values, [n])?)
}

/// How this extension reads `x`: its element width in bits (4 for packed FP4, 8 for padded) and
/// whether it is read-only.
#[pyfunction]
fn describe(x: PyDynView<'_>) -> PyResult<(usize, bool)> {
    Ok((x.view()?.element_bits(), x.is_read_only()))
}

/// The view arguments alive in the registry this extension uses.
#[pyfunction]
fn live_borrows(py: Python<'_>) -> usize {
    dlspan::python::live_borrows(py)
}

dlspan::elementwise! {
    /// `x³`, a native PyTorch operator registered from this module's init.
    #[torch("dlspan_test_extension::cube", backward = cube_backward)]
    fn cube<T: dlspan::kernel::Float>(x: &T, out: &mut T) {
        *out = *x * *x * *x;
    }
}

dlspan::elementwise! {
    /// The gradient of `cube`.
    #[torch("dlspan_test_extension::cube_backward")]
    fn cube_backward<T: dlspan::kernel::Float>(x: &T, grad: &T, grad_x: &mut T) {
        *grad_x = 3.0 * *x * *x * *grad;
    }
}

/// The module.
#[pymodule]
fn dlspan_test_extension(m: &Bound<'_, PyModule>) -> PyResult<()> {
    dlspan::torch::register_module(
        m.py(),
        "dlspan_test_extension",
        &[dlspan::torch::op::<cube>(), dlspan::torch::op::<cube_backward>()],
    )?;
    m.add_function(wrap_pyfunction!(hold_during, m)?)?;
    m.add_function(wrap_pyfunction!(fill_during, m)?)?;
    m.add_function(wrap_pyfunction!(fill, m)?)?;
    m.add_function(wrap_pyfunction!(double, m)?)?;
    m.add_function(wrap_pyfunction!(tensor, m)?)?;
    m.add_function(wrap_pyfunction!(describe, m)?)?;
    m.add_function(wrap_pyfunction!(live_borrows, m)?)?;
    Ok(())
}
