//! [`JaxError`]: what a JAX kernel's handler reports. It becomes the `XLA_FFI_Error` the handler
//! returns, carrying this message, which JAX raises as the call's exception.

use crate::error::DlpackError;
use core::fmt;

/// An error of a JAX kernel's handler: a call frame dlspan does not read, an argument or attribute
/// that does not fit the kernel, or the kernel's own error.
///
/// ```
/// use dlspan::jax::JaxError;
/// let e = JaxError::Argument { name: "x".into(), error: dlspan::DlpackError::NullData };
/// assert!(e.to_string().starts_with("argument `x`: "));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum JaxError {
    /// The call frame, or XLA's API table, is not one this build of dlspan reads (a struct
    /// smaller than its fields, an API version it does not know, a stage other than execute, an
    /// argument that is not a buffer).
    Frame(String),
    /// An argument or result buffer does not fit what the kernel asked of it (dtype, rank,
    /// extents, alignment, overlap).
    Argument {
        /// The kernel parameter's name.
        name: String,
        /// The rule it broke.
        error: DlpackError,
    },
    /// A scalar parameter's attribute is missing or of a type that is not the parameter's.
    Attribute {
        /// The parameter's name.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// The call's arguments do not fit the kernel (count, dtypes, shapes), or the kernel's own
    /// error, as text.
    Kernel(String),
    /// The kernel panicked: the panic was caught before it reached XLA.
    Panic {
        /// The panic's message.
        message: String,
    },
}

impl fmt::Display for JaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Frame(reason) => write!(f, "XLA's call frame: {reason}"),
            Self::Argument { name, error } => write!(f, "argument `{name}`: {error}"),
            Self::Attribute { name, reason } => write!(f, "argument `{name}`: {reason}"),
            Self::Kernel(message) => f.write_str(message),
            Self::Panic { message } => write!(f, "the kernel panicked: {message}"),
        }
    }
}

impl std::error::Error for JaxError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Argument { error, .. } => Some(error),
            _ => None,
        }
    }
}

impl From<DlpackError> for JaxError {
    /// A view or kernel error of dlspan not tied to one argument.
    fn from(error: DlpackError) -> Self {
        Self::Kernel(error.to_string())
    }
}

#[cfg(feature = "cuda")]
impl From<crate::cuda::CudaError> for JaxError {
    /// A CUDA error of the kernel's launch.
    fn from(error: crate::cuda::CudaError) -> Self {
        Self::Kernel(error.to_string())
    }
}
