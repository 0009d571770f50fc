// Rule: a derived element cannot be generic: its DLPack data type must be one constant.
use dlspan::DlElement;

#[derive(Clone, Copy, DlElement)]
#[repr(transparent)]
struct Wrapper<T>(T);

fn main() {}
