//! Storage types for DLPack's FP8, FP6 and FP4 codes, with their decoders and encoders.
//!
//! Each type holds the raw bits (`from_bits` / `to_bits`), decodes exactly to `f32` (`to_f32`, a
//! table lookup) and encodes from `f32` or `f64` (`from_f32`, `from_f64`). Equality is bitwise.
//! Single FP6 and FP4 values are *padded* storage (one value in the low bits of a byte, exchanged
//! with the DLPack flag `IS_SUBBYTE_TYPE_PADDED`); the `X2`/`X4` types are the *packed* forms
//! (several values per byte, low bits first), such as PyTorch's `float4_e2m1fn_x2`, which DLPack
//! describes as `(17, 4, 2)`.
//!
//! The encoding rules are documented on the public `dtype` module (this module is private).

mod format;

use super::{DlElement, PlainBits};
use crate::ffi::{DLDataType, DLDataTypeCode};
use core::fmt;
pub(crate) use format::{Format, Specials};

macro_rules! minifloat {
    (
        $(#[$meta:meta])*
        $name:ident: $code:ident, bits $bits:expr, e $e:expr, m $m:expr, bias $bias:expr, $specials:ident;
    ) => {
        $(#[$meta])*
        #[repr(transparent)]
        #[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub struct $name(u8);

        impl $name {
            /// The bit-level rules of the format (the CUDA cast kernels are generated from them).
            pub(crate) const FORMAT: Format =
                Format { exponent_bits: $e, mantissa_bits: $m, bias: $bias, specials: Specials::$specials };

            /// Every code's value, indexed by the storage byte.
            const VALUES: [f32; 256] = Self::FORMAT.decode_table();

            /// Wraps raw bits (bits above the format's width are kept as given, and ignored by
            /// `to_f32`).
            ///
            /// ```
            #[doc = concat!("use dlspan::dtype::", stringify!($name), ";")]
            #[doc = concat!("assert_eq!(", stringify!($name), "::from_bits(0xFF).to_bits(), 0xFF);")]
            /// ```
            #[inline]
            pub const fn from_bits(bits: u8) -> Self {
                Self(bits)
            }

            /// The raw bits.
            ///
            /// ```
            #[doc = concat!("use dlspan::dtype::", stringify!($name), ";")]
            #[doc = concat!("assert_eq!(", stringify!($name), "::default().to_bits(), 0);")]
            /// ```
            #[inline]
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
            #[inline]
            pub fn to_f32(self) -> f32 {
                Self::VALUES[self.0 as usize]
            }

            /// The value as `f64` (exact).
            ///
            /// ```
            #[doc = concat!("use dlspan::dtype::", stringify!($name), ";")]
            #[doc = concat!("assert_eq!(", stringify!($name), "::from_f64(1.0).to_f64(), 1.0);")]
            /// ```
            #[inline]
            pub fn to_f64(self) -> f64 {
                f64::from(self.to_f32())
            }

            /// The nearest value to `value` (ties to even), with this format's rule for values it
            /// cannot hold (see [the encoding rules](crate::dtype#fp8-fp6-and-fp4-encoding)).
            ///
            /// ```
            #[doc = concat!("use dlspan::dtype::", stringify!($name), ";")]
            #[doc = concat!("let one = ", stringify!($name), "::from_f32(1.0);")]
            /// assert_eq!(one.to_f32(), 1.0);
            #[doc = concat!("assert!(", stringify!($name), "::from_f32(f32::NAN).to_f32().is_nan() || !", stringify!($name), "::HAS_NAN);")]
            /// ```
            #[inline]
            pub const fn from_f32(value: f32) -> Self {
                Self(Self::FORMAT.encode(value as f64, false))
            }

            /// As [`from_f32`](Self::from_f32), from an `f64` (rounded once, directly).
            ///
            /// ```
            #[doc = concat!("use dlspan::dtype::", stringify!($name), ";")]
            #[doc = concat!("assert_eq!(", stringify!($name), "::from_f64(2.0).to_f32(), 2.0);")]
            /// ```
            #[inline]
            pub const fn from_f64(value: f64) -> Self {
                Self(Self::FORMAT.encode(value, false))
            }

            /// As [`from_f32`](Self::from_f32), but infinities and values that round beyond the
            /// largest finite value become the largest finite value of their sign (CUDA's
            /// `__NV_SATFINITE`); NaN stays NaN where the format has one.
            ///
            /// ```
            #[doc = concat!("use dlspan::dtype::", stringify!($name), ";")]
            #[doc = concat!("let max = ", stringify!($name), "::from_f32_saturating(f32::INFINITY);")]
            /// assert!(max.to_f32().is_finite());
            /// ```
            #[inline]
            pub const fn from_f32_saturating(value: f32) -> Self {
                Self(Self::FORMAT.encode(value as f64, true))
            }

            /// As [`from_f32_saturating`](Self::from_f32_saturating), from an `f64`.
            ///
            /// ```
            #[doc = concat!("use dlspan::dtype::", stringify!($name), ";")]
            #[doc = concat!("assert!(", stringify!($name), "::from_f64_saturating(1e300).to_f64().is_finite());")]
            /// ```
            #[inline]
            pub const fn from_f64_saturating(value: f64) -> Self {
                Self(Self::FORMAT.encode(value, true))
            }

            /// Whether the format has a NaN encoding.
            ///
            /// ```
            #[doc = concat!("use dlspan::dtype::", stringify!($name), ";")]
            #[doc = concat!("let _: bool = ", stringify!($name), "::HAS_NAN;")]
            /// ```
            pub const HAS_NAN: bool = !matches!(Self::FORMAT.specials, Specials::FiniteNoNan);

            /// Whether this is a NaN.
            ///
            /// ```
            #[doc = concat!("use dlspan::dtype::", stringify!($name), ";")]
            #[doc = concat!("assert!(!", stringify!($name), "::from_f32(1.0).is_nan());")]
            /// ```
            #[inline]
            pub fn is_nan(self) -> bool {
                self.to_f32().is_nan()
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
    Float8E3m4: kDLFloat8_e3m4, bits 8, e 3, m 4, bias 3, Ieee;
}
minifloat! {
    /// FP8 `e4m3` (`kDLFloat8_e4m3`): 4 exponent bits, 3 mantissa bits, IEEE-like (with infinities).
    ///
    /// ```
    /// use dlspan::dtype::Float8E4m3;
    /// assert_eq!(Float8E4m3::from_bits(0x78).to_f32(), f32::INFINITY);
    /// ```
    Float8E4m3: kDLFloat8_e4m3, bits 8, e 4, m 3, bias 7, Ieee;
}
minifloat! {
    /// FP8 `e4m3b11fnuz` (`kDLFloat8_e4m3b11fnuz`): exponent bias 11, finite, no negative zero.
    ///
    /// ```
    /// use dlspan::dtype::Float8E4m3b11fnuz;
    /// assert!(Float8E4m3b11fnuz::from_bits(0x80).to_f32().is_nan());
    /// assert_eq!(Float8E4m3b11fnuz::from_bits(0x58).to_f32(), 1.0);
    /// ```
    Float8E4m3b11fnuz: kDLFloat8_e4m3b11fnuz, bits 8, e 4, m 3, bias 11, FiniteUnsignedZero;
}
minifloat! {
    /// FP8 `e4m3fn` (`kDLFloat8_e4m3fn`): the OCP/CUDA `e4m3` (`__nv_fp8_e4m3`), finite, max 448.
    ///
    /// ```
    /// use dlspan::dtype::Float8E4m3fn;
    /// assert_eq!(Float8E4m3fn::from_bits(0x7E).to_f32(), 448.0);
    /// assert!(Float8E4m3fn::from_bits(0x7F).to_f32().is_nan());
    /// ```
    Float8E4m3fn: kDLFloat8_e4m3fn, bits 8, e 4, m 3, bias 7, FiniteAllOnesNan;
}
minifloat! {
    /// FP8 `e4m3fnuz` (`kDLFloat8_e4m3fnuz`): bias 8, finite, no negative zero.
    ///
    /// ```
    /// use dlspan::dtype::Float8E4m3fnuz;
    /// assert_eq!(Float8E4m3fnuz::from_bits(0x40).to_f32(), 1.0);
    /// ```
    Float8E4m3fnuz: kDLFloat8_e4m3fnuz, bits 8, e 4, m 3, bias 8, FiniteUnsignedZero;
}
minifloat! {
    /// FP8 `e5m2` (`kDLFloat8_e5m2`): the OCP/CUDA `e5m2` (`__nv_fp8_e5m2`), IEEE-like, max 57344.
    ///
    /// ```
    /// use dlspan::dtype::Float8E5m2;
    /// assert_eq!(Float8E5m2::from_bits(0x7B).to_f32(), 57344.0);
    /// ```
    Float8E5m2: kDLFloat8_e5m2, bits 8, e 5, m 2, bias 15, Ieee;
}
minifloat! {
    /// FP8 `e5m2fnuz` (`kDLFloat8_e5m2fnuz`): bias 16, finite, no negative zero.
    ///
    /// ```
    /// use dlspan::dtype::Float8E5m2fnuz;
    /// assert_eq!(Float8E5m2fnuz::from_bits(0x40).to_f32(), 1.0);
    /// ```
    Float8E5m2fnuz: kDLFloat8_e5m2fnuz, bits 8, e 5, m 2, bias 16, FiniteUnsignedZero;
}
minifloat! {
    /// FP8 `e8m0fnu` (`kDLFloat8_e8m0fnu`): an unsigned power of two `2^(bits - 127)`, the block
    /// scale of the MX formats (CUDA `__nv_fp8_e8m0`); `0xFF` is NaN and there is no zero.
    ///
    /// ```
    /// use dlspan::dtype::Float8E8m0fnu;
    /// assert_eq!(Float8E8m0fnu::from_bits(127).to_f32(), 1.0);
    /// assert_eq!(Float8E8m0fnu::from_bits(0).to_f32(), 2f32.powi(-127));
    /// assert!(Float8E8m0fnu::from_bits(0xFF).to_f32().is_nan());
    /// assert_eq!(Float8E8m0fnu::from_f32(3.0).to_f32(), 4.0); // ties round up, as ml_dtypes
    /// ```
    Float8E8m0fnu: kDLFloat8_e8m0fnu, bits 8, e 8, m 0, bias 127, UnsignedNoZero;
}
minifloat! {
    /// FP6 `e2m3fn` (`kDLFloat6_e2m3fn`), padded storage: one value in the low 6 bits of a byte.
    ///
    /// ```
    /// use dlspan::dtype::Float6E2m3fn;
    /// assert_eq!(Float6E2m3fn::from_bits(0x1F).to_f32(), 7.5);
    /// ```
    Float6E2m3fn: kDLFloat6_e2m3fn, bits 6, e 2, m 3, bias 1, FiniteNoNan;
}
minifloat! {
    /// FP6 `e3m2fn` (`kDLFloat6_e3m2fn`), padded storage: one value in the low 6 bits of a byte.
    ///
    /// ```
    /// use dlspan::dtype::Float6E3m2fn;
    /// assert_eq!(Float6E3m2fn::from_bits(0x1F).to_f32(), 28.0);
    /// ```
    Float6E3m2fn: kDLFloat6_e3m2fn, bits 6, e 3, m 2, bias 3, FiniteNoNan;
}
minifloat! {
    /// FP4 `e2m1fn` (`kDLFloat4_e2m1fn`), padded storage: one value in the low 4 bits of a byte.
    ///
    /// ```
    /// use dlspan::dtype::Float4E2m1fn;
    /// assert_eq!(Float4E2m1fn::from_bits(0x7).to_f32(), 6.0);
    /// assert_eq!(Float4E2m1fn::from_bits(0xF).to_f32(), -6.0);
    /// ```
    Float4E2m1fn: kDLFloat4_e2m1fn, bits 4, e 2, m 1, bias 1, FiniteNoNan;
}

macro_rules! packed {
    (
        $(#[$meta:meta])*
        $name:ident($bytes:expr, align $align:literal): $lane:ident, $code:ident, bits $bits:expr, lanes $lanes:expr,
        stride $stride:expr;
    ) => {
        $(#[$meta])*
        #[repr(C, align($align))]
        #[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub struct $name([u8; $bytes]);

        impl $name {
            /// Wraps the storage bytes (lane 0 in the lowest bits of byte 0).
            ///
            /// ```
            #[doc = concat!("use dlspan::dtype::{", stringify!($lane), ", ", stringify!($name), "};")]
            #[doc = concat!("let packed = ", stringify!($name), "::from_bytes([0x01; ", stringify!($bytes), "]);")]
            #[doc = concat!("assert_eq!(packed.lane(0), ", stringify!($lane), "::from_bits(0x01));")]
            /// ```
            pub const fn from_bytes(bytes: [u8; $bytes]) -> Self {
                Self(bytes)
            }

            /// The storage bytes.
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
                    let bit = i * $stride;
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
                let bit = i * $stride;
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

        // SAFETY: `#[repr(C)]` over `[u8; $bytes]` with `$bytes * 8 == $stride * $lanes` (checked
        // below): packed storage when `$stride == $bits`, padded storage (one lane per byte, bits
        // < 8, size == lanes) when `$stride == 8`; any bit pattern is valid; the alignment adds no
        // padding because `$align` divides `$bytes`.
        unsafe impl DlElement for $name {
            const DTYPE: DLDataType = DLDataType::new(DLDataTypeCode::$code, $bits, $lanes);
        }

        // SAFETY: `#[repr(C)]` over a byte array, no padding (`$align` divides `$bytes`).
        unsafe impl PlainBits for $name {}

        const _: () = assert!(core::mem::size_of::<$name>() * 8 == $stride * $lanes);
        const _: () = assert!($stride == $bits || $stride == 8);
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
    Float4E2m1fnX2(1, align 1): Float4E2m1fn, kDLFloat4_e2m1fn, bits 4, lanes 2, stride 4;
}
packed! {
    /// Four FP4 `e2m1fn` values packed in two bytes, DLPack `(17, 4, 4)`: CUDA's `__nv_fp4x4_e2m1`.
    ///
    /// ```
    /// use dlspan::dtype::Float4E2m1fnX4;
    /// assert_eq!(Float4E2m1fnX4::from_bytes([0x21, 0x43]).to_f32_array(), [0.5, 1.0, 1.5, 2.0]);
    /// ```
    Float4E2m1fnX4(2, align 2): Float4E2m1fn, kDLFloat4_e2m1fn, bits 4, lanes 4, stride 4;
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
    Float6E2m3fnX4(3, align 1): Float6E2m3fn, kDLFloat6_e2m3fn, bits 6, lanes 4, stride 6;
}
packed! {
    /// Four FP6 `e3m2fn` values packed in three bytes, DLPack `(16, 6, 4)`.
    ///
    /// ```
    /// use dlspan::dtype::{Float6E3m2fn, Float6E3m2fnX4};
    /// let packed = Float6E3m2fnX4::from_lanes([0x0C, 0x1F, 0x00, 0x20].map(Float6E3m2fn::from_bits));
    /// assert_eq!(packed.to_f32_array(), [1.0, 28.0, 0.0, -0.0]);
    /// ```
    Float6E3m2fnX4(3, align 1): Float6E3m2fn, kDLFloat6_e3m2fn, bits 6, lanes 4, stride 6;
}
packed! {
    /// Two FP6 `e2m3fn` values, each in the low 6 bits of its own byte (padded storage), DLPack
    /// `(15, 6, 2)` with `IS_SUBBYTE_TYPE_PADDED`: CUDA's `__nv_fp6x2_e2m3` (`cuda_fp6.h`: a 16-bit
    /// storage word, lane `x` in the low byte, 2-byte aligned).
    ///
    /// ```
    /// use dlspan::dtype::{Float6E2m3fn, Float6E2m3fnX2, is_padded_subbyte};
    /// let pair = Float6E2m3fnX2::from_lanes([Float6E2m3fn::from_f32(1.0), Float6E2m3fn::from_f32(-7.5)]);
    /// assert_eq!(pair.to_bytes(), [0x08, 0x3F]);
    /// assert_eq!(pair.to_f32_array(), [1.0, -7.5]);
    /// assert!(is_padded_subbyte::<Float6E2m3fnX2>());
    /// ```
    Float6E2m3fnX2(2, align 2): Float6E2m3fn, kDLFloat6_e2m3fn, bits 6, lanes 2, stride 8;
}
packed! {
    /// Two FP6 `e3m2fn` values, each in the low 6 bits of its own byte (padded storage), DLPack
    /// `(16, 6, 2)` with `IS_SUBBYTE_TYPE_PADDED`: CUDA's `__nv_fp6x2_e3m2`.
    ///
    /// ```
    /// use dlspan::dtype::{Float6E3m2fn, Float6E3m2fnX2};
    /// let pair = Float6E3m2fnX2::from_bytes([0x0C, 0x1F]);
    /// assert_eq!(pair.to_f32_array(), [1.0, 28.0]);
    /// ```
    Float6E3m2fnX2(2, align 2): Float6E3m2fn, kDLFloat6_e3m2fn, bits 6, lanes 2, stride 8;
}
