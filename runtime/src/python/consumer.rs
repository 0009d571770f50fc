//! The consumer: any object with `__dlpack__` (or a bare DLPack capsule) to a [`ManagedTensor`],
//! in each producer's dialect.
//!
//! - `__dlpack_device__()` is called when the object has it (NumPy's `from_dlpack` never does, but
//!   PyTorch and JAX producers expect it), to know whether a stream means anything.
//! - `__dlpack__` gets `max_version=(1, 3)`; `copy`, `dl_device` and `stream` only when they mean
//!   something: `copy` when the caller chose one, `dl_device` when it differs from the tensor's
//!   device, `stream` only for CUDA and ROCm tensors and only when the caller gave one.
//! - A `TypeError` (a producer older than the keywords) is retried with fewer keywords, down to
//!   none; the result is then checked against what was asked.
//! - Versioned, legacy and bare capsules are accepted; the capsule is renamed as consumed.
//! - A PyTorch tensor in host memory, asked for no other device and no stream, is taken through its
//!   type's C exchange table (`managed_tensor_from_py_object_no_sync`): the tensor `__dlpack__`
//!   exports, at a tenth of the cost. What `__dlpack__` would treat otherwise (a
//!   `__torch_function__` mode, `requires_grad`, sparse or `meta` tensors) still goes through it.
//!
//! Producers' flags are not trusted where a framework is known to get them wrong: PyTorch never
//! sets `IS_COPIED` and JAX's legacy capsules cannot say it, so `copy=True` for host memory is not
//! asked of the producer at all: dlspan imports the tensor without a copy and copies it itself, once, into a
//! buffer it owns alone (marked `IS_COPIED`). Device memory, which dlspan cannot copy, is asked of
//! the producer.

use super::capsule::take_capsule;
use super::device::{CPU, device_of, host_readable, same_memory, wait_for_host};
use super::dialect::{Dialect, dialect};
use super::error::ExchangeError;
use super::meta::MAX_TENSOR_RANK;
use super::numpy;
use super::producer::copied_managed;
use super::tensor::Tensor;
use super::torch::{check_lazy_bits, explain};
use crate::error::DlpackError;
use crate::ffi::{DLDevice, DLDeviceType};
use crate::owned::ManagedTensor;
use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict};

/// What a consumer asks of a producer: the keywords of the array API's `from_dlpack`.
///
/// ```
/// use dlspan::python::ImportRequest;
/// let request = ImportRequest { copy: Some(true), ..ImportRequest::default() };
/// assert_eq!((request.device, request.stream), (None, None));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImportRequest {
    /// `Some(true)`: always copy; `Some(false)`: never copy (fail instead); `None`: copy only when
    /// the memory cannot be shared.
    pub copy: Option<bool>,
    /// The device the tensor must be on; `None` keeps the producer's.
    pub device: Option<DLDevice>,
    /// The CUDA / ROCm stream the consumer will use (DLPack's codes: 1 legacy default, 2
    /// per-thread default, a stream pointer, -1 no synchronisation); ignored for other devices.
    pub stream: Option<i64>,
}

/// Imports any DLPack producer (an object with `__dlpack__`, or a bare capsule) as a managed
/// tensor, in the producer's dialect (see the module documentation).
///
/// A tensor that shares the producer's memory is [aliased](ManagedTensor::is_aliased) and gives no
/// views (the Python object can still reach the memory, as a mutable view argument or another
/// export); a copy dlspan made (`copy=True` of host memory) is this consumer's alone and gives every
/// view. To read or write a Python object's memory, take it as a borrow-checked
/// [`PyView`](super::PyView) or [`PyViewMut`](super::PyViewMut) argument.
///
/// # Errors
///
/// What the producer raises (`BufferError` for what it cannot export); `TypeError` for an object
/// that is no producer; `BufferError` ([`ExchangeError::DeviceUnavailable`]) when the tensor is not on
/// the requested device; `ValueError` ([`DlpackError::CopyRequired`]) when `copy=False` and the
/// producer copied anyway; what [`take_capsule`] refuses.
///
/// ```
/// use dlspan::{ManagedTensor, LayoutRight, python::{from_dlpack, ImportRequest, Tensor}};
/// use dlspan::pyo3::prelude::*;
/// Python::initialize();
/// Python::attach(|py| {
///     let producer = Tensor::from_managed(py, ManagedTensor::from_owner(vec![1.0f32, 2.0, 3.0], [3])?)?;
///     let shared = from_dlpack(producer.as_any(), ImportRequest::default())?;
///     assert!(!shared.is_copied());
///     assert!(shared.is_aliased(), "the producer can still reach the memory");
///     let copy = from_dlpack(producer.as_any(), ImportRequest { copy: Some(true), ..Default::default() })?;
///     assert!(copy.is_copied() && !copy.is_aliased());
///     assert_eq!(copy.view::<f32, 1, LayoutRight>()?.to_vec(), [1.0, 2.0, 3.0]);
///     Ok::<_, PyErr>(())
/// })?;
/// # Ok::<(), PyErr>(())
/// ```
pub fn from_dlpack(object: &Bound<'_, PyAny>, request: ImportRequest) -> PyResult<ManagedTensor> {
    import(object, request, &mut |_| Ok(None), &mut None)
}

/// [`from_dlpack`], with the stream for a CUDA or ROCm tensor the request names none for chosen by
/// `choose` from the device `__dlpack_device__` reports, before `__dlpack__` is called (rule Y21).
/// `sent` receives the `stream` the call that succeeded passed (`None` when a producer older than
/// the keyword took a call without it, or none was passed).
pub(crate) fn import(
    object: &Bound<'_, PyAny>,
    request: ImportRequest,
    choose: &mut dyn FnMut(DLDevice) -> PyResult<Option<i64>>,
    sent: &mut Option<i64>,
) -> PyResult<ManagedTensor> {
    let py = object.py();
    // PyTorch's base type when what `__dlpack__` exported is to be proven to lie in the tensor's
    // storage (below).
    let mut storage_check = None;
    let tensor = if object.is_instance_of::<PyCapsule>() {
        take_capsule(object)?
    } else {
        let dialect = dialect(object)?;
        let torch = matches!(dialect, Dialect::Exchange { torch: Some(_), .. });
        if let Dialect::Exchange { torch: Some(base), .. } = dialect {
            // PyTorch's `__dlpack__` refuses the conjugate bit but exports the negation bit
            // unresolved; this path is slow anyway, so both are checked for every dtype.
            check_lazy_bits(object, base, true)?;
        }
        // A PyTorch tensor shared in host memory, as `__dlpack__` would export it, through the
        // table; anything else through `__dlpack__`.
        let host = request.stream.is_none() && request.device.is_none_or(|device| same_memory(device, CPU));
        let fast = match dialect {
            Dialect::Exchange { api, torch: Some(base) } if host => super::torch::managed_host(object, api, base)?,
            _ => None,
        };
        let shared = fast.is_none() && request.copy != Some(true) && request.device.is_none();
        let tensor = match fast {
            Some(tensor) => tensor,
            None => import_protocol(object, &request, choose, sent)
                .map_err(|err| if torch { explain(object, err) } else { err })?,
        };
        if let Dialect::Exchange { torch: Some(base), .. } = dialect
            && shared
        {
            storage_check = Some(base);
        }
        match dialect {
            Dialect::Protocol { immutable: true } if !tensor.is_read_only() => read_only(tensor)?,
            _ => tensor,
        }
    };
    super::meta::check_rank(tensor.dl_tensor())?;
    // SAFETY: a managed tensor's shape and strides (its producer's contract), of at most
    // MAX_TENSOR_RANK entries.
    if let Some(err) = unsafe { super::meta::unsigned_stride(tensor.dl_tensor()) } {
        return Err(err.into());
    }
    // PyTorch exports a view as it is, even one reaching past a storage shrunk under it: what
    // `__dlpack__` shares (it copies for `copy=True` and another device, without saying so:
    // IS_COPIED is never set) is proven to lie in the tensor's storage, once its rank and strides
    // are checked (`managed_host` proves its own).
    if let Some(base) = storage_check {
        super::torch::check_exported(object, base, tensor.dl_tensor())?;
    }
    let device = tensor.device();
    match request.device {
        Some(requested) if !same_memory(requested, device) => {
            return Err(ExchangeError::DeviceUnavailable { requested, found: device }.into());
        }
        _ => {}
    }
    match request.copy {
        Some(true) if !tensor.is_copied() => {
            wait_for_host(device)?;
            // A buffer of its own, which only this consumer holds.
            copied_managed(py, tensor)
        }
        Some(false) if tensor.is_copied() => Err(DlpackError::CopyRequired.into()),
        // Shared with its producer (and producers' copy flags are not trusted): no views (rule M10);
        // the `read_only` shell above dropped the mark `take_capsule` set.
        _ => Ok(tensor.into_aliased()),
    }
}

impl Tensor {
    /// [`from_dlpack`] as a `dlspan.Tensor` of this build's class (what the `dlspan` package's
    /// `from_dlpack` returns): the same tensor, flags and errors as
    /// [`Tensor::from_managed`]`(py, from_dlpack(object, request)?)`, and for an exact
    /// `numpy.ndarray` shared as it is (`copy` not `True`, no other device asked) no capsule: the
    /// array is read from NumPy's struct, as the view arguments read it, and the tensor holds the
    /// array, which keeps its memory in place while it lives (as NumPy's own export holds it).
    /// Read-only when the array is not writeable; an array NumPy's `__dlpack__` would refuse (a
    /// foreign byte order, a data type DLPack cannot describe, strides that are not whole elements)
    /// goes through `__dlpack__`, which raises NumPy's error. A PyTorch tensor in host memory
    /// (no `stream` either) is read as a view argument reads it, and the tensor holds its storage
    /// (`untyped_storage()`), which keeps the memory alive if the PyTorch tensor is later `set_` to
    /// other memory (rule Y14); what `__dlpack__` treats otherwise (a `__torch_function__` mode,
    /// `requires_grad`, complex, sparse or `meta` tensors, lazy bits) goes through the general path.
    ///
    /// # Errors
    ///
    /// As [`from_dlpack`] and [`Tensor::from_managed`].
    ///
    /// ```
    /// use dlspan::python::{ImportRequest, Tensor};
    /// use dlspan::pyo3::prelude::*;
    /// Python::initialize();
    /// Python::attach(|py| {
    ///     let producer = Tensor::zeros(py, &[2, 3], dlspan::dtype::dtype_of::<f32>())?;
    ///     let t = Tensor::from_dlpack(producer.as_any(), ImportRequest::default())?;
    ///     assert_eq!(t.getattr("shape")?.extract::<(i64, i64)>()?, (2, 3));
    ///     Ok::<_, PyErr>(())
    /// })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    pub fn from_dlpack<'py>(object: &Bound<'py, PyAny>, request: ImportRequest) -> PyResult<Bound<'py, Self>> {
        let py = object.py();
        let host = request.device.is_none_or(|device| same_memory(device, CPU));
        let shared = request.copy != Some(true) && host;
        if host && !object.is_instance_of::<PyCapsule>() {
            match dialect(object)? {
                Dialect::Exchange { api, torch: Some(base) } if shared && request.stream.is_none() => {
                    if let Some(read) = super::torch::shared_host(object, api, base)? {
                        // SAFETY: the storage holds every byte the tensor reaches (proven by
                        // `shared_host`) and keeps them alive and in place while it lives (a
                        // growing `resize_` aside, rule Y14); the tensor's shape and strides are
                        // read during this call only. PyTorch tensors have no read-only state.
                        return unsafe { Self::from_object(py, read.storage.unbind(), &read.tensor, false) };
                    }
                }
                Dialect::Numpy => {
                    let mut strides = [0i64; MAX_TENSOR_RANK];
                    // SAFETY: the dialect of exactly `numpy.ndarray`'s type; attached.
                    if let Some(array) = unsafe { numpy::read(py, object.as_ptr(), &mut strides, None) } {
                        // SAFETY: an array keeps its memory alive and in place while it lives (a
                        // resize that skips NumPy's reference check aside, rule Y14), holding
                        // values of its data type; the tensor's shape (the array's) and strides
                        // (ours) are read during this call only. A non-writeable array gives a
                        // read-only tensor.
                        let tensor =
                            unsafe { Self::from_object(py, object.clone().unbind(), &array.tensor, !array.writeable) }?;
                        // `copy=True`: the copy made from the struct's reading too, so that arrays
                        // NumPy's `__dlpack__` refuses (ml_dtypes' bfloat16 and FP8) copy as they
                        // share (rule Y19).
                        return if shared { Ok(tensor) } else { super::producer::copy_tensor(&tensor) };
                    }
                }
                _ => {}
            }
        }
        let managed = from_dlpack(object, request)?;
        let device = managed.device();
        let tensor = Self::from_managed(py, managed)?;
        // The producer ordered its work before the stream named to it (the legacy default stream
        // when none was): this tensor's consumers are ordered after that point (rule Y22).
        #[cfg(feature = "cuda")]
        if device.device_type == DLDeviceType::kDLCUDA {
            let named = match request.stream {
                Some(2) => super::stream::CallerStream::per_thread(device),
                _ => super::stream::CallerStream::legacy(device),
            };
            if request.stream.is_none_or(|s| s == 1 || s == 2) {
                match super::device_memory::mark_ready(&tensor, named) {
                    // No driver or no such device: no work of the device can be pending.
                    Ok(())
                    | Err(crate::cuda::CudaError::LibraryMissing { .. } | crate::cuda::CudaError::NoDevice { .. }) => {}
                    Err(err) => return Err(err.into()),
                }
            }
        }
        #[cfg(not(feature = "cuda"))]
        let _ = device;
        Ok(tensor)
    }
}

/// The same tensor, marked `READ_ONLY` (a legacy tensor gets a versioned shell that says so).
fn read_only(tensor: ManagedTensor) -> Result<ManagedTensor, DlpackError> {
    let raw = tensor.into_raw_versioned();
    // SAFETY: `raw` is a live versioned tensor this consumer owns (or the shell around its legacy
    // form); its flags are this consumer's to read, and only ever gain READ_ONLY here.
    unsafe { (*raw).flags |= crate::ffi::DLPACK_FLAG_BITMASK_READ_ONLY };
    // SAFETY: the same live tensor, whose ownership returns here; a major version other than 1 was
    // refused when it was first taken.
    unsafe { ManagedTensor::from_raw_versioned(raw) }
}

/// Calls `__dlpack_device__` and `__dlpack__` with the keywords that mean something, retrying with
/// fewer on `TypeError`.
fn import_protocol(
    object: &Bound<'_, PyAny>,
    request: &ImportRequest,
    choose: &mut dyn FnMut(DLDevice) -> PyResult<Option<i64>>,
    sent: &mut Option<i64>,
) -> PyResult<ManagedTensor> {
    let py = object.py();
    let device = match object.getattr_opt(intern!(py, "__dlpack_device__"))? {
        Some(method) => Some(device_of(&method.call0()?)?),
        None => None,
    };
    let stream = match device {
        Some(d) if matches!(d.device_type, DLDeviceType::kDLCUDA | DLDeviceType::kDLROCM) => match request.stream {
            Some(stream) => Some(stream),
            None => choose(d)?,
        },
        _ => None,
    };
    let full = PyDict::new(py);
    full.set_item(intern!(py, "max_version"), (1, 3))?;
    if let Some(copy) = request.copy {
        // dlspan copies host memory itself (flags of copies are not trusted); it asks the producer
        // only to copy device memory, or to never copy.
        let host = device.is_some_and(host_readable);
        if !(copy && host) {
            full.set_item(intern!(py, "copy"), copy)?;
        }
    }
    match request.device {
        Some(requested) if !device.is_some_and(|device| same_memory(requested, device)) => {
            full.set_item(intern!(py, "dl_device"), (requested.device_type.0, requested.device_id))?;
        }
        _ => {}
    }
    let reduced = PyDict::new(py);
    if let Some(stream) = stream {
        full.set_item(intern!(py, "stream"), stream)?;
        reduced.set_item(intern!(py, "stream"), stream)?;
    }
    let Some(method) = object.getattr_opt(intern!(py, "__dlpack__"))? else {
        let name = object.get_type().name().map(|n| n.to_string()).unwrap_or_default();
        return Err(PyTypeError::new_err(format!("'{name}' object is not a DLPack producer (no __dlpack__)")));
    };
    let mut attempts = vec![full];
    if reduced.len() > 0 {
        attempts.push(reduced);
    }
    attempts.push(PyDict::new(py));
    let mut last = None;
    for kwargs in attempts {
        match method.call((), Some(&kwargs)) {
            Ok(capsule) => {
                *sent = if kwargs.contains(intern!(py, "stream"))? { stream } else { None };
                return take_capsule(&capsule);
            }
            Err(err) if err.is_instance_of::<PyTypeError>(py) => last = Some(err),
            Err(err) => return Err(err),
        }
    }
    Err(last.unwrap_or_else(|| PyTypeError::new_err("__dlpack__ refused every call")))
}
