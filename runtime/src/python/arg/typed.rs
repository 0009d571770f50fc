//! Typed view arguments: [`PyView`] and [`PyViewMut`], checked against their element type, rank,
//! layout, extents and memory space by every rule of the typed import, and registered with the
//! borrow registry while they live.

use super::locate::{Source, host_ready, locate};
use super::{NamedArgument, Sealed};
use crate::dtype::DlElement;
use crate::error::DlpackError;
use crate::ffi::DLTensor;
use crate::python::borrow::{Borrow, footprint, register};
use crate::python::dialect::Framework;
use crate::python::stream::CallerStream;
use crate::space::{Device, Host, Managed, MemorySpace};
use crate::view::{Dims, Extents, Layout, LayoutStrideRelaxed, Mdspan, MdspanMut};
use pyo3::prelude::*;

/// A shared view argument: a tensor of element type `T`, rank `R`, layout `L` (by default any
/// strides: broadcast, reversed, transposed) and extents `E` (by default all dynamic), in memory
/// space `S` (by default the host).
///
/// Its memory is registered with the borrow registry while it lives: a mutable view argument of
/// overlapping memory (the same tensor, a NumPy view of it, a torch tensor sharing it) is refused.
///
/// An extension takes PyO3 from dlspan ([`dlspan::pyo3`](crate::pyo3): no second PyO3 to
/// mismatch) and names it in PyO3's macros, `crate = "dlspan::pyo3"`, as below.
///
/// The element type is the array's: an `(H, W, 3)` `float32` image is a `PyView<f32, 3>`, whose
/// [`group_lanes`](crate::Mdspan::group_lanes) gives `H×W` pixels of a `#[derive(DlElement)]`
/// struct of three `f32`, zero-copy.
///
/// ```
/// use dlspan::{LayoutRight, python::PyView};
/// use dlspan::pyo3::prelude::*;
/// /// Sum of a contiguous float64 matrix.
/// #[pyfunction(crate = "dlspan::pyo3")]
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
pub struct PyView<
    'py,
    T,
    const R: usize,
    L: Layout = LayoutStrideRelaxed,
    E: Extents<R> = Dims<R>,
    S: MemorySpace = Host,
> {
    view: Mdspan<'py, T, R, E, L, S>,
    _borrow: Option<Borrow<'py>>,
    _source: Source<'py>,
    pub(crate) framework: Framework,
    pub(crate) stream: Option<CallerStream>,
}

/// A mutable view argument: as [`PyView`], for a tensor the function writes. Refused for read-only
/// memory (`READ_ONLY` exports, non-writeable NumPy arrays), for strides that make two indices
/// share an element, for PyTorch tensors that require grad while gradients are recorded, and when
/// its memory overlaps any other view argument alive at the same time.
///
/// ```
/// use dlspan::python::PyViewMut;
/// use dlspan::pyo3::prelude::*;
/// /// Fills a vector with its indices.
/// #[pyfunction(crate = "dlspan::pyo3")]
/// fn iota(mut v: PyViewMut<'_, i64, 1>) {
///     for (i, x) in v.view_mut().iter_mut().enumerate() {
///         *x = i as i64;
///     }
/// }
/// # Python::initialize();
/// # Python::attach(|py| {
/// #     let v = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![0i64; 3], [3])?)?;
/// #     wrap_pyfunction!(iota, py)?.call1((&v,))?;
/// #     let values = dlspan::pyo3::types::PyMemoryView::from(v.as_any())?.call_method0("tolist")?;
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
    pub(crate) framework: Framework,
    pub(crate) stream: Option<CallerStream>,
}

/// A shared view argument of CUDA device memory (`kDLCUDA`): [`PyView`] in the [`Device`] space.
/// Host memory, managed memory and other devices are refused with a `TypeError` naming the
/// argument (`expected an array on cuda, got one on cpu`). Device views are never read on the host:
/// the extension's work goes on [`caller_stream`](PyView::caller_stream) (rule Y21).
///
/// ```
/// use dlspan::python::PyDeviceView;
/// use dlspan::pyo3::prelude::*;
/// #[pyfunction(crate = "dlspan::pyo3")]
/// fn device_length(x: PyDeviceView<'_, f32, 1>) -> (usize, i64) {
///     (x.view().size(), x.caller_stream().map_or(0, |s| s.dlpack_stream()))
/// }
/// # Python::initialize();
/// # Python::attach(|py| {
/// let host = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![0f32; 2], [2])?)?;
/// let err = wrap_pyfunction!(device_length, py)?.call1((host,)).unwrap_err();
/// assert!(err.is_instance_of::<dlspan::pyo3::exceptions::PyTypeError>(py));
/// assert!(err.value(py).to_string().contains("got one on cpu"), "{}", err.value(py));
/// #     Ok::<_, PyErr>(())
/// # })?;
/// # Ok::<(), PyErr>(())
/// ```
pub type PyDeviceView<'py, T, const R: usize, L = LayoutStrideRelaxed, E = Dims<R>> = PyView<'py, T, R, L, E, Device>;

/// A mutable view argument of CUDA device memory: [`PyViewMut`] in the [`Device`] space, with the
/// checks of [`PyDeviceView`] and [`PyViewMut`] (read-only memory, JAX arrays, tensors that require
/// grad while gradients are recorded, overlapping arguments).
///
/// ```
/// use dlspan::python::PyDeviceViewMut;
/// use dlspan::pyo3::prelude::*;
/// #[pyfunction(crate = "dlspan::pyo3")]
/// fn touch(mut x: PyDeviceViewMut<'_, f32, 1>) -> usize {
///     x.view_mut().size()
/// }
/// # Python::initialize();
/// # Python::attach(|py| {
/// let host = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![0f32; 2], [2])?)?;
/// assert!(wrap_pyfunction!(touch, py)?.call1((host,)).is_err());
/// #     Ok::<_, PyErr>(())
/// # })?;
/// # Ok::<(), PyErr>(())
/// ```
pub type PyDeviceViewMut<'py, T, const R: usize, L = LayoutStrideRelaxed, E = Dims<R>> =
    PyViewMut<'py, T, R, L, E, Device>;

/// A shared view argument of CUDA managed memory (`kDLCUDAManaged`): [`PyView`] in the [`Managed`]
/// space, read on the host only after the device's work (rule Y16).
///
/// ```
/// use dlspan::python::PyManagedView;
/// use dlspan::pyo3::prelude::*;
/// #[pyfunction(crate = "dlspan::pyo3")]
/// fn managed_sum(x: PyManagedView<'_, f64, 1>) -> f64 {
///     x.view().iter().sum()
/// }
/// # Python::initialize();
/// # Python::attach(|py| {
/// let host = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![0f64; 2], [2])?)?;
/// assert!(wrap_pyfunction!(managed_sum, py)?.call1((host,)).is_err());
/// #     Ok::<_, PyErr>(())
/// # })?;
/// # Ok::<(), PyErr>(())
/// ```
pub type PyManagedView<'py, T, const R: usize, L = LayoutStrideRelaxed, E = Dims<R>> = PyView<'py, T, R, L, E, Managed>;

/// A mutable view argument of CUDA managed memory: [`PyViewMut`] in the [`Managed`] space.
///
/// ```
/// use dlspan::python::PyManagedViewMut;
/// use dlspan::pyo3::prelude::*;
/// #[pyfunction(crate = "dlspan::pyo3")]
/// fn managed_zero(mut x: PyManagedViewMut<'_, f64, 1>) {
///     x.view_mut().iter_mut().for_each(|v| *v = 0.0);
/// }
/// # Python::initialize();
/// # Python::attach(|py| {
/// let host = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![1f64; 2], [2])?)?;
/// assert!(wrap_pyfunction!(managed_zero, py)?.call1((host,)).is_err());
/// #     Ok::<_, PyErr>(())
/// # })?;
/// # Ok::<(), PyErr>(())
/// ```
pub type PyManagedViewMut<'py, T, const R: usize, L = LayoutStrideRelaxed, E = Dims<R>> =
    PyViewMut<'py, T, R, L, E, Managed>;

impl<'py, T: DlElement, const R: usize, L: Layout, E: Extents<R>, S: MemorySpace> PyView<'py, T, R, L, E, S> {
    /// The view, borrowing the argument (so it cannot outlive the memory it keeps alive).
    ///
    /// ```
    /// # use dlspan::python::PyView;
    /// # use dlspan::pyo3::prelude::*;
    /// #[pyfunction(crate = "dlspan::pyo3")]
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

    /// The caller's stream for the argument's device (rule Y21): PyTorch's current stream, CuPy's,
    /// or dlspan's own (which the producer's `__dlpack__` ordered its work before); `None` for host
    /// memory. Work on the view enqueued there is seen by the caller's next operation on its stream.
    ///
    /// ```
    /// # use dlspan::python::PyView;
    /// # use dlspan::pyo3::prelude::*;
    /// #[pyfunction(crate = "dlspan::pyo3")]
    /// fn on_host(x: PyView<'_, f32, 1>) -> bool {
    ///     x.caller_stream().is_none()
    /// }
    /// # Python::initialize();
    /// # Python::attach(|py| {
    /// #     let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![0f32; 2], [2])?)?;
    /// #     assert!(wrap_pyfunction!(on_host, py)?.call1((x,))?.extract::<bool>()?);
    /// #     Ok::<_, PyErr>(())
    /// # })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    #[inline]
    pub fn caller_stream(&self) -> Option<CallerStream> {
        self.stream
    }
}

impl<'py, T: DlElement, const R: usize, L: Layout, E: Extents<R>, S: MemorySpace> PyViewMut<'py, T, R, L, E, S> {
    /// A shared view of the argument.
    ///
    /// ```
    /// # use dlspan::python::PyViewMut;
    /// # use dlspan::pyo3::prelude::*;
    /// #[pyfunction(crate = "dlspan::pyo3")]
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
    /// # use dlspan::pyo3::prelude::*;
    /// #[pyfunction(crate = "dlspan::pyo3")]
    /// fn zero(mut x: PyViewMut<'_, f32, 2>) {
    ///     x.view_mut().iter_mut().for_each(|v| *v = 0.0);
    /// }
    /// # Python::initialize();
    /// # Python::attach(|py| {
    /// #     let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![1f32; 4], [2, 2])?)?;
    /// #     wrap_pyfunction!(zero, py)?.call1((&x,))?;
    /// #     let values = dlspan::pyo3::types::PyMemoryView::from(x.as_any())?.call_method0("tolist")?;
    /// #     assert_eq!(values.extract::<Vec<Vec<f32>>>()?, [[0.0; 2]; 2]);
    /// #     Ok::<_, PyErr>(())
    /// # })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    #[inline]
    pub fn view_mut(&mut self) -> MdspanMut<'_, T, R, E, L, S> {
        self.view.reborrow()
    }

    /// The caller's stream for the argument's device (rule Y21): PyTorch's current stream, CuPy's,
    /// or dlspan's own (which the producer's `__dlpack__` ordered its work before); `None` for host
    /// memory. Work on the view enqueued there is seen by the caller's next operation on its stream.
    ///
    /// ```
    /// # use dlspan::python::PyViewMut;
    /// # use dlspan::pyo3::prelude::*;
    /// #[pyfunction(crate = "dlspan::pyo3")]
    /// fn on_host(x: PyViewMut<'_, f32, 1>) -> bool {
    ///     x.caller_stream().is_none()
    /// }
    /// # Python::initialize();
    /// # Python::attach(|py| {
    /// #     let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![0f32; 2], [2])?)?;
    /// #     assert!(wrap_pyfunction!(on_host, py)?.call1((x,))?.extract::<bool>()?);
    /// #     Ok::<_, PyErr>(())
    /// # })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    #[inline]
    pub fn caller_stream(&self) -> Option<CallerStream> {
        self.stream
    }
}

impl<'a, 'py, T: DlElement, const R: usize, L: Layout, E: Extents<R>, S: MemorySpace> FromPyObject<'a, 'py>
    for PyView<'py, T, R, L, E, S>
{
    type Error = PyErr;

    #[inline]
    fn extract(object: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Self::extract_named(object.to_owned(), None)
    }
}

impl<'py, T: DlElement, const R: usize, L: Layout, E: Extents<R>, S: MemorySpace> Sealed
    for PyView<'py, T, R, L, E, S>
{
}

impl<'py, T: DlElement, const R: usize, L: Layout, E: Extents<R>, S: MemorySpace> NamedArgument<'py>
    for PyView<'py, T, R, L, E, S>
{
    #[inline]
    fn extract_named(object: Bound<'py, PyAny>, name: Option<&'static str>) -> PyResult<Self> {
        let mut strides = [0i64; R];
        let located = locate(&object, false, &mut strides, Some(R))?;
        // SAFETY: the view copies the extents and strides out of `located.tensor` and keeps only
        // its data pointer, whose memory `located.source` (kept in the argument) keeps alive; the
        // tensor's producer guarantees its arrays and elements. The view is handed out only
        // through borrows of the argument.
        let tensor: &'py DLTensor = unsafe { &*(&located.tensor as *const DLTensor) };
        // SAFETY: as above; nothing writes the memory through dlspan while the view lives (the
        // borrow registry refuses overlapping mutable views).
        let view = unsafe { Mdspan::<'py, T, R, E, L, S>::from_dltensor_with(tensor, located.options) }?;
        host_ready::<S>(located.tensor.device)?;
        let borrow = if view.is_empty() { None } else { Some(register(&object, name, footprint(&view), false)?) };
        Ok(Self {
            view,
            _borrow: borrow,
            _source: located.source,
            framework: located.framework,
            stream: located.stream,
        })
    }
}

impl<'a, 'py, T: DlElement, const R: usize, L: Layout, E: Extents<R>, S: MemorySpace> FromPyObject<'a, 'py>
    for PyViewMut<'py, T, R, L, E, S>
{
    type Error = PyErr;

    #[inline]
    fn extract(object: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Self::extract_named(object.to_owned(), None)
    }
}

impl<'py, T: DlElement, const R: usize, L: Layout, E: Extents<R>, S: MemorySpace> Sealed
    for PyViewMut<'py, T, R, L, E, S>
{
}

impl<'py, T: DlElement, const R: usize, L: Layout, E: Extents<R>, S: MemorySpace> NamedArgument<'py>
    for PyViewMut<'py, T, R, L, E, S>
{
    #[inline]
    fn extract_named(object: Bound<'py, PyAny>, name: Option<&'static str>) -> PyResult<Self> {
        let mut strides = [0i64; R];
        let located = locate(&object, true, &mut strides, Some(R))?;
        if located.read_only {
            return Err(DlpackError::ReadOnly.into());
        }
        // SAFETY: as for `PyView`.
        let tensor: &'py DLTensor = unsafe { &*(&located.tensor as *const DLTensor) };
        // SAFETY: as for `PyView`, and the memory is writable (not read-only, checked above) and
        // reached by no other dlspan view while this one lives (registered below, before use).
        let view = unsafe { MdspanMut::<'py, T, R, E, L, S>::from_dltensor_with(tensor, located.options) }?;
        host_ready::<S>(located.tensor.device)?;
        let borrow =
            if view.is_empty() { None } else { Some(register(&object, name, footprint(&view.as_view()), true)?) };
        Ok(Self {
            view,
            _borrow: borrow,
            _source: located.source,
            framework: located.framework,
            stream: located.stream,
        })
    }
}
