//! The conversions of cast kernels: `dtype::cast`'s rules written as one C++ function per (output,
//! input) scalar pair, on the preamble's building blocks (exact decoding, rounding to odd, the
//! minifloat encoder, Rust `as` for integers).

use crate::dtype::{
    Float8E3m4, Float8E4m3, Float8E4m3b11fnuz, Float8E4m3fn, Float8E4m3fnuz, Float8E5m2, Float8E5m2fnuz, Float8E8m0fnu,
    Format, Specials,
};
use crate::kernel::ScalarType;

/// How the input value enters a conversion.
enum Source {
    /// An integer (or `bool`, as 0 or 1) named `x`.
    Int { bits: u8, signed: bool },
    /// A `double` named `x`.
    Double,
    /// A C++ expression of type `float` holding the value exactly.
    Float(String),
}

/// The name of the parameter of `dl_cast<to, from>`: `b` for a boolean, whose body then names its
/// truth value, 0 or 1, `x`; `x` for every other type.
pub(crate) fn parameter(from: ScalarType) -> &'static str {
    if from == ScalarType::Bool { "b" } else { "x" }
}

/// The body of `dl_cast<to, from>(x)` (of `dl_cast<to, dl_bool>(b)` for a boolean input).
pub(crate) fn conversion(to: ScalarType, from: ScalarType) -> String {
    if to == from && to == ScalarType::Bool {
        // Any byte in, 0 or 1 out: `bool` and `Bool` share this kernel, and the output may be a
        // `bool` (as `dtype::cast` into `Bool` gives 0 or 1).
        return "  return dl_truth(b);\n".to_owned();
    }
    if to == from {
        // A cast to the same type returns its input, bits included.
        return "  return x;\n".to_owned();
    }
    // A boolean enters as its truth value: any nonzero byte is 1.
    let prologue = if from == ScalarType::Bool { "  const unsigned char x = b.bits != 0;\n" } else { "" };
    let source = match from {
        ScalarType::Bool => Source::Int { bits: 1, signed: false },
        ScalarType::Int { bits, signed } => Source::Int { bits, signed },
        ScalarType::F64 => Source::Double,
        ScalarType::F32 => Source::Float("x".to_owned()),
        ScalarType::F16 => Source::Float("dl_f16_to_f32(x.bits)".to_owned()),
        ScalarType::Bf16 => Source::Float("dl_bf16_to_f32(x.bits)".to_owned()),
        minifloat => Source::Float(format!("{}::decode(x.bits)", format_type(minifloat))),
    };
    let value = match &source {
        Source::Int { .. } | Source::Double => "x".to_owned(),
        Source::Float(v) => v.clone(),
    };
    let result = match to {
        ScalarType::Bool => {
            let truth = match source {
                Source::Int { .. } => "x != 0".to_owned(),
                Source::Double => "x != 0.0".to_owned(),
                // NaN is nonzero: true.
                Source::Float(v) => format!("{v} != 0.0f"),
            };
            format!("dl_bool{{(unsigned char)({truth})}}")
        }
        ScalarType::Int { bits, signed } => match source {
            // Two's complement wrapping, as Rust's `as`.
            Source::Int { .. } => format!("({})x", to.c_name()),
            Source::Double | Source::Float(_) => format!(
                "dl_float_to_int<{}, {}, {bits}, {signed}>({value})",
                to.c_name(),
                ScalarType::Int { bits, signed: false }.c_name()
            ),
        },
        ScalarType::F64 | ScalarType::F32 => {
            let target = if to == ScalarType::F64 { "double" } else { "float" };
            match source {
                Source::Int { bits: 128, signed } => {
                    format!("dl_{}128_to_float<{target}>(x)", if signed { "i" } else { "u" })
                }
                // Nearest, ties to even, by the hardware's conversion (exact for `bool`).
                Source::Int { .. } => format!("({target})x"),
                Source::Double | Source::Float(_) => {
                    format!("dl_cast_{}({value})", if target == "double" { "f64" } else { "f32" })
                }
            }
        }
        narrow => {
            let rounded = match source {
                Source::Int { bits: ..=16, .. } => "(float)x".to_owned(),
                Source::Int { bits: 128, signed: true } => "dl_odd_f32_i128(x)".to_owned(),
                Source::Int { bits: 128, signed: false } => "dl_odd_f32_u128(x)".to_owned(),
                Source::Int { signed: true, .. } => "dl_odd_f32_i64((long long)x)".to_owned(),
                Source::Int { signed: false, .. } => "dl_odd_f32_u64((dl_u64)x)".to_owned(),
                Source::Double => "dl_odd_f32(x)".to_owned(),
                Source::Float(v) => v,
            };
            match narrow {
                ScalarType::F16 => format!("dl_cast_f16({rounded})"),
                ScalarType::Bf16 => format!("dl_cast_bf16({rounded})"),
                minifloat => format!("{}{{{}::encode({rounded})}}", minifloat.c_name(), format_type(minifloat)),
            }
        }
    };
    format!("{prologue}  return {result};\n")
}

/// Whether a scalar needs NVRTC's `--device-int128`.
pub(crate) fn is_int128(scalar: ScalarType) -> bool {
    matches!(scalar, ScalarType::Int { bits: 128, .. })
}

/// The preamble's `dl_minifloat<E, M, BIAS, SPECIALS>` of an FP8 scalar, from dlspan's own format
/// description (one source for the CPU and GPU encoders).
fn format_type(scalar: ScalarType) -> String {
    let format: Format = match scalar {
        ScalarType::F8E3m4 => Float8E3m4::FORMAT,
        ScalarType::F8E4m3 => Float8E4m3::FORMAT,
        ScalarType::F8E4m3b11fnuz => Float8E4m3b11fnuz::FORMAT,
        ScalarType::F8E4m3fn => Float8E4m3fn::FORMAT,
        ScalarType::F8E4m3fnuz => Float8E4m3fnuz::FORMAT,
        ScalarType::F8E5m2 => Float8E5m2::FORMAT,
        ScalarType::F8E5m2fnuz => Float8E5m2fnuz::FORMAT,
        ScalarType::F8E8m0fnu => Float8E8m0fnu::FORMAT,
        other => unreachable!("{other:?} is not a minifloat"),
    };
    let specials = match format.specials {
        Specials::Ieee => "DL_IEEE",
        Specials::FiniteAllOnesNan => "DL_FINITE_ALL_ONES_NAN",
        Specials::FiniteUnsignedZero => "DL_FINITE_UNSIGNED_ZERO",
        Specials::FiniteNoNan => "DL_FINITE_NO_NAN",
        Specials::UnsignedNoZero => "DL_UNSIGNED_NO_ZERO",
    };
    format!("dl_minifloat<{}, {}, {}, {specials}>", format.exponent_bits, format.mantissa_bits, format.bias)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_follow_the_cast_table() {
        assert_eq!(conversion(ScalarType::F32, ScalarType::F32), "  return x;\n");
        assert_eq!(
            conversion(ScalarType::Int { bits: 8, signed: false }, ScalarType::Int { bits: 32, signed: true }),
            "  return (unsigned char)x;\n"
        );
        assert!(conversion(ScalarType::F16, ScalarType::F64).contains("dl_cast_f16(dl_odd_f32(x))"));
        assert!(conversion(ScalarType::Bf16, ScalarType::Int { bits: 64, signed: true }).contains("dl_odd_f32_i64"));
        assert!(
            conversion(ScalarType::F8E4m3fn, ScalarType::F32)
                .contains("dl_minifloat<4, 3, 7, DL_FINITE_ALL_ONES_NAN>::encode(x)")
        );
        assert!(
            conversion(ScalarType::F32, ScalarType::F8E8m0fnu)
                .contains("dl_minifloat<8, 0, 127, DL_UNSIGNED_NO_ZERO>::decode")
        );
        assert!(
            conversion(ScalarType::Int { bits: 128, signed: false }, ScalarType::F64)
                .contains("dl_float_to_int<unsigned __int128, unsigned __int128, 128, false>")
        );
        assert!(
            conversion(ScalarType::Bool, ScalarType::F16)
                .contains("dl_bool{(unsigned char)(dl_f16_to_f32(x.bits) != 0.0f)}")
        );
        // A boolean input is read as a truth value, never as a C++ `bool`, and written as 0 or 1.
        assert_eq!(
            conversion(ScalarType::F32, ScalarType::Bool),
            "  const unsigned char x = b.bits != 0;\n  return (float)x;\n"
        );
        assert_eq!(conversion(ScalarType::Bool, ScalarType::Bool), "  return dl_truth(b);\n");
        assert_eq!((parameter(ScalarType::Bool), parameter(ScalarType::F32)), ("b", "x"));
    }
}
