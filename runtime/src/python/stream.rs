//! The caller's stream of a device tensor argument (rule Y21): which CUDA stream an extension's work
//! on the tensor goes on so that the caller's next operation on its own stream sees the results
//! with no synchronisation — the producer's current stream where it says which (PyTorch through
//! its exchange table's `current_work_stream`, CuPy's current stream), otherwise dlspan's own
//! (the per-thread default stream), which dlspan passes to `__dlpack__(stream=…)` so the producer
//! orders its work before it. Never the DLPack stream value 0.

use super::device::PER_THREAD;
use super::dialect::Api;
use super::error::ExchangeError;
use crate::ffi::{DLDevice, DLDeviceType};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Who chose a [`CallerStream`].
///
/// ```
/// use dlspan::python::StreamSource;
/// assert_ne!(StreamSource::ExchangeTable, StreamSource::Dlspan);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StreamSource {
    /// The producer's C exchange table (`current_work_stream`): PyTorch's current CUDA stream.
    ExchangeTable,
    /// CuPy's current stream of the array's device (`cupy.cuda.get_current_stream(id).ptr`).
    CuPy,
    /// dlspan's own stream, the per-thread default stream (DLPack's stream value 2), given to the
    /// producer's `__dlpack__(stream=2)` so that the producer orders its pending work before it; or
    /// the legacy default stream for a producer that takes no `stream` keyword.
    Dlspan,
}

/// The stream a device tensor argument's work goes on, as its caller chose it (rule Y21): a raw
/// `CUstream` handle, the device it belongs to, and who chose it. The caller's next operation on
/// its own stream sees what is enqueued here with no further synchronisation.
///
/// Made without a CUDA driver (a plain value): with feature `cuda`, its `stream` method turns it
/// into a `cuda::Stream`.
///
/// ```
/// use dlspan::python::{CallerStream, StreamSource};
/// let s = CallerStream::per_thread(dlspan::ffi::DLDevice { device_type: dlspan::ffi::DLDeviceType::kDLCUDA, device_id: 0 });
/// assert_eq!((s.dlpack_stream(), s.source()), (2, StreamSource::Dlspan));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CallerStream {
    handle: usize,
    device: DLDevice,
    source: StreamSource,
}

/// The driver's handle of the legacy default stream (`CU_STREAM_LEGACY`), DLPack's stream value 1.
const LEGACY: usize = 1;

impl CallerStream {
    /// dlspan's own stream on `device`: the per-thread default stream.
    ///
    /// ```
    /// # use dlspan::{ffi::{DLDevice, DLDeviceType}, python::CallerStream};
    /// let device = DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: 1 };
    /// assert_eq!(CallerStream::per_thread(device).handle(), 2);
    /// ```
    #[must_use]
    pub const fn per_thread(device: DLDevice) -> Self {
        Self { handle: PER_THREAD, device, source: StreamSource::Dlspan }
    }

    /// The legacy default stream on `device` (DLPack's stream value 1): what a producer that takes
    /// no `stream` keyword orders its work before, by the array API.
    ///
    /// ```
    /// # use dlspan::{ffi::{DLDevice, DLDeviceType}, python::{CallerStream, StreamSource}};
    /// let device = DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: 0 };
    /// let legacy = CallerStream::legacy(device);
    /// assert_eq!((legacy.handle(), legacy.dlpack_stream(), legacy.source()), (1, 1, StreamSource::Dlspan));
    /// ```
    #[must_use]
    pub const fn legacy(device: DLDevice) -> Self {
        Self { handle: LEGACY, device, source: StreamSource::Dlspan }
    }

    /// The raw `CUstream` handle: 0 is the null stream (the legacy default stream, which PyTorch
    /// uses by default), 1 and 2 the driver's legacy and per-thread default streams.
    ///
    /// ```
    /// # use dlspan::{ffi::{DLDevice, DLDeviceType}, python::CallerStream};
    /// # let device = DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: 0 };
    /// assert_eq!(CallerStream::per_thread(device).handle(), 2);
    /// ```
    #[must_use]
    pub const fn handle(&self) -> usize {
        self.handle
    }

    /// The device the stream belongs to: the argument's.
    ///
    /// ```
    /// # use dlspan::{ffi::{DLDevice, DLDeviceType}, python::CallerStream};
    /// let device = DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: 3 };
    /// assert_eq!(CallerStream::per_thread(device).device(), device);
    /// ```
    #[must_use]
    pub const fn device(&self) -> DLDevice {
        self.device
    }

    /// Who chose the stream.
    ///
    /// ```
    /// # use dlspan::{ffi::{DLDevice, DLDeviceType}, python::{CallerStream, StreamSource}};
    /// # let device = DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: 0 };
    /// assert_eq!(CallerStream::per_thread(device).source(), StreamSource::Dlspan);
    /// ```
    #[must_use]
    pub const fn source(&self) -> StreamSource {
        self.source
    }

    /// The stream as DLPack's `__dlpack__(stream=…)` names it: 1 for the legacy default stream
    /// (the null handle too), 2 for the per-thread default stream, otherwise the handle. Never 0.
    ///
    /// ```
    /// # use dlspan::{ffi::{DLDevice, DLDeviceType}, python::CallerStream};
    /// # let device = DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: 0 };
    /// assert_eq!(CallerStream::per_thread(device).dlpack_stream(), 2);
    /// ```
    #[must_use]
    pub const fn dlpack_stream(&self) -> i64 {
        match self.handle {
            0 => LEGACY as i64,
            handle => handle as i64,
        }
    }

    /// The stream as a [`cuda::Stream`](crate::cuda::Stream) of the device's primary context (where
    /// PyTorch, CuPy and JAX queue their work), with that context made current on this thread. It
    /// stays current after the call, as every cudarc operation leaves its context: on a machine
    /// with several GPUs, the CUDA runtime's current device of the thread (PyTorch's
    /// `torch.cuda.current_device()`) is then the argument's.
    ///
    /// # Errors
    ///
    /// [`CudaError::LibraryMissing`](crate::cuda::CudaError::LibraryMissing) without a driver,
    /// [`CudaError::NoDevice`](crate::cuda::CudaError::NoDevice),
    /// [`CudaError::Driver`](crate::cuda::CudaError::Driver); a device other than CUDA's
    /// (`kDLCUDA`, `kDLCUDAManaged`) is [`CudaError::NoDevice`](crate::cuda::CudaError::NoDevice).
    ///
    /// # Safety
    ///
    /// The caller's stream lives only as long as its owner keeps it: use the returned stream only
    /// during the call that received the argument, and run no Python code that may destroy it
    /// (a `torch.cuda.Stream` or `cupy.cuda.Stream` the caller made and then drops) meanwhile.
    ///
    /// ```no_run
    /// # use dlspan::{ffi::{DLDevice, DLDeviceType}, python::CallerStream};
    /// let device = DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: 0 };
    /// // SAFETY: the per-thread default stream lives as long as the context.
    /// let stream = unsafe { CallerStream::per_thread(device).stream() }?;
    /// assert_eq!(stream.dlpack_stream(), 2);
    /// # Ok::<(), dlspan::cuda::CudaError>(())
    /// ```
    #[cfg(feature = "cuda")]
    pub unsafe fn stream(&self) -> Result<crate::cuda::Stream, crate::cuda::CudaError> {
        use crate::cuda::{CudaError, Gpu, Stream};
        let cuda = matches!(self.device.device_type, DLDeviceType::kDLCUDA | DLDeviceType::kDLCUDAManaged);
        let ordinal = usize::try_from(self.device.device_id).ok().filter(|_| cuda);
        let Some(ordinal) = ordinal else {
            return Err(CudaError::NoDevice { ordinal: usize::MAX, count: crate::cuda::device_count() });
        };
        let gpu = Gpu::new(ordinal)?;
        gpu.context().bind_to_thread()?;
        // SAFETY: the handle is the null stream, one of the driver's two default streams, or a
        // stream of this device's primary context that its owner keeps alive while it is used (the
        // caller's contract); dropping the wrapper destroys nothing.
        let inner = unsafe { gpu.context().wrap_borrowed_stream(self.handle as cudarc::driver::sys::CUstream) };
        Stream::wrap(&gpu, inner)
    }
}

/// Whether tensors of `device` get a caller's stream: CUDA device and managed memory. ROCm memory
/// gets none: DLPack's stream values differ there (0 is its default stream, 1 and 2 are not
/// allowed), and dlspan has no view of it.
pub(crate) fn on_stream(device: DLDevice) -> bool {
    matches!(device.device_type, DLDeviceType::kDLCUDA | DLDeviceType::kDLCUDAManaged)
}

/// The producer's current stream for `device` through its exchange table's
/// `current_work_stream`, called with the GIL held.
///
/// # Errors
///
/// What the producer raises; [`ExchangeError::NoCurrentStream`] when the table has no
/// `current_work_stream` or it fails without raising.
pub(crate) fn from_table(py: Python<'_>, api: Api, device: DLDevice) -> PyResult<CallerStream> {
    // SAFETY: the dialect checked the table (version 1) and pins its capsule.
    unsafe { table_stream(py, api.table(), device) }
}

/// [`from_table`] for a table found otherwise (PyTorch's, pinned by `Output`).
///
/// # Safety
///
/// `table` is a live exchange table of version 1 whose functions follow the exchange API.
pub(crate) unsafe fn table_stream(
    py: Python<'_>,
    table: &crate::ffi::DLPackExchangeAPI,
    device: DLDevice,
) -> PyResult<CallerStream> {
    let Some(current) = table.current_work_stream else {
        return Err(ExchangeError::NoCurrentStream { device }.into());
    };
    let mut out = core::ptr::null_mut();
    // SAFETY: a live version-1 table (the caller's contract), the GIL is held as the exchange API
    // requires, and `out` is a writable slot on our stack.
    if unsafe { current(device.device_type, device.device_id, &mut out) } != 0 {
        return Err(PyErr::take(py).unwrap_or_else(|| ExchangeError::NoCurrentStream { device }.into()));
    }
    // Only the handle's value is kept: it is never dereferenced on the host.
    Ok(CallerStream { handle: out as usize, device, source: StreamSource::ExchangeTable })
}

/// The stream for an object read through `__dlpack__` on `device`: CuPy's current stream of the
/// device for a CuPy array (`cupy` being the array type's module), dlspan's own otherwise.
///
/// # Errors
///
/// What CuPy raises; [`ExchangeError::InvalidStream`] for a CuPy stream handle that is negative.
pub(crate) fn for_protocol(object: &Bound<'_, PyAny>, device: DLDevice) -> PyResult<CallerStream> {
    let py = object.py();
    let module = object.get_type().getattr(intern!(py, "__module__"))?;
    let cupy = module.extract::<&str>().is_ok_and(|m| m == "cupy" || m.starts_with("cupy."));
    if !cupy || device.device_type != DLDeviceType::kDLCUDA {
        return Ok(CallerStream::per_thread(device));
    }
    let modules = py.import(intern!(py, "sys"))?.getattr(intern!(py, "modules"))?;
    let Some(cupy) = modules.cast::<PyDict>()?.get_item("cupy")? else {
        return Ok(CallerStream::per_thread(device));
    };
    let stream =
        cupy.getattr(intern!(py, "cuda"))?.getattr(intern!(py, "get_current_stream"))?.call1((device.device_id,))?;
    let handle: i64 = stream.getattr(intern!(py, "ptr"))?.extract()?;
    let handle = usize::try_from(handle).map_err(|_| ExchangeError::InvalidStream { stream: handle })?;
    Ok(CallerStream { handle, device, source: StreamSource::CuPy })
}

/// The one stream of a call's device arguments: the first argument's, after checking that every
/// device argument is on the same device. `arguments` pairs each argument's name with its
/// [`caller_stream`](crate::python::PyView::caller_stream) (`None` for host arguments, which take
/// no part).
///
/// # Errors
///
/// [`ExchangeError::DevicesDiffer`] (`ValueError`) naming the first argument on another device
/// (the exception's note, `while processing 'b'`), with the first argument's device as `expected`.
///
/// ```
/// use dlspan::ffi::{DLDevice, DLDeviceType};
/// use dlspan::python::{CallerStream, common_stream};
/// use dlspan::pyo3::prelude::*;
/// let gpu = |id| Some(CallerStream::per_thread(DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: id }));
/// assert_eq!(common_stream(&[("a", gpu(0)), ("x", None), ("b", gpu(0))])?, gpu(0));
/// Python::initialize();
/// let err = common_stream(&[("a", gpu(0)), ("b", gpu(1))]).unwrap_err();
/// Python::attach(|py| {
///     assert!(err.is_instance_of::<dlspan::pyo3::exceptions::PyValueError>(py));
///     assert!(err.value(py).to_string().contains("cuda:1"));
/// });
/// # Ok::<(), PyErr>(())
/// ```
pub fn common_stream(arguments: &[(&'static str, Option<CallerStream>)]) -> PyResult<Option<CallerStream>> {
    use super::error::InArgument;
    let mut devices = arguments.iter().filter_map(|(name, stream)| stream.map(|s| (*name, s)));
    let Some((first, stream)) = devices.next() else { return Ok(None) };
    for (name, other) in devices {
        if other.device != stream.device {
            let err = ExchangeError::DevicesDiffer { expected: stream.device, found: other.device, first };
            return Err(PyErr::from(err)).in_argument(name);
        }
    }
    Ok(Some(stream))
}
