//! [`DlpackError`] as Python exceptions: the class the array API names for each failure, dlspan's
//! message, and the structure as attributes (`kind`: the variant's name; `expected` / `found` where
//! the variant has them), so Python code matches errors without parsing messages.
//!
//! - `BufferError`: what cannot be exported or imported — malformed or unreachable memory, another
//!   device, a consumed capsule, a read-only tensor asked for as a legacy capsule, a copy
//!   forbidden by `copy=False` on export.
//! - `TypeError`: the tensor is not of the view's type — data type, rank, sub-byte packing — or the
//!   object is not a DLPack capsule.
//! - `ValueError`: the tensor is of the right type but its values do not fit — extents, strides, a
//!   read-only or borrowed buffer given where a mutable view is needed, a stream the device cannot
//!   honour, a copy forbidden by `copy=False` on import (the array API's `from_dlpack`).

use crate::error::DlpackError;
use crate::ffi::{DLDataType, DLDevice};
use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::prelude::*;

/// The exception class of an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Buffer,
    Type,
    Value,
}

fn class(err: &DlpackError) -> Class {
    use DlpackError as E;
    match err {
        E::RankMismatch { .. }
        | E::DtypeMismatch { .. }
        | E::SubbytePacking { .. }
        | E::NotDlpackCapsule
        | E::InvalidDtype { .. } => {
            Class::Type
        }
        E::ExtentMismatch { .. }
        | E::StridesIncompatible { .. }
        | E::NonPositiveStride { .. }
        | E::OverlappingStrides
        | E::SliceTooShort { .. }
        | E::SubviewOutOfBounds { .. }
        | E::ReadOnly
        | E::BorrowConflict { .. }
        | E::RequiresGrad
        | E::InvalidStream { .. }
        | E::CopyRequired => Class::Value,
        E::DeviceMismatch { .. }
        | E::NullData
        | E::ByteOffsetOverflow { .. }
        | E::ByteOffsetNotElementMultiple { .. }
        | E::Misaligned { .. }
        | E::NullShape
        | E::NegativeExtent { .. }
        | E::NullStrides { .. }
        | E::SpanOverflow
        | E::NegativeReach { .. }
        | E::ExportOverflow { .. }
        | E::PaddedSubbyteExport
        | E::UnsupportedVersion { .. }
        | E::NullManagedTensor
        | E::NotHostAccessible { .. }
        | E::ConjugateBit
        | E::NegativeBit
        | E::CapsuleConsumed
        | E::DeviceUnavailable { .. }
        | E::AllocationFailed { .. } => Class::Buffer,
    }
}

/// The variant's name, for the exception's `kind` attribute.
fn kind(err: &DlpackError) -> &'static str {
    // Exhaustive: a new variant must be named here.
    macro_rules! names {
        ($($variant:ident),* $(,)?) => {
            match err {
                $(DlpackError::$variant { .. } => stringify!($variant),)*
            }
        };
    }
    names!(
        DeviceMismatch,
        RankMismatch,
        DtypeMismatch,
        SubbytePacking,
        NullData,
        ByteOffsetOverflow,
        ByteOffsetNotElementMultiple,
        Misaligned,
        NullShape,
        NegativeExtent,
        ExtentMismatch,
        NullStrides,
        StridesIncompatible,
        NonPositiveStride,
        SpanOverflow,
        NegativeReach,
        OverlappingStrides,
        SliceTooShort,
        SubviewOutOfBounds,
        ExportOverflow,
        PaddedSubbyteExport,
        UnsupportedVersion,
        NullManagedTensor,
        ReadOnly,
        CopyRequired,
        NotHostAccessible,
        BorrowConflict,
        RequiresGrad,
        ConjugateBit,
        NegativeBit,
        CapsuleConsumed,
        NotDlpackCapsule,
        InvalidStream,
        InvalidDtype,
        DeviceUnavailable,
        AllocationFailed,
    )
}

/// A device as Python names it in `__dlpack_device__`: `(device_type, device_id)`.
fn device_tuple(device: DLDevice) -> (i32, i32) {
    (device.device_type.0, device.device_id)
}

fn dtype_name(dtype: DLDataType) -> String {
    dtype.to_string()
}

/// Sets `expected` / `found` on the exception where the variant has them.
fn set_details(py: Python<'_>, value: &Bound<'_, PyAny>, err: &DlpackError) -> PyResult<()> {
    use DlpackError as E;
    let (expected, found): (Py<PyAny>, Py<PyAny>) = match *err {
        E::DeviceMismatch { expected, found } => {
            ((expected.0, 0).into_pyobject(py)?.into_any().unbind(), device_tuple(found).into_pyobject(py)?.into_any().unbind())
        }
        E::RankMismatch { expected, found } => {
            (expected.into_pyobject(py)?.into_any().unbind(), found.into_pyobject(py)?.into_any().unbind())
        }
        E::DtypeMismatch { expected, found } => (
            dtype_name(expected).into_pyobject(py)?.into_any().unbind(),
            dtype_name(found).into_pyobject(py)?.into_any().unbind(),
        ),
        E::ExtentMismatch { expected, found, .. } => {
            (expected.into_pyobject(py)?.into_any().unbind(), found.into_pyobject(py)?.into_any().unbind())
        }
        E::StridesIncompatible { expected, found, .. } => {
            (expected.into_pyobject(py)?.into_any().unbind(), found.into_pyobject(py)?.into_any().unbind())
        }
        E::DeviceUnavailable { requested, found } => (
            device_tuple(requested).into_pyobject(py)?.into_any().unbind(),
            device_tuple(found).into_pyobject(py)?.into_any().unbind(),
        ),
        _ => return Ok(()),
    };
    value.setattr("expected", expected)?;
    value.setattr("found", found)
}

/// The Python exception for `err`, with `kind` (and `expected` / `found`) attributes.
///
/// ```
/// use dlspan::{DlpackError, ffi::{DLDataType, DLDataTypeCode}, python::to_pyerr};
/// use pyo3::{exceptions::PyTypeError, prelude::*};
/// Python::initialize();
/// Python::attach(|py| {
///     let f32 = DLDataType::new(DLDataTypeCode::kDLFloat, 32, 1);
///     let i64 = DLDataType::new(DLDataTypeCode::kDLInt, 64, 1);
///     let err = to_pyerr(DlpackError::DtypeMismatch { expected: f32, found: i64 });
///     assert!(err.is_instance_of::<PyTypeError>(py));
///     let value = err.value(py);
///     assert_eq!(value.getattr("kind")?.extract::<String>()?, "DtypeMismatch");
///     assert_eq!(value.getattr("found")?.extract::<String>()?, "int64");
///     Ok::<_, PyErr>(())
/// })?;
/// # Ok::<(), PyErr>(())
/// ```
pub fn to_pyerr(err: DlpackError) -> PyErr {
    to_pyerr_as(err, class(&err))
}

/// The exception for an error met while exporting (`__dlpack__`, the exchange API's producer
/// functions): always `BufferError`, "what cannot be exported", except for invalid arguments.
pub(crate) fn export_error(err: DlpackError) -> PyErr {
    let class = match err {
        DlpackError::InvalidStream { .. } => Class::Value,
        _ => Class::Buffer,
    };
    to_pyerr_as(err, class)
}

fn to_pyerr_as(err: DlpackError, class: Class) -> PyErr {
    let message = err.to_string();
    let pyerr = match class {
        Class::Buffer => PyBufferError::new_err(message),
        Class::Type => PyTypeError::new_err(message),
        Class::Value => PyValueError::new_err(message),
    };
    Python::attach(|py| {
        let value = pyerr.value(py);
        // Attributes are a convenience: an exception that refuses them still carries the message.
        let _ = value.setattr("kind", kind(&err)).and_then(|()| set_details(py, value, &err));
    });
    pyerr
}

impl From<DlpackError> for PyErr {
    /// As [`to_pyerr`], so `?` works in `#[pyfunction]`s.
    ///
    /// ```
    /// use dlspan::DlpackError;
    /// use pyo3::{exceptions::PyValueError, prelude::*};
    /// Python::initialize();
    /// fn refuse() -> PyResult<()> {
    ///     Err(DlpackError::ReadOnly)?
    /// }
    /// Python::attach(|py| assert!(refuse().unwrap_err().is_instance_of::<PyValueError>(py)));
    /// ```
    fn from(err: DlpackError) -> Self {
        to_pyerr(err)
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
        assert_eq!(kind(&DlpackError::CapsuleConsumed), "CapsuleConsumed");
        assert_eq!(kind(&DlpackError::InvalidStream { stream: 0 }), "InvalidStream");
    }
}
