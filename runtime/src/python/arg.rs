//! Typed view arguments for `#[pyfunction]`s: [`PyView`] (shared) and [`PyViewMut`] (mutable)
//! take any tensor Python passes — NumPy arrays, PyTorch tensors, JAX arrays, `dlspan.Tensor`,
//! any DLPack producer — as a checked view of element type `T`, rank `R`, layout `L` and extents
//! `E`, with no copy.
//!
//! ```
//! use dlspan::python::{PyView, PyViewMut};
//! use pyo3::prelude::*;
//!
//! /// y += alpha * x, for any float32 vectors (strided, reversed, from any framework).
//! #[pyfunction]
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
//! Extraction errors are the exceptions of [`to_pyerr`](super::to_pyerr), with PyO3's note
//! naming the argument (`while processing 'y'`).

use super::borrow::{Borrow, Footprint, register};
use super::consumer::{ImportRequest, from_dlpack};
use super::dialect::{Dialect, dialect};
use super::error::{ExchangeError, to_pyerr};
use super::numpy;
use super::tensor::Tensor;
use crate::convert::ImportOptions;
use crate::dtype::DlElement;
use crate::error::DlpackError;
use crate::ffi::{DLDataTypeCode, DLTensor};
use crate::owned::ManagedTensor;
use crate::space::{Host, MemorySpace};
use crate::view::{Dims, Extents, Layout, LayoutStrideRelaxed, Mdspan, MdspanMut};
use pyo3::intern;
use pyo3::prelude::*;

/// What keeps a view argument's memory alive.
pub(crate) enum Source<'py> {
    /// The Python object (its memory lives as long as it does).
    Object(#[allow(dead_code)] Bound<'py, PyAny>),
    /// A managed tensor imported through `__dlpack__`.
    Managed(#[allow(dead_code)] ManagedTensor),
}

/// Where an argument's tensor was found.
pub(crate) struct Located<'py> {
    pub(crate) tensor: DLTensor,
    pub(crate) options: ImportOptions,
    pub(crate) read_only: bool,
    pub(crate) source: Source<'py>,
}

/// Finds `object`'s tensor in its type's dialect. For NumPy arrays, `strides` receives the strides
/// in elements (the tensor points into it); `rank`, when known, is the rank the caller expects.
pub(crate) fn locate<'py>(
    object: &Bound<'py, PyAny>,
    mutable: bool,
    strides: &mut [i64],
    rank: Option<usize>,
) -> PyResult<Located<'py>> {
    let py = object.py();
    let found = |tensor: DLTensor, options: ImportOptions, read_only: bool| Located {
        tensor,
        options,
        read_only,
        source: Source::Object(object.clone()),
    };
    match dialect(object)? {
        Dialect::Tensor => {
            // SAFETY: the dialect of exactly `dlspan.Tensor`'s type.
            let tensor = unsafe { object.cast_unchecked::<Tensor>() }.get();
            let options = ImportOptions { subbyte_padded: tensor.meta.subbyte_padded, ..ImportOptions::CURRENT };
            return Ok(found(tensor.dl_tensor(), options, tensor.is_read_only()));
        }
        Dialect::Numpy => {
            // SAFETY: the dialect of exactly `numpy.ndarray`'s type; attached.
            if let Some(array) = unsafe { numpy::read(object.as_ptr(), strides, rank) } {
                return Ok(found(array.tensor, ImportOptions::CURRENT, !array.writeable));
            }
        }
        Dialect::Exchange { api, torch } => {
            let mut tensor = DLTensor::default();
            let fill = api.table().dltensor_from_py_object_no_sync.expect("checked by the dialect");
            // SAFETY: the table was found on this object's exact type (the exchange API's
            // requirement), the GIL is held, and `tensor` is a writable struct on our stack.
            if unsafe { fill(object.as_ptr().cast(), &mut tensor) } != 0 {
                return Err(PyErr::fetch(py));
            }
            if torch {
                check_torch(object, &tensor, mutable)?;
            }
            return Ok(found(tensor, ImportOptions::CURRENT, false));
        }
        Dialect::Protocol => {}
    }
    let managed = from_dlpack(object, ImportRequest::default())?;
    Ok(Located {
        tensor: *managed.dl_tensor(),
        options: managed.import_options(),
        read_only: managed.is_read_only(),
        source: Source::Managed(managed),
    })
}

/// PyTorch's exchange call hands out what `__dlpack__` would refuse: lazy conjugate / negation
/// views (whose memory holds the values before the operation) are refused; tensors that require
/// grad are read as detached, and refused as mutable views while gradients are recorded.
#[cold]
fn check_torch_slow(object: &Bound<'_, PyAny>, tensor: &DLTensor, mutable: bool) -> PyResult<()> {
    let py = object.py();
    if tensor.dtype.code == DLDataTypeCode::kDLComplex.0 && object.call_method0(intern!(py, "is_conj"))?.is_truthy()? {
        return Err(ExchangeError::ConjugateBit.into());
    }
    if std::env::var_os("DLSPAN_NEG").is_some() && object.call_method0(intern!(py, "is_neg"))?.is_truthy()? {
        return Err(ExchangeError::NegativeBit.into());
    }
    if mutable && object.getattr(intern!(py, "requires_grad"))?.is_truthy()? {
        let torch = py.import(intern!(py, "torch"))?;
        if torch.call_method0(intern!(py, "is_grad_enabled"))?.is_truthy()? {
            return Err(ExchangeError::RequiresGrad.into());
        }
    }
    Ok(())
}

#[inline]
fn check_torch(object: &Bound<'_, PyAny>, tensor: &DLTensor, mutable: bool) -> PyResult<()> {
    check_torch_slow(object, tensor, mutable)
}

/// Validates a located tensor into a view and registers its memory.
fn footprint<T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace>(
    view: &Mdspan<'_, T, R, E, L, S>,
) -> Footprint {
    let mapping = view.mapping();
    let device = view.device();
    Footprint::strided(
        (device.device_type.0, device.device_id),
        view.data_handle() as usize,
        mapping.offset(),
        mapping.required_span_size(),
        &mapping.extents(),
        &mapping.strides(),
        core::mem::size_of::<T>(),
    )
}

/// A shared view argument: a tensor of element type `T`, rank `R`, layout `L` (by default any
/// strides: broadcast, reversed, transposed) and extents `E` (by default all dynamic), in memory
/// space `S` (by default the host).
///
/// Its memory is registered with the borrow registry while it lives: a mutable view argument of
/// overlapping memory (the same tensor, a NumPy view of it, a torch tensor sharing it) is refused.
///
/// ```
/// use dlspan::{LayoutRight, python::PyView};
/// use pyo3::prelude::*;
/// /// Sum of a contiguous float64 matrix.
/// #[pyfunction]
/// fn total(m: PyView<'_, f64, 2, LayoutRight>) -> f64 {
///     m.view().sum()
/// }
/// # Python::initialize();
/// # Python::attach(|py| {
/// #     let m = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![0.5f64; 6], [2, 3])?)?;
/// #     assert_eq!(wrap_pyfunction!(total, py)?.call1((m,))?.extract::<f64>()?, 3.0);
/// #     Ok::<_, PyErr>(())
/// # })?;
/// # Ok::<(), PyErr>(())
/// ```
pub struct PyView<'py, T, const R: usize, L: Layout = LayoutStrideRelaxed, E: Extents<R> = Dims<R>, S: MemorySpace = Host>
{
    view: Mdspan<'py, T, R, E, L, S>,
    _borrow: Option<Borrow<'py>>,
    _source: Source<'py>,
}

/// A mutable view argument: as [`PyView`], for a tensor the function writes. Refused for read-only
/// memory (`READ_ONLY` exports, non-writeable NumPy arrays), for strides that make two indices
/// share an element, for PyTorch tensors that require grad while gradients are recorded, and when
/// its memory overlaps any other view argument alive at the same time.
///
/// ```
/// use dlspan::python::PyViewMut;
/// use pyo3::prelude::*;
/// /// Fills a vector with its indices.
/// #[pyfunction]
/// fn iota(mut v: PyViewMut<'_, i64, 1>) {
///     for (i, x) in v.view_mut().iter_mut().enumerate() {
///         *x = i as i64;
///     }
/// }
/// # Python::initialize();
/// # Python::attach(|py| {
/// #     let v = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![0i64; 3], [3])?)?;
/// #     wrap_pyfunction!(iota, py)?.call1((&v,))?;
/// #     let values = pyo3::types::PyMemoryView::from(v.as_any())?.call_method0("tolist")?;
/// #     assert_eq!(values.extract::<Vec<i64>>()?, [0, 1, 2]);
/// #     Ok::<_, PyErr>(())
/// # })?;
/// # Ok::<(), PyErr>(())
/// ```
pub struct PyViewMut<
    'py,
    T,
    const R: usize,
    L: Layout = LayoutStrideRelaxed,
    E: Extents<R> = Dims<R>,
    S: MemorySpace = Host,
> {
    view: MdspanMut<'py, T, R, E, L, S>,
    _borrow: Option<Borrow<'py>>,
    _source: Source<'py>,
}

impl<'py, T: DlElement, const R: usize, L: Layout, E: Extents<R>, S: MemorySpace> PyView<'py, T, R, L, E, S> {
    /// The view, borrowing the argument (so it cannot outlive the memory it keeps alive).
    ///
    /// ```
    /// # use dlspan::python::PyView;
    /// # use pyo3::prelude::*;
    /// #[pyfunction]
    /// fn first(x: PyView<'_, u8, 1>) -> Option<u8> {
    ///     x.view().get([0]).copied()
    /// }
    /// # Python::initialize();
    /// # Python::attach(|py| {
    /// #     let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![7u8], [1])?)?;
    /// #     assert_eq!(wrap_pyfunction!(first, py)?.call1((x,))?.extract::<u8>()?, 7);
    /// #     Ok::<_, PyErr>(())
    /// # })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    #[inline]
    pub fn view(&self) -> Mdspan<'_, T, R, E, L, S> {
        self.view
    }
}

impl<'py, T: DlElement, const R: usize, L: Layout, E: Extents<R>, S: MemorySpace> PyViewMut<'py, T, R, L, E, S> {
    /// A shared view of the argument.
    ///
    /// ```
    /// # use dlspan::python::PyViewMut;
    /// # use pyo3::prelude::*;
    /// #[pyfunction]
    /// fn length(x: PyViewMut<'_, f32, 1>) -> usize {
    ///     x.view().size()
    /// }
    /// # Python::initialize();
    /// # Python::attach(|py| {
    /// #     let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![0f32; 5], [5])?)?;
    /// #     assert_eq!(wrap_pyfunction!(length, py)?.call1((x,))?.extract::<usize>()?, 5);
    /// #     Ok::<_, PyErr>(())
    /// # })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    #[inline]
    pub fn view(&self) -> Mdspan<'_, T, R, E, L, S> {
        self.view.as_view()
    }

    /// The mutable view, borrowing the argument.
    ///
    /// ```
    /// # use dlspan::python::PyViewMut;
    /// # use pyo3::prelude::*;
    /// #[pyfunction]
    /// fn zero(mut x: PyViewMut<'_, f32, 2>) {
    ///     x.view_mut().iter_mut().for_each(|v| *v = 0.0);
    /// }
    /// # Python::initialize();
    /// # Python::attach(|py| {
    /// #     let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![1f32; 4], [2, 2])?)?;
    /// #     wrap_pyfunction!(zero, py)?.call1((&x,))?;
    /// #     let values = pyo3::types::PyMemoryView::from(x.as_any())?.call_method0("tolist")?;
    /// #     assert_eq!(values.extract::<Vec<Vec<f32>>>()?, [[0.0; 2]; 2]);
    /// #     Ok::<_, PyErr>(())
    /// # })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    #[inline]
    pub fn view_mut(&mut self) -> MdspanMut<'_, T, R, E, L, S> {
        self.view.reborrow()
    }
}

impl<'a, 'py, T: DlElement, const R: usize, L: Layout, E: Extents<R>, S: MemorySpace> FromPyObject<'a, 'py>
    for PyView<'py, T, R, L, E, S>
{
    type Error = PyErr;

    #[inline]
    fn extract(object: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let object = object.to_owned();
        let mut strides = [0i64; R];
        let located = locate(&object, false, &mut strides, Some(R))?;
        // SAFETY: the view copies the extents and strides out of `located.tensor` and keeps only
        // its data pointer, whose memory `located.source` (kept in the argument) keeps alive; the
        // tensor's producer guarantees its arrays and elements. The view is handed out only
        // through borrows of the argument.
        let tensor: &'py DLTensor = unsafe { &*(&located.tensor as *const DLTensor) };
        // SAFETY: as above; nothing writes the memory through dlspan while the view lives (the
        // borrow registry refuses overlapping mutable views).
        let view = unsafe { Mdspan::<'py, T, R, E, L, S>::from_dltensor_with(tensor, located.options) }
            .map_err(to_pyerr)?;
        let borrow = if view.is_empty() { None } else { Some(register(object.py(), footprint(&view), false)?) };
        Ok(Self { view, _borrow: borrow, _source: located.source })
    }
}

impl<'a, 'py, T: DlElement, const R: usize, L: Layout, E: Extents<R>, S: MemorySpace> FromPyObject<'a, 'py>
    for PyViewMut<'py, T, R, L, E, S>
{
    type Error = PyErr;

    #[inline]
    fn extract(object: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let object = object.to_owned();
        let mut strides = [0i64; R];
        let located = locate(&object, true, &mut strides, Some(R))?;
        if located.read_only {
            return Err(to_pyerr(DlpackError::ReadOnly));
        }
        // SAFETY: as for `PyView`.
        let tensor: &'py DLTensor = unsafe { &*(&located.tensor as *const DLTensor) };
        // SAFETY: as for `PyView`, and the memory is writable (not read-only, checked above) and
        // reached by no other dlspan view while this one lives (registered below, before use).
        let view = unsafe { MdspanMut::<'py, T, R, E, L, S>::from_dltensor_with(tensor, located.options) }
            .map_err(to_pyerr)?;
        let borrow = if view.is_empty() {
            None
        } else {
            Some(register(object.py(), footprint(&view.as_view()), true)?)
        };
        Ok(Self { view, _borrow: borrow, _source: located.source })
    }
}
