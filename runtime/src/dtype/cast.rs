//! The element cast between the built-in scalar types ([`cast`]), whose documentation holds its
//! rules; the exact values it goes through are in `value`.

use super::numeric::Numeric;
use super::value::convert;

/// Casts a scalar to another scalar type: dlspan's CPU reference for element conversions, which
/// device kernels reproduce bit for bit.
///
/// Every source value is first taken exactly (integers as 128-bit integers, floating-point values
/// as `f64`, which holds every `f32`, `f16`, `bf16` and minifloat value exactly), then rounded once
/// into the target:
///
/// | from \ to | `bool`, [`Bool`](super::Bool) | integer | `f64`, `f32` | `f16`, `bf16` | FP8 / FP6 / FP4 |
/// |---|---|---|---|---|---|
/// | `bool`, [`Bool`](super::Bool) (a nonzero byte is `true`) | the truth value, as 0 or 1 | 0 or 1 | 0.0 or 1.0 | 0.0 or 1.0 | the code of 0.0 or 1.0 |
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
///   included, but for [`Bool`](super::Bool): every cast into `Bool` gives the byte 0 or 1, a nonzero byte in
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
    convert(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::{Float8E4m3fn, Float8E8m0fnu};
    use half::{bf16, f16};
    use num_complex::Complex;

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
