// Rule: the derive forwards its fields' validity (rule I18): a newtype or lanes of `bool` are
// checked on import as `bool` is; opaque `kDLBool` storage and lanes of `Bool` take any byte.
use dlspan::DlElement;
use dlspan::dtype::{Bool, Validity};

#[derive(Clone, Copy, DlElement)]
#[repr(transparent)]
struct Truth(bool);

#[derive(Clone, Copy, DlElement)]
#[repr(C, align(2))]
struct TruthPair(Truth, bool);

#[derive(Clone, Copy, DlElement)]
#[repr(C)]
struct BoolPair(Bool, Bool);

#[derive(Clone, Copy, DlElement)]
#[dl(code = kDLBool, bits = 8)]
#[repr(transparent)]
struct Flag(u8);

const _: () = assert!(matches!(Truth::VALIDITY, Validity::BoolBytes));
const _: () = assert!(matches!(TruthPair::VALIDITY, Validity::BoolBytes));
const _: () = assert!(matches!(BoolPair::VALIDITY, Validity::AnyBits));
const _: () = assert!(matches!(Flag::VALIDITY, Validity::AnyBits));

fn main() {
    assert_eq!(TruthPair::DTYPE, dlspan::ffi::DLDataType { code: 6, bits: 8, lanes: 2 });
    assert_eq!(Flag::DTYPE, bool::DTYPE);
}
