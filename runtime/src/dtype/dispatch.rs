//! From a data type known only at run time to generic code instantiated for the matching element
//! type: [`dispatch`] (scalars, with [`Numeric`] arithmetic), [`dispatch_element`] (every built-in
//! element type, vectors and packed storage included), [`dispatch_rank`] (a rank known at run time
//! as a const generic) and [`dispatch_tensor`] (both: what a typed view of a
//! [`DynMdspan`](crate::DynMdspan) needs).
//!
//! A visitor is a value with one generic method; the dispatch calls it for the type the dtype
//! names, so the generic body is compiled once per type and chosen by one `match`. Dtypes without
//! a Rust type are a [`DlpackError::UnsupportedDtype`], never a panic.
//!
//! ```
//! use dlspan::dtype::{dispatch, Numeric, NumericVisitor};
//! use dlspan::ffi::{DLDataType, DLDataTypeCode};
//!
//! /// The byte size and the value one of an element type, for any dtype.
//! struct Describe;
//!
//! impl NumericVisitor for Describe {
//!     type Output = (usize, f64);
//!     fn visit<T: Numeric>(self) -> (usize, f64) {
//!         (size_of::<T>(), dlspan::dtype::cast(T::ONE))
//!     }
//! }
//!
//! let bf16 = DLDataType::new(DLDataTypeCode::kDLBfloat, 16, 1);
//! assert_eq!(dispatch(bf16, Describe)?, (2, 1.0));
//! let float128 = DLDataType::new(DLDataTypeCode::kDLFloat, 128, 1);
//! assert!(matches!(dispatch(float128, Describe), Err(dlspan::DlpackError::UnsupportedDtype { .. })));
//! # Ok::<(), dlspan::DlpackError>(())
//! ```

use super::minifloat::*;
use super::numeric::Numeric;
use super::vector::*;
use super::{Bool, DlElement, PlainBits, is_padded_subbyte};
use crate::error::DlpackError;
use crate::ffi::DLDataType;
use core::marker::PhantomData;
use half::{bf16, f16};
use num_complex::Complex;

/// Generic code over the [`Numeric`] scalar types, run by [`dispatch`] for a runtime dtype.
///
/// ```
/// use dlspan::dtype::{dispatch, Numeric, NumericVisitor, cast};
/// use dlspan::ffi::{DLDataType, DLDataTypeCode};
///
/// /// Sums a byte buffer of any scalar dtype into f64.
/// struct SumBytes<'a>(&'a [u8]);
///
/// impl NumericVisitor for SumBytes<'_> {
///     type Output = f64;
///     fn visit<T: Numeric>(self) -> f64 {
///         self.0
///             .chunks_exact(size_of::<T>())
///             // SAFETY: every bit pattern of these bytes is a valid `T` (the test data below).
///             .map(|chunk| unsafe { chunk.as_ptr().cast::<T>().read_unaligned() })
///             .fold(0.0, |sum, x| sum + cast::<T, f64>(x))
///     }
/// }
///
/// let bytes: Vec<u8> = [1i16, 2, 3].iter().flat_map(|x| x.to_ne_bytes()).collect();
/// let int16 = DLDataType::new(DLDataTypeCode::kDLInt, 16, 1);
/// assert_eq!(dispatch(int16, SumBytes(&bytes))?, 6.0);
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub trait NumericVisitor {
    /// What the generic code returns.
    type Output;

    /// Runs the generic code for element type `T` (see the trait's example).
    fn visit<T: Numeric>(self) -> Self::Output;

    /// Runs the generic code for a sub-byte scalar type (FP6 and FP4: `T` is one of
    /// [`Float6E2m3fn`], [`Float6E3m2fn`], [`Float4E2m1fn`]), where `T` is also [`PlainBits`], so
    /// the code can build packed views of it ([`DynMdspan::typed_packed`](crate::DynMdspan::typed_packed)).
    /// By default it runs [`visit`](Self::visit), which serves padded data.
    ///
    /// ```
    /// use dlspan::dtype::{dispatch, Numeric, NumericVisitor, PlainBits};
    /// use dlspan::ffi::{DLDataType, DLDataTypeCode};
    ///
    /// struct Width;
    /// impl NumericVisitor for Width {
    ///     type Output = (u8, bool);
    ///     fn visit<T: Numeric>(self) -> (u8, bool) {
    ///         (T::DTYPE.bits, false)
    ///     }
    ///     fn visit_subbyte<T: Numeric + PlainBits>(self) -> (u8, bool) {
    ///         (T::DTYPE.bits, true)
    ///     }
    /// }
    /// let fp6 = DLDataType::new(DLDataTypeCode::kDLFloat6_e3m2fn, 6, 1);
    /// assert_eq!(dispatch(fp6, Width)?, (6, true));
    /// assert_eq!(dispatch(DLDataType::new(DLDataTypeCode::kDLFloat, 32, 1), Width)?, (32, false));
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    #[inline]
    fn visit_subbyte<T: Numeric + PlainBits>(self) -> Self::Output
    where
        Self: Sized,
    {
        self.visit::<T>()
    }
}

/// Generic code over every built-in element type ([`DlElement`]), run by [`dispatch_element`].
///
/// ```
/// use dlspan::dtype::{dispatch_element, DlElement, ElementVisitor};
/// use dlspan::ffi::{DLDataType, DLDataTypeCode};
///
/// struct Alignment;
/// impl ElementVisitor for Alignment {
///     type Output = usize;
///     fn visit<T: DlElement>(self) -> usize {
///         align_of::<T>()
///     }
/// }
///
/// let float4 = DLDataType::new(DLDataTypeCode::kDLFloat, 32, 4); // CUDA's float4
/// assert_eq!(dispatch_element(float4, false, Alignment)?, 16);
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub trait ElementVisitor {
    /// What the generic code returns.
    type Output;

    /// Runs the generic code for element type `T`.
    fn visit<T: DlElement>(self) -> Self::Output;
}

/// Generic code over a rank known at compile time, run by [`dispatch_rank`] for a rank known at run
/// time (typically to convert a [`DynMdspan`](crate::DynMdspan) into a typed view).
///
/// ```
/// use dlspan::dtype::{dispatch_rank, RankVisitor};
///
/// struct Zeros;
/// impl RankVisitor for Zeros {
///     type Output = Vec<usize>;
///     fn visit<const R: usize>(self) -> Vec<usize> {
///         [0usize; R].to_vec()
///     }
/// }
///
/// assert_eq!(dispatch_rank(3, Zeros)?, [0, 0, 0]);
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub trait RankVisitor {
    /// What the generic code returns.
    type Output;

    /// Runs the generic code for rank `R`.
    fn visit<const R: usize>(self) -> Self::Output;
}

/// Generic code over a [`Numeric`] element type and a rank, run by [`dispatch_tensor`]: the shape
/// of a function that turns [`DynMdspan`](crate::DynMdspan)s into typed views.
///
/// ```
/// use dlspan::dtype::{dispatch_tensor, Numeric, TensorVisitor};
/// use dlspan::{DlpackError, DynMdspanMut, HostMdspanMut, LayoutStrideRelaxed};
///
/// /// `x *= alpha` in place, for every scalar dtype and rank up to 8.
/// fn scale(x: &mut DynMdspanMut<'_>, alpha: f64) -> Result<(), DlpackError> {
///     struct Scale<'x, 'a>(&'x mut DynMdspanMut<'a>, f64);
///     impl TensorVisitor for Scale<'_, '_> {
///         type Output = Result<(), DlpackError>;
///         fn visit<T: Numeric, const R: usize>(self) -> Self::Output {
///             let alpha = dlspan::dtype::cast::<f64, T::Acc>(self.1);
///             let mut view = self.0.typed_mut::<T, R, LayoutStrideRelaxed>()?;
///             view.for_each_unordered(|x| *x = T::from_acc(x.to_acc().mul(alpha)));
///             Ok(())
///         }
///     }
///     dispatch_tensor(x.dtype(), x.rank(), Scale(x, alpha))?
/// }
///
/// let mut data = [1u8, 2, 3, 4];
/// scale(&mut HostMdspanMut::<u8, 2>::from_slice(&mut data, [2, 2])?.into(), 3.0)?;
/// assert_eq!(data, [3, 6, 9, 12]);
/// # Ok::<(), DlpackError>(())
/// ```
pub trait TensorVisitor {
    /// What the generic code returns.
    type Output;

    /// Runs the generic code for element type `T` and rank `R`.
    fn visit<T: Numeric, const R: usize>(self) -> Self::Output;

    /// Runs the generic code for a sub-byte scalar type `T` (FP6, FP4), which is also
    /// [`PlainBits`], and rank `R`: the place for packed data, DLPack's default for these types,
    /// through [`DynMdspan::typed_packed`](crate::DynMdspan::typed_packed). By default it runs
    /// [`visit`](Self::visit), which serves padded data (packed data then fails its typed import
    /// with [`DlpackError::SubbytePacking`]).
    ///
    /// ```
    /// use dlspan::dtype::{dispatch_tensor, Numeric, PlainBits, TensorVisitor, cast};
    /// use dlspan::{DlpackError, DynMdspan, LayoutStrideRelaxed, PackedMdspan};
    /// use dlspan::dtype::Float4E2m1fn;
    ///
    /// /// The sum of any scalar tensor as f64: typed views, or packed views of FP6/FP4 data.
    /// fn sum(x: &DynMdspan<'_>) -> Result<f64, DlpackError> {
    ///     struct Sum<'x, 'a>(&'x DynMdspan<'a>);
    ///     impl TensorVisitor for Sum<'_, '_> {
    ///         type Output = Result<f64, DlpackError>;
    ///         fn visit<T: Numeric, const R: usize>(self) -> Self::Output {
    ///             let view = self.0.typed::<T, R, LayoutStrideRelaxed>()?;
    ///             Ok(view.fold_unordered(0.0, |sum, &x| sum + cast::<T, f64>(x)))
    ///         }
    ///         fn visit_subbyte<T: Numeric + PlainBits, const R: usize>(self) -> Self::Output {
    ///             if self.0.is_subbyte_padded() {
    ///                 return self.visit::<T, R>();
    ///             }
    ///             let view = self.0.typed_packed::<T, R, LayoutStrideRelaxed>()?;
    ///             Ok(view.iter().map(cast::<T, f64>).sum())
    ///         }
    ///     }
    ///     dispatch_tensor(x.dtype(), x.rank(), Sum(x))?
    /// }
    ///
    /// let bytes = [0x21u8, 0x07]; // FP4 values 0.5, 1.0 and 6.0, packed
    /// let fp4 = PackedMdspan::<Float4E2m1fn, 1>::from_bytes(&bytes, [3])?;
    /// assert_eq!(sum(&fp4.into())?, 7.5);
    /// # Ok::<(), DlpackError>(())
    /// ```
    #[inline]
    fn visit_subbyte<T: Numeric + PlainBits, const R: usize>(self) -> Self::Output
    where
        Self: Sized,
    {
        self.visit::<T, R>()
    }
}

/// The highest rank [`dispatch_rank`] (and [`dispatch_tensor`]) instantiates. One of the crate's
/// [rank limits](crate::rules#limits).
///
/// ```
/// assert_eq!(dlspan::dtype::MAX_DISPATCH_RANK, 8);
/// ```
pub const MAX_DISPATCH_RANK: usize = 8;

/// One arm per type: the dtype constant of each type is its pattern.
macro_rules! dispatch_match {
    ($dtype:expr, $visitor:expr, [$($ty:ty),* $(,)?]) => {
        match $dtype {
            $(<$ty as DlElement>::DTYPE => Some($visitor.visit::<$ty>()),)*
            _ => None,
        }
    };
}

/// Calls `visitor.visit::<T>()` for the [`Numeric`] type `T` whose dtype is `dtype`.
///
/// The scalar types: `bool`, `int8`–`int128`, `uint8`–`uint128`, `float16`, `bfloat16`, `float32`,
/// `float64`, `complex32`/`64`/`128`, the eight FP8 codes, both FP6 codes and FP4 (all with
/// `lanes == 1`). `bool` is [`Bool`], the byte-backed boolean: producers may store any byte in a
/// `kDLBool` element, and `Bool` reads every nonzero byte as `true` where a Rust `bool` would be
/// invalid, so generic code never needs the check that a view of `bool` makes
/// ([rule I18](crate::rules#i18)). For the sub-byte codes `T` is the one-value storage type
/// ([`Float4E2m1fn`] for `(17, 4, 1)`), whether the data is padded or packed, and they reach
/// [`NumericVisitor::visit_subbyte`], where `T` is also [`PlainBits`]: padded data converts to a
/// typed view of `T`, packed data to a packed view of `T`.
///
/// # Errors
///
/// [`DlpackError::UnsupportedDtype`] for any other dtype (vectors, opaque handles, `float128`,
/// unknown codes); the visitor is then dropped unused.
///
/// ```
/// use dlspan::dtype::{dispatch, NumericVisitor, Numeric, Float4E2m1fn};
/// use dlspan::ffi::{DLDataType, DLDataTypeCode};
///
/// struct Name;
/// impl NumericVisitor for Name {
///     type Output = &'static str;
///     fn visit<T: Numeric>(self) -> &'static str {
///         std::any::type_name::<T>()
///     }
/// }
/// let fp4 = DLDataType::new(DLDataTypeCode::kDLFloat4_e2m1fn, 4, 1);
/// assert_eq!(dispatch(fp4, Name)?, std::any::type_name::<Float4E2m1fn>());
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
#[inline]
pub fn dispatch<V: NumericVisitor>(dtype: DLDataType, visitor: V) -> Result<V::Output, DlpackError> {
    match dtype {
        <Float6E2m3fn as DlElement>::DTYPE => Ok(visitor.visit_subbyte::<Float6E2m3fn>()),
        <Float6E3m2fn as DlElement>::DTYPE => Ok(visitor.visit_subbyte::<Float6E3m2fn>()),
        <Float4E2m1fn as DlElement>::DTYPE => Ok(visitor.visit_subbyte::<Float4E2m1fn>()),
        _ => dispatch_match!(dtype, visitor, [
            Bool, i8, i16, i32, i64, i128, u8, u16, u32, u64, u128, f16, bf16, f32, f64,
            Complex<f16>, Complex<f32>, Complex<f64>,
            Float8E3m4, Float8E4m3, Float8E4m3b11fnuz, Float8E4m3fn, Float8E4m3fnuz, Float8E5m2, Float8E5m2fnuz,
            Float8E8m0fnu,
        ])
        .ok_or(DlpackError::UnsupportedDtype { dtype }),
    }
}

/// Calls `visitor.visit::<T>()` for the built-in element type `T` whose dtype is `dtype` and whose
/// storage is padded (`padded`, DLPack's `IS_SUBBYTE_TYPE_PADDED`) or packed: every scalar of
/// [`dispatch`], the CUDA vector types of [`vector`](crate::dtype#types) (`float4` is `(2, 32, 4)`),
/// and the sub-byte storage types (`(17, 4, 2)` packed is [`Float4E2m1fnX2`], `(15, 6, 2)` padded
/// [`Float6E2m3fnX2`]). `padded` only matters for sub-byte dtypes.
///
/// # Errors
///
/// [`DlpackError::UnsupportedDtype`] for dtypes without a built-in type;
/// [`DlpackError::SubbytePacking`] for a packed sub-byte dtype whose values do not fill whole
/// bytes (one packed FP4 value has no storage type of its own: use a packed view).
///
/// ```
/// use dlspan::dtype::{dispatch_element, DlElement, ElementVisitor};
/// use dlspan::ffi::{DLDataType, DLDataTypeCode};
///
/// struct Size;
/// impl ElementVisitor for Size {
///     type Output = usize;
///     fn visit<T: DlElement>(self) -> usize {
///         size_of::<T>()
///     }
/// }
/// let fp4 = |lanes| DLDataType::new(DLDataTypeCode::kDLFloat4_e2m1fn, 4, lanes);
/// assert_eq!(dispatch_element(fp4(2), false, Size)?, 1); // PyTorch's float4_e2m1fn_x2
/// assert_eq!(dispatch_element(fp4(1), true, Size)?, 1); // one value per byte
/// assert!(matches!(dispatch_element(fp4(1), false, Size), Err(dlspan::DlpackError::SubbytePacking { .. })));
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub fn dispatch_element<V: ElementVisitor>(
    dtype: DLDataType,
    padded: bool,
    visitor: V,
) -> Result<V::Output, DlpackError> {
    if dtype.lanes == 1 {
        if dtype.bits < 8 && !padded {
            return Err(DlpackError::SubbytePacking { element_padded: true, tensor_padded: false });
        }
        return dispatch(dtype, AsElement(visitor));
    }
    if dtype.bits < 8 {
        // Sub-byte vectors: only the storage of the matching kind (packed or padded) is one.
        return match padded {
            false => dispatch_match!(dtype, visitor, [Float4E2m1fnX2, Float4E2m1fnX4, Float6E2m3fnX4, Float6E3m2fnX4]),
            true => dispatch_match!(dtype, visitor, [Float6E2m3fnX2, Float6E3m2fnX2]),
        }
        .ok_or(DlpackError::UnsupportedDtype { dtype });
    }
    dispatch_match!(
        dtype,
        visitor,
        [
            I8x2,
            U8x2,
            I16x2,
            U16x2,
            I32x2,
            U32x2,
            I64x2,
            U64x2,
            F16x2,
            Bf16x2,
            F32x2,
            F64x2,
            Float8E3m4X2,
            Float8E4m3X2,
            Float8E4m3b11fnuzX2,
            Float8E4m3fnX2,
            Float8E4m3fnuzX2,
            Float8E5m2X2,
            Float8E5m2fnuzX2,
            Float8E8m0fnuX2,
            I8x4,
            U8x4,
            I16x4,
            U16x4,
            I32x4,
            U32x4,
            I64x4,
            U64x4,
            F16x4,
            Bf16x4,
            F32x4,
            F64x4,
            Float8E3m4X4,
            Float8E4m3X4,
            Float8E4m3b11fnuzX4,
            Float8E4m3fnX4,
            Float8E4m3fnuzX4,
            Float8E5m2X4,
            Float8E5m2fnuzX4,
            Float8E8m0fnuX4,
        ]
    )
    .ok_or(DlpackError::UnsupportedDtype { dtype })
}

/// Runs an [`ElementVisitor`] where a [`NumericVisitor`] is expected (every numeric type is an
/// element type), so the scalar list is written once.
struct AsElement<V>(V);

impl<V: ElementVisitor> NumericVisitor for AsElement<V> {
    type Output = V::Output;

    #[inline]
    fn visit<T: Numeric>(self) -> V::Output {
        debug_assert!(!is_padded_subbyte::<T>() || T::DTYPE.bits < 8);
        self.0.visit::<T>()
    }
}

/// Calls `visitor.visit::<R>()` for `R == rank`, for ranks 0 to [`MAX_DISPATCH_RANK`].
///
/// # Errors
///
/// [`DlpackError::UnsupportedRank`] above [`MAX_DISPATCH_RANK`].
///
/// ```
/// use dlspan::dtype::{dispatch_rank, RankVisitor};
/// struct Rank;
/// impl RankVisitor for Rank {
///     type Output = usize;
///     fn visit<const R: usize>(self) -> usize {
///         R
///     }
/// }
/// assert_eq!(dispatch_rank(0, Rank)?, 0);
/// assert!(matches!(dispatch_rank(9, Rank), Err(dlspan::DlpackError::UnsupportedRank { rank: 9, .. })));
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
#[inline]
pub fn dispatch_rank<V: RankVisitor>(rank: usize, visitor: V) -> Result<V::Output, DlpackError> {
    Ok(match rank {
        0 => visitor.visit::<0>(),
        1 => visitor.visit::<1>(),
        2 => visitor.visit::<2>(),
        3 => visitor.visit::<3>(),
        4 => visitor.visit::<4>(),
        5 => visitor.visit::<5>(),
        6 => visitor.visit::<6>(),
        7 => visitor.visit::<7>(),
        8 => visitor.visit::<8>(),
        _ => return Err(DlpackError::UnsupportedRank { rank, max: MAX_DISPATCH_RANK }),
    })
}

/// Calls `visitor.visit::<T, R>()` for the [`Numeric`] type `T` of `dtype` (as [`dispatch`]) and
/// `R == rank` (as [`dispatch_rank`]).
///
/// # Errors
///
/// [`DlpackError::UnsupportedDtype`], then [`DlpackError::UnsupportedRank`].
///
/// ```
/// use dlspan::dtype::{dispatch_tensor, Numeric, TensorVisitor};
/// use dlspan::ffi::{DLDataType, DLDataTypeCode};
/// struct Elements;
/// impl TensorVisitor for Elements {
///     type Output = (usize, usize);
///     fn visit<T: Numeric, const R: usize>(self) -> (usize, usize) {
///         (size_of::<T>(), R)
///     }
/// }
/// let float64 = DLDataType::new(DLDataTypeCode::kDLFloat, 64, 1);
/// assert_eq!(dispatch_tensor(float64, 3, Elements)?, (8, 3));
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
#[inline]
pub fn dispatch_tensor<V: TensorVisitor>(dtype: DLDataType, rank: usize, visitor: V) -> Result<V::Output, DlpackError> {
    /// The element type chosen, the rank still to choose.
    struct ByType<V>(usize, V);
    /// Both chosen.
    struct ByRank<V, T>(V, PhantomData<T>);
    /// Both chosen, for a sub-byte type.
    struct BySubbyteRank<V, T>(V, PhantomData<T>);

    impl<V: TensorVisitor> NumericVisitor for ByType<V> {
        type Output = Result<V::Output, DlpackError>;

        #[inline]
        fn visit<T: Numeric>(self) -> Self::Output {
            dispatch_rank(self.0, ByRank::<V, T>(self.1, PhantomData))
        }

        #[inline]
        fn visit_subbyte<T: Numeric + PlainBits>(self) -> Self::Output {
            dispatch_rank(self.0, BySubbyteRank::<V, T>(self.1, PhantomData))
        }
    }

    impl<V: TensorVisitor, T: Numeric> RankVisitor for ByRank<V, T> {
        type Output = V::Output;

        #[inline]
        fn visit<const R: usize>(self) -> V::Output {
            self.0.visit::<T, R>()
        }
    }

    impl<V: TensorVisitor, T: Numeric + PlainBits> RankVisitor for BySubbyteRank<V, T> {
        type Output = V::Output;

        #[inline]
        fn visit<const R: usize>(self) -> V::Output {
            self.0.visit_subbyte::<T, R>()
        }
    }

    dispatch(dtype, ByType(rank, visitor))?
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::DLDataTypeCode;

    /// Returns the visited type's dtype and padding, so each arm can be checked against its input.
    struct Echo;

    impl ElementVisitor for Echo {
        type Output = (DLDataType, bool);
        fn visit<T: DlElement>(self) -> (DLDataType, bool) {
            (T::DTYPE, is_padded_subbyte::<T>())
        }
    }

    #[test]
    fn every_arm_visits_the_type_of_its_dtype() {
        let mut found = 0;
        for code in 0..=20u8 {
            for bits in [4u8, 6, 8, 16, 32, 64, 128] {
                for lanes in [1u16, 2, 3, 4] {
                    for padded in [false, true] {
                        let dtype = DLDataType { code, bits, lanes };
                        if let Ok((visited, visited_padded)) = dispatch_element(dtype, padded, Echo) {
                            assert_eq!(visited, dtype);
                            if bits < 8 {
                                assert_eq!(visited_padded, padded, "{dtype} padded {padded}");
                            }
                            found += 1;
                        }
                    }
                }
            }
        }
        // 26 scalars of whole bytes and 40 vectors, found whatever `padded` says; 3 sub-byte
        // scalars (padded only) and 6 sub-byte vectors (4 packed, 2 padded).
        assert_eq!(found, 26 * 2 + 40 * 2 + 3 + 6);
    }

    #[test]
    fn unsupported_dtypes_are_errors() {
        let float128 = DLDataType::new(DLDataTypeCode::kDLFloat, 128, 1);
        assert_eq!(dispatch_element(float128, false, Echo), Err(DlpackError::UnsupportedDtype { dtype: float128 }));
        let f32x3 = DLDataType::new(DLDataTypeCode::kDLFloat, 32, 3);
        assert!(matches!(dispatch_element(f32x3, false, Echo), Err(DlpackError::UnsupportedDtype { .. })));
    }
}
