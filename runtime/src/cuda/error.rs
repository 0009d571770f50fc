//! [`CudaError`]: why a CUDA operation was refused or failed, one structured variant per cause.

use super::abi::KernelKind;
use super::library::{driver_present, nvrtc_present};
use crate::error::DlpackError;
use crate::ffi::DLDataType;
use core::fmt;

/// Which dynamically loaded CUDA library an operation needed.
///
/// ```
/// use dlspan::cuda::CudaLibrary;
/// assert_eq!(CudaLibrary::Driver.to_string(), "the CUDA driver (libcuda)");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CudaLibrary {
    /// The driver API, `libcuda.so.1`: needed for every device operation.
    Driver,
    /// The runtime compiler, `libnvrtc.so.13`: needed to compile kernels.
    Nvrtc,
}

impl fmt::Display for CudaLibrary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Driver => "the CUDA driver (libcuda)",
            Self::Nvrtc => "the CUDA runtime compiler (libnvrtc)",
        })
    }
}

impl CudaLibrary {
    /// `Ok` when the library can be loaded, [`CudaError::LibraryMissing`] otherwise: asked before
    /// any cudarc call that needs it.
    pub(crate) fn require(self) -> Result<(), CudaError> {
        let present = match self {
            Self::Driver => driver_present(),
            Self::Nvrtc => nvrtc_present(),
        };
        if present { Ok(()) } else { Err(CudaError::LibraryMissing { library: self }) }
    }
}

/// Why a CUDA operation was refused or failed.
///
/// Validation errors of views keep their [`DlpackError`]; the driver's and the compiler's
/// failures keep their status codes. Match on variants, not on messages.
///
/// ```
/// use dlspan::cuda::{CudaError, CudaLibrary, Gpu};
/// // On a machine without a driver this is a typed error, never a panic.
/// match Gpu::new(0) {
///     Ok(gpu) => assert_eq!(gpu.ordinal(), 0),
///     Err(CudaError::LibraryMissing { library }) => assert_eq!(library, CudaLibrary::Driver),
///     Err(other) => println!("no usable GPU: {other}"),
/// }
/// ```
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CudaError {
    /// A CUDA library could not be loaded (no driver installed, or no NVRTC on the library path).
    LibraryMissing {
        /// The library that was looked for.
        library: CudaLibrary,
    },
    /// The driver is present but reports no device of this ordinal.
    NoDevice {
        /// The ordinal asked for.
        ordinal: usize,
        /// How many devices the driver reports.
        count: usize,
    },
    /// A driver call failed.
    Driver {
        /// The driver's status (`CUresult`); its `Debug` form is the driver's name for it
        /// (`CUDA_ERROR_OUT_OF_MEMORY`).
        result: cudarc::driver::sys::CUresult,
    },
    /// NVRTC refused a kernel: an error in a user's kernel, reported at its own lines, or in one of
    /// dlspan's generated modules (a bug of the generator), reported with NVRTC's log.
    Compile {
        /// The kernel's name.
        kernel: String,
        /// NVRTC's status.
        result: cudarc::nvrtc::sys::nvrtcResult,
        /// The compile log: for a user's kernel, NVRTC's diagnostics at the kernel's own Rust
        /// lines, with their text and the file and line where the kernel is declared; for
        /// dlspan's modules, NVRTC's log.
        log: String,
        /// NVRTC's log as NVRTC wrote it, against the generated source (for experts).
        nvrtc_log: String,
    },
    /// A view was refused (layout, allocation length), or the operands of one operation differ
    /// in shape ([`DlpackError::ShapeMismatch`]).
    View(DlpackError),
    /// An operand lives on another device than the stream that would run the operation.
    WrongDevice {
        /// The stream's device ordinal.
        expected: i32,
        /// The operand's device ordinal.
        found: i32,
    },
    /// The operation has no kernel for this element type (arithmetic on a storage-only type, or a
    /// cast between types with no defined conversion).
    Unsupported {
        /// The operation.
        kernel: KernelKind,
        /// The element type of the output.
        output: DLDataType,
        /// The element type of the (first) input, when there is one.
        input: Option<DLDataType>,
    },
    /// After merging axes, the operation still has more axes than the kernels index.
    RankTooLarge {
        /// The number of axes left.
        rank: usize,
        /// The kernels' limit, [`MAX_KERNEL_RANK`](crate::cuda::MAX_KERNEL_RANK).
        max: usize,
    },
    /// An element type is larger than a kernel's scalar argument holds.
    ScalarTooLarge {
        /// The element size in bytes.
        size: usize,
        /// The largest size a scalar argument holds.
        max: usize,
    },
    /// The DLPack stream value 0 is invalid, and so are negative values other than -1
    /// ([rule C6](crate::rules#c6)).
    InvalidDlpackStream {
        /// The value given.
        value: i64,
    },
    /// A raw kernel's launch was refused before reaching the driver (its configuration or
    /// arguments), or NVRTC refused its body ([`KernelError::Compile`](crate::kernel::KernelError)
    /// is the CPU's; on a stream NVRTC's log comes as [`CudaError::Compile`]).
    Kernel(crate::kernel::KernelError),
}

impl From<DlpackError> for CudaError {
    fn from(error: DlpackError) -> Self {
        Self::View(error)
    }
}

impl From<crate::kernel::KernelError> for CudaError {
    fn from(error: crate::kernel::KernelError) -> Self {
        match error {
            crate::kernel::KernelError::View(view) => Self::View(view),
            other => Self::Kernel(other),
        }
    }
}

impl From<cudarc::driver::DriverError> for CudaError {
    fn from(error: cudarc::driver::DriverError) -> Self {
        Self::Driver { result: error.0 }
    }
}

impl fmt::Display for CudaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::LibraryMissing { library } => write!(f, "{library} could not be loaded"),
            Self::NoDevice { ordinal, count } => {
                write!(f, "no CUDA device {ordinal}: the driver reports {count} device(s)")
            }
            Self::Driver { result } => write!(f, "CUDA driver call failed: {result:?}"),
            Self::Compile { kernel, result, log, .. } => {
                write!(f, "NVRTC refused kernel {kernel} ({result:?}): {log}")
            }
            Self::View(error) => fmt::Display::fmt(error, f),
            Self::WrongDevice { expected, found } => {
                write!(f, "operand lives on CUDA device {found}, the stream on device {expected}")
            }
            Self::Unsupported { kernel, output, input: Some(input) } => {
                write!(f, "no {kernel} kernel from {input} to {output}")
            }
            Self::Unsupported { kernel, output, input: None } => write!(f, "no {kernel} kernel for {output}"),
            Self::RankTooLarge { rank, max } => {
                write!(f, "{rank} axes remain after merging, the kernels index at most {max}")
            }
            Self::ScalarTooLarge { size, max } => {
                write!(f, "an element of {size} bytes does not fit a scalar argument of {max} bytes")
            }
            Self::InvalidDlpackStream { value } => write!(f, "{value} is not a valid DLPack stream value"),
            Self::Kernel(error) => fmt::Display::fmt(error, f),
        }
    }
}

impl std::error::Error for CudaError {}
