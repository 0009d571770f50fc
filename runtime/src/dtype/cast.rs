//! The element cast between the built-in scalar types ([`cast`]) and the cast copy between host
//! views ([`MdspanMut::cast_from`](crate::MdspanMut::cast_from)).
//!
//! The rules are documented on [`cast`].

use super::Bool;
use super::minifloat::*;
use super::numeric::Numeric;
use crate::error::DlpackError;
use crate::space::HostAccessible;
use crate::view::{Extents, Layout, Mdspan, MdspanMut};
use core::any::TypeId;
use half::{bf16, f16};
use num_complex::Complex;

/// A scalar's exact value, the meeting point of every cast.
#[derive(Clone, Copy, Debug)]
pub enum Value {
    Bool(bool),
    Int(i128),
    UInt(u128),
    Float(f64),
    Complex(f64, f64),
}

/// The conversions every [`Numeric`] type provides to [`cast`]. Not nameable outside the crate,
/// which seals `Numeric`.
pub trait Castable: Copy + 'static {
    /// The exact value.
    fn to_value(self) -> Value;
    /// The value rounded into this type by the rules of the module documentation.
    fn from_value(value: Value) -> Self;
}

/// Casts a scalar to another scalar type: dlspan's CPU reference for element conversions, which
/// device kernels reproduce bit for bit.
///
/// Every source value is first taken exactly (integers as 128-bit integers, floating-point values
/// as `f64`, which holds every `f32`, `f16`, `bf16` and minifloat value exactly), then rounded once
/// into the target:
///
/// | from \ to | `bool`, [`Bool`] | integer | `f64`, `f32` | `f16`, `bf16` | FP8 / FP6 / FP4 |
/// |---|---|---|---|---|---|
/// | `bool`, [`Bool`] (a nonzero byte is `true`) | the truth value, as 0 or 1 | 0 or 1 | 0.0 or 1.0 | 0.0 or 1.0 | the code of 0.0 or 1.0 |
/// | integer | `x != 0` | two's complement wrap (Rust `as`) | nearest, ties to even | nearest, ties to even, rounded once | nearest, ties to even, rounded once; the format's overflow rule |
/// | floating point | `x != 0` (NaN is `true`) | toward zero, saturating at the type's bounds, NaN → 0 (Rust `as`) | nearest, ties to even; overflow → ±∞ | nearest, ties to even, rounded once; overflow → ±∞ | nearest, ties to even, rounded once; the format's overflow rule |
///
/// - "Rounded once": a value is never rounded to an intermediate type first. Integers beyond 2^24
///   and `f64` values reach `f16`, `bf16` and the minifloats through round-to-odd (Boldo &
///   Melquiond), which makes the final rounding exact to the value; FP8 → `f16` goes through the
///   FP8 value's exact `f32`.
/// - The minifloat overflow rules (±∞, NaN or the largest finite value, by format) and NaN codes
///   are those of [the encoding rules](crate::dtype#fp8-fp6-and-fp4-encoding); `e8m0fnu` has no
///   zero or sign, so 0, negative values and `false` become its NaN, and it is never `false`.
/// - NaN into another floating-point type becomes that type's quiet NaN with the input's sign
///   (`0x7E00` for `f16`, `0x7FC0` for `bf16`, `0x7FC0_0000` for `f32`, `0x7FF8_0000_0000_0000` for
///   `f64`, the minifloat's NaN code); a cast to the same type returns its input unchanged, bits
///   included, but for [`Bool`]: every cast into `Bool` gives the byte 0 or 1, a nonzero byte in
///   `true` out, as every cast into `bool` does (and as kernels do, which see `bool` and `Bool` as
///   one `kDLBool`).
/// - Complex numbers: to a real type, the real part (NumPy's `astype`); from a real type, the
///   imaginary part is 0; between complex types, each part; to `bool`, whether either part is
///   nonzero.
///
/// ```
/// use dlspan::dtype::{cast, Float8E4m3fn};
/// use dlspan::half::{bf16, f16};
/// assert_eq!(cast::<f32, i8>(300.7), 127); // saturating
/// assert_eq!(cast::<f32, u8>(f32::NAN), 0);
/// assert_eq!(cast::<i32, u8>(300), 44); // wrapping
/// assert_eq!(cast::<f32, Float8E4m3fn>(0.3).to_f32(), 0.3125);
/// assert_eq!(cast::<Float8E4m3fn, f16>(Float8E4m3fn::from_f32(448.0)), f16::from_f32(448.0));
/// // 2^24 + 2^16 + 1 is nearer to 2^24 + 2^17 than to 2^24; rounding through f32 first would tie
/// // and round down.
/// assert_eq!(cast::<i64, bf16>((1 << 24) + (1 << 16) + 1), bf16::from_f32(16_908_288.0));
/// ```
#[inline]
pub fn cast<S: Numeric, D: Numeric>(value: S) -> D {
    if TypeId::of::<S>() == TypeId::of::<D>() && TypeId::of::<S>() != TypeId::of::<Bool>() {
        // SAFETY: `S` and `D` are the same type.
        return unsafe { core::mem::transmute_copy::<S, D>(&value) };
    }
    D::from_value(value.to_value())
}

/// Rounds an unsigned integer to 53 significant bits toward zero, setting the lowest kept bit when
/// any dropped bit was set (round to odd): exact below 2^53, and a value that any later rounding
/// to at most 51 bits treats exactly as it would treat the integer.
fn odd_f64(magnitude: u128) -> f64 {
    if magnitude < 1 << 53 {
        return magnitude as f64;
    }
    let dropped = 128 - magnitude.leading_zeros() - 53;
    let sticky = magnitude & ((1 << dropped) - 1) != 0;
    let kept = (magnitude >> dropped) | u128::from(sticky);
    // kept < 2^53 converts exactly; the power of two (dropped ≤ 75) scales exactly.
    kept as f64 * f64::from_bits((1023 + u64::from(dropped)) << 52)
}

/// An integer's value rounded to odd at 53 bits, with its sign.
fn signed_odd_f64(negative: bool, magnitude: u128) -> f64 {
    let value = odd_f64(magnitude);
    if negative { -value } else { value }
}

/// An `f64` rounded to `f32` toward zero, the lowest bit set when inexact (round to odd); NaN and
/// infinities stay as they are, finite values beyond `f32::MAX` become `±f32::MAX`.
fn odd_f32(value: f64) -> f32 {
    let rounded = value as f32;
    if value.is_nan() || f64::from(rounded) == value {
        return rounded;
    }
    // Inexact: step back toward zero when rounding went away from it (infinity steps back to
    // f32::MAX), then mark the result odd.
    let truncated = if f64::from(rounded).abs() > value.abs() { rounded.to_bits() - 1 } else { rounded.to_bits() };
    f32::from_bits(truncated | 1)
}

/// A value rounded to odd at `f32` precision: the input of every rounding to `f16` and `bf16`.
fn odd_f32_of(value: Value) -> f32 {
    match value {
        Value::Bool(b) => f32::from(u8::from(b)),
        Value::Int(i) => odd_f32(signed_odd_f64(i < 0, i.unsigned_abs())),
        Value::UInt(u) => odd_f32(odd_f64(u)),
        Value::Float(f) | Value::Complex(f, _) => odd_f32(f),
    }
}

/// A value rounded to odd at `f64` precision: the input of every minifloat encoder.
fn odd_f64_of(value: Value) -> f64 {
    match value {
        Value::Bool(b) => f64::from(u8::from(b)),
        Value::Int(i) => signed_odd_f64(i < 0, i.unsigned_abs()),
        Value::UInt(u) => odd_f64(u),
        Value::Float(f) | Value::Complex(f, _) => f,
    }
}

/// The sign bit of a NaN's value, for the canonical NaN of the target.
fn negative(value: f64) -> bool {
    value.is_sign_negative()
}

impl Castable for bool {
    #[inline]
    fn to_value(self) -> Value {
        Value::Bool(self)
    }

    #[inline]
    fn from_value(value: Value) -> Self {
        match value {
            Value::Bool(b) => b,
            Value::Int(i) => i != 0,
            Value::UInt(u) => u != 0,
            // NaN compares unequal to zero: true, as C and NumPy.
            Value::Float(f) => f != 0.0,
            Value::Complex(re, im) => re != 0.0 || im != 0.0,
        }
    }
}

impl Castable for Bool {
    #[inline]
    fn to_value(self) -> Value {
        // Any nonzero byte is `true`, as C and NumPy read a boolean.
        Value::Bool(self.get())
    }

    #[inline]
    fn from_value(value: Value) -> Self {
        Bool::new(bool::from_value(value))
    }
}

macro_rules! integers {
    ($($ty:ty => $variant:ident),* $(,)?) => {$(
        impl Castable for $ty {
            #[inline]
            fn to_value(self) -> Value {
                Value::$variant(self.into())
            }

            #[inline]
            fn from_value(value: Value) -> Self {
                // Rust `as`: integers wrap, floats truncate toward zero and saturate, NaN is 0.
                match value {
                    Value::Bool(b) => b as $ty,
                    Value::Int(i) => i as $ty,
                    Value::UInt(u) => u as $ty,
                    Value::Float(f) | Value::Complex(f, _) => f as $ty,
                }
            }
        }
    )*};
}

integers! {
    i8 => Int, i16 => Int, i32 => Int, i64 => Int, i128 => Int,
    u8 => UInt, u16 => UInt, u32 => UInt, u64 => UInt, u128 => UInt,
}

impl Castable for f64 {
    #[inline]
    fn to_value(self) -> Value {
        Value::Float(self)
    }

    #[inline]
    fn from_value(value: Value) -> Self {
        match value {
            Value::Bool(b) => f64::from(u8::from(b)),
            // Rust's integer-to-float `as` rounds to nearest, ties to even.
            Value::Int(i) => i as f64,
            Value::UInt(u) => u as f64,
            Value::Float(f) | Value::Complex(f, _) if f.is_nan() => {
                f64::from_bits(u64::from(negative(f)) << 63 | 0x7FF8_0000_0000_0000)
            }
            Value::Float(f) | Value::Complex(f, _) => f,
        }
    }
}

impl Castable for f32 {
    #[inline]
    fn to_value(self) -> Value {
        Value::Float(self.into())
    }

    #[inline]
    fn from_value(value: Value) -> Self {
        match value {
            Value::Bool(b) => f32::from(u8::from(b)),
            Value::Int(i) => i as f32,
            Value::UInt(u) => u as f32,
            Value::Float(f) | Value::Complex(f, _) if f.is_nan() => {
                f32::from_bits(u32::from(negative(f)) << 31 | 0x7FC0_0000)
            }
            Value::Float(f) | Value::Complex(f, _) => f as f32,
        }
    }
}

macro_rules! halves {
    ($($ty:ty => $nan:expr),* $(,)?) => {$(
        impl Castable for $ty {
            #[inline]
            fn to_value(self) -> Value {
                Value::Float(self.to_f64())
            }

            #[inline]
            fn from_value(value: Value) -> Self {
                let odd = odd_f32_of(value);
                if odd.is_nan() {
                    return <$ty>::from_bits(u16::from(odd.is_sign_negative()) << 15 | $nan);
                }
                // `odd` rounds to nearest exactly as the value would (round to odd at 24 bits
                // leaves ≥ 2 extra bits beyond 11 or 8).
                <$ty>::from_f32(odd)
            }
        }
    )*};
}

halves! {
    f16 => 0x7E00,
    bf16 => 0x7FC0,
}

macro_rules! minifloats {
    ($($ty:ty),* $(,)?) => {$(
        impl Castable for $ty {
            #[inline]
            fn to_value(self) -> Value {
                Value::Float(self.to_f64())
            }

            #[inline]
            fn from_value(value: Value) -> Self {
                <$ty>::from_f64(odd_f64_of(value))
            }
        }
    )*};
}

minifloats! {
    Float8E3m4, Float8E4m3, Float8E4m3b11fnuz, Float8E4m3fn, Float8E4m3fnuz, Float8E5m2, Float8E5m2fnuz,
    Float8E8m0fnu, Float6E2m3fn, Float6E3m2fn, Float4E2m1fn,
}

impl<T: Castable> Castable for Complex<T> {
    #[inline]
    fn to_value(self) -> Value {
        match (self.re.to_value(), self.im.to_value()) {
            (Value::Float(re), Value::Float(im)) => Value::Complex(re, im),
            // Only floating-point parts are `Numeric`.
            (re, _) => re,
        }
    }

    #[inline]
    fn from_value(value: Value) -> Self {
        match value {
            Value::Complex(re, im) => Complex::new(T::from_value(Value::Float(re)), T::from_value(Value::Float(im))),
            real => Complex::new(T::from_value(real), T::from_value(Value::Float(0.0))),
        }
    }
}

impl<'a, T: Numeric, const R: usize, E: Extents<R>, L: Layout, S: HostAccessible> MdspanMut<'a, T, R, E, L, S> {
    /// Overwrites every element with the [`cast`] of the element at the same index of `source`
    /// (any element type, layout and strides; one shape), in this view's memory order.
    ///
    /// # Errors
    ///
    /// [`DlpackError::ShapeMismatch`] when the extents differ (nothing is written).
    ///
    /// ```
    /// use dlspan::{HostMdspan, HostMdspanMut, LayoutLeft};
    /// use dlspan::dtype::Float8E4m3fn;
    /// let source = [0.3f32, 1.0, 1000.0, -2.0, 0.0, 448.0];
    /// let source = HostMdspan::<f32, 2>::from_slice(&source, [2, 3])?;
    /// let mut codes = [Float8E4m3fn::default(); 6];
    /// let mut target = HostMdspanMut::<Float8E4m3fn, 2, LayoutLeft>::from_slice(&mut codes, [2, 3])?;
    /// target.cast_from(&source)?;
    /// assert_eq!(target[[0, 0]].to_f32(), 0.3125);
    /// assert!(target[[0, 2]].is_nan()); // e4m3fn has no infinity
    /// assert_eq!(codes[5].to_f32(), 448.0); // column-major: [1, 2] is the last element
    /// let mut short = [Float8E4m3fn::default(); 3];
    /// let mut short = HostMdspanMut::<Float8E4m3fn, 2>::from_slice(&mut short, [1, 3])?;
    /// assert!(matches!(short.cast_from(&source), Err(dlspan::DlpackError::ShapeMismatch { .. })));
    /// # Ok::<(), dlspan::DlpackError>(())
    /// ```
    pub fn cast_from<U: Numeric, E2: Extents<R>, L2: Layout, S2: HostAccessible>(
        &mut self,
        source: &Mdspan<'_, U, R, E2, L2, S2>,
    ) -> Result<(), DlpackError> {
        self.zip_with(source, |target, &value| *target = cast(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_to_odd_keeps_the_sticky_bit() {
        // 2^53 + 1 keeps 53 bits: 2^53 + 0 with the dropped one marked in the lowest kept bit.
        assert_eq!(odd_f64((1 << 53) + 1), ((1u64 << 53) + 2) as f64);
        assert_eq!(odd_f64(1 << 60), (1u64 << 60) as f64);
        assert_eq!(odd_f32(1.0 + f64::EPSILON), f32::from_bits(1f32.to_bits() | 1));
        assert_eq!(odd_f32(1e300), f32::MAX);
        assert_eq!(odd_f32(-1e-300), -f32::from_bits(1));
        assert_eq!(odd_f32(0.5), 0.5);
    }

    #[test]
    fn large_integers_round_once() {
        // Halfway between two bf16 values at 2^56, plus one: rounds up, not to even.
        let x = (1i64 << 56) + (1 << 48) + 1;
        assert_eq!(cast::<i64, bf16>(x), bf16::from_f32(((1u64 << 56) + (1 << 49)) as f32));
        assert_eq!(cast::<i64, bf16>(x - 1), bf16::from_f32((1u64 << 56) as f32));
        assert_eq!(cast::<u128, f16>(u128::MAX), f16::INFINITY);
        assert_eq!(cast::<i128, Float8E8m0fnu>(3 << 100).to_bits(), 127 + 102);
    }

    #[test]
    fn f64_rounds_once_into_narrow_types() {
        // 1 + 2^-8 is halfway between two bf16 values; 2^-40 more rounds up. Through f32 (which
        // drops the 2^-40) it would be a tie, rounded down to even.
        let x = 1.0 + 2f64.powi(-8) + 2f64.powi(-40);
        assert_eq!(cast::<f64, bf16>(x), bf16::from_f32(1.0 + 2f32.powi(-7)));
        assert_eq!(cast::<f64, bf16>(1.0 + 2f64.powi(-8)), bf16::ONE);
        let y = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(cast::<f64, f16>(y), f16::from_f32(1.0 + 2f32.powi(-10)));
        assert_eq!(cast::<f64, Float8E4m3fn>(1.0 + 2f64.powi(-4) + 2f64.powi(-40)).to_f32(), 1.125);
    }

    #[test]
    fn nan_becomes_the_targets_quiet_nan() {
        let payload = f32::from_bits(0xFFC0_1234);
        assert_eq!(cast::<f32, f64>(payload).to_bits(), 0xFFF8_0000_0000_0000);
        assert_eq!(cast::<f32, f16>(payload).to_bits(), 0xFE00);
        assert_eq!(cast::<f32, bf16>(f32::NAN).to_bits(), 0x7FC0);
        assert_eq!(cast::<f32, f32>(payload).to_bits(), 0xFFC0_1234);
        assert_eq!(cast::<f32, Float8E4m3fn>(payload).to_bits(), 0xFF);
        assert_eq!(cast::<f32, i32>(f32::NAN), 0);
    }

    #[test]
    fn complex_parts() {
        let z = Complex::new(1.5f32, -2.0);
        assert_eq!(cast::<Complex<f32>, f64>(z), 1.5);
        assert_eq!(cast::<Complex<f32>, Complex<f16>>(z), Complex::new(f16::from_f32(1.5), f16::from_f32(-2.0)));
        assert_eq!(cast::<i32, Complex<f64>>(3), Complex::new(3.0, 0.0));
        assert!(cast::<Complex<f64>, bool>(Complex::new(0.0, 1.0)));
    }
}
