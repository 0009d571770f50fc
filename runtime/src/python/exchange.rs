//! dlspan's DLPack C exchange API (DLPack 1.3): the static table `dlspan.Tensor` exposes as the
//! class attribute `__dlpack_c_exchange_api__` (a capsule named `dlpack_exchange_api`), so C, C++
//! and Rust consumers exchange tensors with no capsule and no Python call.
//!
//! - `managed_tensor_allocator`: a new zeroed tensor like the prototype (dtype, shape), on the CPU,
//!   or (feature `cuda`) in dlspan's memory on the prototype's CUDA device;
//! - `managed_tensor_from_py_object_no_sync`: a versioned managed tensor sharing a `Tensor`'s memory
//!   (refused, as `dltensor_from_py_object_no_sync` is, when the first element is not aligned for its
//!   type: rule I8);
//! - `managed_tensor_to_py_object_no_sync`: a `Tensor` owning a managed tensor;
//! - `dltensor_from_py_object_no_sync`: a `Tensor`'s `DLTensor`, filled into the caller's struct;
//! - `current_work_stream`: the per-thread default stream for CUDA memory (dlspan's own stream),
//!   null for every other device.
//!
//! Every function expects the GIL held (the allocator takes it itself), reports failures as the
//! header says (a Python exception, or `SetError` for the allocator), and never unwinds into C.

use super::capsule::EXCHANGE_API_CAPSULE;
use super::device::CPU;
use super::error::ExchangeError;
use super::meta::check_rank;
use super::producer::shared_versioned;
use super::tensor::Tensor;
use crate::error::DlpackError;
use crate::ffi::{
    DLDeviceType, DLManagedTensorVersioned, DLPackExchangeAPI, DLPackExchangeAPIHeader, DLPackSetError, DLPackVersion,
    DLTensor,
};
use crate::owned::ManagedTensor;
use core::ffi::{c_char, c_int, c_void};
use core::ptr::NonNull;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use std::ffi::CString;

/// The table (immutable, alive for the whole process).
struct Table(DLPackExchangeAPI);

// SAFETY: the table is never written; its only pointer field (`prev_api`) is null.
unsafe impl Sync for Table {}

static API: Table = Table(DLPackExchangeAPI {
    header: DLPackExchangeAPIHeader { version: DLPackVersion::CURRENT, prev_api: core::ptr::null_mut() },
    managed_tensor_allocator: Some(allocate),
    managed_tensor_from_py_object_no_sync: Some(managed_from_object),
    managed_tensor_to_py_object_no_sync: Some(managed_to_object),
    dltensor_from_py_object_no_sync: Some(dltensor_from_object),
    current_work_stream: Some(current_work_stream),
});

/// dlspan's exchange API table.
///
/// ```
/// use dlspan::{ffi::DLPackVersion, python::exchange_api};
/// assert_eq!(exchange_api().header.version, DLPackVersion::CURRENT);
/// assert!(exchange_api().dltensor_from_py_object_no_sync.is_some());
/// ```
pub fn exchange_api() -> &'static DLPackExchangeAPI {
    &API.0
}

/// The `__dlpack_c_exchange_api__` capsule.
pub(crate) fn api_capsule(py: Python<'_>) -> PyResult<Bound<'_, PyCapsule>> {
    let table = NonNull::from(&API.0).cast::<c_void>();
    // SAFETY: the table is static and immutable; consumers only read it.
    unsafe { PyCapsule::new_with_pointer(py, table, EXCHANGE_API_CAPSULE) }
}

/// Runs `f` with the GIL the caller holds, turning an error or a panic into the raised Python
/// exception and -1. The thread is assumed attached (PyO3's own attach costs more than a plain
/// `DLTensor` fill); PyO3 then defers the release of any `Py` reference dropped meanwhile, which a
/// refusal's error holds, so after a refusal the deferred releases are made at once
/// ([`release_deferred`]): a C consumer looping on objects it is refused does not grow.
fn guarded(f: impl for<'py> FnOnce(Python<'py>) -> PyResult<()>) -> c_int {
    // SAFETY: the exchange API is called holding the GIL.
    let py = unsafe { Python::assume_attached() };
    let err = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(py))) {
        Ok(Ok(())) => return 0,
        Ok(Err(err)) => err,
        Err(_) => pyo3::exceptions::PyRuntimeError::new_err("dlspan: a panic was caught at the DLPack exchange API"),
    };
    // Before the exception is set: a release may run Python code (a finaliser).
    release_deferred();
    err.restore(py);
    -1
}

/// Makes the reference releases PyO3 deferred while the thread was assumed attached, by attaching
/// through PyO3 (nothing when attaching is forbidden, as during a garbage collector's traversal).
fn release_deferred() {
    let _ = Python::try_attach(|_| ());
}

/// The `Tensor` behind an object of the table's type.
fn tensor_of<'py>(py: Python<'py>, object: *mut c_void) -> PyResult<Bound<'py, Tensor>> {
    let object = NonNull::new(object.cast::<pyo3::ffi::PyObject>())
        .ok_or_else(|| pyo3::exceptions::PyTypeError::new_err("null object"))?;
    // SAFETY: the caller passes a live object (the exchange API's contract) and holds the GIL.
    let any = unsafe { Bound::from_borrowed_ptr(py, object.as_ptr()) };
    Ok(any.cast_into::<Tensor>()?)
}

/// `dltensor_from_py_object_no_sync`.
///
/// # Safety
///
/// `object` is a live `dlspan.Tensor` and `out` a writable `DLTensor`; the GIL is held.
unsafe extern "C" fn dltensor_from_object(object: *mut c_void, out: *mut DLTensor) -> c_int {
    guarded(|py| {
        let tensor = tensor_of(py, object)?;
        // The table shares memory and never copies: misaligned memory is refused (rule I8).
        tensor.get().meta.check_aligned()?;
        // A plain `DLTensor` has no flags, and without `IS_SUBBYTE_TYPE_PADDED` sub-byte data is
        // packed (rule I5): padded data would be read as other values (as for legacy capsules).
        if tensor.get().meta.subbyte_padded {
            return Err(DlpackError::PaddedSubbyteExport.into());
        }
        // SAFETY: the caller passes a writable `DLTensor` (pre-allocated on its stack).
        unsafe { out.write(tensor.get().dl_tensor()) };
        Ok(())
    })
}

/// `managed_tensor_from_py_object_no_sync`.
///
/// # Safety
///
/// `object` is a live `dlspan.Tensor` and `out` a writable pointer slot; the GIL is held.
unsafe extern "C" fn managed_from_object(object: *mut c_void, out: *mut *mut DLManagedTensorVersioned) -> c_int {
    guarded(|py| {
        let tensor = tensor_of(py, object)?;
        tensor.get().meta.check_aligned()?;
        let raw = shared_versioned(&tensor, DLPackVersion::CURRENT, 0);
        // SAFETY: the caller passes a writable slot; the export's ownership passes to the caller.
        unsafe { out.write(raw.as_ptr()) };
        Ok(())
    })
}

/// `managed_tensor_to_py_object_no_sync`.
///
/// # Safety
///
/// `managed` is a live versioned managed tensor whose ownership passes here, and `out` a writable
/// pointer slot; the GIL is held.
unsafe extern "C" fn managed_to_object(managed: *mut DLManagedTensorVersioned, out: *mut *mut c_void) -> c_int {
    guarded(|py| {
        // SAFETY: the caller gives up ownership of a live managed tensor (the API's contract).
        let managed = unsafe { ManagedTensor::from_raw_versioned(managed) }?;
        let tensor = Tensor::from_managed(py, managed)?;
        // SAFETY: the caller passes a writable slot; it receives a new reference.
        unsafe { out.write(tensor.into_any().into_ptr().cast()) };
        Ok(())
    })
}

/// `current_work_stream`: dlspan's own stream of a device ([rule Y21](crate::rules#y21)): the calling
/// thread's per-thread default stream (the driver's handle `CU_STREAM_PER_THREAD`, 2) for CUDA
/// device and managed memory, on which dlspan's outputs are written; null (no stream) for every
/// other device.
///
/// A null `out`, or a negative CUDA device id, is refused with -1 and a `ValueError` set.
///
/// # Safety
///
/// `out` is null or a writable pointer slot; the GIL is held.
unsafe extern "C" fn current_work_stream(device_type: DLDeviceType, device_id: i32, out: *mut *mut c_void) -> c_int {
    let cuda = matches!(device_type, DLDeviceType::kDLCUDA | DLDeviceType::kDLCUDAManaged);
    if out.is_null() || (cuda && device_id < 0) {
        let message = if out.is_null() {
            "current_work_stream: null out".to_owned()
        } else {
            format!("current_work_stream: no CUDA device has the id {device_id}")
        };
        return guarded(|_| Err(pyo3::exceptions::PyValueError::new_err(message)));
    }
    let stream = if cuda { super::device::PER_THREAD } else { 0 };
    // SAFETY: a writable slot (caller).
    unsafe { out.write(core::ptr::without_provenance_mut(stream)) };
    0
}

/// `managed_tensor_allocator`: a new zeroed CPU tensor with the prototype's dtype and shape.
///
/// # Safety
///
/// `prototype` is a live `DLTensor` whose shape has `ndim` entries, `out` a writable pointer slot;
/// `set_error` (when given) is callable with `error_ctx`.
unsafe extern "C" fn allocate(
    prototype: *mut DLTensor,
    out: *mut *mut DLManagedTensorVersioned,
    error_ctx: *mut c_void,
    set_error: DLPackSetError,
) -> c_int {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Python::try_attach(|py| -> Result<NonNull<DLManagedTensorVersioned>, (CString, String)> {
            if prototype.is_null() {
                return Err((c"ValueError".into(), "null prototype".into()));
            }
            // The allocator reports through `SetError`, not Python's error state: an exception the
            // caller has pending is set aside while Python is called and put back after, whatever
            // the outcome, a panic included (a refusal's exception would otherwise chain onto it
            // and consume it).
            let _pending = PendingException::set_aside(py);
            // SAFETY: a live prototype (caller).
            let prototype = unsafe { &*prototype };
            let tensor =
                if prototype.device == CPU { zeros_like(py, prototype) } else { device_zeros_like(py, prototype) };
            match tensor {
                Ok(tensor) => Ok(shared_versioned(&tensor, DLPackVersion::CURRENT, 0)),
                Err(err) => Err(error_parts(py, &err)),
            }
        })
        .unwrap_or_else(|| Err((c"RuntimeError".into(), "the Python interpreter is not available".into())))
    }))
    .unwrap_or_else(|_| Err((c"RuntimeError".into(), "dlspan: a panic was caught in the allocator".into())));
    match result {
        Ok(raw) => {
            // SAFETY: a writable slot (caller); the export's ownership passes to the caller.
            unsafe { out.write(raw.as_ptr()) };
            0
        }
        Err((kind, message)) => {
            if let Some(set_error) = set_error {
                let message = CString::new(message).unwrap_or_default();
                // SAFETY: the caller's callback with its context; both strings outlive the call.
                unsafe { set_error(error_ctx, kind.as_ptr().cast::<c_char>(), message.as_ptr()) };
            }
            -1
        }
    }
}

/// The exception a C caller had pending, taken out of the thread's error state as it is (raw:
/// PyO3's `PyErr::take` would resume a pending `PanicException` as a panic) and put back when
/// dropped, after any exception raised meanwhile was cleared.
struct PendingException<'py> {
    /// Ties the value to an attached thread (`Python` is neither `Send` nor `Sync`).
    _py: Python<'py>,
    parts: [*mut pyo3::ffi::PyObject; 3],
}

impl<'py> PendingException<'py> {
    fn set_aside(py: Python<'py>) -> Self {
        let mut parts = [core::ptr::null_mut(); 3];
        // SAFETY: attached (`py`); the three slots are writable, and receive the references the
        // error state held (or null), owned by this value from now on.
        unsafe { pyo3::ffi::PyErr_Fetch(&mut parts[0], &mut parts[1], &mut parts[2]) };
        Self { _py: py, parts }
    }
}

impl Drop for PendingException<'_> {
    fn drop(&mut self) {
        if self.parts[0].is_null() {
            return;
        }
        // SAFETY: attached (`py`: this value cannot leave its thread); clears whatever was raised
        // meanwhile.
        unsafe { pyo3::ffi::PyErr_Clear() };
        // SAFETY: attached, as above; the error state is given back the references taken in
        // `set_aside`, which `PyErr_Restore` steals (this runs once: the drop).
        unsafe { pyo3::ffi::PyErr_Restore(self.parts[0], self.parts[1], self.parts[2]) };
    }
}

/// What `SetError` is given for `err`: the exception's class name (`TypeError`, `BufferError`, ...)
/// and its message, as Python would print them after `ClassName: `.
fn error_parts(py: Python<'_>, err: &PyErr) -> (CString, String) {
    let kind = err.get_type(py).name().map(|name| name.to_string()).unwrap_or_else(|_| "RuntimeError".into());
    let message = err.value(py).str().map(|text| text.to_string()).unwrap_or_default();
    (CString::new(kind).unwrap_or_else(|_| c"RuntimeError".into()), message)
}

/// A zeroed, row-major tensor with `prototype`'s dtype and shape in dlspan's memory on its CUDA
/// device (feature `cuda`); every other device is unavailable.
fn device_zeros_like<'py>(py: Python<'py>, prototype: &DLTensor) -> PyResult<Bound<'py, Tensor>> {
    #[cfg(feature = "cuda")]
    if prototype.device.device_type == DLDeviceType::kDLCUDA {
        let shape = prototype_shape(prototype)?;
        return super::device_memory::zeroed_on(py, &shape, prototype.dtype, prototype.device);
    }
    let _ = py;
    Err(ExchangeError::DeviceUnavailable { requested: prototype.device, found: CPU }.into())
}

/// A zeroed, row-major CPU tensor with `prototype`'s dtype and shape.
pub(crate) fn zeros_like<'py>(py: Python<'py>, prototype: &DLTensor) -> PyResult<Bound<'py, Tensor>> {
    Tensor::zeroed(py, &prototype_shape(prototype)?, prototype.dtype)
}

/// The shape of an allocator's prototype.
fn prototype_shape(prototype: &DLTensor) -> PyResult<Vec<i64>> {
    check_rank(prototype)?;
    let ndim = usize::try_from(prototype.ndim).map_err(|_| DlpackError::NegativeNdim { ndim: prototype.ndim })?;
    let shape: Vec<i64> = if ndim == 0 || prototype.shape.is_null() {
        if ndim != 0 {
            return Err(DlpackError::NullShape.into());
        }
        Vec::new()
    } else {
        // SAFETY: a prototype's non-null shape has `ndim` entries (caller).
        unsafe { core::slice::from_raw_parts(prototype.shape, ndim) }.to_vec()
    };
    Ok(shape)
}
