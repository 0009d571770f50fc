//! How to read a Python object's tensor, decided once per Python type and cached.
//!
//! - `dlspan.Tensor`: its fields, directly; the `dlspan` package's `dlspan.Tensor`, in an
//!   extension built on the crate (another class): through the package's C API (rule Y18).
//! - exact `numpy.ndarray`: NumPy's C struct (no capsule, no call). Known by its static type (a
//!   C type named `numpy.ndarray`), never by `sys.modules`: pure Python can plant a module, not a
//!   static type.
//! - a type with a DLPack C exchange table (`__dlpack_c_exchange_api__`, such as `torch.Tensor`):
//!   `dltensor_from_py_object_no_sync` into a stack `DLTensor` (no capsule, no allocation). A
//!   subclass takes this path only if it overrides neither `__dlpack__` nor, for PyTorch,
//!   `__torch_function__` (`nn.Parameter`'s disabled one excepted): the table reads the raw
//!   storage and would skip the override. PyTorch's tensors are known by their static base type
//!   `torch._C.TensorBase`.
//! - anything else: `__dlpack__`. JAX arrays are immutable but exported as legacy capsules, which
//!   cannot say read-only: dlspan treats them as read-only.
//!
//! The cache holds a strong reference to each type (and its table's capsule), so a cached type's
//! address is never reused by another type while it is cached. The decision is made on the first
//! object of a type: a type whose `__dlpack__` is replaced afterwards keeps its cached path.

use super::capi::{Provider, Table, provider};
use super::capsule::EXCHANGE_API_CAPSULE;
use super::gil::Shared;
use super::tensor::Tensor;
use crate::ffi::DLPackExchangeAPI;
use core::ptr::NonNull;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyType};

/// A producer's exchange table, alive as long as the cache pins its capsule.
#[derive(Clone, Copy)]
pub(crate) struct Api(NonNull<DLPackExchangeAPI>);

// SAFETY: exchange tables are immutable and live as long as their capsule (pinned by the cache).
unsafe impl Send for Api {}
// SAFETY: as above.
unsafe impl Sync for Api {}

impl Api {
    pub(crate) fn table(&self) -> &DLPackExchangeAPI {
        // SAFETY: a live, immutable table (see the Send impl).
        unsafe { self.0.as_ref() }
    }
}

/// A static (C-defined) type of a framework, known by its name: pure Python code cannot define a
/// static type, nor change one's name, so such a type is the framework's own whatever
/// `sys.modules` holds. Alive while objects of the types that derive from it are.
#[derive(Clone, Copy)]
pub(crate) struct StaticType(NonNull<pyo3::ffi::PyTypeObject>);

// SAFETY: a pointer to an immutable static type object, only dereferenced with the GIL held.
unsafe impl Send for StaticType {}
// SAFETY: as above.
unsafe impl Sync for StaticType {}

impl StaticType {
    /// `ty` itself when it is a static type whose fully qualified name is `name`.
    pub(crate) fn named(ty: &Bound<'_, PyType>, name: &str) -> PyResult<Option<Self>> {
        // SAFETY: a live type object, GIL held; reading its flags has no side effect.
        let flags = unsafe { pyo3::ffi::PyType_GetFlags(ty.as_type_ptr()) };
        if flags & pyo3::ffi::Py_TPFLAGS_HEAPTYPE != 0 {
            return Ok(None);
        }
        // A static type's `__module__` and `__qualname__` come from its C name (`tp_name`).
        let found = ty.fully_qualified_name()?;
        Ok(NonNull::new(ty.as_type_ptr()).filter(|_| found.to_str().is_ok_and(|found| found == name)).map(Self))
    }

    /// The static type among `ty`'s bases (its MRO) whose fully qualified name is `name`.
    pub(crate) fn base_named(ty: &Bound<'_, PyType>, name: &str) -> PyResult<Option<Self>> {
        for class in ty.mro().iter() {
            if let Some(found) = Self::named(&class.cast_into::<PyType>()?, name)? {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }

    /// The type, borrowed for `py`.
    ///
    /// The caller holds an object whose type derives from this one (which keeps it alive).
    pub(crate) fn bind<'py>(self, py: Python<'py>) -> Bound<'py, PyType> {
        // SAFETY: a live type object (kept alive by the objects deriving from it, which the caller
        // holds, or by the dialect cache), GIL held; a new strong reference is taken.
        let any = unsafe { Bound::from_borrowed_ptr(py, self.0.as_ptr().cast()) };
        // SAFETY: the object is a type object.
        unsafe { any.cast_into_unchecked() }
    }
}

/// How objects of one type are read.
#[derive(Clone, Copy)]
pub(crate) enum Dialect {
    /// `dlspan.Tensor`.
    Tensor,
    /// The `dlspan` package's `dlspan.Tensor`, in an extension built on the crate: another class,
    /// read through the package's C API (rule Y18), flags included.
    Package(&'static Table),
    /// Exact `numpy.ndarray` (NumPy's static type, whose objects are NumPy's struct).
    Numpy,
    /// A C exchange table; `torch` is `torch._C.TensorBase` when the type is a PyTorch tensor
    /// (whose lazy conjugate and negation bits, gradients and storage need care).
    Exchange { api: Api, torch: Option<StaticType> },
    /// `__dlpack__`; `immutable` for producers whose memory must never be written although their
    /// capsules do not say so (JAX arrays, exported as legacy capsules).
    Protocol { immutable: bool },
}

/// The framework a tensor argument came from: what [`Output`](super::Output) answers in.
///
/// ```
/// use dlspan::python::Framework;
/// assert_ne!(Framework::NumPy, Framework::PyTorch);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Framework {
    /// An exact `numpy.ndarray`.
    NumPy,
    /// A `torch.Tensor` read through PyTorch's exchange table (`nn.Parameter` included; a
    /// subclass that overrides `__dlpack__` or `__torch_function__` is [`Other`](Self::Other)).
    PyTorch,
    /// A JAX array.
    Jax,
    /// A `dlspan.Tensor`.
    Dlspan,
    /// Any other DLPack producer (a capsule included).
    Other,
}

impl Framework {
    /// The framework of `object` (by its type's dialect, cached per type as the view arguments'
    /// is): what `like=` arguments answer in.
    ///
    /// # Errors
    ///
    /// What looking at the type's attributes raises.
    ///
    /// ```
    /// use dlspan::{ManagedTensor, python::{Framework, Tensor}};
    /// use dlspan::pyo3::prelude::*;
    /// Python::initialize();
    /// Python::attach(|py| {
    ///     let t = Tensor::from_managed(py, ManagedTensor::from_owner(vec![0u8; 2], [2])?)?;
    ///     assert_eq!(Framework::of(t.as_any())?, Framework::Dlspan);
    ///     assert_eq!(Framework::of(dlspan::pyo3::types::PyInt::new(py, 1).as_any())?, Framework::Other);
    ///     Ok::<_, PyErr>(())
    /// })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    pub fn of(object: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(dialect(object)?.framework())
    }
}

impl Dialect {
    /// The framework of the objects read in this dialect.
    pub(crate) fn framework(self) -> Framework {
        match self {
            Self::Tensor | Self::Package(_) => Framework::Dlspan,
            Self::Numpy => Framework::NumPy,
            Self::Exchange { torch: Some(_), .. } => Framework::PyTorch,
            Self::Protocol { immutable: true } => Framework::Jax,
            Self::Exchange { torch: None, .. } | Self::Protocol { immutable: false } => Framework::Other,
        }
    }
}

struct Entry {
    ty: usize,
    dialect: Dialect,
    _pins: (Py<PyType>, Option<Py<PyAny>>),
}

/// Types seen most recently (a handful of tensor types are in use at a time).
const CAPACITY: usize = 8;

struct Cache {
    entries: Vec<Entry>,
    next: usize,
}

static CACHE: Shared<Cache> = Shared::new(Cache { entries: Vec::new(), next: 0 });

/// The dialect of `object`'s type.
#[inline]
pub(crate) fn dialect(object: &Bound<'_, PyAny>) -> PyResult<Dialect> {
    let py = object.py();
    let ty = object.get_type_ptr() as usize;
    if let Some(dialect) = CACHE.with(py, |cache| cache.entries.iter().find(|e| e.ty == ty).map(|e| e.dialect)) {
        return Ok(dialect);
    }
    let ty = object.get_type();
    let (dialect, capsule) = classify(&ty)?;
    let entry = Entry { ty: ty.as_ptr() as usize, dialect, _pins: (ty.unbind(), capsule) };
    let evicted = CACHE.with(py, |cache| {
        if cache.entries.len() < CAPACITY {
            cache.entries.push(entry);
            None
        } else {
            let at = cache.next % CAPACITY;
            cache.next = cache.next.wrapping_add(1);
            Some(core::mem::replace(&mut cache.entries[at], entry))
        }
    });
    // Dropped here, outside the cache's lock (releasing a type may run Python code).
    drop(evicted);
    Ok(dialect)
}

/// `sys.modules[name].attribute`, if that module is loaded.
fn loaded<'py>(py: Python<'py>, module: &str, attribute: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
    let modules = py.import(intern!(py, "sys"))?.getattr(intern!(py, "modules"))?;
    match modules.cast::<PyDict>()?.get_item(module)? {
        Some(module) => module.getattr_opt(attribute),
        None => Ok(None),
    }
}

/// A class attribute without descriptor binding's surprises: classmethods compared by function.
fn unwrapped<'py>(value: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    Ok(value.getattr_opt(intern!(value.py(), "__func__"))?.unwrap_or(value))
}

/// Whether a type's arrays are immutable whatever their capsules say: JAX's (`jaxlib`).
fn immutable(ty: &Bound<'_, PyType>) -> PyResult<bool> {
    let module = ty.getattr(intern!(ty.py(), "__module__"))?;
    Ok(module.extract::<&str>().is_ok_and(|m| m.starts_with("jax")))
}

fn classify(ty: &Bound<'_, PyType>) -> PyResult<(Dialect, Option<Py<PyAny>>)> {
    let py = ty.py();
    let protocol = Dialect::Protocol { immutable: immutable(ty)? };
    if ty.is(py.get_type::<Tensor>()) {
        return Ok((Dialect::Tensor, None));
    }
    if let Provider::Package(table) = provider(py)
        && ty.as_type_ptr() == table.0.tensor_type
    {
        return Ok((Dialect::Package(table), None));
    }
    // By the static type, not `sys.modules["numpy"].ndarray`: objects of this type are read as
    // NumPy's C struct, and any module can be planted in `sys.modules`.
    if StaticType::named(ty, "numpy.ndarray")?.is_some() {
        return Ok((Dialect::Numpy, None));
    }
    let name = intern!(py, "__dlpack_c_exchange_api__");
    let Some(capsule) = ty.getattr_opt(name)? else { return Ok((protocol, None)) };
    let Ok(capsule) = capsule.cast_into::<PyCapsule>() else { return Ok((protocol, None)) };
    let Ok(table) = capsule.pointer_checked(Some(EXCHANGE_API_CAPSULE)) else {
        return Ok((protocol, None));
    };
    let api = Api(table.cast());
    let usable = api.table().header.version.major == 1 && api.table().dltensor_from_py_object_no_sync.is_some();
    if !usable {
        return Ok((protocol, None));
    }
    // The class that defines the table; a subclass must not override what the table skips.
    let mro = ty.mro();
    let mut owner = None;
    for class in mro.iter() {
        let class = class.cast_into::<PyType>()?;
        if class.getattr(intern!(py, "__dict__"))?.contains(name)? {
            owner = Some(class);
            break;
        }
    }
    let owner = owner.unwrap_or_else(|| ty.clone());
    // By PyTorch's static base type: a planted or missing `torch` module must not make a PyTorch
    // tensor take the path that does not hold its storage.
    let torch = StaticType::base_named(ty, "torch._C.TensorBase")?;
    // PyTorch's table is `torch.Tensor`'s, a class whose base is `TensorBase`. A tensor class below
    // it with a table of its own (PyTorch's `ReadOnlyTensorWrapper`: a read-only export whose every
    // other method raises) is a producer of its own, read through its table and `__dlpack__` as
    // any other: its flags say read-only, and PyTorch's methods are not its to answer.
    let torch = match torch {
        Some(base) if !owner.getattr(intern!(py, "__base__"))?.is(base.bind(py)) => None,
        torch => torch,
    };
    if !ty.is(&owner) {
        let dlpack = intern!(py, "__dlpack__");
        if !unwrapped(ty.getattr(dlpack)?)?.is(unwrapped(owner.getattr(dlpack)?)?) {
            return Ok((protocol, None));
        }
        let torch_function = intern!(py, "__torch_function__");
        if let (true, Some(mine)) = (torch.is_some(), ty.getattr_opt(torch_function)?) {
            let mine = unwrapped(mine)?;
            let inherited = match owner.getattr_opt(torch_function)? {
                Some(f) => mine.is(unwrapped(f)?),
                None => false,
            };
            let disabled = match loaded(py, "torch", "_C")? {
                Some(c) => c.getattr_opt(intern!(py, "_disabled_torch_function_impl"))?.is_some_and(|d| mine.is(d)),
                None => false,
            };
            if !inherited && !disabled {
                return Ok((protocol, None));
            }
        }
    }
    Ok((Dialect::Exchange { api, torch }, Some(capsule.into_any().unbind())))
}
