//! Storage types for DLPack's FP8, FP6 and FP4 codes.
//!
//! Each type holds the raw bits (`from_bits` / `to_bits`) and decodes to `f32` with `to_f32`.
//! Equality is bitwise. Single FP6 and FP4 values are *padded* storage (one value in the low bits of
//! a byte, exchanged with the DLPack flag `IS_SUBBYTE_TYPE_PADDED`); the `X2`/`X4` types are the
//! *packed* forms (several values per byte, low bits first), such as PyTorch's `float4_e2m1fn_x2`,
//! which DLPack describes as `(17, 4, 2)`.

use super::{DlElement, PlainBits};
use crate::ffi::{DLDataType, DLDataTypeCode};
use core::fmt;

/// How a minifloat format spends its special bit patterns.
#[derive(Clone, Copy)]
enum Specials {
    /// IEEE-like: an all-ones exponent means infinity (zero mantissa) or NaN.
    Ieee,
    /// Finite (`fn`): no infinities; NaN is only the all-ones exponent and mantissa.
    FiniteAllOnesNan,
    /// Finite, unsigned zero (`fnuz`): no infinities, no negative zero; NaN is the sign bit alone.
    FiniteUnsignedZero,
    /// Finite with no NaN at all (FP6, FP4).
    FiniteNoNan,
}

#[derive(Clone, Copy)]
struct Format {
    exponent_bits: u32,
    mantissa_bits: u32,
    bias: i32,
    specials: Specials,
}

fn decode(bits: u8, format: Format) -> f32 {
    let Format { exponent_bits, mantissa_bits, bias, specials } = format;
    let bits = u32::from(bits);
    let width = exponent_bits + mantissa_bits;
    let negative = (bits >> width) & 1 == 1;
    let exponent = (bits >> mantissa_bits) & ((1 << exponent_bits) - 1);
    let mantissa = bits & ((1 << mantissa_bits) - 1);
    let exponent_all_ones = exponent == (1 << exponent_bits) - 1;
    let mantissa_all_ones = mantissa == (1 << mantissa_bits) - 1;
    match specials {
        Specials::Ieee if exponent_all_ones => {
            return if mantissa == 0 { if negative { f32::NEG_INFINITY } else { f32::INFINITY } } else { f32::NAN };
        }
        Specials::FiniteAllOnesNan if exponent_all_ones && mantissa_all_ones => return f32::NAN,
        Specials::FiniteUnsignedZero if negative && exponent == 0 && mantissa == 0 => return f32::NAN,
        _ => {}
    }
    // Every value of these formats is exactly representable in f32.
    let scale = |power: i32| 2f32.powi(power);
    let magnitude = if exponent == 0 {
        mantissa as f32 * scale(1 - bias - mantissa_bits as i32)
    } else {
        (1.0 + mantissa as f32 * scale(-(mantissa_bits as i32))) * scale(exponent as i32 - bias)
    };
    if negative { -magnitude } else { magnitude }
}

macro_rules! minifloat {
    (
        $(#[$meta:meta])*
        $name:ident: $code:ident, bits $bits:expr, e $e:expr, m $m:expr, bias $bias:expr, $specials:ident, mask $mask:expr;
    ) => {
        $(#[$meta])*
        #[repr(transparent)]
        #[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub struct $name(u8);

        impl $name {
            /// Wraps raw bits (bits above the format's width are kept as given).
            ///
            /// ```
            #[doc = concat!("use dlspan::dtype::", stringify!($name), ";")]
            #[doc = concat!("assert_eq!(", stringify!($name), "::from_bits(0xFF).to_bits(), 0xFF);")]
            /// ```
            pub const fn from_bits(bits: u8) -> Self {
                Self(bits)
            }

            /// The raw bits.
            ///
            /// ```
            #[doc = concat!("use dlspan::dtype::", stringify!($name), ";")]
            #[doc = concat!("assert_eq!(", stringify!($name), "::default().to_bits(), 0);")]
            /// ```
            pub const fn to_bits(self) -> u8 {
                self.0
            }

            /// The value as `f32` (exact: every value of the format is representable).
            ///
            /// ```
            #[doc = concat!("use dlspan::dtype::", stringify!($name), ";")]
            #[doc = concat!(
                "let one = ", stringify!($name), "::from_bits(", stringify!($bias), " << ", stringify!($m), ");",
                " // exponent = bias, mantissa 0"
            )]
            /// assert_eq!(one.to_f32(), 1.0);
            /// ```
            pub fn to_f32(self) -> f32 {
                decode(self.0 & $mask, Format { exponent_bits: $e, mantissa_bits: $m, bias: $bias, specials: Specials::$specials })
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.to_f32(), f)
            }
        }

        // SAFETY: `#[repr(transparent)]` over `u8`: one byte, any bit pattern valid, no interior
        // mutability. For 8-bit codes the byte is exactly the element; for 6- and 4-bit codes it is
        // the padded storage of one lane (bits < 8 and size == lanes == 1).
        unsafe impl DlElement for $name {
            const DTYPE: DLDataType = DLDataType::new(DLDataTypeCode::$code, $bits, 1);
        }

        // SAFETY: `#[repr(transparent)]` over `u8`.
        unsafe impl PlainBits for $name {}
    };
}

minifloat! {
    /// FP8 `e3m4` (`kDLFloat8_e3m4`): 3 exponent bits, 4 mantissa bits, IEEE-like.
    ///
    /// ```
    /// use dlspan::dtype::Float8E3m4;
    /// assert_eq!(Float8E3m4::from_bits(0x30).to_f32(), 1.0);
    /// ```
    Float8E3m4: kDLFloat8_e3m4, bits 8, e 3, m 4, bias 3, Ieee, mask 0xFF;
}
minifloat! {
    /// FP8 `e4m3` (`kDLFloat8_e4m3`): 4 exponent bits, 3 mantissa bits, IEEE-like (with infinities).
    ///
    /// ```
    /// use dlspan::dtype::Float8E4m3;
    /// assert_eq!(Float8E4m3::from_bits(0x78).to_f32(), f32::INFINITY);
    /// ```
    Float8E4m3: kDLFloat8_e4m3, bits 8, e 4, m 3, bias 7, Ieee, mask 0xFF;
}
minifloat! {
    /// FP8 `e4m3b11fnuz` (`kDLFloat8_e4m3b11fnuz`): exponent bias 11, finite, no negative zero.
    ///
    /// ```
    /// use dlspan::dtype::Float8E4m3b11fnuz;
    /// assert!(Float8E4m3b11fnuz::from_bits(0x80).to_f32().is_nan());
    /// assert_eq!(Float8E4m3b11fnuz::from_bits(0x58).to_f32(), 1.0);
    /// ```
    Float8E4m3b11fnuz: kDLFloat8_e4m3b11fnuz, bits 8, e 4, m 3, bias 11, FiniteUnsignedZero, mask 0xFF;
}
minifloat! {
    /// FP8 `e4m3fn` (`kDLFloat8_e4m3fn`): the OCP/CUDA `e4m3` (`__nv_fp8_e4m3`), finite, max 448.
    ///
    /// ```
    /// use dlspan::dtype::Float8E4m3fn;
    /// assert_eq!(Float8E4m3fn::from_bits(0x7E).to_f32(), 448.0);
    /// assert!(Float8E4m3fn::from_bits(0x7F).to_f32().is_nan());
    /// ```
    Float8E4m3fn: kDLFloat8_e4m3fn, bits 8, e 4, m 3, bias 7, FiniteAllOnesNan, mask 0xFF;
}
minifloat! {
    /// FP8 `e4m3fnuz` (`kDLFloat8_e4m3fnuz`): bias 8, finite, no negative zero.
    ///
    /// ```
    /// use dlspan::dtype::Float8E4m3fnuz;
    /// assert_eq!(Float8E4m3fnuz::from_bits(0x40).to_f32(), 1.0);
    /// ```
    Float8E4m3fnuz: kDLFloat8_e4m3fnuz, bits 8, e 4, m 3, bias 8, FiniteUnsignedZero, mask 0xFF;
}
minifloat! {
    /// FP8 `e5m2` (`kDLFloat8_e5m2`): the OCP/CUDA `e5m2` (`__nv_fp8_e5m2`), IEEE-like, max 57344.
    ///
    /// ```
    /// use dlspan::dtype::Float8E5m2;
    /// assert_eq!(Float8E5m2::from_bits(0x7B).to_f32(), 57344.0);
    /// ```
    Float8E5m2: kDLFloat8_e5m2, bits 8, e 5, m 2, bias 15, Ieee, mask 0xFF;
}
minifloat! {
    /// FP8 `e5m2fnuz` (`kDLFloat8_e5m2fnuz`): bias 16, finite, no negative zero.
    ///
    /// ```
    /// use dlspan::dtype::Float8E5m2fnuz;
    /// assert_eq!(Float8E5m2fnuz::from_bits(0x40).to_f32(), 1.0);
    /// ```
    Float8E5m2fnuz: kDLFloat8_e5m2fnuz, bits 8, e 5, m 2, bias 16, FiniteUnsignedZero, mask 0xFF;
}
minifloat! {
    /// FP6 `e2m3fn` (`kDLFloat6_e2m3fn`), padded storage: one value in the low 6 bits of a byte.
    ///
    /// ```
    /// use dlspan::dtype::Float6E2m3fn;
    /// assert_eq!(Float6E2m3fn::from_bits(0x1F).to_f32(), 7.5);
    /// ```
    Float6E2m3fn: kDLFloat6_e2m3fn, bits 6, e 2, m 3, bias 1, FiniteNoNan, mask 0x3F;
}
minifloat! {
    /// FP6 `e3m2fn` (`kDLFloat6_e3m2fn`), padded storage: one value in the low 6 bits of a byte.
    ///
    /// ```
    /// use dlspan::dtype::Float6E3m2fn;
    /// assert_eq!(Float6E3m2fn::from_bits(0x1F).to_f32(), 28.0);
    /// ```
    Float6E3m2fn: kDLFloat6_e3m2fn, bits 6, e 3, m 2, bias 3, FiniteNoNan, mask 0x3F;
}
minifloat! {
    /// FP4 `e2m1fn` (`kDLFloat4_e2m1fn`), padded storage: one value in the low 4 bits of a byte.
    ///
    /// ```
    /// use dlspan::dtype::Float4E2m1fn;
    /// assert_eq!(Float4E2m1fn::from_bits(0x7).to_f32(), 6.0);
    /// assert_eq!(Float4E2m1fn::from_bits(0xF).to_f32(), -6.0);
    /// ```
    Float4E2m1fn: kDLFloat4_e2m1fn, bits 4, e 2, m 1, bias 1, FiniteNoNan, mask 0x0F;
}

/// FP8 `e8m0fnu` (`kDLFloat8_e8m0fnu`): an unsigned power of two `2^(bits - 127)`, the block scale
/// of the MX formats; `0xFF` is NaN and there is no zero.
///
/// ```
/// use dlspan::dtype::Float8E8m0fnu;
/// assert_eq!(Float8E8m0fnu::from_bits(127).to_f32(), 1.0);
/// assert_eq!(Float8E8m0fnu::from_bits(0).to_f32(), 2f32.powi(-127));
/// assert!(Float8E8m0fnu::from_bits(0xFF).to_f32().is_nan());
/// ```
#[repr(transparent)]
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Float8E8m0fnu(u8);

impl Float8E8m0fnu {
    /// Wraps raw bits.
    ///
    /// ```
    /// use dlspan::dtype::Float8E8m0fnu;
    /// assert_eq!(Float8E8m0fnu::from_bits(128).to_f32(), 2.0);
    /// ```
    pub const fn from_bits(bits: u8) -> Self {
        Self(bits)
    }

    /// The raw bits.
    ///
    /// ```
    /// use dlspan::dtype::Float8E8m0fnu;
    /// assert_eq!(Float8E8m0fnu::from_bits(127).to_bits(), 127);
    /// ```
    pub const fn to_bits(self) -> u8 {
        self.0
    }

    /// The value as `f32` (exact).
    ///
    /// ```
    /// use dlspan::dtype::Float8E8m0fnu;
    /// assert_eq!(Float8E8m0fnu::from_bits(130).to_f32(), 8.0);
    /// assert_eq!(Float8E8m0fnu::from_bits(124).to_f32(), 0.125);
    /// ```
    pub fn to_f32(self) -> f32 {
        match self.0 {
            0xFF => f32::NAN,
            // 2^-127 is an f32 subnormal: only the top mantissa bit set.
            0 => f32::from_bits(1 << 22),
            e => f32::from_bits(u32::from(e) << 23),
        }
    }
}

impl fmt::Debug for Float8E8m0fnu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_f32(), f)
    }
}

// SAFETY: `#[repr(transparent)]` over `u8`, one byte that is exactly one 8-bit element; any bit
// pattern is valid.
unsafe impl DlElement for Float8E8m0fnu {
    const DTYPE: DLDataType = DLDataType::new(DLDataTypeCode::kDLFloat8_e8m0fnu, 8, 1);
}

// SAFETY: `#[repr(transparent)]` over `u8`.
unsafe impl PlainBits for Float8E8m0fnu {}

macro_rules! packed {
    (
        $(#[$meta:meta])*
        $name:ident($bytes:expr, align $align:literal): $lane:ident, $code:ident, bits $bits:expr, lanes $lanes:expr;
    ) => {
        $(#[$meta])*
        #[repr(C, align($align))]
        #[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub struct $name([u8; $bytes]);

        impl $name {
            /// Wraps the packed bytes (lane 0 in the lowest bits of byte 0).
            ///
            /// ```
            #[doc = concat!("use dlspan::dtype::{", stringify!($lane), ", ", stringify!($name), "};")]
            #[doc = concat!("let packed = ", stringify!($name), "::from_bytes([0x01; ", stringify!($bytes), "]);")]
            #[doc = concat!("assert_eq!(packed.lane(0), ", stringify!($lane), "::from_bits(0x01));")]
            /// ```
            pub const fn from_bytes(bytes: [u8; $bytes]) -> Self {
                Self(bytes)
            }

            /// The packed bytes.
            ///
            /// ```
            #[doc = concat!("use dlspan::dtype::", stringify!($name), ";")]
            #[doc = concat!("let bytes = [0xA5; ", stringify!($bytes), "];")]
            #[doc = concat!("assert_eq!(", stringify!($name), "::from_bytes(bytes).to_bytes(), bytes);")]
            /// ```
            pub const fn to_bytes(self) -> [u8; $bytes] {
                self.0
            }

            /// Packs lanes, keeping the low `bits` bits of each.
            ///
            /// ```
            #[doc = concat!("use dlspan::dtype::{", stringify!($lane), ", ", stringify!($name), "};")]
            #[doc = concat!(
                "let high_bits_set = ", stringify!($name),
                "::from_lanes([", stringify!($lane), "::from_bits(0xC1); ", stringify!($lanes), "]);"
            )]
            #[doc = concat!(
                "let low_bits_only = ", stringify!($name),
                "::from_lanes([", stringify!($lane), "::from_bits(0x01); ", stringify!($lanes), "]);"
            )]
            /// assert_eq!(high_bits_set, low_bits_only);
            /// ```
            pub fn from_lanes(lanes: [$lane; $lanes]) -> Self {
                let mut bytes = [0u8; $bytes];
                for (i, lane) in lanes.iter().enumerate() {
                    let value = u32::from(lane.to_bits()) & ((1 << $bits) - 1);
                    let bit = i * $bits;
                    // A lane spans at most two bytes (bits <= 8).
                    let wide = value << (bit % 8);
                    bytes[bit / 8] |= wide as u8;
                    if bit % 8 + $bits > 8 {
                        bytes[bit / 8 + 1] |= (wide >> 8) as u8;
                    }
                }
                Self(bytes)
            }

            /// Lane `i` as its padded storage type.
            ///
            /// # Panics
            ///
            /// If `i` is not below the number of lanes.
            ///
            /// ```
            #[doc = concat!("use dlspan::dtype::{", stringify!($lane), ", ", stringify!($name), "};")]
            #[doc = concat!(
                "let packed = ", stringify!($name),
                "::from_lanes(core::array::from_fn(|i| ", stringify!($lane), "::from_bits(i as u8)));"
            )]
            #[doc = concat!("assert_eq!(packed.lane(1), ", stringify!($lane), "::from_bits(1));")]
            /// ```
            pub fn lane(self, i: usize) -> $lane {
                assert!(i < $lanes, "lane index {i} out of range for {} lanes", $lanes);
                let bit = i * $bits;
                let mut wide = u32::from(self.0[bit / 8]);
                if bit / 8 + 1 < $bytes {
                    wide |= u32::from(self.0[bit / 8 + 1]) << 8;
                }
                $lane::from_bits(((wide >> (bit % 8)) & ((1 << $bits) - 1)) as u8)
            }

            /// Every lane decoded to `f32`.
            ///
            /// ```
            #[doc = concat!("use dlspan::dtype::{", stringify!($lane), ", ", stringify!($name), "};")]
            #[doc = concat!(
                "let packed = ", stringify!($name),
                "::from_lanes(core::array::from_fn(|i| ", stringify!($lane), "::from_bits(i as u8)));"
            )]
            /// assert_eq!(packed.to_f32_array()[0], 0.0);
            /// assert_eq!(packed.to_f32_array()[1], packed.lane(1).to_f32());
            /// ```
            pub fn to_f32_array(self) -> [f32; $lanes] {
                core::array::from_fn(|i| self.lane(i).to_f32())
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.to_f32_array(), f)
            }
        }

        // SAFETY: `#[repr(C)]` over `[u8; $bytes]` with `$bytes * 8 == $bits * $lanes` (packed
        // storage, checked below); any bit pattern is valid; the alignment only adds no padding
        // because `$align` divides `$bytes`.
        unsafe impl DlElement for $name {
            const DTYPE: DLDataType = DLDataType::new(DLDataTypeCode::$code, $bits, $lanes);
        }

        // SAFETY: `#[repr(C)]` over a byte array, no padding (`$align` divides `$bytes`).
        unsafe impl PlainBits for $name {}

        const _: () = assert!(core::mem::size_of::<$name>() * 8 == $bits * $lanes);
    };
}

packed! {
    /// Two FP4 `e2m1fn` values packed in one byte, DLPack `(17, 4, 2)`: PyTorch's
    /// `float4_e2m1fn_x2` and CUDA's `__nv_fp4x2_e2m1`.
    ///
    /// ```
    /// use dlspan::dtype::{Float4E2m1fn, Float4E2m1fnX2};
    /// let pair = Float4E2m1fnX2::from_lanes([Float4E2m1fn::from_bits(0x2), Float4E2m1fn::from_bits(0x7)]);
    /// assert_eq!(pair.to_bytes(), [0x72]);
    /// assert_eq!(pair.to_f32_array(), [1.0, 6.0]);
    /// ```
    Float4E2m1fnX2(1, align 1): Float4E2m1fn, kDLFloat4_e2m1fn, bits 4, lanes 2;
}
packed! {
    /// Four FP4 `e2m1fn` values packed in two bytes, DLPack `(17, 4, 4)`: CUDA's `__nv_fp4x4_e2m1`.
    ///
    /// ```
    /// use dlspan::dtype::Float4E2m1fnX4;
    /// assert_eq!(Float4E2m1fnX4::from_bytes([0x21, 0x43]).to_f32_array(), [0.5, 1.0, 1.5, 2.0]);
    /// ```
    Float4E2m1fnX4(2, align 2): Float4E2m1fn, kDLFloat4_e2m1fn, bits 4, lanes 4;
}
packed! {
    /// Four FP6 `e2m3fn` values packed in three bytes, DLPack `(15, 6, 4)`: an element of 3 bytes.
    ///
    /// ```
    /// use dlspan::dtype::{Float6E2m3fn, Float6E2m3fnX4};
    /// let lanes = [0x08, 0x1F, 0x01, 0x3F].map(Float6E2m3fn::from_bits);
    /// let packed = Float6E2m3fnX4::from_lanes(lanes);
    /// assert_eq!(packed.to_f32_array(), [1.0, 7.5, 0.125, -7.5]);
    /// ```
    Float6E2m3fnX4(3, align 1): Float6E2m3fn, kDLFloat6_e2m3fn, bits 6, lanes 4;
}
packed! {
    /// Four FP6 `e3m2fn` values packed in three bytes, DLPack `(16, 6, 4)`.
    ///
    /// ```
    /// use dlspan::dtype::{Float6E3m2fn, Float6E3m2fnX4};
    /// let packed = Float6E3m2fnX4::from_lanes([0x0C, 0x1F, 0x00, 0x20].map(Float6E3m2fn::from_bits));
    /// assert_eq!(packed.to_f32_array(), [1.0, 28.0, 0.0, -0.0]);
    /// ```
    Float6E3m2fnX4(3, align 1): Float6E3m2fn, kDLFloat6_e3m2fn, bits 6, lanes 4;
}
