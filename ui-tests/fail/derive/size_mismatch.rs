// Rule: with #[dl(code, bits, lanes)] the type's size must equal bits x lanes.
use dlspan::DlElement;

#[derive(Clone, Copy, DlElement)]
#[dl(code = kDLFloat8_e4m3fn, bits = 8, lanes = 4)]
#[repr(transparent)]
struct Fp8x4(u16);

fn main() {}
