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
//! Extraction errors are the exceptions `PyErr::from` gives every [`DlpackError`], with PyO3's note
//! naming the argument (`while processing 'y'`).

use super::borrow::{Borrow, Footprint, add_period, period, register};
use super::consumer::{ImportRequest, from_dlpack};
use super::dialect::{Dialect, dialect};
use super::numpy;
use super::tensor::Tensor;
use crate::convert::ImportOptions;
use crate::dtype::DlElement;
use crate::error::DlpackError;
use crate::ffi::{DLDataType, DLDevice, DLTensor};
use crate::owned::ManagedTensor;
use crate::space::{Host, MemorySpace};
use crate::view::{Dims, DynMdspan, Extents, Layout, LayoutStrideRelaxed, Mdspan, MdspanMut};
use pyo3::prelude::*;

/// NumPy arrays of up to this many axes are read through NumPy's struct by the dynamic view
/// arguments (as many as a dynamic view keeps without allocating); more go through `__dlpack__`.
const DYN_INLINE_AXES: usize = 8;

/// What keeps a view argument's memory alive.
pub(crate) enum Source<'py> {
    /// The Python object (its memory lives as long as it does).
    Object(#[allow(dead_code)] Bound<'py, PyAny>),
    /// A PyTorch tensor and its storage: Python code run while the view lives may point the tensor
    /// at other memory (`set_`, which would free the old storage) — the storage stays alive.
    Torch(#[allow(dead_code)] Bound<'py, PyAny>, #[allow(dead_code)] Bound<'py, PyAny>),
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
        Dialect::Exchange { api, torch: None } if mutable => {
            // A plain `DLTensor` carries no flags: a producer other than PyTorch (whose tensors
            // have no read-only state) may hand out read-only memory that way. Mutable views take
            // the managed path, whose flags say READ_ONLY, or `__dlpack__`.
            if let Some(managed) = api.table().managed_tensor_from_py_object_no_sync {
                let mut raw = core::ptr::null_mut();
                // SAFETY: the table was found on this object's exact type, the GIL is held, and
                // `raw` is a writable slot on our stack.
                if unsafe { managed(object.as_ptr().cast(), &mut raw) } != 0 {
                    return Err(PyErr::fetch(py));
                }
                // SAFETY: on success the slot holds a managed tensor whose ownership passes to
                // the caller (the exchange API's contract).
                let managed = unsafe { ManagedTensor::from_raw_versioned(raw) }?;
                return Ok(located_managed(managed));
            }
        }
        Dialect::Exchange { api, torch: Some(base) } => {
            let read = super::torch::read(object, api, base, mutable)?;
            return Ok(Located {
                tensor: read.tensor,
                options: ImportOptions::CURRENT,
                read_only: false,
                source: Source::Torch(object.clone(), read.storage),
            });
        }
        Dialect::Exchange { api, torch: None } => {
            let mut tensor = DLTensor::default();
            let fill = api.table().dltensor_from_py_object_no_sync.expect("checked by the dialect");
            // SAFETY: the table was found on this object's exact type (the exchange API's
            // requirement), the GIL is held, and `tensor` is a writable struct on our stack.
            if unsafe { fill(object.as_ptr().cast(), &mut tensor) } != 0 {
                return Err(PyErr::fetch(py));
            }
            return Ok(found(tensor, ImportOptions::CURRENT, false));
        }
        Dialect::Protocol { .. } => {}
    }
    // `from_dlpack` marks the memory of immutable producers read-only.
    Ok(located_managed(from_dlpack(object, ImportRequest::default())?))
}

/// A managed tensor as a located argument (its flags decide read-only).
fn located_managed<'py>(managed: ManagedTensor) -> Located<'py> {
    let mut tensor = *managed.dl_tensor();
    // SAFETY: the managed tensor's shape and strides (its producer's contract).
    unsafe { super::meta::rebase(&mut tensor) };
    Located {
        tensor,
        options: managed.import_options(),
        read_only: managed.is_read_only(),
        source: Source::Managed(managed),
    }
}

/// Before a view of host-accessible space `S` reads memory that is not plain host memory (CUDA
/// pinned or managed memory, which the device may still be writing): waits for the device, or
/// refuses (rule Y16).
#[inline]
fn host_ready<S: MemorySpace>(device: DLDevice) -> PyResult<()> {
    if S::HOST_ACCESSIBLE && device.device_type != crate::ffi::DLDeviceType::kDLCPU {
        super::device::wait_for_host(device)?;
    }
    Ok(())
}

/// The memory a typed view reaches.
fn footprint<T, const R: usize, E: Extents<R>, L: Layout, S: MemorySpace>(
    view: &Mdspan<'_, T, R, E, L, S>,
) -> Footprint {
    let mapping = view.mapping();
    let size = core::mem::size_of::<T>();
    let base = view.data_handle() as usize;
    Footprint::new(
        view.device(),
        base..base + mapping.required_span_size() * size,
        base + mapping.offset() * size,
        period(mapping.extents(), mapping.strides(), size),
        size,
    )
}

/// The memory a dynamic view reaches (packed sub-byte data as one block of bytes).
fn dyn_footprint<S: MemorySpace>(view: &DynMdspan<'_, S>) -> Footprint {
    let range = view.byte_range();
    let bits = view.element_bits();
    if bits % 8 != 0 {
        return Footprint::new(view.device(), range.clone(), range.start, 0, range.len());
    }
    let anchor = (view.data_ptr() as usize).wrapping_add(view.byte_offset() as usize);
    let size = bits / 8;
    Footprint::new(
        view.device(),
        range,
        anchor,
        period(view.shape().iter().copied(), view.strides().iter().copied(), size),
        size,
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
        let view = unsafe { Mdspan::<'py, T, R, E, L, S>::from_dltensor_with(tensor, located.options) }?;
        host_ready::<S>(located.tensor.device)?;
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
            return Err(DlpackError::ReadOnly.into());
        }
        // SAFETY: as for `PyView`.
        let tensor: &'py DLTensor = unsafe { &*(&located.tensor as *const DLTensor) };
        // SAFETY: as for `PyView`, and the memory is writable (not read-only, checked above) and
        // reached by no other dlspan view while this one lives (registered below, before use).
        let view = unsafe { MdspanMut::<'py, T, R, E, L, S>::from_dltensor_with(tensor, located.options) }?;
        host_ready::<S>(located.tensor.device)?;
        let borrow =
            if view.is_empty() { None } else { Some(register(object.py(), footprint(&view.as_view()), true)?) };
        Ok(Self { view, _borrow: borrow, _source: located.source })
    }
}

/// A tensor's shape and strides, owned (inline up to 8 axes).
enum OwnedDims {
    Inline { rank: usize, shape: [i64; DYN_INLINE_AXES], strides: [i64; DYN_INLINE_AXES] },
    Heap { shape: Box<[i64]>, strides: Box<[i64]> },
}

impl OwnedDims {
    /// Copies a located tensor's shape and strides (`None` strides: row-major, by the producer's
    /// version), or `None` when the tensor is not well-formed enough to read them (the full
    /// dynamic validation then reports why).
    fn of(tensor: &DLTensor, options: ImportOptions) -> Option<Self> {
        let rank = usize::try_from(tensor.ndim).ok()?;
        if rank > 0 && tensor.shape.is_null() {
            return None;
        }
        let read = |values: *const i64| -> &[i64] {
            if rank == 0 {
                &[]
            } else {
                // SAFETY: a non-null shape or strides array has `ndim` entries (the producer's
                // contract, which every path of `locate` passes on).
                unsafe { core::slice::from_raw_parts(values, rank) }
            }
        };
        let shape = read(tensor.shape);
        let null_strides = rank > 0 && tensor.strides.is_null();
        let version = options.version;
        if null_strides && !(version.major == 0 || (version.major == 1 && version.minor < 2)) {
            return None;
        }
        let mut dims = if rank <= DYN_INLINE_AXES {
            Self::Inline { rank, shape: [0; DYN_INLINE_AXES], strides: [0; DYN_INLINE_AXES] }
        } else {
            Self::Heap { shape: vec![0; rank].into(), strides: vec![0; rank].into() }
        };
        let (shape_out, strides_out) = dims.slices_mut();
        // Element by element: a few axes, where a `memcpy` call costs more than the copy.
        for (out, &extent) in shape_out.iter_mut().zip(shape) {
            *out = extent;
        }
        if null_strides {
            let mut next = 1i64;
            for (stride, &extent) in strides_out.iter_mut().zip(shape).rev() {
                *stride = next;
                next = next.checked_mul(extent.max(1))?;
            }
        } else {
            for (out, &stride) in strides_out.iter_mut().zip(read(tensor.strides)) {
                *out = stride;
            }
        }
        Some(dims)
    }

    fn slices_mut(&mut self) -> (&mut [i64], &mut [i64]) {
        match self {
            Self::Inline { rank, shape, strides } => (&mut shape[..*rank], &mut strides[..*rank]),
            Self::Heap { shape, strides } => (shape, strides),
        }
    }

    fn shape(&self) -> &[i64] {
        match self {
            Self::Inline { rank, shape, .. } => &shape[..*rank],
            Self::Heap { shape, .. } => shape,
        }
    }

    fn strides(&self) -> &[i64] {
        match self {
            Self::Inline { rank, strides, .. } => &strides[..*rank],
            Self::Heap { strides, .. } => strides,
        }
    }
}

/// What both dynamic view arguments hold: the located tensor, its shape and strides, and what keeps
/// it alive and registered.
struct DynArg<'py> {
    /// The tensor; its `shape` and `strides` are re-pointed at `dims` whenever it is handed out.
    tensor: DLTensor,
    dims: OwnedDims,
    options: ImportOptions,
    read_only: bool,
    _borrow: Option<Borrow<'py>>,
    _source: Source<'py>,
}

/// The byte footprint of a well-formed tensor of whole-byte elements, computed directly; `None`
/// for anything unusual (packed sub-byte data, empty, more than 8 axes, extents or strides of 2^28
/// or more), which the full dynamic validation then measures or refuses.
fn quick_footprint(tensor: &DLTensor, dims: &OwnedDims) -> Option<Footprint> {
    // Under the bound, with at most 8 axes, every term (e - 1)·s and their sums stay below 2^59.
    const BOUND: i64 = 1 << 28;
    let bits = u32::from(tensor.dtype.bits) * u32::from(tensor.dtype.lanes);
    let (shape, strides) = (dims.shape(), dims.strides());
    if bits == 0 || bits % 8 != 0 || tensor.data.is_null() || shape.len() > DYN_INLINE_AXES {
        return None;
    }
    let size = (bits / 8) as usize;
    let (mut low, mut high, mut steps) = (0i64, 0i64, 0usize);
    for (&extent, &stride) in shape.iter().zip(strides) {
        if !(1..BOUND).contains(&extent) || !(-BOUND..BOUND).contains(&stride) {
            return None;
        }
        let reach = (extent - 1) * stride;
        if reach < 0 {
            low += reach
        } else {
            high += reach
        }
        if extent > 1 {
            steps = add_period(steps, stride as isize, size);
        }
    }
    let first = (tensor.data as usize).checked_add(usize::try_from(tensor.byte_offset).ok()?)?;
    let start = first.checked_sub((low.unsigned_abs() as usize).checked_mul(size)?)?;
    let end = first.checked_add((high as usize + 1).checked_mul(size)?)?;
    if end - start > isize::MAX as usize {
        return None;
    }
    Some(Footprint::new(tensor.device, start..end, first, steps, size))
}

impl<'py> DynArg<'py> {
    fn extract<S: MemorySpace>(object: Borrowed<'_, 'py, PyAny>, mutable: bool) -> PyResult<Self> {
        let object = object.to_owned();
        let mut strides = [0i64; DYN_INLINE_AXES];
        let located = locate(&object, mutable, &mut strides, None)?;
        if mutable && located.read_only {
            return Err(DlpackError::ReadOnly.into());
        }
        let dims = OwnedDims::of(&located.tensor, located.options);
        let footprint = match dims.as_ref().and_then(|dims| quick_footprint(&located.tensor, dims)) {
            Some(footprint) if S::accept(located.tensor.device).is_ok() => Some(footprint),
            // The full rules of a dynamic view: the precise error, or the footprint of an unusual
            // but valid tensor (empty: none; packed sub-byte data: its bytes).
            _ => {
                // SAFETY: only metadata is read and the view is dropped here; the producer's
                // contract makes shape and strides readable.
                let view = unsafe { DynMdspan::<S>::from_dltensor_with(&located.tensor, located.options) }?;
                (!view.is_empty()).then(|| dyn_footprint(&view))
            }
        };
        // The dynamic validation refused every tensor whose shape and strides cannot be read.
        let Some(dims) = dims else { return Err(DlpackError::NullShape.into()) };
        host_ready::<S>(located.tensor.device)?;
        let borrow = match footprint {
            Some(footprint) => Some(register(object.py(), footprint, mutable)?),
            None => None,
        };
        Ok(Self {
            tensor: located.tensor,
            dims,
            options: located.options,
            read_only: located.read_only,
            _borrow: borrow,
            _source: located.source,
        })
    }

    /// The tensor, with shape and strides pointing into this argument.
    fn dl_tensor(&self) -> DLTensor {
        let (shape, strides) = (self.dims.shape(), self.dims.strides());
        DLTensor {
            shape: if shape.is_empty() { core::ptr::null_mut() } else { shape.as_ptr().cast_mut() },
            strides: if strides.is_empty() { core::ptr::null_mut() } else { strides.as_ptr().cast_mut() },
            ..self.tensor
        }
    }
}

/// Declares the metadata queries both dynamic arguments share.
macro_rules! dyn_arg_queries {
    ($ty:ident, $mut_kw:literal, $example_fn:literal) => {
        impl<'py, S: MemorySpace> $ty<'py, S> {
            /// The data type.
            ///
            /// ```
            /// # use pyo3::prelude::*;
            #[doc = concat!("#[pyfunction]\nfn dtype(x: dlspan::python::", stringify!($ty), "<'_>) -> String {")]
            ///     x.dtype().to_string()
            /// }
            /// # Python::initialize();
            /// # Python::attach(|py| {
            /// #     let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![0u16; 2], [2])?)?;
            /// #     assert_eq!(wrap_pyfunction!(dtype, py)?.call1((x,))?.extract::<String>()?, "uint16");
            /// #     Ok::<_, PyErr>(())
            /// # })?;
            /// # Ok::<(), PyErr>(())
            /// ```
            #[inline]
            pub fn dtype(&self) -> DLDataType {
                self.arg.tensor.dtype
            }

            /// The rank.
            ///
            /// ```
            /// # use pyo3::prelude::*;
            #[doc = concat!("#[pyfunction]\nfn rank(x: dlspan::python::", stringify!($ty), "<'_>) -> usize {")]
            ///     x.rank()
            /// }
            /// # Python::initialize();
            /// # Python::attach(|py| {
            /// #     let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![0u8; 6], [1, 2, 3])?)?;
            /// #     assert_eq!(wrap_pyfunction!(rank, py)?.call1((x,))?.extract::<usize>()?, 3);
            /// #     Ok::<_, PyErr>(())
            /// # })?;
            /// # Ok::<(), PyErr>(())
            /// ```
            #[inline]
            pub fn rank(&self) -> usize {
                self.arg.dims.shape().len()
            }

            /// The extents.
            ///
            /// ```
            /// # use pyo3::prelude::*;
            #[doc = concat!("#[pyfunction]\nfn shape(x: dlspan::python::", stringify!($ty), "<'_>) -> Vec<i64> {")]
            ///     x.shape().to_vec()
            /// }
            /// # Python::initialize();
            /// # Python::attach(|py| {
            /// #     let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![0u8; 6], [2, 3])?)?;
            /// #     assert_eq!(wrap_pyfunction!(shape, py)?.call1((x,))?.extract::<Vec<i64>>()?, [2, 3]);
            /// #     Ok::<_, PyErr>(())
            /// # })?;
            /// # Ok::<(), PyErr>(())
            /// ```
            #[inline]
            pub fn shape(&self) -> &[i64] {
                self.arg.dims.shape()
            }

            /// The strides, in elements (row-major when a legacy producer left them out).
            ///
            /// ```
            /// # use pyo3::prelude::*;
            #[doc = concat!("#[pyfunction]\nfn strides(x: dlspan::python::", stringify!($ty), "<'_>) -> Vec<i64> {")]
            ///     x.strides().to_vec()
            /// }
            /// # Python::initialize();
            /// # Python::attach(|py| {
            /// #     let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![0u8; 6], [2, 3])?)?;
            /// #     assert_eq!(wrap_pyfunction!(strides, py)?.call1((x,))?.extract::<Vec<i64>>()?, [3, 1]);
            /// #     Ok::<_, PyErr>(())
            /// # })?;
            /// # Ok::<(), PyErr>(())
            /// ```
            #[inline]
            pub fn strides(&self) -> &[i64] {
                self.arg.dims.strides()
            }

            /// The device.
            ///
            /// ```
            /// # use pyo3::prelude::*;
            #[doc = concat!("#[pyfunction]\nfn device_type(x: dlspan::python::", stringify!($ty), "<'_>) -> i32 {")]
            ///     x.device().device_type.0
            /// }
            /// # Python::initialize();
            /// # Python::attach(|py| {
            /// #     let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![0u8; 2], [2])?)?;
            /// #     assert_eq!(wrap_pyfunction!(device_type, py)?.call1((x,))?.extract::<i32>()?, 1);
            /// #     Ok::<_, PyErr>(())
            /// # })?;
            /// # Ok::<(), PyErr>(())
            /// ```
            #[inline]
            pub fn device(&self) -> DLDevice {
                self.arg.tensor.device
            }

            /// The dynamic view of the argument (every rule of a dynamic view applied).
            ///
            /// # Errors
            ///
            /// As [`DynMdspan::from_dltensor_with`] (the argument passed most of them already).
            ///
            /// ```
            /// # use pyo3::prelude::*;
            #[doc = concat!("#[pyfunction]\nfn nbytes(x: dlspan::python::", stringify!($ty), "<'_>) -> PyResult<usize> {")]
            ///     Ok(x.view()?.byte_range().len())
            /// }
            /// # Python::initialize();
            /// # Python::attach(|py| {
            /// #     let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![0u32; 6], [2, 3])?)?;
            /// #     assert_eq!(wrap_pyfunction!(nbytes, py)?.call1((x,))?.extract::<usize>()?, 24);
            /// #     Ok::<_, PyErr>(())
            /// # })?;
            /// # Ok::<(), PyErr>(())
            /// ```
            #[inline]
            pub fn view(&self) -> Result<DynMdspan<'_, S>, DlpackError> {
                let tensor = self.arg.dl_tensor();
                // SAFETY: the dynamic view copies shape and strides out of `tensor` (which points
                // into this argument) and borrows the data for as long as the argument, whose
                // source keeps it alive; writes through dlspan are refused by the borrow registry
                // while the argument lives.
                let tensor: &DLTensor = unsafe { &*(&tensor as *const DLTensor) };
                // SAFETY: as above.
                unsafe { DynMdspan::from_dltensor_with(tensor, self.arg.options) }
            }

            /// The typed shared view of element type `T`, rank `R` and layout `L`, by every rule of
            /// the typed import.
            ///
            /// # Errors
            ///
            /// The first typed rule that fails: [`DlpackError::DtypeMismatch`],
            /// [`DlpackError::RankMismatch`], the layout's rules, …
            ///
            /// ```
            /// # use pyo3::prelude::*;
            #[doc = concat!("#[pyfunction]\nfn first(x: dlspan::python::", stringify!($ty), "<'_>) -> PyResult<f32> {")]
            ///     Ok(x.typed::<f32, 1, dlspan::LayoutStride>()?[[0]])
            /// }
            /// # Python::initialize();
            /// # Python::attach(|py| {
            /// #     let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![2.5f32; 2], [2])?)?;
            /// #     assert_eq!(wrap_pyfunction!(first, py)?.call1((x,))?.extract::<f32>()?, 2.5);
            /// #     Ok::<_, PyErr>(())
            /// # })?;
            /// # Ok::<(), PyErr>(())
            /// ```
            #[inline]
            pub fn typed<T: DlElement, const R: usize, L: Layout>(
                &self,
            ) -> Result<Mdspan<'_, T, R, Dims<R>, L, S>, DlpackError> {
                let tensor = self.arg.dl_tensor();
                // SAFETY: as in `view`: the typed view copies shape and strides.
                let tensor: &DLTensor = unsafe { &*(&tensor as *const DLTensor) };
                // SAFETY: as in `view`.
                unsafe { Mdspan::from_dltensor_with(tensor, self.arg.options) }
            }
        }
    };
}

/// A shared view argument whose data type and rank are known only at run time: any tensor Python
/// passes, located as [`PyView`] locates it (no capsule for PyTorch and NumPy) and borrow-checked
/// like it, viewed as a typed view with [`typed`](Self::typed) inside a
/// [`dispatch_tensor`](crate::dtype::dispatch_tensor) on its [`dtype`](Self::dtype) and
/// [`rank`](Self::rank) — one generic function for every dtype and rank — or as a
/// [`DynMdspan`] with [`view`](Self::view).
///
/// On extraction the tensor's metadata is checked as far as its footprint (the bytes it spans,
/// registered with the borrow registry) needs; the typed conversion checks everything else.
///
/// ```
/// use dlspan::dtype::{Numeric, TensorVisitor, dispatch_tensor};
/// use dlspan::python::PyDynView;
/// use dlspan::{DlpackError, LayoutStrideRelaxed};
/// use pyo3::prelude::*;
///
/// /// The number of non-zero elements of any tensor.
/// #[pyfunction]
/// fn count_nonzero(x: PyDynView<'_>) -> PyResult<usize> {
///     struct Count<'v, 'py>(&'v PyDynView<'py>);
///     impl TensorVisitor for Count<'_, '_> {
///         type Output = Result<usize, DlpackError>;
///         fn visit<T: Numeric, const R: usize>(self) -> Self::Output {
///             let view = self.0.typed::<T, R, LayoutStrideRelaxed>()?;
///             Ok(view.fold_unordered(0, |n, &x| n + usize::from(x != T::ZERO)))
///         }
///     }
///     Ok(dispatch_tensor(x.dtype(), x.rank(), Count(&x))??)
/// }
/// # Python::initialize();
/// # Python::attach(|py| {
/// #     let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![0u8, 3, 0, 1], [2, 2])?)?;
/// #     assert_eq!(wrap_pyfunction!(count_nonzero, py)?.call1((x,))?.extract::<usize>()?, 2);
/// #     Ok::<_, PyErr>(())
/// # })?;
/// # Ok::<(), PyErr>(())
/// ```
pub struct PyDynView<'py, S: MemorySpace = Host> {
    arg: DynArg<'py>,
    _space: core::marker::PhantomData<S>,
}

/// A mutable view argument of run-time data type and rank: the twin of [`PyDynView`], refused as
/// [`PyViewMut`] is (read-only memory, strides that make two indices share an element, tensors that
/// require grad, memory another live view argument overlaps).
///
/// ```
/// use dlspan::dtype::{Numeric, TensorVisitor, dispatch_tensor};
/// use dlspan::python::PyDynViewMut;
/// use dlspan::{DlpackError, LayoutStrideRelaxed};
/// use pyo3::prelude::*;
///
/// /// Sets every element of any tensor to one.
/// #[pyfunction]
/// fn ones_(mut x: PyDynViewMut<'_>) -> PyResult<()> {
///     struct Fill<'v, 'py>(&'v mut PyDynViewMut<'py>);
///     impl TensorVisitor for Fill<'_, '_> {
///         type Output = Result<(), DlpackError>;
///         fn visit<T: Numeric, const R: usize>(self) -> Self::Output {
///             self.0.typed_mut::<T, R, LayoutStrideRelaxed>()?.for_each_unordered(|x| *x = T::ONE);
///             Ok(())
///         }
///     }
///     let (dtype, rank) = (x.dtype(), x.rank());
///     Ok(dispatch_tensor(dtype, rank, Fill(&mut x))??)
/// }
/// # Python::initialize();
/// # Python::attach(|py| {
/// #     let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![0i16; 3], [3])?)?;
/// #     wrap_pyfunction!(ones_, py)?.call1((&x,))?;
/// #     let values = pyo3::types::PyMemoryView::from(x.as_any())?.call_method0("tolist")?;
/// #     assert_eq!(values.extract::<Vec<i16>>()?, [1, 1, 1]);
/// #     Ok::<_, PyErr>(())
/// # })?;
/// # Ok::<(), PyErr>(())
/// ```
pub struct PyDynViewMut<'py, S: MemorySpace = Host> {
    arg: DynArg<'py>,
    _space: core::marker::PhantomData<S>,
}

dyn_arg_queries!(PyDynView, "", "");
dyn_arg_queries!(PyDynViewMut, "mut ", "");

impl<'py, S: MemorySpace> PyDynView<'py, S> {
    /// Whether the memory is read-only at its source (`READ_ONLY`, a non-writeable NumPy array, a
    /// JAX array).
    ///
    /// ```
    /// # use dlspan::python::PyDynView;
    /// # use pyo3::prelude::*;
    /// #[pyfunction]
    /// fn writable(x: PyDynView<'_>) -> bool {
    ///     !x.is_read_only()
    /// }
    /// # Python::initialize();
    /// # Python::attach(|py| {
    /// #     let shared = dlspan::ManagedTensor::from_owner(std::sync::Arc::<[u8]>::from([1u8]), [1])?;
    /// #     let x = dlspan::python::Tensor::from_managed(py, shared)?;
    /// #     assert!(!wrap_pyfunction!(writable, py)?.call1((x,))?.extract::<bool>()?);
    /// #     Ok::<_, PyErr>(())
    /// # })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    #[inline]
    pub fn is_read_only(&self) -> bool {
        self.arg.read_only
    }
}

impl<'py, S: MemorySpace> PyDynViewMut<'py, S> {
    /// The typed mutable view, borrowing the argument; see [`typed`](Self::typed) for the rules.
    ///
    /// # Errors
    ///
    /// As [`typed`](Self::typed).
    ///
    /// ```
    /// # use dlspan::python::PyDynViewMut;
    /// # use pyo3::prelude::*;
    /// #[pyfunction]
    /// fn negate(mut x: PyDynViewMut<'_>) -> PyResult<()> {
    ///     x.typed_mut::<i32, 1, dlspan::LayoutStrideRelaxed>()?.for_each_unordered(|v| *v = -*v);
    ///     Ok(())
    /// }
    /// # Python::initialize();
    /// # Python::attach(|py| {
    /// #     let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![1i32, -2], [2])?)?;
    /// #     wrap_pyfunction!(negate, py)?.call1((&x,))?;
    /// #     let values = pyo3::types::PyMemoryView::from(x.as_any())?.call_method0("tolist")?;
    /// #     assert_eq!(values.extract::<Vec<i32>>()?, [-1, 2]);
    /// #     Ok::<_, PyErr>(())
    /// # })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    #[inline]
    pub fn typed_mut<T: DlElement, const R: usize, L: Layout>(
        &mut self,
    ) -> Result<MdspanMut<'_, T, R, Dims<R>, L, S>, DlpackError> {
        let tensor = self.arg.dl_tensor();
        // SAFETY: as in `typed`; the memory is writable (refused at extraction otherwise) and no
        // other dlspan view reaches it while the argument lives (registered as mutable), and
        // `&mut self` makes this view the only one of the argument.
        let tensor: &DLTensor = unsafe { &*(&tensor as *const DLTensor) };
        // SAFETY: as above.
        unsafe { MdspanMut::from_dltensor_with(tensor, self.arg.options) }
    }
}

impl<'a, 'py, S: MemorySpace> FromPyObject<'a, 'py> for PyDynView<'py, S> {
    type Error = PyErr;

    #[inline]
    fn extract(object: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Ok(Self { arg: DynArg::extract::<S>(object, false)?, _space: core::marker::PhantomData })
    }
}

impl<'a, 'py, S: MemorySpace> FromPyObject<'a, 'py> for PyDynViewMut<'py, S> {
    type Error = PyErr;

    #[inline]
    fn extract(object: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Ok(Self { arg: DynArg::extract::<S>(object, true)?, _space: core::marker::PhantomData })
    }
}
