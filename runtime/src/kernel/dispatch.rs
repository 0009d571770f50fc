//! From a data type known only at run time to a generic kernel: [`dispatch_float`] instantiates
//! code bounded by [`Float`] (the element types of the math functions), [`dispatch_scalar`] code
//! bounded by [`Scalar`] (kernel arithmetic), each with the rank as a const generic — what calling
//! a generic `elementwise!` kernel on a `DynMdspan`, a Python argument of any dtype or a DLPack
//! tensor needs. `dtype::dispatch_tensor` gives `T: Numeric`, which includes types (`bool`,
//! complex, FP8) that kernel arithmetic does not take, so it cannot call such a kernel.

use super::scalar::{Float, Scalar};
use crate::dtype::{DlElement, RankVisitor, dispatch_rank};
use crate::error::DlpackError;
use crate::ffi::DLDataType;
use core::marker::PhantomData;
use half::{bf16, f16};

/// Generic code over a [`Float`] element type and a rank, run by [`dispatch_float`].
///
/// ```
/// use dlspan::kernel::{dispatch_float, Float, FloatVisitor};
/// use dlspan::ffi::{DLDataType, DLDataTypeCode};
/// struct Name;
/// impl FloatVisitor for Name {
///     type Output = (&'static str, usize);
///     fn visit<T: Float, const R: usize>(self) -> Self::Output {
///         (std::any::type_name::<T>(), R)
///     }
/// }
/// let bf16 = DLDataType::new(DLDataTypeCode::kDLBfloat, 16, 1);
/// assert_eq!(dispatch_float(bf16, 2, Name)?, (std::any::type_name::<dlspan::half::bf16>(), 2));
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub trait FloatVisitor {
    /// What the generic code returns.
    type Output;

    /// Runs the generic code for element type `T` at rank `R`.
    fn visit<T: Float, const R: usize>(self) -> Self::Output;
}

/// Generic code over a [`Scalar`] element type and a rank, run by [`dispatch_scalar`].
///
/// ```
/// use dlspan::kernel::{dispatch_scalar, Scalar, ScalarVisitor};
/// use dlspan::ffi::{DLDataType, DLDataTypeCode};
/// struct Size;
/// impl ScalarVisitor for Size {
///     type Output = usize;
///     fn visit<T: Scalar, const R: usize>(self) -> usize {
///         size_of::<T>() * R
///     }
/// }
/// let int16 = DLDataType::new(DLDataTypeCode::kDLInt, 16, 1);
/// assert_eq!(dispatch_scalar(int16, 3, Size)?, 6);
/// # Ok::<(), dlspan::DlpackError>(())
/// ```
pub trait ScalarVisitor {
    /// What the generic code returns.
    type Output;

    /// Runs the generic code for element type `T` at rank `R`.
    fn visit<T: Scalar, const R: usize>(self) -> Self::Output;
}

/// The body of a dispatch: the visitor trait `$visitor` (bound `$bound`) called for the type of
/// `types` whose dtype is `$dtype`, at rank `$rank`; any other dtype is refused naming `$accepted`.
macro_rules! by_type {
    ($visitor:ident, $bound:ident, $dtype:expr, $rank:expr, $value:expr, $accepted:expr, [$($t:ty),*]) => {{
        /// The element type chosen, the rank still to choose.
        struct ByRank<V, T>(V, PhantomData<T>);
        impl<V: $visitor, T: $bound> RankVisitor for ByRank<V, T> {
            type Output = V::Output;
            #[inline]
            fn visit<const R: usize>(self) -> V::Output {
                self.0.visit::<T, R>()
            }
        }
        match $dtype {
            $(<$t as DlElement>::DTYPE => dispatch_rank($rank, ByRank::<V, $t>($value, PhantomData)),)*
            dtype => Err(DlpackError::DtypeNotAccepted { dtype, accepted: $accepted }),
        }
    }};
}

/// The dtypes [`dispatch_float`] takes, for its error.
const FLOATS: &str = "float16, bfloat16, float32 or float64";

/// The dtypes [`dispatch_scalar`] takes, for its error.
const SCALARS: &str = "int8..int128, uint8..uint128, float16, bfloat16, float32 or float64";

/// Calls `visitor.visit::<T, R>()` for the [`Float`] type `T` whose dtype is `dtype` (`float16`,
/// `bfloat16`, `float32`, `float64`, one lane) and `R == rank`: a generic kernel bounded by
/// `T: Float` (one that calls `tanh`, `exp`, ...) run on a tensor whose dtype is known at run time.
///
/// # Errors
///
/// [`DlpackError::DtypeNotAccepted`] for any other dtype (naming the four), then
/// [`DlpackError::UnsupportedRank`] above [`MAX_DISPATCH_RANK`](crate::dtype::MAX_DISPATCH_RANK).
///
/// ```
/// use dlspan::kernel::{Cpu, Float, FloatVisitor, dispatch_float};
/// use dlspan::{DlpackError, DynMdspan, DynMdspanMut, HostMdspan, HostMdspanMut, LayoutStrideRelaxed};
///
/// dlspan::elementwise! {
///     fn gelu<T: Float>(x: &T, out: &mut T) {
///         *out = 0.5 * *x * (1.0 + (0.7978845608 * (*x + 0.044715 * *x * *x * *x)).tanh());
///     }
/// }
///
/// /// GELU of `x` into `out`, both of any float dtype and rank (the same dtype and shape).
/// struct Gelu<'v, 'a>(&'v DynMdspan<'a>, &'v mut DynMdspanMut<'a>);
/// impl FloatVisitor for Gelu<'_, '_> {
///     type Output = Result<(), DlpackError>;
///     fn visit<T: Float, const R: usize>(self) -> Self::Output {
///         let x = self.0.typed::<T, R, LayoutStrideRelaxed>()?;
///         let mut out = self.1.typed_mut::<T, R, LayoutStrideRelaxed>()?;
///         gelu.run(Cpu, &x, &mut out)
///     }
/// }
///
/// let (x, mut out) = ([0.5f32, -1.0, 2.0], [0.0f32; 3]);
/// // Views whose dtype and rank are known at run time only (a DLPack import, a Python argument).
/// let xd: DynMdspan = HostMdspan::<f32, 1>::from_slice(&x, [3])?.into();
/// let mut od: DynMdspanMut = HostMdspanMut::<f32, 1>::from_slice(&mut out, [3])?.into();
/// dispatch_float(xd.dtype(), xd.rank(), Gelu(&xd, &mut od))??;
/// assert!((out[2] - 1.9546).abs() < 1e-3);
/// # Ok::<(), DlpackError>(())
/// ```
#[inline]
pub fn dispatch_float<V: FloatVisitor>(dtype: DLDataType, rank: usize, visitor: V) -> Result<V::Output, DlpackError> {
    by_type!(FloatVisitor, Float, dtype, rank, visitor, FLOATS, [f16, bf16, f32, f64])
}

/// Calls `visitor.visit::<T, R>()` for the [`Scalar`] type `T` whose dtype is `dtype` (the
/// integers of 8 to 128 bits, `float16`, `bfloat16`, `float32`, `float64`, one lane) and
/// `R == rank`: a generic kernel bounded by `T: Scalar` run on a tensor whose dtype is known at
/// run time.
///
/// # Errors
///
/// [`DlpackError::DtypeNotAccepted`] for any other dtype (`bool`, complex, FP8, vectors: naming
/// what it takes), then [`DlpackError::UnsupportedRank`] above
/// [`MAX_DISPATCH_RANK`](crate::dtype::MAX_DISPATCH_RANK).
///
/// ```
/// use dlspan::kernel::{dispatch_scalar, Scalar, ScalarVisitor};
/// use dlspan::ffi::{DLDataType, DLDataTypeCode};
/// use dlspan::DlpackError;
/// struct Bits;
/// impl ScalarVisitor for Bits {
///     type Output = usize;
///     fn visit<T: Scalar, const R: usize>(self) -> usize {
///         8 * size_of::<T>()
///     }
/// }
/// let uint64 = DLDataType::new(DLDataTypeCode::kDLUInt, 64, 1);
/// assert_eq!(dispatch_scalar(uint64, 1, Bits)?, 64);
/// let complex64 = DLDataType::new(DLDataTypeCode::kDLComplex, 64, 1);
/// assert!(matches!(dispatch_scalar(complex64, 1, Bits), Err(DlpackError::DtypeNotAccepted { .. })));
/// # Ok::<(), DlpackError>(())
/// ```
#[inline]
pub fn dispatch_scalar<V: ScalarVisitor>(dtype: DLDataType, rank: usize, visitor: V) -> Result<V::Output, DlpackError> {
    by_type!(
        ScalarVisitor,
        Scalar,
        dtype,
        rank,
        visitor,
        SCALARS,
        [i8, i16, i32, i64, i128, u8, u16, u32, u64, u128, f16, bf16, f32, f64]
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::DLDataTypeCode;

    struct Name;
    impl FloatVisitor for Name {
        type Output = (DLDataType, usize);
        fn visit<T: Float, const R: usize>(self) -> Self::Output {
            (T::DTYPE, R)
        }
    }
    impl ScalarVisitor for Name {
        type Output = (DLDataType, usize);
        fn visit<T: Scalar, const R: usize>(self) -> Self::Output {
            (T::DTYPE, R)
        }
    }

    #[test]
    fn each_dtype_reaches_its_type_and_others_are_refused_by_name() {
        let dt = |code, bits| DLDataType::new(code, bits, 1);
        for (code, bits) in [
            (DLDataTypeCode::kDLFloat, 16),
            (DLDataTypeCode::kDLBfloat, 16),
            (DLDataTypeCode::kDLFloat, 32),
            (DLDataTypeCode::kDLFloat, 64),
        ] {
            assert_eq!(dispatch_float(dt(code, bits), 3, Name).unwrap(), (dt(code, bits), 3));
            assert_eq!(dispatch_scalar(dt(code, bits), 0, Name).unwrap(), (dt(code, bits), 0));
        }
        for bits in [8, 16, 32, 64, 128] {
            for code in [DLDataTypeCode::kDLInt, DLDataTypeCode::kDLUInt] {
                assert_eq!(dispatch_scalar(dt(code, bits), 8, Name).unwrap(), (dt(code, bits), 8));
                let error = dispatch_float(dt(code, bits), 1, Name).unwrap_err();
                assert_eq!(error, DlpackError::DtypeNotAccepted { dtype: dt(code, bits), accepted: FLOATS });
                assert!(error.to_string().contains("float16, bfloat16, float32 or float64"), "{error}");
            }
        }
        for refused in [
            dt(DLDataTypeCode::kDLBool, 8),
            dt(DLDataTypeCode::kDLComplex, 64),
            DLDataType::new(DLDataTypeCode::kDLFloat, 32, 4),
        ] {
            assert!(matches!(dispatch_scalar(refused, 1, Name), Err(DlpackError::DtypeNotAccepted { .. })));
        }
        assert_eq!(
            dispatch_float(dt(DLDataTypeCode::kDLFloat, 32), 9, Name),
            Err(DlpackError::UnsupportedRank { rank: 9, max: 8 })
        );
    }
}
