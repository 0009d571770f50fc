//! The `dlspan` package's side of rule Y18: the C API table it exports (`dlspan._C_API`: its borrow
//! registry, its `Tensor` class, its exchange table) and [`into_tensor`], which makes a result of the
//! process's one `dlspan.Tensor` class in whichever build it runs.

use super::borrow::{Footprint, live_own, register_own, release_own};
use super::capi::{ABI_VERSION, CAPSULE, CApi, CFootprint, CHeld, Provider, Table, provide, provider};
use super::exchange::exchange_api;
use super::tensor::Tensor;
use crate::error::DlpackError;
use crate::ffi::DLTensor;
use crate::owned::ManagedTensor;
use core::ffi::c_int;
use core::ptr::NonNull;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyModule};
use std::sync::OnceLock;

/// The table, made once (the type object only exists at run time) and never freed.
static TABLE: OnceLock<Table> = OnceLock::new();

/// [`export_c_api`](super::export_c_api)'s table: the capsule `_C_API` on `module`.
///
/// # Errors
///
/// What setting the module attribute raises.
pub(crate) fn export_table(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    provide();
    let tensor_type = py.get_type::<Tensor>().as_type_ptr();
    let table = TABLE.get_or_init(|| {
        Table(CApi {
            version: ABI_VERSION,
            size: size_of::<CApi>() as u32,
            tensor_type,
            exchange: exchange_api(),
            register,
            release,
            live,
            describe,
        })
    });
    let pointer = NonNull::from(table).cast();
    // SAFETY: the table is static (never freed nor written once made); the capsule has no
    // destructor, and its name is static.
    let capsule = unsafe { PyCapsule::new_with_pointer(py, pointer, CAPSULE) }?;
    module.add("_C_API", capsule)
}

/// `register`: the footprint in this build's own registry.
///
/// # Safety
///
/// Attached; the arguments as [`RegisterFn`](super::capi::RegisterFn) says.
unsafe extern "C" fn register(
    footprint: *const CFootprint,
    mutable: c_int,
    object: *mut pyo3::ffi::PyObject,
    name: *const u8,
    name_len: usize,
    id: *mut u64,
    held: *mut CHeld,
) -> c_int {
    // SAFETY: the C API is called attached (its contract).
    let py = unsafe { Python::assume_attached() };
    // SAFETY: a live footprint (caller).
    let footprint = Footprint::from_c(unsafe { &*footprint });
    // SAFETY: a live object, borrowed for the call (caller).
    let object = unsafe { Bound::from_borrowed_ptr(py, object) };
    let name = if name.is_null() {
        None
    } else {
        // SAFETY: `name_len` bytes of UTF-8 alive for the process (caller: a static string of a
        // library CPython never unloads).
        let bytes: &'static [u8] = unsafe { core::slice::from_raw_parts(name, name_len) };
        core::str::from_utf8(bytes).ok()
    };
    let result =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| register_own(&object, name, footprint, mutable != 0)));
    match result {
        Ok(Ok(issued)) => {
            // SAFETY: a writable slot (caller).
            unsafe { id.write(issued) };
            0
        }
        Ok(Err(in_the_way)) => {
            let (name, name_len) = in_the_way.name.map_or((core::ptr::null(), 0), |n| (n.as_ptr(), n.len()));
            let object = in_the_way.object.map_or(core::ptr::null_mut(), Py::into_ptr);
            // SAFETY: a writable slot (caller), which receives a new reference and a static name.
            unsafe { held.write(CHeld { object, name, name_len, mutable: c_int::from(in_the_way.mutable) }) };
            1
        }
        // Refused as under a mutable borrow: registering nothing is the safe answer.
        Err(_) => {
            // SAFETY: a writable slot (caller).
            unsafe { held.write(CHeld::default()) };
            1
        }
    }
}

/// `release`: ends a borrow of this build's own registry.
///
/// # Safety
///
/// Attached.
unsafe extern "C" fn release(id: u64) {
    // SAFETY: the C API is called attached (its contract).
    let py = unsafe { Python::assume_attached() };
    // Nothing in it panics (a search and a removal); were it to, the borrow would stay registered,
    // which refuses later views rather than allowing an overlap.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| release_own(py, id)));
}

/// `live`: the borrows in this build's own registry.
///
/// # Safety
///
/// Attached.
unsafe extern "C" fn live() -> usize {
    // SAFETY: the C API is called attached (its contract).
    let py = unsafe { Python::assume_attached() };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| live_own(py))).unwrap_or(0)
}

/// `describe`: a `Tensor` of this build's class as a `DLTensor` and its flags.
///
/// # Safety
///
/// Attached; `object` a live object, `out` and `flags` writable.
unsafe extern "C" fn describe(object: *mut pyo3::ffi::PyObject, out: *mut DLTensor, flags: *mut u64) -> c_int {
    // SAFETY: the C API is called attached (its contract).
    let py = unsafe { Python::assume_attached() };
    let Some(object) = NonNull::new(object) else {
        pyo3::exceptions::PyTypeError::new_err("null object").restore(py);
        return -1;
    };
    // SAFETY: a live object (caller), attached; a new strong reference is taken.
    let object = unsafe { Bound::from_borrowed_ptr(py, object.as_ptr()) };
    match object.cast::<Tensor>() {
        Ok(tensor) => {
            let meta = &tensor.get().meta;
            // SAFETY: writable slots (caller). The shape and strides point into the tensor's
            // metadata, which the object keeps unchanged while it lives (the class is frozen).
            unsafe { out.write(meta.dl_tensor()) };
            // SAFETY: as above.
            unsafe { flags.write(meta.flags()) };
            0
        }
        Err(err) => {
            PyErr::from(err).restore(py);
            -1
        }
    }
}

/// A `dlspan.Tensor` owning `tensor`, of the process's one class: the `dlspan` package's when it is
/// installed (through its exchange table's `managed_tensor_to_py_object_no_sync`), so that an
/// extension's results pass `isinstance(r, dlspan.Tensor)`; this build's own class otherwise, as
/// [`Tensor::from_managed`] makes (rule Y18).
///
/// # Errors
///
/// As [`Tensor::from_managed`]; the tensor is then released.
///
/// ```
/// use dlspan::{ManagedTensor, python::into_tensor};
/// use dlspan::pyo3::prelude::*;
/// Python::initialize();
/// Python::attach(|py| {
///     let result = into_tensor(py, ManagedTensor::from_owner(vec![1.0f32, 2.0], [2])?)?;
///     assert_eq!(result.getattr("shape")?.extract::<(i64,)>()?, (2,));
///     assert_eq!(result.get_type().name()?.to_str()?, "Tensor");
///     Ok::<_, PyErr>(())
/// })?;
/// # Ok::<(), PyErr>(())
/// ```
pub fn into_tensor(py: Python<'_>, tensor: ManagedTensor) -> PyResult<Bound<'_, PyAny>> {
    match provider(py) {
        Provider::Own => Ok(Tensor::from_managed(py, tensor)?.into_any()),
        Provider::Package(table) => {
            // SAFETY: the package's exchange table is static (checked when the table was found).
            let exchange = unsafe { &*table.0.exchange };
            let to_object = exchange.managed_tensor_to_py_object_no_sync.ok_or(DlpackError::NullManagedTensor)?;
            let raw = tensor.into_raw_versioned();
            let mut object = core::ptr::null_mut();
            // SAFETY: attached; `raw` is a live versioned managed tensor whose ownership the call
            // steals (DLPack's contract: on failure too), `object` a writable slot.
            if unsafe { to_object(raw, &mut object) } != 0 {
                return Err(PyErr::fetch(py));
            }
            // SAFETY: on success the slot holds a new reference to a Python object.
            Ok(unsafe { Bound::from_owned_ptr(py, object.cast()) })
        }
    }
}
