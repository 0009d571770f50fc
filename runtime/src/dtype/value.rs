//! The exact value of a scalar ([`Value`]), where every element cast meets, and the conversions of
//! each built-in scalar type to and from it ([`Castable`]): the rounding rules that
//! [`cast`](super::cast) documents. Both `cast` and [`Numeric`](super::Numeric) stand on it, so it
//! sits below them.

use super::Bool;
use super::minifloat::*;
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

/// The conversions every [`Numeric`](super::Numeric) type provides to [`cast`](super::cast). Not
/// nameable outside the crate, which seals `Numeric`.
pub trait Castable: Copy + 'static {
    /// The exact value.
    fn to_value(self) -> Value;
    /// The value rounded into this type by the rules of [`cast`](super::cast).
    fn from_value(value: Value) -> Self;
}

/// `value` as a `D`, by the rules of [`cast`](super::cast) (whose body this is): the input unchanged
/// when `S` and `D` are one type (bits included), but for [`Bool`], whose casts give the byte 0 or
/// 1; otherwise its exact value, rounded once into `D`.
#[inline]
pub(crate) fn convert<S: Castable, D: Castable>(value: S) -> D {
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
}
