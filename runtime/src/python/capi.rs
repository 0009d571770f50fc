//! One `dlspan.Tensor` class and one borrow registry per process: the C API the `dlspan` package
//! exports to extensions built on this crate (rule Y18), and the decision each build makes once,
//! on first use, whether to use it.
//!
//! Every build of the crate (the package, and each extension on it) carries its own copy of the
//! registry and of the `Tensor` class: separate shared libraries share no Rust statics. So the
//! package exports its registry and class as a versioned table in a capsule, `dlspan._C_API`, as
//! NumPy exports `_ARRAY_API`; an extension looks it up once (`PyCapsule_Import`, which imports
//! `dlspan` and checks the capsule's name), checks its version and size, and from then on
//! registers its borrows and makes its results there. Without the package (or with one whose table
//! it cannot read) it keeps its own, as before.
//!
//! The table is read here; it is filled in `python::package`, above the registry and the class
//! it exports.

use crate::ffi::{DLPackExchangeAPI, DLTensor};
use core::ffi::{CStr, c_int};
use pyo3::prelude::*;
use std::sync::OnceLock;

/// The name of the package's capsule, which is also the module attribute it is found at
/// (`PyCapsule_Import`'s convention: `module.attribute`).
pub(crate) const CAPSULE: &CStr = c"dlspan._C_API";

/// The table's ABI version: changed whenever a field changes its meaning or place. Fields are only
/// ever appended within one version, and `size` says how many the exporter has.
pub(crate) const ABI_VERSION: u32 = 1;

/// A borrow's footprint as it crosses the C API: [`Footprint`](super::borrow::Footprint)'s fields
/// at fixed widths.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CFootprint {
    /// The address space: a device type and id (see the registry's `address_space`).
    pub(crate) space_type: i32,
    /// The address space's device id.
    pub(crate) space_id: i32,
    /// Lowest byte address reached.
    pub(crate) low: u64,
    /// One past the highest byte address reached.
    pub(crate) high: u64,
    /// Where a window of reached bytes starts: every byte reached is `anchor + k · period + j`
    /// for an integer `k` and `0 ≤ j < size`.
    pub(crate) anchor: u64,
    /// The windows' period (0: a single element). Builds before the block windows sent the gcd of
    /// the byte strides, with windows of one element: the same statement, so the test is shared.
    pub(crate) period: u64,
    /// Bytes of one window: one element, or a block of elements of the inner axes.
    pub(crate) size: u64,
}

/// The live borrow a new one would overlap.
pub(crate) struct Held {
    /// The object it views (`None` where the registry could not say).
    pub(crate) object: Option<Py<PyAny>>,
    /// Its argument's name, when it was extracted by name.
    pub(crate) name: Option<&'static str>,
    /// Whether it is mutable.
    pub(crate) mutable: bool,
}

/// The borrow in the way of a refused registration, as it crosses the C API.
#[repr(C)]
#[derive(Debug)]
pub(crate) struct CHeld {
    /// A new reference to the object it views, or null.
    pub(crate) object: *mut pyo3::ffi::PyObject,
    /// Its argument's name (UTF-8, `name_len` bytes, alive for the process: a static string of the
    /// library that registered it, which CPython never unloads), or null.
    pub(crate) name: *const u8,
    /// The name's length in bytes.
    pub(crate) name_len: usize,
    /// Whether it is mutable (0 or 1).
    pub(crate) mutable: c_int,
}

impl Default for CHeld {
    fn default() -> Self {
        Self { object: core::ptr::null_mut(), name: core::ptr::null(), name_len: 0, mutable: 1 }
    }
}

impl CHeld {
    /// What the refusal said, owned.
    ///
    /// # Safety
    ///
    /// Attached; `object` is null or a new reference this call takes; `name` is null or `name_len`
    /// bytes of UTF-8 alive for the process.
    pub(crate) unsafe fn take(self, py: Python<'_>) -> Held {
        // SAFETY: a new reference or null (caller), taken once here.
        let object = unsafe { Bound::from_owned_ptr_or_opt(py, self.object) }.map(Bound::unbind);
        let name = if self.name.is_null() {
            None
        } else {
            // SAFETY: `name_len` bytes alive for the process (caller).
            let bytes: &'static [u8] = unsafe { core::slice::from_raw_parts(self.name, self.name_len) };
            core::str::from_utf8(bytes).ok()
        };
        Held { object, name, mutable: self.mutable != 0 }
    }
}

/// `register`: records a footprint in the package's registry, for a view of `object` (borrowed; the
/// registry keeps a reference while the borrow lives) extracted as the argument named by `name`
/// (`name_len` bytes of UTF-8 alive for the process, or null). Returns 0 and the borrow's id in
/// `*id` when registered; otherwise refuses (1) and fills `*held` with the borrow in the way. Never
/// fails otherwise (a caught panic refuses, as under a mutable borrow).
pub(crate) type RegisterFn = unsafe extern "C" fn(
    footprint: *const CFootprint,
    mutable: c_int,
    object: *mut pyo3::ffi::PyObject,
    name: *const u8,
    name_len: usize,
    id: *mut u64,
    held: *mut CHeld,
) -> c_int;

/// `release`: ends the borrow `id` (each id once).
pub(crate) type ReleaseFn = unsafe extern "C" fn(id: u64);

/// `live`: the number of borrows registered.
pub(crate) type LiveFn = unsafe extern "C" fn() -> usize;

/// `describe`: a `Tensor` of the package's class as a `DLTensor` (shape and strides pointing into
/// the object, valid while it lives) and its DLPack flags (`READ_ONLY`,
/// `IS_SUBBYTE_TYPE_PADDED`). 0 on success; -1 with a Python exception set for any other object.
pub(crate) type DescribeFn =
    unsafe extern "C" fn(object: *mut pyo3::ffi::PyObject, out: *mut DLTensor, flags: *mut u64) -> c_int;

/// The package's C API, version [`ABI_VERSION`]. Every function is called with the GIL held (the
/// thread attached), never unwinds, and serves every extension of the process. The table and the
/// functions live as long as the process: the package's shared library is never unloaded, and the
/// table is allocated once and never freed, whatever becomes of the capsule.
#[repr(C)]
pub(crate) struct CApi {
    /// [`ABI_VERSION`] of the exporter; first in every version.
    pub(crate) version: u32,
    /// `size_of::<CApi>()` of the exporter; second in every version.
    pub(crate) size: u32,
    /// The package's `dlspan.Tensor` type object.
    pub(crate) tensor_type: *mut pyo3::ffi::PyTypeObject,
    /// The package's DLPack exchange table (`managed_tensor_to_py_object_no_sync` makes a
    /// `dlspan.Tensor` of the package's class owning a managed tensor).
    pub(crate) exchange: *const DLPackExchangeAPI,
    /// See [`RegisterFn`].
    pub(crate) register: RegisterFn,
    /// See [`ReleaseFn`].
    pub(crate) release: ReleaseFn,
    /// See [`LiveFn`].
    pub(crate) live: LiveFn,
    /// See [`DescribeFn`].
    pub(crate) describe: DescribeFn,
}

/// A table to hold in a static.
#[repr(transparent)]
pub(crate) struct Table(pub(crate) CApi);

// SAFETY: the table is immutable once made; its pointers are to a type object and an exchange
// table that live for the whole process and are only used with the GIL held.
unsafe impl Sync for Table {}
// SAFETY: as above.
unsafe impl Send for Table {}

/// Where this build registers borrows and makes its `dlspan.Tensor` results.
#[derive(Clone, Copy)]
pub(crate) enum Provider {
    /// Its own registry and class: this build is the package, or the package is absent.
    Own,
    /// The package's, through its table.
    Package(&'static Table),
}

/// The decision, made once per build and process.
static PROVIDER: OnceLock<Provider> = OnceLock::new();

/// This build's provider: decided on the first call (importing `dlspan` when the package is
/// installed), then fixed for the life of the process, so every borrow is released in the
/// registry that recorded it.
#[inline]
pub(crate) fn provider(py: Python<'_>) -> Provider {
    match PROVIDER.get() {
        Some(&provider) => provider,
        None => decide(py),
    }
}

/// Marks this build as the package itself: it exports the table and uses its own registry and
/// class (called by the package's module initialisation, before any use).
pub(crate) fn provide() {
    let _ = PROVIDER.set(Provider::Own);
}

#[cold]
fn decide(py: Python<'_>) -> Provider {
    // Looked up outside the lock (the import runs Python code, which may switch threads); the
    // first decision stored is the one every thread uses.
    let found = find(py);
    *PROVIDER.get_or_init(|| found)
}

/// The package's table, when `dlspan` imports and exports one this build can read.
fn find(py: Python<'_>) -> Provider {
    // `PyCapsule_Import` imports `dlspan` (honouring `sys.modules['dlspan'] = None`), takes its
    // `_C_API` attribute and checks that the capsule's name is `dlspan._C_API`. Pure Python cannot
    // make a capsule, nor rename one: a capsule of that name was made by a build of this crate.
    let table = match pyo3::types::PyCapsule::import_pointer(py, CAPSULE) {
        Ok(table) => table.cast::<CApi>(),
        Err(_) => return Provider::Own, // no package: the error is dropped (cleared)
    };
    // SAFETY: a `dlspan._C_API` capsule holds a table whose first two fields are `version` and
    // `size` in every version; the table lives for the whole process (see `CApi`).
    let [version, size] = unsafe { table.cast::<[u32; 2]>().read() };
    if version != ABI_VERSION || (size as usize) < size_of::<CApi>() {
        let message = format!(
            "the installed dlspan package exports C API version {version} (size {size}), this extension reads \
             version {ABI_VERSION} (size {}): it keeps its own borrow registry and Tensor class, which the \
             package's do not see",
            size_of::<CApi>()
        );
        let warning = py.get_type::<pyo3::exceptions::PyRuntimeWarning>();
        if let Ok(message) = std::ffi::CString::new(message)
            && let Err(err) = PyErr::warn(py, warning.as_any(), &message, 1)
        {
            // Warnings turned into errors: nothing to raise it into here.
            drop(err);
        }
        return Provider::Own;
    }
    // SAFETY: a table of this version and size (checked above), alive for the process and never
    // written after it was made.
    let table = unsafe { &*table.as_ptr().cast::<Table>() };
    // SAFETY: the exporter's exchange table is static (the package's `exchange_api`).
    let exchange_major = unsafe { (*table.0.exchange).header.version.major };
    if exchange_major != 1 || table.0.tensor_type.is_null() {
        return Provider::Own;
    }
    Provider::Package(table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pyo3::types::{PyCapsule, PyModule};

    unsafe extern "C" fn register(
        _: *const CFootprint,
        _: c_int,
        _: *mut pyo3::ffi::PyObject,
        _: *const u8,
        _: usize,
        _: *mut u64,
        _: *mut CHeld,
    ) -> c_int {
        1
    }
    unsafe extern "C" fn release(_: u64) {}
    unsafe extern "C" fn live() -> usize {
        0
    }
    unsafe extern "C" fn describe(_: *mut pyo3::ffi::PyObject, _: *mut DLTensor, _: *mut u64) -> c_int {
        -1
    }

    /// An exchange table to point at.
    struct Exchange(DLPackExchangeAPI);

    // SAFETY: never written; its one pointer (`prev_api`) is null.
    unsafe impl Sync for Exchange {}

    static EXCHANGE: Exchange = Exchange(DLPackExchangeAPI {
        header: crate::ffi::DLPackExchangeAPIHeader {
            version: crate::ffi::DLPackVersion::CURRENT,
            prev_api: core::ptr::null_mut(),
        },
        managed_tensor_allocator: None,
        managed_tensor_from_py_object_no_sync: None,
        managed_tensor_to_py_object_no_sync: None,
        dltensor_from_py_object_no_sync: None,
        current_work_stream: None,
    });

    /// A table of `version` and `size` (its type object is never read by `find`).
    const fn table(version: u32, size: u32, exchange: *const DLPackExchangeAPI) -> Table {
        let tensor_type = core::ptr::NonNull::dangling().as_ptr();
        Table(CApi { version, size, tensor_type, exchange, register, release, live, describe })
    }

    static GENUINE: Table = table(ABI_VERSION, size_of::<CApi>() as u32, &EXCHANGE.0);
    static NEWER: Table = table(ABI_VERSION + 1, 4096, &EXCHANGE.0);
    static SMALLER: Table = table(ABI_VERSION, 8, &EXCHANGE.0);

    /// `find` with `sys.modules['dlspan']` a module whose `_C_API` is a capsule named `name` holding
    /// `table` (or with no such module when `table` is `None`).
    fn find_with(py: Python<'_>, table: Option<&'static Table>, name: &'static CStr) -> PyResult<Provider> {
        let modules = py.import("sys")?.getattr("modules")?;
        match table {
            None => modules.set_item("dlspan", py.None())?,
            Some(table) => {
                let module = PyModule::new(py, "dlspan")?;
                // SAFETY: a static table, alive for the process; no destructor.
                let capsule = unsafe { PyCapsule::new_with_pointer(py, core::ptr::NonNull::from(table).cast(), name) }?;
                module.setattr("_C_API", capsule)?;
                modules.set_item("dlspan", module)?;
            }
        }
        let found = find(py);
        modules.del_item("dlspan")?;
        Ok(found)
    }

    #[test]
    fn only_a_genuine_table_of_this_version_is_used() -> PyResult<()> {
        Python::initialize();
        Python::attach(|py| {
            let own = |p: Provider| matches!(p, Provider::Own);
            assert!(own(find_with(py, None, CAPSULE)?), "no package");
            assert!(own(find_with(py, Some(&GENUINE), c"dlspan._C_API_other")?), "another capsule name");
            let warnings = py.import("warnings")?;
            warnings.call_method1("simplefilter", ("ignore",))?;
            assert!(own(find_with(py, Some(&NEWER), CAPSULE)?), "another version");
            assert!(own(find_with(py, Some(&SMALLER), CAPSULE)?), "a smaller table");
            match find_with(py, Some(&GENUINE), CAPSULE)? {
                Provider::Package(found) => assert!(core::ptr::eq(found, &GENUINE)),
                Provider::Own => panic!("the genuine table was not used"),
            }
            Ok(())
        })
    }
}
