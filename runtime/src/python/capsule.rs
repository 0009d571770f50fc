//! DLPack capsules: a managed tensor handed to Python as a `PyCapsule` named `dltensor_versioned`
//! (DLPack ≥ 1.0) or `dltensor` (legacy), and taken back out.
//!
//! The consumer takes ownership and renames the capsule `used_dltensor_versioned` /
//! `used_dltensor`; the capsule's destructor calls the deleter only while the capsule still has
//! its unconsumed name, so the deleter runs exactly once whoever ends up owning the tensor.
//!
//! The capsule names live here, the exchange API table's (`dlpack_exchange_api`) among them.

use super::error::ExchangeError;
use super::gil::drop_keeping_exception;
use crate::error::DlpackError;
use crate::ffi::{DLManagedTensor, DLManagedTensorVersioned};
use crate::owned::ManagedTensor;
use core::ffi::{CStr, c_void};
use core::ptr::NonNull;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

/// The name of a versioned capsule.
pub const VERSIONED: &CStr = c"dltensor_versioned";
/// The name of a legacy capsule.
pub const LEGACY: &CStr = c"dltensor";
/// The name of a consumed versioned capsule.
pub const USED_VERSIONED: &CStr = c"used_dltensor_versioned";
/// The name of a consumed legacy capsule.
pub const USED_LEGACY: &CStr = c"used_dltensor";
/// The name of a capsule holding a DLPack C exchange API table (`__dlpack_c_exchange_api__`).
///
/// ```
/// use dlspan::{ManagedTensor, python::{EXCHANGE_API_CAPSULE, Tensor}};
/// use dlspan::pyo3::{prelude::*, types::PyCapsule};
/// Python::initialize();
/// Python::attach(|py| {
///     let t = Tensor::from_managed(py, ManagedTensor::from_owner(vec![0u8; 1], [1])?)?;
///     let table = t.getattr("__dlpack_c_exchange_api__")?;
///     assert!(table.cast::<PyCapsule>()?.is_valid_checked(Some(EXCHANGE_API_CAPSULE)));
///     Ok::<_, PyErr>(())
/// })?;
/// # Ok::<(), PyErr>(())
/// ```
pub const EXCHANGE_API_CAPSULE: &CStr = c"dlpack_exchange_api";

/// A managed tensor as a capsule: versioned, or legacy (for consumers that ask for no
/// `max_version`, such as JAX).
///
/// # Errors
///
/// `BufferError` ([`DlpackError::ReadOnly`]) for a read-only tensor asked for as legacy: the
/// legacy form cannot say read-only, and its consumer would write; likewise
/// ([`DlpackError::PaddedSubbyteExport`]) for padded sub-byte data, which a legacy consumer reads
/// as packed. The tensor is then dropped.
///
/// ```
/// use dlspan::{ManagedTensor, python::{into_capsule, take_capsule}};
/// use dlspan::pyo3::prelude::*;
/// Python::initialize();
/// Python::attach(|py| {
///     let capsule = into_capsule(py, ManagedTensor::from_owner(vec![1i32, 2, 3], [3])?, false)?;
///     assert!(capsule.is_valid_checked(Some(c"dltensor_versioned")));
///     let back = take_capsule(capsule.as_any())?; // the consumer's side
///     assert_eq!(back.shape(), &[3]);
///     assert!(capsule.is_valid_checked(Some(c"used_dltensor_versioned")));
///     Ok::<_, PyErr>(())
/// })?;
/// # Ok::<(), PyErr>(())
/// ```
pub fn into_capsule(py: Python<'_>, tensor: ManagedTensor, legacy: bool) -> PyResult<Bound<'_, PyCapsule>> {
    if legacy {
        let raw = tensor.into_raw_legacy().map_err(|refused| super::error::export_error(refused.error()))?;
        // SAFETY: `into_raw_legacy` never returns null.
        let raw = unsafe { NonNull::new_unchecked(raw) };
        // SAFETY: `raw` is a live legacy tensor whose ownership passes to the capsule.
        unsafe { legacy_capsule(py, raw) }
    } else {
        // SAFETY: `into_raw_versioned` never returns null.
        let raw = unsafe { NonNull::new_unchecked(tensor.into_raw_versioned()) };
        // SAFETY: `raw` is a live versioned tensor whose ownership passes to the capsule.
        unsafe { versioned_capsule(py, raw) }
    }
}

/// A `dltensor_versioned` capsule owning `raw`. On failure the deleter has been called.
///
/// # Safety
///
/// `raw` is a live versioned managed tensor whose ownership passes to this function; its deleter
/// may be called from any thread.
pub(crate) unsafe fn versioned_capsule(
    py: Python<'_>,
    raw: NonNull<DLManagedTensorVersioned>,
) -> PyResult<Bound<'_, PyCapsule>> {
    // SAFETY: the capsule owns `raw`; its destructor frees it unless a consumer renamed it.
    let capsule =
        unsafe { PyCapsule::new_with_pointer_and_destructor(py, raw.cast(), VERSIONED, Some(destroy_versioned)) };
    if capsule.is_err() {
        // SAFETY: no capsule took ownership: the tensor is still ours to release, once.
        drop(unsafe { ManagedTensor::from_raw_versioned(raw.as_ptr()) });
    }
    capsule
}

/// A `dltensor` capsule owning `raw`. On failure the deleter has been called.
///
/// # Safety
///
/// As for [`versioned_capsule`], for a legacy tensor.
pub(crate) unsafe fn legacy_capsule(py: Python<'_>, raw: NonNull<DLManagedTensor>) -> PyResult<Bound<'_, PyCapsule>> {
    // SAFETY: as in `versioned_capsule`.
    let capsule = unsafe { PyCapsule::new_with_pointer_and_destructor(py, raw.cast(), LEGACY, Some(destroy_legacy)) };
    if capsule.is_err() {
        // SAFETY: as in `versioned_capsule`.
        drop(unsafe { ManagedTensor::from_raw_legacy(raw.as_ptr()) });
    }
    capsule
}

/// The capsule's pointer when the capsule still has `name` (is unconsumed), else null.
///
/// # Safety
///
/// `capsule` is a live capsule and the thread is attached.
unsafe fn unconsumed(capsule: *mut ffi::PyObject, name: &CStr) -> *mut c_void {
    // SAFETY: a live capsule (caller); reading its name sets no error for a valid capsule.
    let current = unsafe { ffi::PyCapsule_GetName(capsule) };
    // SAFETY: a non-null capsule name is a C string that lives as long as the capsule.
    if current.is_null() || unsafe { CStr::from_ptr(current) } != name {
        return core::ptr::null_mut();
    }
    // SAFETY: the name matches, so this returns the pointer without setting an error.
    unsafe { ffi::PyCapsule_GetPointer(capsule, name.as_ptr()) }
}

/// Destructor of dlspan's versioned capsules.
unsafe extern "C" fn destroy_versioned(capsule: *mut ffi::PyObject) {
    // SAFETY: CPython calls a capsule's destructor with the live capsule, attached.
    let raw = unsafe { unconsumed(capsule, VERSIONED) }.cast::<DLManagedTensorVersioned>();
    if !raw.is_null() {
        // SAFETY: an unconsumed capsule still owns its tensor; dropping the ManagedTensor calls the
        // deleter once (or, for another major version, too — and reads nothing else).
        drop_keeping_exception(unsafe { ManagedTensor::from_raw_versioned(raw) });
    }
}

/// Destructor of dlspan's legacy capsules.
unsafe extern "C" fn destroy_legacy(capsule: *mut ffi::PyObject) {
    // SAFETY: as in `destroy_versioned`.
    let raw = unsafe { unconsumed(capsule, LEGACY) }.cast::<DLManagedTensor>();
    if !raw.is_null() {
        // SAFETY: as in `destroy_versioned`.
        drop_keeping_exception(unsafe { ManagedTensor::from_raw_legacy(raw) });
    }
}

/// Takes the managed tensor out of a DLPack capsule (versioned or legacy, from any producer) and
/// renames the capsule as consumed.
///
/// The tensor is [aliased](ManagedTensor::is_aliased): its producer keeps its own way to the
/// memory, so it gives no views; read or write a Python object's memory as a borrow-checked
/// [`PyView`](super::PyView) or [`PyViewMut`](super::PyViewMut) argument instead.
///
/// # Errors
///
/// `TypeError` ([`ExchangeError::NotDlpackCapsule`]) for anything but a `dltensor` /
/// `dltensor_versioned` capsule; `BufferError` ([`ExchangeError::CapsuleConsumed`]) for a capsule
/// already consumed, [`DlpackError::NullManagedTensor`], [`DlpackError::UnsupportedVersion`] (the
/// deleter was called).
///
/// ```
/// use dlspan::{DlpackError, ManagedTensor, python::{into_capsule, take_capsule}};
/// use dlspan::pyo3::{exceptions::PyBufferError, prelude::*};
/// Python::initialize();
/// Python::attach(|py| {
///     let capsule = into_capsule(py, ManagedTensor::from_owner(vec![0u8; 4], [2, 2])?, true)?;
///     let tensor = take_capsule(capsule.as_any())?;
///     assert_eq!(tensor.version(), None, "a legacy capsule");
///     let again = take_capsule(capsule.as_any()).unwrap_err();
///     assert!(again.is_instance_of::<PyBufferError>(py), "a capsule is consumed once");
///     Ok::<_, PyErr>(())
/// })?;
/// # Ok::<(), PyErr>(())
/// ```
pub fn take_capsule(object: &Bound<'_, PyAny>) -> PyResult<ManagedTensor> {
    let capsule = object.cast::<PyCapsule>().map_err(|_| PyErr::from(ExchangeError::NotDlpackCapsule))?;
    // Check and rename as one step: on free-threaded Python two threads taking one capsule would
    // otherwise both see it unconsumed and both own its tensor (a no-op where there is a GIL).
    let (raw, versioned) = pyo3::sync::critical_section::with_critical_section(capsule, || claim(capsule))?;
    let tensor = if versioned {
        // SAFETY: an unconsumed DLPack capsule owns a live managed tensor of its name's form, whose
        // ownership the rename just passed to us.
        unsafe { ManagedTensor::from_raw_versioned(raw.cast()) }
    } else {
        // SAFETY: as above, legacy.
        unsafe { ManagedTensor::from_raw_legacy(raw.cast()) }
    };
    // The capsule's producer keeps its own way to the memory (a Python object can write it, or
    // export it again): the tensor gives no views (rule M10).
    Ok(tensor.map(ManagedTensor::into_aliased)?)
}

/// Renames an unconsumed DLPack capsule as consumed and returns its pointer and whether it is
/// versioned; the tensor is the caller's from then on.
fn claim(capsule: &Bound<'_, PyCapsule>) -> PyResult<(*mut c_void, bool)> {
    let ptr = capsule.as_ptr();
    // SAFETY: a live capsule, attached; a valid capsule's name is read without error.
    let name = unsafe { ffi::PyCapsule_GetName(ptr) };
    if name.is_null() {
        return Err(ExchangeError::NotDlpackCapsule.into());
    }
    // SAFETY: a capsule's non-null name is a C string alive with the capsule.
    let name = unsafe { CStr::from_ptr(name) };
    let (used, versioned) = match name {
        n if n == VERSIONED => (USED_VERSIONED, true),
        n if n == LEGACY => (USED_LEGACY, false),
        n if n == USED_VERSIONED || n == USED_LEGACY => return Err(ExchangeError::CapsuleConsumed.into()),
        _ => return Err(ExchangeError::NotDlpackCapsule.into()),
    };
    // SAFETY: the name was just read from this capsule, so the pointer is returned without error.
    let raw = unsafe { ffi::PyCapsule_GetPointer(ptr, name.as_ptr()) };
    if raw.is_null() {
        return Err(DlpackError::NullManagedTensor.into());
    }
    // Rename first: once renamed, the producer's destructor no longer deletes the tensor, and the
    // tensor becomes ours. `used` is static, as the capsule keeps the pointer.
    // SAFETY: a live capsule, attached.
    if unsafe { ffi::PyCapsule_SetName(ptr, used.as_ptr()) } != 0 {
        return Err(PyErr::fetch(capsule.py()));
    }
    Ok((raw, versioned))
}
