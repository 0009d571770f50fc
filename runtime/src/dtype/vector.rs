//! CUDA-compatible vector types: 2 and 4 lanes of every integer and floating-point scalar.
//!
//! Each type has CUDA's size and alignment (the alignment equals the size: `float2` 8, `float4` 16,
//! `double4` 32 as CUDA 13's `double4_32a`), fields named `x, y` or `x, y, z, w`, and the DLPack data
//! type of its scalar with `lanes` = 2 or 4.
//!
//! | dlspan | CUDA | DLPack |
//! |---|---|---|
//! | `I8x2`, `I8x4`, `U8x2`, `U8x4` | `char2`, `char4`, `uchar2`, `uchar4` | `(0 or 1, 8, 2 or 4)` |
//! | `I16x2` … `U16x4` | `short2` … `ushort4` | `(0 or 1, 16, n)` |
//! | `I32x2` … `U32x4` | `int2` … `uint4` | `(0 or 1, 32, n)` |
//! | `I64x2` … `U64x4` | `longlong2` … `ulonglong4_32a` | `(0 or 1, 64, n)` |
//! | `F16x2`, `F16x4` | `__half2` | `(2, 16, n)` |
//! | `Bf16x2`, `Bf16x4` | `__nv_bfloat162` | `(4, 16, n)` |
//! | `F32x2`, `F32x4` | `float2`, `float4` | `(2, 32, n)` |
//! | `F64x2`, `F64x4` | `double2`, `double4_32a` | `(2, 64, n)` |
//! | `Float8E4m3fnX2`, `Float8E4m3fnX4`, … | `__nv_fp8x2_e4m3`, `__nv_fp8x4_e4m3`, … | `(code, 8, n)` |
//!
//! ```
//! use dlspan::dtype::{F32x4, DlElement};
//! assert_eq!(core::mem::align_of::<F32x4>(), 16);
//! assert_eq!((F32x4::DTYPE.code, F32x4::DTYPE.bits, F32x4::DTYPE.lanes), (2, 32, 4));
//! let v = F32x4::from([1.0, 2.0, 3.0, 4.0]);
//! assert_eq!(v.w, 4.0);
//! ```

use super::minifloat::*;
use super::{DlElement, PlainBits};
use crate::ffi::DLDataType;
use half::{bf16, f16};

/// Vector types of `$n` lanes named `$lanes` (`[x, y]` or `[x, y, z, w]`), one per entry.
macro_rules! vectors {
    ($n:literal $lanes:tt; $($(#[$meta:meta])* $name:ident($scalar:ty), align $align:literal;)*) => {$(
        vectors!(@one $n $lanes $(#[$meta])* $name($scalar), $align);
    )*};
    (@one $n:literal [$($lane:ident),+] $(#[$meta:meta])* $name:ident($scalar:ty), $align:literal) => {
        $(#[$meta])*
        #[repr(C, align($align))]
        #[derive(Clone, Copy, Debug, Default, PartialEq)]
        pub struct $name {
            $(
                #[doc = concat!("Lane `", stringify!($lane), "`.")]
                pub $lane: $scalar,
            )+
        }

        impl From<[$scalar; $n]> for $name {
            fn from([$($lane),+]: [$scalar; $n]) -> Self {
                Self { $($lane),+ }
            }
        }

        impl From<$name> for [$scalar; $n] {
            fn from(v: $name) -> Self {
                [$(v.$lane),+]
            }
        }

        // SAFETY: `#[repr(C)]` of `$n` `$scalar` lanes, aligned to their combined size, hence no
        // padding (asserted below): lanes consecutive as DLPack lays out an `$n`-lane vector of the
        // scalar's dtype; validity as for the scalar; no interior mutability.
        unsafe impl DlElement for $name {
            const DTYPE: DLDataType = DLDataType { lanes: $n, ..<$scalar as DlElement>::DTYPE };
        }

        // SAFETY: `PlainBits` lanes with no padding.
        unsafe impl PlainBits for $name {}

        const _: () = assert!(core::mem::size_of::<$name>() == $n * core::mem::size_of::<$scalar>());
        const _: () = assert!(core::mem::align_of::<$name>() == core::mem::size_of::<$name>());
    };
}

vectors! { 2 [x, y];
    /// Two `i8` lanes (CUDA `char2`).
    I8x2(i8), align 2;
    /// Two `u8` lanes (CUDA `uchar2`).
    U8x2(u8), align 2;
    /// Two `i16` lanes (CUDA `short2`).
    I16x2(i16), align 4;
    /// Two `u16` lanes (CUDA `ushort2`).
    U16x2(u16), align 4;
    /// Two `i32` lanes (CUDA `int2`).
    I32x2(i32), align 8;
    /// Two `u32` lanes (CUDA `uint2`).
    U32x2(u32), align 8;
    /// Two `i64` lanes (CUDA `longlong2`).
    I64x2(i64), align 16;
    /// Two `u64` lanes (CUDA `ulonglong2`).
    U64x2(u64), align 16;
    /// Two `f16` lanes (CUDA `__half2`).
    F16x2(f16), align 4;
    /// Two `bf16` lanes (CUDA `__nv_bfloat162`).
    Bf16x2(bf16), align 4;
    /// Two `f32` lanes (CUDA `float2`).
    F32x2(f32), align 8;
    /// Two `f64` lanes (CUDA `double2`).
    F64x2(f64), align 16;
    /// Two FP8 `e3m4` lanes.
    Float8E3m4X2(Float8E3m4), align 2;
    /// Two FP8 `e4m3` lanes.
    Float8E4m3X2(Float8E4m3), align 2;
    /// Two FP8 `e4m3b11fnuz` lanes.
    Float8E4m3b11fnuzX2(Float8E4m3b11fnuz), align 2;
    /// Two FP8 `e4m3fn` lanes (CUDA `__nv_fp8x2_e4m3`).
    Float8E4m3fnX2(Float8E4m3fn), align 2;
    /// Two FP8 `e4m3fnuz` lanes.
    Float8E4m3fnuzX2(Float8E4m3fnuz), align 2;
    /// Two FP8 `e5m2` lanes (CUDA `__nv_fp8x2_e5m2`).
    Float8E5m2X2(Float8E5m2), align 2;
    /// Two FP8 `e5m2fnuz` lanes.
    Float8E5m2fnuzX2(Float8E5m2fnuz), align 2;
    /// Two FP8 `e8m0fnu` lanes (CUDA `__nv_fp8x2_e8m0`).
    Float8E8m0fnuX2(Float8E8m0fnu), align 2;
}

vectors! { 4 [x, y, z, w];
    /// Four `i8` lanes (CUDA `char4`).
    I8x4(i8), align 4;
    /// Four `u8` lanes (CUDA `uchar4`).
    U8x4(u8), align 4;
    /// Four `i16` lanes (CUDA `short4`).
    I16x4(i16), align 8;
    /// Four `u16` lanes (CUDA `ushort4`).
    U16x4(u16), align 8;
    /// Four `i32` lanes (CUDA `int4`).
    I32x4(i32), align 16;
    /// Four `u32` lanes (CUDA `uint4`).
    U32x4(u32), align 16;
    /// Four `i64` lanes (CUDA `longlong4_32a`).
    I64x4(i64), align 32;
    /// Four `u64` lanes (CUDA `ulonglong4_32a`).
    U64x4(u64), align 32;
    /// Four `f16` lanes.
    F16x4(f16), align 8;
    /// Four `bf16` lanes.
    Bf16x4(bf16), align 8;
    /// Four `f32` lanes (CUDA `float4`).
    F32x4(f32), align 16;
    /// Four `f64` lanes (CUDA `double4_32a`).
    F64x4(f64), align 32;
    /// Four FP8 `e3m4` lanes.
    Float8E3m4X4(Float8E3m4), align 4;
    /// Four FP8 `e4m3` lanes.
    Float8E4m3X4(Float8E4m3), align 4;
    /// Four FP8 `e4m3b11fnuz` lanes.
    Float8E4m3b11fnuzX4(Float8E4m3b11fnuz), align 4;
    /// Four FP8 `e4m3fn` lanes (CUDA `__nv_fp8x4_e4m3`).
    Float8E4m3fnX4(Float8E4m3fn), align 4;
    /// Four FP8 `e4m3fnuz` lanes.
    Float8E4m3fnuzX4(Float8E4m3fnuz), align 4;
    /// Four FP8 `e5m2` lanes (CUDA `__nv_fp8x4_e5m2`).
    Float8E5m2X4(Float8E5m2), align 4;
    /// Four FP8 `e5m2fnuz` lanes.
    Float8E5m2fnuzX4(Float8E5m2fnuz), align 4;
    /// Four FP8 `e8m0fnu` lanes.
    Float8E8m0fnuX4(Float8E8m0fnu), align 4;
}
