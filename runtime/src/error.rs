//! [`DlpackError`]: one structured variant per rule, never a string.

use crate::ffi::{DLDataType, DLDevice, DLDeviceType, DLPackVersion};
use core::fmt;

/// Which layout a rule was checked for.
///
/// ```
/// assert_eq!(dlspan::LayoutKind::Right.to_string(), "layout_right");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LayoutKind {
    /// [`LayoutRight`](crate::LayoutRight): row-major, compact.
    Right,
    /// [`LayoutLeft`](crate::LayoutLeft): column-major, compact.
    Left,
    /// [`LayoutStride`](crate::LayoutStride): any positive strides.
    Stride,
    /// [`LayoutStrideRelaxed`](crate::LayoutStrideRelaxed): any strides and an element offset.
    StrideRelaxed,
}

impl fmt::Display for LayoutKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Right => "layout_right",
            Self::Left => "layout_left",
            Self::Stride => "layout_stride",
            Self::StrideRelaxed => "layout_stride_relaxed",
        })
    }
}

/// Why a tensor, a view or an exchange was refused.
///
/// The variants of the `DLTensor` → view conversion are listed in the order the checks run
/// ([section I](crate::rules#i) of the [rules page](crate::rules), which names the rule behind each
/// variant): the first failing rule is the one reported. Match on variants, not on messages.
///
/// ```
/// use dlspan::{to_host_mdspan, DlpackError, LayoutRight, ffi::DLTensor};
/// let tensor = DLTensor::default(); // device type 0: not CPU
/// let err = unsafe { to_host_mdspan::<f32, 1, LayoutRight>(&tensor) }.unwrap_err();
/// assert!(matches!(err, DlpackError::DeviceMismatch { .. }));
/// ```
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DlpackError {
    /// The tensor lives on another kind of device than the view's memory space accepts.
    DeviceMismatch {
        /// The device type the memory space expects.
        expected: DLDeviceType,
        /// The tensor's device.
        found: DLDevice,
    },
    /// A CUDA device or managed tensor's device id is negative: a CUDA ordinal never is.
    NegativeDeviceId {
        /// The tensor's device.
        device: DLDevice,
    },
    /// `ndim` differs from the view's rank (a negative `ndim` is always a mismatch).
    RankMismatch {
        /// The view's rank.
        expected: usize,
        /// The tensor's `ndim`.
        found: i32,
    },
    /// The tensor's data type differs from the element type's (code, bits and lanes compared).
    DtypeMismatch {
        /// The element type's data type.
        expected: DLDataType,
        /// The tensor's data type.
        found: DLDataType,
    },
    /// A sub-byte data type is packed on one side and padded (one lane per byte) on the other.
    SubbytePacking {
        /// Whether the element type is padded storage.
        element_padded: bool,
        /// Whether the tensor is padded (`IS_SUBBYTE_TYPE_PADDED`; a plain `DLTensor` is packed).
        tensor_padded: bool,
    },
    /// `data` is null although the tensor may have elements (only a tensor with a zero extent may
    /// have null data).
    NullData,
    /// `data + byte_offset` overflows the address space.
    ByteOffsetOverflow {
        /// The tensor's `byte_offset`.
        byte_offset: u64,
    },
    /// For the relaxed layout, `byte_offset` must be a whole number of elements.
    ByteOffsetNotElementMultiple {
        /// The tensor's `byte_offset`.
        byte_offset: u64,
        /// The element size in bytes.
        element_size: usize,
    },
    /// The address the elements are counted from is not aligned for the element type.
    Misaligned {
        /// `data + byte_offset` for the strict layouts, `data` for the relaxed layout.
        address: usize,
        /// The alignment the element type needs.
        alignment: usize,
    },
    /// `shape` is null for a tensor of rank > 0.
    NullShape,
    /// An extent is negative.
    NegativeExtent {
        /// The axis.
        axis: usize,
        /// The extent found.
        extent: i64,
    },
    /// An extent differs from a static extent of the view's (or mapping's) extents type.
    ExtentMismatch {
        /// The axis.
        axis: usize,
        /// The static extent.
        expected: usize,
        /// The extent found.
        found: usize,
    },
    /// `strides` is null for a tensor of rank > 0 from a producer of DLPack 1.2 or later (older
    /// producers mean row-major by it).
    NullStrides {
        /// The producer's DLPack version.
        version: DLPackVersion,
    },
    /// A stride differs from what a compact layout requires.
    StridesIncompatible {
        /// The compact layout requested.
        layout: LayoutKind,
        /// The first axis that differs.
        axis: usize,
        /// The stride the layout requires.
        expected: i64,
        /// The stride found.
        found: i64,
        /// The strided layout that takes these strides: [`LayoutKind::Stride`] when every stride is
        /// positive, [`LayoutKind::StrideRelaxed`] otherwise (what the message suggests).
        accepted_by: LayoutKind,
    },
    /// `layout_stride` requires every stride to be positive
    /// ([`LayoutStrideRelaxed`](crate::LayoutStrideRelaxed) takes zero and negative strides).
    NonPositiveStride {
        /// The axis.
        axis: usize,
        /// The stride found.
        stride: i64,
    },
    /// Extents, strides and offset reach an element offset, an element count or a byte span that
    /// does not fit in `isize`, or a memory range that wraps around the address space.
    SpanOverflow,
    /// A relaxed mapping reaches below its base pointer (negative strides without enough offset).
    NegativeReach {
        /// The lowest element offset reached, relative to the base pointer.
        lowest: i64,
    },
    /// A mutable view needs every index to address its own element, and these strides are not
    /// proven to: sorted by magnitude, some axis' stride does not exceed what the smaller axes reach
    /// (zero strides, overlapping axes, or a rare interleaving the sufficient test cannot prove).
    OverlappingStrides,
    /// An element of a `bool` type holds a byte other than 0 and 1 (checked after every other rule
    /// of the import, for memory the host reads): DLPack producers may store any byte in a
    /// `kDLBool` element, a Rust `bool` may not hold one. View such data as
    /// [`dtype::Bool`](crate::dtype::Bool), which reads every nonzero byte as `true`.
    InvalidBool {
        /// The first byte found that is neither 0 nor 1 (in memory order).
        found: u8,
    },
    /// The view type states an alignment ([`Aligned`](crate::Aligned)) that the first element's
    /// address does not have (checked after every import rule).
    Underaligned {
        /// The address of the first element (index `[0; R]`).
        address: usize,
        /// The alignment the view type requires, in bytes.
        required: usize,
        /// The largest power of two that divides the address.
        found: usize,
    },
    /// A slice or owner holds a different number of elements than the extents do (a compact view or
    /// export takes exactly that many).
    LengthMismatch {
        /// The number of elements the extents hold.
        expected: usize,
        /// The number of elements given.
        found: usize,
    },
    /// A slice or owner holds fewer elements than a strided mapping reaches (it needs at least
    /// `required_span_size()`, and may hold more).
    TooFewElements {
        /// Elements from the first to one past the highest element the mapping reaches.
        required: usize,
        /// The number of elements given.
        found: usize,
    },
    /// Two views that must have the same extents differ on an axis.
    ShapeMismatch {
        /// The first axis that differs.
        axis: usize,
        /// This view's extent.
        expected: usize,
        /// The other view's extent.
        found: usize,
    },
    /// A view of an element-wise kernel's call (`elementwise!`) that neither has the shape of the
    /// call's output (its first written view) nor broadcasts to it: written views take the
    /// output's shape exactly; a read view may have fewer axes (aligned to the output's last ones)
    /// and extent 1 where the output has more.
    KernelShapeMismatch {
        /// The view's parameter name in the kernel's signature.
        view: &'static str,
        /// The first axis that differs, in the output's numbering.
        axis: u32,
        /// The output's extent.
        expected: usize,
        /// The view's extent.
        found: usize,
    },
    /// A read view of an element-wise kernel run with `run_exact` has extent 1 on an axis where
    /// the kernel's output has another extent: `run` would broadcast it, `run_exact` broadcasts
    /// no axis a view has (only the leading axes a view of fewer axes lacks).
    KernelBroadcastRefused {
        /// The view's parameter name in the kernel's signature.
        view: &'static str,
        /// The axis, in the output's numbering.
        axis: u32,
        /// The output's extent there.
        expected: usize,
    },
    /// The last axis of a view cannot become the lanes of one element
    /// ([`Mdspan::group_lanes`](crate::Mdspan::group_lanes)): its values are not adjacent (the
    /// last axis's stride is not 1, or it has no values), or another axis's stride is not a whole
    /// number of groups.
    LanesNotGroupable {
        /// The axis whose stride does not fit.
        axis: usize,
        /// Its stride, in elements.
        stride: i64,
        /// The values per group: the last axis's extent.
        lanes: usize,
    },
    /// A mutable view of a type that may write any byte over memory of a type whose bytes are
    /// checked (a `dtype::Bool` view of Rust `bool`s, which must stay 0 or 1): its writes could
    /// leave values the memory's own type forbids.
    UncheckedWrites,
    /// A sub-view range is reversed or exceeds its axis.
    SubviewOutOfBounds {
        /// The axis.
        axis: usize,
        /// The range's start (`usize::MAX` for an excluded start of `usize::MAX`).
        start: usize,
        /// The range's end, exclusive (`usize::MAX` for an included end of `usize::MAX`).
        end: usize,
        /// The axis' extent.
        extent: usize,
    },
    /// Padded sub-byte data cannot be described by a plain `DLTensor` (which means packed); export
    /// it as a managed tensor, which carries the `IS_SUBBYTE_TYPE_PADDED` flag.
    PaddedSubbyteExport,
    /// A managed tensor's major version is not 1: only its deleter was called.
    UnsupportedVersion {
        /// The version found.
        version: DLPackVersion,
    },
    /// A null pointer was given where a managed tensor was expected.
    NullManagedTensor,
    /// The tensor is marked read-only; it yields only shared views.
    ReadOnly,
    /// The tensor's memory may also be reached through someone else (its producer, another import
    /// of the same memory): it yields no views ([rule M10](crate::rules#m10)).
    Aliased,
    /// The requested exchange needs a copy, and copying was forbidden.
    CopyRequired,
    /// A buffer could not be allocated: its size in bytes overflows `isize`, or the allocator
    /// refused it.
    AllocationFailed {
        /// Elements requested.
        len: usize,
        /// Bytes per element.
        element_size: usize,
        /// The alignment requested, in bytes.
        alignment: usize,
    },
    /// No element type of dlspan has this data type (or, for a dynamically typed view, no storage
    /// layout is defined for it: zero bits or lanes, or a width that is neither whole bytes nor
    /// sub-byte).
    UnsupportedDtype {
        /// The data type.
        dtype: DLDataType,
    },
    /// The data type is one dlspan has, but not one this operation takes: a dispatch to generic
    /// kernel code (`kernel::dispatch_float` takes the four float types, `kernel::dispatch_scalar`
    /// the integers and floats).
    DtypeNotAccepted {
        /// The data type.
        dtype: DLDataType,
        /// What the operation takes, in words (`"float16, bfloat16, float32 or float64"`).
        accepted: &'static str,
    },
    /// A rank beyond what a dispatch to const-generic code instantiates.
    UnsupportedRank {
        /// The rank asked for.
        rank: usize,
        /// The highest rank instantiated.
        max: usize,
    },
    /// A byte buffer's length differs from what its packed sub-byte values take
    /// (`ceil(count · bits / 8)` bytes, or the bytes a mapping reaches).
    PackedByteLength {
        /// The bytes the packed values take.
        required: usize,
        /// The bytes given.
        found: usize,
    },
    /// `ndim` is negative.
    NegativeNdim {
        /// The tensor's `ndim`.
        ndim: i32,
    },
}

impl fmt::Display for DlpackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::DeviceMismatch { expected, found } => {
                write!(f, "tensor is on device {:?}:{}, expected {expected:?}", found.device_type, found.device_id)?;
                if expected == DLDeviceType::kDLCPU {
                    f.write_str(" or pinned host memory (kDLCUDAHost, kDLROCMHost)")?;
                }
                Ok(())
            }
            Self::NegativeDeviceId { device } => write!(
                f,
                "device id {} of {:?} is negative, and device ordinals never are",
                device.device_id, device.device_type
            ),
            Self::RankMismatch { expected, found } => write!(f, "ndim is {found}, the view's rank is {expected}"),
            Self::DtypeMismatch { expected, found } => write!(f, "tensor has dtype {found}, expected {expected}"),
            Self::SubbytePacking { element_padded, tensor_padded } => write!(
                f,
                "sub-byte data is {} but the element type is {} storage",
                if tensor_padded { "padded" } else { "packed" },
                if element_padded { "padded" } else { "packed" }
            ),
            Self::NullData => f.write_str("tensor data is null, which only a tensor without elements may have"),
            Self::ByteOffsetOverflow { byte_offset } => {
                write!(f, "data + byte_offset ({byte_offset}) overflows the address space")
            }
            Self::ByteOffsetNotElementMultiple { byte_offset, element_size } => {
                write!(f, "byte_offset {byte_offset} is not a multiple of the element size {element_size}")
            }
            Self::Misaligned { address, alignment } => {
                write!(f, "element address {address:#x} is not a multiple of the element alignment {alignment}")
            }
            Self::Underaligned { address, required, found } => write!(
                f,
                "first element at {address:#x} is aligned to {found} bytes, but the view type requires {required}"
            ),
            Self::NullShape => f.write_str("tensor shape is null, which only a rank-0 tensor may have"),
            Self::NegativeExtent { axis, extent } => write!(f, "extent {extent} of axis {axis} is negative"),
            Self::ExtentMismatch { axis, expected, found } => {
                write!(f, "extent of axis {axis} is {found}, but its static extent is {expected}")
            }
            Self::NullStrides { version } => write!(
                f,
                "tensor strides are null, which producers of DLPack 1.2 or later may not send for rank > 0 \
                 (read as version {}.{}; a bare DLTensor is read as the current version: one from an older \
                 producer, such as a legacy DLManagedTensor, whose null strides mean row-major, is imported \
                 with ImportOptions::legacy() or through ManagedTensor)",
                version.major, version.minor
            ),
            Self::StridesIncompatible { layout, axis, expected, found, accepted_by } => {
                write!(f, "stride {found} of axis {axis} is incompatible with {layout} (expected {expected}); ")?;
                f.write_str(if accepted_by == LayoutKind::Stride {
                    "LayoutStride takes these strides"
                } else {
                    "LayoutStrideRelaxed takes these strides (some are zero or negative)"
                })
            }
            Self::NonPositiveStride { axis, stride } => write!(
                f,
                "stride {stride} of axis {axis} is not positive, which layout_stride requires; LayoutStrideRelaxed \
                 takes zero and negative strides"
            ),
            Self::SpanOverflow => {
                f.write_str("extents, strides and offset reach beyond what isize or the address space holds")
            }
            Self::NegativeReach { lowest } => {
                write!(f, "strides reach element offset {lowest}, below the base pointer")
            }
            Self::OverlappingStrides => f.write_str(
                "two indices may reach the same element (an axis of extent > 1 with a zero stride, as a \
                 broadcast has, or a stride that does not exceed what the axes of smaller strides reach), \
                 so no mutable view: write to a copy",
            ),
            Self::InvalidBool { found } => write!(
                f,
                "a bool element holds byte {found}, and a Rust bool is 0 or 1; view kDLBool data that may hold \
                 other bytes as dlspan::dtype::Bool"
            ),
            Self::LengthMismatch { expected, found } => {
                write!(f, "{found} elements given where the extents hold exactly {expected}")
            }
            Self::TooFewElements { required, found } => {
                write!(f, "{found} elements given where the mapping reaches {required}")
            }
            Self::ShapeMismatch { axis, expected, found } => {
                write!(f, "the views' extents differ on axis {axis}: {expected} here, {found} in the other view")
            }
            Self::KernelShapeMismatch { view, axis, expected, found } => write!(
                f,
                "view `{view}` has extent {found} on axis {axis} where the kernel's output has {expected}: written \
                 views take the output's shape, read views broadcast to it only from extent 1"
            ),
            Self::KernelBroadcastRefused { view, axis, expected } => write!(
                f,
                "view `{view}` has extent 1 on axis {axis} where the kernel's output has {expected}, and an exact \
                 run broadcasts no axis a view has: give it the output's extent, or run the kernel with `run`"
            ),
            Self::LanesNotGroupable { axis, stride, lanes } => write!(
                f,
                "axis {axis} has stride {stride}: the last axis's {lanes} values become one element only when \
                 they are adjacent (stride 1) and every other stride is a whole number of groups of {lanes}; \
                 copy the view into a compact one first"
            ),
            Self::UncheckedWrites => f.write_str(
                "a mutable view of a type that writes any byte (such as dtype::Bool) over memory of Rust bools, \
                 which must stay 0 or 1; view it mutably as bool, or read it through a shared view",
            ),
            Self::SubviewOutOfBounds { axis, start, end, extent } => {
                if start > end {
                    write!(f, "sub-view range {start}..{end} of axis {axis} is reversed")
                } else {
                    write!(f, "sub-view range {start}..{end} of axis {axis} exceeds its extent {extent}")
                }
            }
            Self::PaddedSubbyteExport => {
                f.write_str("padded sub-byte data needs a managed tensor with IS_SUBBYTE_TYPE_PADDED")
            }
            Self::UnsupportedVersion { version } => {
                write!(f, "managed tensor has DLPack version {}.{}, expected major 1", version.major, version.minor)
            }
            Self::NullManagedTensor => f.write_str("managed tensor pointer is null"),
            Self::ReadOnly => f.write_str("tensor is read-only"),
            Self::Aliased => f.write_str(
                "tensor memory is also reachable through its producer (an import from Python): no view of it; \
                 take it as a borrow-checked view argument (PyView, PyViewMut), or import a copy",
            ),
            Self::CopyRequired => f.write_str("the exchange needs a copy, and copying was forbidden"),
            Self::AllocationFailed { len, element_size, alignment } => {
                write!(f, "could not allocate {len} elements of {element_size} bytes aligned to {alignment} bytes")
            }
            Self::UnsupportedDtype { dtype } => {
                write!(f, "dtype {dtype} has no element type or storage layout in dlspan")
            }
            Self::DtypeNotAccepted { dtype, accepted } => {
                write!(f, "dtype {dtype} is not one this operation takes ({accepted})")
            }
            Self::UnsupportedRank { rank, max } => {
                write!(f, "rank {rank} is above {max}, the most axes this operation takes")
            }
            Self::NegativeNdim { ndim } => write!(f, "tensor has negative ndim {ndim}"),
            Self::PackedByteLength { required, found } => {
                write!(f, "{found} bytes given where the packed values take {required}")
            }
        }
    }
}

impl std::error::Error for DlpackError {}

/// The message of a caught panic (its payload's `&str` or `String`, else `otherwise`), the payload
/// dropped: one whose `Drop` panics in turn is leaked, so that nothing unwinds out of the frame that
/// caught it (a C boundary: an FFI handler, a PyTorch kernel, a Python entry point).
#[cfg(any(feature = "python", feature = "torch", feature = "jax"))]
pub(crate) fn panic_message(payload: Box<dyn core::any::Any + Send>, otherwise: &str) -> String {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| otherwise.to_owned());
    if let Err(inner) = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| drop(payload))) {
        core::mem::forget(inner);
    }
    message
}

#[cfg(test)]
mod tests;
