//! PyTorch tensors read through their C exchange table: what the table hands out that `__dlpack__`
//! would refuse (lazy conjugate and negation bits, tensors that require grad), and the storage a
//! view argument holds so that Python code run during the call cannot free its memory (rule Y14).
//!
//! Order matters: every check that may run Python code (a subclass's method, a `__torch_function__`
//! mode) runs before the tensor's address is read, and the storage taken afterwards is proven, by
//! PyTorch's own C methods, to hold every byte the tensor reaches.

use super::dialect::{Api, StaticType};
use super::error::ExchangeError;
use super::gil::Shared;
use crate::ffi::{DLDataTypeCode, DLTensor};
use pyo3::intern;
use pyo3::prelude::*;

/// A PyTorch tensor's `DLTensor`, read through the exchange table after the checks, and the storage
/// that holds its memory.
pub(crate) struct Read<'py> {
    pub(crate) tensor: DLTensor,
    pub(crate) storage: Bound<'py, PyAny>,
}

/// Reads `object` (whose type derives from `base`, `torch._C.TensorBase`, and has the exchange table
/// `api`) as a view argument, mutable or not.
///
/// # Errors
///
/// What the table or PyTorch raises; [`ExchangeError::ConjugateBit`], [`ExchangeError::NegativeBit`],
/// [`ExchangeError::RequiresGrad`] (mutable views while gradients are recorded);
/// [`ExchangeError::StorageMismatch`] when the storage PyTorch returns does not hold the tensor.
pub(crate) fn read<'py>(object: &Bound<'py, PyAny>, api: Api, base: StaticType, mutable: bool) -> PyResult<Read<'py>> {
    let py = object.py();
    // A first read, for the dtype only: Python code may yet change the tensor.
    let probe = fill(object, api)?;
    check_lazy_bits(object, base, probe.dtype.code == DLDataTypeCode::kDLComplex.0)?;
    if mutable {
        check_grad(object)?;
    }
    let storage = base.bind(py).getattr(intern!(py, "untyped_storage"))?.call1((object,))?;
    // The read the view is built from: no Python code runs from here on.
    let tensor = fill(object, api)?;
    // With no `__torch_function__` mode, TensorBase's C method answered `untyped_storage()` itself
    // (the dialect admits no subclass that overrides `__torch_function__`): its storage is the
    // tensor's. A mode may answer with any object, which is then checked.
    if modes_may_be_active(py)? {
        check_storage(&storage, &tensor)?;
    }
    Ok(Read { tensor, storage })
}

/// The table's `DLTensor` of `object`.
fn fill(object: &Bound<'_, PyAny>, api: Api) -> PyResult<DLTensor> {
    let mut tensor = DLTensor::default();
    let fill = api.table().dltensor_from_py_object_no_sync.expect("checked by the dialect");
    // SAFETY: the table was found on this object's exact type (the exchange API's requirement),
    // the GIL is held, and `tensor` is a writable struct on our stack.
    if unsafe { fill(object.as_ptr().cast(), &mut tensor) } != 0 {
        return Err(explain(object, PyErr::fetch(object.py())));
    }
    Ok(tensor)
}

/// The error to raise for PyTorch's refusal `err` to export `object`: [`ExchangeError::MetaTensor`]
/// for a tensor on the meta device, whose refusal carries PyTorch's C++ backtrace; `err` otherwise.
/// Asked only after a refusal, so that exports that succeed pay nothing.
pub(crate) fn explain(object: &Bound<'_, PyAny>, err: PyErr) -> PyErr {
    let py = object.py();
    match object.getattr(intern!(py, "is_meta")).and_then(|meta| meta.is_truthy()) {
        Ok(true) => ExchangeError::MetaTensor.into(),
        _ => err,
    }
}

/// Refuses a PyTorch tensor whose lazy negation bit, or (when `complex`) conjugate bit, is set —
/// asked of `torch._C.TensorBase`'s own methods, which a subclass cannot override. The negation bit
/// exists on every dtype (`z.conj().imag` is a float tensor with it), the conjugate bit only on
/// complex ones.
pub(crate) fn check_lazy_bits(object: &Bound<'_, PyAny>, base: StaticType, complex: bool) -> PyResult<()> {
    let py = object.py();
    let base = base.bind(py);
    if complex && base.getattr(intern!(py, "is_conj"))?.call1((object,))?.is_truthy()? {
        return Err(ExchangeError::ConjugateBit.into());
    }
    if base.getattr(intern!(py, "is_neg"))?.call1((object,))?.is_truthy()? {
        return Err(ExchangeError::NegativeBit.into());
    }
    Ok(())
}

/// Refuses a mutable view of a PyTorch tensor that requires grad while gradients are recorded.
fn check_grad(object: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = object.py();
    if object.getattr(intern!(py, "requires_grad"))?.is_truthy()? {
        let torch = py.import(intern!(py, "torch"))?;
        if torch.call_method0(intern!(py, "is_grad_enabled"))?.is_truthy()? {
            return Err(ExchangeError::RequiresGrad.into());
        }
    }
    Ok(())
}

/// `torch._C._is_torch_function_mode_enabled`, found once and proven PyTorch's own (a C function of
/// that name bound to the module `torch._C`): `None` when it cannot be found or proven.
static MODE_CHECK: Shared<Option<Option<Py<PyAny>>>> = Shared::new(None);

/// Whether a `__torch_function__` mode may be active (true when that cannot be ruled out).
fn modes_may_be_active(py: Python<'_>) -> PyResult<bool> {
    let check = match MODE_CHECK.with(py, |cached| cached.as_ref().map(|f| f.as_ref().map(|f| f.clone_ref(py)))) {
        Some(found) => found,
        None => {
            let found = find_mode_check(py);
            let kept = found.as_ref().map(|f| f.clone_ref(py));
            // Set once; a value already there (found meanwhile by Python code this ran) is kept,
            // and the unused one dropped outside the lock (dropping may run Python code).
            let unused = MODE_CHECK.with(py, |cached| {
                if cached.is_none() {
                    *cached = Some(kept);
                    None
                } else {
                    Some(kept)
                }
            });
            drop(unused);
            found
        }
    };
    match check {
        Some(check) => check.bind(py).call0()?.is_truthy(),
        None => Ok(true),
    }
}

/// PyTorch's mode check, from `sys.modules["torch._C"]`, accepted only when it is a C function of
/// the right name bound to a module named `torch._C` (pure Python cannot make one).
fn find_mode_check(py: Python<'_>) -> Option<Py<PyAny>> {
    let modules = py.import(intern!(py, "sys")).ok()?.getattr(intern!(py, "modules")).ok()?;
    let check = modules.get_item("torch._C").ok()?.getattr("_is_torch_function_mode_enabled").ok()?;
    let builtin = check.is_instance_of::<pyo3::types::PyCFunction>();
    let name = check.getattr("__name__").ok()?.extract::<String>().ok()?;
    let module = check.getattr("__self__").ok()?.getattr("__name__").ok()?.extract::<String>().ok()?;
    (builtin && name == "_is_torch_function_mode_enabled" && module == "torch._C").then(|| check.unbind())
}

/// `torch._C.StorageBase`, found once on the first storage seen (a static type: it lives as long as
/// the process).
static STORAGE_BASE: Shared<Option<StaticType>> = Shared::new(None);

/// Proves that `storage` holds every byte `tensor` reaches, through `torch._C.StorageBase`'s C
/// methods (`data_ptr`, `nbytes`): the storage came from a Python call, which a
/// `__torch_function__` mode may answer with any object.
fn check_storage(storage: &Bound<'_, PyAny>, tensor: &DLTensor) -> PyResult<()> {
    let py = storage.py();
    let Some(reach) = byte_reach(tensor) else { return Ok(()) }; // no element: nothing read
    let base = match STORAGE_BASE.with(py, |cached| *cached) {
        Some(base) => base,
        None => {
            let found = StaticType::base_named(&storage.get_type(), "torch._C.StorageBase")?
                .ok_or(ExchangeError::StorageMismatch)?;
            STORAGE_BASE.with(py, |cached| *cached = Some(found));
            found
        }
    };
    let base = base.bind(py);
    if !storage.get_type().is_subclass(&base)? {
        return Err(ExchangeError::StorageMismatch.into());
    }
    let start: usize = base.getattr(intern!(py, "data_ptr"))?.call1((storage,))?.extract()?;
    let bytes: usize = base.getattr(intern!(py, "nbytes"))?.call1((storage,))?.extract()?;
    let end = start.checked_add(bytes).ok_or(ExchangeError::StorageMismatch)?;
    if reach.start < start || reach.end > end {
        return Err(ExchangeError::StorageMismatch.into());
    }
    Ok(())
}

/// The bytes a tensor's elements span (`None` when it has none, or its metadata cannot be read —
/// the view's validation then refuses it).
fn byte_reach(tensor: &DLTensor) -> Option<core::ops::Range<usize>> {
    let rank = usize::try_from(tensor.ndim).ok()?;
    let bits = u64::from(tensor.dtype.bits) * u64::from(tensor.dtype.lanes);
    let size = i128::from(bits.div_ceil(8));
    let (mut low, mut high) = (0i128, 0i128);
    if rank > 0 {
        if tensor.shape.is_null() || tensor.strides.is_null() {
            return None;
        }
        // SAFETY: PyTorch's table fills shape and strides with `ndim` entries, alive while the
        // tensor is (the exchange API's promise); the object is held by the caller.
        let shape = unsafe { core::slice::from_raw_parts(tensor.shape, rank) };
        // SAFETY: as above.
        let strides = unsafe { core::slice::from_raw_parts(tensor.strides, rank) };
        for (&extent, &stride) in shape.iter().zip(strides) {
            if extent <= 0 {
                return None;
            }
            let step = i128::from(extent - 1) * i128::from(stride);
            if step < 0 { low += step } else { high += step }
        }
    }
    let first = i128::from(tensor.data as usize as u64) + i128::from(tensor.byte_offset);
    let start = usize::try_from(first + low * size).ok()?;
    let end = usize::try_from(first + (high + 1) * size).ok()?;
    Some(start..end)
}
