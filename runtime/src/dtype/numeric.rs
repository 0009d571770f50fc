//! [`Numeric`]: element arithmetic for generic code over every built-in scalar type.

use super::minifloat::*;
use super::value::{Castable, convert};
use super::{Bool, DlElement};
use core::fmt::Debug;
use half::{bf16, f16};
use num_complex::Complex;

/// The built-in scalar element types, with the arithmetic that lets one generic function serve
/// every DLPack dtype (see [`dispatch`](crate::dtype::dispatch)): `bool`, [`Bool`], `i8`–`i128`,
/// `u8`–`u128`, `f16`, `bf16`, `f32`, `f64`, `Complex<f16 | f32 | f64>`, every FP8 code, both FP6
/// codes and FP4.
///
/// Arithmetic follows NumPy and PyTorch:
/// - integers wrap on overflow (two's complement), in every build profile;
/// - `bool` and [`Bool`] add as logical *or* and multiply as logical *and* (a `Bool` result is the
///   byte 0 or 1, whatever nonzero bytes its operands held);
/// - `f16`, `bf16` and the minifloats compute in `f32` and round the result once (nearest, ties to
///   even, the format's overflow rule): `a.add(b)` is the correctly rounded sum;
/// - complex numbers follow complex arithmetic (`Complex<f16>` through `Complex<f32>`).
///
/// [`Acc`](Self::Acc) is the type sums and intermediate results use (`f32` for the 16-bit and
/// smaller floats, 64 bits for integers, `bool` and `Bool`), reached exactly with
/// [`to_acc`](Self::to_acc) and left with one rounding through [`from_acc`](Self::from_acc);
/// conversions to and from other types go through [`cast`](super::cast).
///
/// Sealed: dlspan defines the cast rules of each type. Your own element types map to these by
/// their dtype (a `#[repr(transparent)]` newtype of `f32` dispatches as `f32`).
///
/// ```
/// use dlspan::dtype::{cast, Numeric, Float8E4m3fn};
///
/// /// Written once, for every scalar type.
/// fn dot<T: Numeric>(a: &[T], b: &[T]) -> T::Acc {
///     a.iter().zip(b).fold(T::Acc::ZERO, |acc, (&x, &y)| acc.add(x.to_acc().mul(y.to_acc())))
/// }
///
/// assert_eq!(dot(&[1i8, 2, 3], &[4, 5, 6]), 32i64);
/// let fp8: Vec<Float8E4m3fn> = [1.0, 2.0, 3.0].map(Float8E4m3fn::from_f32).to_vec();
/// assert_eq!(dot(&fp8, &fp8), 14.0f32);
/// assert_eq!(Float8E4m3fn::from_f32(1.0).add(Float8E4m3fn::from_f32(0.0625)).to_f32(), 1.0); // rounded
/// assert_eq!(cast::<f64, Float8E4m3fn>(2.5).to_f32(), 2.5);
/// ```
pub trait Numeric: DlElement + PartialEq + Debug + Castable {
    /// The accumulator type: sums and intermediate results (itself for `f32`, `f64`,
    /// `Complex<f32>`, `Complex<f64>`, `i64`, `u64` and the 128-bit integers).
    type Acc: Numeric<Acc = Self::Acc>;

    /// Zero; for `e8m0fnu`, which has no zero, the value of zeroed memory (2^-127).
    const ZERO: Self;

    /// One.
    const ONE: Self;

    /// The sum, by the rules of the trait documentation.
    ///
    /// ```
    /// use dlspan::dtype::Numeric;
    /// assert_eq!(Numeric::add(250u8, 10), 4); // wraps
    /// assert!(Numeric::add(true, true));
    /// ```
    fn add(self, rhs: Self) -> Self;

    /// The product, by the rules of the trait documentation.
    ///
    /// ```
    /// use dlspan::dtype::Numeric;
    /// use dlspan::half::f16;
    /// assert_eq!(Numeric::mul(f16::from_f32(3.0), f16::from_f32(0.5)), f16::from_f32(1.5));
    /// ```
    fn mul(self, rhs: Self) -> Self;

    /// The value in the accumulator type (exact).
    ///
    /// ```
    /// use dlspan::dtype::Numeric;
    /// assert_eq!(true.to_acc(), 1i64);
    /// ```
    #[inline]
    fn to_acc(self) -> Self::Acc {
        convert(self)
    }

    /// An accumulator value rounded into this type, as [`cast`](super::cast).
    ///
    /// ```
    /// use dlspan::dtype::{Numeric, Float8E5m2};
    /// assert_eq!(Float8E5m2::from_acc(1.3).to_f32(), 1.25);
    /// ```
    #[inline]
    fn from_acc(acc: Self::Acc) -> Self {
        convert(acc)
    }
}

macro_rules! integers {
    ($($ty:ty => $acc:ty),* $(,)?) => {$(
        impl Numeric for $ty {
            type Acc = $acc;
            const ZERO: Self = 0;
            const ONE: Self = 1;

            #[inline]
            fn add(self, rhs: Self) -> Self {
                self.wrapping_add(rhs)
            }

            #[inline]
            fn mul(self, rhs: Self) -> Self {
                self.wrapping_mul(rhs)
            }
        }
    )*};
}

integers! {
    i8 => i64, i16 => i64, i32 => i64, i64 => i64, i128 => i128,
    u8 => u64, u16 => u64, u32 => u64, u64 => u64, u128 => u128,
}

impl Numeric for bool {
    type Acc = i64;
    const ZERO: Self = false;
    const ONE: Self = true;

    #[inline]
    fn add(self, rhs: Self) -> Self {
        self | rhs
    }

    #[inline]
    fn mul(self, rhs: Self) -> Self {
        self & rhs
    }
}

impl Numeric for Bool {
    type Acc = i64;
    const ZERO: Self = Bool::FALSE;
    const ONE: Self = Bool::TRUE;

    #[inline]
    fn add(self, rhs: Self) -> Self {
        Bool::new(self.get() | rhs.get())
    }

    #[inline]
    fn mul(self, rhs: Self) -> Self {
        Bool::new(self.get() & rhs.get())
    }
}

macro_rules! native_floats {
    ($($ty:ty),* $(,)?) => {$(
        impl Numeric for $ty {
            type Acc = $ty;
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;

            #[inline]
            fn add(self, rhs: Self) -> Self {
                self + rhs
            }

            #[inline]
            fn mul(self, rhs: Self) -> Self {
                self * rhs
            }
        }
    )*};
}

native_floats!(f32, f64);

/// Floating-point types narrower than `f32`: arithmetic in `f32`, rounded once. The sum or product
/// of two values of at most 12 significant bits is exact in `f32`, so the only rounding is the last.
macro_rules! narrow_floats {
    ($($ty:ty: $zero:expr, $one:expr;)*) => {$(
        impl Numeric for $ty {
            type Acc = f32;
            const ZERO: Self = $zero;
            const ONE: Self = $one;

            #[inline]
            fn add(self, rhs: Self) -> Self {
                Self::from_acc(self.to_acc() + rhs.to_acc())
            }

            #[inline]
            fn mul(self, rhs: Self) -> Self {
                Self::from_acc(self.to_acc() * rhs.to_acc())
            }
        }
    )*};
}

narrow_floats! {
    f16: f16::ZERO, f16::ONE;
    bf16: bf16::ZERO, bf16::ONE;
    Float8E3m4: Float8E3m4::from_f32(0.0), Float8E3m4::from_f32(1.0);
    Float8E4m3: Float8E4m3::from_f32(0.0), Float8E4m3::from_f32(1.0);
    Float8E4m3b11fnuz: Float8E4m3b11fnuz::from_f32(0.0), Float8E4m3b11fnuz::from_f32(1.0);
    Float8E4m3fn: Float8E4m3fn::from_f32(0.0), Float8E4m3fn::from_f32(1.0);
    Float8E4m3fnuz: Float8E4m3fnuz::from_f32(0.0), Float8E4m3fnuz::from_f32(1.0);
    Float8E5m2: Float8E5m2::from_f32(0.0), Float8E5m2::from_f32(1.0);
    Float8E5m2fnuz: Float8E5m2fnuz::from_f32(0.0), Float8E5m2fnuz::from_f32(1.0);
    Float8E8m0fnu: Float8E8m0fnu::from_bits(0), Float8E8m0fnu::from_f32(1.0);
    Float6E2m3fn: Float6E2m3fn::from_f32(0.0), Float6E2m3fn::from_f32(1.0);
    Float6E3m2fn: Float6E3m2fn::from_f32(0.0), Float6E3m2fn::from_f32(1.0);
    Float4E2m1fn: Float4E2m1fn::from_f32(0.0), Float4E2m1fn::from_f32(1.0);
}

macro_rules! complexes {
    ($($part:ty => $acc:ty),* $(,)?) => {$(
        impl Numeric for Complex<$part> {
            type Acc = Complex<$acc>;
            const ZERO: Self = Complex::new(<$part as Numeric>::ZERO, <$part as Numeric>::ZERO);
            const ONE: Self = Complex::new(<$part as Numeric>::ONE, <$part as Numeric>::ZERO);

            #[inline]
            fn add(self, rhs: Self) -> Self {
                Self::from_acc(self.to_acc() + rhs.to_acc())
            }

            #[inline]
            fn mul(self, rhs: Self) -> Self {
                Self::from_acc(self.to_acc() * rhs.to_acc())
            }
        }
    )*};
}

complexes!(f16 => f32, f32 => f32, f64 => f64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_arithmetic_rounds_once() {
        let a = f16::from_f32(2048.0);
        // 2048 + 1 is a tie between 2048 and 2050 in f16: to even.
        assert_eq!(a.add(f16::ONE), a);
        assert_eq!(a.add(f16::from_f32(3.0)), f16::from_f32(2052.0));
        assert_eq!(Float8E4m3fn::from_f32(300.0).mul(Float8E4m3fn::from_f32(2.0)).to_bits(), 0x7F);
        assert_eq!(Float6E2m3fn::from_f32(7.5).add(Float6E2m3fn::ONE).to_f32(), 7.5);
        assert_eq!(Float8E8m0fnu::ZERO.to_f32(), 2f32.powi(-127));
    }

    #[test]
    fn complex_arithmetic() {
        let i = Complex::new(f16::ZERO, f16::ONE);
        assert_eq!(i.mul(i), Complex::new(f16::from_f32(-1.0), f16::ZERO));
        assert_eq!(Complex::<f64>::ONE.add(Complex::<f64>::ONE), Complex::new(2.0, 0.0));
    }
}
