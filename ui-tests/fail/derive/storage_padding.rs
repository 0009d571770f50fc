// Rule: #[dl] storage has no padding: every byte of an element is data (found by review: padding
// bytes would be read as element data, uninitialised).
use dlspan::DlElement;

#[derive(Clone, Copy, DlElement)]
#[dl(code = kDLUInt, bits = 64)]
#[repr(C)]
struct Padded {
    a: u8,
    b: u32,
}

fn main() {}
