// Rule: #[dl(...)] accepts only code, bits, lanes and crate.
use dlspan::DlElement;

#[derive(Clone, Copy, DlElement)]
#[dl(endian = "little")]
#[repr(transparent)]
struct Value(u32);

fn main() {}
