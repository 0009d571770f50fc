//! [`TorchError`]: what the PyTorch operator layer reports. Inside a kernel, an error becomes the
//! exception PyTorch raises for the call (`RuntimeError` in Python), carrying this message.

use crate::error::DlpackError;
use core::fmt;

/// An error of the PyTorch operator layer: libtorch not found or too old, a shim call that failed,
/// an argument that does not fit the view asked of it, or the kernel's own error.
///
/// ```
/// use dlspan::torch::TorchError;
/// let e = TorchError::Argument { name: "x".into(), error: dlspan::DlpackError::NullData };
/// assert!(e.to_string().starts_with("argument `x`: "));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TorchError {
    /// No libtorch is loaded in the process: import `torch` before the extension (or
    /// `torch.ops.load_library` it), or link the program against libtorch.
    NotLoaded,
    /// The loaded libtorch lacks a function every supported torch has: it is older than
    /// [`OLDEST`](super::OLDEST).
    TooOld {
        /// The missing function.
        symbol: &'static str,
        /// The oldest supported torch, `(major, minor)`.
        oldest: (u8, u8),
    },
    /// A feature needs a newer torch than the loaded one.
    Unsupported {
        /// What was asked for.
        what: &'static str,
        /// The torch version that has it.
        since: &'static str,
        /// The loaded torch, `(major, minor)`.
        found: (u8, u8),
    },
    /// A shim function reported an error.
    Shim {
        /// The function.
        function: &'static str,
        /// Its status code.
        code: i32,
        /// libtorch's message (empty before torch 2.13, which has no getter for it).
        message: String,
    },
    /// An operator's schema, or a call's arguments, do not match the declaration.
    Schema {
        /// The operator.
        operator: String,
        /// What is wrong.
        reason: String,
    },
    /// An argument of the call does not fit what the kernel asked of it (dtype, rank, extents,
    /// device, layout, alignment, aliasing).
    Argument {
        /// The argument's name in the schema.
        name: String,
        /// The rule it broke.
        error: DlpackError,
    },
    /// A tensor's dtype has no DLPack equivalent dlspan knows (quantized types, for instance).
    Dtype {
        /// The argument's name, or `"result"`.
        name: String,
        /// The torch dtype code (`c10::ScalarType`).
        code: i32,
    },
    /// The kernel's own error, as text (a view, kernel or CUDA error of dlspan, or the author's).
    Kernel(String),
    /// The kernel panicked: the panic was caught before it reached libtorch.
    Panic {
        /// The panic's message.
        message: String,
    },
}

impl fmt::Display for TorchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotLoaded => f.write_str(
                "no libtorch in this process: `import torch` before loading the extension (or link libtorch)",
            ),
            Self::TooOld { symbol, oldest } => write!(
                f,
                "the loaded libtorch has no `{symbol}`: dlspan's operators need torch {}.{} or newer",
                oldest.0, oldest.1
            ),
            Self::Unsupported { what, since, found } => {
                write!(f, "{what} needs torch {since} or newer; this is torch {}.{}", found.0, found.1)
            }
            Self::Shim { function, code, message } if message.is_empty() => {
                write!(f, "libtorch's `{function}` failed (status {code})")
            }
            Self::Shim { function, message, .. } => write!(f, "libtorch's `{function}` failed: {message}"),
            Self::Schema { operator, reason } => write!(f, "operator `{operator}`: {reason}"),
            Self::Argument { name, error } => write!(f, "argument `{name}`: {error}"),
            Self::Dtype { name, code } => {
                write!(f, "argument `{name}`: torch dtype {code} has no DLPack data type dlspan reads")
            }
            Self::Kernel(message) => f.write_str(message),
            Self::Panic { message } => write!(f, "the kernel panicked: {message}"),
        }
    }
}

impl std::error::Error for TorchError {}

impl From<DlpackError> for TorchError {
    fn from(error: DlpackError) -> Self {
        Self::Kernel(error.to_string())
    }
}

impl From<crate::kernel::KernelError> for TorchError {
    fn from(error: crate::kernel::KernelError) -> Self {
        Self::Kernel(error.to_string())
    }
}

#[cfg(feature = "cuda")]
impl From<crate::cuda::CudaError> for TorchError {
    fn from(error: crate::cuda::CudaError) -> Self {
        Self::Kernel(error.to_string())
    }
}

impl From<String> for TorchError {
    fn from(message: String) -> Self {
        Self::Kernel(message)
    }
}

impl From<&str> for TorchError {
    fn from(message: &str) -> Self {
        Self::Kernel(message.to_owned())
    }
}
