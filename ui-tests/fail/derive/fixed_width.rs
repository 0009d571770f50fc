// Rule: a #[dl] code DLPack gives one width (bool and FP8: 8 bits, FP6: 6, FP4: 4) takes that width.
use dlspan::DlElement;

#[derive(Clone, Copy, DlElement)]
#[dl(code = kDLBool, bits = 16)]
#[repr(transparent)]
struct WideFlag(u16);

fn main() {}
