// Rule: opaque #[dl] storage must accept every bit pattern (bool does not).
use dlspan::DlElement;

#[derive(Clone, Copy, DlElement)]
#[dl(code = kDLUInt, bits = 8)]
#[repr(transparent)]
struct Flag(bool);

fn main() {}
