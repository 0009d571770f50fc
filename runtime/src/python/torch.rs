//! PyTorch tensors read through their C exchange table: what the table hands out that `__dlpack__`
//! would refuse (lazy conjugate and negation bits, tensors that require grad), and the storage a
//! view argument holds so that Python code run during the call cannot free its memory (rule Y14).
//!
//! Order matters: every check that may run Python code (a subclass's method, a `__torch_function__`
//! mode) runs before the tensor's address is read, and the storage taken before that read is then
//! proven, by `StorageBase`'s own C methods, to hold every byte the tensor reaches: Python code may
//! run inside `untyped_storage()` itself (a mode; a subclass's call goes through
//! `torch.Tensor.__torch_function__`, and a collection it starts runs callbacks and finalizers).
//!
//! The calls a read needs (the mode check, `is_neg`, `untyped_storage`, `data_ptr`, `nbytes`) are
//! `torch._C`'s, `TensorBase`'s and `StorageBase`'s C functions, called directly when no mode is
//! active (`Direct`); `is_neg` releases the GIL inside PyTorch, which no caller can avoid.

use super::dialect::{Api, StaticType};
use super::error::ExchangeError;
use super::gil::Shared;
use crate::ffi::{DLDataTypeCode, DLDeviceType, DLTensor};
use crate::owned::ManagedTensor;
use core::ptr::NonNull;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyString;

/// A PyTorch tensor's `DLTensor`, read through the exchange table after the checks, and the storage
/// that holds its memory.
pub(crate) struct Read<'py> {
    pub(crate) tensor: DLTensor,
    pub(crate) storage: Bound<'py, PyAny>,
}

/// Reads `object` (whose type derives from `base`, `torch._C.TensorBase`, and has the exchange table
/// `api`) as a view argument, mutable or not.
///
/// With no `__torch_function__` mode active (the dialect admits no subclass that overrides
/// `__torch_function__`), `TensorBase`'s C methods answer themselves and are called directly
/// ([`Direct`]); otherwise, and for every refusal, through Python. Either way the storage is
/// checked after the tensor is read.
///
/// # Errors
///
/// What the table or PyTorch raises; [`ExchangeError::ConjugateBit`], [`ExchangeError::NegativeBit`],
/// [`ExchangeError::RequiresGrad`] (mutable views while gradients are recorded);
/// [`ExchangeError::StorageMismatch`] when the storage PyTorch returns does not hold the tensor.
pub(crate) fn read<'py>(object: &Bound<'py, PyAny>, api: Api, base: StaticType, mutable: bool) -> PyResult<Read<'py>> {
    if let Some(direct) = Direct::find(object, base)
        && let Some(read) = read_direct(object, api, &direct, mutable)?
    {
        return Ok(read);
    }
    read_through_python(object, api, base, mutable)
}

/// What `torch.Tensor.__dlpack__()` exports for a host tensor, taken through the exchange table's
/// managed call instead of the Python method (a tenth of its cost: no argument parsing, no Python
/// frame, no capsule): the same tensor, holding the same `at::Tensor` (and so, as the method's
/// export, reading freed memory if the PyTorch tensor is `set_` to other memory while it lives:
/// [`shared_host`] holds the storage instead). `None` sends the caller to
/// `__dlpack__`, which raises PyTorch's own error or exports, for everything the method treats
/// otherwise: a `__torch_function__` mode may be active (it answers the method) or the functions
/// that check for one were not found, the tensor requires grad (which the method refuses), the table
/// refuses it (sparse, `meta`), or it is not in host memory (whose export orders streams). The lazy
/// bits are the caller's to check first (rule Y6).
///
/// # Errors
///
/// What the mode check or the `requires_grad` property raises; [`DlpackError`](crate::DlpackError)
/// for a managed tensor the table hands out that dlspan cannot take (a major version other than 1).
pub(crate) fn managed_host(object: &Bound<'_, PyAny>, api: Api, base: StaticType) -> PyResult<Option<ManagedTensor>> {
    let py = object.py();
    let Some(direct) = exported_as_is(object, base)? else { return Ok(None) };
    let Some(managed) = api.table().managed_tensor_from_py_object_no_sync else { return Ok(None) };
    let mut raw = core::ptr::null_mut();
    // SAFETY: the table was found on this object's exact type (the exchange API's requirement), the
    // GIL is held, and `raw` is a writable slot on our stack.
    if unsafe { managed(object.as_ptr().cast(), &mut raw) } != 0 {
        // `__dlpack__` raises PyTorch's own words for what the table refused.
        drop(PyErr::take(py));
        return Ok(None);
    }
    // SAFETY: on success the slot holds a managed tensor whose ownership passes here (the exchange
    // API's contract).
    let tensor = unsafe { ManagedTensor::from_raw_versioned(raw) }?;
    if tensor.device().device_type != DLDeviceType::kDLCPU {
        return Ok(None);
    }
    // PyTorch exports a view as it is, even one reaching past a storage shrunk under it (`resize_`
    // of its base's storage): the storage, through `StorageBase`'s C methods, must hold it.
    let storage = direct.storage.call(object)?;
    if !direct.holds(&storage, tensor.dl_tensor())? {
        return Err(ExchangeError::StorageMismatch.into());
    }
    Ok(Some(tensor))
}

/// A PyTorch tensor in host memory as `dlspan.from_dlpack` shares it: read as a shared view
/// argument reads it (the checks, then the tensor and the storage that holds it, rule Y14), for a
/// `Tensor` that holds the storage rather than the tensor: a `set_` of the tensor afterwards leaves
/// the `Tensor`'s memory alive, where `__dlpack__`'s export (and NumPy's views of it) would read
/// freed memory. `None` sends the caller to `__dlpack__` for everything [`managed_host`] sends
/// there, and for complex tensors, tensors with the lazy negation bit (refused there) and tensors
/// whose read fails (a sparse tensor has no storage).
///
/// # Errors
///
/// What the mode check or the `requires_grad` property raises.
pub(crate) fn shared_host<'py>(object: &Bound<'py, PyAny>, api: Api, base: StaticType) -> PyResult<Option<Read<'py>>> {
    let Some(direct) = exported_as_is(object, base)? else { return Ok(None) };
    // A tensor PyTorch cannot read this way (a sparse tensor has no storage) goes to `__dlpack__`,
    // which raises PyTorch's own error for it.
    let Ok(read) = read_direct(object, api, &direct, false) else { return Ok(None) };
    Ok(read.filter(|read| read.tensor.device.device_type == DLDeviceType::kDLCPU))
}

/// PyTorch's functions, called directly, when `torch.Tensor.__dlpack__` would export `object` as
/// it is: `None` when a `__torch_function__` mode may answer the method (or the functions that
/// check for one were not found) or the tensor requires grad (which the method refuses).
fn exported_as_is(object: &Bound<'_, PyAny>, base: StaticType) -> PyResult<Option<Direct>> {
    let py = object.py();
    let Some(direct) = Direct::find(object, base) else { return Ok(None) };
    if direct.modes_may_be_active(py)? || object.getattr(intern!(py, "requires_grad"))?.is_truthy()? {
        return Ok(None);
    }
    Ok(Some(direct))
}

/// [`read`] through `TensorBase`'s C functions, called directly; `None` sends the caller to the
/// path through Python, which raises its refusals in their order: a `__torch_function__` mode may
/// be active, the tensor is complex (its conjugate bit is asked there), a check refuses it, or the
/// storage taken does not hold it.
///
/// The checks that may run Python code on this thread (a mutable view's `requires_grad`, a property
/// a subclass may override) run first, then the mode check, then `is_neg` (which releases the GIL:
/// other threads run), then the storage and the tensor are read. The storage is then proven to hold
/// every byte the tensor reaches ([`Direct::holds`]): Python code may still run between the two
/// reads — a subclass's call goes through `torch.Tensor.__torch_function__` (Python, during which
/// another thread may run), and on Python 3.11 the storage object's allocation may start a garbage
/// collection whose finalizers and `gc.callbacks` run on this thread.
fn read_direct<'py>(
    object: &Bound<'py, PyAny>,
    api: Api,
    direct: &Direct,
    mutable: bool,
) -> PyResult<Option<Read<'py>>> {
    if mutable && check_grad(object).is_err() {
        return Ok(None);
    }
    if direct.modes_may_be_active(object.py())? || direct.is_neg.call(object)?.is_truthy()? {
        return Ok(None);
    }
    if mutable {
        mark_written(object)?;
    }
    let storage = direct.storage.call(object)?;
    // The read the view is built from, checked against the storage.
    let tensor = fill(object, api)?;
    if tensor.dtype.code == DLDataTypeCode::kDLComplex.0 || !direct.holds(&storage, &tensor)? {
        return Ok(None);
    }
    Ok(Some(Read { tensor, storage }))
}

/// [`read`] through Python calls of `TensorBase`'s methods, with the storage checked when a
/// `__torch_function__` mode may have answered.
fn read_through_python<'py>(
    object: &Bound<'py, PyAny>,
    api: Api,
    base: StaticType,
    mutable: bool,
) -> PyResult<Read<'py>> {
    let py = object.py();
    // A first read, for the dtype only: Python code may yet change the tensor.
    let probe = fill(object, api)?;
    check_lazy_bits(object, base, probe.dtype.code == DLDataTypeCode::kDLComplex.0)?;
    if mutable {
        check_grad(object)?;
        mark_written(object)?;
    }
    let storage = base.bind(py).getattr(intern!(py, "untyped_storage"))?.call1((object,))?;
    // The read the view is built from. A `__torch_function__` mode may answer `untyped_storage()`
    // with any object, and Python code may run inside the call (a subclass's goes through
    // `torch.Tensor.__torch_function__`; a garbage collection may start): the storage is checked.
    let tensor = fill(object, api)?;
    check_storage(&storage, &tensor)?;
    Ok(Read { tensor, storage })
}

/// A PyTorch C function that takes no argument (`METH_NOARGS`), called with its `self` directly.
#[derive(Clone, Copy)]
struct NoArgs(pyo3::ffi::PyCFunction);

impl NoArgs {
    /// The C function behind `bound`, a builtin function or method bound to `slf` with no
    /// argument, if it is one.
    fn of(bound: &Bound<'_, PyAny>, slf: &Bound<'_, PyAny>) -> Option<Self> {
        if !bound.is_instance_of::<pyo3::types::PyCFunction>() {
            return None;
        }
        // SAFETY: a builtin function object (checked above), attached.
        let flags = unsafe { pyo3::ffi::PyCFunction_GetFlags(bound.as_ptr()) };
        // SAFETY: as above.
        let bound_to = unsafe { pyo3::ffi::PyCFunction_GetSelf(bound.as_ptr()) };
        if flags != pyo3::ffi::METH_NOARGS || bound_to != slf.as_ptr() {
            return None;
        }
        // SAFETY: as above.
        unsafe { pyo3::ffi::PyCFunction_GetFunction(bound.as_ptr()) }.map(Self)
    }

    /// Calls the function with `slf` as its `self`, as calling it bound to `slf` would.
    ///
    /// `slf` is of the type the function was found for (its `self`, or an object whose type
    /// derives from the type that defines it, for a method).
    fn call<'py>(self, slf: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        // SAFETY: a `METH_NOARGS` function takes its `self` and a null argument and returns a new
        // reference or null with an exception set; attached; `slf` is of its type (caller).
        let result = unsafe { (self.0)(slf.as_ptr(), core::ptr::null_mut()) };
        // SAFETY: as above.
        unsafe { Bound::from_owned_ptr_or_err(slf.py(), result) }
    }
}

/// `TensorBase`'s `is_neg` and `untyped_storage`, `StorageBase`'s `data_ptr` and `nbytes`, and
/// `torch._C`'s `_is_torch_function_mode_enabled`, as C functions called directly: each call through
/// Python looked the method up on the type and built an argument tuple (about 60 of the 110 ns each
/// `TensorBase.is_neg(x)` cost). The methods come from `TensorBase` and `StorageBase` (static types:
/// their attributes cannot be replaced), bound as `TensorBase.is_neg.__get__(x)` binds them; they
/// take any object of their type as `self`, and answer for themselves when no `__torch_function__`
/// mode is active (the dialect admits no subclass that overrides `__torch_function__`).
#[derive(Clone, Copy)]
struct Direct {
    is_neg: NoArgs,
    storage: NoArgs,
    data_ptr: NoArgs,
    nbytes: NoArgs,
    /// `torch._C.StorageBase`, the type `data_ptr` and `nbytes` take as `self`.
    storage_base: StaticType,
    mode_check: NoArgs,
    /// The mode check's `self`, the module `torch._C` (kept alive by [`DIRECT`]).
    torch_c: NonNull<pyo3::ffi::PyObject>,
}

// SAFETY: function pointers, a static type, and a module that the cache keeps alive, reached only
// while attached.
unsafe impl Send for Direct {}

/// [`Direct`] and a strong reference to its module, found once (`None` inside: not found, and
/// PyTorch is read through Python).
static DIRECT: Shared<Option<Option<Found>>> = Shared::new(None);

/// [`Direct`], and the module it calls the mode check on.
type Found = (Direct, Py<PyAny>);

impl Direct {
    /// The process's functions, found on the first tensor read (of a type deriving from `base`)
    /// with no `__torch_function__` mode active.
    fn find(object: &Bound<'_, PyAny>, base: StaticType) -> Option<Self> {
        let py = object.py();
        if let Some(found) = DIRECT.with(py, |cached| cached.as_ref().map(|found| found.as_ref().map(|(d, _)| *d))) {
            return found;
        }
        // A mode would answer the look-up's calls: looked up on a later read.
        let check = find_mode_check(py)?;
        if check.bind(py).call0().and_then(|active| active.is_truthy()).unwrap_or(true) {
            return None;
        }
        let found = Self::look_up(object, base, check);
        // The look-up takes this tensor's storage: a tensor without one (sparse, mkldnn) says
        // nothing of the functions, and is no reason to read every later tensor through Python.
        if found.is_none()
            && base.bind(py).getattr(intern!(py, "untyped_storage")).and_then(|f| f.call1((object,))).is_err()
        {
            return None;
        }
        let direct = found.as_ref().map(|(direct, _)| *direct);
        // Set once; a value found meanwhile (by Python code the look-up ran) is kept, and the
        // unused one dropped outside the lock (dropping may run Python code).
        let unused = DIRECT.with(py, |cached| if cached.is_none() { cached.replace(found) } else { Some(found) });
        drop(unused);
        direct
    }

    fn look_up(object: &Bound<'_, PyAny>, base: StaticType, check: Py<PyAny>) -> Option<Found> {
        let py = object.py();
        // The method `name` of the static type `ty`, as a C function bound to `slf`.
        let method = |ty: StaticType, name: &Bound<'_, PyString>, slf: &Bound<'_, PyAny>| -> Option<NoArgs> {
            let descriptor = ty.bind(py).getattr(name).ok()?;
            // The address of CPython's static type of method descriptors (nothing is read).
            let method_descriptor = &raw mut pyo3::ffi::PyMethodDescr_Type;
            if descriptor.get_type().as_type_ptr() != method_descriptor {
                return None;
            }
            let bound = descriptor.call_method1(intern!(py, "__get__"), (slf,)).ok()?;
            NoArgs::of(&bound, slf)
        };
        let storage = base.bind(py).getattr(intern!(py, "untyped_storage")).ok()?.call1((object,)).ok()?;
        let storage_base = StaticType::base_named(&storage.get_type(), "torch._C.StorageBase").ok()??;
        let torch_c = check.bind(py).getattr(intern!(py, "__self__")).ok()?;
        let direct = Self {
            is_neg: method(base, intern!(py, "is_neg"), object)?,
            storage: method(base, intern!(py, "untyped_storage"), object)?,
            data_ptr: method(storage_base, intern!(py, "data_ptr"), &storage)?,
            nbytes: method(storage_base, intern!(py, "nbytes"), &storage)?,
            storage_base,
            mode_check: NoArgs::of(check.bind(py), &torch_c)?,
            torch_c: NonNull::new(torch_c.as_ptr())?,
        };
        Some((direct, torch_c.unbind()))
    }

    /// Whether a `__torch_function__` mode may be active.
    fn modes_may_be_active(&self, py: Python<'_>) -> PyResult<bool> {
        // SAFETY: the module is alive (held by the cache), attached.
        let torch_c = unsafe { Borrowed::from_ptr(py, self.torch_c.as_ptr()) };
        self.mode_check.call(&torch_c)?.is_truthy()
    }

    /// Whether `storage` is a `StorageBase` whose bytes hold every byte `tensor` reaches (always,
    /// when it reaches none), asked of `StorageBase`'s own C methods.
    fn holds(&self, storage: &Bound<'_, PyAny>, tensor: &DLTensor) -> PyResult<bool> {
        let Some(reach) = byte_reach(tensor) else { return Ok(true) }; // no element: nothing read
        let base = self.storage_base.bind(storage.py());
        // SAFETY: a live object, attached; reads its type pointer.
        let ty = unsafe { pyo3::ffi::Py_TYPE(storage.as_ptr()) };
        // SAFETY: live type objects (the storage's, and a static type), attached; a plain walk of
        // the MRO, which runs no Python code (unlike `issubclass`, which a metaclass may answer).
        let derives = unsafe { pyo3::ffi::PyType_IsSubtype(ty, base.as_type_ptr()) };
        if derives == 0 {
            return Ok(false);
        }
        let (start_int, bytes_int) = (self.data_ptr.call(storage)?, self.nbytes.call(storage)?);
        // SAFETY: a live object, attached; converts any integer, and fails (with an exception set,
        // fetched below) on anything else.
        let start = unsafe { pyo3::ffi::PyLong_AsVoidPtr(start_int.as_ptr()) };
        // SAFETY: as above.
        let bytes = unsafe { pyo3::ffi::PyLong_AsSsize_t(bytes_int.as_ptr()) };
        if start.is_null() || bytes < 0 {
            return PyErr::take(storage.py()).map_or(Ok(false), Err);
        }
        let (start, bytes) = (start as usize, bytes.unsigned_abs());
        Ok(start.checked_add(bytes).is_some_and(|end| start <= reach.start && reach.end <= end))
    }
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

/// Tells autograd that `object` is written in place, as PyTorch's own in-place operations do: its
/// version counter is bumped (`torch._C._increment_version`), so a backward pass that saved the
/// tensor's old values raises PyTorch's "modified by an inplace operation" error instead of
/// computing gradients from the new ones. Called when a mutable view argument is extracted, before
/// the write (the counter is compared at backward time), as PyTorch bumps `out=` arguments.
///
/// An inference tensor has no version counter: inside `torch.inference_mode()` it is written as
/// PyTorch writes it, and outside it is refused ([`ExchangeError::InferenceTensor`]), as PyTorch
/// refuses an in-place update there. PyTorch's counter bump skips inference tensors without a word;
/// they are told by their `_version`, which they refuse to give (a plain attribute read, cheaper
/// than the dispatched `is_inference`), and confirmed by `is_inference`.
pub(crate) fn mark_written(object: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = object.py();
    if object.getattr(intern!(py, "_version")).is_err()
        && object.call_method0(intern!(py, "is_inference"))?.is_truthy()?
    {
        let torch = py.import(intern!(py, "torch"))?;
        if torch.call_method0(intern!(py, "is_inference_mode_enabled"))?.is_truthy()? {
            return Ok(());
        }
        return Err(ExchangeError::InferenceTensor.into());
    }
    static INCREMENT: pyo3::sync::PyOnceLock<Option<Py<PyAny>>> = pyo3::sync::PyOnceLock::new();
    let increment = INCREMENT.get_or_init(py, || find_torch_c(py, "_increment_version"));
    let Some(increment) = increment else { return Ok(()) }; // a PyTorch without version counters
    // A tuple: a bare tensor is taken as an iterable of its rows, each bumping the shared counter.
    increment.bind(py).call1((pyo3::types::PyTuple::new(py, [object])?,))?;
    Ok(())
}

/// `torch._C`'s C function `name`, from `sys.modules["torch._C"]`, accepted only when it is a
/// builtin of that name bound to a module named `torch._C` (pure Python cannot make one).
fn find_torch_c(py: Python<'_>, name: &str) -> Option<Py<PyAny>> {
    let modules = py.import(intern!(py, "sys")).ok()?.getattr(intern!(py, "modules")).ok()?;
    let function = modules.get_item("torch._C").ok()?.getattr(name).ok()?;
    let builtin = function.is_instance_of::<pyo3::types::PyCFunction>();
    let found = function.getattr("__name__").ok()?.extract::<String>().ok()?;
    let module = function.getattr("__self__").ok()?.getattr("__name__").ok()?.extract::<String>().ok()?;
    (builtin && found == name && module == "torch._C").then(|| function.unbind())
}

/// PyTorch's mode check, from `sys.modules["torch._C"]`, accepted only when it is a C function of
/// the right name bound to a module named `torch._C` (pure Python cannot make one).
fn find_mode_check(py: Python<'_>) -> Option<Py<PyAny>> {
    find_torch_c(py, "_is_torch_function_mode_enabled")
}

/// `torch._C.StorageBase`, found once on the first storage seen (a static type: it lives as long as
/// the process).
static STORAGE_BASE: Shared<Option<StaticType>> = Shared::new(None);

/// Proves that what PyTorch exported for `object` (its table's or `__dlpack__`'s tensor, not a
/// copy) lies in the tensor's storage: a storage shrunk under a view (`resize_` of the base's
/// `untyped_storage()`) leaves the view reaching bytes the storage no longer holds, which PyTorch
/// exports as they are ([`ExchangeError::StorageMismatch`], as for view arguments, rule Y14).
pub(crate) fn check_exported(object: &Bound<'_, PyAny>, base: StaticType, tensor: &DLTensor) -> PyResult<()> {
    let py = object.py();
    let storage = base.bind(py).getattr(intern!(py, "untyped_storage"))?.call1((object,))?;
    check_storage(&storage, tensor)
}

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
