//! Dynamic view arguments: [`PyDynView`] and [`PyDynViewMut`], for tensors whose data type and rank
//! are known only at run time, located and borrow-checked as the typed arguments are.
//!
//! On extraction the tensor's metadata is checked as far as its footprint (the bytes it spans,
//! registered with the borrow registry) needs, and its shape and strides are copied; the rules of
//! a view are checked when one is made: a dynamic view ([`PyDynView::view`]), or a typed view
//! straight from the tensor ([`PyDynView::typed`]), one validation rather than a dynamic view's and
//! then a typed view's (a dispatch needs only the [`dtype`](PyDynView::dtype) and
//! [`rank`](PyDynView::rank) the producer gave).

use super::locate::{Located, Source, host_ready, locate};
use super::{NamedArgument, Sealed};
use crate::convert::ImportOptions;
use crate::dtype::DlElement;
use crate::error::DlpackError;
use crate::ffi::DLDeviceType;
use crate::ffi::{DLDataType, DLDevice, DLTensor};
use crate::python::borrow::{Borrow, dyn_footprint, quick_footprint, register};
use crate::python::dialect::Framework;
use crate::python::error::note_argument;
use crate::python::stream::CallerStream;
use crate::space::{Device, Host, Managed, MemorySpace};
use crate::view::{Dims, DynMdspan, DynMdspanMut, Layout, Mdspan, MdspanMut};
use core::marker::PhantomData;
use core::ops::Deref;
use pyo3::prelude::*;

/// NumPy arrays of up to this many axes are read through NumPy's struct by the dynamic view
/// arguments; more go through `__dlpack__`.
const STRUCT_AXES: usize = 8;

/// A dynamic view argument keeps up to this many axes without allocating: with 4, the argument
/// (184 bytes with 8) is small enough that moving it is a few register moves, not a `memcpy`
/// call (a fifth of `dlspan.add`'s time on three 4-element NumPy arrays went to such calls).
const DYN_INLINE_AXES: usize = 4;

/// A tensor's shape and strides, owned (inline up to [`DYN_INLINE_AXES`] axes).
enum OwnedDims {
    Inline { rank: usize, shape: [i64; DYN_INLINE_AXES], strides: [i64; DYN_INLINE_AXES] },
    Heap { shape: Box<[i64]>, strides: Box<[i64]> },
}

/// Copies `from` into `out` (of its length): a few axes, where the `memcpy` call a loop or
/// `copy_from_slice` of run-time length compiles to costs more than the copy. Each length up to
/// 8 is a copy of constant size, inlined.
fn copy_axes(out: &mut [i64], from: &[i64]) {
    fn fixed<const N: usize>(out: &mut [i64], from: &[i64]) {
        out[..N].copy_from_slice(&from[..N]);
    }
    match from.len() {
        0 => {}
        1 => fixed::<1>(out, from),
        2 => fixed::<2>(out, from),
        3 => fixed::<3>(out, from),
        4 => fixed::<4>(out, from),
        5 => fixed::<5>(out, from),
        6 => fixed::<6>(out, from),
        7 => fixed::<7>(out, from),
        8 => fixed::<8>(out, from),
        _ => out.copy_from_slice(from),
    }
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
        copy_axes(shape_out, shape);
        if null_strides {
            let mut next = 1i64;
            for (stride, &extent) in strides_out.iter_mut().zip(shape).rev() {
                *stride = next;
                next = next.checked_mul(extent.max(1))?;
            }
        } else {
            copy_axes(strides_out, read(tensor.strides));
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

/// A shared view argument whose data type and rank are known only at run time: any tensor Python
/// passes, located as [`PyView`](super::PyView) locates it (no capsule for PyTorch and NumPy) and
/// borrow-checked like it. Its [`view`](Self::view) is a [`DynMdspan`] (shape, strides, size,
/// and every other query of a dynamic view); inside a
/// [`dispatch_tensor`](crate::dtype::dispatch_tensor) on its [`dtype`](Self::dtype) and
/// [`rank`](Self::rank), [`typed`](Self::typed) gives the typed view — one generic function for
/// every dtype and rank.
///
/// ```
/// use dlspan::dtype::{Numeric, TensorVisitor, dispatch_tensor};
/// use dlspan::python::PyDynView;
/// use dlspan::{DlpackError, LayoutStrideRelaxed};
/// use dlspan::pyo3::prelude::*;
///
/// /// The number of non-zero elements of any tensor.
/// #[pyfunction(crate = "dlspan::pyo3")]
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
    /// The tensor; its `shape` and `strides` are re-pointed at `dims` whenever it is handed out.
    tensor: DLTensor,
    dims: OwnedDims,
    options: ImportOptions,
    read_only: bool,
    _borrow: Option<Borrow<'py>>,
    _source: Source<'py>,
    pub(crate) framework: Framework,
    pub(crate) stream: Option<CallerStream>,
    _space: PhantomData<S>,
}

/// A mutable view argument of run-time data type and rank: the twin of [`PyDynView`], refused as
/// [`PyViewMut`](super::PyViewMut) is (read-only memory, strides that make two indices share an
/// element, tensors that require grad, memory another live view argument overlaps). It
/// dereferences to a [`PyDynView`] for its queries and shared views, and adds the mutable ones:
/// [`view_mut`](Self::view_mut) and [`typed_mut`](Self::typed_mut).
///
/// ```
/// use dlspan::dtype::{Numeric, TensorVisitor, dispatch_tensor};
/// use dlspan::python::PyDynViewMut;
/// use dlspan::{DlpackError, LayoutStrideRelaxed};
/// use dlspan::pyo3::prelude::*;
///
/// /// Sets every element of any tensor to one.
/// #[pyfunction(crate = "dlspan::pyo3")]
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
/// #     let values = dlspan::pyo3::types::PyMemoryView::from(x.as_any())?.call_method0("tolist")?;
/// #     assert_eq!(values.extract::<Vec<i16>>()?, [1, 1, 1]);
/// #     Ok::<_, PyErr>(())
/// # })?;
/// # Ok::<(), PyErr>(())
/// ```
pub struct PyDynViewMut<'py, S: MemorySpace = Host> {
    /// Extracted as mutable: writable, registered as a mutable borrow.
    arg: PyDynView<'py, S>,
}

impl<'py, S: MemorySpace> PyDynView<'py, S> {
    /// Locates `object`'s tensor, measures and registers its footprint, and copies its shape and
    /// strides.
    fn from_object(object: Bound<'py, PyAny>, mutable: bool, name: Option<&'static str>) -> PyResult<Self> {
        let mut strides = [0i64; STRUCT_AXES];
        let located = locate(&object, mutable, &mut strides, None)?;
        Self::from_located(object, located, mutable, name)
    }

    /// The argument of a located tensor (whose shape and strides may point into the caller's
    /// stack, read before this returns): measured, registered, its shape and strides copied.
    #[inline(always)]
    fn from_located(
        object: Bound<'py, PyAny>,
        located: Located<'py>,
        mutable: bool,
        name: Option<&'static str>,
    ) -> PyResult<Self> {
        if mutable && located.read_only {
            return Err(DlpackError::ReadOnly.into());
        }
        let dims = OwnedDims::of(&located.tensor, located.options);
        let footprint =
            match dims.as_ref().and_then(|dims| quick_footprint(&located.tensor, dims.shape(), dims.strides())) {
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
            Some(footprint) => Some(register(&object, name, footprint, mutable)?),
            None => None,
        };
        Ok(Self {
            tensor: located.tensor,
            dims,
            options: located.options,
            read_only: located.read_only,
            _borrow: borrow,
            _source: located.source,
            framework: located.framework,
            stream: located.stream,
            _space: PhantomData,
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

    /// The data type, as the producer gave it (checked when a view is made): with
    /// [`rank`](Self::rank), what a dispatch needs.
    ///
    /// ```
    /// # use dlspan::pyo3::prelude::*;
    /// #[pyfunction(crate = "dlspan::pyo3")]
    /// fn dtype(x: dlspan::python::PyDynView<'_>) -> String {
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
        self.tensor.dtype
    }

    /// The rank, as the producer gave it.
    ///
    /// ```
    /// # use dlspan::pyo3::prelude::*;
    /// #[pyfunction(crate = "dlspan::pyo3")]
    /// fn rank(x: dlspan::python::PyDynView<'_>) -> usize {
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
        self.dims.shape().len()
    }

    /// The device, as the producer named it (a dynamic view's `device()` is the one it exports
    /// as: `kDLCPU` for every host view, pinned memory included).
    ///
    /// ```
    /// # use dlspan::pyo3::prelude::*;
    /// #[pyfunction(crate = "dlspan::pyo3")]
    /// fn device_type(x: dlspan::python::PyDynView<'_>) -> i32 {
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
        self.tensor.device
    }

    /// Whether the memory is read-only at its source (`READ_ONLY`, a non-writeable NumPy array, a
    /// JAX array).
    ///
    /// ```
    /// # use dlspan::python::PyDynView;
    /// # use dlspan::pyo3::prelude::*;
    /// #[pyfunction(crate = "dlspan::pyo3")]
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
        self.read_only
    }

    /// The caller's stream for the argument's device (rule Y21), as
    /// [`PyView::caller_stream`](super::PyView::caller_stream) gives it; `None` for host memory.
    ///
    /// ```
    /// # use dlspan::python::PyDynView;
    /// # use dlspan::pyo3::prelude::*;
    /// #[pyfunction(crate = "dlspan::pyo3")]
    /// fn stream_value(x: PyDynView<'_>) -> Option<i64> {
    ///     x.caller_stream().map(|s| s.dlpack_stream())
    /// }
    /// # Python::initialize();
    /// # Python::attach(|py| {
    /// #     let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![0u8; 2], [2])?)?;
    /// #     assert!(wrap_pyfunction!(stream_value, py)?.call1((x,))?.is_none());
    /// #     Ok::<_, PyErr>(())
    /// # })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    #[inline]
    pub fn caller_stream(&self) -> Option<CallerStream> {
        self.stream
    }

    /// The dynamic view of the argument, borrowing it: every rule of a dynamic view is checked
    /// now, and its queries (shape, strides, size, byte range, …) answer from then on.
    ///
    /// # Errors
    ///
    /// As [`DynMdspan::from_dltensor_with`] (the argument passed some of them already).
    ///
    /// ```
    /// # use dlspan::pyo3::prelude::*;
    /// #[pyfunction(crate = "dlspan::pyo3")]
    /// fn shape(x: dlspan::python::PyDynView<'_>) -> PyResult<Vec<usize>> {
    ///     Ok(x.view()?.shape().to_vec())
    /// }
    /// # Python::initialize();
    /// # Python::attach(|py| {
    /// #     let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![0u32; 6], [2, 3])?)?;
    /// #     assert_eq!(wrap_pyfunction!(shape, py)?.call1((x,))?.extract::<Vec<usize>>()?, [2, 3]);
    /// #     Ok::<_, PyErr>(())
    /// # })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    #[inline]
    pub fn view(&self) -> Result<DynMdspan<'_, S>, DlpackError> {
        let tensor = self.dl_tensor();
        // SAFETY: the dynamic view copies shape and strides out of `tensor` (which points into
        // this argument) and borrows the data for as long as the argument, whose source keeps it
        // alive; writes through dlspan are refused by the borrow registry while the argument lives.
        let tensor: &DLTensor = unsafe { &*(&tensor as *const DLTensor) };
        // SAFETY: as above.
        unsafe { DynMdspan::from_dltensor_with(tensor, self.options) }
    }

    /// The typed shared view of element type `T`, rank `R` and layout `L`, straight from the tensor
    /// by every rule of the typed import (one validation: no dynamic view is made first).
    ///
    /// # Errors
    ///
    /// The first typed rule that fails: [`DlpackError::DtypeMismatch`],
    /// [`DlpackError::RankMismatch`], the layout's rules, …
    ///
    /// ```
    /// # use dlspan::pyo3::prelude::*;
    /// #[pyfunction(crate = "dlspan::pyo3")]
    /// fn first(x: dlspan::python::PyDynView<'_>) -> PyResult<f32> {
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
        let tensor = self.dl_tensor();
        // SAFETY: as in `view`: the typed view copies shape and strides.
        let tensor: &DLTensor = unsafe { &*(&tensor as *const DLTensor) };
        // SAFETY: as in `view`.
        unsafe { Mdspan::from_dltensor_with(tensor, self.options) }
    }
}

impl<'py, S: MemorySpace> Deref for PyDynViewMut<'py, S> {
    type Target = PyDynView<'py, S>;

    /// The argument's queries and shared views (a shared borrow of the mutable argument, as
    /// `&MdspanMut` gives shared views).
    ///
    /// ```
    /// # use dlspan::pyo3::prelude::*;
    /// #[pyfunction(crate = "dlspan::pyo3")]
    /// fn size(x: dlspan::python::PyDynViewMut<'_>) -> PyResult<usize> {
    ///     Ok(x.view()?.size())
    /// }
    /// # Python::initialize();
    /// # Python::attach(|py| {
    /// #     let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![0u8; 6], [2, 3])?)?;
    /// #     assert_eq!(wrap_pyfunction!(size, py)?.call1((x,))?.extract::<usize>()?, 6);
    /// #     Ok::<_, PyErr>(())
    /// # })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    #[inline]
    fn deref(&self) -> &Self::Target {
        &self.arg
    }
}

impl<'py, S: MemorySpace> PyDynViewMut<'py, S> {
    /// The mutable dynamic view, borrowing the argument; see [`PyDynView::view`] for the rules
    /// (and, for a mutable view, no two indices may share an element).
    ///
    /// # Errors
    ///
    /// As [`DynMdspanMut::from_dltensor_with`].
    ///
    /// ```
    /// # use dlspan::pyo3::prelude::*;
    /// #[pyfunction(crate = "dlspan::pyo3")]
    /// fn zero(mut x: dlspan::python::PyDynViewMut<'_>) -> PyResult<()> {
    ///     let view = x.view_mut()?;
    ///     let bytes = view.byte_range().len();
    ///     view.into_typed::<u8, 1, dlspan::LayoutRight>()?.for_each_unordered(|b| *b = 0);
    ///     assert_eq!(bytes, 3);
    ///     Ok(())
    /// }
    /// # Python::initialize();
    /// # Python::attach(|py| {
    /// #     let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![7u8; 3], [3])?)?;
    /// #     wrap_pyfunction!(zero, py)?.call1((&x,))?;
    /// #     let values = dlspan::pyo3::types::PyMemoryView::from(x.as_any())?.call_method0("tolist")?;
    /// #     assert_eq!(values.extract::<Vec<u8>>()?, [0, 0, 0]);
    /// #     Ok::<_, PyErr>(())
    /// # })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    #[inline]
    pub fn view_mut(&mut self) -> Result<DynMdspanMut<'_, S>, DlpackError> {
        let tensor = self.arg.dl_tensor();
        // SAFETY: as in `PyDynView::view`; the memory is writable (refused at extraction
        // otherwise) and no other dlspan view reaches it while the argument lives (registered as
        // mutable), and `&mut self` makes this view the only one of the argument.
        let tensor: &DLTensor = unsafe { &*(&tensor as *const DLTensor) };
        // SAFETY: as above.
        unsafe { DynMdspanMut::from_dltensor_with(tensor, self.arg.options) }
    }

    /// The typed mutable view, borrowing the argument; see [`PyDynView::typed`] for the rules.
    ///
    /// # Errors
    ///
    /// As [`PyDynView::typed`].
    ///
    /// ```
    /// # use dlspan::python::PyDynViewMut;
    /// # use dlspan::pyo3::prelude::*;
    /// #[pyfunction(crate = "dlspan::pyo3")]
    /// fn negate(mut x: PyDynViewMut<'_>) -> PyResult<()> {
    ///     x.typed_mut::<i32, 1, dlspan::LayoutStrideRelaxed>()?.for_each_unordered(|v| *v = -*v);
    ///     Ok(())
    /// }
    /// # Python::initialize();
    /// # Python::attach(|py| {
    /// #     let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![1i32, -2], [2])?)?;
    /// #     wrap_pyfunction!(negate, py)?.call1((&x,))?;
    /// #     let values = dlspan::pyo3::types::PyMemoryView::from(x.as_any())?.call_method0("tolist")?;
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
        // SAFETY: as in `view_mut`.
        let tensor: &DLTensor = unsafe { &*(&tensor as *const DLTensor) };
        // SAFETY: as in `view_mut`.
        unsafe { MdspanMut::from_dltensor_with(tensor, self.arg.options) }
    }
}

impl<'a, 'py, S: MemorySpace> FromPyObject<'a, 'py> for PyDynView<'py, S> {
    type Error = PyErr;

    #[inline]
    fn extract(object: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Self::from_object(object.to_owned(), false, None)
    }
}

impl<'a, 'py, S: MemorySpace> FromPyObject<'a, 'py> for PyDynViewMut<'py, S> {
    type Error = PyErr;

    #[inline]
    fn extract(object: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Ok(Self { arg: PyDynView::from_object(object.to_owned(), true, None)? })
    }
}

impl<S: MemorySpace> Sealed for PyDynView<'_, S> {}

impl<'py, S: MemorySpace> NamedArgument<'py> for PyDynView<'py, S> {
    #[inline]
    fn extract_named(object: Bound<'py, PyAny>, name: Option<&'static str>) -> PyResult<Self> {
        Self::from_object(object, false, name)
    }
}

impl<S: MemorySpace> Sealed for PyDynViewMut<'_, S> {}

impl<'py, S: MemorySpace> NamedArgument<'py> for PyDynViewMut<'py, S> {
    #[inline]
    fn extract_named(object: Bound<'py, PyAny>, name: Option<&'static str>) -> PyResult<Self> {
        Ok(Self { arg: PyDynView::from_object(object, true, name)? })
    }
}

/// Where a host argument went instead ([`PyDynView::extract_or_device`]): its tensor is in CUDA
/// device memory or CUDA managed memory — the argument of that space, boxed, checked as a
/// [`PyDynView`] of that space is — or the extraction failed (the error noted with the argument's
/// name, as [`extract_argument`](super::extract_argument) notes it).
pub enum OffHost<'py> {
    /// CUDA device memory (`kDLCUDA`).
    Device(Box<PyDynView<'py, Device>>),
    /// CUDA managed memory (`kDLCUDAManaged`).
    Managed(Box<PyDynView<'py, Managed>>),
    /// The extraction's error: every other device is refused as a host argument is.
    Failed(PyErr),
}

/// The mutable twin of [`OffHost`] ([`PyDynViewMut::extract_or_device`]).
pub enum OffHostMut<'py> {
    /// CUDA device memory (`kDLCUDA`).
    Device(Box<PyDynViewMut<'py, Device>>),
    /// CUDA managed memory (`kDLCUDAManaged`).
    Managed(Box<PyDynViewMut<'py, Managed>>),
    /// The extraction's error.
    Failed(PyErr),
}

impl<'py> OffHost<'py> {
    /// The argument of a tensor located in CUDA device or managed memory (whose shape and strides
    /// may point into the caller's stack, read before this returns), or its error.
    #[cold]
    #[inline(never)]
    fn on_device(object: Bound<'py, PyAny>, located: Located<'py>, mutable: bool, name: &'static str) -> Self {
        let made = if located.tensor.device.device_type == DLDeviceType::kDLCUDA {
            PyDynView::from_located(object, located, mutable, Some(name)).map(|x| Self::Device(Box::new(x)))
        } else {
            PyDynView::from_located(object, located, mutable, Some(name)).map(|x| Self::Managed(Box::new(x)))
        };
        made.unwrap_or_else(|err| Self::Failed(note_argument(err, name)))
    }
}

impl<'py> PyDynView<'py, Host> {
    /// Extracts the argument `name` as [`extract_argument`](super::extract_argument) does, but
    /// for a tensor in CUDA device or managed memory, which it hands back as the argument of that
    /// space ([`OffHost`]) rather than refusing it: the tensor is located once (a capsule is
    /// consumed once, a producer's `__dlpack__` called once). For functions with a host path and
    /// a device path; the host path costs what `extract_argument` costs (one branch more).
    ///
    /// # Errors
    ///
    /// [`OffHost::Failed`]: what `extract_argument` raises, for host and device arguments alike.
    ///
    /// ```
    /// use dlspan::python::{OffHost, PyDynView};
    /// use dlspan::pyo3::prelude::*;
    ///
    /// /// Where an array is.
    /// #[pyfunction(crate = "dlspan::pyo3")]
    /// fn space(x: &Bound<'_, PyAny>) -> PyResult<&'static str> {
    ///     Ok(match PyDynView::extract_or_device(x, "x") {
    ///         Ok(_host) => "host",
    ///         Err(OffHost::Device(_)) => "device",
    ///         Err(OffHost::Managed(_)) => "managed",
    ///         Err(OffHost::Failed(err)) => return Err(err),
    ///     })
    /// }
    /// # Python::initialize();
    /// # Python::attach(|py| {
    /// #     let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![0u8; 2], [2])?)?;
    /// #     assert_eq!(wrap_pyfunction!(space, py)?.call1((x,))?.extract::<String>()?, "host");
    /// #     Ok::<_, PyErr>(())
    /// # })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    #[inline]
    pub fn extract_or_device(object: &Bound<'py, PyAny>, name: &'static str) -> Result<Self, OffHost<'py>> {
        Self::host_or_device(object, false, name)
    }

    /// Locates the tensor once: the host argument inline, the others out of line.
    #[inline(always)]
    fn host_or_device(object: &Bound<'py, PyAny>, mutable: bool, name: &'static str) -> Result<Self, OffHost<'py>> {
        let object = object.clone();
        let mut strides = [0i64; STRUCT_AXES];
        let located = match locate(&object, mutable, &mut strides, None) {
            Ok(located) => located,
            Err(err) => return Err(OffHost::Failed(note_argument(err, name))),
        };
        if matches!(located.tensor.device.device_type, DLDeviceType::kDLCUDA | DLDeviceType::kDLCUDAManaged) {
            return Err(OffHost::on_device(object, located, mutable, name));
        }
        Self::from_located(object, located, mutable, Some(name))
            .map_err(|err| OffHost::Failed(note_argument(err, name)))
    }
}

impl<'py> PyDynViewMut<'py, Host> {
    /// The mutable twin of [`PyDynView::extract_or_device`]: the argument extracted as
    /// [`extract_argument`](super::extract_argument) extracts a `PyDynViewMut`, or handed back in
    /// its device space ([`OffHostMut`]).
    ///
    /// # Errors
    ///
    /// [`OffHostMut::Failed`]: what `extract_argument` raises (read-only memory included).
    ///
    /// ```
    /// use dlspan::python::{OffHostMut, PyDynViewMut};
    /// use dlspan::pyo3::prelude::*;
    ///
    /// /// Whether an array is writable host memory.
    /// #[pyfunction(crate = "dlspan::pyo3")]
    /// fn writable_host(x: &Bound<'_, PyAny>) -> PyResult<bool> {
    ///     match PyDynViewMut::extract_or_device(x, "x") {
    ///         Ok(_) => Ok(true),
    ///         Err(OffHostMut::Failed(err)) => Err(err),
    ///         Err(_) => Ok(false),
    ///     }
    /// }
    /// # Python::initialize();
    /// # Python::attach(|py| {
    /// #     let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![0u8; 2], [2])?)?;
    /// #     assert!(wrap_pyfunction!(writable_host, py)?.call1((x,))?.extract::<bool>()?);
    /// #     Ok::<_, PyErr>(())
    /// # })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    #[inline]
    pub fn extract_or_device(object: &Bound<'py, PyAny>, name: &'static str) -> Result<Self, OffHostMut<'py>> {
        match PyDynView::host_or_device(object, true, name) {
            Ok(arg) => Ok(Self { arg }),
            Err(OffHost::Device(arg)) => Err(OffHostMut::Device(Box::new(PyDynViewMut { arg: *arg }))),
            Err(OffHost::Managed(arg)) => Err(OffHostMut::Managed(Box::new(PyDynViewMut { arg: *arg }))),
            Err(OffHost::Failed(err)) => Err(OffHostMut::Failed(err)),
        }
    }
}
