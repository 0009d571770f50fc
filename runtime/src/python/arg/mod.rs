//! View arguments for `#[pyfunction]`s. Typed ([`PyView`] shared, [`PyViewMut`] mutable)
//! take any tensor Python passes — NumPy arrays, PyTorch tensors, JAX arrays, `dlspan.Tensor`,
//! any DLPack producer — as a checked view of element type `T`, rank `R`, layout `L` and extents
//! `E`, with no copy; dynamic ([`PyDynView`], [`PyDynViewMut`]) take a tensor whose data type and
//! rank are known only at run time, as a dynamic view.
//!
//! - `locate`: where an argument's tensor is, by its type's dialect (no capsule for NumPy, PyTorch
//!   and `dlspan.Tensor`), and what keeps it alive;
//! - `typed`: the typed arguments;
//! - `dynamic`: the dynamic arguments.
//!
//! ```
//! use dlspan::python::{PyView, PyViewMut};
//! use dlspan::pyo3::prelude::*;
//!
//! /// y += alpha * x, for any float32 vectors (strided, reversed, from any framework).
//! #[pyfunction(crate = "dlspan::pyo3")]
//! fn axpy(py: Python<'_>, alpha: f32, x: PyView<'_, f32, 1>, mut y: PyViewMut<'_, f32, 1>) {
//!     let x = x.view();
//!     let mut y = y.view_mut();
//!     // The views are plain Rust values: the kernel may run with the GIL released.
//!     py.detach(|| y.zip_with(&x, |y, &x| *y += alpha * x).unwrap());
//! }
//! # Python::initialize();
//! # Python::attach(|py| {
//! #     let f = wrap_pyfunction!(axpy, py)?;
//! #     let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![1.0f32, 2.0], [2])?)?;
//! #     let y = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![10.0f32; 2], [2])?)?;
//! #     f.call1((2.0, &x, &y))?;
//! #     let values = pyo3::types::PyMemoryView::from(y.as_any())?.call_method0("tolist")?;
//! #     assert_eq!(values.extract::<Vec<f32>>()?, [12.0, 14.0]);
//! #     // The same tensor as input and output is refused: the views would alias.
//! #     assert!(f.call1((2.0, &y, &y)).is_err());
//! #     Ok::<_, PyErr>(())
//! # })?;
//! # Ok::<(), PyErr>(())
//! ```
//!
//! Extraction errors are the exceptions `PyErr::from` gives every
//! [`DlpackError`](crate::DlpackError), with PyO3's note
//! naming the argument (`while processing 'y'`).

mod dynamic;
mod locate;
mod typed;

pub use dynamic::{PyDynView, PyDynViewMut};
pub use typed::{PyView, PyViewMut};
