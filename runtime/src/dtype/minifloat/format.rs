//! The bit-level rules of the minifloat formats: one description per format, a decoder to `f32`
//! (evaluated at compile time into a table per format) and an encoder from `f64`.
//!
//! The encoder follows ml_dtypes' conversion (`float8.h`, `ConvertImpl`) step by step, so that every
//! input rounds to the same code: normalise the input to `1.f × 2^e`, shift its significand to the
//! target's precision (further for results below the target's normal range) while rounding to
//! nearest, ties to even, then add the biased exponent, letting a rounding carry flow into it. An
//! `f32` input is encoded through its exact `f64` value, which changes nothing: the rounding sees
//! the same number.

/// How a format spends its special bit patterns.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Specials {
    /// IEEE-like: an all-ones exponent means infinity (zero mantissa) or NaN.
    Ieee,
    /// Finite (`fn`): no infinities; NaN is only the all-ones exponent and mantissa.
    FiniteAllOnesNan,
    /// Finite, unsigned zero (`fnuz`): no infinities, no negative zero; NaN is the sign bit alone.
    FiniteUnsignedZero,
    /// Finite with no NaN at all (FP6, FP4).
    FiniteNoNan,
    /// No sign bit, no zero, no infinities; all ones is NaN; exponent 0 is a normal value
    /// (`e8m0fnu`, the MX block scale).
    UnsignedNoZero,
}

/// A minifloat format: widths, bias and special values.
#[derive(Clone, Copy)]
pub(crate) struct Format {
    pub(crate) exponent_bits: u32,
    pub(crate) mantissa_bits: u32,
    pub(crate) bias: i32,
    pub(crate) specials: Specials,
}

/// `f64` bits of infinity (the magnitude above which a pattern is NaN).
const F64_INFINITY: u64 = 0x7FF0_0000_0000_0000;
/// `f64` significand bits without the implicit one.
const F64_MANTISSA_BITS: u32 = 52;

impl Format {
    const fn signed(self) -> bool {
        !matches!(self.specials, Specials::UnsignedNoZero)
    }

    /// The sign bit of a code (0 for unsigned formats).
    const fn sign_bit(self) -> u8 {
        if self.signed() { 1 << (self.exponent_bits + self.mantissa_bits) } else { 0 }
    }

    /// The bits a code of this format occupies; higher bits of a storage byte are ignored.
    const fn mask(self) -> u8 {
        let width = self.exponent_bits + self.mantissa_bits + self.signed() as u32;
        if width >= 8 { 0xFF } else { (1 << width) - 1 }
    }

    const fn exponent_all_ones(self) -> u8 {
        ((1u32 << self.exponent_bits) - 1) as u8
    }

    /// The code of the largest finite value, without sign.
    const fn max_finite(self) -> u8 {
        let all_ones = (((1u32 << (self.exponent_bits + self.mantissa_bits)) - 1) & 0xFF) as u8;
        match self.specials {
            Specials::Ieee => (self.exponent_all_ones() << self.mantissa_bits) - 1,
            Specials::FiniteAllOnesNan | Specials::UnsignedNoZero => all_ones - 1,
            Specials::FiniteUnsignedZero | Specials::FiniteNoNan => all_ones,
        }
    }

    /// The code a NaN input becomes: the format's quiet NaN, with the input's sign where the format
    /// has signed NaNs (as ml_dtypes); formats without NaN give their largest positive value (as
    /// CUDA's FP6/FP4 conversions).
    const fn nan(self, negative: bool) -> u8 {
        let sign = if negative { self.sign_bit() } else { 0 };
        match self.specials {
            // The quiet NaN: all-ones exponent, top mantissa bit set.
            Specials::Ieee => sign | (self.exponent_all_ones() << self.mantissa_bits) | (1 << (self.mantissa_bits - 1)),
            Specials::FiniteAllOnesNan => sign | (self.max_finite() + 1),
            Specials::FiniteUnsignedZero => self.sign_bit(),
            Specials::FiniteNoNan => self.max_finite(),
            Specials::UnsignedNoZero => 0xFF,
        }
    }

    /// The code of a value too large for the format: infinity where the format has one, otherwise
    /// NaN where it has one, otherwise the largest finite value; with `saturate`, always the largest
    /// finite value (CUDA's `__NV_SATFINITE`).
    const fn overflow(self, negative: bool, saturate: bool) -> u8 {
        let sign = if negative { self.sign_bit() } else { 0 };
        if saturate {
            return sign | self.max_finite();
        }
        match self.specials {
            Specials::Ieee => sign | (self.exponent_all_ones() << self.mantissa_bits),
            Specials::FiniteAllOnesNan | Specials::FiniteUnsignedZero | Specials::UnsignedNoZero => self.nan(negative),
            Specials::FiniteNoNan => sign | self.max_finite(),
        }
    }

    /// The exact value of a code as `f32` bits (every value of these formats is an `f32`).
    pub(crate) const fn decode(self, code: u8) -> f32 {
        let code = code & self.mask();
        let m = self.mantissa_bits;
        let negative = code & self.sign_bit() != 0;
        let sign = if negative { 1u32 << 31 } else { 0 };
        let exponent = ((code >> m) & self.exponent_all_ones()) as i32;
        let mantissa = (code & ((1u8 << m).wrapping_sub(1))) as u32;
        let all_ones = exponent == self.exponent_all_ones() as i32;
        let nan = f32::from_bits(sign | 0x7FC0_0000);
        match self.specials {
            Specials::Ieee if all_ones => {
                return if mantissa == 0 { f32::from_bits(sign | 0x7F80_0000) } else { nan };
            }
            Specials::FiniteAllOnesNan if all_ones && mantissa == (1 << m) - 1 => return nan,
            Specials::FiniteUnsignedZero if code == self.sign_bit() => return f32::NAN,
            Specials::UnsignedNoZero if code == 0xFF => return f32::NAN,
            _ => {}
        }
        let subnormal = exponent == 0 && self.specials.has_subnormals();
        if subnormal && mantissa == 0 {
            return f32::from_bits(sign);
        }
        // The value as 2^p · 1.f: for subnormals, `mantissa · 2^(1 - bias - m)` with its top bit at
        // position `top`; for normals, `1.mantissa · 2^(exponent - bias)`.
        let (power, fraction) = if subnormal {
            let top = 31 - mantissa.leading_zeros();
            (top as i32 + 1 - self.bias - m as i32, (mantissa ^ (1 << top)) << (23 - top))
        } else {
            (exponent - self.bias, mantissa << (23 - m))
        };
        let biased = power + 127;
        let bits = if biased > 0 {
            ((biased as u32) << 23) | fraction
        } else {
            // Below f32's normal range (only e8m0fnu's 2^-127): an f32 subnormal, exact.
            ((1 << 23) | fraction) >> (1 - biased)
        };
        f32::from_bits(sign | bits)
    }

    /// Every code's value, indexed by the storage byte (bits above the format ignored).
    pub(crate) const fn decode_table(self) -> [f32; 256] {
        let mut table = [0f32; 256];
        let mut code = 0;
        while code < 256 {
            table[code] = self.decode(code as u8);
            code += 1;
        }
        table
    }

    /// The code nearest to `x` (ties to even), with this format's rules for what it cannot hold:
    /// see [`overflow`](Self::overflow) and [`nan`](Self::nan); zero and negative inputs to an
    /// unsigned format without zero are NaN; a tiny negative input of a format without negative
    /// zero rounds to `+0`.
    pub(crate) const fn encode(self, x: f64, saturate: bool) -> u8 {
        let bits = x.to_bits();
        let negative = bits >> 63 != 0;
        let magnitude = bits & !(1 << 63);
        if magnitude > F64_INFINITY {
            return self.nan(negative);
        }
        if !self.signed() && (negative || magnitude == 0) {
            // No sign and no zero: NaN (negative infinity included).
            return self.nan(false);
        }
        if magnitude == F64_INFINITY {
            return self.overflow(negative, saturate);
        }
        let sign = if negative { self.sign_bit() } else { 0 };
        if magnitude == 0 {
            return self.signed_zero(sign);
        }
        // 1. Normalise: `significand` holds the implicit one at bit 52.
        let biased = (magnitude >> F64_MANTISSA_BITS) as i32;
        let fraction = magnitude & ((1 << F64_MANTISSA_BITS) - 1);
        let (exponent, significand) = if biased == 0 {
            // An f64 subnormal: shift its leading one up to bit 52.
            let shift = fraction.leading_zeros() - (63 - F64_MANTISSA_BITS);
            (-1022 - shift as i32, fraction << shift)
        } else {
            (biased - 1023, (1 << F64_MANTISSA_BITS) | fraction)
        };
        // 2. The target's biased exponent minus one: the implicit one added below restores it.
        // Below zero, the result is subnormal and the significand shifts further right.
        let base = exponent + self.bias - 1;
        let denormal = if base < 0 { -base } else { 0 };
        let mut shift = (F64_MANTISSA_BITS - self.mantissa_bits) as i32 + denormal;
        if shift > F64_MANTISSA_BITS as i32 + 2 {
            // Enough to round everything to zero; keeps the shift inside 64 bits.
            shift = F64_MANTISSA_BITS as i32 + 2;
        }
        let shift = shift as u32;
        // 3. Round to nearest even: add half an ulp, less one unless the kept lowest bit is odd.
        let odd = (significand >> shift) & 1;
        let rounded = (significand + odd + (1 << (shift - 1)) - 1) >> shift;
        // 4. Pack: a carry out of the mantissa moves into the exponent, as it should.
        let exponent_field = if base > 0 { base as u64 } else { 0 };
        let result = rounded + (exponent_field << self.mantissa_bits);
        if result > self.max_finite() as u64 {
            return self.overflow(negative, saturate);
        }
        if result == 0 {
            return self.signed_zero(sign);
        }
        sign | result as u8
    }

    /// Zero with the input's sign, where the format has a negative zero.
    const fn signed_zero(self, sign: u8) -> u8 {
        if matches!(self.specials, Specials::FiniteUnsignedZero) { 0 } else { sign }
    }
}

impl Specials {
    /// Whether exponent 0 holds subnormals and zero (all formats but `e8m0fnu`).
    const fn has_subnormals(self) -> bool {
        !matches!(self, Self::UnsignedNoZero)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const E4M3FN: Format = Format { exponent_bits: 4, mantissa_bits: 3, bias: 7, specials: Specials::FiniteAllOnesNan };
    const E5M2: Format = Format { exponent_bits: 5, mantissa_bits: 2, bias: 15, specials: Specials::Ieee };
    const E8M0: Format = Format { exponent_bits: 8, mantissa_bits: 0, bias: 127, specials: Specials::UnsignedNoZero };
    const E2M1: Format = Format { exponent_bits: 2, mantissa_bits: 1, bias: 1, specials: Specials::FiniteNoNan };

    #[test]
    fn rounding_at_the_top_of_e4m3fn() {
        assert_eq!(E4M3FN.encode(448.0, false), 0x7E);
        // 464 is the midpoint between 448 (even mantissa) and the NaN pattern: ties to even.
        assert_eq!(E4M3FN.encode(464.0, false), 0x7E);
        assert_eq!(E4M3FN.encode(464.0 + 1e-9, false), 0x7F);
        assert_eq!(E4M3FN.encode(-1e30, false), 0xFF);
        assert_eq!(E4M3FN.encode(-1e30, true), 0xFE);
        assert_eq!(E4M3FN.encode(f64::INFINITY, true), 0x7E);
    }

    #[test]
    fn subnormals_and_zero() {
        // e4m3fn's smallest subnormal is 2^-9; half of it ties to zero, just above rounds up.
        assert_eq!(E4M3FN.encode(2f64.powi(-10), false), 0x00);
        assert_eq!(E4M3FN.encode(2f64.powi(-10) * 1.0001, false), 0x01);
        assert_eq!(E4M3FN.encode(-0.0, false), 0x80);
        assert_eq!(E4M3FN.decode(0x01), 2f32.powi(-9));
        assert_eq!(E5M2.encode(f64::from_bits(1), false), 0x00);
        assert_eq!(E5M2.encode(f64::NEG_INFINITY, false), 0xFC);
    }

    #[test]
    fn e8m0_rounds_ties_up_and_has_no_zero() {
        assert_eq!(E8M0.encode(3.0, false), 0x81);
        assert_eq!(E8M0.encode(1.0, false), 0x7F);
        assert_eq!(E8M0.encode(0.0, false), 0xFF);
        assert_eq!(E8M0.encode(-1.0, false), 0xFF);
        assert_eq!(E8M0.decode(0), 2f32.powi(-127));
        assert_eq!(E8M0.encode(2f64.powi(-127), false), 0x00);
    }

    #[test]
    fn fp4_saturates_and_decodes_every_code() {
        assert_eq!(E2M1.encode(100.0, false), 0x7);
        assert_eq!(E2M1.encode(-100.0, false), 0xF);
        assert_eq!(E2M1.encode(f64::NAN, false), 0x7);
        let values: Vec<f32> = (0..16).map(|c| E2M1.decode(c)).collect();
        assert_eq!(values, [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]);
        for code in 0..16u8 {
            assert_eq!(E2M1.encode(f64::from(E2M1.decode(code)), false), code);
        }
    }
}
