//! Element types: the [`DlElement`] trait that maps a Rust type to its DLPack [`DLDataType`]
//! (compared exactly on import: [rule I4](crate::rules#i4)), the built-in mappings, storage types
//! for the FP8/FP6/FP4 formats with their decoders and encoders, CUDA-compatible vector types;
//! [`Numeric`] arithmetic and the element [`cast`] for generic code, and the [`dispatch`] from a
//! runtime dtype to that generic code.
//!
//! ```
//! use dlspan::dtype::{dtype_of, DlElement};
//! use dlspan::half::bf16;
//! assert_eq!(dtype_of::<bf16>().to_string(), "bfloat16");
//! assert_eq!(<dlspan::num_complex::Complex<f32> as DlElement>::DTYPE.bits, 64);
//! ```
//!
//! # FP8, FP6 and FP4 encoding
//!
//! `from_f32` and `from_f64` round to nearest, ties to even, once (an `f32` is encoded through its
//! exact `f64` value), and agree bit for bit with ml_dtypes' conversions for every input, NaN
//! included, but for the documented NaN choice of FP6 and FP4 (the test suite compares every code
//! and over a million inputs per format; for `f64` inputs the reference is ml_dtypes' scalar
//! constructor, which rounds once, unlike NumPy's `astype` from float64, which rounds through
//! float32). What a format cannot hold:
//!
//! | format | too large (`from_f32`) | `from_f32_saturating` | NaN in | notes |
//! |---|---|---|---|---|
//! | `e3m4`, `e4m3`, `e5m2` (IEEE-like) | ±infinity | ±largest finite | quiet NaN, sign kept | infinity in: infinity |
//! | `e4m3fn` | NaN (`0x7F`, sign kept) | ±largest finite (448) | NaN, sign kept | no infinity: infinity in is NaN |
//! | `e4m3fnuz`, `e5m2fnuz`, `e4m3b11fnuz` | NaN (`0x80`) | ±largest finite | `0x80` | no negative zero: `-0.0` and tiny negatives give `+0` |
//! | `e8m0fnu` | NaN (`0xFF`) | 2^127 | `0xFF` | no sign, no zero: zero and negatives are NaN; ties round up, as ml_dtypes |
//! | `e2m3fn`, `e3m2fn` (FP6), `e2m1fn` (FP4) | ±largest finite | the same | **largest positive value** | no infinity, no NaN |
//!
//! "Too large" means the value *rounds* beyond the largest finite value: `e4m3fn` turns 464
//! (halfway between 448 and 480, where the NaN pattern sits) into 448 and anything above into NaN.
//! `e8m0fnu` (powers of two) rounds a tie `1.5·2^k` up, and below its smallest value 2^-127 follows
//! ml_dtypes: inputs up to 2^-127 give 2^-127, inputs between 2^-127 and 2^-126 give 2^-126.
//! The saturating forms are CUDA's `__NV_SATFINITE`; they differ from the default only for
//! infinities and values that round beyond the largest finite value. FP6 and FP4 have no NaN:
//! dlspan maps NaN to the largest positive value, as CUDA's `__nv_cvt_float_to_fp6` /
//! `__nv_cvt_float_to_fp4` do (ml_dtypes returns a zero there, with the sign inverted).
//!
//! ```
//! use dlspan::dtype::{Float8E4m3fn, Float8E5m2, Float4E2m1fn};
//! assert_eq!(Float8E4m3fn::from_f32(0.3).to_f32(), 0.3125);
//! assert!(Float8E4m3fn::from_f32(1000.0).is_nan());
//! assert_eq!(Float8E4m3fn::from_f32_saturating(1000.0).to_f32(), 448.0);
//! assert_eq!(Float8E5m2::from_f32(1e6).to_f32(), f32::INFINITY);
//! assert_eq!(Float4E2m1fn::from_f32(5.0).to_f32(), 4.0); // a tie: to the even mantissa
//! ```

mod boolean;
mod cast;
mod dispatch;
mod minifloat;
mod name;
mod numeric;
mod value;
mod vector;

pub use boolean::Bool;
#[cfg(feature = "cuda")]
pub(crate) use boolean::make_valid;
pub use cast::cast;
pub use dispatch::{
    ElementVisitor, MAX_DISPATCH_RANK, NumericVisitor, RankVisitor, TensorVisitor, dispatch, dispatch_element,
    dispatch_rank, dispatch_tensor,
};
pub use minifloat::*;
#[cfg(feature = "cuda")]
pub(crate) use minifloat::{Format, Specials};
pub use name::ParseDtypeError;
pub use numeric::Numeric;
pub use vector::*;

use crate::ffi::{DLDataType, DLDataTypeCode};
use core::mem::size_of;
use half::{bf16, f16};
use num_complex::Complex;

/// A Rust type whose values are the elements of a DLPack tensor of data type [`DTYPE`](Self::DTYPE).
///
/// Views, conversions and exports compare `DTYPE` with a tensor's `dtype` field exactly
/// (code, bits and lanes). Implement it with `#[derive(DlElement)]` rather than by hand: the derive
/// proves every condition below at compile time.
///
/// ```
/// use dlspan::{DlElement, ffi::DLDataTypeCode};
///
/// #[derive(Clone, Copy, DlElement)]
/// #[repr(transparent)]
/// struct Meters(f32);
///
/// assert_eq!(Meters::DTYPE, f32::DTYPE);
/// assert_eq!(Meters::DTYPE.code, DLDataTypeCode::kDLFloat.0);
/// ```
///
/// # Safety
///
/// An implementation promises, for `D = Self::DTYPE`:
/// 1. **Size**: either `size_of::<Self>() * 8 == D.bits * D.lanes` (the bytes of one element are
///    exactly its lanes), or `D.bits < 8` and `size_of::<Self>() == D.lanes` (padded sub-byte
///    storage: one lane per byte, in the low bits). `D.lanes >= 1` and `D.bits >= 1`.
/// 2. **Layout**: the bytes of `Self` are laid out as DLPack lays out one element of `D` on this
///    target (lanes consecutive, a complex number as `(re, im)`, native endianness).
/// 3. **Validity**: every bit pattern that a producer may store for one element of `D` is a valid
///    value of `Self`, unless [`VALIDITY`](Self::VALIDITY) names a check that the import makes
///    first; then every bit pattern that passes it is a valid value. Producers store any byte in a
///    `kDLBool` element (NumPy's `view(np.bool_)` of any bytes, or an export of an opaque
///    `#[dl(code = kDLBool, ...)]` type), so a type that is not valid for every byte, as `bool`,
///    must say [`Validity::BoolBytes`], and must be valid for every element whose bytes are each 0
///    or 1. [`Validity::AnyBits`], the default, promises that every bit pattern is valid.
/// 4. **No interior mutability and no drop glue**: `Self` contains no `UnsafeCell` (views hand out
///    shared references to memory that other code, possibly foreign, also reads).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a DLPack element type",
    label = "`{Self}` has no DLPack data type",
    note = "built-in element types: bool, i8..i128, u8..u128, f32, f64, half::f16, half::bf16, Complex<f16|f32|f64>, the FP8/FP6/FP4 storage types and the vector types of `dlspan::dtype`",
    note = "not `usize` or `isize`, whose width is the target's (DLPack has no such integer): use `u64` or `i64`",
    note = "for your own type, use #[derive(DlElement)] on a #[repr(transparent)] newtype or a #[repr(C)] struct whose fields share one element type"
)]
pub unsafe trait DlElement: Copy + Send + Sync + 'static {
    /// The DLPack data type of one element.
    const DTYPE: DLDataType;

    /// Which bit patterns of foreign memory are valid values ([`DlElement`]'s safety item 3):
    /// [`Validity::AnyBits`] unless said otherwise; [`Validity::BoolBytes`] for `bool` and the
    /// types `#[derive(DlElement)]` builds of bools, whose host imports check every element they
    /// reach ([rule I18](crate::rules#i18)).
    ///
    /// ```
    /// use dlspan::{DlElement, dtype::{Bool, Validity}};
    /// assert_eq!(bool::VALIDITY, Validity::BoolBytes);
    /// assert_eq!(Bool::VALIDITY, Validity::AnyBits);
    /// assert_eq!(f32::VALIDITY, Validity::AnyBits);
    /// ```
    const VALIDITY: Validity = Validity::AnyBits;

    /// The names of a `#[derive(DlElement)]` struct's fields, in order (`["r", "g", "b", "a"]`, or
    /// `["0"]` for a tuple newtype); empty for built-in and `#[dl(...)]` types. Element-wise kernels
    /// name them in their CUDA C++ (field access on derived types, `dlspan::kernel`).
    #[doc(hidden)]
    const FIELD_NAMES: &'static [&'static str] = &[];
}

/// Which bit patterns of an element type are valid values: what an import of foreign memory must
/// check before it hands out references ([`DlElement::VALIDITY`], [rule I18](crate::rules#i18)).
///
/// ```
/// use dlspan::dtype::Validity;
/// assert!(!Validity::AnyBits.needs_check());
/// assert!(Validity::BoolBytes.needs_check());
/// assert_eq!(Validity::AnyBits.and(Validity::BoolBytes), Validity::BoolBytes);
/// ```
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Validity {
    /// Every bit pattern of the element's size is a valid value: imports read no element.
    AnyBits,
    /// Every byte of the element must be 0 or 1 (`bool`, and types made of `bool`s): imports of
    /// host-readable memory check every element they reach, and refuse any other byte with
    /// [`DlpackError::InvalidBool`](crate::DlpackError::InvalidBool).
    BoolBytes,
}

impl Validity {
    /// Whether an import must read the elements before it hands out references to them.
    #[inline]
    pub const fn needs_check(self) -> bool {
        !matches!(self, Self::AnyBits)
    }

    /// The validity of an element made of parts of validity `self` and `other` (the lanes of one
    /// element): the stricter of the two.
    #[inline]
    pub const fn and(self, other: Self) -> Self {
        match (self, other) {
            (Self::AnyBits, Self::AnyBits) => Self::AnyBits,
            _ => Self::BoolBytes,
        }
    }

    /// Whether memory holding values of this validity stays valid when a mutable view of a type of
    /// validity `writer` writes it: the writer's type must be at least as strict (a `dtype::Bool`
    /// view, which writes any byte, would break memory of Rust `bool`s).
    pub(crate) const fn kept_by(self, writer: Self) -> bool {
        matches!((self, writer), (Self::AnyBits, _) | (Self::BoolBytes, Self::BoolBytes))
    }
}

/// Types for which every bit pattern of their size is a valid value, with no padding and no
/// interior mutability (as element types, their [`DlElement::VALIDITY`] is
/// [`Validity::AnyBits`]).
///
/// `#[derive(DlElement)]` requires it of the fields of opaque storage types declared with
/// `#[dl(code = ..., bits = ...)]`: those fields receive whatever bytes a producer wrote.
///
/// ```
/// fn takes_any_bits<T: dlspan::dtype::PlainBits>() {}
/// takes_any_bits::<[u8; 3]>();
/// takes_any_bits::<f32>();
/// ```
///
/// # Safety
///
/// Every initialised bit pattern of `size_of::<Self>()` bytes is a valid `Self`; `Self` has no
/// padding bytes, no `UnsafeCell` and no drop glue.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot hold arbitrary bytes",
    label = "opaque storage fields must accept every bit pattern",
    note = "use unsigned integers, floats or arrays of them (for example `u8` or `[u8; 3]`) as the storage of a `#[dl(code = ..., bits = ...)]` type"
)]
pub unsafe trait PlainBits: Copy + Send + Sync + 'static {}

/// The DLPack data type of `T`, as a function (handy in const contexts and generic code).
///
/// ```
/// assert_eq!(dlspan::dtype::dtype_of::<u16>(), dlspan::ffi::DLDataType { code: 1, bits: 16, lanes: 1 });
/// ```
pub const fn dtype_of<T: DlElement>() -> DLDataType {
    T::DTYPE
}

/// Whether `T` is padded sub-byte storage: lanes narrower than a byte, each stored in a byte of its
/// own (for example one FP4 value per byte). Such data is only exchanged with the DLPack flag
/// `IS_SUBBYTE_TYPE_PADDED`, since a plain `DLTensor` of a sub-byte type is packed.
///
/// ```
/// use dlspan::dtype::{is_padded_subbyte, Float4E2m1fn, Float4E2m1fnX2};
/// assert!(is_padded_subbyte::<Float4E2m1fn>());
/// assert!(!is_padded_subbyte::<Float4E2m1fnX2>());
/// assert!(!is_padded_subbyte::<f32>());
/// ```
pub const fn is_padded_subbyte<T: DlElement>() -> bool {
    (T::DTYPE.bits as usize) * (T::DTYPE.lanes as usize) < 8 * size_of::<T>()
}

/// Whether a consumer may import `dtype` without knowing a Rust type for it: a code DLPack defines,
/// at the width DLPack gives it when it gives one (8 bits for `bool` and the FP8 codes, 6 for FP6, 4
/// for FP4: DLPack says "the consumer must stop importing if the value is unexpected"). Dynamic
/// views and the Python layer import only these; a typed view imports its type's own data type.
pub(crate) const fn defined(dtype: DLDataType) -> bool {
    dtype.type_code().name().is_some() && width_fits(dtype)
}

/// Whether `dtype`'s bits are the one width DLPack gives its code, where it gives one (8 for `bool`
/// and the FP8 codes, 6 for FP6, 4 for FP4); any width for codes of several.
pub(crate) const fn width_fits(dtype: DLDataType) -> bool {
    match dtype.type_code().fixed_bits() {
        Some(bits) => bits == dtype.bits,
        None => true,
    }
}

/// The bits one element of `dtype` occupies in memory: `bits · lanes` (whole bytes, or packed
/// sub-byte values, DLPack's default), or one byte per lane for padded sub-byte storage
/// (`IS_SUBBYTE_TYPE_PADDED`). `None` where DLPack defines no storage: zero bits or lanes, or a
/// width of 8 bits or more that is not a whole number of bytes.
pub(crate) const fn storage_bits(dtype: DLDataType, padded: bool) -> Option<usize> {
    let (bits, lanes) = (dtype.bits as usize, dtype.lanes as usize);
    if bits == 0 || lanes == 0 || (bits >= 8 && bits % 8 != 0) {
        None
    } else if bits < 8 && padded {
        Some(8 * lanes)
    } else {
        Some(bits * lanes)
    }
}

/// The bytes `count` elements of `dtype` take packed (DLPack's default for sub-byte types, low bits
/// first): `ceil(count · bits · lanes / 8)`, or `None` on overflow.
pub(crate) const fn packed_bytes(dtype: DLDataType, count: usize) -> Option<usize> {
    let bits = (dtype.bits as u128) * (dtype.lanes as u128) * (count as u128);
    let bytes = bits.div_ceil(8);
    if bytes > isize::MAX as u128 { None } else { Some(bytes as usize) }
}

/// Whether `T` is a one-value storage type of a sub-byte dtype: one byte holding `bits < 8` bits,
/// one lane. These are the element types of packed views
/// ([`PackedMdspan`](crate::PackedMdspan)), whose values are stored `bits` apart.
pub(crate) const fn is_packable<T: DlElement>() -> bool {
    T::DTYPE.bits < 8 && T::DTYPE.lanes == 1 && size_of::<T>() == 1
}

/// Checks the size condition of [`DlElement`]'s safety contract for `T`; `#[derive(DlElement)]`
/// evaluates it at compile time for every derived type.
///
/// ```
/// assert!(dlspan::dtype::storage_matches_dtype::<dlspan::dtype::F32x4>());
/// ```
pub const fn storage_matches_dtype<T: DlElement>() -> bool {
    storage_matches(T::DTYPE, size_of::<T>())
}

/// Whether `size` bytes per element match `dtype` under [`DlElement`]'s size condition: exactly
/// `bits * lanes` bits, or padded sub-byte storage (`bits < 8`, one byte per lane). The derive
/// calls it through `__private`.
pub(crate) const fn storage_matches(dtype: DLDataType, size: usize) -> bool {
    let bits = dtype.bits as usize;
    let lanes = dtype.lanes as usize;
    bits >= 1 && lanes >= 1 && (bits * lanes == 8 * size || (bits < 8 && size == lanes))
}

// SAFETY: one byte with native layout, no interior mutability; the bytes 0 and 1 are `false` and
// `true`, and no other byte is a `bool`: `BoolBytes` makes every import of host-readable memory
// check each byte first (rule I18), and device memory is never read as `bool` on the host.
unsafe impl DlElement for bool {
    const DTYPE: DLDataType = DLDataType::new(DLDataTypeCode::kDLBool, 8, 1);
    const VALIDITY: Validity = Validity::BoolBytes;
}

macro_rules! scalar_elements {
    ($($ty:ty => $code:ident, $bits:expr;)*) => {$(
        // SAFETY: `$ty` is a primitive (or `half`'s `#[repr(transparent)]` 16-bit float) of exactly
        // `$bits` bits with native layout; every bit pattern is valid; it has no interior
        // mutability.
        unsafe impl DlElement for $ty {
            const DTYPE: DLDataType = DLDataType::new(DLDataTypeCode::$code, $bits, 1);
        }
    )*};
}

scalar_elements! {
    i8 => kDLInt, 8;
    i16 => kDLInt, 16;
    i32 => kDLInt, 32;
    i64 => kDLInt, 64;
    i128 => kDLInt, 128;
    u8 => kDLUInt, 8;
    u16 => kDLUInt, 16;
    u32 => kDLUInt, 32;
    u64 => kDLUInt, 64;
    u128 => kDLUInt, 128;
    f16 => kDLFloat, 16;
    f32 => kDLFloat, 32;
    f64 => kDLFloat, 64;
    bf16 => kDLBfloat, 16;
}

macro_rules! complex_elements {
    ($($re:ty => $bits:expr;)*) => {$(
        // SAFETY: `num_complex::Complex<$re>` is `#[repr(C)] { re, im }`, two `$re` with no padding:
        // exactly DLPack's compact complex layout of `$bits` bits; every bit pattern is valid.
        unsafe impl DlElement for Complex<$re> {
            const DTYPE: DLDataType = DLDataType::new(DLDataTypeCode::kDLComplex, $bits, 1);
        }
    )*};
}

complex_elements! {
    f16 => 32;
    f32 => 64;
    f64 => 128;
}

macro_rules! plain_bits {
    ($($ty:ty),* $(,)?) => {$(
        // SAFETY: a primitive integer or float (or a `#[repr(transparent)]` wrapper of `u16`):
        // every bit pattern is valid, no padding, no interior mutability.
        unsafe impl PlainBits for $ty {}
    )*};
}

plain_bits!(u8, u16, u32, u64, u128, i8, i16, i32, i64, i128, f32, f64, f16, bf16);

// SAFETY: an array of `PlainBits` has no padding between elements and accepts any bytes its
// elements accept.
unsafe impl<T: PlainBits, const N: usize> PlainBits for [T; N] {}

// SAFETY: `Complex<T>` is `#[repr(C)]` of two `T`, no padding between equal-size fields.
unsafe impl<T: PlainBits> PlainBits for Complex<T> {}
