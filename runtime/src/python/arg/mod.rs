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
//! #     let values = dlspan::pyo3::types::PyMemoryView::from(y.as_any())?.call_method0("tolist")?;
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
//! naming the argument (`while processing 'y'`); errors raised later, in the function's body, take
//! the same note through [`InArgument`](crate::python::InArgument), and
//! [`extract_argument`](crate::python::extract_argument) names an argument in the borrow conflicts
//! it takes part in (PyO3 names only the argument it refuses).

mod dynamic;
mod locate;
mod typed;

pub use dynamic::{OffHost, OffHostMut, PyDynView, PyDynViewMut};
pub use typed::{PyDeviceView, PyDeviceViewMut, PyManagedView, PyManagedViewMut, PyView, PyViewMut};

use super::error::InArgument;
use pyo3::prelude::*;

/// The view arguments [`extract_argument`] extracts by name: [`PyView`], [`PyViewMut`],
/// [`PyDynView`], [`PyDynViewMut`] (sealed).
///
/// ```
/// use dlspan::python::{NamedArgument, PyView, extract_argument};
/// use dlspan::pyo3::prelude::*;
///
/// /// Extracts two arguments of one type by name.
/// fn both<'py, T: NamedArgument<'py>>(a: &Bound<'py, PyAny>, b: &Bound<'py, PyAny>) -> PyResult<(T, T)> {
///     Ok((extract_argument(a, "a")?, extract_argument(b, "b")?))
/// }
/// # Python::initialize();
/// Python::attach(|py| {
///     let t = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![1f64; 2], [2])?)?;
///     let (a, b): (PyView<'_, f64, 1>, PyView<'_, f64, 1>) = both(t.as_any(), t.as_any())?; // shared: fine
///     assert_eq!(a.view().sum() + b.view().sum(), 4.0);
///     Ok::<_, PyErr>(())
/// })?;
/// # Ok::<(), PyErr>(())
/// ```
pub trait NamedArgument<'py>: Sized + Sealed {
    /// Extracts the argument as `FromPyObject` does, registering its borrow under `name`.
    #[doc(hidden)]
    fn extract_named(object: Bound<'py, PyAny>, name: Option<&'static str>) -> PyResult<Self>;
}

/// Seals [`NamedArgument`]: the registry's names come from dlspan's own view arguments.
pub trait Sealed {}

/// Extracts the view argument `name` of a `#[pyfunction]` from `object`, as PyO3 extracts a
/// parameter of that type — errors carry PyO3's note `while processing 'name'` — and registers its
/// borrow under the name, so that a borrow conflict names this argument whichever side it is on.
///
/// PyO3 gives an argument its name only when its extraction fails: a conflict met while
/// extracting `out` names `out`, but the argument holding the memory (extracted before it, without
/// error) is only described, by its type, unless it was extracted here. Take the arguments as
/// `&Bound<PyAny>` and extract them with this function to have both named; it costs nothing more
/// than PyO3's extraction.
///
/// ```
/// use dlspan::python::{PyDynView, PyDynViewMut, extract_argument};
/// use dlspan::pyo3::prelude::*;
///
/// #[pyfunction(crate = "dlspan::pyo3")]
/// fn copy(x: &Bound<'_, PyAny>, out: &Bound<'_, PyAny>) -> PyResult<()> {
///     let x: PyDynView<'_> = extract_argument(x, "x")?;
///     let out: PyDynViewMut<'_> = extract_argument(out, "out")?;
///     # let _ = (x, out);
///     Ok(())
/// }
/// # Python::initialize();
/// Python::attach(|py| {
///     let t = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![0f32; 4], [4])?)?;
///     let err = wrap_pyfunction!(copy, py)?.call1((&t, &t)).unwrap_err();
///     let message = err.value(py).to_string();
///     assert!(message.contains("argument 'out'") && message.contains("argument 'x'"), "{message}");
///     Ok::<_, PyErr>(())
/// })?;
/// # Ok::<(), PyErr>(())
/// ```
#[inline]
pub fn extract_argument<'py, T: NamedArgument<'py>>(object: &Bound<'py, PyAny>, name: &'static str) -> PyResult<T> {
    T::extract_named(object.clone(), Some(name)).in_argument(name)
}
