//! Native operators from a PyO3 extension module (features `torch` and `python`): registered from
//! the module's init ([`register_module`]), with the shim's errors as Python exceptions.

use super::error::TorchError;
use super::op::{Registration, register};
use pyo3::exceptions::{PyImportError, PyRuntimeError};
use pyo3::prelude::*;

impl From<TorchError> for PyErr {
    /// `ImportError` when no supported libtorch is loaded (the extension cannot work with this
    /// torch, as an import that fails), `RuntimeError` otherwise (what PyTorch raises for a
    /// kernel's error).
    ///
    /// ```
    /// use dlspan::torch::TorchError;
    /// dlspan::pyo3::Python::initialize();
    /// dlspan::pyo3::Python::attach(|py| {
    ///     let error = dlspan::pyo3::PyErr::from(TorchError::TooOld { symbol: "torch_library_impl", oldest: (2, 10) });
    ///     assert!(error.is_instance_of::<dlspan::pyo3::exceptions::PyImportError>(py));
    ///     assert!(error.to_string().contains("torch 2.10 or newer"));
    /// });
    /// ```
    fn from(error: TorchError) -> Self {
        match error {
            TorchError::NotLoaded | TorchError::TooOld { .. } | TorchError::Unsupported { .. } => {
                PyImportError::new_err(error.to_string())
            }
            other => PyRuntimeError::new_err(other.to_string()),
        }
    }
}

/// Registers `operators` in `namespace` from a PyO3 extension module's init: imports `torch`
/// first (so that its libtorch is in the process whatever the user imported before), then
/// [`register`]s them, with their autograd ([rule T10](crate::rules#t10)). The operators are then
/// `torch.ops.<namespace>.<name>`, and the wheel works with every torch from
/// [`OLDEST`](super::OLDEST) on.
///
/// # Errors
///
/// `ImportError` for a torch older than [`OLDEST`](super::OLDEST) (or none: `import torch`
/// failed), `RuntimeError` for a refused registration.
///
/// ```no_run
/// use dlspan::kernel::Float;
/// use dlspan::pyo3::prelude::*;
///
/// dlspan::elementwise! {
///     #[torch("my_ext::twice")]
///     fn twice<T: Float>(x: &T, out: &mut T) {
///         *out = *x + *x;
///     }
/// }
///
/// #[pymodule(crate = "dlspan::pyo3")]
/// fn my_ext(m: &Bound<'_, PyModule>) -> PyResult<()> {
///     dlspan::torch::register_module(m.py(), "my_ext", &[dlspan::torch::op::<twice>()])
/// }
/// ```
pub fn register_module(py: Python<'_>, namespace: &str, operators: &[Registration]) -> PyResult<()> {
    py.import("torch")?;
    register(namespace, operators)?;
    Ok(())
}
