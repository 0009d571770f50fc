//! The messages of [`DlpackError`]s raised to Python: arrays, arguments, devices as Python names
//! them (`cuda:0`) and what to do, where the `Display` texts speak of views, layouts and Rust types
//! (rule Y13).

use crate::error::{DlpackError, LayoutKind};
use crate::ffi::{DLDevice, DLDeviceType};

/// A device as Python prints it: `cpu`, `cuda:0`.
pub(crate) fn device_name(device: DLDevice) -> String {
    let kind = match device.device_type {
        DLDeviceType::kDLCPU if device.device_id == 0 => return "cpu".into(),
        DLDeviceType::kDLCPU => "cpu",
        DLDeviceType::kDLCUDA => "cuda",
        DLDeviceType::kDLCUDAHost => "cuda_host",
        DLDeviceType::kDLCUDAManaged => "cuda_managed",
        DLDeviceType::kDLROCM => "rocm",
        DLDeviceType::kDLROCMHost => "rocm_host",
        DLDeviceType::kDLMetal => "metal",
        DLDeviceType::kDLVulkan => "vulkan",
        DLDeviceType::kDLOpenCL => "opencl",
        DLDeviceType::kDLOneAPI => "oneapi",
        DLDeviceType::kDLVPI => "vpi",
        DLDeviceType::kDLExtDev => "ext_dev",
        DLDeviceType::kDLWebGPU => "webgpu",
        DLDeviceType::kDLHexagon => "hexagon",
        DLDeviceType::kDLMAIA => "maia",
        DLDeviceType::kDLTrn => "trn",
        other => return format!("device type {}:{}", other.0, device.device_id),
    };
    format!("{kind}:{}", device.device_id)
}

/// A device type as Python names it (`cpu`, `cuda`).
fn device_type_name(device_type: DLDeviceType) -> String {
    let name = device_name(DLDevice { device_type, device_id: 0 });
    name.strip_suffix(":0").map_or(name.clone(), str::to_owned)
}

/// What a malformed DLPack tensor's message ends with: the producer's fault, not the caller's.
const MALFORMED: &str = "(a malformed DLPack tensor from its producer)";

/// The message of `err` for a Python caller: arrays, arguments and what to do, where the
/// `Display` text speaks of views, layouts and Rust types.
pub(super) fn python_message(err: &DlpackError) -> String {
    use DlpackError as E;
    match *err {
        E::DeviceMismatch { expected, found } => {
            let expected = if expected == DLDeviceType::kDLCPU {
                "a CPU array (or pinned host memory)".to_owned()
            } else {
                format!("an array on {}", device_type_name(expected))
            };
            format!("expected {expected}, got one on {}", device_name(found))
        }
        E::NegativeDeviceId { device } => {
            format!(
                "device id {} of {} is negative {MALFORMED}",
                device.device_id,
                device_type_name(device.device_type)
            )
        }
        E::RankMismatch { expected, found } if found < 0 => {
            format!("expected a {expected}-d array, got a tensor of negative ndim {found}")
        }
        E::RankMismatch { expected, found } => format!("expected a {expected}-d array, got {found}-d"),
        E::DtypeMismatch { expected, found } => format!("expected a {expected} array, got {found}"),
        E::SubbytePacking { element_padded, tensor_padded } => format!(
            "expected {} sub-byte data, got {}",
            if element_padded { "padded (one value per byte)" } else { "packed" },
            if tensor_padded { "padded data (one value per byte)" } else { "packed data" }
        ),
        E::NullData => format!("the array has elements but its data pointer is null {MALFORMED}"),
        E::ByteOffsetOverflow { byte_offset } => {
            format!("the array's data pointer plus byte_offset {byte_offset} overflows the address space {MALFORMED}")
        }
        E::ByteOffsetNotElementMultiple { byte_offset, element_size } => format!(
            "the array starts {byte_offset} bytes into its buffer, which is not a whole number of its \
             {element_size}-byte elements; pass a copy"
        ),
        E::Misaligned { address, alignment } => format!(
            "the array's data at {address:#x} is not aligned to its {alignment}-byte elements; pass a copy \
             (x.copy() in NumPy, x.clone() in PyTorch allocate aligned memory; np.ascontiguousarray returns \
             a contiguous array as it is)"
        ),
        E::Underaligned { address, required, found } => format!(
            "this argument needs data aligned to {required} bytes, and the array's first element at {address:#x} \
             is aligned to {found}; pass an aligned copy"
        ),
        E::NullShape => format!("the array has dimensions but no shape {MALFORMED}"),
        E::NegativeExtent { axis, extent } => format!("extent {extent} of axis {axis} is negative"),
        E::ExtentMismatch { axis, expected, found } => {
            format!("expected {expected} elements along axis {axis}, got {found}")
        }
        E::NullStrides { version } => {
            format!("the array has no strides, which DLPack {}.{} requires {MALFORMED}", version.major, version.minor)
        }
        E::StridesIncompatible { layout, axis, expected, found, .. } => {
            let (wanted, fix) = match layout {
                LayoutKind::Left => (
                    "an F-contiguous (column-major) array",
                    "np.array(x, order='F'), or for a PyTorch matrix x.mT.clone(memory_format=torch.contiguous_format).mT",
                ),
                _ => (
                    "a C-contiguous (row-major) array",
                    "x.copy() in NumPy, or x.clone(memory_format=torch.contiguous_format)",
                ),
            };
            format!(
                "expected {wanted}, got stride {found} on axis {axis} where {expected} is needed (in elements, \
                 axes of extent 1 included); pass a copy: {fix} (np.ascontiguousarray, np.asfortranarray and \
                 PyTorch's contiguous() return an array as it is when only axes of extent 1 have other strides)"
            )
        }
        E::NonPositiveStride { axis, stride } => format!(
            "expected positive strides, got {stride} on axis {axis} (a reversed or broadcast array); pass a copy"
        ),
        E::SpanOverflow => "the array's shape and strides reach beyond the address space".to_owned(),
        E::NegativeReach { lowest } => {
            format!("the array's strides reach {} elements before its data pointer {MALFORMED}", lowest.unsigned_abs())
        }
        E::OverlappingStrides => "cannot write to an array whose elements may share memory (a broadcast array, \
                                  or strides that repeat or interleave elements in a way dlspan cannot tell \
                                  apart); pass a copy"
            .to_owned(),
        E::InvalidBool { found } => format!("a bool array holds the byte {found}, where a bool is 0 or 1"),
        E::LengthMismatch { expected, found } => {
            format!("{found} elements given where the shape holds {expected}")
        }
        E::TooFewElements { required, found } => {
            format!("{found} elements given where the shape and strides reach {required}")
        }
        E::ShapeMismatch { axis, expected, found } => format!(
            "extent {found} on axis {axis} does not match the extent {expected} of the array it is combined with"
        ),
        E::KernelShapeMismatch { view, axis, expected, found } => format!(
            "'{view}' has extent {found} on axis {axis} where the kernel's output has {expected}: written arrays \
             take the output's shape, read arrays broadcast to it only from extent 1"
        ),
        E::KernelBroadcastRefused { view, axis, expected } => format!(
            "'{view}' has extent 1 on axis {axis} where the kernel's output has {expected}, and this operation \
             broadcasts no axis an array has: pass an array of the output's extent"
        ),
        E::LanesNotGroupable { axis, stride, lanes } => format!(
            "stride {stride} on axis {axis}: the last axis's {lanes} values become one element only when they \
             are adjacent and every other stride is a multiple of {lanes}; pass a copy"
        ),
        E::UncheckedWrites => "a writable view of a type that writes any byte over bool memory, whose bytes \
                               must stay 0 or 1"
            .to_owned(),
        E::SubviewOutOfBounds { axis, start, end, extent } => {
            if start > end {
                format!("index range {start}:{end} of axis {axis} is reversed")
            } else {
                format!("index range {start}:{end} of axis {axis} is out of bounds for its extent {extent}")
            }
        }
        E::PaddedSubbyteExport => {
            "padded sub-byte data has no legacy DLPack capsule (which means packed data)".to_owned()
        }
        E::UnsupportedVersion { version } => format!(
            "the DLPack capsule has version {}.{}, and dlspan reads major version 1",
            version.major, version.minor
        ),
        E::NullManagedTensor => "the DLPack capsule holds a null pointer".to_owned(),
        E::ReadOnly => "cannot write to a read-only array (a non-writeable NumPy array, a JAX array, or a \
                        read-only DLPack export); pass a writable copy"
            .to_owned(),
        E::Aliased => "the tensor's memory is also reachable through the object it was imported from, so it \
                       gives no view; pass that object itself, or import a copy (copy=True)"
            .to_owned(),
        E::CopyRequired => "copy=False, but the exchange needs a copy".to_owned(),
        E::AllocationFailed { len, element_size, .. } => {
            format!("could not allocate {len} elements of {element_size} bytes")
        }
        E::UnsupportedDtype { dtype } => format!("dlspan has no element type for the dtype {dtype}"),
        E::DtypeNotAccepted { dtype, accepted } => format!("this operation takes arrays of {accepted}, not {dtype}"),
        E::UnsupportedRank { rank, max } => {
            format!("a {rank}-d array has more axes than this operation takes (at most {max})")
        }
        E::NegativeNdim { ndim } => format!("the array has a negative number of dimensions ({ndim}) {MALFORMED}"),
        E::PackedByteLength { required, found } => {
            format!("{found} bytes given where the packed values take {required}")
        }
    }
}
