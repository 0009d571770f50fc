// Rule: #[dl] storage has no trailing padding either (align(N) beyond the fields).
use dlspan::DlElement;

#[derive(Clone, Copy, DlElement)]
#[dl(code = kDLUInt, bits = 64)]
#[repr(C, align(8))]
struct Widened(u32);

fn main() {}
