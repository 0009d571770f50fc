//! Every built-in element type's data type, one by one against DLPack's codes (compared exactly on
//! import: `runtime/docs/rules.md`, rule I4), the size contract of `DlElement` for each, derived
//! types, and the decoding of the minifloat storage types.

use dlspan::DlElement;
use dlspan::dtype::*;
use dlspan::ffi::{DLDataType, DLDataTypeCode as Code};
use dlspan::half::{bf16, f16};
use dlspan::num_complex::Complex;
use std::hash::BuildHasher;
use std::mem::{align_of, size_of};

/// `(code, bits, lanes)` of `T`.
fn dt<T: DlElement>() -> (u8, u8, u16) {
    let d = T::DTYPE;
    assert!(storage_matches_dtype::<T>(), "size contract of {}", std::any::type_name::<T>());
    (d.code, d.bits, d.lanes)
}

#[test]
fn scalars() {
    assert_eq!(dt::<bool>(), (6, 8, 1));
    assert_eq!(dt::<Bool>(), (6, 8, 1));
    assert_eq!(dt::<i8>(), (0, 8, 1));
    assert_eq!(dt::<i16>(), (0, 16, 1));
    assert_eq!(dt::<i32>(), (0, 32, 1));
    assert_eq!(dt::<i64>(), (0, 64, 1));
    assert_eq!(dt::<i128>(), (0, 128, 1));
    assert_eq!(dt::<u8>(), (1, 8, 1));
    assert_eq!(dt::<u16>(), (1, 16, 1));
    assert_eq!(dt::<u32>(), (1, 32, 1));
    assert_eq!(dt::<u64>(), (1, 64, 1));
    assert_eq!(dt::<u128>(), (1, 128, 1));
    assert_eq!(dt::<f16>(), (2, 16, 1));
    assert_eq!(dt::<f32>(), (2, 32, 1));
    assert_eq!(dt::<f64>(), (2, 64, 1));
    assert_eq!(dt::<bf16>(), (4, 16, 1));
}

#[test]
fn complex() {
    assert_eq!(dt::<Complex<f16>>(), (5, 32, 1));
    assert_eq!(dt::<Complex<f32>>(), (5, 64, 1));
    assert_eq!(dt::<Complex<f64>>(), (5, 128, 1));
    let z = Complex::new(1.0f32, 2.0);
    // SAFETY: Complex<f32> is repr(C) of two f32; reading it as [f32; 2] checks the (re, im) order.
    let parts: [f32; 2] = unsafe { std::mem::transmute(z) };
    assert_eq!(parts, [1.0, 2.0]);
}

#[test]
fn fp8_codes() {
    assert_eq!(dt::<Float8E3m4>(), (7, 8, 1));
    assert_eq!(dt::<Float8E4m3>(), (8, 8, 1));
    assert_eq!(dt::<Float8E4m3b11fnuz>(), (9, 8, 1));
    assert_eq!(dt::<Float8E4m3fn>(), (10, 8, 1));
    assert_eq!(dt::<Float8E4m3fnuz>(), (11, 8, 1));
    assert_eq!(dt::<Float8E5m2>(), (12, 8, 1));
    assert_eq!(dt::<Float8E5m2fnuz>(), (13, 8, 1));
    assert_eq!(dt::<Float8E8m0fnu>(), (14, 8, 1));
}

#[test]
fn fp6_and_fp4_codes() {
    assert_eq!(dt::<Float6E2m3fn>(), (15, 6, 1));
    assert_eq!(dt::<Float6E3m2fn>(), (16, 6, 1));
    assert_eq!(dt::<Float4E2m1fn>(), (17, 4, 1));
    assert!(is_padded_subbyte::<Float6E2m3fn>());
    assert!(is_padded_subbyte::<Float6E3m2fn>());
    assert!(is_padded_subbyte::<Float4E2m1fn>());
    // Packed forms: PyTorch's float4_e2m1fn_x2 is (17, 4, 2) in one byte; FP6 x4 is a 3-byte element.
    assert_eq!(dt::<Float4E2m1fnX2>(), (17, 4, 2));
    assert_eq!(size_of::<Float4E2m1fnX2>(), 1);
    assert_eq!(dt::<Float4E2m1fnX4>(), (17, 4, 4));
    assert_eq!((size_of::<Float4E2m1fnX4>(), align_of::<Float4E2m1fnX4>()), (2, 2));
    assert_eq!(dt::<Float6E2m3fnX4>(), (15, 6, 4));
    assert_eq!(dt::<Float6E3m2fnX4>(), (16, 6, 4));
    assert_eq!((size_of::<Float6E2m3fnX4>(), align_of::<Float6E2m3fnX4>()), (3, 1));
    assert!(!is_padded_subbyte::<Float4E2m1fnX2>());
    assert!(!is_padded_subbyte::<Float6E2m3fnX4>());
    // CUDA's __nv_fp6x2_e2m3 / __nv_fp6x2_e3m2: a 16-bit word, one value per byte (padded), x low.
    assert_eq!(dt::<Float6E2m3fnX2>(), (15, 6, 2));
    assert_eq!(dt::<Float6E3m2fnX2>(), (16, 6, 2));
    assert_eq!((size_of::<Float6E2m3fnX2>(), align_of::<Float6E2m3fnX2>()), (2, 2));
    assert!(is_padded_subbyte::<Float6E2m3fnX2>() && is_padded_subbyte::<Float6E3m2fnX2>());
    let pair = Float6E3m2fnX2::from_lanes([Float6E3m2fn::from_f32(-28.0), Float6E3m2fn::from_f32(0.0625)]);
    assert_eq!(u16::from_le_bytes(pair.to_bytes()), 0x013F);
    assert_eq!(pair.to_f32_array(), [-28.0, 0.0625]);
}

/// `(size, align)` of `T` must be CUDA's: the vector's full size for both.
fn cuda_vector<T: DlElement, S: DlElement>(lanes: u16) {
    let scalar = S::DTYPE;
    assert_eq!(T::DTYPE, DLDataType { lanes, ..scalar }, "{}", std::any::type_name::<T>());
    assert!(storage_matches_dtype::<T>());
    assert_eq!(size_of::<T>(), lanes as usize * size_of::<S>());
    assert_eq!(align_of::<T>(), size_of::<T>(), "{}", std::any::type_name::<T>());
}

#[test]
fn vector_types() {
    cuda_vector::<I8x2, i8>(2);
    cuda_vector::<I8x4, i8>(4);
    cuda_vector::<U8x2, u8>(2);
    cuda_vector::<U8x4, u8>(4);
    cuda_vector::<I16x2, i16>(2);
    cuda_vector::<I16x4, i16>(4);
    cuda_vector::<U16x2, u16>(2);
    cuda_vector::<U16x4, u16>(4);
    cuda_vector::<I32x2, i32>(2);
    cuda_vector::<I32x4, i32>(4);
    cuda_vector::<U32x2, u32>(2);
    cuda_vector::<U32x4, u32>(4);
    cuda_vector::<I64x2, i64>(2);
    cuda_vector::<I64x4, i64>(4);
    cuda_vector::<U64x2, u64>(2);
    cuda_vector::<U64x4, u64>(4);
    cuda_vector::<F16x2, f16>(2);
    cuda_vector::<F16x4, f16>(4);
    cuda_vector::<Bf16x2, bf16>(2);
    cuda_vector::<Bf16x4, bf16>(4);
    cuda_vector::<F32x2, f32>(2);
    cuda_vector::<F32x4, f32>(4);
    cuda_vector::<F64x2, f64>(2);
    cuda_vector::<F64x4, f64>(4);
    cuda_vector::<Float8E3m4X2, Float8E3m4>(2);
    cuda_vector::<Float8E3m4X4, Float8E3m4>(4);
    cuda_vector::<Float8E4m3X2, Float8E4m3>(2);
    cuda_vector::<Float8E4m3X4, Float8E4m3>(4);
    cuda_vector::<Float8E4m3b11fnuzX2, Float8E4m3b11fnuz>(2);
    cuda_vector::<Float8E4m3b11fnuzX4, Float8E4m3b11fnuz>(4);
    cuda_vector::<Float8E4m3fnX2, Float8E4m3fn>(2);
    cuda_vector::<Float8E4m3fnX4, Float8E4m3fn>(4);
    cuda_vector::<Float8E4m3fnuzX2, Float8E4m3fnuz>(2);
    cuda_vector::<Float8E4m3fnuzX4, Float8E4m3fnuz>(4);
    cuda_vector::<Float8E5m2X2, Float8E5m2>(2);
    cuda_vector::<Float8E5m2X4, Float8E5m2>(4);
    cuda_vector::<Float8E5m2fnuzX2, Float8E5m2fnuz>(2);
    cuda_vector::<Float8E5m2fnuzX4, Float8E5m2fnuz>(4);
    cuda_vector::<Float8E8m0fnuX2, Float8E8m0fnu>(2);
    cuda_vector::<Float8E8m0fnuX4, Float8E8m0fnu>(4);
    // The two alignments CUDA documents for its vector types.
    assert_eq!(align_of::<F32x4>(), 16);
    assert_eq!(align_of::<F64x4>(), 32);
}

#[test]
fn display_names() {
    let names: Vec<String> = [
        bool::DTYPE,
        i64::DTYPE,
        u8::DTYPE,
        f16::DTYPE,
        bf16::DTYPE,
        Complex::<f32>::DTYPE,
        Float8E4m3fn::DTYPE,
        Float4E2m1fnX2::DTYPE,
        F32x4::DTYPE,
        DLDataType::new(Code(200), 8, 1),
        DLDataType::new(Code::kDLFloat8_e4m3fn, 16, 1),
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    assert_eq!(
        names,
        [
            "bool",
            "int64",
            "uint8",
            "float16",
            "bfloat16",
            "complex64",
            "float8_e4m3fn",
            "float4_e2m1fn_x2",
            "float32x4",
            "code200_bits8",
            "code10_bits16"
        ]
    );
}

/// One name table both ways: every data type a built-in element type has, and every one the
/// dispatch serves, reads back from its name; other spellings are refused.
#[test]
fn names_read_back() {
    struct Each(Vec<DLDataType>);
    impl ElementVisitor for &mut Each {
        type Output = ();
        fn visit<T: DlElement>(self) {
            self.0.push(T::DTYPE);
        }
    }
    let mut every = Each(Vec::new());
    for code in 0..=17u8 {
        for bits in [4u8, 6, 8, 16, 32, 64, 128] {
            for lanes in [1u16, 2, 3, 4] {
                for padded in [false, true] {
                    let _ = dispatch_element(DLDataType::new(Code(code), bits, lanes), padded, &mut every);
                }
            }
        }
    }
    assert!(every.0.len() > 60, "{} built-in data types", every.0.len());
    every.0.extend([DLDataType::new(Code(200), 8, 1), DLDataType::new(Code::kDLOpaqueHandle, 64, 1)]);
    for dtype in every.0 {
        let name = dtype.to_string();
        assert_eq!(name.parse::<DLDataType>(), Ok(dtype), "{name}");
    }
    for wrong in
        ["", "float", "Float32", "float32x0", "float32x", "int08", "float4_e2m1fnx2", "float8_e4m3fn_", "code10"]
    {
        let err = wrong.parse::<DLDataType>().unwrap_err();
        assert_eq!(err.name(), wrong);
    }
}

#[derive(Clone, Copy, Debug, PartialEq, DlElement)]
#[repr(transparent)]
struct Meters(f32);

#[derive(Clone, Copy, DlElement)]
#[repr(C)]
struct Rgb {
    r: u8,
    g: u8,
    b: u8,
}

#[derive(Clone, Copy, DlElement)]
#[repr(C, align(16))]
struct Quat(f32, f32, f32, Meters);

#[derive(Clone, Copy, DlElement)]
#[repr(C)]
struct Pair(F32x4, F32x4);

#[derive(Clone, Copy, DlElement)]
#[dl(code = kDLFloat8_e4m3fn, bits = 8, lanes = 4)]
#[repr(transparent)]
struct Fp8Quad(u32);

#[derive(Clone, Copy, DlElement)]
#[dl(code = 15, bits = 6, lanes = 4)]
#[repr(C)]
struct Fp6Quad([u8; 3]);

#[derive(Clone, Copy, DlElement)]
#[repr(C)]
struct TwoPaddedFp4(Float4E2m1fn, Float4E2m1fn);

#[test]
fn derived_types() {
    assert_eq!(dt::<Meters>(), (2, 32, 1));
    assert_eq!(dt::<Rgb>(), (1, 8, 3));
    assert_eq!(size_of::<Rgb>(), 3);
    assert_eq!(dt::<Quat>(), (2, 32, 4));
    assert_eq!(dt::<Pair>(), (2, 32, 8));
    assert_eq!(dt::<Fp8Quad>(), (Code::kDLFloat8_e4m3fn.0, 8, 4));
    assert_eq!(dt::<Fp6Quad>(), (15, 6, 4));
    assert_eq!(dt::<TwoPaddedFp4>(), (17, 4, 2));
    assert!(is_padded_subbyte::<TwoPaddedFp4>());
}

/// A newtype and lanes of `bool`, a newtype of one of them, and lanes of `bool` beside `Bool`.
#[derive(Clone, Copy, DlElement)]
#[repr(transparent)]
struct Truth(bool);

#[derive(Clone, Copy, DlElement)]
#[repr(C)]
struct Truths {
    a: bool,
    b: Truth,
}

#[derive(Clone, Copy, DlElement)]
#[repr(transparent)]
struct Wrapped(Truths);

#[derive(Clone, Copy, DlElement)]
#[repr(C)]
struct Mixed(Bool, bool);

#[derive(Clone, Copy, DlElement)]
#[repr(C)]
struct Bools(Bool, Bool);

#[derive(Clone, Copy, DlElement)]
#[dl(code = kDLBool, bits = 8)]
#[repr(transparent)]
struct Flag(u8);

#[test]
fn validity_of_every_element_type() {
    // Only `bool` (and what is made of it) needs its bytes checked; every other built-in type is
    // valid for every bit pattern. `#[derive(DlElement)]` forwards the fields' validity.
    assert_eq!(bool::VALIDITY, Validity::BoolBytes);
    macro_rules! any_bits {
        ($($t:ty),* $(,)?) => {$( assert_eq!(<$t>::VALIDITY, Validity::AnyBits, "{}", stringify!($t)); )*};
    }
    any_bits!(
        Bool,
        i8,
        i16,
        i32,
        i64,
        i128,
        u8,
        u16,
        u32,
        u64,
        u128,
        f16,
        bf16,
        f32,
        f64,
        Complex<f16>,
        Complex<f32>,
        Complex<f64>,
        Float8E3m4,
        Float8E4m3,
        Float8E4m3b11fnuz,
        Float8E4m3fn,
        Float8E4m3fnuz,
        Float8E5m2,
        Float8E5m2fnuz,
        Float8E8m0fnu,
        Float6E2m3fn,
        Float6E3m2fn,
        Float4E2m1fn,
        Float4E2m1fnX2,
        Float4E2m1fnX4,
        Float6E2m3fnX2,
        Float6E2m3fnX4,
        Float6E3m2fnX2,
        Float6E3m2fnX4,
        I8x2,
        U8x4,
        F32x4,
        F64x4,
        Bf16x2,
        Float8E4m3fnX4,
        Float8E8m0fnuX2,
    );
    assert_eq!(Truth::VALIDITY, Validity::BoolBytes);
    assert_eq!((Truths::VALIDITY, dt::<Truths>()), (Validity::BoolBytes, (6, 8, 2)));
    assert_eq!(Wrapped::VALIDITY, Validity::BoolBytes);
    assert_eq!(Mixed::VALIDITY, Validity::BoolBytes);
    assert_eq!(Bools::VALIDITY, Validity::AnyBits);
    assert_eq!(Flag::VALIDITY, Validity::AnyBits);
    assert_eq!(
        (Meters::VALIDITY, Rgb::VALIDITY, Pair::VALIDITY),
        (Validity::AnyBits, Validity::AnyBits, Validity::AnyBits)
    );
}

#[test]
fn bool_reads_any_byte_as_c_and_numpy_do() {
    let two = Bool::from_bits(2);
    assert!(two.get() && !Bool::FALSE.get());
    assert_eq!((two, two.to_bits()), (Bool::TRUE, 2));
    assert_ne!(two, Bool::FALSE);
    assert_eq!((Bool::new(true), Bool::from(false), bool::from(two)), (Bool::TRUE, Bool::FALSE, true));
    assert_eq!(
        (format!("{two}"), format!("{two:?}"), format!("{:?}", Bool::default())),
        ("true".into(), "true".into(), "false".into())
    );
    // Equal values hash alike.
    let state = std::hash::RandomState::new();
    assert_eq!(state.hash_one(two), state.hash_one(Bool::TRUE));
    // Arithmetic (or, and) and casts into `Bool` write 0 and 1; casts out read nonzero as true.
    assert_eq!((two.add(Bool::FALSE).to_bits(), two.mul(Bool::from_bits(255)).to_bits()), (1, 1));
    assert_eq!((Bool::ZERO, Bool::ONE, two.to_acc()), (Bool::FALSE, Bool::TRUE, 1i64));
    assert_eq!(cast::<Bool, Bool>(two).to_bits(), 1);
    assert_eq!(cast::<i32, Bool>(-4).to_bits(), 1);
    assert_eq!(cast::<f32, Bool>(f32::NAN), Bool::TRUE);
    assert_eq!((cast::<Bool, f32>(two), cast::<Bool, u8>(two), cast::<Bool, bool>(two)), (1.0, 1, true));
    assert_eq!(cast::<Bool, Float8E4m3fn>(Bool::from_bits(128)).to_f32(), 1.0);
    assert_eq!(cast::<bool, Bool>(true).to_bits(), 1);
}

/// Decodes all 256 bit patterns and checks the format's special values and ordering.
fn check_format(decode: impl Fn(u8) -> f32, nans: usize, infinities: usize, max: f32, min_subnormal: f32) {
    let values: Vec<f32> = (0..=255u8).map(&decode).collect();
    assert_eq!(values.iter().filter(|v| v.is_nan()).count(), nans, "NaN patterns");
    assert_eq!(values.iter().filter(|v| v.is_infinite()).count(), infinities, "infinity patterns");
    let finite_max = values.iter().copied().filter(|v| v.is_finite()).fold(f32::MIN, f32::max);
    assert_eq!(finite_max, max, "largest finite value");
    let positive_min = values.iter().copied().filter(|v| *v > 0.0).fold(f32::MAX, f32::min);
    assert_eq!(positive_min, min_subnormal, "smallest positive value");
    // The positive half is ordered by its bits (sign-magnitude formats).
    let positives: Vec<f32> = values[..128].iter().copied().filter(|v| v.is_finite()).collect();
    assert!(positives.windows(2).all(|w| w[0] < w[1]), "positive values increase with their bits");
}

#[test]
fn minifloat_decoding() {
    check_format(|b| Float8E4m3fn::from_bits(b).to_f32(), 2, 0, 448.0, 2f32.powi(-9));
    check_format(|b| Float8E4m3::from_bits(b).to_f32(), 14, 2, 240.0, 2f32.powi(-9));
    check_format(|b| Float8E5m2::from_bits(b).to_f32(), 6, 2, 57344.0, 2f32.powi(-16));
    check_format(|b| Float8E3m4::from_bits(b).to_f32(), 30, 2, 15.5, 2f32.powi(-6));
    check_format(|b| Float8E4m3fnuz::from_bits(b).to_f32(), 1, 0, 240.0, 2f32.powi(-10));
    check_format(|b| Float8E5m2fnuz::from_bits(b).to_f32(), 1, 0, 57344.0, 2f32.powi(-17));
    check_format(|b| Float8E4m3b11fnuz::from_bits(b).to_f32(), 1, 0, 30.0, 2f32.powi(-13));
    // 6- and 4-bit formats: the high bits of the byte are ignored, so each value repeats.
    let fp6: Vec<f32> = (0..64u8).map(|b| Float6E2m3fn::from_bits(b).to_f32()).collect();
    assert_eq!(fp6.iter().copied().fold(f32::MIN, f32::max), 7.5);
    assert_eq!(Float6E2m3fn::from_bits(0x40 | 0x08).to_f32(), 1.0);
    let fp6b: Vec<f32> = (0..64u8).map(|b| Float6E3m2fn::from_bits(b).to_f32()).collect();
    assert_eq!(fp6b.iter().copied().fold(f32::MIN, f32::max), 28.0);
    let fp4: Vec<f32> = (0..16u8).map(|b| Float4E2m1fn::from_bits(b).to_f32()).collect();
    assert_eq!(fp4, [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]);
    // e8m0: powers of two from 2^-127 to 2^127, and one NaN.
    for b in 0..255u8 {
        assert_eq!(Float8E8m0fnu::from_bits(b).to_f32(), 2f32.powi(i32::from(b) - 127));
    }
    assert!(Float8E8m0fnu::from_bits(255).to_f32().is_nan());
}

#[test]
fn packed_lanes_round_trip() {
    for bits in 0..=255u8 {
        let pair = Float4E2m1fnX2::from_bytes([bits]);
        assert_eq!(Float4E2m1fnX2::from_lanes([pair.lane(0), pair.lane(1)]), pair);
        assert_eq!(pair.lane(0).to_bits(), bits & 0xF);
        assert_eq!(pair.lane(1).to_bits(), bits >> 4);
    }
    let lanes = [0x15u8, 0x2A, 0x3F, 0x01].map(Float6E2m3fn::from_bits);
    let packed = Float6E2m3fnX4::from_lanes(lanes);
    // 24 bits, lane 0 lowest: 0x15 | 0x2A << 6 | 0x3F << 12 | 0x01 << 18.
    let word = 0x15u32 | 0x2A << 6 | 0x3F << 12 | 0x01 << 18;
    assert_eq!(packed.to_bytes(), [word as u8, (word >> 8) as u8, (word >> 16) as u8]);
    assert_eq!([0, 1, 2, 3].map(|i| packed.lane(i)), lanes);
}
