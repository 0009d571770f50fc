//! A `#[repr(C)]` mirror of `dlpack.h`, version 1.3, under the C names.
//!
//! This module holds declarations only: layouts, constants and function-pointer types, exactly as the
//! C header spells them. Everything that interprets them lives elsewhere in the crate.
//!
//! Codes that arrive from foreign code ([`DLDeviceType`], [`DLDataTypeCode`]) are integer newtypes with
//! associated constants, never Rust `enum`s: a producer may send a value this crate does not know, and
//! an unknown value in a Rust `enum` would be undefined behaviour. Every enumerator is available twice,
//! as an associated constant (`DLDeviceType::kDLCPU`) and, as in C, at module level (`ffi::kDLCPU`).
//!
//! The layouts are checked here at compile time against the sizes and offsets of the C header on
//! 64-bit targets, and the integration test `abi` compiles a C program against a real `dlpack.h` and
//! compares every size, offset and enumerator with this module.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]

use core::ffi::{c_char, c_int, c_void};
use core::fmt;

/// `DLPACK_MAJOR_VERSION`: the major version of DLPack this crate implements.
///
/// ```
/// use dlspan::ffi::{DLPACK_MAJOR_VERSION, DLPackVersion};
/// assert_eq!(DLPACK_MAJOR_VERSION, 1);
/// assert_eq!(DLPackVersion::CURRENT.major, DLPACK_MAJOR_VERSION);
/// ```
pub const DLPACK_MAJOR_VERSION: u32 = 1;
/// `DLPACK_MINOR_VERSION`: the minor version of DLPack this crate implements.
///
/// ```
/// use dlspan::ffi::{DLPACK_MINOR_VERSION, DLPackVersion};
/// assert_eq!(DLPACK_MINOR_VERSION, 3);
/// assert_eq!(DLPackVersion::CURRENT.minor, DLPACK_MINOR_VERSION);
/// ```
pub const DLPACK_MINOR_VERSION: u32 = 3;

/// `DLPACK_FLAG_BITMASK_READ_ONLY`: the tensor's data must not be written.
///
/// ```
/// use dlspan::{ManagedTensor, ffi::DLPACK_FLAG_BITMASK_READ_ONLY};
/// let shared = ManagedTensor::from_owner(std::sync::Arc::<[u8]>::from([1u8, 2]), [2])?;
/// assert_ne!(shared.flags() & DLPACK_FLAG_BITMASK_READ_ONLY, 0);
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub const DLPACK_FLAG_BITMASK_READ_ONLY: u64 = 1 << 0;
/// `DLPACK_FLAG_BITMASK_IS_COPIED`: the producer made a copy; the consumer owns it alone until the
/// deleter runs.
///
/// ```
/// use dlspan::{CopyMode, HostMdspan, ffi::DLPACK_FLAG_BITMASK_IS_COPIED};
/// let data = [1u8, 2];
/// let copy = HostMdspan::<u8, 1>::from_slice(&data, [2])?.to_managed_tensor(CopyMode::Always)?;
/// assert_ne!(copy.flags() & DLPACK_FLAG_BITMASK_IS_COPIED, 0);
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub const DLPACK_FLAG_BITMASK_IS_COPIED: u64 = 1 << 1;
/// `DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED`: a sub-byte type (FP4, FP6) is stored one lane per
/// byte instead of packed.
///
/// ```
/// use dlspan::{ManagedTensor, dtype::Float4E2m1fn, ffi::DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED};
/// let fp4 = ManagedTensor::from_owner(vec![Float4E2m1fn::from_bits(2); 4], [4])?; // one lane per byte
/// assert_ne!(fp4.flags() & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED, 0);
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub const DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED: u64 = 1 << 2;

/// `DLPackVersion`: the version of a managed tensor or of an exchange API table.
///
/// ```
/// use dlspan::ffi::{DLPackVersion, DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
/// let v = DLPackVersion::CURRENT;
/// assert_eq!((v.major, v.minor), (DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION));
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DLPackVersion {
    /// The major version: a change means the layout of `DLManagedTensorVersioned` changed.
    pub major: u32,
    /// The minor version: a change means new enumerators, with the same layout.
    pub minor: u32,
}

impl DLPackVersion {
    /// The version this crate implements (1.3).
    ///
    /// ```
    /// use dlspan::ffi::DLPackVersion;
    /// assert_eq!(DLPackVersion::CURRENT, DLPackVersion { major: 1, minor: 3 });
    /// ```
    pub const CURRENT: Self = Self { major: DLPACK_MAJOR_VERSION, minor: DLPACK_MINOR_VERSION };
}

/// Declares an integer newtype for a C enum with every enumerator as an associated constant, a
/// module-level constant of the same C name, a table of all enumerators, and a `Debug` that prints
/// the C name when the value is known.
macro_rules! c_enum {
    (
        $(#[$meta:meta])*
        $name:ident($repr:ty) {
            $( $(#[$vmeta:meta])* $variant:ident = $value:expr, )*
        }
    ) => {
        $(#[$meta])*
        #[repr(transparent)]
        #[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub $repr);

        impl $name {
            $( $(#[$vmeta])* pub const $variant: Self = Self($value); )*

            /// Every enumerator of the C header, as `(C name, value)`, in declaration order.
            ///
            /// ```
            #[doc = concat!("use dlspan::ffi::", stringify!($name), ";")]
            #[doc = concat!("for &(c_name, value) in ", stringify!($name), "::ALL {")]
            ///     assert_eq!(value.name(), Some(c_name));
            /// }
            /// ```
            pub const ALL: &'static [(&'static str, Self)] = &[ $( (stringify!($variant), Self::$variant), )* ];

            /// The C name of this value, or `None` for a value this version of the header does not
            /// declare.
            ///
            /// ```
            #[doc = concat!("use dlspan::ffi::", stringify!($name), ";")]
            #[doc = concat!("let (c_name, value) = ", stringify!($name), "::ALL[0];")]
            /// assert_eq!(value.name(), Some(c_name));
            #[doc = concat!("assert_eq!(", stringify!($name), "(", stringify!($repr), "::MAX).name(), None);")]
            /// ```
            pub const fn name(self) -> Option<&'static str> {
                let mut i = 0;
                while i < Self::ALL.len() {
                    if Self::ALL[i].1 .0 == self.0 {
                        return Some(Self::ALL[i].0);
                    }
                    i += 1;
                }
                None
            }
        }

        $( $(#[$vmeta])* pub const $variant: $name = $name::$variant; )*

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self.name() {
                    Some(name) => f.write_str(name),
                    None => write!(f, concat!(stringify!($name), "({})"), self.0),
                }
            }
        }
    };
}

c_enum! {
    /// `DLDeviceType`: the kind of memory a tensor's data lives in.
    ///
    /// ```
    /// use dlspan::ffi::{self, DLDeviceType};
    /// assert_eq!(DLDeviceType::kDLCUDA, ffi::kDLCUDA);
    /// assert_eq!(DLDeviceType::kDLCUDA.0, 2);
    /// assert_eq!(format!("{:?}", DLDeviceType(99)), "DLDeviceType(99)");
    /// ```
    DLDeviceType(i32) {
        /// `kDLCPU`: CPU memory.
        kDLCPU = 1,
        /// `kDLCUDA`: CUDA GPU memory.
        kDLCUDA = 2,
        /// `kDLCUDAHost`: pinned CUDA host memory (`cudaMallocHost`).
        kDLCUDAHost = 3,
        /// `kDLOpenCL`: OpenCL buffers.
        kDLOpenCL = 4,
        /// `kDLVulkan`: Vulkan buffers.
        kDLVulkan = 7,
        /// `kDLMetal`: Metal buffers for Apple GPUs.
        kDLMetal = 8,
        /// `kDLVPI`: Verilog simulator buffers.
        kDLVPI = 9,
        /// `kDLROCM`: ROCm GPU memory.
        kDLROCM = 10,
        /// `kDLROCMHost`: pinned ROCm host memory (`hipMallocHost`).
        kDLROCMHost = 11,
        /// `kDLExtDev`: reserved extension device type.
        kDLExtDev = 12,
        /// `kDLCUDAManaged`: CUDA managed (unified) memory (`cudaMallocManaged`).
        kDLCUDAManaged = 13,
        /// `kDLOneAPI`: oneAPI unified shared memory.
        kDLOneAPI = 14,
        /// `kDLWebGPU`: WebGPU buffers.
        kDLWebGPU = 15,
        /// `kDLHexagon`: Qualcomm Hexagon DSP memory.
        kDLHexagon = 16,
        /// `kDLMAIA`: Microsoft MAIA device memory.
        kDLMAIA = 17,
        /// `kDLTrn`: AWS Trainium device memory.
        kDLTrn = 18,
    }
}

c_enum! {
    /// `DLDataTypeCode`: the base kind of a [`DLDataType`].
    ///
    /// C declares it as an `enum`, but it is only ever stored in [`DLDataType::code`], which is a
    /// `uint8_t`; this newtype therefore wraps a `u8`.
    ///
    /// ```
    /// use dlspan::ffi::DLDataTypeCode;
    /// assert_eq!(DLDataTypeCode::kDLFloat4_e2m1fn.0, 17);
    /// assert_eq!(DLDataTypeCode(2).name(), Some("kDLFloat"));
    /// ```
    DLDataTypeCode(u8) {
        /// `kDLInt`: signed integer.
        kDLInt = 0,
        /// `kDLUInt`: unsigned integer.
        kDLUInt = 1,
        /// `kDLFloat`: IEEE floating point.
        kDLFloat = 2,
        /// `kDLOpaqueHandle`: opaque handle, reserved for testing.
        kDLOpaqueHandle = 3,
        /// `kDLBfloat`: bfloat16.
        kDLBfloat = 4,
        /// `kDLComplex`: complex number, a compact `(re, im)` pair; `bits` counts the whole pair.
        kDLComplex = 5,
        /// `kDLBool`: boolean, stored in 8 bits.
        kDLBool = 6,
        /// `kDLFloat8_e3m4`: FP8 with 3 exponent and 4 mantissa bits.
        kDLFloat8_e3m4 = 7,
        /// `kDLFloat8_e4m3`: FP8 with 4 exponent and 3 mantissa bits (IEEE-like, with infinities).
        kDLFloat8_e4m3 = 8,
        /// `kDLFloat8_e4m3b11fnuz`: FP8 e4m3 with exponent bias 11, finite, no negative zero.
        kDLFloat8_e4m3b11fnuz = 9,
        /// `kDLFloat8_e4m3fn`: FP8 e4m3, finite (no infinities), the common OCP/CUDA `e4m3`.
        kDLFloat8_e4m3fn = 10,
        /// `kDLFloat8_e4m3fnuz`: FP8 e4m3, finite, no negative zero.
        kDLFloat8_e4m3fnuz = 11,
        /// `kDLFloat8_e5m2`: FP8 with 5 exponent and 2 mantissa bits (IEEE-like).
        kDLFloat8_e5m2 = 12,
        /// `kDLFloat8_e5m2fnuz`: FP8 e5m2, finite, no negative zero.
        kDLFloat8_e5m2fnuz = 13,
        /// `kDLFloat8_e8m0fnu`: FP8 exponent-only scale format (MX block scales), unsigned.
        kDLFloat8_e8m0fnu = 14,
        /// `kDLFloat6_e2m3fn`: FP6 with 2 exponent and 3 mantissa bits; `bits` must be 6.
        kDLFloat6_e2m3fn = 15,
        /// `kDLFloat6_e3m2fn`: FP6 with 3 exponent and 2 mantissa bits; `bits` must be 6.
        kDLFloat6_e3m2fn = 16,
        /// `kDLFloat4_e2m1fn`: FP4 with 2 exponent bits and 1 mantissa bit; `bits` must be 4.
        kDLFloat4_e2m1fn = 17,
    }
}

/// `DLDevice`: a device type and the index of the device.
///
/// ```
/// use dlspan::ffi::{DLDevice, DLDeviceType};
/// let d = DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: 1 };
/// assert_eq!(d.device_id, 1);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DLDevice {
    /// The kind of memory.
    pub device_type: DLDeviceType,
    /// The device index; 0 for CPU, pinned and managed memory.
    pub device_id: i32,
}

/// `DLDataType`: the element type of a tensor, as `(code, bits, lanes)`.
///
/// ```
/// use dlspan::ffi::{DLDataType, DLDataTypeCode};
/// let float4 = DLDataType::new(DLDataTypeCode::kDLFloat, 32, 4);
/// assert_eq!((float4.code, float4.bits, float4.lanes), (2, 32, 4));
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DLDataType {
    /// The type code, one of [`DLDataTypeCode`]'s values, stored as `uint8_t`.
    pub code: u8,
    /// Bits of one lane (for complex numbers: of the whole pair).
    pub bits: u8,
    /// Number of lanes of a vector type; 1 for scalars.
    pub lanes: u16,
}

impl DLDataType {
    /// Builds a data type from its parts.
    ///
    /// ```
    /// use dlspan::ffi::{DLDataType, DLDataTypeCode};
    /// let bf16 = DLDataType::new(DLDataTypeCode::kDLBfloat, 16, 1);
    /// assert_eq!(bf16, DLDataType { code: 4, bits: 16, lanes: 1 });
    /// ```
    pub const fn new(code: DLDataTypeCode, bits: u8, lanes: u16) -> Self {
        Self { code: code.0, bits, lanes }
    }

    /// The type code as a [`DLDataTypeCode`].
    ///
    /// ```
    /// use dlspan::ffi::{DLDataType, DLDataTypeCode};
    /// assert_eq!(DLDataType { code: 4, bits: 16, lanes: 1 }.type_code(), DLDataTypeCode::kDLBfloat);
    /// ```
    pub const fn type_code(self) -> DLDataTypeCode {
        DLDataTypeCode(self.code)
    }
}

/// `DLTensor`: a plain C tensor that does not manage its memory.
///
/// `Default` gives the C zero-initialised value (`DLTensor tensor{}`): null pointers, device type 0.
///
/// ```
/// use dlspan::ffi::{DLTensor, DLDevice, DLDeviceType, DLDataType, DLDataTypeCode};
/// let mut data = [0i32, 1, 2, 3, 4, 5];
/// let mut shape = [2i64, 3];
/// let mut strides = [3i64, 1];
/// let tensor = DLTensor {
///     data: data.as_mut_ptr().cast(),
///     device: DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
///     ndim: 2,
///     dtype: DLDataType::new(DLDataTypeCode::kDLInt, 32, 1),
///     shape: shape.as_mut_ptr(),
///     strides: strides.as_mut_ptr(),
///     byte_offset: 0,
/// };
/// assert_eq!(tensor.ndim, 2);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DLTensor {
    /// Pointer to the allocation (a device pointer for device memory); null when the tensor has no
    /// elements.
    pub data: *mut c_void,
    /// Where the data lives.
    pub device: DLDevice,
    /// Number of dimensions.
    pub ndim: i32,
    /// Element type.
    pub dtype: DLDataType,
    /// `ndim` extents; may be null when `ndim == 0`.
    pub shape: *mut i64,
    /// `ndim` strides in elements; may be null when `ndim == 0`. Before DLPack 1.2, null meant
    /// compact row-major.
    pub strides: *mut i64,
    /// Offset in bytes from `data` to the first element.
    pub byte_offset: u64,
}

impl Default for DLTensor {
    fn default() -> Self {
        Self {
            data: core::ptr::null_mut(),
            device: DLDevice::default(),
            ndim: 0,
            dtype: DLDataType::default(),
            shape: core::ptr::null_mut(),
            strides: core::ptr::null_mut(),
            byte_offset: 0,
        }
    }
}

/// `DLManagedTensor`: the legacy (pre-1.0, unversioned) managed tensor.
///
/// ```
/// use dlspan::ffi::{DLManagedTensor, DLTensor};
/// let m = DLManagedTensor { dl_tensor: DLTensor::default(), manager_ctx: core::ptr::null_mut(), deleter: None };
/// assert!(m.deleter.is_none());
/// ```
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensor {
    /// The tensor being managed.
    pub dl_tensor: DLTensor,
    /// The producer's context; may be null.
    pub manager_ctx: *mut c_void,
    /// Releases `manager_ctx` and the struct itself; may be null.
    pub deleter: Option<unsafe extern "C" fn(self_: *mut DLManagedTensor)>,
}

/// `DLManagedTensorVersioned`: the versioned managed tensor of DLPack ≥ 1.0.
///
/// Only `version`, `manager_ctx` and `deleter` keep their place across major versions; a consumer
/// that finds another major version must call the deleter and read nothing else.
///
/// ```
/// use dlspan::ffi::{DLManagedTensorVersioned, DLPackVersion, DLTensor};
/// let m = DLManagedTensorVersioned {
///     version: DLPackVersion::CURRENT,
///     manager_ctx: core::ptr::null_mut(),
///     deleter: None,
///     flags: 0,
///     dl_tensor: DLTensor::default(),
/// };
/// assert_eq!(m.version.major, 1);
/// ```
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensorVersioned {
    /// The DLPack version the producer wrote.
    pub version: DLPackVersion,
    /// The producer's context; may be null.
    pub manager_ctx: *mut c_void,
    /// Releases `manager_ctx` and the struct itself; may be null.
    pub deleter: Option<unsafe extern "C" fn(self_: *mut DLManagedTensorVersioned)>,
    /// Bit flags: [`DLPACK_FLAG_BITMASK_READ_ONLY`], [`DLPACK_FLAG_BITMASK_IS_COPIED`],
    /// [`DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED`].
    pub flags: u64,
    /// The tensor being managed.
    pub dl_tensor: DLTensor,
}

/// `SetError` callback of [`DLPackManagedTensorAllocator`]: reports an error of a given kind.
///
/// ```
/// use core::ffi::{c_char, c_void};
/// use dlspan::ffi::DLPackSetError;
/// unsafe extern "C" fn set_error(_error_ctx: *mut c_void, _kind: *const c_char, _message: *const c_char) {}
/// let callback: DLPackSetError = Some(set_error);
/// let absent: DLPackSetError = None;
/// assert!(callback.is_some() && absent.is_none());
/// ```
pub type DLPackSetError =
    Option<unsafe extern "C" fn(error_ctx: *mut c_void, kind: *const c_char, message: *const c_char)>;

/// `DLPackManagedTensorAllocator`: asks a producer to allocate a tensor like `prototype` (only its
/// dtype, ndim, shape and device are read). Returns 0 on success; on failure calls `SetError`.
///
/// ```
/// use core::ffi::{c_int, c_void};
/// use dlspan::ffi::{DLManagedTensorVersioned, DLPackManagedTensorAllocator, DLPackSetError, DLTensor};
/// unsafe extern "C" fn allocate(
///     _prototype: *mut DLTensor,
///     _out: *mut *mut DLManagedTensorVersioned,
///     _error_ctx: *mut c_void,
///     _set_error: DLPackSetError,
/// ) -> c_int {
///     -1 // this producer cannot allocate
/// }
/// let allocator: DLPackManagedTensorAllocator = Some(allocate);
/// assert!(allocator.is_some() && DLPackManagedTensorAllocator::None.is_none());
/// ```
pub type DLPackManagedTensorAllocator = Option<
    unsafe extern "C" fn(
        prototype: *mut DLTensor,
        out: *mut *mut DLManagedTensorVersioned,
        error_ctx: *mut c_void,
        SetError: DLPackSetError,
    ) -> c_int,
>;

/// `DLPackManagedTensorFromPyObjectNoSync`: exports a Python tensor object of the producer's type
/// as an owning `DLManagedTensorVersioned`, without stream synchronisation.
///
/// ```
/// use core::ffi::{c_int, c_void};
/// use dlspan::ffi::{DLManagedTensorVersioned, DLPackManagedTensorFromPyObjectNoSync};
/// unsafe extern "C" fn export(_py_object: *mut c_void, _out: *mut *mut DLManagedTensorVersioned) -> c_int {
///     -1
/// }
/// let from_py: DLPackManagedTensorFromPyObjectNoSync = Some(export);
/// assert!(from_py.is_some() && DLPackManagedTensorFromPyObjectNoSync::None.is_none());
/// ```
pub type DLPackManagedTensorFromPyObjectNoSync =
    Option<unsafe extern "C" fn(py_object: *mut c_void, out: *mut *mut DLManagedTensorVersioned) -> c_int>;

/// `DLPackDLTensorFromPyObjectNoSync`: fills a caller-provided `DLTensor` describing a Python tensor
/// object, non-owning, valid until control returns to Python.
///
/// ```
/// use core::ffi::{c_int, c_void};
/// use dlspan::ffi::{DLPackDLTensorFromPyObjectNoSync, DLTensor};
/// unsafe extern "C" fn describe(_py_object: *mut c_void, _out: *mut DLTensor) -> c_int {
///     -1
/// }
/// let from_py: DLPackDLTensorFromPyObjectNoSync = Some(describe);
/// assert!(from_py.is_some() && DLPackDLTensorFromPyObjectNoSync::None.is_none());
/// ```
pub type DLPackDLTensorFromPyObjectNoSync =
    Option<unsafe extern "C" fn(py_object: *mut c_void, out: *mut DLTensor) -> c_int>;

/// `DLPackCurrentWorkStream`: the producer's current work stream for a device (null on CPU).
///
/// ```
/// use core::ffi::{c_int, c_void};
/// use dlspan::ffi::{DLDeviceType, DLPackCurrentWorkStream};
/// unsafe extern "C" fn cpu_stream(_device_type: DLDeviceType, _device_id: i32, out: *mut *mut c_void) -> c_int {
///     // SAFETY: the caller passes a writable `void*` slot.
///     unsafe { *out = core::ptr::null_mut() };
///     0
/// }
/// let stream_of: DLPackCurrentWorkStream = Some(cpu_stream);
/// assert!(stream_of.is_some() && DLPackCurrentWorkStream::None.is_none());
/// ```
pub type DLPackCurrentWorkStream = Option<
    unsafe extern "C" fn(device_type: DLDeviceType, device_id: i32, out_current_stream: *mut *mut c_void) -> c_int,
>;

/// `DLPackManagedTensorToPyObjectNoSync`: turns an owning `DLManagedTensorVersioned` into a Python
/// tensor object of the producer's type (ownership is taken).
///
/// ```
/// use core::ffi::{c_int, c_void};
/// use dlspan::ffi::{DLManagedTensorVersioned, DLPackManagedTensorToPyObjectNoSync};
/// unsafe extern "C" fn import(_tensor: *mut DLManagedTensorVersioned, _out_py_object: *mut *mut c_void) -> c_int {
///     -1
/// }
/// let to_py: DLPackManagedTensorToPyObjectNoSync = Some(import);
/// assert!(to_py.is_some() && DLPackManagedTensorToPyObjectNoSync::None.is_none());
/// ```
pub type DLPackManagedTensorToPyObjectNoSync =
    Option<unsafe extern "C" fn(tensor: *mut DLManagedTensorVersioned, out_py_object: *mut *mut c_void) -> c_int>;

/// `DLPackExchangeAPIHeader`: the stable head of a [`DLPackExchangeAPI`] table.
///
/// ```
/// use dlspan::ffi::{DLPackExchangeAPIHeader, DLPackVersion};
/// let h = DLPackExchangeAPIHeader { version: DLPackVersion::CURRENT, prev_api: core::ptr::null_mut() };
/// assert!(h.prev_api.is_null());
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DLPackExchangeAPIHeader {
    /// The DLPack version of the table; a consumer checks the major version first.
    pub version: DLPackVersion,
    /// An older table in the chain, or null.
    pub prev_api: *mut DLPackExchangeAPIHeader,
}

/// `DLPackExchangeAPI`: the fast C exchange table a producer type exposes as the capsule
/// `"dlpack_exchange_api"` under `__dlpack_c_exchange_api__` (DLPack 1.3).
///
/// ```
/// use dlspan::ffi::{DLPackExchangeAPI, DLPackExchangeAPIHeader, DLPackVersion};
/// let api = DLPackExchangeAPI {
///     header: DLPackExchangeAPIHeader { version: DLPackVersion::CURRENT, prev_api: core::ptr::null_mut() },
///     managed_tensor_allocator: None,
///     managed_tensor_from_py_object_no_sync: None,
///     managed_tensor_to_py_object_no_sync: None,
///     dltensor_from_py_object_no_sync: None,
///     current_work_stream: None,
/// };
/// assert!(api.dltensor_from_py_object_no_sync.is_none());
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DLPackExchangeAPI {
    /// The stable header.
    pub header: DLPackExchangeAPIHeader,
    /// Allocates a new producer tensor (must not be null).
    pub managed_tensor_allocator: DLPackManagedTensorAllocator,
    /// Exports a Python object as a managed tensor (must not be null).
    pub managed_tensor_from_py_object_no_sync: DLPackManagedTensorFromPyObjectNoSync,
    /// Imports a managed tensor as a Python object (must not be null).
    pub managed_tensor_to_py_object_no_sync: DLPackManagedTensorToPyObjectNoSync,
    /// Fills a stack `DLTensor` from a Python object; may be null.
    pub dltensor_from_py_object_no_sync: DLPackDLTensorFromPyObjectNoSync,
    /// Queries the current work stream (must not be null).
    pub current_work_stream: DLPackCurrentWorkStream,
}

// Layouts of the C header on 64-bit targets (dlpack.h 1.3). The `abi` integration test compares the
// same numbers with what gcc computes from a real dlpack.h.
#[cfg(target_pointer_width = "64")]
mod layout_asserts {
    use super::*;
    use core::mem::{align_of, offset_of, size_of};
    use static_assertions::const_assert_eq;

    const_assert_eq!(size_of::<DLPackVersion>(), 8);
    const_assert_eq!(offset_of!(DLPackVersion, minor), 4);
    const_assert_eq!(size_of::<DLDeviceType>(), 4);
    const_assert_eq!(size_of::<DLDevice>(), 8);
    const_assert_eq!(offset_of!(DLDevice, device_id), 4);
    const_assert_eq!(size_of::<DLDataType>(), 4);
    const_assert_eq!(offset_of!(DLDataType, bits), 1);
    const_assert_eq!(offset_of!(DLDataType, lanes), 2);
    const_assert_eq!(size_of::<DLTensor>(), 48);
    const_assert_eq!(align_of::<DLTensor>(), 8);
    const_assert_eq!(offset_of!(DLTensor, data), 0);
    const_assert_eq!(offset_of!(DLTensor, device), 8);
    const_assert_eq!(offset_of!(DLTensor, ndim), 16);
    const_assert_eq!(offset_of!(DLTensor, dtype), 20);
    const_assert_eq!(offset_of!(DLTensor, shape), 24);
    const_assert_eq!(offset_of!(DLTensor, strides), 32);
    const_assert_eq!(offset_of!(DLTensor, byte_offset), 40);
    const_assert_eq!(size_of::<DLManagedTensor>(), 64);
    const_assert_eq!(offset_of!(DLManagedTensor, dl_tensor), 0);
    const_assert_eq!(offset_of!(DLManagedTensor, manager_ctx), 48);
    const_assert_eq!(offset_of!(DLManagedTensor, deleter), 56);
    const_assert_eq!(size_of::<DLManagedTensorVersioned>(), 80);
    const_assert_eq!(offset_of!(DLManagedTensorVersioned, version), 0);
    const_assert_eq!(offset_of!(DLManagedTensorVersioned, manager_ctx), 8);
    const_assert_eq!(offset_of!(DLManagedTensorVersioned, deleter), 16);
    const_assert_eq!(offset_of!(DLManagedTensorVersioned, flags), 24);
    const_assert_eq!(offset_of!(DLManagedTensorVersioned, dl_tensor), 32);
    const_assert_eq!(size_of::<DLPackExchangeAPIHeader>(), 16);
    const_assert_eq!(offset_of!(DLPackExchangeAPIHeader, prev_api), 8);
    const_assert_eq!(size_of::<DLPackExchangeAPI>(), 56);
    const_assert_eq!(offset_of!(DLPackExchangeAPI, managed_tensor_allocator), 16);
    const_assert_eq!(offset_of!(DLPackExchangeAPI, managed_tensor_from_py_object_no_sync), 24);
    const_assert_eq!(offset_of!(DLPackExchangeAPI, managed_tensor_to_py_object_no_sync), 32);
    const_assert_eq!(offset_of!(DLPackExchangeAPI, dltensor_from_py_object_no_sync), 40);
    const_assert_eq!(offset_of!(DLPackExchangeAPI, current_work_stream), 48);
    // Nullable function pointers are pointer-sized (the niche of `Option<fn>` is null).
    const_assert_eq!(size_of::<DLPackCurrentWorkStream>(), 8);
}
