// Rule: every supported form of #[derive(DlElement)] compiles and has the expected data type.
use dlspan::dtype::{F32x4, Float4E2m1fn};
use dlspan::{DlElement, ffi::DLDataType};

#[derive(Clone, Copy, DlElement)]
#[repr(transparent)]
struct Meters(f32);

#[derive(Clone, Copy, DlElement)]
#[repr(transparent)]
struct Id {
    raw: u64,
}

#[derive(Clone, Copy, DlElement)]
#[repr(C, align(4))]
struct Rgba8 {
    r: u8,
    g: u8,
    b: u8,
    a: u8,
}

#[derive(Clone, Copy, DlElement)]
#[repr(C)]
struct Position(Meters, f32, Meters);

#[derive(Clone, Copy, DlElement)]
#[repr(C)]
struct Mat2x4(F32x4, F32x4);

#[derive(Clone, Copy, DlElement)]
#[dl(code = kDLFloat8_e5m2, bits = 8, lanes = 2)]
#[repr(C, align(2))]
struct E5m2Pair([u8; 2]);

#[derive(Clone, Copy, DlElement)]
#[dl(code = 17, bits = 4)]
#[repr(transparent)]
struct PaddedFp4(u8);

#[derive(Clone, Copy, DlElement)]
#[repr(C)]
struct PaddedFp4Pair(Float4E2m1fn, Float4E2m1fn);

fn main() {
    assert_eq!(Meters::DTYPE, f32::DTYPE);
    assert_eq!(Id::DTYPE, u64::DTYPE);
    assert_eq!(Rgba8::DTYPE, DLDataType { code: 1, bits: 8, lanes: 4 });
    assert_eq!(Position::DTYPE, DLDataType { code: 2, bits: 32, lanes: 3 });
    assert_eq!(E5m2Pair::DTYPE, DLDataType { code: 12, bits: 8, lanes: 2 });
    assert_eq!(PaddedFp4::DTYPE, DLDataType { code: 17, bits: 4, lanes: 1 });
    assert_eq!(PaddedFp4Pair::DTYPE, DLDataType { code: 17, bits: 4, lanes: 2 });
    let _ = Mat2x4::DTYPE;
}
