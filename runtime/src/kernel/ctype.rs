//! How kernels see an element type: its C++ type name in generated source (NVRTC's and the host
//! C++ compiler's), derived from the DLPack data type, size and alignment alone, so that every
//! [`DlElement`] has one (built-in types and `#[derive(DlElement)]` types alike), and which
//! arithmetic it supports.

use super::def::TypeInfo;
use crate::dtype::DlElement;
use crate::ffi::{DLDataType, DLDataTypeCode};
use core::fmt;
use core::mem::{align_of, size_of};

/// An element type as the kernel generator sees it: DLPack data type, size and alignment.
///
/// ```
/// use dlspan::kernel::ElementType;
/// use dlspan::dtype::{F32x4, Float8E4m3fn};
/// assert_eq!(ElementType::of::<f32>().c_name(), "float");
/// assert_eq!(ElementType::of::<dlspan::half::f16>().c_name(), "dl_f16");
/// assert_eq!(ElementType::of::<Float8E4m3fn>().c_name(), "dl_f8e4m3fn");
/// assert_eq!(ElementType::of::<F32x4>().c_name(), "dl_lanes<float, 4, 16>");
///
/// // A derived type gets its name from its data type, size and alignment.
/// #[derive(Clone, Copy, dlspan::DlElement)]
/// #[repr(C)]
/// struct Rgba { r: u8, g: u8, b: u8, a: u8 }
/// assert_eq!(ElementType::of::<Rgba>().c_name(), "dl_lanes<unsigned char, 4, 1>");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ElementType {
    /// The DLPack data type.
    pub dtype: DLDataType,
    /// `size_of` the Rust type, in bytes.
    pub size: usize,
    /// `align_of` the Rust type, in bytes.
    pub align: usize,
}

/// The scalar formats kernels compute with (casts between all of them; arithmetic on the
/// integers and the IEEE-like floats).
///
/// ```
/// use dlspan::kernel::{ElementType, ScalarType};
/// assert_eq!(ElementType::of::<i16>().scalar_type(), Some(ScalarType::Int { bits: 16, signed: true }));
/// assert_eq!(ElementType::of::<dlspan::dtype::F32x4>().scalar_type(), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarType {
    /// `kDLBool`, one byte, nonzero meaning `true` (any byte may arrive: `dl_bool` in generated
    /// source, read as `bits != 0` and written as 0 or 1, never as a C++ `bool`).
    Bool,
    /// A two's complement or unsigned integer of 8, 16, 32, 64 or 128 bits.
    Int {
        /// Width in bits.
        bits: u8,
        /// Whether it is signed.
        signed: bool,
    },
    /// IEEE binary16.
    F16,
    /// bfloat16.
    Bf16,
    /// IEEE binary32.
    F32,
    /// IEEE binary64.
    F64,
    /// FP8 e3m4 (IEEE-like, with infinities).
    F8E3m4,
    /// FP8 e4m3 (IEEE-like, with infinities).
    F8E4m3,
    /// FP8 e4m3b11fnuz (bias 11, finite, NaN = the sign bit alone).
    F8E4m3b11fnuz,
    /// FP8 e4m3fn (finite, NaN = all ones).
    F8E4m3fn,
    /// FP8 e4m3fnuz (bias 8, finite, NaN = the sign bit alone).
    F8E4m3fnuz,
    /// FP8 e5m2 (IEEE-like, with infinities).
    F8E5m2,
    /// FP8 e5m2fnuz (bias 16, finite, NaN = the sign bit alone).
    F8E5m2fnuz,
    /// FP8 e8m0fnu (an unsigned power of two, NaN = all ones, no zero).
    F8E8m0fnu,
}

impl ScalarType {
    /// The C++ name of the scalar in generated source.
    pub(crate) fn c_name(self) -> &'static str {
        match self {
            Self::Bool => "dl_bool",
            Self::Int { bits: 8, signed: true } => "signed char",
            Self::Int { bits: 16, signed: true } => "short",
            Self::Int { bits: 32, signed: true } => "int",
            Self::Int { bits: 64, signed: true } => "long long",
            Self::Int { bits: _, signed: true } => "__int128",
            Self::Int { bits: 8, signed: false } => "unsigned char",
            Self::Int { bits: 16, signed: false } => "unsigned short",
            Self::Int { bits: 32, signed: false } => "unsigned int",
            Self::Int { bits: 64, signed: false } => "unsigned long long",
            Self::Int { bits: _, signed: false } => "unsigned __int128",
            Self::F16 => "dl_f16",
            Self::Bf16 => "dl_bf16",
            Self::F32 => "float",
            Self::F64 => "double",
            Self::F8E3m4 => "dl_f8e3m4",
            Self::F8E4m3 => "dl_f8e4m3",
            Self::F8E4m3b11fnuz => "dl_f8e4m3b11fnuz",
            Self::F8E4m3fn => "dl_f8e4m3fn",
            Self::F8E4m3fnuz => "dl_f8e4m3fnuz",
            Self::F8E5m2 => "dl_f8e5m2",
            Self::F8E5m2fnuz => "dl_f8e5m2fnuz",
            Self::F8E8m0fnu => "dl_f8e8m0fnu",
        }
    }

    /// Whether `add`, `mul`, `scale` and `axpy` have kernels for it.
    pub fn is_arithmetic(self) -> bool {
        matches!(self, Self::Int { .. } | Self::F16 | Self::Bf16 | Self::F32 | Self::F64)
    }

    /// The scalar of a one-lane data type, if kernels compute with it.
    fn from_dtype(dtype: DLDataType) -> Option<Self> {
        let code = dtype.type_code();
        Some(match (code, dtype.bits) {
            (DLDataTypeCode::kDLBool, 8) => Self::Bool,
            (DLDataTypeCode::kDLInt, bits @ (8 | 16 | 32 | 64 | 128)) => Self::Int { bits, signed: true },
            (DLDataTypeCode::kDLUInt, bits @ (8 | 16 | 32 | 64 | 128)) => Self::Int { bits, signed: false },
            (DLDataTypeCode::kDLFloat, 16) => Self::F16,
            (DLDataTypeCode::kDLFloat, 32) => Self::F32,
            (DLDataTypeCode::kDLFloat, 64) => Self::F64,
            (DLDataTypeCode::kDLBfloat, 16) => Self::Bf16,
            (DLDataTypeCode::kDLFloat8_e3m4, 8) => Self::F8E3m4,
            (DLDataTypeCode::kDLFloat8_e4m3, 8) => Self::F8E4m3,
            (DLDataTypeCode::kDLFloat8_e4m3b11fnuz, 8) => Self::F8E4m3b11fnuz,
            (DLDataTypeCode::kDLFloat8_e4m3fn, 8) => Self::F8E4m3fn,
            (DLDataTypeCode::kDLFloat8_e4m3fnuz, 8) => Self::F8E4m3fnuz,
            (DLDataTypeCode::kDLFloat8_e5m2, 8) => Self::F8E5m2,
            (DLDataTypeCode::kDLFloat8_e5m2fnuz, 8) => Self::F8E5m2fnuz,
            (DLDataTypeCode::kDLFloat8_e8m0fnu, 8) => Self::F8E8m0fnu,
            _ => return None,
        })
    }
}

impl ElementType {
    /// The element type of `T`.
    ///
    /// ```
    /// let f64x2 = dlspan::kernel::ElementType::of::<dlspan::dtype::F64x2>();
    /// assert_eq!((f64x2.size, f64x2.align, f64x2.dtype.lanes), (16, 16, 2));
    /// ```
    pub const fn of<T: DlElement>() -> Self {
        Self { dtype: T::DTYPE, size: size_of::<T>(), align: align_of::<T>() }
    }

    /// The scalar kernels compute with, for one-lane types of a scalar format (`None` for vectors,
    /// complex numbers, the other minifloats and opaque types, which kernels only move).
    ///
    /// ```
    /// use dlspan::kernel::{ElementType, ScalarType};
    /// assert_eq!(ElementType::of::<dlspan::half::bf16>().scalar_type(), Some(ScalarType::Bf16));
    /// ```
    pub fn scalar_type(&self) -> Option<ScalarType> {
        let scalar = ScalarType::from_dtype(self.dtype)?;
        (self.dtype.lanes == 1 && self.size * 8 == usize::from(self.dtype.bits)).then_some(scalar)
    }

    /// The C++ type of this element in generated source: layout-identical to the Rust type (size
    /// and alignment), a CUDA builtin where one matches, otherwise a struct of the preamble
    /// (`dl_f16`, `dl_lanes<S, N, A>`, `dl_complex<S>`, `dl_bytes<N, A>`).
    ///
    /// ```
    /// use dlspan::kernel::ElementType;
    /// use dlspan::dtype::Float6E2m3fnX4;
    /// assert_eq!(ElementType::of::<Float6E2m3fnX4>().c_name(), "dl_bytes<3, 1>");
    /// assert_eq!(ElementType::of::<dlspan::num_complex::Complex<f64>>().c_name(), "dl_complex<double>");
    /// ```
    pub fn c_name(&self) -> String {
        if let Some(scalar) = self.scalar_type() {
            return scalar.c_name().to_owned();
        }
        let lanes = usize::from(self.dtype.lanes);
        let bits = usize::from(self.dtype.bits);
        match self.lane_scalar_type() {
            // Whole lanes of a scalar format, consecutive: a vector type.
            Some(lane) if lanes > 1 && bits % 8 == 0 && self.size == lanes * bits / 8 => {
                format!("dl_lanes<{}, {lanes}, {}>", lane.c_name(), self.align)
            }
            _ => {
                let complex_part = match (self.dtype.type_code(), self.dtype.bits, self.dtype.lanes) {
                    (DLDataTypeCode::kDLComplex, 32, 1) => Some("dl_f16"),
                    (DLDataTypeCode::kDLComplex, 64, 1) => Some("float"),
                    (DLDataTypeCode::kDLComplex, 128, 1) => Some("double"),
                    _ => None,
                };
                match complex_part {
                    Some(part) if self.size * 8 == bits => format!("dl_complex<{part}>"),
                    _ => format!("dl_bytes<{}, {}>", self.size, self.align),
                }
            }
        }
    }

    /// Whether kernels see this type as booleans (`dl_bool`, or lanes of it): copies write every
    /// byte as 0 or 1 (`dl_truth`), so that no `bool` output holds another byte, whatever the input
    /// held.
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub(crate) fn is_boolean(&self) -> bool {
        let name = self.c_name();
        name == "dl_bool" || name.starts_with("dl_lanes<dl_bool,")
    }

    /// The scalar format of one lane, whatever the lane count and storage.
    pub(crate) fn lane_scalar_type(&self) -> Option<ScalarType> {
        ScalarType::from_dtype(DLDataType { lanes: 1, ..self.dtype })
    }

    /// A C identifier naming this type in kernel names: the data type's name, with the size and
    /// alignment where they are not the data type's own.
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub(crate) fn ident(&self) -> String {
        let mut name: String =
            self.dtype.to_string().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
        let natural = usize::from(self.dtype.bits) * usize::from(self.dtype.lanes) / 8;
        if self.size != natural || (self.dtype.lanes > 1 && self.align != self.size) {
            name.push_str(&format!("_s{}a{}", self.size, self.align));
        }
        name
    }
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.dtype, f)
    }
}

impl From<TypeInfo> for ElementType {
    fn from(t: TypeInfo) -> Self {
        Self { dtype: t.dtype, size: t.size, align: t.align }
    }
}
