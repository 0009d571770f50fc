//! Results in the caller's framework (rule Y19): [`Output`] allocates a tensor, lends it to Rust as
//! a mutable view, and hands it to Python as the type the caller passed in — a NumPy array, a
//! `torch.Tensor`, a JAX array, or a `dlspan.Tensor` — without copying.
//!
//! NumPy and JAX receive dlspan memory (64-byte aligned, so JAX does not copy it) through their own
//! `from_dlpack`; PyTorch allocates the memory itself, through its exchange table's
//! `managed_tensor_allocator`, and wraps it with `managed_tensor_to_py_object_no_sync`, so that
//! PyTorch's allocator owns what PyTorch frees. Every other caller gets a `dlspan.Tensor` of the
//! process's class ([`into_tensor`]).

use super::arg::{PyDynView, PyDynViewMut, PyView, PyViewMut};
use super::capi::{Provider, provider};
use super::capsule::take_capsule;
use super::device::CPU;
use super::dialect::Framework;
use super::error::ExchangeError;
use super::package::into_tensor;
use super::producer::shared_versioned;
use super::stream::{CallerStream, StreamSource};
use super::tensor::Tensor;
use crate::dlpack::{FromDlTensor, ImportOptions};
use crate::dtype::DlElement;
use crate::error::DlpackError;
use crate::ffi::{DLDataType, DLDataTypeCode, DLDevice, DLDeviceType, DLPackExchangeAPI, DLPackVersion, DLTensor};
use crate::index::{Extents, Layout};
use crate::owned::ManagedTensor;
use crate::space::{Host, MemorySpace};
use crate::view::{DynMdspanMut, HostMdspanMut, LayoutRight};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyString;
#[cfg(feature = "cuda")]
use torch::torch_current_stream;
use torch::{set_error, torch_api};

mod torch;

/// A view argument, which knows the framework its tensor came from (sealed: the four argument
/// types of `dlspan::python`).
pub trait Argument: sealed::Sealed {
    /// The framework of the object the argument was extracted from.
    ///
    /// ```
    /// use dlspan::python::{Argument, Framework, PyView};
    /// use dlspan::pyo3::prelude::*;
    /// #[pyfunction(crate = "dlspan::pyo3")]
    /// fn from_dlspan(x: PyView<'_, f32, 1>) -> bool {
    ///     x.framework() == Framework::Dlspan
    /// }
    /// # Python::initialize();
    /// # Python::attach(|py| {
    /// #     let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![0f32; 2], [2])?)?;
    /// #     assert!(wrap_pyfunction!(from_dlspan, py)?.call1((x,))?.extract::<bool>()?);
    /// #     Ok::<_, PyErr>(())
    /// # })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    fn framework(&self) -> Framework;

    /// The caller's stream of a device argument ([rule Y21](crate::rules#y21)); `None` for host
    /// memory. [`Output::like`] allocates on its device.
    ///
    /// ```
    /// use dlspan::python::{Argument, PyDynView};
    /// use dlspan::pyo3::prelude::*;
    /// #[pyfunction(crate = "dlspan::pyo3")]
    /// fn on_host(x: PyDynView<'_>) -> bool {
    ///     Argument::caller_stream(&x).is_none()
    /// }
    /// # Python::initialize();
    /// # Python::attach(|py| {
    /// #     let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![0f32; 2], [2])?)?;
    /// #     assert!(wrap_pyfunction!(on_host, py)?.call1((x,))?.extract::<bool>()?);
    /// #     Ok::<_, PyErr>(())
    /// # })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    fn caller_stream(&self) -> Option<CallerStream>;
}

mod sealed {
    pub trait Sealed {}
}

impl<T, const R: usize, L: Layout, E: Extents<R>, S: MemorySpace> sealed::Sealed for PyView<'_, T, R, L, E, S> {}
impl<T, const R: usize, L: Layout, E: Extents<R>, S: MemorySpace> Argument for PyView<'_, T, R, L, E, S> {
    fn framework(&self) -> Framework {
        self.framework
    }
    fn caller_stream(&self) -> Option<CallerStream> {
        self.stream
    }
}
impl<T, const R: usize, L: Layout, E: Extents<R>, S: MemorySpace> sealed::Sealed for PyViewMut<'_, T, R, L, E, S> {}
impl<T, const R: usize, L: Layout, E: Extents<R>, S: MemorySpace> Argument for PyViewMut<'_, T, R, L, E, S> {
    fn framework(&self) -> Framework {
        self.framework
    }
    fn caller_stream(&self) -> Option<CallerStream> {
        self.stream
    }
}
impl<S: MemorySpace> sealed::Sealed for PyDynView<'_, S> {}
impl<S: MemorySpace> Argument for PyDynView<'_, S> {
    fn framework(&self) -> Framework {
        self.framework
    }
    fn caller_stream(&self) -> Option<CallerStream> {
        self.stream
    }
}
impl<S: MemorySpace> sealed::Sealed for PyDynViewMut<'_, S> {}
impl<S: MemorySpace> Argument for PyDynViewMut<'_, S> {
    fn framework(&self) -> Framework {
        self.framework
    }
    fn caller_stream(&self) -> Option<CallerStream> {
        PyDynView::caller_stream(&**self)
    }
}

/// Whether `framework` holds tensors of `dtype` (what its `from_dlpack`, or PyTorch's allocator,
/// takes: NumPy 2.4, PyTorch 2.15 and JAX 0.10 measured). NumPy's ml_dtypes types are held when
/// NumPy knows their names (see [`numpy_array`]).
fn holds(framework: Framework, dtype: DLDataType) -> bool {
    use DLDataTypeCode as C;
    if dtype.lanes != 1 {
        // PyTorch's `float4_e2m1fn_x2`: two packed FP4 values per byte.
        return framework == Framework::PyTorch && dtype == DLDataType::new(C::kDLFloat4_e2m1fn, 4, 2);
    }
    let code = dtype.type_code();
    let bits = dtype.bits;
    let common = matches!((code, bits), (C::kDLBool, 8) | (C::kDLInt | C::kDLUInt, 8 | 16 | 32 | 64))
        || matches!((code, bits), (C::kDLFloat, 16 | 32 | 64) | (C::kDLComplex, 64 | 128));
    let fp8_torch =
        matches!(code, C::kDLFloat8_e4m3fn | C::kDLFloat8_e4m3fnuz | C::kDLFloat8_e5m2 | C::kDLFloat8_e5m2fnuz)
            || code == C::kDLFloat8_e8m0fnu;
    let fp8 = fp8_torch || matches!(code, C::kDLFloat8_e3m4 | C::kDLFloat8_e4m3 | C::kDLFloat8_e4m3b11fnuz);
    match framework {
        Framework::NumPy => common,
        Framework::Jax => common || (code, bits) == (C::kDLBfloat, 16) || (fp8 && bits == 8),
        Framework::PyTorch => {
            common
                || (code, bits) == (C::kDLBfloat, 16)
                || (code, bits) == (C::kDLComplex, 32)
                || (fp8_torch && bits == 8)
        }
        Framework::Dlspan | Framework::Other => true,
    }
}

/// Where the memory of an [`Output`] comes from, and how it is handed to Python.
enum Memory<'py> {
    /// dlspan's buffer, kept by `tensor` (of this build's class, shared with no one until
    /// `finish`), described by `dl` (whose arrays point into the tensor); handed to Python as the
    /// framework's array (NumPy, JAX) or a `dlspan.Tensor`.
    Dlspan { tensor: Bound<'py, Tensor>, dl: DLTensor, framework: Framework },
    /// PyTorch's, from its exchange table, owned by the managed tensor it handed out.
    Torch(&'static DLPackExchangeAPI, ManagedTensor),
    /// A CuPy array from `cupy.empty` on the caller's device and stream, and its managed tensor
    /// (shared with no one: the array was made here).
    CuPy { array: Bound<'py, PyAny>, tensor: ManagedTensor },
}

/// A new tensor for a result, lent to Rust as mutable views and handed to Python as the caller's
/// type ([rule Y19](crate::rules#y19)): [`like`](Self::like) an argument (a NumPy array for NumPy
/// inputs, a `torch.Tensor` for PyTorch inputs, a JAX array for JAX inputs, a `dlspan.Tensor`
/// otherwise), zero-copy, in one call. On the CPU the memory is zeroed and row-major: PyTorch's
/// own (its allocator, so PyTorch frees it), or dlspan's 64-byte-aligned buffers wrapped by
/// NumPy's and JAX's `from_dlpack`. A data type the caller's framework cannot hold (NumPy has no
/// `int128` nor, without ml_dtypes, `bfloat16`; no framework but dlspan holds packed FP6) gives a
/// `dlspan.Tensor`: [`framework`](Self::framework) says which. Like a device argument, the output
/// is on its device, for the extension to write on the caller's stream ([`on_device`](Self::on_device),
/// [rule Y22](crate::rules#y22)) or on a stream of its own: the output's device views are ordered
/// after its allocation (the work the caller's stream had pending on a reused block included), and
/// [`finish`](Self::finish) orders the caller's stream after every launch on them, on the device.
///
/// ```
/// use dlspan::python::{Output, PyView};
/// use dlspan::pyo3::prelude::*;
///
/// /// `2 * x`, in the caller's framework.
/// #[pyfunction(crate = "dlspan::pyo3")]
/// fn double<'py>(py: Python<'py>, x: PyView<'py, f32, 1>) -> PyResult<Bound<'py, PyAny>> {
///     let mut out = Output::like(py, &x, dlspan::dtype::dtype_of::<f32>(), &[x.view().size()])?;
///     out.view_mut::<f32, 1>()?.zip_with(&x.view(), |o, &x| *o = 2.0 * x)?;
///     out.finish()
/// }
/// # Python::initialize();
/// # Python::attach(|py| {
/// #     let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![1f32, 2.0], [2])?)?;
/// #     let r = wrap_pyfunction!(double, py)?.call1((x,))?;
/// #     let values = dlspan::pyo3::types::PyMemoryView::from(&r)?.call_method0("tolist")?;
/// #     assert_eq!(values.extract::<Vec<f32>>()?, [2.0, 4.0]);
/// #     Ok::<_, PyErr>(())
/// # })?;
/// # Ok::<(), PyErr>(())
/// ```
pub struct Output<'py> {
    py: Python<'py>,
    memory: Memory<'py>,
    /// The caller's stream, for device memory.
    stream: Option<CallerStream>,
    /// For a framework's device memory: its current stream when its allocator made the tensor, in
    /// whose order it frees and reuses the memory (`finish` orders that stream after the
    /// extension's launches, on the device). `None` when it could not be read: `finish` then
    /// waits on the host, as a managed tensor's release does.
    release: Option<usize>,
}

impl<'py> Output<'py> {
    /// A zeroed tensor of `dtype` and `shape` to be handed to Python as `framework`'s type.
    ///
    /// # Errors
    ///
    /// `BufferError` for a size that does not fit ([`DlpackError::SpanOverflow`],
    /// [`DlpackError::AllocationFailed`]); `TypeError` for a data type dlspan does not hold
    /// ([`DlpackError::UnsupportedDtype`]); what PyTorch's allocator raises; `ImportError` when the
    /// framework's module cannot be imported.
    ///
    /// ```
    /// use dlspan::python::{Framework, Output};
    /// use dlspan::pyo3::prelude::*;
    /// Python::initialize();
    /// Python::attach(|py| {
    ///     let mut out = Output::new(py, Framework::Dlspan, dlspan::dtype::dtype_of::<i32>(), &[2, 2])?;
    ///     out.view_mut::<i32, 2>()?[[1, 0]] = 7;
    ///     let tensor = out.finish()?;
    ///     assert_eq!(tensor.getattr("shape")?.extract::<(i64, i64)>()?, (2, 2));
    ///     Ok::<_, PyErr>(())
    /// })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    pub fn new(py: Python<'py>, framework: Framework, dtype: DLDataType, shape: &[usize]) -> PyResult<Self> {
        let shape = shape
            .iter()
            .map(|&e| i64::try_from(e).map_err(|_| DlpackError::SpanOverflow))
            .collect::<Result<Vec<i64>, _>>()?;
        let framework = match framework {
            _ if holds(framework, dtype) => framework,
            // ml_dtypes types, when NumPy knows their names.
            Framework::NumPy if numpy_dtype(py, dtype)?.is_some() => framework,
            _ => Framework::Dlspan,
        };
        if framework == Framework::PyTorch {
            return Self::torch(py, dtype, &shape, None);
        }
        let tensor = Tensor::zeroed(py, &shape, dtype)?;
        let dl = tensor.get().meta.dl_tensor();
        Ok(Self { py, memory: Memory::Dlspan { tensor, dl, framework }, stream: None, release: None })
    }

    /// A tensor of `dtype` and `shape` on the device of `stream`, the caller's stream of a device
    /// argument ([rule Y21](crate::rules#y21)), to be handed to Python as `framework`'s type, for
    /// an extension that writes it on that stream:
    ///
    /// - PyTorch tensors come from PyTorch's allocator (its caching allocator, on its current
    ///   stream), and their contents are unspecified, as `torch.empty`'s: write every element;
    /// - CuPy arrays (a CuPy caller's stream) come from `cupy.empty` on the device;
    /// - for JAX arrays and `dlspan.Tensor`s (callers on the driver's default streams), dlspan
    ///   allocates zeroed memory on the device (feature `cuda`), and `finish` orders every later
    ///   reader's stream after the extension's writes (DLPack's producer rule).
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new); `TypeError` when the framework holds no arrays of `dtype` and its
    /// stream is not one dlspan's own memory can be written on (a PyTorch or CuPy stream);
    /// `BufferError` for CUDA managed memory (which no framework allocates) and, without feature
    /// `cuda`, for memory dlspan would allocate; the driver's errors as `cuda::CudaError`'s (feature `cuda`).
    ///
    /// ```no_run
    /// use dlspan::python::{Output, PyDeviceView};
    /// use dlspan::{DeviceMdspanMut, LayoutRight};
    /// use dlspan::pyo3::prelude::*;
    /// /// A tensor shaped as `x`, on its device, in its framework.
    /// #[pyfunction(crate = "dlspan::pyo3")]
    /// fn empty_like<'py>(py: Python<'py>, x: PyDeviceView<'py, f32, 1>) -> PyResult<Bound<'py, PyAny>> {
    ///     let stream = x.caller_stream().expect("a device argument has a stream");
    ///     let mut out = Output::on_device(py, dlspan::python::Argument::framework(&x), stream, dlspan::dtype::dtype_of::<f32>(), &[x.view().size()])?;
    ///     let view = out.view_mut_as::<DeviceMdspanMut<'_, f32, 1, LayoutRight>>()?;
    ///     assert_eq!(view.size(), x.view().size());
    ///     out.finish()
    /// }
    /// ```
    pub fn on_device(
        py: Python<'py>,
        framework: Framework,
        stream: CallerStream,
        dtype: DLDataType,
        shape: &[usize],
    ) -> PyResult<Self> {
        let shape = shape
            .iter()
            .map(|&e| i64::try_from(e).map_err(|_| DlpackError::SpanOverflow))
            .collect::<Result<Vec<i64>, _>>()?;
        let device = stream.device();
        if device.device_type != DLDeviceType::kDLCUDA {
            return Err(ExchangeError::DeviceUnavailable { requested: device, found: CPU }.into());
        }
        if framework == Framework::PyTorch && holds(framework, dtype) {
            return Self::torch(py, dtype, &shape, Some(stream));
        }
        if stream.source() == StreamSource::CuPy
            && let Some((array, tensor, release)) = cupy_empty(py, device, dtype, &shape)?
        {
            // SAFETY: the stream CuPy's pool made the array on (or, where it could not be
            // read, the caller's: CuPy's current stream too), which CuPy keeps alive while it
            // is current, through this call.
            #[cfg(feature = "cuda")]
            unsafe {
                tensor.lend_after(release.unwrap_or(stream.handle()) as cudarc::driver::sys::CUstream)
            };
            return Ok(Self { py, memory: Memory::CuPy { array, tensor }, stream: Some(stream), release });
        }
        // dlspan's own memory, allocated on the per-thread default stream: given to callers on the
        // driver's default streams only. Its views are ordered after the allocation and `finish`
        // orders the caller's stream after them on any stream, but the memory is freed on the
        // per-thread default stream, which a framework's own streams are not ordered with: a
        // PyTorch or CuPy caller's reads on its stream could outlast the memory.
        if !matches!(stream.handle(), 0..=2) {
            let (name, on) = (framework_name(framework, stream), super::error::device_name(device));
            let why = if holds(framework, dtype) || stream.source() == StreamSource::CuPy {
                format!("{name} gives no way to allocate {dtype} arrays on {on}")
            } else {
                format!("{name} holds no {dtype} arrays on {on}")
            };
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "{why}, and dlspan's own memory cannot be ordered with the caller's stream (only with the \
                 default streams)"
            )));
        }
        let framework = if holds(framework, dtype) { framework } else { Framework::Dlspan };
        #[cfg(feature = "cuda")]
        {
            let tensor = super::device_memory::zeroed_on(py, &shape, dtype, device)?;
            if let Some(owner) = tensor.get().managed() {
                // SAFETY: the per-thread default stream (the driver's handle), which the memory was
                // allocated and zeroed on.
                unsafe { owner.lend_after(super::device::PER_THREAD as cudarc::driver::sys::CUstream) };
            }
            let dl = tensor.get().meta.dl_tensor();
            Ok(Self { py, memory: Memory::Dlspan { tensor, dl, framework }, stream: Some(stream), release: None })
        }
        #[cfg(not(feature = "cuda"))]
        {
            let _ = framework;
            Err(pyo3::exceptions::PyBufferError::new_err(format!(
                "an output on {} for a {} caller is dlspan's own device memory, which needs dlspan's `cuda` feature",
                super::error::device_name(device),
                framework_name(framework, stream),
            )))
        }
    }

    /// A zeroed tensor of `dtype` and `shape` to be handed to Python as `argument`'s framework's
    /// type: [`new`](Self::new) with [`Argument::framework`].
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    ///
    /// ```
    /// use dlspan::python::{Output, PyDynView};
    /// use dlspan::pyo3::prelude::*;
    /// /// A tensor of zeros shaped and typed as `x`, in `x`'s framework.
    /// #[pyfunction(crate = "dlspan::pyo3")]
    /// fn zeros_like<'py>(py: Python<'py>, x: PyDynView<'py>) -> PyResult<Bound<'py, PyAny>> {
    ///     let shape = x.view()?.shape().to_vec();
    ///     Output::like(py, &x, x.dtype(), &shape)?.finish()
    /// }
    /// # Python::initialize();
    /// # Python::attach(|py| {
    /// #     let x = dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![1u8; 6], [2, 3])?)?;
    /// #     let z = wrap_pyfunction!(zeros_like, py)?.call1((x,))?;
    /// #     assert_eq!(z.getattr("shape")?.extract::<(i64, i64)>()?, (2, 3));
    /// #     Ok::<_, PyErr>(())
    /// # })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    pub fn like(py: Python<'py>, argument: &impl Argument, dtype: DLDataType, shape: &[usize]) -> PyResult<Self> {
        match argument.caller_stream() {
            Some(stream) => Self::on_device(py, argument.framework(), stream, dtype, shape),
            None => Self::new(py, argument.framework(), dtype, shape),
        }
    }

    /// The caller's stream of a device output ([`on_device`](Self::on_device), or [`like`](Self::like)
    /// a device argument), on which the extension writes it; `None` on the host.
    ///
    /// ```
    /// use dlspan::python::{Framework, Output};
    /// use dlspan::pyo3::prelude::*;
    /// Python::initialize();
    /// Python::attach(|py| {
    ///     let out = Output::new(py, Framework::NumPy, dlspan::dtype::dtype_of::<f32>(), &[3])?;
    ///     assert!(out.caller_stream().is_none());
    ///     Ok::<_, PyErr>(())
    /// })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    pub fn caller_stream(&self) -> Option<CallerStream> {
        self.stream
    }

    /// PyTorch's memory, from its allocator: on the CPU zeroed, on `stream`'s device as PyTorch
    /// gives it.
    fn torch(py: Python<'py>, dtype: DLDataType, shape: &[i64], stream: Option<CallerStream>) -> PyResult<Self> {
        let api = torch_api(py)?;
        let allocate = api
            .managed_tensor_allocator
            .ok_or_else(|| exception("RuntimeError", "PyTorch's exchange table has no allocator".into()))?;
        let mut prototype = DLTensor {
            data: core::ptr::null_mut(),
            device: stream.map_or(CPU, |s| s.device()),
            ndim: shape.len() as i32,
            dtype,
            shape: shape.as_ptr().cast_mut(),
            strides: core::ptr::null_mut(),
            byte_offset: 0,
        };
        let mut raw = core::ptr::null_mut();
        let mut error: Option<(String, String)> = None;
        // SAFETY: PyTorch's allocator (a live static table), attached; the prototype's shape has
        // `ndim` entries and outlives the call, `raw` is a writable slot, and `set_error` writes
        // only the `Option` behind `error_ctx`, which outlives the call.
        let status = unsafe { allocate(&mut prototype, &mut raw, (&raw mut error).cast(), Some(set_error)) };
        if status != 0 || raw.is_null() {
            let (kind, message) = error.unwrap_or_else(|| ("RuntimeError".into(), "PyTorch's allocator failed".into()));
            return Err(exception(&kind, message));
        }
        // SAFETY: a fresh managed tensor from PyTorch's allocator, whose ownership passes here;
        // nothing else reaches its memory until `finish` hands it back.
        let mut tensor = unsafe { ManagedTensor::from_raw_versioned(raw) }?;
        if stream.is_some() {
            // Device memory is never read on the host: it stays as PyTorch gives it.
            if tensor.device() != prototype.device {
                let err = ExchangeError::DeviceUnavailable { requested: prototype.device, found: tensor.device() };
                return Err(err.into());
            }
            // Only a build that launches kernels lends views ordered by an event to release.
            #[cfg(feature = "cuda")]
            let release = stream.and_then(|s| torch_current_stream(py, api, s.device()));
            #[cfg(not(feature = "cuda"))]
            let release = None;
            #[cfg(feature = "cuda")]
            if let Some(caller) = stream {
                // SAFETY: the stream PyTorch's allocator made the tensor on (or, where it could not
                // be read, the caller's: PyTorch's current stream too), which PyTorch keeps alive
                // while it is current, through this call.
                unsafe { tensor.lend_after(release.unwrap_or(caller.handle()) as cudarc::driver::sys::CUstream) };
            }
            return Ok(Self { py, memory: Memory::Torch(api, tensor), stream, release });
        }
        // PyTorch's allocator does not initialise the memory: zero it before any view reads it.
        let view = tensor.view_mut_as::<DynMdspanMut<'_, Host>>()?;
        let (base, range) = (view.data_handle().cast::<u8>(), view.byte_range());
        if !range.is_empty() {
            // The first byte an element occupies, at or after `data` (rule I15).
            let first = base.wrapping_add(range.start - base.addr());
            // SAFETY: the bytes the fresh tensor's elements occupy, which it owns alone and
            // PyTorch allocated for it; zero bytes are a valid value of every element type.
            unsafe { core::ptr::write_bytes(first, 0, range.len()) };
        }
        Ok(Self { py, memory: Memory::Torch(api, tensor), stream: None, release: None })
    }

    /// The type [`finish`](Self::finish) gives: the caller's framework, or
    /// [`Framework::Dlspan`] when that framework cannot hold the data type.
    ///
    /// ```
    /// use dlspan::python::{Framework, Output};
    /// use dlspan::pyo3::prelude::*;
    /// Python::initialize();
    /// Python::attach(|py| {
    ///     let int128 = dlspan::dtype::dtype_of::<i128>();
    ///     assert_eq!(Output::new(py, Framework::NumPy, int128, &[2])?.framework(), Framework::Dlspan);
    ///     Ok::<_, PyErr>(())
    /// })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    pub fn framework(&self) -> Framework {
        match self.memory {
            Memory::Dlspan { framework, .. } => framework,
            Memory::Torch(..) => Framework::PyTorch,
            Memory::CuPy { .. } => Framework::Other,
        }
    }

    /// A mutable row-major view of the tensor, of element type `T` and rank `R`.
    ///
    /// # Errors
    ///
    /// As [`ManagedTensor::view_mut`]: [`DlpackError::DtypeMismatch`] and
    /// [`DlpackError::RankMismatch`] for another type or rank.
    ///
    /// ```
    /// use dlspan::python::{Framework, Output};
    /// use dlspan::pyo3::prelude::*;
    /// Python::initialize();
    /// Python::attach(|py| {
    ///     let mut out = Output::new(py, Framework::Other, dlspan::dtype::dtype_of::<u8>(), &[3])?;
    ///     assert!(out.view_mut::<u16, 1>().is_err());
    ///     out.view_mut::<u8, 1>()?.as_mut_slice().unwrap().copy_from_slice(&[1, 2, 3]);
    ///     Ok::<_, PyErr>(())
    /// })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    pub fn view_mut<T: DlElement, const R: usize>(
        &mut self,
    ) -> Result<HostMdspanMut<'_, T, R, LayoutRight>, DlpackError> {
        self.view_mut_as()
    }

    /// A mutable view of any view type: dynamic ([`DynMdspanMut`](crate::DynMdspanMut)), packed,
    /// static extents.
    ///
    /// # Errors
    ///
    /// As [`ManagedTensor::view_mut_as`].
    ///
    /// ```
    /// use dlspan::{DynMdspanMut, python::{Framework, Output}};
    /// use dlspan::pyo3::prelude::*;
    /// Python::initialize();
    /// Python::attach(|py| {
    ///     let mut out = Output::new(py, Framework::Dlspan, dlspan::dtype::dtype_of::<f64>(), &[4, 2])?;
    ///     let view = out.view_mut_as::<DynMdspanMut<'_>>()?;
    ///     assert_eq!(view.shape(), &[4, 2]);
    ///     Ok::<_, PyErr>(())
    /// })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    pub fn view_mut_as<'s, V: FromDlTensor<'s>>(&'s mut self) -> Result<V, DlpackError> {
        match &mut self.memory {
            Memory::Torch(_, tensor) | Memory::CuPy { tensor, .. } => tensor.view_mut_as(),
            Memory::Dlspan { dl, tensor, .. } => {
                // SAFETY: `dl` describes the zeroed, writable, row-major buffer of a validated
                // tensor that `self` keeps alive, with arrays in that tensor's metadata: the view
                // (borrowing `self` for `'s`) cannot outlive them. Nothing else reaches the tensor
                // (made here, handed on only by `finish`, which consumes `self`), and `&'s mut
                // self` makes this view the only one.
                let view = unsafe { V::from_dltensor_with(dl, ImportOptions::CURRENT) }?;
                // Device memory: the view's launches, on any stream, are ordered by the event of
                // the managed tensor that owns the memory (after its allocation; `finish` orders
                // the caller's stream after them). The event lives in that tensor, unmoved while
                // `self` keeps it.
                #[cfg(feature = "cuda")]
                if let Some(order) = tensor.get().managed().and_then(ManagedTensor::lent_order) {
                    return Ok(view.with_order(order));
                }
                #[cfg(not(feature = "cuda"))]
                let _ = tensor;
                Ok(view)
            }
        }
    }

    /// The tensor, handed to Python as the caller's type (see [`framework`](Self::framework)).
    ///
    /// # Errors
    ///
    /// What the framework's `from_dlpack` or PyTorch's `managed_tensor_to_py_object_no_sync`
    /// raises.
    ///
    /// ```
    /// use dlspan::python::{Framework, Output};
    /// use dlspan::pyo3::prelude::*;
    /// Python::initialize();
    /// Python::attach(|py| {
    ///     let out = Output::new(py, Framework::Other, dlspan::dtype::dtype_of::<f32>(), &[0])?;
    ///     assert_eq!(out.finish()?.getattr("size")?.extract::<usize>()?, 0);
    ///     Ok::<_, PyErr>(())
    /// })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    pub fn finish(self) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        match self.memory {
            Memory::Torch(api, tensor) => {
                let to_object = api.managed_tensor_to_py_object_no_sync.ok_or(DlpackError::NullManagedTensor)?;
                let raw = match self.release {
                    // SAFETY: PyTorch's current stream on the tensor's device when its caching
                    // allocator made the tensor, the stream whose order that allocator frees and
                    // reuses the block in; PyTorch keeps it alive while it is current, through this
                    // call.
                    #[cfg(feature = "cuda")]
                    Some(release) => unsafe { tensor.into_raw_versioned_on(release as cudarc::driver::sys::CUstream) },
                    _ => tensor.into_raw_versioned(),
                };
                let mut object = core::ptr::null_mut();
                // SAFETY: PyTorch's table, attached; `raw` is a live versioned managed tensor whose
                // ownership the call steals (on failure too), `object` a writable slot.
                if unsafe { to_object(raw, &mut object) } != 0 {
                    return Err(PyErr::fetch(py));
                }
                // SAFETY: on success the slot holds a new reference.
                Ok(unsafe { Bound::from_owned_ptr(py, object.cast()) })
            }
            Memory::CuPy { array, tensor } => {
                match self.release {
                    // SAFETY: CuPy's current stream on the array's device when its memory pool
                    // made the array, the stream whose order the pool frees and reuses the block
                    // in; the array (handed back) keeps its memory, and CuPy keeps the stream
                    // alive while it is current, through this call.
                    #[cfg(feature = "cuda")]
                    Some(release) => unsafe { tensor.drop_on(release as cudarc::driver::sys::CUstream) },
                    _ => drop(tensor),
                }
                Ok(array)
            }
            Memory::Dlspan { tensor, framework, .. } if self.stream.is_some() => {
                device_finish(tensor, framework, self.stream)
            }
            Memory::Dlspan { tensor, framework, .. } => match framework {
                Framework::NumPy => match numpy_array(&tensor)? {
                    Some(array) => Ok(array),
                    None => dlspan_tensor(tensor),
                },
                Framework::Jax => jax_array(&tensor),
                _ => dlspan_tensor(tensor),
            },
        }
    }
}

/// Hands dlspan's device memory to Python: records the point after the extension's writes on its
/// stream, which every reader's stream is ordered after, then gives a JAX array (JAX callers) or a
/// `dlspan.Tensor`. A tensor wrapped in the package's class (another build's) cannot carry that
/// point: the call waits for the writes instead.
fn device_finish<'py>(
    tensor: Bound<'py, Tensor>,
    framework: Framework,
    stream: Option<CallerStream>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = tensor.py();
    #[cfg(feature = "cuda")]
    if let Some(stream) = stream {
        if let Some(owner) = tensor.get().managed() {
            // SAFETY: the caller's stream, one of the driver's default streams (dlspan's memory is
            // given only to callers on them), which live as long as the context.
            unsafe { owner.order_before(stream.handle() as cudarc::driver::sys::CUstream) };
        }
        super::device_memory::mark_ready(&tensor, stream)?;
    }
    #[cfg(not(feature = "cuda"))]
    let _ = stream;
    if framework == Framework::Jax {
        return jax_array(&tensor);
    }
    #[cfg(feature = "cuda")]
    if !matches!(provider(py), Provider::Own)
        && let Some(event) = tensor.get().ready.get()
    {
        event.synchronize()?;
    }
    let _ = py;
    dlspan_tensor(tensor)
}

/// A JAX array of `tensor` through `jax.dlpack.from_dlpack` (zero-copy: dlspan's memory is
/// aligned as JAX needs).
fn jax_array<'py>(tensor: &Bound<'py, Tensor>) -> PyResult<Bound<'py, PyAny>> {
    let py = tensor.py();
    static FROM_DLPACK: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let from_dlpack = FROM_DLPACK
        .get_or_try_init(py, || Ok::<_, PyErr>(py.import("jax.dlpack")?.getattr("from_dlpack")?.unbind()))?;
    from_dlpack.bind(py).call1((tensor,))
}

/// The name of a caller's framework in messages (CuPy by its stream).
fn framework_name(framework: Framework, stream: CallerStream) -> &'static str {
    match framework {
        _ if stream.source() == StreamSource::CuPy => "CuPy",
        Framework::NumPy => "NumPy",
        Framework::PyTorch => "PyTorch",
        Framework::Jax => "JAX",
        Framework::Dlspan => "dlspan",
        _ => "the caller's framework",
    }
}

/// A new CuPy array, its managed tensor, and the stream CuPy's pool made it on (when readable).
type CuPyArray<'py> = (Bound<'py, PyAny>, ManagedTensor, Option<usize>);

/// A fresh CuPy array of `dtype` and `shape` from `cupy.empty` on `device` (CuPy's memory pool, on
/// its current stream), its managed tensor and that stream; `None` for a data type CuPy does not
/// hold.
fn cupy_empty<'py>(
    py: Python<'py>,
    device: DLDevice,
    dtype: DLDataType,
    shape: &[i64],
) -> PyResult<Option<CuPyArray<'py>>> {
    // CuPy's dtypes: NumPy's.
    if !holds(Framework::NumPy, dtype) {
        return Ok(None);
    }
    let cupy = py.import("cupy")?;
    let on_device = cupy.getattr("cuda")?.getattr("Device")?.call1((device.device_id,))?;
    on_device.call_method0("__enter__")?;
    let array = cupy.call_method1("empty", (shape.to_vec(), dtype.to_string()));
    // The stream the pool made the array on, in whose order it frees and reuses the memory.
    #[cfg(not(feature = "cuda"))]
    let release = None;
    #[cfg(feature = "cuda")]
    let release = cupy
        .getattr("cuda")
        .and_then(|cuda| cuda.call_method0("get_current_stream"))
        .and_then(|stream| stream.getattr("ptr"))
        .and_then(|ptr| ptr.extract::<usize>())
        .ok();
    on_device.call_method1("__exit__", (py.None(), py.None(), py.None()))?;
    let array = array?;
    // No synchronisation (-1): the array is new, and its memory was allocated on CuPy's current
    // stream, the one the extension writes on.
    let kwargs = pyo3::types::PyDict::new(py);
    kwargs.set_item("stream", -1)?;
    kwargs.set_item("max_version", (1, 0))?;
    let capsule = match array.call_method("__dlpack__", (), Some(&kwargs)) {
        Ok(capsule) => capsule,
        Err(err) if err.is_instance_of::<pyo3::exceptions::PyTypeError>(py) => {
            kwargs.del_item("max_version")?;
            array.call_method("__dlpack__", (), Some(&kwargs))?
        }
        Err(err) => return Err(err),
    };
    // SAFETY: the array was made above and reaches no one else until `finish` returns it; its
    // memory is shared with no other tensor.
    let tensor = unsafe { take_capsule(&capsule)?.assume_unaliased() };
    Ok(Some((array, tensor, release)))
}

/// `tensor` (of this build's class, shared with no one) as the process's `dlspan.Tensor`: itself,
/// or the package's class wrapping it (rule Y18).
fn dlspan_tensor(tensor: Bound<'_, Tensor>) -> PyResult<Bound<'_, PyAny>> {
    let py = tensor.py();
    if let Provider::Own = provider(py) {
        return Ok(tensor.into_any());
    }
    let raw = shared_versioned(&tensor, DLPackVersion::CURRENT, 0);
    // SAFETY: a fresh export of `tensor`, whose ownership passes to the managed tensor.
    let managed = unsafe { ManagedTensor::from_raw_versioned(raw.as_ptr()) }?;
    into_tensor(py, managed)
}

/// The NumPy dtype NumPy knows by `dtype`'s name for a whole-byte scalar NumPy's `from_dlpack` does
/// not take (ml_dtypes' `bfloat16` and FP8 types, once ml_dtypes is imported); `None` otherwise.
fn numpy_dtype<'py>(py: Python<'py>, dtype: DLDataType) -> PyResult<Option<Bound<'py, PyAny>>> {
    if dtype.lanes != 1 || !dtype.bits.is_multiple_of(8) || dtype.bits > 64 || holds(Framework::NumPy, dtype) {
        return Ok(None);
    }
    if dtype.type_code().name().is_none() {
        return Ok(None);
    }
    let numpy = py.import("numpy")?;
    Ok(numpy.call_method1("dtype", (PyString::new(py, &dtype.to_string()),)).ok())
}

/// A zero-copy NumPy array of `tensor` (read-only when it is), through NumPy's `from_dlpack`;
/// `None` for data types NumPy does not hold. ml_dtypes types (`bfloat16`, the FP8 types) are
/// held when NumPy knows their names (ml_dtypes imported): their bytes are handed over as
/// unsigned integers of the same width and viewed as the named type.
pub(crate) fn numpy_array<'py>(tensor: &Bound<'py, Tensor>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = tensor.py();
    static FROM_DLPACK: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let from_dlpack =
        FROM_DLPACK.get_or_try_init(py, || Ok::<_, PyErr>(py.import("numpy")?.getattr("from_dlpack")?.unbind()))?;
    let meta = &tensor.get().meta;
    if holds(Framework::NumPy, meta.dtype) {
        return from_dlpack.bind(py).call1((tensor,)).map(Some);
    }
    if meta.subbyte_padded {
        return Ok(None);
    }
    let Some(dtype) = numpy_dtype(py, meta.dtype)? else { return Ok(None) };
    let unsigned = DLDataType::new(DLDataTypeCode::kDLUInt, meta.dtype.bits, 1);
    let twin = DLTensor { dtype: unsigned, ..meta.dl_tensor() };
    // SAFETY: the same memory, which `tensor` (the owner) keeps alive and in place, described with
    // the same element width: every bit pattern is a valid unsigned integer; writable only where
    // `tensor` is.
    let twin = unsafe { Tensor::from_object(py, tensor.clone().into_any().unbind(), &twin, meta.read_only) }?;
    let array = from_dlpack.bind(py).call1((twin,))?;
    array.call_method1("view", (dtype,)).map(Some)
}

/// The exception named `kind` (a builtin exception class), carrying `message`.
fn exception(kind: &str, message: String) -> PyErr {
    use pyo3::exceptions as e;
    match kind {
        "BufferError" => e::PyBufferError::new_err(message),
        "ValueError" => e::PyValueError::new_err(message),
        "TypeError" => e::PyTypeError::new_err(message),
        "MemoryError" => e::PyMemoryError::new_err(message),
        "NotImplementedError" => e::PyNotImplementedError::new_err(message),
        "RuntimeError" => e::PyRuntimeError::new_err(message),
        _ => e::PyRuntimeError::new_err(format!("{kind}: {message}")),
    }
}
