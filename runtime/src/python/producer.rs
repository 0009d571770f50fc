//! The producer: `__dlpack__` for [`Tensor`], with every rule of the array API, and the managed
//! tensors it hands out.
//!
//! An export shares the tensor's memory: one allocation holds the DLPack header (its shape and
//! strides point into the tensor's metadata) and a strong reference to the tensor, which the
//! deleter releases — taking the GIL itself, from whatever thread it is called on.

use super::capsule::{legacy_capsule, versioned_capsule};
use super::error::{ExchangeError, export_error};
use super::gil::DETACH_ELEMENTS;
use super::meta::{Meta, row_major};
use super::tensor::{Owner, Tensor, zeroed_bytes};
use crate::convert::ImportOptions;
use crate::error::DlpackError;
use crate::ffi::{
    DLDevice, DLDeviceType, DLManagedTensor, DLManagedTensorVersioned, DLPACK_FLAG_BITMASK_IS_COPIED, DLPackVersion,
};
use crate::owned::ManagedTensor;
use core::ptr::NonNull;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

/// The keywords of `__dlpack__`, as a consumer passes them.
///
/// - `stream`: on host memory only none or -1 (no synchronisation, which PyTorch passes); for
///   CUDA and ROCm memory any DLPack stream code but 0 (dlspan queues no work of its own, so there
///   is nothing to synchronise). Anything else is a `ValueError`.
/// - `max_version`: none or a major below 1 gives a legacy `dltensor` capsule (refused with
///   `BufferError` for read-only memory unless copying, as the legacy form cannot say read-only,
///   and for padded sub-byte data, which it cannot describe); otherwise a `dltensor_versioned`
///   capsule of version `min(max_version, 1.3)`.
/// - `dl_device`: the tensor's own device, or `BufferError` (dlspan moves no memory between
///   devices).
/// - `copy`: `True` copies (host memory) into a fresh, writable, 64-byte-aligned buffer and sets
///   `IS_COPIED`; `False` never copies (`BufferError` where a copy would be needed); none shares,
///   except memory whose first element is not aligned for its type (rule I8), which it copies as
///   `True` does.
///
/// ```
/// use dlspan::python::ExportRequest;
/// let numpy_asks = ExportRequest { max_version: Some((1, 0)), ..ExportRequest::default() };
/// assert_eq!((numpy_asks.stream, numpy_asks.copy), (None, None));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExportRequest {
    /// `stream`.
    pub stream: Option<i64>,
    /// `max_version`.
    pub max_version: Option<(u32, u32)>,
    /// `dl_device`.
    pub dl_device: Option<DLDevice>,
    /// `copy`.
    pub copy: Option<bool>,
}

/// The form of a capsule: legacy, or versioned with the version to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    Legacy,
    Versioned(DLPackVersion),
}

impl ExportRequest {
    fn form(&self) -> Form {
        match self.max_version {
            None => Form::Legacy,
            Some((major, _)) if major < 1 => Form::Legacy,
            Some((1, minor)) => {
                Form::Versioned(DLPackVersion { major: 1, minor: minor.min(DLPackVersion::CURRENT.minor) })
            }
            Some(_) => Form::Versioned(DLPackVersion::CURRENT),
        }
    }

    fn check_stream(&self, device: DLDevice) -> Result<(), ExchangeError> {
        let Some(stream) = self.stream else { return Ok(()) };
        let valid = match device.device_type {
            DLDeviceType::kDLCUDA | DLDeviceType::kDLROCM => stream != 0,
            _ => stream == -1,
        };
        if valid { Ok(()) } else { Err(ExchangeError::InvalidStream { stream }) }
    }
}

impl Tensor {
    /// `__dlpack__` as a Rust call: a capsule of this tensor with every rule of
    /// [`ExportRequest`] applied.
    ///
    /// # Errors
    ///
    /// As `__dlpack__` (see [`ExportRequest`]).
    ///
    /// ```
    /// use dlspan::{ManagedTensor, python::{ExportRequest, Tensor}};
    /// use dlspan::pyo3::prelude::*;
    /// Python::initialize();
    /// Python::attach(|py| {
    ///     let t = Tensor::from_managed(py, ManagedTensor::from_owner(vec![0u8; 2], [2])?)?;
    ///     let capsule = Tensor::dlpack(&t, &ExportRequest { max_version: Some((1, 0)), ..Default::default() })?;
    ///     assert!(capsule.is_valid_checked(Some(c"dltensor_versioned")));
    ///     Ok::<_, PyErr>(())
    /// })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    pub fn dlpack<'py>(slf: &Bound<'py, Self>, request: &ExportRequest) -> PyResult<Bound<'py, PyCapsule>> {
        export(slf, request)
    }
}

/// `__dlpack__`: a capsule of `tensor` following `request`.
fn export<'py>(tensor: &Bound<'py, Tensor>, request: &ExportRequest) -> PyResult<Bound<'py, PyCapsule>> {
    let meta = &tensor.get().meta;
    request.check_stream(meta.device)?;
    // SAFETY: a stream value above 2 names a live stream of the tensor's device (DLPack's contract
    // for the consumer calling `__dlpack__`, as every producer that honours streams assumes).
    #[cfg(feature = "cuda")]
    unsafe { super::device_memory::order_consumer(tensor.get(), request.stream) }?;
    if let Some(requested) = request.dl_device
        && requested != meta.device
    {
        return Err(if request.copy == Some(false) {
            export_error(DlpackError::CopyRequired)
        } else {
            ExchangeError::DeviceUnavailable { requested, found: meta.device }.into()
        });
    }
    let form = request.form();
    // Memory a typed reader cannot use (rule I8) is not shared: the array API's `copy=None` copies
    // when sharing is impossible, and `copy=False` refuses.
    let misaligned = meta.check_aligned().is_err();
    if misaligned && request.copy == Some(false) {
        return Err(export_error(DlpackError::CopyRequired));
    }
    if misaligned || request.copy == Some(true) {
        let copy = copy_tensor(tensor)?;
        return capsule(&copy, form, DLPACK_FLAG_BITMASK_IS_COPIED);
    }
    capsule(tensor, form, 0)
}

fn capsule<'py>(tensor: &Bound<'py, Tensor>, form: Form, extra_flags: u64) -> PyResult<Bound<'py, PyCapsule>> {
    let py = tensor.py();
    match form {
        Form::Versioned(version) => {
            let raw = shared_versioned(tensor, version, extra_flags);
            // SAFETY: a fresh export whose ownership passes to the capsule.
            unsafe { versioned_capsule(py, raw) }
        }
        Form::Legacy => {
            let meta = &tensor.get().meta;
            if meta.read_only && extra_flags & DLPACK_FLAG_BITMASK_IS_COPIED == 0 {
                return Err(export_error(DlpackError::ReadOnly));
            }
            if meta.subbyte_padded {
                return Err(export_error(DlpackError::PaddedSubbyteExport));
            }
            let raw = shared_legacy(tensor);
            // SAFETY: as above.
            unsafe { legacy_capsule(py, raw) }
        }
    }
}

/// A copy of a host tensor into a fresh, writable, row-major buffer.
pub(crate) fn copy_tensor<'py>(tensor: &Bound<'py, Tensor>) -> PyResult<Bound<'py, Tensor>> {
    let py = tensor.py();
    let meta = &tensor.get().meta;
    // A shared borrow of the memory while it is read (rule Y8): a mutable view argument alive now
    // (on another thread, with the GIL released, or further up this one's stack) refuses the copy
    // rather than the copy reading values half written.
    let _borrow = super::values::hold(tensor.as_any(), meta)?;
    // One element per index: a broadcast or overlapping tensor's copy is larger than its span.
    let bytes = meta.compact_bytes().ok_or(DlpackError::SpanOverflow).map_err(export_error)?;
    let (owner, data) = zeroed_bytes(meta.allocation_bytes(bytes)).map_err(export_error)?;
    // The buffer is not shared yet: only its address crosses into a detached copy.
    let target = data as usize;
    let copy = || {
        // SAFETY: `meta` was validated: every element it reaches lies in live host memory the
        // tensor keeps alive; `target` holds `meta.compact_bytes()` zeroed, writable bytes that
        // nothing else reaches.
        unsafe { super::copy::compact_copy(meta, target as *mut u8) }
    };
    if meta.numel >= DETACH_ELEMENTS {
        py.detach(copy)
    } else {
        copy()
    }
    let shape = meta.shape();
    let strides = row_major(shape);
    let tensor = crate::ffi::DLTensor {
        data,
        device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
        ndim: shape.len() as i32,
        dtype: meta.dtype,
        shape: shape.as_ptr().cast_mut(),
        strides: strides.as_ptr().cast_mut(),
        byte_offset: 0,
    };
    let options = ImportOptions { subbyte_padded: meta.subbyte_padded, ..ImportOptions::CURRENT };
    let meta = Meta::from_dltensor(&tensor, options, false).map_err(export_error)?;
    Bound::new(py, Tensor::new(meta, Owner::Managed(owner)))
}

/// A managed tensor owning a copy of `tensor` (marked `IS_COPIED`).
pub(crate) fn copied_managed(py: Python<'_>, tensor: ManagedTensor) -> PyResult<ManagedTensor> {
    let source = Tensor::from_managed(py, tensor)?;
    let copy = copy_tensor(&source)?;
    let raw = shared_versioned(&copy, DLPackVersion::CURRENT, DLPACK_FLAG_BITMASK_IS_COPIED);
    // SAFETY: a fresh export whose ownership passes to the managed tensor.
    Ok(unsafe { ManagedTensor::from_raw_versioned(raw.as_ptr()) }?)
}

/// An export sharing a tensor's memory: the header first, so a header pointer is an export
/// pointer.
#[repr(C)]
struct Shared<H> {
    header: H,
    keep: Py<Tensor>,
}

/// A versioned export of `tensor`'s memory (flags: the tensor's, plus `extra_flags`).
pub(crate) fn shared_versioned(
    tensor: &Bound<'_, Tensor>,
    version: DLPackVersion,
    extra_flags: u64,
) -> NonNull<DLManagedTensorVersioned> {
    let meta = &tensor.get().meta;
    let shared = Box::into_raw(Box::new(Shared {
        header: DLManagedTensorVersioned {
            version,
            manager_ctx: core::ptr::null_mut(),
            deleter: Some(delete_versioned),
            flags: meta.flags() | extra_flags,
            dl_tensor: meta.dl_tensor(),
        },
        keep: tensor.clone().unbind(),
    }));
    // SAFETY: `shared` is a fresh, unique allocation; it is its own context.
    unsafe { (*shared).header.manager_ctx = shared.cast() };
    // SAFETY: from `Box::into_raw`, non-null; the header is the first field.
    unsafe { NonNull::new_unchecked(shared) }.cast()
}

/// A legacy export of `tensor`'s memory.
pub(crate) fn shared_legacy(tensor: &Bound<'_, Tensor>) -> NonNull<DLManagedTensor> {
    let shared = Box::into_raw(Box::new(Shared {
        header: DLManagedTensor {
            dl_tensor: tensor.get().meta.dl_tensor(),
            manager_ctx: core::ptr::null_mut(),
            deleter: Some(delete_legacy),
        },
        keep: tensor.clone().unbind(),
    }));
    // SAFETY: as in `shared_versioned`.
    unsafe { (*shared).header.manager_ctx = shared.cast() };
    // SAFETY: as in `shared_versioned`.
    unsafe { NonNull::new_unchecked(shared) }.cast()
}

/// Releases the tensor an export kept alive, from any thread, holding the GIL or not.
///
/// The GIL is taken with `PyGILState_Ensure`, not through PyO3: PyO3 counts the GIL it took
/// itself, and a deleter may run inside foreign code that released the GIL below one of PyO3's
/// frames (PyTorch releases it while it frees a tensor's storage), where that count is wrong.
/// After the interpreter has finished, the reference is left (nothing can be freed then).
fn release(keep: Py<Tensor>) {
    let object = keep.into_ptr();
    // SAFETY: no Python API is used unless the interpreter is initialised.
    if unsafe { pyo3::ffi::Py_IsInitialized() } == 0 {
        return;
    }
    // SAFETY: `PyGILState_Ensure` gives this thread the GIL whatever its state (re-entrant when
    // held), and `PyGILState_Release` restores that state.
    let state = unsafe { pyo3::ffi::PyGILState_Ensure() };
    // SAFETY: the export's own strong reference, released once, with the GIL held.
    unsafe { pyo3::ffi::Py_DecRef(object) };
    // SAFETY: pairs the `PyGILState_Ensure` above.
    unsafe { pyo3::ffi::PyGILState_Release(state) };
}

/// # Safety
///
/// `managed` is null or a live versioned export of `shared_versioned`, given up by its owner.
unsafe extern "C" fn delete_versioned(managed: *mut DLManagedTensorVersioned) {
    if !managed.is_null() {
        // SAFETY: from `Box::into_raw` in `shared_versioned`, released once (DLPack's contract).
        let shared = unsafe { Box::from_raw(managed.cast::<Shared<DLManagedTensorVersioned>>()) };
        release(shared.keep);
    }
}

/// # Safety
///
/// `managed` is null or a live legacy export of `shared_legacy`, given up by its owner.
unsafe extern "C" fn delete_legacy(managed: *mut DLManagedTensor) {
    if !managed.is_null() {
        // SAFETY: from `Box::into_raw` in `shared_legacy`, released once.
        let shared = unsafe { Box::from_raw(managed.cast::<Shared<DLManagedTensor>>()) };
        release(shared.keep);
    }
}
