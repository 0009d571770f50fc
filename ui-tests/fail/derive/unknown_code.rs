// Rule: #[dl(code = ...)] names a DLDataTypeCode constant.
use dlspan::DlElement;

#[derive(Clone, Copy, DlElement)]
#[dl(code = kDLFloat8_e9m9, bits = 8)]
#[repr(transparent)]
struct Value(u8);

fn main() {}
