//! Errors as Python exceptions: every [`DlpackError`], and the Python exchange's own refusals
//! ([`ExchangeError`]), raised as the class the array API names, with dlspan's message and the
//! structure as attributes — `kind` (the variant's name) and, where the variant has them,
//! `expected` and `found` — so Python code matches errors without parsing messages.
//!
//! - `BufferError`: what cannot be exported or imported — malformed or unreachable memory, a
//!   tensor asked for on another device, a consumed capsule, a read-only tensor asked for as a legacy capsule, a copy
//!   forbidden by `copy=False` on export, PyTorch's lazy conjugate and negation bits.
//! - `TypeError`: the tensor is not of the view's type — data type, rank, sub-byte packing, memory
//!   space (a host view of device memory, a device view of host memory) — or the object is not a
//!   DLPack capsule.
//! - `ValueError`: the tensor is of the right type but its values do not fit — extents, strides,
//!   bytes a `bool` cannot hold, a read-only or borrowed buffer given where a mutable view is
//!   needed, a tensor that requires grad, a stream the device cannot honour, device arguments of
//!   one call on different devices, a copy forbidden by
//!   `copy=False` on import (as the array API's `from_dlpack` says).
//!
//! The exceptions speak Python's words, not Rust's: "expected a 1-d array, got 2-d", devices as
//! `cuda:0`, layouts as C- or F-contiguous, and what to do about it (`np.ascontiguousarray`,
//! `.contiguous()`, a copy). The `Display` texts of [`DlpackError`] stay in the Rust user's words
//! (the view's rank, `layout_right`, `LayoutStride`, `dtype::Bool`), which name the types a Rust
//! caller chose; a Python caller chose none of them and sees only arrays and arguments. An error
//! raised inside a function's body (after its arguments were extracted) names its argument as
//! PyO3 names an argument it could not extract, with the note `while processing 'x'`
//! ([`InArgument`]).

use crate::error::DlpackError;
use crate::ffi::{DLDataType, DLDevice};
use core::fmt;
use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::prelude::*;

mod messages;

pub(crate) use messages::device_name;
use messages::python_message;

/// Why the Python exchange refused a tensor, beyond the rules of [`DlpackError`].
///
/// ```
/// use dlspan::python::ExchangeError;
/// let err = ExchangeError::BorrowConflict { requested_mutable: true, held_mutable: false };
/// assert_eq!(err.to_string(), "a mutable view overlaps the memory of a shared view alive at the same time");
/// ```
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExchangeError {
    /// A view's memory overlaps the memory of another view alive at the same time, and at least
    /// one of them is mutable (view arguments are borrow-checked by address range).
    BorrowConflict {
        /// Whether the refused view is mutable.
        requested_mutable: bool,
        /// Whether the view already alive is mutable.
        held_mutable: bool,
    },
    /// A mutable view of a PyTorch tensor that requires grad, while gradients are recorded
    /// (writes through dlspan are invisible to autograd).
    RequiresGrad,
    /// A mutable view of a PyTorch inference tensor (made under `torch.inference_mode()`) outside
    /// inference mode, where PyTorch allows no in-place update of one (it has no version counter
    /// to tell autograd of the write).
    InferenceTensor,
    /// A PyTorch tensor with the lazy conjugate bit set: its memory holds the values before the
    /// conjugation.
    ConjugateBit,
    /// A PyTorch tensor with the lazy negation bit set: its memory holds the values before the
    /// negation.
    NegativeBit,
    /// A DLPack capsule that was already consumed (renamed `used_dltensor…`).
    CapsuleConsumed,
    /// An object given as a DLPack capsule that is not a `dltensor` or `dltensor_versioned`
    /// capsule.
    NotDlpackCapsule,
    /// A producer's `__dlpack_device__` returned something other than a `(device_type, device_id)`
    /// pair of 32-bit integers.
    NotADevice,
    /// A `stream` the tensor's device cannot honour (host memory takes none or -1; 0 is never
    /// valid). Raised as `InvalidStreamError`, a `ValueError` that is also a `RuntimeError` (what
    /// NumPy and JAX raise for it).
    InvalidStream {
        /// The stream given.
        stream: i64,
    },
    /// The storage PyTorch returned for a tensor does not hold the tensor's memory: the storage was
    /// shrunk under the tensor (`resize_` of its `untyped_storage()`), or a `__torch_function__`
    /// mode or override answered `untyped_storage()` with another; the memory cannot be read safely
    /// (rule Y14).
    StorageMismatch,
    /// Memory the host can address but the device may still be writing (CUDA pinned or managed
    /// memory, ROCm host memory), read on the host where dlspan cannot wait for the device: the
    /// `cuda` feature is off or finds no driver (rule Y16).
    HostAccessUnordered {
        /// The tensor's device.
        device: DLDevice,
    },
    /// A PyTorch tensor on the `meta` device: a shape and a dtype without memory (what PyTorch's
    /// DLPack export refuses with a C++ backtrace).
    MetaTensor,
    /// The tensor was asked for on a device it cannot be delivered to (dlspan moves no memory
    /// between devices, and reads only host-accessible memory on the host).
    DeviceUnavailable {
        /// The device asked for.
        requested: DLDevice,
        /// The tensor's device.
        found: DLDevice,
    },
    /// A producer's exchange table that gives no current stream for a device tensor's device: no
    /// `current_work_stream`, or one that failed without raising (rule Y21).
    NoCurrentStream {
        /// The tensor's device.
        device: DLDevice,
    },
    /// A producer exported a negative stride as an unsigned number: the stride times the element
    /// size wraps around to the small negative byte stride the axis has (CuPy 14's DLPack export of
    /// reversed axes, rule Y17). Refused before any memory is read.
    UnsignedStride {
        /// The axis.
        axis: usize,
        /// The stride as exported, in elements.
        stride: i64,
        /// The byte stride it wraps around to.
        bytes: i64,
    },
    /// Device tensor arguments of one call on different devices (rule Y21): the call's work goes
    /// on one device's stream.
    DevicesDiffer {
        /// The device of the first device argument.
        expected: DLDevice,
        /// The device of the argument refused.
        found: DLDevice,
        /// The name of the first device argument.
        first: &'static str,
    },
}

impl fmt::Display for ExchangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::BorrowConflict { requested_mutable, held_mutable } => write!(
                f,
                "a {} view overlaps the memory of a {} view alive at the same time",
                if requested_mutable { "mutable" } else { "shared" },
                if held_mutable { "mutable" } else { "shared" }
            ),
            Self::RequiresGrad => f.write_str(
                "tensor requires grad: no mutable view while gradients are recorded (use torch.no_grad() or detach())",
            ),
            Self::InferenceTensor => f.write_str(
                "an inference tensor cannot be written outside torch.inference_mode() (PyTorch allows no \
                 in-place update of one there): clone() it, or call inside inference mode",
            ),
            Self::ConjugateBit => f.write_str("tensor has the lazy conjugate bit set; call resolve_conj() first"),
            Self::NegativeBit => f.write_str("tensor has the lazy negation bit set; call resolve_neg() first"),
            Self::CapsuleConsumed => f.write_str("the DLPack capsule was already consumed"),
            Self::NotDlpackCapsule => f.write_str("not a DLPack capsule (named dltensor or dltensor_versioned)"),
            Self::NotADevice => {
                f.write_str("__dlpack_device__ returned no (device_type, device_id) pair of 32-bit integers")
            }
            Self::InvalidStream { stream } => write!(f, "stream {stream} is not valid for this tensor's device"),
            Self::DeviceUnavailable { requested, found } => write!(
                f,
                "tensor on device {:?}:{} cannot be delivered to device {:?}:{}",
                found.device_type, found.device_id, requested.device_type, requested.device_id
            ),
            Self::MetaTensor => f.write_str("a PyTorch tensor on the meta device has no data"),
            Self::NoCurrentStream { device } => write!(
                f,
                "the producer's exchange table gives no current stream for device {:?}:{}",
                device.device_type, device.device_id
            ),
            Self::UnsignedStride { axis, stride, bytes } => write!(
                f,
                "stride {stride} of axis {axis} is the negative byte stride {bytes} divided as an unsigned number"
            ),
            Self::DevicesDiffer { expected, found, first } => write!(
                f,
                "tensor on device {:?}:{} where argument '{first}' is on device {:?}:{}",
                found.device_type, found.device_id, expected.device_type, expected.device_id
            ),
            Self::StorageMismatch => f.write_str(
                "the tensor reaches memory its storage does not hold (the storage was shrunk under it, with \
                 resize_, or a __torch_function__ mode or override answered untyped_storage() with another): \
                 its memory cannot be read safely",
            ),
            Self::HostAccessUnordered { device } => write!(
                f,
                "memory on device {:?}:{} is read on the host only after the device's work on it, which dlspan \
                 can wait for only when built with feature `cuda` on a machine with a CUDA driver; \
                 copy it to the CPU in its framework first",
                device.device_type, device.device_id
            ),
        }
    }
}

impl std::error::Error for ExchangeError {}

/// The exception class of an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Buffer,
    Type,
    Value,
    /// `ValueError` that is also a `RuntimeError` (what NumPy and JAX raise for a stream their
    /// device cannot honour), as NumPy's `AxisError` is both `ValueError` and `IndexError`.
    ValueRuntime,
}

/// `dlspan.InvalidStreamError`, the class of [`ExchangeError::InvalidStream`]: a `ValueError`
/// that is also a `RuntimeError` (what NumPy and JAX raise for a stream the device cannot honour),
/// as NumPy's `AxisError` is both `ValueError` and `IndexError`. One class per process: the
/// installed `dlspan` package's when there is one (so that an extension's exceptions pickle and are
/// caught by name as the package's), else one this build makes, named `dlspan.InvalidStreamError`.
///
/// ```
/// use dlspan::pyo3::prelude::*;
/// Python::initialize();
/// Python::attach(|py| {
///     let class = dlspan::python::invalid_stream_error(py)?;
///     assert!(class.is_subclass_of::<dlspan::pyo3::exceptions::PyValueError>()?);
///     assert!(class.is_subclass_of::<dlspan::pyo3::exceptions::PyRuntimeError>()?);
///     assert_eq!(class.name()?.to_string(), "InvalidStreamError");
///     Ok::<_, PyErr>(())
/// })?;
/// # Ok::<(), PyErr>(())
/// ```
///
/// # Errors
///
/// What Python raises if the class cannot be made.
pub fn invalid_stream_error(py: Python<'_>) -> PyResult<Bound<'_, pyo3::types::PyType>> {
    static CLASS: pyo3::sync::PyOnceLock<Py<pyo3::types::PyType>> = pyo3::sync::PyOnceLock::new();
    let class = CLASS.get_or_try_init(py, || -> PyResult<_> {
        let builtins = py.import(pyo3::intern!(py, "builtins"))?;
        let (value_error, runtime_error) = (builtins.getattr("ValueError")?, builtins.getattr("RuntimeError")?);
        // The package's class, if it has made one already (not while it is being imported).
        let package = py.import(pyo3::intern!(py, "dlspan")).ok();
        if let Some(Ok(class)) = package.and_then(|package| {
            package
                .getattr_opt(pyo3::intern!(py, "InvalidStreamError"))
                .ok()
                .flatten()
                .map(|c| c.cast_into::<pyo3::types::PyType>())
        }) && class.is_subclass(&value_error)?
            && class.is_subclass(&runtime_error)?
        {
            return Ok(class.unbind());
        }
        let namespace = pyo3::types::PyDict::new(py);
        namespace.set_item("__module__", "dlspan")?;
        namespace.set_item("__qualname__", "InvalidStreamError")?;
        namespace.set_item(
            "__doc__",
            "A stream the tensor's device cannot honour: a ValueError, and a RuntimeError as NumPy and JAX raise.",
        )?;
        let class = builtins.getattr("type")?.call1(("InvalidStreamError", (value_error, runtime_error), namespace))?;
        Ok(class.cast_into::<pyo3::types::PyType>()?.unbind())
    })?;
    Ok(class.bind(py).clone())
}

/// A [`Class::ValueRuntime`] exception: an [`invalid_stream_error`] (a `ValueError` should Python
/// refuse to make the class).
fn value_runtime_error(py: Python<'_>, message: String) -> PyErr {
    match invalid_stream_error(py) {
        Ok(class) => PyErr::from_type(class, (message,)),
        Err(_) => PyValueError::new_err(message),
    }
}

fn class(err: &DlpackError) -> Class {
    use DlpackError as E;
    // Exhaustive: a new variant must be placed here.
    match err {
        E::DeviceMismatch { .. }
        | E::RankMismatch { .. }
        | E::DtypeMismatch { .. }
        | E::SubbytePacking { .. }
        | E::UncheckedWrites
        | E::UnsupportedDtype { .. }
        | E::DtypeNotAccepted { .. }
        | E::UnsupportedRank { .. }
        | E::NegativeNdim { .. } => Class::Type,
        E::ExtentMismatch { .. }
        | E::StridesIncompatible { .. }
        | E::NonPositiveStride { .. }
        | E::OverlappingStrides
        | E::InvalidBool { .. }
        | E::LengthMismatch { .. }
        | E::PackedByteLength { .. }
        | E::TooFewElements { .. }
        | E::ShapeMismatch { .. }
        | E::KernelShapeMismatch { .. }
        | E::KernelBroadcastRefused { .. }
        | E::LanesNotGroupable { .. }
        | E::SubviewOutOfBounds { .. }
        | E::ReadOnly
        | E::Aliased
        | E::CopyRequired => Class::Value,
        E::NullData
        | E::ByteOffsetOverflow { .. }
        | E::ByteOffsetNotElementMultiple { .. }
        | E::Misaligned { .. }
        | E::Underaligned { .. }
        | E::NegativeDeviceId { .. }
        | E::NullShape
        | E::NegativeExtent { .. }
        | E::NullStrides { .. }
        | E::SpanOverflow
        | E::NegativeReach { .. }
        | E::PaddedSubbyteExport
        | E::UnsupportedVersion { .. }
        | E::NullManagedTensor
        | E::AllocationFailed { .. } => Class::Buffer,
    }
}

fn exchange_class(err: &ExchangeError) -> Class {
    use ExchangeError as E;
    match err {
        E::NotDlpackCapsule | E::NotADevice => Class::Type,
        E::BorrowConflict { .. } | E::RequiresGrad | E::InferenceTensor | E::DevicesDiffer { .. } => Class::Value,
        E::InvalidStream { .. } => Class::ValueRuntime,
        E::ConjugateBit
        | E::NegativeBit
        | E::CapsuleConsumed
        | E::DeviceUnavailable { .. }
        | E::StorageMismatch
        | E::MetaTensor
        | E::NoCurrentStream { .. }
        | E::UnsignedStride { .. }
        | E::HostAccessUnordered { .. } => Class::Buffer,
    }
}

/// Declares the name of every variant, exhaustively.
macro_rules! variant_names {
    ($name:ident, $ty:ident: $($variant:ident),* $(,)?) => {
        fn $name(err: &$ty) -> &'static str {
            match err {
                $($ty::$variant { .. } => stringify!($variant),)*
            }
        }
    };
}

variant_names!(kind, DlpackError:
    DeviceMismatch, NegativeDeviceId, Underaligned, RankMismatch, DtypeMismatch, SubbytePacking, NullData, ByteOffsetOverflow,
    ByteOffsetNotElementMultiple, Misaligned, NullShape, NegativeExtent, ExtentMismatch, NullStrides,
    StridesIncompatible, NonPositiveStride, SpanOverflow, NegativeReach, OverlappingStrides, InvalidBool, LengthMismatch,
    TooFewElements, ShapeMismatch, KernelShapeMismatch, KernelBroadcastRefused, LanesNotGroupable, UncheckedWrites, SubviewOutOfBounds, PaddedSubbyteExport, UnsupportedVersion,
    NullManagedTensor, ReadOnly, CopyRequired, AllocationFailed, UnsupportedDtype, DtypeNotAccepted, UnsupportedRank, NegativeNdim,
    PackedByteLength, Aliased,
);

variant_names!(exchange_kind, ExchangeError:
    BorrowConflict, RequiresGrad, InferenceTensor, ConjugateBit, NegativeBit, CapsuleConsumed, NotDlpackCapsule, NotADevice, InvalidStream,
    DeviceUnavailable, HostAccessUnordered, StorageMismatch, MetaTensor, DevicesDiffer,
    NoCurrentStream, UnsignedStride,
);

/// `expected` and `found`, for the variants that have them.
enum Details {
    None,
    Devices(DLDevice, DLDevice),
    Ints(i64, i64),
    Dtypes(DLDataType, DLDataType),
    /// `found` alone.
    Found(i64),
}

fn details(err: &DlpackError) -> Details {
    use DlpackError as E;
    let int = |v: usize| i64::try_from(v).unwrap_or(i64::MAX);
    match *err {
        E::DeviceMismatch { expected, found } => {
            Details::Devices(DLDevice { device_type: expected, device_id: 0 }, found)
        }
        E::RankMismatch { expected, found } => Details::Ints(int(expected), i64::from(found)),
        E::DtypeMismatch { expected, found } => Details::Dtypes(expected, found),
        E::ExtentMismatch { expected, found, .. }
        | E::LengthMismatch { expected, found }
        | E::PackedByteLength { required: expected, found } => Details::Ints(int(expected), int(found)),
        E::StridesIncompatible { expected, found, .. } => Details::Ints(expected, found),
        E::ShapeMismatch { expected, found, .. } | E::KernelShapeMismatch { expected, found, .. } => {
            Details::Ints(int(expected), int(found))
        }
        E::KernelBroadcastRefused { expected, .. } => Details::Ints(int(expected), 1),
        E::InvalidBool { found } => Details::Found(i64::from(found)),
        _ => Details::None,
    }
}

/// Raises `message` as `class`, with `kind` and the details as attributes.
fn raise(class: Class, kind: &'static str, message: String, details: Details) -> PyErr {
    let pyerr = match class {
        Class::Buffer => PyBufferError::new_err(message),
        Class::Type => PyTypeError::new_err(message),
        Class::Value => PyValueError::new_err(message),
        Class::ValueRuntime => Python::attach(|py| value_runtime_error(py, message)),
    };
    Python::attach(|py| {
        let value = pyerr.value(py);
        let set = || -> PyResult<()> {
            value.setattr("kind", kind)?;
            let device = |d: DLDevice| (d.device_type.0, d.device_id);
            match details {
                Details::None => return Ok(()),
                Details::Devices(e, f) => {
                    value.setattr("expected", device(e))?;
                    value.setattr("found", device(f))?;
                }
                Details::Ints(e, f) => {
                    value.setattr("expected", e)?;
                    value.setattr("found", f)?;
                }
                Details::Found(f) => value.setattr("found", f)?,
                Details::Dtypes(e, f) => {
                    value.setattr("expected", e.to_string())?;
                    value.setattr("found", f.to_string())?;
                }
            }
            Ok(())
        };
        // The attributes are a convenience: an exception that refuses them still has its message.
        let _ = set();
    });
    pyerr
}

/// The exception for an error met while exporting (`__dlpack__`, the exchange table's producer
/// functions): `BufferError`, "cannot be exported", for everything but invalid arguments.
pub(crate) fn export_error(err: DlpackError) -> PyErr {
    let message = match err {
        DlpackError::ReadOnly => "a read-only tensor has no legacy DLPack capsule (which cannot mark memory \
                                  read-only): ask for max_version=(1, 0) or later, or copy=True"
            .to_owned(),
        DlpackError::PaddedSubbyteExport => "padded sub-byte data has no legacy DLPack capsule (which means \
                                             packed data): ask for max_version=(1, 0) or later"
            .to_owned(),
        DlpackError::CopyRequired => {
            "copy=False, but the tensor can only be delivered to that device by a copy".to_owned()
        }
        _ => python_message(&err),
    };
    raise(Class::Buffer, kind(&err), message, details(&err))
}

/// The message of an exchange refusal for a Python caller (the `Display` text, but for the
/// devices, named as Python names them, and the Rust feature, named as a build).
fn exchange_message(err: &ExchangeError) -> String {
    match *err {
        ExchangeError::DeviceUnavailable { requested, found } => format!(
            "a tensor on {} cannot be delivered to {} (dlspan moves no memory between devices)",
            device_name(found),
            device_name(requested)
        ),
        ExchangeError::HostAccessUnordered { device } => format!(
            "memory on {} may still be written by its device, and this build of dlspan cannot wait for the \
             device (it was built without CUDA support, or finds no CUDA driver); copy it to the CPU in its \
             framework first",
            device_name(device)
        ),
        ExchangeError::NoCurrentStream { device } => format!(
            "the producer's DLPack exchange table gives no current stream for a tensor on {} \
             (its current_work_stream is missing or failed without saying why)",
            device_name(device)
        ),
        ExchangeError::UnsignedStride { axis, stride, bytes } => format!(
            "the producer exported axis {axis}'s negative stride as the unsigned number {stride} (its byte \
             stride {bytes} divided as unsigned: CuPy's DLPack export of reversed axes does this); pass a \
             copy with positive strides (cupy.ascontiguousarray)"
        ),
        ExchangeError::DevicesDiffer { expected, found, first } => format!(
            "expected a tensor on {} (the device of argument '{first}'), got one on {}: a call's device \
             arguments share one device",
            device_name(expected),
            device_name(found)
        ),
        ExchangeError::MetaTensor => "a PyTorch tensor on the meta device has a shape and a dtype but no data; \
                                      pass a tensor with memory (torch.empty_like(x, device=\"cpu\"))"
            .to_owned(),
        _ => err.to_string(),
    }
}

impl From<DlpackError> for PyErr {
    /// The Python exception for `err` (the class the array API names, see the module
    /// documentation), with `kind` (and `expected` / `found`) attributes: `?` raises it in a
    /// `#[pyfunction]`.
    ///
    /// ```
    /// use dlspan::{DlpackError, ffi::{DLDataType, DLDataTypeCode}};
    /// use dlspan::pyo3::{exceptions::{PyTypeError, PyValueError}, prelude::*};
    /// Python::initialize();
    /// fn refuse() -> PyResult<()> {
    ///     Err(DlpackError::ReadOnly)?
    /// }
    /// Python::attach(|py| {
    ///     assert!(refuse().unwrap_err().is_instance_of::<PyValueError>(py));
    ///     let f32 = DLDataType::new(DLDataTypeCode::kDLFloat, 32, 1);
    ///     let i64 = DLDataType::new(DLDataTypeCode::kDLInt, 64, 1);
    ///     let err = PyErr::from(DlpackError::DtypeMismatch { expected: f32, found: i64 });
    ///     assert!(err.is_instance_of::<PyTypeError>(py));
    ///     let value = err.value(py);
    ///     assert_eq!(value.getattr("kind")?.extract::<String>()?, "DtypeMismatch");
    ///     assert_eq!(value.getattr("found")?.extract::<String>()?, "int64");
    ///     Ok::<_, PyErr>(())
    /// })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    fn from(err: DlpackError) -> Self {
        raise(class(&err), kind(&err), python_message(&err), details(&err))
    }
}

impl From<ExchangeError> for PyErr {
    /// The exception for an exchange refusal, with `kind` (and `expected` / `found`) attributes.
    ///
    /// ```
    /// use dlspan::python::ExchangeError;
    /// use dlspan::pyo3::{exceptions::PyBufferError, prelude::*};
    /// Python::initialize();
    /// Python::attach(|py| {
    ///     let err = PyErr::from(ExchangeError::CapsuleConsumed);
    ///     assert!(err.is_instance_of::<PyBufferError>(py));
    ///     assert_eq!(err.value(py).getattr("kind")?.extract::<String>()?, "CapsuleConsumed");
    ///     Ok::<_, PyErr>(())
    /// })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    fn from(err: ExchangeError) -> Self {
        let details = match err {
            ExchangeError::DeviceUnavailable { requested, found } => Details::Devices(requested, found),
            ExchangeError::DevicesDiffer { expected, found, .. } => Details::Devices(expected, found),
            _ => Details::None,
        };
        raise(exchange_class(&err), exchange_kind(&err), exchange_message(&err), details)
    }
}

/// Names the argument an error is about, as PyO3 names an argument it could not extract: the
/// exception gets the note `while processing 'x'`. For the errors a function raises in its body,
/// after its arguments were extracted — a typed view of a dynamic argument of another dtype,
/// extents that do not match another argument's — so that every error of a call names its
/// argument.
///
/// ```
/// use dlspan::python::{InArgument, PyView, PyViewMut};
/// use dlspan::pyo3::prelude::*;
///
/// #[pyfunction(crate = "dlspan::pyo3")]
/// fn copy(x: PyView<'_, f32, 1>, mut y: PyViewMut<'_, f32, 1>) -> PyResult<()> {
///     y.view_mut().copy_from(&x.view()).in_argument("x")
/// }
/// # Python::initialize();
/// Python::attach(|py| {
///     # let tensor = |n: usize| dlspan::python::Tensor::from_managed(py, dlspan::ManagedTensor::from_owner(vec![0f32; n], [n])?);
///     let (x, y) = (tensor(2)?, tensor(3)?);
///     let err = wrap_pyfunction!(copy, py)?.call1((x, y)).unwrap_err();
///     let notes: Vec<String> = err.value(py).getattr("__notes__")?.extract()?;
///     assert_eq!(notes, ["while processing 'x'"]);
///     Ok::<_, PyErr>(())
/// })?;
/// # Ok::<(), PyErr>(())
/// ```
pub trait InArgument<T> {
    /// The result, its error converted into its Python exception and noted with `name`.
    fn in_argument(self, name: &str) -> PyResult<T>;
}

impl<T, E: Into<PyErr>> InArgument<T> for Result<T, E> {
    #[inline]
    fn in_argument(self, name: &str) -> PyResult<T> {
        self.map_err(|err| note_argument(err.into(), name))
    }
}

/// Adds PyO3's note naming argument `name` to `err` (a note is a convenience: an exception that
/// refuses it keeps its message).
pub(crate) fn note_argument(err: PyErr, name: &str) -> PyErr {
    Python::attach(|py| {
        let _ = err.value(py).call_method1(pyo3::intern!(py, "add_note"), (format!("while processing '{name}'"),));
    });
    err
}

/// Raises `message` as `exception` with the `kind` attribute (the variant's name).
fn raise_kind(err: PyErr, kind: &'static str) -> PyErr {
    Python::attach(|py| {
        // The attribute is a convenience: an exception that refuses it still has its message.
        let _ = err.value(py).setattr("kind", kind);
    });
    err
}

impl From<crate::kernel::KernelError> for PyErr {
    /// The Python exception for a raw kernel that did not run, with a `kind` attribute: a refused
    /// view as its [`DlpackError`] is raised; `ValueError` for a launch configuration or arguments
    /// CUDA would refuse; `MemoryError` when the CPU could not allocate a launch's stacks;
    /// `RuntimeError` when the kernel could not be compiled or loaded (the compiler's log in the
    /// message), or when its threads waited at different barriers on the CPU (`DivergentBarrier`). `?` raises it in a `#[pyfunction]`.
    ///
    /// ```
    /// use dlspan::kernel::LaunchConfig;
    /// use dlspan::pyo3::{exceptions::PyValueError, prelude::*};
    /// Python::initialize();
    /// let err = PyErr::from(LaunchConfig::new([1, 1, 1], [2048, 1, 1]).check().unwrap_err());
    /// Python::attach(|py| {
    ///     assert!(err.is_instance_of::<PyValueError>(py));
    ///     assert_eq!(err.value(py).getattr("kind")?.extract::<String>()?, "InvalidLaunch");
    ///     Ok::<_, PyErr>(())
    /// })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    fn from(err: crate::kernel::KernelError) -> Self {
        use crate::kernel::KernelError as K;
        use pyo3::exceptions::{PyMemoryError, PyRuntimeError};
        let message = err.to_string();
        match err {
            K::View(e) => e.into(),
            K::ArgumentsTooLarge { .. } => raise_kind(PyValueError::new_err(message), "ArgumentsTooLarge"),
            K::InvalidLaunch { .. } => raise_kind(PyValueError::new_err(message), "InvalidLaunch"),
            K::OutOfMemory => raise_kind(PyMemoryError::new_err(message), "OutOfMemory"),
            K::CompilerMissing { .. } => raise_kind(PyRuntimeError::new_err(message), "CompilerMissing"),
            K::Compile { .. } => raise_kind(PyRuntimeError::new_err(message), "Compile"),
            K::Load { .. } => raise_kind(PyRuntimeError::new_err(message), "Load"),
            K::DivergentBarrier { .. } => raise_kind(PyRuntimeError::new_err(message), "DivergentBarrier"),
        }
    }
}

#[cfg(feature = "cuda")]
impl From<crate::cuda::CudaError> for PyErr {
    /// The Python exception for a CUDA failure, with a `kind` attribute: a refused view as its
    /// [`DlpackError`], a raw kernel's refusal as [`KernelError`](crate::kernel::KernelError)'s;
    /// `TypeError` for an element type an operation has no kernel for; `ValueError` for operands
    /// on another device than the stream's, an invalid DLPack stream value, a rank or scalar above
    /// the kernels' limits; `RuntimeError` for a missing CUDA library, a missing device, the
    /// driver's errors and NVRTC's (its log, at the kernel's own lines, in the message). `?`
    /// raises it in a `#[pyfunction]`.
    ///
    /// ```
    /// use dlspan::cuda::CudaError;
    /// use dlspan::pyo3::{exceptions::{PyRuntimeError, PyValueError}, prelude::*};
    /// Python::initialize();
    /// Python::attach(|py| {
    ///     let err = PyErr::from(CudaError::InvalidDlpackStream { value: 0 });
    ///     assert!(err.is_instance_of::<PyValueError>(py));
    ///     let err = PyErr::from(CudaError::NoDevice { ordinal: 3, count: 1 });
    ///     assert!(err.is_instance_of::<PyRuntimeError>(py));
    ///     assert_eq!(err.value(py).getattr("kind")?.extract::<String>()?, "NoDevice");
    ///     Ok::<_, PyErr>(())
    /// })?;
    /// # Ok::<(), PyErr>(())
    /// ```
    fn from(err: crate::cuda::CudaError) -> Self {
        use crate::cuda::CudaError as C;
        use pyo3::exceptions::PyRuntimeError;
        let message = err.to_string();
        match err {
            C::View(e) => e.into(),
            C::Kernel(e) => e.into(),
            C::Unsupported { .. } => raise_kind(PyTypeError::new_err(message), "Unsupported"),
            C::WrongDevice { .. } => raise_kind(PyValueError::new_err(message), "WrongDevice"),
            C::InvalidDlpackStream { .. } => raise_kind(PyValueError::new_err(message), "InvalidDlpackStream"),
            C::RankTooLarge { .. } => raise_kind(PyValueError::new_err(message), "RankTooLarge"),
            C::ScalarTooLarge { .. } => raise_kind(PyValueError::new_err(message), "ScalarTooLarge"),
            C::LibraryMissing { .. } => raise_kind(PyRuntimeError::new_err(message), "LibraryMissing"),
            C::NoDevice { .. } => raise_kind(PyRuntimeError::new_err(message), "NoDevice"),
            C::Driver { .. } => raise_kind(PyRuntimeError::new_err(message), "Driver"),
            C::Compile { .. } => raise_kind(PyRuntimeError::new_err(message), "Compile"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::DLDeviceType;

    #[test]
    fn classes_follow_the_array_api() {
        assert_eq!(class(&DlpackError::ReadOnly), Class::Value);
        assert_eq!(class(&DlpackError::NullData), Class::Buffer);
        assert_eq!(class(&DlpackError::RankMismatch { expected: 1, found: 2 }), Class::Type);
        assert_eq!(exchange_class(&ExchangeError::CapsuleConsumed), Class::Buffer);
        assert_eq!(exchange_kind(&ExchangeError::InvalidStream { stream: 0 }), "InvalidStream");
        assert_eq!(kind(&DlpackError::CopyRequired), "CopyRequired");
        // Values a bool cannot hold: a tensor of the right type whose values do not fit.
        assert_eq!(class(&DlpackError::InvalidBool { found: 2 }), Class::Value);
        assert_eq!(kind(&DlpackError::InvalidBool { found: 2 }), "InvalidBool");
        // A view of one memory space given another: the view's type does not match (rule Y21).
        let cpu = crate::python::device::CPU;
        let gpu = |device_id| DLDevice { device_type: DLDeviceType::kDLCUDA, device_id };
        assert_eq!(class(&DlpackError::DeviceMismatch { expected: DLDeviceType::kDLCUDA, found: cpu }), Class::Type);
        let differ = ExchangeError::DevicesDiffer { expected: gpu(0), found: gpu(1), first: "a" };
        assert_eq!((exchange_class(&differ), exchange_kind(&differ)), (Class::Value, "DevicesDiffer"));
        let none = ExchangeError::NoCurrentStream { device: gpu(0) };
        assert_eq!((exchange_class(&none), exchange_kind(&none)), (Class::Buffer, "NoCurrentStream"));
        // A kernel's views of shapes that do not broadcast: a value error naming the array.
        let shape = DlpackError::KernelShapeMismatch { view: "x", axis: 1, expected: 4, found: 3 };
        assert_eq!((class(&shape), kind(&shape)), (Class::Value, "KernelShapeMismatch"));
        assert!(python_message(&shape).starts_with("'x' has extent 3 on axis 1"), "{}", python_message(&shape));
    }
}
