//! Where a view argument's tensor is: found once by the dialect of the object's type (`dlspan.Tensor`
//! directly, NumPy's struct, a C exchange table, or `__dlpack__`), with what keeps its memory alive
//! while the argument lives, and the wait before the host reads pinned or managed memory.

use crate::convert::ImportOptions;
use crate::ffi::{DLDevice, DLDeviceType, DLTensor};
use crate::ffi::{DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED, DLPACK_FLAG_BITMASK_READ_ONLY};
use crate::owned::ManagedTensor;
use crate::python::consumer::{ImportRequest, import};
use crate::python::device::wait_for_host;
use crate::python::dialect::{Dialect, Framework, StaticType, dialect};
use crate::python::error::ExchangeError;
use crate::python::meta::{check_rank, rebase};
use crate::python::numpy;
use crate::python::stream::{self, CallerStream, on_stream};
use crate::python::tensor::Tensor;
use crate::python::torch;
use crate::space::MemorySpace;
use pyo3::prelude::*;

/// What keeps a view argument's memory alive.
pub(super) enum Source<'py> {
    /// The Python object (its memory lives as long as it does).
    Object(#[allow(dead_code)] Bound<'py, PyAny>),
    /// A PyTorch tensor and its storage: Python code run while the view lives may point the tensor
    /// at other memory (`set_`, which would free the old storage) — the storage stays alive.
    Torch(#[allow(dead_code)] Bound<'py, PyAny>, #[allow(dead_code)] Bound<'py, PyAny>),
    /// A managed tensor imported through `__dlpack__`.
    Managed(#[allow(dead_code)] ManagedTensor),
}

/// Where an argument's tensor was found.
pub(super) struct Located<'py> {
    pub(super) tensor: DLTensor,
    pub(super) options: ImportOptions,
    pub(super) read_only: bool,
    pub(super) source: Source<'py>,
    /// The framework the object came from.
    pub(super) framework: Framework,
    /// The caller's stream, for a tensor on a device with streams (rule Y21).
    pub(super) stream: Option<CallerStream>,
}

/// Finds `object`'s tensor in its type's dialect. For NumPy arrays, `strides` receives the strides
/// in elements (the tensor points into it); `rank`, when known, is the rank the caller expects.
/// A tensor of more than `MAX_TENSOR_RANK` axes is refused before anything reads its shape or
/// strides ([`check_rank`]).
#[inline]
pub(super) fn locate<'py>(
    object: &Bound<'py, PyAny>,
    mutable: bool,
    strides: &mut [i64],
    rank: Option<usize>,
) -> PyResult<Located<'py>> {
    let located = find(object, mutable, strides, rank)?;
    check_rank(&located.tensor)?;
    Ok(located)
}

/// [`locate`] but for the rank check.
#[inline]
fn find<'py>(
    object: &Bound<'py, PyAny>,
    mutable: bool,
    strides: &mut [i64],
    rank: Option<usize>,
) -> PyResult<Located<'py>> {
    let py = object.py();
    let dialect = dialect(object)?;
    let framework = dialect.framework();
    // dlspan's own stream, for memory whose producer names none.
    let own = |device: DLDevice| on_stream(device).then(|| CallerStream::per_thread(device));
    let found = |tensor: DLTensor, options: ImportOptions, read_only: bool| Located {
        tensor,
        options,
        read_only,
        source: Source::Object(object.clone()),
        framework,
        stream: own(tensor.device),
    };
    // The producer's current stream, through its table.
    let current = |device: DLDevice| -> PyResult<Option<CallerStream>> {
        match dialect {
            Dialect::Exchange { api, .. } if on_stream(device) => Ok(Some(stream::from_table(py, api, device)?)),
            _ => Ok(None),
        }
    };
    match dialect {
        Dialect::Package(table) => {
            let (mut tensor, mut flags) = (DLTensor::default(), 0u64);
            // SAFETY: the package's `describe` (rule Y18), attached, for an object of its `Tensor`
            // class (the dialect's type), with two writable slots on our stack.
            if unsafe { (table.0.describe)(object.as_ptr(), &mut tensor, &mut flags) } != 0 {
                return Err(PyErr::fetch(py));
            }
            let subbyte_padded = flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED != 0;
            let options = ImportOptions { subbyte_padded, ..ImportOptions::CURRENT };
            return Ok(found(tensor, options, flags & DLPACK_FLAG_BITMASK_READ_ONLY != 0));
        }
        Dialect::Tensor => {
            // SAFETY: the dialect of exactly `dlspan.Tensor`'s type.
            let tensor = unsafe { object.cast_unchecked::<Tensor>() }.get();
            let options = ImportOptions { subbyte_padded: tensor.meta.subbyte_padded, ..ImportOptions::CURRENT };
            return Ok(found(tensor.dl_tensor(), options, tensor.is_read_only()));
        }
        Dialect::Numpy => {
            // SAFETY: the dialect of exactly `numpy.ndarray`'s type; attached.
            if let Some(array) = unsafe { numpy::read(object.py(), object.as_ptr(), strides, rank) } {
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
                let stream = current(managed.device())?;
                return Ok(Located { stream, ..located_managed(managed, framework) });
            }
        }
        Dialect::Exchange { api, torch: Some(base) } => {
            let read = torch::read(object, api, base, mutable)?;
            return Ok(Located {
                stream: current(read.tensor.device)?,
                tensor: read.tensor,
                options: ImportOptions::CURRENT,
                read_only: false,
                source: Source::Torch(object.clone(), read.storage),
                framework,
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
            // Reversed axes as the other paths take them (rule Y5: every path gives the same view).
            // SAFETY: the table's shape and strides, valid while the object lives (its contract).
            unsafe { rebase(&mut tensor) };
            let stream = current(tensor.device)?;
            return Ok(Located { stream, ..found(tensor, ImportOptions::CURRENT, false) });
        }
        Dialect::Protocol { .. } => {}
    }
    // `from_dlpack` marks the memory of immutable producers read-only. The stream is chosen from
    // `__dlpack_device__` and handed to `__dlpack__`, so the producer orders its work before it.
    let (mut chosen, mut sent) = (None, None);
    let choose = &mut |device| {
        if !on_stream(device) {
            return Ok(None);
        }
        let stream = stream::for_protocol(object, device)?;
        chosen = Some(stream);
        Ok(Some(stream.dlpack_stream()))
    };
    let managed = import(object, ImportRequest::default(), choose, &mut sent)?;
    // A PyTorch tensor read through `__dlpack__` (a subclass that overrides `__torch_function__`)
    // is written as any PyTorch tensor is: autograd is told (rule Y7).
    if mutable && StaticType::base_named(&object.get_type(), "torch._C.TensorBase")?.is_some() {
        torch::mark_written(object)?;
    }
    let device = managed.device();
    let stream = match chosen {
        // The producer exported on another device than it announced: the stream ordered nothing.
        Some(stream) if stream.device() != device => {
            return Err(ExchangeError::DeviceUnavailable { requested: stream.device(), found: device }.into());
        }
        // A producer older than the `stream` keyword took a call without it: by the array API it
        // ordered its work before the legacy default stream.
        Some(stream) if sent.is_none() => Some(CallerStream::legacy(stream.device())),
        Some(stream) => Some(stream),
        // A capsule, or a producer with no `__dlpack_device__`: ordered by whoever made it.
        None => own(device),
    };
    Ok(Located { stream, ..located_managed(managed, framework) })
}

/// A managed tensor as a located argument (its flags decide read-only).
fn located_managed<'py>(managed: ManagedTensor, framework: Framework) -> Located<'py> {
    let mut tensor = *managed.dl_tensor();
    // SAFETY: the managed tensor's shape and strides (its producer's contract).
    unsafe { rebase(&mut tensor) };
    Located {
        tensor,
        options: managed.import_options(),
        read_only: managed.is_read_only(),
        source: Source::Managed(managed),
        framework,
        stream: None,
    }
}

/// Before a view of host-accessible space `S` reads memory that is not plain host memory (CUDA
/// pinned or managed memory, which the device may still be writing): waits for the device, or
/// refuses (rule Y16).
#[inline]
pub(super) fn host_ready<S: MemorySpace>(device: DLDevice) -> PyResult<()> {
    if S::HOST_ACCESSIBLE && device.device_type != DLDeviceType::kDLCPU {
        wait_for_host(device)?;
    }
    Ok(())
}
