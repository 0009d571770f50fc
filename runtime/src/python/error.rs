//! Errors as Python exceptions: every [`DlpackError`], and the Python exchange's own refusals
//! ([`ExchangeError`]), raised as the class the array API names, with dlspan's message and the
//! structure as attributes — `kind` (the variant's name) and, where the variant has them,
//! `expected` and `found` — so Python code matches errors without parsing messages.
//!
//! - `BufferError`: what cannot be exported or imported — malformed or unreachable memory, another
//!   device, a consumed capsule, a read-only tensor asked for as a legacy capsule, a copy
//!   forbidden by `copy=False` on export, PyTorch's lazy conjugate and negation bits.
//! - `TypeError`: the tensor is not of the view's type — data type, rank, sub-byte packing — or the
//!   object is not a DLPack capsule.
//! - `ValueError`: the tensor is of the right type but its values do not fit — extents, strides,
//!   bytes a `bool` cannot hold, a read-only or borrowed buffer given where a mutable view is
//!   needed, a tensor that requires grad, a stream the device cannot honour, a copy forbidden by
//!   `copy=False` on import (as the array API's `from_dlpack` says).

use crate::error::DlpackError;
use crate::ffi::{DLDataType, DLDevice};
use core::fmt;
use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::prelude::*;

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
    /// A `stream` the tensor's device cannot honour (host memory takes none or -1; 0 is never
    /// valid).
    InvalidStream {
        /// The stream given.
        stream: i64,
    },
    /// The storage PyTorch returned for a tensor does not hold the tensor's memory (a
    /// `__torch_function__` mode or override answered `untyped_storage()`): the view could not be
    /// kept alive (rule Y14).
    StorageMismatch,
    /// Memory the host can address but the device may still be writing (CUDA pinned or managed
    /// memory, ROCm host memory), read on the host where dlspan cannot wait for the device: the
    /// `cuda` feature is off or finds no driver (rule Y16).
    HostAccessUnordered {
        /// The tensor's device.
        device: DLDevice,
    },
    /// The tensor was asked for on a device it cannot be delivered to (dlspan moves no memory
    /// between devices, and reads only host-accessible memory on the host).
    DeviceUnavailable {
        /// The device asked for.
        requested: DLDevice,
        /// The tensor's device.
        found: DLDevice,
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
            Self::ConjugateBit => f.write_str("tensor has the lazy conjugate bit set; call resolve_conj() first"),
            Self::NegativeBit => f.write_str("tensor has the lazy negation bit set; call resolve_neg() first"),
            Self::CapsuleConsumed => f.write_str("the DLPack capsule was already consumed"),
            Self::NotDlpackCapsule => f.write_str("not a DLPack capsule (named dltensor or dltensor_versioned)"),
            Self::InvalidStream { stream } => write!(f, "stream {stream} is not valid for this tensor's device"),
            Self::DeviceUnavailable { requested, found } => write!(
                f,
                "tensor on device {:?}:{} cannot be delivered to device {:?}:{}",
                found.device_type, found.device_id, requested.device_type, requested.device_id
            ),
            Self::StorageMismatch => f.write_str(
                "the storage PyTorch returned does not hold the tensor's memory (a __torch_function__ mode or \
                 override answered untyped_storage()): the view could not be kept alive",
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
}

fn class(err: &DlpackError) -> Class {
    use DlpackError as E;
    // Exhaustive: a new variant must be placed here.
    match err {
        E::RankMismatch { .. }
        | E::DtypeMismatch { .. }
        | E::SubbytePacking { .. }
        | E::UnsupportedDtype { .. }
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
        | E::SubviewOutOfBounds { .. }
        | E::ReadOnly
        | E::Aliased
        | E::CopyRequired => Class::Value,
        E::DeviceMismatch { .. }
        | E::NullData
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
        E::NotDlpackCapsule => Class::Type,
        E::BorrowConflict { .. } | E::RequiresGrad | E::InvalidStream { .. } => Class::Value,
        E::ConjugateBit
        | E::NegativeBit
        | E::CapsuleConsumed
        | E::DeviceUnavailable { .. }
        | E::StorageMismatch
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
    TooFewElements, ShapeMismatch, SubviewOutOfBounds, PaddedSubbyteExport, UnsupportedVersion,
    NullManagedTensor, ReadOnly, CopyRequired, AllocationFailed, UnsupportedDtype, UnsupportedRank, NegativeNdim,
    PackedByteLength, Aliased,
);

variant_names!(exchange_kind, ExchangeError:
    BorrowConflict, RequiresGrad, ConjugateBit, NegativeBit, CapsuleConsumed, NotDlpackCapsule, InvalidStream,
    DeviceUnavailable, HostAccessUnordered, StorageMismatch,
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
        E::ShapeMismatch { expected, found, .. } => Details::Ints(int(expected), int(found)),
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
    raise(Class::Buffer, kind(&err), err.to_string(), details(&err))
}

impl From<DlpackError> for PyErr {
    /// The Python exception for `err` (the class the array API names, see the module
    /// documentation), with `kind` (and `expected` / `found`) attributes: `?` raises it in a
    /// `#[pyfunction]`.
    ///
    /// ```
    /// use dlspan::{DlpackError, ffi::{DLDataType, DLDataTypeCode}};
    /// use pyo3::{exceptions::{PyTypeError, PyValueError}, prelude::*};
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
        raise(class(&err), kind(&err), err.to_string(), details(&err))
    }
}

impl From<ExchangeError> for PyErr {
    /// The exception for an exchange refusal, with `kind` (and `expected` / `found`) attributes.
    ///
    /// ```
    /// use dlspan::python::ExchangeError;
    /// use pyo3::{exceptions::PyBufferError, prelude::*};
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
            _ => Details::None,
        };
        raise(exchange_class(&err), exchange_kind(&err), err.to_string(), details)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
